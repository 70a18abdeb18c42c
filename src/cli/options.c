#include "options.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct option *find_option(const struct option *options, const char *name,
					size_t length)
{
	for (const struct option *option = options; option->name; option++) {
		if (strlen(option->name) == length && !strncasecmp(option->name, name, length))
			return option;
		if (option->alias && strlen(option->alias) == length &&
		    !strncasecmp(option->alias, name, length))
			return option;
	}
	return NULL;
}

static int set_value(const struct option *option, const char *text)
{
	char *end;

	switch (option->type) {
	case OPTION_FLAG:
		*(bool *)option->value = true;
		return 0;
	case OPTION_INTEGER:
		errno = 0;
		*(long *)option->value = strtol(text, &end, 10);
		if (errno || end == text || *end) {
			report_error("invalid value for -%s: '%s' is not a whole number",
				     option->name, text);
			return -1;
		}
		return 0;
	case OPTION_NUMBER:
		errno = 0;
		*(double *)option->value = strtod(text, &end);
		/* strtod takes "nan" and "inf", which no option means. */
		if (errno || end == text || *end || !isfinite(*(double *)option->value)) {
			report_error("invalid value for -%s: '%s' is not a number", option->name,
				     text);
			return -1;
		}
		return 0;
	case OPTION_STRING:
		*(const char **)option->value = text;
		return 0;
	case OPTION_STRING_LIST:
		string_list_append(option->value, text);
		return 0;
	}
	return -1;
}

static bool is_help(const char *name, size_t length)
{
	return (length == 4 && !strncasecmp(name, "help", 4)) ||
	       (length == 1 && (name[0] == 'h' || name[0] == 'H'));
}

enum options_result options_parse(const struct option *options, int argc, char **argv,
				  struct string_list *positionals, enum unknown_options unknown,
				  const char *usage)
{
	bool help = false;

	for (int i = 1; i < argc; i++) {
		const char *argument = argv[i], *name, *equals;
		const struct option *option;
		size_t name_length;

		if (!strcmp(argument, "--")) {
			while (++i < argc)
				string_list_append(positionals, argv[i]);
			break;
		}
		if (argument[0] != '-' || argument[1] == '\0') {
			string_list_append(positionals, argument);
			continue;
		}
		name = argument + (argument[1] == '-' ? 2 : 1);
		equals = strchr(name, '=');
		name_length = equals ? (size_t)(equals - name) : strlen(name);
		if (is_help(name, name_length)) {
			if (equals) {
				report_error("option -help takes no value");
				return OPTIONS_INVALID;
			}
			help = true;
			continue;
		}
		option = find_option(options, name, name_length);
		if (!option) {
			if (unknown == UNKNOWN_OPTIONS_FAIL) {
				report_error("unknown option '%s' (see --help)", argument);
				return OPTIONS_INVALID;
			}
			report_warning("ignoring unknown option '%s'", argument);
			continue;
		}
		if (option->type == OPTION_FLAG) {
			if (equals) {
				report_error("option -%s takes no value", option->name);
				return OPTIONS_INVALID;
			}
			set_value(option, NULL);
			continue;
		}
		if (!equals && i + 1 >= argc) {
			report_error("option -%s needs a value", option->name);
			return OPTIONS_INVALID;
		}
		if (set_value(option, equals ? equals + 1 : argv[++i]) < 0)
			return OPTIONS_INVALID;
	}
	if (help) {
		fputs(usage, stdout);
		return OPTIONS_HELP_SHOWN;
	}
	return OPTIONS_PARSED;
}

enum options_result options_parse_folder(const struct option *options, int argc, char **argv,
					 const char *usage, const char **dir, const char *missing)
{
	struct string_list positionals = {0};
	enum options_result parsed =
	    options_parse(options, argc, argv, &positionals, UNKNOWN_OPTIONS_FAIL, usage);

	if (parsed == OPTIONS_PARSED && !*dir && positionals.count == 1)
		*dir = positionals.items[0];
	string_list_clear(&positionals);
	if (parsed == OPTIONS_PARSED && !*dir) {
		report_error("%s", missing);
		return OPTIONS_INVALID;
	}
	return parsed;
}

int options_exit_status(enum options_result result)
{
	return result == OPTIONS_HELP_SHOWN ? 0 : 2;
}

char *options_command_line(int argc, char **argv)
{
	size_t length = strlen("profcpu") + 1;
	char *line;

	for (int i = 0; i < argc; i++)
		length += strlen(argv[i]) + 1;
	line = xmalloc(length);
	strcpy(line, "profcpu");
	for (int i = 0; i < argc; i++) {
		strcat(line, " ");
		strcat(line, argv[i]);
	}
	return line;
}
