/*
 * The shortcuts of PEG's construction against the scans they replace (docs/performance.md
 * "PEG's construction on the falling convex ball"): each must give the very answers of the
 * plain computation, bit for bit.
 *  - the classification's features near the other polytope's box (peg_geometry.c): steps 1-4
 *    of pp_peg_classify against the plain loops over every vertex and edge pair, written out
 *    here from pegplus/peg.h's definitions with the library's own distance functions, on
 *    random hull pairs from 4 mm apart to overlapping, near the origin and 1 km from it, and on
 *    boxes face on face exactly eps apart (the boundary of every test);
 *  - the edges' t-vectors once a pair (pp_peg_edge_frames): pp_peg_applicability_ee_framed
 *    against pp_peg_applicability_ee over every edge pair, value and normal;
 *  - the vertex–face test through the faces' spheres (pp_peg_feasibility_vf_near) against
 *    pp_peg_feasibility_vf over every vertex and face of random hull pairs: the same result
 *    within eps, the same decision beyond it;
 *  - reduce_pair's row ids through a list sorted by p_a[0] (pp_peg_row_ids) against the scan
 *    over the earlier representatives with pp_peg_same_row, on contacts perturbed by 0.5 to 2
 *    times the row tolerance in each coordinate, near the origin and 1 km from it.
 */
#include "pegplus/geometry.h"
#include "pegplus/peg.h"

#include "../src/geometry_internal.h"
#include "../src/peg_internal.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* A deterministic generator (the tests must not depend on the C library's rand). */
static unsigned long long rng_state;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

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
    ck_assert(p.v && p.n && p.d);
    pp_polytope_pose_view(poly, x, R ? R : I3, p.v, p.n, p.d, &p.view);
    return p;
}

static void release(posed *p)
{
    pp_polytope_destroy(p->poly);
    free(p->v);
    free(p->n);
    free(p->d);
}

/* A hull of `count` random points on a sphere of radius r with radial noise. */
static pp_polytope *random_hull(int count, double r)
{
    double pts[3 * 40];
    ck_assert_int_le(count, 40);
    for (int i = 0; i < count; ++i) {
        double z = 2.0 * uniform() - 1.0, phi = 6.283185307179586 * uniform();
        double s = sqrt(1.0 - z * z), rr = r * (0.8 + 0.4 * uniform());
        pts[3 * i] = rr * s * cos(phi);
        pts[3 * i + 1] = rr * s * sin(phi);
        pts[3 * i + 2] = rr * z;
    }
    pp_polytope *poly = NULL;
    ck_assert_int_eq(pp_polytope_from_points(pts, count, &poly), PP_OK);
    return poly;
}

/* ---- The classification, plainly ---------------------------------------------------------- */

/* peg_geometry.c's segment_reach and far_apart (the library's cheap rejections, which the
 * plain loops also run: they decide as the library does) */
static double reach(const double *t, const double *h, double mid[3])
{
    double d[3];
    pp_v3_sub(d, h, t);
    pp_v3_axpy(mid, t, 0.5, d);
    return 0.5 * pp_v3_norm(d);
}

static int far(const double a[3], double ra, const double b[3], double rb, double eps)
{
    double d[3];
    pp_v3_sub(d, a, b);
    double r = ra + rb + eps;
    return pp_v3_dot(d, d) > r * r;
}

static const double *vx(const pp_polytope_view *p, int v) { return p->vertices + 3 * v; }

static void push(pp_peg_config *out, int *n, pp_peg_config_kind kind, int fa, int fb,
                 const double pa[3], const double pb[3], double distance, double appl)
{
    pp_peg_config c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.feature_a = fa;
    c.feature_b = fb;
    pp_v3_copy(c.p_a, pa);
    pp_v3_copy(c.p_b, pb);
    c.distance = distance;
    c.applicability = appl;
    out[(*n)++] = c;
}

/* Vertex v of p within eps of edge e of q, away from both ends (pegplus/peg.h step 2). */
static int near_edge_interior(const pp_polytope_view *p, int v, const pp_polytope_view *q, int e,
                              double eps, double c[3], double *d)
{
    double mid[3];
    const double *t = vx(q, q->edges[4 * e]), *h = vx(q, q->edges[4 * e + 1]);
    const double r = reach(t, h, mid);
    if (far(vx(p, v), 0.0, mid, r, eps)) return 0;
    *d = pp_peg_point_segment(vx(p, v), t, h, c);
    double w[3];
    if (*d > eps) return 0;
    pp_v3_sub(w, vx(p, v), t);
    if (pp_v3_norm(w) <= eps) return 0;
    pp_v3_sub(w, vx(p, v), h);
    return pp_v3_norm(w) > eps;
}

static int endpoint_near(const pp_polytope_view *p, int ep, const pp_polytope_view *q, int eq,
                         double eps)
{
    for (int k = 0; k < 2; ++k)
        if (pp_peg_point_segment(vx(p, p->edges[4 * ep + k]), vx(q, q->edges[4 * eq]),
                                 vx(q, q->edges[4 * eq + 1]), NULL) <= eps)
            return 1;
    return 0;
}

/* Steps 1-4 over every feature pair. Edge pairs whose gap is below -delta (feasible there only
 * if one closest point is inside the other body, which the library tests with its own
 * point_depth) are listed in `open` (a, b pairs) and left to the comparison to skip. */
static int plain_classify(const pp_polytope_view *a, const pp_polytope_view *b, double eps,
                          const pp_peg_params *prm, pp_peg_config *out, int *open, int *n_open)
{
    int n = 0;
    unsigned char used_a[64] = {0}, used_b[64] = {0};
    ck_assert(a->vertex_count <= 64 && b->vertex_count <= 64);
    *n_open = 0;
    for (int i = 0; i < a->vertex_count; ++i)
        for (int j = 0; j < b->vertex_count; ++j) {
            double r[3];
            pp_v3_sub(r, vx(b, j), vx(a, i));
            const double d = pp_v3_norm(r);
            if (d > eps) continue;
            push(out, &n, PP_PEG_VERTEX_VERTEX, i, j, vx(a, i), vx(b, j), d, 0.0);
            used_a[i] = used_b[j] = 1;
        }
    for (int i = 0; i < a->vertex_count; ++i)
        for (int e = 0; e < b->edge_count; ++e) {
            double c[3], d;
            if (!near_edge_interior(a, i, b, e, eps, c, &d)) continue;
            push(out, &n, PP_PEG_VERTEX_EDGE, i, e, vx(a, i), c, d, 0.0);
            used_a[i] = 1;
        }
    for (int j = 0; j < b->vertex_count; ++j)
        for (int e = 0; e < a->edge_count; ++e) {
            double c[3], d;
            if (!near_edge_interior(b, j, a, e, eps, c, &d)) continue;
            push(out, &n, PP_PEG_EDGE_VERTEX, e, j, c, vx(b, j), d, 0.0);
            used_b[j] = 1;
        }
    for (int i = 0; i < a->edge_count; ++i)
        for (int j = 0; j < b->edge_count; ++j) {
            double ma[3], mb[3], pa[3], pb[3], d, nrm[3], gap[3];
            const double ra = reach(vx(a, a->edges[4 * i]), vx(a, a->edges[4 * i + 1]), ma);
            const double rb = reach(vx(b, b->edges[4 * j]), vx(b, b->edges[4 * j + 1]), mb);
            if (far(ma, ra, mb, rb, eps)) continue;
            if (!pp_peg_feasibility_ee(a, i, b, j, eps, pa, pb, &d)) continue;
            if (endpoint_near(a, i, b, j, eps) || endpoint_near(b, j, a, i, eps)) continue;
            const double appl = pp_peg_applicability_ee(a, i, b, j, nrm);
            if (!(appl > prm->appl_ee)) continue;
            pp_v3_sub(gap, pb, pa);
            if (pp_v3_dot(nrm, gap) >= -prm->delta) {
                push(out, &n, PP_PEG_EDGE_EDGE, i, j, pa, pb, d, appl);
            } else {
                open[2 * *n_open] = i;
                open[2 * *n_open + 1] = j;
                ++*n_open;
            }
        }
    for (int side = 0; side < 2; ++side) {
        const pp_polytope_view *p = side == 0 ? a : b, *q = side == 0 ? b : a;
        const unsigned char *used = side == 0 ? used_a : used_b;
        for (int v = 0; v < p->vertex_count; ++v) {
            double appl, psi, proj[3];
            if (used[v]) continue;
            const int f = pp_peg_best_vertex_face(p, v, q, eps, prm, &appl, &psi);
            if (f < 0) continue;
            pp_v3_axpy(proj, vx(p, v), -psi, q->face_normals + 3 * f);
            if (side == 0) push(out, &n, PP_PEG_VERTEX_FACE, v, f, vx(p, v), proj, psi, appl);
            else push(out, &n, PP_PEG_FACE_VERTEX, f, v, proj, vx(p, v), psi, appl);
        }
    }
    return n;
}

static int is_open(const pp_peg_config *c, const int *open, int n_open)
{
    if (c->kind != PP_PEG_EDGE_EDGE) return 0;
    for (int k = 0; k < n_open; ++k)
        if (open[2 * k] == c->feature_a && open[2 * k + 1] == c->feature_b) return 1;
    return 0;
}

static int same_config(const pp_peg_config *x, const pp_peg_config *y)
{
    return x->kind == y->kind && x->feature_a == y->feature_a && x->feature_b == y->feature_b &&
           memcmp(x->p_a, y->p_a, sizeof x->p_a) == 0 &&
           memcmp(x->p_b, y->p_b, sizeof x->p_b) == 0 &&
           memcmp(&x->distance, &y->distance, sizeof x->distance) == 0 &&
           memcmp(&x->applicability, &y->applicability, sizeof x->applicability) == 0;
}

/* pp_peg_classify on (a, b) equals the plain loops; returns the configurations compared. */
static int check_classify(const pp_polytope_view *a, const pp_polytope_view *b, double eps)
{
    enum { CAP = 4096 };
    static pp_peg_config lib[CAP], plain[CAP];
    static int open[2 * CAP];
    const pp_peg_params prm = pp_peg_params_default();
    int count = 0, needed = 0, n_open = 0;
    ck_assert_int_eq(pp_peg_classify(NULL, a, b, eps, &prm, lib, CAP, &count, &needed), PP_OK);
    const int n = plain_classify(a, b, eps, &prm, plain, open, &n_open);
    int i = 0, j = 0, compared = 0;
    while (i < count || j < n) {
        if (i < count && is_open(&lib[i], open, n_open)) {
            ++i;
            continue;
        }
        ck_assert_msg(i < count && j < n, "configuration lists differ in length (%d, %d)", count,
                      n);
        ck_assert_msg(same_config(&lib[i], &plain[j]),
                      "configuration %d: library kind %d (%d, %d), plain kind %d (%d, %d)", i,
                      lib[i].kind, lib[i].feature_a, lib[i].feature_b, plain[j].kind,
                      plain[j].feature_a, plain[j].feature_b);
        ++i;
        ++j;
        ++compared;
    }
    return compared;
}

/* Random hull pairs, B moved along a random direction u until the gap of their supports
 * along u is g (from 4 mm apart to 3 mm overlapping), optionally 1 km from the origin. */
START_TEST(test_classify_near_features_is_the_scan)
{
    rng_state = 0x1234567ULL + (unsigned long long)_i;
    const double eps = 0.01;
    int total = 0;
    for (int trial = 0; trial < 200; ++trial) {
        pp_polytope *pa = random_hull(10 + (int)(20 * uniform()), 0.05 + 0.1 * uniform());
        pp_polytope *pb = random_hull(10 + (int)(20 * uniform()), 0.05 + 0.1 * uniform());
        double u[3] = {uniform() - 0.5, uniform() - 0.5, uniform() - 0.5};
        const double ul = pp_v3_norm(u);
        pp_v3_scale(u, 1.0 / ul, u);
        double top = -HUGE_VAL, low = HUGE_VAL;
        for (int v = 0; v < pa->vertex_count; ++v) top = fmax(top, pp_v3_dot(u, pa->vertices + 3 * v));
        for (int v = 0; v < pb->vertex_count; ++v) low = fmin(low, pp_v3_dot(u, pb->vertices + 3 * v));
        const double g = -0.003 + 0.007 * uniform();
        const double far_off = (trial % 2) ? 1000.0 : 0.0;
        double xa[3] = {far_off, -0.5 * far_off, 0.25 * far_off}, xb[3];
        pp_v3_axpy(xb, xa, top - low + g, u);
        posed a = pose(pa, xa, I3), b = pose(pb, xb, I3);
        total += check_classify(&a.view, &b.view, eps);
        release(&a);
        release(&b);
    }
    ck_assert_int_gt(total, 100); /* the pairs are near: configurations were compared */
}
END_TEST

/* Two boxes face on face eps apart, and by eps less 1e-15 ... 1e-9 of it (corner pairs at
 * distance eps to rounding: each test at its boundary), near the origin and 1 km from it. */
START_TEST(test_classify_boxes_eps_apart)
{
    const double eps = 0.01, l[3] = {0.2, 0.2, 0.2};
    const double less[] = {0.0, 1e-15, 1e-14, 1e-13, 1e-12, 1e-9};
    int total = 0;
    for (int far_off = 0; far_off < 2; ++far_off)
        for (int k = 0; k < (int)(sizeof less / sizeof less[0]); ++k) {
            const double o = far_off ? 1000.0 : 0.0;
            pp_polytope *pa = NULL, *pb = NULL;
            ck_assert_int_eq(pp_polytope_box(l, &pa), PP_OK);
            ck_assert_int_eq(pp_polytope_box(l, &pb), PP_OK);
            const double xa[3] = {o, o, o}, xb[3] = {o, o, o + 0.2 + eps - less[k]};
            posed a = pose(pa, xa, I3), b = pose(pb, xb, I3);
            total += check_classify(&a.view, &b.view, eps);
            release(&a);
            release(&b);
        }
    ck_assert_int_gt(total, 0);
}
END_TEST

/* ---- Edge frames -------------------------------------------------------------------------- */

START_TEST(test_applicability_from_frames)
{
    rng_state = 99;
    for (int trial = 0; trial < 10; ++trial) {
        pp_polytope *pa = random_hull(20, 0.1), *pb = random_hull(20, 0.1);
        const double shift[3] = {uniform() - 0.5, uniform() - 0.5, uniform() - 0.5};
        const double angle = 3.0 * uniform(), c = cos(angle), s = sin(angle);
        /* B turned about the x axis: frames of posed (rotated) normals */
        const double R[9] = {1, 0, 0, 0, c, -s, 0, s, c};
        posed a = pose(pa, shift, I3), b = pose(pb, shift, R);
        double *fa = malloc(sizeof(double) * 9 * (size_t)a.view.edge_count);
        double *fb = malloc(sizeof(double) * 9 * (size_t)b.view.edge_count);
        ck_assert(fa && fb);
        pp_peg_edge_frames(&a.view, fa);
        pp_peg_edge_frames(&b.view, fb);
        for (int i = 0; i < a.view.edge_count; ++i)
            for (int j = 0; j < b.view.edge_count; ++j) {
                double n1[3], n2[3];
                const double x = pp_peg_applicability_ee(&a.view, i, &b.view, j, n1);
                const double y = pp_peg_applicability_ee_framed(&a.view, i, fa, &b.view, j, fb, n2);
                ck_assert(memcmp(&x, &y, sizeof x) == 0);
                ck_assert(memcmp(n1, n2, sizeof n1) == 0);
            }
        free(fa);
        free(fb);
        release(&a);
        release(&b);
    }
}
END_TEST

/* ---- Vertex–face tests through the faces' spheres ------------------------------------------ */

/* Every vertex of each hull against every face of the other (random pairs as above, 1 km from
 * the origin every other trial): where the plain test finds the face within eps the results
 * are the same bit for bit; elsewhere both are beyond eps and not feasible, with the same
 * psi. */
START_TEST(test_vertex_face_near_is_the_plain_test)
{
    rng_state = 777 + (unsigned long long)_i;
    const double eps = 0.01;
    const pp_peg_params prm = pp_peg_params_default();
    int within = 0, skipped = 0;
    for (int trial = 0; trial < 100; ++trial) {
        pp_polytope *pa = random_hull(10 + (int)(20 * uniform()), 0.05 + 0.1 * uniform());
        pp_polytope *pb = random_hull(10 + (int)(20 * uniform()), 0.05 + 0.1 * uniform());
        double u[3] = {uniform() - 0.5, uniform() - 0.5, uniform() - 0.5};
        pp_v3_scale(u, 1.0 / pp_v3_norm(u), u);
        double top = -HUGE_VAL, low = HUGE_VAL;
        for (int v = 0; v < pa->vertex_count; ++v) top = fmax(top, pp_v3_dot(u, pa->vertices + 3 * v));
        for (int v = 0; v < pb->vertex_count; ++v) low = fmin(low, pp_v3_dot(u, pb->vertices + 3 * v));
        const double o = (trial % 2) ? 1000.0 : 0.0;
        double xa[3] = {o, o, -o}, xb[3];
        pp_v3_axpy(xb, xa, top - low - 0.003 + 0.007 * uniform(), u);
        posed a = pose(pa, xa, I3), b = pose(pb, xb, I3);
        for (int side = 0; side < 2; ++side) {
            const pp_polytope_view *p = side ? &b.view : &a.view, *q = side ? &a.view : &b.view;
            double *spheres = malloc(sizeof(double) * 4 * (size_t)q->face_count);
            ck_assert(spheres);
            pp_peg_face_spheres(q, spheres);
            for (int v = 0; v < p->vertex_count; ++v)
                for (int f = 0; f < q->face_count; ++f) {
                    const pp_peg_vf_test x = pp_peg_feasibility_vf(p, v, q, f, eps, &prm);
                    const pp_peg_vf_test y =
                        pp_peg_feasibility_vf_near(p, v, q, f, eps, &prm, spheres + 4 * f);
                    ck_assert(memcmp(&x.psi, &y.psi, sizeof x.psi) == 0);
                    ck_assert_int_eq(x.feasible, y.feasible);
                    ck_assert_int_eq(x.inside, y.inside);
                    ck_assert_int_eq(x.distance <= eps, y.distance <= eps);
                    if (x.distance <= eps) {
                        ck_assert(memcmp(&x.distance, &y.distance, sizeof x.distance) == 0);
                        ck_assert(memcmp(&x.outside, &y.outside, sizeof x.outside) == 0);
                        ++within;
                    }
                    skipped += y.distance == HUGE_VAL;
                }
            free(spheres);
        }
        release(&a);
        release(&b);
    }
    ck_assert_int_gt(within, 30);   /* faces within eps were compared */
    ck_assert_int_gt(skipped, 1000); /* and the sphere decided many others */
}
END_TEST

/* ---- Row ids ------------------------------------------------------------------------------ */

/* Contacts of a few distinct rows, each repeated with every coordinate of n, psi and p_a
 * moved by 0, +-0.5, +-0.99, +-1.01 or +-2 times the row tolerance (of its scale), in a
 * shuffled order: chains of nearly equal rows whose first representative depends on the
 * order, as the scan takes it. */
START_TEST(test_row_ids_are_the_scan)
{
    rng_state = 4242 + (unsigned long long)_i;
    const double tol = 1e-12, steps[] = {0.0, 0.5, -0.5, 0.99, -0.99, 1.01, -1.01, 2.0, -2.0};
    enum { N = 600 };
    static pp_contact c[N];
    int id[N], scratch[N], scan[N];
    const double o = (_i % 2) ? 1000.0 : 0.0;
    int duplicates = 0;
    for (int i = 0; i < N; ++i) {
        pp_contact *k = &c[i];
        memset(k, 0, sizeof *k);
        const int row = (int)(12 * uniform());
        /* the row's base values: a few normals, gaps and points */
        const double base_n[3] = {row % 3 == 0, row % 3 == 1, row % 3 == 2};
        for (int d = 0; d < 3; ++d) {
            k->n[d] = base_n[d];
            k->p_a[d] = o + 0.01 * (row % 4) + 0.003 * d;
        }
        k->psi = 0.001 * (row % 5);
        const double scale = 1.0 + fabs(o) + 0.05;
        for (int d = 0; d < 7; ++d) {
            const double m = steps[(int)(9 * uniform())] * tol * (uniform() < 0.5 ? 1.0 : 0.0);
            if (d < 3) k->n[d] += m;
            else if (d == 3) k->psi += m * scale;
            else k->p_a[d - 4] += m * scale;
        }
    }
    pp_peg_row_ids(c, N, id, scratch);
    for (int i = 0; i < N; ++i) {
        scan[i] = i;
        for (int j = 0; j < i; ++j)
            if (scan[j] == j && pp_peg_same_row(&c[j], &c[i])) {
                scan[i] = j;
                break;
            }
        ck_assert_int_eq(id[i], scan[i]);
        duplicates += scan[i] != i;
    }
    ck_assert_int_gt(duplicates, N / 10); /* rows were merged */
    ck_assert_int_lt(duplicates, N - 12); /* and some kept apart by the tolerance */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_construction");
    TCase *tc = tcase_create("peg_construction");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_classify_near_features_is_the_scan, 0, 4);
    tcase_add_test(tc, test_classify_boxes_eps_apart);
    tcase_add_test(tc, test_applicability_from_frames);
    tcase_add_loop_test(tc, test_vertex_face_near_is_the_plain_test, 0, 2);
    tcase_add_loop_test(tc, test_row_ids_are_the_scan, 0, 4);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
