/*
 * Trajectories: every body's pose per (decimated) step of a scene, and the penetrating
 * contacts, in the .pptraj format of docs/trajectory.md, for replay and for the browser viewer
 * (examples/viewer). Part of the scene library: the writer reads a pp_scene.
 *
 *     pp_traj_writer *w = pp_traj_open("heap.pptraj.gz", &s, "standard", h, 100);
 *     pp_traj_frame(w, &s, 0, 0.0, 0);                      // the initial state
 *     for (int step = 0; step < steps; ++step) {
 *         if (s.before_step) s.before_step(&s, step);
 *         pp_world_step(pw, h);
 *         pp_traj_frame(w, &s, step + 1, (step + 1) * h, step + 1 == steps);
 *     }
 *     pp_traj_close(w);
 *
 * These are example programs' helpers, not the library: errors are printed on stderr.
 */
#ifndef PP_TRAJECTORY_H
#define PP_TRAJECTORY_H

#include "scenes.h"

#include <stdint.h>

/* Record tags (docs/trajectory.md). */
enum { PP_TRAJ_TAG_HEADER = 1, PP_TRAJ_TAG_BODY = 2, PP_TRAJ_TAG_FRAME = 3 };

typedef struct pp_traj_writer pp_traj_writer;

/* Opens `path` (gzip-compressed when it ends in ".gz") and writes the magic and the HEADER
 * record: scene->name, model_name, the step size h (s), decimation (>= 1) and the scene's
 * static geoms (geoms without a body, in the space and its sub-spaces). Convex hulls are read
 * from scene->pegplus (pp_convex_polytope) when it is set. NULL on error (message on stderr,
 * errno as the failing call left it). */
pp_traj_writer *pp_traj_open(const char *path, const pp_scene *scene, const char *model_name,
                             double h, int decimation);

/* After step `step` (0 = the initial state, before any step) at time t (s): writes a BODY
 * record for every body appended to the scene since the last call, then a FRAME when
 * step % decimation == 0 or `force` is set (set it for the last step, so that the final poses
 * are in the file). 0 ok, -1 on an I/O error (message on stderr). */
int pp_traj_frame(pp_traj_writer *w, const pp_scene *scene, int step, double t, int force);

/* Flushes, closes and frees the writer (NULL is accepted). 0 ok, -1 on an I/O error. */
int pp_traj_close(pp_traj_writer *w);

/* A penetrating contact of a frame: body indices (-1 = static geometry), depth (m, > 0) and
 * the contact point (world, m), as dCollide reports them. */
typedef struct pp_traj_contact {
    int body_a, body_b;
    double depth;
    double point[3];
} pp_traj_contact;

/* A loaded trajectory (pp_traj_load). Everything is owned by it and freed by pp_traj_free. */
typedef struct pp_traj {
    char *scene;                  /* the HEADER's fields */
    char *model;
    double h;
    int decimation;
    int static_geom_count;        /* entries of HEADER "static_geoms" */
    int body_count;               /* BODY records read (bodies 0 .. body_count - 1) */
    char **body_names;            /* body_names[i]: BODY "name" of body i */
    int *body_geom_count;         /* entries of BODY "geoms" of body i */
    char **body_geom_class;       /* "class" of the first geom of body i ("" when none) */
    char **body_records;          /* body_records[i]: the BODY record's JSON text, NUL-ended */
    int frame_count;
    int *steps;                   /* steps[f], times[f] (s) */
    double *times;
    int *body_count_at_frame;     /* bodies in frame f (a prefix of the bodies) */
    double **poses;               /* poses[f][7 * b + k]: x, y, z (m), qw, qx, qy, qz of body b */
    int *contact_count;           /* contact_count[f] penetrating contacts of frame f */
    pp_traj_contact **contacts;   /* contacts[f][c] */
} pp_traj;

/* Loads the whole file at `path` (plain or gzip, detected from the content) into `out`.
 * Unknown record tags are skipped. 0 ok; -1 when the file cannot be read or is malformed
 * (bad magic, a truncated record, bad JSON, a BODY out of order, a FRAME with more bodies
 * than declared): message on stderr and `out` left empty (pp_traj_free on it is harmless). */
int pp_traj_load(const char *path, pp_traj *out);
void pp_traj_free(pp_traj *t);

#endif
