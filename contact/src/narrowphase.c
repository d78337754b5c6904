/*
 * Contacts between two posed shapes: the dispatch of pegplus/narrowphase.h.
 */
#include "pegplus/narrowphase.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An end-sphere contact and the capsule's closest-point contact are the same contact when
 * their points on A are closer than this (m). */
#define SAME_POINT 1e-6

typedef struct sink {
    pp_contact *out;
    int capacity, *count, needed;
} sink;

static void emit(sink *s, const pp_contact *c)
{
    if (*s->count < s->capacity) s->out[(*s->count)++] = *c;
    s->needed++;
}

static pp_contact point_contact(const pp_proximity *p)
{
    pp_contact c;
    memset(&c, 0, sizeof c);
    c.body_a = c.body_b = c.shape_a = c.shape_b = -1;
    c.kind = PP_CONTACT_POINT;
    c.feature_a = c.feature_b = -1;
    memcpy(c.p_a, p->p_a, sizeof c.p_a);
    memcpy(c.n, p->n, sizeof c.n);
    c.psi = p->distance;
    return c;
}

static int is_polytope(const pp_shape *s)
{
    return s->kind == PP_SHAPE_BOX || s->kind == PP_SHAPE_POLYTOPE;
}

/* A posed view of a box or polytope shape, with the scratch it borrows. */
typedef struct posed {
    pp_polytope *owned;          /* a box's polytope, made for the call */
    double *scratch;
    double local[6 * 64];        /* small polytopes need no allocation for the posed arrays */
    pp_polytope_view view;
} posed;

static pp_status pose(const pp_shape *s, posed *p)
{
    p->owned = NULL;
    p->scratch = NULL;
    const pp_polytope *poly = s->polytope;
    if (s->kind == PP_SHAPE_BOX) {
        pp_status st = pp_polytope_box(s->lengths, &p->owned);
        if (st != PP_OK) return st;
        poly = p->owned;
    }
    size_t need = 3 * (size_t)poly->vertex_count + 4 * (size_t)poly->face_count;
    double *w = p->local;
    if (need > sizeof p->local / sizeof p->local[0]) {
        w = p->scratch = malloc(need * sizeof(double));
        if (!w) {
            pp_polytope_destroy(p->owned);
            pp_log(PP_LOG_ERROR, "pp_narrowphase_contacts: out of memory");
            return PP_ERR_NO_MEMORY;
        }
    }
    double *normals = w + 3 * poly->vertex_count, *offsets = normals + 3 * poly->face_count;
    pp_polytope_pose_view(poly, s->position, s->R, w, normals, offsets, &p->view);
    return PP_OK;
}

static void unpose(posed *p)
{
    free(p->scratch);
    pp_polytope_destroy(p->owned);
}

/* The sphere of the capsule's radius at segment end e (-1 or +1): local z is the axis. */
static pp_shape end_sphere(const pp_shape *capsule, int e)
{
    double c[3];
    for (int k = 0; k < 3; ++k)
        c[k] = capsule->position[k] + e * 0.5 * capsule->length * capsule->R[3 * k + 2];
    return pp_shape_make_sphere(capsule->radius, c);
}

/*
 * A cylinder (A) against a plane eta . x <= d, exact. Its deepest points along -eta are on
 * the rims of its caps c_+- = x +- e a (a the axis, e the half length): on each rim the point
 * c + r u, u the unit part of -eta perpendicular to a (u = R x_local when eta is along a),
 * is the cap's lowest. Around it, CYLINDER_RIM_POINTS rim points c + r (cos phi_k u +
 * sin phi_k (a x u)), phi_k = 2 pi k / CYLINDER_RIM_POINTS, are the candidates, each a
 * contact when its gap eta . p - d is below eps. Lying on its side, the k = 0 points of the
 * two caps are the ends of the line contact; standing on a cap, the points are a regular
 * polygon inscribed in the rim (their gaps exact; the polygon, not the disc, carries the
 * load, whose apothem is r cos(pi / CYLINDER_RIM_POINTS)); tilted, the k = 0 point is the
 * cylinder's exact lowest point. The cylinder's deepest point is always one of them, so
 * the gaps of the contacts bound the cylinder's own.
 */
#define CYLINDER_RIM_POINTS 8

static void cylinder_plane_contacts(const pp_shape *a, const pp_shape *plane, double eps, sink *s)
{
    const double pi = 3.14159265358979323846, *eta = plane->normal;
    double axis[3] = {a->R[2], a->R[5], a->R[8]}, u[3], w[3];
    double along = eta[0] * axis[0] + eta[1] * axis[1] + eta[2] * axis[2], len2 = 0.0;
    for (int k = 0; k < 3; ++k) {
        u[k] = -eta[k] + along * axis[k];
        len2 += u[k] * u[k];
    }
    if (len2 > 1e-24) {
        for (int k = 0; k < 3; ++k) u[k] /= sqrt(len2);
    } else {
        for (int k = 0; k < 3; ++k) u[k] = a->R[3 * k]; /* local x */
    }
    w[0] = axis[1] * u[2] - axis[2] * u[1];
    w[1] = axis[2] * u[0] - axis[0] * u[2];
    w[2] = axis[0] * u[1] - axis[1] * u[0];
    for (int cap = -1; cap <= 1; cap += 2)
        for (int j = 0; j < CYLINDER_RIM_POINTS; ++j) {
            double phi = 2.0 * pi * j / CYLINDER_RIM_POINTS, cs = cos(phi), sn = sin(phi);
            pp_contact c;
            memset(&c, 0, sizeof c);
            c.body_a = c.body_b = c.shape_a = c.shape_b = -1;
            c.kind = PP_CONTACT_POINT;
            c.feature_a = c.feature_b = -1;
            double psi = -plane->offset;
            for (int k = 0; k < 3; ++k) {
                c.p_a[k] = a->position[k] + cap * 0.5 * a->length * axis[k] +
                           a->radius * (cs * u[k] + sn * w[k]);
                psi += eta[k] * c.p_a[k];
                c.n[k] = -eta[k]; /* from the cylinder (A) to the plane */
            }
            c.psi = psi;
            if (psi < eps) emit(s, &c);
        }
}

static pp_status closest_point(const pp_shape *a, const pp_shape *b, double eps, sink *s,
                               pp_proximity *out)
{
    pp_proximity p;
    pp_status st = pp_shape_distance(a, b, &p);
    if (st != PP_OK) return st;
    if (p.distance < eps) {
        pp_contact c = point_contact(&p);
        emit(s, &c);
    }
    if (out) *out = p;
    return PP_OK;
}

/* Capsule A against B (not a plane, not a sphere): end spheres, then the whole capsule's
 * closest point unless it coincides with an end contact. */
static pp_status capsule_contacts(const pp_shape *a, const pp_shape *b, double eps, sink *s)
{
    int first = *s->count;
    for (int e = -1; e <= 1; e += 2) {
        pp_shape end = end_sphere(a, e);
        pp_status st = closest_point(&end, b, eps, s, NULL);
        if (st != PP_OK) return st;
    }
    pp_proximity p;
    pp_status st = pp_shape_distance(a, b, &p);
    if (st != PP_OK || !(p.distance < eps)) return st;
    for (int i = first; i < *s->count; ++i) {
        double d2 = 0.0;
        for (int k = 0; k < 3; ++k) d2 += (s->out[i].p_a[k] - p.p_a[k]) * (s->out[i].p_a[k] - p.p_a[k]);
        if (d2 < SAME_POINT * SAME_POINT) return PP_OK;
    }
    pp_contact c = point_contact(&p);
    emit(s, &c);
    return PP_OK;
}

/*
 * A point contact between a smooth shape (sphere or capsule, A when smooth_is_a) and a
 * polytope point p at distance len from the smooth shape's core point c (d = p - c): gap
 * len - r, normal along d (from A to B), unless a contact of the sink from `first` on already
 * has its polytope point within SAME_POINT of p (vertex_contacts, edge_contacts).
 */
static void smooth_contact(const pp_shape *smooth, int smooth_is_a, const double c[3],
                           const double p[3], const double d[3], double len, sink *s, int first)
{
    for (int j = first; j < *s->count; ++j) {
        double d2 = 0.0;
        for (int q = 0; q < 3; ++q) {
            const double pj = smooth_is_a ? s->out[j].p_a[q] + s->out[j].psi * s->out[j].n[q]
                                          : s->out[j].p_a[q];
            d2 += (pj - p[q]) * (pj - p[q]);
        }
        if (d2 < SAME_POINT * SAME_POINT) return;
    }
    pp_contact k;
    memset(&k, 0, sizeof k);
    k.body_a = k.body_b = k.shape_a = k.shape_b = -1;
    k.kind = PP_CONTACT_POINT;
    k.feature_a = k.feature_b = -1;
    k.psi = len - smooth->radius;
    for (int q = 0; q < 3; ++q) {
        const double u = d[q] / len; /* from the smooth shape toward the polytope */
        k.n[q] = smooth_is_a ? u : -u;
        k.p_a[q] = smooth_is_a ? c[q] + smooth->radius * u : p[q];
    }
    emit(s, &k);
}

/*
 * Edge contacts of a polytope against a capsule (A): for each edge p + u e (u in [0, 1]) whose
 * line's common perpendicular with the capsule's segment c + t a (|t| <= l / 2) has its feet
 * strictly inside both, p_s = c + t a and p_e = p + u e with
 *   t = (B E - C D) / (C - B^2),  u = (E - B D) / (C - B^2),
 *   B = a . e, C = e . e, D = a . (c - p), E = e . (c - p)   (|a| = 1),
 * a contact of gap |p_e - p_s| - r, normal along p_e - p_s, when the gap is below eps and no
 * contact is already at p_e (SAME_POINT). Why: a box's edge or face lying on the capsule's
 * cylinder meets it where the segment passes over an edge (a face's clipped segment ends at
 * its edges, as in ODE's dCollideCapsuleBox), and the capsule's one closest-point contact moves
 * from edge to edge between the re-linearisation's predicted poses, so no iterate's family
 * holds the edge that turns in: a 2 cm box at 25 m/s ended 6.1e-5 m inside an 8 cm capsule
 * (docs/performance.md "Fast pairs: an edge on a capsule's cylinder"). The segment's distance
 * to the polytope is attained at a segment end (the end spheres' contacts), at a vertex
 * (vertex_contacts) or edge to segment at such interior feet (these): together they hold
 * every way the capsule meets the polytope. Each gap is the exact distance between an edge
 * and the capsule, never below the pair's, so the contacts never hold the pair off.
 */
static void edge_contacts(const pp_shape *capsule, const pp_polytope_view *v, double eps,
                          sink *s, int first)
{
    const double axis[3] = {capsule->R[2], capsule->R[5], capsule->R[8]};
    const double half = 0.5 * capsule->length;
    for (int i = 0; i < v->edge_count; ++i) {
        const double *p = &v->vertices[3 * v->edges[4 * i]];
        const double *q = &v->vertices[3 * v->edges[4 * i + 1]];
        double e[3], w[3], B = 0.0, C = 0.0, D = 0.0, E = 0.0;
        for (int k = 0; k < 3; ++k) {
            e[k] = q[k] - p[k];
            w[k] = capsule->position[k] - p[k];
            B += axis[k] * e[k];
            C += e[k] * e[k];
            D += axis[k] * w[k];
            E += e[k] * w[k];
        }
        const double denom = C - B * B; /* = |a x e|^2 */
        if (!(denom > 1e-12 * C)) continue; /* parallel: its ends are vertex or end contacts */
        const double t = (B * E - C * D) / denom, u = (E - B * D) / denom;
        if (!(t > -half && t < half && u > 0.0 && u < 1.0)) continue;
        double ps[3], pe[3], d[3], len = 0.0;
        for (int k = 0; k < 3; ++k) {
            ps[k] = capsule->position[k] + t * axis[k];
            pe[k] = p[k] + u * e[k];
            d[k] = pe[k] - ps[k];
            len += d[k] * d[k];
        }
        len = sqrt(len);
        if (!(len > 1e-12) || !(len - capsule->radius < eps)) continue;
        smooth_contact(capsule, 1, ps, pe, d, len, s, first); /* the capsule is A */
    }
}

/*
 * Vertex contacts of a polytope against a sphere or a capsule (a smooth shape: its point
 * nearest a vertex v is c + r (v - c)/|v - c|, c the centre, or the point of the capsule's
 * segment nearest v). Each vertex within eps whose contact is not already in the sink (its
 * polytope point within SAME_POINT of a contact's) is a contact, gap |v - c| - r, normal
 * along v - c. Why: the closest-point contact is the pair's one constraint, and a polytope
 * spinning within the step (an impulse at one corner, its rotation taken to first order by
 * the LCP) turns another corner into the smooth shape that no constraint holds: a 2 cm box shot
 * at 25 m/s at an 8 cm capsule ended the step 9.2 mm inside it, the re-linearisation's
 * iterates not converging (the closest point moving from corner to corner between predicted
 * poses; docs/performance.md "Fast pairs: a constraint per corner"). Each vertex's gap is exact
 * and >= 0 wherever the pair is apart, so the extra constraints never hold the pair off.
 */
static pp_status vertex_contacts(const pp_shape *smooth, const pp_shape *poly, int smooth_is_a,
                                 double eps, sink *s, int first)
{
    posed pp;
    pp_status st = pose(poly, &pp);
    if (st != PP_OK) return st;
    const int capsule = smooth->kind == PP_SHAPE_CAPSULE;
    const double axis[3] = {smooth->R[2], smooth->R[5], smooth->R[8]};
    for (int i = 0; i < pp.view.vertex_count; ++i) {
        const double *v = &pp.view.vertices[3 * i];
        double c[3], d[3], len = 0.0, t = 0.0;
        for (int k = 0; k < 3; ++k) t += capsule ? (v[k] - smooth->position[k]) * axis[k] : 0.0;
        t = fmax(-0.5 * smooth->length, fmin(0.5 * smooth->length, t));
        for (int k = 0; k < 3; ++k) {
            c[k] = smooth->position[k] + (capsule ? t * axis[k] : 0.0);
            d[k] = v[k] - c[k];
            len += d[k] * d[k];
        }
        len = sqrt(len);
        if (!(len > 1e-12) || !(len - smooth->radius < eps)) continue;
        smooth_contact(smooth, smooth_is_a, c, v, d, len, s, first);
    }
    if (capsule) edge_contacts(smooth, &pp.view, eps, s, first);
    unpose(&pp);
    return PP_OK;
}

static void flip(pp_contact *c);

/* Contacts of (a, b) with n from a to b; `a` is never a plane here unless b is not one. */
static pp_status dispatch(const pp_shape *a, const pp_shape *b, double eps, double appl_vf,
                          sink *s)
{
    if (a->kind == PP_SHAPE_SPHERE || b->kind == PP_SHAPE_SPHERE) {
        const int first = *s->count;
        /* a capsule against a sphere: its end spheres too (capsule_contacts), for the same
         * reason as a polytope's vertices */
        if (a->kind == PP_SHAPE_CAPSULE) return capsule_contacts(a, b, eps, s);
        if (b->kind == PP_SHAPE_CAPSULE) {
            pp_status st = capsule_contacts(b, a, eps, s);
            for (int i = first; i < *s->count && i < s->capacity; ++i) flip(&s->out[i]);
            return st;
        }
        pp_status st = closest_point(a, b, eps, s, NULL);
        if (st == PP_OK && is_polytope(b)) st = vertex_contacts(a, b, 1, eps, s, first);
        if (st == PP_OK && is_polytope(a)) st = vertex_contacts(b, a, 0, eps, s, first);
        return st;
    }
    if (is_polytope(a) && b->kind == PP_SHAPE_PLANE) {
        posed pa;
        pp_status st = pose(a, &pa);
        if (st != PP_OK) return st;
        int needed = 0;
        st = pp_features_polytope_plane(&pa.view, b->normal, b->offset, eps, s->out, s->capacity,
                                        s->count, &needed);
        if (needed > s->needed) s->needed = needed;
        unpose(&pa);
        return st == PP_ERR_NO_MEMORY ? PP_OK : st;
    }
    if (is_polytope(a) && is_polytope(b)) {
        posed pa, pb;
        pp_status st = pose(a, &pa);
        if (st != PP_OK) return st;
        st = pose(b, &pb);
        if (st != PP_OK) {
            unpose(&pa);
            return st;
        }
        int before = s->needed, needed = 0;
        st = pp_features_polytopes(&pa.view, &pb.view, eps, appl_vf, s->out, s->capacity,
                                   s->count, &needed);
        unpose(&pa);
        unpose(&pb);
        if (st != PP_OK && st != PP_ERR_NO_MEMORY) return st;
        if (needed > s->needed) s->needed = needed;
        if (s->needed == before) return closest_point(a, b, eps, s, NULL); /* fallback */
        return PP_OK;
    }
    if (a->kind == PP_SHAPE_CYLINDER && b->kind == PP_SHAPE_PLANE) {
        cylinder_plane_contacts(a, b, eps, s);
        return PP_OK;
    }
    if (a->kind == PP_SHAPE_CAPSULE && b->kind == PP_SHAPE_PLANE) {
        for (int e = -1; e <= 1; e += 2) {
            pp_shape end = end_sphere(a, e);
            pp_status st = closest_point(&end, b, eps, s, NULL);
            if (st != PP_OK) return st;
        }
        return PP_OK;
    }
    if (a->kind == PP_SHAPE_CAPSULE) {
        const int first = *s->count;
        pp_status st = capsule_contacts(a, b, eps, s);
        if (st == PP_OK && is_polytope(b)) st = vertex_contacts(a, b, 1, eps, s, first);
        return st;
    }
    return PP_ERR_UNSUPPORTED; /* handled by the caller by swapping */
}

/*
 * A cylinder met as its turned prism: the prism's feature contacts hold the cylinder's exact
 * closest point wherever a vertex or edge of the prism meets a face or a crossing edge of the
 * other shape. Where they meet edge to parallel edge (a lying cylinder over a box's edge
 * parallel to its axis, two cylinders side by side) or a vertex to an edge, the feature rules
 * of the standard model classify nothing, and the contacts that hold the cylinder off are
 * missing. When no contact has the gap (to 1e-9 m) and normal (to 1e-6) of the pair's exact
 * closest point (pp_shape_distance on the cylinders themselves), that contact is added, and,
 * like a capsule's end spheres, the closest point of each cylinder's two end discs (a line
 * contact's ends), when no contact is at that point (1e-6 m) with that normal.
 */
#define REPRESENTED_GAP 1e-9
#define REPRESENTED_NORMAL 1e-6
#define END_DISC_RELATIVE 1e-6 /* an end disc: the cylinder's end, 1e-6 of its radius thick */

static int represented(const pp_contact *c, int count, const pp_contact *x, int by_point)
{
    for (int i = 0; i < count; ++i) {
        double dot = c[i].n[0] * x->n[0] + c[i].n[1] * x->n[1] + c[i].n[2] * x->n[2], d2 = 0.0;
        if (dot < 1.0 - REPRESENTED_NORMAL) continue;
        if (!by_point && fabs(c[i].psi - x->psi) <= REPRESENTED_GAP) return 1;
        for (int k = 0; k < 3; ++k) {
            double pb_i = c[i].p_a[k] + c[i].psi * c[i].n[k], pb_x = x->p_a[k] + x->psi * x->n[k];
            d2 += (c[i].p_a[k] - x->p_a[k]) * (c[i].p_a[k] - x->p_a[k]) +
                  (pb_i - pb_x) * (pb_i - pb_x);
        }
        if (by_point && d2 < SAME_POINT * SAME_POINT) return 1;
    }
    return 0;
}

/* The disc at end e (-1, +1) of cylinder s. */
static pp_shape end_disc(const pp_shape *s, int e)
{
    double thick = END_DISC_RELATIVE * s->radius, c[3];
    for (int k = 0; k < 3; ++k)
        c[k] = s->position[k] + e * 0.5 * (s->length - thick) * s->R[3 * k + 2];
    return pp_shape_make_cylinder(s->radius, thick, s->polytope, c, s->R);
}

int pp_narrowphase_cylinder_closest(const pp_shape *a, const pp_shape *b, double eps,
                                    const pp_contact *c, int count, pp_contact out[5])
{
    int cylinder_a = a->kind == PP_SHAPE_CYLINDER, cylinder_b = b->kind == PP_SHAPE_CYLINDER;
    int smooth_a = a->kind == PP_SHAPE_PLANE || a->kind == PP_SHAPE_SPHERE;
    int smooth_b = b->kind == PP_SHAPE_PLANE || b->kind == PP_SHAPE_SPHERE;
    if (!((cylinder_a && !smooth_b) || (cylinder_b && !smooth_a))) return 0;
    int added = 0;
    for (int which = 0; which < 5; ++which) {
        pp_shape disc;
        const pp_shape *x = a, *y = b;
        if (which >= 1 && which <= 2) {
            if (!cylinder_a) continue;
            disc = end_disc(a, which == 1 ? -1 : 1);
            x = &disc;
        } else if (which >= 3) {
            if (!cylinder_b) continue;
            disc = end_disc(b, which == 3 ? -1 : 1);
            y = &disc;
        }
        pp_proximity p;
        if (pp_shape_distance(x, y, &p) != PP_OK || !(p.distance < eps)) continue;
        pp_contact k = point_contact(&p);
        if (represented(c, count, &k, which > 0) || represented(out, added, &k, 1)) {
            if (which == 0) return 0; /* the prism's contacts hold the closest point */
            continue;
        }
        out[added++] = k;
    }
    return added;
}

static void flip(pp_contact *c)
{
    for (int k = 0; k < 3; ++k) {
        c->p_a[k] += c->psi * c->n[k];
        c->n[k] = -c->n[k];
    }
    int f = c->feature_a;
    c->feature_a = c->feature_b;
    c->feature_b = f;
    if (c->kind == PP_CONTACT_VERTEX_FACE) c->kind = PP_CONTACT_FACE_VERTEX;
    else if (c->kind == PP_CONTACT_FACE_VERTEX) c->kind = PP_CONTACT_VERTEX_FACE;
}

pp_status pp_narrowphase_contacts(const pp_shape *shape_a, const pp_shape *shape_b, double eps,
                                  double appl_vf, pp_contact *out, int capacity, int *count,
                                  int *needed)
{
    const pp_shape *a = shape_a, *b = shape_b;
    if (!a || !b || !count || (capacity > 0 && !out)) {
        pp_log(PP_LOG_ERROR, "pp_narrowphase_contacts: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (!(eps > 0.0) || !isfinite(eps) || *count < 0 || capacity < 0) {
        pp_log(PP_LOG_ERROR, "pp_narrowphase_contacts: eps = %g must be finite and > 0 (count "
                             "%d, capacity %d)", eps, *count, capacity);
        return PP_ERR_INVALID_ARGUMENT;
    }
    pp_status st = pp_shape_validate(a);
    if (st == PP_OK) st = pp_shape_validate(b);
    if (st != PP_OK) return st;
    if (a->kind == PP_SHAPE_PLANE && b->kind == PP_SHAPE_PLANE) {
        pp_log(PP_LOG_ERROR, "pp_narrowphase_contacts: plane against plane is not supported");
        return PP_ERR_UNSUPPORTED;
    }
    /* A cylinder is its prism against everything but planes and spheres (geometry.h). */
    const pp_shape form_a = pp_shape_pair_form(shape_a, shape_b);
    const pp_shape form_b = pp_shape_pair_form(shape_b, shape_a);
    a = &form_a;
    b = &form_b;
    /* Put the shape the rules are written for first; flip the results back. */
    int swap = a->kind == PP_SHAPE_PLANE ||
               (b->kind == PP_SHAPE_CAPSULE && a->kind != PP_SHAPE_CAPSULE &&
                a->kind != PP_SHAPE_SPHERE);
    sink s = {out, capacity, count, *count};
    int first = *count;
    st = swap ? dispatch(b, a, eps, appl_vf, &s) : dispatch(a, b, eps, appl_vf, &s);
    if (st != PP_OK) return st;
    if (swap)
        for (int i = first; i < *count; ++i) flip(&out[i]);
    pp_contact exact[5];
    int extra = pp_narrowphase_cylinder_closest(shape_a, shape_b, eps, out + first,
                                                *count - first, exact);
    for (int i = 0; i < extra; ++i) emit(&s, &exact[i]);
    if (needed) *needed = s.needed;
    return s.needed > capacity ? PP_ERR_NO_MEMORY : PP_OK;
}
