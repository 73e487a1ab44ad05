/*
 * test_wisdom.c — the tuning store (kernels/wisdom.c): records survive a
 * write and a read unchanged; a file that is damaged in any way, of another
 * schema, or naming an undeclared machine is refused as a whole with a
 * reason; records of other machines are kept but never found for this one;
 * buckets classify calls as documented, keys and values stored narrower in
 * buckets of their own; a schema-1 file is still read (as fp32).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ops.h"
#include "wisdom.h"
#include "wisdom_store.h"

static attn_wisdom_record sample(uint64_t machine, int len_log2, const char *kernel)
{
    attn_wisdom_record r;
    memset(&r, 0, sizeof r);
    r.machine = machine;
    r.bucket = (attn_bucket){ ATTN_OP_SDPA, len_log2, 64, ATTN_MASK_CLASS_CAUSAL, 2, ATTN_F32,
                              ATTN_F32, 0 };
    snprintf(r.kernel, sizeof r.kernel, "%s", kernel);
    r.n_params = 2;
    strcpy(r.param_name[0], "bq");
    r.param_value[0] = 48;
    strcpy(r.param_name[1], "stream_from");
    r.param_value[1] = 1;
    r.time_ns = 1234.5;
    r.default_time_ns = 2000;
    r.max_err = 0.004;
    strcpy(r.level, "measure");
    strcpy(r.when, "2026-11-22T13:00:00Z");
    return r;
}

/* Parses text; returns parse's result, the reason in err. */
static int parse_text(const char *text, attn_wisdom *w, char *err, size_t len)
{
    FILE *f = tmpfile();
    if (!f)
        return -4;   /* none of attn_wisdom_parse's results */
    fputs(text, f);
    rewind(f);
    int rc = attn_wisdom_parse(f, w, err, len);
    fclose(f);
    return rc;
}

/* Writes text to path; 0 on success. */
static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* An "auto" context applies this machine's record for a call's bucket, and
 * ignores damaged files, other machines' records and unusable records. */
static void test_auto_context(const char *key, uint64_t me)
{
    char dir[] = "/tmp/attn-wisdom-XXXXXX", path[64], text[2000];
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    snprintf(path, sizeof path, "%s/wisdom", dir);
    const char *saved = getenv("ATTN_WISDOM"), *forced = getenv("ATTN_KERNEL");
    char saved_copy[4096] = "";
    if (saved)
        snprintf(saved_copy, sizeof saved_copy, "%s", saved);
    setenv("ATTN_WISDOM", path, 1);
    unsetenv("ATTN_KERNEL");

    enum { B = 1, H = 2, L = 16, DH = 8 };
    static float q[B * H * L * DH], k[B * H * L * DH], v[B * H * L * DH], o[B * H * L * DH];
    for (int i = 0; i < B * H * L * DH; i++)
        q[i] = k[i] = v[i] = (float)(i % 7) * 0.25f;
    attn_sdpa_shape sh = { B, H, L, L, DH, 0.0f, 0, 0 };
    const char *src = NULL, *used;
    attn_ctx *ctx = NULL;
    /* A record for exactly this call's bucket (sdpa, L <= 2^4, Dh 8, no
     * mask, 1 thread), for the blocked kernel with bq 7, and one for
     * another machine that must not apply. */
    snprintf(text, sizeof text,
             "attnbench-wisdom 1\nmachine %016llx %s\nmachine %016llx vendor=other\n"
             "record %016llx sdpa 4 8 none 1 blocked bq=7 10 20 0.01 measure now\n"
             "record %016llx sdpa 4 8 none 1 naive - 10 20 0.01 measure now\n",
             (unsigned long long)me, key, (unsigned long long)attn_machine_hash("vendor=other"),
             (unsigned long long)me, (unsigned long long)attn_machine_hash("vendor=other"));

    t_case("wisdom: an auto context runs the tuned kernel for the call's bucket");
    CHECK(write_file(path, text) == 0, "write %s", path);
    CHECK_STATUS(attn_ctx_create(&ctx, "auto", 1), ATTN_OK);
    CHECK_STATUS(attn_sdpa(ctx, &sh, q, k, v, NULL, o), ATTN_OK);
    used = attn_ctx_last_choice(ctx, &src);
    CHECK(used && strcmp(used, "blocked") == 0 && strcmp(src, "wisdom") == 0,
          "ran %s (%s); wisdom: %s", used, src, attn_ctx_wisdom_status(ctx));
    attn_mask causal = { .causal = 1 };
    CHECK_STATUS(attn_sdpa(ctx, &sh, q, k, v, &causal, o), ATTN_OK);   /* another bucket */
    used = attn_ctx_last_choice(ctx, &src);
    CHECK(used && strcmp(src, "features") == 0, "causal ran %s (%s)", used, src);
    attn_ctx_destroy(ctx);

    t_case("wisdom: keys and values stored narrower take their own bucket's record");
    {
        static uint16_t k16[B * H * L * DH], v16[B * H * L * DH];
        CHECK_STATUS(attn_convert_rows(ATTN_F16, B * H * L, DH, k, k16, NULL), ATTN_OK);
        CHECK_STATUS(attn_convert_rows(ATTN_F16, B * H * L, DH, v, v16, NULL), ATTN_OK);
        const attn_kv_view kv16 = { ATTN_F16, k16, NULL }, vv16 = { ATTN_F16, v16, NULL };
        const attn_kv_view kv32 = { ATTN_F32, k, NULL }, vv32 = { ATTN_F32, v, NULL };
        /* fp32 keys and values go to einsum-nqhd, f16 ones to blocked */
        snprintf(text, sizeof text,
                 "attnbench-wisdom 2\nmachine %016llx %s\n"
                 "record %016llx sdpa 4 8 none 1 f32 einsum-nqhd - 10 20 0.01 measure now\n"
                 "record %016llx sdpa 4 8 none 1 f16 blocked bq=7 10 20 0.01 measure now\n",
                 (unsigned long long)me, key, (unsigned long long)me, (unsigned long long)me);
        CHECK(write_file(path, text) == 0, "write %s", path);
        CHECK_STATUS(attn_ctx_create(&ctx, "auto", 1), ATTN_OK);
        const struct { const attn_kv_view *k, *v; const char *want, *src; } call[] = {
            { &kv16, &vv16, "blocked", "wisdom" },
            { &kv32, &vv32, "einsum-nqhd", "wisdom" },
            { &kv16, &vv32, NULL, "features" },   /* f16 keys, fp32 values: never tuned */
        };
        for (int c = 0; c < 3; c++) {
            CHECK_STATUS(attn_sdpa_kv(ctx, &sh, q, call[c].k, call[c].v, NULL, o), ATTN_OK);
            used = attn_ctx_last_choice(ctx, &src);
            CHECK(used && strcmp(src, call[c].src) == 0
                      && (!call[c].want || strcmp(used, call[c].want) == 0),
                  "keys %d, values %d: ran %s (%s); wisdom: %s", call[c].k->type,
                  call[c].v->type, used, src, attn_ctx_wisdom_status(ctx));
        }
        attn_ctx_destroy(ctx);
    }

    t_case("wisdom: a named kernel ignores the wisdom");
    CHECK_STATUS(attn_ctx_create(&ctx, "naive", 1), ATTN_OK);
    CHECK_STATUS(attn_sdpa(ctx, &sh, q, k, v, NULL, o), ATTN_OK);
    used = attn_ctx_last_choice(ctx, &src);
    CHECK(used && strcmp(used, "naive") == 0 && strcmp(src, "named") == 0, "%s (%s)", used, src);
    attn_ctx_destroy(ctx);

    t_case("wisdom: a damaged file changes nothing but the status");
    text[strlen(text) - 8] = '\0';   /* cut the last record short: no newline */
    CHECK(write_file(path, text) == 0, "write %s", path);
    CHECK_STATUS(attn_ctx_create(&ctx, "auto", 1), ATTN_OK);
    CHECK_STATUS(attn_sdpa(ctx, &sh, q, k, v, NULL, o), ATTN_OK);
    used = attn_ctx_last_choice(ctx, &src);
    CHECK(used && strcmp(src, "features") == 0 && strstr(attn_ctx_wisdom_status(ctx), "ignored"),
          "ran %s (%s); wisdom: %s", used, src, attn_ctx_wisdom_status(ctx));
    attn_ctx_destroy(ctx);

    /* Records the library must not use: naive (the oracle, never a choice)
     * and a parameter out of range. */
    static const struct { const char *what, *record; } unusable[] = {
        { "naming naive (the oracle, never a choice)", "naive -" },
        { "whose parameter is out of range", "blocked bq=999999" },
    };
    for (size_t u = 0; u < sizeof unusable / sizeof *unusable; u++) {
        t_case("wisdom: a record %s is not used", unusable[u].what);
        snprintf(text, sizeof text,
                 "attnbench-wisdom 1\nmachine %016llx %s\n"
                 "record %016llx sdpa 4 8 none 1 %s 10 20 0.01 measure now\n",
                 (unsigned long long)me, key, (unsigned long long)me, unusable[u].record);
        CHECK(write_file(path, text) == 0, "write %s", path);
        CHECK_STATUS(attn_ctx_create(&ctx, "auto", 1), ATTN_OK);
        CHECK_STATUS(attn_sdpa(ctx, &sh, q, k, v, NULL, o), ATTN_OK);
        attn_ctx_last_choice(ctx, &src);
        CHECK(strcmp(src, "features") == 0 && strstr(attn_ctx_wisdom_status(ctx), "unusable"),
              "%s; wisdom: %s", src, attn_ctx_wisdom_status(ctx));
        attn_ctx_destroy(ctx);
    }

    t_case("wisdom: a bucket tuned in both maths: \"auto\" runs its fp32 record, "
           "\"auto-bf16\" the faster of the two");
    for (int bf16_faster = 0; bf16_faster <= 1; bf16_faster++) {
        snprintf(text, sizeof text,
                 "attnbench-wisdom 1\nmachine %016llx %s\n"
                 "record %016llx sdpa 4 8 none 1 blocked bq=7 20 20 0.01 measure now\n"
                 "record %016llx sdpa 4 8 none 1 blocked-bf16 bq=7 %d 20 0.01 measure now\n",
                 (unsigned long long)me, key, (unsigned long long)me, (unsigned long long)me,
                 bf16_faster ? 10 : 30);
        CHECK(write_file(path, text) == 0, "write %s", path);
        static const char *const reach[] = { "auto", "auto-bf16" };
        for (int r = 0; r < 2; r++) {
            const char *want = r == 1 && bf16_faster ? "blocked-bf16" : "blocked";
            ctx = NULL;
            CHECK_STATUS(attn_ctx_create(&ctx, reach[r], 1), ATTN_OK);
            CHECK_STATUS(attn_sdpa(ctx, &sh, q, k, v, NULL, o), ATTN_OK);
            used = attn_ctx_last_choice(ctx, &src);
            CHECK(used && strcmp(used, want) == 0 && strcmp(src, "wisdom") == 0,
                  "%s with the bf16 record %s: ran %s (%s), not %s", reach[r],
                  bf16_faster ? "faster" : "slower", used, src, want);
            attn_ctx_destroy(ctx);
        }
    }

    t_case("wisdom: a decoding step's record reaches the steps (Lq 1) of its keys' length, "
           "not the full pass, and the pass's record not the steps");
    for (int rec_decode = 0; rec_decode <= 1; rec_decode++) {
        snprintf(text, sizeof text,
                 "attnbench-wisdom 3\nmachine %016llx %s\n"
                 "record %016llx sdpa%s 4 8 none 1 f32 blocked bq=7 20 20 0.01 measure now\n",
                 (unsigned long long)me, key, (unsigned long long)me,
                 rec_decode ? "-decode" : "");
        CHECK(write_file(path, text) == 0, "write %s", path);
        for (int call_decode = 0; call_decode <= 1; call_decode++) {
            attn_sdpa_shape call = sh;
            call.q_len = call_decode ? 1 : L;
            ctx = NULL;
            CHECK_STATUS(attn_ctx_create(&ctx, "auto", 1), ATTN_OK);
            CHECK_STATUS(attn_sdpa(ctx, &call, q, k, v, NULL, o), ATTN_OK);
            used = attn_ctx_last_choice(ctx, &src);
            const char *want = rec_decode == call_decode ? "wisdom" : "features";
            CHECK(used && strcmp(src, want) == 0,
                  "a %s record, a call of Lq %d: ran %s (%s), want %s",
                  rec_decode ? "decode" : "pass", call.q_len, used, src, want);
            attn_ctx_destroy(ctx);
        }
    }

    t_case("wisdom: an fp32 record alone (a tune without the bf16 rows) is not \"auto-bf16\"'s: "
           "it keeps its choice by features; \"auto\" runs the record");
    snprintf(text, sizeof text,
             "attnbench-wisdom 1\nmachine %016llx %s\n"
             "record %016llx sdpa 4 8 none 1 blocked bq=7 20 20 0.01 measure now\n",
             (unsigned long long)me, key, (unsigned long long)me);
    CHECK(write_file(path, text) == 0, "write %s", path);
    static const char *const reach[] = { "auto", "auto-bf16" };
    for (int r = 0; r < 2; r++) {
        ctx = NULL;
        CHECK_STATUS(attn_ctx_create(&ctx, reach[r], 1), ATTN_OK);
        CHECK_STATUS(attn_sdpa(ctx, &sh, q, k, v, NULL, o), ATTN_OK);
        used = attn_ctx_last_choice(ctx, &src);
        const char *want_src = r == 0 ? "wisdom" : "features";
        CHECK(used && strcmp(src, want_src) == 0 && (r == 1 || strcmp(used, "blocked") == 0),
              "%s: ran %s (%s), want %s", reach[r], used, src, want_src);
        attn_ctx_destroy(ctx);
    }

    unlink(path);
    rmdir(dir);
    if (saved)
        setenv("ATTN_WISDOM", saved_copy, 1);
    else
        unsetenv("ATTN_WISDOM");
    if (forced)
        setenv("ATTN_KERNEL", forced, 1);
}

/* A quicker tune's record does not replace a more thorough one's in the
 * file (ab_wisdom_merge): an estimate (nothing timed) over a measured
 * record is kept out and said; a patient record replaces it. */
static void test_merge_levels(uint64_t me, const char *key)
{
    t_case("wisdom: a merge keeps a measured record over an estimate, and takes a patient one");
    char dir[] = "/tmp/attn-merge-XXXXXX", path[64], note[400], err[256];
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    snprintf(path, sizeof path, "%s/wisdom", dir);
    attn_wisdom *add = calloc(1, sizeof *add), *back = calloc(1, sizeof *back);
    if (!add || !back) {
        CHECK(0, "out of memory");
        free(add);
        free(back);
        return;
    }
    static const char *const levels[] = { "measure", "estimate", "patient" };
    static const char *const kernels[] = { "blocked", "einsum-bhqd", "einsum-nqhd" };
    static const char *const want[] = { "blocked", "blocked", "einsum-nqhd" };
    for (int i = 0; i < 3; i++) {
        memset(add, 0, sizeof *add);
        attn_wisdom_record r = sample(me, 9, kernels[i]);
        snprintf(r.level, sizeof r.level, "%s", levels[i]);
        CHECK(attn_wisdom_put(add, &r, key) == 0, "put");
        CHECK(ab_wisdom_merge(path, add, note, sizeof note, err, sizeof err) == 0, "merge: %s",
              err);
        CHECK(attn_wisdom_read(path, back, err, sizeof err) == 0 && back->n == 1
                  && strcmp(back->rec[0].kernel, want[i]) == 0
                  && (i != 1 || strstr(note, "1 record of a more thorough tune kept")),
              "after the %s tune: %d records, %s (%s); note '%s'", levels[i], back->n,
              back->n ? back->rec[0].kernel : "-", back->n ? back->rec[0].level : "-", note);
    }
    free(add);
    free(back);
    char lock[80];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path);
    unlink(lock);
    rmdir(dir);
}

void test_wisdom(void)
{
    attn_wisdom *w = calloc(1, sizeof *w), *back = calloc(1, sizeof *back);
    char key[320], err[256];
    if (!w || !back) {
        CHECK(0, "out of memory");
        free(w), free(back);
        return;
    }
    attn_machine_key(key, sizeof key);
    uint64_t me = attn_machine_hash(key);

    t_case("wisdom: machine key names CPU, features, caches, version and flags");
    CHECK(strstr(key, "vendor=") && strstr(key, "l2=") && strstr(key, "version=")
          && strstr(key, "flags=") && !strchr(key, '\n'), "key '%s'", key);
    CHECK(attn_machine_hash(key) == me && attn_machine_hash("other") != me, "hash not stable");

    t_case("wisdom: a machine key too long for its buffer ends in a hash of the whole key");
    {   /* cut short, the compiler and flags at its end fell off: two builds, one key */
        char whole[2048], small[64];
        attn_machine_key(whole, sizeof whole);
        attn_machine_key(small, sizeof small);
        char want[40];
        snprintf(want, sizeof want, " key#%016llx", (unsigned long long)attn_machine_hash(whole));
        CHECK(strstr(whole, " cc=") && strlen(small) == sizeof small - 1
                  && strcmp(small + strlen(small) - strlen(want), want) == 0
                  && strncmp(small, whole, sizeof small - 1 - strlen(want)) == 0,
              "'%s' from '%s'", small, whole);
    }

    t_case("wisdom: records round-trip through the file format");
    uint64_t them = attn_machine_hash("vendor=other");
    attn_wisdom_record a = sample(me, 9, "avx512"), b = sample(them, 9, "neon");
    b.n_params = 0;
    CHECK(attn_wisdom_put(w, &a, key) == 0 && attn_wisdom_put(w, &b, "vendor=other") == 0, "put");
    a.param_value[0] = 96;   /* same machine and bucket: replaces */
    CHECK(attn_wisdom_put(w, &a, key) == 0 && w->n == 2, "replace: %d records", w->n);
    FILE *f = tmpfile();
    CHECK(f && attn_wisdom_write(f, w) == 0, "write");
    if (f) {
        rewind(f);
        CHECK(attn_wisdom_parse(f, back, err, sizeof err) == 0, "parse: %s", err);
        fclose(f);
    }
    CHECK(back->n == 2 && back->n_machines == 2, "%d records, %d machines", back->n,
          back->n_machines);
    const attn_wisdom_record *got = attn_wisdom_find(back, me, &a.bucket);
    CHECK(got && strcmp(got->kernel, "avx512") == 0 && got->n_params == 2
          && got->param_value[0] == 96 && strcmp(got->param_name[1], "stream_from") == 0
          && got->time_ns == 1234.5 && got->max_err == 0.004 && strcmp(got->level, "measure") == 0,
          "record changed on the way");

    t_case("wisdom: keys and values stored narrower are buckets of their own, through the file");
    attn_wisdom_record typed = a, mixed = a;
    typed.bucket.k_type = typed.bucket.v_type = ATTN_F16;
    snprintf(typed.kernel, sizeof typed.kernel, "avx2");
    mixed.bucket.k_type = ATTN_BF16;
    mixed.bucket.v_type = ATTN_I8;
    snprintf(mixed.kernel, sizeof mixed.kernel, "blocked");
    CHECK(!attn_bucket_equal(&typed.bucket, &a.bucket)
              && !attn_bucket_equal(&typed.bucket, &mixed.bucket),
          "typed buckets equal to fp32's");
    CHECK(attn_wisdom_put(w, &typed, key) == 0 && attn_wisdom_put(w, &mixed, key) == 0
              && w->n == 4, "put: %d records (the fp32 one replaced?)", w->n);
    char shown[80];
    attn_bucket_format(&mixed.bucket, shown, sizeof shown);
    CHECK(strstr(shown, " kv=bf16/i8"), "'%s'", shown);
    attn_bucket_format(&a.bucket, shown, sizeof shown);
    CHECK(!strstr(shown, "kv="), "fp32 shown with its storage: '%s'", shown);
    f = tmpfile();
    CHECK(f && attn_wisdom_write(f, w) == 0, "write");
    if (f) {
        rewind(f);
        CHECK(attn_wisdom_parse(f, back, err, sizeof err) == 0, "parse: %s", err);
        fclose(f);
    }
    const attn_wisdom_record *g32 = attn_wisdom_find(back, me, &a.bucket),
                             *g16 = attn_wisdom_find(back, me, &typed.bucket),
                             *gmix = attn_wisdom_find(back, me, &mixed.bucket);
    CHECK(back->n == 4 && g32 && g16 && gmix && strcmp(g32->kernel, "avx512") == 0
              && strcmp(g16->kernel, "avx2") == 0 && strcmp(gmix->kernel, "blocked") == 0
              && gmix->bucket.k_type == ATTN_BF16 && gmix->bucket.v_type == ATTN_I8,
          "%d records; typed records lost or swapped", back->n);
    /* the shapes' buckets follow their kv key */
    ab_shape s32, s16;
    attn_bucket b32, b16;
    CHECK(ab_shape_parse("op=sdpa,B=1,H=32,Lq=1,Lk=4096,Dh=128", AB_OP_SDPA, &s32, err,
                         sizeof err) == 0
              && ab_shape_parse("op=sdpa,B=1,H=32,Lq=1,Lk=4096,Dh=128,kv=i8", AB_OP_SDPA, &s16,
                                err, sizeof err) == 0,
          "shape: %s", err);
    ab_shape_bucket(&s32, 1, &b32);
    ab_shape_bucket(&s16, 1, &b16);
    CHECK(b32.k_type == ATTN_F32 && b16.k_type == ATTN_I8 && b16.v_type == ATTN_I8
              && !attn_bucket_equal(&b32, &b16),
          "shape buckets: %d/%d against %d/%d", b32.k_type, b32.v_type, b16.k_type, b16.v_type);

    t_case("wisdom: another machine's records are kept but not found for this one");
    attn_bucket other = b.bucket;
    CHECK(attn_wisdom_find(back, me, &other) != NULL, "same bucket, this machine");
    other.len_log2 = 10;
    CHECK(attn_wisdom_find(back, me, &other) == NULL, "a bucket never tuned was found");
    CHECK(attn_wisdom_find(back, them, &b.bucket) != NULL, "the other machine's record lost");

    t_case("wisdom: damaged files are refused as a whole, with a reason");
    char m[400];
    snprintf(m, sizeof m, "machine %016llx %s\n", (unsigned long long)me, key);
    const char *rec = "record %016llx sdpa 9 64 causal 2 avx512 bq=48 1 1 0.1 measure now\n";
    char good_rec[200];
    snprintf(good_rec, sizeof good_rec, rec, (unsigned long long)me);
    struct { const char *what; char text[1200]; } bad[20];
    int nb = 0;
    snprintf(bad[nb].text, sizeof bad[0].text, "%s", ""); bad[nb++].what = "empty";
    snprintf(bad[nb].text, sizeof bad[0].text, "attnbench-wisdom 0\n"); bad[nb++].what = "schema";
    snprintf(bad[nb].text, sizeof bad[0].text, "hello\n"); bad[nb++].what = "not wisdom";
    snprintf(bad[nb].text, sizeof bad[0].text, "attnbench-wisdom 1\n%s", good_rec);
    bad[nb++].what = "undeclared machine";
    snprintf(bad[nb].text, sizeof bad[0].text, "attnbench-wisdom 1\n%s%.60s", m, good_rec);
    bad[nb++].what = "truncated";
    snprintf(bad[nb].text, sizeof bad[0].text, "attnbench-wisdom 1\n%srecord %016llx sdpa 9 64 "
             "causal 2 avx512 bq=x 1 1 0.1 measure now\n", m, (unsigned long long)me);
    bad[nb++].what = "bad parameter";
    snprintf(bad[nb].text, sizeof bad[0].text, "attnbench-wisdom 1\nmachine 0000000000000001 %s\n",
             key);
    bad[nb++].what = "machine hash mismatch";
    snprintf(bad[nb].text, sizeof bad[0].text, "attnbench-wisdom 1\n%srecord %016llx sdpa 9 64 "
             "sideways 2 avx512 - 1 1 0.1 measure now\n", m, (unsigned long long)me);
    bad[nb++].what = "unknown mask";
    snprintf(bad[nb].text, sizeof bad[0].text, "attnbench-wisdom 1\n%srecord %016llx sdpa 9 64 "
             "causal 2 avx512 - inf 1 0.1 measure now\n", m, (unsigned long long)me);
    bad[nb++].what = "an infinite time";
    /* past int: once wrapped into another, valid bucket (Dh 8, 1 thread) */
    snprintf(bad[nb].text, sizeof bad[0].text, "attnbench-wisdom 1\n%srecord %016llx sdpa 9 "
             "4294967304 causal 2 avx512 - 1 1 0.1 measure now\n", m, (unsigned long long)me);
    bad[nb++].what = "a head width past int";
    snprintf(bad[nb].text, sizeof bad[0].text, "attnbench-wisdom 1\n%srecord %016llx sdpa 9 64 "
             "causal 4294967297 avx512 - 1 1 0.1 measure now\n", m, (unsigned long long)me);
    bad[nb++].what = "a thread count past int";
    {   /* a key the record cannot hold: written back cut, it would fail its hash */
        char long_key[400];
        memset(long_key, 'x', 330);
        long_key[330] = '\0';
        snprintf(bad[nb].text, sizeof bad[0].text, "attnbench-wisdom 1\nmachine %016llx %s\n",
                 (unsigned long long)attn_machine_hash(long_key), long_key);
        bad[nb++].what = "a machine key of 330 characters";
    }
    /* schema 2: the storage field, after the thread count */
    const char *rec2 = "record %016llx sdpa 9 64 causal 2 %s avx512 bq=48 1 1 0.1 measure now\n";
    static const char *const bad_kv[] = { "f8", "f16/f16", "f16/", "" };
    static const char *const bad_kv_what[] = { "unknown storage", "storage spelt twice",
                                               "half a storage", "no storage field" };
    for (int i = 0; i < 4; i++) {
        char r2[200];
        snprintf(r2, sizeof r2, rec2, (unsigned long long)me, bad_kv[i]);
        snprintf(bad[nb].text, sizeof bad[0].text, "attnbench-wisdom 2\n%s%s", m, r2);
        bad[nb++].what = bad_kv_what[i];
    }
    for (int i = 0; i < nb; i++) {
        err[0] = '\0';
        CHECK(parse_text(bad[i].text, back, err, sizeof err) == -1 && err[0],
              "%s: accepted", bad[i].what);
    }
    /* A newer attnbench's file is refused too, as not this one's to judge
     * (tune leaves it as it is instead of setting it aside). */
    CHECK(parse_text("attnbench-wisdom 4\n", back, err, sizeof err) == -3 && err[0],
          "a newer schema: not -3");
    char ok[1200];
    snprintf(ok, sizeof ok, "# comment\nattnbench-wisdom 1\n%s%s", m, good_rec);
    CHECK(parse_text(ok, back, err, sizeof err) == 0 && back->n == 1
              && back->rec[0].bucket.k_type == ATTN_F32 && back->rec[0].bucket.v_type == ATTN_F32,
          "a good schema-1 file, read as fp32: %s", err);
    char r2[200];
    snprintf(r2, sizeof r2, rec2, (unsigned long long)me, "f16/i8");
    snprintf(ok, sizeof ok, "attnbench-wisdom 2\n%s%s", m, r2);
    CHECK(parse_text(ok, back, err, sizeof err) == 0 && back->n == 1
              && back->rec[0].bucket.k_type == ATTN_F16 && back->rec[0].bucket.v_type == ATTN_I8
              && strcmp(back->rec[0].kernel, "avx512") == 0,
          "a good schema-2 file: %s", err);
    CHECK(attn_wisdom_read("/nonexistent/wisdom", back, err, sizeof err) == -2, "missing file");

    t_case("wisdom: buckets");
    attn_bucket k;
    attn_mask causal = { .causal = 1 }, pad = { .causal = 1, .key_padding = (const uint8_t *)"" };
    attn_bucket_of(&k, ATTN_OP_SDPA, 512, 512, 64, NULL, ATTN_F32, ATTN_F32, 1);
    CHECK(k.len_log2 == 9 && k.mask_class == ATTN_MASK_CLASS_NONE, "512: %d", k.len_log2);
    attn_bucket_of(&k, ATTN_OP_MHA, 300, 513, 64, &causal, ATTN_F16, ATTN_I8, 2);
    CHECK(k.len_log2 == 10 && k.mask_class == ATTN_MASK_CLASS_CAUSAL && k.threads == 2
              && k.k_type == ATTN_F16 && k.v_type == ATTN_I8, "513, f16 keys, int8 values");
    attn_bucket_of(&k, ATTN_OP_ENCODER, 1, 1, 64, &pad, ATTN_F32, ATTN_F32, 1);
    CHECK(k.len_log2 == 0 && k.mask_class == ATTN_MASK_CLASS_PADDED && !k.decode, "1, padded");

    t_case("wisdom: a decoding step (at most 16 query rows against more keys) has its own "
           "bucket, of its keys' length; written \"sdpa-decode\" from schema 3");
    attn_bucket full, step, spec, layer;
    attn_bucket_of(&full, ATTN_OP_SDPA, 4096, 4096, 128, &causal, ATTN_F32, ATTN_F32, 1);
    attn_bucket_of(&step, ATTN_OP_SDPA, 1, 4096, 128, &causal, ATTN_F32, ATTN_F32, 1);
    attn_bucket_of(&spec, ATTN_OP_MHA, 16, 4000, 128, &causal, ATTN_F32, ATTN_F32, 1);
    attn_bucket_of(&layer, ATTN_OP_ENCODER, 1, 4096, 128, NULL, ATTN_F32, ATTN_F32, 1);
    char step_shown[96];
    attn_bucket_format(&step, step_shown, sizeof step_shown);
    CHECK(!full.decode && step.decode && spec.decode && !layer.decode
              && step.len_log2 == full.len_log2 && !attn_bucket_equal(&full, &step)
              && strcmp(step_shown, "sdpa decode L<=4096 Dh128 causal 1thr") == 0,
          "full %d, step %d ('%s'), 16 rows %d, a layer's step %d", full.decode, step.decode,
          step_shown, spec.decode, layer.decode);
    attn_bucket_of(&k, ATTN_OP_SDPA, 17, 4096, 128, &causal, ATTN_F32, ATTN_F32, 1);
    CHECK(!k.decode, "17 query rows are a pass, not a step");
    attn_wisdom_record dr;
    memset(&dr, 0, sizeof dr);
    dr.machine = me;
    dr.bucket = step;
    snprintf(dr.kernel, sizeof dr.kernel, "blocked");
    snprintf(dr.level, sizeof dr.level, "measure");
    snprintf(dr.when, sizeof dr.when, "now");
    memset(w, 0, sizeof *w);
    CHECK(attn_wisdom_put(w, &dr, key) == 0, "put");
    dr.bucket = full;
    CHECK(attn_wisdom_put(w, &dr, key) == 0 && w->n == 2, "the pass's record beside the step's: %d",
          w->n);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    CHECK(mem && attn_wisdom_write(mem, w) == 0, "write");
    if (mem)
        fclose(mem);
    CHECK(buf && strstr(buf, "attnbench-wisdom 3\n") && strstr(buf, " sdpa-decode 12 128 causal 1 ")
              && parse_text(buf, back, err, sizeof err) == 0 && back->n == 2
              && back->rec[0].bucket.decode && !back->rec[1].bucket.decode,
          "round trip: %s", err);
    free(buf);
    /* Refused: a decode op in a schema-2 file, an encoder's decode bucket. */
    static const struct { int schema; const char *op, *what; } refused[] = {
        { 2, "sdpa-decode", "a schema-2 file with a decode op" },
        { 3, "encoder-decode", "an encoder's decode bucket" },
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        char old_file[1200];
        snprintf(old_file, sizeof old_file,
                 "attnbench-wisdom %d\nmachine %016llx %s\n"
                 "record %016llx %s 12 128 causal 1 f32 blocked - 1 2 0.1 measure now\n",
                 refused[i].schema, (unsigned long long)me, key, (unsigned long long)me,
                 refused[i].op);
        CHECK(parse_text(old_file, back, err, sizeof err) == -1, "%s: accepted", refused[i].what);
    }
    test_auto_context(key, me);
    test_merge_levels(me, key);
    free(w);
    free(back);
}
