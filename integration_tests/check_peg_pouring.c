/*
 * The PEG paper's 3D experiment (PEG Sec. 6; docs/references.md): random convex
 * hulls dropped into an open box, frictionless, stepped by PP_MODEL_PEG with the Stewart–Trinkle
 * §3.6 re-linearisation. What the paper reports for PEG, and what physics demands of a
 * geometrically exact contact model: the total overlap volume between bodies stays at
 * floating-point noise after EVERY step, not just in the median.
 *
 * The total is the exact overlap volume (pegplus/overlap.h) summed over every pair of a dropped
 * body with another body or a block whose ODE boxes meet, as pegplus-compare measures it.
 * The bound: below 1e-12 m^3 after every step at h = 0.01, frictionless and with
 * mu = 0.5; no solver failure; no body leaving the box.
 *
 * Regressions. (1) h = 0.016: the re-linearisation rebuilt the constraint sets from scratch at
 * every predicted pose and the fixed-point iteration cycled between families of sets, the last
 * iterate millimetres deep in a neighbour (4e-7 and 9e-6 m^3); the working set fixed it.
 * (2) h = 0.01: three causes kept the total at 1e-12 .. 7e-8 m^3: the LCP's compliance
 * (1e-10, a steady overlap of ~1e-12 m per resting contact: the old default), X candidates
 * admitted at APPL >= -1e-3 (a long edge dipping 1e-3 rad below a face plane crossed an edge
 * of the other body 0.1 mm deep while the X was satisfied by its vertex), and the energy
 * guard refusing converged re-linearisations (and none of them damped or chosen by violation).
 * (3) h = 0.01, seed 3 (after the geom order became the order pegplus first saw the geoms):
 * 3.8e-11 m^3 at step 433, the re-linearisation damped to 1/4 and never stepping fully again
 * although its map was nearly constant, so the 20 iterations ran out (relinearize.c,
 * pp_relinearize_damping; check_relinearize).
 * (4) h = 0.01, frictionless, seed 13: 7.1e-10 m^3 at step 434, an X set's kept primary
 * reading 5 cm deep at the predicted pose pushed its hulls apart (+3.3 J in the first
 * iterate), every later estimate beyond the energy bound, so the first solve was kept,
 * 1.2e-4 m deep (relinearize.c, prime_at_largest_gap); seeds 67, 83, 85 were over the bound
 * too (4.5e-10, 2.1e-6, 2.7e-11 m^3; not traced) and are within it with the same change.
 * (5) h = 0.01, mu = 0.5, seed 13: 3.4e-10 m^3 at step 395, an edge pair clamped at its edge's
 * end in an X set, carried with its lever arm at A's closest point and, built again at some
 * iterates from the other body's side and flipped, 1.6 cm away: the iteration cycled and
 * kept an estimate 1.6e-8 m deep (peg_geometry.c, pp_peg_edge_edge_flip). Seeds 4 and 33 with
 * mu = 0.5 were over the bound too (1.1e-12, 2.5e-12 m^3; not traced: their trajectories
 * moved) and are within it with the same change.
 * (6) h = 0.01, frictionless, seed 103: 5.9e-5 m^3 at step 180, hull 0 resting 1.5 cm from the
 * -x end wall, struck by hull 1 at 5 m/s within the step, ended it 1 cm inside the wall: the
 * pair was no candidate of stage 2 (its reach bounds the motion by the velocity at the start
 * of the step); the re-linearisation now adds the pairs with static shapes near its predicted
 * poses (relinearize.c, pairs_near_prediction; check_peg_struck_near_wall).
 * (7) h = 0.01, frictionless, seed 122: 3.0e-9 m^3 at step 321, a hull's vertex set built
 * twice (the vertex near two edges of another hull, one copy per vertex–edge configuration);
 * the re-linearisation's working set matched one copy at the predicted poses, the other kept
 * a primary 6.5 mm below the set's largest gap and took its impulse at one iterate in three:
 * the iteration cycled and kept an estimate 1.2e-5 m deep (peg_constraints.c,
 * drop_repeated_sets). Frictionless seed 170 (2.1e-11 m^3, the same) and mu = 0.5 seed 40
 * (2.5e-11 m^3, a face-on-face vertex set twice, its copies' impulses split anew at every
 * iterate) are within the bound with the same change.
 * (8) h = 0.01, mu = 0.5, seed 55: 2.2e-12 m^3 at step 392, the re-linearisation's iterates
 * jumping between answers 0.07 m/s apart because a contact's friction pyramid turned between
 * iterates (its t1 from the world axis least aligned with n, which changes where two
 * components of n tie): the least violating estimate was kept; each contact now keeps its
 * axis of the step's start through the iterates (relinearize.c, "A contact's friction pyramid
 * through the step"). Seed 73 (4.9e-11 m^3 at step 355) was the same.
 * (9) h = 0.01, frictionless, seeds 139 (3.0e-10 m^3 at step 488, hulls 6 and 7 face on face)
 * and 152 (5.0e-11 m^3 at step 465, hulls 0 and 2): the re-linearisation's damped iteration
 * closed a period-3 cycle (steps 1, 1/2, 1/2): the full step landed where the LCP at the
 * predicted pose takes another of its solutions (Lemke's cold path too), the halved steps came
 * back, and the iteration stopped with an estimate 2e-8 m deep over a face; its steps are now
 * held shorter than the cycle's longest and it converges (relinearize.c, "A cycle").
 * (10) h = 0.01, mu = 0.5, seeds 57 (7.4e-12 m^3 at step 495: twin X sets sharing a warm-start
 * record), 73 (3.7e-12, step 303), 8 (2.3e-12, step 263), 42 (2.1e-12, step 314): a face
 * contact's load split between 4-5 coplanar sliding points that the normal rows leave free,
 * moving between the iterates: the re-linearisation did not converge and kept an estimate
 * 1e-10 .. 1e-9 m inside. Its end pose is now post-stabilised (stage_project.c): moved by the
 * smallest mass-weighted displacement onto the working set's constraints, the velocities
 * unchanged. Every run also asserts that no step's projection moved a body point by more
 * than PROJECTION_BOUND, so a real failure (a deep pose) cannot be hidden by it.
  */
#include "pegplus/overlap.h"
#include "pegplus/pegplus.h"
#include "pouring.h"
#include "it_common.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define SECONDS 5.0
#define PROJECTION_BOUND 1e-8 /* m: the largest post-stabilisation displacement allowed (the
                               library applies up to 1e-6 m; these runs need < 1e-9) */

/* The runs: the step h = 0.01, frictionless (the paper) and with mu = 0.5, at the
 * floating-point-noise bound; the paper's coarsest step h = 0.016 (motion per step up to
 * 12 cm, so the constraint sets change within a step) at a looser bound. */
typedef struct pour_case {
    double h, mu;
    unsigned long long seed;
    double bound; /* m^3, total overlap after every step */
} pour_case;

static const pour_case CASES[] = {
    {0.01, 0.0, 1, 1e-12}, {0.01, 0.0, 2, 1e-12}, {0.01, 0.0, 3, 1e-12},
    {0.01, 0.5, 1, 1e-12},
    /* the other seeds of the sweep (README), frictionless: about a second each */
    {0.01, 0.0, 4, 1e-12}, {0.01, 0.0, 5, 1e-12}, {0.01, 0.0, 6, 1e-12}, {0.01, 0.0, 7, 1e-12},
    {0.01, 0.0, 8, 1e-12}, {0.01, 0.0, 9, 1e-12}, {0.01, 0.0, 10, 1e-12},
    /* regression (4): seeds over the bound on main before prime_at_largest_gap */
    {0.01, 0.0, 13, 1e-12}, {0.01, 0.0, 67, 1e-12}, {0.01, 0.0, 83, 1e-12}, {0.01, 0.0, 85, 1e-12},
    /* regression (6): a pair with a wall missed by stage 2 */
    {0.01, 0.0, 103, 1e-12},
    /* regression (5): with friction, over the bound before edge_edge_point */
    {0.01, 0.5, 13, 1e-12}, {0.01, 0.5, 4, 1e-12}, {0.01, 0.5, 33, 1e-12},
    /* regression (7): a vertex set made twice */
    {0.01, 0.0, 122, 1e-12}, {0.01, 0.0, 170, 1e-12}, {0.01, 0.5, 40, 1e-12},
    /* regression (8): a friction pyramid turning between the iterates */
    {0.01, 0.5, 55, 1e-12},
    /* regression (9): a cycle of the damped re-linearisation */
    {0.01, 0.0, 139, 1e-12}, {0.01, 0.0, 152, 1e-12},
    /* regression (10): unconverged steps post-stabilised */
    {0.01, 0.5, 57, 1e-12}, {0.01, 0.5, 73, 1e-12}, {0.01, 0.5, 8, 1e-12}, {0.01, 0.5, 42, 1e-12},
    {0.016, 0.0, 1, 1e-10}, {0.016, 0.0, 2, 1e-10},
};

/* Inside the box's inner walls (pouring.h), and not thrown out over them. */
static int inside_box(dBodyID body)
{
    const dReal *x = dBodyGetPosition(body);
    return fabs(x[0]) < 4.875 && fabs(x[1]) < 1.875 && x[2] > 0.0 && x[2] < 50.0;
}

START_TEST(test_pouring_no_overlap)
{
    const pour_case *pc = &CASES[_i];
    pp_set_log_hook(pp_log_discard, NULL);
    pp_pour_scene pour;
    ck_assert_int_eq(pp_pour_scene_create(&pour, PP_POUR_RANDOM_HULLS, pc->seed), PP_OK);
    pp_config config = pp_config_default();
    config.model = PP_MODEL_PEG;
    config.surface.mu = pc->mu;
    /* no wall-clock LCP budget: the result must not depend on how loaded the machine is
     * (a budget cut on a busy machine once left 3e-11 m^3) */
    config.lcp_budget_seconds = 0.0;
    pp_world *world = NULL;
    ck_assert_int_eq(pp_world_create(pour.scene.world, pour.scene.space, &config, &world), PP_OK);
    int steps = (int)lround(SECONDS / pc->h), next_drop = 0, worst_step = -1, ix_steps = 0;
    int projected = 0;
    double worst = 0.0, moved = 0.0;
    for (int step = 0; step < steps; ++step) {
        if (next_drop < PP_POUR_DROPS && step == pp_pour_drop_step(next_drop, pc->h))
            ck_assert_int_eq(pp_pour_scene_drop(&pour, world, next_drop++), PP_OK);
        ck_assert_int_eq(pp_world_step(world, pc->h), PP_OK);
        const pp_step_stats *stats = pp_world_get_stats(world);
        /* no solver failure: every PEG LCP solved, no step on the standard model's fallback */
        ck_assert_msg(stats->peg_fallback == 0 && stats->lcp_fallback < 2,
                      "seed %llu, h = %g, mu = %g: step %d: PEG fallback %d, LCP fallback %d",
                      pc->seed, pc->h, pc->mu, step, stats->peg_fallback, stats->lcp_fallback);
        ix_steps += stats->peg_i_sets + stats->peg_x_sets > 0;
        projected += stats->positions_projected;
        if (stats->projection_largest > moved) moved = stats->projection_largest;
        ck_assert_msg(stats->projection_largest <= PROJECTION_BOUND,
                      "seed %llu, mu = %g: step %d post-stabilised by %.3g m", pc->seed, pc->mu,
                      step, stats->projection_largest);
        for (int b = 0; b < pour.scene.body_count; ++b)
            ck_assert_msg(inside_box(pour.scene.bodies[b]), "body %d escaped at step %d", b, step);
        double v = -1.0;
        ck_assert_int_eq(pp_pour_scene_overlap(&pour, &v), PP_OK);
        if (v > worst) worst = v, worst_step = step;
    }
    printf("pouring seed %llu, h = %g, mu = %g: %d bodies, largest total overlap %.3g m^3 (step "
           "%d), I/X sets in %d of %d steps, %d post-stabilised (largest %.3g m)\n", pc->seed,
           pc->h, pc->mu, pour.scene.body_count, worst, worst_step, ix_steps, steps, projected,
           moved);
    ck_assert_int_eq(pour.scene.body_count, PP_POUR_DROPS);
    ck_assert_msg(worst <= pc->bound, "seed %llu, h = %g, mu = %g: total overlap %.3g m^3 after "
                  "step %d", pc->seed, pc->h, pc->mu, worst, worst_step);
    ck_assert_int_gt(ix_steps, 0); /* the scene exercises I/X sets, not only U */
    pp_world_destroy(world); /* first: it destroys the dConvex geoms it made */
    pp_pour_scene_destroy(&pour);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_pouring");
    TCase *tc = tcase_create("pouring");
    tcase_set_timeout(tc, 900);
    tcase_add_loop_test(tc, test_pouring_no_overlap, 0, (int)(sizeof CASES / sizeof CASES[0]));
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
