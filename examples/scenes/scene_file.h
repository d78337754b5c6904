/*
 * Scene files: a scene described in a small JSON format (docs/scene-file.md) and built as a
 * pp_scene, so that pegplus-compare, the tests and the benchmarks can step scenes nobody wrote
 * a builder for. Parsed with json-c.
 *
 *     pp_scene s;
 *     char why[512];
 *     if (pp_scene_file_load(&s, "stack.json", why, sizeof why) != PP_OK) { puts(why); ... }
 *     pp_config c = pp_config_default();
 *     if (s.configure) s.configure(&s, &c);      // the file's surface and nothing else
 *     pp_world_create(s.world, s.space, &c, &pw);
 *     s.pegplus = pw;                              // convex hulls are made at step 0
 *     for (step = 0; ...) { s.before_step(&s, step); pp_world_step(pw, h); }
 *     pp_world_destroy(pw);
 *     pp_scene_destroy(&s);
 *
 * Every body is created by the loader (with its mass, pose and velocities) and listed in
 * scene.bodies in file order; every joint too. Boxes, spheres and capsules get their geoms at
 * once; a convex hull's geom is made by pp_convex_create, which needs the pegplus world, so
 * the scene's before_step makes it before step 0 (until then scene.geoms[i] is NULL).
 *
 * Errors: a message naming the file, the JSON path of the offending value (e.g.
 * "bodies[2].size") and what is wrong, e.g.
 *     stack.json: bodies[2].size: expected an array of 3 numbers > 0
 * Nothing is left allocated on failure (*scene zeroed).
 */
#ifndef PP_SCENES_SCENE_FILE_H
#define PP_SCENES_SCENE_FILE_H

#include "pegplus/geometry.h"
#include "pegplus/pegplus.h"
#include "scenes.h"

#include <stddef.h>

/* PP_OK; PP_ERR_INVALID_ARGUMENT (file unreadable, JSON malformed or not the format: `why`
 * says where), PP_ERR_NO_MEMORY, or pp_polytope_from_points's status for a hull's points
 * (with the path in `why`). */
pp_status pp_scene_file_load(pp_scene *scene, const char *path, char *why, size_t why_size);

/* 1 when `scene` was made by pp_scene_file_load. */
int pp_scene_file_is(const pp_scene *scene);

/* The exact shape of a scene file's geom as a polytope in the geom's frame (boxes and hulls,
 * bodies' and static ones), owned by the scene; NULL for other geoms and other scenes. */
const pp_polytope *pp_scene_file_polytope(const pp_scene *scene, dGeomID geom);

/* The run the file suggests ("h", "seconds"; 0 when absent). */
void pp_scene_file_run(const pp_scene *scene, double *h, double *seconds);

#endif
