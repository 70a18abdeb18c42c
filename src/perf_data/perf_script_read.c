#include "perf_script_read.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct sample_state {
	struct perf_script_sample sample;
	size_t frame_line_capacity, frame_capacity;
	char *header; /* owns the comm and event strings */
	char **frame_lines;
	bool open;
};

/* Where the comm ends: the whitespace before the first PID/TID (or PID
 * followed by " [CPU]"). The comm itself may hold spaces and digits. */
static const char *find_comm_end(const char *line)
{
	for (const char *space = line; *space; space++) {
		const char *cursor = space, *digits;

		if (!isspace((unsigned char)*space))
			continue;
		while (isspace((unsigned char)*cursor))
			cursor++;
		digits = cursor;
		while (isdigit((unsigned char)*cursor))
			cursor++;
		if (cursor == digits)
			continue;
		if (*cursor == '/' && isdigit((unsigned char)cursor[1]))
			return space;
		if (isspace((unsigned char)*cursor) && cursor[1] == '[')
			return space;
	}
	return NULL;
}

static char *skip_spaces(char *text)
{
	while (isspace((unsigned char)*text))
		text++;
	return text;
}

/* Parses a header line in place. Returns false when it is none. */
static bool parse_header(char *line, struct perf_script_sample *sample)
{
	char *cursor, *end;
	char *comm = skip_spaces(line), *comm_end = (char *)find_comm_end(comm);

	if (!comm_end)
		return false;
	cursor = skip_spaces(comm_end);
	*comm_end = '\0';
	sample->comm = comm;
	sample->pid = sample->tid = (int)strtol(cursor, &end, 10);
	if (*end == '/')
		sample->tid = (int)strtol(end + 1, &end, 10);
	cursor = skip_spaces(end);
	sample->cpu = -1;
	if (*cursor == '[') {
		sample->cpu = (int)strtol(cursor + 1, &end, 10);
		if (*end != ']')
			return false;
		cursor = skip_spaces(end + 1);
	}
	sample->seconds = strtod(cursor, &end);
	if (end == cursor || *end != ':')
		return false;
	cursor = skip_spaces(end + 1);
	if (isdigit((unsigned char)*cursor)) {
		strtoull(cursor, &end, 10);
		cursor = skip_spaces(end);
	}
	end = strchr(cursor, ':');
	if (!end)
		return false;
	*end = '\0';
	sample->event = cursor;
	return true;
}

static void strip_outer_brackets(char **text, size_t *length)
{
	while (*length >= 2 && (((*text)[0] == '(' && (*text)[*length - 1] == ')') ||
				((*text)[0] == '[' && (*text)[*length - 1] == ']'))) {
		(*text)++;
		*length -= 2;
	}
	(*text)[*length] = '\0';
}

static char *trim(char *text)
{
	size_t length;

	text = skip_spaces(text);
	length = strlen(text);
	while (length && isspace((unsigned char)text[length - 1]))
		text[--length] = '\0';
	return text;
}

/* A JIT perf map line names its assembly in brackets
 * ("int32 [hotloop] Demo.Program::Run()[OptimizedTier1]"): the assembly
 * becomes the module, the method the symbol, the trailing tier is dropped
 * so that every tier of a method counts as one. */
static void split_perfmap_symbol(struct perf_script_frame *frame, char *symbol)
{
	for (char *token = symbol; *token;) {
		size_t length = strcspn(token, " ");

		if (length > 2 && token[0] == '[' && token[length - 1] == ']') {
			char *method = trim(token + length);
			size_t method_length = strlen(method);
			char *tier = method_length ? strrchr(method, '[') : NULL;

			token[length - 1] = '\0';
			frame->module = token + 1;
			if (tier && tier > method && method[method_length - 1] == ']' &&
			    isupper((unsigned char)tier[1]))
				*tier = '\0';
			frame->symbol = method;
			return;
		}
		token += length;
		token += strspn(token, " ");
	}
	frame->symbol = symbol;
}

/* "\t    ADDR SYMBOL (DSO)", parsed in place. */
static void parse_frame(char *line, struct perf_script_frame *frame)
{
	char *cursor = skip_spaces(line), *open = NULL, *symbol, *module, *offset, *slash;
	size_t length;

	cursor += strcspn(cursor, " ");
	symbol = skip_spaces(cursor);
	for (char *at = symbol; (at = strchr(at, '(')); at++)
		open = at;
	if (open) {
		*open = '\0';
		module = trim(open + 1);
		length = strlen(module);
		if (length && module[length - 1] == ')')
			module[--length] = '\0';
	} else {
		module = symbol + strlen(symbol);
	}
	symbol = trim(symbol);
	length = strlen(symbol);
	strip_outer_brackets(&symbol, &length);
	slash = strrchr(module, '/');
	frame->module = slash ? slash + 1 : module;
	frame->symbol = symbol;
	length = strlen(module);
	if (length > 4 && !strcmp(module + length - 4, ".map"))
		split_perfmap_symbol(frame, symbol);
	offset = strstr(frame->symbol, "+0x");
	if (offset && offset > frame->symbol)
		*offset = '\0';
	length = strlen(frame->module);
	strip_outer_brackets((char **)&frame->module, &length);
}

static void finish_sample(struct sample_state *state, perf_script_sample_handler handler,
			  void *context, long *count)
{
	if (!state->open)
		return;
	for (size_t i = 0; i < state->sample.frame_count; i++)
		parse_frame(state->frame_lines[i], &state->sample.frames[i]);
	handler(&state->sample, context);
	(*count)++;
	for (size_t i = 0; i < state->sample.frame_count; i++)
		free(state->frame_lines[i]);
	free(state->header);
	state->header = NULL;
	state->sample.frame_count = 0;
	state->open = false;
}

long perf_script_read(FILE *in, perf_script_sample_handler handler, void *context, char *error,
		      size_t error_size)
{
	struct sample_state state = {0};
	char *line = NULL;
	size_t capacity = 0, line_number = 0;
	ssize_t length;
	long count = 0;

	while ((length = getline(&line, &capacity, in)) >= 0) {
		line_number++;
		while (length && (line[length - 1] == '\n' || line[length - 1] == '\r'))
			line[--length] = '\0';
		if (state.open && line[0] == '\t') {
			grow_array((void **)&state.frame_lines, &state.frame_line_capacity,
				   state.sample.frame_count + 1, sizeof(*state.frame_lines));
			grow_array((void **)&state.sample.frames, &state.frame_capacity,
				   state.sample.frame_count + 1, sizeof(*state.sample.frames));
			state.frame_lines[state.sample.frame_count++] = xstrdup(line);
			continue;
		}
		finish_sample(&state, handler, context, &count);
		if (line[strspn(line, " \t")] == '\0' || (count == 0 && line[0] == '#'))
			continue;
		state.header = xstrdup(line);
		if (!parse_header(state.header, &state.sample)) {
			snprintf(error, error_size,
				 "line %zu: not a perf script sample header: %.60s", line_number,
				 line);
			free(state.header);
			count = -1;
			break;
		}
		state.open = true;
	}
	if (count >= 0)
		finish_sample(&state, handler, context, &count);
	if (count >= 0 && ferror(in)) {
		snprintf(error, error_size, "cannot read the text: %s", strerror(errno));
		count = -1;
	}
	for (size_t i = 0; i < state.sample.frame_count; i++)
		free(state.frame_lines[i]);
	free(state.frame_lines);
	free(state.sample.frames);
	free(line);
	return count;
}
