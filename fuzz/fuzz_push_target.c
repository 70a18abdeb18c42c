/* A receiver's URL as the user gives it, user info and all: what
 * push_target splits into the URL it prints and the basic auth it sends
 * (the user info percent-decoded). The printed URL must hold no '@' of
 * the user info. */
#include "push_target.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *url = malloc(size + 1);
	struct push_target target;

	if (!url)
		return 0;
	memcpy(url, data, size);
	url[size] = '\0';
	free(push_target_redact(url));
	if (push_target_make(url, &(struct push_target_options){0}, &target) == 0)
		push_target_release(&target);
	free(url);
	return 0;
}
