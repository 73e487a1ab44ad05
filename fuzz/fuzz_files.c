/*
 * fuzz_files.c — libFuzzer target: every file the tools read.
 *
 * The first input byte picks the reader, the rest is the file:
 *   0  the wisdom (kernels/wisdom.c): parsed; what parses must write back
 *      and parse again to the same records (a round trip);
 *   1  benchmark JSON, as `compare`, `history add` and the report read it
 *      (harness/store/bench_file.c): loaded; what loads is compared with itself
 *      (harness/analysis/compare.c) and added to an in-memory history, then shown.
 * Readers may refuse a file; they must not crash, leak or hang.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_file.h"
#include "compare.h"
#include "history.h"
#include "wisdom.h"

static attn_wisdom wisdom, again;   /* 1.7 MB each: static */

static void wisdom_round_trip(const uint8_t *data, size_t size)
{
    char err[256];
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return;
    memset(&wisdom, 0, sizeof wisdom);
    int rc = attn_wisdom_parse(f, &wisdom, err, sizeof err);
    fclose(f);
    if (rc != 0)
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return;
    if (attn_wisdom_write(out, &wisdom) != 0)
        __builtin_trap();                /* what was read cannot be written */
    fclose(out);
    FILE *in = fmemopen(text, len, "r");
    memset(&again, 0, sizeof again);
    if (!in || attn_wisdom_parse(in, &again, err, sizeof err) != 0 || again.n != wisdom.n)
        __builtin_trap();                /* the written file does not read back */
    fclose(in);
    free(text);
}

static void results(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    snprintf(path, sizeof path, "/tmp/attnbench-fuzz-%d.json", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fwrite(data, 1, size, f);
    fclose(f);
    ab_bench_file bf;
    if (ab_bench_file_load(path, &bf, err, sizeof err) == 0) {
        /* The file against itself, as compare judges it: one run a side. */
        static ab_bench_runs runs[AB_MAX_BENCH];
        static ab_run_comparison verdicts[AB_MAX_BENCH];
        for (int i = 0; i < bf.n; i++) {
            const ab_sample_set *s = &bf.set[i];
            ab_comparison c;
            ab_compare_samples(s->t, s->n, s->t, s->n, 0.01, 0.05, &c);
            runs[i].nb = runs[i].nf = 1;
            runs[i].base[0] = runs[i].fresh[0]
                = ab_run_stat_of(s->t, s->n, s->unstable, s->precision, s->cv, s->repetitions);
        }
        ab_compare_opts o = { 0.01, 0.05, AB_DEFAULT_RUN_NOISE, AB_DEFAULT_THRESHOLD };
        ab_compare_runs(runs, bf.n, &o, verdicts);
        ab_history *h = ab_history_open(":memory:", err, sizeof err);
        if (h) {
            ab_history_add(h, &bf, path, NULL, 0.05, err, sizeof err);
            ab_history_show(h, NULL, NULL, stdout, err, sizeof err);   /* (make fuzz mutes stdout) */
            ab_history_close(h);
        }
        ab_bench_file_free(&bf);
    }
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] % 2 == 0)
        wisdom_round_trip(data + 1, size - 1);
    else
        results(data + 1, size - 1);
    return 0;
}
