/*
 * peak_file.h — the machine's peaks (measure/peak.h) kept across runs: one
 * file per machine and build in attnbench's cache directory, so that a run
 * measures them only when they are missing, damaged, measured by another
 * build, or found too low by the cheap check at its start.
 */
#ifndef AB_PEAK_FILE_H
#define AB_PEAK_FILE_H

#include <stddef.h>

#include "machine.h"
#include "peak.h"
#include "topology.h"

/* The peaks for this machine: from the cache when a valid entry exists for
 * the same machine and build (unless refresh), else measured (a few seconds)
 * and stored. With check, cached figures are first checked cheaply
 * (ab_peaks_check): when they are found too low, the cache was measured on a
 * loaded machine and everything is re-measured.
 * note gets a line about what happened (a damaged or mismatched file is
 * reported and replaced, never trusted; a re-measure says why; a check that
 * runs well below the cache says the machine is loaded now); "" when
 * nothing is worth saying. Returns 0, or -1 when measuring failed. */
int ab_peaks_get(ab_peaks *p, const ab_topology *t, const ab_machine *m, int refresh, int check,
                 char *note, size_t note_len);

#endif /* AB_PEAK_FILE_H */
