/* peak_avx2.c — the AVX2+FMA peak loop; built with -mavx2 -mfma only. */
#include <immintrin.h>
#include <stddef.h>

double ab_fma_loop_avx2(long iters);

/* 12 independent FMA chains: enough to cover a 4-cycle latency on 2 FMA
 * ports (8 needed) with room to spare, and few enough to stay in the 16 YMM
 * registers with the two constants. acc = acc·m + a converges to 1, so no
 * value overflows or goes denormal. Each chain starts from a different value:
 * identical chains would be merged into one by the compiler. */
double ab_fma_loop_avx2(long iters)
{
    const __m256 m = _mm256_set1_ps(0.999f), a = _mm256_set1_ps(0.001f);
    __m256 c0 = _mm256_set1_ps(0.50f), c1 = _mm256_set1_ps(0.51f), c2 = _mm256_set1_ps(0.52f);
    __m256 c3 = _mm256_set1_ps(0.53f), c4 = _mm256_set1_ps(0.54f), c5 = _mm256_set1_ps(0.55f);
    __m256 c6 = _mm256_set1_ps(0.56f), c7 = _mm256_set1_ps(0.57f), c8 = _mm256_set1_ps(0.58f);
    __m256 c9 = _mm256_set1_ps(0.59f), c10 = _mm256_set1_ps(0.60f), c11 = _mm256_set1_ps(0.61f);
    for (long i = 0; i < iters; i++) {
        c0 = _mm256_fmadd_ps(c0, m, a); c1 = _mm256_fmadd_ps(c1, m, a);
        c2 = _mm256_fmadd_ps(c2, m, a); c3 = _mm256_fmadd_ps(c3, m, a);
        c4 = _mm256_fmadd_ps(c4, m, a); c5 = _mm256_fmadd_ps(c5, m, a);
        c6 = _mm256_fmadd_ps(c6, m, a); c7 = _mm256_fmadd_ps(c7, m, a);
        c8 = _mm256_fmadd_ps(c8, m, a); c9 = _mm256_fmadd_ps(c9, m, a);
        c10 = _mm256_fmadd_ps(c10, m, a); c11 = _mm256_fmadd_ps(c11, m, a);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                             _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
    float out[8];
    _mm256_storeu_ps(out, s);
    /* The sum keeps the chains alive; it is ~96 and never 0. */
    return out[0] != 0.0f ? 12.0 * 8.0 * 2.0 * (double)iters : 0.0;
}

double ab_read_sum_avx2(const float *x, size_t n);

/* The read-only bandwidth loop: 32-byte loads into four independent sums,
 * enough to keep the loads in flight from memory. Each chunk of 2^20
 * floats is reduced into a double, so a float lane never sums more than
 * 2^14 values (exact for the all-ones array the test reads). */
static double lanes_sum(__m256 s)
{
    float lanes[8];
    _mm256_storeu_ps(lanes, s);
    double total = 0.0;
    for (int k = 0; k < 8; k++)
        total += lanes[k];
    return total;
}

double ab_read_sum_avx2(const float *x, size_t n)
{
    double total = 0.0;
    size_t i = 0;
    while (i + 32 <= n) {
        size_t end = n - i > ((size_t)1 << 20) ? i + ((size_t)1 << 20) : n;
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (; i + 32 <= end; i += 32) {
            s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
            s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + i + 8));
            s2 = _mm256_add_ps(s2, _mm256_loadu_ps(x + i + 16));
            s3 = _mm256_add_ps(s3, _mm256_loadu_ps(x + i + 24));
        }
        __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
        total += lanes_sum(s);
    }
    for (; i < n; i++)
        total += x[i];
    return total;
}
