/*
 * The benchmark's scenes (examples/scenes/scenes.h, scripted.h) are what they say: body
 * counts beyond the old fixed list, reproducible builds, no body starting inside another,
 * separate islands that stay separate, one heap that is one contact island once settled,
 * and scripts that create their bodies at the documented steps.
 */
#define _DEFAULT_SOURCE /* M_PI */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "scripted.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CONTACTS = 16 };

static const double START_OVERLAP_TOL = 1e-12; /* m: bodies built exactly touching */

/* Every body's pose of two builds agrees bit for bit. */
static void assert_same_poses(const pp_scene *a, const pp_scene *b)
{
    ck_assert_int_eq(a->body_count, b->body_count);
    for (int i = 0; i < a->body_count; ++i) {
        ck_assert(!memcmp(dBodyGetPosition(a->bodies[i]), dBodyGetPosition(b->bodies[i]), 3 * sizeof(dReal)));
        ck_assert(!memcmp(dBodyGetQuaternion(a->bodies[i]), dBodyGetQuaternion(b->bodies[i]), 4 * sizeof(dReal)));
    }
}

static int find_root(int *parent, int i)
{
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

/* 1 if dCollide reports a contact between the geoms of bodies i and j with body i where it
 * is or moved by +-probe along z (bodies built exactly touching may report nothing). */
static int touching(const pp_scene *s, int i, int j, double probe)
{
    dContactGeom contacts[MAX_CONTACTS];
    const dReal *x = dBodyGetPosition(s->bodies[i]);
    const double x0[3] = {x[0], x[1], x[2]};
    int found = 0;
    for (int k = 0; k < 3 && !found; ++k) {
        double dz = k == 0 ? 0.0 : k == 1 ? -probe : probe;
        dBodySetPosition(s->bodies[i], x0[0], x0[1], x0[2] + dz);
        found = dCollide(s->geoms[i], s->geoms[j], MAX_CONTACTS, contacts, sizeof contacts[0]) > 0;
    }
    dBodySetPosition(s->bodies[i], x0[0], x0[1], x0[2]);
    return found;
}

/* Contact islands of the scene's bodies (touching within `probe`). Returns their number;
 * *largest (if not NULL) gets the body count of the largest. */
static int count_islands_largest(const pp_scene *s, double probe, int *largest)
{
    int n = s->body_count, islands = n;
    int *parent = malloc((size_t)n * sizeof *parent);
    ck_assert_ptr_nonnull(parent);
    for (int i = 0; i < n; ++i) parent[i] = i;
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) {
            if (!touching(s, i, j, probe)) continue;
            int a = find_root(parent, i), b = find_root(parent, j);
            if (a != b) {
                parent[a] = b;
                islands--;
            }
        }
    if (largest) {
        int *size = calloc((size_t)n, sizeof *size);
        ck_assert_ptr_nonnull(size);
        *largest = 0;
        for (int i = 0; i < n; ++i) {
            int r = find_root(parent, i);
            if (++size[r] > *largest) *largest = size[r];
        }
        free(size);
    }
    free(parent);
    return islands;
}

static int count_islands(const pp_scene *s, double probe)
{
    return count_islands_largest(s, probe, NULL);
}

START_TEST(test_islands_beyond_old_limit_and_apart)
{
    pp_scene s, again;
    pp_scene_islands(&s, 333, 0.0, 1);
    pp_scene_islands(&again, 333, 0.0, 1);
    ck_assert_int_eq(s.body_count, 999);
    assert_same_poses(&s, &again);
    pp_scene_destroy(&again);
    /* bodies of different stacks: AABBs at least 0.5 m apart horizontally */
    for (int i = 0; i < s.body_count; ++i) {
        dReal a[6];
        dGeomGetAABB(s.geoms[i], a);
        for (int j = 3 * (i / 3 + 1); j < s.body_count; ++j) {
            dReal b[6];
            dGeomGetAABB(s.geoms[j], b);
            double gx = fmax(b[0] - a[1], a[0] - b[1]), gy = fmax(b[2] - a[3], a[2] - b[3]);
            ck_assert_msg(fmax(gx, gy) >= 0.5, "stacks of bodies %d and %d are %g m apart", i, j,
                          fmax(gx, gy));
        }
    }
    ck_assert_double_le(pp_scene_max_penetration(&s), START_OVERLAP_TOL);
    pp_scene_destroy(&s);
}
END_TEST

/* islands N: N islands, each stack touching from the plane up (box j rests on box j - 1). */
START_TEST(test_islands_are_stacks)
{
    pp_scene s;
    pp_scene_islands(&s, 10, 0.0, 1);
    ck_assert_int_eq(count_islands(&s, 1e-6), 10);
    pp_scene_destroy(&s);
}
END_TEST

/* heap N: poured into its bin by its script under stock dWorldQuickStep for the benchmark's
 * settle time, the boxes form one contact island, but for a few lying alone in the bin's
 * corners (static walls do not join islands); the sizes are reproducible. */
START_TEST(test_heap_settles_into_one_pile)
{
    const int count = 20, settle = (int)lround(0.4 * count / 0.01) + 100;
    pp_scene s;
    pp_scene_heap(&s, count, 1, 0.01);
    pp_config config = pp_config_default(); /* the benchmark's settle: dWorldQuickStep */
    config.model = PP_MODEL_ODE;
    config.ode_stepper = PP_ODE_QUICK_STEP;
    config.friction_directions = 4;
    pp_world *world = NULL;
    ck_assert_int_eq(pp_world_create(s.world, s.space, &config, &world), PP_OK);
    for (int step = 0; step < settle; ++step) {
        s.before_step(&s, step);
        ck_assert_int_eq(pp_world_step(world, 0.01), PP_OK);
    }
    ck_assert_int_eq(s.body_count, count);
    int largest = 0, islands = count_islands_largest(&s, 1e-6, &largest);
    printf("heap%d after %d dWorldQuickStep steps: %d contact island(s), the largest of %d boxes\n",
           count, settle, islands, largest);
    ck_assert_int_ge(largest, (int)(0.8 * count));

    pp_scene again;
    pp_scene_heap(&again, count, 1, 0.01);
    for (int step = 0; step < settle; ++step) again.before_step(&again, step);
    ck_assert_int_eq(again.body_count, count);
    for (int i = 0; i < count; ++i) {
        dVector3 a, b;
        dGeomBoxGetLengths(s.geoms[i], a);
        dGeomBoxGetLengths(again.geoms[i], b);
        ck_assert(!memcmp(a, b, 3 * sizeof a[0]));
    }
    pp_scene_destroy(&again);
    pp_world_destroy(world);
    pp_scene_destroy(&s);
}
END_TEST

START_TEST(test_crash_fires_at_half_a_second)
{
    const double h = 0.05;
    pp_scene s;
    pp_scene_crash(&s, h);
    ck_assert_int_eq(s.body_count, 75);
    ck_assert_double_le(pp_scene_max_penetration(&s), START_OVERLAP_TOL);
    ck_assert(s.before_step != NULL);
    for (int step = 0; step < 10; ++step) s.before_step(&s, step);
    ck_assert_int_eq(s.body_count, 75);
    s.before_step(&s, 10);
    ck_assert_int_eq(s.body_count, 76);
    ck_assert_double_eq(dBodyGetLinearVel(s.bodies[75])[0], 20.0);
    for (int step = 11; step < 300; ++step) s.before_step(&s, step);
    ck_assert_int_eq(s.body_count, 76);
    pp_scene_destroy(&s);
}
END_TEST

/* A scripted scene with its pegplus world (PP_MODEL_ODE: nothing is stepped here). */
static pp_world *attach_world(pp_scene *s)
{
    pp_config config = pp_config_default();
    config.model = PP_MODEL_ODE;
    pp_world *world = NULL;
    ck_assert_int_eq(pp_world_create(s->world, s->space, &config, &world), PP_OK);
    s->pegplus = world;
    return world;
}

START_TEST(test_boxstack_drop_schedule)
{
    const double h = 0.02;
    pp_scene s;
    ck_assert_int_eq(pp_scene_boxstack(&s, 1, h), PP_OK);
    pp_world *world = attach_world(&s);
    int classes[dGeomNumClasses] = {0};
    for (int step = 0; step < 1500; ++step) {
        int before = s.body_count;
        s.before_step(&s, step);
        /* one body every 0.6 s = 30 steps, 48 of them */
        int due = step % 30 == 0 && step / 30 < 48;
        ck_assert_int_eq(s.body_count, before + due);
    }
    ck_assert_int_eq(s.body_count, 48);
    ck_assert_int_eq(pp_scene_script_failures(&s), 0);
    for (int i = 0; i < s.body_count; ++i) classes[dGeomGetClass(s.geoms[i])]++;
    printf("boxstack: %d boxes, %d spheres, %d capsules, %d hulls\n", classes[dBoxClass],
           classes[dSphereClass], classes[dCapsuleClass], classes[dConvexClass]);
    ck_assert_int_gt(classes[dBoxClass], 0);
    ck_assert_int_gt(classes[dSphereClass], 0);
    ck_assert_int_gt(classes[dCapsuleClass], 0);
    ck_assert_int_gt(classes[dConvexClass], 0);
    pp_world_destroy(world);
    pp_scene_destroy(&s);
}
END_TEST

/* convex: 90 cells, all before step 0, apart from each other, filling most of the ball. */
START_TEST(test_convex_ball_cells)
{
    pp_scene s;
    ck_assert_int_eq(pp_scene_convex_ball(&s, 1), PP_OK);
    pp_world *world = attach_world(&s);
    s.before_step(&s, 0);
    ck_assert_int_eq(s.body_count, 90);
    ck_assert_int_eq(pp_scene_script_failures(&s), 0);
    double mass = 0.0;
    for (int i = 0; i < s.body_count; ++i) {
        dMass m;
        dBodyGetMass(s.bodies[i], &m);
        mass += m.mass;
        const dReal *x = dBodyGetPosition(s.bodies[i]);
        ck_assert_double_lt(sqrt(x[0] * x[0] + x[1] * x[1] + (x[2] - 4.2) * (x[2] - 4.2)), 0.5);
    }
    /* the 200-point hull of the sphere holds ~97 % of the ball; the 4 mm joints ~2 % more */
    const double ball = 1000.0 * 4.0 / 3.0 * M_PI * 0.125;
    printf("convex: 90 cells, %.1f kg (the solid ball: %.1f kg)\n", mass, ball);
    ck_assert_double_gt(mass, 0.9 * ball);
    ck_assert_double_lt(mass, ball);
    ck_assert_int_eq(count_islands(&s, 0.0), 90);
    pp_world_destroy(world);
    pp_scene_destroy(&s);
}
END_TEST

START_TEST(test_hulls_closing)
{
    const double speeds[] = {25.0, 50.0};
    pp_scene s;
    ck_assert_int_eq(pp_scene_hulls(&s, speeds[_i], 1), PP_OK);
    pp_world *world = attach_world(&s);
    s.before_step(&s, 0);
    ck_assert_int_eq(s.body_count, 2);
    double closing = dBodyGetLinearVel(s.bodies[0])[0] - dBodyGetLinearVel(s.bodies[1])[0];
    ck_assert_double_eq_tol(closing, speeds[_i], 1e-12);
    dReal a[6], b[6];
    dGeomGetAABB(s.geoms[0], a);
    dGeomGetAABB(s.geoms[1], b);
    ck_assert_double_lt(a[1] - a[0], 0.081);
    ck_assert_double_lt(b[1] - b[0], 0.021);
    ck_assert_double_gt(b[0] - a[1], 0.4);
    pp_world_destroy(world);
    pp_scene_destroy(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scenes");
    TCase *tc = tcase_create("builders");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_islands_beyond_old_limit_and_apart);
    tcase_add_test(tc, test_islands_are_stacks);
    tcase_add_test(tc, test_heap_settles_into_one_pile);
    tcase_add_test(tc, test_crash_fires_at_half_a_second);
    tcase_add_test(tc, test_boxstack_drop_schedule);
    tcase_add_test(tc, test_convex_ball_cells);
    tcase_add_loop_test(tc, test_hulls_closing, 0, 2);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
