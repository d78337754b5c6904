/*
 * Sweep and prune (pp_broadphase_pairs) against the brute-force O(n^2) pair list on random
 * boxes: clustered and spread scenes, static flags, unbounded plane boxes, touching bounds,
 * and reuse of one broadphase across calls of different sizes.
 */
#include "pegplus/geometry.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng_state;

static double uniform(double lo, double hi)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * ((double)(rng_state >> 11) / 9007199254740992.0);
}

static int overlap(const pp_aabb *x, const pp_aabb *y)
{
    for (int k = 0; k < 3; ++k)
        if (x->min[k] > y->max[k] || y->min[k] > x->max[k]) return 0;
    return 1;
}

typedef struct scene_case {
    const char *name;
    int count;
    double extent, size;  /* centres in [-extent, extent]^3, half sizes up to size */
    int static_every;     /* every k-th box static (0: none) */
    int planes;           /* unbounded static boxes (half-spaces) */
} scene_case;

static const scene_case CASES[] = {
    {"clustered", 300, 1.0, 0.3, 0, 0},
    {"spread", 2000, 20.0, 0.5, 0, 0},
    {"static mix", 500, 3.0, 0.4, 3, 0},
    {"with planes", 400, 4.0, 0.4, 5, 2},
    {"flat on z", 600, 10.0, 0.6, 0, 0},
    {"single", 1, 1.0, 0.5, 0, 0},
};

START_TEST(matches_brute_force)
{
    const scene_case *c = &CASES[_i];
    rng_state = 31 + (unsigned)_i;
    pp_aabb *boxes = malloc(sizeof *boxes * (size_t)c->count);
    unsigned char *is_static = calloc((size_t)c->count, 1);
    ck_assert_ptr_nonnull(boxes);
    for (int i = 0; i < c->count; ++i) {
        for (int k = 0; k < 3; ++k) {
            double centre = uniform(-c->extent, c->extent), half = uniform(0.0, c->size);
            if (_i == 4 && k == 2) centre = 0.0; /* everything on one sweep-irrelevant plane */
            boxes[i].min[k] = centre - half;
            boxes[i].max[k] = centre + half;
        }
        if (c->static_every && i % c->static_every == 0) is_static[i] = 1;
    }
    for (int p = 0; p < c->planes; ++p) { /* half-space z <= 0 and x >= 1 */
        int i = p * 7;
        for (int k = 0; k < 3; ++k) boxes[i].min[k] = -HUGE_VAL, boxes[i].max[k] = HUGE_VAL;
        if (p == 0) boxes[i].max[2] = 0.0;
        else boxes[i].min[0] = 1.0;
        is_static[i] = 1;
    }
    if (c->count > 3) { /* exactly touching bounds count as overlapping */
        boxes[1] = (pp_aabb){{0, 0, 0}, {1, 1, 1}};
        boxes[2] = (pp_aabb){{1, 1, 1}, {2, 2, 2}};
        is_static[1] = is_static[2] = 0;
    }

    int brute = 0;
    for (int i = 0; i < c->count; ++i)
        for (int j = i + 1; j < c->count; ++j)
            if (!(is_static[i] && is_static[j]) && overlap(&boxes[i], &boxes[j])) ++brute;

    pp_broadphase *bp = NULL;
    ck_assert_int_eq(pp_broadphase_create(&bp), PP_OK);
    for (int repeat = 0; repeat < 2; ++repeat) { /* a smaller call in between reuses memory */
        const pp_pair *pairs = NULL;
        int count = -1;
        const unsigned char *flags = c->static_every || c->planes ? is_static : NULL;
        ck_assert_int_eq(pp_broadphase_pairs(bp, boxes, flags, c->count, &pairs, &count), PP_OK);
        ck_assert_int_eq(count, brute);
        for (int p = 0; p < count; ++p) {
            ck_assert_int_lt(pairs[p].a, pairs[p].b);
            if (p > 0)
                ck_assert(pairs[p - 1].a < pairs[p].a ||
                          (pairs[p - 1].a == pairs[p].a && pairs[p - 1].b < pairs[p].b));
            ck_assert(overlap(&boxes[pairs[p].a], &boxes[pairs[p].b]));
            ck_assert(!(is_static[pairs[p].a] && is_static[pairs[p].b]));
        }
        if (c->count > 3) {
            int found = 0;
            for (int p = 0; p < count; ++p) found |= pairs[p].a == 1 && pairs[p].b == 2;
            ck_assert(found);
        }
        ck_assert_int_eq(pp_broadphase_pairs(bp, boxes, NULL, c->count / 3, &pairs, &count), PP_OK);
    }
    pp_broadphase_destroy(bp);
    free(boxes);
    free(is_static);
}
END_TEST

START_TEST(bad_input)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_broadphase *bp = NULL;
    ck_assert_int_eq(pp_broadphase_create(&bp), PP_OK);
    pp_aabb boxes[2] = {{{0, 0, 0}, {1, 1, 1}}, {{0, 0, 0}, {1, NAN, 1}}};
    const pp_pair *pairs;
    int count;
    ck_assert_int_eq(pp_broadphase_pairs(bp, boxes, NULL, 2, &pairs, &count), PP_ERR_INVALID_ARGUMENT);
    boxes[1].max[1] = -1.0; /* min > max */
    ck_assert_int_eq(pp_broadphase_pairs(bp, boxes, NULL, 2, &pairs, &count), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_broadphase_pairs(bp, boxes, NULL, -1, &pairs, &count), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_broadphase_pairs(NULL, boxes, NULL, 2, &pairs, &count), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_broadphase_pairs(bp, NULL, NULL, 0, &pairs, &count), PP_OK);
    ck_assert_int_eq(count, 0);
    pp_broadphase_destroy(bp);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

/* Shape AABBs feed the broadphase: a sphere resting on a plane is a candidate pair once the
 * margin covers the gap. */
START_TEST(shape_boxes_with_margin)
{
    pp_shape shapes[2] = {pp_shape_make_plane((double[3]){0, 0, 1}, 0.0),
                          pp_shape_make_sphere(0.5, (double[3]){0, 0, 0.52})};
    unsigned char is_static[2] = {1, 0};
    pp_aabb boxes[2];
    pp_broadphase *bp = NULL;
    ck_assert_int_eq(pp_broadphase_create(&bp), PP_OK);
    const pp_pair *pairs;
    int count;
    for (int i = 0; i < 2; ++i) pp_shape_aabb(&shapes[i], 0.005, &boxes[i]);
    ck_assert_int_eq(pp_broadphase_pairs(bp, boxes, is_static, 2, &pairs, &count), PP_OK);
    ck_assert_int_eq(count, 0);
    for (int i = 0; i < 2; ++i) pp_shape_aabb(&shapes[i], 0.011, &boxes[i]);
    ck_assert_int_eq(pp_broadphase_pairs(bp, boxes, is_static, 2, &pairs, &count), PP_OK);
    ck_assert_int_eq(count, 1);
    pp_broadphase_destroy(bp);
}
END_TEST

static Suite *broadphase_suite(void)
{
    Suite *s = suite_create("broadphase");
    TCase *tc = tcase_create("sweep_and_prune");
    tcase_add_loop_test(tc, matches_brute_force, 0, (int)(sizeof CASES / sizeof CASES[0]));
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, shape_boxes_with_margin);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(broadphase_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
