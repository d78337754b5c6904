/*
 * Declined islands (contact/src/peg_mlcp.c "Declined islands"; plugin/src/stage_time_step.c;
 * docs/performance.md "PEG's impact steps handed to the standard model"): under PP_MODEL_PEG
 * a moving island with I/X sets, no warm start, not answered by screening and of at least
 * pp_peg_decline_min_n unknowns (8 000; an impact's, which no PEG path answers within the
 * clock) is not solved by PEG: the standard model's constraints on its pairs answer it, with
 * the island's whole budget, counted in peg_fallback. A crash made small: the crash demo's
 * bricks in a wall of 3 rows of 5, a 10 kg ball of radius 0.5 m fired at 20 m/s from 2.6 m
 * (it reaches the wall in the third step, h = 0.05 s), clock-free, the rule's size lowered to
 * DECLINE_N and the sticking solve's to STICK_N, so that the resting wall's cold first step
 * goes to the primaries' reduction as the crash wall's does (peg_screen.c "The gate").
 *  - The wall at rest (steps 0-1: its island is cold at step 0, with X sets, above both sizes,
 *    and answered by the reduction): not declined, every answer exact. Declining it too (the
 *    rule without "moving") makes peg_fallback 1 there.
 *  - The impact (step 2, the ball's and the wall's island moving, 1 512 PEG unknowns, 64 I
 *    and 32 X sets): declined, peg_fallback 1, and the step's answers exact (no regularised,
 *    approximate or failed solve: lcp_status 0, lcp_fallback 0), the bodies' velocities bit
 *    for bit those of a twin world stepped the same way but switched to the standard model for
 *    that step (so the answer applied is the standard model's LCP answer, 1 248 unknowns, at
 *    PEG's pose and warm start, not PEG's nor the bounded fallback's; measured 13 157 pivots,
 *    ~4 s). Without the rule PEG's Lemke answers this small island itself on M + eps I
 *    (lcp_fallback 1) after 27 498 pivots, 26 s of CPU (measured; the crash demo's islands
 *    are 7-17 times its size), so the test fails there on peg_fallback and lcp_fallback.
 * The rule's other conditions, each on an island that meets all the others (moving, not
 * answered by screening: screening off, pp_peg_screening, at least DECLINE_N unknowns):
 *  - warm: the wall without gravity sliding along y at 1 m/s, solved by PEG in one step with
 *    the rule off (so its sets' bases are kept), then a step with the rule on and
 *    re-linearisation off (an iterate's sets at the predicted pose are new, so cold, and
 *    would be declined): 1 416 unknowns, 64 I and 32 X sets, every set known, not declined,
 *    0 pivots. The rule without "no warm start" declines it (peg_fallback 1).
 *  - no I/X sets: 60 spheres touching in a row on the plane, rolling at 1 m/s, cold: U sets
 *    only (K = 0), 714 unknowns, not declined. The rule without "K > 0" declines it.
 * The rule's size itself, the library's own (8 000), at its boundary: test_size_boundary, the
 * declined island's size read from pp_step_stats.peg_declined_largest.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_heap_state.h"

#include <check.h>
#include <limits.h>
#include <math.h>
#include <ode/ode.h>
#include <stdio.h>
#include <string.h>

/* peg_mlcp.c: the sizes of the rule and of the sticking solve, for tests */
int pp_peg_decline_min_n(int n);
int pp_peg_sticking_min_n(int n);
/* peg_screen.c: constraint screening on or off, for tests */
int pp_peg_screening(int on);

enum { ROWS = 3, WIDE = 5, IMPACT_STEP = 2, DECLINE_N = 257, STICK_N = 257 };
static const double H = 0.05;                            /* s, the crash scene's step */
static const double BALL[3] = {-2.6, 0.0, 0.55};         /* m: 0.05 m above the ground */
static const double BALL_SPEED = 20.0;                   /* m/s along x, at the wall */

static pp_world *crash(pp_scene *s)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene_brick_wall(s, ROWS, WIDE);
    dBodyID ball = pp_scene_add_sphere(s, 0.5, 10.0, BALL);
    dBodySetLinearVel(ball, BALL_SPEED, 0.0, 0.0);
    return pp_it_world_clock_free(s, PP_MODEL_PEG);
}

/* The rule's and the sticking solve's sizes as the tests of the small crash want them
 * (DECLINE_N, STICK_N), and the library's own put back. */
typedef struct sizes {
    int decline, sticking;
} sizes;

static sizes sizes_lowered(void)
{
    const int decline = pp_peg_decline_min_n(DECLINE_N);
    return (sizes){decline, pp_peg_sticking_min_n(STICK_N)};
}

static void sizes_restored(sizes before)
{
    pp_peg_sticking_min_n(before.sticking);
    pp_peg_decline_min_n(before.decline);
}

/* A wall of rows x wide bricks raised by `drop` (m) above the ground, under PEG with c. */
static pp_world *dropped_wall_with(pp_scene *s, int rows, int wide, double drop,
                                   const pp_config *c)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene_brick_wall(s, rows, wide);
    for (int i = 0; i < s->body_count; ++i) {
        const dReal *x = dBodyGetPosition(s->bodies[i]);
        dBodySetPosition(s->bodies[i], x[0], x[1], x[2] + drop);
    }
    return pp_it_world_create(s, c);
}

/* The small wall raised by `drop` (m) above the ground, under PEG, clock-free. */
static pp_world *dropped_wall(pp_scene *s, double drop)
{
    const pp_config c = pp_it_config_clock_free(PP_MODEL_PEG);
    return dropped_wall_with(s, ROWS, WIDE, drop, &c);
}

/* Every body of scene a moves as its twin's in b, bit for bit (the answer applied is the
 * twin's: the standard model's LCP answer). */
static void assert_twin_velocities(const pp_scene *a, const pp_scene *b)
{
    ck_assert_int_eq(a->body_count, b->body_count);
    for (int i = 0; i < a->body_count; ++i) {
        const dReal *va = dBodyGetLinearVel(a->bodies[i]), *vb = dBodyGetLinearVel(b->bodies[i]);
        const dReal *wa = dBodyGetAngularVel(a->bodies[i]);
        const dReal *wb = dBodyGetAngularVel(b->bodies[i]);
        for (int k = 0; k < 3; ++k)
            ck_assert_msg(va[k] == vb[k] && wa[k] == wb[k],
                          "body %d: velocity not the standard model's (%.17g vs %.17g, %.17g "
                          "vs %.17g)", i, va[k], vb[k], wa[k], wb[k]);
    }
}

static const pp_step_stats *stepped(pp_world *pw, int step, const char *what)
{
    ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
    const pp_step_stats *t = pp_world_get_stats(pw);
    printf("check_peg_decline: %s step %d: %d unknowns solved (largest %d), %d pivots, "
           "peg_fallback %d (declined: %d unknowns), residual %.3g, I/X sets %d/%d\n",
           what, step, t->lcp_size, t->lcp_largest, t->lcp_pivots, t->peg_fallback,
           t->peg_declined_largest, t->lcp_residual, t->peg_i_sets, t->peg_x_sets);
    ck_assert_msg(t->status == PP_OK && t->lcp_status == 0 && t->lcp_fallback == 0 &&
                      t->lcp_approximate == 0 && t->islands_failed == 0,
                  "%s step %d: status %d, lcp status %d, lcp_fallback %d, approximate %d",
                  what, step, t->status, t->lcp_status, t->lcp_fallback, t->lcp_approximate);
    return t;
}

START_TEST(test_impact_declined)
{
    const sizes before = sizes_lowered();
    pp_scene a, b;
    pp_world *pa = crash(&a), *pb = crash(&b);
    for (int step = 0; step < IMPACT_STEP; ++step) {
        const pp_step_stats *t = stepped(pa, step, "wall");
        ck_assert_msg(t->peg_fallback == 0 && t->peg_x_sets > 0 && t->lcp_size >= DECLINE_N,
                      "wall step %d: peg_fallback %d (at rest: not declined), %d X sets, %d "
                      "unknowns", step, t->peg_fallback, t->peg_x_sets, t->lcp_size);
        stepped(pb, step, "twin");
    }
    /* the impact: declined under PEG; the twin takes the standard model for this step */
    const pp_step_stats *t = stepped(pa, IMPACT_STEP, "impact");
    ck_assert_msg(t->peg_fallback == 1, "impact: peg_fallback %d", t->peg_fallback);
    ck_assert_int_eq(pp_world_set_model(pb, PP_MODEL_STANDARD), PP_OK);
    const pp_step_stats *u = stepped(pb, IMPACT_STEP, "twin, standard model");
    ck_assert_msg(u->peg_fallback == 0, "twin: peg_fallback %d", u->peg_fallback);
    assert_twin_velocities(&a, &b);
    int moving = 0;
    for (int i = 0; i < a.body_count; ++i)
        for (int k = 0; k < 3; ++k) moving += fabs(dBodyGetLinearVel(a.bodies[i])[k]) > 1e-3;
    ck_assert_msg(moving > 1, "the impact moved no brick");
    pp_it_scene_destroy(&a);
    pp_it_scene_destroy(&b);
    sizes_restored(before);
}
END_TEST

/* The rule's size (pp_peg_decline_min_n) is reached and the island moves, but it is warm: PEG
 * answers it, not the standard model. */
START_TEST(test_warm_kept)
{
    const sizes before = sizes_lowered();
    pp_scene a;
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene_brick_wall(&a, ROWS, WIDE);
    dWorldSetGravity(a.world, 0.0, 0.0, 0.0);
    pp_config c = pp_it_config_clock_free(PP_MODEL_PEG);
    c.relinearize_iterations = 0; /* an iterate's sets are new at q^: cold */
    pp_world *pa = pp_it_world_create(&a, &c);
    stepped(pa, 0, "wall at rest");
    for (int i = 0; i < a.body_count; ++i) dBodySetLinearVel(a.bodies[i], 0.0, 1.0, 0.0);
    pp_peg_decline_min_n(INT_MAX); /* the rule off: PEG answers the moving wall, cold */
    const pp_step_stats *t = stepped(pa, 1, "sliding wall, the rule off");
    ck_assert_msg(t->peg_fallback == 0, "sliding wall: peg_fallback %d", t->peg_fallback);
    pp_peg_decline_min_n(DECLINE_N);
    const int screening_before = pp_peg_screening(0);
    t = stepped(pa, 2, "sliding wall, warm");
    pp_peg_screening(screening_before);
    ck_assert_msg(t->peg_i_sets > 0 && t->lcp_largest >= DECLINE_N,
                  "sliding wall: %d I sets, %d unknowns: not the island meant", t->peg_i_sets,
                  t->lcp_largest);
    ck_assert_msg(t->peg_fallback == 0, "sliding wall, warm: peg_fallback %d (declined)",
                  t->peg_fallback);
    pp_it_scene_destroy(&a);
    sizes_restored(before);
}
END_TEST

/* A first contact: the wall dropped from DROP above the ground (clock-free, the rule's size
 * lowered). While it falls its bricks' sets are open and verified so (screening answers with
 * no impulse), so its island starts every step warm with no p basic; the step it lands some
 * set is violated at the free motion (S_0 not empty), and the island is declined before
 * screening's first round (peg_mlcp.c "Declined islands", "A first contact"): peg_fallback 1,
 * the answer bit for bit a twin's switched to the standard model for that step. The steps
 * before it are PEG's (peg_fallback 0). Without the first contact's reading the landing is
 * warm, so PEG screens it itself: peg_fallback 0 in every step, and the test fails (measured:
 * declined at step 1, 354 unknowns solved by the standard model in 43 pivots). A drop of 0.3 m
 * lands cold (its ground sets new that step) and is not the case meant. */
START_TEST(test_first_contact_declined)
{
    enum { STEPS = 12 };
    static const double DROP = 0.06; /* m: its sets with the ground present at step 0 */
    const sizes before = sizes_lowered();
    pp_scene a, b;
    pp_world *pa = dropped_wall(&a, DROP), *pb = dropped_wall(&b, DROP);
    int landed = -1;
    for (int step = 0; step < STEPS && landed < 0; ++step) {
        const pp_step_stats *t = stepped(pa, step, "dropped wall");
        if (t->peg_fallback == 0) {
            stepped(pb, step, "twin");
            continue;
        }
        ck_assert_msg(t->peg_fallback == 1 && t->peg_i_sets + t->peg_x_sets > 0,
                      "step %d: peg_fallback %d, %d I and %d X sets", step, t->peg_fallback,
                      t->peg_i_sets, t->peg_x_sets);
        landed = step;
        ck_assert_int_eq(pp_world_set_model(pb, PP_MODEL_STANDARD), PP_OK);
        stepped(pb, step, "twin, standard model");
    }
    ck_assert_msg(landed > 0, "the landing was not declined (step %d)", landed);
    assert_twin_velocities(&a, &b);
    int moving = 0;
    for (int i = 0; i < a.body_count; ++i) /* the fall's 9.81 m/s^2 * ~0.25 s stopped */
        moving += dBodyGetLinearVel(a.bodies[i])[2] > -1.0;
    ck_assert_msg(moving > 0, "the landing stopped no brick");
    pp_it_scene_destroy(&a);
    pp_it_scene_destroy(&b);
    sizes_restored(before);
}
END_TEST

/* Sets touching at relative rest are no first contact (peg_mlcp.c "A first contact": a gap
 * closed at w_p = 0, as in a stack falling as one, is not): the wall dropped from FALL, its
 * bricks' joints touching, falls as one for its first IN_AIR steps, warm from step 1 with no
 * set active (no impulse: every brick's velocity -g h (step + 1)), and some of its sets in the
 * LCP solved (in S_0: touching); PEG answers every one of those steps (peg_fallback 0). Read
 * as "S_0 not empty" instead, the rule declined steps 1 and 2 (measured, peg_fallback 1). */
START_TEST(test_falling_wall_kept)
{
    enum { IN_AIR = 4 };
    static const double FALL = 0.5; /* m: the ground's sets absent until step 3 */
    const sizes before = sizes_lowered();
    pp_scene a;
    pp_world *pa = dropped_wall(&a, FALL);
    int touching = 0;
    for (int step = 0; step < IN_AIR; ++step) {
        const pp_step_stats *t = stepped(pa, step, "falling wall");
        ck_assert_msg(t->peg_i_sets + t->peg_x_sets > 0 &&
                          t->lcp_size + t->lcp_screened >= DECLINE_N,
                      "step %d: %d I and %d X sets, %d unknowns: not the island meant", step,
                      t->peg_i_sets, t->peg_x_sets, t->lcp_size + t->lcp_screened);
        ck_assert_msg(t->peg_fallback == 0, "falling wall step %d: peg_fallback %d (declined)",
                      step, t->peg_fallback);
        touching += step > 0 && t->lcp_size > 0;
        const double free_fall = -9.81 * H * (step + 1); /* m/s */
        for (int i = 0; i < a.body_count; ++i)
            ck_assert_msg(fabs(dBodyGetLinearVel(a.bodies[i])[2] - free_fall) <= 1e-9,
                          "step %d, brick %d: v_z %.17g, not the free fall's %.17g", step, i,
                          dBodyGetLinearVel(a.bodies[i])[2], free_fall);
    }
    ck_assert_msg(touching > 0, "no warm step solved a touching set");
    pp_it_scene_destroy(&a);
    sizes_restored(before);
}
END_TEST

/* The rule's size at its boundary, the library's own (PP_PEG_DECLINE_MIN_N, peg_lcp_internal.h;
 * the 8 000 of pegplus.h peg_fallback: RULE_N here, so that moving it fails the test). Walls
 * of SIZE_ROWS rows dropped from 0.06 m (test_first_contact_declined's drop), clock-free and
 * without re-linearisation, so that each step solves one PEG LCP, of one island, whose size
 * the step's statistics give: lcp_size + lcp_screened where PEG answered it,
 * peg_declined_largest where it was declined. A wall's first step starts at rest (never
 * declined); its second is the landing (I sets appear), where the wall of KEPT_WIDE columns
 * holds just fewer than RULE_N PEG unknowns and PEG answers it, and the wall of one column
 * more holds RULE_N or more and is declined (peg_fallback 1), the standard model answering it
 * exactly (measured: 7 824 and 8 592 unknowns; ~0.6 s of CPU each landing). Both sizes are
 * asserted within a factor 2 of RULE_N, so a rule of half (4 000) declines the first and one
 * of twice (16 000) keeps the second: the test fails either way. The same landings with the
 * size set through pp_peg_decline_min_n: at the kept wall's own size it is declined (all the
 * rule's other conditions hold: its size alone kept it), one above the declined wall's keeps
 * it, and the size reported is in both the one the rule read. */
static pp_step_stats size_landing(int wide)
{
    enum { SIZE_ROWS = 6 };
    static const double SIZE_DROP = 0.06; /* m */
    pp_scene a;
    pp_config c = pp_it_config_clock_free(PP_MODEL_PEG);
    c.relinearize_iterations = 0; /* one PEG LCP a step: its size is the step's */
    pp_world *pa = dropped_wall_with(&a, SIZE_ROWS, wide, SIZE_DROP, &c);
    const pp_step_stats *t = stepped(pa, 0, "wall at its drop");
    ck_assert_msg(t->peg_fallback == 0 && t->peg_declined_largest == 0,
                  "step 0 (at rest at its start): peg_fallback %d, declined %d unknowns",
                  t->peg_fallback, t->peg_declined_largest);
    const pp_step_stats landed = *stepped(pa, 1, "wall landing");
    ck_assert_msg(landed.islands == 1 && landed.substeps == 1 && landed.relinearizations == 0 &&
                      landed.peg_i_sets > 0 && landed.peg_x_sets > 0,
                  "landing: %d islands, %d sub-steps, %d re-linearisations, %d I and %d X "
                  "sets: not the one PEG LCP with I/X sets meant",
                  landed.islands, landed.substeps, landed.relinearizations, landed.peg_i_sets,
                  landed.peg_x_sets);
    pp_it_scene_destroy(&a);
    return landed;
}

START_TEST(test_size_boundary)
{
    enum { RULE_N = 8000, KEPT_WIDE = 11, DECLINED_WIDE = KEPT_WIDE + 1 };
    /* the library's own size */
    const pp_step_stats kept = size_landing(KEPT_WIDE);
    const int kept_n = kept.lcp_size + kept.lcp_screened;
    ck_assert_msg(kept.peg_fallback == 0 && kept.peg_declined_largest == 0,
                  "%d columns, %d unknowns: peg_fallback %d, declined %d unknowns", KEPT_WIDE,
                  kept_n, kept.peg_fallback, kept.peg_declined_largest);
    ck_assert_msg(kept_n >= RULE_N / 2 && kept_n < RULE_N,
                  "%d columns: %d unknowns, not just below the rule's %d", KEPT_WIDE, kept_n,
                  RULE_N);
    const pp_step_stats declined = size_landing(DECLINED_WIDE);
    const int declined_n = declined.peg_declined_largest;
    ck_assert_msg(declined.peg_fallback == 1, "%d columns: peg_fallback %d (not declined)",
                  DECLINED_WIDE, declined.peg_fallback);
    ck_assert_msg(declined_n >= RULE_N && declined_n < 2 * RULE_N,
                  "%d columns: declined at %d unknowns, not at or just above the rule's %d",
                  DECLINED_WIDE, declined_n, RULE_N);
    /* the size moved to each island's own: only the size decided */
    const int size_before = pp_peg_decline_min_n(kept_n);
    const pp_step_stats at = size_landing(KEPT_WIDE);
    pp_peg_decline_min_n(declined_n + 1);
    const pp_step_stats past = size_landing(DECLINED_WIDE);
    pp_peg_decline_min_n(size_before);
    ck_assert_msg(at.peg_fallback == 1 && at.peg_declined_largest == kept_n,
                  "%d columns, the rule's size %d: peg_fallback %d, declined %d unknowns",
                  KEPT_WIDE, kept_n, at.peg_fallback, at.peg_declined_largest);
    ck_assert_msg(past.peg_fallback == 0 && past.peg_declined_largest == 0 &&
                      past.lcp_size + past.lcp_screened == declined_n,
                  "%d columns, the rule's size %d: peg_fallback %d, %d unknowns (declined %d)",
                  DECLINED_WIDE, declined_n + 1, past.peg_fallback,
                  past.lcp_size + past.lcp_screened, past.peg_declined_largest);
}
END_TEST

/* A moving cold island above the rule's size with U sets only (K = 0): not declined. */
START_TEST(test_u_sets_kept)
{
    enum { SPHERES = 60 };
    const int decline_before = pp_peg_decline_min_n(DECLINE_N);
    pp_scene a;
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene_brick_wall(&a, 0, 0); /* the plane and gravity, no brick */
    for (int i = 0; i < SPHERES; ++i) {
        const double x[3] = {0.2 * i, 0.0, 0.1};
        dBodySetLinearVel(pp_scene_add_sphere(&a, 0.1, 1.0, x), 1.0, 0.0, 0.0);
    }
    pp_world *pa = pp_it_world_clock_free(&a, PP_MODEL_PEG);
    const int screening_before = pp_peg_screening(0);
    const pp_step_stats *t = stepped(pa, 0, "rolling spheres");
    pp_peg_screening(screening_before);
    ck_assert_msg(t->peg_u_sets > 0 && t->peg_i_sets == 0 && t->peg_x_sets == 0 &&
                      t->lcp_largest >= DECLINE_N,
                  "spheres: %d U, %d I, %d X sets, %d unknowns: not the island meant",
                  t->peg_u_sets, t->peg_i_sets, t->peg_x_sets, t->lcp_largest);
    ck_assert_msg(t->peg_fallback == 0, "spheres (K = 0): peg_fallback %d (declined)",
                  t->peg_fallback);
    pp_it_scene_destroy(&a);
    pp_peg_decline_min_n(decline_before);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_decline");
    TCase *tc = tcase_create("decline");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_impact_declined);
    tcase_add_test(tc, test_warm_kept);
    tcase_add_test(tc, test_u_sets_kept);
    tcase_add_test(tc, test_first_contact_declined);
    tcase_add_test(tc, test_falling_wall_kept);
    tcase_add_test(tc, test_size_boundary);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
