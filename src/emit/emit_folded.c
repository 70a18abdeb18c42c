#include "emit.h"

#include <stdbool.h>
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

static bool same_functions(const struct folded_stack *a, const struct folded_stack *b)
{
	return a->depth == b->depth &&
	       !memcmp(a->functions, b->functions, a->depth * sizeof(*a->functions));
}

int emit_folded(const struct folded_profile *folded, FILE *out)
{
	for (size_t i = 0, next; i < folded->count; i = next) {
		const struct folded_stack *stack = &folded->stacks[i];
		uint64_t count = stack->count;

		/* Neighbours with the same functions differ in full names only
		 * (one method at two tiers): one line. */
		for (next = i + 1;
		     next < folded->count && same_functions(stack, &folded->stacks[next]); next++)
			count += folded->stacks[next].count;
		for (size_t level = 0; level < stack->depth; level++) {
			if (level)
				fputc(';', out);
			write_frame(stack->functions[level], out);
		}
		fprintf(out, " %llu\n", (unsigned long long)count);
	}
	return ferror(out) ? -1 : 0;
}
