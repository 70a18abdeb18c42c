/* Drives the native symbol library from the command line, for the
 * end-to-end tests and the benchmark:
 *
 *     native_symbols_tool [OPTIONS] PATH OFFSET [PATH OFFSET ...]
 *     native_symbols_tool [OPTIONS] --kernel ADDRESS [ADDRESS ...]
 *     native_symbols_tool [OPTIONS] < "PATH OFFSET" lines
 *
 * OFFSET is a file offset (hex), as a mapping gives it. For each pair it
 * prints "PATH OFFSET FRAME; FRAME..." with FRAME "name+0xoffset" (an inlined
 * frame ends in " (inlined)"), or "??" when nothing names the address. The
 * library's log goes to stderr.
 *
 * Options:
 *   --root DIR            resolve PATHs inside DIR as a target root
 *   --symbols DIR         a symbol folder (repeatable)
 *   --symbol-server URL   download debug files by build-id
 *   --cache DIR           where downloaded debug files are kept
 *   --inline              add inlined frames from DWARF
 *   --lines               end each frame with " at FILE:LINE" when DWARF
 *                         gives its source line
 *   --quiet               print no names; say how many addresses were looked
 *                         up per second, on stderr (for the benchmark) */
#include "native_symbols.h"
#include "target_root.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAX_FRAMES = 16, MAX_DIRS = 16 };

static bool show_lines;

static void print_frames(const struct native_frame *frames, size_t count)
{
	if (count == 0)
		fputs(" ??", stdout);
	for (size_t i = 0; i < count; i++) {
		printf("%s %s+0x%" PRIx64 "%s", i ? ";" : "",
		       frames[i].function ? frames[i].function : "??", frames[i].offset,
		       frames[i].inlined ? " (inlined)" : "");
		if (show_lines && frames[i].line.file)
			printf(" at %s:%" PRIu32, frames[i].line.file, frames[i].line.number);
	}
	putchar('\n');
}

static double seconds_now(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

struct run {
	struct native_symbols *symbols;
	bool kernel, quiet;
	size_t lookups, named;
};

static void look_up(struct run *run, const char *path, const char *value_text)
{
	struct native_frame frames[MAX_FRAMES];
	uint64_t value = strtoull(value_text, NULL, 16);
	size_t count;

	if (run->kernel)
		count = native_symbols_lookup_kernel(run->symbols, value, frames);
	else
		count = native_symbols_lookup(run->symbols, &(struct mapped_file){.path = path},
					      value, frames, MAX_FRAMES);
	run->lookups++;
	run->named += count > 0;
	if (run->quiet)
		return;
	if (run->kernel)
		printf("kernel %" PRIx64 ":", value);
	else
		printf("%s %" PRIx64 ":", path, value);
	print_frames(frames, count);
}

static void look_up_lines(struct run *run, FILE *in)
{
	char line[PATH_MAX + 64], path[PATH_MAX], value[32];

	while (fgets(line, sizeof(line), in))
		if (sscanf(line, "%4095s %31s", path, value) == 2)
			look_up(run, path, value);
}

int main(int argc, char **argv)
{
	const char *dirs[MAX_DIRS + 1] = {NULL};
	struct native_symbols_config config = {
	    .target_root_fd = -1, .symbol_dirs = dirs, .log = stderr};
	struct run run = {.kernel = false};
	size_t dir_count = 0;
	double start;
	int i;

	for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		const char *option = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(option, "--inline") == 0) {
			config.inline_frames = true;
		} else if (strcmp(option, "--lines") == 0) {
			show_lines = true;
		} else if (strcmp(option, "--kernel") == 0) {
			run.kernel = true;
		} else if (strcmp(option, "--quiet") == 0) {
			run.quiet = true;
		} else if (!value) {
			fprintf(stderr, "%s needs a value\n", option);
			return 2;
		} else if (strcmp(option, "--root") == 0) {
			config.target_root_fd = open(value, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (config.target_root_fd < 0) {
				perror(value);
				return 2;
			}
			i++;
		} else if (strcmp(option, "--symbols") == 0 && dir_count < MAX_DIRS) {
			dirs[dir_count++] = argv[++i];
		} else if (strcmp(option, "--symbol-server") == 0) {
			config.symbol_server = argv[++i];
		} else if (strcmp(option, "--cache") == 0) {
			config.cache_dir = argv[++i];
		} else {
			fprintf(stderr, "unknown option %s\n", option);
			return 2;
		}
	}
	run.symbols = native_symbols_new(&config);
	if (!run.symbols)
		return 1;
	start = seconds_now();
	if (i == argc && !run.kernel)
		look_up_lines(&run, stdin);
	for (; i + !run.kernel < argc; i += run.kernel ? 1 : 2)
		look_up(&run, argv[i], argv[run.kernel ? i : i + 1]);
	if (run.quiet)
		fprintf(stderr, "%zu lookups, %zu named, %.0f addresses/s\n", run.lookups,
			run.named, (double)run.lookups / (seconds_now() - start));
	native_symbols_free(run.symbols);
	if (config.target_root_fd >= 0)
		close(config.target_root_fd);
	return 0;
}
