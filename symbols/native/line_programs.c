#include "line_programs.h"

#include "buffer.h"
#include "little_endian.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A hostile section of tiny sequences must not grow the index without end:
 * libc's has 4,132. 40 bytes each. */
#define MAX_SEQUENCES (1u << 22)

/* One line program: its header's numbers, where its tables and opcodes are,
 * and its file names, read on the first lookup that needs them. */
struct program {
	size_t tables;		 /* the directory table's offset */
	size_t opcodes, end;	 /* [opcodes, end): the program's opcodes */
	size_t standard_lengths; /* the standard opcodes' operand counts */
	uint16_t version;
	uint8_t offset_size; /* 4 or 8: DWARF 32 or 64 */
	uint8_t min_instruction_length, line_range, opcode_base;
	int8_t line_base;
	bool files_read;
	char **files; /* by the rows' file register; NULL: unreadable */
	size_t file_count;
};

/* A row as a lookup keeps it: line 0 for a line past INT32_MAX, file
 * UINT32_MAX for one past the tables. */
struct kept_row {
	uint64_t address;
	uint32_t file, line;
};

/* A sequence's range of addresses, where its opcodes start, and its rows,
 * decoded on the first lookup that lands in it: each sequence is run once
 * at most, however many addresses are looked up in it. */
struct sequence {
	uint64_t low, high;
	uint32_t start; /* in .debug_line: programs are indexed to 4 GiB */
	uint32_t program;
	struct kept_row *rows; /* NULL: not decoded yet */
	size_t row_count;
};

struct line_programs {
	struct line_sections sections;
	struct program *programs;
	size_t program_count;
	struct sequence *sequences;
	size_t sequence_count;
};

/* The line machine's registers that lines need (DWARF 5, 6.2.2). */
struct machine {
	size_t offset; /* the next opcode */
	uint64_t address, file, line;
};

struct row {
	uint64_t address, file, line;
	bool end_sequence;
};

static bool read_uleb(const uint8_t *bytes, size_t *offset, size_t end, uint64_t *value)
{
	unsigned shift = 0;

	*value = 0;
	while (*offset < end) {
		uint8_t byte = bytes[(*offset)++];

		if (shift < 64)
			*value |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80))
			return true;
	}
	return false;
}

static bool read_sleb(const uint8_t *bytes, size_t *offset, size_t end, uint64_t *value)
{
	size_t start = *offset;
	unsigned bits;

	if (!read_uleb(bytes, offset, end, value))
		return false;
	bits = 7 * (unsigned)(*offset - start);
	if (bits < 64 && (bytes[*offset - 1] & 0x40))
		*value |= ~(uint64_t)0 << bits; /* sign extension, in unsigned arithmetic */
	return true;
}

/* An offset-sized (4 or 8 byte) value. */
static bool read_offset(const uint8_t *bytes, size_t *offset, size_t end, unsigned size,
			uint64_t *value)
{
	if (end - *offset < size)
		return false;
	*value = size == 8 ? read_u64(bytes + *offset) : read_u32(bytes + *offset);
	*offset += size;
	return true;
}

static void reset(struct machine *machine, size_t offset)
{
	*machine = (struct machine){.offset = offset, .file = 1, .line = 1};
}

/* Runs opcodes until the next row. False at the program's end, or on an
 * opcode the bytes do not hold. After an end_sequence row the machine
 * starts the next sequence. */
static bool next_row(const struct program *program, const uint8_t *bytes, struct machine *machine,
		     struct row *row)
{
	while (machine->offset < program->end) {
		uint8_t opcode = bytes[machine->offset++];
		uint64_t operand;

		if (opcode >= program->opcode_base) {
			unsigned adjusted = opcode - program->opcode_base;

			machine->address += (uint64_t)program->min_instruction_length *
					    (adjusted / program->line_range);
			machine->line +=
			    (uint64_t)(int64_t)program->line_base + adjusted % program->line_range;
			goto emit;
		}
		switch (opcode) {
		case 0: { /* extended: its length, its own opcode, its operands */
			size_t next;

			if (!read_uleb(bytes, &machine->offset, program->end, &operand) ||
			    operand == 0 || operand > program->end - machine->offset)
				return false;
			next = machine->offset + operand;
			opcode = bytes[machine->offset++];
			if (opcode == DW_LNE_set_address && (operand == 9 || operand == 5))
				machine->address = operand == 9 ? read_u64(bytes + machine->offset)
								: read_u32(bytes + machine->offset);
			machine->offset = next;
			if (opcode == DW_LNE_end_sequence) {
				*row =
				    (struct row){.address = machine->address, .end_sequence = true};
				reset(machine, next);
				return true;
			}
			break;
		}
		case DW_LNS_copy:
			goto emit;
		case DW_LNS_advance_pc:
			if (!read_uleb(bytes, &machine->offset, program->end, &operand))
				return false;
			machine->address += operand * program->min_instruction_length;
			break;
		case DW_LNS_advance_line:
			if (!read_sleb(bytes, &machine->offset, program->end, &operand))
				return false;
			machine->line += operand;
			break;
		case DW_LNS_set_file:
			if (!read_uleb(bytes, &machine->offset, program->end, &machine->file))
				return false;
			break;
		case DW_LNS_const_add_pc:
			machine->address += (uint64_t)program->min_instruction_length *
					    ((255u - program->opcode_base) / program->line_range);
			break;
		case DW_LNS_fixed_advance_pc:
			if (program->end - machine->offset < 2)
				return false;
			machine->address += read_u16(bytes + machine->offset);
			machine->offset += 2;
			break;
		default: /* column, flags, isa and opcodes of later versions: skipped */
			for (uint8_t i = 0; i < bytes[program->standard_lengths + opcode - 1]; i++)
				if (!read_uleb(bytes, &machine->offset, program->end, &operand))
					return false;
			break;
		}
	}
	return false;
emit:
	*row =
	    (struct row){.address = machine->address, .file = machine->file, .line = machine->line};
	return true;
}

/* Reads the header of the program at `*offset` and moves past it. False
 * when the header is damaged; a version this reader does not know keeps
 * `*offset` moving (its length is known) with `*usable` false. */
static bool read_header(const uint8_t *bytes, size_t size, size_t *offset, struct program *program,
			bool *usable)
{
	size_t at = *offset, end;
	uint64_t length, header_length;

	*program = (struct program){.offset_size = 4};
	*usable = false;
	if (!read_offset(bytes, &at, size, 4, &length))
		return false;
	if (length == 0xffffffff) {
		program->offset_size = 8;
		if (!read_offset(bytes, &at, size, 8, &length))
			return false;
	}
	if (length > size - at)
		return false;
	*offset = end = at + length;
	if (end - at < 2)
		return true;
	program->version = read_u16(bytes + at);
	at += 2;
	if (program->version < 2 || program->version > 5)
		return true;
	if (program->version >= 5) { /* address size, segment selector size */
		if (end - at < 2 || bytes[at + 1] != 0)
			return true;
		at += 2;
	}
	if (!read_offset(bytes, &at, end, program->offset_size, &header_length) ||
	    header_length > end - at)
		return true;
	program->opcodes = at + header_length;
	program->end = end;
	if (program->opcodes - at < 4u + (program->version >= 4))
		return true;
	program->min_instruction_length = bytes[at++];
	/* Several operations per instruction (VLIW) is not read. */
	if (program->version >= 4 && bytes[at++] != 1)
		return true;
	at++; /* default_is_stmt: every row counts, as libdw's lookup takes them */
	program->line_base = (int8_t)bytes[at++];
	program->line_range = bytes[at++];
	program->opcode_base = bytes[at++];
	if (program->line_range == 0 || program->opcode_base == 0 ||
	    program->opcode_base - 1u > program->opcodes - at)
		return true;
	program->standard_lengths = at;
	program->tables = at + program->opcode_base - 1;
	*usable = true;
	return true;
}

static bool add_sequence(struct line_programs *programs, size_t *capacity, struct sequence sequence)
{
	if (programs->sequence_count == *capacity) {
		size_t grown_capacity = *capacity ? *capacity * 2 : 1024;
		struct sequence *grown;

		if (grown_capacity > MAX_SEQUENCES ||
		    !(grown = realloc(programs->sequences, grown_capacity * sizeof(*grown))))
			return false;
		programs->sequences = grown;
		*capacity = grown_capacity;
	}
	programs->sequences[programs->sequence_count++] = sequence;
	return true;
}

/* Runs every sequence of `program` for its range. False when the index is
 * full. */
static bool index_sequences(struct line_programs *programs, size_t *capacity, uint32_t index)
{
	const struct program *program = &programs->programs[index];
	struct machine machine;
	struct row row;
	size_t start = program->opcodes;
	uint64_t low = 0;
	bool has_rows = false;

	reset(&machine, start);
	while (next_row(program, programs->sections.line, &machine, &row)) {
		if (!row.end_sequence) {
			if (!has_rows)
				low = row.address;
			has_rows = true;
			continue;
		}
		if (has_rows && row.address > low &&
		    !add_sequence(programs, capacity,
				  (struct sequence){.low = low,
						    .high = row.address,
						    .start = (uint32_t)start,
						    .program = index}))
			return false;
		start = machine.offset;
		has_rows = false;
	}
	return true;
}

static int compare_sequences(const void *a, const void *b)
{
	const struct sequence *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return (x->high > y->high) - (x->high < y->high);
}

static void free_files(struct program *program)
{
	for (size_t i = 0; i < program->file_count; i++)
		free(program->files[i]);
	free(program->files);
}

/* The NUL-terminated string at `offset` of a string section. */
static const char *string_at(const uint8_t *section, size_t size, uint64_t offset)
{
	if (!section || offset >= size || !memchr(section + offset, 0, size - offset))
		return NULL;
	return (const char *)section + offset;
}

/* A value of an entry of a DWARF 5 directory or file table: `*string` for
 * a name's forms, `*number` for an index's; other forms are skipped. False
 * for a form a line program may not use, or bytes that end too soon. */
static bool read_form(const struct line_programs *programs, const struct program *program,
		      uint64_t form, size_t *offset, size_t end, const char **string,
		      uint64_t *number)
{
	const uint8_t *bytes = programs->sections.line, *nul;
	static const uint8_t fixed_sizes[][2] = {{DW_FORM_data1, 1},
						 {DW_FORM_data2, 2},
						 {DW_FORM_data4, 4},
						 {DW_FORM_data8, 8},
						 {DW_FORM_data16, 16}};
	uint64_t value;

	*string = NULL;
	*number = 0;
	switch (form) {
	case DW_FORM_string:
		if (!(nul = memchr(bytes + *offset, 0, end - *offset)))
			return false;
		*string = (const char *)bytes + *offset;
		*offset = (size_t)(nul - bytes) + 1;
		return true;
	case DW_FORM_line_strp:
	case DW_FORM_strp:
		if (!read_offset(bytes, offset, end, program->offset_size, &value))
			return false;
		*string =
		    form == DW_FORM_line_strp
			? string_at(programs->sections.line_str, programs->sections.line_str_size,
				    value)
			: string_at(programs->sections.str, programs->sections.str_size, value);
		return *string != NULL;
	case DW_FORM_udata:
		return read_uleb(bytes, offset, end, number);
	case DW_FORM_block:
		if (!read_uleb(bytes, offset, end, &value) || value > end - *offset)
			return false;
		*offset += value;
		return true;
	}
	for (size_t i = 0; i < sizeof(fixed_sizes) / sizeof(*fixed_sizes); i++) {
		if (form != fixed_sizes[i][0])
			continue;
		if (end - *offset < fixed_sizes[i][1])
			return false;
		for (unsigned byte = 0; byte < fixed_sizes[i][1] && byte < 8; byte++)
			*number |= (uint64_t)bytes[*offset + byte] << (8 * byte);
		*offset += fixed_sizes[i][1];
		return true;
	}
	return false;
}

/* One entry of a table: its name and its directory's index. */
struct entry {
	const char *path;
	uint64_t directory;
};

/* Reads a DWARF 5 table (its entry format, its count, its entries) into
 * `*entries`, to free. */
static bool read_table(const struct line_programs *programs, const struct program *program,
		       size_t *offset, struct entry **entries, size_t *count)
{
	const uint8_t *bytes = programs->sections.line;
	uint64_t contents[255], forms[255], wanted;
	uint8_t format_count;
	size_t capacity = 0;

	*entries = NULL;
	*count = 0;
	if (*offset >= program->opcodes)
		return false;
	format_count = bytes[(*offset)++];
	for (uint8_t i = 0; i < format_count; i++)
		if (!read_uleb(bytes, offset, program->opcodes, &contents[i]) ||
		    !read_uleb(bytes, offset, program->opcodes, &forms[i]))
			return false;
	/* Each entry takes a byte at least: a count past the bytes is a lie. */
	if (!read_uleb(bytes, offset, program->opcodes, &wanted) ||
	    (wanted && (!format_count || wanted > program->opcodes - *offset)) ||
	    !buffer_reserve((void **)entries, &capacity, wanted ? wanted : 1, sizeof(**entries)))
		return false;
	for (; *count < wanted; (*count)++) {
		struct entry entry = {.path = NULL};

		for (uint8_t i = 0; i < format_count; i++) {
			const char *string;
			uint64_t number;

			if (!read_form(programs, program, forms[i], offset, program->opcodes,
				       &string, &number))
				return false;
			if (contents[i] == DW_LNCT_path)
				entry.path = string;
			else if (contents[i] == DW_LNCT_directory_index)
				entry.directory = number;
		}
		if (!entry.path)
			return false;
		(*entries)[*count] = entry;
	}
	return true;
}

/* Reads a DWARF 2 to 4 table: entries up to an empty name, a directory's
 * being the name alone, a file's followed by its directory's index, time
 * and size. Index 0 is left empty: the compilation folder for directories,
 * no file for files. */
static bool read_old_table(const uint8_t *bytes, size_t *offset, size_t end, bool files,
			   struct entry **entries, size_t *count)
{
	size_t capacity = 0;
	const uint8_t *nul;

	*entries = NULL;
	*count = 1;
	if (!buffer_reserve((void **)entries, &capacity, 1, sizeof(**entries)))
		return false;
	(*entries)[0] = (struct entry){.path = NULL};
	while (*offset < end && bytes[*offset]) {
		struct entry entry = {.path = (const char *)bytes + *offset};
		uint64_t ignored;

		if (!(nul = memchr(bytes + *offset, 0, end - *offset)))
			return false;
		*offset = (size_t)(nul - bytes) + 1;
		if (files && (!read_uleb(bytes, offset, end, &entry.directory) ||
			      !read_uleb(bytes, offset, end, &ignored) ||
			      !read_uleb(bytes, offset, end, &ignored)))
			return false;
		if (!buffer_reserve((void **)entries, &capacity, *count + 1, sizeof(**entries)))
			return false;
		(*entries)[(*count)++] = entry;
	}
	if (*offset >= end)
		return false;
	(*offset)++; /* the empty name */
	return true;
}

/* A file's path as libdw joins it: absolute as it is, else after its
 * directory; a path still relative after the compilation folder, which a
 * DWARF 5 program names as its directory 0. */
static char *join_path(const struct program *program, const struct entry *directories,
		       size_t directory_count, const struct entry *file)
{
	const char *directory, *folder = NULL;
	char *path;

	if (file->path[0] == '/')
		return strdup(file->path);
	if (file->directory >= directory_count)
		return NULL;
	if (!(directory = directories[file->directory].path))
		return strdup(file->path);
	if (program->version >= 5 && directory[0] != '/' && directories[0].path[0] == '/')
		folder = directories[0].path;
	if (asprintf(&path, "%s%s%s/%s", folder ? folder : "", folder ? "/" : "", directory,
		     file->path) < 0)
		return NULL;
	return path;
}

/* The program's file names, joined to their directories. */
static void read_files(const struct line_programs *programs, struct program *program)
{
	const uint8_t *bytes = programs->sections.line;
	struct entry *directories = NULL, *files = NULL;
	size_t directory_count, file_count, offset = program->tables;
	bool read;

	program->files_read = true;
	if (program->version >= 5)
		read = read_table(programs, program, &offset, &directories, &directory_count) &&
		       directory_count > 0 &&
		       read_table(programs, program, &offset, &files, &file_count);
	else
		read = read_old_table(bytes, &offset, program->opcodes, false, &directories,
				      &directory_count) &&
		       read_old_table(bytes, &offset, program->opcodes, true, &files, &file_count);
	if (read && (program->files = calloc(file_count ? file_count : 1, sizeof(char *)))) {
		program->file_count = file_count;
		for (size_t i = 0; i < file_count; i++)
			if (files[i].path &&
			    !(program->files[i] =
				  join_path(program, directories, directory_count, &files[i]))) {
				free_files(program);
				program->files = NULL;
				program->file_count = 0;
				break;
			}
	}
	free(directories);
	free(files);
}

struct line_programs *line_programs_index(const struct line_sections *sections)
{
	struct line_programs *programs;
	size_t offset = 0, program_capacity = 0, sequence_capacity = 0;

	if (!sections->line || sections->line_size > UINT32_MAX ||
	    !(programs = calloc(1, sizeof(*programs))))
		return NULL;
	programs->sections = *sections;
	while (offset < sections->line_size) {
		struct program program;
		bool usable;

		if (!read_header(sections->line, sections->line_size, &offset, &program, &usable))
			break;
		if (!usable)
			continue;
		if (!buffer_reserve((void **)&programs->programs, &program_capacity,
				    programs->program_count + 1, sizeof(program)))
			break;
		programs->programs[programs->program_count] = program;
		if (!index_sequences(programs, &sequence_capacity,
				     (uint32_t)programs->program_count++))
			break;
	}
	if (!programs->sequence_count) {
		line_programs_free(programs);
		return NULL;
	}
	qsort(programs->sequences, programs->sequence_count, sizeof(*programs->sequences),
	      compare_sequences);
	return programs;
}

/* The rows of `sequence` up to its end, kept in it. False when memory
 * runs out. */
static bool decode_rows(const struct line_programs *programs, struct sequence *sequence)
{
	const struct program *program = &programs->programs[sequence->program];
	struct machine machine;
	struct row row;
	size_t capacity = 0;

	reset(&machine, sequence->start);
	while (next_row(program, programs->sections.line, &machine, &row) && !row.end_sequence) {
		if (!buffer_reserve((void **)&sequence->rows, &capacity, sequence->row_count + 1,
				    sizeof(*sequence->rows)))
			return false;
		sequence->rows[sequence->row_count++] = (struct kept_row){
		    .address = row.address,
		    .file = row.file < UINT32_MAX ? (uint32_t)row.file : UINT32_MAX,
		    .line = row.line <= INT32_MAX ? (uint32_t)row.line : 0};
	}
	return sequence->rows != NULL;
}

bool line_programs_find(struct line_programs *programs, uint64_t address, struct source_line *line,
			bool *relative_to_unit)
{
	size_t low = 0, high = programs->sequence_count;
	struct sequence *sequence;
	struct program *program;
	const struct kept_row *row;

	while (low < high) {
		size_t middle = low + (high - low) / 2;

		if (programs->sequences[middle].low <= address)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == 0 || address >= (sequence = &programs->sequences[low - 1])->high ||
	    (!sequence->rows && !decode_rows(programs, sequence)))
		return false;
	/* The last row at or before the address: rows go up by address. */
	for (low = 0, high = sequence->row_count; low < high;) {
		size_t middle = low + (high - low) / 2;

		if (sequence->rows[middle].address <= address)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == 0 || (row = &sequence->rows[low - 1])->line == 0)
		return false;
	program = &programs->programs[sequence->program];
	if (!program->files_read)
		read_files(programs, program);
	if (row->file >= program->file_count || !program->files[row->file])
		return false;
	*line = (struct source_line){.file = program->files[row->file], .number = row->line};
	*relative_to_unit = program->version < 5 && line->file[0] != '/';
	return true;
}

void line_programs_free(struct line_programs *programs)
{
	if (!programs)
		return;
	for (size_t i = 0; i < programs->program_count; i++)
		free_files(&programs->programs[i]);
	for (size_t i = 0; i < programs->sequence_count; i++)
		free(programs->sequences[i].rows);
	free(programs->programs);
	free(programs->sequences);
	free(programs);
}
