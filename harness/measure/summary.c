/* summary.c — the best kernel per shape and thread count (summary.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "summary.h"

/* Below this many shared rounds there is no 95% interval of the paired
 * ratios' median (at 5, [min, max] covers it 93.75% of the time). */
#define MIN_PAIRED AB_MEDIAN_CI_MIN

/* The benchmark name without the kernel: "<op>/<shape label>/threads:<n>". */
static void shape_key(const ab_result *r, char *buf, size_t len)
{
    char label[120];
    ab_shape_label(&r->shape, label, sizeof label);
    snprintf(buf, len, "%s/%s/threads:%d", ab_op_name(r->shape.op), label, r->threads);
}

/* The ratio b/a round by round, over the rounds both were timed in. */
static int paired_ratios(const ab_result *a, const ab_result *b, double *ratio)
{
    int n = 0;
    for (int i = 0; i < a->reps; i++)
        for (int j = 0; j < b->reps; j++)
            if (a->round[i] == b->round[j] && a->real[i] > 0) {
                ratio[n++] = b->real[j] / a->real[i];
                break;
            }
    return n;
}

/* x's time over best's: round by round when they share MIN_PAIRED rounds
 * (*paired their count), else from the two samples (Hodges-Lehmann and its
 * interval), else, too few repetitions for any interval, the ratio of
 * medians with a NaN interval (never "faster"). */
static void ratio_of(const ab_result *best, const ab_result *x, double *ratio, double *lo,
                     double *hi, int *paired)
{
    double ratios[AB_MAX_REPS];
    int n = paired_ratios(best, x, ratios);
    *paired = 0;
    if (n >= MIN_PAIRED) {
        ab_stats st;
        ab_stats_compute(ratios, n, &st);
        *ratio = st.median;
        ab_median_ci(ratios, n, 0.95, lo, hi);
        *paired = n;
    } else if (best->reps < MIN_PAIRED || x->reps < MIN_PAIRED) {
        *ratio = x->real_stats.median / best->real_stats.median;
        *lo = *hi = NAN;
    } else {
        ab_comparison c;
        if (ab_compare_samples(best->real, best->reps, x->real, x->reps, 0.05, 0.0, &c) == 0) {
            *ratio = c.ratio;
            *lo = c.lo;
            *hi = c.hi;
        } else {
            *ratio = *lo = *hi = NAN;
        }
    }
}

/* The best of the m kernels r[idx[..]], set against every other: it starts
 * as the lowest median, and a kernel whose ratio to it lies wholly below 1
 * (rounds in which it was the faster, whatever the medians) takes its
 * place. "faster" needs every other kernel's interval above 1 — not only
 * the runner-up's: a third kernel, slower by its median, once beat the
 * named best in 15 of 20 rounds unseen. The runner-up is the kernel
 * closest to the best. */
static void rank(const ab_result *r, const int *idx, int m, ab_summary *s)
{
    int best = 0;
    for (int k = 1; k < m; k++)
        if (r[idx[k]].real_stats.median < r[idx[best]].real_stats.median)
            best = k;
    for (int step = 0, moved = 1; moved && step < m; step++) {
        moved = 0;
        for (int k = 0; k < m && !moved; k++) {
            double ratio, lo, hi;
            int paired;
            if (k == best)
                continue;
            ratio_of(&r[idx[best]], &r[idx[k]], &ratio, &lo, &hi, &paired);
            if (hi < 1.0) {   /* NaN compares false */
                best = k;
                moved = 1;
            }
        }
    }
    int second = -1, all_above = 1;
    for (int k = 0; k < m; k++) {
        double ratio, lo, hi;
        int paired;
        if (k == best)
            continue;
        ratio_of(&r[idx[best]], &r[idx[k]], &ratio, &lo, &hi, &paired);
        all_above &= lo > 1.0;
        if (second < 0 || ratio < s->ratio || isnan(s->ratio)) {
            second = k;
            s->ratio = ratio;
            s->ci_low = lo;
            s->ci_high = hi;
            s->paired = paired;
        }
    }
    const ab_result *b = &r[idx[best]], *x = &r[idx[second]];
    snprintf(s->best, sizeof s->best, "%s", b->kernel);
    snprintf(s->runner_up, sizeof s->runner_up, "%s", x->kernel);
    char base[64];
    snprintf(base, sizeof base, "%.*s", (int)ab_kernel_base_len(b->kernel), b->kernel);
    s->best_math = attn_kernel_math(base) == ATTN_BF16 ? ATTN_BF16 : ATTN_F32;
    s->n_kernels = m;
    s->unstable = b->unstable || x->unstable;
    /* The ratio to the closest may still say, within its interval, that
     * the runner-up was the faster of the two: the rounds, which cancel the
     * drift, decide, so the two swap and the ratio stays >= 1 (a tie). */
    if (s->ratio < 1.0 && !isnan(s->ci_low)) {
        char t[sizeof s->best];
        memcpy(t, s->best, sizeof t);
        memcpy(s->best, s->runner_up, sizeof t);
        memcpy(s->runner_up, t, sizeof t);
        double lo = s->ci_low;
        s->ratio = 1.0 / s->ratio;
        s->ci_low = 1.0 / s->ci_high;
        s->ci_high = 1.0 / lo;
        all_above = 0;
    }
    s->faster = all_above && s->ci_low > 1.0;
}

int ab_summarize(const ab_result *r, int n, ab_summary *out, int max)
{
    int count = 0;
    char key[sizeof ((ab_summary *)0)->shape], other[sizeof key];
    int idx[256];
    for (int i = 0; i < n && count < max; i++) {
        if (r[i].error[0] || r[i].reps < 1 || r[i].lib)
            continue;
        shape_key(&r[i], key, sizeof key);
        /* Only at the first result of its group (and thread count). */
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            shape_key(&r[j], other, sizeof other);
            seen = !r[j].error[0] && r[j].reps >= 1 && !r[j].lib && strcmp(key, other) == 0;
        }
        if (seen)
            continue;
        int m = 0;
        /* Other builds (run --lib) are judged against this one apart
         * (ab_summarize_builds), not ranked among its kernels. */
        for (int j = i; j < n && m < (int)(sizeof idx / sizeof idx[0]); j++) {
            shape_key(&r[j], other, sizeof other);
            if (!r[j].error[0] && r[j].reps >= 1 && !r[j].lib && strcmp(key, other) == 0)
                idx[m++] = j;
        }
        if (m < 2)
            continue;
        ab_summary *s = &out[count++];
        memset(s, 0, sizeof *s);
        s->op = r[i].shape.op;
        s->threads = r[i].threads;
        snprintf(s->shape, sizeof s->shape, "%s", key);
        rank(r, idx, m, s);
    }
    return count;
}

const char *ab_summary_verdict(const ab_summary *s)
{
    return s->faster ? "faster" : "tie";
}

/* The result of this build that r (another build's) is set against, or -1. */
static int counterpart(const ab_result *r, int n, int i)
{
    char key[160], other[160];
    shape_key(&r[i], key, sizeof key);
    size_t len = ab_kernel_base_len(r[i].kernel);
    for (int j = 0; j < n; j++) {
        if (r[j].lib || r[j].error[0] || r[j].reps < 1 || ab_kernel_base_len(r[j].kernel) != len
            || strncmp(r[j].kernel, r[i].kernel, len) != 0)
            continue;
        shape_key(&r[j], other, sizeof other);
        if (strcmp(key, other) == 0)
            return j;
    }
    return -1;
}

int ab_summarize_builds(const ab_result *r, int n, const ab_compare_opts *o, ab_build_pair *out,
                        int max)
{
    int pairs = 0;
    for (int i = 0; i < n; i++)
        pairs += r[i].lib && !r[i].error[0] && r[i].reps >= 1 && counterpart(r, n, i) >= 0;
    ab_compare_opts each = *o;
    each.alpha = pairs > 1 ? o->alpha / pairs : o->alpha;
    int count = 0;
    for (int i = 0; i < n && count < max; i++) {
        int j = r[i].lib && !r[i].error[0] && r[i].reps >= 1 ? counterpart(r, n, i) : -1;
        if (j < 0)
            continue;
        double ratio[AB_MAX_REPS];
        int m = paired_ratios(&r[j], &r[i], ratio);
        for (int k = 0; k < m; k++)
            ratio[k] = log(ratio[k]);
        ab_build_pair *b = &out[count];
        memset(b, 0, sizeof *b);
        shape_key(&r[i], b->shape, sizeof b->shape);
        b->threads = r[i].threads;
        snprintf(b->kernel, sizeof b->kernel, "%.*s", (int)ab_kernel_base_len(r[i].kernel),
                 r[i].kernel);
        snprintf(b->build, sizeof b->build, "%s", r[i].lib->name);
        if (ab_compare_paired(ratio, m, &each, &b->c) == 0)
            count++;
    }
    return count;
}

