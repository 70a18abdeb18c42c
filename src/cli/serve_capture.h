/* One capture of `profcpu serve`: `profcpu collect` run as a child process
 * of profcpu's own binary, so that a crash or a signal in the capture never
 * takes the server down, and the capture's folder stays whatever happens
 * to the HTTP client that asked for it. */
#ifndef PROFCPU_SERVE_CAPTURE_H
#define PROFCPU_SERVE_CAPTURE_H

#include <stdbool.h>
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

/* The known formats' names, comma-separated, into `names`. */
void capture_format_names(char *names, size_t size);

/* What a client asked a capture for: collect's options of the same names
 * (the server checked their form; collect checks the rest). */
struct capture_request {
	pid_t pid;
	unsigned seconds;
	unsigned frequency;	/* -F; 0: collect's default */
	bool off_cpu;		/* --off-cpu */
	const char *call_graph; /* --call-graph MODE, or NULL */
	const char *events;	/* -events LIST, or NULL */
};

/* A running capture: the child `profcpu collect` process. */
struct capture {
	pid_t child;
	int pidfd;	 /* signals exactly this child, even once it is reaped */
	int messages_fd; /* the child's stderr */
	char name[64];	 /* its folder in the output folder: pid<PID>_<date>_<time> */
};

/* Starts `profcpu collect -pid PID -duration SECONDS [options] -o
 * OUTPUT_DIR/NAME`. Returns 0, or -1 with the reason in `error`. */
int capture_start(struct capture *capture, const char *output_dir,
		  const struct capture_request *request, char *error, size_t error_size);

/* Asks a running capture to stop early; it still writes its outputs. */
void capture_stop(const struct capture *capture);

/* Waits for the capture to end. Returns 0 when it exited successfully,
 * CAPTURE_REFUSED when collect refused its options, or -1; each failure
 * with collect's last message (or how it died) in `error`. */
#define CAPTURE_REFUSED (-2)
int capture_finish(struct capture *capture, char *error, size_t error_size);

/* Reaps the ended capture's process and closes its pidfd: under the lock
 * capture_stop is called under, so that it never signals a reused pid. */
void capture_release(struct capture *capture);

#endif
