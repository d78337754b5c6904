/*
 * The Stewart–Trinkle step as an LCP (pegplus/mlcp.h).
 *
 * Mixed problem (spec/PEG.md §1, ST96 Eqs 25–28), unknowns nu, p_n, beta, sigma:
 *     M (nu - nu*) = G_n p_n + G_f beta                                   (PEG Eq 5)
 *     0 <= rho_n = G_n^T nu + psi/h         ⊥ p_n   >= 0                   (PEG Eq 7)
 *     0 <= rho_f = G_f^T nu + E sigma       ⊥ beta  >= 0                   (ST96 Eq 26)
 *     0 <= rho_s = U p_n - E^T beta         ⊥ sigma >= 0
 * with nu* = nu^l + h M^-1 lambda_ext given per body. M is block diagonal and positive
 * definite on the dynamic bodies, so nu = nu* + W (G_n p_n + G_f beta), W = M^-1 (W_b = 0
 * for a kinematic body: infinite mass), and the first two rows become the Schur
 * complement (ST96 Eq 29):
 *     rho_n = G_n^T W G_n p_n + G_n^T W G_f beta + G_n^T nu* + psi/h
 *     rho_f = G_f^T W G_n p_n + G_f^T W G_f beta + E sigma + G_f^T nu*.
 *
 * Block structure. Let J = [G_n G_f] (6 nb x nc(1+k)). Every column of J has at most two
 * nonzero 6-blocks (bodies A and B of its contact), and W = blockdiag(W_b) with
 * W_b = diag(m_b^-1 I_3, J_b^-1). Hence
 *     (J^T W J)_{c c'} = sum over bodies b touched by both columns of g_{c,b}^T W_b g_{c',b},
 * which is accumulated body by body from each body's list of (contact, side) incidences:
 * O(sum_b deg_b^2 (k+1)^2) work, never a 6 nb x 6 nb matrix.
 *
 * Islands. (J^T W J)_{c c'} is nonzero only when contacts c and c' share a body with
 * W_b != 0 (static ground and kinematic bodies have W_b = 0), and E, U couple a contact only
 * with itself. So after permuting the unknowns contact by contact, the LCP is block diagonal
 * with one block per connected component of the graph "contacts joined by a shared dynamic
 * body" (DESIGN.md: a step is one island at a time), and its solution set is the product of
 * the blocks' solution sets. Each island is assembled and solved on its own: a pile of 30
 * boxes falling in 9 columns gives LCPs of n <= 140 instead of one of 300-800, Lemke's
 * O(n^2) pivots and O(n) path length shrink with them, and a solver failure costs only its
 * island's impulses. The compliance shift is r max_i M_ii over ALL contacts, so every
 * island is exactly a block of the whole LCP, which pp_mlcp_last_lcp assembles on request.
 */
#include "pegplus/mlcp.h"

#include "islands_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pp_mlcp_workspace {
    int max_bodies, max_contacts, max_directions, n_max;
    double *jac;          /* [contact][side][col 0..k][6]: g blocks (col 0 normal) */
    double *wjac;         /* same layout: W_b g */
    double *dirs;         /* [contact][k][3] */
    double *M;            /* n_max^2, column-major: an island's LCP while solving, the whole
                             LCP when pp_mlcp_last_lcp asks for it */
    double *q;            /* n_max: the whole LCP's q */
    double *z;            /* n_max: the whole LCP's z */
    double *island_q;     /* n_max: an island's q and z */
    double *island_z;
    unsigned char *island_basis; /* n_max */
    double *mu;           /* max_contacts: mu of each contact (for U) */
    int *sides;           /* 2 max_contacts: body_a, body_b of each contact */
    unsigned char *coupled; /* max_bodies: W_b != 0, the body joins its contacts' islands */
    int *incidence_first; /* max_bodies + 1: CSR over bodies */
    int *incidence;       /* 2 max_contacts: contact * 2 + side */
    int *fill;            /* max_bodies */
    int *root;            /* max_contacts: union-find parents over contacts */
    int *island_first;    /* max_contacts + 1: CSR of contacts by island */
    int *island_contacts; /* max_contacts */
    int *local;           /* max_contacts: position of a contact within its island */
    int last_nc, last_k, last_n;
    double last_shift;    /* compliance r max_i M_ii of the last solve */
    pp_lcp_workspace *lcp;
};

int pp_mlcp_lcp_size(int contact_count, int directions)
{
    return contact_count * (directions + 2);
}

pp_status pp_mlcp_workspace_create(int max_bodies, int max_contacts, int max_directions,
                                   pp_mlcp_workspace **out)
{
    if (!out) {
        pp_log(PP_LOG_ERROR, "pp_mlcp_workspace_create: NULL out");
        return PP_ERR_NULL_ARGUMENT;
    }
    *out = NULL;
    if (max_directions == 0) max_directions = PP_MLCP_DIRECTIONS_DEFAULT;
    if (max_bodies < 1 || max_contacts < 1 || max_directions < PP_MLCP_DIRECTIONS_MIN ||
        max_directions > PP_MLCP_DIRECTIONS_MAX ||
        max_contacts > (1 << 20) / (max_directions + 2)) {
        pp_log(PP_LOG_ERROR, "pp_mlcp_workspace_create: bodies %d, contacts %d, directions %d "
               "out of range", max_bodies, max_contacts, max_directions);
        return PP_ERR_INVALID_ARGUMENT;
    }
    pp_mlcp_workspace *ws = calloc(1, sizeof *ws);
    if (!ws) return PP_ERR_NO_MEMORY;
    size_t nc = (size_t)max_contacts, cols = (size_t)max_directions + 1;
    size_t n = (size_t)pp_mlcp_lcp_size(max_contacts, max_directions);
    ws->max_bodies = max_bodies;
    ws->max_contacts = max_contacts;
    ws->max_directions = max_directions;
    ws->n_max = (int)n;
    ws->jac = malloc(nc * 2 * cols * 6 * sizeof(double));
    ws->wjac = malloc(nc * 2 * cols * 6 * sizeof(double));
    ws->dirs = malloc(nc * (size_t)max_directions * 3 * sizeof(double));
    ws->M = malloc(n * n * sizeof(double));
    ws->q = malloc(n * sizeof(double));
    ws->z = malloc(n * sizeof(double));
    ws->island_q = malloc(n * sizeof(double));
    ws->island_z = malloc(n * sizeof(double));
    ws->island_basis = malloc(n);
    ws->mu = malloc(nc * sizeof(double));
    ws->sides = malloc(2 * nc * sizeof(int));
    ws->coupled = malloc((size_t)max_bodies);
    ws->incidence_first = malloc(((size_t)max_bodies + 1) * sizeof(int));
    ws->incidence = malloc(2 * nc * sizeof(int));
    ws->fill = malloc((size_t)max_bodies * sizeof(int));
    ws->root = malloc(nc * sizeof(int));
    ws->island_first = malloc((nc + 1) * sizeof(int));
    ws->island_contacts = malloc(nc * sizeof(int));
    ws->local = malloc(nc * sizeof(int));
    pp_status status = PP_ERR_NO_MEMORY;
    if (ws->jac && ws->wjac && ws->dirs && ws->M && ws->q && ws->z && ws->island_q &&
        ws->island_z && ws->island_basis && ws->mu && ws->sides && ws->coupled &&
        ws->incidence_first && ws->incidence && ws->fill && ws->root && ws->island_first &&
        ws->island_contacts && ws->local)
        status = pp_lcp_workspace_create((int)n, &ws->lcp);
    if (status != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_mlcp_workspace_create: out of memory (LCP size %zu)", n);
        pp_mlcp_workspace_destroy(ws);
        return status;
    }
    *out = ws;
    return PP_OK;
}

void pp_mlcp_workspace_destroy(pp_mlcp_workspace *ws)
{
    if (!ws) return;
    free(ws->jac);
    free(ws->wjac);
    free(ws->dirs);
    free(ws->M);
    free(ws->q);
    free(ws->z);
    free(ws->island_q);
    free(ws->island_z);
    free(ws->island_basis);
    free(ws->mu);
    free(ws->sides);
    free(ws->coupled);
    free(ws->incidence_first);
    free(ws->incidence);
    free(ws->fill);
    free(ws->root);
    free(ws->island_first);
    free(ws->island_contacts);
    free(ws->local);
    pp_lcp_workspace_destroy(ws->lcp);
    free(ws);
}

/* ---- Geometry of a contact -------------------------------------------------------------- */

static void cross(const double a[3], const double b[3], double out[3])
{
    double x = a[1] * b[2] - a[2] * b[1];
    double y = a[2] * b[0] - a[0] * b[2];
    double z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

void pp_mlcp_friction_directions(const double n[3], int k, double *d)
{
    PP_ASSERT(n && d && k >= 1, "pp_mlcp_friction_directions: valid arguments");
    /* t1: the world axis with the smallest |n_i|, projected on the tangent plane. Its
     * squared norm is 1 - n_i^2 >= 2/3, so the normalisation is always well conditioned. */
    int axis = 0;
    if (fabs(n[1]) < fabs(n[axis])) axis = 1;
    if (fabs(n[2]) < fabs(n[axis])) axis = 2;
    double t1[3] = {-n[axis] * n[0], -n[axis] * n[1], -n[axis] * n[2]};
    t1[axis] += 1.0;
    double len = sqrt(dot3(t1, t1));
    for (int i = 0; i < 3; ++i) t1[i] /= len;
    double t2[3];
    cross(n, t1, t2);
    const double two_pi = 6.283185307179586476925286766559;
    for (int j = 0; j < k; ++j) {
        double c = cos(two_pi * j / k), s = sin(two_pi * j / k);
        for (int i = 0; i < 3; ++i) d[3 * j + i] = c * t1[i] + s * t2[i];
    }
}

/* A: [-u; -(r_a x u)], B: [u; r_b x u] with r_a = p_a - x_a, r_b = p_a + psi n - x_b.
 * Derivation (spec/PEG.md §1): psi = n . (p_b - p_a) with p_a fixed in A and p_b fixed in B;
 * dpsi/dt = n . (v_B + w_B x r_b - v_A - w_A x r_a) + dn/dt . (p_b - p_a), and the last term
 * is psi dn/dt . n = 0 for a unit n. With n . (w x r) = w . (r x n) the rows above follow;
 * the same holds for the relative slip along a tangent u = d_j. */
void pp_mlcp_contact_jacobian(const pp_contact *c, const double x_a[3], const double x_b[3],
                              const double u[3], double g_a[6], double g_b[6])
{
    PP_ASSERT(c && u && g_a && g_b, "pp_mlcp_contact_jacobian: valid arguments");
    double r[3], rxu[3];
    memset(g_a, 0, 6 * sizeof *g_a);
    memset(g_b, 0, 6 * sizeof *g_b);
    if (x_a) {
        for (int i = 0; i < 3; ++i) r[i] = c->p_a[i] - x_a[i];
        cross(r, u, rxu);
        for (int i = 0; i < 3; ++i) {
            g_a[i] = -u[i];
            g_a[3 + i] = -rxu[i];
        }
    }
    if (x_b) {
        for (int i = 0; i < 3; ++i) r[i] = c->p_a[i] + c->psi * c->n[i] - x_b[i];
        cross(r, u, rxu);
        for (int i = 0; i < 3; ++i) {
            g_b[i] = u[i];
            g_b[3 + i] = rxu[i];
        }
    }
}

/* ---- Validation -------------------------------------------------------------------------- */

static int finite_n(const double *x, int count)
{
    for (int i = 0; i < count; ++i)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static pp_status validate(const pp_mlcp_workspace *ws, const pp_mlcp_problem *p, int k,
                          const pp_mlcp_solution *s)
{
    const char *who = "pp_mlcp_solve";
    if (!s->normal_impulse || !s->velocity || (p->contact_count > 0 && !p->contacts) ||
        (p->body_count > 0 && !p->bodies)) {
        pp_log(PP_LOG_ERROR, "%s: NULL array (normal_impulse, velocity, contacts or bodies)", who);
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
    if (k < PP_MLCP_DIRECTIONS_MIN || k > PP_MLCP_DIRECTIONS_MAX) {
        pp_log(PP_LOG_ERROR, "%s: friction_directions %d outside %d..%d", who, k,
               PP_MLCP_DIRECTIONS_MIN, PP_MLCP_DIRECTIONS_MAX);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (p->body_count < 0 || p->body_count > ws->max_bodies || p->contact_count < 0 ||
        p->contact_count > ws->max_contacts || k > ws->max_directions) {
        pp_log(PP_LOG_ERROR, "%s: %d bodies, %d contacts, %d directions exceed the workspace "
               "(%d, %d, %d)", who, p->body_count, p->contact_count, k, ws->max_bodies,
               ws->max_contacts, ws->max_directions);
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
        if (a < -1 || a >= p->body_count || b < -1 || b >= p->body_count || (a == b)) {
            pp_log(PP_LOG_ERROR, "%s: contact %d: bodies (%d, %d) invalid for %d bodies", who,
                   i, a, b, p->body_count);
            return PP_ERR_INVALID_ARGUMENT;
        }
        double nn = dot3(c->n, c->n);
        if (!finite_n(c->p_a, 3) || !finite_n(c->n, 3) || !isfinite(c->psi) ||
            !(fabs(nn - 1.0) <= 1e-6) || !(c->mu >= 0.0) || !isfinite(c->mu)) {
            pp_log(PP_LOG_ERROR, "%s: contact %d: NaN/Inf, |n| = %g != 1 or mu = %g < 0", who, i,
                   sqrt(nn), c->mu);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    return PP_OK;
}

/* ---- Stages of one solve ------------------------------------------------------------------ */

#define JAC(ws, cols, i, side, l) (&(ws)->jac[((((size_t)(i) * 2 + (side)) * (cols)) + (l)) * 6])
#define WJAC(ws, cols, i, side, l) (&(ws)->wjac[((((size_t)(i) * 2 + (side)) * (cols)) + (l)) * 6])

/* LCP index of column l (0 normal, 1..k friction) of contact i among nc contacts; the sigma
 * of contact i is nc (k + 1) + i. */
static int column_index(int nc, int k, int i, int l)
{
    return l == 0 ? i : nc + i * k + (l - 1);
}

static double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* Stage 1: G blocks and W_b G blocks of every contact side, the per-body incidence lists
 * (CSR by counting), and what the assembly needs later without the problem: mu and the
 * bodies of each contact, and which bodies couple their contacts (W_b != 0).
 * W_b g = [m^-1 g_lin; J^-1 g_ang]. */
static void build_jacobians(pp_mlcp_workspace *ws, const pp_mlcp_problem *p, int k)
{
    const int nc = p->contact_count, nb = p->body_count, cols = k + 1;
    for (int b = 0; b <= nb; ++b) ws->incidence_first[b] = 0;
    for (int b = 0; b < nb; ++b) {
        const pp_mlcp_body *body = &p->bodies[b];
        int coupled = body->inv_mass != 0.0;
        for (int e = 0; e < 9; ++e) coupled |= body->inv_inertia[e] != 0.0;
        ws->coupled[b] = (unsigned char)coupled;
    }
    for (int i = 0; i < nc; ++i) {
        const pp_contact *c = &p->contacts[i];
        ws->mu[i] = c->mu;
        ws->sides[2 * i] = c->body_a;
        ws->sides[2 * i + 1] = c->body_b;
        double *d = &ws->dirs[(size_t)i * k * 3];
        pp_mlcp_friction_directions(c->n, k, d);
        const double *xa = c->body_a >= 0 ? p->bodies[c->body_a].x : NULL;
        const double *xb = c->body_b >= 0 ? p->bodies[c->body_b].x : NULL;
        for (int l = 0; l < cols; ++l) {
            const double *u = l == 0 ? c->n : &d[3 * (l - 1)];
            pp_mlcp_contact_jacobian(c, xa, xb, u, JAC(ws, cols, i, 0, l), JAC(ws, cols, i, 1, l));
        }
        for (int side = 0; side < 2; ++side) {
            int b = ws->sides[2 * i + side];
            if (b < 0) continue;
            ++ws->incidence_first[b + 1];
            const pp_mlcp_body *body = &p->bodies[b];
            for (int l = 0; l < cols; ++l) {
                const double *g = JAC(ws, cols, i, side, l);
                double *wg = WJAC(ws, cols, i, side, l);
                const double *Ji = body->inv_inertia;
                for (int r = 0; r < 3; ++r) {
                    wg[r] = body->inv_mass * g[r];
                    wg[3 + r] = Ji[3 * r] * g[3] + Ji[3 * r + 1] * g[4] + Ji[3 * r + 2] * g[5];
                }
            }
        }
    }
    for (int b = 0; b < nb; ++b) {
        ws->incidence_first[b + 1] += ws->incidence_first[b];
        ws->fill[b] = ws->incidence_first[b];
    }
    for (int i = 0; i < nc; ++i)
        for (int side = 0; side < 2; ++side) {
            int b = ws->sides[2 * i + side];
            if (b >= 0) ws->incidence[ws->fill[b]++] = 2 * i + side;
        }
}

/* Stage 2: q = [G_n^T nu* + psi/h; G_f^T nu*; 0] of the whole LCP, and the compliance shift
 * r max_i M_ii, with M_ii = sum over the coupled sides of g^T W_b g. */
static void build_rhs(pp_mlcp_workspace *ws, const pp_mlcp_problem *p, int k)
{
    const int nc = p->contact_count, cols = k + 1;
    double dmax = 0.0;
    for (int i = 0; i < nc; ++i) {
        const pp_contact *c = &p->contacts[i];
        for (int l = 0; l < cols; ++l) {
            double rate = 0.0, diagonal = 0.0;
            for (int side = 0; side < 2; ++side) {
                int b = ws->sides[2 * i + side];
                if (b < 0) continue;
                const pp_mlcp_body *body = &p->bodies[b];
                const double *g = JAC(ws, cols, i, side, l);
                rate += g[0] * body->v[0] + g[1] * body->v[1] + g[2] * body->v[2] +
                        g[3] * body->w[0] + g[4] * body->w[1] + g[5] * body->w[2];
                if (ws->coupled[b]) diagonal += dot6(g, WJAC(ws, cols, i, side, l));
            }
            ws->q[column_index(nc, k, i, l)] = l == 0 ? rate + c->psi / p->h : rate;
            dmax = fmax(dmax, diagonal);
        }
        ws->q[nc + nc * k + i] = 0.0;
    }
    ws->last_shift = p->compliance > 0.0 ? p->compliance * dmax : 0.0;
}

/* Stage 3: islands, the connected components of "contacts sharing a coupled body"
 * (islands_internal.h), as a CSR list (island_first, island_contacts). local[] is free until
 * the islands are solved. Returns the number of islands. */
static int find_islands(pp_mlcp_workspace *ws, int nc, int nb)
{
    return pp_islands_find(nc, nb, ws->coupled, ws->incidence_first, ws->incidence, ws->root,
                           ws->local, ws->island_first, ws->island_contacts);
}

/*
 * The LCP of ST96 Eq 29 restricted to `count` contacts (list[t], t = 0..count-1; local[]
 * maps a contact of the list to t), unknowns [p_n (count); beta (count k); sigma (count)],
 * into M (column-major, leading dimension count (k + 2)). Every contact sharing a coupled
 * body with a listed contact must be listed too (an island, or all contacts).
 */
static void assemble_matrix(const pp_mlcp_workspace *ws, int k, const int *list, int count,
                            const int *local, double *M)
{
    const int cols = k + 1, n = pp_mlcp_lcp_size(count, k);
    memset(M, 0, (size_t)n * n * sizeof *M);

    /* J^T W J: row (t, l) against every incidence (j, side') on the bodies of contact t. */
    for (int t = 0; t < count; ++t) {
        int i = list[t];
        for (int si = 0; si < 2; ++si) {
            int b = ws->sides[2 * i + si];
            if (b < 0 || !ws->coupled[b]) continue;
            for (int f = ws->incidence_first[b]; f < ws->incidence_first[b + 1]; ++f) {
                int j = ws->incidence[f] / 2, sj = ws->incidence[f] % 2, tj = local[j];
                for (int l = 0; l < cols; ++l) {
                    const double *g = JAC(ws, cols, i, si, l);
                    int row = column_index(count, k, t, l);
                    for (int m = 0; m < cols; ++m) {
                        int col = column_index(count, k, tj, m);
                        M[row + (size_t)col * n] += dot6(g, WJAC(ws, cols, j, sj, m));
                    }
                }
            }
        }
    }

    /* Compliance (pp_mlcp_problem.compliance) on the p_n and beta diagonal; E, -E^T, U. */
    for (int i = 0; i < count * cols; ++i) M[i + (size_t)i * n] += ws->last_shift;
    for (int t = 0; t < count; ++t) {
        int s_idx = count + count * k + t;
        M[s_idx + (size_t)t * n] = ws->mu[list[t]];
        for (int j = 0; j < k; ++j) {
            int f_idx = count + t * k + j;
            M[f_idx + (size_t)s_idx * n] = 1.0;
            M[s_idx + (size_t)f_idx * n] = -1.0;
        }
    }
}

/* Index of island unknown `a` (island of `count` contacts, list[]) in the whole LCP. */
static int whole_index(int nc, int k, const int *list, int count, int a)
{
    if (a < count) return list[a];
    if (a < count * (k + 1)) {
        int t = (a - count) / k, j = (a - count) % k;
        return nc + list[t] * k + j;
    }
    return nc + nc * k + list[a - count * (k + 1)];
}

/* Stage 4: solve island by island into the whole z (and basis). */
static pp_status solve_islands(pp_mlcp_workspace *ws, int nc, int k, int islands,
                               const pp_lcp_options *options, unsigned char *basis,
                               pp_mlcp_stats *stats)
{
    pp_status result = PP_OK;
    for (int s = 0; s < islands; ++s) {
        const int *list = &ws->island_contacts[ws->island_first[s]];
        int count = ws->island_first[s + 1] - ws->island_first[s];
        int n = pp_mlcp_lcp_size(count, k);
        for (int t = 0; t < count; ++t) ws->local[list[t]] = t;
        assemble_matrix(ws, k, list, count, ws->local, ws->M);
        for (int a = 0; a < n; ++a) {
            int g = whole_index(nc, k, list, count, a);
            ws->island_q[a] = ws->q[g];
            if (basis) ws->island_basis[a] = basis[g];
        }
        pp_lcp_result r;
        pp_status st = pp_lcp_solve(ws->lcp, n, ws->M, ws->island_q, options,
                                    basis ? ws->island_basis : NULL, ws->island_z, &r);
        if (st != PP_OK && st != PP_ERR_SOLVER) return st;
        if (st == PP_ERR_SOLVER) {
            if (result == PP_OK) stats->failed_island = s;
            ++stats->islands_failed;
            result = PP_ERR_SOLVER;
        }
        /* On PP_ERR_SOLVER the island's z is 0 (lcp.h): its impulses 0, its bodies nu*;
         * except with PP_LCP_APPROXIMATE, where z is the fallback's bounded answer. */
        for (int a = 0; a < n; ++a) {
            int g = whole_index(nc, k, list, count, a);
            ws->z[g] = ws->island_z[a];
            if (basis) basis[g] = ws->island_basis[a];
        }
        pp_lcp_result_merge(&stats->lcp, &r, s == 0);
        if (n > stats->largest_island) stats->largest_island = n;
    }
    stats->islands = islands;
    /* "Accepted from the given basis without pivoting": no island pivoted, one was warm. */
    stats->lcp.warm_started = stats->lcp.warm_started && stats->lcp.pivots == 0;
    return result;
}

/* Stage 5: impulses out of z, and nu^{l+1} = nu* + sum over incidences of W_b g x_col. */
static void write_solution(pp_mlcp_workspace *ws, const pp_mlcp_problem *p, int k,
                           const double *z, pp_mlcp_solution *s)
{
    const int nc = p->contact_count, nb = p->body_count, cols = k + 1;
    for (int i = 0; i < nc; ++i) {
        s->normal_impulse[i] = z[i];
        if (s->sigma) s->sigma[i] = z[nc + nc * k + i];
        double f[3] = {0.0, 0.0, 0.0};
        for (int j = 0; j < k; ++j) {
            double beta = z[nc + i * k + j];
            if (s->friction_impulse) s->friction_impulse[(size_t)i * k + j] = beta;
            for (int r = 0; r < 3; ++r) f[r] += beta * ws->dirs[((size_t)i * k + j) * 3 + r];
        }
        if (s->friction_vector) memcpy(&s->friction_vector[3 * (size_t)i], f, sizeof f);
    }
    for (int b = 0; b < nb; ++b) {
        double *nu = &s->velocity[6 * (size_t)b];
        memcpy(nu, p->bodies[b].v, 3 * sizeof *nu);
        memcpy(nu + 3, p->bodies[b].w, 3 * sizeof *nu);
        for (int e = ws->incidence_first[b]; e < ws->incidence_first[b + 1]; ++e) {
            int i = ws->incidence[e] / 2, side = ws->incidence[e] % 2;
            for (int l = 0; l < cols; ++l) {
                double x = z[column_index(nc, k, i, l)];
                if (x == 0.0) continue;
                const double *wg = WJAC(ws, cols, i, side, l);
                for (int r = 0; r < 6; ++r) nu[r] += wg[r] * x;
            }
        }
    }
}

pp_status pp_mlcp_solve(pp_mlcp_workspace *ws, const pp_mlcp_problem *p,
                        const pp_lcp_options *options, unsigned char *basis,
                        pp_mlcp_solution *solution, pp_mlcp_stats *stats)
{
    if (!ws || !p || !solution || !stats) {
        pp_log(PP_LOG_ERROR, "pp_mlcp_solve: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    int k = p->friction_directions ? p->friction_directions : PP_MLCP_DIRECTIONS_DEFAULT;
    pp_status status = validate(ws, p, k, solution);
    if (status != PP_OK) return status;

    const int nc = p->contact_count, n = pp_mlcp_lcp_size(nc, k);
    memset(stats, 0, sizeof *stats);
    stats->lcp_size = n;
    stats->directions = k;
    stats->failed_island = -1;
    ws->last_nc = nc;
    ws->last_k = k;
    ws->last_n = n;
    build_jacobians(ws, p, k);
    if (nc == 0) {
        write_solution(ws, p, k, ws->z, solution);
        return PP_OK;
    }
    build_rhs(ws, p, k);
    int islands = find_islands(ws, nc, p->body_count);
    status = solve_islands(ws, nc, k, islands, options, basis, stats);
    if (status != PP_OK && status != PP_ERR_SOLVER) return status;
    write_solution(ws, p, k, ws->z, solution);
    return status;
}

void pp_mlcp_last_lcp(const pp_mlcp_workspace *ws, int *n, const double **M, const double **q)
{
    PP_ASSERT(ws && n && M && q, "pp_mlcp_last_lcp: valid arguments");
    *n = ws->last_n;
    *M = ws->M;
    *q = ws->q;
    if (ws->last_n == 0) return;
    /* The whole LCP into the island buffer: every contact listed, in its own order. The
     * buffers are the workspace's scratch (pointers in a const workspace), and the
     * assembly only reads what the last solve kept, so a repeated call gives the same. */
    for (int i = 0; i < ws->last_nc; ++i) ws->local[i] = i;
    assemble_matrix(ws, ws->last_k, ws->local, ws->last_nc, ws->local, ws->M);
}
