#include "emit.h"

#include <string.h>

/* Folded text separates frames with ';' and ends with " COUNT": a frame
 * name holding ';' or a newline would break the line, so those become ':'
 * and ' ', as stackcollapse-perf does. */
static void write_frame(const char *name, FILE *out)
{
	size_t clean = strcspn(name, ";\n\r");

	fwrite(name, 1, clean, out);
	for (name += clean; *name; name++)
		fputc(*name == ';' ? ':' : (*name == '\n' || *name == '\r') ? ' ' : *name, out);
}

int emit_folded(const struct folded_profile *folded, FILE *out)
{
	for (size_t i = 0; i < folded->count; i++) {
		const struct folded_stack *stack = &folded->stacks[i];

		for (size_t level = 0; level < stack->depth; level++) {
			if (level)
				fputc(';', out);
			write_frame(stack->functions[level], out);
		}
		fprintf(out, " %llu\n", (unsigned long long)stack->count);
	}
	return ferror(out) ? -1 : 0;
}
