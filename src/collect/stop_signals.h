/* The signals that end a capture. SIGINT (Ctrl-C), SIGTERM, SIGHUP (a closed
 * terminal, a dropped `kubectl exec`) and SIGPIPE (stdout or stderr piped
 * into a reader that has gone, as in `profcpu collect ... 2>&1 | head -1`)
 * stop the sampling; the capture is then written in full from what was
 * collected. A signal that comes while the outputs are being written changes
 * nothing: they are finished. A second SIGINT aborts at once, for a user who
 * does not want to wait. Writes to a closed pipe fail with EPIPE instead of
 * killing the process. */
#ifndef PROFCPU_STOP_SIGNALS_H
#define PROFCPU_STOP_SIGNALS_H

#include <stdbool.h>

/* Installs the handlers, for the rest of the run. */
void stop_signals_install(void);

/* True once one of the signals came. */
bool stop_signals_requested(void);

/* The name of the first signal that came ("SIGHUP"), or "no signal". */
const char *stop_signals_name(void);

#endif
