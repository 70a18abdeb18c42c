/* What profcpu agent reads of each process to label its profiles
 * (pod_labels.h), on any bytes: its cgroup file, and its hostname as a
 * pod's name with the workload taken from it. The container id must be 12
 * hex digits of the input, the workload a prefix of a valid pod name. */
#include "pod_labels.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char id[13], *name, workload[POD_NAME_MAX + 1];
	bool kubernetes;

	pod_labels_parse_cgroup((const char *)data, size, id, &kubernetes);
	if (id[0]) {
		for (size_t i = 0; i < 12; i++)
			if (!isxdigit((unsigned char)id[i]))
				abort();
		if (strlen(id) != 12 || !memmem(data, size, id, 12))
			abort();
	}
	name = strndup((const char *)data, size);
	if (!name)
		abort();
	if (kubernetes_name_valid(name, false) && !kubernetes_name_valid(name, true))
		abort(); /* a DNS label is a DNS subdomain */
	if (kubernetes_name_valid(name, true)) {
		pod_labels_workload(name, workload, sizeof(workload));
		if (!workload[0] || strncmp(workload, name, strlen(workload)))
			abort();
	}
	free(name);
	return 0;
}
