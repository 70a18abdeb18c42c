/* Measures two DWARF unwinders on the same capture, for choosing one
 * (docs/BENCHMARKS.md):
 *
 *   unwinder_compare_tool PERF_DATA [PASSES]
 *
 * reads a capture recorded with user registers and stack copies (profcpu
 * --call-graph dwarf or hybrid, perf record --call-graph dwarf) and walks
 * every sample's user stack PASSES times (default 20) with
 *   - profcpu's walk (symbols/stack_walk.c: libdw's CFI rules), in DWARF
 *     mode and in hybrid mode without the kernel's callchain;
 *   - libunwind's remote unwinder (unw_init_remote, unw_step) over the same
 *     stack copy, with the binaries' .eh_frame_hdr tables.
 * It prints, for each, the time per sample (after a first pass that loads
 * every file), the frames found and the share of stacks that reach a thread
 * root. Files are read from this machine's file system. */
#include "address_space.h"
#include "elf_file.h"
#include "perf_data.h"
#include "resolver.h"
#include "stack_walk.h"

#include <asm/perf_regs.h>
#include <fcntl.h>
#include <libunwind.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAMES 512

/* libunwind's table search, exported but left out of its headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t space, unw_word_t ip,
					      unw_dyn_info_t *info, unw_proc_info_t *proc,
					      int need_unwind_info, void *arg);

/* One binary as libunwind needs it: its load bias and .eh_frame_hdr. */
struct binary {
	char *path;
	struct elf_file *file;
	uint8_t **segment_bytes; /* read on first use, so that no read is a syscall */
	uint64_t bias, header_address, fde_count;
	struct binary *next;
};

struct sample_copy {
	uint32_t pid;
	uint64_t registers[PERF_REG_X86_64_MAX];
	struct stack_copy stack;
};

struct tool {
	struct resolver *resolver;
	struct address_space *space; /* of the last pid: captures of one process */
	struct binary *binaries;
	const struct sample_copy *current;
};

static struct binary *binary_for(struct tool *tool, const struct mapping *mapping)
{
	struct binary *binary;
	GElf_Phdr header;
	uint64_t address;
	size_t count;

	for (binary = tool->binaries; binary; binary = binary->next)
		if (!strcmp(binary->path, mapping->path))
			return binary->file ? binary : NULL;
	binary = calloc(1, sizeof(*binary));
	binary->path = strdup(mapping->path);
	binary->next = tool->binaries;
	tool->binaries = binary;
	binary->file = elf_file_open(open(mapping->path, O_RDONLY | O_CLOEXEC));
	if (!binary->file || elf_getphdrnum(binary->file->elf, &count) != 0 ||
	    !load_segments_find_address(binary->file->segments, binary->file->segment_count,
					mapping->page_offset, &address)) {
		elf_file_close(binary->file);
		binary->file = NULL;
		return NULL;
	}
	binary->bias = mapping->start - address;
	binary->segment_bytes = calloc(binary->file->segment_count, sizeof(uint8_t *));
	for (size_t i = 0; i < count; i++) {
		unsigned char hdr[12];

		if (!gelf_getphdr(binary->file->elf, (int)i, &header) ||
		    header.p_type != PT_GNU_EH_FRAME ||
		    pread(binary->file->fd, hdr, sizeof(hdr), (off_t)header.p_offset) != 12 ||
		    hdr[0] != 1 || hdr[2] != 0x03 ||
		    hdr[3] != 0x3b) /* udata4 count, datarel sdata4 */
			continue;
		binary->header_address = binary->bias + header.p_vaddr;
		binary->fde_count =
		    (uint32_t)(hdr[8] | hdr[9] << 8 | hdr[10] << 16 | (uint32_t)hdr[11] << 24);
	}
	return binary;
}

static int find_proc_info(unw_addr_space_t space, unw_word_t ip, unw_proc_info_t *proc,
			  int need_unwind_info, void *arg)
{
	struct tool *tool = arg;
	const struct mapping *mapping = address_space_find(tool->space, ip);
	struct binary *binary = mapping ? binary_for(tool, mapping) : NULL;
	unw_dyn_info_t info = {0};

	if (!binary || !binary->header_address)
		return -UNW_ENOINFO;
	info.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	info.start_ip = mapping->start;
	info.end_ip = mapping->end;
	info.u.rti.segbase = binary->header_address;
	info.u.rti.table_data = binary->header_address + 12;
	info.u.rti.table_len = binary->fde_count * 8 / sizeof(unw_word_t);
	return UNW_OBJ(dwarf_search_unwind_table)(space, ip, &info, proc, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t space, unw_proc_info_t *proc, void *arg)
{
	(void)space, (void)proc, (void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t space, unw_word_t *address, void *arg)
{
	(void)space, (void)address, (void)arg;
	return -UNW_ENOINFO;
}

/* The bytes of segment `index` of `binary` at `address`, read into memory on
 * first use. False outside the segment. */
static bool read_segment(struct binary *binary, size_t index, uint64_t address, unw_word_t *value)
{
	const struct load_segment *segment = &binary->file->segments[index];
	uint64_t virtual_address = address - binary->bias;

	if (virtual_address < segment->address ||
	    virtual_address + 8 > segment->address + segment->file_size)
		return false;
	if (!binary->segment_bytes[index]) {
		binary->segment_bytes[index] = malloc(segment->file_size);
		if (pread(binary->file->fd, binary->segment_bytes[index], segment->file_size,
			  (off_t)segment->file_offset) != (ssize_t)segment->file_size)
			return false;
	}
	memcpy(value, binary->segment_bytes[index] + (virtual_address - segment->address), 8);
	return true;
}

/* The stack copy, else the bytes of a loaded binary (its .eh_frame): the
 * segment of the last read first, as reads come in runs. */
static int access_mem(unw_addr_space_t space, unw_word_t address, unw_word_t *value, int write,
		      void *arg)
{
	static struct binary *last_binary;
	static size_t last_segment;
	struct tool *tool = arg;
	uint64_t word;

	(void)space;
	if (write)
		return -UNW_EINVAL;
	if (stack_copy_read(&tool->current->stack, address, &word)) {
		*value = word;
		return 0;
	}
	if (last_binary && read_segment(last_binary, last_segment, address, value))
		return 0;
	for (struct binary *binary = tool->binaries; binary; binary = binary->next)
		for (size_t i = 0; binary->file && i < binary->file->segment_count; i++)
			if (read_segment(binary, i, address, value)) {
				last_binary = binary;
				last_segment = i;
				return 0;
			}
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t space, unw_regnum_t number, unw_word_t *value, int write,
		      void *arg)
{
	/* libunwind's x86-64 numbers -> perf's */
	static const int perf_register[] = {
	    PERF_REG_X86_AX,  PERF_REG_X86_DX,	PERF_REG_X86_CX,  PERF_REG_X86_BX,
	    PERF_REG_X86_SI,  PERF_REG_X86_DI,	PERF_REG_X86_BP,  PERF_REG_X86_SP,
	    PERF_REG_X86_R8,  PERF_REG_X86_R9,	PERF_REG_X86_R10, PERF_REG_X86_R11,
	    PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
	    PERF_REG_X86_IP,
	};
	struct tool *tool = arg;

	(void)space;
	if (write || number < 0 || number > UNW_X86_64_RIP)
		return -UNW_EBADREG;
	*value = tool->current->registers[perf_register[number]];
	return 0;
}

static int access_fpreg(unw_addr_space_t space, unw_regnum_t number, unw_fpreg_t *value, int write,
			void *arg)
{
	(void)space, (void)number, (void)value, (void)write, (void)arg;
	return -UNW_EINVAL;
}

static int resume(unw_addr_space_t space, unw_cursor_t *cursor, void *arg)
{
	(void)space, (void)cursor, (void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t space, unw_word_t address, char *name, size_t size,
			 unw_word_t *offset, void *arg)
{
	(void)space, (void)address, (void)name, (void)size, (void)offset, (void)arg;
	return -UNW_EINVAL;
}

static size_t walk_libunwind(struct tool *tool, unw_addr_space_t space, uint64_t *frames)
{
	unw_cursor_t cursor;
	size_t count = 0;

	if (unw_init_remote(&cursor, space, tool) != 0)
		return 0;
	do {
		unw_word_t ip;

		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0)
			break;
		frames[count++] = ip;
	} while (count < MAX_FRAMES && unw_step(&cursor) > 0);
	return count;
}

static void look_up_code(void *context, uint64_t address, struct code_at *code)
{
	struct tool *tool = context;

	resolver_code_at(tool->resolver, (pid_t)tool->current->pid, address, code);
}

static size_t walk_profcpu(struct tool *tool, enum stack_walk_mode mode, uint64_t *frames)
{
	const struct sample_copy *sample = tool->current;
	struct stack_walk_sample walk = {
	    .registers = {sample->registers[PERF_REG_X86_IP], sample->registers[PERF_REG_X86_SP],
			  sample->registers[PERF_REG_X86_BP], true},
	    .stack = sample->stack,
	};

	bool whole;

	return stack_walk(mode, &walk, look_up_code, tool, frames, MAX_FRAMES, &whole);
}

static bool is_thread_root(struct tool *tool, const uint64_t *frames, size_t count)
{
	static const char *const roots[] = {"start_thread", "__libc_start_call_main", "_start",
					    "clone3", "__clone3"};
	struct resolved_location location;

	if (count == 0)
		return false;
	resolver_resolve(tool->resolver, (pid_t)tool->current->pid, frames[count - 1], false,
			 count > 1, &location);
	for (size_t i = 0; i < sizeof(roots) / sizeof(*roots); i++)
		if (!strcmp(location.frames[location.frame_count - 1].function, roots[i]))
			return true;
	return false;
}

struct reading {
	struct perf_data_reader *reader;
	struct tool *tool;
	struct sample_copy *samples;
	size_t count, capacity;
};

static int keep(const struct perf_event_header *record, void *context)
{
	struct reading *reading = context;
	struct perf_sample sample;

	if (record->type == PERF_RECORD_MMAP2) {
		const struct perf_record_mmap2 *mmap = (const void *)record;

		if (mmap->protection & 4 /* PROT_EXEC */) {
			struct mapped_file file = {.path = mmap->filename};

			address_space_add(reading->tool->space, mmap->address, mmap->length,
					  mmap->page_offset, &file);
			resolver_add_mapping(reading->tool->resolver, (pid_t)mmap->pid,
					     mmap->address, mmap->length, mmap->page_offset, &file);
		}
		return 0;
	}
	if (record->type != PERF_RECORD_SAMPLE ||
	    !perf_data_reader_parse_sample(reading->reader, record, &sample) ||
	    !sample.user_registers || !sample.user_stack_size)
		return 0;
	if (reading->count == reading->capacity) {
		reading->capacity = reading->capacity ? 2 * reading->capacity : 1024;
		reading->samples =
		    realloc(reading->samples, reading->capacity * sizeof(*reading->samples));
	}
	struct sample_copy *copy = &reading->samples[reading->count++];
	uint8_t *bytes = malloc(sample.user_stack_size);

	memset(copy, 0, sizeof(*copy));
	copy->pid = sample.pid;
	for (unsigned i = 0; i < PERF_REG_X86_64_MAX; i++)
		perf_sample_user_register(&sample, i, &copy->registers[i]);
	memcpy(bytes, sample.user_stack, sample.user_stack_size);
	copy->stack =
	    (struct stack_copy){copy->registers[PERF_REG_X86_SP], bytes, sample.user_stack_size};
	return 0;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static unw_accessors_t accessors = {find_proc_info, put_unwind_info, get_dyn_info_list_addr,
					    access_mem,	    access_reg,	     access_fpreg,
					    resume,	    get_proc_name};
	struct resolver_config config = {.native = {.target_root_fd = -1}, .live_root_fd = -1};
	struct tool tool = {.resolver = resolver_new(&config), .space = address_space_new()};
	struct reading reading = {.tool = &tool};
	unw_addr_space_t space = unw_create_addr_space(&accessors, 0);
	int passes = argc > 2 ? atoi(argv[2]) : 20;
	uint64_t frames[MAX_FRAMES];
	char error[256];

	if (argc < 2 || !(reading.reader = perf_data_reader_open(argv[1], error, sizeof(error))))
		return fprintf(stderr, "usage: unwinder_compare_tool PERF_DATA [PASSES]\n"), 2;
	perf_data_reader_for_each(reading.reader, keep, &reading, error, sizeof(error));
	unw_set_caching_policy(space, UNW_CACHE_GLOBAL);
	static const char *const names[] = {"profcpu, dwarf mode (libdw CFI)",
					    "profcpu, hybrid walk over the copy alone",
					    "libunwind (CFI, then its own rbp fallback)"};

	for (int unwinder = 0; unwinder < 3; unwinder++) {
		size_t total_frames = 0, rooted = 0;
		double start = 0;

		for (int pass = 0; pass <= passes; pass++) {
			if (pass == 1)
				start = now();
			for (size_t i = 0; i < reading.count; i++) {
				size_t count;

				tool.current = &reading.samples[i];
				count = unwinder == 2 ? walk_libunwind(&tool, space, frames)
						      : walk_profcpu(&tool,
								     unwinder ? STACK_WALK_HYBRID
									      : STACK_WALK_DWARF,
								     frames);
				if (pass == 0) {
					total_frames += count;
					rooted += is_thread_root(&tool, frames, count);
				}
			}
		}
		printf("%s: %zu samples, %.2f us per sample, %.1f frames per sample, %.1f%% reach "
		       "a thread root\n",
		       names[unwinder], reading.count,
		       1e6 * (now() - start) / (double)(passes * reading.count),
		       (double)total_frames / (double)reading.count,
		       100.0 * (double)rooted / (double)reading.count);
	}
	return 0;
}
