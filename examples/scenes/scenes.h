/*
 * Scene builders shared by the integration tests, the demo, the compare tool and the
 * benchmarks, so that every model runs on exactly the same scene (docs/references.md).
 *
 * A scene owns an ODE world and a hash space; its bodies are listed in creation order.
 * Every builder is reproducible: random sizes and poses come from a generator of our own
 * seeded by the caller, never from rand() or the clock.
 *
 * Scripted scenes (a cannon fired at a given step, bodies dropped one by one) set
 * `before_step`; whoever steps the scene calls it before every step:
 *
 *     pp_scene s;
 *     pp_scene_crash(&s, h);
 *     pp_world_create(s.world, s.space, &config, &pw);
 *     s.pegplus = pw;                      // scripts that make dConvex geoms need it
 *     for (int step = 0; step < steps; ++step) {
 *         if (s.before_step) s.before_step(&s, step);
 *         pp_world_step(pw, h);
 *     }
 *     pp_world_destroy(pw);                // first: it destroys the dConvex geoms it made
 *     pp_scene_destroy(&s);
 */
#ifndef PP_SCENES_H
#define PP_SCENES_H

#include <ode/ode.h>

struct pp_world;  /* pegplus.h's pp_world; the builders here need only ODE */
struct pp_config; /* pegplus.h's pp_config */

typedef struct pp_scene {
    const char *name;
    dWorldID world;
    dSpaceID space;
    dGeomID ground;                     /* plane z = 0 or NULL */
    int body_count;                     /* entries of bodies[] and geoms[] */
    dBodyID *bodies;                    /* creation order; malloc'ed and grown by
                                           pp_scene_append, freed by pp_scene_destroy */
    dGeomID *geoms;                     /* geoms[i] is the geom of bodies[i] */
    int body_capacity;                  /* allocated entries of bodies[] and geoms[] */
    /* Optional script: called with the index (0, 1, ...) of the step about to be taken. */
    void (*before_step)(struct pp_scene *scene, int step);
    void *script;                       /* the script's state, owned by the scene */
    void (*script_destroy)(void *script); /* frees `script` (pp_scene_destroy calls it) */
    struct pp_world *pegplus;           /* set by the caller after pp_world_create, for
                                           scripts that call pp_convex_create; not owned */
    /* Optional: what the scene needs from pegplus's configuration (its surface: friction per
     * pair, jointed.h). Whoever creates the pegplus world calls it on the pp_config first. */
    void (*configure)(const struct pp_scene *scene, struct pp_config *config);
} pp_scene;

/* dInitODE2 once per process (idempotent). */
void pp_scenes_init_ode(void);

/* Free flight, no ground, no gravity unless `gravity`:
 *  0: the tumbling box T (0.1 x 0.4 x 0.9 m, 10 kg, v0 = (-0.9, 0.4, 0.1), w0 = (0.5, 0, 0)),
 *  1: a symmetric top (cylinder-inertia box 0.3 x 0.3 x 0.1 m, 2 kg) spinning about a tilted axis,
 *  2..: bodies exercising every state flag (damping, max angular speed, gravity off, finite
 *       rotation with and without an axis, a user force and torque). */
void pp_scene_free_flight(pp_scene *scene, int gyroscopic, int gravity);

/* A few boxes and spheres dropped onto the plane z = 0 (the demo scene). */
void pp_scene_drop(pp_scene *scene);

/* Append a body and its geom to scene->bodies / geoms (growing them). 0, or -1 when out of
 * memory (the lists are unchanged). */
int pp_scene_append(pp_scene *scene, dBodyID body, dGeomID geom);

/* Add a box (full lengths, kg) or a sphere at a position; returns the body. */
dBodyID pp_scene_add_box(pp_scene *scene, const double lengths[3], double mass, const double pos[3]);
dBodyID pp_scene_add_sphere(pp_scene *scene, double radius, double mass, const double pos[3]);

/* A unit box (1 kg, 1 m) released at rest with its bottom face `drop_height` above z = 0. */
void pp_scene_box_drop(pp_scene *scene, double drop_height);

/* A column of `count` unit boxes (1 kg, 1 m) on the plane, released at rest. `gap` is the
 * vertical gap between consecutive boxes and between the lowest box and the plane (0: exactly
 * touching, as in docs/references.md). */
void pp_scene_box_column(pp_scene *scene, int count, double gap);

/* A unit box (1 kg) resting on the plane z = 0 with gravity tilted by `theta` radians about y,
 * which is a plane inclined by theta; the box would slide along +x. */
void pp_scene_incline(pp_scene *scene, double theta);

/* Stewart–Trinkle 1996 spinning rod: capsule of cylinder length 0.5 m (between the centres of
 * the rounded ends), radius 0.05 m, 1 kg, inertia 0.002 kg m^2 about the axis normal to the
 * motion plane (y), centre at height `height`, 30 degrees to the table, 4 rad/s about y in the
 * sense that raises its elevation (height 0.9908 m: first impact at 0.383 s). */
void pp_scene_st96_rod(pp_scene *scene, double height);

/* Stewart–Trinkle 1996 four balls: m = 1 kg, r = 0.1 m, centres [0,0,1], [1,0,0.1],
 * [1.2+1e-5,0,0.1], [1.4+2e-5,0,0.1], ball 1 at v = [1.5, 0.1, 0]. */
void pp_scene_st96_balls(pp_scene *scene);

/* `count` unit-ish boxes (random sizes 0.3..0.7 m, 1 kg) released in a loose heap above the
 * plane, reproducible from `seed`. */
void pp_scene_box_pile(pp_scene *scene, int count, unsigned seed);

/* A heap: `count` boxes (random lengths 0.3..0.7 m like pp_scene_box_pile, 1 kg) poured
 * one at a time into a bin on the plane z = 0, so that they form ONE pile (one contact
 * island; poured onto the open plane, such boxes slide off one another and spread into
 * many). The bin: four static box geoms (no bodies), 0.5 m thick and 3 m high, around a
 * square of side w = max(1.6, 0.35 sqrt(count)) m centred on the z axis (heap20 1.6 m,
 * heap50 2.5 m, heap100 3.5 m: the pile fills it about 2 m deep).
 * Scripted (before_step): box k is due before step round(0.4 k / h); it is created at rest,
 * in a random orientation, at x, y uniform in [-0.1, 0.1] m and with its centre 0.7 m above
 * the highest point (ODE bounding box) of the bodies at rest (speed < 0.5 m/s), so it lands
 * on the pile's top at about 3 m/s; while its release cube (1.24 m wide) would touch any
 * body's bounding box it waits for the next step. The benchmark starts heapN from the state
 * the standard model settled it in (examples/scenes/states/heapN.state, state.h). Sizes and
 * orientations are reproducible from `seed`; the drop heights and steps depend on how the
 * pile has settled, i.e. on the model that steps it. */
void pp_scene_heap(pp_scene *scene, int count, unsigned seed, double h);

/* `stacks` separate stacks of 3 boxes on the plane z = 0, at rest: box lengths uniform in
 * 0.8..1.0 m (1 kg), each box centred on its stack's vertical axis and turned about it by a
 * random yaw in [0, 0.4) rad, its bottom face `gap` above the top face of the box below (and
 * the lowest box `gap` above the plane; 0 = exactly touching). The stacks stand on a square
 * grid of ceil(sqrt(stacks)) columns with a pitch of 2.5 m: boxes at most 1.0 x 1.0 m turned
 * reach 0.71 m from the axis, so neighbouring stacks are more than 1 m apart and never touch
 * (each stack is its own contact island). Reproducible from `seed`. */
void pp_scene_islands(pp_scene *scene, int stacks, double gap, unsigned seed);

/* A brick wall on the plane z = 0, as ODE's demo_crash builds it: `rows` rows of `wide`
 * bricks (0.5 x 0.6 x 0.3 m along x, y, z, 1 kg), centred on y = 0, its near face at x = 0,
 * rows exactly touching each other and the plane, bricks of a row 1 mm apart. */
void pp_scene_brick_wall(pp_scene *scene, int rows, int wide);

/* pp_scene_brick_wall with a box hitting it: a 0.3 m cube (2 kg) whose near face is 5 cm from
 * the wall's far face (x = 0.5 m) at the height of the lower row's middle, sliding at 2 m/s
 * along -x into that row's middle brick. Returns the box. */
dBodyID pp_scene_wall_hit(pp_scene *scene, int rows, int wide);

/* ODE's demo_crash without the car: a wall of 75 bricks (0.5 x 0.6 x 0.3 m along x, y, z,
 * 1 kg) 15 wide along y and 5 high, its near face at x = 0, rows exactly touching each other
 * and the plane, bricks of a row 1 mm apart; a cannon ball (sphere of radius 0.5 m, 10 kg) is
 * created at (-6, 0, 0.75) and fired at the wall's centre at (20, 0, 1.5) m/s (the vertical
 * speed makes up for the fall over the flight) before the step at t = 0.5 s
 * (round(0.5 / h); the wall stands alone until then). The script is `before_step`; `h` is
 * the step size the caller will use. Made for h = 0.05 s and 300 steps (15 s). The ball
 * moves one metre per step at h = 0.05: its 1 m diameter plus the wall's 0.5 m thickness keep
 * it from passing through the wall within one step. */
void pp_scene_crash(pp_scene *scene, double h);

/* The pegplus world and the space must be destroyed in that order when the scene holds
 * geoms made by pp_convex_create (pegplus.h); this frees the script, the space with its
 * geoms, the world, and the body lists. */
void pp_scene_destroy(pp_scene *scene);

/* Set every body's linear and angular velocity to zero (e.g. after settling a scene). */
void pp_scene_zero_velocities(pp_scene *scene);

/* Total kinetic energy (J) and world angular momentum about the origin (kg m^2/s). */
double pp_scene_kinetic_energy(const pp_scene *scene);
void pp_scene_angular_momentum(const pp_scene *scene, double L[3]);

/* A geom's world pose as pegplus/overlap.h takes it: position and a row-major 3 x 3 rotation
 * (ODE's dGeomGetRotation is 3 x 4). */
void pp_scene_geom_pose(dGeomID geom, double pos[3], double R[9]);

/* Deepest overlap (m) between any two geoms of the scene, measured with dCollide the same way
 * for every model (0 when nothing overlaps). Pairs that cannot touch in any model are skipped:
 * two static geoms, geoms of bodies joined by a joint (other than a contact joint), and pairs
 * whose category and collide bits exclude each other (jointed.h). */
double pp_scene_max_penetration(const pp_scene *scene);

/* The largest linear speed (m/s) of the scene's bodies. */
double pp_scene_fastest_body(const pp_scene *scene);

#endif
