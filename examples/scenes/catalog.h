/*
 * The scene catalogue: every shared scene by name, as pegplus-compare steps them, plus scene
 * files (scene_file.h). One call builds a scene by name (or from a .json path), one starts it
 * once the pegplus world exists (scripts that make hulls need it; the heap and pile scenes
 * are put into their settled states, state.h), one steps its script, one destroys it.
 *
 *     pp_catalog_scene cs;
 *     pp_catalog_build(&cs, "heap", h, seed, why, sizeof why);
 *     pp_config c = pp_config_default();
 *     if (cs.scene->configure) cs.scene->configure(cs.scene, &c);
 *     pp_world_create(cs.scene->world, cs.scene->space, &c, &pw);
 *     pp_catalog_start(&cs, pw, states_dir, h, why, sizeof why);
 *     for (i = 0; i < steps; ++i) { pp_catalog_before_step(&cs, i); pp_world_step(pw, h); }
 *     pp_world_destroy(pw);
 *     pp_catalog_destroy(&cs);
 *
 * pp_catalog_polytope gives the exact shape of a geom as a polytope in the geom's frame when
 * it is one (boxes of every scene, the pouring scene's hulls and blocks, a scene file's hulls,
 * and any other dConvex pegplus knows: pp_convex_polytope): what the exact overlap volume
 * (pegplus/overlap.h) is measured on. NULL for spheres, capsules, planes, ...
 */
#ifndef PP_SCENES_CATALOG_H
#define PP_SCENES_CATALOG_H

#include "pegplus/geometry.h"
#include "pegplus/pegplus.h"
#include "pouring.h"
#include "scenes.h"

#include <stddef.h>

typedef struct pp_catalog_entry {
    const char *name;
    const char *what;        /* one line for --list-scenes */
    double h;                /* suggested step size, s */
    double seconds;          /* suggested run length, s */
    const char *state;       /* settled state file DIR/<state>.state the run starts from, or NULL */
} pp_catalog_entry;

typedef struct pp_catalog_scene {
    pp_scene *scene;                 /* the stepped scene */
    const pp_catalog_entry *entry;   /* NULL for a scene file */
    pp_pour_scene *pour;             /* the pouring scenes: their polytopes */
    void *owner;                     /* what pp_catalog_destroy frees */
    int script_offset;               /* step index the script continues at (a settled state's
                                        settle length; 0 otherwise) */
    int box_count, box_capacity;     /* polytopes of box geoms, made on demand */
    dGeomID *box_geoms;
    pp_polytope **box_polytopes;
} pp_catalog_scene;

int pp_catalog_count(void);
const pp_catalog_entry *pp_catalog_get(int i);
/* NULL when unknown */
const pp_catalog_entry *pp_catalog_find(const char *name);

/* A catalogue scene by name, or a scene file when `name` ends in ".json". `seed` is used by the
 * random scenes (pour3d, boxstack, convex, pile and heap's builders), `h` by the scripted ones.
 * PP_OK, or a status with the reason in `why` (unknown name, scene file errors). */
pp_status pp_catalog_build(pp_catalog_scene *cs, const char *name, double h, unsigned long long seed,
                           char *why, size_t why_size);

/* After pp_world_create: records the pegplus world in the scene (scripts making hulls need it)
 * and, when the entry names a settled state and `states_dir` is not NULL, puts the scene into
 * DIR/<state>.state (pp_scene_state_apply: every body at its settled pose, at rest). 0, or -1
 * with the reason in why. */
int pp_catalog_start(pp_catalog_scene *cs, pp_world *world, const char *states_dir, double h,
                     char *why, size_t why_size);

/* The scene's script before step `step` (0, 1, ... of the run). */
void pp_catalog_before_step(pp_catalog_scene *cs, int step);

/* See above; NULL when the geom's exact polytope is not known. */
const pp_polytope *pp_catalog_polytope(pp_catalog_scene *cs, dGeomID geom);

/* Destroy the pegplus world first. */
void pp_catalog_destroy(pp_catalog_scene *cs);

#endif
