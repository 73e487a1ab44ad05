/* bench.c — calibrated, repeated timing of benchmarks, side by side (bench.h). */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "timer.h"

void ab_run_name(const char *kernel, const ab_shape *s, int threads, char *buf, size_t len)
{
    char label[160];
    ab_shape_label(s, label, sizeof label);
    snprintf(buf, len, "%s/%s/%s/threads:%d", ab_op_name(s->op), kernel, label, threads);
}

double ab_result_gflops(const ab_result *r, double seconds)
{
    return seconds > 0.0 ? r->flops / seconds / 1e9 : NAN;
}

double ab_result_pct_peak(const ab_result *r, double seconds)
{
    return r->peak_gflops > 0.0 ? 100.0 * ab_result_gflops(r, seconds) / r->peak_gflops : NAN;
}

/* The regression gate's test hook (tests/gate.sh, docs/verdicts.md): with
 * ATTNBENCH_INJECT_SLOWDOWN=KERNEL[@BUILD]:F[:spin] in the environment,
 * every batch timed for that kernel takes F longer, as the same kernel F
 * slower would. By default it makes the whole extra calls of F x its calls
 * (real work, so instruction counts grow too: ten calls at 0.1 make
 * exactly one more), then spins for the fraction of a call that is left,
 * at this batch's own time per call. (Spreading a fraction as one more
 * call every few batches, as it once did, made single-call batches
 * alternate between 1x and 2x, and their median anywhere between.) With
 * :spin it makes no extra call and spins for all of F: only time can see
 * that slowdown, as a verdict on timings must. Several entries may be
 * given, comma-separated; KERNEL * means every kernel; KERNEL alone is this
 * build's (run --lib's "@self"), KERNEL@BUILD that build's. */
typedef struct slowdown {
    long millionths;          /* F; 0: the hook is off for this kernel */
    int spin;
} slowdown;

size_t ab_kernel_base_len(const char *kernel)
{
    const char *at = strchr(kernel, '@');
    return at ? (size_t)(at - kernel) : strlen(kernel);
}

static int names_kernel(const char *entry, size_t n, const char *kernel)
{
    if (n == 1 && entry[0] == '*')
        return 1;
    size_t base = ab_kernel_base_len(kernel);
    if (memchr(entry, '@', n))   /* KERNEL@BUILD: exactly that one */
        return strlen(kernel) == n && strncmp(entry, kernel, n) == 0;
    /* KERNEL: this build's, "K" in a plain run or "K@self" beside --lib ones */
    return n == base && strncmp(entry, kernel, n) == 0
        && (kernel[base] == '\0' || strcmp(kernel + base, "@self") == 0);
}

static slowdown injected_slowdown(const char *kernel)
{
    const char *v = getenv("ATTNBENCH_INJECT_SLOWDOWN");
    slowdown none = { 0, 0 };
    for (const char *p = v; p && *p; p += strcspn(p, ","), p += *p == ',') {
        size_t n = strcspn(p, ":,");
        if (p[n] != ':' || !names_kernel(p, n, kernel))
            continue;
        double f = atof(p + n + 1);
        const char *mode = p + n + 1 + strcspn(p + n + 1, ":,");
        slowdown s = { f > 0.0 && f < 10.0 ? lround(f * 1e6) : 0,
                       *mode == ':' && strncmp(mode + 1, "spin", 4) == 0 };
        return s;
    }
    return none;
}

/* Runs iters calls of lib (NULL: this build), slowed by the test hook;
 * returns wall seconds (and CPU seconds in *cpu), or -1 when a call fails.
 * threads: the context's team. A team of one runs on this thread, and its
 * CPU time is this thread's: the process's also held the idle workers of
 * a larger team timed just before (run --threads 1,2 side by side), which
 * spin for milliseconds before they sleep — 1-thread rows read 1.10-1.17
 * CPU seconds a second. Larger teams keep the process's time. */
static double time_calls(const ab_library *lib, attn_ctx *ctx, const ab_workload *w, float *out,
                         long iters, int threads, slowdown slow, double *cpu, attn_status *st)
{
    double (*cpu_now)(void) = threads == 1 ? ab_thread_cpu_now : ab_cpu_now;
    long long extra = (long long)iters * slow.millionths;
    long calls = iters + (slow.spin ? 0 : (long)(extra / 1000000));
    long long spun = slow.spin ? extra : extra % 1000000;   /* millionths of a call */
    if (!lib)
        lib = &ab_library_self;
    double c0 = cpu_now(), t0 = ab_now();
    for (long i = 0; i < calls; i++) {
        *st = ab_workload_run_in(lib, ctx, w, out);
        if (*st != ATTN_OK)
            return -1.0;
    }
    double t1 = ab_now();
    if (spun != 0) {
        double until = t1 + (t1 - t0) / (double)calls * (double)spun * 1e-6;
        while ((t1 = ab_now()) < until)
            ;
    }
    *cpu = cpu_now() - c0;
    return t1 - t0;
}

/* Calls above this much work are first tried on a smaller shape. */
#define PROBE_FLOPS 1e8

/* It keeps max_call_time from first making a call it exists to avoid: the
 * oracle's SDPA at L 8192 takes over a minute, and a 32nd of BERT-base at
 * B 8, L 512 (24 GFLOP) took the oracle 10 s a probe. */
void ab_call_probe_init(ab_call_probe *p, const ab_shape *s)
{
    memset(p, 0, sizeof *p);
    p->shape = *s;
}

/* Makes the cut shape's inputs: 0, or -1 when there is nothing to probe. */
static int call_probe_make(ab_call_probe *p)
{
    const ab_shape *s = &p->shape;
    double flops = ab_shape_flops(s);
    if (!(flops > PROBE_FLOPS))
        return -1;
    ab_shape small = *s;
    small.batch = 1;                        /* the work is linear in the batch */
    small.layers = s->layers > 0 ? 1 : 0;   /* generate, bert: layers × one layer's */
    double target = fmin(flops / 32.0, 1e9);
    for (int i = 0; i < 8 && ab_shape_flops(&small) > target; i++) {
        small.q_len = small.q_len > 32 ? small.q_len / 2 : small.q_len;
        small.kv_len = small.kv_len > 32 ? small.kv_len / 2 : small.kv_len;
        small.steps = small.steps > 32 ? small.steps / 2 : small.steps;
    }
    if (ab_shape_flops(&small) >= flops || ab_workload_init(&p->w, &small, 1, 0) != 0)
        return -1;
    p->out = ab_alloc_floats(p->w.out_len, 0);
    if (!p->out) {
        ab_workload_free(&p->w);
        return -1;
    }
    p->scale = flops / ab_shape_flops(&small);
    return 0;
}

double ab_call_probe_estimate(ab_call_probe *p, const ab_library *lib, attn_ctx *ctx)
{
    if (p->made == 0)
        p->made = call_probe_make(p) == 0 ? 1 : -1;
    if (p->made != 1)
        return 0.0;
    double t = 0.0, cpu;
    attn_status st;
    const slowdown none = { 0, 0 };
    if (time_calls(lib, ctx, &p->w, p->out, 1, 0, none, &cpu, &st) >= 0.0)
        t = time_calls(lib, ctx, &p->w, p->out, 1, 0, none, &cpu, &st);
    return t > 0.0 ? t * p->scale : 0.0;
}

void ab_call_probe_free(ab_call_probe *p)
{
    if (p->made == 1) {
        ab_free(p->out);
        ab_workload_free(&p->w);
    }
    p->made = 0;
}

int ab_estimate_over(double seconds, double limit)
{
    return seconds > 2.0 * limit;
}

int ab_bench_estimate_skips(const ab_bench_opts *o, double seconds)
{
    return o->max_call_time > 0.0 && ab_estimate_over(seconds, o->max_call_time);
}

int ab_bench_prepare(attn_ctx *ctx, const ab_workload *w, const ab_bench_opts *o, ab_result *r,
                     float *out, ab_call_probe *probe)
{
    attn_status st = ATTN_OK;
    double cpu;

    r->error[0] = '\0';
    r->reps = 0;
    r->timed = 0.0;
    r->unstable = 0;
    r->extra_rss = NAN;
    r->median_lo = r->median_hi = r->precision = NAN;
    r->rho = 0.0;
    r->flops = ab_shape_flops(&r->shape);
    r->bytes = ab_shape_bytes(&r->shape);
    ab_run_name(r->kernel, &r->shape, r->threads, r->run_name, sizeof r->run_name);
    r->n_events = o->counters ? ab_counters_count(o->counters) : 0;
    if (r->n_events > AB_MAX_EVENTS) {
        /* ab_counters_stop writes one value per event asked for. */
        snprintf(r->error, sizeof r->error, "more than %d counter events", AB_MAX_EVENTS);
        return -1;
    }

    double estimate = 0.0;
    if (o->max_call_time > 0.0) {
        ab_call_probe own;
        if (!probe)
            ab_call_probe_init(probe = &own, &r->shape);
        estimate = ab_call_probe_estimate(probe, r->lib, ctx);
        if (probe == &own)
            ab_call_probe_free(&own);
    }
    if (ab_bench_estimate_skips(o, estimate)) {
        r->real[0] = estimate;
        return 1;
    }
    /* Warm-up: the first call grows the workspace and faults its pages in. */
    const slowdown none = { 0, 0 };
    double first = time_calls(r->lib, ctx, w, out, 1, r->threads, none, &cpu, &st);
    if (first < 0.0)
        goto failed;
    /* Over the limit: a second call confirms it (the faster counts), as the
     * first also grew the workspace and may have been paused on a busy
     * machine; a row skipped here also skips, untried, every larger shape
     * of its kernel in the run. */
    if (o->max_call_time > 0.0 && first > o->max_call_time) {
        double again = time_calls(r->lib, ctx, w, out, 1, r->threads, none, &cpu, &st);
        if (again < 0.0)
            goto failed;
        if (again > o->max_call_time) {
            r->real[0] = fmin(first, again);
            return 1;
        }
    }

    /* Calibrate: grow the count until one batch lasts min_time; the batches
     * double as further warm-up. */
    long iters = o->iterations > 0 ? o->iterations : 1;
    while (o->iterations <= 0) {
        double t = time_calls(r->lib, ctx, w, out, iters, r->threads, injected_slowdown(r->kernel),
                              &cpu, &st);
        if (t < 0.0)
            goto failed;
        if (t >= o->min_time || iters >= 1000000000L)
            break;
        double grow = t > 0.0 ? 1.2 * o->min_time / t : 10.0;
        if (grow > 10.0)
            grow = 10.0;
        long next = (long)ceil((double)iters * grow);
        iters = next > iters ? next : iters + 1;
    }
    r->iterations = iters;
    return 0;

failed:
    snprintf(r->error, sizeof r->error, "%s", attn_strerror(st));
    return -1;
}

int ab_bench_repeat(attn_ctx *ctx, const ab_workload *w, const ab_bench_opts *o, ab_result *r,
                    float *out, int round)
{
    attn_status st = ATTN_OK;
    double cpu = 0.0;
    slowdown slow = injected_slowdown(r->kernel);
    int rep = r->reps;
    if (rep >= AB_MAX_REPS)
        return 0;
    int passes = o->counters ? ab_counters_passes(o->counters) : 0;
    long long values[AB_MAX_EVENTS];
    for (int e = 0; e < r->n_events; e++)
        r->events[e][rep] = NAN;
    /* With counters, each pass runs the same batch once with its own event
     * set; the time of the first pass is the repetition's time. */
    int runs = passes > 0 ? passes : 1;
    for (int pass = 0; pass < runs; pass++) {
        int counting = passes > 0 && ab_counters_start(o->counters, pass) == 0;
        double t = time_calls(r->lib, ctx, w, out, r->iterations, r->threads, slow, &cpu, &st);
        if (counting && ab_counters_stop(o->counters, pass, values) == 0) {
            for (int e = 0; e < r->n_events; e++)
                if (ab_counters_in_pass(o->counters, e, pass))
                    r->events[e][rep] = (double)values[e] / (double)r->iterations;
        }
        if (t < 0.0) {
            snprintf(r->error, sizeof r->error, "%s", attn_strerror(st));
            return -1;
        }
        if (pass == 0) {
            r->real[rep] = t / (double)r->iterations;
            r->cpu[rep] = cpu / (double)r->iterations;
            r->timed += t;
        }
    }
    r->round[rep] = round;
    r->reps = rep + 1;
    return 0;
}

/* The half-width of the median's 95% interval over the median, or NaN
 * below AB_MEDIAN_CI_MIN repetitions (or effective repetitions, rho > 0):
 * the widest distribution-free interval, [min, max], covers the median only
 * 1 − 2^(1−n) of the time (50% at 2, 93.75% at 5), so "95%" would be a
 * false claim and one repetition would read "+-0.0%" and stop. */
static double result_precision(const ab_result *r, double rho)
{
    return r->reps >= AB_MEDIAN_CI_MIN ? ab_median_precision_correlated(r->real, r->reps, rho)
                                       : NAN;
}

int ab_bench_rep_cap(const ab_bench_opts *o)
{
    return o->max_repetitions > 0 && o->max_repetitions < AB_MAX_REPS ? o->max_repetitions
                                                                      : AB_MAX_REPS;
}

int ab_bench_done(const ab_result *r, const ab_bench_opts *o, double rho)
{
    if (r->error[0] || r->reps >= ab_bench_rep_cap(o))
        return 1;
    if (r->reps < o->repetitions)
        return 0;
    if (o->precision <= 0.0)
        return 1;
    if (o->max_time > 0.0 && r->timed >= o->max_time)
        return 1;
    return result_precision(r, rho) <= o->precision;
}

void ab_bench_finish(ab_result *r, const ab_bench_opts *o, double rho)
{
    if (r->reps < 1)
        return;
    ab_stats_compute(r->real, r->reps, &r->real_stats);
    ab_stats_compute(r->cpu, r->reps, &r->cpu_stats);
    r->median_lo = r->median_hi = NAN;
    r->rho = rho;
    if (r->reps >= AB_MEDIAN_CI_MIN
        && ab_median_ci_correlated(r->real, r->reps, 0.95, rho, &r->median_lo, &r->median_hi) != 0)
        r->median_lo = r->median_hi = NAN;
    r->precision = result_precision(r, rho);
    /* Fixed repetitions (precision 0) promise nothing, so they cannot miss it. */
    r->unstable = o->precision > 0.0 && o->unstable_above > 0.0
               && !(r->precision <= o->unstable_above);
}

/* The correlation a group's intervals allow for: the run's earlier rows
 * (o->drift) pooled with the group's repetitions so far. */
static double group_rho(const ab_bench_member *m, int n, const ab_bench_opts *o, ab_lag1 *group)
{
    ab_lag1 acc = o->drift ? *o->drift : (ab_lag1){ 0 };
    *group = (ab_lag1){ 0 };
    for (int i = 0; i < n; i++)
        if (!m[i].r->error[0])
            ab_lag1_add(group, m[i].r->real, m[i].r->reps);
    ab_lag1_merge(&acc, group);
    return ab_lag1_rho(&acc);
}

/* Where a process's buffers land (their offsets within pages, which cache
 * sets and which 4 KiB aliases they share) is fixed for its whole run and
 * differs from run to run, one of the known ways the same binary runs at
 * two speeds (Mytkowicz et al., "Producing wrong data without doing
 * anything obviously wrong", 2009). So every round times the calls on a
 * fresh copy of the inputs and a fresh output, each at a random offset of
 * up to 64 KiB (as Stabilizer randomizes layout): a run's median then
 * stands for the layouts a process may get, and a benchmark sensitive to
 * them shows it in its own spread rather than as one layout's bias. (The
 * run-to-run shifts of 15-25% seen here on 10-50 us calls did not go away
 * with it: the machine's own state dominates those; compare's floor covers
 * them.) */
#define RELAYOUT_SPAN ((size_t)64 << 10)

/* The reference loops of run --reference (ab_bench_opts.reference_bytes):
 * the widest FMA loop this machine runs, calibrated once to about 1 ms, and
 * a sum over a buffer of ones. */
typedef struct reference {
    ab_isa isa;
    long iters;
    float *buf;
    size_t len;
} reference;

static int reference_init(reference *ref, size_t bytes)
{
    ref->isa = ab_widest_isa();
    ref->len = bytes / sizeof(float);
    ref->buf = ab_alloc_floats(ref->len, 0);
    if (!ref->buf)
        return -1;
    for (size_t i = 0; i < ref->len; i++)
        ref->buf[i] = 1.0f;
    ref->iters = 1000;
    for (int k = 0; k < 8; k++) {   /* grow to about 1 ms */
        double t0 = ab_now();
        ab_fma_loop(ref->isa, ref->iters);
        double t = ab_now() - t0;
        if (t >= 1e-3)
            break;
        ref->iters = t > 1e-4 ? (long)(ref->iters * 1.2e-3 / t) : ref->iters * 10;
    }
    return 0;
}

/* Times both loops once: *compute and *read in seconds. */
static void reference_time(const reference *ref, double *compute, double *read)
{
    double t0 = ab_now();
    volatile double sink = ab_fma_loop(ref->isa, ref->iters);
    double t1 = ab_now();
    sink = ab_read_sum(ref->buf, ref->len);
    double t2 = ab_now();
    (void)sink;
    *compute = t1 - t0;
    *read = t2 - t1;
}

int ab_bench_rounds(ab_bench_member *m, int n, const ab_workload *w, const ab_bench_opts *o,
                    uint64_t *rng, ab_bench_progress progress, void *progress_arg)
{
    int *order = malloc(sizeof *order * (size_t)(n > 0 ? n : 1));
    ab_workload copy;
    int have_copy = 0;
    reference ref = { .buf = NULL };
    /* The group's rows and the correlation they and the run's earlier rows
     * show, as of the last round: every check between rounds uses these. */
    ab_lag1 group;
    if (!order || (o->reference_bytes > 0 && reference_init(&ref, o->reference_bytes) != 0)) {
        free(order);
        return -1;
    }
    for (int i = 0; i < n; i++)
        m[i].live = !m[i].r->error[0];
    double rho = group_rho(m, n, o, &group);
    for (int round = 0;; round++) {
        int live = 0;
        for (int i = 0; i < n; i++)
            if (m[i].live)
                order[live++] = i;
        if (live == 0) {
            /* Every row is checked again with the group's whole sample: a
             * row that met --precision under the correlation of the rounds
             * before may not under all of them, and samples on (within its
             * caps) until it does. A row left with no interval by the
             * last rounds' drift read UNSTABLE, however tight its times. */
            for (int i = 0; i < n; i++)
                if (!ab_bench_done(m[i].r, o, rho))
                    m[i].live = 1, order[live++] = i;
            if (live == 0)
                break;
        }
        /* The new copy is made before the old one is freed, so it cannot
         * simply take the old one's place. */
        ab_workload next;
        float *out = ab_alloc_floats(w->out_len, ab_rng_next(rng) % (RELAYOUT_SPAN / 64) * 64);
        int cloned = out && ab_workload_clone(&next, w, ab_rng_next(rng) % RELAYOUT_SPAN) == 0;
        if (have_copy)
            ab_workload_free(&copy);
        have_copy = cloned;
        if (cloned)
            copy = next;
        if (!out) {
            /* Every row still sampling ends here with the reason; rows
             * left unfinished reached the table with a median of 0 ns. */
            for (int k = 0; k < live; k++)
                snprintf(m[order[k]].r->error, sizeof m[order[k]].r->error,
                         "out of memory for a round's output");
            break;
        }
        memset(out, 0, w->out_len * sizeof *out);   /* its pages faulted in, not timed */
        const ab_workload *inputs = cloned ? &copy : w;
        double ref_compute = 0.0, ref_read = 0.0;
        if (ref.buf)
            reference_time(&ref, &ref_compute, &ref_read);
        /* Fisher–Yates: a new order every round. */
        for (int i = live - 1; i > 0; i--) {
            int j = (int)(ab_rng_next(rng) % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int k = 0; k < live; k++) {
            ab_bench_member *x = &m[order[k]];
            const ab_library *lib = x->r->lib ? x->r->lib : &ab_library_self;
            if (x->recreate && round > 0 && round % AB_RECREATE_ROUNDS == 0
                && x->recreate(x, x->recreate_arg) != 0) {
                x->live = 0;
                continue;
            }
            /* The member's weights packed again from this round's copy (a
             * packed set stands for the weights it was made from), before
             * its repetition and not timed. */
            if (x->packed && inputs != w) {
                lib->weights_destroy(x->packed);
                x->packed = NULL;
                attn_status st = ab_workload_pack_in(lib, x->ctx, inputs, &x->packed);
                if (st != ATTN_OK) {
                    snprintf(x->r->error, sizeof x->r->error, "packing the weights: %s",
                             attn_strerror(st));
                    x->live = 0;
                    continue;
                }
            }
            int before = x->r->reps;
            ab_bench_repeat(x->ctx, inputs, o, x->r, out, round);
            if (x->r->reps > before) {
                x->r->ref_compute[before] = ref_compute;
                x->r->ref_read[before] = ref_read;
            }
            if (progress)
                progress(progress_arg, order[k], round);
        }
        ab_free(out);
        rho = group_rho(m, n, o, &group);
        for (int k = 0; k < live; k++)
            if (ab_bench_done(m[order[k]].r, o, rho))
                m[order[k]].live = 0;
    }
    if (have_copy)
        ab_workload_free(&copy);
    for (int i = 0; i < n; i++)
        if (!m[i].r->error[0])
            ab_bench_finish(m[i].r, o, rho);
    /* The run's drift: earlier groups' weight halved at each group, so a
     * burst of it early in a run fades (a first group at rho 0.6 made the
     * quiet groups after it take 51% more repetitions). */
    if (o->drift) {
        ab_lag1_age(o->drift, 0.5);
        ab_lag1_merge(o->drift, &group);
    }
    free(order);
    ab_free(ref.buf);
    return 0;
}

int ab_bench_run(attn_ctx *ctx, const ab_workload *w, const ab_bench_opts *o, ab_result *r)
{
    float *out = ab_alloc_floats(w->out_len, 0);
    if (!out) {
        snprintf(r->error, sizeof r->error, "out of memory for the output");
        return -1;
    }
    int rc = ab_bench_prepare(ctx, w, o, r, out, NULL);
    ab_free(out);
    if (rc != 0)
        return rc;
    ab_bench_member one = { .ctx = ctx, .r = r, .live = 1 };
    uint64_t rng = 1;
    if (ab_bench_rounds(&one, 1, w, o, &rng, NULL, NULL) != 0) {
        snprintf(r->error, sizeof r->error, "out of memory");
        return -1;
    }
    return r->error[0] ? -1 : 0;
}

/* The pass's bytes when the caches (cache bytes) hold at most half of
 * them and the row is memory-bound by its work (its FLOPs per byte below
 * the machine's peak FLOP/s per read byte/s, where the peak is known),
 * else 0: the rows held to the read bandwidth. A compute-bound encoder
 * layer whose weights outgrow the caches read "4% of the read bandwidth"
 * while at 86% of the FMA peak: the bandwidth is not its ceiling. */
static double uncached_pass_bytes(const ab_result *r, size_t cache)
{
    double pass = ab_shape_pass_bytes(&r->shape);
    if (r->peak_gflops > 0.0 && r->read_gbs > 0.0 && r->bytes > 0.0
        && r->flops / r->bytes > r->peak_gflops / r->read_gbs)
        return 0.0;
    return r->read_gbs > 0.0 && cache > 0 && pass >= 2.0 * (double)cache ? pass : 0.0;
}

double ab_result_pct_bandwidth(const ab_result *r, double seconds, size_t cache)
{
    if (!(seconds > 0.0) || uncached_pass_bytes(r, cache) == 0.0)
        return NAN;
    return 100.0 * r->bytes / seconds / 1e9 / r->read_gbs;
}

double ab_result_read_bw_error(const ab_result *r, size_t cache)
{
    double pass = uncached_pass_bytes(r, cache);
    return pass == 0.0 ? NAN : r->read_error + (double)cache / (pass - (double)cache);
}
