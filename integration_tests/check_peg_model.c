/*
 * The PEG contact model (Williams, Lu, Trinkle 2016) in the time stepper, through ODE, against
 * what physics demands (issue 4, docs/references.md "Standard-model traps"):
 *  - two boxes meeting corner to corner (the paper's vertex–vertex case, figs 5-6): the
 *    standard model's contacts pop the falling box (it gains energy in one step) or keep it
 *    stuck on the corner; PEG's I and X sets let it slide off the corner with no energy
 *    gained and no overlap;
 *  - a vertex falling past a convex corner (fig 2): PEG leaves it in exact free fall;
 *  - a box resting on a box, sliding off an edge, tipping over an edge: no overlap, no
 *    spurious velocity, no energy gained.
 * Overlap is measured by ODE's own dCollide (an independent code path). Energy is the total
 * mechanical energy E = T + m g z; a frictionless or inelastic contact may only lower it, and
 * ODE's semi-implicit Euler lowers it by m g^2 h^2 / 2 per step of free flight.
 *
 * PEG runs with the Stewart–Trinkle §3.6 re-linearisation (10 iterations): the gap linearised
 * at the start of a step misses the end-of-step gap of a rotating body by ~h^2 |w|^2 r / 2
 * (1.5 mm for the corner-to-corner box), for any contact model; the fixed point removes it.
 */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define G 9.81
#define H 0.01
#define OVERLAP_TOL 1e-9   /* m, at the end of every step */
/* J per kg: no step may raise E by more. ODE's semi-implicit Euler is symplectic, so E itself
 * is not conserved but oscillates by O(h^2) per step: a free fall loses exactly g^2 h^2 / 2 a
 * step, a body pivoting on an edge gains ~1e-5 J a step at h = 0.01 (measured, both models). */
#define ENERGY_TOL (0.5 * G * G * H * H)
#define POP_ENERGY 0.01    /* J: a gain 20x the integrator's per-step error is a pop */
#define REST_SPEED 1e-6    /* references.md: at rest, max |v| < 1e-6 m/s */
#define RELINEARIZE 10

static void setup(void)
{
    pp_scenes_init_ode();
    pp_set_log_hook(pp_log_discard, NULL);
}

static pp_world *make_world(const pp_scene *s, pp_model model, double mu)
{
    pp_config c = pp_config_default();
    c.model = model;
    c.surface.mu = mu;
    c.relinearize_iterations = RELINEARIZE;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(s->world, s->space, &c, &pw), PP_OK);
    return pw;
}

static void empty_scene(pp_scene *s)
{
    pp_scenes_init_ode();
    memset(s, 0, sizeof *s);
    s->world = dWorldCreate();
    s->space = dHashSpaceCreate(0);
    dWorldSetGravity(s->world, 0, 0, -G);
}

/* A static 2 x 2 x 1 block whose top face is z = 0 and whose edge along y is at x = 0. */
static void block_scene(pp_scene *s)
{
    empty_scene(s);
    dGeomID block = dCreateBox(s->space, 2, 2, 1);
    dGeomSetPosition(block, -1, 0, -0.5);
}

static double energy(const pp_scene *s)
{
    double e = pp_scene_kinetic_energy(s);
    for (int i = 0; i < s->body_count; ++i) {
        dMass m;
        dBodyGetMass(s->bodies[i], &m);
        e += m.mass * G * dBodyGetPosition(s->bodies[i])[2];
    }
    return e;
}

static double speed(dBodyID b)
{
    const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b);
    return fmax(sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]),
                sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]));
}

/* A rotation taking the body diagonal (1,1,1)/sqrt(3) to -z (down) or +z, then `spin` about z:
 * the cube stands on a corner. */
static void corner_rotation(dQuaternion q, int down, double spin)
{
    const double a[3] = {1, 1, 1};
    double z = down ? -1.0 : 1.0;
    double axis[3] = {a[1] * z, -a[0] * z, 0.0}; /* a x (0,0,z) */
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1]);
    dQuaternion tilt, turn;
    dQFromAxisAndAngle(tilt, axis[0] / n, axis[1] / n, 0.0, acos(z / sqrt(3.0)));
    dQFromAxisAndAngle(turn, 0, 0, 1, spin);
    dQMultiply0(q, turn, tilt);
}

typedef struct run_result {
    double max_gain;        /* largest one-step rise of E, J */
    double max_overlap;     /* deepest dCollide overlap at the end of a step, m */
    int steps_with_ix;      /* steps whose PEG constraints had I or X sets */
    int fallbacks;          /* PEG LCP not solved: standard model for that step */
} run_result;

static run_result run(pp_scene *s, pp_world *pw, int steps)
{
    run_result r = {0.0, 0.0, 0, 0};
    double e = energy(s);
    for (int i = 0; i < steps; ++i) {
        ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
        double now = energy(s);
        if (now - e > r.max_gain) r.max_gain = now - e;
        e = now;
        double overlap = pp_scene_max_penetration(s);
        if (overlap > r.max_overlap) r.max_overlap = overlap;
        const pp_step_stats *st = pp_world_get_stats(pw);
        r.steps_with_ix += st->peg_i_sets + st->peg_x_sets > 0;
        r.fallbacks += st->peg_fallback;
    }
    return r;
}

/* ---- Standard-model traps -------------------------------------------------------------------- */

/* _i: (offset x, offset y, spin about z) of the falling cube, which stands on a corner above a
 * static cube standing on its corner (PEG figs 5-6 in 3D: the vertex–vertex configuration). */
static const double corner_cases[][3] = {
    {0.02, 0.01, 0.0},
    {0.0, 0.0, 1.0471975511965976}, /* 60 degrees: the edges at the two corners interleave */
    {0.01, 0.0, 0.5},
    {0.03, 0.02, 0.3},
};

static void corner_scene(pp_scene *s, int i)
{
    empty_scene(s);
    dQuaternion q;
    dGeomID fixed = dCreateBox(s->space, 1, 1, 1);
    dMatrix3 R;
    corner_rotation(q, 0, 0.0);
    dQtoR(q, R);
    dGeomSetRotation(fixed, R);
    const double unit[3] = {1, 1, 1};
    double pos[3] = {corner_cases[i][0], corner_cases[i][1], sqrt(3.0) + 0.05};
    dBodyID b = pp_scene_add_box(s, unit, 1.0, pos);
    corner_rotation(q, 1, corner_cases[i][2]);
    dBodySetQuaternion(b, q);
}

START_TEST(test_corner_to_corner_peg_slides_off)
{
    pp_scene s;
    corner_scene(&s, _i);
    pp_world *pw = make_world(&s, PP_MODEL_PEG, 0.0);
    run_result r = run(&s, pw, 120);
    ck_assert_int_gt(r.steps_with_ix, 0);           /* PEG's I/X sets were needed */
    ck_assert_double_le(r.max_gain, ENERGY_TOL);
    ck_assert_double_le(r.max_overlap, OVERLAP_TOL);
    /* it slid off the corner and fell beside the fixed cube: below the fixed cube's top corner
     * (z = sqrt(3)/2) and farther from its centre than the two circumradii (sqrt(3)), so the
     * cubes cannot touch (the symmetric case 1 is at z = 0.06 m, 1.89 m away, at 1.2 s) */
    const dReal *x = dBodyGetPosition(s.bodies[0]);
    ck_assert_double_lt(x[2], 0.5 * sqrt(3.0));
    ck_assert_double_gt(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), sqrt(3.0));
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

/* The same scenes under the standard model, with the same re-linearisation (_i = 1) and with
 * the default of none (_i = 0): the vertex–vertex configuration is where its half-space
 * contacts over-constrain, and some of them are trapped — they pop (a one-step energy gain 20x
 * the integrator's own error) or the box stays stuck on the fixed cube's corner (PEG lets all
 * four slide off and fall beside it). Measured: without re-linearisation 4 of 4 pop, by up to
 * 1.0 J; re-linearised (the fixed point keeps every contact met in the step, and the energy
 * guard refuses leaps) none pops and 2 of 4 stay on the corner. */
START_TEST(test_corner_to_corner_standard_trapped)
{
    int n = (int)(sizeof corner_cases / sizeof corner_cases[0]), pops = 0, stuck = 0;
    double worst = 0.0;
    for (int i = 0; i < n; ++i) {
        pp_scene s;
        corner_scene(&s, i);
        pp_world *pw = make_world(&s, PP_MODEL_STANDARD, 0.0);
        pp_config c = pp_world_get_config(pw);
        c.relinearize_iterations = _i ? RELINEARIZE : 0;
        ck_assert_int_eq(pp_world_set_config(pw, &c), PP_OK);
        run_result r = run(&s, pw, 120);
        pops += r.max_gain > POP_ENERGY;
        stuck += r.max_gain <= POP_ENERGY && dBodyGetPosition(s.bodies[0])[2] > 0.0;
        if (r.max_gain > worst) worst = r.max_gain;
        pp_world_destroy(pw);
        pp_scene_destroy(&s);
    }
    printf("standard model (re-linearisation %d), corner to corner: %d of %d cases pop, worst "
           "one-step energy gain %.3g J; %d stuck on the corner\n", _i ? RELINEARIZE : 0, pops, n,
           worst, stuck);
    ck_assert_int_gt(pops + stuck, 0);
}
END_TEST

/* PEG fig 2: a vertex near a convex corner, outside it, falling past it. The body is a
 * slender pyramid, apex down, 6 mm beside the block's side face and 2 mm above its top: both
 * faces are within the margin, yet nothing is in the way, so the body must fall exactly as in
 * free flight (PEG's I set max(psi_top, psi_side) >= 0 is satisfied by psi_side > 0). */
START_TEST(test_vertex_past_convex_corner_falls_freely)
{
    pp_scene s;
    empty_scene(&s);
    dGeomID block = dCreateBox(s.space, 1, 1, 1);
    dGeomSetPosition(block, -0.5, 0, -0.5);
    pp_world *pw = make_world(&s, PP_MODEL_PEG, 0.5);
    /* apex (0, 0, -0.225), base at z = 0.075: the centre of mass is the origin */
    const double pts[] = {0, 0, -0.225, 0.02, 0.02, 0.075, -0.02, 0.02, 0.075,
                          0.02, -0.02, 0.075, -0.02, -0.02, 0.075};
    dGeomID g;
    ck_assert_int_eq(pp_convex_create(pw, s.space, pts, 5, &g), PP_OK);
    dBodyID b = dBodyCreate(s.world);
    dMass m;
    dMassSetBoxTotal(&m, 0.1, 0.04, 0.04, 0.3);
    dBodySetMass(b, &m);
    dGeomSetBody(g, b);
    ck_assert_int_eq(pp_scene_append(&s, b, g), 0);
    const double x0 = 0.006, z0 = 0.227, v0 = -0.5;
    dBodySetPosition(b, x0, 0, z0);
    dBodySetLinearVel(b, 0, 0, v0);
    double v = v0, z = z0;
    int near = 0;
    /* the slanted faces reach the block's edge when the apex is 0.3 x0 / 0.02 = 0.09 m below
     * the top: that contact is real, so the free fall is checked until the apex is at -0.08 */
    for (int i = 0; z - 0.225 > -0.08; ++i) {
        ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
        near += pp_world_get_stats(pw)->contacts > 0;
        v -= G * H; /* ODE's semi-implicit Euler */
        z += H * v;
        const dReal *x = dBodyGetPosition(b), *vel = dBodyGetLinearVel(b);
        ck_assert_double_eq_tol(x[0], x0, 1e-12);
        ck_assert_double_eq_tol(x[2], z, 1e-12);
        ck_assert_double_eq_tol(vel[2], v, 1e-12);
        ck_assert_double_le(pp_scene_max_penetration(&s), OVERLAP_TOL);
    }
    ck_assert_int_gt(near, 0); /* the corner was within the margin: PEG had constraints */
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

/* ---- Resting, sliding, tipping --------------------------------------------------------------- */

START_TEST(test_box_resting_on_box)
{
    pp_scene s;
    empty_scene(&s);
    s.ground = dCreatePlane(s.space, 0, 0, 1, 0);
    const double unit[3] = {1, 1, 1}, small[3] = {0.6, 0.6, 0.6};
    pp_scene_add_box(&s, unit, 1.0, (double[]){0, 0, 0.5});
    dBodyID top = pp_scene_add_box(&s, small, 0.5, (double[]){0.1, -0.05, 1.3});
    pp_world *pw = make_world(&s, PP_MODEL_PEG, 0.5);
    for (int i = 0; i < 300; ++i) {
        ck_assert_int_eq(pp_world_step(pw, H), PP_OK);
        ck_assert_double_le(pp_scene_max_penetration(&s), OVERLAP_TOL);
    }
    for (int i = 0; i < s.body_count; ++i) ck_assert_double_le(speed(s.bodies[i]), REST_SPEED);
    ck_assert_double_eq_tol(dBodyGetPosition(top)[2], 1.3, 1e-9);
    ck_assert_int_eq(pp_world_get_stats(pw)->peg_fallback, 0);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

/* A frictionless box pushed off the edge of a static block: it slides, tips over the edge and
 * falls; never an overlap, never a gain of energy. _i: 0 flat, 1 standing on a corner. */
START_TEST(test_box_slides_off_edge)
{
    pp_scene s;
    block_scene(&s);
    const double unit[3] = {1, 1, 1};
    dBodyID b;
    if (_i == 0) {
        b = pp_scene_add_box(&s, unit, 1.0, (double[]){-0.6, 0, 0.5});
    } else {
        b = pp_scene_add_box(&s, unit, 1.0, (double[]){-0.3, 0.1, sqrt(3.0) / 2});
        dQuaternion q;
        corner_rotation(q, 1, 0.3);
        dBodySetQuaternion(b, q);
    }
    dBodySetLinearVel(b, 1.5, 0, 0);
    pp_world *pw = make_world(&s, PP_MODEL_PEG, 0.0);
    run_result r = run(&s, pw, 150);
    ck_assert_double_le(r.max_gain, ENERGY_TOL);
    ck_assert_double_le(r.max_overlap, OVERLAP_TOL);
    ck_assert_double_lt(dBodyGetPosition(b)[2], -1.0); /* it fell off */
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

/* A box whose centre of mass is beyond the block's edge tips over the edge (mu = 0.5): while it
 * pivots on the edge the contact must neither overlap nor push; it ends below the top. */
START_TEST(test_box_tips_over_edge)
{
    pp_scene s;
    block_scene(&s);
    const double size[3] = {1.0, 0.5, 0.25};
    dBodyID b = pp_scene_add_box(&s, size, 1.0, (double[]){0.2, 0, 0.125});
    pp_world *pw = make_world(&s, PP_MODEL_PEG, 0.5);
    run_result r = run(&s, pw, 150);
    ck_assert_double_le(r.max_gain, ENERGY_TOL);
    ck_assert_double_le(r.max_overlap, OVERLAP_TOL);
    ck_assert_double_lt(dBodyGetPosition(b)[2], -0.5);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("peg_model");
    TCase *traps = tcase_create("traps");
    tcase_add_checked_fixture(traps, setup, NULL);
    tcase_set_timeout(traps, 600);
    int corners = (int)(sizeof corner_cases / sizeof corner_cases[0]);
    tcase_add_loop_test(traps, test_corner_to_corner_peg_slides_off, 0, corners);
    tcase_add_loop_test(traps, test_corner_to_corner_standard_trapped, 0, 2);
    tcase_add_test(traps, test_vertex_past_convex_corner_falls_freely);
    suite_add_tcase(s, traps);

    TCase *contact = tcase_create("contact");
    tcase_add_checked_fixture(contact, setup, NULL);
    tcase_set_timeout(contact, 600);
    tcase_add_test(contact, test_box_resting_on_box);
    tcase_add_loop_test(contact, test_box_slides_off_edge, 0, 2);
    tcase_add_test(contact, test_box_tips_over_edge);
    suite_add_tcase(s, contact);
    return s;
}

int main(void)
{
    return pp_it_run(suite());
}
