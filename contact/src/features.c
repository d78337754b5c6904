/*
 * Feature-pair contacts between polytopes (see pegplus/features.h for the conventions and
 * PEG Secs 4–5 for the geometry). Brute force over feature pairs: after the proximity
 * filter a pair of boxes costs 2·8·6 vertex–face and 12·12 edge–edge tests.
 */
#include "pegplus/features.h"

#include <math.h>
#include <string.h>

static const double INSIDE_TOLERANCE = 1e-9;   /* m, a vertex exactly on a face's boundary counts */
static const double PARALLEL_TOLERANCE = 1e-9; /* |e_a x e_b| / (|e_a||e_b|) below this: parallel */
static const double INTERIOR_TOLERANCE = 1e-9; /* segment parameters must lie in (tol, 1 - tol) */

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross(double out[3], const double a[3], const double b[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static void sub(double out[3], const double a[3], const double b[3])
{
    for (int k = 0; k < 3; ++k) out[k] = a[k] - b[k];
}

static const double *vertex(const pp_polytope_view *p, int i) { return p->vertices + 3 * i; }
static const double *normal(const pp_polytope_view *p, int f) { return p->face_normals + 3 * f; }

/* Does x, projected on face f's plane, lie inside the face? Edges run CCW seen from outside,
 * so inside means (p_{i+1} - p_i) x (x - p_i) . eta >= 0 for every edge, scaled by the edge. */
static int projects_inside(const pp_polytope_view *p, int f, const double x[3])
{
    const int *loop = p->face_vertices + p->face_first[f];
    int n = p->face_first[f + 1] - p->face_first[f];
    for (int i = 0; i < n; ++i) {
        const double *p0 = vertex(p, loop[i]), *p1 = vertex(p, loop[(i + 1) % n]);
        double e[3], r[3], c[3];
        sub(e, p1, p0);
        sub(r, x, p0);
        cross(c, e, r);
        if (dot(c, normal(p, f)) < -INSIDE_TOLERANCE * sqrt(dot(e, e))) return 0;
    }
    return 1;
}

/* APPL^vf(v, f) = min over w in omega(v) of eta_f . (w - v)/|w - v|  (PEG §3, Eq 28 relaxed). */
static double applicability_vf(const pp_polytope_view *a, int v, const double eta[3])
{
    double worst = 1.0;
    for (int k = a->neighbour_first[v]; k < a->neighbour_first[v + 1]; ++k) {
        double d[3];
        sub(d, vertex(a, a->neighbours[k]), vertex(a, v));
        double len = sqrt(dot(d, d));
        if (len > 0.0) worst = fmin(worst, dot(eta, d) / len);
    }
    return worst;
}

/* Largest face gap of point x against polytope p: <= 0 inside (or on), > 0 outside. */
static double point_depth(const pp_polytope_view *p, const double x[3])
{
    double m = -HUGE_VAL;
    for (int f = 0; f < p->face_count; ++f) m = fmax(m, dot(normal(p, f), x) - p->face_offsets[f]);
    return m;
}

typedef struct sink {
    pp_contact *out;
    int capacity, *count, needed;
} sink;

static void emit(sink *s, pp_contact_kind kind, int fa, int fb, const double p_a[3],
                 const double n[3], double psi)
{
    s->needed++;
    if (*s->count >= s->capacity) return;
    pp_contact *c = &s->out[(*s->count)++];
    memset(c, 0, sizeof *c);
    c->body_a = c->body_b = c->shape_a = c->shape_b = -1;
    c->kind = kind;
    c->feature_a = fa;
    c->feature_b = fb;
    for (int k = 0; k < 3; ++k) {
        c->p_a[k] = p_a[k];
        c->n[k] = n[k];
    }
    c->psi = psi;
}

/* The vertices of `vp` against the faces of `fp`. flip = 0: vp is A (vertex–face);
 * flip = 1: vp is B (face–vertex). */
static void vertices_against_faces(const pp_polytope_view *vp, const pp_polytope_view *fp,
                                   double eps, double appl_vf, int flip, sink *s)
{
    for (int v = 0; v < vp->vertex_count; ++v) {
        const double *x = vertex(vp, v);
        for (int f = 0; f < fp->face_count; ++f) {
            const double *eta = normal(fp, f);
            double psi = dot(eta, x) - fp->face_offsets[f];
            if (psi >= eps || psi <= -eps) continue;
            if (!projects_inside(fp, f, x)) continue;
            /* below the face's plane is an overlap only inside the polytope: a vertex beyond
             * a thin body's opposite face projects inside this face too (soak seed 319: a
             * box's vertex 0.67 m behind the face of a box 0.3 m thick, next to true pairs of
             * the opposite normal; crossing() below has the measurement) */
            if (psi < 0.0 && point_depth(fp, x) > INSIDE_TOLERANCE) continue;
            if (applicability_vf(vp, v, eta) < appl_vf) continue;
            if (!flip) {
                double n[3] = {-eta[0], -eta[1], -eta[2]};
                emit(s, PP_CONTACT_VERTEX_FACE, v, f, x, n, psi);
            } else {
                double p_a[3] = {x[0] - psi * eta[0], x[1] - psi * eta[1], x[2] - psi * eta[2]};
                emit(s, PP_CONTACT_FACE_VERTEX, f, v, p_a, eta, psi);
            }
        }
    }
}

/* Closest points of segments p0 + s d0 and q0 + t d1 for non-parallel lines (a = d0 . d0,
 * c = d1 . d1 as dot forms them); returns 0 unless both parameters are interior. */
static int interior_closest_points(const double p0[3], const double d0[3], double a,
                                   const double q0[3], const double d1[3], double c, double *s,
                                   double *t)
{
    double r[3];
    sub(r, p0, q0);
    double b = dot(d0, d1), d = dot(d0, r), e = dot(d1, r);
    double den = a * c - b * b;
    if (den <= 0.0) return 0;
    *s = (b * e - c * d) / den;
    *t = (a * e - b * d) / den;
    return *s > INTERIOR_TOLERANCE && *s < 1.0 - INTERIOR_TOLERANCE && *t > INTERIOR_TOLERANCE &&
           *t < 1.0 - INTERIOR_TOLERANCE;
}

/*
 * A negative edge–edge gap psi = n . (p_b - p_a) says that along n the lines have passed
 * each other; it is an overlap of the polytopes only where the edges cross, i.e. where the
 * closest point of one edge lies in the other polytope: p_b = p_a + psi n inside A (a
 * crossing along A's normal cone) or p_a inside B. Elsewhere the segments pass each other
 * at their common perpendicular outside both bodies, the number psi measures nothing
 * physical, and as a contact it asks the LCP to push the pair apart by |psi| in one step.
 * Measured (pegplus-soak --seed 319 --model standard, h = 0.02, a 25 m/s box, speculative
 * eps ~ 1 m): two edge pairs of boxes 0.7 m apart with psi = -0.96 and -0.79 m next to two
 * true pairs of the opposite normal at +0.57 m, an infeasible LCP answered by impulses of
 * 5.7e11 N s that left the bodies at 5 km/s. PEG's builder has the same rule
 * (peg_geometry.c edge_gap_feasible); the tolerance admits a crossing in progress whose
 * closest point sits on the other body's surface to rounding.
 */
static int crossing(const pp_polytope_view *a, const pp_polytope_view *b, const double pa[3],
                    const double pb[3])
{
    return point_depth(a, pb) <= INSIDE_TOLERANCE || point_depth(b, pa) <= INSIDE_TOLERANCE;
}

/*
 * Edge pairs whose segments are farther apart than eps are not contacts, and most of a
 * pair of bodies' 144 (two boxes) are: they are told apart before the closest points (two
 * divisions, two square roots) by their midpoints m and half lengths h. A pair is emitted
 * only with closest points pa, pb at interior parameters and |psi| = |n . (pb - pa)| < eps,
 * and |pb - pa| >= |m_b - m_a| - h_a - h_b, where pb - pa lies along n up to the error of
 * the computed parameters: with sin(angle) >= FAR_SINE the 2 x 2 system for them has
 * condition <= 1 / FAR_SINE^2 = 1e8, so they are off by < 1e-7 (relative to each edge's
 * length) and |psi| >= |m_b - m_a| - (h_a + h_b)(1 + 1e-6) - rounding of the coordinates.
 * A pair with |m_b - m_a| above (h_a + h_b + eps)(1 + FAR_MARGIN) + FAR_MARGIN 1e-6 x (the
 * coordinates' size) and at that angle is therefore skipped where the test below would
 * have skipped it: the same contacts to the bit. Nearer, or nearly parallel (where the
 * parameters carry larger errors), the pair takes the test as before.
 */
#define FAR_SINE 1e-4
#define FAR_MARGIN 1e-6
#define FAR_EDGES 64 /* edges of B held by their segments (boxes: 12); more: no skipping */

/* An edge's segment; d and dd are what the test below forms from the vertices (the same
 * expressions: the same bits), kept once per edge instead of once per pair. */
typedef struct edge_segment {
    double d[3];   /* head - tail */
    double mid[3]; /* midpoint */
    double dd;     /* |d|^2 */
    double half;   /* |d| / 2 */
    double size;   /* |d| / 2 + |mid|_1: the size of its coordinates */
} edge_segment;

static void edge_segment_of(const pp_polytope_view *p, int i, edge_segment *e)
{
    const int *ed = p->edges + 4 * i;
    const double *tail = vertex(p, ed[0]), *head = vertex(p, ed[1]);
    sub(e->d, head, tail);
    for (int k = 0; k < 3; ++k) e->mid[k] = 0.5 * (tail[k] + head[k]);
    e->dd = dot(e->d, e->d);
    e->half = 0.5 * sqrt(e->dd);
    e->size = e->half + fabs(e->mid[0]) + fabs(e->mid[1]) + fabs(e->mid[2]);
}

/* 1 when the pair cannot be within eps (above); n = d_a x d_b */
static int far_apart(const edge_segment *ea, const edge_segment *eb, const double n[3],
                     double eps)
{
    double dm[3];
    sub(dm, eb->mid, ea->mid);
    const double reach = (ea->half + eb->half + eps) * (1.0 + FAR_MARGIN) +
                         FAR_MARGIN * 1e-6 * (ea->size + eb->size);
    return dot(dm, dm) > reach * reach && dot(n, n) >= FAR_SINE * FAR_SINE * ea->dd * eb->dd;
}

static void edges_against_edges(const pp_polytope_view *a, const pp_polytope_view *b, double eps,
                                sink *s)
{
    edge_segment segments_b[FAR_EDGES];
    const int held = b->edge_count <= FAR_EDGES;
    for (int j = 0; held && j < b->edge_count; ++j) edge_segment_of(b, j, &segments_b[j]);
    for (int i = 0; i < a->edge_count; ++i) {
        const int *ea = a->edges + 4 * i;
        double sum_a[3];
        edge_segment segment_a;
        edge_segment_of(a, i, &segment_a);
        const double *da = segment_a.d;
        for (int k = 0; k < 3; ++k) sum_a[k] = normal(a, ea[2])[k] + normal(a, ea[3])[k];
        for (int j = 0; j < b->edge_count; ++j) {
            const int *eb = b->edges + 4 * j;
            edge_segment own; /* not held: d and dd alone, formed here */
            const edge_segment *segment_b = held ? &segments_b[j] : &own;
            if (!held) {
                sub(own.d, vertex(b, eb[1]), vertex(b, eb[0]));
                own.dd = dot(own.d, own.d);
            }
            const double *db = segment_b->d;
            double n[3], sum_b[3];
            cross(n, da, db);
            if (held && far_apart(&segment_a, segment_b, n, eps)) continue;
            double len = sqrt(dot(n, n));
            if (len <= PARALLEL_TOLERANCE * sqrt(segment_a.dd * segment_b->dd)) continue;
            double sa, tb;
            if (!interior_closest_points(vertex(a, ea[0]), da, segment_a.dd, vertex(b, eb[0]), db,
                                         segment_b->dd, &sa, &tb))
                continue;
            for (int k = 0; k < 3; ++k) {
                n[k] /= len;
                sum_b[k] = normal(b, eb[2])[k] + normal(b, eb[3])[k];
            }
            /* n points from A into B: against B's outward normals, along A's (PEG §4) */
            if (dot(n, sum_b) > 0.0)
                for (int k = 0; k < 3; ++k) n[k] = -n[k];
            if (dot(n, sum_a) <= 0.0) continue;
            double pa[3], pb[3], gap[3];
            for (int k = 0; k < 3; ++k) {
                pa[k] = vertex(a, ea[0])[k] + sa * da[k];
                pb[k] = vertex(b, eb[0])[k] + tb * db[k];
            }
            sub(gap, pb, pa);
            double psi = dot(n, gap);
            if (psi >= eps || psi <= -eps) continue;
            if (psi < 0.0 && !crossing(a, b, pa, pb)) continue;
            emit(s, PP_CONTACT_EDGE_EDGE, i, j, pa, n, psi);
        }
    }
}

/* s->needed started at the caller's count, so it is the total the caller's array needs. */
static pp_status finish(const sink *s, int *needed)
{
    if (needed) *needed = s->needed;
    return s->needed > s->capacity ? PP_ERR_NO_MEMORY : PP_OK;
}

pp_status pp_features_polytopes(const pp_polytope_view *a, const pp_polytope_view *b, double eps,
                                double appl_vf, pp_contact *out, int capacity, int *count,
                                int *needed)
{
    if (!a || !b || !count || (!out && capacity > 0)) {
        pp_log(PP_LOG_ERROR, "pp_features_polytopes: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    sink s = {out, capacity, count, *count};
    vertices_against_faces(a, b, eps, appl_vf, 0, &s);
    vertices_against_faces(b, a, eps, appl_vf, 1, &s);
    edges_against_edges(a, b, eps, &s);
    return finish(&s, needed);
}

pp_status pp_features_polytope_plane(const pp_polytope_view *a, const double plane_normal[3],
                                     double offset, double eps, pp_contact *out, int capacity,
                                     int *count, int *needed)
{
    if (!a || !plane_normal || !count || (!out && capacity > 0)) {
        pp_log(PP_LOG_ERROR, "pp_features_polytope_plane: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    sink s = {out, capacity, count, *count};
    double n[3] = {-plane_normal[0], -plane_normal[1], -plane_normal[2]};
    for (int v = 0; v < a->vertex_count; ++v) {
        double psi = dot(plane_normal, vertex(a, v)) - offset;
        if (psi < eps) emit(&s, PP_CONTACT_VERTEX_FACE, v, -1, vertex(a, v), n, psi);
    }
    return finish(&s, needed);
}
