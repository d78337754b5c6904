/*
 * PP_MODEL_ODE: stock ODE, exactly as a typical ODE program steps its world — the baseline
 * every comparison runs against, in the same process and on the same scene:
 *
 *   dSpaceCollide(space, ...)          near callback: recurse into sub-spaces, skip pairs whose
 *                                      bodies are joined by a non-contact joint, ask the
 *                                      surface callback, dCollide up to N contacts,
 *                                      one contact joint per contact;
 *   dWorldStep or dWorldQuickStep;
 *   dJointGroupEmpty(contact group).
 */
#include "world_internal.h"

#include <stdlib.h>

enum { PP_ODE_MAX_CONTACTS_LIMIT = 64 };

typedef struct near_context {
    pp_world *world;
    int contacts;
    double max_depth;
} near_context;

/* The pair's surface: the config default, then the user's callback. Returns 0 to skip. */
int pp_pair_surface(const pp_world *world, dGeomID g1, dGeomID g2, pp_surface *surface)
{
    *surface = world->config.surface;
    if (world->config.surface_fn)
        return world->config.surface_fn(world->config.surface_user, g1, g2, surface);
    return 1;
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

static void near_callback(void *data, dGeomID g1, dGeomID g2)
{
    near_context *ctx = data;
    pp_world *world = ctx->world;
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

    dContact contact[PP_ODE_MAX_CONTACTS_LIMIT] = {0};
    int n = dCollide(g1, g2, world->config.ode_max_contacts, &contact[0].geom, sizeof(dContact));
    for (int i = 0; i < n; ++i) {
        to_ode_surface(&surface, &contact[i].surface);
        dJointID joint = dJointCreateContact(world->ode_world, world->contact_group, &contact[i]);
        dJointAttach(joint, b1, b2);
        if (contact[i].geom.depth > ctx->max_depth) ctx->max_depth = contact[i].geom.depth;
    }
    ctx->contacts += n;
}

pp_status pp_ode_baseline_step(pp_world *world, double h)
{
    near_context ctx = {world, 0, 0.0};
    double t0 = pp_now_seconds();
    if (world->space) dSpaceCollide(world->space, &ctx, near_callback);
    double t1 = pp_now_seconds();
    if (world->config.ode_stepper == PP_ODE_QUICK_STEP)
        dWorldQuickStep(world->ode_world, h);
    else
        dWorldStep(world->ode_world, h);
    dJointGroupEmpty(world->contact_group);
    double t2 = pp_now_seconds();

    world->stats.ode_contacts = ctx.contacts;
    world->stats.ode_max_depth = ctx.max_depth;
    world->stats.time_stage[PP_STAGE_PROXIMITY] = t1 - t0;
    world->stats.time_stage[PP_STAGE_TIME_STEP] = t2 - t1;
    return PP_OK;
}
