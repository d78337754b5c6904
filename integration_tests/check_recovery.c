/*
 * Recovery from a penetration the pegplus models did not make (soak seed 627): a body left
 * deep in the ground by PP_MODEL_ODE, or placed there by the program.
 *
 * - Every vertex of a polytope below a plane is a contact, however deep (a half-space has no
 *   far side). Before, vertices deeper than eps were skipped: a hull 9 cm into the ground sank
 *   on under both models, and ODE's next step aborted.
 * - The recovery speed is bounded by pp_config.max_correcting_velocity: ST96's psi/h term
 *   asks for a gap rate -psi/h, exact for round-off overlaps, but it shoots a body 5 cm deep
 *   out at 5 m/s (h = 0.01). Closed forms: a frictionless box 5 cm deep, at rest, leaves its
 *   first step at exactly min(v_max, 0.05 / h) upward, with no spin; then it rises at v_max
 *   and settles on the ground with no overlap.
 */
#include "pegplus/pegplus.h"
#include "it_common.h"

#include <check.h>
#include <math.h>

static const double H = 0.01, SIDE = 0.2, DEPTH = 0.05, G = 9.81;

typedef struct box_world {
    dWorldID world;
    dSpaceID space;
    dBodyID body;
    pp_world *pp;
} box_world;

/* A 1 kg box of side SIDE with its bottom face DEPTH below the plane z = 0, at rest;
 * frictionless, so the only impulses are normal. */
static void make(box_world *b, pp_model model, double v_max)
{
    b->world = dWorldCreate();
    dWorldSetGravity(b->world, 0.0, 0.0, -G);
    b->space = dHashSpaceCreate(0);
    dCreatePlane(b->space, 0.0, 0.0, 1.0, 0.0);
    b->body = dBodyCreate(b->world);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, SIDE, SIDE, SIDE);
    dBodySetMass(b->body, &m);
    dBodySetPosition(b->body, 0.0, 0.0, SIDE / 2 - DEPTH);
    dGeomID g = dCreateBox(b->space, SIDE, SIDE, SIDE);
    dGeomSetBody(g, b->body);
    pp_config c = pp_config_default();
    c.model = model;
    c.surface.mu = 0.0;
    c.lcp_budget_seconds = 0.0;
    if (v_max > 0.0) c.max_correcting_velocity = v_max;
    ck_assert_int_eq(pp_world_create(b->world, b->space, &c, &b->pp), PP_OK);
}

static void destroy(box_world *b)
{
    pp_world_destroy(b->pp);
    dSpaceDestroy(b->space);
    dWorldDestroy(b->world);
}

static double speed_z(const box_world *b) { return dBodyGetLinearVel(b->body)[2]; }
static double spin(const box_world *b)
{
    const dReal *w = dBodyGetAngularVel(b->body);
    return sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
}
/* the box's bottom face below the plane (> 0: overlap); the box stays level (spin ~ 0) */
static double overlap(const box_world *b) { return SIDE / 2 - dBodyGetPosition(b->body)[2]; }

static pp_model model_of(int i) { return i == 0 ? PP_MODEL_STANDARD : PP_MODEL_PEG; }

/* No bound: the exact ST96 term, one step to the gap rate DEPTH / H = 5 m/s. */
START_TEST(test_unbounded_recovery_is_psi_over_h)
{
    box_world b;
    make(&b, model_of(_i), INFINITY);
    ck_assert_int_eq(pp_world_step(b.pp, H), PP_OK);
    ck_assert_msg(fabs(speed_z(&b) - DEPTH / H) <= 1e-9 * DEPTH / H, "v_z %.12g, want %.12g",
                  speed_z(&b), DEPTH / H);
    ck_assert_double_le(spin(&b), 1e-9);
    destroy(&b);
}
END_TEST

/* The default bound (0.1 m/s): the first step leaves at exactly v_max, every later step rises
 * by at most v_max h, the box never moves up faster than v_max (+ nothing: gravity only slows
 * it), and it comes to rest on the ground, exactly touching, with no overlap. */
START_TEST(test_bounded_recovery)
{
    box_world b;
    make(&b, model_of(_i), 0.0);
    const double v_max = pp_config_default().max_correcting_velocity;
    ck_assert_int_eq(pp_world_step(b.pp, H), PP_OK);
    ck_assert_msg(fabs(speed_z(&b) - v_max) <= 1e-9 * v_max, "first step: v_z %.12g, want %.12g",
                  speed_z(&b), v_max);
    double fastest = 0.0;
    int steps = 1;
    /* DEPTH / (v_max H) = 50 steps to recover, then it lands (v_max^2/2g = 0.5 mm of flight) */
    for (; steps < 150; ++steps) {
        ck_assert_int_eq(pp_world_step(b.pp, H), PP_OK);
        fastest = fmax(fastest, speed_z(&b));
        ck_assert_double_le(spin(&b), 1e-9);
    }
    ck_assert_msg(fastest <= v_max * (1.0 + 1e-9), "rose at %.12g m/s > v_max %.3g", fastest, v_max);
    ck_assert_msg(fabs(overlap(&b)) <= 1e-9, "rests %.3e m from the ground (overlap > 0)",
                  overlap(&b));
    ck_assert_double_le(fabs(speed_z(&b)), 1e-9);
    destroy(&b);
}
END_TEST

/* A bad bound is refused by name and changes nothing. */
START_TEST(test_bad_bound_refused)
{
    pp_config c = pp_config_default();
    c.max_correcting_velocity = 0.0;
    ck_assert_int_eq(pp_config_validate(&c), PP_ERR_INVALID_ARGUMENT);
    c.max_correcting_velocity = NAN;
    ck_assert_int_eq(pp_config_validate(&c), PP_ERR_INVALID_ARGUMENT);
    c.max_correcting_velocity = INFINITY;
    ck_assert_int_eq(pp_config_validate(&c), PP_OK);
}
END_TEST

int main(void)
{
    dInitODE();
    Suite *s = suite_create("recovery");
    TCase *tc = tcase_create("deep contacts");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_unbounded_recovery_is_psi_over_h, 0, 2);
    tcase_add_loop_test(tc, test_bounded_recovery, 0, 2);
    tcase_add_test(tc, test_bad_bound_refused);
    suite_add_tcase(s, tc);
    int rc = pp_it_run(s);
    dCloseODE();
    return rc;
}
