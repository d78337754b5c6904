/*
 * Stage 1b of a pegplus step: ODE's joints (docs/joints.md).
 *
 * Every enabled joint that acts on a body pegplus steps contributes its rows, built once at
 * the start of the step with the world's ERP and CFM and fps = 1/h, exactly as dWorldStep
 * builds them (ode_joint_rows.c). The rows join the island's LCP (contact/src/peg_joints.c):
 * joints are edges of the island graph like candidate pairs (stage_islands.c), so joint
 * forces, contact forces and friction are found in one solve. The ST96 §3.6 re-linearisation
 * moves the contacts only: joint rows stay those of the start pose, as in dWorldStep.
 *
 * Which joints: found from the managed bodies (dBodyGetJoint), each once (from its first
 * body pegplus steps); ODE's contact joints (dJointTypeContact) are never imported (pegplus
 * makes its own contacts); disabled joints (dJointDisable) are skipped as ODE skips them; a
 * joint whose bodies are all kinematic, disabled or static moves nothing and is skipped. A
 * body on the far side that pegplus does not step (disabled) is held fixed (ODE would wake it
 * up). Joints created, attached, disabled or destroyed between steps are seen at the next step:
 * nothing is kept from one step to the next.
 *
 * Side effects, as in dWorldStep: getInfo2 of a powered joint at a limit adds the motor's force
 * to its bodies' accumulators, so the accumulators are read again after the rows are built.
 */
#include "world_internal.h"

#include <string.h>

static int is_dynamic(const pp_world *world, int b)
{
    return b >= 0 && world->bodies[b].inv_mass > 0.0;
}

static const char *joint_type_name(dJointID j)
{
    switch (dJointGetType(j)) {
    case dJointTypeBall: return "ball";
    case dJointTypeHinge: return "hinge";
    case dJointTypeSlider: return "slider";
    case dJointTypeContact: return "contact";
    case dJointTypeUniversal: return "universal";
    case dJointTypeHinge2: return "hinge2";
    case dJointTypeFixed: return "fixed";
    case dJointTypeNull: return "null";
    case dJointTypeAMotor: return "AMotor";
    case dJointTypeLMotor: return "LMotor";
    case dJointTypePlane2D: return "Plane2D";
    case dJointTypePR: return "PR";
    case dJointTypePU: return "PU";
    case dJointTypePiston: return "piston";
    case dJointTypeDBall: return "DBall";
    case dJointTypeDHinge: return "DHinge";
    case dJointTypeTransmission: return "transmission";
    default: return "unknown";
    }
}

static pp_status add_joint(pp_world *world, dJointID joint, int a, int b, double h)
{
    pp_status st = pp_grow((void **)&world->joints, &world->joint_capacity, world->joint_count + 1,
                           sizeof(pp_joint));
    if (st != PP_OK) return st;
    void **const rows[] = {(void **)&world->joint_rows, (void **)&world->joint_impulse};
    const size_t sizes[] = {sizeof(pp_joint_row), sizeof(double)};
    st = pp_grow_together(rows, sizes, 2, &world->joint_row_capacity, world->joint_row_count + 6);
    if (st != PP_OK) return st;
    pp_joint_row *out = &world->joint_rows[world->joint_row_count];
    int m = pp_ode_joint_rows(joint, 1.0 / h, dWorldGetERP(world->ode_world),
                              dWorldGetCFM(world->ode_world), out);
    if (m < 0) {
        pp_log(PP_LOG_ERROR, "dJointID %p: the %s joint's rows are not available from this "
               "libode; use PP_MODEL_ODE for this world", (void *)joint, joint_type_name(joint));
        return PP_ERR_UNSUPPORTED;
    }
    for (int r = 0; r < m; ++r) {
        out[r].body_a = a;
        out[r].body_b = b;
        world->joint_impulse[world->joint_row_count + r] = 0.0;
    }
    pp_joint *j = &world->joints[world->joint_count++];
    j->id = joint;
    j->body_a = a;
    j->body_b = b;
    j->row_first = world->joint_row_count;
    j->row_count = m;
    const int ends[2] = {a, b};
    for (int e = 0; e < 2; ++e)
        if (ends[e] >= 0) memcpy(j->x_start[e], world->bodies[ends[e]].x, sizeof j->x_start[e]);
    if (a >= 0) memcpy(j->R_start, world->bodies[a].R, sizeof j->R_start);
    world->joint_row_count += m;
    return PP_OK;
}

pp_status pp_stage_joints(pp_world *world, double h)
{
    world->joint_count = 0;
    world->joint_row_count = 0;
    for (int i = 0; i < world->body_count; ++i) {
        dBodyID body = world->bodies[i].id;
        int count = dBodyGetNumJoints(body);
        for (int k = 0; k < count; ++k) {
            dJointID joint = dBodyGetJoint(body, k);
            if (dJointGetType(joint) == dJointTypeContact || !dJointIsEnabled(joint)) continue;
            /* ODE's internal order: b1 is never 0 (an attach (0, b) is stored as (b, 0) with
             * its public getters swapped) */
            dBodyID d0 = dJointGetBody(joint, 0), d1 = dJointGetBody(joint, 1);
            dBodyID b1 = d0 ? d0 : d1, b2 = d0 ? d1 : NULL;
            int a = b1 ? pp_bridge_find_body(world, b1) : -1;
            int b = b2 ? pp_bridge_find_body(world, b2) : -1;
            if ((a >= 0 ? a : b) != i) continue; /* seen from its first managed body */
            if (!is_dynamic(world, a) && !is_dynamic(world, b)) continue;
            if (!pp_ode_joint_rows_available()) {
                pp_log(PP_LOG_ERROR, "dJointID %p (%s joint on dBodyID %p): this libode does "
                       "not export the joint rows pegplus needs (README \"Joints\"); use "
                       "PP_MODEL_ODE for this world", (void *)joint, joint_type_name(joint),
                       (void *)body);
                return PP_ERR_UNSUPPORTED;
            }
            pp_status st = add_joint(world, joint, a, b, h);
            if (st != PP_OK) return st;
        }
    }
    /* getInfo2 may have added motor forces to the accumulators (a powered joint at a limit) */
    for (int j = 0; j < world->joint_count; ++j) {
        const int ends[2] = {world->joints[j].body_a, world->joints[j].body_b};
        for (int e = 0; e < 2; ++e) {
            if (ends[e] < 0) continue;
            pp_body *b = &world->bodies[ends[e]];
            const dReal *f = dBodyGetForce(b->id), *t = dBodyGetTorque(b->id);
            for (int r = 0; r < 3; ++r) {
                b->force[r] = f[r];
                b->torque[r] = t[r];
            }
        }
    }
    world->stats.joints = world->joint_count;
    world->stats.joint_rows = world->joint_row_count;
    return PP_OK;
}

/* dJointFeedback as dWorldStep fills it (step.cpp MultiplyAddJxLambdaToCForce): with
 * lambda = P / h the step's mean force of each row (P summed over the step's sub-steps),
 * f1 = sum J1_lin lambda, t1 = sum J1_ang lambda on ODE's internal b1, about its centre;
 * f2, t2 with J2 when there is a b2 (left as they are otherwise, as ODE does). */
void pp_joint_feedback(pp_world *world, double h)
{
    for (int j = 0; j < world->joint_count; ++j) {
        const pp_joint *joint = &world->joints[j];
        dJointFeedback *fb = dJointGetFeedback(joint->id);
        if (!fb) continue;
        double sum[12] = {0};
        for (int r = joint->row_first; r < joint->row_first + joint->row_count; ++r) {
            const double lambda = world->joint_impulse[r] / h;
            for (int e = 0; e < 12; ++e) sum[e] += world->joint_rows[r].J[e] * lambda;
        }
        for (int e = 0; e < 3; ++e) {
            fb->f1[e] = sum[e];
            fb->t1[e] = sum[3 + e];
        }
        if (dJointGetBody(joint->id, 0) && dJointGetBody(joint->id, 1))
            for (int e = 0; e < 3; ++e) {
                fb->f2[e] = sum[6 + e];
                fb->t2[e] = sum[9 + e];
            }
    }
}
