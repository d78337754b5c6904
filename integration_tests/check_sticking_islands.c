/*
 * The sticking solve's start is the island's own (plugin/src/warm_start.c "The answer"): a
 * tower of eight boxes, large enough with the sticking threshold lowered
 * (pp_peg_sticking_min_n) for its island to take the interior-point sticking solve, follows
 * the same bits alone in its world and beside two identical towers stepped by two threads
 * (the same island sizes and patterns: a start kept in a worker's workspace by size, or one
 * taken from another island's answer, would change its answers within the acceptance).
 * Bit-for-bit comparisons: positions, quaternions and velocities compared with memcmp.
 */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#define H 0.01
#define BOXES 8

/* contact/src/peg_lcp_internal.h: islands by columns from this many unknowns try the sticking
 * solve (a test may lower it; returns the previous value) */
int pp_peg_sticking_min_n(int n);

static void setup(void)
{
    pp_scenes_init_ode();
    pp_set_log_hook(pp_log_discard, NULL);
}

typedef struct world_set {
    dWorldID world;
    dSpaceID space;
    dBodyID bodies[3 * BOXES];
    int count;
} world_set;

/* Eight boxes, each a little smaller, turned and offset from the one below, dropped 1 cm
 * apart, centred at (x, 0). */
static void add_tower(world_set *w, double x)
{
    double z = 0.0;
    for (int k = 0; k < BOXES; ++k) {
        const double lengths[3] = {1.0 - 0.05 * k, 0.8 - 0.04 * k, 0.25};
        dBodyID b = dBodyCreate(w->world);
        dMass m;
        dMassSetBoxTotal(&m, 1.0, lengths[0], lengths[1], lengths[2]);
        dBodySetMass(b, &m);
        dBodySetPosition(b, x + 0.02 * (k % 3), 0.015 * (k % 2), z + 0.5 * lengths[2] + 0.01);
        dMatrix3 R;
        dRFromAxisAndAngle(R, 0, 0, 1, 0.05 * k);
        dBodySetRotation(b, R);
        dGeomID g = dCreateBox(w->space, lengths[0], lengths[1], lengths[2]);
        dGeomSetBody(g, b);
        w->bodies[w->count++] = b;
        z += lengths[2] + 0.01;
    }
}

static void make_world(world_set *w)
{
    memset(w, 0, sizeof *w);
    w->world = dWorldCreate();
    w->space = dHashSpaceCreate(0);
    dWorldSetGravity(w->world, 0, 0, -9.81);
    dCreatePlane(w->space, 0, 0, 1, 0);
}

static int same_state(dBodyID a, dBodyID b)
{
    return !memcmp(dBodyGetPosition(a), dBodyGetPosition(b), 3 * sizeof(dReal)) &&
           !memcmp(dBodyGetQuaternion(a), dBodyGetQuaternion(b), 4 * sizeof(dReal)) &&
           !memcmp(dBodyGetLinearVel(a), dBodyGetLinearVel(b), 3 * sizeof(dReal)) &&
           !memcmp(dBodyGetAngularVel(a), dBodyGetAngularVel(b), 3 * sizeof(dReal));
}

START_TEST(test_tower_alone_and_beside_others)
{
    enum { STEPS = 60 };
    const int before = pp_peg_sticking_min_n(161);
    world_set alone, crowd;
    make_world(&alone);
    make_world(&crowd);
    add_tower(&alone, 0.0);
    for (int i = 0; i < 3; ++i) add_tower(&crowd, 4.0 * i);
    pp_config c = pp_config_default();
    c.model = PP_MODEL_STANDARD;
    c.friction_directions = 4;
    pp_world *pa = NULL, *pc = NULL;
    ck_assert_int_eq(pp_world_create(alone.world, alone.space, &c, &pa), PP_OK);
    c.threads = 2;
    ck_assert_int_eq(pp_world_create(crowd.world, crowd.space, &c, &pc), PP_OK);
    int largest = 0;
    for (int step = 0; step < STEPS; ++step) {
        ck_assert_int_eq(pp_world_step(pa, H), PP_OK);
        ck_assert_int_eq(pp_world_step(pc, H), PP_OK);
        const pp_step_stats *t = pp_world_get_stats(pa);
        if (t->lcp_largest > largest) largest = t->lcp_largest;
        for (int b = 0; b < BOXES; ++b)
            ck_assert_msg(same_state(alone.bodies[b], crowd.bodies[b]),
                          "body %d of the tower differs at step %d beside two others", b, step);
    }
    pp_peg_sticking_min_n(before);
    ck_assert_int_ge(largest, 161); /* the island is one the sticking solve takes */
    printf("check_sticking_islands: a tower of %d boxes (LCP up to %d unknowns) alone and beside "
           "two others, 2 threads: identical for %d steps\n", BOXES, largest, STEPS);
    pp_world_destroy(pa);
    pp_world_destroy(pc);
    dSpaceDestroy(alone.space);
    dWorldDestroy(alone.world);
    dSpaceDestroy(crowd.space);
    dWorldDestroy(crowd.world);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sticking_islands");
    TCase *tc = tcase_create("sticking_islands");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_tower_alone_and_beside_others);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pp_it_run(suite());
}
