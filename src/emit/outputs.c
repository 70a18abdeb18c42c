#include "outputs.h"
#include "emit.h"
#include "kernel_symbols_copy.h"
#include "off_cpu.h"
#include "output_file.h"
#include "runtime_events.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The outputs of --off-cpu (write_off_cpu_outputs()), when it was on. */
#define OFF_CPU_FOLDED	   "offcpu_folded_stacks.out"
#define OFF_CPU_FLAMEGRAPH "offcpu_flamegraph.svg"
#define WALL_FOLDED	   "wall_folded_stacks.out"
#define WALL_FLAMEGRAPH	   "wall_flamegraph.svg"

/* The profiles of the .NET runtime's events (write_runtime_profiles()),
 * by kind (runtime_stacks.h): each NAME.pb.gz, NAME_folded_stacks.out and
 * NAME_flamegraph.svg, where the capture holds such events. */
static const struct runtime_output {
	const char *name, *title, *palette;
	const char *unit;	    /* of the folded counts and the graph */
	struct pprof_values values; /* counts and labels filled in when written */
} runtime_outputs[RUNTIME_STACK_KINDS] = {
    [RUNTIME_STACK_CONTENTION] = {"contention",
				  "Lock contention (time waited)",
				  "blue",
				  "nanoseconds",
				  {"contentions", "count", "delay", "nanoseconds", NULL,
				   "lock_owner_tid", NULL}},
    [RUNTIME_STACK_EXCEPTION] = {"exceptions",
				 "Exceptions thrown",
				 "red",
				 "exceptions",
				 {"exceptions", "count", NULL, NULL, NULL}},
    [RUNTIME_STACK_ALLOCATION] = {"alloc",
				  "Allocations (bytes, sampled by the runtime)",
				  "mem",
				  "bytes",
				  {"alloc_objects", "count", "alloc_space", "bytes", NULL}},
    [RUNTIME_STACK_WAIT] = {"waits",
			    "Waits on wait handles (time waited)",
			    "blue",
			    "nanoseconds",
			    {"waits", "count", "delay", "nanoseconds", NULL}},
};

static void report_write_error(const char *path)
{
	report_error("cannot write %s: %s%s", path, strerror(errno),
		     errno == ENOSPC ? " (free some disk space, then run profcpu "
				       "postprocess -dir on this folder)"
				     : "");
}

/* Lets `write` fill DIR/NAME (under a temporary name until it is
 * complete); on failure says which file and why. Returns 0 or -1. */
static int write_output(const char *dir, const char *name,
			int (*write)(const void *data, FILE *out), const void *data)
{
	char *path = xasprintf("%s/%s", dir, name);
	struct output_file out;
	int status = -1;

	if (output_file_open(&out, path) == 0) {
		static char buffer[1 << 16];

		setvbuf(out.stream, buffer, _IOFBF, sizeof(buffer));
		status = output_file_commit(&out, write(data, out.stream) < 0);
	}
	if (status < 0)
		report_write_error(path);
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
	const char *palette, *count_name; /* NULL: the defaults */
};

static int write_flamegraph(const void *data, FILE *out)
{
	const struct flamegraph_input *input = data;

	return emit_flamegraph_styled(input->folded, input->title, input->subtitle, input->palette,
				      input->count_name, out);
}

struct perf_script_input {
	const struct profile *profile;
	bool source_lines;
};

static int write_perf_script(const void *data, FILE *out)
{
	const struct perf_script_input *input = data;

	return emit_perf_script(input->profile, input->source_lines, out);
}

/* hot_lines.txt: `profcpu lines` without the source text, which the
 * capture's debug information names by paths of the machine that built
 * the code: read here, with the profiler's rights, they could show any of
 * this machine's files. */
static int write_hot_lines(const void *profile, FILE *out)
{
	return emit_hot_lines(profile, HOT_LINES_FUNCTIONS, NULL, out);
}

struct pprof_input {
	const struct profile *profile;
	int64_t end_time_nanos;
};

static int write_pprof(const void *data, FILE *out)
{
	const struct pprof_input *input = data;

	return emit_pprof(input->profile, input->end_time_nanos, out);
}

/* When the capture ended: perf.data is written last. */
static int64_t capture_end_time(const char *dir)
{
	char *path = xasprintf("%s/perf.data", dir);
	struct stat status;
	int64_t end = stat(path, &status) == 0
			  ? (int64_t)status.st_mtim.tv_sec * 1000000000 + status.st_mtim.tv_nsec
			  : 0;

	free(path);
	return end;
}

static int write_speedscope(const void *data, FILE *out)
{
	return emit_speedscope(data, out);
}

static bool has_prefix_and_suffix(const char *name, const char *prefix, const char *suffix)
{
	size_t length = strlen(name), prefix_length = strlen(prefix),
	       suffix_length = strlen(suffix);

	return length > prefix_length + suffix_length && !strncmp(name, prefix, prefix_length) &&
	       !strcmp(name + length - suffix_length, suffix);
}

/* What the runtimes left for the symbols of generated code, as copied into
 * the folder: perf-<pid>.map, perfinfo-<pid>.map, jit-<pid>.dump. */
static bool is_runtime_symbol_file(const char *name)
{
	return has_prefix_and_suffix(name, "perf-", ".map") ||
	       has_prefix_and_suffix(name, "perf-", ".map.times") ||
	       has_prefix_and_suffix(name, "perfinfo-", ".map") ||
	       has_prefix_and_suffix(name, "jit-", ".dump");
}

struct member_list {
	struct archive_member *members;
	size_t count, capacity;
};

static void add_member(struct member_list *list, const char *file, const char *name)
{
	grow_array((void **)&list->members, &list->capacity, list->count + 1,
		   sizeof(*list->members));
	list->members[list->count++] = (struct archive_member){xstrdup(file), name, false};
}

/* The runtime events' outputs that exist (emit_archive leaves out the
 * others): the folded stacks and graphs, and with `pprof` the pprof files. */
static void add_runtime_outputs(struct member_list *list, bool pprof)
{
	for (int kind = 0; kind < RUNTIME_STACK_KINDS; kind++) {
		const char *name = runtime_outputs[kind].name;
		char *files[] = {xasprintf("%s_folded_stacks.out", name),
				 xasprintf("%s_flamegraph.svg", name),
				 pprof ? xasprintf("%s.pb.gz", name) : NULL};

		for (size_t i = 0; i < 3; i++) {
			if (files[i])
				add_member(list, files[i], NULL);
			free(files[i]);
		}
	}
}

static void add_runtime_symbol_files(struct member_list *list, const char *dir)
{
	DIR *directory = opendir(dir);
	struct dirent *entry;

	while (directory && (entry = readdir(directory)))
		if (is_runtime_symbol_file(entry->d_name))
			add_member(list, entry->d_name, NULL);
	if (directory)
		closedir(directory);
}

static int write_archive(const char *dir, const struct member_list *list, const char *top,
			 enum archive_format format, const char *path,
			 const struct deflated_members *deflated)
{
	char *temporary_path = output_file_temporary_path(path);
	int status = output_file_finish_path(
	    temporary_path, path,
	    emit_archive(dir, list->members, list->count, top, format, temporary_path, deflated));

	if (status < 0)
		report_write_error(path);
	free(temporary_path);
	return status;
}

static void release_members(struct member_list *list)
{
	for (size_t i = 0; i < list->count; i++)
		free((char *)list->members[i].file);
	free(list->members);
	*list = (struct member_list){0};
}

/* prof.tar.gz: the folder as it is, but for perf_script.out. That text is
 * the largest output by far, prof.trace.zip holds it (perf.data.txt), and
 * deflating it a second time took most of the postprocess time. The files
 * both hold are deflated once, for the zip (`deflated`; NULL when it
 * could not be written). */
static int write_tar_gz(const char *dir, bool perf_data_compressed,
			const struct deflated_members *deflated)
{
	static const char *const outputs[] = {
	    "perf.data",       "folded_stacks.out", "flamegraph.svg", "profile.pb.gz",
	    "speedscope.json", "profcpu.log",	    OFF_CPU_FOLDED,   OFF_CPU_FLAMEGRAPH,
	    WALL_FOLDED,       WALL_FLAMEGRAPH,	    "hot_lines.txt"};
	struct member_list list = {0};
	char *dir_copy = xstrdup(dir), *path = xasprintf("%s/prof.tar.gz", dir);
	int status;

	for (size_t i = 0; i < sizeof(outputs) / sizeof(*outputs); i++)
		add_member(&list, outputs[i], NULL);
	list.members[0].stored = perf_data_compressed;
	add_runtime_outputs(&list, true);
	add_runtime_symbol_files(&list, dir);
	add_member(&list, KERNEL_SYMBOLS_COPY, NULL);
	add_member(&list, OUTPUTS_RUNTIME_EVENTS, NULL);
	status = write_archive(dir, &list, basename(dir_copy), ARCHIVE_TAR_GZ, path, deflated);
	release_members(&list);
	free(path);
	free(dir_copy);
	return status;
}

/* NAME.trace.zip in perfcollect's layout, which PerfView opens: the perf
 * script text is perf.data.txt, the log perfcollect.log. Says in
 * `deflated` where it is, for the tar.gz; the caller frees its strings. */
static int write_trace_zip(const char *dir, const struct trace_zip *zip, bool perf_data_compressed,
			   struct deflated_members *deflated)
{
	struct member_list list = {0};
	char *path = zip && zip->path ? xstrdup(zip->path) : xasprintf("%s/prof.trace.zip", dir);
	char *top = xasprintf("%s.trace", zip && zip->name ? zip->name : "prof");
	int status;

	add_member(&list, "perf.data", NULL);
	list.members[0].stored = perf_data_compressed;
	/* Stored: PerfView's command line (/PerfScript, TraceEvent's
	 * ParallelLinuxPerfScriptStackSource) splits the text into blocks by
	 * peeking 192 KiB ahead after one Read of the entry's stream, and a
	 * deflated entry's Read returns what 8 KiB of input inflate to: the
	 * blocks then end inside a line, and it drops or fails on what
	 * follows (PerfView's views read it whole either way). */
	add_member(&list, "perf_script.out", "perf.data.txt");
	list.members[list.count - 1].stored = true;
	add_member(&list, "profcpu.log", "perfcollect.log");
	add_runtime_symbol_files(&list, dir);
	add_member(&list, KERNEL_SYMBOLS_COPY, NULL);
	add_member(&list, OUTPUTS_RUNTIME_EVENTS, NULL);
	add_member(&list, "folded_stacks.out", NULL);
	add_member(&list, "flamegraph.svg", NULL);
	add_member(&list, OFF_CPU_FLAMEGRAPH, NULL);
	add_member(&list, WALL_FLAMEGRAPH, NULL);
	add_runtime_outputs(&list, false);
	status = write_archive(dir, &list, top, ARCHIVE_ZIP, path, NULL);
	release_members(&list);
	*deflated = (struct deflated_members){path, top};
	return status;
}

static int write_archives(const char *dir, const struct trace_zip *zip, bool perf_data_compressed)
{
	struct deflated_members deflated;
	int status = write_trace_zip(dir, zip, perf_data_compressed, &deflated);

	status |= write_tar_gz(dir, perf_data_compressed, status == 0 ? &deflated : NULL);
	free((char *)deflated.zip_path);
	free((char *)deflated.top);
	return status ? -1 : 0;
}

/* One folded file and its flame graph of time in microseconds: off CPU,
 * or on and off CPU on one scale (wall time). */
static int write_time_outputs(const char *dir, const struct profile *view,
			      const struct fold_options *fold, const char *folded_name,
			      const char *graph_name, const char *title, const char *palette)
{
	struct fold_options weighed = fold ? *fold : (struct fold_options){0};
	struct folded_profile folded;
	char *subtitle;
	int status;

	weighed.weigh_by_period = true;
	profile_fold(view, &weighed, &folded);
	subtitle = xasprintf("%.3f s in all (in microseconds), profcpu %s",
			     (double)folded.total / 1e6, PROFCPU_VERSION);
	status = write_output(dir, folded_name, write_folded, &folded);
	status |= write_output(
	    dir, graph_name, write_flamegraph,
	    &(struct flamegraph_input){&folded, title, subtitle, palette, "microseconds"});
	folded_profile_release(&folded);
	free(subtitle);
	return status;
}

/* With switches recorded (--off-cpu): offcpu_folded_stacks.out,
 * offcpu_flamegraph.svg, wall_folded_stacks.out, wall_flamegraph.svg. */
static int write_off_cpu_outputs(const char *dir, const struct profile *profile,
				 const struct fold_options *fold)
{
	struct profile off_cpu = off_cpu_view(profile), wall = off_cpu_wall_view(profile);
	const char *process = profile->switch_count ? profile->switches[0].sample.process_name : "";
	char *off_title = xasprintf("Off-CPU (wall time off CPU): %s", process);
	char *wall_title = xasprintf("Wall time, on and off CPU: %s", process);
	int status = write_time_outputs(dir, &off_cpu, fold, OFF_CPU_FOLDED, OFF_CPU_FLAMEGRAPH,
					off_title, "blue");

	status |=
	    write_time_outputs(dir, &wall, fold, WALL_FOLDED, WALL_FLAMEGRAPH, wall_title, NULL);
	off_cpu_view_release(&wall);
	free(off_title);
	free(wall_title);
	return status;
}

const struct pprof_values *outputs_runtime_values(enum runtime_stack_kind kind)
{
	return &runtime_outputs[kind].values;
}

int outputs_write_runtime_pprof(const struct runtime_profile *runtime, enum runtime_stack_kind kind,
				int64_t end_time_nanos, FILE *out)
{
	struct pprof_values values = runtime_outputs[kind].values;

	values.counts = runtime->counts;
	values.label_values = runtime->lock_owners;
	return emit_pprof_events(&runtime->profile, &values, end_time_nanos, out);
}

struct events_pprof_input {
	const struct runtime_profile *runtime;
	enum runtime_stack_kind kind;
	int64_t end_time_nanos;
};

static int write_events_pprof(const void *data, FILE *out)
{
	const struct events_pprof_input *input = data;

	return outputs_write_runtime_pprof(input->runtime, input->kind, input->end_time_nanos, out);
}

/* A runtime profile's three files, or none when it has no events (and
 * none left by an earlier postprocess of the folder). */
static int write_runtime_profile(const char *dir, enum runtime_stack_kind kind,
				 const struct runtime_profile *runtime,
				 const struct fold_options *fold)
{
	const struct runtime_output *output = &runtime_outputs[kind];
	struct fold_options weighed = fold ? *fold : (struct fold_options){0};
	char *folded_name = xasprintf("%s_folded_stacks.out", output->name);
	char *graph_name = xasprintf("%s_flamegraph.svg", output->name);
	char *pprof_name = xasprintf("%s.pb.gz", output->name);
	const struct profile *profile = &runtime->profile;
	struct folded_profile folded;
	int status = 0;

	if (!profile->sample_count) {
		char *names[] = {folded_name, graph_name, pprof_name};

		for (size_t i = 0; i < 3; i++) {
			char *path = xasprintf("%s/%s", dir, names[i]);

			unlink(path);
			free(path);
		}
	} else {
		char *title = xasprintf("%s: %s", output->title, profile->samples[0].process_name);
		char *subtitle;

		weighed.weigh_by_period = true;
		profile_fold(profile, &weighed, &folded);
		subtitle =
		    xasprintf("%zu events, %llu %s in all, profcpu %s", profile->sample_count,
			      (unsigned long long)folded.total, output->unit, PROFCPU_VERSION);
		status |= write_output(dir, folded_name, write_folded, &folded);
		status |= write_output(dir, graph_name, write_flamegraph,
				       &(struct flamegraph_input){&folded, title, subtitle,
								  output->palette, output->unit});
		status |= write_output(
		    dir, pprof_name, write_events_pprof,
		    &(struct events_pprof_input){runtime, kind, capture_end_time(dir)});
		folded_profile_release(&folded);
		free(title);
		free(subtitle);
	}
	free(folded_name);
	free(graph_name);
	free(pprof_name);
	return status;
}

static int write_runtime_profiles(const char *dir, const struct runtime_profile *runtime,
				  const struct fold_options *fold)
{
	int status = 0;

	for (int kind = 0; kind < RUNTIME_STACK_KINDS; kind++)
		status |= write_runtime_profile(
		    dir, (enum runtime_stack_kind)kind,
		    runtime ? &runtime[kind] : &(struct runtime_profile){0}, fold);
	return status;
}

int outputs_write_archives(const char *dir, const struct trace_zip *zip)
{
	return write_archives(dir, zip, false);
}

int outputs_write(const char *dir, const struct profile *profile, const struct trace_zip *zip,
		  const struct fold_options *fold, const struct runtime_events *events,
		  const struct runtime_profile *runtime)
{
	struct folded_profile folded;
	int status = 0;

	profile_fold(profile, fold, &folded);
	status |= write_output(dir, "folded_stacks.out", write_folded, &folded);
	status |= write_output(dir, "perf_script.out", write_perf_script,
			       &(struct perf_script_input){profile, fold && fold->by_line});
	if (fold && fold->by_line)
		status |= write_output(dir, "hot_lines.txt", write_hot_lines, profile);
	status |= write_output(dir, "profile.pb.gz", write_pprof,
			       &(struct pprof_input){profile, capture_end_time(dir)});
	status |= write_output(dir, "speedscope.json", write_speedscope, profile);
	if (folded.total) {
		char *title = xasprintf("CPU: %s", profile->samples[0].process_name);
		char *note = events ? runtime_events_gc_note(events) : NULL;
		char *subtitle = xasprintf("%llu %s samples%s%s, profcpu %s",
					   (unsigned long long)folded.total, profile->event_name,
					   note ? "; " : "", note ? note : "", PROFCPU_VERSION);
		struct flamegraph_input input = {&folded, title, subtitle, NULL, NULL};

		status |= write_output(dir, "flamegraph.svg", write_flamegraph, &input);
		free(title);
		free(subtitle);
		free(note);
	} else {
		/* No samples, no graph: not one left by an earlier capture. */
		char *path = xasprintf("%s/flamegraph.svg", dir);

		unlink(path);
		free(path);
	}
	folded_profile_release(&folded);
	if (profile->switch_count)
		status |= write_off_cpu_outputs(dir, profile, fold);
	status |= write_runtime_profiles(dir, runtime, fold);
	status |= write_archives(dir, zip, profile->compressed_capture);
	return status ? -1 : 0;
}

char *outputs_flamegraph_path(const char *dir)
{
	char *path = xasprintf("%s/flamegraph.svg", dir);

	if (access(path, F_OK) == 0)
		return path;
	free(path);
	return NULL;
}

void outputs_print_where(const char *dir)
{
	char *flamegraph_path = outputs_flamegraph_path(dir);

	if (flamegraph_path)
		printf("profcpu: flame graph: %s; trace for PerfView: %s/prof.trace.zip\n",
		       flamegraph_path, dir);
	else
		printf("profcpu: trace for PerfView: %s/prof.trace.zip\n", dir);
	free(flamegraph_path);
}
