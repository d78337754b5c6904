/*
 * pegplus-soak — random scenes stepped the way a user's program steps them, with invariants
 * checked after every step (issue 15, "Reliability").
 *
 * A scene is a pure function of its seed: a static ground plane (and sometimes a static box),
 * 1..6 dynamic boxes, spheres, capsules and convex hulls (pp_convex_create) placed apart in
 * cells of a grid, with random orientations, velocities and spins; sometimes kinematic bodies,
 * a disabled body, and ODE ball / hinge / slider joints with stops (and, in active scenes,
 * motors); one surface (mu, bounce) per scene. The model is switched every 10..80 steps
 * between PP_MODEL_ODE, PP_MODEL_STANDARD and PP_MODEL_PEG. Each scene runs in its own child
 * process (a crash or a hang is reported as the scene's failure and the soak goes on).
 *
 * After every step:
 *  - status          anything but PP_OK is reported;
 *  - untouched       after a non-OK status every body's position, quaternion, velocities and
 *                    force/torque accumulators are bitwise what they were before the call;
 *  - stuck           a world that fails two steps in a row ("never the same failure forever");
 *  - finite          after PP_OK no NaN or Inf in any body's state;
 *  - energy          passive scenes (no kinematic body, no motor), pegplus models, steps that
 *                    start without penetration: kinetic + gravitational potential energy may
 *                    rise by at most ENERGY_BOUND (below) in a step.
 * Every failure is printed with the command line that reproduces it.
 *
 * Energy bound. ODE's (and pegplus's) semi-implicit Euler: nu* = nu + h g (the free velocity),
 * nu+ = nu* + W P (the contact impulses), x+ = x + h v+. With G = |g| and the vertical
 * velocities v_z (start) and v_z+ (end), the kinetic energy of the free step is
 * KE(nu*) = KE(nu) - m G h v_z + m G^2 h^2 / 2 and the potential energy changes by
 * m G h v_z+, so exactly
 *     dE = [KE(nu+) - KE(nu*)] + m G h (v_z+ - v_z) + m G^2 h^2 / 2       (per body, summed).
 * The bracket is the contact model's (<= 0 in an inelastic, passive step: what is checked);
 * the rest is the integrator's: -m G^2 h^2 / 2 in free fall, +m G^2 h^2 / 2 at rest, and
 * m G h dv_z more at a step whose impulses raise v_z by dv_z: the potential energy is
 * integrated with the end velocity over the whole step, O(h) in a velocity jump (soak seed 6:
 * a 33 kg capsule spinning at 37 rad/s lands, v_z -0.155 -> +0.045 m/s at h = 0.01: +0.65 J,
 * 1.15 times the h^2 term alone, while its kinetic energy ends 0.07 J below nu*'s). So a
 * step may gain sum_i [m_i G^2 h^2 / 2 + m_i G h max(0, v_z,i+ - v_z,i)] (the integrator's
 * term, its O(h) part counted only where positive, so the bound is never below the O(h^2)
 * one) plus a relative round-off tolerance (1e-9 of the energy's magnitude). A step split at
 * an impact (sub-steps) has one such term per sub-step, whose velocities are not seen from
 * outside: there only the O(h^2) part is allowed. Joint stops and equalities correct drift with ERP, which
 * adds energy in proportion to the drift; scenes start with none (joints anchored where the
 * bodies are, stops around the start position), and the bound is checked only on steps whose
 * contacts start without penetration (min_gap > -PENETRATION_SKIP), since the pegplus models
 * push an overlap left by PP_MODEL_ODE out at psi/h, which gains energy by design.
 */
#define _GNU_SOURCE /* strsignal, clock_gettime */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ode/ode.h>

#include "pegplus/geometry.h"
#include "pegplus/pegplus.h"

#define MAX_BODIES 10
#define MAX_JOINTS 4
#define GRAVITY 9.81
#define ENERGY_RELATIVE 1e-9
#define PENETRATION_SKIP 1e-6 /* m */

/* options of the run (main) */
static int g_quiet = 0, g_trace = 0;
static int g_model = -1; /* --model: every step with this model, no switches */
static int g_relinearize = -1; /* --relinearize: overrides the scene's iterations */
static char g_repro_extra[96] = "";

/* ------------------------------------------------------------------ random numbers */

/* splitmix64: the scene of a seed is the same on every machine and libc. */
typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform(rng *r, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(rng_next(r) >> 11) * 0x1.0p-53);
}

static int below(rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }

static int chance(rng *r, double p) { return uniform(r, 0.0, 1.0) < p; }

/* ------------------------------------------------------------------ the scene */

typedef struct scene {
    dWorldID world;
    dSpaceID space;
    pp_world *pw;
    dBodyID bodies[MAX_BODIES];
    int kinematic[MAX_BODIES];
    int kind[MAX_BODIES];
    int nbodies;
    dJointID joints[MAX_JOINTS];
    int njoints;
    int passive;  /* no kinematic body, no motor */
    int motors;
    double h;
    pp_config config;
    char summary[256];
} scene;

typedef struct body_state {
    dReal x[3], q[4], v[3], w[3], f[3], t[3];
} body_state;

/* A dynamic or kinematic body of a random shape whose extent from its centre is below 0.45 m
 * (cells are 1 m apart, so bodies start apart). Returns the shape kind. */
static int add_body(scene *s, rng *r, const double at[3], int kind)
{
    dBodyID b = dBodyCreate(s->world);
    dMass m;
    dGeomID g = NULL;
    const double density = uniform(r, 200.0, 3000.0);
    if (kind == 0) {
        const double lx = uniform(r, 0.05, 0.5), ly = uniform(r, 0.05, 0.5), lz = uniform(r, 0.05, 0.5);
        g = dCreateBox(s->space, lx, ly, lz);
        dMassSetBox(&m, density, lx, ly, lz);
    } else if (kind == 1) {
        const double rad = uniform(r, 0.03, 0.3);
        g = dCreateSphere(s->space, rad);
        dMassSetSphere(&m, density, rad);
    } else if (kind == 2) {
        const double rad = uniform(r, 0.02, 0.15), len = uniform(r, 0.02, 0.5);
        g = dCreateCapsule(s->space, rad, len);
        dMassSetCapsule(&m, density, 3, rad, len);
    } else {
        double pts[3 * 16];
        const int n = 5 + below(r, 12);
        const double size = uniform(r, 0.05, 0.3);
        for (int i = 0; i < 3 * n; ++i)
            pts[i] = uniform(r, -size, size);
        pp_polytope *poly = NULL;
        double mass = 0.0, com[3], inertia[9];
        if (pp_polytope_from_points(pts, n, &poly) != PP_OK) {
            dBodyDestroy(b);
            return add_body(s, r, at, 0);
        }
        pp_polytope_mass_properties(poly, density, &mass, com, inertia);
        pp_polytope_destroy(poly);
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < 3; ++k)
                pts[3 * i + k] -= com[k];
        if (pp_convex_create(s->pw, s->space, pts, n, &g) != PP_OK) {
            dBodyDestroy(b);
            return add_body(s, r, at, 0);
        }
        dMassSetParameters(&m, mass, 0, 0, 0, inertia[0], inertia[4], inertia[8], inertia[1],
                           inertia[2], inertia[5]);
    }
    dGeomSetBody(g, b);
    dBodySetMass(b, &m);
    s->kind[s->nbodies] = kind;
    dBodySetPosition(b, at[0], at[1], at[2]);
    dQuaternion q = {uniform(r, -1, 1), uniform(r, -1, 1), uniform(r, -1, 1), uniform(r, -1, 1)};
    const double qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; ++k)
        q[k] = qn > 1e-3 ? q[k] / qn : (k == 0);
    dBodySetQuaternion(b, q);
    /* mostly moderate, sometimes fast */
    const double vmax = chance(r, 0.1) ? 25.0 : 3.0, wmax = chance(r, 0.1) ? 40.0 : 6.0;
    dBodySetLinearVel(b, uniform(r, -vmax, vmax), uniform(r, -vmax, vmax), uniform(r, -vmax, vmax));
    dBodySetAngularVel(b, uniform(r, -wmax, wmax), uniform(r, -wmax, wmax), uniform(r, -wmax, wmax));
    s->bodies[s->nbodies++] = b;
    return kind;
}

/* A joint between body a and b (b may be 0: the static world), anchored midway between them
 * (at body a for the world) so it starts without error; stops around the start position. */
static void add_joint(scene *s, rng *r, dBodyID a, dBodyID b, int active)
{
    const dReal *xa = dBodyGetPosition(a), *xb = b ? dBodyGetPosition(b) : xa;
    const double mid[3] = {0.5 * (xa[0] + xb[0]), 0.5 * (xa[1] + xb[1]), 0.5 * (xa[2] + xb[2])};
    double axis[3] = {uniform(r, -1, 1), uniform(r, -1, 1), uniform(r, -1, 1)};
    const double an = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    for (int k = 0; k < 3; ++k)
        axis[k] = an > 1e-3 ? axis[k] / an : (k == 2);
    const int type = below(r, 3);
    dJointID j;
    int param_base = -1;
    if (type == 0) {
        j = dJointCreateBall(s->world, 0);
        dJointAttach(j, a, b);
        dJointSetBallAnchor(j, mid[0], mid[1], mid[2]);
    } else if (type == 1) {
        j = dJointCreateHinge(s->world, 0);
        dJointAttach(j, a, b);
        dJointSetHingeAnchor(j, mid[0], mid[1], mid[2]);
        dJointSetHingeAxis(j, axis[0], axis[1], axis[2]);
        param_base = 1;
    } else {
        j = dJointCreateSlider(s->world, 0);
        dJointAttach(j, a, b);
        dJointSetSliderAxis(j, axis[0], axis[1], axis[2]);
        param_base = 2;
    }
    if (param_base > 0) {
        void (*set)(dJointID, int, dReal) = param_base == 1 ? dJointSetHingeParam : dJointSetSliderParam;
        if (chance(r, 0.7)) {
            const double span = param_base == 1 ? 1.5 : 0.4;
            set(j, dParamLoStop, -uniform(r, 0.05, span));
            set(j, dParamHiStop, uniform(r, 0.05, span));
            if (active)
                set(j, dParamBounce, uniform(r, 0.0, 1.0));
        }
        if (active && chance(r, 0.7)) {
            set(j, dParamVel, uniform(r, -3.0, 3.0));
            set(j, dParamFMax, uniform(r, 0.1, 50.0));
            s->motors++;
        }
    }
    s->joints[s->njoints++] = j;
}

static void scene_destroy(scene *s)
{
    if (s->pw)
        pp_world_destroy(s->pw);
    if (s->space)
        dSpaceDestroy(s->space);
    if (s->world)
        dWorldDestroy(s->world);
    memset(s, 0, sizeof *s);
}

static void scene_build(scene *s, uint64_t seed)
{
    rng r = {seed * 0x2545f4914f6cdd1dull + 1};
    memset(s, 0, sizeof *s);
    s->world = dWorldCreate();
    s->space = dHashSpaceCreate(0);
    dWorldSetGravity(s->world, 0, 0, -GRAVITY);
    dCreatePlane(s->space, 0, 0, 1, 0);
    s->h = (const double[]){0.01, 0.005, 0.0025, 0.02}[below(&r, 4)];
    pp_config c = pp_config_default();
    c.surface.mu = (const double[]){0.0, 0.2, 0.5, 1.0}[below(&r, 4)];
    c.surface.bounce = chance(&r, 0.5) ? 0.0 : uniform(&r, 0.1, 1.0);
    c.surface.bounce_vel = chance(&r, 0.5) ? 0.0 : 0.1;
    c.friction_directions = chance(&r, 0.5) ? 4 : 8;
    c.relinearize_iterations = chance(&r, 0.2) ? 0 : c.relinearize_iterations;
    c.ode_stepper = chance(&r, 0.3) ? PP_ODE_QUICK_STEP : PP_ODE_WORLD_STEP;
    /* no clock: a scene's steps must not depend on the machine's speed (a sanitizer build, a
     * loaded CI machine), so a seed reproduces anywhere; the work-based pivot caps bound each
     * solve, and --scene-timeout a scene */
    c.lcp_budget_seconds = 0.0;
    c.model = (pp_model)below(&r, 3);
    if (g_relinearize >= 0)
        c.relinearize_iterations = g_relinearize;
    s->config = c;
    if (pp_world_create(s->world, s->space, &c, &s->pw) != PP_OK) {
        fprintf(stderr, "pegplus-soak: pp_world_create failed\n");
        exit(2);
    }
    const int active = chance(&r, 0.35);
    if (chance(&r, 0.3)) { /* a static box on the ground in a cell of its own */
        dGeomID g = dCreateBox(s->space, uniform(&r, 0.2, 0.9), uniform(&r, 0.2, 0.9), uniform(&r, 0.1, 0.6));
        dGeomSetPosition(g, 0.0, -1.0, 0.0);
    }
    /* cells of a 3 x 3 grid, two layers */
    const int n = 1 + below(&r, 6);
    int used[18] = {0};
    int counts[4] = {0};
    for (int i = 0; i < n; ++i) {
        int cell;
        do
            cell = below(&r, 18);
        while (used[cell]);
        used[cell] = 1;
        const double at[3] = {(cell % 3) - 1.0, ((cell / 3) % 3) - 1.0 + 0.0,
                              0.5 + (cell / 9) + uniform(&r, 0.0, 0.4)};
        counts[add_body(s, &r, at, below(&r, 4))]++;
    }
    int kin = 0;
    if (active) { /* kinematic bodies moving at constant velocity and spin, near the ground */
        const int nk = 1 + below(&r, 2);
        for (int i = 0; i < nk && s->nbodies < MAX_BODIES; ++i) {
            const double at[3] = {uniform(&r, -2.0, 2.0), 2.5 + i, uniform(&r, 0.0, 0.4)};
            add_body(s, &r, at, below(&r, 2));
            dBodyID b = s->bodies[s->nbodies - 1];
            dBodySetKinematic(b);
            dBodySetLinearVel(b, uniform(&r, -1, 1), uniform(&r, -2, 0), uniform(&r, -0.2, 0.2));
            s->kinematic[s->nbodies - 1] = 1;
            kin++;
        }
    }
    int disabled = 0;
    if (n > 1 && chance(&r, 0.1)) {
        dBodyDisable(s->bodies[0]);
        disabled = 1;
    }
    /* Joint error corrected at ERP / h adds energy in proportion to the drift the integrator
     * leaves (dWorldStep does the same); passive scenes correct none (world ERP, which the
     * stops' ERP copies at dJointCreate*, is 0), so their energy can only fall. */
    const int passive = !active;
    if (passive)
        dWorldSetERP(s->world, 0.0);
    if (chance(&r, 0.4)) {
        const int nj = 1 + below(&r, 3);
        for (int i = 0; i < nj && s->njoints < MAX_JOINTS; ++i) {
            const int a = below(&r, n), b = below(&r, n + 1);
            add_joint(s, &r, s->bodies[a], b < n && b != a ? s->bodies[b] : 0, active);
        }
    }
    s->passive = passive && !kin && !s->motors;
    snprintf(s->summary, sizeof s->summary,
             "h=%g mu=%g bounce=%g k=%d relin=%d boxes=%d spheres=%d capsules=%d hulls=%d "
             "kinematic=%d disabled=%d joints=%d motors=%d %s",
             s->h, c.surface.mu, c.surface.bounce, c.friction_directions, c.relinearize_iterations,
             counts[0], counts[1], counts[2], counts[3], kin, disabled, s->njoints, s->motors,
             s->passive ? "passive" : "active");
}

/* ------------------------------------------------------------------ invariants */

static void save_state(const scene *s, body_state *out)
{
    for (int i = 0; i < s->nbodies; ++i) {
        dBodyID b = s->bodies[i];
        memcpy(out[i].x, dBodyGetPosition(b), sizeof out[i].x);
        memcpy(out[i].q, dBodyGetQuaternion(b), sizeof out[i].q);
        memcpy(out[i].v, dBodyGetLinearVel(b), sizeof out[i].v);
        memcpy(out[i].w, dBodyGetAngularVel(b), sizeof out[i].w);
        memcpy(out[i].f, dBodyGetForce(b), sizeof out[i].f);
        memcpy(out[i].t, dBodyGetTorque(b), sizeof out[i].t);
    }
}

static int state_finite(const body_state *st, int n)
{
    for (int i = 0; i < n; ++i) {
        const dReal *p = (const dReal *)&st[i];
        for (size_t k = 0; k < sizeof st[i] / sizeof(dReal); ++k)
            if (!isfinite(p[k]))
                return 0;
    }
    return 1;
}

/* Kinetic + gravitational potential energy of the dynamic bodies (J), and sum m (kg). */
static double energy(const scene *s, double *mass_sum, double *magnitude)
{
    double e = 0.0, m_sum = 0.0, mag = 0.0;
    for (int i = 0; i < s->nbodies; ++i) {
        if (s->kinematic[i])
            continue;
        dBodyID b = s->bodies[i];
        dMass m;
        dBodyGetMass(b, &m);
        const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b), *x = dBodyGetPosition(b);
        const dReal *R = dBodyGetRotation(b);
        /* world inertia R I R^T applied to w: I_w w = R (I (R^T w)) */
        double wb[3], iw[3];
        for (int k = 0; k < 3; ++k)
            wb[k] = R[0 * 4 + k] * w[0] + R[1 * 4 + k] * w[1] + R[2 * 4 + k] * w[2];
        for (int k = 0; k < 3; ++k)
            iw[k] = m.I[k * 4 + 0] * wb[0] + m.I[k * 4 + 1] * wb[1] + m.I[k * 4 + 2] * wb[2];
        const double ke = 0.5 * m.mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
                          0.5 * (wb[0] * iw[0] + wb[1] * iw[1] + wb[2] * iw[2]);
        const double pe = m.mass * GRAVITY * x[2];
        e += ke + pe;
        mag += ke + fabs(pe);
        m_sum += m.mass;
    }
    *mass_sum = m_sum;
    *magnitude = mag;
    return e;
}

/* The integrator's O(h) term of a step (see "Energy bound" above): sum over the dynamic
 * bodies of m G h max(0, v_z+ - v_z), J. */
static double velocity_jump_term(const scene *s, const body_state *before, const body_state *after)
{
    double term = 0.0;
    for (int i = 0; i < s->nbodies; ++i) {
        if (s->kinematic[i])
            continue;
        dMass m;
        dBodyGetMass(s->bodies[i], &m);
        term += m.mass * GRAVITY * s->h * fmax(0.0, after[i].v[2] - before[i].v[2]);
    }
    return term;
}

/* ------------------------------------------------------------------ one scene */

typedef struct result {
    int steps;         /* steps run */
    int failed_steps;  /* non-OK status */
    int stuck;         /* 1: some failure repeated at the next step */
    int touched;       /* failed steps that changed ODE */
    int nonfinite;     /* OK steps that wrote NaN/Inf */
    int energy_gain;   /* passive steps over the bound */
    int energy_checked;/* passive steps checked */
    double worst_gain; /* J, the largest gain over its bound */
} result;


static void report(uint64_t seed, int steps, int step, pp_model model, const char *what,
                   const char *detail)
{
    printf("FAIL seed %llu step %d (%s): %s: %s\n  reproduce: pegplus-soak --seed %llu --steps %d%s\n",
           (unsigned long long)seed, step, pp_model_name(model), what, detail,
           (unsigned long long)seed, steps < step + 1 ? steps : step + 1, g_repro_extra);
    fflush(stdout);
}

static void run_scene(uint64_t seed, int steps, result *res)
{
    scene s;
    scene_build(&s, seed);
    memset(res, 0, sizeof *res);
    if (!g_quiet)
        printf("seed %llu: %s\n", (unsigned long long)seed, s.summary);
    if (g_trace) {
        static const char *names[] = {"box", "sphere", "capsule", "hull"};
        for (int i = 0; i < s.nbodies; ++i) {
            dMass m;
            dBodyGetMass(s.bodies[i], &m);
            printf("  body %d: %s, %.17g kg%s", i, names[s.kind[i]], m.mass,
                   s.kinematic[i] ? ", kinematic" : "");
            dGeomID g = dBodyGetFirstGeom(s.bodies[i]);
            if (g && dGeomGetClass(g) == dBoxClass) { /* its sides, to rebuild a minimised scene */
                dVector3 l;
                dGeomBoxGetLengths(g, l);
                printf(" (%.17g x %.17g x %.17g m)", l[0], l[1], l[2]);
            }
            printf("\n");
        }
    }
    rng r = {seed ^ 0x5eedull};
    int next_switch = 10 + below(&r, 70), fail_streak = 0, reported_status = 0;
    if (g_model >= 0) {
        pp_world_set_model(s.pw, (pp_model)g_model);
        next_switch = -1;
    }
    body_state before[MAX_BODIES], after[MAX_BODIES];
    char detail[512];
    for (int step = 0; step < steps; ++step) {
        if (step == next_switch) {
            pp_world_set_model(s.pw, (pp_model)below(&r, 3));
            next_switch = step + 10 + below(&r, 70);
        }
        const pp_model model = pp_world_get_model(s.pw);
        double mass_sum, magnitude;
        const double e0 = energy(&s, &mass_sum, &magnitude);
        save_state(&s, before);
        const pp_status st = pp_world_step(s.pw, s.h);
        save_state(&s, after);
        res->steps++;
        if (g_trace) {
            double m2, mag2;
            const pp_step_stats *t = pp_world_get_stats(s.pw);
            printf("  step %d %s %s E %.9g contacts %d impacts %d substeps %d min_gap %.3g lcp %d "
                   "fb %d %.3g s\n    solves %d pivots %d largest %d residual %.3g relinearizations %d "
                   "refused %d cut %d peg_fallback %d\n",
                   step, pp_model_name(model), pp_status_string(st), energy(&s, &m2, &mag2),
                   t->contacts, t->impacts, t->substeps, t->min_gap, t->lcp_size, t->lcp_fallback,
                   t->time_total, t->lcp_solves, t->lcp_pivots, t->lcp_largest, t->lcp_residual,
                   t->relinearizations, t->relinearize_refused, t->relinearize_cut,
                   t->peg_fallback);
            for (int i = 0; i < s.nbodies; ++i)
                printf("    body %d x (%.6g %.6g %.6g) v (%.6g %.6g %.6g) w (%.6g %.6g %.6g)\n", i,
                       after[i].x[0], after[i].x[1], after[i].x[2], after[i].v[0], after[i].v[1],
                       after[i].v[2], after[i].w[0], after[i].w[1], after[i].w[2]);
            if (g_trace > 1) /* --trace-exact: the state to the last bit */
                for (int i = 0; i < s.nbodies; ++i) {
                    const body_state *b = &after[i];
                    printf("    exact %d x %.17g %.17g %.17g q %.17g %.17g %.17g %.17g v %.17g %.17g "
                           "%.17g w %.17g %.17g %.17g\n", i, b->x[0], b->x[1], b->x[2], b->q[0],
                           b->q[1], b->q[2], b->q[3], b->v[0], b->v[1], b->v[2], b->w[0], b->w[1],
                           b->w[2]);
                }
            fflush(stdout);
        }
        if (st != PP_OK) {
            res->failed_steps++;
            if (memcmp(before, after, sizeof(body_state) * (size_t)s.nbodies) != 0) {
                res->touched++;
                report(seed, steps, step, model, "ODE changed by a failed step", pp_status_string(st));
            }
            if (++fail_streak == 2) {
                res->stuck = 1;
                snprintf(detail, sizeof detail, "%s twice in a row", pp_status_string(st));
                report(seed, steps, step, model, "world stuck", detail);
            } else if (!reported_status++) {
                report(seed, steps, step, model, "status", pp_status_string(st));
            }
            continue;
        }
        fail_streak = 0;
        if (!state_finite(after, s.nbodies)) {
            res->nonfinite++;
            report(seed, steps, step, model, "NaN/Inf written to ODE", "");
            break;
        }
        const pp_step_stats *stats = pp_world_get_stats(s.pw);
        if (s.passive && model != PP_MODEL_ODE && stats->min_gap > -PENETRATION_SKIP) {
            double m2, mag2;
            const double e1 = energy(&s, &m2, &mag2);
            const double bound = 0.5 * mass_sum * GRAVITY * GRAVITY * s.h * s.h +
                                 (stats->substeps == 1 ? velocity_jump_term(&s, before, after) : 0.0) +
                                 ENERGY_RELATIVE * (magnitude > mag2 ? magnitude : mag2);
            res->energy_checked++;
            if (e1 - e0 > bound) {
                if (res->energy_gain++ == 0 || (e1 - e0) / bound > res->worst_gain) {
                    snprintf(detail, sizeof detail,
                             "energy %.9g -> %.9g J, gain %.3g J = %.3g x the bound %.3g J "
                             "(impacts %d, substeps %d, min gap %.3g m, relinearize_refused %d)",
                             e0, e1, e1 - e0, (e1 - e0) / bound, bound, stats->impacts,
                             stats->substeps, stats->min_gap, stats->relinearize_refused);
                    report(seed, steps, step, model, "energy gain in a passive scene", detail);
                }
                if ((e1 - e0) / bound > res->worst_gain)
                    res->worst_gain = (e1 - e0) / bound;
            }
        }
    }
    if (fail_streak >= 2)
        res->stuck = 1;
    scene_destroy(&s);
}

/* ------------------------------------------------------------------ driver */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pegplus-soak [--seed S | --seeds A-B | --seeds N] [--steps N] [--minutes M]\n"
            "                    [--date-seed] [--known LIST] [--scene-timeout S] [--model M]\n"
            "                    [--relinearize N] [--quiet] [--trace[-exact]] [--help]\n"
            "  --seed S          run the one scene of seed S\n"
            "  --seeds A-B       run the scenes of seeds A..B (--seeds N: 1..N); default 1-20\n"
            "  --steps N         steps per scene (default 300)\n"
            "  --minutes M       start no scene after M minutes (default: no limit)\n"
            "  --date-seed       also run one seed derived from today's date, first (printed;\n"
            "                    its failure is reported, not counted)\n"
            "  --known S,S,...   seeds of open findings: run and printed, not counted in the\n"
            "                    exit status (one that passes is printed, to be removed)\n"
            "  --scene-timeout S a scene running longer than S seconds is a failure (hang);\n"
            "                    default 120\n"
            "  --quiet           print failures and the summary only\n"
            "  --model M         every step with model M (ode, standard, peg), no switches\n"
            "  --relinearize N   pp_config.relinearize_iterations = N in every scene\n"
            "  --trace           print every step's model, status, energy and body states\n"
            "  --trace-exact     --trace, and the bodies' states to the last bit\n"
            "Every scene runs in a child process; every failure is printed with the command\n"
            "that reproduces it. Exit status 1 when anything failed.\n");
}

int main(int argc, char **argv)
{
    uint64_t first = 1, last = 20;
    int steps = 300, date_seed = 0, scene_timeout = 120;
    double minutes = 0.0;
    uint64_t known[256];
    int nknown = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--seed") && i + 1 < argc) {
            first = last = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--seeds") && i + 1 < argc) {
            const char *v = argv[++i], *dash = strchr(v, '-');
            if (dash) {
                first = strtoull(v, NULL, 10);
                last = strtoull(dash + 1, NULL, 10);
            } else {
                first = 1;
                last = strtoull(v, NULL, 10);
            }
        } else if (!strcmp(a, "--steps") && i + 1 < argc) {
            steps = atoi(argv[++i]);
        } else if (!strcmp(a, "--minutes") && i + 1 < argc) {
            minutes = atof(argv[++i]);
        } else if (!strcmp(a, "--scene-timeout") && i + 1 < argc) {
            scene_timeout = atoi(argv[++i]);
        } else if (!strcmp(a, "--known") && i + 1 < argc) {
            for (char *p = argv[++i]; *p && nknown < 256;) {
                known[nknown++] = strtoull(p, &p, 10);
                if (*p == ',')
                    ++p;
                else if (*p)
                    break;
            }
        } else if (!strcmp(a, "--date-seed")) {
            date_seed = 1;
        } else if (!strcmp(a, "--model") && i + 1 < argc) {
            const char *m = argv[++i];
            g_model = !strcmp(m, "ode") ? PP_MODEL_ODE : !strcmp(m, "standard") ? PP_MODEL_STANDARD
                    : !strcmp(m, "peg") ? PP_MODEL_PEG : -2;
            if (g_model == -2) {
                fprintf(stderr, "pegplus-soak: --model ode|standard|peg\n");
                return 2;
            }
            const size_t used = strlen(g_repro_extra);
            snprintf(g_repro_extra + used, sizeof g_repro_extra - used, " --model %s", m);
        } else if (!strcmp(a, "--relinearize") && i + 1 < argc) {
            g_relinearize = atoi(argv[++i]);
            const size_t used = strlen(g_repro_extra);
            snprintf(g_repro_extra + used, sizeof g_repro_extra - used, " --relinearize %d", g_relinearize);
        } else if (!strcmp(a, "--trace")) {
            g_trace = 1;
        } else if (!strcmp(a, "--trace-exact")) {
            g_trace = 2;
        } else if (!strcmp(a, "--quiet")) {
            g_quiet = 1;
        } else {
            fprintf(stderr, "pegplus-soak: unknown argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (steps < 1 || last < first) {
        usage(stderr);
        return 2;
    }
    dInitODE2(0);
    if (!g_trace)
        pp_set_log_hook(pp_log_discard, NULL);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t extra = 0;
    if (date_seed) { /* days since the epoch, spread far from the fixed seeds */
        extra = 1000000ull + (uint64_t)(time(NULL) / 86400);
        printf("date seed: %llu\n", (unsigned long long)extra);
    }
    long known_failed = 0, scenes = 0, total_steps = 0, failed_scenes = 0, crashes = 0, hangs = 0, stuck = 0,
         touched = 0, nonfinite = 0, gain = 0, failed_steps = 0, checked = 0;
    double worst = 0.0;
    /* The date's seed runs first (so the time cut never drops it), and its failure is printed
     * but not counted: a CI run must not pass or fail by the calendar. The fixed seeds decide. */
    const uint64_t count = last - first + 1 + (date_seed ? 1 : 0);
    for (uint64_t k = 0; k < count; ++k) {
        const int rotating = date_seed && k == 0;
        const uint64_t seed = rotating ? extra : first + k - (date_seed ? 1 : 0);
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (minutes > 0 && (t.tv_sec - t0.tv_sec) + 1e-9 * (t.tv_nsec - t0.tv_nsec) > 60.0 * minutes)
            break;
        int fd[2];
        if (pipe(fd) != 0) {
            perror("pipe");
            return 2;
        }
        fflush(stdout);
        const pid_t pid = fork();
        if (pid == 0) {
            close(fd[0]);
            alarm((unsigned)scene_timeout);
            result res;
            run_scene(seed, steps, &res);
            ssize_t wrote = write(fd[1], &res, sizeof res);
            (void)wrote;
            fflush(stdout);
            _exit(0);
        }
        close(fd[1]);
        result res;
        memset(&res, 0, sizeof res);
        ssize_t got = 0;
        for (;;) {
            const ssize_t n = read(fd[0], (char *)&res + got, sizeof res - (size_t)got);
            if (n > 0)
                got += n;
            if (n == 0 || got == (ssize_t)sizeof res || (n < 0 && errno != EINTR))
                break;
        }
        close(fd[0]);
        int wstatus = 0;
        waitpid(pid, &wstatus, 0);
        scenes++;
        int failed = 0;
        if (got != (ssize_t)sizeof res || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
            const int sig = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
            if (sig == SIGALRM)
                hangs++;
            else
                crashes++;
            printf("FAIL seed %llu: %s (%s)\n  reproduce: pegplus-soak --seed %llu --steps %d%s\n",
                   (unsigned long long)seed, sig == SIGALRM ? "scene timed out" : "crashed",
                   sig ? strsignal(sig) : "exit status", (unsigned long long)seed, steps, g_repro_extra);
            failed = 1;
        }
        total_steps += res.steps;
        failed_steps += res.failed_steps;
        stuck += res.stuck;
        touched += res.touched;
        nonfinite += res.nonfinite;
        gain += res.energy_gain;
        checked += res.energy_checked;
        if (res.worst_gain > worst)
            worst = res.worst_gain;
        if (res.failed_steps || res.stuck || res.touched || res.nonfinite || res.energy_gain)
            failed = 1;
        int is_known = 0;
        for (int j = 0; j < nknown; ++j)
            is_known |= known[j] == seed;
        if (rotating && failed) {
            printf("date seed %llu failed: a new finding, reported and not counted (reproduce "
                   "it with the command above, then fix it or add it to the fixed seeds)\n",
                   (unsigned long long)seed);
            continue;
        }
        if (is_known && failed) {
            printf("known: seed %llu is an open finding (--known)\n", (unsigned long long)seed);
            known_failed++;
        } else if (is_known) {
            printf("known seed %llu passes now: remove it from --known\n", (unsigned long long)seed);
        }
        failed_scenes += failed && !is_known;
    }
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("soak: %ld scenes, %ld steps in %.1f s: %ld scenes failed (and %ld known); %ld crashes, %ld hangs, "
           "%ld failed steps, %ld stuck worlds, %ld failed steps that changed ODE, %ld NaN/Inf, "
           "%ld energy gains in %ld passive steps checked (worst %.3g x the bound)\n",
           scenes, total_steps, (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec),
           failed_scenes, known_failed, crashes, hangs, failed_steps, stuck, touched, nonfinite, gain, checked,
           worst);
    return failed_scenes ? 1 : 0;
}
