/*
 * layernorm_impl.h — the SIMD rows' LayerNorm of one row, a template for
 * frame/simd.h's vectors: the row's layernorm slot runs it over the rows
 * (rows.h attn_layernorm_rows), and its GEMM in its own region after the
 * product when asked (frame/gemm.h blk_arch.layernorm_row). Included by
 * gemm_impl.h and by the bf16 rows, whose LayerNorm is their ISA's.
 */
#ifndef SIMD_LAYERNORM_IMPL_H
#define SIMD_LAYERNORM_IMPL_H

/* LayerNorm in registers, three passes over each row (it stays in L1):
 * the sum; then Σ(x−μ) and Σ(x−μ)² — the corrected two-pass algorithm
 * (Chan, Golub and LeVeque): the first sum's rounding error in μ comes back
 * as Σ(x−μ) and is taken out of both μ and the variance, so a row with a
 * large mean and a small spread normalizes as well as in double; then y.
 * Lanes accumulate in float; each reduction adds at most d/LANES terms. */
static void SIMD_NAME(layernorm_row)(int d, const float *xr, const float *gamma, const float *beta,
                                     float eps, float *yr)
{
    const int tail = d % SIMD_LANES, full = d - tail;
    vf s = vf_zero();
    for (int j = 0; j < full; j += SIMD_LANES)
        s = vf_add(s, vf_load(xr + j));
    if (tail)
        s = vf_add(s, vf_load_n(xr + full, tail));
    float mu0 = vf_reduce_add(s) / (float)d;
    vf vmu = vf_set1(mu0), c = vf_zero(), q = vf_zero();
    for (int j = 0; j < full; j += SIMD_LANES) {
        vf t = vf_sub(vf_load(xr + j), vmu);
        c = vf_add(c, t);
        q = vf_fmadd(t, t, q);
    }
    if (tail) {
        /* Past the row the masked load gives 0, and 0 − μ must not
         * count: the lanes are multiplied by 1 (in the row) or 0. */
        static const float ones[16] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
        vf t = vf_mul(vf_sub(vf_load_n(xr + full, tail), vmu), vf_load_n(ones, tail));
        c = vf_add(c, t);
        q = vf_fmadd(t, t, q);
    }
    double cs = vf_reduce_add(c), var = ((double)vf_reduce_add(q) - cs * cs / d) / d;
    float mu = (float)(mu0 + cs / d);
    float inv = (float)(1.0 / sqrt((var > 0.0 ? var : 0.0) + (double)eps));
    vf vm = vf_set1(mu), vi = vf_set1(inv);
    for (int j = 0; j < full; j += SIMD_LANES) {
        vf t = vf_mul(vf_sub(vf_load(xr + j), vm), vi);
        vf_store(yr + j, vf_fmadd(t, vf_load(gamma + j), vf_load(beta + j)));
    }
    if (tail) {
        vf t = vf_mul(vf_sub(vf_load_n(xr + full, tail), vm), vi);
        vf_store_n(yr + full, vf_fmadd(t, vf_load_n(gamma + full, tail),
                                       vf_load_n(beta + full, tail)), tail);
    }
}

#endif /* SIMD_LAYERNORM_IMPL_H */
