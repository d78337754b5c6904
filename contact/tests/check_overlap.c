/*
 * Overlap volume of posed polytopes (pegplus/overlap.h): closed forms for boxes (axis-aligned,
 * a prism turned 45 degrees about z, identical, separated, touching), hulls inside hulls
 * against their own volume, symmetry, invariance under a common rigid motion, and random
 * pairs against an independent oracle (every vertex of A ∩ B by plane triples, volume of
 * their hull by qhull). Half-space cuts against closed forms. Bad input rejected.
 */
#define _DEFAULT_SOURCE /* M_PI */
#include "pegplus/overlap.h"
#include "../src/geometry_internal.h"

#include <libqhull_r/qhull_ra.h>

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double EXACT_REL_TOL = 1e-12;   /* closed forms, symmetry: round-off only */
static const double ORACLE_REL_TOL = 1e-9;   /* against vertex enumeration + qhull */
static const double MOTION_REL_TOL = 1e-11;  /* after a rigid motion of both (poses rounded) */

/* Private to pegplus (contact/src/overlap.c): cut `cut` by the faces of `by`, whichever is
 * smaller. Used to check that the volume does not depend on which polytope is cut. */
pp_status pp_overlap_volume_directed(const pp_polytope *cut, const double pos_cut[3],
                                     const double R_cut[9], const pp_polytope *by,
                                     const double pos_by[3], const double R_by[9], double *volume);

static const double IDENTITY[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static const double ORIGIN[3] = {0, 0, 0};

/* ------------------------------------------------------------------------ helpers */

#include "test_support.h"

static void assert_rel(double got, double want, double rel, const char *what)
{
    double err = fabs(got - want);
    ck_assert_msg(err <= rel * fmax(fabs(want), 1e-300) || (want == 0.0 && got == 0.0),
                  "%s: got %.17g, want %.17g (error %.3g, relative %.3g)", what, got, want, err,
                  want != 0.0 ? err / fabs(want) : err);
}

/* Rotation matrix (row-major) of the unit quaternion (w, x, y, z). */
static void rotation_from_quaternion(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double Rm[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                    2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                    2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
    memcpy(R, Rm, sizeof Rm);
}

static void random_rotation(double R[9])
{
    double q[4], n;
    do {
        for (int k = 0; k < 4; ++k) q[k] = uniform(-1.0, 1.0);
        n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    } while (n < 0.1 || n > 1.0);
    for (int k = 0; k < 4; ++k) q[k] /= n;
    rotation_from_quaternion(q, R);
}

static void rotation_about_z(double angle, double R[9])
{
    double c = cos(angle), s = sin(angle);
    double Rm[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
    memcpy(R, Rm, sizeof Rm);
}

static void mat_mul(double out[9], const double A[9], const double B[9])
{
    double C[9];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            C[3 * r + c] = A[3 * r] * B[c] + A[3 * r + 1] * B[3 + c] + A[3 * r + 2] * B[6 + c];
    memcpy(out, C, sizeof C);
}

static pp_polytope *make_box(double lx, double ly, double lz)
{
    pp_polytope *p = NULL;
    ck_assert_int_eq(pp_polytope_box((const double[3]){lx, ly, lz}, &p), PP_OK);
    return p;
}

/* Hull of `count` random points in [-half, half]^3 (or on the sphere of radius `half`). */
static pp_polytope *make_hull(int count, double half, int on_sphere)
{
    double pts[3 * 400];
    ck_assert_int_le(count, 400);
    for (int i = 0; i < count; ++i) {
        for (int k = 0; k < 3; ++k) pts[3 * i + k] = uniform(-half, half);
        if (on_sphere) {
            double r = pp_v3_norm(pts + 3 * i);
            for (int k = 0; k < 3; ++k) pts[3 * i + k] *= half / r;
        }
    }
    pp_polytope *p = NULL;
    ck_assert_int_eq(pp_polytope_from_points(pts, count, &p), PP_OK);
    return p;
}

static double polytope_volume(const pp_polytope *p)
{
    double mass = 0.0;
    ck_assert_int_eq(pp_polytope_mass_properties(p, 1.0, &mass, NULL, NULL), PP_OK);
    return mass;
}

static double overlap(const pp_polytope *a, const double pa[3], const double Ra[9],
                      const pp_polytope *b, const double pb[3], const double Rb[9])
{
    double v = -1.0;
    ck_assert_int_eq(pp_overlap_volume(a, pa, Ra, b, pb, Rb, &v), PP_OK);
    ck_assert_msg(isfinite(v) && v >= 0.0, "volume %g not finite and >= 0", v);
    return v;
}

/* World planes (n, d: n . x <= d) of a posed polytope, appended to planes[4 * (*count) ..]. */
static void posed_planes(const pp_polytope *p, const double pos[3], const double R[9],
                         double *planes, int *count)
{
    for (int f = 0; f < p->face_count; ++f) {
        double *pl = planes + 4 * (*count)++;
        pp_m3_mul(pl, R, p->face_normals + 3 * f);
        pl[3] = p->face_offsets[f] + pp_v3_dot(pl, pos);
    }
}

/*
 * The oracle: every vertex of the intersection of the half-spaces is the solution of three of
 * the planes that satisfies all of them; the volume of their convex hull is computed by qhull
 * ("FA": qh_getarea). Independent of the clipping code; O(planes^4), fine for tests.
 */
static double oracle_volume(const double *planes, int count)
{
    int capacity = 4096, n = 0;
    double *pts = malloc(sizeof(double) * 3 * (size_t)capacity);
    ck_assert_ptr_nonnull(pts);
    for (int i = 0; i < count; ++i)
        for (int j = i + 1; j < count; ++j)
            for (int k = j + 1; k < count; ++k) {
                const double *a = planes + 4 * i, *b = planes + 4 * j, *c = planes + 4 * k;
                double bc[3], ca[3], ab[3];
                pp_v3_cross(bc, b, c);
                pp_v3_cross(ca, c, a);
                pp_v3_cross(ab, a, b);
                double det = pp_v3_dot(a, bc);
                if (fabs(det) < 1e-9) continue;
                double x[3];
                for (int r = 0; r < 3; ++r) x[r] = (a[3] * bc[r] + b[3] * ca[r] + c[3] * ab[r]) / det;
                int inside = 1;
                for (int m = 0; m < count && inside; ++m)
                    if (pp_v3_dot(planes + 4 * m, x) > planes[4 * m + 3] + 1e-10) inside = 0;
                if (!inside) continue;
                if (n == capacity) {
                    capacity *= 2;
                    pts = realloc(pts, sizeof(double) * 3 * (size_t)capacity);
                    ck_assert_ptr_nonnull(pts);
                }
                memcpy(pts + 3 * n++, x, sizeof x);
            }
    double volume = 0.0;
    if (n >= 4) {
        qhT qh_storage;
        qhT *qh = &qh_storage;
        FILE *sink = fopen("/dev/null", "w");
        qh_zero(qh, sink);
        char command[] = "qhull FA";
        int exitcode = qh_new_qhull(qh, 3, n, pts, False, command, NULL, sink);
        if (!exitcode) {
            qh_getarea(qh, qh->facet_list);
            volume = qh->totvol;
        }
        qh_freeqhull(qh, !qh_ALL);
        int curlong, totlong;
        qh_memfreeshort(qh, &curlong, &totlong);
        fclose(sink);
    }
    free(pts);
    return volume;
}

/* ------------------------------------------------------------- axis-aligned boxes */

typedef struct box_case {
    const char *name;
    double a[3], b[3];      /* full side lengths */
    double offset[3];       /* centre of B - centre of A */
    double rel_tol;         /* 0: EXACT_REL_TOL */
} box_case;

static const box_case BOX_CASES[] = {
    {"identical", {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, 0},
    {"B inside A", {2, 3, 4}, {0.5, 0.7, 0.9}, {0.3, -0.4, 0.5}, 0},
    {"A inside B", {0.5, 0.7, 0.9}, {2, 3, 4}, {-0.3, 0.4, 0.5}, 0},
    {"corner overlap", {2, 2, 2}, {2, 2, 2}, {1, 1.5, 0.5}, 0},
    {"half along x", {2, 2, 2}, {2, 2, 2}, {1, 0, 0}, 0},
    {"coplanar sides", {2, 2, 2}, {2, 2, 2}, {1.5, 0, 0}, 0},
    {"slab through", {4, 4, 0.2}, {1, 1, 3}, {1.2, -1.3, 0.05}, 0},
    {"cross", {4, 0.5, 0.5}, {0.5, 4, 0.5}, {0, 0, 0.1}, 0},
    {"thin sliver", {2, 2, 2}, {2, 2, 2}, {2 - 1e-9, 0.3, 0}, 1e-6}, /* width 1e-9 +- pose round-off */
    {"separated", {2, 2, 2}, {1, 1, 1}, {3, 0, 0}, 0},
    {"separated on a diagonal", {2, 2, 2}, {1, 1, 1}, {1.6, 1.6, 1.6}, 0},
    {"touching faces", {2, 2, 2}, {2, 2, 2}, {2, 0.5, -0.25}, 0},
    {"touching edges", {2, 2, 2}, {2, 2, 2}, {2, 2, 0.5}, 0},
    {"touching corners", {2, 2, 2}, {2, 2, 2}, {2, 2, 2}, 0},
    {"flat contact of different sizes", {1, 1, 1}, {10.25, 4.25, 0.25}, {0.3, 0.1, -0.625}, 0},
};

START_TEST(axis_aligned_boxes)
{
    const box_case *c = &BOX_CASES[_i];
    double want = 1.0;
    for (int k = 0; k < 3; ++k) {
        double lo = fmax(-0.5 * c->a[k], c->offset[k] - 0.5 * c->b[k]);
        double hi = fmin(0.5 * c->a[k], c->offset[k] + 0.5 * c->b[k]);
        want *= fmax(0.0, hi - lo);
    }
    pp_polytope *a = make_box(c->a[0], c->a[1], c->a[2]);
    pp_polytope *b = make_box(c->b[0], c->b[1], c->b[2]);
    const double pa[3] = {0.25, -1.5, 3.0}; /* not at the origin */
    double pb[3];
    pp_v3_add(pb, pa, c->offset);
    double v = overlap(a, pa, IDENTITY, b, pb, IDENTITY);
    if (want == 0.0) ck_assert_msg(v == 0.0, "%s: got %.17g, want exactly 0", c->name, v);
    else assert_rel(v, want, c->rel_tol > 0.0 ? c->rel_tol : EXACT_REL_TOL, c->name);
    double w = overlap(b, pb, IDENTITY, a, pa, IDENTITY);
    if (want == 0.0) ck_assert_msg(w == 0.0, "%s (B, A): got %.17g", c->name, w);
    else assert_rel(w, v, EXACT_REL_TOL, c->name);
    pp_polytope_destroy(a);
    pp_polytope_destroy(b);
}
END_TEST

/* ------------------------------------------------- a prism turned 45 degrees about z */

/*
 * A: cube of side 2 at the origin. B: box s x s x 4 turned 45 degrees about z, centred at
 * height zc, so its cross-section is the diamond |x| + |y| <= a with a = s / sqrt 2. Area of
 * the square [-1, 1]^2 within the diamond: 2 a^2 (a <= 1), 4 - 2 (2 - a)^2 (1 <= a <= 2: the
 * square minus four corner triangles of legs 2 - a), 4 (a >= 2). Height of the overlap:
 * min(1, zc + 2) - max(-1, zc - 2).
 */
static const double PRISM_HALF_DIAGONALS[] = {0.5, 1.0, 1.2, 1.4142135623730951, 1.5, 1.9, 2.0, 2.5};
static const double PRISM_HEIGHTS[] = {0.0, 1.5, -2.5};

static double diamond_in_square(double a)
{
    if (a <= 1.0) return 2.0 * a * a;
    if (a <= 2.0) return 4.0 - 2.0 * (2.0 - a) * (2.0 - a);
    return 4.0;
}

START_TEST(prism_turned_45_degrees)
{
    int n = (int)(sizeof PRISM_HALF_DIAGONALS / sizeof PRISM_HALF_DIAGONALS[0]);
    double a = PRISM_HALF_DIAGONALS[_i % n], zc = PRISM_HEIGHTS[_i / n];
    double s = a * sqrt(2.0);
    pp_polytope *cube = make_box(2, 2, 2), *prism = make_box(s, s, 4);
    double R[9];
    rotation_about_z(M_PI / 4, R);
    double height = fmax(0.0, fmin(1.0, zc + 2.0) - fmax(-1.0, zc - 2.0));
    double want = diamond_in_square(a) * height;
    double v = overlap(cube, ORIGIN, IDENTITY, prism, (const double[3]){0, 0, zc}, R);
    char what[96];
    snprintf(what, sizeof what, "half-diagonal %g, centre height %g", a, zc);
    assert_rel(v, want, EXACT_REL_TOL, what);
    /* the octagon of the equal squares, in closed form */
    if (a == PRISM_HALF_DIAGONALS[3] && zc == 0.0) assert_rel(v, 2.0 * (8.0 * sqrt(2.0) - 8.0), EXACT_REL_TOL, what);
    pp_polytope_destroy(cube);
    pp_polytope_destroy(prism);
}
END_TEST

/* ---------------------------------------------------- identical, contained, touching */

START_TEST(identical_posed_polytopes_give_their_volume)
{
    rng_state = 100 + (unsigned)_i;
    pp_polytope *p = _i % 2 ? make_hull(15, 0.5, 0) : make_box(0.3, 1.7, 2.9);
    double R[9], pos[3] = {uniform(-5, 5), uniform(-5, 5), uniform(-5, 5)};
    random_rotation(R);
    assert_rel(overlap(p, pos, R, p, pos, R), polytope_volume(p), EXACT_REL_TOL, "identical");
    pp_polytope_destroy(p);
}
END_TEST

/* A hull of 15 points in the unit cube (the pouring scene's bodies) inside a hull of 200
 * points on a sphere of radius 2, both posed at random: the overlap is the inner volume. */
START_TEST(hull_inside_hull_gives_its_volume)
{
    rng_state = 200 + (unsigned)_i;
    pp_polytope *inner = make_hull(15, 0.5, 0), *outer = make_hull(200, 2.0, 1);
    double Ri[9], Ro[9], po[3] = {uniform(-3, 3), uniform(-3, 3), uniform(0, 4)}, pi[3];
    random_rotation(Ri);
    random_rotation(Ro);
    for (int k = 0; k < 3; ++k) pi[k] = po[k] + uniform(-0.2, 0.2);
    /* precondition: every vertex of inner lies strictly inside outer */
    for (int v = 0; v < inner->vertex_count; ++v) {
        double x[3], y[3], local[3];
        pp_m3_mul(x, Ri, inner->vertices + 3 * v);
        pp_v3_add(x, x, pi);
        pp_v3_sub(y, x, po);
        pp_m3_tmul(local, Ro, y);
        for (int f = 0; f < outer->face_count; ++f)
            ck_assert(pp_v3_dot(outer->face_normals + 3 * f, local) < outer->face_offsets[f] - 1e-6);
    }
    double want = polytope_volume(inner);
    assert_rel(overlap(inner, pi, Ri, outer, po, Ro), want, EXACT_REL_TOL, "inner in outer");
    assert_rel(overlap(outer, po, Ro, inner, pi, Ri), want, EXACT_REL_TOL, "outer around inner");
    pp_polytope_destroy(inner);
    pp_polytope_destroy(outer);
}
END_TEST

/* Touching configurations moved by a random rigid motion stay exactly 0 (their gap is
 * round-off, far below the thin width); a 1e-6 m push gives the slab volume. */
START_TEST(touching_after_rigid_motion_is_zero)
{
    rng_state = 300 + (unsigned)_i;
    pp_polytope *a = make_box(2, 2, 2), *b = make_box(1, 3, 0.5);
    const double offsets[][3] = {{1.5, 0.2, 0.3}, {1.5, 2.5, 0.3}, {1.5, 2.5, 1.25}, {0.2, 0.1, 1.25}};
    double Q[9], t[3] = {uniform(-5, 5), uniform(-5, 5), uniform(-5, 5)};
    random_rotation(Q);
    for (size_t c = 0; c < sizeof offsets / sizeof offsets[0]; ++c) {
        double pa[3], pb[3], Qo[3];
        pp_v3_copy(pa, t);
        pp_m3_mul(Qo, Q, offsets[c]);
        pp_v3_add(pb, t, Qo);
        double v = overlap(a, pa, Q, b, pb, Q);
        ck_assert_msg(v == 0.0, "touching case %zu: got %.17g", c, v);
        ck_assert(overlap(b, pb, Q, a, pa, Q) == 0.0);
    }
    /* face contact pushed 1e-6 m into A: slab 1 x 3 (clipped to 2 in y) x 1e-6 */
    double push[3] = {1.5 - 1e-6, 0.2, 0.3}, pb[3], Qo[3];
    pp_m3_mul(Qo, Q, push);
    pp_v3_add(pb, t, Qo);
    /* y: B spans [0.2 - 1.5, 0.2 + 1.5] ∩ [-1, 1] = 2; z: 0.5 within A */
    assert_rel(overlap(a, t, Q, b, pb, Q), 1e-6 * 2.0 * 0.5, 1e-8, "slab of 1e-6 m");
    pp_polytope_destroy(a);
    pp_polytope_destroy(b);
}
END_TEST

/* Nearly degenerate: a box resting on a big slab tilted by tiny angles and pushed by tiny
 * depths never gives NaN or a negative volume, and stays below the bound depth * area. */
START_TEST(near_face_contact_is_finite_and_bounded)
{
    pp_polytope *box = make_box(1, 1, 1), *slab = make_box(10.25, 4.25, 0.25);
    const double slab_pos[3] = {0, 0, -0.125};
    for (int i = 0; i < 60; ++i) {
        double tilt = i % 3 == 0 ? 0.0 : pow(10.0, -(double)(i % 17)), depth = (i % 5 - 2) * pow(10.0, -(double)(6 + i % 10));
        double R[9];
        rotation_from_quaternion((const double[4]){cos(tilt / 2), sin(tilt / 2) * 0.6, sin(tilt / 2) * 0.8, 0}, R);
        double pos[3] = {0.3 * (i % 7), -0.2 * (i % 4), 0.5 - depth};
        double v = overlap(box, pos, R, slab, slab_pos, IDENTITY);
        /* the box reaches at most depth + tilt * (half diagonal) below z = 0 over area <= 2 */
        double reach = fmax(0.0, depth) + tilt * 1.0 + 1e-13;
        ck_assert_msg(v <= 2.0 * reach, "case %d: volume %.3g above the bound %.3g", i, v, 2.0 * reach);
        double w = overlap(slab, slab_pos, IDENTITY, box, pos, R);
        ck_assert_msg(fabs(w - v) <= 1e-12 + 1e-9 * v, "case %d: V(A,B) %.17g != V(B,A) %.17g", i, v, w);
    }
    pp_polytope_destroy(box);
    pp_polytope_destroy(slab);
}
END_TEST

/* ------------------------------------------------ random pairs: oracle, symmetry, motion */

static void random_pair(int seed, pp_polytope **a, pp_polytope **b, double pa[3], double Ra[9],
                        double pb[3], double Rb[9])
{
    rng_state = 1000 + (unsigned)seed;
    *a = seed % 3 == 0 ? make_box(uniform(0.3, 1.5), uniform(0.3, 1.5), uniform(0.3, 1.5))
                       : make_hull(seed % 3 == 1 ? 15 : 40, 0.5, seed % 2);
    *b = make_hull(15, 0.6, 0);
    random_rotation(Ra);
    random_rotation(Rb);
    for (int k = 0; k < 3; ++k) {
        pa[k] = uniform(-1, 1) + (k == 0 ? 3.0 : 0.0);
        pb[k] = pa[k] + uniform(-0.5, 0.5);
    }
}

/* Cut A by B and B by A (the public call picks one): both agree with the oracle. */
START_TEST(random_pairs_match_the_oracle)
{
    pp_polytope *a, *b;
    double pa[3], Ra[9], pb[3], Rb[9];
    random_pair(_i, &a, &b, pa, Ra, pb, Rb);
    double planes[4 * 256];
    int count = 0;
    ck_assert_int_le(a->face_count + b->face_count, 256);
    posed_planes(a, pa, Ra, planes, &count);
    posed_planes(b, pb, Rb, planes, &count);
    double want = oracle_volume(planes, count), ab = -1.0, ba = -1.0;
    ck_assert_int_eq(pp_overlap_volume_directed(a, pa, Ra, b, pb, Rb, &ab), PP_OK);
    ck_assert_int_eq(pp_overlap_volume_directed(b, pb, Rb, a, pa, Ra, &ba), PP_OK);
    double v = overlap(a, pa, Ra, b, pb, Rb);
    char what[64];
    snprintf(what, sizeof what, "random pair %d", _i);
    if (want < 1e-12) {
        ck_assert_msg(v < 1e-9 && ab < 1e-9 && ba < 1e-9, "%s: oracle %.3g, got %.3g %.3g", what,
                      want, ab, ba);
    } else {
        assert_rel(ab, want, ORACLE_REL_TOL, what);
        assert_rel(ba, want, ORACLE_REL_TOL, what);
    }
    ck_assert(v == ab || v == ba);
    pp_polytope_destroy(a);
    pp_polytope_destroy(b);
}
END_TEST

/* V(A, B) and V(B, A) are the same bits; cutting either one by the other agrees to round-off. */
START_TEST(symmetric_in_a_and_b)
{
    pp_polytope *a, *b;
    double pa[3], Ra[9], pb[3], Rb[9];
    random_pair(_i, &a, &b, pa, Ra, pb, Rb);
    double v = overlap(a, pa, Ra, b, pb, Rb), w = overlap(b, pb, Rb, a, pa, Ra);
    ck_assert_msg(v == w, "V(A,B) = %.17g, V(B,A) = %.17g", v, w);
    double ab = -1.0, ba = -1.0;
    ck_assert_int_eq(pp_overlap_volume_directed(a, pa, Ra, b, pb, Rb, &ab), PP_OK);
    ck_assert_int_eq(pp_overlap_volume_directed(b, pb, Rb, a, pa, Ra, &ba), PP_OK);
    ck_assert_msg(fabs(ab - ba) <= EXACT_REL_TOL * fmax(ab, 1e-300) || (ab == 0.0 && ba == 0.0),
                  "A cut by B: %.17g, B cut by A: %.17g", ab, ba);
    pp_polytope_destroy(a);
    pp_polytope_destroy(b);
}
END_TEST

START_TEST(invariant_under_a_common_rigid_motion)
{
    pp_polytope *a, *b;
    double pa[3], Ra[9], pb[3], Rb[9];
    random_pair(_i, &a, &b, pa, Ra, pb, Rb);
    double v = overlap(a, pa, Ra, b, pb, Rb);
    double Q[9], t[3] = {uniform(-10, 10), uniform(-10, 10), uniform(-10, 10)};
    random_rotation(Q);
    double qa[3], qb[3], Sa[9], Sb[9];
    pp_m3_mul(qa, Q, pa);
    pp_v3_add(qa, qa, t);
    pp_m3_mul(qb, Q, pb);
    pp_v3_add(qb, qb, t);
    mat_mul(Sa, Q, Ra);
    mat_mul(Sb, Q, Rb);
    double w = overlap(a, qa, Sa, b, qb, Sb);
    ck_assert_msg(fabs(v - w) <= MOTION_REL_TOL * fmax(v, 1e-300) + 1e-15,
                  "before the motion %.17g, after %.17g", v, w);
    pp_polytope_destroy(a);
    pp_polytope_destroy(b);
}
END_TEST

/* ------------------------------------------------------------------- half-space */

START_TEST(halfspace_closed_forms)
{
    pp_polytope *cube = make_box(2, 2, 2);
    const double pos[3] = {1, -2, 0.5};
    double v = -1.0;
    /* {x <= pos_x + c}: 4 (1 + c) */
    for (int i = 0; i <= 8; ++i) {
        double c = -1.0 + 0.25 * i;
        ck_assert_int_eq(pp_overlap_halfspace_volume(cube, pos, IDENTITY, (const double[3]){1, 0, 0},
                                                     pos[0] + c, &v), PP_OK);
        if (i == 0) ck_assert(v == 0.0);
        else assert_rel(v, 4.0 * (1.0 + c), EXACT_REL_TOL, "cube cut along x");
    }
    /* the corner beyond x + y + z = 3 - t (relative to the centre), i.e. the half-space
     * n . x <= -(3 - t) / sqrt 3 + n . pos with n = -(1, 1, 1) / sqrt 3, is a tetrahedron
     * of legs t: t^3 / 6 */
    const double n[3] = {-1 / sqrt(3.0), -1 / sqrt(3.0), -1 / sqrt(3.0)};
    for (int i = 1; i <= 4; ++i) {
        double t = 0.5 * i;
        double offset = -(3.0 - t) / sqrt(3.0) + pp_v3_dot(n, pos);
        ck_assert_int_eq(pp_overlap_halfspace_volume(cube, pos, IDENTITY, n, offset, &v), PP_OK);
        assert_rel(v, t * t * t / 6.0, EXACT_REL_TOL, "corner tetrahedron");
    }
    /* any plane through the centre of a posed cube halves it */
    rng_state = 400;
    for (int i = 0; i < 20; ++i) {
        double R[9], m[3] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
        random_rotation(R);
        pp_v3_scale(m, 1.0 / pp_v3_norm(m), m);
        ck_assert_int_eq(pp_overlap_halfspace_volume(cube, pos, R, m, pp_v3_dot(m, pos), &v), PP_OK);
        assert_rel(v, 4.0, EXACT_REL_TOL, "halved cube");
    }
    pp_polytope_destroy(cube);
}
END_TEST

/* A posed hull against the half-space z <= 0 and against a block 10.25 x 4.25 x 4 whose top
 * face is z = 0 (deeper than the hull reaches) agree. */
START_TEST(halfspace_agrees_with_a_large_box)
{
    rng_state = 500 + (unsigned)_i;
    pp_polytope *hull = make_hull(15, 0.5, 0), *block = make_box(10.25, 4.25, 4.0);
    double R[9], pos[3] = {uniform(-3, 3), uniform(-1, 1), uniform(-0.1, 0.4)}, v = -1.0;
    random_rotation(R);
    ck_assert_int_eq(pp_overlap_halfspace_volume(hull, pos, R, (const double[3]){0, 0, 1}, 0.0, &v), PP_OK);
    double w = overlap(hull, pos, R, block, (const double[3]){0, 0, -2.0}, IDENTITY);
    ck_assert_msg(fabs(v - w) <= EXACT_REL_TOL * fmax(v, 1e-300) + 1e-16, "half-space %.17g, block %.17g", v, w);
    pp_polytope_destroy(hull);
    pp_polytope_destroy(block);
}
END_TEST

/* ------------------------------------------------------------------- bad input */

START_TEST(bad_input_rejected)
{
    pp_polytope *box = make_box(1, 1, 1);
    double v = -7.0, nan_pos[3] = {0, NAN, 0}, inf_R[9], shear[9], mirror[9];
    memcpy(inf_R, IDENTITY, sizeof inf_R);
    inf_R[4] = INFINITY;
    memcpy(shear, IDENTITY, sizeof shear);
    shear[1] = 0.1;
    memcpy(mirror, IDENTITY, sizeof mirror);
    mirror[8] = -1.0;

    ck_assert_int_eq(pp_overlap_volume(NULL, ORIGIN, IDENTITY, box, ORIGIN, IDENTITY, &v), PP_ERR_NULL_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(last_message, "NULL"));
    ck_assert_int_eq(pp_overlap_volume(box, ORIGIN, IDENTITY, box, ORIGIN, NULL, &v), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_overlap_volume(box, ORIGIN, IDENTITY, box, ORIGIN, IDENTITY, NULL), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_overlap_volume(box, nan_pos, IDENTITY, box, ORIGIN, IDENTITY, &v), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(last_message, "position of a"));
    ck_assert_int_eq(pp_overlap_volume(box, ORIGIN, IDENTITY, box, ORIGIN, inf_R, &v), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(last_message, "rotation of b"));
    ck_assert_int_eq(pp_overlap_volume(box, ORIGIN, shear, box, ORIGIN, IDENTITY, &v), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(last_message, "orthonormal"));
    ck_assert_int_eq(pp_overlap_volume(box, ORIGIN, mirror, box, ORIGIN, IDENTITY, &v), PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(last_message, "reflection"));

    ck_assert_int_eq(pp_overlap_halfspace_volume(box, ORIGIN, IDENTITY, NULL, 0.0, &v), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_overlap_halfspace_volume(box, ORIGIN, IDENTITY, (const double[3]){0, 0, 2}, 0.0, &v),
                     PP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(last_message, "unit"));
    ck_assert_int_eq(pp_overlap_halfspace_volume(box, ORIGIN, IDENTITY, (const double[3]){0, 0, 1}, NAN, &v),
                     PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_overlap_halfspace_volume(box, nan_pos, IDENTITY, (const double[3]){0, 0, 1}, 0.0, &v),
                     PP_ERR_INVALID_ARGUMENT);
    ck_assert(v == -7.0); /* untouched on every failure */
    ck_assert_int_eq(message_count, 11); /* one message per rejected call */
    pp_polytope_destroy(box);
}
END_TEST

static Suite *overlap_suite(void)
{
    Suite *s = suite_create("overlap");
    TCase *boxes = tcase_create("boxes");
    tcase_add_checked_fixture(boxes, setup, teardown);
    tcase_add_loop_test(boxes, axis_aligned_boxes, 0, (int)(sizeof BOX_CASES / sizeof BOX_CASES[0]));
    tcase_add_loop_test(boxes, prism_turned_45_degrees, 0,
                        (int)(sizeof PRISM_HALF_DIAGONALS / sizeof PRISM_HALF_DIAGONALS[0] *
                              (sizeof PRISM_HEIGHTS / sizeof PRISM_HEIGHTS[0])));
    suite_add_tcase(s, boxes);

    TCase *shapes = tcase_create("polytopes");
    tcase_add_checked_fixture(shapes, setup, teardown);
    tcase_add_loop_test(shapes, identical_posed_polytopes_give_their_volume, 0, 10);
    tcase_add_loop_test(shapes, hull_inside_hull_gives_its_volume, 0, 10);
    tcase_add_loop_test(shapes, touching_after_rigid_motion_is_zero, 0, 10);
    tcase_add_test(shapes, near_face_contact_is_finite_and_bounded);
    tcase_add_loop_test(shapes, random_pairs_match_the_oracle, 0, 40);
    tcase_add_loop_test(shapes, symmetric_in_a_and_b, 0, 40);
    tcase_add_loop_test(shapes, invariant_under_a_common_rigid_motion, 0, 40);
    suite_add_tcase(s, shapes);

    TCase *half = tcase_create("halfspace");
    tcase_add_checked_fixture(half, setup, teardown);
    tcase_add_test(half, halfspace_closed_forms);
    tcase_add_loop_test(half, halfspace_agrees_with_a_large_box, 0, 20);
    suite_add_tcase(s, half);

    TCase *bad = tcase_create("bad_input");
    tcase_add_checked_fixture(bad, setup, teardown);
    tcase_add_test(bad, bad_input_rejected);
    suite_add_tcase(s, bad);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(overlap_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
