/* peak_avx512.c — the AVX-512F peak loop; built with -mavx512f only. */
#include <immintrin.h>

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
