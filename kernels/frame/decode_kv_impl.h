/*
 * decode_kv_impl.h — the decode path's passes over the keys and the values
 * (decode_impl.h says how the path goes), once per storage type of them:
 * decode_impl.h includes this file for f32, f16, bf16 and i8 with
 *
 *   KV_T            the type's name, a suffix of every function here;
 *   KV_BYTES        bytes of one element;
 *   KV_LOAD(p), KV_LOAD_N(p, n)
 *                   SIMD_LANES elements at p (any address) as floats, and
 *                   the first n of them (simd.h);
 *   KV_SCALED       1 when each row has a scale (int8): a key's score is
 *                   multiplied by its key's, a value's weight by its
 *                   value's, after the row's elements are summed.
 *
 * Rows are read in place, each element widened in registers as it is
 * loaded; nothing is packed or converted ahead. Pointers are bytes (const
 * char *) and strides bytes, whatever the type.
 *
 * A narrow type takes several keys at a time even for fewer than
 * DECODE_RB query rows: widening adds work to each load, which one key at
 * a time leaves exposed (fp32, bound by memory, keeps the one-key loops:
 * see decode_impl.h). Lk 16384, H 32, Dh 128, 1 thread, a 2-vCPU AVX-512
 * VM, one key against several in alternating processes: avx2 i8
 * 13.0-15.4 -> 10.3-10.9 ms, f16 15.2-15.7 -> 14.7-15.2 ms; blocked level.
 */
#define KV_WIDENS (KV_BYTES < 4)
#define KV_FN3_(name, t) name##_##t
#define KV_FN2_(name, t) KV_FN3_(name, t)
#define KV_FN(name) SIMD_NAME(KV_FN2_(name, KV_T))
#define KV_AT(row, c) ((row) + (size_t)(c) * KV_BYTES)

static inline float KV_FN(sdpa_kv_dot)(const float *a, const char *b, int n)
{
    vf acc0 = vf_zero(), acc1 = vf_zero();
    int j = 0;
    for (; j + 2 * SIMD_LANES <= n; j += 2 * SIMD_LANES) {
        acc0 = vf_fmadd(vf_load(a + j), KV_LOAD(KV_AT(b, j)), acc0);
        acc1 = vf_fmadd(vf_load(a + j + SIMD_LANES), KV_LOAD(KV_AT(b, j + SIMD_LANES)), acc1);
    }
    for (; j + SIMD_LANES <= n; j += SIMD_LANES)
        acc0 = vf_fmadd(vf_load(a + j), KV_LOAD(KV_AT(b, j)), acc0);
    if (j < n)
        acc1 = vf_fmadd(vf_load_n(a + j, n - j), KV_LOAD_N(KV_AT(b, j), n - j), acc1);
    return vf_reduce_add(vf_add(acc0, acc1));
}

/* o[0..n) += f·x[0..n). */
static inline void KV_FN(sdpa_kv_axpy)(float *o, const char *x, float f, int n)
{
    const vf vfac = vf_set1(f);
    int j = 0;
    for (; j + SIMD_LANES <= n; j += SIMD_LANES)
        vf_store(o + j, vf_fmadd(vfac, KV_LOAD(KV_AT(x, j)), vf_load(o + j)));
    if (j < n)
        vf_store_n(o + j, vf_fmadd(vfac, KV_LOAD_N(KV_AT(x, j), n - j), vf_load_n(o + j, n - j)),
                   n - j);
}

/* s[r][0..nk) = q_r · krow[0..nk) for rb ≤ DECODE_RB rows and nk ≤
 * DECODE_KS keys; constant rb and nk on the hot path, as for the values. */
static DECODE_INLINE void KV_FN(sdpa_kv_scores)(const float *qs, int dh, int rb,
                                                const char *const *krow, int nk, float *s)
{
    vf acc[DECODE_RB][DECODE_KS_MOST];
#pragma GCC unroll 4
    for (int r = 0; r < rb; r++)
#pragma GCC unroll 4
        for (int k = 0; k < nk; k++)
            acc[r][k] = vf_zero();
    int c = 0;
    for (; c + SIMD_LANES <= dh; c += SIMD_LANES) {
        vf kv[DECODE_KS_MOST];
#pragma GCC unroll 4
        for (int k = 0; k < nk; k++)
            kv[k] = KV_LOAD(KV_AT(krow[k], c));
#pragma GCC unroll 4
        for (int r = 0; r < rb; r++) {
            const vf q = vf_load_kept(qs + (size_t)r * dh + c);
#pragma GCC unroll 4
            for (int k = 0; k < nk; k++)
                acc[r][k] = vf_fmadd(q, kv[k], acc[r][k]);
        }
    }
    if (c < dh) {
        const int n = dh - c;
        for (int r = 0; r < rb; r++) {
            const vf q = vf_load_n(qs + (size_t)r * dh + c, n);
            for (int k = 0; k < nk; k++)
                acc[r][k] = vf_fmadd(q, KV_LOAD_N(KV_AT(krow[k], c), n), acc[r][k]);
        }
    }
    /* The sums four at a time where the step allows (vf_reduce_add4: each
     * bit for bit vf_reduce_add's, in half the operations). */
#pragma GCC unroll 4
    for (int r = 0; r < rb; r++) {
        float *sr = s + (size_t)r * SDPA_DECODE_KEYS;
#if DECODE_KS_MOST >= 4
        if (nk == 4) {   /* the hot path's steps (DECODE_KS, DECODE_K1) */
            vf_reduce_add4(acc[r][0], acc[r][1], acc[r][2], acc[r][3], sr);
            continue;
        }
#endif
        if (nk == 2 && r + 1 < rb) {   /* two keys a step (DECODE_KS 2): two rows' sums */
            float t[4];
            vf_reduce_add4(acc[r][0], acc[r][1], acc[r + 1][0], acc[r + 1][1], t);
            sr[0] = t[0], sr[1] = t[1];
            sr[SDPA_DECODE_KEYS] = t[2], sr[SDPA_DECODE_KEYS + 1] = t[3];
            r++;
            continue;
        }
        for (int k = 0; k < nk; k++)
            sr[k] = vf_reduce_add(acc[r][k]);
    }
}

/* o_r += Σ_k p[r][k]·vrow[k] for rb ≤ DECODE_RB rows and nk ≤ DECODE_KV
 * keys, in key order (the sum a key at a time gives, bit for bit). Called
 * with constant rb and nk on the hot path, so that its loops unroll with no
 * branch left inside. */
static DECODE_INLINE void KV_FN(sdpa_kv_values)(float *o, int dh, int rb, const float *p,
                                                const char *const *vrow, int nk)
{
    vf pr[DECODE_RB][DECODE_KV_MOST];
#pragma GCC unroll 4
    for (int r = 0; r < rb; r++)
#pragma GCC unroll 4
        for (int k = 0; k < nk; k++)
            pr[r][k] = vf_set1(p[(size_t)r * SDPA_DECODE_KEYS + k]);
    int c = 0;
    for (; c + SIMD_LANES <= dh; c += SIMD_LANES) {
        vf v[DECODE_KV_MOST];
#pragma GCC unroll 4
        for (int k = 0; k < nk; k++)
            v[k] = KV_LOAD(KV_AT(vrow[k], c));
#pragma GCC unroll 4
        for (int r = 0; r < rb; r++) {
            vf acc = vf_load(o + (size_t)r * dh + c);
#pragma GCC unroll 4
            for (int k = 0; k < nk; k++)
                acc = vf_fmadd(pr[r][k], v[k], acc);
            vf_store(o + (size_t)r * dh + c, acc);
        }
    }
    if (c < dh) {
        const int n = dh - c;
        for (int r = 0; r < rb; r++) {
            vf acc = vf_load_n(o + (size_t)r * dh + c, n);
            for (int k = 0; k < nk; k++)
                acc = vf_fmadd(pr[r][k], KV_LOAD_N(KV_AT(vrow[k], c), n), acc);
            vf_store_n(o + (size_t)r * dh + c, acc, n);
        }
    }
}

/* rows[0..nk) = rows jj.. of X (row stride st bytes); for each, the row
 * ahead keys on is prefetched if it lies before ahead_ok (the split's end,
 * counted from X). */
static inline void KV_FN(sdpa_kv_rows_at)(const char *X, size_t st, int jj, int nk, int dh,
                                          int ahead, int ahead_ok, const char **rows)
{
    for (int k = 0; k < nk; k++) {
        rows[k] = X + (size_t)(jj + k) * st;
        if (ahead && jj + k + ahead < ahead_ok)
            SIMD_NAME(sdpa_prefetch_row)(rows[k] + (size_t)ahead * st, (size_t)dh * KV_BYTES);
    }
}

#if KV_SCALED
/* Each of the kb keys' scores of the rows times the key's scale. */
static inline void KV_FN(sdpa_kv_scale_keys)(float *s, int rows, int kb, const float *scale,
                                             size_t scale_st)
{
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < kb; j++)
            s[(size_t)r * SDPA_DECODE_KEYS + j] *= scale[(size_t)j * scale_st];
}
#endif

/* The prefetch distance in keys for `rows` query rows. Where fewer than
 * DECODE_RB rows of a narrow type go DECODE_K1 > DECODE_KS keys a step
 * (AVX2), they ask twice as many keys ahead: the parameter was tuned on
 * fp32 rows, which reach as far in bytes in half the keys, and the faster
 * four-key loop outran it. Lk 16384, H 32, Dh 128, 1 thread, avx2 on a
 * 2-vCPU Zen 4, prefetch 16 / 24 / 32 / 48 keys: f16 13.3 / 11.9 /
 * 11.2-11.8 / 11.5-11.8 ms, i8 11.3-11.5 / 9.6-9.8 / 9.5-9.6 / 9.3-9.6 ms.
 * Elsewhere it is kept: more rows (Hkv 8) ran int8 2-3% slower doubled,
 * the portable target's two keys a step 1.5-3%. */
static inline int KV_FN(sdpa_kv_ahead)(int ahead, int rows)
{
    return KV_WIDENS && DECODE_K1 > DECODE_KS && rows < DECODE_RB ? 2 * ahead : ahead;
}

/* The K pass of one block: s[rows][kb] for the kb keys at K (row stride
 * kst bytes, scales at scale with stride scale_st when KV_SCALED),
 * prefetching as sdpa_kv_rows_at does. */
static void KV_FN(sdpa_kv_block_scores)(const float *qs, int dh, int rows, const char *K,
                                        size_t kst, int kb, int ahead, int ahead_ok,
                                        const float *scale, size_t scale_st, float *s)
{
    const int step = rows >= DECODE_RB ? DECODE_KS : KV_WIDENS ? DECODE_K1 : 1;
    for (int jj = 0; jj < kb; jj += step) {
        const int nk = kb - jj < step ? kb - jj : step;
        const char *krow[DECODE_KS_MOST];
        KV_FN(sdpa_kv_rows_at)(K, kst, jj, nk, dh, KV_FN(sdpa_kv_ahead)(ahead, rows), ahead_ok,
                               krow);
        float *sj = s + jj;
        if (step == 1) {   /* few rows: the plain dot, two chains per product */
            for (int r = 0; r < rows; r++)
                sj[(size_t)r * SDPA_DECODE_KEYS] = KV_FN(sdpa_kv_dot)(qs + (size_t)r * dh, krow[0], dh);
            continue;
        }
        int r = 0;
#if DECODE_K1 > DECODE_KS
        if (nk == DECODE_K1 && rows < DECODE_RB) {
            for (; r < rows; r++)
                KV_FN(sdpa_kv_scores)(qs + (size_t)r * dh, dh, 1, krow, DECODE_K1,
                                      sj + (size_t)r * SDPA_DECODE_KEYS);
        } else
#endif
        if (nk == DECODE_KS) {
            for (; r + DECODE_RB <= rows; r += DECODE_RB)
                KV_FN(sdpa_kv_scores)(qs + (size_t)r * dh, dh, DECODE_RB, krow, DECODE_KS,
                                      sj + (size_t)r * SDPA_DECODE_KEYS);
            for (; r < rows; r++)
                KV_FN(sdpa_kv_scores)(qs + (size_t)r * dh, dh, 1, krow, DECODE_KS,
                                      sj + (size_t)r * SDPA_DECODE_KEYS);
        } else {   /* the block's last keys */
            for (; r < rows; r++)
                KV_FN(sdpa_kv_scores)(qs + (size_t)r * dh, dh, 1, krow, nk,
                                      sj + (size_t)r * SDPA_DECODE_KEYS);
        }
    }
#if KV_SCALED
    KV_FN(sdpa_kv_scale_keys)(s, rows, kb, scale, scale_st);
#else
    (void)scale, (void)scale_st;
#endif
}

#if DECODE_V_HELD
/* o_r += Σ_k p[r][k]·vrow_k for DECODE_RB rows, over all kb keys of the
 * block, for the nw vectors of o at column c (the last n floats wide):
 * those of the RB rows stay in registers while the keys go by, and each V
 * vector is loaded (and widened) once for the RB rows. The sums are the
 * key-order FMAs of sdpa_kv_values, bit for bit. When ahead is set, the
 * first chunk prefetches the rows ahead as sdpa_kv_rows_at does (the
 * split's first block has no other), and every chunk the line at its
 * column of the row a block on: spread over the chunks, the next block
 * arrives while this one is summed. Without that line, each chunk's 64
 * rows a line apart came late from memory (fp32 1.24× slower at Lk 16384,
 * Hkv 8; 1.06× with the rows ahead alone); the next block asked for at
 * once, in the first chunk, was as slow. */
static DECODE_INLINE void KV_FN(sdpa_kv_values_held)(float *o, int dh, int c, int nw, int n,
                                                     const float *p, const char *V, size_t vst,
                                                     int kb, int ahead, int ahead_ok)
{
    vf acc[DECODE_RB][DECODE_VW];
#pragma GCC unroll 4
    for (int r = 0; r < DECODE_RB; r++)
#pragma GCC unroll 4
        for (int w = 0; w < nw; w++)
            acc[r][w] = n == SIMD_LANES ? vf_load(o + (size_t)r * dh + c + w * SIMD_LANES)
                                        : vf_load_n(o + (size_t)r * dh + c, n);
    for (int k = 0; k < kb; k++) {
        const char *vrow = V + (size_t)k * vst;
        if (ahead && c == 0 && k + ahead < ahead_ok)
            SIMD_NAME(sdpa_prefetch_row)(vrow + (size_t)ahead * vst, (size_t)dh * KV_BYTES);
        if (ahead && k + SDPA_DECODE_KEYS < ahead_ok)
            __builtin_prefetch(KV_AT(vrow + (size_t)SDPA_DECODE_KEYS * vst, c), 0, 2);
        vf v[DECODE_VW];
#pragma GCC unroll 4
        for (int w = 0; w < nw; w++)
            v[w] = n == SIMD_LANES ? KV_LOAD(KV_AT(vrow, c + w * SIMD_LANES))
                                   : KV_LOAD_N(KV_AT(vrow, c), n);
#pragma GCC unroll 4
        for (int r = 0; r < DECODE_RB; r++) {
            const vf pr = vf_set1(p[(size_t)r * SDPA_DECODE_KEYS + k]);
#pragma GCC unroll 4
            for (int w = 0; w < nw; w++)
                acc[r][w] = vf_fmadd(pr, v[w], acc[r][w]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < DECODE_RB; r++)
#pragma GCC unroll 4
        for (int w = 0; w < nw; w++) {
            if (n == SIMD_LANES)
                vf_store(o + (size_t)r * dh + c + w * SIMD_LANES, acc[r][w]);
            else
                vf_store_n(o + (size_t)r * dh + c, acc[r][w], n);
        }
}

/* The V pass of DECODE_RB rows, chunk by chunk of o. */
static void KV_FN(sdpa_kv_block_values_held)(float *o, int dh, const float *p, const char *V,
                                             size_t vst, int kb, int ahead, int ahead_ok)
{
    int c = 0;
    for (; c + DECODE_VW * SIMD_LANES <= dh; c += DECODE_VW * SIMD_LANES)
        KV_FN(sdpa_kv_values_held)(o, dh, c, DECODE_VW, SIMD_LANES, p, V, vst, kb, ahead,
                                   ahead_ok);
    for (; c + SIMD_LANES <= dh; c += SIMD_LANES)
        KV_FN(sdpa_kv_values_held)(o, dh, c, 1, SIMD_LANES, p, V, vst, kb, ahead, ahead_ok);
    if (c < dh)
        KV_FN(sdpa_kv_values_held)(o, dh, c, 1, dh - c, p, V, vst, kb, ahead, ahead_ok);
}
#endif

/* The V pass of one block: o[rows] += P·V over the kb keys at V (P scaled
 * in place by each value's scale when KV_SCALED: the block's P is read by
 * this pass only). */
static void KV_FN(sdpa_kv_block_values)(float *o, int dh, int rows, const char *V, size_t vst,
                                        int kb, int ahead, int ahead_ok, const float *scale,
                                        size_t scale_st, float *s)
{
#if KV_SCALED
    KV_FN(sdpa_kv_scale_keys)(s, rows, kb, scale, scale_st);
#else
    (void)scale, (void)scale_st;
#endif
#if DECODE_V_HELD
    if (rows >= DECODE_RB) {
        int r = 0;
        for (; r + DECODE_RB <= rows; r += DECODE_RB, ahead = 0)
            KV_FN(sdpa_kv_block_values_held)(o + (size_t)r * dh, dh,
                                             s + (size_t)r * SDPA_DECODE_KEYS, V, vst, kb, ahead,
                                             ahead_ok);
        for (; r < rows; r++)   /* the rows past the last group, a key at a time */
            for (int j = 0; j < kb; j++)
                KV_FN(sdpa_kv_axpy)(o + (size_t)r * dh, V + (size_t)j * vst,
                                    s[(size_t)r * SDPA_DECODE_KEYS + j], dh);
        return;
    }
#endif
    const int step = rows >= DECODE_RB ? DECODE_KV : KV_WIDENS ? DECODE_K1 : 1;
    for (int jj = 0; jj < kb; jj += step) {
        const int nk = kb - jj < step ? kb - jj : step;
        const char *vrow[DECODE_KV_MOST];
        KV_FN(sdpa_kv_rows_at)(V, vst, jj, nk, dh, KV_FN(sdpa_kv_ahead)(ahead, rows), ahead_ok,
                               vrow);
        /* No skip of P = 0: 0·NaN and 0·Inf must give NaN as in the
         * oracle's unmasked keys (compose.c then reruns the oracle). */
        const float *sj = s + jj;
        if (step == 1) {
            for (int r = 0; r < rows; r++)
                KV_FN(sdpa_kv_axpy)(o + (size_t)r * dh, vrow[0], sj[(size_t)r * SDPA_DECODE_KEYS],
                                    dh);
            continue;
        }
        int r = 0;
#if DECODE_K1 > DECODE_KV
        if (nk == DECODE_K1 && rows < DECODE_RB) {
            for (; r < rows; r++)
                KV_FN(sdpa_kv_values)(o + (size_t)r * dh, dh, 1, sj + (size_t)r * SDPA_DECODE_KEYS,
                                      vrow, DECODE_K1);
        } else
#endif
        if (nk == DECODE_KV) {
            for (; r + DECODE_RB <= rows; r += DECODE_RB)
                KV_FN(sdpa_kv_values)(o + (size_t)r * dh, dh, DECODE_RB,
                                      sj + (size_t)r * SDPA_DECODE_KEYS, vrow, DECODE_KV);
            for (; r < rows; r++)
                KV_FN(sdpa_kv_values)(o + (size_t)r * dh, dh, 1, sj + (size_t)r * SDPA_DECODE_KEYS,
                                      vrow, DECODE_KV);
        } else {   /* the block's last keys */
            for (; r < rows; r++)
                KV_FN(sdpa_kv_values)(o + (size_t)r * dh, dh, 1, sj + (size_t)r * SDPA_DECODE_KEYS,
                                      vrow, nk);
        }
    }
}

/* The lanes of q · krow for a query held in nv registers, on two chains
 * (even and odd vectors), added. */
static DECODE_INLINE vf KV_FN(sdpa_kv_row_dot)(const vf *qv, int nv, const char *krow)
{
    vf a0 = vf_zero(), a1 = vf_zero();
#pragma GCC unroll 8
    for (int v = 0; v < DECODE_ROW_VECS; v += 2) {
        if (v < nv)
            a0 = vf_fmadd(qv[v], KV_LOAD(KV_AT(krow, v * SIMD_LANES)), a0);
        if (v + 1 < nv)
            a1 = vf_fmadd(qv[v + 1], KV_LOAD(KV_AT(krow, (v + 1) * SIMD_LANES)), a1);
    }
    return vf_add(a0, a1);
}

/* The K pass of one row held in nv registers (inlined with a constant nv
 * for the widest rows: see sdpa_kv_row_scores). */
static DECODE_INLINE void KV_FN(sdpa_kv_row_scores_nv)(const float *q, int nv, const char *K,
                                                       size_t kst, int kb, int ahead, int lines,
                                                       int ahead_ok, const float *scale,
                                                       size_t scale_st, float *s)
{
    if (lines)   /* as many bytes ahead as fp32 rows (decode.h's row_prefetch) */
        ahead = ahead * 4 / KV_BYTES;
    vf qv[DECODE_ROW_VECS];
    SIMD_NAME(sdpa_decode_row_load)(qv, q, nv);
    int jj = 0;
    for (; jj + 4 <= kb; jj += 4) {   /* four keys, their sums reduced together */
        vf sum[4];
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
            const char *krow = K + (size_t)(jj + k) * kst;
            if (ahead && jj + k + ahead < ahead_ok)
                SIMD_NAME(sdpa_prefetch_ahead)(krow + (size_t)ahead * kst,
                                               (size_t)nv * SIMD_LANES * KV_BYTES, lines);
            sum[k] = KV_FN(sdpa_kv_row_dot)(qv, nv, krow);
        }
        vf_reduce_add4(sum[0], sum[1], sum[2], sum[3], s + jj);
    }
    for (; jj < kb; jj++) {
        const char *krow = K + (size_t)jj * kst;
        if (ahead && jj + ahead < ahead_ok)
            SIMD_NAME(sdpa_prefetch_ahead)(krow + (size_t)ahead * kst,
                                           (size_t)nv * SIMD_LANES * KV_BYTES, lines);
        s[jj] = vf_reduce_add(KV_FN(sdpa_kv_row_dot)(qv, nv, krow));
    }
#if KV_SCALED
    KV_FN(sdpa_kv_scale_keys)(s, 1, kb, scale, scale_st);
#else
    (void)scale, (void)scale_st;
#endif
}

/* The V pass of one row held in nv registers (as the K pass). */
static DECODE_INLINE void KV_FN(sdpa_kv_row_values_nv)(float *o, int nv, const char *V,
                                                       size_t vst, int kb, int ahead, int lines,
                                                       int ahead_ok, const float *scale,
                                                       size_t scale_st, float *s)
{
    if (lines)
        ahead = ahead * 4 / KV_BYTES;
#if KV_SCALED
    KV_FN(sdpa_kv_scale_keys)(s, 1, kb, scale, scale_st);
#else
    (void)scale, (void)scale_st;
#endif
    vf acc[DECODE_ROW_VECS];
    SIMD_NAME(sdpa_decode_row_load)(acc, o, nv);
    for (int jj = 0; jj < kb; jj++) {
        const char *vrow = V + (size_t)jj * vst;
        if (ahead && jj + ahead < ahead_ok)
            SIMD_NAME(sdpa_prefetch_ahead)(vrow + (size_t)ahead * vst,
                                           (size_t)nv * SIMD_LANES * KV_BYTES, lines);
        const vf pj = vf_set1(s[jj]);
#pragma GCC unroll 8
        for (int v = 0; v < DECODE_ROW_VECS; v++)
            if (v < nv)
                acc[v] = vf_fmadd(pj, KV_LOAD(KV_AT(vrow, v * SIMD_LANES)), acc[v]);
    }
#pragma GCC unroll 8
    for (int v = 0; v < DECODE_ROW_VECS; v++)
        if (v < nv)
            vf_store(o + v * SIMD_LANES, acc[v]);
}

/* The row passes, compiled apart for nv = DECODE_ROW_VECS (Dh 128 on
 * AVX-512) with each prefetch style (lines) a constant, so that neither a
 * test of v < nv nor one of the style is left in the loop. */
static void KV_FN(sdpa_kv_row_scores)(const float *q, int nv, const char *K, size_t kst, int kb,
                                      int ahead, int lines, int ahead_ok, const float *scale,
                                      size_t scale_st, float *s)
{
    if (nv == DECODE_ROW_VECS && lines)
        KV_FN(sdpa_kv_row_scores_nv)(q, DECODE_ROW_VECS, K, kst, kb, ahead, 1, ahead_ok, scale,
                                     scale_st, s);
    else if (nv == DECODE_ROW_VECS)
        KV_FN(sdpa_kv_row_scores_nv)(q, DECODE_ROW_VECS, K, kst, kb, ahead, 0, ahead_ok, scale,
                                     scale_st, s);
    else
        KV_FN(sdpa_kv_row_scores_nv)(q, nv, K, kst, kb, ahead, lines, ahead_ok, scale, scale_st,
                                     s);
}

static void KV_FN(sdpa_kv_row_values)(float *o, int nv, const char *V, size_t vst, int kb,
                                      int ahead, int lines, int ahead_ok, const float *scale,
                                      size_t scale_st, float *s)
{
    if (nv == DECODE_ROW_VECS && lines)
        KV_FN(sdpa_kv_row_values_nv)(o, DECODE_ROW_VECS, V, vst, kb, ahead, 1, ahead_ok, scale,
                                     scale_st, s);
    else if (nv == DECODE_ROW_VECS)
        KV_FN(sdpa_kv_row_values_nv)(o, DECODE_ROW_VECS, V, vst, kb, ahead, 0, ahead_ok, scale,
                                     scale_st, s);
    else
        KV_FN(sdpa_kv_row_values_nv)(o, nv, V, vst, kb, ahead, lines, ahead_ok, scale, scale_st,
                                     s);
}

#undef KV_WIDENS
#undef KV_AT
#undef KV_FN
#undef KV_FN2_
#undef KV_FN3_
