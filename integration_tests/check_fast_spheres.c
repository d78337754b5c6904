/*
 * Fast pairs with a sphere (impact_stage.c fast_pair_time, free_motion_through,
 * impulse_turn; docs/design.md "Fast pairs"): check_peg_fast_hulls' shot (the same draws by
 * seed: offset, shot along -x at 25 and 50 m/s, spin; no gravity, frictionless, h = 0.01,
 * clock-free) with one side a sphere:
 * a 2 cm hull or box (0.01 kg) shot at an 8 cm sphere (0.3 kg), and a 2 cm sphere shot at an
 * 8 cm hull or box; and the same with a capsule (radius a quarter of the size, length half of
 * it): a 2 cm capsule shot at an 8 cm hull or box, a 2 cm hull at an 8 cm capsule; under
 * PP_MODEL_PEG and PP_MODEL_STANDARD. The small body moves 25-50 cm a step, many times either
 * body's size. And two of the sphere scan's polytope pairs under PEG (PAIR_BOUND).
 *
 * Asserted after every step: PP_OK, no PEG or LCP fallback, no kinetic energy gained, the
 * pair not overlapping (pp_shape_distance, depth at most DEPTH_TOL), and the small body's
 * centre not inside the big shape anywhere on the chord from its step's start to its end,
 * both in the big body's frame (it did not pass through the big one: a single frictionless
 * collision deflects the path outward, so the chord of a step that met the big body stays
 * outside it); and that the pair did meet. Before the split was extended to these pairs every
 * one of these cases crossed the big body within one step under both models (a sphere's
 * closest-point set is met at the end of the step on the far side with no impulse: the
 * re-linearisation converged to the free motion), most with no change of velocity at all;
 * the spun cases (SPUN) crossed it or ended steps deep in it until the half-turn rule.
 */
#include "pegplus/geometry.h"
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"
#include "it_energy.h"
#include "it_fast_hulls.h"

#include <check.h>
#include <math.h>
#include <stdio.h>

#define DEPTH_TOL 1e-9  /* m after every step */
#define ENERGY_TOL 1e-9 /* relative: a frictionless inelastic contact only removes energy */

enum { HULL = 0, SPHERE = 1, BOX = 2, CAPSULE = 3 };
static const char *const KIND[] = {"hull", "sphere", "box", "capsule"};

typedef struct sphere_case {
    pp_model model;
    int big, small; /* HULL, SPHERE, BOX, CAPSULE */
    double speed;
    int seed;
} sphere_case;

#define PEG PP_MODEL_PEG
#define STD PP_MODEL_STANDARD
#define MODEL(c) ((c)->model == PP_MODEL_PEG ? "PEG" : "standard")
#define PAIRS(m, v, s)                                                                         \
    {m, SPHERE, HULL, v, s}, {m, SPHERE, BOX, v, s}, {m, HULL, SPHERE, v, s},                  \
        {m, BOX, SPHERE, v, s}, {m, HULL, CAPSULE, v, s}, {m, BOX, CAPSULE, v, s}
/* The spun cases (fast_pair_time's half turn, impulse_turn): the free motion ends inside the
 * big shape, and the impulse that stops the pair would turn the 2 cm body (or the capsule)
 * 3.2-6 rad in the step; before that rule each crossed the big body or ended a step 3.6e-9 m
 * to 36 mm deep in it (sphere <- hull 50 m/s seed 1: 36 mm, across). */
#define SPUN(m)                                                                                \
    {m, SPHERE, HULL, 50, 1}, {m, SPHERE, HULL, 50, 5}, {m, CAPSULE, HULL, 25, 1},             \
        {m, CAPSULE, BOX, 50, 5}, {m, HULL, CAPSULE, 25, 1}, {m, HULL, CAPSULE, 50, 2},        \
        {m, HULL, CAPSULE, 50, 5}
/* The corner cases (narrowphase.c vertex_contacts: a polytope's vertices and a capsule's end
 * spheres as contacts against a sphere or capsule): a 2 cm box, hull or capsule spun by the
 * impulse turns another corner (end) into the big sphere or capsule within the step, where the
 * pair's one closest-point contact does not see it; before that rule each ended a step
 * 1.1-24 mm deep (capsule <- box 25 m/s seed 6: 9.2 mm) or crossed the big body (sphere <-
 * capsule 50 m/s seed 5, capsule <- box 50 m/s seed 6). */
#define CORNER(m)                                                                              \
    {m, SPHERE, HULL, 25, 1}, {m, SPHERE, HULL, 25, 5}, {m, SPHERE, BOX, 25, 1},               \
        {m, SPHERE, BOX, 25, 5}, {m, SPHERE, BOX, 50, 5}, {m, SPHERE, CAPSULE, 25, 1},         \
        {m, SPHERE, CAPSULE, 25, 5}, {m, SPHERE, CAPSULE, 50, 5}, {m, BOX, CAPSULE, 50, 2},    \
        {m, CAPSULE, HULL, 50, 5}, {m, CAPSULE, BOX, 25, 1}, {m, CAPSULE, BOX, 25, 6},         \
        {m, CAPSULE, BOX, 50, 1}, {m, CAPSULE, BOX, 50, 6}
/* The last estimates (relinearize.c: the re-linearisation out of iterates judges its last
 * estimate with the island's smooth pairs at their signed distance): each ended a step
 * 1e-8-2.7 mm deep with the corner rule alone, the last estimate taken as reading 0; hull <-
 * sphere 50 m/s seed 6 crossed the hull when depths of round-off (3e-16 m) refused it. */
#define LAST(m)                                                                                \
    {m, CAPSULE, HULL, 25, 6}, {m, CAPSULE, HULL, 50, 6}, {m, BOX, CAPSULE, 25, 2},            \
        {m, BOX, CAPSULE, 25, 5}, {m, SPHERE, BOX, 25, 6}, {m, SPHERE, CAPSULE, 50, 6},        \
        {m, HULL, SPHERE, 50, 6}
/* The edge case (narrowphase.c edge_contacts: a box's edges against a capsule's segment): the
 * 2 cm box's edge or face on the 8 cm capsule's cylinder, whose one closest-point contact
 * moved from edge to edge between the re-linearisation's predicted poses; before that rule it
 * ended a step 1.0e-4 m deep under both models (no vertex inside). */
#define EDGE(m) {m, CAPSULE, BOX, 50, 4}
/* The pair bound's cases (relinearize.c pair_bound: a PEG pair's sets in each iterate's list
 * held to one build's cap; the sphere scan, docs/performance.md "A fast pair's constraints
 * within the bound, the box pairs kept"): box <- box 50 m/s seed 4, a 2 cm box sliding on the
 * 8 cm box, ended a step 7.7e-7 m deep with the list ranked by gap alone (the sets carrying the
 * load left out); hull <- box 25 m/s seed 1 gained 790 % in a step when a sub-step's kept
 * estimate, 4 mm deep, was applied instead of the sub-step being redone shorter. */
#define PAIR_BOUND {PEG, BOX, BOX, 50, 4}, {PEG, HULL, BOX, 25, 1}
static const sphere_case CASES[] = {
    PAIRS(PEG, 25, 3), PAIRS(PEG, 25, 4), PAIRS(PEG, 50, 3), PAIRS(PEG, 50, 4),
    PAIRS(STD, 25, 3), PAIRS(STD, 25, 4), PAIRS(STD, 50, 3), PAIRS(STD, 50, 4),
    {PEG, CAPSULE, HULL, 25, 4}, {PEG, CAPSULE, HULL, 50, 4},
    {STD, CAPSULE, HULL, 25, 4}, {STD, CAPSULE, HULL, 50, 4},
    SPUN(PEG), SPUN(STD), CORNER(PEG), CORNER(STD), LAST(PEG), LAST(STD),
    EDGE(PEG), EDGE(STD), PAIR_BOUND,
};

typedef struct body_shape {
    int kind;
    double size;        /* m: the hull's cube of points, the sphere's diameter, the box's side,
                           the capsule's radius x 4 and length x 2 (along its z) */
    pp_polytope *poly;  /* HULL: body frame */
} body_shape;

/* The shape at body b's pose (position x, row-major R), or at rest at the origin (b NULL). */
static pp_shape posed(const body_shape *d, dBodyID b)
{
    double x[3] = {0, 0, 0}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (b) pp_it_fast_body_pose(b, x, R);
    const double len[3] = {d->size, d->size, d->size};
    if (d->kind == SPHERE) return pp_shape_make_sphere(0.5 * d->size, x);
    if (d->kind == BOX) return pp_shape_make_box(len, x, R);
    if (d->kind == CAPSULE) return pp_shape_make_capsule(0.25 * d->size, 0.5 * d->size, x, R);
    return pp_shape_make_polytope(d->poly, x, R);
}

/* check_peg_fast_hulls' pair (it_fast_hulls.h, the same draws) with the chosen kinds. */
static void build(pp_world *pw, dWorldID world, dSpaceID space, const sphere_case *c,
                  body_shape shape[2], dBodyID body[2])
{
    uint64_t rng = pp_it_fast_seed(c->seed);
    const double size[2] = {0.08, 0.02}, mass[2] = {0.3, 0.01};
    const int kind[2] = {c->big, c->small};
    for (int k = 0; k < 2; ++k) {
        shape[k] = (body_shape){kind[k], size[k], NULL};
        double pts[45];
        for (int i = 0; i < 45; ++i) pts[i] = pp_it_fast_uniform(&rng, -0.5, 0.5) * size[k];
        dGeomID geom;
        if (kind[k] == SPHERE)
            geom = dCreateSphere(space, 0.5 * size[k]);
        else if (kind[k] == BOX)
            geom = dCreateBox(space, size[k], size[k], size[k]);
        else if (kind[k] == CAPSULE)
            geom = dCreateCapsule(space, 0.25 * size[k], 0.5 * size[k]);
        else
            geom = pp_it_fast_centred_hull(pw, space, pts, &shape[k].poly);
        body[k] = pp_it_fast_body(world, geom, mass[k], size[k]);
    }
    pp_it_fast_shoot(body[0], body[1], &rng, c->speed);
}

/* The small body's centre in the big body's frame. */
static void centre_in_big(dBodyID big, dBodyID small, double out[3])
{
    double xa[3], Ra[9];
    pp_it_fast_body_pose(big, xa, Ra);
    const dReal *x = dBodyGetPosition(small);
    for (int i = 0; i < 3; ++i)
        out[i] = Ra[i] * (x[0] - xa[0]) + Ra[3 + i] * (x[1] - xa[1]) + Ra[6 + i] * (x[2] - xa[2]);
}

/* The least signed distance from the chord p0-p1 (the big body's frame) to the big shape:
 * < 0 where the small body's centre went inside it (sampled every 1/400 of the chord, at
 * most 1.25 mm apart for the 50 cm of a 50 m/s step). */
static double chord_distance(const body_shape *big, const double p0[3], const double p1[3])
{
    const pp_shape at_rest = posed(big, NULL);
    double least = HUGE_VAL;
    for (int k = 0; k <= 400; ++k) {
        double x[3];
        for (int i = 0; i < 3; ++i) x[i] = p0[i] + (p1[i] - p0[i]) * k / 400.0;
        const pp_shape point = pp_shape_make_sphere(1e-9, x);
        pp_proximity pr;
        ck_assert_int_eq(pp_shape_distance(&at_rest, &point, &pr), PP_OK);
        least = fmin(least, pr.distance);
    }
    return least;
}

START_TEST(test_fast_spheres)
{
    const sphere_case *c = &CASES[_i];
    dWorldID world;
    dSpaceID space;
    pp_world *pw = pp_it_fast_world(c->model, &world, &space);
    body_shape shape[2];
    dBodyID body[2];
    build(pw, world, space, c, shape, body);

    double energy = pp_it_kinetic_energy(body[0]) + pp_it_kinetic_energy(body[1]);
    int met = 0, max_sub = 0;
    for (int step = 0; step < 30; ++step) {
        double p0[3], p1[3];
        centre_in_big(body[0], body[1], p0);
        ck_assert_int_eq(pp_world_step(pw, 0.01), PP_OK);
        const pp_step_stats *s = pp_world_get_stats(pw);
        ck_assert_msg(s->peg_fallback == 0 && s->lcp_fallback < 2,
                      "%s %s<-%s %g m/s seed %d step %d: PEG fallback %d, LCP fallback %d",
                      MODEL(c), KIND[c->big], KIND[c->small], c->speed, c->seed, step,
                      s->peg_fallback, s->lcp_fallback);
        met |= s->contacts > 0;
        if (s->substeps > max_sub) max_sub = s->substeps;
        centre_in_big(body[0], body[1], p1);
        const double chord = chord_distance(&shape[0], p0, p1);
        ck_assert_msg(chord >= 0.0,
                      "%s %s<-%s %g m/s seed %d step %d: passed through the big body (its "
                      "centre %.3g m inside it)", MODEL(c), KIND[c->big], KIND[c->small],
                      c->speed, c->seed, step, -chord);
        const pp_shape a = posed(&shape[0], body[0]), b = posed(&shape[1], body[1]);
        pp_proximity pr;
        ck_assert_int_eq(pp_shape_distance(&a, &b, &pr), PP_OK);
        ck_assert_msg(pr.distance >= -DEPTH_TOL, "%s %s<-%s %g m/s seed %d step %d: %.3g m deep",
                      MODEL(c), KIND[c->big], KIND[c->small], c->speed, c->seed, step,
                      -pr.distance);
        const double e = pp_it_kinetic_energy(body[0]) + pp_it_kinetic_energy(body[1]);
        ck_assert_msg(e <= energy * (1.0 + ENERGY_TOL),
                      "%s %s<-%s %g m/s seed %d step %d: energy %.17g -> %.17g", MODEL(c),
                      KIND[c->big], KIND[c->small], c->speed, c->seed, step, energy, e);
        energy = e;
    }
    ck_assert_msg(met, "%s<-%s %g m/s seed %d: the pair never came within the margin",
                  KIND[c->big], KIND[c->small], c->speed, c->seed);
    const dReal *v = dBodyGetLinearVel(body[1]);
    printf("fast spheres %s %s<-%s %g m/s seed %d: v (%.3g, %.3g, %.3g), most sub-steps %d\n",
           MODEL(c), KIND[c->big], KIND[c->small], c->speed, c->seed, v[0], v[1], v[2],
           max_sub);
    pp_world_destroy(pw);
    for (int k = 0; k < 2; ++k) pp_polytope_destroy(shape[k].poly);
    dSpaceDestroy(space);
    dWorldDestroy(world);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fast_spheres");
    TCase *tc = tcase_create("fast_spheres");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_fast_spheres, 0, (int)(sizeof CASES / sizeof CASES[0]));
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
