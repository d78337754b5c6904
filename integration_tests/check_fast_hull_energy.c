/*
 * Fast hulls that collide properly gain no kinetic energy (docs/performance.md "Session 17:
 * Fast hulls, seed 1", "Left"; "Fast hulls: energy at the re-linearisation's bound"). The
 * scene of check_peg_fast_hulls with the step resolving the approach: an 8 cm and a 2 cm hull
 * of 15 random points each, the small one shot at the big one at 25 and 50 m/s with a random
 * spin, no gravity, frictionless, restitution 0, h = 5e-4 (|v| h = 1.25-2.5 cm, about the
 * small hull's size), clock-free (lcp_budget_seconds 0), under PP_MODEL_PEG and
 * PP_MODEL_STANDARD. Every contact impulse of such a step is inelastic and frictionless, so
 * no step may raise the kinetic energy beyond round-off (ENERGY_ROUNDOFF, relative: a free
 * step changes it by 2e-16 .. 4e-16 here), nor end with the hulls overlapping beyond
 * OVERLAP_TOL (exact volume, pegplus/overlap.h); and the pair must meet and the small hull be
 * stopped (its velocity along the shot at most half the shot's after the run), so the
 * assertions are about a collision.
 *
 * PEG, 25 m/s, seed 3, step 27: the re-linearisation converges to a fixed point above the
 * energy bound (0.548413081 J against nu*'s 0.548401552 J) and relinearize.c
 * energy_bounded_fixed_point takes the point toward the first solve where the energy reaches
 * the bound. That point was put at the top of the bound's comparison slack, KE(nu*) (1 +
 * 1e-9) + 1e-12 J: the step gained +5.49e-10 J (1.0e-9 relative). It is now put at
 * max(KE(first solve), KE(nu*)) itself (the standard model's 25 m/s seed 2 gained the same
 * way).
 * PEG, 50 m/s, seed 3 gained +9.52e-3 J at step 16 before the fast-pair split (a set carried
 * from the step's start read -1.69 cm at the free motion's end where the hulls were 3.47 cm
 * apart, and the step kept a near fixed point holding them apart by it) and ended step 13
 * 1.54e-8 m^3 inside (the first solve's first-order rotation of a 1.57 rad turn); with the
 * meeting step split at the touch (impact_stage.c, docs/design.md "Fast pairs") it is clean,
 * and in.
 * PEG, 50 m/s, seed 14, in. Step 11: the fast-pair split (impact_stage.c
 * fast_pair_time) started a sub-step of 1.59e-4 s with the hulls touching (signed distance
 * 3.5e-15 m); an X set's primary read psi = -2.20 cm (an alternative's gap, not an overlap)
 * and the first solve pushed out along it at -psi/h: 10.41 J -> 72.43 J, within the
 * allowance that psi gave (154 J); the step ended at 41.21 J (+296 %). A touching pair is
 * now read as one that is apart (stage_time_step.c energy_bounded, reprime_apart_sets): step
 * 11 ends at 1.105 J. Step 13 then gains +4.74 % (1.10429 -> 1.15666 J): the small hull
 * spins at 1 500 rad/s, its sub-step of 4.63e-4 s turns it 0.70 rad, and the
 * re-linearisation's fixed point (violation 0; a shifted gap psi' = -2.73 mm pushing at
 * p = 0.0129 N s) was kept above the bound 1.10429 J because the segment point at the bound
 * read 8.9e-5 m of violation; that reading was a carried set's edge-pair gap with the hulls
 * 1.42 mm apart, and read at the pair's depth the segment point is taken (relinearize.c
 * energy_bounded_fixed_point, working_set_violation).
 * PEG, 25 m/s, seed 8 gained 8.5e-4 of its kinetic energy in a step the same way (a touching
 * pair's set read deep): in.
 * Standard, 25 m/s, seed 10, step 39 (+0.198 %): the small hull slides along the big one at
 * ~11 m/s spinning at 423 rad/s; the first solve ends with a vertex 22 um inside the big hull
 * through a face it was not over at the step's start, and the re-linearisation's fixed point
 * (0.881476 J against the bound 0.879734 J) was kept above the bound because the segment point
 * (5.4 um deep) and the first solve were less feasible. Now the first solve's impulses
 * extended toward the bound (relinearize.c kept_impulse_extended, s = 1.023) are as feasible
 * within it: in. Where no such estimate exists the step is run again with that sub-step halved
 * (world.c "A sub-step redone shorter"; on its own, before kept_impulse_extended, it fixed
 * this case so too).
 *
 * The same for two boxes (test_fast_boxes, docs/prototypes/fast-sphere-scan.c's box <- box: a
 * 2 cm cube, 0.01 kg, shot at an 8 cm cube, 0.3 kg, the same draws by seed), h = 0.01, 30
 * steps: under the standard model 50 m/s seeds 2, 5 and 4 gained +0.45 %, +2.4e-4 and +1.3e-7
 * in a step, each a converged fixed point kept above the bound (seeds 2 and 4 now extended,
 * 5 redone shorter); asserted after every step: the same round-off bound on the gain and the
 * boxes apart to DEPTH_TOL (pp_shape_distance).
 */
#include "pegplus/geometry.h"
#include "pegplus/overlap.h"
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"
#include "it_energy.h"
#include "it_fast_hulls.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define OVERLAP_TOL 1e-12     /* m^3 after every step, as check_peg_fast_hulls */
#define ENERGY_ROUNDOFF 1e-12 /* relative gain of a step's kinetic energy: round-off only */
#define STEP 5e-4             /* s */
#define STEPS 100
#define DEPTH_TOL 1e-12       /* m: the boxes' depth after every step (apart: round-off) */

typedef struct energy_case {
    double speed; /* m/s, along -x */
    int seed;
    pp_model model;
} energy_case;

static const energy_case CASES[] = {
    {25, 1, PP_MODEL_PEG},      {25, 2, PP_MODEL_PEG},      {25, 3, PP_MODEL_PEG},
    {50, 1, PP_MODEL_PEG},      {50, 2, PP_MODEL_PEG},      {50, 3, PP_MODEL_PEG},
    {25, 8, PP_MODEL_PEG},      {50, 14, PP_MODEL_PEG},
    {25, 1, PP_MODEL_STANDARD}, {25, 2, PP_MODEL_STANDARD}, {25, 3, PP_MODEL_STANDARD},
    {50, 1, PP_MODEL_STANDARD}, {50, 2, PP_MODEL_STANDARD}, {50, 3, PP_MODEL_STANDARD},
    {25, 10, PP_MODEL_STANDARD},
};

START_TEST(test_fast_hull_energy)
{
    const energy_case *ec = &CASES[_i];
    const int seed = ec->seed;
    const char *model = ec->model == PP_MODEL_PEG ? "PEG" : "standard";
    dWorldID world;
    dSpaceID space;
    pp_world *pw = pp_it_fast_world(ec->model, &world, &space);

    pp_it_fast_pair fp;
    pp_it_fast_pair_build(pw, world, space, seed, ec->speed, &fp);

    char what[64];
    snprintf(what, sizeof what, "%s %g m/s seed %d", model, ec->speed, seed);
    double energy = pp_it_fast_pair_energy(&fp);
    double worst_gain = -HUGE_VAL;
    int met = 0;
    for (int step = 0; step < STEPS; ++step) {
        ck_assert_int_eq(pp_world_step(pw, STEP), PP_OK);
        const pp_step_stats *s = pp_world_get_stats(pw);
        met |= s->contacts > 0;
        const double gain = pp_it_fast_pair_check_step(&fp, s, what, step, OVERLAP_TOL,
                                                       ENERGY_ROUNDOFF, &energy);
        if (gain > worst_gain) worst_gain = gain;
    }
    pp_it_fast_pair_check_end(&fp, what, ec->speed, met, 1);
    printf("fast hull energy, %s %g m/s seed %d: largest step gain %.3g relative, end %.9f J\n",
           model, ec->speed, seed, worst_gain, energy);
    pp_it_fast_pair_teardown(pw, &fp, space, world);
}
END_TEST

static const energy_case BOX_CASES[] = {
    {50, 2, PP_MODEL_STANDARD}, {50, 5, PP_MODEL_STANDARD}, {50, 4, PP_MODEL_STANDARD},
    {50, 2, PP_MODEL_PEG},
};

/* The box at body b's pose. */
static pp_shape posed_box(double side, dBodyID b)
{
    double x[3], R[9];
    pp_it_fast_body_pose(b, x, R);
    const double len[3] = {side, side, side};
    return pp_shape_make_box(len, x, R);
}

START_TEST(test_fast_boxes)
{
    const energy_case *ec = &BOX_CASES[_i];
    const char *model = ec->model == PP_MODEL_PEG ? "PEG" : "standard";
    dWorldID world;
    dSpaceID space;
    pp_world *pw = pp_it_fast_world(ec->model, &world, &space);
    /* it_fast_hulls.h's draws (a hull's 45 coordinates drawn and not used, then the shot) */
    uint64_t rng = pp_it_fast_seed(ec->seed);
    const double side[2] = {0.08, 0.02}, mass[2] = {0.3, 0.01};
    dBodyID body[2];
    for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < 45; ++i) (void)pp_it_fast_uniform(&rng, -0.5, 0.5);
        const dGeomID geom = dCreateBox(space, side[k], side[k], side[k]);
        body[k] = pp_it_fast_body(world, geom, mass[k], side[k]);
    }
    pp_it_fast_shoot(body[0], body[1], &rng, ec->speed);

    char what[64];
    snprintf(what, sizeof what, "%s box<-box %g m/s seed %d", model, ec->speed, ec->seed);
    double energy = pp_it_kinetic_energy(body[0]) + pp_it_kinetic_energy(body[1]);
    double worst_gain = -HUGE_VAL;
    int met = 0;
    for (int step = 0; step < 30; ++step) {
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        const pp_step_stats *s = pp_world_get_stats(pw);
        pp_it_fast_check_answer(s, what, step);
        met |= s->contacts > 0;
        const pp_shape a = posed_box(side[0], body[0]), b = posed_box(side[1], body[1]);
        pp_proximity pr;
        ck_assert_int_eq(pp_shape_distance(&a, &b, &pr), PP_OK);
        ck_assert_msg(pr.distance >= -DEPTH_TOL, "%s box<-box %g m/s seed %d step %d: %.3g m deep",
                      model, ec->speed, ec->seed, step, -pr.distance);
        const double gain =
            pp_it_fast_check_energy(body[0], body[1], what, step, ENERGY_ROUNDOFF, &energy);
        if (gain > worst_gain) worst_gain = gain;
    }
    ck_assert_msg(met, "%s box<-box %g m/s seed %d: the boxes never came within the margin",
                  model, ec->speed, ec->seed);
    const double through = -dBodyGetLinearVel(body[1])[0];
    ck_assert_msg(through <= 0.5 * ec->speed, "%s box<-box %g m/s seed %d: passed through at "
                  "%g m/s", model, ec->speed, ec->seed, through);
    printf("fast box energy, %s %g m/s seed %d: largest step gain %.3g relative, end %.9f J\n",
           model, ec->speed, ec->seed, worst_gain, energy);
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fast_hull_energy");
    TCase *tc = tcase_create("fast_hull_energy");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_fast_hull_energy, 0, (int)(sizeof CASES / sizeof CASES[0]));
    tcase_add_loop_test(tc, test_fast_boxes, 0, (int)(sizeof BOX_CASES / sizeof BOX_CASES[0]));
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
