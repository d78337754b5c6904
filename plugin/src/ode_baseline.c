/*
 * PP_MODEL_ODE: stock ODE, exactly as a typical ODE program steps its world — the baseline
 * every comparison runs against, in the same process and on the same scene:
 *
 *   dSpaceCollide(space, ...)          near callback: recurse into sub-spaces, skip pairs whose
 *                                      bodies are joined by a non-contact joint, ask the
 *                                      surface callback, dCollide up to N contacts;
 *                                      then one contact joint per contact, in the same order;
 *   dWorldStep or dWorldQuickStep;
 *   dJointGroupEmpty(contact group).
 *
 * Unlike a hand-written loop it checks what it hands to ODE first (the world, bodies and geoms
 * in world.c's ode_step; here each pair's surface and each contact), and makes the joints only
 * when everything passed: a rejected step changes nothing in ODE. The joints are made in the
 * order a near callback would make them, so the step stays bit-identical to that loop.
 */
#include "world_internal.h"

#include <math.h>
#include <string.h>

typedef struct near_context {
    pp_world *world;
    pp_status status;              /* the first rejection: no joint is made, ODE not stepped */
} near_context;

/* The pair's surface: the config default, then the user's callback. Returns 0 to skip. */
int pp_pair_surface(const pp_world *world, dGeomID g1, dGeomID g2, pp_surface *surface)
{
    *surface = world->config.surface;
    if (world->config.surface_fn)
        return world->config.surface_fn(world->config.surface_user, g1, g2, surface);
    return 1;
}

/* dContact surface.mode flags that pp_surface can fill: the friction approximation, and the
 * bounce and soft ERP/CFM pegplus adds from its fields. The others (dContactMu2/AxisDep,
 * FDir1, Motion1/2/N, Slip1/2, Rolling) need dContact fields pp_surface does not carry, which
 * ODE would then read as 0 (FDir1: a zero friction direction, so no friction at all). */
#define PP_ODE_MODE_ALLOWED (dContactApprox1 | dContactBounce | dContactSoftERP | dContactSoftCFM)

const char *pp_surface_problem(const pp_surface *s, int ode_fields, double *value)
{
    *value = NAN;
    if (isnan(s->mu) || s->mu < 0.0) return *value = s->mu, "mu must be >= 0 (dInfinity allowed)";
    if (!(s->bounce >= 0.0 && s->bounce <= 1.0)) return *value = s->bounce, "bounce must be in [0, 1]";
    if (!(s->bounce_vel >= 0.0) || !isfinite(s->bounce_vel))
        return *value = s->bounce_vel, "bounce_vel must be finite and >= 0 m/s";
    if (!(s->plus_v_plastic >= 0.0) || !isfinite(s->plus_v_plastic))
        return *value = s->plus_v_plastic, "plus_v_plastic must be finite and >= 0 m/s";
    if (!ode_fields) return NULL;
    if (!isfinite(s->ode_soft_erp) || s->ode_soft_erp > 1.0)
        return *value = s->ode_soft_erp,
               "ode_soft_erp (dContact surface.soft_erp) must be finite and at most 1 (negative: unset)";
    if (!isfinite(s->ode_soft_cfm))
        return *value = s->ode_soft_cfm,
               "ode_soft_cfm (dContact surface.soft_cfm) must be finite (negative: unset)";
    if (s->ode_mode & ~PP_ODE_MODE_ALLOWED)
        return *value = s->ode_mode & ~PP_ODE_MODE_ALLOWED,
               "ode_mode (dContact surface.mode) has flags whose parameters pp_surface does not "
               "carry (dContactMu2, FDir1, Motion1/2/N, Slip1/2, Rolling: ODE would read them as "
               "0); only dContactApprox1* (and Bounce, SoftERP, SoftCFM) are allowed";
    return NULL;
}

static void to_ode_surface(const pp_surface *s, dSurfaceParameters *out)
{
    out->mode = s->ode_mode;
    out->mu = s->mu;
    if (s->bounce > 0.0) {
        out->mode |= dContactBounce;
        out->bounce = s->bounce;
        out->bounce_vel = s->bounce_vel;
    }
    if (s->ode_soft_erp >= 0.0) {
        out->mode |= dContactSoftERP;
        out->soft_erp = s->ode_soft_erp;
    }
    if (s->ode_soft_cfm >= 0.0) {
        out->mode |= dContactSoftCFM;
        out->soft_cfm = s->ode_soft_cfm;
    }
}

/* Room for n contacts in the step's contact arrays (one capacity for all of them). */
static pp_status reserve_contacts(pp_world *world, int n)
{
    void **const arrays[] = {(void **)&world->ode_contacts, (void **)&world->ode_contact_bodies,
                             (void **)&world->ode_feedback, (void **)&world->ode_program_joints};
    const size_t sizes[] = {sizeof(dContact), 2 * sizeof(dBodyID), sizeof(dJointFeedback),
                            sizeof(dJointID)};
    return pp_grow_together(arrays, sizes, 4, &world->ode_contact_capacity, n);
}

static int finite_contact(const dContactGeom *c)
{
    for (int k = 0; k < 3; ++k)
        if (!isfinite(c->pos[k]) || !isfinite(c->normal[k])) return 0;
    return isfinite(c->depth);
}

/* dSpaceCollide's callback: the pair's surface and dCollide's contacts are checked and kept in
 * world->ode_contacts; the contact joints are made only once every pair passed, so a rejected
 * step leaves ODE as it was. */
static void near_callback(void *data, dGeomID g1, dGeomID g2)
{
    near_context *ctx = data;
    pp_world *world = ctx->world;
    if (ctx->status != PP_OK) return;
    if (dGeomIsSpace(g1) || dGeomIsSpace(g2)) {
        dSpaceCollide2(g1, g2, data, near_callback);
        if (dGeomIsSpace(g1)) dSpaceCollide((dSpaceID)g1, data, near_callback);
        if (dGeomIsSpace(g2)) dSpaceCollide((dSpaceID)g2, data, near_callback);
        return;
    }
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    if (b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact)) return;

    pp_surface surface;
    if (!pp_pair_surface(world, g1, g2, &surface)) return;
    double value;
    const char *problem = pp_surface_problem(&surface, 1, &value);
    if (problem) {
        pp_log(PP_LOG_ERROR, "the surface of dGeomID %p (%s) and dGeomID %p (%s): %s (got %g); "
                             "step rejected, nothing in ODE changed", (void *)g1,
               pp_geom_class_name(g1), (void *)g2, pp_geom_class_name(g2), problem, value);
        ctx->status = PP_ERR_INVALID_ARGUMENT;
        return;
    }

    int max = world->config.ode_max_contacts, first = world->ode_contact_count;
    ctx->status = reserve_contacts(world, first + max);
    if (ctx->status != PP_OK) return;
    dContact *contact = &world->ode_contacts[first];
    memset(contact, 0, sizeof(dContact) * (size_t)max);
    int n = dCollide(g1, g2, max, &contact[0].geom, sizeof(dContact)), kept = 0;
    for (int i = 0; i < n; ++i) {
        if (!finite_contact(&contact[i].geom)) {
            pp_log(PP_LOG_ERROR, "dCollide of dGeomID %p (%s) and dGeomID %p (%s) gave a contact "
                                 "with a NaN or infinite position, normal or depth (bad geom data: "
                                 "dConvex, trimesh or heightfield arrays?); step rejected, nothing "
                                 "in ODE changed", (void *)g1, pp_geom_class_name(g1), (void *)g2,
                   pp_geom_class_name(g2));
            ctx->status = PP_ERR_INVALID_ARGUMENT;
            return;
        }
        /* ODE's convex–convex collider can return a contact with a zero normal (seen at
         * depth 1e-16 between two dConvex hulls resting on each other, soak seed 627). A
         * contact joint on it gets NaN friction directions (dPlaneSpace of 0) and dWorldStep
         * aborts in dNormalize4, killing the program; the contact says nothing about the
         * pair, so it is dropped (the program's own loop would have died on it). */
        const dReal *nv = contact[i].geom.normal;
        if (nv[0] * nv[0] + nv[1] * nv[1] + nv[2] * nv[2] < 1e-12) {
            pp_log(PP_LOG_WARNING, "dCollide of dGeomID %p (%s) and dGeomID %p (%s) gave a "
                                   "contact with a zero normal at (%g, %g, %g); it is dropped "
                                   "(dWorldStep would abort on it)", (void *)g1,
                   pp_geom_class_name(g1), (void *)g2, pp_geom_class_name(g2),
                   (double)contact[i].geom.pos[0], (double)contact[i].geom.pos[1],
                   (double)contact[i].geom.pos[2]);
            continue;
        }
        if (kept != i) contact[kept] = contact[i];
        to_ode_surface(&surface, &contact[kept].surface);
        world->ode_contact_bodies[2 * (first + kept)] = b1;
        world->ode_contact_bodies[2 * (first + kept) + 1] = b2;
        ++kept;
    }
    world->ode_contact_count = first + kept;
}

/* Room for the step's contact list (n entries), asked for before ODE is touched: a step that
 * cannot list its contacts is refused with PP_ERR_NO_MEMORY, not stepped (pegplus.h
 * pp_world_step), and the list is written after dWorldStep without allocating. */
static pp_status reserve_contact_list(pp_world *world, int n)
{
    pp_step_scratch *s = &world->scratch;
    return pp_grow((void **)&s->info, &s->info_capacity, n > 0 ? n : 1,
                   sizeof(pp_contact_info));
}

/* The step's contacts into pp_world_get_contacts' list (reserved), in its conventions: ODE's
 * normal points from g2 into g1 (moving g1 along it separates them), ours from g1 to g2; the
 * gap is -depth; the impulses are those on g2's body, h times the contact joint's force. The
 * joint's feedback f1 is the force on its first attached body: g1's, or g2's when g1 is static
 * (ODE stores an attach (0, b) as (b, 0)). */
static void contact_list(pp_world *world, double h)
{
    pp_step_scratch *s = &world->scratch;
    int n = world->ode_contact_count;
    for (int i = 0; i < n; ++i) {
        const dContactGeom *g = &world->ode_contacts[i].geom;
        const dJointFeedback *fb = &world->ode_feedback[i];
        pp_contact_info *out = &s->info[i];
        double sign = world->ode_contact_bodies[2 * i] ? -1.0 : 1.0; /* f1 -> force on g2 */
        double p2[3], pn = 0.0;
        out->g1 = g->g1;
        out->g2 = g->g2;
        for (int k = 0; k < 3; ++k) {
            out->position[k] = g->pos[k];
            out->normal[k] = -g->normal[k];
            p2[k] = sign * h * fb->f1[k];
            pn += p2[k] * out->normal[k];
        }
        out->gap = -g->depth;
        out->normal_impulse = pn;
        for (int k = 0; k < 3; ++k) out->friction_impulse[k] = p2[k] - pn * out->normal[k];
    }
    s->info_count = n;
}

pp_status pp_ode_baseline_step(pp_world *world, double h)
{
    near_context ctx = {world, PP_OK};
    double t0 = pp_now_seconds();
    world->ode_contact_count = 0;
    if (world->space) dSpaceCollide(world->space, &ctx, near_callback);
    if (ctx.status != PP_OK) return ctx.status;
    pp_status woken = pp_bridge_validate_woken(world, world->ode_contact_bodies,
                                               2 * world->ode_contact_count);
    if (woken != PP_OK) return woken;
    pp_status st = reserve_contact_list(world, world->ode_contact_count);
    if (st != PP_OK) return st;
    double max_depth = 0.0;
    for (int i = 0; i < world->ode_contact_count; ++i) {
        const dContact *c = &world->ode_contacts[i];
        dJointID joint = dJointCreateContact(world->ode_world, world->contact_group, c);
        dJointAttach(joint, world->ode_contact_bodies[2 * i], world->ode_contact_bodies[2 * i + 1]);
        /* the joint's force for the contact list: ODE fills it after solving, it changes
         * nothing in the step */
        dJointSetFeedback(joint, &world->ode_feedback[i]);
        if (c->geom.depth > max_depth) max_depth = c->geom.depth;
    }
    double t1 = pp_now_seconds();
    if (world->config.ode_stepper == PP_ODE_QUICK_STEP)
        dWorldQuickStep(world->ode_world, h);
    else
        dWorldStep(world->ode_world, h);
    dJointGroupEmpty(world->contact_group);
    double t2 = pp_now_seconds();

    contact_list(world, h);
    world->stats.ode_contacts = world->ode_contact_count;
    world->stats.ode_max_depth = max_depth;
    world->stats.time_stage[PP_STAGE_PROXIMITY] = t1 - t0;
    world->stats.time_stage[PP_STAGE_TIME_STEP] = t2 - t1;
    return PP_OK;
}

/* The world whose program callback is running on this thread (pp_ode_program_callback_step's
 * dSpaceCollide), NULL otherwise. */
static _Thread_local pp_world *recording;

void pp_ode_record_contact(dWorldID w, const dContact *contact, dJointID joint)
{
    pp_world *world = recording;
    if (!world || w != world->ode_world || !joint || !contact) return;
    int n = world->ode_contact_count;
    /* pp_near_probe_joint_create_contact reaches the interposed dJointCreateContact in the
     * shared library: the same joint comes twice in a row */
    if (n > 0 && world->ode_program_joints[n - 1] == joint) return;
    if (reserve_contacts(world, n + 1) != PP_OK) {
        world->ode_contacts_lost++;
        return;
    }
    world->ode_contacts[n] = *contact;
    world->ode_program_joints[n] = joint;
    world->ode_contact_count = n + 1;
}

/* The program's contact joint i after the step, in the contact list's conventions (those of
 * contact_list above): position, ODE's normal turned round (g1 to g2), gap = -depth, and the
 * impulse of the joint on g2's body (or, g2 static, minus the one on g1's). The joint's
 * feedback f1 is the force on its first attached body, f2 on the second (ODE stores an attach
 * (0, b) as (b, 0)); a geom's body the joint is not attached to gets nothing from it. */
static void program_contact_info(const pp_world *world, int i, double h, pp_contact_info *out)
{
    const dContactGeom *g = &world->ode_contacts[i].geom;
    const dBodyID *node = &world->ode_contact_bodies[2 * i];
    const dJointFeedback *fb = world->ode_program_joints[i]
                                   ? dJointGetFeedback(world->ode_program_joints[i]) : NULL;
    dBodyID b1 = g->g1 ? dGeomGetBody(g->g1) : NULL, b2 = g->g2 ? dGeomGetBody(g->g2) : NULL;
    dBodyID on = b2 ? b2 : b1;
    double sign = b2 ? 1.0 : -1.0, p2[3] = {0.0, 0.0, 0.0}, pn = 0.0;
    const dReal *f = NULL;
    if (fb && on && on == node[0]) f = fb->f1;
    else if (fb && on && on == node[1]) f = fb->f2;
    out->g1 = g->g1;
    out->g2 = g->g2;
    for (int k = 0; k < 3; ++k) {
        out->position[k] = g->pos[k];
        out->normal[k] = -g->normal[k];
        if (f) p2[k] = sign * h * f[k];
        pn += p2[k] * out->normal[k];
    }
    out->gap = -g->depth;
    out->normal_impulse = pn;
    for (int k = 0; k < 3; ++k) out->friction_impulse[k] = p2[k] - pn * out->normal[k];
}

/* The program's own loop, run for it: dSpaceCollide with its near callback (its dCollide
 * calls, its surfaces, its contact joints in its group), then dWorldStep or dWorldQuickStep.
 * Bit-identical to that loop: pegplus only reads ODE before it (world.c ode_step). The group
 * is the program's, so it stays the program's to empty after pp_world_step, as it emptied it
 * after dWorldStep.
 *
 * The contact list is the program's contact joints of this step: the dJointCreateContact
 * wrappers (interpose_probe.c, pp_near_probe_joint_create_contact) record each joint and its
 * dContact while the callback runs. A joint without feedback of its own gets pegplus's for the
 * step (ODE fills it after solving; it changes nothing in the step) and none again after it,
 * so ODE ends as the program's loop leaves it. The joints must live until the step is over
 * (the program empties its group after pp_world_step), as they must in the program's loop.
 * Where a joint could not be recorded, or the list has no room, the step is refused before
 * dWorldStep (PP_ERR_NO_MEMORY): the bodies are not stepped, no feedback is set. */
pp_status pp_ode_program_callback_step(pp_world *world, double h)
{
    double t0 = pp_now_seconds();
    world->ode_contact_count = 0;
    world->ode_contacts_lost = 0;
    recording = world;
    if (world->space) dSpaceCollide(world->space, world->near_data, world->near_callback);
    recording = NULL;
    int n = world->ode_contact_count;
    pp_step_scratch *s = &world->scratch;
    s->info_count = 0;
    pp_status st = reserve_contact_list(world, n);
    if (st != PP_OK || world->ode_contacts_lost > 0) {
        /* ODE not stepped: the callback's joints are in the program's group, which the program
         * empties after pp_world_step as after its own dWorldStep */
        pp_log(PP_LOG_ERROR, "PP_MODEL_ODE: out of memory recording the near callback's %d "
                             "contacts; step refused, the bodies not stepped",
               n + world->ode_contacts_lost);
        return PP_ERR_NO_MEMORY;
    }
    double max_depth = 0.0;
    for (int i = 0; i < n; ++i) {
        dJointID j = world->ode_program_joints[i];
        dBodyID a = dJointGetBody(j, 0), b = dJointGetBody(j, 1);
        world->ode_contact_bodies[2 * i] = a ? a : b;
        world->ode_contact_bodies[2 * i + 1] = a ? b : NULL;
        memset(&world->ode_feedback[i], 0, sizeof world->ode_feedback[i]);
        if (!dJointGetFeedback(j)) dJointSetFeedback(j, &world->ode_feedback[i]);
        if (world->ode_contacts[i].geom.depth > max_depth)
            max_depth = world->ode_contacts[i].geom.depth;
    }
    double t1 = pp_now_seconds();
    if (world->config.ode_stepper == PP_ODE_QUICK_STEP)
        dWorldQuickStep(world->ode_world, h);
    else
        dWorldStep(world->ode_world, h);
    double t2 = pp_now_seconds();

    for (int i = 0; i < n; ++i) {
        program_contact_info(world, i, h, &s->info[i]);
        dJointID j = world->ode_program_joints[i];
        if (dJointGetFeedback(j) == &world->ode_feedback[i]) dJointSetFeedback(j, NULL);
    }
    s->info_count = n;
    world->stats.ode_contacts = n;
    world->stats.ode_max_depth = max_depth;
    world->stats.time_stage[PP_STAGE_PROXIMITY] = t1 - t0;
    world->stats.time_stage[PP_STAGE_TIME_STEP] = t2 - t1;
    return PP_OK;
}
