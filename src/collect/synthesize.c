#include "synthesize.h"
#include "copied_images.h"
#include "target_process.h"

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Room for the longest record built here: fields, a PATH_MAX name, trailer. */
#define RECORD_BUFFER_SIZE 4608

/* The sample_id trailer for PROFCPU_SAMPLE_TYPE: TID, TIME, CPU. */
struct sample_id_trailer {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, reserved;
};

/* The bytes that end a record: its sample_id trailer. */
struct trailer {
	const void *bytes;
	size_t size;
};

/* Appends `name` (NUL-terminated, padded to 8 bytes) and `trailer` after
 * the record's fixed part; returns the record's total size. */
static uint16_t finish_record_with(char *record, size_t fixed_size, const char *name,
				   struct trailer trailer)
{
	size_t name_length = strnlen(name, PATH_MAX - 1);
	size_t name_size = (name_length + 1 + 7) & ~(size_t)7;

	memset(record + fixed_size, 0, name_size);
	memcpy(record + fixed_size, name, name_length);
	memcpy(record + fixed_size + name_size, trailer.bytes, trailer.size);
	return (uint16_t)(fixed_size + name_size + trailer.size);
}

/* finish_record_with() this capture's trailer for `pid` and `tid`, time 0. */
static uint16_t finish_record(char *record, size_t fixed_size, const char *name, pid_t pid,
			      pid_t tid)
{
	struct sample_id_trailer trailer = {.pid = (uint32_t)pid, .tid = (uint32_t)tid};

	return finish_record_with(record, fixed_size, name,
				  (struct trailer){&trailer, sizeof(trailer)});
}

static int emit_comm(pid_t pid, pid_t tid, const char *comm, record_sink sink, void *context)
{
	_Alignas(8) char buffer[RECORD_BUFFER_SIZE];
	struct perf_record_comm *record = (struct perf_record_comm *)buffer;

	record->header.type = PERF_RECORD_COMM;
	record->header.misc = 0;
	record->pid = (uint32_t)pid;
	record->tid = (uint32_t)tid;
	record->header.size = finish_record(buffer, sizeof(*record), comm, pid, tid);
	return sink(&record->header, context);
}

static int synthesize_threads(pid_t pid, record_sink sink, void *context)
{
	char path[64], comm[32];
	pid_t *tids;
	size_t count = target_process_threads(pid, &tids);
	int status = 0;

	for (size_t i = 0; i < count && status == 0; i++) {
		FILE *file;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tids[i]);
		file = fopen(path, "re");
		if (!file)
			continue; /* the thread has exited */
		if (!fgets(comm, sizeof(comm), file))
			comm[0] = '\0';
		fclose(file);
		comm[strcspn(comm, "\n")] = '\0';
		status = emit_comm(pid, tids[i], comm, sink, context);
	}
	free(tids);
	return status;
}

static int emit_mmap2(pid_t pid, const struct process_mapping *mapping, bool executable,
		      const struct trailer *trailer, record_sink sink, void *context)
{
	_Alignas(8) char buffer[RECORD_BUFFER_SIZE];
	struct perf_record_mmap2 *record = (struct perf_record_mmap2 *)buffer;
	const char *permissions = mapping->permissions;
	const char *name = *mapping->path ? mapping->path : "//anon"; /* perf's name */

	record->header.type = PERF_RECORD_MMAP2;
	record->header.misc = PERF_RECORD_MISC_USER | (executable ? 0 : PERF_RECORD_MISC_MMAP_DATA);
	record->pid = record->tid = (uint32_t)pid;
	record->address = mapping->start;
	record->length = mapping->end - mapping->start;
	record->page_offset = mapping->offset;
	record->major = mapping->major;
	record->minor = mapping->minor;
	record->inode = mapping->inode;
	record->inode_generation = 0;
	record->protection = (permissions[0] == 'r' ? PROT_READ : 0) |
			     (permissions[1] == 'w' ? PROT_WRITE : 0) |
			     (executable ? PROT_EXEC : 0);
	record->flags = permissions[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	record->header.size = trailer ? finish_record_with(buffer, sizeof(*record), name, *trailer)
				      : finish_record(buffer, sizeof(*record), name, pid, pid);
	return sink(&record->header, context);
}

/* What synthesize_mappings() passes to each mapping. */
struct mappings_sink {
	pid_t pid;
	bool file_data;
	record_sink sink;
	void *context;
};

static int emit_mapping(const struct process_mapping *mapping, void *context)
{
	const struct mappings_sink *out = context;
	bool executable = mapping->permissions[2] == 'x';

	if (!executable && (!out->file_data || *mapping->path != '/'))
		return 0;
	return emit_mmap2(out->pid, mapping, executable, NULL, out->sink, out->context);
}

static int synthesize_mappings(pid_t pid, bool file_data, record_sink sink, void *context)
{
	struct mappings_sink out = {pid, file_data, sink, context};

	return target_process_for_each_mapping(pid, emit_mapping, &out);
}

int synthesize_copied_image(pid_t pid, uint64_t start, uint64_t end, const void *trailer,
			    size_t trailer_size, struct copied_images *images, record_sink sink,
			    void *context)
{
	struct copied_image_part parts[COPIED_IMAGE_MAX_PARTS];
	struct copied_image_file file;
	struct trailer kernel_trailer = {trailer, trailer_size};
	size_t count = copied_images_parts(images, pid, start, end, parts, &file);
	int status = 0;

	for (size_t i = 0; i < count && status == 0; i++) {
		struct process_mapping part = {
		    .start = parts[i].start,
		    .end = parts[i].end,
		    .offset = parts[i].file_offset,
		    .inode = file.inode,
		    .major = file.major,
		    .minor = file.minor,
		    .permissions = "r-xp",
		    .path = file.path,
		};

		status = emit_mmap2(pid, &part, true, &kernel_trailer, sink, context);
	}
	return status;
}

int synthesize_process(pid_t pid, bool file_data, record_sink sink, void *context)
{
	int status = synthesize_threads(pid, sink, context);

	return status ? status : synthesize_mappings(pid, file_data, sink, context);
}

int synthesize_every_process(bool file_data, record_sink sink, void *context)
{
	DIR *proc = opendir("/proc");
	struct dirent *entry;
	int status = 0;

	while (proc && status == 0 && (entry = readdir(proc))) {
		char *end;
		long pid = strtol(entry->d_name, &end, 10);

		if (pid > 0 && *end == '\0')
			status = synthesize_process((pid_t)pid, file_data, sink, context);
	}
	if (proc)
		closedir(proc);
	return status;
}

/* The address of the kernel's _text, or 0 when kallsyms hides addresses. */
static uint64_t kernel_text_address(void)
{
	char line[512], name[256], type;
	uint64_t address, found = 0;
	FILE *kallsyms = fopen("/proc/kallsyms", "re");

	if (!kallsyms)
		return 0;
	while (fgets(line, sizeof(line), kallsyms)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &address, &type, name) == 3 &&
		    !strcmp(name, "_text")) {
			found = address;
			break;
		}
	}
	fclose(kallsyms);
	return found;
}

int synthesize_kernel_mmap(record_sink sink, void *context)
{
	_Alignas(8) char buffer[RECORD_BUFFER_SIZE];
	struct perf_record_mmap *record = (struct perf_record_mmap *)buffer;
	uint64_t text = kernel_text_address();

	if (!text)
		return 0;
	/* As perf writes it: pid -1 is the host kernel, pgoff its _text. */
	record->header.type = PERF_RECORD_MMAP;
	record->header.misc = PERF_RECORD_MISC_KERNEL;
	record->pid = UINT32_MAX;
	record->tid = 0;
	record->address = text;
	record->length = UINT64_MAX - text;
	record->page_offset = text;
	record->header.size =
	    finish_record(buffer, sizeof(*record), "[kernel.kallsyms]_text", -1, 0);
	return sink(&record->header, context);
}
