/*
 * Redundant supports share their load (README "Redundant supports"; contact/src/
 * lcp_load_sharing.c): a body on more supports than it has freedoms gives a time-stepping
 * LCP with many solutions, and the one applied is the limit of a vanishing compliance, not
 * Lemke's vertex (three supports loaded, the others without normal force and so without
 * friction). Real ODE worlds through pp_world_step, against closed forms.
 */
#include "it_common.h"

#include <pegplus/pegplus.h>

#include <math.h>
#include <ode/ode.h>
#include <stdio.h>
#include <string.h>

#define G 9.81
/* Accelerations against their closed forms (issue 15's acceptance: 1 %). */
#define TOL_ACCEL 0.01
/* Equal loads of symmetric supports (relative): the limit is computed by solves of
 * condition ~1e5, its rounding ~1e-11 relative. */
#define TOL_SHARE 1e-9

static const pp_model g_models[] = {PP_MODEL_STANDARD, PP_MODEL_PEG, PP_MODEL_ODE};
static const char *const g_model_names[] = {"standard", "PEG", "ODE"};

/* ---- A plate pushed over a grid of balls --------------------------------------------------
 *
 * A plate (box, mass M, thickness t) lies on a 3 x 3 grid of balls (n = 9, mass m, radius
 * r, I = 2/5 m r^2) standing on the ground; mu = 0.5 everywhere; a constant horizontal force
 * F along +x acts at the plate's centre. Closed form, every contact rolling (no slip):
 * a ball's centre accelerates at a_b, its spin at a_b / r (it rolls on the ground), and the
 * plate, touching the ball's top, at a_p = 2 a_b. On a ball the plate's friction f1 (at the
 * top, along +x) and the ground's f2 (at the bottom, along +x) give
 *     m a_b = f1 + f2,     I a_b / r = (f1 - f2) r     =>   f1 = 7/10 m a_b,  f2 = 3/10 m a_b,
 * and on the plate M a_p = F - n f1, so
 *     a_b = F / (2 M + 7/10 n m),     a_p = 2 a_b.
 * With M = 1 kg, m = 0.1 kg, r = 0.05 m, F = 5 N: a_b = 1.9011 m/s^2, a_p = 3.8023 m/s^2,
 * f1 = 0.133 N and f2 = 0.057 N per ball. Rolling holds while f1 <= mu N1 and f2 <= mu N2:
 * each ball carries N1 = M g / 9 = 1.09 N from the plate (+- 3 % from the pitching moment of
 * the friction, n f1 t / 2, over the grid's 0.7 m) and N2 = N1 + m g = 2.07 N from the
 * ground, so mu = 0.5 leaves a margin of 4x and more: every contact rolls, and the answer
 * needs every ball loaded. Lemke's vertex loaded three balls; the six others got no normal
 * force, no friction, and did not turn, so the plate rolled on three (13.6 m/s^2 against 8
 * in the scene). */
typedef struct plate_scene {
    dWorldID world;
    dSpaceID space;
    dBodyID plate, balls[9];
} plate_scene;

static void plate_scene_build(plate_scene *s, double M, double m, double r, double t)
{
    s->world = dWorldCreate();
    dWorldSetGravity(s->world, 0.0, 0.0, -G);
    s->space = dHashSpaceCreate(0);
    dCreatePlane(s->space, 0.0, 0.0, 1.0, 0.0);
    dMass mass;
    for (int i = 0; i < 9; ++i) {
        dBodyID b = dBodyCreate(s->world);
        dMassSetSphereTotal(&mass, m, r);
        dBodySetMass(b, &mass);
        dBodySetPosition(b, 0.35 * (i % 3 - 1), 0.35 * (i / 3 - 1), r);
        dGeomID g = dCreateSphere(s->space, r);
        dGeomSetBody(g, b);
        s->balls[i] = b;
    }
    s->plate = dBodyCreate(s->world);
    dMassSetBoxTotal(&mass, M, 1.0, 1.0, t);
    dBodySetMass(s->plate, &mass);
    dBodySetPosition(s->plate, 0.0, 0.0, 2.0 * r + 0.5 * t);
    dGeomID g = dCreateBox(s->space, 1.0, 1.0, t);
    dGeomSetBody(g, s->plate);
}

static void plate_scene_destroy(plate_scene *s)
{
    dSpaceDestroy(s->space);
    dWorldDestroy(s->world);
}

/* pp_config.load_sharing = 0 keeps Lemke's vertex: no island is shared, and the plate then
 * rolls on fewer balls and runs ahead of the closed form (4.68 m/s^2 measured against 3.80). */
START_TEST(test_plate_without_load_sharing)
{
    const double M = 1.0, m = 0.1, r = 0.05, t = 0.05, F = 5.0, h = 0.005;
    const double a_p = 2.0 * F / (2.0 * M + 0.7 * 9.0 * m);
    plate_scene s;
    plate_scene_build(&s, M, m, r, t);
    pp_config c = pp_config_default();
    c.model = PP_MODEL_STANDARD;
    c.surface.mu = 0.5;
    c.load_sharing = 0;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(s.world, s.space, &c, &pw), PP_OK);
    for (int i = 0; i < 20; ++i) {
        dBodyAddForce(s.plate, F, 0.0, 0.0);
        ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        ck_assert_int_eq(pp_world_get_stats(pw)->load_shared, 0);
    }
    double plate = dBodyGetLinearVel(s.plate)[0] / (20 * h);
    ck_assert_double_gt(fabs(plate - a_p), 10.0 * TOL_ACCEL * a_p);
    pp_world_destroy(pw);
    plate_scene_destroy(&s);
}
END_TEST

START_TEST(test_plate_over_balls)
{
    const pp_model model = g_models[_i];
    const double M = 1.0, m = 0.1, r = 0.05, t = 0.05, F = 5.0, h = 0.005;
    const int steps = 20;
    const double a_b = F / (2.0 * M + 0.7 * 9.0 * m), a_p = 2.0 * a_b;
    plate_scene s;
    plate_scene_build(&s, M, m, r, t);
    pp_config c = pp_config_default();
    c.model = model;
    c.surface.mu = 0.5;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(s.world, s.space, &c, &pw), PP_OK);
    int shared = 0;
    for (int i = 0; i < steps; ++i) {
        dBodyAddForce(s.plate, F, 0.0, 0.0);
        ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        shared += pp_world_get_stats(pw)->load_shared;
    }
    const double T = steps * h;
    double plate = dBodyGetLinearVel(s.plate)[0] / T, worst_ball = a_b, worst_spin = a_b;
    for (int i = 0; i < 9; ++i) {
        double ab = dBodyGetLinearVel(s.balls[i])[0] / T;
        /* rolling along +x: spin about +y, w_y = v_x / r */
        double spin = dBodyGetAngularVel(s.balls[i])[1] * r / T;
        if (fabs(ab - a_b) > fabs(worst_ball - a_b)) worst_ball = ab;
        if (fabs(spin - a_b) > fabs(worst_spin - a_b)) worst_spin = spin;
    }
    printf("plate over 9 balls (%s): plate %.6f m/s^2 (closed form %.6f), worst ball %.6f "
           "(%.6f), worst ball spin x r %.6f; load shared in %d island solves of %d steps\n",
           g_model_names[_i], plate, a_p, worst_ball, a_b, worst_spin, shared, steps);
    ck_assert_double_le(fabs(plate - a_p), TOL_ACCEL * a_p);
    ck_assert_double_le(fabs(worst_ball - a_b), TOL_ACCEL * a_b);
    ck_assert_double_le(fabs(worst_spin - a_b), TOL_ACCEL * a_b);
    pp_world_destroy(pw);
    plate_scene_destroy(&s);
}
END_TEST

/* ---- A box face on the ground ---------------------------------------------------------------
 *
 * A box (mass M = 2 kg, 0.8 x 0.5 x 0.2 m: corners at x = +-a, y = +-b, a = 0.4, b = 0.25,
 * c = 0.1 below its centre) rests on the ground, mu = 0.5: four corner contacts for three
 * freedoms that the ground constrains. At rest each corner carries M g h / 4 (the compliance
 * limit of four equal supports; Lemke's vertex put it on three). Pushed by a horizontal force
 * F = 2 N < mu M g along +x at its centre it stays at rest (static friction), and the
 * impulses of a step balance F h and M g h: sum p = M g h, sum f = -F h along x, and the
 * moments about the centre (impulse (f_i, 0, p_i) at (x_i, y_i, -c)) give
 *     sum x_i p_i = c F h,   sum y_i p_i = 0,   sum y_i f_i = 0.
 * Four loads, three equations; the limit (sticking contacts: the minimum-norm solution, see
 * contact/tests/check_load_sharing.c) has no load along the diagonals and equal friction:
 *     p_front = M g h / 4 + c F h / (4 a),   p_back = M g h / 4 - c F h / (4 a),
 *     f_i = -F h / 4 along x. */
static const pp_model g_box_models[] = {PP_MODEL_STANDARD, PP_MODEL_PEG};

START_TEST(test_box_face_on_ground)
{
    const double M = 2.0, a = 0.4, b = 0.25, c = 0.1, F = 2.0, h = 0.01;
    dWorldID world = dWorldCreate();
    dWorldSetGravity(world, 0.0, 0.0, -G);
    dSpaceID space = dHashSpaceCreate(0);
    dCreatePlane(space, 0.0, 0.0, 1.0, 0.0);
    dBodyID box = dBodyCreate(world);
    dMass mass;
    dMassSetBoxTotal(&mass, M, 2.0 * a, 2.0 * b, 2.0 * c);
    dBodySetMass(box, &mass);
    dBodySetPosition(box, 0.0, 0.0, c);
    dGeomID geom = dCreateBox(space, 2.0 * a, 2.0 * b, 2.0 * c);
    dGeomSetBody(geom, box);
    pp_config config = pp_config_default();
    config.model = g_box_models[_i];
    config.surface.mu = 0.5;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &config, &pw), PP_OK);
    const double share = M * G * h / 4.0;
    for (int step = 0; step < 20; ++step) {
        const int pushed = step >= 10;
        if (pushed) dBodyAddForce(box, F, 0.0, 0.0);
        ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        const pp_contact_info *ci;
        int count = pp_world_get_contacts(pw, &ci), loaded = 0;

        double worst = 0.0, sum = 0.0;
        for (int i = 0; i < count; ++i) {
            /* the impulse on the box: the contact's is on g2 */
            const double sign = ci[i].g2 == geom ? 1.0 : -1.0;
            const double p = ci[i].normal_impulse, fx = sign * ci[i].friction_impulse[0];
            const double fy = sign * ci[i].friction_impulse[1];
            if (p == 0.0) continue;
            ++loaded;
            sum += p;
            const double tilt = pushed ? c * F * h / (4.0 * a) : 0.0;
            const double expect = ci[i].position[0] > 0.0 ? share + tilt : share - tilt;
            worst = fmax(worst, fabs(p - expect) / share);
            ck_assert_msg(fabs(fx + (pushed ? F * h / 4.0 : 0.0)) <= TOL_SHARE * share &&
                              fabs(fy) <= TOL_SHARE * share,
                          "%s step %d: friction (%g, %g) on the corner at (%g, %g), closed form "
                          "(%g, 0)", g_model_names[_i], step, fx, fy, ci[i].position[0],
                          ci[i].position[1], pushed ? -F * h / 4.0 : 0.0);
        }
        if (step == 0 || step == 10)
            printf("box on the ground (%s), step %d%s: %d loaded corners, worst load %.3g "
                   "relative to the closed form\n", g_model_names[_i], step,
                   pushed ? " (pushed)" : "", loaded, worst);
        ck_assert_int_eq(loaded, 4);
        ck_assert_double_le(worst, TOL_SHARE);
        ck_assert_double_le(fabs(sum - M * G * h), TOL_SHARE * M * G * h);
        const dReal *v = dBodyGetLinearVel(box), *w = dBodyGetAngularVel(box);
        for (int r = 0; r < 3; ++r) {
            ck_assert_double_le(fabs(v[r]), 1e-12);
            ck_assert_double_le(fabs(w[r]), 1e-12);
        }
    }
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}
END_TEST

int main(void)
{
    dInitODE();
    Suite *s = suite_create("load_sharing");
    TCase *tc = tcase_create("scenes");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_plate_over_balls, 0, 3);
    tcase_add_test(tc, test_plate_without_load_sharing);
    tcase_add_loop_test(tc, test_box_face_on_ground, 0, 2);
    suite_add_tcase(s, tc);
    int rc = pp_it_run(s);
    dCloseODE();
    return rc;
}
