/* One capture of `profcpu serve`: `profcpu collect` run as a child process
 * of profcpu's own binary, so that a crash or a signal in the capture never
 * takes the server down, and the capture's folder stays whatever happens
 * to the HTTP client that asked for it. */
#ifndef PROFCPU_SERVE_CAPTURE_H
#define PROFCPU_SERVE_CAPTURE_H

#include <stddef.h>
#include <sys/types.h>

/* The outputs a client can ask a capture for, by a short name. */
struct capture_format {
	const char *name;	  /* svg, zip, folded, pprof, ... */
	const char *file;	  /* in the capture folder */
	const char *content_type; /* of the HTTP answer */
};

/* The format named `name`, or of the file named `name`; NULL if none. */
const struct capture_format *capture_format_find(const char *name);

/* The known formats, comma-separated, for error messages. */
const char *capture_format_names(void);

/* Runs `profcpu collect -pid PID -duration SECONDS -o OUTPUT_DIR/NAME` and
 * waits for it. `name` (pid<PID>_<date>_<time>) is chosen here and written
 * to `name`. Returns 0 when the capture exited successfully, or -1 with its
 * last message (or how it died) in `error`. */
int capture_run(const char *output_dir, pid_t pid, unsigned seconds, char *name, size_t name_size,
		char *error, size_t error_size);

#endif
