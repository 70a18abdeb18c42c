#include "own_cfi.h"

#include "call_frame_info.h"

#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

const uint64_t words[8] = {0x1000, 0x1001, 0x1002, 0x1003, 0x1004, 0x1005, 0x1006, 0x1007};

static uint64_t load_bias;

static int take_main_program_bias(struct dl_phdr_info *info, size_t size, void *unused)
{
	(void)size;
	(void)unused;
	load_bias = info->dlpi_addr; /* the first object is the program */
	return 1;
}

uint64_t file_address(const char *code)
{
	dl_iterate_phdr(take_main_program_bias, NULL);
	return (uint64_t)(uintptr_t)code - load_bias;
}

int open_own_cfi(void **state)
{
	struct elf_file *file = elf_file_open(open("/proc/self/exe", O_RDONLY | O_CLOEXEC));

	assert_non_null(file);
	*state = call_frame_info_open(file);
	assert_non_null(*state);
	return 0;
}

int close_own_cfi(void **state)
{
	call_frame_info_free(*state);
	return 0;
}
