#include "diagnostics_ipc.h"
#include "dotnet_diagnostics.h"
#include "jitdump.h"
#include "runtime_directories.h"
#include "runtime_files.h"
#include "target_file.h"
#include "target_root.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define PROCESS_COMMAND_SET 0x04
#define PROCESS_INFO2	    0x04
#define ENABLE_PERFMAP	    0x05
#define DISABLE_PERFMAP	    0x06 /* no payload; .NET 8 and later */
#define PERFMAP_AND_JITDUMP 1	 /* as DOTNET_PerfMapEnabled=1: both files, whole */
/* Past this, the rest of a target's environment is not looked at. */
#define ENVIRONMENT_LIMIT (1 << 20)

/* A reply: the header, then the command's status code. */
struct ipc_reply {
	struct ipc_header header;
	uint32_t code;
} __attribute__((packed));

int dotnet_diagnostics_check_reply(const void *bytes, size_t size, char *why, size_t why_size)
{
	struct ipc_reply reply;

	if (size < sizeof(reply)) {
		snprintf(why, why_size, "the runtime gave no valid answer");
		return -1;
	}
	memcpy(&reply, bytes, sizeof(reply));
	if (memcmp(reply.header.magic, IPC_MAGIC, sizeof(IPC_MAGIC)) ||
	    reply.header.command_set != SERVER_RESPONSE) {
		snprintf(why, why_size, "the runtime gave no valid answer");
		return -1;
	}
	if (reply.header.command_id != RESPONSE_OK) {
		snprintf(why, why_size,
			 reply.code == UNKNOWN_COMMAND ? "the runtime is older than .NET 8"
						       : "the runtime refused (error 0x%08x)",
			 reply.code);
		return -1;
	}
	return 0;
}

/* Opens the runtime file NAME of the target (a regular file, in the folder
 * of its perf map) when it was written since the process started: one left
 * by an earlier process with the same pid would name code wrongly. -1
 * otherwise. */
static int open_current_file(const struct target_process *target, const char *name)
{
	char directory[PATH_MAX], path[PATH_MAX + 64];
	struct stat status;
	int fd;

	runtime_perfmap_directory(target->pid, directory, sizeof(directory));
	snprintf(path, sizeof(path), "%s/%s", directory, name);
	fd = target_file_open(target->root_fd, path, 0); /* a regular file, or -1 */
	if (fd >= 0 && (fstat(fd, &status) < 0 || status.st_mtime + 1 < target->start_time)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Whether the target wrote its runtime file `format` (with its pid in its
 * namespace) since it started. */
static bool has_current_file(const struct target_process *target, const char *format)
{
	char name[32];
	int fd;

	snprintf(name, sizeof(name), format, (int)target->namespace_pid);
	fd = open_current_file(target, name);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static bool has_current_perfmap(const struct target_process *target)
{
	return has_current_file(target, "perf-%d.map");
}

/* A current jitdump that ends where its last record ends: .NET's own
 * (DOTNET_PerfMapEnabled=1 or 2) stops inside the first 64 KB stub block
 * unless stubs are logged one by one (DOTNET_PerfMapStubGranularity). */
static bool has_whole_jitdump(const struct target_process *target)
{
	struct jitdump_summary summary = {0};
	struct jitdump *dump;
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "jit-%d.dump", (int)target->namespace_pid);
	fd = open_current_file(target, name);
	if (fd < 0)
		return false;
	if ((dump = jitdump_new_framing()) && jitdump_read_more(dump, fd, RUNTIME_FILE_LIMIT) == 0)
		jitdump_summarize(dump, &summary);
	jitdump_free(dump);
	close(fd);
	return summary.valid && !summary.error && !summary.missing_bytes &&
	       summary.bytes < RUNTIME_FILE_LIMIT && summary.code_loads > 0;
}

/* The socket `name` in the target's `directory`. O_NOFOLLOW: a symlink
 * planted by the target is refused, not followed to some socket of the
 * profiler's machine. */
static int open_socket(const struct target_process *target, const char *directory, const char *name)
{
	char path[PATH_MAX + NAME_MAX + 2];
	struct stat status;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", directory, name);
	fd = target_root_openat(target->root_fd, path, O_PATH | O_NOFOLLOW);
	if (fd >= 0 && (fstat(fd, &status) < 0 || !S_ISSOCK(status.st_mode))) {
		close(fd);
		errno = ENOTSOCK;
		return -1;
	}
	return fd;
}

/* The name of the newest socket of the target's pid in its `directory`,
 * for when its start time cannot be read. 0, or -1 with errno. */
static int find_newest_socket(const struct target_process *target, const char *directory,
			      char *name, size_t size)
{
	char prefix[48];
	unsigned long long best_key = 0, key;
	struct dirent *entry;
	DIR *tmp;
	int fd;

	fd = target_root_openat(target->root_fd, directory[0] ? directory : "/",
				O_RDONLY | O_DIRECTORY);
	if (fd < 0 || !(tmp = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(prefix, sizeof(prefix), "dotnet-diagnostic-%d-", (int)target->namespace_pid);
	name[0] = '\0';
	while ((entry = readdir(tmp))) {
		char *end;

		if (strncmp(entry->d_name, prefix, strlen(prefix)))
			continue;
		key = strtoull(entry->d_name + strlen(prefix), &end, 10);
		if (strcmp(end, "-socket") || key < best_key)
			continue;
		best_key = key;
		snprintf(name, size, "%s", entry->d_name);
	}
	closedir(tmp);
	if (!name[0]) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

/* The socket is $TMPDIR/dotnet-diagnostic-PID-KEY-socket (/tmp without
 * TMPDIR), KEY the runtime's start time in clock ticks after boot. Sockets
 * of earlier processes that had the same pid stay there when they were
 * killed: only the target's own key is taken, by name (listing a /tmp of
 * thousands of entries cost more than the rest of the IPC), or the newest
 * when its start time cannot be read. */
int dotnet_open_diagnostic_socket(const struct target_process *target)
{
	unsigned long long own_key = target_process_start_ticks(target->pid);
	char directory[PATH_MAX], name[NAME_MAX + 1];

	runtime_socket_directory(target->pid, directory, sizeof(directory));
	if (own_key)
		snprintf(name, sizeof(name), "dotnet-diagnostic-%d-%llu-socket",
			 (int)target->namespace_pid, own_key);
	else if (find_newest_socket(target, directory, name, sizeof(name)) < 0)
		return -1;
	return open_socket(target, directory, name);
}

/* One IPC command over the socket behind `socket_handle` (one command per
 * connection): sends `request`, reads the reply's header into `reply` and
 * as much of its payload as fits in `reply_size`. Returns the bytes read, or
 * -1 with a reason in `why`. */
static ssize_t ipc_call(int socket_handle, const void *request, size_t request_size, void *reply,
			size_t reply_size, char *why, size_t why_size)
{
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	struct timeval timeout = {.tv_sec = 3};
	struct ipc_header *header = reply;
	int connection = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ssize_t received = -1, payload = 0;

	/* Connecting through the handle's /proc/self/fd link reaches exactly
	 * the socket that was opened inside the target's root. */
	snprintf(address.sun_path, sizeof(address.sun_path), "/proc/self/fd/%d", socket_handle);
	if (connection >= 0) {
		setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
		setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
	}
	if (connection < 0 ||
	    connect(connection, (struct sockaddr *)&address, sizeof(address)) < 0 ||
	    send(connection, request, request_size, MSG_NOSIGNAL) != (ssize_t)request_size ||
	    (received = recv(connection, reply, sizeof(*header), MSG_WAITALL)) < 0) {
		snprintf(why, why_size, "the diagnostics socket: %s", strerror(errno));
		if (connection >= 0)
			close(connection);
		return -1;
	}
	if ((size_t)received == sizeof(*header) && header->size > sizeof(*header))
		payload =
		    recv(connection, (char *)reply + sizeof(*header),
			 (header->size < reply_size ? header->size : reply_size) - sizeof(*header),
			 MSG_WAITALL);
	close(connection);
	if ((size_t)received < sizeof(*header) || memcmp(header->magic, IPC_MAGIC, 14) ||
	    header->command_set != SERVER_RESPONSE || payload < 0) {
		snprintf(why, why_size, "the runtime gave no valid answer");
		return -1;
	}
	return received + payload;
}

/* Sends EnablePerfMap over the socket behind `socket_handle`. Returns 0, or
 * -1 with a reason in `why`. */
static int request_perfmap(int socket_handle, char *why, size_t why_size)
{
	struct {
		struct ipc_header header;
		uint32_t perfmap_type;
	} __attribute__((packed)) request = {
	    .header = {IPC_MAGIC, sizeof(request), PROCESS_COMMAND_SET, ENABLE_PERFMAP, 0},
	    .perfmap_type = PERFMAP_AND_JITDUMP,
	};
	unsigned char reply[sizeof(struct ipc_reply)];
	ssize_t length =
	    ipc_call(socket_handle, &request, sizeof(request), reply, sizeof(reply), why, why_size);

	if (length < 0)
		return -1;
	return dotnet_diagnostics_check_reply(reply, (size_t)length, why, why_size);
}

int dotnet_rewrite_runtime_files(const struct target_process *target, char *why, size_t why_size)
{
	int socket_handle = dotnet_open_diagnostic_socket(target), status;

	if (socket_handle < 0) {
		char directory[PATH_MAX];

		runtime_socket_directory(target->pid, directory, sizeof(directory));
		snprintf(why, why_size, "no usable diagnostics socket in its %s (%s)",
			 directory[0] ? directory : "/", strerror(errno));
		return -1;
	}
	status = request_perfmap(socket_handle, why, why_size);
	close(socket_handle);
	return status;
}

/* The target's environment (/proc/PID/environ, NUL-separated), at most
 * ENVIRONMENT_LIMIT bytes of it, with a NUL after them; NULL when it
 * cannot be read. */
static char *read_environment(pid_t pid, size_t *size)
{
	char path[64];
	char *environment;
	ssize_t got = 1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	environment = xmalloc(ENVIRONMENT_LIMIT + 1);
	*size = 0;
	while (*size < ENVIRONMENT_LIMIT && got > 0) {
		got = read(fd, environment + *size, ENVIRONMENT_LIMIT - *size);
		if (got > 0)
			*size += (size_t)got;
		else if (got < 0 && errno == EINTR)
			got = 1;
	}
	close(fd);
	if (got < 0 || !*size) { /* unreadable, or a process without one (a zombie) */
		free(environment);
		return NULL;
	}
	environment[*size] = '\0';
	return environment;
}

/* The value of `name` in `environment` (`size` bytes, then a NUL), or NULL. */
static const char *environment_value(const char *environment, size_t size, const char *name)
{
	size_t length = strlen(name);

	for (size_t at = 0; at < size; at += strlen(environment + at) + 1)
		if (!strncmp(environment + at, name, length) && environment[at + length] == '=')
			return environment + at + length + 1;
	return NULL;
}

/* Whether the target's owner turned its perf map or jitdump on: its
 * environment sets DOTNET_PerfMapEnabled (else COMPlus_PerfMapEnabled) to
 * anything but 0; where its environment cannot be read, whether it wrote
 * either file since it started. Such a target is left writing them. */
static bool writes_perfmap_itself(const struct target_process *target)
{
	size_t size;
	char *environment = read_environment(target->pid, &size), *end;
	const char *value;
	bool set;

	if (!environment)
		return has_current_perfmap(target) || has_current_file(target, "jit-%d.dump");
	/* The runtime reads DOTNET_ before COMPlus_, the number as hex, and
	 * takes what it cannot parse for 0. */
	value = environment_value(environment, size, "DOTNET_PerfMapEnabled");
	if (!value)
		value = environment_value(environment, size, "COMPlus_PerfMapEnabled");
	set = value && strtoul(value, &end, 16) != 0 && end != value && !*end;
	free(environment);
	return set;
}

bool dotnet_ensure_perfmap_else(const struct target_process *target, FILE *log, char *why,
				size_t why_size, bool *unnamed)
{
	bool itself;

	*unnamed = false;
	if (target->root_fd < 0 || !target->runs_dotnet)
		return false;
	if (has_whole_jitdump(target)) {
		fprintf(log, "jitdump: the target writes a whole one already; left as it is\n");
		return false;
	}
	itself = writes_perfmap_itself(target); /* before the files are (re)written */
	if (dotnet_rewrite_runtime_files(target, why, why_size) == 0) {
		fprintf(stderr,
			"profcpu: turned on the perf map and jitdump of .NET pid %d through its "
			"diagnostics socket: JIT and ReadyToRun frames will be named\n",
			(int)target->pid);
		fprintf(log,
			"perf map and jitdump: (re)written whole through the diagnostics IPC; %s\n",
			itself ? "its owner turned them on (DOTNET_PerfMapEnabled): left on when "
				 "done"
			       : "turned off again when done");
		return !itself;
	}
	if (has_current_perfmap(target))
		report_warning("ReadyToRun (precompiled) frames of .NET pid %d may show only as "
			       "[assembly.dll]: its jitdump is not whole and %s",
			       (int)target->pid, why);
	else
		*unnamed = true;
	return false;
}

bool dotnet_ensure_perfmap(const struct target_process *target, FILE *log)
{
	char why[PATH_MAX + 128];
	bool unnamed,
	    switched = dotnet_ensure_perfmap_else(target, log, why, sizeof(why), &unnamed);

	if (unnamed)
		report_warning("JIT frames of .NET pid %d are named only from the method rundown "
			       "of its runtime events (none with -nolttng): it writes no perf map "
			       "and %s; start it with DOTNET_PerfMapEnabled=1",
			       (int)target->pid, why);
	return switched;
}

/* Connects to the diagnostics socket of `process`, if it still runs, and
 * sends DisablePerfMap without waiting for the answer. Returns the
 * connection (non-blocking), or -1: it exited, has no socket, or takes no
 * connection now (its backlog full: a runtime stopped long, or hostile). */
static int send_disable(const struct switched_perfmap *process)
{
	struct ipc_header request = {IPC_MAGIC, sizeof(request), PROCESS_COMMAND_SET,
				     DISABLE_PERFMAP, 0};
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	struct target_process target = {.pid = process->pid, .root_fd = -1, .pidfd = -1};
	int socket_handle, connection;

	if (target_process_start_ticks(process->pid) != process->start_ticks)
		return -1;
	target.namespace_pid = target_process_namespace_pid(process->pid);
	target.root_fd = target_root_open(process->pid);
	/* Checked again: the root opened is that of the same process. */
	socket_handle =
	    target.root_fd >= 0 && target_process_start_ticks(process->pid) == process->start_ticks
		? dotnet_open_diagnostic_socket(&target)
		: -1;
	if (target.root_fd >= 0)
		close(target.root_fd);
	if (socket_handle < 0)
		return -1;
	snprintf(address.sun_path, sizeof(address.sun_path), "/proc/self/fd/%d", socket_handle);
	connection = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (connection >= 0 &&
	    (connect(connection, (struct sockaddr *)&address, sizeof(address)) < 0 ||
	     send(connection, &request, sizeof(request), MSG_NOSIGNAL) !=
		 (ssize_t)sizeof(request))) {
		close(connection);
		connection = -1;
	}
	close(socket_handle);
	return connection;
}

/* One DisablePerfMap sent, its answer awaited. */
struct disable_call {
	int connection; /* -1: none sent, or answered */
	size_t got;
	unsigned char reply[sizeof(struct ipc_reply)];
};

/* Reads what came on `call`'s connection; once the answer is whole, or
 * the connection closed, checks it, says it, and closes the connection.
 * Returns whether the runtime said yes. */
static bool read_answer(struct disable_call *call, pid_t pid, bool say, FILE *log)
{
	ssize_t got = recv(call->connection, call->reply + call->got,
			   sizeof(call->reply) - call->got, MSG_DONTWAIT);
	char why[64];
	bool done;

	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (got > 0)
		call->got += (size_t)got;
	if (got > 0 && call->got < sizeof(call->reply))
		return false;
	close(call->connection);
	call->connection = -1;
	done = dotnet_diagnostics_check_reply(call->reply, call->got, why, sizeof(why)) == 0;
	if (done && say)
		fprintf(stderr,
			"profcpu: turned off the perf map and jitdump of .NET pid %d again: "
			"its files stay, and grow no more\n",
			(int)pid);
	if (done)
		fprintf(log, "perf map and jitdump of pid %d: turned off again (DisablePerfMap)\n",
			(int)pid);
	else
		fprintf(log, "perf map and jitdump of pid %d: not turned off: %s\n", (int)pid, why);
	return done;
}

size_t dotnet_turn_off_perfmaps(const struct switched_perfmap *processes, size_t count,
				int timeout_ms, bool say, FILE *log)
{
	struct disable_call *calls = xcalloc(count ? count : 1, sizeof(*calls));
	struct pollfd *polled = xcalloc(count ? count : 1, sizeof(*polled));
	uint64_t deadline = clock_nanoseconds(CLOCK_MONOTONIC) + (uint64_t)timeout_ms * 1000000;
	size_t confirmed = 0, waiting = 0;

	for (size_t i = 0; i < count; i++)
		if ((calls[i].connection = send_disable(&processes[i])) >= 0)
			waiting++;
	while (waiting) {
		uint64_t now = clock_nanoseconds(CLOCK_MONOTONIC);
		nfds_t watched = 0;

		if (now >= deadline)
			break;
		for (size_t i = 0; i < count; i++)
			if (calls[i].connection >= 0)
				polled[watched++] =
				    (struct pollfd){.fd = calls[i].connection, .events = POLLIN};
		if (poll(polled, watched, (int)((deadline - now + 999999) / 1000000)) < 0 &&
		    errno != EINTR)
			break;
		for (size_t i = 0; i < count; i++) {
			if (calls[i].connection < 0)
				continue;
			if (read_answer(&calls[i], processes[i].pid, say, log))
				confirmed++;
			if (calls[i].connection < 0)
				waiting--;
		}
	}
	for (size_t i = 0; i < count; i++)
		if (calls[i].connection >= 0) {
			fprintf(log,
				"perf map and jitdump of pid %d: no answer within %d ms; the "
				"request waits in its socket (a stopped process reads it when "
				"it runs again)\n",
				(int)processes[i].pid, timeout_ms);
			close(calls[i].connection);
		}
	free(polled);
	free(calls);
	return confirmed;
}

/* Reads one string of a ProcessInfo2 payload at `*cursor` (a uint32 count of
 * UTF-16 units, the NUL included, then the units) into `text`, ASCII kept
 * and anything else as '?'. Returns false when it runs past `end`. */
static bool read_ipc_string(const uint8_t **cursor, const uint8_t *end, char *text, size_t size)
{
	uint32_t units;
	size_t kept = 0;

	if (end - *cursor < 4)
		return false;
	memcpy(&units, *cursor, 4);
	*cursor += 4;
	if ((size_t)(end - *cursor) / 2 < units)
		return false;
	for (uint32_t i = 0; i < units; i++) {
		uint16_t unit = (uint16_t)((*cursor)[2 * i] | (*cursor)[2 * i + 1] << 8);

		if (unit && kept + 1 < size)
			text[kept++] = unit >= 0x20 && unit < 0x7f ? (char)unit : '?';
	}
	text[kept] = '\0';
	*cursor += 2 * (size_t)units;
	return true;
}

bool dotnet_runtime_version(const struct target_process *target, char *version, size_t size)
{
	struct ipc_header request = {IPC_MAGIC, sizeof(request), PROCESS_COMMAND_SET, PROCESS_INFO2,
				     0};
	uint8_t reply[8192];
	const uint8_t *cursor = reply + sizeof(request) + 8 + 16, *end; /* after pid, cookie */
	char why[128] = "", ignored[8];
	ssize_t length;
	int socket_handle = dotnet_open_diagnostic_socket(target);

	if (socket_handle < 0)
		return false;
	length = ipc_call(socket_handle, &request, sizeof(request), reply, sizeof(reply), why,
			  sizeof(why));
	close(socket_handle);
	if (length < (ssize_t)(sizeof(request) + 24) ||
	    ((struct ipc_header *)reply)->command_id != RESPONSE_OK)
		return false;
	end = reply + length;
	/* command line, OS, architecture, entry assembly, then the version */
	for (int field = 0; field < 4; field++)
		if (!read_ipc_string(&cursor, end, ignored, sizeof(ignored)))
			return false;
	if (!read_ipc_string(&cursor, end, version, size) || !version[0])
		return false;
	version[strcspn(version, "+")] = '\0'; /* drop the commit after '+' */
	return true;
}
