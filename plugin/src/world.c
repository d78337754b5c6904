/*
 * The pegplus world and pp_world_step: the nine stages of DESIGN.md "One step", top to bottom.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "world_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double pp_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *pp_model_name(pp_model model)
{
    switch (model) {
    case PP_MODEL_ODE: return "ode";
    case PP_MODEL_STANDARD: return "standard";
    case PP_MODEL_PEG: return "peg";
    }
    return "unknown";
}

pp_config pp_config_default(void)
{
    pp_config c;
    memset(&c, 0, sizeof c);
    c.model = PP_MODEL_PEG;
    c.ode_stepper = PP_ODE_WORLD_STEP;
    c.ode_max_contacts = 8;
    c.surface.mu = 0.5;
    c.surface.bounce = 0.0;
    c.surface.bounce_vel = 0.0;
    c.surface.ode_mode = dContactApprox1;
    c.surface.ode_soft_erp = -1.0;
    c.surface.ode_soft_cfm = -1.0;
    c.surface_fn = NULL;
    c.surface_user = NULL;
    c.proximity_margin = 0.01;
    c.friction_directions = 8;
    return c;
}

static pp_status reject(const char *what, double value)
{
    pp_log(PP_LOG_ERROR, "invalid configuration: %s (got %g)", what, value);
    return PP_ERR_INVALID_ARGUMENT;
}

pp_status pp_config_validate(const pp_config *c)
{
    if (!c) {
        pp_log(PP_LOG_ERROR, "pp_config_validate: config is NULL");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (c->model != PP_MODEL_ODE && c->model != PP_MODEL_STANDARD && c->model != PP_MODEL_PEG)
        return reject("model must be PP_MODEL_ODE, PP_MODEL_STANDARD or PP_MODEL_PEG", c->model);
    if (c->ode_stepper != PP_ODE_WORLD_STEP && c->ode_stepper != PP_ODE_QUICK_STEP)
        return reject("ode_stepper must be PP_ODE_WORLD_STEP or PP_ODE_QUICK_STEP", c->ode_stepper);
    if (c->ode_max_contacts < 1 || c->ode_max_contacts > 64)
        return reject("ode_max_contacts must be in 1..64", c->ode_max_contacts);
    if (isnan(c->surface.mu) || c->surface.mu < 0.0)
        return reject("surface.mu must be >= 0 (dInfinity allowed)", c->surface.mu);
    if (!(c->surface.bounce >= 0.0 && c->surface.bounce <= 1.0))
        return reject("surface.bounce must be in [0, 1]", c->surface.bounce);
    if (!(c->surface.bounce_vel >= 0.0) || !isfinite(c->surface.bounce_vel))
        return reject("surface.bounce_vel must be finite and >= 0 m/s", c->surface.bounce_vel);
    if (isnan(c->surface.ode_soft_erp) || isnan(c->surface.ode_soft_cfm))
        return reject("surface.ode_soft_erp/cfm must not be NaN (negative = unset)", NAN);
    if (!(c->proximity_margin > 0.0) || !isfinite(c->proximity_margin) || c->proximity_margin > 1e3)
        return reject("proximity_margin must be finite, > 0 and at most 1e3 m", c->proximity_margin);
    if (c->friction_directions < 3 || c->friction_directions > 64)
        return reject("friction_directions must be in 3..64", c->friction_directions);
    return PP_OK;
}

pp_status pp_world_create(dWorldID ode_world, dSpaceID space, const pp_config *config,
                          pp_world **out)
{
    if (!out) {
        pp_log(PP_LOG_ERROR, "pp_world_create: out is NULL");
        return PP_ERR_NULL_ARGUMENT;
    }
    *out = NULL;
    if (!ode_world) {
        pp_log(PP_LOG_ERROR, "pp_world_create: the ODE world is NULL");
        return PP_ERR_NULL_ARGUMENT;
    }
    pp_config c = config ? *config : pp_config_default();
    pp_status st = pp_config_validate(&c);
    if (st != PP_OK) return st;

    pp_world *w = calloc(1, sizeof *w);
    if (!w) {
        pp_log(PP_LOG_ERROR, "pp_world_create: out of memory");
        return PP_ERR_NO_MEMORY;
    }
    w->ode_world = ode_world;
    w->space = space;
    w->config = c;
    w->contact_group = dJointGroupCreate(0);
    *out = w;
    return PP_OK;
}

void pp_world_destroy(pp_world *world)
{
    if (!world) return;
    pp_convex_records_free(world);
    dJointGroupDestroy(world->contact_group);
    free(world->registered);
    free(world->bodies);
    free(world->geoms);
    free(world);
}

static pp_status check_world(const pp_world *world, const char *function)
{
    if (!world) {
        pp_log(PP_LOG_ERROR, "%s: world is NULL", function);
        return PP_ERR_NULL_ARGUMENT;
    }
    return PP_OK;
}

pp_status pp_world_set_model(pp_world *world, pp_model model)
{
    pp_status st = check_world(world, "pp_world_set_model");
    if (st != PP_OK) return st;
    pp_config c = world->config;
    c.model = model;
    return pp_world_set_config(world, &c);
}

pp_model pp_world_get_model(const pp_world *world)
{
    return world ? world->config.model : PP_MODEL_ODE;
}

pp_status pp_world_set_config(pp_world *world, const pp_config *config)
{
    pp_status st = check_world(world, "pp_world_set_config");
    if (st != PP_OK) return st;
    st = pp_config_validate(config);
    if (st == PP_OK) world->config = *config;
    return st;
}

pp_config pp_world_get_config(const pp_world *world)
{
    return world ? world->config : pp_config_default();
}

const pp_step_stats *pp_world_get_stats(const pp_world *world)
{
    return world ? &world->stats : NULL;
}

pp_status pp_world_register_body(pp_world *world, dBodyID body)
{
    pp_status st = check_world(world, "pp_world_register_body");
    if (st != PP_OK) return st;
    if (!body) {
        pp_log(PP_LOG_ERROR, "pp_world_register_body: body is NULL");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (dBodyGetWorld(body) != world->ode_world) {
        pp_log(PP_LOG_ERROR, "pp_world_register_body: body belongs to another ODE world");
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < world->registered_count; ++i)
        if (world->registered[i] == body) return PP_OK;
    st = pp_grow((void **)&world->registered, &world->registered_capacity,
                 world->registered_count + 1, sizeof(dBodyID));
    if (st == PP_OK) world->registered[world->registered_count++] = body;
    return st;
}

/* ---- the pegplus models ------------------------------------------------------------------ */

static void mark(pp_world *world, pp_stage stage, double *clock)
{
    double now = pp_now_seconds();
    world->stats.time_stage[stage] += now - *clock;
    *clock = now;
}

/* Stage 1: bodies to manage, their state, and what the pegplus models cannot take yet. */
static pp_status snapshot_bodies(pp_world *world, double h)
{
    pp_status st = pp_bridge_collect(world);
    if (st == PP_OK) st = pp_bridge_snapshot(world, h);
    if (st != PP_OK) return st;
    for (int i = 0; i < world->body_count; ++i) {
        if (pp_bridge_body_has_joints(world->bodies[i].id)) {
            pp_log(PP_LOG_ERROR,
                   "body %d is attached to a joint; the %s model steps free bodies and static "
                   "geometry only (joints are not built yet): use PP_MODEL_ODE for this world",
                   i, pp_model_name(world->config.model));
            return PP_ERR_UNSUPPORTED;
        }
    }
    if (!world->warned_auto_disable && dWorldGetAutoDisableFlag(world->ode_world)) {
        world->warned_auto_disable = 1;
        pp_log(PP_LOG_WARNING, "ODE auto-disable is ignored by the %s model",
               pp_model_name(world->config.model));
    }
    world->stats.bodies = world->body_count;
    world->stats.shapes = world->geom_count;
    return PP_OK;
}

/* Lowest value of n.x over an axis-aligned box [min, max] (ODE's AABB layout). */
static double aabb_min_along(const dReal aabb[6], const dReal n[3])
{
    double s = 0.0;
    for (int k = 0; k < 3; ++k) s += n[k] * (n[k] >= 0 ? aabb[2 * k] : aabb[2 * k + 1]);
    return s;
}

static int aabbs_within(const dReal a[6], const dReal b[6], double margin)
{
    for (int k = 0; k < 3; ++k)
        if (a[2 * k] > b[2 * k + 1] + margin || b[2 * k] > a[2 * k + 1] + margin) return 0;
    return 1;
}

/* Stages 2-6 are not built yet: a pair that may come within the proximity margin during the
 * step (speculative margin eps + |v| h, DESIGN.md conventions) makes the step unsupported. */
static pp_status find_near_pairs(pp_world *world, double h)
{
    double vmax = 0.0;
    for (int i = 0; i < world->body_count; ++i) {
        const pp_body *b = &world->bodies[i];
        double v = sqrt(b->v[0] * b->v[0] + b->v[1] * b->v[1] + b->v[2] * b->v[2]);
        if (v > vmax) vmax = v;
    }
    double margin = world->config.proximity_margin + 2.0 * vmax * h;
    for (int i = 0; i < world->geom_count; ++i) {
        for (int j = i + 1; j < world->geom_count; ++j) {
            dGeomID a = world->geoms[i], b = world->geoms[j];
            if (!dGeomGetBody(a) && !dGeomGetBody(b)) continue;
            dReal box_a[6], box_b[6];
            int near;
            if (dGeomGetClass(a) == dPlaneClass || dGeomGetClass(b) == dPlaneClass) {
                dGeomID plane = dGeomGetClass(a) == dPlaneClass ? a : b;
                dGeomID other = plane == a ? b : a;
                dVector4 p;
                dGeomPlaneGetParams(plane, p);
                dGeomGetAABB(other, box_a);
                near = aabb_min_along(box_a, p) - p[3] < margin;
            } else {
                dGeomGetAABB(a, box_a);
                dGeomGetAABB(b, box_b);
                near = aabbs_within(box_a, box_b, margin);
            }
            if (near) {
                pp_log(PP_LOG_ERROR,
                       "geoms %p and %p are within the proximity margin: the %s contact model is "
                       "not built yet; use PP_MODEL_ODE (nothing was changed)",
                       (void *)a, (void *)b, pp_model_name(world->config.model));
                return PP_ERR_UNSUPPORTED;
            }
        }
    }
    return PP_OK;
}

/* Stage 7: nu* = nu + h M^-1 (f_ext + tau_gyro) (Stewart–Trinkle Eq 5 without contacts). */
static void time_step_free(pp_world *world, double h)
{
    dVector3 g;
    dWorldGetGravity(world->ode_world, g);
    double gravity[3] = {g[0], g[1], g[2]};
    for (int i = 0; i < world->body_count; ++i)
        pp_body_apply_external_impulse(&world->bodies[i], gravity, h);
}

/* Stage 8: x += h v, q <- q + h/2 (0,w) q normalised, damping (ODE's dxStepBody order). */
static void integrate_bodies(pp_world *world, double h)
{
    for (int i = 0; i < world->body_count; ++i) pp_body_integrate_pose(&world->bodies[i], h);
}

static pp_status pegplus_step(pp_world *world, double h)
{
    double clock = pp_now_seconds();
    pp_status st = snapshot_bodies(world, h);                 /* 1. snapshot    */
    mark(world, PP_STAGE_SNAPSHOT, &clock);
    if (st != PP_OK) return st;

    st = find_near_pairs(world, h);                            /* 2-6. proximity */
    mark(world, PP_STAGE_BROADPHASE, &clock);
    if (st != PP_OK) return st;

    time_step_free(world, h);                                  /* 7. time step   */
    mark(world, PP_STAGE_TIME_STEP, &clock);

    integrate_bodies(world, h);                                /* 8. integrate   */
    mark(world, PP_STAGE_INTEGRATE, &clock);

    st = pp_bridge_write_back(world);                          /* 9. write back  */
    mark(world, PP_STAGE_WRITE_BACK, &clock);
    return st;
}

static pp_status ode_step(pp_world *world, double h)
{
    pp_status st = pp_bridge_collect(world);
    if (st == PP_OK) st = pp_bridge_validate(world);
    if (st != PP_OK) return st;
    world->stats.bodies = world->body_count;
    world->stats.shapes = world->geom_count;
    return pp_ode_baseline_step(world, h);
}

pp_status pp_world_step(pp_world *world, double h)
{
    pp_status st = check_world(world, "pp_world_step");
    if (st != PP_OK) return st;
    if (!(h > 0.0) || !isfinite(h) || h > 1.0) {
        pp_log(PP_LOG_ERROR, "pp_world_step: step size h must be finite, > 0 and at most 1 s (got %g)", h);
        return PP_ERR_INVALID_ARGUMENT;
    }
    memset(&world->stats, 0, sizeof world->stats);
    world->stats.model = world->config.model;
    double start = pp_now_seconds();
    st = world->config.model == PP_MODEL_ODE ? ode_step(world, h) : pegplus_step(world, h);
    world->stats.time_total = pp_now_seconds() - start;
    world->stats.status = st;
    return st;
}
