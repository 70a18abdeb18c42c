#include "emit.h"

#include <string.h>

/* Folded text separates frames with ';', so a ';' in a name becomes ':', as
 * stackcollapse-perf does. (Names hold no line breaks: the profile made them
 * printable.) */
static void write_frame(const char *name, FILE *out)
{
	for (size_t clean; *name; name += clean + 1) {
		clean = strcspn(name, ";");
		fwrite(name, 1, clean, out);
		if (!name[clean])
			break;
		fputc(':', out);
	}
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
