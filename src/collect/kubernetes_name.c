#include "kubernetes_name.h"

#include <ctype.h>
#include <string.h>

static bool valid_label(const char *start, size_t length)
{
	if (length == 0 || length > 63 || start[0] == '-' || start[length - 1] == '-')
		return false;
	for (size_t i = 0; i < length; i++)
		if (!(islower((unsigned char)start[i]) || isdigit((unsigned char)start[i]) ||
		      start[i] == '-'))
			return false;
	return true;
}

bool kubernetes_name_valid(const char *name, bool dots)
{
	size_t length = strlen(name);

	if (!dots)
		return valid_label(name, length);
	if (length > POD_NAME_MAX)
		return false;
	for (const char *label = name;;) {
		const char *dot = strchr(label, '.');
		size_t size = dot ? (size_t)(dot - label) : strlen(label);

		if (!valid_label(label, size))
			return false;
		if (!dot)
			return true;
		label = dot + 1;
	}
}
