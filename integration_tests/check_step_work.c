/*
 * The work of one step is bounded without a clock (issue 15, README "Random-scene soak").
 *
 * Soak seed 1178 (pegplus-soak --seed 1178): at step 24, under PP_MODEL_PEG with
 * pp_config.lcp_budget_seconds = 0, one step took 326 s. Its island is two hulls falling
 * together at 4.8 m/s, apart (their overlap volume is 0) but with PEG sets whose gaps reach
 * psi = -0.27 m (h = 0.02: a gap rate of 13.6 m/s asked of the first LCP). ST96's
 * re-linearisation (relinearize.c) then met new sets at every predicted pose: its LCPs grew
 * from 342 to 1 911 unknowns over 20 iterates, each solved cold at 2-7 ms a pivot, and the
 * last one's Lemke path ran to its cap of 2 (50 n + 100) = 191 300 pivots. Each loop was
 * capped; their product was not. The iterates now share a work budget proportional to the
 * cube of the first LCP's size (relinearize.c, relin_work).
 *
 * The scene is the island alone: the two hulls of the soak at the start of that step (their
 * points, masses, poses and velocities as the soak had them), the ground, the soak's
 * surface (mu = 1, no bounce, 4 directions) and h. Asserted: the step returns PP_OK with
 * every applied LCP answer solved exactly (status, residual and fallback reported), the
 * re-linearisation stopped by its work bound with an earlier estimate kept, the whole step
 * pivoting less than one solve of its largest LCP may (before: 20 iterates and then that
 * cap); the world advances, stays finite, and the next steps are PP_OK too; and the hulls
 * do not end up in each other or in the ground (overlap volumes, pp_overlap_volume).
 * The work bound is met with constraint screening off (loop 0: the whole LCPs, as when this
 * test was written) and on (loop 1, the default: contact/src/peg_screen.c). Before the
 * per-pair bound across the iterates (relinearize.c pair_bound) the screened iterates solved
 * only their sets that could be active (at most 308 of ~1 160 unknowns, 1 246 pivots over the
 * 20 iterates) and the work bound was not reached; with it each iterate's list holds the two
 * hulls' sets to one build's cap (at most 416 unknowns), the iterates are cut by the work
 * bound as in loop 0 (measured: 11 iterates, 1 345 pivots), and the same physics is asserted.
 *
 * Screening's own path through a step's iterates (test_step_work_screened): an island of
 * several pairs, none over the per-pair bound, whose LCPs of 257 unknowns or more are
 * screened: check_peg_screen_scenes' wall of 2 x 3 bricks hit at 2 m/s by a 0.3 m box, under
 * PEG, clock-free. Measured: the impact step (step 2) runs 6 iterates, 989 unknowns screened
 * out over its solves, the largest LCP solved 310, 583 pivots. Asserted at every step
 * through the impact: PP_OK, exact answers, the whole step pivoting less than one solve of
 * its largest LCP may, no overlap beyond 1e-9 m; and a step whose iterates ran screened.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_heap_state.h"
#include "it_hulls_1178.h"
#include "scenes.h"

#include "../contact/src/peg_lcp_internal.h" /* pp_peg_screening (exported by libpegplus) */

#include <check.h>
#include <math.h>
#include <string.h>

static const double H = 0.02, G = 9.81;
#define H_WALL 0.01 /* the wall hit's step (test_step_work_screened) */
/* the largest overlap the hulls may end a step with: the one the pegplus models leave at a
 * landing of a fast hull (this one lands on the ground at 4.8 m/s in the first step) */
#define OVERLAP_MAX 1e-6 /* m^3 */

static void make(pair_world *p)
{
    pp_config c = pp_config_default();
    c.model = PP_MODEL_PEG;
    c.surface.mu = 1.0;
    c.surface.bounce = 0.0;
    c.friction_directions = 4;
    c.lcp_budget_seconds = 0.0; /* no clock: only work bounds the step */
    pp_it_hulls_make(p, &c, G);
}

START_TEST(test_step_work_bounded)
{
    const int screening = pp_peg_screening(_i);
    pair_world p;
    make(&p);
    ck_assert_double_eq(pp_it_hulls_overlap(&p), 0.0); /* apart: the deep gaps are PEG sets' */
    double x0[2][3];
    for (int i = 0; i < 2; ++i) memcpy(x0[i], dBodyGetPosition(p.body[i]), sizeof x0[i]);

    ck_assert_int_eq(pp_world_step(p.pp, H), PP_OK);
    const pp_step_stats *t = pp_world_get_stats(p.pp);
    /* the island's deepest set as the soak met it (a gap rate of 13.6 m/s) */
    ck_assert_double_lt(t->min_gap, -0.25);
    /* every applied answer an exact LCP solution, reported */
    ck_assert_int_eq(t->lcp_status, 0);
    ck_assert_int_eq(t->lcp_fallback, 0);
    ck_assert_msg(t->lcp_residual <= 1e-9, "residual %.3g", t->lcp_residual);
    /* with screening or without: the re-linearisation stopped by its work bound, an earlier
     * estimate kept (screening's own case: test_step_work_screened) */
    ck_assert_int_eq(t->relinearize_cut, 1);
    ck_assert_int_ge(t->relinearize_refused, 1);
    ck_assert_int_lt(t->relinearizations, pp_config_default().relinearize_iterations);
    /* the whole step pivots less than pp_lcp_solve lets one solve of its largest LCP
     * (pegplus/lcp.h: 2 (50 n + 100)); before the bound, 20 iterates ran and then the last
     * one's Lemke path alone took that many */
    ck_assert_msg(t->lcp_pivots < 2 * (50 * t->lcp_largest + 100), "%d pivots, largest LCP %d",
                  t->lcp_pivots, t->lcp_largest);

    /* the world advanced: each hull moved by about its velocity times h (gravity and the
     * contacts change it by less than half) and stays finite */
    for (int i = 0; i < 2; ++i) {
        ck_assert(pp_it_hulls_finite(&p, i));
        const dReal *x = dBodyGetPosition(p.body[i]);
        const double moved = sqrt((x[0] - x0[i][0]) * (x[0] - x0[i][0]) +
                                  (x[1] - x0[i][1]) * (x[1] - x0[i][1]) +
                                  (x[2] - x0[i][2]) * (x[2] - x0[i][2]));
        const double *v = HULLS[i].v;
        const double expected = H * sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        ck_assert_msg(moved > 0.5 * expected, "hull %d moved %.3g m, %.3g expected", i, moved,
                      expected);
    }
    ck_assert_msg(pp_it_hulls_overlap(&p) <= OVERLAP_MAX, "overlap %.3g m^3",
                  pp_it_hulls_overlap(&p));

    /* not stuck: the next steps run, finite, without the hulls sinking into each other */
    for (int step = 1; step < 4; ++step) {
        ck_assert_int_eq(pp_world_step(p.pp, H), PP_OK);
        for (int i = 0; i < 2; ++i) ck_assert(pp_it_hulls_finite(&p, i));
        ck_assert_msg(pp_it_hulls_overlap(&p) <= OVERLAP_MAX, "step %d: overlap %.3g m^3", step,
                      pp_it_hulls_overlap(&p));
    }
    pp_it_hulls_destroy(&p);
    pp_peg_screening(screening);
}
END_TEST

/* The wall hit (check_peg_screen_scenes) through its impact: every step exact and bounded,
 * and the iterates of a step screened. */
#define WALL_STEPS 6
#define WALL_OVERLAP 1e-9 /* m, as check_peg_screen_scenes */

START_TEST(test_step_work_screened)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene s;
    dBodyID box = pp_scene_wall_hit(&s, 2, 3);
    const dReal x0 = dBodyGetPosition(box)[0];
    pp_world *pw = pp_it_world_clock_free(&s, PP_MODEL_PEG);
    int screened_iterates = 0;
    for (int step = 0; step < WALL_STEPS; ++step) {
        ck_assert_int_eq(pp_world_step(pw, H_WALL), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        ck_assert_int_eq(t->lcp_status, 0);
        ck_assert_int_eq(t->lcp_fallback, 0);
        ck_assert_msg(t->lcp_residual <= 1e-9, "step %d: residual %.3g", step, t->lcp_residual);
        ck_assert_msg(t->lcp_pivots < 2 * (50 * t->lcp_largest + 100),
                      "step %d: %d pivots, largest LCP %d", step, t->lcp_pivots, t->lcp_largest);
        ck_assert_msg(pp_scene_max_penetration(&s) <= WALL_OVERLAP, "step %d: overlap %g m", step,
                      pp_scene_max_penetration(&s));
        /* a step whose iterates ran, its island's LCPs (257 unknowns or more) screened */
        screened_iterates += t->relinearizations > 1 && t->lcp_screened > 0 &&
                             t->lcp_size + t->lcp_screened >= 257;
    }
    ck_assert_int_gt(screened_iterates, 0);
    ck_assert_double_lt(dBodyGetPosition(box)[0], x0 - 0.5 * 2.0 * H_WALL); /* it moved */
    pp_it_scene_destroy(&s);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    dInitODE();
    Suite *s = suite_create("step work");
    TCase *tc = tcase_create("soak 1178");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_step_work_bounded, 0, 2); /* screening off, on */
    tcase_add_test(tc, test_step_work_screened);
    suite_add_tcase(s, tc);
    int rc = pp_it_run(s);
    dCloseODE();
    return rc;
}
