/*
 * plan_flags.h — the flags of the plan that `attnbench run` and `attnbench
 * tune` share (plan.h): --suite, --shape and --threads. Each is declared
 * once, as a row of a command's flag table (cli.h) with dest the command's
 * const char * for the text, so that the two commands take and describe
 * them alike; each command places the rows where its help lists them.
 * --op is run's alone (tune tunes the buckets of every op), and the two
 * --min-time flags differ in default and range (run's follows the suite).
 */
#ifndef AB_PLAN_FLAGS_H
#define AB_PLAN_FLAGS_H

#include "cli.h"

#define AB_PLAN_FLAG_SUITE(dest)                                                                   \
    { "suite", AB_FLAG_STRING, (dest), "NAME",                                                     \
      "a suite of `attnbench list --suites` (default: default)", 0, 0 }

#define AB_PLAN_FLAG_SHAPE(dest)                                                                   \
    { "shape", AB_FLAG_STRING, (dest), "SHAPES",                                                   \
      "these shapes instead of a suite, e.g. 'B=1,H=12,L=512,Dh=64,mask=causal'; ';' separates "   \
      "several", 0, 0 }

#define AB_PLAN_FLAG_THREADS(dest)                                                                 \
    { "threads", AB_FLAG_STRING, (dest), "N",                                                      \
      "threads, one per core: N, or a list N1,N2 for each count (default: every core this "        \
      "process may use)", 0, 0 }

#endif /* AB_PLAN_FLAGS_H */
