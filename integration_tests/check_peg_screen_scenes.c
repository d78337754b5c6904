/*
 * Constraint screening in ODE worlds (contact/src/peg_screen.c; README "Constraint
 * screening"): a wall of 2 x 3 bricks (the crash wall's bricks, 1 mm joints in a row, rows
 * stacked) hit by a 2 kg box sliding at 2 m/s into its lower middle brick, under PEG. At rest
 * the joints are open: screening solves the supports only. Once the wall moves it is one
 * island whose joints keep their I and X sets (a moving island is built without the
 * reductions, pegplus/peg.h): most of its LCP is joints that stay open, which screening leaves
 * out of the solve and verifies at the answer, and the joints the push closes join it.
 *  - screening engages at every step (the wall at rest, the impact, after);
 *  - every step PP_OK with Lemke's answer, no overlap beyond 1e-9 m at any step, screened
 *    pairs included (their gaps are verified, not solved);
 *  - no energy gained: kinetic plus potential energy never grows from step to step beyond
 *    round-off (friction and the inelastic hit only take it away);
 *  - the hit brick was pushed.
 * Measured: every step's last LCP screened, 160-1 245 of 328-1 436 unknowns left out (the
 * solved ones 156-276), 0.13 s for the 25 steps. (A 2 x 4 wall: at the impact step the
 * active joints grow past half of the island, which is then solved whole: 25 s that step.)
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_energy.h"
#include "it_heap_state.h"
#include "scenes.h"

#include <check.h>
#include <math.h>
#include <stdio.h>

#define ROW 3  /* bricks in a row */
#define ROWS 2
#define STEPS 25
#define H_STEP 0.01
#define TOL_OVERLAP 1e-9 /* m, as check_peg_model */
#define TOL_ENERGY 1e-9  /* J a step: round-off of ~1e2 J sums */

static double energy(const pp_scene *s)
{
    double e = 0.0;
    for (int i = 0; i < s->body_count; ++i) e += pp_it_body_energy(s->bodies[i], 9.81);
    return e;
}

START_TEST(test_wall_hit)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene s;
    /* a 0.3 m box sliding at 2 m/s along -x into the middle brick of the lower row */
    pp_scene_wall_hit(&s, ROWS, ROW);
    const dReal x_hit = dBodyGetPosition(s.bodies[ROW / 2])[0];
    pp_world *pw = pp_it_world_clock_free(&s, PP_MODEL_PEG);
    double deepest = 0.0, e0 = energy(&s), gain = 0.0;
    long screened = 0;
    int screened_steps = 0, largest = 0, whole = 0;
    for (int step = 0; step < STEPS; ++step) {
        const double before = energy(&s);
        ck_assert_int_eq(pp_world_step(pw, H_STEP), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        pp_it_assert_lemke(t, step);
        deepest = fmax(deepest, pp_scene_max_penetration(&s));
        ck_assert_msg(pp_scene_max_penetration(&s) <= TOL_OVERLAP, "step %d: overlap %g m", step,
                      pp_scene_max_penetration(&s));
        const double after = energy(&s);
        gain = fmax(gain, after - before);
        ck_assert_msg(after <= before + TOL_ENERGY, "step %d: energy %.12g -> %.12g J", step,
                      before, after);
        screened += t->lcp_screened;
        screened_steps += t->lcp_screened > 0;
        if (t->lcp_size + t->lcp_screened > largest) largest = t->lcp_size + t->lcp_screened;
        whole += t->lcp_screened == 0 && t->lcp_size >= 257;
    }
    const double moved = x_hit - dBodyGetPosition(s.bodies[ROW / 2])[0];
    printf("check_peg_screen_scenes: %d x %d wall hit at 2 m/s, %d steps: %d steps "
           "screened (%ld unknowns left out in all, islands up to %d unknowns; %d large steps "
           "solved whole), deepest overlap %.3g m, largest energy change a step %+.3g J (%.6g -> "
           "%.6g J), the hit brick moved %.4f m\n",
           ROWS, ROW, STEPS, screened_steps, screened, largest, whole, deepest, gain, e0, energy(&s),
           moved);
    ck_assert_int_eq(screened_steps, STEPS);
    ck_assert_double_gt(moved, 1e-2); /* the impact reached the wall */
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("peg_screen_scenes");
    TCase *tc = tcase_create("peg_screen_scenes");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_wall_hit);
    suite_add_tcase(suite, tc);
    return pp_it_run(suite);
}
