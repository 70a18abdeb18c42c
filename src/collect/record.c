#include "record.h"
#include "ring_buffer.h"
#include "stop_signals.h"
#include "switch_events.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

struct record_session {
	const struct target_process *target;
	struct perf_event_attr attr;
	int *cpus;
	size_t cpu_count;
	struct ring_buffer *rings; /* one per CPU: every thread's event there writes to it */
	struct pollfd *polled;	   /* the rings, then the target's pidfd */
	unsigned buffer_pages;
	int *event_fds;
	size_t event_count, event_capacity;
	pid_t *traced_tids; /* threads whose events are open */
	size_t traced_count, traced_capacity;
	/* The switch event beside the samples (off-CPU time), opened with
	 * each sampling event into the same ring; the kernel's ids of both. */
	struct perf_event_attr *switch_attr; /* the caller's, updated as attr is */
	bool switch_refused;		     /* the switch event, not sampling, failed to open */
	bool ring_refused;     /* mapping a ring buffer failed for the locked memory limit */
	bool said_out_of_step; /* a ring buffer's unread records were dropped */
	struct record_event_ids ids[RECORD_EVENT_COUNT];
};

/* The kernel's limit on callchain length: recorded in the attr so that the
 * capture says where stacks were cut. */
static uint16_t max_stack_depth(void)
{
	FILE *file = fopen("/proc/sys/kernel/perf_event_max_stack", "re");
	unsigned depth = 127; /* the kernel's default */

	if (file) {
		if (fscanf(file, "%u", &depth) != 1 || depth == 0 || depth > UINT16_MAX)
			depth = 127;
		fclose(file);
	}
	return (uint16_t)depth;
}

void record_default_attr(struct perf_event_attr *attr, unsigned frequency,
			 enum call_graph_mode call_graph, unsigned stack_size)
{
	*attr = (struct perf_event_attr){
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(*attr),
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .sample_freq = frequency,
	    .freq = 1,
	    .disabled = 1,
	    .inherit = 1,
	    .mmap = 1,
	    .comm = 1,
	    .task = 1,
	    .sample_id_all = 1,
	    .exclude_hv = 1,
	    .mmap2 = 1,
	    .comm_exec = 1,
	    .use_clockid = 1,
	    .clockid = CLOCK_MONOTONIC, /* as perfcollect's perf record -k 1 */
	    .sample_max_stack = max_stack_depth(),
	};
	call_graph_set_attr(attr, call_graph, stack_size);
}

int record_use_cpu_cycles(struct perf_event_attr *attr, pid_t pid)
{
	struct perf_event_attr cycles = *attr;
	int fd;

	cycles.type = PERF_TYPE_HARDWARE;
	cycles.config = PERF_COUNT_HW_CPU_CYCLES;
	cycles.exclude_kernel = 1; /* probe the hardware, not the paranoia level */
	fd = (int)syscall(SYS_perf_event_open, &cycles, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	attr->type = cycles.type;
	attr->config = cycles.config;
	return 0;
}

/* Online CPUs from /sys, e.g. "0-3,8". */
static size_t online_cpus(int **cpus)
{
	FILE *file = fopen("/sys/devices/system/cpu/online", "re");
	size_t count = 0, capacity = 0;
	int first, last;
	char separator;

	*cpus = NULL;
	while (file && fscanf(file, "%d", &first) == 1) {
		last = first;
		if (fscanf(file, "%c", &separator) == 1 && separator == '-' &&
		    fscanf(file, "%d%c", &last, &separator) < 1)
			break;
		for (int cpu = first; cpu <= last; cpu++) {
			grow_array((void **)cpus, &capacity, count + 1, sizeof(**cpus));
			(*cpus)[count++] = cpu;
		}
		if (separator != ',')
			break;
	}
	if (file)
		fclose(file);
	if (count == 0) {
		long configured = sysconf(_SC_NPROCESSORS_ONLN);

		for (int cpu = 0; cpu < (configured > 0 ? configured : 1); cpu++) {
			grow_array((void **)cpus, &capacity, count + 1, sizeof(**cpus));
			(*cpus)[count++] = cpu;
		}
	}
	return count;
}

static bool is_traced(const struct record_session *session, pid_t tid)
{
	for (size_t i = 0; i < session->traced_count; i++)
		if (session->traced_tids[i] == tid)
			return true;
	return false;
}

/* Opens event number `event` (RECORD_EVENT_SAMPLING or _SWITCH) for `pid`
 * (a thread, -1, or a cgroup's fd with PERF_FLAG_PID_CGROUP in `flags`) on
 * the CPU of ring `ring`, writing into that ring. Returns 0 or the errno. */
static int open_into_ring(struct record_session *session, size_t event, pid_t pid, size_t ring,
			  unsigned long flags)
{
	const struct perf_event_attr *attr =
	    event == RECORD_EVENT_SWITCH ? session->switch_attr : &session->attr;
	int fd = (int)syscall(SYS_perf_event_open, attr, pid, session->cpus[ring], -1,
			      flags | PERF_FLAG_FD_CLOEXEC);
	struct record_event_ids *ids = &session->ids[event];
	uint64_t id = 0;

	if (fd < 0) {
		session->switch_refused = event == RECORD_EVENT_SWITCH;
		return errno;
	}
	if (session->rings[ring].fd < 0
		? ring_buffer_map(&session->rings[ring], fd, session->buffer_pages) < 0
		: ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, session->rings[ring].fd) < 0) {
		int error = errno;

		session->ring_refused = session->rings[ring].fd < 0 && error == EPERM;

		close(fd);
		return error;
	}
	grow_array((void **)&session->event_fds, &session->event_capacity, session->event_count + 1,
		   sizeof(int));
	session->event_fds[session->event_count++] = fd;
	if (session->switch_attr && ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0) {
		grow_array((void **)&ids->ids, &ids->capacity, ids->count + 1, sizeof(uint64_t));
		ids->ids[ids->count++] = id;
	}
	return 0;
}

/* The sampling event and, for off-CPU time, the switch event. */
static int open_into_ring_all(struct record_session *session, pid_t pid, size_t ring,
			      unsigned long flags)
{
	int error = open_into_ring(session, RECORD_EVENT_SAMPLING, pid, ring, flags);

	if (!error && session->switch_attr)
		error = open_into_ring(session, RECORD_EVENT_SWITCH, pid, ring, flags);
	return error;
}

/* Opens the event of one thread on every CPU. Returns 0, or the errno of
 * the first failure (ESRCH: the thread is gone). */
static int open_thread_events(struct record_session *session, pid_t tid)
{
	for (size_t i = 0; i < session->cpu_count; i++) {
		int error = open_into_ring_all(session, tid, i, 0);

		if (error)
			return error;
	}
	grow_array((void **)&session->traced_tids, &session->traced_capacity,
		   session->traced_count + 1, sizeof(pid_t));
	session->traced_tids[session->traced_count++] = tid;
	return 0;
}

/* Opens events for threads not traced yet, until a pass finds none: threads
 * born while events were being opened are caught by the next pass. Returns
 * 0, or the errno that stopped it. */
static int trace_new_threads(struct record_session *session)
{
	bool found_new = true;

	while (found_new) {
		pid_t *tids;
		size_t count = target_process_threads(session->target->pid, &tids);
		int error = 0;

		found_new = false;
		for (size_t i = 0; i < count && !error; i++) {
			if (is_traced(session, tids[i]))
				continue;
			error = open_thread_events(session, tids[i]);
			if (error == ESRCH)
				error = 0; /* exited meanwhile */
			else if (!error)
				found_new = true;
		}
		free(tids);
		if (error)
			return error;
	}
	return 0;
}

/* Opens one event per CPU for every process, or with target->cgroup every
 * process of that cgroup. Returns 0 or the errno of the failure. */
static int open_cpu_events(struct record_session *session)
{
	int cgroup_fd = -1, error = 0;

	if (session->target->cgroup &&
	    (cgroup_fd = open(session->target->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return errno;
	session->attr.inherit = 0; /* a CPU's event sees every task already */
	for (size_t i = 0; i < session->cpu_count && !error; i++)
		error = open_into_ring_all(session, cgroup_fd, i,
					   cgroup_fd >= 0 ? PERF_FLAG_PID_CGROUP : 0);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	return error;
}

/* The events a session samples with: per thread of one process, or per CPU. */
static int open_events(struct record_session *session)
{
	return session->target->pid == TARGET_EVERY_PROCESS ? open_cpu_events(session)
							    : trace_new_threads(session);
}

/* kernel.perf_event_paranoid, or 2 (the default upstream) when unreadable. */
static int perf_event_paranoid(void)
{
	FILE *file = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int level = 2;

	if (file) {
		if (fscanf(file, "%d", &level) != 1)
			level = 2;
		fclose(file);
	}
	return level;
}

static bool has_effective_capability(int capability)
{
	struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {0};

	if (syscall(SYS_capget, &header, data) != 0)
		return false;
	return data[capability / 32].effective & (1U << (capability % 32));
}

/* Debian's and Ubuntu's kernels, with kernel.perf_event_paranoid above 2
 * (their defaults 3 and 4), let only CAP_SYS_ADMIN open perf events: a
 * patch upstream never took, so CAP_PERFMON, what the manifests give, is
 * not enough there. True when that is why perf_event_open said `error`. */
static bool refused_by_paranoid_patch(int error, int *paranoid)
{
	*paranoid = perf_event_paranoid();
	return (error == EACCES || error == EPERM) && *paranoid > 2 &&
	       !has_effective_capability(CAP_SYS_ADMIN);
}

/* The root of the cgroup v2 tree `cgroup` is in (malloc'd), or NULL when it
 * is in no cgroup v2 tree: its topmost folder on the same mount. */
static char *cgroup2_root(const char *cgroup)
{
	struct statfs file_system;
	struct stat top, parent;
	char *root, *slash;

	if (statfs(cgroup, &file_system) != 0 || file_system.f_type != CGROUP2_SUPER_MAGIC ||
	    stat(cgroup, &top) != 0)
		return NULL;
	root = xasprintf("%s", cgroup);
	while ((slash = strrchr(root, '/')) && slash != root) {
		*slash = '\0';
		if (stat(root, &parent) != 0 || parent.st_dev != top.st_dev) {
			*slash = '/';
			break;
		}
	}
	return root;
}

/* A cgroup v2 tree has the perf_event controller (implicit there) in its
 * cgroups only once some controller was enabled at its root: systemd does,
 * a bare machine or a private mount may not, and perf_event_open then says
 * ENOENT for every cgroup of the tree. */
static bool explain_cgroup_error(const char *cgroup, int error)
{
	char *root;

	if (error != ENOENT || !(root = cgroup2_root(cgroup)))
		return false;
	report_error("cannot sample cgroup %s (%s): the perf_event controller is missing from "
		     "its cgroup v2 tree, as no controller was ever enabled at the tree's root; "
		     "enable one there (echo +pids > %s/cgroup.subtree_control)",
		     cgroup, strerror(error), root);
	free(root);
	return true;
}

static void explain_open_error(const struct record_session *session, int error)
{
	const struct target_process *target = session->target;
	int paranoid;

	if (!session->ring_refused && refused_by_paranoid_patch(error, &paranoid)) {
		bool perfmon = has_effective_capability(CAP_PERFMON);

		/* At 2, other processes and every CPU still need CAP_PERFMON. */
		report_error("perf_event_open: %s: kernel.perf_event_paranoid is %d, and above 2 "
			     "Debian's and Ubuntu's kernels let only CAP_SYS_ADMIN open perf "
			     "events (CAP_PERFMON%s is not enough): give profcpu CAP_SYS_ADMIN, or "
			     "set kernel.perf_event_paranoid to 2 or less on the node (sysctl -w "
			     "kernel.perf_event_paranoid=2)%s",
			     strerror(error), paranoid, perfmon ? ", which profcpu has," : "",
			     perfmon ? "" : " and give profcpu CAP_PERFMON");
		return;
	}
	if (session->switch_refused) {
		switch_events_explain_open_error(session->switch_attr, error);
		return;
	}
	if (session->ring_refused) {
		report_error("cannot map even a ring buffer of %u pages (%s): the locked memory "
			     "limit is spent; raise it (podman or docker run --ulimit memlock=-1) "
			     "or give profcpu CAP_IPC_LOCK",
			     session->buffer_pages, strerror(error));
		return;
	}
	if (target->pid == TARGET_EVERY_PROCESS && (error == EACCES || error == EPERM)) {
		report_error(
		    "no permission to sample every CPU (perf_event_open: %s): it needs "
		    "root, CAP_PERFMON or CAP_SYS_ADMIN, or kernel.perf_event_paranoid <= 0 "
		    "(sysctl -w kernel.perf_event_paranoid=0)",
		    strerror(error));
		return;
	}
	if (target->cgroup && explain_cgroup_error(target->cgroup, error))
		return;
	if (target->cgroup && (error == EBADF || error == ENOENT || error == ENOTDIR)) {
		report_error("cannot sample cgroup %s (%s): perf events need its directory in "
			     "cgroup v2 or the v1 perf_event hierarchy",
			     target->cgroup, strerror(error));
		return;
	}
	switch (error) {
	case EACCES:
		report_error("no permission to sample pid %d (perf_event_open: %s): run profcpu as "
			     "root, or give it CAP_PERFMON and CAP_SYS_PTRACE (podman/docker: "
			     "--cap-add PERFMON --cap-add SYS_PTRACE), or lower "
			     "kernel.perf_event_paranoid on the host (sysctl -w "
			     "kernel.perf_event_paranoid=1)",
			     (int)target->pid, strerror(error));
		break;
	case EPERM:
		/* Container seccomp profiles answer EPERM; older ones allow
		 * perf_event_open only with CAP_SYS_ADMIN, not CAP_PERFMON. */
		report_error("perf_event_open was refused for pid %d (%s): in a container, the "
			     "seccomp profile may block it: add --security-opt seccomp=unconfined "
			     "(or a profile that allows perf_event_open), or --cap-add SYS_ADMIN; "
			     "otherwise run as root or with CAP_PERFMON and CAP_SYS_PTRACE",
			     (int)target->pid, strerror(error));
		break;
	case EMFILE:
	case ENFILE:
		report_error("too many open files for one event per thread and CPU: raise the "
			     "limit (ulimit -n 65536)");
		break;
	case ENOENT:
	case ENOSYS:
	case EOPNOTSUPP:
		report_error("this kernel cannot sample the cpu-clock event (%s): perf events are "
			     "disabled or unsupported here",
			     strerror(error));
		break;
	default:
		report_error("cannot sample pid %d: perf_event_open: %s", (int)target->pid,
			     strerror(error));
	}
}

static void raise_open_file_limit(void)
{
	struct rlimit limit;

	if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
		limit.rlim_cur = limit.rlim_max;
		setrlimit(RLIMIT_NOFILE, &limit);
	}
}

static void close_events(struct record_session *session)
{
	for (size_t i = 0; i < session->event_count; i++)
		close(session->event_fds[i]);
	for (size_t i = 0; i < session->cpu_count; i++)
		ring_buffer_unmap(&session->rings[i]);
	session->event_count = session->traced_count = 0;
	for (size_t i = 0; i < RECORD_EVENT_COUNT; i++)
		session->ids[i].count = 0;
	session->switch_refused = session->ring_refused = false;
}

/* The smallest ring buffer record_open() falls back to: 64 KiB. */
#define MIN_RING_PAGES 16

/* A smaller ring buffer than asked fills sooner: its events wake the reader
 * when a quarter of it is written rather than half (the kernel's default),
 * which leaves more room for what comes while the reader drains. */
static void wake_at_a_quarter(struct record_session *session)
{
	uint32_t quarter = session->buffer_pages * (uint32_t)sysconf(_SC_PAGESIZE) / 4;

	session->attr.watermark = 1;
	session->attr.wakeup_watermark = quarter;
	if (session->switch_attr) {
		session->switch_attr->watermark = 1;
		session->switch_attr->wakeup_watermark = quarter;
	}
}

/* open_events(), with smaller ring buffers while the locked memory limit
 * refuses them: ring buffers count against RLIMIT_MEMLOCK beyond
 * kernel.perf_event_mlock_kb, and a container's root has no CAP_IPC_LOCK
 * to pass it (off-CPU time asks for 8 MiB per CPU). */
static int open_events_fitting(struct record_session *session)
{
	unsigned asked = session->buffer_pages;
	int error = open_events(session);

	while (error == EPERM && session->ring_refused && session->buffer_pages > MIN_RING_PAGES) {
		close_events(session);
		session->buffer_pages /= 2;
		wake_at_a_quarter(session);
		error = open_events(session);
	}
	if (!error && session->buffer_pages < asked)
		report_warning(
		    "the locked memory limit allows ring buffers of %u pages per CPU, not "
		    "%u: at high rates samples may be lost; give profcpu CAP_IPC_LOCK, or "
		    "raise its limit (podman or docker run --ulimit memlock=-1, ulimit -l) "
		    "or kernel.perf_event_mlock_kb on the node",
		    session->buffer_pages, asked);
	return error;
}

struct record_session *record_open(const struct target_process *target,
				   struct perf_event_attr *attr,
				   struct perf_event_attr *switch_attr, unsigned buffer_pages)
{
	struct record_session *session = xcalloc(1, sizeof(*session));
	int error;

	raise_open_file_limit();
	session->target = target;
	session->attr = *attr;
	session->switch_attr = switch_attr;
	session->buffer_pages = buffer_pages;
	session->cpu_count = online_cpus(&session->cpus);
	session->rings = xcalloc(session->cpu_count, sizeof(*session->rings));
	session->polled = xcalloc(session->cpu_count + 1, sizeof(*session->polled));
	for (size_t i = 0; i < session->cpu_count; i++)
		session->rings[i].fd = -1;

	error = open_events_fitting(session);
	if ((error == EACCES || error == EPERM) && !session->ring_refused &&
	    !session->attr.exclude_kernel) {
		/* perf_event_paranoid 2 allows user-space samples only. */
		close_events(session);
		session->attr.exclude_kernel = 1;
		if (session->switch_attr)
			session->switch_attr->exclude_kernel = 1;
		error = open_events_fitting(session);
		if (!error)
			report_warning("the kernel refused kernel samples (perf_event_paranoid): "
				       "stacks show user space only");
	}
	if (!error && session->event_count == 0)
		error = ESRCH;
	if (error) {
		if (error == ESRCH)
			report_error("pid %d exited before sampling started", (int)target->pid);
		else
			explain_open_error(session, error);
		record_close(session);
		return NULL;
	}
	*attr = session->attr;
	return session;
}

const struct record_event_ids *record_event_ids(const struct record_session *session, size_t event)
{
	return &session->ids[event];
}

void record_close(struct record_session *session)
{
	if (!session)
		return;
	close_events(session);
	for (size_t i = 0; i < RECORD_EVENT_COUNT; i++)
		free(session->ids[i].ids);
	free(session->event_fds);
	free(session->traced_tids);
	free(session->rings);
	free(session->polled);
	free(session->cpus);
	free(session);
}

static void count_record(const struct perf_event_header *record, struct record_summary *summary)
{
	if (record->type == PERF_RECORD_SAMPLE)
		summary->samples++;
	else if (record->type == PERF_RECORD_LOST)
		summary->lost_samples += ((const struct perf_record_lost *)record)->lost;
	else if (record->type == PERF_RECORD_FORK)
		summary->threads_seen++;
}

struct counting_sink {
	record_sink sink;
	void *context;
	struct record_summary *summary;
};

static int count_and_pass(const struct perf_event_header *record, void *context)
{
	struct counting_sink *counting = context;

	count_record(record, counting->summary);
	return counting->sink(record, counting->context);
}

/* Drains every CPU's ring buffer in time order, then ends the round as perf record does
 * (PERF_RECORD_FINISHED_ROUND), so that readers sort and free the capture
 * round by round. Returns -1 when the sink fails. */
static int drain_ring_buffers(struct record_session *session, record_sink sink, void *context,
			      struct record_summary *summary)
{
	static const struct perf_event_header finished_round = {.type = PERF_RECORD_FINISHED_ROUND,
								.size = sizeof(finished_round)};
	struct counting_sink counting = {sink, context, summary};
	uint64_t before = summary->samples;
	int status = 0;

	status = ring_buffers_drain(session->rings, session->cpu_count, &session->attr,
				    count_and_pass, &counting);
	for (size_t i = 0; i < session->cpu_count; i++)
		if (session->rings[i].dropped_bytes && !session->said_out_of_step) {
			report_warning("CPU %zu's ring buffer held a record header no kernel "
				       "writes: its %llu unread bytes were dropped, not misread",
				       i, session->rings[i].dropped_bytes);
			session->said_out_of_step = true;
		}
	if (status == 0 && summary->samples != before)
		status = sink(&finished_round, context);
	return status;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static void show_progress(const struct record_options *options, const struct record_summary *s)
{
	if (options->duration > 0)
		fprintf(stderr, "\rprofcpu: %5.1f/%.0f s  samples %-8llu threads %-4u lost %llu ",
			s->elapsed_seconds, options->duration, (unsigned long long)s->samples,
			s->threads_seen, (unsigned long long)s->lost_samples);
	else
		fprintf(stderr,
			"\rprofcpu: %5.1f s (Ctrl-C stops)  samples %-8llu threads %-4u lost %llu ",
			s->elapsed_seconds, (unsigned long long)s->samples, s->threads_seen,
			(unsigned long long)s->lost_samples);
}

static void set_events_enabled(struct record_session *session, bool enabled)
{
	for (size_t i = 0; i < session->event_count; i++)
		ioctl(session->event_fds[i],
		      enabled ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

/* Waits for data, the target's exit or a signal, at most `milliseconds`.
 * Returns true when the target has exited. */
static bool wait_for_data(struct record_session *session, int milliseconds)
{
	struct pollfd *polled = session->polled;
	size_t count = 0;
	bool exited = false;

	for (size_t i = 0; i < session->cpu_count; i++)
		polled[count++] = (struct pollfd){.fd = session->rings[i].fd, .events = POLLIN};
	if (session->target->pidfd >= 0)
		polled[count++] = (struct pollfd){.fd = session->target->pidfd, .events = POLLIN};
	if (poll(polled, count, milliseconds) > 0 && session->target->pidfd >= 0)
		exited = polled[count - 1].revents & POLLIN;
	if (session->target->pidfd < 0 && session->target->pid != TARGET_EVERY_PROCESS)
		exited = kill(session->target->pid, 0) < 0 && errno == ESRCH;
	return exited;
}

/* With two events, every record's sample_id trailer ends with the id of
 * its event (PERF_SAMPLE_IDENTIFIER): the synthesized ones get the
 * sampling event's, as perf gives its own. */
struct identifying_sink {
	record_sink sink;
	void *context;
	uint64_t identifier;
};

static int add_identifier(const struct perf_event_header *record, void *context)
{
	struct identifying_sink *identified = context;
	_Alignas(8) unsigned char copy[8192]; /* synthesized records are smaller */
	struct perf_event_header *header = (struct perf_event_header *)copy;

	if (record->size + sizeof(uint64_t) > sizeof(copy))
		return identified->sink(record, identified->context);
	memcpy(copy, record, record->size);
	memcpy(copy + record->size, &identified->identifier, sizeof(uint64_t));
	header->size = (uint16_t)(record->size + sizeof(uint64_t));
	return identified->sink(header, identified->context);
}

/* The records of what existed before: the kernel's mapping, then the
 * target's (or every process's) threads and mappings. A period's file
 * needs them as the first one does. */
static int synthesize(const struct record_session *session, record_sink sink, void *context)
{
	int status = synthesize_kernel_mmap(sink, context);

	if (status == 0 && session->target->pid == TARGET_EVERY_PROCESS)
		status = synthesize_every_process(session->attr.mmap_data, sink, context);
	else if (status == 0)
		status = synthesize_process(session->target->pid, session->attr.mmap_data, sink,
					    context);
	return status;
}

void record_run(struct record_session *session, const struct record_options *options,
		record_sink sink, void *context, struct record_summary *summary)
{
	struct timespec start;
	double next_progress = 0, next_period = options->period;
	bool target_exited = false;
	int status = 0;
	struct identifying_sink identified = {.sink = sink, .context = context};

	*summary = (struct record_summary){.threads_seen = (unsigned)session->traced_count,
					   .kernel_frames = !session->attr.exclude_kernel,
					   .ring_pages = session->buffer_pages};

	/* Enable first, then synthesize: a mapping made in between is seen twice,
	 * which is harmless, rather than not at all. */
	set_events_enabled(session, true);
	clock_gettime(CLOCK_MONOTONIC, &start);
	if (session->switch_attr) {
		identified.identifier = session->ids[RECORD_EVENT_SAMPLING].count
					    ? session->ids[RECORD_EVENT_SAMPLING].ids[0]
					    : 0;
		sink = add_identifier;
		context = &identified;
	}
	status = synthesize(session, sink, context);
	sink = identified.sink;
	context = identified.context;

	while (!stop_signals_requested() && !target_exited && status == 0) {
		summary->elapsed_seconds = seconds_since(&start);
		if (options->duration > 0 && summary->elapsed_seconds >= options->duration)
			break;
		target_exited = wait_for_data(session, 100);
		status = drain_ring_buffers(session, sink, context, summary);
		if (status == 0 && options->period > 0 && summary->elapsed_seconds >= next_period) {
			next_period += options->period;
			status = options->end_period(context);
			if (status == 0)
				status = synthesize(
				    session, session->switch_attr ? add_identifier : sink,
				    session->switch_attr ? (void *)&identified : context);
		}
		if (options->show_progress && summary->elapsed_seconds >= next_progress) {
			show_progress(options, summary);
			next_progress = summary->elapsed_seconds + 0.25;
		}
	}
	set_events_enabled(session, false);
	if (status == 0)
		status = drain_ring_buffers(session, sink, context, summary);
	summary->elapsed_seconds = seconds_since(&start);
	if (options->show_progress) {
		show_progress(options, summary);
		fputc('\n', stderr);
	}

	if (status > 0)
		summary->stop_reason = RECORD_STOPPED_BY_CALLER;
	else if (status != 0)
		summary->stop_reason = RECORD_STOPPED_BY_WRITE_ERROR;
	else if (stop_signals_requested())
		summary->stop_reason = RECORD_STOPPED_BY_SIGNAL;
	else if (target_exited)
		summary->stop_reason = RECORD_STOPPED_BY_TARGET_EXIT;
	else
		summary->stop_reason = RECORD_STOPPED_BY_DURATION;
}
