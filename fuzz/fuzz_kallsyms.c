/* A capture's copy of its kernel symbols (kernel_symbols_copy.h) on any
 * bytes: its header, then lookups at addresses taken from the input, the
 * lines used copied out; the copy must name those addresses the same. */
#include "fuzz_input.h"
#include "kernel_symbols_copy.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { LOOKUPS = 16 };

static uint64_t address_at(const uint8_t *data, size_t size, size_t i)
{
	uint64_t address = 0xffffffff81000000 + i * 0x100;

	if (size >= 8)
		memcpy(&address, data + (i * 8) % (size - 7), sizeof(address));
	return address;
}

/* This boot's id: a copy naming it would be left for /proc/kallsyms, the
 * kernel's listing, not the parser under test (and slow). */
static bool names_this_boot(const uint8_t *data, size_t size)
{
	static char boot_id[64];
	FILE *file;

	if (!boot_id[0] && (file = fopen("/proc/sys/kernel/random/boot_id", "re"))) {
		if (!fgets(boot_id, sizeof(boot_id), file))
			boot_id[0] = '\0';
		boot_id[strcspn(boot_id, "\n")] = '\0';
		fclose(file);
	}
	return boot_id[0] && memmem(data, size, boot_id, strlen(boot_id));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[32], *copy = NULL;
	size_t copy_size = 0;
	struct kernel_symbols *symbols, *copied;
	const char *names[LOOKUPS];
	uint64_t offsets[LOOKUPS];
	bool found[LOOKUPS];
	int fd;

	if (names_this_boot(data, size))
		return 0;
	fd = fuzz_input_file(data, size, path);
	symbols = kernel_symbols_for_capture(path, false, NULL);
	close(fd);
	if (!symbols)
		return 0;
	kernel_symbols_copy_to(symbols, open_memstream(&copy, &copy_size), "# complete\n");
	for (size_t i = 0; i < LOOKUPS; i++) {
		found[i] =
		    kernel_symbols_find(symbols, address_at(data, size, i), &names[i], &offsets[i]);
		if (found[i] && !(names[i] = strdup(names[i])))
			abort();
	}
	kernel_symbols_end_copy(symbols);
	kernel_symbols_free(symbols);
	copied = copy_size ? kernel_symbols_open(fmemopen(copy, copy_size, "r"), false) : NULL;
	for (size_t i = 0; i < LOOKUPS; i++) {
		const char *name;
		uint64_t offset;

		if (found[i] &&
		    (!copied ||
		     !kernel_symbols_find(copied, address_at(data, size, i), &name, &offset) ||
		     strcmp(name, names[i]) || offset != offsets[i]))
			abort(); /* the copy names it otherwise */
		if (found[i])
			free((char *)names[i]);
	}
	kernel_symbols_free(copied);
	free(copy);
	return 0;
}
