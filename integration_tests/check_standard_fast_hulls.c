/*
 * Two small hulls meeting fast under PP_MODEL_STANDARD (the benchmark's hulls25 and hulls50:
 * pp_scene_hulls, an 8 cm and a 2 cm hull of random points closing at 25 or 50 m/s 0.3 m
 * above the plane, gravity on, h = 0.01, k = 4). Asserted at every step: PP_OK; every island
 * LCP solved by Lemke (lcp_fallback <= 1: as posed or on M + eps I, never the approximate
 * fallback, no island left without impulses); no contact of the next step's start reading an overlap deeper than
 * 1e-6 m (pp_step_stats.min_gap, the soak's PENETRATION_SKIP); and the energy of an inelastic
 * step, kinetic plus gravitational, rising by at most semi-implicit Euler's own term (the
 * soak's bound, examples/soak.c "Energy bound"): sum m g^2 h^2 / 2 + m g h max(0, dv_z), plus
 * 1e-9 of the energy.
 * Before the rule that no standard contact reads a pair deeper than it is
 * (stage_constraints.c): at the step after the meeting step the hull pair's 41 contacts
 * overlapped with normals spanning every direction, Lemke ended on a ray also with M + eps I
 * and the island got no impulse (lcp_fallback 3).
 */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "scripted.h"
#include "it_common.h"
#include "it_energy.h"

#include <check.h>
#include <math.h>
#include <stdio.h>

#define H 0.01
#define STEPS 40
#define G 9.81
#define PENETRATION_TOL 1e-6 /* m */
#define ENERGY_RELATIVE 1e-9

/* Kinetic plus gravitational energy of the scene's bodies, J; vz: their vertical speeds. */
static double energy(const pp_scene *s, double *vz)
{
    double e = 0.0;
    for (int i = 0; i < s->body_count; ++i) {
        e += pp_it_body_energy(s->bodies[i], G);
        vz[i] = dBodyGetLinearVel(s->bodies[i])[2];
    }
    return e;
}

static const double k_speeds[] = {25.0, 50.0};

START_TEST(test_fast_hulls_standard)
{
    const double speed = k_speeds[_i];
    pp_scenes_init_ode();
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scene scene;
    ck_assert_int_eq(pp_scene_hulls(&scene, speed, 1), PP_OK);
    pp_config c = pp_config_default();
    c.model = PP_MODEL_STANDARD;
    c.friction_directions = 4;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(scene.world, scene.space, &c, &pw), PP_OK);
    scene.pegplus = pw;
    int met = 0;
    for (int step = 0; step < STEPS; ++step) {
        scene.before_step(&scene, step);
        double vz0[8], vz1[8];
        ck_assert_int_le(scene.body_count, 8);
        const double e0 = energy(&scene, vz0);
        ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pw);
        const double e1 = energy(&scene, vz1);
        double bound = ENERGY_RELATIVE * fabs(e0);
        for (int i = 0; i < scene.body_count; ++i) {
            dMass m;
            dBodyGetMass(scene.bodies[i], &m);
            bound += m.mass * G * G * H * H / 2 + m.mass * G * H * fmax(0.0, vz1[i] - vz0[i]);
        }
        ck_assert_msg(t->lcp_fallback <= 1 && t->islands_failed == 0,
                      "%g m/s step %d: lcp_fallback %d, %d islands unsolved", speed, step,
                      t->lcp_fallback, t->islands_failed);
        ck_assert_msg(t->min_gap >= -PENETRATION_TOL, "%g m/s step %d: a contact %.3g m deep",
                      speed, step, -t->min_gap);
        ck_assert_msg(e1 - e0 <= bound, "%g m/s step %d: energy %.9g -> %.9g J, bound %.3g J",
                      speed, step, e0, e1, bound);
        met |= t->contacts > 0 && t->lcp_largest > 0;
    }
    ck_assert_msg(met, "%g m/s: the hulls never met", speed);
    ck_assert_int_eq(pp_scene_script_failures(&scene), 0);
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("standard_fast_hulls");
    TCase *tc = tcase_create("fast_hulls");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_fast_hulls_standard, 0, 2);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
