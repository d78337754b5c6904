/*
 * Stages 3-5 of a pegplus step (docs/design.md "One step"): for each candidate pair, proximity
 * (stage 3: is the pair within eps_ij? libccd MPR, analytic for planes and spheres), its
 * feature contacts (stage 4) and the model's constraints on them (stage 5: the standard model
 * makes every feature contact a U constraint, PEG Eq 7; PEG makes U/I/X sets, PEG Sec. 5),
 * appended to a constraint list. ODE is only read here (the surface callback).
 */
#include "world_internal.h"

#include "pegplus/narrowphase.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A friction coefficient of dInfinity (ODE's "never slides") enters the pyramid as this. */
#define PP_MU_INFINITE 1e3

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

/* ODE's default contact frame (dPlaneSpace, odemath.cpp): for a unit normal n, the first
 * tangent p lies in the y-z plane when |n_z| > 1/sqrt 2, else in the x-y plane, each time
 * the in-plane vector perpendicular to n's projection, p = (0, -n_z, n_y)/|.| or
 * (-n_y, n_x, 0)/|.|; the second is q = n x p. */
static void ode_plane_space(const double n[3], double p[3])
{
    if (fabs(n[2]) > 0.70710678118654752440) {
        double k = 1.0 / sqrt(n[1] * n[1] + n[2] * n[2]);
        p[0] = 0.0;
        p[1] = -n[2] * k;
        p[2] = n[1] * k;
    } else {
        double k = 1.0 / sqrt(n[0] * n[0] + n[1] * n[1]);
        p[0] = -n[1] * k;
        p[1] = n[0] * k;
        p[2] = 0.0;
    }
}

/*
 * ODE's anisotropic friction and surface velocity on contact c (docs/drop-in.md). ODE writes
 * a contact's rows for its joint's first body (node0) relative to the second, with the
 * normal pointing into node0 (contact.cpp getInfo2): n_ode = +-n, + when B is node0's side.
 * Its tangents are t1 = fdir1 (dContactFDir1; projected here on this contact's tangent plane,
 * as pegplus's contacts have their own normals) or dPlaneSpace(n_ode)'s first vector, and
 * t2 = n_ode x t1; mu acts along t1, mu2 along t2 (pp_contact.t1, mu2; the polygon of
 * mlcp.h). Its rows ask (v_node0 - v_node1) . t1 = motion1, . t2 = motion2, . n_ode >= motionN
 * (a separating speed), i.e. a target velocity V = motion1 t1 + motion2 t2 + motionN n_ode of
 * node0 relative to node1, which for B relative to A is +-V (pp_contact.motion).
 */
static void contact_surface_ext(pp_contact *c, const pp_surface_ext *ext, int b_is_node0)
{
    const double sgn = b_is_node0 ? 1.0 : -1.0;
    const double n_ode[3] = {sgn * c->n[0], sgn * c->n[1], sgn * c->n[2]};
    double t1[3];
    if (ext->fdir1_set) {
        double along = ext->fdir1[0] * c->n[0] + ext->fdir1[1] * c->n[1] + ext->fdir1[2] * c->n[2];
        for (int k = 0; k < 3; ++k) t1[k] = ext->fdir1[k] - along * c->n[k];
        double len = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
        if (len > 1e-9)
            for (int k = 0; k < 3; ++k) t1[k] /= len;
        else /* fdir1 along this contact's normal: ODE's default frame */
            ode_plane_space(n_ode, t1);
    } else {
        ode_plane_space(n_ode, t1);
    }
    c->surface |= ext->flags;
    for (int k = 0; k < 3; ++k) c->t1[k] = t1[k];
    c->mu2 = ext->mu2 > PP_MU_INFINITE ? PP_MU_INFINITE : ext->mu2;
    c->soft_cfm = ext->soft_cfm;
    c->soft_erp = ext->soft_erp;
    c->slip[0] = ext->slip[0];
    c->slip[1] = ext->slip[1];
    for (int k = 0; k < 3; ++k) /* dInfinity (no rolling) enters as PP_MU_INFINITE m */
        c->rho[k] = ext->rho[k] > PP_MU_INFINITE ? PP_MU_INFINITE : ext->rho[k];
    if (ext->flags & PP_CONTACT_MOTION) {
        const double t2[3] = {n_ode[1] * t1[2] - n_ode[2] * t1[1],
                              n_ode[2] * t1[0] - n_ode[0] * t1[2],
                              n_ode[0] * t1[1] - n_ode[1] * t1[0]};
        for (int k = 0; k < 3; ++k)
            c->motion[k] = sgn * (ext->motion[0] * t1[k] + ext->motion[1] * t2[k] +
                                  ext->motion[2] * n_ode[k]);
    }
}

/* The pair's surface on contacts [first, count): bodies, shapes, mu, the near callback's
 * extensions (ext, may be NULL) and the restitution parameters of stage 6. depth: their psi
 * is a penetration depth (PP_CONTACT_DEPTH). */
static pp_status label_contacts(const pp_step_scratch *s, pp_constraint_list *l, int first,
                                int count, int a, int b, const pp_surface *surface,
                                const pp_surface_ext *ext, int depth)
{
    pp_status st = pp_grow((void **)&l->restitution, &l->restitution_capacity, 3 * count,
                          sizeof(double));
    if (st != PP_OK) return st;
    double mu = surface->mu > PP_MU_INFINITE ? PP_MU_INFINITE : surface->mu;
    for (int c = first; c < count; ++c) {
        l->restitution[3 * c] = surface->bounce;
        l->restitution[3 * c + 1] = surface->bounce_vel;
        l->restitution[3 * c + 2] = surface->plus_v_plastic > surface->bounce_vel
                                        ? surface->plus_v_plastic : surface->bounce_vel;
        pp_contact *k = &l->contacts[c];
        k->body_a = s->shape_body[a];
        k->body_b = s->shape_body[b];
        k->shape_a = a;
        k->shape_b = b;
        k->mu = mu;
        k->surface = depth ? PP_CONTACT_DEPTH : 0u;
        if (ext) contact_surface_ext(k, ext, s->shape_geom[b] == ext->node0);
    }
    return PP_OK;
}

/* Contacts [first, count) as one U set each (PEG Eqs 17-18: the standard model). */
static pp_status add_u_sets(pp_constraint_list *l, int first, int count)
{
    pp_status st = pp_grow((void **)&l->sets, &l->set_capacity, l->set_count + count - first,
                          sizeof(pp_peg_set));
    if (st != PP_OK) return st;
    for (int c = first; c < count; ++c)
        l->sets[l->set_count++] = (pp_peg_set){PP_PEG_SET_U, PP_PEG_VERTEX_FACE, c, 1};
    return PP_OK;
}

/*
 * No feature contact of the standard model reads a pair deeper than it is. A feature gap is a
 * distance along the features' own normal: for a vertex below a face's plane, or two edge
 * lines that have passed each other, it is the push-out that one U constraint asks in one
 * step. The standard model's constraints hold together (each U set is one inequality, ST96
 * Eq 29, all of them at once), so a negative gap below the pair's signed distance d
 * (pp_shape_distance: the distance when apart, minus the penetration depth, the shortest
 * push-out, when overlapping) asks more push-out than the pair needs, along a normal that
 * need not be the pair's: its impulse does the extra work p (d - psi) / h, and next to the
 * contacts of the pair's true overlap it makes the LCP contradictory. Such a contact is not
 * one of the pair at this pose (its features are not where the pair touches or overlaps: a
 * vertex under the plane of a face it entered the other body beside, edges whose lines
 * passed each other beyond the other body's edge), the same judgement as the features' own
 * rule for negative gaps (features.c: an overlap only where the point lies inside the other
 * polytope), made with the pair's depth. It is left out; when no contact left reads the
 * pair's depth (to PAIR_DEPTH_TOLERANCE), the pair's closest-point contact (its normal and
 * gap d) joins, so the overlap the dropped contacts saw is still constrained.
 * Measured: soak seed 2183 (standard, h = 0.01, sub-step of 9.8 ms: a 4 kg box sliding at
 * 26 m/s past a 26 kg box turning at 21 rad/s). The step's first solve (gaps at q^l, a
 * vertex-face pair 17 cm apart) predicts the boxes 3.9 cm deep, a corner through a face near
 * an edge; there the corner's three edges against that edge read -3.2, -5.8 and -9.2 cm,
 * along normals up to 117 degrees from the face's. Their solve pushed the boxes 8 cm apart
 * (+907 J), and the fixed point the iteration then found held them there by those edges'
 * carried gaps, lines meeting beyond the edges (+851 J, 721 times the soak's bound). With
 * the rule: the re-linearisation converges in 13 iterations to the boxes touching, 371 J
 * below nu*, no overlap (the bounce, e = 0.94, is then PLUS's at the next sub-step). Seed 350 (standard, h = 0.005, a box resting against a hull): at
 * the first solve's pose a corner 1.6 um inside the hull through one face read 3.7 cm below
 * the plane of a neighbouring face it also projects onto; that contact asked the box
 * sideways at psi/h = 7.3 m/s, and the fixed point took the pair from 215.5 J to 323.2 J.
 * Only pairs of polytopes (boxes, hulls): a plane's, a sphere's or a capsule's contacts are
 * exact (their gaps are the pair's), a cylinder's are those of its inscribed prism, and a
 * terrain triangle is one-sided (its prism's depth is not the terrain's). The
 * re-linearisation's working set keeps its sets, each reading max(psi, d) (relinearize.c
 * carry_set: continuous in the pose, so the family does not change with the iterate).
 */
#define PAIR_DEPTH_TOLERANCE 1e-9 /* m: gaps above -this are not queried; depths within it tie */

static int polytope_pair(const pp_step_scratch *s, int a, int b)
{
    const pp_shape *x = &s->shapes[a], *y = &s->shapes[b];
    return (x->kind == PP_SHAPE_BOX || x->kind == PP_SHAPE_POLYTOPE) &&
           (y->kind == PP_SHAPE_BOX || y->kind == PP_SHAPE_POLYTOPE) && !s->shape_terrain[a] &&
           !s->shape_terrain[b];
}

int pp_contacts_at_pair_depth(const pp_step_scratch *s, pp_contact *c, int count, int a, int b,
                              pp_contact *closest, int *add_closest)
{
    if (add_closest) *add_closest = 0;
    double deepest = HUGE_VAL;
    for (int i = 0; i < count; ++i) deepest = fmin(deepest, c[i].psi);
    if (!(deepest < -PAIR_DEPTH_TOLERANCE) || !polytope_pair(s, a, b)) return count;
    pp_proximity near;
    if (pp_shape_distance(&s->shapes[a], &s->shapes[b], &near) != PP_OK) return count;
    const double d = near.distance;
    int kept = 0, attained = 0;
    for (int i = 0; i < count; ++i) {
        if (c[i].psi < 0.0 && c[i].psi < d - PAIR_DEPTH_TOLERANCE) continue;
        attained |= c[i].psi <= d + PAIR_DEPTH_TOLERANCE;
        c[kept++] = c[i];
    }
    if (kept < count && closest) {
        memset(closest, 0, sizeof *closest);
        closest->body_a = closest->body_b = closest->shape_a = closest->shape_b = -1;
        closest->kind = PP_CONTACT_POINT;
        closest->feature_a = closest->feature_b = -1;
        memcpy(closest->p_a, near.p_a, sizeof closest->p_a);
        memcpy(closest->n, near.n, sizeof closest->n);
        closest->psi = d;
        if (add_closest) *add_closest = !attained;
    }
    return kept;
}

/* The standard model's contacts of one near pair (pegplus/narrowphase.h), each a U set. */
static pp_status pair_contacts(const pp_step_scratch *s, pp_constraint_list *l, int a, int b,
                               double eps_ab, const pp_surface *surface,
                               const pp_surface_ext *ext)
{
    int first = l->contact_count, needed = 0;
    for (;;) {
        int count = first;
        pp_status st = pp_narrowphase_contacts(&s->shapes[a], &s->shapes[b], eps_ab,
                                               PP_APPL_VF_DEFAULT, l->contacts,
                                               l->contact_capacity, &count, &needed);
        if (st == PP_OK) {
            count = pp_terrain_pair_rule(s, l->contacts, first, count, a, b);
            count = first + drop_duplicate_contacts(&l->contacts[first], count - first);
            pp_contact closest;
            int add_closest = 0;
            count = first + pp_contacts_at_pair_depth(s, &l->contacts[first], count - first, a,
                                                      b, &closest, &add_closest);
            if (add_closest) { /* in the room of a dropped contact */
                l->contacts[count++] = closest;
            }
            st = label_contacts(s, l, first, count, a, b, surface, ext, 1);
            if (st == PP_OK) st = add_u_sets(l, first, count);
            if (st == PP_OK) l->contact_count = count;
            return st;
        }
        if (st != PP_ERR_NO_MEMORY || needed <= l->contact_capacity) return st;
        st = pp_grow((void **)&l->contacts, &l->contact_capacity, needed, sizeof(pp_contact));
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
 * iw->pose_work as the views va, vb. */
pp_status pp_pose_pair(pp_island_work *iw, const pp_shape *sa, const pp_shape *sb,
                       pp_polytope_view *va, pp_polytope_view *vb)
{
    int need = pose_size(sa) + (sb->kind == PP_SHAPE_POLYTOPE ? pose_size(sb) : 0);
    pp_status st = pp_grow((void **)&iw->pose_work, &iw->pose_work_capacity, need, sizeof(double));
    if (st != PP_OK) return st;
    pose_polytope(sa, iw->pose_work, va);
    if (sb->kind == PP_SHAPE_POLYTOPE) pose_polytope(sb, iw->pose_work + pose_size(sa), vb);
    return PP_OK;
}

/* Contact c between polytope A (va) and B, a polytope (vb) or the plane sb, re-evaluated at
 * the views' poses (pp_peg_contact_update); 0 when it cannot be. */
int pp_update_contact(const pp_shape *sb, const pp_polytope_view *va,
                          const pp_polytope_view *vb, pp_contact *c)
{
    return sb->kind == PP_SHAPE_POLYTOPE ? pp_peg_contact_update(va, vb, NULL, 0.0, c)
                                         : pp_peg_contact_update(va, NULL, sb->normal, sb->offset, c);
}

/*
 * PEG's constraint sets of one near pair (PEG Sec. 5, pegplus/peg.h): polytope against
 * polytope gives U/I/X sets from the pair's configurations (vertex–face, edge–edge,
 * vertex–edge, vertex–vertex); polytope against a plane one U per vertex below eps (a
 * half-space has no edges or corners to trap anything). Spheres and capsules are smooth:
 * their closest-point contacts are exact, so they keep the standard U constraints; so do a
 * cylinder's exact contacts with a plane (rim points) and a sphere. Against polytopes and
 * cylinders a cylinder is its inscribed prism turned to the pair (pegplus/geometry.h), a
 * polytope with U/I/X sets.
 */
/*
 * Are shapes a and b at rest relative to each other over the step: does no point of one move
 * more than PP_REST_DISPLACEMENT relative to the other in dt? Measured on a side with a body
 * (swapped so that a has one; a static side has no motion): with
 * u = v_a - v_b - w_b x (c_a - c_b) the relative velocity of a point x of a is
 * u + (w_a - w_b) x (x - c_a), so pp_body_at_rest's bound with a's reach applies to the twist
 * (u, w_a - w_b); against static geometry that is a's own motion. Bodies moving together (a
 * gripper's fingers and the cube they lift, a box riding on another) are at rest relative to
 * each other; a shared acceleration (gravity) does not change it within the step.
 */
static int pair_at_relative_rest(const pp_world *world, int a, int b, double dt)
{
    const pp_step_scratch *s = &world->scratch;
    int ba = s->shape_body[a], bb = s->shape_body[b];
    if (ba < 0) {
        ba = bb;
        bb = -1;
    }
    const pp_body *A = &world->bodies[ba], *B = bb >= 0 ? &world->bodies[bb] : NULL;
    double u[3], dw[3];
    if (!B) return pp_body_at_rest(world, ba, A->v, A->w, dt);
    const double d[3] = {A->x[0] - B->x[0], A->x[1] - B->x[1], A->x[2] - B->x[2]};
    const double wxd[3] = {B->w[1] * d[2] - B->w[2] * d[1], B->w[2] * d[0] - B->w[0] * d[2],
                           B->w[0] * d[1] - B->w[1] * d[0]};
    for (int k = 0; k < 3; ++k) {
        u[k] = A->v[k] - B->v[k] - wxd[k];
        dw[k] = A->w[k] - B->w[k];
    }
    return pp_body_at_rest(world, ba, u, dw, dt);
}

/* A cylinder's pair met as its turned prism: the exact contacts the prism's sets miss (edge
 * to parallel edge; pp_narrowphase_cylinder_closest), each as a U set. */
static pp_status cylinder_closest_set(const pp_step_scratch *s, pp_constraint_list *l,
                                      int first_contact, int a, int b, double eps_ab,
                                      const pp_surface *surface, const pp_surface_ext *ext)
{
    pp_contact exact[5];
    int extra = pp_narrowphase_cylinder_closest(&s->shapes[a], &s->shapes[b], eps_ab,
                                                l->contacts + first_contact,
                                                l->contact_count - first_contact, exact);
    if (extra == 0) return PP_OK;
    int c = l->contact_count;
    pp_status st = pp_grow((void **)&l->contacts, &l->contact_capacity, c + extra,
                          sizeof(pp_contact));
    if (st != PP_OK) return st;
    for (int i = 0; i < extra; ++i) l->contacts[c + i] = exact[i];
    st = label_contacts(s, l, c, c + extra, a, b, surface, ext, 1);
    if (st == PP_OK) st = add_u_sets(l, c, c + extra);
    if (st == PP_OK) l->contact_count = c + extra;
    return st;
}

static pp_status pair_peg_sets(const pp_world *world, pp_island_work *iw,
                               pp_constraint_list *l, int a, int b, double eps_ab,
                               const pp_surface *surface, const pp_surface_ext *ext)
{
    const pp_step_scratch *s = &world->scratch;
    /* a cylinder meets polytopes and cylinders as its prism (pegplus/geometry.h) */
    pp_shape form_a = pp_shape_pair_form(&s->shapes[a], &s->shapes[b]);
    pp_shape form_b = pp_shape_pair_form(&s->shapes[b], &s->shapes[a]);
    const pp_shape *sa = &form_a, *sb = &form_b;
    int poly_a = sa->kind == PP_SHAPE_POLYTOPE, poly_b = sb->kind == PP_SHAPE_POLYTOPE;
    int plane_a = sa->kind == PP_SHAPE_PLANE, plane_b = sb->kind == PP_SHAPE_PLANE;
    if (!((poly_a && poly_b) || (poly_a && plane_b) || (plane_a && poly_b)) ||
        s->shape_terrain[a] || s->shape_terrain[b]) /* terrain: U sets (docs/design.md) */
        return pair_contacts(s, l, a, b, eps_ab, surface, ext);
    if (plane_a) { /* the polytope is A of the sets: swap the pair */
        int t = a;
        a = b;
        b = t;
        sa = &form_b;
        sb = &form_a;
    }
    pp_status st = PP_OK;
    if (!iw->peg_builder) st = pp_peg_builder_create(&iw->peg_builder);
    pp_polytope_view va, vb;
    if (st == PP_OK) st = pp_pose_pair(iw, sa, sb, &va, &vb);
    if (st != PP_OK) return st;

    /* Implied sets are removed in resting islands (world.c build_island) and between shapes
     * at rest relative to each other: their exact coincidences of rows hold from one pose of
     * the step to the next, so the re-linearisation sees the same sets. The vertex sets under
     * a vertex–vertex X (Rule 3, pegplus/peg.h) only in resting islands: the X implies them
     * as sets, not row by row, and an island whose first solve leaves it moving is built
     * again without them (relinearize.c), so Rule 3 only ever shapes an answer at rest, where
     * the rows' lever arms do not matter. (Applied to pairs at relative rest in moving islands
     * as well, a brick wall hit by a box ended a step 6.3e-9 m deep, check_peg_walls.) */
    pp_peg_params params = pp_peg_params_default();
    params.reduce = !iw->unreduced ? PP_PEG_REDUCE_CORNERS
                                   : pair_at_relative_rest(world, a, b, iw->dt);
    int first_contact = l->contact_count, first_set = l->set_count;
    for (;;) {
        pp_peg_output out = {l->sets, l->set_capacity, first_set, 0,
                             l->contacts, NULL, l->contact_capacity, first_contact, 0};
        st = sb->kind == PP_SHAPE_POLYTOPE
                 ? pp_peg_constraints_polytopes_moving(iw->peg_builder, &va, &vb, eps_ab,
                                                       s->shape_motion[a] + s->shape_motion[b],
                                                       &params, &out)
                 : pp_peg_constraints_polytope_plane(&va, sb->normal, sb->offset, eps_ab, &out);
        if (st == PP_OK) {
            st = label_contacts(s, l, first_contact, out.contact_count, a, b, surface, ext,
                                sb->kind == PP_SHAPE_PLANE);
            if (st != PP_OK) return st;
            l->contact_count = out.contact_count;
            l->set_count = out.set_count;
            return cylinder_closest_set(s, l, first_contact, a, b, eps_ab, surface, ext);
        }
        if (st != PP_ERR_NO_MEMORY || (out.sets_needed <= l->set_capacity &&
                                       out.contacts_needed <= l->contact_capacity))
            return st;
        st = pp_grow((void **)&l->sets, &l->set_capacity, out.sets_needed, sizeof(pp_peg_set));
        if (st == PP_OK)
            st = pp_grow((void **)&l->contacts, &l->contact_capacity, out.contacts_needed,
                        sizeof(pp_contact));
        if (st != PP_OK) return st;
    }
}

/* Which contacts carry an impulse: the first of each set, its primary; for the contacts from
 * first_contact on and the sets from first_set on (those before are indexed already). */
static pp_status index_from(pp_constraint_list *l, int first_contact, int first_set)
{
    int nc = l->contact_count;
    pp_status st = pp_grow((void **)&l->primary, &l->primary_capacity, nc > 0 ? nc : 1, 1);
    if (st != PP_OK) return st;
    if (nc > first_contact) memset(l->primary + first_contact, 0, (size_t)(nc - first_contact));
    for (int j = first_set; j < l->set_count; ++j) l->primary[l->sets[j].first] = 1;
    return PP_OK;
}

pp_status pp_constraint_list_index(pp_constraint_list *l)
{
    return index_from(l, 0, 0);
}

/* Append a set (its contacts and 3 restitution values per contact) to a list. */
pp_status pp_constraint_list_append(pp_constraint_list *l, const pp_peg_set *set,
                                    const pp_contact *c, const double *r)
{
    int nc = l->contact_count + set->count;
    pp_status st = pp_grow((void **)&l->sets, &l->set_capacity, l->set_count + 1, sizeof(pp_peg_set));
    if (st == PP_OK) st = pp_grow((void **)&l->contacts, &l->contact_capacity, nc, sizeof(pp_contact));
    if (st == PP_OK)
        st = pp_grow((void **)&l->restitution, &l->restitution_capacity, 3 * nc, sizeof(double));
    if (st != PP_OK) return st;
    pp_peg_set *w = &l->sets[l->set_count++];
    *w = *set;
    w->first = l->contact_count;
    memcpy(&l->contacts[w->first], c, (size_t)set->count * sizeof(pp_contact));
    memcpy(&l->restitution[3 * w->first], r, 3 * (size_t)set->count * sizeof(double));
    l->contact_count = nc;
    return PP_OK;
}

/* Contacts a and b of a list (and their restitution) trade places: a set's primary is its first
 * contact, so this is how a set is primed on another member. */
void pp_constraint_list_swap(pp_constraint_list *l, int a, int b)
{
    const pp_contact t = l->contacts[a];
    l->contacts[a] = l->contacts[b];
    l->contacts[b] = t;
    for (int r = 0; r < 3; ++r) {
        const double x = l->restitution[3 * a + r];
        l->restitution[3 * a + r] = l->restitution[3 * b + r];
        l->restitution[3 * b + r] = x;
    }
}

/* The member of set j with the largest gap psi (the first of equals), as a contact index. */
int pp_constraint_set_largest_gap(const pp_constraint_list *l, int j)
{
    const int first = l->sets[j].first;
    int best = first;
    for (int i = first + 1; i < first + l->sets[j].count; ++i)
        if (l->contacts[i].psi > l->contacts[best].psi) best = i;
    return best;
}

void pp_constraint_list_free(pp_constraint_list *l)
{
    free(l->contacts);
    free(l->restitution);
    free(l->sets);
    free(l->primary);
    memset(l, 0, sizeof *l);
}

/* Stages 3-5 on `pairs` under `model`, appended to `out` (primaries indexed). The pairs
 * passed the filters of stage 6 (same body, category bits, something dynamic). */
pp_status pp_build_constraints(const pp_world *world, pp_island_work *iw, const pp_pair *pairs,
                               int pair_count, pp_model model, pp_constraint_list *out,
                               int *near_pairs)
{
    const pp_step_scratch *s = &world->scratch;
    double eps = world->config.proximity_margin;
    const int first_contact = out->contact_count, first_set = out->set_count;
    if (!out->contacts) {
        pp_status st = pp_grow((void **)&out->contacts, &out->contact_capacity, 64, sizeof(pp_contact));
        if (st != PP_OK) return st;
    }
    int near = 0;
    for (int k = 0; k < pair_count; ++k) {
        int a = pairs[k].a, b = pairs[k].b;
        dGeomID g1 = s->shape_geom[a], g2 = s->shape_geom[b];
        double eps_ab = eps + s->shape_motion[a] + s->shape_motion[b];
        if (!pp_shapes_within(&s->shapes[a], &s->shapes[b], eps_ab)) continue;
        pp_surface surface;
        const pp_surface_ext *ext;
        if (!pp_pair_surface_of_shapes(world, a, b, &surface, &ext)) continue;
        pp_status st = check_surface(&surface, g1, g2);
        if (st != PP_OK) return st;
        ++near;
        st = model == PP_MODEL_PEG ? pair_peg_sets(world, iw, out, a, b, eps_ab, &surface, ext)
                                   : pair_contacts(s, out, a, b, eps_ab, &surface, ext);
        if (st != PP_OK) return st;
    }
    if (near_pairs) *near_pairs = near;
    /* only what this call appended: world.c builds every island into one list, and indexing
     * the whole list after each island was a pass over the step's contacts per island */
    return index_from(out, first_contact, first_set);
}

/* The statistics of stages 3-5 at the sub-step's start, from scratch.all. */
void pp_constraint_stats(pp_world *world, int near)
{
    const pp_constraint_list *l = &world->scratch.all;
    int counts[3] = {0, 0, 0};
    for (int j = 0; j < l->set_count; ++j) counts[l->sets[j].kind]++;
    int peg = world->config.model == PP_MODEL_PEG;
    world->stats.near_pairs = near;
    world->stats.peg_u_sets = peg ? counts[PP_PEG_SET_U] : 0;
    world->stats.peg_i_sets = peg ? counts[PP_PEG_SET_I] : 0;
    world->stats.peg_x_sets = peg ? counts[PP_PEG_SET_X] : 0;
    world->stats.contacts = l->contact_count;
    double min_gap = HUGE_VAL;
    for (int c = 0; c < l->contact_count; ++c)
        if (l->contacts[c].psi < min_gap) min_gap = l->contacts[c].psi;
    world->stats.min_gap = l->contact_count ? min_gap : 0.0;
}
