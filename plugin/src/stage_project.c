/*
 * Post-stabilisation of a step whose re-linearisation did not converge (after stage 7,
 * per island; docs/design.md "Post-stabilisation").
 *
 * The Stewart–Trinkle §3.6 re-linearisation (relinearize.c) iterates the step's velocity to a
 * fixed point nu^{l+1} = F(nu^{l+1}) whose end pose q^{l+1} = q^l + h f(nu^{l+1}) satisfies the
 * constraints psi(q^{l+1}) >= 0 to round-off. Where it does not converge within its
 * iterations it keeps the estimate that violates them least within the energy bound, and
 * that pose may end a set 1e-10 .. 1e-9 m inside: measured on PEG's pouring with mu = 0.5
 * (docs/performance.md "Post-stabilisation of an unconverged step"), a face contact whose
 * load the normal rows leave free between 4-5 coplanar sliding points, or two twin X sets
 * sharing a warm start, overlapping 2e-12 .. 7e-12 m^3 after the step. Making every such
 * iteration converge was tried twice (docs/performance.md, s18-pour, s20-pourmu, s20-pour157):
 * each rule moved other trajectories onto other unconverged steps.
 *
 * So the pose is corrected instead, the velocity left as the step chose it: the smallest
 * displacement in the metric of the mass matrix that puts the island's working set back on
 * its constraints (Cline & Pai 2003, "Post-stabilization for rigid body simulation with
 * contact and constraints", the contact rows as inequalities; Anitescu & Hart 2004 for the
 * same LCP form; docs/references.md):
 *
 *     min 1/2 dq^T M dq   subject to   psi(q^) + G^T dq >= 0,
 *     dq = M^-1 G lambda,   0 <= lambda  _|_  psi(q^) + G^T M^-1 G lambda >= 0,
 *
 * G^T the rows of the gap rates (PEG Eq 7, pp_mlcp_contact_jacobian) taken at q^, one row a
 * set of the working set (its member of largest gap: a set holds when max_s psi_s >= 0, PEG
 * Eqs 39-40), sets within PROJECT_NEAR of contact only (the others cannot close within a
 * displacement PROJECT_MAX), no friction. The LCP is the step's own Delassus operator without
 * its friction rows; it is solved by Lemke (pp_lcp_solve), the displacement applied to the
 * pose (the rotation part as a finite rotation of dq's angular part), and the sets read again
 * there; at most PROJECT_ROUNDS rounds (psi is not linear). Kinetic energy does not change
 * (the velocities are the step's); potential energy changes by the weight times the lift,
 * at most m g PROJECT_MAX.
 *
 * It is applied only where it is small and complete: every set of the working set ends with
 * max_s psi_s >= -PROJECT_TOL, and no point of any body moved by more than PROJECT_MAX
 * (|dx| + |dtheta| reach). Otherwise the pose is left as the iteration kept it and nothing is
 * counted, so a real failure (a deep pose) stays visible in the overlap and in
 * relinearize_refused. Not in islands with joint rows (a displacement would move the joints'
 * anchors apart) nor where an island's pair is smooth (a sphere or capsule's closest-point
 * contact is not carried by the working set, relinearize.c smooth_pair). Counted in
 * pp_step_stats.positions_projected and projection_largest.
 */
#include "world_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROJECT_MIN 1e-13  /* violation (m) below which a kept estimate is left as it is */
#define PROJECT_TOL 1e-14  /* violation (m) a projected pose must end within */
#define PROJECT_NEAR 1e-6  /* sets with max_s psi_s below this (m) are rows of the LCP */
#define PROJECT_MAX 1e-6   /* largest displacement (m) of a body point applied */
#define PROJECT_ROUNDS 3

/* The rows of one round: per working set whose largest gap is below PROJECT_NEAR, that
 * member at the current pose. */
typedef struct project_rows {
    pp_contact *row;
    int *side;         /* 2 a row: the local index of body_a's and body_b's body where it is
                          moved (moved_body), else -1 */
    double *g;         /* 12 a row: g_a (6), g_b (6) */
    double *minv_g;    /* 12 a row: M^-1 g_a, M^-1 g_b */
    double *A, *q, *z; /* the LCP: column-major n x n, psi, lambda */
    unsigned char *basis;
    int count, capacity, a_capacity;
} project_rows;

static void rows_free(project_rows *r)
{
    free(r->row);
    free(r->side);
    free(r->g);
    free(r->minv_g);
    free(r->A);
    free(r->q);
    free(r->z);
    free(r->basis);
    memset(r, 0, sizeof *r);
}

/* Room for `need` rows (pegplus's growing arrays, step_memory.c) and their n x n LCP. */
static pp_status rows_grow(project_rows *r, int need)
{
    void **const arrays[] = {(void **)&r->row, (void **)&r->side, (void **)&r->g,
                             (void **)&r->minv_g, (void **)&r->q, (void **)&r->z,
                             (void **)&r->basis};
    const size_t sizes[] = {sizeof *r->row, 2 * sizeof *r->side, 12 * sizeof(double),
                            12 * sizeof(double), sizeof(double), sizeof(double), 1};
    if (need > 46340) return PP_ERR_NO_MEMORY; /* need^2 past INT_MAX */
    pp_status st = pp_grow_together(arrays, sizes, 7, &r->capacity, need);
    return st == PP_OK ? pp_grow((void **)&r->A, &r->a_capacity, need * need, sizeof(double))
                       : st;
}

/* The local index of a contact side's body when it is one of the island's dynamic bodies,
 * else -1 (static geometry, a kinematic body: not moved). */
static int moved_body(const pp_world *world, const pp_island_work *iw, int body)
{
    if (body < 0) return -1;
    const int l = world->scratch.body_local[body];
    return l >= 0 && l < iw->dynamic_count ? l : -1;
}

/* The working set read at the bodies' current poses: its rows (sets within PROJECT_NEAR)
 * into r, and the largest violation -max_s psi_s over the sets that could be read. */
static pp_status read_rows(pp_world *world, pp_island_work *iw, project_rows *r,
                           double *violation)
{
    pp_status st = rows_grow(r, iw->work.set_count > 0 ? iw->work.set_count : 1);
    r->count = 0;
    *violation = 0.0;
    for (int w = 0; w < iw->work.set_count && st == PP_OK; ++w) {
        pp_contact best;
        int ok = 0;
        st = pp_island_read_work_set(world, iw, w, &best, &ok);
        if (st != PP_OK || !ok) continue; /* not readable here: left out, as the iteration is */
        if (-best.psi > *violation) *violation = -best.psi;
        if (best.psi < PROJECT_NEAR) {
            r->side[2 * r->count] = moved_body(world, iw, best.body_a);
            r->side[2 * r->count + 1] = moved_body(world, iw, best.body_b);
            r->row[r->count++] = best;
        }
    }
    return st;
}

/* M^-1 g for one side of a row: the body's inverse mass on the linear part, its world-frame
 * inverse inertia (the step's, pp_island_load) on the angular part. */
static void apply_inverse_mass(const pp_mlcp_body *b, const double g[6], double out[6])
{
    for (int i = 0; i < 3; ++i) out[i] = b->inv_mass * g[i];
    for (int i = 0; i < 3; ++i)
        out[3 + i] = b->inv_inertia[3 * i] * g[3] + b->inv_inertia[3 * i + 1] * g[4] +
                     b->inv_inertia[3 * i + 2] * g[5];
}

/* One round: the LCP of the rows at the current pose, its displacement (`step`, 6 a local
 * body, scratch) added to dq (6 a local body) and put on the bodies. PP_ERR_SOLVER when the
 * LCP is not solved. */
static pp_status project_round(pp_world *world, pp_island_work *iw, project_rows *r,
                               double *dq, double *step)
{
    const int n = r->count;
    for (int k = 0; k < n; ++k) {
        const pp_contact *c = &r->row[k];
        const int la = r->side[2 * k], lb = r->side[2 * k + 1];
        double *g = &r->g[12 * k], *m = &r->minv_g[12 * k];
        pp_mlcp_contact_jacobian(c, la >= 0 ? iw->mlcp_body[la].x : NULL,
                                 lb >= 0 ? iw->mlcp_body[lb].x : NULL, c->n, g, g + 6);
        memset(m, 0, 12 * sizeof(double));
        if (la >= 0) apply_inverse_mass(&iw->mlcp_body[la], g, m);
        if (lb >= 0) apply_inverse_mass(&iw->mlcp_body[lb], g + 6, m + 6);
    }
    /* A = G^T M^-1 G: rows k and j meet where they share a moved body */
    for (int k = 0; k < n; ++k) {
        const int *bk = &r->side[2 * k];
        r->q[k] = r->row[k].psi;
        for (int j = 0; j < n; ++j) {
            const int *bj = &r->side[2 * j];
            double a = 0.0;
            for (int u = 0; u < 2; ++u)
                for (int v = 0; v < 2; ++v) {
                    if (bk[u] < 0 || bk[u] != bj[v]) continue;
                    const double *g = &r->g[12 * k + 6 * u], *m = &r->minv_g[12 * j + 6 * v];
                    for (int e = 0; e < 6; ++e) a += g[e] * m[e];
                }
            r->A[(size_t)j * (size_t)n + (size_t)k] = a;
        }
    }
    pp_lcp_workspace *ws = NULL;
    pp_status st = pp_lcp_workspace_create(n, &ws);
    if (st != PP_OK) return st;
    pp_lcp_options o = pp_lcp_options_default();
    o.max_seconds = 0.0; /* bounded by its pivots (50 n + 100 an attempt), not the clock */
    o.fallback = 0;      /* an exact answer or none */
    pp_lcp_result res;
    memset(r->basis, 0, (size_t)n);
    st = pp_lcp_solve(ws, n, r->A, r->q, &o, r->basis, r->z, &res);
    pp_lcp_workspace_destroy(ws);
    if (st != PP_OK) return st;
    /* dq = M^-1 G lambda, put on the bodies: x += dx, R <- exp(dtheta) R */
    memset(step, 0, 6 * (size_t)iw->dynamic_count * sizeof(double));
    for (int k = 0; k < n; ++k) {
        const int *side = &r->side[2 * k];
        for (int u = 0; u < 2; ++u)
            if (side[u] >= 0)
                for (int e = 0; e < 6; ++e)
                    step[6 * side[u] + e] += r->minv_g[12 * k + 6 * u + e] * r->z[k];
    }
    for (int l = 0; l < iw->dynamic_count; ++l) {
        const double *d = &step[6 * l];
        if (d[0] == 0.0 && d[1] == 0.0 && d[2] == 0.0 && d[3] == 0.0 && d[4] == 0.0 &&
            d[5] == 0.0)
            continue;
        pp_body *b = &world->bodies[iw->body[l]];
        pp_body moved = *b; /* a unit step at twist d: the finite rotation of stage 8 */
        memcpy(moved.v, d, 3 * sizeof(double));
        memcpy(moved.w, d + 3, 3 * sizeof(double));
        moved.linear_damping = moved.angular_damping = 0.0;
        moved.max_angular_speed = HUGE_VAL;
        moved.finite_rotation = 1;
        moved.finite_rotation_axis_set = 0;
        pp_body_integrate_pose(&moved, 1.0);
        memcpy(b->x, moved.x, sizeof b->x);
        memcpy(b->q, moved.q, sizeof b->q);
        memcpy(b->R, moved.R, sizeof b->R);
        memcpy(iw->mlcp_body[l].x, b->x, sizeof b->x);
        pp_pose_body_shapes(world, iw->body[l], iw->dt);
        for (int e = 0; e < 6; ++e) dq[6 * l + e] += d[e];
    }
    return PP_OK;
}

pp_status pp_island_project(pp_world *world, pp_island_work *iw, double h)
{
    iw->projected = 0;
    if (iw->joint_row_count > 0 || iw->work.set_count == 0 ||
        pp_island_has_smooth_pair(&world->scratch, iw))
        return PP_OK;
    const int nb = iw->dynamic_count;
    /* dq: the displacement so far; then each round's (project_round's scratch) */
    double *dq = calloc(nb > 0 ? 12 * (size_t)nb : 12, sizeof(double));
    if (!dq) return PP_ERR_NO_MEMORY;
    project_rows r = {0};
    memcpy(iw->nu_hat, iw->velocity, 6 * (size_t)iw->body_count * sizeof(double));
    pp_island_pose_predicted(world, iw, h, 0); /* q^ of the velocity the step keeps */
    double violation = 0.0;
    pp_status st = read_rows(world, iw, &r, &violation);
    int done = st == PP_OK && violation <= PROJECT_MIN; /* nothing to correct */
    const int needed = !done;
    for (int round = 0; st == PP_OK && !done && round < PROJECT_ROUNDS; ++round) {
        const pp_status solved = project_round(world, iw, &r, dq, dq + 6 * nb);
        if (solved == PP_ERR_NO_MEMORY) st = solved; /* returned: the step fails whole */
        if (solved != PP_OK) break; /* not solved: the pose left as it is */
        st = read_rows(world, iw, &r, &violation);
        done = st == PP_OK && violation <= PROJECT_TOL;
    }
    double largest = 0.0;
    for (int l = 0; l < nb; ++l) {
        const double *d = &dq[6 * l];
        const double moved = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) +
                             sqrt(d[3] * d[3] + d[4] * d[4] + d[5] * d[5]) *
                                 pp_body_reach(world, iw->body[l]);
        if (moved > largest) largest = moved;
    }
    if (st == PP_OK && needed && done && largest <= PROJECT_MAX) {
        for (int l = 0; l < nb; ++l) {
            const pp_body *b = &world->bodies[iw->body[l]];
            double *p = &iw->pose_projected[16 * l];
            memcpy(p, b->x, 3 * sizeof(double));
            memcpy(p + 3, b->q, 4 * sizeof(double));
            memcpy(p + 7, b->R, 9 * sizeof(double));
        }
        iw->projected = 1;
        iw->stats.positions_projected++;
        if (largest > iw->stats.projection_largest) iw->stats.projection_largest = largest;
    }
    pp_island_pose_predicted(world, iw, h, 1); /* q^l back: stage 8 integrates from there */
    rows_free(&r);
    free(dq);
    return st;
}

/* After stage 8 (pp_body_integrate_pose with the island's velocities, the same q^ the
 * projection started from): the projected poses. */
void pp_island_apply_projection(pp_world *world, const pp_island_work *iw)
{
    if (!iw->projected) return;
    for (int l = 0; l < iw->dynamic_count; ++l) {
        pp_body *b = &world->bodies[iw->body[l]];
        const double *p = &iw->pose_projected[16 * l];
        memcpy(b->x, p, 3 * sizeof(double));
        memcpy(b->q, p + 3, 4 * sizeof(double));
        memcpy(b->R, p + 7, 9 * sizeof(double));
    }
}
