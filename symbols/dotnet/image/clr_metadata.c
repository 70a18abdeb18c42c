#include "clr_metadata.h"
#include "little_endian.h"

#include <string.h>

#define METADATA_SIGNATURE 0x424a5342 /* "BSJB" */
#define MAX_STREAMS	   16
#define NO_TABLE	   0xff

/* Column kinds of the table schema: a table index (below TABLE_INDEX_END),
 * a coded index (CODED + kind), or a fixed-size value or heap index. */
enum {
	TABLE_INDEX_END = 0x40,
	CODED = 0x40,
	U16 = 0x80,
	U32,
	STRING,
	GUID,
	BLOB,
	END = 0,
};

enum coded_kind {
	TYPE_DEF_OR_REF,
	HAS_CONSTANT,
	HAS_CUSTOM_ATTRIBUTE,
	HAS_FIELD_MARSHAL,
	HAS_DECL_SECURITY,
	MEMBER_REF_PARENT,
	HAS_SEMANTICS,
	METHOD_DEF_OR_REF,
	MEMBER_FORWARDED,
	IMPLEMENTATION,
	CUSTOM_ATTRIBUTE_TYPE,
	RESOLUTION_SCOPE,
	TYPE_OR_METHOD_DEF,
	CODED_KIND_COUNT,
};

/* II.24.2.6: the tables each coded index can point to, by tag. */
static const struct {
	uint8_t tag_bits, table_count;
	uint8_t tables[22];
} coded_kinds[CODED_KIND_COUNT] = {
    [TYPE_DEF_OR_REF] = {2, 3, {0x02, 0x01, 0x1b}},
    [HAS_CONSTANT] = {2, 3, {0x04, 0x08, 0x17}},
    [HAS_CUSTOM_ATTRIBUTE] = {5, 22, {0x06, 0x04, 0x01, 0x02, 0x08, 0x09, 0x0a, 0x00,
				      0x0e, 0x17, 0x14, 0x11, 0x1a, 0x1b, 0x20, 0x23,
				      0x26, 0x27, 0x28, 0x2a, 0x2c, 0x2b}},
    [HAS_FIELD_MARSHAL] = {1, 2, {0x04, 0x08}},
    [HAS_DECL_SECURITY] = {2, 3, {0x02, 0x06, 0x20}},
    [MEMBER_REF_PARENT] = {3, 5, {0x02, 0x01, 0x1a, 0x06, 0x1b}},
    [HAS_SEMANTICS] = {1, 2, {0x14, 0x17}},
    [METHOD_DEF_OR_REF] = {1, 2, {0x06, 0x0a}},
    [MEMBER_FORWARDED] = {1, 2, {0x04, 0x06}},
    [IMPLEMENTATION] = {2, 3, {0x26, 0x23, 0x27}},
    [CUSTOM_ATTRIBUTE_TYPE] = {3, 5, {NO_TABLE, NO_TABLE, 0x06, 0x0a, NO_TABLE}},
    [RESOLUTION_SCOPE] = {2, 4, {0x00, 0x1a, 0x23, 0x01}},
    [TYPE_OR_METHOD_DEF] = {1, 2, {0x02, 0x06}},
};

/* II.22: the columns of every table, in order. */
static const uint8_t schema[CLR_TABLE_COUNT][CLR_MAX_COLUMNS + 1] = {
    [0x00] = {U16, STRING, GUID, GUID, GUID},				 /* Module */
    [0x01] = {CODED + RESOLUTION_SCOPE, STRING, STRING},		 /* TypeRef */
    [0x02] = {U32, STRING, STRING, CODED + TYPE_DEF_OR_REF, 0x04, 0x06}, /* TypeDef */
    [0x03] = {0x04},							 /* FieldPtr */
    [0x04] = {U16, STRING, BLOB},					 /* Field */
    [0x05] = {0x06},							 /* MethodPtr */
    [0x06] = {U32, U16, U16, STRING, BLOB, 0x08},			 /* MethodDef */
    [0x07] = {0x08},							 /* ParamPtr */
    [0x08] = {U16, U16, STRING},					 /* Param */
    [0x09] = {0x02, CODED + TYPE_DEF_OR_REF},				 /* InterfaceImpl */
    [0x0a] = {CODED + MEMBER_REF_PARENT, STRING, BLOB},			 /* MemberRef */
    [0x0b] = {U16, CODED + HAS_CONSTANT, BLOB},				 /* Constant */
    [0x0c] = {CODED + HAS_CUSTOM_ATTRIBUTE, CODED + CUSTOM_ATTRIBUTE_TYPE, BLOB},
    [0x0d] = {CODED + HAS_FIELD_MARSHAL, BLOB},				   /* FieldMarshal */
    [0x0e] = {U16, CODED + HAS_DECL_SECURITY, BLOB},			   /* DeclSecurity */
    [0x0f] = {U16, U32, 0x02},						   /* ClassLayout */
    [0x10] = {U32, 0x04},						   /* FieldLayout */
    [0x11] = {BLOB},							   /* StandAloneSig */
    [0x12] = {0x02, 0x14},						   /* EventMap */
    [0x13] = {0x14},							   /* EventPtr */
    [0x14] = {U16, STRING, CODED + TYPE_DEF_OR_REF},			   /* Event */
    [0x15] = {0x02, 0x17},						   /* PropertyMap */
    [0x16] = {0x17},							   /* PropertyPtr */
    [0x17] = {U16, STRING, BLOB},					   /* Property */
    [0x18] = {U16, 0x06, CODED + HAS_SEMANTICS},			   /* MethodSemantics */
    [0x19] = {0x02, CODED + METHOD_DEF_OR_REF, CODED + METHOD_DEF_OR_REF}, /* MethodImpl */
    [0x1a] = {STRING},							   /* ModuleRef */
    [0x1b] = {BLOB},							   /* TypeSpec */
    [0x1c] = {U16, CODED + MEMBER_FORWARDED, STRING, 0x1a},		   /* ImplMap */
    [0x1d] = {U32, 0x04},						   /* FieldRVA */
    [0x1e] = {U32, U32},						   /* EncLog */
    [0x1f] = {U32},							   /* EncMap */
    [0x20] = {U32, U16, U16, U16, U16, U32, BLOB, STRING, STRING},	   /* Assembly */
    [0x21] = {U32},							   /* AssemblyProcessor */
    [0x22] = {U32, U32, U32},						   /* AssemblyOS */
    [0x23] = {U16, U16, U16, U16, U32, BLOB, STRING, STRING, BLOB},	   /* AssemblyRef */
    [0x24] = {U32, 0x23},					 /* AssemblyRefProcessor */
    [0x25] = {U32, U32, U32, 0x23},				 /* AssemblyRefOS */
    [0x26] = {U32, STRING, BLOB},				 /* File */
    [0x27] = {U32, U32, STRING, STRING, CODED + IMPLEMENTATION}, /* ExportedType */
    [0x28] = {U32, U32, STRING, CODED + IMPLEMENTATION},	 /* ManifestResource */
    [0x29] = {0x02, 0x02},					 /* NestedClass */
    [0x2a] = {U16, U16, CODED + TYPE_OR_METHOD_DEF, STRING},	 /* GenericParam */
    [0x2b] = {CODED + METHOD_DEF_OR_REF, BLOB},			 /* MethodSpec */
    [0x2c] = {0x2a, CODED + TYPE_DEF_OR_REF},			 /* GenericParamConstraint */
    [0x30] = {BLOB, GUID, BLOB, GUID},				 /* Document */
    [0x31] = {0x30, BLOB},					 /* MethodDebugInformation */
};

static uint8_t index_size(uint32_t rows, unsigned tag_bits)
{
	return rows < (1u << (16 - tag_bits)) ? 2 : 4;
}

static uint8_t column_size(const struct clr_metadata *metadata, uint8_t kind, uint8_t heap_sizes)
{
	switch (kind) {
	case U16:
		return 2;
	case U32:
		return 4;
	case STRING:
		return heap_sizes & 0x01 ? 4 : 2;
	case GUID:
		return heap_sizes & 0x02 ? 4 : 2;
	case BLOB:
		return heap_sizes & 0x04 ? 4 : 2;
	}
	if (kind < TABLE_INDEX_END)
		return index_size(metadata->tables[kind].row_count, 0);
	{
		uint32_t most_rows = 0;
		unsigned coded = kind - CODED;

		for (unsigned i = 0; i < coded_kinds[coded].table_count; i++) {
			uint8_t table = coded_kinds[coded].tables[i];

			if (table != NO_TABLE && metadata->tables[table].row_count > most_rows)
				most_rows = metadata->tables[table].row_count;
		}
		return index_size(most_rows, coded_kinds[coded].tag_bits);
	}
}

/* Lays the present tables out one after the other from `rows`, as II.24.2.6
 * stores them, checking that they fit in `size` bytes. */
static bool lay_out_tables(struct clr_metadata *metadata, const uint8_t *rows, size_t size,
			   uint8_t heap_sizes)
{
	uint64_t offset = 0;

	for (unsigned table = 0; table < CLR_TABLE_COUNT; table++) {
		struct clr_table_layout *layout = &metadata->tables[table];
		uint32_t row_size = 0;

		/* Rows of a table no format defines (0x2d..0x2f): where the
		 * tables after it start is unknown, so they are not read. */
		if (schema[table][0] == END && layout->row_count) {
			for (unsigned later = table; later < CLR_TABLE_COUNT; later++)
				metadata->tables[later].row_count = 0;
			return true;
		}
		for (unsigned column = 0; column < CLR_MAX_COLUMNS && schema[table][column] != END;
		     column++) {
			layout->column_offset[column] = (uint8_t)row_size;
			layout->column_size[column] =
			    column_size(metadata, schema[table][column], heap_sizes);
			row_size += layout->column_size[column];
		}
		layout->row_size = row_size;
		layout->rows = rows + offset;
		offset += (uint64_t)row_size * layout->row_count;
		if (offset > size)
			return false;
	}
	return true;
}

static bool parse_tables(struct clr_metadata *metadata, const uint8_t *stream, uint32_t size)
{
	uint8_t heap_sizes;
	uint64_t valid;
	uint32_t offset = 24;

	if (size < 24)
		return false;
	heap_sizes = stream[6];
	valid = read_u64(stream + 8);
	for (unsigned table = 0; table < 64; table++) {
		if (!(valid & (1ull << table)))
			continue;
		if (size - offset < 4)
			return false;
		/* Tables after the ones read here (a portable PDB's local
		 * scopes and the like) come after them: their rows are not
		 * needed. */
		if (table < CLR_TABLE_COUNT)
			metadata->tables[table].row_count = read_u32(stream + offset);
		offset += 4;
	}
	if (heap_sizes & 0x40) /* extra data after the row counts */
		offset = size - offset < 4 ? size : offset + 4;
	return lay_out_tables(metadata, stream + offset, size - offset, heap_sizes);
}

bool clr_metadata_parse(struct clr_metadata *metadata, const uint8_t *data, size_t size)
{
	const uint8_t *tables = NULL;
	uint32_t version_length, stream_count, tables_size = 0;
	size_t offset;

	memset(metadata, 0, sizeof(*metadata));
	if (size < 16 || read_u32(data) != METADATA_SIGNATURE)
		return false;
	version_length = read_u32(data + 12);
	if (version_length > size - 16 || size - 16 - version_length < 4)
		return false;
	offset = 16 + version_length;
	stream_count = read_u16(data + offset + 2);
	offset += 4;
	if (stream_count > MAX_STREAMS)
		return false;
	for (uint32_t i = 0; i < stream_count; i++) {
		uint32_t stream_offset, stream_size;
		const char *name;
		size_t name_length;

		if (size - offset < 9)
			return false;
		stream_offset = read_u32(data + offset);
		stream_size = read_u32(data + offset + 4);
		name = (const char *)data + offset + 8;
		name_length = strnlen(name, size - offset - 8 < 32 ? size - offset - 8 : 32);
		if (name_length == size - offset - 8 || name_length == 32)
			return false;
		offset += 8 + ((name_length + 4) & ~(size_t)3);
		if (offset > size || stream_offset > size || stream_size > size - stream_offset)
			return false;
		if (!strcmp(name, "#~")) {
			tables = data + stream_offset;
			tables_size = stream_size;
		} else if (!strcmp(name, "#Strings")) {
			metadata->strings = data + stream_offset;
			metadata->strings_size = stream_size;
		} else if (!strcmp(name, "#Blob")) {
			metadata->blobs = data + stream_offset;
			metadata->blobs_size = stream_size;
		} else if (!strcmp(name, "#GUID")) {
			metadata->guids = data + stream_offset;
			metadata->guids_size = stream_size;
		} else if (!strcmp(name, "#Pdb")) {
			metadata->pdb = data + stream_offset;
			metadata->pdb_size = stream_size;
		}
	}
	return tables && parse_tables(metadata, tables, tables_size);
}

uint32_t clr_metadata_row_count(const struct clr_metadata *metadata, enum clr_table table)
{
	return table < CLR_TABLE_COUNT ? metadata->tables[table].row_count : 0;
}

static uint32_t column(const struct clr_metadata *metadata, enum clr_table table, uint32_t row,
		       unsigned column_index)
{
	const struct clr_table_layout *layout = &metadata->tables[table];
	const uint8_t *cell;

	if (row == 0 || row > layout->row_count)
		return 0;
	cell = layout->rows + (size_t)(row - 1) * layout->row_size +
	       layout->column_offset[column_index];
	return layout->column_size[column_index] == 4 ? read_u32(cell) : read_u16(cell);
}

static struct clr_token decode_coded(enum coded_kind kind, uint32_t value)
{
	unsigned tag = value & ((1u << coded_kinds[kind].tag_bits) - 1);
	struct clr_token token = {CLR_TABLE_COUNT, 0};

	if (tag < coded_kinds[kind].table_count && coded_kinds[kind].tables[tag] != NO_TABLE) {
		token.table = coded_kinds[kind].tables[tag];
		token.row = value >> coded_kinds[kind].tag_bits;
	}
	return token;
}

struct clr_token clr_metadata_type_def_or_ref(uint32_t coded)
{
	return decode_coded(TYPE_DEF_OR_REF, coded);
}

const char *clr_metadata_string(const struct clr_metadata *metadata, uint32_t index)
{
	const char *string;

	if (index >= metadata->strings_size)
		return "";
	string = (const char *)metadata->strings + index;
	return memchr(string, 0, metadata->strings_size - index) ? string : "";
}

bool clr_metadata_blob(const struct clr_metadata *metadata, uint32_t index, const uint8_t **bytes,
		       uint32_t *size)
{
	const uint8_t *blob;
	uint32_t left, length, header;

	if (index >= metadata->blobs_size) /* also a file with no #Blob heap */
		return false;
	blob = metadata->blobs + index;
	left = metadata->blobs_size - index;
	/* II.24.2.4: a 1, 2 or 4 byte big-endian length. */
	if ((blob[0] & 0x80) == 0) {
		header = 1;
		length = blob[0];
	} else if ((blob[0] & 0xc0) == 0x80 && left >= 2) {
		header = 2;
		length = (blob[0] & 0x3fu) << 8 | blob[1];
	} else if ((blob[0] & 0xe0) == 0xc0 && left >= 4) {
		header = 4;
		length = (blob[0] & 0x1fu) << 24 | (uint32_t)blob[1] << 16 | blob[2] << 8 | blob[3];
	} else {
		return false;
	}
	if (length > left - header)
		return false;
	*bytes = blob + header;
	*size = length;
	return true;
}

bool clr_metadata_type_def(const struct clr_metadata *metadata, uint32_t row,
			   struct clr_type_def *type)
{
	if (row == 0 || row > metadata->tables[CLR_TABLE_TYPE_DEF].row_count)
		return false;
	type->flags = column(metadata, CLR_TABLE_TYPE_DEF, row, 0);
	type->name = clr_metadata_string(metadata, column(metadata, CLR_TABLE_TYPE_DEF, row, 1));
	type->name_space =
	    clr_metadata_string(metadata, column(metadata, CLR_TABLE_TYPE_DEF, row, 2));
	type->first_method = column(metadata, CLR_TABLE_TYPE_DEF, row, 5);
	return true;
}

bool clr_metadata_type_ref(const struct clr_metadata *metadata, uint32_t row,
			   struct clr_type_ref *type)
{
	if (row == 0 || row > metadata->tables[CLR_TABLE_TYPE_REF].row_count)
		return false;
	type->scope = decode_coded(RESOLUTION_SCOPE, column(metadata, CLR_TABLE_TYPE_REF, row, 0));
	type->name = clr_metadata_string(metadata, column(metadata, CLR_TABLE_TYPE_REF, row, 1));
	type->name_space =
	    clr_metadata_string(metadata, column(metadata, CLR_TABLE_TYPE_REF, row, 2));
	return true;
}

/* A signature blob; NULL and 0 when it lies outside the heap. */
static void read_signature(const struct clr_metadata *metadata, uint32_t index,
			   const uint8_t **signature, uint32_t *size)
{
	if (!clr_metadata_blob(metadata, index, signature, size)) {
		*signature = NULL;
		*size = 0;
	}
}

bool clr_metadata_member_ref(const struct clr_metadata *metadata, uint32_t row,
			     struct clr_member_ref *member)
{
	if (row == 0 || row > metadata->tables[CLR_TABLE_MEMBER_REF].row_count)
		return false;
	member->name =
	    clr_metadata_string(metadata, column(metadata, CLR_TABLE_MEMBER_REF, row, 1));
	read_signature(metadata, column(metadata, CLR_TABLE_MEMBER_REF, row, 2), &member->signature,
		       &member->signature_size);
	return true;
}

bool clr_metadata_method_def(const struct clr_metadata *metadata, uint32_t row,
			     struct clr_method_def *method)
{
	if (row == 0 || row > metadata->tables[CLR_TABLE_METHOD_DEF].row_count)
		return false;
	method->flags = (uint16_t)column(metadata, CLR_TABLE_METHOD_DEF, row, 2);
	method->name =
	    clr_metadata_string(metadata, column(metadata, CLR_TABLE_METHOD_DEF, row, 3));
	read_signature(metadata, column(metadata, CLR_TABLE_METHOD_DEF, row, 4), &method->signature,
		       &method->signature_size);
	return true;
}

bool clr_metadata_method_debug_information(const struct clr_metadata *metadata, uint32_t row,
					   struct clr_method_debug_information *information)
{
	enum clr_table table = CLR_TABLE_METHOD_DEBUG_INFORMATION;

	if (row == 0 || row > metadata->tables[table].row_count)
		return false;
	information->document = column(metadata, table, row, 0);
	if (!clr_metadata_blob(metadata, column(metadata, table, row, 1),
			       &information->sequence_points, &information->sequence_points_size) ||
	    information->sequence_points_size == 0) {
		information->sequence_points = NULL;
		information->sequence_points_size = 0;
	}
	return true;
}

bool clr_metadata_document_name(const struct clr_metadata *metadata, uint32_t row,
				const uint8_t **name, uint32_t *size)
{
	if (row == 0 || row > metadata->tables[CLR_TABLE_DOCUMENT].row_count)
		return false;
	return clr_metadata_blob(metadata, column(metadata, CLR_TABLE_DOCUMENT, row, 0), name,
				 size);
}

uint32_t clr_metadata_method_owner(const struct clr_metadata *metadata, uint32_t method_row)
{
	uint32_t low = 1, high = metadata->tables[CLR_TABLE_TYPE_DEF].row_count, owner = 0;

	/* The last TypeDef whose MethodList starts at or before the method:
	 * the runs are in order, and an empty run shares its start with the
	 * next one. */
	while (low <= high) {
		uint32_t middle = low + (high - low) / 2;

		if (column(metadata, CLR_TABLE_TYPE_DEF, middle, 5) <= method_row) {
			owner = middle;
			low = middle + 1;
		} else {
			high = middle - 1;
		}
	}
	return owner;
}

uint32_t clr_metadata_enclosing_type(const struct clr_metadata *metadata, uint32_t type_row)
{
	uint32_t low = 1, high = metadata->tables[CLR_TABLE_NESTED_CLASS].row_count;

	/* II.22.32: NestedClass is sorted by its first column. */
	while (low <= high) {
		uint32_t middle = low + (high - low) / 2;
		uint32_t nested = column(metadata, CLR_TABLE_NESTED_CLASS, middle, 0);

		if (nested == type_row)
			return column(metadata, CLR_TABLE_NESTED_CLASS, middle, 1);
		if (nested < type_row)
			low = middle + 1;
		else
			high = middle - 1;
	}
	return 0;
}

const char *clr_metadata_assembly_name(const struct clr_metadata *metadata)
{
	return clr_metadata_string(metadata, column(metadata, CLR_TABLE_ASSEMBLY, 1, 7));
}

const char *clr_metadata_assembly_ref_name(const struct clr_metadata *metadata, uint32_t row)
{
	return clr_metadata_string(metadata, column(metadata, CLR_TABLE_ASSEMBLY_REF, row, 6));
}

bool clr_metadata_mvid(const struct clr_metadata *metadata, uint8_t mvid[16])
{
	uint32_t index = column(metadata, CLR_TABLE_MODULE, 1, 2);

	/* #GUID indexes are 1-based, 16 bytes each. */
	if (index == 0 || (uint64_t)index * 16 > metadata->guids_size)
		return false;
	memcpy(mvid, metadata->guids + (index - 1) * 16, 16);
	return true;
}
