/*
 * The PEG pouring scene, 3D (PEG Sec. 6; docs/references.md; after the authors'
 * testGeometry_5.m): convex polyhedra dropped one at a time into an open box of five static
 * blocks, frictionless in the paper (the caller sets pp_config.surface.mu = 0).
 *
 * Two calls build it, because the bodies are dConvex geoms made by pp_convex_create (ODE has
 * no getter for convex data, so pegplus must see the points), which needs the pegplus world:
 *
 *     pp_pour_scene pour;
 *     pp_pour_scene_create(&pour, PP_POUR_RANDOM_HULLS, seed);   // world, space, gravity, box
 *     pp_world_create(pour.scene.world, pour.scene.space, &config, &pw);
 *     for (step = 0; ...; ++step) {
 *         if (k < PP_POUR_DROPS && step == pp_pour_drop_step(k, h)) pp_pour_scene_drop(&pour, pw, k++);
 *         pp_world_step(pw, h);
 *     }
 *     pp_world_destroy(pw);            // first: it destroys the dConvex geoms it made
 *     pp_pour_scene_destroy(&pour);    // then the space, the world and the polytopes
 *
 * Geometry (m): floor 10.25 x 4.25 x 0.25 centred at (0, 0, -0.125) (top face z = 0); end walls
 * 0.25 x 4.25 x 4 at x = -5, +5; side walls 10.25 x 0.25 x 4 at y = -2, +2; walls centred at
 * z = 1.75. The inside is x in [-4.875, 4.875], y in [-1.875, 1.875], z in [0, 3.75].
 * Gravity (0, 0, -9.81) m/s^2.
 *
 * Bodies (body k = 0, 1, 2, ...), each released at (3, 0, 2) m with velocity (-5, 0, 0) m/s
 * and no spin (the authors' script):
 *  - PP_POUR_RANDOM_HULLS (the paper's "random polyhedra", the authors' generateRandom3dBodies):
 *    the convex hull of 15 points uniform in the unit cube [0, 1]^3, recentred at its centre
 *    of mass, in a uniformly random orientation. Mass 0.5 kg (density 0.5 / volume, so every
 *    body weighs what the authors' icosahedron weighs); inertia of the uniform solid. Body k
 *    depends only on (seed, k), through a generator of our own (splitmix64), so every model
 *    and every step size sees the same bodies in the same order.
 *  - PP_POUR_ICOSAHEDRA (the authors' archived script): a regular icosahedron of circumradius
 *    0.5 (their unit-circumradius mesh scaled by 0.5), mass 0.5 kg with the uniform solid's
 *    inertia (their script scales a hand-set J instead), all in the orientation of their
 *    qt([1 2 3], 0.2): 0.2 rad about the axis (1, 2, 3). The seed is not used.
 *
 * Drop schedule: body k at step pp_pour_drop_step(k, h) = round(k * 0.5 / h), k < PP_POUR_DROPS
 * (10: one every 0.5 s until 5 s). The authors drop at every round(0.5 / h)-th step, which for
 * some h gives 11 bodies by 5 s; this schedule gives 10 for every h.
 */
#ifndef PP_SCENES_POURING_H
#define PP_SCENES_POURING_H

#include "pegplus/geometry.h"
#include "pegplus/pegplus.h"
#include "scenes.h"

enum {
    PP_POUR_BLOCKS = 5,        /* floor, end walls (-x, +x), side walls (-y, +y) */
    PP_POUR_DROPS = 10,        /* bodies dropped by 5 s */
    PP_POUR_HULL_POINTS = 15   /* points per random hull */
};

#define PP_POUR_DROP_INTERVAL 0.5 /* s between drops */
#define PP_POUR_BODY_MASS 0.5     /* kg, every body */

typedef enum pp_pour_shape {
    PP_POUR_RANDOM_HULLS = 0,
    PP_POUR_ICOSAHEDRA = 1
} pp_pour_shape;

typedef struct pp_pour_scene {
    pp_scene scene;                 /* world, space (hash); bodies[i], geoms[i] = the dropped
                                       bodies in drop order (scene.body_count of them);
                                       scene.ground is NULL (the floor is a block) */
    pp_pour_shape shape;
    unsigned long long seed;
    dGeomID blocks[PP_POUR_BLOCKS];                 /* static box geoms (no body) */
    pp_polytope *block_polytopes[PP_POUR_BLOCKS];   /* their shapes, box frames (owned) */
    double block_lengths[PP_POUR_BLOCKS][3];
    pp_polytope **body_polytopes;   /* shape of bodies[i], body frame with the centre of mass
                                       at the origin (the array and the polytopes owned,
                                       scene.body_capacity entries); the same polytope pegplus
                                       recorded for geoms[i] */
} pp_pour_scene;

/* ODE world and hash space, gravity, the five static blocks. No bodies yet.
 * PP_OK, PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT (unknown shape), PP_ERR_NO_MEMORY.
 * On failure nothing is left allocated and *scene is zeroed. */
pp_status pp_pour_scene_create(pp_pour_scene *scene, pp_pour_shape shape, unsigned long long seed);

/* Create body k (its shape from (seed, k)) as a dConvex made by pp_convex_create in
 * scene->scene.space, released as described above; appends it to scene->scene.bodies/geoms
 * and scene->body_polytopes. k need not follow the previous call's k + 1, but every k is
 * dropped at most once by convention. PP_ERR_INVALID_ARGUMENT if k < 0, PP_ERR_NO_MEMORY
 * when the lists cannot grow; the statuses of pp_polytope_from_points / pp_convex_create
 * otherwise (nothing created). */
pp_status pp_pour_scene_drop(pp_pour_scene *scene, pp_world *world, int k);

/* Step index at which body k is dropped: round(k * PP_POUR_DROP_INTERVAL / h). */
int pp_pour_drop_step(int k, double h);

/* Frees the polytopes, the space (with the static blocks and the bodies' geoms) and the ODE
 * world. Destroy the pegplus world first (it destroys the dConvex geoms it made). */
void pp_pour_scene_destroy(pp_pour_scene *scene);

/* Total exact overlap volume (pegplus/overlap.h), m^3, summed over every pair of a dropped
 * body with another dropped body or a block whose ODE AABBs overlap. PP_OK, or the overlap
 * module's status for a pose it rejects (non-finite). */
pp_status pp_pour_scene_overlap(const pp_pour_scene *scene, double *total);

#endif
