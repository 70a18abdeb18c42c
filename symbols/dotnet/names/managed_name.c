#include "managed_name.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A copy of `name` without the runtime's "/ * MT: 0x... * /" comments (and
 * the space before each). */
static char *without_comments(const char *name)
{
	char *copy = strdup(name), *out = copy;

	if (!copy)
		abort();
	for (const char *in = name; *in;) {
		const char *end;

		if (in[0] == '/' && in[1] == '*' && (end = strstr(in + 2, "*/"))) {
			if (out > copy && out[-1] == ' ')
				out--;
			in = end + 2;
			continue;
		}
		*out++ = *in++;
	}
	*out = '\0';
	return copy;
}

/* The position of the bracket opening the one that closes at `end` (text[end]
 * is `close`), or -1. */
static long matching_open(const char *text, long end, char open, char close)
{
	int depth = 0;

	for (long i = end; i >= 0; i--) {
		if (text[i] == close)
			depth++;
		else if (text[i] == open && --depth == 0)
			return i;
	}
	return -1;
}

/* Cuts a trailing "[Tier]" (letters and digits after the parameter list)
 * off `text`; returns the tier, or NULL. */
static const char *cut_tier(char *text)
{
	size_t length = strlen(text);
	long open;

	if (length < 3 || text[length - 1] != ']')
		return NULL;
	open = matching_open(text, (long)length - 1, '[', ']');
	if (open < 1 || text[open - 1] != ')')
		return NULL;
	for (size_t i = (size_t)open + 1; i < length - 1; i++)
		if (!isalnum((unsigned char)text[i]))
			return NULL;
	text[length - 1] = '\0';
	text[open] = '\0';
	return text + open + 1;
}

/* Appends the type-and-method name `qualified` to `out`, generic arguments
 * (inside [...]) without namespaces, or as "[...]" when `elide`. */
static void append_short_generics(char *out, const char *qualified, bool elide)
{
	size_t length = strlen(out), argument_start = 0;
	int depth = 0;

	for (const char *in = qualified; *in; in++) {
		if (*in == '[') {
			if (depth++ == 0 && elide) {
				memcpy(out + length, "[...]", 5);
				length += 5;
			}
		} else if (*in == ']') {
			depth--;
		}
		if (elide && (depth > 0 || *in == ']')) /* inside what "[...]" stands for */
			continue;
		if (depth > 0 && *in == '.') { /* drop the namespace read so far */
			length = argument_start;
			continue;
		}
		out[length++] = *in;
		if (*in == '[' || *in == ',')
			argument_start = length;
	}
	out[length] = '\0';
}

char *managed_name_readable(const char *runtime_name, bool keep_tier)
{
	char *text = without_comments(runtime_name), *readable = NULL;
	const char *tier = cut_tier(text), *assembly, *qualified;
	size_t length = strlen(text), size;
	long parameters, assembly_open;
	char *space, *separator;

	/* "RETURN [Assembly] Namespace.Type::Method(PARAMETERS)" */
	if (length < 2 || text[length - 1] != ')' ||
	    (parameters = matching_open(text, (long)length - 1, '(', ')')) < 1)
		goto done;
	text[parameters] = '\0';
	space = strrchr(text, ' ');
	if (!space || space == text || space[-1] != ']' || !(separator = strstr(space + 1, "::")) ||
	    separator == space + 1)
		goto done;
	assembly_open = matching_open(text, space - 1 - text, '[', ']');
	if (assembly_open < 0 || (assembly_open > 0 && text[assembly_open - 1] != ' ') ||
	    space - 1 - text == assembly_open + 1)
		goto done;
	space[-1] = '\0';
	assembly = text + assembly_open + 1;
	qualified = space + 1;

	/* Eliding may turn "[a]" into "[...]": room for twice the name. */
	size = strlen(assembly) + 2 * strlen(qualified) + (tier ? strlen(tier) : 0) + 16;
	readable = malloc(size);
	if (!readable)
		abort();
	snprintf(readable, size, "%s!", assembly);
	append_short_generics(readable, qualified, false);
	if (strlen(readable) > MANAGED_NAME_LONG) {
		snprintf(readable, size, "%s!", assembly);
		append_short_generics(readable, qualified, true);
	}
	if (keep_tier && tier)
		snprintf(readable + strlen(readable), size - strlen(readable), " [%s]", tier);
done:
	free(text);
	return readable;
}
