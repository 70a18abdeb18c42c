#include "watch_otlp.h"
#include "otlp_profiles.h"
#include "process_profiles.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>

int watch_otlp_send(const struct push_target *target, double timeout, const char *dir,
		    const struct resolver_config *config, const char *service)
{
	char *perf_data = xasprintf("%s/perf.data", dir), why[512] = "";
	struct resolver *resolver = resolver_new(config);
	struct process_profiles profiles;
	struct otlp_process *resources;
	unsigned char *body;
	size_t size;
	enum push_result result;
	int status = -1;

	if (process_profiles_read(perf_data, resolver, NULL, NULL, &profiles) < 0) {
		report_error("no OTLP profiles sent for %s: its perf.data cannot be read", dir);
		goto done;
	}
	resources = xcalloc(profiles.count + 1, sizeof(*resources));
	for (size_t i = 0; i < profiles.count; i++) {
		const struct process_profile *process = &profiles.processes[i];

		resources[i] =
		    (struct otlp_process){.index = i,
					  .pid = process->pid,
					  .executable = process->process_name,
					  .service = service ? service : process->process_name,
					  .namespace = "",
					  .pod = "",
					  .container = ""};
	}
	body = otlp_profiles_encode(&profiles, resources, profiles.count, &size);
	result = otlp_profiles_send(target, body, size, timeout, NULL, why, sizeof(why));
	if (result == PUSH_SENT)
		status = 0;
	else
		report_error("cannot send the capture %s as OTLP profiles to %s: %s", dir,
			     target->url, why);
	free(body);
	free(resources);
	process_profiles_release(&profiles);
done:
	resolver_free(resolver);
	free(perf_data);
	return status;
}
