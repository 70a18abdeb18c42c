/* Readable names for .NET methods, as PerfView shows them.
 *
 * The runtime names a method in its perf map and jitdump with everything it
 * knows, return type first:
 *
 *   instance bool [System.Collections.Concurrent]
 *       System.Collections.Concurrent.ConcurrentDictionary`2[System.__Canon,
 *       Microsoft.Extensions.Primitives.StringSegment]::TryGetValue(!0,!1&)[OptimizedTier1]
 *
 * so a frame of a flame graph shows the return type and little else. The
 * readable name is "Assembly!Namespace.Type::Method":
 *
 *   System.Collections.Concurrent!System.Collections.Concurrent.
 *       ConcurrentDictionary`2[__Canon,StringSegment]::TryGetValue
 *
 * no return type, no parameters, no tier, no "/ * MT: 0x... * /" comments,
 * generic arguments without their namespaces (and left out, "[...]", when
 * the name would still be longer than MANAGED_NAME_LONG). */
#ifndef PROFCPU_MANAGED_NAME_H
#define PROFCPU_MANAGED_NAME_H

#include <stdbool.h>

/* Readable names longer than this lose their generic arguments. */
#define MANAGED_NAME_LONG 200

/* The readable name of `runtime_name` (malloc'd), with " [Tier]" appended
 * when `keep_tier` and the name has one; NULL when `runtime_name` does not
 * have the shape of a .NET method name ("... [Assembly] Type::Method(...)"),
 * as stubs, native and node names do not: show those as they are. */
char *managed_name_readable(const char *runtime_name, bool keep_tier);

#endif
