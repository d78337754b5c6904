/*
 * fuzz_config — libFuzzer harness for configuration validation (issue 15, "Guards in CI").
 *
 * Every field of pp_config comes from the bytes (the enums and counts as raw integers, the
 * doubles mostly inside their documented domain and otherwise from the palette of
 * fuzz_input.h: NaN, +-Inf, negative, denormal, huge), and so does the surface a surface_fn
 * returns for each pair. What must hold:
 *  - pp_config_validate accepts exactly the configurations pegplus.h documents (the domain
 *    is written out below, from the header's words, independently of world.c), and a rejection
 *    logs "invalid configuration: <field> ..." naming a field of pp_config;
 *  - pp_world_create and pp_world_set_config give the same answer; a rejected
 *    pp_world_create leaves *out NULL, a rejected pp_world_set_config keeps the old config;
 *  - an accepted configuration steps a small scene (a box resting on a plane, a falling
 *    sphere and capsule) under its model: a step rejected (a bad h, a bad surface from
 *    surface_fn) changes nothing in ODE, and a step rejected for the surface is exactly one
 *    whose surface pp_config_validate would reject (the ode_* fields under PP_MODEL_ODE only);
 *    a PP_OK step leaves every body finite.
 */
#include <ode/ode.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define PP_FUZZ_NAME "fuzz_config"
#include "fuzz_harness.h"
#include "fuzz_input.h"
#include "pegplus/pegplus.h"


int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    pp_fuzz_init();
    return 0;
}

/* An integer field: mostly in [lo, hi + 1] (one past the end), sometimes raw. */
static int fuzz_field_int(fuzz_reader *r, int lo, int hi)
{
    const uint8_t b = fuzz_u8(r);
    if (b < 232) return lo - 1 + (int)(b % (unsigned)(hi - lo + 3));
    return (int)fuzz_u32(r);
}

static int fuzz_mode(fuzz_reader *r)
{
    static const int flags[] = {dContactApprox1, dContactApprox1_1, dContactBounce,
                                dContactSoftERP, dContactSoftCFM, dContactMu2, dContactFDir1,
                                dContactSlip1, dContactRolling, dContactApprox0};
    const uint8_t b = fuzz_u8(r);
    if (b >= 240) return (int)fuzz_u32(r);
    const unsigned bits = b | (unsigned)(fuzz_u8(r) & 3) << 8;
    int mode = 0;
    for (int i = 0; i < 10; ++i)
        if (bits & (1u << i)) mode |= flags[i];
    return mode;
}

static pp_surface fuzz_surface(fuzz_reader *r)
{
    pp_surface s;
    s.mu = fuzz_double(r, 0.0, 2.0, 1);
    s.bounce = fuzz_double(r, 0.0, 1.0, 1);
    s.bounce_vel = fuzz_double(r, 0.0, 2.0, 1);
    s.plus_v_plastic = fuzz_double(r, 0.0, 5.0, 1);
    s.ode_mode = fuzz_mode(r);
    s.ode_soft_erp = fuzz_double(r, -1.0, 1.0, 1);
    s.ode_soft_cfm = fuzz_double(r, -1.0, 1e-3, 1);
    return s;
}

/* The documented domain of a surface (pegplus.h "Surface parameters"); the ode_* fields only
 * when `ode` is set. */
static int surface_ok(const pp_surface *s, int ode)
{
    const int allowed = dContactApprox1 | dContactBounce | dContactSoftERP | dContactSoftCFM;
    if (!(s->mu >= 0.0)) return 0;                                 /* dInfinity allowed */
    if (!(s->bounce >= 0.0 && s->bounce <= 1.0)) return 0;
    if (!(s->bounce_vel >= 0.0 && isfinite(s->bounce_vel))) return 0;
    if (!(s->plus_v_plastic >= 0.0 && isfinite(s->plus_v_plastic))) return 0;
    if (!ode) return 1;
    if (!(isfinite(s->ode_soft_erp) && s->ode_soft_erp <= 1.0)) return 0;
    if (!isfinite(s->ode_soft_cfm)) return 0;
    return (s->ode_mode & ~allowed) == 0;
}

/* The documented domain of a configuration (pegplus.h, pp_config's comments). */
static int config_ok(const pp_config *c)
{
    return (c->model == PP_MODEL_ODE || c->model == PP_MODEL_STANDARD || c->model == PP_MODEL_PEG) &&
           (c->ode_stepper == PP_ODE_WORLD_STEP || c->ode_stepper == PP_ODE_QUICK_STEP) &&
           c->ode_max_contacts >= 1 && c->ode_max_contacts <= 64 && surface_ok(&c->surface, 1) &&
           c->proximity_margin > 0.0 && c->proximity_margin <= 1e3 &&
           c->friction_directions >= 2 && c->friction_directions <= 64 &&
           c->compliance >= 0.0 && c->compliance <= 1e-3 &&
           c->relinearize_iterations >= 0 && c->relinearize_iterations <= 100 &&
           c->threads >= 1 && c->threads <= PP_MAX_THREADS &&
           c->lcp_budget_seconds >= 0.0 && c->lcp_budget_seconds <= 3600.0 &&
           c->lcp_budget_pivots >= 0 && (c->load_sharing == 0 || c->load_sharing == 1) &&
           c->max_correcting_velocity > 0.0 &&
           (c->post_stabilisation == 0 || c->post_stabilisation == 1);
}

static const char *const FIELDS[] = {"model", "ode_stepper", "ode_max_contacts", "mu", "bounce",
                                     "bounce_vel", "plus_v_plastic", "ode_mode", "ode_soft_erp",
                                     "ode_soft_cfm", "proximity_margin", "friction_directions",
                                     "compliance", "relinearize_iterations", "threads",
                                     "lcp_budget_seconds", "load_sharing",
                                     "max_correcting_velocity", "lcp_budget_pivots",
                                     "post_stabilisation"};

static int names_a_field(const char *message)
{
    for (size_t i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; ++i)
        if (strstr(message, FIELDS[i])) return 1;
    return 0;
}

/* surface_fn: the bytes' surface for every pair, or "no contact". */
typedef struct pair_surface {
    pp_surface surface;
    int keep;
    int calls;
} pair_surface;

static int fuzz_surface_fn(void *user, dGeomID g1, dGeomID g2, pp_surface *surface)
{
    (void)g1, (void)g2;
    pair_surface *p = user;
    p->calls++;
    *surface = p->surface;
    return p->keep;
}

static void step_scene(const pp_config *c, pair_surface *ps, double h)
{
    dWorldID world = dWorldCreate();
    dWorldSetGravity(world, 0, 0, -9.81);
    dSpaceID space = dHashSpaceCreate(0);
    dCreatePlane(space, 0, 0, 1, 0);
    dBodyID body[3];
    dMass m;
    for (int i = 0; i < 3; ++i) body[i] = dBodyCreate(world);
    dMassSetBoxTotal(&m, 2.0, 0.5, 0.5, 0.5);
    dBodySetMass(body[0], &m);
    dGeomSetBody(dCreateBox(space, 0.5, 0.5, 0.5), body[0]);
    dBodySetPosition(body[0], 0, 0, 0.25);
    dMassSetSphereTotal(&m, 1.0, 0.2);
    dBodySetMass(body[1], &m);
    dGeomSetBody(dCreateSphere(space, 0.2), body[1]);
    dBodySetPosition(body[1], 0.1, 0, 0.8);
    dBodySetLinearVel(body[1], 0, 0, -2);
    dMassSetCapsuleTotal(&m, 1.0, 3, 0.1, 0.4);
    dBodySetMass(body[2], &m);
    dGeomSetBody(dCreateCapsule(space, 0.1, 0.4), body[2]);
    dBodySetPosition(body[2], 0.9, 0, 0.11);
    dBodySetLinearVel(body[2], -1, 0, 0);

    pp_world *pw = NULL;
    REQUIRE(pp_world_create(world, space, c, &pw) == PP_OK);
    /* the box always touches the plane, so surface_fn runs in every step of every model */
    const int surface_bad = c->surface_fn && ps->keep && !surface_ok(&ps->surface, c->model == PP_MODEL_ODE);
    const int h_bad = !(h >= PP_MIN_STEP && h <= PP_MAX_STEP);
    for (int step = 0; step < 2; ++step) {
        body_bytes before[3], after[3];
        for (int i = 0; i < 3; ++i) read_body(body[i], &before[i]);
        g_errors = 0;
        ps->calls = 0;
        const pp_status s = pp_world_step(pw, h);
        for (int i = 0; i < 3; ++i) read_body(body[i], &after[i]);
        if (h_bad || surface_bad) {
            REQUIRE(s == PP_ERR_INVALID_ARGUMENT && g_errors > 0);
            if (!h_bad) REQUIRE(ps->calls > 0);
        } else {
            REQUIRE(s != PP_ERR_INVALID_ARGUMENT && s != PP_ERR_NULL_ARGUMENT);
        }
        if (s != PP_OK)
            REQUIRE(memcmp(before, after, sizeof before) == 0); /* nothing in ODE changed */
        else
            for (int i = 0; i < 3; ++i) REQUIRE(body_finite(&after[i]));
    }
    pp_world_destroy(pw);
    dSpaceDestroy(space);
    dWorldDestroy(world);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader r = fuzz_reader_make(data, size);
    pp_config c;
    memset(&c, 0, sizeof c);
    c.model = (pp_model)fuzz_field_int(&r, 0, 2);
    c.ode_stepper = (pp_ode_stepper)fuzz_field_int(&r, 0, 1);
    c.ode_max_contacts = fuzz_field_int(&r, 1, 64);
    c.surface = fuzz_surface(&r);
    c.proximity_margin = fuzz_double(&r, 1e-4, 0.05, 1);
    c.friction_directions = fuzz_field_int(&r, 2, 64);
    c.compliance = fuzz_double(&r, 0.0, 1e-3, 1);
    c.relinearize_iterations = fuzz_field_int(&r, 0, 100);
    c.threads = fuzz_field_int(&r, 1, 4);
    c.lcp_budget_seconds = fuzz_double(&r, 0.0, 0.05, 1);
    c.load_sharing = fuzz_field_int(&r, 0, 1);
    c.max_correcting_velocity = fuzz_double(&r, 0.0, 2.0, 1);
    c.post_stabilisation = fuzz_field_int(&r, 0, 1);
    pair_surface ps;
    ps.surface = fuzz_surface(&r);
    ps.keep = fuzz_u8(&r) < 224;
    ps.calls = 0;
    if (fuzz_u8(&r) & 1) {
        c.surface_fn = fuzz_surface_fn;
        c.surface_user = &ps;
    }
    const double h = fuzz_double(&r, 0.001, 0.02, 1);

    /* pp_config_validate against the documented domain */
    g_errors = 0;
    g_message[0] = '\0';
    const pp_status s = pp_config_validate(&c);
    const int ok = config_ok(&c);
    REQUIRE(s == (ok ? PP_OK : PP_ERR_INVALID_ARGUMENT));
    if (!ok) {
        REQUIRE(g_errors == 1);
        REQUIRE(strstr(g_message, "invalid configuration"));
        REQUIRE(names_a_field(g_message));
    }

    /* pp_world_create and pp_world_set_config agree with it */
    dWorldID world = dWorldCreate();
    pp_world *pw = (pp_world *)&pw;
    REQUIRE(pp_world_create(world, NULL, &c, &pw) == s);
    REQUIRE(ok ? pw != NULL : pw == NULL);
    pp_world_destroy(pw);
    const pp_config def = pp_config_default();
    REQUIRE(pp_world_create(world, NULL, &def, &pw) == PP_OK);
    REQUIRE(pp_world_set_config(pw, &c) == s);
    const pp_config kept = pp_world_get_config(pw);
    REQUIRE(memcmp(&kept, ok ? &c : &def, sizeof kept) == 0);
    pp_world_destroy(pw);
    dWorldDestroy(world);

    /* an accepted configuration steps (threads are costly to start: at most 4 here) */
    if (ok && c.threads <= 4) step_scene(&c, &ps, h);
    return 0;
}
