/* A scene stepped as the benchmark steps it (k = 4, auto-disable off, clock-free), and a heap
 * started that way from a state file (examples/scenes/state.h), for the integration tests that
 * step the benchmark's settled scenes. */
#ifndef PP_IT_HEAP_STATE_H
#define PP_IT_HEAP_STATE_H

#include "pegplus/pegplus.h"
#include "scenes.h"
#include "state.h"

#include <check.h>
#include <math.h>
#include <stdio.h>

/* A body's speed for the rest checks: the larger of |v| (m/s) and |omega| (rad/s, as m/s at
 * 1 m). */
static inline double pp_it_body_speed(dBodyID b)
{
    const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b);
    return fmax(sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]),
                sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]));
}

/* The configuration the benchmark steps a scene with: `model`, k = 4, and clock-free (the
 * answers must not depend on the machine's load). */
static inline pp_config pp_it_config_clock_free(pp_model model)
{
    pp_config c = pp_config_default();
    c.model = model;
    c.friction_directions = 4;
    c.lcp_budget_seconds = 0;
    return c;
}

/* The pegplus world of a loaded scene under `c`, auto-disable off (scene->pegplus). */
static inline pp_world *pp_it_world_create(pp_scene *scene, const pp_config *c)
{
    dWorldSetAutoDisableFlag(scene->world, 0);
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(scene->world, scene->space, c, &pw), PP_OK);
    scene->pegplus = pw;
    return pw;
}

/* The pegplus world of a loaded scene, as the benchmark steps it (pp_it_config_clock_free). */
static inline pp_world *pp_it_world_clock_free(pp_scene *scene, pp_model model)
{
    const pp_config c = pp_it_config_clock_free(model);
    return pp_it_world_create(scene, &c);
}

/* Destroys a scene's pegplus world (scene->pegplus, as pp_it_world_create sets it), then the
 * scene: the world first, since it reads the scene's ODE world as it goes. */
static inline void pp_it_scene_destroy(pp_scene *scene)
{
    pp_world_destroy(scene->pegplus);
    scene->pegplus = NULL;
    pp_scene_destroy(scene);
}

/* Builds the heap of `boxes` (seed 1, as the benchmark does) named `name` in *scene, poses it
 * from the state file at `path` (read into *st; *script_steps the steps its script has run),
 * and returns its pp_it_world_clock_free world of `model`. Free with pp_world_destroy,
 * pp_scene_destroy and pp_scene_state_free. */
static inline pp_world *pp_it_heap_from_state(pp_scene *scene, pp_scene_state *st,
                                              int *script_steps, const char *path,
                                              const char *name, int boxes, pp_model model)
{
    char why[4400];
    ck_assert_msg(pp_scene_state_read(st, path, why, sizeof why) == 0, "%s", why);
    pp_scene_heap(scene, boxes, 1, st->h);
    *script_steps = 0;
    ck_assert_msg(pp_scene_state_apply(scene, name, st, st->h, script_steps, why, sizeof why) == 0,
                  "%s", why);
    return pp_it_world_clock_free(scene, model);
}

/* pp_it_heap_from_state, then the state file's warm start of `model` restored in the world
 * (the file must carry one: examples/scenes/state.h). */
static inline pp_world *pp_it_heap_warm_from_state(pp_scene *scene, pp_scene_state *st,
                                                   int *script_steps, const char *path,
                                                   const char *name, int boxes, pp_model model)
{
    pp_world *pw = pp_it_heap_from_state(scene, st, script_steps, path, name, boxes, model);
    const char *warm = pp_scene_state_warm_start(st, pp_model_name(model));
    ck_assert_msg(warm != NULL, "%s carries no warm start of %s", path, pp_model_name(model));
    ck_assert_int_eq(pp_world_restore_warm_start(pw, warm), PP_OK);
    return pw;
}

#endif
