/*
 * Unit tests of the PEG geometry (pegplus/peg.h, PEG Sec. 4): applicability (vertex–face,
 * edge–edge, parallel edges), edge orientation, vertex–face feasibility (inside, below by
 * less / more than delta, outside above / below the angle phi, beyond eps), segment closest
 * points (crossing, parallel, collinear, clamped, degenerate), the same-frame flip, and the
 * classification of near box pairs into configurations, and the builder's memo of
 * classifications (an identical pair answered from it, any changed input classified anew).
 * Every expected value is computed by hand in the comment above its check.
 */
#include "pegplus/geometry.h"
#include "pegplus/peg.h"

#include "../src/peg_internal.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-12
#define PI 3.14159265358979323846
#define EPS 0.02 /* proximity, m */

/* ---- Helpers ------------------------------------------------------------------------------ */

static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

static void rot_axis(const double axis[3], double angle, double R[9])
{
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double x = axis[0] / n, y = axis[1] / n, z = axis[2] / n, c = cos(angle), s = sin(angle),
           t = 1.0 - c;
    double M[9] = {t * x * x + c,     t * x * y - s * z, t * x * z + s * y,
                   t * x * y + s * z, t * y * y + c,     t * y * z - s * x,
                   t * x * z - s * y, t * y * z + s * x, t * z * z + c};
    memcpy(R, M, sizeof M);
}

/* The rotation taking unit u to unit v (u != -v). */
static void rot_between(const double u[3], const double v[3], double R[9])
{
    double axis[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                      u[0] * v[1] - u[1] * v[0]};
    double s = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double c = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    if (s < 1e-15) {
        memcpy(R, I3, sizeof I3);
        return;
    }
    rot_axis(axis, atan2(s, c), R);
}

/* A posed polytope: owns its world arrays. */
typedef struct posed {
    pp_polytope *poly;
    double *v, *n, *d;
    pp_polytope_view view;
} posed;

static posed pose(pp_polytope *poly, const double x[3], const double R[9])
{
    posed p;
    p.poly = poly;
    p.v = malloc(sizeof(double) * 3 * (size_t)poly->vertex_count);
    p.n = malloc(sizeof(double) * 3 * (size_t)poly->face_count);
    p.d = malloc(sizeof(double) * (size_t)poly->face_count);
    pp_polytope_pose_view(poly, x, R ? R : I3, p.v, p.n, p.d, &p.view);
    return p;
}

static posed box(double lx, double ly, double lz, const double x[3], const double R[9])
{
    pp_polytope *poly;
    const double l[3] = {lx, ly, lz};
    ck_assert_int_eq(pp_polytope_box(l, &poly), PP_OK);
    return pose(poly, x, R);
}

static void release(posed *p)
{
    pp_polytope_destroy(p->poly);
    free(p->v);
    free(p->n);
    free(p->d);
}

/* Index of the edge joining vertices i and j (either direction). */
static int find_edge(const pp_polytope_view *p, int i, int j)
{
    for (int e = 0; e < p->edge_count; ++e) {
        const int *g = p->edges + 4 * e;
        if ((g[0] == i && g[1] == j) || (g[0] == j && g[1] == i)) return e;
    }
    ck_abort_msg("no edge %d-%d", i, j);
    return -1;
}

/* Vertex with the smallest / largest coordinate k. */
static int extreme_vertex(const pp_polytope_view *p, int k, int largest)
{
    int best = 0;
    for (int v = 1; v < p->vertex_count; ++v) {
        double x = p->vertices[3 * v + k], b = p->vertices[3 * best + k];
        if (largest ? x > b : x < b) best = v;
    }
    return best;
}

static void assert_vec(const double a[3], double x, double y, double z, double tol)
{
    ck_assert_msg(fabs(a[0] - x) <= tol && fabs(a[1] - y) <= tol && fabs(a[2] - z) <= tol,
                  "(%.15g %.15g %.15g) != (%.15g %.15g %.15g)", a[0], a[1], a[2], x, y, z);
}

/* Box faces (pp_polytope_box): +x, -x, +y, -y, +z, -z; vertex bits x = 1, y = 2, z = 4. */
enum { FACE_PX, FACE_NX, FACE_PY, FACE_NY, FACE_PZ, FACE_NZ };

static void setup(void) { pp_set_log_hook(pp_log_discard, NULL); }
static void teardown(void) { pp_set_log_hook(NULL, NULL); }

/* ---- Applicability ------------------------------------------------------------------------ */

/* Unit cube A, vertex 0 = (-,-,-): its edges leave along +x, +y, +z.
 *  - against a face with eta = +z: cosines 0, 0, 1 -> APPL = 0 (classical boundary);
 *  - A turned 30 deg about y: the edges leave along R x = (cos 30, 0, -sin 30), R y = y,
 *    R z = (sin 30, 0, cos 30); against eta = +z: -0.5, 0, cos 30 -> APPL = -0.5;
 *  - against eta = -x (B's -x face): -cos 30, 0, -sin 30 -> APPL = -cos 30. */
START_TEST(test_applicability_vf)
{
    const double zero[3] = {0, 0, 0}, far[3] = {0, 0, -5};
    posed b = box(1, 1, 1, far, NULL);
    posed a = box(1, 1, 1, zero, NULL);
    ck_assert_double_eq_tol(pp_peg_applicability_vf(&a.view, 0, &b.view, FACE_PZ), 0.0, TOL);
    release(&a);

    double R[9];
    const double y[3] = {0, 1, 0};
    rot_axis(y, PI / 6, R);
    a = box(1, 1, 1, zero, R);
    ck_assert_double_eq_tol(pp_peg_applicability_vf(&a.view, 0, &b.view, FACE_PZ), -0.5, TOL);
    ck_assert_double_eq_tol(pp_peg_applicability_vf(&a.view, 0, &b.view, FACE_NX),
                            -cos(PI / 6), TOL);
    release(&a);
    release(&b);
}
END_TEST

/*
 * Crossed ridges. A = cube turned 45 deg about x: its top edge (a ridge) runs along x and its
 * two faces there have normals (0, ±1, 1)/sqrt2, so the t-vectors into them are
 * (0, ±1, -1)/sqrt2. B = cube turned 45 deg about y above it: bottom ridge along y, t-vectors
 * (±1, 0, 1)/sqrt2. With n = +z (A -> B): n.t_a = -1/sqrt2 (both), -n.t_b = -1/sqrt2 (both),
 * so d = -1/sqrt2 (x4), min(-d) = 1/sqrt2 = APPL, normal = +z.
 * Against B's TOP ridge instead (t-vectors (±1, 0, -1)/sqrt2): d = [-r, -r, r, r], both mins
 * are -r, but neither sign is in the test's domain (+z leaves B's top ridge, -z enters A's:
 * n . (eta_b1 + eta_b2) = sqrt2 > 0 for +z, n . (eta_a1 + eta_a2) < 0 for -z): APPL = -1.
 * Parallel ridges (B turned about x too): -1 and a zero normal.
 */
START_TEST(test_applicability_ee)
{
    const double xa[3] = {0, 0, 0}, xb[3] = {0, 0, sqrt(2.0) + 0.01}, ex[3] = {1, 0, 0},
                 ey[3] = {0, 1, 0};
    double Rx[9], Ry[9], n[3];
    rot_axis(ex, PI / 4, Rx);
    rot_axis(ey, PI / 4, Ry);
    posed a = box(1, 1, 1, xa, Rx), b = box(1, 1, 1, xb, Ry);
    int top_a = extreme_vertex(&a.view, 2, 1), bottom_b = extreme_vertex(&b.view, 2, 0);
    /* the ridge vertices: the two highest of A (x = ±1/2), the two lowest of B */
    int ridge_a = -1, ridge_b = -1;
    for (int e = 0; e < a.view.edge_count; ++e) {
        const int *g = a.view.edges + 4 * e;
        double z0 = a.view.vertices[3 * g[0] + 2], z1 = a.view.vertices[3 * g[1] + 2];
        if (fabs(z0 - z1) < 1e-12 && fabs(z0 - a.view.vertices[3 * top_a + 2]) < 1e-12) ridge_a = e;
    }
    for (int e = 0; e < b.view.edge_count; ++e) {
        const int *g = b.view.edges + 4 * e;
        double z0 = b.view.vertices[3 * g[0] + 2], z1 = b.view.vertices[3 * g[1] + 2];
        if (fabs(z0 - z1) < 1e-12 && fabs(z0 - b.view.vertices[3 * bottom_b + 2]) < 1e-12)
            ridge_b = e;
    }
    ck_assert(ridge_a >= 0 && ridge_b >= 0);
    double appl = pp_peg_applicability_ee(&a.view, ridge_a, &b.view, ridge_b, n);
    ck_assert_double_eq_tol(appl, sqrt(0.5), TOL);
    assert_vec(n, 0, 0, 1, TOL);
    /* symmetric in the roles; the normal then points from B to A */
    ck_assert_double_eq_tol(pp_peg_applicability_ee(&b.view, ridge_b, &a.view, ridge_a, n),
                            sqrt(0.5), TOL);
    assert_vec(n, 0, 0, -1, TOL);

    /* B's top ridge */
    int top_b = extreme_vertex(&b.view, 2, 1), top_ridge_b = -1;
    for (int e = 0; e < b.view.edge_count; ++e) {
        const int *g = b.view.edges + 4 * e;
        double z0 = b.view.vertices[3 * g[0] + 2], z1 = b.view.vertices[3 * g[1] + 2];
        if (fabs(z0 - z1) < 1e-12 && fabs(z0 - b.view.vertices[3 * top_b + 2]) < 1e-12)
            top_ridge_b = e;
    }
    ck_assert_double_eq(pp_peg_applicability_ee(&a.view, ridge_a, &b.view, top_ridge_b, NULL),
                        -1.0);
    release(&b);

    /* parallel */
    b = box(1, 1, 1, xb, Rx);
    int ridge_b2 = -1, low = extreme_vertex(&b.view, 2, 0);
    for (int e = 0; e < b.view.edge_count; ++e) {
        const int *g = b.view.edges + 4 * e;
        double z0 = b.view.vertices[3 * g[0] + 2], z1 = b.view.vertices[3 * g[1] + 2];
        if (fabs(z0 - z1) < 1e-12 && fabs(z0 - b.view.vertices[3 * low + 2]) < 1e-12) ridge_b2 = e;
    }
    ck_assert_double_eq(pp_peg_applicability_ee(&a.view, ridge_a, &b.view, ridge_b2, n), -1.0);
    assert_vec(n, 0, 0, 0, 0.0);
    release(&a);
    release(&b);
}
END_TEST

/* Unit cube, edge between vertex 5 (+x, -y, +z) and 7 (+x, +y, +z): along y at x = z = 1/2,
 * faces +x and +z. If it runs tail -> head along +y, O = y x (-(x + z)) = z - x (times the
 * length 1); along -y, O = x - z. Either way O is perpendicular to the edge and to x + z, and
 * points toward f1: O . t1 > 0 with t1 = eta_f1 x e / |.|. */
START_TEST(test_edge_orientation)
{
    const double zero[3] = {0, 0, 0};
    posed a = box(1, 1, 1, zero, NULL);
    int e = find_edge(&a.view, 5, 7);
    const int *g = a.view.edges + 4 * e;
    double O[3];
    pp_peg_edge_orientation(&a.view, e, O);
    double dy = a.view.vertices[3 * g[1] + 1] - a.view.vertices[3 * g[0] + 1];
    if (dy > 0)
        assert_vec(O, -1, 0, 1, TOL);
    else
        assert_vec(O, 1, 0, -1, TOL);
    const double *eta1 = a.view.face_normals + 3 * g[2];
    double d[3] = {0, dy, 0}, t1[3] = {eta1[1] * d[2] - eta1[2] * d[1],
                                       eta1[2] * d[0] - eta1[0] * d[2],
                                       eta1[0] * d[1] - eta1[1] * d[0]};
    ck_assert(O[0] * t1[0] + O[1] * t1[1] + O[2] * t1[2] > 0.5);
    release(&a);
}
END_TEST

/* ---- Feasibility -------------------------------------------------------------------------- */

/* B = unit cube at the origin, top face z = 1/2 over [-1/2, 1/2]^2. A = a 2 cm cube whose
 * vertex 0 (its lowest corner) is put at the test point p; eps = 0.02, delta = 0.0025,
 * phi = 0.4. Table: p, expected feasible, inside, psi, D. */
typedef struct vf_case {
    double p[3];
    int feasible, inside;
    double psi, distance;
} vf_case;

static const vf_case k_vf[] = {
    /* above, inside: psi = 0.004, D = psi */
    {{0.1, 0.2, 0.504}, 1, 1, 0.004, 0.004},
    /* below by 0.002 < delta: still feasible */
    {{0.1, 0.2, 0.498}, 1, 1, -0.002, 0.002},
    /* below by 0.003 > delta */
    {{0.1, 0.2, 0.497}, 0, 1, -0.003, 0.003},
    /* |psi| = 0.03 > eps */
    {{0.1, 0.2, 0.53}, 0, 1, 0.03, 0.03},
    /* beyond the +x edge by s = 0.005, psi = -0.001: D = sqrt(26)e-3,
       asin(-1/sqrt 26) = -0.197 >= -0.4: feasible */
    {{0.505, 0.0, 0.499}, 1, 0, -0.001, 0.005099019513592785},
    /* beyond by 0.001, psi = -0.001: asin(-1/sqrt 2) = -0.785 < -0.4 */
    {{0.501, 0.0, 0.499}, 0, 0, -0.001, 0.0014142135623730952},
    /* beyond by 0.001, psi = +0.003: positive elevation, feasible */
    {{0.501, 0.0, 0.503}, 1, 0, 0.003, 0.0031622776601683794},
    /* beyond by 0.025 > eps */
    {{0.525, 0.0, 0.5}, 0, 0, 0.0, 0.025},
    /* beyond the corner (+x, +y) by (0.003, 0.004): outside = 0.005, psi = 0.001 */
    {{0.503, 0.504, 0.501}, 1, 0, 0.001, 0.005099019513592785},
};

START_TEST(test_feasibility_vf)
{
    const vf_case *c = &k_vf[_i];
    const double zero[3] = {0, 0, 0};
    double x[3] = {c->p[0] + 0.01, c->p[1] + 0.01, c->p[2] + 0.01};
    posed b = box(1, 1, 1, zero, NULL), a = box(0.02, 0.02, 0.02, x, NULL);
    pp_peg_params prm = pp_peg_params_default();
    pp_peg_vf_test t = pp_peg_feasibility_vf(&a.view, 0, &b.view, FACE_PZ, EPS, &prm);
    ck_assert_int_eq(t.feasible, c->feasible);
    ck_assert_int_eq(t.inside, c->inside);
    ck_assert_double_eq_tol(t.psi, c->psi, 1e-12);
    ck_assert_double_eq_tol(t.distance, c->distance, 1e-12);
    /* NULL params = defaults */
    ck_assert_int_eq(pp_peg_feasibility_vf(&a.view, 0, &b.view, FACE_PZ, EPS, NULL).feasible,
                     c->feasible);
    release(&a);
    release(&b);
}
END_TEST

/* ---- Segments ----------------------------------------------------------------------------- */

typedef struct seg_case {
    double p0[3], p1[3], q0[3], q1[3];
    double distance, s, t; /* s, t < 0: not checked (parallel: any optimum) */
} seg_case;

static const seg_case k_seg[] = {
    /* crossing at right angles, 0.1 apart: interior closest points at s = t = 1/2 */
    {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0.1}, {0, 1, 0.1}, 0.1, 0.5, 0.5},
    /* skew, clamped: q's line passes x = 2 beyond p1 = (1,0,0): closest (1,0,0)-(2,0,0.1)?
       q runs (2,-1,0.1)->(2,1,0.1): distance sqrt(1 + 0.01) */
    {{-1, 0, 0}, {1, 0, 0}, {2, -1, 0.1}, {2, 1, 0.1}, 1.0049875621120890, 1.0, 0.5},
    /* parallel, overlapping, 0.2 apart */
    {{0, 0, 0}, {1, 0, 0}, {0.5, 0.2, 0}, {1.5, 0.2, 0}, 0.2, -1, -1},
    /* parallel, disjoint along the line: gap (0.5, 0.2) */
    {{0, 0, 0}, {1, 0, 0}, {1.5, 0.2, 0}, {2.5, 0.2, 0}, 0.5385164807134504, 1.0, 0.0},
    /* antiparallel, disjoint */
    {{0, 0, 0}, {1, 0, 0}, {2.5, 0.2, 0}, {1.5, 0.2, 0}, 0.5385164807134504, 1.0, 1.0},
    /* collinear, touching end to start */
    {{0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {2, 0, 0}, 0.0, 1.0, 0.0},
    /* degenerate p (a point) above q's middle */
    {{0.5, 0, 1}, {0.5, 0, 1}, {0, 0, 0}, {1, 0, 0}, 1.0, 0.0, 0.5},
    /* both degenerate */
    {{0, 0, 0}, {0, 0, 0}, {0, 3, 4}, {0, 3, 4}, 5.0, 0.0, 0.0},
};

START_TEST(test_segments_closest)
{
    const seg_case *c = &k_seg[_i];
    double cp[3], cq[3], s, t;
    double d = pp_peg_segments_closest(c->p0, c->p1, c->q0, c->q1, cp, cq, &s, &t);
    ck_assert_double_eq_tol(d, c->distance, 1e-12);
    if (c->s >= 0) ck_assert_double_eq_tol(s, c->s, 1e-12);
    if (c->t >= 0) ck_assert_double_eq_tol(t, c->t, 1e-12);
    ck_assert(s >= 0 && s <= 1 && t >= 0 && t <= 1);
    double g[3] = {cq[0] - cp[0], cq[1] - cp[1], cq[2] - cp[2]};
    ck_assert_double_eq_tol(sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]), d, 1e-12);
    /* symmetric */
    ck_assert_double_eq_tol(pp_peg_segments_closest(c->q0, c->q1, c->p0, c->p1, NULL, NULL,
                                                    NULL, NULL), d, 1e-12);
}
END_TEST

/* Edge–edge feasibility of the crossed ridges 0.01 apart (see test_applicability_ee): the
 * ridges are at z = sqrt2/2 (A) and z = sqrt2 + 0.01 - sqrt2/2 (B), distance 0.01, closest
 * points on the z axis. Feasible within eps = 0.02, not within 0.005. */
START_TEST(test_feasibility_ee)
{
    const double xa[3] = {0, 0, 0}, xb[3] = {0, 0, sqrt(2.0) + 0.01}, ex[3] = {1, 0, 0},
                 ey[3] = {0, 1, 0};
    double Rx[9], Ry[9];
    rot_axis(ex, PI / 4, Rx);
    rot_axis(ey, PI / 4, Ry);
    posed a = box(1, 1, 1, xa, Rx), b = box(1, 1, 1, xb, Ry);
    int ridge_a = -1, ridge_b = -1;
    for (int e = 0; e < a.view.edge_count; ++e) {
        const int *g = a.view.edges + 4 * e;
        if (a.view.vertices[3 * g[0] + 2] > 0.7 && a.view.vertices[3 * g[1] + 2] > 0.7) ridge_a = e;
    }
    for (int e = 0; e < b.view.edge_count; ++e) {
        const int *g = b.view.edges + 4 * e;
        if (b.view.vertices[3 * g[0] + 2] < 0.72 && b.view.vertices[3 * g[1] + 2] < 0.72) ridge_b = e;
    }
    double pa[3], pb[3], d;
    ck_assert_int_eq(pp_peg_feasibility_ee(&a.view, ridge_a, &b.view, ridge_b, EPS, pa, pb, &d), 1);
    ck_assert_double_eq_tol(d, 0.01, 1e-12);
    assert_vec(pa, 0, 0, sqrt(0.5), 1e-12);
    assert_vec(pb, 0, 0, sqrt(0.5) + 0.01, 1e-12);
    ck_assert_int_eq(pp_peg_feasibility_ee(&a.view, ridge_a, &b.view, ridge_b, 0.005, NULL, NULL,
                                           NULL), 0);
    release(&a);
    release(&b);
}
END_TEST

/* Same-frame rule: a vertex–face contact B -> A {p_a = (1, 2, 3), n = +z, psi = 0.1} is, as
 * A -> B, the face–vertex contact {p_a = (1, 2, 3.1), n = -z, psi = 0.1} with bodies, shapes
 * and features swapped. Flipping again restores it. */
START_TEST(test_contact_flip)
{
    pp_contact c;
    memset(&c, 0, sizeof c);
    c.body_a = 3;
    c.body_b = -1;
    c.shape_a = 7;
    c.shape_b = 2;
    c.kind = PP_CONTACT_VERTEX_FACE;
    c.feature_a = 5;
    c.feature_b = 1;
    c.p_a[0] = 1, c.p_a[1] = 2, c.p_a[2] = 3;
    c.n[2] = 1.0;
    c.psi = 0.1;
    c.mu = 0.4;
    pp_contact f = c;
    pp_peg_contact_flip(&f);
    ck_assert_int_eq(f.body_a, -1);
    ck_assert_int_eq(f.body_b, 3);
    ck_assert_int_eq(f.shape_a, 2);
    ck_assert_int_eq(f.shape_b, 7);
    ck_assert_int_eq(f.kind, PP_CONTACT_FACE_VERTEX);
    ck_assert_int_eq(f.feature_a, 1);
    ck_assert_int_eq(f.feature_b, 5);
    assert_vec(f.p_a, 1, 2, 3.1, TOL);
    assert_vec(f.n, 0, 0, -1, 0.0);
    ck_assert_double_eq(f.psi, 0.1);
    ck_assert_double_eq(f.mu, 0.4);
    pp_peg_contact_flip(&f);
    ck_assert_int_eq(f.kind, PP_CONTACT_VERTEX_FACE);
    assert_vec(f.p_a, 1, 2, 3, TOL);
    assert_vec(f.n, 0, 0, 1, 0.0);
    ck_assert_int_eq(f.body_a, 3);
    ck_assert_int_eq(f.feature_a, 5);
}
END_TEST

/*
 * An edge-edge contact whose closest points are clamped is the same contact built from either
 * side (peg_geometry.c, pp_peg_edge_edge_flip). A = unit cube at the origin, its edge e_a from
 * (-0.5, 0.5, 0.5) to (0.5, 0.5, 0.5) along x; B = a 0.2 x 0.2 bar turned 30 degrees about z,
 * its bottom edge e_b at z = 0.51 along u = (cos 30, sin 30, 0), its line through
 * X = (0.8, 0.5, 0.51) at the bar's parameter x_l = 0 (edge from x_l = -L/2 to L/2). The
 * lines' common perpendicular is vertical, n = +z from A to B, psi = 0.01, its feet
 * (0.8, 0.5, 0.5) and X: beyond A's end and within B's edge when L = 2.
 *  - L = 2: c_p = A's end V = (0.5, 0.5, 0.5) (the vertex that touches), and
 *    c_q = X - 0.3 cos 30 u = (0.575, 0.5 - 0.075 sqrt 3, 0.51). Built A -> B, p_a = V. Built
 *    B -> A (p_a = c_q) and written A -> B: p_a = V too. The plain same-frame flip
 *    (pp_peg_contact_flip, p_a + psi n) gives c_q - psi n = (0.575, 0.370, 0.5), 0.15 m from
 *    V: what the builder wrote before.
 *  - L = 0.4 with X at x_l = -0.5: both closest points clamped; the two sides still agree.
 * pp_peg_contact_update in either frame gives the build's point in that frame.
 */
static posed bar_over_cube(double length, double x_cross)
{
    const double ez[3] = {0, 0, 1}, X[3] = {0.8, 0.5, 0.51};
    double R[9];
    rot_axis(ez, PI / 6, R);
    const double local[3] = {x_cross, -0.1, -0.1}; /* the bottom edge's point at X */
    double centre[3];
    for (int r = 0; r < 3; ++r)
        centre[r] = X[r] - (R[3 * r] * local[0] + R[3 * r + 1] * local[1] +
                            R[3 * r + 2] * local[2]);
    return box(length, 0.2, 0.2, centre, R);
}

/* The edge of p whose two ends both have world y, z within 1e-9 of (y, z) (A's edge). */
static int edge_at(const pp_polytope_view *p, double y, double z)
{
    for (int e = 0; e < p->edge_count; ++e) {
        const double *u = p->vertices + 3 * p->edges[4 * e],
                     *v = p->vertices + 3 * p->edges[4 * e + 1];
        if (fabs(u[1] - y) < 1e-9 && fabs(v[1] - y) < 1e-9 && fabs(u[2] - z) < 1e-9 &&
            fabs(v[2] - z) < 1e-9)
            return e;
    }
    ck_abort_msg("no edge at y = %g, z = %g", y, z);
    return -1;
}

static int bottom_edge(const pp_polytope_view *p)
{
    /* the edge at z = 0.51 whose points lie on the line through X along u */
    const double X[3] = {0.8, 0.5, 0.51}, u[3] = {cos(PI / 6), sin(PI / 6), 0};
    for (int e = 0; e < p->edge_count; ++e) {
        int on = 1;
        for (int k = 0; k < 2; ++k) {
            const double *v = p->vertices + 3 * p->edges[4 * e + k];
            const double d[3] = {v[0] - X[0], v[1] - X[1], v[2] - X[2]};
            const double along = d[0] * u[0] + d[1] * u[1];
            on &= fabs(d[0] - along * u[0]) < 1e-9 && fabs(d[1] - along * u[1]) < 1e-9 &&
                  fabs(d[2]) < 1e-9;
        }
        if (on) return e;
    }
    ck_abort_msg("no bottom edge on the line");
    return -1;
}

START_TEST(test_edge_edge_clamped_either_side)
{
    const double zero[3] = {0, 0, 0}, n[3] = {0, 0, 1}, down[3] = {0, 0, -1};
    const double lengths[2] = {2.0, 0.4}, cross[2] = {0.0, -0.5};
    for (int k = 0; k < 2; ++k) {
        posed a = box(1, 1, 1, zero, NULL), b = bar_over_cube(lengths[k], cross[k]);
        const int ea = edge_at(&a.view, 0.5, 0.5), eb = bottom_edge(&b.view);
        pp_contact from_a, from_b;
        /* feasible or not (the segments are 0.15 m apart or more), alike from both sides */
        const int fa = pp_peg_edge_edge_contact_along(&a.view, ea, &b.view, eb, EPS, n, &from_a);
        const int fb = pp_peg_edge_edge_contact_along(&b.view, eb, &a.view, ea, EPS, down, &from_b);
        ck_assert_int_eq(fa, fb);
        pp_contact plain = from_b, b_frame = from_b;
        pp_peg_contact_flip(&plain);
        pp_peg_edge_edge_flip(&b.view, &a.view, &from_b);
        ck_assert_double_eq_tol(from_a.psi, 0.01, 1e-12);
        ck_assert_double_eq_tol(from_b.psi, 0.01, 1e-12);
        assert_vec(from_b.n, 0, 0, 1, 0.0);
        assert_vec(from_b.p_a, from_a.p_a[0], from_a.p_a[1], from_a.p_a[2], 1e-12);
        if (k == 0) { /* A's vertex that touches; the plain flip's point 0.15 m from it */
            assert_vec(from_a.p_a, 0.5, 0.5, 0.5, 1e-12);
            assert_vec(plain.p_a, 0.575, 0.5 - 0.075 * sqrt(3.0), 0.5, 1e-12);
        }
        /* re-evaluated at the same poses in either frame: the same points */
        pp_contact u = from_a, f = b_frame;
        ck_assert_int_eq(pp_peg_contact_update(&a.view, &b.view, NULL, 0.0, &u), 1);
        assert_vec(u.p_a, from_a.p_a[0], from_a.p_a[1], from_a.p_a[2], 1e-12);
        ck_assert_int_eq(pp_peg_contact_update(&b.view, &a.view, NULL, 0.0, &f), 1);
        assert_vec(f.p_a, b_frame.p_a[0], b_frame.p_a[1], b_frame.p_a[2], 1e-12);
        ck_assert_double_eq_tol(f.psi, 0.01, 1e-12);
        release(&a);
        release(&b);
    }
}
END_TEST

/* ---- Classification ----------------------------------------------------------------------- */

static int classify(const posed *a, const posed *b, pp_peg_config *out, int capacity)
{
    int count = 0, needed = 0;
    ck_assert_int_eq(pp_peg_classify(NULL, &a->view, &b->view, EPS, NULL, out, capacity, &count,
                                     &needed), PP_OK);
    ck_assert_int_eq(needed, count);
    return count;
}

/* A 0.4 cube resting face down inside B's top face (B = unit cube): the four bottom corners
 * of A are vertex–face with B's top face, psi = 0; B's vertices are 0.3 m away (nothing). */
START_TEST(test_classify_face_on_face)
{
    const double xa[3] = {0.05, -0.02, 0.7}, zero[3] = {0, 0, 0};
    posed a = box(0.4, 0.4, 0.4, xa, NULL), b = box(1, 1, 1, zero, NULL);
    pp_peg_config c[32];
    int n = classify(&a, &b, c, 32);
    ck_assert_int_eq(n, 4);
    for (int i = 0; i < 4; ++i) {
        ck_assert_int_eq(c[i].kind, PP_PEG_VERTEX_FACE);
        ck_assert_int_eq(c[i].feature_b, FACE_PZ);
        ck_assert_int_eq(c[i].feature_a & 4, 0); /* bottom vertices */
        ck_assert_double_eq_tol(c[i].distance, 0.0, TOL);
        ck_assert_double_eq_tol(c[i].applicability, 0.0, TOL);
    }
    release(&a);
    release(&b);
}
END_TEST

/* The cube A with its diagonal (1,1,1) turned onto +z: vertex 0 is the lowest, sqrt3/2 below
 * the centre, and its edges rise at cos = 1/sqrt3 (APPL^vf against a horizontal face).
 * Case table: where A's lowest vertex sits relative to B = unit cube (top z = 1/2, top edge
 * along y at x = 1/2, top corner (1/2, 1/2, 1/2)), and the one configuration expected. */
typedef struct tip_case {
    double tip[3];
    pp_peg_config_kind kind;
    double distance;
} tip_case;

static const tip_case k_tip[] = {
    /* above the top face's interior, 0.01 up: vertex–face, psi = 0.01 */
    {{0.1, 0.1, 0.51}, PP_PEG_VERTEX_FACE, 0.01},
    /* 0.01 above the middle of the top edge at x = 1/2: vertex–edge, distance 0.01 */
    {{0.5, 0.0, 0.51}, PP_PEG_VERTEX_EDGE, 0.01},
    /* beside and above the edge: (0.506, 0, 0.508): distance 0.01 */
    {{0.506, 0.0, 0.508}, PP_PEG_VERTEX_EDGE, 0.01},
    /* 0.01 above the corner: vertex–vertex */
    {{0.5, 0.5, 0.51}, PP_PEG_VERTEX_VERTEX, 0.01},
};

START_TEST(test_classify_tip)
{
    const tip_case *t = &k_tip[_i];
    const double diag[3] = {1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0)}, z[3] = {0, 0, 1},
                 zero[3] = {0, 0, 0};
    double R[9];
    rot_between(diag, z, R);
    double xa[3] = {t->tip[0], t->tip[1], t->tip[2] + sqrt(3.0) / 2};
    posed a = box(1, 1, 1, xa, R), b = box(1, 1, 1, zero, NULL);
    ck_assert_int_eq(extreme_vertex(&a.view, 2, 0), 0);
    pp_peg_config c[32];
    int n = classify(&a, &b, c, 32);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(c[0].kind, t->kind);
    ck_assert_int_eq(c[0].feature_a, 0);
    ck_assert_double_eq_tol(c[0].distance, t->distance, 1e-12);
    assert_vec(c[0].p_a, t->tip[0], t->tip[1], t->tip[2], 1e-12);
    if (t->kind == PP_PEG_VERTEX_FACE) {
        ck_assert_int_eq(c[0].feature_b, FACE_PZ);
        ck_assert_double_eq_tol(c[0].applicability, 1 / sqrt(3.0), 1e-12);
    } else if (t->kind == PP_PEG_VERTEX_EDGE) {
        ck_assert_int_eq(c[0].feature_b, find_edge(&b.view, 5, 7));
        assert_vec(c[0].p_b, 0.5, 0.0, 0.5, 1e-12);
    } else {
        ck_assert_int_eq(c[0].feature_b, 7);
    }
    release(&a);
    release(&b);
}
END_TEST

/* Crossed ridges 0.01 apart (test_applicability_ee): one edge–edge configuration, APPL
 * 1/sqrt2; the ridge ends are 0.5 m from the other ridge, so no vertex configuration. */
START_TEST(test_classify_edge_edge)
{
    const double xa[3] = {0, 0, 0}, xb[3] = {0, 0, sqrt(2.0) + 0.01}, ex[3] = {1, 0, 0},
                 ey[3] = {0, 1, 0};
    double Rx[9], Ry[9];
    rot_axis(ex, PI / 4, Rx);
    rot_axis(ey, PI / 4, Ry);
    posed a = box(1, 1, 1, xa, Rx), b = box(1, 1, 1, xb, Ry);
    pp_peg_config c[32];
    int n = classify(&a, &b, c, 32);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(c[0].kind, PP_PEG_EDGE_EDGE);
    ck_assert_double_eq_tol(c[0].distance, 0.01, 1e-12);
    ck_assert_double_eq_tol(c[0].applicability, sqrt(0.5), 1e-12);
    release(&a);
    release(&b);
}
END_TEST

/*
 * Parallel edges. B = unit cube turned 45 deg about x (top ridge along x, from x = -1/2 to
 * 1/2, at z = sqrt2/2); A = a 0.6-long box turned the same way, its bottom ridge 0.01 above
 * B's ridge. The ridges are parallel (no edge–edge); A's ridge ends (x = ±0.3) are 0.01 from
 * B's ridge interior: two vertex–edge configurations on the same edge of B, distance 0.01.
 * B's ridge ends are 0.2 m beyond A: nothing.
 */
START_TEST(test_classify_parallel_edges)
{
    const double ex[3] = {1, 0, 0}, zero[3] = {0, 0, 0};
    double Rx[9];
    rot_axis(ex, PI / 4, Rx);
    double xa[3] = {0, 0, sqrt(2.0) + 0.01};
    posed a = box(0.6, 1, 1, xa, Rx), b = box(1, 1, 1, zero, Rx);
    pp_peg_config c[32];
    int n = classify(&a, &b, c, 32);
    ck_assert_int_eq(n, 2);
    for (int i = 0; i < 2; ++i) {
        ck_assert_int_eq(c[i].kind, PP_PEG_VERTEX_EDGE);
        ck_assert_int_eq(c[i].feature_b, c[0].feature_b);
        ck_assert_double_eq_tol(c[i].distance, 0.01, 1e-12);
        ck_assert_double_eq_tol(fabs(c[i].p_a[0]), 0.3, 1e-12);
    }
    release(&a);
    release(&b);
}
END_TEST

/*
 * Nearly coplanar faces: B is a 1 x 1 x 1 block whose top is a roof with a ridge along y
 * raised by 0.002 (qhull keeps the two roof faces: their normals (∓0.004, 0, 1)/|.| meet at
 * cos = (1 - 0.004^2)/(1 + 0.004^2) = 0.999968 > 0.995). A's tip 0.01 above the ridge's middle:
 * one vertex–edge configuration on the ridge.
 */
START_TEST(test_classify_coplanar_faces)
{
    const double pts[] = {-0.5, -0.5, -0.5, 0.5, -0.5, -0.5, -0.5, 0.5, -0.5, 0.5, 0.5, -0.5,
                          -0.5, -0.5, 0.5,  0.5, -0.5, 0.5,  -0.5, 0.5, 0.5,  0.5, 0.5, 0.5,
                          0.0,  -0.5, 0.502, 0.0, 0.5, 0.502};
    pp_polytope *roof;
    ck_assert_int_eq(pp_polytope_from_points(pts, 10, &roof), PP_OK);
    ck_assert_int_eq(roof->face_count, 7);
    const double zero[3] = {0, 0, 0};
    posed b = pose(roof, zero, NULL);
    const double diag[3] = {1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0)}, z[3] = {0, 0, 1};
    double R[9], xa[3] = {0.0, 0.1, 0.512 + sqrt(3.0) / 2};
    rot_between(diag, z, R);
    posed a = box(1, 1, 1, xa, R);
    pp_peg_config c[32];
    int n = classify(&a, &b, c, 32);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(c[0].kind, PP_PEG_VERTEX_EDGE);
    const int *g = b.view.edges + 4 * c[0].feature_b;
    const double *n1 = b.view.face_normals + 3 * g[2], *n2 = b.view.face_normals + 3 * g[3];
    double cosine = n1[0] * n2[0] + n1[1] * n2[1] + n1[2] * n2[2];
    ck_assert_double_eq_tol(cosine, (1 - 0.004 * 0.004) / (1 + 0.004 * 0.004), 1e-12);
    ck_assert_double_eq_tol(c[0].distance, 0.01, 1e-12);
    release(&a);
    free(b.v);
    free(b.n);
    free(b.d);
    pp_polytope_destroy(roof);
}
END_TEST

/*
 * The domain of the relaxed APPL^ee (regression: a flat edge took an orientation pointing INTO
 * its own faces). A = the roof block of the test above: its ridge along y has faces of normals
 * (±0.004, 0, 1)/k, k = sqrt(1 + 0.004^2). B = unit cube turned 45 deg about x, TOP ridge
 * along x (faces (0, ±1, 1)/sqrt2). The edges' n is ±z. With n = -z the t-vector test gives
 * -n . t_a = -0.004/k into both roof faces (the antipode of the ridge's normal arc, within
 * sin(theta/2) of it) and n . t_b = 1/sqrt2 at B: before the fix APPL^ee = -0.004 with
 * n = -z, "applicable" for every threshold. Yet -z enters A through both roof faces and +z
 * leaves B through both of its faces: neither orientation separates these edges, and now
 * APPL^ee = -1. Against B's BOTTOM ridge, n = +z leaves A and enters B: APPL^ee =
 * min(0.004/k, 1/sqrt2) = 0.004/k with normal +z, as before.
 */
START_TEST(test_applicability_ee_domain)
{
    const double pts[] = {-0.5, -0.5, -0.5, 0.5, -0.5, -0.5, -0.5, 0.5, -0.5, 0.5, 0.5, -0.5,
                          -0.5, -0.5, 0.5,  0.5, -0.5, 0.5,  -0.5, 0.5, 0.5,  0.5, 0.5, 0.5,
                          0.0,  -0.5, 0.502, 0.0, 0.5, 0.502};
    pp_polytope *roof;
    ck_assert_int_eq(pp_polytope_from_points(pts, 10, &roof), PP_OK);
    const double zero[3] = {0, 0, 0}, ex[3] = {1, 0, 0}, xb[3] = {0, 0, 2};
    posed a = pose(roof, zero, NULL);
    int ridge = -1;
    for (int e = 0; e < a.view.edge_count; ++e) {
        const int *g = a.view.edges + 4 * e;
        if (fabs(a.view.vertices[3 * g[0] + 2] - 0.502) < 1e-12 &&
            fabs(a.view.vertices[3 * g[1] + 2] - 0.502) < 1e-12)
            ridge = e;
    }
    ck_assert_int_ge(ridge, 0);
    double Rx[9], n[3];
    rot_axis(ex, PI / 4, Rx);
    posed b = box(1, 1, 1, xb, Rx);
    int top = extreme_vertex(&b.view, 2, 1), bottom = extreme_vertex(&b.view, 2, 0);
    int top_ridge = -1, bottom_ridge = -1;
    for (int e = 0; e < b.view.edge_count; ++e) {
        const int *g = b.view.edges + 4 * e;
        double z0 = b.view.vertices[3 * g[0] + 2], z1 = b.view.vertices[3 * g[1] + 2];
        if (fabs(z0 - z1) > 1e-12) continue;
        if (fabs(z0 - b.view.vertices[3 * top + 2]) < 1e-12) top_ridge = e;
        if (fabs(z0 - b.view.vertices[3 * bottom + 2]) < 1e-12) bottom_ridge = e;
    }
    ck_assert(top_ridge >= 0 && bottom_ridge >= 0);
    const double k = sqrt(1 + 0.004 * 0.004);
    ck_assert_double_eq(pp_peg_applicability_ee(&a.view, ridge, &b.view, top_ridge, n), -1.0);
    ck_assert_double_eq_tol(pp_peg_applicability_ee(&a.view, ridge, &b.view, bottom_ridge, n),
                            0.004 / k, 1e-12);
    assert_vec(n, 0, 0, 1, 1e-12);
    release(&b);
    free(a.v);
    free(a.n);
    free(a.d);
    pp_polytope_destroy(roof);
}
END_TEST

/*
 * pp_peg_contact_update: the contacts of a pair re-evaluated after B moved. Crossed ridges
 * 0.01 apart (test_classify_edge_edge's pair): the edge–edge contact, then B raised by 0.005
 * and turned half a turn about z (its ridge now runs the other way, so e_a x e_b flips): the
 * update keeps n = +z (the side it had) and gives psi = 0.015. A 0.4 cube resting face down
 * on a unit cube (vertex–face contacts, psi 0) after A is raised by 0.003: psi 0.003, p_a
 * follows the vertex; the same contacts written B -> A (face–vertex after the flip) give the
 * same psi. A vertex against a plane. A point contact and a bad feature index give 0.
 */
START_TEST(test_contact_update)
{
    const double xa[3] = {0, 0, 0}, xb[3] = {0, 0, sqrt(2.0) + 0.01}, ex[3] = {1, 0, 0},
                 ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
    double Rx[9], Ry[9], Rz[9], R2[9];
    rot_axis(ex, PI / 4, Rx);
    rot_axis(ey, PI / 4, Ry);
    posed a = box(1, 1, 1, xa, Rx), b = box(1, 1, 1, xb, Ry);
    pp_peg_set sets[16];
    pp_contact c[64];
    pp_peg_output out = {sets, 16, 0, 0, c, NULL, 64, 0, 0};
    ck_assert_int_eq(pp_peg_constraints_polytopes(NULL, &a.view, &b.view, EPS, NULL, &out), PP_OK);
    ck_assert_int_eq(out.contact_count, 1);
    ck_assert_int_eq(c[0].kind, PP_CONTACT_EDGE_EDGE);
    assert_vec(c[0].n, 0, 0, 1, 1e-12);
    /* B raised by 0.005 and turned by pi about z: same ridge, reversed direction */
    rot_axis(ez, PI, Rz);
    for (int r = 0; r < 3; ++r)
        for (int q = 0; q < 3; ++q)
            R2[3 * r + q] = Rz[3 * r] * Ry[q] + Rz[3 * r + 1] * Ry[3 + q] + Rz[3 * r + 2] * Ry[6 + q];
    const double xb2[3] = {0, 0, sqrt(2.0) + 0.015};
    posed b2 = box(1, 1, 1, xb2, R2);
    pp_contact e = c[0];
    /* the feature indices are the box's own: find B's bottom ridge in the turned box */
    ck_assert_int_eq(pp_peg_contact_update(&a.view, &b2.view, NULL, 0.0, &e), 1);
    assert_vec(e.n, 0, 0, 1, 1e-12);
    ck_assert_double_eq_tol(e.psi, 0.015, 1e-12);
    assert_vec(e.p_a, 0, 0, sqrt(0.5), 1e-12);
    release(&a);
    release(&b);
    release(&b2);

    /* vertex–face, face–vertex */
    const double xs[3] = {0.05, -0.02, 0.7}, up[3] = {0.05, -0.02, 0.703}, zero[3] = {0, 0, 0};
    a = box(0.4, 0.4, 0.4, xs, NULL);
    b = box(1, 1, 1, zero, NULL);
    posed a2 = box(0.4, 0.4, 0.4, up, NULL);
    out = (pp_peg_output){sets, 16, 0, 0, c, NULL, 64, 0, 0};
    ck_assert_int_eq(pp_peg_constraints_polytopes(NULL, &a.view, &b.view, EPS, NULL, &out), PP_OK);
    ck_assert_int_eq(out.contact_count, 4);
    for (int i = 0; i < 4; ++i) {
        pp_contact u = c[i], f = c[i];
        ck_assert_int_eq(pp_peg_contact_update(&a2.view, &b.view, NULL, 0.0, &u), 1);
        ck_assert_double_eq_tol(u.psi, 0.003, 1e-12);
        assert_vec(u.p_a, a2.view.vertices[3 * c[i].feature_a],
                   a2.view.vertices[3 * c[i].feature_a + 1],
                   a2.view.vertices[3 * c[i].feature_a + 2], 1e-15);
        pp_peg_contact_flip(&f); /* B -> A: face–vertex */
        ck_assert_int_eq(pp_peg_contact_update(&b.view, &a2.view, NULL, 0.0, &f), 1);
        ck_assert_double_eq_tol(f.psi, 0.003, 1e-12);
        assert_vec(f.n, 0, 0, 1, 1e-15);
    }
    /* against the half-space z <= 0.5 (B's top as a plane) */
    pp_contact h = c[0];
    h.feature_b = -1;
    const double nz[3] = {0, 0, 1};
    ck_assert_int_eq(pp_peg_contact_update(&a2.view, NULL, nz, 0.5, &h), 1);
    ck_assert_double_eq_tol(h.psi, 0.003, 1e-12);
    assert_vec(h.n, 0, 0, -1, 0.0);
    /* what cannot be re-evaluated */
    pp_contact bad = c[0];
    bad.feature_b = 99;
    ck_assert_int_eq(pp_peg_contact_update(&a2.view, &b.view, NULL, 0.0, &bad), 0);
    ck_assert_double_eq(bad.psi, c[0].psi);
    bad = c[0];
    bad.kind = PP_CONTACT_POINT;
    ck_assert_int_eq(pp_peg_contact_update(&a2.view, &b.view, NULL, 0.0, &bad), 0);
    release(&a);
    release(&a2);
    release(&b);
}
END_TEST

/* Capacity and argument errors. */
START_TEST(test_classify_errors)
{
    const double xa[3] = {0.05, -0.02, 0.7}, zero[3] = {0, 0, 0};
    posed a = box(0.4, 0.4, 0.4, xa, NULL), b = box(1, 1, 1, zero, NULL);
    pp_peg_config c[4];
    int count = 1, needed = 0;
    ck_assert_int_eq(pp_peg_classify(NULL, &a.view, &b.view, EPS, NULL, c, 3, &count, &needed),
                     PP_ERR_NO_MEMORY);
    ck_assert_int_eq(count, 3);
    ck_assert_int_eq(needed, 5);
    count = 0;
    ck_assert_int_eq(pp_peg_classify(NULL, &a.view, &b.view, 0.0, NULL, c, 4, &count, &needed),
                     PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_peg_classify(NULL, NULL, &b.view, EPS, NULL, c, 4, &count, &needed),
                     PP_ERR_NULL_ARGUMENT);
    pp_peg_params prm = pp_peg_params_default();
    prm.phi = -1;
    ck_assert_int_eq(pp_peg_classify(NULL, &a.view, &b.view, EPS, &prm, c, 4, &count, &needed),
                     PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(count, 0);
    /* with a builder, reused */
    pp_peg_builder *builder;
    ck_assert_int_eq(pp_peg_builder_create(&builder), PP_OK);
    for (int k = 0; k < 3; ++k) {
        count = 0;
        ck_assert_int_eq(pp_peg_classify(builder, &a.view, &b.view, EPS, NULL, c, 4, &count,
                                         &needed), PP_OK);
        ck_assert_int_eq(count, 4);
    }
    pp_peg_builder_destroy(builder);
    release(&a);
    release(&b);
}
END_TEST

/* ---- The classification's memo ------------------------------------------------------------ */

#define MEMO_CAP 64

/* pp_peg_classify with `builder`, compared field by field, to the bit, with a new builder's. */
static int classify_same_as_new(pp_peg_builder *builder, const posed *a, const posed *b,
                                double eps)
{
    pp_peg_config c[MEMO_CAP], f[MEMO_CAP];
    int n = 0, nf = 0, needed;
    ck_assert_int_eq(pp_peg_classify(builder, &a->view, &b->view, eps, NULL, c, MEMO_CAP, &n,
                                     &needed), PP_OK);
    ck_assert_int_eq(pp_peg_classify(NULL, &a->view, &b->view, eps, NULL, f, MEMO_CAP, &nf,
                                      &needed), PP_OK);
    ck_assert_int_eq(n, nf);
    for (int i = 0; i < n; ++i) {
        ck_assert_int_eq(c[i].kind, f[i].kind);
        ck_assert_int_eq(c[i].feature_a, f[i].feature_a);
        ck_assert_int_eq(c[i].feature_b, f[i].feature_b);
        ck_assert_msg(memcmp(c[i].p_a, f[i].p_a, sizeof c[i].p_a) == 0 &&
                          memcmp(c[i].p_b, f[i].p_b, sizeof c[i].p_b) == 0 &&
                          memcmp(&c[i].distance, &f[i].distance, sizeof(double)) == 0 &&
                          memcmp(&c[i].applicability, &f[i].applicability, sizeof(double)) == 0,
                      "configuration %d differs from a new builder's", i);
    }
    return n;
}

/*
 * The builder remembers classifications by their inputs (peg_geometry.c, "The
 * classification's memo") and answers only an identical pair from it. With one builder:
 *  - A's corner 0.01 above B's top corner (vertex–vertex), twice: the second is answered
 *    from the memo (hits + 1), the same configuration;
 *  - one coordinate of A's corner moved by one ulp: classified again (no hit), its own
 *    distance and points;
 *  - the same pair at eps = 0.005 (the corner is then beyond eps): classified again, nothing;
 *  - crossed ridges 0.01 apart (edge–edge, whose applicability reads the face normals): not
 *    remembered; B's face normals turned about its ridge, its vertices unchanged, give
 *    another APPL^ee;
 *  - 64 other poses fill the memo: the first pair is classified again, then remembered again.
 * Every answer equals a new builder's to the last bit.
 */
START_TEST(test_classify_memo)
{
    const double diag[3] = {1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0)}, z[3] = {0, 0, 1},
                 zero[3] = {0, 0, 0}, ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
    double R[9];
    rot_between(diag, z, R);
    const double xa[3] = {0.5, 0.5, 0.51 + sqrt(3.0) / 2};
    posed a = box(1, 1, 1, xa, R), b = box(1, 1, 1, zero, NULL);
    pp_peg_builder *builder;
    ck_assert_int_eq(pp_peg_builder_create(&builder), PP_OK);

    ck_assert_int_eq(classify_same_as_new(builder, &a, &b, EPS), 1);
    ck_assert_int_eq(builder->class_hits, 0);
    ck_assert_int_eq(classify_same_as_new(builder, &a, &b, EPS), 1);
    ck_assert_int_eq(builder->class_hits, 1);

    pp_peg_config before[MEMO_CAP], after[MEMO_CAP];
    int n = 0, needed; /* pp_peg_classify writes from out[*count] on: n = 0 before each */
    ck_assert_int_eq(pp_peg_classify(builder, &a.view, &b.view, EPS, NULL, before, MEMO_CAP, &n,
                                     &needed), PP_OK);
    ck_assert_int_eq(builder->class_hits, 2);
    a.v[2] = nextafter(a.v[2], 1.0); /* vertex 0 (the corner), z up by one ulp */
    ck_assert_int_eq(classify_same_as_new(builder, &a, &b, EPS), 1);
    ck_assert_int_eq(builder->class_hits, 2);
    n = 0;
    ck_assert_int_eq(pp_peg_classify(builder, &a.view, &b.view, EPS, NULL, after, MEMO_CAP, &n,
                                     &needed), PP_OK);
    ck_assert_int_eq(builder->class_hits, 3);
    ck_assert(after[0].distance > before[0].distance); /* its own, not the remembered one */
    ck_assert_int_eq(classify_same_as_new(builder, &a, &b, 0.005), 0);
    ck_assert_int_eq(builder->class_hits, 3);

    /* edge–edge: the face normals are read, nothing is remembered */
    const double xc[3] = {0, 0, 0}, xd[3] = {0, 0, sqrt(2.0) + 0.01};
    double Rx[9], Ry[9];
    rot_axis(ex, PI / 4, Rx);
    rot_axis(ey, PI / 4, Ry);
    posed c = box(1, 1, 1, xc, Rx), d = box(1, 1, 1, xd, Ry);
    pp_peg_config ee[MEMO_CAP];
    n = 0;
    ck_assert_int_eq(pp_peg_classify(builder, &c.view, &d.view, EPS, NULL, ee, MEMO_CAP, &n,
                                     &needed), PP_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(ee[0].kind, PP_PEG_EDGE_EDGE);
    for (int f = 0; f < d.view.face_count; ++f) { /* turned 0.1 about B's ridge (y), vertices kept */
        double *eta = d.n + 3 * f, x = eta[0], zz = eta[2];
        eta[0] = cos(0.1) * x + sin(0.1) * zz;
        eta[2] = -sin(0.1) * x + cos(0.1) * zz;
    }
    ck_assert_int_eq(classify_same_as_new(builder, &c, &d, EPS), 1);
    pp_peg_config tilted[MEMO_CAP];
    n = 0;
    ck_assert_int_eq(pp_peg_classify(builder, &c.view, &d.view, EPS, NULL, tilted, MEMO_CAP, &n,
                                     &needed), PP_OK);
    ck_assert(tilted[0].applicability != ee[0].applicability);
    ck_assert_int_eq(builder->class_hits, 3);

    /* 64 other pairs push the first out, then it is remembered again */
    a.v[2] = nextafter(a.v[2], 0.0); /* back to the first pose */
    for (int k = 0; k < PP_PEG_CLASS_MEMO_SLOTS; ++k) {
        posed e = box(1, 1, 1, (const double[3]){0.5, 0.5, 0.502 + 1e-4 * k + sqrt(3.0) / 2}, R);
        classify_same_as_new(builder, &e, &b, EPS);
        release(&e);
    }
    long hits = builder->class_hits;
    ck_assert_int_eq(classify_same_as_new(builder, &a, &b, EPS), 1);
    ck_assert_int_eq(builder->class_hits, hits);
    ck_assert_int_eq(classify_same_as_new(builder, &a, &b, EPS), 1);
    ck_assert_int_eq(builder->class_hits, hits + 1);

    pp_peg_builder_destroy(builder);
    release(&a);
    release(&b);
    release(&c);
    release(&d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_geometry");
    TCase *tc = tcase_create("peg_geometry");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_applicability_vf);
    tcase_add_test(tc, test_applicability_ee);
    tcase_add_test(tc, test_edge_orientation);
    tcase_add_loop_test(tc, test_feasibility_vf, 0, (int)(sizeof k_vf / sizeof k_vf[0]));
    tcase_add_loop_test(tc, test_segments_closest, 0, (int)(sizeof k_seg / sizeof k_seg[0]));
    tcase_add_test(tc, test_feasibility_ee);
    tcase_add_test(tc, test_contact_flip);
    tcase_add_test(tc, test_classify_face_on_face);
    tcase_add_loop_test(tc, test_classify_tip, 0, (int)(sizeof k_tip / sizeof k_tip[0]));
    tcase_add_test(tc, test_classify_edge_edge);
    tcase_add_test(tc, test_classify_parallel_edges);
    tcase_add_test(tc, test_classify_coplanar_faces);
    tcase_add_test(tc, test_classify_errors);
    tcase_add_test(tc, test_applicability_ee_domain);
    tcase_add_test(tc, test_contact_update);
    tcase_add_test(tc, test_edge_edge_clamped_either_side);
    tcase_add_test(tc, test_classify_memo);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
