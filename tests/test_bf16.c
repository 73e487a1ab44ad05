/*
 * test_bf16.c — the rows whose products run in bf16 (contract 0.3, api.md
 * §9.3): each row's math; "auto" never runs one and "auto-bf16" does; the
 * emulation (blocked-bf16) really rounds — its error against the oracle is
 * beyond fp32's bound and within bf16's — and a hardware row agrees with it
 * far closer than either bound, the same rounded operands summed in another
 * order; a wisdom bucket keeps one record per math. (Every bf16 row also
 * meets its bound on the check suite and its own tile edges in `attnbench
 * check`, and on the PyTorch fixtures, BERT's pooled output by cosine, in
 * test_fixtures.c.)
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "internal.h"
#include "verify.h"
#include "wisdom.h"
#include "workload.h"

static void test_math_and_choice(void)
{
    t_case("bf16: attn_kernel_math names each row's math");
    CHECK(attn_kernel_math("naive") == ATTN_F32, "naive: %d", attn_kernel_math("naive"));
    CHECK(attn_kernel_math("blocked") == ATTN_F32, "blocked");
    CHECK(attn_kernel_math("blocked-bf16") == ATTN_BF16, "blocked-bf16: %d",
          attn_kernel_math("blocked-bf16"));
    CHECK(attn_kernel_math("avx512-bf16") == ATTN_BF16 && attn_kernel_math("neon-bf16") == ATTN_BF16,
          "avx512-bf16 and neon-bf16 (listed on every machine)");
    CHECK(attn_kernel_math("no-such") == -1 && attn_kernel_math(NULL) == -1, "unknown names");
    CHECK(attn_kernel_supported("blocked-bf16"), "the emulation runs everywhere");
    /* The contract's amx row is listed, bf16, and runs nowhere yet (not
     * built): a context for it is refused. */
    attn_ctx *amx = NULL;
    CHECK(attn_kernel_math("amx") == ATTN_BF16 && !attn_kernel_supported("amx"),
          "amx: math %d, supported %d", attn_kernel_math("amx"), attn_kernel_supported("amx"));
    CHECK(attn_ctx_create(&amx, "amx", 1) == ATTN_ERR_UNSUPPORTED, "a context for amx");
    attn_ctx_destroy(amx);

    t_case("bf16: \"auto\" runs the first fp32 row, \"auto-bf16\" the first row of either math");
    const char *first_f32 = NULL, *first_any = NULL;
    for (int i = 0; i < attn_kernel_count(); i++) {
        const char *k = attn_kernel_name(i);
        if (!attn_kernel_supported(k)
            || attn_registry_passed_over(attn_registry_find(k), attn_cpu()->has))
            continue;
        if (!first_any)
            first_any = k;
        if (!first_f32 && attn_kernel_math(k) == ATTN_F32)
            first_f32 = k;
    }
    attn_ctx *a = NULL, *b = NULL;
    CHECK_STATUS(attn_ctx_create(&a, "auto", 1), ATTN_OK);
    CHECK_STATUS(attn_ctx_create(&b, "auto-bf16", 1), ATTN_OK);
    CHECK(a && strcmp(attn_ctx_kernel(a), first_f32) == 0, "auto ran %s, not %s",
          a ? attn_ctx_kernel(a) : "-", first_f32);
    CHECK(a && attn_kernel_math(attn_ctx_kernel(a)) == ATTN_F32, "auto ran a bf16 row");
    CHECK(b && strcmp(attn_ctx_kernel(b), first_any) == 0, "auto-bf16 ran %s, not %s",
          b ? attn_ctx_kernel(b) : "-", first_any);
    attn_ctx_destroy(a);
    attn_ctx_destroy(b);

    /* Intel's AMX cores run VDPBF16PS at half FMA's rate: a choice by
     * features passes over avx512-bf16 there, and over no fp32 row. */
    t_case("bf16: a choice by features passes over avx512-bf16 on a CPU with AMX-BF16 only");
    const attn_kernel *bf = attn_registry_find("avx512-bf16");
    const unsigned zen4 = ATTN_REQUIRES_AVX512_BF16;
    const unsigned spr = zen4 | ATTN_CPU_AMX_TILE | ATTN_CPU_AMX_BF16;
    if (bf && !bf->unavailable)   /* built for this architecture */
        CHECK(attn_registry_passed_over(bf, spr) && !attn_registry_passed_over(bf, zen4),
              "avx512-bf16 passed over: with AMX %d, without %d",
              attn_registry_passed_over(bf, spr), attn_registry_passed_over(bf, zen4));
    for (int i = 0; i < attn_registry_count(); i++) {
        const attn_kernel *r = attn_registry_get(i);
        CHECK(r->math == ATTN_BF16 || !attn_registry_passed_over(r, ~0u),
              "fp32 row %s passed over", r->name);
    }
}

/* One op's output from naive, blocked-bf16 and (when it runs here)
 * avx512-bf16: the emulation's error against naive is beyond fp32's bound
 * (it rounds) and within bf16's; avx512-bf16 is within agree·max(1,
 * max|ref|) of the emulation. */
static void check_rounding(const char *shape, double agree)
{
    t_case("bf16: %s: blocked-bf16 rounds (beyond fp32's bound, within 3e-2), the rows on "
           "bf16 units agree with it within %g", shape, agree);
    ab_workload w;
    char err[256];
    if (t_workload(&w, shape, 7, 0, err, sizeof err) != 0) {
        CHECK(0, "%s", err);
        return;
    }
    float *ref = t_run_kernel("naive", 1, &w), *emu = t_run_kernel("blocked-bf16", 2, &w);
    if (ref && emu) {
        ab_verdict fp32 = ab_verify(w.shape.op, emu, ref, w.out_len, w.max_abs_v);
        ab_verdict bf16 = ab_verify_kernel("blocked-bf16", &w.shape, emu, ref, w.out_len,
                                           w.max_abs_v);
        CHECK(!fp32.ok, "error %.3g within fp32's bound %.3g: the operands were not rounded",
              fp32.max_err, fp32.tol);
        CHECK(bf16.ok, "error %.3g beyond the bf16 bound %.3g", bf16.max_err, bf16.tol);
        /* The rows on bf16 units; onednn-bf16 is not among them: oneDNN
         * may keep f32 (docs/performance.md). */
        static const char *const units[] = { "avx512-bf16", "neon-bf16" };
        for (int u = 0; u < 2; u++) {
            if (!attn_kernel_supported(units[u]))
                continue;
            float *hw = t_run_kernel(units[u], 2, &w);
            double scale = fmax(1.0, t_max_abs(ref, w.out_len));
            double d = hw ? t_max_diff(hw, emu, w.out_len) : INFINITY;
            CHECK(d <= agree * scale, "%s differs from blocked-bf16 by %.3g (> %.3g)", units[u],
                  d, agree * scale);
            ab_free(hw);
        }
    }
    ab_free(ref);
    ab_free(emu);
    ab_workload_free(&w);
}

static void test_wisdom_maths(void)
{
    t_case("bf16: a wisdom bucket keeps one record per math; replacing one keeps the other");
    static attn_wisdom w;
    memset(&w, 0, sizeof w);
    attn_wisdom_record f32 = { .machine = 42, .bucket = { 0, 9, 64, 0, 1, ATTN_F32, ATTN_F32 },
                               .kernel = "blocked",
                               .time_ns = 2e6 };
    attn_wisdom_record bf = f32, f32b = f32;
    snprintf(bf.kernel, sizeof bf.kernel, "blocked-bf16");
    bf.time_ns = 1e6;
    snprintf(f32b.kernel, sizeof f32b.kernel, "naive");
    CHECK(attn_wisdom_put(&w, &f32, "m") == 0 && attn_wisdom_put(&w, &bf, NULL) == 0
          && w.n == 2, "%d records, not 2", w.n);
    CHECK(attn_wisdom_put(&w, &f32b, NULL) == 0 && w.n == 2, "%d records after a new fp32 one",
          w.n);
    const attn_wisdom_record *other = attn_wisdom_find_other_math(&w, &f32b);
    CHECK(other && strcmp(other->kernel, "blocked-bf16") == 0, "the bf16 record: %s",
          other ? other->kernel : "(none)");
}

/* bf16 of x, nearest even, from its bits (x finite): the rounding the
 * contract fixes, written independently of the kernels' instructions. */
static uint16_t bf16_rne(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static int param_index(const attn_kernel *k, const char *name)
{
    for (int i = 0; i < k->n_params; i++)
        if (strcmp(k->params[i].name, name) == 0)
            return i;
    return -1;
}

/* The FFN's two products on row k with the hidden passed in bf16 (kernel.h
 * y_bf16, x_bf16) and in fp32: the stored hidden is each fp32 value
 * rounded to nearest even, where kernel.h's layout puts it (element (i, j)
 * at (j/kc)·kc·R + i·kb + j%kc, R = m rounded up to MR), and the second
 * product's output is the fp32 path's bit for bit (it rounded the same
 * values as it packed them). Both buffers start as NaN patterns: a value
 * read that was never written shows. */
static void check_hidden16_case(const attn_kernel *k, int threads, int kc, int m, int d, int f)
{
    t_case("bf16 hidden [%s]: m %d, D %d, F %d, kc %d, %d threads: stored rounded in its layout, "
           "the second product bit for bit the fp32 path's", k->name, m, d, f, kc, threads);
    int params[ATTN_MAX_PARAMS];
    k->default_params(params);
    params[param_index(k, "kc")] = kc;
    attn_exec ex = { .n_threads = threads, .params = params, .data = k->data };
    size_t bytes16 = k->bf16_hidden_bytes(&ex, (size_t)m, f);
    const size_t rows16 = ((size_t)m + (size_t)k->geometry.mr - 1) / (size_t)k->geometry.mr
                        * (size_t)k->geometry.mr;
    CHECK(bytes16 == rows16 * (size_t)f * 2, "%zu bytes, not %zu", bytes16, rows16 * (size_t)f * 2);
    size_t s1 = k->gemm_scratch(&ex, (size_t)m, f, d), s2 = k->gemm_scratch(&ex, (size_t)m, d, f);
    ex.scratch_bytes = s1 > s2 ? s1 : s2;
    uint64_t seed = 5;
    float *x = t_alloc((size_t)m * d, sizeof(float), 0), *w1 = t_alloc((size_t)f * d, sizeof(float), 0);
    float *b1 = t_alloc((size_t)f, sizeof(float), 0), *w2 = t_alloc((size_t)d * f, sizeof(float), 0);
    float *b2 = t_alloc((size_t)d, sizeof(float), 0), *res = t_alloc((size_t)m * d, sizeof(float), 0);
    float *h = t_alloc((size_t)m * f, sizeof(float), 0), *part = t_alloc((size_t)m * f, sizeof(float), 0);
    float *y32 = t_alloc((size_t)m * d, sizeof(float), 0), *y16 = t_alloc((size_t)m * d, sizeof(float), 0);
    uint16_t *h16 = t_alloc(rows16 * (size_t)f, sizeof(uint16_t), 0);
    ex.scratch = t_alloc(ex.scratch_bytes, 1, 0);
    if (!x || !w1 || !b1 || !w2 || !b2 || !res || !h || !part || !y32 || !y16 || !h16 || !ex.scratch
        || bytes16 == 0)
        goto out;
    t_fill(x, (size_t)m * d, 1.0f, &seed);
    t_fill(w1, (size_t)f * d, 0.2f, &seed);
    t_fill(b1, (size_t)f, 0.2f, &seed);
    t_fill(w2, (size_t)d * f, 0.2f, &seed);
    t_fill(b2, (size_t)d, 0.2f, &seed);
    t_fill(res, (size_t)m * d, 1.0f, &seed);
    memset(h16, 0xff, rows16 * (size_t)f * sizeof(uint16_t));
    memset(part, 0xff, (size_t)m * f * sizeof(float));
    attn_gemm_problem first = { .m = (size_t)m, .n = f, .k = d, .x = x, .ldx = (size_t)d, .w = w1,
                                .bias = b1, .act = ATTN_ACT_GELU_ERF, .y = h, .ldy = (size_t)f };
    attn_gemm_problem second = { .m = (size_t)m, .n = d, .k = f, .x = h, .ldx = (size_t)f, .w = w2,
                                 .bias = b2, .act = ATTN_ACT_NONE, .residual = res, .y = y32,
                                 .ldy = (size_t)d };
    k->gemm(&ex, &first);
    k->gemm(&ex, &second);
    first.y = part;
    first.y_bf16 = h16;
    second.x = NULL;
    second.x_bf16 = h16;
    second.y = y16;
    k->gemm(&ex, &first);
    k->gemm(&ex, &second);
    size_t wrong = 0, at_i = 0;
    int at_j = 0;
    for (size_t i = 0; i < (size_t)m; i++)
        for (int j = 0; j < f; j++) {
            int block = j / kc * kc, kb = f - block < kc ? f - block : kc;
            uint16_t got = h16[(size_t)block * rows16 + i * (size_t)kb + (size_t)(j - block)];
            if (got != bf16_rne(h[i * (size_t)f + (size_t)j]) && wrong++ == 0)
                at_i = i, at_j = j;
        }
    CHECK(wrong == 0, "%zu stored values differ from the fp32 hidden rounded, first (%zu, %d)",
          wrong, at_i, at_j);
    CHECK(memcmp(y16, y32, (size_t)m * d * sizeof(float)) == 0,
          "the second product differs from the fp32 path's: max %g",
          t_max_diff(y16, y32, (size_t)m * d));
out:
    t_free(x), t_free(w1), t_free(b1), t_free(w2), t_free(b2), t_free(res);
    t_free(h), t_free(part), t_free(y32), t_free(y16), t_free(h16), t_free(ex.scratch);
}

static void test_hidden16(void)
{
    int rows = 0;
    for (int i = 0; i < attn_registry_count(); i++) {
        const attn_kernel *k = attn_registry_get(i);
        if (!k->bf16_hidden_bytes)
            continue;
        rows++;
        if (!attn_registry_runnable(k)) {
            t_skip("bf16 hidden [%s]: this CPU cannot run it", k->name);
            continue;
        }
        t_case("bf16 hidden [%s]: none where it cannot be laid out", k->name);
        int params[ATTN_MAX_PARAMS];
        k->default_params(params);
        attn_exec ex = { .n_threads = 1, .params = params, .data = k->data };
        CHECK(k->bf16_hidden_bytes(&ex, 64, 17) == 0, "an odd width laid out");
        CHECK(k->bf16_hidden_bytes(&ex, (size_t)k->geometry.skinny_rows, 64) == 0,
              "a decoding step's rows (its fp32 path) laid out");
        params[param_index(k, "kc")] = 40;
        CHECK(k->bf16_hidden_bytes(&ex, 64, 64) == 0, "kc 40 (not a multiple of 16) laid out");
        /* Past the skinny rows; partial tiles, one and several depth blocks
         * of either product (the first's depth past kc: its partial sums),
         * a last depth block of another size, 1 and 2 threads. */
        const int m_min = k->geometry.skinny_rows + 1;
        check_hidden16_case(k, 1, 384, m_min, 5, 2);
        check_hidden16_case(k, 2, 384, 13, 390, 34);
        check_hidden16_case(k, 2, 384, 40, 64, 770);
        check_hidden16_case(k, 2, 32, 30, 40, 98);
        check_hidden16_case(k, 1, 16, 25, 48, 50);
    }
#if defined(__x86_64__)
    t_case("bf16 hidden: avx512-bf16 takes it");
    CHECK(attn_registry_find("avx512-bf16") && attn_registry_find("avx512-bf16")->bf16_hidden_bytes,
          "no bf16 hidden on avx512-bf16 (%d rows have one)", rows);
#else
    (void)rows;
#endif
}

void test_bf16(void)
{
    test_math_and_choice();
    /* SDPA's own P is rounded where each path has it: normalized in the
     * emulation's tiled softmax, before the division by the row's sum in
     * avx512-bf16's streaming one, so the two differ by P's rounding too. */
    check_rounding("op=sdpa,B=2,H=3,Lq=77,Lk=130,Dh=64,mask=causal", 6e-3);
    check_rounding("op=encoder,B=2,L=33,D=96,H=4,F=160,norm=post,act=gelu,mask=padding", 2e-3);
    check_rounding("op=mha,B=1,Lq=40,Lk=70,D=64,H=2,mask=none", 2e-3);
    test_wisdom_maths();
    test_hidden16();
}
