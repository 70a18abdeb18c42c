/* Generated code between native functions without frame pointers, as in a
 * .NET process: native code (built -fomit-frame-pointer) calls a JIT
 * function that keeps a frame pointer, which calls back into a native
 * function without one, then into a JIT leaf that keeps no frame:
 *
 *   worker -> run_generated -> jitted_caller -> native_spin    (native, no frame)
 *                                            -> jitted_leaf    (JIT, no frame)
 *
 * on two threads (main and one more). Both generated functions are named in
 * /tmp/perf-<pid>.map. CFI alone stops at jitted_caller (it has none); frame
 * pointers alone skip jitted_caller under native_spin and under jitted_leaf,
 * whose rbp is still jitted_caller's. Runs for argv[1] seconds (default:
 * until killed). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* jitted_caller(native, leaf): push rbp; mov rbp,rsp; push r12; push r13;
 * mov r12,rsi; call rdi; call r12; pop r13; pop r12; pop rbp; ret */
static const unsigned char caller_code[] = {
    0x55, 0x48, 0x89, 0xe5, 0x41, 0x54, 0x41, 0x55, 0x49, 0x89, 0xf4,
    0xff, 0xd7, 0x41, 0xff, 0xd4, 0x41, 0x5d, 0x41, 0x5c, 0x5d, 0xc3,
};

/* jitted_leaf: mov ecx,20000000; l: dec ecx; jnz l; ret (no frame) */
static const unsigned char leaf_code[] = {
    0xb9, 0x00, 0x2d, 0x31, 0x01, 0xff, 0xc9, 0x75, 0xfc, 0xc3,
};

typedef void (*native_function)(void);
typedef void (*generated_caller)(native_function native, void (*leaf)(void));

static generated_caller jitted_caller;
static void (*jitted_leaf)(void);
static double seconds = 0;

static volatile unsigned long sink;

__attribute__((noipa)) void native_spin(void)
{
	unsigned long hash = 1;

	for (unsigned long i = 0; i < 20000000; i++)
		hash = hash * 6364136223846793005UL + i;
	sink = hash;
}

__attribute__((noipa)) void run_generated(void)
{
	jitted_caller(native_spin, jitted_leaf);
	__asm__ volatile("" ::: "memory"); /* keeps the call from being a jump */
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noipa)) void *worker(void *unused)
{
	double end = now() + seconds;

	(void)unused;
	while (seconds <= 0 || now() < end)
		run_generated();
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned char *code =
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t thread;
	char path[64];
	FILE *map;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code + 64, caller_code, sizeof(caller_code));
	memcpy(code + 128, leaf_code, sizeof(leaf_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;
	jitted_caller = (generated_caller)(void *)(code + 64);
	jitted_leaf = (void (*)(void))(void *)(code + 128);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx jitted_caller[Generated]\n%lx %zx jitted_leaf[Generated]\n",
		(unsigned long)(code + 64), sizeof(caller_code), (unsigned long)(code + 128),
		sizeof(leaf_code));
	fclose(map);
	if (pthread_create(&thread, NULL, worker, NULL) != 0)
		return 1;
	worker(NULL);
	pthread_join(thread, NULL);
	unlink(path);
	return 0;
}
