/*
 * PLUS in joint space (pegplus/impact.h "Joint space"): A = G W_c G^T and du = W_c G^T pi
 * for contacts on bodies joined by bilateral rows, against answers from outside the code:
 *  - two bodies welded by six rows are one rigid body: A equals the free A of that body;
 *  - the PLUS paper's example-4 triple pendulum at the moment its tip sphere touches the
 *    ground: A equals G M^-1 G^T of the pendulum in its three joint angles (a planar
 *    Lagrangian model, independent of this code), and PLUS's answer equals Routh's
 *    integration of the same impact in the normal impulse (sliding, reversal, e = 1);
 *  - redundant rows (a joint twice, a row that is a sum of others) change nothing.
 * Every case also checks J_E du = 0 and dKE = pi . v + 1/2 pi^T A pi.
 */
#include "plus_fixtures.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL_ROUNDOFF 1e-12 /* relative: identities that hold to round-off */
#define TOL_MODEL 1e-9     /* relative: against the reference model's printed digits */
#define MAX_ROWS 32
#define PI_ 3.14159265358979323846

static void cross(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* The three rows of a ball joint at world point P between bodies a and b (b = -1: the
 * world), as ODE builds them: relative velocity of P along e_x, e_y, e_z. */
static int add_ball_rows(pp_plus_bilateral_row *rows, int at, const fx_scene *s, int a, int b,
                         const double P[3])
{
    for (int i = 0; i < 3; ++i) {
        pp_plus_bilateral_row *r = &rows[at++];
        memset(r, 0, sizeof *r);
        r->body[0] = a;
        r->body[1] = b;
        const double e[3] = {i == 0, i == 1, i == 2};
        const int ids[2] = {a, b};
        for (int side = 0; side < 2; ++side) {
            if (ids[side] < 0) continue;
            const double sign = side ? -1.0 : 1.0;
            double arm[3] = {P[0] - s->com[ids[side]][0], P[1] - s->com[ids[side]][1],
                             P[2] - s->com[ids[side]][2]};
            double m[3];
            cross(arm, e, m);
            for (int k = 0; k < 3; ++k) {
                r->row[side][k] = sign * e[k];
                r->row[side][3 + k] = sign * m[k];
            }
        }
    }
    return at;
}

/* An angular row: relative angular velocity of a and b about axis u held at zero. */
static int add_angular_row(pp_plus_bilateral_row *rows, int at, int a, int b, const double u[3])
{
    pp_plus_bilateral_row *r = &rows[at++];
    memset(r, 0, sizeof *r);
    r->body[0] = a;
    r->body[1] = b;
    for (int k = 0; k < 3; ++k) {
        r->row[0][3 + k] = u[k];
        r->row[1][3 + k] = b >= 0 ? -u[k] : 0.0;
    }
    return at;
}

/* J_E du for each row (du: 6 per body). */
static double row_rate(const pp_plus_bilateral_row *r, const double *du)
{
    double sum = 0.0;
    for (int side = 0; side < 2; ++side)
        if (r->body[side] >= 0)
            for (int i = 0; i < 6; ++i) sum += r->row[side][i] * du[6 * r->body[side] + i];
    return sum;
}

/* Solve with A from the joint space, then check J_E du = 0 and the energy identity with
 * du = W_c G^T pi applied to the bodies. Returns the result in run. */
static void check_velocity_change(const fx_scene *s, pp_plus_joint_space *js, int nrows,
                                  const pp_plus_bilateral_row *rows, const double *pi,
                                  const char *label)
{
    double du[6 * FX_MAX_BODIES], p_e[MAX_ROWS];
    ck_assert_int_eq(pp_plus_body_velocity_change_constrained(js, s->body_count, s->bodies, nrows,
                                                              rows, s->contact_count, s->jac, pi,
                                                              du, p_e),
                     PP_OK);
    double scale = 0.0;
    for (int i = 0; i < 6 * s->body_count; ++i) scale = fmax(scale, fabs(du[i]));
    for (int e = 0; e < nrows; ++e)
        ck_assert_msg(fabs(row_rate(&rows[e], du)) <= TOL_ROUNDOFF * scale,
                      "%s: J_E du = %g on row %d (|du| %g)", label, row_rate(&rows[e], du), e,
                      scale);
    /* dKE from the bodies against pi . v + 1/2 pi^T A pi */
    double nu_end[6 * FX_MAX_BODIES];
    for (int i = 0; i < 6 * s->body_count; ++i) nu_end[i] = s->nu[i] + du[i];
    const double dke = fx_kinetic_energy(s, nu_end) - fx_kinetic_energy(s, s->nu);
    const int n = 3 * s->contact_count;
    double quad = 0.0, lin = 0.0;
    for (int i = 0; i < n; ++i) {
        lin += pi[i] * s->v[i];
        for (int j = 0; j < n; ++j) quad += pi[i] * s->A[i * n + j] * pi[j];
    }
    /* the rows hold before the impact in these scenes, so the identity is exact */
    ck_assert_msg(fabs(dke - (lin + 0.5 * quad)) <= 1e-10 * fmax(1.0, fx_kinetic_energy(s, s->nu)),
                  "%s: dKE %.12g vs pi.v + pi'A pi/2 = %.12g", label, dke, lin + 0.5 * quad);
}

/* ----------------------------------------------------------------------------------- */
/* Two bodies welded together are one body                                              */
/* ----------------------------------------------------------------------------------- */

START_TEST(test_welded_pair_is_one_body)
{
    /* two bricks, 2 kg and 3 kg, side by side along x, welded by a ball at their shared face
     * centre and three angular rows; a contact under the corner of the first one. */
    const double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const double dims1[3] = {0.4, 0.6, 0.8}, dims2[3] = {0.6, 0.6, 0.8};
    const double c1[3] = {-0.2, 0, 1}, c2[3] = {0.3, 0, 1};
    const double zero[3] = {0, 0, 0}, v0[3] = {0.3, -0.1, -2.0};
    pp_plus_contact_params p = {0.4, 0.5, 0.01, 0.1};
    fx_scene s;
    fx_scene_init(&s);
    int a = fx_add_brick(&s, 2.0, dims1, R, c1, v0, zero);
    int b = fx_add_brick(&s, 3.0, dims2, R, c2, v0, zero);
    const double corner[3] = {-0.4, -0.3, 0.6};
    fx_add_ground_contact(&s, a, corner, p);
    fx_scene_finish(&s);

    pp_plus_bilateral_row rows[MAX_ROWS];
    const double P[3] = {0, 0, 1};
    int nr = add_ball_rows(rows, 0, &s, a, b, P);
    for (int i = 0; i < 3; ++i) nr = add_angular_row(rows, nr, a, b, (const double[3]){i == 0, i == 1, i == 2});
    pp_plus_joint_space *js = NULL;
    ck_assert_int_eq(pp_plus_joint_space_create(&js), PP_OK);
    double A[9];
    ck_assert_int_eq(pp_plus_delassus_constrained(js, s.body_count, s.bodies, nr, rows, 1, s.jac, A),
                     PP_OK);
    ck_assert_int_eq(pp_plus_joint_space_rank(js), 6);

    /* the welded body: 5 kg at x = 0.1, inertia by the parallel-axis theorem */
    fx_scene one;
    fx_scene_init(&one);
    const double m1 = 2.0, m2 = 3.0, M = m1 + m2, x = (m1 * c1[0] + m2 * c2[0]) / M;
    const double d1 = c1[0] - x, d2 = c2[0] - x;
    const double I1[3] = {m1 / 12 * (0.36 + 0.64), m1 / 12 * (0.16 + 0.64), m1 / 12 * (0.16 + 0.36)};
    const double I2[3] = {m2 / 12 * (0.36 + 0.64), m2 / 12 * (0.36 + 0.64), m2 / 12 * (0.36 + 0.36)};
    const double I[3] = {I1[0] + I2[0], I1[1] + I2[1] + m1 * d1 * d1 + m2 * d2 * d2,
                         I1[2] + I2[2] + m1 * d1 * d1 + m2 * d2 * d2};
    fx_add_body(&one, M, I, R, (const double[3]){x, 0, 1}, v0, zero);
    fx_add_ground_contact(&one, 0, corner, p);
    fx_scene_finish(&one);
    for (int i = 0; i < 9; ++i)
        ck_assert_msg(fabs(A[i] - one.A[i]) <= TOL_ROUNDOFF * one.A[8], "A[%d] = %.15g, welded body %.15g",
                      i, A[i], one.A[i]);

    memcpy(s.A, A, sizeof A);
    const double pi[3] = {0.7, -0.4, 3.0};
    check_velocity_change(&s, js, nr, rows, pi, "welded");
    pp_plus_joint_space_destroy(js);
}
END_TEST

/* ----------------------------------------------------------------------------------- */
/* PLUS example 4: the triple pendulum                                                  */
/* ----------------------------------------------------------------------------------- */

/*
 * Paper §4d: three pin-connected cylinders (1 m, r 0.1 m, 1 kg), a sphere (r 0.25 m, 1 kg)
 * welded with its centre at the free end of the third, pivot 2 m above the ground; released
 * from rest at theta = (pi/4, 3pi/4, 5pi/6) (absolute angles from the downward vertical),
 * the sphere touches the ground 0.6722 s later. The state at touch below comes from an RK4
 * integration of the planar Lagrangian model (dt = 2e-5 s), which also gives G M^-1 G^T of
 * the contact point (x: tangent, z: normal) in the joint angles, printed to 13 digits:
 */
static const double ex4_phi[3] = {0.49567348632340485, 0.27234355988557013, 1.6637141050473028};
static const double ex4_dphi[3] = {0.19672149220111046, -2.677689088745659, -8.236518220642264};
static const double ex4_A[2][2] = {{0.42465129977805965, 0.15036966205079677},
                                   {0.15036966205079677, 0.7320218500466121}};
static const double ex4_v[2] = {-3.700863483376839, -8.827692291180519};
/* Routh's integration of that impact in the normal impulse P (A constant, Poisson e = 1,
 * mu = 0.1): sliding backwards until P = 19.19, where v_x reaches 0; sticking would need
 * |A_xz / A_xx| = 0.354 > mu, so it slides forwards to P = 2 P_c = 23.633 (closed form:
 * P_c = -v_z / (A_zz + mu A_zx), P_1 = -v_x / (A_xz + mu A_xx)). */
static void ex4_routh(double v_end[2], double pi[2])
{
    const double mu = 0.1, (*A)[2] = ex4_A;
    const double pc = -ex4_v[1] / (A[1][1] + mu * A[1][0]), ptot = 2.0 * pc;
    const double p1 = -ex4_v[0] / (A[0][1] + mu * A[0][0]);
    v_end[0] = (A[0][1] - mu * A[0][0]) * (ptot - p1);
    v_end[1] = ex4_v[1] + (A[1][1] + mu * A[1][0]) * p1 + (A[1][1] - mu * A[1][0]) * (ptot - p1);
    pi[0] = mu * p1 - mu * (ptot - p1);
    pi[1] = ptot;
}

/* The pendulum as free bodies at ex4_phi / ex4_dphi; returns the rows (two hinges between
 * links and one to the world, each 3 ball rows and 2 angular rows, as ODE's hinge). */
static int build_pendulum(fx_scene *s, pp_plus_bilateral_row *rows, pp_plus_contact_params p)
{
    const double L = 1.0, r = 0.1, Rs = 0.25;
    const double Ic = (3 * r * r + L * L) / 12.0, Ia = 0.5 * r * r, Is = 0.4 * Rs * Rs;
    fx_scene_init(s);
    double joint[4][3] = {{0, 0, 2}}, u[3][3];
    for (int i = 0; i < 3; ++i) {
        u[i][0] = sin(ex4_phi[i]);
        u[i][1] = 0;
        u[i][2] = -cos(ex4_phi[i]);
        for (int k = 0; k < 3; ++k) joint[i + 1][k] = joint[i][k] + L * u[i][k];
    }
    /* link velocities: d/dt of point s along link i = sum_{k<i} L phi'_k t_k + s phi'_i t_i,
     * t = (cos phi, 0, sin phi); angular velocity (0, -phi', 0) */
    for (int i = 0; i < 3; ++i) {
        const double c = i < 2 ? 0.5 : 0.75; /* link 3 carries the sphere: 2 kg, centre 0.75 */
        const double m = i < 2 ? 1.0 : 2.0;
        const double Iperp = i < 2 ? Ic : Ic + 0.0625 + Is + 0.0625, Iax = i < 2 ? Ia : Ia + Is;
        double com[3], v[3] = {0, 0, 0}, w[3] = {0, -ex4_dphi[i], 0};
        for (int k = 0; k < 3; ++k) com[k] = joint[i][k] + c * u[i][k];
        for (int k = 0; k <= i; ++k) {
            const double arm = k < i ? L : c;
            v[0] += arm * ex4_dphi[k] * cos(ex4_phi[k]);
            v[2] += arm * ex4_dphi[k] * sin(ex4_phi[k]);
        }
        double R[9];
        fx_rot_y(PI_ - ex4_phi[i], R); /* body z along the link */
        fx_add_body(s, m, (const double[3]){Iperp, Iperp, Iax}, R, com, v, w);
    }
    const double tip[3] = {joint[3][0], 0, joint[3][2] - Rs};
    fx_add_ground_contact(s, 2, tip, p);
    fx_scene_finish(s);
    int n = 0;
    const double ex[3] = {1, 0, 0}, ez[3] = {0, 0, 1};
    for (int i = 0; i < 3; ++i) {
        const int a = i, b = i == 0 ? -1 : i - 1; /* the pivot joins link 0 to the world */
        n = add_ball_rows(rows, n, s, a, b, joint[i]);
        n = add_angular_row(rows, n, a, b, ex);
        n = add_angular_row(rows, n, a, b, ez);
    }
    return n;
}

START_TEST(test_triple_pendulum_delassus)
{
    fx_scene s;
    pp_plus_bilateral_row rows[MAX_ROWS];
    const int nr = build_pendulum(&s, rows, (pp_plus_contact_params){0.1, 1.0, 0.01, 0.01});
    ck_assert_double_eq_tol(s.v[0], ex4_v[0], TOL_MODEL * 10);
    ck_assert_double_eq_tol(s.v[2], ex4_v[1], TOL_MODEL * 10);
    pp_plus_joint_space *js = NULL;
    ck_assert_int_eq(pp_plus_joint_space_create(&js), PP_OK);
    double A[9];
    ck_assert_int_eq(pp_plus_delassus_constrained(js, 3, s.bodies, nr, rows, 1, s.jac, A), PP_OK);
    ck_assert_int_eq(pp_plus_joint_space_rank(js), 15);
    printf("ex4 joint-space A: [%.13f %.13f %.13f; . %.3g %.3g; . . %.13f]; free link: [%.4f "
           "%.4f %.4f; . %.4f %.4f; . . %.4f]\n", A[0], A[1], A[2], A[4], A[5], A[8], s.A[0],
           s.A[1], s.A[2], s.A[4], s.A[5], s.A[8]);
    ck_assert_double_eq_tol(A[0], ex4_A[0][0], TOL_MODEL);
    ck_assert_double_eq_tol(A[2], ex4_A[0][1], TOL_MODEL);
    ck_assert_double_eq_tol(A[6], ex4_A[1][0], TOL_MODEL);
    ck_assert_double_eq_tol(A[8], ex4_A[1][1], TOL_MODEL);
    /* planar: the tip cannot slip out of the plane */
    for (int i = 0; i < 3; ++i) {
        ck_assert_double_le(fabs(A[3 + i]), TOL_ROUNDOFF);
        ck_assert_double_le(fabs(A[3 * i + 1]), TOL_ROUNDOFF);
    }
    /* the free link is lighter at the tip and can slip out of the plane: the test would
     * catch a free-body A */
    ck_assert_double_gt(s.A[0] - A[0], 0.1);
    ck_assert_double_gt(s.A[4], 0.1);
    memcpy(s.A, A, sizeof A);
    check_velocity_change(&s, js, nr, rows, (const double[3]){1.475, 0.3, 23.633}, "pendulum");
    pp_plus_joint_space_destroy(js);
}
END_TEST

START_TEST(test_triple_pendulum_plus)
{
    fx_scene s;
    pp_plus_bilateral_row rows[MAX_ROWS];
    const int nr = build_pendulum(&s, rows, (pp_plus_contact_params){0.1, 1.0, 0.01, 0.01});
    pp_plus_joint_space *js = NULL;
    ck_assert_int_eq(pp_plus_joint_space_create(&js), PP_OK);
    ck_assert_int_eq(pp_plus_delassus_constrained(js, 3, s.bodies, nr, rows, 1, s.jac, s.A), PP_OK);
    /* the out-of-plane direction is immobile: exactly zero, as the plugin passes it */
    for (int i = 0; i < 3; ++i) s.A[3 + i] = s.A[3 * i + 1] = 0.0;
    pp_plus_config cfg = pp_plus_config_default();
    fx_run run;
    fx_solve(&s, &cfg, &run);
    ck_assert_int_eq(run.status, PP_OK);
    double v_end[2], pi[2];
    ex4_routh(v_end, pi);
    printf("ex4 PLUS: v_end (%.6f, %.3g, %.6f), pi (%.6f, %.3g, %.6f), %d intervals; Routh v_end "
           "(%.6f, %.6f), pi (%.6f, %.6f)\n", run.v_end[0], run.v_end[1], run.v_end[2],
           run.impulse[0], run.impulse[1], run.impulse[2], run.result.intervals, v_end[0],
           v_end[1], pi[0], pi[1]);
    /* PLUS's transition speed (0.1 m/s) and sliding-direction steps make it a close
     * approximation of the exact reversal, not the same number */
    ck_assert_double_eq_tol(run.v_end[0], v_end[0], 1e-3);
    ck_assert_double_eq_tol(run.v_end[2], v_end[1], 1e-3);
    ck_assert_double_eq_tol(run.impulse[0], pi[0], 1e-3);
    ck_assert_double_eq_tol(run.impulse[2], pi[1], 1e-3);
    ck_assert_double_le(fabs(run.v_end[1]), 1e-12);
    ck_assert_double_le(run.result.kinetic_energy_change, 0.0);
    check_velocity_change(&s, js, nr, rows, run.impulse, "pendulum PLUS");
    fx_run_free(&run);
    pp_plus_joint_space_destroy(js);
}
END_TEST

/* A hinge listed twice and a row that is the sum of two others: the same constraint space,
 * so the same A, with the rank of the independent rows. */
START_TEST(test_redundant_rows)
{
    fx_scene s;
    pp_plus_bilateral_row rows[MAX_ROWS];
    const int nr = build_pendulum(&s, rows, (pp_plus_contact_params){0.1, 1.0, 0.01, 0.01});
    pp_plus_joint_space *js = NULL;
    ck_assert_int_eq(pp_plus_joint_space_create(&js), PP_OK);
    double A[9], Ar[9];
    ck_assert_int_eq(pp_plus_delassus_constrained(js, 3, s.bodies, nr, rows, 1, s.jac, A), PP_OK);
    int n = nr;
    for (int e = 5; e < 10; ++e) rows[n++] = rows[e]; /* the middle hinge again */
    pp_plus_bilateral_row sum = rows[10];
    for (int side = 0; side < 2; ++side)
        for (int i = 0; i < 6; ++i) sum.row[side][i] += 2.0 * rows[11].row[side][i];
    rows[n++] = sum;
    ck_assert_int_eq(pp_plus_delassus_constrained(js, 3, s.bodies, n, rows, 1, s.jac, Ar), PP_OK);
    ck_assert_int_eq(pp_plus_joint_space_rank(js), 15);
    for (int i = 0; i < 9; ++i) ck_assert_double_eq_tol(Ar[i], A[i], 1e-10);
    memcpy(s.A, Ar, sizeof Ar);
    check_velocity_change(&s, js, n, rows, (const double[3]){1.0, -0.5, 20.0}, "redundant");
    pp_plus_joint_space_destroy(js);
}
END_TEST

START_TEST(test_input_validation)
{
    pp_set_log_hook(pp_log_discard, NULL);
    fx_scene s;
    pp_plus_bilateral_row rows[MAX_ROWS];
    const int nr = build_pendulum(&s, rows, (pp_plus_contact_params){0.1, 1.0, 0.01, 0.01});
    pp_plus_joint_space *js = NULL;
    ck_assert_int_eq(pp_plus_joint_space_create(NULL), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_plus_joint_space_create(&js), PP_OK);
    double A[9], du[18];
    ck_assert_int_eq(pp_plus_delassus_constrained(NULL, 3, s.bodies, nr, rows, 1, s.jac, A),
                     PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_plus_delassus_constrained(js, 3, s.bodies, nr, NULL, 1, s.jac, A),
                     PP_ERR_NULL_ARGUMENT);
    rows[0].body[1] = 3;
    ck_assert_int_eq(pp_plus_delassus_constrained(js, 3, s.bodies, nr, rows, 1, s.jac, A),
                     PP_ERR_INVALID_ARGUMENT);
    rows[0].body[1] = -1;
    rows[4].row[0][4] = NAN;
    ck_assert_int_eq(pp_plus_delassus_constrained(js, 3, s.bodies, nr, rows, 1, s.jac, A),
                     PP_ERR_INVALID_ARGUMENT);
    rows[4].row[0][4] = 0.0;
    ck_assert_int_eq(pp_plus_delassus_constrained(js, 3, s.bodies, nr, rows, 1, s.jac, A), PP_OK);
    /* the velocity change must be asked for the factored problem */
    ck_assert_int_eq(pp_plus_body_velocity_change_constrained(js, 3, s.bodies, nr - 1, rows, 1,
                                                              s.jac, (double[3]){0, 0, 1}, du, NULL),
                     PP_ERR_INVALID_ARGUMENT);
    /* no rows: the free-body operators */
    double Af[9];
    ck_assert_int_eq(pp_plus_delassus_constrained(js, 3, s.bodies, 0, NULL, 1, s.jac, Af), PP_OK);
    for (int i = 0; i < 9; ++i) ck_assert(Af[i] == s.A[i]);
    pp_plus_joint_space_destroy(js);
    pp_plus_joint_space_destroy(NULL);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

/* ----------------------------------------------------------------------------------- */
/* Rows that do not hold before the impact (the time stepper's drift correction)         */
/* ----------------------------------------------------------------------------------- */

/*
 * Two bricks joined by a ball at their shared face centre, stretching apart along the
 * joint's rows (J_E nu != 0: ERP's drift-correcting velocity), falling onto the ground
 * under the first. pp_plus_joint_space_project leaves J_E nu = 0, removes a part
 * M-orthogonal to every du = W_c G^T pi, and with v read from the projected twists PLUS's
 * pi . v + 1/2 pi^T A pi is the bodies' kinetic energy change exactly; e = 1 then gains
 * nothing. Read from the full twists (as before soak seed 942's fix), the joint impulse
 * does work p_E . J_E nu and the bodies gain energy.
 */
START_TEST(test_drifting_rows_gain_nothing)
{
    const double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const double dims[3] = {0.4, 0.6, 0.8};
    const double c1[3] = {-0.2, 0, 1}, c2[3] = {0.2, 0, 1}, zero[3] = {0, 0, 0};
    /* the first brick falls fast and moves away from the second along x and down in z:
     * the ball's rows see a relative velocity (-1.5, 0, -3) m/s */
    const double v1[3] = {-1.0, 0.0, -4.0}, v2[3] = {0.5, 0.0, -1.0}, w1[3] = {0.0, 0.7, 0.0};
    pp_plus_contact_params p = {0.0, 1.0, 0.01, 0.01}; /* frictionless, e = 1 */
    fx_scene s;
    fx_scene_init(&s);
    int a = fx_add_brick(&s, 2.0, dims, R, c1, v1, w1);
    int b = fx_add_brick(&s, 3.0, dims, R, c2, v2, zero);
    fx_add_ground_contact(&s, a, (const double[3]){-0.3, 0.0, 0.6}, p);
    fx_scene_finish(&s);
    pp_plus_bilateral_row rows[MAX_ROWS];
    const int nr = add_ball_rows(rows, 0, &s, a, b, (const double[3]){0, 0, 1});
    pp_plus_joint_space *js = NULL;
    ck_assert_int_eq(pp_plus_joint_space_create(&js), PP_OK);
    double A[9];
    ck_assert_int_eq(pp_plus_delassus_constrained(js, s.body_count, s.bodies, nr, rows, 1, s.jac, A),
                     PP_OK);
    memcpy(s.A, A, sizeof A);
    double drift = 0.0;
    for (int e = 0; e < nr; ++e) drift = fmax(drift, fabs(row_rate(&rows[e], s.nu)));
    ck_assert_double_ge(drift, 1.0);

    double nu_p[6 * FX_MAX_BODIES];
    memcpy(nu_p, s.nu, sizeof nu_p);
    ck_assert_int_eq(pp_plus_joint_space_project(js, s.body_count, s.bodies, nr, rows, nu_p), PP_OK);
    for (int e = 0; e < nr; ++e)
        ck_assert_msg(fabs(row_rate(&rows[e], nu_p)) <= TOL_ROUNDOFF * 4.0, "J_E nu = %g on row %d",
                      row_rate(&rows[e], nu_p), e);
    /* the part removed carries no momentum of the pair (the rows are internal) */
    for (int k = 0; k < 3; ++k)
        ck_assert_double_le(fabs(s.mass[a] * (s.nu[k] - nu_p[k]) + s.mass[b] * (s.nu[6 + k] - nu_p[6 + k])),
                            TOL_ROUNDOFF * 10.0);

    pp_plus_solver *solver = NULL;
    ck_assert_int_eq(pp_plus_solver_create(1, &solver), PP_OK);
    for (int projected = 1; projected >= 0; --projected) {
        double v[3], pi[3], du[6 * FX_MAX_BODIES];
        ck_assert_int_eq(pp_plus_contact_velocity(s.body_count, projected ? nu_p : s.nu, 1, s.jac, v),
                         PP_OK);
        pp_plus_problem problem = {1, A, v, &p};
        pp_plus_result result;
        memset(&result, 0, sizeof result);
        result.impulse = pi;
        ck_assert_int_eq(pp_plus_solve(solver, NULL, &problem, &result), PP_OK);
        ck_assert_int_eq(pp_plus_limit_energy(&problem, &result), 0); /* PLUS keeps it, e = 1 */
        ck_assert_int_eq(pp_plus_body_velocity_change_constrained(js, s.body_count, s.bodies, nr, rows,
                                                                  1, s.jac, pi, du, NULL),
                         PP_OK);
        double nu_end[6 * FX_MAX_BODIES];
        for (int i = 0; i < 6 * s.body_count; ++i) nu_end[i] = s.nu[i] + du[i];
        const double ke = fx_kinetic_energy(&s, s.nu), dke = fx_kinetic_energy(&s, nu_end) - ke;
        printf("drifting ball joint, v from %s twists: v_n %.6f m/s, pi_n %.6f N s, PLUS dE %.3g J, "
               "bodies' dKE %.6f J (of %.4f J)\n", projected ? "projected" : "full", v[2], pi[2],
               result.kinetic_energy_change, dke, ke);
        if (projected) {
            /* exact: the bodies' change is PLUS's, and e = 1 with no friction conserves it */
            ck_assert_double_le(fabs(dke - result.kinetic_energy_change), 1e-12 * ke);
            ck_assert_double_le(fabs(dke), 1e-12 * ke);
        } else {
            ck_assert_double_gt(dke, 0.1 * ke); /* the defect this guards against */
        }
    }
    pp_plus_solver_destroy(solver);
    pp_plus_joint_space_destroy(js);
}
END_TEST

/*
 * pp_plus_limit_energy on one frictionless ball (A = diag(a_t, a_t, a_n)), approaching at
 * 2 m/s: an answer that would bounce it out at 4 m/s (restitution 2) is scaled to the
 * elastic one (out at 2 m/s, dE = 0); the friction part scales with it, staying in the cone;
 * an impulse at a separating contact is removed; PLUS's own answers are left bit for bit.
 */
START_TEST(test_limit_energy)
{
    const double an = 0.5, at = 1.75; /* 1/m and 1/m + r^2/I of a 2 kg ball */
    const double A[9] = {at, 0, 0, 0, at, 0, 0, 0, an};
    double v[3] = {0.3, 0.0, -2.0};
    pp_plus_contact_params p = {0.5, 1.0, 0.01, 0.01};
    pp_plus_problem problem = {1, A, v, &p};
    double pi[3] = {-0.1, 0.0, 6.0 / an}, dv[3];
    for (int i = 0; i < 3; ++i) dv[i] = A[4 * i] * pi[i];
    pp_plus_result r;
    memset(&r, 0, sizeof r);
    r.impulse = pi;
    r.velocity_change = dv;
    ck_assert_int_eq(pp_plus_limit_energy(&problem, &r), 1);
    ck_assert_double_le(r.kinetic_energy_change, 1e-12 * 0.5 * (0.09 / at + 4.0 / an));
    ck_assert_double_ge(r.kinetic_energy_change, -1e-12 * 0.5 * (0.09 / at + 4.0 / an));
    /* s = -2 pi.v / pi^T A pi, pi.v = 0.03 - 24 (pi_n = 12), pi^T A pi = 0.01 at + 144 an */
    const double scale = 2.0 * 24.03 / (0.01 * at + 144.0 * an);
    ck_assert_double_le(fabs(pi[2] - scale * 12.0), 1e-14 * 12.0);
    ck_assert_double_le(fabs(pi[0] + scale * 0.1), 1e-14);
    ck_assert_double_le(fabs(dv[2] - an * pi[2]), 1e-14);
    /* out at about the approach speed (the friction's dissipation leaves the normal a little
     * more), no longer at 4 m/s */
    ck_assert_double_le(fabs((v[2] + dv[2]) - 2.0), 0.01);

    /* a separating contact pushed apart: nothing applied */
    v[2] = 1.0;
    double push[3] = {0.0, 0.0, 1.0};
    r.impulse = push;
    r.velocity_change = NULL;
    ck_assert_int_eq(pp_plus_limit_energy(&problem, &r), 1);
    ck_assert_double_eq(push[2], 0.0);
    ck_assert_double_eq(r.kinetic_energy_change, 0.0);

    /* PLUS's answers, e = 1 and e = 0.5, with friction: kept exactly */
    pp_plus_solver *solver = NULL;
    ck_assert_int_eq(pp_plus_solver_create(1, &solver), PP_OK);
    for (int k = 0; k < 2; ++k) {
        v[2] = -2.0;
        p.e_min = k ? 0.5 : 1.0;
        double q[3];
        pp_plus_result s;
        memset(&s, 0, sizeof s);
        s.impulse = q;
        ck_assert_int_eq(pp_plus_solve(solver, NULL, &problem, &s), PP_OK);
        const double q0[3] = {q[0], q[1], q[2]}, de = s.kinetic_energy_change;
        ck_assert_int_eq(pp_plus_limit_energy(&problem, &s), 0);
        for (int i = 0; i < 3; ++i) ck_assert_double_eq(q[i], q0[i]);
        ck_assert_double_le(fabs(s.kinetic_energy_change - de), 1e-12 * fabs(de) + 1e-15);
    }
    pp_plus_solver_destroy(solver);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("plus_joints");
    TCase *tc = tcase_create("joint_space");
    tcase_add_test(tc, test_welded_pair_is_one_body);
    tcase_add_test(tc, test_triple_pendulum_delassus);
    tcase_add_test(tc, test_triple_pendulum_plus);
    tcase_add_test(tc, test_redundant_rows);
    tcase_add_test(tc, test_input_validation);
    tcase_add_test(tc, test_drifting_rows_gain_nothing);
    tcase_add_test(tc, test_limit_energy);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
