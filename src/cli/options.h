/* Command-line options as profcpu and perfcollect users write them: one or
 * two dashes (-pid, --pid), any case (-collectSec), the value as the next
 * argument or after '=' (--pid=42). "--" ends the options. */
#ifndef PROFCPU_OPTIONS_H
#define PROFCPU_OPTIONS_H

#include "util.h"

#include <stdbool.h>
#include <stddef.h>

enum option_type {
	OPTION_FLAG,	    /* bool: present or not */
	OPTION_INTEGER,	    /* long */
	OPTION_NUMBER,	    /* double, finite (not nan or inf) */
	OPTION_STRING,	    /* const char * */
	OPTION_STRING_LIST, /* struct string_list: the option may repeat */
};

struct option {
	const char *name;  /* without dashes */
	const char *alias; /* another name for the same option, or NULL */
	enum option_type type;
	void *value;
};

/* What to do with an option no entry names. */
enum unknown_options { UNKNOWN_OPTIONS_FAIL, UNKNOWN_OPTIONS_WARN };

/* What options_parse() found. */
enum options_result {
	OPTIONS_INVALID = -1, /* a one-line error was printed */
	OPTIONS_PARSED = 0,
	OPTIONS_HELP_SHOWN = 1, /* -h or --help: `usage` was printed on stdout */
};

/* Parses argv[1..argc), filling the options' values and putting the other
 * arguments in `positionals`. The options array ends with a NULL name.
 * Every command understands -h and --help: after a parse without errors,
 * they print `usage`. */
enum options_result options_parse(const struct option *options, int argc, char **argv,
				  struct string_list *positionals, enum unknown_options unknown,
				  const char *usage);

/* options_parse() for a command that reads one capture folder: given as
 * -dir DIR (an entry of `options` filling *dir) or as the one argument. A
 * parse that leaves no folder prints `missing` and is OPTIONS_INVALID. */
enum options_result options_parse_folder(const struct option *options, int argc, char **argv,
					 const char *usage, const char **dir, const char *missing);

/* "profcpu ARG...", the command as typed, of argv[0..argc) (malloc'd): for
 * a capture's log and perf.data header. */
char *options_command_line(int argc, char **argv);

/* The exit status of a command that stops on what options_parse() returned
 * (anything but OPTIONS_PARSED): 0 after help, 2 after a usage error. */
int options_exit_status(enum options_result result);

#endif
