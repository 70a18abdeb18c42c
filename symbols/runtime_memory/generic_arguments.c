#include "generic_arguments.h"

#include <stdlib.h>
#include <string.h>

enum {
	MAX_DEPTH = 8,
	MAX_TYPES = 64,	       /* named in one walk */
	MAX_ARGUMENTS = 64,    /* of one type */
	MAX_DICTIONARIES = 64, /* of one type's hierarchy */
	MAX_TYPE_NAME = 1024,
	/* a type handle's low bits: 2 marks a TypeDesc, a MethodTable is
	 * pointer-aligned */
	TYPE_HANDLE_LOW_BITS = 0x7,
	/* MTFlags: the low 16 bits are generic flags, unless the type has a
	 * component size (a string or an array: they are its size then) */
	HAS_COMPONENT_SIZE = 0x80000000u,
	CATEGORY_ARRAY_MASK = 0x000c0000u,
	CATEGORY_ARRAY = 0x00080000u,
	IF_ARRAY_THEN_SZARRAY = 0x00020000u,
	GENERICS_MASK = 0x30u,
	GENERICS_TYPICAL = 0x30u, /* List<T> itself: no JIT code is its */
	TYPE_DEF_RID_SHIFT = 8,	  /* of MTFlags2 */
};

struct generic_arguments {
	uint32_t flags, flags2, module, per_inst_info;
	uint32_t num_dicts, num_type_args; /* in the GenericsDictInfo */
	uint32_t method_table_span;	   /* the bytes read of a MethodTable */
};

struct generic_arguments *generic_arguments_new(const struct contract_descriptor *descriptor,
						char *error, size_t error_size)
{
	struct generic_arguments *arguments = calloc(1, sizeof(*arguments));

	if (!arguments) {
		runtime_memory_error(error, error_size, "out of memory");
		return NULL;
	}

	const struct {
		const char *type, *field;
		uint32_t *offset;
		uint32_t size; /* the field's, within its struct's bound below */
	} fields[] = {
	    {"MethodTable", "MTFlags", &arguments->flags, 4},
	    {"MethodTable", "MTFlags2", &arguments->flags2, 4},
	    {"MethodTable", "Module", &arguments->module, 8},
	    {"MethodTable", "PerInstInfo", &arguments->per_inst_info, 8},
	    {"GenericsDictInfo", "NumDicts", &arguments->num_dicts, 2},
	    {"GenericsDictInfo", "NumTypeArgs", &arguments->num_type_args, 2},
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++) {
		/* a MethodTable is read in one piece of at most 256 bytes, the
		 * GenericsDictInfo is the pointer before the dictionaries */
		uint32_t bound = strcmp(fields[i].type, "MethodTable") == 0 ? 256 : 8;

		if (!contract_descriptor_field(descriptor, fields[i].type, fields[i].field,
					       fields[i].offset) ||
		    *fields[i].offset > bound - fields[i].size) {
			runtime_memory_error(error, error_size,
					     "the runtime describes no usable %s.%s",
					     fields[i].type, fields[i].field);
			free(arguments);
			return NULL;
		}
		if (bound == 256 &&
		    *fields[i].offset + fields[i].size > arguments->method_table_span)
			arguments->method_table_span = *fields[i].offset + fields[i].size;
	}
	return arguments;
}

void generic_arguments_free(struct generic_arguments *arguments)
{
	free(arguments);
}

/* One walk: its text so far, and what is left of its bounds. */
struct walk {
	const struct generic_arguments *arguments;
	struct target_memory *memory;
	generic_arguments_namer namer;
	void *context;
	char *text;
	size_t size, length;
	int types_left;
};

static bool append(struct walk *walk, const char *text)
{
	size_t length = strlen(text);

	if (length >= walk->size - walk->length)
		return false;
	memcpy(walk->text + walk->length, text, length + 1);
	walk->length += length;
	return true;
}

/* What a MethodTable says of itself. */
struct method_table {
	uint32_t flags, row;
	uint64_t module, per_inst_info;
};

static bool read_method_table(const struct walk *walk, uint64_t address, struct method_table *table)
{
	const struct generic_arguments *arguments = walk->arguments;
	uint8_t bytes[256];
	uint32_t flags2;

	if (!address || (address & TYPE_HANDLE_LOW_BITS) ||
	    !target_memory_read(walk->memory, address, bytes, arguments->method_table_span))
		return false;
	memcpy(&table->flags, bytes + arguments->flags, 4);
	memcpy(&flags2, bytes + arguments->flags2, 4);
	memcpy(&table->module, bytes + arguments->module, 8);
	memcpy(&table->per_inst_info, bytes + arguments->per_inst_info, 8);
	table->row = flags2 >> TYPE_DEF_RID_SHIFT;
	return true;
}

static bool has_instantiation(const struct method_table *table)
{
	return !(table->flags & HAS_COMPONENT_SIZE) && (table->flags & GENERICS_MASK) != 0;
}

static bool write_type(struct walk *walk, uint64_t handle, int depth);

/* "[A,B]": the arguments in the type's own dictionary, the last of its
 * PerInstInfo's. */
static bool write_instantiation(struct walk *walk, const struct method_table *table, int depth)
{
	const struct generic_arguments *arguments = walk->arguments;
	uint8_t info[8];
	uint16_t dictionaries, count;
	uint64_t dictionary, handles[MAX_ARGUMENTS];

	if ((table->flags & GENERICS_MASK) == GENERICS_TYPICAL || table->per_inst_info < 8 ||
	    !target_memory_read(walk->memory, table->per_inst_info - 8, info, sizeof(info)))
		return false;
	memcpy(&dictionaries, info + arguments->num_dicts, 2);
	memcpy(&count, info + arguments->num_type_args, 2);
	if (dictionaries == 0 || dictionaries > MAX_DICTIONARIES || count == 0 ||
	    count > MAX_ARGUMENTS ||
	    !target_memory_read_u64(walk->memory, table->per_inst_info + 8 * (dictionaries - 1u),
				    &dictionary) ||
	    !target_memory_read(walk->memory, dictionary, handles, 8 * (size_t)count) ||
	    !append(walk, "["))
		return false;
	for (uint16_t i = 0; i < count; i++)
		if ((i && !append(walk, ",")) || !write_type(walk, handles[i], depth + 1))
			return false;
	return append(walk, "]");
}

/* A type argument: its name, and its own arguments. */
static bool write_type(struct walk *walk, uint64_t handle, int depth)
{
	struct method_table table;
	char name[MAX_TYPE_NAME];

	if (depth > MAX_DEPTH || walk->types_left-- <= 0 ||
	    !read_method_table(walk, handle, &table))
		return false;
	if ((table.flags & HAS_COMPONENT_SIZE) &&
	    (table.flags & CATEGORY_ARRAY_MASK) == CATEGORY_ARRAY)
		/* an array: a single-dimensional one's element type is its
		 * PerInstInfo */
		return (table.flags & IF_ARRAY_THEN_SZARRAY) &&
		       write_type(walk, table.per_inst_info, depth + 1) && append(walk, "[]");
	return table.row && table.module &&
	       walk->namer(walk->context, walk->memory, table.module, table.row, name,
			   sizeof(name)) &&
	       append(walk, name) &&
	       (!has_instantiation(&table) || write_instantiation(walk, &table, depth));
}

bool generic_arguments_write(const struct generic_arguments *arguments,
			     struct target_memory *memory, uint64_t method_table,
			     generic_arguments_namer namer, void *context, uint32_t *row,
			     char *text, size_t size)
{
	struct walk walk = {arguments, memory, namer, context, text, size, 0, MAX_TYPES};
	struct method_table table;

	if (size == 0 || !read_method_table(&walk, method_table, &table) || !table.row)
		return false;
	text[0] = '\0';
	*row = table.row;
	return !has_instantiation(&table) || write_instantiation(&walk, &table, 0);
}
