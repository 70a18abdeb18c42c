/* Kubernetes' names (RFC 1123), as a pod's namespace, a pod's and a
 * container's names must be: what is not cannot be a label. */
#ifndef PROFCPU_KUBERNETES_NAME_H
#define PROFCPU_KUBERNETES_NAME_H

#include <stdbool.h>

#define POD_NAME_MAX  253 /* a DNS subdomain */
#define NAMESPACE_MAX 63  /* a DNS label */

/* A DNS label (lower-case letters, digits and '-', starting and ending
 * with a letter or digit, at most 63), or with `dots` a DNS subdomain
 * (such labels joined by '.', at most 253). */
bool kubernetes_name_valid(const char *name, bool dots);

#endif
