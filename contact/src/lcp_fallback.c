/*
 * The bounded fallback of pp_lcp_solve (pegplus/lcp.h, pp_lcp_solve_fallback): an answer
 * of known quality, in bounded time, when Lemke's method could not finish within its budget.
 *
 * The LCPs come from the time stepper: M is not symmetric and may have zero diagonal
 * entries (the sigma rows of the Stewart–Trinkle friction LCP, w_sigma = mu p_n - sum_j
 * beta_j, have M_ss = 0), so neither plain projected Gauss–Seidel (which divides by M_ii) nor
 * a method that needs M + M^T PSD applies as is. Two stages, each keeping the best iterate by
 * the residual r(z) (lcp.h; on a tie by rel(z)) among the usable ones, r(z) <= ||q||_inf (the
 * answer pp_lcp_solve keeps when the budget ran out; "Which iterate" below), so the answer
 * never gets worse than the start, is always one pp_lcp_solve can apply, and never holds NaN:
 *
 * 1. Projected Gauss–Seidel with a diagonal shift (a proximal point step): sweep i = 1..n,
 *        z_i <- max(0, z_i - w_i / D_i),   D_i = max(M_ii, DIAG_SHIFT max_j |M_ij|),
 *    and update w = M z + q by the column M_:i times the change (column-major: contiguous),
 *    O(n^2) a sweep. Where M_ii dominates its row this is PGS; where M_ii is small or 0 the
 *    step is that of PGS on M + (D_i - M_ii) I around the current z, i.e. one step of the
 *    proximal point iteration z^{k+1} = SOL(M + S, q - S z^k) — it converges for monotone M
 *    and is at least bounded (z >= 0, every step finite) otherwise. w is recomputed from
 *    scratch every W_REFRESH sweeps against drift. rel(z) needs only z, w and the row sums
 *    of |M| (precomputed), so it is checked every CHECK_EVERY sweeps at O(n).
 *
 * 2. Newton on the minimum map min(z, w) = 0 (semismooth Newton, which for this map is the
 *    primal-dual active-set method): with A = {i : z_i > w_i} from the best iterate, the
 *    Newton step lands on the solution of the complementary basis A (M_AA z_A = -q_A,
 *    z_else = 0), computed as a warm start is (refined LU). When PGS has found the active
 *    set, one step gives the exact solution; a step that does not lower r(z) is dropped,
 *    which is the globalisation (a monotone line search would need a merit function whose
 *    descent the nonmonotone problems here do not promise). At most NEWTON_STEPS.
 *
 * The total work of one call is bounded (PP_LCP_FALLBACK_WORK, below), not only each stage's:
 * every stage is charged its work before it runs, in estimated multiply-adds, and runs only if
 * the charge fits in what is left of the bound (the smaller of the call's own bound,
 * options->fallback_work, and what the solves sharing options->budget have left of theirs,
 * pp_lcp_budget.fallback_work): the row sums and every form of w = M z + q one entry of M
 * each (n^2 dense, the nonzeros by columns); a sweep the same; a basis solve (the warm start,
 * a Newton step) nb * nnz(M_BB), the nb basic columns times the entries of M_BB (nb^3 for the
 * dense LU below PP_LCP_SPARSE_MIN_N, which does not skip zeros). A warm start whose basis
 * solve does not fit is not tried (the sweeps start from z = 0); the first sweep or Newton step
 * that does not fit ends the call, which keeps the best iterate so far as every stage does: the
 * answer is never worse than the start, and its residual is reported as always.
 * result->fallback_work holds the charge (<= the bound, or the three passes charged always,
 * below, if more) and result->fallback_cut says that the bound stopped a stage.
 *
 * The start is the best of z = 0, the warm basis's clamped solution and the caller's
 * candidate (options->fallback_start, clamped): a better answer another method found (the
 * sticking solve's interior rounds at a sliding onset reach rel(z) 1e-7 ... 5e-6 where the
 * sweeps end at 1e-4, docs/performance.md "The sticking solve's best round as the fallback's
 * start") is never lost, and the stages below may still improve on it.
 *
 * Memory: the workspace (no allocation): x = z iterate, y = w, start_covering = the best z,
 * column = D, covering = the row sums, z_try / w_try = Newton candidates, basis = A.
 *
 * M is given dense (column-major) or by columns (pp_lcp_csc, a large island of the PEG step):
 * every loop over a column then runs over its nonzeros only, with the same sums in the same
 * order (a zero entry adds nothing), so a sweep costs the nonzeros of M rather than n^2 and
 * the work bound below counts them.
 */
#include "lcp_fallback_bodies.h"

#include <string.h>

/* stage 1's constants, shared with its body-space form (lcp_fallback_bodies.c) */
#define DIAG_SHIFT PP_FALLBACK_DIAG_SHIFT
#define DEFAULT_SWEEPS PP_FALLBACK_SWEEPS
#define CHECK_EVERY PP_FALLBACK_CHECK_EVERY
#define W_REFRESH PP_FALLBACK_W_REFRESH
#define NEWTON_STEPS 8
#define NEWTON_SHIFT 1e-10
/* Work bounds that keep the fallback's own cost bounded whatever n: the dense O(n^3) steps
 * (the warm basis solve and Newton) only up to DENSE_MAX unknowns (an LU of 600 is ~7e7
 * flops; the workspace's squares end below PP_LCP_SPARSE_MIN_N anyway), from
 * PP_LCP_SPARSE_MIN_N on the sparse LU of M_BB, whose cost follows its nonzeros, and at most
 * SWEEP_WORK / n^2 sweeps of O(n^2) (2e8: every sweep up to n = 1000, 8 sweeps at n = 5000).
 * Work bounds rather than a clock, so the answer does not depend on the machine. */
#define DENSE_MAX 600
#define SWEEP_WORK 2e8
/* From PP_LCP_SPARSE_MIN_N on, a basis solve is skipped when its LU's estimated work is above
 * the factorisation bound every large basis is held to (PP_LCP_FACTOR_WORK; lcp_sparse.c
 * solve_gathered). M_BB of a brick wall's active set under PEG (ODE's crash demo: nb = 4 000
 * - 6 000, ~10^6 nonzeros) fills to 2 - 8 x 10^6 entries and a KLU factorisation took 7 - 25
 * s, eight of them a fallback (--scene crash --model peg): 100 s and more a step. */
/* The bound on one call's total work, PP_LCP_FALLBACK_WORK (lcp.h; the charges are in the
 * file comment). Why: each factorisation held to PP_LCP_FACTOR_WORK did not bound a call, whose
 * eight Newton steps each factorised a basis of 4 000 - 4 600 of the crash demo's 7 764 -
 * 7 986 unknowns (standard model, the cannon ball's impact): KLU counted 1.3 - 5.0e9 flops a
 * factorisation against AMD's estimate of 3.2 - 4.4e8 that PP_LCP_FACTOR_WORK checks (partial
 * pivoting fills 2 - 4 x what AMD predicts), 1.2 - 5.4 s each, 21 s one call (step 16: 32 s
 * with Lemke's 10 s clock), and none of those Newton steps lowered rel(z). The charge of a
 * basis solve, nb * nnz(M_BB), was measured against KLU's own flop count on the 90 sparse basis
 * solves of that run: KLU's count is 0.25 - 2.2 x the charge (1.0e9 charged: 0.3 - 2 s on the
 * 2-core test machine). It is an estimate for such contact blocks, not a bound of every LU: a
 * block banded with half-bandwidth b factorises in ~nb b^2 flops against the charge's
 * nb^2 (2b + 1), and a block that fills completely costs ~nb^3. The bound keeps the sweeps and the first Newton steps of such an LCP
 * and every stage of a small one: a dense call below PP_LCP_SPARSE_MIN_N = 161 unknowns charges
 * at most ~5e7 (nine LUs of 160^3 and 200 sweeps of 160^2), so the bound never ends it. */

/* w += delta M_:j (dense M, or A by columns when M is NULL). */
static inline void add_column(int n, const double *M, const pp_lcp_csc *A, int j, double delta,
                              double *w)
{
    if (!M) {
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t)
            w[A->row_index[t]] += A->values[t] * delta;
        return;
    }
    const double *col = M + (size_t)j * n;
    for (int i = 0; i < n; ++i) w[i] += col[i] * delta;
}

/* w = M z + q (column by column: contiguous). */
static void form_w(int n, const double *M, const pp_lcp_csc *A, const double *q,
                   const double *z, double *w)
{
    memcpy(w, q, (size_t)n * sizeof *w);
    for (int j = 0; j < n; ++j) {
        double zj = z[j];
        if (zj == 0.0) continue;
        add_column(n, M, A, j, zj, w);
    }
}

/* rel(z) from z, w and the row sums of |M| (lcp.h, the top): max_i |min(z_i, w_i)| / s_i;
 * and in *residual r(z) = max_i |min(z_i, w_i)|. */
double pp_lcp_fallback_relative(int n, const double *q, const double *row_sums,
                                 const double *z, const double *w, double *residual)
{
    double z_norm = pp_lcp_inf_norm(n, z), worst = 0.0, r_max = 0.0;
    for (int i = 0; i < n; ++i) {
        double r = fabs(fmin(z[i], w[i]));
        double s = fabs(q[i]) + row_sums[i] * z_norm;
        double rel = s > 0.0 ? r / s : (r > 0.0 ? INFINITY : 0.0);
        if (!(rel <= worst)) worst = rel; /* NaN propagates */
        if (!(r <= r_max)) r_max = r;
    }
    *residual = r_max;
    return worst;
}

/*
 * rel(z) divides each row's residual by |q_i| + (sum_j |M_ij|) ||z||_inf, so along a ray of an
 * LCP Lemke could not solve (z = t d, d >= 0, M d ~ 0 on d's support) it falls like 1/t while
 * the residual itself stays |q_i| or grows: the soak met fallback answers with ||z|| = 1e18 and
 * 1e24 (velocities of 1e15 m/s written to ODE) at rel(z) = 7e-8 and 2e-18. A fallback answer is
 * taken as a solution only if its residual is small against the data alone,
 * r(z) <= regularised_tol ||q||_inf, as a regularised solve must keep eps ||z|| <=
 * regularised_tol ||q|| (lcp.h); and as an approximation (budget exhausted) only if it is no
 * worse than no impulse, r(z) <= ||q||_inf >= r(0). A z with a bounded residual can be large
 * only along directions with M z ~ 0, which change no velocity (M = h G^T W G + ...).
 */
int pp_lcp_fallback_bounded(int n, const double *q, double tolerance, const pp_lcp_result *result)
{
    return result->residual <= tolerance * pp_lcp_inf_norm(n, q);
}

/* Which iterate. An iterate the fallback may keep is usable: r(z) <= ||q||_inf, pp_lcp_solve's
 * rule for an answer when the budget ran out (pp_lcp_fallback_bounded at tolerance 1). On the
 * crash demo's impact (PEG, step 16) a cut call on 4 822 unknowns kept by rel(z) alone an
 * iterate with r(z) = 23.8 against ||q|| = 13 (rel 6.9e-3), which pp_lcp_solve refused (z = 0;
 * in another run an island of 25 112 unknowns got no impulse that way). The tighter
 * acceptances of a solved or regularised answer (r(z) <= regularised_tol ||q||_inf) imply
 * this one, so restricting the choice to usable iterates drops only answers that no rule of
 * pp_lcp_solve keeps. z = 0 is always usable (r(0) = ||min(0, q)||_inf), so the call always
 * has one.
 * Among them the best is the one of least r(z), on a tie the one of least rel(z). Not the
 * least rel(z): it is divided by ||z||_inf, so it is won by blowing ||z|| up along a direction
 * where M z is small (above), while r(z) stays: on the convex landing's iterate island (the
 * standard model, 34 758 unknowns, docs/performance.md "The convex landing's steps 208-209")
 * a diverged interior round of the sticking solve, ||z|| 7.1e8, r(z) 11.7 against ||q|| 21.4,
 * had rel(z) 1.05e-10 against the sweeps' 4e-5 at r(z) 2.4-2.7; handed as the caller's
 * candidate it was this call's answer, reported at rel 1e-10 and applied with r(z) 11.7.
 * Every candidate of one call is measured on the same M and q, so the least r(z) is the
 * least normwise residual against the data, r(z) / ||q||_inf, the measure of every
 * acceptance's bound on r(z) (lcp.h); and since z = 0 is the first best, an iterate kept
 * has r(z) <= r(0) (no worse than no impulse). */
int pp_lcp_fallback_better(double residual, double rel, double q_norm, double best_residual,
                           double best_rel)
{
    if (!(residual <= q_norm)) return 0; /* not usable, or NaN */
    return residual < best_residual || (residual == best_residual && rel < best_rel);
}

/* A start candidate zt (the warm basis's clamped solution, the caller's): its w in wt, kept
 * in zi, w, *best_r and *best_rel when finite and better (pp_lcp_fallback_better). */
static void keep_start(int n, const double *M, const pp_lcp_csc *A, const double *q,
                       const double *row_sums, double q_norm, const double *zt, double *wt,
                       double *zi, double *w, double *best_r, double *best_rel)
{
    double r_it;
    form_w(n, M, A, q, zt, wt);
    double rel = pp_lcp_fallback_relative(n, q, row_sums, zt, wt, &r_it);
    if (pp_lcp_fallback_better(r_it, rel, q_norm, *best_r, *best_rel) &&
        pp_lcp_all_finite((size_t)n, zt)) {
        *best_r = r_it;
        *best_rel = rel;
        memcpy(zi, zt, (size_t)n * sizeof *zi);
        memcpy(w, wt, (size_t)n * sizeof *w);
    }
}

/* The best iterate is an answer (the call ends): rel(z) <= residual_tol and, as this call's
 * status PP_LCP_SOLVED needs (pp_lcp_fallback_bounded), r(z) <= regularised_tol ||q||_inf; a
 * large z of tiny rel(z) does not end the stages ("Which iterate"). */
static int solved(double best_r, double best_rel, double q_norm, const pp_lcp_options *o)
{
    return best_rel <= o->residual_tol && best_r <= o->regularised_tol * q_norm;
}

static int solve_basis(pp_lcp_workspace *ws, int n, const double *M, const pp_lcp_csc *A,
                       const double *q, const unsigned char *basis, double *z)
{
    return M ? pp_lcp_solve_basis(ws, n, M, q, basis, z)
             : pp_lcp_csc_solve_basis(ws, A, q, basis, z);
}

/* The charge of a basis solve (file comment): nb * nnz(M_BB) for the sparse LU, whose
 * gathered block has M_BB's entries (A's pattern, or the dense M's nonzeros), nb^3 for the
 * dense LU (dense_lu), which does not skip zeros. */
static double basis_charge(int n, const double *M, const pp_lcp_csc *A,
                           const unsigned char *basis, int dense_lu)
{
    double nb = 0.0, entries = 0.0;
    for (int j = 0; j < n; ++j) {
        if (!basis[j]) continue;
        nb += 1.0;
        if (dense_lu) continue;
        if (!M) {
            for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t)
                entries += basis[A->row_index[t]] != 0;
        } else {
            const double *col = M + (size_t)j * n;
            for (int i = 0; i < n; ++i) entries += basis[i] && col[i] != 0.0;
        }
    }
    return dense_lu ? nb * nb * nb : nb * entries;
}

/* The bound of one call's work under o: the smaller of its own and what the solves sharing
 * its budget have left (file comment). */
double pp_lcp_fallback_work_bound(const pp_lcp_options *o)
{
    double bound = o->fallback_work > 0.0 ? o->fallback_work : PP_LCP_FALLBACK_WORK;
    if (o->budget && o->budget->fallback_work >= 0.0 && o->budget->fallback_work < bound)
        bound = o->budget->fallback_work;
    return bound;
}

/*
 * An LCP whose solve would start past its clock, and whose M the fallback could not sweep
 * once. Lemke gets no pivot there (pp_lcp_deadline), and the fallback, charged its three
 * passes over M's entries before anything runs, can afford neither a sweep (one more pass)
 * nor the warm start's basis solve (a pass and the LU) when 4 nnz(M) exceeds its bound: its
 * answer is its start, z = 0, whatever M holds. So a caller that knows a lower bound of
 * nnz(M) before forming M (peg_mlcp.c csc_assemble: each impulse column holds every row on
 * its bodies) need not form it: pp_lcp_fallback_unformed gives that answer from q alone.
 * Measured (the convex ball's landing, docs/performance.md "The convex ball's landing"): an
 * island of 136 547 unknowns whose M of 3.9e8 nonzeros (4.7 GB) took 10 s to form after the
 * step's clock had run out, then 0.4 s of Lemke's setup for its one pivot and 1.1 s of the
 * fallback's passes, for z = 0. Such an island need not get z = 0, though: its M is
 * L + G^T W G with G far sparser (~12 entries a column against 2 850 there), and the
 * fallback's sweeps run in body space at nnz(G) a sweep (lcp_fallback_bodies.c), which
 * peg_mlcp.c gives it; this answer remains where there is no room for that description.
 *
 * Returns the number of entries above which M is not needed (HUGE_VAL while the clock
 * runs, without a budget, or without the fallback).
 */
double pp_lcp_fallback_idle_entries(const pp_lcp_options *o)
{
    if (!o || !o->fallback || !o->budget) return HUGE_VAL;
    const double now = pp_lcp_clock();
    if (now < pp_lcp_deadline(o, now)) return HUGE_VAL;
    return 0.25 * pp_lcp_fallback_work_bound(o);
}

/* The fallback's start z = 0 as its answer, without reading M (at least `entries` nonzeros):
 * its measures from q alone (w = q), fallback and fallback_cut set, and the three passes
 * over M the fallback charges before anything runs (3 entries) taken from the budget's
 * fallback work. Served to pp_lcp_fallback_unformed and lcp.c's clock_out_answer. */
/* The fallback's answer on an LCP of n unknowns with at least `entries` nonzeros in M, where
 * pp_lcp_fallback_idle_entries(o) < entries: z = 0, its residual from q alone (w = q), the
 * call's three passes charged to the budget as the fallback charges them, and the budget
 * marked exhausted as Lemke's stopped path would have. PP_LCP_APPROXIMATE: the caller applies
 * it as it applies the fallback's answers (r(0) <= ||q||_inf). */
void pp_lcp_fallback_zero(int n, const double *q, double entries, const pp_lcp_options *o,
                          double *z, pp_lcp_result *result)
{
    memset(z, 0, (size_t)n * sizeof *z);
    pp_lcp_measures measures;
    pp_lcp_measures_start(&measures);
    for (int i = 0; i < n; ++i) pp_lcp_measure_row(&measures, q[i], 0.0, 0.0, 0.0, q[i]);
    pp_lcp_measures_store(&measures, n, result);
    result->fallback = 1;
    result->fallback_cut = 1;
    result->fallback_iterations = 0;
    result->fallback_work = 3.0 * entries;
    if (o->budget && o->budget->fallback_work >= 0.0)
        o->budget->fallback_work = fmax(0.0, o->budget->fallback_work - result->fallback_work);
}

pp_lcp_status pp_lcp_fallback_unformed(int n, const double *q, double entries,
                                       const pp_lcp_options *o, double *z,
                                       pp_lcp_result *result)
{
    memset(result, 0, sizeof *result);
    pp_lcp_fallback_zero(n, q, entries, o, z, result);
    result->status = PP_LCP_APPROXIMATE;
    result->budget_exhausted = 1;
    result->attempts = 1;
    o->budget->exhausted++;
    pp_log(PP_LOG_WARNING, "lcp: n = %d past the clock, its M (at least %.3g nonzeros) not "
                           "formed: the fallback could not sweep it; fallback answer z = 0, "
                           "rel residual %.3g", n, entries, result->relative_residual);
    return PP_LCP_APPROXIMATE;
}

/* The fallback on M (dense) or A (by columns; M NULL). */
static pp_lcp_status fallback(pp_lcp_workspace *ws, int n, const double *M,
                              const pp_lcp_csc *A, const double *q, const pp_lcp_options *o,
                              const unsigned char *warm, double *z, pp_lcp_result *result)
{
    double *zi = ws->x, *w = ws->y, *best = ws->start_covering, *diag = ws->column;
    double *row_sums = ws->covering, *zt = ws->z_try, *wt = ws->w_try;
    int sweeps = o->fallback_iterations > 0 ? o->fallback_iterations : DEFAULT_SWEEPS;
    const double entries = M ? (double)n * (double)n : (double)A->col_start[n];
    double sweep_cap = SWEEP_WORK / (entries > n ? entries : n);
    if (sweep_cap < 1.0) sweep_cap = 1.0;
    if (sweeps > sweep_cap) sweeps = (int)sweep_cap;
    /* the basis solves: dense LUs in the workspace's squares up to DENSE_MAX unknowns (and
     * below PP_LCP_SPARSE_MIN_N, the squares' order); from PP_LCP_SPARSE_MIN_N on the sparse
     * LU of M_BB (lcp_sparse.c), whose cost follows the nonzeros, with the Newton shift
     * added on the fly (ws->shift); in between none */
    const int sparse = n >= PP_LCP_SPARSE_MIN_N;
    const int dense = M && !sparse && n <= DENSE_MAX; /* by columns (M NULL): no dense LU */
    const int basis_solves = dense || sparse;
    /* The work bound of this call (file comment): the smaller of its own and what the solves
     * sharing the budget have left; `work` is the charge so far, the three passes over M
     * (row sums, w before the Newton steps, the final residual) charged at once. */
    const double sweep_entries = entries > n ? entries : n;
    const double bound = pp_lcp_fallback_work_bound(o);
    double work = 3.0 * entries;
    int cut = 0;

    if (!M) { /* the row sums (j increasing, as below) and maxima, then D, by columns */
        double *row_max = ws->residual, *mii = ws->rhs;
        for (int i = 0; i < n; ++i) row_sums[i] = row_max[i] = mii[i] = 0.0;
        for (int j = 0; j < n; ++j)
            for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t) {
                const int i = A->row_index[t];
                double a = fabs(A->values[t]);
                row_sums[i] += a;
                if (a > row_max[i]) row_max[i] = a;
                if (i == j) mii[i] = A->values[t];
            }
        for (int i = 0; i < n; ++i) {
            diag[i] = mii[i] > DIAG_SHIFT * row_max[i] ? mii[i] : DIAG_SHIFT * row_max[i];
            if (!(diag[i] > 0.0)) diag[i] = 1.0;
        }
    }
    for (int i = 0; M && i < n; ++i) {
        double row_max = 0.0, sum = 0.0;
        for (int j = 0; j < n; ++j) {
            double a = fabs(M[i + (size_t)j * n]);
            sum += a;
            if (a > row_max) row_max = a;
        }
        row_sums[i] = sum;
        double mii = M[i + (size_t)i * n];
        diag[i] = mii > DIAG_SHIFT * row_max ? mii : DIAG_SHIFT * row_max;
        if (!(diag[i] > 0.0)) diag[i] = 1.0; /* a zero row: w_i = q_i whatever z is */
    }

    /* Start: z = 0, or the clamped warm-start basis solution or the caller's candidate when
     * better. */
    memset(zi, 0, (size_t)n * sizeof *zi);
    memcpy(w, q, (size_t)n * sizeof *w);
    /* z = 0 is usable: r(0) = ||min(0, q)||_inf <= ||q||_inf */
    const double q_norm = pp_lcp_inf_norm(n, q);
    double best_r;
    double best_rel = pp_lcp_fallback_relative(n, q, row_sums, zi, w, &best_r), r_it;
    if (warm && basis_solves) { /* its LU and w */
        const double charge = basis_charge(n, M, A, warm, dense) + entries;
        if (work + charge <= bound) {
            work += charge;
        } else {
            cut = 1;
            warm = NULL;
        }
    }
    if (warm && basis_solves && solve_basis(ws, n, M, A, q, warm, zt)) {
        for (int i = 0; i < n; ++i)
            if (zt[i] < 0.0) zt[i] = 0.0;
        keep_start(n, M, A, q, row_sums, q_norm, zt, wt, zi, w, &best_r, &best_rel);
    }
    /* The caller's candidate (options->fallback_start: another method's approximate answer,
     * e.g. the sticking solve's best refused round, peg_mlcp.c), clamped to z >= 0 (NaN to
     * 0), kept as the warm start's is when usable and better; charged one pass for its w */
    if (o->fallback_start && !(work + entries <= bound)) {
        cut = 1;
    } else if (o->fallback_start) {
        work += entries;
        const double *start = o->fallback_start;
        for (int i = 0; i < n; ++i) zt[i] = start[i] > 0.0 ? start[i] : 0.0;
        keep_start(n, M, A, q, row_sums, q_norm, zt, wt, zi, w, &best_r, &best_rel);
    }
    memcpy(best, zi, (size_t)n * sizeof *best);

    /* 1. Shifted projected Gauss–Seidel. */
    int sweep = 0;
    while (sweep < sweeps && !solved(best_r, best_rel, q_norm, o)) {
        /* a sweep, and every W_REFRESH sweeps a new w: M's entries each */
        const double charge = sweep_entries * ((sweep + 1) % W_REFRESH == 0 ? 2.0 : 1.0);
        if (!(work + charge <= bound)) {
            cut = 1;
            if (sweep % CHECK_EVERY != 0 && pp_lcp_all_finite((size_t)n, zi)) {
                double rel = pp_lcp_fallback_relative(n, q, row_sums, zi, w, &r_it); /* the last sweeps' */
                if (pp_lcp_fallback_better(r_it, rel, q_norm, best_r, best_rel)) {
                    best_r = r_it;
                    best_rel = rel;
                    memcpy(best, zi, (size_t)n * sizeof *best);
                }
            }
            break;
        }
        work += charge;
        for (int i = 0; i < n; ++i) {
            double zn = zi[i] - w[i] / diag[i];
            if (zn < 0.0) zn = 0.0;
            double delta = zn - zi[i];
            if (delta == 0.0) continue;
            zi[i] = zn;
            add_column(n, M, A, i, delta, w);
        }
        ++sweep;
        if (sweep % W_REFRESH == 0) form_w(n, M, A, q, zi, w);
        if (sweep % CHECK_EVERY == 0 || sweep == sweeps) {
            if (!pp_lcp_all_finite((size_t)n, zi)) break; /* diverged: keep the best */
            double rel = pp_lcp_fallback_relative(n, q, row_sums, zi, w, &r_it);
            if (pp_lcp_fallback_better(r_it, rel, q_norm, best_r, best_rel)) {
                best_r = r_it;
                best_rel = rel;
                memcpy(best, zi, (size_t)n * sizeof *best);
            }
        }
    }
    result->fallback_iterations = sweep;

    /* 2. Newton steps on the minimum map, from the best iterate. The basis matrices of the
     * friction LCPs are often singular (redundant contacts), so the steps solve with
     * M + NEWTON_SHIFT max_i |M_ii| I, like pp_lcp_solve's regularised retries; the point
     * is judged against M. */
    double *Ms = ws->regularised, dmax = 0.0;
    for (int i = 0; M && i < n; ++i) dmax = fmax(dmax, fabs(M[i + (size_t)i * n]));
    for (int j = 0; !M && j < n; ++j)
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t)
            if (A->row_index[t] == j) dmax = fmax(dmax, fabs(A->values[t]));
    const double shift = NEWTON_SHIFT * (dmax > 0.0 ? dmax : 1.0);
    if (dense) {
        memcpy(Ms, M, (size_t)n * n * sizeof *Ms);
        for (int i = 0; i < n; ++i) Ms[i + (size_t)i * n] += shift;
    }
    memcpy(zi, best, (size_t)n * sizeof *zi);
    form_w(n, M, A, q, zi, w);
    const double saved_shift = ws->shift;
    ws->shift = sparse ? shift : 0.0;
    for (int step = 0; !cut && basis_solves && step < NEWTON_STEPS &&
                       !solved(best_r, best_rel, q_norm, o);
         ++step) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            unsigned char active = zi[i] > w[i];
            changed |= step == 0 || active != ws->basis[i];
            ws->basis[i] = active;
        }
        if (!changed) break; /* the same active set again: no new point */
        const double charge = basis_charge(n, M, A, ws->basis, dense) + entries; /* and w */
        if (!(work + charge <= bound)) {
            cut = 1;
            break;
        }
        work += charge;
        if (!solve_basis(ws, n, sparse ? M : Ms, A, q, ws->basis, zt)) break;
        for (int i = 0; i < n; ++i)
            if (zt[i] < 0.0) zt[i] = 0.0;
        if (!pp_lcp_all_finite((size_t)n, zt)) break;
        memcpy(zi, zt, (size_t)n * sizeof *zi);
        form_w(n, M, A, q, zi, w);
        double rel = pp_lcp_fallback_relative(n, q, row_sums, zi, w, &r_it);
        /* As pp_lcp_solve's acceptance of a regularised solve: a z that exists only because
         * of the shift (growing like 1/shift along a ray of an infeasible LCP, where the
         * row-wise residual shrinks like 1/||z||) is no answer. */
        int shift_small = shift * pp_lcp_inf_norm(n, zi) <= o->regularised_tol * q_norm;
        if (shift_small && pp_lcp_fallback_better(r_it, rel, q_norm, best_r, best_rel)) {
            best_r = r_it;
            best_rel = rel;
            memcpy(best, zi, (size_t)n * sizeof *best);
        }
    }

    ws->shift = saved_shift;
    result->fallback_work = work;
    result->fallback_cut = cut;
    if (o->budget && o->budget->fallback_work >= 0.0)
        o->budget->fallback_work = fmax(0.0, o->budget->fallback_work - work);
    memcpy(z, best, (size_t)n * sizeof *z);
    if (M) pp_lcp_residual(n, M, q, z, NULL, result); /* the independent residual */
    else pp_lcp_csc_residual(A, q, z, NULL, result);
    result->fallback = 1;
    return result->relative_residual <= o->residual_tol && pp_lcp_fallback_bounded(n, q, o->regularised_tol, result)
               ? PP_LCP_SOLVED
               : PP_LCP_APPROXIMATE;
}

pp_lcp_status pp_lcp_fallback(pp_lcp_workspace *ws, int n, const double *M, const double *q,
                              const pp_lcp_options *o, const unsigned char *warm, double *z,
                              pp_lcp_result *result)
{
    return fallback(ws, n, M, NULL, q, o, warm, z, result);
}

/* The fallback of a large LCP given by columns (n = A->n >= PP_LCP_SPARSE_MIN_N). */
pp_lcp_status pp_lcp_fallback_csc(pp_lcp_workspace *ws, const pp_lcp_csc *A, const double *q,
                                  const pp_lcp_options *o, const unsigned char *warm, double *z,
                                  pp_lcp_result *result)
{
    return fallback(ws, A->n, NULL, A, q, o, warm, z, result);
}
