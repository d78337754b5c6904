/*
 * The speculative margin must hold a pair whose relative motion the step's impulses change:
 * a box lands on the ground while a second box falls GAP behind it at the same speed V, with
 * V h > GAP + eps. The lower box stops on the ground within the step and the upper one would
 * pass V h - GAP into it. Stage 2's margin eps_ab = eps + m_a + m_b (m the shape's own motion
 * bound, stage_broadphase.c) holds the pair near at the step's start although the two move
 * together (relative velocity 0), and the step ends with the upper box on the lower one.
 *
 * Tried and not kept (docs/performance.md, "The convex ball's landing"): the margin of the
 * pair's RELATIVE motion, h (|v_a - v_b| + h |a_a - a_b| + |w_a| r_a + |w_b| r_b), which
 * would leave this pair out at the step's start (its eps_ab = eps < GAP) in the hope that
 * the re-linearisation, rebuilding the island's constraints at the predicted pose on the same
 * candidate pairs, finds it there. It does not: at the predicted pose the boxes overlap by
 * V h - GAP + h^2 g = 3.4 cm, deeper than eps, and PEG builds no set for features that deep (the
 * step ended with 3.4e-4 m^3 of overlap, the whole pass) while the standard model's contacts
 * read the depth along the side faces the corners lie on (2.2e-4 m^3). With it this test
 * failed in all six cases: five ended the landing step overlapping, the sixth (standard,
 * offset and turning) with the boxes 0.4 mm apart.
 *
 * Asserted, both models, frictionless and mu = 0.5, the upper box straight above or offset
 * and turning: every step PP_OK with no unsolved island; at the landing step both pairs near
 * at the step's start and the step ending with the boxes touching; after every step no
 * overlap between the boxes or with the ground beyond 1e-12 m^3 (exact volumes,
 * pegplus/overlap.h, the pouring test's tolerance); no kinetic energy gained a step beyond
 * what gravity gave; and at the end both boxes at rest on the ground, one on the other.
 */
#include "pegplus/geometry.h"
#include "pegplus/overlap.h"
#include "pegplus/pegplus.h"
#include "it_common.h"
#include "it_energy.h"

#include <check.h>
#include <math.h>
#include <stdio.h>

#define H 0.01
#define G 9.81
#define V 6.0          /* m/s, both boxes: V h = 6 cm a step */
#define GAP 0.025      /* between the boxes, m: beyond eps = 1 cm, within V h */
#define SIDE 0.1       /* cube, m */
#define STEPS 60
#define OVERLAP_TOL 1e-12

typedef struct margin_case {
    pp_model model;
    double mu;
    double offset; /* the upper box's x offset, m */
    double spin;   /* its angular velocity about z, rad/s */
} margin_case;

static const margin_case CASES[] = {
    {PP_MODEL_PEG, 0.0, 0.0, 0.0},      {PP_MODEL_PEG, 0.5, 0.0, 0.0},
    {PP_MODEL_PEG, 0.5, 0.03, 2.0},     {PP_MODEL_STANDARD, 0.0, 0.0, 0.0},
    {PP_MODEL_STANDARD, 0.5, 0.0, 0.0}, {PP_MODEL_STANDARD, 0.5, 0.03, 2.0},
};

static void body_pose(dBodyID b, double x[3], double R[9])
{
    const dReal *p = dBodyGetPosition(b), *r = dBodyGetRotation(b);
    for (int i = 0; i < 3; ++i) {
        x[i] = p[i];
        for (int j = 0; j < 3; ++j) R[3 * i + j] = r[4 * i + j];
    }
}

START_TEST(test_box_behind_box)
{
    const margin_case *mc = &CASES[_i];
    const char *name = mc->model == PP_MODEL_PEG ? "PEG" : "standard";
    pp_set_log_hook(pp_log_discard, NULL);
    dInitODE2(0);
    dWorldID world = dWorldCreate();
    dSpaceID space = dHashSpaceCreate(0);
    dWorldSetGravity(world, 0, 0, -G);
    dCreatePlane(space, 0, 0, 1, 0);
    pp_config config = pp_config_default();
    config.model = mc->model;
    config.surface.mu = mc->mu;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(world, space, &config, &pw), PP_OK);
    ck_assert_double_lt(config.proximity_margin, GAP);
    ck_assert_double_gt(V * H, GAP + config.proximity_margin);

    const double lengths[3] = {SIDE, SIDE, SIDE};
    pp_polytope *cube = NULL;
    ck_assert_int_eq(pp_polytope_box(lengths, &cube), PP_OK);
    dBodyID body[2];
    /* the lower box 2 mm above the ground: it lands in the first step; the upper one GAP
     * above it */
    const double z[2] = {0.002 + 0.5 * SIDE, 0.002 + 1.5 * SIDE + GAP};
    for (int k = 0; k < 2; ++k) {
        body[k] = dBodyCreate(world);
        dMass m;
        dMassSetBoxTotal(&m, 1.0, SIDE, SIDE, SIDE);
        dBodySetMass(body[k], &m);
        dGeomSetBody(dCreateBox(space, SIDE, SIDE, SIDE), body[k]);
        dBodySetPosition(body[k], k ? mc->offset : 0.0, 0.0, z[k]);
        dBodySetLinearVel(body[k], 0.0, 0.0, -V);
    }
    dBodySetAngularVel(body[1], 0.0, 0.0, mc->spin);

    const double floor_n[3] = {0.0, 0.0, 1.0};
    double energy = pp_it_kinetic_energy(body[0]) + pp_it_kinetic_energy(body[1]);
    for (int step = 0; step < STEPS; ++step) {
        ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
        const pp_step_stats *s = pp_world_get_stats(pw);
        ck_assert_msg(s->islands_failed == 0, "%s mu %g: step %d left an island unsolved", name,
                      mc->mu, step);
        double x[2][3], R[2][9], v = -1.0, vf[2] = {-1.0, -1.0};
        for (int k = 0; k < 2; ++k) {
            body_pose(body[k], x[k], R[k]);
            ck_assert_int_eq(pp_overlap_halfspace_volume(cube, x[k], R[k], floor_n, 0.0, &vf[k]),
                             PP_OK);
        }
        ck_assert_int_eq(pp_overlap_volume(cube, x[0], R[0], cube, x[1], R[1], &v), PP_OK);
        ck_assert_msg(v <= OVERLAP_TOL && vf[0] <= OVERLAP_TOL && vf[1] <= OVERLAP_TOL,
                      "%s mu %g offset %g: after step %d the boxes overlap %g m^3, the ground "
                      "%g / %g m^3", name, mc->mu, mc->offset, step, v, vf[0], vf[1]);
        if (step == 0) {
            /* the landing: the ground pair and the falling pair near at the start, and the
             * step ended with the upper box on the lower one */
            ck_assert_msg(s->near_pairs == 2, "%s: %d pairs near at the landing step's start",
                          name, s->near_pairs);
            ck_assert_double_lt(x[1][2] - x[0][2], SIDE + 1e-6);
        }
        double e = pp_it_kinetic_energy(body[0]) + pp_it_kinetic_energy(body[1]);
        /* gravity's work over a step at most 2 m g |v_z| h + m g^2 h^2 a body */
        ck_assert_msg(e <= energy + 2.0 * (G * (V + G * H) * H) * (1.0 + 1e-9),
                      "%s: energy %g -> %g at step %d", name, energy, e, step);
        energy = e;
    }
    for (int k = 0; k < 2; ++k) {
        const dReal *vel = dBodyGetLinearVel(body[k]);
        ck_assert_double_lt(sqrt(vel[0] * vel[0] + vel[1] * vel[1] + vel[2] * vel[2]), 1e-3);
    }
    const dReal *xl = dBodyGetPosition(body[0]), *xu = dBodyGetPosition(body[1]);
    ck_assert_double_eq_tol(xl[2], 0.5 * SIDE, 1e-6);
    ck_assert_double_eq_tol(xu[2], 1.5 * SIDE, 1e-6);
    printf("%s mu %g offset %g spin %g: the upper box rests at z = %.9f on the lower at %.9f\n",
           name, mc->mu, mc->offset, mc->spin, xu[2], xl[2]);
    pp_world_destroy(pw);
    pp_polytope_destroy(cube);
    dSpaceDestroy(space);
    dWorldDestroy(world);
    dCloseODE();
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("falling_behind");
    TCase *tc = tcase_create("box_behind_box");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_box_behind_box, 0, (int)(sizeof CASES / sizeof CASES[0]));
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
