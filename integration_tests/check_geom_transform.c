/*
 * dGeomTransform under the pegplus models (ODE 0.16 deprecates the class in favour of geom
 * offsets, but programs written for older ODE still wrap geoms in it): the wrapped geom is
 * posed at the transform's pose composed with its own, as ODE's dCollideTransform poses it.
 *
 * Twin worlds: the same body carries a box either wrapped in a dGeomTransform (the box at
 * (0.1, 0, 0) turned 30 degrees about z, relative to the transform) or attached with the same
 * geom offset (dGeomSetOffsetPosition/Rotation). Dropped onto the ground with a tilt, both
 * must follow the same trajectory (1e-12 m, the two poses differ by round-off of the
 * composition), and the box must come to rest on the ground without overlap (its lowest
 * corner at z = 0 to 1e-9 m).
 */
#include "pegplus/pegplus.h"
#include "it_common.h"

#include <check.h>
#include <math.h>
#include <stdio.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* dGeomTransform: on purpose */

static const double H = 0.01, SIDE = 0.2;

typedef struct twin {
    dWorldID world;
    dSpaceID space;
    dBodyID body;
    dGeomID box; /* the box itself (wrapped, or attached with an offset) */
    pp_world *pp;
} twin;

static void make(twin *t, pp_model model, int wrapped)
{
    t->world = dWorldCreate();
    dWorldSetGravity(t->world, 0, 0, -9.81);
    t->space = dHashSpaceCreate(0);
    dCreatePlane(t->space, 0, 0, 1, 0);
    t->body = dBodyCreate(t->world);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, SIDE, SIDE, SIDE);
    dBodySetMass(t->body, &m);
    dBodySetPosition(t->body, 0.0, 0.0, 0.4);
    dMatrix3 tilt, turn;
    dRFromAxisAndAngle(tilt, 1.0, 0.5, 0.0, 0.3);
    dBodySetRotation(t->body, tilt);
    dRFromAxisAndAngle(turn, 0.0, 0.0, 1.0, M_PI / 6);
    if (wrapped) {
        dGeomID transform = dCreateGeomTransform(t->space);
        dGeomTransformSetCleanup(transform, 1);
        t->box = dCreateBox(0, SIDE, SIDE, SIDE);
        dGeomSetPosition(t->box, 0.1, 0.0, 0.0); /* relative to the transform */
        dGeomSetRotation(t->box, turn);
        dGeomTransformSetGeom(transform, t->box);
        dGeomSetBody(transform, t->body);
    } else {
        t->box = dCreateBox(t->space, SIDE, SIDE, SIDE);
        dGeomSetBody(t->box, t->body);
        dGeomSetOffsetPosition(t->box, 0.1, 0.0, 0.0);
        dGeomSetOffsetRotation(t->box, turn);
    }
    pp_config c = pp_config_default();
    c.model = model;
    c.lcp_budget_seconds = 0.0;
    ck_assert_int_eq(pp_world_create(t->world, t->space, &c, &t->pp), PP_OK);
}

static void destroy(twin *t)
{
    pp_world_destroy(t->pp);
    dSpaceDestroy(t->space);
    dWorldDestroy(t->world);
}

/* The box's lowest corner in the world: the wrapped box's pose is the body's pose composed
 * with its own (dGeomGetPosition of a wrapped geom is relative), the offset box's is its own. */
static double lowest_corner(const twin *t, int wrapped)
{
    const dReal *xb = dBodyGetPosition(t->body), *Rb = dBodyGetRotation(t->body);
    const dReal *xg = dGeomGetPosition(t->box), *Rg = dGeomGetRotation(t->box);
    double x[3], R[9];
    for (int r = 0; r < 3; ++r) {
        x[r] = wrapped ? xb[r] : xg[r];
        for (int c = 0; c < 3; ++c) {
            if (wrapped) x[r] += Rb[4 * r + c] * xg[c];
            double m = 0.0;
            for (int j = 0; j < 3; ++j) m += Rb[4 * r + j] * Rg[4 * j + c];
            R[3 * r + c] = wrapped ? m : Rg[4 * r + c];
        }
    }
    double low = INFINITY;
    for (int k = 0; k < 8; ++k) {
        double z = x[2];
        for (int c = 0; c < 3; ++c) z += R[6 + c] * ((k >> c & 1) ? 0.5 : -0.5) * SIDE;
        low = fmin(low, z);
    }
    return low;
}

START_TEST(test_transform_is_its_offset_twin)
{
    const pp_model model = _i == 0 ? PP_MODEL_STANDARD : PP_MODEL_PEG;
    twin a, b;
    make(&a, model, 1);
    make(&b, model, 0);
    double worst = 0.0, deepest = 0.0;
    for (int step = 0; step < 200; ++step) {
        ck_assert_int_eq(pp_world_step(a.pp, H), PP_OK);
        ck_assert_int_eq(pp_world_step(b.pp, H), PP_OK);
        const dReal *xa = dBodyGetPosition(a.body), *xb = dBodyGetPosition(b.body);
        const dReal *qa = dBodyGetQuaternion(a.body), *qb = dBodyGetQuaternion(b.body);
        for (int k = 0; k < 3; ++k) worst = fmax(worst, fabs(xa[k] - xb[k]));
        for (int k = 0; k < 4; ++k) worst = fmax(worst, fabs(qa[k] - qb[k]));
        deepest = fmax(deepest, -lowest_corner(&a, 1));
    }
    const dReal *v = dBodyGetLinearVel(a.body);
    printf("dGeomTransform vs offset twin (%s): worst difference %.2e, deepest %.2e m, final "
           "lowest corner %.2e m, speed %.2e m/s\n", _i == 0 ? "standard" : "peg", worst,
           deepest, lowest_corner(&a, 1), sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    ck_assert_msg(worst <= 1e-12, "the twins differ by %.3e", worst);
    ck_assert_msg(deepest <= 1e-9, "the wrapped box went %.3e m into the ground", deepest);
    ck_assert_msg(fabs(lowest_corner(&a, 1)) <= 1e-9, "rests %.3e m from the ground",
                  lowest_corner(&a, 1));
    ck_assert_double_le(sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), 1e-6);
    destroy(&a);
    destroy(&b);
}
END_TEST

int main(void)
{
    dInitODE();
    Suite *s = suite_create("geom_transform");
    TCase *tc = tcase_create("twins");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_transform_is_its_offset_twin, 0, 2);
    suite_add_tcase(s, tc);
    int rc = pp_it_run(s);
    dCloseODE();
    return rc;
}
