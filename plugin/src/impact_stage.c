/*
 * Stage 6 of a pegplus step: impacts resolved by PLUS (Uchida, Sherman, Delp 2015), and the
 * time of the next impact, at which the step is split.
 *
 * Why split. The Stewart–Trinkle step is inelastic: a contact closing during the step ends it
 * touching, and its approach speed is gone (ST96 §3). To bounce with the right speed, the step
 * runs in sub-steps: it first advances to the moment t_c the contact touches (no impulse: the
 * gap closes exactly, psi + t_c (v_n + t_c a_n) = 0 under the semi-implicit Euler update),
 * then PLUS turns the approach velocities of the touching contacts of that island into
 * post-impact velocities (Poisson restitution, friction, load spreading: impact/), and the
 * rest of the step runs from there with the time stepper, which keeps persistent contacts and
 * the end-of-step gap >= 0. A step with no bouncing contact is one sub-step, as before.
 *
 * Surface mapping (DESIGN.md conventions): bounce -> PLUS e_min, bounce_vel -> v_capture, and
 * plus_v_plastic -> v_plastic (default: v_capture, so the coefficient of restitution is 0
 * below bounce_vel and bounce above it: ODE's dContactBounce semantics). A contact with bounce = 0 never triggers PLUS (the
 * time stepper's inelastic impact is the same answer).
 *
 * Under PP_MODEL_PEG only the primary contact of each U/I/X set is a point where an impulse
 * can act (PEG Eq 41); the secondaries only shape the set's gap max_s psi_s, so they take no
 * part in an impact (scratch.primary).
 */
#include "world_internal.h"

#include "pegplus/impact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A contact is proximal (takes part in an impact) when its gap is below this, m. */
#define PP_PROXIMAL_GAP 1e-6
/* Approach speeds below this never trigger an impact, m/s (round-off of resting contacts). */
#define PP_IMPACT_MIN_SPEED 1e-6

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static const double *body_x(const pp_world *world, int b)
{
    return b >= 0 ? world->bodies[b].x : NULL;
}

double pp_contact_gap_rate(const pp_world *world, const pp_contact *c, const double *nu_a,
                           const double *nu_b)
{
    double ga[6], gb[6];
    pp_mlcp_contact_jacobian(c, body_x(world, c->body_a), body_x(world, c->body_b), c->n, ga, gb);
    double rate = 0.0;
    if (c->body_a >= 0 && nu_a) rate += dot3(ga, nu_a) + dot3(ga + 3, nu_a + 3);
    if (c->body_b >= 0 && nu_b) rate += dot3(gb, nu_b) + dot3(gb + 3, nu_b + 3);
    return rate;
}

/* Body b's twist (v, w), or with `accel` its acceleration under the external forces and
 * gravity g, into nu (6). */
static const double *body_twist(const pp_world *world, int b, int accel, const double g[3],
                                double nu[6])
{
    if (b < 0) return NULL;
    const pp_body *pb = &world->bodies[b];
    if (!accel) {
        memcpy(nu, pb->v, 3 * sizeof(double));
        memcpy(nu + 3, pb->w, 3 * sizeof(double));
        return nu;
    }
    for (int k = 0; k < 3; ++k)
        nu[k] = pb->inv_mass * pb->force[k] + (pb->gravity && pb->inv_mass > 0 ? g[k] : 0.0);
    for (int r = 0; r < 3; ++r) nu[3 + r] = dot3(&pb->inv_inertia_world[3 * r], pb->torque);
    return nu;
}

/* Gap rate of contact c at the bodies' own velocities, or (accel) its rate of change under
 * the external accelerations. */
static double gap_rate(const pp_world *world, const pp_contact *c, int accel, const double g[3])
{
    double nu_a[6], nu_b[6];
    return pp_contact_gap_rate(world, c, body_twist(world, c->body_a, accel, g, nu_a),
                               body_twist(world, c->body_b, accel, g, nu_b));
}

static int island_root(int *parent, int i)
{
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

static double trigger_speed(const pp_step_scratch *s, int c)
{
    double v_capture = s->all.restitution[3 * c + 1];
    return v_capture > PP_IMPACT_MIN_SPEED ? v_capture : PP_IMPACT_MIN_SPEED;
}

/* PLUS's solver and arrays for m contacts on nb (local) bodies; the index arrays for the
 * whole contact list and body list. */
static pp_status ensure_plus(pp_world *world, int m, int nb)
{
    pp_step_scratch *s = &world->scratch;
    int nc = s->all.contact_count, nw = world->body_count;
    if (!s->plus || m > s->plus_capacity) {
        pp_plus_solver_destroy(s->plus);
        s->plus = NULL;
        int cap = m > 2 * s->plus_capacity ? m : 2 * s->plus_capacity;
        pp_status st = pp_plus_solver_create(cap, &s->plus);
        if (st != PP_OK) return st;
        s->plus_capacity = cap;
    }
    size_t need = 9 * (size_t)m * (size_t)m + 9 * (size_t)m + 6 * (size_t)nb +
                  (size_t)nb * (sizeof(pp_plus_body) / sizeof(double) + 1) +
                  (size_t)m * (sizeof(pp_plus_contact_jacobian) / sizeof(double) + 1) +
                  (size_t)m * (sizeof(pp_plus_contact_params) / sizeof(double) + 1);
    if (need > s->plus_work_capacity) {
        double *w = realloc(s->plus_work, need * sizeof(double));
        if (!w) {
            pp_log(PP_LOG_ERROR, "impact stage: out of memory");
            return PP_ERR_NO_MEMORY;
        }
        s->plus_work = w;
        s->plus_work_capacity = need;
    }
    int idx = nc + nw + 1;
    if (idx > s->plus_index_capacity) {
        int *a = realloc(s->plus_contact, sizeof(int) * (size_t)idx);
        if (a) s->plus_contact = a;
        int *b = realloc(s->plus_island, sizeof(int) * (size_t)idx);
        if (b) s->plus_island = b;
        int *c = realloc(s->plus_body, sizeof(int) * (size_t)idx);
        if (c) s->plus_body = c;
        int *d = realloc(s->plus_first, sizeof(int) * (size_t)idx);
        if (d) s->plus_first = d;
        if (!a || !b || !c || !d) {
            pp_log(PP_LOG_ERROR, "impact stage: out of memory");
            return PP_ERR_NO_MEMORY;
        }
        s->plus_index_capacity = idx;
    }
    return PP_OK;
}

/* One island's impact: the proximal contacts listed in idx[0..m), PLUS, velocity jump. Its
 * bodies are numbered locally (scratch.body_local, body[] back to the world's), so the work is
 * the island's, whatever the size of the world. */
static pp_status resolve_island(pp_world *world, const int *idx, int m)
{
    pp_step_scratch *s = &world->scratch;
    int nb = 0, *body = s->plus_body, *local = s->body_local;
    for (int i = 0; i < m; ++i) {
        const pp_contact *c = &s->all.contacts[idx[i]];
        int ends[2] = {c->body_a, c->body_b};
        for (int e = 0; e < 2; ++e) {
            int b = ends[e];
            if (b < 0 || (local[b] >= 0 && local[b] < nb && body[local[b]] == b)) continue;
            local[b] = nb;
            body[nb++] = b;
        }
    }
    pp_status st = ensure_plus(world, m, nb);
    if (st != PP_OK) return st;
    body = s->plus_body;
    double *A = s->plus_work, *v = A + 9 * (size_t)m * m, *pi = v + 3 * m, *dv = pi + 3 * m;
    double *dnu = dv + 3 * m;
    pp_plus_body *bodies = (pp_plus_body *)(dnu + 6 * nb);
    pp_plus_contact_jacobian *jac = (pp_plus_contact_jacobian *)((double *)bodies +
        (size_t)nb * (sizeof(pp_plus_body) / sizeof(double) + 1));
    pp_plus_contact_params *params = (pp_plus_contact_params *)((double *)jac +
        (size_t)m * (sizeof(pp_plus_contact_jacobian) / sizeof(double) + 1));
    double *nu = dnu; /* body velocities in, then reused for the change */

    for (int l = 0; l < nb; ++l) {
        const pp_body *pb = &world->bodies[body[l]];
        bodies[l].inverse_mass = pb->inv_mass;
        memcpy(bodies[l].inverse_inertia, pb->inv_inertia_world, sizeof bodies[l].inverse_inertia);
        memcpy(&nu[6 * l], pb->v, 3 * sizeof(double));
        memcpy(&nu[6 * l + 3], pb->w, 3 * sizeof(double));
    }
    for (int i = 0; i < m; ++i) {
        const pp_contact *c = &s->all.contacts[idx[i]];
        double frame[9], d[12], point[3];
        pp_mlcp_friction_directions(c->n, 4, d); /* d_0 = t1, d_1 = t2 = n x t1 */
        memcpy(frame, d, 3 * sizeof(double));
        memcpy(frame + 3, d + 3, 3 * sizeof(double));
        memcpy(frame + 6, c->n, 3 * sizeof(double));
        for (int k = 0; k < 3; ++k) point[k] = c->p_a[k] + 0.5 * c->psi * c->n[k];
        int a = c->body_a >= 0 ? local[c->body_a] : -1, b = c->body_b >= 0 ? local[c->body_b] : -1;
        st = pp_plus_point_contact_jacobian(a, body_x(world, c->body_a), b,
                                            body_x(world, c->body_b), point, frame, &jac[i]);
        if (st != PP_OK) return st;
        params[i].mu = c->mu;
        params[i].e_min = s->all.restitution[3 * idx[i]];
        params[i].v_capture = s->all.restitution[3 * idx[i] + 1];
        params[i].v_plastic = s->all.restitution[3 * idx[i] + 2];
    }
    st = pp_plus_contact_velocity(nb, nu, m, jac, v);
    if (st == PP_OK) st = pp_plus_delassus(nb, bodies, m, jac, A);
    if (st != PP_OK) return st;

    pp_plus_problem problem = {m, A, v, params};
    pp_plus_result result;
    memset(&result, 0, sizeof result);
    result.impulse = pi;
    result.velocity_change = dv;
    st = pp_plus_solve(s->plus, NULL, &problem, &result);
    if (st == PP_ERR_SOLVER || st == PP_ERR_NUMERICAL) {
        /* Documented: the impulse applied up to the cap (finite) is kept; the time stepper
         * then stops whatever still approaches, inelastically. */
        pp_log(PP_LOG_WARNING, "impact of %d contacts: PLUS stopped early (%s, caps 0x%x); the "
                               "impulse so far is applied", m, pp_status_string(st), result.caps);
    } else if (st != PP_OK) {
        return st;
    }
    st = pp_plus_body_velocity_change(nb, bodies, m, jac, pi, dnu);
    if (st != PP_OK) return st;
    for (int l = 0; l < nb; ++l) {
        pp_body *pb = &world->bodies[body[l]];
        if (pb->inv_mass == 0.0) continue;
        for (int k = 0; k < 3; ++k) {
            pb->v[k] += dnu[6 * l + k];
            pb->w[k] += dnu[6 * l + 3 + k];
        }
    }
    s->impacts++;
    return PP_OK;
}

/*
 * Proximal contacts (psi <= 1e-6 m) approaching faster than their capture speed, with a
 * nonzero restitution, start an impact: the proximal contacts of their island (bodies joined
 * by proximal contacts; static geometry joins nothing) go to PLUS together.
 */
pp_status pp_stage_impact(pp_world *world)
{
    pp_step_scratch *s = &world->scratch;
    int nb = world->body_count, nc = s->all.contact_count;
    if (nc == 0) return PP_OK;
    int any = 0;
    for (int c = 0; c < nc && !any; ++c)
        any = s->all.primary[c] && s->all.contacts[c].psi <= PP_PROXIMAL_GAP && s->all.restitution[3 * c] > 0.0 &&
              gap_rate(world, &s->all.contacts[c], 0, NULL) < -trigger_speed(s, c);
    if (!any) return PP_OK;
    pp_status st = ensure_plus(world, 1, 1);
    if (st != PP_OK) return st;

    /* Islands of proximal primaries (union-find over bodies), then their contacts bucketed by
     * root (CSR: first[root], list) so that gathering an island costs its own size. */
    int *parent = s->plus_island, *list = s->plus_contact, *first = s->plus_first;
    for (int b = 0; b < nb; ++b) parent[b] = b;
    for (int c = 0; c < nc; ++c) {
        const pp_contact *k = &s->all.contacts[c];
        if (!s->all.primary[c] || k->psi > PP_PROXIMAL_GAP || k->body_a < 0 || k->body_b < 0) continue;
        parent[island_root(parent, k->body_a)] = island_root(parent, k->body_b);
    }
    for (int b = 0; b <= nb; ++b) first[b] = 0;
    for (int c = 0; c < nc; ++c) {
        const pp_contact *q = &s->all.contacts[c];
        int b = q->body_a >= 0 ? q->body_a : q->body_b;
        if (s->all.primary[c] && q->psi <= PP_PROXIMAL_GAP && b >= 0)
            first[island_root(parent, b) + 1]++;
    }
    for (int b = 0; b < nb; ++b) first[b + 1] += first[b];
    int *fill = s->plus_body; /* free until resolve_island */
    for (int b = 0; b < nb; ++b) fill[b] = first[b];
    for (int c = 0; c < nc; ++c) {
        const pp_contact *q = &s->all.contacts[c];
        int b = q->body_a >= 0 ? q->body_a : q->body_b;
        if (s->all.primary[c] && q->psi <= PP_PROXIMAL_GAP && b >= 0)
            list[fill[island_root(parent, b)]++] = c;
    }
    for (int b = 0; b < nb; ++b) s->body_local[b] = -1;
    /* Islands with an impact, one at a time; velocities are read fresh for each (islands
     * share no body, so the order does not matter). */
    for (int c = 0; c < nc; ++c) {
        const pp_contact *k = &s->all.contacts[c];
        if (!s->all.primary[c] || k->psi > PP_PROXIMAL_GAP || s->all.restitution[3 * c] <= 0.0 ||
            gap_rate(world, k, 0, NULL) >= -trigger_speed(s, c))
            continue;
        int root = island_root(s->plus_island, k->body_a >= 0 ? k->body_a : k->body_b);
        int from = s->plus_first[root], m = s->plus_first[root + 1] - from;
        st = resolve_island(world, &s->plus_contact[from], m);
        if (st != PP_OK) return st;
    }
    return PP_OK;
}

/*
 * The time (0, remaining] at which the first bouncing contact closes: the smallest root of
 * psi + t (v_n + t a_n) = 0 (the semi-implicit Euler gap, a_n the gap acceleration from gravity
 * and the user's force/torque) among contacts with restitution that would arrive faster than
 * their capture speed. `remaining` when there is none.
 */
double pp_time_to_impact(const pp_world *world, double remaining)
{
    const pp_step_scratch *s = &world->scratch;
    dVector3 gv;
    dWorldGetGravity(world->ode_world, gv);
    double g[3] = {gv[0], gv[1], gv[2]};
    double t_first = remaining;
    for (int c = 0; c < s->all.contact_count; ++c) {
        const pp_contact *k = &s->all.contacts[c];
        if (!s->all.primary[c] || k->psi <= PP_PROXIMAL_GAP || s->all.restitution[3 * c] <= 0.0)
            continue;
        double v = gap_rate(world, k, 0, NULL), a = gap_rate(world, k, 1, g), psi = k->psi;
        double t;
        if (fabs(a) * remaining < 1e-12 * fabs(v)) {
            if (v >= 0.0) continue;
            t = -psi / v;
        } else {
            double disc = v * v - 4.0 * a * psi;
            if (disc < 0.0) continue;
            /* smallest positive root of a t^2 + v t + psi = 0, written without cancellation */
            double q = -0.5 * (v + copysign(sqrt(disc), v));
            double r1 = q / a, r2 = q != 0.0 ? psi / q : HUGE_VAL;
            t = HUGE_VAL;
            if (r1 > 0.0) t = r1;
            if (r2 > 0.0 && r2 < t) t = r2;
        }
        if (!(t > 0.0) || t >= t_first) continue;
        if (-(v + a * t) < trigger_speed(s, c))
            continue; /* arrives too slowly to bounce: the time stepper captures it */
        t_first = t;
    }
    return t_first;
}
