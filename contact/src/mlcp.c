/*
 * The Stewart–Trinkle step as an LCP (pegplus/mlcp.h).
 *
 * Mixed problem (PEG Eqs 3–10, ST96 Eqs 25–28), unknowns nu, p_n, beta, sigma:
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
 * One pipeline. These equations are the PEG LCP of pegplus/peg.h with one U set per contact
 * (PEG Eqs 17-18; no secondaries, so no slack unknowns): pp_mlcp_solve hands the contacts to
 * pp_peg_solve as U sets, which assembles the matrix body by body, splits it into islands and
 * solves each with Lemke. The only difference in layout is that a frictionless contact (mu = 0)
 * has no beta and sigma unknowns there (its sigma row forces beta = 0), so the LCP has
 * nc + n_f (k + 1) unknowns, n_f the frictional contacts; with friction everywhere it is
 * nc (k + 2), laid out [p_n; beta; sigma] as above. This file keeps the contact geometry both
 * models share: the friction directions and the Jacobian columns.
 */
#include "pegplus/mlcp.h"
#include "pegplus/peg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pp_mlcp_workspace {
    int max_contacts;     /* sets' capacity; bodies and directions are the PEG workspace's */
    pp_peg_set *sets;     /* max_contacts: one U set per contact */
    pp_peg_workspace *peg;
};

int pp_mlcp_lcp_size(int contact_count, int directions)
{
    return contact_count * (directions + 2 + PP_CONTACT_ROLLING_UNKNOWNS_MAX);
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
    ws->max_contacts = max_contacts;
    ws->sets = malloc((size_t)max_contacts * sizeof *ws->sets);
    pp_status status = ws->sets ? pp_peg_workspace_create(max_bodies, max_contacts, max_contacts,
                                                          max_directions, &ws->peg)
                                : PP_ERR_NO_MEMORY;
    if (status != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_mlcp_workspace_create: out of memory (%d contacts)", max_contacts);
        pp_mlcp_workspace_destroy(ws);
        return status;
    }
    *out = ws;
    return PP_OK;
}

void pp_mlcp_workspace_destroy(pp_mlcp_workspace *ws)
{
    if (!ws) return;
    free(ws->sets);
    pp_peg_workspace_destroy(ws->peg);
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

int pp_mlcp_friction_axis(const double n[3])
{
    int axis = 0;
    if (fabs(n[1]) < fabs(n[axis])) axis = 1;
    if (fabs(n[2]) < fabs(n[axis])) axis = 2;
    return axis;
}

void pp_mlcp_friction_directions(const double n[3], int k, double *d)
{
    pp_mlcp_friction_directions_about(n, -1, k, d);
}

void pp_mlcp_friction_directions_about(const double n[3], int axis, int k, double *d)
{
    PP_ASSERT(n && d && k >= 1 && axis < 3, "pp_mlcp_friction_directions: valid arguments");
    /* t1: the world axis with the smallest |n_i| (or the caller's while its projection is
     * long enough, PP_MLCP_AXIS_KEPT), projected on the tangent plane. The rule's has squared
     * norm 1 - n_i^2 >= 2/3, so the normalisation is always well conditioned. */
    if (axis < 0 || !(1.0 - n[axis] * n[axis] >= PP_MLCP_AXIS_KEPT))
        axis = pp_mlcp_friction_axis(n);
    double t1[3] = {-n[axis] * n[0], -n[axis] * n[1], -n[axis] * n[2]};
    t1[axis] += 1.0;
    double len = sqrt(dot3(t1, t1));
    for (int i = 0; i < 3; ++i) t1[i] /= len;
    /* k = 2: the planar cone of a world in the plane z = const (ODE's Plane2D): +-t with t in
     * that plane, t = e_z x n; a normal along e_z (not a planar contact) keeps t1. */
    const double planar[3] = {-n[1], n[0], 0.0};
    double planar_len = sqrt(dot3(planar, planar));
    if (k == 2 && planar_len > 1e-9)
        for (int i = 0; i < 3; ++i) t1[i] = planar[i] / planar_len;
    double t2[3];
    cross(n, t1, t2);
    /* d_j = cos(2 pi j / k) t1 + sin(2 pi j / k) t2. The cosines and sines are the same for
     * every contact of a solve (one k): each thread keeps those of the last k it was asked
     * for, from the same libm calls, instead of calling sin and cos for every contact (1.5 %
     * of pile30's step, docs/performance.md); a k above PP_MLCP_DIRECTIONS_MAX (no
     * workspace's) calls them each time. */
    static _Thread_local int angles_k;
    static _Thread_local double angles[2 * PP_MLCP_DIRECTIONS_MAX];
    const double two_pi = 6.283185307179586476925286766559;
    const int kept = k <= PP_MLCP_DIRECTIONS_MAX;
    if (kept && angles_k != k) {
        for (int j = 0; j < k; ++j) {
            angles[2 * j] = cos(two_pi * j / k);
            angles[2 * j + 1] = sin(two_pi * j / k);
        }
        angles_k = k;
    }
    for (int j = 0; j < k; ++j) {
        const double c = kept ? angles[2 * j] : cos(two_pi * j / k);
        const double s = kept ? angles[2 * j + 1] : sin(two_pi * j / k);
        for (int i = 0; i < 3; ++i) d[3 * j + i] = c * t1[i] + s * t2[i];
    }
}

/* A: [-u; -(r_a x u)], B: [u; r_b x u] with r_a = p_a - x_a, r_b = p_a + psi n - x_b.
 * Derivation (PEG Eqs 6–7): psi = n . (p_b - p_a) with p_a fixed in A and p_b fixed in B;
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

/* ---- The solve: U sets through the PEG pipeline ------------------------------------------ */

pp_status pp_mlcp_solve(pp_mlcp_workspace *ws, const pp_mlcp_problem *p,
                        const pp_lcp_options *options, unsigned char *basis,
                        pp_mlcp_solution *solution, pp_mlcp_stats *stats)
{
    if (!ws || !p || !solution || !stats) {
        pp_log(PP_LOG_ERROR, "pp_mlcp_solve: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (p->contact_count < 0 || p->contact_count > ws->max_contacts) {
        pp_log(PP_LOG_ERROR, "pp_mlcp_solve: %d contacts exceed the workspace (%d)",
               p->contact_count, ws->max_contacts);
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < p->contact_count; ++i)
        ws->sets[i] = (pp_peg_set){PP_PEG_SET_U, PP_PEG_VERTEX_FACE, i, 1};
    pp_peg_problem problem = {*p, p->contact_count, ws->sets, 0, NULL};
    pp_peg_stats ps;
    pp_status st = pp_peg_solve(ws->peg, &problem, options, basis, solution, NULL, &ps);
    if (st != PP_OK && st != PP_ERR_SOLVER) return st;
    memset(stats, 0, sizeof *stats);
    stats->lcp_size = ps.lcp_size;
    stats->directions = ps.directions;
    stats->islands = ps.islands;
    stats->largest_island = ps.largest_island;
    stats->islands_failed = ps.islands_failed;
    stats->failed_island = ps.failed_island;
    stats->lcp = ps.lcp;
    stats->load_shared = ps.load_shared;
    return st;
}

void pp_mlcp_last_lcp(const pp_mlcp_workspace *ws, int *n, const double **M, const double **q)
{
    PP_ASSERT(ws && n && M && q, "pp_mlcp_last_lcp: valid arguments");
    pp_peg_last_lcp(ws->peg, n, M, q);
}
