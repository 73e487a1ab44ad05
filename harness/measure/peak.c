/*
 * peak.c — measured FMA peaks, triad and read bandwidth and the core clock,
 * and the cheap check of figures measured earlier (peak.h).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "peak.h"
#include "stats.h"
#include "timer.h"

/* ---- ISAs ------------------------------------------------------------------------- */

#if defined(__x86_64__)
double ab_fma_loop_avx2(long iters);      /* peak_avx2.c */
double ab_fma_loop_avx512(long iters);    /* peak_avx512.c */
double ab_dpbf16_loop_avx512(long iters);  /* peak_avx512.c */
double ab_read_sum_avx2(const float *x, size_t n);
double ab_read_sum_avx512(const float *x, size_t n);
#include <emmintrin.h>

/* Baseline x86-64 is SSE2, which has no FMA: 6 multiply chains and 6 add
 * chains, independent, keep both the multiply and the add pipes busy
 * (latency 3–4 cycles, 2 ports each) in 14 of the 16 XMM registers. The
 * multiplier is exactly 1, so products never decay into (slow) denormals;
 * x86 multiplies by 1 at full cost. */
static double baseline_loop(long iters)
{
    /* Read through volatile: a known 1.0 would let the compiler drop the multiplies. */
    volatile float one = 1.0f;
    const __m128 m = _mm_set1_ps(one), a = _mm_set1_ps(0.001f);
    /* Distinct start values: identical chains would be merged by the compiler. */
    __m128 p0 = _mm_set1_ps(0.50f), p1 = _mm_set1_ps(0.51f), p2 = _mm_set1_ps(0.52f);
    __m128 p3 = _mm_set1_ps(0.53f), p4 = _mm_set1_ps(0.54f), p5 = _mm_set1_ps(0.55f);
    __m128 s0 = _mm_set1_ps(0.56f), s1 = _mm_set1_ps(0.57f), s2 = _mm_set1_ps(0.58f);
    __m128 s3 = _mm_set1_ps(0.59f), s4 = _mm_set1_ps(0.60f), s5 = _mm_set1_ps(0.61f);
    for (long i = 0; i < iters; i++) {
        p0 = _mm_mul_ps(p0, m); s0 = _mm_add_ps(s0, a);
        p1 = _mm_mul_ps(p1, m); s1 = _mm_add_ps(s1, a);
        p2 = _mm_mul_ps(p2, m); s2 = _mm_add_ps(s2, a);
        p3 = _mm_mul_ps(p3, m); s3 = _mm_add_ps(s3, a);
        p4 = _mm_mul_ps(p4, m); s4 = _mm_add_ps(s4, a);
        p5 = _mm_mul_ps(p5, m); s5 = _mm_add_ps(s5, a);
    }
    __m128 t = _mm_add_ps(_mm_add_ps(_mm_add_ps(p0, p1), _mm_add_ps(p2, p3)), _mm_add_ps(p4, p5));
    t = _mm_add_ps(t, _mm_add_ps(_mm_add_ps(s0, s1), _mm_add_ps(_mm_add_ps(s2, s3),
                                                               _mm_add_ps(s4, s5))));
    float out[4];
    _mm_storeu_ps(out, t);
    return out[0] != 0.0f ? 12.0 * 4.0 * (double)iters : 0.0;
}
#elif defined(__aarch64__)
#include <arm_neon.h>

/* AArch64 baseline is NEON with FMA: 16 chains in 32 vector registers. */
static double baseline_loop(long iters)
{
    const float32x4_t m = vdupq_n_f32(0.999f), a = vdupq_n_f32(0.001f);
    float32x4_t c[16];
    for (int j = 0; j < 16; j++)   /* distinct, or the compiler merges the chains */
        c[j] = vdupq_n_f32(0.5f + 0.01f * (float)j);
    for (long i = 0; i < iters; i++)
        for (int j = 0; j < 16; j++)
            c[j] = vfmaq_f32(a, c[j], m);
    float32x4_t s = c[0];
    for (int j = 1; j < 16; j++)
        s = vaddq_f32(s, c[j]);
    return vgetq_lane_f32(s, 0) != 0.0f ? 16.0 * 4.0 * 2.0 * (double)iters : 0.0;
}
#else
/* Elsewhere: scalar multiply-add chains the compiler can vectorize as it likes. */
static double baseline_loop(long iters)
{
    float c[8] = { 0.50f, 0.51f, 0.52f, 0.53f, 0.54f, 0.55f, 0.56f, 0.57f };
    for (long i = 0; i < iters; i++)
        for (int j = 0; j < 8; j++)
            c[j] = c[j] * 0.999f + 0.001f;
    return c[0] != 0.0f ? 8.0 * 2.0 * (double)iters : 0.0;
}
#endif

const char *ab_isa_name(ab_isa isa)
{
    switch (isa) {
#if defined(__aarch64__)
    case AB_ISA_BASELINE: return "neon";
#elif defined(__x86_64__)
    case AB_ISA_BASELINE: return "sse2";
#else
    case AB_ISA_BASELINE: return "scalar";
#endif
    case AB_ISA_AVX2: return "avx2";
    case AB_ISA_AVX512: return "avx512";
    case AB_ISA_AVX512_BF16: return "avx512_bf16";
    default: return "?";
    }
}

int ab_isa_available(ab_isa isa)
{
    unsigned usable = attn_cpu()->usable;
    switch (isa) {
    case AB_ISA_BASELINE:
        return 1;
#if defined(__x86_64__)
    /* The requirements of the kernels whose peak this is (kernel.h), so
     * that a kernel that runs always has its peak. */
    case AB_ISA_AVX2:
        return (usable & ATTN_REQUIRES_AVX2) == ATTN_REQUIRES_AVX2;
    case AB_ISA_AVX512:
        return (usable & ATTN_REQUIRES_AVX512) == ATTN_REQUIRES_AVX512;
    case AB_ISA_AVX512_BF16:
        return (usable & ATTN_REQUIRES_AVX512_BF16) == ATTN_REQUIRES_AVX512_BF16;
#endif
    default:
        (void)usable;
        return 0;
    }
}

ab_isa ab_isa_of_kernel(const attn_kernel *k)
{
    if (!k)
        return AB_ISA_BASELINE;
    /* A bf16 row's products are held to the bf16 units' peak (the
     * emulation, on fp32 FMAs, to its ISA's). One whose bf16 products run
     * on units no peak here measures — a library's own dispatch on a CPU
     * with bf16 units (oneDNN picks AMX where there is one), NEON's
     * BFDOT/BFMMLA at twice FMLA's products — has none (AB_ISA_COUNT: % of
     * peak "-"): held to the fp32 peak it could read ~200%, which is a bug
     * by the contract. Without bf16 units a library's bf16 mode runs fp32
     * FMAs, and is held to their peak. */
    if (k->math == ATTN_BF16 && (k->requires & ATTN_CPU_AVX512BF16))
        return AB_ISA_AVX512_BF16;
    if (k->math == ATTN_BF16
        && (k->own_isa_dispatch ? ab_isa_available(AB_ISA_AVX512_BF16) : k->requires != 0))
        return AB_ISA_COUNT;
    if (k->own_isa_dispatch)
        return ab_isa_available(AB_ISA_AVX512) ? AB_ISA_AVX512
             : ab_isa_available(AB_ISA_AVX2) ? AB_ISA_AVX2 : AB_ISA_BASELINE;
    return ab_isa_of_requirements(k->requires);
}

ab_isa ab_isa_of_requirements(unsigned requires)
{
    if (requires & (ATTN_REQUIRES_AVX512 | ATTN_CPU_AVX512BF16))
        return AB_ISA_AVX512;
    if (requires & ATTN_REQUIRES_AVX2)
        return AB_ISA_AVX2;
    return AB_ISA_BASELINE;
}

double ab_fma_loop(ab_isa isa, long iters)
{
    if (!ab_isa_available(isa))
        return 0.0;
    switch (isa) {
    case AB_ISA_BASELINE: return baseline_loop(iters);
#if defined(__x86_64__)
    case AB_ISA_AVX2: return ab_fma_loop_avx2(iters);
    case AB_ISA_AVX512: return ab_fma_loop_avx512(iters);
    case AB_ISA_AVX512_BF16: return ab_dpbf16_loop_avx512(iters);
#endif
    default: return 0.0;
    }
}

/* ---- Threads ------------------------------------------------------------------------ */

/* n threads, one per core, start together at a barrier; thread 0 times each
 * pass between barriers, so a pass lasts as long as its slowest thread. */
#define MAX_PASSES 32

typedef struct team {
    const ab_topology *topo;
    int n;                    /* threads taking part (set before the gate opens) */
    pthread_mutex_t gate_lock;
    pthread_cond_t gate;
    int open;
    pthread_barrier_t barrier;
    int passes;               /* at most MAX_PASSES */
    double times[MAX_PASSES]; /* each pass, seconds (thread 0 writes) */
    double best;              /* the shortest */
    /* FMA */
    ab_isa isa;
    long iters;
    /* triad (a, b, c) or read-only (b alone) */
    float *a, *b, *c;
    size_t len;
    double sums[AB_PEAK_MAX_THREADS];   /* the read passes' sums, kept so they are computed */
} team;

typedef struct member { team *t; int index; } member;

static void *member_main(void *arg)
{
    member *me = arg;
    team *t = me->t;
    char err[128];
    ab_pin_to_core(t->topo, me->index, err, sizeof err);   /* best effort */
    /* Wait until every thread exists: only then is the team size known. */
    pthread_mutex_lock(&t->gate_lock);
    while (!t->open)
        pthread_cond_wait(&t->gate, &t->gate_lock);
    pthread_mutex_unlock(&t->gate_lock);
    if (me->index >= t->n)
        return NULL;

    size_t lo = t->len * (size_t)me->index / (size_t)t->n;
    size_t hi = t->len * (size_t)(me->index + 1) / (size_t)t->n;
    /* First touch by the thread that will use the pages. */
    for (size_t i = lo; t->b && i < hi; i++) {
        t->b[i] = 1.0f;
        if (t->a) {
            t->a[i] = 0.0f;
            t->c[i] = 2.0f;
        }
    }
    for (int pass = 0; pass < t->passes; pass++) {
        pthread_barrier_wait(&t->barrier);
        double t0 = ab_now();
        if (t->a) {
            const float s = 3.0f;
            float *restrict a = t->a;
            const float *restrict b = t->b, *restrict c = t->c;
            for (size_t i = lo; i < hi; i++)
                a[i] = b[i] + s * c[i];
        } else if (t->b) {
            t->sums[me->index] += ab_read_sum(t->b + lo, hi - lo);
        } else {
            ab_fma_loop(t->isa, t->iters);
        }
        pthread_barrier_wait(&t->barrier);
        double dt = ab_now() - t0;
        if (me->index == 0) {
            t->times[pass] = dt;
            if (pass == 0 || dt < t->best)
                t->best = dt;
        }
    }
    return NULL;
}

/* Runs the team; when fewer threads could be created than asked, the team
 * is smaller (t->n says how many took part). */
static int run_team(team *t)
{
    pthread_t th[AB_PEAK_MAX_THREADS];
    member m[AB_PEAK_MAX_THREADS];
    int started = 0;
    if (t->n < 1 || t->n > AB_PEAK_MAX_THREADS)
        return -1;
    pthread_mutex_init(&t->gate_lock, NULL);
    pthread_cond_init(&t->gate, NULL);
    t->open = 0;
    for (int i = 0; i < t->n; i++) {
        m[i].t = t;
        m[i].index = i;
        if (pthread_create(&th[i], NULL, member_main, &m[i]) != 0)
            break;
        started++;
    }
    int ok = started > 0 && pthread_barrier_init(&t->barrier, NULL, (unsigned)started) == 0;
    pthread_mutex_lock(&t->gate_lock);
    t->n = ok ? started : 0;   /* with 0, every thread leaves at the gate */
    t->open = 1;
    pthread_cond_broadcast(&t->gate);
    pthread_mutex_unlock(&t->gate_lock);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (ok)
        pthread_barrier_destroy(&t->barrier);
    pthread_cond_destroy(&t->gate);
    pthread_mutex_destroy(&t->gate_lock);
    return ok ? 0 : -1;
}

/* The relative gap between the shortest pass and the next: how much a pass
 * may still gain, at least the 0.5% that separates passes of a quiet machine. */
static double pass_error(const team *t)
{
    double second = INFINITY;
    int skipped = 0;
    for (int i = 0; i < t->passes; i++) {
        if (t->times[i] == t->best && !skipped)
            skipped = 1;
        else if (t->times[i] < second)
            second = t->times[i];
    }
    double gap = isfinite(second) && second > 0 ? (second - t->best) / second : 0.0;
    return gap > 0.005 ? gap : 0.005;
}

/* Runs passes of the isa's FMA loop of about `seconds` each on n threads;
 * the team holds each pass's time. 0, or -1 when it cannot run. */
static int fma_passes(team *tm, ab_isa isa, const ab_topology *t, int n_threads, double seconds,
                      int passes)
{
    if (!ab_isa_available(isa))
        return -1;
    /* Calibrate on this thread: grow the count until a loop takes >= 10 ms. */
    long iters = 1 << 14;
    double dt;
    for (;;) {
        double t0 = ab_now();
        ab_fma_loop(isa, iters);
        dt = ab_now() - t0;
        if (dt >= 0.01 || iters > (1L << 40))
            break;
        iters *= 4;
    }
    memset(tm, 0, sizeof *tm);
    tm->topo = t;
    tm->n = n_threads;
    tm->isa = isa;
    tm->passes = passes < 2 ? 2 : passes > MAX_PASSES ? MAX_PASSES : passes;
    tm->iters = (long)((double)iters * seconds / dt) + 1;
    return run_team(tm) == 0 && tm->best > 0.0 ? 0 : -1;
}

double ab_measure_fma(ab_isa isa, const ab_topology *t, int n_threads, double seconds, int passes,
                      double *rel_err)
{
    team tm;
    if (rel_err)
        *rel_err = 0.0;
    if (fma_passes(&tm, isa, t, n_threads, seconds, passes) != 0)
        return 0.0;
    if (rel_err)
        *rel_err = pass_error(&tm);
    /* FLOPs per iteration, from a 1-iteration call: each loop reports its own. */
    double per_iter = ab_fma_loop(isa, 1);
    return per_iter * (double)tm.iters * tm.n / tm.best / 1e9;
}

double ab_measure_triad(const ab_topology *t, int n_threads, size_t bytes)
{
    size_t len = bytes / sizeof(float);
    team tm = { .topo = t, .n = n_threads, .passes = 6, .len = len };
    tm.a = malloc(len * sizeof(float));
    tm.b = malloc(len * sizeof(float));
    tm.c = malloc(len * sizeof(float));
    double gbs = 0.0;
    if (tm.a && tm.b && tm.c && run_team(&tm) == 0 && tm.best > 0.0)
        gbs = 3.0 * (double)(len * sizeof(float)) / tm.best / 1e9;  /* STREAM counting */
    free(tm.a);
    free(tm.b);
    free(tm.c);
    return gbs;
}

double ab_measure_read(const ab_topology *t, int n_threads, size_t bytes, double *rel_err)
{
    if (rel_err)
        *rel_err = 0.0;
    size_t len = bytes / sizeof(float);
    team tm = { .topo = t, .n = n_threads, .passes = 6, .len = len };
    tm.b = malloc(len * sizeof(float));
    double gbs = 0.0;
    if (tm.b && run_team(&tm) == 0 && tm.best > 0.0) {
        double total = 0.0;   /* every element is 1: the sums prove the reads happened */
        for (int i = 0; i < tm.n; i++)
            total += tm.sums[i];
        if (total == (double)len * tm.passes)
            gbs = (double)(len * sizeof(float)) / tm.best / 1e9;
        if (rel_err)
            *rel_err = pass_error(&tm);
    }
    free(tm.b);
    return gbs;
}

/* Eight independent sums, so that the adds keep up with the loads; each
 * chunk of 2^16 floats is reduced into a double (a float lane stays exact). */
static double read_sum_baseline(const float *x, size_t n)
{
    double total = 0.0;
    size_t i = 0;
    while (i + 8 <= n) {
        size_t end = n - i > ((size_t)1 << 16) ? i + ((size_t)1 << 16) : n;
        float s[8] = { 0 };
        for (; i + 8 <= end; i += 8)
            for (int k = 0; k < 8; k++)
                s[k] += x[i + k];
        for (int k = 0; k < 8; k++)
            total += s[k];
    }
    for (; i < n; i++)
        total += x[i];
    return total;
}

double ab_read_sum(const float *x, size_t n)
{
#if defined(__x86_64__)
    if (ab_isa_available(AB_ISA_AVX512))
        return ab_read_sum_avx512(x, n);
    if (ab_isa_available(AB_ISA_AVX2))
        return ab_read_sum_avx2(x, n);
#endif
    return read_sum_baseline(x, n);
}

/* 16 dependent integer adds per iteration, register to register: one cycle
 * of latency each on every x86-64 and AArch64 core (an add of an immediate
 * may be folded away at rename on recent Intel cores; of a register, not),
 * while the loop's own counter runs beside the chain. */
static long add_chain(long iters)
{
    long x = 0, one = 1;
    for (long i = 0; i < iters; i++) {
#if defined(__x86_64__)
        __asm__ volatile(".rept 16\n\taddq %1, %0\n\t.endr" : "+r"(x) : "r"(one));
#elif defined(__aarch64__)
        __asm__ volatile(".rept 16\n\tadd %0, %0, %1\n\t.endr" : "+r"(x) : "r"(one));
#endif
    }
    return x;
}

double ab_measure_clock_mhz(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
    long iters = 1 << 16;
    double best = INFINITY;
    for (int pass = 0; pass < 5; pass++) {
        double t0 = ab_now();
        if (add_chain(iters) != 16 * iters)
            return 0.0;
        double dt = ab_now() - t0;
        if (dt < 0.005) {          /* too short to time: grow, and do not count it */
            iters *= 4;
            pass--;
            continue;
        }
        best = dt < best ? dt : best;
    }
    return 16.0 * (double)iters / best / 1e6;
#else
    return 0.0;
#endif
}

/* Stolen and total CPU time so far (USER_HZ ticks, all CPUs), from the
 * "cpu" line of /proc/stat; 0 when unreadable. */
static int cpu_ticks(unsigned long long *steal, unsigned long long *total)
{
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = { 0 };
    int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                       &v[3], &v[4], &v[5], &v[6], &v[7]) : 0;
    if (f)
        fclose(f);
    *steal = v[7];
    *total = 0;
    for (int i = 0; i < 8; i++)
        *total += v[i];
    return n == 8 ? 0 : -1;
}

/* ---- Measuring them all, and checking them ---------------------------------------- */

void ab_peaks_measure(ab_peaks *p, const ab_topology *t, const ab_machine *m)
{
    unsigned long long steal0, total0, steal1, total1;
    int ticks = cpu_ticks(&steal0, &total0) == 0;
    p->load_avg = m->loadavg[0];
    p->max_threads = t->cores < AB_PEAK_MAX_THREADS ? t->cores : AB_PEAK_MAX_THREADS;
    if (p->max_threads < 1)
        p->max_threads = 1;
    int counts[AB_PEAK_MAX_COUNTS];
    const int nc = ab_peak_ladder(p->max_threads, counts);
    for (int i = 0; i < AB_ISA_COUNT; i++)
        for (int c = 0; c < nc; c++)
            p->gflops[i][counts[c]] = ab_measure_fma((ab_isa)i, t, counts[c], 0.1, 5,
                                                     &p->gflops_err[i][counts[c]]);
    /* Arrays far larger than the last-level cache (at least 64 MiB each for
     * the triad's three, 512 MiB for the read), so both measure memory. */
    size_t l3 = ab_topology_cache_size(t, 3), bytes = 4 * l3;
    if (bytes < ((size_t)64 << 20))
        bytes = (size_t)64 << 20;
    size_t read_bytes = 16 * l3 > ((size_t)512 << 20) ? 16 * l3 : (size_t)512 << 20;
    for (int c = 0; c < nc; c++) {
        const int n = counts[c];
        p->triad_gbs[n] = ab_measure_triad(t, n, bytes);
        p->read_gbs[n] = ab_measure_read(t, n, read_bytes, &p->read_err[n]);
    }
    /* Under emulation a chain of adds says nothing of a clock. */
    p->clock_mhz = m->emulated[0] ? 0.0 : ab_measure_clock_mhz();
    p->steal = ticks && cpu_ticks(&steal1, &total1) == 0 && total1 > total0
             ? (double)(steal1 - steal0) / (double)(total1 - total0) : -1.0;
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(p->measured_at, sizeof p->measured_at, "%Y-%m-%dT%H:%M:%SZ", &tmv);
}

ab_isa ab_widest_isa(void)
{
    ab_isa w = AB_ISA_BASELINE;
    for (int i = 0; i <= AB_ISA_AVX512; i++)
        if (ab_isa_available((ab_isa)i))
            w = (ab_isa)i;
    return w;
}

/* (90th percentile − median) / median of n times (n <= MAX_PASSES). */
static double spread(const double *times, int n)
{
    double sorted[MAX_PASSES];
    memcpy(sorted, times, sizeof(double) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof sorted[0], ab_cmp_double);
    double p50 = sorted[n / 2], p90 = sorted[n * 9 / 10];
    return p50 > 0 ? (p90 - p50) / p50 : 0.0;
}

/* The spread of 24 passes of about 5 ms, each reading a buffer of half the
 * last-level cache (2-16 MiB) over and over on this thread: what the
 * machine's shared cache and memory do to a kernel's data, which a loop in
 * registers does not see (seen here: the FMA loop steady to 1% while the
 * kernels' repetitions varied by 10-15%). 0 when it cannot be measured. */
static double cache_spread(const ab_topology *t)
{
    size_t bytes = ab_topology_cache_size(t, 3) / 2;
    bytes = bytes < ((size_t)2 << 20) ? (size_t)2 << 20 : bytes > ((size_t)16 << 20)
          ? (size_t)16 << 20 : bytes;
    size_t n = bytes / sizeof(float);
    float *x = malloc(bytes);
    if (!x)
        return 0.0;
    for (size_t i = 0; i < n; i++)
        x[i] = 1.0f;
    double sum = ab_read_sum(x, n), t0 = ab_now();        /* warm, then timed once */
    sum += ab_read_sum(x, n);
    double once = ab_now() - t0;
    int reps = 1;
    if (once > 0 && once < 0.005)
        reps = (int)(0.005 / once);
    double times[24];
    for (int pass = 0; pass < 24; pass++) {
        t0 = ab_now();
        for (int r = 0; r < reps; r++)
            sum += ab_read_sum(x, n);
        times[pass] = ab_now() - t0;
    }
    free(x);
    /* Every element is 1: the sum proves the reads were made. */
    return sum == (double)n * (2 + 24 * reps) ? spread(times, 24) : 0.0;
}

/* A read bandwidth cached low would put a memory-bound kernel above its
 * ceiling: the check reads too, not only the FMA loop. */
int ab_peaks_check(ab_peaks *p, const ab_topology *t, char *note, size_t note_len)
{
    ab_isa isa = ab_widest_isa();
    int counts[2] = { 1, p->max_threads }, stale = 0;
    double worst = INFINITY;
    for (int k = 0; k < 2; k++) {
        if (k == 1 && p->max_threads == 1) {
            p->check_ratio[1] = p->check_ratio[0];
            break;
        }
        double cached = p->gflops[isa][counts[k]], now = 0.0;
        team tm;
        /* At 1 thread, 24 passes of 5 ms: their best checks the peak, their
         * spread says how steady the machine runs now. */
        if (fma_passes(&tm, isa, t, counts[k], k == 0 ? 0.005 : 0.03, k == 0 ? 24 : 3) == 0) {
            now = ab_fma_loop(isa, 1) * (double)tm.iters * tm.n / tm.best / 1e9;
            if (k == 0)
                p->noise = spread(tm.times, tm.passes);
        }
        if (k == 0)
            p->cache_noise = cache_spread(t);
        p->check_ratio[k] = cached > 0 && now > 0 ? now / cached : 0.0;
        double margin = p->gflops_err[isa][counts[k]] > 0.02 ? p->gflops_err[isa][counts[k]] : 0.02;
        if (p->check_ratio[k] > 1.0 + margin)
            stale = 1;
        if (p->check_ratio[k] > 0 && p->check_ratio[k] < worst)
            worst = p->check_ratio[k];
    }
    /* A read of 4×L3 (at least 64 MiB), from memory like the measurement's
     * 512 MiB but a quarter of its cost; the two sizes read within a few %
     * of each other, hence the margin of 5% at least. */
    size_t l3 = ab_topology_cache_size(t, 3), bytes = 4 * l3;
    bytes = bytes < ((size_t)64 << 20) ? (size_t)64 << 20 : bytes;
    double read_now = ab_measure_read(t, 1, bytes, NULL);
    double read_ratio = p->read_gbs[1] > 0 && read_now > 0 ? read_now / p->read_gbs[1] : 0.0;
    if (read_ratio > 1.0 + (p->read_err[1] > 0.05 ? p->read_err[1] : 0.05))
        stale = 1;
    if (stale)
        snprintf(note, note_len, "the cached peaks (%s, load %.2f) are below what the machine "
                 "does now (%s FMA %.3fx / %.3fx at 1 / %d threads, read %.3fx at 1): "
                 "re-measured", p->measured_at, p->load_avg, ab_isa_name(isa), p->check_ratio[0],
                 p->check_ratio[1], p->max_threads, read_ratio);
    else if (worst < 0.9)
        snprintf(note, note_len, "the machine runs %.0f%% below its cached peak now (%s FMA at "
                 "%.3fx / %.3fx at 1 / %d threads): it is loaded, and timings will show it",
                 100.0 * (1.0 - worst), ab_isa_name(isa), p->check_ratio[0], p->check_ratio[1],
                 p->max_threads);
    return stale;
}

int ab_peak_ladder(int cores, int *counts)
{
    static const int steps[] = { 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192 };
    cores = cores < 1 ? 1 : cores > AB_PEAK_MAX_THREADS ? AB_PEAK_MAX_THREADS : cores;
    int n = 0;
    for (size_t i = 0; i < sizeof steps / sizeof *steps && steps[i] < cores; i++)
        counts[n++] = steps[i];
    counts[n++] = cores;
    return n;
}

int ab_peak_measured(const ab_peaks *p, int n)
{
    return n >= 1 && n <= p->max_threads && n <= AB_PEAK_MAX_THREADS && p->read_gbs[n] > 0;
}

/* *n brought into [1, max_threads], and the measured counts either side of
 * it (lo <= *n <= hi; the same count when *n was measured, or is past the
 * last); 0 when p has none. */
static int bracket(const ab_peaks *p, int *n, int *lo, int *hi)
{
    if (p->max_threads < 1)
        return 0;
    *n = *n < 1 ? 1 : *n > p->max_threads ? p->max_threads : *n;
    *lo = *n;
    while (*lo > 1 && !ab_peak_measured(p, *lo))
        --*lo;
    *hi = *n;
    while (*hi < p->max_threads && !ab_peak_measured(p, *hi))
        ++*hi;
    if (!ab_peak_measured(p, *lo))
        *lo = *hi;
    if (!ab_peak_measured(p, *hi))
        *hi = *lo;
    return 1;
}

/* series at n threads: measured, or interpolated between the counts either side. */
static double at_count(const ab_peaks *p, const double *series, int n)
{
    int lo, hi;
    if (!bracket(p, &n, &lo, &hi))
        return 0.0;
    if (lo == hi)
        return series[lo];
    return series[lo] + (series[hi] - series[lo]) * (double)(n - lo) / (double)(hi - lo);
}

/* An error at n threads: measured, or the larger of the counts either side. */
static double err_at_count(const ab_peaks *p, const double *series, int n)
{
    int lo, hi;
    if (!bracket(p, &n, &lo, &hi))
        return 0.0;
    return series[lo] > series[hi] ? series[lo] : series[hi];
}

double ab_peak_gflops(const ab_peaks *p, ab_isa isa, int n_threads)
{
    if (isa < 0 || isa >= AB_ISA_COUNT)
        return 0.0;
    return at_count(p, p->gflops[isa], n_threads);
}

double ab_peak_error(const ab_peaks *p, ab_isa isa, int n_threads)
{
    if (isa < 0 || isa >= AB_ISA_COUNT)
        return 0.0;
    return err_at_count(p, p->gflops_err[isa], n_threads);
}

double ab_peak_read_gbs(const ab_peaks *p, int n_threads)
{
    return at_count(p, p->read_gbs, n_threads);
}

double ab_peak_triad_gbs(const ab_peaks *p, int n_threads)
{
    return at_count(p, p->triad_gbs, n_threads);
}

double ab_peak_read_error(const ab_peaks *p, int n_threads)
{
    return err_at_count(p, p->read_err, n_threads);
}
