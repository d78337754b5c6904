/* The fast-hull pair of check_peg_fast_hulls and check_fast_hull_energy: an 8 cm and a 2 cm
 * random 15-point hull (uniform sphere inertia), the small one shot along -x at `speed` with a
 * random offset and spin at the big one at rest at the origin; the same hulls and shot by seed
 * (docs/prototypes/fast-hull-scan.c draws the same). */
#ifndef PP_IT_FAST_HULLS_H
#define PP_IT_FAST_HULLS_H

#include "pegplus/geometry.h"
#include "pegplus/overlap.h"
#include "pegplus/pegplus.h"
#include "it_energy.h"
#include "scenes.h"

#include <check.h>
#include <stdint.h>

typedef struct pp_it_fast_pair {
    pp_polytope *poly[2]; /* body frames, for the exact overlap volume */
    dBodyID body[2];      /* 0: the 8 cm hull, 1: the 2 cm hull */
} pp_it_fast_pair;

/* xorshift64 draws in [lo, hi). */
static inline double pp_it_fast_uniform(uint64_t *rng, double lo, double hi)
{
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    return lo + (hi - lo) * (double)(*rng >> 11) * (1.0 / 9007199254740992.0);
}

/* The generator of `seed`'s draws. */
static inline uint64_t pp_it_fast_seed(int seed)
{
    return 0x9E3779B97F4A7C15ull + 0x1234567ull * (uint64_t)seed;
}

/* A hull of the 15 points `pts` (45 coordinates, moved in place so that its centroid is the
 * origin, the body's centre of mass) as a pegplus convex geom in `space`, and, when `poly` is
 * not NULL, the same hull as a polytope in the body's frame (the caller destroys it). */
static inline dGeomID pp_it_fast_centred_hull(pp_world *pw, dSpaceID space, double pts[45],
                                              pp_polytope **poly)
{
    pp_polytope *p;
    ck_assert_int_eq(pp_polytope_from_points(pts, 15, &p), PP_OK);
    const double c[3] = {p->centroid[0], p->centroid[1], p->centroid[2]};
    pp_polytope_destroy(p);
    for (int i = 0; i < 15; ++i)
        for (int r = 0; r < 3; ++r) pts[3 * i + r] -= c[r];
    if (poly) ck_assert_int_eq(pp_polytope_from_points(pts, 15, poly), PP_OK);
    dGeomID geom;
    ck_assert_int_eq(pp_convex_create(pw, space, pts, 15, &geom), PP_OK);
    return geom;
}

/* A body of `mass` with a uniform sphere's inertia of diameter `size`, carrying `geom`. */
static inline dBodyID pp_it_fast_body(dWorldID world, dGeomID geom, double mass, double size)
{
    dBodyID b = dBodyCreate(world);
    dMass m;
    dMassSetSphereTotal(&m, mass, size / 2);
    dBodySetMass(b, &m);
    dGeomSetBody(geom, b);
    return b;
}

/* The shot (after both bodies' 45 draws): `big` at rest at the origin, `small` 0.3-0.5 m along
 * +x with a random offset, moving at `speed` along -x with a random sideways velocity and spin. */
static inline void pp_it_fast_shoot(dBodyID big, dBodyID small, uint64_t *rng, double speed)
{
    dBodySetPosition(big, 0, 0, 0);
    dBodySetPosition(small, 0.3 + pp_it_fast_uniform(rng, 0, 0.2),
                     pp_it_fast_uniform(rng, -0.02, 0.02), pp_it_fast_uniform(rng, -0.02, 0.02));
    dBodySetLinearVel(small, -speed, pp_it_fast_uniform(rng, -1, 1),
                      pp_it_fast_uniform(rng, -1, 1));
    dBodySetAngularVel(small, pp_it_fast_uniform(rng, -20, 20), pp_it_fast_uniform(rng, -20, 20),
                       pp_it_fast_uniform(rng, -20, 20));
}

/* The scans' world: ODE initialised, no gravity, a hash space, a pegplus world of `model`
 * with frictionless surfaces and no clock (only the pivot caps bound the solves), the log
 * silenced. */
static inline pp_world *pp_it_fast_world(pp_model model, dWorldID *world, dSpaceID *space)
{
    pp_set_log_hook(pp_log_discard, NULL);
    pp_scenes_init_ode();
    *world = dWorldCreate();
    *space = dHashSpaceCreate(0);
    dWorldSetGravity(*world, 0, 0, 0);
    pp_config config = pp_config_default();
    config.model = model;
    config.surface.mu = 0.0;
    config.lcp_budget_seconds = 0.0;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(*world, *space, &config, &pw), PP_OK);
    return pw;
}

/* Builds the pair of `seed` in `world`/`space` through `pw` and shoots the small hull. */
static inline void pp_it_fast_pair_build(pp_world *pw, dWorldID world, dSpaceID space,
                                         int seed, double speed, pp_it_fast_pair *fp)
{
    uint64_t rng = pp_it_fast_seed(seed);
    const double size[2] = {0.08, 0.02}, mass[2] = {0.3, 0.01};
    for (int k = 0; k < 2; ++k) {
        double pts[45];
        for (int i = 0; i < 45; ++i) pts[i] = pp_it_fast_uniform(&rng, -0.5, 0.5) * size[k];
        const dGeomID geom = pp_it_fast_centred_hull(pw, space, pts, &fp->poly[k]);
        fp->body[k] = pp_it_fast_body(world, geom, mass[k], size[k]);
    }
    pp_it_fast_shoot(fp->body[0], fp->body[1], &rng, speed);
}

/* A body's pose as a position and a row-major rotation (ODE's 3x4 rows read as 3x3). */
static inline void pp_it_fast_body_pose(dBodyID b, double x[3], double R[9])
{
    const dReal *p = dBodyGetPosition(b), *r = dBodyGetRotation(b);
    for (int i = 0; i < 3; ++i) {
        x[i] = p[i];
        for (int j = 0; j < 3; ++j) R[3 * i + j] = r[4 * i + j];
    }
}

/* The pair's exact overlap volume now (m^3, pegplus/overlap.h). */
static inline double pp_it_fast_pair_overlap(const pp_it_fast_pair *fp)
{
    double xa[3], Ra[9], xb[3], Rb[9], v = -1.0;
    pp_it_fast_body_pose(fp->body[0], xa, Ra);
    pp_it_fast_body_pose(fp->body[1], xb, Rb);
    ck_assert_int_eq(pp_overlap_volume(fp->poly[0], xa, Ra, fp->poly[1], xb, Rb, &v), PP_OK);
    return v;
}

/* The pair's kinetic energy now (J). */
static inline double pp_it_fast_pair_energy(const pp_it_fast_pair *fp)
{
    return pp_it_kinetic_energy(fp->body[0]) + pp_it_kinetic_energy(fp->body[1]);
}

/* After each step of the case `what`: no PEG fallback and an exact or regularised LCP answer
 * (lcp_fallback < 2). */
static inline void pp_it_fast_check_answer(const pp_step_stats *s, const char *what, int step)
{
    ck_assert_msg(s->peg_fallback == 0 && s->lcp_fallback < 2,
                  "%s step %d: PEG fallback %d, LCP fallback %d", what, step, s->peg_fallback,
                  s->lcp_fallback);
}

/* After each step of the case `what`: the two bodies' kinetic energy at most (1 + energy_tol)
 * times *energy, which becomes the new one. Returns the step's relative gain. */
static inline double pp_it_fast_check_energy(dBodyID a, dBodyID b, const char *what, int step,
                                             double energy_tol, double *energy)
{
    const double e = pp_it_kinetic_energy(a) + pp_it_kinetic_energy(b);
    const double gain = (e - *energy) / *energy;
    ck_assert_msg(e <= *energy * (1.0 + energy_tol),
                  "%s step %d: kinetic energy %.17g -> %.17g J (%+.3g relative)", what, step,
                  *energy, e, gain);
    *energy = e;
    return gain;
}

/* After each step of the case `what` (model, speed, seed, ...): no PEG fallback and an exact
 * or regularised LCP answer (lcp_fallback < 2), an overlap volume of at most overlap_tol
 * m^3, and a kinetic energy of at most (1 + energy_tol) times *energy, which becomes the new
 * one. Returns the step's relative gain. */
static inline double pp_it_fast_pair_check_step(const pp_it_fast_pair *fp, const pp_step_stats *s,
                                                const char *what, int step, double overlap_tol,
                                                double energy_tol, double *energy)
{
    pp_it_fast_check_answer(s, what, step);
    const double v = pp_it_fast_pair_overlap(fp);
    ck_assert_msg(v <= overlap_tol, "%s: overlap %g m^3 after step %d", what, v, step);
    return pp_it_fast_check_energy(fp->body[0], fp->body[1], what, step, energy_tol, energy);
}

/* At the end: the hulls met (some step had contacts), and when `collide`, the small hull,
 * shot along -x at `speed`, was stopped rather than passed through (at most half its speed
 * left along -x). */
static inline void pp_it_fast_pair_check_end(const pp_it_fast_pair *fp, const char *what,
                                             double speed, int met, int collide)
{
    ck_assert_msg(met, "%s: the hulls never came within the margin", what);
    const double through = -dBodyGetLinearVel(fp->body[1])[0];
    if (collide)
        ck_assert_msg(through <= 0.5 * speed, "%s: the small hull passed through at %g m/s",
                      what, through);
}

/* Destroys the world, the pair's polytopes, the space and the ODE world, and unhooks the log. */
static inline void pp_it_fast_pair_teardown(pp_world *pw, pp_it_fast_pair *fp, dSpaceID space,
                                            dWorldID world)
{
    pp_world_destroy(pw);
    pp_polytope_destroy(fp->poly[0]);
    pp_polytope_destroy(fp->poly[1]);
    dSpaceDestroy(space);
    dWorldDestroy(world);
    pp_set_log_hook(NULL, NULL);
}

#endif
