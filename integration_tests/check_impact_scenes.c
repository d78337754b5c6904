/*
 * PLUS wired into the step (issue 5), through ODE: Newton's cradle, the bouncing ball, the
 * PLUS example-1 brick and a resting box with e = 1. Answers in docs/references.md
 * ("Validation scenes", "PLUS validation cases").
 */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define G 9.81

static void show_warnings(pp_log_level level, const char *message, void *user)
{
    (void)user;
    if (level >= PP_LOG_WARNING) fprintf(stderr, "pegplus: %s\n", message);
}

static void setup(void)
{
    pp_scenes_init_ode();
    pp_set_log_hook(show_warnings, NULL);
}

static pp_world *plus_world(const pp_scene *s, double mu, double bounce, double bounce_vel)
{
    pp_config c = pp_config_default();
    c.model = PP_MODEL_STANDARD;
    c.surface.mu = mu;
    c.surface.bounce = bounce;
    c.surface.bounce_vel = bounce_vel;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(s->world, s->space, &c, &pw), PP_OK);
    return pw;
}

static double kinetic_energy(const pp_scene *s) { return pp_scene_kinetic_energy(s); }

/* Newton's cradle (PLUS Ex. 3, V1): 5 frictionless 1 kg balls of r = 0.25 m in a row,
 * touching; the first arrives at 2 m/s (mid-step: it starts 0.013 m away). Sequential PLUS
 * rounds pass the impulse down the row: the last ball leaves at 2 m/s, the others stop;
 * momentum and energy are kept. Stock ODE with bounce = 1 solves all contacts at once and
 * gives something else, printed for the README. */
static void build_cradle(pp_scene *s)
{
    memset(s, 0, sizeof *s);
    s->name = "cradle";
    s->world = dWorldCreate();
    s->space = dSimpleSpaceCreate(0);
    dWorldSetGravity(s->world, 0, 0, 0);
    for (int i = 0; i < 5; ++i) {
        double x = i == 0 ? -0.013 : 0.5 * i;
        pp_scene_add_sphere(s, 0.25, 1.0, (const double[3]){x, 0, 1});
    }
    dBodySetLinearVel(s->bodies[0], 2.0, 0, 0);
}

START_TEST(test_newtons_cradle)
{
    pp_scene s;
    build_cradle(&s);
    pp_world *pw = plus_world(&s, 0.0, 1.0, 0.0);
    double e0 = kinetic_energy(&s);
    int impacts = 0;
    for (int i = 0; i < 20; ++i) {
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        impacts += pp_world_get_stats(pw)->impacts;
    }
    double v[5], p = 0.0;
    for (int i = 0; i < 5; ++i) {
        v[i] = dBodyGetLinearVel(s.bodies[i])[0];
        p += v[i];
    }
    printf("cradle, pegplus + PLUS: (%.12f, %.12f, %.12f, %.12f, %.12f), %d impact(s)\n", v[0],
           v[1], v[2], v[3], v[4], impacts);
    ck_assert_int_eq(impacts, 1);
    for (int i = 0; i < 4; ++i) ck_assert_double_eq_tol(v[i], 0.0, 1e-12);
    ck_assert_double_eq_tol(v[4], 2.0, 1e-12);
    ck_assert_double_eq_tol(p, 2.0, 1e-12);
    ck_assert_double_eq_tol(kinetic_energy(&s), e0, 1e-12 * e0);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);

    /* Stock ODE, same scene, bounce = 1 */
    build_cradle(&s);
    pp_config c = pp_config_default();
    c.model = PP_MODEL_ODE;
    c.surface.mu = 0.0;
    c.surface.bounce = 1.0;
    ck_assert_int_eq(pp_world_create(s.world, s.space, &c, &pw), PP_OK);
    for (int i = 0; i < 20; ++i) ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
    double worst = 0.0;
    for (int i = 0; i < 5; ++i) {
        v[i] = dBodyGetLinearVel(s.bodies[i])[0];
        worst = fmax(worst, fabs(v[i] - (i == 4 ? 2.0 : 0.0)));
    }
    printf("cradle, stock ODE bounce 1: (%.4f, %.4f, %.4f, %.4f, %.4f)\n", v[0], v[1], v[2], v[3],
           v[4]);
    ck_assert_double_gt(worst, 0.1); /* ODE does not reproduce the cradle */
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

/* Bouncing ball (docs/references.md): r = 0.1 m, 1 kg, frictionless, bottom 1 m above the plane,
 * e = 0.5, capture below 0.01 m/s. Apex heights e^(2n) h0 within 1 % for the first 4
 * bounces, then exact rest. h = 5e-5: ODE's semi-implicit Euler loses about v h / 2 of
 * height on every flight (1 % at the 4th bounce with h = 1e-4), which is the integrator's
 * error, not the impact's. */
START_TEST(test_bouncing_ball)
{
    const double h = 5e-5, e = 0.5, h0 = 1.0;
    pp_scene s;
    memset(&s, 0, sizeof s);
    s.world = dWorldCreate();
    s.space = dSimpleSpaceCreate(0);
    dWorldSetGravity(s.world, 0, 0, -G);
    s.ground = dCreatePlane(s.space, 0, 0, 1, 0);
    dBodyID ball = pp_scene_add_sphere(&s, 0.1, 1.0, (const double[3]){0, 0, h0 + 0.1});
    pp_world *pw = plus_world(&s, 0.0, e, 0.01);
    dBodySetGyroscopicMode(ball, 0);
    double apex[8] = {0};
    int bounce = 0, rising = 0;
    double lowest = HUGE_VAL;
    double v_in = 0.0, speeds[8][2] = {{0}};
    for (int i = 0; i < 80000; ++i) {
        double v_before = dBodyGetLinearVel(ball)[2];
        ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        if (pp_world_get_stats(pw)->impacts > 0 && bounce < 8) {
            speeds[bounce][0] = v_before;
            speeds[bounce][1] = dBodyGetLinearVel(ball)[2];
            ++bounce;
            rising = 1;
        }
        double z = dBodyGetPosition(ball)[2] - 0.1, vz = dBodyGetLinearVel(ball)[2];
        lowest = fmin(lowest, z);
        if (rising && bounce <= 8 && z > apex[bounce - 1]) apex[bounce - 1] = z;
        if (vz < 0.0) rising = 0;
    }
    (void)v_in;
    for (int n = 1; n <= 4; ++n) {
        printf("bounce %d: velocity before the step %.6f, after %.6f m/s\n", n,
               speeds[n - 1][0], speeds[n - 1][1]);
        double want = h0 * pow(e, 2.0 * n);
        printf("bounce %d: apex %.6f m, e^2n h0 = %.6f m (%.3f %%)\n", n, apex[n - 1], want,
               100.0 * (apex[n - 1] - want) / want);
        ck_assert_double_eq_tol(apex[n - 1], want, 0.01 * want);
    }
    printf("bounces: %d, lowest %.3g m, final z %.3g m, v %.3g m/s\n", bounce, lowest,
           dBodyGetPosition(ball)[2] - 0.1, dBodyGetLinearVel(ball)[2]);
    ck_assert_double_ge(lowest, -1e-9);
    ck_assert_double_eq_tol(dBodyGetLinearVel(ball)[2], 0.0, 1e-12);
    ck_assert_double_eq_tol(dBodyGetPosition(ball)[2] - 0.1, 0.0, 1e-9);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

/* PLUS example 1 (V2) through ODE: the single-point brick. A 2 kg brick, body inertia
 * diag(0.1666667, 0.1333333, 0.0866667), R = Rx(pi/4) Ry(pi/6), touching the plane with the
 * lowest point of a corner sphere (r = 0.1) at r = (-0.02679, 0.10353, -0.62779) from the
 * centre of mass, arriving at v = (-5, 0, -5.74). No gravity, so the velocity after the step
 * is the impact's answer. */
static const struct brick_case {
    double mu, e_min, v[3], w[3], ke;
} brick_cases[] = {
    {0.125, 0.392, {-4.3563, -0.5740, 1.6316}, {6.4759, -4.8771, 1.0095}, 25.5333},
    {0.225, 0.387, {-4.0785, -1.2087, 2.1774}, {1.9281, -6.5074, 0.0663}, 25.3333},
    {0.325, 0.373, {-4.0784, -1.2088, 2.1782}, {1.9283, -6.5074, 0.0663}, 25.3366},
};

static int brick_surface(void *user, dGeomID g1, dGeomID g2, pp_surface *surface)
{
    (void)g1, (void)g2;
    const struct brick_case *c = user;
    surface->mu = c->mu;
    surface->bounce = c->e_min;
    surface->bounce_vel = 0.01;
    surface->plus_v_plastic = 0.1;
    return 1;
}

START_TEST(test_plus_brick_through_ode)
{
    const struct brick_case *bc = &brick_cases[_i];
    dWorldID world = dWorldCreate();
    dSpaceID space = dSimpleSpaceCreate(0);
    dWorldSetGravity(world, 0, 0, 0);
    dCreatePlane(space, 0, 0, 1, 0);
    dBodyID b = dBodyCreate(world);
    dMass m;
    dMassSetZero(&m);
    dMassSetParameters(&m, 2.0, 0, 0, 0, 0.1666667, 0.1333333, 0.0866667, 0, 0, 0);
    dBodySetMass(b, &m);
    dMatrix3 Rx, Ry, R;
    dRFromAxisAndAngle(Rx, 1, 0, 0, M_PI / 4);
    dRFromAxisAndAngle(Ry, 0, 1, 0, M_PI / 6);
    dMultiply0_333(R, Rx, Ry);
    dBodySetRotation(b, R);
    const double r[3] = {-0.02679, 0.10353, -0.62779};
    const double com[3] = {0, 0, -r[2] + 1e-4}; /* lowest point 0.1 mm above the plane */
    dBodySetPosition(b, com[0], com[1], com[2]);
    dBodySetLinearVel(b, -5, 0, -5.74);
    dBodySetGyroscopicMode(b, 0); /* Table A1's answer is the impact alone: no free precession */
    dGeomID corner = dCreateSphere(space, 0.1);
    dGeomSetBody(corner, b);
    /* body-frame offset of the corner sphere's centre: R^T (r + 0.1 z) */
    const dReal *Rb = dBodyGetRotation(b);
    double c_world[3] = {r[0], r[1], r[2] + 0.1}, c_body[3];
    for (int i = 0; i < 3; ++i)
        c_body[i] = Rb[i] * c_world[0] + Rb[4 + i] * c_world[1] + Rb[8 + i] * c_world[2];
    dGeomSetOffsetPosition(corner, c_body[0], c_body[1], c_body[2]);

    pp_config c = pp_config_default();
    c.model = PP_MODEL_STANDARD;
    c.surface_fn = brick_surface;
    c.surface_user = (void *)bc;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &c, &pw), PP_OK);
    ck_assert_int_eq(pp_world_step(pw, 0.001), PP_OK);
    ck_assert_int_eq(pp_world_get_stats(pw)->impacts, 1);
    const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b);
    printf("brick mu %.3f: v (%.4f, %.4f, %.4f) w (%.4f, %.4f, %.4f)\n", bc->mu, v[0], v[1], v[2],
           w[0], w[1], w[2]);
    for (int k = 0; k < 3; ++k) {
        ck_assert_double_eq_tol(v[k], bc->v[k], 2e-3 * fmax(1.0, fabs(bc->v[k])));
        ck_assert_double_eq_tol(w[k], bc->w[k], 2e-3 * fmax(1.0, fabs(bc->w[k])));
    }
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

/* A box resting on the plane with e = 1 and no capture speed stays at rest: the psi/h term
 * of the time stepper never turns into a bounce. */
START_TEST(test_resting_box_elastic)
{
    pp_scene s;
    pp_scene_box_column(&s, 1, 0.0);
    pp_world *pw = plus_world(&s, 0.5, 1.0, 0.0);
    double z0 = dBodyGetPosition(s.bodies[0])[2];
    int impacts = 0;
    for (int i = 0; i < 1000; ++i) {
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        impacts += pp_world_get_stats(pw)->impacts;
    }
    printf("resting box e = 1: %d impacts, z drift %.3g m, |v| %.3g m/s\n", impacts,
           dBodyGetPosition(s.bodies[0])[2] - z0, fabs(dBodyGetLinearVel(s.bodies[0])[2]));
    ck_assert_double_le(fabs(dBodyGetPosition(s.bodies[0])[2] - z0), 1e-9);
    ck_assert_double_le(kinetic_energy(&s), 1e-18);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("impact_scenes");
    TCase *tc = tcase_create("plus");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_newtons_cradle);
    tcase_add_test(tc, test_bouncing_ball);
    tcase_add_loop_test(tc, test_plus_brick_through_ode, 0, 3);
    tcase_add_test(tc, test_resting_box_elastic);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
