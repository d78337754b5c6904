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
#include "joint_rows_public.h"
#include "world_internal.h"

#include <stdint.h>
#include <stdlib.h>
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

/* ---- Captures: what the public rows need, kept per joint from step to step ----------------
 * (joint_rows_public.h). The step's joints get their capture from the previous step's list
 * (found through a hash of dJointIDs), or an empty one taken at first use; joints no longer
 * in the step drop theirs, so the store follows the world's joints. */
struct pp_joint_captures {
    pp_joint_capture *list, *next;   /* the previous step's (by its joints), this step's */
    int count, capacity, next_capacity;
    int *table;                      /* hash of list[].joint -> index, -1 empty */
    int table_capacity;
};

static unsigned joint_slot(dJointID j, int capacity)
{
    uintptr_t x = (uintptr_t)j;
    x ^= x >> 17;
    x *= (uintptr_t)0x9e3779b97f4a7c15ULL;
    return (unsigned)(x >> 7) & (unsigned)(capacity - 1);
}

static const pp_joint_capture *previous_capture(const struct pp_joint_captures *c, dJointID j)
{
    if (!c || c->table_capacity == 0) return NULL;
    for (unsigned i = joint_slot(j, c->table_capacity);; i = (i + 1) & (unsigned)(c->table_capacity - 1)) {
        int k = c->table[i];
        if (k < 0) return NULL;
        if (c->list[k].joint == j) return &c->list[k];
    }
}

/* This step's captures become the previous ones; re-index them. */
static pp_status captures_commit(struct pp_joint_captures *c, int count)
{
    pp_joint_capture *t = c->list;
    int cap = c->capacity;
    c->list = c->next;
    c->capacity = c->next_capacity;
    c->next = t;
    c->next_capacity = cap;
    c->count = count;
    int need = 16;
    while (need < 2 * count) need *= 2;
    if (need > c->table_capacity) {
        int *table = realloc(c->table, (size_t)need * sizeof *table);
        if (!table) return PP_ERR_NO_MEMORY;
        c->table = table;
        c->table_capacity = need;
    }
    for (int i = 0; i < c->table_capacity; ++i) c->table[i] = -1;
    for (int k = 0; k < count; ++k) {
        if (!c->list[k].joint) continue;
        unsigned i = joint_slot(c->list[k].joint, c->table_capacity);
        while (c->table[i] >= 0) i = (i + 1) & (unsigned)(c->table_capacity - 1);
        c->table[i] = k;
    }
    return PP_OK;
}

void pp_joint_captures_free(pp_world *world)
{
    struct pp_joint_captures *c = world->captures;
    if (!c) return;
    free(c->list);
    free(c->next);
    free(c->table);
    free(c);
    world->captures = NULL;
}

/* Joint types whose rows include ODE's limit/motor row (dxJointLimitMotor): the ones where a
 * motor can be powered into a stop. */
static int has_limit_motor(dJointID j)
{
    switch (dJointGetType(j)) {
    case dJointTypeHinge: case dJointTypeSlider: case dJointTypeUniversal:
    case dJointTypeHinge2: case dJointTypePR: case dJointTypePU: case dJointTypePiston:
    case dJointTypeAMotor:
        return 1;
    default:
        return 0;
    }
}

/*
 * A joint's rows. From libode's getInfo1/getInfo2 (exact for every type and history) when it
 * exports them, except for a motor powered into its stop: there getInfo2 adds the motor's
 * force through ODE's step context, which only dWorldStep creates (a world pegplus steps from
 * the start has none: getInfo2 would crash), so that joint's rows come from the public
 * rebuild, which adds the same force to the same accumulators (joint_rows_public.h; exact
 * when the joint was assembled when pegplus first saw it). Without libode's symbols, every
 * joint's rows come from the public rebuild. Returns m, or -1 (not available).
 */
/* PP_JOINT_ROWS=public in the environment takes every joint's rows from the public rebuild,
 * as a libode without getInfo2 would: how the tests run that path on this libode. */
static int public_rows_only(void)
{
    static int only = -1;
    if (only < 0) {
        const char *e = getenv("PP_JOINT_ROWS");
        only = e && strcmp(e, "public") == 0;
    }
    return only;
}

static int joint_rows(pp_joint_capture *capture, dJointID joint, double fps, double erp,
                      double cfm, pp_joint_row rows[6])
{
    if (!pp_ode_joint_rows_available() || public_rows_only())
        return pp_public_joint_rows(capture, joint, fps, erp, cfm, rows);
    if (has_limit_motor(joint) && pp_joint_capture_ensure(capture, joint)) {
        pp_joint_wrench motor;
        int m = pp_public_joint_rebuild(capture, joint, fps, erp, cfm, rows, &motor);
        if (m >= 0 && motor.active) return pp_public_joint_rows(capture, joint, fps, erp, cfm, rows);
    }
    return pp_ode_joint_rows(joint, fps, erp, cfm, rows);
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
    struct pp_joint_captures *c = world->captures;
    if (world->joint_count + 1 > c->next_capacity) {
        int cap = 2 * c->next_capacity > world->joint_count + 1 ? 2 * c->next_capacity : world->joint_count + 16;
        pp_joint_capture *next = realloc(c->next, (size_t)cap * sizeof *next);
        if (!next) return PP_ERR_NO_MEMORY;
        c->next = next;
        c->next_capacity = cap;
    }
    pp_joint_capture *capture = &c->next[world->joint_count];
    const pp_joint_capture *before = previous_capture(c, joint);
    if (before) *capture = *before;
    else memset(capture, 0, sizeof *capture);
    pp_joint_row *out = &world->joint_rows[world->joint_row_count];
    int m = joint_rows(capture, joint, 1.0 / h, dWorldGetERP(world->ode_world),
                       dWorldGetCFM(world->ode_world), out);
    if (m < 0) {
        pp_log(PP_LOG_ERROR, "dJointID %p: the %s joint's rows are not available (libode does "
               "not export getInfo2, and ODE's public API cannot rebuild this joint: "
               "docs/joints.md); use PP_MODEL_ODE for this world", (void *)joint,
               joint_type_name(joint));
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
    if (!world->captures) {
        world->captures = calloc(1, sizeof *world->captures);
        if (!world->captures) return PP_ERR_NO_MEMORY;
    }
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
    pp_status st = captures_commit(world->captures, world->joint_count);
    if (st != PP_OK) return st;
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
