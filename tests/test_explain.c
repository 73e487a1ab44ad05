/*
 * test_explain.c — the dry run behind `attnbench explain` (split.h,
 * harness/measure/explain.h): what it records, that it computes nothing,
 * and the work split it shows — the anchor shapes balanced within 1.15 at
 * 16, 32 and 64 threads in every region with at least as many units as
 * threads, on the SIMD rows this machine runs; and the measured trace
 * (explain --measure): the calls run, and their regions' times add up; a
 * dry run at ATTN_MAX_THREADS allocates no per-thread scratch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"
#include "explain.h"
#include "kernel.h"
#include "memory.h"
#include "topology.h"
#include "workload.h"

/* The shapes of issue 32's table: BERT-base encoder layers at L 512 and at
 * B 8 × L 128, SDPA at L 2048, a decoding step of 32 heads over 16384 keys
 * (32 and 8 key/value heads). */
static const char *const anchors[] = {
    "op=encoder,B=1,L=512,D=768,H=12,F=3072,norm=post,act=gelu,mask=none",
    "op=encoder,B=8,L=128,D=768,H=12,F=3072,norm=post,act=gelu,mask=none",
    "op=sdpa,B=1,L=2048,H=12,Dh=64,mask=none",
    "op=sdpa,B=1,Lq=1,Lk=16384,H=32,Dh=128,mask=causal-br",
    "op=sdpa,B=1,Lq=1,Lk=16384,H=32,Hkv=8,Dh=128,mask=causal-br",
};

/* The rows a many-core machine's "auto" runs (fp32 and bf16). */
static const char *const simd_rows[] = { "avx512", "avx2", "avx512-bf16", "neon", "neon-bf16" };

static const attn_region *find_region(const attn_trace *t, const char *prefix)
{
    for (int i = 0; i < t->n; i++)
        if (strncmp(t->regions[i].name, prefix, strlen(prefix)) == 0)
            return &t->regions[i];
    return NULL;
}

static void test_anchors(void)
{
    /* Each shape's inputs once (the decoding steps' keys and values are
     * 512 MiB), for every row and thread count. */
    for (size_t a = 0; a < sizeof anchors / sizeof *anchors; a++) {
        ab_workload w;
        char err[256];
        if (t_workload(&w, anchors[a], 1, 0, err, sizeof err) != 0) {
            t_case("explain: %s", anchors[a]);
            CHECK(0, "setup: %s", err);
            continue;
        }
        for (size_t k = 0; k < sizeof simd_rows / sizeof *simd_rows; k++) {
            const attn_kernel *row = attn_registry_find(simd_rows[k]);
            if (!row || !attn_registry_runnable(row)) {
                if (a == 0)
                    t_skip("explain: %s cannot run here", simd_rows[k]);
                continue;
            }
            /* 41 and 79: primes, where a product's tiles have no grid of
             * that many threads (1.43 and 1.65 before a grid of fewer,
             * the rest idle, was allowed) */
            static const int counts[] = { 16, 32, 41, 64, 79 };
            for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
                const int n = counts[c];
                t_case("explain [%s]: %s at %d threads: every region with >= %d units within 1.15",
                       row->name, anchors[a], n, n);
                attn_trace t = { 0 };
                char ran[64];
                int rc = ab_explain_workload(&w, row->name, n, NULL, 0, &t, ran, sizeof ran, err,
                                             sizeof err);
                CHECK(rc == 0 && strcmp(ran, row->name) == 0, "%s (ran %s)", err, ran);
                int counted = 0;
                for (int i = 0; rc == 0 && i < t.n; i++) {
                    const attn_region *r = &t.regions[i];
                    CHECK(r->n_threads == n, "%s: %d threads", r->name, r->n_threads);
                    const long units = attn_region_units(r);
                    if (units < n)
                        continue;
                    counted++;
                    /* A decoding step's runs of keys are 512 keys at any
                     * count, so that its output does not depend on it:
                     * they deal out as evenly as that many equal units
                     * can (256 runs on 79 threads: 4 or 3, 1.23). */
                    double bound = 1.15;
                    if (strcmp(r->unit, "a key/value head's run of keys") == 0) {
                        double whole = (double)((units + n - 1) / n) * n / (double)units;
                        bound = whole > bound ? whole + 1e-9 : bound;
                    }
                    CHECK(attn_region_imbalance(r) <= bound, "%s: imbalance %.3f over %ld %s",
                          r->name, attn_region_imbalance(r), units, r->unit);
                }
                CHECK(rc != 0 || counted > 0, "no region had %d units", n);
                attn_trace_clear(&t);
            }
        }
        ab_workload_free(&w);
    }
}

/* The units a trace records are the call's work, all of it: the tiles of
 * C, the heads' query rows, the decode tasks; one thread gets them all. */
static void test_totals(void)
{
    /* A SIMD row: its attention's unit is a register tile of query rows. */
    const attn_kernel *row = NULL;
    static const char *const fp32_rows[] = { "avx512", "avx2", "neon" };
    for (size_t i = 0; !row && i < sizeof fp32_rows / sizeof *fp32_rows; i++)
        if (attn_registry_find(fp32_rows[i]) && attn_registry_runnable(attn_registry_find(fp32_rows[i])))
            row = attn_registry_find(fp32_rows[i]);
    if (!row) {
        t_skip("explain: no SIMD row runs here");
        return;
    }
    const attn_geometry *g = &row->geometry;
    ab_shape s;
    char ran[64], err[256];
    attn_trace t = { 0 };

    t_case("explain [%s]: an encoder layer's regions hold all its work, at 1 and at 24 threads",
           row->name);
    if (t_shape("op=encoder,B=1,L=300,D=96,H=2,F=192,norm=pre,act=gelu,mask=none", &s) == 0) {
        for (int n = 1; n <= 24; n += 23) {
            CHECK(ab_explain_shape(&s, row->name, n, NULL, 0, &t, NULL, ran, sizeof ran, err,
                                   sizeof err) == 0,
                  "%s", err);
            /* Two LayerNorms of 300 rows, the QKV, output and FFN products,
             * the attention: 300 rows are more than the streamed gemm's. */
            const attn_region *qkv = find_region(&t, "gemm 300x288x96,");
            const attn_region *ln = find_region(&t, "layernorm 300x96");
            const attn_region *att = find_region(&t, "attention 1x2x300x300");
            long tiles = (300 + g->mr - 1) / g->mr, panels = (288 + g->nr - 1) / g->nr;
            CHECK(qkv && attn_region_units(qkv) == tiles * panels, "QKV gemm units %ld, %ld tiles",
                  qkv ? attn_region_units(qkv) : -1, tiles * panels);
            CHECK(ln && attn_region_units(ln) == 300, "layernorm units %ld",
                  ln ? attn_region_units(ln) : -1);
            CHECK(att && attn_region_units(att) == 2 * ((300 + g->mr - 1) / g->mr),
                  "attention units %ld", att ? attn_region_units(att) : -1);
            if (n == 1)
                for (int i = 0; i < t.n; i++)
                    CHECK(t.regions[i].n_threads == 1
                              && attn_region_imbalance(&t.regions[i]) == 1.0,
                          "%s at 1 thread", t.regions[i].name);
        }
    }

    /* Each LayerNorm runs in the region of its product: after it (post-LN,
     * a phase after a barrier) or before it (pre-LN: the region's first
     * phase, the product after a barrier). 5 forks and joins either way. */
    t_case("explain [%s]: a layer's LayerNorms run in its products' regions", row->name);
    static const char *const layers[] = {
        "op=encoder,B=1,L=300,D=96,H=2,F=192,norm=post,act=gelu,mask=none",
        "op=encoder,B=1,L=300,D=96,H=2,F=192,norm=pre,act=gelu,mask=none",
    };
    for (size_t c = 0; c < sizeof layers / sizeof *layers; c++) {
        if (t_shape(layers[c], &s) != 0)
            continue;
        CHECK(ab_explain_shape(&s, row->name, 8, NULL, 0, &t, NULL, ran, sizeof ran, err,
                               sizeof err) == 0, "%s",
              err);
        const int post = c == 0;
        int regions = 0, in_region = 0;
        for (int i = 0; i < t.n; i++) {
            const attn_region *r = &t.regions[i];
            regions += !r->after_barrier;
            if (strcmp(r->name, "layernorm 300x96, in the gemm's region") != 0
                || attn_region_units(r) != 300)
                continue;
            /* post: a phase after its product; pre: a region's first
             * phase, its product after a barrier */
            const attn_region *before = i > 0 ? &t.regions[i - 1] : NULL;
            const attn_region *after = i + 1 < t.n ? &t.regions[i + 1] : NULL;
            if (post)
                in_region += r->after_barrier && before && strncmp(before->name, "gemm", 4) == 0;
            else
                in_region += !r->after_barrier && after && after->after_barrier
                          && strncmp(after->name, "gemm", 4) == 0;
        }
        CHECK(regions == 5 && t.n == 7 && in_region == 2,
              "%s: %d regions, %d phases, %d LayerNorms in a product's region", layers[c], regions,
              t.n, in_region);
    }

    t_case("explain [%s]: a decoding step splits keys, then merges each query row's output in "
           "pieces", row->name);
    if (t_shape("op=sdpa,B=2,Lq=1,Lk=3000,H=8,Hkv=2,Dh=64,mask=causal-br", &s) == 0) {
        CHECK(ab_explain_shape(&s, row->name, 7, NULL, 0, &t, NULL, ran, sizeof ran, err,
                               sizeof err) == 0, "%s",
              err);
        /* B 2 × H 8 query rows (Lq 1); at 7 threads 4·7 units are asked
         * for, so each row of Dh 64 (4 vectors) in two pieces of 32 */
        CHECK(t.n == 2 && strncmp(t.regions[0].name, "decode", 6) == 0
                  && attn_region_units(&t.regions[1]) == 2 * 8 * 2,
              "%d regions; merge units %ld", t.n, t.n == 2 ? attn_region_units(&t.regions[1]) : -1);
        if (t.n == 2)
            CHECK(attn_region_units(&t.regions[0]) % 4 == 0
                      && attn_region_units(&t.regions[0]) >= 4 * (3000 / g->decode_split),
                  "decode tasks %ld for 4 KV heads of 3000 keys, %d per split",
                  attn_region_units(&t.regions[0]), g->decode_split);
    }
    attn_trace_clear(&t);
}

/* The dry run does no work: the output keeps what it held. */
static void test_no_work(void)
{
    t_case("explain: a traced context's call computes nothing and fails for a row that cannot "
           "describe its split");
    ab_workload w;
    char err[256];
    if (t_workload(&w, "op=encoder,B=1,L=40,D=32,H=2,F=64,norm=pre,act=gelu,mask=none", 3, 0, err,
                   sizeof err) != 0) {
        CHECK(0, "setup: %s", err);
        return;
    }
    float *out = ab_alloc_floats(w.out_len, 0);
    attn_trace t = { 0 };
    attn_ctx *ctx = NULL;
    CHECK(out != NULL, "out of memory");
    for (size_t i = 0; out && i < w.out_len; i++)
        out[i] = NAN;
    CHECK_STATUS(attn_ctx_create_traced(&ctx, "blocked", 64, &t), ATTN_OK);
    if (ctx && out) {
        CHECK_STATUS(ab_workload_run(ctx, &w, out), ATTN_OK);
        size_t written = 0;
        for (size_t i = 0; i < w.out_len; i++)
            written += !isnan(out[i]);
        CHECK(written == 0 && t.n > 0, "%zu outputs written, %d regions", written, t.n);
    }
    attn_ctx_destroy(ctx);
    attn_trace_clear(&t);
    CHECK_STATUS(attn_ctx_create_traced(&ctx, "blocked", 0, &t), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_ctx_create_traced(&ctx, "blocked", 4, NULL), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_ctx_create_traced(&ctx, "blocked", ATTN_MAX_THREADS + 1, &t),
                 ATTN_ERR_INVALID_ARG);
    /* A region too small to split runs on one thread while the others
     * wait: shown over all of them, thread 0 holding every unit (it read
     * as a balanced one-thread region). */
    ab_shape bert;
    char why[256], ran[64] = "";
    if (t_shape("op=bert,B=1,L=16,layers=1", &bert) == 0) {
        CHECK(ab_explain_shape(&bert, "blocked", 16, NULL, 0, &t, NULL, ran, sizeof ran, why,
                               sizeof why) == 0, "bert: %s", why);
        const attn_region *e = find_region(&t, "embedding sums");
        CHECK(e && e->n_threads == 16 && e->units_per_thread[0] == 16
                  && attn_region_units(e) == 16 && attn_region_imbalance(e) == 16.0,
              "embedding sums: %d threads, imbalance %g", e ? e->n_threads : -1,
              e ? attn_region_imbalance(e) : -1.0);
        attn_trace_clear(&t);
    }
    /* einsum-* run their own loops, which explain does not know. */
    ab_shape s;
    if (t_shape("op=sdpa,B=1,L=40,H=2,Dh=16,mask=none", &s) == 0) {
        CHECK(ab_explain_shape(&s, "einsum-nqhd", 4, NULL, 0, &t, NULL, ran, sizeof ran, err,
                               sizeof err) != 0
                  && strstr(err, "einsum-nqhd") && strcmp(ran, "einsum-nqhd") == 0,
              "einsum explained: '%s' (ran '%s')", err, ran);
    }
    attn_trace_clear(&t);
    ab_free(out);
    ab_workload_free(&w);

    /* The values a dry run sees are whatever its buffers held: a call with
     * non-finite inputs, which runs the oracle instead, still shows the
     * kernel's attention (an encoder's Q is its uninitialized workspace). */
    t_case("explain: the kernel's attention is shown whatever the values (NaN queries)");
    if (t_workload(&w, "op=sdpa,B=1,H=2,L=40,Dh=16,mask=none", 5, 0, err, sizeof err) != 0) {
        CHECK(0, "setup: %s", err);
        return;
    }
    for (size_t i = 0; i < (size_t)40 * 2 * 16; i++)
        w.q[i] = NAN;
    CHECK(ab_explain_workload(&w, "blocked", 4, NULL, 0, &t, ran, sizeof ran, err, sizeof err) == 0
              && find_region(&t, "attention 1x2x40x40") != NULL,
          "%s; %d regions, none the attention", err, t.n);
    attn_trace_clear(&t);
    ab_workload_free(&w);
}

/* A measured trace: the calls compute what an untraced context computes,
 * record the dry run's regions, and time them so that the regions (each
 * from its offer to the next one's; a phase inside its region, 0) and the
 * time before the first add up to the call. */
static void test_measured(void)
{
    static const char *const shapes[] = {
        "op=encoder,B=1,L=70,D=64,H=2,F=128,norm=post,act=gelu,mask=none",
        "op=encoder,B=1,L=70,D=64,H=2,F=128,norm=pre,act=relu,mask=none",
        /* two regions in one primitive, each offered before its own fork */
        "op=sdpa,B=2,Lq=1,Lk=3000,H=8,Hkv=2,Dh=64,mask=causal-br",
    };
    const char *rows[] = { "blocked", "avx512", "avx2", "neon" };
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        const attn_kernel *row = attn_registry_find(rows[k]);
        if (!row || !attn_registry_runnable(row))
            continue;
        for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
            t_case("explain --measure [%s]: %s", row->name, shapes[c]);
            ab_workload w;
            char err[256], ran[64];
            if (t_workload(&w, shapes[c], 9, 0, err, sizeof err) != 0) {
                CHECK(0, "setup: %s", err);
                continue;
            }
            float *want = ab_alloc_floats(w.out_len, 0), *got = ab_alloc_floats(w.out_len, 0);
            attn_ctx *ctx = NULL;
            attn_trace dry = { 0 }, t = { .measure = 1 };
            if (want && got && attn_ctx_create(&ctx, row->name, 1) == ATTN_OK) {
                CHECK_STATUS(ab_workload_run(ctx, &w, want), ATTN_OK);
                attn_ctx_destroy(ctx);
                ctx = NULL;
            }
            /* the call, measured: the untraced call's values, bit for bit */
            if (want && got && attn_ctx_create_traced(&ctx, row->name, 1, &t) == ATTN_OK) {
                CHECK_STATUS(ab_workload_run(ctx, &w, got), ATTN_OK);
                CHECK(memcmp(want, got, w.out_len * sizeof *got) == 0 && t.n > 0,
                      "a measured call's output differs from the call's (%d regions)", t.n);
            }
            attn_ctx_destroy(ctx);
            /* the timed calls: the dry run's regions, adding up to the call */
            ab_explain_times tm = { .reps = 1 };
            int rc = ab_explain_workload(&w, row->name, 1, NULL, 0, &dry, ran, sizeof ran, err,
                                         sizeof err);
            rc |= ab_explain_measure(&w, row->name, 1, &t, &tm, ran, sizeof ran, err, sizeof err);
            CHECK(rc == 0 && t.n == dry.n && t.n > 0, "%s; %d regions measured, %d dry", err, t.n,
                  dry.n);
            if (rc == 0 && t.n == dry.n) {
                double sum = tm.before_s;
                int bad = -1;
                for (int i = 0; i < t.n; i++) {
                    const attn_region *r = &t.regions[i];
                    sum += tm.region_s[i];
                    if (strcmp(r->name, dry.regions[i].name) != 0
                        || r->after_barrier != dry.regions[i].after_barrier
                        || (r->after_barrier ? tm.region_s[i] != 0.0 : !(tm.region_s[i] > 0.0)))
                        bad = i;
                }
                CHECK(bad < 0, "region %d: '%s', %g s", bad, bad < 0 ? "" : t.regions[bad].name,
                      bad < 0 ? 0.0 : tm.region_s[bad]);
                CHECK(fabs(sum - tm.call_s) <= 1e-9 * (1.0 + tm.call_s) && tm.before_s >= 0.0,
                      "regions and the time before them %.9f s, the call %.9f s", sum, tm.call_s);
            }
            free(tm.region_s);
            /* A decoding step offers its merge right before the merge's
             * fork: offered with the split's, the merge would take the
             * split's time (3 MB of keys and values against a merge of 16
             * rows; medians of 5). */
            ab_explain_times dec = { .reps = 5 };
            if (c == 2 && ab_explain_measure(&w, row->name, 1, &t, &dec, ran, sizeof ran, err,
                                             sizeof err) == 0)
                CHECK(t.n == 2 && dec.region_s[0] > dec.region_s[1],
                      "%d regions; the split %g s, the merge %g s", t.n, dec.region_s[0],
                      t.n == 2 ? dec.region_s[1] : 0.0);
            free(dec.region_s);
            /* more threads than cores would time the OS's sharing of them */
            ab_topology topo;
            if (c == 0 && ab_topology_load(&topo, err, sizeof err) == 0) {
                ab_explain_times over = { .reps = 1, .topo = &topo };
                CHECK(ab_explain_measure(&w, row->name, topo.cores + 1, &t, &over, ran,
                                         sizeof ran, err, sizeof err) != 0
                          && strstr(err, "at most") && over.region_s == NULL,
                      "%d threads on %d cores measured: '%s'", topo.cores + 1, topo.cores, err);
            }
            attn_trace_clear(&t);
            attn_trace_clear(&dry);
            ab_free(want);
            ab_free(got);
            ab_workload_free(&w);
        }
    }
}

/* Sanitizers reserve terabytes of address space: no limit on it can hold. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define T_ADDRESS_SPACE_RESERVED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) \
    || __has_feature(memory_sanitizer)
#define T_ADDRESS_SPACE_RESERVED 1
#endif
#endif

/* A dry run at any thread count sizes its workspace for one thread's
 * slices (attn_exec_scratch_threads): it runs no region, so no thread
 * touches its own. Sized for 4096 the anchors' workspaces were 10 GB
 * (encoder L 512) and 4.4 GB (SDPA L 2048) of address space, which a
 * strict overcommit or a `ulimit -v` refuses ("out of memory"), though no
 * page of them was touched. Here the dry run must fit in 1 GiB of address
 * space more than the process holds, and touch less than 64 MiB; its
 * regions are those of one thread, dealt over 4096. */
static void test_dry_memory(void)
{
#ifdef T_ADDRESS_SPACE_RESERVED
    t_skip("explain: a dry run's address space (not measurable under a sanitizer)");
#else
    const char *rows[2] = { "blocked", NULL };
    static const char *const fp32_rows[] = { "avx512", "avx2", "neon" };
    for (size_t i = 0; !rows[1] && i < sizeof fp32_rows / sizeof *fp32_rows; i++)
        if (attn_registry_runnable(attn_registry_find(fp32_rows[i])))
            rows[1] = fp32_rows[i];
    const char *shapes[] = { anchors[0], anchors[2] };
    const int n = ATTN_MAX_THREADS;
    const long long slack = 1LL << 30, touched = 64LL << 20;
    for (size_t a = 0; a < sizeof shapes / sizeof *shapes; a++) {
        ab_workload w;
        char err[256], ran[64];
        if (t_workload(&w, shapes[a], 1, 0, err, sizeof err) != 0) {
            t_case("explain: %s at %d threads", shapes[a], n);
            CHECK(0, "setup: %s", err);
            continue;
        }
        for (size_t k = 0; k < 2 && rows[k]; k++) {
            t_case("explain [%s]: %s at %d threads: within 1 GiB of address space, 64 MiB "
                   "touched",
                   rows[k], shapes[a], n);
            attn_trace one = { 0 }, t = { 0 };
            CHECK(ab_explain_workload(&w, rows[k], 1, NULL, 0, &one, ran, sizeof ran, err,
                                      sizeof err)
                      == 0,
                  "1 thread: %s", err);
            struct rlimit old;
            long long size = ab_rss_bytes("VmSize");
            if (size < 0 || getrlimit(RLIMIT_AS, &old) != 0
                || (old.rlim_max != RLIM_INFINITY
                    && old.rlim_max < (rlim_t)(size + slack))) {
                t_skip("explain: no address-space limit can be set here");
                attn_trace_clear(&one);
                continue;
            }
            char why[256];
            const int peak = ab_rss_reset_peak(why, sizeof why) == 0;
            const long long rss = ab_rss_bytes("VmRSS");
            struct rlimit lim = { (rlim_t)(size + slack), old.rlim_max };
            int rc = setrlimit(RLIMIT_AS, &lim);
            if (rc == 0) {
                rc = ab_explain_workload(&w, rows[k], n, NULL, 0, &t, ran, sizeof ran, err,
                                         sizeof err);
                (void)setrlimit(RLIMIT_AS, &old);
                CHECK(rc == 0, "%d threads in %lld MiB more address space: %s", n, slack >> 20,
                      err);
            } else {
                CHECK(0, "setrlimit(RLIMIT_AS) failed");
            }
            const long long hwm = peak ? ab_rss_bytes("VmHWM") : -1;
            CHECK(hwm < 0 || rss < 0 || hwm - rss < touched, "%lld MiB touched",
                  (hwm - rss) >> 20);
            CHECK(rc != 0 || t.n == one.n, "%d regions at %d threads, %d at 1", t.n, n, one.n);
            for (int i = 0; rc == 0 && i < t.n && i < one.n; i++)
                CHECK(t.regions[i].n_threads == n
                          && attn_region_units(&t.regions[i]) == attn_region_units(&one.regions[i])
                          && strcmp(t.regions[i].unit, one.regions[i].unit) == 0,
                      "region %d '%s': %d threads, %ld units (%ld at 1 thread)", i,
                      t.regions[i].name, t.regions[i].n_threads, attn_region_units(&t.regions[i]),
                      attn_region_units(&one.regions[i]));
            attn_trace_clear(&one);
            attn_trace_clear(&t);
        }
        ab_workload_free(&w);
    }
#endif
}

/* --param reaches the kernel's own partition code: split=1 (columns) and
 * 2 (rows) deal a product's tiles as they say, whatever auto would pick,
 * and a parameter the kernel lacks, or a value out of its range, is
 * refused with the name in the reason. */
static void test_param_settings(void)
{
    const char *const shape = "op=encoder,B=8,L=128,D=96,H=2,F=192,norm=post,act=gelu,mask=none";
    ab_shape s;
    char ran[64], err[256];
    attn_trace t = { 0 };
    if (t_shape(shape, &s) != 0)
        return;
    t_case("explain [blocked] --param split=1 and 2: every product 1 x 16, then 16 x 1");
    for (int split = 1; split <= 2; split++) {
        const ab_param_setting ps[] = { { "split", split } };
        CHECK(ab_explain_shape(&s, "blocked", 16, ps, 1, &t, NULL, ran, sizeof ran, err,
                               sizeof err) == 0,
              "split=%d: %s", split, err);
        const char *want = split == 1 ? "threads 1 rows x 16 columns" : "threads 16 rows x 1 columns";
        int products = 0, as_set = 0;
        for (int i = 0; i < t.n; i++) {
            if (strncmp(t.regions[i].name, "gemm", 4) != 0)
                continue;
            products++;
            as_set += strstr(t.regions[i].name, want) != NULL;
        }
        CHECK(products == 4 && as_set == 4, "split=%d: %d of %d products '%s'", split, as_set,
              products, want);
    }
    t_case("explain [blocked] --param: an unknown parameter and a value out of range refused");
    const ab_param_setting unknown[] = { { "no_such_param", 1 } }, wide[] = { { "split", 99 } };
    err[0] = '\0';
    CHECK(ab_explain_shape(&s, "blocked", 4, unknown, 1, &t, NULL, ran, sizeof ran, err,
                           sizeof err) != 0
              && strstr(err, "no_such_param"),
          "unknown parameter: '%s'", err);
    err[0] = '\0';
    CHECK(ab_explain_shape(&s, "blocked", 4, wide, 1, &t, NULL, ran, sizeof ran, err, sizeof err)
                  != 0
              && strstr(err, "split=99"),
          "split=99: '%s'", err);
    attn_trace_clear(&t);
}

/* A SIMD row's attention says which key path a shape takes: below
 * stream_from one tile of all keys, from it up keys in tiles of bk (rounded
 * down to whole panels: 384 is a whole number of 12, 16 and 32 keys). */
static void test_key_path(void)
{
    ab_shape s;
    char ran[64], err[256];
    attn_trace t = { 0 };
    if (t_shape("op=sdpa,B=1,H=2,L=512,Dh=64", &s) != 0)
        return;
    for (size_t r = 0; r < sizeof simd_rows / sizeof *simd_rows; r++) {
        const attn_kernel *k = attn_registry_find(simd_rows[r]);
        if (!k || !attn_registry_runnable(k))
            continue;
        t_case("explain [%s]: the attention's name says its key path, one tile or streamed",
               k->name);
        const ab_param_setting one[] = { { "stream_from", 1024 } },
                               streamed[] = { { "stream_from", 1 }, { "bk", 384 } };
        const char *want[] = { "all 512 keys in one tile", "keys in tiles of 384" };
        for (int c = 0; c < 2; c++) {
            const attn_region *a = NULL;
            err[0] = '\0';
            if (ab_explain_shape(&s, k->name, 2, c ? streamed : one, c ? 2 : 1, &t, NULL, ran,
                                 sizeof ran, err, sizeof err) == 0)
                a = find_region(&t, "attention");
            CHECK(a && strstr(a->name, want[c]), "%s: '%s' (%s)", want[c], a ? a->name : "-",
                  err);
        }
    }
    attn_trace_clear(&t);
}

void test_explain(void)
{
    test_key_path();
    test_param_settings();
    test_measured();
    test_no_work();
    test_dry_memory();
    test_totals();
    test_anchors();
}
