/*
 * The PEG time step (spec/PEG.md §2.4–2.5, paper Eqs 39–49; pegplus/peg.h) as an LCP.
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
 */
#include "pegplus/peg.h"

#include "geometry_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pp_peg_workspace {
    int max_bodies, max_contacts, max_sets, max_directions, n_max, max_rows;
    int *row_first;       /* per set: first row in jac (rows: normal, k friction, slacks) */
    int *slack_first;     /* per set: first slack index (0..K) */
    int *set_body;        /* 2 per set: body of side A, side B (-1 static) */
    int *friction_slot;   /* per set: index among the frictional sets, -1 when mu = 0 */
    int frictional;       /* sets with friction (nf): the LCP has ns + K + nf (k + 1) unknowns */
    double *jac;          /* [row][side][6] */
    double *wjac;         /* [set][col 0..k][side][6]: W_b g of the impulse columns */
    double *rhs;          /* [row]: psi/h term of the row (0 for friction rows) */
    double *dirs;         /* [set][k][3] */
    double *M, *q, *z;
    int *incidence_first; /* max_bodies + 1, CSR over bodies of (set, side) */
    int *incidence;       /* 2 max_sets: set * 2 + side */
    int *fill;            /* max_bodies */
    unsigned char *owned; /* max_contacts: contact already in a set (validation) */
    int last_n;
    pp_lcp_workspace *lcp;
};

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
    size_t n = (size_t)pp_peg_lcp_size(max_sets, max_contacts, max_directions);
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
    ws->jac = malloc(rows * 12 * sizeof(double));
    ws->wjac = malloc(ns * (k + 1) * 12 * sizeof(double));
    ws->rhs = malloc(rows * sizeof(double));
    ws->dirs = malloc(ns * k * 3 * sizeof(double));
    ws->M = malloc(n * n * sizeof(double));
    ws->q = malloc(n * sizeof(double));
    ws->z = malloc(n * sizeof(double));
    ws->incidence_first = malloc(((size_t)max_bodies + 1) * sizeof(int));
    ws->incidence = malloc(2 * ns * sizeof(int));
    ws->fill = malloc((size_t)max_bodies * sizeof(int));
    ws->owned = malloc((size_t)max_contacts);
    pp_status status = PP_ERR_NO_MEMORY;
    if (ws->row_first && ws->slack_first && ws->set_body && ws->friction_slot && ws->jac && ws->wjac && ws->rhs &&
        ws->dirs && ws->M && ws->q && ws->z && ws->incidence_first && ws->incidence &&
        ws->fill && ws->owned)
        status = pp_lcp_workspace_create((int)n, &ws->lcp);
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
    free(ws->jac);
    free(ws->wjac);
    free(ws->rhs);
    free(ws->dirs);
    free(ws->M);
    free(ws->q);
    free(ws->z);
    free(ws->incidence_first);
    free(ws->incidence);
    free(ws->fill);
    free(ws->owned);
    pp_lcp_workspace_destroy(ws->lcp);
    free(ws);
}

void pp_peg_last_lcp(const pp_peg_workspace *ws, int *n, const double **M, const double **q)
{
    PP_ASSERT(ws && n && M && q, "pp_peg_last_lcp: valid arguments");
    *n = ws->last_n;
    *M = ws->M;
    *q = ws->q;
}

/* ---- Validation ---------------------------------------------------------------------------- */

static int finite_n(const double *x, int count)
{
    for (int i = 0; i < count; ++i)
        if (!isfinite(x[i])) return 0;
    return 1;
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
            !(fabs(nn - 1.0) <= 1e-6) || !(c->mu >= 0.0) || !isfinite(c->mu)) {
            pp_log(PP_LOG_ERROR, "%s: contact %d: bodies (%d, %d) invalid for %d bodies, or "
                   "NaN/Inf, |n| = %g != 1, mu = %g < 0", who, i, a, b, p->body_count, sqrt(nn),
                   c->mu);
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

#define JAC(ws, row, side) (&(ws)->jac[(((size_t)(row)) * 2 + (side)) * 6])
#define WJAC(ws, k, set, col, side) \
    (&(ws)->wjac[((((size_t)(set)) * ((k) + 1) + (col)) * 2 + (side)) * 6])

static double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* LCP index of row r of set j (r = 0 normal, 1..k friction, k+1.. slacks); -1 for the
 * friction rows of a frictionless set. */
static int row_index(const pp_peg_workspace *ws, int ns, int K, int k, int j, int r)
{
    if (r == 0) return j;
    if (r <= k) return ws->friction_slot[j] < 0 ? -1 : ns + K + ws->friction_slot[j] * k + (r - 1);
    return ns + ws->slack_first[j] + (r - k - 1);
}

/* LCP index of impulse column l of set j (l = 0 normal, 1..k friction); -1 for the friction
 * columns of a frictionless set. */
static int col_index(const pp_peg_workspace *ws, int ns, int K, int k, int j, int l)
{
    if (l == 0) return j;
    return ws->friction_slot[j] < 0 ? -1 : ns + K + ws->friction_slot[j] * k + (l - 1);
}

/* LCP index of sigma of set j (frictional sets only). */
static int sigma_index(const pp_peg_workspace *ws, int ns, int K, int k, int j)
{
    return ns + K + ws->frictional * k + ws->friction_slot[j];
}

/*
 * Stage 1: for every set, the rows' Jacobian blocks (spec §1/§4 columns through
 * pp_mlcp_contact_jacobian), their psi/h terms, W_b g of its impulse columns, and the
 * per-body incidence lists. A secondary given B -> A is flipped into the primary's frame
 * first (§2.4 same-frame rule), so that G_iota - G_s and psi_iota - psi_s compare gaps of
 * the same pair of bodies measured the same way.
 */
static void build_rows(pp_peg_workspace *ws, const pp_peg_problem *pp, int k)
{
    const pp_mlcp_problem *p = &pp->base;
    const int ns = pp->set_count, nb = p->body_count;
    const double h = p->h;
    for (int b = 0; b <= nb; ++b) ws->incidence_first[b] = 0;
    int row = 0, slack = 0;
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
        pp_mlcp_friction_directions(c->n, k, d);
        /* normal and friction rows of the primary */
        for (int l = 0; l <= k; ++l) {
            const double *u = l == 0 ? c->n : &d[3 * (l - 1)];
            pp_mlcp_contact_jacobian(c, xa, xb, u, JAC(ws, row + l, 0), JAC(ws, row + l, 1));
            ws->rhs[row + l] = l == 0 ? c->psi / h : 0.0;
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
            ws->rhs[row + k + i] = (c->psi - s.psi) / h;
        }
        /* W_b g of the impulse columns */
        for (int side = 0; side < 2; ++side) {
            int b = ws->set_body[2 * j + side];
            if (b < 0) continue;
            ++ws->incidence_first[b + 1];
            const pp_mlcp_body *body = &p->bodies[b];
            const double *Ji = body->inv_inertia;
            for (int l = 0; l <= k; ++l) {
                const double *g = JAC(ws, row + l, side);
                double *wg = WJAC(ws, k, j, l, side);
                for (int r = 0; r < 3; ++r) {
                    wg[r] = body->inv_mass * g[r];
                    wg[3 + r] = Ji[3 * r] * g[3] + Ji[3 * r + 1] * g[4] + Ji[3 * r + 2] * g[5];
                }
            }
        }
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
}

/* Stage 2: the LCP of the file comment (Eqs 48–49 with nu eliminated). */
static void assemble_lcp(pp_peg_workspace *ws, const pp_peg_problem *pp, int k, int K)
{
    const pp_mlcp_problem *p = &pp->base;
    const int ns = pp->set_count, nb = p->body_count;
    const int nf = ws->frictional, n = ns + K + nf * (k + 1);
    double *M = ws->M, *q = ws->q;
    memset(M, 0, (size_t)n * n * sizeof *M);

    /* J_rows^T W J_impulses, body by body over pairs of incidences on the same body */
    for (int b = 0; b < nb; ++b)
        for (int e = ws->incidence_first[b]; e < ws->incidence_first[b + 1]; ++e) {
            int i = ws->incidence[e] / 2, si = ws->incidence[e] % 2;
            int rows = ws->row_first[i + 1] - ws->row_first[i];
            for (int f = ws->incidence_first[b]; f < ws->incidence_first[b + 1]; ++f) {
                int j = ws->incidence[f] / 2, sj = ws->incidence[f] % 2;
                for (int r = 0; r < rows; ++r) {
                    int at = row_index(ws, ns, K, k, i, r);
                    if (at < 0) continue;
                    const double *g = JAC(ws, ws->row_first[i] + r, si);
                    for (int l = 0; l <= k; ++l) {
                        int col = col_index(ws, ns, K, k, j, l);
                        if (col >= 0)
                            M[(size_t)at + (size_t)col * n] += dot6(g, WJAC(ws, k, j, l, sj));
                    }
                }
            }
        }

    /* Compliance, as pp_mlcp_solve (mlcp.h): r max M_ii added on the diagonal of the impulse
     * rows (p and beta), never on the slack rows, whose E_I1 diagonal is already 1. */
    if (p->compliance > 0.0) {
        double dmax = 0.0;
        for (int i = 0; i < ns; ++i) dmax = fmax(dmax, M[i + (size_t)i * n]);
        for (int i = ns + K; i < ns + K + nf * k; ++i) dmax = fmax(dmax, M[i + (size_t)i * n]);
        for (int i = 0; i < ns; ++i) M[i + (size_t)i * n] += p->compliance * dmax;
        for (int i = ns + K; i < ns + K + nf * k; ++i) M[i + (size_t)i * n] += p->compliance * dmax;
    }

    for (int j = 0; j < ns; ++j) {
        const pp_peg_set *set = &pp->sets[j];
        const int kj = set->count - 1, c0 = ns + ws->slack_first[j];
        /* E_I2 (Eq 44) and E_I1 (Eq 43) */
        for (int s = 0; s < kj; ++s) {
            M[j + (size_t)(c0 + s) * n] = 1.0;
            for (int r = 0; r <= s; ++r) M[(c0 + s) + (size_t)(c0 + r) * n] = 1.0;
        }
        /* friction: E, -E^T, U (ST96 Eqs 26–27) on the primary */
        if (ws->friction_slot[j] >= 0) {
            const int sigma = sigma_index(ws, ns, K, k, j);
            M[sigma + (size_t)j * n] = p->contacts[set->first].mu;
            for (int l = 1; l <= k; ++l) {
                int beta = col_index(ws, ns, K, k, j, l);
                M[beta + (size_t)sigma * n] = 1.0;
                M[sigma + (size_t)beta * n] = -1.0;
            }
            q[sigma] = 0.0;
        }
        /* q: rows' gap rates under the free velocity plus their psi/h terms (Eqs 39–40) */
        int rows = ws->row_first[j + 1] - ws->row_first[j];
        for (int r = 0; r < rows; ++r) {
            int at = row_index(ws, ns, K, k, j, r);
            if (at < 0) continue;
            double rate = 0.0;
            for (int side = 0; side < 2; ++side) {
                int b = ws->set_body[2 * j + side];
                if (b < 0) continue;
                const pp_mlcp_body *body = &p->bodies[b];
                const double *g = JAC(ws, ws->row_first[j] + r, side);
                rate += g[0] * body->v[0] + g[1] * body->v[1] + g[2] * body->v[2] +
                        g[3] * body->w[0] + g[4] * body->w[1] + g[5] * body->w[2];
            }
            q[at] = rate + ws->rhs[ws->row_first[j] + r];
        }
    }
    ws->last_n = n;
}

/* Stage 3: impulses per contact out of z; nu^{l+1} = nu* + sum of W_b g x over the impulse
 * columns (slacks carry none, Eq 41). */
static void write_solution(pp_peg_workspace *ws, const pp_peg_problem *pp, int k, int K,
                           const double *z, pp_mlcp_solution *s, double *slack)
{
    const pp_mlcp_problem *p = &pp->base;
    const int ns = pp->set_count, nb = p->body_count, nc = p->contact_count;
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
        s->normal_impulse[i] = z[j];
        if (s->sigma && ws->friction_slot[j] >= 0) s->sigma[i] = z[sigma_index(ws, ns, K, k, j)];
        double f[3] = {0.0, 0.0, 0.0};
        for (int l = 0; l < k && ws->friction_slot[j] >= 0; ++l) {
            double beta = z[col_index(ws, ns, K, k, j, l + 1)];
            if (s->friction_impulse) s->friction_impulse[(size_t)i * k + l] = beta;
            for (int r = 0; r < 3; ++r) f[r] += beta * ws->dirs[((size_t)j * k + l) * 3 + r];
        }
        if (s->friction_vector) memcpy(&s->friction_vector[3 * (size_t)i], f, sizeof f);
        if (slack)
            for (int m = 1; m < set->count; ++m) slack[i + m] = z[ns + ws->slack_first[j] + m - 1];
    }
    for (int b = 0; b < nb; ++b) {
        double *nu = &s->velocity[6 * (size_t)b];
        memcpy(nu, p->bodies[b].v, 3 * sizeof *nu);
        memcpy(nu + 3, p->bodies[b].w, 3 * sizeof *nu);
        for (int e = ws->incidence_first[b]; e < ws->incidence_first[b + 1]; ++e) {
            int j = ws->incidence[e] / 2, side = ws->incidence[e] % 2;
            for (int l = 0; l <= k; ++l) {
                int col = col_index(ws, ns, K, k, j, l);
                double x = col >= 0 ? z[col] : 0.0;
                if (x == 0.0) continue;
                const double *wg = WJAC(ws, k, j, l, side);
                for (int r = 0; r < 6; ++r) nu[r] += wg[r] * x;
            }
        }
    }
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
    pp_status status = validate(ws, problem, k, solution, &K);
    if (status != PP_OK) return status;

    const int ns = problem->set_count;
    ws->frictional = 0;
    for (int j = 0; j < ns; ++j)
        ws->friction_slot[j] = p->contacts[problem->sets[j].first].mu > 0.0 ? ws->frictional++ : -1;
    const int n = ns + K + ws->frictional * (k + 1);
    memset(stats, 0, sizeof *stats);
    stats->lcp_size = n;
    stats->directions = k;
    stats->slacks = K;
    for (int j = 0; j < ns; ++j) {
        stats->u_sets += problem->sets[j].kind == PP_PEG_SET_U;
        stats->i_sets += problem->sets[j].kind == PP_PEG_SET_I;
        stats->x_sets += problem->sets[j].kind == PP_PEG_SET_X;
    }
    build_rows(ws, problem, k);
    if (ns == 0) {
        ws->last_n = 0;
        write_solution(ws, problem, k, K, ws->z, solution, slack);
        return PP_OK;
    }
    assemble_lcp(ws, problem, k, K);
    status = pp_lcp_solve(ws->lcp, n, ws->M, ws->q, options, basis, ws->z, &stats->lcp);
    if (status != PP_OK && status != PP_ERR_SOLVER) return status;
    /* On PP_ERR_SOLVER z is 0 (lcp.h): every impulse 0, nu^{l+1} = nu*; the caller falls back
     * to the standard model for the step. */
    write_solution(ws, problem, k, K, ws->z, solution, slack);
    return status;
}
