/*
 * Proximity between convex shapes (pegplus/geometry.h, pp_shape_distance / pp_shapes_within).
 *
 * Separated pairs: GJK closest points (Gilbert, Johnson, Keerthi 1988) on the Minkowski
 * difference D = A - B of the shapes' cores, with the signed-volume sub-algorithm of
 * Montanari, Petrinic and Barbieri (ACM TOG 36(3), 2017) for the closest point of a simplex,
 * and van den Bergen's termination test |v|^2 - v.w <= eps |v|^2 (v the current closest
 * point, w the support point of D in -v: v.w/|v| is a lower bound of the distance).
 *
 * Overlapping pairs: the depth is min over unit n of h_A(n) + h_B(-n); candidate normals from
 * libccd (GJK+EPA and MPR, docs/references.md), the centre direction and, for cores with few
 * features, every separating axis, each refined by GJK (see core_penetration).
 *
 * Sphere and capsule are a point / segment core plus a radius: the distance between A ⊕ ball
 * and B ⊕ ball is dist(core_A, core_B) - r_A - r_B, and the penetration depth is
 * depth(core_A, core_B) + r_A + r_B (support functions add), so every result is exact.
 *
 * A cylinder is its own core (radius 0) with its exact support function (shapes.c): GJK,
 * EPA and MPR run on it as on any convex set (GJK converges to the tolerance in finitely
 * many iterations on a curved surface, without ending on a vertex); against a sphere the
 * closest point is in closed form (cylinder_point_core).
 */
#include "geometry_internal.h"

#include <ccd/ccd.h>
#include <float.h>
#include <string.h>

_Static_assert(sizeof(ccd_real_t) == sizeof(double), "libccd must be built with CCD_DOUBLE");

static const double GJK_RELATIVE_TOLERANCE = 1e-12; /* |v|^2 - v.w <= tol |v|^2 */
static const double TOUCH_RELATIVE = 1e-12;         /* |v| below this * size: cores touch */
static const int GJK_MAX_ITERATIONS = 256;
static const double EPA_TOLERANCE = 1e-12;          /* docs/references.md */
static const double MPR_TOLERANCE = 1e-12;
static const unsigned long CCD_MAX_ITERATIONS = 500;
/* Points of D one libccd call may ask for (ccd_budget): EPA asked for at most 45 and MPR 41 in
 * 85 452 calls over the test suite (median 7); GJK's own phase may take max_iterations + 2. */
static const unsigned long CCD_MAX_POINTS = 1000;
static const double REFINE_GAP_RELATIVE = 1e-6;     /* separation used to refine a normal */
static const int REFINE_ROUNDS = 3;
static const int SAT_MAX_AXES = 4096;               /* exact axis search only below this */

/* ------------------------------------------------------------ signed-volume sub-algorithm */

/* The closest point to the origin of a simplex of up to 4 points: lambda (barycentric, zero for
 * points outside the support set) and the squared distance. */
static int same_sign(double a, double b) { return (a > 0.0 && b > 0.0) || (a < 0.0 && b < 0.0); }

static double combine(const double *const p[], const double lambda[], int n, double v[3])
{
    v[0] = v[1] = v[2] = 0.0;
    for (int i = 0; i < n; ++i) pp_v3_axpy(v, v, lambda[i], p[i]);
    return pp_v3_dot(v, v);
}

/*
 * Segment p0 p1. The origin's projection on the line is x = p1 - (p1.t / t.t) t, t = p1 - p0;
 * its barycentric coordinates are read on the axis I of largest |t_I| (MPB17 S1D):
 * lambda0 = (p1_I - x_I)/t_I, lambda1 = (x_I - p0_I)/t_I. A coordinate of the wrong sign
 * means the closest point is the other endpoint.
 */
static double s1d(const double *const p[2], double lambda[2])
{
    double t[3];
    pp_v3_sub(t, p[1], p[0]);
    double tt = pp_v3_dot(t, t);
    lambda[0] = 1.0, lambda[1] = 0.0;
    if (tt > 0.0) {
        double x[3];
        pp_v3_axpy(x, p[1], -pp_v3_dot(p[1], t) / tt, t);
        int I = 0;
        for (int k = 1; k < 3; ++k)
            if (fabs(t[k]) > fabs(t[I])) I = k;
        double mu = t[I], c0 = p[1][I] - x[I], c1 = x[I] - p[0][I];
        if (same_sign(mu, c0) && same_sign(mu, c1))
            lambda[0] = c0 / mu, lambda[1] = c1 / mu;
        else if (!same_sign(mu, c0))
            lambda[0] = 0.0, lambda[1] = 1.0;
    }
    double v[3];
    return combine(p, lambda, 2, v);
}

/* Keep the best candidate of a face/edge recursion: copy its lambdas into the slots `idx`. */
static void take(double *best, double d2, double *lambda, int n, const int *idx,
                 const double *sub_lambda, int sub_n)
{
    if (d2 >= *best) return;
    *best = d2;
    for (int i = 0; i < n; ++i) lambda[i] = 0.0;
    for (int i = 0; i < sub_n; ++i) lambda[idx[i]] = sub_lambda[i];
}

/*
 * Triangle p0 p1 p2 with normal n = (p1 - p0) x (p2 - p0). Project the origin on its plane,
 * x = (p0.n / n.n) n, and compute signed areas in the coordinate plane (J, K) where the
 * triangle's projection is largest (|n_I| maximal, (I, J, K) cyclic): mu = n_I and C_i the
 * area with p_i replaced by x, so lambda_i = C_i / mu (MPB17 S2D). If some C_i disagrees in
 * sign with mu, the closest point lies on an edge opposite such a vertex.
 */
static double s2d(const double *const p[3], double lambda[3])
{
    static const int EDGE[3][2] = {{1, 2}, {0, 2}, {0, 1}};
    double u[3], w[3], n[3];
    pp_v3_sub(u, p[1], p[0]);
    pp_v3_sub(w, p[2], p[0]);
    pp_v3_cross(n, u, w);
    double nn = pp_v3_dot(n, n), c[3] = {0.0, 0.0, 0.0}, mu = 0.0;
    if (nn > 0.0) {
        double x[3];
        pp_v3_scale(x, pp_v3_dot(p[0], n) / nn, n);
        int I = 0;
        for (int k = 1; k < 3; ++k)
            if (fabs(n[k]) > fabs(n[I])) I = k;
        int J = (I + 1) % 3, K = (I + 2) % 3;
        mu = n[I];
        const double *q[3] = {p[0], p[1], p[2]};
        for (int i = 0; i < 3; ++i) {
            const double *a = i == 0 ? x : q[0], *b = i == 1 ? x : q[1], *cc = i == 2 ? x : q[2];
            c[i] = (b[J] - a[J]) * (cc[K] - a[K]) - (b[K] - a[K]) * (cc[J] - a[J]);
        }
        if (same_sign(mu, c[0]) && same_sign(mu, c[1]) && same_sign(mu, c[2])) {
            for (int i = 0; i < 3; ++i) lambda[i] = c[i] / mu;
            double v[3];
            return combine(p, lambda, 3, v);
        }
    }
    double best = HUGE_VAL;
    for (int i = 0; i < 3; ++i) {
        if (mu != 0.0 && same_sign(mu, c[i])) continue;
        const double *e[2] = {p[EDGE[i][0]], p[EDGE[i][1]]};
        double sub[2];
        take(&best, s1d(e, sub), lambda, 3, EDGE[i], sub, 2);
    }
    return best;
}

/* vol(a, b, c, d) = (b - a) . ((c - a) x (d - a)) */
static double volume(const double *a, const double *b, const double *c, const double *d)
{
    double u[3], v[3], w[3], x[3];
    pp_v3_sub(u, b, a);
    pp_v3_sub(v, c, a);
    pp_v3_sub(w, d, a);
    pp_v3_cross(x, v, w);
    return pp_v3_dot(u, x);
}

/* Tetrahedron: lambda_j = C_j / M with M = vol(p0..p3) and C_j the volume with p_j replaced by
 * the origin (MPB17 S3D). Inside when every C_j has the sign of M; otherwise recurse on the
 * faces opposite the vertices whose C_j disagrees. */
static double s3d(const double *const p[4], double lambda[4])
{
    static const int FACE[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
    static const double ORIGIN[3] = {0.0, 0.0, 0.0};
    double m = volume(p[0], p[1], p[2], p[3]), c[4];
    for (int j = 0; j < 4; ++j) {
        const double *q[4] = {p[0], p[1], p[2], p[3]};
        q[j] = ORIGIN;
        c[j] = volume(q[0], q[1], q[2], q[3]);
    }
    if (same_sign(m, c[0]) && same_sign(m, c[1]) && same_sign(m, c[2]) && same_sign(m, c[3])) {
        for (int j = 0; j < 4; ++j) lambda[j] = c[j] / m;
        return 0.0;
    }
    double best = HUGE_VAL;
    for (int j = 0; j < 4; ++j) {
        if (m != 0.0 && same_sign(m, c[j])) continue;
        const double *f[3] = {p[FACE[j][0]], p[FACE[j][1]], p[FACE[j][2]]};
        double sub[3];
        take(&best, s2d(f, sub), lambda, 4, FACE[j], sub, 3);
    }
    return best;
}

/* ------------------------------------------------------------------------------ GJK */

typedef struct simplex {
    int count;
    double w[4][3], a[4][3], b[4][3]; /* w = a - b: support points of D, A and B */
    double lambda[4];
} simplex;

/* Replace the simplex by the support set of its closest point; returns v = that point. */
static double simplex_reduce(simplex *s, double v[3])
{
    const double *p[4] = {s->w[0], s->w[1], s->w[2], s->w[3]};
    double lambda[4] = {1.0, 0.0, 0.0, 0.0};
    if (s->count == 2) s1d(p, lambda);
    if (s->count == 3) s2d(p, lambda);
    if (s->count == 4) s3d(p, lambda);
    simplex r = {0};
    for (int i = 0; i < s->count; ++i) {
        if (!(lambda[i] > 0.0)) continue;
        memcpy(r.w[r.count], s->w[i], sizeof r.w[0]);
        memcpy(r.a[r.count], s->a[i], sizeof r.a[0]);
        memcpy(r.b[r.count], s->b[i], sizeof r.b[0]);
        r.lambda[r.count++] = lambda[i];
    }
    if (r.count == 0) { /* cannot happen: some lambda is positive; keep the newest point */
        r.count = 1;
        memcpy(r.w[0], s->w[s->count - 1], sizeof r.w[0]);
        memcpy(r.a[0], s->a[s->count - 1], sizeof r.a[0]);
        memcpy(r.b[0], s->b[s->count - 1], sizeof r.b[0]);
        r.lambda[0] = 1.0;
    }
    *s = r;
    const double *q[4] = {s->w[0], s->w[1], s->w[2], s->w[3]};
    return combine(q, s->lambda, s->count, v);
}

typedef struct gjk_result {
    int overlap;           /* cores intersect or touch (|v| <= TOUCH_RELATIVE * size) */
    double distance;       /* |v| */
    double p_a[3], p_b[3]; /* closest points on the cores */
    double v[3];           /* p_a - p_b */
    int iterations;
} gjk_result;

static double core_size(const pp_shape *s)
{
    switch (s->kind) {
    case PP_SHAPE_BOX: return pp_v3_norm(s->lengths);
    case PP_SHAPE_CAPSULE: return s->length;
    case PP_SHAPE_POLYTOPE: return 2.0 * s->polytope->radius;
    case PP_SHAPE_CYLINDER: return sqrt(s->length * s->length + 4.0 * s->radius * s->radius);
    default: return 0.0;
    }
}

static void gjk_closest(const pp_shape *a, const pp_shape *b, gjk_result *out)
{
    double size = core_size(a) + core_size(b) + DBL_MIN, ca[3], cb[3], v[3];
    pp_shape_center(a, ca);
    pp_shape_center(b, cb);
    pp_v3_sub(v, ca, cb); /* a point of D: only the first search direction */
    if (pp_v3_dot(v, v) == 0.0) v[0] = 1.0;
    simplex s = {0}, previous = {0};
    double vv = HUGE_VAL, previous_v[3] = {0.0, 0.0, 0.0};
    int overlap = 0, it = 0;
    for (; it < GJK_MAX_ITERATIONS; ++it) {
        double d[3], nd[3], sa[3], sb[3], w[3];
        pp_v3_scale(d, -1.0, v);
        pp_v3_scale(nd, -1.0, d);
        pp_shape_core_support(a, d, sa);
        pp_shape_core_support(b, nd, sb);
        pp_v3_sub(w, sa, sb);
        if (s.count > 0) {
            if (vv - pp_v3_dot(v, w) <= GJK_RELATIVE_TOLERANCE * vv) break;
            int repeated = 0;
            for (int i = 0; i < s.count; ++i)
                repeated |= w[0] == s.w[i][0] && w[1] == s.w[i][1] && w[2] == s.w[i][2];
            if (repeated) break;
        }
        previous = s;
        pp_v3_copy(previous_v, v);
        memcpy(s.w[s.count], w, sizeof w);
        memcpy(s.a[s.count], sa, sizeof sa);
        memcpy(s.b[s.count], sb, sizeof sb);
        s.count++;
        double next = simplex_reduce(&s, v);
        if (s.count == 4 || next <= (TOUCH_RELATIVE * size) * (TOUCH_RELATIVE * size)) {
            overlap = 1;
            vv = next;
            break;
        }
        if (previous.count > 0 && next >= vv) { /* no progress: round-off; keep the better */
            s = previous;
            pp_v3_copy(v, previous_v);
            break;
        }
        vv = next;
    }
    memset(out, 0, sizeof *out);
    for (int i = 0; i < s.count; ++i) {
        pp_v3_axpy(out->p_a, out->p_a, s.lambda[i], s.a[i]);
        pp_v3_axpy(out->p_b, out->p_b, s.lambda[i], s.b[i]);
    }
    pp_v3_sub(out->v, out->p_a, out->p_b);
    out->distance = pp_v3_norm(out->v);
    out->overlap = overlap;
    out->iterations = it + 1;
}

/* ----------------------------------------------------------------------------- libccd */

/*
 * The support budget of one libccd call (libccd issue #7): EPA's expansion loop in libccd 2.1
 * (__ccdGJKEPA) has no iteration bound; it ends only when nextSupport() rejects the support
 * point w of D along the nearest element's witness v, i.e. when v is a vertex, |v|^2 is zero,
 * w.v - |v|^2 < epa_tolerance, or w is within sqrt(epa_tolerance) of that element. On some
 * pairs (two bricks of the crash wall, check_gjk's epa_hang_pair) it never does. Once a call
 * has asked for more than `limit` points of D, both support functions answer the origin: then
 * w = 0 and w.v - |v|^2 = -|v|^2 < epa_tolerance for every element with |v| > 0, so the loop
 * ends through its own test (and frees its polytope as on any normal end), and `exhausted`
 * tells the caller to drop the answer. libccd asks support1 then support2 for each point of D
 * (__ccdSupport), so support1 counts the points.
 */
typedef struct ccd_budget {
    unsigned long points, limit;
    int exhausted;
} ccd_budget;

typedef struct ccd_object {
    const pp_shape *shape;
    double grow;        /* support = core support + grow * d/|d| */
    ccd_budget *budget; /* NULL: unbounded */
} ccd_object;

static void ccd_support(const void *obj, const ccd_vec3_t *dir, ccd_vec3_t *out)
{
    const ccd_object *o = obj;
    if (o->budget && o->budget->exhausted) {
        out->v[0] = out->v[1] = out->v[2] = 0.0;
        return;
    }
    double d[3] = {dir->v[0], dir->v[1], dir->v[2]}, p[3];
    pp_shape_core_support(o->shape, d, p);
    double len = pp_v3_norm(d);
    if (o->grow != 0.0 && len > 0.0) pp_v3_axpy(p, p, o->grow / len, d);
    for (int k = 0; k < 3; ++k) out->v[k] = p[k];
}

static void ccd_support_counted(const void *obj, const ccd_vec3_t *dir, ccd_vec3_t *out)
{
    ccd_budget *budget = ((const ccd_object *)obj)->budget;
    if (budget && ++budget->points > budget->limit) budget->exhausted = 1;
    ccd_support(obj, dir, out);
}

static void ccd_center(const void *obj, ccd_vec3_t *out)
{
    double c[3];
    pp_shape_center(((const ccd_object *)obj)->shape, c);
    for (int k = 0; k < 3; ++k) out->v[k] = c[k];
}

static void ccd_setup(ccd_t *ccd)
{
    CCD_INIT(ccd);
    ccd->support1 = ccd_support_counted;
    ccd->support2 = ccd_support;
    ccd->center1 = ccd_center; /* MPR calls them: NULL crashes (libccd's mpr.c) */
    ccd->center2 = ccd_center;
    ccd->max_iterations = CCD_MAX_ITERATIONS;
    ccd->epa_tolerance = EPA_TOLERANCE;
    ccd->mpr_tolerance = MPR_TOLERANCE;
}

/* ------------------------------------------------------------------------ penetration */

/* Directional overlap of the cores along unit n (A to B): h_A(n) + h_B(-n), an upper bound of
 * the penetration depth, equal to it at the true normal (the minimising direction). */
static double directional_depth(const pp_shape *a, const pp_shape *b, const double n[3])
{
    double m[3], sa[3], sb[3];
    pp_v3_scale(m, -1.0, n);
    pp_shape_core_support(a, n, sa);
    pp_shape_core_support(b, m, sb);
    return pp_v3_dot(sa, n) - pp_v3_dot(sb, n);
}

typedef struct core_result {
    double distance, p_a[3], p_b[3], n[3];
    pp_proximity_method method;
    int iterations;
} core_result;

/* The best normal found so far: the smallest directional depth h(n), its deepest point on A,
 * and the seed it came from (pegplus/geometry.h pp_proximity_method). */
typedef struct candidate {
    double n[3], depth, p_a[3];
    int found;
    pp_proximity_method method;
} candidate;

/* Offer normal n (unit), from seed `method`, with a point p_a on A's supporting plane along n
 * (NULL: A's support point). An offer within tol of the best replaces it only when it brings a
 * point: the refinements do, and their points lie in the contact region. Such a tie keeps the
 * best's method: the depth was found by the seed that first reached it (to within tol). */
static void offer(const pp_shape *a, const pp_shape *b, const double n[3], const double *p_a,
                  pp_proximity_method method, double tol, candidate *best)
{
    double h = directional_depth(a, b, n);
    if (!isfinite(h)) return;
    if (best->found && (h > best->depth + tol || (h > best->depth - tol && !p_a))) return;
    if (!best->found || h <= best->depth - tol) best->method = method;
    best->found = 1;
    best->depth = h;
    pp_v3_copy(best->n, n);
    if (p_a) {
        pp_v3_copy(best->p_a, p_a);
    } else {
        pp_shape_core_support(a, n, best->p_a);
    }
}

/* Move B out along n by t = h(n) + gap, so the cores are separated by at least gap along n;
 * GJK there gives the exact normal of the closest feature of D - t n, which is the face of D
 * nearest the origin (the true normal) when the origin's projection on it stays inside the
 * face. Repeat from the new normal while it changes. */
static int refine(const pp_shape *a, const pp_shape *b, const double seed[3],
                  pp_proximity_method method, double gap, double tol, candidate *best)
{
    double n[3];
    int iterations = 0;
    pp_v3_copy(n, seed);
    for (int round = 0; round < REFINE_ROUNDS; ++round) {
        pp_shape moved = *b;
        pp_v3_axpy(moved.position, b->position, directional_depth(a, b, n) + gap, n);
        gjk_result sep;
        gjk_closest(a, &moved, &sep);
        iterations += sep.iterations;
        if (sep.overlap || !(sep.distance > 0.0)) break;
        double next[3];
        pp_v3_scale(next, -1.0 / sep.distance, sep.v);
        offer(a, b, next, sep.p_a, method, tol, best);
        if (pp_v3_dot(next, n) >= 1.0 - 1e-15) break;
        pp_v3_copy(n, next);
    }
    return iterations;
}

/* libccd's answer (`method`: EPA or MPR) as a seed: its point `pos` (between the shapes) moved
 * onto A's supporting plane along n. */
static void offer_ccd(const pp_shape *a, const pp_shape *b, int hit, const ccd_vec3_t *dir,
                      const ccd_vec3_t *pos, pp_proximity_method method, double tol,
                      candidate *best, double n[3])
{
    double d[3] = {dir->v[0], dir->v[1], dir->v[2]}, p[3] = {pos->v[0], pos->v[1], pos->v[2]};
    double len = pp_v3_norm(d), s[3];
    n[0] = n[1] = n[2] = 0.0;
    if (hit != 0 || !pp_v3_finite(d) || !pp_v3_finite(p) || !(len > 0.5)) return;
    pp_v3_scale(n, 1.0 / len, d);
    pp_shape_core_support(a, n, s);
    pp_v3_axpy(p, p, pp_v3_dot(s, n) - pp_v3_dot(p, n), n);
    offer(a, b, n, p, method, tol, best);
}

/* Number of world face normals (faces = 1) or edge directions (faces = 0) of a core; boxes'
 * axes serve as both. */
static int core_direction_count(const pp_shape *s, int faces)
{
    switch (s->kind) {
    case PP_SHAPE_BOX: return 3;
    case PP_SHAPE_CAPSULE: return faces ? 0 : 1;
    case PP_SHAPE_POLYTOPE: return faces ? s->polytope->face_count : s->polytope->edge_count;
    default: return 0;
    }
}

static void core_direction(const pp_shape *s, int faces, int i, double out[3])
{
    const pp_polytope *p = s->polytope;
    double d[3] = {0.0, 0.0, 0.0};
    if (s->kind == PP_SHAPE_BOX) d[i] = 1.0;
    else if (s->kind == PP_SHAPE_CAPSULE) d[2] = 1.0;
    else if (faces) pp_v3_copy(d, p->face_normals + 3 * i);
    else pp_v3_sub(d, p->vertices + 3 * p->edges[4 * i + 1], p->vertices + 3 * p->edges[4 * i]);
    pp_m3_mul(out, s->R, d);
}

/*
 * Separating-axis candidates: the faces of D = A - B have the normals of A's faces, of B's
 * faces and of cross products of an edge of A with an edge of B, so the depth is the minimum
 * of h(u) over those axes and both signs. Exact; used when the product of edge counts is
 * small (boxes: 15 axes), where libccd alone can miss the nearest face of deep overlaps.
 */
static void offer_axes(const pp_shape *a, const pp_shape *b, double tol, candidate *best)
{
    int fa = core_direction_count(a, 1), fb = core_direction_count(b, 1);
    int ea = core_direction_count(a, 0), eb = core_direction_count(b, 0);
    if (fa + fb + ea * eb > SAT_MAX_AXES) return;
    for (int i = 0; i < fa + fb + ea * eb; ++i) {
        double u[3], scale = 1.0;
        if (i < fa) {
            core_direction(a, 1, i, u);
        } else if (i < fa + fb) {
            core_direction(b, 1, i - fa, u);
        } else {
            double da[3], db[3];
            int j = i - fa - fb;
            core_direction(a, 0, j / eb, da);
            core_direction(b, 0, j % eb, db);
            pp_v3_cross(u, da, db);
            scale = pp_v3_norm(da) * pp_v3_norm(db);
        }
        double len = pp_v3_norm(u);
        if (!(len > 1e-9 * scale)) continue; /* parallel edges: no face of D */
        pp_v3_scale(u, 1.0 / len, u);
        offer(a, b, u, NULL, PP_PROXIMITY_AXES, tol, best);
        pp_v3_scale(u, -1.0, u);
        offer(a, b, u, NULL, PP_PROXIMITY_AXES, tol, best);
    }
}

/*
 * Penetration of overlapping (or touching) cores: the depth is min over unit n of
 * h(n) = h_A(n) + h_B(-n), attained at the normal of the face of D nearest the origin. Every
 * candidate n gives an upper bound h(n), exact at that normal. Seeds: libccd EPA
 * (epa_tolerance 1e-12) and MPR normals (EPA alone returns depth 0 in symmetric face-face
 * cases and a bad normal when touching, docs/references.md), and the direction between the
 * centres (a separating direction when the shapes just touch); each is refined by refine().
 * Each libccd call gets a support budget (ccd_budget): one that runs out offers no seed.
 * out->method is the seed whose normal (or its refinement) first reached the depth kept, to
 * within tol (offer), or PP_PROXIMITY_GJK where no candidate exists and GJK's own closest
 * points (cores touching within TOUCH_RELATIVE) are the answer.
 */
static pp_status core_penetration(const pp_shape *a, const pp_shape *b, const gjk_result *g,
                                  core_result *out)
{
    ccd_t ccd;
    ccd_setup(&ccd);
    ccd_budget budget = {0, CCD_MAX_POINTS, 0};
    ccd_object oa = {a, 0.0, &budget}, ob = {b, 0.0, &budget};
    double size = core_size(a) + core_size(b) + DBL_MIN;
    double tol = TOUCH_RELATIVE * size, gap = REFINE_GAP_RELATIVE * size;
    candidate best = {{0.0, 0.0, 0.0}, HUGE_VAL, {0.0, 0.0, 0.0}, 0, PP_PROXIMITY_GJK};
    static const pp_proximity_method seed_method[3] = {PP_PROXIMITY_EPA, PP_PROXIMITY_MPR,
                                                        PP_PROXIMITY_CENTRES};
    double seeds[3][3], ca[3], cb[3];
    ccd_real_t depth;
    ccd_vec3_t dir, pos;

    int epa = ccdGJKPenetration(&oa, &ob, &ccd, &depth, &dir, &pos);
    if (budget.exhausted) epa = -1;
    offer_ccd(a, b, epa, &dir, &pos, PP_PROXIMITY_EPA, tol, &best, seeds[0]);
    budget = (ccd_budget){0, CCD_MAX_POINTS, 0};
    int mpr = ccdMPRPenetration(&oa, &ob, &ccd, &depth, &dir, &pos);
    if (budget.exhausted) mpr = -1;
    offer_ccd(a, b, mpr, &dir, &pos, PP_PROXIMITY_MPR, tol, &best, seeds[1]);
    pp_shape_center(a, ca);
    pp_shape_center(b, cb);
    pp_v3_sub(seeds[2], cb, ca);
    double len = pp_v3_norm(seeds[2]);
    if (len > 0.0) {
        pp_v3_scale(seeds[2], 1.0 / len, seeds[2]);
        offer(a, b, seeds[2], NULL, PP_PROXIMITY_CENTRES, tol, &best);
    }
    offer_axes(a, b, tol, &best);
    double axis_best[3];
    pp_v3_copy(axis_best, best.n);
    const pp_proximity_method axis_best_method = best.method;
    out->iterations = 0;
    for (int i = 0; i < 3; ++i)
        if (pp_v3_dot(seeds[i], seeds[i]) > 0.0)
            out->iterations += refine(a, b, seeds[i], seed_method[i], gap, tol, &best);
    if (best.found) out->iterations += refine(a, b, axis_best, axis_best_method, gap, tol, &best);

    if (!best.found) {
        if (!(g->distance > 0.0)) {
            pp_log(PP_LOG_ERROR, "pp_shape_distance: no penetration normal for coincident shapes");
            return PP_ERR_SOLVER;
        }
        best.depth = -g->distance;
        pp_v3_scale(best.n, -1.0 / g->distance, g->v);
        pp_v3_copy(best.p_a, g->p_a);
    }
    out->method = best.method;
    out->distance = -best.depth;
    pp_v3_copy(out->n, best.n);
    pp_v3_copy(out->p_a, best.p_a);
    pp_v3_axpy(out->p_b, best.p_a, -best.depth, best.n);
    return PP_OK;
}

/* ------------------------------------------------------------------------- closed forms */

/* Closest points of segments p0 + s d1 and q0 + t d2, s, t in [0, 1] (d may be zero). */
static void segment_segment(const double p0[3], const double d1[3], const double q0[3],
                            const double d2[3], double cp[3], double cq[3])
{
    double r[3];
    pp_v3_sub(r, p0, q0);
    double a = pp_v3_dot(d1, d1), e = pp_v3_dot(d2, d2), f = pp_v3_dot(d2, r), s = 0.0, t = 0.0;
    if (a > 0.0 || e > 0.0) {
        if (a == 0.0) {
            t = fmin(fmax(f / e, 0.0), 1.0);
        } else {
            double c = pp_v3_dot(d1, r);
            if (e == 0.0) {
                s = fmin(fmax(-c / a, 0.0), 1.0);
            } else {
                /* Unclamped minimiser of |r + s d1 - t d2|^2 over s, then t, then re-clamp. */
                double bb = pp_v3_dot(d1, d2), denom = a * e - bb * bb;
                s = denom > 0.0 ? fmin(fmax((bb * f - c * e) / denom, 0.0), 1.0) : 0.0;
                t = (bb * s + f) / e;
                if (t < 0.0) {
                    t = 0.0;
                    s = fmin(fmax(-c / a, 0.0), 1.0);
                } else if (t > 1.0) {
                    t = 1.0;
                    s = fmin(fmax((bb - c) / a, 0.0), 1.0);
                }
            }
        }
    }
    pp_v3_axpy(cp, p0, s, d1);
    pp_v3_axpy(cq, q0, t, d2);
}

/* A unit vector perpendicular to u (u != 0). */
static void perpendicular(const double u[3], double out[3])
{
    double e[3] = {0.0, 0.0, 0.0};
    int k = fabs(u[0]) <= fabs(u[1]) && fabs(u[0]) <= fabs(u[2]) ? 0 : fabs(u[1]) <= fabs(u[2]) ? 1 : 2;
    e[k] = 1.0;
    pp_v3_cross(out, u, e);
    pp_v3_scale(out, 1.0 / pp_v3_norm(out), out);
}

static void core_segment(const pp_shape *s, double p0[3], double d[3])
{
    double half[3] = {0.0, 0.0, 0.5 * (s->kind == PP_SHAPE_CAPSULE ? s->length : 0.0)};
    double axis[3];
    pp_m3_mul(axis, s->R, half);
    pp_v3_sub(p0, s->position, axis);
    pp_v3_scale(d, 2.0, axis);
}

/* Sphere/capsule pairs: closest points of the core segments. When the cores meet, the normal
 * is e_A x e_B (non-parallel segments), else a direction perpendicular to the segments, with
 * the sign that points from A's centre towards B's. */
static void point_segment_cores(const pp_shape *a, const pp_shape *b, core_result *out)
{
    double p0[3], d1[3], q0[3], d2[3], diff[3];
    core_segment(a, p0, d1);
    core_segment(b, q0, d2);
    segment_segment(p0, d1, q0, d2, out->p_a, out->p_b);
    pp_v3_sub(diff, out->p_b, out->p_a);
    out->distance = pp_v3_norm(diff);
    out->method = PP_PROXIMITY_ANALYTIC;
    out->iterations = 0;
    if (out->distance > 0.0) {
        pp_v3_scale(out->n, 1.0 / out->distance, diff);
        return;
    }
    double x[3], centres[3];
    pp_v3_cross(x, d1, d2);
    pp_v3_sub(centres, b->position, a->position);
    if (pp_v3_norm(x) > 1e-12 * pp_v3_norm(d1) * pp_v3_norm(d2)) {
        pp_v3_scale(out->n, 1.0 / pp_v3_norm(x), x);
    } else if (pp_v3_dot(d1, d1) > 0.0 || pp_v3_dot(d2, d2) > 0.0) {
        perpendicular(pp_v3_dot(d1, d1) > 0.0 ? d1 : d2, out->n);
    } else if (pp_v3_norm(centres) > 0.0) {
        pp_v3_scale(out->n, 1.0 / pp_v3_norm(centres), centres);
    } else {
        out->n[0] = 0.0, out->n[1] = 0.0, out->n[2] = 1.0;
    }
    if (pp_v3_dot(out->n, centres) < 0.0) pp_v3_scale(out->n, -1.0, out->n);
}

/* Plane (half-space eta . x <= d) against a shape X: the deepest point of X along -eta is its
 * support s(-eta), and the signed distance is eta . s - d. */
static void plane_against(const pp_shape *plane, const pp_shape *x, int plane_is_a,
                          pp_proximity *out)
{
    double m[3], s[3], foot[3];
    pp_v3_scale(m, -1.0, plane->normal);
    pp_shape_support(x, m, 0.0, s);
    double psi = pp_v3_dot(plane->normal, s) - plane->offset;
    pp_v3_axpy(foot, s, -psi, plane->normal);
    out->distance = psi;
    if (plane_is_a) {
        pp_v3_copy(out->n, plane->normal);
        pp_v3_copy(out->p_a, foot);
        pp_v3_copy(out->p_b, s);
    } else {
        pp_v3_copy(out->n, m);
        pp_v3_copy(out->p_a, s);
        pp_v3_copy(out->p_b, foot);
    }
    out->method = PP_PROXIMITY_ANALYTIC;
    out->iterations = 0;
}

/*
 * A cylinder C (radius r, half length e along its local z) against a point p (a sphere's
 * core), closed form. In C's frame p = (x, y, z), rho = |(x, y)|. Outside C (rho > r or
 * |z| > e) the closest point of C is q = (min(rho, r) (x, y)/rho, clamp(z, -e, e)) and the
 * distance |p - q|, normal (p - q)/|p - q|. Inside, the depth is the smaller of r - rho (out
 * through the side, radially) and e - |z| (out through the nearer cap), and q is p moved out
 * by it. The result is A = cylinder, B = point: p_b - p_a = distance n.
 */
static void cylinder_point_core(const pp_shape *cyl, const double point[3], core_result *out)
{
    double rel[3], p[3], q[3], n[3] = {0.0, 0.0, 0.0};
    pp_v3_sub(rel, point, cyl->position);
    pp_m3_tmul(p, cyl->R, rel);
    double r = cyl->radius, e = 0.5 * cyl->length, rho = sqrt(p[0] * p[0] + p[1] * p[1]);
    double distance;
    if (rho > r || fabs(p[2]) > e) {
        double k = rho > r ? r / rho : 1.0, d[3];
        q[0] = k * p[0];
        q[1] = k * p[1];
        q[2] = fmin(fmax(p[2], -e), e);
        pp_v3_sub(d, p, q);
        distance = pp_v3_norm(d);
        pp_v3_scale(n, 1.0 / distance, d);
    } else {
        double side = r - rho, cap = e - fabs(p[2]);
        if (side < cap && rho > 0.0) {
            n[0] = p[0] / rho;
            n[1] = p[1] / rho;
            distance = -side;
        } else {
            n[2] = p[2] >= 0.0 ? 1.0 : -1.0;
            distance = -cap;
        }
        pp_v3_axpy(q, p, -distance, n);
    }
    pp_m3_mul(out->n, cyl->R, n);
    pp_m3_mul(out->p_a, cyl->R, q);
    pp_v3_add(out->p_a, out->p_a, cyl->position);
    pp_v3_copy(out->p_b, point);
    out->distance = distance;
    out->method = PP_PROXIMITY_ANALYTIC;
    out->iterations = 0;
}

static int is_round(const pp_shape *s)
{
    return s->kind == PP_SHAPE_SPHERE || s->kind == PP_SHAPE_CAPSULE;
}

/* ------------------------------------------------------------------------- public */

static pp_status check_pair(const pp_shape *a, const pp_shape *b, const char *who)
{
    if (!a || !b) {
        pp_log(PP_LOG_ERROR, "%s: NULL shape", who);
        return PP_ERR_NULL_ARGUMENT;
    }
    pp_status s = pp_shape_validate(a);
    if (s == PP_OK) s = pp_shape_validate(b);
    if (s != PP_OK) {
        pp_log(PP_LOG_ERROR, "%s: invalid shape (see previous message)", who);
        return s;
    }
    if (a->kind == PP_SHAPE_PLANE && b->kind == PP_SHAPE_PLANE) {
        pp_log(PP_LOG_ERROR, "%s: plane against plane is not supported", who);
        return PP_ERR_UNSUPPORTED;
    }
    return PP_OK;
}

pp_status pp_shape_distance(const pp_shape *a, const pp_shape *b, pp_proximity *out)
{
    pp_status status = check_pair(a, b, "pp_shape_distance");
    if (status != PP_OK) return status;
    if (!out) {
        pp_log(PP_LOG_ERROR, "pp_shape_distance: NULL output");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (a->kind == PP_SHAPE_PLANE || b->kind == PP_SHAPE_PLANE) {
        if (a->kind == PP_SHAPE_PLANE) plane_against(a, b, 1, out);
        else plane_against(b, a, 0, out);
        return PP_OK;
    }

    core_result core = {0};
    if (is_round(a) && is_round(b)) {
        point_segment_cores(a, b, &core);
    } else if (a->kind == PP_SHAPE_CYLINDER && b->kind == PP_SHAPE_SPHERE) {
        cylinder_point_core(a, b->position, &core);
    } else if (a->kind == PP_SHAPE_SPHERE && b->kind == PP_SHAPE_CYLINDER) {
        cylinder_point_core(b, a->position, &core); /* then from the sphere's side */
        double q[3];
        pp_v3_copy(q, core.p_a);
        pp_v3_copy(core.p_a, core.p_b);
        pp_v3_copy(core.p_b, q);
        pp_v3_scale(core.n, -1.0, core.n);
    } else {
        gjk_result g;
        gjk_closest(a, b, &g);
        if (!g.overlap) {
            core.distance = g.distance;
            pp_v3_copy(core.p_a, g.p_a);
            pp_v3_copy(core.p_b, g.p_b);
            pp_v3_scale(core.n, -1.0 / g.distance, g.v);
            core.method = PP_PROXIMITY_GJK;
        } else {
            status = core_penetration(a, b, &g, &core);
            if (status != PP_OK) return status;
        }
        core.iterations += g.iterations;
    }

    /* Grow the cores by their radii along n: p_b - p_a = (d_core - r_a - r_b) n. */
    double ra = pp_shape_core_radius(a), rb = pp_shape_core_radius(b);
    out->distance = core.distance - ra - rb;
    pp_v3_copy(out->n, core.n);
    pp_v3_axpy(out->p_a, core.p_a, ra, core.n);
    pp_v3_axpy(out->p_b, core.p_b, -rb, core.n);
    out->method = core.method;
    out->iterations = core.iterations;
    if (!isfinite(out->distance) || !pp_v3_finite(out->n) || !pp_v3_finite(out->p_a) ||
        !pp_v3_finite(out->p_b)) {
        pp_log(PP_LOG_ERROR, "pp_shape_distance: non-finite result");
        return PP_ERR_NUMERICAL;
    }
    return PP_OK;
}

int pp_shapes_within(const pp_shape *shape_a, const pp_shape *shape_b, double eps)
{
    if (check_pair(shape_a, shape_b, "pp_shapes_within") != PP_OK) return 0;
    /* the pair as its contacts see it (a cylinder's prism against polytopes, capsules,
     * cylinders) */
    const pp_shape form_a = pp_shape_pair_form(shape_a, shape_b);
    const pp_shape form_b = pp_shape_pair_form(shape_b, shape_a);
    const pp_shape *a = &form_a, *b = &form_b;
    if (!isfinite(eps) || eps < 0.0) {
        pp_log(PP_LOG_ERROR, "pp_shapes_within: eps %g must be finite and >= 0", eps);
        return 0;
    }
    if (a->kind == PP_SHAPE_PLANE || b->kind == PP_SHAPE_PLANE || (is_round(a) && is_round(b)) ||
        a->kind == PP_SHAPE_CYLINDER || b->kind == PP_SHAPE_CYLINDER) {
        pp_proximity p;
        return pp_shape_distance(a, b, &p) == PP_OK && p.distance < eps;
    }
    /* MPR's portal refinement in libccd 2.1 (refinePortal) has no iteration bound either:
     * under the support budget an origin support ends it (it becomes the portal's v1, which
     * then encapsulates the origin), and a call that ran out is answered by the distance */
    ccd_t ccd;
    ccd_setup(&ccd);
    ccd_budget budget = {0, CCD_MAX_POINTS, 0};
    ccd_object oa = {a, pp_shape_core_radius(a), &budget};
    ccd_object ob = {b, pp_shape_core_radius(b) + eps, &budget};
    const int hit = ccdMPRIntersect(&oa, &ob, &ccd);
    if (budget.exhausted) {
        pp_proximity p;
        return pp_shape_distance(a, b, &p) == PP_OK && p.distance < eps;
    }
    return hit ? 1 : 0;
}
