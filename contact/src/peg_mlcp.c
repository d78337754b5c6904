/*
 * The PEG time step (PEG Sec. 5, paper Eqs 39–49; pegplus/peg.h) as an LCP.
 *
 * Mixed problem, per constraint set j with primary iota_j and secondaries s = 1..k_j, and
 * friction directions d_l on the primary (Stewart–Trinkle 1996 Eqs 25–28 for the friction):
 *     M (nu - nu*) = G_p p + G_f beta                                  (Eq 41; Eq 5)
 *     0 <= G_p^T nu + E_I2 c + psi_p/h               ⊥ p     >= 0      (Eq 40 / Eq 24)
 *     0 <= G_I^T nu + E_I1 c + psi_I/h               ⊥ c     >= 0      (Eq 39 / Eq 20)
 *     0 <= G_f^T nu + E sigma                        ⊥ beta  >= 0      (ST96 Eq 26)
 *     0 <= mu p - E^T beta                           ⊥ sigma >= 0      (ST96 Eq 27)
 * G_I columns are G_iota - G_s (Eq 45, primary minus secondary, both in the primary's frame),
 * psi_I = psi_iota - psi_s, E_I1 = blockdiag(tril(ones(k_j))) (Eq 43), E_I2 =
 * blockdiag(ones(1, k_j)) (Eq 44). Why these rows give max_s psi_s >= 0 at the end of the step:
 * with g_s = psi_s/h + G_s^T nu (the linearised end gap over h, Eq 6), the c row of
 * secondary s is  g_iota - g_s + sum_{r<=s} c_r >= 0 ⊥ c_s >= 0, so by Lemmas 1.1/1.2
 * g_iota + sum_r c_r = max_s g_s, and the p row is then max_s g_s >= 0 ⊥ p >= 0 (Eq 24):
 * the primary's impulse acts only while the combined gap is closed.
 *
 * Eliminating nu (M block diagonal, positive definite on dynamic bodies; W = M^-1, W_b = 0
 * for a kinematic body) gives the LCP in x = [p; c; beta; sigma]:
 *     [ G_p^T W G_p   E_I2   G_p^T W G_f   0  ]     [ G_p^T nu* + psi_p/h ]
 *     [ G_I^T W G_p   E_I1   G_I^T W G_f   0  ] x + [ G_I^T nu* + psi_I/h ]
 *     [ G_f^T W G_p   0      G_f^T W G_f   E  ]     [ G_f^T nu*           ]
 *     [ U             0     -E^T           0  ]     [ 0                   ]
 * and nu = nu* + W (G_p p + G_f beta). A frictionless set (mu = 0 on its primary) has no beta
 * and sigma unknowns: with mu = 0 its sigma row forces beta = 0, and the k + 1 zero-valued,
 * degenerate unknowns would only make the problem 10x larger and Lemke's pivoting fragile
 * (frictionless pouring, PEG paper §5). Every row and impulse column of a set involves only
 * the set's two bodies, so (J_r^T W J_c) is accumulated body by body over the sets touching
 * the body, as mlcp.c does over contacts: never a 6 nb x 6 nb matrix.
 *
 * Rolling and spinning friction (pegplus/mlcp.h, PP_CONTACT_ROLLING on a set's primary): each
 * axis a with rho_a > 0 adds the unknowns (g_a+, g_a-, s_a) after all the sigma, x = [p; c;
 * beta; sigma; rolling], with the angular column G_a = (A: [0; -a], B: [0; a]):
 *     0 <=  G_a^T nu + s_a   ⊥ g_a+ >= 0,   0 <= -G_a^T nu + s_a ⊥ g_a- >= 0,
 *     0 <= rho_a p - g_a+ - g_a-  ⊥ s_a >= 0,     M (nu - nu*) = ... + G_a (g_a+ - g_a-),
 * so its rows and columns join the J^T W J blocks like the friction's (the -G_a column is
 * the +G_a one negated) and the pyramid block like ST96's with k = 2.
 *
 * Islands. Every row and every column of set j involves only the bodies of j: its rows are
 * J_r^T nu (r = p, c, beta of j) plus E_I1, E_I2, E, U entries inside j, its impulse columns
 * act through W_b on its two bodies. So M_{(i,r),(j,l)} != 0 with i != j only when sets i and
 * j share a body b with W_b != 0 (static ground, index -1, and kinematic bodies, W_b = 0,
 * couple nothing), and q of a row is that row's own. Hence the LCP is block diagonal over the
 * connected components ("islands") of the graph "sets sharing a coupled body", and its
 * solution set is the product of the blocks' solution sets: z solves LCP(M, q) iff each
 * z_S solves LCP(M_SS, q_S). An island's unknowns keep the whole LCP's layout [p; c; beta;
 * sigma] over its own sets in increasing set order, so the map from island to whole indices
 * is increasing and the island LCP is exactly the principal submatrix M_SS (S sorted): the
 * same rows in the same relative order, and the caller's warm-start basis, indexed like the
 * whole LCP, is gathered from and scattered back to S. The compliance shift r max_i M_ii is
 * taken over ALL sets before any island is assembled, so that every block is the whole LCP's
 * (pp_peg_last_lcp assembles the whole on request). Lemke's pivots cost O(n^2) and its path
 * grows with n: a pile of separate stacks pays per stack instead of for the whole, and a
 * solver failure costs only its island.
 */
#include "pegplus/peg.h"

#include "geometry_internal.h"
#include "islands_internal.h"
#include "lcp_fallback_bodies.h"
#include "lcp_internal.h"
#include "lcp_sticking.h"
#include "peg_lcp_internal.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


struct pp_body_block;
static void body_block_free(struct pp_body_block *bb);

/* Islands of at least this many unknowns assemble M by columns, or with joint rows into an
 * allocation of their own (below, solve_islands); smaller ones reuse the kept matrix, at most (OWN_MATRIX_MIN_N - 1)^2
 * doubles (18 MB). Not the LCP's sparse threshold (161): a fresh n^2 allocation a solve costs
 * its page faults, measured on the settled 20-box heap (one island of ~700 unknowns,
 * pegplus-benchmark --scene heap20 --steps 300 --lcp-budget 0): 1 485 -> 1 040 us a step
 * (standard), 1 785 -> 1 256 us (PEG) with the kept matrix. */
#define OWN_MATRIX_MIN_N 1500

/* Islands without joint rows of at least this many unknowns are assembled by columns and
 * solved without any n x n array (csc_assemble, pp_lcp_solve_csc): see solve_islands. The
 * answers are the dense path's bit for bit, so the threshold only moves cost. It is just
 * above load sharing's dense bound (LS_MAX_UNKNOWNS = 256 in lcp_load_sharing.c): an island
 * by columns runs load sharing's sparse back-end (lcp_load_sharing.c "By columns"), with the
 * compliant basis kept in bit 1 and the entries before Lemke (solve_islands).
 * Measured on the settled 20-box heap (islands of 678-735 unknowns, pegplus-benchmark
 * --scene heap20 --model standard,peg --steps 20 --lcp-budget 0 under callgrind): by columns
 * the median step is 2.3x / 2.1x cheaper (standard / PEG: no n^2 clearing, pattern scan and
 * residual a solve), the 20 steps 2.7 % / 3.4 % fewer instructions (the first, cold step's
 * pivots dominate them), the same pivots. */
#ifndef PP_PEG_CSC_MIN_N
#define PP_PEG_CSC_MIN_N 257
#endif
static int csc_min_n = PP_PEG_CSC_MIN_N;

int pp_peg_csc_min_n(int n)
{
    int previous = csc_min_n;
    PP_ASSERT(n >= PP_LCP_SPARSE_MIN_N, "pp_peg_csc_min_n: at least the sparse threshold");
    csc_min_n = n;
    return previous;
}

/* Room for an n-unknown LCP (and its Lemke workspace when `solve`; the kept dense matrix
 * unless `by_columns`). */
static pp_status dense_reserve(dense_store *d, int n, int solve, int by_columns)
{
    if (n < 1) n = 1;
    /* the kept matrix: for the diagnostic's whole LCP (solve = 0) and islands below
     * OWN_MATRIX_MIN_N; a larger island's matrix is its own (solve_islands) */
    const int matrix = !by_columns && (!solve || n < OWN_MATRIX_MIN_N);
    if (matrix && n > d->matrix_capacity) {
        int cap = d->matrix_capacity + d->matrix_capacity / 2 > n
                      ? d->matrix_capacity + d->matrix_capacity / 2
                      : n;
        if (solve && cap >= OWN_MATRIX_MIN_N) cap = OWN_MATRIX_MIN_N - 1;
        double *M = realloc(d->M, (size_t)cap * cap * sizeof(double));
        if (!M) {
            pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for an LCP of %d unknowns", n);
            return PP_ERR_NO_MEMORY;
        }
        d->M = M;
        d->matrix_capacity = cap;
    }
    if (n > d->capacity) {
        int cap = d->capacity + d->capacity / 2 > n ? d->capacity + d->capacity / 2 : n;
        double *q = realloc(d->island_q, (size_t)cap * sizeof(double));
        if (q) d->island_q = q;
        double *z = realloc(d->island_z, (size_t)cap * sizeof(double));
        if (z) d->island_z = z;
        unsigned char *b = realloc(d->island_basis, (size_t)cap);
        if (b) d->island_basis = b;
        int *m = realloc(d->island_map, (size_t)cap * sizeof(int));
        if (m) d->island_map = m;
        int *blocks = realloc(d->island_blocks, 2 * (size_t)cap * sizeof(int));
        if (blocks) d->island_blocks = blocks;
        if (!q || !z || !b || !m || !blocks) {
            pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for an LCP of %d unknowns", n);
            return PP_ERR_NO_MEMORY;
        }
        d->capacity = cap;
    }
    if (solve && n > d->lcp_capacity) {
        int cap = d->lcp_capacity + d->lcp_capacity / 2 > n ? d->lcp_capacity + d->lcp_capacity / 2 : n;
        pp_lcp_workspace_destroy(d->lcp);
        d->lcp = NULL;
        d->lcp_capacity = 0;
        pp_status st = pp_lcp_workspace_create(cap, &d->lcp);
        if (st != PP_OK) {
            pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for the Lemke workspace of an LCP "
                                 "of %d unknowns", n);
            return st;
        }
        d->lcp_capacity = cap;
    }
    return PP_OK;
}

static void dense_free(dense_store *d)
{
    if (!d) return;
    free(d->M);
    free(d->island_q);
    free(d->island_z);
    free(d->island_basis);
    free(d->island_map);
    free(d->island_blocks);
    pp_lcp_workspace_destroy(d->lcp);
    pp_load_sharing_free(&d->load);
    if (d->sticking) pp_sticking_free(d->sticking);
    free(d->sticking);
    free(d->csc.acc);
    free(d->csc.stamp);
    free(d->csc.owner);
    free(d->csc.kind);
    free(d->csc.extra);
    free(d->csc.col_start);
    free(d->csc.body_local);
    free(d->csc.body_first);
    free(d->csc.body_rows);
    free(d->csc.row_index);
    free(d->csc.values);
    free(d);
}

int pp_peg_lcp_size(int set_count, int slack_count, int directions)
{
    return set_count * (directions + 2) + slack_count;
}

pp_status pp_peg_workspace_create(int max_bodies, int max_contacts, int max_sets,
                                  int max_directions, pp_peg_workspace **out)
{
    if (!out) {
        pp_log(PP_LOG_ERROR, "pp_peg_workspace_create: NULL out");
        return PP_ERR_NULL_ARGUMENT;
    }
    *out = NULL;
    if (max_directions == 0) max_directions = PP_MLCP_DIRECTIONS_DEFAULT;
    if (max_bodies < 1 || max_contacts < 1 || max_sets < 1 || max_sets > max_contacts ||
        max_directions < PP_MLCP_DIRECTIONS_MIN || max_directions > PP_MLCP_DIRECTIONS_MAX ||
        (size_t)max_sets * (size_t)(max_directions + 2) + (size_t)max_contacts > (1u << 20)) {
        pp_log(PP_LOG_ERROR, "pp_peg_workspace_create: bodies %d, contacts %d, sets %d, "
               "directions %d out of range", max_bodies, max_contacts, max_sets, max_directions);
        return PP_ERR_INVALID_ARGUMENT;
    }
    pp_peg_workspace *ws = calloc(1, sizeof *ws);
    if (!ws) return PP_ERR_NO_MEMORY;
    size_t ns = (size_t)max_sets, k = (size_t)max_directions;
    size_t n = (size_t)pp_peg_lcp_size(max_sets, max_contacts, max_directions) +
               ns * PP_CONTACT_ROLLING_UNKNOWNS_MAX;
    size_t rows = ns * (k + 1) + (size_t)max_contacts;
    ws->max_bodies = max_bodies;
    ws->max_contacts = max_contacts;
    ws->max_sets = max_sets;
    ws->max_directions = max_directions;
    ws->n_max = (int)n;
    ws->max_rows = (int)rows;
    ws->row_first = malloc((ns + 1) * sizeof(int));
    ws->slack_first = malloc((ns + 1) * sizeof(int));
    ws->set_body = malloc(2 * ns * sizeof(int));
    ws->friction_slot = malloc(ns * sizeof(int));
    ws->set_mu = malloc(ns * sizeof(double));
    ws->set_surface = malloc(ns * sizeof(unsigned));
    ws->set_soft = malloc(ns * sizeof(double));
    ws->set_slip = malloc(ns * 6 * sizeof(double));
    ws->roll_axes = malloc(ns * sizeof(int));
    ws->roll_first = malloc((ns + 1) * sizeof(int));
    ws->local_roll = malloc(ns * sizeof(int));
    ws->set_rho = malloc(ns * 3 * sizeof(double));
    ws->rjac = calloc(ns * 36, sizeof(double));
    ws->rwjac = calloc(ns * 36, sizeof(double));
    ws->jac = malloc(rows * 12 * sizeof(double));
    ws->wjac = malloc(ns * (k + 1) * 12 * sizeof(double));
    ws->rhs = malloc(rows * sizeof(double));
    ws->dirs = malloc(ns * k * 3 * sizeof(double));
    ws->q = malloc(n * sizeof(double));
    ws->z = malloc(n * sizeof(double));
    ws->z_motion = malloc(n * sizeof(double));
    ws->dense = calloc(1, sizeof *ws->dense);
    ws->incidence_first = malloc(((size_t)max_bodies + 1) * sizeof(int));
    ws->incidence = malloc(2 * ns * sizeof(int));
    ws->fill = malloc((size_t)max_bodies * sizeof(int));
    ws->coupled = malloc((size_t)max_bodies);
    ws->owned = malloc((size_t)max_contacts);
    ws->root = malloc(ns * sizeof(int));
    ws->island_first = malloc((ns + 1) * sizeof(int));
    ws->island_sets = malloc(ns * sizeof(int));
    ws->local = malloc(ns * sizeof(int));
    ws->local_slack = malloc(ns * sizeof(int));
    ws->local_friction = malloc(ns * sizeof(int));
    pp_status status = PP_ERR_NO_MEMORY;
    if (ws->row_first && ws->slack_first && ws->set_body && ws->friction_slot && ws->set_mu &&
        ws->set_surface && ws->set_soft && ws->set_slip && ws->roll_axes && ws->roll_first &&
        ws->local_roll && ws->set_rho && ws->rjac && ws->rwjac &&
        ws->jac && ws->wjac && ws->rhs && ws->dirs && ws->q && ws->z && ws->z_motion && ws->dense &&
        ws->incidence_first && ws->incidence && ws->fill && ws->coupled && ws->owned &&
        ws->root && ws->island_first && ws->island_sets && ws->local && ws->local_slack &&
        ws->local_friction)
        status = PP_OK;
    if (status != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_peg_workspace_create: out of memory (LCP size %zu)", n);
        pp_peg_workspace_destroy(ws);
        return status;
    }
    *out = ws;
    return PP_OK;
}

void pp_peg_workspace_destroy(pp_peg_workspace *ws)
{
    if (!ws) return;
    free(ws->row_first);
    free(ws->slack_first);
    free(ws->set_body);
    free(ws->friction_slot);
    free(ws->set_mu);
    free(ws->set_surface);
    free(ws->set_soft);
    free(ws->set_slip);
    free(ws->roll_axes);
    free(ws->roll_first);
    free(ws->local_roll);
    free(ws->set_rho);
    free(ws->rjac);
    free(ws->rwjac);
    free(ws->jac);
    free(ws->wjac);
    free(ws->rhs);
    free(ws->dirs);
    free(ws->q);
    free(ws->z);
    free(ws->z_motion);
    dense_free(ws->dense);
    body_block_free(ws->block);
    free(ws->incidence_first);
    free(ws->incidence);
    free(ws->fill);
    free(ws->coupled);
    free(ws->owned);
    free(ws->root);
    free(ws->island_first);
    free(ws->island_sets);
    free(ws->local);
    free(ws->local_slack);
    free(ws->local_friction);
    pp_peg_joints_free(ws);
    pp_peg_screen_free(ws);
    free(ws);
}

void pp_peg_workspace_forget(pp_peg_workspace *ws)
{
    if (ws && ws->dense && ws->dense->sticking) pp_sticking_forget(ws->dense->sticking);
}

void pp_peg_workspace_start(pp_peg_workspace *ws, const double *z)
{
    ws->z_start = z;
}

void pp_peg_workspace_fallback_start(pp_peg_workspace *ws, const double *z)
{
    ws->z_fallback = z;
}

const double *pp_peg_last_z(const pp_peg_workspace *ws)
{
    return ws->z;
}

/* ---- Validation ---------------------------------------------------------------------------- */

static int finite_n(const double *x, int count)
{
    for (int i = 0; i < count; ++i)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* The options' arrays indexed by an LCP (pegplus/lcp.h: covering, fallback_start,
 * contact_block, set_slack) must be NULL: pp_peg_solve solves each island as an LCP of its
 * own, whose unknowns are not the whole LCP's (a whole-LCP array would be read with island
 * indices), and forms an island's contact blocks and candidate itself (solve_islands;
 * pp_peg_workspace_fallback_start takes a candidate in the whole LCP's order). */
static pp_status validate_options(const pp_lcp_options *o)
{
    if (!o) return PP_OK;
    const char *field = o->covering         ? "covering"
                        : o->fallback_start ? "fallback_start"
                        : o->contact_block  ? "contact_block"
                        : o->set_slack      ? "set_slack"
                                            : NULL;
    if (!field) return PP_OK;
    pp_log(PP_LOG_ERROR, "pp_peg_solve: options->%s must be NULL (it would index the whole LCP, "
           "and the islands are solved as LCPs of their own)", field);
    return PP_ERR_INVALID_ARGUMENT;
}

/* Same checks as pp_mlcp_solve on the shared part, then the sets: kinds, disjoint ranges in
 * bounds, and every secondary on the primary's body pair (either frame). */
static pp_status validate(pp_peg_workspace *ws, const pp_peg_problem *pp, int k,
                          const pp_mlcp_solution *s, int *slack_count)
{
    const char *who = "pp_peg_solve";
    const pp_mlcp_problem *p = &pp->base;
    if (!s->normal_impulse || !s->velocity || (p->contact_count > 0 && !p->contacts) ||
        (p->body_count > 0 && !p->bodies) || (pp->set_count > 0 && !pp->sets)) {
        pp_log(PP_LOG_ERROR, "%s: NULL array (normal_impulse, velocity, contacts, bodies or "
               "sets)", who);
        return PP_ERR_NULL_ARGUMENT;
    }
    if (!(p->compliance >= 0.0) || !(p->compliance < 1.0)) {
        pp_log(PP_LOG_ERROR, "%s: compliance = %g must be in [0, 1)", who, p->compliance);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (!(p->h > 0.0) || !isfinite(p->h)) {
        pp_log(PP_LOG_ERROR, "%s: h = %g must be finite and > 0", who, p->h);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (k < PP_MLCP_DIRECTIONS_MIN || k > PP_MLCP_DIRECTIONS_MAX || k > ws->max_directions ||
        p->body_count < 0 || p->body_count > ws->max_bodies || p->contact_count < 0 ||
        p->contact_count > ws->max_contacts || pp->set_count < 0 ||
        pp->set_count > ws->max_sets) {
        pp_log(PP_LOG_ERROR, "%s: %d bodies, %d contacts, %d sets, %d directions: negative or "
               "beyond the workspace (%d, %d, %d, %d)", who, p->body_count, p->contact_count,
               pp->set_count, k, ws->max_bodies, ws->max_contacts, ws->max_sets,
               ws->max_directions);
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (int b = 0; b < p->body_count; ++b) {
        const pp_mlcp_body *body = &p->bodies[b];
        if (!(body->inv_mass >= 0.0) || !finite_n(&body->inv_mass, 1) ||
            !finite_n(body->inv_inertia, 9) || !finite_n(body->x, 3) ||
            !finite_n(body->v, 3) || !finite_n(body->w, 3)) {
            pp_log(PP_LOG_ERROR, "%s: body %d: NaN/Inf or negative inverse mass", who, b);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    for (int i = 0; i < p->contact_count; ++i) {
        const pp_contact *c = &p->contacts[i];
        int a = c->body_a, b = c->body_b;
        double nn = pp_v3_dot(c->n, c->n);
        if (a < -1 || a >= p->body_count || b < -1 || b >= p->body_count || a == b ||
            !finite_n(c->p_a, 3) || !finite_n(c->n, 3) || !isfinite(c->psi) ||
            !(fabs(nn - 1.0) <= 1e-6) || !(c->mu >= 0.0) || !isfinite(c->mu) ||
            ((c->surface & PP_CONTACT_ANISOTROPIC) &&
             (!(c->mu2 >= 0.0) || !isfinite(c->mu2) || !finite_n(c->t1, 3))) ||
            ((c->surface & PP_CONTACT_MOTION) && !finite_n(c->motion, 3)) ||
            ((c->surface & PP_CONTACT_SOFT) &&
             (!(c->soft_cfm >= 0.0) || !isfinite(c->soft_cfm) || !(c->soft_erp >= 0.0) ||
              !(c->soft_erp <= 1.0))) ||
            ((c->surface & PP_CONTACT_SLIP) &&
             (!(c->slip[0] >= 0.0) || !isfinite(c->slip[0]) || !(c->slip[1] >= 0.0) ||
              !isfinite(c->slip[1]))) ||
            ((c->surface & PP_CONTACT_ROLLING) &&
             (!(c->rho[0] >= 0.0) || !isfinite(c->rho[0]) || !(c->rho[1] >= 0.0) ||
              !isfinite(c->rho[1]) || !(c->rho[2] >= 0.0) || !isfinite(c->rho[2]) ||
              !finite_n(c->t1, 3))) ||
            c->friction_axis < 0 || c->friction_axis > 3) {
            pp_log(PP_LOG_ERROR, "%s: contact %d: bodies (%d, %d) invalid for %d bodies, or "
                   "NaN/Inf, |n| = %g != 1, mu = %g < 0, mu2 = %g < 0, or soft_cfm < 0, "
                   "soft_erp outside [0, 1], slip < 0, rho < 0, friction_axis %d outside "
                   "0..3", who, i, a, b, p->body_count, sqrt(nn), c->mu, c->mu2,
                   c->friction_axis);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    memset(ws->owned, 0, (size_t)(p->contact_count > 0 ? p->contact_count : 0));
    int K = 0;
    for (int j = 0; j < pp->set_count; ++j) {
        const pp_peg_set *set = &pp->sets[j];
        if (set->kind < PP_PEG_SET_U || set->kind > PP_PEG_SET_X || set->count < 1 ||
            set->first < 0 || set->first > p->contact_count - set->count) {
            pp_log(PP_LOG_ERROR, "%s: set %d: kind %d, contacts [%d, %d + %d) outside 0..%d", who,
                   j, (int)set->kind, set->first, set->first, set->count, p->contact_count);
            return PP_ERR_INVALID_ARGUMENT;
        }
        const pp_contact *primary = &p->contacts[set->first];
        for (int i = set->first; i < set->first + set->count; ++i) {
            const pp_contact *c = &p->contacts[i];
            int same = c->body_a == primary->body_a && c->body_b == primary->body_b;
            int swapped = c->body_a == primary->body_b && c->body_b == primary->body_a;
            if (ws->owned[i] || (!same && !swapped)) {
                pp_log(PP_LOG_ERROR, "%s: set %d: contact %d is in another set or on another "
                       "body pair than its primary", who, j, i);
                return PP_ERR_INVALID_ARGUMENT;
            }
            ws->owned[i] = 1;
        }
        K += set->count - 1;
    }
    *slack_count = K;
    return PP_OK;
}

/* ---- Stages of one solve ------------------------------------------------------------------- */

/*
 * Anisotropic Coulomb friction (ODE's mu along fdir1, mu2 along the second tangent). The
 * friction set {f in the tangent plane : (f.t1/mu)^2 + (f.t2/mu2)^2 <= p_n^2}, an ellipse,
 * is approximated by the polygon inscribed in it with vertices
 *     D_l = mu cos(theta_l) t1 + mu2 sin(theta_l) t2,   theta_l = 2 pi l/k,
 * and the Stewart–Trinkle rows (ST96 Eqs 26–27) keep their form with D_l for d_l and 1 for mu:
 *     0 <= D^T nu + E sigma  ⊥ beta  >= 0,      0 <= p_n - E^T beta  ⊥ sigma >= 0,
 * so the friction impulse D beta lies in the polygon of p_n D_l (for mu = mu2 it is the
 * isotropic pyramid, scaled). With k = 4 the D_l are +-mu t1 and +-mu2 t2: along each axis
 * the limits are ODE's, mu p_n along t1 and mu2 p_n along t2 (an oblique slide meets the
 * rhombus inside ODE's rectangle). t1 is c->t1 projected on
 * the tangent plane of n (c->n may have turned since the caller set t1), t2 = n x t1.
 * Returns 0 (d untouched: the isotropic pyramid with mu) when t1 lies along n; else 1, with
 * the frame in t1, t2.
 */
static int anisotropic_directions(const pp_contact *c, int k, double *d, double t1[3],
                                  double t2[3])
{
    double along = pp_v3_dot(c->t1, c->n);
    for (int i = 0; i < 3; ++i) t1[i] = c->t1[i] - along * c->n[i];
    double len = sqrt(pp_v3_dot(t1, t1));
    if (!(len > 1e-9)) return 0;
    for (int i = 0; i < 3; ++i) t1[i] /= len;
    t2[0] = c->n[1] * t1[2] - c->n[2] * t1[1];
    t2[1] = c->n[2] * t1[0] - c->n[0] * t1[2];
    t2[2] = c->n[0] * t1[1] - c->n[1] * t1[0];
    const double two_pi = 6.283185307179586476925286766559;
    for (int l = 0; l < k; ++l) {
        /* exact axes at the quarter turns: k = 4 gives ODE's limits exactly */
        double co = 4 * l == k ? 0.0 : 4 * l == 3 * k ? 0.0 : cos(two_pi * l / k);
        double si = 2 * l == k ? 0.0 : sin(two_pi * l / k);
        for (int i = 0; i < 3; ++i) d[3 * l + i] = c->mu * co * t1[i] + c->mu2 * si * t2[i];
    }
    return 1;
}

/*
 * Rolling and spinning friction (ODE's rho, rho2, rhoN; mlcp.h): the angular columns
 * G_a = (A: [0; -a], B: [0; a]) of set j's axes a = t1, t2, n with rho_a > 0, in that order,
 * and W_b G_a. t1 is the primary's c->t1 projected on its tangent plane (ODE's frame, set by
 * the caller as for ANISOTROPIC), else the default pyramid's first direction; t2 = n x t1.
 */
static void build_rolling(pp_peg_workspace *ws, const pp_mlcp_problem *p, int j,
                          const pp_contact *c)
{
    double t1[3], t2[3], d0[12];
    pp_mlcp_friction_directions(c->n, 4, d0);
    double along = pp_v3_dot(c->t1, c->n);
    for (int i = 0; i < 3; ++i) t1[i] = c->t1[i] - along * c->n[i];
    double len = sqrt(pp_v3_dot(t1, t1));
    for (int i = 0; i < 3; ++i) t1[i] = len > 1e-9 ? t1[i] / len : d0[i];
    t2[0] = c->n[1] * t1[2] - c->n[2] * t1[1];
    t2[1] = c->n[2] * t1[0] - c->n[0] * t1[2];
    t2[2] = c->n[0] * t1[1] - c->n[1] * t1[0];
    const double *axis[3] = {t1, t2, c->n};
    int m = 0;
    for (int u = 0; u < 3; ++u) {
        if (!(c->rho[u] > 0.0)) continue;
        ws->set_rho[3 * j + m] = c->rho[u];
        for (int side = 0; side < 2; ++side) {
            double *g = RJAC(ws, j, m, side);
            for (int i = 0; i < 3; ++i) {
                g[i] = 0.0;
                g[3 + i] = side ? axis[u][i] : -axis[u][i];
            }
            int b = ws->set_body[2 * j + side];
            if (b >= 0) apply_inverse_mass(&p->bodies[b], g, RWJAC(ws, j, m, side));
        }
        ++m;
    }
    PP_ASSERT(m == ws->roll_axes[j], "build_rolling: the axes counted by pp_peg_solve");
}

/*
 * Stage 1: for every set, the rows' Jacobian blocks (the columns of mlcp.h, through
 * pp_mlcp_contact_jacobian), their psi/h terms, W_b g of its impulse columns, its mu, and the
 * per-body incidence lists and coupling flags (W_b != 0). A secondary given B -> A is flipped
 * into the primary's frame first (§2.4 same-frame rule), so that G_iota - G_s and
 * psi_iota - psi_s compare gaps of the same pair of bodies measured the same way.
 */
/* The gap a member's psi/h term sees (Eqs 39-40, 45), ODE's soft ERP applied to a penetration. */
static double soft_gap(const pp_contact *c, const pp_contact *member, int soft)
{
    return soft && member->psi < 0.0 ? c->soft_erp * member->psi : member->psi;
}

/* The recovery shift of a set whose gap is a penetration depth (PP_CONTACT_DEPTH on every
 * member; in practice U sets: closest-point contacts and vertices below a half-space). A set
 * holds when max_s psi_s >= 0, so its depth is -max_s psi_s. One deeper than v_max h (a body
 * left deep by another model or by the program) has every member's gap raised by the same
 * amount, to a set gap of -v_max h: the step asks for the gap rate v_max only, and the body
 * is recovered over several steps instead of leaving at -psi/h. The members' differences,
 * the slack rows' terms, are kept. 0 when v_max is 0 or infinite (no bound), and for PEG's
 * polytope sets, whose psi < 0 need not be a depth (pegplus/features.h). */
static double recovery_shift(const pp_mlcp_problem *p, const pp_peg_set *set, int soft)
{
    const double v_max = p->max_correcting_velocity;
    if (!(v_max > 0.0) || !isfinite(v_max)) return 0.0;
    const pp_contact *c = &p->contacts[set->first];
    double g = -INFINITY;
    for (int i = 0; i < set->count; ++i) {
        const pp_contact *member = &p->contacts[set->first + i];
        if (!(member->surface & PP_CONTACT_DEPTH)) return 0.0;
        g = fmax(g, soft_gap(c, member, soft));
    }
    const double floor = -v_max * p->h;
    return g < floor ? floor - g : 0.0;
}

/* Returns the sets whose gap recovery_shift raised. */
static int build_rows(pp_peg_workspace *ws, const pp_peg_problem *pp, int k)
{
    const pp_mlcp_problem *p = &pp->base;
    const int ns = pp->set_count, nb = p->body_count;
    const double h = p->h;
    for (int b = 0; b <= nb; ++b) ws->incidence_first[b] = 0;
    for (int b = 0; b < nb; ++b) {
        const pp_mlcp_body *body = &p->bodies[b];
        int coupled = body->inv_mass != 0.0;
        for (int e = 0; e < 9; ++e) coupled |= body->inv_inertia[e] != 0.0;
        ws->coupled[b] = (unsigned char)coupled;
    }
    int row = 0, slack = 0, recovered = 0;
    for (int j = 0; j < ns; ++j) {
        const pp_peg_set *set = &pp->sets[j];
        const pp_contact *c = &p->contacts[set->first];
        const double *xa = c->body_a >= 0 ? p->bodies[c->body_a].x : NULL;
        const double *xb = c->body_b >= 0 ? p->bodies[c->body_b].x : NULL;
        double *d = &ws->dirs[(size_t)j * k * 3];
        ws->row_first[j] = row;
        ws->slack_first[j] = slack;
        ws->set_body[2 * j] = c->body_a;
        ws->set_body[2 * j + 1] = c->body_b;
        ws->set_mu[j] = c->mu;
        ws->set_surface[j] = c->surface;
        pp_mlcp_friction_directions_about(c->n, c->friction_axis - 1, k, d);
        const int soft = (c->surface & PP_CONTACT_SOFT) != 0;
        if (c->surface) { /* the surface extensions (mlcp.h); nothing for a plain contact */
            double t1[3] = {0.0, 0.0, 0.0}, t2[3] = {0.0, 0.0, 0.0};
            if ((c->surface & PP_CONTACT_ANISOTROPIC) && k > 2 &&
                anisotropic_directions(c, k, d, t1, t2))
                ws->set_mu[j] = 1.0; /* the cone row sum_l beta_l <= p_n: mu is in the d_l */
            else if (c->surface & PP_CONTACT_SLIP) { /* the pyramid's own frame */
                for (int i = 0; i < 3; ++i) t1[i] = d[i];
                t2[0] = c->n[1] * t1[2] - c->n[2] * t1[1];
                t2[1] = c->n[2] * t1[0] - c->n[0] * t1[2];
                t2[2] = c->n[0] * t1[1] - c->n[1] * t1[0];
            }
            if (c->surface & PP_CONTACT_SLIP) {
                double *slip = &ws->set_slip[6 * (size_t)j];
                const double s1 = sqrt(c->slip[0] / h), s2 = sqrt(c->slip[1] / h);
                for (int i = 0; i < 3; ++i) {
                    slip[i] = s1 * t1[i];
                    slip[3 + i] = s2 * t2[i];
                }
            }
            /* ODE's soft contact: cfm/h on the normal diagonal (e(psi) below) */
            if (soft) ws->set_soft[j] = c->soft_cfm / h;
        }
        const double shift = recovery_shift(p, set, soft);
        recovered += shift > 0.0;
        const double e_psi = soft_gap(c, c, soft) + shift;
        /* normal and friction rows of the primary */
        for (int l = 0; l <= k; ++l) {
            const double *u = l == 0 ? c->n : &d[3 * (l - 1)];
            pp_mlcp_contact_jacobian(c, xa, xb, u, JAC(ws, row + l, 0), JAC(ws, row + l, 1));
            ws->rhs[row + l] = l == 0 ? e_psi / h : 0.0;
            /* a moving surface: the row sees u . (v_B - v_A - motion) */
            if (c->surface & PP_CONTACT_MOTION) ws->rhs[row + l] -= pp_v3_dot(u, c->motion);
        }
        /* slack rows: G_iota - G_s, (psi_iota - psi_s)/h   (Eq 45) */
        for (int i = 1; i < set->count; ++i) {
            pp_contact s = p->contacts[set->first + i];
            if (s.body_a != c->body_a) pp_peg_contact_flip(&s);
            double ga[6], gb[6];
            pp_mlcp_contact_jacobian(&s, xa, xb, s.n, ga, gb);
            double *ra = JAC(ws, row + k + i, 0), *rb = JAC(ws, row + k + i, 1);
            for (int r = 0; r < 6; ++r) {
                ra[r] = JAC(ws, row, 0)[r] - ga[r];
                rb[r] = JAC(ws, row, 1)[r] - gb[r];
            }
            const double e_s = soft_gap(c, &s, soft) + shift;
            ws->rhs[row + k + i] = (e_psi - e_s) / h;
            /* each gap rate relative to the moving surface: (n_iota - n_s) . motion */
            if (c->surface & PP_CONTACT_MOTION)
                ws->rhs[row + k + i] -= pp_v3_dot(c->n, c->motion) - pp_v3_dot(s.n, c->motion);
        }
        /* W_b g of the impulse columns */
        for (int side = 0; side < 2; ++side) {
            int b = ws->set_body[2 * j + side];
            if (b < 0) continue;
            ++ws->incidence_first[b + 1];
            for (int l = 0; l <= k; ++l)
                apply_inverse_mass(&p->bodies[b], JAC(ws, row + l, side), WJAC(ws, k, j, l, side));
        }
        if (ws->roll_axes[j] > 0) build_rolling(ws, p, j, c);
        row += k + set->count;
        slack += set->count - 1;
    }
    ws->row_first[ns] = row;
    ws->slack_first[ns] = slack;
    for (int b = 0; b < nb; ++b) {
        ws->incidence_first[b + 1] += ws->incidence_first[b];
        ws->fill[b] = ws->incidence_first[b];
    }
    for (int j = 0; j < ns; ++j)
        for (int side = 0; side < 2; ++side) {
            int b = ws->set_body[2 * j + side];
            if (b >= 0) ws->incidence[ws->fill[b]++] = 2 * j + side;
        }
    return recovered;
}

/* Stage 2: q of the whole LCP (file comment: each row's gap rate under the free velocity plus
 * its psi/h term, Eqs 39–40; 0 on the sigma rows), and the compliance shift r max_i M_ii over
 * the p and beta diagonals of ALL sets, M_ii = sum over the coupled sides of g^T W_b g. */
static void build_rhs(pp_peg_workspace *ws, const pp_peg_problem *pp, const lcp_layout *L)
{
    const pp_mlcp_problem *p = &pp->base;
    const int k = L->k;
    double dmax = 0.0;
    for (int j = 0; j < L->ns; ++j) {
        int rows = ws->row_first[j + 1] - ws->row_first[j];
        for (int r = 0; r < rows; ++r) {
            int at = row_index(L, j, r);
            if (at < 0) continue;
            double rate = 0.0, diagonal = 0.0;
            for (int side = 0; side < 2; ++side) {
                int b = ws->set_body[2 * j + side];
                if (b < 0) continue;
                const pp_mlcp_body *body = &p->bodies[b];
                const double *g = JAC(ws, ws->row_first[j] + r, side);
                rate += g[0] * body->v[0] + g[1] * body->v[1] + g[2] * body->v[2] +
                        g[3] * body->w[0] + g[4] * body->w[1] + g[5] * body->w[2];
                if (r <= k && ws->coupled[b]) diagonal += dot6(g, WJAC(ws, k, j, r, side));
            }
            ws->q[at] = rate + ws->rhs[ws->row_first[j] + r];
            if (r <= k) dmax = fmax(dmax, diagonal);
        }
        if (L->friction[j] >= 0) ws->q[sigma_index(L, j)] = 0.0;
        /* rolling: +-G_a^T nu* on the torque rows, 0 on the bound's row */
        for (int m = 0; m < ws->roll_axes[j]; ++m) {
            double rate = 0.0;
            for (int side = 0; side < 2; ++side) {
                int b = ws->set_body[2 * j + side];
                if (b >= 0) rate += pp_v3_dot(RJAC(ws, j, m, side) + 3, p->bodies[b].w);
            }
            ws->q[roll_index(L, j, 3 * m)] = rate;
            ws->q[roll_index(L, j, 3 * m + 1)] = -rate;
            ws->q[roll_index(L, j, 3 * m + 2)] = 0.0;
        }
    }
    ws->last_shift = p->compliance > 0.0 ? p->compliance * dmax : 0.0;
}

/* Stage 3: islands, the connected components of "sets sharing a coupled body"
 * (islands_internal.h), as a CSR list (island_first, island_sets). local[] is free until the
 * islands are solved. Returns the number of islands. */
static int find_islands(pp_peg_workspace *ws, int ns, int nb)
{
    return pp_islands_find(ns, nb, ws->coupled, ws->incidence_first, ws->incidence, ws->root,
                           ws->local, ws->island_first, ws->island_sets);
}

/*
 * The body blocks of J^T W J (file comment: every row and impulse column of a set acts on its
 * two bodies only). Entry (row a, column c) of J^T W J is sum_b g_a,b^T (W_b g_c,b) over the
 * coupled bodies b that a's set and c's set share: at most two, since a set's two bodies
 * differ. So M is built body by body: for body b, the rows on b (their Jacobian blocks g_a,b,
 * packed by component so that consecutive rows are consecutive in memory) against the impulse
 * columns on b (W_b g_c,b, computed once per column in build_rows), each product written into
 * column c of M: the work is the sum over bodies of (rows on b) x (columns on b), the
 * nonzeros, and a column's entries are written in one pass down it.
 *
 * Round-off. Each product is dot6's sum (g_0 w_0 + g_1 w_1 + ... + g_5 w_5, left to right),
 * and an entry receives at most two of them on M = 0; (0 + x) + y is the same double as
 * (0 + y) + x, so the order in which bodies are visited changes no bit, and the entries are
 * those of the entry-by-entry loop. A row or column that enters with a minus sign (the
 * rolling g- unknowns) has its vector negated exactly before the products.
 */
struct pp_body_block {
    int rows_capacity, cols_capacity;
    int *row_at, *col_at;   /* LCP index of each packed row / column */
    double *g;              /* [component 0..5][rows_capacity]: the rows' g on the body */
    double *dots;           /* rows_capacity: one column's products */
    const double **wg;      /* per column: W_b g of the column on the body */
    signed char *col_sign;  /* per column: +1, or -1 for g- */
};

/* Rows and columns a listed set j puts on one of its bodies, for body_block_reserve. */
static void set_block_size(const pp_peg_workspace *ws, int j, int k, int *rows, int *cols)
{
    const int frictional = ws->friction_slot[j] >= 0;
    const int slacks = ws->slack_first[j + 1] - ws->slack_first[j];
    *rows += 1 + (frictional ? k : 0) + slacks + 2 * ws->roll_axes[j];
    *cols += 1 + (frictional ? k : 0) + 2 * ws->roll_axes[j];
}

/* Room for the largest body block of the problem (after build_rows and the rolling axes). */
static pp_status body_block_reserve(pp_peg_workspace *ws, int nb, int k)
{
    int max_rows = 1, max_cols = 1;
    for (int b = 0; b < nb; ++b) {
        int rows = 0, cols = 0;
        for (int e = ws->incidence_first[b]; e < ws->incidence_first[b + 1]; ++e)
            set_block_size(ws, ws->incidence[e] / 2, k, &rows, &cols);
        if (rows > max_rows) max_rows = rows;
        if (cols > max_cols) max_cols = cols;
    }
    struct pp_body_block *bb = ws->block;
    if (!bb) {
        bb = ws->block = calloc(1, sizeof *bb);
        if (!bb) return PP_ERR_NO_MEMORY;
    }
    if (max_rows > bb->rows_capacity) {
        int *at = realloc(bb->row_at, (size_t)max_rows * sizeof *at);
        if (at) bb->row_at = at;
        double *g = realloc(bb->g, (size_t)max_rows * 6 * sizeof *g);
        if (g) bb->g = g;
        double *dots = realloc(bb->dots, (size_t)max_rows * sizeof *dots);
        if (dots) bb->dots = dots;
        if (!at || !g || !dots) return PP_ERR_NO_MEMORY;
        bb->rows_capacity = max_rows;
    }
    if (max_cols > bb->cols_capacity) {
        int *at = realloc(bb->col_at, (size_t)max_cols * sizeof *at);
        if (at) bb->col_at = at;
        const double **wg = realloc(bb->wg, (size_t)max_cols * sizeof *wg);
        if (wg) bb->wg = wg;
        signed char *sign = realloc(bb->col_sign, (size_t)max_cols);
        if (sign) bb->col_sign = sign;
        if (!at || !wg || !sign) return PP_ERR_NO_MEMORY;
        bb->cols_capacity = max_cols;
    }
    return PP_OK;
}

static void body_block_free(struct pp_body_block *bb)
{
    if (!bb) return;
    free(bb->row_at);
    free(bb->col_at);
    free(bb->g);
    free(bb->dots);
    free(bb->wg);
    free(bb->col_sign);
    free(bb);
}

/* Row `a` of the block: LCP index `at`, Jacobian block g on the body (negated when sign < 0). */
static inline void block_row(struct pp_body_block *bb, int a, int at, const double *g, int sign)
{
    const int cap = bb->rows_capacity;
    bb->row_at[a] = at;
    for (int e = 0; e < 6; ++e) bb->g[(size_t)e * cap + a] = sign < 0 ? -g[e] : g[e];
}

/* The columns of body block bb (rows x cols) added into M: for each impulse column c, the
 * products g_a^T (W_b g_c) of every row a first, four rows at a time in four-lane vectors
 * (lcp_internal.h pp_lcp_v4: each lane with dot6's order, so the same bits as the scalar
 * loop; the AVX2 copy does a column's four rows in one instruction each, where the baseline
 * build uses two SSE2 ones), then their scatter into the column of M. */
static inline __attribute__((always_inline)) void
body_columns_kernel(const struct pp_body_block *bb, int rows, int cols, int n, double *M)
{
    const int cap = bb->rows_capacity;
    const double *g0 = bb->g, *g1 = g0 + cap, *g2 = g1 + cap, *g3 = g2 + cap, *g4 = g3 + cap,
                 *g5 = g4 + cap;
    const int *row_at = bb->row_at;
    double *restrict dots = bb->dots;
    for (int c = 0; c < cols; ++c) {
        double w[6];
        for (int e = 0; e < 6; ++e) w[e] = bb->col_sign[c] < 0 ? -bb->wg[c][e] : bb->wg[c][e];
        const pp_lcp_v4 w0 = {w[0], w[0], w[0], w[0]}, w1 = {w[1], w[1], w[1], w[1]},
                        w2 = {w[2], w[2], w[2], w[2]}, w3 = {w[3], w[3], w[3], w[3]},
                        w4 = {w[4], w[4], w[4], w[4]}, w5 = {w[5], w[5], w[5], w[5]};
        int a = 0;
        for (; a + 4 <= rows; a += 4)
            PP_LCP_V4(dots + a) = PP_LCP_V4(g0 + a) * w0 + PP_LCP_V4(g1 + a) * w1 +
                                  PP_LCP_V4(g2 + a) * w2 + PP_LCP_V4(g3 + a) * w3 +
                                  PP_LCP_V4(g4 + a) * w4 + PP_LCP_V4(g5 + a) * w5;
        for (; a < rows; ++a)
            dots[a] = g0[a] * w[0] + g1[a] * w[1] + g2[a] * w[2] + g3[a] * w[3] + g4[a] * w[4] +
                      g5[a] * w[5];
        double *Mc = M + (size_t)bb->col_at[c] * n;
        for (a = 0; a < rows; ++a) Mc[row_at[a]] += dots[a];
    }
}

static void body_columns(const struct pp_body_block *bb, int rows, int cols, int n, double *M)
{
    body_columns_kernel(bb, rows, cols, n, M);
}

#if defined(PP_LCP_AVX2_DISPATCH)
PP_LCP_AVX2_TARGET static void body_columns_avx2(const struct pp_body_block *bb, int rows,
                                                 int cols, int n, double *M)
{
    body_columns_kernel(bb, rows, cols, n, M);
}
#endif

/* Body b's block of J^T W J added into M (leading dimension n), in layout L. */
static void assemble_body(const pp_peg_workspace *ws, const lcp_layout *L, int b, int n,
                          double *M)
{
    const int k = L->k;
    struct pp_body_block *bb = ws->block;
    int rows = 0, cols = 0;
    for (int e = ws->incidence_first[b]; e < ws->incidence_first[b + 1]; ++e) {
        const int j = ws->incidence[e] / 2, side = ws->incidence[e] % 2;
        const int count = ws->row_first[j + 1] - ws->row_first[j];
        for (int r = 0; r < count; ++r) {
            const int at = row_index(L, j, r);
            if (at < 0) continue;
            block_row(bb, rows++, at, JAC(ws, ws->row_first[j] + r, side), 1);
            if (r <= k) { /* the impulse column of the same unknown */
                bb->col_at[cols] = at;
                bb->wg[cols] = WJAC(ws, k, j, r, side);
                bb->col_sign[cols++] = 1;
            }
        }
        /* rolling (mlcp.h): the rows and columns g+ along G_a, g- along -G_a */
        for (int m = 0; m < ws->roll_axes[j]; ++m)
            for (int u = 0; u < 2; ++u) {
                const int at = roll_index(L, j, 3 * m + u);
                block_row(bb, rows++, at, RJAC(ws, j, m, side), u ? -1 : 1);
                bb->col_at[cols] = at;
                bb->wg[cols] = RWJAC(ws, j, m, side);
                bb->col_sign[cols++] = (signed char)(u ? -1 : 1);
            }
    }
#if defined(PP_LCP_AVX2_DISPATCH)
    if (pp_lcp_cpu_avx2()) {
        body_columns_avx2(bb, rows, cols, n, M);
        return;
    }
#endif
    body_columns(bb, rows, cols, n, M);
}

/*
 * The LCP matrix of the file comment (Eqs 48–49 with nu eliminated) restricted to the sets
 * list[0..count) in layout L, into M (column-major, leading dimension layout_size(L)). Every
 * set sharing a coupled body with a listed set must be listed too (an island, or all sets).
 * Each entry sums its bodies' terms in the same order whatever the list, so an island's
 * matrix is bit for bit the whole matrix's block. n >= layout_size(L) is the leading
 * dimension (the joint rows' unknowns follow the contacts', peg_joints.c).
 */
static void assemble_matrix(const pp_peg_workspace *ws, const lcp_layout *L, const int *list,
                            int count, int n, int zeroed, double *M)
{
    const int k = L->k;
    if (!zeroed) memset(M, 0, (size_t)n * n * sizeof *M);

    /* J^T W J, body block by body block (above): each coupled body of the list once, at the
     * first set of its incidence list (every set on it is listed) */
    for (int t = 0; t < count; ++t)
        for (int si = 0; si < 2; ++si) {
            const int i = list[t], b = ws->set_body[2 * i + si];
            if (b >= 0 && ws->coupled[b] && ws->incidence[ws->incidence_first[b]] == 2 * i + si)
                assemble_body(ws, L, b, n, M);
        }

    for (int t = 0; t < count; ++t) {
        const int j = list[t], kj = ws->slack_first[j + 1] - ws->slack_first[j];
        const int p = row_index(L, j, 0), c0 = L->ns + L->slack[j];
        /* Compliance, as pp_mlcp_solve (mlcp.h): r max M_ii (stage 2, over all sets) on the
         * diagonal of the impulse rows (p and beta), never on the slack rows, whose E_I1
         * diagonal is already 1. */
        if (ws->last_shift > 0.0)
            for (int l = 0; l <= k; ++l) {
                int at = col_index(L, j, l);
                if (at >= 0) M[(size_t)at + (size_t)at * n] += ws->last_shift;
            }
        /* ODE's soft_cfm on the normal row, slip on the friction rows (mlcp.h) */
        if (ws->set_surface[j] & PP_CONTACT_SOFT) M[(size_t)p + (size_t)p * n] += ws->set_soft[j];
        if ((ws->set_surface[j] & PP_CONTACT_SLIP) && L->friction[j] >= 0) {
            const double *slip = &ws->set_slip[6 * (size_t)j];
            const double *dj = &ws->dirs[(size_t)j * k * 3];
            for (int l = 0; l < k; ++l) {
                const double al = pp_v3_dot(&dj[3 * l], slip);
                const double bl = pp_v3_dot(&dj[3 * l], slip + 3);
                const int row_l = col_index(L, j, l + 1);
                for (int m = 0; m < k; ++m) {
                    const double am = pp_v3_dot(&dj[3 * m], slip);
                    const double bm = pp_v3_dot(&dj[3 * m], slip + 3);
                    M[(size_t)row_l + (size_t)col_index(L, j, m + 1) * n] += al * am + bl * bm;
                }
            }
        }
        /* E_I2 (Eq 44) and E_I1 (Eq 43) */
        for (int s = 0; s < kj; ++s) {
            M[p + (size_t)(c0 + s) * n] = 1.0;
            for (int r = 0; r <= s; ++r) M[(c0 + s) + (size_t)(c0 + r) * n] = 1.0;
        }
        /* rolling: the planar pyramid of each axis (mlcp.h): e, -e^T, rho_a on p_n; the
         * compliance shift on its torque unknowns as on the other impulses */
        for (int m = 0; m < ws->roll_axes[j]; ++m) {
            const int gp = roll_index(L, j, 3 * m), gm = gp + 1, sg = gp + 2;
            M[gp + (size_t)sg * n] = 1.0;
            M[gm + (size_t)sg * n] = 1.0;
            M[sg + (size_t)gp * n] = -1.0;
            M[sg + (size_t)gm * n] = -1.0;
            M[sg + (size_t)p * n] = ws->set_rho[3 * j + m];
            M[gp + (size_t)gp * n] += ws->last_shift;
            M[gm + (size_t)gm * n] += ws->last_shift;
        }
        /* friction: E, -E^T, U (ST96 Eqs 26–27) on the primary */
        if (L->friction[j] >= 0) {
            const int sigma = sigma_index(L, j);
            M[sigma + (size_t)p * n] = ws->set_mu[j];
            for (int l = 1; l <= k; ++l) {
                int beta = col_index(L, j, l);
                M[beta + (size_t)sigma * n] = 1.0;
                M[sigma + (size_t)beta * n] = -1.0;
            }
        }
    }
}

/*
 * A large island's matrix by compressed columns (pp_lcp_csc, lcp_internal.h), never dense,
 * column by column in order. Column c belongs to one set j: an impulse column (p, beta, or a
 * rolling g+/g-) has the body terms g_a^T (W_b g_c) of every row a on j's coupled bodies (the
 * rows of a body are listed once per island, sorted: body_rows), then the set's own entries;
 * a slack, sigma or rolling s column has only the set's entries (E_I1, E_I2, E, -E^T, U, the
 * rolling pyramid). Each entry is formed as assemble_matrix forms it: 0 plus at most two body
 * products (a sum of two is the same double in either order), then the compliance shift, the
 * soft and slip terms in assemble_matrix's order, and the set's constant entries assigned; so
 * the values are the dense matrix's bit for bit. Every diagonal entry is kept (0 where nothing
 * is written), so the pattern also serves M + eps I. Memory: the columns (12 bytes a nonzero)
 * and O(n) scratch, kept in the dense store and grown to the largest island, never n^2.
 */
struct body_row {
    int row;               /* LCP index in the island */
    signed char sign;      /* -1: the g- row of a rolling axis (g negated) */
    const double *g;       /* the row's Jacobian block on the body */
};
typedef struct body_row body_row;

static int body_row_order(const void *a, const void *b)
{
    const int ra = ((const body_row *)a)->row, rb = ((const body_row *)b)->row;
    return (ra > rb) - (ra < rb);
}

/* g^T w with g, w negated by their signs, in assemble_body's order (dot6's). */
static inline double signed_dot(const double *g, int gs, const double *w, int ws_)
{
    double x[6], y[6];
    for (int e = 0; e < 6; ++e) {
        x[e] = gs < 0 ? -g[e] : g[e];
        y[e] = ws_ < 0 ? -w[e] : w[e];
    }
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5];
}

#define GROW_TO(ptr, cap_field, need)                                          \
    do {                                                                                    \
        if ((size_t)(need) > (cap_field)) {                                                 \
            size_t cap_ = (cap_field) ? (cap_field) : 1024;                                   \
            while (cap_ < (size_t)(need)) cap_ *= 2;                                        \
            void *p_ = realloc((ptr), cap_ * sizeof *(ptr));                                \
            if (!p_) return PP_ERR_NO_MEMORY;                                               \
            (ptr) = p_;                                                                     \
            (cap_field) = cap_;                                                             \
        }                                                                                   \
    } while (0)

enum { COL_IMPULSE, COL_ROLL, COL_ROLL_S, COL_SLACK, COL_SIGMA };

/* Set j has unknowns in layout L: every set of an island's own layout; a screened LCP
 * (peg_screen.c) leaves out the island's other sets on the same bodies (position -1). */
static inline int listed(const lcp_layout *L, int j)
{
    return !L->position || L->position[j] >= 0;
}

/* Sets ordered by their pair of coupled bodies (csc_entries_least). */
typedef struct pair_rows {
    double key; /* a nb + b, a < b the coupled bodies; -1 - t with fewer than two */
    int rows;
} pair_rows;

static int pair_rows_order(const void *x, const void *y)
{
    const double a = ((const pair_rows *)x)->key, b = ((const pair_rows *)y)->key;
    return (a > b) - (a < b);
}

/* The rows of listed set j in layout L, as csc_assemble counts them on each of its bodies. */
static int set_rows(const pp_peg_workspace *ws, const lcp_layout *L, int j)
{
    int rows = 2 * ws->roll_axes[j];
    for (int r = 0; r < ws->row_first[j + 1] - ws->row_first[j]; ++r)
        rows += row_index(L, j, r) >= 0;
    return rows;
}

/* The ordering key of set j's pair of coupled bodies (local numbers lb[0..m), nb of them);
 * -1 - t (unique) with fewer than two. */
static double pair_key(const int *lb, int m, int t, double nb)
{
    if (m < 2) return -1.0 - t;
    return lb[0] < lb[1] ? lb[0] * nb + lb[1] : lb[1] * nb + lb[0];
}

/* A lower bound of nnz(M) before M is formed, from the rows on each coupled body
 * (c->body_first[lb + 1], not yet summed): an impulse or rolling column of set j holds an
 * entry at every row on either of j's coupled bodies A and B (csc_assemble's body terms keep
 * the zeros), |rows on A| + |rows on B| - |rows on both|, and the rows on both are those of
 * the sets on the same pair of bodies. The sets' own entries beyond these are not counted.
 * HUGE_VAL when there is no room for the ordering (the caller then forms M). */
static double csc_entries_least(const pp_peg_workspace *ws, const lcp_layout *L,
                                const int *list, int count, const csc_store *c)
{
    const int k = L->k;
    const double nb = (double)c->body_capacity;
    pair_rows *by_pair = malloc((size_t)(count > 0 ? count : 1) * sizeof *by_pair);
    if (!by_pair) return HUGE_VAL;
    for (int t = 0; t < count; ++t) {
        const int j = list[t];
        int lb[2], m = 0;
        for (int side = 0; side < 2; ++side) {
            const int b = ws->set_body[2 * j + side];
            if (b >= 0 && ws->coupled[b]) lb[m++] = c->body_local[b];
        }
        by_pair[t].rows = set_rows(ws, L, j);
        by_pair[t].key = pair_key(lb, m, t, nb);
    }
    qsort(by_pair, (size_t)count, sizeof *by_pair, pair_rows_order);
    double least = 0.0;
    for (int t = 0; t < count; ++t) {
        const int j = list[t];
        int columns = 2 * ws->roll_axes[j], rows = 0, m = 0, lb[2];
        for (int l = 0; l <= k; ++l) columns += col_index(L, j, l) >= 0;
        for (int side = 0; side < 2; ++side) {
            const int b = ws->set_body[2 * j + side];
            if (b < 0 || !ws->coupled[b]) continue;
            lb[m++] = c->body_local[b];
            rows += c->body_first[c->body_local[b] + 1];
        }
        if (m == 2) { /* less the rows on both: the sets of this pair (a run of by_pair) */
            const double key = pair_key(lb, m, t, nb);
            int lo = 0, hi = count;
            while (lo < hi) {
                const int mid = lo + (hi - lo) / 2;
                if (by_pair[mid].key < key) lo = mid + 1;
                else hi = mid;
            }
            for (int u = lo; u < count && by_pair[u].key == key; ++u) rows -= by_pair[u].rows;
        }
        least += (double)columns * rows;
    }
    free(by_pair);
    return least;
}

/* M by columns. idle_entries (pp_lcp_fallback_idle_entries; HUGE_VAL: always formed): when
 * a lower bound of nnz(M) exceeds it (csc_entries_least), M is not formed and *idle is set to
 * that bound (else 0). own_only: without the body terms, the sets' own entries alone (L of
 * the bodies' description, fallback_bodies_island). */
static pp_status csc_assemble(const pp_peg_workspace *ws, const pp_peg_problem *pp,
                              const lcp_layout *L, const int *list, int count, int n,
                              double idle_entries, int own_only, csc_store *c, pp_lcp_csc *A,
                              double *idle)
{
    *idle = 0.0;
    const int k = L->k, nb = pp->base.body_count;
    /* scratch of n (and of the problem's bodies) */
    if ((size_t)n + 1 > c->n_capacity) {
        size_t cap = (size_t)n + 1;
        double *acc = realloc(c->acc, cap * sizeof *acc);
        if (acc) c->acc = acc;
        int *stamp = realloc(c->stamp, cap * sizeof *stamp);
        if (stamp) c->stamp = stamp;
        int *owner = realloc(c->owner, cap * sizeof *owner);
        if (owner) c->owner = owner;
        int *kind = realloc(c->kind, cap * sizeof *kind);
        if (kind) c->kind = kind;
        int *extra = realloc(c->extra, cap * sizeof *extra);
        if (extra) c->extra = extra;
        int *start = realloc(c->col_start, cap * sizeof *start);
        if (start) c->col_start = start;
        if (!acc || !stamp || !owner || !kind || !extra || !start) return PP_ERR_NO_MEMORY;
        for (size_t i = c->n_capacity; i < cap; ++i) c->acc[i] = 0.0;
        c->n_capacity = cap;
    }
    if ((size_t)nb + 1 > c->body_capacity) {
        int *local = realloc(c->body_local, ((size_t)nb + 1) * sizeof *local);
        if (!local) return PP_ERR_NO_MEMORY;
        c->body_local = local;
        int *first = realloc(c->body_first, ((size_t)nb + 2) * sizeof *first);
        if (!first) return PP_ERR_NO_MEMORY;
        c->body_first = first;
        c->body_capacity = (size_t)nb + 1;
    }
    for (int i = 0; i < n; ++i) c->stamp[i] = -1;
    /* the island's coupled bodies, numbered; their rows, sorted */
    int bodies = 0;
    size_t rows_total = 0;
    for (int b = 0; b < nb; ++b) c->body_local[b] = -1;
    for (int t = 0; t < count; ++t)
        for (int side = 0; side < 2; ++side) {
            const int b = ws->set_body[2 * list[t] + side];
            if (b < 0 || !ws->coupled[b] || c->body_local[b] >= 0) continue;
            c->body_local[b] = bodies++;
        }
    for (int i = 0; i <= bodies; ++i) c->body_first[i] = 0; /* by local number */
    for (int b = 0; b < nb; ++b) {
        const int lb = c->body_local[b];
        if (lb < 0) continue;
        int rows = 0;
        for (int e = ws->incidence_first[b]; e < ws->incidence_first[b + 1]; ++e) {
            const int j = ws->incidence[e] / 2;
            if (!listed(L, j)) continue;
            const int cnt = ws->row_first[j + 1] - ws->row_first[j];
            for (int r = 0; r < cnt; ++r) rows += row_index(L, j, r) >= 0;
            rows += 2 * ws->roll_axes[j];
        }
        c->body_first[lb + 1] = rows;
    }
    if (idle_entries < HUGE_VAL) {
        const double least = csc_entries_least(ws, L, list, count, c);
        if (least > idle_entries) {
            *idle = least;
            return PP_OK;
        }
    }
    for (int i = 0; i < bodies; ++i) c->body_first[i + 1] += c->body_first[i];
    rows_total = (size_t)c->body_first[bodies];
    GROW_TO(c->body_rows, c->body_rows_capacity, rows_total + 1);
    for (int b = 0; b < nb && !own_only; ++b) {
        const int lb = c->body_local[b];
        if (lb < 0) continue;
        body_row *out = c->body_rows + c->body_first[lb];
        int m = 0;
        for (int e = ws->incidence_first[b]; e < ws->incidence_first[b + 1]; ++e) {
            const int j = ws->incidence[e] / 2, side = ws->incidence[e] % 2;
            if (!listed(L, j)) continue;
            const int cnt = ws->row_first[j + 1] - ws->row_first[j];
            for (int r = 0; r < cnt; ++r) {
                const int at = row_index(L, j, r);
                if (at < 0) continue;
                out[m++] = (body_row){at, 1, JAC(ws, ws->row_first[j] + r, side)};
            }
            for (int a = 0; a < ws->roll_axes[j]; ++a)
                for (int u = 0; u < 2; ++u)
                    out[m++] = (body_row){roll_index(L, j, 3 * a + u), (signed char)(u ? -1 : 1),
                                          RJAC(ws, j, a, side)};
        }
        qsort(out, (size_t)m, sizeof *out, body_row_order);
    }
    /* the owner and kind of every column */
    for (int t = 0; t < count; ++t) {
        const int j = list[t];
        const int kj = L->slack ? ws->slack_first[j + 1] - ws->slack_first[j] : 0;
        for (int l = 0; l <= k; ++l) {
            const int at = col_index(L, j, l);
            if (at < 0) continue;
            c->owner[at] = j;
            c->kind[at] = COL_IMPULSE + 8 * l;
        }
        for (int s = 0; s < kj; ++s) {
            c->owner[L->ns + L->slack[j] + s] = j;
            c->kind[L->ns + L->slack[j] + s] = COL_SLACK + 8 * s;
        }
        if (L->friction[j] >= 0) {
            c->owner[sigma_index(L, j)] = j;
            c->kind[sigma_index(L, j)] = COL_SIGMA;
        }
        for (int a = 0; a < ws->roll_axes[j]; ++a)
            for (int u = 0; u < 3; ++u) {
                const int at = roll_index(L, j, 3 * a + u);
                c->owner[at] = j;
                c->kind[at] = (u == 2 ? COL_ROLL_S : COL_ROLL) + 8 * (3 * a + u);
            }
    }
    double *acc = c->acc;
    int *stamp = c->stamp, *extra = c->extra;
    size_t p = 0;
    for (int col = 0; col < n; ++col) {
        const int j = c->owner[col], kind = c->kind[col] % 8, index = c->kind[col] / 8;
        const int pj = row_index(L, j, 0);
        c->col_start[col] = (int)p;
        /* the body terms: the rows on j's coupled bodies, merged in row order */
        const body_row *ra = NULL, *rb = NULL;
        int na = 0, nbr = 0;
        const double *wa = NULL, *wb = NULL;
        int wsign = 1;
        if (!own_only && (kind == COL_IMPULSE || kind == COL_ROLL)) {
            for (int side = 0; side < 2; ++side) {
                const int b = ws->set_body[2 * j + side];
                if (b < 0 || !ws->coupled[b]) continue;
                const int lb = c->body_local[b];
                const body_row *rows = c->body_rows + c->body_first[lb];
                const int m = c->body_first[lb + 1] - c->body_first[lb];
                const double *w = kind == COL_IMPULSE ? WJAC(ws, k, j, index, side)
                                                      : RWJAC(ws, j, index / 3, side);
                if (!ra) {
                    ra = rows;
                    na = m;
                    wa = w;
                } else {
                    rb = rows;
                    nbr = m;
                    wb = w;
                }
            }
            if (kind == COL_ROLL) wsign = index % 3 == 1 ? -1 : 1;
        }
        size_t need = p + (size_t)na + (size_t)nbr + (size_t)k + 8 +
                      (size_t)(ws->slack_first[j + 1] - ws->slack_first[j]);
        GROW_TO(c->row_index, c->rows_capacity, need);
        GROW_TO(c->values, c->values_capacity, need);
        int ia = 0, ib = 0;
        const size_t body_begin = p;
        while (ia < na || ib < nbr) {
            const int row_a = ia < na ? ra[ia].row : INT_MAX;
            const int row_b = ib < nbr ? rb[ib].row : INT_MAX;
            const int row = row_a < row_b ? row_a : row_b;
            double v = 0.0;
            if (row_a == row) {
                v += signed_dot(ra[ia].g, ra[ia].sign, wa, wsign);
                ++ia;
            }
            if (row_b == row) {
                v += signed_dot(rb[ib].g, rb[ib].sign, wb, wsign);
                ++ib;
            }
            acc[row] = v;
            stamp[row] = col;
            c->row_index[p++] = row;
        }
        /* the set's own entries in this column, in assemble_matrix's order; rows not among
         * the body terms go to extra */
        int ne = 0;
#define TOUCH(r)                                                                                \
    do {                                                                                    \
        if (stamp[(r)] != col) {                                                            \
            stamp[(r)] = col;                                                               \
            acc[(r)] = 0.0;                                                                 \
            extra[ne++] = (r);                                                              \
        }                                                                                   \
    } while (0)
        if (kind == COL_IMPULSE) {
            if (ws->last_shift > 0.0) {
                TOUCH(col);
                acc[col] += ws->last_shift;
            }
            if (index == 0 && (ws->set_surface[j] & PP_CONTACT_SOFT)) {
                TOUCH(col);
                acc[col] += ws->set_soft[j];
            }
            if (index >= 1 && (ws->set_surface[j] & PP_CONTACT_SLIP) && L->friction[j] >= 0) {
                const double *slip = &ws->set_slip[6 * (size_t)j];
                const double *dj = &ws->dirs[(size_t)j * k * 3];
                const int m = index - 1;
                const double am = pp_v3_dot(&dj[3 * m], slip);
                const double bm = pp_v3_dot(&dj[3 * m], slip + 3);
                for (int l = 0; l < k; ++l) {
                    const double al = pp_v3_dot(&dj[3 * l], slip);
                    const double bl = pp_v3_dot(&dj[3 * l], slip + 3);
                    const int row_l = col_index(L, j, l + 1);
                    TOUCH(row_l);
                    acc[row_l] += al * am + bl * bm;
                }
            }
            if (index == 0) {
                for (int a = 0; a < ws->roll_axes[j]; ++a) {
                    const int sg = roll_index(L, j, 3 * a + 2);
                    TOUCH(sg);
                    acc[sg] = ws->set_rho[3 * j + a];
                }
                if (L->friction[j] >= 0) {
                    TOUCH(sigma_index(L, j));
                    acc[sigma_index(L, j)] = ws->set_mu[j];
                }
            } else if (L->friction[j] >= 0) {
                TOUCH(sigma_index(L, j));
                acc[sigma_index(L, j)] = -1.0;
            }
        } else if (kind == COL_ROLL) {
            TOUCH(col);
            acc[col] += ws->last_shift;
            const int sg = roll_index(L, j, 3 * (index / 3) + 2);
            TOUCH(sg);
            acc[sg] = -1.0;
        } else if (kind == COL_ROLL_S) {
            TOUCH(col - 2);
            acc[col - 2] = 1.0;
            TOUCH(col - 1);
            acc[col - 1] = 1.0;
        } else if (kind == COL_SLACK) {
            const int c0 = L->ns + L->slack[j], kj = ws->slack_first[j + 1] - ws->slack_first[j];
            TOUCH(pj);
            acc[pj] = 1.0;
            for (int s = index; s < kj; ++s) {
                TOUCH(c0 + s);
                acc[c0 + s] = 1.0;
            }
        } else { /* COL_SIGMA */
            for (int l = 1; l <= k; ++l) {
                const int beta = col_index(L, j, l);
                TOUCH(beta);
                acc[beta] = 1.0;
            }
        }
        TOUCH(col); /* the diagonal, 0 if nothing else */
#undef TOUCH
        /* extra rows (few) sorted, then merged with the body rows (sorted) */
        for (int a = 1; a < ne; ++a)
            for (int b = a; b > 0 && extra[b - 1] > extra[b]; --b) {
                int t = extra[b];
                extra[b] = extra[b - 1];
                extra[b - 1] = t;
            }
        if (ne > 0) {
            /* merge from the back: body rows at [body_begin, p), extras after them */
            size_t i = p, out = p + (size_t)ne;
            int e = ne;
            while (e > 0) {
                if (i > body_begin && c->row_index[i - 1] > extra[e - 1])
                    c->row_index[--out] = c->row_index[--i];
                else
                    c->row_index[--out] = extra[--e];
            }
            p += (size_t)ne;
        }
        for (size_t t = body_begin; t < p; ++t) {
            const int row = c->row_index[t];
            c->values[t] = acc[row];
            acc[row] = 0.0;
        }
        if (p >= (size_t)1 << 31) return PP_ERR_NO_MEMORY;
    }
    c->col_start[n] = (int)p;
    A->n = n;
    A->col_start = c->col_start;
    A->row_index = c->row_index;
    A->values = c->values;
    return PP_OK;
}
#undef GROW_TO

int pp_peg_may_share(const pp_peg_workspace *ws, const pp_peg_problem *pp, int n, int K,
                     int joint_count, int rolls)
{
    return n > 0 && ws->last_shift == 0.0 && K == 0 && joint_count == 0 && rolls == 0 &&
           !pp->base.keep_lemke_vertex;
}

void pp_peg_island_map(const pp_peg_workspace *ws, const lcp_layout *L, const lcp_layout *whole,
                       const int *list, int count, int *map)
{
    for (int t = 0; t < count; ++t) {
        const int j = list[t], rows = ws->row_first[j + 1] - ws->row_first[j];
        for (int r = 0; r < rows; ++r) {
            const int a = row_index(L, j, r);
            if (a >= 0) map[a] = row_index(whole, j, r);
        }
        if (ws->friction_slot[j] >= 0) map[sigma_index(L, j)] = sigma_index(whole, j);
        for (int u = 0; u < 3 * ws->roll_axes[j]; ++u)
            map[roll_index(L, j, u)] = roll_index(whole, j, u);
    }
}

/* Bit 2 of every byte of the island (d->island_map, n unknowns) in the caller's basis: load
 * sharing ran from this basis and left the answer as it was. */
static int sharing_ran_here(const dense_store *d, const unsigned char *basis, int n)
{
    for (int a = 0; a < n; ++a)
        if (!(basis[d->island_map[a]] & PP_PEG_SHARING_RAN)) return 0;
    return n > 0;
}

/* Load sharing's description of island s (lcp_load_sharing.c): its arrays reserved, the
 * impulse unknowns (force), each set's p and first friction unknown, the freedoms (6 per
 * coupled body, each counted once: fill[] as a stamp, build_rows leaves it >= 0), and the
 * compliant basis kept in bit 1 of the warm start's bytes (ls->start: one was kept). */
static pp_status sharing_setup(pp_peg_workspace *ws, const lcp_layout *island, const int *list,
                               int count, int s, int n, const unsigned char *basis,
                               int *freedoms)
{
    dense_store *d = ws->dense;
    pp_load_sharing *ls = &d->load;
    const int k = island->k;
    pp_status room = pp_load_sharing_reserve(ls, n);
    if (room != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for load sharing (%d unknowns)", n);
        return room;
    }
    memset(ls->force, 0, (size_t)n);
    *freedoms = 0;
    for (int t = 0; t < count; ++t)
        for (int side = 0; side < 2; ++side) {
            int b = ws->set_body[2 * list[t] + side];
            if (b >= 0 && ws->coupled[b] && ws->fill[b] != -1 - s) {
                ws->fill[b] = -1 - s;
                *freedoms += 6;
            }
        }
    for (int t = 0; t < count; ++t) {
        int j = list[t];
        ls->normal[t] = row_index(island, j, 0);
        ls->beta[t] = col_index(island, j, 1);
        for (int l = 0; l <= k; ++l) {
            int at = col_index(island, j, l);
            if (at >= 0) ls->force[at] = 1;
        }
    }
    /* bit 1 of a basis byte: the compliant basis of load sharing, kept with the warm start
     * (peg.h "basis") as its start next time */
    ls->start = 0;
    for (int a = 0; basis && a < n; ++a) {
        ls->basis[a] = (unsigned char)((basis[d->island_map[a]] >> 1) & 1);
        ls->start |= ls->basis[a];
    }
    return PP_OK;
}

/* Load sharing on a screened island's LCP (peg_screen.c): S's layout L over the sets `list`
 * (count of them, n unknowns, columns A), q in d->island_q, Lemke's accepted answer in
 * d->island_z, its basis (bit 0) in d->island_basis and S's map in d->island_map; `basis` the
 * caller's whole-indexed bytes, `from_basis` 1 when Lemke's answer was accepted from them as
 * they stood. The steps solve_islands runs after Lemke on an island by columns: the kept
 * compliant basis (bit 1) first (pp_load_sharing_kept), else pp_load_sharing_apply unless it
 * ran from this same basis before (bit 2 on every unknown: a repeat, *outcome -1). On
 * PP_LOAD_SHARED or PP_LOAD_SHARED_IMPULSES d->island_z and *r hold the limit (the caller
 * verifies the omitted sets at its velocities); d->island_basis gets bits 1 and 2. */
pp_status pp_peg_share_screened(pp_peg_workspace *ws, const lcp_layout *L, const int *list,
                                int count, int s, int n, const pp_lcp_csc *A,
                                const pp_lcp_options *options, const unsigned char *basis,
                                int from_basis, pp_lcp_result *r, int *outcome)
{
    dense_store *d = ws->dense;
    pp_load_sharing *ls = &d->load;
    pp_lcp_options defaults = pp_lcp_options_default();
    const pp_lcp_options *share_options = options ? options : &defaults;
    int freedoms = 0;
    pp_status room = sharing_setup(ws, L, list, count, s, n, basis, &freedoms);
    if (room != PP_OK) return room;
    int o = -1;
    if (ls->start) {
        if (pp_load_sharing_kept(ls, A, d->island_q, share_options, d->island_z, r) ==
            PP_LOAD_SHARED)
            o = PP_LOAD_SHARED;
        ls->start = 0; /* tried: not again after Lemke */
    } else if (basis && from_basis && sharing_ran_here(d, basis, n)) {
        for (int a = 0; a < n; ++a) d->island_basis[a] |= PP_PEG_SHARING_RAN;
        *outcome = -1;
        return PP_OK;
    }
    if (o < 0)
        o = pp_load_sharing_apply(ls, d->lcp, n, NULL, A, d->island_q, count, L->k, freedoms,
                                  share_options, d->island_basis, d->island_z, r);
    const unsigned char ran = (o == PP_LOAD_UNIQUE || o == PP_LOAD_SAME || o == PP_LOAD_KEPT)
                                  ? PP_PEG_SHARING_RAN
                                  : 0;
    for (int a = 0; a < n; ++a)
        d->island_basis[a] = (unsigned char)((d->island_basis[a] & 1) |
                                             (ls->found ? ls->basis[a] << 1 : 0) | ran);
    *outcome = o;
    return PP_OK;
}

pp_status pp_peg_csc_assemble(const pp_peg_workspace *ws, const pp_peg_problem *pp,
                              const lcp_layout *L, const int *list, int count, int n,
                              csc_store *c, pp_lcp_csc *A)
{
    double idle;
    return csc_assemble(ws, pp, L, list, count, n, HUGE_VAL, 0, c, A, &idle);
}

pp_status pp_peg_island_reserve(pp_peg_workspace *ws, int n)
{
    return dense_reserve(ws->dense, n, 1, 1);
}

/* The sticking solve (lcp_sticking.c) of an island by columns that load sharing may answer
 * (no PEG I/X sets, joint rows, rolling friction or compliance: pp_peg_may_share), tried
 * where load sharing's own entries before Lemke did not answer (solve_islands): A, q
 * (d->island_q) and the map assembled. Its answer, accepted on LCP(A, q), is the island's:
 * *answered, z in d->island_z, r its measures, and d->island_basis its active set (bit 0),
 * PP_PEG_STICKING on every unknown and PP_PEG_STICKING_SLIDES on the sigma of a contact it
 * let slide, for the next step, which tries that set first (one factorisation). Refused
 * (*refused), Lemke runs as before and r holds the pivots spent on Q. The next step does
 * not try it (bytes marked PP_PEG_STICKING_REFUSED by solve_islands) where it was refused,
 * nor where Lemke's solve took at most n / STICK_LEMKE_CHEAP pivots: a warm Lemke that
 * repairs its basis in a few pivots is cheaper than Lemke on Q (heap20 at rest on main:
 * 0-50 pivots a step where Lemke on Q from that basis took ~840). */
#define STICK_LEMKE_CHEAP 4
/* Islands of this many unknowns or more run it (docs/performance.md, "The sticking solve of
 * settled heaps"): on heap20's island (678 unknowns, standard model) Lemke's warm basis holds
 * at rest and its cold path is ~940 pivots; with the sticking solve the first step took 826
 * pivots on Q, but its kept active set failed after 3-10 steps (the limit's infeasibility
 * grows from 1e-8 to 1e-7 of ||z|| as the heap creeps) and Lemke then started from it (1 506
 * pivots): 4 steps above 10x the median in 100 against 2. On heap50's (1 962-2 040
 * unknowns) every step of Lemke is cold (17 000-100 000 pivots), and there it pays. */
#ifndef PP_PEG_STICKING_MIN_N
#define PP_PEG_STICKING_MIN_N 1000
#endif
static int sticking_min_n = PP_PEG_STICKING_MIN_N;

int pp_peg_sticking_min_n(int n)
{
    int previous = sticking_min_n;
    sticking_min_n = n;
    return previous;
}

int pp_peg_sticking_size(void) { return sticking_min_n; }

/*
 * Declined islands (pp_peg_workspace_decline; the stepper's moving islands under
 * PP_MODEL_PEG). An island with I/X sets (K > 0) goes to Lemke on its whole PEG LCP unless
 * screening answers it or the primaries' reduction does (peg_screen.c): the sticking solve
 * and load sharing take K = 0 islands only. At an impact none of the three answers: measured
 * on ODE's crash demo (docs/performance.md, "PEG's impact steps handed to the standard
 * model"), the cannon ball's island at steps 15-19 holds 10 114-25 473 unknowns (1 398-2 471
 * sets, K 1 726-5 949), screening's gate sends it cold to the reduction (S_0 1 211-3 109 of
 * its unknowns, more than the sticking solve's size), whose sticking solve on the primaries'
 * Stewart-Trinkle LCP (8 388-10 338 unknowns) runs 3 400-4 600 pivots to the 10 s clock and
 * fails; the whole island's Lemke then gets no pivot and the bounded fallback answers (r
 * 0.3-1.2) in every run since the clock was made hard. The reduction seeded with screening's
 * S_0 instead (1 200 unknowns, its violated sets joining as in screening: 2 898 by the third
 * round) does not answer either (the sticking solve on it: 15 816 pivots to the clock). The
 * standard model's LCP of the same pairs at the same pose is 4 980 unknowns (830 contacts),
 * which the sticking solve's creeping round answers in ~3 s. So an island that
 *  - has I/X sets (K > 0) and no joint rows,
 *  - is cold (no warm start: the stepper starts a moving island cold unless it knows every
 *    set's basis, stage_time_step.c),
 *  - was not answered by screening,
 *  - has at least decline_min_n unknowns (PP_PEG_DECLINE_MIN_N, 8 000: above every PEG
 *    island with I/X sets answered in the measured scenes, the crash wall's 5 272-5 316 and
 *    heap100's 4 500-4 508 at rest, heap50's 2 202-2 210 and boxstack's <= 439 moving; below
 *    the impact's 10 114 and the convex ball's landing, 46 601-201 554),
 * is declined when the caller allows it: not assembled, z = 0, stats->declined, and the
 * call returns PP_ERR_SOLVER so that the caller answers the island by a model whose LCP it
 * can solve, in the clock that screening's rounds on the island left: all of it where the
 * gate sends the island on without a round (the crash's steps 15-16), none where a round's
 * Lemke ran to the clock (its step 17: a round of 1 706 of the island's 24 465 unknowns,
 * 47 018 pivots in 9.99 s; the standard model's LCP, 6 450 unknowns, then gets no pivot and
 * the bounded fallback answers it). The rule reads sizes and the warm start, and screening's
 * outcome, which the clock can decide (a round cut by it gives the island up); clock-free
 * the same islands are declined in every run.
 *
 * A first contact. An island that meets every condition but is warm is declined too, before
 * screening's first round, when its warm basis holds no set's p basic (no set was active
 * last time: every set was verified open) and some set closes at the free motion (w_p < 0
 * beyond what the LCP resolves; a gap closed at relative rest, w_p = 0, as in a stack falling
 * as one, is not): the landing of a body that fell with its sets in proximity
 * (pp_peg_screen_island, may_decline and first_contact). The warm start holds nothing there (a
 * basis of w basic is Lemke's cold start), and screening's rounds grow as the cold ones do:
 * the convex scene's step 208 (the 90 cells at 8.5 m/s, 136 577 PEG unknowns) was screened in
 * PEG's sets, round 1 on 3 242 unknowns (7 452 pivots) and round 2 on 11 794 (a 25 735-pivot
 * path), past the clock; the standard model's LCP of the same pose is exact in ~5-8 s of CPU
 * (docs/performance.md, "The landing's clock", "A first contact declined").
 */
static int decline_min_n = PP_PEG_DECLINE_MIN_N;

int pp_peg_decline_min_n(int n)
{
    int previous = decline_min_n;
    decline_min_n = n;
    return previous;
}

void pp_peg_workspace_decline(pp_peg_workspace *ws, int on)
{
    if (ws) ws->decline = on;
}

static int declined(const pp_peg_workspace *ws, int n, int K, const pp_lcp_options *options,
                    const unsigned char *basis)
{
    return ws->decline && K > 0 && n >= decline_min_n &&
           !(basis && options && options->warm_start);
}

/* The island's bodies for the interior-point stage (lcp_interior.h, pp_interior_bodies):
 * A = L + G^T W G, G the impulse columns' Jacobian blocks (JAC) on the island's coupled bodies
 * (6 rows each, numbered in order of first appearance; a body with W_b = 0 is no column), W_b =
 * blockdiag(inv_mass I, inv_inertia) (apply_inverse_mass), the groups the sets: a set's
 * p, beta and sigma. Out of memory: no description (the Newton matrix on A's pattern). */
static void sticking_bodies(const pp_peg_workspace *ws, const pp_peg_problem *pp,
                            const lcp_layout *island, const int *list, int count, int n,
                            pp_interior *ip)
{
    const int k = island->k, nb = pp->base.body_count;
    int *local = ws->dense->csc.body_local; /* csc_assemble's scratch of nb + 1, free now */
    int bodies = 0;
    size_t entries = 0;
    for (int b = 0; b < nb; ++b) local[b] = -1;
    for (int t = 0; t < count; ++t) {
        const int j = list[t], columns = ws->friction_slot[j] >= 0 ? k + 1 : 1;
        for (int side = 0; side < 2; ++side) {
            const int b = ws->set_body[2 * j + side];
            if (b < 0 || !ws->coupled[b]) continue;
            if (local[b] < 0) local[b] = bodies++;
            entries += 6 * (size_t)columns;
        }
    }
    if (pp_interior_bodies_reserve(ip, n, bodies, entries) != PP_OK) return;
    pp_interior_bodies *bd = &ip->bodies;
    for (int b = 0; b < nb; ++b) {
        const int d = local[b];
        if (d < 0) continue;
        const pp_mlcp_body *body = &pp->base.bodies[b];
        double *W = bd->W + 36 * (size_t)d;
        for (int e = 0; e < 36; ++e) W[e] = 0.0;
        for (int r = 0; r < 3; ++r) {
            W[r + 6 * r] = body->inv_mass;
            for (int c = 0; c < 3; ++c) W[(3 + r) + 6 * (3 + c)] = body->inv_inertia[3 * r + c];
        }
    }
    /* column counts, then the columns (each set's lower-numbered body first: rows increasing) */
    for (int a = 0; a <= n; ++a) bd->col_start[a] = 0;
    for (int t = 0; t < count; ++t) {
        const int j = list[t], columns = ws->friction_slot[j] >= 0 ? k + 1 : 1;
        int on = 0;
        for (int side = 0; side < 2; ++side) {
            const int b = ws->set_body[2 * j + side];
            on += b >= 0 && ws->coupled[b];
        }
        for (int l = 0; l < columns; ++l) bd->col_start[col_index(island, j, l) + 1] = 6 * on;
        bd->group[row_index(island, j, 0)] = t;
        for (int l = 1; l < columns; ++l) bd->group[col_index(island, j, l)] = t;
        if (columns > 1) bd->group[sigma_index(island, j)] = t;
    }
    for (int a = 0; a < n; ++a) bd->col_start[a + 1] += bd->col_start[a];
    for (int t = 0; t < count; ++t) {
        const int j = list[t], columns = ws->friction_slot[j] >= 0 ? k + 1 : 1;
        int side_order[2] = {0, 1};
        const int b0 = ws->set_body[2 * j], b1 = ws->set_body[2 * j + 1];
        if (b0 >= 0 && b1 >= 0 && local[b1] < local[b0]) {
            side_order[0] = 1;
            side_order[1] = 0;
        }
        for (int l = 0; l < columns; ++l) {
            int at = bd->col_start[col_index(island, j, l)];
            for (int o = 0; o < 2; ++o) {
                const int side = side_order[o], b = ws->set_body[2 * j + side];
                if (b < 0 || !ws->coupled[b]) continue;
                const double *g = JAC(ws, ws->row_first[j] + l, side);
                for (int e = 0; e < 6; ++e) {
                    bd->row_index[at] = 6 * local[b] + e;
                    bd->values[at++] = g[e];
                }
            }
        }
    }
}

/* The workspace's sticking solve state, made on first use, with room for n unknowns; NULL
 * when out of memory. */
static pp_sticking *sticking_ready(dense_store *d, int n)
{
    if (!d->sticking) d->sticking = calloc(1, sizeof *d->sticking);
    if (!d->sticking || pp_sticking_reserve(d->sticking, n) != PP_OK) return NULL;
    return d->sticking;
}

/* The caller's fallback candidate (ws->z_fallback) gathered into the island's order, in the
 * sticking solve's z_given (read by a sticking solve only where sticking_entry wrote it). */
static pp_status fallback_candidate(pp_peg_workspace *ws, int n, double **z)
{
    dense_store *d = ws->dense;
    if (!sticking_ready(d, n)) return PP_ERR_NO_MEMORY;
    for (int a = 0; a < n; ++a) d->sticking->z_given[a] = ws->z_fallback[d->island_map[a]];
    *z = d->sticking->z_given;
    return PP_OK;
}

static pp_status sticking_entry(pp_peg_workspace *ws, const pp_peg_problem *pp,
                                const lcp_layout *island, const int *list, int count, int n,
                                const pp_lcp_csc *A,
                                const pp_lcp_options *options, const unsigned char *basis,
                                pp_lcp_result *r, int *answered, int *refused)
{
    dense_store *d = ws->dense;
    *answered = *refused = 0;
    const int warm = basis && options && options->warm_start;
    int kept = warm, skip = warm;
    for (int a = 0; a < n && (kept || skip); ++a) {
        kept = kept && (basis[d->island_map[a]] & PP_PEG_STICKING);
        skip = skip && (basis[d->island_map[a]] & PP_PEG_STICKING_REFUSED);
    }
    if (skip) return PP_OK;
    pp_sticking *st = sticking_ready(d, n);
    if (!st) return PP_ERR_NO_MEMORY;
    memset(st->sliding, 0, (size_t)n);
    for (int t = 0; t < count; ++t)
        if (ws->friction_slot[list[t]] >= 0) st->sliding[sigma_index(island, list[t])] = 1;
    for (int a = 0; a < n; ++a) {
        const unsigned char b = warm ? basis[d->island_map[a]] : 0;
        st->start[a] = (unsigned char)(b & 1);
        st->kept_slides[a] = (unsigned char)((b & PP_PEG_STICKING_SLIDES) != 0);
    }
    /* the caller's start of the interior-point stage, in the island's order */
    for (int a = 0; ws->z_start && a < n; ++a) st->z_given[a] = ws->z_start[d->island_map[a]];
    st->given = ws->z_start != NULL;
    /* the interior-point stage's Newton systems in body space (lcp_interior.c, (4)) */
    sticking_bodies(ws, pp, island, list, count, n, &st->interior);
    pp_lcp_options defaults = pp_lcp_options_default();
    pp_sticking_outcome out = pp_sticking_island(
        st, d->lcp, A, d->island_q, st->sliding, kept ? st->start : NULL,
        kept ? st->kept_slides : NULL, warm ? st->start : NULL, options ? options : &defaults,
        d->island_z, r);
    st->interior.bodies.n = 0; /* this island's only */
    if (out == PP_STICKING_LEMKE_WARM) return PP_OK;
    if (out != PP_STICKING_SOLVED) {
        *refused = 1;
        return PP_OK;
    }
    *answered = 1;
    for (int a = 0; a < n; ++a)
        d->island_basis[a] = (unsigned char)(st->basis[a] | PP_PEG_STICKING |
                                             (st->slides[a] ? PP_PEG_STICKING_SLIDES : 0));
    return PP_OK;
}

int pp_peg_primaries_may(const pp_peg_workspace *ws, const pp_peg_problem *pp, int n, int K,
                         int joint_count, int rolls)
{
    return K > 0 && n - K >= sticking_min_n && n >= csc_min_n &&
           pp_peg_may_share(ws, pp, n - K, 0, joint_count, rolls);
}

pp_status pp_peg_primaries_solve(pp_peg_workspace *ws, const pp_peg_problem *pp,
                                 const lcp_layout *whole, const lcp_layout *R, const int *list,
                                 int count, int n, const pp_lcp_options *options,
                                 const unsigned char *basis, pp_lcp_result *r, int *answered)
{
    dense_store *d = ws->dense;
    *answered = 0;
    memset(r, 0, sizeof *r);
    pp_status st = dense_reserve(d, n, 1, 1);
    if (st != PP_OK) return st;
    pp_peg_island_map(ws, R, whole, list, count, d->island_map);
    for (int a = 0; a < n; ++a) {
        d->island_q[a] = ws->q[d->island_map[a]];
        d->island_basis[a] = basis ? basis[d->island_map[a]] & 1 : 0;
    }
    pp_lcp_csc A = {0, NULL, NULL, NULL};
    double idle = 0.0; /* past the clock and too large to sweep: not formed, not answered here
                          (the whole island's path gives the fallback's answer) */
    if (csc_assemble(ws, pp, R, list, count, n, pp_lcp_fallback_idle_entries(options), 0,
                     &d->csc, &A, &idle) != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for the columns of an LCP of %d "
                             "unknowns", n);
        return PP_ERR_NO_MEMORY;
    }
    if (idle > 0.0) return PP_OK;
    int refused = 0;
    st = sticking_entry(ws, pp, R, list, count, n, &A, options, basis, r, answered, &refused);
    if (st != PP_OK || *answered || refused) return st;
    /* PP_STICKING_LEMKE_WARM: Lemke's warm basis solves the reduced LCP as it stands */
    st = pp_lcp_solve_csc(d->lcp, &A, d->island_q, options, d->island_basis, d->island_z, r);
    if (st != PP_OK && st != PP_ERR_SOLVER) return st;
    *answered = st == PP_OK;
    return PP_OK;
}

/* One block of pp_lcp_bodies (lcp_fallback_bodies.h) of unknown `at`: slot 0, or 1 when 0
 * is taken; `column` 0 a row block, 1 a column block; the values times `sign`. */
static void put_block(int *body, double *g, int at, int column, int lb, const double *src,
                      int sign)
{
    const int s = body[4 * at + 2 * column] < 0 ? 0 : 1;
    body[4 * at + 2 * column + s] = lb;
    double *out = &g[24 * (size_t)at + 12 * column + 6 * s];
    for (int e = 0; e < 6; ++e) out[e] = sign < 0 ? -src[e] : src[e];
}

/* Past the clock, an island whose M csc_assemble did not form (idle: its lower bound of
 * nnz(M)): the bounded fallback's sweeps in body space (lcp_fallback_bodies.c) on M's
 * description M = L + Gr^T W Gc, in d->island_z with their measures in r. The row blocks are
 * csc_assemble's body rows (JAC of every row of a set on each coupled body, RJAC of its
 * rolling rows, signed), the column blocks its impulse and rolling columns' W_b g (WJAC,
 * RWJAC, signed alike), the bodies numbered as csc_assemble numbers them, and L the sets' own
 * entries (csc_assemble without the body terms), so M's entries are csc_assemble's up to the
 * order of the sums. Out of memory: the answer without a sweep, z = 0
 * (pp_lcp_fallback_unformed). */
static void fallback_bodies_island(pp_peg_workspace *ws, const pp_peg_problem *pp,
                                   const lcp_layout *island, const int *list, int count, int n,
                                   double idle, const pp_lcp_options *options,
                                   pp_lcp_result *r)
{
    dense_store *d = ws->dense;
    const int k = island->k;
    pp_lcp_csc own = {0, NULL, NULL, NULL};
    double unused;
    const pp_status st =
        csc_assemble(ws, pp, island, list, count, n, HUGE_VAL, 1, &d->csc, &own, &unused);
    int *body = malloc(4 * (size_t)n * sizeof *body);
    double *g = malloc(24 * (size_t)n * sizeof *g);
    if (st != PP_OK || !body || !g) {
        free(body);
        free(g);
        pp_lcp_fallback_unformed(n, d->island_q, idle, options, d->island_z, r);
        return;
    }
    for (size_t t = 0; t < 4 * (size_t)n; ++t) body[t] = -1;
    int bodies = 0;
    for (int t = 0; t < count; ++t) {
        const int j = list[t], rows = ws->row_first[j + 1] - ws->row_first[j];
        for (int side = 0; side < 2; ++side) {
            const int b = ws->set_body[2 * j + side];
            if (b < 0 || !ws->coupled[b]) continue;
            const int lb = d->csc.body_local[b];
            if (lb >= bodies) bodies = lb + 1;
            for (int row = 0; row < rows; ++row) {
                const int at = row_index(island, j, row);
                if (at >= 0)
                    put_block(body, g, at, 0, lb, JAC(ws, ws->row_first[j] + row, side), 1);
            }
            for (int l = 0; l <= k; ++l) {
                const int at = col_index(island, j, l);
                if (at >= 0) put_block(body, g, at, 1, lb, WJAC(ws, k, j, l, side), 1);
            }
            for (int a = 0; a < ws->roll_axes[j]; ++a)
                for (int u = 0; u < 2; ++u) { /* g_a+ and g_a-: +G_a and -G_a */
                    const int at = roll_index(island, j, 3 * a + u), sign = u ? -1 : 1;
                    put_block(body, g, at, 0, lb, RJAC(ws, j, a, side), sign);
                    put_block(body, g, at, 1, lb, RWJAC(ws, j, a, side), sign);
                }
        }
    }
    /* the friction cones: each frictional set's (ST96 Eq 27, its betas, sigma and mu), each
     * rolling axis's (g+, g-, s and rho) */
    int cones = 0, members = 0;
    for (int t = 0; t < count; ++t) {
        const int j = list[t];
        cones += (island->friction[j] >= 0) + ws->roll_axes[j];
        members += (island->friction[j] >= 0 ? k : 0) + 2 * ws->roll_axes[j];
    }
    int *cone_first = malloc(((size_t)cones + 1) * sizeof *cone_first);
    int *cone_beta = malloc(((size_t)members + 1) * sizeof *cone_beta);
    int *cone_p = malloc(((size_t)cones + 1) * sizeof *cone_p);
    int *cone_sigma = malloc(((size_t)cones + 1) * sizeof *cone_sigma);
    double *cone_mu = malloc(((size_t)cones + 1) * sizeof *cone_mu);
    if (!cone_first || !cone_beta || !cone_p || !cone_sigma || !cone_mu) {
        cones = 0; /* out of memory: the sweeps without the cones */
    } else {
        int c = 0, m = 0;
        for (int t = 0; t < count; ++t) {
            const int j = list[t];
            if (island->friction[j] >= 0) {
                cone_first[c] = m;
                for (int l = 1; l <= k; ++l) cone_beta[m++] = col_index(island, j, l);
                cone_p[c] = row_index(island, j, 0);
                cone_sigma[c] = sigma_index(island, j);
                cone_mu[c++] = ws->set_mu[j];
            }
            for (int a = 0; a < ws->roll_axes[j]; ++a) {
                cone_first[c] = m;
                cone_beta[m++] = roll_index(island, j, 3 * a);
                cone_beta[m++] = roll_index(island, j, 3 * a + 1);
                cone_p[c] = row_index(island, j, 0);
                cone_sigma[c] = roll_index(island, j, 3 * a + 2);
                cone_mu[c++] = ws->set_rho[3 * j + a];
            }
        }
        cone_first[c] = m;
    }
    const pp_lcp_bodies B = {n,      bodies,    body,      g,          own,
                             cones,  cone_first, cone_beta, cone_p, cone_sigma, cone_mu};
    pp_lcp_fallback_bodies(&B, d->island_q, options, d->island_z, r);
    free(cone_first);
    free(cone_beta);
    free(cone_p);
    free(cone_sigma);
    free(cone_mu);
    free(body);
    free(g);
    pp_log(PP_LOG_WARNING, "lcp: n = %d past the clock, its M (at least %.3g nonzeros) not "
                           "formed: %d sweeps in body space (%d bodies, %d friction cones), "
                           "residual %.3g, rel residual %.3g (against bounds of the row sums)",
           n, idle, r->fallback_iterations, bodies, cones, r->residual, r->relative_residual);
}

/*
 * Stage 4: each island's LCP assembled and solved on its own (pp_lcp_solve), its z and final
 * basis scattered into the whole z and basis (indexed like the whole LCP, so the caller's
 * warm-start basis keeps its meaning). A failed island leaves z = 0 (lcp.h) and an all-w
 * basis in its block; the other islands are still solved.
 */
static pp_status solve_islands(pp_peg_workspace *ws, const pp_peg_problem *pp,
                               const lcp_layout *whole, int islands, const int *island_first,
                               const int *island_sets, const int *joint_first,
                               const int *island_joints, const pp_lcp_options *options,
                               unsigned char *basis, pp_peg_stats *stats)
{
    const int k = whole->k;
    pp_status result = PP_OK;
    for (int s = 0; s < islands; ++s) {
        const int *list = &island_sets[island_first[s]];
        const int count = island_first[s + 1] - island_first[s];
        const int *joints = joint_first ? &island_joints[joint_first[s]] : NULL;
        const int joint_count = joint_first ? joint_first[s + 1] - joint_first[s] : 0;
        int K = 0, nf = 0, nr = 0;
        for (int t = 0; t < count; ++t) {
            int j = list[t];
            ws->local[j] = t;
            ws->local_slack[j] = K;
            K += ws->slack_first[j + 1] - ws->slack_first[j];
            ws->local_friction[j] = ws->friction_slot[j] >= 0 ? nf++ : -1;
            ws->local_roll[j] = nr;
            nr += 3 * ws->roll_axes[j];
        }
        const lcp_layout island = {count, K, nf, k, ws->local, ws->local_slack,
                                   ws->local_friction, nr, ws->local_roll};
        const int n_c = layout_size(&island);
        int n = n_c;
        for (int t = 0; t < joint_count; ++t)
            n += ws->joint_first[joints[t] + 1] - ws->joint_first[joints[t]];
        /* Constraint screening (peg_screen.c): a large island without joint rows solved on
         * its sets that can be active, the others verified through the bodies' velocities;
         * when it does not settle, the whole island below. */
        pp_lcp_result abandoned; /* screening's rounds when it gave up: their counters */
        memset(&abandoned, 0, sizeof abandoned);
        if (joint_count == 0 && n >= csc_min_n) {
            int answered = 0, solved_n = 0, first_contact = 0;
            unsigned char mark = 0; /* screening's gate, kept in the reduction's bytes */
            pp_status sst = pp_peg_screen_island(ws, pp, whole, list, count, s, n, options,
                                                 basis, stats, &abandoned, &answered,
                                                 &solved_n, &mark,
                                                 declined(ws, n, K, options, NULL),
                                                 &first_contact);
            if (sst != PP_OK) return sst;
            if (answered) {
                pp_lcp_result_merge(&stats->lcp, &abandoned, s == 0);
                if (solved_n > stats->largest_island) stats->largest_island = solved_n;
                continue;
            }
            /* handed back unsolved ("Declined islands"): z = 0, screening's pivots counted */
            if (first_contact || declined(ws, n, K, options, basis)) {
                dense_store *d = ws->dense;
                pp_status room = dense_reserve(d, n, 1, 1);
                if (room != PP_OK) return room;
                pp_peg_island_map(ws, &island, whole, list, count, d->island_map);
                for (int a = 0; a < n; ++a)
                    ws->z[d->island_map[a]] = ws->z_motion[d->island_map[a]] = 0.0;
                stats->lcp.pivots += abandoned.pivots;
                ++stats->declined;
                if (n > stats->declined_largest) stats->declined_largest = n;
                if (n > stats->largest_island) stats->largest_island = n;
                result = PP_ERR_SOLVER;
                continue;
            }
            /* PEG's I/X sets reduced to their primaries for the sticking solve (peg_screen.c
             * pp_peg_primaries_island); its answer checked on the island's own LCP */
            if (pp_peg_primaries_may(ws, pp, n, K, joint_count, nr)) {
                pp_lcp_result reduced;
                sst = pp_peg_primaries_island(ws, pp, whole, &island, list, count, n, options,
                                              basis, mark, stats, &reduced, &answered);
                if (sst != PP_OK) return sst;
                if (answered) {
                    pp_lcp_result_merge(&stats->lcp, &reduced, s == 0);
                    stats->lcp.pivots += abandoned.pivots;
                    if (n > stats->largest_island) stats->largest_island = n;
                    continue;
                }
                abandoned.pivots += reduced.pivots;
            }
        }
        dense_store *d = ws->dense;
        /* by columns: a large island without joint rows (the joints' elimination,
         * peg_joints.c, works on the dense matrix) */
        const int by_columns = joint_count == 0 && n >= csc_min_n;
        pp_status room = dense_reserve(d, n, 1, by_columns);
        if (room != PP_OK) return room;
        /* island index -> whole index, over every unknown of every set, then the joint
         * rows' unknowns */
        pp_peg_island_map(ws, &island, whole, list, count, d->island_map);
        for (int t = 0, a = n_c; t < joint_count; ++t)
            for (int u = ws->joint_first[joints[t]]; u < ws->joint_first[joints[t] + 1]; ++u)
                d->island_map[a++] = ws->n_contact + u;
        /* A large island's matrix (n >= OWN_MATRIX_MIN_N) is by columns (csc_assemble)
         * without joint rows; with joint rows (whose elimination needs the dense M) a
         * fresh zeroed allocation, freed after its solve: C's calloc of that size maps new
         * pages (glibc: mmap, not cleared by hand), and a page of M holding no nonzero is
         * then never written, so it costs no memory (a brick wall's M under PEG is 3 %
         * nonzero and touches about 30 % of its pages), and no n^2 clearing is paid. Smaller
         * islands reuse the kept matrix. */
        const int large = !by_columns && n >= OWN_MATRIX_MIN_N;
        double *M = by_columns ? NULL : large ? calloc((size_t)n * n, sizeof *M) : d->M;
        pp_lcp_csc A = {0, NULL, NULL, NULL};
        if (!by_columns && !M) {
            pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for an LCP of %d unknowns", n);
            return PP_ERR_NO_MEMORY;
        }
        /* past the clock, an M the bounded fallback could not sweep through is not formed:
         * the island gets the fallback's sweeps in body space (fallback_bodies_island;
         * lcp_fallback_bodies.h pp_lcp_fallback_bodies_entries) */
        double idle = 0.0;
        if (by_columns) {
            if (csc_assemble(ws, pp, &island, list, count, n,
                             pp_lcp_fallback_bodies_entries(options), 0, &d->csc, &A,
                             &idle) != PP_OK) {
                pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for the columns of an LCP "
                                     "of %d unknowns", n);
                return PP_ERR_NO_MEMORY;
            }
        } else {
            assemble_matrix(ws, &island, list, count, n, large, M);
        }
        for (int a = 0; a < n; ++a) {
            d->island_q[a] = ws->q[d->island_map[a]];
            if (basis) d->island_basis[a] = basis[d->island_map[a]] & 1; /* bit 1: below */
        }
        pp_status st = PP_OK;
        if (joint_count > 0)
            st = pp_peg_joints_island(ws, pp, &island, list, count, joints, joint_count, n, M,
                                      d->island_q);
        if (st != PP_OK && st != PP_ERR_SOLVER) {
            if (large) free(M);
            return st;
        }
        const int schur = st == PP_OK; /* the joint equalities were eliminated */
        pp_lcp_result r;
        memset(&r, 0, sizeof r);
        if (idle > 0.0) {
            st = PP_ERR_SOLVER;
            fallback_bodies_island(ws, pp, &island, list, count, n, idle, options, &r);
            if (basis) memset(d->island_basis, 0, (size_t)n);
        }
        /* Redundant supports: the compliance limit instead of Lemke's vertex
         * (lcp_load_sharing.c). Not with a compliance of the caller's (the LCP is then
         * already regularised), only on an accepted solution, and not in an island with
         * PEG I/X sets (K > 0): there the shared answers changed from one re-linearisation
         * iterate to the next and the iteration stopped converging (the pouring scene's
         * overlap went from 1e-20 to 5e-8 m^3 at h = 0.016, seed 1), so such islands keep
         * Lemke's answer (README "Redundant supports"); nor in an island with joint rows:
         * the joints carry no compliance, the limit was rarely found there (D = 0 on the
         * joints' null directions) and the search for it cost demo_crash's car 0.48 -> 1.5 ms
         * a step, the gripper 75 -> 164 us. */
        const int may_share = pp_peg_may_share(ws, pp, n, K, joint_count, nr);
        pp_load_sharing *ls = &d->load;
        pp_lcp_options defaults = pp_lcp_options_default();
        const pp_lcp_options *share_options = options ? options : &defaults;
        int freedoms = 0;
        /* An island by columns that kept a compliant basis tries it before Lemke
         * (pp_load_sharing_kept): accepted, no Lemke solve at all */
        int from_kept = 0, had_kept = 0;
        if (st == PP_OK && may_share && by_columns) {
            pp_status room = sharing_setup(ws, &island, list, count, s, n, basis, &freedoms);
            if (room != PP_OK) return room;
            had_kept = ls->start;
            if (ls->start) {
                from_kept = pp_load_sharing_kept(ls, &A, d->island_q, share_options,
                                                 d->island_z, &r) == PP_LOAD_SHARED;
                stats->load_shared += from_kept;
                ls->start = 0; /* tried: not again after Lemke */
            } else {
                /* no compliant basis, and cold (no warm start for Lemke either: every
                 * bit 0 clear): the compliant LCP's active-set steps from a crash basis */
                int warm = 0;
                for (int a = 0; basis && a < n && !warm; ++a) warm = d->island_basis[a] != 0;
                if (!warm) {
                    from_kept = pp_load_sharing_cold(ls, &A, d->island_q, count, k,
                                                     share_options, d->island_z, &r) ==
                                PP_LOAD_SHARED;
                    stats->load_shared += from_kept;
                }
            }
        }
        /* Then the sticking solve (lcp_sticking.c): the island's convex problem of its
         * sticking contacts, whose answer is exact for ST's LCP where no loaded contact
         * slides; accepted, Lemke does not run */
        int stick_refused = 0, stick_pivots = 0, from_sticking = 0;
        const int stick =
            st == PP_OK && may_share && by_columns && !from_kept && n >= sticking_min_n;
        if (stick) {
            pp_status sst = sticking_entry(ws, pp, &island, list, count, n, &A, options, basis,
                                           &r, &from_sticking, &stick_refused);
            if (sst != PP_OK) return sst;
            if (from_sticking) {
                stats->load_shared += 1;
                from_kept = 1;
            } else {
                stick_pivots = r.pivots; /* Lemke's on Q: spent in this step */
                memset(&r, 0, sizeof r);
            }
        }
        /* refused, the sticking solve's best round starts the bounded fallback where Lemke
         * does not finish (lcp_sticking.h z_best; the fallback keeps it only if best) */
        pp_lcp_options start_options;
        const pp_lcp_options *solve_options = options;
        if (stick_refused && d->sticking->best_rel < INFINITY) {
            start_options = options ? *options : pp_lcp_options_default();
            start_options.fallback_start = d->sticking->z_best;
            solve_options = &start_options;
        } else if (st == PP_OK && ws->z_fallback && by_columns && !from_kept) {
            /* else the caller's candidate (pp_peg_workspace_fallback_start), in the island's
             * order: a re-linearisation iterate's previous answer of the step, its sticking
             * solve skipped after a refusal */
            double *z_candidate = NULL;
            pp_status room = fallback_candidate(ws, n, &z_candidate);
            if (room != PP_OK) return room;
            start_options = options ? *options : pp_lcp_options_default();
            start_options.fallback_start = z_candidate;
            solve_options = &start_options;
        }
        if (st == PP_OK && n > 0 && !from_kept) {
            /* the contact blocks, for the warm basis's repair (pegplus/lcp.h contact_block),
             * on islands without joint rows; with PEG's I/X sets their slacks (set_slack,
             * lcp_warm_repair.c) */
            pp_lcp_options block_options = solve_options ? *solve_options
                                                         : pp_lcp_options_default();
            if (n == n_c) {
                pp_peg_contact_blocks(&island, list, count, n, d->island_blocks);
                block_options.contact_block = d->island_blocks;
                block_options.set_slack = K > 0 ? d->island_blocks + n : NULL;
            }
            st = by_columns ? pp_lcp_solve_csc(d->lcp, &A, d->island_q, &block_options,
                                               basis ? d->island_basis : NULL, d->island_z, &r)
                            : pp_lcp_solve(d->lcp, n, M, d->island_q, &block_options,
                                           basis ? d->island_basis : NULL, d->island_z, &r);
            if (st != PP_OK && st != PP_ERR_SOLVER) {
                if (large) free(M);
                return st;
            }
        } else if (st == PP_ERR_SOLVER && idle == 0.0) {
            r.status = PP_LCP_NUMERICAL;
        }
        int keep_motion = 0;
        /* By columns, Lemke's answer accepted as it stood from the warm basis, no compliant
         * basis kept, and bit 2 on every unknown (load sharing ran from this same basis and
         * left the answer as it was: PP_LOAD_UNIQUE, SAME or KEPT): it is not run again
         * until the basis changes (counted as kept; heap20's island, 678 unknowns under the
         * standard model, paid 1.2 ms a step, 1.6x its step, for a search that failed every
         * step). A basis written by a screened solve carries bit 2 only where its own load
         * sharing ran (peg_screen.c). */
        const int repeat = by_columns && basis && !had_kept && r.warm_started &&
                           sharing_ran_here(d, basis, n);
        stats->load_kept += st == PP_OK && may_share && !from_kept && repeat;
        const int sharing = st == PP_OK && may_share && !from_kept && !repeat;
        int unchanged = 0;
        if (sharing) {
            if (!by_columns) {
                pp_status room = sharing_setup(ws, &island, list, count, s, n, basis, &freedoms);
                if (room != PP_OK) {
                    if (large) free(M);
                    return room;
                }
            }
            for (int a = 0; a < n; ++a) ws->z_motion[d->island_map[a]] = d->island_z[a];
            pp_load_sharing_outcome o = pp_load_sharing_apply(
                ls, d->lcp, n, by_columns ? NULL : M, by_columns ? &A : NULL, d->island_q,
                count, k, freedoms, share_options, basis ? d->island_basis : NULL,
                d->island_z, &r);
            stats->load_shared += o == PP_LOAD_SHARED || o == PP_LOAD_SHARED_IMPULSES;
            stats->load_kept += o == PP_LOAD_KEPT;
            /* Where only the impulses changed, the bodies move as Lemke's answer says: the
             * two differ in velocity by rounding alone, and Lemke's basis solution is the
             * more accurate (the limit comes from solves of condition ~1e5). */
            keep_motion = o == PP_LOAD_SHARED_IMPULSES;
            unchanged = o == PP_LOAD_UNIQUE || o == PP_LOAD_SAME || o == PP_LOAD_KEPT;
        }
        /* the compliant basis found (by either), kept in bit 1 for the next step; bit 2 by
         * columns where load sharing ran (or was skipped as a repeat) and left Lemke's
         * answer: the next step's `repeat` */
        for (int a = 0; basis && (sharing || from_kept) && !from_sticking && ls->found && a < n;
             ++a)
            d->island_basis[a] |= (unsigned char)(ls->basis[a] << 1);
        const int ran = by_columns && (unchanged || (repeat && st == PP_OK && may_share));
        for (int a = 0; basis && ran && a < n; ++a) d->island_basis[a] |= PP_PEG_SHARING_RAN;
        if (large) free(M);
        if (st == PP_ERR_SOLVER) {
            if (result == PP_OK) stats->failed_island = s;
            ++stats->islands_failed;
            result = PP_ERR_SOLVER;
            if (r.status != PP_LCP_APPROXIMATE)
                memset(d->island_z, 0, (size_t)n * sizeof *d->island_z);
        }
        /* the sticking solve is not tried next step where it was refused now, nor while
         * Lemke's solves from their warm basis are cheap (sticking_entry) */
        const unsigned char stick_mark =
            stick && !from_sticking &&
                    (stick_refused || (st == PP_OK && r.pivots <= n / STICK_LEMKE_CHEAP))
                ? PP_PEG_STICKING_REFUSED
                : 0;
        for (int a = 0; a < n; ++a) {
            ws->z[d->island_map[a]] = d->island_z[a];
            if (!keep_motion) ws->z_motion[d->island_map[a]] = d->island_z[a];
            if (basis)
                basis[d->island_map[a]] = (unsigned char)(d->island_basis[a] | stick_mark);
        }
        /* The joint rows' impulses; after a failed LCP (z = 0) the equalities still hold the
         * joints together, unless they could not be eliminated (then no joint impulse). */
        if (joint_count > 0 && schur)
            pp_peg_joints_recover(ws, joints, joint_count, n_c, d->island_z);
        else
            for (int t = 0; t < joint_count; ++t) ws->joint_p[joints[t]] = 0.0;
        pp_lcp_result_merge(&stats->lcp, &r, s == 0);
        /* the pivots and refused factorisations of screening's abandoned rounds: spent in
         * this step (not charged to the pivot budget, peg_screen.c) */
        stats->lcp.pivots += abandoned.pivots + stick_pivots;
        stats->lcp.factor_work_exceeded += abandoned.factor_work_exceeded;
        if (n > stats->largest_island) stats->largest_island = n;
    }
    stats->islands = islands;
    /* "Accepted from the given basis without pivoting": no island pivoted, one was warm. */
    stats->lcp.warm_started = stats->lcp.warm_started && stats->lcp.pivots == 0;
    return result;
}

/* Stage 5: impulses per contact out of the whole z; nu^{l+1} = nu* + sum of W_b g x over the
 * impulse columns (slacks carry none, Eq 41), x from z_motion (= z, except where load
 * sharing changed only impulses that move nothing: there Lemke's z). */
static void write_solution(pp_peg_workspace *ws, const pp_peg_problem *pp, const lcp_layout *L,
                           const double *z, const double *z_motion, pp_mlcp_solution *s,
                           double *slack)
{
    const pp_mlcp_problem *p = &pp->base;
    const int ns = pp->set_count, nb = p->body_count, nc = p->contact_count, k = L->k;
    for (int i = 0; i < nc; ++i) {
        s->normal_impulse[i] = 0.0;
        if (s->sigma) s->sigma[i] = 0.0;
        if (s->friction_impulse) memset(&s->friction_impulse[(size_t)i * k], 0, k * sizeof(double));
        if (s->friction_vector) memset(&s->friction_vector[3 * (size_t)i], 0, 3 * sizeof(double));
        if (slack) slack[i] = 0.0;
    }
    for (int j = 0; j < ns; ++j) {
        const pp_peg_set *set = &pp->sets[j];
        const int i = set->first;
        s->normal_impulse[i] = z[row_index(L, j, 0)];
        if (s->sigma && L->friction[j] >= 0) s->sigma[i] = z[sigma_index(L, j)];
        double f[3] = {0.0, 0.0, 0.0};
        for (int l = 0; l < k && L->friction[j] >= 0; ++l) {
            double beta = z[col_index(L, j, l + 1)];
            if (s->friction_impulse) s->friction_impulse[(size_t)i * k + l] = beta;
            for (int r = 0; r < 3; ++r) f[r] += beta * ws->dirs[((size_t)j * k + l) * 3 + r];
        }
        if (s->friction_vector) memcpy(&s->friction_vector[3 * (size_t)i], f, sizeof f);
        if (slack)
            for (int m = 1; m < set->count; ++m) slack[i + m] = z[L->ns + L->slack[j] + m - 1];
    }
    for (int r = 0; r < ws->nj && s->joint_impulse; ++r) s->joint_impulse[r] = ws->joint_p[r];
    for (int b = 0; b < nb; ++b) {
        double *nu = &s->velocity[6 * (size_t)b];
        memcpy(nu, p->bodies[b].v, 3 * sizeof *nu);
        memcpy(nu + 3, p->bodies[b].w, 3 * sizeof *nu);
        for (int e = ws->incidence_first[b]; e < ws->incidence_first[b + 1]; ++e) {
            int j = ws->incidence[e] / 2, side = ws->incidence[e] % 2;
            for (int l = 0; l <= k; ++l) {
                int col = col_index(L, j, l);
                double x = col >= 0 ? z_motion[col] : 0.0;
                if (x == 0.0) continue;
                const double *wg = WJAC(ws, k, j, l, side);
                for (int r = 0; r < 6; ++r) nu[r] += wg[r] * x;
            }
            for (int m = 0; m < ws->roll_axes[j]; ++m) {
                const int at = roll_index(L, j, 3 * m);
                const double x = z_motion[at] - z_motion[at + 1];
                if (x == 0.0) continue;
                const double *wg = RWJAC(ws, j, m, side);
                for (int r = 0; r < 6; ++r) nu[r] += wg[r] * x;
            }
        }
    }
    if (ws->nj > 0) pp_peg_joints_velocities(ws, pp, s->velocity);
}

pp_status pp_peg_solve(pp_peg_workspace *ws, const pp_peg_problem *problem,
                       const pp_lcp_options *options, unsigned char *basis,
                       pp_mlcp_solution *solution, double *slack, pp_peg_stats *stats)
{
    if (!ws || !problem || !solution || !stats) {
        pp_log(PP_LOG_ERROR, "pp_peg_solve: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    const pp_mlcp_problem *p = &problem->base;
    int k = p->friction_directions ? p->friction_directions : PP_MLCP_DIRECTIONS_DEFAULT, K = 0;
    pp_status status = validate_options(options);
    if (status == PP_OK) status = validate(ws, problem, k, solution, &K);
    if (status != PP_OK) return status;

    status = pp_peg_joints_validate(problem);
    if (status != PP_OK) return status;

    const int ns = problem->set_count, nj = problem->joint_row_count;
    ws->frictional = 0;
    for (int j = 0; j < ns; ++j)
        ws->friction_slot[j] =
            pp_contact_frictional(&p->contacts[problem->sets[j].first]) ? ws->frictional++ : -1;
    ws->roll_first[0] = 0;
    for (int j = 0; j < ns; ++j) {
        ws->roll_axes[j] = pp_contact_rolling_axes(&p->contacts[problem->sets[j].first]);
        ws->roll_first[j + 1] = ws->roll_first[j] + 3 * ws->roll_axes[j];
    }
    ws->roll_unknowns = ns > 0 ? ws->roll_first[ns] : 0;
    ws->n_contact = ns + K + ws->frictional * (k + 1) + ws->roll_unknowns;
    const int n = ws->n_contact + pp_peg_joint_unknowns(nj, problem->joint_rows);
    if (nj > 0) {
        status = pp_peg_joints_reserve(ws, ns, nj, p->body_count);
        if (status == PP_OK) status = pp_peg_joints_reserve_whole(ws, n);
        if (status != PP_OK) return status;
    }
    ws->nj = nj;
    ws->joint_regularised = 0;
    memset(stats, 0, sizeof *stats);
    stats->lcp_size = n;
    stats->joint_unknowns = n - ws->n_contact;
    for (int r = 0; r < nj; ++r)
        stats->joint_equalities += problem->joint_rows[r].lo == -INFINITY &&
                                   problem->joint_rows[r].hi == INFINITY;
    stats->directions = k;
    stats->slacks = K;
    stats->failed_island = -1;
    for (int j = 0; j < ns; ++j) {
        stats->u_sets += problem->sets[j].kind == PP_PEG_SET_U;
        stats->i_sets += problem->sets[j].kind == PP_PEG_SET_I;
        stats->x_sets += problem->sets[j].kind == PP_PEG_SET_X;
    }
    ws->last_ns = ns;
    ws->last_K = K;
    ws->last_k = k;
    ws->last_n = n;
    stats->recovered_sets = build_rows(ws, problem, k);
    if (body_block_reserve(ws, p->body_count, k) != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for the body blocks of %d sets", ns);
        return PP_ERR_NO_MEMORY;
    }
    if (nj > 0) pp_peg_joints_build(ws, problem);
    const lcp_layout whole = whole_layout(ws);
    if (ns == 0 && nj == 0) {
        write_solution(ws, problem, &whole, ws->z, ws->z, solution, slack);
        return PP_OK;
    }
    build_rhs(ws, problem, &whole);
    if (nj > 0) {
        pp_peg_joints_rhs(ws, problem);
        int islands = pp_peg_joints_islands(ws, ns, p->body_count);
        status = solve_islands(ws, problem, &whole, islands, ws->isl_first, ws->isl_sets,
                               ws->isl_joint_first, ws->isl_joints, options, basis, stats);
    } else {
        int islands = find_islands(ws, ns, p->body_count);
        status = solve_islands(ws, problem, &whole, islands, ws->island_first, ws->island_sets,
                               NULL, NULL, options, basis, stats);
    }
    if (status != PP_OK && status != PP_ERR_SOLVER) return status;
    stats->joint_regularised = ws->joint_regularised;
    /* On PP_ERR_SOLVER a failed island's z is 0 (lcp.h): its impulses 0, its bodies keep nu*;
     * the other islands are solved. An island answered by the fallback (PP_LCP_APPROXIMATE,
     * also PP_ERR_SOLVER) keeps the fallback's z. */
    write_solution(ws, problem, &whole, ws->z, ws->z_motion, solution, slack);
    return status;
}

void pp_peg_rolling_impulse(const pp_peg_workspace *ws, int j, double torque[3])
{
    PP_ASSERT(ws && torque && j >= 0 && j < ws->last_ns, "pp_peg_rolling_impulse: a set of "
                                                         "the last solve");
    const lcp_layout L = whole_layout(ws);
    torque[0] = torque[1] = torque[2] = 0.0;
    for (int m = 0; m < ws->roll_axes[j]; ++m) {
        const double g = ws->z[roll_index(&L, j, 3 * m)] - ws->z[roll_index(&L, j, 3 * m + 1)];
        for (int r = 0; r < 3; ++r) torque[r] += g * RJAC(ws, j, m, 1)[3 + r];
    }
}

void pp_peg_last_lcp(const pp_peg_workspace *ws, int *n, const double **M, const double **q)
{
    PP_ASSERT(ws && n && M && q, "pp_peg_last_lcp: valid arguments");
    *n = ws->last_n;
    *q = ws->q;
    if (ws->nj > 0) { /* joint equalities are eliminated island by island: no whole matrix */
        *n = 0;
        *M = NULL;
        return;
    }
    /* The dense store grows for the whole LCP here (a diagnostic, outside any solve). */
    if (dense_reserve(ws->dense, ws->last_n, 0, 0) != PP_OK) {
        *n = 0;
        *M = NULL;
        return;
    }
    *M = ws->dense->M;
    if (ws->last_n == 0) return;
    /* The whole LCP into the island buffer: every set listed, in its own order. The buffers
     * are the workspace's scratch (pointers in a const workspace), and the assembly only
     * reads what the last solve kept, so a repeated call gives the same. */
    const lcp_layout whole = whole_layout(ws);
    for (int j = 0; j < ws->last_ns; ++j) ws->local[j] = j;
    assemble_matrix(ws, &whole, ws->local, ws->last_ns, ws->last_n, 0, ws->dense->M);
}

int pp_peg_record_size(const pp_peg_set *set, int directions)
{
    return set->count + directions + 1;
}

/* The records of pp_peg_basis_records for unknowns of `size` bytes each. */
static void map_records(int ns, const pp_peg_set *sets, const pp_contact *contacts, int k,
                        size_t size, unsigned char *whole, unsigned char *records, int to_whole)
{
    /* The whole layout [p (ns); c (K); beta (nf k); sigma (nf)] of lcp_layout. */
    int K = 0, nf = 0;
    for (int j = 0; j < ns; ++j) {
        K += sets[j].count - 1;
        nf += pp_contact_frictional(&contacts[sets[j].first]);
    }
    int slack = 0, slot = 0;
    for (int j = 0; j < ns; ++j) {
        const pp_peg_set *set = &sets[j];
        int frictional = pp_contact_frictional(&contacts[set->first]);
        int index[1 + 64 + 1], m = 0;
        unsigned char *rec = records;
        records += (size_t)pp_peg_record_size(set, k) * size;
        /* p, then the slacks of the secondaries (set->count can exceed the stack index
         * list's room: they are visited directly) */
        for (int s = 0; s < set->count; ++s) {
            unsigned char *w = whole + (size_t)(s == 0 ? j : ns + slack + s - 1) * size;
            if (to_whole) memcpy(w, rec + (size_t)s * size, size);
            else memcpy(rec + (size_t)s * size, w, size);
        }
        slack += set->count - 1;
        if (frictional) {
            for (int l = 0; l < k; ++l) index[m++] = ns + K + slot * k + l;
            index[m++] = ns + K + nf * k + slot;
            ++slot;
        }
        unsigned char *tail = rec + (size_t)set->count * size;
        for (int t = 0; t < k + 1; ++t) {
            if (to_whole) {
                if (t < m) memcpy(whole + (size_t)index[t] * size, tail + (size_t)t * size, size);
            } else if (t < m) {
                memcpy(tail + (size_t)t * size, whole + (size_t)index[t] * size, size);
            } else {
                memset(tail + (size_t)t * size, 0, size);
            }
        }
    }
}

void pp_peg_basis_records(int ns, const pp_peg_set *sets, const pp_contact *contacts, int k,
                          unsigned char *basis, unsigned char *records, int to_basis)
{
    PP_ASSERT(ns >= 0 && (ns == 0 || (sets && contacts && basis && records)) && k >= 1,
              "pp_peg_basis_records: valid arguments");
    map_records(ns, sets, contacts, k, 1, basis, records, to_basis);
}

void pp_peg_answer_records(int ns, const pp_peg_set *sets, const pp_contact *contacts, int k,
                           double *z, double *records, int to_z)
{
    PP_ASSERT(ns >= 0 && (ns == 0 || (sets && contacts && z && records)) && k >= 1,
              "pp_peg_answer_records: valid arguments");
    map_records(ns, sets, contacts, k, sizeof *z, (unsigned char *)z,
                (unsigned char *)records, to_z);
}
