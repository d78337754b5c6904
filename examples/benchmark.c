/*
 * pegplus-benchmark: time per step (and LCP pivots per step for the pegplus models) of every
 * model on the same scenes, in the same process: stock dWorldStep and dWorldQuickStep (through
 * PP_MODEL_ODE), PP_MODEL_STANDARD and PP_MODEL_PEG. Prints a table with ratios to dWorldStep
 * and writes one CSV row per (scene, model).
 *
 * Usage: pegplus-benchmark [--steps N] [--h H] [--csv FILE] [--budget SECONDS] [--quick]
 *                          [--scene NAME] [--model NAME]
 * (--budget: seconds of stepping per scene and model, default 30; a run that passes it
 * stops after the step that did, and says so)
 *   --quick  a short smoke pass (CTest runs this): 20 steps, a 10 s budget, and a 3-box column
 *            and a 6-box pile in place of the 10- and 30-box scenes
 *   --scene, --model  run only that scene (box_drop, column10, pile30) or model (ode_step,
 *            ode_quickstep, standard, peg; the ode_step row always runs, it is the ratio's
 *            baseline)
 * Rows are printed as they finish (line-buffered output).
 */
#include "pegplus/pegplus.h"
#include "scenes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_scene {
    const char *name;
    void (*build)(pp_scene *scene);
} bench_scene;

static void build_box_drop(pp_scene *s) { pp_scene_box_drop(s, 0.5); }
static void build_column(pp_scene *s) { pp_scene_box_column(s, 10, 0.0); }
static void build_pile(pp_scene *s) { pp_scene_box_pile(s, 30, 1); }
/* --quick: the same kinds of scene, small enough for a smoke pass of every model */
static void build_column_small(pp_scene *s) { pp_scene_box_column(s, 3, 0.0); }
static void build_pile_small(pp_scene *s) { pp_scene_box_pile(s, 6, 1); }

typedef struct bench_model {
    const char *name;
    pp_model model;
    pp_ode_stepper stepper;
} bench_model;

typedef struct bench_result {
    int steps;
    double us_per_step;
    double pivots_per_step;
    int fallbacks;              /* steps whose LCP needed the regularised or no-impulse fallback */
    double max_speed;           /* fastest body at the end of any step, m/s: flags blow-ups */
    int out_of_time;            /* the run hit the time budget */
    pp_status status;
} bench_result;

static double g_budget = 30.0; /* wall-clock seconds per run */

static bench_result run(const bench_scene *sc, const bench_model *m, int steps, double h)
{
    pp_scene scene;
    sc->build(&scene);
    pp_config config = pp_config_default();
    config.model = m->model;
    config.ode_stepper = m->stepper;
    config.friction_directions = 4;
    pp_world *world = NULL;
    bench_result r = {0, 0.0, 0.0, 0, 0.0, 0, pp_world_create(scene.world, scene.space, &config, &world)};
    double total = 0.0;
    long pivots = 0;
    for (int i = 0; i < steps && r.status == PP_OK; ++i) {
        r.status = pp_world_step(world, h);
        if (r.status != PP_OK) break;
        const pp_step_stats *st = pp_world_get_stats(world);
        total += st->time_total;
        pivots += st->lcp_pivots;
        r.fallbacks += st->lcp_fallback != 0;
        for (int b = 0; b < scene.body_count; ++b) {
            const dReal *v = dBodyGetLinearVel(scene.bodies[b]);
            double speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            if (speed > r.max_speed) r.max_speed = speed;
        }
        r.steps++;
        if (total > g_budget) {
            r.out_of_time = 1;
            break;
        }
    }
    r.pivots_per_step = r.steps ? (double)pivots / r.steps : 0.0;
    r.us_per_step = r.steps ? 1e6 * total / r.steps : 0.0;
    pp_world_destroy(world);
    pp_scene_destroy(&scene);
    return r;
}

int main(int argc, char **argv)
{
    int steps = 1000;
    double h = 0.01;
    const char *csv_path = "pegplus-benchmark.csv";
    const char *only_scene = NULL, *only_model = NULL;
    int quick = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--h") && i + 1 < argc) h = atof(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc) g_budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) {
            quick = 1;
            steps = 20;
            g_budget = 10.0;
        }
        else if (!strcmp(argv[i], "--scene") && i + 1 < argc) only_scene = argv[++i];
        else if (!strcmp(argv[i], "--model") && i + 1 < argc) only_model = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--steps N] [--h H] [--csv FILE] [--budget SECONDS] [--quick] "
                            "[--scene NAME] [--model NAME]\n", argv[0]);
            return 2;
        }
    }
    if (steps < 1 || !(h > 0.0)) {
        fprintf(stderr, "%s: steps must be >= 1 and h > 0\n", argv[0]);
        return 2;
    }
    pp_set_log_hook(pp_log_discard, NULL);

    const bench_scene full[] = {
        {"box_drop", build_box_drop}, {"column10", build_column}, {"pile30", build_pile}};
    const bench_scene small[] = {
        {"box_drop", build_box_drop}, {"column3", build_column_small}, {"pile6", build_pile_small}};
    const bench_scene *scenes = quick ? small : full;
    const size_t scene_count = sizeof full / sizeof full[0];
    const bench_model models[] = {
        {"ode_step", PP_MODEL_ODE, PP_ODE_WORLD_STEP},
        {"ode_quickstep", PP_MODEL_ODE, PP_ODE_QUICK_STEP},
        {"standard", PP_MODEL_STANDARD, PP_ODE_WORLD_STEP},
        {"peg", PP_MODEL_PEG, PP_ODE_WORLD_STEP}};
    FILE *csv = fopen(csv_path, "w");
    if (!csv) {
        fprintf(stderr, "%s: cannot write %s\n", argv[0], csv_path);
        return 1;
    }
    fprintf(csv, "scene,model,h,steps_run,us_per_step,pivots_per_step,ratio_to_ode_step,"
                 "lcp_fallbacks,max_speed,status\n");
    printf("pegplus %s benchmark: %d steps at h = %g, friction directions k = 4\n\n",
           PP_VERSION_STRING, steps, h);
    printf("%-10s %-14s %7s %10s %9s %8s %9s %9s  %s\n", "scene", "model", "steps", "us/step",
           "pivots", "x step", "fallback", "max|v|", "status");
    for (size_t s = 0; s < scene_count; ++s) {
        if (only_scene && strcmp(only_scene, scenes[s].name)) continue;
        double baseline = 0.0;
        for (size_t m = 0; m < sizeof models / sizeof models[0]; ++m) {
            if (only_model && m != 0 && strcmp(only_model, models[m].name)) continue;
            bench_result r = run(&scenes[s], &models[m], steps, h);
            if (m == 0) baseline = r.us_per_step;
            double ratio = baseline > 0.0 && r.steps ? r.us_per_step / baseline : 0.0;
            const char *status = r.out_of_time                      ? "time budget reached"
                                 : r.status == PP_OK                ? "ok"
                                 : r.status == PP_ERR_UNSUPPORTED ? "contact model not built yet"
                                                                  : pp_status_string(r.status);
            printf("%-10s %-14s %7d %10.1f %9.1f %8.2f %9d %9.2f  %s\n", scenes[s].name,
                   models[m].name, r.steps, r.us_per_step, r.pivots_per_step, ratio, r.fallbacks,
                   r.max_speed, status);
            fprintf(csv, "%s,%s,%g,%d,%.3f,%.3f,%.4f,%d,%.4f,%s\n", scenes[s].name,
                    models[m].name, h, r.steps, r.us_per_step, r.pivots_per_step, ratio,
                    r.fallbacks, r.max_speed, status);
        }
    }
    fclose(csv);
    printf("\nCSV written to %s\n", csv_path);
    return 0;
}
