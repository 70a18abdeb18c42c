#include "synthesize.h"
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

/* Appends `name` (NUL-terminated, padded to 8 bytes) and the trailer after
 * the record's fixed part; returns the record's total size. */
static uint16_t finish_record(char *record, size_t fixed_size, const char *name, pid_t pid,
			      pid_t tid)
{
	size_t name_length = strnlen(name, PATH_MAX - 1);
	size_t name_size = (name_length + 1 + 7) & ~(size_t)7;
	struct sample_id_trailer trailer = {.pid = (uint32_t)pid, .tid = (uint32_t)tid};

	memset(record + fixed_size, 0, name_size);
	memcpy(record + fixed_size, name, name_length);
	memcpy(record + fixed_size + name_size, &trailer, sizeof(trailer));
	return (uint16_t)(fixed_size + name_size + sizeof(trailer));
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

/* One line of /proc/<pid>/maps:
 * "start-end perms offset major:minor inode   path", path optional. */
static int emit_mapping(pid_t pid, const char *line, bool file_data, record_sink sink,
			void *context)
{
	_Alignas(8) char buffer[RECORD_BUFFER_SIZE];
	struct perf_record_mmap2 *record = (struct perf_record_mmap2 *)buffer;
	uint64_t start, end, offset, inode;
	unsigned major, minor;
	char permissions[5];
	int path_start = 0;
	const char *path;
	bool executable;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n", &start,
		   &end, permissions, &offset, &major, &minor, &inode, &path_start) < 7)
		return 0;
	path = line + path_start;
	executable = permissions[2] == 'x';
	if (!executable && (!file_data || *path != '/'))
		return 0;
	if (*path == '\0')
		path = "//anon"; /* perf's name for anonymous memory */

	record->header.type = PERF_RECORD_MMAP2;
	record->header.misc = PERF_RECORD_MISC_USER | (executable ? 0 : PERF_RECORD_MISC_MMAP_DATA);
	record->pid = record->tid = (uint32_t)pid;
	record->address = start;
	record->length = end - start;
	record->page_offset = offset;
	record->major = major;
	record->minor = minor;
	record->inode = inode;
	record->inode_generation = 0;
	record->protection = (permissions[0] == 'r' ? PROT_READ : 0) |
			     (permissions[1] == 'w' ? PROT_WRITE : 0) |
			     (executable ? PROT_EXEC : 0);
	record->flags = permissions[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	record->header.size = finish_record(buffer, sizeof(*record), path, pid, pid);
	return sink(&record->header, context);
}

static int synthesize_mappings(pid_t pid, bool file_data, record_sink sink, void *context)
{
	char path[64], *line = NULL;
	size_t line_capacity = 0;
	ssize_t length;
	FILE *maps;
	int status = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "re");
	if (!maps)
		return 0; /* the process is gone: nothing to describe */
	while (status == 0 && (length = getline(&line, &line_capacity, maps)) > 0) {
		if (line[length - 1] == '\n')
			line[length - 1] = '\0';
		status = emit_mapping(pid, line, file_data, sink, context);
	}
	free(line);
	fclose(maps);
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
