/*
 * wisdom.h — what `attnbench tune` learned about this machine: for each
 * bucket of calls (operation, length range, head width, mask kind, thread
 * count), the fastest kernel and parameters that passed the oracle check.
 *
 * The file is text, one record per line, under a schema version; each
 * record names the machine it was measured on by a key (CPU identity, the
 * ISA features the OS enables, cache sizes, core count, attnbench version,
 * build flags). Records of other machines are kept — a fleet can share one
 * file — but only this machine's are used. A damaged file, or one of
 * another schema, is never trusted: parsing fails as a whole and says why.
 */
#ifndef ATTN_WISDOM_H
#define ATTN_WISDOM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attn.h"
#include "kernel.h"

/* Schema 2 (contract 0.3) adds the storage of keys and values to a
 * bucket; a schema-1 file is read as fp32 keys and values. Schema 3 adds
 * the decoding class (an op written "sdpa-decode", "mha-decode"); a
 * schema-1 or -2 file has none: its records are of the other class. */
#define ATTN_WISDOM_SCHEMA 3
/* A call of SDPA or MHA with at most this many query rows against more
 * keys is a decoding step: its own bucket (attn_bucket.decode). */
#define ATTN_BUCKET_DECODE_QUERIES 16
#define ATTN_WISDOM_MAX_RECORDS 4096

enum { ATTN_OP_SDPA, ATTN_OP_MHA, ATTN_OP_ENCODER, ATTN_OP_COUNT };
enum { ATTN_MASK_CLASS_NONE, ATTN_MASK_CLASS_CAUSAL, ATTN_MASK_CLASS_PADDED };

/* Calls that share a bucket share a tuned choice. len_log2: the smallest e
 * with max(Lq, Lk) <= 2^e. mask_class: padded for any padding, keep or bias
 * part (with or without causal), else causal, else none. k_type, v_type:
 * how the call's keys and values are stored (ATTN_F32 but for attn_sdpa_kv
 * and typed caches): a narrow type can move the bound of a decoding step
 * from memory to the loop, and with it the best kernel and parameters. */
typedef struct attn_bucket {
    int op, len_log2, head_dim, mask_class, threads;
    attn_dtype k_type, v_type;
    /* 1: an SDPA or MHA call of at most ATTN_BUCKET_DECODE_QUERIES query
     * rows against more keys (a generation step, a few speculative
     * tokens). Its length class is its keys', as a full pass over them
     * has; it runs the decode path, whose kernel and parameters (decode_rows,
     * prefetch) a full pass never reads: one choice for both let a tune of
     * the pass set the step's (a review measured a record's decode_rows=0
     * making a step 3x slower). */
    int decode;
} attn_bucket;

typedef struct attn_wisdom_record {
    uint64_t machine;                  /* attn_machine_hash of the machine key */
    attn_bucket bucket;
    char kernel[32];
    int n_params;
    char param_name[ATTN_MAX_PARAMS][24];
    int param_value[ATTN_MAX_PARAMS];
    double time_ns;                    /* median of the winning candidate */
    double default_time_ns;            /* the untuned choice, same run (0: not timed) */
    double max_err;                    /* against naive, as a fraction of api.md §4's bound */
    char level[12];                    /* estimate, measure, patient */
    char when[24];                     /* UTC, ISO 8601 */
} attn_wisdom_record;

typedef struct attn_wisdom {
    int n;
    attn_wisdom_record rec[ATTN_WISDOM_MAX_RECORDS];
    /* Machine keys seen in the file (hash and text), for --export/--import
     * and for `info` to say whose records are there. */
    int n_machines;
    uint64_t machine_hash[64];
    char machine_key[64][320];
} attn_wisdom;

/* This machine's key and its 64-bit hash (FNV-1a). The wisdom's key is the
 * hardware key (CPU identity, usable features, cache sizes, CPU count) plus
 * attnbench's version and build flags, which may tune differently; results
 * are labelled by the hardware key alone, so that one machine's results
 * across commits form one series. */
void attn_machine_key(char *buf, size_t len);
void attn_machine_hardware_key(char *buf, size_t len);
uint64_t attn_machine_hash(const char *key);
/* attnbench's cache directory, where the wisdom and the measured peaks live
 * by default: $XDG_CACHE_HOME/attnbench, else $HOME/.cache/attnbench. 0, or
 * -1 when neither variable is set or the path does not fit in len. */
int attn_cache_dir(char *buf, size_t len);

/* The bucket of a call, its keys and values stored as k_type and v_type
 * (ATTN_F32 for every call but attn_sdpa_kv's and typed caches'). */
void attn_bucket_of(attn_bucket *b, int op, int q_len, int kv_len, int head_dim,
                    const attn_mask *mask, attn_dtype k_type, attn_dtype v_type, int threads);
/* "sdpa L<=512 Dh64 causal 2thr", then " kv=f16" (or " kv=f16/i8" for
 * keys and values of two types) where they are not fp32 */
void attn_bucket_format(const attn_bucket *b, char *buf, size_t len);
int attn_bucket_equal(const attn_bucket *a, const attn_bucket *b);

/* Parses a wisdom file into w. 0; or -1 with the reason in err (the file
 * as a whole is then to be ignored: damaged, truncated, an old schema this
 * attnbench does not read). A missing file is not an error for the caller
 * to report: -2. -3: the file was not read, or is not this attnbench's to
 * judge (it cannot be opened or read, it is not a regular file, or a newer
 * attnbench wrote it): to be ignored too, but never set aside or replaced. */
int attn_wisdom_read(const char *path, attn_wisdom *w, char *err, size_t err_len);
int attn_wisdom_parse(FILE *f, attn_wisdom *w, char *err, size_t err_len);
/* Writes w in the file format (the caller makes the write atomic). */
int attn_wisdom_write(FILE *f, const attn_wisdom *w);

/* Adds or replaces (same machine, bucket and math of its kernel) a
 * record; registers the machine key. -1 when full. A bucket holds at most
 * one record per math: the fp32 one serves "auto", and "auto-bf16" takes
 * the faster of the two (a bf16 record exists only where a bf16 row won). */
int attn_wisdom_put(attn_wisdom *w, const attn_wisdom_record *r, const char *machine_key);
/* The record in r's slot (its machine, bucket and math of its kernel), or NULL. */
const attn_wisdom_record *attn_wisdom_find_slot(const attn_wisdom *w,
                                                const attn_wisdom_record *r);
/* 1 when w holds, in r's slot, the record of a more thorough search than
 * r's (levels patient > measure > estimate): a merge or a publish keeps it
 * (`--level estimate` times nothing, and wrote over measured choices). */
int attn_wisdom_more_thorough_held(const attn_wisdom *w, const attn_wisdom_record *r);
/* The record of r's machine and bucket whose kernel's math differs, or NULL. */
const attn_wisdom_record *attn_wisdom_find_other_math(const attn_wisdom *w,
                                                      const attn_wisdom_record *r);
/* This machine's record for bucket b, or NULL. */
const attn_wisdom_record *attn_wisdom_find(const attn_wisdom *w, uint64_t machine,
                                           const attn_bucket *b);

/* The wisdom path: $ATTN_WISDOM, else $XDG_CACHE_HOME/attnbench/wisdom,
 * else $HOME/.cache/attnbench/wisdom. 0, or -1 when none can be formed. */
int attn_wisdom_default_path(char *buf, size_t len);

/* For the harness (`attnbench info`, run's JSON): what loading the wisdom
 * found for this context, and which kernel ran the context's last call and
 * why ("wisdom", "features", "named", "ATTN_KERNEL"); NULL before a call. */
const char *attn_ctx_wisdom_status(const attn_ctx *ctx);
const char *attn_ctx_last_choice(const attn_ctx *ctx, const char **source);

#endif /* ATTN_WISDOM_H */
