/* A shared library whose function spins: tests delete or replace its file
 * while a process runs it (tests/workloads/loads_library.c). Built
 * -fomit-frame-pointer: its caller is found from its CFI. */
static volatile unsigned long sink;

__attribute__((noipa)) void victim_spin(void)
{
	unsigned long hash = 1;

	for (unsigned long i = 0; i < 20000000; i++)
		hash = hash * 6364136223846793005UL + i;
	sink = hash;
}
