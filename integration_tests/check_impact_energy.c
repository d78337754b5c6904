/*
 * Impacts never gain energy (issue 15; soak seeds 942 and 719): PLUS impacts on jointed
 * bodies through pp_world_step, with closed forms.
 *
 * The soak's scenes (942: a capsule at ~30 m/s on a hinge hitting the ground with bounce
 * 0.959, +864 J in one impact) came down to this: a joint's equality rows J_E do not hold
 * exactly when the impact comes (J_E nu != 0: the time stepper's ERP drift correction, and the
 * rows of the step's start read at the impact's pose), and PLUS read the approach velocity
 * from the full twists. du = W_c G^T pi keeps J_E nu as it was, so PLUS bounced a velocity
 * the impact cannot change, and the joint impulse did work p_E . J_E nu. Now PLUS reads the
 * velocities of the twists the joints allow (their M-orthogonal projection onto J_E nu = 0),
 * whose kinetic energy change is exactly PLUS's pi . v + 1/2 pi^T A pi <= 0.
 *
 * The minimal scene: two spheres (1 kg, r = 0.1 m) one above the other, joined by a ball
 * joint midway, the lower one touching the ground; no gravity. The pair falls at v0 = 2 m/s
 * (its centre of mass) and stretches at 2u = 2 m/s along the joint's rows: the lower sphere
 * at v0 + u, the upper at v0 - u, so J_E nu = 2u. The impulse along the pair's line turns
 * nothing, so the answer is that of one 2 kg body falling at v0: normal impulse
 * 2 m (1 + e) v0, the centre of mass leaving at e v0, and the impact's kinetic energy change
 * -(1 - e^2) m v0^2; the stretching (no momentum) is left to the time stepper, which removes
 * it in the same step. Read from the full twists, PLUS saw the lower sphere's v0 + u and gave
 * 2 m (1 + e)(v0 + u): e = 1 gained 2 m u (v0 + u) = 6 J of the 5 J there were.
 * Under gravity, the same pair dropped assembled from h0 = 0.3 m with e = 0.5 rises e^2 h0.
 */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"

#include <check.h>
#include <math.h>
#include <stdio.h>

#define R_BALL 0.1
#define LEN 0.5 /* between the spheres' centres, m */
#define MASS 1.0
#define TOL_ROUNDOFF 1e-9 /* relative: closed forms that hold to round-off */

static void show_warnings(pp_log_level level, const char *message, void *user)
{
    (void)user;
    if (level >= PP_LOG_WARNING) fprintf(stderr, "pegplus: %s\n", message);
}

static void setup(void)
{
    pp_scenes_init_ode();
    pp_set_log_hook(show_warnings, NULL);
}

typedef struct pair {
    dWorldID world;
    dSpaceID space;
    dBodyID low, high;
    dGeomID g_low, g_high;
    dJointID ball;
} pair;

/* The pair with the lower sphere's centre at z = R_BALL + gap, the joint midway. */
static void build_pair(pair *p, double gravity, double gap)
{
    p->world = dWorldCreate();
    p->space = dSimpleSpaceCreate(0);
    dWorldSetGravity(p->world, 0, 0, -gravity);
    dCreatePlane(p->space, 0, 0, 1, 0);
    dMass m;
    dMassSetSphereTotal(&m, MASS, R_BALL);
    const double z = R_BALL + gap;
    p->low = dBodyCreate(p->world);
    p->high = dBodyCreate(p->world);
    dBodySetMass(p->low, &m);
    dBodySetMass(p->high, &m);
    dBodySetPosition(p->low, 0, 0, z);
    dBodySetPosition(p->high, 0, 0, z + LEN);
    p->g_low = dCreateSphere(p->space, R_BALL);
    p->g_high = dCreateSphere(p->space, R_BALL);
    dGeomSetBody(p->g_low, p->low);
    dGeomSetBody(p->g_high, p->high);
    p->ball = dJointCreateBall(p->world, 0);
    dJointAttach(p->ball, p->low, p->high);
    dJointSetBallAnchor(p->ball, 0, 0, z + 0.5 * LEN);
}

static void destroy_pair(pair *p)
{
    dSpaceDestroy(p->space);
    dWorldDestroy(p->world);
}

static double kinetic_energy(const pair *p)
{
    double ke = 0.0;
    const dBodyID b[2] = {p->low, p->high};
    for (int i = 0; i < 2; ++i) {
        const dReal *v = dBodyGetLinearVel(b[i]), *w = dBodyGetAngularVel(b[i]);
        const double I = 0.4 * MASS * R_BALL * R_BALL;
        ke += 0.5 * MASS * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
              0.5 * I * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    }
    return ke;
}

static double com_velocity_z(const pair *p)
{
    return 0.5 * (dBodyGetLinearVel(p->low)[2] + dBodyGetLinearVel(p->high)[2]);
}

static pp_world *plus_world(const pair *p, double bounce)
{
    pp_config c = pp_config_default();
    c.model = PP_MODEL_STANDARD;
    c.surface.mu = 0.0;
    c.surface.bounce = bounce;
    c.surface.bounce_vel = 0.01;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(p->world, p->space, &c, &pw), PP_OK);
    return pw;
}

/* The stretching pair of the file comment, one step of h = 1 ms at restitution e. */
static void stretching_pair(double e)
{
    const double v0 = 2.0, u = 1.0, h = 1e-3;
    pair p;
    build_pair(&p, 0.0, 0.0);
    dBodySetLinearVel(p.low, 0, 0, -(v0 + u));
    dBodySetLinearVel(p.high, 0, 0, -(v0 - u));
    pp_world *pw = plus_world(&p, e);
    const double ke0 = kinetic_energy(&p);
    ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
    const pp_step_stats *stats = pp_world_get_stats(pw);
    const pp_impact_info *imp = NULL;
    const int count = pp_world_get_impacts(pw, &imp);
    ck_assert_int_eq(count, 1);
    ck_assert_int_eq(stats->impacts, 1);
    ck_assert_int_eq(stats->impact_energy_fallbacks, 0);
    const double *n = imp[0].normal;
    const double pn = fabs(n[0] * imp[0].impulse[0] + n[1] * imp[0].impulse[1] + n[2] * imp[0].impulse[2]);
    const double ke1 = kinetic_energy(&p), vz = com_velocity_z(&p);
    printf("stretching pair, e = %.2f: normal impulse %.9f N s (expected %.9f; from the full "
           "twists %.9f), impact dKE %.9f J (expected %.9f), KE %.6f -> %.6f J over the step, "
           "centre of mass leaves at %.9f m/s (expected %.9f)\n",
           e, pn, 2 * MASS * (1 + e) * v0, 2 * MASS * (1 + e) * (v0 + u), stats->impact_energy_change,
           -(1 - e * e) * MASS * v0 * v0, ke0, ke1, vz, e * v0);
    ck_assert_double_le(fabs(pn - 2 * MASS * (1 + e) * v0), TOL_ROUNDOFF * pn);
    ck_assert_double_le(fabs(stats->impact_energy_change + (1 - e * e) * MASS * v0 * v0), TOL_ROUNDOFF * ke0);
    /* no gravity and no other contact: the momentum after the step is the impact's alone */
    ck_assert_double_le(fabs(vz - e * v0), TOL_ROUNDOFF * v0);
    /* and the step (the impact, then the joint taking out the stretching) gains nothing */
    ck_assert_double_le(ke1, ke0);
    pp_world_destroy(pw);
    destroy_pair(&p);
}

START_TEST(test_stretching_pair_elastic)
{
    stretching_pair(1.0);
}
END_TEST

START_TEST(test_stretching_pair_half)
{
    stretching_pair(0.5);
}
END_TEST

/*
 * The assembled pair dropped from h0 = 0.3 m (lower sphere's gap) under g, e = 0.5: the
 * centre of mass rises e^2 h0 above the touch, short by semi-implicit Euler's O(h) terms:
 * e v h / 2 on the way up (sum of v_k h), e^2 v h / 2 from the touch speed (g h / 2 off
 * sqrt(2 g h0), v), and g h^2 from the apex sampled at steps; bounded here by twice the
 * first two, 1.8 mm at h = 1 ms. The kinetic plus potential energy never rises in a step.
 */
START_TEST(test_pair_bounce_height)
{
    const double g = 9.81, h0 = 0.3, e = 0.5, h = 1e-3;
    pair p;
    build_pair(&p, g, h0);
    pp_world *pw = plus_world(&p, e);
    const double z_touch = R_BALL + 0.5 * LEN; /* the centre of mass at the touch */
    double energy_prev = kinetic_energy(&p) + 2 * MASS * g * 0.5 * (dBodyGetPosition(p.low)[2] + dBodyGetPosition(p.high)[2]);
    int impacts = 0, steps = 0;
    double apex = -INFINITY, worst_gain = -INFINITY;
    for (; steps < 1500; ++steps) {
        ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        const pp_step_stats *stats = pp_world_get_stats(pw);
        impacts += stats->impacts;
        ck_assert_int_eq(stats->impact_energy_fallbacks, 0);
        const double zc = 0.5 * (dBodyGetPosition(p.low)[2] + dBodyGetPosition(p.high)[2]);
        const double energy = kinetic_energy(&p) + 2 * MASS * g * zc;
        worst_gain = fmax(worst_gain, energy - energy_prev);
        energy_prev = energy;
        if (impacts == 1) apex = fmax(apex, zc);
        if (impacts == 1 && com_velocity_z(&p) < 0.0) break; /* past the apex */
    }
    const double v = sqrt(2 * g * h0), rise = apex - z_touch;
    const double tol = e * v * h + e * e * v * h + g * h * h;
    printf("pair dropped from %.2f m, e = %.2f: rises %.6f m (e^2 h0 = %.6f, bound %.2g), "
           "worst energy change over a step %+.3g J\n", h0, e, rise, e * e * h0, tol, worst_gain);
    ck_assert_int_eq(impacts, 1);
    ck_assert_double_le(fabs(rise - e * e * h0), tol);
    ck_assert_double_le(worst_gain, 1e-9 * 2 * MASS * g * (h0 + z_touch));
    pp_world_destroy(pw);
    destroy_pair(&p);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("impact_energy");
    TCase *tc = tcase_create("impact_energy");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_stretching_pair_elastic);
    tcase_add_test(tc, test_stretching_pair_half);
    tcase_add_test(tc, test_pair_bounce_height);
    suite_add_tcase(suite, tc);
    return pp_it_run(suite);
}
