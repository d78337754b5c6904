/*
 * Two small convex hulls meeting fast under PP_MODEL_PEG (pegplus/peg.h "The bound per pair"):
 * an 8 cm and a 2 cm hull of 15 random points each, the small one shot at the big one at 25
 * and 50 m/s with a random spin, no gravity, frictionless and with mu = 0.5, h = 0.01. The
 * speculative margin (|v| h = 0.25–0.5 m) is many times the hulls' size: before the bound
 * every feature pair was near and one pair made an LCP of 97 782 unknowns (PP_ERR_NO_MEMORY
 * every step). Asserted after every step: PP_OK, no PEG or LCP fallback, no overlap (exact
 * volume, pegplus/overlap.h), no kinetic energy gained, and the step's sets and contacts
 * within the bound (per builder call; the re-linearisation keeps the sets of each of its
 * iterates, so a step holds up to (iterations + 1) calls' worth); and the pair did meet.
 *
 * At h = 0.01 the small hull moves 25–50 cm a step, many times both hulls' size: within one
 * step it would cross the big hull, and a time stepper that asks for no overlap at the step's
 * end (ST96 Eq 29, PEG's sets) let it pass through under both models (docs/performance.md
 * "Fast hulls, seed 1" and "Session 17: the pass-through traced"). The step is now split for
 * a fast pair (impact_stage.c pp_time_to_impact, "Fast pairs": at the touch, then in pieces
 * that carry the contact point at most half the thinner hull's width), so at h = 0.01 the
 * frictionless cases must collide, under PP_MODEL_PEG and PP_MODEL_STANDARD alike: the small
 * hull stopped, its velocity along the shot at most half the shot's after the run, with every
 * assertion above (the set bound holds trivially under the standard model: no I/X sets).
 * Without the split 11 of these 12 cases fail: they pass through (the standard model's seed 1
 * at 25 m/s also ends a step 2e-6 m^3 inside); the standard model's seed 2 at 25 m/s is
 * slowed to 8.6 m/s and passes. The cases with mu = 0.5 glance off the big hull (deflected,
 * spinning) and are not asked to stop. The cases with h = 5e-4 (|v| h = 1.25 cm) resolve the
 * approach without a split. PEG 50 m/s seed 15 at h = 5e-4 (the fast-hull scan's): a sub-step
 * whose iterates cycle above the energy bound, its last estimate less violating than the kept
 * one (relinearize.c relinearize_step's end; docs/performance.md "A fast pair's constraints
 * within the bound across the iterates"): with the pair bound and without that rule it ended
 * a step 4.5e-11 m^3 inside.
 */
#include "pegplus/geometry.h"
#include "pegplus/overlap.h"
#include "pegplus/peg.h"
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"
#include "it_energy.h"
#include "it_fast_hulls.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OVERLAP_TOL 1e-12 /* m^3 after every step, as the pouring test */
#define ENERGY_TOL 1e-9   /* relative: an inelastic, frictionless or frictional contact only
                             removes kinetic energy */

typedef struct fast_case {
    pp_model model;
    double speed, mu;
    int seed;
    double h;    /* the time step, s */
    int steps;   /* steps run */
    int collide; /* assert that the small hull was stopped (h resolves the collision) */
} fast_case;

/* Seed 1 at h = 0.01 under PEG, before the split: 2 % of kinetic energy gained at 25 m/s,
 * 5.1e-7 m^3 inside at 50 m/s (the pass-through's two outcomes under the energy rule). */
#define PEG PP_MODEL_PEG
#define STD PP_MODEL_STANDARD
#define MODEL(fc) ((fc)->model == PP_MODEL_PEG ? "PEG" : "standard")
static const fast_case CASES[] = {
    {PEG, 25, 0.0, 1, 0.01, 30, 1}, {PEG, 25, 0.0, 2, 0.01, 30, 1}, {PEG, 25, 0.0, 3, 0.01, 30, 1},
    {PEG, 25, 0.5, 4, 0.01, 30, 0}, {PEG, 50, 0.0, 1, 0.01, 30, 1}, {PEG, 50, 0.0, 2, 0.01, 30, 1},
    {PEG, 50, 0.0, 3, 0.01, 30, 1}, {PEG, 50, 0.5, 4, 0.01, 30, 0}, {PEG, 25, 0.0, 1, 5e-4, 60, 1},
    {PEG, 25, 0.0, 2, 5e-4, 60, 1}, {PEG, 50, 0.0, 15, 5e-4, 100, 1},
    {STD, 25, 0.0, 1, 0.01, 30, 1}, {STD, 25, 0.0, 2, 0.01, 30, 1},
    {STD, 25, 0.0, 3, 0.01, 30, 1}, {STD, 50, 0.0, 1, 0.01, 30, 1}, {STD, 50, 0.0, 2, 0.01, 30, 1},
    {STD, 50, 0.0, 3, 0.01, 30, 1},
};

START_TEST(test_fast_hulls)
{
    const fast_case *fc = &CASES[_i];
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scenes_init_ode();
    dWorldID world = dWorldCreate();
    dSpaceID space = dHashSpaceCreate(0);
    dWorldSetGravity(world, 0, 0, 0);
    pp_config config = pp_config_default();
    config.model = fc->model;
    config.surface.mu = fc->mu;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &config, &pw), PP_OK);

    pp_it_fast_pair fp;
    pp_it_fast_pair_build(pw, world, space, fc->seed, fc->speed, &fp);

    char what[96];
    snprintf(what, sizeof what, "%s %g m/s seed %d h %g", MODEL(fc), fc->speed, fc->seed, fc->h);
    const int calls = config.relinearize_iterations + 1;
    double energy = pp_it_fast_pair_energy(&fp);
    int met = 0, max_contacts = 0, max_lcp = 0, max_sub = 0;
    for (int step = 0; step < fc->steps; ++step) {
        ck_assert_int_eq(pp_world_step(pw, fc->h), PP_OK);
        const pp_step_stats *s = pp_world_get_stats(pw);
        int sets = s->peg_u_sets + s->peg_i_sets + s->peg_x_sets;
        ck_assert_int_le(sets, calls * PP_PEG_PAIR_MAX_SETS);
        ck_assert_int_le(s->contacts, calls * PP_PEG_PAIR_MAX_CONTACTS);
        met |= s->contacts > 0;
        if (s->contacts > max_contacts) max_contacts = s->contacts;
        if (s->lcp_size > max_lcp) max_lcp = s->lcp_size;
        if (s->substeps > max_sub) max_sub = s->substeps;
        pp_it_fast_pair_check_step(&fp, s, what, step, OVERLAP_TOL, ENERGY_TOL, &energy);
    }
    pp_it_fast_pair_check_end(&fp, what, fc->speed, met, fc->collide); /* shot along -x */
    printf("fast hulls %s %g m/s, mu %g, seed %d, h %g: largest step %d contacts, LCP %d "
           "unknowns, most sub-steps %d\n",
           MODEL(fc), fc->speed, fc->mu, fc->seed, fc->h, max_contacts, max_lcp, max_sub);
    pp_it_fast_pair_teardown(pw, &fp, space, world);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("peg_fast_hulls");
    TCase *tc = tcase_create("fast_hulls");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_fast_hulls, 0, (int)(sizeof CASES / sizeof CASES[0]));
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
