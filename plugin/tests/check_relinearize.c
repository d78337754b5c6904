/*
 * The damping of ST96 §3.6's fixed-point iteration (relinearize.c, pp_relinearize_damping),
 * driven the way relinearize_step drives it: nu^ <- nu^ + alpha (F(nu^) - nu^), residual
 * r = max |F(nu^) - nu^|, converged when r <= 1e-11 (1 + |nu^|). F here is an affine map
 * F(x) = c + L (x - c) of known Lipschitz constant L, for which a damped step scales the
 * residual by exactly 1 - alpha (1 - L).
 *
 * Regression: the doubling test was r_new < 3/4 r, which at alpha <= 1/4 not even a constant
 * map (L = 0) passes, so an iteration damped that far stayed at rate 1 - alpha. In PEG pouring
 * (seed 3, h = 0.01, step 433) the LCP at one iterate jumped to another solution, alpha fell to
 * 1/4, the map was then nearly constant (residual ratio 0.7508 a step) and the 20 iterations
 * ran out: 3.8e-11 m^3 of overlap (check_peg_pouring).
 */
#include "../src/world_internal.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

enum { N = 6 };

typedef struct run {
    int iterations;      /* solves until converged, or `max` + 1 */
    double alpha;        /* step length when it stopped */
    int doubled, halved; /* how often the step length changed */
} run;

/* The iteration of relinearize_step on F(x) = c + L (x - c), from x = 0 with step length
 * alpha0 (as after the halvings that damped it there), at most `max` solves. */
static run iterate(double L, double alpha0, int max)
{
    const double c[N] = {1.0, -0.5, 0.25, 3.0, -2.0, 0.125};
    double x[N] = {0}, f[N];
    double alpha = alpha0, last = HUGE_VAL;
    int grew = 0;
    run out = {max + 1, alpha0, 0, 0};
    for (int it = 0; it < max; ++it) {
        double r = 0.0;
        int converged = 1;
        for (int j = 0; j < N; ++j) {
            f[j] = c[j] + L * (x[j] - c[j]);
            double d = fabs(f[j] - x[j]);
            if (d > r) r = d;
            if (d > 1e-11 * (1.0 + fabs(x[j]))) converged = 0;
        }
        if (converged) {
            out.iterations = it + 1;
            break;
        }
        /* the first step takes alpha0 as it is: an iteration already damped to alpha0 */
        double next = it == 0 ? alpha : pp_relinearize_damping(alpha, r, last, &grew);
        out.doubled += next > alpha;
        out.halved += next < alpha;
        alpha = next;
        last = r;
        for (int j = 0; j < N; ++j) x[j] += alpha * (f[j] - x[j]);
    }
    out.alpha = alpha;
    return out;
}

/* A map contracting by L < 1/2 gets the full step back, one doubling per iteration, from any
 * damping: log2(1 / alpha0) doublings, no halving. */
START_TEST(test_contraction_restores_full_step)
{
    const double Ls[] = {0.0, 3e-3, 0.25, 0.45};
    const double alphas[] = {0.5, 0.25, 0.125, 0.0625};
    for (int i = 0; i < 4; ++i)
        for (int a = 0; a < 4; ++a) {
            run r = iterate(Ls[i], alphas[a], 200);
            ck_assert_msg(r.alpha == 1.0 && r.doubled == a + 1 && r.halved == 0,
                          "L = %g, alpha0 = %g: alpha %g after %d doublings, %d halvings",
                          Ls[i], alphas[a], r.alpha, r.doubled, r.halved);
        }
}
END_TEST

/* The case of the pouring step: a nearly constant map (L = 3e-3) after the step was damped to
 * 1/4 or 1/16 converges within the default 20 iterations (pp_config's
 * relinearize_iterations); at rate 1 - alpha it would need log(1e-11) / log(3/4) = 88 and
 * log(1e-11) / log(15/16) = 392. */
START_TEST(test_damped_nearly_constant_map_converges_in_default_iterations)
{
    int max = pp_config_default().relinearize_iterations;
    ck_assert_int_eq(max, 20);
    const double alphas[] = {0.25, 0.0625};
    for (int a = 0; a < 2; ++a) {
        run r = iterate(3e-3, alphas[a], max);
        ck_assert_msg(r.iterations <= max, "alpha0 = %g: not converged in %d iterations",
                      alphas[a], max);
    }
}
END_TEST

/* A map contracting weakly (L >= 1/2) keeps its damping (no doubling, and no halving while
 * the residual shrinks); one that does not contract (F(x) = c - (x - c), the period-2 cycle
 * of a full step) is halved, and at alpha = 1/2 lands on the fixed point. */
START_TEST(test_weak_contraction_keeps_damping_cycle_is_damped)
{
    const double Ls[] = {0.55, 0.9};
    for (int i = 0; i < 2; ++i) {
        run r = iterate(Ls[i], 0.25, 30);
        ck_assert_msg(r.doubled == 0 && r.halved == 0 && r.alpha == 0.25,
                      "L = %g: %d doublings, %d halvings", Ls[i], r.doubled, r.halved);
    }
    run r = iterate(-1.0, 1.0, 20);
    ck_assert_int_eq(r.halved, 1);
    ck_assert_double_eq(r.alpha, 0.5);
    ck_assert_int_le(r.iterations, 4);
}
END_TEST

/* Two LCP solutions taken in turn (PEG pouring seed 9, h = 0.01, step 410 of a trajectory the
 * energy rule had changed): the residuals the iteration measured, fed to the rule. The plain
 * rule doubled after each shrink and halved after each growth, alpha 1, 1/2, 1, 1/2 ... for
 * all 20 iterations; no step length may return right after it failed, so alpha falls to 1/16
 * and stays. */
START_TEST(test_alternating_residual_is_damped_down)
{
    const double measured[20] = {2.81, 2.41, 2.45, 1.25, 2.47, 1.26, 2.46, 1.26, 2.47, 1.26,
                                 2.46, 1.26, 2.47, 1.26, 2.46, 1.26, 2.47, 1.26, 2.46, 1.26};
    double alpha = 1.0, last = HUGE_VAL;
    int grew = 0, doubled = 0;
    for (int it = 0; it < 20; ++it) {
        double next = it == 0 ? alpha : pp_relinearize_damping(alpha, measured[it], last, &grew);
        doubled += next > alpha;
        alpha = next;
        last = measured[it];
    }
    ck_assert_int_eq(doubled, 0);
    ck_assert_double_eq(alpha, 1.0 / 16.0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("relinearize");
    TCase *tc = tcase_create("damping");
    tcase_add_test(tc, test_contraction_restores_full_step);
    tcase_add_test(tc, test_damped_nearly_constant_map_converges_in_default_iterations);
    tcase_add_test(tc, test_weak_contraction_keeps_damping_cycle_is_damped);
    tcase_add_test(tc, test_alternating_residual_is_damped_down);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
