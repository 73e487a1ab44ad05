/* tune.c — the tuner (tune.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "compare.h"
#include "explain.h"
#include "stats.h"
#include "timer.h"
#include "tune.h"
#include "verify.h"
#include "workload.h"

#define SEED 20261122u
#define CHECK_LEN 67           /* the reduced length of a bucket's check shape */
#define MAX_CANDIDATES 256
#define AB_TUNE_MARGIN 0.02    /* a challenger must be 2% faster than the incumbent */
#define MIN_PAIRED_ROUNDS 6    /* the fewest paired rounds that may change the choice */

static int out_of_time(const ab_tune_opts *o)
{
    return o->deadline > 0.0
        && (o->probe ? o->probe->now(o->probe->arg) : ab_now()) > o->deadline;
}

static int same_candidate(const ab_candidate *a, const ab_candidate *b)
{
    return a->kernel == b->kernel
        && memcmp(a->params, b->params, sizeof a->params) == 0;
}

/* Whether a beat b, two candidates timed in the same rounds (one call of
 * time_of: every round times each of them once, in turn): the mean of the
 * per-round log ratios log(a/b) at most log(1 − AB_TUNE_MARGIN), and the
 * upper end of its 95% t-interval below 0. Paired, because the machine's
 * drift between rounds moves both alike; a comparison of the two medians
 * let equals through (a review's cost model: of 300 tunes of kernels that
 * all cost the same, with ±4% noise a round, 107 stored one that was not
 * the default; now 2). A burst in one round widens the interval with
 * the mean it moves, so it does not make a win. Fewer than 6 rounds (a
 * budget that ran out) are not enough to change the choice: b holds. */
static int beats(const ab_candidate *a, const ab_candidate *b)
{
    const int n = a->n_times < b->n_times ? a->n_times : b->n_times;
    if (n < MIN_PAIRED_ROUNDS)
        return 0;
    double d[64], mean = 0.0, ss = 0.0;
    for (int i = 0; i < n; i++) {
        if (!(a->times[i] > 0.0) || !(b->times[i] > 0.0))
            return 0;
        d[i] = log(a->times[i] / b->times[i]);
        mean += d[i] / n;
    }
    for (int i = 0; i < n; i++)
        ss += (d[i] - mean) * (d[i] - mean);
    const double se = sqrt(ss / (n - 1) / n);
    return mean <= log1p(-AB_TUNE_MARGIN) && mean + ab_student_isf(0.025, n - 1) * se < 0.0;
}

/* A context running c at the given thread count; NULL when it cannot, with
 * why in *status when status is not NULL. */
static attn_ctx *context_of(const ab_candidate *c, int threads, attn_status *status)
{
    attn_ctx *ctx = NULL;
    attn_status st = attn_ctx_create(&ctx, c->kernel->name, threads);
    for (int i = 0; st == ATTN_OK && i < c->kernel->n_params; i++)
        st = attn_ctx_set_param(ctx, c->kernel->params[i].name, c->params[i]);
    if (st != ATTN_OK) {
        attn_ctx_destroy(ctx);
        ctx = NULL;
    }
    if (status)
        *status = st;
    return ctx;
}

/* Naive's answer on a check shape, kept for every candidate checked on it:
 * made anew for each (the inputs, then naive's call), it was 40% of a tune
 * of a BERT-base layer at L 128 (perf: 22 s of 55 in attn_gemm__naive and
 * the inputs' filling), the same answer every time. */
typedef struct check_oracle {
    char shape[160];   /* the check shape's text (ab_shape_format); "" when none is made */
    ab_workload w;
    float *ref;
} check_oracle;

static void oracle_free(check_oracle *o)
{
    if (o->shape[0]) {
        ab_free(o->ref);
        ab_workload_free(&o->w);
    }
    o->shape[0] = '\0';
}

/* o holding naive's answer on small: 1 kept from before, 0 made now, or -1
 * when it could not be made. */
static int oracle_for(check_oracle *o, const ab_shape *small)
{
    char text[sizeof o->shape];
    ab_shape_format(small, text, sizeof text);
    if (o->shape[0] && strcmp(o->shape, text) == 0)
        return 1;
    oracle_free(o);
    if (ab_workload_init(&o->w, small, SEED, 4) != 0)
        return -1;
    attn_ctx *naive = NULL;
    o->ref = ab_alloc_floats(o->w.out_len, 0);
    int ok = o->ref && attn_ctx_create(&naive, "naive", 1) == ATTN_OK
          && ab_workload_run(naive, &o->w, o->ref) == ATTN_OK;
    attn_ctx_destroy(naive);
    if (!ok) {
        ab_free(o->ref);
        ab_workload_free(&o->w);
        return -1;
    }
    snprintf(o->shape, sizeof o->shape, "%s", text);
    return 0;
}

/* The check: c against naive on the bucket's reduced shape, naive's answer
 * taken from (or made into) oracle. 1 passes. */
static int check_candidate(ab_candidate *c, const ab_shape *s, int threads, check_oracle *oracle)
{
    ab_shape small = *s;
    small.q_len = small.q_len < CHECK_LEN ? small.q_len : CHECK_LEN;
    small.kv_len = small.kv_len < CHECK_LEN ? small.kv_len : CHECK_LEN;
    small.batch = small.batch < 2 ? small.batch : 2;
    /* generate's N steps too: the oracle decoding 2^24 tokens token by
     * token held tune far past its --budget (checked between candidates). */
    small.steps = small.steps < CHECK_LEN ? small.steps : CHECK_LEN;
    /* The candidate's call reads the inputs naive read (a call leaves them
     * as it found them; a decoding one resets its caches first). One whose
     * result is wrong on inputs kept from before is checked again on inputs
     * made anew: had an earlier candidate written into them, the later ones
     * are not failed for it. */
    int ok = 0, kept = 0, ran = 0;
    for (int again = 0; again < 2 && !ok; again++) {
        if (again && !(kept && ran))
            break;
        if (again)
            oracle_free(oracle);
        kept = oracle_for(oracle, &small);
        if (kept < 0)
            break;
        const ab_workload *w = &oracle->w;
        attn_ctx *ctx = context_of(c, threads, NULL);
        float *y = ab_alloc_floats(w->out_len, 4);
        ran = ctx && y && ab_workload_run(ctx, w, y) == ATTN_OK;
        if (ran) {
            ab_verdict v = ab_verify_kernel(c->kernel->name, &small, y, oracle->ref, w->out_len,
                                            w->max_abs_v);
            c->max_err = v.tol > 0 ? v.max_err / v.tol : INFINITY;
            ok = v.ok;
        }
        attn_ctx_destroy(ctx);
        ab_free(y);
    }
    return ok;
}

/* Candidate i of ab_tune_time could not run: it is left untimed, its
 * context freed, and the others go on. */
static void drop_candidate(ab_candidate *c, attn_ctx **ctx, long *iters, attn_status st)
{
    c->run_status = st;
    c->n_times = 0;
    c->median = INFINITY;
    attn_ctx_destroy(*ctx);
    *ctx = NULL;
    *iters = 0;
}

/* A candidate this many times slower a call than the fastest is not worth
 * rounds of timing (the slow einsum orders on big shapes). */
#define TOO_SLOW 10.0

/* Calls per timed batch, for a call of `one` seconds: min_time's worth. */
static long calls_per_batch(double one, double min_time)
{
    long k = one > 0 ? (long)ceil(min_time / one) : 1000;
    return k < 1 ? 1 : k > 100000 ? 100000 : k;
}

/* ab_tune_time on the shape's inputs w, the estimates on probe's. */
static int time_candidates(ab_candidate *c, int n, const ab_tune_opts *o, const ab_workload *w,
                           ab_call_probe *probe)
{
    if (n <= 0)
        return 0;
    float *out = ab_alloc_floats(w->out_len, 0);
    attn_ctx **ctx = calloc((size_t)n, sizeof *ctx);
    attn_packed_weights **packed = calloc((size_t)n, sizeof *packed);
    long *iters = calloc((size_t)n, sizeof *iters);
    double *per_call = calloc((size_t)n, sizeof *per_call);
    int rc = out && ctx && packed && iters && per_call ? 0 : -1;
    /* Contexts first, each warmed up and calibrated to min_time per batch.
     * The budget is read before each candidate (the first always runs):
     * warming up and calibrating every candidate, the einsum orders at
     * 2048 tokens included, took 46 s of a 2 s budget. A candidate left
     * out has no times (median +inf): it loses, and never beats another.
     * So does one that cannot run (its status kept for the caller to
     * say): one candidate's failure once cost the whole round its times.
     * Once one call has been timed, each next candidate's call is first
     * estimated on a cut shape (ab_call_probe: one batch, lengths halved
     * down to 32, at most a 32nd of the work, its inputs made once), as run's
     * --max-call-time estimates one: one estimated over TOO_SLOW times
     * the fastest by the estimate's margin (ab_estimate_over: twice) is
     * left out unwarmed. Warming up, timing and confirming einsum-bhqk and -bhdqk
     * (23 s a call on BERT-base at B 8, L 128, against avx2's 0.2 s) took
     * 140 s of a 150 s tune. */
    double fastest = INFINITY;
    for (int i = 0; rc == 0 && i < n; i++) {
        c[i].n_times = 0;
        c[i].median = INFINITY;
        c[i].run_status = ATTN_OK;
        c[i].estimate = 0.0;
        iters[i] = 0;
        if (i > 0 && out_of_time(o))
            continue;
        attn_status st;
        ctx[i] = context_of(&c[i], o->threads, &st);
        if (st == ATTN_OK && isfinite(fastest)) {
            double estimate = ab_call_probe_estimate(probe, &ab_library_self, ctx[i]);
            if (ab_estimate_over(estimate, TOO_SLOW * fastest)) {
                c[i].estimate = per_call[i] = estimate;
                continue;
            }
        }
        /* The weights packed at the candidate's parameters, as `run` times;
         * then a warm-up call and a timed one. */
        if (st == ATTN_OK)
            st = ab_workload_pack(ctx[i], w, &packed[i]);
        if (st == ATTN_OK)
            st = ab_workload_run(ctx[i], w, out);
        double t0 = ab_now();
        if (st == ATTN_OK)
            st = ab_workload_run(ctx[i], w, out);
        double one = ab_now() - t0;
        if (st != ATTN_OK) {
            drop_candidate(&c[i], &ctx[i], &iters[i], st);
            continue;
        }
        per_call[i] = one;
        iters[i] = calls_per_batch(one, o->min_time);
        fastest = fmin(fastest, one);
    }
    /* One timed call over TOO_SLOW times the fastest does not show that a
     * candidate is too slow: a busy machine may pause the process in it (a
     * default judged too slow that way once left a tune with no pick), so a
     * second call confirms it, its faster time the one that counts. */
    for (int i = 0; rc == 0 && i < n; i++) {
        if (iters[i] != 1 || per_call[i] <= TOO_SLOW * fastest)
            continue;
        double t0 = ab_now();
        attn_status st = ab_workload_run(ctx[i], w, out);
        per_call[i] = fmin(per_call[i], ab_now() - t0);
        if (st != ATTN_OK)
            drop_candidate(&c[i], &ctx[i], &iters[i], st);
        else
            iters[i] = per_call[i] > TOO_SLOW * fastest ? 0 : calls_per_batch(per_call[i], o->min_time);
    }
    /* Rounds: every candidate once per round, in the same order. */
    int rounds = o->rounds < 64 ? o->rounds : 64;
    for (int r = 0; rc == 0 && r < rounds; r++) {
        for (int i = 0; i < n; i++) {
            if (iters[i] == 0)
                continue;
            attn_status st = ATTN_OK;
            double t0 = ab_now();
            for (long k = 0; k < iters[i] && st == ATTN_OK; k++)
                st = ab_workload_run(ctx[i], w, out);
            if (st != ATTN_OK)
                drop_candidate(&c[i], &ctx[i], &iters[i], st);
            else
                c[i].times[c[i].n_times++] = (ab_now() - t0) / (double)iters[i];
        }
        if (out_of_time(o) && r >= 2)
            break;   /* three rounds are enough for a median when time is up */
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        ab_stats st;
        if (ab_stats_compute(c[i].times, c[i].n_times, &st) == 0)   /* a dropped one has none */
            c[i].median = st.median;
    }
    for (int i = 0; ctx && i < n; i++)
        attn_ctx_destroy(ctx[i]);
    for (int i = 0; packed && i < n; i++)
        attn_weights_destroy(packed[i]);
    free(ctx);
    free(packed);
    free(iters);
    free(per_call);
    ab_free(out);
    return rc;
}

int ab_tune_time(ab_candidate *c, int n, const ab_shape *s, const ab_tune_opts *o)
{
    ab_workload w;
    if (n <= 0)
        return 0;
    if (ab_workload_init(&w, s, SEED, 0) != 0)
        return -1;
    ab_call_probe probe;
    ab_call_probe_init(&probe, s);
    int rc = time_candidates(c, n, o, &w, &probe);
    ab_call_probe_free(&probe);
    ab_workload_free(&w);
    return rc;
}

/* What a tune of one shape makes once and keeps for all its rounds: naive's
 * answer on the check shape, the shape's own inputs (every round's timing
 * and dry runs read them: made anew each round, a 12-layer BERT's took
 * 0.95 s a round) and the cut shape's for the estimates. */
typedef struct tune_session {
    const ab_shape *shape;
    check_oracle oracle;
    int made;              /* the shape's inputs: 0 not yet, 1 made, -1 could not be */
    ab_workload w;
    ab_call_probe probe;
} tune_session;

static void session_init(tune_session *t, const ab_shape *s)
{
    memset(t, 0, sizeof *t);
    t->shape = s;
    ab_call_probe_init(&t->probe, s);
}

/* The shape's inputs, made at the first call; NULL when out of memory. */
static const ab_workload *session_inputs(tune_session *t)
{
    if (t->made == 0)
        t->made = ab_workload_init(&t->w, t->shape, SEED, 0) == 0 ? 1 : -1;
    return t->made == 1 ? &t->w : NULL;
}

static void session_free(tune_session *t)
{
    oracle_free(&t->oracle);
    if (t->made == 1)
        ab_workload_free(&t->w);
    t->made = 0;
    ab_call_probe_free(&t->probe);
}

/* The check and the timing of t's shape, through the options' probe when
 * there is one. */
static int check_of(const ab_tune_opts *o, tune_session *t, ab_candidate *c)
{
    return o->probe ? o->probe->check(o->probe->arg, c, t->shape, o->threads)
                    : check_candidate(c, t->shape, o->threads, &t->oracle);
}

static int time_of(const ab_tune_opts *o, tune_session *t, ab_candidate *c, int n)
{
    if (o->probe)
        return o->probe->time(o->probe->arg, c, n, t->shape, o);
    const ab_workload *w = session_inputs(t);
    return w ? time_candidates(c, n, o, w, &t->probe) : -1;
}

static void defaults_of(const attn_kernel *k, int *params)
{
    memset(params, 0, sizeof(int) * ATTN_MAX_PARAMS);
    for (int i = 0; i < k->n_params; i++) {
        attn_param_info info;
        if (attn_kernel_param_info(k->name, i, &info) == ATTN_OK)
            params[i] = info.default_value;
    }
}

/* c with parameter i scaled by f (clamped to its range); 0 when that gives
 * the same value. */
static int vary(const ab_candidate *c, int i, double f, ab_candidate *out)
{
    const attn_param *p = &c->kernel->params[i];
    long v = lround(c->params[i] * f);
    v = v < p->min ? p->min : v > p->max ? p->max : v;
    if (v == c->params[i])
        return 0;
    *out = *c;
    out->params[i] = (int)v;
    return 1;
}

/* The neighbours of c along parameter i: at each of the steps (factors),
 * or, for a choice among a few values (the thread split), at each value;
 * a path switch (threshold) also at its min and max, each path always.
 * At most 8; returns how many. */
static int neighbours(const ab_candidate *c, int i, const double *steps, int n_steps,
                      ab_candidate *out)
{
    const attn_param *p = &c->kernel->params[i];
    int g = 0;
    if (p->max - p->min < 8) {
        for (int v = p->min; v <= p->max; v++)
            if (v != c->params[i]) {
                out[g] = *c;
                out[g++].params[i] = v;
            }
    } else {
        for (int k = 0; k < n_steps && k < 6; k++)
            g += vary(c, i, steps[k], &out[g]);
        const int ends[2] = { p->min, p->max };
        for (int e = 0; e < 2 && p->threshold; e++) {
            int seen = ends[e] == c->params[i];
            for (int j = 0; j < g; j++)
                seen |= out[j].params[i] == ends[e];
            if (!seen) {
                out[g] = *c;
                out[g++].params[i] = ends[e];
            }
        }
    }
    return g;
}

/* A candidate that passed the check and then could not be timed: said, and
 * the first kept for the result's error. */
static void note_failure(const ab_tune_opts *o, ab_tune_result *r, const ab_candidate *c)
{
    if (!o->quiet)
        fprintf(stderr, "attnbench tune: %s with these parameters could not run (%s); "
                "not timed\n", c->kernel->name, attn_strerror(c->run_status));
    if (r->failed++ == 0)
        snprintf(r->failure, sizeof r->failure, "%s: %s", c->kernel->name,
                 attn_strerror(c->run_status));
}

/* time_of for the search: each candidate that could not run is noted in r. */
static int time_noting(const ab_tune_opts *o, tune_session *t, ab_tune_result *r,
                       ab_candidate *c, int n)
{
    if (time_of(o, t, c, n) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (c[i].run_status != ATTN_OK)
            note_failure(o, r, &c[i]);
    return 0;
}

/* Whether c varies from only in parameters whose whole effect a dry run
 * shows (attn_param.traced), on a row whose regions all report. */
static int traced_variant(const ab_candidate *c, const ab_candidate *from)
{
    if (!from || c->kernel != from->kernel || !c->kernel->explains)
        return 0;
    for (int p = 0; p < c->kernel->n_params; p++)
        if (c->params[p] != from->params[p] && !c->kernel->params[p].traced)
            return 0;
    return 1;
}

/* c's dry run (explain.h) on w at threads into t: 0, or -1. */
static int dry_run(const ab_candidate *c, const ab_workload *w, int threads, attn_trace *t)
{
    ab_param_setting ps[ATTN_MAX_PARAMS];
    for (int p = 0; p < c->kernel->n_params; p++) {
        snprintf(ps[p].name, sizeof ps[p].name, "%s", c->kernel->params[p].name);
        ps[p].value = c->params[p];
    }
    char ran[64], err[200];
    return ab_explain_workload(w, c->kernel->name, threads, ps, c->kernel->n_params, t, ran,
                               sizeof ran, err, sizeof err);
}

static int same_regions(const attn_trace *a, const attn_trace *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++) {
        const attn_region *x = &a->regions[i], *y = &b->regions[i];
        if (strcmp(x->name, y->name) != 0 || strcmp(x->unit, y->unit) != 0
            || x->n_threads != y->n_threads || x->after_barrier != y->after_barrier
            || memcmp(x->units_per_thread, y->units_per_thread,
                      sizeof(long) * (size_t)x->n_threads) != 0)
            return 0;
    }
    return 1;
}

/* The dry runs of one round: the regions of the candidate the round's ones
 * vary, recorded at the first traced variant. */
typedef struct dry_runs {
    int made;            /* 0 not yet, 1 made, -1 could not be */
    attn_trace from;
} dry_runs;

/* Whether c runs what from runs on s: the same regions in their dry runs.
 * A split that deals the tiles as auto does, a threshold on the same side
 * of the shape's size, a key tile where keys are not streamed: timing it
 * would time from again, each time a chance to win on noise. */
static int runs_as(dry_runs *d, tune_session *ts, const ab_candidate *c,
                   const ab_candidate *from, int threads)
{
    const ab_workload *w = session_inputs(ts);
    if (!w)
        return 0;
    if (d->made == 0)
        d->made = dry_run(from, w, threads, &d->from) == 0 ? 1 : -1;
    if (d->made != 1)
        return 0;
    attn_trace t = { 0 };
    int same = dry_run(c, w, threads, &t) == 0 && same_regions(&t, &d->from);
    attn_trace_clear(&t);
    return same;
}

static void dry_runs_free(dry_runs *d)
{
    attn_trace_clear(&d->from);   /* what a failed dry run recorded too */
    d->made = 0;
}

int ab_tune_same_run(const ab_candidate *a, const ab_candidate *b, const ab_shape *s, int threads)
{
    if (!traced_variant(b, a))
        return 0;
    tune_session ts;
    session_init(&ts, s);
    dry_runs d = { 0 };
    int same = runs_as(&d, &ts, b, a, threads);
    dry_runs_free(&d);
    session_free(&ts);
    return same;
}

/* Times pool[0..m) (a round's checked candidates) with the current best
 * (re-timed in the same rounds, so they compare fairly); the best of them
 * replaces r->best; fresh[0..n) get their times. */
static void settle_round(ab_candidate *pool, int m, ab_candidate *fresh, int n,
                         const ab_tune_opts *o, tune_session *ts, ab_tune_result *r)
{
    if (isfinite(r->best.median))
        pool[m++] = r->best;     /* re-timed in the same rounds as the new ones */
    if (time_noting(o, ts, r, pool, m) != 0)
        return;
    r->timed += m;
    for (int i = 0; i < n; i++)          /* the caller may want the others' times */
        for (int j = 0; j < m; j++)
            if (same_candidate(&fresh[i], &pool[j]))
                fresh[i] = pool[j];
    int bi = 0, incumbent = -1, base = -1;
    for (int i = 0; i < m; i++) {
        if (pool[i].median < pool[bi].median)
            bi = i;
        if (same_candidate(&pool[i], &r->base)) {
            r->base = pool[i];
            base = i;
        }
        if (isfinite(r->best.median) && same_candidate(&pool[i], &r->best))
            incumbent = i;
    }
    /* The incumbent is the best so far; in the first round, the default.
     * A challenger must beat it (beats: by the margin, in the paired
     * rounds), or parameters would drift on chance (or on ones the op never
     * uses) and the first round's fastest median would win on noise. One
     * without a time this round (it could not run, or its call was judged
     * TOO_SLOW, timed or estimated) holds nothing: a default whose call a
     * busy machine had paused once held the round and left it no pick. */
    if (incumbent < 0)
        incumbent = base;
    if (incumbent >= 0 && !isfinite(pool[incumbent].median))
        incumbent = -1;
    if (incumbent >= 0 && bi != incumbent && !beats(&pool[bi], &pool[incumbent]))
        bi = incumbent;
    if (isfinite(pool[bi].median))
        r->best = pool[bi];
}

/* Checks, then times (settle_round) the candidates fresh[0..n) of ts's
 * shape. from: the candidate they vary (NULL: none), whose traced variants
 * that run what it runs are left out (runs_as); with the real timer only
 * (the tests' cost models price parameters a dry run cannot see). */
static void round_of(ab_candidate *fresh, int n, const ab_candidate *from, const ab_tune_opts *o,
                     tune_session *ts, ab_tune_result *r, int *done, int total)
{
    ab_candidate pool[MAX_CANDIDATES + 1];
    int m = 0;
    dry_runs dry = { 0 };
    for (int i = 0; i < n && m < MAX_CANDIDATES; i++) {
        if (out_of_time(o)) {
            r->out_of_time = 1;
            break;
        }
        if (!o->probe && traced_variant(&fresh[i], from)
            && runs_as(&dry, ts, &fresh[i], from, o->threads)) {
            r->same++;
            continue;
        }
        r->checked++;
        if (!check_of(o, ts, &fresh[i])) {
            r->rejected++;
            if (!o->quiet)
                fprintf(stderr, "attnbench tune: %s with these parameters failed the check "
                        "(max error %.3g of the bound); not timed\n", fresh[i].kernel->name,
                        fresh[i].max_err);
            continue;
        }
        pool[m++] = fresh[i];
    }
    dry_runs_free(&dry);
    if (m > 0)
        settle_round(pool, m, fresh, n, o, ts, r);
    /* Counted whether or not any was left to time: a round whose every
     * candidate ran what it varies left the progress short of its total. */
    *done += n;
    if (o->progress)
        o->progress(o->progress_arg, *done, total, &r->best);
}

/* Whether a call of s can read parameter p: a GEMM's only with an op that
 * runs GEMMs (SDPA alone does not), the decode path's only with a call of at
 * most ATTN_DECODE_ROWS_MAX query rows per key/value head (decoding steps,
 * one token each, have one). Varying one no call reads times candidates
 * that differ in nothing, and lets one of them win by chance: 7 of the 27
 * neighbours of avx2's defaults a tune of a BERT-base layer at L 128
 * checked and timed varied decode_rows, prefetch or row_prefetch. */
static int param_read(const attn_param *p, const ab_shape *s)
{
    if (p->gemm_only && !ab_op_row_of(s->op)->gemms)
        return 0;
    long rows = s->steps > 0 ? 1 : s->q_len;
    return !p->decode_only
        || rows * (s->heads / ab_shape_kv_heads(s)) <= ATTN_DECODE_ROWS_MAX;
}

/* One sweep over the parameters of start's kernel: each at the given
 * factors, compared with the best so far. 1 when the best changed. */
static int coordinate_pass(ab_candidate *start, const double *steps, int n_steps,
                           const ab_tune_opts *o, tune_session *ts, ab_tune_result *r, int *done,
                           int *total)
{
    int improved = 0;
    for (int i = 0; i < start->kernel->n_params && !r->out_of_time; i++) {
        if (!param_read(&start->kernel->params[i], ts->shape))
            continue;   /* nothing to tune */
        ab_candidate grid[8], before = r->best;
        int g = neighbours(start, i, steps, n_steps, grid);
        *total += g;
        round_of(grid, g, start, o, ts, r, done, *total);
        if (!same_candidate(&before, &r->best)) {
            improved = 1;
            if (r->best.kernel == start->kernel)
                *start = r->best;   /* go on from the improved point */
        }
        r->out_of_time |= out_of_time(o);
    }
    return improved;
}

/* Whether row k competes: it runs here, is not the oracle, and its math is
 * fp32, or bf16 when the tune is for "auto-bf16". */
static int tune_candidate(const attn_kernel *k, const ab_tune_opts *o)
{
    return attn_registry_runnable(k) && strcmp(k->name, "naive") != 0
        && (k->math == ATTN_F32 || (o->bf16 && k->math == ATTN_BF16));
}

static int tune_shape(const ab_tune_opts *o, tune_session *ts, ab_tune_result *r)
{
    memset(r, 0, sizeof *r);
    r->best.median = r->base.median = INFINITY;
    ab_candidate first[64];
    int n = 0, done = 0;
    /* The untuned choice: what an auto context without wisdom runs, by
     * features (not ATTN_KERNEL's override: the tuner's own environment
     * once made the kernel it named the default stored and beaten). */
    const attn_kernel *base_row = attn_registry_by_features(o->bf16);
    if (!base_row) {
        snprintf(r->error, sizeof r->error, "no kernel runs here");
        return -1;
    }
    const char *base_name = base_row->name;
    for (int i = 0; i < attn_kernel_count() && n < 64; i++) {
        const attn_kernel *k = attn_registry_get(i);
        if (!tune_candidate(k, o))
            continue;
        first[n] = (ab_candidate){ .kernel = k, .median = INFINITY };
        defaults_of(k, first[n].params);
        if (strcmp(k->name, base_name) == 0)
            r->base = first[n];
        n++;
    }
    if (!r->base.kernel) {
        snprintf(r->error, sizeof r->error, "the default kernel %s is not a candidate", base_name);
        return -1;
    }
    if (o->level == AB_TUNE_ESTIMATE) {
        r->best = r->base;
        r->checked = 1;
        if (!check_of(o, ts, &r->best)) {
            snprintf(r->error, sizeof r->error, "the default kernel %s failed the check",
                     base_name);
            return -1;
        }
        return 0;
    }
    int total = n;
    /* The default first: a budget that runs out while the candidates warm
     * up (ab_tune_time) leaves the last ones untimed, and the default is
     * what every other candidate must beat. */
    for (int i = 1; i < n; i++)
        if (first[i].kernel == r->base.kernel) {
            ab_candidate t = first[0];
            first[0] = first[i];
            first[i] = t;
        }
    /* Every kernel at its defaults. */
    round_of(first, n, NULL, o, ts, r, &done, total);
    if (!isfinite(r->best.median)) {
        if (r->failed)
            snprintf(r->error, sizeof r->error,
                     "no candidate passed the check and ran (%d could not run; first %s)",
                     r->failed, r->failure);
        else
            snprintf(r->error, sizeof r->error, "no candidate passed the check and ran");
        return -1;
    }
    /* The coarse grid (each parameter at ½× and 2×) around the winning
     * kernel, and around the runner-up kernel if it came within 10%: kernels
     * this close at their defaults may swap places once tuned. */
    static const double coarse[] = { 0.5, 2.0 }, fine[] = { 0.5, 0.75, 1.25, 2.0 };
    const ab_candidate *runner_up = NULL;
    for (int i = 0; i < n; i++)
        if (first[i].kernel != r->best.kernel && isfinite(first[i].median)
            && (!runner_up || first[i].median < runner_up->median))
            runner_up = &first[i];
    ab_candidate second = runner_up && runner_up->median < 1.10 * r->best.median ? *runner_up
                        : r->best;
    /* The first pass goes around the winner at its defaults even when the
     * runner-up's pass has overtaken it: the two are that close, and the
     * overtaking may be noise (a parameter that changes nothing winning a
     * round by chance) that would leave the winner unexplored. */
    const ab_candidate winner = r->best;
    if (second.kernel != r->best.kernel)
        coordinate_pass(&second, coarse, 2, o, ts, r, &done, &total);
    int passes = o->level == AB_TUNE_PATIENT ? 8 : 1;
    for (int pass = 0; pass < passes && !r->out_of_time; pass++) {
        ab_candidate start = pass == 0 ? winner : r->best;
        int improved = coordinate_pass(&start, pass == 0 ? coarse : fine, pass == 0 ? 2 : 4, o,
                                       ts, r, &done, &total);
        if (pass > 0 && !improved)
            break;   /* patient: a full sweep that changed nothing */
    }
    /* The final word, and the speedup that is stored: the winner and the
     * untuned choice head to head in the same rounds (their earlier times
     * may come from rounds far apart on a machine whose speed drifts). A
     * default without a time failed the check (or was not worth timing): it
     * is never timed here either, and the record has no speedup. */
    if (same_candidate(&r->best, &r->base)) {
        r->base = r->best;
    } else if (isfinite(r->base.median)) {
        ab_candidate pair[2] = { r->best, r->base };
        if (time_noting(o, ts, r, pair, 2) == 0) {
            if (!isfinite(pair[1].median) && pair[1].run_status == ATTN_OK
                && !(pair[1].estimate > 0.0)) {
                /* The default left untimed, neither failing nor estimated
                 * far slower: the budget ran out before its turn. No final
                 * word, so no change from it (the pick once went to the
                 * wisdom unconfirmed). */
                r->best = r->base;
            } else {
                r->best = pair[0];
                r->base = pair[1];
                /* It did not hold up (or could not run again): keep the
                 * default, unless the default is the one without a time. */
                if (isfinite(r->base.median) && !beats(&r->best, &r->base))
                    r->best = r->base;
            }
        }
    }
    if (!isfinite(r->best.median)) {
        snprintf(r->error, sizeof r->error, "the pick could not run again (first failure %s)",
                 r->failure);
        return -1;
    }
    return 0;
}

int ab_tune_shape(const ab_shape *s, const ab_tune_opts *o, ab_tune_result *r)
{
    tune_session ts;
    session_init(&ts, s);
    int rc = tune_shape(o, &ts, r);
    session_free(&ts);
    return rc;
}

int ab_tune_evaluate(const ab_shape *s, const ab_tune_opts *o, ab_candidate *pick,
                     ab_candidate *winner, int *n_candidates)
{
    ab_candidate *all = malloc(MAX_CANDIDATES * sizeof *all);
    if (!all)
        return -1;
    tune_session ts;
    session_init(&ts, s);
    int n = 0;
    all[n++] = *pick;
    for (int i = 0; i < attn_kernel_count(); i++) {
        const attn_kernel *k = attn_registry_get(i);
        if (!tune_candidate(k, o))
            continue;
        ab_candidate c = { .kernel = k };
        defaults_of(k, c.params);
        if (n < MAX_CANDIDATES && check_of(o, &ts, &c))
            all[n++] = c;
        for (int p = 0; p < k->n_params; p++) {
            if (!param_read(&k->params[p], s))
                continue;
            static const double coarse[] = { 0.5, 2.0 };
            ab_candidate grid[8];
            int g = neighbours(&c, p, coarse, 2, grid);
            for (int j = 0; j < g && n < MAX_CANDIDATES; j++)
                if (check_of(o, &ts, &grid[j]))
                    all[n++] = grid[j];
        }
    }
    int rc = time_of(o, &ts, all, n);
    int bi = 0;
    for (int i = 1; rc == 0 && i < n; i++)
        if (all[i].median < all[bi].median)
            bi = i;
    /* The fastest of many noisy medians is biased low (the winner's curse):
     * the pick and the exhaustive winner meet again, head to head. */
    ab_candidate pair[2] = { *pick, all[bi] };
    if (rc == 0)
        rc = time_of(o, &ts, pair, 2);
    if (rc == 0) {
        *pick = pair[0];
        *winner = pair[1];
        *n_candidates = n;
    }
    session_free(&ts);
    free(all);
    return rc;
}

void ab_tune_record(const ab_tune_result *r, const ab_shape *s, const ab_tune_opts *o,
                    uint64_t machine, attn_wisdom_record *rec)
{
    static const char *const levels[] = { "estimate", "measure", "patient" };
    memset(rec, 0, sizeof *rec);
    rec->machine = machine;
    ab_shape_bucket(s, o->threads, &rec->bucket);
    snprintf(rec->kernel, sizeof rec->kernel, "%s", r->best.kernel->name);
    /* Only the parameters the tune moved from their defaults: one it kept
     * at its default takes the default of the build that reads the record,
     * so a later build's better default is not masked by old wisdom (a
     * review: records pinned every parameter, the GEMM's on SDPA buckets
     * and row_prefetch before its default changed, included). */
    int defaults[ATTN_MAX_PARAMS];
    defaults_of(r->best.kernel, defaults);
    rec->n_params = 0;
    for (int i = 0; i < r->best.kernel->n_params; i++) {
        if (r->best.params[i] == defaults[i])
            continue;
        snprintf(rec->param_name[rec->n_params], sizeof rec->param_name[0], "%s",
                 r->best.kernel->params[i].name);
        rec->param_value[rec->n_params++] = r->best.params[i];
    }
    rec->time_ns = isfinite(r->best.median) ? r->best.median * 1e9 : 0.0;
    rec->default_time_ns = isfinite(r->base.median) ? r->base.median * 1e9 : 0.0;
    rec->max_err = r->best.max_err;
    /* A search the budget cut short is a level less thorough than asked: as
     * the level asked, it replaced a finished search's record of that level
     * in the merge (attn_wisdom_find_slot keeps only a more thorough one). */
    int level = r->out_of_time && o->level > AB_TUNE_ESTIMATE ? (int)o->level - 1 : (int)o->level;
    snprintf(rec->level, sizeof rec->level, "%s", levels[level]);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(rec->when, sizeof rec->when, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int ab_tune_check_calls(const attn_bucket *b, ab_shape calls[2], char *why, size_t len)
{
    static const char *const ops[] = { [ATTN_OP_SDPA] = "sdpa", [ATTN_OP_MHA] = "mha",
                                       [ATTN_OP_ENCODER] = "encoder" };
    static const char *const masks[] = { [ATTN_MASK_CLASS_NONE] = "none",
                                         [ATTN_MASK_CLASS_CAUSAL] = "causal",
                                         [ATTN_MASK_CLASS_PADDED] = "padding" };
    if (b->op < 0 || b->op >= ATTN_OP_COUNT || b->mask_class < 0 || b->mask_class > 2
        || b->len_log2 < 0 || b->len_log2 > 30 || b->threads < 1 || b->head_dim < 1
        || b->head_dim > (1 << 20) || (unsigned)b->k_type >= ATTN_DTYPE_COUNT
        || (unsigned)b->v_type >= ATTN_DTYPE_COUNT
        || (b->decode && b->op != ATTN_OP_SDPA && b->op != ATTN_OP_MHA)) {
        snprintf(why, len, "not a bucket this attnbench knows");
        return 0;
    }
    /* The check cuts its length (CHECK_LEN); a shape has one type for keys
     * and values, so keys and values of two types are checked once on each. */
    const int l = 1 << (b->len_log2 < 7 ? b->len_log2 : 7), dh = b->head_dim;
    const attn_dtype types[2] = { b->k_type, b->v_type };
    const int n = b->v_type == b->k_type ? 1 : 2;
    for (int i = 0; i < n; i++) {
        char text[160], kv[16] = "";
        if (types[i] != ATTN_F32)
            snprintf(kv, sizeof kv, ",kv=%s", attn_dtype_name(types[i]));
        if (b->op == ATTN_OP_ENCODER && types[i] != ATTN_F32)
            /* Typed encoder buckets come from decoder layers' caches
             * (ab_shape_bucket): a decoder layer reads its cache as stored. */
            snprintf(text, sizeof text, "op=decoder,B=2,L=%d,M=%d,D=%d,H=2,F=%d%s", l, l, 2 * dh,
                     4 * dh, kv);
        else if (b->decode)   /* a step: one query row, causal aligned to its keys' end */
            snprintf(text, sizeof text, "op=%s,B=2,H=2,Lq=1,Lk=%d,Dh=%d,mask=%s%s", ops[b->op],
                     l, dh, b->mask_class == ATTN_MASK_CLASS_CAUSAL ? "causal-br"
                                                                     : masks[b->mask_class], kv);
        else
            snprintf(text, sizeof text, "op=%s,B=2,H=2,L=%d,Dh=%d,mask=%s%s", ops[b->op], l, dh,
                     masks[b->mask_class], kv);
        if (ab_shape_parse(text, AB_OP_SDPA, &calls[i], why, len) != 0)
            return 0;
    }
    return n;
}

int ab_tune_verify_record(const attn_wisdom_record *rec, double *max_err, char *why, size_t len)
{
    const attn_bucket *b = &rec->bucket;
    *max_err = INFINITY;
    ab_candidate c = { .kernel = attn_registry_find(rec->kernel), .max_err = INFINITY };
    if (!c.kernel || !attn_registry_runnable(c.kernel)) {
        snprintf(why, len, "%s: %s", rec->kernel, c.kernel ? "does not run here" : "no such kernel");
        return 0;
    }
    defaults_of(c.kernel, c.params);
    for (int i = 0; i < rec->n_params; i++) {
        int k = 0;
        while (k < c.kernel->n_params && strcmp(c.kernel->params[k].name, rec->param_name[i]) != 0)
            k++;
        if (k == c.kernel->n_params) {
            snprintf(why, len, "%s has no parameter %s", rec->kernel, rec->param_name[i]);
            return 0;
        }
        c.params[k] = rec->param_value[i];
    }
    ab_shape calls[2];
    const int n = ab_tune_check_calls(b, calls, why, len);
    int ok = n > 0;
    double worst = n > 0 ? 0.0 : INFINITY;
    check_oracle oracle = { .shape = "" };
    for (int i = 0; ok && i < n; i++) {
        ok = check_candidate(&c, &calls[i], b->threads, &oracle);
        worst = c.max_err > worst || c.max_err != c.max_err ? c.max_err : worst;
        if (!ok) {
            char text[160];
            ab_shape_format(&calls[i], text, sizeof text);
            snprintf(why, len, "%s gave a wrong result on %s (%.3g of the error bound)",
                     rec->kernel, text, c.max_err);
        }
    }
    oracle_free(&oracle);
    *max_err = worst;
    return ok;
}
