/* peak_avx512.c — the AVX-512F peak loop; built with -mavx512f only. */
#include <immintrin.h>
#include <stddef.h>

double ab_fma_loop_avx512(long iters);

/* 16 independent FMA chains in 32 ZMM registers: twice the 8 that a 4-cycle
 * latency on 2 ports needs, so the loop is throughput-bound everywhere.
 * Distinct start values keep the compiler from merging the chains. */
double ab_fma_loop_avx512(long iters)
{
    const __m512 m = _mm512_set1_ps(0.999f), a = _mm512_set1_ps(0.001f);
    __m512 c[16];
    for (int j = 0; j < 16; j++)
        c[j] = _mm512_set1_ps(0.5f + 0.01f * (float)j);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++)
            c[j] = _mm512_fmadd_ps(c[j], m, a);
    }
    __m512 s = c[0];
    for (int j = 1; j < 16; j++)
        s = _mm512_add_ps(s, c[j]);
    return _mm512_reduce_add_ps(s) != 0.0f ? 16.0 * 16.0 * 2.0 * (double)iters : 0.0;
}

double ab_dpbf16_loop_avx512(long iters);

/* The bf16 peak: 16 independent VDPBF16PS chains (each lane += a₀b₀ + a₁b₁:
 * 4 FLOPs a lane), as the FMA loop. Compiled for AVX512_BF16 by its
 * attribute (this file's flags are AVX-512F's); called only where the CPU
 * has it. */
__attribute__((target("avx512f,avx512bf16"))) double ab_dpbf16_loop_avx512(long iters)
{
    const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.001f), _mm512_set1_ps(0.002f));
    const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(0.25f));
    __m512 c[16];
    for (int j = 0; j < 16; j++)
        c[j] = _mm512_set1_ps(0.5f + 0.01f * (float)j);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++)
            c[j] = _mm512_dpbf16_ps(c[j], a, b);
    }
    __m512 s = c[0];
    for (int j = 1; j < 16; j++)
        s = _mm512_add_ps(s, c[j]);
    return _mm512_reduce_add_ps(s) != 0.0f ? 16.0 * 16.0 * 4.0 * (double)iters : 0.0;
}

double ab_read_sum_avx512(const float *x, size_t n);

/* The read-only bandwidth loop: 64-byte loads into four independent sums,
 * enough to keep the loads in flight from memory. Each chunk of 2^20
 * floats is reduced into a double, so a float lane never sums more than
 * 2^14 values (exact for the all-ones array the test reads). */
double ab_read_sum_avx512(const float *x, size_t n)
{
    double total = 0.0;
    size_t i = 0;
    while (i + 64 <= n) {
        size_t end = n - i > ((size_t)1 << 20) ? i + ((size_t)1 << 20) : n;
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (; i + 64 <= end; i += 64) {
            s0 = _mm512_add_ps(s0, _mm512_loadu_ps(x + i));
            s1 = _mm512_add_ps(s1, _mm512_loadu_ps(x + i + 16));
            s2 = _mm512_add_ps(s2, _mm512_loadu_ps(x + i + 32));
            s3 = _mm512_add_ps(s3, _mm512_loadu_ps(x + i + 48));
        }
        __m512 s = _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3));
        total += (double)_mm512_reduce_add_ps(s);
    }
    for (; i < n; i++)
        total += x[i];
    return total;
}
