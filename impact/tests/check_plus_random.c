/*
 * Randomized V7 invariant tests (docs/references.md): random multi-contact configurations
 * of one brick on the ground, two stacked bricks, and a cluster of balls on the ground,
 * with random velocities and materials. Every run must complete (PP_OK, no cap) and
 * satisfy fx_check_invariants: no energy gain, pi_z >= 0 and the friction cone in every
 * interval, no positive friction work for sliding/impending intervals, no approach left.
 */
#include "plus_fixtures.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANDOM_CASES 150

typedef struct rng {
    uint64_t s;
} rng;

static double uniform(rng *r, double lo, double hi)
{
    /* splitmix64 */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

static void random_rotation(rng *r, double R[9])
{
    double Rx[9], Ry[9], Rz[9];
    fx_rot_x(uniform(r, -3.2, 3.2), Rx);
    fx_rot_y(uniform(r, -3.2, 3.2), Ry);
    fx_rot_z(uniform(r, -3.2, 3.2), Rz);
    fx_matmul(Rz, Ry, R);
    fx_matmul(R, Rx, R);
}

static pp_plus_contact_params random_params(rng *r)
{
    pp_plus_contact_params p;
    p.mu = uniform(r, 0.0, 1.0) < 0.15 ? 0.0 : uniform(r, 0.0, 1.0);
    p.e_min = uniform(r, 0.0, 1.0);
    p.v_capture = uniform(r, 0.0, 0.05);
    p.v_plastic = p.v_capture + uniform(r, 0.0, 0.5);
    return p;
}

static pp_plus_config random_config(rng *r)
{
    static const double thetas[4] = {0.01, 0.05, 0.25, 0.5};
    pp_plus_config c = pp_plus_config_default();
    c.theta_max = thetas[(int)uniform(r, 0.0, 3.999)];
    c.v_transition = uniform(r, 0.01, 0.2);
    return c;
}

/* Unit frame rows (t1, t2, n) for a unit normal n. */
static void frame_from_normal(const double n[3], double frame[9])
{
    double a[3] = {1, 0, 0};
    if (fabs(n[0]) > 0.6) a[0] = 0, a[1] = 1;
    double t1[3] = {a[1] * n[2] - a[2] * n[1], a[2] * n[0] - a[0] * n[2], a[0] * n[1] - a[1] * n[0]};
    const double l = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
    for (int i = 0; i < 3; ++i) t1[i] /= l;
    const double t2[3] = {n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2],
                          n[0] * t1[1] - n[1] * t1[0]};
    for (int i = 0; i < 3; ++i) {
        frame[i] = t1[i];
        frame[3 + i] = t2[i];
        frame[6 + i] = n[i];
    }
}

/* World corners of a brick (dims, R, c), sorted by height. */
static void sorted_corners(const double dims[3], const double R[9], const double c[3],
                           double out[8][3])
{
    for (int i = 0; i < 8; ++i) {
        const double b[3] = {(i & 1 ? 0.5 : -0.5) * dims[0], (i & 2 ? 0.5 : -0.5) * dims[1],
                             (i & 4 ? 0.5 : -0.5) * dims[2]};
        fx_matvec(R, b, out[i]);
        for (int j = 0; j < 3; ++j) out[i][j] += c[j];
    }
    for (int i = 1; i < 8; ++i)
        for (int j = i; j > 0 && out[j][2] < out[j - 1][2]; --j) {
            double t[3];
            memcpy(t, out[j], sizeof t);
            memcpy(out[j], out[j - 1], sizeof t);
            memcpy(out[j - 1], t, sizeof t);
        }
}

static int g_round_caps = 0;     /* runs stopped by the round cap (accepted, counted) */
static int g_fallback_runs = 0;  /* runs with an impending-slip Newton fallback */

static void run_and_check(const fx_scene *s, const pp_plus_config *cfg, const char *label)
{
    fx_run run;
    fx_solve(s, cfg, &run);
    fx_check_invariants(s, cfg, &run, 1, label);
    g_round_caps += run.status != PP_OK;
    g_fallback_runs += run.result.impending_fallbacks > 0;
    fx_run_free(&run);
}

/* One brick, random pose; the lowest 1-4 corners are proximal ground contacts (all
 * treated as touching, as a proximity tolerance would). */
START_TEST(test_random_brick_on_ground)
{
    rng r = {0x1234567u + 7919u * (uint64_t)_i};
    fx_scene s;
    fx_scene_init(&s);
    const double dims[3] = {uniform(&r, 0.1, 1.0), uniform(&r, 0.1, 1.0), uniform(&r, 0.1, 1.0)};
    double R[9];
    if (uniform(&r, 0, 1) < 0.3) {
        /* flat or nearly flat: redundant contacts */
        fx_rot_z(uniform(&r, -3.2, 3.2), R);
    } else {
        random_rotation(&r, R);
    }
    const double c[3] = {0, 0, 0};
    const double v[3] = {uniform(&r, -4, 4), uniform(&r, -4, 4), uniform(&r, -6, -0.05)};
    const double w[3] = {uniform(&r, -6, 6), uniform(&r, -6, 6), uniform(&r, -6, 6)};
    const int b = fx_add_brick(&s, uniform(&r, 0.2, 10.0), dims, R, c, v, w);
    double corners[8][3];
    sorted_corners(dims, R, c, corners);
    const int count = 1 + (int)uniform(&r, 0.0, 3.999);
    const pp_plus_contact_params p = random_params(&r);
    for (int k = 0; k < count; ++k) fx_add_ground_contact(&s, b, corners[k], p);
    fx_scene_finish(&s);
    const pp_plus_config cfg = random_config(&r);
    char label[64];
    snprintf(label, sizeof label, "random brick %d", _i);
    run_and_check(&s, &cfg, label);
}
END_TEST

/* Two stacked bricks: the lower on the ground at its four bottom corners, the upper on
 * the lower at the upper's four bottom corners (normal +z from lower to upper), both
 * slightly tilted; impacts propagate through the stack in rounds. */
START_TEST(test_random_two_brick_stack)
{
    rng r = {0xABCDEFu + 104729u * (uint64_t)_i};
    fx_scene s;
    fx_scene_init(&s);
    const double d1[3] = {uniform(&r, 0.3, 1.0), uniform(&r, 0.3, 1.0), uniform(&r, 0.1, 0.5)};
    const double d2[3] = {uniform(&r, 0.1, 0.3), uniform(&r, 0.1, 0.3), uniform(&r, 0.1, 0.5)};
    double R1[9], R2[9];
    fx_rot_z(uniform(&r, -3.2, 3.2), R1);
    fx_rot_z(uniform(&r, -3.2, 3.2), R2);
    const double c1[3] = {0, 0, 0.5 * d1[2]};
    const double c2[3] = {uniform(&r, -0.05, 0.05), uniform(&r, -0.05, 0.05), d1[2] + 0.5 * d2[2]};
    const double v1[3] = {uniform(&r, -2, 2), uniform(&r, -2, 2), uniform(&r, -3, 1)};
    const double w1[3] = {uniform(&r, -2, 2), uniform(&r, -2, 2), uniform(&r, -2, 2)};
    const double v2[3] = {uniform(&r, -2, 2), uniform(&r, -2, 2), uniform(&r, -5, 0)};
    const double w2[3] = {uniform(&r, -2, 2), uniform(&r, -2, 2), uniform(&r, -2, 2)};
    const int b1 = fx_add_brick(&s, uniform(&r, 0.5, 5.0), d1, R1, c1, v1, w1);
    const int b2 = fx_add_brick(&s, uniform(&r, 0.2, 5.0), d2, R2, c2, v2, w2);
    double k1[8][3], k2[8][3];
    sorted_corners(d1, R1, c1, k1);
    sorted_corners(d2, R2, c2, k2);
    const pp_plus_contact_params pg = random_params(&r), pb = random_params(&r);
    static const double up[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int k = 0; k < 4; ++k) fx_add_ground_contact(&s, b1, k1[k], pg);
    for (int k = 0; k < 4; ++k) fx_add_contact(&s, b1, b2, k2[k], up, pb);
    fx_scene_finish(&s);
    const pp_plus_config cfg = random_config(&r);
    char label[64];
    snprintf(label, sizeof label, "random stack %d", _i);
    run_and_check(&s, &cfg, label);
}
END_TEST

/* Three to five touching balls of random sizes on the ground, in a random cluster:
 * ball-ball contacts along the centre line and ball-ground contacts. */
START_TEST(test_random_ball_cluster)
{
    rng r = {0x5151u + 15485863u * (uint64_t)_i};
    fx_scene s;
    fx_scene_init(&s);
    const int nb = 3 + (int)uniform(&r, 0.0, 2.999);
    const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double rad[5], cen[5][3];
    for (int b = 0; b < nb; ++b) {
        rad[b] = uniform(&r, 0.1, 0.4);
        if (b == 0) {
            cen[0][0] = cen[0][1] = 0.0;
        } else {
            /* touch the previous ball, on the ground */
            const int a = b - 1;
            const double ang = uniform(&r, -3.2, 3.2);
            const double dz = rad[b] - rad[a], L = rad[a] + rad[b];
            const double dxy = sqrt(L * L - dz * dz);
            cen[b][0] = cen[a][0] + dxy * cos(ang);
            cen[b][1] = cen[a][1] + dxy * sin(ang);
        }
        cen[b][2] = rad[b];
        const double m = uniform(&r, 0.2, 3.0), Ib = 0.4 * m * rad[b] * rad[b];
        const double I[3] = {Ib, Ib, Ib};
        const double v[3] = {uniform(&r, -3, 3), uniform(&r, -3, 3), uniform(&r, -3, 0.5)};
        const double w[3] = {uniform(&r, -5, 5), uniform(&r, -5, 5), uniform(&r, -5, 5)};
        fx_add_body(&s, m, I, I3, cen[b], v, w);
    }
    const pp_plus_contact_params pg = random_params(&r), pb = random_params(&r);
    for (int b = 0; b < nb; ++b) {
        const double p[3] = {cen[b][0], cen[b][1], 0.0};
        fx_add_ground_contact(&s, b, p, pg);
    }
    for (int b = 1; b < nb; ++b) {
        const int a = b - 1;
        double n[3], p[3], frame[9];
        const double L = rad[a] + rad[b];
        for (int i = 0; i < 3; ++i) {
            n[i] = (cen[b][i] - cen[a][i]) / L;
            p[i] = cen[a][i] + rad[a] * n[i];
        }
        frame_from_normal(n, frame);
        fx_add_contact(&s, a, b, p, frame, pb);
    }
    fx_scene_finish(&s);
    const pp_plus_config cfg = random_config(&r);
    char label[64];
    snprintf(label, sizeof label, "random balls %d", _i);
    run_and_check(&s, &cfg, label);
}
END_TEST

/* The accepted exceptions stay rare. Runs in-process (CK_NOFORK) so the counters see
 * every case. */
START_TEST(test_exceptions_are_rare)
{
    fprintf(stderr, "random PLUS runs: %d round caps, %d with impending fallbacks, of %d\n",
            g_round_caps, g_fallback_runs, 3 * RANDOM_CASES);
    ck_assert_int_le(g_round_caps, 3 * RANDOM_CASES / 50);
    ck_assert_int_le(g_fallback_runs, 3 * RANDOM_CASES / 10);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plus_random");
    TCase *tc = tcase_create("invariants");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_random_brick_on_ground, 0, RANDOM_CASES);
    tcase_add_loop_test(tc, test_random_two_brick_stack, 0, RANDOM_CASES);
    tcase_add_loop_test(tc, test_random_ball_cluster, 0, RANDOM_CASES);
    tcase_add_test(tc, test_exceptions_are_rare);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_set_fork_status(runner, CK_NOFORK);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
