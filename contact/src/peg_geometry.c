/*
 * PEG geometry (PEG Secs 4–5; pegplus/peg.h): applicability and feasibility tests, edge
 * orientation, the same-frame flip, and the classification of a near polytope pair into
 * vertex–vertex, vertex–edge, edge–edge and vertex–face configurations.
 *
 * Everything works on posed views (pp_polytope_view): the t-vectors and orientation vectors
 * the authors stored per edge are recomputed from the posed face normals, so nothing here
 * depends on the body frame.
 */
#include "peg_internal.h"

#include "geometry_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double INSIDE_TOLERANCE = 1e-9;   /* m, as features.c */
static const double PARALLEL_TOLERANCE = 1e-9; /* |e_a x e_b| <= tol |e_a||e_b|: parallel */
static const double TIE_TOLERANCE = 1e-12;     /* m, psi ties in the one-face choice */
/* Rounding slack of the near-feature filters, per metre of 1 + the largest coordinate
 * (classify_near_features, pp_peg_feasibility_vf_near) */
static const double NEAR_SLACK = 1e-9;

static const double *vertex_of(const pp_polytope_view *p, int v) { return p->vertices + 3 * v; }
static const double *normal_of(const pp_polytope_view *p, int f) { return p->face_normals + 3 * f; }

/* ---- Parameters ------------------------------------------------------------------------- */

pp_peg_params pp_peg_params_default(void)
{
    pp_peg_params p;
    p.delta = 0.0025;
    p.phi = 0.4;
    p.appl_vf = -0.3;
    p.appl_vv = -0.4;
    p.appl_ee = -0.4;
    p.appl_ve_edge = -0.1;
    p.appl_x = -1e-9;
    p.coplanar_cos = 0.995;
    p.reduce = 1;
    return p;
}

pp_status pp_peg_params_validate(const pp_peg_params *p)
{
    if (!p) {
        pp_log(PP_LOG_ERROR, "pp_peg_params_validate: NULL params");
        return PP_ERR_NULL_ARGUMENT;
    }
    const double appl[5] = {p->appl_vf, p->appl_vv, p->appl_ee, p->appl_ve_edge, p->appl_x};
    const char *names[5] = {"appl_vf", "appl_vv", "appl_ee", "appl_ve_edge", "appl_x"};
    if (!(p->delta >= 0.0) || !isfinite(p->delta)) {
        pp_log(PP_LOG_ERROR, "pp_peg_params: delta = %g must be finite and >= 0", p->delta);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (!(p->phi >= 0.0 && p->phi <= 1.5707963267948966)) {
        pp_log(PP_LOG_ERROR, "pp_peg_params: phi = %g outside [0, pi/2]", p->phi);
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < 5; ++i)
        if (!(appl[i] >= -1.0 && appl[i] <= 1.0)) {
            pp_log(PP_LOG_ERROR, "pp_peg_params: %s = %g outside [-1, 1]", names[i], appl[i]);
            return PP_ERR_INVALID_ARGUMENT;
        }
    if (!(p->coplanar_cos > 0.0 && p->coplanar_cos <= 1.0)) {
        pp_log(PP_LOG_ERROR, "pp_peg_params: coplanar_cos = %g outside (0, 1]", p->coplanar_cos);
        return PP_ERR_INVALID_ARGUMENT;
    }
    return PP_OK;
}

const char *pp_peg_config_kind_string(pp_peg_config_kind kind)
{
    switch (kind) {
    case PP_PEG_VERTEX_FACE: return "vertex-face";
    case PP_PEG_FACE_VERTEX: return "face-vertex";
    case PP_PEG_EDGE_EDGE: return "edge-edge";
    case PP_PEG_VERTEX_EDGE: return "vertex-edge";
    case PP_PEG_EDGE_VERTEX: return "edge-vertex";
    case PP_PEG_VERTEX_VERTEX: return "vertex-vertex";
    case PP_PEG_PLANE: return "vertex-plane";
    case PP_PEG_SEPARATING: return "separating";
    }
    return "unknown";
}

/* ---- Applicability ------------------------------------------------------------------------ */

/* Eq 28, relaxed: min over the edges leaving v_a of their elevation above f_b's plane. */
double pp_peg_applicability_vf(const pp_polytope_view *a, int v, const pp_polytope_view *b, int f)
{
    const double *eta = normal_of(b, f);
    double worst = 1.0;
    for (int k = a->neighbour_first[v]; k < a->neighbour_first[v + 1]; ++k) {
        double d[3];
        pp_v3_sub(d, vertex_of(a, a->neighbours[k]), vertex_of(a, v));
        double len = pp_v3_norm(d);
        if (len > 0.0) worst = fmin(worst, pp_v3_dot(eta, d) / len);
    }
    return worst;
}

/* Unit t-vectors of edge e (docs/references.md): t1 = eta_f1 x e into f1, t2 = e x eta_f2 into
 * f2. */
static void edge_t_vectors(const pp_polytope_view *p, int e, double d[3], double t1[3],
                           double t2[3])
{
    const int *edge = p->edges + 4 * e;
    pp_v3_sub(d, vertex_of(p, edge[1]), vertex_of(p, edge[0]));
    pp_v3_cross(t1, normal_of(p, edge[2]), d);
    pp_v3_cross(t2, d, normal_of(p, edge[3]));
    pp_v3_scale(t1, 1.0 / pp_v3_norm(t1), t1);
    pp_v3_scale(t2, 1.0 / pp_v3_norm(t2), t2);
}

/*
 * APPL^ee (authors' applicability_ee). With n = e_a x e_b / |.|, the edge e_a is A's extreme
 * feature along n iff both of A's faces at e_a recede from n: n . t_a1 <= 0, n . t_a2 <= 0;
 * e_b is B's extreme along -n iff n . t_b1 >= 0, n . t_b2 >= 0. So min(-d) >= 0 is the
 * classical test for n (A -> B along +n) and min(d) >= 0 the test for -n; the relaxed value
 * is the better of the two, and its sign orients the contact normal.
 *
 * The relaxation needs a domain. In the plane normal to e_a, let the outward normals of e_a's
 * faces be at angles 0 and theta (theta = the exterior dihedral angle, the arc of e_a's
 * normal cone) and n at angle beta: n . t_1 = -sin(beta), n . t_2 = sin(beta - theta), so
 * min(-n . t_1, -n . t_2) >= -r holds on [-asin r, theta + asin r] (the arc widened by asin r,
 * as meant) and ALSO on [theta + pi - asin r, pi + asin r] around the antipode of the arc,
 * which is non-empty when theta < 2 asin r (r = 0.4: edges flatter than 47 degrees). There
 * n points INTO both of e_a's faces: the edge is on the far side of A, and psi_ee is no gap of
 * A and B (its sign is arbitrary: a thin prism 1 mm above a roof ridge got psi = -0.011, two
 * hulls overlapping by 0.06 mm got psi = -0.035, and such a pair appearing at a predicted
 * pose made the re-linearisation leap). The
 * t-vector test is a test of n within 90 degrees of the arc's bisector: an orientation is
 * applicable only where n . (eta_a1 + eta_a2) > 0 and n . (eta_b1 + eta_b2) < 0 (n leaves A
 * and enters B across their edges: the authors' sign rule with edge_edge_3d.m's check from
 * A's side, docs/references.md), and gets -1 (never applicable) outside it.
 */
static double applicability_ee(const pp_polytope_view *a, int ea, const double *fa,
                               const pp_polytope_view *b, int eb, const double *fb,
                               double normal[3])
{
    const double *da = fa, *ta1 = fa + 3, *ta2 = fa + 6, *db = fb, *tb1 = fb + 3, *tb2 = fb + 6;
    double n[3];
    pp_v3_cross(n, da, db);
    double len = pp_v3_norm(n);
    if (len <= PARALLEL_TOLERANCE * pp_v3_norm(da) * pp_v3_norm(db)) {
        if (normal) normal[0] = normal[1] = normal[2] = 0.0;
        return -1.0;
    }
    pp_v3_scale(n, 1.0 / len, n);
    double d[4] = {pp_v3_dot(n, ta1), pp_v3_dot(n, ta2), -pp_v3_dot(n, tb1), -pp_v3_dot(n, tb2)};
    double min_d = fmin(fmin(d[0], d[1]), fmin(d[2], d[3]));
    double min_neg = fmin(fmin(-d[0], -d[1]), fmin(-d[2], -d[3]));
    const int *ga = a->edges + 4 * ea, *gb = b->edges + 4 * eb;
    double bis_a = pp_v3_dot(n, normal_of(a, ga[2])) + pp_v3_dot(n, normal_of(a, ga[3]));
    double bis_b = pp_v3_dot(n, normal_of(b, gb[2])) + pp_v3_dot(n, normal_of(b, gb[3]));
    if (!(bis_a > 0.0 && bis_b < 0.0)) min_neg = -1.0; /* +n outside its domain */
    if (!(bis_a < 0.0 && bis_b > 0.0)) min_d = -1.0;   /* -n outside its domain */
    if (normal) pp_v3_scale(normal, min_neg >= min_d ? 1.0 : -1.0, n);
    return fmax(min_d, min_neg);
}

double pp_peg_applicability_ee(const pp_polytope_view *a, int ea, const pp_polytope_view *b,
                               int eb, double normal[3])
{
    double fa[9], fb[9];
    edge_t_vectors(a, ea, fa, fa + 3, fa + 6);
    edge_t_vectors(b, eb, fb, fb + 3, fb + 6);
    return applicability_ee(a, ea, fa, b, eb, fb, normal);
}

void pp_peg_edge_frames(const pp_polytope_view *p, double *frames)
{
    for (int e = 0; e < p->edge_count; ++e)
        edge_t_vectors(p, e, frames + 9 * e, frames + 9 * e + 3, frames + 9 * e + 6);
}

double pp_peg_applicability_ee_framed(const pp_polytope_view *a, int ea, const double *frames_a,
                                      const pp_polytope_view *b, int eb, const double *frames_b,
                                      double normal[3])
{
    return applicability_ee(a, ea, frames_a + 9 * ea, b, eb, frames_b + 9 * eb, normal);
}

void pp_peg_edge_orientation(const pp_polytope_view *p, int e, double out[3])
{
    const int *edge = p->edges + 4 * e;
    double d[3], bis[3];
    pp_v3_sub(d, vertex_of(p, edge[1]), vertex_of(p, edge[0]));
    pp_v3_add(bis, normal_of(p, edge[2]), normal_of(p, edge[3]));
    pp_v3_scale(bis, -1.0, bis);
    pp_v3_cross(out, d, bis);
}

/* ---- Distances ---------------------------------------------------------------------------- */

double pp_peg_point_segment(const double x[3], const double s0[3], const double s1[3],
                            double closest[3])
{
    double d[3], r[3], c[3];
    pp_v3_sub(d, s1, s0);
    pp_v3_sub(r, x, s0);
    double dd = pp_v3_dot(d, d), t = dd > 0.0 ? pp_v3_dot(r, d) / dd : 0.0;
    t = fmin(1.0, fmax(0.0, t));
    pp_v3_axpy(c, s0, t, d);
    if (closest) pp_v3_copy(closest, c);
    pp_v3_sub(r, x, c);
    return pp_v3_norm(r);
}

static double clamp01(double x) { return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x; }

/* Ericson §5.1.9: minimise |p0 + s d1 - q0 - t d2|^2 over [0,1]^2. The unconstrained s of the
 * two lines is clamped, t follows from s and is clamped, and s is recomputed from a clamped t;
 * the objective is convex, so this reaches the minimum. Parallel lines (denominator
 * a e - b^2 <= 1e-12 a e): any s is optimal for the lines, s = 0 is taken. */
double pp_peg_segments_closest(const double p0[3], const double p1[3], const double q0[3],
                               const double q1[3], double c_p[3], double c_q[3], double *s_out,
                               double *t_out)
{
    double d1[3], d2[3], r[3];
    pp_v3_sub(d1, p1, p0);
    pp_v3_sub(d2, q1, q0);
    pp_v3_sub(r, p0, q0);
    double a = pp_v3_dot(d1, d1), e = pp_v3_dot(d2, d2), f = pp_v3_dot(d2, r);
    double s, t;
    if (a <= 1e-300 && e <= 1e-300) {
        s = t = 0.0;
    } else if (a <= 1e-300) {
        s = 0.0;
        t = clamp01(f / e);
    } else {
        double c = pp_v3_dot(d1, r);
        if (e <= 1e-300) {
            t = 0.0;
            s = clamp01(-c / a);
        } else {
            double b = pp_v3_dot(d1, d2), denom = a * e - b * b;
            s = denom > 1e-12 * a * e ? clamp01((b * f - c * e) / denom) : 0.0;
            t = (b * s + f) / e;
            if (t < 0.0) {
                t = 0.0;
                s = clamp01(-c / a);
            } else if (t > 1.0) {
                t = 1.0;
                s = clamp01((b - c) / a);
            }
        }
    }
    double cp[3], cq[3], gap[3];
    pp_v3_axpy(cp, p0, s, d1);
    pp_v3_axpy(cq, q0, t, d2);
    if (c_p) pp_v3_copy(c_p, cp);
    if (c_q) pp_v3_copy(c_q, cq);
    if (s_out) *s_out = s;
    if (t_out) *t_out = t;
    pp_v3_sub(gap, cq, cp);
    return pp_v3_norm(gap);
}

/* ---- Feasibility -------------------------------------------------------------------------- */

/* x in f's plane: inside the CCW loop iff (p_{i+1} - p_i) x (x - p_i) . eta >= 0 for all i. */
static int in_face(const pp_polytope_view *p, int f, const double x[3])
{
    const int *loop = p->face_vertices + p->face_first[f];
    int n = p->face_first[f + 1] - p->face_first[f];
    for (int i = 0; i < n; ++i) {
        const double *p0 = vertex_of(p, loop[i]), *p1 = vertex_of(p, loop[(i + 1) % n]);
        double e[3], r[3], c[3];
        pp_v3_sub(e, p1, p0);
        pp_v3_sub(r, x, p0);
        pp_v3_cross(c, e, r);
        if (pp_v3_dot(c, normal_of(p, f)) < -INSIDE_TOLERANCE * pp_v3_norm(e)) return 0;
    }
    return 1;
}

/* Spec §3 feasibility (authors' feasibility_vf): psi, the distance D to the face, and the
 * elevation asin(psi/D) of v seen from the face's nearest point when v is outside the face's
 * prism. A vertex slightly under a face it projects into (psi >= -delta) may still be pushed
 * out through it; one far outside the prism and well below the plane (angle < -phi) belongs
 * to another face. */
static pp_peg_vf_test feasibility_vf(const pp_polytope_view *a, int v, const pp_polytope_view *b,
                                     int f, double eps, const pp_peg_params *params,
                                     const double *sphere)
{
    pp_peg_params defaults;
    if (!params) {
        defaults = pp_peg_params_default();
        params = &defaults;
    }
    pp_peg_vf_test r = {0, 0, 0.0, 0.0, 0.0};
    const double *x = vertex_of(a, v), *eta = normal_of(b, f);
    r.psi = pp_v3_dot(eta, x) - b->face_offsets[f];
    double proj[3];
    pp_v3_axpy(proj, x, -r.psi, eta);
    r.inside = in_face(b, f, proj);
    if (r.inside) {
        r.distance = fabs(r.psi);
    } else {
        if (sphere) { /* pp_peg_feasibility_vf_near: farther than eps from the face's sphere */
            double d[3];
            pp_v3_sub(d, proj, sphere);
            const double scale = 1.0 + fmax(fmax(fabs(sphere[0]), fabs(sphere[1])),
                                             fabs(sphere[2])) + sphere[3];
            const double beyond = pp_v3_norm(d) - sphere[3];
            if (beyond > eps + NEAR_SLACK * scale) {
                r.outside = beyond;
                r.distance = HUGE_VAL;
                return r;
            }
        }
        const int *loop = b->face_vertices + b->face_first[f];
        int n = b->face_first[f + 1] - b->face_first[f];
        r.outside = HUGE_VAL;
        for (int i = 0; i < n; ++i)
            r.outside = fmin(r.outside, pp_peg_point_segment(proj, vertex_of(b, loop[i]),
                                                             vertex_of(b, loop[(i + 1) % n]),
                                                             NULL));
        r.distance = sqrt(r.psi * r.psi + r.outside * r.outside);
    }
    if (fabs(r.psi) > eps || r.distance > eps || r.outside > eps) return r;
    if (r.inside)
        r.feasible = r.psi >= -params->delta;
    else
        r.feasible = r.distance <= 0.0 || asin(fmax(-1.0, fmin(1.0, r.psi / r.distance))) >= -params->phi;
    return r;
}

pp_peg_vf_test pp_peg_feasibility_vf(const pp_polytope_view *a, int v, const pp_polytope_view *b,
                                     int f, double eps, const pp_peg_params *params)
{
    return feasibility_vf(a, v, b, f, eps, params, NULL);
}

/*
 * The face's sphere (pp_peg_face_spheres) bounds the distance to the face polygon from below:
 * every point of the polygon is within its radius rho of its centre c, so a projection proj
 * outside the polygon (in_face) is at least |proj - c| - rho from it. Where that exceeds eps by
 * more than the rounding of the distances (NEAR_SLACK of the coordinates), the plain test's
 * minimum over the face's edges is > eps as well, and it would return not feasible with
 * distance > eps: the same decision, without the edges' distances. Only the outside case: a
 * projection in_face accepts (its tolerance) is measured as before.
 */
pp_peg_vf_test pp_peg_feasibility_vf_near(const pp_polytope_view *a, int v,
                                          const pp_polytope_view *b, int f, double eps,
                                          const pp_peg_params *params, const double sphere[4])
{
    return feasibility_vf(a, v, b, f, eps, params, sphere);
}

void pp_peg_face_spheres(const pp_polytope_view *p, double *spheres)
{
    for (int f = 0; f < p->face_count; ++f) {
        const int *loop = p->face_vertices + p->face_first[f];
        const int n = p->face_first[f + 1] - p->face_first[f];
        double *c = spheres + 4 * f, rho = 0.0;
        c[0] = c[1] = c[2] = 0.0;
        for (int i = 0; i < n; ++i) pp_v3_add(c, c, vertex_of(p, loop[i]));
        pp_v3_scale(c, 1.0 / n, c);
        for (int i = 0; i < n; ++i) {
            double d[3];
            pp_v3_sub(d, vertex_of(p, loop[i]), c);
            rho = fmax(rho, pp_v3_norm(d));
        }
        c[3] = rho;
    }
}

int pp_peg_feasibility_ee(const pp_polytope_view *a, int ea, const pp_polytope_view *b, int eb,
                          double eps, double p_a[3], double p_b[3], double *distance)
{
    const int *e1 = a->edges + 4 * ea, *e2 = b->edges + 4 * eb;
    double d = pp_peg_segments_closest(vertex_of(a, e1[0]), vertex_of(a, e1[1]),
                                       vertex_of(b, e2[0]), vertex_of(b, e2[1]), p_a, p_b, NULL,
                                       NULL);
    if (distance) *distance = d;
    return d <= eps;
}

/* ---- Contacts ----------------------------------------------------------------------------- */

void pp_peg_contact_flip(pp_contact *c)
{
    int t = c->body_a;
    c->body_a = c->body_b;
    c->body_b = t;
    t = c->shape_a;
    c->shape_a = c->shape_b;
    c->shape_b = t;
    t = c->feature_a;
    c->feature_a = c->feature_b;
    c->feature_b = t;
    if (c->kind == PP_CONTACT_VERTEX_FACE)
        c->kind = PP_CONTACT_FACE_VERTEX;
    else if (c->kind == PP_CONTACT_FACE_VERTEX)
        c->kind = PP_CONTACT_VERTEX_FACE;
    pp_v3_axpy(c->p_a, c->p_a, c->psi, c->n);
    pp_v3_scale(c->n, -1.0, c->n);
    pp_v3_scale(c->motion, -1.0, c->motion); /* B relative to A: the other way round */
}

/*
 * An edge-edge contact of p's edge against q's, built p -> q, written q -> p. Where both
 * segments' closest points are interior they are the feet of the lines' common perpendicular,
 * c_q = c_p + psi n, and the same-frame flip (p_a + psi n) is q's closest point. Where one is
 * clamped to an edge's end, c_q - c_p = psi n + w with w perpendicular to n, and the flip would
 * put the contact's point on q (the new A) at c_q - w, off q's closest point by |w|, while the
 * contact built q -> p, and every re-evaluation of it in that frame (pp_peg_contact_update),
 * has it at c_q. So there p_a is c_q: the same contact whichever side built it. Measured (PEG
 * pouring seed 13, mu = 0.5, h = 0.01, step 395): an edge pair clamped at one edge's end (s = 1)
 * sat in an X set of the working set, carried (p_a = c_q) and, at the iterates where the set
 * was built again at the pose from the other body's side, flipped (p_a = c_q - w), 1.6 cm
 * apart; its impulse (0.37 N s) turned a hull about one lever arm or the other from iterate to
 * iterate, the iteration cycled (residual 0.13 m/s) and the step kept an estimate 1.6e-8 m
 * deep, 3.4e-10 m^3 of overlap.
 */
void pp_peg_edge_edge_flip(const pp_polytope_view *p, const pp_polytope_view *q, pp_contact *c)
{
    pp_peg_contact_flip(c);
    const int *gq = q->edges + 4 * c->feature_a, *gp = p->edges + 4 * c->feature_b;
    double c_q[3], s, t;
    pp_peg_segments_closest(vertex_of(q, gq[0]), vertex_of(q, gq[1]), vertex_of(p, gp[0]),
                            vertex_of(p, gp[1]), c_q, NULL, &s, &t);
    if (!(s > 0.0 && s < 1.0 && t > 0.0 && t < 1.0)) pp_v3_copy(c->p_a, c_q);
}

int pp_peg_contact_update(const pp_polytope_view *a, const pp_polytope_view *b,
                          const double plane_normal[3], double plane_offset, pp_contact *c)
{
    PP_ASSERT(a && c && (b || plane_normal), "pp_peg_contact_update: NULL argument");
    double n[3], psi;
    switch (c->kind) {
    case PP_CONTACT_VERTEX_FACE: { /* vertex of A, face of B (or A's vertex on the plane) */
        if (c->feature_a < 0 || c->feature_a >= a->vertex_count) return 0;
        const double *v = vertex_of(a, c->feature_a);
        if (!b) {
            if (c->feature_b != -1) return 0;
            pp_v3_scale(n, -1.0, plane_normal);
            psi = pp_v3_dot(plane_normal, v) - plane_offset;
        } else {
            if (c->feature_b < 0 || c->feature_b >= b->face_count) return 0;
            pp_v3_scale(n, -1.0, normal_of(b, c->feature_b));
            psi = pp_v3_dot(normal_of(b, c->feature_b), v) - b->face_offsets[c->feature_b];
        }
        pp_v3_copy(c->p_a, v);
        break;
    }
    case PP_CONTACT_FACE_VERTEX: { /* face of A, vertex of B: the flipped vertex–face */
        if (!b || c->feature_a < 0 || c->feature_a >= a->face_count || c->feature_b < 0 ||
            c->feature_b >= b->vertex_count)
            return 0;
        const double *v = vertex_of(b, c->feature_b);
        pp_v3_copy(n, normal_of(a, c->feature_a));
        psi = pp_v3_dot(n, v) - a->face_offsets[c->feature_a];
        pp_v3_axpy(c->p_a, v, -psi, n);
        break;
    }
    case PP_CONTACT_EDGE_EDGE: {
        if (!b || c->feature_a < 0 || c->feature_a >= a->edge_count || c->feature_b < 0 ||
            c->feature_b >= b->edge_count)
            return 0;
        const int *ga = a->edges + 4 * c->feature_a, *gb = b->edges + 4 * c->feature_b;
        double da[3], db[3], r[3];
        pp_v3_sub(da, vertex_of(a, ga[1]), vertex_of(a, ga[0]));
        pp_v3_sub(db, vertex_of(b, gb[1]), vertex_of(b, gb[0]));
        pp_v3_cross(n, da, db);
        double len = pp_v3_norm(n);
        if (len <= PARALLEL_TOLERANCE * pp_v3_norm(da) * pp_v3_norm(db)) return 0;
        pp_v3_scale(n, (pp_v3_dot(n, c->n) < 0.0 ? -1.0 : 1.0) / len, n);
        pp_v3_sub(r, vertex_of(b, gb[0]), vertex_of(a, ga[0]));
        psi = pp_v3_dot(n, r);
        pp_peg_segments_closest(vertex_of(a, ga[0]), vertex_of(a, ga[1]), vertex_of(b, gb[0]),
                                vertex_of(b, gb[1]), c->p_a, NULL, NULL, NULL);
        break;
    }
    default: return 0;
    }
    pp_v3_copy(c->n, n);
    c->psi = psi;
    return 1;
}

static void contact_init(pp_contact *c, pp_contact_kind kind, int fa, int fb, const double p_a[3],
                         const double n[3], double psi)
{
    memset(c, 0, sizeof *c);
    c->body_a = c->body_b = c->shape_a = c->shape_b = -1;
    c->kind = kind;
    c->feature_a = fa;
    c->feature_b = fb;
    pp_v3_copy(c->p_a, p_a);
    pp_v3_copy(c->n, n);
    c->psi = psi;
}

void pp_peg_vertex_face_contact(const pp_polytope_view *p, int v, const pp_polytope_view *q,
                                int f, pp_contact *out)
{
    const double *eta = normal_of(q, f);
    double n[3] = {-eta[0], -eta[1], -eta[2]};
    contact_init(out, PP_CONTACT_VERTEX_FACE, v, f, vertex_of(p, v), n,
                 pp_v3_dot(eta, vertex_of(p, v)) - q->face_offsets[f]);
}

/* Largest face gap of point x against polytope q: <= 0 inside (or on), > 0 outside. */
static double point_depth(const pp_polytope_view *q, const double x[3])
{
    double m = -HUGE_VAL;
    for (int f = 0; f < q->face_count; ++f)
        m = fmax(m, pp_v3_dot(normal_of(q, f), x) - q->face_offsets[f]);
    return m;
}

/*
 * Feasibility of an edge–edge configuration's gap when it is negative. There the closest
 * points c_p, c_q are interior to both segments (no endpoint within eps of the other
 * segment) and psi = n . (c_q - c_p) < 0 says that along n the edges have passed each other.
 * For the edges' wedges with n in both normal arcs (classical applicability) and |psi| small
 * against the features around them that is a crossing, and -n runs from c_p into p's wedge.
 * But the relaxed test (APPL^ee down to -0.4) admits orientations for which the wedges say
 * nothing, and at depths up to eps the wedges are no model of the polytopes: two bodies
 * overlapping by 1 mm had an edge–edge configuration with psi = -0.14 m whose closest points
 * were 0.13 m and 0.06 m outside the other body. As a U constraint that number asked the LCP
 * to push the pair apart by eps in one step (and made the re-linearisation leap). So, as a
 * vertex under a face is feasible while psi >= -delta (PEG Sec. 4), a negative edge–edge gap is
 * feasible while it is a crossing in progress, psi >= -delta, and deeper only where the
 * crossing is verified: c_q inside p or c_p inside q. Otherwise the two edges do not overlap
 * each other at their common perpendicular and there is no contact of theirs to keep apart.
 * (Only for this configuration: the edge pairs of vertex–edge and vertex–vertex X sets meet
 * at a vertex, where the closest points are clamped to the segments' ends and an ongoing
 * crossing leaves them outside the other body.)
 */
static int edge_gap_feasible(const pp_polytope_view *p, const pp_polytope_view *q, double psi,
                             const double c_p[3], const double c_q[3], double delta)
{
    return psi >= -delta || point_depth(p, c_q) <= 0.0 || point_depth(q, c_p) <= 0.0;
}

/* psi = n . (p_q - p_p) is the signed distance of the two lines (n is perpendicular to both),
 * whichever points are used; p_a is the segment's closest point, for the lever arm. */
int pp_peg_edge_edge_contact_along(const pp_polytope_view *p, int ep, const pp_polytope_view *q,
                                   int eq, double eps, const double n[3], pp_contact *out)
{
    double cp[3], cq[3], dist, gap[3];
    int ok = pp_peg_feasibility_ee(p, ep, q, eq, eps, cp, cq, &dist);
    pp_v3_sub(gap, cq, cp);
    contact_init(out, PP_CONTACT_EDGE_EDGE, ep, eq, cp, n, pp_v3_dot(n, gap));
    return ok;
}

int pp_peg_edge_edge_contact(const pp_polytope_view *p, int ep, const pp_polytope_view *q, int eq,
                             double eps, pp_contact *out, double *appl, int *feasible)
{
    double n[3];
    double value = pp_peg_applicability_ee(p, ep, q, eq, n);
    if (n[0] == 0.0 && n[1] == 0.0 && n[2] == 0.0) return 0;
    int ok = pp_peg_edge_edge_contact_along(p, ep, q, eq, eps, n, out);
    if (appl) *appl = value;
    if (feasible) *feasible = ok;
    return 1;
}

int pp_peg_edge_lines_meet(const pp_polytope_view *p, int ep, const pp_polytope_view *q, int eq,
                           double eps)
{
    const double *p0 = vertex_of(p, p->edges[4 * ep]), *q0 = vertex_of(q, q->edges[4 * eq]);
    double d1[3], d2[3], r[3];
    pp_v3_sub(d1, vertex_of(p, p->edges[4 * ep + 1]), p0);
    pp_v3_sub(d2, vertex_of(q, q->edges[4 * eq + 1]), q0);
    pp_v3_sub(r, p0, q0);
    double a = pp_v3_dot(d1, d1), b = pp_v3_dot(d1, d2), c = pp_v3_dot(d1, r),
           e = pp_v3_dot(d2, d2), f = pp_v3_dot(d2, r), denom = a * e - b * b;
    if (!(denom > 1e-12 * a * e)) return 0;
    /* minimiser of |r + s d1 - t d2|^2 over the lines */
    double s = (b * f - c * e) / denom, t = (a * f - b * c) / denom;
    double ts = eps / sqrt(a), tt = eps / sqrt(e);
    return s >= -ts && s <= 1.0 + ts && t >= -tt && t <= 1.0 + tt;
}

/* ---- Builder scratch ---------------------------------------------------------------------- */

pp_status pp_peg_grow(void **array, int *capacity, int need, size_t size)
{
    if (need <= *capacity) return PP_OK;
    int cap = *capacity > 0 ? *capacity : 16;
    while (cap < need) {
        if (cap > (1 << 28)) return PP_ERR_NO_MEMORY;
        cap *= 2;
    }
    void *p = realloc(*array, (size_t)cap * size);
    if (!p) return PP_ERR_NO_MEMORY;
    *array = p;
    *capacity = cap;
    return PP_OK;
}

pp_status pp_peg_builder_create(pp_peg_builder **out)
{
    if (!out) {
        pp_log(PP_LOG_ERROR, "pp_peg_builder_create: NULL out");
        return PP_ERR_NULL_ARGUMENT;
    }
    *out = calloc(1, sizeof **out);
    return *out ? PP_OK : PP_ERR_NO_MEMORY;
}

void pp_peg_builder_destroy(pp_peg_builder *b)
{
    if (!b) return;
    free(b->configs);
    free(b->vertex_flags);
    free(b->candidates);
    free(b->candidate_appl);
    free(b->candidate_eligible);
    free(b->indices);
    free(b->rows);
    free(b->set_vertices);
    free(b->pair_sets);
    free(b->pair_contacts);
    free(b->pair_appl);
    free(b->set_gap);
    free(b->separating);
    free(b->separating_appl);
    free(b->edge_bounds);
    free(b->near);
    free(b->edge_frames);
    free(b->face_spheres);
    free(b->vf_memo);
    for (int i = 0; b->class_memo && i < PP_PEG_CLASS_MEMO_SLOTS; ++i) {
        free(b->class_memo[i].vertices);
        free(b->class_memo[i].edges);
        free(b->class_memo[i].configs);
        free(b->class_memo[i].flags);
    }
    free(b->class_memo);
    free(b);
}

pp_status pp_peg_builder_reserve_configs(pp_peg_builder *b, int count)
{
    return pp_peg_grow((void **)&b->configs, &b->config_capacity, count, sizeof *b->configs);
}

pp_status pp_peg_builder_reserve_flags(pp_peg_builder *b, int count)
{
    return pp_peg_grow((void **)&b->vertex_flags, &b->flag_capacity, count, 1);
}

pp_status pp_peg_builder_reserve_candidates(pp_peg_builder *b, int count)
{
    if (count <= b->candidate_capacity) return PP_OK;
    int c1 = b->candidate_capacity, c2 = b->candidate_capacity, c3 = b->candidate_capacity;
    pp_status st = pp_peg_grow((void **)&b->candidates, &c1, count, sizeof *b->candidates);
    if (st == PP_OK) st = pp_peg_grow((void **)&b->candidate_appl, &c2, count, sizeof(double));
    if (st == PP_OK) st = pp_peg_grow((void **)&b->candidate_eligible, &c3, count, 1);
    if (st != PP_OK) return st;
    /* all three grew by the same doubling from the same start */
    b->candidate_capacity = c1;
    return PP_OK;
}

pp_status pp_peg_builder_reserve_indices(pp_peg_builder *b, int count)
{
    return pp_peg_grow((void **)&b->indices, &b->index_capacity, count, sizeof *b->indices);
}

pp_status pp_peg_builder_reserve_rows(pp_peg_builder *b, int count)
{
    return pp_peg_grow((void **)&b->rows, &b->row_capacity, count, sizeof *b->rows);
}

int pp_peg_faces_at_vertex(pp_peg_builder *b, const pp_polytope_view *p, int v, int offset)
{
    int count = 0;
    for (int f = 0; f < p->face_count; ++f)
        for (int k = p->face_first[f]; k < p->face_first[f + 1]; ++k)
            if (p->face_vertices[k] == v) {
                if (pp_peg_builder_reserve_indices(b, offset + count + 1) != PP_OK) return -1;
                b->indices[offset + count++] = f;
                break;
            }
    return count;
}

int pp_peg_edges_at_vertex(pp_peg_builder *b, const pp_polytope_view *p, int v, int offset)
{
    int count = 0;
    for (int e = 0; e < p->edge_count; ++e)
        if (p->edges[4 * e] == v || p->edges[4 * e + 1] == v) {
            if (pp_peg_builder_reserve_indices(b, offset + count + 1) != PP_OK) return -1;
            b->indices[offset + count++] = e;
        }
    return count;
}

/* ---- Classification ----------------------------------------------------------------------- */

static pp_status push_config(pp_peg_builder *b, int *count, pp_peg_config_kind kind, int fa,
                             int fb, const double pa[3], const double pb[3], double distance,
                             double appl)
{
    pp_status st = pp_peg_builder_reserve_configs(b, *count + 1);
    if (st != PP_OK) return st;
    pp_peg_config *c = &b->configs[(*count)++];
    c->kind = kind;
    c->feature_a = fa;
    c->feature_b = fb;
    pp_v3_copy(c->p_a, pa);
    pp_v3_copy(c->p_b, pb);
    c->distance = distance;
    c->applicability = appl;
    return PP_OK;
}

/* A lower bound of the distance from x to segment [t, h] and between segments [t, h] and
 * [t2, h2]: the distance between the midpoints less the half lengths (triangle inequality).
 * Cheap rejections before the exact distances of the classification. */
static double segment_reach(const double *t, const double *h, double mid[3])
{
    double d[3];
    pp_v3_sub(d, h, t);
    pp_v3_axpy(mid, t, 0.5, d);
    return 0.5 * pp_v3_norm(d);
}

static int far_apart(const double a[3], double ra, const double b[3], double rb, double eps)
{
    double d[3];
    pp_v3_sub(d, a, b);
    double r = ra + rb + eps;
    return pp_v3_dot(d, d) > r * r;
}

/* Is vertex v of p within eps of edge e of q, away from both of its endpoints? `bound` is the
 * edge's midpoint and half length (segment_reach). */
static int vertex_near_edge_interior(const pp_polytope_view *p, int v, const pp_polytope_view *q,
                                     int e, const double bound[4], double eps, double closest[3],
                                     double *dist)
{
    const double *x = vertex_of(p, v), *t = vertex_of(q, q->edges[4 * e]),
                 *h = vertex_of(q, q->edges[4 * e + 1]);
    if (far_apart(x, 0.0, bound, bound[3], eps)) return 0;
    double d = pp_peg_point_segment(x, t, h, closest), r[3];
    if (d > eps) return 0;
    pp_v3_sub(r, x, t);
    if (pp_v3_norm(r) <= eps) return 0;
    pp_v3_sub(r, x, h);
    if (pp_v3_norm(r) <= eps) return 0;
    *dist = d;
    return 1;
}

static int endpoint_near_segment(const pp_polytope_view *p, int ep, const pp_polytope_view *q,
                                 int eq, double eps)
{
    const double *q0 = vertex_of(q, q->edges[4 * eq]), *q1 = vertex_of(q, q->edges[4 * eq + 1]);
    for (int k = 0; k < 2; ++k)
        if (pp_peg_point_segment(vertex_of(p, p->edges[4 * ep + k]), q0, q1, NULL) <= eps)
            return 1;
    return 0;
}

/*
 * The features that can be near the other polytope. Every configuration of steps 1-3 is a
 * pair of features within eps of each other (|v_a - v_b|, the point–segment and the
 * segment–segment distances <= eps), and every point of a feature lies in its polytope's
 * bounding box; so a vertex of p in a configuration lies within eps of q's box on every
 * axis, and an edge of p in one has its endpoints' box within eps of q's box on every axis.
 * Features outside these boxes are left out of the loops without a test: the same
 * configurations in the same order (the lists keep the features' order), as a filter of
 * candidates that the exact tests would reject. The boxes are widened by NEAR_SLACK (1 + the
 * largest coordinate) beyond eps, far above the rounding of the distances (a few ulps of the
 * coordinates), so no configuration the exact tests accept is filtered out. The loops are
 * O(V^2 + V E + E^2) a pair; on ODE's falling convex ball (cells 4 mm apart across every
 * shared face, eps 1 cm: each cell's far side is outside its neighbour's box) the
 * classification took 21 % of a step before the filter, 11 % after (docs/performance.md
 * "PEG's construction on the falling convex ball").
 */

/* Box of p's vertices. */
static void vertex_box(const pp_polytope_view *p, double lo[3], double hi[3])
{
    for (int k = 0; k < 3; ++k) lo[k] = hi[k] = p->vertex_count > 0 ? p->vertices[k] : 0.0;
    for (int v = 1; v < p->vertex_count; ++v)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], p->vertices[3 * v + k]);
            hi[k] = fmax(hi[k], p->vertices[3 * v + k]);
        }
}

/* Is the box [lo1, hi1] within r of [lo2, hi2] on every axis? */
static int boxes_within(const double lo1[3], const double hi1[3], const double lo2[3],
                        const double hi2[3], double r)
{
    for (int k = 0; k < 3; ++k)
        if (lo1[k] > hi2[k] + r || hi1[k] < lo2[k] - r) return 0;
    return 1;
}

/* p's vertices and edges near q's box [lo, hi] (within r per axis), increasing, into
 * list (vertices first, *nv of them, then *ne edges). */
static void near_features(const pp_polytope_view *p, const double lo[3], const double hi[3],
                          double r, int *list, int *nv, int *ne)
{
    int m = 0;
    for (int v = 0; v < p->vertex_count; ++v) {
        const double *x = vertex_of(p, v);
        if (boxes_within(x, x, lo, hi, r)) list[m++] = v;
    }
    *nv = m;
    for (int e = 0; e < p->edge_count; ++e) {
        const double *t = vertex_of(p, p->edges[4 * e]), *h = vertex_of(p, p->edges[4 * e + 1]);
        double elo[3], ehi[3];
        for (int k = 0; k < 3; ++k) {
            elo[k] = fmin(t[k], h[k]);
            ehi[k] = fmax(t[k], h[k]);
        }
        if (boxes_within(elo, ehi, lo, hi, r)) list[m++] = e;
    }
    *ne = m - *nv;
}

/* Steps 1-3 (pp_peg_classify_near_features without the memo). *read_faces = 1 when a face
 * normal or offset was read (the edge–edge applicability and gap tests); otherwise the output
 * is a function of the vertices, the edges' endpoints and faces, eps, appl_ee and delta. */
static pp_status classify_near_features(pp_peg_builder *b, const pp_polytope_view *a,
                                        const pp_polytope_view *q, double eps,
                                        const pp_peg_params *params, int *count, int *read_faces)
{
    *read_faces = 0;
    pp_status st = pp_peg_builder_reserve_flags(b, a->vertex_count + q->vertex_count);
    if (st != PP_OK) return st;
    unsigned char *used_a = b->vertex_flags, *used_b = b->vertex_flags + a->vertex_count;
    memset(b->vertex_flags, 0, (size_t)(a->vertex_count + q->vertex_count));
    *count = 0;
    /* every edge's midpoint and half length, once (A's edges, then B's) */
    st = pp_peg_grow((void **)&b->edge_bounds, &b->edge_bound_capacity,
                     4 * (a->edge_count + q->edge_count) + 4, sizeof(double));
    if (st != PP_OK) return st;
    double *bound_a = b->edge_bounds, *bound_b = b->edge_bounds + 4 * a->edge_count;
    for (int e = 0; e < a->edge_count; ++e)
        bound_a[4 * e + 3] = segment_reach(vertex_of(a, a->edges[4 * e]),
                                           vertex_of(a, a->edges[4 * e + 1]), &bound_a[4 * e]);
    for (int e = 0; e < q->edge_count; ++e)
        bound_b[4 * e + 3] = segment_reach(vertex_of(q, q->edges[4 * e]),
                                           vertex_of(q, q->edges[4 * e + 1]), &bound_b[4 * e]);
    /* the features near the other polytope's box (above): A's, then B's */
    st = pp_peg_grow((void **)&b->near, &b->near_capacity,
                     a->vertex_count + a->edge_count + q->vertex_count + q->edge_count + 1,
                     sizeof *b->near);
    if (st != PP_OK) return st;
    double lo_a[3], hi_a[3], lo_b[3], hi_b[3], scale = 0.0;
    vertex_box(a, lo_a, hi_a);
    vertex_box(q, lo_b, hi_b);
    for (int k = 0; k < 3; ++k)
        scale = fmax(scale, fmax(fmax(fabs(lo_a[k]), fabs(hi_a[k])),
                                 fmax(fabs(lo_b[k]), fabs(hi_b[k]))));
    const double reach = eps + NEAR_SLACK * (1.0 + scale);
    int nva, nea, nvb, neb;
    int *va = b->near;
    near_features(a, lo_b, hi_b, reach, va, &nva, &nea);
    const int *ea = va + nva;
    int *vb = va + nva + nea;
    near_features(q, lo_a, hi_a, reach, vb, &nvb, &neb);
    const int *eb = vb + nvb;

    /* 1. vertex–vertex */
    for (int x = 0; x < nva; ++x)
        for (int y = 0; y < nvb; ++y) {
            const int i = va[x], j = vb[y];
            double r[3];
            pp_v3_sub(r, vertex_of(q, j), vertex_of(a, i));
            double d = pp_v3_norm(r);
            if (d > eps) continue;
            st = push_config(b, count, PP_PEG_VERTEX_VERTEX, i, j, vertex_of(a, i),
                             vertex_of(q, j), d, 0.0);
            if (st != PP_OK) return st;
            used_a[i] = used_b[j] = 1;
        }

    /* 2. vertex–edge (A's vertices), then edge–vertex (B's vertices) */
    for (int x = 0; x < nva; ++x)
        for (int y = 0; y < neb; ++y) {
            const int i = va[x], e = eb[y];
            double c[3], d;
            if (!vertex_near_edge_interior(a, i, q, e, &bound_b[4 * e], eps, c, &d)) continue;
            st = push_config(b, count, PP_PEG_VERTEX_EDGE, i, e, vertex_of(a, i), c, d, 0.0);
            if (st != PP_OK) return st;
            used_a[i] = 1;
        }
    for (int y = 0; y < nvb; ++y)
        for (int x = 0; x < nea; ++x) {
            const int j = vb[y], e = ea[x];
            double c[3], d;
            if (!vertex_near_edge_interior(q, j, a, e, &bound_a[4 * e], eps, c, &d)) continue;
            st = push_config(b, count, PP_PEG_EDGE_VERTEX, e, j, c, vertex_of(q, j), d, 0.0);
            if (st != PP_OK) return st;
            used_b[j] = 1;
        }

    /* 3. edge–edge: near, non-parallel, no endpoint near the other segment, applicable */
    for (int x = 0; x < nea; ++x) {
        const int i = ea[x];
        for (int y = 0; y < neb; ++y) {
            const int j = eb[y];
            double pa[3], pb[3], d;
            if (far_apart(&bound_a[4 * i], bound_a[4 * i + 3], &bound_b[4 * j], bound_b[4 * j + 3],
                          eps))
                continue;
            if (!pp_peg_feasibility_ee(a, i, q, j, eps, pa, pb, &d)) continue;
            if (endpoint_near_segment(a, i, q, j, eps) || endpoint_near_segment(q, j, a, i, eps))
                continue;
            *read_faces = 1;
            double n[3];
            double appl = pp_peg_applicability_ee(a, i, q, j, n);
            if (!(appl > params->appl_ee)) continue; /* parallel: -1 */
            /* the closest points are interior: psi = n . (p_b - p_a), the lines' gap */
            double gap[3];
            pp_v3_sub(gap, pb, pa);
            if (!edge_gap_feasible(a, q, pp_v3_dot(n, gap), pa, pb, params->delta)) continue;
            st = push_config(b, count, PP_PEG_EDGE_EDGE, i, j, pa, pb, d, appl);
            if (st != PP_OK) return st;
        }
    }
    return PP_OK;
}

/*
 * The classification's memo. Steps 1-3 read, of the pair, only the vertices, the edges
 * (endpoints, and the faces beside them), eps, appl_ee and delta, and the face normals and
 * offsets only once an edge pair reaches the applicability test (classify_near_features'
 * read_faces); the arithmetic is deterministic. So a pair whose vertices and edges equal
 * those of a remembered classification bit for bit, with the same eps, appl_ee and delta,
 * and whose classification read no face, has that classification's configurations and
 * vertex flags exactly: the memo returns what the computation would. Bodies at rest keep
 * their vertices to the last bit from step to step (a settled column of boxes: the same
 * nine pairs' vertices at every step, while the round-off of the rotations, 1e-187, changes
 * the face normals: those are read by the sets, which are built anew), and there the
 * classification, the O(V E + E^2) part of a pair's sets, is a comparison of O(V + E) numbers.
 * Keyed by content, not by body: a pair that moved, a new pair, or one whose classification
 * read a face is classified; it is remembered (replacing the least recently used of
 * PP_PEG_CLASS_MEMO_SLOTS) unless it read a face or has more than
 * PP_PEG_CLASS_MEMO_MAX_VERTICES vertices. A memo that cannot grow only remembers less.
 */
static int memo_matches(const pp_peg_class_memo *m, const pp_polytope_view *a,
                        const pp_polytope_view *q, double eps, const pp_peg_params *params)
{
    const size_t va = (size_t)a->vertex_count, ea = (size_t)a->edge_count;
    return m->last_use != 0 && m->vertex_count_a == a->vertex_count &&
           m->vertex_count_b == q->vertex_count && m->edge_count_a == a->edge_count &&
           m->edge_count_b == q->edge_count && memcmp(&m->eps, &eps, sizeof eps) == 0 &&
           memcmp(&m->appl_ee, &params->appl_ee, sizeof eps) == 0 &&
           memcmp(&m->delta, &params->delta, sizeof eps) == 0 &&
           memcmp(m->vertices, a->vertices, 3 * va * sizeof(double)) == 0 &&
           memcmp(m->vertices + 3 * va, q->vertices, 3 * (size_t)q->vertex_count * sizeof(double)) == 0 &&
           memcmp(m->edges, a->edges, 4 * ea * sizeof(int)) == 0 &&
           memcmp(m->edges + 4 * ea, q->edges, 4 * (size_t)q->edge_count * sizeof(int)) == 0;
}

/* Remember the classification just made (b->configs[0 .. count), b->vertex_flags). */
static void memo_store(pp_peg_builder *b, const pp_polytope_view *a, const pp_polytope_view *q,
                       double eps, const pp_peg_params *params, int count)
{
    const int nv = a->vertex_count + q->vertex_count, ne = a->edge_count + q->edge_count;
    if (nv > PP_PEG_CLASS_MEMO_MAX_VERTICES) return;
    if (!b->class_memo) {
        b->class_memo = calloc(PP_PEG_CLASS_MEMO_SLOTS, sizeof *b->class_memo);
        if (!b->class_memo) return;
    }
    pp_peg_class_memo *m = &b->class_memo[0];
    for (int i = 1; i < PP_PEG_CLASS_MEMO_SLOTS && m->last_use != 0; ++i)
        if (b->class_memo[i].last_use < m->last_use) m = &b->class_memo[i];
    m->last_use = 0; /* empty until complete */
    if (pp_peg_grow((void **)&m->vertices, &m->vertex_capacity, 3 * nv, sizeof(double)) != PP_OK ||
        pp_peg_grow((void **)&m->edges, &m->edge_capacity, 4 * ne, sizeof(int)) != PP_OK ||
        pp_peg_grow((void **)&m->configs, &m->config_capacity, count > 0 ? count : 1,
                    sizeof *m->configs) != PP_OK ||
        pp_peg_grow((void **)&m->flags, &m->flag_capacity, nv, 1) != PP_OK)
        return;
    m->vertex_count_a = a->vertex_count;
    m->vertex_count_b = q->vertex_count;
    m->edge_count_a = a->edge_count;
    m->edge_count_b = q->edge_count;
    m->eps = eps;
    m->appl_ee = params->appl_ee;
    m->delta = params->delta;
    memcpy(m->vertices, a->vertices, 3 * (size_t)a->vertex_count * sizeof(double));
    memcpy(m->vertices + 3 * a->vertex_count, q->vertices,
           3 * (size_t)q->vertex_count * sizeof(double));
    memcpy(m->edges, a->edges, 4 * (size_t)a->edge_count * sizeof(int));
    memcpy(m->edges + 4 * a->edge_count, q->edges, 4 * (size_t)q->edge_count * sizeof(int));
    if (count > 0) memcpy(m->configs, b->configs, (size_t)count * sizeof *m->configs);
    memcpy(m->flags, b->vertex_flags, (size_t)nv);
    m->config_count = count;
    m->last_use = ++b->class_tick;
}

pp_status pp_peg_classify_near_features(pp_peg_builder *b, const pp_polytope_view *a,
                                        const pp_polytope_view *q, double eps,
                                        const pp_peg_params *params, int *count)
{
    for (int i = 0; b->class_memo && i < PP_PEG_CLASS_MEMO_SLOTS; ++i) {
        pp_peg_class_memo *m = &b->class_memo[i];
        if (!memo_matches(m, a, q, eps, params)) continue;
        pp_status st = pp_peg_builder_reserve_flags(b, a->vertex_count + q->vertex_count);
        if (st == PP_OK) st = pp_peg_builder_reserve_configs(b, m->config_count);
        if (st != PP_OK) return st;
        memcpy(b->vertex_flags, m->flags, (size_t)(a->vertex_count + q->vertex_count));
        if (m->config_count > 0)
            memcpy(b->configs, m->configs, (size_t)m->config_count * sizeof *b->configs);
        *count = m->config_count;
        m->last_use = ++b->class_tick;
        b->class_hits++;
        return PP_OK;
    }
    int read_faces;
    pp_status st = classify_near_features(b, a, q, eps, params, count, &read_faces);
    if (st == PP_OK && !read_faces) memo_store(b, a, q, eps, params, *count);
    return st;
}

int pp_peg_best_vertex_face(const pp_polytope_view *p, int v, const pp_polytope_view *q,
                            double eps, const pp_peg_params *params, double *appl_out,
                            double *psi_out)
{
    int best = -1;
    double best_psi = 0.0, best_appl = 0.0;
    for (int f = 0; f < q->face_count; ++f) {
        /* cheap plane test first: feasibility needs |psi| <= eps */
        double psi = pp_v3_dot(normal_of(q, f), vertex_of(p, v)) - q->face_offsets[f];
        if (fabs(psi) > eps) continue;
        pp_peg_vf_test t = pp_peg_feasibility_vf(p, v, q, f, eps, params);
        if (!t.feasible) continue;
        double appl = pp_peg_applicability_vf(p, v, q, f);
        if (!(appl > params->appl_vf)) continue;
        if (best < 0 || t.psi > best_psi + TIE_TOLERANCE ||
            (fabs(t.psi - best_psi) <= TIE_TOLERANCE && appl > best_appl)) {
            best = f;
            best_psi = t.psi;
            best_appl = appl;
        }
    }
    if (best >= 0) {
        if (appl_out) *appl_out = best_appl;
        if (psi_out) *psi_out = best_psi;
    }
    return best;
}

static int finite_view(const pp_polytope_view *p)
{
    for (int i = 0; i < 3 * p->vertex_count; ++i)
        if (!isfinite(p->vertices[i])) return 0;
    for (int f = 0; f < p->face_count; ++f)
        if (!pp_v3_finite(p->face_normals + 3 * f) || !isfinite(p->face_offsets[f])) return 0;
    return 1;
}

pp_status pp_peg_check_pair(const char *who, const pp_polytope_view *a, const pp_polytope_view *b,
                            double eps, const pp_peg_params *params)
{
    if (!a || !b) {
        pp_log(PP_LOG_ERROR, "%s: NULL polytope view", who);
        return PP_ERR_NULL_ARGUMENT;
    }
    if (!(eps > 0.0) || !isfinite(eps)) {
        pp_log(PP_LOG_ERROR, "%s: eps = %g must be finite and > 0", who, eps);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (!finite_view(a) || !finite_view(b)) {
        pp_log(PP_LOG_ERROR, "%s: NaN/Inf in a polytope view", who);
        return PP_ERR_INVALID_ARGUMENT;
    }
    return pp_peg_params_validate(params);
}

pp_status pp_peg_classify(pp_peg_builder *builder, const pp_polytope_view *a,
                          const pp_polytope_view *b, double eps, const pp_peg_params *params,
                          pp_peg_config *out, int capacity, int *count, int *needed)
{
    if (!count || (!out && capacity > 0)) {
        pp_log(PP_LOG_ERROR, "pp_peg_classify: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    pp_peg_params defaults = pp_peg_params_default();
    if (!params) params = &defaults;
    pp_status st = pp_peg_check_pair("pp_peg_classify", a, b, eps, params);
    if (st != PP_OK) return st;

    pp_peg_builder *own = NULL;
    if (!builder) {
        st = pp_peg_builder_create(&own);
        if (st != PP_OK) return st;
        builder = own;
    }
    int n = 0;
    st = pp_peg_classify_near_features(builder, a, b, eps, params, &n);
    /* 4. vertex–face for the vertices of A, then of B, not in a vertex configuration */
    for (int side = 0; side < 2 && st == PP_OK; ++side) {
        const pp_polytope_view *p = side == 0 ? a : b, *q = side == 0 ? b : a;
        const unsigned char *used = builder->vertex_flags + (side == 0 ? 0 : a->vertex_count);
        for (int v = 0; v < p->vertex_count && st == PP_OK; ++v) {
            if (used[v]) continue;
            double appl, psi, proj[3];
            int f = pp_peg_best_vertex_face(p, v, q, eps, params, &appl, &psi);
            if (f < 0) continue;
            pp_v3_axpy(proj, vertex_of(p, v), -psi, normal_of(q, f));
            if (side == 0)
                st = push_config(builder, &n, PP_PEG_VERTEX_FACE, v, f, vertex_of(p, v), proj,
                                 psi, appl);
            else
                st = push_config(builder, &n, PP_PEG_FACE_VERTEX, f, v, proj, vertex_of(p, v),
                                 psi, appl);
        }
    }
    if (st == PP_OK) {
        int written = 0;
        for (int i = 0; i < n; ++i)
            if (*count < capacity) out[(*count)++] = builder->configs[i], ++written;
        if (needed) *needed = *count - written + n;
        if (written < n) st = PP_ERR_NO_MEMORY;
    }
    pp_peg_builder_destroy(own);
    return st;
}
