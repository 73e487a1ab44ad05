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

    t_case("bf16: \"auto\" runs the first fp32 row, \"auto-bf16\" the first row of either math");
    const char *first_f32 = NULL, *first_any = NULL;
    for (int i = 0; i < attn_kernel_count(); i++) {
        const char *k = attn_kernel_name(i);
        if (!attn_kernel_supported(k))
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
        ab_verdict bf16 = ab_verify_kernel("blocked-bf16", w.shape.op, emu, ref, w.out_len,
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
    attn_wisdom_record f32 = { .machine = 42, .bucket = { 0, 9, 64, 0, 1 }, .kernel = "blocked",
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
}
