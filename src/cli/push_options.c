#include "push_options.h"
#include "pod_labels.h"
#include "util.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void add_owned(struct push_options *options, char *label)
{
	options->owned = xrealloc(options->owned, (options->owned_count + 1) * sizeof(char *));
	options->owned[options->owned_count++] = label;
}

void push_options_add_target_labels(struct push_options *options, pid_t pid, const char *comm)
{
	char host[256] = "", id[13];

	if (comm)
		add_owned(options, xasprintf("process=%s", comm));
	if (gethostname(host, sizeof(host) - 1) == 0 && host[0])
		add_owned(options, xasprintf("hostname=%s", host));
	if (pid && pod_labels_container_id(pid, id))
		add_owned(options, xasprintf("container=%s", id));
	/* A pod's containers share its hostname, the pod's name. */
	if (host[0] && getenv("KUBERNETES_SERVICE_HOST"))
		add_owned(options, xasprintf("pod=%s", host));
}

int push_options_prepare(struct push_options *options, const char *url)
{
	return push_target_make(url, &options->target_options, &options->target);
}

int push_options_push(const struct push_options *options, const char *dir)
{
	size_t count = options->owned_count + options->labels.count;
	const char **labels = xcalloc(count + 1, sizeof(*labels));
	int status;

	for (size_t i = 0; i < options->owned_count; i++)
		labels[i] = options->owned[i];
	for (size_t i = 0; i < options->labels.count; i++)
		labels[options->owned_count + i] = options->labels.items[i];
	status = pyroscope_push(dir, &(struct push_request){.target = &options->target,
							    .app_name = options->app_name,
							    .labels = labels,
							    .label_count = count,
							    .timeout = options->timeout});
	free(labels);
	return status;
}

void push_options_release(struct push_options *options)
{
	for (size_t i = 0; i < options->owned_count; i++)
		free(options->owned[i]);
	free(options->owned);
	string_list_clear(&options->labels);
	string_list_clear(&options->target_options.headers);
	push_target_release(&options->target);
	*options = (struct push_options){0};
}
