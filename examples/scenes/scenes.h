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

void pp_scene_destroy(pp_scene *scene);

/* Total kinetic energy (J) and world angular momentum about the origin (kg m^2/s). */
double pp_scene_kinetic_energy(const pp_scene *scene);
void pp_scene_angular_momentum(const pp_scene *scene, double L[3]);

/* Deepest overlap (m) between any two geoms of the scene, measured with dCollide the same way
 * for every model (0 when nothing overlaps). */
double pp_scene_max_penetration(const pp_scene *scene);

#endif
