#include "copied_images.h"
#include "bundle_manifest.h"
#include "pe_image.h"
#include "target_process.h"
#include "util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* The runtime places a copy at a 64 KiB boundary (its allocation
 * granularity). Its code starts within MAX_STEPS_BELOW of that: the images
 * .NET ships have their code at RVA 0x10000. */
#define ALIGNMENT	0x10000
#define MAX_STEPS_BELOW 16
#define HEADER_BYTES	4096 /* an image's headers: a page */
#define MAX_FILES	1024 /* .dll files of one process whose headers are read */
#define MAX_COMPRESSED	1024 /* compressed assemblies of a bundle tried (a real one has ~200) */

/* The sampler waits while a process's files are read: the readings of one
 * process may take PROCESS_READ_TIME of each BUDGET_PERIOD, those of all
 * processes ALL_READ_TIME, and a reading stops where its process's time is
 * spent, to go on at the next. Times are the reading thread's CPU time, so
 * that a loaded machine does not cut a .NET app's first reading (a few
 * milliseconds); what a reading waits for is bounded in bytes: a page a
 * .dll, the manifest, a few pages each compressed assembly
 * (bundle_entry_read()). */
#define BUDGET_PERIOD	  1000000000ull /* ns of wall time */
#define PROCESS_READ_TIME 100000000ull
#define ALL_READ_TIME	  250000000ull
#define BUDGET_PROCESSES  64 /* those beyond share one budget */

struct image_file {
	struct copied_image_file file;
	uint8_t headers[HEADER_BYTES];
	struct pe_image image; /* parsed from `headers` */
};

/* find_executable(): the executable's inode, and the path the process maps
 * it at. */
struct executable {
	dev_t device;
	ino_t inode;
	char path[PATH_MAX];
};

/* The manifest of the process's executable, when a single-file bundle,
 * and how far its compressed assemblies are read: a reading whose time ran
 * out goes on from there at the next. */
struct bundle_state {
	struct executable executable; /* device and inode 0: none read */
	struct bundle_manifest manifest;
	size_t next, tried;
};

/* A process's reading time spent in the current period. */
struct reading_budget {
	pid_t pid;
	uint64_t spent;
};

struct copied_images {
	pid_t pid; /* whose files are read; 0: none yet */
	struct bundle_state bundle;
	struct image_file **files;
	size_t count, capacity;
	uint64_t period_start, spent; /* all processes' time in the period */
	struct reading_budget budgets[BUDGET_PROCESSES + 1];
	size_t budget_count;
	uint64_t deadline; /* the reading under way stops here */
};

bool copied_images_may_hold(const char *path)
{
	return !strcmp(path, "//anon") || !strncmp(path, "[anon:", 6) ||
	       !strncmp(path, "/memfd:doublemapper", 19);
}

struct copied_images *copied_images_new(void)
{
	return xcalloc(1, sizeof(struct copied_images));
}

static void forget_bundle(struct bundle_state *bundle)
{
	bundle_manifest_free(&bundle->manifest);
	*bundle = (struct bundle_state){0};
}

static void forget_files(struct copied_images *images)
{
	for (size_t i = 0; i < images->count; i++)
		free(images->files[i]);
	free(images->files);
	images->files = NULL;
	images->count = images->capacity = 0;
	images->pid = 0;
	forget_bundle(&images->bundle);
}

/* The budget of `pid` in the period now, or NULL when its time (or all
 * processes') is spent. */
static struct reading_budget *budget_of(struct copied_images *images, pid_t pid, uint64_t now)
{
	struct reading_budget *budget = NULL;

	if (now - images->period_start >= BUDGET_PERIOD) {
		images->period_start = now;
		images->spent = 0;
		images->budget_count = 0;
	}
	for (size_t i = 0; i < images->budget_count && !budget; i++)
		if (images->budgets[i].pid == pid)
			budget = &images->budgets[i];
	if (!budget) {
		size_t slot = images->budget_count < BUDGET_PROCESSES ? images->budget_count
								      : BUDGET_PROCESSES;

		budget = &images->budgets[slot];
		if (slot == images->budget_count) {
			*budget = (struct reading_budget){slot < BUDGET_PROCESSES ? pid : 0, 0};
			images->budget_count++;
		}
	}
	if (budget->spent >= PROCESS_READ_TIME || images->spent >= ALL_READ_TIME)
		return NULL;
	return budget;
}

static bool out_of_time(const struct copied_images *images)
{
	return clock_nanoseconds(CLOCK_THREAD_CPUTIME_ID) >= images->deadline;
}

void copied_images_free(struct copied_images *images)
{
	if (!images)
		return;
	forget_files(images);
	free(images);
}

static size_t read_memory(pid_t pid, uint64_t address, void *buffer, size_t length)
{
	struct iovec local = {buffer, length}, remote = {(void *)(uintptr_t)address, length};
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return got < 0 ? 0 : (size_t)got;
}

/* Reads the headers at `address` into `buffer` and parses them. */
static bool read_headers(pid_t pid, uint64_t address, uint64_t length, uint8_t *buffer,
			 struct pe_image *image)
{
	size_t got =
	    read_memory(pid, address, buffer, length < HEADER_BYTES ? length : HEADER_BYTES);

	return got > 0 && pe_image_parse(image, buffer, got, NULL);
}

static bool is_dll(const char *path)
{
	size_t length = strlen(path);

	return length > 4 && !strcasecmp(path + length - 4, ".dll");
}

static bool known_file(const struct copied_images *images, uint32_t major, uint32_t minor,
		       uint64_t inode)
{
	for (size_t i = 0; i < images->count; i++) {
		const struct copied_image_file *file = &images->files[i]->file;

		if (file->inode == inode && file->major == major && file->minor == minor)
			return true;
	}
	return false;
}

static void add_file(struct copied_images *images, struct image_file *file)
{
	grow_array((void **)&images->files, &images->capacity, images->count + 1,
		   sizeof(*images->files));
	images->files[images->count++] = file;
}

/* read_files(): keeps the headers of `mapping` when it maps a .dll from
 * its start, read through that mapping. */
static int read_file(const struct process_mapping *mapping, void *context)
{
	struct copied_images *images = context;
	struct image_file *file;

	if (images->count == MAX_FILES)
		return 1;
	if (mapping->offset != 0 || mapping->permissions[0] != 'r' || !is_dll(mapping->path) ||
	    known_file(images, mapping->major, mapping->minor, mapping->inode))
		return 0;
	/* the thread's CPU clock is a system call: read for a file to read */
	if (out_of_time(images))
		return 1;
	file = xcalloc(1, sizeof(*file));
	if (!read_headers(images->pid, mapping->start, mapping->end - mapping->start, file->headers,
			  &file->image)) {
		free(file);
		return 0;
	}
	snprintf(file->file.path, sizeof(file->file.path), "%s", mapping->path);
	file->file.major = mapping->major;
	file->file.minor = mapping->minor;
	file->file.inode = mapping->inode;
	add_file(images, file);
	return 0;
}

static int find_executable(const struct process_mapping *mapping, void *context)
{
	struct executable *executable = context;

	if (mapping->inode != (uint64_t)executable->inode || *mapping->path != '/')
		return 0;
	snprintf(executable->path, sizeof(executable->path), "%s", mapping->path);
	return 1;
}

/* read_bundle(): keeps the headers of the compressed assembly `entry` of
 * the executable open on `fd`, inflated, as the file EXECUTABLE/NAME. No
 * file is at that path: its identity is left empty, so that nothing reads
 * the executable's own symbols for it. */
static void read_compressed(struct copied_images *images, int fd, const char *executable,
			    const struct bundle_entry *entry)
{
	struct image_file *file;
	uint8_t *headers;
	size_t size;

	if (!(headers = bundle_entry_read(fd, entry, HEADER_BYTES, &size)))
		return;
	file = xcalloc(1, sizeof(*file));
	memcpy(file->headers, headers, size);
	free(headers);
	if (snprintf(file->file.path, sizeof(file->file.path), "%s/%s", executable, entry->path) >=
		(int)sizeof(file->file.path) ||
	    !pe_image_parse(&file->image, file->headers, size, NULL)) {
		free(file);
		return;
	}
	add_file(images, file);
}

/* A single-file app's compressed assemblies are no files: the runtime
 * inflates each into memory and copies that as it copies a file it cannot
 * map (dotnet/runtime's FlatImageLayout, then ConvertedImageLayout). Their
 * headers are read from the executable (/proc/PID/exe), where its bundle
 * manifest says, a page of each inflated: once an executable (a process
 * that execs another has it read too), until the reading's time is out. */
static void read_bundle(struct copied_images *images, pid_t pid)
{
	struct bundle_state *bundle = &images->bundle;
	struct stat status;
	char exe[64];
	int fd;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if ((fd = open(exe, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return;
	if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
		close(fd);
		return;
	}
	if (status.st_dev != bundle->executable.device ||
	    status.st_ino != bundle->executable.inode) {
		forget_bundle(bundle);
		bundle->executable.device = status.st_dev;
		bundle->executable.inode = status.st_ino;
		if (bundle_manifest_read(fd, &bundle->manifest))
			target_process_for_each_mapping(pid, find_executable, &bundle->executable);
	}
	for (; bundle->next < bundle->manifest.count && bundle->tried < MAX_COMPRESSED &&
	       images->count < MAX_FILES && *bundle->executable.path && !out_of_time(images);
	     bundle->next++) {
		const struct bundle_entry *entry = &bundle->manifest.entries[bundle->next];

		if (entry->type == BUNDLE_TYPE_ASSEMBLY && entry->compressed_size) {
			read_compressed(images, fd, bundle->executable.path, entry);
			bundle->tried++;
		}
	}
	close(fd);
}

/* The headers of each .dll `pid` maps from its start that are not read
 * yet, and once of each compressed assembly of its single-file executable,
 * within the time left to `pid` in this period. False when none is. */
static bool read_files(struct copied_images *images, pid_t pid)
{
	uint64_t start = clock_nanoseconds(CLOCK_THREAD_CPUTIME_ID), spent;
	struct reading_budget *budget = budget_of(images, pid, clock_nanoseconds(CLOCK_MONOTONIC));

	if (!budget)
		return false;
	if (images->pid != pid) {
		forget_files(images);
		images->pid = pid;
	}
	images->deadline = start + PROCESS_READ_TIME - budget->spent;
	target_process_for_each_mapping(pid, read_file, images);
	if (!out_of_time(images))
		read_bundle(images, pid);
	spent = clock_nanoseconds(CLOCK_THREAD_CPUTIME_ID) - start;
	budget->spent += spent;
	images->spent += spent;
	return true;
}

static const struct image_file *find_file(const struct copied_images *images,
					  const struct pe_image *copy)
{
	for (size_t i = 0; i < images->count; i++)
		if (pe_image_same_build(&images->files[i]->image, copy))
			return images->files[i];
	return NULL;
}

/* The base of the image whose copy holds [start, end), and its headers:
 * the nearest PE header at a 64 KiB boundary at or below `start`, read in
 * one call (it stops at the first address that cannot be read, below which
 * no copy can reach up to `start`). */
static bool find_copy(pid_t pid, uint64_t start, uint64_t end, uint8_t *buffer,
		      struct pe_image *copy, uint64_t *base)
{
	struct iovec local[MAX_STEPS_BELOW], remote[MAX_STEPS_BELOW];
	char magic[MAX_STEPS_BELOW][2];
	uint64_t top = start & ~(uint64_t)(ALIGNMENT - 1);
	size_t count = 0;
	ssize_t got;

	for (; count < MAX_STEPS_BELOW && top >= count * ALIGNMENT && top - count * ALIGNMENT;
	     count++) {
		local[count] = (struct iovec){magic[count], 2};
		remote[count] = (struct iovec){(void *)(uintptr_t)(top - count * ALIGNMENT), 2};
	}
	got = count ? process_vm_readv(pid, local, count, remote, count, 0) : -1;
	for (size_t i = 0; got > 0 && i < (size_t)got / 2; i++) {
		if (memcmp(magic[i], "MZ", 2))
			continue;
		*base = (uint64_t)(uintptr_t)remote[i].iov_base;
		return read_headers(pid, *base, HEADER_BYTES, buffer, copy) &&
		       *base + pe_image_memory_size(copy) >= end;
	}
	return false;
}

size_t copied_images_parts(struct copied_images *images, pid_t pid, uint64_t start, uint64_t end,
			   struct copied_image_part *parts, struct copied_image_file *file)
{
	uint8_t buffer[HEADER_BYTES];
	const struct image_file *found;
	struct pe_image copy;
	uint64_t base;
	size_t count = 0;

	if (!find_copy(pid, start, end, buffer, &copy, &base))
		return 0;
	/* Another process's files, or one mapped since the last reading: read
	 * what is new. */
	if ((images->pid != pid || !(found = find_file(images, &copy))) &&
	    (!read_files(images, pid) || !(found = find_file(images, &copy))))
		return 0;
	for (size_t i = 0; i < copy.section_count && count < COPIED_IMAGE_MAX_PARTS; i++) {
		const struct pe_section *section = &copy.sections[i];
		uint64_t bytes = section->raw_size, section_start = base + section->virtual_address;
		uint64_t part_start, part_end;

		if (section->virtual_size && section->virtual_size < bytes)
			bytes = section->virtual_size;
		part_start = start > section_start ? start : section_start;
		part_end = end < section_start + bytes ? end : section_start + bytes;
		if (part_start < part_end)
			parts[count++] = (struct copied_image_part){
			    part_start, part_end,
			    section->raw_offset + (part_start - section_start)};
	}
	if (count)
		*file = found->file;
	return count;
}
