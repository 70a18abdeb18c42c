/* What profcpu agent reads of a container runtime's state for a process's
 * pod labels (container_state.h), on any bytes: an OCI config's
 * annotations, and the container id to look up in a cgroup file. What is
 * found must be valid: a namespace a DNS label, a pod a DNS subdomain, a
 * uid hex digits and '-', the id 64 hex digits of the input. */
#include "container_state.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pod_labels labels = {0};
	char id[CGROUP_ID_SIZE];

	if (container_state_parse((const char *)data, size, &labels)) {
		if (!kubernetes_name_valid(labels.namespace, false) ||
		    !kubernetes_name_valid(labels.pod, true) ||
		    strspn(labels.pod_uid, "0123456789abcdef-") != strlen(labels.pod_uid) ||
		    (labels.container_name[0] &&
		     !kubernetes_name_valid(labels.container_name, false)) ||
		    labels.namespace_source != POD_LABEL_RUNTIME ||
		    labels.pod_source != POD_LABEL_RUNTIME)
			abort();
	} else if (labels.namespace[0] || labels.pod[0] ||
		   labels.namespace_source != POD_LABEL_NONE) {
		abort(); /* nothing found: nothing changed */
	}
	if (container_state_id((const char *)data, size, id) &&
	    (strlen(id) != 64 || strspn(id, "0123456789abcdef") != 64 ||
	     !memmem(data, size, id, 64)))
		abort();
	return 0;
}
