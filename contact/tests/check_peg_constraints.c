/*
 * Unit tests of the PEG constraint sets (pegplus/peg.h, PEG Secs 3 and 5): per 3D
 * configuration the generated U / I / X sets and their contacts against hand-derived ones
 * (polytope–plane, face on face, edge–edge, vertex–edge, edge–vertex with the same-frame
 * flip, vertex–vertex without and with its X, an edge crossing that only the X sees, nearly
 * coplanar faces), the slack rows reproducing max psi (Eq 20, also solved by Lemke), output
 * capacity, and two properties over random box pairs within eps: no set blocks a separated
 * pair, and some set sees every penetrating pair; a builder reused over changing pairs gives
 * a new builder's sets to the last bit (nothing of its per-call memo outlives a call).
 */
#include "pegplus/geometry.h"
#include "pegplus/lcp.h"
#include "pegplus/peg.h"

#include "../src/peg_internal.h"

#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-12
#define PI 3.14159265358979323846
#define EPS 0.02      /* proximity, m */
#define MAX_SETS 128
#define MAX_CONTACTS 1024

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

/* (w, x, y, z), normalised here. */
static void quat_R(const double q[4], double R[9])
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                   2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    memcpy(R, M, sizeof M);
}

static void mat_vec(const double R[9], const double a[3], double out[3])
{
    for (int r = 0; r < 3; ++r) out[r] = R[3 * r] * a[0] + R[3 * r + 1] * a[1] + R[3 * r + 2] * a[2];
}

typedef struct posed {
    pp_polytope *poly;
    double *v, *n, *d;
    double x[3], R[9];
    pp_polytope_view view;
} posed;

static posed pose(pp_polytope *poly, const double x[3], const double R[9])
{
    posed p;
    p.poly = poly;
    p.v = malloc(sizeof(double) * 3 * (size_t)poly->vertex_count);
    p.n = malloc(sizeof(double) * 3 * (size_t)poly->face_count);
    p.d = malloc(sizeof(double) * (size_t)poly->face_count);
    memcpy(p.x, x, sizeof p.x);
    memcpy(p.R, R ? R : I3, sizeof p.R);
    pp_polytope_pose_view(poly, p.x, p.R, p.v, p.n, p.d, &p.view);
    return p;
}

static posed box(double lx, double ly, double lz, const double x[3], const double R[9])
{
    pp_polytope *poly;
    const double l[3] = {lx, ly, lz};
    ck_assert_int_eq(pp_polytope_box(l, &poly), PP_OK);
    return pose(poly, x, R);
}

/* Octahedron with vertices ±r on the axes: vertex 5 = (0, 0, -r) is its bottom tip. */
static posed octahedron(double r, const double x[3], const double R[9])
{
    const double pts[18] = {r, 0, 0, -r, 0, 0, 0, r, 0, 0, -r, 0, 0, 0, r, 0, 0, -r};
    pp_polytope *poly;
    ck_assert_int_eq(pp_polytope_from_points(pts, 6, &poly), PP_OK);
    return pose(poly, x, R);
}

static void release(posed *p)
{
    pp_polytope_destroy(p->poly);
    free(p->v);
    free(p->n);
    free(p->d);
}

static int find_vertex(const pp_polytope_view *p, const double x[3])
{
    for (int v = 0; v < p->vertex_count; ++v) {
        const double *w = p->vertices + 3 * v;
        if (fabs(w[0] - x[0]) + fabs(w[1] - x[1]) + fabs(w[2] - x[2]) < 1e-9) return v;
    }
    ck_abort_msg("no vertex at (%g %g %g)", x[0], x[1], x[2]);
    return -1;
}

static int find_edge(const pp_polytope_view *p, int i, int j)
{
    for (int e = 0; e < p->edge_count; ++e) {
        const int *g = p->edges + 4 * e;
        if ((g[0] == i && g[1] == j) || (g[0] == j && g[1] == i)) return e;
    }
    ck_abort_msg("no edge %d-%d", i, j);
    return -1;
}

typedef struct result {
    pp_peg_set sets[MAX_SETS];
    pp_contact c[MAX_CONTACTS];
    double appl[MAX_CONTACTS];
    pp_peg_output out;
} result;

static result *build(const posed *a, const posed *b, double eps)
{
    result *r = calloc(1, sizeof *r);
    r->out = (pp_peg_output){r->sets, MAX_SETS, 0, 0, r->c, r->appl, MAX_CONTACTS, 0, 0};
    ck_assert_int_eq(pp_peg_constraints_polytopes(NULL, &a->view, &b->view, eps, NULL, &r->out),
                     PP_OK);
    ck_assert_int_eq(r->out.sets_needed, r->out.set_count);
    ck_assert_int_eq(r->out.contacts_needed, r->out.contact_count);
    /* invariants of every output: contiguous sets, unit normals, all A -> B */
    int next = 0;
    for (int s = 0; s < r->out.set_count; ++s) {
        const pp_peg_set *set = &r->sets[s];
        ck_assert_int_eq(set->first, next);
        ck_assert_int_ge(set->count, 1);
        ck_assert(set->kind == PP_PEG_SET_U ? set->count == 1 : set->count >= 2);
        next += set->count;
        for (int i = set->first; i < set->first + set->count; ++i) {
            const double *n = r->c[i].n;
            ck_assert_double_eq_tol(n[0] * n[0] + n[1] * n[1] + n[2] * n[2], 1.0, 1e-12);
            ck_assert_int_eq(r->c[i].body_a, -1);
            ck_assert_int_eq(r->c[i].body_b, -1);
        }
    }
    ck_assert_int_eq(next, r->out.contact_count);
    return r;
}

static double set_max_psi(const result *r, int s)
{
    double m = -HUGE_VAL;
    for (int i = r->sets[s].first; i < r->sets[s].first + r->sets[s].count; ++i)
        m = fmax(m, r->c[i].psi);
    return m;
}

static void assert_contact(const pp_contact *c, pp_contact_kind kind, int fa, int fb,
                           const double p[3], const double n[3], double psi, double tol)
{
    ck_assert_int_eq(c->kind, kind);
    if (fa >= -1) ck_assert_int_eq(c->feature_a, fa);
    if (fb >= -1) ck_assert_int_eq(c->feature_b, fb);
    for (int k = 0; k < 3; ++k) {
        ck_assert_msg(fabs(c->p_a[k] - p[k]) <= tol, "p_a[%d] = %.15g, expected %.15g", k,
                      c->p_a[k], p[k]);
        ck_assert_msg(fabs(c->n[k] - n[k]) <= tol, "n[%d] = %.15g, expected %.15g", k, c->n[k],
                      n[k]);
    }
    ck_assert_msg(fabs(c->psi - psi) <= tol, "psi = %.15g, expected %.15g", c->psi, psi);
}

enum { FACE_PX, FACE_NX, FACE_PY, FACE_NY, FACE_PZ, FACE_NZ };

static void setup(void) { pp_set_log_hook(pp_log_discard, NULL); }
static void teardown(void) { pp_set_log_hook(NULL, NULL); }

/* ---- Per configuration -------------------------------------------------------------------- */

/* Unit cube 0.004 above the ground z = 0 (B, normal +z): the four bottom corners, U each,
 * p_a = corner, n = -z (A -> B: into the ground), psi = 0.004, APPL 1; the top corners are 1 m
 * up. Turned 30 deg about x instead, only the lowest corner pair is near. */
START_TEST(test_plane)
{
    const double x[3] = {0.1, 0.2, 0.504}, up[3] = {0, 0, 1}, down[3] = {0, 0, -1};
    posed a = box(1, 1, 1, x, NULL);
    pp_peg_set sets[8];
    pp_contact c[8];
    double appl[8];
    pp_peg_output out = {sets, 8, 0, 0, c, appl, 8, 0, 0};
    ck_assert_int_eq(pp_peg_constraints_polytope_plane(&a.view, up, 0.0, EPS, &out), PP_OK);
    ck_assert_int_eq(out.set_count, 4);
    for (int i = 0; i < 4; ++i) {
        ck_assert_int_eq(sets[i].kind, PP_PEG_SET_U);
        ck_assert_int_eq(sets[i].origin, PP_PEG_PLANE);
        ck_assert_int_eq(sets[i].first, i);
        double p[3] = {0.1 + ((i & 1) ? 0.5 : -0.5), 0.2 + ((i & 2) ? 0.5 : -0.5), 0.004};
        assert_contact(&c[i], PP_CONTACT_VERTEX_FACE, i, -1, p, down, 0.004, TOL);
        ck_assert_double_eq(appl[i], 1.0);
    }
    release(&a);

    /* 30 deg about x: corners 0, 1 (y = z = -1/2) are lowest at z_c - (cos30 + sin30)/2 */
    double R[9];
    const double ex[3] = {1, 0, 0};
    rot_axis(ex, PI / 6, R);
    const double x2[3] = {0, 0, (cos(PI / 6) + sin(PI / 6)) / 2 + 0.001};
    a = box(1, 1, 1, x2, R);
    out.set_count = out.contact_count = 0;
    ck_assert_int_eq(pp_peg_constraints_polytope_plane(&a.view, up, 0.0, EPS, &out), PP_OK);
    ck_assert_int_eq(out.set_count, 2);
    ck_assert_double_eq_tol(c[0].psi, 0.001, TOL);
    ck_assert_double_eq_tol(c[1].psi, 0.001, TOL);
    /* capacity: one set fits, two needed */
    out = (pp_peg_output){sets, 1, 0, 0, c, NULL, 8, 0, 0};
    ck_assert_int_eq(pp_peg_constraints_polytope_plane(&a.view, up, 0.0, EPS, &out),
                     PP_ERR_NO_MEMORY);
    ck_assert_int_eq(out.set_count, 1);
    ck_assert_int_eq(out.sets_needed, 2);
    ck_assert_int_eq(pp_peg_constraints_polytope_plane(&a.view, up, 0.0, 0.0, &out),
                     PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_peg_constraints_polytope_plane(NULL, up, 0.0, EPS, &out),
                     PP_ERR_NULL_ARGUMENT);
    release(&a);
}
END_TEST

/* A 0.4 cube resting face down inside B's top face: the four bottom corners of A, U each on
 * B's +z face: p_a = corner (z = 1/2), n = -z, psi = 0, APPL 0 (A's side edges are
 * horizontal). B's corners are 0.25 m from A: nothing. */
START_TEST(test_face_on_face)
{
    const double xa[3] = {0.05, -0.02, 0.7}, zero[3] = {0, 0, 0}, down[3] = {0, 0, -1};
    posed a = box(0.4, 0.4, 0.4, xa, NULL), b = box(1, 1, 1, zero, NULL);
    result *r = build(&a, &b, EPS);
    ck_assert_int_eq(r->out.set_count, 4);
    for (int i = 0; i < 4; ++i) {
        ck_assert_int_eq(r->sets[i].kind, PP_PEG_SET_U);
        ck_assert_int_eq(r->sets[i].origin, PP_PEG_VERTEX_FACE);
        double p[3] = {0.05 + ((i & 1) ? 0.2 : -0.2), -0.02 + ((i & 2) ? 0.2 : -0.2), 0.5};
        assert_contact(&r->c[i], PP_CONTACT_VERTEX_FACE, i, FACE_PZ, p, down, 0.0, TOL);
        ck_assert_double_eq_tol(r->appl[i], 0.0, TOL);
    }
    free(r);
    release(&a);
    release(&b);
}
END_TEST

/* Crossed ridges 0.01 apart (check_peg_geometry): one U edge–edge contact, n = +z (A -> B),
 * psi = 0.01, p_a = (0, 0, sqrt2/2) the middle of A's ridge, APPL 1/sqrt2. */
START_TEST(test_edge_edge)
{
    const double xa[3] = {0, 0, 0}, xb[3] = {0, 0, sqrt(2.0) + 0.01}, ex[3] = {1, 0, 0},
                 ey[3] = {0, 1, 0}, up[3] = {0, 0, 1};
    double Rx[9], Ry[9];
    rot_axis(ex, PI / 4, Rx);
    rot_axis(ey, PI / 4, Ry);
    posed a = box(1, 1, 1, xa, Rx), b = box(1, 1, 1, xb, Ry);
    result *r = build(&a, &b, EPS);
    ck_assert_int_eq(r->out.set_count, 1);
    ck_assert_int_eq(r->sets[0].kind, PP_PEG_SET_U);
    ck_assert_int_eq(r->sets[0].origin, PP_PEG_EDGE_EDGE);
    const double p[3] = {0, 0, sqrt(0.5)};
    assert_contact(&r->c[0], PP_CONTACT_EDGE_EDGE, -2, -2, p, up, 0.01, 1e-12);
    ck_assert_double_eq_tol(r->appl[0], sqrt(0.5), 1e-12);
    free(r);
    release(&a);
    release(&b);
}
END_TEST

/*
 * Vertex–edge. A = octahedron (r = 0.3) turned 10 deg about y, its bottom tip at
 * t = (1/2, 0, 0.51), 0.01 above the middle of B's top edge (x = z = 1/2, along y; faces +x
 * and +z). Faces of B within eps of t: +z (psi 0.01, t projects onto the edge: inside) and
 * +x (psi 0, D = 0.01). So I = {C(t, +z): n = -z, psi = 0.01; C(t, +x): n = -x, psi = 0},
 * primary +z (largest psi; both feasible).
 * A's edges at t leave along R(±1, 0, 1)/sqrt2 and R(0, ±1, 1)/sqrt2. The one toward -x,
 * u = R(-1, 0, 1)/sqrt2 = (-sin 35, 0, cos 35), crosses over B's edge on the +z side
 * (u . O > 0, O toward f1 = +z): X = {C(t, +z), C(u-edge, B's edge)} with the edge–edge
 * normal n = ±u x y/|.| = -(cos 35, 0, sin 35) (A -> B), psi = n . ((1/2, 0, 1/2) - t)
 * = 0.01 sin 35, p_a = t (the clamped closest point of A's edge), APPL^ee = sin 35 (= the
 * smallest t-vector cosine); primary C(t, +z) (0.01 > 0.01 sin 35). The other three edges
 * have APPL^ee below -0.1: no X.
 */
START_TEST(test_vertex_edge)
{
    const double ey[3] = {0, 1, 0}, zero[3] = {0, 0, 0}, tip[3] = {0.5, 0, 0.51},
                 local_tip[3] = {0, 0, -0.3}, local_left[3] = {-0.3, 0, 0};
    double R[9], rt[3], x[3], left[3];
    rot_axis(ey, PI / 18, R);
    mat_vec(R, local_tip, rt);
    for (int k = 0; k < 3; ++k) x[k] = tip[k] - rt[k];
    posed a = octahedron(0.3, x, R), b = box(1, 1, 1, zero, NULL);
    mat_vec(R, local_left, left);
    for (int k = 0; k < 3; ++k) left[k] += x[k];
    int v = find_vertex(&a.view, tip), w = find_vertex(&a.view, left);
    int e_b = find_edge(&b.view, 5, 7), e_a = find_edge(&a.view, v, w);

    result *r = build(&a, &b, EPS);
    ck_assert_int_eq(r->out.set_count, 2);
    const double nz[3] = {0, 0, -1}, nx[3] = {-1, 0, 0};
    ck_assert_int_eq(r->sets[0].kind, PP_PEG_SET_I);
    ck_assert_int_eq(r->sets[0].origin, PP_PEG_VERTEX_EDGE);
    ck_assert_int_eq(r->sets[0].count, 2);
    assert_contact(&r->c[0], PP_CONTACT_VERTEX_FACE, v, FACE_PZ, tip, nz, 0.01, 1e-12);
    assert_contact(&r->c[1], PP_CONTACT_VERTEX_FACE, v, FACE_PX, tip, nx, 0.0, 1e-12);

    const double s35 = sin(35 * PI / 180), c35 = cos(35 * PI / 180);
    const double nee[3] = {-c35, 0, -s35};
    ck_assert_int_eq(r->sets[1].kind, PP_PEG_SET_X);
    ck_assert_int_eq(r->sets[1].count, 2);
    assert_contact(&r->c[2], PP_CONTACT_VERTEX_FACE, v, FACE_PZ, tip, nz, 0.01, 1e-12);
    assert_contact(&r->c[3], PP_CONTACT_EDGE_EDGE, e_a, e_b, tip, nee, 0.01 * s35, 1e-12);
    ck_assert_double_eq_tol(r->appl[3], s35, 1e-12);
    free(r);
    release(&a);
    release(&b);
}
END_TEST

/*
 * Edge–vertex: the same pair with the roles swapped (A = cube, B = octahedron). Every contact
 * is written A -> B by the same-frame flip:
 *  C(t, +z) becomes face–vertex: n = +z (A's top face normal), p_a = t - 0.01 z = (1/2, 0,
 *  1/2), psi = 0.01; C(t, +x): n = +x, p_a = t, psi = 0;
 *  the edge–edge contact: n = (cos 35, 0, sin 35), psi = 0.01 s35, features (A's edge, B's
 *  edge), p_a = the closest point of A's edge to B's, (1/2, 0, 1/2) (B's edge is clamped at the
 *  tip t: the plain flip's t + psi n_BA = t - 0.01 s35 (c35, 0, s35) is off A's edge;
 *  pp_peg_edge_edge_flip).
 */
START_TEST(test_edge_vertex_flip)
{
    const double ey[3] = {0, 1, 0}, zero[3] = {0, 0, 0}, tip[3] = {0.5, 0, 0.51},
                 local_tip[3] = {0, 0, -0.3}, local_left[3] = {-0.3, 0, 0};
    double R[9], rt[3], x[3], left[3];
    rot_axis(ey, PI / 18, R);
    mat_vec(R, local_tip, rt);
    for (int k = 0; k < 3; ++k) x[k] = tip[k] - rt[k];
    posed b = octahedron(0.3, x, R), a = box(1, 1, 1, zero, NULL);
    mat_vec(R, local_left, left);
    for (int k = 0; k < 3; ++k) left[k] += x[k];
    int v = find_vertex(&b.view, tip), w = find_vertex(&b.view, left);
    int e_a = find_edge(&a.view, 5, 7), e_b = find_edge(&b.view, v, w);

    result *r = build(&a, &b, EPS);
    ck_assert_int_eq(r->out.set_count, 2);
    ck_assert_int_eq(r->sets[0].origin, PP_PEG_EDGE_VERTEX);
    const double pz[3] = {0, 0, 1}, px[3] = {1, 0, 0}, on_top[3] = {0.5, 0, 0.5};
    assert_contact(&r->c[0], PP_CONTACT_FACE_VERTEX, FACE_PZ, v, on_top, pz, 0.01, 1e-12);
    assert_contact(&r->c[1], PP_CONTACT_FACE_VERTEX, FACE_PX, v, tip, px, 0.0, 1e-12);
    const double s35 = sin(35 * PI / 180), c35 = cos(35 * PI / 180), psi = 0.01 * s35;
    const double nee[3] = {c35, 0, s35}, pee[3] = {0.5, 0, 0.5};
    ck_assert_int_eq(r->sets[1].kind, PP_PEG_SET_X);
    assert_contact(&r->c[2], PP_CONTACT_FACE_VERTEX, FACE_PZ, v, on_top, pz, 0.01, 1e-12);
    assert_contact(&r->c[3], PP_CONTACT_EDGE_EDGE, e_a, e_b, pee, nee, psi, 1e-12);
    free(r);
    release(&a);
    release(&b);
}
END_TEST

/*
 * A vertex near two edges of the other body gets its vertex set once. The octahedron's bottom
 * tip t = (0.484, 0.484, 0.502) sits 0.002 above the cube's top face, 0.0161 from its top
 * edges along x and along y (interior points: 0.0227 from their common corner, beyond eps =
 * 0.02), so two vertex–edge configurations hold, and each makes t's vertex set over the faces
 * within eps, I(+z (psi 0.002, primary), +x, +y (psi -0.016)). Those are one constraint; two
 * copies were two impulses of it in the LCP, and without the reduction (pp_peg_local_sets
 * with reduce = 0, the stepper's moving islands) both were kept (peg_constraints.c,
 * drop_repeated_sets: PEG pouring seeds 122 and 170 cycled on the copy the re-linearisation's
 * working set did not know). Now the unreduced output holds it once, and no two of its sets
 * hold the same features; the reduced output is what it was (Rule 2 kept one copy).
 */
static result *local_with(pp_peg_builder *builder, const posed *a, const posed *b, int reduce);

START_TEST(test_vertex_set_made_once)
{
    const double zero[3] = {0, 0, 0}, tip[3] = {0.484, 0.484, 0.502},
                 x[3] = {tip[0], tip[1], tip[2] + 0.3};
    posed a = octahedron(0.3, x, NULL), b = box(1, 1, 1, zero, NULL);
    const int v = find_vertex(&a.view, tip);
    pp_peg_builder *bd;
    ck_assert_int_eq(pp_peg_builder_create(&bd), PP_OK);
    const pp_peg_params params = pp_peg_params_default();
    int n = 0, near_edges = 0;
    ck_assert_int_eq(pp_peg_classify_near_features(bd, &a.view, &b.view, EPS, &params, &n), PP_OK);
    for (int i = 0; i < n; ++i) {
        ck_assert_int_ne(bd->configs[i].kind, PP_PEG_VERTEX_VERTEX);
        near_edges += bd->configs[i].kind == PP_PEG_VERTEX_EDGE && bd->configs[i].feature_a == v;
    }
    ck_assert_int_eq(near_edges, 2);
    for (int reduce = 0; reduce < 2; ++reduce) {
        result *r = local_with(bd, &a, &b, reduce);
        int copies = 0;
        for (int s = 0; s < r->out.set_count; ++s) {
            const pp_contact *c = &r->c[r->sets[s].first];
            int faces = 0; /* the set's members among t's three faces */
            for (int k = 0; k < r->sets[s].count; ++k)
                faces += c[k].kind == PP_CONTACT_VERTEX_FACE && c[k].feature_a == v &&
                         (c[k].feature_b == FACE_PZ || c[k].feature_b == FACE_PX ||
                          c[k].feature_b == FACE_PY);
            if (faces == 3 && r->sets[s].count == 3) {
                ++copies;
                ck_assert_int_eq(r->sets[s].kind, PP_PEG_SET_I);
                ck_assert_int_eq(c[0].feature_b, FACE_PZ);
                ck_assert_double_eq_tol(c[0].psi, 0.002, 1e-12);
            }
            for (int t = 0; t < s; ++t) { /* no two sets with the same features */
                int same = r->sets[t].count == r->sets[s].count;
                for (int k = 0; k < r->sets[s].count && same; ++k) {
                    int found = 0;
                    for (int m = 0; m < r->sets[t].count && !found; ++m) {
                        const pp_contact *d = &r->c[r->sets[t].first + m];
                        found = d->kind == c[k].kind && d->feature_a == c[k].feature_a &&
                                d->feature_b == c[k].feature_b;
                    }
                    same = found;
                }
                ck_assert_msg(!same, "reduce %d: sets %d and %d hold the same features", reduce,
                              t, s);
            }
        }
        ck_assert_int_eq(copies, 1);
        free(r);
    }
    pp_peg_builder_destroy(bd);
    release(&a);
    release(&b);
}
END_TEST

/*
 * Vertex–vertex, axis-aligned cubes: A's corner 0 at v_a = v_b + (-0.003, -0.003, 0.01), v_b =
 * B's corner 7 = (1/2, 1/2, 1/2). Faces of B within eps of v_a: +x (psi -0.003, outside the
 * face by 0.01 in z: D = 0.0104, elevation asin(-0.003/0.0104) = -0.29 >= -0.4: feasible),
 * +y (the same), +z (psi 0.01, inside): I(v_a) = {+z (primary, largest psi), +x, +y}.
 * Faces of A within eps of v_b: -x, -y (psi -0.003), -z (psi 0.01): I(v_b) flipped:
 * {C(-z): n = -z, p_a = v_b + 0.01 z; C(-x): n = -x, p_a = v_b - 0.003 x; C(-y)}.
 * Every face has APPL 0 >= appl_x, so the X is implied by I(v_a): not made.
 */
START_TEST(test_vertex_vertex)
{
    const double zero[3] = {0, 0, 0}, va[3] = {0.497, 0.497, 0.51};
    const double xa[3] = {va[0] + 0.5, va[1] + 0.5, va[2] + 0.5};
    posed a = box(1, 1, 1, xa, NULL), b = box(1, 1, 1, zero, NULL);
    result *r = build(&a, &b, EPS);
    ck_assert_int_eq(r->out.set_count, 2);
    const double nz[3] = {0, 0, -1}, nx[3] = {-1, 0, 0}, ny[3] = {0, -1, 0};
    ck_assert_int_eq(r->sets[0].kind, PP_PEG_SET_I);
    ck_assert_int_eq(r->sets[0].origin, PP_PEG_VERTEX_VERTEX);
    ck_assert_int_eq(r->sets[0].count, 3);
    assert_contact(&r->c[0], PP_CONTACT_VERTEX_FACE, 0, FACE_PZ, va, nz, 0.01, 1e-12);
    assert_contact(&r->c[1], PP_CONTACT_VERTEX_FACE, 0, FACE_PX, va, nx, -0.003, 1e-12);
    assert_contact(&r->c[2], PP_CONTACT_VERTEX_FACE, 0, FACE_PY, va, ny, -0.003, 1e-12);
    const double p0[3] = {0.5, 0.5, 0.51}, p1[3] = {0.497, 0.5, 0.5}, p2[3] = {0.5, 0.497, 0.5};
    ck_assert_int_eq(r->sets[1].count, 3);
    assert_contact(&r->c[3], PP_CONTACT_FACE_VERTEX, FACE_NZ, 7, p0, nz, 0.01, 1e-12);
    assert_contact(&r->c[4], PP_CONTACT_FACE_VERTEX, FACE_NX, 7, p1, nx, -0.003, 1e-12);
    assert_contact(&r->c[5], PP_CONTACT_FACE_VERTEX, FACE_NY, 7, p2, ny, -0.003, 1e-12);
    free(r);
    release(&a);
    release(&b);
}
END_TEST

/*
 * Vertex–vertex with A turned 10 deg about z around its corner: A's edges at v_a leave along
 * (cos10, sin10, 0), (-sin10, cos10, 0), z, so APPL^vf(v_a, B's +x) = -sin10 = -0.17 (in the
 * I set, not among the X's candidates): the X is no longer implied and is made. It holds B's
 * +z face (psi 0.01, the largest: primary) and edge pairs, and it is satisfied (the pair is
 * 0.01 apart along z).
 */
START_TEST(test_vertex_vertex_x)
{
    const double ez[3] = {0, 0, 1}, zero[3] = {0, 0, 0}, corner[3] = {-0.5, -0.5, -0.5},
                 va[3] = {0.497, 0.497, 0.51};
    double R[9], rc[3], x[3];
    rot_axis(ez, PI / 18, R);
    mat_vec(R, corner, rc);
    for (int k = 0; k < 3; ++k) x[k] = va[k] - rc[k];
    posed a = box(1, 1, 1, x, R), b = box(1, 1, 1, zero, NULL);
    result *r = build(&a, &b, EPS);
    ck_assert_int_eq(r->out.set_count, 3);
    ck_assert_int_eq(r->sets[2].kind, PP_PEG_SET_X);
    ck_assert_int_eq(r->sets[2].origin, PP_PEG_VERTEX_VERTEX);
    const pp_contact *primary = &r->c[r->sets[2].first];
    const double nz[3] = {0, 0, -1};
    assert_contact(primary, PP_CONTACT_VERTEX_FACE, 0, FACE_PZ, va, nz, 0.01, 1e-12);
    int edge_pairs = 0;
    for (int i = r->sets[2].first; i < r->sets[2].first + r->sets[2].count; ++i) {
        edge_pairs += r->c[i].kind == PP_CONTACT_EDGE_EDGE;
        ck_assert(r->appl[i] >= pp_peg_params_default().appl_x);
    }
    ck_assert_int_ge(edge_pairs, 1);
    ck_assert_double_eq_tol(set_max_psi(r, 2), 0.01, 1e-12);
    free(r);
    release(&a);
    release(&b);
}
END_TEST

/*
 * An edge crossing only the X sees (found by a search, then fixed here): A turned by the
 * quaternion (0.18, -0.1, 0.71, 0.87), its corner 0 at B's corner 7 + (0.003, -0.007,
 * 0.006). Neither vertex is inside the other body (both vertex sets have max psi > 0), yet
 * the boxes overlap by 0.00428 (pp_shape_distance): an edge of A at v_a crosses an edge of B
 * at v_b. The X's max psi is that depth exactly: its largest candidate is the crossing
 * edge pair, the separating axis of least overlap.
 */
START_TEST(test_vertex_vertex_crossing)
{
    const double q[4] = {0.18, -0.1, 0.71, 0.87}, corner[3] = {-0.5, -0.5, -0.5},
                 zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    const double va[3] = {0.503, 0.493, 0.506};
    double R[9], rc[3], x[3];
    quat_R(q, R);
    mat_vec(R, corner, rc);
    for (int k = 0; k < 3; ++k) x[k] = va[k] - rc[k];
    posed a = box(1, 1, 1, x, R), b = box(1, 1, 1, zero, NULL);
    pp_shape sa = pp_shape_make_box(one, x, R), sb = pp_shape_make_box(one, zero, I3);
    pp_proximity prox;
    ck_assert_int_eq(pp_shape_distance(&sa, &sb, &prox), PP_OK);
    ck_assert(prox.distance < -0.004);
    result *r = build(&a, &b, EPS);
    ck_assert_int_eq(r->out.set_count, 3);
    ck_assert(set_max_psi(r, 0) > 0.005); /* v_a against B */
    ck_assert(set_max_psi(r, 1) > 0.005); /* v_b against A */
    ck_assert_int_eq(r->sets[2].kind, PP_PEG_SET_X);
    ck_assert_double_eq_tol(set_max_psi(r, 2), prox.distance, 1e-9);
    ck_assert_int_eq(r->c[r->sets[2].first].kind, PP_CONTACT_EDGE_EDGE);
    free(r);
    release(&a);
    release(&b);
}
END_TEST

/*
 * Nearly coplanar faces: B's top is a roof with a ridge along y raised by 0.002 (faces of
 * normals (±0.004, 0, 1)/k, k = sqrt(1 + 0.004^2), cos = 0.999968 > 0.995). A's tip at
 * (0.005, 0.1, 0.512), 0.0112 from the ridge: vertex–edge, and the two faces count as one:
 * the lower (the -x face: psi (0.01 - 0.00002)/k) is left out, the set is a U on the +x
 * roof face, psi = (0.01 + 0.00002)/k, n = -(0.004, 0, 1)/k. No X: the X sets are made for the
 * coplanar case too (test_coplanar_ridge_crossed_by_edge), but the cube's edges at the tip
 * rise at 35 degrees and none passes their tests against the ridge.
 */
START_TEST(test_coplanar_faces)
{
    const double pts[] = {-0.5, -0.5, -0.5, 0.5, -0.5, -0.5, -0.5, 0.5, -0.5, 0.5, 0.5, -0.5,
                          -0.5, -0.5, 0.5,  0.5, -0.5, 0.5,  -0.5, 0.5, 0.5,  0.5, 0.5, 0.5,
                          0.0,  -0.5, 0.502, 0.0, 0.5, 0.502};
    pp_polytope *roof;
    ck_assert_int_eq(pp_polytope_from_points(pts, 10, &roof), PP_OK);
    const double zero[3] = {0, 0, 0}, diag[3] = {1, 1, 1}, tip[3] = {0.005, 0.1, 0.512};
    posed b = pose(roof, zero, NULL);
    /* A: a unit cube with its diagonal turned onto +z, corner 0 (the lowest) at the tip */
    double R[9], axis[3] = {diag[1] * 1 - diag[2] * 0, diag[2] * 0 - diag[0] * 1, 0};
    rot_axis(axis, acos(1 / sqrt(3.0)), R);
    const double corner[3] = {-0.5, -0.5, -0.5};
    double rc[3], x[3];
    mat_vec(R, corner, rc);
    for (int k = 0; k < 3; ++k) x[k] = tip[k] - rc[k];
    posed a = box(1, 1, 1, x, R);
    ck_assert_double_eq_tol(a.view.vertices[2], 0.512, 1e-12);
    result *r = build(&a, &b, EPS);
    ck_assert_int_eq(r->out.set_count, 1);
    ck_assert_int_eq(r->sets[0].kind, PP_PEG_SET_U);
    ck_assert_int_eq(r->sets[0].origin, PP_PEG_VERTEX_EDGE);
    const double k = sqrt(1 + 0.004 * 0.004), n[3] = {-0.004 / k, 0, -1 / k};
    assert_contact(&r->c[0], PP_CONTACT_VERTEX_FACE, 0, -2, tip, n, (0.01 + 0.00002) / k, 1e-12);
    free(r);
    release(&a);
    free(b.v);
    free(b.n);
    free(b.d);
    pp_polytope_destroy(roof);
}
END_TEST

/* ---- Regressions from the pouring experiment (every set at the end of a step, no overlap) --- */

/* The roof block: unit cube with its top raised into a ridge along y at x = 0, height
 * 0.5 + rise (faces z = 0.5 + rise - (2 rise) |x|, normals (±2 rise, 0, 1)/|.|). */
static posed roof(double rise)
{
    const double pts[] = {-0.5, -0.5, -0.5, 0.5, -0.5, -0.5, -0.5, 0.5, -0.5, 0.5, 0.5, -0.5,
                          -0.5, -0.5, 0.5,  0.5, -0.5, 0.5,  -0.5, 0.5, 0.5,  0.5, 0.5, 0.5,
                          0.0,  -0.5, 0.5 + rise, 0.0, 0.5, 0.5 + rise};
    pp_polytope *poly;
    ck_assert_int_eq(pp_polytope_from_points(pts, 10, &poly), PP_OK);
    const double zero[3] = {0, 0, 0};
    return pose(poly, zero, NULL);
}

static posed hull(const double *pts, int count)
{
    pp_polytope *poly;
    ck_assert_int_eq(pp_polytope_from_points(pts, count, &poly), PP_OK);
    const double zero[3] = {0, 0, 0};
    return pose(poly, zero, NULL);
}

static double signed_distance(const posed *a, const posed *b)
{
    const double zero[3] = {0, 0, 0};
    pp_shape sa = pp_shape_make_polytope(a->poly, a->x, a->R);
    pp_shape sb = pp_shape_make_polytope(b->poly, b->x, b->R);
    (void)zero;
    pp_proximity prox;
    ck_assert_int_eq(pp_shape_distance(&sa, &sb, &prox), PP_OK);
    return prox.distance;
}

static double min_set_max_psi(const result *r)
{
    double m = HUGE_VAL;
    for (int s = 0; s < r->out.set_count; ++s) m = fmin(m, set_max_psi(r, s));
    return m;
}

/*
 * Cause 1: a vertex–edge configuration with nearly coplanar faces made only the vertex's set,
 * no X ("an edge of p cannot cross e without v crossing the common plane"). B = roof with a
 * ridge rising 0.015 (slopes ±0.03: cos = 0.9982 > coplanar_cos). A = tetrahedron whose vertex
 * v lies ON the +x roof face 0.01 from the ridge, with an edge rising at 0.02 toward -x: it
 * dips below the +x face (APPL^vf = -0.01, admitted), passes 1e-4 under the ridge and leaves
 * through the -x face (which falls away at 0.03). v is on B's boundary and the far end w is
 * 0.015 above the -x face, so no vertex set sees the overlap; only the X of v's edge and the
 * ridge, max(psi(v, f_-), psi(vw, ridge)) = psi(vw, ridge) ~ -1e-4, does.
 */
START_TEST(test_coplanar_ridge_crossed_by_edge)
{
    posed b = roof(0.015);
    const double v[3] = {0.01, 0.0, 0.515 - 0.03 * 0.01};
    const double len = sqrt(1 + 0.02 * 0.02), L = 0.3;
    const double pts[12] = {v[0], v[1], v[2],
                            v[0] - L / len, v[1], v[2] + 0.02 * L / len,
                            v[0] + 0.05, v[1] + 0.2, v[2] + 0.2,
                            v[0] + 0.05, v[1] - 0.2, v[2] + 0.2};
    posed a = hull(pts, 4);
    double d = signed_distance(&a, &b);
    ck_assert_msg(d < -5e-5 && d > -2e-4, "the edge passes ~1e-4 under the ridge: %g", d);
    result *r = build(&a, &b, EPS);
    ck_assert_msg(min_set_max_psi(r) < -5e-5, "overlap %g unseen (%d sets, smallest max %g)", d,
                  r->out.set_count, min_set_max_psi(r));
    int crossing_x = 0;
    for (int s = 0; s < r->out.set_count; ++s)
        crossing_x |= r->sets[s].kind == PP_PEG_SET_X && set_max_psi(r, s) < -5e-5;
    ck_assert(crossing_x);
    free(r);
    release(&a);
    release(&b);
}
END_TEST

/*
 * Cause 3: a vertex deeper than delta under the face it projects into had no set at all (the
 * face is infeasible, psi < -delta, and no other face is within eps), so nothing pushed it out
 * and it sank further every step. A 0.4 cube standing on a corner, the corner 0.003 under the
 * top of a unit cube (delta = 0.0025 < 0.003 < eps): its set is made anyway, a U on the top
 * face with psi = -0.003.
 */
START_TEST(test_deep_vertex_has_a_set)
{
    const double diag[3] = {1, 1, 1}, down[3] = {0, 0, -1};
    double axis[3] = {diag[1] * down[2] - diag[2] * down[1], diag[2] * down[0] - diag[0] * down[2],
                      diag[0] * down[1] - diag[1] * down[0]};
    double R[9], rc[3], x[3];
    rot_axis(axis, acos(-1 / sqrt(3.0)), R); /* (1,1,1) -> -z: corner 7 lowest */
    const double corner[3] = {0.2, 0.2, 0.2}, tip[3] = {0.1, 0.05, 0.5 - 0.003},
                 zero[3] = {0, 0, 0};
    mat_vec(R, corner, rc);
    for (int k = 0; k < 3; ++k) x[k] = tip[k] - rc[k];
    posed a = box(0.4, 0.4, 0.4, x, R), b = box(1, 1, 1, zero, NULL);
    ck_assert_double_eq_tol(signed_distance(&a, &b), -0.003, 1e-9);
    result *r = build(&a, &b, EPS);
    ck_assert_int_eq(r->out.set_count, 1);
    ck_assert_int_eq(r->sets[0].kind, PP_PEG_SET_U);
    const double nz[3] = {0, 0, -1};
    assert_contact(&r->c[0], PP_CONTACT_VERTEX_FACE, 7, FACE_PZ, tip, nz, -0.003, 1e-12);
    free(r);
    release(&a);
    release(&b);
}
END_TEST

/*
 * Cause 2a: the relaxed APPL^ee admitted, for a flat edge, an orientation pointing into the
 * edge's own faces. B = a thin prism (0.01 high, bottom 0.1 wide) lying along x, 0.001 above
 * the ridge of a roof rising 0.002: the roof's ridge and the prism's TOP ridge are 0.011 apart
 * (within eps), and with n = -z (into both roof faces) the t-vector test gave APPL^ee = -0.004:
 * a U edge–edge constraint with psi = -0.011 on a pair 0.001 apart. Now no set blocks it.
 */
START_TEST(test_flat_edge_separated_not_blocked)
{
    posed a = roof(0.002);
    const double z0 = 0.503, pts[18] = {-0.5, -0.05, z0, 0.5, -0.05, z0, -0.5, 0.05, z0,
                                        0.5,  0.05,  z0, -0.5, 0.0, z0 + 0.01, 0.5, 0.0, z0 + 0.01};
    posed b = hull(pts, 6);
    ck_assert_double_eq_tol(signed_distance(&a, &b), 0.001, 1e-9);
    result *r = build(&a, &b, EPS);
    for (int s = 0; s < r->out.set_count; ++s)
        ck_assert_msg(set_max_psi(r, s) >= -1e-12, "set %d (%s, %s) max psi %g blocks a pair 0.001 apart",
                      s, pp_peg_set_kind_string(r->sets[s].kind),
                      pp_peg_config_kind_string(r->sets[s].origin), set_max_psi(r, s));
    free(r);
    release(&a);
    release(&b);
}
END_TEST

/*
 * Cause 2b: edge–edge configurations with a negative gap deeper than delta whose edges do not
 * cross. A = plate 0.01 x 1 x 1; its top front edge along y at x = 0.005, z = 0.5 (faces +x,
 * +z). B = a wedge (triangular prism, edges vertical) 0.008 behind the plate: apex edge at
 * x = -0.025, y = 0, faces of normals 0.8 x - 0.6 y and -0.958 x - 0.287 y. Against A's top
 * front edge, with n = +x (out of A's +x face): the apex gives psi = -0.03 (APPL^ee -0.287,
 * relaxed) and the wedge's back edge at x = -0.031 psi = -0.036 (APPL^ee 0: classical, but A
 * is thinner than the gap). As U constraints they asked to push a pair 0.008 apart by 0.03
 * in one step. Neither end of either common perpendicular is inside the other body: no
 * crossing, no U.
 */
START_TEST(test_edge_gap_not_a_crossing)
{
    const double zero[3] = {0, 0, 0};
    posed a = box(0.01, 1, 1, zero, NULL);
    const double s2 = 0.2867, c2 = sqrt(1 - s2 * s2), L = 0.02;
    const double t1[3] = {0.6, 0.8, 0}, t2[3] = {-s2, c2, 0}, apex[3] = {-0.025, 0, 0.5};
    double pts[18];
    for (int end = 0; end < 2; ++end) {
        double p[3] = {apex[0], apex[1], apex[2] + (end ? 0.2 : -0.2)};
        for (int k = 0; k < 3; ++k) {
            pts[9 * end + k] = p[k];
            pts[9 * end + 3 + k] = p[k] + L * t1[k];
            pts[9 * end + 6 + k] = p[k] + L * t2[k];
        }
    }
    posed b = hull(pts, 6);
    const double d = signed_distance(&a, &b);
    ck_assert_double_eq_tol(d, -0.005 - (-0.025 + 0.6 * L), 1e-9); /* 0.008 apart */
    ck_assert(d > 0.0);
    const double eps = 0.05; /* the apex is 0.03 from A's top edge */
    result *r = build(&a, &b, eps);
    for (int s = 0; s < r->out.set_count; ++s)
        ck_assert_msg(set_max_psi(r, s) >= -1e-12, "set %d (%s, %s) max psi %g blocks a pair %g apart",
                      s, pp_peg_set_kind_string(r->sets[s].kind),
                      pp_peg_config_kind_string(r->sets[s].origin), set_max_psi(r, s), d);
    free(r);
    release(&a);
    release(&b);
}
END_TEST

/* ---- Slack rows (Eq 20) ------------------------------------------------------------------- */

/* Table of gap vectors (primary first): the forward substitution gives psi_0 + sum c =
 * max psi; c_s = max(psi_s - max(psi_0..psi_{s-1}), 0) by hand. The same system
 * 0 <= E_I1 c + psi_I ⊥ c >= 0 (E_I1 = tril(ones), psi_I = psi_0 - psi_s, Eq 43/45) solved by
 * Lemke gives the same c: the matrix is a P-matrix (unit lower triangular), so c is unique. */
typedef struct slack_case {
    int count;
    double psi[5], c[5];
} slack_case;

static const slack_case k_slack[] = {
    {1, {0.3}, {0}},
    {2, {0.01, 0.0}, {0, 0}},
    {2, {0.0, 0.01}, {0, 0.01}},
    {3, {-0.2, 0.1, 0.05}, {0, 0.3, 0}},
    {3, {-0.2, -0.1, 0.05}, {0, 0.1, 0.15}},
    {4, {-0.5, -0.6, -0.7, -0.4}, {0, 0, 0, 0.1}},
    {5, {0.0, 0.0, 0.0, 0.0, 0.0}, {0, 0, 0, 0, 0}},
    {5, {-1, 1, 2, -3, 2.5}, {0, 2, 1, 0, 0.5}},
};

START_TEST(test_slack_rows)
{
    const slack_case *t = &k_slack[_i];
    double c[5], top = -HUGE_VAL;
    for (int s = 0; s < t->count; ++s) top = fmax(top, t->psi[s]);
    ck_assert_double_eq_tol(pp_peg_set_slacks(t->psi, t->count, c), top, 1e-15);
    ck_assert_double_eq_tol(pp_peg_set_slacks(t->psi, t->count, NULL), top, 1e-15);
    for (int s = 0; s < t->count; ++s) ck_assert_double_eq_tol(c[s], t->c[s], 1e-15);
    int K = t->count - 1;
    if (K == 0) return;
    double M[16] = {0}, q[4], z[4];
    for (int i = 0; i < K; ++i) {
        q[i] = t->psi[0] - t->psi[i + 1];
        for (int j = 0; j <= i; ++j) M[i + j * K] = 1.0;
    }
    pp_lcp_workspace *ws;
    pp_lcp_result res;
    ck_assert_int_eq(pp_lcp_workspace_create(4, &ws), PP_OK);
    ck_assert_int_eq(pp_lcp_solve_lemke(ws, K, M, q, NULL, NULL, z, &res), PP_OK);
    double sum = t->psi[0];
    for (int i = 0; i < K; ++i) {
        ck_assert_double_eq_tol(z[i], t->c[i + 1], 1e-14);
        sum += z[i];
    }
    ck_assert_double_eq_tol(sum, top, 1e-14);
    pp_lcp_workspace_destroy(ws);
}
END_TEST

/* ---- Output capacity and arguments -------------------------------------------------------- */

/* Vertex–vertex (3 + 3 contacts in 2 sets): room for the first set only -> PP_ERR_NO_MEMORY,
 * one whole set written, needed totals 2 sets and 6 contacts (counted from the caller's
 * starting counts). */
START_TEST(test_capacity)
{
    const double zero[3] = {0, 0, 0}, xa[3] = {0.997, 0.997, 1.01};
    posed a = box(1, 1, 1, xa, NULL), b = box(1, 1, 1, zero, NULL);
    pp_peg_set sets[4];
    pp_contact c[8];
    pp_peg_output out = {sets, 4, 0, 0, c, NULL, 5, 0, 0};
    ck_assert_int_eq(pp_peg_constraints_polytopes(NULL, &a.view, &b.view, EPS, NULL, &out),
                     PP_ERR_NO_MEMORY);
    ck_assert_int_eq(out.set_count, 1);
    ck_assert_int_eq(out.contact_count, 3);
    ck_assert_int_eq(out.sets_needed, 2);
    ck_assert_int_eq(out.contacts_needed, 6);
    /* appending after an existing set: the totals count it */
    out = (pp_peg_output){sets, 4, 1, 0, c, NULL, 8, 1, 0};
    pp_peg_builder *builder;
    ck_assert_int_eq(pp_peg_builder_create(&builder), PP_OK);
    ck_assert_int_eq(pp_peg_constraints_polytopes(builder, &a.view, &b.view, EPS, NULL, &out),
                     PP_OK);
    ck_assert_int_eq(out.set_count, 3);
    ck_assert_int_eq(sets[1].first, 1);
    ck_assert_int_eq(out.contacts_needed, 7);
    pp_peg_builder_destroy(builder);

    ck_assert_int_eq(pp_peg_constraints_polytopes(NULL, &a.view, &b.view, EPS, NULL, NULL),
                     PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_peg_constraints_polytopes(NULL, &a.view, &b.view, -1.0, NULL, &out),
                     PP_ERR_INVALID_ARGUMENT);
    double saved = a.v[0];
    a.v[0] = NAN;
    ck_assert_int_eq(pp_peg_constraints_polytopes(NULL, &a.view, &b.view, EPS, NULL, &out),
                     PP_ERR_INVALID_ARGUMENT);
    a.v[0] = saved;
    release(&a);
    release(&b);
}
END_TEST


/* ---- Implied sets and duplicate rows (reduce_pair, peg.h) ------------------------------------ */

/* Posed copy of p moved by a small rigid motion: rotation by angle about axis (through p's
 * origin), then translation t. */
static posed moved(const posed *p, const double t[3], const double axis[3], double angle)
{
    double Rd[9], R[9], x[3];
    rot_axis(axis, angle, Rd);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            R[3 * r + c] = 0.0;
            for (int k = 0; k < 3; ++k) R[3 * r + c] += Rd[3 * r + k] * p->R[3 * k + c];
        }
    for (int k = 0; k < 3; ++k) x[k] = p->x[k] + t[k];
    return pose(p->poly, x, R);
}

/* The linearised end gap psi + h psi_dot of contact c (A -> B) for the twists (v, w) of A and
 * B about their origins x_a, x_b: psi_dot = n . (u_B(p_b) - u_A(p_a)), p_b = p_a + psi n
 * (PEG Eq 6: G^T nu). */
static double linear_gap(const pp_contact *c, double h, const double va[3], const double wa[3],
                         const double xa[3], const double vb[3], const double wb[3],
                         const double xb[3])
{
    double ra[3], rb[3], ua[3], ub[3];
    for (int k = 0; k < 3; ++k) {
        ra[k] = c->p_a[k] - xa[k];
        rb[k] = c->p_a[k] + c->psi * c->n[k] - xb[k];
    }
    ua[0] = va[0] + wa[1] * ra[2] - wa[2] * ra[1];
    ua[1] = va[1] + wa[2] * ra[0] - wa[0] * ra[2];
    ua[2] = va[2] + wa[0] * ra[1] - wa[1] * ra[0];
    ub[0] = vb[0] + wb[1] * rb[2] - wb[2] * rb[1];
    ub[1] = vb[1] + wb[2] * rb[0] - wb[0] * rb[2];
    ub[2] = vb[2] + wb[0] * rb[1] - wb[1] * rb[0];
    double rate = 0.0;
    for (int k = 0; k < 3; ++k) rate += c->n[k] * (ub[k] - ua[k]);
    return c->psi + h * rate;
}

typedef struct reduce_case {
    const char *name;
    int kind;        /* 0 aligned cubes, 1 box on cube sharing two corners, 2 random hulls */
    double eps;
    int expect_sets; /* after the reduction; -1: not checked */
} reduce_case;

static const reduce_case k_reduce[] = {
    {"aligned unit cubes (column)", 0, EPS, 4},
    {"box on cube, two corners shared", 1, EPS, 4},
    {"15-point hulls, eps 0.25 (seed 1)", 2, 0.25, -1},
    {"15-point hulls, eps 0.25 (seed 2)", 2, 0.25, -1},
    {"15-point hulls, eps 0.05 (seed 3)", 2, 0.05, -1},
};

static uint64_t g_rng;
static double uniform(double lo, double hi);

static void make_reduce_pair(const reduce_case *rc, int i, posed *a, posed *b)
{
    const double zero[3] = {0, 0, 0};
    if (rc->kind == 0) {
        const double xa[3] = {0, 0, 1};
        *a = box(1, 1, 1, xa, NULL);
        *b = box(1, 1, 1, zero, NULL);
    } else if (rc->kind == 1) { /* A's y range [-0.1, 0.5]: its corners at y = 0.5 are B's */
        const double xa[3] = {0, 0.2, 0.7};
        *a = box(1, 0.6, 0.4, xa, NULL);
        *b = box(1, 1, 1, zero, NULL);
    } else {
        g_rng = 0x2545F4914F6CDD1Dull * (uint64_t)(i + 1);
        double pa[45], pb[45];
        for (int k = 0; k < 45; ++k) {
            pa[k] = uniform(-0.04, 0.04);
            pb[k] = uniform(-0.01, 0.01);
        }
        pp_polytope *A, *B;
        ck_assert_int_eq(pp_polytope_from_points(pa, 15, &A), PP_OK);
        ck_assert_int_eq(pp_polytope_from_points(pb, 15, &B), PP_OK);
        const double xb[3] = {0.055, uniform(-0.01, 0.01), uniform(-0.01, 0.01)};
        *a = pose(A, zero, NULL);
        *b = pose(B, xb, NULL);
    }
}

typedef struct sets_out {
    pp_peg_set *sets;
    pp_contact *c;
    pp_peg_output out;
} sets_out;

static sets_out local_output(pp_peg_builder *bd, const posed *a, const posed *b, double eps,
                             int reduce)
{
    sets_out r;
    const int ns = 4096, nc = 65536;
    r.sets = malloc(sizeof *r.sets * ns);
    r.c = malloc(sizeof *r.c * nc);
    r.out = (pp_peg_output){r.sets, ns, 0, 0, r.c, NULL, nc, 0, 0};
    ck_assert_int_eq(pp_peg_local_sets(bd, &a->view, &b->view, eps, NULL, reduce, &r.out), PP_OK);
    return r;
}

/*
 * Each rule's removal is an implication (peg.h "Implied sets and duplicate rows"): every set
 * of the unreduced output, removed or shortened, is dominated by a KEPT set T, i.e.
 * max_S >= max_T wherever they are evaluated, so "kept sets satisfied => removed set
 * satisfied". Checked (a) on the LCP's rows: the linearised end gaps psi + h G^T nu for 200
 * random velocity pairs, to round-off (Rule 1 merges contacts whose rows are equal; Rule 2
 * keeps a subset of rows); (b) at 100 random nearby poses of A (1e-4 m, 1e-4 rad), every
 * contact re-evaluated there (pp_peg_contact_update), to second order: contacts of different
 * features with one row at the build pose (coincident corners) part by O(delta^2). Also the
 * literal statement at those samples, and the column's count: 4 U per face pair.
 */
START_TEST(test_reduction_is_implied)
{
    const reduce_case *rc = &k_reduce[_i];
    posed a, b;
    make_reduce_pair(rc, _i, &a, &b);
    pp_peg_builder *bd;
    ck_assert_int_eq(pp_peg_builder_create(&bd), PP_OK);
    sets_out full = local_output(bd, &a, &b, rc->eps, 0);
    sets_out red = local_output(bd, &a, &b, rc->eps, 1);
    ck_assert_int_le(red.out.set_count, full.out.set_count);
    if (rc->expect_sets >= 0) {
        ck_assert_int_eq(red.out.set_count, rc->expect_sets);
        for (int s = 0; s < red.out.set_count; ++s) {
            ck_assert_int_eq(red.sets[s].kind, PP_PEG_SET_U);
            ck_assert_int_eq(red.c[red.sets[s].first].kind, PP_CONTACT_VERTEX_FACE);
            ck_assert_int_eq(red.c[red.sets[s].first].feature_b, FACE_PZ);
            ck_assert_double_eq_tol(red.c[red.sets[s].first].n[2], -1.0, TOL);
        }
    }
    if (rc->kind == 0) ck_assert_int_gt(full.out.set_count, 4 * 2); /* it did reduce */

    enum { LINEAR = 200, POSES = 100, K = LINEAR + POSES };
    const int nf = full.out.set_count, nr = red.out.set_count;
    double *mf = malloc(sizeof(double) * (size_t)nf * K), *mr = malloc(sizeof(double) * (size_t)nr * K);
    g_rng = 0xD1B54A32D192ED03ull * (uint64_t)(_i + 1);
    const double h = 0.01, speed = rc->eps / h;
    for (int k = 0; k < K; ++k) {
        posed a2 = a;
        int linear = k < LINEAR;
        double va[3], wa[3], vb[3], wb[3];
        for (int j = 0; j < 3; ++j) {
            va[j] = uniform(-speed, speed);
            vb[j] = uniform(-speed, speed);
            wa[j] = uniform(-speed, speed);
            wb[j] = uniform(-speed, speed);
        }
        if (!linear) {
            const double t[3] = {uniform(-1e-4, 1e-4), uniform(-1e-4, 1e-4), uniform(-1e-4, 1e-4)},
                         axis[3] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
            a2 = moved(&a, t, axis, uniform(-1e-4, 1e-4));
        }
        for (int pass = 0; pass < 2; ++pass) {
            const sets_out *o = pass ? &red : &full;
            double *m = pass ? mr : mf;
            for (int s = 0; s < o->out.set_count; ++s) {
                double best = -HUGE_VAL;
                for (int i = o->sets[s].first; i < o->sets[s].first + o->sets[s].count; ++i) {
                    pp_contact c = o->c[i];
                    double g;
                    if (linear) {
                        g = linear_gap(&c, h, va, wa, a.x, vb, wb, b.x);
                    } else {
                        ck_assert_int_eq(pp_peg_contact_update(&a2.view, &b.view, NULL, 0.0, &c), 1);
                        g = c.psi;
                    }
                    best = fmax(best, g);
                }
                m[(size_t)s * K + k] = best;
            }
        }
        if (!linear) {
            free(a2.v);
            free(a2.n);
            free(a2.d);
        }
    }
    const double tol_linear = 1e-9, tol_pose = 1e-6; /* round-off; 100 delta^2 */
    for (int s = 0; s < nf; ++s) {
        int dominated = 0;
        for (int t = 0; t < nr && !dominated; ++t) {
            int all = 1;
            for (int k = 0; k < K && all; ++k)
                all = mf[(size_t)s * K + k] >= mr[(size_t)t * K + k] - (k < LINEAR ? tol_linear : tol_pose);
            dominated = all;
        }
        ck_assert_msg(dominated, "%s: set %d (%s, %s, %d contacts) is implied by no kept set",
                      rc->name, s, pp_peg_set_kind_string(full.sets[s].kind),
                      pp_peg_config_kind_string(full.sets[s].origin), full.sets[s].count);
    }
    /* literally: where every kept set holds, every set holds */
    for (int k = 0; k < K; ++k) {
        int kept_hold = 1;
        for (int t = 0; t < nr; ++t) kept_hold &= mr[(size_t)t * K + k] >= 0.0;
        if (!kept_hold) continue;
        for (int s = 0; s < nf; ++s)
            ck_assert_msg(mf[(size_t)s * K + k] >= -(k < LINEAR ? tol_linear : tol_pose),
                          "%s: sample %d: kept sets hold, set %d does not (%g)", rc->name, k, s,
                          mf[(size_t)s * K + k]);
    }
    free(mf);
    free(mr);
    free(full.sets);
    free(full.c);
    free(red.sets);
    free(red.c);
    pp_peg_builder_destroy(bd);
    release(&a);
    release(&b);
}
END_TEST

/* ---- The bound per pair (peg.h) ------------------------------------------------------------ */

typedef struct fast_case {
    double eps;     /* the pair's proximity: 0.01 + motion */
    int seed;
} fast_case;

static const fast_case k_fast[] = {
    {0.26, 1}, {0.26, 2}, {0.26, 3}, {0.61, 4}, {0.61, 5}, {0.61, 6},
};

/*
 * Two 15-point hulls, 8 and 2 cm across, 1–5 cm apart, within the proximity of a pair meeting
 * at 25 m/s (eps = 0.26 m, motion 0.25 m at h = 0.01) or 60 m/s (0.61 m): before the bound
 * every feature pair was near (~250 sets, ~5000 contacts). Now: within PP_PEG_PAIR_MAX_SETS
 * and PP_PEG_PAIR_MAX_CONTACTS (also through the old entry point, motion 0); the separating
 * set is there and its primary is its largest gap (>= 0: a separating axis); and the sets see
 * the collisions the step can make: B translated toward A by up to 10 cm (up to `motion`)
 * along 200 random directions, each end pose that overlaps A violates some set (re-evaluated
 * there).
 */
START_TEST(test_fast_pair_bounded)
{
    const fast_case *fc = &k_fast[_i];
    g_rng = 0x9E3779B97F4A7C15ull * (uint64_t)fc->seed;
    const double zero[3] = {0, 0, 0}, motion = fc->eps - 0.01;
    double pa[45], pb[45];
    for (int k = 0; k < 45; ++k) {
        pa[k] = uniform(-0.04, 0.04);
        pb[k] = uniform(-0.01, 0.01);
    }
    pp_polytope *A, *B;
    ck_assert_int_eq(pp_polytope_from_points(pa, 15, &A), PP_OK);
    ck_assert_int_eq(pp_polytope_from_points(pb, 15, &B), PP_OK);
    posed a = pose(A, zero, NULL);
    /* B on the +x side, its distance to A set to 1–5 cm by bisection */
    const double y = uniform(-0.015, 0.015), z = uniform(-0.015, 0.015),
                 target = uniform(0.01, 0.05);
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 60; ++it) {
        double m = 0.5 * (lo + hi), xb[3] = {m, y, z};
        posed b = pose(B, xb, NULL);
        if (signed_distance(&a, &b) < target) lo = m; else hi = m;
        free(b.v), free(b.n), free(b.d);
    }
    const double xb[3] = {hi, y, z};
    posed b = pose(B, xb, NULL);

    static pp_peg_set sets[1024];
    static pp_contact cs[8192];
    pp_peg_output out = {sets, 1024, 0, 0, cs, NULL, 8192, 0, 0};
    ck_assert_int_eq(pp_peg_constraints_polytopes(NULL, &a.view, &b.view, fc->eps, NULL, &out), PP_OK);
    ck_assert_int_le(out.set_count, PP_PEG_PAIR_MAX_SETS);
    ck_assert_int_le(out.contact_count, PP_PEG_PAIR_MAX_CONTACTS);

    out = (pp_peg_output){sets, 1024, 0, 0, cs, NULL, 8192, 0, 0};
    ck_assert_int_eq(pp_peg_constraints_polytopes_moving(NULL, &a.view, &b.view, fc->eps, motion,
                                                         NULL, &out), PP_OK);
    ck_assert_int_ge(out.set_count, 1);
    ck_assert_int_le(out.set_count, PP_PEG_PAIR_MAX_SETS);
    ck_assert_int_le(out.contact_count, PP_PEG_PAIR_MAX_CONTACTS);
    ck_assert_int_eq(out.sets_needed, out.set_count);
    int separating = -1;
    for (int s = 0; s < out.set_count; ++s)
        if (sets[s].origin == PP_PEG_SEPARATING) separating = s;
    ck_assert_int_ge(separating, 0);
    {
        const pp_peg_set *sp = &sets[separating];
        double m = -HUGE_VAL;
        for (int i = sp->first; i < sp->first + sp->count; ++i) m = fmax(m, cs[i].psi);
        ck_assert_double_eq_tol(cs[sp->first].psi, m, 1e-12);
        ck_assert_double_ge(m, 0.0); /* separated: the primary is a separating axis */
        ck_assert_double_le(m, target + 1e-9);
    }
    /* Collisions within the step are seen */
    int overlapping = 0;
    for (int k = 0; k < 200; ++k) {
        double d[3] = {-1.0, uniform(-0.5, 0.5), uniform(-0.5, 0.5)};
        double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), t = uniform(0.0, fmin(motion, 0.1));
        double x2[3] = {xb[0] + t * d[0] / len, xb[1] + t * d[1] / len, xb[2] + t * d[2] / len};
        posed b2 = pose(B, x2, NULL);
        double dist = signed_distance(&a, &b2);
        int violated = 0;
        for (int s = 0; s < out.set_count && !violated; ++s) {
            double m = -HUGE_VAL;
            for (int i = sets[s].first; i < sets[s].first + sets[s].count; ++i) {
                pp_contact c = cs[i];
                ck_assert_int_eq(pp_peg_contact_update(&a.view, &b2.view, NULL, 0.0, &c), 1);
                m = fmax(m, c.psi);
            }
            violated = m < -1e-12;
        }
        if (dist < -1e-9) {
            ++overlapping;
            ck_assert_msg(violated, "seed %d: B moved %g m overlaps A by %g, no set sees it",
                          fc->seed, t, -dist);
        }
        free(b2.v), free(b2.n), free(b2.d);
    }
    ck_assert_int_gt(overlapping, 0);
    free(a.v), free(a.n), free(a.d);
    free(b.v), free(b.n), free(b.d);
    pp_polytope_destroy(A);
    pp_polytope_destroy(B);
}
END_TEST

/*
 * The primary of a set does not depend on round-off. A finger (0.02 x 0.085 x 0.08) squeezes
 * a 0.1 cube face on face, its top face in the cube's top plane, as in the gripper scene
 * (examples/scenes/jointed.h; eps = 0.01 m, the cube's corners 7.5 mm beside the finger's,
 * no feature pair at the margin's edge): at each top corner of the finger the vertex–vertex X holds the
 * finger's corner on the cube's side face and the cube's corner on the finger's face, both
 * psi = 0 with APPL^vf = 0 (an edge lying in the common plane). The same poses turned and
 * moved by round-off (1e-15 .. 1e-13 rad and m) give the same sets, primaries included
 * (kind and features): a set's primary names it for the LCP's warm start (warm_start.c),
 * and while the round-off of two applicabilities of 0 picked it, the gripper's island
 * started cold at almost every step.
 */
#define FINGER_EPS 0.01 /* m */
START_TEST(test_primary_stable_under_round_off)
{
    const double cube_x[3] = {0, 0, 0}, finger_x[3] = {0.06, 0, 0.01};
    posed b = box(0.1, 0.1, 0.1, cube_x, NULL), a = box(0.02, 0.085, 0.08, finger_x, NULL);
    result *ref = build(&a, &b, FINGER_EPS);
    int x_sets = 0;
    for (int s = 0; s < ref->out.set_count; ++s) x_sets += ref->sets[s].kind == PP_PEG_SET_X;
    ck_assert_int_ge(x_sets, 2);
    g_rng = 0x2545F4914F6CDD1Dull;
    for (int trial = 0; trial < 200; ++trial) {
        const double axis[3] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
        const double scale = trial % 2 ? 1e-13 : 1e-15;
        double R[9], x[3];
        rot_axis(axis, uniform(-1, 1) * scale, R);
        for (int k = 0; k < 3; ++k) x[k] = finger_x[k] + uniform(-1, 1) * scale;
        posed t = pose(a.poly, x, R);
        result *r = build(&t, &b, FINGER_EPS);
        ck_assert_int_eq(r->out.set_count, ref->out.set_count);
        for (int s = 0; s < r->out.set_count; ++s) {
            const pp_contact *c = &r->c[r->sets[s].first], *d = &ref->c[ref->sets[s].first];
            ck_assert_int_eq(r->sets[s].kind, ref->sets[s].kind);
            ck_assert_int_eq(r->sets[s].count, ref->sets[s].count);
            ck_assert_msg(c->kind == d->kind && c->feature_a == d->feature_a &&
                              c->feature_b == d->feature_b,
                          "trial %d set %d: primary %d %d/%d, unperturbed %d %d/%d", trial, s,
                          c->kind, c->feature_a, c->feature_b, d->kind, d->feature_a,
                          d->feature_b);
        }
        free(r);
        free(t.v), free(t.n), free(t.d);
    }
    free(ref);
    release(&a);
    release(&b);
}
END_TEST

/* ---- Properties over random box pairs ----------------------------------------------------- */

static double uniform(double lo, double hi)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return lo + (hi - lo) * (double)(g_rng >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * Boxes of random sizes (0.1–1 m), A at a random orientation, placed (by bisection along a
 * direction, half the time from a vertex of A onto a vertex of B) so that the signed
 * distance from pp_shape_distance is a random target: separated by 1e-5 .. 0.8 eps
 * (loop index even) or overlapping by 1e-5 .. 0.1 eps (odd). Separated: no set has
 * max psi < 0 (none blocks the pair). Overlapping: some set has max psi < 0 (PEG sees it).
 */
START_TEST(test_random_pairs)
{
    g_rng = 0x9E3779B97F4A7C15ull * (uint64_t)(_i + 1);
    const int separated = _i % 2 == 0, trials = 100;
    const double zero[3] = {0, 0, 0};
    int valid = 0;
    for (int t = 0; t < trials; ++t) {
        double la[3] = {uniform(0.1, 1), uniform(0.1, 1), uniform(0.1, 1)},
               lb[3] = {uniform(0.1, 1), uniform(0.1, 1), uniform(0.1, 1)};
        double q[4] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)}, R[9];
        quat_R(q, R);
        double dir[3] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)}, base[3] = {0, 0, 0};
        if (t % 2) { /* A's corner 0 onto B's corner 7, then along a direction out of B */
            double c0[3] = {-la[0] / 2, -la[1] / 2, -la[2] / 2}, rc[3];
            mat_vec(R, c0, rc);
            for (int k = 0; k < 3; ++k) {
                base[k] = lb[k] / 2 - rc[k];
                dir[k] = 1.0 + uniform(-0.7, 0.7);
            }
        }
        double len = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
        double target = separated ? uniform(1e-5, 0.8 * EPS) : -uniform(1e-5, 0.1 * EPS);
        double lo = t % 2 ? -0.5 : 0.0, hi = 3.0, x[3];
        pp_shape sb = pp_shape_make_box(lb, zero, I3);
        pp_proximity prox;
        for (int it = 0; it < 60; ++it) {
            double m = 0.5 * (lo + hi);
            for (int k = 0; k < 3; ++k) x[k] = base[k] + m * dir[k] / len;
            pp_shape sa = pp_shape_make_box(la, x, R);
            ck_assert_int_eq(pp_shape_distance(&sa, &sb, &prox), PP_OK);
            if (prox.distance < target) lo = m; else hi = m;
        }
        for (int k = 0; k < 3; ++k) x[k] = base[k] + hi * dir[k] / len;
        pp_shape sa = pp_shape_make_box(la, x, R);
        pp_shape_distance(&sa, &sb, &prox);
        if (fabs(prox.distance - target) > 1e-7) continue; /* the bisection left the bracket */
        ++valid;
        posed a = box(la[0], la[1], la[2], x, R), b = box(lb[0], lb[1], lb[2], zero, NULL);
        result *r = build(&a, &b, EPS);
        int violated = 0;
        for (int s = 0; s < r->out.set_count; ++s) {
            double m = set_max_psi(r, s);
            if (separated)
                ck_assert_msg(m >= -1e-9, "trial %d: separated by %g, set %d (%s, %s) max %g", t,
                              prox.distance, s, pp_peg_set_kind_string(r->sets[s].kind),
                              pp_peg_config_kind_string(r->sets[s].origin), m);
            violated |= m < 0.0;
        }
        if (!separated)
            ck_assert_msg(violated, "trial %d: overlapping by %g, no set sees it (%d sets)", t,
                          -prox.distance, r->out.set_count);
        free(r);
        release(&a);
        release(&b);
    }
    ck_assert_int_ge(valid, trials * 8 / 10);
}
END_TEST

/* ---- The builder's memo of vertex–face tests ---------------------------------------------- */

/* Bitwise equality of two contacts' values (features, kind, p_a, n, psi). */
static int same_bits(const pp_contact *c, const pp_contact *d)
{
    return c->kind == d->kind && c->feature_a == d->feature_a && c->feature_b == d->feature_b &&
           memcmp(c->p_a, d->p_a, sizeof c->p_a) == 0 && memcmp(c->n, d->n, sizeof c->n) == 0 &&
           memcmp(&c->psi, &d->psi, sizeof c->psi) == 0;
}

/* Every contact of r and its applicability are those of the pose (a, b) itself, computed here
 * from scratch by the geometry's own functions: a vertex–face contact and APPL^vf from A's
 * vertex against B's face, a face–vertex one from B's vertex against A's face (flipped), an
 * edge–edge one from either side (the X of an edge–vertex configuration takes B's side,
 * written A -> B by pp_peg_edge_edge_flip). */
static void expect_values_of_pose(const result *r, const posed *a, const posed *b)
{
    for (int i = 0; i < r->out.contact_count; ++i) {
        const pp_contact *c = &r->c[i];
        pp_contact k, m;
        double appl = 0.0, appl_m = 0.0;
        int ok = 0, feasible;
        switch (c->kind) {
        case PP_CONTACT_VERTEX_FACE:
            pp_peg_vertex_face_contact(&a->view, c->feature_a, &b->view, c->feature_b, &k);
            appl = pp_peg_applicability_vf(&a->view, c->feature_a, &b->view, c->feature_b);
            ok = same_bits(c, &k) && memcmp(&appl, &r->appl[i], sizeof appl) == 0;
            break;
        case PP_CONTACT_FACE_VERTEX:
            pp_peg_vertex_face_contact(&b->view, c->feature_b, &a->view, c->feature_a, &k);
            pp_peg_contact_flip(&k);
            appl = pp_peg_applicability_vf(&b->view, c->feature_b, &a->view, c->feature_a);
            ok = same_bits(c, &k) && memcmp(&appl, &r->appl[i], sizeof appl) == 0;
            break;
        case PP_CONTACT_EDGE_EDGE:
            if (pp_peg_edge_edge_contact(&a->view, c->feature_a, &b->view, c->feature_b, EPS, &k,
                                         &appl, &feasible))
                ok = same_bits(c, &k) && memcmp(&appl, &r->appl[i], sizeof appl) == 0;
            if (!ok && pp_peg_edge_edge_contact(&b->view, c->feature_b, &a->view, c->feature_a,
                                                EPS, &m, &appl_m, &feasible)) {
                pp_peg_edge_edge_flip(&b->view, &a->view, &m);
                ok = same_bits(c, &m) && memcmp(&appl_m, &r->appl[i], sizeof appl_m) == 0;
            }
            break;
        default: break;
        }
        ck_assert_msg(ok, "contact %d (kind %d, features %d/%d): not the pose's own values", i,
                      c->kind, c->feature_a, c->feature_b);
    }
}

/* pp_peg_local_sets with the given builder into a fresh result. */
static result *local_with(pp_peg_builder *builder, const posed *a, const posed *b, int reduce)
{
    result *r = calloc(1, sizeof *r);
    r->out = (pp_peg_output){r->sets, MAX_SETS, 0, 0, r->c, r->appl, MAX_CONTACTS, 0, 0};
    ck_assert_int_eq(pp_peg_local_sets(builder, &a->view, &b->view, EPS, NULL, reduce, &r->out),
                     PP_OK);
    return r;
}

/*
 * The builder keeps each vertex's face tests (feasibility, APPL^vf) for the rest of a call
 * (peg_constraints.c, memo_entry); nothing of them may outlive the call. One builder goes
 * through a sequence of pairs whose structure changes (cube on cube with coincident corners:
 * vertex–vertex X sets; the same lifted 5 mm and turned 0.01 rad: the same vertices, other
 * values; shifted 0.3 m along x: vertex–edge and edge–vertex configurations; an octahedron's tip on
 * the cube: other face counts; the octahedron turned 0.05 rad: the same single vertex of A,
 * the last of one call and the first of the next, with another APPL^vf; the first pose
 * again), once with its stamp clock about to wrap.
 * Each output, reduced and not, equals the one of a new builder to the last bit, and every
 * contact and applicability in it is the pose's own (computed from scratch by the geometry
 * functions): a stale entry would carry the previous pose's psi or APPL.
 */
START_TEST(test_builder_memo_not_stale)
{
    const double zero[3] = {0, 0, 0}, on[3] = {0, 0, 1.0}, lifted[3] = {0, 0, 1.005},
                 shifted[3] = {0.3, 0, 1.004}, tip[3] = {0.1, 0.05, 0.5 + 0.3 + 0.003},
                 z[3] = {0, 0, 1}, x[3] = {1, 0, 0};
    double Rz[9], Rx[9];
    rot_axis(z, 0.01, Rz);
    rot_axis(x, 0.05, Rx);
    posed b = box(1, 1, 1, zero, NULL);
    posed as[6] = {box(1, 1, 1, on, NULL),      box(1, 1, 1, lifted, Rz),
                   box(1, 1, 1, shifted, NULL), octahedron(0.3, tip, NULL),
                   octahedron(0.3, tip, Rx),    box(1, 1, 1, on, NULL)};
    pp_peg_builder *shared;
    ck_assert_int_eq(pp_peg_builder_create(&shared), PP_OK);
    unsigned origins[6] = {0}; /* bit per pp_peg_config_kind among the unreduced sets */
    for (int i = 0; i < 6; ++i) {
        if (i == 1) shared->vf_clock = UINT_MAX - 2; /* wraps within this call */
        for (int reduce = 0; reduce < 2; ++reduce) {
            pp_peg_builder *fresh;
            ck_assert_int_eq(pp_peg_builder_create(&fresh), PP_OK);
            result *r = local_with(shared, &as[i], &b, reduce);
            result *f = local_with(fresh, &as[i], &b, reduce);
            ck_assert_int_eq(r->out.set_count, f->out.set_count);
            ck_assert_int_eq(r->out.contact_count, f->out.contact_count);
            ck_assert_int_gt(r->out.set_count, 0);
            for (int s = 0; s < r->out.set_count; ++s) {
                ck_assert_int_eq(r->sets[s].kind, f->sets[s].kind);
                ck_assert_int_eq(r->sets[s].origin, f->sets[s].origin);
                ck_assert_int_eq(r->sets[s].first, f->sets[s].first);
                ck_assert_int_eq(r->sets[s].count, f->sets[s].count);
            }
            for (int c = 0; c < r->out.contact_count; ++c)
                ck_assert_msg(same_bits(&r->c[c], &f->c[c]) &&
                                  memcmp(&r->appl[c], &f->appl[c], sizeof(double)) == 0,
                              "pose %d, contact %d differs from a new builder's", i, c);
            expect_values_of_pose(r, &as[i], &b);
            for (int s = 0; s < r->out.set_count && !reduce; ++s)
                origins[i] |= 1u << r->sets[s].origin;
            free(r);
            free(f);
            pp_peg_builder_destroy(fresh);
        }
    }
    ck_assert_uint_lt(shared->vf_clock, 1000u); /* it did wrap */
    /* the sequence did change the structure: vertex–vertex configurations alone at the
     * coincident corners, vertex–edge and edge–vertex ones (A's corners on B's top edges,
     * B's on A's bottom edges) once shifted */
    ck_assert_uint_eq(origins[0], 1u << PP_PEG_VERTEX_VERTEX);
    ck_assert_uint_eq(origins[5], origins[0]);
    ck_assert(origins[2] & (1u << PP_PEG_VERTEX_EDGE));
    ck_assert(origins[2] & (1u << PP_PEG_EDGE_VERTEX));
    pp_peg_builder_destroy(shared);
    for (int i = 0; i < 6; ++i) release(&as[i]);
    release(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_constraints");
    TCase *tc = tcase_create("peg_constraints");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_plane);
    tcase_add_test(tc, test_face_on_face);
    tcase_add_test(tc, test_edge_edge);
    tcase_add_test(tc, test_vertex_edge);
    tcase_add_test(tc, test_edge_vertex_flip);
    tcase_add_test(tc, test_vertex_set_made_once);
    tcase_add_test(tc, test_vertex_vertex);
    tcase_add_test(tc, test_vertex_vertex_x);
    tcase_add_test(tc, test_vertex_vertex_crossing);
    tcase_add_test(tc, test_coplanar_faces);
    tcase_add_test(tc, test_coplanar_ridge_crossed_by_edge);
    tcase_add_test(tc, test_deep_vertex_has_a_set);
    tcase_add_test(tc, test_flat_edge_separated_not_blocked);
    tcase_add_test(tc, test_edge_gap_not_a_crossing);
    tcase_add_loop_test(tc, test_slack_rows, 0, (int)(sizeof k_slack / sizeof k_slack[0]));
    tcase_add_test(tc, test_capacity);
    tcase_add_test(tc, test_primary_stable_under_round_off);
    tcase_add_test(tc, test_builder_memo_not_stale);
    tcase_add_loop_test(tc, test_random_pairs, 0, 20);
    tcase_add_loop_test(tc, test_reduction_is_implied, 0, (int)(sizeof k_reduce / sizeof k_reduce[0]));
    tcase_add_loop_test(tc, test_fast_pair_bounded, 0, (int)(sizeof k_fast / sizeof k_fast[0]));
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
