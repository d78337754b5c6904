/*
 * Stages 2-7 of a pegplus step (DESIGN.md "One step"): broadphase, proximity, feature
 * contacts, constraints and the Stewart–Trinkle time step. ODE is only read here (geom
 * categories, the surface callback); bodies are written in stage 9 alone.
 *
 * The speculative margin (DESIGN.md conventions). Shape i can move at most
 * m_i = h (|v_i| + |a_i| h + |w_i| r_i) during the step (r_i its reach from the body's centre),
 * so a pair is near when its gap is below eps_ij = eps + m_i + m_j. Every near feature pair
 * within eps_ij enters the time-stepping problem; its psi/h term (ST96 Eq 25 with PEG Eq 7)
 * lets the gap close during the step but not beyond zero.
 */
#include "world_internal.h"

#include "pegplus/impact.h"
#include "pegplus/narrowphase.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A friction coefficient of dInfinity (ODE's "never slides") enters the pyramid as this. */
#define PP_MU_INFINITE 1e3

/* Identity of a contact across steps, for the LCP warm start. */
typedef struct pp_contact_key {
    dGeomID g1, g2;
    int kind, feature_a, feature_b;
} pp_contact_key;

static pp_status grow_n(void **array, int *capacity, int need, size_t size)
{
    int cap = *capacity;
    pp_status st = pp_grow(array, &cap, need, size);
    if (st == PP_OK) *capacity = cap;
    return st;
}

void pp_step_scratch_free(pp_step_scratch *s)
{
    free(s->shapes);
    free(s->shape_geom);
    free(s->shape_body);
    free(s->shape_motion);
    free(s->aabbs);
    free(s->is_static);
    free(s->attachment);
    pp_broadphase_destroy(s->broadphase);
    free(s->sap_index);
    free(s->pairs);
    free(s->contacts);
    free(s->restitution);
    free(s->info);
    pp_mlcp_workspace_destroy(s->mlcp);
    free(s->mlcp_body);
    free(s->normal_impulse);
    free(s->friction_vector);
    free(s->velocity);
    pp_plus_solver_destroy(s->plus);
    free(s->plus_work);
    free(s->plus_contact);
    free(s->plus_island);
    free(s->basis);
    free(s->keys);
    memset(s, 0, sizeof *s);
}

/* Distance bound from the body's centre to the farthest point of the shape. */
static double shape_reach(const pp_shape *s, const double body_x[3])
{
    double extent = 0.0;
    switch (s->kind) {
    case PP_SHAPE_SPHERE: extent = s->radius; break;
    case PP_SHAPE_BOX:
        extent = 0.5 * sqrt(s->lengths[0] * s->lengths[0] + s->lengths[1] * s->lengths[1] +
                            s->lengths[2] * s->lengths[2]);
        break;
    case PP_SHAPE_CAPSULE: extent = 0.5 * s->length + s->radius; break;
    case PP_SHAPE_POLYTOPE: {
        const double *c = s->polytope->centroid;
        extent = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) + s->polytope->radius;
        break;
    }
    case PP_SHAPE_PLANE: return 0.0;
    }
    double d[3] = {s->position[0] - body_x[0], s->position[1] - body_x[1],
                   s->position[2] - body_x[2]};
    return extent + sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* Pose every shape on a body from the body's current (sub-step) state, and bound how far it
 * can move in dt: m_i = dt (|v| + |a| dt + |w| r_i), a from gravity and the user force. */
void pp_stage_pose_shapes(pp_world *world, double dt)
{
    pp_step_scratch *s = &world->scratch;
    dVector3 gravity;
    dWorldGetGravity(world->ode_world, gravity);
    double g = sqrt(gravity[0] * gravity[0] + gravity[1] * gravity[1] + gravity[2] * gravity[2]);
    for (int i = 0; i < s->shape_count; ++i) {
        int b = s->shape_body[i];
        s->shape_motion[i] = 0.0;
        if (b < 0) continue;
        const pp_body *pb = &world->bodies[b];
        const pp_shape_attachment *at = &s->attachment[i];
        pp_shape *sh = &s->shapes[i];
        for (int r = 0; r < 3; ++r) {
            sh->position[r] = pb->x[r];
            for (int c = 0; c < 3; ++c) {
                sh->position[r] += pb->R[3 * r + c] * at->p[c];
                double m = 0.0;
                for (int j = 0; j < 3; ++j) m += pb->R[3 * r + j] * at->R[3 * j + c];
                sh->R[3 * r + c] = m;
            }
        }
        double v = sqrt(pb->v[0] * pb->v[0] + pb->v[1] * pb->v[1] + pb->v[2] * pb->v[2]);
        double w = sqrt(pb->w[0] * pb->w[0] + pb->w[1] * pb->w[1] + pb->w[2] * pb->w[2]);
        double f = sqrt(pb->force[0] * pb->force[0] + pb->force[1] * pb->force[1] +
                        pb->force[2] * pb->force[2]);
        double a = (pb->gravity ? g : 0.0) + f * pb->inv_mass;
        s->shape_motion[i] = dt * (v + a * dt + w * shape_reach(sh, pb->x));
    }
}

/* ---- Stage 2: broadphase ----------------------------------------------------------------- */

/* Sweep and prune over the AABBs grown by eps/2 + m_i (so two boxes overlap whenever the
 * shapes may come within eps_ij). Planes are unbounded and stay out of the sweep: they are
 * paired with every moving shape in stage 3. */
pp_status pp_stage_broadphase(pp_world *world, const pp_pair **pairs, int *pair_count)
{
    pp_step_scratch *s = &world->scratch;
    double eps = world->config.proximity_margin;
    pp_status st = PP_OK;
    if (!s->broadphase) st = pp_broadphase_create(&s->broadphase);
    if (st == PP_OK) st = grow_n((void **)&s->sap_index, &s->sap_capacity, s->shape_count, sizeof(int));
    if (st != PP_OK) return st;

    int boxes = 0, planes = 0, moving = 0;
    for (int i = 0; i < s->shape_count; ++i) {
        if (s->shapes[i].kind == PP_SHAPE_PLANE) {
            ++planes;
            continue;
        }
        if (!s->is_static[i]) ++moving;
        pp_shape_aabb(&s->shapes[i], 0.5 * eps + s->shape_motion[i], &s->aabbs[boxes]);
        s->is_static[boxes] = s->is_static[i]; /* compacted in place: boxes <= i */
        s->sap_index[boxes++] = i;
    }
    const pp_pair *sap = NULL;
    int sap_count = 0;
    st = pp_broadphase_pairs(s->broadphase, s->aabbs, s->is_static, boxes, &sap, &sap_count);
    /* restore is_static in shape order */
    for (int i = 0; i < s->shape_count; ++i) s->is_static[i] = s->shape_body[i] < 0;
    if (st != PP_OK) return st;

    int total = sap_count + planes * moving;
    st = grow_n((void **)&s->pairs, &s->pair_capacity, total > 0 ? total : 1, sizeof(pp_pair));
    if (st != PP_OK) return st;
    int n = 0;
    for (int k = 0; k < sap_count; ++k) {
        s->pairs[n].a = s->sap_index[sap[k].a];
        s->pairs[n++].b = s->sap_index[sap[k].b];
    }
    for (int p = 0; p < s->shape_count; ++p) {
        if (s->shapes[p].kind != PP_SHAPE_PLANE) continue;
        for (int i = 0; i < s->shape_count; ++i) {
            if (s->is_static[i] || s->shapes[i].kind == PP_SHAPE_PLANE) continue;
            s->pairs[n].a = p < i ? p : i;
            s->pairs[n++].b = p < i ? i : p;
        }
    }
    *pairs = s->pairs;
    *pair_count = n;
    world->stats.candidate_pairs = n;
    return PP_OK;
}

/* ---- Stages 3-5: proximity, feature contacts, constraints -------------------------------- */

/* dSpaceCollide's filters: same body, category/collide bits. */
static int pair_may_collide(dGeomID g1, dGeomID g2)
{
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    if (b1 && b1 == b2) return 0;
    return (dGeomGetCategoryBits(g1) & dGeomGetCollideBits(g2)) ||
           (dGeomGetCategoryBits(g2) & dGeomGetCollideBits(g1));
}

static pp_status check_surface(const pp_surface *surface, dGeomID g1, dGeomID g2)
{
    if (isnan(surface->mu) || surface->mu < 0.0 || !(surface->bounce >= 0.0) ||
        !(surface->bounce <= 1.0) || !(surface->bounce_vel >= 0.0) ||
        !isfinite(surface->bounce_vel) || !(surface->plus_v_plastic >= 0.0) ||
        !isfinite(surface->plus_v_plastic)) {
        pp_log(PP_LOG_ERROR,
               "surface callback gave geoms %p and %p mu = %g, bounce = %g, bounce_vel = %g: mu "
               "must be >= 0, bounce in [0, 1], bounce_vel finite and >= 0; step rejected, "
               "nothing changed", (void *)g1, (void *)g2, surface->mu, surface->bounce,
               surface->bounce_vel);
        return PP_ERR_INVALID_ARGUMENT;
    }
    return PP_OK;
}

/* Where a vertex of A touches a vertex of B (a box on an aligned box), the vertex–face and the
 * face–vertex pair describe one contact twice: same point, normal and gap. The standard model
 * keeps one; the duplicate would only make the LCP matrix singular (a zero pivot Lemke must
 * then resolve). Tolerance 1e-9 m / 1e-9 rad. Returns the new count. */
static int drop_duplicate_contacts(pp_contact *c, int n)
{
    int kept = 0;
    for (int i = 0; i < n; ++i) {
        int duplicate = 0;
        for (int j = 0; j < kept && !duplicate; ++j) {
            double d2 = 0.0, dot = 0.0;
            for (int k = 0; k < 3; ++k) {
                double pb_i = c[i].p_a[k] + c[i].psi * c[i].n[k];
                double pb_j = c[j].p_a[k] + c[j].psi * c[j].n[k];
                d2 += (c[i].p_a[k] - c[j].p_a[k]) * (c[i].p_a[k] - c[j].p_a[k]) +
                      (pb_i - pb_j) * (pb_i - pb_j);
                dot += c[i].n[k] * c[j].n[k];
            }
            duplicate = d2 < 1e-18 && dot > 1.0 - 1e-12;
        }
        if (!duplicate) c[kept++] = c[i];
    }
    return kept;
}

/* The feature contacts of one near pair appended to the scratch list (grown as needed). */
static pp_status pair_contacts(pp_step_scratch *s, int a, int b, double eps_ab,
                               const pp_surface *surface)
{
    int first = s->contact_count, needed = 0;
    for (;;) {
        int count = first;
        pp_status st = pp_narrowphase_contacts(&s->shapes[a], &s->shapes[b], eps_ab,
                                               PP_APPL_VF_DEFAULT, s->contacts,
                                               s->contact_capacity, &count, &needed);
        if (st == PP_OK) {
            count = first + drop_duplicate_contacts(&s->contacts[first], count - first);
            st = grow_n((void **)&s->restitution, &s->restitution_capacity, 3 * count,
                        sizeof(double));
            if (st != PP_OK) return st;
            double mu = surface->mu > PP_MU_INFINITE ? PP_MU_INFINITE : surface->mu;
            for (int c = first; c < count; ++c) {
                s->restitution[3 * c] = surface->bounce;
                s->restitution[3 * c + 1] = surface->bounce_vel;
                s->restitution[3 * c + 2] = surface->plus_v_plastic > surface->bounce_vel
                                                ? surface->plus_v_plastic : surface->bounce_vel;
                pp_contact *k = &s->contacts[c];
                k->body_a = s->shape_body[a];
                k->body_b = s->shape_body[b];
                k->shape_a = a;
                k->shape_b = b;
                k->mu = mu;
            }
            s->contact_count = count;
            return PP_OK;
        }
        if (st != PP_ERR_NO_MEMORY || needed <= s->contact_capacity) return st;
        st = grow_n((void **)&s->contacts, &s->contact_capacity, needed, sizeof(pp_contact));
        if (st != PP_OK) return st;
    }
}

/* Stage 3 (is the pair within eps_ij? libccd MPR, analytic for planes and spheres), stage 4
 * (its feature pairs: pegplus/narrowphase.h) and stage 5 (the standard model: every contact is
 * a unilateral U constraint, PEG Eq 7). */
pp_status pp_stage_contacts(pp_world *world, const pp_pair *pairs, int pair_count, double h)
{
    (void)h;
    pp_step_scratch *s = &world->scratch;
    double eps = world->config.proximity_margin;
    s->contact_count = 0;
    if (!s->contacts) {
        pp_status st = grow_n((void **)&s->contacts, &s->contact_capacity, 64, sizeof(pp_contact));
        if (st != PP_OK) return st;
    }
    int near = 0;
    for (int k = 0; k < pair_count; ++k) {
        int a = pairs[k].a, b = pairs[k].b;
        dGeomID g1 = s->shape_geom[a], g2 = s->shape_geom[b];
        if (s->shape_body[a] >= 0 && s->shape_body[a] == s->shape_body[b]) continue;
        if (!pair_may_collide(g1, g2)) continue;
        double eps_ab = eps + s->shape_motion[a] + s->shape_motion[b];
        if (!pp_shapes_within(&s->shapes[a], &s->shapes[b], eps_ab)) continue;
        pp_surface surface;
        if (!pp_pair_surface(world, g1, g2, &surface)) continue;
        pp_status st = check_surface(&surface, g1, g2);
        if (st != PP_OK) return st;
        ++near;
        st = pair_contacts(s, a, b, eps_ab, &surface);
        if (st != PP_OK) return st;
    }
    world->stats.near_pairs = near;
    world->stats.contacts = s->contact_count;
    double min_gap = HUGE_VAL;
    for (int c = 0; c < s->contact_count; ++c)
        if (s->contacts[c].psi < min_gap) min_gap = s->contacts[c].psi;
    world->stats.min_gap = s->contact_count ? min_gap : 0.0;
    return PP_OK;
}

/* ---- Stage 7: the Stewart–Trinkle time step ---------------------------------------------- */

static void contact_key(const pp_step_scratch *s, const pp_contact *c, pp_contact_key *key)
{
    memset(key, 0, sizeof *key);
    key->g1 = s->shape_geom[c->shape_a];
    key->g2 = s->shape_geom[c->shape_b];
    key->kind = (int)c->kind;
    key->feature_a = c->feature_a;
    key->feature_b = c->feature_b;
}

/* Same contacts in the same order as last step? Then last step's LCP basis is a good guess
 * (the contact set of a resting stack does not change). Stores this step's keys. */
static pp_status same_contacts_as_before(pp_step_scratch *s, int *same)
{
    int n = s->contact_count;
    *same = n == s->key_count && n > 0;
    pp_status st = grow_n((void **)&s->keys, &s->key_capacity, n > 0 ? n : 1, sizeof(pp_contact_key));
    if (st != PP_OK) return st;
    for (int c = 0; c < n; ++c) {
        pp_contact_key key;
        contact_key(s, &s->contacts[c], &key);
        if (*same && memcmp(&key, &s->keys[c], sizeof key) != 0) *same = 0;
        s->keys[c] = key;
    }
    s->key_count = n;
    return PP_OK;
}

static pp_status ensure_mlcp(pp_world *world, int k)
{
    pp_step_scratch *s = &world->scratch;
    int nb = world->body_count, nc = s->contact_count;
    if (!s->mlcp || nb > s->mlcp_bodies || nc > s->mlcp_contacts || k > s->mlcp_directions) {
        int mb = nb > 2 * s->mlcp_bodies ? nb : 2 * s->mlcp_bodies;
        int mc = nc > 2 * s->mlcp_contacts ? nc : 2 * s->mlcp_contacts;
        if (mb < 1) mb = 1;
        if (mc < 8) mc = 8;
        pp_mlcp_workspace_destroy(s->mlcp);
        s->mlcp = NULL;
        pp_status st = pp_mlcp_workspace_create(mb, mc, k, &s->mlcp);
        if (st != PP_OK) return st;
        s->mlcp_bodies = mb;
        s->mlcp_contacts = mc;
        s->mlcp_directions = k;
    }
    pp_status st = grow_n((void **)&s->mlcp_body, &s->mlcp_body_capacity, nb, sizeof(pp_mlcp_body));
    if (st == PP_OK)
        st = grow_n((void **)&s->normal_impulse, &s->normal_capacity, nc, sizeof(double));
    if (st == PP_OK)
        st = grow_n((void **)&s->friction_vector, &s->friction_capacity, 3 * nc, sizeof(double));
    if (st == PP_OK) st = grow_n((void **)&s->velocity, &s->velocity_capacity, 6 * nb, sizeof(double));
    int lcp = pp_mlcp_lcp_size(nc, k);
    if (st == PP_OK) st = grow_n((void **)&s->basis, &s->basis_capacity, lcp, 1);
    return st;
}

static pp_status record_contact_info(pp_world *world)
{
    pp_step_scratch *s = &world->scratch;
    int n = s->contact_count;
    pp_status st = grow_n((void **)&s->info, &s->info_capacity, n > 0 ? n : 1, sizeof(pp_contact_info));
    if (st != PP_OK) return st;
    for (int c = 0; c < n; ++c) {
        const pp_contact *k = &s->contacts[c];
        pp_contact_info *info = &s->info[c];
        info->g1 = s->shape_geom[k->shape_a];
        info->g2 = s->shape_geom[k->shape_b];
        memcpy(info->position, k->p_a, sizeof info->position);
        memcpy(info->normal, k->n, sizeof info->normal);
        info->gap = k->psi;
        info->normal_impulse = s->normal_impulse ? s->normal_impulse[c] : 0.0;
        for (int j = 0; j < 3; ++j)
            info->friction_impulse[j] = s->friction_vector ? s->friction_vector[3 * c + j] : 0.0;
    }
    s->info_count = n;
    return PP_OK;
}

/* With PP_LCP_DUMP_DIR set in the environment, an LCP the solver failed on is saved there
 * (pegplus/lcp.h text format) to become a regression test (STYLE.md "Tests"). */
static void dump_failed_lcp(const pp_mlcp_workspace *mlcp)
{
    static int dumped;
    const char *dir = getenv("PP_LCP_DUMP_DIR");
    if (!dir || !*dir) return;
    int n = 0;
    const double *M = NULL, *q = NULL;
    pp_mlcp_last_lcp(mlcp, &n, &M, &q);
    char path[1024];
    snprintf(path, sizeof path, "%s/failed-%d.lcp", dir, dumped++);
    if (pp_lcp_instance_save(path, n, M, q, NULL, "time-stepping LCP Lemke failed on") == PP_OK)
        pp_log(PP_LOG_WARNING, "the failed LCP was saved to %s", path);
}

/*
 * The free velocities nu* = nu + h M^-1 (f_ext + tau_gyro) are in the bodies already (ODE's
 * order, integrate.c). Solve the Stewart–Trinkle LCP (ST96 Eq 29, pegplus/mlcp.h) for the
 * contact impulses and set nu^{l+1} = nu* + M^-1 (G_n p_n + G_f beta).
 *
 * Failure (documented in the README): pp_lcp_solve retries with M + eps I (fallback 1); if
 * that fails too the step runs without contact impulses (fallback 2) — the next step sees
 * the gap psi < 0 and its psi/h term pushes the bodies apart. Either way the status is in the
 * step statistics and nothing non-finite reaches ODE.
 */
pp_status pp_stage_time_step(pp_world *world, double h)
{
    pp_step_scratch *s = &world->scratch;
    int nb = world->body_count, nc = s->contact_count, k = world->config.friction_directions;
    world->stats.lcp_size = 0;
    if (nc == 0) {
        s->key_count = 0;
        return record_contact_info(world);
    }
    pp_status st = ensure_mlcp(world, k);
    if (st != PP_OK) return st;
    for (int i = 0; i < nb; ++i) {
        const pp_body *b = &world->bodies[i];
        pp_mlcp_body *m = &s->mlcp_body[i];
        m->inv_mass = b->inv_mass;
        memcpy(m->inv_inertia, b->inv_inertia_world, sizeof m->inv_inertia);
        memcpy(m->x, b->x, sizeof m->x);
        memcpy(m->v, b->v, sizeof m->v);
        memcpy(m->w, b->w, sizeof m->w);
    }
    int same = 0;
    st = same_contacts_as_before(s, &same);
    if (st != PP_OK) return st;

    pp_mlcp_problem problem = {h, nb, s->mlcp_body, nc, s->contacts, k, world->config.compliance};
    pp_mlcp_solution solution;
    memset(&solution, 0, sizeof solution);
    solution.normal_impulse = s->normal_impulse;
    solution.friction_vector = s->friction_vector;
    solution.velocity = s->velocity;
    pp_lcp_options options = pp_lcp_options_default();
    options.warm_start = same;
    pp_mlcp_stats mstats;
    st = pp_mlcp_solve(s->mlcp, &problem, &options, s->basis, &solution, &mstats);
    if (st != PP_OK && st != PP_ERR_SOLVER) return st;

    world->stats.lcp_size = mstats.lcp_size;
    world->stats.lcp_status = (int)mstats.lcp.status;
    world->stats.lcp_pivots = mstats.lcp.pivots;
    world->stats.lcp_residual = mstats.lcp.residual;
    world->stats.lcp_warm_started = mstats.lcp.warm_started;
    world->stats.lcp_fallback = st == PP_ERR_SOLVER ? 2 : mstats.lcp.epsilon > 0.0 ? 1 : 0;
    if (st == PP_ERR_SOLVER) {
        s->key_count = 0; /* no basis worth reusing */
        dump_failed_lcp(s->mlcp);
        pp_log(PP_LOG_WARNING, "the time-stepping LCP (%d unknowns) was not solved (status %d); "
                               "this step ran without contact impulses", mstats.lcp_size,
               (int)mstats.lcp.status);
    }
    for (int i = 0; i < nb; ++i) {
        pp_body *b = &world->bodies[i];
        if (b->inv_mass == 0.0) continue; /* kinematic: velocity is the user's */
        memcpy(b->v, &s->velocity[6 * i], sizeof b->v);
        memcpy(b->w, &s->velocity[6 * i + 3], sizeof b->w);
    }
    return record_contact_info(world);
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
