/*
 * gemm.c — the GEMM frame (gemm.h): the cache-blocking loops (mc, kc, nc)
 * and the thread split, for any arch; and the gemm with the weights
 * streamed instead of packed.
 *
 * Every element of C is reduced by one thread in the same order (k blocks in
 * sequence, k within a block in sequence) whatever the thread count, so the
 * results do not depend on it at all.
 */
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "gemm.h"
#include "../split.h"

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

static int round_up(int x, int to)
{
    return (x + to - 1) / to * to;
}

/* ---- Blocking ----------------------------------------------------------------------- */

/* mc and nc in whole register tiles, at least one. */
static int mc_of(const blk_arch *arch, const int *params)
{
    int mc = params[BLK_MC] / arch->mr * arch->mr;
    return mc > 0 ? mc : arch->mr;
}

static int nc_of(const blk_arch *arch, const int *params)
{
    int nc = params[BLK_NC] / arch->nr * arch->nr;
    return nc > 0 ? nc : arch->nr;
}

/* Packed A of one depth block is kept for every column panel: at most this
 * many bytes of it per thread (it lives in L3), so A is packed once per
 * depth block instead of once per column panel (with the encoder's shapes
 * the old order packed each A element 3-10 times: ~6% of the layer's time). */
#define BLK_A_KEEP_BYTES ((size_t)4 << 20)

/* Rows of A packed at once for a range of m rows: all of them, or the
 * largest multiple of mc that keeps within BLK_A_KEEP_BYTES. */
static size_t a_rows_of(const blk_arch *arch, const int *params, size_t m, int kc)
{
    size_t mc = (size_t)mc_of(arch, params);
    size_t row_bytes = (size_t)kc * (size_t)arch->a_bcast * sizeof(float);
    size_t keep = BLK_A_KEEP_BYTES / row_bytes / mc * mc;
    keep = keep > mc ? keep : mc;
    size_t rows = (m + (size_t)arch->mr - 1) / (size_t)arch->mr * (size_t)arch->mr;
    return rows < keep ? rows : keep;
}

size_t blk_pack_floats(const blk_arch *arch, const int *params, size_t m, int n, int k)
{
    int kc = min_int(params[BLK_KC], k), nc = min_int(nc_of(arch, params), round_up(n, arch->nr));
    size_t a = a_rows_of(arch, params, m, kc) * (size_t)arch->a_bcast * (size_t)kc;
    /* B's pack starts 64-byte aligned, so full-vector loads of it never split a line. */
    return (a + 15) / 16 * 16 + (size_t)kc * (size_t)nc;
}

/* 1 when a register tile's MR rows of A, lda floats apart, fall into so few
 * L1 sets that reading them in place would evict each other: an L1 of 64
 * sets of 64-byte lines maps addresses 4 KiB apart to one set, and with 8
 * ways (Zen 4, Intel since Sandy Bridge) more than 4 rows of one set, beside
 * the B micro-panel's lines, thrash. Rows 3072 floats apart (the FFN's
 * second product at F 3072, or any D a multiple of 1024) all share one
 * set: read in place, 1024 × 768 × 3072 ran at 88-96 GFLOP/s on one
 * thread (Zen 4), packed at 103 (oneDNN's matmul: 105). */
#define BLK_L1_SETS 64
#define BLK_L1_ROWS_PER_SET 4
static int a_rows_crowd_l1(size_t lda, int mr)
{
    int rows_in_set[BLK_L1_SETS] = { 0 };
    for (int i = 0; i < mr; i++) {
        size_t line = (size_t)i * lda * sizeof(float) / 64;
        if (++rows_in_set[line % BLK_L1_SETS] > BLK_L1_ROWS_PER_SET)
            return 1;
    }
    return 0;
}

/* A barrier among the threads of one row group of a 2-D split (the
 * team's barrier would hold every group to the slowest one): a count of
 * arrivals and a generation the last to arrive moves on. Waiters spin a
 * while, then yield: a team larger than the cores (the tests run 16
 * threads on 2) must not spin out the thread it waits for. */
typedef struct group_barrier {
    _Alignas(64) int arrived;   /* a line of its own: groups do not share one */
    int generation;
    int members;
} group_barrier;

#if defined(__x86_64__) || defined(__i386__)
#define GEMM_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define GEMM_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define GEMM_CPU_RELAX() ((void)0)
#endif

static void group_barrier_wait(group_barrier *b)
{
    /* Read before arriving: it cannot move on until this thread has. */
    int generation = __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&b->arrived, 1, __ATOMIC_ACQ_REL) == b->members) {
        __atomic_store_n(&b->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&b->generation, generation + 1, __ATOMIC_RELEASE);
        return;
    }
    for (int spins = 0; __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE) == generation; spins++) {
        if (spins < 4096)
            GEMM_CPU_RELAX();
        else
            sched_yield();
    }
}

/* Threads sharing one packed A: those of the column split (the team), or
 * of one row group of a 2-D split (the same rows, their own columns). The
 * nt threads each pack every nt-th register tile of a depth block into
 * apack (the first one's packing space), then use all of it. Each packing
 * its own copy of all of A (packed whole when its rows crowd L1) took 6%
 * of the FFN's second product at 2 threads, sharing it 4%, barriers
 * included 1.5-1.8% faster (1024 × 768 × 3072, 60 calls of each
 * alternating, twice). In a 2-D split the copies multiply: at 16 threads
 * the FFN's second product (1024 × 3072 → 768) is 2 row groups of 8
 * threads, each thread with 3 column panels against its 512 rows, and a
 * private copy is the whole of its group's A for an eighth of its
 * products: alone on one thread, 512 × 3072 → 96 ran at 33.0 GFLOP/s with
 * A packed against 36.3 read in place (Zen 1, AVX2). */
typedef struct a_shared {
    float *apack;
    int t, nt;
    group_barrier *barrier;   /* NULL: the team is the group (its own barrier) */
} a_shared;

#define GEMM_GROUPS_MAX 64

static void a_shared_wait(const a_shared *share)
{
    if (share->barrier) {
        group_barrier_wait(share->barrier);
        return;
    }
#pragma omp barrier
}

/* Loop order: blocks of rows whose packed A is kept (usually all), depth
 * blocks (A packed once), column panels (B packed once per row block: once
 * in all when A is kept whole), mc blocks of the kept A, then the register
 * tiles, B's micro-panel outer (it stays in L1 while A's panels stream).
 * With share, every thread of the team must call it with the same rows (its
 * columns may be none): they wait for each other once A is packed and
 * again before it is packed over. */
static void gemm_range(const blk_arch *arch, const blk_gemm *g, size_t m0, size_t m1, int n0,
                       int n1, const int *params, float *pack, const a_shared *share)
{
    const int kc = params[BLK_KC], nc = nc_of(arch, params);
    const size_t mc = (size_t)mc_of(arch, params);
    const int MR = arch->mr, NR = arch->nr;
    const size_t a_rows = a_rows_of(arch, params, m1 - m0, min_int(kc, g->k));
    size_t a_floats = a_rows * (size_t)arch->a_bcast * (size_t)min_int(kc, g->k);
    float *apack = share ? share->apack : pack, *bpack = pack + (a_floats + 15) / 16 * 16;
    /* A bf16 C is stored by the epilogue kernel, at the last depth block. */
    const int has_epilogue = g->bias || g->act != ATTN_ACT_NONE || g->residual || g->c16;
    /* Rows of whole tiles read in place, unless they crowd L1: only a last
     * short tile is packed. A bf16 hidden is all packed panels already. */
    const int in_place = arch->kernel_unpacked && g->alpha == 1.0f && !g->a16
                      && !a_rows_crowd_l1(g->lda, MR);
    const int a_given = g->a16 != NULL;
    /* This thread packs every nt-th tile (all of them when not shared). */
    const size_t t = share ? (size_t)share->t : 0, nt = share ? (size_t)share->nt : 1;

    for (size_t ia = m0; ia < m1; ia += a_rows) {
        size_t ma = m1 - ia < a_rows ? m1 - ia : a_rows;
        size_t unpacked = in_place ? ma / (size_t)MR * (size_t)MR : a_given ? ma : 0;
        for (int pc = 0; pc < g->k; pc += kc) {
            int kb = min_int(kc, g->k - pc), first = pc == 0, last = pc + kb == g->k;
            for (size_t r = unpacked + t * (size_t)MR; r < ma; r += nt * (size_t)MR)
                arch->pack_a(g, ia + r, (int)(ma - r < (size_t)MR ? ma - r : (size_t)MR), pc, kb,
                             apack + (r - unpacked) * (size_t)kb * arch->a_bcast);
            if (unpacked < ma && share)
                a_shared_wait(share);
            for (int jc = n0; jc < n1; jc += nc) {
                int nb = min_int(nc, n1 - jc);
                const float *bpanels = bpack;
                if (g->b_packed)   /* jc is a multiple of NR: n0 and nc are */
                    bpanels = g->b_packed + (size_t)pc * (size_t)round_up(g->n, NR)
                            + (size_t)jc * (size_t)kb;
                else
                    arch->pack_b(g, jc, nb, pc, kb, bpack);
                for (size_t ic = 0; ic < ma; ic += mc) {
                    int mb = (int)(ma - ic < mc ? ma - ic : mc);
                    for (int jr = 0; jr < nb; jr += NR)
                        for (int ir = 0; ir < mb; ir += MR) {
                            size_t r = ic + (size_t)ir, i = ia + r;
                            int j = jc + jr, mr = min_int(MR, mb - ir), nr = min_int(NR, nb - jr);
                            const float *bp = bpanels + (size_t)jr * kb;
                            if (r < unpacked && !a_given) {
                                arch->kernel_unpacked(kb, g->a + i * g->lda + pc, g->lda, bp, g, i,
                                                      j, nr, first, last && has_epilogue);
                                continue;
                            }
                            /* packed here, or depth block pc of the hidden from row i on */
                            const float *ap =
                                a_given
                                    ? (const float *)(g->a16 + (size_t)pc * g->rows16
                                                      + i * (size_t)kb)
                                    : apack + (r - unpacked) * (size_t)kb * arch->a_bcast;
                            if (last && has_epilogue && arch->kernel_epilogue) {
                                arch->kernel_epilogue(kb, ap, bp, g, i, j, mr, nr, first);
                                continue;
                            }
                            arch->kernel(kb, ap, bp, g->c + i * g->ldc + j, g->ldc, mr, nr, first);
                            if (last && has_epilogue)
                                arch->epilogue(g, i, j, mr, nr);
                        }
                }
            }
            if (unpacked < ma && share)
                a_shared_wait(share);
        }
    }
}

void blk_gemm_range(const blk_arch *arch, const blk_gemm *g, size_t m0, size_t m1, int n0, int n1,
                    const int *params, float *pack)
{
    gemm_range(arch, g, m0, m1, n0, n1, params, pack, NULL);
}

/* ---- The hidden in bf16 --------------------------------------------------------------- */

size_t blk_hidden16_bytes(const blk_arch *arch, const int *params, size_t m, int n)
{
    if (n % 2 != 0 || params[BLK_KC] % 16 != 0)
        return 0;
    size_t bytes = (m + (size_t)arch->mr - 1) / (size_t)arch->mr * (size_t)arch->mr;
    if (!attn_mul_checked(&bytes, (size_t)n, SIZE_MAX / sizeof(uint16_t)))
        return SIZE_MAX;
    return bytes * sizeof(uint16_t);
}

/* ---- Weights packed once ------------------------------------------------------------- */

size_t blk_packed_floats(const blk_arch *arch, const int *params, int n, int k)
{
    (void)params;
    size_t floats = (size_t)round_up(n, arch->nr);
    return attn_mul_checked(&floats, (size_t)k, SIZE_MAX / sizeof(float)) ? floats : SIZE_MAX;
}

void blk_pack_weights(const blk_arch *arch, const int *params, const attn_gemm_problem *p,
                      float *dst, attn_packed_b *out)
{
    const blk_gemm g = blk_gemm_of(p);
    const int kc = params[BLK_KC];
    for (int pc = 0; pc < p->k; pc += kc)
        arch->pack_b(&g, 0, p->n, pc, min_int(kc, p->k - pc),
                     dst + (size_t)pc * (size_t)round_up(p->n, arch->nr));
    *out = (attn_packed_b){ dst, p->n, p->k, kc };
}

/* ---- The primitive ------------------------------------------------------------------- */

size_t blk_gemm_scratch(const blk_arch *arch, size_t m, int n, int k, int n_threads,
                        const int *params)
{
    size_t floats = blk_pack_floats(arch, params, m, n, k), bytes = sizeof(float);
    if (!attn_mul_checked(&bytes, floats, SIZE_MAX) || !attn_mul_checked(&bytes, (size_t)n_threads, SIZE_MAX))
        return SIZE_MAX;
    return bytes;
}

/* ---- The thread split ------------------------------------------------------------ */

/* How n threads share C's register tiles: ways_m groups over the row tiles
 * times ways_n over the column panels (thread t: row group t / ways_n,
 * column group t % ways_n), each a static split (split.h). */
typedef struct gemm_split {
    size_t tiles;                /* MR-row tiles of C */
    int panels;                  /* NR-column panels */
    int ways_m, ways_n;          /* threads ways_m · ways_n and up have no tiles */
    int threads;                 /* the team it was made for */
} gemm_split;

/* The largest share (in tiles) of a ways_m x ways_n split over the mean of
 * nt threads (nt ≥ ways_m · ways_n: the rest idle). */
static double grid_imbalance(size_t tiles, int panels, int ways_m, int ways_n, int nt)
{
    double most_rows = (double)((tiles + (size_t)ways_m - 1) / (size_t)ways_m);
    double most_cols = (double)((panels + ways_n - 1) / ways_n);
    return most_rows * most_cols * nt / ((double)tiles * (double)panels);
}

/* The split param's: columns (1 x nt: every thread packs only its part of
 * B, the larger operand for these shapes, and the team shares packed A),
 * rows (nt x 1), or auto: the 1-D split of before (columns when there are
 * plenty of panels) while it is balanced within 10%; else, of every
 * factoring ways_m · ways_n of nt — or of a count down to 7/8 of nt, the
 * rest of the team idle — the most balanced over all nt (BLIS's "ways"
 * over its loops): on a tie the most threads, the 1-D split, then the
 * fewest row groups. 512 rows in 12-row tiles (43) over 16 threads are 3
 * tiles for some and 2 for others (1.12); 24 panels of 768 columns over 16
 * are 2 or 1 (1.33); 2 x 8 is 22 x 3 of 43 x 24 (1.02). A prime count has
 * no grid: 86 x 48 tiles (512 x 768 in 6 x 16) on 41 threads were 41 x 1
 * (1.43), and are 5 x 8 on 40 of them (1.07); on 79, 1 x 79 (1.65) became
 * 13 x 6 on 78 (1.07). The threads of a row group of a 2-D split share
 * their rows' packed A. */
static gemm_split gemm_split_of(const blk_arch *arch, const int *params, const attn_gemm_problem *p,
                                int nt)
{
    nt = nt > 0 ? nt : 1;
    gemm_split sp = { (p->m + (size_t)arch->mr - 1) / (size_t)arch->mr,
                      (p->n + arch->nr - 1) / arch->nr, 1, nt, nt };
    int split = params[BLK_SPLIT];
    if (split == BLK_SPLIT_AUTO)
        split = sp.panels >= 2 * nt || sp.tiles < (size_t)nt ? BLK_SPLIT_COLUMNS : BLK_SPLIT_ROWS;
    if (split == BLK_SPLIT_ROWS)
        sp.ways_m = nt, sp.ways_n = 1;
    if (params[BLK_SPLIT] != BLK_SPLIT_AUTO || sp.tiles == 0 || sp.panels == 0)
        return sp;
    double best = grid_imbalance(sp.tiles, sp.panels, sp.ways_m, sp.ways_n, nt);
    if (best <= 1.1)
        return sp;
    for (int used = nt; used >= nt - nt / 8; used--)
        for (int wm = 1; wm <= used; wm++) {
            if (used % wm != 0)
                continue;
            double im = grid_imbalance(sp.tiles, sp.panels, wm, used / wm, nt);
            if (im < best - 1e-9)
                best = im, sp.ways_m = wm, sp.ways_n = used / wm;
        }
    return sp;
}

/* Thread t's row tiles [*t0, *t1) and column panels [*c0, *c1). */
static void gemm_split_part(const gemm_split *sp, int t, long *t0, long *t1, long *c0, long *c1)
{
    if (t >= sp->ways_m * sp->ways_n) {   /* idle: a grid of fewer threads balanced better */
        *t0 = *t1 = *c0 = *c1 = 0;
        return;
    }
    attn_split_static((long)sp->tiles, sp->ways_m, t / sp->ways_n, t0, t1);
    attn_split_static(sp->panels, sp->ways_n, t % sp->ways_n, c0, c1);
}

static long gemm_split_share(const void *plan, int t)
{
    long t0, t1, c0, c1;
    gemm_split_part(plan, t, &t0, &t1, &c0, &c1);
    return (t1 - t0) * (c1 - c0);
}

/* ---- LayerNorm in the gemm's region ------------------------------------------------ */

/* The LayerNorm phase of a gemm with g->ln_out offered to a dry run's
 * trace (1: traced, skip the work); 0 when g has none. */
static int ln_traced(const attn_exec *ex, const blk_gemm *g)
{
    if (!g->ln_out)
        return 0;
    attn_trace_next_after(ex);
    return attn_trace_units(ex, (long)g->m, "row", "layernorm %zux%d, in the gemm's region", g->m,
                            g->n);
}

/* The same for g->ln_in's phase, the region's first: the product's phases
 * offered next are recorded as coming after it. */
static int ln_in_traced(const attn_exec *ex, const blk_gemm *g)
{
    if (!g->ln_in)
        return 0;
    int traced = attn_trace_units(ex, (long)g->m, "row", "layernorm %zux%d, in the gemm's region",
                                  g->m, g->k);
    attn_trace_next_after(ex);
    return traced;
}

/* With g->ln_in, before the product: thread t of nt normalizes its static
 * share of the input's rows into the product's A, then waits for the
 * team. Called by every thread of the region. */
static void ln_in_phase(const blk_arch *arch, const blk_gemm *g, int t, int nt)
{
    if (!g->ln_in)
        return;
    attn_layernorm_rows_part(g->m, g->k, g->lda, g->ln_in, g->ln_gamma, g->ln_beta, g->ln_eps,
                             g->ln_a, arch->layernorm_row, t, nt);
#pragma omp barrier
}

/* With g->ln_out, once every thread of the team is past its part of C:
 * thread t of nt normalizes its static share of C's rows. Called by every
 * thread of the region. */
static void ln_phase(const blk_arch *arch, const blk_gemm *g, int t, int nt)
{
    if (!g->ln_out)
        return;
#pragma omp barrier
    attn_layernorm_rows_part(g->m, g->n, g->ldc, g->c, g->ln_gamma, g->ln_beta, g->ln_eps,
                             g->ln_out, arch->layernorm_row, t, nt);
}

/* Threads share C as gemm_split_of says; each element of C is computed by
 * one thread in the same order whatever the split. */
void blk_gemm_threaded(const blk_arch *arch, const attn_exec *ex, const attn_gemm_problem *p)
{
    blk_gemm g = blk_gemm_of(p);
    const int MR = arch->mr, NR = arch->nr;
    if (arch->skinny && p->m <= (size_t)arch->skinny_rows) {
        /* Threads take runs of B's rows (C's columns), four at a time. */
        const long groups = (p->n + 3) / 4;
        int traced = ln_in_traced(ex, &g);
        traced |= attn_trace_units(ex, groups, "4 columns of C", "gemm %zux%dx%d, skinny", p->m,
                                   p->n, p->k);
        if (traced | ln_traced(ex, &g))
            return;
#pragma omp parallel num_threads(ex->n_threads)
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            ln_in_phase(arch, &g, t, nt);
            long g0, g1;
            attn_split_static(groups, nt, t, &g0, &g1);
            int n0 = (int)g0 * 4, n1 = min_int((int)g1 * 4, p->n);
            if (n0 < n1)
                arch->skinny(&g, n0, n1);
            ln_phase(arch, &g, t, nt);
        }
        return;
    }
    const gemm_split sp = gemm_split_of(arch, ex->params, p, ex->n_threads);
    char idle[24] = "";
    if (sp.threads > sp.ways_m * sp.ways_n)
        snprintf(idle, sizeof idle, ", %d idle", sp.threads - sp.ways_m * sp.ways_n);
    int traced = ln_in_traced(ex, &g);
    traced |= attn_trace_region(ex, gemm_split_share, &sp, "register tile of C",
                                   "gemm %zux%dx%d, %dx%d tiles of %dx%d, threads %d rows x %d "
                                   "columns%s", p->m, p->n, p->k, (int)sp.tiles, sp.panels, MR, NR,
                                   sp.ways_m, sp.ways_n, idle);
    if (traced | ln_traced(ex, &g))
        return;
    /* W packed once, when it was cut at this call's kc. */
    if (p->packed && p->packed->kc == ex->params[BLK_KC] && p->packed->n == p->n
        && p->packed->k == p->k)
        g.b_packed = p->packed->data;
    g.kc16 = ex->params[BLK_KC];
    g.rows16 = (p->m + (size_t)MR - 1) / (size_t)MR * (size_t)MR;
    /* Sized for all m rows, what a thread of the column split packs; the
     * slices laid out at the stride the region allows (its bytes over the
     * threads) when that is more: compose.c sizes one region for the
     * largest of a call's products, so thread t packs into the same pages
     * in every product of a call, pages it touched first (on a NUMA
     * machine, its own node's), not into a slice of another thread's. */
    size_t per_thread = blk_pack_floats(arch, ex->params, p->m, p->n, p->k);
    size_t region_stride = ex->scratch_bytes / sizeof(float) / (size_t)ex->n_threads / 16 * 16;
    per_thread = region_stride > per_thread ? region_stride : per_thread;
    /* The row groups of a 2-D split, each sharing its packed A (a_shared),
     * with a barrier of its own. Over GEMM_GROUPS_MAX groups (more than 128
     * threads), each thread packs its own. */
    group_barrier groups[GEMM_GROUPS_MAX];
    const int groups_share = sp.ways_m > 1 && sp.ways_n > 1 && sp.ways_m <= GEMM_GROUPS_MAX;
    for (int i = 0; groups_share && i < sp.ways_m; i++)
        groups[i] = (group_barrier){ .members = sp.ways_n };

#pragma omp parallel num_threads(ex->n_threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        ln_in_phase(arch, &g, t, nt);
        float *pack = (float *)ex->scratch + (size_t)t * per_thread;
        /* A team smaller than asked (OMP_THREAD_LIMIT) splits for its size. */
        const gemm_split mine = nt == sp.threads ? sp : gemm_split_of(arch, ex->params, p, nt);
        long t0, t1, c0, c1;
        gemm_split_part(&mine, t, &t0, &t1, &c0, &c1);
        size_t r0 = (size_t)t0 * (size_t)MR, r1 = (size_t)t1 * (size_t)MR;
        int n0 = (int)c0 * NR, n1 = min_int((int)c1 * NR, p->n);
        r1 = r1 < p->m ? r1 : p->m;
        if (mine.ways_m == 1) {
            const a_shared share = { (float *)ex->scratch, t, nt, NULL };
            /* Every thread, even one without columns: it packs its share of A. */
            gemm_range(arch, &g, 0, p->m, n0, n1, ex->params, pack, nt > 1 ? &share : NULL);
        } else if (groups_share && nt == sp.threads) {
            /* Every thread of a group with rows, even one without columns
             * (an idle thread has none: it is in no group). */
            int group = t / sp.ways_n;
            if (r0 < r1) {
                const a_shared share = { (float *)ex->scratch
                                             + (size_t)(group * sp.ways_n) * per_thread,
                                         t % sp.ways_n, sp.ways_n, &groups[group] };
                gemm_range(arch, &g, r0, r1, n0, n1, ex->params, pack, &share);
            }
        } else if (r0 < r1 && n0 < n1) {
            gemm_range(arch, &g, r0, r1, n0, n1, ex->params, pack, NULL);
        }
        ln_phase(arch, &g, t, nt);
    }
}

/* ---- B streamed ------------------------------------------------------------------------ */

/* blk_gemm_streamed's scratch, in floats: A packed (its rows in NR-row
 * panels, each k × NR), then per thread MR rows of B copied where they
 * cannot be read in place. */
static size_t stream_xt_floats(const blk_arch *arch, size_t m, int k)
{
    size_t panels = (m + (size_t)arch->nr - 1) / (size_t)arch->nr;
    return (panels * (size_t)arch->nr * (size_t)k + 15) / 16 * 16;
}

size_t blk_gemm_streamed_scratch(const blk_arch *arch, size_t m, int k, int n_threads)
{
    size_t floats = (size_t)arch->mr * (size_t)k, bytes = sizeof(float);
    if (!attn_mul_checked(&floats, (size_t)n_threads, SIZE_MAX)
        || !attn_add_checked(&floats, stream_xt_floats(arch, m, k), SIZE_MAX)
        || !attn_mul_checked(&bytes, floats, SIZE_MAX))
        return SIZE_MAX;
    return bytes;
}

/* 1 when rows j0..j0+MR of B are whole rows of one part: row i at
 * blk_b_row(g, j0) + i·ldb. */
static int stream_in_place(const blk_arch *arch, const blk_gemm *g, int j0)
{
    return j0 + arch->mr <= g->n
        && (!g->b_parts || j0 / g->part_n == (j0 + arch->mr - 1) / g->part_n);
}

/* Rows j0..j0+nw of B as the stream kernel reads them: in place, else
 * copied into copy (MR·k floats, rows past nw zero); *ld their stride. */
static const float *stream_rows(const blk_arch *arch, const blk_gemm *g, int j0, int nw,
                                float *copy, size_t *ld)
{
    if (stream_in_place(arch, g, j0)) {
        *ld = g->ldb;
        return blk_b_row(g, j0);
    }
    for (int i = 0; i < arch->mr; i++) {
        float *dst = copy + (size_t)i * (size_t)g->k;
        if (i < nw)
            memcpy(dst, blk_b_row(g, j0 + i), (size_t)g->k * sizeof(float));
        else
            memset(dst, 0, (size_t)g->k * sizeof(float));
    }
    *ld = (size_t)g->k;
    return copy;
}

/* Each thread packs every nt-th panel of A (pack_b: A's rows are what B's
 * [n][k] rows are to the blocked loops), then, once all are packed, takes
 * a run of MR-row blocks of B (C's columns), each against every panel of
 * A over the whole depth: no depth blocks, so no partial sums. Packed A
 * outgrows L2 from a few hundred rows (at k 3072 from 85), but it is read
 * in sequence, and from L3 it kept up with the FMAs: depth blocks of
 * 256-1024 were no faster at 128-512 rows (Zen 4, 1 thread). The
 * weights' rows come from DRAM once, with no prefetching by hand: a
 * block's MR rows are one run of memory (MR·k floats) when in place, and
 * asking for the next block's lines while computing one was slower (by
 * 0-4% at 128 rows, 1 thread). */
void blk_gemm_streamed(const blk_arch *arch, const attn_exec *ex, const attn_gemm_problem *p)
{
    blk_gemm g = blk_gemm_of(p);
    /* A (x, or the LayerNorm of ln_in) as pack_b sees a B of [n][k] rows. */
    const blk_gemm ga = { .m = p->m, .n = (int)p->m, .k = p->k, .b = g.a, .ldb = p->ldx,
                          .b_is_nk = 1, .alpha = 1.0f };
    const int MR = arch->mr, NR = arch->nr, k = p->k;
    const int panels = (int)((p->m + (size_t)NR - 1) / (size_t)NR);
    const int blocks = (p->n + MR - 1) / MR;
    float *xt = (float *)ex->scratch, *copies = xt + stream_xt_floats(arch, p->m, k);
    const size_t panel_floats = (size_t)NR * (size_t)k;
    /* One region in two phases (a barrier between), three with a
     * LayerNorm: all are shown. */
    int traced = ln_in_traced(ex, &g);
    traced |= attn_trace_units(ex, panels, "NR-row panel of A packed",
                                  "gemm %zux%dx%d, streamed: A packed", p->m, p->n, p->k);
    attn_trace_next_after(ex);
    traced |= attn_trace_units(ex, blocks, "MR rows of B against all of A",
                               "gemm %zux%dx%d, streamed", p->m, p->n, p->k);
    if (traced | ln_traced(ex, &g))
        return;

#pragma omp parallel num_threads(ex->n_threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        ln_in_phase(arch, &g, t, nt);
        long lo, hi;
        attn_split_static(panels, nt, t, &lo, &hi);
        for (int c = (int)lo; c < (int)hi; c++) {
            size_t t0 = (size_t)c * (size_t)NR;
            int mt = (int)(p->m - t0 < (size_t)NR ? p->m - t0 : (size_t)NR);
            arch->pack_b(&ga, (int)t0, mt, 0, k, xt + (size_t)c * panel_floats);
        }
#pragma omp barrier
        float *copy = copies + (size_t)t * (size_t)MR * (size_t)k;
        attn_split_static(blocks, nt, t, &lo, &hi);
        for (int b = (int)lo; b < (int)hi; b++) {
            int j0 = b * MR, nw = min_int(MR, p->n - j0);
            size_t ld;
            const float *w = stream_rows(arch, &g, j0, nw, copy, &ld);
            for (int c = 0; c < panels; c++) {
                size_t t0 = (size_t)c * (size_t)NR;
                int mt = (int)(p->m - t0 < (size_t)NR ? p->m - t0 : (size_t)NR);
                arch->kernel_stream(k, w, ld, xt + (size_t)c * panel_floats, &g, t0, mt, j0, nw);
            }
        }
        ln_phase(arch, &g, t, nt);
    }
}
