/* Loads the shared library argv[1] and calls its victim_spin from
 * call_victim until killed. Prints "loaded" once the library is mapped, so
 * a test may then delete or replace the file. */
#include <dlfcn.h>
#include <stdio.h>

static void (*victim_spin)(void);

__attribute__((noipa)) void call_victim(void)
{
	victim_spin();
	__asm__ volatile("" ::: "memory"); /* keeps the call from being a jump */
}

int main(int argc, char **argv)
{
	void *library = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;

	if (!library || !(victim_spin = (void (*)(void))dlsym(library, "victim_spin"))) {
		fprintf(stderr, "loads_library: %s\n", dlerror());
		return 1;
	}
	printf("loaded\n");
	fflush(stdout);
	for (;;)
		call_victim();
}
