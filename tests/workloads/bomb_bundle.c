/* A hostile neighbour: a process whose executable is a crafted .NET
 * single-file bundle and that maps, again and again, anonymous executable
 * memory starting with a PE header ("MZ"), as the runtime maps the copy of
 * an assembly it inflated. A profiler that describes such copies reads the
 * bundle's compressed assemblies for their headers (copied_images.h).
 *
 * The bundle: this program's own file, with a marker in its data naming
 * the manifest's offset (as the .NET host's), then COMPRESSED_BYTES of
 * empty stored deflate blocks (5 bytes each, inflating to nothing), then a
 * manifest of ENTRIES compressed assemblies, every one of them stored in all
 * of those bytes. Inflating 4 KiB of each, unbounded, reads the whole
 * region 65,536 times (512 GiB). No copy matches any of them, so each new
 * mapping sends the reader back to the files.
 *
 * Usage: workload_bomb_bundle [DIR]   runs until killed (DIR: where the
 * bundle is written, default /tmp; it execs it and removes its file, which
 * /proc/PID/exe still reads). Each mapping is new every 20 ms; between
 * them it spins on the CPU in spin(). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ENTRIES		 65536
#define COMPRESSED_BYTES (8 << 20)
#define ALIGNMENT	 0x10000
#define IMAGE_SIZE	 0x20000

/* The host's bundle marker: the manifest's offset (0: not a bundle), then
 * SHA-256 of ".net core bundle\n". In .data, a writable segment, where
 * the host keeps it. */
static volatile uint8_t marker[40] = {
    0,	  0,	0,    0,    0,	  0,	0,    0,    0x8b, 0x12, 0x02, 0xb9, 0x6a, 0x61,
    0x20, 0x38, 0x72, 0x7b, 0x93, 0x02, 0x14, 0xd7, 0xa0, 0x32, 0x13, 0xf5, 0xb9, 0xe6,
    0xef, 0xae, 0x33, 0x18, 0xee, 0x3b, 0x2d, 0xce, 0x24, 0xb3, 0x6a, 0xae,
};

static void die(const char *what)
{
	fprintf(stderr, "workload_bomb_bundle: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void write_all(int fd, const void *bytes, size_t length)
{
	while (length) {
		ssize_t written = write(fd, bytes, length);

		if (written <= 0)
			die("write");
		bytes = (const uint8_t *)bytes + written;
		length -= (size_t)written;
	}
}

static void put(uint8_t **at, uint64_t value, size_t size)
{
	for (size_t i = 0; i < size; i++)
		*(*at)++ = (uint8_t)(value >> (8 * i));
}

/* Writes the bundle to `path`: this executable, the empty blocks, the
 * manifest; the marker patched to name the manifest. */
static void write_bundle(const char *path)
{
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), out;
	struct stat status;
	uint8_t *self, *manifest, *at, *found = NULL;
	uint64_t blocks_offset, manifest_offset;

	if (in < 0 || fstat(in, &status) != 0)
		die("/proc/self/exe");
	self = malloc((size_t)status.st_size);
	if (!self || read(in, self, (size_t)status.st_size) != status.st_size)
		die("reading /proc/self/exe");
	close(in);
	blocks_offset = (uint64_t)status.st_size;
	manifest_offset = blocks_offset + COMPRESSED_BYTES;
	/* The marker in the file: its signature after 8 bytes of zeros. */
	for (uint8_t *c = self; c + sizeof(marker) <= self + status.st_size && !found; c++)
		if (!memcmp(c, (const void *)marker, sizeof(marker)))
			found = c;
	if (!found) {
		fprintf(stderr, "workload_bomb_bundle: no bundle marker in its own file\n");
		exit(1);
	}
	memcpy(found, &manifest_offset, 8);
	if ((out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700)) < 0)
		die(path);
	write_all(out, self, (size_t)status.st_size);
	free(self);
	/* Stored blocks, not final, of length 0: 00, then LEN 0000, NLEN ffff. */
	if (!(at = malloc(COMPRESSED_BYTES)))
		die("malloc");
	for (size_t i = 0; i + 5 <= COMPRESSED_BYTES; i += 5)
		memcpy(at + i, "\0\0\0\xff\xff", 5);
	memset(at + COMPRESSED_BYTES / 5 * 5, 0, COMPRESSED_BYTES % 5);
	write_all(out, at, COMPRESSED_BYTES);
	free(at);
	/* Version 6: its header, then each file's offset, size, compressed
	 * size, type (1: an assembly) and path. */
	manifest = at = malloc(64 + (size_t)ENTRIES * 40);
	if (!manifest)
		die("malloc");
	put(&at, 6, 4);
	put(&at, 0, 4);
	put(&at, ENTRIES, 4);
	put(&at, 4, 1);
	memcpy(at, "bomb", 4);
	at += 4;
	for (int i = 0; i < 5; i++)
		put(&at, 0, 8);
	for (int i = 0; i < ENTRIES; i++) {
		char name[16];
		int length = snprintf(name, sizeof(name), "a%05d.dll", i);

		put(&at, blocks_offset, 8);
		put(&at, 1 << 20, 8);
		put(&at, COMPRESSED_BYTES, 8);
		put(&at, 1, 1);
		put(&at, (uint64_t)length, 1);
		memcpy(at, name, (size_t)length);
		at += length;
	}
	write_all(out, manifest, (size_t)(at - manifest));
	free(manifest);
	if (close(out) != 0)
		die(path);
}

/* A PE32+ header of one section covering the whole mapping, its build
 * (the COFF timestamp) `build`. */
static void write_pe_headers(uint8_t *image, uint32_t build)
{
	uint8_t *at;

	memset(image, 0, 4096);
	memcpy(image, "MZ", 2);
	image[60] = 64;
	at = image + 64;
	memcpy(at, "PE\0\0", 4);
	at += 4;
	put(&at, 0x8664, 2); /* machine */
	put(&at, 1, 2);	     /* sections */
	put(&at, build, 4);
	put(&at, 0, 8);
	put(&at, 112, 2); /* optional header size */
	put(&at, 0x22, 2);
	put(&at, 0x20b, 2); /* PE32+ */
	at = image + 64 + 24 + 108;
	put(&at, 0, 4); /* no data directories */
	at = image + 64 + 24 + 112;
	memcpy(at, ".text", 5);
	at += 8;
	put(&at, IMAGE_SIZE, 4); /* virtual size */
	put(&at, 0x1000, 4);	 /* virtual address */
	put(&at, IMAGE_SIZE, 4); /* raw size */
	put(&at, 0x400, 4);	 /* raw offset */
}

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(double seconds)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 <
		 seconds);
}

/* Maps a new copy-like image every 20 ms, forever. */
static void armed(void)
{
	for (uint32_t build = 1;; build++) {
		/* Twice the image, for a 64 KiB boundary inside. */
		uint8_t *area = mmap(NULL, IMAGE_SIZE + ALIGNMENT, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint8_t *image;

		if (area == MAP_FAILED)
			die("mmap");
		image =
		    (uint8_t *)(((uintptr_t)area + ALIGNMENT - 1) & ~(uintptr_t)(ALIGNMENT - 1));
		write_pe_headers(image, build);
		/* Executable now: the kernel tells a profiler of this mapping. */
		if (mprotect(image, IMAGE_SIZE, PROT_READ | PROT_EXEC) != 0)
			die("mprotect");
		spin(0.02);
		munmap(area, IMAGE_SIZE + ALIGNMENT);
	}
}

int main(int argc, char **argv)
{
	char path[4096];

	if (argc == 3 && !strcmp(argv[1], "--armed")) {
		unlink(argv[2]); /* /proc/PID/exe still reads it */
		armed();
	}
	snprintf(path, sizeof(path), "%s/profcpu-bomb-bundle-%d", argc > 1 ? argv[1] : "/tmp",
		 (int)getpid());
	write_bundle(path);
	execl(path, path, "--armed", path, (char *)NULL);
	die("exec");
}
