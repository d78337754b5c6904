/*
 * Settled states: every body's pose of a scene after it has been settled, kept in a small
 * text file so that every model of the benchmark starts from the same state, and that state
 * is one the pegplus models accept (no overlap) rather than stock ODE's soft-contact one.
 *
 * File format (version 1 or 2), text, one item per line, '#' lines are comments:
 *
 *     pegplus-state 2         2 when the file has more than one warm-start section (below),
 *                             else 1 (a version-1 reader reads it)
 *     scene heap20            the benchmark's scene name (pegplus-benchmark --list)
 *     seed 1                  the builder's seed
 *     h 0.01                  step size of the settle, s (%.17g)
 *     settle_steps 1000       steps taken while settling (the script ran at steps 0..N-1)
 *     model standard          the model that settled it (pegplus-benchmark's model names;
 *                             several joined by '+' in the order they ran, e.g.
 *                             ode_quickstep+ode_step for the heaps of 50 and 100 boxes)
 *     bodies 20               body lines that follow
 *     # free comments: how long it took, deepest overlap, speed before zeroing, ...
 *     x y z qw qx qy qz       one line per body, in the scene's creation order, %.17g
 *     ...
 *
 * Positions in m, quaternions (w, x, y, z) as ODE's dBodyGetQuaternion; velocities are not
 * stored: a settled state is at rest by definition (pp_scene_state_apply zeroes them).
 * %.17g round-trips every double, so a loaded state is the written one bit for bit.
 *
 * Optionally, after the body lines, the solver's warm start, at most one section per model
 * (version 1: at most one section), each pegplus.h pp_world_save_warm_start's text as it is:
 *
 *     pegplus-warm-start 1
 *     model standard          the model that made it (a pp_model_name: ode, standard, peg):
 *                             only that model's runs restore it
 *     geoms 25 ...            (the geoms in the order a world loaded from this file sees them)
 *     end pegplus-warm-start
 *     pegplus-warm-start 1
 *     model peg
 *     ...
 *     end pegplus-warm-start
 *
 * Each section is a starting basis for its model's first step from these poses (every solve
 * is still checked as an LCP answer). pegplus-benchmark --make-states writes them
 * (--warm-steps, --warm-rest): the standard model's after the steps whose poses are written
 * (the velocities they left, ~1e-10 m/s at rest, zeroed all the same), then each other
 * model's after its own steps from the poses written, which it does not write. The benchmark
 * restores a section into the runs of its model only (pp_world_restore_warm_start refuses
 * another model's); a model without a section starts cold.
 */
#ifndef PP_SCENE_STATE_H
#define PP_SCENE_STATE_H

#include "scenes.h"

#include <stddef.h>
#include <stdio.h>

enum { PP_SCENE_STATE_NAME = 64, PP_SCENE_STATE_WARM_MAX = 4 };

/* One warm-start section: a model's pp_world_save_warm_start text. */
typedef struct pp_scene_state_warm {
    char model[PP_SCENE_STATE_NAME];    /* its pp_model_name, from the text's model line */
    char *text;                         /* malloc'ed */
} pp_scene_state_warm;

typedef struct pp_scene_state {
    char scene[PP_SCENE_STATE_NAME];    /* benchmark scene name, e.g. "heap20" */
    unsigned seed;
    double h;                           /* s */
    int settle_steps;
    char model[PP_SCENE_STATE_NAME];    /* e.g. "standard", "ode_quickstep" */
    int count;                          /* bodies */
    double *pose;                       /* 7 per body: x y z qw qx qy qz; malloc'ed */
    int warm_count;                     /* warm-start sections, each of another model */
    pp_scene_state_warm warm[PP_SCENE_STATE_WARM_MAX]; /* in the file's order */
    char *comments;                     /* read: the header's comment lines without "# ",
                                           '\n'-separated, or NULL; malloc'ed */
} pp_scene_state;

/* Copies every body's pose of `scene` into `state->pose` (allocating it) and sets
 * state->count; the other fields are the caller's. 0, or -1 when out of memory. */
int pp_scene_state_capture(pp_scene_state *state, const pp_scene *scene);

/* Writes the state to `path` (through `path`.tmp and rename, so that an interrupted writer
 * leaves no partial file). `comments`, if not NULL, is written after the header with each
 * line prefixed by "# "; the warm-start sections after the body lines (version 2 when there
 * are several). 0, or -1 with the reason in why. */
int pp_scene_state_write(const pp_scene_state *state, const char *path, const char *comments,
                         char *why, size_t why_size);

/* Reads a state file. 0; 1 when the file does not exist (why says so); -1 when it exists but
 * cannot be read or is malformed (why names the line and, for the warm-start sections, what is
 * wrong: a line that is neither a comment nor a section, a section without its end line, one
 * whose second line is not "model NAME" or whose NAME is no pp_model_name, a second section of
 * a model, a second section under version 1). Lines may be of any length. On success the
 * caller frees with pp_scene_state_free. */
int pp_scene_state_read(pp_scene_state *state, const char *path, char *why, size_t why_size);

/* Puts a freshly built scene into the state: runs the scene's script (before_step) without
 * stepping, at steps 0, 1, ... for as long as the settle took (settle_steps x state h / `h`,
 * the run's step size), until it has created state->count bodies, then sets every body's
 * pose from the state and zeroes every velocity. `name` is the scene's name as the caller
 * knows it; it must equal state->scene. 0, or -1 with the reason in why (name or body
 * count differ). *script_steps (if not NULL) gets the step index the run's script continues
 * at (the settle's length in steps of `h`). */
int pp_scene_state_apply(pp_scene *scene, const char *name, const pp_scene_state *state,
                         double h, int *script_steps, char *why, size_t why_size);

/* The text of `model`'s warm-start section (a pp_model_name), or NULL when there is none. */
const char *pp_scene_state_warm_start(const pp_scene_state *state, const char *model);

/* Makes `text` (a pp_world_save_warm_start text, malloc'ed; the state takes it) the warm-start
 * section of the model its model line names, in place of that model's section if there is one
 * (else after the others). 0; -1 when the text names no model or there is no room (`text`
 * then stays the caller's). */
int pp_scene_state_set_warm_start(pp_scene_state *state, char *text);

void pp_scene_state_free(pp_scene_state *state);

/* The path of `scene`'s state file in `dir`: DIR/<scene>.state, the settled state every model
 * starts from; with `ode` 1, DIR/<scene>.ode.state, stock ODE's own settled heap, which the
 * PP_MODEL_ODE rows start from where it exists. Why two: ODE's colliders make a contact only
 * where two geoms overlap (depth >= 0), and its contacts keep overlaps of ~1e-5 m at rest,
 * while the pegplus models want none: from <scene>.state, whose overlaps were projected out,
 * ODE finds no contact for the pairs left a hair apart (heap50: 39 of the 97 pairs within
 * 1e-6 m) and the heap falls into itself. pegplus-benchmark --make-states writes the ODE file
 * for the heaps it settles under dWorldStep (heap50, heap100): their poses before the
 * projection, within 1e-4 m of <scene>.state's. Returns buf, or NULL if the path did not fit. */
char *pp_scene_state_path(char *buf, size_t size, const char *dir, const char *scene, int ode);

#endif
