/*
 * dJointFeedback on the contact joints a program's near callback makes (issue 13;
 * docs/drop-in.md "dJointFeedback"), under the standard model and PEG, and stock ODE
 * (PP_MODEL_ODE, dWorldStep) as a cross-check. The callback sets a feedback on every contact
 * joint it makes, as ODE programs do to read contact forces; after the step the program sums
 * the feedbacks of each pair. Under the pegplus models the pair's one probe joint gets the
 * force and torque of all of pegplus's contacts of the pair over the step (impulse / h),
 * about each body's centre, on its first body in f1, t1 and its second in f2, t2 (ODE's
 * convention: f1 for the joint's first non-null body).
 *   - A box resting on the ground: the ground's force on it is (0, 0, m g) and the torque
 *     about its centre 0.
 *   - Two boxes stacked: the lower box's pair with the ground carries both weights,
 *     (0, 0, (m1 + m2) g); the upper's pair with the lower one m2 g on the upper, -m2 g on
 *     the lower (f2).
 *   - A ball rolling with rolling friction rho: the ground's force on it is (m a, 0, m g)
 *     with a = -(5/7) rho g / r, and the torque about its centre -(2/7) rho m g about the
 *     rolling axis: the friction force's -r F plus the rolling torque -rho m g
 *     (check_rolling_friction has the derivation), i.e. I alpha.
 *   - A ball bouncing (PLUS impacts under the pegplus models): every step the feedback is the
 *     ball's momentum balance, impacts included.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_messages.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define G 9.81
#define MAX_CONTACTS 16
#define MAX_PAIRS 4

/* The feedbacks of one geom pair in one step: one per contact joint made. */
typedef struct pair_feedback {
    dGeomID a, b;
    dJointFeedback fb[MAX_CONTACTS];
    dBodyID node0[MAX_CONTACTS];   /* the body f1 belongs to */
    int used;
} pair_feedback;

typedef struct program {
    dWorldID world;
    dSpaceID space;
    dJointGroupID group;
    dGeomID ground;
    dSurfaceParameters surface;
    pair_feedback pair[MAX_PAIRS];
    int pairs;
    int joints_per_contact;        /* 1, or 2: every contact made twice, each with a feedback */
} program;

static pair_feedback *pair_of(program *p, dGeomID g1, dGeomID g2)
{
    for (int i = 0; i < p->pairs; ++i)
        if ((p->pair[i].a == g1 && p->pair[i].b == g2) || (p->pair[i].a == g2 && p->pair[i].b == g1))
            return &p->pair[i];
    ck_assert_int_lt(p->pairs, MAX_PAIRS);
    pair_feedback *f = &p->pair[p->pairs++];
    memset(f, 0, sizeof *f);
    f->a = g1;
    f->b = g2;
    return f;
}

/* A stock callback that asks for the contact force of every joint it makes. */
static void near_callback(void *data, dGeomID g1, dGeomID g2)
{
    program *p = data;
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    dContact contact[MAX_CONTACTS];
    memset(contact, 0, sizeof contact);
    int n = dCollide(g1, g2, MAX_CONTACTS, &contact[0].geom, sizeof(dContact));
    pair_feedback *f = n > 0 ? pair_of(p, g1, g2) : NULL;
    for (int i = 0; i < n; ++i) {
        contact[i].surface = p->surface;
        for (int twice = 0; twice < p->joints_per_contact; ++twice) {
            dJointID j = dJointCreateContact(p->world, p->group, &contact[i]);
            dJointAttach(j, b1, b2);
            ck_assert_int_lt(f->used, MAX_CONTACTS);
            f->node0[f->used] = b1 ? b1 : b2;
            dJointSetFeedback(j, &f->fb[f->used++]);
        }
    }
}

/* The force and torque the pair (g1, g2) applied to body `on` in the last step: the sum of
 * its joints' feedbacks. */
static void pair_force(const program *p, dGeomID g1, dGeomID g2, dBodyID on, double f[3],
                       double t[3])
{
    memset(f, 0, 3 * sizeof *f);
    memset(t, 0, 3 * sizeof *t);
    for (int i = 0; i < p->pairs; ++i) {
        const pair_feedback *pf = &p->pair[i];
        if (!((pf->a == g1 && pf->b == g2) || (pf->a == g2 && pf->b == g1))) continue;
        for (int c = 0; c < pf->used; ++c) {
            const int first = pf->node0[c] == on;
            for (int k = 0; k < 3; ++k) {
                f[k] += first ? pf->fb[c].f1[k] : pf->fb[c].f2[k];
                t[k] += first ? pf->fb[c].t1[k] : pf->fb[c].t2[k];
            }
        }
    }
}

static void program_create(program *p)
{
    memset(p, 0, sizeof *p);
    p->world = dWorldCreate();
    p->space = dSimpleSpaceCreate(0);
    p->group = dJointGroupCreate(0);
    dWorldSetGravity(p->world, 0, 0, -G);
    p->ground = dCreatePlane(p->space, 0, 0, 1, 0);
    p->surface.mode = dContactApprox1;
    p->surface.mu = 0.5;
    p->joints_per_contact = 1;
}

static void program_destroy(program *p)
{
    dJointGroupDestroy(p->group);
    dSpaceDestroy(p->space);
    dWorldDestroy(p->world);
}

/* A box of mass m and side l resting with its bottom face at height z0. */
static dBodyID add_box(program *p, double m, double l, double z0)
{
    dBodyID b = dBodyCreate(p->world);
    dMass mass;
    dMassSetBoxTotal(&mass, m, l, l, l);
    dBodySetMass(b, &mass);
    dBodySetPosition(b, 0.0, 0.0, z0 + 0.5 * l);
    dGeomID g = dCreateBox(p->space, l, l, l);
    dGeomSetBody(g, b);
    return b;
}

static const pp_model models[3] = {PP_MODEL_STANDARD, PP_MODEL_PEG, PP_MODEL_ODE};

static pp_world *pegplus_for(program *p, pp_model model)
{
    pp_config c = pp_config_default();
    c.model = model;
    c.lcp_budget_seconds = 0.0;
    c.ode_stepper = PP_ODE_WORLD_STEP;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(p->world, p->space, &c, &pw), PP_OK);
    ck_assert_int_eq(pp_world_set_near_callback(pw, p, near_callback), PP_OK);
    return pw;
}

/* One step: the feedbacks of the last step are dropped, as a program reusing its arrays. */
static void step(pp_world *pw, program *p, double h)
{
    for (int i = 0; i < p->pairs; ++i) p->pair[i].used = 0;
    ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
    dJointGroupEmpty(p->group);
}


static double norm(const double v[3])
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/* |f - expect| / |expect| */
static double relative(const double f[3], const double expect[3])
{
    const double d[3] = {f[0] - expect[0], f[1] - expect[1], f[2] - expect[2]};
    return norm(d) / norm(expect);
}

/*
 * A box (m = 2 kg, l = 0.2 m) resting on the ground, 50 steps of h = 0.01 s: from step 10 on,
 * the ground's force on it is (0, 0, m g) to 1e-9 relative and its torque about the centre
 * below 1e-9 m g l (pegplus models; ODE, whose soft normal rows settle: 1e-6). Again with a
 * callback that makes every contact joint twice, each with its feedback: the pair's sum is
 * the same (pegplus: the first joint carries it, the second 0; ODE shares it).
 */
START_TEST(test_box_at_rest)
{
    const pp_model model = models[_i % 3];
    const int ode = model == PP_MODEL_ODE;
    const double h = 0.01, m = 2.0, l = 0.2;
    program p;
    program_create(&p);
    p.joints_per_contact = 1 + _i / 3;
    dBodyID box = add_box(&p, m, l, 0.0);
    dGeomID g = dBodyGetFirstGeom(box);
    pp_world *pw = pegplus_for(&p, model);
    const double weight[3] = {0.0, 0.0, m * G};
    double worst = 0.0, torque = 0.0, f[3], t[3];
    for (int i = 1; i <= 50; ++i) {
        step(pw, &p, h);
        if (i < 10) continue;
        pair_force(&p, p.ground, g, box, f, t);
        worst = fmax(worst, relative(f, weight));
        torque = fmax(torque, norm(t) / (m * G * l));
        if (p.joints_per_contact == 2 && !ode) { /* the probe's two joints: all on the first */
            ck_assert_int_eq(p.pairs, 1);
            ck_assert_int_eq(p.pair[0].used, 2);
            ck_assert_double_eq(norm(p.pair[0].fb[1].f1), 0.0);
            ck_assert_double_eq(norm(p.pair[0].fb[1].t1), 0.0);
        }
    }
    printf("%s box at rest, %d joint(s) a contact: ground's force on it (%.3e, %.3e, %.12f) N "
           "(m g = %.12f), worst relative %.2e, torque / (m g l) %.2e\n", pp_model_name(model),
           p.joints_per_contact, f[0], f[1], f[2], m * G, worst, torque);
    ck_assert_double_lt(worst, ode ? 1e-6 : 1e-9);
    ck_assert_double_lt(torque, ode ? 1e-6 : 1e-9);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/*
 * Two boxes stacked (lower m1 = 2 kg, l = 0.2 m; upper m2 = 1 kg, l = 0.1 m): from step 10 to
 * 50 the ground's force on the lower box is (0, 0, (m1 + m2) g), the lower box's on the upper
 * (0, 0, m2 g) and the upper's on the lower (f2 of the same joints) -(0, 0, m2 g), each to
 * 1e-9 relative (ODE 1e-6).
 */
START_TEST(test_stacked_boxes)
{
    const pp_model model = models[_i];
    const int ode = model == PP_MODEL_ODE;
    const double h = 0.01, m1 = 2.0, m2 = 1.0;
    program p;
    program_create(&p);
    dBodyID lower = add_box(&p, m1, 0.2, 0.0), upper = add_box(&p, m2, 0.1, 0.2);
    dGeomID gl = dBodyGetFirstGeom(lower), gu = dBodyGetFirstGeom(upper);
    pp_world *pw = pegplus_for(&p, model);
    const double both[3] = {0.0, 0.0, (m1 + m2) * G}, top[3] = {0.0, 0.0, m2 * G};
    const double down[3] = {0.0, 0.0, -m2 * G};
    double worst[3] = {0.0, 0.0, 0.0}, f[3][3], t[3];
    for (int i = 1; i <= 50; ++i) {
        step(pw, &p, h);
        if (i < 10) continue;
        pair_force(&p, p.ground, gl, lower, f[0], t);
        pair_force(&p, gl, gu, upper, f[1], t);
        pair_force(&p, gl, gu, lower, f[2], t);
        worst[0] = fmax(worst[0], relative(f[0], both));
        worst[1] = fmax(worst[1], relative(f[1], top));
        worst[2] = fmax(worst[2], relative(f[2], down));
    }
    printf("%s stacked boxes: ground on lower %.12f N ((m1 + m2) g = %.12f, worst relative "
           "%.2e); lower on upper %.12f N (m2 g = %.12f, %.2e); upper on lower %.12f N (%.2e)\n",
           pp_model_name(model), f[0][2], (m1 + m2) * G, worst[0], f[1][2], m2 * G, worst[1],
           f[2][2], worst[2]);
    for (int k = 0; k < 3; ++k) ck_assert_double_lt(worst[k], ode ? 1e-6 : 1e-9);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/*
 * A ball (m = 1 kg, r = 0.1 m, mu = 1) rolling along x at 0.5 m/s with rho = 0.01 m
 * (dContactRolling): for 50 steps the ground's force on it is (m a, 0, m g),
 * a = -(5/7) rho g/r, and its torque (0, -(2/7) rho m g, 0) (pegplus models: 1e-9 relative;
 * ODE 1e-6).
 */
START_TEST(test_rolling_ball)
{
    const pp_model model = models[_i];
    const int ode = model == PP_MODEL_ODE;
    const double h = 0.01, m = 1.0, r = 0.1, rho = 0.01, v0 = 0.5;
    const double a = -(5.0 / 7.0) * rho * G / r;
    program p;
    program_create(&p);
    p.surface.mode = dContactApprox1 | dContactRolling;
    p.surface.mu = 1.0;
    p.surface.rho = rho;
    dBodyID ball = dBodyCreate(p.world);
    dMass mass;
    dMassSetSphereTotal(&mass, m, r);
    dBodySetMass(ball, &mass);
    dBodySetPosition(ball, 0.0, 0.0, r);
    dBodySetLinearVel(ball, v0, 0.0, 0.0);
    dBodySetAngularVel(ball, 0.0, v0 / r, 0.0);
    dGeomID g = dCreateSphere(p.space, r);
    dGeomSetBody(g, ball);
    pp_world *pw = pegplus_for(&p, model);
    const double force[3] = {m * a, 0.0, m * G}, torque[3] = {0.0, -(2.0 / 7.0) * rho * m * G, 0.0};
    double worst[2] = {0.0, 0.0}, f[3], t[3];
    for (int i = 1; i <= 50; ++i) {
        step(pw, &p, h);
        pair_force(&p, p.ground, g, ball, f, t);
        worst[0] = fmax(worst[0], relative(f, force));
        worst[1] = fmax(worst[1], relative(t, torque));
    }
    printf("%s rolling ball: ground's force (%.12f, %.2e, %.12f) N (m a = %.12f, m g = %.12f), "
           "worst relative %.2e; torque (%.2e, %.12f, %.2e) N m (-(2/7) rho m g = %.12f), "
           "worst relative %.2e\n", pp_model_name(model), f[0], f[1], f[2], m * a, m * G,
           worst[0], t[0], t[1], t[2], torque[1], worst[1]);
    ck_assert_double_lt(worst[0], ode ? 1e-6 : 1e-9);
    ck_assert_double_lt(worst[1], ode ? 1e-6 : 1e-9);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/*
 * A ball (m = 1 kg, r = 0.1 m) dropped from 0.3 m with bounce = 0.5 (bounce_vel 0.1 m/s),
 * mu = 0.5, moving sideways at 0.2 m/s and spinning at 3 rad/s about x: 80 steps, through
 * its impacts (PLUS under the pegplus models) and rest. The ground is the only thing that
 * touches it, so every step the feedback is its momentum balance:
 *     f = m (v' - v)/h - m g_vec,    t = I (omega' - omega)/h
 * (a solid ball: I isotropic, no gyroscopic torque), to 1e-9 of m g relative (ODE too).
 */
START_TEST(test_bouncing_ball_momentum)
{
    const pp_model model = models[_i];
    const double h = 0.01, m = 1.0, r = 0.1, I = 0.4 * m * r * r;
    program p;
    program_create(&p);
    p.surface.mode = dContactApprox1 | dContactBounce;
    p.surface.bounce = 0.5;
    p.surface.bounce_vel = 0.1;
    dBodyID ball = dBodyCreate(p.world);
    dMass mass;
    dMassSetSphereTotal(&mass, m, r);
    dBodySetMass(ball, &mass);
    dBodySetPosition(ball, 0.0, 0.0, 0.3 + r);
    dBodySetLinearVel(ball, 0.2, 0.0, 0.0);
    dBodySetAngularVel(ball, 3.0, 0.0, 0.0);
    dGeomID g = dCreateSphere(p.space, r);
    dGeomSetBody(g, ball);
    pp_world *pw = pegplus_for(&p, model);
    double worst[2] = {0.0, 0.0}, peak = 0.0, f[3], t[3];
    int touched = 0;
    for (int i = 1; i <= 80; ++i) {
        double v[3], w[3];
        memcpy(v, dBodyGetLinearVel(ball), sizeof v);
        memcpy(w, dBodyGetAngularVel(ball), sizeof w);
        step(pw, &p, h);
        pair_force(&p, p.ground, g, ball, f, t);
        const double *v1 = dBodyGetLinearVel(ball), *w1 = dBodyGetAngularVel(ball);
        double df[3], dt[3];
        for (int k = 0; k < 3; ++k) {
            df[k] = f[k] - (m * (v1[k] - v[k]) / h + (k == 2 ? m * G : 0.0));
            dt[k] = t[k] - I * (w1[k] - w[k]) / h;
        }
        worst[0] = fmax(worst[0], norm(df) / (m * G));
        worst[1] = fmax(worst[1], norm(dt) / (m * G * r));
        peak = fmax(peak, f[2]);
        touched += f[2] > 0.0;
    }
    printf("%s bouncing ball: feedback - momentum balance up to %.2e m g (force), %.2e m g r "
           "(torque); peak normal force %.3f N, %d steps with contact force\n",
           pp_model_name(model), worst[0], worst[1], peak, touched);
    ck_assert_int_gt(touched, 10);
    ck_assert_double_gt(peak, 10.0 * m * G); /* an impact step was among them */
    ck_assert_double_lt(worst[0], 1e-9);
    ck_assert_double_lt(worst[1], 1e-9);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

static Suite *contact_feedback_suite(void)
{
    Suite *s = suite_create("contact_feedback");
    TCase *tc = tcase_create("contact_feedback");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, test_box_at_rest, 0, 6);
    tcase_add_loop_test(tc, test_stacked_boxes, 0, 3);
    tcase_add_loop_test(tc, test_rolling_ball, 0, 3);
    tcase_add_loop_test(tc, test_bouncing_ball_momentum, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return pp_it_run(contact_feedback_suite()); }
