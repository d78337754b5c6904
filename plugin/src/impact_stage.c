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
 * Surface mapping (docs/drop-in.md): bounce -> PLUS e_min, bounce_vel -> v_capture, and
 * plus_v_plastic -> v_plastic (default: v_capture, so the coefficient of restitution is 0
 * below bounce_vel and bounce above it: ODE's dContactBounce semantics). A contact with bounce = 0 never triggers PLUS (the
 * time stepper's inelastic impact is the same answer).
 *
 * Under PP_MODEL_PEG only the primary contact of each U/I/X set is a point where an impulse
 * can act (PEG Eq 41); the secondaries only shape the set's gap max_s psi_s, so they take no
 * part in an impact (scratch.primary).
 *
 * Joints. Bodies joined by ODE joints take an impact as one mechanism: impact islands are
 * formed through joints as well as proximal contacts, and PLUS sees the joint-space Delassus
 * operator A = G W_c G^T, W_c = W - W J_E^T (J_E W J_E^T)^-1 J_E W, and applies
 * du = W_c G^T pi, so J_E du = 0 (pegplus/impact.h "Joint space"; the paper's eq. 2.1a-b).
 * Which rows are J_E, and how:
 *  - a joint's equality rows (lo = -inf, hi = +inf: ball, hinge, slider, ... rows) hold
 *    through the impact, rigidly: the rows' cfm / h of the time stepper is the compliance of
 *    a force held over a step, and an impact has no duration; only the rigid limit keeps
 *    the joint together whatever the step was split at, and makes its impulse do no work.
 *    A soft equality row (a large cfm used as a spring) is rigid in the impact too.
 *  - limit and motor rows (bounded) are free during the impact. A motor's force is bounded,
 *    so it gives no impulse in no time: free is exact. A limit is a unilateral rigid stop
 *    and would deserve to be a PLUS contact of its own (with the stop's bounce); here it is
 *    left to the time stepper, which stops an impact that drives the joint through its stop
 *    inelastically in the rest of the step.
 *  - the rows were built by ODE at the step's start; an impact happens later in the step, so
 *    they are carried to the bodies' present poses (joint_row_now). At h = 1 ms this moves
 *    the PLUS example-4 pendulum's answer by 2 % (check_impact_joints).
 *  - directions the joints hold: a contact whose normal no impulse can move leaves the
 *    impact; a tangent direction it cannot slip in is made a frame axis with a zero row and
 *    column of A (held_directions).
 * The pre-impact velocity is not projected onto J_E nu = 0 (eq. 2.1b would): the time
 * stepper owns the joints' drift correction (ERP), and the impact leaves it as it was.
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

/* Does contact k take part in impacts: proximal (psi <= PP_PROXIMAL_GAP), and, where its psi
 * is a depth (PP_CONTACT_DEPTH), not deeper than `floor` = -max_correcting_velocity dt? An
 * impact is the moment two bodies meet; a contact that deep has been overlapping for a while
 * (a body left there by another model or by the program, or crushed by a kinematic body) and
 * is recovered by the time stepper at the bounded speed (docs/design.md "Penetration the
 * models did not make"). In PLUS it would be a rigid constraint that cannot hold: soak seed
 * 169, a box crushed between a kinematic sphere and the ground 17 cm deep, had PLUS impacts
 * at every step, costing 5-50 s a step. */
static int proximal(const pp_contact *k, double floor)
{
    return k->psi <= PP_PROXIMAL_GAP && (k->psi >= floor || !(k->surface & PP_CONTACT_DEPTH));
}

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

/* The velocity of contact c's point on B relative to A's, world: the gap rate along each axis
 * (the contact Jacobian of PEG Eq 7 with the axis for n). */
static void relative_velocity(const pp_world *world, const pp_contact *c, double out[3])
{
    double nu_a[6], nu_b[6];
    const double *ta = body_twist(world, c->body_a, 0, NULL, nu_a);
    const double *tb = body_twist(world, c->body_b, 0, NULL, nu_b);
    for (int k = 0; k < 3; ++k) {
        double e[3] = {0.0, 0.0, 0.0}, ga[6], gb[6];
        e[k] = 1.0;
        pp_mlcp_contact_jacobian(c, body_x(world, c->body_a), body_x(world, c->body_b), e, ga, gb);
        out[k] = 0.0;
        if (ta) out[k] += dot3(ga, ta) + dot3(ga + 3, ta + 3);
        if (tb) out[k] += dot3(gb, tb) + dot3(gb + 3, tb + 3);
    }
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

static int is_equality(const pp_joint_row *r)
{
    return r->lo == -INFINITY && r->hi == INFINITY;
}

/* Rows of joint j that hold through an impact (file comment: equalities only). */
static int joint_equalities(const pp_world *world, const pp_joint *j)
{
    int n = 0;
    for (int r = j->row_first; r < j->row_first + j->row_count; ++r)
        n += is_equality(&world->joint_rows[r]);
    return n;
}

/* The solver, and the index arrays over the whole contact, body and joint lists. */
static pp_status ensure_indices(pp_world *world)
{
    pp_step_scratch *s = &world->scratch;
    pp_status st = PP_OK;
    if (!s->plus) {
        st = pp_plus_solver_create(16, &s->plus);
        if (st != PP_OK) return st;
        s->plus_capacity = 16;
    }
    if (!s->plus_joint_space) st = pp_plus_joint_space_create(&s->plus_joint_space);
    if (st != PP_OK) return st;
    const int idx = s->all.contact_count + world->body_count + 1;
    void **const index[] = {(void **)&s->plus_contact, (void **)&s->plus_island,
                            (void **)&s->plus_body, (void **)&s->plus_first};
    const size_t sizes[] = {sizeof(int), sizeof(int), sizeof(int), sizeof(int)};
    st = pp_grow_together(index, sizes, 4, &s->plus_index_capacity, idx);
    if (st == PP_OK)
        st = pp_grow((void **)&s->plus_joint, &s->plus_joint_capacity, world->joint_count + 1,
                     sizeof(int));
    if (st == PP_OK)
        st = pp_grow((void **)&s->plus_joint_first, &s->plus_joint_first_capacity,
                     world->body_count + 1, sizeof(int));
    return st;
}

/* Arrays of one impact island: m contacts, nb bodies, ne joint equalities. */
static pp_status ensure_island(pp_world *world, int m, int nb, int ne)
{
    pp_step_scratch *s = &world->scratch;
    if (m > s->plus_capacity) {
        pp_plus_solver_destroy(s->plus);
        s->plus = NULL;
        int cap = m > 2 * s->plus_capacity ? m : 2 * s->plus_capacity;
        pp_status st = pp_plus_solver_create(cap, &s->plus);
        if (st != PP_OK) return st;
        s->plus_capacity = cap;
    }
    size_t need = 9 * (size_t)m * (size_t)m;
    if (need > s->plus_work_capacity) {
        double *w = realloc(s->plus_work, need * sizeof(double));
        if (!w) {
            pp_log(PP_LOG_ERROR, "impact stage: out of memory");
            return PP_ERR_NO_MEMORY;
        }
        s->plus_work = w;
        s->plus_work_capacity = need;
    }
    /* per contact, and per component (3 per contact) in the same capacity */
    void **const contact[] = {(void **)&s->plus_jac, (void **)&s->plus_params,
                              (void **)&s->plus_frame, (void **)&s->plus_source,
                              (void **)&s->plus_held, (void **)&s->plus_v, (void **)&s->plus_pi,
                              (void **)&s->plus_dv};
    const size_t csizes[] = {sizeof(pp_plus_contact_jacobian), sizeof(pp_plus_contact_params),
                             9 * sizeof(double), sizeof(int), 1, 3 * sizeof(double),
                             3 * sizeof(double), 3 * sizeof(double)};
    pp_status st = pp_grow_together(contact, csizes, 8, &s->plus_contact_capacity, m);
    void **const body[] = {(void **)&s->plus_bodies, (void **)&s->plus_nu, (void **)&s->plus_dnu};
    const size_t bsizes[] = {sizeof(pp_plus_body), 6 * sizeof(double), 6 * sizeof(double)};
    if (st == PP_OK) st = pp_grow_together(body, bsizes, 3, &s->plus_body_capacity, nb);
    if (st == PP_OK)
        st = pp_grow((void **)&s->plus_rows, &s->plus_row_capacity, ne + 1,
                     sizeof(pp_plus_bilateral_row));
    return st;
}

static void cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* y = R x for a row-major 3x3 R. */
static void mat3_apply(const double R[9], const double x[3], double y[3])
{
    for (int r = 0; r < 3; ++r) y[r] = R[3 * r] * x[0] + R[3 * r + 1] * x[1] + R[3 * r + 2] * x[2];
}

/*
 * Row r of joint j at the bodies' present poses. ODE builds a joint's rows once, at the
 * step's start (getInfo2 may not be called twice in a step), and an impact happens later in
 * the step, when the bodies have turned. A row J = (l_a, m_a | l_b, m_b) is a pair of
 * wrenches (force l, moment m about each body's centre); it is carried rigidly with the
 * joint's first body a (whose frame holds the joint's axes in ODE): each side's wrench is
 * moved to a's centre (m + (x - x_a) x l), turned by a's rotation since the start,
 * dR = R_a R_a0^T, and moved back to the side's present centre:
 *     l' = dR l,    m' = dR (m + (x_0 - x_a0) x l) - (x - x_a) x l'.
 * For a's own side this is l' = dR l, m' = dR m. A ball row (e, r_a x e | -e, -r_b x e)
 * becomes the ball row at the anchor carried by a, and an angular row (0, u | 0, -u) turns
 * with a; so the rows are those of the joint at the impact pose (exactly while the joint is
 * assembled: the anchor carried by a is then b's anchor too). Without a body a (the world)
 * dR = I and x_a = 0.
 */
static void joint_row_now(const pp_world *world, const pp_joint *j, const pp_joint_row *row,
                          pp_plus_bilateral_row *out)
{
    double dR[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, xa0[3] = {0, 0, 0}, xa[3] = {0, 0, 0};
    if (j->body_a >= 0) {
        const pp_body *a = &world->bodies[j->body_a];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                dR[3 * r + c] = a->R[3 * r] * j->R_start[3 * c] +
                                a->R[3 * r + 1] * j->R_start[3 * c + 1] +
                                a->R[3 * r + 2] * j->R_start[3 * c + 2];
        memcpy(xa0, j->x_start[0], sizeof xa0);
        memcpy(xa, a->x, sizeof xa);
    }
    const int ends[2] = {j->body_a, j->body_b};
    for (int side = 0; side < 2; ++side) {
        double *o = out->row[side];
        if (ends[side] < 0) {
            memset(o, 0, 6 * sizeof *o);
            continue;
        }
        const double *l = row->J + 6 * side, *m = row->J + 6 * side + 3;
        const double *x0 = j->x_start[side], *x = world->bodies[ends[side]].x;
        double arm0[3] = {x0[0] - xa0[0], x0[1] - xa0[1], x0[2] - xa0[2]};
        double arm[3] = {x[0] - xa[0], x[1] - xa[1], x[2] - xa[2]};
        double mm[3], t[3];
        cross3(arm0, l, mm);
        for (int k = 0; k < 3; ++k) mm[k] += m[k];
        mat3_apply(dR, l, o);
        mat3_apply(dR, mm, o + 3);
        cross3(arm, o, t);
        for (int k = 0; k < 3; ++k) o[3 + k] -= t[k];
    }
}

/* W = R I_body^-1 R^T at the body's present pose (the cached world inverse inertia is that
 * of the sub-step's start, before the last integration). */
static void present_inverse_inertia(const pp_body *b, double out[9])
{
    double t[9]; /* I^-1 R^T */
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            t[3 * r + c] = b->inv_inertia_body[3 * r] * b->R[3 * c] +
                           b->inv_inertia_body[3 * r + 1] * b->R[3 * c + 1] +
                           b->inv_inertia_body[3 * r + 2] * b->R[3 * c + 2];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            out[3 * r + c] = b->R[3 * r] * t[c] + b->R[3 * r + 1] * t[3 + c] +
                             b->R[3 * r + 2] * t[6 + c];
}

static double body_kinetic_energy(const pp_body *b)
{
    double wb[3]; /* R^T w */
    for (int r = 0; r < 3; ++r)
        wb[r] = b->R[r] * b->w[0] + b->R[3 + r] * b->w[1] + b->R[6 + r] * b->w[2];
    double rot = 0.0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) rot += wb[r] * b->inertia_body[3 * r + c] * wb[c];
    return 0.5 * (b->mass * dot3(b->v, b->v) + rot);
}

/* The bodies' kinetic energy change for the velocity jump dnu (6 per local body) as the two
 * terms of dKE(s) = s lin + 1/2 s^2 quad along s dnu: lin = nu^T M dnu, quad = dnu^T M dnu
 * (M with the world inertia R I R^T at the present pose). Returns 0 when a body of the island
 * with no inverse mass moves (a kinematic body: it may give energy, and its own is not
 * counted), 1 otherwise. */
static int energy_terms(const pp_world *world, int nb, const double *dnu, double *lin,
                        double *quad)
{
    const pp_step_scratch *s = &world->scratch;
    *lin = *quad = 0.0;
    for (int l = 0; l < nb; ++l) {
        const pp_body *b = &world->bodies[s->plus_body[l]];
        if (b->inv_mass == 0.0) {
            if (dot3(b->v, b->v) + dot3(b->w, b->w) > 0.0) return 0;
            continue;
        }
        const double *dv = &dnu[6 * l], *dw = &dnu[6 * l + 3];
        double wb[3], dwb[3]; /* R^T w, R^T dw: body frame */
        for (int r = 0; r < 3; ++r) {
            wb[r] = b->R[r] * b->w[0] + b->R[3 + r] * b->w[1] + b->R[6 + r] * b->w[2];
            dwb[r] = b->R[r] * dw[0] + b->R[3 + r] * dw[1] + b->R[6 + r] * dw[2];
        }
        double iw[3], idw[3];
        mat3_apply(b->inertia_body, wb, iw);
        mat3_apply(b->inertia_body, dwb, idw);
        *lin += b->mass * dot3(b->v, dv) + dot3(iw, dwb);
        *quad += b->mass * dot3(dv, dv) + dot3(idw, dwb);
    }
    return 1;
}

/* Jacobians of the island's contacts (scratch.plus_source) in their frames (plus_frame). */
static pp_status contact_jacobians(pp_world *world, int m)
{
    pp_step_scratch *s = &world->scratch;
    const int *local = s->body_local;
    for (int i = 0; i < m; ++i) {
        const pp_contact *c = &s->all.contacts[s->plus_source[i]];
        double point[3];
        for (int k = 0; k < 3; ++k) point[k] = c->p_a[k] + 0.5 * c->psi * c->n[k];
        int a = c->body_a >= 0 ? local[c->body_a] : -1, b = c->body_b >= 0 ? local[c->body_b] : -1;
        pp_status st = pp_plus_point_contact_jacobian(a, body_x(world, c->body_a), b,
                                                      body_x(world, c->body_b), point,
                                                      &s->plus_frame[9 * i], &s->plus_jac[i]);
        if (st != PP_OK) return st;
    }
    return PP_OK;
}

/* A contact direction whose joint-space mobility (diagonal of A) is below this fraction of
 * the free bodies' is held by the joints: what is left is round-off, and is zeroed. */
#define PP_IMPACT_HELD 1e-10

/*
 * Where the joints hold a contact (only with joints). A contact whose normal the joints hold
 * cannot be impacted (no normal impulse moves it; the joints carry it) and leaves the
 * impact. A tangent direction the joints hold (a planar mechanism cannot slip out of its
 * plane) becomes the frame's t2: the tangent frame is turned to the eigenvectors of the
 * contact's 2x2 tangent block of A, so that the held direction is exactly a frame axis,
 * whose row and column of A the caller then sets to zero (pp_plus_solve accepts a zero
 * tangent diagonal). PLUS does not depend on the turn of the tangent frame (isotropic
 * friction). Compacts the kept contacts in place and returns their number; *turned tells
 * whether a frame turned.
 */
static int held_directions(pp_world *world, int nb, int m, const double *A, int *turned)
{
    pp_step_scratch *s = &world->scratch;
    const int n = 3 * m;
    int kept = 0;
    *turned = 0;
    for (int i = 0; i < m; ++i) {
        double F[9]; /* the free bodies' block */
        pp_plus_delassus(nb, s->plus_bodies, 1, &s->plus_jac[i], F);
        const double *Ai = A + (size_t)3 * i * n + 3 * i;
        if (Ai[2 * n + 2] <= PP_IMPACT_HELD * F[8]) continue; /* normal held */
        double *frame = &s->plus_frame[9 * i];
        const double a = Ai[0], b = Ai[1], c = Ai[n + 1], free_t = F[0] + F[4];
        const double mid = 0.5 * (a + c), rad = sqrt(0.25 * (a - c) * (a - c) + b * b);
        unsigned char held = 0;
        if (mid + rad <= PP_IMPACT_HELD * free_t) {
            held = 3;
        } else if (mid - rad <= PP_IMPACT_HELD * free_t) {
            held = 2; /* t1 along the mobile eigenvector, angle th from t1 */
            const double th = 0.5 * atan2(2.0 * b, a - c), ct = cos(th), st = sin(th);
            double t1[3], t2[3];
            for (int k = 0; k < 3; ++k) {
                t1[k] = ct * frame[k] + st * frame[3 + k];
                t2[k] = -st * frame[k] + ct * frame[3 + k];
            }
            memcpy(frame, t1, sizeof t1);
            memcpy(frame + 3, t2, sizeof t2);
            *turned = 1;
        }
        if (kept != i) {
            memcpy(&s->plus_frame[9 * kept], frame, 9 * sizeof(double));
            s->plus_source[kept] = s->plus_source[i];
        }
        s->plus_held[kept++] = held;
    }
    return kept;
}

/* The island's impact contacts into scratch.impact_info (pp_world_get_impacts), in world
 * vectors: impulse sum_c pi_c d_c, velocities sum_c v_c d_c over the frame rows d_c. */
static pp_status record_impact(pp_world *world, int m)
{
    pp_step_scratch *s = &world->scratch;
    pp_status st = pp_grow((void **)&s->impact_info, &s->impact_info_capacity,
                           s->impact_info_count + m, sizeof(pp_impact_info));
    if (st != PP_OK) return st;
    for (int i = 0; i < m; ++i) {
        const pp_contact *c = &s->all.contacts[s->plus_source[i]];
        const double *frame = &s->plus_frame[9 * i];
        pp_impact_info *out = &s->impact_info[s->impact_info_count++];
        out->g1 = s->shape_geom[c->shape_a];
        out->g2 = s->shape_geom[c->shape_b];
        for (int k = 0; k < 3; ++k) {
            out->position[k] = c->p_a[k] + 0.5 * c->psi * c->n[k];
            out->normal[k] = c->n[k];
            out->impulse[k] = out->velocity_before[k] = out->velocity_after[k] = 0.0;
            for (int d = 0; d < 3; ++d) {
                const double *pi = &s->plus_pi[3 * i], *v = &s->plus_v[3 * i], *dv = &s->plus_dv[3 * i];
                out->impulse[k] += pi[d] * frame[3 * d + k];
                out->velocity_before[k] += v[d] * frame[3 * d + k];
                out->velocity_after[k] += (v[d] + dv[d]) * frame[3 * d + k];
            }
        }
        out->impact = s->impacts - 1;
    }
    return PP_OK;
}

/* One island's impact: the proximal contacts listed in idx[0..m) and the joints jidx[0..mj)
 * among the island's bodies; PLUS in joint space; the velocity jump. Its bodies are numbered
 * locally (scratch.body_local, plus_body back to the world's), so the work is the island's,
 * whatever the size of the world. */
static pp_status resolve_island(pp_world *world, const int *idx, int m, const int *jidx, int mj)
{
    pp_step_scratch *s = &world->scratch;
    int nb = 0, ne = 0, *body = s->plus_body, *local = s->body_local;
    for (int i = 0; i < m + mj; ++i) {
        int ends[2];
        if (i < m) {
            const pp_contact *c = &s->all.contacts[idx[i]];
            ends[0] = c->body_a;
            ends[1] = c->body_b;
        } else {
            const pp_joint *j = &world->joints[jidx[i - m]];
            ends[0] = j->body_a;
            ends[1] = j->body_b;
            ne += joint_equalities(world, j);
        }
        for (int e = 0; e < 2; ++e) {
            int b = ends[e];
            if (b < 0 || (local[b] >= 0 && local[b] < nb && body[local[b]] == b)) continue;
            local[b] = nb;
            body[nb++] = b;
        }
    }
    pp_status st = ensure_island(world, m, nb, ne);
    if (st != PP_OK) return st;
    double *A = s->plus_work, *v = s->plus_v, *pi = s->plus_pi, *dv = s->plus_dv;
    pp_plus_body *bodies = s->plus_bodies;
    double *nu = s->plus_nu, *dnu = s->plus_dnu;

    double ke_before = 0.0;
    for (int l = 0; l < nb; ++l) {
        const pp_body *pb = &world->bodies[body[l]];
        bodies[l].inverse_mass = pb->inv_mass;
        if (pb->inv_mass > 0.0) present_inverse_inertia(pb, bodies[l].inverse_inertia);
        else memset(bodies[l].inverse_inertia, 0, sizeof bodies[l].inverse_inertia);
        memcpy(&nu[6 * l], pb->v, 3 * sizeof(double));
        memcpy(&nu[6 * l + 3], pb->w, 3 * sizeof(double));
        if (pb->inv_mass > 0.0) ke_before += body_kinetic_energy(pb);
    }
    /* the joints' equality rows, carried to the present poses, in local body indices */
    pp_plus_bilateral_row *rows = s->plus_rows;
    int e = 0;
    for (int t = 0; t < mj; ++t) {
        const pp_joint *j = &world->joints[jidx[t]];
        for (int r = j->row_first; r < j->row_first + j->row_count; ++r) {
            if (!is_equality(&world->joint_rows[r])) continue;
            joint_row_now(world, j, &world->joint_rows[r], &rows[e]);
            rows[e].body[0] = j->body_a >= 0 ? local[j->body_a] : -1;
            rows[e].body[1] = j->body_b >= 0 ? local[j->body_b] : -1;
            e++;
        }
    }
    for (int i = 0; i < m; ++i) {
        const pp_contact *c = &s->all.contacts[idx[i]];
        double d[12], *frame = &s->plus_frame[9 * i];
        pp_mlcp_friction_directions(c->n, 4, d); /* d_0 = t1, d_1 = t2 = n x t1 */
        memcpy(frame, d, 3 * sizeof(double));
        memcpy(frame + 3, d + 3, 3 * sizeof(double));
        memcpy(frame + 6, c->n, 3 * sizeof(double));
        s->plus_source[i] = idx[i];
        s->plus_held[i] = 0;
    }
    st = contact_jacobians(world, m);
    if (st == PP_OK)
        st = pp_plus_delassus_constrained(s->plus_joint_space, nb, bodies, ne, rows, m,
                                          s->plus_jac, A);
    if (st != PP_OK) return st;
    if (ne > 0) {
        int turned = 0, kept = held_directions(world, nb, m, A, &turned);
        if (kept == 0) return PP_OK; /* the joints hold every contact of the island */
        if (kept != m || turned) {
            m = kept;
            st = contact_jacobians(world, m);
            if (st == PP_OK)
                st = pp_plus_delassus_constrained(s->plus_joint_space, nb, bodies, ne, rows, m,
                                                  s->plus_jac, A);
            if (st != PP_OK) return st;
        }
        const size_t n = 3 * (size_t)m;
        for (int i = 0; i < m; ++i)
            for (int t = 0; t < 2; ++t)
                if (s->plus_held[i] & (1u << t))
                    for (size_t q = 0; q < n; ++q)
                        A[(3 * (size_t)i + t) * n + q] = A[q * n + 3 * (size_t)i + t] = 0.0;
    }
    pp_plus_contact_params *params = s->plus_params;
    for (int i = 0; i < m; ++i) {
        const int c = s->plus_source[i];
        params[i].mu = s->all.contacts[c].mu;
        params[i].e_min = s->all.restitution[3 * c];
        params[i].v_capture = s->all.restitution[3 * c + 1];
        params[i].v_plastic = s->all.restitution[3 * c + 2];
    }
    /* The approach velocities PLUS sees are those of the twists the joints allow (the
     * M-orthogonal projection onto J_E nu = 0, in dnu until the velocity change): the part
     * the projection removes (the time stepper's drift correction, and the rows built at the
     * step's start read at the present pose) is left as it is by du = W_c G^T pi, so PLUS
     * must neither reverse nor stop it. Reading v from the full nu made the joint impulse do
     * work p_E . J_E nu: soak seed 942 (a hinge, +864 J in one impact) and 719. */
    const double *nu_seen = nu;
    if (ne > 0) {
        memcpy(dnu, nu, 6 * (size_t)nb * sizeof(double));
        st = pp_plus_joint_space_project(s->plus_joint_space, nb, bodies, ne, rows, dnu);
        if (st != PP_OK) return st;
        nu_seen = dnu;
    }
    st = pp_plus_contact_velocity(nb, nu_seen, m, s->plus_jac, v);
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
        pp_log(PP_LOG_WARNING, "impact of %d contacts: PLUS stopped early (%s: %s%s%s); the "
                               "impulse so far is applied", m, pp_status_string(st),
               result.caps & PP_PLUS_CAP_ROUNDS ? "round cap " : "",
               result.caps & PP_PLUS_CAP_INTERVALS ? "interval cap " : "",
               result.caps & PP_PLUS_CAP_ACTIVE_SET ? "active-set cap" : "");
    } else if (st != PP_OK) {
        return st;
    }
    /* The invariant: an impact does not raise the island's kinetic energy (seen from its
     * kinematic bodies where they move), pi . v + 1/2 pi^T A pi <= round-off; exact for the
     * bodies with v from the projected twists above. PLUS with e <= 1 keeps it; an answer
     * that does not is scaled back to the most elastic one along it that gains nothing. */
    if (pp_plus_limit_energy(&problem, &result)) {
        world->stats.impact_energy_fallbacks++;
        pp_log(PP_LOG_WARNING, "impact of %d contacts on %d bodies: PLUS's answer would raise "
                               "the kinetic energy; scaled to gain none (impact_energy_fallbacks)",
               m, nb);
    }
    st = pp_plus_body_velocity_change_constrained(s->plus_joint_space, nb, bodies, ne, rows, m,
                                                  s->plus_jac, pi, dnu, NULL);
    if (st != PP_OK) return st;
    /* The same invariant on the bodies themselves (where no kinematic body moves): the chain
     * from pi to du (joint space, rows at the present pose) must not add what PLUS's own
     * energy did not have. Exact when it holds: pi . v + 1/2 pi^T A pi is then the bodies'
     * change; should it not, the jump is scaled the same way, s* = -2 lin / quad. */
    double lin, quad;
    if (energy_terms(world, nb, dnu, &lin, &quad) &&
        lin + 0.5 * quad > PP_PLUS_ENERGY_ROUNDOFF * (fabs(lin) + 0.5 * quad)) {
        const double f = lin < 0.0 && quad > 0.0 ? -2.0 * lin / quad : 0.0;
        for (int q = 0; q < 6 * nb; ++q) dnu[q] *= f;
        for (int q = 0; q < 3 * m; ++q) {
            pi[q] *= f;
            dv[q] *= f;
        }
        world->stats.impact_energy_fallbacks++;
        pp_log(PP_LOG_WARNING, "impact of %d contacts on %d bodies (%d joint rows): the velocity "
                               "jump would raise the bodies' kinetic energy by %.3g J; scaled by "
                               "%.3g to gain none (impact_energy_fallbacks)",
               m, nb, ne, lin + 0.5 * quad, f);
    }
    double ke_after = 0.0;
    for (int l = 0; l < nb; ++l) {
        pp_body *pb = &world->bodies[body[l]];
        if (pb->inv_mass == 0.0) continue;
        for (int k = 0; k < 3; ++k) {
            pb->v[k] += dnu[6 * l + k];
            pb->w[k] += dnu[6 * l + 3 + k];
        }
        ke_after += body_kinetic_energy(pb);
    }
    world->stats.impact_energy_change += ke_after - ke_before;
    s->impacts++;
    return record_impact(world, m);
}

/*
 * Proximal contacts (psi <= 1e-6 m) approaching faster than their capture speed, with a
 * nonzero restitution, start an impact: the proximal contacts of their island go to PLUS
 * together. Impact islands are bodies joined by proximal contacts and by joints (static
 * geometry joins nothing): a mechanism takes an impact as a whole, even where only one of
 * its bodies touches.
 */
pp_status pp_stage_impact(pp_world *world, double dt)
{
    pp_step_scratch *s = &world->scratch;
    const double floor = -world->config.max_correcting_velocity * dt;
    int nb = world->body_count, nc = s->all.contact_count, nj = world->joint_count;
    if (nc == 0) return PP_OK;
    int any = 0;
    for (int c = 0; c < nc && !any; ++c)
        any = s->all.primary[c] && proximal(&s->all.contacts[c], floor) && s->all.restitution[3 * c] > 0.0 &&
              gap_rate(world, &s->all.contacts[c], 0, NULL) < -trigger_speed(s, c);
    if (!any) return PP_OK;
    pp_status st = ensure_indices(world);
    if (st != PP_OK) return st;

    /* Islands of proximal primaries and joints (union-find over bodies), then their contacts
     * and joints bucketed by root (CSR: first[root], list) so that gathering an island costs
     * its own size. */
    int *parent = s->plus_island, *list = s->plus_contact, *first = s->plus_first;
    for (int b = 0; b < nb; ++b) parent[b] = b;
    for (int c = 0; c < nc; ++c) {
        const pp_contact *k = &s->all.contacts[c];
        if (!s->all.primary[c] || !proximal(k, floor) || k->body_a < 0 || k->body_b < 0) continue;
        parent[island_root(parent, k->body_a)] = island_root(parent, k->body_b);
    }
    for (int j = 0; j < nj; ++j) {
        const pp_joint *q = &world->joints[j];
        if (q->body_a < 0 || q->body_b < 0 || !joint_equalities(world, q)) continue;
        parent[island_root(parent, q->body_a)] = island_root(parent, q->body_b);
    }
    for (int b = 0; b <= nb; ++b) first[b] = 0;
    for (int c = 0; c < nc; ++c) {
        const pp_contact *q = &s->all.contacts[c];
        int b = q->body_a >= 0 ? q->body_a : q->body_b;
        if (s->all.primary[c] && proximal(q, floor) && b >= 0)
            first[island_root(parent, b) + 1]++;
    }
    for (int b = 0; b < nb; ++b) first[b + 1] += first[b];
    int *fill = s->plus_body; /* free until resolve_island */
    for (int b = 0; b < nb; ++b) fill[b] = first[b];
    for (int c = 0; c < nc; ++c) {
        const pp_contact *q = &s->all.contacts[c];
        int b = q->body_a >= 0 ? q->body_a : q->body_b;
        if (s->all.primary[c] && proximal(q, floor) && b >= 0)
            list[fill[island_root(parent, b)]++] = c;
    }
    int *jfirst = s->plus_joint_first, *jlist = s->plus_joint;
    for (int b = 0; b <= nb; ++b) jfirst[b] = 0;
    for (int j = 0; j < nj; ++j) {
        const pp_joint *q = &world->joints[j];
        int b = q->body_a >= 0 ? q->body_a : q->body_b;
        if (b >= 0 && joint_equalities(world, q)) jfirst[island_root(parent, b) + 1]++;
    }
    for (int b = 0; b < nb; ++b) jfirst[b + 1] += jfirst[b];
    for (int b = 0; b < nb; ++b) fill[b] = jfirst[b];
    for (int j = 0; j < nj; ++j) {
        const pp_joint *q = &world->joints[j];
        int b = q->body_a >= 0 ? q->body_a : q->body_b;
        if (b >= 0 && joint_equalities(world, q)) jlist[fill[island_root(parent, b)]++] = j;
    }
    for (int b = 0; b < nb; ++b) s->body_local[b] = -1;
    /* Islands with an impact, one at a time; velocities are read fresh for each (islands
     * share no body, so the order does not matter). */
    for (int c = 0; c < nc; ++c) {
        const pp_contact *k = &s->all.contacts[c];
        if (!s->all.primary[c] || !proximal(k, floor) || s->all.restitution[3 * c] <= 0.0 ||
            gap_rate(world, k, 0, NULL) >= -trigger_speed(s, c))
            continue;
        int root = island_root(s->plus_island, k->body_a >= 0 ? k->body_a : k->body_b);
        int from = s->plus_first[root], m = s->plus_first[root + 1] - from;
        int jfrom = s->plus_joint_first[root], mj = s->plus_joint_first[root + 1] - jfrom;
        st = resolve_island(world, &s->plus_contact[from], m, &s->plus_joint[jfrom], mj);
        if (st != PP_OK) return st;
    }
    return PP_OK;
}

/* Half the width of shape `shape` along the unit u: half of u . (s(u) - s(-u)), s its support
 * points (pegplus/geometry.h). HUGE_VAL for a plane, a terrain triangle (the solid is the
 * terrain's, not the triangle's) or no shape. */
static double half_width(const pp_step_scratch *s, int shape, const double u[3])
{
    if (shape < 0 || (s->shape_terrain && s->shape_terrain[shape])) return HUGE_VAL;
    double up[3], down[3], m[3] = {-u[0], -u[1], -u[2]};
    if (!pp_shape_support(&s->shapes[shape], u, 0.0, up) ||
        !pp_shape_support(&s->shapes[shape], m, 0.0, down))
        return HUGE_VAL;
    return 0.5 * (u[0] * (up[0] - down[0]) + u[1] * (up[1] - down[1]) + u[2] * (up[2] - down[2]));
}

static int is_smooth(const pp_step_scratch *s, int shape)
{
    return shape >= 0 && (s->shapes[shape].kind == PP_SHAPE_SPHERE ||
                          s->shapes[shape].kind == PP_SHAPE_CAPSULE);
}

/*
 * A pair with a sphere or a capsule (one closest-point U set): whether the rest of the step's
 * free motion carries it through to apart again, each shape translated by its body's velocity
 * times `remaining` (the spin left out: a sphere's does not move its surface): apart there
 * (pp_shape_distance > 0) and receding there (n . (v_B - v_A) > 0, n from A to B), so past the
 * other shape, not short of it (the distance along a translation is convex in time). Then
 * ψ(q) >= 0 at the sub-step's end is met with no impulse, on the far side, and the
 * re-linearisation can converge to that (docs/design.md "Fast pairs"). Not apart there (the
 * 0.5 m crash ball 1 m a step into 0.5 m bricks ends inside them): the end-of-step constraint
 * has no answer but a collision; apart and still closing (a brick the ball does not reach
 * within the step): nothing to cross. A failed query counts as through (the safe side).
 */
static int free_motion_through(const pp_world *world, const pp_contact *k, double remaining)
{
    const pp_step_scratch *s = &world->scratch;
    pp_shape a = s->shapes[k->shape_a], b = s->shapes[k->shape_b];
    double w[3] = {0.0, 0.0, 0.0}; /* v_B - v_A */
    for (int q = 0; q < 3; ++q) {
        if (k->body_a >= 0) {
            a.position[q] += remaining * world->bodies[k->body_a].v[q];
            w[q] -= world->bodies[k->body_a].v[q];
        }
        if (k->body_b >= 0) {
            b.position[q] += remaining * world->bodies[k->body_b].v[q];
            w[q] += world->bodies[k->body_b].v[q];
        }
    }
    pp_proximity end;
    if (pp_shape_distance(&a, &b, &end) != PP_OK) return 1;
    if (!(end.distance > 0.0 && dot3(end.n, w) > 0.0)) return 0;
    /* past it: through it only if the path overlapped it somewhere (a ball passing under a
     * brick's corner does not). The signed distance along a translation is convex in time:
     * ternary search for its least value, stopped at the first overlap. */
    const pp_shape a0 = s->shapes[k->shape_a], b0 = s->shapes[k->shape_b];
    double lo = 0.0, hi = remaining;
    for (int it = 0; it < 40; ++it) {
        const double t[2] = {lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0};
        double f[2];
        for (int j = 0; j < 2; ++j) {
            b = b0;
            for (int q = 0; q < 3; ++q) b.position[q] += t[j] * w[q]; /* relative to A */
            pp_proximity at;
            if (pp_shape_distance(&a0, &b, &at) != PP_OK) return 1;
            if (at.distance <= 0.0) return 1;
            f[j] = at.distance;
        }
        if (f[0] < f[1]) hi = t[1];
        else lo = t[0];
    }
    return 0;
}

/*
 * A pair with a sphere or a capsule whose free motion does not pass through: the largest angle
 * either body would turn over the rest of the step (`remaining`) under the impulse p that meets
 * the set's end-of-step gap linearised at the start, psi + remaining (psi_dot + k p) = 0 (ST96
 * Eq 29 for one contact), k = sum_i (1/m_i + (r_i x n)^T W_i (r_i x n)) the pair's inverse
 * effective mass along n at member `k` (W_i the world inverse inertia, r_i the lever): the
 * angle |W_i (r_i x n)| p remaining. 0 when the pair is not closing faster than its gap allows.
 * The LCP takes that rotation to first order: the contact point moves theta |r| along its
 * tangent where the body really moves it |r| sin(theta), and past a half turn the two have
 * opposite signs: the point the constraint holds back has come round to the far side. A 2 cm
 * hull or box struck at a corner against an 8 cm sphere at 25-50 m/s, h = 0.01, read 3.2-6 rad
 * and crossed the sphere in one sub-step (docs/design.md "Fast pairs"). The crash demo's bricks
 * read at most 1.4 rad, check_peg_decline's small crash 2.1 rad: not split (a quarter turn
 * split the small crash at each brick's touch, as in "Fast pairs with a sphere").
 */
static double impulse_turn(const pp_world *world, const pp_contact *k, double psi_dot,
                           double remaining)
{
    double ga[6], gb[6], turn[2][3] = {{0.0}}, inv_k = 0.0;
    pp_mlcp_contact_jacobian(k, body_x(world, k->body_a), body_x(world, k->body_b), k->n, ga, gb);
    const double *g[2] = {ga, gb};
    const int body[2] = {k->body_a, k->body_b};
    for (int i = 0; i < 2; ++i) {
        if (body[i] < 0 || !(world->bodies[body[i]].inv_mass > 0.0)) continue;
        const pp_body *b = &world->bodies[body[i]];
        double W[9];
        present_inverse_inertia(b, W);
        for (int r = 0; r < 3; ++r) turn[i][r] = dot3(&W[3 * r], g[i] + 3); /* W (r x n) */
        inv_k += b->inv_mass * dot3(g[i], g[i]) + dot3(g[i] + 3, turn[i]);
    }
    const double dv = -(psi_dot + k->psi / remaining); /* the gap rate the step must remove */
    if (!(dv > 0.0) || !(inv_k > 0.0)) return 0.0;
    const double p = dv / inv_k;
    return p * remaining * fmax(sqrt(dot3(turn[0], turn[0])), sqrt(dot3(turn[1], turn[1])));
}

/*
 * The end of the sub-step for fast pairs (pp_time_to_impact, "Fast pairs"): the smallest t in
 * (0, remaining) over the constraint sets without restitution whose pair has no plane or
 * terrain triangle (and, with a sphere or a capsule, whose free motion would pass through:
 * free_motion_through), or `remaining`.
 */
static double fast_pair_time(const pp_world *world, int set_first, int set_end,
                             double remaining)
{
    const pp_step_scratch *s = &world->scratch;
    const double eps = world->config.proximity_margin;
    double t_first = remaining;
    for (int j = set_first; j < set_end; ++j) {
        const pp_peg_set *set = &s->all.sets[j];
        if (s->all.restitution[3 * set->first] > 0.0) continue; /* PLUS's: below */
        /* the set's gap, max_s psi_s (PEG Eqs 20, 24), and the member that has it */
        const pp_contact *k = &s->all.contacts[set->first];
        for (int q = set->first + 1; q < set->first + set->count; ++q)
            if (s->all.contacts[q].psi > k->psi) k = &s->all.contacts[q];
        const int smooth = is_smooth(s, k->shape_a) || is_smooth(s, k->shape_b);
        const double psi = k->psi, v = gap_rate(world, k, 0, NULL);
        if (!(v < 0.0)) continue; /* not closing: it cannot cross the other shape */
        const int apart = psi > eps;
        double w[3];
        relative_velocity(world, k, w);
        const double speed = sqrt(dot3(w, w));
        if (!(speed > 0.0)) continue;
        for (int q = 0; q < 3; ++q) w[q] /= speed;
        const double ha = half_width(s, k->shape_a, w), hb = half_width(s, k->shape_b, w);
        if (ha == HUGE_VAL || hb == HUGE_VAL) continue; /* a half-space: no far side */
        const double thin = fmin(ha, hb);
        if (speed * remaining - psi <= thin) continue; /* the rest of the step is short enough */
        /* cannot cross: neither carried through by the free motion nor turned past a half
         * turn by the impulse that stops it */
        if (smooth && !(impulse_turn(world, k, v, remaining) > M_PI) &&
            !free_motion_through(world, k, remaining))
            continue;
        const double t = apart ? psi / -v : (psi + thin) / speed;
        if (t > 0.0 && t < t_first) t_first = t;
    }
    return t_first;
}

/*
 * The time (0, remaining] at which the sub-step ends. `remaining` unless one of these comes
 * first:
 *
 * Bouncing contacts: the time the first one closes, the smallest root of
 * psi + t (v_n + t a_n) = 0 (the semi-implicit Euler gap, a_n the gap acceleration from gravity
 * and the user's force/torque) among contacts with restitution that would arrive faster than
 * their capture speed, so PLUS sees the approach at the touch.
 *
 * Fast pairs (fast_pair_time; docs/design.md "Fast pairs"): the time stepper's constraints
 * hold at the sub-step's end and are linearised at its start (ST96 Eq 29; PEG's max over a
 * set's members, Eqs 20-24), so a sub-step that carries a body farther than the other is thick
 * can end with it on the far side, every constraint met there: a 2 cm hull shot at 25-50 m/s
 * went through an 8 cm one at h = 0.01 under both models (docs/performance.md "Session 17:
 * the pass-through traced"). Per constraint set without restitution, take its gap psi (its
 * largest member's, PEG Eqs 20, 24), its rate psi_dot, that member's velocity w of B's point
 * relative to A's, and thin = the smaller of the two shapes' half widths along w (half of
 * w^ . (s(w^) - s(-w^)), s the support points). When the pair is closing (psi_dot < 0) and
 * |w| remaining - psi > thin, the rest of the step could carry the contact point past the
 * middle of the thinner shape, and the sub-step ends at
 *  - the touch, t = psi / -psi_dot (conservative advancement along the member's normal), when
 *    the pair is apart by more than the proximity margin eps: the next sub-step starts with
 *    the pair's sets built near the touch, not across the step;
 *  - t = (psi + thin) / |w| when it is within eps: the contact point moves at most half the
 *    thinner shape's width in the sub-step, so it cannot reach that shape's far side, and a
 *    spin the impulse gives is taken over at most about a radian at its lever (the LCP's
 *    rotation is first order; the hulls' first solve read 2.3 rad in one step).
 * Not split: a pair with a plane or a terrain triangle (a half-space has no far side: the
 * other shape's contacts are U sets on its one normal; a hull sliding fast on the ground was
 * split and then gained energy, soak seed 138). A pair with a sphere or a capsule (one
 * closest-point U set) is split by the same rule only when the rest of the step's free motion
 * would carry it through the other to apart on the far side (free_motion_through): there the
 * end-of-step constraint is met with no impulse, and a 2 cm sphere shot at an 8 cm box at 25-50 m/s,
 * h = 0.01, went through it (the re-linearisation converged to the free motion). Where the
 * free motion ends inside the other shape it is one sub-step as before: the crash demo's 0.5 m
 * ball at 20 m/s, h = 0.05, into 0.5 m bricks, which split at every brick's touch in turn took
 * 8 sub-steps of the whole wall's impact LCP in check_peg_decline's small crash (5 and more in
 * the crash's step 15, 8.8 s of CPU and unfinished at 73 s; docs/performance.md "Fast pairs
 * with a sphere"). It is split all the same when the impulse that stops it would turn a body
 * past a half turn in the rest of the step (impulse_turn: the LCP's rotation is first order,
 * and a 2 cm hull struck at a corner against an 8 cm sphere crossed it so). Sets with
 * restitution are the bouncing contacts' case.
 *
 * Bound: at most PP_MAX_SUBSTEPS sub-steps a step (world.c); the last takes the rest of the
 * step whatever it holds. The rule splits only pairs whose relative speed exceeds
 * thin / remaining (1 m/s for a 1 cm half width at h = 0.01), and a pair the time stepper
 * stops is not split again.
 */
/* Taken over the sets [set_first, set_end) of scratch.all and their contacts (every contact is
 * in one set), g the world's gravity. Each set's and contact's time reads only its own pair's
 * bodies and shapes, and the answer is the least of them (or `remaining`), so the least over
 * island after island's sets is the same double as over all of them at once, in any order:
 * world.c takes it per island on the workers (time_to_impact). */
double pp_time_to_impact(const pp_world *world, const double g[3], int set_first, int set_end,
                         double remaining)
{
    const pp_step_scratch *s = &world->scratch;
    double t_first = fast_pair_time(world, set_first, set_end, remaining);
    const int c_first = set_first < set_end ? s->all.sets[set_first].first : 0;
    const int c_end = set_first < set_end ? s->all.sets[set_end - 1].first +
                                                s->all.sets[set_end - 1].count : 0;
    for (int c = c_first; c < c_end; ++c) { /* the sets' contacts, one after the other */
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

int pp_world_get_impacts(const pp_world *world, const pp_impact_info **out)
{
    if (!world || !out) {
        pp_log(PP_LOG_ERROR, "pp_world_get_impacts: %s is NULL", !world ? "world" : "out");
        if (out) *out = NULL;
        return 0;
    }
    *out = world->scratch.impact_info;
    return world->scratch.impact_info_count;
}
