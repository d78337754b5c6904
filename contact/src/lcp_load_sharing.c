/*
 * Load sharing over redundant supports: which solution of a time-stepping LCP with many
 * solutions is applied (pegplus/peg.h; README "Redundant supports").
 *
 * The problem. A body resting on more supports than it has freedoms (a box face on a face:
 * 4 corners, each with a normal and 2 tangential impulse directions, against 6 freedoms; a
 * plate on a grid of balls) gives a Stewart–Trinkle LCP (ST96 Eq 29; PEG Eqs 39–49) whose
 * impulse block A = G^T W G is singular on the active contacts, and the LCP then has a set of
 * solutions. Lemke's method returns a vertex of it: its basis is nonsingular, so at most
 * rank(A) impulses are nonzero; typically three supports carry the whole weight and the
 * others get p = 0 and hence no friction. A plate pushed over rolling balls then rolls on
 * three of them (13.6 m/s^2 instead of 8 in the scene).
 *
 * The solution chosen: the limit of a uniform compliance going to zero. Let D be diagonal
 * with D_ii = 1 on the impulse unknowns (normal p and friction beta of every contact: the
 * rows of the Delassus block) and 0 on the others (the sliding speeds sigma and PEG's slacks
 * c, whose rows are velocity conditions, and the joint rows' unknowns). The compliant LCP
 *     LCP(M + eps D, q):  w = (M + eps D) z + q >= 0,  z >= 0,  z^T w = 0
 * is ST96's with a contact-level CFM eps (a contact yields eps per unit impulse: the force is
 * spread like that of stiff springs of equal stiffness). We apply z0 = lim_{eps -> 0} z(eps).
 * The ST96 friction LCP is not monotone, so "the minimum-norm solution" alone would not say
 * which one; the limit does, and where it is a minimum norm, it says so (below).
 *
 * The limit on a fixed basis. For small eps the compliant solution has a fixed complementary
 * basis B (finitely many bases; z(eps) is rational in eps), on which
 *     (M_BB + eps D_B) z_B(eps) = -q_B,   z_N = 0.                                    (1)
 * Write M = M_BB. If M is singular, let N span its null space and L its left null space
 * (L^T M = 0). Expanding z_B(eps) = z0 + eps z1 + O(eps^2) in (1):
 *     M z0 = -q_B,          M z1 = -D z0   =>   L^T D z0 = 0.                           (2)
 * So z0 is the solution of M z0 = -q_B with L^T D z0 = 0; it is unique when L^T D N is
 * nonsingular (z0 = z_p + N y with (L^T D N) y = -L^T D z_p). Where B holds impulses only
 * (frictionless, or every friction sticking inside its cone: no sigma basic), M is the
 * symmetric block A_BB, D = I there, L = N, and (2) says z0 is orthogonal to null(M): the
 * minimum-norm solution, z0 = -M^+ q_B (what the pseudo-inverse, LAPACK's dgelsd, gives).
 * It is computed without forming N or L, by iterated Tikhonov regularisation on one LU:
 *     z^(0) = 0,    (M + eps D) z^(t+1) = -q_B + eps D z^(t).                            (3)
 * z^(1) = z(eps). Every fixed point solves M z = -q_B. With T = eps (M + eps D)^-1 D the
 * error e^(t) = z^(t) - z0 obeys e^(t+1) = T e^(t); the space V = {x : L^T D x = 0} is
 * invariant under T (L^T (M + eps D) T x = eps L^T D x), contains z0 and z^(1) (L^T q_B = 0:
 * (1) is consistent), and T contracts on V by about eps / |lambda| for the pencil's nonzero
 * eigenvalues lambda, while on null(M) T is the identity. So z^(t) -> z0 in a few steps when
 * eps is small against the island's nonzero modes; a limit that does not exist (L^T D N
 * singular) shows as iterates that do not settle, and then Lemke's answer is kept.
 * In floating point (1) is consistent only to rounding (q_B has a part along L of the order
 * of u ||q||, and gaps of 1e-13 m over h), and that part makes the iterates of (3) drift by
 * about itself / eps per step. So (3) is run as an offset from a reference z_r that solves
 * (1) at eps = 0 for a right-hand side q'_B = -M z_r within rounding of q_B: d = z - z_r
 * obeys d <- eps (M + eps D)^-1 D d from d = -z_r (no right-hand side, no drift), which
 * converges to minus z_r's component in null(M) along V, and z0 = z_r + d. The reference is
 * Lemke's answer z_L when it lives on B (z_L,N = 0: then M z0 = M z_L to rounding), else the
 * iterate of (3) on q at its floor (its change no longer shrinking: settled, or only the
 * drift left); |w_B(z_r)| must be within the rows' closed tolerance.
 *
 * Which basis. z0 of (2) is the limit only if B is the basis of z(eps) for small eps. It is
 * found by primal-dual active-set steps on the compliant LCP (solve (1) on B; basic z_i < 0
 * leave B, nonbasic w_i < 0 join it) until z(eps) solves LCP(M + eps D, q), from
 *  0. the compliant basis this island's last solve found, where the caller keeps it
 *     (ls->start; pp_peg_solve keeps it in bit 1 of the warm-start basis bytes, so by
 *     constraint identity, the same whatever thread steps the island), if it is the
 *     compliant LCP's basis as it stands (one step, no flip): a resting island's compliant
 *     basis is the same from step to step, while Lemke's vertex changes, and from Lemke's
 *     basis the steps flipped 30-60 entries and factored up to 6 blocks every step (the
 *     30-box pile's largest island). Otherwise nothing of it is kept: continuing the steps
 *     from it made the answer depend on the previous solve's, and the frictional pouring
 *     scene (check_peg_pouring, seed 1) then took 139 s instead of 48 (Lemke pivoting in the
 *     re-linearisation); from
 *  1. Lemke's basis plus the normal unknowns of the contacts that are closed with p = 0
 *     (w_p = 0 to LS_CLOSED: the supports Lemke left unloaded); at most
 *     LS_ACTIVE_SET_STEPS steps;
 *  2. failing that, Lemke on LCP(M + eps D, q) warm-started from the last basis.
 * (Where a newly loaded support's friction sticks, the compliant friction acts on the pyramid
 * directions against its small slip, beta_l ~ max(0, -d_l . slip) / eps: with k = 8 three
 * directions share it. The active-set steps find that.) Then z0 is checked as an answer: z0_B
 * >= 0 (entries above -LS_NEGATIVE ||z|| are zeros' rounding and set to 0), and the
 * acceptance of every solve (pp_lcp_accept: rel(z) <= residual_tol, r(z) <= 1e-4 ||q||),
 * tightened to LS_ACCURACY or Lemke's own residual, whichever is larger;
 * complementarity holds by construction (z_N = 0, w_B = 0). Otherwise Lemke's answer stays.
 *
 * Only where the solution is not unique. The answer is left untouched (bit for bit) unless
 * the active contacts are redundant: the columns of G of the contacts with p > 0 or w_p = 0
 * (their normal, and two friction directions that span the tangent plane, or one when
 * k = 2) are linearly dependent. That is so without a test when there are more of them than
 * 6 per body (a face on a face: 12 columns for 6 freedoms), else when the corresponding
 * principal block of A is singular (pivoted Cholesky, O(m^2 rank) for m columns). With
 * independent columns the impulses of the active contacts are fixed by their velocities
 * (G x = M (nu - nu*)) and a compliance changes nothing in the limit; the test is a cheap
 * sufficient condition for running the limit, not a proof of non-uniqueness (a redundant
 * island whose limit is Lemke's answer keeps it: PP_LOAD_SAME). Note that with friction two
 * sticking supports of one body are already redundant (opposite tangential impulses along
 * the line through them move nothing), so most resting islands run it.
 *
 * Velocities. When z0 - z_L changes impulses only (sigma, slacks and joint rows as Lemke had
 * them) it lies in null(M) with no sigma part, so A d_F = 0 and |W^1/2 G d_F|^2 = d_F^T A d_F
 * = 0: the bodies move the same under both answers, and pp_peg_solve computes the velocities
 * from Lemke's (whose basis solve is the more accurate; PP_LOAD_SHARED_IMPULSES). A 10-box
 * column then stays exactly as it was (1e-16 m/s); from the limit's own velocities, which
 * carry rounding of ~1e-15 m/s, it crept (7e-8 m/s within 10 s).
 *
 * Cost where it runs: O(n^2) for w, the test, one factorisation of the basis block per
 * active-set step (one in all in a resting island started from its last basis), a few
 * triangular solves for (3); Lemke on the compliant LCP only when the active-set steps fail.
 * README "Redundant supports" has the measured cost.
 *
 * By columns. An island of pp_peg_csc_min_n unknowns or more (257; peg_mlcp.c) is held by
 * columns (pp_lcp_csc) and never as an n x n array. The steps above are the same; only the
 * operations on M have a second back-end (ls_matrix below): w = M z + q and the row sums
 * through the columns' nonzeros, (M + eps D)_BB gathered through the basic columns and
 * factorised by KLU (lcp_sparse.c, pp_lcp_lu_sparse_factor: each factorisation held to the
 * work bound of every large basis, PP_LCP_FACTOR_WORK, and the call to LS_WORK, "Work" below;
 * a refused one counts as a singular block), the residual of a basic solution by columns,
 * the acceptance by pp_lcp_csc_accept.
 * So the answer is the same object, z0 of (2) on a basis B of the compliant LCP's solution,
 * checked as an exact answer of LCP(M, q); the dense back-end's operations are the loops it
 * always ran (the islands below the threshold are bit for bit as before). Differences:
 *  - the rank test: with m columns > freedoms none is needed; otherwise it runs dense on the
 *    m x m block only for m <= LS_MAX_UNKNOWNS (above, Lemke's answer is kept);
 *  - step 2 (Lemke on the compliant LCP) is not run: on heap20's island (678 unknowns,
 *    standard model) Lemke on M + eps D by columns within LS_LEMKE_PIVOTS did not reach the
 *    compliant basis and cost 4.7 ms a step (the rest of the step 0.7 ms); unbounded it took
 *    ~700 pivots (55 ms a step) to a basis on which the limit has negative loads (-6e-4 of
 *    ||z||: LS_EPS is not small against that heap's softest modes).
 * And two entries that run BEFORE Lemke, so that a large island that found its compliant
 * basis once is not solved by Lemke again while it rests:
 *  - pp_load_sharing_kept: the compliant basis kept in bit 1 of the warm-start bytes, tried
 *    as it stands: one factorisation, no flip (the compliant LCP's basis, with the rows'
 *    sizes s_i taken at ||z(eps)||), then the limit with the iterate of (3) on q as its
 *    reference (there is no Lemke answer), then the acceptance of every solve within
 *    LS_ACCURACY (absolute: rel(z) <= LS_ACCURACY, r(z) <= LS_ACCURACY ||q||). Accepted, z0
 *    is the island's answer and Lemke does not run; else Lemke, then the steps above;
 *  - pp_load_sharing_cold: an island with no warm start at all (its first step): the
 *    active-set steps from a crash basis built from the data (the normals of the contacts
 *    with q_p <= 0 basic, with all their friction directions: the steps take out the
 *    directions along the small slip), at most LS_COLD_STEPS factorisations, then the limit
 *    and the acceptance as above.
 * Velocities there come from z0 (no Lemke answer to take them from): a plate at rest on
 * 7 x 7 supports (294 unknowns) answered from its kept basis for 200 steps moved at most
 * 1.7e-15 m/s (check_load_sharing_large). Where neither entry is accepted, Lemke runs as
 * before and the steps above follow it; and where Lemke's answer was accepted from the warm
 * basis as it stood and no compliant basis was kept, they are not run again (peg_mlcp.c:
 * they failed from that same basis the step before).
 * Where it does not reach the limit (measured, docs/performance.md "Load sharing on islands
 * by columns"): settled heaps (heap20's and heap50's large islands, standard model, keep
 * Lemke's answer at every solve). On heap20 the steps from Lemke's basis flip 243
 * of 678 unknowns and the next block is singular; the cold steps flip 262, 318, 300, then
 * a singular block (the ST friction rows of contacts that do not carry a load keep the
 * semismooth Newton steps from settling). PEG's heap islands hold I/X sets (K > 0: 13 on
 * heap20's island), which load sharing leaves alone (peg_mlcp.c).
 *
 * Work. One call by columns (pp_load_sharing_apply on A, pp_load_sharing_kept,
 * pp_load_sharing_cold) is bounded by work, not the clock (its answer must not depend on the
 * machine): each KLU factorisation of a block (M + eps D)_BB is charged nb * nnz(block) (the
 * fallback's estimate, lcp_fallback.c) and each solve with its factors their entries
 * (lnz + unz + the off-diagonal blocks'), before it runs; a charge that does not fit in what
 * is left of LS_WORK (5e8 estimated multiply-adds; pp_load_sharing.work_bound replaces it)
 * is not run and counts as a singular block (or, in the limit's iterations, as a limit not
 * found): Lemke's answer is kept, or Lemke runs (kept / cold), as for every failure of the
 * steps. ls->work holds the charge, ls->work_cut says the bound stopped it. Why: the
 * cold entry on the crash demo's impact (standard model, the cannon ball's island of 7 764
 * unknowns) factorised blocks of nb = 2 740 - 3 729 with 3.2 - 4.7e5 entries, each passing
 * PP_LCP_FACTOR_WORK by AMD's estimate (1.6 - 3.9e8) while KLU counted 0.5 - 2.5e9 flops: 3.6
 * - 4.3 s in four factorisations, after the step's 10 s Lemke clock, to a singular block (no
 * limit). Charged, the first block (1.0e9) does not fit and the call ends at once. The
 * islands where load sharing does its work are far below the bound: the crash wall's
 * islands before the impact (blocks of nb = 220 - 420) charge 0.4 - 3.9e6 a factorisation,
 * its settled islands after it (nb ~ 1 300) 5e7, the plates of check_load_sharing_large (289
 * and 294 unknowns, the limit found) 1.2 - 2.5e7 a call. The dense back-end (at most
 * LS_MAX_UNKNOWNS = 256 unknowns, a few LUs of 256^3 / 3) is not charged.
 */
#include "lcp_internal.h"
#include "peg_lcp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A row is closed (degenerate when z_i = 0) when w_i <= this part of its data's size s_i. */
#define LS_CLOSED 1e-9
/* Rounding level of a row, relative to s_i: the compliant LCP's w_N >= 0 is checked to it.
 * The answer applied must be as accurate as Lemke's or within LS_ACCURACY (rel(z) and r(z)
 * at most Lemke's or LS_ACCURACY (times ||q||)): the acceptance of every solve (rel <= 1e-9)
 * would let w_N reach -1e-9 s_i, and the 10-box column then sank 1e-9 m in 10 s where
 * Lemke's answers keep it at 0. The limit's own rounding (the LU of M + eps D, condition
 * ~1e5) leaves sticking contacts slipping at ~1e-13 m/s: a pushed box's measured r(z) was
 * 2e-13 at ||q|| = 0.1. */
#define LS_ROUNDING 1e-13
#define LS_ACCURACY 1e-11
/* Rank test: a Cholesky pivot below this part of the block's largest diagonal is zero. */
#define LS_RANK 1e-12
/* The compliance eps = LS_EPS max_i A_ii: small against the islands' nonzero modes (the
 * iteration (3) contracts by eps / lambda: 1e-5 took 3-4 steps on a block's supports), large
 * against rounding (the LU of M + eps D has condition about 1 / LS_EPS, and the error of
 * each solve lies in the null directions, where (3) does not damp it). */
#define LS_EPS 1e-5
/* Iterations of (3), and the change at which they have settled (relative to ||z||): below
 * LS_SETTLED, or below LS_FLOOR once a step no longer shrinks it fourfold. Each solve adds
 * rounding of about u / LS_EPS ||z|| in the null directions, where (3) does not damp it, so
 * the change levels off there (measured 2e-12 relative on a block on four supports with
 * k = 8) instead of going to zero. */
#define LS_ITERATIONS 40
#define LS_SETTLED 1e-13
#define LS_FLOOR 1e-10
/* z0 entries above -LS_NEGATIVE ||z0|| are rounding of a zero and set to 0 (the acceptance
 * below still checks the result); below it the basis is not the limit's. */
#define LS_NEGATIVE 1e-10
/* Iterations of (3) from z^(0) stop when the change is at least this part of the step
 * before: no contraction left, only drift (below). */
#define LS_DRIFT 0.99
/* Primal-dual active-set steps on the compliant LCP before its Lemke solve (step 2). */
#define LS_ACTIVE_SET_STEPS 6
/* Work bound of the dense back-end: the limit costs dense LUs of the basis block (O(n^3)
 * each, up to LS_ACTIVE_SET_STEPS of them) and possibly a Lemke solve; above this many
 * unknowns a dense island keeps Lemke's answer (counted as kept; islands by columns take the
 * sparse back-end, "By columns" above). A settled heap of 20 boxes (678 unknowns) took
 * 37-580 ms a step here against 2.8 ms for the rest of its step; a stack of 3 boxes has ~110,
 * the 10-box column 240. */
#define LS_MAX_UNKNOWNS 256
/* Active-set steps of a cold start (pp_load_sharing_cold) from its crash basis. */
#define LS_COLD_STEPS 12
/* The bound on one call's work by columns ("Work" in the file comment), estimated
 * multiply-adds; pp_load_sharing.work_bound > 0 replaces it. */
#define LS_WORK 5e8
/* Pivots of Lemke on the compliant LCP (step 2 below). */
#define LS_LEMKE_PIVOTS 32
/* The limit differs from Lemke's answer when some entry moves by more than this part of
 * ||z||: otherwise Lemke's answer is kept as it is. */
#define LS_SAME 1e-12

pp_status pp_load_sharing_reserve(pp_load_sharing *ls, int n)
{
    if (n < 1) n = 1;
    if (n <= ls->capacity) return PP_OK;
    int cap = ls->capacity + ls->capacity / 2 > n ? ls->capacity + ls->capacity / 2 : n;
    void *p;
#define GROW(field, count)                                                                  \
    do {                                                                                    \
        p = realloc(ls->field, (count) * sizeof *ls->field);                                \
        if (!p) return PP_ERR_NO_MEMORY;                                                    \
        ls->field = p;                                                                      \
    } while (0)
    GROW(w, (size_t)cap);
    GROW(tau, (size_t)cap);
    GROW(z, (size_t)cap);
    GROW(zb, (size_t)cap);
    GROW(rhs, (size_t)cap);
    GROW(index, (size_t)cap);
    GROW(piv, (size_t)cap);
    GROW(place, (size_t)cap);
    GROW(normal, (size_t)cap);
    GROW(beta, (size_t)cap);
    GROW(force, (size_t)cap);
    GROW(basis, (size_t)cap);
    GROW(derived, (size_t)cap);
    GROW(Ap, (size_t)cap + 1);
#undef GROW
    for (int i = ls->capacity; i < cap; ++i) ls->place[i] = -1;
    ls->capacity = cap;
    return PP_OK;
}

void pp_load_sharing_free(pp_load_sharing *ls)
{
    if (!ls) return;
    free(ls->Me);
    free(ls->lu);
    free(ls->w);
    free(ls->tau);
    free(ls->z);
    free(ls->zb);
    free(ls->rhs);
    free(ls->index);
    free(ls->piv);
    free(ls->place);
    free(ls->normal);
    free(ls->beta);
    free(ls->force);
    free(ls->basis);
    free(ls->derived);
    free(ls->Ap);
    free(ls->Ai);
    free(ls->Ax);
    pp_lcp_lu_sparse_free(ls->sparse_lu);
    memset(ls, 0, sizeof *ls);
}

/* Charge `work` to the call's bound ("Work"): 0 (and ls->work_cut) when it does not fit. */
static int charge(pp_load_sharing *ls, double work)
{
    const double bound = ls->work_bound > 0.0 ? ls->work_bound : LS_WORK;
    if (!(ls->work + work <= bound)) {
        ls->work_cut = 1;
        return 0;
    }
    ls->work += work;
    return 1;
}

/* Room for `count` doubles in *a (holding *capacity): grown only when an island needs it,
 * before the computation that uses it. 0 when out of memory (logged). */
static int grow_matrix(double **a, size_t *capacity, size_t count)
{
    if (count <= *capacity) return 1;
    double *p = realloc(*a, count * sizeof *p);
    if (!p) {
        pp_log(PP_LOG_WARNING, "load sharing: out of memory for %zu doubles; Lemke's answer "
                               "kept", count);
        return 0;
    }
    *a = p;
    *capacity = count;
    return 1;
}

/* ---- The island's matrix: two back-ends of the same steps ------------------------------
 *
 * Dense (column-major n x n, the islands below the by-columns threshold) or by columns
 * (pp_lcp_csc: every diagonal entry present). Each operation the algorithm needs is written
 * once per back-end below; the steps above them do not know which. The dense back-end's
 * operations are the loops load sharing has always run (the same sums in the same order). */
typedef struct ls_matrix {
    int n;
    const double *M;      /* dense, or NULL: */
    const pp_lcp_csc *A;  /* by columns */
    const double *row_sums; /* dense: sum_j |M_ij| as the island's solve formed them
                               (pp_lcp_row_sums_kept), or NULL */
} ls_matrix;

/* w = M z + q (z NULL: w = q) and tau_i = sum_j |M_ij| */
static void residual_and_row_sums(const ls_matrix *mat, const double *q, const double *z,
                                  double *w, double *tau)
{
    const int n = mat->n;
    for (int i = 0; i < n; ++i) {
        w[i] = q[i];
        tau[i] = mat->row_sums ? mat->row_sums[i] : 0.0;
    }
    if (mat->M) {
        const double *M = mat->M;
        if (!mat->row_sums) pp_lcp_row_sums(n, M, tau); /* the same sums, in the same order */
        for (int j = 0; j < n; ++j) /* a column with z_j = 0 would change at most the sign of
                                       a zero w_i */
            if (z && z[j] != 0.0) pp_lcp_vec_axpy(n, w, M + (size_t)j * n, z[j]);
        return;
    }
    const pp_lcp_csc *A = mat->A;
    for (int j = 0; j < n; ++j) {
        const double zj = z ? z[j] : 0.0;
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t) {
            const int i = A->row_index[t];
            if (zj != 0.0) w[i] += A->values[t] * zj;
            tau[i] += fabs(A->values[t]);
        }
    }
}

static double diagonal(const ls_matrix *mat, int i)
{
    if (mat->M) return mat->M[i + (size_t)i * mat->n];
    const pp_lcp_csc *A = mat->A;
    for (int t = A->col_start[i]; t < A->col_start[i + 1]; ++t)
        if (A->row_index[t] == i) return A->values[t];
    return 0.0;
}

/* S = the symmetric part of M on the m indices ls->index (m x m, column-major, in ls->lu) */
static void gather_symmetric(pp_load_sharing *ls, const ls_matrix *mat, int m)
{
    const int n = mat->n;
    if (mat->M) {
        const double *M = mat->M;
        for (int b = 0; b < m; ++b)
            for (int a = 0; a < m; ++a) {
                int i = ls->index[a], j = ls->index[b];
                ls->lu[a + (size_t)b * m] = 0.5 * (M[i + (size_t)j * n] + M[j + (size_t)i * n]);
            }
        return;
    }
    const pp_lcp_csc *A = mat->A;
    memset(ls->lu, 0, (size_t)m * m * sizeof *ls->lu);
    for (int a = 0; a < m; ++a) ls->place[ls->index[a]] = a;
    for (int b = 0; b < m; ++b) {
        const int j = ls->index[b];
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t) {
            const int a = ls->place[A->row_index[t]];
            if (a < 0) continue;
            ls->lu[a + (size_t)b * m] += 0.5 * A->values[t];
            ls->lu[b + (size_t)a * m] += 0.5 * A->values[t];
        }
    }
    for (int a = 0; a < m; ++a) ls->place[ls->index[a]] = -1;
}

/* Factor (M + eps D)_BB for the basis flags `basis`, the basic indices into ls->index:
 * dense LU (ls->lu, ls->piv) or KLU (ls->sparse_lu; refused above PP_LCP_FACTOR_WORK, or when
 * its charge nb * nnz(block) does not fit in the call's LS_WORK, which counts as a block that
 * does not factor). Returns the basis size, or -1 when the block is singular. (A Cholesky
 * factorisation of the mean of the two triangles where only impulses are basic, A_BB +
 * eps I, halved the dense factorisation's work, but its different rounding sent the
 * frictional pouring scene of check_peg_pouring, seed 1, on paths where Lemke pivoted 2x as
 * long: 100 s against 48 s.) */
static int factor_basis(pp_load_sharing *ls, const ls_matrix *mat, double eps,
                        const unsigned char *basis)
{
    const int n = mat->n;
    int nb = 0;
    for (int i = 0; i < n; ++i)
        if (basis[i]) ls->index[nb++] = i;
    if (mat->M) {
        const int *restrict index = ls->index;
        for (int b = 0; b < nb; ++b) {
            const double *restrict col = mat->M + (size_t)index[b] * n;
            double *restrict out = ls->lu + (size_t)b * nb;
            int a = 0;
            for (; a + 4 <= nb; a += 4) { /* four at a time: half the instructions a copy */
                out[a] = col[index[a]];
                out[a + 1] = col[index[a + 1]];
                out[a + 2] = col[index[a + 2]];
                out[a + 3] = col[index[a + 3]];
            }
            for (; a < nb; ++a) out[a] = col[index[a]];
            if (ls->force[index[b]]) out[b] += eps;
        }
        if (nb > 0 && !pp_lcp_lu_factor(nb, ls->lu, ls->piv)) return -1;
        return nb;
    }
    const pp_lcp_csc *A = mat->A;
    pp_lcp_lu_sparse_free(ls->sparse_lu);
    ls->sparse_lu = NULL;
    if (nb == 0) return 0;
    size_t nnz = 0;
    for (int b = 0; b < nb; ++b)
        nnz += (size_t)(A->col_start[ls->index[b] + 1] - A->col_start[ls->index[b]]);
    if (nnz > ls->a_capacity) {
        int *ai = realloc(ls->Ai, nnz * sizeof *ai);
        if (ai) ls->Ai = ai;
        double *ax = realloc(ls->Ax, nnz * sizeof *ax);
        if (ax) ls->Ax = ax;
        if (!ai || !ax) {
            pp_log(PP_LOG_WARNING, "load sharing: out of memory for %zu nonzeros", nnz);
            return -1;
        }
        ls->a_capacity = nnz;
    }
    for (int b = 0; b < nb; ++b) ls->place[ls->index[b]] = b;
    size_t p = 0;
    for (int b = 0; b < nb; ++b) {
        const int j = ls->index[b];
        ls->Ap[b] = (int)p;
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t) {
            const int a = ls->place[A->row_index[t]];
            if (a < 0) continue;
            ls->Ai[p] = a;
            ls->Ax[p++] = a == b && ls->force[j] ? A->values[t] + eps : A->values[t];
        }
    }
    ls->Ap[nb] = (int)p;
    for (int b = 0; b < nb; ++b) ls->place[ls->index[b]] = -1;
    if (!charge(ls, (double)nb * (double)p)) return -1; /* nb * nnz(block), before it runs */
    int refused = 0; /* a refused factorisation counts as a singular block */
    ls->sparse_lu = pp_lcp_lu_sparse_factor(nb, ls->Ap, ls->Ai, ls->Ax, &refused);
    return ls->sparse_lu ? nb : -1;
}

/* b <- (M + eps D)_BB^-1 b with the factors of factor_basis; by columns charged the factors'
 * entries first, 0 (nothing done) when that does not fit in the call's bound */
static int basis_solve(pp_load_sharing *ls, const ls_matrix *mat, int nb, double *b)
{
    if (mat->M) {
        pp_lcp_lu_solve(nb, ls->lu, ls->piv, b);
        return 1;
    }
    if (nb == 0) return 1;
    if (!charge(ls, pp_lcp_lu_sparse_entries(ls->sparse_lu))) return 0;
    pp_lcp_lu_sparse_solve(ls->sparse_lu, b);
    return 1;
}

/* out = M_:B zb + q (z_N = 0): w of the basic solution on every row */
static void basic_residual(pp_load_sharing *ls, const ls_matrix *mat, int nb, const double *q,
                           double *out)
{
    const int n = mat->n;
    for (int i = 0; i < n; ++i) out[i] = q[i];
    if (mat->M) {
        for (int b = 0; b < nb; ++b)
            pp_lcp_vec_axpy(n, out, mat->M + (size_t)ls->index[b] * n, ls->zb[b]);
        return;
    }
    const pp_lcp_csc *A = mat->A;
    for (int b = 0; b < nb; ++b) {
        const int j = ls->index[b];
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t)
            out[A->row_index[t]] += A->values[t] * ls->zb[b];
    }
}

/* 1 when |w_B(z_B)| <= tau on the basic rows (z_B in ls->zb; ls->z is overwritten).
 * w_known: w = M z + q of a z that is z_B on B and exactly 0 off it, formed over the columns
 * with z_j != 0 in increasing j (residual_and_row_sums), or NULL. Its basic rows are the sums
 * below term for term (the same nonzero products added in the same order; the zero entries
 * of z_B add +-0, which leaves a sum alone up to the sign of a zero w_i), so the test reads
 * them there instead of forming them again. Dense, the sums are formed column by column (each
 * row's terms in increasing e as a row-wise loop, so the same bits) into ls->z. */
static int basic_rows_closed(pp_load_sharing *ls, const ls_matrix *mat, int nb, const double *q,
                             const double *w_known)
{
    if (w_known) {
        for (int c = 0; c < nb; ++c)
            if (fabs(w_known[ls->index[c]]) > ls->tau[ls->index[c]]) return 0;
        return 1;
    }
    if (mat->M) {
        const int n = mat->n;
        double *wb = ls->z;
        for (int c = 0; c < nb; ++c) wb[c] = q[ls->index[c]];
        for (int e = 0; e < nb; ++e) {
            const double *col = mat->M + (size_t)ls->index[e] * n, ze = ls->zb[e];
            for (int c = 0; c < nb; ++c) wb[c] += col[ls->index[c]] * ze;
        }
        for (int c = 0; c < nb; ++c)
            if (fabs(wb[c]) > ls->tau[ls->index[c]]) return 0;
        return 1;
    }
    basic_residual(ls, mat, nb, q, ls->z);
    for (int c = 0; c < nb; ++c)
        if (fabs(ls->z[ls->index[c]]) > ls->tau[ls->index[c]]) return 0;
    return 1;
}

static int accept(const ls_matrix *mat, const double *q, const pp_lcp_options *o, double *z,
                  double *w, pp_lcp_result *result)
{
    return mat->M ? pp_lcp_accept_sums(mat->n, mat->M, mat->row_sums, q, 0.0, o, z, w, result)
                  : pp_lcp_csc_accept(mat->A, q, 0.0, o, z, w, result);
}

/* ---- The steps ------------------------------------------------------------------------ */

/* Rank of the symmetric positive semidefinite m x m matrix S (column-major, overwritten) by
 * Cholesky with diagonal pivoting, stopping when the largest remaining pivot is at most
 * LS_RANK times the largest diagonal entry. */
static int psd_rank(int m, double *S)
{
    double dmax = 0.0;
    for (int i = 0; i < m; ++i) dmax = fmax(dmax, S[i + (size_t)i * m]);
    if (!(dmax > 0.0)) return 0;
    const double floor = LS_RANK * dmax;
    for (int k = 0; k < m; ++k) {
        int p = k;
        for (int i = k + 1; i < m; ++i)
            if (S[i + (size_t)i * m] > S[p + (size_t)p * m]) p = i;
        double d = S[p + (size_t)p * m];
        if (!(d > floor)) return k;
        if (p != k) { /* symmetric swap of rows and columns k and p (the trailing block) */
            for (int i = 0; i < m; ++i) {
                double t = S[i + (size_t)k * m];
                S[i + (size_t)k * m] = S[i + (size_t)p * m];
                S[i + (size_t)p * m] = t;
            }
            for (int j = 0; j < m; ++j) {
                double t = S[k + (size_t)j * m];
                S[k + (size_t)j * m] = S[p + (size_t)j * m];
                S[p + (size_t)j * m] = t;
            }
        }
        double r = sqrt(d);
        for (int i = k + 1; i < m; ++i) S[i + (size_t)k * m] /= r;
        for (int j = k + 1; j < m; ++j) {
            double f = S[j + (size_t)k * m];
            if (f == 0.0) continue;
            for (int i = k + 1; i < m; ++i) S[i + (size_t)j * m] -= S[i + (size_t)k * m] * f;
        }
    }
    return m;
}

/* One step of (3): z_B <- (M + eps D)_BB^-1 (-q_B + eps D_B z_B) in ls->rhs (basis order);
 * 0 when the work bound refused its solve. */
static int tikhonov_step(pp_load_sharing *ls, const ls_matrix *mat, int nb, const double *q,
                         double eps)
{
    for (int b = 0; b < nb; ++b) {
        int i = ls->index[b];
        ls->rhs[b] = -q[i] + (ls->force[i] ? eps * ls->zb[b] : 0.0);
    }
    return basis_solve(ls, mat, nb, ls->rhs);
}

/* The solution of (1) on `basis`: factored, z_B(eps) in ls->zb. Returns its size, or -1 when
 * the block is singular (or refused) or the solution not finite. */
static int compliant_solve(pp_load_sharing *ls, const ls_matrix *mat, const double *q,
                           double eps, const unsigned char *basis)
{
    int nb = factor_basis(ls, mat, eps, basis);
    if (nb < 0) return -1;
    for (int b = 0; b < nb; ++b) ls->zb[b] = 0.0;
    if (!tikhonov_step(ls, mat, nb, q, eps)) return -1;
    memcpy(ls->zb, ls->rhs, (size_t)nb * sizeof *ls->zb);
    if (!pp_lcp_all_finite((size_t)nb, ls->zb)) return -1;
    return nb;
}

/* The flips of a primal-dual active-set step from the solution compliant_solve left: basic
 * z_i < 0 out and nonbasic w_i < 0 in (to the rounding allowances of LS_NEGATIVE and
 * ls->tau). Returns their number (0: z(eps) solves the compliant LCP). any: the caller asks
 * only whether the basis stands (a kept basis tried as it stands, which is dropped when it
 * does not): a flipping basic z answers 1 before w_N is formed (715 of the 721 kept bases
 * refused in 150 steps of pile30 had one), `basis` then left as it was. */
static int compliant_flips(pp_load_sharing *ls, const ls_matrix *mat, const double *q, int nb,
                           unsigned char *basis, int any)
{
    const int n = mat->n;
    const double zmax = pp_lcp_inf_norm(nb, ls->zb);
    for (int b = 0; any && b < nb; ++b)
        if (ls->zb[b] < -LS_NEGATIVE * zmax) return 1;
    /* w_N = M_NB z_B + q_N (z_N = 0, so the compliance adds nothing there), into ls->z */
    basic_residual(ls, mat, nb, q, ls->z);
    int flips = 0;
    for (int i = 0; i < n; ++i)
        if (!basis[i] && ls->z[i] < -LS_ROUNDING / LS_CLOSED * ls->tau[i]) {
            basis[i] = 1;
            ++flips;
        }
    for (int b = 0; b < nb; ++b)
        if (ls->zb[b] < -LS_NEGATIVE * zmax) {
            basis[ls->index[b]] = 0;
            ++flips;
        }
    return flips;
}

/* One primal-dual active-set step on the compliant LCP(M + eps D, q) (a semismooth Newton
 * step on min(z, w) = 0): the solution of (1) on `basis`, then the basis flipped where it is
 * infeasible. Returns the number of flips (0: z(eps) solves the compliant LCP, the factors
 * of its block kept, its basic part in ls->zb and *nb its size), or -1 when the block is
 * singular; `any` as for compliant_flips. */
static int compliant_step(pp_load_sharing *ls, const ls_matrix *mat, const double *q,
                          double eps, unsigned char *basis, int any, int *nb_out)
{
    int nb = compliant_solve(ls, mat, q, eps, basis);
    if (nb < 0) return -1;
    int flips = compliant_flips(ls, mat, q, nb, basis, any);
    *nb_out = nb;
    return flips;
}

/* eps = LS_EPS max_i A_ii over the impulse unknowns; 0 when there is none */
static double compliance(const pp_load_sharing *ls, const ls_matrix *mat)
{
    double dmax = 0.0;
    for (int i = 0; i < mat->n; ++i)
        if (ls->force[i]) dmax = fmax(dmax, diagonal(mat, i));
    return LS_EPS * dmax;
}

/* z0 of (2) on the compliant basis B = ls->basis (factored, of size nb; ls->zb: z_B(eps)),
 * by (3) on an offset, into ls->z; then checked as an answer of LCP(M, q): the acceptance of
 * every solve, rel(z) <= rel_max and r(z) <= res_max. z_lemke: Lemke's answer (the reference
 * when it lives on B), or NULL; w_lemke its w = M z_lemke + q (residual_and_row_sums). 1
 * when accepted (*check: its residual fields over `base`), *lemke_reference set to whether
 * Lemke's answer was the reference. */
static int compliant_limit(pp_load_sharing *ls, const ls_matrix *mat, const double *q,
                           double eps, int nb, const double *z_lemke, const double *w_lemke,
                           const pp_lcp_options *o, double rel_max, double res_max,
                           int *lemke_reference,
                           pp_lcp_result *check)
{
    const int n = mat->n;
    const unsigned char *basis = ls->basis;
    /* (3) in two parts. A right-hand side that is consistent only to rounding (gaps of
     * 1e-13 m over h; q_B with a part along L of 1e-16 relative) makes the iterates of (3)
     * drift by that inconsistency / eps per step and never settle. So (3) runs on the
     * offset d = z - z_r from a reference z_r that solves the B-system exactly for
     * q'_B = -M_BB z_r,B: then (3) is d <- eps (M + eps D)^-1 D d from d = -z_r, which
     * converges to minus z_r's component in null(M_BB) (along V), and z0 = z_r + d. The
     * reference is Lemke's z_L when it lives on B (z_L,N = 0); otherwise the iterate of (3)
     * on q once its change stops shrinking. q' differs from q by w_B(z_r), which must be
     * within the rows' closed tolerance tau (else Lemke's answer is kept). A gain: M_BB z0 =
     * M_BB z_r to rounding, so where z_r is Lemke's answer the velocities are its own. */
    int reference_lemke = z_lemke != NULL, zero_off_basis = reference_lemke;
    for (int i = 0; i < n && reference_lemke; ++i)
        if (!basis[i] && z_lemke[i] != 0.0) {
            zero_off_basis = 0;
            if (z_lemke[i] > 0.0) reference_lemke = 0;
        }
    *lemke_reference = reference_lemke;
    if (reference_lemke) {
        for (int c = 0; c < nb; ++c) ls->zb[c] = z_lemke[ls->index[c]];
    } else {
        double previous = INFINITY;
        for (int it = 0; it < LS_ITERATIONS; ++it) {
            if (!tikhonov_step(ls, mat, nb, q, eps)) return 0;
            double change = 0.0; /* max_d(x, change): fmax's value (a NaN x leaves change)
                                    without its call into libm */
            for (int c = 0; c < nb; ++c) {
                change = max_d(fabs(ls->rhs[c] - ls->zb[c]), change);
                ls->zb[c] = ls->rhs[c];
            }
            if (!pp_lcp_all_finite((size_t)nb, ls->zb)) return 0;
            const double size = pp_lcp_inf_norm(nb, ls->zb);
            if (change <= LS_SETTLED * size || (change <= LS_FLOOR * size && change > 0.25 * previous))
                break;
            /* A change that no longer shrinks at all is the drift of an inconsistent q_B
             * (above): along null(M_BB), where it leaves w_B(z_r) alone and the offset
             * iteration removes it, and more steps only add to it. Measured 5e-8 ||z|| a
             * step on the 30-box pile's largest island, which ran all LS_ITERATIONS solves
             * here every step. Whether z_r is a reference is the check of w_B below. */
            if (change >= LS_DRIFT * previous) break;
            previous = change;
        }
    }
    /* q' - q = w_B(z_r) within the closed tolerance; where z_r is Lemke's answer and that
     * is 0 off B, w_lemke (its w) holds it */
    if (!basic_rows_closed(ls, mat, nb, q, reference_lemke && zero_off_basis ? w_lemke : NULL))
        return 0;
    double *reference = ls->z;
    memcpy(reference, ls->zb, (size_t)nb * sizeof *reference);
    for (int c = 0; c < nb; ++c) ls->zb[c] = -reference[c];
    const double size = pp_lcp_inf_norm(nb, reference);
    int settled = 0;
    double previous = INFINITY;
    for (int it = 0; it < LS_ITERATIONS && !settled; ++it) {
        for (int c = 0; c < nb; ++c)
            ls->rhs[c] = ls->force[ls->index[c]] ? eps * ls->zb[c] : 0.0;
        if (!basis_solve(ls, mat, nb, ls->rhs)) return 0;
        double change = 0.0;
        for (int c = 0; c < nb; ++c) {
            change = max_d(fabs(ls->rhs[c] - ls->zb[c]), change);
            ls->zb[c] = ls->rhs[c];
        }
        if (!pp_lcp_all_finite((size_t)nb, ls->zb)) return 0;
        settled = change <= LS_SETTLED * size ||
                  (change <= LS_FLOOR * size && change > 0.25 * previous);
        previous = change;
    }
    if (!settled) return 0;
    for (int c = 0; c < nb; ++c) ls->zb[c] += reference[c];

    /* z0: rounding of zeros cleared; then the acceptance of every solve, on (M, q) */
    double zmax = pp_lcp_inf_norm(nb, ls->zb);
    for (int i = 0; i < n; ++i) ls->z[i] = 0.0;
    for (int b = 0; b < nb; ++b) {
        if (ls->zb[b] < -LS_NEGATIVE * zmax) return 0;
        ls->z[ls->index[b]] = ls->zb[b] > 0.0 ? ls->zb[b] : 0.0;
    }
    return accept(mat, q, o, ls->z, ls->w, check) && check->relative_residual <= rel_max &&
           check->residual <= res_max;
}

/* Lemke on the compliant LCP(M + eps D, q) from `basis` (step 2), at most LS_LEMKE_PIVOTS
 * pivots; its basis left in `basis`, refactored (*nb its size). 0 when it did not solve. */
static int compliant_lemke(pp_load_sharing *ls, pp_lcp_workspace *lcp, const ls_matrix *mat,
                           const double *q, double eps, const pp_lcp_options *o,
                           unsigned char *basis, int *nb)
{
    const int n = mat->n;
    /* by columns: not run. Measured on heap20's island (678 unknowns, standard model): Lemke
     * on M + eps D by columns (pp_lcp_solve_csc) within LS_LEMKE_PIVOTS did not reach the
     * compliant LCP's basis and cost 4.7 ms a step (the rest of the step: 0.7 ms); unbounded
     * it took ~700 pivots (55 ms a step) to a basis on which the limit has negative loads. */
    if (!mat->M) return 0;
    if (!grow_matrix(&ls->Me, &ls->Me_capacity, (size_t)n * n)) return 0;
    memcpy(ls->Me, mat->M, (size_t)n * n * sizeof *ls->Me);
    for (int i = 0; i < n; ++i)
        if (ls->force[i]) ls->Me[i + (size_t)i * n] += eps;
    pp_lcp_options lo = *o;
    lo.warm_start = 1;
    /* bounded: from a basis this close to the limit's a few pivots suffice; an island
     * where they do not keeps Lemke's answer (a settled heap of 20 boxes, 678 unknowns,
     * took 0.58 s a step here without the bound, 200 x the rest of its step) */
    lo.max_pivots = LS_LEMKE_PIVOTS;
    pp_lcp_result r;
    if (pp_lcp_solve_lemke(lcp, n, ls->Me, q, &lo, basis, ls->z, &r) != PP_OK) return 0;
    *nb = factor_basis(ls, mat, eps, basis);
    if (*nb < 0) return 0;
    for (int b = 0; b < *nb; ++b) ls->zb[b] = ls->z[ls->index[b]];
    return 1;
}

pp_load_sharing_outcome pp_load_sharing_apply(pp_load_sharing *ls, pp_lcp_workspace *lcp,
                                              int n, const double *M, const pp_lcp_csc *A,
                                              const double *q, int contacts, int k,
                                              int freedoms, const pp_lcp_options *o,
                                              const unsigned char *lemke_basis, double *z,
                                              pp_lcp_result *result)
{
    PP_ASSERT(ls->capacity >= n && n >= 1 && (M || (A && A->n == n)),
              "pp_load_sharing_apply: workspace reserved, a matrix");
    const ls_matrix mat = {n, M, A, M ? pp_lcp_row_sums_kept(lcp, n, M) : NULL};
    double *w = ls->w, *tau = ls->tau;
    const int start = ls->start;
    ls->start = 0;
    ls->found = 0;
    ls->work = 0.0;
    ls->work_cut = 0;
    if (M && n > LS_MAX_UNKNOWNS) return PP_LOAD_KEPT;

    /* w = M z + q and the row sizes s_i = |q_i| + (sum_j |M_ij|) ||z|| (lcp.h) */
    const double znorm = pp_lcp_inf_norm(n, z);
    residual_and_row_sums(&mat, q, z, w, tau);
    for (int i = 0; i < n; ++i) tau[i] = LS_CLOSED * (fabs(q[i]) + tau[i] * znorm);

    /* The active contacts' spanning columns: p, and beta_1 (beta_2 for k >= 3) */
    int m = 0;
    for (int t = 0; t < contacts; ++t) {
        int p = ls->normal[t];
        if (!(z[p] > 0.0 || w[p] <= tau[p])) continue;
        ls->index[m++] = p;
        if (ls->beta[t] >= 0) {
            ls->index[m++] = ls->beta[t];
            if (k >= 3) ls->index[m++] = ls->beta[t] + 1;
        }
    }
    if (m < 2) return PP_LOAD_UNIQUE;
    /* m columns in a space of `freedoms` dimensions are dependent without a test (a face on
     * a face: 12 columns for 6 freedoms); otherwise the test, dense on the m x m block (by
     * columns only up to LS_MAX_UNKNOWNS of them: above, Lemke's answer is kept) */
    if (m <= freedoms) {
        if (!M && m > LS_MAX_UNKNOWNS) return PP_LOAD_KEPT;
        if (!grow_matrix(&ls->lu, &ls->lu_capacity, (size_t)m * m)) return PP_LOAD_KEPT;
        gather_symmetric(ls, &mat, m);
        if (psd_rank(m, ls->lu) == m) return PP_LOAD_UNIQUE;
    }

    /* Redundant: the compliance limit. eps from the largest impulse diagonal. */
    const double eps = compliance(ls, &mat);
    if (!(eps > 0.0)) return PP_LOAD_KEPT;

    /* 1. Lemke's basis with the closed, unloaded supports' normals added (into ls->derived),
     * ... */
    unsigned char *basis = ls->basis, *derived = ls->derived;
    for (int i = 0; i < n; ++i) derived[i] = (lemke_basis && lemke_basis[i]) || z[i] > 0.0;
    for (int t = 0; t < contacts; ++t)
        if (w[ls->normal[t]] <= tau[ls->normal[t]]) derived[ls->normal[t]] = 1;
    /* 0. ... but first the compliant basis of this island's last solve where the caller has
     * it (ls->start: pp_peg_solve keeps it with the warm start, by constraint identity) and
     * it is another: kept if it is the compliant LCP's basis as it stands (no flip) */
    if (M && !grow_matrix(&ls->lu, &ls->lu_capacity, (size_t)n * n)) return PP_LOAD_KEPT;
    int nb = -1;
    if (start && memcmp(basis, derived, (size_t)n) != 0 &&
        compliant_step(ls, &mat, q, eps, basis, 1, &nb) != 0)
        nb = -1;
    if (nb < 0) memcpy(basis, derived, (size_t)n);
    /* ... and the primal-dual active-set steps from it */
    for (int step = 0; step < LS_ACTIVE_SET_STEPS && nb < 0; ++step) {
        int flips = compliant_step(ls, &mat, q, eps, basis, 0, &nb);
        if (flips < 0) break;          /* singular block */
        if (flips > 0) nb = -1;        /* another basis to try */
    }
    /* 2. otherwise the compliant LCP's own basis, by Lemke from that basis */
    if (nb < 0 && !compliant_lemke(ls, lcp, &mat, q, eps, o, basis, &nb)) return PP_LOAD_KEPT;
    ls->found = 1; /* basis: the compliant LCP's, for the next solve's start */

    /* the limit, as accurate as Lemke's answer or within LS_ACCURACY */
    pp_lcp_result check = *result;
    int lemke_reference = 0;
    if (!compliant_limit(ls, &mat, q, eps, nb, z, w, o,
                         fmax(result->relative_residual, LS_ACCURACY),
                         fmax(result->residual, LS_ACCURACY * pp_lcp_inf_norm(n, q)),
                         &lemke_reference, &check))
        return PP_LOAD_KEPT;

    double change = 0.0;
    for (int i = 0; i < n; ++i) change = max_d(fabs(ls->z[i] - z[i]), change);
    const double same = LS_SAME * fmax(znorm, pp_lcp_inf_norm(n, ls->z));
    if (change <= same) return PP_LOAD_SAME;
    /* Only impulses moved (the non-impulse unknowns, sigma, slacks, joint rows, kept)?
     * Then z0 - z_L is in null(M_BB) with its sigma part 0, so its impulse part d_F has
     * A d_F = 0 to rounding (the force rows of M_BB d), d_F^T A d_F = |W^1/2 G d_F|^2 = 0:
     * the velocities are the same. */
    int impulses_only = lemke_reference;
    for (int i = 0; i < n && impulses_only; ++i)
        if (!ls->force[i] && fabs(ls->z[i] - z[i]) > same) impulses_only = 0;
    memcpy(z, ls->z, (size_t)n * sizeof *z);
    *result = check;
    return impulses_only ? PP_LOAD_SHARED_IMPULSES : PP_LOAD_SHARED;
}

/* Without Lemke's answer (an island by columns): primal-dual active-set steps on the
 * compliant LCP from ls->basis, at most `steps` factorisations (1: the basis must be the
 * compliant LCP's as it stands), the rows' sizes s_i taken at ||z(eps)||; then the limit and
 * the exact acceptance on LCP(A, q) within LS_ACCURACY. */
static pp_load_sharing_outcome without_lemke(pp_load_sharing *ls, const pp_lcp_csc *A,
                                             const double *q, const pp_lcp_options *o,
                                             int steps, double *z, pp_lcp_result *result)
{
    const int n = A->n;
    PP_ASSERT(ls->capacity >= n && n >= 1, "load sharing: workspace reserved");
    const ls_matrix mat = {n, NULL, A, NULL};
    const double started = pp_lcp_clock();
    ls->found = 0;
    ls->work = 0.0;
    ls->work_cut = 0;
    const double eps = compliance(ls, &mat);
    if (!(eps > 0.0)) return PP_LOAD_KEPT;
    /* the row sums of |M| once (in ls->w until the acceptance overwrites it) */
    residual_and_row_sums(&mat, q, NULL, ls->rhs, ls->w);
    int nb = -1;
    for (int step = 0; step < steps && nb < 0; ++step) {
        nb = compliant_solve(ls, &mat, q, eps, ls->basis);
        if (nb < 0) return PP_LOAD_KEPT;
        const double znorm = pp_lcp_inf_norm(nb, ls->zb);
        for (int i = 0; i < n; ++i) ls->tau[i] = LS_CLOSED * (fabs(q[i]) + ls->w[i] * znorm);
        if (compliant_flips(ls, &mat, q, nb, ls->basis, 0) != 0) nb = -1;
    }
    if (nb < 0) return PP_LOAD_KEPT;
    ls->found = 1;
    pp_lcp_result check;
    memset(&check, 0, sizeof check);
    int lemke_reference;
    if (!compliant_limit(ls, &mat, q, eps, nb, NULL, NULL, o, LS_ACCURACY,
                         LS_ACCURACY * pp_lcp_inf_norm(n, q), &lemke_reference, &check)) {
        ls->found = 0;
        return PP_LOAD_KEPT;
    }
    memcpy(z, ls->z, (size_t)n * sizeof *z);
    check.status = PP_LCP_SOLVED;
    check.attempts = 1;
    check.seconds = pp_lcp_clock() - started;
    *result = check;
    return PP_LOAD_SHARED;
}

pp_load_sharing_outcome pp_load_sharing_kept(pp_load_sharing *ls, const pp_lcp_csc *A,
                                             const double *q, const pp_lcp_options *o,
                                             double *z, pp_lcp_result *result)
{
    pp_load_sharing_outcome out = without_lemke(ls, A, q, o, 1, z, result);
    if (out == PP_LOAD_SHARED) result->warm_started = 1;
    return out;
}

pp_load_sharing_outcome pp_load_sharing_cold(pp_load_sharing *ls, const pp_lcp_csc *A,
                                             const double *q, int contacts, int k,
                                             const pp_lcp_options *o, double *z,
                                             pp_lcp_result *result)
{
    /* the crash basis: every contact closed or approaching (q_p <= 0) carries a load, and
     * its friction sticks, every direction basic (the steps take out those with beta < 0,
     * the directions along the small slip); sigma, and everything of the others, nonbasic */
    memset(ls->basis, 0, (size_t)A->n);
    for (int t = 0; t < contacts; ++t) {
        const int p = ls->normal[t];
        if (!(q[p] <= 0.0)) continue;
        ls->basis[p] = 1;
        for (int l = 0; ls->beta[t] >= 0 && l < k; ++l) ls->basis[ls->beta[t] + l] = 1;
    }
    return without_lemke(ls, A, q, o, LS_COLD_STEPS, z, result);
}
