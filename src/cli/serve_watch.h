/* The flight recorder beside `profcpu serve` (--watch PID): `profcpu watch`
 * run as a child process of profcpu's own binary, as each capture is, so a
 * crash there never takes the server down. Its captures go into the
 * server's output folder, where GET /captures lists them; a thread reads
 * what it says, passes each line on to the server's stderr and keeps the
 * rules that fired, the captures written and how it ended for GET /watch. */
#ifndef PROFCPU_SERVE_WATCH_H
#define PROFCPU_SERVE_WATCH_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

/* serve's --watch and the options it passes on to watch by the same
 * names; NAN where not given (watch's defaults and checks apply). */
struct serve_watch_options {
	const char *target; /* --watch PID|NAME; NULL: no watch */
	long pid;	    /* the target's, once resolved */
	double before, after, cpu, exceptions, gc_pause, contention, threadpool_queue, cooldown,
	    max_captures, max_disk, frequency;
	bool off_cpu; /* --off-cpu */
};

#define SERVE_WATCH_OPTIONS_INIT                                                                   \
	{                                                                                          \
		.before = NAN, .after = NAN, .cpu = NAN, .exceptions = NAN, .gc_pause = NAN,       \
		.contention = NAN, .threadpool_queue = NAN, .cooldown = NAN, .max_captures = NAN,  \
		.max_disk = NAN, .frequency = NAN                                                  \
	}

/* Fills options->pid from --watch: a pid, or the name (comm) of exactly
 * one process, as `profcpu ps` shows it. Returns 0, or after one line the
 * exit status for serve: 2 for no pid or name, 1 for none or several
 * processes of that name. */
int serve_watch_options_resolve(struct serve_watch_options *options);

/* The first of watch's options given without --watch ("--cpu"), or NULL. */
const char *serve_watch_options_stray(const struct serve_watch_options *options);

struct serve_watch;

/* Starts `profcpu watch -pid PID [options] -o OUTPUT_DIR` and waits until
 * it watches. Returns NULL when it does not (its one-line reason is on
 * stderr), with the exit status for serve: 2 when watch refused the
 * options, else 1. */
struct serve_watch *serve_watch_start(const struct serve_watch_options *options,
				      const char *output_dir, int *exit_status);

/* A manual trigger: SIGUSR1 to the watch. Returns false, with its end in
 * `ended`, when the watch has ended. */
bool serve_watch_trigger(struct serve_watch *watch, char *ended, size_t ended_size);

/* GET /watch: {"running": true, "pid": ..., "target": ..., ...}. */
void serve_watch_write_json(struct serve_watch *watch, FILE *out);

/* SIGTERM to the watch, which writes the capture under way; waits for its
 * end and frees `watch` (NULL: nothing). */
void serve_watch_stop(struct serve_watch *watch);

#endif
