/* The JIT's maps of native code to IL offsets that a .NET runtime's events
 * carry (read from its nettrace), for the source lines of JIT frames
 * (managed_lines.h): the rundown's MethodDCEndILToNativeMap events, one per
 * piece of JIT code alive when the session ended (every tier of a method,
 * on-stack replacement included, at its own address), each beside its
 * MethodDCEndVerbose (start, size, token, module); and, when the session
 * recorded them (Verbose JIT events with the keyword 0x20000), the
 * MethodILToNativeMap events beside each MethodLoadVerbose. The modules'
 * paths come from the ModuleLoad and ModuleDCEnd events. */
#ifndef PROFCPU_RUNTIME_LINE_MAPS_H
#define PROFCPU_RUNTIME_LINE_MAPS_H

#include "managed_lines.h"
#include "nettrace.h"

struct runtime_line_maps_reading;

struct runtime_line_maps_reading *runtime_line_maps_reading_start(void);

void runtime_line_maps_reading_take(struct runtime_line_maps_reading *reading,
				    const struct nettrace_event *event);

/* Ends the reading (freeing it) with the code its events map, or NULL when
 * they map none. */
struct managed_lines *runtime_line_maps_reading_finish(struct runtime_line_maps_reading *reading);

#endif
