/* The process list of `profcpu ps`, as a table for people and as JSON for
 * programs (`profcpu ps -json`, `profcpu serve`'s /processes). */
#ifndef PROFCPU_PROCESS_LISTING_H
#define PROFCPU_PROCESS_LISTING_H

#include "process_facts.h"

#include <stdio.h>

void process_listing_print_table(FILE *out, const struct process_facts *facts, size_t count);

/* {"processes": [{"pid": 12, "nspid": 1, "name": "dotnet", ...}, ...]} */
void process_listing_write_json(FILE *out, const struct process_facts *facts, size_t count);

/* `text` as a JSON string, quotes included. */
void json_write_string(FILE *out, const char *text);

#endif
