#include "postprocess.h"
#include "outputs.h"
#include "replay.h"
#include "runtime_profiles.h"
#include "runtime_trace.h"
#include "target_file.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The perf map is the target's: say how much of it made no sense, and
 * where a limit stopped the reading. */
static void warn_about_perfmap(struct resolver *resolver, pid_t pid)
{
	struct perfmap *perfmap = resolver_perfmap(resolver, pid);
	const struct target_file_budget *budget;
	char why[96];

	if (!perfmap)
		return;
	if (perfmap_malformed_count(perfmap))
		report_warning("skipped %zu malformed lines in the perf map of pid %d",
			       perfmap_malformed_count(perfmap), (int)pid);
	if (perfmap_long_line_count(perfmap))
		report_warning("skipped %zu lines longer than %d KiB in the perf map of pid %d",
			       perfmap_long_line_count(perfmap), PERFMAP_MAX_LINE >> 10, (int)pid);
	budget = perfmap_read_budget(perfmap);
	if (budget->stopped_by)
		report_warning("the perf map of pid %d: %s; later JIT code is not named", (int)pid,
			       target_file_describe_budget(budget, why, sizeof(why)));
}

/* The summary line, and the same in the log: how many stacks are whole. */
static void report_stack_completeness(const struct profile *profile, FILE *log)
{
	double rooted = 100.0 * (double)profile->rooted_stacks / (double)profile->sample_count;

	printf("profcpu: %zu samples, %zu unique stacks, %.1f%% reach a thread root\n",
	       profile->sample_count, profile->stack_count, rooted);
	if (!log)
		return;
	fprintf(log,
		"stacks: %llu of %zu samples (%.1f%%) reach a thread root (start_thread, "
		"__libc_start_call_main, _start, clone3; in the kernel ret_from_fork, "
		"common_startup_64)\n",
		(unsigned long long)profile->rooted_stacks, profile->sample_count, rooted);
	if (profile->unfollowed_stacks)
		fprintf(log,
			"stacks: %llu walks stopped at a frame whose call frame information "
			"needed what the sample lacked (a slot past its stack copy, a register "
			"no frame kept, an unknown DWARF operation), by module:\n",
			(unsigned long long)profile->unfollowed_stacks);
	for (size_t i = 0; i < profile->unfollowed_modules.count; i++) {
		const char *module =
		    (const char *)(uintptr_t)profile->unfollowed_modules.keys[i].first;

		fprintf(log, "stacks:   %llu in %s\n",
			(unsigned long long)profile->unfollowed_by_module[i],
			module ? module : "[unknown]");
	}
}

/* The runtime's method events in the capture (its rundown) name the JIT
 * code of the target that its perf map and jitdump leave unnamed: the
 * target collect sampled, or offline the pid the runtime knew itself by
 * (the same unless the target ran in another pid namespace). The resolver
 * takes them from `trace`. */
static void add_runtime_methods(struct resolver *resolver, struct runtime_trace *trace,
				const struct resolver_config *config)
{
	pid_t pid = config->live_pid ? config->live_pid : (pid_t)trace->process_id;
	struct code_ranges *methods = runtime_trace_take_methods(trace);

	if (!methods)
		return;
	if (config->native.log)
		fprintf(config->native.log,
			"runtime events: %zu code ranges of pid %d named by its method events\n",
			code_ranges_count(methods), (int)pid);
	resolver_add_runtime_methods(resolver, pid, methods);
}

/* The maps of the target's JIT code to IL offsets (the rundown's), which
 * with its assemblies' PDBs give its JIT frames their lines. */
static void add_managed_lines(struct resolver *resolver, struct runtime_trace *trace,
			      const struct resolver_config *config)
{
	pid_t pid = config->live_pid ? config->live_pid : (pid_t)trace->process_id;
	struct managed_lines *lines = runtime_trace_take_lines(trace);

	if (!lines)
		return;
	if (config->native.log)
		fprintf(config->native.log,
			"runtime events: %zu pieces of JIT code of pid %d mapped to IL offsets\n",
			managed_lines_code_count(lines), (int)pid);
	resolver_add_managed_lines(resolver, pid, lines);
}

/* Replays DIR/perf.data into `profile` with the runtime's methods of
 * `trace` (read here when NULL). */
static int replay_folder(const char *dir, struct resolver *resolver,
			 const struct resolver_config *config, struct runtime_trace *trace,
			 struct profile *profile)
{
	char *perf_data = xasprintf("%s/perf.data", dir);
	struct runtime_trace own;
	int status;

	if (!trace) {
		char *path = xasprintf("%s/%s", dir, OUTPUTS_RUNTIME_EVENTS);

		runtime_trace_read(path, &own);
		trace = &own;
		free(path);
	}
	add_runtime_methods(resolver, trace, config);
	add_managed_lines(resolver, trace, config);
	status = replay_capture(perf_data, resolver, profile);
	if (trace == &own)
		runtime_trace_release(&own);
	free(perf_data);
	return status;
}

int postprocess_read_profile(const char *dir, const struct resolver_config *config,
			     struct profile *profile)
{
	struct resolver *resolver = resolver_new(config);
	int status;

	profile_init(profile);
	status = replay_folder(dir, resolver, config, NULL, profile);
	resolver_free(resolver);
	return status;
}

/* The profiles of the runtime's events with stacks, named by the resolver
 * that named the samples, now that it has replayed the capture; their tops
 * on stdout and in the log. */
static void build_runtime_profiles(struct runtime_trace *trace, struct resolver *resolver,
				   const struct resolver_config *config,
				   const struct profile *samples,
				   struct runtime_profile runtime[RUNTIME_STACK_KINDS])
{
	pid_t pid = config->live_pid ? config->live_pid : (pid_t)trace->process_id;

	runtime_profiles_build(&trace->stacks, resolver, pid, samples, runtime);
	runtime_profiles_print(runtime, stdout);
	if (config->native.log)
		runtime_profiles_print(runtime, config->native.log);
}

int postprocess_capture(const char *dir, const struct resolver_config *config,
			const struct trace_zip *zip, const struct fold_options *fold,
			struct runtime_trace *trace)
{
	struct resolver *resolver = resolver_new(config);
	char *path = xasprintf("%s/%s", dir, OUTPUTS_RUNTIME_EVENTS);
	struct runtime_trace own;
	struct profile profile;
	struct runtime_profile runtime[RUNTIME_STACK_KINDS];
	int status;

	if (!trace) {
		runtime_trace_read(path, &own);
		trace = &own;
	}
	profile_init(&profile);
	status = replay_folder(dir, resolver, config, trace, &profile);
	build_runtime_profiles(trace, resolver, config, &profile, runtime);
	/* Before the archives, which hold the copy. */
	resolver_finish_kernel_symbols_copy(resolver);
	if (status == 0) {
		if (config->live_pid)
			warn_about_perfmap(resolver, config->live_pid);
		/* Before the outputs: the log in the archives says it too. */
		if (profile.cut_stacks * 100 > profile.sample_count)
			report_warning(
			    "%llu of %zu stacks reached the kernel's limit of %u frames and "
			    "lost their roots: raise it on the host with sysctl -w "
			    "kernel.perf_event_max_stack=1024 before collecting",
			    (unsigned long long)profile.cut_stacks, profile.sample_count,
			    profile.max_stack_depth);
		status = outputs_write(dir, &profile, zip, fold,
				       trace->status == 0 ? &trace->events : NULL, runtime);
		if (profile.sample_count == 0)
			report_warning("no samples: the target used no CPU while it was sampled; "
				       "no flame graph was drawn");
		else
			report_stack_completeness(&profile, config->native.log);
	}
	profile_release(&profile);
	runtime_profiles_release(runtime);
	resolver_free(resolver);
	if (trace == &own)
		runtime_trace_release(&own);
	free(path);
	return status;
}
