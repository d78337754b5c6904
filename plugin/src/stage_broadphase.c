/*
 * Stage 2 of a pegplus step (docs/design.md "One step"): the shapes posed from their bodies, how
 * far each can move in the step, and the candidate pairs of a sweep and prune over their
 * bounding boxes grown by that reach.
 *
 * The speculative margin (docs/design.md "One step"). Shape i can move at most
 * m_i = h (|v_i| + |a_i| h + |w_i| r_i) during the step (r_i its reach from the body's centre;
 * for a sphere the offset of its centre, as its turning about that centre moves no point of
 * the space it occupies), so a pair is near when its gap is below eps_ij = eps + m_i + m_j.
 * Every near feature pair within eps_ij enters the time-stepping problem; its psi/h term (ST96 Eq 25 with PEG Eq 7)
 * lets the gap close during the step but not beyond zero.
 */
#include "world_internal.h"

#include <math.h>

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
    case PP_SHAPE_POLYTOPE:
    case PP_SHAPE_CYLINDER: { /* a cylinder's prism contains it */
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

/* Pose shape i from its body's current (sub-step) state, and bound how far it can move in dt:
 * m_i = dt (|v| + |a| dt + |w| r_i), a from gravity g and the user force. */
static void pose_shape(pp_world *world, int i, double g, double dt)
{
    pp_step_scratch *s = &world->scratch;
    int b = s->shape_body[i];
    s->shape_motion[i] = 0.0;
    if (b < 0) return;
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
    /* a sphere turning about its own centre occupies the same space: only its centre's
     * offset from the body's centre moves it (a spinning wheel is not a moving one) */
    double reach = shape_reach(sh, pb->x) - (sh->kind == PP_SHAPE_SPHERE ? sh->radius : 0.0);
    s->shape_motion[i] = dt * (v + a * dt + w * reach);
}

static double gravity_norm(const pp_world *world)
{
    dVector3 g;
    dWorldGetGravity(world->ode_world, g);
    return sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
}

void pp_stage_pose_shapes(pp_world *world, double dt)
{
    double g = gravity_norm(world);
    for (int i = 0; i < world->scratch.shape_count; ++i) pose_shape(world, i, g, dt);
}

/* The farthest point of body b's shapes from its centre, m (scratch.body_shapes). */
double pp_body_reach(const pp_world *world, int b)
{
    const pp_step_scratch *s = &world->scratch;
    double r = 0.0;
    for (int e = s->body_shape_first[b]; e < s->body_shape_first[b + 1]; ++e) {
        double d = shape_reach(&s->shapes[s->body_shapes[e]], world->bodies[b].x);
        if (d > r) r = d;
    }
    return r;
}

/* Does no point of body b moving at (v, w) travel more than PP_REST_DISPLACEMENT in dt,
 * dt (|v| + |w| r) <= d with r its reach? */
int pp_body_at_rest(const pp_world *world, int b, const double v[3], const double w[3], double dt)
{
    double speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    double spin = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    return dt * (speed + spin * pp_body_reach(world, b)) <= PP_REST_DISPLACEMENT;
}

/* The shapes of one body (scratch.body_shapes, built by stage 6). */
void pp_pose_body_shapes(pp_world *world, int body, double dt)
{
    const pp_step_scratch *s = &world->scratch;
    double g = gravity_norm(world);
    for (int e = s->body_shape_first[body]; e < s->body_shape_first[body + 1]; ++e)
        pose_shape(world, s->body_shapes[e], g, dt);
}

/* ---- Stage 2: broadphase ----------------------------------------------------------------- */

/* Sweep and prune over the AABBs grown by eps/2 + m_i (so two boxes overlap whenever the
 * shapes may come within eps_ij). Planes are unbounded and stay out of the sweep: they are
 * paired with every moving shape in stage 3. */
pp_status pp_stage_broadphase(pp_world *world)
{
    pp_step_scratch *s = &world->scratch;
    double eps = world->config.proximity_margin;
    pp_status st = pp_terrain_stage_shapes(world); /* terrain triangles near moving shapes */
    if (st == PP_OK && !s->broadphase) st = pp_broadphase_create(&s->broadphase);
    if (st == PP_OK) st = pp_grow((void **)&s->sap_index, &s->sap_capacity, s->shape_count, sizeof(int));
    if (st != PP_OK) return st;

    /* the static shapes (not planes) for the re-linearisation's predicted poses */
    int statics = 0;
    for (int i = 0; i < s->shape_count; ++i)
        statics += s->is_static[i] && s->shapes[i].kind != PP_SHAPE_PLANE;
    if (statics > s->static_capacity) {
        int cap = s->static_capacity;
        st = pp_grow((void **)&s->static_shapes, &cap, statics, sizeof(int));
        if (st == PP_OK)
            st = pp_grow((void **)&s->static_aabbs, &s->static_capacity, statics, sizeof(pp_aabb));
        if (st != PP_OK) return st;
    }
    s->static_count = 0;
    for (int i = 0; i < s->shape_count; ++i) {
        if (!s->is_static[i] || s->shapes[i].kind == PP_SHAPE_PLANE) continue;
        pp_shape_aabb(&s->shapes[i], 0.5 * eps, &s->static_aabbs[s->static_count]);
        s->static_shapes[s->static_count++] = i;
    }

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
    st = pp_grow((void **)&s->pairs, &s->pair_capacity, total > 0 ? total : 1, sizeof(pp_pair));
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
    s->pair_count = n;
    world->stats.candidate_pairs = n;
    return PP_OK;
}
