/* Shared by the integration tests: run a Check suite and turn its failures into the exit code;
 * the step statistics' common assertions. */
#ifndef PP_IT_COMMON_H
#define PP_IT_COMMON_H

#include "pegplus/pegplus.h"

#include <check.h>
#include <string.h>

/* Runs every test of `suite` (each in a forked child, Check's default) and frees the runner.
 * Returns the process exit code: 0 when every test passed, 1 otherwise. */
static inline int pp_it_run(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? 1 : 0;
}

/* Every island of the step answered by Lemke (on M, or on M + eps I: lcp_fallback <= 1),
 * none approximately or not at all, and no PEG LCP replaced by the standard model's
 * constraints (peg_fallback 0); `step` names the step in the message. */
static inline void pp_it_assert_lemke(const pp_step_stats *t, int step)
{
    ck_assert_msg(t->lcp_fallback <= 1 && t->lcp_approximate == 0 && t->islands_failed == 0 &&
                      t->peg_fallback == 0,
                  "step %d: lcp_fallback %d, approximate %d, failed %d, PEG fallback %d", step,
                  t->lcp_fallback, t->lcp_approximate, t->islands_failed, t->peg_fallback);
}

/* A body as ODE holds it: pose, velocities, force and torque accumulators, enabled flag and
 * joint count; zeroed first, so two are compared bit for bit with memcmp. */
typedef struct pp_it_body_state {
    dReal x[3], q[4], v[3], w[3], f[3], t[3];
    int enabled, joints;
} pp_it_body_state;

static inline void pp_it_read_body_state(dBodyID b, pp_it_body_state *s)
{
    memset(s, 0, sizeof *s);
    memcpy(s->x, dBodyGetPosition(b), sizeof s->x);
    memcpy(s->q, dBodyGetQuaternion(b), sizeof s->q);
    memcpy(s->v, dBodyGetLinearVel(b), sizeof s->v);
    memcpy(s->w, dBodyGetAngularVel(b), sizeof s->w);
    memcpy(s->f, dBodyGetForce(b), sizeof s->f);
    memcpy(s->t, dBodyGetTorque(b), sizeof s->t);
    s->enabled = dBodyIsEnabled(b);
    s->joints = dBodyGetNumJoints(b);
}

/* A hinge joining `arm` to the static environment at (x, y, z) about the y axis, its motor
 * driving it at 1 rad/s (at most 3 N m) into its stop at 0 (range [-0.2, 0]): held there, ODE's
 * getInfo2 adds the motor's torque to the arm's accumulator at every step. */
static inline dJointID pp_it_hinge_into_stop(dWorldID world, dBodyID arm, double x, double y,
                                             double z)
{
    dJointID hinge = dJointCreateHinge(world, 0);
    dJointAttach(hinge, arm, 0);
    dJointSetHingeAnchor(hinge, x, y, z);
    dJointSetHingeAxis(hinge, 0.0, 1.0, 0.0);
    dJointSetHingeParam(hinge, dParamLoStop, -0.2);
    dJointSetHingeParam(hinge, dParamHiStop, 0.0);
    dJointSetHingeParam(hinge, dParamVel, 1.0);
    dJointSetHingeParam(hinge, dParamFMax, 3.0);
    return hinge;
}

#endif
