/*
 * Scale is part of correctness (README "How a step runs"): memory follows the largest island,
 * never the whole step's contacts, so worlds that stock ODE runs also run here.
 *  - 333 separate 3-box stacks (999 bodies) under PEG: every step PP_OK, each stack its own
 *    island, with the process's data segment capped at 1 GiB (RLIMIT_DATA: malloc fails
 *    beyond it) and a peak RSS below 1 GiB. Before the island pipeline the LCP workspace
 *    was sized by the whole step (PP_ERR_NO_MEMORY at 300 stacks).
 *  - two small hulls closing at 25 and at 50 m/s under PEG and the standard model, under the
 *    same cap: every step of the meeting PP_OK within the cap (the per-pair bound of PEG,
 *    pegplus/peg.h; before it one pair asked for 76 GB).
 * Each case runs in Check's forked child, so the cap is the case's own.
 */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "scripted.h"
#include "it_common.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

static void setup(void)
{
    pp_scenes_init_ode();
    pp_set_log_hook(pp_log_discard, NULL);
    struct rlimit cap = {(rlim_t)GIB, (rlim_t)GIB};
    ck_assert_int_eq(setrlimit(RLIMIT_DATA, &cap), 0);
}

static double peak_rss_bytes(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return 1024.0 * (double)u.ru_maxrss; /* Linux: KiB */
}

START_TEST(test_islands_333_peg)
{
    pp_scene scene;
    pp_scene_islands(&scene, 333, 0.0, 1);
    ck_assert_int_eq(scene.body_count, 999);
    pp_config c = pp_config_default();
    c.model = PP_MODEL_PEG;
    c.friction_directions = 4;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(scene.world, scene.space, &c, &pw), PP_OK);
    int largest = 0;
    for (int step = 0; step < 10; ++step) {
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        ck_assert_int_eq(t->islands, 333);
        ck_assert_int_ne(t->lcp_fallback, 2);
        if (t->lcp_largest > largest) largest = t->lcp_largest;
    }
    double rss = peak_rss_bytes();
    printf("check_scale: 333 stacks under PEG, 10 steps: largest island LCP %d unknowns, peak "
           "RSS %.0f MB\n", largest, rss / 1048576.0);
    ck_assert_msg(rss < GIB, "peak RSS %.0f MB", rss / 1048576.0);
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
}
END_TEST

static const double k_speeds[] = {25.0, 50.0};
static const pp_model k_models[] = {PP_MODEL_PEG, PP_MODEL_STANDARD};

START_TEST(test_fast_hulls)
{
    double speed = k_speeds[_i % 2];
    pp_model model = k_models[_i / 2];
    pp_scene scene;
    ck_assert_int_eq(pp_scene_hulls(&scene, speed, 2), PP_OK);
    pp_config c = pp_config_default();
    c.model = model;
    c.friction_directions = 4;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(scene.world, scene.space, &c, &pw), PP_OK);
    scene.pegplus = pw;
    int largest = 0, contacts = 0;
    for (int step = 0; step < 12; ++step) { /* they meet in the second or third step */
        scene.before_step(&scene, step);
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        if (t->lcp_largest > largest) largest = t->lcp_largest;
        if (t->contacts > contacts) contacts = t->contacts;
    }
    ck_assert_int_eq(pp_scene_script_failures(&scene), 0);
    double rss = peak_rss_bytes();
    printf("check_scale: hulls at %g m/s, %s: largest LCP %d unknowns, at most %d contacts at a "
           "step's start, peak RSS %.0f MB\n", speed, pp_model_name(model), largest, contacts,
           rss / 1048576.0);
    ck_assert_msg(rss < GIB, "peak RSS %.0f MB", rss / 1048576.0);
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("scale");
    TCase *tc = tcase_create("scale");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_islands_333_peg);
    tcase_add_loop_test(tc, test_fast_hulls, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pp_it_run(suite());
}
