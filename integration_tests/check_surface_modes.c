/*
 * ODE's surface modes honoured by the pegplus models (issue 13 item 1; docs/drop-in.md's
 * table), each a closed form driven through a program's own near callback
 * (pp_world_set_near_callback), under the standard model and PEG (boxes on a plane), and
 * cross-checked against stock ODE (PP_MODEL_ODE, the same callback in dSpaceCollide +
 * dWorldStep) where ODE's own rows give the same closed form:
 *   - anisotropic friction (dContactMu2, dContactFDir1): a box sliding along t1 = fdir1 loses
 *     mu g h of speed per step, along t2 = n x t1 mu2 g h, with k = 4 and k = 8 friction
 *     directions (the polygon inscribed in the ellipse; at k = 4 ODE's per-direction box);
 *     the same box with no fdir1 takes ODE's default frame (dPlaneSpace of the normal);
 *   - surface velocity (dContactMotion1, dContactMotion2): a box set on a belt moving at
 *     motion1 along fdir1 (motion2 along t2) gains mu g h (mu2 g h) per step until it moves
 *     at the belt's speed, then is carried at that speed;
 *   - soft contact (dContactSoftCFM, dContactSoftERP): a resting box sinks cfm m g h/(4 erp);
 *     with soft_erp alone it keeps zero overlap;
 *   - force-dependent slip (dContactSlip1/2): a pushed box slides at slip F/4.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_messages.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define G 9.81
#define MAX_CONTACTS 8

typedef struct program {
    dWorldID world;
    dSpaceID space;
    dJointGroupID group;
    dGeomID ground;
    dSurfaceParameters surface;
    double fdir1[3];
} program;

/* A near callback in the stock style: every contact gets p->surface and p->fdir1. */
static void near_callback(void *data, dGeomID g1, dGeomID g2)
{
    program *p = data;
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    dContact contact[MAX_CONTACTS];
    memset(contact, 0, sizeof contact);
    int n = dCollide(g1, g2, MAX_CONTACTS, &contact[0].geom, sizeof(dContact));
    for (int i = 0; i < n; ++i) {
        contact[i].surface = p->surface;
        for (int k = 0; k < 3; ++k) contact[i].fdir1[k] = p->fdir1[k];
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
    p->ground = dCreatePlane(p->space, 0, 0, 1, 0);
    p->surface.mode = dContactApprox1;
}

static void program_destroy(program *p)
{
    dJointGroupDestroy(p->group);
    dSpaceDestroy(p->space);
    dWorldDestroy(p->world);
}

/* A 0.2 m, 1 kg cube resting on the ground at (x, y), moving at velocity (vx, vy, 0). */
static dBodyID add_box(program *p, double x, double y, double vx, double vy)
{
    const double l = 0.2;
    dBodyID b = dBodyCreate(p->world);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, l, l, l);
    dBodySetMass(b, &m);
    dBodySetPosition(b, x, y, 0.5 * l);
    dBodySetLinearVel(b, vx, vy, 0.0);
    dGeomID g = dCreateBox(p->space, l, l, l);
    dGeomSetBody(g, b);
    return b;
}

static pp_world *pegplus_for(program *p, pp_model model, int directions)
{
    pp_config c = pp_config_default();
    c.model = model;
    if (directions) c.friction_directions = directions;
    c.lcp_budget_seconds = 0.0; /* machine-independent */
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


static double dot(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* ---- anisotropic friction ---------------------------------------------------------------- */

/* Runs: {model, k}. ODE's k is its own (two rows along t1, t2: the k = 4 box). */
static const struct {
    pp_model model;
    int k;
} runs[5] = {{PP_MODEL_STANDARD, 4}, {PP_MODEL_STANDARD, 8}, {PP_MODEL_PEG, 4},
             {PP_MODEL_PEG, 8}, {PP_MODEL_ODE, 0}};

/*
 * Two boxes slide on the ground, mu = 0.2 along fdir1 = (cos 30°, sin 30°, 0), mu2 = 0.6 along
 * t2 = n x fdir1 (ODE's normal points into the box, n = e_z: t2 = (-sin 30°, cos 30°, 0)).
 * The first starts at 2 m/s along t1, the second at 2 m/s along t2. While sliding, a box's
 * normal impulse is m g h per step and its friction impulse the polygon's vertex opposite the
 * slip: mu m g h along -t1 for the first (vertex -mu t1), mu2 m g h along -t2 for the second
 * (vertex -mu2 t2), for k = 4 and k = 8 alike. So each step takes exactly mu g h
 * (mu2 g h) off the speed and none off the other tangent (checked to 1e-9 relative per step
 * for the pegplus models; stock ODE's dWorldStep, whose normal row has the world CFM 1e-5,
 * to 1e-4).
 */
START_TEST(test_anisotropic_fdir1)
{
    const pp_model model = runs[_i].model;
    const double h = 0.01, mu = 0.2, mu2 = 0.6, v0 = 2.0;
    const int steps = 30; /* the mu2 box: 2 - 0.6 g 0.3 = 0.234 m/s left, still sliding */
    const double c = cos(M_PI / 6), s = sin(M_PI / 6);
    const double t1[3] = {c, s, 0.0}, t2[3] = {-s, c, 0.0};
    program p;
    program_create(&p);
    p.surface.mode = dContactApprox1 | dContactMu2 | dContactFDir1;
    p.surface.mu = mu;
    p.surface.mu2 = mu2;
    memcpy(p.fdir1, t1, sizeof t1);
    dBodyID along1 = add_box(&p, 0.0, 0.0, v0 * t1[0], v0 * t1[1]);
    dBodyID along2 = add_box(&p, 0.0, 2.0, v0 * t2[0], v0 * t2[1]);
    pp_world *pw = pegplus_for(&p, model, runs[_i].k);
    const double tol = model == PP_MODEL_ODE ? 1e-4 : 1e-9;
    double u1 = v0, u2 = v0, worst[2] = {0.0, 0.0}, cross = 0.0;
    for (int i = 0; i < steps; ++i) {
        step(pw, &p, h);
        double w1 = dot(dBodyGetLinearVel(along1), t1), w2 = dot(dBodyGetLinearVel(along2), t2);
        worst[0] = fmax(worst[0], fabs((u1 - w1) / (mu * G * h) - 1.0));
        worst[1] = fmax(worst[1], fabs((u2 - w2) / (mu2 * G * h) - 1.0));
        cross = fmax(cross, fmax(fabs(dot(dBodyGetLinearVel(along1), t2)),
                                 fabs(dot(dBodyGetLinearVel(along2), t1))));
        u1 = w1;
        u2 = w2;
    }
    printf("%s k=%d: along t1: v %.9f m/s (closed form %.9f), worst step error %.2e; along t2: "
           "v %.9f m/s (closed form %.9f), worst %.2e; across %.2e m/s\n",
           pp_model_name(model), runs[_i].k, u1, v0 - mu * G * h * steps, worst[0], u2,
           v0 - mu2 * G * h * steps, worst[1], cross);
    ck_assert_double_lt(worst[0], tol);
    ck_assert_double_lt(worst[1], tol);
    ck_assert_double_lt(cross, model == PP_MODEL_ODE ? 1e-6 : 1e-9);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/*
 * dContactMu2 without dContactFDir1: ODE's frame is dPlaneSpace(n) with n = e_z (the normal
 * into the box), t1 = (0, -n_z, n_y)/|.| = (0, -1, 0) and t2 = n x t1 = (1, 0, 0). A box
 * sliding along -y takes mu g h per step off its speed, one sliding along x mu2 g h (pegplus
 * models: every step to 1e-9). Stock ODE's box sliding along y rocks on its corners (its
 * speed changes by 0.3 to 1.7 times mu g h from step to step, and it gains a small speed
 * along x), so there the mean deceleration over the 30 steps is compared, to 1 %.
 */
START_TEST(test_anisotropic_default_frame)
{
    const pp_model model = runs[_i].model;
    const double h = 0.01, mu = 0.2, mu2 = 0.6, v0 = 2.0;
    const int steps = 30;
    program p;
    program_create(&p);
    p.surface.mode = dContactApprox1 | dContactMu2;
    p.surface.mu = mu;
    p.surface.mu2 = mu2;
    dBodyID along1 = add_box(&p, 0.0, 0.0, 0.0, -v0);
    dBodyID along2 = add_box(&p, 0.0, 2.0, v0, 0.0);
    pp_world *pw = pegplus_for(&p, model, runs[_i].k);
    const int ode = model == PP_MODEL_ODE;
    const double tol = ode ? 1e-2 : 1e-9;
    double u1 = v0, u2 = v0, worst[2] = {0.0, 0.0};
    for (int i = 0; i < steps; ++i) {
        step(pw, &p, h);
        double w1 = -dBodyGetLinearVel(along1)[1], w2 = dBodyGetLinearVel(along2)[0];
        worst[0] = fmax(worst[0], fabs((u1 - w1) / (mu * G * h) - 1.0));
        worst[1] = fmax(worst[1], fabs((u2 - w2) / (mu2 * G * h) - 1.0));
        u1 = w1;
        u2 = w2;
    }
    if (ode) { /* the mean deceleration */
        worst[0] = fabs((v0 - u1) / (mu * G * h * steps) - 1.0);
        worst[1] = fabs((v0 - u2) / (mu2 * G * h * steps) - 1.0);
    }
    printf("%s k=%d default frame: along -y (t1) v %.9f m/s, worst %.2e; along x (t2) v %.9f "
           "m/s, worst %.2e\n", pp_model_name(model), runs[_i].k, u1, worst[0], u2, worst[1]);
    ck_assert_double_lt(worst[0], tol);
    ck_assert_double_lt(worst[1], tol);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/* ---- surface velocity (conveyor belts) ---------------------------------------------------- */

/*
 * A belt: the ground's contacts ask for motion1 = 0.5 m/s along fdir1 = e_x (first box) and
 * motion2 = 0.3 m/s along t2 = n x fdir1 = e_y (second box; ODE's rows: (v_box - v_ground) .
 * t = motion, the box being the joint's first body). Set down at rest, a box slips on the
 * belt and friction drives it: its speed grows by mu g h (mu2 g h) per step until it reaches
 * the belt's speed, v_n = min(n mu g h, 0.5), and stays there: carried at that speed.
 * mu = 0.2, mu2 = 0.5: 0.5 m/s is reached at step 26, 0.3 m/s at step 7. The pegplus models:
 * every step to 1e-12 m/s on the ramp (none across); carried to 2e-9 m/s (either way), the
 * level of the rocking of the same box resting on a still ground (its 4 corner contacts are
 * redundant: up to 9.1e-10 m/s over 200 steps, measured with a box stopped by friction).
 * Stock ODE rocks on the ramp (see above): its velocity after 60 steps is the belt's to
 * 1e-5 m/s.
 */
START_TEST(test_conveyor)
{
    const pp_model model = runs[_i].model;
    const double h = 0.01, mu = 0.2, mu2 = 0.5, belt[2] = {0.5, 0.3};
    const int steps = 60;
    program p;
    program_create(&p);
    p.surface.mode = dContactApprox1 | dContactMu2 | dContactFDir1 | dContactMotion1 |
                     dContactMotion2;
    p.surface.mu = mu;
    p.surface.mu2 = mu2;
    p.surface.motion1 = belt[0];
    p.surface.motion2 = 0.0;
    p.fdir1[0] = 1.0;
    dBodyID box[2];
    box[0] = add_box(&p, 0.0, 0.0, 0.0, 0.0);
    pp_world *pw = pegplus_for(&p, model, runs[_i].k);
    /* the second box on its own belt: the callback's surface is per run, so run it after */
    double worst = 0.0, carried = 0.0;
    for (int run = 0; run < 2; ++run) {
        if (run == 1) {
            pp_world_destroy(pw);
            dGeomDestroy(dBodyGetFirstGeom(box[0]));
            dBodyDestroy(box[0]);
            p.surface.motion1 = 0.0;
            p.surface.motion2 = belt[1];
            box[1] = add_box(&p, 0.0, 0.0, 0.0, 0.0);
            pw = pegplus_for(&p, model, runs[_i].k);
        }
        const double a = (run == 0 ? mu : mu2) * G;
        double v = 0.0;
        for (int i = 1; i <= steps; ++i) {
            step(pw, &p, h);
            const double *vel = dBodyGetLinearVel(box[run]);
            double along = vel[run], across = vel[1 - run];
            double expect = fmin(v + a * h, belt[run]);
            double err = fmax(fabs(along - expect), fabs(across));
            if (model == PP_MODEL_ODE) err = 0.0; /* ODE: the end speed only, below */
            if (expect == belt[run] && v == belt[run])
                carried = fmax(carried, err);
            else
                worst = fmax(worst, err);
            v = expect;
        }
        printf("%s k=%d belt motion%d = %.1f m/s: box at %.12f m/s after %d steps\n",
               pp_model_name(model), runs[_i].k, run + 1, belt[run],
               dBodyGetLinearVel(box[run])[run], steps);
        if (model == PP_MODEL_ODE)
            carried = fmax(carried, fmax(fabs(dBodyGetLinearVel(box[run])[run] - belt[run]),
                                         fabs(dBodyGetLinearVel(box[run])[1 - run])));
    }
    printf("%s k=%d: worst error on the ramp %.2e, carried within %.2e m/s\n",
           pp_model_name(model), runs[_i].k, worst, carried);
    ck_assert_double_lt(worst, model == PP_MODEL_ODE ? 1e-5 : 1e-12);
    ck_assert_double_lt(carried, model == PP_MODEL_ODE ? 1e-5 : 2e-9);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/* ---- soft contact (soft_cfm, soft_erp) ---------------------------------------------------- */

/*
 * A box resting on the ground with soft contacts. ODE's normal row, with the impulse
 * p = h lambda per contact, asks (v_box - v_ground) . n + (cfm/h) p - erp depth/h >= 0
 * ⊥ p >= 0 (pegplus/mlcp.h; erp = soft_erp, or 1, pegplus's full correction, without
 * dContactSoftERP). At rest the velocity is 0 and each of the 4 corner contacts carries
 * p = m g h/4, so the box settles at depth = cfm m g h/(4 erp): 1.2263e-4 m for cfm = 1e-3,
 * erp = 0.2; 1.2263e-6 m for cfm = 5e-5 without soft_erp (pegplus's erp 1; ODE's dWorldStep
 * uses the world's ERP, 0.2: 6.1313e-6 m), checked after 300 steps to 1e-6 relative, ODE's
 * too. With soft_cfm = 0 (soft_erp 0.2 alone) the pegplus models keep the box at zero
 * overlap (1e-12 m): PEG's promise holds for soft_cfm = 0.
 */
START_TEST(test_soft_contact)
{
    const pp_model model = runs[_i].model;
    const double h = 0.01, m = 1.0;
    const struct {
        int mode;
        double cfm, erp;
    } cases[3] = {{dContactSoftCFM | dContactSoftERP, 1e-3, 0.2},
                  {dContactSoftCFM, 5e-5, 0.0},
                  {dContactSoftERP, 0.0, 0.2}};
    for (int c = 0; c < 3; ++c) {
        program p;
        program_create(&p);
        p.surface.mode = dContactApprox1 | cases[c].mode;
        p.surface.mu = 0.5;
        p.surface.soft_cfm = cases[c].cfm;
        p.surface.soft_erp = cases[c].erp;
        dBodyID box = add_box(&p, 0.0, 0.0, 0.0, 0.0);
        pp_world *pw = pegplus_for(&p, model, runs[_i].k);
        for (int i = 0; i < 300; ++i) step(pw, &p, h);
        const double depth = 0.1 - dBodyGetPosition(box)[2];
        const double erp = cases[c].mode & dContactSoftERP ? cases[c].erp
                           : model == PP_MODEL_ODE ? dWorldGetERP(p.world) : 1.0;
        const double expect = cases[c].cfm * m * G * h / (4.0 * erp);
        printf("%s k=%d soft_cfm %g erp %g: depth %.6e m, cfm m g h/(4 erp) = %.6e m\n",
               pp_model_name(model), runs[_i].k, cases[c].cfm, erp, depth, expect);
        if (expect > 0.0)
            ck_assert_double_eq_tol(depth, expect, 1e-6 * expect);
        else if (model != PP_MODEL_ODE)
            ck_assert_double_lt(fabs(depth), 1e-12);
        ck_assert_int_eq(messages, 0);
        pp_world_destroy(pw);
        program_destroy(&p);
    }
}
END_TEST

/* ---- force-dependent slip (slip1, slip2) ------------------------------------------------- */

/*
 * Force-dependent slip: ODE's friction rows ask (v_box - v_ground) . t + slip lambda_t = 0
 * within the friction limit (lambda_t the friction force of one contact along t). A box
 * (m = 1 kg) pushed along t1 = fdir1 = e_x by F = 2 N, slip1 = 0.01 (the second along
 * t2 = e_y, slip2 = 0.02), with mu = 1 so that friction stays inside the cone: each of the
 * 4 corner contacts takes the friction impulse -h v_{n+1}/slip, so
 *     v_{n+1} = (v_n + h F/m) / (1 + 4 h/(slip m)),
 * which converges to the sliding speed slip F/4 (5 mm/s, 10 mm/s). The force acts at the
 * middle of the bottom face and the contacts have soft_cfm = 1e-6: the normal impulses of
 * the 4 redundant corners are then unique (rigid, the LCP may leave a corner unloaded, and
 * its friction, at most mu p_n = 0, vanishes: the box then turns). While the box speeds up,
 * friction and push differ and tilt it a little on its compliant contacts, so the steps
 * follow the recurrence to 1e-4 relative (measured 2e-5); the sliding speed after 100 steps
 * is slip F/4 to 1e-9 relative (pegplus models) and 1e-6 (ODE's dWorldStep). The boxes start
 * 1 micrometre deep: at depth 0 ODE's box-plane collider finds only 3 of the 4 corners.
 */
START_TEST(test_slip)
{
    const pp_model model = runs[_i].model;
    const double h = 0.01, m = 1.0, F = 2.0, slip[2] = {0.01, 0.02};
    program p;
    program_create(&p);
    p.surface.mode = dContactApprox1 | dContactFDir1 | dContactSlip1 | dContactSlip2 |
                     dContactSoftCFM | dContactSoftERP;
    p.surface.mu = 1.0;
    p.surface.soft_cfm = 1e-6;
    p.surface.soft_erp = 0.2;
    p.surface.slip1 = slip[0];
    p.surface.slip2 = slip[1];
    p.fdir1[0] = 1.0;
    dBodyID box[2] = {add_box(&p, 0.0, 0.0, 0.0, 0.0), add_box(&p, 0.0, 2.0, 0.0, 0.0)};
    dBodySetPosition(box[0], 0.0, 0.0, 0.1 - 1e-6);
    dBodySetPosition(box[1], 0.0, 2.0, 0.1 - 1e-6);
    pp_world *pw = pegplus_for(&p, model, runs[_i].k);
    double v[2] = {0.0, 0.0}, worst = 0.0, across = 0.0;
    for (int i = 0; i < 100; ++i) {
        dBodyAddForceAtRelPos(box[0], F, 0.0, 0.0, 0.0, 0.0, -0.1);
        dBodyAddForceAtRelPos(box[1], 0.0, F, 0.0, 0.0, 0.0, -0.1);
        step(pw, &p, h);
        for (int b = 0; b < 2; ++b) {
            v[b] = (v[b] + h * F / m) / (1.0 + 4.0 * h / (slip[b] * m));
            worst = fmax(worst, fabs(dBodyGetLinearVel(box[b])[b] / v[b] - 1.0));
            across = fmax(across, fabs(dBodyGetLinearVel(box[b])[1 - b]));
        }
    }
    printf("%s k=%d slip: v %.12f, %.12f m/s (slip F/4 = %.6f, %.6f), worst step error %.2e, "
           "across %.2e m/s\n", pp_model_name(model), runs[_i].k, dBodyGetLinearVel(box[0])[0],
           dBodyGetLinearVel(box[1])[1], slip[0] * F / 4, slip[1] * F / 4, worst, across);
    double steady = 0.0;
    for (int b = 0; b < 2; ++b)
        steady = fmax(steady, fabs(dBodyGetLinearVel(box[b])[b] / (slip[b] * F / 4) - 1.0));
    printf("%s k=%d slip: sliding speed / (slip F/4) - 1: %.2e\n", pp_model_name(model),
           runs[_i].k, steady);
    ck_assert_double_lt(steady, model == PP_MODEL_ODE ? 1e-6 : 1e-9);
    if (model != PP_MODEL_ODE) ck_assert_double_lt(worst, 1e-4);
    ck_assert_double_lt(across, model == PP_MODEL_ODE ? 1e-6 : 1e-9);
    ck_assert_int_eq(messages, 0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

/* ---- bad values are refused, naming the geoms -------------------------------------------- */

/* A callback asking for soft_erp = 2, or slip1 < 0, or a NaN mu2: the step is refused with
 * PP_ERR_INVALID_ARGUMENT and one error naming the dGeomIDs' classes and the parameter; the
 * box is where it was, at rest (nothing in ODE changed). */
START_TEST(test_bad_values_refused)
{
    const pp_model model = runs[_i % 4].model;
    const int which = _i / 4;
    program p;
    program_create(&p);
    const char *name[3] = {"soft_erp", "slip1", "mu2"};
    if (which == 0) {
        p.surface.mode = dContactApprox1 | dContactSoftERP;
        p.surface.soft_erp = 2.0;
    } else if (which == 1) {
        p.surface.mode = dContactApprox1 | dContactSlip1;
        p.surface.slip1 = -0.1;
    } else {
        p.surface.mode = dContactApprox1 | dContactMu2;
        p.surface.mu2 = NAN;
    }
    p.surface.mu = 0.5;
    dBodyID box = add_box(&p, 0.0, 0.0, 0.0, 0.0);
    pp_world *pw = pegplus_for(&p, model, runs[_i % 4].k);
    ck_assert_int_eq(pp_world_step(pw, 0.01), PP_ERR_INVALID_ARGUMENT);
    dJointGroupEmpty(p.group);
    ck_assert_int_eq(messages, 1);
    ck_assert_ptr_nonnull(strstr(last_message, name[which]));
    ck_assert_ptr_nonnull(strstr(last_message, "dBoxClass"));
    ck_assert_ptr_nonnull(strstr(last_message, "dPlaneClass"));
    ck_assert_double_eq(dBodyGetPosition(box)[2], 0.1);
    ck_assert_double_eq(dBodyGetLinearVel(box)[2], 0.0);
    pp_world_destroy(pw);
    program_destroy(&p);
}
END_TEST

static Suite *surface_modes_suite(void)
{
    Suite *s = suite_create("surface_modes");
    TCase *tc = tcase_create("surface_modes");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_loop_test(tc, test_anisotropic_fdir1, 0, 5);
    tcase_add_loop_test(tc, test_anisotropic_default_frame, 0, 5);
    tcase_add_loop_test(tc, test_conveyor, 0, 5);
    tcase_add_loop_test(tc, test_soft_contact, 0, 5);
    tcase_add_loop_test(tc, test_slip, 0, 5);
    tcase_add_loop_test(tc, test_bad_values_refused, 0, 12);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return pp_it_run(surface_modes_suite()); }

