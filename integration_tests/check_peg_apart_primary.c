/*
 * PEG sets between shapes that are apart push only along a member that reads them apart
 * (plugin/src/stage_time_step.c reprime_apart_sets, energy_bounded).
 *
 * Soak seed 1246's box and hull (it_box_hull_1246.h), 0.67 mm apart and closing at 4.10 m/s
 * along their separating facet, stepped over the rest of the soak's step (3.63 ms) under the
 * soak's settings (PP_MODEL_PEG, mu = 0.2, k = 4, no re-linearisation, restitution 0.977):
 * the step is split where they touch, 0.164 ms in (8 sub-steps, 4 impacts in all). The first
 * sub-step's X sets, built with the whole step's margin (0.15 m), read psi down to -0.10 m
 * on their feature-pair alternatives and carry the facet (psi = +0.67 mm) as one more.
 * Lemke's exact answer on the sets as built put p = 1.6e-5 N s on an edge-edge primary of
 * psi = -0.0425 m whose normal the bodies leave at 10.9 m/s (+1.4e-4 J over the free
 * motion, beyond the energy bound), the regularised retry +4.2e-5 J, and the sub-step's
 * island got no contact impulse (lcp_fallback 3). Checked:
 *  - every LCP of the step has an exact answer (lcp_fallback 0, no island failed, residual
 *    <= 1e-9);
 *  - the energy does not grow: kinetic plus potential energy after the step at most what it
 *    was, to 1e-9 relative (no joint, no driven body: the time stepper's constraints do no
 *    work between shapes that are apart, and the impact, e < 1, takes energy);
 *  - the hull and the box do not overlap after the step (pp_overlap_volume <= 1e-12 m^3).
 * Measured: lcp_fallback 0 (main: 3, one island failed), -0.809 J, no overlap.
 */
#include "pegplus/pegplus.h"
#include "pegplus/geometry.h"
#include "pegplus/overlap.h"
#include "scenes.h"
#include "it_common.h"
#include "it_box_hull_1246.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define G 9.81

/* Kinetic plus potential energy of body b, J. */
static double energy(dBodyID b)
{
    dMass m;
    dBodyGetMass(b, &m);
    const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b), *R = dBodyGetRotation(b);
    double wb[3], e = 0.0;
    for (int a = 0; a < 3; ++a) /* body-frame w = R^T w */
        wb[a] = R[a] * w[0] + R[4 + a] * w[1] + R[8 + a] * w[2];
    for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c) e += wb[a] * m.I[4 * a + c] * wb[c];
    return 0.5 * (m.mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + e) +
           m.mass * G * dBodyGetPosition(b)[2];
}

static void pose(dBodyID b, double x[3], double R[9])
{
    const dReal *r = dBodyGetRotation(b);
    for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c) R[3 * a + c] = r[4 * a + c];
    memcpy(x, dBodyGetPosition(b), 3 * sizeof(double));
}

START_TEST(test_apart_pair_pushes_along_its_separating_member)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scenes_init_ode();
    pp_config config = pp_config_default();
    config.model = PP_MODEL_PEG;
    config.surface.mu = 0.2;
    config.surface.bounce = 0.976862;
    config.friction_directions = 4;
    config.relinearize_iterations = 0;
    config.lcp_budget_seconds = 0.0;
    dWorldID world = dWorldCreate();
    dSpaceID space = dHashSpaceCreate(0);
    dWorldSetGravity(world, 0, 0, -G);
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &config, &pw), PP_OK);
    /* made in the soak's order, the hull first: ODE lists bodies and geoms newest first, so
     * the box is body and shape A of the pair, as in the soak */
    dBodyID body[2];
    body[1] = pp_it_box_hull_body(world, 1);
    body[0] = pp_it_box_hull_body(world, 0);
    dGeomID hull = NULL;
    ck_assert_int_eq(pp_convex_create(pw, space, HULL_1246_POINTS, 5, &hull), PP_OK);
    dGeomSetBody(hull, body[1]);
    dGeomSetBody(dCreateBox(space, BOX_1246_SIDES[0], BOX_1246_SIDES[1], BOX_1246_SIDES[2]), body[0]);

    const double before = energy(body[0]) + energy(body[1]);
    ck_assert_int_eq(pp_world_step(pw, BOX_HULL_1246_H), PP_OK);
    const pp_step_stats *s = pp_world_get_stats(pw);
    const double after = energy(body[0]) + energy(body[1]);

    pp_polytope *box = NULL;
    ck_assert_int_eq(pp_polytope_box(BOX_1246_SIDES, &box), PP_OK);
    double x[2][3], R[2][9], overlap = 0.0;
    for (int i = 0; i < 2; ++i) pose(body[i], x[i], R[i]);
    ck_assert_int_eq(pp_overlap_volume(box, x[0], R[0], pp_convex_polytope(pw, hull), x[1], R[1],
                                       &overlap),
                     PP_OK);
    pp_polytope_destroy(box);

    printf("box and hull apart, closing, h = %.6g s: %d sub-steps, %d impacts, lcp_fallback %d, "
           "islands failed %d, residual %.3g, %d pivots; energy %.9f J before, %.9f J after "
           "(%+.3g J); overlap after %.3g m^3\n",
           BOX_HULL_1246_H, s->substeps, s->impacts, s->lcp_fallback, s->islands_failed,
           s->lcp_residual, s->lcp_pivots, before, after, after - before, overlap);
    fflush(stdout);
    ck_assert_msg(s->substeps > 1 && s->impacts > 0, "the step was not split at the touch");
    ck_assert_msg(s->lcp_fallback == 0 && s->islands_failed == 0,
                  "lcp_fallback %d, islands_failed %d: an LCP of the step got no exact answer",
                  s->lcp_fallback, s->islands_failed);
    ck_assert_double_le(s->lcp_residual, 1e-9);
    ck_assert_msg(after <= before + 1e-9 * fabs(before), "energy %.12g J after the step, %.12g J before",
                  after, before);
    ck_assert_msg(overlap <= 1e-12, "the hull ends %.3g m^3 inside the box", overlap);

    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_apart_primary");
    TCase *tc = tcase_create("apart");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_apart_pair_pushes_along_its_separating_member);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
