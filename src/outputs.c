#include "outputs.h"
#include "emit.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opens DIR/NAME, lets `write` fill it and closes it; on failure says
 * which file and why. Returns 0 or -1. */
static int write_output(const char *dir, const char *name,
			int (*write)(const void *data, FILE *out), const void *data)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *out = fopen(path, "we");
	int status = -1;

	if (out) {
		static char buffer[1 << 16];

		setvbuf(out, buffer, _IOFBF, sizeof(buffer));
		status = write(data, out);
		if (fclose(out) != 0)
			status = -1;
	}
	if (status < 0)
		report_error("cannot write %s: %s%s", path, strerror(errno),
			     errno == ENOSPC ? " (free some disk space, then run profcpu "
					       "postprocess -dir on this folder)"
					     : "");
	free(path);
	return status;
}

static int write_folded(const void *data, FILE *out)
{
	return emit_folded(data, out);
}

struct flamegraph_input {
	const struct folded_profile *folded;
	const char *title, *subtitle;
};

static int write_flamegraph(const void *data, FILE *out)
{
	const struct flamegraph_input *input = data;

	return emit_flamegraph(input->folded, input->title, input->subtitle, out);
}

static int write_perf_script(const void *data, FILE *out)
{
	return emit_perf_script(data, out);
}

/* perf-<pid>.map copies in `dir`, appended to `files`. */
static void list_perfmap_copies(const char *dir, char ***files, size_t *count, size_t *capacity)
{
	DIR *directory = opendir(dir);
	struct dirent *entry;

	while (directory && (entry = readdir(directory))) {
		size_t length = strlen(entry->d_name);

		if (strncmp(entry->d_name, "perf-", 5) || length < 9 ||
		    strcmp(entry->d_name + length - 4, ".map"))
			continue;
		grow_array((void **)files, capacity, *count + 1, sizeof(**files));
		(*files)[(*count)++] = xstrdup(entry->d_name);
	}
	if (directory)
		closedir(directory);
}

static int write_archive(const char *dir)
{
	static const char *const outputs[] = {"perf.data", "folded_stacks.out", "perf_script.out",
					      "flamegraph.svg", "profcpu.log"};
	char **files = NULL, *dir_copy = xstrdup(dir), *archive = xasprintf("%s/prof.tar.gz", dir);
	size_t count = 0, capacity = 0;
	int status;

	for (size_t i = 0; i < sizeof(outputs) / sizeof(*outputs); i++) {
		grow_array((void **)&files, &capacity, count + 1, sizeof(*files));
		files[count++] = xstrdup(outputs[i]);
	}
	list_perfmap_copies(dir, &files, &count, &capacity);
	status = emit_tar_gz(dir, (const char *const *)files, count, basename(dir_copy), archive);
	if (status < 0)
		report_error("cannot write %s: %s", archive, strerror(errno));
	for (size_t i = 0; i < count; i++)
		free(files[i]);
	free(files);
	free(archive);
	free(dir_copy);
	return status;
}

int outputs_write(const char *dir, const struct profile *profile)
{
	struct folded_profile folded;
	int status = 0;

	profile_fold(profile, &folded);
	status |= write_output(dir, "folded_stacks.out", write_folded, &folded);
	status |= write_output(dir, "perf_script.out", write_perf_script, profile);
	if (folded.total) {
		char *title = xasprintf("CPU: %s", folded.stacks[0].functions[0]);
		char *subtitle =
		    xasprintf("%llu %s samples, profcpu %s", (unsigned long long)folded.total,
			      profile->event_name, PROFCPU_VERSION);
		struct flamegraph_input input = {&folded, title, subtitle};

		status |= write_output(dir, "flamegraph.svg", write_flamegraph, &input);
		free(title);
		free(subtitle);
	}
	folded_profile_release(&folded);
	status |= write_archive(dir);
	return status ? -1 : 0;
}
