/*
 * lcp_internal.h — private to the LCP solver's files (contact/src/lcp*.c, lemke.c):
 *   lcp.c           workspace, options, the independent residual, the public solves;
 *   lemke.c         Lemke's complementary pivoting (ratio tests, the path);
 *   lcp_basis.c     the basis: compensated residuals, dense LU, the explicit inverse and its
 *                   refinement, refactorisation and pivot updates, complementary basis solves;
 *   lcp_sparse.c    the basis of large LCPs: sparse LU (KLU) and an eta file instead of
 *                   the explicit inverse;
 *   lcp_extended.c  the double-double rescue;
 *   lcp_fallback.c  the bounded iterative fallback;
 *   lcp_instance.c  instance files.
 * Not installed; nothing here is API.
 */
#ifndef PP_LCP_INTERNAL_H
#define PP_LCP_INTERNAL_H

#include "pegplus/lcp.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define PP_LCP_N_MAX_LIMIT (1 << 20)

/* Refinement: at most this many corrections of x or y per pivot, and of a tied row. A
 * fresh inverse of a basis with condition number 1e11 gains about five digits per step. */
#define REFINE_STEPS 6
/* Recompute B^-1 when one refinement step gains less than this factor (two digits)... */
#define REFACTOR_GAIN 1e-2
/* ... and it has been updated by at least this many pivots since it was computed. */
#define REFACTOR_MIN_UPDATES 8
/* A correction below this multiple of u ||v||_inf leaves v at working accuracy. */
#define REFINE_SETTLED (4.0 * DBL_EPSILON)
/* One correction of at most this relative size is enough (see refine). */
#define REFINE_ONE_STEP 1e-8
/* Lemke's z within this part of residual_tol is not polished by a basis solve. */
#define POLISH_SKIP 1e-3
/* Tied rows of B^-1 are refined when the last entering column drifted more than this. */
#define LEX_REFINE_DRIFT 1e-10
/* Relative error assumed for rows of an inverse updated with unrefined columns (ratio_test). */
#define LEX_ROW_ERROR 1e-6
/* The double-double rescue runs on problems up to this size, for at most 2 n + 10 pivots:
 * it costs ~50 n^2 flops a pivot (40 ms a pivot at n = 900; the pile's islands are <= 140). */
#define RESCUE_MAX_N 160
/* Corrections that stop shrinking are at the floor of the compensated residual, about
 * cond(B) (n u)^2 ||v||: accepted while below this part of ||v||_inf (the pile's worst
 * bases, condition numbers near 1e16, settle at 1e-12). */
#define REFINE_FLOOR 1e-9

/* LCPs of at least this many unknowns keep their basis as a sparse LU with an eta file
 * (lcp_sparse.c) instead of an explicit inverse, and solve large basic sets by sparse LU;
 * the workspace's square arrays are sized below it. Smaller problems take the dense path.
 * Measured on the cold Lemke solves of ODE's boxstack demo under the standard model (the
 * instances of pegplus-benchmark --scene boxstack --steps 430, PP_LCP_DUMP_ALL, timed by
 * lcp_timing, the same pivots to within ties): the sparse basis is faster from n = 120 on,
 * 1.3-1.7x at n = 120-170, 1.6-2.5x at 200-340, 2x at 430 (its cost follows the nonzeros of
 * M, which couple contacts only through shared bodies; the explicit inverse costs n^2 a
 * pivot whatever the sparsity). It was 1500. It starts just above RESCUE_MAX_N, so the
 * double-double rescue (dense, n <= RESCUE_MAX_N) keeps its whole range. */
#define PP_LCP_SPARSE_MIN_N (RESCUE_MAX_N + 1)
/* Pivots after which the sparse basis is refactorised (the eta file's length). */
#define PP_LCP_SPARSE_ETA_MAX 64

/* The work bound of one factorisation of a Lemke path's sparse basis (lcp_sparse.c,
 * pp_lcp_sparse_factor), in the estimated flops of its LU: with lnz + unz the fill KLU's
 * analysis (AMD) predicts for the m x m block A, about (lnz + unz)^2 / m (a left-looking LU's
 * work is the sum over its columns of the column's count times the rows it updates). A path
 * refactorises every PP_LCP_SPARSE_ETA_MAX pivots and more often when the refinement asks,
 * so one factorisation above the bound (5e8 flops, 0.2 - 0.5 s) means a path of minutes: the
 * path ends there instead, as at its pivot cap (PP_LCP_PIVOT_CAP, counted in
 * pp_lcp_result.factor_work_exceeded), before the factorisation runs. Measured for scale:
 * heap50's first LCP (n = 1 962, up to ~900 basic z) factorises blocks of at most ~2e6.
 * Every other factorisation of a large LCP's basis is held to the same bound: the warm-start
 * and polish basis solves and the fallback's Newton steps (pp_lcp_sparse_solve_basis,
 * pp_lcp_csc_solve_basis), where a refused factorisation counts as a basis that does not
 * solve, and load sharing's (pp_lcp_lu_sparse_factor).
 * Two estimates are held to it, and a factorisation runs only when both are within it: AMD's
 * above, and the charge m * nnz(A) that the bounded fallback charges a basis solve
 * (lcp_fallback.c). AMD's runs low where partial pivoting fills more than it predicts: on the
 * crash demo's impact KLU counted 2.5 - 12.6x AMD's estimate (1.3 - 5.0e9 flops, up to 5 s, for
 * blocks AMD put at 3.2 - 4.4e8), and such a factorisation, not interrupted by the clock,
 * could run seconds past a path's deadline; KLU counted 0.25 - 2.2x the charge there, so a
 * factorisation that runs is at most ~1.1e9 flops (0.1 - 0.4 s measured for charges of
 * 4 - 5.6e8 on the 2-core test machine). Paths whose blocks are far below it are not
 * changed: heap20's 40 steps and the crash demo's steps 0 - 14 take the same pivots. */
#define PP_LCP_FACTOR_WORK 5e8
/* The bound in force (PP_LCP_FACTOR_WORK unless a test set another): sets it to `flops`
 * when flops > 0 and returns the previous one. Not for use while a solve runs. */
double pp_lcp_factor_work_bound(double flops);

/* A large LCP's matrix by compressed columns (CSC), as the PEG step assembles an island of
 * PP_LCP_SPARSE_MIN_N unknowns or more (peg_mlcp.c): the rows of column j are
 * row_index[col_start[j] .. col_start[j + 1] - 1], strictly increasing, with values[] at the
 * same places; every diagonal entry is present (0 if it is 0), so that the pattern also
 * serves M + eps I. Entries outside the pattern are 0. The solve of such an LCP
 * (pp_lcp_solve_csc, lcp_csc.c) never forms an n x n array. */
typedef struct pp_lcp_csc {
    int n;
    const int *col_start;  /* n + 1 */
    const int *row_index;  /* col_start[n] */
    const double *values;  /* col_start[n] */
} pp_lcp_csc;

/* The bounds of one solve (pp_lcp_options: max_total_pivots, max_seconds, budget), set by
 * the public solves and consumed by every pivot (pp_lcp_take_pivot). */
typedef struct pp_lcp_limits {
    long pivots_left;     /* this solve's pivots left (the smaller of its own and the budget's) */
    double deadline;      /* pp_lcp_clock() seconds; INFINITY: none */
    double attempt_deadline; /* the running attempt's share of the time (<= deadline) */
    long attempt_pivots;  /* pivots the running attempt has taken */
    long attempt_path;    /* pivots the running attempt may take past its share while the
                             solve's deadline holds (lcp.c start_attempt); 0: none */
    double factor_deadline; /* the factorisations of the running stage must end by it
                             (pp_lcp_work_fits): the deadline during Lemke's attempts and
                             their basis solves; INFINITY in the fallback (held to its work
                             bound, which lcp.c sets from the clock left) and outside a solve */
    int countdown;        /* pivots until the next clock read */
    int clock_every;      /* PP_LCP_CLOCK_EVERY, or 1 on a large LCP (sparse basis) */
    int hit;              /* 1 once a bound of the solve stopped the pivoting */
    int attempt_hit;      /* 1 once the attempt's share ran out (the next attempt may run) */
    int stopped;          /* 1 once any bound stopped an attempt of this solve */
    int factor_work_hits; /* Lemke paths ended by PP_LCP_FACTOR_WORK in this solve */
    double pivot_work;    /* a pivot's charge to pp_lcp_budget.work: PP_LCP_PIVOT_WORK(n) */
} pp_lcp_limits;

/* The clock time (pp_lcp_clock) a solve starting at `start` must stop by: the smaller of its
 * own max_seconds and the shared budget's deadline; INFINITY: neither. */
double pp_lcp_deadline(const pp_lcp_options *o, double start);

/* Read the clock every this many pivots (a pivot of n = 6 costs ~0.1 us, a clock read ~20 ns).
 * A large LCP's path (sparse basis, n >= PP_LCP_SPARSE_MIN_N) reads it at every pivot: its
 * pivots cost 10 us - 50 ms (eight of them took 0.2 s past the deadline on the convex ball's
 * screening rounds of 18 544 unknowns), a clock read ~20 ns. */
#define PP_LCP_CLOCK_EVERY 8

/* ---- The hard clock (lcp.c, "The hard clock") ----------------------------------------
 * Work that the clock cannot interrupt (a factorisation, the fallback's passes and sweeps)
 * is admitted by its predicted time: its estimated work, the charge the work bounds already
 * use (PP_LCP_FACTOR_WORK's max of AMD's fill^2 / m and m nnz(block); the fallback's
 * multiply-adds, lcp_fallback.c), over PP_LCP_WORK_RATE. Measured on the 2-core test machine
 * at load 2-5 (wall clock): KLU factorisations of charges 4 - 5.6e8 in 0.1 - 0.4 s (1 - 5.6e9 a
 * second), the fallback's calls on the crash demo's impact 1.1 - 2.9e9 a second
 * (docs/performance.md "A hard clock"), so the rate below is 2 - 10x slower than anything
 * measured: a factorisation admitted with its predicted end at the deadline ends before it. */
#define PP_LCP_WORK_RATE 5e8
/* Past the deadline, the fallbacks of the solves sharing one budget may together still do
 * this much work (1 s at PP_LCP_WORK_RATE, 0.2 - 0.45 s measured): half of what the step's
 * fallbacks had (PP_LCP_FALLBACK_STEP_WORK), enough for the crash demo's impact answers to
 * stay main's (2.5e8 was not: docs/performance.md "A hard clock"); a call whose first sweep
 * does not fit answers z = 0 from q alone without reading M (lcp.c "The hard clock"). The
 * work of screening's rounds that gave up is given back (peg_screen.c budget_restore). */
#define PP_LCP_PAST_CLOCK_WORK 5e8

/* Past the budget's deadline: its fallbacks share at most PP_LCP_PAST_CLOCK_WORK from now
 * (its fallback_work held to it; lcp.c). NULL, or before the deadline: nothing. */
void pp_lcp_budget_past_clock(pp_lcp_budget *budget);

/* 1 when work of `work` estimated multiply-adds, started now, ends by `deadline` at
 * PP_LCP_WORK_RATE (always, without a deadline). */
static inline int pp_lcp_work_fits(double work, double deadline)
{
    return deadline == INFINITY || pp_lcp_clock() + work / PP_LCP_WORK_RATE <= deadline;
}

/* The steps of `unit` work each that the budget's work (pegplus/lcp.h pp_lcp_budget.work)
 * has left, held to `cap`; no budget, or no work limit: `cap`. */
static inline long pp_lcp_budget_work_cap(const pp_lcp_budget *budget, double unit, long cap)
{
    if (!budget || budget->work < 0.0) return cap;
    const double left = floor(budget->work / unit);
    return left < (double)cap ? (long)left : cap;
}

/* `work` charged to the budget: counted in work_used, taken from a limited work (not below 0). */
static inline void pp_lcp_budget_charge_work(pp_lcp_budget *budget, double work)
{
    if (!budget) return;
    budget->work_used += work;
    if (budget->work >= 0.0) budget->work = work < budget->work ? budget->work - work : 0.0;
}

/* Bases seen along one Lemke path, by hash (lemke.c, "Cycling"): direct-mapped. */
#define PP_LCP_SEEN_BASES 4096

/* The phases of a solve do not overlap, so some buffers serve several (noted). */
struct pp_lcp_workspace {
    uint64_t seen[PP_LCP_SEEN_BASES]; /* hashes of the bases of the running path */
    int n_max;
    int owned;
    pp_lcp_limits limits; /* of the solve running */
    int square_n;         /* inverse, lu and tie_rows hold square_n^2 doubles:
                             min(n_max, PP_LCP_SPARSE_MIN_N - 1) */
    double *inverse;      /* n x n, row-major: B^-1 of the current Lemke basis (the rescue:
                             its high parts) */
    double *lu;           /* n x n: LU factors (refactorisation, basis solves) */
    double *tie_rows;     /* n x n: rows of B^-1 of tied rows, row-major; also the kept
                             inverse of a refactorisation, M_BB of a basis solve, and the
                             low parts of B^-1 in the rescue */
    double *regularised;  /* n x n: M + eps I */
    double *x;            /* n: basic solution B^-1 q */
    double *y;            /* n: entering column B^-1 a */
    double *residual;     /* n: b - B v (the rescue: low parts of x) */
    double *sum_hi;       /* n: compensated accumulators, high and low parts (the rescue: */
    double *sum_lo;       /* n:   low parts of y) */
    double *column;       /* n: a column of [I | -M | -d]; refactorisation scratch */
    double *rhs;          /* n: basis solves; the kept x of a refactorisation */
    double *z_try;        /* n: candidate z */
    double *w_try;        /* n: its w */
    double *covering;     /* n: d */
    double *start_covering; /* n: d = B e of a Lemke run from a given basis */
    int *pivots;          /* n: row interchanges of an LU */
    int *row_var;         /* n: basic variable of each row (0..n-1 w, n..2n-1 z, 2n z0) */
    int *ties;            /* n: rows tied in the ratio test; refactorisation: positions D */
    int *index;           /* n: basic z indices (basis solves); tie bookkeeping;
                             refactorisation: equations R */
    unsigned char *basis; /* n: internal basis flags */
    unsigned char *start_basis; /* n: a given start basis as repaired (lemke.c, "Repair") */
    unsigned char *repair_basis; /* n: the warm basis repaired block by block
                                   (lcp_warm_repair.c) */
    double *repair_z;     /* n: its basis solution before the clamp */
    double shift;         /* n >= PP_LCP_SPARSE_MIN_N: the regularised retries pivot on
                             M + shift I, added on the fly (no copy of M); else 0 */
    int cycled;           /* 1 when the last Lemke path ended on its cycling detector
                             (lemke.c, "Cycling"; pp_lcp_solve's ladder reads it) */
    int false_end;        /* 1 when the last Lemke path of an attempt ended with z0 leaving
                             on a basis whose answer, polished, misses by more than
                             regularised_tol (lcp.c, "The ladder after a false end") */
    int pattern_shared;   /* during a public solve: the paths share M's pattern (below) */
    int *pattern_start;   /* n >= PP_LCP_SPARSE_MIN_N, once a path built it: M's nonzero */
    int *pattern_rows;    /*   pattern by columns, with the diagonal (lcp_sparse.c) */
    double *pattern_values; /* with pattern_start: M's entries there (read only while
                             pattern_start is set: pp_lcp_workspace_init leaves it alone) */
    double *row_sums;     /* n: sum_j |M_ij| of the dense M of the last pp_lcp_solve */
    const double *row_sums_of; /* that M (its address), or NULL: row_sums hold nothing (set
                             by pp_lcp_solve after its argument check, cleared at the start
                             of every public solve; pp_lcp_row_sums_kept) */
    int row_sums_n;       /* its order */
    int *m_row_start;     /* during a public solve, once a path built it: M's pattern by rows */
    int *m_col_index;     /*   (CSR) with its entries, for the rows of B^-1 (lcp_sparse.c */
    double *m_row_values; /*   rows_of_m), shared by the solve's paths; else NULL */
};

/* max of two doubles where neither is NaN (callers check finiteness): fmax is a call into
 * libm at -O2 without -ffinite-math-only, and it showed at 6% of a solve in perf. */
static inline double max_d(double a, double b)
{
    return a > b ? a : b;
}


/* ---- Compensated arithmetic ------------------------------------------------------------ */

/* a + b = s + e exactly (Knuth's TwoSum; no branch on magnitudes). */
static inline void two_sum(double a, double b, double *s, double *e)
{
    double x = a + b, bv = x - a;
    *e = (a - (x - bv)) + (b - bv);
    *s = x;
}

/* a b = p + e exactly: one fused multiply-add where the hardware has it, else Dekker's
 * product with Veltkamp's split (each half has at most 26 bits, so the partial products
 * are exact). */
static inline void two_product(double a, double b, double *p, double *e)
{
    double x = a * b;
#ifdef FP_FAST_FMA
    *e = fma(a, b, -x);
#else
    const double split = 134217729.0; /* 2^27 + 1 */
    double ca = split * a, a_hi = ca - (ca - a), a_lo = a - a_hi;
    double cb = split * b, b_hi = cb - (cb - b), b_lo = b - b_hi;
    *e = ((a_hi * b_hi - x) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo;
#endif
    *p = x;
}

/* The same error-free product by the hardware's fused multiply-add. Builds for the x86-64
 * baseline (Debian's) have no FP_FAST_FMA, and Dekker's product above is ~17 flops where the
 * FMA is 2: the compensated residuals that refine every quantity the pivot rule reads (over
 * half of a sparse Lemke solve's time on boxstack's LCPs, perf) run in a copy compiled for
 * FMA when the CPU has it (PP_LCP_FMA_KERNELS, chosen once at run time). Both products are
 * exact (a b = p + e with no rounding while a b neither overflows nor underflows), so the two
 * copies give the same bits. */
#if !defined(FP_FAST_FMA) && (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define PP_LCP_FMA_DISPATCH 1
#define PP_LCP_FMA_TARGET __attribute__((target("fma")))
int pp_lcp_cpu_fma(void); /* 1 when the CPU has FMA (lcp_basis.c) */
#else
#define PP_LCP_FMA_TARGET
#endif

/* Four-lane vectors (GCC's vector extensions) for the dense kernels of lcp_basis.c: lane i
 * of an operation does exactly the scalar operation on element i (ISO C11 mode compiles with
 * -ffp-contract=off, and the AVX2 copy is not built for FMA: no fused multiply-add, no
 * reassociation), so a kernel run four elements at a time gives the same bits as its scalar
 * loop. The baseline x86-64 build lowers an operation on four lanes to two SSE2
 * instructions; a copy compiled for AVX2 (PP_LCP_AVX2_TARGET) is chosen at run time where the
 * CPU has it (pp_lcp_cpu_avx2). */
typedef double pp_lcp_v4 __attribute__((vector_size(4 * sizeof(double))));
/* The same at any address of a double (unaligned loads and stores through it). */
typedef double pp_lcp_v4u __attribute__((vector_size(4 * sizeof(double)), aligned(sizeof(double)),
                                         may_alias));
#define PP_LCP_V4(p) (*(pp_lcp_v4u *)(p))
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__AVX2__)
#define PP_LCP_AVX2_DISPATCH 1
#define PP_LCP_AVX2_TARGET __attribute__((target("avx2")))
int pp_lcp_cpu_avx2(void); /* 1 when the CPU (and OS) run AVX2 (lcp_basis.c) */
#else
#define PP_LCP_AVX2_TARGET
#endif

/* *p grown to hold at least `need` elements of `size` bytes (capacity *cap, doubled from 64,
 * contents kept); 0 when out of memory (*p and *cap unchanged). lcp_sparse.c. */
int pp_lcp_grow(void **p, size_t *cap, size_t need, size_t size);

static inline void accumulate_with(double *hi, double *lo, double a, double b, const int fused)
{
    double p, ep, s, es;
    if (fused) {
        p = a * b;
        ep = __builtin_fma(a, b, -p);
    } else {
        two_product(a, b, &p, &ep);
    }
    two_sum(*hi, p, &s, &es);
    *hi = s;
    *lo += es + ep;
}

#if defined(PP_LCP_FMA_DISPATCH) && defined(PP_LCP_AVX2_DISPATCH)
#include <immintrin.h>
/* accumulate_with's fused operations on four lanes: (h, l) += a x lane by lane (av = a in
 * every lane), and a lane whose x is 0 keeps its (h, l) as the scalar loops skip it (a blend),
 * so the bits are the scalar loop's. The residual kernels of lcp_basis.c (contiguous rows)
 * and lcp_sparse.c (a column's rows, loaded lane by lane) call it. */
__attribute__((target("avx2,fma"))) static inline void pp_lcp_accumulate4(__m256d av, __m256d x,
                                                                          __m256d *h, __m256d *l)
{
    const __m256d keep = _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_NEQ_UQ); /* x != 0.0 */
    const __m256d p = _mm256_mul_pd(av, x);
    const __m256d ep = _mm256_fmsub_pd(av, x, p); /* fma(a, x, -p) */
    const __m256d s = _mm256_add_pd(*h, p), bv = _mm256_sub_pd(s, *h);
    const __m256d es =
        _mm256_add_pd(_mm256_sub_pd(*h, _mm256_sub_pd(s, bv)), _mm256_sub_pd(p, bv));
    const __m256d nl = _mm256_add_pd(*l, _mm256_add_pd(es, ep));
    *h = _mm256_blendv_pd(*h, s, keep);
    *l = _mm256_blendv_pd(*l, nl, keep);
}
#endif

/* (hi, lo) += a b, keeping the rounding errors of the product and of the sum in lo
 * (Ogita–Rump–Oishi Dot2): the final hi + lo is as accurate as a sum formed in twice the
 * working precision and then rounded. */
static inline void accumulate(double *hi, double *lo, double a, double b)
{
    double p, ep, s, es;
    two_product(a, b, &p, &ep);
    two_sum(*hi, p, &s, &es);
    *hi = s;
    *lo += es + ep;
}

/* ---- Lemke's pivoting, revised form --------------------------------------------------- */

typedef struct lemke_run {
    pp_lcp_workspace *ws;
    int n;
    const double *M;            /* the matrix pivoted on (M + eps I in a regularised attempt) */
    const double *q;
    const double *d;
    const pp_lcp_options *o;
    int refactorisations;
    int updates;                /* pivots applied to B^-1 since it was last computed */
    int saved_updates;          /* updates of the inverse kept by save_inverse */
    double drift;               /* first refinement correction of the last entering column */
    double x_error;             /* estimated bound on ||x - B^-1 q||_inf (see "Refinement on
                                   demand") */
    double last_correction;     /* refine: size of the correction it stopped at, or, when
                                   settled, of the rounding level of v */
    int since_refine;           /* pivots since y and x were last refined */
    double growth;              /* product of ||y|| / |y_r| over those pivots */
    int plain_updates;          /* pivots with an unrefined y since B^-1 was computed */
    int saved_plain_updates;
    int y_ready;                /* entering variable whose unrefined y (and column) are in the
                                   workspace for the current inverse; -1: none */
    struct pp_lcp_sparse *sparse; /* n >= PP_LCP_SPARSE_MIN_N: the basis as sparse LU + etas
                                   (lcp_sparse.c); NULL: the explicit inverse */
    const pp_lcp_csc *csc;      /* the matrix by columns (M then NULL: no dense array), or NULL */
} lemke_run;

/* Row i of the explicit basis inverse. */
static inline double *pp_lcp_inverse_row(const lemke_run *run, int i)
{
    return &run->ws->inverse[(size_t)i * run->n];
}


/* ---- Functions shared between the files (definitions carry the comments) -------------- */

/* Charge one pivot to the running solve's limits: 0 (and limits.hit = 1) when the pivot
 * or time budget is spent. */
static inline int pp_lcp_take_pivot(pp_lcp_workspace *ws)
{
    pp_lcp_limits *l = &ws->limits;
    if (l->hit || l->attempt_hit) return 0;
    if (l->pivots_left <= 0) {
        l->hit = 1;
        l->stopped = 1;
        return 0;
    }
    --l->pivots_left;
    ++l->attempt_pivots;
    if (--l->countdown <= 0) {
        l->countdown = l->clock_every;
        double now = pp_lcp_clock();
        if (now > l->deadline) {
            l->hit = 1;
            l->stopped = 1;
            return 0;
        }
        if (now > l->attempt_deadline && l->attempt_pivots > l->attempt_path) {
            l->attempt_hit = 1;
            l->stopped = 1;
            return 0;
        }
    }
    return 1;
}

/* 1 (and the running solve's limits marked hit) when the clock has passed its deadline: for
 * work inside a pivot that the pivots' own clock reads do not see (lcp.c "The hard clock"). */
static inline int pp_lcp_clock_out(pp_lcp_workspace *ws)
{
    pp_lcp_limits *l = &ws->limits;
    if (!(l->deadline < INFINITY) || pp_lcp_clock() <= l->deadline) return 0;
    l->hit = 1;
    l->stopped = 1;
    return 1;
}

/* The bounded fallback (lcp_fallback.c) on validated arguments; fills z and result's
 * residual fields, fallback and fallback_iterations. Returns the status. */
/* 1 when the fallback's answer has r(z) <= tolerance ||q||_inf (lcp_fallback.c). */
int pp_lcp_fallback_bounded(int n, const double *q, double tolerance, const pp_lcp_result *result);
/* Past the clock, the nonzeros of M above which the fallback could not move from z = 0
 * (HUGE_VAL: M is needed), and that answer formed from q alone (lcp_fallback.c). */
double pp_lcp_fallback_idle_entries(const pp_lcp_options *o);
void pp_lcp_fallback_zero(int n, const double *q, double entries, const pp_lcp_options *o,
                          double *z, pp_lcp_result *result);
pp_lcp_status pp_lcp_fallback_unformed(int n, const double *q, double entries,
                                       const pp_lcp_options *o, double *z,
                                       pp_lcp_result *result);
pp_lcp_status pp_lcp_fallback(pp_lcp_workspace *ws, int n, const double *M, const double *q,
                              const pp_lcp_options *o, const unsigned char *warm, double *z,
                              pp_lcp_result *result);

double pp_lcp_inf_norm(int n, const double *x);
/* The warm basis repaired by contact blocks (lcp_warm_repair.c): one round of moves on basis
 * for the basis solution z (before its clamp) and w = M max(z, 0) + q, with the blocks of
 * pp_lcp_options.contact_block; basic z_i < -z_floor leave, else nonbasic w_i < -w_floor
 * enter, each with its contact's block. Returns the number of violated unknowns (0: none,
 * basis unchanged). With slack (pp_lcp_options.set_slack; NULL: none) the slacks are left to
 * the clamp and the rules of islands with I/X sets apply (lcp_warm_repair.c, "Islands with
 * PEG's I/X sets"). */
#define PP_LCP_BLOCK_BETA_MAX 64
int pp_lcp_warm_moves(int n, const int *blocks, const int *slack, const double *z,
                      const double *w, unsigned char *basis, double z_floor, double w_floor);
void pp_lcp_residual(int n, const double *M, const double *q, const double *z, double *w,
                     pp_lcp_result *result);
int pp_lcp_all_finite(size_t count, const double *x);
int pp_lcp_accept(int n, const double *M, const double *q, double eps, const pp_lcp_options *o,
                  double *z, double *w, pp_lcp_result *result);
/* The row sums of |M| (lcp.c "The independent residual"): sums_i = sum_j |M_ij|, added in
 * the order pp_lcp_residual adds them (j increasing), so the same bits. */
void pp_lcp_row_sums(int n, const double *M, double *sums);
/* pp_lcp_residual and pp_lcp_accept given those row sums (NULL: formed as before): w from
 * the columns with z_j != 0 alone, the same w, measures and acceptance bit for bit. */
void pp_lcp_residual_sums(int n, const double *M, const double *row_sums, const double *q,
                          const double *z, double *w, pp_lcp_result *result);
int pp_lcp_accept_sums(int n, const double *M, const double *row_sums, const double *q,
                       double eps, const pp_lcp_options *o, double *z, double *w,
                       pp_lcp_result *result);
/* The row sums pp_lcp_solve formed for M (its argument check) when the workspace's last
 * public solve was pp_lcp_solve on this M of order n, else NULL. Valid while the caller has
 * not changed M since (load sharing's residuals of the island just solved). */
const double *pp_lcp_row_sums_kept(const pp_lcp_workspace *ws, int n, const double *M);

/* The measures of pp_lcp_residual (lcp.c, where they are defined), gathered one row at a
 * time in row order by the dense and the column residual alike. */
typedef struct pp_lcp_measures {
    double residual, relative, scale, min_z, min_w, comp;
} pp_lcp_measures;

static inline void pp_lcp_measures_start(pp_lcp_measures *m)
{
    m->residual = m->relative = m->scale = 0.0;
    m->min_z = m->min_w = INFINITY;
    m->comp = 0.0;
}

/* Row i: w_i = (M z + q)_i, row_sum = sum_j |M_ij|. rel(z)'s scale s_i is read as at least
 * DBL_MIN: below it w_i is computed on the subnormal grid (2^-1074), whose steps are no longer
 * a relative rounding of s_i, and one step against DBL_MIN is u = 2^-53 relative, the
 * rounding of a normal w_i (check_lemke test_subnormal_data_solved: a joint stop's row at
 * q = -9.9e-322, where Lemke's exact z left one grid step, read rel 2.5e-3 against s_i).
 * Every s_i >= DBL_MIN keeps its bits. */
static inline void pp_lcp_measure_row(pp_lcp_measures *m, double q_i, double row_sum,
                                      double z_norm, double z_i, double w_i)
{
    double si = fabs(q_i) + row_sum * z_norm;
    double ri = fabs(fmin(z_i, w_i));
    if (isnan(w_i) || isnan(z_i)) ri = NAN;
    double rel = si >= DBL_MIN ? ri / si : ri / DBL_MIN; /* 0/0 counts as 0 */
    if (!(ri <= m->residual)) m->residual = ri; /* NaN propagates */
    if (!(rel <= m->relative)) m->relative = rel;
    if (si > m->scale) m->scale = si;
    if (z_i < m->min_z) m->min_z = z_i;
    if (w_i < m->min_w) m->min_w = w_i;
    double c = fabs(z_i * w_i);
    if (c > m->comp) m->comp = c;
}

void pp_lcp_measures_store(const pp_lcp_measures *m, int n, pp_lcp_result *result);
/* pp_lcp_accept's two halves: z finite (then clamped to z >= 0), and the bounds on the
 * measures pp_lcp_residual (or pp_lcp_csc_residual) left in result. */
int pp_lcp_clamp_finite(int n, double *z);
int pp_lcp_accept_measured(int n, const double *q, double eps, const pp_lcp_options *o,
                           const double *z, const pp_lcp_result *result);
void pp_lcp_subtract_columns(int n, double *restrict hi, double *restrict lo,
                             const double *const *c, const double *a, int count);
/* Vector kernels (lcp_basis.c; the scalar loops' bits): y += a x; the same and s += |x|;
 * s += |x| */
void pp_lcp_vec_axpy(int n, double *restrict y, const double *restrict x, double a);
void pp_lcp_vec_axpy_abs(int n, double *restrict y, double *restrict s,
                         const double *restrict x, double a);
void pp_lcp_vec_abs_add(int n, double *restrict s, const double *restrict x);
/* 1 when every x_i is finite (the sum of the x_i 0, four lanes, is 0, else NaN) */
int pp_lcp_vec_finite(size_t count, const double *x);
double pp_lcp_vec_inf_norm(int n, const double *x); /* pp_lcp_inf_norm's value, 4 lanes */
int pp_lcp_lu_factor(int n, double *A, int *piv);
void pp_lcp_lu_solve(int n, const double *LU, const int *piv, double *b);
int pp_lcp_solve_basis(pp_lcp_workspace *ws, int n, const double *M, const double *q,
                       const unsigned char *basis, double *z);
void pp_lcp_apply_inverse(const lemke_run *run, const double *b, double *v);
double pp_lcp_refine(lemke_run *run, const double *b, double *v, int *settled);
int pp_lcp_refactorise(lemke_run *run);
double pp_lcp_form_entering_column(lemke_run *run, int v, int *settled);
int pp_lcp_entering_column(lemke_run *run, int v);
void pp_lcp_refined_inverse_row(const lemke_run *run, int i, double *u);
void pp_lcp_load_column(const lemke_run *run, int v, double *a);
int pp_lcp_pivot(lemke_run *run, int r);
void pp_lcp_inverse_row_copy(const lemke_run *run, int i, double *row);

typedef struct pp_lcp_sparse pp_lcp_sparse;
void pp_lcp_pattern_begin(pp_lcp_workspace *ws);
void pp_lcp_pattern_end(pp_lcp_workspace *ws);
pp_lcp_sparse *pp_lcp_sparse_create(pp_lcp_workspace *ws, int n, const double *M,
                                    const pp_lcp_csc *csc, const double *d);
void pp_lcp_sparse_load_column(const pp_lcp_sparse *s, int v, double *a);
int pp_lcp_csc_solve_basis(pp_lcp_workspace *ws, const pp_lcp_csc *A, const double *q,
                           const unsigned char *basis, double *z);
double pp_lcp_sparse_relative_residual(pp_lcp_sparse *s, const double *q, const double *z);
void pp_lcp_sparse_destroy(pp_lcp_sparse *s);
void pp_lcp_sparse_subtract(const pp_lcp_sparse *s, int v, double a, double *hi, double *lo);
void pp_lcp_sparse_dot(const pp_lcp_sparse *s, int v, const double *u, double *hi, double *lo);
int pp_lcp_sparse_basis_residual(const pp_lcp_sparse *s, const int *row_var, const double *b,
                                 const double *v, double *out);
int pp_lcp_sparse_basis_dots(const pp_lcp_sparse *s, const int *row_var, int i, const double *u,
                             double *r);
int pp_lcp_sparse_factor(pp_lcp_sparse *s, const int *row_var);
/* The sparse basis's vector kernels on (1) or off (0: the scalar loops, the same bits; for
 * tests), on < 0 leaves them; returns the previous setting. Not while a solve runs. */
int pp_lcp_sparse_vector_kernels(int on);
int pp_lcp_sparse_work_exceeded(const pp_lcp_sparse *s);
void pp_lcp_sparse_swap(pp_lcp_sparse *s);
int pp_lcp_sparse_refactor_due(const pp_lcp_sparse *s);
void pp_lcp_sparse_postpone(pp_lcp_sparse *s);
void pp_lcp_sparse_ftran(pp_lcp_sparse *s, const double *b, double *v);
void pp_lcp_sparse_btran(pp_lcp_sparse *s, const double *c, double *u);
int pp_lcp_sparse_pivot(pp_lcp_sparse *s, int r, const double *y);
double *pp_lcp_sparse_rows(pp_lcp_sparse *s, int count);
void pp_lcp_sparse_unit_row(pp_lcp_sparse *s, int i, double *row);
int pp_lcp_sparse_solve_basis(int n, const double *M, double shift, const double *q,
                              const int *index, int nb, double deadline, double *zb, double *r,
                              double *hi, double *lo);
/* One sparse LU (KLU) of an m x m matrix by columns outside a Lemke path (lcp_sparse.c):
 * NULL when singular, out of memory, or refused by the work bound (PP_LCP_FACTOR_WORK:
 * *refused = 1). Solves overwrite b with the solution. */
typedef struct pp_lcp_lu pp_lcp_lu;
pp_lcp_lu *pp_lcp_lu_sparse_factor(int m, const int *Ap, const int *Ai, const double *Ax,
                                   int *refused);
void pp_lcp_lu_sparse_solve(pp_lcp_lu *f, double *b);
double pp_lcp_lu_sparse_entries(const pp_lcp_lu *f);
void pp_lcp_lu_sparse_free(pp_lcp_lu *f);
pp_lcp_status pp_lcp_read_solution(const int *row_var, int n, pp_lcp_status status,
                                   const double *x, const double *x_lo, double *z,
                                   unsigned char *basis);
pp_lcp_status pp_lcp_lemke_pivot(pp_lcp_workspace *ws, int n, const double *Me, const double *q,
                                 const double *d, const unsigned char *start,
                                 const pp_lcp_options *o, int max_pivots, double *z,
                                 unsigned char *basis, int *pivots, int *refactorisations);
pp_lcp_status pp_lcp_lemke_pivot_csc(pp_lcp_workspace *ws, const pp_lcp_csc *A, const double *q,
                                     const double *d, const unsigned char *start,
                                     const pp_lcp_options *o, int max_pivots, double *z,
                                     unsigned char *basis, int *pivots, int *refactorisations);
pp_lcp_status pp_lcp_fallback_csc(pp_lcp_workspace *ws, const pp_lcp_csc *A, const double *q,
                                  const pp_lcp_options *o, const unsigned char *warm, double *z,
                                  pp_lcp_result *result);
void pp_lcp_csc_residual(const pp_lcp_csc *A, const double *q, const double *z, double *w,
                         pp_lcp_result *result);
/* Every accepted answer also has r(z) <= PP_LCP_DATA_RESIDUAL max(||q||_inf, DBL_MIN) (lcp.c,
 * pp_lcp_accept_measured, which says why; DBL_MIN as in pp_lcp_measure_row). */
#define PP_LCP_DATA_RESIDUAL 1e-4
/* lcp_csc.c: A's entries written into the column-major n x n M (its other entries left as
 * they are: the caller zeroes M first). */
void pp_lcp_csc_scatter(const pp_lcp_csc *A, double *M);
int pp_lcp_csc_accept(const pp_lcp_csc *A, const double *q, double eps,
                      const pp_lcp_options *o, double *z, double *w, pp_lcp_result *result);
/* lcp.c: the options' tolerances and covering vector, checked for a solve of n unknowns
 * (the error names `who`). */
pp_status pp_lcp_check_options(const char *who, int n, const pp_lcp_options *o);
/* lcp.c: the order of a full solve (plain attempt, regularised retries, bounded fallback)
 * of LCP(M, q) dense, or by columns A (M NULL), under one set of limits. */
/* lcp.c, "The ladder after a cycle" and "... after a false end": how many rungs of the
 * regularised ladder (from PP_LCP_EPS_FIRST, at most all but the last) a solve skips after its
 * plain attempt, given whether that attempt's last path ended on the cycling detector or on a
 * false end, and its pivots: those with eps <= tie_tol max_i |M_ii| when the LCP is large
 * (A by columns, or n >= PP_LCP_SPARSE_MIN_N) and either cycled with pivots > n or ended
 * falsely without PEG's I/X sets (o->set_slack NULL); else 0. */
int pp_lcp_rungs_skipped(int n, const double *M, const pp_lcp_csc *A, const pp_lcp_options *o,
                         int cycled, int false_end, int pivots);
pp_status pp_lcp_solve_order(pp_lcp_workspace *workspace, int n, const double *M,
                             const pp_lcp_csc *A, const double *q, const pp_lcp_options *o,
                             unsigned char *basis, double *z, pp_lcp_result *result);
/* lcp.c: with PP_LCP_DUMP_ALL set, write LCP(M, q) (dense M, or A by columns when M is
 * NULL) to an instance file in that directory. */
void pp_lcp_dump_instance(int n, const double *M, const pp_lcp_csc *A, const double *q,
                          const char *who);
/* LCP(A, q) with A by columns (n = A->n >= PP_LCP_SPARSE_MIN_N): pp_lcp_solve's order and
 * results (lcp_csc.c). */
pp_status pp_lcp_solve_csc(pp_lcp_workspace *workspace, const pp_lcp_csc *A, const double *q,
                           const pp_lcp_options *options, unsigned char *basis, double *z,
                           pp_lcp_result *result);
pp_lcp_status pp_lcp_lemke_extended(pp_lcp_workspace *ws, int n, const double *M,
                                    const double *q, const double *d, const pp_lcp_options *o,
                                    int max_pivots, double *z, unsigned char *basis, int *pivots);

#endif /* PP_LCP_INTERNAL_H */
