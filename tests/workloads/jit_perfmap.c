/* A tiny JIT: copies machine code for a busy loop into anonymous executable
 * memory at run time and names it in /tmp/perf-<pid>.map, as .NET and node
 * do. The generated code keeps a frame pointer, so its caller is seen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* push rbp; mov rbp,rsp; mov ecx,50000000; l: dec ecx; jnz l; pop rbp; ret */
static const unsigned char busy_loop_code[] = {
    0x55, 0x48, 0x89, 0xe5, 0xb9, 0x80, 0xf0, 0xfa, 0x02, 0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3,
};

typedef void (*generated_function)(void);

__attribute__((noinline)) static void call_generated(generated_function function)
{
	function();
}

int main(int argc, char **argv)
{
	char path[64];
	unsigned char *code =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FILE *map;

	(void)argc;
	(void)argv;
	if (code == MAP_FAILED)
		return 1;
	memcpy(code + 64, busy_loop_code, sizeof(busy_loop_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx jitted_busy_loop[Generated]\n", (unsigned long)(code + 64),
		sizeof(busy_loop_code));
	fclose(map);
	for (;;)
		call_generated((generated_function)(code + 64));
}
