#include "serve_watch.h"
#include "serve_child.h"
#include "process_listing.h"
#include "target_process.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* GET /watch names at most this many captures (a watch of months). */
#define MAX_CAPTURES_LISTED 1000

/* watch's options as serve passes them on, in this order. */
#define WATCH_OPTION_COUNT 11

struct serve_watch {
	struct serve_watch_options options;
	char *output_dir;
	pid_t child;
	int pidfd;	/* signals exactly this child; -1 before Linux 5.3 (see send_signal) */
	FILE *messages; /* the child's stderr */
	pthread_t reader;
	pthread_mutex_t lock;
	/* Under lock: what the watch said so far. */
	bool running;
	unsigned triggers;
	struct string_list captures; /* their names (owned) */
	size_t capture_count;
	char last_message[512];
	char ended[96]; /* how it ended, once it has */
};

struct watch_option {
	const char *name; /* as watch takes it */
	double value;	  /* NAN: not given */
};

static void list_watch_options(const struct serve_watch_options *options,
			       struct watch_option list[WATCH_OPTION_COUNT])
{
	const struct watch_option all[WATCH_OPTION_COUNT] = {
	    {"--before", options->before},
	    {"--after", options->after},
	    {"--cpu", options->cpu},
	    {"--exceptions", options->exceptions},
	    {"--gc-pause", options->gc_pause},
	    {"--contention", options->contention},
	    {"--threadpool-queue", options->threadpool_queue},
	    {"--cooldown", options->cooldown},
	    {"--max-captures", options->max_captures},
	    {"--max-disk", options->max_disk},
	    {"--frequency", options->frequency},
	};

	memcpy(list, all, sizeof(all));
}

int serve_watch_options_resolve(struct serve_watch_options *options)
{
	const char *name = options->target;
	char *end, wanted[16], pids[96] = "";
	struct process_entry *processes;
	size_t count, matches = 0;

	errno = 0;
	options->pid = strtol(name, &end, 10);
	if (!name[0] || (name[0] >= '0' && name[0] <= '9' && !*end)) {
		if (name[0] && !errno && options->pid >= 1 && options->pid <= 0x7fffffff)
			return 0;
		report_error("invalid --watch '%s': give a pid or a process name", name);
		return 2;
	}
	/* As the kernel keeps a name: its first 15 characters. */
	snprintf(wanted, sizeof(wanted), "%s", name);
	count = target_process_list(&processes);
	for (size_t i = 0; i < count; i++)
		if (!strcmp(processes[i].comm, wanted)) {
			if (matches++ < 6)
				snprintf(pids + strlen(pids), sizeof(pids) - strlen(pids), "%s%d",
					 matches > 1 ? ", " : "", (int)processes[i].pid);
			options->pid = processes[i].pid;
		}
	free(processes);
	if (matches == 1)
		return 0;
	if (!matches)
		report_error("--watch %s: no process has that name ('profcpu ps' lists them)",
			     name);
	else
		report_error("--watch %s: %zu processes have that name (pids %s%s): give one's pid",
			     name, matches, pids, matches > 6 ? ", ..." : "");
	return 1;
}

const char *serve_watch_options_stray(const struct serve_watch_options *options)
{
	struct watch_option list[WATCH_OPTION_COUNT];

	list_watch_options(options, list);
	for (size_t i = 0; i < WATCH_OPTION_COUNT; i++)
		if (!isnan(list[i].value))
			return list[i].name;
	return options->off_cpu ? "--off-cpu" : NULL;
}

/* "exited with status 1", "killed by signal 9 (Killed)". */
static void describe_exit(int status, char *text, size_t size)
{
	if (WIFSIGNALED(status))
		snprintf(text, size, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(text, size, "exited with status %d", WEXITSTATUS(status));
}

static int wait_for_child(pid_t child)
{
	int status = 0;

	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* Keeps what one line of the watch says: a rule that fired, a capture
 * written ("profcpu: capture DIR/NAME: 812 samples"), the last message. */
static void hear_line(struct serve_watch *watch, char *line)
{
	static const char prefix[] = "profcpu: ", capture[] = "profcpu: capture ";
	size_t folder_length = strlen(watch->output_dir);
	const char *message = line;

	line[strcspn(line, "\n")] = '\0';
	if (!line[0])
		return;
	if (!strncmp(message, prefix, strlen(prefix)))
		message += strlen(prefix);
	pthread_mutex_lock(&watch->lock);
	snprintf(watch->last_message, sizeof(watch->last_message), "%s", message);
	if (!strncmp(line, "profcpu: rule ", 14) && strstr(line, " fired: "))
		watch->triggers++;
	if (!strncmp(line, capture, strlen(capture)) &&
	    !strncmp(line + strlen(capture), watch->output_dir, folder_length) &&
	    line[strlen(capture) + folder_length] == '/') {
		const char *name = line + strlen(capture) + folder_length + 1;

		watch->capture_count++;
		if (watch->captures.count < MAX_CAPTURES_LISTED)
			string_list_append(&watch->captures,
					   xasprintf("%.*s", (int)strcspn(name, ":"), name));
	}
	pthread_mutex_unlock(&watch->lock);
}

/* Sends the watch `signal_number`, while it runs; call under lock. */
static void send_signal(const struct serve_watch *watch, int signal_number)
{
	if (!watch->running)
		return;
	/* Without a pidfd, kill() is safe too: the child is reaped under the
	 * lock, so its pid is not another process's yet. */
	if (watch->pidfd < 0 ||
	    syscall(SYS_pidfd_send_signal, watch->pidfd, signal_number, NULL, 0) < 0)
		kill(watch->child, signal_number);
}

/* Passes each line of the watch on to serve's stderr and hears it, until
 * the watch ends; then reaps it. */
static void *read_messages(void *context)
{
	struct serve_watch *watch = context;
	char *line = NULL, ended[sizeof(watch->ended)];
	size_t size = 0;
	siginfo_t exited;

	while (getline(&line, &size, watch->messages) >= 0) {
		fputs(line, stderr);
		hear_line(watch, line);
	}
	free(line);
	/* Waits for its exit without reaping it, then reaps it (at once) under
	 * the lock that send_signal takes. */
	while (waitid(P_PID, (id_t)watch->child, &exited, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&watch->lock);
	describe_exit(wait_for_child(watch->child), ended, sizeof(ended));
	watch->running = false;
	snprintf(watch->ended, sizeof(watch->ended), "%s", ended);
	pthread_mutex_unlock(&watch->lock);
	fprintf(stderr, "profcpu: serve: the watch of pid %ld ended: %s\n", watch->options.pid,
		ended);
	return NULL;
}

/* Spawns `profcpu watch` with its stderr into a pipe: the child's pid, or
 * -1 after one line. */
static pid_t spawn_watch(const struct serve_watch *watch, int *messages_fd)
{
	struct watch_option list[WATCH_OPTION_COUNT];
	char pid_text[24], values[WATCH_OPTION_COUNT][32];
	const char *arguments[9 + 2 * WATCH_OPTION_COUNT];
	size_t count = 0;
	int spawned;
	pid_t child;

	snprintf(pid_text, sizeof(pid_text), "%ld", watch->options.pid);
	arguments[count++] = "profcpu";
	arguments[count++] = "watch";
	arguments[count++] = "-pid";
	arguments[count++] = pid_text;
	list_watch_options(&watch->options, list);
	for (size_t i = 0; i < WATCH_OPTION_COUNT; i++)
		if (!isnan(list[i].value)) {
			snprintf(values[i], sizeof(values[i]), "%.15g", list[i].value);
			arguments[count++] = list[i].name;
			arguments[count++] = values[i];
		}
	if (watch->options.off_cpu)
		arguments[count++] = "--off-cpu";
	arguments[count++] = "-o";
	arguments[count++] = watch->output_dir;
	arguments[count] = NULL;
	if ((spawned = serve_child_spawn(arguments, false, &child, messages_fd)) != 0) {
		report_error("serve cannot start the watch: %s", strerror(spawned));
		return -1;
	}
	return child;
}

/* Passes on the watch's lines until it says it watches (true) or ends
 * (false, reaped, with its exit status in *status). */
static bool wait_until_watching(struct serve_watch *watch, int *status)
{
	char *line = NULL;
	size_t size = 0;
	bool watching = false;

	while (!watching && getline(&line, &size, watch->messages) >= 0) {
		fputs(line, stderr);
		watching = !strncmp(line, "profcpu: watching;", 18);
		hear_line(watch, line);
	}
	free(line);
	if (!watching)
		*status = wait_for_child(watch->child);
	return watching;
}

static void free_watch(struct serve_watch *watch)
{
	if (watch->messages)
		fclose(watch->messages);
	if (watch->pidfd >= 0)
		close(watch->pidfd);
	for (size_t i = 0; i < watch->captures.count; i++)
		free((char *)watch->captures.items[i]);
	string_list_clear(&watch->captures);
	pthread_mutex_destroy(&watch->lock);
	free(watch->output_dir);
	free(watch);
}

struct serve_watch *serve_watch_start(const struct serve_watch_options *options,
				      const char *output_dir, int *exit_status)
{
	struct serve_watch *watch = xcalloc(1, sizeof(*watch));
	int messages_fd, status;

	*watch = (struct serve_watch){
	    .options = *options, .output_dir = xstrdup(output_dir), .pidfd = -1, .running = true};
	pthread_mutex_init(&watch->lock, NULL);
	*exit_status = 1;
	if ((watch->child = spawn_watch(watch, &messages_fd)) < 0) {
		free_watch(watch);
		return NULL;
	}
	watch->messages = fdopen(messages_fd, "r");
	watch->pidfd = (int)syscall(SYS_pidfd_open, watch->child, 0);
	if (!wait_until_watching(watch, &status)) {
		char ended[96];

		/* The watch said why, in one line, unless it died. */
		describe_exit(status, ended, sizeof(ended));
		if (!watch->last_message[0] || WIFSIGNALED(status))
			report_error("serve --watch %ld: the watch did not start (%s)",
				     options->pid, ended);
		*exit_status = WIFEXITED(status) && WEXITSTATUS(status) == 2 ? 2 : 1;
		free_watch(watch);
		return NULL;
	}
	if ((errno = pthread_create(&watch->reader, NULL, read_messages, watch))) {
		report_error("serve cannot follow the watch: %s", strerror(errno));
		send_signal(watch, SIGTERM);
		fclose(watch->messages);
		watch->messages = NULL;
		wait_for_child(watch->child);
		free_watch(watch);
		return NULL;
	}
	return watch;
}

bool serve_watch_trigger(struct serve_watch *watch, char *ended, size_t ended_size)
{
	bool running;

	pthread_mutex_lock(&watch->lock);
	running = watch->running;
	if (running)
		send_signal(watch, SIGUSR1);
	else
		snprintf(ended, ended_size, "%s (its last message: %s)", watch->ended,
			 watch->last_message);
	pthread_mutex_unlock(&watch->lock);
	return running;
}

void serve_watch_write_json(struct serve_watch *watch, FILE *out)
{
	struct watch_option list[WATCH_OPTION_COUNT];
	size_t written = 0;

	list_watch_options(&watch->options, list);
	pthread_mutex_lock(&watch->lock);
	fprintf(out, "{\"running\": %s, \"pid\": %d, \"target\": %ld, \"options\": {",
		watch->running ? "true" : "false", (int)watch->child, watch->options.pid);
	for (size_t i = 0; i < WATCH_OPTION_COUNT; i++)
		if (!isnan(list[i].value)) {
			fprintf(out, "%s", written++ ? ", " : "");
			json_write_string(out, list[i].name + strspn(list[i].name, "-"));
			fprintf(out, ": %.15g", list[i].value);
		}
	if (watch->options.off_cpu)
		fprintf(out, "%s\"off-cpu\": true", written ? ", " : "");
	fprintf(out, "}, \"triggers\": %u, \"capture_count\": %zu, \"captures\": [",
		watch->triggers, watch->capture_count);
	for (size_t i = 0; i < watch->captures.count; i++) {
		fprintf(out, "%s", i ? ", " : "");
		json_write_string(out, watch->captures.items[i]);
	}
	fprintf(out, "], \"last_message\": ");
	json_write_string(out, watch->last_message);
	fprintf(out, ", \"ended\": ");
	if (watch->running)
		fprintf(out, "null");
	else
		json_write_string(out, watch->ended);
	fprintf(out, "}\n");
	pthread_mutex_unlock(&watch->lock);
}

void serve_watch_stop(struct serve_watch *watch)
{
	if (!watch)
		return;
	pthread_mutex_lock(&watch->lock);
	send_signal(watch, SIGTERM);
	pthread_mutex_unlock(&watch->lock);
	pthread_join(watch->reader, NULL);
	free_watch(watch);
}
