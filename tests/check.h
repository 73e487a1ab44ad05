/*
 * check.h — the tiny test framework of tests/run_tests.
 *
 * A test case starts with t_case(); CHECK records a failure (with a message)
 * against the current case. run_tests prints one line "N passed, N failed"
 * counting cases and exits non-zero when any case failed.
 */
#ifndef ATTN_TEST_CHECK_H
#define ATTN_TEST_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "attn.h"

void t_case(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void t_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void t_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define CHECK(cond, ...) do { if (!(cond)) t_fail(__FILE__, __LINE__, __VA_ARGS__); } while (0)
#define CHECK_STATUS(got, want) \
    CHECK((got) == (want), "status %d (%s), expected %d (%s)", (int)(got), \
          attn_strerror(got), (int)(want), attn_strerror(want))

/* Test groups, one per file. fixture_dir is where the .fix files are. */
void test_api(void);
void test_errors(void);
void test_golden(void);
void test_fixtures(const char *fixture_dir);
void test_properties(void);
void test_topology(void);   /* harness/measure/topology.c */
void test_counters(void);   /* harness/measure/counters.c */
void test_harness(void);    /* statistics, FLOPs, flags, selection, reports */
void test_vmath(void);      /* kernels/vmath.h error bounds */
void test_threads(void);    /* every parallel kernel: results independent of the thread count */
void test_einsum(void);     /* kernels/einsum engine */
void test_params(void);     /* kernel parameters: API, and correctness at odd tile sizes */
void test_wisdom(void);     /* kernels/wisdom.c: the tuning store */
void test_compare(void);    /* harness/analysis/compare.c: the statistics of attnbench compare */
void test_tune(void);       /* harness/measure/tune.c: the search against a cost model */
void test_history(void);    /* harness/analysis/steps.c, harness/store/history.c: steps and the database */
void test_stress(void);     /* numerical stress: huge logits, NaN/Inf reach, denormals */
void test_long(void);       /* SDPA at L = 65536 in O(L) memory, sampled rows exact */
void test_concurrency(void); /* several contexts used from several threads at once */
void test_model(void);      /* model/: attn_bert_load, the safetensors reader */
void test_kvtypes(void);    /* contract 0.3: keys and values stored as f16, bf16, int8 */
void test_bf16(void);       /* contract 0.3: rows whose products run in bf16 */
void test_packed(void);     /* contract 0.3: weights packed once */
void test_explain(void);    /* contract 0.3: attnbench explain's dry run and the work split */

/* ---- helpers (util.c) ------------------------------------------------------ */

/* A buffer of n elements of size elem whose start is misalign bytes past a
 * 64-byte boundary; freed with t_free. Contents are zero. */
void *t_alloc(size_t n, size_t elem, size_t misalign);
void t_free(void *p);
/* Uniform in [-a, a), from a fixed-seed generator (reproducible runs). */
void t_fill(float *x, size_t n, float a, uint64_t *state);
/* max |a - b| over n elements; NaN anywhere gives +inf. */
double t_max_diff_f64(const float *a, const double *ref, size_t n);
double t_max_diff(const float *a, const float *b, size_t n);
double t_max_abs_f64(const double *x, size_t n);
double t_max_abs(const float *x, size_t n);
/* The mean and the variance (divided by n) of x[0 .. n), summed in order in
 * double: what a LayerNorm reference normalises a row by. */
void t_mean_var(const float *x, int n, double *mean, double *var);

/* Fills names with every registered fp32 kernel that can run here and
 * returns their number; the others are reported as skipped (once per run).
 * The bf16 rows are not among them: the suites that use this hold kernels
 * to fp32's bound and exact fp32 properties; test_bf16.c holds the bf16
 * rows to theirs (api.md §9.3). */
int t_kernels(const char **names, int max);
/* The runnable rows whose products run in bf16 (blocked-bf16 everywhere). */
int t_bf16_kernels(const char **names, int max);
/* A kernel's bound: fp32_bound for an fp32 row, the bf16 rows' 3e-2 ·
 * max(1, out_scale) (api.md §9.3) for a bf16 row. */
double t_bound_of(const char *kernel, double fp32_bound, double out_scale);
/* For every kernel t_kernels names: opens the case title (a format taking
 * the kernel's name), creates a context of that kernel with threads threads
 * (a failure is that case's), runs body with it and destroys it. */
void t_each_context(const char *title, int threads,
                    void (*body)(attn_ctx *ctx, const char *kernel));

/* A shape text ("op=encoder,B=1,L=128,...") parsed into *s: 0; or -1 with
 * a failed CHECK naming the text and the parser's reason. */
struct ab_shape;
int t_shape(const char *text, struct ab_shape *s);

/* The workload of a shape text ("op=sdpa,B=1,H=2,L=37,Dh=16,mask=causal"),
 * its inputs from seed, every buffer misalign bytes past a 64-byte
 * boundary. 0; or -1 with the reason in err (w is then not to be freed). */
struct ab_workload;
int t_workload(struct ab_workload *w, const char *shape, uint64_t seed, size_t misalign,
               char *err, size_t err_len);
/* w's op run by kernel with threads threads, into a new buffer (ab_free
 * it); NULL, with a failed CHECK, when the call fails. */
float *t_run_kernel(const char *kernel, int threads, const struct ab_workload *w);

#endif /* ATTN_TEST_CHECK_H */
