/*
 * Post-stabilisation of a step whose re-linearisation did not converge (plugin/src/
 * stage_project.c; docs/design.md "Post-stabilisation"): the kept estimate's end pose moved by
 * the smallest mass-weighted displacement onto the working set's constraints, the velocities
 * left as the step chose them.
 *
 * A spinning box lands on a corner on the plane z = 0 with pp_config.relinearize_iterations = 1
 * (one iterate: the iteration cannot reach its fixed point, so the step keeps an estimate whose
 * pose ends the corner slightly below the plane, at second order in the rotation), in two
 * worlds that differ only in pp_config.post_stabilisation. At the first step where the world
 * without it ends the box deeper than PROJECT_MIN:
 *  - the velocities of the two worlds are the same bits (the projection moves poses only);
 *  - the projected box ends on or above the plane (its lowest corner >= -1e-14 m), the other
 *    one d below it;
 *  - the displacement is Cline & Pai's displacement with the plane's rows: dx = n sum lambda_i / m,
 *    dtheta = I^-1 sum (r_i x n) lambda_i (r_i the corners from the centre, n = +z), with
 *    lambda_i >= 0 only at the corners that end on the plane: no tangential translation, no
 *    turn about n, and lambda solved from the measured displacement over those corners
 *    reproduces it to 1e-6 relative with every lambda_i >= 0;
 *  - pp_step_stats.positions_projected counts it and projection_largest is |dx| + |dtheta|
 *    reach, at most 1e-6 m.
 * And under both models (the standard model's sets are its contacts).
 */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define H 0.01
#define SIDE 0.2
#define MASS 1.0
enum { STEPS = 60 };

typedef struct twin {
    dWorldID world;
    dSpaceID space;
    dBodyID box;
    pp_world *pw;
} twin;

static void twin_create(twin *t, pp_model model, int post_stabilisation)
{
    t->world = dWorldCreate();
    dWorldSetGravity(t->world, 0, 0, -9.81);
    t->space = dHashSpaceCreate(0);
    dCreatePlane(t->space, 0, 0, 1, 0);
    t->box = dBodyCreate(t->world);
    dGeomID g = dCreateBox(t->space, SIDE, SIDE, SIDE);
    dGeomSetBody(g, t->box);
    dMass m;
    dMassSetBoxTotal(&m, MASS, SIDE, SIDE, SIDE);
    dBodySetMass(t->box, &m);
    dMatrix3 R; /* a generic tilt: one corner lowest */
    dRFromAxisAndAngle(R, 1.0, 2.0, 0.5, 0.7);
    dBodySetRotation(t->box, R);
    dBodySetPosition(t->box, 0.0, 0.0, 0.2);
    dBodySetLinearVel(t->box, 0.3, 0.0, -1.0);
    dBodySetAngularVel(t->box, 4.0, -7.0, 2.0);
    pp_config c = pp_config_default();
    c.model = model;
    c.friction_directions = 4;
    c.surface.mu = 0.0;
    c.lcp_budget_seconds = 0.0;
    c.relinearize_iterations = 1;
    c.post_stabilisation = post_stabilisation;
    t->pw = NULL;
    ck_assert_int_eq(pp_world_create(t->world, t->space, &c, &t->pw), PP_OK);
}

static void twin_destroy(twin *t)
{
    pp_world_destroy(t->pw);
    dSpaceDestroy(t->space);
    dWorldDestroy(t->world);
}

/* The heights of the box's 8 corners and the corners relative to the centre (world). */
static void corners(dBodyID box, double z[8], double r[8][3])
{
    const dReal *x = dBodyGetPosition(box), *R = dBodyGetRotation(box);
    for (int k = 0; k < 8; ++k) {
        const double b[3] = {(k & 1 ? 0.5 : -0.5) * SIDE, (k & 2 ? 0.5 : -0.5) * SIDE,
                             (k & 4 ? 0.5 : -0.5) * SIDE};
        for (int i = 0; i < 3; ++i)
            r[k][i] = R[4 * i] * b[0] + R[4 * i + 1] * b[1] + R[4 * i + 2] * b[2];
        z[k] = x[2] + r[k][2];
    }
}

static double lowest(const double z[8])
{
    double low = z[0];
    for (int k = 1; k < 8; ++k) low = fmin(low, z[k]);
    return low;
}

/* The small rotation taking the kept pose's R to the projected one's: R_p R_k^T ~ I + [dtheta]x */
static void small_rotation(dBodyID kept, dBodyID projected, double dtheta[3])
{
    const dReal *A = dBodyGetRotation(kept), *B = dBodyGetRotation(projected);
    double D[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            D[i][j] = 0.0;
            for (int k = 0; k < 3; ++k) D[i][j] += B[4 * i + k] * A[4 * j + k];
        }
    dtheta[0] = 0.5 * (D[2][1] - D[1][2]);
    dtheta[1] = 0.5 * (D[0][2] - D[2][0]);
    dtheta[2] = 0.5 * (D[1][0] - D[0][1]);
}

START_TEST(test_projected_corner)
{
    const pp_model model = _i ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    const double inertia = MASS * SIDE * SIDE / 6.0; /* the cube's, isotropic */
    pp_scenes_init_ode();
    pp_set_log_hook(pp_log_discard, NULL);
    twin kept, projected;
    twin_create(&kept, model, 0);
    twin_create(&projected, model, 1);
    int found = -1;
    for (int step = 0; step < STEPS && found < 0; ++step) {
        ck_assert_int_eq(pp_world_step(kept.pw, H), PP_OK);
        ck_assert_int_eq(pp_world_step(projected.pw, H), PP_OK);
        const pp_step_stats *ts = pp_world_get_stats(projected.pw);
        const dReal *va = dBodyGetLinearVel(kept.box), *vb = dBodyGetLinearVel(projected.box);
        const dReal *wa = dBodyGetAngularVel(kept.box), *wb = dBodyGetAngularVel(projected.box);
        for (int i = 0; i < 3; ++i) /* the same bits: the projection moves poses only */
            ck_assert_msg(va[i] == vb[i] && wa[i] == wb[i], "step %d: velocities differ", step);
        double zk[8], zp[8], rk[8][3], rp[8][3];
        corners(kept.box, zk, rk);
        corners(projected.box, zp, rp);
        const double d = -lowest(zk);
        const dReal *xa = dBodyGetPosition(kept.box), *xb = dBodyGetPosition(projected.box);
        if (ts->positions_projected == 0) { /* not projected: the same pose */
            for (int i = 0; i < 3; ++i) ck_assert(xa[i] == xb[i]);
            ck_assert_msg(d <= 1e-13, "step %d: %.3g m below the plane, not projected", step, d);
            continue;
        }
        found = step;
        ck_assert_int_eq(ts->positions_projected, 1);
        ck_assert_msg(d > 1e-13, "step %d: projected where the kept pose is %.3g m deep", step, d);
        ck_assert_msg(lowest(zp) >= -1e-14, "step %d: the projected box %.3g m below the plane",
                      step, lowest(zp));
        /* Cline & Pai's displacement with the plane's rows (n = +z at every corner): dx = n sum_i
         * lambda_i / m, dtheta = I^-1 sum_i (r_i x n) lambda_i, lambda_i >= 0 only at corners
         * that end on the plane. So dx has no tangential part, dtheta no part about n, and
         * (m dz, I dtheta_x, I dtheta_y) = sum over those corners of lambda_i (1, r_iy, -r_ix):
         * solved here for lambda by least squares over the corners ending within 1e-13 m. */
        double dtheta[3];
        small_rotation(kept.box, projected.box, dtheta);
        const double dz = xb[2] - xa[2];
        printf("%s: step %d, kept pose %.4g m deep; dz %.6g m, dtheta (%.3g, %.3g, %.3g); "
               "largest displacement %.4g m\n", model == PP_MODEL_PEG ? "PEG" : "standard", step,
               d, dz, dtheta[0], dtheta[1], dtheta[2], ts->projection_largest);
        ck_assert_msg(fabs(xb[0] - xa[0]) <= 1e-9 * d && fabs(xb[1] - xa[1]) <= 1e-9 * d,
                      "the centre moved off the normal: %.3g %.3g", xb[0] - xa[0], xb[1] - xa[1]);
        ck_assert_msg(fabs(dtheta[2]) <= 1e-6 * d / SIDE, "a turn about the normal: %.3g",
                      dtheta[2]);
        int active[8], na = 0;
        for (int k = 0; k < 8; ++k)
            if (zp[k] <= 1e-13) active[na++] = k;
        printf("  %d corners on the plane\n", na);
        ck_assert_msg(na >= 1 && na <= 3, "%d corners on the plane", na);
        /* normal equations G^T G lambda = G^T b, G the 3 x na columns (1, r_y, -r_x) */
        const double b[3] = {MASS * dz, inertia * dtheta[0], inertia * dtheta[1]};
        double G[3][3], N[3][3] = {{0}}, c[3] = {0};
        for (int j = 0; j < na; ++j) {
            G[0][j] = 1.0;
            G[1][j] = rk[active[j]][1];
            G[2][j] = -rk[active[j]][0];
        }
        for (int i = 0; i < na; ++i)
            for (int j = 0; j < na; ++j)
                for (int e = 0; e < 3; ++e) N[i][j] += G[e][i] * G[e][j];
        for (int i = 0; i < na; ++i)
            for (int e = 0; e < 3; ++e) c[i] += G[e][i] * b[e];
        for (int i = 0; i < na; ++i) /* Gaussian elimination, na <= 3 */
            for (int j = i + 1; j < na; ++j) {
                const double f = N[j][i] / N[i][i];
                for (int e = i; e < na; ++e) N[j][e] -= f * N[i][e];
                c[j] -= f * c[i];
            }
        double lambda[3];
        for (int i = na - 1; i >= 0; --i) {
            lambda[i] = c[i];
            for (int e = i + 1; e < na; ++e) lambda[i] -= N[i][e] * lambda[e];
            lambda[i] /= N[i][i];
        }
        for (int e = 0; e < 3; ++e) { /* the displacement is made of those rows alone */
            double g = 0.0;
            for (int j = 0; j < na; ++j) g += G[e][j] * lambda[j];
            ck_assert_msg(fabs(g - b[e]) <= 1e-6 * fabs(b[0]), "row %d: %.6g against %.6g", e, g,
                          b[e]);
        }
        for (int j = 0; j < na; ++j)
            ck_assert_msg(lambda[j] >= -1e-6 * fabs(b[0]), "corner %d pulled: %.3g", active[j],
                          lambda[j]);
        ck_assert(ts->projection_largest >= dz && ts->projection_largest <= 1e-6);
    }
    ck_assert_msg(found >= 0, "no step was projected");
    twin_destroy(&kept);
    twin_destroy(&projected);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("post_stabilisation");
    TCase *tc = tcase_create("corner");
    tcase_add_loop_test(tc, test_projected_corner, 0, 2);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
