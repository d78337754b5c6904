/*
 * Rolling and spinning friction (ODE's dContactRolling: rho, rho2, rhoN) honoured by the
 * pegplus models (issue 13; docs/drop-in.md "Rolling and spinning friction"), closed forms
 * for a solid ball on a plane driven through a program's own near callback, under the
 * standard model and PEG with k = 4 and 8, and stock ODE (PP_MODEL_ODE, dWorldStep) as a
 * cross-check (its figures printed; asserted where they hold):
 *   - a ball rolling with rho decelerates at a = -(5/7) rho g / r, then stops and stays;
 *   - a ball with rho = 0 keeps rolling;
 *   - on a slope, a ball held by rolling friction (tan theta <= rho/r) stays at rest, and on
 *     a steeper one rolls down at (5/7) g (sin theta - (rho/r) cos theta);
 *   - a ball spinning in place with rhoN (dContactAxisDep) loses (5/2) rhoN g / r^2 of its
 *     spin rate per second, then stops;
 *   - a ball driven by an angular motor rolls steadily, the motor's torque balancing the
 *     rolling torque rho m g (joint rows and rolling rows in one LCP);
 *   - a box stack with rolling friction rests as its twin without (rolling rows at rest
 *     carry nothing);
 *   - the energy never rises.
 *
 * The ball rolling: solid sphere of mass m, radius r, I = (2/5) m r^2, rolling along x at
 * v = omega_y r (the contact point at rest). The ground pushes with N = m g up, a friction
 * force F along x at the contact point and a rolling torque tau about the tangent axis e_y,
 * opposing the rotation, |tau| = rho N at the bound (ODE's box bound, pegplus/mlcp.h). With
 * the contact at -r e_z from the centre, the torque of F about the centre is
 * (-r e_z) x (F e_x) = -r F e_y, so
 *     m dv/dt = F,      I d(omega_y)/dt = -r F - rho m g,     dv/dt = r d(omega_y)/dt
 * (rolling holds while |F| <= mu N). Eliminating F: (I/r + m r) dv/dt = -rho m g, so
 *     a = -rho m g r / (I + m r^2) = -(5/7) rho g / r,     F = m a (|F|/N = (5/7) rho / r).
 * In a time step (impulses p = h lambda) the same algebra holds for the velocity change per
 * step: Delta v = a h exactly while rolling, whatever h.
 *
 * The ball spinning about the normal with omega_z: the contact point is on the axis, so no
 * sliding and no friction force; the spinning torque rhoN m g opposes omega_z:
 *     (2/5) m r^2 d(omega_z)/dt = -rhoN m g,   alpha = -(5/2) rhoN g / r^2.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_messages.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define G 9.81
#define MAX_CONTACTS 4

typedef struct program {
    dWorldID world;
    dSpaceID space;
    dJointGroupID group;
    dSurfaceParameters surface;
} program;

static void near_callback(void *data, dGeomID g1, dGeomID g2)
{
    program *p = data;
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    dContact contact[MAX_CONTACTS];
    memset(contact, 0, sizeof contact);
    int n = dCollide(g1, g2, MAX_CONTACTS, &contact[0].geom, sizeof(dContact));
    for (int i = 0; i < n; ++i) {
        contact[i].surface = p->surface;
        dJointID j = dJointCreateContact(p->world, p->group, &contact[i]);
        dJointAttach(j, b1, b2);
    }
}

static void program_create(program *p)
{
    memset(p, 0, sizeof *p);
    p->world = dWorldCreate();
    p->space = dSimpleSpaceCreate(0);
    p->group = dJointGroupCreate(0);
    dWorldSetGravity(p->world, 0, 0, -G);
    dCreatePlane(p->space, 0, 0, 1, 0);
}

static void program_destroy(program *p)
{
    dJointGroupDestroy(p->group);
    dSpaceDestroy(p->space);
    dWorldDestroy(p->world);
}

/* A solid ball of mass m and radius r resting on the ground at the origin. */
static dBodyID add_ball(program *p, double m, double r)
{
    dBodyID b = dBodyCreate(p->world);
    dMass mass;
    dMassSetSphereTotal(&mass, m, r);
    dBodySetMass(b, &mass);
    dBodySetPosition(b, 0.0, 0.0, r);
    dGeomID g = dCreateSphere(p->space, r);
    dGeomSetBody(g, b);
    return b;
}

static const struct {
    pp_model model;
    int k;
} runs[5] = {{PP_MODEL_STANDARD, 4}, {PP_MODEL_STANDARD, 8}, {PP_MODEL_PEG, 4},
             {PP_MODEL_PEG, 8}, {PP_MODEL_ODE, 0}};

static pp_world *pegplus_for(program *p, pp_model model, int directions)
{
    pp_config c = pp_config_default();
    c.model = model;
    if (directions) c.friction_directions = directions;
    c.lcp_budget_seconds = 0.0;
    c.ode_stepper = PP_ODE_WORLD_STEP;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(p->world, p->space, &c, &pw), PP_OK);
    ck_assert_int_eq(pp_world_set_near_callback(pw, p, near_callback), PP_OK);
    return pw;
}

static void step(pp_world *pw, program *p, double h)
{
    ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
    dJointGroupEmpty(p->group);
}


/* Kinetic plus potential energy of a ball (J). */
static double ball_energy(dBodyID b, double m, double r)
{
    const double *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b);
    const double I = 0.4 * m * r * r;
    return 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
           0.5 * I * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) + m * G * dBodyGetPosition(b)[2];
}

/* Energy may not rise by more than rounding over a step (J, for a 1 kg ball at 0.1 m). */
#define ENERGY_ROUNDING 1e-12

/*
 * A ball (m = 1 kg, r = 0.1 m) rolling along x at v0 = 0.5 m/s (omega_y = v0/r), mu = 1,
 * rho = 0.01 m (dContactApprox1: the bound rho N on every axis): a = -(5/7) rho g/r =
 * -0.700714 m/s^2, so it stops after v0/|a| = 0.7136 s. Each step of the pegplus models takes
 * |a| h off v (to 1e-9 relative per step) and keeps v = omega_y r (1e-12 m/s); the mean
 * deceleration over the rolling phase is |a| to 1 % for every model, ODE included; after it
 * the ball is at rest (pegplus: 1e-9 m/s; ODE: 1e-6); the energy never rises.
 */
START_TEST(test_rolling_ball_stops)
{
    const pp_model model = runs[_i].model;
    const int ode = model == PP_MODEL_ODE;
    const double h = 0.01, m = 1.0, r = 0.1, rho = 0.01, v0 = 0.5;
    const double a = -(5.0 / 7.0) * rho * G / r;
    program p;
    program_create(&p);
    p.surface.mode = dContactApprox1 | dContactRolling;
    p.surface.mu = 1.0;
    p.surface.rho = rho;
    dBodyID ball = add_ball(&p, m, r);
    dBodySetLinearVel(ball, v0, 0.0, 0.0);
    dBodySetAngularVel(ball, 0.0, v0 / r, 0.0);
    pp_world *pw = pegplus_for(&p, model, runs[_i].k);
    const int rolling_steps = (int)floor(v0 / (-a * h)); /* 71: v stays > 0 through them */
    double v = v0, worst = 0.0, slip = 0.0, rise = 0.0, e = ball_energy(ball, m, r);
    for (int i = 0; i < rolling_steps; ++i) {
        step(pw, &p, h);
        const double w = dBodyGetLinearVel(ball)[0];
        worst = fmax(worst, fabs((w - v) / (a * h) - 1.0));
        slip = fmax(slip, fabs(w - dBodyGetAngularVel(ball)[1] * r));
        v = w;
        const double e1 = ball_energy(ball, m, r);
        rise = fmax(rise, e1 - e);
        e = e1;
    }
    const double mean = (v - v0) / (rolling_steps * h);
    for (int i = 0; i < 100; ++i) {
        step(pw, &p, h);
        const double e1 = ball_energy(ball, m, r);
        rise = fmax(rise, e1 - e);
        e = e1;
    }
    const double *vel = dBodyGetLinearVel(ball), *omega = dBodyGetAngularVel(ball);
    const double rest = fmax(fabs(vel[0]), fabs(omega[1]) * r);
    printf("%s k=%d rolling rho=%g: mean deceleration %.9f m/s^2 (closed form -(5/7) rho g/r = "
           "%.9f, relative error %.2e), worst step %.2e, rolling slip %.2e m/s; 1 s after: v "
           "%.2e m/s, omega r %.2e m/s; energy rise %.2e J\n",
           pp_model_name(model), runs[_i].k, rho, mean, a, fabs(mean / a - 1.0), worst, slip,
           vel[0], omega[1] * r, rise);
    ck_assert_double_lt(fabs(mean / a - 1.0), 1e-2);
    if (!ode) {
        ck_assert_double_lt(worst, 1e-9);
        ck_assert_double_lt(slip, 1e-12);
    }
    ck_assert_double_lt(rest, ode ? 1e-6 : 1e-9);
    ck_assert_double_le(rise, ENERGY_ROUNDING);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/*
 * The same ball with rho = 0 (dContactRolling set, no coefficient): no rolling resistance, so
 * it rolls on at v0 = omega_y r for 1 s (pegplus: to 1e-9 m/s; ODE: 1e-6).
 */
START_TEST(test_rolling_ball_no_rho)
{
    const pp_model model = runs[_i].model;
    const double h = 0.01, m = 1.0, r = 0.1, v0 = 0.5;
    program p;
    program_create(&p);
    p.surface.mode = dContactApprox1 | dContactRolling;
    p.surface.mu = 1.0;
    p.surface.rho = 0.0;
    dBodyID ball = add_ball(&p, m, r);
    dBodySetLinearVel(ball, v0, 0.0, 0.0);
    dBodySetAngularVel(ball, 0.0, v0 / r, 0.0);
    pp_world *pw = pegplus_for(&p, model, runs[_i].k);
    double worst = 0.0;
    for (int i = 0; i < 100; ++i) {
        step(pw, &p, h);
        worst = fmax(worst, fmax(fabs(dBodyGetLinearVel(ball)[0] - v0),
                                 fabs(dBodyGetAngularVel(ball)[1] * r - v0)));
    }
    printf("%s k=%d rolling rho=0: after 1 s v %.12f m/s, omega r %.12f m/s, worst |. - v0| "
           "%.2e m/s\n", pp_model_name(model), runs[_i].k, dBodyGetLinearVel(ball)[0],
           dBodyGetAngularVel(ball)[1] * r, worst);
    ck_assert_double_lt(worst, model == PP_MODEL_ODE ? 1e-6 : 1e-9);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/*
 * A ball spinning in place about the vertical at omega0 = 5 rad/s, dContactAxisDep with
 * rho = rho2 = 0 and rhoN = 0.005 m (mu = mu2 = 1): alpha = -(5/2) rhoN g / r^2 =
 * -12.2625 rad/s^2, so it stops after 0.4077 s. Each step of the pegplus models takes
 * |alpha| h off omega_z (1e-9 relative), the mean over the spinning phase is alpha to 1 %
 * (ODE too); then the ball is at rest (pegplus: 1e-9 rad/s; ODE 1e-6), it never moves
 * sideways (1e-12 m/s) and the energy never rises.
 */
START_TEST(test_spinning_ball_stops)
{
    const pp_model model = runs[_i].model;
    const int ode = model == PP_MODEL_ODE;
    const double h = 0.01, m = 1.0, r = 0.1, rhoN = 0.005, w0 = 5.0;
    const double alpha = -2.5 * rhoN * G / (r * r);
    program p;
    program_create(&p);
    p.surface.mode = dContactApprox1 | dContactAxisDep | dContactRolling;
    p.surface.mu = p.surface.mu2 = 1.0;
    p.surface.rho = p.surface.rho2 = 0.0;
    p.surface.rhoN = rhoN;
    dBodyID ball = add_ball(&p, m, r);
    dBodySetAngularVel(ball, 0.0, 0.0, w0);
    pp_world *pw = pegplus_for(&p, model, runs[_i].k);
    const int spinning_steps = (int)floor(w0 / (-alpha * h)); /* 40 */
    double w = w0, worst = 0.0, sideways = 0.0, rise = 0.0, e = ball_energy(ball, m, r);
    for (int i = 0; i < spinning_steps + 60; ++i) {
        step(pw, &p, h);
        const double wz = dBodyGetAngularVel(ball)[2];
        if (i < spinning_steps) {
            worst = fmax(worst, fabs((wz - w) / (alpha * h) - 1.0));
            w = wz;
        }
        const double *v = dBodyGetLinearVel(ball);
        sideways = fmax(sideways, hypot(v[0], v[1]));
        const double e1 = ball_energy(ball, m, r);
        rise = fmax(rise, e1 - e);
        e = e1;
    }
    const double mean = (w - w0) / (spinning_steps * h);
    const double rest = fabs(dBodyGetAngularVel(ball)[2]);
    printf("%s k=%d spinning rhoN=%g: mean angular deceleration %.9f rad/s^2 (closed form "
           "-(5/2) rhoN g/r^2 = %.9f, relative error %.2e), worst step %.2e; then omega_z "
           "%.2e rad/s, sideways %.2e m/s, energy rise %.2e J\n",
           pp_model_name(model), runs[_i].k, rhoN, mean, alpha, fabs(mean / alpha - 1.0),
           worst, rest, sideways, rise);
    ck_assert_double_lt(fabs(mean / alpha - 1.0), 1e-2);
    if (!ode) {
        ck_assert_double_lt(worst, 1e-9);
        ck_assert_double_lt(sideways, 1e-12);
    }
    ck_assert_double_lt(rest, ode ? 1e-6 : 1e-9);
    ck_assert_double_le(rise, ENERGY_ROUNDING);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/*
 * The bound rho N with N != m g: a ball on a slope of angle theta (gravity tilted, the ground
 * level: g = (g sin theta, 0, -g cos theta)), rho = 0.01 m, r = 0.1 m, mu = 1, set down at
 * rest. Held, it needs a rolling torque r F = r m g sin theta about the tangent axis (F the
 * friction force holding it), and the bound is rho N = rho m g cos theta: it stays at rest
 * while tan theta <= rho / r = 0.1. Rolling down (a = r alpha, m a = m g sin theta - F,
 * I alpha = r F - rho N):
 *     a = (5/7) g (sin theta - (rho/r) cos theta).
 * theta = 4 degrees (tan 0.0699): at rest for 1 s (pegplus 1e-9 m/s; ODE 1e-6);
 * theta = 10 degrees: a = 0.526709 m/s^2, every step of the pegplus models to 1e-9 relative,
 * the mean over 1 s to 1 % for every model.
 */
START_TEST(test_rolling_ball_slope)
{
    const pp_model model = runs[_i].model;
    const int ode = model == PP_MODEL_ODE;
    const double h = 0.01, m = 1.0, r = 0.1, rho = 0.01;
    const double degrees[2] = {4.0, 10.0};
    for (int c = 0; c < 2; ++c) {
        const double theta = degrees[c] * M_PI / 180.0;
        const double a = fmax(0.0, (5.0 / 7.0) * G * (sin(theta) - rho / r * cos(theta)));
        program p;
        program_create(&p);
        dWorldSetGravity(p.world, G * sin(theta), 0.0, -G * cos(theta));
        p.surface.mode = dContactApprox1 | dContactRolling;
        p.surface.mu = 1.0;
        p.surface.rho = rho;
        dBodyID ball = add_ball(&p, m, r);
        pp_world *pw = pegplus_for(&p, model, runs[_i].k);
        double v = 0.0, worst = 0.0;
        for (int i = 0; i < 100; ++i) {
            step(pw, &p, h);
            const double w = dBodyGetLinearVel(ball)[0];
            worst = fmax(worst, a > 0.0 ? fabs((w - v) / (a * h) - 1.0) : fabs(w));
            v = w;
        }
        const double mean = v / (100 * h);
        printf("%s k=%d slope %.0f deg, rho/r = %.2f: mean acceleration %.9f m/s^2 (closed form "
               "%.9f), worst step %.2e%s\n", pp_model_name(model), runs[_i].k, degrees[c],
               rho / r, mean, a, worst, a > 0.0 ? " (relative)" : " m/s");
        if (a > 0.0) {
            ck_assert_double_lt(fabs(mean / a - 1.0), 1e-2);
            if (!ode) ck_assert_double_lt(worst, 1e-9);
        } else {
            ck_assert_double_lt(worst, ode ? 1e-6 : 1e-9);
        }
        ck_assert_int_eq(messages, 0);
        pp_world_destroy(pw);
        program_destroy(&p);
    }
}
END_TEST

/*
 * Rolling friction and joint rows in one LCP: the ball (rho = 0.01 m, mu = 1) driven by an
 * angular motor (dJointAMotor, one axis e_y in the world, target rate omega_t = 2 rad/s,
 * fmax 100 N m) from rest. The motor holds omega_y = omega_t; friction speeds the ball up
 * until it rolls, v = omega_t r = 0.2 m/s; then nothing changes: the friction force is 0
 * (v constant) and the motor's torque balances the rolling torque at its bound:
 * tau_motor = rho N = rho m g = 0.0981 N m. The motor's row and the rolling rows share the
 * ball's rotation, so the motor sees the rolling torque only through their coupling in the
 * LCP. From step 20 to 60 the ball rolls at omega_t r and the motor's dJointFeedback torque is
 * (0, rho m g, 0) (pegplus models: 1e-9 relative, the force 0 to 1e-12 N, v to 1e-10 m/s;
 * ODE: 1e-4).
 */
START_TEST(test_rolling_ball_motor)
{
    const pp_model model = runs[_i].model;
    const int ode = model == PP_MODEL_ODE;
    const double h = 0.01, m = 1.0, r = 0.1, rho = 0.01, rate = 2.0;
    program p;
    program_create(&p);
    p.surface.mode = dContactApprox1 | dContactRolling;
    p.surface.mu = 1.0;
    p.surface.rho = rho;
    dBodyID ball = add_ball(&p, m, r);
    dJointID motor = dJointCreateAMotor(p.world, 0);
    dJointAttach(motor, ball, 0);
    dJointSetAMotorNumAxes(motor, 1);
    dJointSetAMotorAxis(motor, 0, 0, 0.0, 1.0, 0.0);
    dJointSetAMotorParam(motor, dParamVel, rate);
    dJointSetAMotorParam(motor, dParamFMax, 100.0);
    dJointFeedback fb;
    memset(&fb, 0, sizeof fb);
    dJointSetFeedback(motor, &fb);
    pp_world *pw = pegplus_for(&p, model, runs[_i].k);
    const double torque = rho * m * G;
    double worst_torque = 0.0, worst_force = 0.0, worst_v = 0.0;
    for (int i = 1; i <= 60; ++i) {
        step(pw, &p, h);
        if (i < 20) continue;
        worst_torque = fmax(worst_torque, fmax(fabs(fb.t1[1] / torque - 1.0),
                                               hypot(fb.t1[0], fb.t1[2]) / torque));
        worst_force = fmax(worst_force, sqrt(fb.f1[0] * fb.f1[0] + fb.f1[1] * fb.f1[1] +
                                             fb.f1[2] * fb.f1[2]));
        worst_v = fmax(worst_v, fabs(dBodyGetLinearVel(ball)[0] - rate * r));
    }
    printf("%s k=%d motor-driven rolling ball: motor torque (%.3e, %.12f, %.3e) N m (rho m g = "
           "%.12f), worst relative %.2e, motor force up to %.2e N, v - omega_t r up to %.2e "
           "m/s\n", pp_model_name(model), runs[_i].k, fb.t1[0], fb.t1[1], fb.t1[2], torque,
           worst_torque, worst_force, worst_v);
    ck_assert_double_lt(worst_torque, ode ? 1e-4 : 1e-9);
    ck_assert_double_lt(worst_force, ode ? 1e-4 : 1e-12);
    ck_assert_double_lt(worst_v, ode ? 1e-6 : 1e-10);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/*
 * Rolling rows on redundant supports: two boxes stacked (lower 0.2 m, 1 kg; upper 0.1 m,
 * 0.5 kg, set 2 cm off centre and turned 20 degrees about z), every contact with rho =
 * 0.01 m (dContactApprox1), set down at rest, beside a twin stack in its own world with
 * rho = 0. At rest nothing turns, so the rolling rows carry nothing and the stack moves as
 * its twin: after 100 steps both boxes' poses agree to 1e-12 m (pegplus models); every
 * velocity is below 1e-8 (m/s, rad/s: the level the twin without rolling friction creeps at
 * on its redundant supports, 6.1e-9 measured) and 1e-6 for ODE; the energy never rises under
 * the pegplus models (1e-12 J; ODE's own settling gains 3e-3 J, printed); every step solved
 * exactly (no fallback); no message.
 */
static void add_stack(program *p, dBodyID box[2])
{
    const double l[2] = {0.2, 0.1}, m[2] = {1.0, 0.5};
    for (int b = 0; b < 2; ++b) {
        box[b] = dBodyCreate(p->world);
        dMass mass;
        dMassSetBoxTotal(&mass, m[b], l[b], l[b], l[b]);
        dBodySetMass(box[b], &mass);
        dBodySetPosition(box[b], b ? 0.02 : 0.0, 0.0, b ? l[0] + 0.5 * l[1] : 0.5 * l[0]);
        dGeomID g = dCreateBox(p->space, l[b], l[b], l[b]);
        dGeomSetBody(g, box[b]);
    }
    dMatrix3 R;
    dRFromAxisAndAngle(R, 0.0, 0.0, 1.0, 20.0 * M_PI / 180.0);
    dBodySetRotation(box[1], R);
}

static double stack_energy(dBodyID box[2], double *speed)
{
    const double l[2] = {0.2, 0.1}, m[2] = {1.0, 0.5};
    double e = 0.0;
    *speed = 0.0;
    for (int b = 0; b < 2; ++b) {
        const double *v = dBodyGetLinearVel(box[b]), *w = dBodyGetAngularVel(box[b]);
        const double I = m[b] * l[b] * l[b] / 6.0;
        e += 0.5 * m[b] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
             0.5 * I * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) +
             m[b] * G * dBodyGetPosition(box[b])[2];
        for (int k = 0; k < 3; ++k) *speed = fmax(*speed, fmax(fabs(v[k]), fabs(w[k])));
    }
    return e;
}

START_TEST(test_box_stack_rests)
{
    const pp_model model = runs[_i].model;
    const int ode = model == PP_MODEL_ODE;
    const double h = 0.01;
    program p[2];
    dBodyID box[2][2];
    pp_world *pw[2];
    for (int t = 0; t < 2; ++t) {
        program_create(&p[t]);
        p[t].surface.mode = dContactApprox1 | dContactRolling;
        p[t].surface.mu = 0.8;
        p[t].surface.rho = t ? 0.0 : 0.01;
        add_stack(&p[t], box[t]);
        pw[t] = pegplus_for(&p[t], model, runs[_i].k);
    }
    double speed, rise = 0.0, e = stack_energy(box[0], &speed), apart = 0.0;
    for (int i = 0; i < 100; ++i) {
        for (int t = 0; t < 2; ++t) {
            step(pw[t], &p[t], h);
            if (!ode) ck_assert_int_eq(pp_world_get_stats(pw[t])->lcp_fallback, 0);
        }
        const double e1 = stack_energy(box[0], &speed);
        rise = fmax(rise, e1 - e);
        e = e1;
    }
    for (int b = 0; b < 2; ++b)
        for (int k = 0; k < 3; ++k)
            apart = fmax(apart, fabs(dBodyGetPosition(box[0][b])[k] - dBodyGetPosition(box[1][b])[k]));
    double speed0;
    stack_energy(box[1], &speed0);
    printf("%s k=%d box stack with rolling friction: largest speed after 1 s %.2e (twin with "
           "rho = 0: %.2e), poses apart %.2e m, energy rise %.2e J\n", pp_model_name(model),
           runs[_i].k, speed, speed0, apart, rise);
    ck_assert_double_lt(speed, ode ? 1e-6 : 1e-8);
    if (!ode) {
        ck_assert_double_lt(apart, 1e-12);
        ck_assert_double_le(rise, ENERGY_ROUNDING);
    }
    ck_assert_int_eq(messages, 0);
    for (int t = 0; t < 2; ++t) {
        pp_world_destroy(pw[t]);
        program_destroy(&p[t]);
    }
}
END_TEST

static Suite *rolling_suite(void)
{
    Suite *s = suite_create("rolling_friction");
    TCase *tc = tcase_create("rolling_friction");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, test_rolling_ball_stops, 0, 5);
    tcase_add_loop_test(tc, test_rolling_ball_no_rho, 0, 5);
    tcase_add_loop_test(tc, test_rolling_ball_slope, 0, 5);
    tcase_add_loop_test(tc, test_rolling_ball_motor, 0, 5);
    tcase_add_loop_test(tc, test_box_stack_rests, 0, 5);
    tcase_add_loop_test(tc, test_spinning_ball_stops, 0, 5);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return pp_it_run(rolling_suite()); }
