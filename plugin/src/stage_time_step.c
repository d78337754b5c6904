/*
 * Stage 7 of a pegplus step, for one island: the Stewart–Trinkle time-stepping LCP of its
 * constraint list, warm-started by constraint identity, and its impulses.
 *
 * One solve path for both models: the standard model's constraints are PEG U sets (one per
 * feature contact), and the LCP of U sets only is exactly ST96 Eq 29 (pegplus/peg.h), so
 * pp_peg_solve assembles and solves both. The free velocities nu* = nu + h M^-1 (f_ext +
 * tau_gyro) are in the bodies already (ODE's order, integrate.c); the solve gives
 * nu^{l+1} = nu* + M^-1 (G p + G_f beta) per local body in iw->velocity.
 *
 * Failures (README "Failures"). Every LCP solve of an island in a step shares one budget
 * (pp_config.lcp_budget_seconds, pegplus/lcp.h pp_lcp_budget): Lemke, then Lemke on
 * M + eps I (lcp_fallback 1), and when the budget runs out or every exact attempt fails, the
 * bounded iterative fallback's answer, applied with its residual reported (lcp_fallback 2).
 * Under PP_MODEL_PEG a PEG LCP that Lemke cannot solve (not copositive, references.md) is replaced
 * by the standard model's constraints on the island's pairs (pp_step_stats.peg_fallback); a
 * PEG LCP answered approximately is kept. A moving island's PEG LCP that PEG's solve declines
 * before solving it (contact/src/peg_mlcp.c "Declined islands": I/X sets, no warm start, not
 * answered by screening, 8 000 unknowns or more: an impact's, which no path of PEG's answers
 * within the clock; or the same island warm, with no set active in its warm start and some set
 * closing at the free motion: a first contact) is replaced the same way, the standard model's
 * solve getting the clock that screening's rounds on the PEG LCP left (all of it unless a
 * round ran: peg_mlcp.c).
 * If no answer is usable, the island runs without contact impulses (lcp_fallback 3):
 * the next step sees the gap psi < 0 and its psi/h term pushes the bodies apart. Either way
 * the status is in the step statistics, no other island is touched, and nothing non-finite
 * reaches ODE.
 */
#include "world_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pp_status grow_bodies(pp_island_work *iw)
{
    void **const arrays[] = {(void **)&iw->mlcp_body, (void **)&iw->velocity,
                             (void **)&iw->nu_hat, (void **)&iw->nu_kept,
                             (void **)&iw->pose_saved, (void **)&iw->solve_x,
                             (void **)&iw->orbit, (void **)&iw->pose_projected};
    const size_t sizes[] = {sizeof(pp_mlcp_body), 6 * sizeof(double), 6 * sizeof(double),
                            6 * sizeof(double), 16 * sizeof(double), 3 * sizeof(double),
                            12 * PP_RELIN_PERIOD_MAX * sizeof(double), 16 * sizeof(double)};
    return pp_grow_together(arrays, sizes, 8, &iw->body_array_capacity,
                            iw->body_count > 0 ? iw->body_count : 1);
}

pp_status pp_island_load(pp_world *world, pp_island_work *iw)
{
    pp_status st = grow_bodies(iw);
    if (st != PP_OK) return st;
    for (int l = 0; l < iw->body_count; ++l) {
        const pp_body *b = &world->bodies[iw->body[l]];
        pp_mlcp_body *m = &iw->mlcp_body[l];
        m->inv_mass = b->inv_mass;
        memcpy(m->inv_inertia, b->inv_inertia_world, sizeof m->inv_inertia);
        memcpy(m->x, b->x, sizeof m->x);
        memcpy(m->v, b->v, sizeof m->v);
        memcpy(m->w, b->w, sizeof m->w);
        memcpy(&iw->velocity[6 * l], b->v, 3 * sizeof(double));
        memcpy(&iw->velocity[6 * l + 3], b->w, 3 * sizeof(double));
    }
    return PP_OK;
}

void pp_island_work_free(pp_island_work *iw)
{
    free(iw->body);
    pp_constraint_list_free(&iw->list);
    pp_constraint_list_free(&iw->work);
    pp_constraint_list_free(&iw->ordered);
    free(iw->work_place);
    free(iw->work_mark);
    free(iw->bound_rank);
    free(iw->bound_place);
    free(iw->own_pairs);
    for (int i = 0; i < 2; ++i) {
        free(iw->set_index[i].slot);
        free(iw->set_index[i].hash);
    }
    pp_peg_builder_destroy(iw->peg_builder);
    free(iw->pose_work);
    pp_peg_workspace_destroy(iw->peg);
    free(iw->mlcp_body);
    free(iw->local_contacts);
    free(iw->normal_impulse);
    free(iw->friction_vector);
    free(iw->slack);
    free(iw->joint_rows);
    free(iw->joint_impulse);
    free(iw->velocity);
    free(iw->basis);
    free(iw->z_start);
    free(iw->z_fallback);
    pp_warm_store_destroy(iw->warm);
    free(iw->nu_hat);
    free(iw->nu_kept);
    free(iw->pose_saved);
    free(iw->solve_x);
    free(iw->orbit);
    free(iw->pose_projected);
    memset(iw, 0, sizeof *iw);
}

/* The solver's arrays for the island's current list: sized by this island, grown to the
 * largest seen and reused (the LCP workspace is the largest island's, never the world's). */
static pp_status ensure_solver(pp_island_work *iw, int k)
{
    int nb = iw->body_count, nc = iw->list.contact_count, ns = iw->list.set_count;
    if (!iw->peg || nb > iw->peg_bodies || nc > iw->peg_contacts || ns > iw->peg_sets ||
        k > iw->peg_directions) {
        int mb = nb > 2 * iw->peg_bodies ? nb : 2 * iw->peg_bodies;
        int mc = nc > 2 * iw->peg_contacts ? nc : 2 * iw->peg_contacts;
        int ms = ns > 2 * iw->peg_sets ? ns : 2 * iw->peg_sets;
        if (mb < 1) mb = 1;
        if (mc < 8) mc = 8;
        if (ms < 8) ms = 8;
        if (ms > mc) mc = ms;
        pp_peg_workspace_destroy(iw->peg);
        iw->peg = NULL;
        pp_status st = pp_peg_workspace_create(mb, mc, ms, k, &iw->peg);
        if (st != PP_OK) return st;
        iw->peg_bodies = mb;
        iw->peg_contacts = mc;
        iw->peg_sets = ms;
        iw->peg_directions = k;
    }
    pp_status st = PP_OK;
    if (!iw->warm) st = pp_warm_store_create(&iw->warm);
    void **const per_contact[] = {(void **)&iw->local_contacts, (void **)&iw->normal_impulse,
                                  (void **)&iw->friction_vector, (void **)&iw->slack};
    const size_t sizes[] = {sizeof(pp_contact), sizeof(double), 3 * sizeof(double),
                            sizeof(double)};
    if (st == PP_OK) st = pp_grow_together(per_contact, sizes, 4, &iw->contact_capacity, nc > 0 ? nc : 1);
    int n = pp_peg_lcp_size(ns, nc, k) + ns * PP_CONTACT_ROLLING_UNKNOWNS_MAX +
            pp_peg_joint_unknowns(iw->joint_row_count, iw->joint_rows);
    if (st == PP_OK) st = pp_grow((void **)&iw->basis, &iw->basis_capacity, n > 0 ? n : 1, 1);
    if (st == PP_OK)
        st = pp_grow((void **)&iw->z_start, &iw->z_start_capacity, n > 0 ? n : 1, sizeof(double));
    if (st == PP_OK)
        st = pp_grow((void **)&iw->z_fallback, &iw->z_fallback_capacity, n > 0 ? n : 1,
                     sizeof(double));
    return st;
}

/* The island's joint rows with local body indices (stage_joints.c built them once for the
 * step, at its start pose), and room for their impulses. */
pp_status pp_island_joint_rows(pp_world *world, pp_island_work *iw)
{
    const int *local = world->scratch.body_local;
    int rows = 0;
    for (int t = 0; t < iw->joint_count; ++t) rows += world->joints[iw->joints[t]].row_count;
    void **const arrays[] = {(void **)&iw->joint_rows, (void **)&iw->joint_impulse};
    const size_t sizes[] = {sizeof(pp_joint_row), sizeof(double)};
    pp_status st = pp_grow_together(arrays, sizes, 2, &iw->joint_row_capacity, rows > 0 ? rows : 1);
    if (st != PP_OK) return st;
    iw->joint_row_count = 0;
    for (int t = 0; t < iw->joint_count; ++t) {
        const pp_joint *j = &world->joints[iw->joints[t]];
        for (int r = j->row_first; r < j->row_first + j->row_count; ++r) {
            pp_joint_row *out = &iw->joint_rows[iw->joint_row_count];
            *out = world->joint_rows[r];
            out->body_a = out->body_a >= 0 ? local[out->body_a] : -1;
            out->body_b = out->body_b >= 0 ? local[out->body_b] : -1;
            iw->joint_impulse[iw->joint_row_count++] = 0.0;
        }
    }
    return PP_OK;
}

/* Kinetic energy of a body at velocity nu (6 entries: v, w), J, in the metric the solve used:
 * mass 1 / inv_mass and the world inertia at q^l, the inverse of m->inv_inertia (the
 * re-linearisation poses the bodies at q^ but keeps M(q^l), relinearize.c). */
static double body_energy(const pp_mlcp_body *m, const double *nu)
{
    const double *A = m->inv_inertia, *w = nu + 3;
    /* A w' = w for w' = I w: Cramer's rule on the symmetric positive definite 3 x 3 */
    const double c00 = A[4] * A[8] - A[5] * A[7], c01 = A[5] * A[6] - A[3] * A[8],
                 c02 = A[3] * A[7] - A[4] * A[6];
    const double det = A[0] * c00 + A[1] * c01 + A[2] * c02;
    double rot = 0.0;
    if (det > 0.0) {
        const double I[9] = {c00, A[2] * A[7] - A[1] * A[8], A[1] * A[5] - A[2] * A[4],
                             c01, A[0] * A[8] - A[2] * A[6], A[2] * A[3] - A[0] * A[5],
                             c02, A[1] * A[6] - A[0] * A[7], A[0] * A[4] - A[1] * A[3]};
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) rot += w[r] * I[3 * r + c] * w[c];
        rot /= det;
    }
    return 0.5 * ((nu[0] * nu[0] + nu[1] * nu[1] + nu[2] * nu[2]) / m->inv_mass + rot);
}

/*
 * The energy acceptance of an island's solve (README "Known problems", soak; issue 15).
 *
 * With nu+ = nu* + W P (P = G z + J^T p: every impulse of the solve, W = M^-1), exactly
 *     KE(nu+) - KE(nu*) = P^T nu+ - (1/2) P^T W P <= P^T nu+ = sum_i z_i g_i^T nu+,
 * and at a solution of the LCP each impulse does bounded work at the end velocity:
 *  - a contact's normal impulse p (the primary of a PEG set; its row is
 *    g^T nu+ + E_I2 c + psi/h >= 0 with c >= 0, and = 0 where p > 0) gives
 *    p g^T nu+ = -p (psi/h + sum c) <= p max(0, -psi/h): work only to undo an overlap (the
 *    psi/h term; a soft contact's erp psi/h is smaller, its cfm/h p term only takes);
 *  - friction (Stewart–Trinkle): beta_l d_l^T nu+ = -beta_l lambda <= 0;
 *  - a joint row (J nu+ = c - cfm/h p on an equality, and c bounds a limit's or motor's
 *    row from the side its impulse pushes): p J nu+ <= |p c|.
 * So a passive island (no kinematic body, no moving surface) satisfies
 *     KE(nu+) <= KE(nu*) + sum_contacts p max(0, -psi/h) + sum_rows |p c|,
 * up to the solve's residual r (w is off by at most r in each row: sum |z| r) and rounding.
 * An answer beyond that bound is not a solution of the step's LCP however small its LCP
 * residual reads (measured before the features fix, soak seed 319: ||z|| = 5.7e11 with
 * r(z) = 3e-5 and rel(z) = 7e-18 took the island from 8.5e3 J to 4.8e8 J).
 * Cost: two kinetic energies and one pass over the contacts and joint rows.
 *
 * A push-out needs an overlap. A PEG set's gaps are distances along its features' normals,
 * not the pair's depth, and a contact can read negative between shapes that are apart (an X
 * set's alternatives separate the features' tangent cones, which can overlap while the
 * polytopes are apart; the set itself gets the pair's separating facet since 2026-11-26,
 * peg_constraints.c, but its other alternatives keep their negative psi, and the standard
 * model's and the re-linearisation's contacts are not sets). At the
 * step's start pose (`at_start`) a contact with psi < -PUSH_OUT_QUERY and an impulse asks
 * its pair's signed distance d (pp_shape_distance, once per pair and solve); where the pair
 * is apart or touching, d >= -PUSH_OUT_QUERY, its allowance is p max(0, -max(psi, d) / h),
 * 0 (or the work of undoing at most PUSH_OUT_QUERY): no overlap, no push-out work. (Where the
 * shapes overlap deeper, psi is kept as read: a set's gap along its normal may legitimately
 * exceed the pair's minimum depth.) Touching counts: PEG, 50 m/s, seed 14 of
 * check_fast_hull_energy, the fast-pair split's sub-step of 1.59e-4 s started with the hulls
 * 3.5e-15 m apart and an X set's primary reading psi = -2.20 cm; the first solve pushed
 * along it at -psi/h and took the island from 10.41 J to 72.43 J, inside the 154 J that psi
 * gave (the step: 12.50 J -> 41.21 J). Measured (soak seeds
 * 3049 and 1246, PP_MODEL_PEG): after an impact, the sub-step of h = 4.3e-5 s (6.9e-5 s) met
 * a hull and a box 4.27 cm apart whose cross-contact set read psi = -4.6 mm on all its
 * contacts; its impulse (973 N s) pushed at -psi/h = 107 m/s and took the island from
 * 15 796 J to 70 141 J (576 J to 102 718 J), inside the allowance of 103 833 J that psi gave.
 * A re-linearisation's gaps are shifted (psi' = psi(q^) - h G^T nu^, relinearize.c) and keep
 * their own allowance.
 * Returns 1 when the island's velocities satisfy the bound (or it does not apply).
 */
#define PUSH_OUT_QUERY 1e-9 /* m: gaps and distances within it are touching, kept as read */

/* The signed distance of contact k's pair of shapes (world indices), asked once per pair in
 * a run of contacts of the same pair (*q caches the last); -HUGE_VAL where not known. */
typedef struct pair_query {
    int shape_a, shape_b;
    double distance;
} pair_query;

static double pair_distance(const pp_world *world, const pp_contact *k, pair_query *q)
{
    if (k->shape_a != q->shape_a || k->shape_b != q->shape_b) {
        pp_proximity near;
        q->shape_a = k->shape_a;
        q->shape_b = k->shape_b;
        q->distance = pp_shape_distance(&world->scratch.shapes[k->shape_a],
                                        &world->scratch.shapes[k->shape_b], &near) == PP_OK
                          ? near.distance
                          : -HUGE_VAL;
    }
    return q->distance;
}

static int energy_bounded(const pp_world *world, const pp_island_work *iw, double h,
                          const pp_lcp_result *lcp, int at_start)
{
    if (iw->dynamic_count != iw->body_count) return 1; /* a body outside the island's set */
    double before = 0.0, after = 0.0, allowance = 0.0, impulse = 0.0;
    pair_query pair = {-1, -1, 0.0};
    for (int l = 0; l < iw->body_count; ++l) {
        const pp_mlcp_body *m = &iw->mlcp_body[l];
        if (world->bodies[iw->body[l]].kinematic || !(m->inv_mass > 0.0))
            return 1; /* a driven body does work */
        const double star[6] = {m->v[0], m->v[1], m->v[2], m->w[0], m->w[1], m->w[2]};
        before += body_energy(m, star);
        after += body_energy(m, &iw->velocity[6 * l]);
    }
    for (int c = 0; c < iw->list.contact_count; ++c) {
        const pp_contact *k = &iw->local_contacts[c];
        if (k->surface & PP_CONTACT_MOTION) return 1; /* a conveyor drives the contact */
        const double p = iw->normal_impulse[c];
        const double *f = &iw->friction_vector[3 * c];
        double psi = k->psi;
        if (at_start && p > 0.0 && psi < -PUSH_OUT_QUERY) {
            const double d = pair_distance(world, k, &pair);
            if (d >= -PUSH_OUT_QUERY) psi = fmax(psi, d);
        }
        allowance += p * fmax(0.0, -psi / h);
        impulse += fabs(p) + sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    }
    for (int r = 0; r < iw->joint_row_count; ++r) {
        allowance += fabs(iw->joint_impulse[r] * iw->joint_rows[r].c);
        impulse += fabs(iw->joint_impulse[r]);
    }
    const double tolerance = impulse * lcp->residual + 1e-9 * (before + allowance) + 1e-12;
    return isfinite(after) && after <= before + allowance + tolerance;
}

/* Unknowns of the LCP of list l's sets (k friction directions): per set its contacts (normal
 * and secondaries' slacks), k + 1 for friction (beta, lambda) on a frictional primary and 3
 * per rolling axis. */
static int contact_lcp_unknowns(const pp_constraint_list *l, int k)
{
    int n = 0;
    for (int j = 0; j < l->set_count; ++j)
        n += l->sets[j].count + (pp_contact_frictional(&l->contacts[l->sets[j].first]) ? k + 1 : 0) +
             3 * pp_contact_rolling_axes(&l->contacts[l->sets[j].first]);
    return n;
}

int pp_island_lcp_unknowns(const pp_island_work *iw, int k)
{
    return contact_lcp_unknowns(&iw->list, k) +
           pp_peg_joint_unknowns(iw->joint_row_count, iw->joint_rows);
}

/* With PP_LCP_DUMP_DIR set in the environment, an LCP the solver failed on is saved there
 * (pegplus/lcp.h text format) to become a regression test (docs/style.md "Tests"). */
static void dump_failed_lcp(const pp_peg_workspace *peg, const char *what)
{
    static int dumped;
    const char *dir = getenv("PP_LCP_DUMP_DIR");
    if (!dir || !*dir) return;
    int n = 0;
    const double *M = NULL, *q = NULL;
    pp_peg_last_lcp(peg, &n, &M, &q);
    char path[1024];
    snprintf(path, sizeof path, "%s/failed-%d.lcp", dir, dumped++);
    if (pp_lcp_instance_save(path, n, M, q, NULL, what) == PP_OK)
        pp_log(PP_LOG_WARNING, "the failed LCP was saved to %s", path);
}

/*
 * What an island's solves report (pegplus.h pp_step_stats). An island may solve several LCPs
 * in a step (re-linearisation iterates, the PEG fallback, the energy retries), and not every
 * answer reaches its bodies: an answer beyond the energy bound is solved again, a failed PEG
 * LCP is replaced by the standard model's, and the re-linearisation keeps an earlier estimate
 * where an iterate is cut, answered only approximately after exact answers, or violates the
 * constraints more (relinearize.c). The work is counted over every solve (the last size, the
 * largest size, the solves, the warm-started solves, the pivots); the status, residual and
 * fallback level reported are those of the answer applied (pp_island_stats.applied: this
 * record of the solve whose answer is in iw->velocity, iw->answer, which the caller keeps or
 * drops), and the solves short of a solution whose answer was not applied are counted apart
 * (pp_step_stats.lcp_dropped). Measured, ODE's convex demo under PEG at the default clock,
 * step 208: the step reported r 8.45, the residual of an iterate answered z = 0 past the clock
 * and not applied, while the answer applied had r 2.28. The worst status and fallback over
 * every solve are kept too: relinearize.c's rule reads them.
 */
static int approximate(const pp_lcp_result *r)
{
    return r->status == PP_LCP_APPROXIMATE;
}

static void record_lcp(pp_island_work *iw, int size, const pp_lcp_result *r, pp_status st)
{
    int fallback = st == PP_ERR_SOLVER ? (approximate(r) ? 2 : 3)
                   : r->fallback              ? 2
                   : r->epsilon > 0.0         ? 1
                                              : 0;
    iw->stats.lcp_size = size;
    if (size > iw->stats.lcp_largest) iw->stats.lcp_largest = size;
    if (iw->stats.worst_status == 0) iw->stats.worst_status = (int)r->status;
    iw->stats.lcp_pivots += r->pivots;
    iw->stats.lcp_factor_refused += r->factor_work_exceeded;
    iw->stats.lcp_warm += r->warm_started;
    if (fallback > iw->stats.worst_fallback) iw->stats.worst_fallback = fallback;
    iw->stats.failed += st == PP_ERR_SOLVER;
    iw->stats.solves++;
    iw->answer = (pp_answer){(int)r->status, fallback, st == PP_ERR_SOLVER, r->residual};
}

pp_answer pp_answer_combine(pp_answer earlier, pp_answer later)
{
    return (pp_answer){earlier.status ? earlier.status : later.status,
                       earlier.fallback > later.fallback ? earlier.fallback : later.fallback,
                       earlier.failed + later.failed,
                       earlier.residual > later.residual ? earlier.residual : later.residual};
}

/* The energy retries' fallback level (solve_list) raised to `level`: in the answer kept and
 * over the island's solves. */
static void fallback_level(pp_island_work *iw, int level)
{
    if (iw->answer.fallback < level) iw->answer.fallback = level;
    if (iw->stats.worst_fallback < level) iw->stats.worst_fallback = level;
}

/* The answer kind (warm_start.c) of each solve's answer, exact or the bounded fallback's, read
 * as the next re-linearisation iterate's fallback candidate (kinds 1 and 2: the sticking
 * solve's starts, exact answers only). */
#define LAST_ANSWER_KIND 3

/* The LCP of the island's list (standard: U sets only; PEG: U/I/X sets, Eqs 39-49), with
 * local body indices. PP_ERR_SOLVER: not solved (impulses 0, bodies keep nu*). `at_start`:
 * the list's gaps are those of the step's start pose, where a penetration deeper than
 * max_correcting_velocity h is recovered at that speed; a re-linearisation's gaps are shifted
 * (psi' = psi(q^) - h G^T nu^, not a depth) and are never bounded. */
/* One solve of the list (its contacts, or none: `contacts` = 0 solves the joint rows alone)
 * with `compliance` (pp_mlcp_problem.compliance). PP_ERR_SOLVER with *rejected = 1: an answer
 * beyond the energy bound (energy_bounded), its basis not kept. */
static pp_status solve_once(pp_world *world, pp_island_work *iw, double h, int k, int peg,
                            int at_start, double compliance, int contacts, int *rejected)
{
    const pp_step_scratch *s = &world->scratch;
    pp_constraint_list *l = &iw->list;
    pp_status st = ensure_solver(iw, k);
    *rejected = 0;
    if (st != PP_OK) return st;
    for (int c = 0; c < l->contact_count; ++c) {
        pp_contact *lc = &iw->local_contacts[c];
        *lc = l->contacts[c];
        lc->body_a = lc->body_a >= 0 ? s->body_local[lc->body_a] : -1;
        lc->body_b = lc->body_b >= 0 ? s->body_local[lc->body_b] : -1;
    }
    int found = pp_warm_store_get(iw->warm, s->warm_prev, world, l, k, iw->basis);
    /* the joint rows' unknowns follow the contacts' in the LCP, kept by joint identity */
    int contact_unknowns = contact_lcp_unknowns(l, k), joints_wanted = 0;
    int joints_found = pp_warm_store_get_joints(iw->warm, s->warm_prev, world, iw,
                                                iw->basis + contact_unknowns, &joints_wanted);
    /* the sticking solve's start: each set's answer of the last solve of this kind (the step's
     * first, a re-linearisation iterate; warm_start.c), the island's own whichever worker
     * solves it; kept only for islands the sticking solve can take (pile30's islands paid
     * 3-5 % a step for answers never read) */
    const int answer_kind = at_start ? 1 : 2;
    const int keep_answers = contacts && contact_unknowns >= pp_peg_sticking_size();
    int answers = keep_answers ? pp_warm_store_get_answer(iw->warm, s->warm_prev, world, l, k,
                                                          answer_kind, iw->z_start) : 0;
    for (int i = 0; i < pp_peg_joint_unknowns(iw->joint_row_count, iw->joint_rows); ++i)
        iw->z_start[contact_unknowns + i] = 0.0;
    pp_peg_workspace_start(iw->peg, answers > 0 ? iw->z_start : NULL);
    /* a re-linearisation iterate's fallback candidate: the island's last answer of the step
     * (the first solve's or the last iterate's, exact or the fallback's; kind
     * LAST_ANSWER_KIND) by constraint identity, the sticking solve being skipped after its
     * refusal at the first solve (peg_mlcp.c solve_islands) */
    int last_answers = keep_answers && !at_start
                           ? pp_warm_store_get_answer(iw->warm, s->warm_prev, world, l, k,
                                                      LAST_ANSWER_KIND, iw->z_fallback)
                           : 0;
    for (int i = 0; last_answers > 0 &&
                    i < pp_peg_joint_unknowns(iw->joint_row_count, iw->joint_rows); ++i)
        iw->z_fallback[contact_unknowns + i] = 0.0;
    pp_peg_workspace_fallback_start(iw->peg, last_answers > 0 ? iw->z_fallback : NULL);
    pp_peg_problem problem = {{h, iw->body_count, iw->mlcp_body, contacts ? l->contact_count : 0,
                               iw->local_contacts, k, compliance, !world->config.load_sharing,
                               at_start ? world->config.max_correcting_velocity : 0.0},
                              contacts ? l->set_count : 0, l->sets, iw->joint_row_count,
                              iw->joint_rows};
    pp_mlcp_solution solution;
    memset(&solution, 0, sizeof solution);
    solution.normal_impulse = iw->normal_impulse;
    solution.friction_vector = iw->friction_vector;
    solution.velocity = iw->velocity;
    solution.joint_impulse = iw->joint_impulse;
    pp_lcp_options options = pp_lcp_options_default();
    options.budget = &iw->budget;
    /* the island's budget is the only clock: 0 (no limit) leaves only the work-based pivot
     * caps, so the answer cannot depend on the machine's load */
    options.max_seconds = world->config.lcp_budget_seconds;
    /* In a moving island only a basis known for every set is tried: on the degenerate LCPs of
     * the pouring scene a partial guess steered Lemke to other solutions whose
     * re-linearisation did not converge (measured: 2.8e-9 m^3 overlap at h = 0.016 where the
     * full-match rule and a cold start give 1e-19), so a partly known moving island starts
     * cold. An island at rest at the start of the step (its sets reduced, world.c
     * build_island) is not re-linearised unless its first solve sets it moving, and its
     * contact sets change only where a set's primary changes among coincident features: a
     * settled PEG heap of 20 boxes (119 sets, 727 unknowns) knew 118 of its sets every other
     * step and pivoted ~1 000 times a step from w basic; from the partial basis (unknown sets
     * start with w basic) Lemke takes 0-100 pivots. Islands are separate LCPs, so a change in
     * one island costs no other its warm start. */
    int resting_first_solve = iw->reduced && !iw->unreduced;
    options.warm_start = (found == l->set_count || (resting_first_solve && found > 0)) &&
                         joints_found == joints_wanted && contacts && compliance == world->config.compliance;
    pp_peg_stats stats;
    for (int b = 0; b < iw->body_count; ++b) /* for dJointFeedback's torques (near_probe.c) */
        memcpy(&iw->solve_x[3 * b], iw->mlcp_body[b].x, 3 * sizeof(double));
    /* PEG's solve may decline a moving island (the file comment); the standard model's
     * constraints are never declined, nor an island at rest at the step's start */
    pp_peg_workspace_decline(iw->peg, peg && !resting_first_solve);
    st = pp_peg_solve(iw->peg, &problem, &options, iw->basis, &solution, iw->slack, &stats);
    pp_peg_workspace_decline(iw->peg, 0);
    pp_peg_workspace_start(iw->peg, NULL);
    pp_peg_workspace_fallback_start(iw->peg, NULL);
    if (st == PP_ERR_SOLVER && stats.declined > 0) {
        /* not solved, nothing applied or reported but the pivots spent (screening's rounds) */
        iw->stats.lcp_pivots += stats.lcp.pivots;
        if (stats.declined_largest > iw->stats.peg_declined_largest)
            iw->stats.peg_declined_largest = stats.declined_largest;
        iw->declined = 1;
        return PP_ERR_SOLVER;
    }
    if (at_start) iw->recovering |= stats.recovered_sets > 0;
    if (st != PP_OK && st != PP_ERR_SOLVER) return st;
    /* the unknowns solved: an island's sets left out by constraint screening are verified
     * without entering an LCP (contact/src/peg_screen.c) */
    record_lcp(iw, stats.lcp_size - stats.screened_unknowns, &stats.lcp, st);
    iw->stats.lcp_screened = stats.screened_unknowns;
    iw->stats.joint_regularised += stats.joint_regularised;
    iw->stats.load_shared += stats.load_shared;
    iw->stats.load_kept += stats.load_kept;
    if ((st == PP_OK || approximate(&stats.lcp)) && !energy_bounded(world, iw, h, &stats.lcp, at_start)) {
        *rejected = 1;
        return PP_ERR_SOLVER;
    }
    if (keep_answers && (st == PP_OK || approximate(&stats.lcp))) {
        pp_status put = pp_warm_store_put_answer(iw->warm, world, l, k, LAST_ANSWER_KIND,
                                                 pp_peg_last_z(iw->peg));
        if (put != PP_OK) return put;
    }
    if (st == PP_ERR_SOLVER && approximate(&stats.lcp)) {
        /* The bounded fallback's answer (finite, z >= 0, its residual recorded): applied. */
        pp_log(PP_LOG_WARNING, "an island's LCP (%d unknowns) was answered by the bounded "
                               "fallback (relative residual %.2g%s)", stats.lcp_size,
               stats.lcp.relative_residual, stats.lcp.budget_exhausted ? ", budget exhausted" : "");
        return PP_OK;
    }
    if (st == PP_OK && contacts) {
        pp_status put = pp_warm_store_put(iw->warm, world, l, k, iw->basis);
        if (put == PP_OK)
            put = pp_warm_store_put_joints(iw->warm, world, iw, iw->basis + contact_unknowns);
        if (put == PP_OK && keep_answers)
            put = pp_warm_store_put_answer(iw->warm, world, l, k, answer_kind,
                                           pp_peg_last_z(iw->peg));
        if (put != PP_OK) return put;
    } else if (st != PP_OK) {
        dump_failed_lcp(iw->peg, peg ? "PEG time-stepping LCP Lemke failed on"
                                     : "time-stepping LCP Lemke failed on");
    }
    return st;
}

/*
 * A PEG set's impulse acts along its primary's normal only (Eqs 40-41), and its work at the
 * end velocity is p G_p^T nu+ = -p (psi_p/h + sum c) <= p max(0, -psi_p/h) (energy_bounded):
 * a primary whose gap reads an overlap may push out at -psi_p/h while the set's combined gap
 * max_s g_s closes through another member. Between shapes that are apart the overlap is
 * not there (energy_bounded allows no push-out work), yet such sets exist: an X set whose
 * alternatives all read psi < 0 gets the pair's separating facet as one more secondary
 * (peg_constraints.c "Sets that read the pair deeper than it is"), and keeps the primary
 * chosen before it, with psi < 0. When the facet's gap closes in the step, Lemke may carry
 * the impulse on that primary, along a normal the bodies leave at speed, and the exact
 * answer gains energy. Measured (soak seed 1246, PEG, step 79, the sub-step of h = 1.64e-4 s
 * after the impacts, a 46.7 kg box and a 0.037 kg hull 0.67 mm apart closing at 4.10 m/s
 * along the facet): p = 1.6e-5 N s on an edge-edge primary with psi = -0.0425 m, whose
 * normal the bodies leave at 10.9 m/s, +1.4e-4 J; the regularised retry spread the impulse
 * over the four sets holding the facet, +4.2e-5 J: the island got no contact impulse.
 *
 * The retry after such an answer, at the step's start pose: every set of a pair that is apart
 * or touching (signed distance d >= -PUSH_OUT_QUERY) whose primary reads psi <
 * -PUSH_OUT_QUERY takes its member of largest psi as primary (swapped with it; the set's
 * constraint, max_s psi_s >= 0 over the same members, is unchanged, only the impulse's
 * direction moves). That member reads the set's value, which is at least the pair's
 * separating-axis gap, > 0 when apart, ~0 when touching (peg_constraints.c): its allowance
 * p max(0, -psi/h) is 0 (or that of at most PUSH_OUT_QUERY), so an exact answer of the
 * re-primed LCP does no push-out work there and keeps the energy bound by the derivation in
 * energy_bounded (seed 1246: -2.0e-4 J, p = 4.0e-5 N s along the facet, 36 pivots, r(z) =
 * 5e-20; check_fast_hull_energy's PEG 50 m/s seed 14, touching: 10.41 J -> 2.00 J). Only a
 * set with a member reading psi >= -PUSH_OUT_QUERY is re-primed. The list keeps the new
 * primaries for the rest of the step (reported contacts, warm start, the re-linearisation's
 * working set).
 * Returns the number of sets re-primed.
 */
static int reprime_apart_sets(const pp_world *world, pp_island_work *iw)
{
    pp_constraint_list *l = &iw->list;
    pair_query pair = {-1, -1, 0.0};
    int reprimed = 0;
    for (int j = 0; j < l->set_count; ++j) {
        const int first = l->sets[j].first;
        if (l->sets[j].count < 2 || !(l->contacts[first].psi < -PUSH_OUT_QUERY)) continue;
        const int best = pp_constraint_set_largest_gap(l, j);
        if (!(l->contacts[best].psi >= -PUSH_OUT_QUERY) ||
            !(pair_distance(world, &l->contacts[first], &pair) >= -PUSH_OUT_QUERY))
            continue;
        pp_constraint_list_swap(l, first, best);
        ++reprimed;
    }
    return reprimed;
}

/* The relative compliance of the retry after an answer beyond the energy bound: the largest
 * shift of the LCP's own regularised retries (pegplus/lcp.h PP_LCP_EPS_MAX). */
#define ENERGY_RETRY_COMPLIANCE PP_LCP_EPS_MAX

/*
 * The island's LCP, with the energy acceptance (energy_bounded) on every answer: an answer
 * beyond the bound is a failed solve and goes down the failure path of README "Failures":
 * under PEG at the step's start pose, first the sets between shapes that are apart pushing
 * along a primary that reads an overlap re-primed (reprime_apart_sets) and solved again;
 * then the problem regularised (a compliance of ENERGY_RETRY_COMPLIANCE max_i M_ii on the
 * contacts' rows, lcp_fallback 1), and if that answer is beyond the bound too, no contact
 * impulse this step (lcp_fallback 3): the joint rows are solved alone (their impulses keep
 * the mechanism together) and the contacts' psi/h terms act at the next step.
 */
static pp_status solve_list(pp_world *world, pp_island_work *iw, double h, int k, int peg,
                            int at_start)
{
    int rejected = 0;
    pp_status st = solve_once(world, iw, h, k, peg, at_start, world->config.compliance, 1, &rejected);
    if (!rejected) return st;
    const int reprimed = peg && at_start ? reprime_apart_sets(world, iw) : 0;
    if (reprimed > 0) {
        pp_log(PP_LOG_WARNING, "an island's LCP (%d unknowns) was answered beyond the energy "
                               "bound; solved again with %d sets between shapes that are apart "
                               "re-primed on their member of largest gap (their primary read "
                               "an overlap)", iw->stats.lcp_size, reprimed);
        st = solve_once(world, iw, h, k, peg, at_start, world->config.compliance, 1, &rejected);
        if (!rejected) return st;
    }
    pp_log(PP_LOG_WARNING, "an island's LCP (%d unknowns) was answered beyond the energy bound "
                           "(kinetic energy above nu*'s plus the gap and joint terms' work); "
                           "solved again with compliance %g", iw->stats.lcp_size,
           ENERGY_RETRY_COMPLIANCE);
    fallback_level(iw, 1);
    if (world->config.compliance < ENERGY_RETRY_COMPLIANCE) {
        st = solve_once(world, iw, h, k, peg, at_start, ENERGY_RETRY_COMPLIANCE, 1, &rejected);
        fallback_level(iw, 1); /* the regularised problem's answer */
        if (!rejected) return st;
    }
    pp_log(PP_LOG_WARNING, "an island's LCP was answered beyond the energy bound also when "
                           "regularised: its %d contacts get no impulse this step",
           iw->list.contact_count);
    fallback_level(iw, 3);
    st = solve_once(world, iw, h, k, peg, at_start, world->config.compliance, 0, &rejected);
    fallback_level(iw, 3); /* the joints' answer: the contacts get none */
    for (int c = 0; c < iw->list.contact_count; ++c) {
        iw->normal_impulse[c] = 0.0;
        for (int j = 0; j < 3; ++j) iw->friction_vector[3 * c + j] = 0.0;
    }
    if (rejected) { /* the joints alone beyond the bound too: no impulse at all, nu* */
        for (int l = 0; l < iw->body_count; ++l) {
            memcpy(&iw->velocity[6 * l], iw->mlcp_body[l].v, 3 * sizeof(double));
            memcpy(&iw->velocity[6 * l + 3], iw->mlcp_body[l].w, 3 * sizeof(double));
        }
        for (int r = 0; r < iw->joint_row_count; ++r) iw->joint_impulse[r] = 0.0;
        return PP_ERR_SOLVER;
    }
    return st;
}

/* The gap linearised about a predicted pose q^ instead of q^l (ST96 §3.6, relinearize.c):
 * psi' = psi(q^) - h G(q^)^T nu^ for every contact of the list, built at q^ with the bodies
 * (and so the Jacobians' centres) at q^. nu_hat: 6 per local body. */
void pp_island_shift_gaps(const pp_world *world, pp_island_work *iw, double h,
                          const double *nu_hat)
{
    const int *local = world->scratch.body_local;
    for (int c = 0; c < iw->list.contact_count; ++c) {
        pp_contact *q = &iw->list.contacts[c];
        q->psi -= h * pp_contact_gap_rate(world, q,
                                          q->body_a >= 0 ? &nu_hat[6 * local[q->body_a]] : NULL,
                                          q->body_b >= 0 ? &nu_hat[6 * local[q->body_b]] : NULL);
    }
}

/* The LCP of `model` on the island's list. Under PP_MODEL_PEG a failed PEG LCP is replaced by
 * the standard model's constraints on the island's pairs (*model then says so); when the
 * constraints were built at a predicted pose (nu_hat set: a re-linearisation, the bodies
 * posed at q^), the replacement's gaps are linearised there in the same way. A replacement
 * with no contact is not solved: the island keeps the failed PEG solve's answer, z = 0 with
 * the joint equalities' impulses recovered (peg_mlcp.c, pp_peg_joints_recover), which is the
 * joint rows' own LCP with its inequality rows (limits, motors) at z = 0, and keeps its record
 * (lcp_fallback 3); a declined LCP leaves the other LCP islands of the island PEG's answers
 * and no record. Measured (soak seeds 1-200 under PEG, 300 steps): 1 056 island steps took
 * this path, all one body with 6 or 9 joint rows and no contact in PEG's list either, whose
 * LCP of 1 unknown (a joint stop at velocities of ~1e-322) was refused on the subnormal grid
 * (lcp_internal.h pp_lcp_measure_row; since then none): the standard model's joint rows are
 * that same LCP (docs/performance.md, "Review of s15-report"). */
pp_status pp_island_solve(pp_world *world, pp_island_work *iw, double h, int *model,
                          const double *nu_hat)
{
    int k = world->config.friction_directions;
    const int at_start = nu_hat == NULL;
    iw->answer = (pp_answer){0, 0, 0, 0.0}; /* no LCP solved (a declined PEG LCP is not) */
    if (*model != PP_MODEL_PEG) return solve_list(world, iw, h, k, 0, at_start);
    iw->declined = 0;
    pp_status st = solve_list(world, iw, h, k, 1, at_start);
    if (st != PP_ERR_SOLVER) return st;
    int peg_size = iw->stats.lcp_size, peg_status = iw->answer.status;
    const int declined = iw->declined;
    const int peg_unknowns = declined ? pp_island_lcp_unknowns(iw, k) : 0;
    iw->declined = 0;
    iw->stats.peg_fallback++;
    *model = PP_MODEL_STANDARD;
    iw->list.contact_count = iw->list.set_count = 0;
    st = pp_build_constraints(world, iw, iw->pairs, iw->pair_count, PP_MODEL_STANDARD, &iw->list,
                              NULL);
    if (st != PP_OK) return st;
    if (nu_hat) pp_island_shift_gaps(world, iw, h, nu_hat);
    if (declined)
        pp_log(PP_LOG_WARNING, "the PEG LCP of a moving island (%d unknowns, I/X sets, no warm "
                               "start) was declined as an impact's; this island used the "
                               "standard model's %d contacts instead",
               peg_unknowns, iw->list.contact_count);
    else
        pp_log(PP_LOG_WARNING, "the PEG LCP (%d unknowns) was not solved (status %d); this "
                               "island used the standard model's %d contacts instead",
               peg_size, peg_status, iw->list.contact_count);
    return iw->list.contact_count ? solve_list(world, iw, h, k, 0, at_start) : PP_OK;
}

pp_status pp_record_contact_info(const pp_world *world, const pp_island_work *iw,
                                 pp_contact_info **info, int *count, int *capacity)
{
    const pp_step_scratch *s = &world->scratch;
    const pp_constraint_list *l = &iw->list;
    int first = *count, n = l->contact_count;
    pp_status st = pp_grow((void **)info, capacity, first + n > 0 ? first + n : 1,
                           sizeof(pp_contact_info));
    if (st != PP_OK) return st;
    int solved = iw->stats.solves > 0;
    for (int c = 0; c < n; ++c) {
        const pp_contact *k = &l->contacts[c];
        pp_contact_info *out = &(*info)[first + c];
        out->g1 = s->shape_geom[k->shape_a];
        out->g2 = s->shape_geom[k->shape_b];
        memcpy(out->position, k->p_a, sizeof out->position);
        memcpy(out->normal, k->n, sizeof out->normal);
        out->gap = k->psi;
        out->normal_impulse = solved ? iw->normal_impulse[c] : 0.0;
        for (int j = 0; j < 3; ++j)
            out->friction_impulse[j] = solved ? iw->friction_vector[3 * c + j] : 0.0;
    }
    *count = first + n;
    return PP_OK;
}

int pp_world_get_contacts(const pp_world *world, const pp_contact_info **out)
{
    if (!world || !out) {
        pp_log(PP_LOG_ERROR, "pp_world_get_contacts: %s is NULL", !world ? "world" : "out");
        if (out) *out = NULL;
        return 0;
    }
    *out = world->scratch.info;
    return world->scratch.info_count;
}
