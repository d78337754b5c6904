/*
 * libpegplus-run.so: an unchanged, dynamically linked ODE program under a pegplus model
 * (issue 13 part 2; docs/drop-in.md). Loaded with LD_PRELOAD by the pegplus-run script, its
 * definitions of these ODE functions come before libode's in the dynamic linker's search
 * order; each forwards to libode's (dlsym(RTLD_NEXT)) when pegplus itself calls it
 * (`inside`) or under PEGPLUS_MODEL=ode, which passes every call through unchanged:
 *
 *   dSpaceCollide(space, data, callback)   pegplus models: recorded, not run (its contact
 *                                          joints are not what steps the world); the callback
 *                                          is probed pair by pair in the step instead
 *   dWorldStep / dWorldQuickStep(w, h)     pegplus models: pp_world_step on the pp_world of w
 *                                          (made at its first step, with the space and near
 *                                          callback of the last dSpaceCollide)
 *   dCollide, dJointCreateContact          the probe (interpose_probe.c); under the ODE model
 *                                          the deepest contact the program hands ODE is kept
 *                                          for the summary
 *   dCreateConvex, dGeomSetConvex          the points are kept and registered with the world
 *                                          (ODE has no getter for a dConvex's shape)
 *   dGeomHeightfieldDataBuild*, ...Destroy the samples are recorded (interpose_probe.c, also in
 *                                          libpegplus.so; ODE has no getter for them either)
 *   dBodyDestroy, dGeomDestroy, dSpaceDestroy, dJointDestroy, dWorldDestroy
 *                                          pegplus forgets the object first (the destroyed-body
 *                                          hazard of pegplus.h "Lifetime" closed for these
 *                                          programs); dWorldDestroy destroys the pp_world
 *
 * At exit the summary goes to stderr (unless PEGPLUS_QUIET): model, steps, steps refused,
 * worst penetration, LCP solves, pivots and fallbacks (pp_step_stats: regularised and
 * fallback_steps and peg_fallback_steps count steps, approximate and islands_failed islands,
 * peg_fallback island solves, dropped failed solves whose answer was not applied). Worst
 * penetration: under the pegplus models after each step the deepest dCollide contact among
 * the pairs of the step's contact list (every overlapping pair the callback accepted is near,
 * hence listed); under the ODE model the deepest contact the program gave
 * dJointCreateContact (before its step).
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "world_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void (*pp_interpose_contact_hook)(dWorldID w, const dContact *contact);

static _Thread_local int inside; /* pegplus is calling ODE: forward */

typedef struct run_world {
    dWorldID id;
    dSpaceID space;
    pp_world *pw;
} run_world;

typedef struct run_convex {
    dGeomID geom;
    double *points;
    int count;
    pp_world *registered_with;
} run_convex;

static struct {
    int configured;
    pp_model model;
    int quiet;
    run_world *worlds;
    int world_count, world_capacity;
    run_convex *convexes;
    int convex_count, convex_capacity;
    dSpaceID space;                 /* the last dSpaceCollide's */
    void *data;
    dNearCallback *callback;
    long steps, refused, regularised, approximate, islands_failed, peg_fallback, impacts;
    long fallback_steps, peg_fallback_steps, dropped;
    long lcp_solves, lcp_pivots;
    double worst_penetration;
    int warned_outside;
} run;

/* dlsym's object pointer as a function pointer (POSIX allows it; ISO C needs the copy). */
static void real_symbol(const char *name, void *function_pointer)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "pegplus-run: %s not found after libpegplus-run.so (is the program an "
                        "ODE program, linked with libode?)\n", name);
        abort();
    }
    memcpy(function_pointer, &f, sizeof f);
}
#define NEXT_DEF(type, name)                                                                   \
    static type *real_##name;                                                              \
    if (!real_##name) real_symbol(#name, &real_##name)

typedef int step_fn(dWorldID, dReal);
typedef void space_collide_fn(dSpaceID, void *, dNearCallback *);
typedef dGeomID create_convex_fn(dSpaceID, const dReal *, unsigned, const dReal *, unsigned,
                                 const unsigned *);
typedef void set_convex_fn(dGeomID, const dReal *, unsigned, const dReal *, unsigned,
                           const unsigned *);
typedef void geom_fn(dGeomID);
typedef void space_fn(dSpaceID);
typedef void body_fn(dBodyID);
typedef void joint_fn(dJointID);
typedef void world_fn(dWorldID);

static void contact_hook(dWorldID w, const dContact *c);

static void configure(void)
{
    if (run.configured) return;
    run.configured = 1;
    const char *m = getenv("PEGPLUS_MODEL");
    run.model = PP_MODEL_PEG;
    if (m && *m) {
        if (!strcmp(m, "ode")) run.model = PP_MODEL_ODE;
        else if (!strcmp(m, "standard")) run.model = PP_MODEL_STANDARD;
        else if (!strcmp(m, "peg")) run.model = PP_MODEL_PEG;
        else {
            fprintf(stderr, "pegplus-run: PEGPLUS_MODEL must be ode, standard or peg (got %s)\n", m);
            exit(2);
        }
    }
    const char *q = getenv("PEGPLUS_QUIET");
    run.quiet = q && *q && strcmp(q, "0") != 0;
    pp_interpose_contact_hook = contact_hook;
}

__attribute__((constructor)) static void run_start(void) { configure(); }

__attribute__((destructor)) static void run_summary(void)
{
    if (run.quiet) return;
    if (run.model == PP_MODEL_ODE)
        fprintf(stderr, "pegplus-run: model=ode steps=%ld worst_penetration=%.3g (ODE's own "
                        "steps, every call passed through)\n", run.steps, run.worst_penetration);
    else
        fprintf(stderr, "pegplus-run: model=%s steps=%ld refused=%ld worst_penetration=%.3g "
                        "lcp_solves=%ld lcp_pivots=%ld regularised=%ld approximate=%ld "
                        "islands_failed=%ld peg_fallback=%ld impacts=%ld fallback_steps=%ld "
                        "peg_fallback_steps=%ld dropped=%ld\n",
                pp_model_name(run.model), run.steps, run.refused, run.worst_penetration,
                run.lcp_solves, run.lcp_pivots, run.regularised, run.approximate,
                run.islands_failed, run.peg_fallback, run.impacts, run.fallback_steps,
                run.peg_fallback_steps, run.dropped);
}

static void contact_hook(dWorldID w, const dContact *c)
{
    (void)w;
    if (inside) return;
    if (run.model == PP_MODEL_ODE) {
        if (c->geom.depth > run.worst_penetration) run.worst_penetration = c->geom.depth;
    } else if (!run.warned_outside) {
        run.warned_outside = 1;
        pp_log(PP_LOG_WARNING,
               "pegplus-run: the program made a contact joint outside dSpaceCollide's near "
               "callback (dSpaceCollide2 or a direct dCollide, between dGeomID %p (%s) and "
               "dGeomID %p (%s)): the %s model ignores contact joints; reported once",
               (void *)c->geom.g1, pp_geom_class_name(c->geom.g1), (void *)c->geom.g2,
               pp_geom_class_name(c->geom.g2), pp_model_name(run.model));
    }
}

static int geom_in_space(dGeomID g, dSpaceID space)
{
    for (dSpaceID s = dGeomGetSpace(g); s; s = dGeomGetSpace((dGeomID)s))
        if (s == space) return 1;
    return 0;
}

static run_world *find_world(dWorldID w)
{
    for (int i = 0; i < run.world_count; ++i)
        if (run.worlds[i].id == w) return &run.worlds[i];
    return NULL;
}

static void forget_convex_records(pp_world *pw)
{
    for (int i = 0; i < run.convex_count; ++i)
        if (run.convexes[i].registered_with == pw) run.convexes[i].registered_with = NULL;
}

/* The pp_world of w, made (or remade for a new space) with the last dSpaceCollide's space. */
static run_world *world_for(dWorldID w)
{
    run_world *rw = find_world(w);
    if (rw && run.space && rw->space != run.space) {
        forget_convex_records(rw->pw);
        pp_world_destroy(rw->pw);
        rw->pw = NULL;
    }
    if (!rw) {
        if (pp_grow((void **)&run.worlds, &run.world_capacity, run.world_count + 1,
                    sizeof(run_world)) != PP_OK)
            return NULL;
        rw = &run.worlds[run.world_count++];
        memset(rw, 0, sizeof *rw);
        rw->id = w;
    }
    if (!rw->pw) {
        pp_config c = pp_config_default();
        c.model = run.model;
        rw->space = run.space;
        if (pp_world_create(w, run.space, &c, &rw->pw) != PP_OK) return NULL;
    }
    pp_world_set_near_callback(rw->pw, run.data, run.callback);
    /* convexes made since: registered with the world whose space holds them */
    for (int i = 0; i < run.convex_count; ++i) {
        run_convex *cv = &run.convexes[i];
        if (cv->registered_with || !rw->space || !geom_in_space(cv->geom, rw->space)) continue;
        cv->registered_with = rw->pw; /* tried once: a refused one is named by the step */
        pp_world_register_convex(rw->pw, cv->geom, cv->points, cv->count);
    }
    return rw;
}

/* The deepest dCollide contact among the pairs of the last step's contact list. */
static double step_penetration(pp_world *pw)
{
    const pp_contact_info *c;
    int n = pp_world_get_contacts(pw, &c);
    double worst = 0.0;
    dGeomID last1 = NULL, last2 = NULL;
    dContactGeom contacts[16];
    for (int i = 0; i < n; ++i) {
        if (c[i].g1 == last1 && c[i].g2 == last2) continue;
        last1 = c[i].g1;
        last2 = c[i].g2;
        int m = dCollide(c[i].g1, c[i].g2, 16, contacts, sizeof(dContactGeom));
        for (int k = 0; k < m; ++k)
            if (contacts[k].depth > worst) worst = contacts[k].depth;
    }
    return worst;
}

static int pegplus_step(dWorldID w, dReal h)
{
    inside++;
    run_world *rw = world_for(w);
    pp_status st = rw ? pp_world_step(rw->pw, h) : PP_ERR_NO_MEMORY;
    run.steps++;
    if (st != PP_OK) {
        run.refused++;
    } else {
        const pp_step_stats *s = pp_world_get_stats(rw->pw);
        run.lcp_solves += s->lcp_solves;
        run.lcp_pivots += s->lcp_pivots;
        run.regularised += s->lcp_fallback == 1;
        run.approximate += s->lcp_approximate;
        run.islands_failed += s->islands_failed;
        run.fallback_steps += s->lcp_fallback != 0;
        run.peg_fallback_steps += s->peg_fallback != 0;
        run.dropped += s->lcp_dropped;
        run.peg_fallback += s->peg_fallback;
        run.impacts += s->impacts;
        double d = step_penetration(rw->pw);
        if (d > run.worst_penetration) run.worst_penetration = d;
    }
    inside--;
    return st == PP_OK;
}

int dWorldStep(dWorldID w, dReal h)
{
    NEXT_DEF(step_fn, dWorldStep);
    configure();
    if (inside) return real_dWorldStep(w, h);
    if (run.model != PP_MODEL_ODE) return pegplus_step(w, h);
    run.steps++;
    return real_dWorldStep(w, h);
}

int dWorldQuickStep(dWorldID w, dReal h)
{
    NEXT_DEF(step_fn, dWorldQuickStep);
    configure();
    if (inside) return real_dWorldQuickStep(w, h);
    if (run.model != PP_MODEL_ODE) return pegplus_step(w, h);
    run.steps++;
    return real_dWorldQuickStep(w, h);
}

void dSpaceCollide(dSpaceID space, void *data, dNearCallback *callback)
{
    NEXT_DEF(space_collide_fn, dSpaceCollide);
    configure();
    if (inside || run.model == PP_MODEL_ODE) {
        real_dSpaceCollide(space, data, callback);
        return;
    }
    run.space = space;
    run.data = data;
    run.callback = callback;
}

static void keep_convex(dGeomID g, const dReal *points, unsigned count)
{
    run_convex *cv = NULL;
    for (int i = 0; i < run.convex_count && !cv; ++i)
        if (run.convexes[i].geom == g) cv = &run.convexes[i];
    if (cv) {
        if (cv->registered_with && pp_convex_find(cv->registered_with, g))
            pp_world_unregister_convex(cv->registered_with, g);
        free(cv->points);
    } else {
        if (pp_grow((void **)&run.convexes, &run.convex_capacity, run.convex_count + 1,
                    sizeof(run_convex)) != PP_OK)
            return;
        cv = &run.convexes[run.convex_count++];
    }
    memset(cv, 0, sizeof *cv);
    cv->geom = g;
    cv->points = malloc(3 * (size_t)count * sizeof(double));
    if (!cv->points) {
        run.convex_count--;
        return;
    }
    for (unsigned i = 0; i < 3 * count; ++i) cv->points[i] = points[i];
    cv->count = (int)count;
}

dGeomID dCreateConvex(dSpaceID space, const dReal *planes, unsigned planecount,
                      const dReal *points, unsigned pointcount, const unsigned *polygons)
{
    NEXT_DEF(create_convex_fn, dCreateConvex);
    dGeomID g = real_dCreateConvex(space, planes, planecount, points, pointcount, polygons);
    if (!inside && g && points) keep_convex(g, points, pointcount);
    return g;
}

void dGeomSetConvex(dGeomID g, const dReal *planes, unsigned planecount, const dReal *points,
                    unsigned pointcount, const unsigned *polygons)
{
    NEXT_DEF(set_convex_fn, dGeomSetConvex);
    real_dGeomSetConvex(g, planes, planecount, points, pointcount, polygons);
    if (!inside && g && points) keep_convex(g, points, pointcount);
}

static void forget_geom(dGeomID g)
{
    for (int i = 0; i < run.convex_count; ++i) {
        run_convex *cv = &run.convexes[i];
        if (cv->geom != g) continue;
        if (cv->registered_with && pp_convex_find(cv->registered_with, g))
            pp_world_unregister_convex(cv->registered_with, g);
        free(cv->points);
        *cv = run.convexes[--run.convex_count];
        return;
    }
}

void dGeomDestroy(dGeomID g)
{
    NEXT_DEF(geom_fn, dGeomDestroy);
    if (!inside && g) forget_geom(g);
    real_dGeomDestroy(g);
}

/* A space with cleanup on destroys its geoms inside libode (which may not come back through
 * dGeomDestroy above): forget them first, and the space of any world stepped in it. */
static void forget_space(dSpaceID space)
{
    int n = dSpaceGetNumGeoms(space);
    for (int i = 0; i < n; ++i) {
        dGeomID g = dSpaceGetGeom(space, i);
        if (dGeomIsSpace(g)) {
            if (dSpaceGetCleanup((dSpaceID)g)) forget_space((dSpaceID)g);
        } else {
            forget_geom(g);
        }
    }
}

void dSpaceDestroy(dSpaceID space)
{
    NEXT_DEF(space_fn, dSpaceDestroy);
    if (!inside && space) {
        if (dSpaceGetCleanup(space)) forget_space(space);
        for (int i = 0; i < run.world_count; ++i)
            if (run.worlds[i].space == space && run.worlds[i].pw) {
                run.worlds[i].pw->space = NULL;
                run.worlds[i].space = NULL;
            }
        if (run.space == space) {
            run.space = NULL;
            run.callback = NULL;
        }
    }
    real_dSpaceDestroy(space);
}

void dBodyDestroy(dBodyID b)
{
    NEXT_DEF(body_fn, dBodyDestroy);
    if (!inside && b)
        for (int i = 0; i < run.world_count; ++i) {
            pp_world *pw = run.worlds[i].pw;
            for (int k = 0; pw && k < pw->registered_count; ++k)
                if (pw->registered[k] == b) {
                    pp_world_unregister_body(pw, b);
                    break;
                }
        }
    real_dBodyDestroy(b);
}

/* pegplus keeps, across steps, only the captured assembly of joints whose rows come from ODE's
 * public API (stage_joints.c): dropped, and taken afresh at the next step. */
void dJointDestroy(dJointID j)
{
    NEXT_DEF(joint_fn, dJointDestroy);
    if (!inside && j)
        for (int i = 0; i < run.world_count; ++i)
            if (run.worlds[i].pw) pp_joint_captures_free(run.worlds[i].pw);
    real_dJointDestroy(j);
}

void dWorldDestroy(dWorldID w)
{
    NEXT_DEF(world_fn, dWorldDestroy);
    if (!inside) {
        run_world *rw = find_world(w);
        if (rw) {
            inside++;
            forget_convex_records(rw->pw);
            pp_world_destroy(rw->pw);
            inside--;
            *rw = run.worlds[--run.world_count];
        }
    }
    real_dWorldDestroy(w);
}
