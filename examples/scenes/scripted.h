/*
 * Scenes after ODE's own demos (demo_boxstack, a convex "fracture" ball) and a fast pair of
 * hulls. Their bodies include dConvex geoms made by pp_convex_create, which needs the pegplus
 * world, so these builders link the library (pp_scenes_scripted) and create every body from
 * the scene's `before_step` script (scenes.h), step 0 included:
 *
 *     pp_scene s;
 *     pp_scene_boxstack(&s, seed, h);              // world, space, plane, the drop schedule
 *     pp_world_create(s.world, s.space, &config, &pw);
 *     s.pegplus = pw;                               // before the first before_step
 *     for (int step = 0; step < steps; ++step) {
 *         s.before_step(&s, step);                  // drops the bodies due at this step
 *         pp_world_step(pw, h);
 *     }
 *     pp_world_destroy(pw);                         // first: it owns the dConvex geoms
 *     pp_scene_destroy(&s);
 *
 * Every shape (and its mass properties) is computed by the builder, reproducibly from the
 * seed (splitmix64, the same sequence on every machine); the script only creates bodies.
 * Hulls have their centre of mass at the body origin. Gravity (0, 0, -9.81) m/s^2, the plane
 * z = 0 is scene.ground.
 *
 * A body the script cannot create (pp_convex_create failed: out of memory, or
 * scene.pegplus NULL) is skipped with a message through pp_log; pp_scene_script_failures
 * counts them.
 */
#ifndef PP_SCENES_SCRIPTED_H
#define PP_SCENES_SCRIPTED_H

#include "pegplus/pegplus.h"
#include "scenes.h"

/* ODE's demo_boxstack, headless: 48 bodies dropped one every 0.6 s (body k before step
 * round(k * 0.6 / h)), each a box, a sphere, a capsule or a convex hull with equal odds:
 * box sides uniform in 0.1..0.6 m; sphere radius 0.05..0.3 m; capsule radius 0.05..0.2 m and
 * cylinder length 0.1..0.5 m; hull of 12 points uniform in a box of sides 0.1..0.6 m. Density
 * 5 kg/m^3 (the demo's), uniform random orientation, released at rest at x, y uniform in
 * [-1, 1] m and z = 3 m (a body falls 3 m in 0.78 s, so the previous one is 1.8 m lower when
 * the next appears). Made for h = 0.02 s and 1 500 steps (30 s; the last drop at 28.2 s).
 * PP_OK, PP_ERR_NO_MEMORY, or the status of pp_polytope_from_points (nothing left allocated,
 * *scene zeroed). */
pp_status pp_scene_boxstack(pp_scene *scene, unsigned long long seed, double h);

/* A ball of radius 0.5 m broken into 90 convex cells, dropped from 4.2 m: the Voronoi cells
 * of 90 seed points (dart throwing in radius 0.42 m, at least 0.12 m apart) clipped to the
 * hull of 200 points on the sphere (a Fibonacci lattice), each bisector plane moved back
 * 2 mm so neighbouring cells start 4 mm apart. Density 1 000 kg/m^3 (seed 1: the cells
 * weigh 481 kg together), released at rest with the ball's centre at (0, 0, 4.2) m, all
 * before step 0.
 * Made for h = 1/240 s and 960 steps (4 s). Statuses as pp_scene_boxstack. */
pp_status pp_scene_convex_ball(pp_scene *scene, unsigned long long seed);

/* Two small hulls closing at `closing_speed` m/s head-on: the hull of 16 random points on a
 * sphere of diameter 8 cm (density 1 000 kg/m^3 for both) at (-0.255, 0, 0.3) moving +x at
 * closing_speed / 2, and one of 2 cm at (0.255, 0.005, 0.3) moving -x at closing_speed / 2,
 * random orientations, gravity and the plane below. Their centres are 0.51 m apart: at
 * h = 0.01 and 25 m/s (50 m/s) they would be 1 cm apart, deep in each other, after 2 (1)
 * steps of free flight, so a stepper that does not anticipate the contact sees a deep
 * overlap. After the collision they fall 0.3 m onto the plane and come to rest. Made for
 * h = 0.01 s and 300 steps. Statuses as pp_scene_boxstack. */
pp_status pp_scene_hulls(pp_scene *scene, double closing_speed, unsigned long long seed);

/* Bodies the script of a scene built here failed to create so far (0 for other scenes). */
int pp_scene_script_failures(const pp_scene *scene);

#endif
