/*
 * commands.h — the attnbench subcommands. Each takes the arguments after its
 * name and returns the process exit status: 0 success, 1 a failed check or
 * benchmark, 2 bad usage.
 */
#ifndef AB_COMMANDS_H
#define AB_COMMANDS_H

#define AB_EXIT_OK 0
#define AB_EXIT_FAIL 1
#define AB_EXIT_USAGE 2

int ab_cmd_info(int argc, char **argv);
int ab_cmd_list(int argc, char **argv);
int ab_cmd_check(int argc, char **argv);
int ab_cmd_run(int argc, char **argv);
int ab_cmd_tune(int argc, char **argv);
int ab_cmd_compare(int argc, char **argv);
int ab_cmd_history(int argc, char **argv);

/* `attnbench tune --pull DB` (and `run` with $ATTN_WISDOM_DB): the records
 * the fleet's store holds for this machine key, each checked against naive
 * here, merged into the wisdom at wisdom_path; verbose: a line per record;
 * only_if_none: nothing when the wisdom already holds a record of this
 * machine (its own tuning is never replaced). An exit status. */
int ab_tune_pull(const char *target, const char *wisdom_path, int verbose, int only_if_none);
int ab_cmd_explain(int argc, char **argv);

#endif /* AB_COMMANDS_H */
