/* An ELF binary or debug file: symbols, build-id, debug link, unwind tables
 * and inlined frames, looked up at a few offsets as a replay would. */
#include "fuzz_input.h"
#include "call_frame_info.h"
#include "native_symbols.h"

#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const no_dirs[] = {NULL};
	struct native_symbols_config config = {
	    .target_root_fd = -1, .symbol_dirs = no_dirs, .inline_frames = true};
	struct native_symbols *symbols = native_symbols_new(&config);
	struct native_frame frames[16];
	uint8_t stack[512] = {0};
	char path[32];
	int fd = fuzz_input_file(data, size, path);
	struct mapped_file file = {.path = path};

	memcpy(stack, data, size < sizeof(stack) ? size : sizeof(stack));
	for (uint64_t offset = 0; offset < 0x4000 && offset < size; offset += 0x400) {
		struct stack_copy copy = {.start = 0x1000, .bytes = stack, .size = sizeof(stack)};
		uint64_t file_address;
		struct call_frame_info *info;

		native_symbols_lookup(symbols, &file, offset, frames, 16);
		info = native_symbols_call_frame_info(symbols, &file, offset, &file_address);
		/* As x86-64 and as arm64 code: the file's machine gets a step. */
		for (int machine = FRAME_MACHINE_X86_64; info && machine <= FRAME_MACHINE_AARCH64;
		     machine++) {
			struct frame_registers registers = {.ip = offset,
							    .sp = 0x1000,
							    .bp = 0x1100,
							    .lr = 0x1200,
							    .lr_known = true,
							    .machine = (enum frame_machine)machine};

			call_frame_info_step(info, file_address, &copy, &registers);
		}
	}
	native_symbols_free(symbols);
	close(fd);
	return 0;
}
