/*
 * Constraint screening's gate on the islands the primaries' reduction takes
 * (contact/src/peg_screen.c, "The gate"; docs/performance.md "The crash wall screened
 * again"): a cold island goes to the reduction; a warm one whose last answer holds most of
 * its loaded sets by friction too (the settled heap, on whose S Lemke wanders); else
 * screening's rounds run with their pivots capped at n / 4 (n the island's unknowns), and an
 * island where the cap stops them goes to the reduction and is remembered there
 * (PP_PEG_SCREEN_CAPPED). Under PEG, clock-free:
 *  - the crash demo's wall at rest (75 bricks, h = 0.05 s, one island of 5 272 unknowns, S_0
 *    1 500-1 800 of them, no friction loaded): step 0 (cold) the reduction's answer, then
 *    screening's, exact, within the cap at step 1 (measured 224 pivots from the reduction's
 *    basis) and warm after it (at most WARM_PIVOTS: measured 0). Before the gate (main after
 *    s11-peg100) the wall went to the reduction at every step.
 *  - the settled heap100, whose answers hold 391 of 391 loaded sets by friction, stays with the
 *    reduction with no capped round: checked by check_peg_heap100 (steps 0-3).
 *  - the wall with the cap made to bind (divisor WALL_TIGHT: 164 pivots, under the 224 of its
 *    step-1 round): step 1 capped and answered by the reduction, steps 2-3 remembered (the
 *    reduction's answer, no round: at most WARM_PIVOTS pivots, measured 0).
 * Every step: PP_OK with every LCP answered exactly (no regularised, approximate, failed or
 * PEG-fallback solve), the bodies at rest (fastest below REST_WALL: an unheld
 * brick falls at g h = 0.49 m/s in a step), and the wall's deepest overlap not grown by more
 * than OVERLAP_GROWTH_TOL.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_heap_state.h"

#include <check.h>
#include <stdio.h>

/* peg_screen.c: the gate's cap divisor (n / divisor pivots), for tests */
int pp_peg_screen_lemke_cheap(int divisor);

enum { WALL_STEPS = 8, WALL_ROWS = 5, WALL_WIDE = 15, WARM_PIVOTS = 100,
       WALL_TIGHT = 32, TIGHT_STEPS = 4 };
static const double WALL_H = 0.05;              /* s, the crash scene's step */
static const double OVERLAP_GROWTH_TOL = 1e-9; /* m */
static const double REST_WALL = 1e-10;          /* m/s */

/* the wall's step, its stats printed and checked exact and at rest; *n the island's unknowns */
static const pp_step_stats *stepped(pp_world *pw, const pp_scene *s, int step, const char *what,
                                    int *n)
{
    ck_assert_int_eq(pp_world_step(pw, WALL_H), PP_OK);
    const pp_step_stats *t = pp_world_get_stats(pw);
    const double v = pp_scene_fastest_body(s);
    *n = t->lcp_size + t->lcp_screened;
    printf("check_peg_screen_gate: %s step %d: %d unknowns, %d screened, %d pivots, load "
           "shared %d, fastest %.3g m/s\n",
           what, step, *n, t->lcp_screened, t->lcp_pivots, t->load_shared, v);
    ck_assert_msg(t->status == PP_OK && t->lcp_status == 0 && t->lcp_fallback == 0 &&
                      t->lcp_approximate == 0 && t->islands_failed == 0 && t->peg_fallback == 0,
                  "%s step %d: status %d, lcp status %d, lcp_fallback %d, peg_fallback %d",
                  what, step, t->status, t->lcp_status, t->lcp_fallback, t->peg_fallback);
    ck_assert_msg(v <= REST_WALL, "%s step %d: fastest body %g m/s", what, step, v);
    return t;
}

static void assert_reduced(const pp_step_stats *t, const char *what, int step, int pivots)
{
    ck_assert_msg(t->lcp_screened == 0 && t->load_shared >= 1 && t->lcp_pivots <= pivots,
                  "%s step %d: not the reduction's answer within %d pivots (%d screened, load "
                  "shared %d, %d pivots)",
                  what, step, pivots, t->lcp_screened, t->load_shared, t->lcp_pivots);
}

static pp_world *wall(pp_scene *s, double *deep)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene_brick_wall(s, WALL_ROWS, WALL_WIDE);
    *deep = pp_scene_max_penetration(s);
    return pp_it_world_clock_free(s, PP_MODEL_PEG);
}

static void wall_done(pp_world *pw, pp_scene *s, double deep_start)
{
    const double deep_end = pp_scene_max_penetration(s);
    printf("check_peg_screen_gate: wall's deepest overlap %.3g m at the start, %.3g m after\n",
           deep_start, deep_end);
    ck_assert_msg(deep_end <= deep_start + OVERLAP_GROWTH_TOL, "overlap %g m -> %g m",
                  deep_start, deep_end);
    pp_world_destroy(pw);
    pp_scene_destroy(s);
}

START_TEST(test_crash_wall_screened)
{
    pp_scene s;
    double deep = 0.0;
    pp_world *pw = wall(&s, &deep);
    for (int step = 0; step < WALL_STEPS; ++step) {
        int n = 0;
        const pp_step_stats *t = stepped(pw, &s, step, "wall", &n);
        if (step == 0) {
            assert_reduced(t, "wall", step, WARM_PIVOTS);
            continue;
        }
        ck_assert_msg(t->lcp_screened > 0 && 2 * t->lcp_size < n,
                      "wall step %d: not screened (%d of %d unknowns solved)", step,
                      t->lcp_size, n);
        ck_assert_msg(t->lcp_pivots <= (step == 1 ? n / 4 : WARM_PIVOTS),
                      "wall step %d: %d pivots", step, t->lcp_pivots);
    }
    wall_done(pw, &s, deep);
}
END_TEST

START_TEST(test_crash_wall_capped)
{
    const int before = pp_peg_screen_lemke_cheap(WALL_TIGHT);
    pp_scene s;
    double deep = 0.0;
    pp_world *pw = wall(&s, &deep);
    for (int step = 0; step < TIGHT_STEPS; ++step) {
        int n = 0;
        const pp_step_stats *t = stepped(pw, &s, step, "tight wall", &n);
        /* step 1: the capped round (n / WALL_TIGHT pivots, then the reduction's few) */
        assert_reduced(t, "tight wall", step,
                       step == 1 ? n / WALL_TIGHT + WARM_PIVOTS : WARM_PIVOTS);
        if (step == 1)
            ck_assert_msg(t->lcp_pivots >= n / WALL_TIGHT, "step 1: no capped round (%d "
                          "pivots)", t->lcp_pivots);
    }
    wall_done(pw, &s, deep);
    pp_peg_screen_lemke_cheap(before);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_screen_gate");
    TCase *tc = tcase_create("gate");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_crash_wall_screened);
    tcase_add_test(tc, test_crash_wall_capped);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
