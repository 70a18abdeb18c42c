#include "agent_spool.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_PREFIX "period-"

static void remove_period(const char *dir)
{
	DIR *directory = opendir(dir);
	struct dirent *entry;

	while (directory && (entry = readdir(directory)))
		if (strcmp(entry->d_name, ".") && strcmp(entry->d_name, ".."))
			unlinkat(dirfd(directory), entry->d_name, 0);
	if (directory)
		closedir(directory);
	rmdir(dir);
}

static void push_back(struct agent_spool *spool, char *dir)
{
	grow_array((void **)&spool->periods, &spool->capacity, spool->count + 1,
		   sizeof(*spool->periods));
	spool->periods[spool->count++] = dir;
}

static int is_period(const struct dirent *entry)
{
	return !strncmp(entry->d_name, PERIOD_PREFIX, strlen(PERIOD_PREFIX));
}

int agent_spool_open(struct agent_spool *spool)
{
	struct dirent **entries;
	int count;

	if (mkdir(spool->dir, 0700) < 0 && errno != EEXIST) {
		report_error("cannot make the spool folder %s: %s; choose another with --spool DIR",
			     spool->dir, strerror(errno));
		return -1;
	}
	/* Periods a stopped agent could not send: sent first. */
	count = scandir(spool->dir, &entries, is_period, alphasort);
	for (int i = 0; i < count; i++) {
		push_back(spool, xasprintf("%s/%s", spool->dir, entries[i]->d_name));
		free(entries[i]);
	}
	if (count > 0)
		fprintf(stderr, "profcpu: %d periods an earlier run left in %s go first\n", count,
			spool->dir);
	free(count >= 0 ? entries : NULL);
	return 0;
}

char *agent_spool_new_period(struct agent_spool *spool)
{
	struct timespec now;
	char *dir;

	clock_gettime(CLOCK_REALTIME, &now);
	/* Names sort in time order: a new run's after an old run's. */
	dir = xasprintf("%s/" PERIOD_PREFIX "%013lld-%06u", spool->dir,
			(long long)now.tv_sec * 1000 + now.tv_nsec / 1000000, spool->sequence++);
	if (mkdir(dir, 0700) < 0) {
		report_error("cannot make %s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	return dir;
}

/* The periods whose folders are gone were sent. */
static void forget_sent(struct agent_spool *spool)
{
	size_t kept = 0;

	for (size_t i = 0; i < spool->count; i++) {
		if (access(spool->periods[i], F_OK) == 0)
			spool->periods[kept++] = spool->periods[i];
		else
			free(spool->periods[i]);
	}
	spool->count = kept;
}

static void say_receiver_down(struct agent_spool *spool)
{
	char *path = xasprintf("%s/%s", spool->dir, AGENT_SEND_WHY_FILE), why[512] = "";
	FILE *file = fopen(path, "re");

	if (file) {
		if (fgets(why, sizeof(why), file))
			why[strcspn(why, "\n")] = '\0';
		fclose(file);
	}
	free(path);
	fprintf(stderr,
		"profcpu: cannot push to %s: %s; keeping up to %zu periods in %s until it takes "
		"them\n",
		spool->send->url, why, spool->max_periods, spool->dir);
}

/* What the sender that ended with `status` did. */
static void sender_ended(struct agent_spool *spool, int status)
{
	bool retry = WIFEXITED(status) && WEXITSTATUS(status) == AGENT_SEND_RETRY_LATER;

	spool->sender = 0;
	if (!WIFEXITED(status)) {
		/* The same period would crash the next sender too. */
		report_error("the sender of %s died (%s): that period is dropped",
			     spool->count ? spool->periods[0] : "a period",
			     WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "?");
		if (spool->count)
			remove_period(spool->periods[0]);
	}
	forget_sent(spool);
	if (retry && !spool->receiver_down)
		say_receiver_down(spool);
	else if (!retry && spool->receiver_down)
		fprintf(stderr, "profcpu: %s takes profiles again\n", spool->send->url);
	spool->receiver_down = retry;
}

static void reap_sender(struct agent_spool *spool, bool wait)
{
	int status;

	if (spool->sender && waitpid(spool->sender, &status, wait ? 0 : WNOHANG) == spool->sender)
		sender_ended(spool, status);
}

/* Past the bound the oldest go; only while no sender holds them. */
static void drop_oldest(struct agent_spool *spool)
{
	size_t excess = spool->count > spool->max_periods ? spool->count - spool->max_periods : 0;

	for (size_t i = 0; i < excess; i++)
		remove_period(spool->periods[i]);
	if (excess && !spool->said_dropping) {
		fprintf(stderr,
			"profcpu: %zu periods wait for %s, the most kept (--buffer-periods): the "
			"oldest are dropped from now on (said once; counted at the end)\n",
			spool->count, spool->send->url);
		spool->said_dropping = true;
	}
	spool->dropped += excess;
	if (excess)
		forget_sent(spool);
}

static void start_sender(struct agent_spool *spool)
{
	pid_t child;

	if (spool->sender || spool->count == 0)
		return;
	drop_oldest(spool);
	fflush(stdout);
	fflush(stderr);
	child = fork();
	if (child < 0) {
		report_error("cannot start a sender: %s; the periods wait", strerror(errno));
		return;
	}
	if (child == 0) {
		/* A stop of the agent is for the sampler: the sender finishes. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		int status = agent_send_periods(spool->send, spool->periods, spool->count);

		fflush(stdout);
		fflush(stderr);
		_exit(status);
	}
	spool->sender = child;
	spool->sent_rounds++;
}

void agent_spool_add(struct agent_spool *spool, const char *dir)
{
	push_back(spool, xstrdup(dir));
	reap_sender(spool, false);
	start_sender(spool);
}

void agent_spool_finish(struct agent_spool *spool)
{
	reap_sender(spool, true);
	start_sender(spool);
	reap_sender(spool, true);
	if (spool->dropped)
		fprintf(stderr, "profcpu: %llu periods were dropped while %s took none\n",
			spool->dropped, spool->send->url);
	if (spool->count)
		fprintf(stderr,
			"profcpu: %zu periods stay in %s: the next profcpu agent with --spool %s "
			"sends them\n",
			spool->count, spool->dir, spool->dir);
}

void agent_spool_close(struct agent_spool *spool)
{
	for (size_t i = 0; i < spool->count; i++)
		free(spool->periods[i]);
	free(spool->periods);
	spool->periods = NULL;
	spool->count = spool->capacity = 0;
}
