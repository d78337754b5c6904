/*
 * Scene builders shared by the integration tests, the demo, the compare tool and the
 * benchmarks, so that every model runs on exactly the same scene (SCENES.md).
 *
 * A scene owns an ODE world and a hash space; its bodies are listed in creation order.
 */
#ifndef PP_SCENES_H
#define PP_SCENES_H

#include <ode/ode.h>

enum { PP_SCENE_MAX_BODIES = 256 };

typedef struct pp_scene {
    const char *name;
    dWorldID world;
    dSpaceID space;
    dGeomID ground;                     /* plane z = 0 or NULL */
    int body_count;
    dBodyID bodies[PP_SCENE_MAX_BODIES];
    dGeomID geoms[PP_SCENE_MAX_BODIES];
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

/* Add a box (full lengths, kg) or a sphere at a position; returns the body. */
dBodyID pp_scene_add_box(pp_scene *scene, const double lengths[3], double mass, const double pos[3]);
dBodyID pp_scene_add_sphere(pp_scene *scene, double radius, double mass, const double pos[3]);

/* A unit box (1 kg, 1 m) released at rest with its bottom face `drop_height` above z = 0. */
void pp_scene_box_drop(pp_scene *scene, double drop_height);

/* A column of `count` unit boxes (1 kg, 1 m) on the plane, released at rest. `gap` is the
 * vertical gap between consecutive boxes and between the lowest box and the plane (0: exactly
 * touching, as in SCENES.md). */
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

void pp_scene_destroy(pp_scene *scene);

/* Total kinetic energy (J) and world angular momentum about the origin (kg m^2/s). */
double pp_scene_kinetic_energy(const pp_scene *scene);
void pp_scene_angular_momentum(const pp_scene *scene, double L[3]);

/* Deepest overlap (m) between any two geoms of the scene, measured with dCollide the same way
 * for every model (0 when nothing overlaps). */
double pp_scene_max_penetration(const pp_scene *scene);

#endif
