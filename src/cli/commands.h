/* The profcpu commands. Each parses its own options (options.h), calls the
 * library code and prints; each lives in its own cmd_*.c file. They return
 * the process exit status. */
#ifndef PROFCPU_COMMANDS_H
#define PROFCPU_COMMANDS_H

int cmd_collect(int argc, char **argv);
int cmd_postprocess(int argc, char **argv);
int cmd_lines(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_push(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_watch(int argc, char **argv);

/* profcpu run under the name perfcollect (argv[0]): perfcollect's actions. */
int perfcollect_main(int argc, char **argv);

#endif
