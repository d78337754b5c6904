/*
 * fuzz_step — libFuzzer harness for pp_world_step (issue 15, "Guards in CI").
 *
 * The bytes build a small world: a ground plane, sometimes a static box, 2 to 4 bodies
 * (sphere, box, capsule or a hull made by pp_convex_create) near each other with their
 * sizes, densities, poses, velocities and spins, sometimes a kinematic body, a disabled body
 * and a ball or hinge joint between the first two; a surface and a configuration; then 1 to
 * 4 steps, each under a model and a step size from the bytes. Up to two "poisons" write a
 * palette value (NaN, +-Inf, denormal, huge, ...) into a value ODE accepts without complaint:
 * gravity, a body's position, velocities, force, torque, mass or inertia, damping, or h.
 * Steps are kept cheap: small bodies and counts, at most 4 friction directions and 5
 * re-linearisations, speeds up to 10 m/s (fast pairs and heaps are slow, a known problem).
 * The LCP is bounded by its pivot caps, not a clock (lcp_budget_seconds = 0), so that an
 * input replays the same steps on any machine.
 *
 * What must hold after every step (anything else aborts, which libFuzzer reports):
 *  - the status is a pp_status; on any error every body's position, quaternion, rotation,
 *    velocities and force/torque accumulators are bitwise what they were before the call;
 *  - a rejected input (PP_ERR_INVALID_ARGUMENT) logged a message;
 *  - after PP_OK no NaN or Inf in the state of any body the step changed.
 */
#include <ode/ode.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define PP_FUZZ_NAME "fuzz_step"
#include "fuzz_harness.h"
#include "fuzz_input.h"
#include "pegplus/pegplus.h"

#define MAX_BODIES 4

static int g_trace; /* PP_FUZZ_TRACE set: print the decoded scene and each step (triage) */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    pp_fuzz_init();
    g_trace = getenv("PP_FUZZ_TRACE") != NULL;
    return 0;
}

typedef struct scene {
    dWorldID world;
    dSpaceID space;
    pp_world *pw;
    int n;
    dBodyID body[MAX_BODIES];
} scene;

/* One dynamic body of the bytes' shape, size and density, centred at the origin. */
static void add_body(scene *s, fuzz_reader *r)
{
    dBodyID b = dBodyCreate(s->world);
    dMass m;
    dGeomID g = NULL;
    const double density = fuzz_unit(r, 100.0, 5000.0);
    const int kind = fuzz_int(r, 0, 3);
    if (kind == 3) { /* a hull of 4..10 grid points */
        double pts[3 * 10];
        const int count = fuzz_int(r, 4, 10);
        for (int i = 0; i < 3 * count; ++i) pts[i] = 0.05 * (double)fuzz_int(r, -4, 4);
        if (pp_convex_create(s->pw, s->space, pts, count, &g) == PP_OK) {
            /* the hull's points are about the origin, not its centre of mass: ODE wants the
             * body origin there, but any inertia is a valid body; a box's keeps it simple */
            dMassSetBox(&m, density, 0.4, 0.4, 0.4);
        } else {
            g = NULL;
        }
    }
    if (!g) {
        const double a = fuzz_unit(r, 0.02, 0.5), c = fuzz_unit(r, 0.02, 0.5);
        if (kind == 0) {
            const double lz = fuzz_unit(r, 0.02, 0.5);
            g = dCreateBox(s->space, a, c, lz);
            dMassSetBox(&m, density, a, c, lz);
        } else if (kind == 1 || kind == 3) {
            g = dCreateSphere(s->space, 0.5 * a);
            dMassSetSphere(&m, density, 0.5 * a);
        } else {
            g = dCreateCapsule(s->space, 0.5 * a, c);
            dMassSetCapsule(&m, density, 3, 0.5 * a, c);
        }
    }
    dGeomSetBody(g, b);
    dBodySetMass(b, &m);
    double x[3], q[4], v[3], w[3];
    fuzz_units(r, -0.6, 0.6, x, 2);
    x[2] = fuzz_unit(r, 0.0, 1.2);
    dBodySetPosition(b, x[0], x[1], x[2]);
    fuzz_units(r, -1, 1, q, 4);
    const double qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; ++k) q[k] = qn > 1e-3 ? q[k] / qn : (k == 0);
    dBodySetQuaternion(b, q);
    const double vmax = fuzz_u8(r) < 32 ? 10.0 : 3.0;
    fuzz_units(r, -vmax, vmax, v, 3);
    dBodySetLinearVel(b, v[0], v[1], v[2]);
    fuzz_units(r, -10, 10, w, 3);
    dBodySetAngularVel(b, w[0], w[1], w[2]);
    s->body[s->n++] = b;
}

/* Write a palette value into something ODE takes without complaint. With `ode_runs` (a step of
 * the input runs PP_MODEL_ODE) finite values are kept within 1e6, and a mass, an inertia entry
 * or a step size at least 1e-6 in magnitude: stock dWorldStep aborts (dxNormalize4 in
 * dxStepBody) when an astronomical angular velocity, torque or force, or a mass of 3.5e-274 kg
 * under gravity on the ground, makes its quaternion update overflow, which pegplus does not
 * predict (README "Known problems"). The pegplus models get the whole palette. */
static void poison(scene *s, fuzz_reader *r, double *h, int ode_runs)
{
    const int what = fuzz_int(r, 0, 11);
    dBodyID b = s->body[fuzz_int(r, 0, s->n - 1)];
    const int k = fuzz_int(r, 0, 2);
    double x = fuzz_any_double(r);
    if (ode_runs && isfinite(x) && fabs(x) > 1e6) x = copysign(1e6, x);
    if (ode_runs && (what == 6 || what == 7 || what == 11) && x != 0 && fabs(x) < 1e-6)
        x = copysign(1e-6, x);
    dVector3 v; /* 4 dReals: dWorldGetGravity writes a dVector3 */
    if (g_trace) fprintf(stderr, "poison %d (body %p, component %d) = %g\n", what, (void *)b, k, x);
    switch (what) {
    case 0: {
        dWorldGetGravity(s->world, v);
        v[k] = x;
        dWorldSetGravity(s->world, v[0], v[1], v[2]);
        break;
    }
    case 1:
        memcpy(v, dBodyGetPosition(b), sizeof v);
        v[k] = x;
        dBodySetPosition(b, v[0], v[1], v[2]);
        break;
    case 2:
        memcpy(v, dBodyGetLinearVel(b), sizeof v);
        v[k] = x;
        dBodySetLinearVel(b, v[0], v[1], v[2]);
        break;
    case 3:
        memcpy(v, dBodyGetAngularVel(b), sizeof v);
        v[k] = x;
        dBodySetAngularVel(b, v[0], v[1], v[2]);
        break;
    case 4: dBodyAddForce(b, k == 0 ? x : 0, k == 1 ? x : 0, k == 2 ? x : 0); break;
    case 5: dBodyAddTorque(b, k == 0 ? x : 0, k == 1 ? x : 0, k == 2 ? x : 0); break;
    case 6: case 7: { /* mass or a diagonal inertia entry, when ODE takes it: dBodySetMass
                         asserts dMassCheck, which lets NaN and Inf through in places */
        dMass m;
        dBodyGetMass(b, &m);
        if (what == 6) m.mass = x;
        else m.I[5 * k] = x;
        if (dMassCheck(&m)) dBodySetMass(b, &m);
        break;
    }
    case 8: dBodySetLinearDamping(b, x); break;
    case 9: dBodySetAngularDamping(b, x); break;
    case 10: dBodySetMaxAngularSpeed(b, x); break;
    default: *h = x; break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader r = fuzz_reader_make(data, size);
    scene s;
    memset(&s, 0, sizeof s);
    s.world = dWorldCreate();
    dWorldSetGravity(s.world, 0, 0, -9.81);
    s.space = dHashSpaceCreate(0);
    dCreatePlane(s.space, 0, 0, 1, 0);

    pp_config c = pp_config_default();
    c.surface.mu = fuzz_unit(&r, 0.0, 1.5);
    c.surface.bounce = fuzz_u8(&r) < 128 ? 0.0 : fuzz_unit(&r, 0.0, 1.0);
    c.surface.bounce_vel = fuzz_unit(&r, 0.0, 0.5);
    c.friction_directions = fuzz_int(&r, 2, 4);
    c.relinearize_iterations = fuzz_int(&r, 0, 5);
    c.ode_stepper = (pp_ode_stepper)fuzz_int(&r, 0, 1);
    c.lcp_budget_seconds = 0.0; /* no clock: an input gives the same steps on any machine */
    REQUIRE(pp_world_create(s.world, s.space, &c, &s.pw) == PP_OK);

    const uint8_t flags = fuzz_u8(&r);
    if (flags & 1) { /* a static box (a step, a wall) */
        double l[3], x[3];
        fuzz_units(&r, 0.1, 1.0, l, 3);
        fuzz_units(&r, -0.8, 0.8, x, 2);
        x[2] = fuzz_unit(&r, 0.0, 0.5);
        dGeomSetPosition(dCreateBox(s.space, l[0], l[1], l[2]), x[0], x[1], x[2]);
    }
    const int n = fuzz_int(&r, 2, MAX_BODIES);
    for (int i = 0; i < n; ++i) add_body(&s, &r);
    if (flags & 2) dBodySetKinematic(s.body[fuzz_int(&r, 0, n - 1)]);
    if (flags & 4) dBodyDisable(s.body[fuzz_int(&r, 0, n - 1)]);
    if (flags & 8) { /* a joint between the first two bodies, anchored between them */
        const dReal *a = dBodyGetPosition(s.body[0]), *b = dBodyGetPosition(s.body[1]);
        dJointID j = (flags & 16) ? dJointCreateHinge(s.world, 0) : dJointCreateBall(s.world, 0);
        dJointAttach(j, s.body[0], s.body[1]);
        if (flags & 16) {
            dJointSetHingeAnchor(j, 0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.5 * (a[2] + b[2]));
            dJointSetHingeAxis(j, 0, 1, 0);
        } else {
            dJointSetBallAnchor(j, 0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.5 * (a[2] + b[2]));
        }
    }
    if (flags & 32) dWorldSetAutoDisableFlag(s.world, 1);

    double h = fuzz_unit(&r, 0.001, 0.02);
    const int steps = fuzz_int(&r, 1, 4);
    pp_model models[4];
    int ode_runs = 0;
    for (int step = 0; step < steps; ++step) {
        models[step] = (pp_model)fuzz_int(&r, 0, 2);
        ode_runs |= models[step] == PP_MODEL_ODE;
    }
    const int poisons = fuzz_int(&r, 0, 3) == 0 ? fuzz_int(&r, 1, 2) : 0;
    for (int i = 0; i < poisons; ++i) poison(&s, &r, &h, ode_runs);

    for (int step = 0; step < steps; ++step) {
        const pp_model model = models[step];
        REQUIRE(pp_world_set_model(s.pw, model) == PP_OK);
        body_bytes before[MAX_BODIES], after[MAX_BODIES];
        for (int i = 0; i < n; ++i) read_body(s.body[i], &before[i]);
        g_errors = 0;
        g_message[0] = '\0';
        const pp_status st = pp_world_step(s.pw, h);
        for (int i = 0; i < n; ++i) read_body(s.body[i], &after[i]);
        if (g_trace) {
            const pp_step_stats *stats = pp_world_get_stats(s.pw);
            fprintf(stderr, "step %d: model %s, h %g: %s %s (%.3f s, %d impacts, largest LCP %d, "
                    "%d pivots, %d sub-steps)\n", step, pp_model_name(model), h,
                    pp_status_string(st), g_message, stats->time_total, stats->impacts,
                    stats->lcp_largest, stats->lcp_pivots, stats->substeps);
            for (int i = 0; i < n; ++i)
                fprintf(stderr, "  body %d %p%s: x (%g %g %g) q (%g %g %g %g) v (%g %g %g) w (%g %g %g)\n", i,
                        (void *)s.body[i], dBodyIsEnabled(s.body[i]) ? "" : " disabled",
                        after[i].x[0], after[i].x[1], after[i].x[2], after[i].q[0], after[i].q[1],
                        after[i].q[2], after[i].q[3], after[i].v[0], after[i].v[1], after[i].v[2],
                        after[i].w[0], after[i].w[1], after[i].w[2]);
        }
        REQUIRE(st >= PP_OK && st <= PP_ERR_NUMERICAL);
        if (st == PP_ERR_INVALID_ARGUMENT) REQUIRE(g_errors > 0);
        if (st != PP_OK) {
            REQUIRE(memcmp(before, after, sizeof(body_bytes) * (size_t)n) == 0);
        } else {
            /* a body the step wrote (a disabled one left alone may keep a poisoned value) */
            for (int i = 0; i < n; ++i)
                if (memcmp(&before[i], &after[i], sizeof(body_bytes)) != 0)
                    REQUIRE(body_finite(&after[i]));
        }
    }
    pp_world_destroy(s.pw);
    dSpaceDestroy(s.space);
    dWorldDestroy(s.world);
    return 0;
}
