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
 */
#include "pegplus/mlcp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pp_mlcp_workspace {
    int max_bodies, max_contacts, max_directions, n_max;
    double *jac;          /* [contact][side][col 0..k][6]: g blocks (col 0 normal) */
    double *wjac;         /* same layout: W_b g */
    double *dirs;         /* [contact][k][3] */
    double *M;            /* n_max^2, column-major */
    double *q;            /* n_max */
    double *z;            /* n_max */
    int *incidence_first; /* max_bodies + 1: CSR over bodies */
    int *incidence;       /* 2 max_contacts: contact * 2 + side */
    int *fill;            /* max_bodies */
    int last_n;
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
    ws->incidence_first = malloc(((size_t)max_bodies + 1) * sizeof(int));
    ws->incidence = malloc(2 * nc * sizeof(int));
    ws->fill = malloc((size_t)max_bodies * sizeof(int));
    pp_status status = PP_ERR_NO_MEMORY;
    if (ws->jac && ws->wjac && ws->dirs && ws->M && ws->q && ws->z && ws->incidence_first &&
        ws->incidence && ws->fill)
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
    free(ws->incidence_first);
    free(ws->incidence);
    free(ws->fill);
    pp_lcp_workspace_destroy(ws->lcp);
    free(ws);
}

void pp_mlcp_last_lcp(const pp_mlcp_workspace *ws, int *n, const double **M, const double **q)
{
    PP_ASSERT(ws && n && M && q, "pp_mlcp_last_lcp: valid arguments");
    *n = ws->last_n;
    *M = ws->M;
    *q = ws->q;
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

static int contact_body(const pp_contact *c, int side)
{
    return side == 0 ? c->body_a : c->body_b;
}

/* LCP index of column l (0 normal, 1..k friction) of contact i. */
static int column_index(int nc, int k, int i, int l)
{
    return l == 0 ? i : nc + i * k + (l - 1);
}

/* Stage 1: G blocks and W_b G blocks of every contact side, and the per-body incidence
 * lists (CSR by counting). W_b g = [m^-1 g_lin; J^-1 g_ang]. */
static void build_jacobians(pp_mlcp_workspace *ws, const pp_mlcp_problem *p, int k)
{
    const int nc = p->contact_count, nb = p->body_count, cols = k + 1;
    for (int b = 0; b <= nb; ++b) ws->incidence_first[b] = 0;
    for (int i = 0; i < nc; ++i) {
        const pp_contact *c = &p->contacts[i];
        double *d = &ws->dirs[(size_t)i * k * 3];
        pp_mlcp_friction_directions(c->n, k, d);
        const double *xa = c->body_a >= 0 ? p->bodies[c->body_a].x : NULL;
        const double *xb = c->body_b >= 0 ? p->bodies[c->body_b].x : NULL;
        for (int l = 0; l < cols; ++l) {
            const double *u = l == 0 ? c->n : &d[3 * (l - 1)];
            pp_mlcp_contact_jacobian(c, xa, xb, u, JAC(ws, cols, i, 0, l), JAC(ws, cols, i, 1, l));
        }
        for (int side = 0; side < 2; ++side) {
            int b = contact_body(c, side);
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
            int b = contact_body(&p->contacts[i], side);
            if (b >= 0) ws->incidence[ws->fill[b]++] = 2 * i + side;
        }
}

static double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* Stage 2: the LCP matrix and vector of ST96 Eq 29 (see the file comment). */
static void assemble_lcp(pp_mlcp_workspace *ws, const pp_mlcp_problem *p, int k)
{
    const int nc = p->contact_count, nb = p->body_count, cols = k + 1;
    const int n = pp_mlcp_lcp_size(nc, k);
    double *M = ws->M, *q = ws->q;
    memset(M, 0, (size_t)n * n * sizeof *M);

    /* J^T W J, body by body over pairs of incidences on the same body. */
    for (int b = 0; b < nb; ++b) {
        for (int e = ws->incidence_first[b]; e < ws->incidence_first[b + 1]; ++e) {
            int i = ws->incidence[e] / 2, si = ws->incidence[e] % 2;
            for (int f = ws->incidence_first[b]; f < ws->incidence_first[b + 1]; ++f) {
                int j = ws->incidence[f] / 2, sj = ws->incidence[f] % 2;
                for (int l = 0; l < cols; ++l) {
                    const double *g = JAC(ws, cols, i, si, l);
                    int row = column_index(nc, k, i, l);
                    for (int m = 0; m < cols; ++m) {
                        int col = column_index(nc, k, j, m);
                        M[row + (size_t)col * n] += dot6(g, WJAC(ws, cols, j, sj, m));
                    }
                }
            }
        }
    }

    /* Compliance (pp_mlcp_problem.compliance): r max_i M_ii on the p_n and beta diagonal. */
    if (p->compliance > 0.0) {
        double dmax = 0.0;
        for (int i = 0; i < nc * cols; ++i) dmax = fmax(dmax, M[i + (size_t)i * n]);
        for (int i = 0; i < nc * cols; ++i) M[i + (size_t)i * n] += p->compliance * dmax;
    }

    /* E, -E^T and U blocks; q = [G_n^T nu* + psi/h; G_f^T nu*; 0]. */
    for (int i = 0; i < nc; ++i) {
        const pp_contact *c = &p->contacts[i];
        int s_idx = nc + nc * k + i;
        M[s_idx + (size_t)i * n] = c->mu;
        for (int j = 0; j < k; ++j) {
            int f_idx = nc + i * k + j;
            M[f_idx + (size_t)s_idx * n] = 1.0;
            M[s_idx + (size_t)f_idx * n] = -1.0;
        }
        for (int l = 0; l < cols; ++l) {
            double rate = 0.0;
            for (int side = 0; side < 2; ++side) {
                int b = contact_body(c, side);
                if (b < 0) continue;
                const pp_mlcp_body *body = &p->bodies[b];
                const double *g = JAC(ws, cols, i, side, l);
                rate += g[0] * body->v[0] + g[1] * body->v[1] + g[2] * body->v[2] +
                        g[3] * body->w[0] + g[4] * body->w[1] + g[5] * body->w[2];
            }
            q[column_index(nc, k, i, l)] = l == 0 ? rate + c->psi / p->h : rate;
        }
        q[s_idx] = 0.0;
    }
    ws->last_n = n;
}

/* Stage 3: impulses out of z, and nu^{l+1} = nu* + sum over incidences of W_b g x_col. */
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
    build_jacobians(ws, p, k);
    if (nc == 0) {
        ws->last_n = 0;
        write_solution(ws, p, k, ws->z, solution);
        return PP_OK;
    }
    assemble_lcp(ws, p, k);
    status = pp_lcp_solve(ws->lcp, n, ws->M, ws->q, options, basis, ws->z, &stats->lcp);
    if (status != PP_OK && status != PP_ERR_SOLVER) return status;
    /* On PP_ERR_SOLVER z is 0 (lcp.h): every impulse 0 and nu^{l+1} = nu*. */
    write_solution(ws, p, k, ws->z, solution);
    return status;
}
