/* Spins at the bottom of a recursion argv[1] calls deep (default 300), deeper
 * than the kernel's default callchain limit of 127 frames. */
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin_at_the_bottom(void)
{
	for (;;)
		sink++;
}

__attribute__((noinline)) static void recurse(int depth)
{
	if (depth > 0)
		recurse(depth - 1);
	else
		spin_at_the_bottom();
	sink++; /* no tail call */
}

int main(int argc, char **argv)
{
	recurse(argc > 1 ? atoi(argv[1]) : 300);
	return 0;
}
