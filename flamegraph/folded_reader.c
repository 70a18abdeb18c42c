/* Reads folded stacks ("a;b;c 123") into the frame tree. Input is read in
 * large blocks and split in place; a line that shares leading frames with
 * the line before it (sorted folded files mostly do) reuses those tree
 * nodes without hashing their names again. */
#include "frame_tree.h"
#include "allocation.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { READ_BLOCK = 1 << 20 };

struct folded_reader {
	struct flamegraph *graph;
	enum folded_columns columns;
	struct folded_read_stats stats;
	char *previous_stack; /* the last good line's stack text */
	size_t previous_length, previous_capacity;
	uint32_t *previous_nodes; /* its node at each depth */
	size_t previous_depth, previous_nodes_capacity;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Parses "123", "12.5" or ".5" (the whole of text[0..length)). */
static bool parse_count(const char *text, size_t length, double *count)
{
	double value = 0, scale = 1;
	size_t i = 0, digits = 0;

	for (; i < length && text[i] >= '0' && text[i] <= '9'; i++, digits++)
		value = value * 10 + (text[i] - '0');
	if (i < length && text[i] == '.') {
		for (i++; i < length && text[i] >= '0' && text[i] <= '9'; i++, digits++) {
			scale /= 10;
			value += (text[i] - '0') * scale;
		}
	}
	*count = value;
	return digits && i == length;
}

/* Splits the last blank-separated word off text[0..*length); returns false
 * when it is not a count. On success *length ends before the blanks. */
static bool take_last_count(const char *text, size_t *length, double *count)
{
	size_t end = *length, start;

	while (end && is_blank(text[end - 1]))
		end--;
	start = end;
	while (start && !is_blank(text[start - 1]))
		start--;
	if (!start || !parse_count(text + start, end - start, count))
		return false;
	while (start && is_blank(text[start - 1]))
		start--;
	*length = start;
	return true;
}

static size_t common_prefix(const char *a, const char *b, size_t length)
{
	size_t i = 0;
	uint64_t word_a, word_b;

	for (; i + 8 <= length; i += 8) {
		memcpy(&word_a, a + i, 8);
		memcpy(&word_b, b + i, 8);
		if (word_a != word_b)
			break;
	}
	while (i < length && a[i] == b[i])
		i++;
	return i;
}

static void remember_node(struct folded_reader *reader, size_t depth, uint32_t node)
{
	fg_grow((void **)&reader->previous_nodes, &reader->previous_nodes_capacity, depth + 1,
		sizeof(*reader->previous_nodes));
	reader->previous_nodes[depth] = node;
}

/* Finds or creates the tree path for stack[0..length); returns its leaf,
 * or NO_NODE when a frame is empty. */
static uint32_t add_path(struct folded_reader *reader, const char *stack, size_t length)
{
	size_t shared =
	    common_prefix(stack, reader->previous_stack,
			  length < reader->previous_length ? length : reader->previous_length);
	bool same_stack = shared == length && length == reader->previous_length;
	uint32_t node = 0;
	size_t depth = 0, start = 0;

	while (start <= length) {
		const char *separator = memchr(stack + start, ';', length - start);
		size_t end = separator ? (size_t)(separator - stack) : length;

		if (end == start) { /* the nodes remembered so far no longer match */
			reader->previous_depth = reader->previous_length = 0;
			return NO_NODE;
		}
		/* The frame is the previous line's too when the shared bytes
		 * run past its end (so both have ';' there), or the whole
		 * stack repeats. */
		if ((end < shared || same_stack) && depth < reader->previous_depth)
			node = reader->previous_nodes[depth];
		else
			node = frame_tree_child(reader->graph, node, stack + start, end - start);
		remember_node(reader, depth++, node);
		start = end + 1;
	}
	reader->previous_depth = depth;
	fg_grow((void **)&reader->previous_stack, &reader->previous_capacity, length, 1);
	memcpy(reader->previous_stack, stack, length);
	reader->previous_length = length;
	return node;
}

static void read_line(struct folded_reader *reader, const char *line, size_t length)
{
	double before, after;
	size_t stack_length = length;
	uint32_t leaf;

	reader->stats.lines++;
	while (stack_length && is_blank(line[stack_length - 1]))
		stack_length--;
	if (!stack_length)
		return;
	if (!take_last_count(line, &stack_length, &after))
		goto bad;
	before = after;
	if (reader->columns == FOLDED_ONE_OR_TWO) {
		size_t rest = stack_length;

		if (take_last_count(line, &rest, &before)) {
			stack_length = rest;
			reader->graph->differential = true;
		}
	}
	leaf = add_path(reader, line, stack_length);
	if (leaf == NO_NODE)
		goto bad;
	if (reader->columns == FOLDED_AS_BEFORE)
		after = 0;
	else if (reader->columns == FOLDED_AS_AFTER)
		before = 0;
	if (reader->columns != FOLDED_ONE_OR_TWO)
		reader->graph->differential = true;
	if (before > 0 || after > 0)
		frame_tree_add_samples(reader->graph, leaf, before, after);
	reader->stats.stacks++;
	return;
bad:
	if (!reader->stats.bad_lines++)
		reader->stats.first_bad_line = reader->stats.lines;
}

int flamegraph_read_folded(struct flamegraph *graph, FILE *in, enum folded_columns columns,
			   struct folded_read_stats *stats)
{
	struct folded_reader reader = {.graph = graph, .columns = columns};
	size_t capacity = READ_BLOCK, filled = 0, got;
	char *buffer = fg_malloc(capacity);
	int status = 0;

	do {
		size_t start = 0;
		char *newline;

		if (capacity - filled < READ_BLOCK / 2)
			buffer = fg_realloc(buffer, capacity *= 2);
		got = fread(buffer + filled, 1, capacity - filled, in);
		filled += got;
		while ((newline = memchr(buffer + start, '\n', filled - start))) {
			read_line(&reader, buffer + start, (size_t)(newline - buffer) - start);
			start = (size_t)(newline - buffer) + 1;
		}
		if (!got && start < filled) { /* a last line without '\n' */
			read_line(&reader, buffer + start, filled - start);
			start = filled;
		}
		memmove(buffer, buffer + start, filled - start);
		filled -= start;
	} while (got);
	if (ferror(in)) {
		status = -1;
		if (!errno)
			errno = EIO;
	}
	free(buffer);
	free(reader.previous_stack);
	free(reader.previous_nodes);
	if (stats)
		*stats = reader.stats;
	return status;
}
