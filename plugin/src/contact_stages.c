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
    free(s->sets);
    free(s->primary);
    pp_peg_builder_destroy(s->peg_builder);
    free(s->pose_work);
    pp_peg_workspace_destroy(s->peg);
    free(s->peg_slack);
    free(s->key_sets);
    free(s->pose_saved);
    free(s->nu_hat);
    free(s->nu_kept);
    free(s->work_sets);
    free(s->work_contacts);
    free(s->work_restitution);
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
pp_status pp_stage_broadphase(pp_world *world)
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
    s->pair_count = n;
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

/* The pair's surface on contacts [first, count): bodies, shapes, mu and the restitution
 * parameters of stage 6. */
static pp_status label_contacts(pp_step_scratch *s, int first, int count, int a, int b,
                                const pp_surface *surface)
{
    pp_status st = grow_n((void **)&s->restitution, &s->restitution_capacity, 3 * count,
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
    return PP_OK;
}

/* Contacts [first, count) as one U set each (PEG Eqs 17-18: the standard model). */
static pp_status add_u_sets(pp_step_scratch *s, int first, int count)
{
    pp_status st = grow_n((void **)&s->sets, &s->set_capacity, s->set_count + count - first,
                          sizeof(pp_peg_set));
    if (st != PP_OK) return st;
    for (int c = first; c < count; ++c)
        s->sets[s->set_count++] = (pp_peg_set){PP_PEG_SET_U, PP_PEG_VERTEX_FACE, c, 1};
    return PP_OK;
}

/* The standard model's contacts of one near pair (pegplus/narrowphase.h), each a U set. */
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
            st = label_contacts(s, first, count, a, b, surface);
            if (st == PP_OK) st = add_u_sets(s, first, count);
            if (st == PP_OK) s->contact_count = count;
            return st;
        }
        if (st != PP_ERR_NO_MEMORY || needed <= s->contact_capacity) return st;
        st = grow_n((void **)&s->contacts, &s->contact_capacity, needed, sizeof(pp_contact));
        if (st != PP_OK) return st;
    }
}

/* Pose a polytope shape's features in the world into work (3 V + 4 F doubles). */
static void pose_polytope(const pp_shape *shape, double *work, pp_polytope_view *view)
{
    const pp_polytope *p = shape->polytope;
    double *normals = work + 3 * p->vertex_count, *offsets = normals + 3 * p->face_count;
    pp_polytope_pose_view(p, shape->position, shape->R, work, normals, offsets, view);
}

static int pose_size(const pp_shape *shape)
{
    return 3 * shape->polytope->vertex_count + 4 * shape->polytope->face_count;
}

/* Pose polytope shape sa, and sb when it is a polytope too (else a plane), into
 * s->pose_work as the views va, vb. */
static pp_status pose_pair(pp_step_scratch *s, const pp_shape *sa, const pp_shape *sb,
                           pp_polytope_view *va, pp_polytope_view *vb)
{
    int need = pose_size(sa) + (sb->kind == PP_SHAPE_POLYTOPE ? pose_size(sb) : 0);
    pp_status st = grow_n((void **)&s->pose_work, &s->pose_work_capacity, need, sizeof(double));
    if (st != PP_OK) return st;
    pose_polytope(sa, s->pose_work, va);
    if (sb->kind == PP_SHAPE_POLYTOPE) pose_polytope(sb, s->pose_work + pose_size(sa), vb);
    return PP_OK;
}

/* Contact c between polytope A (va) and B, a polytope (vb) or the plane sb, re-evaluated at
 * the views' poses (pp_peg_contact_update); 0 when it cannot be. */
static int update_contact(const pp_shape *sb, const pp_polytope_view *va,
                          const pp_polytope_view *vb, pp_contact *c)
{
    return sb->kind == PP_SHAPE_POLYTOPE ? pp_peg_contact_update(va, vb, NULL, 0.0, c)
                                         : pp_peg_contact_update(va, NULL, sb->normal, sb->offset, c);
}

/*
 * PEG's constraint sets of one near pair (spec/PEG.md §3, pegplus/peg.h): polytope against
 * polytope gives U/I/X sets from the pair's configurations (vertex–face, edge–edge,
 * vertex–edge, vertex–vertex); polytope against a plane one U per vertex within eps (a
 * half-space has no edges or corners to trap anything). Spheres and capsules are smooth:
 * their closest-point contacts are exact, so they keep the standard U constraints.
 */
static pp_status pair_peg_sets(pp_step_scratch *s, int a, int b, double eps_ab,
                               const pp_surface *surface)
{
    const pp_shape *sa = &s->shapes[a], *sb = &s->shapes[b];
    int poly_a = sa->kind == PP_SHAPE_POLYTOPE, poly_b = sb->kind == PP_SHAPE_POLYTOPE;
    int plane_a = sa->kind == PP_SHAPE_PLANE, plane_b = sb->kind == PP_SHAPE_PLANE;
    if (!((poly_a && poly_b) || (poly_a && plane_b) || (plane_a && poly_b)))
        return pair_contacts(s, a, b, eps_ab, surface);
    if (plane_a) { /* the polytope is A of the sets: swap the pair */
        int t = a;
        a = b;
        b = t;
        sa = &s->shapes[a];
        sb = &s->shapes[b];
    }
    pp_status st = PP_OK;
    if (!s->peg_builder) st = pp_peg_builder_create(&s->peg_builder);
    pp_polytope_view va, vb;
    if (st == PP_OK) st = pose_pair(s, sa, sb, &va, &vb);
    if (st != PP_OK) return st;

    int first_contact = s->contact_count, first_set = s->set_count;
    for (;;) {
        pp_peg_output out = {s->sets, s->set_capacity, first_set, 0,
                             s->contacts, NULL, s->contact_capacity, first_contact, 0};
        st = sb->kind == PP_SHAPE_POLYTOPE
                 ? pp_peg_constraints_polytopes_moving(s->peg_builder, &va, &vb, eps_ab,
                                                       s->shape_motion[a] + s->shape_motion[b],
                                                       NULL, &out)
                 : pp_peg_constraints_polytope_plane(&va, sb->normal, sb->offset, eps_ab, &out);
        if (st == PP_OK) {
            st = label_contacts(s, first_contact, out.contact_count, a, b, surface);
            if (st != PP_OK) return st;
            s->contact_count = out.contact_count;
            s->set_count = out.set_count;
            return PP_OK;
        }
        if (st != PP_ERR_NO_MEMORY || (out.sets_needed <= s->set_capacity &&
                                       out.contacts_needed <= s->contact_capacity))
            return st;
        st = grow_n((void **)&s->sets, &s->set_capacity, out.sets_needed, sizeof(pp_peg_set));
        if (st == PP_OK)
            st = grow_n((void **)&s->contacts, &s->contact_capacity, out.contacts_needed,
                        sizeof(pp_contact));
        if (st != PP_OK) return st;
    }
}

/* Which contacts carry an impulse (the first of each set, its primary) and the statistics of
 * the sets in s->sets. */
static pp_status index_sets(pp_world *world, pp_model model)
{
    pp_step_scratch *s = &world->scratch;
    int nc = s->contact_count;
    pp_status st = grow_n((void **)&s->primary, &s->primary_capacity, nc > 0 ? nc : 1, 1);
    if (st != PP_OK) return st;
    memset(s->primary, 0, (size_t)(nc > 0 ? nc : 1));
    int counts[3] = {0, 0, 0};
    for (int j = 0; j < s->set_count; ++j) {
        s->primary[s->sets[j].first] = 1;
        counts[s->sets[j].kind]++;
    }
    world->stats.peg_u_sets = model == PP_MODEL_PEG ? counts[PP_PEG_SET_U] : 0;
    world->stats.peg_i_sets = model == PP_MODEL_PEG ? counts[PP_PEG_SET_I] : 0;
    world->stats.peg_x_sets = model == PP_MODEL_PEG ? counts[PP_PEG_SET_X] : 0;
    world->stats.contacts = nc;
    double min_gap = HUGE_VAL;
    for (int c = 0; c < nc; ++c)
        if (s->contacts[c].psi < min_gap) min_gap = s->contacts[c].psi;
    world->stats.min_gap = nc ? min_gap : 0.0;
    return PP_OK;
}

/* Stage 3 (is the pair within eps_ij? libccd MPR, analytic for planes and spheres), stage 4
 * (its feature pairs) and stage 5 (its constraints under `model`: the standard model makes
 * every feature contact a U constraint, PEG Eq 7; PEG makes U/I/X sets). */
static pp_status build_constraints(pp_world *world, pp_model model)
{
    pp_step_scratch *s = &world->scratch;
    double eps = world->config.proximity_margin;
    s->contact_count = 0;
    s->set_count = 0;
    if (!s->contacts) {
        pp_status st = grow_n((void **)&s->contacts, &s->contact_capacity, 64, sizeof(pp_contact));
        if (st != PP_OK) return st;
    }
    int near = 0;
    for (int k = 0; k < s->pair_count; ++k) {
        int a = s->pairs[k].a, b = s->pairs[k].b;
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
        st = model == PP_MODEL_PEG ? pair_peg_sets(s, a, b, eps_ab, &surface)
                                   : pair_contacts(s, a, b, eps_ab, &surface);
        if (st != PP_OK) return st;
    }
    world->stats.near_pairs = near;
    return index_sets(world, model);
}

/* Stages 3-5 for the candidate pairs of stage 2 under the configured model. */
pp_status pp_stage_contacts(pp_world *world)
{
    return build_constraints(world, world->config.model);
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

/* Same contacts in the same order, grouped into the same sets, as last step? Then last step's
 * LCP basis is a good guess (the contact set of a resting stack does not change). Stores this
 * step's keys. */
static pp_status same_constraints_as_before(pp_step_scratch *s, int *same)
{
    int n = s->contact_count, ns = s->set_count;
    *same = n == s->key_count && ns == s->key_set_count && n > 0;
    pp_status st = grow_n((void **)&s->keys, &s->key_capacity, n > 0 ? n : 1, sizeof(pp_contact_key));
    if (st == PP_OK)
        st = grow_n((void **)&s->key_sets, &s->key_set_capacity, ns > 0 ? ns : 1, sizeof(pp_peg_set));
    if (st != PP_OK) return st;
    for (int c = 0; c < n; ++c) {
        pp_contact_key key;
        contact_key(s, &s->contacts[c], &key);
        if (*same && memcmp(&key, &s->keys[c], sizeof key) != 0) *same = 0;
        s->keys[c] = key;
    }
    for (int j = 0; j < ns; ++j) {
        const pp_peg_set *a = &s->sets[j], *b = &s->key_sets[j];
        if (*same && (a->kind != b->kind || a->first != b->first || a->count != b->count))
            *same = 0;
        s->key_sets[j] = *a;
    }
    s->key_count = n;
    s->key_set_count = ns;
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
    int peg = pp_peg_lcp_size(s->set_count, nc - s->set_count, k);
    if (st == PP_OK) st = grow_n((void **)&s->basis, &s->basis_capacity, lcp > peg ? lcp : peg, 1);
    if (st == PP_OK) st = grow_n((void **)&s->peg_slack, &s->peg_slack_capacity, nc, sizeof(double));
    return st;
}

static pp_status ensure_peg(pp_world *world, int k)
{
    pp_step_scratch *s = &world->scratch;
    int nb = world->body_count, nc = s->contact_count, ns = s->set_count;
    if (s->peg && nb <= s->peg_bodies && nc <= s->peg_contacts && ns <= s->peg_sets &&
        k <= s->peg_directions)
        return PP_OK;
    int mb = nb > 2 * s->peg_bodies ? nb : 2 * s->peg_bodies;
    int mc = nc > 2 * s->peg_contacts ? nc : 2 * s->peg_contacts;
    int ms = ns > 2 * s->peg_sets ? ns : 2 * s->peg_sets;
    if (mb < 1) mb = 1;
    if (mc < 8) mc = 8;
    if (ms < 8) ms = 8;
    if (ms > mc) mc = ms;
    pp_peg_workspace_destroy(s->peg);
    s->peg = NULL;
    pp_status st = pp_peg_workspace_create(mb, mc, ms, k, &s->peg);
    if (st != PP_OK) return st;
    s->peg_bodies = mb;
    s->peg_contacts = mc;
    s->peg_sets = ms;
    s->peg_directions = k;
    return PP_OK;
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
static void dump_failed_lcp(int n, const double *M, const double *q, const char *what)
{
    static int dumped;
    const char *dir = getenv("PP_LCP_DUMP_DIR");
    if (!dir || !*dir) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/failed-%d.lcp", dir, dumped++);
    if (pp_lcp_instance_save(path, n, M, q, NULL, what) == PP_OK)
        pp_log(PP_LOG_WARNING, "the failed LCP was saved to %s", path);
}

/* A step may solve several LCPs (sub-steps, re-linearisations, the PEG fallback): the
 * statistics keep the last size and warm-start flag, the sum of the pivots, and the worst
 * status, residual and fallback, so a failure in any of them shows. */
static void record_lcp(pp_world *world, int size, const pp_lcp_result *r, pp_status st)
{
    pp_step_stats *t = &world->stats;
    int fallback = st == PP_ERR_SOLVER ? 2 : r->epsilon > 0.0 ? 1 : 0;
    t->lcp_size = size;
    if (t->lcp_status == 0) t->lcp_status = (int)r->status;
    t->lcp_pivots += r->pivots;
    if (r->residual > t->lcp_residual) t->lcp_residual = r->residual;
    t->lcp_warm_started = r->warm_started;
    if (fallback > t->lcp_fallback) t->lcp_fallback = fallback;
}

static void solution_arrays(pp_step_scratch *s, pp_mlcp_solution *solution)
{
    memset(solution, 0, sizeof *solution);
    solution->normal_impulse = s->normal_impulse;
    solution->friction_vector = s->friction_vector;
    solution->velocity = s->velocity;
}

/* The standard model's LCP (ST96 Eq 29, pegplus/mlcp.h) on the contacts of stage 4.
 * PP_ERR_SOLVER: Lemke and its regularisation failed, impulses 0 (fallback 2). */
static pp_status solve_standard(pp_world *world, double h, int k)
{
    pp_step_scratch *s = &world->scratch;
    pp_status st = ensure_mlcp(world, k);
    int same = 0;
    if (st == PP_OK) st = same_constraints_as_before(s, &same);
    if (st != PP_OK) return st;
    pp_mlcp_problem problem = {h, world->body_count, s->mlcp_body, s->contact_count,
                               s->contacts, k, world->config.compliance};
    pp_mlcp_solution solution;
    solution_arrays(s, &solution);
    pp_lcp_options options = pp_lcp_options_default();
    options.warm_start = same;
    pp_mlcp_stats mstats;
    st = pp_mlcp_solve(s->mlcp, &problem, &options, s->basis, &solution, &mstats);
    if (st != PP_OK && st != PP_ERR_SOLVER) return st;
    record_lcp(world, mstats.lcp_size, &mstats.lcp, st);
    if (st == PP_ERR_SOLVER) {
        int n = 0;
        const double *M = NULL, *q = NULL;
        pp_mlcp_last_lcp(s->mlcp, &n, &M, &q);
        dump_failed_lcp(n, M, q, "time-stepping LCP Lemke failed on");
    }
    return st;
}

/* PEG's LCP (Eqs 39-49, pegplus/peg.h) on the U/I/X sets of stage 5: only primaries carry
 * impulses, the slack rows keep max_s psi_s >= 0 for every set at the end of the step.
 * PP_ERR_SOLVER: not solved (the PEG matrix is not copositive in general, spec §6). */
static pp_status solve_peg(pp_world *world, double h, int k)
{
    pp_step_scratch *s = &world->scratch;
    pp_status st = ensure_mlcp(world, k);
    if (st == PP_OK) st = ensure_peg(world, k);
    int same = 0;
    if (st == PP_OK) st = same_constraints_as_before(s, &same);
    if (st != PP_OK) return st;
    pp_peg_problem problem = {{h, world->body_count, s->mlcp_body, s->contact_count, s->contacts,
                               k, world->config.compliance},
                              s->set_count, s->sets};
    pp_mlcp_solution solution;
    solution_arrays(s, &solution);
    pp_lcp_options options = pp_lcp_options_default();
    options.warm_start = same;
    pp_peg_stats pstats;
    st = pp_peg_solve(s->peg, &problem, &options, s->basis, &solution, s->peg_slack, &pstats);
    if (st != PP_OK && st != PP_ERR_SOLVER) return st;
    record_lcp(world, pstats.lcp_size, &pstats.lcp, st);
    if (st == PP_ERR_SOLVER) {
        int n = 0;
        const double *M = NULL, *q = NULL;
        pp_peg_last_lcp(s->peg, &n, &M, &q);
        dump_failed_lcp(n, M, q, "PEG time-stepping LCP Lemke failed on");
    }
    return st;
}

/* The gap linearised about a predicted pose q^ instead of q^l (ST96 §3.6, see relinearize):
 * psi' = psi(q^) - h G(q^)^T nu^ for every contact of stage 5, built at q^ with the bodies
 * (and so the Jacobians' centres) at q^. */
static void shift_gaps_to_prediction(pp_world *world, double h, const double *nu_hat)
{
    pp_step_scratch *s = &world->scratch;
    for (int c = 0; c < s->contact_count; ++c) {
        pp_contact *q = &s->contacts[c];
        q->psi -= h * pp_contact_gap_rate(world, q, q->body_a >= 0 ? &nu_hat[6 * q->body_a] : NULL,
                                          q->body_b >= 0 ? &nu_hat[6 * q->body_b] : NULL);
    }
}

/* The LCP of `model` on the constraints of stage 5. Under PP_MODEL_PEG a failed PEG LCP is
 * replaced by the standard model's constraints on the same pairs (*model then says so); when
 * the constraints were built at a predicted pose (nu_hat set: a re-linearisation, the bodies
 * posed at q^), the replacement's gaps are linearised there in the same way. */
static pp_status solve_model(pp_world *world, double h, int k, int *model, const double *nu_hat)
{
    pp_step_scratch *s = &world->scratch;
    if (*model != PP_MODEL_PEG) return solve_standard(world, h, k);
    pp_status st = solve_peg(world, h, k);
    if (st != PP_ERR_SOLVER) return st;
    pp_step_stats peg = world->stats; /* the PEG sets stay in the statistics */
    world->stats.peg_fallback++;
    s->key_count = s->key_set_count = 0;
    *model = PP_MODEL_STANDARD;
    st = build_constraints(world, PP_MODEL_STANDARD);
    if (st != PP_OK) return st;
    if (nu_hat) shift_gaps_to_prediction(world, h, nu_hat);
    world->stats.peg_u_sets = peg.peg_u_sets;
    world->stats.peg_i_sets = peg.peg_i_sets;
    world->stats.peg_x_sets = peg.peg_x_sets;
    pp_log(PP_LOG_WARNING, "the PEG LCP (%d unknowns) was not solved (status %d); this step used "
                           "the standard model's %d contacts instead",
           peg.lcp_size, world->stats.lcp_status, s->contact_count);
    return s->contact_count ? solve_standard(world, h, k) : PP_OK;
}

/* ---- The re-linearisation's working set -------------------------------------------------- */

/* Identity of a feature contact whichever body is A (the same-frame rule writes a contact of
 * a set from either side): kind 0 a vertex against a face (or plane), the vertex first; kind
 * 2 an edge pair, the lower shape index first; -1 a contact that cannot be re-evaluated. */
typedef struct feature_key {
    int kind, shape1, feature1, shape2, feature2;
} feature_key;

static feature_key key_of(const pp_contact *c)
{
    switch (c->kind) {
    case PP_CONTACT_VERTEX_FACE:
        return (feature_key){0, c->shape_a, c->feature_a, c->shape_b, c->feature_b};
    case PP_CONTACT_FACE_VERTEX:
        return (feature_key){0, c->shape_b, c->feature_b, c->shape_a, c->feature_a};
    case PP_CONTACT_EDGE_EDGE:
        return c->shape_a < c->shape_b
                   ? (feature_key){2, c->shape_a, c->feature_a, c->shape_b, c->feature_b}
                   : (feature_key){2, c->shape_b, c->feature_b, c->shape_a, c->feature_a};
    default: return (feature_key){-1, -1, -1, -1, -1};
    }
}

/* Do the sets with contacts a[0, na) and b[0, nb) constrain the same feature pairs? (The
 * contacts of a set are distinct feature pairs, so equal counts and a in b suffice.) */
static int same_features(const pp_contact *a, int na, const pp_contact *b, int nb)
{
    if (na != nb) return 0;
    for (int i = 0; i < na; ++i) {
        feature_key ka = key_of(&a[i]);
        int found = 0;
        for (int j = 0; j < nb && !found; ++j) {
            feature_key kb = key_of(&b[j]);
            found = ka.kind == kb.kind && ka.shape1 == kb.shape1 && ka.feature1 == kb.feature1 &&
                    ka.shape2 == kb.shape2 && ka.feature2 == kb.feature2;
        }
        if (!found) return 0;
    }
    return 1;
}

/* Sets of feature contacts between polytopes (or a polytope and a plane) can be re-evaluated
 * at another pose (pp_peg_contact_update); the closest-point contacts of smooth shapes are
 * rebuilt at every pose instead. */
static int carryable(const pp_step_scratch *s, const pp_peg_set *set, const pp_contact *c)
{
    for (int i = 0; i < set->count; ++i) {
        if (key_of(&c[i]).kind < 0) return 0;
        const pp_shape *a = &s->shapes[c[i].shape_a], *b = &s->shapes[c[i].shape_b];
        if (a->kind != PP_SHAPE_POLYTOPE) return 0;
        if (b->kind != PP_SHAPE_POLYTOPE && b->kind != PP_SHAPE_PLANE) return 0;
    }
    return 1;
}

/* Append set (contacts c, restitution r: 3 per contact) to the working set. */
static pp_status work_append(pp_step_scratch *s, const pp_peg_set *set, const pp_contact *c,
                             const double *r)
{
    int nc = s->work_contact_count + set->count;
    pp_status st = grow_n((void **)&s->work_sets, &s->work_set_capacity, s->work_set_count + 1,
                          sizeof(pp_peg_set));
    if (st == PP_OK)
        st = grow_n((void **)&s->work_contacts, &s->work_contact_capacity, nc, sizeof(pp_contact));
    if (st == PP_OK)
        st = grow_n((void **)&s->work_restitution, &s->work_restitution_capacity, 3 * nc,
                    sizeof(double));
    if (st != PP_OK) return st;
    pp_peg_set *w = &s->work_sets[s->work_set_count++];
    *w = *set;
    w->first = s->work_contact_count;
    memcpy(&s->work_contacts[w->first], c, (size_t)set->count * sizeof(pp_contact));
    memcpy(&s->work_restitution[3 * w->first], r, 3 * (size_t)set->count * sizeof(double));
    s->work_contact_count = nc;
    return PP_OK;
}

/* The working set starts with the constraints the step's first solve used (at q^l). */
static pp_status working_set_start(pp_world *world, int model)
{
    pp_step_scratch *s = &world->scratch;
    s->work_set_count = s->work_contact_count = 0;
    s->work_model = model;
    for (int j = 0; j < s->set_count; ++j) {
        const pp_peg_set *set = &s->sets[j];
        if (!carryable(s, set, &s->contacts[set->first])) continue;
        pp_status st = work_append(s, set, &s->contacts[set->first], &s->restitution[3 * set->first]);
        if (st != PP_OK) return st;
    }
    return PP_OK;
}

/* Set w of the working set re-evaluated at the shapes' current poses and appended to the
 * step's sets. Returns PP_OK also when it cannot be re-evaluated (then it is left out). */
static pp_status carry_set(pp_step_scratch *s, int w)
{
    const pp_peg_set *set = &s->work_sets[w];
    pp_contact *c = &s->work_contacts[set->first];
    const pp_shape *sb = &s->shapes[c[0].shape_b];
    pp_polytope_view va, vb;
    pp_status st = pose_pair(s, &s->shapes[c[0].shape_a], sb, &va, &vb);
    if (st != PP_OK) return st;
    for (int i = 0; i < set->count; ++i)
        if (!update_contact(sb, &va, &vb, &c[i])) return PP_OK;
    int first = s->contact_count, nc = first + set->count;
    st = grow_n((void **)&s->sets, &s->set_capacity, s->set_count + 1, sizeof(pp_peg_set));
    if (st == PP_OK) st = grow_n((void **)&s->contacts, &s->contact_capacity, nc, sizeof(pp_contact));
    if (st == PP_OK)
        st = grow_n((void **)&s->restitution, &s->restitution_capacity, 3 * nc, sizeof(double));
    if (st != PP_OK) return st;
    memcpy(&s->contacts[first], c, (size_t)set->count * sizeof(pp_contact));
    memcpy(&s->restitution[3 * first], &s->work_restitution[3 * set->first],
           3 * (size_t)set->count * sizeof(double));
    s->sets[s->set_count] = *set;
    s->sets[s->set_count++].first = first;
    s->contact_count = nc;
    return PP_OK;
}

/* The set built again at q^ keeps the primary it had when it joined the working set
 * (primary: that contact as it was then). The heuristic of pegplus/peg.h picks the primary by
 * the largest gap among near-tied candidates, so rebuilt at a slightly different q^ it can
 * pick another contact; the impulse then acts along another normal and the fixed-point map
 * jumps (measured: the iteration cycling between two primaries of one I set, with friction).
 * Within one step the family of constraints is fixed, including where each set's impulse acts. */
static void keep_primary(pp_step_scratch *s, const pp_peg_set *set, const pp_contact *primary)
{
    feature_key want = key_of(primary);
    for (int i = 1; i < set->count; ++i) {
        feature_key k = key_of(&s->contacts[set->first + i]);
        if (k.kind != want.kind || k.shape1 != want.shape1 || k.feature1 != want.feature1 ||
            k.shape2 != want.shape2 || k.feature2 != want.feature2)
            continue;
        int a = set->first, b = set->first + i;
        pp_contact t = s->contacts[a];
        s->contacts[a] = s->contacts[b];
        s->contacts[b] = t;
        for (int r = 0; r < 3; ++r) {
            double x = s->restitution[3 * a + r];
            s->restitution[3 * a + r] = s->restitution[3 * b + r];
            s->restitution[3 * b + r] = x;
        }
        return;
    }
}

/*
 * The constraints at a predicted pose q^: the sets built there (stage 5 at q^) together with
 * every set of the working set that was not built again, re-evaluated at q^ (its features'
 * gaps, normals and lever arms there). Sets built at q^ for the first time join the working
 * set.
 *
 * Why. The fixed point of ST96 §3.6 solves the non-linear problem psi(q^{l+1}) >= 0 for a
 * fixed family of constraint functions; ST96 §4 lets that family only grow within a step
 * ("constraints found violated are added to the set of potentially active constraints").
 * Rebuilding the sets from scratch at every q^ makes the family a function of the iterate
 * itself: a set made at q^l (a vertex near a face, an X of two crossing edges) can be absent
 * at q^ because the prediction moved the features past a proximity, feasibility or
 * applicability threshold, and the next solve then ignores it. The iteration cycled between
 * such families without a fixed point (the last iterate ending up to 3 mm deep: every set of
 * its own family satisfied, the violated one belonging to another), or stopped at a pose
 * that violates a set of q^l. With a growing working set the family changes finitely often
 * and the iteration is the fixed-point iteration of ST96 for the last one. A set of q^l is
 * valid over the step's motion (its proximity eps_ij includes how far the shapes can move in
 * the step), so keeping it does not block the pair.
 */
static pp_status working_set_merge(pp_world *world, int model)
{
    pp_step_scratch *s = &world->scratch;
    if (model != s->work_model) return working_set_start(world, model); /* fell back */
    int fresh = s->set_count, known = s->work_set_count;
    for (int w = 0; w < known; ++w) {
        const pp_peg_set *ws = &s->work_sets[w];
        int built = 0;
        for (int j = 0; j < fresh && !built; ++j)
            built = same_features(&s->work_contacts[ws->first], ws->count,
                                  &s->contacts[s->sets[j].first], s->sets[j].count);
        if (built) continue;
        pp_status st = carry_set(s, w);
        if (st != PP_OK) return st;
    }
    for (int j = 0; j < fresh; ++j) {
        const pp_peg_set *set = &s->sets[j];
        pp_contact *c = &s->contacts[set->first];
        if (!carryable(s, set, c)) continue;
        int known_set = -1;
        for (int w = 0; w < known && known_set < 0; ++w)
            if (same_features(&s->work_contacts[s->work_sets[w].first], s->work_sets[w].count, c,
                              set->count))
                known_set = w;
        if (known_set >= 0) {
            keep_primary(s, set, &s->work_contacts[s->work_sets[known_set].first]);
            continue;
        }
        pp_status st = work_append(s, set, c, &s->restitution[3 * set->first]);
        if (st != PP_OK) return st;
    }
    return index_sets(world, (pp_model)model);
}

/* Kinetic energy of body b moving at (v, w), J. */
static double body_kinetic_energy(const pp_body *b, const double v[3], const double w[3])
{
    double wb[3] = {0, 0, 0}; /* R^T w: the body-frame angular velocity */
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) wb[r] += b->R[3 * c + r] * w[c];
    double rot = 0.0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) rot += wb[r] * b->inertia_body[3 * r + c] * wb[c];
    return 0.5 * (b->mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + rot);
}

/* Kinetic energy at velocities nu (6 per body), or at the bodies' own (nu*) when nu is NULL. */
static double kinetic_energy(const pp_world *world, const double *nu)
{
    double e = 0.0;
    for (int i = 0; i < world->body_count; ++i) {
        const pp_body *b = &world->bodies[i];
        e += nu ? body_kinetic_energy(b, &nu[6 * i], &nu[6 * i + 3])
                : body_kinetic_energy(b, b->v, b->w);
    }
    return e;
}

/* Pose the bodies at q^ = q^l + h f(nu^) (stage 8 with nu^), saving q^l; or, with `restore`,
 * put q^l back (stage 8 integrates from there). */
static void pose_bodies_predicted(pp_world *world, double h, int restore)
{
    pp_step_scratch *s = &world->scratch;
    for (int i = 0; i < world->body_count; ++i) {
        pp_body *b = &world->bodies[i];
        double *saved = &s->pose_saved[16 * i];
        if (restore) {
            memcpy(b->x, saved, 3 * sizeof(double));
            memcpy(b->q, saved + 3, 4 * sizeof(double));
            memcpy(b->R, saved + 7, 9 * sizeof(double));
            memcpy(s->mlcp_body[i].x, b->x, sizeof b->x);
            continue;
        }
        memcpy(saved, b->x, 3 * sizeof(double));
        memcpy(saved + 3, b->q, 4 * sizeof(double));
        memcpy(saved + 7, b->R, 9 * sizeof(double));
        pp_body predicted = *b;
        memcpy(predicted.v, &s->nu_hat[6 * i], 3 * sizeof(double));
        memcpy(predicted.w, &s->nu_hat[6 * i + 3], 3 * sizeof(double));
        pp_body_integrate_pose(&predicted, h);
        memcpy(b->x, predicted.x, sizeof b->x);
        memcpy(b->q, predicted.q, sizeof b->q);
        memcpy(b->R, predicted.R, sizeof b->R);
        memcpy(s->mlcp_body[i].x, predicted.x, sizeof predicted.x);
    }
}

/* Penetration of the constraint family at the current (predicted) pose: the largest
 * -max_s psi_s over the sets, 0 when every set holds. */
static double set_violation(const pp_step_scratch *s)
{
    double worst = 0.0;
    for (int j = 0; j < s->set_count; ++j) {
        const pp_contact *c = &s->contacts[s->sets[j].first];
        double m = c[0].psi;
        for (int i = 1; i < s->sets[j].count; ++i)
            if (c[i].psi > m) m = c[i].psi;
        if (-m > worst) worst = -m;
    }
    return worst;
}

/* set_violation of the working set at the pose predicted by s->nu_hat, its sets re-evaluated
 * there (the step's contact list is left as it is: its impulses are the last solve's). */
static pp_status working_set_violation(pp_world *world, double h, double *violation)
{
    pp_step_scratch *s = &world->scratch;
    pp_status st = PP_OK;
    *violation = 0.0;
    pose_bodies_predicted(world, h, 0);
    pp_stage_pose_shapes(world, h);
    for (int w = 0; w < s->work_set_count && st == PP_OK; ++w) {
        const pp_peg_set *set = &s->work_sets[w];
        const pp_contact *c = &s->work_contacts[set->first];
        const pp_shape *sb = &s->shapes[c[0].shape_b];
        pp_polytope_view va, vb;
        st = pose_pair(s, &s->shapes[c[0].shape_a], sb, &va, &vb);
        if (st != PP_OK) break;
        double m = -HUGE_VAL;
        int ok = 1;
        for (int i = 0; i < set->count && ok; ++i) {
            pp_contact q = c[i];
            ok = update_contact(sb, &va, &vb, &q);
            if (q.psi > m) m = q.psi;
        }
        if (ok && -m > *violation) *violation = -m;
    }
    pose_bodies_predicted(world, h, 1);
    return st;
}

/*
 * One fixed-point iteration of Stewart & Trinkle 1996 §3.6. The step's LCP enforces the gap
 * linearised at q^l, psi(q^l) + h G(q^l)^T nu >= 0; for a rotating body the true gap at
 * q^{l+1} misses that by O(h^2 |w|^2 r). Here the estimate nu^ of the last solve predicts
 * q^ = q^l + h f(nu^) (the integrator of stage 8), the contacts are rebuilt at q^, and the LCP
 * is solved again with the gap linearised there:
 *     psi(q^) + h G(q^)^T (nu - nu^) >= 0,   i.e.  psi' = psi(q^) - h G(q^)^T nu^  in place
 * of psi, Jacobians about the predicted centres. Newton–Euler keeps M(q^l) and nu*. At a
 * fixed point nu = nu^ the constraint is psi(q^{l+1}) >= 0 itself. *violation: how deep the
 * constraints built at q^ (with the working set) are violated there; *residual: max |nu - nu^|;
 * *solved: 0 when the LCP at q^ was not solved (nu is then not an estimate).
 */
static pp_status relinearize(pp_world *world, double h, int k, int *model, double *violation,
                             double *residual, int *solved)
{
    pp_step_scratch *s = &world->scratch;
    int nb = world->body_count;
    pp_status st = grow_n((void **)&s->pose_saved, &s->pose_saved_capacity, 16 * nb, sizeof(double));
    if (st != PP_OK) return st;
    pose_bodies_predicted(world, h, 0);
    pp_stage_pose_shapes(world, h);
    st = build_constraints(world, (pp_model)*model);
    if (st == PP_OK) st = working_set_merge(world, *model);
    if (st == PP_OK) *violation = set_violation(s);
    if (st == PP_OK) shift_gaps_to_prediction(world, h, s->nu_hat);
    *solved = 0;
    if (st == PP_OK && s->contact_count == 0) { /* nothing near q^: the free motion */
        for (int i = 0; i < nb; ++i) {
            memcpy(&s->velocity[6 * i], world->bodies[i].v, 3 * sizeof(double));
            memcpy(&s->velocity[6 * i + 3], world->bodies[i].w, 3 * sizeof(double));
        }
        *solved = 1;
    } else if (st == PP_OK) {
        st = solve_model(world, h, k, model, s->nu_hat);
        *solved = st == PP_OK;
    }
    pose_bodies_predicted(world, h, 1);
    if (st == PP_ERR_SOLVER) {
        pp_log(PP_LOG_WARNING, "re-linearisation: the LCP at the predicted pose was not solved");
        return PP_OK;
    }
    if (st != PP_OK || !*solved) return st;
    *residual = 0.0;
    for (int j = 0; j < 6 * nb; ++j) {
        double d = fabs(s->velocity[j] - s->nu_hat[j]);
        if (d > *residual) *residual = d;
    }
    return PP_OK;
}

/* Is the estimate s->velocity the fixed point nu = nu^ to tol (1 + |nu^|) per component? */
static int fixed_point(const pp_world *world, double tol)
{
    const pp_step_scratch *s = &world->scratch;
    for (int j = 0; j < 6 * world->body_count; ++j)
        if (fabs(s->velocity[j] - s->nu_hat[j]) > tol * (1.0 + fabs(s->nu_hat[j]))) return 0;
    return 1;
}

/*
 * ST96 §3.6's fixed-point iteration after the step's first solve (velocity in s->velocity).
 *
 * Accepting an estimate. A converged iterate is the solution of the non-linear step (every
 * constraint of the working set holds at the end-of-step pose it predicts) and is kept even
 * when its kinetic energy is slightly above the first solve's: keeping a rotating body's
 * contact point on its surface exactly (not to first order) can take O(h) more energy than
 * the linearised step gave, a property of the discretisation (measured: relative 1e-4 .. 3e-4
 * for a pivoting rod and at a drop into the pouring pile; refusing those left overlaps of
 * 6e-10 m^3 and made ST96's rod converge worse).
 *
 * Damping. Where the contact sets switch between iterates the plain iteration can cycle
 * (measured: period 4 in a pile of polytopes); the step toward a new estimate is halved
 * (down to 1/16) each time the residual |nu - nu^| fails to shrink, and doubled again (up to
 * the full step) each time it shrinks by a quarter or more.
 *
 * Converged: the new velocity differs from nu^ by at most 1e-11 (1 + |nu^|) in every component.
 *
 * No convergence. When the iterations run out (or an LCP at a predicted pose is not solved),
 * the result is the estimate whose predicted pose violates the working set least (the last
 * estimate is evaluated for this at its own predicted pose, and kept whatever its energy when
 * it is within 1e-6 (1 + |nu^|) of its fixed point), among those within the energy
 * bound max(KE(first solve), KE(nu*)): the contact impulses of an inelastic step add no
 * kinetic energy beyond what the first solve's psi/h terms needed, and an iteration that
 * leaps (a contact set that jumps between q^l and q^, a feature pair appearing deep at the
 * predicted pose) must not. relinearize_refused counts the steps whose result is not the
 * last estimate.
 */
static pp_status relinearize_step(pp_world *world, double h, int k, int *model)
{
    pp_step_scratch *s = &world->scratch;
    int nb = world->body_count;
    size_t bytes = 6 * (size_t)nb * sizeof(double);
    pp_status st = working_set_start(world, *model);
    if (st == PP_OK) st = grow_n((void **)&s->nu_kept, &s->nu_kept_capacity, 6 * nb, sizeof(double));
    if (st == PP_OK) st = grow_n((void **)&s->nu_hat, &s->nu_hat_capacity, 6 * nb, sizeof(double));
    if (st != PP_OK) return st;
    double first = kinetic_energy(world, s->velocity);
    double free_motion = kinetic_energy(world, NULL); /* nu* is still in the bodies */
    double bound = (first > free_motion ? first : free_motion) * (1.0 + 1e-9) + 1e-12;
    double best = HUGE_VAL, alpha = 1.0, last_residual = HUGE_VAL;
    memcpy(s->nu_hat, s->velocity, bytes);
    memcpy(s->nu_kept, s->velocity, bytes);
    int solved = 1, near_fixed_point = 0;
    for (int it = 0; it < world->config.relinearize_iterations; ++it) {
        double violation = 0.0, residual = 0.0;
        st = relinearize(world, h, k, model, &violation, &residual, &solved);
        world->stats.relinearizations++;
        if (st != PP_OK) return st;
        if (violation < best && kinetic_energy(world, s->nu_hat) <= bound) {
            best = violation;
            memcpy(s->nu_kept, s->nu_hat, bytes);
        }
        if (!solved) break;
        if (fixed_point(world, 1e-11)) return PP_OK;
        near_fixed_point = fixed_point(world, 1e-6);
        if (residual >= last_residual)
            alpha = alpha > 1.0 / 16.0 ? 0.5 * alpha : alpha;
        else if (residual < 0.75 * last_residual)
            alpha = alpha < 0.5 ? 2.0 * alpha : 1.0;
        last_residual = residual;
        for (int j = 0; j < 6 * nb; ++j) s->nu_hat[j] += alpha * (s->velocity[j] - s->nu_hat[j]);
    }
    if (solved) { /* the last estimate, at its own predicted pose */
        memcpy(s->nu_hat, s->velocity, bytes);
        double violation = 0.0;
        st = working_set_violation(world, h, &violation);
        if (st != PP_OK) return st;
        if (violation <= best && (near_fixed_point || kinetic_energy(world, s->velocity) <= bound))
            return PP_OK;
    }
    memcpy(s->velocity, s->nu_kept, bytes);
    world->stats.relinearize_refused++;
    return PP_OK;
}

/*
 * The free velocities nu* = nu + h M^-1 (f_ext + tau_gyro) are in the bodies already (ODE's
 * order, integrate.c). Solve the time-stepping LCP of the model for the contact impulses and
 * set nu^{l+1} = nu* + M^-1 (G p + G_f beta).
 *
 * Failures (documented in the README): pp_lcp_solve retries with M + eps I (fallback 1).
 * Under PP_MODEL_PEG, if that fails too the step is re-run with the standard model's
 * constraints on the same pairs (stats.peg_fallback). If the standard LCP fails too, the step
 * runs without contact impulses (fallback 2): the next step sees the gap psi < 0 and its
 * psi/h term pushes the bodies apart. Either way the status is in the step statistics and
 * nothing non-finite reaches ODE.
 */
pp_status pp_stage_time_step(pp_world *world, double h)
{
    pp_step_scratch *s = &world->scratch;
    int nb = world->body_count, k = world->config.friction_directions;
    world->stats.lcp_size = 0;
    if (s->contact_count == 0) {
        s->key_count = s->key_set_count = 0;
        return record_contact_info(world);
    }
    pp_status st = grow_n((void **)&s->mlcp_body, &s->mlcp_body_capacity, nb, sizeof(pp_mlcp_body));
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

    int model = world->config.model;
    st = solve_model(world, h, k, &model, NULL);
    if (st == PP_OK && world->config.relinearize_iterations > 0)
        st = relinearize_step(world, h, k, &model);
    if (st != PP_OK && st != PP_ERR_SOLVER) return st;
    if (st == PP_ERR_SOLVER) {
        s->key_count = s->key_set_count = 0; /* no basis worth reusing */
        pp_log(PP_LOG_WARNING, "the time-stepping LCP (%d unknowns) was not solved (status %d); "
                               "the contacts of its failed islands got no impulse", world->stats.lcp_size,
               world->stats.lcp_status);
    }
    if (s->contact_count == 0) return record_contact_info(world);
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
