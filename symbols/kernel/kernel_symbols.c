#include "kernel_symbols.h"
#include "buffer.h"
#include "kernel_symbols_table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Longer names and lines are no kernel's (KSYM_NAME_LEN is 512, a module's
 * name under 64 bytes); a copy's lines stay within LINE_LENGTH. */
enum { NAME_MAX_LENGTH = 512, MODULE_MAX_LENGTH = 255, LINE_LENGTH = 1024 };
enum { NAME_BLOCK_SIZE = 1 << 16, LISTING_BUFFER = 1 << 16 };

struct kernel_symbol {
	uint64_t address;
	const char *name;
	const char *module; /* NULL: the core kernel */
	uint32_t line;	    /* in the listing: of two at one address, the first names it */
	char type;
	bool copied; /* written into the copy */
};

/* Names are kept in blocks that never move, so a name handed out stays
 * valid while more of the listing is read. */
struct name_block {
	struct name_block *next;
	size_t used;
	char bytes[NAME_BLOCK_SIZE];
};

struct kernel_symbols {
	FILE *listing; /* NULL once read to its end */
	uint32_t lines_read;
	/* Sorted by address, one per address: the core kernel's lines as far
	 * as read, or the whole listing once it is read. */
	struct kernel_symbol *symbols;
	size_t count, capacity;
	struct name_block *names;
	const char *last_module;
	FILE *copy; /* NULL: nothing is copied */
	const char *copy_last_line;
	int copy_error; /* errno of the first line that could not be written */
	/* Once the core kernel's lines, in address order at the listing's
	 * start, have ended: the line of the last of them. */
	bool core_ended;
	uint32_t core_last_line;
	/* Where to read anew an address outside this listing (NULL: nowhere). */
	FILE *(*fallback)(void);
	/* A boot's table of the core kernel, asked before the listing;
	 * table_copied: a bit per entry written into the copy. */
	struct kernel_symbols_table *table;
	uint8_t *table_copied;
};

struct listing_line {
	uint64_t address;
	char type;
	char *name, *module; /* module NULL: the core kernel */
};

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* "ADDRESS TYPE NAME[\t[MODULE]]", cut in place. Parsed by hand: sscanf()
 * and strtoull() took most of our share of the load time. */
static bool parse_line(char *line, struct listing_line *parsed)
{
	char *cursor = line, *end;
	int digit, digits = 0;

	parsed->address = 0;
	for (; digits < 16 && (digit = hex_digit(*cursor)) >= 0; cursor++, digits++)
		parsed->address = parsed->address << 4 | (uint64_t)digit;
	if (digits == 0 || cursor[0] != ' ' || cursor[1] == '\0' || cursor[2] != ' ')
		return false;
	parsed->type = cursor[1];
	parsed->name = cursor + 3;
	end = parsed->name + strcspn(parsed->name, " \t\n");
	parsed->module = NULL;
	if (end[0] == '\t' && end[1] == '[') {
		parsed->module = end + 2;
		parsed->module[strcspn(parsed->module, "]\n")] = '\0';
	}
	*end = '\0';
	return *parsed->name != '\0' && end - parsed->name <= NAME_MAX_LENGTH &&
	       (!parsed->module || strlen(parsed->module) <= MODULE_MAX_LENGTH);
}

/* The next line naming code (types t, T, w, W) at an address other than
 * 0, which is where kallsyms hides them; false at the end of the listing or
 * of the lines allowed. */
static bool read_text_line(struct kernel_symbols *symbols, char *line, struct listing_line *parsed)
{
	while (symbols->lines_read < KERNEL_SYMBOLS_MAX_LINES &&
	       fgets(line, LINE_LENGTH, symbols->listing)) {
		size_t length = strlen(line);
		int c;

		symbols->lines_read++;
		if (length == LINE_LENGTH - 1 && line[length - 1] != '\n') {
			while ((c = getc(symbols->listing)) != EOF && c != '\n')
				; /* too long for a kernel's line: skipped whole */
			continue;
		}
		if (parse_line(line, parsed) && strchr("tTwW", parsed->type) && parsed->address)
			return true;
	}
	return false;
}

static const char *keep_string(struct kernel_symbols *symbols, const char *string)
{
	size_t length = strlen(string) + 1;
	struct name_block *block = symbols->names;
	char *kept;

	if (!block || block->used + length > NAME_BLOCK_SIZE) {
		if (!(block = malloc(sizeof(*block))))
			return NULL;
		block->next = symbols->names;
		block->used = 0;
		symbols->names = block;
	}
	kept = memcpy(block->bytes + block->used, string, length);
	block->used += length;
	return kept;
}

static bool add_symbol(struct kernel_symbols *symbols, const struct listing_line *line)
{
	struct kernel_symbol symbol = {
	    .address = line->address, .line = symbols->lines_read, .type = line->type};

	/* A module's lines come together: keep its name once. */
	if (line->module && !(symbols->last_module && !strcmp(symbols->last_module, line->module)))
		symbols->last_module = keep_string(symbols, line->module);
	symbol.module = line->module ? symbols->last_module : NULL;
	if ((line->module && !symbol.module) || !(symbol.name = keep_string(symbols, line->name)) ||
	    !buffer_reserve((void **)&symbols->symbols, &symbols->capacity, symbols->count + 1,
			    sizeof(*symbols->symbols)))
		return false;
	symbols->symbols[symbols->count++] = symbol;
	return true;
}

static int compare_listed(const void *a, const void *b)
{
	const struct kernel_symbol *x = a, *y = b;

	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* Closes the listing and makes the table whole: the lines after the first
 * `sorted` ones, read in the listing's own order, are sorted and merged in,
 * one symbol per address. */
static void finish_listing(struct kernel_symbols *symbols, size_t sorted)
{
	struct kernel_symbol *all = symbols->symbols, *merged;
	size_t core = 0, tail = sorted, kept = 0;

	fclose(symbols->listing);
	symbols->listing = NULL;
	if (sorted == symbols->count)
		return;
	qsort(all + sorted, symbols->count - sorted, sizeof(*all), compare_listed);
	if (!(merged = malloc(symbols->count * sizeof(*merged)))) {
		symbols->count = sorted; /* out of memory: the core kernel only */
		return;
	}
	while (core < sorted || tail < symbols->count) {
		const struct kernel_symbol *next =
		    tail == symbols->count ||
			    (core < sorted && compare_listed(&all[core], &all[tail]) <= 0)
			? &all[core++]
			: &all[tail++];

		if (kept == 0 || merged[kept - 1].address != next->address)
			merged[kept++] = *next;
	}
	free(all);
	symbols->symbols = merged;
	symbols->count = symbols->capacity = kept;
}

/* The lines in address order at the listing's start end here. */
static void end_core(struct kernel_symbols *symbols)
{
	if (symbols->core_ended)
		return;
	symbols->core_ended = true;
	symbols->core_last_line = symbols->count ? symbols->symbols[symbols->count - 1].line : 0;
}

/* Past the lines in address order: reads the rest of the listing whole,
 * from `first`, then sorts it in. */
static void read_rest(struct kernel_symbols *symbols, char *line, struct listing_line *first)
{
	size_t sorted = symbols->count;
	bool added;

	end_core(symbols);
	added = add_symbol(symbols, first);

	while (added && read_text_line(symbols, line, first))
		added = add_symbol(symbols, first);
	finish_listing(symbols, sorted);
}

static void take_line(struct kernel_symbols *symbols, char *line, struct listing_line *parsed)
{
	const struct kernel_symbol *last =
	    symbols->count ? &symbols->symbols[symbols->count - 1] : NULL;

	if (parsed->module || (last && parsed->address < last->address))
		read_rest(symbols, line, parsed);
	else if ((!last || parsed->address != last->address) && !add_symbol(symbols, parsed))
		finish_listing(symbols, symbols->count);
}

/* The core symbols read so far answer for `address` only when it lies
 * between two of them. */
static bool read_covers(const struct kernel_symbols *symbols, uint64_t address)
{
	return symbols->count && symbols->symbols[0].address <= address &&
	       symbols->symbols[symbols->count - 1].address > address;
}

/* Reads the listing's next text line into the table (in part), or closes
 * the listing at its end. */
static void read_next(struct kernel_symbols *symbols)
{
	char line[LINE_LENGTH];
	struct listing_line parsed;

	if (read_text_line(symbols, line, &parsed)) {
		take_line(symbols, line, &parsed);
	} else {
		end_core(symbols);
		finish_listing(symbols, symbols->count);
	}
}

/* Starts the table anew from `listing`, read in part. Names handed out
 * stay where they are; the copy may get lines it has again, which its
 * reader merges. */
static void read_anew(struct kernel_symbols *symbols, FILE *listing)
{
	setvbuf(listing, NULL, _IOFBF, LISTING_BUFFER);
	symbols->listing = listing;
	symbols->lines_read = 0;
	symbols->count = 0;
	symbols->last_module = NULL;
	symbols->core_ended = false;
}

struct kernel_symbols *kernel_symbols_open(FILE *listing, bool in_part)
{
	struct kernel_symbols *symbols = calloc(1, sizeof(*symbols));
	struct listing_line parsed;
	char line[LINE_LENGTH];

	if (!symbols) {
		fclose(listing);
		return NULL;
	}
	symbols->listing = listing;
	/* Fewer, larger reads: the kernel fills each with whole lines. */
	setvbuf(listing, NULL, _IOFBF, LISTING_BUFFER);
	if (!read_text_line(symbols, line, &parsed)) {
		kernel_symbols_free(symbols);
		return NULL;
	}
	if (in_part)
		take_line(symbols, line, &parsed);
	else
		read_rest(symbols, line, &parsed);
	return symbols;
}

void kernel_symbols_free(struct kernel_symbols *symbols)
{
	if (!symbols)
		return;
	if (symbols->listing)
		fclose(symbols->listing);
	if (symbols->copy)
		fclose(symbols->copy); /* never ended: no last line */
	while (symbols->names) {
		struct name_block *next = symbols->names->next;

		free(symbols->names);
		symbols->names = next;
	}
	kernel_symbols_table_free(symbols->table);
	free(symbols->table_copied);
	free(symbols->symbols);
	free(symbols);
}

void kernel_symbols_copy_to(struct kernel_symbols *symbols, FILE *copy, const char *last_line)
{
	if (symbols->copy)
		fclose(symbols->copy);
	symbols->copy = copy;
	symbols->copy_last_line = last_line;
	symbols->copy_error = 0;
	/* A new copy gets every symbol asked for from now on. */
	for (size_t i = 0; i < symbols->count; i++)
		symbols->symbols[i].copied = false;
	free(symbols->table_copied);
	symbols->table_copied = NULL;
}

bool kernel_symbols_copying(const struct kernel_symbols *symbols)
{
	return symbols->copy != NULL;
}

int kernel_symbols_end_copy(struct kernel_symbols *symbols)
{
	int error = symbols->copy_error;

	fputs(symbols->copy_last_line, symbols->copy);
	if (fclose(symbols->copy) != 0 && !error)
		error = errno;
	symbols->copy = NULL;
	errno = error;
	return error ? -1 : 0;
}

/* `symbol` as its listing line. */
static void write_line(FILE *out, const struct kernel_symbol *symbol)
{
	fprintf(out, "%016" PRIx64 " %c %s%s%s%s\n", symbol->address, symbol->type, symbol->name,
		symbol->module ? "\t[" : "", symbol->module ? symbol->module : "",
		symbol->module ? "]" : "");
}

/* `symbol`'s line into the copy, flushed: an interrupted capture keeps
 * the lines written until then. */
static void copy_line(struct kernel_symbols *symbols, const struct kernel_symbol *symbol)
{
	write_line(symbols->copy, symbol);
	if (fflush(symbols->copy) != 0 && !symbols->copy_error)
		symbols->copy_error = errno;
}

static void copy_symbol(struct kernel_symbols *symbols, struct kernel_symbol *symbol)
{
	if (symbol->copied)
		return;
	symbol->copied = true;
	copy_line(symbols, symbol);
}

void kernel_symbols_fall_back_to(struct kernel_symbols *symbols, FILE *(*open_listing)(void))
{
	symbols->fallback = open_listing;
}

bool kernel_symbols_write_core(struct kernel_symbols *symbols, FILE *out)
{
	struct kernel_symbol_entry *core;
	size_t count = 0;
	bool written;

	while (symbols->listing && !symbols->core_ended)
		read_next(symbols);
	if (!symbols->core_ended || !(core = malloc((symbols->count + 1) * sizeof(*core))))
		return false; /* out of memory on the way */
	/* Lines of the rest come after the core's, and lose to them at an
	 * address both name: the core's are those read up to its end. */
	for (size_t i = 0; i < symbols->count; i++)
		if (symbols->symbols[i].line <= symbols->core_last_line)
			core[count++] = (struct kernel_symbol_entry){symbols->symbols[i].address,
								     symbols->symbols[i].type,
								     symbols->symbols[i].name};
	written = kernel_symbols_table_write(out, core, count);
	free(core);
	return written;
}

struct kernel_symbols *kernel_symbols_open_table(struct kernel_symbols_table *table,
						 FILE *(*open_listing)(void))
{
	struct kernel_symbols *symbols = calloc(1, sizeof(*symbols));

	if (!symbols) {
		kernel_symbols_table_free(table);
		return NULL;
	}
	symbols->table = table;
	symbols->fallback = open_listing;
	return symbols;
}

/* Names `address` from the boot's table when it covers it, writing the
 * entry and the next one (where it ends) into the copy, once each. */
static bool find_in_table(struct kernel_symbols *symbols, uint64_t address, const char **name,
			  uint64_t *offset)
{
	size_t position, count;
	struct kernel_symbol_entry entry;

	if (!symbols->table || !kernel_symbols_table_find(symbols->table, address, &position))
		return false;
	entry = kernel_symbols_table_entry(symbols->table, position);
	*name = entry.name;
	*offset = address - entry.address;
	count = kernel_symbols_table_count(symbols->table);
	if (symbols->copy && !symbols->table_copied &&
	    !(symbols->table_copied = calloc(count / 8 + 1, 1)))
		return true; /* out of memory: named, not copied */
	for (size_t i = position; symbols->copy && i <= position + 1 && i < count; i++) {
		struct kernel_symbol_entry copied = kernel_symbols_table_entry(symbols->table, i);

		if (symbols->table_copied[i / 8] & (1u << (i % 8)))
			continue;
		symbols->table_copied[i / 8] |= (uint8_t)(1u << (i % 8));
		copy_line(symbols, &(struct kernel_symbol){.address = copied.address,
							   .name = copied.name,
							   .type = copied.type});
	}
	return true;
}

bool kernel_symbols_find(struct kernel_symbols *symbols, uint64_t address, const char **name,
			 uint64_t *offset)
{
	size_t low = 0, high;
	FILE *listing;

	if (find_in_table(symbols, address, name, offset))
		return true;
	while (symbols->listing && !read_covers(symbols, address))
		read_next(symbols);
	if (symbols->fallback && !read_covers(symbols, address)) {
		listing = symbols->fallback();
		symbols->fallback = NULL;
		if (listing)
			read_anew(symbols, listing);
		while (symbols->listing && !read_covers(symbols, address))
			read_next(symbols);
	}
	for (high = symbols->count; low < high;) {
		size_t middle = low + (high - low) / 2;

		if (symbols->symbols[middle].address <= address)
			low = middle + 1;
		else
			high = middle;
	}
	/* The last symbol has no end: it covers its own address only. */
	if (low == 0 || (low == symbols->count && address != symbols->symbols[low - 1].address))
		return false;
	*name = symbols->symbols[low - 1].name;
	*offset = address - symbols->symbols[low - 1].address;
	if (symbols->copy) {
		copy_symbol(symbols, &symbols->symbols[low - 1]);
		if (low < symbols->count)
			copy_symbol(symbols, &symbols->symbols[low]);
	}
	return true;
}
