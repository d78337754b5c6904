/*
 * Unit tests of the PEG time step (pegplus/peg.h pp_peg_solve; PEG Sec. 5, Eqs 39–49):
 *  - with U sets only it is the standard Stewart–Trinkle step (same LCP, same answer);
 *  - a vertex passing over a convex edge is not blocked (the I set), where the two half-spaces
 *    of the standard model trap it;
 *  - a vertex resting on a face near a convex edge is supported along that face's normal;
 *  - the end gap max_s psi_s >= 0 (linearised, Eq 6) and complementarity hold per set;
 *  - the LCP's slack rows and blocks against hand-derived values (Eqs 43–45);
 *  - friction stays inside the cone; momentum is kept between two dynamic bodies;
 *  - the same-frame rule inside the solve; warm start;
 *  - islands: the island-wise solution solves the whole LCP and equals its one-piece solve;
 *    the basis is the whole LCP's; a failed island leaves the others solved;
 *  - Lemke failure returns a status with the free velocity and no NaN; bad input rejected;
 *  - a large island's matrix (by columns) is the whole LCP's (same impulses bit for bit);
 *    the solve by columns gives the dense solve's answer, which solves the LCP; a large
 *    island's step fits in an address space that its dense matrix would overflow.
 */
#include "pegplus/features.h"
#include "pegplus/geometry.h"
#include "pegplus/mlcp.h"
#include "pegplus/peg.h"

#include "../src/peg_lcp_internal.h" /* pp_peg_csc_min_n: the by-columns threshold */

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define G 9.81
#define H 0.01
#define EPS 0.02
#define PI 3.14159265358979323846
#define TOL_VELOCITY 1e-11  /* m/s */
#define TOL_IMPULSE 1e-12   /* N s */
#define TOL_GAP 1e-10       /* m/s: linearised end gap over h */
#define MAX_SETS 64
#define MAX_CONTACTS 256
#define K_DIRS 8

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

static void mat_vec(const double R[9], const double a[3], double out[3])
{
    for (int r = 0; r < 3; ++r) out[r] = R[3 * r] * a[0] + R[3 * r + 1] * a[1] + R[3 * r + 2] * a[2];
}

static void cross(const double a[3], const double b[3], double out[3])
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
           z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* inverse of a symmetric positive definite 3x3 by cofactors */
static void inverse3(const double A[9], double out[9])
{
    double c[9] = {A[4] * A[8] - A[5] * A[7], A[2] * A[7] - A[1] * A[8], A[1] * A[5] - A[2] * A[4],
                   A[5] * A[6] - A[3] * A[8], A[0] * A[8] - A[2] * A[6], A[2] * A[3] - A[0] * A[5],
                   A[3] * A[7] - A[4] * A[6], A[1] * A[6] - A[0] * A[7], A[0] * A[4] - A[1] * A[3]};
    double det = A[0] * c[0] + A[1] * c[3] + A[2] * c[6];
    for (int i = 0; i < 9; ++i) out[i] = c[i] / det;
}

/* A posed polytope and its rigid body (uniform density 1000, centre of mass at the origin
 * of the body frame for the symmetric shapes used here). */
typedef struct thing {
    pp_polytope *poly;
    double v[300], n[300], d[100];
    pp_polytope_view view;
    double x[3], R[9], mass;
    pp_mlcp_body body;
} thing;

static void thing_init(thing *t, pp_polytope *poly, const double x[3], const double R[9],
                       const double v[3], const double w[3])
{
    memset(t, 0, sizeof *t);
    t->poly = poly;
    memcpy(t->x, x, sizeof t->x);
    memcpy(t->R, R ? R : I3, sizeof t->R);
    pp_polytope_pose_view(poly, t->x, t->R, t->v, t->n, t->d, &t->view);
    double com[3], Ib[9], Iw[9], tmp[9];
    ck_assert_int_eq(pp_polytope_mass_properties(poly, 1000.0, &t->mass, com, Ib), PP_OK);
    ck_assert(fabs(com[0]) + fabs(com[1]) + fabs(com[2]) < 1e-12);
    /* I_world = R I_body R^T */
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            tmp[3 * i + j] = 0.0;
            for (int k = 0; k < 3; ++k) tmp[3 * i + j] += t->R[3 * i + k] * Ib[3 * k + j];
        }
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            Iw[3 * i + j] = 0.0;
            for (int k = 0; k < 3; ++k) Iw[3 * i + j] += tmp[3 * i + k] * t->R[3 * j + k];
        }
    t->body.inv_mass = 1.0 / t->mass;
    inverse3(Iw, t->body.inv_inertia);
    memcpy(t->body.x, t->x, sizeof t->body.x);
    memcpy(t->body.v, v, sizeof t->body.v);
    memcpy(t->body.w, w, sizeof t->body.w);
}

static pp_polytope *make_box(double lx, double ly, double lz)
{
    pp_polytope *p;
    const double l[3] = {lx, ly, lz};
    ck_assert_int_eq(pp_polytope_box(l, &p), PP_OK);
    return p;
}

static pp_polytope *make_octahedron(double r)
{
    const double pts[18] = {r, 0, 0, -r, 0, 0, 0, r, 0, 0, -r, 0, 0, 0, r, 0, 0, -r};
    pp_polytope *p;
    ck_assert_int_eq(pp_polytope_from_points(pts, 6, &p), PP_OK);
    return p;
}

/* The PEG sets of A (body 0, or -1) against B (body 1, or -1), with mu. */
typedef struct peg_case {
    pp_peg_set sets[MAX_SETS];
    pp_contact c[MAX_CONTACTS];
    pp_peg_output out;
} peg_case;

static void peg_case_build(peg_case *pc, const thing *a, int body_a, const thing *b, int body_b,
                           double mu)
{
    pc->out = (pp_peg_output){pc->sets, MAX_SETS, 0, 0, pc->c, NULL, MAX_CONTACTS, 0, 0};
    ck_assert_int_eq(pp_peg_constraints_polytopes(NULL, &a->view, &b->view, EPS, NULL, &pc->out),
                     PP_OK);
    for (int i = 0; i < pc->out.contact_count; ++i) {
        pc->c[i].body_a = body_a;
        pc->c[i].body_b = body_b;
        pc->c[i].mu = mu;
    }
}

typedef struct solved {
    double pn[MAX_CONTACTS], beta[MAX_CONTACTS * K_DIRS], sigma[MAX_CONTACTS];
    double f[3 * MAX_CONTACTS], nu[12], slack[MAX_CONTACTS];
    pp_peg_stats stats;
    pp_status status;
} solved;

static pp_peg_workspace *g_ws;
static double g_compliance; /* of every peg_solve */
static pp_mlcp_workspace *g_mlcp;

static void setup(void)
{
    pp_set_log_hook(pp_log_discard, NULL);
    ck_assert_int_eq(pp_peg_workspace_create(2, MAX_CONTACTS, MAX_SETS, K_DIRS, &g_ws), PP_OK);
    ck_assert_int_eq(pp_mlcp_workspace_create(2, MAX_CONTACTS, K_DIRS, &g_mlcp), PP_OK);
}

static void teardown(void)
{
    pp_peg_workspace_destroy(g_ws);
    pp_mlcp_workspace_destroy(g_mlcp);
    pp_set_log_hook(NULL, NULL);
}

static solved *peg_solve(const pp_mlcp_body *bodies, int nb, const peg_case *pc,
                         const pp_lcp_options *options, unsigned char *basis)
{
    solved *s = calloc(1, sizeof *s);
    pp_peg_problem p = {.base = {.h = H, .body_count = nb, .bodies = bodies,
                                 .contact_count = pc->out.contact_count, .contacts = pc->c,
                                 .friction_directions = K_DIRS, .compliance = g_compliance},
                        .set_count = pc->out.set_count, .sets = pc->sets};
    pp_mlcp_solution sol = {s->pn, s->beta, s->sigma, s->f, s->nu, NULL};
    s->status = pp_peg_solve(g_ws, &p, options, basis, &sol, s->slack, &s->stats);
    for (int i = 0; i < 6 * nb; ++i) ck_assert(isfinite(s->nu[i]));
    return s;
}

/* Velocity of A's material point p (body state nu = (v, w), centre x). */
static void point_velocity(const double *nu, const double x[3], const double p[3], double out[3])
{
    double r[3] = {p[0] - x[0], p[1] - x[1], p[2] - x[2]}, wr[3];
    cross(nu + 3, r, wr);
    for (int i = 0; i < 3; ++i) out[i] = nu[i] + wr[i];
}

/* d psi/dt of contact c with A dynamic (state nu_a, centre xa) against a static B:
 * psi = n . (p_b - p_a), p_b fixed, p_a moving with A: rate = -n . v_A(p_a). */
static double gap_rate_static_b(const pp_contact *c, const double *nu_a, const double xa[3])
{
    double va[3];
    point_velocity(nu_a, xa, c->p_a, va);
    return -dot(c->n, va);
}

/* The octahedron tip (r = 0.3, turned `deg` about y) at `tip`, moving with (v, w). */
static void tip_thing(thing *t, double deg, const double tip[3], const double v[3],
                      const double w[3])
{
    const double ey[3] = {0, 1, 0}, local_tip[3] = {0, 0, -0.3};
    double R[9], rt[3], x[3];
    rot_axis(ey, deg * PI / 180, R);
    mat_vec(R, local_tip, rt);
    for (int k = 0; k < 3; ++k) x[k] = tip[k] - rt[k];
    thing_init(t, make_octahedron(0.3), x, R, v, w);
}

static void static_cube(thing *t)
{
    const double zero[3] = {0, 0, 0};
    thing_init(t, make_box(1, 1, 1), zero, NULL, zero, zero);
}

/* ---- Tests -------------------------------------------------------------------------------- */

/*
 * A 0.4 cube resting on the unit cube (psi = 0), sliding (v* = (0.3, -0.1, -g h), spinning
 * w*_z = 0.5), mu = 0.4. PEG gives four U sets; the standard model (pp_features_polytopes)
 * the same four vertex–face contacts. With only U sets the PEG LCP is the standard one entry
 * for entry, and so are the impulses and the velocity; also with the same compliance 1e-10
 * in both (loop index 1).
 */
START_TEST(test_u_only_equals_standard)
{
    g_compliance = _i == 0 ? 0.0 : 1e-10; /* both models take the same compliance */
    const double xa[3] = {0.05, -0.02, 0.7}, v[3] = {0.3, -0.1, -G * H}, w[3] = {0, 0, 0.5};
    thing a, b;
    thing_init(&a, make_box(0.4, 0.4, 0.4), xa, NULL, v, w);
    static_cube(&b);
    peg_case pc;
    peg_case_build(&pc, &a, 0, &b, -1, 0.4);
    ck_assert_int_eq(pc.out.set_count, 4);
    for (int j = 0; j < 4; ++j) ck_assert_int_eq(pc.sets[j].kind, PP_PEG_SET_U);

    pp_contact sc[16];
    int count = 0, needed = 0;
    ck_assert_int_eq(pp_features_polytopes(&a.view, &b.view, EPS, PP_APPL_VF_DEFAULT, sc, 16,
                                           &count, &needed), PP_OK);
    ck_assert_int_eq(count, 4);
    for (int i = 0; i < 4; ++i) {
        sc[i].body_a = 0, sc[i].body_b = -1, sc[i].mu = 0.4;
        ck_assert_mem_eq(sc[i].p_a, pc.c[i].p_a, sizeof sc[i].p_a);
        ck_assert_mem_eq(sc[i].n, pc.c[i].n, sizeof sc[i].n);
    }
    solved *s = peg_solve(&a.body, 1, &pc, NULL, NULL);
    ck_assert_int_eq(s->status, PP_OK);
    ck_assert_int_eq(s->stats.u_sets, 4);
    ck_assert_int_eq(s->stats.slacks, 0);

    double pn[16], beta[16 * K_DIRS], sigma[16], f[48], nu[6];
    pp_mlcp_problem mp = {.h = H, .body_count = 1, .bodies = &a.body, .contact_count = 4,
                          .contacts = sc, .friction_directions = K_DIRS,
                          .compliance = g_compliance};
    pp_mlcp_solution ms = {pn, beta, sigma, f, nu, NULL};
    pp_mlcp_stats mst;
    ck_assert_int_eq(pp_mlcp_solve(g_mlcp, &mp, NULL, NULL, &ms, &mst), PP_OK);

    int n1, n2;
    const double *M1, *q1, *M2, *q2;
    pp_peg_last_lcp(g_ws, &n1, &M1, &q1);
    pp_mlcp_last_lcp(g_mlcp, &n2, &M2, &q2);
    ck_assert_int_eq(n1, n2);
    ck_assert_int_eq(n1, s->stats.lcp_size);
    for (int i = 0; i < n1; ++i) {
        ck_assert_double_eq_tol(q1[i], q2[i], 1e-14);
        for (int j = 0; j < n1; ++j)
            ck_assert_double_eq_tol(M1[i + j * n1], M2[i + j * n2], 1e-14);
    }
    for (int r = 0; r < 6; ++r) ck_assert_double_eq_tol(s->nu[r], nu[r], TOL_VELOCITY);
    for (int i = 0; i < 4; ++i) {
        ck_assert_double_eq_tol(s->pn[i], pn[i], TOL_IMPULSE);
        for (int r = 0; r < 3; ++r) ck_assert_double_eq_tol(s->f[3 * i + r], f[3 * i + r], TOL_IMPULSE);
    }
    free(s);
    g_compliance = 0.0;
    pp_polytope_destroy(a.poly);
    pp_polytope_destroy(b.poly);
}
END_TEST

/*
 * A vertex passing over a convex edge. The octahedron's tip is at (0.505, 0, 0.502): 2 mm
 * above the plane of B's top face and 5 mm outside the plane of its +x side face, moving at
 * v* = (-1, 0, -g h), mu = 0, h = 0.01: in one step it moves 1 cm toward -x, over the top
 * face (psi_top stays 0.002 - g h^2 > 0).
 * Standard model with the two half-spaces U(top), U(side): the side row psi_side/h +
 * d psi_side/dt >= 0 clips the tip's x velocity to -psi_side/h = -0.5 m/s (the trap).
 * PEG: the vertex–edge I set max(psi_top, psi_side) >= 0 is satisfied by the top gap, no
 * impulse acts, the velocity is the free one: v_x = -1.
 */
START_TEST(test_corner_passage)
{
    const double tip[3] = {0.505, 0, 0.502}, v[3] = {-1, 0, -G * H}, w[3] = {0, 0, 0};
    thing a, b;
    tip_thing(&a, 10, tip, v, w);
    static_cube(&b);
    peg_case pc;
    peg_case_build(&pc, &a, 0, &b, -1, 0.0);
    ck_assert_int_ge(pc.out.set_count, 1);
    ck_assert_int_eq(pc.sets[0].kind, PP_PEG_SET_I);
    ck_assert_int_eq(pc.sets[0].count, 2);

    solved *s = peg_solve(&a.body, 1, &pc, NULL, NULL);
    ck_assert_int_eq(s->status, PP_OK);
    for (int i = 0; i < pc.out.contact_count; ++i) ck_assert_double_eq(s->pn[i], 0.0);
    for (int r = 0; r < 3; ++r) {
        ck_assert_double_eq_tol(s->nu[r], v[r], TOL_VELOCITY);
        ck_assert_double_eq_tol(s->nu[3 + r], 0.0, TOL_VELOCITY);
    }

    /* the standard model on the I set's two contacts as half-spaces */
    const pp_contact *top = &pc.c[pc.sets[0].first], *side = top + 1;
    if (top->n[2] > -0.5) top = side, side = &pc.c[pc.sets[0].first];
    ck_assert_double_eq_tol(top->psi, 0.002, 1e-12);
    ck_assert_double_eq_tol(side->psi, 0.005, 1e-12);
    pp_contact two[2] = {*top, *side};
    double pn[2], nu[6];
    pp_mlcp_problem mp = {.h = H, .body_count = 1, .bodies = &a.body, .contact_count = 2,
                          .contacts = two, .friction_directions = K_DIRS};
    pp_mlcp_solution ms = {pn, NULL, NULL, NULL, nu, NULL};
    pp_mlcp_stats mst;
    ck_assert_int_eq(pp_mlcp_solve(g_mlcp, &mp, NULL, NULL, &ms, &mst), PP_OK);
    double vt[3];
    point_velocity(nu, a.x, tip, vt);
    ck_assert_double_eq_tol(vt[0], -0.5, 1e-9);
    ck_assert(pn[1] > 0.0);
    free(s);
    pp_polytope_destroy(a.poly);
    pp_polytope_destroy(b.poly);
}
END_TEST

/*
 * A vertex resting on a face near a convex edge: the (unturned) octahedron's tip rests on
 * B's top face 3 mm from the edge (psi_top = 0, psi_side = -0.003), at rest, gravity only:
 * v* = (0, 0, -g h). The tip is under the centre of mass, so the step must end at rest with
 * the weight carried along +z: the vertical impulse of all primaries is m g h, none acts
 * sideways. The primary of the vertex–edge I set is the top face (largest psi); with the
 * side face as primary the set could only push along x (docs/references.md, "The primary matters").
 */
START_TEST(test_resting_near_edge)
{
    const double tip[3] = {0.497, 0, 0.5}, v[3] = {0, 0, -G * H}, w[3] = {0, 0, 0};
    thing a, b;
    tip_thing(&a, 0, tip, v, w);
    static_cube(&b);
    peg_case pc;
    peg_case_build(&pc, &a, 0, &b, -1, 0.5);
    ck_assert_int_eq(pc.sets[0].kind, PP_PEG_SET_I);
    ck_assert_double_eq_tol(pc.c[pc.sets[0].first].n[2], -1.0, 1e-15);
    ck_assert_double_eq_tol(pc.c[pc.sets[0].first + 1].psi, -0.003, 1e-12);

    unsigned char basis[MAX_SETS * (K_DIRS + 2) + MAX_CONTACTS];
    memset(basis, 0, sizeof basis);
    solved *s = peg_solve(&a.body, 1, &pc, NULL, basis);
    ck_assert_int_eq(s->status, PP_OK);
    double impulse[3] = {0, 0, 0};
    for (int j = 0; j < pc.out.set_count; ++j) {
        const pp_contact *c = &pc.c[pc.sets[j].first];
        for (int r = 0; r < 3; ++r) impulse[r] -= s->pn[pc.sets[j].first] * c->n[r]; /* on A */
        for (int r = 0; r < 3; ++r) impulse[r] -= s->f[3 * pc.sets[j].first + r];
    }
    ck_assert_double_eq_tol(impulse[0], 0.0, TOL_IMPULSE);
    ck_assert_double_eq_tol(impulse[1], 0.0, TOL_IMPULSE);
    ck_assert_double_eq_tol(impulse[2], a.mass * G * H, 1e-10);
    for (int r = 0; r < 6; ++r) ck_assert_double_eq_tol(s->nu[r], 0.0, TOL_VELOCITY);

    /* the same state again: the warm start takes the previous basis without a pivot */
    solved *again = peg_solve(&a.body, 1, &pc, NULL, basis);
    ck_assert_int_eq(again->status, PP_OK);
    ck_assert_int_eq(again->stats.lcp.pivots, 0);
    ck_assert_int_eq(again->stats.lcp.warm_started, 1);
    free(again);
    free(s);
    pp_polytope_destroy(a.poly);
    pp_polytope_destroy(b.poly);
}
END_TEST

/*
 * The end gap. Table of tip positions and free velocities around B's top edge (into the
 * corner, along the faces, away, spinning). After the step, per set with g_s = psi_s/h +
 * d psi_s/dt (the linearised end gap over h, Eq 6 / 39):
 *   max_s g_s >= 0,  p (max_s g_s) = 0,  g_iota + sum of the set's slacks = max_s g_s,
 * and the slack rows are complementary. mu = 0.3.
 */
typedef struct gap_case {
    double tip[3], v[3], w[3], deg;
    int active; /* the free motion would overlap: some impulse must act */
} gap_case;

static const gap_case k_gap[] = {
    {{0.505, 0, 0.505}, {-1, 0, -1}, {0, 0, 0}, 10, 1},       /* diagonally into the corner */
    {{0.503, 0.1, 0.502}, {-0.5, 0.2, -2}, {0, 0, 0}, 10, 1}, /* down past the edge */
    {{0.497, 0, 0.5}, {0.5, 0, -0.1}, {0, 0, 0}, 0, 1},       /* on the top face, off the edge */
    {{0.5, -0.2, 0.51}, {-0.3, 0, -1.5}, {1, 0, 0}, 20, 1},   /* falling onto the edge, spinning */
    {{0.51, 0, 0.495}, {-1.5, 0, 0}, {0, 2, 0}, -15, 1},      /* into the side face */
    {{0.495, 0.3, 0.5}, {0.8, 0, 0.3}, {0, 0, 3}, 5, 0},      /* leaving */
};

START_TEST(test_end_gap)
{
    const gap_case *t = &k_gap[_i];
    double v[3] = {t->v[0], t->v[1], t->v[2] - G * H};
    thing a, b;
    tip_thing(&a, t->deg, t->tip, v, t->w);
    static_cube(&b);
    peg_case pc;
    peg_case_build(&pc, &a, 0, &b, -1, 0.3);
    ck_assert_int_ge(pc.out.set_count, 1);
    solved *s = peg_solve(&a.body, 1, &pc, NULL, NULL);
    ck_assert_msg(s->status == PP_OK, "case %d: %s", _i, pp_lcp_status_string(s->stats.lcp.status));
    double total = 0.0;
    for (int i = 0; i < pc.out.contact_count; ++i) total += s->pn[i];
    ck_assert_msg(t->active ? total > 1e-6 : total == 0.0, "case %d: total impulse %g", _i, total);
    for (int j = 0; j < pc.out.set_count; ++j) {
        const pp_peg_set *set = &pc.sets[j];
        double g[16], top = -HUGE_VAL, sum = 0.0;
        for (int m = 0; m < set->count; ++m) {
            const pp_contact *c = &pc.c[set->first + m];
            g[m] = c->psi / H + gap_rate_static_b(c, s->nu, a.x);
            top = fmax(top, g[m]);
            if (m > 0) {
                sum += s->slack[set->first + m];
                double row = g[0] - g[m];
                for (int r = 1; r <= m; ++r) row += s->slack[set->first + r];
                ck_assert(s->slack[set->first + m] >= 0.0);
                ck_assert_msg(row >= -TOL_GAP, "case %d set %d slack row %d: %g", _i, j, m, row);
                ck_assert(fabs(row * s->slack[set->first + m]) <= TOL_GAP);
            }
        }
        double p = s->pn[set->first];
        ck_assert_msg(top >= -TOL_GAP, "case %d set %d (%s): end gap %g", _i, j,
                      pp_peg_set_kind_string(set->kind), top * H);
        ck_assert(p >= 0.0);
        ck_assert_msg(fabs(p * top) <= TOL_GAP, "case %d set %d: p %g gap %g", _i, j, p, top);
        ck_assert_double_eq_tol(g[0] + sum, top, 1e-9);
    }
    free(s);
    pp_polytope_destroy(a.poly);
    pp_polytope_destroy(b.poly);
}
END_TEST

/*
 * The slack rows and blocks of the LCP against hand-derived values (Eqs 39–45): the tip 1 cm
 * above B's top edge (check_peg_constraints' vertex–edge case: I {top, side}, X {top, ee}),
 * moving at v* = (-0.2, 0.1, -0.3), w* = (0.5, -1, 2), k = 8. With B static every row is
 * J_r = [-n_r; -(r_r x n_r)] on A, r_r = p_r - x_A, so
 *   q_p   = -n_top . v_A(p) + psi_top/h
 *   q_c   = -(n_top . v_A(p) - n_side . v_A(p)) + (psi_top - psi_side)/h
 *   M_cp  = m^-1 (n_top - n_side) . n_top + (r x n_top - r x n_side)^T J^-1 (r x n_top)
 *   M[p, c] = 1 (E_I2), M[c, c] = 1 (E_I1), and 0 between the two sets' slacks.
 */
START_TEST(test_lcp_rows)
{
    const double tip[3] = {0.5, 0, 0.51}, v[3] = {-0.2, 0.1, -0.3}, w[3] = {0.5, -1, 2};
    thing a, b;
    tip_thing(&a, 10, tip, v, w);
    static_cube(&b);
    peg_case pc;
    peg_case_build(&pc, &a, 0, &b, -1, 0.3);
    ck_assert_int_eq(pc.out.set_count, 2);
    solved *s = peg_solve(&a.body, 1, &pc, NULL, NULL);
    ck_assert_int_eq(s->status, PP_OK);
    int n;
    const double *M, *q;
    pp_peg_last_lcp(g_ws, &n, &M, &q);
    const int ns = 2, K = 2;
    ck_assert_int_eq(n, pp_peg_lcp_size(ns, K, K_DIRS));
    ck_assert_int_eq(n, 2 * (K_DIRS + 2) + 2);
    const int p0 = 0, c0 = ns, c1 = ns + 1;

    const pp_contact *top = &pc.c[0], *side = &pc.c[1];
    double nu[6] = {v[0], v[1], v[2], w[0], w[1], w[2]}, vp[3], r[3], rn_top[3], rn_side[3],
           Jr[3];
    point_velocity(nu, a.x, tip, vp);
    for (int k = 0; k < 3; ++k) r[k] = tip[k] - a.x[k];
    cross(r, top->n, rn_top);
    cross(r, side->n, rn_side);
    mat_vec(a.body.inv_inertia, rn_top, Jr);
    double q_p = -dot(top->n, vp) + 0.01 / H;
    double q_c = -(dot(top->n, vp) - dot(side->n, vp)) + (0.01 - 0.0) / H;
    double diff_n[3] = {top->n[0] - side->n[0], top->n[1] - side->n[1], top->n[2] - side->n[2]};
    double diff_rn[3] = {rn_top[0] - rn_side[0], rn_top[1] - rn_side[1], rn_top[2] - rn_side[2]};
    double M_cp = a.body.inv_mass * dot(diff_n, top->n) + dot(diff_rn, Jr);
    ck_assert_double_eq_tol(q[p0], q_p, 1e-12);
    ck_assert_double_eq_tol(q[c0], q_c, 1e-12);
    ck_assert_double_eq_tol(M[c0 + (size_t)p0 * n], M_cp, 1e-12);
    ck_assert_double_eq(M[p0 + (size_t)c0 * n], 1.0);
    ck_assert_double_eq(M[c0 + (size_t)c0 * n], 1.0);
    ck_assert_double_eq(M[1 + (size_t)c1 * n], 1.0);
    ck_assert_double_eq(M[c1 + (size_t)c1 * n], 1.0);
    ck_assert_double_eq(M[c0 + (size_t)c1 * n], 0.0);
    ck_assert_double_eq(M[c1 + (size_t)c0 * n], 0.0);
    ck_assert_double_eq(M[p0 + (size_t)c1 * n], 0.0);
    /* slack columns carry no impulse: no W G block in them */
    for (int i = 0; i < n; ++i)
        if (i != p0 && i != 1 && i != c0 && i != c1) {
            ck_assert_double_eq(M[i + (size_t)c0 * n], 0.0);
            ck_assert_double_eq(M[i + (size_t)c1 * n], 0.0);
        }
    /* the X's slack row: G_top - G_ee with the edge–edge contact's own lever arm */
    const pp_contact *ee = &pc.c[3];
    double ve[3];
    point_velocity(nu, a.x, ee->p_a, ve);
    ck_assert_double_eq_tol(q[c1], -(dot(top->n, vp) - dot(ee->n, ve)) + (0.01 - ee->psi) / H,
                            1e-12);
    /* sigma row of set 0: mu at p, -1 at its betas */
    int sigma0 = ns + K + ns * K_DIRS;
    ck_assert_double_eq(M[sigma0 + (size_t)p0 * n], 0.3);
    ck_assert_double_eq(M[sigma0 + (size_t)(ns + K) * n], -1.0);
    free(s);
    pp_polytope_destroy(a.poly);
    pp_polytope_destroy(b.poly);
}
END_TEST

/* ---- Friction ----------------------------------------------------------------------------- */

static uint64_t g_rng;

static double uniform(double lo, double hi)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return lo + (hi - lo) * (double)(g_rng >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * Friction inside the cone. Random sliding/spinning states of (even loop index) the 0.4 cube
 * on the unit cube — U sets — and (odd) the octahedron tip on the top face 3 mm from the edge
 * — an I set whose primary carries the friction. For every primary: sum_j beta_j <= mu p
 * (the pyramid, ST96 Eq 27), so |friction vector| <= mu p (inside the cone); the friction
 * vector lies in the tangent plane; and friction never accelerates the sliding contact: the
 * primary's tangential velocity after the step is not larger than the free one's in the
 * direction of the friction (the friction impulse opposes the final slip, ST96 Eq 26:
 * beta_j > 0 only on the direction of largest -d_j . slip).
 */
START_TEST(test_friction_cone)
{
    g_rng = 0x2545F4914F6CDD1Dull * (uint64_t)(_i + 3);
    const double mu = uniform(0.1, 1.0);
    double v[3] = {uniform(-1, 1), uniform(-1, 1), -G * H}, w[3] = {0, 0, uniform(-3, 3)};
    thing a, b;
    static_cube(&b);
    if (_i % 2 == 0) {
        const double xa[3] = {0.05, -0.02, 0.7};
        thing_init(&a, make_box(0.4, 0.4, 0.4), xa, NULL, v, w);
    } else {
        const double tip[3] = {0.497, uniform(-0.3, 0.3), 0.5};
        v[0] = uniform(-1, 0); /* do not leave the face */
        tip_thing(&a, 0, tip, v, w);
    }
    peg_case pc;
    peg_case_build(&pc, &a, 0, &b, -1, mu);
    solved *s = peg_solve(&a.body, 1, &pc, NULL, NULL);
    ck_assert_int_eq(s->status, PP_OK);
    double total_p = 0.0;
    for (int j = 0; j < pc.out.set_count; ++j) {
        int i = pc.sets[j].first;
        const pp_contact *c = &pc.c[i];
        double p = s->pn[i], sum_beta = 0.0;
        for (int l = 0; l < K_DIRS; ++l) {
            ck_assert(s->beta[i * K_DIRS + l] >= 0.0);
            sum_beta += s->beta[i * K_DIRS + l];
        }
        total_p += p;
        ck_assert_msg(sum_beta <= mu * p + TOL_IMPULSE, "set %d: sum beta %g > mu p %g", j,
                      sum_beta, mu * p);
        const double *f = &s->f[3 * i];
        ck_assert(sqrt(dot(f, f)) <= mu * p + TOL_IMPULSE);
        ck_assert(fabs(dot(f, c->n)) <= 1e-14);
        /* secondaries carry nothing */
        for (int m = 1; m < pc.sets[j].count; ++m) {
            ck_assert_double_eq(s->pn[i + m], 0.0);
            ck_assert_double_eq(s->f[3 * (i + m)], 0.0);
        }
        /* friction on B is along -slip of A relative to B... on A it opposes A's slip: the
         * work of the friction impulse on A's final point velocity is <= 0 */
        double vp[3];
        point_velocity(s->nu, a.x, c->p_a, vp);
        ck_assert(-dot(f, vp) <= 1e-12); /* A receives -f */
    }
    ck_assert(total_p > 0.0);
    free(s);
    pp_polytope_destroy(a.poly);
    pp_polytope_destroy(b.poly);
}
END_TEST

/*
 * Two dynamic bodies, no gravity: the octahedron (A, body 0) driven into the top edge of a
 * free cube (B, body 1) at 2 m/s. Every PEG impulse acts equal and opposite on the two
 * bodies, so linear momentum is kept: m_A v_A + m_B v_B = m_A v*_A + m_B v*_B; and the end
 * gaps hold (max_s g_s >= 0 per set) with both bodies moving.
 */
START_TEST(test_two_bodies_momentum)
{
    const double tip[3] = {0.503, 0.05, 0.504}, va[3] = {-1.0, 0.2, -2.0}, wa[3] = {0.3, 0, 0},
                 zero[3] = {0, 0, 0}, vb[3] = {0.1, 0, 0.2}, wb[3] = {0, 0.5, 0};
    thing a, b;
    tip_thing(&a, 10, tip, va, wa);
    thing_init(&b, make_box(1, 1, 1), zero, NULL, vb, wb);
    peg_case pc;
    peg_case_build(&pc, &a, 0, &b, 1, 0.2);
    pp_mlcp_body bodies[2] = {a.body, b.body};
    solved *s = peg_solve(bodies, 2, &pc, NULL, NULL);
    ck_assert_int_eq(s->status, PP_OK);
    double moved = 0.0;
    for (int r = 0; r < 3; ++r) {
        double before = a.mass * va[r] + b.mass * vb[r];
        double after = a.mass * s->nu[r] + b.mass * s->nu[6 + r];
        ck_assert_double_eq_tol(after, before, 1e-9 * (a.mass + b.mass));
        moved += fabs(s->nu[r] - va[r]);
    }
    ck_assert(moved > 0.1); /* the contact did act */
    for (int j = 0; j < pc.out.set_count; ++j) {
        double top = -HUGE_VAL;
        for (int m = 0; m < pc.sets[j].count; ++m) {
            const pp_contact *c = &pc.c[pc.sets[j].first + m];
            double pa_v[3], pb_v[3], pb[3];
            for (int k = 0; k < 3; ++k) pb[k] = c->p_a[k] + c->psi * c->n[k];
            point_velocity(s->nu, a.x, c->p_a, pa_v);
            point_velocity(s->nu + 6, b.x, pb, pb_v);
            double rate = dot(c->n, pb_v) - dot(c->n, pa_v);
            top = fmax(top, c->psi / H + rate);
        }
        ck_assert_msg(top >= -TOL_GAP, "set %d end gap %g", j, top);
    }
    free(s);
    pp_polytope_destroy(a.poly);
    pp_polytope_destroy(b.poly);
}
END_TEST

/* The same-frame rule inside the solve: the I set of test_corner_passage with its secondary
 * given B -> A (flipped by hand) assembles the same LCP and gives the same step. */
START_TEST(test_secondary_frame)
{
    const double tip[3] = {0.503, 0, 0.499}, v[3] = {-1, 0.3, -1}, w[3] = {0.2, 0.1, 0};
    thing a, b;
    tip_thing(&a, 10, tip, v, w);
    static_cube(&b);
    peg_case pc;
    peg_case_build(&pc, &a, 0, &b, -1, 0.3);
    solved *s1 = peg_solve(&a.body, 1, &pc, NULL, NULL);
    ck_assert_int_eq(s1->status, PP_OK);
    int n;
    const double *M, *q;
    pp_peg_last_lcp(g_ws, &n, &M, &q);
    double *M1 = malloc(sizeof(double) * (size_t)n * n), *q1 = malloc(sizeof(double) * n);
    memcpy(M1, M, sizeof(double) * (size_t)n * n);
    memcpy(q1, q, sizeof(double) * n);
    pp_peg_contact_flip(&pc.c[pc.sets[0].first + 1]);
    ck_assert_int_eq(pc.c[pc.sets[0].first + 1].body_a, -1);
    solved *s2 = peg_solve(&a.body, 1, &pc, NULL, NULL);
    ck_assert_int_eq(s2->status, PP_OK);
    pp_peg_last_lcp(g_ws, &n, &M, &q);
    for (int i = 0; i < n; ++i) {
        ck_assert_double_eq_tol(q[i], q1[i], 1e-12);
        for (int j = 0; j < n; ++j) ck_assert_double_eq_tol(M[i + j * n], M1[i + j * n], 1e-12);
    }
    for (int r = 0; r < 6; ++r) ck_assert_double_eq_tol(s1->nu[r], s2->nu[r], 1e-12);
    free(M1);
    free(q1);
    free(s1);
    free(s2);
    pp_polytope_destroy(a.poly);
    pp_polytope_destroy(b.poly);
}
END_TEST

/*
 * Random states: a box of random size (0.1–1 m) at a random orientation, 2 mm into to 1 cm
 * away from the static unit cube (placed by bisection on pp_shape_distance), driven toward it
 * (up to 2 m/s, random spin), mu 0 (even loop index) or 0.5. The PEG LCP is neither symmetric
 * nor copositive, so Lemke need not process it (docs/references.md): this checks that it
 * does on such states (possibly through the regularisation fallback) and that every set's
 * linearised end gap holds.
 */
START_TEST(test_random_states)
{
    g_rng = 0x9E3779B97F4A7C15ull * (uint64_t)(_i + 11);
    const double mu = _i % 2 ? 0.5 : 0.0, zero[3] = {0, 0, 0};
    thing b;
    static_cube(&b);
    pp_shape sb = pp_shape_make_box((const double[3]){1, 1, 1}, zero, I3);
    int solved_count = 0;
    for (int t = 0; t < 50; ++t) {
        double l[3] = {uniform(0.1, 1), uniform(0.1, 1), uniform(0.1, 1)};
        double q4[4] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
        double qn = sqrt(q4[0] * q4[0] + q4[1] * q4[1] + q4[2] * q4[2] + q4[3] * q4[3]);
        double w_ = q4[0] / qn, x_ = q4[1] / qn, y_ = q4[2] / qn, z_ = q4[3] / qn;
        double R[9] = {1 - 2 * (y_ * y_ + z_ * z_), 2 * (x_ * y_ - w_ * z_), 2 * (x_ * z_ + w_ * y_),
                       2 * (x_ * y_ + w_ * z_), 1 - 2 * (x_ * x_ + z_ * z_), 2 * (y_ * z_ - w_ * x_),
                       2 * (x_ * z_ - w_ * y_), 2 * (y_ * z_ + w_ * x_), 1 - 2 * (x_ * x_ + y_ * y_)};
        double dir[3] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
        double len = sqrt(dot(dir, dir)), target = uniform(-0.002, 0.01), lo = 0, hi = 3, x[3];
        pp_proximity prox;
        for (int it = 0; it < 60; ++it) {
            double m = 0.5 * (lo + hi);
            for (int k = 0; k < 3; ++k) x[k] = m * dir[k] / len;
            pp_shape sa = pp_shape_make_box(l, x, R);
            ck_assert_int_eq(pp_shape_distance(&sa, &sb, &prox), PP_OK);
            if (prox.distance < target) lo = m; else hi = m;
        }
        for (int k = 0; k < 3; ++k) x[k] = hi * dir[k] / len;
        double speed = uniform(0, 2), v[3], w[3];
        for (int k = 0; k < 3; ++k) {
            v[k] = -speed * dir[k] / len + uniform(-0.5, 0.5);
            w[k] = uniform(-3, 3);
        }
        thing a;
        thing_init(&a, make_box(l[0], l[1], l[2]), x, R, v, w);
        peg_case pc;
        peg_case_build(&pc, &a, 0, &b, -1, mu);
        if (pc.out.set_count == 0) {
            pp_polytope_destroy(a.poly);
            continue;
        }
        solved *s = peg_solve(&a.body, 1, &pc, NULL, NULL);
        ck_assert_msg(s->status == PP_OK, "trial %d: %s (n %d)", t,
                      pp_lcp_status_string(s->stats.lcp.status), s->stats.lcp_size);
        ++solved_count;
        for (int j = 0; j < pc.out.set_count; ++j) {
            double top = -HUGE_VAL;
            for (int m = 0; m < pc.sets[j].count; ++m) {
                const pp_contact *c = &pc.c[pc.sets[j].first + m];
                top = fmax(top, c->psi / H + gap_rate_static_b(c, s->nu, a.x));
            }
            ck_assert_msg(top >= -1e-7, "trial %d set %d: end gap %g", t, j, top * H);
        }
        free(s);
        pp_polytope_destroy(a.poly);
    }
    ck_assert_int_ge(solved_count, 25);
    pp_polytope_destroy(b.poly);
}
END_TEST

/* ---- Islands ------------------------------------------------------------------------------ */

#define ISLAND_BODIES 6
#define TOL_WHOLE 1e-9      /* island-wise z against the whole LCP solved in one piece */
#define TOL_COMPLEMENTARITY 1e-9

/* Several peg_cases in one problem: contacts and sets appended, body indices as given. */
typedef struct island_scene {
    pp_peg_set sets[MAX_SETS];
    pp_contact c[MAX_CONTACTS];
    int set_count, contact_count, body_count;
    pp_mlcp_body bodies[ISLAND_BODIES];
    pp_polytope *polys[ISLAND_BODIES + 1];
    int poly_count;
} island_scene;

typedef struct island_solved {
    double pn[MAX_CONTACTS], beta[MAX_CONTACTS * K_DIRS], sigma[MAX_CONTACTS];
    double f[3 * MAX_CONTACTS], nu[6 * ISLAND_BODIES], slack[MAX_CONTACTS];
    pp_peg_stats stats;
    pp_status status;
} island_solved;

static void scene_append(island_scene *sc, const peg_case *pc)
{
    ck_assert_int_le(sc->contact_count + pc->out.contact_count, MAX_CONTACTS);
    ck_assert_int_le(sc->set_count + pc->out.set_count, MAX_SETS);
    for (int j = 0; j < pc->out.set_count; ++j) {
        sc->sets[sc->set_count + j] = pc->sets[j];
        sc->sets[sc->set_count + j].first += sc->contact_count;
    }
    memcpy(&sc->c[sc->contact_count], pc->c, (size_t)pc->out.contact_count * sizeof *pc->c);
    sc->set_count += pc->out.set_count;
    sc->contact_count += pc->out.contact_count;
}

/* A U set between kinematic body `kin` (above, at rest) and body `b`, 5 cm open: it joins
 * nothing (W = 0 on the kinematic side) and never acts (b moves down, away from it). */
static void scene_append_kinematic_u(island_scene *sc, int kin, int b, double mu)
{
    pp_contact *k = &sc->c[sc->contact_count];
    memset(k, 0, sizeof *k);
    k->body_a = kin;
    k->body_b = b;
    memcpy(k->p_a, sc->bodies[b].x, sizeof k->p_a);
    k->p_a[2] += 0.5;
    k->n[2] = -1.0;
    k->psi = 0.05;
    k->mu = mu;
    sc->sets[sc->set_count++] =
        (pp_peg_set){PP_PEG_SET_U, PP_PEG_VERTEX_FACE, sc->contact_count++, 1};
}

static void scene_destroy(island_scene *sc)
{
    for (int i = 0; i < sc->poly_count; ++i) pp_polytope_destroy(sc->polys[i]);
}

/*
 * Three separate groups and a kinematic body, all frictional with mu:
 *  - group 0: octahedron 0 driven diagonally into the +x top edge of the static unit cube
 *    (k_gap case 0: a vertex–edge I set, active);
 *  - group 1: octahedron 1, the mirror image at the -x top edge of the same static cube;
 *  - group 2: octahedron 2 driven into the top edge of the free cube 3, 10 m away (two
 *    dynamic bodies: test_two_bodies_momentum's state);
 *  - kinematic body 4 with an open U set to octahedra 0 and 1.
 * The static cube and the kinematic body join nothing, so the islands are {group 0 + U(4, 0)},
 * {group 1 + U(4, 1)}, {group 2}, numbered in that order; group2_first puts group 2's sets
 * first in the problem (it is then island 0).
 */
static void island_scene_build(island_scene *sc, double mu, int group2_first)
{
    memset(sc, 0, sizeof *sc);
    const double zero[3] = {0, 0, 0};
    thing *t = calloc(5, sizeof *t);
    static_cube(&t[4]);
    const double tip0[3] = {0.505, 0, 0.505}, v0[3] = {-1, 0, -1 - G * H};
    const double tip1[3] = {-0.505, 0, 0.505}, v1[3] = {1, 0, -1 - G * H};
    tip_thing(&t[0], 10, tip0, v0, zero);
    tip_thing(&t[1], -10, tip1, v1, zero);
    const double tip2[3] = {10.503, 0.05, 0.504}, va[3] = {-1.0, 0.2, -2.0}, wa[3] = {0.3, 0, 0},
                 xb[3] = {10, 0, 0}, vb[3] = {0.1, 0, 0.2}, wb[3] = {0, 0.5, 0};
    tip_thing(&t[2], 10, tip2, va, wa);
    thing_init(&t[3], make_box(1, 1, 1), xb, NULL, vb, wb);
    for (int b = 0; b < 4; ++b) sc->bodies[b] = t[b].body;
    memset(&sc->bodies[4], 0, sizeof sc->bodies[4]); /* kinematic: infinite mass, at rest */
    sc->bodies[4].x[2] = 3.0;
    sc->body_count = 5;

    peg_case *pc = malloc(3 * sizeof *pc);
    peg_case_build(&pc[0], &t[0], 0, &t[4], -1, mu);
    peg_case_build(&pc[1], &t[1], 1, &t[4], -1, mu);
    peg_case_build(&pc[2], &t[2], 2, &t[3], 3, mu);
    ck_assert_int_eq(pc[0].sets[0].kind, PP_PEG_SET_I);
    ck_assert_int_eq(pc[1].sets[0].kind, PP_PEG_SET_I);
    if (group2_first) scene_append(sc, &pc[2]);
    scene_append(sc, &pc[0]);
    scene_append_kinematic_u(sc, 4, 0, mu);
    scene_append(sc, &pc[1]);
    scene_append_kinematic_u(sc, 4, 1, mu);
    if (!group2_first) scene_append(sc, &pc[2]);
    for (int i = 0; i < 5; ++i) sc->polys[sc->poly_count++] = t[i].poly;
    free(pc);
    free(t);
}

static island_solved *island_solve(pp_peg_workspace *ws, const island_scene *sc, int first_set,
                                   int set_count, double compliance,
                                   const pp_lcp_options *options, unsigned char *basis)
{
    island_solved *s = calloc(1, sizeof *s);
    pp_peg_problem p = {.base = {.h = H, .body_count = sc->body_count, .bodies = sc->bodies,
                                 .contact_count = sc->contact_count, .contacts = sc->c,
                                 .friction_directions = K_DIRS, .compliance = compliance},
                        .set_count = set_count, .sets = sc->sets + first_set};
    pp_mlcp_solution sol = {s->pn, s->beta, s->sigma, s->f, s->nu, NULL};
    s->status = pp_peg_solve(ws, &p, options, basis, &sol, s->slack, &s->stats);
    for (int i = 0; i < 6 * sc->body_count; ++i) ck_assert(isfinite(s->nu[i]));
    return s;
}

/* Whole-LCP indices of the unknowns of set j among the first set_count sets of sc (peg.h
 * layout: p by set; c by set and secondary; beta and sigma over the frictional sets in set
 * order), into idx; returns how many: p, c (count - 1), then beta (k) and sigma if
 * frictional. */
static int set_unknowns(const island_scene *sc, int set_count, int j, int *idx)
{
    int K = 0, nf = 0, slack = 0, slot = 0;
    for (int t = 0; t < set_count; ++t) {
        int frictional = sc->c[sc->sets[t].first].mu > 0.0;
        if (t < j) {
            slack += sc->sets[t].count - 1;
            slot += frictional;
        }
        K += sc->sets[t].count - 1;
        nf += frictional;
    }
    int m = 0;
    idx[m++] = j;
    for (int s = 1; s < sc->sets[j].count; ++s) idx[m++] = set_count + slack + s - 1;
    if (sc->c[sc->sets[j].first].mu > 0.0) {
        for (int l = 0; l < K_DIRS; ++l) idx[m++] = set_count + K + slot * K_DIRS + l;
        idx[m++] = set_count + K + nf * K_DIRS + slot;
    }
    return m;
}

/* The whole LCP's z rebuilt from the per-contact outputs of a solve of sc's sets. */
static void whole_z(const island_scene *sc, const island_solved *s, double *z)
{
    int idx[MAX_CONTACTS + K_DIRS + 2];
    for (int j = 0; j < sc->set_count; ++j) {
        const int i = sc->sets[j].first, m = set_unknowns(sc, sc->set_count, j, idx);
        z[idx[0]] = s->pn[i];
        for (int t = 1; t < sc->sets[j].count; ++t) z[idx[t]] = s->slack[i + t];
        if (m > sc->sets[j].count) {
            for (int l = 0; l < K_DIRS; ++l)
                z[idx[sc->sets[j].count + l]] = s->beta[i * K_DIRS + l];
            z[idx[m - 1]] = s->sigma[i];
        }
    }
}

/*
 * The island-wise solution against the whole LCP. With island_scene (mu 0.5; loop index 1:
 * frictionless; 2: compliance 1e-10; 3: group 2's sets first, so it is island 0): three
 * islands; the combined z solves the whole LCP assembled by pp_peg_last_lcp (z >= 0,
 * w = M z + q >= 0, z w = 0), and equals, to 1e-9, the z of pp_lcp_solve on that whole LCP
 * in one piece. (Lemke on the whole reaches the same point on these states, whose impulses
 * are determined: few contacts, sliding friction. Where an island's LCP has several
 * solutions, a face resting on a face, the two solves may pick different ones, and only the
 * complementarity check applies.) Without compliance, group 2 solved as a problem of its
 * own gives the same impulses and velocities bit for bit (its island's LCP is the same
 * matrix, assembled the same way).
 */
START_TEST(test_islands_equal_whole)
{
    const double mu = _i == 1 ? 0.0 : 0.5, compliance = _i == 2 ? 1e-10 : 0.0;
    const int group2_first = _i == 3;
    island_scene *sc = malloc(sizeof *sc);
    island_scene_build(sc, mu, group2_first);
    pp_peg_workspace *ws;
    ck_assert_int_eq(pp_peg_workspace_create(ISLAND_BODIES, MAX_CONTACTS, MAX_SETS, K_DIRS, &ws),
                     PP_OK);
    island_solved *s = island_solve(ws, sc, 0, sc->set_count, compliance, NULL, NULL);
    ck_assert_msg(s->status == PP_OK, "%s", pp_lcp_status_string(s->stats.lcp.status));
    ck_assert_int_eq(s->stats.islands, 3);
    ck_assert_int_eq(s->stats.islands_failed, 0);
    ck_assert_int_eq(s->stats.failed_island, -1);
    ck_assert_int_gt(s->stats.i_sets + s->stats.x_sets, 0);
    ck_assert_int_lt(s->stats.largest_island, s->stats.lcp_size);
    ck_assert_int_eq(s->stats.lcp.status, PP_LCP_SOLVED);

    int n;
    const double *Mp, *qp;
    pp_peg_last_lcp(ws, &n, &Mp, &qp);
    ck_assert_int_eq(n, s->stats.lcp_size);
    double *M = malloc(sizeof(double) * (size_t)n * n), *q = malloc(sizeof(double) * n);
    double *z = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
    double *z1 = malloc(sizeof(double) * n);
    memcpy(M, Mp, sizeof(double) * (size_t)n * n);
    memcpy(q, qp, sizeof(double) * n);
    /* a second call gives the same */
    pp_peg_last_lcp(ws, &n, &Mp, &qp);
    ck_assert_mem_eq(M, Mp, sizeof(double) * (size_t)n * n);

    /* complementarity of the whole LCP at the combined solution */
    whole_z(sc, s, z);
    pp_lcp_result r;
    pp_lcp_evaluate(n, M, q, z, w, &r);
    int active = 0;
    for (int i = 0; i < n; ++i) {
        ck_assert_msg(z[i] >= 0.0, "z[%d] = %g", i, z[i]);
        ck_assert_msg(w[i] >= -TOL_COMPLEMENTARITY, "w[%d] = %g", i, w[i]);
        ck_assert_msg(fabs(z[i] * w[i]) <= TOL_COMPLEMENTARITY, "z w [%d] = %g", i, z[i] * w[i]);
        active += z[i] > 0.0;
    }
    ck_assert_int_gt(active, 0);
    ck_assert(r.relative_residual <= 1e-9);

    /* the whole LCP solved in one piece */
    pp_lcp_workspace *lw;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &lw), PP_OK);
    ck_assert_int_eq(pp_lcp_solve(lw, n, M, q, NULL, NULL, z1, &r), PP_OK);
    for (int i = 0; i < n; ++i)
        ck_assert_msg(fabs(z[i] - z1[i]) <= TOL_WHOLE * fmax(1.0, fabs(z1[i])),
                      "z[%d]: islands %.17g, whole %.17g", i, z[i], z1[i]);

    /* group 2 alone (its sets are the first or the last of the problem); not with compliance,
     * whose shift r max_i M_ii is then taken over group 2's sets only */
    int g2_count = 0;
    for (int j = 0; j < sc->set_count; ++j)
        g2_count += sc->c[sc->sets[j].first].body_a == 2;
    const int g2 = group2_first ? 0 : sc->set_count - g2_count;
    island_solved *alone = island_solve(ws, sc, g2, g2_count, compliance, NULL, NULL);
    ck_assert_int_eq(alone->status, PP_OK);
    ck_assert_int_eq(alone->stats.islands, 1);
    ck_assert_int_le(alone->stats.largest_island, s->stats.largest_island);
    if (compliance == 0.0) {
        for (int j = g2; j < g2 + g2_count; ++j) {
            int i = sc->sets[j].first;
            ck_assert(alone->pn[i] == s->pn[i]);
            for (int r3 = 0; r3 < 3; ++r3) ck_assert(alone->f[3 * i + r3] == s->f[3 * i + r3]);
        }
        for (int r6 = 12; r6 < 24; ++r6) ck_assert(alone->nu[r6] == s->nu[r6]); /* bodies 2, 3 */
    }
    /* the kinematic body keeps its velocity; its open sets carry nothing */
    for (int r6 = 0; r6 < 6; ++r6) ck_assert(s->nu[24 + r6] == 0.0);

    pp_lcp_workspace_destroy(lw);
    free(alone);
    free(M);
    free(q);
    free(z);
    free(w);
    free(z1);
    free(s);
    pp_peg_workspace_destroy(ws);
    scene_destroy(sc);
    free(sc);
}
END_TEST

/*
 * Warm start through the whole-LCP basis. The island scene solved with a basis array (all w
 * basic on entry): the basis returned, indexed like the whole LCP, is a complementary basis
 * that solves the whole LCP (pp_lcp_solve accepts it without a pivot), and the same step
 * again is accepted island by island without a pivot.
 */
START_TEST(test_islands_warm_start)
{
    island_scene *sc = malloc(sizeof *sc);
    island_scene_build(sc, 0.5, 0);
    pp_peg_workspace *ws;
    ck_assert_int_eq(pp_peg_workspace_create(ISLAND_BODIES, MAX_CONTACTS, MAX_SETS, K_DIRS, &ws),
                     PP_OK);
    const int cap = pp_peg_lcp_size(MAX_SETS, MAX_CONTACTS, K_DIRS);
    unsigned char *basis = calloc((size_t)cap, 1), *copy = malloc((size_t)cap);
    island_solved *s = island_solve(ws, sc, 0, sc->set_count, 0.0, NULL, basis);
    ck_assert_int_eq(s->status, PP_OK);
    ck_assert_int_gt(s->stats.lcp.pivots, 0);
    ck_assert_int_eq(s->stats.lcp.warm_started, 0);

    int n;
    const double *M, *q;
    pp_peg_last_lcp(ws, &n, &M, &q);
    double *z = malloc(sizeof(double) * n);
    memcpy(copy, basis, (size_t)n);
    pp_lcp_workspace *lw;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &lw), PP_OK);
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve(lw, n, M, q, NULL, copy, z, &r), PP_OK);
    ck_assert_int_eq(r.warm_started, 1);
    ck_assert_int_eq(r.pivots, 0);

    island_solved *again = island_solve(ws, sc, 0, sc->set_count, 0.0, NULL, basis);
    ck_assert_int_eq(again->status, PP_OK);
    ck_assert_int_eq(again->stats.lcp.pivots, 0);
    ck_assert_int_eq(again->stats.lcp.warm_started, 1);
    for (int i = 0; i < sc->contact_count; ++i)
        ck_assert_double_eq_tol(again->pn[i], s->pn[i], TOL_IMPULSE);

    pp_lcp_workspace_destroy(lw);
    free(z);
    free(again);
    free(s);
    free(basis);
    free(copy);
    pp_peg_workspace_destroy(ws);
    scene_destroy(sc);
    free(sc);
}
END_TEST

/*
 * One island fails, the others are solved. Octahedron 1 of the island scene is made
 * kinematic (infinite mass): its sets then couple nothing, each is an island of its own, and
 * the primary row of its I set reads 0 <= 0 p + max_s g_s with max_s g_s < 0 (it is driven
 * into the corner; test_solver_failure), which no z solves. The step returns PP_ERR_SOLVER,
 * counts the failed islands and names the first; a failed island's unknowns are 0 and
 * nonbasic in the whole z and basis, and are the only rows of the whole LCP left violated;
 * octahedron 1 keeps its velocity; groups 0 and 2 get, bit for bit, what they get when
 * octahedron 1's sets are left out.
 */
START_TEST(test_island_failure)
{
    island_scene *sc = malloc(sizeof *sc), *ref = malloc(sizeof *ref);
    island_scene_build(sc, 0.5, 0);
    pp_peg_workspace *ws;
    ck_assert_int_eq(pp_peg_workspace_create(ISLAND_BODIES, MAX_CONTACTS, MAX_SETS, K_DIRS, &ws),
                     PP_OK);
    /* the reference: the same problem without octahedron 1's sets */
    *ref = *sc;
    ref->set_count = 0;
    int body1_sets = 0;
    for (int j = 0; j < sc->set_count; ++j) {
        const pp_contact *c = &sc->c[sc->sets[j].first];
        if (c->body_a != 1 && c->body_b != 1) ref->sets[ref->set_count++] = sc->sets[j];
        else ++body1_sets;
    }
    island_solved *good = island_solve(ws, ref, 0, ref->set_count, 0.0, NULL, NULL);
    ck_assert_int_eq(good->status, PP_OK);
    ck_assert_int_eq(good->stats.islands, 2);

    const double v1[3] = {sc->bodies[1].v[0], sc->bodies[1].v[1], sc->bodies[1].v[2]};
    sc->bodies[1].inv_mass = 0.0;
    memset(sc->bodies[1].inv_inertia, 0, sizeof sc->bodies[1].inv_inertia);
    const int cap = pp_peg_lcp_size(MAX_SETS, MAX_CONTACTS, K_DIRS);
    unsigned char *basis = calloc((size_t)cap, 1);
    island_solved *s = island_solve(ws, sc, 0, sc->set_count, 0.0, NULL, basis);
    ck_assert_int_eq(s->status, PP_ERR_SOLVER);
    ck_assert_int_ne(s->stats.lcp.status, PP_LCP_SOLVED);
    ck_assert_int_eq(s->stats.islands, 2 + body1_sets);
    ck_assert_int_ge(s->stats.islands_failed, 1);
    /* islands are numbered by their smallest set: group 0 with U(4, 0) is island 0, then
     * octahedron 1's sets one by one, then group 2 */
    ck_assert_int_ge(s->stats.failed_island, 1);
    ck_assert_int_le(s->stats.failed_island, body1_sets);
    for (int r = 0; r < 3; ++r) ck_assert(s->nu[6 + r] == v1[r]);
    for (int j = 0; j < sc->set_count; ++j) {
        const int i = sc->sets[j].first;
        const pp_contact *c = &sc->c[i];
        if (c->body_a == 1 || c->body_b == 1) continue;
        ck_assert(s->pn[i] == good->pn[i]);
        for (int r = 0; r < 3; ++r) ck_assert(s->f[3 * i + r] == good->f[3 * i + r]);
    }
    for (int r = 0; r < 6; ++r) {
        ck_assert(s->nu[r] == good->nu[r]);           /* body 0 */
        ck_assert(s->nu[12 + r] == good->nu[12 + r]); /* bodies 2, 3 */
        ck_assert(s->nu[18 + r] == good->nu[18 + r]);
    }

    /* In the whole LCP: a set of octahedron 1 is an island; it failed iff one of its rows is
     * violated at the z returned, and then its unknowns are 0 and nonbasic. */
    int n;
    const double *M, *q;
    pp_peg_last_lcp(ws, &n, &M, &q);
    double *z = malloc(sizeof(double) * n), *w = malloc(sizeof(double) * n);
    whole_z(sc, s, z);
    pp_lcp_result r;
    pp_lcp_evaluate(n, M, q, z, w, &r);
    int idx[MAX_CONTACTS + K_DIRS + 2], failed = 0;
    for (int j = 0; j < sc->set_count; ++j) {
        const pp_contact *c = &sc->c[sc->sets[j].first];
        const int m = set_unknowns(sc, sc->set_count, j, idx);
        const int body1 = c->body_a == 1 || c->body_b == 1;
        int violated = 0;
        for (int t = 0; t < m; ++t) violated |= w[idx[t]] < -TOL_COMPLEMENTARITY;
        ck_assert_msg(!violated || body1, "set %d of a solved island violated", j);
        if (!violated) continue;
        ++failed;
        for (int t = 0; t < m; ++t) {
            ck_assert(z[idx[t]] == 0.0);
            ck_assert_int_eq(basis[idx[t]], 0);
        }
    }
    ck_assert_int_eq(failed, s->stats.islands_failed);

    free(z);
    free(w);
    free(basis);
    free(s);
    free(good);
    pp_peg_workspace_destroy(ws);
    scene_destroy(sc);
    free(sc);
    free(ref);
}
END_TEST

/* ---- Failure and bad input ---------------------------------------------------------------- */

/*
 * Lemke failure. (a) A kinematic body (infinite mass) driven into the static cube: its
 * primary row is 0 <= 0 p + (d psi/dt + psi/h) with a negative constant — no solution; Lemke
 * ends on a ray, the regularisation cannot help: PP_ERR_SOLVER, every impulse 0, the velocity
 * is the free one, nothing is NaN. (b) A solvable step with max_pivots = 1: the pivot cap,
 * the same failure contract.
 */
START_TEST(test_solver_failure)
{
    const double tip[3] = {0.497, 0, 0.501}, v[3] = {0, 0, -1}, w[3] = {0, 0, 0};
    thing a, b;
    tip_thing(&a, 0, tip, v, w);
    static_cube(&b);
    peg_case pc;
    peg_case_build(&pc, &a, 0, &b, -1, 0.5);
    pp_mlcp_body kinematic = a.body;
    kinematic.inv_mass = 0.0;
    memset(kinematic.inv_inertia, 0, sizeof kinematic.inv_inertia);
    solved *s = peg_solve(&kinematic, 1, &pc, NULL, NULL);
    ck_assert_int_eq(s->status, PP_ERR_SOLVER);
    ck_assert_int_ne(s->stats.lcp.status, PP_LCP_SOLVED);
    for (int r = 0; r < 3; ++r) ck_assert_double_eq(s->nu[r], v[r]);
    for (int i = 0; i < pc.out.contact_count; ++i) ck_assert_double_eq(s->pn[i], 0.0);
    free(s);

    pp_lcp_options options = pp_lcp_options_default();
    options.max_pivots = 1;
    options.fallback = 0; /* else pp_lcp_solve's fallback answers (and here solves) it */
    s = peg_solve(&a.body, 1, &pc, &options, NULL);
    ck_assert_int_eq(s->status, PP_ERR_SOLVER);
    ck_assert_int_eq(s->stats.lcp.status, PP_LCP_PIVOT_CAP);
    for (int r = 0; r < 3; ++r) ck_assert_double_eq(s->nu[r], v[r]);
    free(s);
    pp_polytope_destroy(a.poly);
    pp_polytope_destroy(b.poly);
}
END_TEST

START_TEST(test_bad_input)
{
    const double tip[3] = {0.5, 0, 0.51}, v[3] = {0, 0, -0.1}, w[3] = {0, 0, 0};
    thing a, b;
    tip_thing(&a, 10, tip, v, w);
    static_cube(&b);
    peg_case pc;
    peg_case_build(&pc, &a, 0, &b, -1, 0.3);
    double pn[MAX_CONTACTS], nu[6];
    pp_mlcp_solution sol = {pn, NULL, NULL, NULL, nu, NULL};
    pp_peg_stats st;
    pp_peg_problem p = {.base = {.h = H, .body_count = 1, .bodies = &a.body,
                                 .contact_count = pc.out.contact_count, .contacts = pc.c,
                                 .friction_directions = K_DIRS},
                        .set_count = pc.out.set_count, .sets = pc.sets};
    pn[0] = 7.0;
    ck_assert_int_eq(pp_peg_solve(NULL, &p, NULL, NULL, &sol, NULL, &st), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &sol, NULL, NULL), PP_ERR_NULL_ARGUMENT);
    pp_mlcp_solution no_velocity = {pn, NULL, NULL, NULL, NULL, NULL};
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &no_velocity, NULL, &st),
                     PP_ERR_NULL_ARGUMENT);
    /* overlapping sets */
    pp_peg_set sets[MAX_SETS];
    memcpy(sets, pc.sets, sizeof sets);
    p.sets = sets;
    sets[1].first = sets[0].first + 1;
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &sol, NULL, &st), PP_ERR_INVALID_ARGUMENT);
    /* out of range, empty */
    memcpy(sets, pc.sets, sizeof sets);
    sets[1].count = pc.out.contact_count;
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &sol, NULL, &st), PP_ERR_INVALID_ARGUMENT);
    sets[1].count = 0;
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &sol, NULL, &st), PP_ERR_INVALID_ARGUMENT);
    /* a secondary on another body pair */
    memcpy(sets, pc.sets, sizeof sets);
    pp_mlcp_body two[2] = {a.body, a.body};
    p.base.bodies = two;
    p.base.body_count = 2;
    pc.c[1].body_b = 1;
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &sol, NULL, &st), PP_ERR_INVALID_ARGUMENT);
    pc.c[1].body_b = -1;
    /* bad compliance, bad h, directions beyond the workspace, too many bodies */
    p.base.compliance = -1e-10;
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &sol, NULL, &st), PP_ERR_INVALID_ARGUMENT);
    p.base.compliance = 0.0;
    p.base.h = 0.0;
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &sol, NULL, &st), PP_ERR_INVALID_ARGUMENT);
    p.base.h = H;
    p.base.friction_directions = K_DIRS + 1;
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &sol, NULL, &st), PP_ERR_INVALID_ARGUMENT);
    p.base.friction_directions = K_DIRS;
    p.base.body_count = 3;
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &sol, NULL, &st), PP_ERR_INVALID_ARGUMENT);
    p.base.body_count = 1;
    /* options' arrays indexed by an LCP: each island is an LCP of its own, so any of them,
     * even one valid for the whole LCP (all ones, the default covering), is refused */
    int slacks = 0;
    for (int j = 0; j < pc.out.set_count; ++j)
        slacks += pc.sets[j].kind != PP_PEG_SET_U ? pc.sets[j].count - 1 : 0;
    const int n_whole = pp_peg_lcp_size(pc.out.set_count, slacks, K_DIRS);
    double ones[64];
    int minus_one[64];
    ck_assert_int_le(n_whole, 64);
    for (int i = 0; i < n_whole; ++i) {
        ones[i] = 1.0;
        minus_one[i] = -1;
    }
    for (int field = 0; field < 4; ++field) {
        pp_lcp_options o = pp_lcp_options_default();
        if (field == 0) o.covering = ones;
        if (field == 1) o.fallback_start = ones;
        if (field == 2) o.contact_block = minus_one;
        if (field == 3) o.set_slack = minus_one;
        memset(&st, 0, sizeof st);
        ck_assert_int_eq(pp_peg_solve(g_ws, &p, &o, NULL, &sol, NULL, &st),
                         PP_ERR_INVALID_ARGUMENT);
        ck_assert_int_eq(st.lcp_size, 0);
    }
    ck_assert(pn[0] == 7.0); /* nothing written */
    /* an empty problem: free velocities back */
    p.base.body_count = 1;
    p.set_count = 0;
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &sol, NULL, &st), PP_OK);
    ck_assert_int_eq(st.lcp_size, 0);
    ck_assert_double_eq(nu[2], -0.1);
    ck_assert_double_eq(pn[0], 0.0);
    /* workspace arguments */
    pp_peg_workspace *ws;
    ck_assert_int_eq(pp_peg_workspace_create(0, 4, 4, 8, &ws), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_peg_workspace_create(1, 4, 5, 8, &ws), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_peg_workspace_create(1, 4, 4, 1, &ws), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_peg_workspace_create(1, 4, 4, 0, NULL), PP_ERR_NULL_ARGUMENT);
    pp_polytope_destroy(a.poly);
    pp_polytope_destroy(b.poly);
}
END_TEST


/* ---- Rolling and spinning friction (PP_CONTACT_ROLLING, pegplus/mlcp.h) -------------------- */

/*
 * Random states of two bodies, body 0 on the static ground (contact 0) and body 1 on body 0
 * (contact 1, a tilted normal), each contact with mu in [0, 1.2], a random t1 and rolling
 * coefficients rho about t1, t2 = n x t1 and n in [0, 0.05] m (each 0 one time in three).
 * With R the torque impulse pp_peg_rolling_impulse reports on B and omega_rel = w_B - w_A at
 * the end of the step, every axis a with rho_a > 0 obeys its planar pyramid:
 *     |R . a| <= rho_a p_n,   and where omega_rel . a != 0:  R . a = -sign(omega_rel . a) rho_a p_n,
 * and R . a = 0 about the axes with rho_a = 0. Body 1's velocity change is what its contact
 * applies: m (v - v*) = P, J (w - w*) = r_b x P + R (P = p_n n + friction, r_b = p_b - x).
 * The kinetic energy never rises (every row's impulse does work z^T G^T nu <= 0 with psi = 0).
 * (In 60 states, 57 have an axis turning at its bound; slow states, _i % 3 == 0, also stick.)
 */
START_TEST(test_rolling_pyramid)
{
    g_rng = 0x7F4A7C159E3779B9ull * (uint64_t)(_i + 5);
    pp_mlcp_body b[2];
    double inertia[2][3];
    for (int s = 0; s < 2; ++s) {
        memset(&b[s], 0, sizeof b[s]);
        b[s].inv_mass = 1.0 / uniform(0.5, 3.0);
        for (int r = 0; r < 3; ++r) {
            inertia[s][r] = uniform(0.02, 0.2);
            b[s].inv_inertia[4 * r] = 1.0 / inertia[s][r];
            b[s].w[r] = uniform(-5.0, 5.0) * (_i % 3 == 0 ? 0.01 : 1.0);
        }
        b[s].x[2] = s ? 0.9 : 0.3;
        b[s].v[0] = uniform(-1.0, 1.0) * (_i % 3 == 0 ? 0.01 : 1.0);
        b[s].v[1] = uniform(-1.0, 1.0) * (_i % 3 == 0 ? 0.01 : 1.0);
        b[s].v[2] = -G * H;
    }
    pp_contact c[2];
    memset(c, 0, sizeof c);
    for (int i = 0; i < 2; ++i) {
        c[i].body_a = i ? 0 : -1;
        c[i].body_b = i;
        double n[3] = {i ? uniform(-0.2, 0.2) : 0.0, i ? uniform(-0.2, 0.2) : 0.0, 1.0};
        const double ln = sqrt(dot(n, n));
        for (int r = 0; r < 3; ++r) c[i].n[r] = n[r] / ln;
        c[i].p_a[2] = i ? 0.6 : 0.0;
        c[i].mu = uniform(0.0, 1.2);
        c[i].surface = PP_CONTACT_ROLLING;
        for (int r = 0; r < 3; ++r) {
            c[i].t1[r] = uniform(-1.0, 1.0);
            c[i].rho[r] = uniform(0.0, 3.0) < 1.0 ? 0.0 : uniform(0.0, 0.05);
        }
    }
    const pp_peg_set sets[2] = {{PP_PEG_SET_U, PP_PEG_VERTEX_FACE, 0, 1},
                                {PP_PEG_SET_U, PP_PEG_VERTEX_FACE, 1, 1}};
    const int k = _i % 2 ? 4 : 8;
    pp_peg_problem p = {.base = {.h = H, .body_count = 2, .bodies = b, .contact_count = 2,
                                 .contacts = c, .friction_directions = k},
                        .set_count = 2, .sets = sets};
    double pn[2], f[6], nu[12];
    pp_mlcp_solution sol = {pn, NULL, NULL, f, nu, NULL};
    pp_peg_stats stats;
    ck_assert_int_eq(pp_peg_solve(g_ws, &p, NULL, NULL, &sol, NULL, &stats), PP_OK);
    for (int i = 0; i < 2; ++i) {
        double R[3], t1[3], t2[3];
        pp_peg_rolling_impulse(g_ws, i, R);
        const double along = dot(c[i].t1, c[i].n);
        for (int r = 0; r < 3; ++r) t1[r] = c[i].t1[r] - along * c[i].n[r];
        const double lt = sqrt(dot(t1, t1));
        for (int r = 0; r < 3; ++r) t1[r] /= lt;
        cross(c[i].n, t1, t2);
        const double *axis[3] = {t1, t2, c[i].n};
        double w_rel[3];
        for (int r = 0; r < 3; ++r) w_rel[r] = nu[6 * i + 3 + r] - (i ? nu[3 + r] : 0.0);
        for (int u = 0; u < 3; ++u) {
            const double tau = dot(R, axis[u]), bound = c[i].rho[u] * pn[i];
            const double rate = dot(w_rel, axis[u]), tol = 1e-9 * (bound + 1e-3);
            ck_assert_msg(fabs(tau) <= bound + tol, "contact %d axis %d: |%g| > %g", i, u, tau,
                          bound);
            if (fabs(rate) > 1e-9)
                ck_assert_msg(fabs(tau + (rate > 0 ? bound : -bound)) <= tol,
                              "contact %d axis %d turning at %g: torque %g, bound %g", i, u,
                              rate, tau, bound);
        }
        if (i == 1) { /* body 1 moves as its one contact says */
            double P[3], r_b[3], rxP[3];
            for (int r = 0; r < 3; ++r) {
                P[r] = pn[1] * c[1].n[r] + f[3 + r];
                r_b[r] = c[1].p_a[r] - b[1].x[r];
            }
            cross(r_b, P, rxP);
            for (int r = 0; r < 3; ++r) {
                ck_assert_double_eq_tol((nu[6 + r] - b[1].v[r]) / b[1].inv_mass, P[r], 1e-12);
                ck_assert_double_eq_tol(inertia[1][r] * (nu[9 + r] - b[1].w[r]), rxP[r] + R[r],
                                        1e-12);
            }
        }
    }
    double before = 0.0, after = 0.0;
    for (int s = 0; s < 2; ++s)
        for (int r = 0; r < 3; ++r) {
            before += 0.5 * (b[s].v[r] * b[s].v[r] / b[s].inv_mass + inertia[s][r] * b[s].w[r] * b[s].w[r]);
            after += 0.5 * (nu[6 * s + r] * nu[6 * s + r] / b[s].inv_mass +
                            inertia[s][r] * nu[6 * s + 3 + r] * nu[6 * s + 3 + r]);
        }
    ck_assert_double_le(after, before * (1.0 + 1e-12));
}
END_TEST

/*
 * A row of `boxes` unit boxes (1 kg) on the ground, each on three frictional contacts
 * (mu = 0.5, k = 4 here: 6 unknowns each) and touching the next box through two frictionless
 * contacts, under gravity (v* = -g h): one island of 18 b + 2 (b - 1) unknowns. Boxes from
 * `resting` on hover `hover` above the ground (their supports open: psi / h > g h), so only
 * the first `resting` boxes load the LCP.
 */
typedef struct row_scene {
    int nb, nc;
    pp_mlcp_body *bodies;
    pp_contact *c;
    pp_peg_set *sets;
} row_scene;

static void row_scene_build(row_scene *rs, int boxes, int resting, double hover)
{
    rs->nb = boxes;
    rs->nc = 3 * boxes + 2 * (boxes - 1);
    rs->bodies = calloc((size_t)rs->nb, sizeof *rs->bodies);
    rs->c = calloc((size_t)rs->nc, sizeof *rs->c);
    rs->sets = calloc((size_t)rs->nc, sizeof *rs->sets);
    ck_assert(rs->bodies && rs->c && rs->sets);
    int nc = 0;
    for (int b = 0; b < boxes; ++b) {
        pp_mlcp_body *body = &rs->bodies[b];
        body->inv_mass = 1.0;
        for (int r = 0; r < 3; ++r) body->inv_inertia[4 * r] = 6.0; /* unit cube, 1 kg */
        body->x[0] = 1.0 * b;
        body->x[2] = 0.5 + (b < resting ? 0.0 : hover);
        body->v[2] = -G * H;
        const double support[3][2] = {{-0.4, -0.4}, {0.4, -0.4}, {0.0, 0.4}};
        for (int t = 0; t < 3; ++t, ++nc) { /* ground (A, static) under box b (B) */
            rs->c[nc].body_a = -1;
            rs->c[nc].body_b = b;
            rs->c[nc].p_a[0] = body->x[0] + support[t][0];
            rs->c[nc].p_a[1] = support[t][1];
            rs->c[nc].n[2] = 1.0;
            rs->c[nc].psi = b < resting ? 0.0 : hover;
            rs->c[nc].mu = 0.5;
        }
        for (int t = 0; t < 2 && b + 1 < boxes; ++t, ++nc) { /* box b (A) against b + 1 (B) */
            rs->c[nc].body_a = b;
            rs->c[nc].body_b = b + 1;
            rs->c[nc].p_a[0] = body->x[0] + 0.5;
            rs->c[nc].p_a[1] = t ? 0.25 : -0.25;
            rs->c[nc].p_a[2] = b + 1 < resting ? 0.5 : 0.5 + hover;
            rs->c[nc].n[0] = 1.0;
        }
    }
    ck_assert_int_eq(nc, rs->nc);
    for (int i = 0; i < rs->nc; ++i)
        rs->sets[i] = (pp_peg_set){PP_PEG_SET_U, PP_PEG_VERTEX_FACE, i, 1};
}

static void row_scene_free(row_scene *rs)
{
    free(rs->bodies);
    free(rs->c);
    free(rs->sets);
}

static pp_peg_problem row_problem(const row_scene *rs, double compliance)
{
    pp_peg_problem p = {.base = {.h = H, .body_count = rs->nb, .bodies = rs->bodies,
                                 .contact_count = rs->nc, .contacts = rs->c,
                                 .friction_directions = 4, .compliance = compliance,
                                 .keep_lemke_vertex = 1},
                        .set_count = rs->nc, .sets = rs->sets};
    return p;
}

/*
 * A large island (here 1 598 unknowns): pp_peg_solve assembles its matrix by columns
 * (peg_mlcp.c csc_assemble) and solves it without a dense matrix (pp_lcp_solve_csc). The row of
 * ROW_BOXES boxes, all resting: the answer holds every box (nu = 0 to round-off: the three
 * supports of each box are independent) and its normal impulses are those of pp_lcp_solve on
 * the whole dense LCP that pp_peg_last_lcp assembles through the kept store, bit for bit: the
 * same matrix entries, and the same pivots.
 */
#define ROW_BOXES 80
START_TEST(test_large_island_matrix)
{
    row_scene rs;
    row_scene_build(&rs, ROW_BOXES, ROW_BOXES, 0.0);
    const int NB = rs.nb, NC = rs.nc;
    pp_peg_problem p = row_problem(&rs, 0.0);
    pp_peg_workspace *ws;
    ck_assert_int_eq(pp_peg_workspace_create(NB, NC, NC, 4, &ws), PP_OK);
    double *pn = calloc(NC, sizeof *pn), *nu = calloc(6 * NB, sizeof *nu);
    pp_mlcp_solution sol = {pn, NULL, NULL, NULL, nu, NULL};
    pp_peg_stats stats;
    ck_assert_int_eq(pp_peg_solve(ws, &p, NULL, NULL, &sol, NULL, &stats), PP_OK);
    ck_assert_int_eq(stats.islands, 1);
    ck_assert_int_eq(stats.lcp_size, 18 * NB + 2 * (NB - 1));
    ck_assert_int_ge(stats.largest_island, 1500);
    double weight = 0.0;
    for (int i = 0; i < NC; ++i) weight += rs.c[i].n[2] * pn[i];
    ck_assert_double_eq_tol(weight, NB * G * H, 1e-9 * NB * G * H); /* the row's weight */
    for (int i = 0; i < 6 * NB; ++i) ck_assert_msg(fabs(nu[i]) <= 1e-9, "nu[%d] = %g", i, nu[i]);

    int n;
    const double *M, *q;
    pp_peg_last_lcp(ws, &n, &M, &q);
    ck_assert_int_eq(n, stats.lcp_size);
    pp_lcp_workspace *lw;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &lw), PP_OK);
    double *z = malloc(sizeof(double) * n);
    pp_lcp_result r;
    ck_assert_int_eq(pp_lcp_solve(lw, n, M, q, NULL, NULL, z, &r), PP_OK);
    for (int j = 0; j < NC; ++j) /* p of set j is unknown j of the whole layout */
        ck_assert_msg(z[j] == pn[j], "p[%d]: island %.17g, whole %.17g", j, pn[j], z[j]);

    pp_lcp_workspace_destroy(lw);
    pp_peg_workspace_destroy(ws);
    free(z);
    free(pn);
    free(nu);
    row_scene_free(&rs);
}
END_TEST

/* One pp_peg_solve of the row scene; z of the whole LCP rebuilt from the outputs. */
typedef struct row_solved {
    double *pn, *beta, *sigma, *nu;
    pp_peg_stats stats;
    pp_status status;
} row_solved;

static void row_solve(pp_peg_workspace *ws, const row_scene *rs, double compliance,
                      unsigned char *basis, row_solved *out)
{
    out->pn = calloc((size_t)rs->nc, sizeof *out->pn);
    out->beta = calloc((size_t)rs->nc * 4, sizeof *out->beta);
    out->sigma = calloc((size_t)rs->nc, sizeof *out->sigma);
    out->nu = calloc(6 * (size_t)rs->nb, sizeof *out->nu);
    pp_mlcp_solution sol = {out->pn, out->beta, out->sigma, NULL, out->nu, NULL};
    pp_peg_problem p = row_problem(rs, compliance);
    out->status = pp_peg_solve(ws, &p, NULL, basis, &sol, NULL, &out->stats);
}

static void row_solved_free(row_solved *s)
{
    free(s->pn);
    free(s->beta);
    free(s->sigma);
    free(s->nu);
}

/* The dense path's solve s[0] and the column path's s[1] of rs: the same bits in every
 * impulse and velocity, in as many pivots. */
static void expect_same_solves(const row_scene *rs, const row_solved s[2])
{
    for (int j = 0; j < rs->nc; ++j) {
        ck_assert_msg(s[0].pn[j] == s[1].pn[j], "p[%d]: dense %.17g, by columns %.17g", j,
                      s[0].pn[j], s[1].pn[j]);
        for (int l = 0; l < 4; ++l) ck_assert(s[0].beta[4 * j + l] == s[1].beta[4 * j + l]);
    }
    for (int i = 0; i < 6 * rs->nb; ++i)
        ck_assert_msg(s[0].nu[i] == s[1].nu[i], "nu[%d]: dense %.17g, by columns %.17g", i,
                      s[0].nu[i], s[1].nu[i]);
    ck_assert_int_eq(s[0].stats.lcp.pivots, s[1].stats.lcp.pivots);
}

/*
 * The solve by columns against the dense one on a moderate island (CSC_BOXES boxes resting,
 * CSC_BOXES / 4 more hovering: n = 18 b + 2 (b - 1) = 538, above load sharing's bound of 256,
 * which the dense path would apply below it): with the by-columns threshold
 * (pp_peg_csc_min_n) at the LCP's sparse threshold the island is assembled by columns, with
 * it out of reach densely. Loop 0: no compliance; 1: compliance 1e-10 (the shifted diagonal);
 * 2: the second solve warm from the first's basis with the free velocities changed (the
 * warm start, its repair and Lemke from the given basis). Both answers solve the whole LCP
 * (pp_peg_last_lcp, evaluated independently by pp_lcp_evaluate: z >= 0, w >= 0, rel(z) <=
 * the solve's tolerance, z w = 0 to round-off), carry the row's weight in the normal
 * impulses, and are the same impulses and velocities: the matrices agree entry for entry
 * and both paths pivot alike, so bit for bit.
 */
#define CSC_BOXES 24
START_TEST(test_csc_equals_dense)
{
    const double compliance = _i == 1 ? 1e-10 : 0.0;
    const int warm = _i == 2;
    row_scene rs;
    row_scene_build(&rs, CSC_BOXES + CSC_BOXES / 4, CSC_BOXES, 0.02);
    const int n_expected = 18 * rs.nb + 2 * (rs.nb - 1);
    row_solved s[2];
    for (int path = 0; path < 2; ++path) { /* 0 dense, 1 by columns */
        const int saved = pp_peg_csc_min_n(path ? 161 /* PP_LCP_SPARSE_MIN_N */ : 1 << 30);
        pp_peg_workspace *ws;
        ck_assert_int_eq(pp_peg_workspace_create(rs.nb, rs.nc, rs.nc, 4, &ws), PP_OK);
        unsigned char *basis = warm ? calloc((size_t)n_expected, 1) : NULL;
        if (warm) { /* a first step, then the second from its basis with v* changed */
            row_solve(ws, &rs, compliance, basis, &s[path]);
            ck_assert_int_eq(s[path].status, PP_OK);
            row_solved_free(&s[path]);
            for (int b = 0; b < rs.nb; ++b) {
                rs.bodies[b].v[0] = 0.02 * (b % 3 - 1);
                rs.bodies[b].v[2] = -G * H * (1.0 + 0.1 * (b % 2));
            }
        }
        row_solve(ws, &rs, compliance, basis, &s[path]);
        if (warm)
            for (int b = 0; b < rs.nb; ++b) {
                rs.bodies[b].v[0] = 0.0;
                rs.bodies[b].v[2] = -G * H;
            }
        ck_assert_int_eq(s[path].status, PP_OK);
        ck_assert_int_eq(s[path].stats.islands, 1);
        ck_assert_int_eq(s[path].stats.largest_island, n_expected);
        ck_assert_int_eq(s[path].stats.lcp.status, PP_LCP_SOLVED);
        ck_assert_int_eq(s[path].stats.lcp.fallback, 0);
        if (warm) ck_assert(s[path].stats.lcp.warm_started || s[path].stats.lcp.warm_lemke);

        /* the whole LCP, evaluated at the answer's z */
        int n;
        const double *M, *q;
        pp_peg_last_lcp(ws, &n, &M, &q);
        ck_assert_int_eq(n, n_expected);
        double *z = calloc((size_t)n, sizeof *z), *w = calloc((size_t)n, sizeof *w);
        const int ns = rs.nc; /* layout [p (ns); beta (4 per frictional set); sigma] */
        int nf = 0;
        for (int j = 0; j < ns; ++j) nf += rs.c[j].mu > 0.0;
        for (int j = 0, slot = 0; j < ns; ++j) {
            z[j] = s[path].pn[j];
            if (!(rs.c[j].mu > 0.0)) continue;
            for (int l = 0; l < 4; ++l) z[ns + 4 * slot + l] = s[path].beta[4 * j + l];
            z[ns + 4 * nf + slot] = s[path].sigma[j];
            ++slot;
        }
        pp_lcp_result r;
        pp_lcp_evaluate(n, M, q, z, w, &r);
        const pp_lcp_options o = pp_lcp_options_default();
        ck_assert_double_ge(r.min_z, 0.0);
        ck_assert_double_le(r.relative_residual, o.residual_tol);
        ck_assert_double_le(r.complementarity, 1e-12 * r.scale);
        double weight = 0.0;
        for (int j = 0; j < ns; ++j) weight += rs.c[j].n[2] * s[path].pn[j];
        if (!warm) /* the resting boxes' weight (the hovering ones fall freely) */
            ck_assert_double_eq_tol(weight, CSC_BOXES * G * H, 1e-9 * CSC_BOXES * G * H);
        free(z);
        free(w);
        free(basis);
        pp_peg_workspace_destroy(ws);
        pp_peg_csc_min_n(saved);
    }
    expect_same_solves(&rs, s);
    row_solved_free(&s[0]);
    row_solved_free(&s[1]);
    row_scene_free(&rs);
}
END_TEST

/* rel(z) of the last pp_peg_solve's whole LCP (pp_peg_last_lcp) at z, and r(z) in *r */
static double last_lcp_rel(pp_peg_workspace *ws, const double *z, double *r, double *q_norm)
{
    int n;
    const double *M, *q;
    pp_peg_last_lcp(ws, &n, &M, &q);
    double *w = calloc((size_t)n, sizeof *w);
    pp_lcp_result res;
    pp_lcp_evaluate(n, M, q, z, w, &res);
    free(w);
    *r = res.residual;
    *q_norm = 0.0;
    for (int i = 0; i < n; ++i) *q_norm = fmax(*q_norm, fabs(q[i]));
    return res.relative_residual;
}

/*
 * The caller's fallback candidate (pp_peg_workspace_fallback_start): a re-linearisation
 * iterate's LCP (the row of CSC_BOXES resting boxes, by columns, the free velocities changed
 * as an iterate changes q) whose Lemke is given no pivots (the step's budget spent) and its
 * fallback a bound of a few passes over A. With the previous answer of the island (the first
 * solve's, exact) handed over in the whole LCP's order, the fallback's answer must be
 * approximate, usable (r(z) <= ||q||_inf, z >= 0, finite) and no worse than that answer
 * carried over, evaluated on the iterate's own LCP; without it (z = 0 and a sweep) it is
 * worse, so the candidate is what the test measures.
 */
START_TEST(test_iterate_fallback_candidate)
{
    row_scene rs;
    row_scene_build(&rs, CSC_BOXES + CSC_BOXES / 4, CSC_BOXES, 0.02);
    const int saved = pp_peg_csc_min_n(161 /* PP_LCP_SPARSE_MIN_N */);
    pp_peg_workspace *ws;
    ck_assert_int_eq(pp_peg_workspace_create(rs.nb, rs.nc, rs.nc, 4, &ws), PP_OK);
    row_solved first;
    row_solve(ws, &rs, 0.0, NULL, &first);
    ck_assert_int_eq(first.status, PP_OK);
    const int n = first.stats.lcp_size;
    double *previous = malloc((size_t)n * sizeof *previous);
    memcpy(previous, pp_peg_last_z(ws), (size_t)n * sizeof *previous);
    row_solved_free(&first);
    for (int b = 0; b < rs.nb; ++b) { /* the iterate: another q */
        rs.bodies[b].v[0] = 1e-4 * (b % 3 - 1);
        rs.bodies[b].v[2] = -G * H * (1.0 + 1e-4 * (b % 2));
    }
    double rel[2], r, q_norm;
    for (int given = 0; given < 2; ++given) {
        pp_lcp_budget spent = pp_lcp_budget_start(0.0, 0); /* the step's pivots all spent */
        pp_lcp_options o = pp_lcp_options_default();
        o.budget = &spent;
        o.fallback_work = 5.0 * 40.0 * n; /* a few passes over A (~40 entries a column) */
        pp_peg_workspace_fallback_start(ws, given ? previous : NULL);
        row_solved it;
        it.pn = calloc((size_t)rs.nc, sizeof *it.pn);
        it.beta = calloc((size_t)rs.nc * 4, sizeof *it.beta);
        it.sigma = calloc((size_t)rs.nc, sizeof *it.sigma);
        it.nu = calloc(6 * (size_t)rs.nb, sizeof *it.nu);
        pp_mlcp_solution sol = {it.pn, it.beta, it.sigma, NULL, it.nu, NULL};
        pp_peg_problem p = row_problem(&rs, 0.0);
        it.status = pp_peg_solve(ws, &p, &o, NULL, &sol, NULL, &it.stats);
        pp_peg_workspace_fallback_start(ws, NULL);
        ck_assert_int_eq(it.status, PP_ERR_SOLVER);
        ck_assert_int_eq(it.stats.lcp.status, PP_LCP_APPROXIMATE);
        ck_assert_int_eq(it.stats.lcp_size, n);
        const double *z = pp_peg_last_z(ws);
        for (int i = 0; i < n; ++i) {
            ck_assert(isfinite(z[i]));
            ck_assert_double_ge(z[i], 0.0);
        }
        rel[given] = last_lcp_rel(ws, z, &r, &q_norm);
        ck_assert_double_le(r, q_norm);
        row_solved_free(&it);
    }
    const double carried = last_lcp_rel(ws, previous, &r, &q_norm);
    ck_assert_double_le(rel[1], carried);
    ck_assert_double_lt(rel[1], rel[0]);
    printf("check_peg_mlcp: an iterate's fallback (n = %d, no pivots): rel %.3g from the "
           "previous answer (%.3g carried over), %.3g without it\n", n, rel[1], carried, rel[0]);
    free(previous);
    pp_peg_workspace_destroy(ws);
    pp_peg_csc_min_n(saved);
    row_scene_free(&rs);
}
END_TEST

/*
 * The same with ODE's surface extensions on the ground contacts (pegplus/mlcp.h): soft
 * contact (cfm on the normal diagonal, erp on the gap), anisotropic friction with slip (a
 * block on the friction diagonal), rolling and spinning friction (the rolling unknowns'
 * columns and pyramid, their shifted diagonal), and a compliance: every entry the set blocks
 * add to J^T W J. The solve by columns and the dense one give the same impulses and
 * velocities bit for bit, after the same pivots, and the answer passes the solver's
 * independent residual test.
 */
START_TEST(test_csc_surfaces_equal_dense)
{
    row_scene rs;
    row_scene_build(&rs, CSC_BOXES, CSC_BOXES, 0.0);
    for (int i = 0; i < rs.nc; ++i) {
        pp_contact *c = &rs.c[i];
        if (c->body_a != -1) continue;
        c->surface = PP_CONTACT_SOFT | PP_CONTACT_ANISOTROPIC | PP_CONTACT_SLIP |
                     PP_CONTACT_ROLLING;
        c->soft_cfm = 1e-4;
        c->soft_erp = 0.2;
        c->mu2 = 0.3;
        c->t1[0] = 1.0;
        c->slip[0] = 1e-3;
        c->slip[1] = 2e-3;
        c->rho[0] = 0.01;
        c->rho[1] = 0.02;
        c->rho[2] = 0.005;
    }
    for (int b = 0; b < rs.nb; ++b) { /* sliding and turning a little */
        rs.bodies[b].v[0] = 0.05 * (b % 3 - 1);
        rs.bodies[b].w[2] = 0.1 * (b % 2);
    }
    row_solved s[2];
    for (int path = 0; path < 2; ++path) {
        const int saved = pp_peg_csc_min_n(path ? 161 /* PP_LCP_SPARSE_MIN_N */ : 1 << 30);
        pp_peg_workspace *ws;
        ck_assert_int_eq(pp_peg_workspace_create(rs.nb, rs.nc, rs.nc, 4, &ws), PP_OK);
        row_solve(ws, &rs, 1e-10, NULL, &s[path]);
        ck_assert_int_eq(s[path].status, PP_OK);
        ck_assert_int_eq(s[path].stats.islands, 1);
        ck_assert_int_gt(s[path].stats.largest_island, 18 * rs.nb + 2 * (rs.nb - 1));
        ck_assert_int_eq(s[path].stats.lcp.status, PP_LCP_SOLVED);
        ck_assert_int_eq(s[path].stats.lcp.fallback, 0);
        const pp_lcp_options o = pp_lcp_options_default();
        ck_assert_double_le(s[path].stats.lcp.relative_residual, o.residual_tol);
        ck_assert_double_ge(s[path].stats.lcp.min_z, 0.0);
        pp_peg_workspace_destroy(ws);
        pp_peg_csc_min_n(saved);
    }
    expect_same_solves(&rs, s);
    double weight = 0.0;
    for (int j = 0; j < rs.nc; ++j) weight += rs.c[j].n[2] * s[0].pn[j];
    ck_assert_double_gt(weight, 0.0); /* the boxes are held */
    ck_assert_int_gt(s[0].stats.lcp.pivots, 0);
    row_solved_free(&s[0]);
    row_solved_free(&s[1]);
    row_scene_free(&rs);
}
END_TEST

#if defined(__SANITIZE_ADDRESS__)
#define PP_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PP_TEST_ASAN 1
#endif
#endif

#ifndef PP_TEST_ASAN
/* The process's address space now (VmSize, bytes; 0 if unknown). */
static size_t address_space(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %zu kB", &kb) == 1) break;
    fclose(f);
    return kb * 1024;
}
#endif

/*
 * Memory of a large island's step: a row of MEMORY_BOXES boxes (n = 18 b + 2 (b - 1) = 9 998
 * unknowns, one island), the first 12 resting and the others hovering, solved in a child
 * process whose address space is capped (RLIMIT_AS) at MEMORY_ROOM bytes above what it holds
 * before the solve. The dense M alone would be n^2 doubles = 800 MB, beyond the cap: the old
 * path's calloc of it failed there (PP_ERR_NO_MEMORY). By columns the step fits, and its
 * answer holds the 12 resting boxes (their normal impulses carry their weight, nu = 0 to
 * round-off) while the others fall freely (nu* kept). Under AddressSanitizer, whose shadow
 * memory defeats an address-space cap, the step runs uncapped.
 */
#define MEMORY_BOXES 500
#define MEMORY_RESTING 12
#define MEMORY_ROOM ((size_t)192 << 20)
START_TEST(test_large_island_memory)
{
    row_scene rs;
    row_scene_build(&rs, MEMORY_BOXES, MEMORY_RESTING, 0.02);
    const int n = 18 * rs.nb + 2 * (rs.nb - 1);
    ck_assert_msg((double)n * n * sizeof(double) > 3.0 * MEMORY_ROOM,
                  "the dense M must overflow the cap");
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        pp_peg_workspace *ws;
        if (pp_peg_workspace_create(rs.nb, rs.nc, rs.nc, 4, &ws) != PP_OK) _exit(10);
        double *pn = calloc((size_t)rs.nc, sizeof *pn), *nu = calloc(6 * (size_t)rs.nb, sizeof *nu);
        if (!pn || !nu) _exit(11);
#ifndef PP_TEST_ASAN
        const size_t now = address_space();
        if (now == 0) _exit(12);
        struct rlimit cap = {now + MEMORY_ROOM, now + MEMORY_ROOM};
        if (setrlimit(RLIMIT_AS, &cap) != 0) _exit(13);
#endif
        pp_mlcp_solution sol = {pn, NULL, NULL, NULL, nu, NULL};
        pp_peg_problem p = row_problem(&rs, 0.0);
        pp_peg_stats stats;
        /* the whole island by columns: constraint screening (check_peg_screen) would leave the
         * hovering boxes out of the LCP */
        pp_peg_screening(0);
        if (pp_peg_solve(ws, &p, NULL, NULL, &sol, NULL, &stats) != PP_OK) _exit(14);
        if (stats.islands != 1 || stats.largest_island != n) _exit(15);
        double weight = 0.0;
        for (int i = 0; i < rs.nc; ++i) weight += rs.c[i].n[2] * pn[i];
        const double expected = MEMORY_RESTING * G * H;
        if (!(fabs(weight - expected) <= 1e-9 * expected)) _exit(16);
        for (int b = 0; b < rs.nb; ++b)
            for (int r = 0; r < 6; ++r) {
                const double free_v = r == 2 ? -G * H : 0.0;
                const double v = nu[6 * b + r], want = b < MEMORY_RESTING ? 0.0 : free_v;
                if (!(fabs(v - want) <= 1e-9)) _exit(17);
            }
        _exit(0);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the capped step failed: exit %d (signal %d)",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    row_scene_free(&rs);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_mlcp");
    TCase *tc = tcase_create("peg_mlcp");
    /* the column comparisons assemble islands of 500+ unknowns twice: seconds under ASan
     * with the other core busy, beyond Check's 4 s default */
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_u_only_equals_standard, 0, 2);
    tcase_add_test(tc, test_corner_passage);
    tcase_add_test(tc, test_resting_near_edge);
    tcase_add_loop_test(tc, test_end_gap, 0, (int)(sizeof k_gap / sizeof k_gap[0]));
    tcase_add_test(tc, test_lcp_rows);
    tcase_add_loop_test(tc, test_friction_cone, 0, 40);
    tcase_add_test(tc, test_two_bodies_momentum);
    tcase_add_test(tc, test_secondary_frame);
    tcase_add_loop_test(tc, test_random_states, 0, 8);
    tcase_add_loop_test(tc, test_islands_equal_whole, 0, 4);
    tcase_add_test(tc, test_islands_warm_start);
    tcase_add_test(tc, test_island_failure);
    tcase_add_test(tc, test_solver_failure);
    tcase_add_test(tc, test_bad_input);
    tcase_add_loop_test(tc, test_rolling_pyramid, 0, 60);
    tcase_add_test(tc, test_large_island_matrix);
    tcase_add_loop_test(tc, test_csc_equals_dense, 0, 3);
    tcase_add_test(tc, test_iterate_fallback_candidate);
    tcase_add_test(tc, test_csc_surfaces_equal_dense);
    tcase_add_test(tc, test_large_island_memory);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
