/*
 * Unit tests of joint rows in the time-stepping LCP (pegplus/peg.h pp_joint_row, pp_peg_solve;
 * contact/src/peg_joints.c), against closed forms:
 *  - a motor row: the target speed when FMax allows it, exactly h FMax when it does not;
 *  - a stop: no impulse while the row separates, the impulse that stops it when it closes;
 *  - an equality (rigid rod) between two bodies, the lower resting on the ground: the contact
 *    carries both weights (the joint-constrained mass through the Schur complement), the rod
 *    keeps its length rate at 0, the joint impulse carries the upper weight; with CFM, the
 *    soft rod's closed form;
 *  - an equality between two free bodies keeps linear momentum;
 *  - redundant equalities without CFM are regularised and say so;
 *  - bad joint rows are rejected.
 */
#include "pegplus/features.h"
#include "pegplus/mlcp.h"
#include "pegplus/peg.h"

#include <check.h>
#include <math.h>
#include <string.h>

#define H 0.01
#define G 9.81

static pp_peg_workspace *g_ws;

static void setup(void) { ck_assert_int_eq(pp_peg_workspace_create(8, 16, 16, 8, &g_ws), PP_OK); }
static void teardown(void) { pp_peg_workspace_destroy(g_ws); }

static pp_mlcp_body body(double mass, double z, double vz)
{
    pp_mlcp_body b;
    memset(&b, 0, sizeof b);
    b.inv_mass = 1.0 / mass;
    for (int i = 0; i < 3; ++i) b.inv_inertia[4 * i] = 1.0 / (0.1 * mass);
    b.x[2] = z;
    b.v[2] = vz;
    return b;
}

/* A row along +x on body a (to the world), J = [e_x, 0 | 0, 0]. */
static pp_joint_row x_row(int a, double c, double lo, double hi)
{
    pp_joint_row r;
    memset(&r, 0, sizeof r);
    r.body_a = a;
    r.body_b = -1;
    r.J[0] = 1.0;
    r.c = c;
    r.cfm = 0.0;
    r.lo = lo;
    r.hi = hi;
    return r;
}

typedef struct out {
    double velocity[6 * 8], joint[16], normal[16];
    pp_peg_stats stats;
    pp_status status;
} out;

static out solve(const pp_mlcp_body *bodies, int nb, const pp_contact *contacts, int nc,
                 const pp_peg_set *sets, int ns, const pp_joint_row *rows, int nj)
{
    out o;
    memset(&o, 0, sizeof o);
    pp_peg_problem p = {{H, nb, bodies, nc, contacts, 8, 0.0, 0, 0.0}, ns, sets, nj, rows};
    pp_mlcp_solution s;
    memset(&s, 0, sizeof s);
    s.normal_impulse = o.normal;
    s.velocity = o.velocity;
    s.joint_impulse = o.joint;
    o.status = pp_peg_solve(g_ws, &p, NULL, NULL, &s, NULL, &o.stats);
    return o;
}

START_TEST(test_motor_row)
{
    pp_mlcp_body b = body(2.0, 0.0, 0.0);
    /* target 3 m/s: p = m v = 6 N s, within h FMax = 10 N s for FMax 1000 */
    pp_joint_row r = x_row(0, 3.0, -1000.0, 1000.0);
    out o = solve(&b, 1, NULL, 0, NULL, 0, &r, 1);
    ck_assert_int_eq(o.status, PP_OK);
    ck_assert_double_eq_tol(o.velocity[0], 3.0, 1e-12);
    ck_assert_double_eq_tol(o.joint[0], 6.0, 1e-12);
    ck_assert_int_eq(o.stats.joint_unknowns, 4);
    /* FMax 100: h FMax = 1 N s, the speed reached is 0.5 m/s */
    r = x_row(0, 3.0, -100.0, 100.0);
    o = solve(&b, 1, NULL, 0, NULL, 0, &r, 1);
    ck_assert_int_eq(o.status, PP_OK);
    ck_assert_double_eq_tol(o.joint[0], 1.0, 1e-12);
    ck_assert_double_eq_tol(o.velocity[0], 0.5, 1e-12);
    /* and backwards */
    r = x_row(0, -3.0, -100.0, 100.0);
    o = solve(&b, 1, NULL, 0, NULL, 0, &r, 1);
    ck_assert_double_eq_tol(o.joint[0], -1.0, 1e-12);
    /* the row's CFM makes it soft: (m^-1 + cfm/h) p = c - v* */
    r = x_row(0, 3.0, -1000.0, 1000.0);
    r.cfm = 0.01;
    o = solve(&b, 1, NULL, 0, NULL, 0, &r, 1);
    ck_assert_double_eq_tol(o.joint[0], 3.0 / (0.5 + 0.01 / H), 1e-12);
}
END_TEST

START_TEST(test_stop_row)
{
    /* a stop [0, inf): moving away (v = +1 along the row), no impulse; moving into it
     * (v = -1), the impulse that stops it, m |v| */
    pp_mlcp_body b = body(2.0, 0.0, 0.0);
    b.v[0] = 1.0;
    pp_joint_row r = x_row(0, 0.0, 0.0, INFINITY);
    out o = solve(&b, 1, NULL, 0, NULL, 0, &r, 1);
    ck_assert_int_eq(o.status, PP_OK);
    ck_assert_double_eq_tol(o.joint[0], 0.0, 1e-15);
    ck_assert_double_eq_tol(o.velocity[0], 1.0, 1e-15);
    ck_assert_int_eq(o.stats.joint_unknowns, 1);
    b.v[0] = -1.0;
    o = solve(&b, 1, NULL, 0, NULL, 0, &r, 1);
    ck_assert_double_eq_tol(o.joint[0], 2.0, 1e-12);
    ck_assert_double_eq_tol(o.velocity[0], 0.0, 1e-12);
    /* the other side's stop (-inf, 0]: pulls back a body moving along +x */
    b.v[0] = 1.0;
    r = x_row(0, 0.0, -INFINITY, 0.0);
    o = solve(&b, 1, NULL, 0, NULL, 0, &r, 1);
    ck_assert_double_eq_tol(o.joint[0], -2.0, 1e-12);
    ck_assert_double_eq_tol(o.velocity[0], 0.0, 1e-12);
}
END_TEST

/* Body 0 (1 kg) rests on the ground through a frictionless contact; body 1 (3 kg) sits 0.5 m
 * above it on a rigid vertical rod (an equality along z). Both start at rest; the free
 * velocities are -g h. The contact must carry both weights, p_n = (1 + 3) g h, the rod the
 * upper one, -3 g h on body 0 ... and every body ends at rest. */
START_TEST(test_rod_on_ground)
{
    pp_mlcp_body b[2] = {body(1.0, 0.0, -G * H), body(3.0, 0.5, -G * H)};
    pp_contact c;
    memset(&c, 0, sizeof c);
    c.body_a = -1;
    c.body_b = 0;
    c.n[2] = 1.0;
    c.p_a[2] = 0.0;
    c.psi = 0.0;
    c.mu = 0.0;
    pp_peg_set set = {PP_PEG_SET_U, PP_PEG_VERTEX_FACE, 0, 1};
    pp_joint_row rod;
    memset(&rod, 0, sizeof rod);
    rod.body_a = 0;
    rod.body_b = 1;
    rod.J[2] = 1.0;  /* v_0z - v_1z = 0 */
    rod.J[8] = -1.0;
    rod.lo = -INFINITY;
    rod.hi = INFINITY;
    out o = solve(b, 2, &c, 1, &set, 1, &rod, 1);
    ck_assert_int_eq(o.status, PP_OK);
    ck_assert_int_eq(o.stats.joint_equalities, 1);
    ck_assert_int_eq(o.stats.joint_unknowns, 0);
    ck_assert_double_eq_tol(o.normal[0], 4.0 * G * H, 1e-12);
    ck_assert_double_eq_tol(o.joint[0], -3.0 * G * H, 1e-12);
    for (int i = 0; i < 12; ++i) ck_assert_double_eq_tol(o.velocity[i], 0.0, 1e-12);
    /* with CFM the rod gives: v_0 = 0 (contact), v_0 - v_1 = -(cfm/h) p_j (the row's
     * residual 0), v_1 = -g h - p_j / 3, so p_j = -g h / (cfm/h + 1/3), p_n = g h - p_j:
     * the upper body is still sinking, the ground carries less than both weights this step */
    rod.cfm = 1e-3;
    o = solve(b, 2, &c, 1, &set, 1, &rod, 1);
    const double pj = -G * H / (rod.cfm / H + 1.0 / 3.0);
    ck_assert_double_eq_tol(o.joint[0], pj, 1e-12);
    ck_assert_double_eq_tol(o.normal[0], G * H - pj, 1e-12);
    ck_assert_double_eq_tol(o.velocity[2], 0.0, 1e-12);
    ck_assert_double_eq_tol(o.velocity[8], rod.cfm / H * pj, 1e-12);
}
END_TEST

/* Two free bodies pulled together by a motor-less equality that asks for a closing speed:
 * linear momentum is kept, the relative speed is the row's c. */
START_TEST(test_equality_momentum)
{
    pp_mlcp_body b[2] = {body(1.0, 0.0, 0.0), body(4.0, 1.0, 0.0)};
    b[0].v[0] = 0.7;
    b[1].v[0] = -0.2;
    pp_joint_row r;
    memset(&r, 0, sizeof r);
    r.body_a = 0;
    r.body_b = 1;
    r.J[0] = 1.0;
    r.J[6] = -1.0;
    r.c = 0.25; /* v_0x - v_1x = 0.25 at the end */
    r.lo = -INFINITY;
    r.hi = INFINITY;
    out o = solve(b, 2, NULL, 0, NULL, 0, &r, 1);
    ck_assert_int_eq(o.status, PP_OK);
    ck_assert_double_eq_tol(o.velocity[0] - o.velocity[6], 0.25, 1e-12);
    ck_assert_double_eq_tol(1.0 * o.velocity[0] + 4.0 * o.velocity[6], 0.7 - 0.8, 1e-12);
}
END_TEST

/* The same equality twice with CFM = 0 (a redundant loop): A_EE is singular; it is solved
 * regularised, said in the statistics, and the row still holds to the regularisation's size. */
START_TEST(test_redundant_equalities)
{
    pp_mlcp_body b = body(2.0, 0.0, 0.0);
    pp_joint_row r[2] = {x_row(0, 1.5, -INFINITY, INFINITY), x_row(0, 1.5, -INFINITY, INFINITY)};
    out o = solve(&b, 1, NULL, 0, NULL, 0, r, 2);
    ck_assert_int_eq(o.status, PP_OK);
    ck_assert_int_eq(o.stats.joint_regularised, 1);
    ck_assert_double_eq_tol(o.velocity[0], 1.5, 1e-8);
    ck_assert_double_eq_tol(o.joint[0] + o.joint[1], 3.0, 1e-8);
}
END_TEST

START_TEST(test_bad_rows)
{
    pp_mlcp_body b = body(1.0, 0.0, 0.0);
    pp_joint_row r = x_row(0, 0.0, -INFINITY, INFINITY);
    r.J[3] = NAN;
    ck_assert_int_eq(solve(&b, 1, NULL, 0, NULL, 0, &r, 1).status, PP_ERR_INVALID_ARGUMENT);
    r = x_row(0, 0.0, 1.0, 2.0); /* bounds not around 0 */
    ck_assert_int_eq(solve(&b, 1, NULL, 0, NULL, 0, &r, 1).status, PP_ERR_INVALID_ARGUMENT);
    r = x_row(3, 0.0, -1.0, 1.0); /* no body 3 */
    ck_assert_int_eq(solve(&b, 1, NULL, 0, NULL, 0, &r, 1).status, PP_ERR_INVALID_ARGUMENT);
    r = x_row(0, 0.0, -1.0, 1.0);
    r.cfm = -1.0;
    ck_assert_int_eq(solve(&b, 1, NULL, 0, NULL, 0, &r, 1).status, PP_ERR_INVALID_ARGUMENT);
    /* an equality with no body that can move and no CFM: singular, reported, no NaN */
    b.inv_mass = 0.0;
    memset(b.inv_inertia, 0, sizeof b.inv_inertia);
    r = x_row(0, 1.0, -INFINITY, INFINITY);
    out o = solve(&b, 1, NULL, 0, NULL, 0, &r, 1);
    ck_assert_int_eq(o.status, PP_ERR_SOLVER);
    ck_assert(isfinite(o.velocity[0]) && o.joint[0] == 0.0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_joints");
    TCase *tc = tcase_create("rows");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_motor_row);
    tcase_add_test(tc, test_stop_row);
    tcase_add_test(tc, test_rod_on_ground);
    tcase_add_test(tc, test_equality_momentum);
    tcase_add_test(tc, test_redundant_equalities);
    tcase_add_test(tc, test_bad_rows);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
