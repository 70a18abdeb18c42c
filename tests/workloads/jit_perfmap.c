/* A tiny JIT: copies machine code for a busy loop into anonymous executable
 * memory at run time and names it in /tmp/perf-<pid>.map, as .NET and node
 * do. The generated code keeps a frame pointer, so its caller is seen.
 *
 * On SIGUSR1 it writes another map that names the same code
 * jitted_busy_loop_v2 and renames it over the first (a runtime replacing
 * its map), then prints "replaced at SECONDS" (CLOCK_MONOTONIC). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
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

static volatile sig_atomic_t replace_requested;

static void request_replace(int signal)
{
	(void)signal;
	replace_requested = 1;
}

static int write_map(const char *path, const unsigned char *code, const char *name)
{
	FILE *map = fopen(path, "w");

	if (!map)
		return -1;
	fprintf(map, "%lx %zx %s[Generated]\n", (unsigned long)code, sizeof(busy_loop_code), name);
	return fclose(map);
}

/* The second map is written beside the first and renamed over it. */
static void replace_map(const char *path, const unsigned char *code)
{
	char temporary[80];
	struct timespec now;

	snprintf(temporary, sizeof(temporary), "%s.new", path);
	if (write_map(temporary, code, "jitted_busy_loop_v2") != 0 || rename(temporary, path) != 0)
		exit(1);
	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("replaced at %lld.%09ld\n", (long long)now.tv_sec, now.tv_nsec);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	char path[64];
	unsigned char *code =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)argc;
	(void)argv;
	if (code == MAP_FAILED)
		return 1;
	memcpy(code + 64, busy_loop_code, sizeof(busy_loop_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	signal(SIGUSR1, request_replace);
	if (write_map(path, code + 64, "jitted_busy_loop") != 0)
		return 1;
	for (;;) {
		call_generated((generated_function)(code + 64));
		if (replace_requested) {
			replace_requested = 0;
			replace_map(path, code + 64);
		}
	}
}
