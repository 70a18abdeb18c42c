/* A small library as the .NET runtime is built: exported entry points that
 * call internal functions, which only a separate debug file names. */
#ifndef VARIANT
#define VARIANT 1
#endif

static volatile int sink;

static __attribute__((noinline)) int internal_helper(int x)
{
	for (int i = 0; i < 100; i++)
		sink += x * i + VARIANT;
	return sink;
}

__attribute__((visibility("hidden"), noinline)) int hidden_worker(int x)
{
	return internal_helper(x) * 3;
}

static inline __attribute__((always_inline)) int inlined_square(int x)
{
	for (int i = 0; i < 50; i++)
		sink += x * x + i;
	return sink;
}

int exported_entry(int x)
{
	return internal_helper(x) + hidden_worker(x);
}

int exported_inline_user(int x)
{
	return inlined_square(x) + inlined_square(x + 1);
}
