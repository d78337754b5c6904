/*
 * The sticking solve: a settled island's Stewart–Trinkle LCP answered through the convex
 * problem of its sticking contacts, before Lemke (peg_mlcp.c; docs/performance.md "The
 * sticking solve of settled heaps").
 *
 * The LCP (ST96 Eq 29; PEG Eqs 39–49 with K = 0) in z = (z_F, z_S), F the impulses (normal p
 * and friction pyramid beta of every contact), S the sliding speeds sigma:
 *     w_F = A_FF z_F + A_FS z_S + q_F,   A_FF = G^T W G symmetric PSD, A_FS = [0; E]
 *     w_S = A_SF z_F + q_S,               A_SF = [U, -E^T]  (mu p - sum beta), q_S = 0
 * with 0 <= z ⊥ w >= 0. At rest it is hugely degenerate (a box face on a face: 4 corners for
 * 3 freedoms of its normal impulses; friction of two sticking supports of one body), its
 * solution set is a polyhedron, and Lemke returns one of its vertices, a different one for
 * each 1e-10 change of q: every step of a settled heap is then cold (thousands of pivots).
 *
 * The convex problem. Consider the QP of the sticking impulses
 *     min 1/2 z_F^T A_FF z_F + q_F^T z_F   s.t.  z_F >= 0,  A_SF z_F + q_S >= 0,        (1)
 * (the friction impulses inside each contact's pyramid). Its KKT conditions, with the
 * multipliers lambda >= 0 of the cone rows, are the monotone LCP in x = (z_F, lambda):
 *     [ A_FF  -A_SF^T ] [ z_F    ]   [ q_F ]
 *     [ A_SF   0      ] [ lambda ] + [ q_S ] = v >= 0,  x >= 0,  x^T v = 0.              (2)
 * Its matrix Q differs from ST's A only in the S columns: -A_SF^T = [-mu; E] against A_FS =
 * [0; E], i.e. only in the p rows (-mu lambda instead of 0). Hence: if x solves (2) and every
 * contact with lambda > 0 carries no normal impulse (p = 0, and then beta = 0 from its cone
 * row), z = (z_F, sigma = lambda) solves ST's LCP exactly: w_beta and w_S are the same rows;
 * w_p = v_p + mu lambda >= v_p >= 0, and p w_p = p v_p + mu p lambda = 0. A sticking contact
 * has lambda = 0, an unloaded one may have lambda = its sliding speed (an open contact whose
 * bodies move tangentially). Where a loaded contact must slide (lambda > 0 and p > 0: a block
 * on a steep incline) (2) is the answer of another law (it slows the normal impulse by mu
 * lambda), not ST's. Such contacts are then put in ST's form: their S column is A's own
 * (A_FS, with D = 0 there), the problem is (2) for the others and ST's LCP for them, and its
 * answer is ST's exactly where no contact still in the form of (2) is loaded with lambda > 0.
 * On heap50's first steps 1-17 of ~330 contacts must slide (measured: lambda up to 2.7e-4 of
 * ||x||, the heap moving at 1e-4-1e-3 m/s); at most STICK_SLIDE_ROUNDS such rounds of Lemke,
 * STICK_INTERIOR_SLIDE_ROUNDS of the interior-point solve.
 *
 * Which solution. (1) has a set of solutions (A_FF singular); like load sharing
 * (lcp_load_sharing.c, README "Redundant supports") the answer is the limit of a uniform
 * compliance eps on the impulses, eps -> 0: the solution of (1) with A_FF + eps I, which for
 * a convex QP tends to the minimum-norm point of its solution set (Tikhonov). When every
 * contact sticks this is exactly load sharing's z0 (the compliant LCP on a basis with no
 * sigma basic is (2) with lambda = 0). It is continuous in q on a fixed active set, so a
 * resting island's next step is solved by the same active set: one factorisation, no flip.
 * (On heap20, lambda of the loaded contacts on Lemke's answer of (2) + eps D was 5.7e-3, 1e-4,
 * 1e-6, 8.7e-9, 1.1e-10 of ||z|| for eps = 1e-4 ... 1e-12 max A_ii: O(eps), so in the limit
 * every loaded contact sticks there: a sticking answer exists.)
 *
 * How it is found (pp_sticking_island). Lemke on the monotone LCP (2) + eps D by columns
 * (pp_lcp_solve_csc: Q + eps D is positive semidefinite, so Lemke ends on a solution, not on a
 * secondary ray as ST's LCP can on heap50), from the caller's basis, else from w basic:
 * heap20 ~800 pivots where ST's Lemke takes ~940, heap50 2 600-8 200 where ST's takes
 * 17 000-100 000. Then active-set steps from its basis: x_B from (Q + eps D)_BB x_B = -q_B
 * (D = I on F, 0 on S), the limit eps -> 0 on that basis by iterated Tikhonov on one KLU
 * factorisation (lcp_load_sharing.c Eq 3, run as an offset from a reference: basis_limit),
 * and the unknowns infeasible at the limit (basic x_i < 0, nonbasic v_i < 0) change side:
 * all at once while their number falls (or STICK_FREE_TRIES more steps), else the one of least
 * index, and not at all when there are more than STICK_FLIP_MAX. (Q + eps D)_BB = [[H, -C^T],
 * [C, 0]] with H positive definite is nonsingular iff C (the basic cone rows over the basic
 * impulses) has full row rank; the cone rows of different contacts have disjoint columns, so
 * it is when each basic lambda has a basic impulse of its contact: a lambda whose contact has
 * none is made nonbasic (v_S = 0 there). A warm start (the active set the island's last step
 * kept) is tried first as it stands: one factorisation, no Lemke. Started from a crash basis
 * instead of Lemke's, these steps did not converge on heap20 (hundreds of flips a step).
 *
 * The interior-point solve first (interior_rounds; lcp_interior.c, docs/performance.md "An
 * interior-point solve of the sticking LCP"). Before Lemke on Q, where the kept set failed,
 * Mehrotra's predictor-corrector on (2) + eps D with eps = STICK_INTERIOR_EPS max A_ii (D = I
 * on F and on lambda), to a gap of STICK_INTERIOR_GAP, its answer z = (z_F, sigma = lambda)
 * taken as it is: its residual on ST's LCP is bounded by eps, not by the gap (rel(z) 9e-11 -
 * 1.6e-10 on the heaps at 1e-10; at 1e-8 the O(eps) lambda of loaded contacts and eps z_F
 * put it at 3e-9).
 * Its active set is not a vertex (the interior point is the analytic centre of the solution
 * set: every redundant support loaded, degenerate pairs at ~sqrt(gap)), and the limit on it
 * is infeasible on the heaps (179 unknowns down to -0.94 ||x|| on heap20), so it is no
 * start for the steps below; one step of the limit on it is tried as a polish (exact where
 * it is an answer: a plate, a box) and the interior answer kept otherwise. Loaded contacts
 * with lambda > 0 go to ST's form for the next round as below; the solve then runs on a
 * problem no longer monotone in their columns, and converged there on every heap LCP tried.
 *
 * Rounds with sliding contacts. A round whose problem holds contacts in ST's form is not
 * monotone in their columns, and Mehrotra's corrector may stall there (the crash demo's
 * impact, standard model, n = 4 980: round 2 at rel(z) 4.8e-7 after its 80 iterations). Such
 * a round that marks nothing and is refused is run once more ("creep"): cold, by the
 * first-order corrector (lcp_interior.c "Not monotone"), to at most STICK_SLIDE_ITERATIONS,
 * with the compliance STICK_SLIDE_EPS on the impulses and lambda and none on the sliding
 * contacts' sigma (their rows are then ST's own, as in sticking_steps' blocks); there its
 * answer is accepted at rel(z) 2.8e-10 - 3.4e-10 after 206 - 300 iterations (the island's
 * solve 2.5 - 3.9 s; docs/performance.md "The crash impact's first solve by the sticking
 * solve's creeping round"). It ends at its first iterate the round's end would take, tested
 * every STICK_SLIDE_TEST_EVERY iterations (creep_answered): on the crash's impact that is
 * iteration 50-60 (rel(z) 9.6e-10, 6.6e-10) where the 300 gave 1.4e-10, and the demo's steps
 * 15-19 are then exact clock-free (docs/performance.md "The crash impact's steps 15-19 solve
 * by solve"). Not first: on heap50's first LCP Mehrotra's round 1 is accepted
 * in 46 iterations where the first-order one stalls at rel 7e-6 after 300 (and three more
 * rounds). With STICK_INTERIOR_EPS on the impulses and sigma the crash's creeping round
 * ended at rel(z) 8.9e-9 (200 iterations), with 1e-11 on both at 1.6e-9 (300), refused; at
 * 1e-12 each round marked more contacts and none was taken.
 *
 * Not warm at the interior's eps. Q + eps D is positive definite on the monotone part, so
 * (2) + eps D has one solution, and its active set solved in one factorisation would give
 * it; but not from the interior answer: at its gap ~500 of heap50's ~2 000 unknowns are
 * degenerate pairs (x_i ~ v_i ~ 1e-9 ... 1e-11 of ||x||, ||q||; still there at a gap of
 * 1e-22, where the solve stalls), and (Q + eps D)_BB, of condition ~1/eps along the
 * redundant supports' stress modes, turns the residual any partition leaves in them into
 * O(1) moves: on the same LCP the block solve on the interior answer's own active set has
 * 359 unknowns infeasible, down to -0.74 ||x|| (the plain partition 527; at a gap of 1e-22
 * 359), and block principal pivoting from it did not converge (8 factorisations, ~2 300 flips
 * on heap50; 3 000 factorisations on heap20). Between steps q moves by 4e-4 ... 8e-4 of
 * ||q|| on heap50 anyway. What does carry over is the answer itself where a re-linearisation
 * iterate solves the same LCP again (pp_sticking_island, "The kept answer").
 *
 * Accuracy. The limit on the basis Lemke finds at eps is not feasible to rounding on the
 * heaps: on heap20 114 unknowns sit at -1.6e-8 of ||x|| (the same for eps = 1e-6 and 1e-8, so
 * the compliant basis is not quite the limit's), and flipping them, all or one at a time, did
 * not converge (docs/performance.md). They are taken as zeros (STICK_ROUNDING = 1e-7), and
 * the answer on ST's LCP then has rel(z) ~2e-10 (Lemke's: ~1e-13). So it is applied only if
 * the acceptance of every solve takes it (pp_lcp_csc_accept on ST's own A and q with the
 * solve's options: rel(z) <= residual_tol, 1e-9 by default, r(z) <= PP_LCP_DATA_RESIDUAL
 * ||q||): the same standard as Lemke's answers, not load sharing's tighter 1e-11. Otherwise
 * the caller's Lemke runs, and the best of the answers the rounds formed and did not take
 * (least r(z) on ST's A, q among the usable, r(z) <= ||q||_inf, as the fallback orders its
 * iterates: keep_best) is the caller's for the bounded fallback's start, should Lemke not
 * finish either: at heap50's sliding onset
 * the interior rounds reach rel(z) 1e-7 ... 5e-6 where the fallback's own sweeps end at 1e-4
 * (docs/performance.md "The sticking solve's best round as the fallback's start").
 */
#include "lcp_sticking.h"

#include "lcp_fallback_bodies.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The compliance, relative to the largest impulse diagonal of A. At 1e-6 heap50's compliant
 * basis was not the limit's (261 unknowns infeasible at the limit: soft modes); at 1e-9 and
 * 1e-10 heap20's active sets did not carry over from step to step; 1e-8 served both. */
#define STICK_EPS 1e-8
/* Rounding of a row or of x at the limit, relative to its size (or ||x||): below
 * -STICK_ROUNDING it is infeasible, above it a zero (the header, "Accuracy"). */
#define STICK_ROUNDING 1e-7
/* Iterated-Tikhonov solves of one basis, and the change (relative to ||x||) at which they
 * have settled; they also stop once the change no longer shrinks (drift, lcp_load_sharing.c). */
#define STICK_ITERATIONS 40
#define STICK_SETTLED 1e-14
#define STICK_DRIFT 0.5
/* Active-set steps from the kept active set (warm), from Lemke's answer on Q (cold). */
#define STICK_WARM_STEPS 1
#define STICK_COLD_STEPS 4
/* The interior-point solve of (2) (lcp_interior.c): its compliance relative to the largest
 * impulse diagonal of A, the gap x^T v / n it runs to (relative to ||x|| ||q||), its
 * iterations a round. */
#define STICK_INTERIOR_EPS 1e-10
#define STICK_INTERIOR_GAP 1e-18
#define STICK_INTERIOR_ITERATIONS 80
/* The same in a round with contacts in ST's form (the header, "Rounds with sliding
 * contacts"): its compliance and its iterations. */
#define STICK_SLIDE_EPS 1e-11
#define STICK_SLIDE_ITERATIONS 300
/* Every this many iterations the creeping round's iterate is tested as the round's end would
 * test it (creep_answered): marks nothing and accepted, the round ends there. */
#define STICK_SLIDE_TEST_EVERY 10
/* The kept answer (pp_sticking_island) is tried where q is the last answer's to this, relative
 * to ||q||_inf: heap50's re-linearisation iterates solve the same LCP again with q within
 * 3e-14 ... 2.9e-11 of the last; heap20's resting steps (the sticking path forced) change q
 * by 4e-8 ... 1.3e-6 a step, and there the last step's answer, still accepted (rel(z) up to
 * 9.2e-10), let the fastest body gain 1.7e-8 m/s a step against 4e-9 with a solve a step. */
#define STICK_ANSWER_SAME 1e-10
/* Where the kept answer is matched across an iterate whose list gained or lost a set
 * (pp_sticking_island, kept_answer), an unknown's diagonal of A agrees with its match's to
 * this, relative to the largest: A moves with the predicted pose by ~6e-10 of it between
 * heap50's iterates (3.5e-9 on 5.5), so STICK_ANSWER_SAME would part the same unknown from
 * itself; q alone matched a run of friction rows with |q| < 1e-10 to the wrong neighbours
 * (one trajectory's step 5: the kept answer then refused at r 1.9e-3). */
#define STICK_ANSWER_MATCH 1e-6
/* Lemke's pivots on Q, times n. */
#define STICK_LEMKE_PIVOTS 6
/* Rounds of Lemke on Q with more contacts in ST's form (sliding). */
#define STICK_SLIDE_ROUNDS 3
/* Rounds of the interior-point solve with more contacts in ST's form. Each round that marks
 * a contact adds at least one to ST's form, so the rounds end; at heap50's sliding onset
 * (check_relinearize_order, step 18 of 20) the rounds marked 1, 2, 2, 6 contacts and the
 * fifth round was an answer, where after 3 Lemke on Q (778 + 7 121 pivots) and on ST's LCP
 * (75 581 pivots in all) did not answer and the step was regularised. */
#define STICK_INTERIOR_SLIDE_ROUNDS 8
/* Infeasible unknowns above which the steps stop (flipping many at once did not converge on
 * the heaps: hundreds of flips a step, measured). */
#define STICK_FLIP_MAX 16
/* Steps flipping every infeasible unknown while their number does not fall. */
#define STICK_FREE_TRIES 3

pp_status pp_sticking_reserve(pp_sticking *st, int n)
{
    if (n <= st->capacity) return PP_OK;
    int cap = st->capacity + st->capacity / 2 > n ? st->capacity + st->capacity / 2 : n;
    unsigned char *b = realloc(st->basis, (size_t)cap);
    if (b) st->basis = b;
    double **d[] = {&st->x, &st->x_eps, &st->w, &st->rhs, &st->size, &st->z_interior,
                    &st->q_answer, &st->d_answer, &st->z_start[0], &st->z_start[1], &st->z_given,
                    &st->z_best};
    int ok = b != NULL;
    for (size_t t = 0; t < sizeof d / sizeof *d; ++t) {
        double *p = realloc(*d[t], (size_t)cap * sizeof **d[t]);
        if (p) *d[t] = p;
        else ok = 0;
    }
    unsigned char *sb = realloc(st->start, (size_t)cap);
    if (sb) st->start = sb;
    unsigned char *sd = realloc(st->slides, (size_t)cap);
    if (sd) st->slides = sd;
    unsigned char *sg = realloc(st->sliding, (size_t)cap);
    if (sg) st->sliding = sg;
    unsigned char *ks = realloc(st->kept_slides, (size_t)cap);
    if (ks) st->kept_slides = ks;
    unsigned char *si = realloc(st->slides_interior, (size_t)cap);
    if (si) st->slides_interior = si;
    ok = ok && sb != NULL && sd != NULL && sg != NULL && ks != NULL && si != NULL;
    int **iv[] = {&st->index, &st->place, &st->row_start, &st->Ap, &st->Qp};
    for (size_t t = 0; t < sizeof iv / sizeof *iv; ++t) {
        int *p = realloc(*iv[t], (size_t)(cap + 1) * sizeof **iv[t]);
        if (p) *iv[t] = p;
        else ok = 0;
    }
    if (!ok) {
        pp_log(PP_LOG_ERROR, "sticking solve: out of memory for %d unknowns", n);
        return PP_ERR_NO_MEMORY;
    }
    for (int i = st->capacity; i < cap; ++i) st->place[i] = -1;
    st->capacity = cap;
    return PP_OK;
}

void pp_sticking_free(pp_sticking *st)
{
    free(st->basis);
    free(st->x);
    free(st->x_eps);
    free(st->w);
    free(st->rhs);
    free(st->size);
    free(st->index);
    free(st->place);
    free(st->row_start);
    free(st->row_col);
    free(st->row_val);
    free(st->Ap);
    free(st->Qp);
    free(st->Qi);
    free(st->Qx);
    free(st->start);
    free(st->slides);
    free(st->sliding);
    free(st->kept_slides);
    free(st->z_interior);
    free(st->q_answer);
    free(st->z_start[0]);
    free(st->z_start[1]);
    free(st->z_given);
    free(st->d_answer);
    free(st->z_best);
    free(st->slides_interior);
    free(st->Ai);
    free(st->Ax);
    pp_lcp_lu_sparse_free(st->lu);
    pp_interior_free(&st->interior);
    memset(st, 0, sizeof *st);
}

/* The S rows of A over F (A_SF by rows): row i's entries row_col/val[row_start[i] ..
 * row_start[i + 1]), columns increasing. */
static int transpose_rows(pp_sticking *st, const pp_lcp_csc *A, const unsigned char *sliding)
{
    const int n = A->n;
    for (int i = 0; i <= n; ++i) st->row_start[i] = 0;
    for (int j = 0; j < n; ++j) {
        if (sliding[j]) continue;
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t)
            if (sliding[A->row_index[t]]) ++st->row_start[A->row_index[t] + 1];
    }
    for (int i = 0; i < n; ++i) st->row_start[i + 1] += st->row_start[i];
    size_t nnz = (size_t)st->row_start[n];
    size_t cap_c = st->row_capacity, cap_v = st->row_capacity;
    if (!pp_lcp_grow((void **)&st->row_col, &cap_c, nnz, sizeof(int)) ||
        !pp_lcp_grow((void **)&st->row_val, &cap_v, nnz, sizeof(double)))
        return 0;
    st->row_capacity = cap_c < cap_v ? cap_c : cap_v;
    for (int j = 0; j < n; ++j) {
        if (sliding[j]) continue;
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t) {
            const int i = A->row_index[t];
            if (!sliding[i]) continue;
            const int at = st->row_start[i]++;
            st->row_col[at] = j;
            st->row_val[at] = A->values[t];
        }
    }
    for (int i = n; i > 0; --i) st->row_start[i] = st->row_start[i - 1];
    st->row_start[0] = 0;
    return 1;
}

/* (Q + eps D)_BB by columns, factorised; the number of basic unknowns, or -1 (singular,
 * refused, out of memory). */
static int factor_basis(pp_sticking *st, const pp_lcp_csc *A, const unsigned char *sliding,
                        double eps)
{
    const int n = A->n;
    int nb = 0;
    size_t nnz = 0;
    for (int i = 0; i < n; ++i) {
        if (!st->basis[i]) continue;
        st->place[i] = nb;
        st->index[nb++] = i;
        nnz += sliding[i] && !st->slides[i]
                   ? (size_t)(st->row_start[i + 1] - st->row_start[i])
                                      : (size_t)(A->col_start[i + 1] - A->col_start[i]);
    }
    pp_lcp_lu_sparse_free(st->lu);
    st->lu = NULL;
    size_t cap_i = st->a_capacity, cap_x = st->a_capacity;
    int ok = pp_lcp_grow((void **)&st->Ai, &cap_i, nnz, sizeof(int)) &&
             pp_lcp_grow((void **)&st->Ax, &cap_x, nnz, sizeof(double));
    st->a_capacity = cap_i < cap_x ? cap_i : cap_x;
    if (ok && nb > 0) {
        size_t p = 0;
        for (int b = 0; b < nb; ++b) {
            const int j = st->index[b];
            st->Ap[b] = (int)p;
            if (sliding[j] && !st->slides[j]) { /* lambda's column: -A_SF^T */
                for (int t = st->row_start[j]; t < st->row_start[j + 1]; ++t) {
                    const int a = st->place[st->row_col[t]];
                    if (a < 0) continue;
                    st->Ai[p] = a;
                    st->Ax[p++] = -st->row_val[t];
                }
            } else { /* an impulse's column: A_FF (+ eps) over F, A_SF over S; ST's sigma
                        column (a sliding contact) */
                for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t) {
                    const int a = st->place[A->row_index[t]];
                    if (a < 0) continue;
                    st->Ai[p] = a;
                    st->Ax[p++] = a == b && !sliding[j] ? A->values[t] + eps : A->values[t];
                }
            }
        }
        st->Ap[nb] = (int)p;
        int refused = 0;
        st->lu = pp_lcp_lu_sparse_factor(nb, st->Ap, st->Ai, st->Ax, &refused);
        ok = st->lu != NULL;
    }
    for (int b = 0; b < nb; ++b) st->place[st->index[b]] = -1;
    return ok ? nb : -1;
}

/* v = Q x + q (eps = 0) on every row, and each row's size |q_i| + sum_j |Q_ij x_j| */
static void residual_q(pp_sticking *st, const pp_lcp_csc *A, const unsigned char *sliding,
                       const double *q)
{
    const int n = A->n;
    for (int i = 0; i < n; ++i) {
        st->w[i] = q[i];
        st->size[i] = fabs(q[i]);
    }
    for (int j = 0; j < n; ++j) {
        const double xj = st->x[j];
        if (xj == 0.0) continue;
        if (sliding[j] && !st->slides[j]) {
            for (int t = st->row_start[j]; t < st->row_start[j + 1]; ++t) {
                const double v = -st->row_val[t] * xj;
                st->w[st->row_col[t]] += v;
                st->size[st->row_col[t]] += fabs(v);
            }
        } else {
            for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t) {
                const int i = A->row_index[t];
                const double v = A->values[t] * xj;
                st->w[i] += v;
                st->size[i] += fabs(v);
            }
        }
    }
}

/* x_B on the factorised basis: the limit eps -> 0 (x_N = 0). The iterate of (3) on q,
 * x^(t+1) = (Q + eps D)_BB^-1 (-q_B + eps D x^(t)), until it settles or stops contracting
 * (then only the drift of the basis rows' inconsistency is left: q_B has a part along the
 * left null space of Q_BB at the level of the data's rounding, which (3) turns into a
 * constant step of itself / eps along the null space); that iterate is the reference x_r,
 * which solves Q_BB x_r = -q'_B with q' within that inconsistency of q. The limit from it
 * (lcp_load_sharing.c): d = x - x_r obeys d <- eps (Q + eps D)^-1 D d from d = -x_r (no
 * right-hand side, so no drift), and x0 = x_r + d. */
static void basis_limit(pp_sticking *st, int n, int nb, const unsigned char *sliding,
                        const double *q, double eps)
{
    double *y = st->x_eps; /* the iterate, by basis place */
    for (int b = 0; b < nb; ++b) y[b] = 0.0;
    double last = INFINITY;
    st->limit_iterations = 0;
    for (int t = 0; t < STICK_ITERATIONS; ++t) {
        for (int b = 0; b < nb; ++b) {
            const int i = st->index[b];
            st->rhs[b] = -q[i] + (sliding[i] ? 0.0 : eps) * y[b];
        }
        pp_lcp_lu_sparse_solve(st->lu, st->rhs);
        double change = 0.0, norm = 0.0;
        for (int b = 0; b < nb; ++b) {
            change = fmax(change, fabs(st->rhs[b] - y[b]));
            norm = fmax(norm, fabs(st->rhs[b]));
            y[b] = st->rhs[b];
        }
        ++st->limit_iterations;
        if (change <= STICK_SETTLED * norm) break;
        if (t > 0 && change > STICK_DRIFT * last) break;
        last = change;
    }
    /* the offset d from the reference y, in x (by basis place) */
    double *d = st->x;
    for (int b = 0; b < nb; ++b) d[b] = -y[b];
    last = INFINITY;
    const double y_norm = pp_lcp_inf_norm(nb, y);
    for (int t = 0; t < STICK_ITERATIONS; ++t) {
        for (int b = 0; b < nb; ++b)
            st->rhs[b] = (sliding[st->index[b]] ? 0.0 : eps) * d[b];
        pp_lcp_lu_sparse_solve(st->lu, st->rhs);
        double change = 0.0;
        for (int b = 0; b < nb; ++b) {
            change = fmax(change, fabs(st->rhs[b] - d[b]));
            d[b] = st->rhs[b];
        }
        ++st->limit_iterations;
        if (change <= STICK_SETTLED * y_norm) break;
        if (t > 0 && change > STICK_DRIFT * last) break;
        last = change;
    }
    for (int b = 0; b < nb; ++b) y[b] += d[b];
    for (int i = 0; i < n; ++i) st->x[i] = 0.0;
    for (int b = 0; b < nb; ++b) st->x[st->index[b]] = y[b];
}

/* Basic x_i < 0 or nonbasic v_i < 0 beyond STICK_ROUNDING of ||x|| or of the row's size */
static int infeasible(const pp_sticking *st, int i, double x_norm)
{
    const double v = st->basis[i] ? st->x[i] / (x_norm > 0.0 ? x_norm : 1.0)
                                  : st->w[i] / (st->size[i] > 0.0 ? st->size[i] : 1.0);
    return v < -STICK_ROUNDING;
}

/* The compliance: STICK_EPS times the largest impulse diagonal of A. */
static double stick_eps(const pp_lcp_csc *A, const unsigned char *sliding)
{
    double diag = 0.0;
    for (int j = 0; j < A->n; ++j) {
        if (sliding[j]) continue;
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t)
            if (A->row_index[t] == j) diag = fmax(diag, A->values[t]);
    }
    return STICK_EPS * (diag > 0.0 ? diag : 1.0);
}

/* The contacts of (2) whose lambda > 0 carries a normal impulse p > 0 (both above
 * STICK_ROUNDING of x_norm) in the answer z = (z_F, lambda): marked to slide (slides = 2: ST's
 * sigma column from the next solve on), counted in st->sliding_loaded. Needs the rows of
 * transpose_rows. */
/* Unknown i's loaded sliding rows: 0 unless i is in the form of (2) (sliding), not yet marked,
 * and z_i above limit; then the entries of its row with a normal (mu p) above limit. */
static int loaded_sliding_rows(const pp_sticking *st, const unsigned char *sliding,
                               const double *z, int i, double limit)
{
    int loaded = 0;
    if (!sliding[i] || st->slides[i] || z[i] <= limit) return 0;
    for (int t = st->row_start[i]; t < st->row_start[i + 1]; ++t)
        loaded += st->row_val[t] > 0.0 && z[st->row_col[t]] > limit;
    return loaded;
}

static int mark_sliding_loaded(pp_sticking *st, int n, const unsigned char *sliding,
                               const double *z, double x_norm)
{
    for (int i = 0; i < n; ++i) {
        const int loaded = loaded_sliding_rows(st, sliding, z, i, STICK_ROUNDING * x_norm);
        if (!loaded) continue;
        st->sliding_loaded += loaded; /* the normal (mu p) carries a load */
        st->slides[i] = 2;
        if (x_norm > 0.0) st->lambda_max = fmax(st->lambda_max, z[i] / x_norm);
    }
    return st->sliding_loaded;
}

/* A round's answer z not taken (marked sliding, or refused by the acceptance): kept as the
 * solve's best round (st->z_best) where it is usable, r(z) <= ||q||_inf, and better than the
 * best so far by the bounded fallback's order of its iterates (pp_lcp_fallback_better: the
 * least r(z) on ST's A, q, on a tie the least rel(z)), so that the fallback may start from it
 * and judges it as it judges its own. Not by rel(z): it divides by ||z||_inf, and on the convex
 * landing's iterate island (docs/performance.md "The convex landing's steps 208-209") a
 * round diverged to ||z|| 7.1e8 with r(z) 11.7 against ||q|| 21.4 had rel(z) 1.05e-10 and was
 * kept as the best. One pass over A, only where no answer is taken. */
static void keep_best(pp_sticking *st, const pp_lcp_csc *A, const double *q, const double *z)
{
    const int n = A->n;
    pp_lcp_result check;
    memset(&check, 0, sizeof check);
    pp_lcp_csc_residual(A, q, z, NULL, &check);
    if (!pp_lcp_fallback_better(check.residual, check.relative_residual, pp_lcp_inf_norm(n, q),
                                st->best_residual, st->best_rel) ||
        !pp_lcp_all_finite((size_t)n, z))
        return;
    st->best_residual = check.residual;
    st->best_rel = check.relative_residual;
    memcpy(st->z_best, z, (size_t)n * sizeof *z);
}

/* The active-set steps on LCP(A, q) of an island whose unknowns with sliding[i] = 1 are the
 * sliding speeds (rows mu p - sum beta, zero diagonal) and all others impulses, with the
 * compliance eps: from `start` (bytes, 1 = basic), or the crash start where NULL, at most
 * max_steps factorisations. Needs the workspace reserved for n and the S rows of
 * transpose_rows (the same for every call of one island's solve). On PP_STICKING_SOLVED, z
 * holds the answer, result its measures (status SOLVED, 0 pivots), st->basis the active
 * set. */
static pp_sticking_outcome sticking_steps(pp_sticking *st, const pp_lcp_csc *A, const double *q,
                                          const unsigned char *sliding, double eps,
                                          const unsigned char *start, int max_steps,
                                          const pp_lcp_options *o, double *z,
                                          pp_lcp_result *result)
{
    const int n = A->n;
    st->steps = st->flips = st->first_flips = 0;
    st->sliding_loaded = 0;
    st->lambda_max = 0.0;
    memset(result, 0, sizeof *result);
    result->relative_residual = result->residual = INFINITY;
    for (int i = 0; i < n; ++i)
        st->basis[i] = start ? (start[i] != 0) : (!sliding[i] && q[i] < 0.0);
    int best = n + 1, tries = STICK_FREE_TRIES, solved = 0;
    double x_norm = 0.0;
    while (st->steps < max_steps) {
        /* a lambda whose contact has no basic impulse leaves B (the block would be
         * singular; v_S = 0 there) */
        for (int i = 0; i < n; ++i) {
            if (!sliding[i] || !st->basis[i]) continue;
            int any = 0;
            if (st->slides[i]) /* sigma's column E: a basic friction direction */
                for (int t = A->col_start[i]; t < A->col_start[i + 1] && !any; ++t)
                    any = A->row_index[t] != i && st->basis[A->row_index[t]];
            else
                for (int t = st->row_start[i]; t < st->row_start[i + 1] && !any; ++t)
                    any = st->basis[st->row_col[t]];
            st->basis[i] = (unsigned char)any;
        }
        const int nb = factor_basis(st, A, sliding, eps);
        ++st->steps;
        if (nb < 0) break;
        if (nb > 0) basis_limit(st, n, nb, sliding, q, eps);
        else
            for (int i = 0; i < n; ++i) st->x[i] = 0.0;
        residual_q(st, A, sliding, q);
        x_norm = pp_lcp_inf_norm(n, st->x);
        int count = 0, least = -1;
        for (int i = 0; i < n; ++i) {
            if (!infeasible(st, i, x_norm)) continue;
            if (least < 0) least = i;
            ++count;
        }
        if (count == 0) {
            solved = 1;
            break;
        }
        if (count > STICK_FLIP_MAX) break; /* far from an answer: Lemke's, not flips */
        int all;
        if (count < best) {
            best = count;
            tries = STICK_FREE_TRIES;
            all = 1;
        } else {
            all = tries-- > 0;
        }
        int flipped = 0;
        for (int i = 0; i < n; ++i) {
            if (!infeasible(st, i, x_norm) || (!all && i != least)) continue;
            st->basis[i] = (unsigned char)!st->basis[i];
            ++flipped;
        }
        if (st->steps == 1) st->first_flips = flipped;
        st->flips += flipped;
    }
    if (!solved) return PP_STICKING_FAILED;
    /* z = (z_F, sigma = lambda): an ST answer unless a loaded contact slides */
    for (int i = 0; i < n; ++i) z[i] = st->x[i] > 0.0 ? st->x[i] : 0.0;
    if (mark_sliding_loaded(st, n, sliding, z, x_norm) > 0) {
        keep_best(st, A, q, z);
        return PP_STICKING_SLIDES;
    }
    if (!pp_lcp_csc_accept(A, q, 0.0, o, z, st->w, result)) {
        keep_best(st, A, q, z);
        return PP_STICKING_FAILED;
    }
    result->status = PP_LCP_SOLVED;
    result->attempts = 1;
    return PP_STICKING_SOLVED;
}

/* Q + eps D by columns (the pattern of A's impulse columns; the lambda columns -A_SF^T with
 * the diagonal eps_lambda, rows increasing; a sliding contact's sigma column, ST's own, with
 * the diagonal eps_sigma): 1, or 0 out of memory. Needs the rows of transpose_rows. */
static int assemble_q(pp_sticking *st, const pp_lcp_csc *A, const unsigned char *sliding,
                      double eps, double eps_lambda, double eps_sigma, pp_lcp_csc *Q)
{
    const int n = A->n;
    size_t nnz = 0;
    for (int j = 0; j < n; ++j)
        nnz += sliding[j] ? (size_t)(st->row_start[j + 1] - st->row_start[j] + 1)
                          : (size_t)(A->col_start[j + 1] - A->col_start[j]);
    size_t cap_i = st->q_capacity, cap_x = st->q_capacity;
    if (!pp_lcp_grow((void **)&st->Qi, &cap_i, nnz, sizeof(int)) ||
        !pp_lcp_grow((void **)&st->Qx, &cap_x, nnz, sizeof(double)))
        return 0;
    st->q_capacity = cap_i < cap_x ? cap_i : cap_x;
    size_t p = 0;
    for (int j = 0; j < n; ++j) {
        st->Qp[j] = (int)p;
        if (sliding[j] && !st->slides[j]) {
            int diagonal = 0;
            for (int t = st->row_start[j]; t < st->row_start[j + 1]; ++t) {
                if (!diagonal && st->row_col[t] > j) {
                    st->Qi[p] = j;
                    st->Qx[p++] = eps_lambda;
                    diagonal = 1;
                }
                st->Qi[p] = st->row_col[t];
                st->Qx[p++] = -st->row_val[t];
            }
            if (!diagonal) {
                st->Qi[p] = j;
                st->Qx[p++] = eps_lambda;
            }
        } else {
            for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t) {
                st->Qi[p] = A->row_index[t];
                st->Qx[p++] = A->row_index[t] == j
                                  ? A->values[t] + (sliding[j] ? eps_sigma : eps)
                                  : A->values[t];
            }
        }
    }
    st->Qp[n] = (int)p;
    Q->n = n;
    Q->col_start = st->Qp;
    Q->row_index = st->Qi;
    Q->values = st->Qx;
    return 1;
}

/* The active set of the interior-point answer (x, v), kept for the next step: x_i basic
 * where x_i / ||x||_inf > v_i / ||q||_inf (lcp_interior.c: the maximally complementary
 * partition) and x_i > STICK_ROUNDING ||x||_inf (a degenerate pair, x_i = v_i = 0 in the
 * limit, is nonbasic: the sticking contacts' rows all have v = 0, and both of a pair of
 * opposite friction directions basic would leave the limit their difference only). A basic
 * lambda of a contact none of whose impulses is basic (an open contact whose bodies slide:
 * p = beta = 0) is not fixed by the basis rows (its cone row reads 0 = 0): the interior point
 * holds it inside its range, lambda >= -(E^T u)_k for every direction k, where a vertex takes
 * the least lambda, at which the direction of least v_beta binds; that beta is made basic
 * (at 0), so that the block is nonsingular. Needs the rows of transpose_rows. */
static void interior_basis(pp_sticking *st, int n, const unsigned char *sliding,
                           const double *q, const double *x, const double *v)
{
    const double x_norm = pp_lcp_inf_norm(n, x), q_norm = pp_lcp_inf_norm(n, q);
    for (int i = 0; i < n; ++i)
        st->basis[i] = (unsigned char)(x[i] * q_norm > v[i] * x_norm &&
                                       x[i] > STICK_ROUNDING * x_norm);
    for (int i = 0; i < n; ++i) {
        if (!sliding[i] || st->slides[i] || !st->basis[i]) continue;
        int any = 0, binding = -1;
        for (int t = st->row_start[i]; t < st->row_start[i + 1]; ++t) {
            const int j = st->row_col[t];
            any = any || st->basis[j];
            if (st->row_val[t] < 0.0 && (binding < 0 || v[j] < v[binding])) binding = j;
        }
        if (!any && binding >= 0) st->basis[binding] = 1;
    }
}

/* The creeping round's early end (pp_interior stop, every STICK_SLIDE_TEST_EVERY iterations):
 * is its iterate x what the round's end would take, i.e. it marks no loaded sliding contact
 * (loaded_sliding_rows, mark_sliding_loaded's test, without marking) and z = x passes the
 * acceptance of every solve (pp_lcp_csc_accept on ST's A, q with the solve's options)? The
 * round used to run its STICK_SLIDE_ITERATIONS whatever its iterates were; measured on the
 * crash demo's impact
 * (docs/performance.md "The crash impact's steps 15-19 solve by solve"), its iterate was
 * accepted from iteration 50-60 on (rel(z) 9.6e-10, 6.6e-10; 1.44e-10 after 300), 7-8 ms an
 * iteration on 4 980 unknowns. The test costs one product with A. z: the caller's output,
 * scratch here (the round writes its answer there after the solve). */
typedef struct creep_test {
    pp_sticking *st;
    const pp_lcp_csc *A;
    const double *q;
    const unsigned char *sliding;
    const pp_lcp_options *o;
    double *z;
} creep_test;

static int creep_answered(void *context, const double *x)
{
    const creep_test *c = context;
    const pp_sticking *st = c->st;
    const int n = c->A->n;
    const double limit = STICK_ROUNDING * pp_lcp_inf_norm(n, x);
    for (int i = 0; i < n; ++i)
        if (loaded_sliding_rows(st, c->sliding, x, i, limit)) return 0;
    memcpy(c->z, x, (size_t)n * sizeof *x);
    pp_lcp_result r;
    memset(&r, 0, sizeof r);
    return pp_lcp_csc_accept(c->A, c->q, 0.0, c->o, c->z, c->st->w, &r);
}

/* An interior-point iteration's charge to the shared budget's work on n unknowns
 * (pegplus/lcp.h pp_lcp_budget.work). */
static double interior_work(int n)
{
    return PP_LCP_INTERIOR_WORK * PP_LCP_PIVOT_WORK(n);
}

/* The iterations a round on n unknowns may take: its own `cap`, held to the work the solve's
 * shared budget has left (none given: the cap). */
static int interior_cap(const pp_lcp_options *o, int n, int cap)
{
    return (int)pp_lcp_budget_work_cap(o->budget, interior_work(n), cap);
}

/* A round's `iterations` on n unknowns charged to the solve's shared budget (as Lemke's
 * pivots are, lcp.c). */
static void interior_charge(const pp_lcp_options *o, int n, int iterations)
{
    pp_lcp_budget_charge_work(o->budget, (double)iterations * interior_work(n));
}

/* The interior-point solve of (2) + eps D with eps = STICK_INTERIOR_EPS max A_ii and D = I
 * on every unknown (lambda too: an open contact's lambda, p = beta = 0, is otherwise free in
 * [max_k -(E^T u)_k, inf) and the interior point takes it far inside, up to 2.3 where its
 * bodies slide at 3e-3 m/s on heap50, which also inflates ||z|| in every row's scale of the
 * acceptance; with eps lambda in its cone row it is the least, the sliding speed, at the
 * cost of a friction impulse eps lambda on that contact), its answer
 * z = (z_F, sigma = lambda) taken as it is (no basis, no limit): at the gap it reaches
 * (STICK_INTERIOR_GAP) the compliance, not the gap, bounds its residual on ST's LCP
 * (docs/performance.md "An interior-point solve of the sticking LCP"). Loaded contacts with
 * lambda > 0 go to ST's form for the next round (at most STICK_INTERIOR_SLIDE_ROUNDS: the
 * problem is then no longer monotone in their columns, and the solve may stall or fail
 * there; a round whose warm start stalled is solved again cold, below). The
 * answer is accepted as every solve's is (pp_lcp_csc_accept on A, q with o); then st->basis
 * holds its active set (the polish's where that answered, else interior_basis). stick: the
 * steps' compliance, stick_eps(A, sliding). Needs the rows of transpose_rows; st->slides as
 * the rounds left it. */
static pp_sticking_outcome interior_rounds(pp_sticking *st, const pp_lcp_csc *A,
                                           const double *q, const unsigned char *sliding,
                                           double stick, const pp_lcp_options *o, double *z,
                                           pp_lcp_result *result)
{
    const int n = A->n;
    const double eps = stick / STICK_EPS * STICK_INTERIOR_EPS;
    double *x = st->x, *v = st->x_eps;
    /* bounded by the solve's clock as Lemke's pivots are: the step's shared budget and the
     * solve's own max_seconds (each round stops there, its answer then refused or sliding) */
    const double deadline = pp_lcp_deadline(o, pp_lcp_clock());
    int creep = 0; /* this round again by the first-order corrector (the header) */
    for (int round = 0; round <= STICK_INTERIOR_SLIDE_ROUNDS; ++round) {
        /* a round with contacts in ST's form: not monotone (the header, "Rounds with
         * sliding contacts") */
        int mixed = 0;
        for (int i = 0; i < n && !mixed; ++i) mixed = st->slides[i] != 0;
        creep = creep && mixed;
        const double e = creep ? stick / STICK_EPS * STICK_SLIDE_EPS : eps;
        pp_lcp_csc Q;
        if (!assemble_q(st, A, sliding, e, e, creep ? 0.0 : e, &Q)) return PP_STICKING_FAILED;
        ++st->rounds;
        st->interior.first_order = creep;
        creep_test test = {st, A, q, sliding, o, z};
        if (creep) { /* ended at its first iterate the end would take (creep_answered) */
            st->interior.stop = creep_answered;
            st->interior.stop_context = &test;
            st->interior.stop_every = STICK_SLIDE_TEST_EVERY;
        }
        /* held to the shared budget's work as to the clock: a round left none is not
         * run, and one that stops at what was left is refused as past the clock */
        const int own_cap = creep ? STICK_SLIDE_ITERATIONS : STICK_INTERIOR_ITERATIONS;
        int cap = interior_cap(o, n, own_cap);
        if (cap == 0) {
            st->interior.stop = NULL;
            st->interior.stop_context = NULL;
            return PP_STICKING_FAILED;
        }
        pp_interior_status s = pp_interior_solve(&st->interior, &Q, q, STICK_INTERIOR_GAP, cap,
                                                 deadline, x, v);
        st->interior_iterations += st->interior.iterations;
        interior_charge(o, n, st->interior.iterations);
        /* A warm start that stalled: its iterate is no answer of this round's problem, and
         * its marks (below) are not those of the problem's answer. Heap50's iterates started
         * from the records stalled at round 0 after 58-80 iterations at a gap of 1.7e-9 -
         * 1.2e-8 and an infeasibility up to 3.5e-6, where 76-237 contacts carried lambda and
         * p above 1e-6 ||x|| (none after the same round cold, 0-10 above 1e-7): 258-315 were
         * marked to slide, the rounds on that problem were refused, and Lemke on Q answered
         * a vertex (~630 unknowns positive) instead of the interior answer (all positive);
         * the iterates alternated between the two (docs/performance.md, "PEG's sets keyed by
         * their members, traced"). (2) + eps D is strictly monotone on the contacts not in
         * ST's form (Q + eps D has symmetric part >= eps I there), so its answer is one,
         * whatever the start: the same round again cold (the start is a speed-up only). */
        int spent = s == PP_INTERIOR_STALLED && !st->interior.stopped &&
                    st->interior.iterations >= cap && cap < own_cap;
        if (s == PP_INTERIOR_STALLED && st->interior.warm && !st->interior.stopped && !spent &&
            pp_lcp_clock() <= deadline) {
            cap = interior_cap(o, n, own_cap);
            if (cap == 0) return PP_STICKING_FAILED;
            st->interior.first_order = creep;
            s = pp_interior_solve(&st->interior, &Q, q, STICK_INTERIOR_GAP, cap, deadline, x, v);
            st->interior_iterations += st->interior.iterations;
            interior_charge(o, n, st->interior.iterations);
            spent = s == PP_INTERIOR_STALLED && !st->interior.stopped &&
                    st->interior.iterations >= cap && cap < own_cap;
            ++st->cold_again;
        }
        if (s == PP_INTERIOR_FAILED) return PP_STICKING_FAILED;
        if (s == PP_INTERIOR_STALLED && !st->interior.stopped &&
            (spent || pp_lcp_clock() > deadline))
            return PP_STICKING_FAILED;
        const double x_norm = pp_lcp_inf_norm(n, x);
        for (int i = 0; i < n; ++i) z[i] = x[i];
        st->sliding_loaded = 0;
        if (mark_sliding_loaded(st, n, sliding, z, x_norm) > 0) {
            keep_best(st, A, q, z);
            creep = 0;
            continue;
        }
        memset(result, 0, sizeof *result);
        if (!pp_lcp_csc_accept(A, q, 0.0, o, z, st->w, result)) {
            keep_best(st, A, q, z);
            if (!mixed || creep) return PP_STICKING_FAILED;
            creep = 1; /* the same round again (not counted as one of the rounds) */
            --round;
            continue;
        }
        result->status = PP_LCP_SOLVED;
        result->attempts = 1;
        /* polished where its active set's limit is an answer (one step: the limit eps -> 0
         * there, lcp_sticking.c's own answer, exact to rounding where the interior point is
         * to ~1e-5 of the loads among redundant supports); kept as it is otherwise */
        interior_basis(st, n, sliding, q, x, v);
        memcpy(st->z_interior, z, (size_t)n * sizeof *z);
        memcpy(st->slides_interior, st->slides, (size_t)n);
        memcpy(st->start, st->basis, (size_t)n);
        pp_lcp_result polished;
        if (sticking_steps(st, A, q, sliding, stick, st->start, STICK_WARM_STEPS, o, z,
                           &polished) == PP_STICKING_SOLVED) {
            *result = polished;
            ++st->polished;
            return PP_STICKING_SOLVED;
        }
        memcpy(z, st->z_interior, (size_t)n * sizeof *z);
        memcpy(st->slides, st->slides_interior, (size_t)n);
        memcpy(st->basis, st->start, (size_t)n);
        st->sliding_loaded = 0;
        return PP_STICKING_SOLVED;
    }
    return PP_STICKING_SLIDES;
}

/* pp_sticking_island after the kept answer (the workspace reserved for n) */
static pp_sticking_outcome island_solve(pp_sticking *st, pp_lcp_workspace *lcp,
                                        const pp_lcp_csc *A, const double *q,
                                        const unsigned char *sliding,
                                        const unsigned char *kept,
                                        const unsigned char *kept_slides,
                                        const unsigned char *lemke_warm,
                                        const pp_lcp_options *o, double *z,
                                        pp_lcp_result *result)
{
    const int n = A->n;
    for (int i = 0; i < n; ++i) st->slides[i] = kept_slides ? kept_slides[i] : 0;
    /* the S rows and the compliance, once for every step and round below (not needed
     * where Lemke's warm basis answers without a kept set) */
    int prepared = 0;
    double eps = 0.0;
    if (kept) {
        if (!transpose_rows(st, A, sliding)) return PP_STICKING_FAILED;
        prepared = 1;
        eps = stick_eps(A, sliding);
        pp_sticking_outcome out =
            sticking_steps(st, A, q, sliding, eps, kept, STICK_WARM_STEPS, o, z, result);
        if (out == PP_STICKING_SOLVED) {
            st->from_kept = 1;
            result->warm_started = 1;
            return out;
        }
    }
    /* Lemke's warm basis (the caller's) that solves LCP(A, q) as it stands: Lemke answers
     * without a pivot, and no search is run here */
    if (lemke_warm && pp_lcp_csc_solve_basis(lcp, A, q, lemke_warm, z)) {
        pp_lcp_result check;
        memset(&check, 0, sizeof check);
        if (pp_lcp_csc_accept(A, q, 0.0, o, z, st->w, &check)) {
            memset(result, 0, sizeof *result);
            return PP_STICKING_LEMKE_WARM;
        }
    }
    if (!prepared) {
        if (!transpose_rows(st, A, sliding)) return PP_STICKING_FAILED;
        eps = stick_eps(A, sliding);
    }
    /* the interior-point solve of (2); refused, Lemke on it as below */
    if (!st->lemke_only) {
        pp_sticking_outcome out = interior_rounds(st, A, q, sliding, eps, o, z, result);
        if (out == PP_STICKING_SOLVED) return out;
        for (int i = 0; i < n; ++i) st->slides[i] = kept_slides ? kept_slides[i] : 0;
    }
    pp_lcp_options qo = *o;
    qo.fallback = 0;
    qo.warm_start = kept != NULL;
    for (int i = 0; i < n; ++i) st->start[i] = kept ? kept[i] : 0;
    pp_sticking_outcome out = PP_STICKING_FAILED;
    int pivots = 0, refactorisations = 0;
    for (int round = 0; round <= STICK_SLIDE_ROUNDS; ++round) {
        /* Lemke on LCP(Q + eps D, q), the sliding contacts in ST's form: from the kept
         * active set, then from the last round's basis */
        pp_lcp_csc Q;
        const int left = STICK_LEMKE_PIVOTS * n - pivots;
        if (left <= 0 || !assemble_q(st, A, sliding, eps, 0.0, eps, &Q)) break;
        qo.max_pivots = qo.max_total_pivots = left;
        pp_lcp_result qr;
        memset(&qr, 0, sizeof qr);
        pp_status s = pp_lcp_solve_csc(lcp, &Q, q, &qo, st->start, z, &qr);
        pivots += qr.pivots;
        refactorisations += qr.refactorisations;
        ++st->rounds;
        if (s != PP_OK || qr.status != PP_LCP_SOLVED) {
            out = PP_STICKING_FAILED;
            break;
        }
        out = sticking_steps(st, A, q, sliding, eps, st->start, STICK_COLD_STEPS, o, z, result);
        if (out != PP_STICKING_SLIDES) break;
        /* the loaded contacts with lambda > 0 (marked by the steps) slide: again with ST's
         * sigma column for them, Lemke from this basis */
        memcpy(st->start, st->basis, (size_t)n);
        qo.warm_start = 1;
    }
    st->lemke_pivots = pivots;
    if (out != PP_STICKING_SOLVED) memset(result, 0, sizeof *result);
    result->pivots = pivots;
    result->refactorisations = refactorisations;
    return out;
}

void pp_sticking_forget(pp_sticking *st)
{
    st->answer_slot = -1;
    st->start_n[0] = st->start_n[1] = 0;
    st->start_next = 0;
}

/* A's diagonal into d */
static void diagonal(const pp_lcp_csc *A, double *d)
{
    for (int j = 0; j < A->n; ++j) {
        d[j] = 0.0;
        for (int t = A->col_start[j]; t < A->col_start[j + 1]; ++t)
            if (A->row_index[t] == j) d[j] = A->values[t];
    }
}

/* The kept answer. A step's re-linearisation iterates solve the same island again and again
 * (heap50: 4-6 solves a step, of which the last 2-4 have the same unknowns and q within
 * 2.9e-11 of the one before, measured); the answer of the last solve is then an answer of
 * this one as it stands. It is tried only where this is the same LCP to rounding (a kept
 * active set: every unknown kept by the caller, peg_mlcp.c; as many unknowns and entries of
 * A as the last; q within STICK_ANSWER_SAME of the last answer's), and taken only as every
 * answer is (pp_lcp_csc_accept on this A and q: rel(z) <= residual_tol), so a changed A (or
 * an unknown that moved place) refuses it. Its active set and slides are the kept ones.
 *
 * An iterate whose list gained or lost a set. A contact that comes within range at the pose
 * the last iterate predicts adds its set's unknowns (heap50 step 5, iterate 3: 2 256 -> 2 262,
 * one contact's p, its k = 4 beta and sigma, each in its kind's place). A fresh solve there
 * answers within the interior point's own spread of the last answer (its degenerate pairs at
 * ~sqrt(gap), the bodies' velocities 6.8e-9 m/s apart), which the re-linearisation reads as
 * a residual that grew, halves its step and converges at iterate 8 instead of 5. The rest
 * of the LCP is the last one in the same order (relinearize.c list_in_work_order) with q
 * within STICK_ANSWER_SAME: so the unknowns are matched in order, each new one to the next
 * old one whose q agrees and whose diagonal of A agrees to STICK_ANSWER_MATCH, and the
 * |n - n_last| left over on the longer side are the set that came or left. The last answer
 * with the new set's unknowns 0 (a contact that has just come within range carries no
 * impulse) and the old set's dropped is tried as above: the acceptance forms w = A z + q on
 * this LCP, so a set that needs a load, a set that left carrying one, or unknowns matched to
 * the wrong neighbours (q_S = 0 on every sigma row, |q| < 1e-10 on many friction rows)
 * refuse it, and the island is solved. Returns 1 with that answer in z and in q_kept the q
 * it answers (the last answer's on the matched unknowns, this one's on the new), kept as
 * q_answer: the next iterate is compared with the q the answer was solved for, not with a
 * q that crept. */
static int kept_answer(const pp_sticking *st, const pp_lcp_csc *A, const double *q, double *z,
                       double *q_kept)
{
    const int n = A->n, slot = st->answer_slot;
    if (slot < 0 || st->start_n[slot] <= 0) return 0;
    const int last = st->start_n[slot];
    const double *z_last = st->z_start[slot], *q_last = st->q_answer;
    const double tol = STICK_ANSWER_SAME * pp_lcp_inf_norm(n, q);
    if (last == n && st->start_nnz[slot] != A->col_start[n]) return 0;
    double *d = st->rhs; /* A's diagonal, read where the sizes differ */
    if (n != last) diagonal(A, d);
    const double d_norm = n != last ? pp_lcp_inf_norm(n, d) : 0.0;
    int i = 0, j = 0, moved = 0;
    while (i < n || j < last) {
        if (i < n && j < last && fabs(q[i] - q_last[j]) <= tol &&
            (n == last || fabs(d[i] - st->d_answer[j]) <= STICK_ANSWER_MATCH * d_norm)) {
            z[i] = z_last[j];
            q_kept[i++] = q_last[j++];
        } else if (n > last && i < n) { /* an unknown of the set that came */
            z[i] = 0.0;
            q_kept[i] = q[i];
            ++i;
            ++moved;
        } else if (n < last && j < last) { /* an unknown of the set that left */
            ++j;
            ++moved;
        } else
            return 0;
        if (moved > abs(n - last)) return 0;
    }
    return 1;
}

pp_sticking_outcome pp_sticking_island(pp_sticking *st, pp_lcp_workspace *lcp,
                                       const pp_lcp_csc *A, const double *q,
                                       const unsigned char *sliding, const unsigned char *kept,
                                       const unsigned char *kept_slides,
                                       const unsigned char *lemke_warm,
                                       const pp_lcp_options *o, double *z,
                                       pp_lcp_result *result)
{
    const int n = A->n;
    pp_lcp_dump_instance(n, NULL, A, q, "pp_sticking_island"); /* PP_LCP_DUMP_ALL */
    st->lemke_pivots = 0;
    st->interior_iterations = 0;
    st->cold_again = 0;
    st->polished = 0;
    st->from_kept = 0;
    st->from_answer = 0;
    st->rounds = 0;
    const int given = st->given; /* for this solve only */
    st->given = 0;
    st->best_rel = st->best_residual = INFINITY;
    if (pp_sticking_reserve(st, n) != PP_OK) return PP_STICKING_FAILED;
    if (kept && kept_answer(st, A, q, z, st->x)) {
        ++st->answer_tried;
        memset(result, 0, sizeof *result);
        if (pp_lcp_csc_accept(A, q, 0.0, o, z, st->w, result)) {
            result->status = PP_LCP_SOLVED;
            result->attempts = 1;
            result->warm_started = 1;
            memcpy(st->basis, kept, (size_t)n);
            for (int i = 0; i < n; ++i) st->slides[i] = kept_slides ? kept_slides[i] : 0;
            st->steps = st->flips = st->first_flips = st->sliding_loaded = 0;
            st->from_answer = 1;
            if (st->start_n[st->answer_slot] != n) { /* this size's answer from now on */
                int slot = st->answer_slot == 0 ? 1 : 0;
                for (int k = 0; k < 2; ++k)
                    if (st->start_n[k] == n && st->start_nnz[k] == A->col_start[n]) slot = k;
                memcpy(st->z_start[slot], z, (size_t)n * sizeof *z);
                st->start_n[slot] = n;
                st->start_nnz[slot] = A->col_start[n];
                st->answer_slot = slot;
            }
            memcpy(st->q_answer, st->x, (size_t)n * sizeof *q);
            diagonal(A, st->d_answer);
            ++st->answer_taken;
            return PP_STICKING_SOLVED;
        }
    }
    /* the interior-point solve's start: the last answer of an island of this size and
     * pattern since the caller's last pp_sticking_forget (its unknowns need not be these;
     * the answer depends on the start within the acceptance, so the stepper forgets before
     * each island's step: peg_mlcp.c pp_peg_workspace_forget), else the caller's (the
     * island's own answer of its last step, by constraint identity: plugin/src/warm_start.c) */
    int slot = -1;
    for (int k = 0; k < 2; ++k)
        if (st->start_n[k] == n && st->start_nnz[k] == A->col_start[n]) slot = k;
    st->interior.start = slot >= 0 ? st->z_start[slot] : given ? st->z_given : NULL;
    pp_sticking_outcome out =
        island_solve(st, lcp, A, q, sliding, kept, kept_slides, lemke_warm, o, z, result);
    st->interior.start = NULL;
    st->answer_slot = -1;
    if (out == PP_STICKING_SOLVED) {
        memcpy(st->q_answer, q, (size_t)n * sizeof *q);
        diagonal(A, st->d_answer);
        if (slot < 0) {
            slot = st->start_next;
            st->start_next = 1 - slot;
        }
        memcpy(st->z_start[slot], z, (size_t)n * sizeof *z);
        st->start_n[slot] = n;
        st->start_nnz[slot] = A->col_start[n];
        st->answer_slot = slot;
    }
    return out;
}
