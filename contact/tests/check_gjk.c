/*
 * Proximity (pp_shape_distance, pp_shapes_within) against closed forms and against reference
 * distances computed here independently of the library:
 *  - structured cases (face-face, offset, edge-down, vertex-down, crossed edges, polytopes,
 *    spheres, capsules, planes) at gaps from +2 eps to -eps, each also under a common rigid
 *    motion of both shapes (the distance is invariant, the normal rotates);
 *  - random poses of boxes: separated pairs against the brute-force minimum over
 *    vertex-box and edge-edge distances, overlapping pairs against the separating-axis depth
 *    (the minimum over the 15 face normals of the Minkowski difference of h_A(u) + h_B(-u)).
 */
#define _DEFAULT_SOURCE /* M_PI, M_SQRT2 */
#include "pegplus/geometry.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double EPS = 0.01;          /* proximity margin of the structured cases */
static const double DIST_TOL = 1e-9;     /* m, signed distance */
static const double NORMAL_TOL = 1e-7;   /* normal against the expected one */
static const double UNIT_TOL = 1e-12;    /* |n| - 1 */
static const double POINT_TOL = 1e-9;    /* p_b - p_a = psi n, support property of p_a, p_b */

/* ----------------------------------------------------------------------- small math */

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross(double o[3], const double a[3], const double b[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static void mat_mul(double out[9], const double A[9], const double B[9])
{
    double r[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            r[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    memcpy(out, r, sizeof r);
}

static void mat_vec(double out[3], const double R[9], const double v[3])
{
    double r[3];
    for (int i = 0; i < 3; ++i) r[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
    memcpy(out, r, sizeof r);
}

/* Rotation by angle about a unit axis (Rodrigues). */
static void rotation(double R[9], const double axis[3], double angle)
{
    double c = cos(angle), s = sin(angle), t = 1 - c, x = axis[0], y = axis[1], z = axis[2];
    double r[9] = {t * x * x + c,     t * x * y - s * z, t * x * z + s * y,
                   t * x * y + s * z, t * y * y + c,     t * y * z - s * x,
                   t * x * z - s * y, t * y * z + s * x, t * z * z + c};
    memcpy(R, r, sizeof r);
}

static unsigned long long rng_state;

static double uniform(double lo, double hi)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * ((double)(rng_state >> 11) / 9007199254740992.0);
}

static void random_unit(double u[3])
{
    double n;
    do {
        for (int k = 0; k < 3; ++k) u[k] = uniform(-1, 1);
        n = sqrt(dot(u, u));
    } while (n < 0.1 || n > 1.0);
    for (int k = 0; k < 3; ++k) u[k] /= n;
}

static void random_rotation(double R[9])
{
    double axis[3];
    random_unit(axis);
    rotation(R, axis, uniform(-M_PI, M_PI));
}

static const double X_AXIS[3] = {1, 0, 0}, Y_AXIS[3] = {0, 1, 0}, Z_AXIS[3] = {0, 0, 1};

/* ------------------------------------------------------ reference distances for boxes */

static void box_vertex(const pp_shape *b, int i, double out[3])
{
    double l[3];
    for (int k = 0; k < 3; ++k) l[k] = ((i >> k) & 1 ? 0.5 : -0.5) * b->lengths[k];
    mat_vec(out, b->R, l);
    for (int k = 0; k < 3; ++k) out[k] += b->position[k];
}

/* Distance from a point to a solid box: clamp its local coordinates. */
static double point_box(const double p[3], const pp_shape *b)
{
    double r[3], l[3], s = 0.0;
    for (int k = 0; k < 3; ++k) r[k] = p[k] - b->position[k];
    for (int k = 0; k < 3; ++k) l[k] = b->R[k] * r[0] + b->R[3 + k] * r[1] + b->R[6 + k] * r[2];
    for (int k = 0; k < 3; ++k) {
        double h = 0.5 * b->lengths[k], excess = fabs(l[k]) - h;
        if (excess > 0) s += excess * excess;
    }
    return sqrt(s);
}

static double point_segment(const double p[3], const double a[3], const double b[3])
{
    double d[3], r[3];
    for (int k = 0; k < 3; ++k) d[k] = b[k] - a[k], r[k] = p[k] - a[k];
    double t = fmin(fmax(dot(r, d) / dot(d, d), 0.0), 1.0), s = 0.0;
    for (int k = 0; k < 3; ++k) s += (r[k] - t * d[k]) * (r[k] - t * d[k]);
    return sqrt(s);
}

/* Segment-segment distance: the interior critical point of |a + s u - c - t w|^2 if it lies
 * in the unit square, else the best of the four endpoint-to-segment distances. */
static double segment_segment(const double a[3], const double b[3], const double c[3], const double d[3])
{
    double u[3], w[3], r[3];
    for (int k = 0; k < 3; ++k) u[k] = b[k] - a[k], w[k] = d[k] - c[k], r[k] = a[k] - c[k];
    double uu = dot(u, u), ww = dot(w, w), uw = dot(u, w), det = uu * ww - uw * uw;
    double best = fmin(fmin(point_segment(a, c, d), point_segment(b, c, d)),
                       fmin(point_segment(c, a, b), point_segment(d, a, b)));
    if (det > 1e-14 * uu * ww) {
        double s = (uw * dot(w, r) - ww * dot(u, r)) / det, t = (uu * dot(w, r) - uw * dot(u, r)) / det;
        if (s > 0 && s < 1 && t > 0 && t < 1) {
            double q = 0.0;
            for (int k = 0; k < 3; ++k) q += (r[k] + s * u[k] - t * w[k]) * (r[k] + s * u[k] - t * w[k]);
            best = fmin(best, sqrt(q));
        }
    }
    return best;
}

/* Separated boxes: the closest pair is vertex-to-solid or edge-edge. */
static double brute_box_distance(const pp_shape *a, const pp_shape *b)
{
    double va[8][3], vb[8][3], best = HUGE_VAL;
    for (int i = 0; i < 8; ++i) box_vertex(a, i, va[i]), box_vertex(b, i, vb[i]);
    for (int i = 0; i < 8; ++i) best = fmin(best, fmin(point_box(va[i], b), point_box(vb[i], a)));
    for (int i = 0; i < 8; ++i)
        for (int bit = 0; bit < 3; ++bit) {
            if (i & (1 << bit)) continue;
            for (int j = 0; j < 8; ++j)
                for (int bj = 0; bj < 3; ++bj) {
                    if (j & (1 << bj)) continue;
                    best = fmin(best, segment_segment(va[i], va[i | 1 << bit], vb[j], vb[j | 1 << bj]));
                }
        }
    return best;
}

static double box_h(const pp_shape *b, const double u[3])
{
    double h = -HUGE_VAL, v[3];
    for (int i = 0; i < 8; ++i) box_vertex(b, i, v), h = fmax(h, dot(v, u));
    return h;
}

/* Overlap along the 15 separating axes: depth = min over axes u (both signs) of
 * h_A(u) + h_B(-u); negative when u separates. Returns the depth (> 0: overlapping); normal
 * (if not NULL) gets the minimising u (from A to B). */
static double sat_axis(const pp_shape *a, const pp_shape *b, double normal[3])
{
    double axes[15][3];
    int n = 0;
    for (int k = 0; k < 3; ++k) {
        for (int r = 0; r < 3; ++r) axes[n][r] = a->R[3 * r + k];
        ++n;
        for (int r = 0; r < 3; ++r) axes[n][r] = b->R[3 * r + k];
        ++n;
    }
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double ea[3] = {a->R[i], a->R[3 + i], a->R[6 + i]}, eb[3] = {b->R[j], b->R[3 + j], b->R[6 + j]};
            cross(axes[n], ea, eb);
            double len = sqrt(dot(axes[n], axes[n]));
            if (len < 1e-9) continue;
            for (int k = 0; k < 3; ++k) axes[n][k] /= len;
            ++n;
        }
    double depth = HUGE_VAL;
    for (int i = 0; i < n; ++i)
        for (int sign = -1; sign <= 1; sign += 2) {
            double u[3] = {sign * axes[i][0], sign * axes[i][1], sign * axes[i][2]}, m[3] = {-u[0], -u[1], -u[2]};
            double h = box_h(a, u) + box_h(b, m);
            if (h < depth) {
                depth = h;
                if (normal) memcpy(normal, u, sizeof u);
            }
        }
    return depth;
}

static double sat_depth(const pp_shape *a, const pp_shape *b) { return sat_axis(a, b, NULL); }

/* ------------------------------------------------------------------ result checks */

/* Support value h_S(u) = max over S of u.x, from the shape's own description. */
static double h_shape(const pp_shape *s, const double u[3])
{
    double p[3];
    pp_shape_support(s, u, 0.0, p);
    return dot(p, u);
}

static void check_result(const pp_shape *a, const pp_shape *b, const pp_proximity *r,
                         double want, const double want_n[3], const char *what)
{
    ck_assert_msg(fabs(r->distance - want) <= DIST_TOL, "%s: distance %.15g, expected %.15g (err %.3g, method %d)",
                  what, r->distance, want, r->distance - want, r->method);
    ck_assert_msg(fabs(sqrt(dot(r->n, r->n)) - 1.0) <= UNIT_TOL, "%s: normal not unit", what);
    if (want_n)
        for (int k = 0; k < 3; ++k)
            ck_assert_msg(fabs(r->n[k] - want_n[k]) <= NORMAL_TOL, "%s: normal (%g %g %g), expected (%g %g %g)",
                          what, r->n[0], r->n[1], r->n[2], want_n[0], want_n[1], want_n[2]);
    for (int k = 0; k < 3; ++k)
        ck_assert_msg(fabs(r->p_b[k] - r->p_a[k] - r->distance * r->n[k]) <= POINT_TOL,
                      "%s: p_b - p_a != psi n", what);
    double m[3] = {-r->n[0], -r->n[1], -r->n[2]};
    if (a->kind != PP_SHAPE_PLANE)
        ck_assert_msg(fabs(dot(r->p_a, r->n) - h_shape(a, r->n)) <= POINT_TOL,
                      "%s: p_a is not A's extreme point along n", what);
    if (b->kind != PP_SHAPE_PLANE)
        ck_assert_msg(fabs(dot(r->p_b, m) - h_shape(b, m)) <= POINT_TOL,
                      "%s: p_b is not B's extreme point along -n", what);
}

/* ------------------------------------------------------------ structured cases */

typedef struct scene {
    pp_shape a, b;
    double normal[3]; /* expected unit normal A -> B */
    int has_normal;
} scene;

enum { CASE_COUNT = 17, GAP_COUNT = 8, MOTION_COUNT = 2 };
static const double GAPS[GAP_COUNT] = {2 * 0.01, 0.01, 0.005, 0.001, 0.0, -0.001, -0.005, -0.01};
static const char *CASE_NAMES[CASE_COUNT] = {
    "box-box face-face", "box-box offset", "box-box edge-down", "box-box vertex-down",
    "box-box crossed edges", "polytope-polytope vertex-face", "box-polytope face-face",
    "sphere-box face", "sphere-box corner", "sphere-sphere", "plane-capsule",
    "capsule-box lying", "capsule-box standing", "plane-box", "polytope-plane",
    "capsule-capsule crossed", "capsule-sphere"};

static pp_polytope *octahedron, *cube_hull, *blob;

static void make_polytopes(void)
{
    const double oct[18] = {1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1};
    double cube[24], pts[3 * 30];
    for (int i = 0; i < 8; ++i)
        for (int k = 0; k < 3; ++k) cube[3 * i + k] = (i >> k) & 1 ? 0.5 : -0.5;
    rng_state = 4242;
    for (int i = 0; i < 30; ++i)
        for (int k = 0; k < 3; ++k) pts[3 * i + k] = uniform(-0.4, 0.4) * (k == 0 ? 2.0 : 1.0);
    ck_assert_int_eq(pp_polytope_from_points(oct, 6, &octahedron), PP_OK);
    ck_assert_int_eq(pp_polytope_from_points(cube, 8, &cube_hull), PP_OK);
    ck_assert_int_eq(pp_polytope_from_points(pts, 30, &blob), PP_OK);
}

static void free_polytopes(void)
{
    pp_polytope_destroy(octahedron);
    pp_polytope_destroy(cube_hull);
    pp_polytope_destroy(blob);
    octahedron = cube_hull = blob = NULL;
}

/* Lowest world z of a posed box or polytope (brute force over its vertices). */
static double lowest_z(const pp_shape *s)
{
    double low = HUGE_VAL, v[3];
    if (s->kind == PP_SHAPE_BOX)
        for (int i = 0; i < 8; ++i) box_vertex(s, i, v), low = fmin(low, v[2]);
    else
        for (int i = 0; i < s->polytope->vertex_count; ++i) {
            mat_vec(v, s->R, s->polytope->vertices + 3 * i);
            low = fmin(low, v[2] + s->position[2]);
        }
    return low;
}

/* Scene `c` at gap g: the exact signed distance is g in every case. */
static void build_scene(int c, double g, scene *s)
{
    const double unit[3] = {1, 1, 1}, r2 = M_SQRT2 / 2, r3 = sqrt(3.0) / 2;
    double R[9], R2[9], axis[3];
    memset(s, 0, sizeof *s);
    s->has_normal = 1;
    memcpy(s->normal, Z_AXIS, sizeof s->normal);
    s->a = pp_shape_make_box(unit, NULL, NULL);
    switch (c) {
    case 0: s->b = pp_shape_make_box(unit, (double[3]){0, 0, 1 + g}, NULL); break;
    case 1: s->b = pp_shape_make_box(unit, (double[3]){0.3, 0.2, 1 + g}, NULL); break;
    case 2: /* B turned 45 deg about x: its lowest edge runs along x at z = 0.5 + g */
        rotation(R, X_AXIS, M_PI / 4);
        s->b = pp_shape_make_box(unit, (double[3]){0.1, 0, 0.5 + r2 + g}, R);
        break;
    case 3: /* B's diagonal (1,1,1)/sqrt3 turned to -z: a vertex down at z = 0.5 + g */
        cross(axis, (double[3]){1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0)}, (double[3]){0, 0, -1});
        {
            double len = sqrt(dot(axis, axis));
            for (int k = 0; k < 3; ++k) axis[k] /= len;
            rotation(R, axis, acos(-1 / sqrt(3.0)));
        }
        s->b = pp_shape_make_box(unit, (double[3]){0.05, -0.1, 0.5 + r3 + g}, R);
        break;
    case 4: /* A's top edge along x at z = r2, B's bottom edge along y at z = r2 + g */
        rotation(R, X_AXIS, M_PI / 4);
        rotation(R2, Y_AXIS, M_PI / 4);
        s->a = pp_shape_make_box(unit, NULL, R);
        s->b = pp_shape_make_box(unit, (double[3]){0, 0, 2 * r2 + g}, R2);
        break;
    case 5: /* octahedron's top vertex (0,0,1) under the cube's bottom face */
        s->a = pp_shape_make_polytope(octahedron, NULL, NULL);
        s->b = pp_shape_make_polytope(cube_hull, (double[3]){0.1, 0.05, 1.5 + g}, NULL);
        break;
    case 6: s->b = pp_shape_make_polytope(cube_hull, (double[3]){-0.2, 0.1, 1 + g}, NULL); break;
    case 7: s->b = pp_shape_make_sphere(0.3, (double[3]){0.1, 0.2, 0.8 + g}); break;
    case 8: {
        double d = (0.3 + g) / sqrt(3.0);
        s->b = pp_shape_make_sphere(0.3, (double[3]){0.5 + d, 0.5 + d, 0.5 + d});
        for (int k = 0; k < 3; ++k) s->normal[k] = 1 / sqrt(3.0);
        break;
    }
    case 9: {
        const double u[3] = {2 / 3.0, -1 / 3.0, 2 / 3.0};
        s->a = pp_shape_make_sphere(0.5, NULL);
        s->b = pp_shape_make_sphere(0.25, (double[3]){(0.75 + g) * u[0], (0.75 + g) * u[1], (0.75 + g) * u[2]});
        memcpy(s->normal, u, sizeof u);
        break;
    }
    case 10: /* plane z <= 0 (A) under a capsule tilted 30 deg about x */
        rotation(R, X_AXIS, M_PI / 6);
        s->a = pp_shape_make_plane(Z_AXIS, 0.0);
        s->b = pp_shape_make_capsule(0.2, 1.0, (double[3]){0.3, 0.1, g + 0.2 + 0.5 * cos(M_PI / 6)}, R);
        break;
    case 11: /* capsule's axis turned to x, lying on the box */
        rotation(R, Y_AXIS, M_PI / 2);
        s->b = pp_shape_make_capsule(0.2, 1.0, (double[3]){0.1, 0.2, 0.7 + g}, R);
        break;
    case 12: s->b = pp_shape_make_capsule(0.2, 1.0, (double[3]){0.1, 0.2, 1.2 + g}, NULL); break;
    case 13: /* plane z <= 0 (A) under a turned box */
        rotation(R, (double[3]){0.6, 0.0, 0.8}, 0.7);
        s->a = pp_shape_make_plane(Z_AXIS, 0.0);
        s->b = pp_shape_make_box((double[3]){0.4, 0.9, 0.3}, (double[3]){0.2, 0.1, 0.0}, R);
        s->b.position[2] = g - lowest_z(&s->b);
        break;
    case 14: /* turned polytope (A) above the plane z <= 0 (B): n = -z */
        rotation(R, (double[3]){0.0, 0.6, -0.8}, 1.1);
        s->a = pp_shape_make_polytope(blob, (double[3]){0.2, 0.1, 0.0}, R);
        s->a.position[2] = g - lowest_z(&s->a);
        s->b = pp_shape_make_plane(Z_AXIS, 0.0);
        s->normal[2] = -1.0;
        break;
    case 15: /* capsules along x (A) and along y (B) */
        rotation(R, Y_AXIS, M_PI / 2);
        rotation(R2, X_AXIS, M_PI / 2);
        s->a = pp_shape_make_capsule(0.2, 1.0, NULL, R);
        s->b = pp_shape_make_capsule(0.2, 1.0, (double[3]){0.1, -0.2, 0.4 + g}, R2);
        break;
    default: /* sphere above a capsule along x */
        rotation(R, Y_AXIS, M_PI / 2);
        s->a = pp_shape_make_capsule(0.2, 1.0, NULL, R);
        s->b = pp_shape_make_sphere(0.3, (double[3]){0.1, 0, 0.5 + g});
        break;
    }
}

/* Apply x -> Q x + t to both shapes (planes: eta -> Q eta, d -> d + (Q eta) . t). */
static void move_scene(scene *s, const double Q[9], const double t[3])
{
    pp_shape *shapes[2] = {&s->a, &s->b};
    for (int i = 0; i < 2; ++i) {
        pp_shape *x = shapes[i];
        if (x->kind == PP_SHAPE_PLANE) {
            mat_vec(x->normal, Q, x->normal);
            x->offset += dot(x->normal, t);
            continue;
        }
        mat_mul(x->R, Q, x->R);
        mat_vec(x->position, Q, x->position);
        for (int k = 0; k < 3; ++k) x->position[k] += t[k];
    }
    mat_vec(s->normal, Q, s->normal);
}

START_TEST(structured_distances)
{
    int c = _i / (GAP_COUNT * MOTION_COUNT), gi = (_i / MOTION_COUNT) % GAP_COUNT, moved = _i % MOTION_COUNT;
    double g = GAPS[gi];
    scene s;
    make_polytopes();
    build_scene(c, g, &s);
    if (moved) {
        double Q[9];
        rotation(Q, (double[3]){2 / 7.0, 3 / 7.0, 6 / 7.0}, 2.1);
        move_scene(&s, Q, (double[3]){1.5, -2.0, 0.7});
    }
    char what[128];
    snprintf(what, sizeof what, "%s, gap %g%s", CASE_NAMES[c], g, moved ? ", moved" : "");
    pp_proximity r;
    ck_assert_int_eq(pp_shape_distance(&s.a, &s.b, &r), PP_OK);
    check_result(&s.a, &s.b, &r, g, s.has_normal ? s.normal : NULL, what);
    /* swapping A and B flips the normal, keeps the distance */
    pp_proximity swapped;
    ck_assert_int_eq(pp_shape_distance(&s.b, &s.a, &swapped), PP_OK);
    double flipped[3] = {-s.normal[0], -s.normal[1], -s.normal[2]};
    check_result(&s.b, &s.a, &swapped, g, flipped, what);
    /* the filter agrees with the distance away from the threshold */
    if (fabs(g - EPS) > 1e-6) ck_assert_int_eq(pp_shapes_within(&s.a, &s.b, EPS), g < EPS);
    free_polytopes();
}
END_TEST

/* --------------------------------------------------------------- random poses */

typedef struct random_case {
    const char *name;
    double la[3], lb[3];
    int as_polytope; /* B given as a polytope (hull of its corners) instead of a box */
} random_case;

static const random_case RANDOM[] = {
    {"cubes", {1, 1, 1}, {1, 1, 1}, 0},
    {"elongated", {2, 0.2, 0.5}, {0.1, 1.2, 0.6}, 0},
    {"cube vs hull", {1, 1, 1}, {0.5, 0.8, 1.3}, 1},
    {"flat vs long hull", {3, 2, 0.1}, {0.2, 0.2, 2.0}, 1},
};

START_TEST(random_box_poses)
{
    const random_case *rc = &RANDOM[_i];
    rng_state = 77 + (unsigned)_i;
    pp_polytope *hull = NULL;
    if (rc->as_polytope) {
        double pts[24];
        for (int i = 0; i < 8; ++i)
            for (int k = 0; k < 3; ++k) pts[3 * i + k] = ((i >> k) & 1 ? 0.5 : -0.5) * rc->lb[k];
        ck_assert_int_eq(pp_polytope_from_points(pts, 8, &hull), PP_OK);
    }
    double ra = 0.5 * sqrt(dot(rc->la, rc->la)), rb = 0.5 * sqrt(dot(rc->lb, rc->lb));
    int separated = 0, overlapping = 0;
    double worst_sep = 0.0, worst_pen = 0.0;
    for (int trial = 0; trial < 3000; ++trial) {
        double Ra[9], Rb[9], u[3], xa[3], xb[3];
        random_rotation(Ra);
        random_rotation(Rb);
        random_unit(u);
        for (int k = 0; k < 3; ++k) xa[k] = uniform(-1, 1);
        double reach = uniform(0.2, 1.05) * (ra + rb);
        for (int k = 0; k < 3; ++k) xb[k] = xa[k] + reach * u[k];
        pp_shape a = pp_shape_make_box(rc->la, xa, Ra), box_b = pp_shape_make_box(rc->lb, xb, Rb);
        pp_shape b = rc->as_polytope ? pp_shape_make_polytope(hull, xb, Rb) : box_b;
        double depth = sat_depth(&a, &box_b), want;
        if (depth > 0) {
            want = -depth;
            ++overlapping;
        } else {
            want = brute_box_distance(&a, &box_b);
            ++separated;
        }
        pp_proximity r;
        ck_assert_int_eq(pp_shape_distance(&a, &b, &r), PP_OK);
        double err = fabs(r.distance - want);
        if (want > 0) worst_sep = fmax(worst_sep, err);
        else worst_pen = fmax(worst_pen, err);
        char what[96];
        snprintf(what, sizeof what, "%s trial %d", rc->name, trial);
        check_result(&a, &b, &r, want, NULL, what);
        if (fabs(want - EPS) > 1e-6) ck_assert_int_eq(pp_shapes_within(&a, &b, EPS), want < EPS);
    }
    ck_assert_int_gt(separated, 300);
    ck_assert_int_gt(overlapping, 300);
    printf("random %-18s separated %4d (max err %.2e)  overlapping %4d (max err %.2e)\n", rc->name,
           separated, worst_sep, overlapping, worst_pen);
    pp_polytope_destroy(hull);
}
END_TEST

/* Capsule and sphere against random boxes near contact: the core is a segment or a point, so
 * the distance is the core's brute-force distance minus the radius. */
START_TEST(random_round_shapes)
{
    rng_state = 555;
    const double la[3] = {1.0, 0.6, 0.3};
    for (int trial = 0; trial < 2000; ++trial) {
        double Ra[9], Rb[9], xb[3];
        random_rotation(Ra);
        random_rotation(Rb);
        for (int k = 0; k < 3; ++k) xb[k] = uniform(-1.2, 1.2);
        pp_shape a = pp_shape_make_box(la, NULL, Ra);
        int capsule = trial % 2;
        pp_shape b = capsule ? pp_shape_make_capsule(0.25, 0.8, xb, Rb) : pp_shape_make_sphere(0.25, xb);
        double end0[3], end1[3], half[3] = {0, 0, capsule ? 0.4 : 0.0};
        mat_vec(half, Rb, half);
        for (int k = 0; k < 3; ++k) end0[k] = xb[k] - half[k], end1[k] = xb[k] + half[k];
        /* core outside the box: distance of the segment to the solid box, by dense sampling
         * refined with golden-section search (convex in the segment parameter) */
        double lo = 0.0, hi = 1.0;
        for (int it = 0; it < 200; ++it) {
            double m1 = lo + (hi - lo) * 0.381966, m2 = lo + (hi - lo) * 0.618034, p1[3], p2[3];
            for (int k = 0; k < 3; ++k) p1[k] = end0[k] + m1 * (end1[k] - end0[k]), p2[k] = end0[k] + m2 * (end1[k] - end0[k]);
            if (point_box(p1, &a) < point_box(p2, &a)) hi = m2;
            else lo = m1;
        }
        double p[3];
        for (int k = 0; k < 3; ++k) p[k] = end0[k] + 0.5 * (lo + hi) * (end1[k] - end0[k]);
        double core = point_box(p, &a);
        if (core < 1e-3) continue; /* the segment enters the box: no simple reference */
        pp_proximity r;
        ck_assert_int_eq(pp_shape_distance(&a, &b, &r), PP_OK);
        char what[64];
        snprintf(what, sizeof what, "%s trial %d", capsule ? "capsule" : "sphere", trial);
        check_result(&a, &b, &r, core - 0.25, NULL, what);
    }
}
END_TEST

/* ----------------------------------------------------------------- shapes, errors */

START_TEST(support_aabb_center)
{
    double R[9], p[3];
    rotation(R, Y_AXIS, M_PI / 2); /* local z -> world x */
    pp_shape cap = pp_shape_make_capsule(0.5, 2.0, (double[3]){1, 2, 3}, R);
    ck_assert_int_eq(pp_shape_support(&cap, (double[3]){3, 0, 0}, 0.1, p), 1);
    ck_assert_double_eq_tol(p[0], 1 + 1 + 0.5 + 0.1, 1e-12);
    ck_assert_double_eq_tol(p[1], 2, 1e-12);
    pp_aabb box;
    pp_shape_aabb(&cap, 0.1, &box);
    const double lo[3] = {-0.6, 1.4, 2.4}, hi[3] = {2.6, 2.6, 3.6};
    for (int k = 0; k < 3; ++k) {
        ck_assert_double_eq_tol(box.min[k], lo[k], 1e-12);
        ck_assert_double_eq_tol(box.max[k], hi[k], 1e-12);
    }
    pp_shape plane = pp_shape_make_plane(Z_AXIS, 0.5);
    ck_assert_int_eq(pp_shape_support(&plane, Z_AXIS, 0.0, p), 0);
    pp_shape_aabb(&plane, 0.1, &box);
    ck_assert(box.max[2] == 0.6 && isinf(box.min[2]) && isinf(box.max[0]));
    pp_shape_center(&plane, p);
    ck_assert_double_eq_tol(p[2], 0.5, 1e-15);
}
END_TEST

/* A polytope's box (pp_shape_aabb's one pass over the vertices) is bit for bit the box of six
 * support points along +-e_k grown by the margin, as the broadphase formed it before: random
 * poses, and the identity (rows with zeros: ties between vertices and signed zeros). */
START_TEST(polytope_aabb_is_support_box)
{
    make_polytopes();
    const pp_polytope *polys[3] = {octahedron, cube_hull, blob};
    ck_assert_int_le(blob->vertex_count, 32); /* the one-pass branch */
    rng_state = 77;
    for (int trial = 0; trial < 300; ++trial) {
        double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, p[3] = {0, 0, 0};
        if (trial % 10) {
            random_rotation(R);
            for (int k = 0; k < 3; ++k) p[k] = uniform(-5, 5);
        }
        const double margin = trial % 3 ? uniform(0.0, 0.2) : 0.0;
        pp_shape s = pp_shape_make_polytope(polys[trial % 3], p, R);
        pp_aabb box;
        pp_shape_aabb(&s, margin, &box);
        for (int k = 0; k < 3; ++k) {
            double e[3] = {0, 0, 0}, hi[3], lo[3];
            e[k] = 1.0;
            pp_shape_support(&s, e, margin, hi);
            e[k] = -1.0;
            pp_shape_support(&s, e, margin, lo);
            ck_assert_msg(memcmp(&box.max[k], &hi[k], sizeof hi[k]) == 0 &&
                              memcmp(&box.min[k], &lo[k], sizeof lo[k]) == 0,
                          "trial %d axis %d: [%a, %a], support [%a, %a]", trial, k, box.min[k],
                          box.max[k], lo[k], hi[k]);
        }
    }
    free_polytopes();
}
END_TEST

static char last_message[512];

static void capture(pp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    snprintf(last_message, sizeof last_message, "%s", message);
}

START_TEST(invalid_shapes_rejected)
{
    pp_set_log_hook(capture, NULL);
    const double unit[3] = {1, 1, 1};
    pp_shape a = pp_shape_make_box(unit, NULL, NULL), b = pp_shape_make_sphere(0.5, (double[3]){2, 0, 0});
    pp_proximity r;
    ck_assert_int_eq(pp_shape_distance(NULL, &b, &r), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_shape_distance(&a, &b, NULL), PP_ERR_NULL_ARGUMENT);
    pp_shape bad = b;
    bad.radius = -1;
    ck_assert_int_eq(pp_shape_distance(&a, &bad, &r), PP_ERR_INVALID_ARGUMENT);
    bad = a;
    bad.R[0] = 2.0;
    ck_assert_int_eq(pp_shape_validate(&bad), PP_ERR_INVALID_ARGUMENT);
    ck_assert(strstr(last_message, "orthonormal"));
    bad = a;
    bad.position[1] = NAN;
    ck_assert_int_eq(pp_shape_validate(&bad), PP_ERR_INVALID_ARGUMENT);
    bad = a;
    bad.R[0] = bad.R[4] = -1.0; /* rotation by pi about z: fine */
    ck_assert_int_eq(pp_shape_validate(&bad), PP_OK);
    bad.R[8] = -1.0; /* reflection */
    ck_assert_int_eq(pp_shape_validate(&bad), PP_ERR_INVALID_ARGUMENT);
    pp_shape p1 = pp_shape_make_plane(Z_AXIS, 0), p2 = pp_shape_make_plane(X_AXIS, 1);
    ck_assert_int_eq(pp_shape_distance(&p1, &p2, &r), PP_ERR_UNSUPPORTED);
    ck_assert_int_eq(pp_shapes_within(&p1, &p2, 0.1), 0);
    pp_shape poly = pp_shape_make_polytope(NULL, NULL, NULL);
    ck_assert_int_eq(pp_shape_validate(&poly), PP_ERR_NULL_ARGUMENT);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

/* Deep overlap and coincident shapes still give a finite unit normal. */
START_TEST(deep_and_coincident)
{
    const double unit[3] = {1, 1, 1};
    pp_shape a = pp_shape_make_box(unit, NULL, NULL), b = pp_shape_make_box(unit, (double[3]){0, 0, 0.2}, NULL);
    pp_proximity r;
    ck_assert_int_eq(pp_shape_distance(&a, &b, &r), PP_OK);
    check_result(&a, &b, &r, -0.8, Z_AXIS, "deep face-face");
    b.position[2] = 0.0;
    ck_assert_int_eq(pp_shape_distance(&a, &b, &r), PP_OK);
    check_result(&a, &b, &r, -1.0, NULL, "coincident boxes");
    pp_shape s1 = pp_shape_make_sphere(0.5, NULL), s2 = pp_shape_make_sphere(0.25, NULL);
    ck_assert_int_eq(pp_shape_distance(&s1, &s2, &r), PP_OK);
    check_result(&s1, &s2, &r, -0.75, NULL, "concentric spheres");
}
END_TEST

/*
 * Two bricks of the crash wall (rows 3 and 4, diagonal neighbours, after a fallback step) as
 * pp_polytope_box shapes, poses as printed to 17 digits: libccd 2.1's EPA never ended on this
 * pair (libccd issue #7), so pp_shape_distance did not return. It must return (the test case's
 * timeout), PP_OK, with the depth and normal of the separating-axis minimum, which is exact for
 * two boxes (the faces of D = A - B have those 15 normals).
 */
START_TEST(epa_hang_pair)
{
    const double lengths[3] = {0.5, 0.6, 0.3};
    const double xa[3] = {0.2195933013834315, -4.2823149467210246, 1.3501612806053946};
    const double Ra[9] = {0.99981667923629958, 0.019130821653570107, -0.00078713642889051969,
                          -0.01913076949832767, 0.99981698736387803, 7.3736156682262542e-05,
                          0.0007884030062405889, -5.866411372886591e-05, 0.99999968748956192};
    const double xb[3] = {0.23128739720522368, -3.6824981013383806, 1.0501276328478624};
    const double Rb[9] = {0.999817580198199, 0.019085293366846352, -0.00074692952772536798,
                          -0.019085203864663714, 0.99981785287233493, 0.00012677222955236294,
                          0.00074921296184910066, -0.00011249380147819849, 0.99999971301250001};
    pp_polytope *box = NULL;
    ck_assert_int_eq(pp_polytope_box(lengths, &box), PP_OK);
    pp_shape a = pp_shape_make_polytope(box, xa, Ra), b = pp_shape_make_polytope(box, xb, Rb);
    pp_shape box_a = pp_shape_make_box(lengths, xa, Ra), box_b = pp_shape_make_box(lengths, xb, Rb);
    double n[3], depth = sat_axis(&box_a, &box_b, n);
    ck_assert(depth > 0.0); /* overlapping by 2.74e-5 m */
    pp_proximity r;
    ck_assert_int_eq(pp_shape_distance(&a, &b, &r), PP_OK);
    printf("crash wall bricks: depth %.6e, error %.2e, normal error %.2e, method %d\n", depth,
           -r.distance - depth,
           sqrt((r.n[0] - n[0]) * (r.n[0] - n[0]) + (r.n[1] - n[1]) * (r.n[1] - n[1]) +
                (r.n[2] - n[2]) * (r.n[2] - n[2])),
           r.method);
    check_result(&a, &b, &r, -depth, n, "crash wall bricks");
    /* what produced the answer (pegplus/geometry.h pp_proximity_method): EPA ran out of its
     * support budget (no seed), MPR's normal reads 2.0e-12 m deeper than the separating-axis
     * minimum, beyond the tie of 1e-12 of the cores' size (gjk.c offer), so the depth is the
     * axes' (measured; was reported as MPR's whenever EPA gave no answer) */
    ck_assert_int_eq(r.method, PP_PROXIMITY_AXES);
    pp_polytope_destroy(box);
}
END_TEST

/*
 * pp_proximity.method names the candidate that produced an overlap's answer, also when both
 * libccd calls give none. Two boxes turned 45 degrees about x and about y, their edges crossed
 * and touching exactly (the structured case "crossed edges" at gap 0): GJK sees the cores
 * touch within round-off, libccd's EPA and MPR both return no answer (measured), and the
 * depth, 0 to round-off, is read along the direction between the centres, the exact normal z
 * here: PP_PROXIMITY_CENTRES (was reported as PP_PROXIMITY_MPR). The same pair 1 mm apart is
 * GJK's, 1 mm deep an overlap whose normal some candidate gives, never GJK's or a closed form.
 */
START_TEST(method_names_the_candidate)
{
    const double unit[3] = {1, 1, 1};
    double Ra[9], Rb[9];
    rotation(Ra, X_AXIS, M_PI / 4);
    rotation(Rb, Y_AXIS, M_PI / 4);
    pp_shape a = pp_shape_make_box(unit, NULL, Ra);
    pp_shape b = pp_shape_make_box(unit, (double[3]){0, 0, M_SQRT2}, Rb);
    pp_proximity r;
    ck_assert_int_eq(pp_shape_distance(&a, &b, &r), PP_OK);
    check_result(&a, &b, &r, 0.0, Z_AXIS, "crossed edges touching");
    ck_assert_int_eq(r.method, PP_PROXIMITY_CENTRES);
    b.position[2] = M_SQRT2 + 1e-3;
    ck_assert_int_eq(pp_shape_distance(&a, &b, &r), PP_OK);
    check_result(&a, &b, &r, 1e-3, Z_AXIS, "crossed edges apart");
    ck_assert_int_eq(r.method, PP_PROXIMITY_GJK);
    b.position[2] = M_SQRT2 - 1e-3;
    ck_assert_int_eq(pp_shape_distance(&a, &b, &r), PP_OK);
    check_result(&a, &b, &r, -1e-3, Z_AXIS, "crossed edges overlapping");
    ck_assert(r.method >= PP_PROXIMITY_EPA && r.method <= PP_PROXIMITY_CENTRES);
}
END_TEST

static Suite *gjk_suite(void)
{
    Suite *s = suite_create("gjk");
    TCase *tc = tcase_create("structured");
    tcase_add_loop_test(tc, structured_distances, 0, CASE_COUNT * GAP_COUNT * MOTION_COUNT);
    tcase_add_test(tc, support_aabb_center);
    tcase_add_test(tc, polytope_aabb_is_support_box);
    tcase_add_test(tc, invalid_shapes_rejected);
    tcase_add_test(tc, deep_and_coincident);
    suite_add_tcase(s, tc);
    TCase *rnd = tcase_create("random");
    tcase_set_timeout(rnd, 120);
    tcase_add_loop_test(rnd, random_box_poses, 0, (int)(sizeof RANDOM / sizeof RANDOM[0]));
    tcase_add_test(rnd, random_round_shapes);
    suite_add_tcase(s, rnd);
    TCase *hang = tcase_create("epa_hang");
    tcase_set_timeout(hang, 10);
    tcase_add_test(hang, epa_hang_pair);
    tcase_add_test(hang, method_names_the_candidate);
    suite_add_tcase(s, hang);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gjk_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
