/*
 * pegplus-compare --model M: the PEG paper's experiment (PEG Sec. 6, figure 24;
 * docs/references.md), one configuration per process (the workbench's other modes, any scene and
 * several models at once, are workbench.c, whose main calls pp_compare_pour_main when --model
 * is given), one CSV row per run, so that a sweep over models
 * x step sizes x seeds is spread by existing tools (compare-sweep.sh: xargs -P or GNU
 * parallel; a Slurm job array would do the same).
 *
 * Usage:
 *   pegplus-compare --model ode|quick|standard|peg|standard-lin|peg-lin --h H --seed S [--seconds 5]
 *                   [--scene pour3d|pour3d-icosahedra] [--mu 0] [--csv FILE] [--budget SECONDS]
 *                   [--quiet] [--relinearize N] [--margin EPS] [--compliance R]
 *
 *   --relinearize, --margin, --compliance  pp_config.relinearize_iterations,
 *             proximity_margin and compliance of the
 *             pegplus models (default: pp_config_default()).
 *   Environment PP_COMPARE_TRACE=V: print to stderr every step whose total overlap exceeds V
 *             m^3, with the step's contact and constraint-set statistics (for diagnosis).
 *
 *   ode       PP_MODEL_ODE with dWorldStep      standard  PP_MODEL_STANDARD
 *   quick     PP_MODEL_ODE with dWorldQuickStep peg       PP_MODEL_PEG
 *   standard-lin, peg-lin   the same without the ST96 §3.6 re-linearisation
 *             (relinearize_iterations 0): the gap linearised at the start of the step only,
 *             as in the PEG paper's experiment
 *
 * The run: the pouring scene with its drop schedule (pouring.h), stepped with pp_world_step
 * for --seconds (default 5) at step size h, frictionless unless --mu. After every step the
 * exact overlap volume (pegplus/overlap.h) is summed over every pair of geoms with at least
 * one dynamic body: dynamic-dynamic AND dynamic-static (the five blocks), as the authors'
 * testGeometry_5.m does; pairs whose ODE bounding boxes are apart are skipped.
 *
 * A run "crashes" when pp_world_step returns an error (e.g. PP_ERR_UNSUPPORTED while
 * PP_MODEL_PEG is not wired into the step, or a solver failure), when a body's state becomes
 * NaN/Inf, or when a body's centre leaves the box (|x| > 5.125, |y| > 2.125, z < -0.25: the
 * outer faces of the blocks) or flies above z = 50 m. The run stops there; the failed step is
 * not counted. --budget stops a run after that many seconds of stepping (status
 * "time_budget", not a crash).
 *
 * CSV (appended; the header is written when the file is new or empty):
 *   scene, model, h, seed, seconds, mu       the configuration
 *   bodies                                   bodies dropped
 *   steps_planned, steps_run                 round(seconds / h); steps that completed
 *   crashed, crash_time, status              1/0; time at the start of the failed step (s,
 *                                            NA if none); ok | time_budget | step_failed:<pp
 *                                            status> | nonfinite_state | escaped
 *   overlap_pairs                            which pairs the total sums: always
 *                                            "dynamic-dynamic+dynamic-static"
 *   overlap_median, overlap_q1, overlap_q3   total overlap volume (m^3) over the steps run;
 *                                            Q1/Q3 as in the authors' processDataBoxPlot.m:
 *                                            medians of the values strictly below / above the
 *                                            median (the median itself when there are none)
 *   overlap_max, overlap_final               largest and last total overlap, m^3
 *   us_per_step                              mean wall time of pp_world_step, microseconds
 *                                            (the overlap measurement is not included)
 *   ix_step_share                            PP_MODEL_PEG: share of steps with I or X
 *                                            constraint sets (pp_step_stats.peg_i_sets,
 *                                            peg_x_sets); NA for the other models
 *   lcp_fallback_steps, lcp_fallback_max     pegplus models: steps whose time-stepping LCP
 *                                            answers applied needed a fallback, and the worst
 *                                            fallback level (pp_step_stats.lcp_fallback: 1
 *                                            regularised, 2 the bounded fallback's answer, 3 no
 *                                            contact impulse); 0 under PP_MODEL_ODE
 *   peg_fallback_steps                       PP_MODEL_PEG: steps where the PEG LCP failed and
 *                                            the standard constraints ran (NA otherwise)
 *   max_speed                                fastest body centre over the run, m/s
 *   wall_seconds                             the whole run, including the overlap metric
 *
 * Exit status: 0 when the row was written (a crash is a result, not an error), 1 when the
 * scene could not be built or the CSV not written, 2 on a usage error.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "pegplus/overlap.h"
#include "pegplus/pegplus.h"
#include "pouring.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A body's centre beyond the blocks' outer faces has escaped the box. */
static const double ESCAPE_X = 5.125, ESCAPE_Y = 2.125, ESCAPE_Z_LOW = -0.25, ESCAPE_Z_HIGH = 50.0;

typedef struct options {
    const char *model_name;
    pp_model model;
    pp_ode_stepper stepper;
    double h, seconds, mu, budget;
    unsigned long long seed;
    const char *scene_name;
    pp_pour_shape shape;
    const char *csv_path;
    int quiet;
    double relinearize, margin, compliance; /* -1: pp_config_default() */
} options;

typedef struct run_result {
    int bodies, steps_planned, steps_run, crashed;
    double crash_time;
    char status[64];
    double *overlaps;          /* total overlap after every step run */
    double us_per_step;
    int ix_steps, lcp_fallback_steps, lcp_fallback_max, peg_fallback_steps;
    double max_speed, wall_seconds;
} run_result;

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s --model ode|quick|standard|peg|standard-lin|peg-lin --h H --seed S [--seconds 5]\n"
            "          [--scene pour3d|pour3d-icosahedra] [--mu 0] [--csv FILE] [--budget SECONDS] [--quiet]\n"
            "          [--relinearize N] [--margin EPS] [--compliance R]   (pegplus models; "
            "default: pp_config_default)\n",
            argv0);
}

static int parse_double(const char *text, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!end || *end || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->h = -1.0;
    o->seconds = 5.0;
    o->scene_name = "pour3d";
    o->shape = PP_POUR_RANDOM_HULLS;
    o->relinearize = o->margin = o->compliance = -1.0;
    int have_seed = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(a, "--quiet")) { o->quiet = 1; continue; }
        if (!v) ok = 0;
        else if (!strcmp(a, "--model")) o->model_name = v;
        else if (!strcmp(a, "--h")) ok = parse_double(v, &o->h);
        else if (!strcmp(a, "--seconds")) ok = parse_double(v, &o->seconds);
        else if (!strcmp(a, "--mu")) ok = parse_double(v, &o->mu);
        else if (!strcmp(a, "--budget")) ok = parse_double(v, &o->budget);
        else if (!strcmp(a, "--relinearize")) ok = parse_double(v, &o->relinearize);
        else if (!strcmp(a, "--margin")) ok = parse_double(v, &o->margin);
        else if (!strcmp(a, "--compliance")) ok = parse_double(v, &o->compliance);
        else if (!strcmp(a, "--csv")) o->csv_path = v;
        else if (!strcmp(a, "--scene")) o->scene_name = v;
        else if (!strcmp(a, "--seed")) {
            char *end = NULL;
            o->seed = strtoull(v, &end, 10);
            ok = end && !*end && *v != '-';
            have_seed = 1;
        } else ok = 0;
        if (!ok) {
            fprintf(stderr, "%s: bad or incomplete option %s%s%s\n", argv[0], a, v ? " " : "", v ? v : "");
            return 0;
        }
        ++i;
    }
    if (!o->model_name || !have_seed || !(o->h > 0.0) || o->h > 1.0 || !(o->seconds > 0.0) ||
        o->mu < 0.0 || o->budget < 0.0) {
        fprintf(stderr, "%s: --model, --h (0 < h <= 1) and --seed are required; --seconds > 0, "
                        "--mu >= 0, --budget >= 0\n", argv[0]);
        return 0;
    }
    if (!strcmp(o->model_name, "ode")) o->model = PP_MODEL_ODE, o->stepper = PP_ODE_WORLD_STEP;
    else if (!strcmp(o->model_name, "quick")) o->model = PP_MODEL_ODE, o->stepper = PP_ODE_QUICK_STEP;
    else if (!strcmp(o->model_name, "standard")) o->model = PP_MODEL_STANDARD;
    else if (!strcmp(o->model_name, "peg")) o->model = PP_MODEL_PEG;
    else if (!strcmp(o->model_name, "standard-lin")) o->model = PP_MODEL_STANDARD;
    else if (!strcmp(o->model_name, "peg-lin")) o->model = PP_MODEL_PEG;
    else {
        fprintf(stderr, "%s: unknown model '%s' (ode, quick, standard, peg, standard-lin, "
                        "peg-lin)\n", argv[0], o->model_name);
        return 0;
    }
    if (!strcmp(o->scene_name, "pour3d")) o->shape = PP_POUR_RANDOM_HULLS;
    else if (!strcmp(o->scene_name, "pour3d-icosahedra")) o->shape = PP_POUR_ICOSAHEDRA;
    else {
        fprintf(stderr, "%s: unknown scene '%s' (pour3d, pour3d-icosahedra)\n", argv[0], o->scene_name);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ measurement */

/* NULL when every body is finite and inside the box; else the status word. */
static const char *state_problem(const pp_pour_scene *s, double *max_speed)
{
    for (int i = 0; i < s->scene.body_count; ++i) {
        dBodyID b = s->scene.bodies[i];
        const dReal *x = dBodyGetPosition(b), *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b);
        const dReal *q = dBodyGetQuaternion(b);
        for (int k = 0; k < 3; ++k)
            if (!isfinite(x[k]) || !isfinite(v[k]) || !isfinite(w[k])) return "nonfinite_state";
        for (int k = 0; k < 4; ++k)
            if (!isfinite(q[k])) return "nonfinite_state";
        double speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (speed > *max_speed) *max_speed = speed;
        if (fabs(x[0]) > ESCAPE_X || fabs(x[1]) > ESCAPE_Y || x[2] < ESCAPE_Z_LOW || x[2] > ESCAPE_Z_HIGH)
            return "escaped";
    }
    return NULL;
}

/* ------------------------------------------------------------------------- run */

static int run(const options *o, run_result *r)
{
    double wall_start = now_seconds();
    memset(r, 0, sizeof *r);
    r->steps_planned = (int)lround(o->seconds / o->h);
    if (r->steps_planned < 1) r->steps_planned = 1;
    r->overlaps = malloc(sizeof(double) * (size_t)r->steps_planned);
    if (!r->overlaps) {
        fprintf(stderr, "pegplus-compare: out of memory\n");
        return 0;
    }
    snprintf(r->status, sizeof r->status, "ok");

    pp_pour_scene pour;
    if (pp_pour_scene_create(&pour, o->shape, o->seed) != PP_OK) return 0;
    pp_config config = pp_config_default();
    config.model = o->model;
    config.ode_stepper = o->stepper;
    config.surface.mu = o->mu;
    if (o->relinearize >= 0.0) config.relinearize_iterations = (int)o->relinearize;
    if (strstr(o->model_name, "-lin")) config.relinearize_iterations = 0;
    if (o->margin > 0.0) config.proximity_margin = o->margin;
    if (o->compliance >= 0.0) config.compliance = o->compliance;
    pp_world *world = NULL;
    if (pp_world_create(pour.scene.world, pour.scene.space, &config, &world) != PP_OK) {
        pp_pour_scene_destroy(&pour);
        return 0;
    }

    double step_time = 0.0;
    int next_drop = 0;
    for (int step = 0; step < r->steps_planned; ++step) {
        if (next_drop < PP_POUR_DROPS && step == pp_pour_drop_step(next_drop, o->h)) {
            pp_status ds = pp_pour_scene_drop(&pour, world, next_drop);
            if (ds != PP_OK) {
                fprintf(stderr, "pegplus-compare: body %d could not be dropped (%s)\n", next_drop,
                        pp_status_string(ds));
                pp_world_destroy(world);
                pp_pour_scene_destroy(&pour);
                return 0;
            }
            next_drop++;
        }
        double t0 = now_seconds();
        pp_status st = pp_world_step(world, o->h);
        double dt = now_seconds() - t0;
        if (st != PP_OK) {
            r->crashed = 1;
            r->crash_time = step * o->h;
            snprintf(r->status, sizeof r->status, "step_failed:%s", pp_status_string(st));
            break;
        }
        const char *problem = state_problem(&pour, &r->max_speed);
        if (problem) {
            r->crashed = 1;
            r->crash_time = step * o->h;
            snprintf(r->status, sizeof r->status, "%s", problem);
            break;
        }
        double total = 0.0;
        pp_status ost = pp_pour_scene_overlap(&pour, &total);
        if (ost != PP_OK) { /* a pose the overlap module rejects: report it as a failure */
            r->crashed = 1;
            r->crash_time = step * o->h;
            snprintf(r->status, sizeof r->status, "overlap_failed:%s", pp_status_string(ost));
            break;
        }
        const pp_step_stats *stats = pp_world_get_stats(world);
        r->ix_steps += stats->peg_i_sets + stats->peg_x_sets > 0;
        r->lcp_fallback_steps += stats->lcp_fallback != 0;
        if (stats->lcp_fallback > r->lcp_fallback_max) r->lcp_fallback_max = stats->lcp_fallback;
        r->peg_fallback_steps += stats->peg_fallback != 0;
        r->overlaps[r->steps_run++] = total;
        if (getenv("PP_COMPARE_TRACE") && total > atof(getenv("PP_COMPARE_TRACE")))
            fprintf(stderr, "step %d t=%.3f overlap %.3e contacts %d sets U%d I%d X%d lcp %d "
                    "fallback %d/%d relin %d refused %d substeps %d min_gap %.3g\n", step,
                    (step + 1) * o->h, total, stats->contacts, stats->peg_u_sets,
                    stats->peg_i_sets, stats->peg_x_sets, stats->lcp_size, stats->lcp_fallback,
                    stats->peg_fallback, stats->relinearizations, stats->relinearize_refused,
                    stats->substeps, stats->min_gap);
        step_time += dt;
        if (o->budget > 0.0 && step_time > o->budget && r->steps_run < r->steps_planned) {
            snprintf(r->status, sizeof r->status, "time_budget");
            break;
        }
    }
    r->bodies = pour.scene.body_count;
    r->us_per_step = r->steps_run ? 1e6 * step_time / r->steps_run : 0.0;
    pp_world_destroy(world); /* first: it destroys the dConvex geoms it made */
    pp_pour_scene_destroy(&pour);
    r->wall_seconds = now_seconds() - wall_start;
    return 1;
}

/* ------------------------------------------------------------------- statistics */

static int compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median of sorted values (mean of the two middle ones when n is even, as MATLAB's). */
static double median_sorted(const double *v, int n)
{
    if (n <= 0) return NAN;
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median and the authors' quartiles: Q1 = median of the values below the median, Q3 = of those
 * above (processDataBoxPlot.m); the median itself when a side is empty. Sorts v. */
static void median_quartiles(double *v, int n, double *q1, double *med, double *q3)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    *med = median_sorted(v, n);
    int below = 0, above_first = n;
    while (below < n && v[below] < *med) ++below;
    while (above_first > 0 && v[above_first - 1] > *med) --above_first;
    *q1 = below > 0 ? median_sorted(v, below) : *med;
    *q3 = above_first < n ? median_sorted(v + above_first, n - above_first) : *med;
}

static int write_row(const options *o, run_result *r)
{
    double med = NAN, q1 = NAN, q3 = NAN, max = NAN, final = NAN;
    if (r->steps_run > 0) {
        final = r->overlaps[r->steps_run - 1];
        median_quartiles(r->overlaps, r->steps_run, &q1, &med, &q3);
        max = r->overlaps[r->steps_run - 1]; /* sorted now */
    }
    char ix[32], crash_time[32], peg_fallback[32];
    if (o->model == PP_MODEL_PEG && r->steps_run > 0)
        snprintf(ix, sizeof ix, "%.6f", (double)r->ix_steps / r->steps_run);
    else snprintf(ix, sizeof ix, "NA");
    if (r->crashed) snprintf(crash_time, sizeof crash_time, "%.6f", r->crash_time);
    else snprintf(crash_time, sizeof crash_time, "NA");
    if (o->model == PP_MODEL_PEG) snprintf(peg_fallback, sizeof peg_fallback, "%d", r->peg_fallback_steps);
    else snprintf(peg_fallback, sizeof peg_fallback, "NA");

    FILE *f = o->csv_path ? fopen(o->csv_path, "a") : stdout;
    if (!f) {
        fprintf(stderr, "pegplus-compare: cannot open %s for appending\n", o->csv_path);
        return 0;
    }
    if (f != stdout) fseek(f, 0, SEEK_END);
    if (f == stdout || ftell(f) == 0)
        fprintf(f, "scene,model,h,seed,seconds,mu,bodies,steps_planned,steps_run,crashed,"
                   "crash_time,status,overlap_pairs,overlap_median,overlap_q1,overlap_q3,overlap_max,"
                   "overlap_final,us_per_step,ix_step_share,lcp_fallback_steps,lcp_fallback_max,"
                   "peg_fallback_steps,max_speed,wall_seconds\n");
    /* one fprintf of one line: appends from concurrent runs do not interleave in practice,
     * but compare-sweep.sh gives every run its own file anyway */
    fprintf(f, "%s,%s,%g,%llu,%g,%g,%d,%d,%d,%d,%s,%s,dynamic-dynamic+dynamic-static,%.6e,%.6e,%.6e,%.6e,%.6e,%.3f,%s,%d,%d,%s,%.6g,%.3f\n",
            o->scene_name, o->model_name, o->h, o->seed, o->seconds, o->mu, r->bodies,
            r->steps_planned, r->steps_run, r->crashed, crash_time, r->status, med, q1, q3, max,
            final, r->us_per_step, ix, r->lcp_fallback_steps, r->lcp_fallback_max, peg_fallback,
            r->max_speed, r->wall_seconds);
    int ok = !ferror(f);
    if (f != stdout) ok = (fclose(f) == 0) && ok;
    if (!ok) fprintf(stderr, "pegplus-compare: writing %s failed\n", o->csv_path);
    if (!o->quiet && o->csv_path)
        printf("%s %-8s h=%-6g seed=%-3llu steps %d/%d %s%s overlap median %.3e [%.3e, %.3e] max %.3e, "
               "%.1f us/step\n",
               o->scene_name, o->model_name, o->h, o->seed, r->steps_run, r->steps_planned,
               r->status, r->crashed ? " (crashed)" : "", med, q1, q3, max, r->us_per_step);
    return ok;
}

/* main of the pouring experiment: workbench.c's main calls it when --model is given */
int pp_compare_pour_main(int argc, char **argv);
int pp_compare_pour_main(int argc, char **argv)
{
    options o;
    if (!parse_options(argc, argv, &o)) {
        usage(argv[0]);
        return 2;
    }
    /* pegplus's messages (warnings of fallbacks, the PEG "not built yet") would flood a sweep;
     * the CSV row carries the outcome */
    if (o.quiet) pp_set_log_hook(pp_log_discard, NULL);
    run_result r;
    if (!run(&o, &r)) {
        free(r.overlaps);
        return 1;
    }
    int ok = write_row(&o, &r);
    free(r.overlaps);
    return ok ? 0 : 1;
}
