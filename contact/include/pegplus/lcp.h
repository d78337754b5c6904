/*
 * pegplus/lcp.h — the linear complementarity problem and Lemke's method.
 *
 *   LCP(M, q): find z in R^n with  z >= 0,  w = M z + q >= 0,  z^T w = 0.
 *
 * Storage: M is dense, n x n, COLUMN-MAJOR with leading dimension n (M[i + j*n] = M_ij),
 * the LAPACK convention. q, z, w and covering vectors are length-n arrays.
 *
 * Solver: Lemke's complementary pivoting (Cottle–Pang–Stone Algorithm 4.4.1, the method
 * Stewart & Trinkle 1996 §4 use) with lexicographic degeneracy resolution (CPS §4.9), so
 * degenerate problems do not cycle. Lemke processes every LCP whose matrix is
 * copositive-plus, and the copositive Stewart–Trinkle friction LCP (ST96 §3.2, CPS Theorem
 * 4.4.12); for other matrices ray termination may mean either "no solution" or "Lemke
 * cannot find it". The pivoting is the revised form (an explicit basis inverse, recomputed
 * by LU when it drifts) and every basic solution, entering column and tied row is refined
 * with residuals in compensated (double-double) arithmetic, so the pivot decisions are
 * those of exact arithmetic on the given data while the basis condition number stays below
 * about 1/u = 1e16; the friction LCPs of contact piles reach 1e10 and, now and then, more.
 * Refinement runs where a pivot decision is close (a tie, a degenerate row, a pivot near the
 * threshold, ratios within the error bounds of x and y) and every few pivots; elsewhere the
 * decision is certain without it (lemke.c, "Refinement on demand").
 * When that path fails, a rescue runs Lemke again in double-double arithmetic (~32 digits;
 * n <= 160, at most 2 n + 10 pivots). lemke.c, "Accuracy", has the measurements.
 *
 * Bounded cost. Every solve runs under a pivot budget and a time budget (pp_lcp_options:
 * max_total_pivots, max_seconds, and an optional pp_lcp_budget shared by the solves of one
 * time step). When either runs out, pivoting stops (status PP_LCP_BUDGET_EXHAUSTED) and
 * pp_lcp_solve returns the answer of a bounded iterative fallback instead (status
 * PP_LCP_APPROXIMATE, result->fallback = 1, its residual in the result), see
 * pp_lcp_solve_fallback. The clock is hard: past the deadline no attempt, basis solve or
 * retry starts, a factorisation starts only if its predicted time ends by the deadline, and
 * the fallback is held to the clock left plus a small allowance (lcp.c, "The hard clock").
 *
 * Every solve reports a residual computed independently of the pivoting, from the
 * original M, q and the returned z: the natural-map residual
 *     r(z) = || min(z, w) ||_inf,   w = M z + q,
 * which is zero exactly at solutions, and its row-wise relative form
 *     rel(z) = max_i |min(z_i, w_i)| / s_i,   s_i = |q_i| + (sum_j |M_ij|) ||z||_inf
 * (s_i bounds |w_i| and the rounding in it; 0/0 counts as 0): the normwise backward error
 * of each row. Scaling row by row, rather than by ||M|| ||z|| overall, keeps a row with
 * small data from hiding behind a large one. A result is PP_LCP_SOLVED only when
 *     rel(z) <= residual_tol,
 * or, when the fallback solved M + eps I instead, rel(z) against the ORIGINAL M, q is
 * <= max(residual_tol, regularised_tol) and the shift is negligible,
 * eps ||z||_inf <= regularised_tol ||q||_inf (an infeasible LCP is not "solved" by a z that
 * grows like 1/eps). In both cases also r(z) <= 1e-4 ||q||_inf: rel(z) divides by ||z||, so
 * a basis with an enormous solution (||z|| = 3e16 .. 4e33 met in PEG time-stepping LCPs)
 * passes rel(z) at any residual. The fallback's answer is kept only with r(z) <=
 * regularised_tol ||q||_inf (solved or approximate after every exact attempt failed) or
 * r(z) <= ||q||_inf (budget exhausted: no worse than z = 0), and the fallback returns only
 * iterates of the latter kind, so an exhausted budget's answer is always applied.
 *
 * Memory: a workspace sized once for n_max (about 4 n_max^2 doubles + 32 KiB); no solve
 * allocates.
 * Time: O(n^2) per pivot plus O(n^3) per refactorisation. Ownership: every array is
 * the caller's; the solver reads M and q and writes only z, basis and the result.
 * Two error channels (base.h): bad arguments return PP_ERR_NULL_ARGUMENT /
 * PP_ERR_INVALID_ARGUMENT (nothing written); a solve that ran returns PP_OK when solved and
 * PP_ERR_SOLVER otherwise, with the reason in pp_lcp_result.status and z set to zero,
 * except for PP_LCP_APPROXIMATE, where z is the fallback's answer (not a solution to
 * residual_tol; result->residual and relative_residual say how far it is).
 * z never holds NaN or Inf on return.
 */
#ifndef PEGPLUS_LCP_H
#define PEGPLUS_LCP_H

#include "pegplus/base.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Outcome of a solve. 0 is "solved" (pp_step_stats.lcp_status relies on it). */
typedef enum pp_lcp_status {
    PP_LCP_SOLVED = 0,          /* z is a solution: r(z) within tolerance */
    PP_LCP_RAY_TERMINATION = 1, /* the entering column has no positive entry: secondary ray */
    PP_LCP_PIVOT_CAP = 2,       /* max_pivots reached */
    PP_LCP_NUMERICAL = 3,       /* tiny pivot, non-finite tableau, or a final residual too big */
    PP_LCP_APPROXIMATE = 4,     /* not solved exactly: z is the fallback's best answer (finite,
                                   z >= 0), its residual in the result; PP_ERR_SOLVER */
    PP_LCP_BUDGET_EXHAUSTED = 5 /* the pivot or time budget ran out and no fallback ran
                                   (options.fallback = 0, or pp_lcp_solve_lemke); z = 0 */
} pp_lcp_status;

/* A short constant English name ("solved", "ray termination", ...). */
const char *pp_lcp_status_string(pp_lcp_status status);

/* How the minimum-ratio test breaks ties between blocking rows. */
typedef enum pp_lcp_tie_break {
    PP_LCP_LEXICOGRAPHIC = 0,   /* CPS §4.9: compare rows of [q_bar, B^-1] / pivot column */
    PP_LCP_FIRST_INDEX = 1      /* smallest row index; may cycle — kept only to show why */
} pp_lcp_tie_break;

/*
 * A budget shared by several solves (e.g. every LCP of one time step): pass the same
 * pp_lcp_budget to each through pp_lcp_options.budget. Each solve stops pivoting at the
 * deadline or when `pivots` reaches 0, and charges its pivots to it. Plain data: the caller
 * owns it and may reset it at any time. Not thread-safe (one budget per thread).
 */
typedef struct pp_lcp_budget {
    double deadline;            /* pp_lcp_clock() time (s) after which no solve pivots;
                                   INFINITY: no deadline */
    long pivots;                /* pivots the sharing solves may still take; < 0: no limit */
    long pivots_used;           /* pivots charged so far (all sharing solves) */
    int exhausted;              /* solves that stopped on this budget so far */
    double fallback_work;       /* work the bounded fallbacks of the sharing solves may still
                                   do (pp_lcp_solve_fallback's estimated multiply-adds; each
                                   call is also held to its own bound), charged by each;
                                   < 0: no shared limit. pp_lcp_budget_start sets
                                   PP_LCP_FALLBACK_STEP_WORK */
    double work;                /* work the sharing solves may still do, in pivot units:
                                   a Lemke pivot on an LCP of n unknowns counts
                                   PP_LCP_PIVOT_WORK(n), an interior-point iteration of the
                                   sticking solve (lcp_sticking.c) on n unknowns
                                   PP_LCP_INTERIOR_WORK of them; each solve's pivots and
                                   each interior round's iterations are held to what is
                                   left (a round left none is not run); < 0: no limit
                                   (pp_lcp_budget_start). Counts, not the clock: the same
                                   problem gets the same work on any machine */
    double work_used;           /* work charged so far (all sharing solves, also where
                                   `work` is unlimited) */
} pp_lcp_budget;

/* The work of one Lemke pivot on an LCP of n unknowns in pp_lcp_budget.work's units: (n +
 * 100)^2, the weight of plugin/src/relinearize.c's work bound (a dense pivot's update is
 * O(n^2); the sparse path's, measured on the crash demo's impact, 0.3 ms at 1 800 unknowns
 * and 1-4 ms at 6 700). */
#define PP_LCP_PIVOT_WORK(n) (((double)(n) + 100.0) * ((double)(n) + 100.0))
/* An interior-point iteration (a KLU factorisation of the Newton matrix and two solves) on n
 * unknowns, in pivots on n unknowns: measured on the crash demo's impact (docs/performance.md
 * "An iterate's work bounded by the first solve's"), 7.9 ms an iteration on 5 556 unknowns
 * against 0.33 ms a pivot on screening's rounds of ~1 800, i.e. 2.7 (n + 100)^2 a pivot's
 * units; rounded up. */
#define PP_LCP_INTERIOR_WORK 3.0

/* A monotonic clock in seconds (CLOCK_MONOTONIC): the time base of deadlines. */
double pp_lcp_clock(void);

/* The bound on the total work of one call of the bounded fallback, and on the fallbacks of
 * the solves sharing one budget (a time step's), in estimated multiply-adds
 * (pp_lcp_solve_fallback, "Cost"). */
#define PP_LCP_FALLBACK_WORK 1e9
#define PP_LCP_FALLBACK_STEP_WORK 2e9

/* A budget of `seconds` from now (<= 0: no deadline) and `pivots` pivots (< 0: no limit),
 * its fallbacks' work PP_LCP_FALLBACK_STEP_WORK. */
pp_lcp_budget pp_lcp_budget_start(double seconds, long pivots);

typedef struct pp_lcp_options {
    int max_pivots;             /* <= 0: 50 n + 100 */
    double pivot_tol;           /* a pivot entry must exceed pivot_tol * ||column||_inf; 1e-11 */
    double tie_tol;             /* relative tolerance under which two ratios tie; 1e-12.
                                   z0 <= tie_tol ||q||_inf counts as z0 = 0 (solved) when
                                   the basic point passes residual_tol */
    double residual_tol;        /* acceptance: rel(z) <= residual_tol; 1e-9 */
    double regularised_tol;     /* acceptance of a regularised (fallback) solve; 1e-6 */
    const double *covering;     /* covering vector d (n entries, all > 0); NULL = all ones */
    pp_lcp_tie_break tie_break; /* default PP_LCP_LEXICOGRAPHIC */
    int warm_start;             /* nonzero: try the complementary basis passed in `basis` */
    /* Bounds on one solve (all attempts: warm start, Lemke, rescue, regularised retries). */
    int max_total_pivots;       /* pivots over all attempts of one solve; <= 0: twice the
                                   per-attempt cap (max_pivots, or 50 n + 100): two full
                                   Lemke paths, where a solvable problem takes one */
    double max_seconds;         /* wall-clock seconds one solve may pivot (pp_lcp_clock);
                                   <= 0: no limit; default 10 s. The plain attempt gets half,
                                   each regularised retry an equal part of the rest (a long
                                   plain path leaves time for the retries). The largest
                                   solves seen take 0.5 s (924-unknown PEG column from w
                                   basic); hard ones took 45-85 s before this bound */
    pp_lcp_budget *budget;      /* shared budget (see above), or NULL (default) */
    int fallback;               /* nonzero (default): pp_lcp_solve answers with the fallback
                                   when the budget runs out, and when every exact attempt
                                   failed but the fallback reaches rel(z) <= regularised_tol */
    int fallback_iterations;    /* sweeps of the fallback; <= 0: 200 (see
                                   pp_lcp_solve_fallback: O(n^2) each) */
    double fallback_work;       /* bound on one fallback call's total work, estimated
                                   multiply-adds (pp_lcp_solve_fallback, "Cost"); <= 0:
                                   PP_LCP_FALLBACK_WORK */
    const double *fallback_start; /* n values: a candidate start of the bounded fallback
                                   (another method's approximate answer), kept as the warm
                                   basis solution is (pp_lcp_solve_fallback, 1.); NULL
                                   (default): none */
    const int *contact_block;   /* n entries, or NULL (default): the contact blocks of ST96's
                                   LCP (pegplus/mlcp.h, peg.h): for a contact's normal p, its
                                   friction unknowns beta_1..k and sigma, the index of that
                                   contact's p (p's own entry: itself); -1 for every other
                                   unknown (PEG's slacks, rolling, joint rows). A frictional
                                   block's sigma is its highest index, its betas the others in
                                   increasing direction order; each p before its block's
                                   other unknowns (an entry outside -1..n-1, after its own
                                   index, or naming an unknown that is not its own p:
                                   PP_ERR_INVALID_ARGUMENT). Given, a warm basis whose answer
                                   is infeasible beyond rounding is repaired contact by contact
                                   before it is accepted (lcp_warm_repair.c) */
    const int *set_slack;       /* n entries, or NULL (default): PEG's I/X sets (peg.h, Eqs
                                   39-40) for the same repair, with contact_block: for each
                                   slack c of a set, the index of the set's p (a p of
                                   contact_block, before the slack); -1 for every other
                                   unknown. A set's slacks in the order of its secondaries
                                   (E_I1 = tril(ones)), consecutive, the sets' runs in the
                                   order of their p's; a slack is in no contact block (else,
                                   or without contact_block: PP_ERR_INVALID_ARGUMENT). Given,
                                   the repair leaves the slacks as the warm basis has them,
                                   and its rules for islands with I/X sets apply
                                   (lcp_warm_repair.c) */
    double first_rung;          /* > 0: the eps of M + eps I tried first, before the plain
                                   attempt, on a large LCP (sparse basis) without set_slack:
                                   the rung an earlier LCP of the same island needed
                                   (peg_screen.c hands a round's on to the next; lcp.c "The
                                   rung handed on"). Failing, the plain attempt and the
                                   ladder follow without that rung. 0 (default): none */
} pp_lcp_options;

/* The defaults above (warm_start on: it is used only when a basis is passed). */
pp_lcp_options pp_lcp_options_default(void);

typedef struct pp_lcp_result {
    pp_lcp_status status;
    int pivots;                 /* Lemke pivots, over all attempts (0: warm start or q >= 0) */
    int refactorisations;       /* LU recomputations of the basis inverse, all attempts */
    int warm_started;           /* 1: accepted from the given basis without pivoting */
    int warm_lemke;             /* 1: solved by Lemke pivoting from the given basis (when
                                   that basis was not a solution itself; at most n pivots,
                                   then Lemke from w basic) */
    int extended;               /* 1: solved by the double-double rescue (Lemke from w basic
                                   in ~32 digits), after the double-precision path failed */
    int attempts;               /* solves run: 1 + regularised retries (pp_lcp_solve) */
    double epsilon;             /* eps of the accepted M + eps I; 0 = unregularised */
    double residual;            /* r(z) = ||min(z, Mz + q)||_inf from the ORIGINAL M, q */
    double relative_residual;   /* rel(z) (see the top); SOLVED needs it <= the tolerance */
    double scale;               /* max_i s_i */
    double min_z;               /* min_i z_i */
    double min_w;               /* min_i w_i, w = M z + q (original M, q) */
    double complementarity;     /* max_i |z_i w_i| */
    int fallback;               /* 1: z is the iterative fallback's answer (status SOLVED
                                   when it reached residual_tol, else APPROXIMATE) */
    int fallback_iterations;    /* fallback sweeps run (0: no fallback) */
    double fallback_work;       /* the fallback's work, estimated multiply-adds (at most its
                                   bound, pp_lcp_solve_fallback "Cost"); 0: no fallback */
    int fallback_cut;           /* 1: the fallback's work bound ended it before its sweeps
                                   and Newton steps were done (z: its best iterate so far) */
    int budget_exhausted;       /* 1: pivoting stopped on max_total_pivots, max_seconds or
                                   the shared budget */
    double seconds;             /* wall-clock time of the solve (pp_lcp_clock) */
    int factor_work_exceeded;   /* Lemke paths of this solve ended (as at their pivot cap)
                                   because one factorisation of their sparse basis (n >= 161)
                                   would have exceeded the work bound, 5e8 estimated flops
                                   both by AMD's fill and by nb * nnz of the block */
} pp_lcp_result;

/* ---- Workspace ---------------------------------------------------------------------- */

typedef struct pp_lcp_workspace pp_lcp_workspace;

/* Bytes a workspace for problems up to n_max unknowns needs (0 if n_max < 1 or too big). */
size_t pp_lcp_workspace_size(int n_max);

/* Allocate a workspace for n <= n_max. PP_ERR_INVALID_ARGUMENT if n_max < 1,
 * PP_ERR_NO_MEMORY if the allocation fails (*out = NULL). */
pp_status pp_lcp_workspace_create(int n_max, pp_lcp_workspace **out);

/* Lay a workspace out in a caller's buffer of at least pp_lcp_workspace_size(n_max) bytes,
 * aligned for double (malloc'ed memory or an arena block). The caller keeps ownership;
 * do not call pp_lcp_workspace_destroy on it. */
pp_status pp_lcp_workspace_init(void *buffer, size_t bytes, int n_max, pp_lcp_workspace **out);

/* Frees a workspace made by pp_lcp_workspace_create. NULL is a no-op. */
void pp_lcp_workspace_destroy(pp_lcp_workspace *workspace);

/* The n_max the workspace was sized for. */
int pp_lcp_workspace_capacity(const pp_lcp_workspace *workspace);

/* ---- Solvers ------------------------------------------------------------------------ */

/*
 * One Lemke solve of LCP(M, q), n <= capacity of `workspace`.
 *  - q >= 0: z = 0 with no pivot.
 *  - basis (optional, n bytes; basis[i] = 1 when z_i is basic, i.e. may be nonzero, 0 when
 *    w_i is): on entry, with options->warm_start, the complementary basis to try first
 *    (solve M_BB z_B = -q_B by LU, accept if z_B >= 0, w >= 0 and r(z) within tolerance);
 *    if it is not a solution, Lemke starts from it (covering vector d = B e, so that z0
 *    restores feasibility in one pivot) for at most n pivots before starting from w basic;
 *    on exit, the final complementary basis, for the next call. All zeros on failure.
 *  - options NULL = pp_lcp_options_default().
 *  - the budget (max_total_pivots, max_seconds, options->budget) stops the pivoting with
 *    PP_LCP_BUDGET_EXHAUSTED; this function never runs the fallback (pp_lcp_solve does).
 * Returns PP_OK (result->status == PP_LCP_SOLVED) or PP_ERR_SOLVER (z = 0); argument errors
 * as described at the top. `result` is always filled when the arguments were valid; its
 * residual fields always describe the z returned (on failure z = 0, residual ||min(0,q)||).
 */
pp_status pp_lcp_solve_lemke(pp_lcp_workspace *workspace, int n, const double *M,
                             const double *q, const pp_lcp_options *options,
                             unsigned char *basis, double *z, pp_lcp_result *result);

/* First regularisation and its cap (PEG authors' LCPdynamics.m, docs/references.md), and the
 * factor between retries: 1e-16, 1e-14, ..., 1e-6, six retries (the authors double eps, 34
 * retries; each can cost a full Lemke path, which made hard problems take tens of seconds). */
#define PP_LCP_EPS_FIRST 1e-16
#define PP_LCP_EPS_MAX 1e-6
#define PP_LCP_EPS_FACTOR 100.0

/*
 * pp_lcp_solve_lemke with the documented fallbacks (docs/references.md): when the plain solve
 * fails, retry from scratch with M + eps I for eps = 1e-16, 1e-14, ..., 1e-6
 * (PP_LCP_EPS_FACTOR). The first accepted attempt wins; result->epsilon says which eps
 * (0 = none) and result->residual is still measured against the ORIGINAL M. All attempts
 * share the solve's budget (max_total_pivots, max_seconds, options.budget).
 * Then, with options.fallback (default on):
 *  - when the budget ran out, z is pp_lcp_solve_fallback's answer (warm-started from the
 *    given basis): status PP_LCP_APPROXIMATE (or SOLVED if it reached residual_tol),
 *    result->fallback = 1, result->budget_exhausted = 1;
 *  - when every attempt failed otherwise (ray, numerical), the fallback's answer is kept
 *    only if rel(z) <= regularised_tol (PP_LCP_APPROXIMATE), else as below.
 * Otherwise z = 0, basis = all w, result->status is the first (unregularised) failure (or
 * PP_LCP_BUDGET_EXHAUSTED) and a warning goes to the log. Returns PP_OK (SOLVED) or
 * PP_ERR_SOLVER (everything else, including APPROXIMATE: z is then usable, not exact).
 */
pp_status pp_lcp_solve(pp_lcp_workspace *workspace, int n, const double *M, const double *q,
                       const pp_lcp_options *options, unsigned char *basis, double *z,
                       pp_lcp_result *result);

/*
 * The bounded fallback: an iterative method for a general LCP (M not symmetric, diagonal
 * entries may be 0, as in the sigma rows of the Stewart–Trinkle friction LCP).
 *  Every stage keeps the best iterate by r(z) (on a tie by rel(z)) among the usable ones,
 *  r(z) <= ||q||_inf (the answer pp_lcp_solve keeps when the budget ran out, no worse than
 *  z = 0; z = 0 itself is usable): rel(z) alone does not bound r(z), and an iterate best by
 *  rel(z) (a large z along a direction where M z is small: rel(z) divides by ||z||_inf) could
 *  be refused and leave the island with no impulse, or be applied with r(z) near ||q||_inf,
 *  where an iterate of lesser residual had been reached.
 *  1. Start from the best of z = 0, when `basis` is given and
 *     options->warm_start is set the clamped solution of its complementary basis, and
 *     options->fallback_start clamped to z >= 0, each only if usable (the last two charged a
 *     pass over M each for their w).
 *  2. Projected Gauss–Seidel with a diagonal shift: z_i <- max(0, z_i - w_i / D_i),
 *     D_i = max(M_ii, 0.1 max_j |M_ij|) (a proximal step where M_ii is small or 0), at most
 *     options->fallback_iterations sweeps (<= 0: 200) of O(n^2), keeping the best iterate,
 *     stopping early at an answer: rel(z) <= residual_tol and r(z) <= regularised_tol
 *     ||q||_inf.
 *  3. At most 8 Newton steps on the minimum map min(z, w) = 0 (primal-dual active set: the
 *     basis {i : z_i > w_i} of the best iterate, solved like a warm start), each kept only
 *     if it is usable and lowers r(z).
 * Cost: bounded by work, not by the clock (so the answer does not depend on the machine):
 * at most min(fallback_iterations, 2e8 / n^2) sweeps of O(n^2), and the warm-basis solve and
 * Newton steps by dense LU below the sparse threshold (161 unknowns), by sparse LU (KLU, which
 * allocates) from there on, each factorisation held to 5e8 flops as KLU's analysis estimates
 * them and as nb * nnz(M_BB) does (the charge below). And the whole call is bounded: each
 * stage is charged before it runs, in estimated multiply-adds (a pass over M or a sweep: M's
 * entries, n^2 dense or its nonzeros by columns; a basis solve with nb basic z:
 * nb * nnz(M_BB), nb^3 for a dense LU), and runs only if the
 * charge fits in the bound left: options->fallback_work (<= 0: PP_LCP_FALLBACK_WORK = 1e9)
 * and, when options->budget is given, its fallback_work (charged by every call sharing it:
 * PP_LCP_FALLBACK_STEP_WORK = 2e9 for a budget from pp_lcp_budget_start). A warm basis solve
 * that does not fit is skipped; the first sweep or Newton step that does not fit ends the call
 * with the best iterate so far (result->fallback_cut = 1 in both cases); three
 * passes over M (the row sums, w before the Newton steps, the final residual) are charged
 * always. result->fallback_work is the charge, <= max(bound, 3 passes). A dense call below
 * 161 unknowns charges at most ~5e7, so the bound does not change it; on the 4 000 - 10 000
 * unknowns of ODE's crash demo at the impact it keeps the sweeps and one or two Newton steps
 * (a charge of 1e9 ran 0.3 - 2 s there; eight steps had taken up to 21 s a call).
 * z: the best iterate (finite, >= 0; z = 0 when nothing better was found); basis (optional):
 * {i : z_i > 0}. result: residual fields of z, fallback = 1, fallback_iterations, status
 * PP_LCP_SOLVED when rel(z) <= residual_tol (returns PP_OK), else PP_LCP_APPROXIMATE
 * (returns PP_ERR_SOLVER). Argument errors as for pp_lcp_solve.
 */
pp_status pp_lcp_solve_fallback(pp_lcp_workspace *workspace, int n, const double *M,
                                const double *q, const pp_lcp_options *options,
                                unsigned char *basis, double *z, pp_lcp_result *result);

/*
 * The independent check: fills residual, relative_residual, scale, min_z, min_w and
 * complementarity of `result` from M, q, z alone (status and counters untouched).
 * w_out (optional) gets w = M z + q. No workspace needed.
 */
void pp_lcp_evaluate(int n, const double *M, const double *q, const double *z, double *w_out,
                     pp_lcp_result *result);

/* ---- Instances on disk (regression tests from failing solves) --------------------- */

/*
 * Text format, one token stream, '#' starts a comment line:
 *   pp_lcp 1
 *   n <n>
 *   M            followed by n rows of n numbers (row i: M_i0 ... M_i,n-1)
 *   q            followed by n numbers
 *   z            (optional) followed by n numbers: a known solution
 * Numbers are written with %.17g so a load reproduces the bits.
 *
 * Collecting instances: with the environment variable PP_LCP_DUMP_ALL set to an existing
 * directory, every pp_lcp_solve and pp_lcp_solve_lemke call with n >= 2 saves its M and q
 * there as lcp_<pid>_<counter>_n<n>.lcp before solving (read once per process; a failed
 * write turns it off; not thread-safe). A diagnostic: it costs a file per solve.
 */
typedef struct pp_lcp_instance {
    int n;
    double *M;                  /* column-major n x n (owned) */
    double *q;                  /* n (owned) */
    double *z;                  /* n known solution, or NULL (owned) */
} pp_lcp_instance;

/* Write LCP(M, q) (and z if non-NULL) to `path`; `comment` (optional, one line) is kept as
 * a '#' line. PP_ERR_INVALID_ARGUMENT if the file cannot be written. */
pp_status pp_lcp_instance_save(const char *path, int n, const double *M, const double *q,
                               const double *z, const char *comment);

/* Read an instance; on success the arrays are owned by *out (pp_lcp_instance_free).
 * PP_ERR_INVALID_ARGUMENT on an unreadable or malformed file (message logged). */
pp_status pp_lcp_instance_load(const char *path, pp_lcp_instance *out);

void pp_lcp_instance_free(pp_lcp_instance *instance);

#ifdef __cplusplus
}
#endif
#endif /* PEGPLUS_LCP_H */
