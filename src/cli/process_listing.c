#include "process_listing.h"

void process_listing_print_table(FILE *out, const struct process_facts *facts, size_t count)
{
	fprintf(out, "%7s %7s  %-15s  %-14s %6s  %-12s  %-36s  %s\n", "PID", "NSPID", "NAME",
		"RUNTIME", "CPU%", "CONTAINER", "POD", "PERFMAP");
	for (size_t i = 0; i < count; i++) {
		char runtime[48];

		snprintf(runtime, sizeof(runtime), "%s%s%s", process_runtime_name(facts[i].runtime),
			 facts[i].runtime_version[0] ? " " : "", facts[i].runtime_version);
		fprintf(out, "%7d %7d  %-15s  %-14s %6.1f  %-12s  %-36s  %s\n", (int)facts[i].pid,
			(int)facts[i].namespace_pid, facts[i].comm, runtime, facts[i].cpu_percent,
			facts[i].container[0] ? facts[i].container : "-",
			facts[i].pod[0] ? facts[i].pod : "-", facts[i].has_perfmap ? "yes" : "no");
	}
}

void json_write_string(FILE *out, const char *text)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20)
			fprintf(out, "\\u%04x", *c);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

void process_listing_write_json(FILE *out, const struct process_facts *facts, size_t count)
{
	fprintf(out, "{\"processes\": [");
	for (size_t i = 0; i < count; i++) {
		fprintf(out, "%s\n  {\"pid\": %d, \"nspid\": %d, \"name\": ", i ? "," : "",
			(int)facts[i].pid, (int)facts[i].namespace_pid);
		json_write_string(out, facts[i].comm);
		fprintf(out, ", \"runtime\": ");
		json_write_string(out, process_runtime_name(facts[i].runtime));
		fprintf(out, ", \"runtime_version\": ");
		json_write_string(out, facts[i].runtime_version);
		fprintf(out, ", \"cpu_percent\": %.1f, \"container\": ", facts[i].cpu_percent);
		json_write_string(out, facts[i].container);
		fprintf(out, ", \"pod\": ");
		json_write_string(out, facts[i].pod);
		fprintf(out, ", \"perf_map\": %s}", facts[i].has_perfmap ? "true" : "false");
	}
	fprintf(out, "\n]}\n");
}
