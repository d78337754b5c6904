/*
 * pegplus-compare: the comparison workbench (docs/workbench.md). Any scene of the shared
 * library (examples/scenes/catalog.h) or a scene file (docs/scene-file.md), every model and
 * step size in one command, each (model, h) on a freshly built scene, with the same metrics
 * measured the same way for every model; a table, CSV / JSON, a per-step series, figures
 * (gnuplot) and trajectories. `pegplus-compare --help` (HELP below) explains every option and
 * column; --merge combines the CSVs of separate runs (a sweep, compare-sweep).
 *
 * The PEG paper's pouring experiment, one model per process with its own CSV columns, is
 * compare.c (`--model M`: the README's figure 24 and compare-sweep.sh's pouring sweep).
 *
 * Metrics, after every step (and once before the first):
 *  - penetration: pp_scene_max_penetration, the deepest dCollide depth over every pair of
 *    geoms that some model lets collide (the same measurement whatever model stepped);
 *  - overlap: exact overlap volume (pegplus/overlap.h) summed over the pairs of geoms whose
 *    exact polytope is known (pp_catalog_polytope: boxes, the pouring hulls and blocks, scene
 *    file hulls) and whose ODE AABBs overlap, same pair rules as the penetration;
 *  - energy E = sum over non-kinematic bodies of 1/2 m v^2 + 1/2 w^T I w - m g . x. The step's
 *    change is E after pp_world_step minus E after the scene's script (which may add bodies,
 *    and their energy, before the step); drift = the sum of the steps' changes, gain = the
 *    largest single change;
 *  - momentum: P = sum m v, L = sum (I w + x × m v) about the origin, changes summed over the
 *    steps the same way; the table gives |delta P| and |delta L|;
 *  - joint violation: the largest separation (m) of a joint's two anchors (ball, hinge,
 *    universal, hinge2: ODE's dJointGet*Anchor and *Anchor2), for sliders the drift of the
 *    bodies' relative position across the axis and for fixed joints its drift, both from the
 *    relative pose when the joint was first seen;
 *  - time: wall time of each pp_world_step (CLOCK_MONOTONIC), the metrics not included;
 *  - solver: pp_step_stats' lcp_solves and lcp_pivots summed, steps with lcp_fallback != 0
 *    and its worst level, PEG steps with peg_fallback.
 */
#define _GNU_SOURCE /* posix_spawnp, environ */
#include "catalog.h"
#include "pegplus/overlap.h"
#include "pegplus/pegplus.h"
#include "scene_file.h"
#include "state.h"
#include "trajectory.h"

#include <json-c/json.h>

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PP_STATES_DIR
#define PP_STATES_DIR ""
#endif

extern char **environ;
int pp_compare_pour_main(int argc, char **argv); /* compare.c: the pouring experiment */

/* ------------------------------------------------------------------------- options */

/* Every option the parser knows: --help must mention each (CTest compare_help checks it with
 * --list-options). `value` 1 = takes an argument. */
typedef struct option_spec {
    const char *name;
    int value;
} option_spec;

static const option_spec OPTIONS[] = {
    {"--scene", 1}, {"--list-scenes", 0}, {"--models", 1}, {"--h", 1}, {"--seconds", 1},
    {"--seed", 1}, {"--mu", 1}, {"--friction-directions", 1}, {"--relinearize", 1},
    {"--margin", 1}, {"--compliance", 1}, {"--lcp-budget", 1}, {"--states", 1}, {"--budget", 1}, {"--csv", 1},
    {"--json", 1}, {"--series", 1}, {"--figures", 1}, {"--trajectory", 1}, {"--decimation", 1},
    {"--final-state", 1}, {"--program", 1},
    {"--merge", 0}, {"--quiet", 0}, {"--help", 0}, {"--list-options", 0}, {"--model", 1},
};
enum { OPTION_COUNT = sizeof OPTIONS / sizeof OPTIONS[0] };

static const char HELP[] =
    "usage: pegplus-compare [--scene NAME|FILE.json] [--models LIST] [--h LIST] [--seconds T] [options]\n"
    "       pegplus-compare --merge [--csv OUT] [--json OUT] [--figures DIR] RUN.csv...\n"
    "       pegplus-compare --model MODEL --h H --seed S [...]   (the pouring experiment, below)\n"
    "\n"
    "Runs a scene under every listed model at every listed step size, each (model, h) on a\n"
    "freshly built copy of the scene, measures every run the same way and prints one table row\n"
    "per run (stdout); progress goes to stderr (a bar on a terminal, plain lines otherwise).\n"
    "\n"
    "scene and runs:\n"
    "  --scene NAME     a built-in scene (--list-scenes) or a scene file NAME.json\n"
    "                   (docs/scene-file.md); default pour3d\n"
    "  --list-scenes    list the built-in scenes with their default h and length, and exit\n"
    "  --models LIST    comma-separated models (default ode,quick,standard,peg):\n"
    "                     ode       stock ODE, dWorldStep (PP_MODEL_ODE)\n"
    "                     quick     stock ODE, dWorldQuickStep\n"
    "                     standard  PP_MODEL_STANDARD (Stewart-Trinkle, one constraint per pair)\n"
    "                     peg       PP_MODEL_PEG\n"
    "                     standard-lin, peg-lin  the same without the ST96 re-linearisation\n"
    "  --h LIST         comma-separated step sizes, s (default: the scene's own)\n"
    "  --seconds T      simulated time per run, s (default: the scene's own); round(T / h) steps\n"
    "  --seed S         seed of the random scenes (pour3d, heap, pile, islands, boxstack,\n"
    "                   convex; default 1)\n"
    "  --mu MU          friction coefficient of every pair (default: the scene's surface, else\n"
    "                   pp_config_default's 0.5; pour3d: 0 as in the paper)\n"
    "  --friction-directions K   pp_config.friction_directions (default 8; 4 is the\n"
    "                   benchmark's)\n"
    "  --relinearize N, --margin EPS, --compliance R   pp_config.relinearize_iterations,\n"
    "                   proximity_margin, compliance of the pegplus models (default:\n"
    "                   pp_config_default())\n"
    "  --lcp-budget S   pp_config.lcp_budget_seconds of the pegplus models: wall seconds an\n"
    "                   island's LCPs may take a step before the bounded fallback answers\n"
    "                   (default: the library's 10); 0 = no clock, only work bounds, so a run\n"
    "                   gives the same answer on a loaded machine (what tests want)\n"
    "  --states DIR     settled states the heap and pile scenes start from, DIR/<state>.state\n"
    "                   (default: the source tree's examples/scenes/states; '' starts them as\n"
    "                   built)\n"
    "  --program 'PATH [ARGS]'   instead of a scene: an unchanged, dynamically linked ODE\n"
    "                   program run once per model (ode: its own loop; standard, peg) through\n"
    "                   pegplus-run (docs/drop-in.md; found as $PEGPLUS_RUN, the build tree's,\n"
    "                   or on PATH). Its rows hold what pegplus-run's summary reports: steps,\n"
    "                   worst penetration (the pegplus models' contacts; under ode the\n"
    "                   deepest contact ODE reported), LCP solves and pivots, steps with an\n"
    "                   LCP fallback (its fallback_steps), wall time; the rest is nan\n"
    "  --budget S       wall seconds of stepping per run; a run past it stops (status\n"
    "                   time_budget; its metrics cover the steps run). Default: none\n"
    "\n"
    ;
/* (two strings: C limits the length of one literal) */
static const char HELP_OUTPUT[] =
    "output:\n"
    "  --csv FILE       one row per run (columns below), header first (the file is replaced)\n"
    "  --json FILE      the same as a JSON array of objects (json-c)\n"
    "  --series FILE    per-step time series of every run, CSV: scene,model,h,step,t,\n"
    "                   penetration,overlap,energy,momentum_change,angular_momentum_change,\n"
    "                   joint_violation,us_step,lcp_solves,lcp_pivots,lcp_fallback (step 0,\n"
    "                   t = 0 is the state before the first step)\n"
    "  --figures DIR    PNG and SVG figures drawn by gnuplot (apt-get install gnuplot-nox):\n"
    "                   DIR/<scene>-h<h>-<metric>.{png,svg}, each metric against time, one\n"
    "                   curve per model; DIR/<scene>-vs-h-<metric>.{png,svg}, against h;\n"
    "                   the data in DIR/data/ and the script DIR/figures.gp\n"
    "  --trajectory DIR every body's pose per step, DIR/<scene>-<model>-h<h>.pptraj (the\n"
    "                   trajectory format of the viewer, docs/trajectory.md)\n"
    "  --decimation N   write every N-th step to the trajectory (default 1; the first and\n"
    "                   the last step are always written)\n"
    "  --final-state DIR  every body's pose after the last step, DIR/<scene>-<model>-h<h>.state\n"
    "                   (examples/scenes/state.h's format, %.17g: bit for bit)\n"
    "  --quiet          no table, no progress, pegplus's log messages discarded\n"
    "\n"
    "  --merge          merge mode (compare-merge): the arguments are CSV files written by\n"
    "                   --csv (one or more rows each, same columns); prints the table of all\n"
    "                   rows and writes --csv / --json / --figures (against h) for them\n"
    "  --list-options   print every option the parser knows, one a line, and exit\n"
    "  --help           this text\n";

static const char HELP_MORE[] =
    "\n"
    "columns (table, CSV and JSON):\n"
    "  scene, model, h, seconds, seed   the run; bodies: bodies at the end\n"
    "  steps_planned, steps_run, status ok | time_budget | step_failed:<status> |\n"
    "                   nonfinite_state | build_failed\n"
    "  max_penetration  deepest overlap depth of any pair of geoms after any step, m\n"
    "                   (pp_scene_max_penetration: dCollide, the same for every model);\n"
    "                   final_penetration after the last step\n"
    "  overlap_max, overlap_final   exact overlap volume summed over the pairs whose shapes\n"
    "                   are both polytopes (boxes, hulls the tool knows), m^3\n"
    "  energy_initial, energy_final   kinetic + potential energy, J\n"
    "  energy_drift     sum over the steps of E after the step - E before it (J; bodies a\n"
    "                   scene's script adds bring their own energy and are not counted)\n"
    "  energy_max_gain  largest increase of E over one step, J (0 if it never rose)\n"
    "  momentum_change, angular_momentum_change   |delta P| (kg m/s) and |delta L| about the\n"
    "                   origin (kg m^2/s) summed over the steps the same way\n"
    "  joint_violation_max, joint_violation_final   joints' anchor separation, m (ball,\n"
    "                   hinge, universal, hinge2 anchors; slider drift across its axis; fixed\n"
    "                   joint drift)\n"
    "  us_per_step_mean, us_per_step_worst   wall time of pp_world_step, microseconds\n"
    "  lcp_solves, lcp_pivots   summed pp_step_stats.lcp_solves / lcp_pivots\n"
    "  lcp_fallback_steps, lcp_fallback_max   steps with pp_step_stats.lcp_fallback != 0, worst\n"
    "  peg_fallback_steps   steps with pp_step_stats.peg_fallback != 0\n"
    "  wall_seconds     the whole run, metrics included\n"
    "\n"
    "the pouring experiment (PEG paper figure 24; compare-sweep.sh, README):\n"
    "  pegplus-compare --model MODEL --h H --seed S [--seconds 5] [--scene pour3d|\n"
    "      pour3d-icosahedra] [--mu 0] [--csv FILE] [--budget S] [--quiet] [--relinearize N]\n"
    "      [--margin EPS] [--compliance R]\n"
    "  --model MODEL    one model (names as --models): one run, one CSV row appended with the\n"
    "                   experiment's columns (overlap median and quartiles, I/X share, ...;\n"
    "                   the comment at the top of examples/compare.c)\n"
    "\n"
    "exit status: 0 done (a run that failed is a result, in its status), 1 output not written,\n"
    "scene not built or figures failed, 2 usage error.\n";

typedef struct model_spec {
    const char *name;
    pp_model model;
    pp_ode_stepper stepper;
    int linear; /* relinearize_iterations 0 */
} model_spec;

static const model_spec MODELS[] = {
    {"ode", PP_MODEL_ODE, PP_ODE_WORLD_STEP, 0},        {"quick", PP_MODEL_ODE, PP_ODE_QUICK_STEP, 0},
    {"standard", PP_MODEL_STANDARD, PP_ODE_WORLD_STEP, 0}, {"peg", PP_MODEL_PEG, PP_ODE_WORLD_STEP, 0},
    {"standard-lin", PP_MODEL_STANDARD, PP_ODE_WORLD_STEP, 1}, {"peg-lin", PP_MODEL_PEG, PP_ODE_WORLD_STEP, 1},
};
enum { MODEL_COUNT = sizeof MODELS / sizeof MODELS[0], MAX_LIST = 64 };

typedef struct options {
    const char *scene;
    const model_spec *models[MAX_LIST];
    int model_count;
    double hs[MAX_LIST];
    int h_count;
    double seconds;
    unsigned long long seed;
    double mu; /* < 0: the scene's */
    int friction_directions, relinearize;
    double margin, compliance, budget, lcp_budget;
    const char *states, *csv, *json, *series, *figures, *trajectory, *final_state, *program;
    int decimation, quiet, merge;
    char **inputs; /* --merge */
    int input_count;
} options;

static void die_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("pegplus-compare: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see pegplus-compare --help)\n", stderr);
    exit(2);
}

static double parse_number(const char *opt, const char *text)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!end || end == text || *end || !isfinite(v)) die_usage("%s needs a number, not '%s'", opt, text);
    return v;
}

/* "a,b,c" into items (no empty ones). */
static int split_list(char *text, char **items, int max, const char *opt)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(text, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == max) die_usage("%s: at most %d entries", opt, max);
        items[n++] = t;
    }
    if (n == 0) die_usage("%s needs a comma-separated list", opt);
    return n;
}

static const model_spec *find_model(const char *name)
{
    for (int i = 0; i < MODEL_COUNT; ++i)
        if (!strcmp(MODELS[i].name, name)) return &MODELS[i];
    return NULL;
}

static void parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->scene = "pour3d";
    o->seed = 1;
    o->mu = -1.0;
    o->relinearize = -1;
    o->margin = o->compliance = o->lcp_budget = -1.0;
    o->states = PP_STATES_DIR;
    o->decimation = 1;
    o->inputs = calloc((size_t)argc + 1, sizeof *o->inputs);
    static char models_default[] = "ode,quick,standard,peg";
    char *models_text = models_default, *h_text = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            o->inputs[o->input_count++] = argv[i];
            continue;
        }
        const option_spec *spec = NULL;
        for (int k = 0; k < OPTION_COUNT; ++k)
            if (!strcmp(OPTIONS[k].name, a)) spec = &OPTIONS[k];
        if (!spec) die_usage("unknown option '%s'", a);
        const char *v = NULL;
        if (spec->value) {
            if (i + 1 >= argc) die_usage("%s needs a value", a);
            v = argv[++i];
        }
        if (!strcmp(a, "--help")) {
            fputs(HELP, stdout);
            fputs(HELP_OUTPUT, stdout);
            fputs(HELP_MORE, stdout);
            exit(0);
        } else if (!strcmp(a, "--list-options")) {
            for (int k = 0; k < OPTION_COUNT; ++k) puts(OPTIONS[k].name);
            exit(0);
        } else if (!strcmp(a, "--list-scenes")) {
            printf("%-18s %8s %8s  %s\n", "scene", "h (s)", "T (s)", "what");
            for (int k = 0; k < pp_catalog_count(); ++k) {
                const pp_catalog_entry *e = pp_catalog_get(k);
                printf("%-18s %8.5g %8.3g  %s\n", e->name, e->h, e->seconds, e->what);
            }
            printf("%-18s %8s %8s  %s\n", "FILE.json", "file", "file", "a scene file (docs/scene-file.md)");
            exit(0);
        } else if (!strcmp(a, "--scene")) o->scene = v;
        else if (!strcmp(a, "--models")) models_text = (char *)v;
        else if (!strcmp(a, "--h")) h_text = (char *)v;
        else if (!strcmp(a, "--seconds")) o->seconds = parse_number(a, v);
        else if (!strcmp(a, "--seed")) o->seed = (unsigned long long)parse_number(a, v);
        else if (!strcmp(a, "--mu")) o->mu = parse_number(a, v);
        else if (!strcmp(a, "--friction-directions")) o->friction_directions = (int)parse_number(a, v);
        else if (!strcmp(a, "--relinearize")) o->relinearize = (int)parse_number(a, v);
        else if (!strcmp(a, "--margin")) o->margin = parse_number(a, v);
        else if (!strcmp(a, "--compliance")) o->compliance = parse_number(a, v);
        else if (!strcmp(a, "--lcp-budget")) o->lcp_budget = parse_number(a, v);
        else if (!strcmp(a, "--states")) o->states = v;
        else if (!strcmp(a, "--program")) o->program = v;
        else if (!strcmp(a, "--budget")) o->budget = parse_number(a, v);
        else if (!strcmp(a, "--csv")) o->csv = v;
        else if (!strcmp(a, "--json")) o->json = v;
        else if (!strcmp(a, "--series")) o->series = v;
        else if (!strcmp(a, "--figures")) o->figures = v;
        else if (!strcmp(a, "--trajectory")) o->trajectory = v;
        else if (!strcmp(a, "--decimation")) o->decimation = (int)parse_number(a, v);
        else if (!strcmp(a, "--final-state")) o->final_state = v;
        else if (!strcmp(a, "--quiet")) o->quiet = 1;
        else if (!strcmp(a, "--merge")) o->merge = 1;
        else die_usage("option '%s' belongs to the pouring experiment (--model)", a);
    }
    if (o->merge) {
        if (o->input_count == 0) die_usage("--merge needs the CSV files to merge");
        return;
    }
    if (o->input_count) die_usage("unexpected argument '%s'", o->inputs[0]);
    char *items[MAX_LIST];
    int n = split_list(models_text, items, MAX_LIST, "--models");
    for (int k = 0; k < n; ++k) {
        o->models[k] = find_model(items[k]);
        if (!o->models[k]) die_usage("unknown model '%s' (ode, quick, standard, peg, standard-lin, peg-lin)", items[k]);
    }
    o->model_count = n;
    if (h_text) {
        n = split_list(h_text, items, MAX_LIST, "--h");
        for (int k = 0; k < n; ++k) {
            o->hs[k] = parse_number("--h", items[k]);
            if (!(o->hs[k] > 0.0 && o->hs[k] <= 1.0)) die_usage("--h: every step size must be in (0, 1] s");
        }
        o->h_count = n;
    }
    if (o->seconds < 0.0) die_usage("--seconds must be > 0");
    if (o->budget < 0.0) die_usage("--budget must be >= 0");
    if (o->decimation < 1) die_usage("--decimation must be >= 1");
    if (o->friction_directions && (o->friction_directions < 2 || o->friction_directions > 64))
        die_usage("--friction-directions must be in 2..64");
}

/* ----------------------------------------------------------------------- one run */

/* One run's summary: a table / CSV / JSON row. */
typedef struct summary {
    char scene[128], model[32], status[96];
    double h, seconds;
    unsigned long long seed;
    int bodies, steps_planned, steps_run;
    double max_penetration, final_penetration, overlap_max, overlap_final;
    double energy_initial, energy_final, energy_drift, energy_max_gain;
    double momentum_change, angular_momentum_change;
    double joint_violation_max, joint_violation_final;
    double us_mean, us_worst;
    long long lcp_solves, lcp_pivots;
    int lcp_fallback_steps, lcp_fallback_max, peg_fallback_steps;
    double wall_seconds;
} summary;

/* The CSV columns, in order (the header); csv_row and parse_row follow it. */
static const char *const COLUMNS[] = {
    "scene", "model", "h", "seconds", "seed", "bodies", "steps_planned", "steps_run", "status",
    "max_penetration", "final_penetration", "overlap_max", "overlap_final", "energy_initial",
    "energy_final", "energy_drift", "energy_max_gain", "momentum_change",
    "angular_momentum_change", "joint_violation_max", "joint_violation_final",
    "us_per_step_mean", "us_per_step_worst", "lcp_solves", "lcp_pivots", "lcp_fallback_steps",
    "lcp_fallback_max", "peg_fallback_steps", "wall_seconds"};
enum { COLUMN_COUNT = sizeof COLUMNS / sizeof COLUMNS[0] };

/* The per-step series of one run. */
typedef struct sample {
    double t, penetration, overlap, energy, dp, dl, joint, us;
    int lcp_solves, lcp_pivots, lcp_fallback;
} sample;

typedef struct joint_watch {
    dJointID joint;
    int type;
    double rel0[7]; /* slider, fixed: body 1's position and quaternion in body 2's frame */
} joint_watch;

typedef struct run_state {
    joint_watch *joints;
    int joint_count, joint_capacity, seen_bodies;
} run_state;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Energy (kinetic + potential in the world's gravity), linear and angular momentum of the
 * scene's non-kinematic bodies. */
static void mechanics(const pp_scene *s, double *energy, double P[3], double L[3])
{
    dVector3 g;
    dWorldGetGravity(s->world, g);
    double pe = 0.0;
    P[0] = P[1] = P[2] = 0.0;
    for (int i = 0; i < s->body_count; ++i) {
        dBodyID b = s->bodies[i];
        if (dBodyIsKinematic(b)) continue;
        dMass m;
        dBodyGetMass(b, &m);
        const dReal *x = dBodyGetPosition(b), *v = dBodyGetLinearVel(b);
        pe -= m.mass * (g[0] * x[0] + g[1] * x[1] + g[2] * x[2]);
        for (int k = 0; k < 3; ++k) P[k] += m.mass * v[k];
    }
    *energy = pp_scene_kinetic_energy(s) + pe;
    pp_scene_angular_momentum(s, L);
}

/* Body 1's pose in body 2's frame (the world's when body 2 is NULL): p (3), q (4). */
static void relative_pose(dJointID j, double out[7])
{
    dBodyID b1 = dJointGetBody(j, 0), b2 = dJointGetBody(j, 1);
    const dReal *x1 = b1 ? dBodyGetPosition(b1) : NULL;
    dQuaternion q1 = {1, 0, 0, 0}, q2 = {1, 0, 0, 0}, q2c, qr;
    double d[3] = {x1 ? x1[0] : 0, x1 ? x1[1] : 0, x1 ? x1[2] : 0};
    if (b1) memcpy(q1, dBodyGetQuaternion(b1), sizeof q1);
    if (b2) {
        const dReal *x2 = dBodyGetPosition(b2);
        for (int k = 0; k < 3; ++k) d[k] -= x2[k];
        memcpy(q2, dBodyGetQuaternion(b2), sizeof q2);
        dVector3 local;
        dBodyVectorFromWorld(b2, d[0], d[1], d[2], local);
        for (int k = 0; k < 3; ++k) d[k] = local[k];
    }
    q2c[0] = q2[0], q2c[1] = -q2[1], q2c[2] = -q2[2], q2c[3] = -q2[3];
    dQMultiply0(qr, q2c, q1);
    for (int k = 0; k < 3; ++k) out[k] = d[k];
    for (int k = 0; k < 4; ++k) out[3 + k] = qr[k];
}

static void watch_joints(run_state *rs, const pp_scene *s)
{
    if (rs->seen_bodies == s->body_count) return;
    rs->seen_bodies = s->body_count;
    for (int i = 0; i < s->body_count; ++i) {
        dBodyID b = s->bodies[i];
        for (int k = 0; k < dBodyGetNumJoints(b); ++k) {
            dJointID j = dBodyGetJoint(b, k);
            int type = dJointGetType(j);
            if (type == dJointTypeContact) continue;
            int known = 0;
            for (int m = 0; m < rs->joint_count && !known; ++m) known = rs->joints[m].joint == j;
            if (known) continue;
            if (rs->joint_count == rs->joint_capacity) {
                int cap = rs->joint_capacity ? 2 * rs->joint_capacity : 16;
                joint_watch *p = realloc(rs->joints, (size_t)cap * sizeof *p);
                if (!p) return;
                rs->joints = p;
                rs->joint_capacity = cap;
            }
            joint_watch *w = &rs->joints[rs->joint_count++];
            w->joint = j;
            w->type = type;
            relative_pose(j, w->rel0);
        }
    }
}

static double distance3(const dReal *a, const dReal *b)
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* The largest violation over the watched joints, m. */
static double joint_violation(const run_state *rs)
{
    double worst = 0.0;
    for (int i = 0; i < rs->joint_count; ++i) {
        const joint_watch *w = &rs->joints[i];
        dJointID j = w->joint;
        dVector3 a1, a2;
        double v = 0.0;
        switch (w->type) {
        case dJointTypeBall: dJointGetBallAnchor(j, a1), dJointGetBallAnchor2(j, a2), v = distance3(a1, a2); break;
        case dJointTypeHinge: dJointGetHingeAnchor(j, a1), dJointGetHingeAnchor2(j, a2), v = distance3(a1, a2); break;
        case dJointTypeUniversal:
            dJointGetUniversalAnchor(j, a1), dJointGetUniversalAnchor2(j, a2), v = distance3(a1, a2);
            break;
        case dJointTypeHinge2: dJointGetHinge2Anchor(j, a1), dJointGetHinge2Anchor2(j, a2), v = distance3(a1, a2); break;
        case dJointTypeSlider:
        case dJointTypeFixed: {
            double rel[7], d[3];
            relative_pose(j, rel);
            for (int k = 0; k < 3; ++k) d[k] = rel[k] - w->rel0[k];
            if (w->type == dJointTypeSlider) {
                /* the drift across the axis: the axis in body 2's frame (or the world's) */
                dVector3 axis, local;
                dJointGetSliderAxis(j, axis);
                dBodyID b2 = dJointGetBody(j, 1);
                if (b2) dBodyVectorFromWorld(b2, axis[0], axis[1], axis[2], local);
                else memcpy(local, axis, sizeof local);
                double along = d[0] * local[0] + d[1] * local[1] + d[2] * local[2];
                for (int k = 0; k < 3; ++k) d[k] -= along * local[k];
            }
            v = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            break;
        }
        default: break;
        }
        if (v > worst) worst = v;
    }
    return worst;
}

/* Pairs some model lets collide (pp_scene_max_penetration's rules). */
static int pair_counts(dGeomID a, dGeomID b)
{
    dBodyID ba = dGeomGetBody(a), bb = dGeomGetBody(b);
    if (!ba && !bb) return 0;
    if (ba && bb && dAreConnectedExcluding(ba, bb, dJointTypeContact)) return 0;
    if (!(dGeomGetCategoryBits(a) & dGeomGetCollideBits(b)) && !(dGeomGetCategoryBits(b) & dGeomGetCollideBits(a)))
        return 0;
    dReal x[6], y[6];
    dGeomGetAABB(a, x);
    dGeomGetAABB(b, y);
    for (int k = 0; k < 3; ++k)
        if (x[2 * k + 1] < y[2 * k] || y[2 * k + 1] < x[2 * k]) return 0;
    return 1;
}

/* Exact overlap volume summed over the polytope pairs (m^3); NAN when the overlap module
 * rejects a pose (non-finite). */
static double total_overlap(pp_catalog_scene *cs)
{
    dSpaceID space = cs->scene->space;
    int n = dSpaceGetNumGeoms(space);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        dGeomID a = dSpaceGetGeom(space, i);
        const pp_polytope *pa = pp_catalog_polytope(cs, a);
        if (!pa) continue;
        for (int j = i + 1; j < n; ++j) {
            dGeomID b = dSpaceGetGeom(space, j);
            if (!pair_counts(a, b)) continue;
            const pp_polytope *pb = pp_catalog_polytope(cs, b);
            if (!pb) continue;
            double xa[3], Ra[9], xb[3], Rb[9], v = 0.0;
            pp_scene_geom_pose(a, xa, Ra);
            pp_scene_geom_pose(b, xb, Rb);
            if (pp_overlap_volume(pa, xa, Ra, pb, xb, Rb, &v) != PP_OK) return NAN;
            sum += v;
        }
    }
    return sum;
}

static int state_finite(const pp_scene *s)
{
    for (int i = 0; i < s->body_count; ++i) {
        dBodyID b = s->bodies[i];
        const dReal *x = dBodyGetPosition(b), *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b);
        const dReal *q = dBodyGetQuaternion(b);
        for (int k = 0; k < 3; ++k)
            if (!isfinite(x[k]) || !isfinite(v[k]) || !isfinite(w[k])) return 0;
        for (int k = 0; k < 4; ++k)
            if (!isfinite(q[k])) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------ progress */

typedef struct progress {
    int tty, quiet, run, runs;
    double start, last;
    int last_quarter;
} progress;

static void progress_update(progress *p, const char *scene, const char *model, double h, int step, int steps,
                            int done)
{
    if (p->quiet) return;
    double t = now();
    if (p->tty) {
        if (!done && t - p->last < 0.1 && step != 0) return;
        p->last = t;
        const int width = 30;
        int filled = steps ? (int)((double)width * step / steps) : width;
        char bar[64];
        for (int k = 0; k < width; ++k) bar[k] = k < filled ? '#' : '.';
        bar[width] = '\0';
        double elapsed = t - p->start;
        double eta = step > 0 ? elapsed * (steps - step) / step : 0.0;
        fprintf(stderr, "\r[%d/%d] %s %s h=%g [%s] %d/%d steps %.1f s, ~%.0f s left\033[K%s", p->run,
                p->runs, scene, model, h, bar, step, steps, elapsed, eta, done ? "\n" : "");
    } else {
        int quarter = steps ? 4 * step / steps : 4;
        if (!done && quarter == p->last_quarter) return;
        p->last_quarter = quarter;
        fprintf(stderr, "pegplus-compare: [%d/%d] %s %s h=%g: %d/%d steps (%d%%), %.1f s%s\n", p->run,
                p->runs, scene, model, h, step, steps, steps ? 100 * step / steps : 100, t - p->start,
                done ? ", done" : "");
    }
}

/* ---------------------------------------------------------------------------- run */

typedef struct run_output {
    summary sum;
    sample *series; /* steps_run + 1 entries (the first: before any step) */
    int samples;
} run_output;

static void set_status(summary *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->status, sizeof s->status, fmt, ap);
    va_end(ap);
}

static void record(sample *out, pp_catalog_scene *cs, run_state *rs, double t)
{
    double P[3], L[3];
    out->t = t;
    out->penetration = pp_scene_max_penetration(cs->scene);
    out->overlap = total_overlap(cs);
    mechanics(cs->scene, &out->energy, P, L);
    watch_joints(rs, cs->scene);
    out->joint = joint_violation(rs);
}

static void no_pairs(void *data, dGeomID a, dGeomID b) { (void)data, (void)a, (void)b; }

/* Stock ODE's step depends on the order in which its space lists its geoms (the order of the
 * contacts dSpaceCollide finds), and that order depends on when the space was last cleaned
 * (dSpaceCollide recomputes the moved geoms' bounding boxes and clears their dirty marks; a
 * geom moved afterwards goes to the front of the list again). The trajectory writer calls
 * dSpaceCollide for its contacts, so every run cleans the space at the same points, before
 * the first step and after every step, as an ODE program's own collision call would, and what
 * is measured and written does not change what is stepped. (The pegplus models no longer
 * depend on the space's order: ode_bridge.c "A stable order"; before it, heap20 under the
 * standard model took 952 or 1838 Lemke pivots over two steps depending on it.) */
static void clean_space(pp_scene *scene) { dSpaceCollide(scene->space, NULL, no_pairs); }

static const char *scene_label(const char *scene)
{
    /* a scene file's runs are named by its file name without directories and .json */
    static char label[128];
    const char *base = strrchr(scene, '/');
    snprintf(label, sizeof label, "%s", base ? base + 1 : scene);
    size_t n = strlen(label);
    if (n > 5 && !strcmp(label + n - 5, ".json")) label[n - 5] = '\0';
    return label;
}

static int make_dir(const char *path);

/* DIR/<scene>-<model>-h<h><ext> */
static void run_path(char *out, size_t size, const char *dir, const summary *s, const char *ext)
{
    snprintf(out, size, "%s/%s-%s-h%g%s", dir, s->scene, s->model, s->h, ext);
}

static int run_one(const options *o, const model_spec *m, double h, double seconds, progress *pg,
                   run_output *out)
{
    double wall0 = now();
    memset(out, 0, sizeof *out);
    summary *s = &out->sum;
    snprintf(s->scene, sizeof s->scene, "%s", scene_label(o->scene));
    snprintf(s->model, sizeof s->model, "%s", m->name);
    s->h = h;
    s->seconds = seconds;
    s->seed = o->seed;
    s->steps_planned = (int)lround(seconds / h);
    if (s->steps_planned < 1) s->steps_planned = 1;
    set_status(s, "ok");
    out->series = calloc((size_t)s->steps_planned + 1, sizeof *out->series);
    if (!out->series) return 0;

    char why[1024];
    pp_catalog_scene cs;
    pp_status st = pp_catalog_build(&cs, o->scene, h, o->seed, why, sizeof why);
    if (st != PP_OK) {
        fprintf(stderr, "pegplus-compare: %s\n", why);
        return 0;
    }
    dWorldSetAutoDisableFlag(cs.scene->world, 0);
    pp_config c = pp_config_default();
    if (cs.pour) c.surface.mu = 0.0; /* the paper's experiment is frictionless */
    if (cs.scene->configure) cs.scene->configure(cs.scene, &c);
    c.model = m->model;
    c.ode_stepper = m->stepper;
    if (o->mu >= 0.0) c.surface.mu = o->mu;
    if (o->friction_directions) c.friction_directions = o->friction_directions;
    if (o->relinearize >= 0) c.relinearize_iterations = o->relinearize;
    if (m->linear) c.relinearize_iterations = 0;
    if (o->margin > 0.0) c.proximity_margin = o->margin;
    if (o->compliance >= 0.0) c.compliance = o->compliance;
    if (o->lcp_budget >= 0.0) c.lcp_budget_seconds = o->lcp_budget;
    pp_world *world = NULL;
    st = pp_world_create(cs.scene->world, cs.scene->space, &c, &world);
    if (st != PP_OK) {
        fprintf(stderr, "pegplus-compare: %s %s: pp_world_create: %s\n", s->scene, m->name, pp_status_string(st));
        pp_catalog_destroy(&cs);
        return 0;
    }
    if (pp_catalog_start(&cs, world, o->states, h, why, sizeof why) != 0) {
        fprintf(stderr, "pegplus-compare: %s: %s\n", s->scene, why);
        pp_world_destroy(world);
        pp_catalog_destroy(&cs);
        return 0;
    }

    pp_traj_writer *traj = NULL;
    if (o->trajectory) {
        char path[1200];
        run_path(path, sizeof path, o->trajectory, s, ".pptraj");
        traj = pp_traj_open(path, cs.scene, m->name, h, o->decimation);
        if (!traj) {
            pp_world_destroy(world);
            pp_catalog_destroy(&cs);
            return 0;
        }
    }
    int traj_ok = 1;
    run_state rs = {0};
    double P0[3], L0[3], E0, dP[3] = {0, 0, 0}, dL[3] = {0, 0, 0}, drift = 0.0, gain = 0.0;
    double step_total = 0.0;
    int have_initial = 0;
    pg->start = now();
    pg->last = 0.0;
    pg->last_quarter = -1;
    progress_update(pg, s->scene, m->name, h, 0, s->steps_planned, 0);
    for (int i = 0; i < s->steps_planned; ++i) {
        pp_catalog_before_step(&cs, i);
        double Eb, Pb[3], Lb[3];
        mechanics(cs.scene, &Eb, Pb, Lb);
        if (!have_initial) { /* the state before the first step, after the first script */
            clean_space(cs.scene);
            record(&out->series[0], &cs, &rs, 0.0);
            E0 = Eb;
            memcpy(P0, Pb, sizeof P0);
            memcpy(L0, Lb, sizeof L0);
            s->energy_initial = E0;
            out->samples = 1;
            have_initial = 1;
            if (traj && pp_traj_frame(traj, cs.scene, 0, 0.0, 1) != 0) traj_ok = 0;
        }
        double t0 = now();
        st = pp_world_step(world, h);
        double dt = now() - t0;
        if (st != PP_OK) {
            set_status(s, "step_failed:%s", pp_status_string(st));
            break;
        }
        if (!state_finite(cs.scene)) {
            set_status(s, "nonfinite_state");
            break;
        }
        clean_space(cs.scene);
        const pp_step_stats *stats = pp_world_get_stats(world);
        sample *x = &out->series[out->samples];
        record(x, &cs, &rs, (i + 1) * h);
        double Pa[3], La[3];
        mechanics(cs.scene, &x->energy, Pa, La);
        double dE = x->energy - Eb;
        drift += dE;
        if (dE > gain) gain = dE;
        for (int k = 0; k < 3; ++k) dP[k] += Pa[k] - Pb[k], dL[k] += La[k] - Lb[k];
        x->dp = sqrt(dP[0] * dP[0] + dP[1] * dP[1] + dP[2] * dP[2]);
        x->dl = sqrt(dL[0] * dL[0] + dL[1] * dL[1] + dL[2] * dL[2]);
        x->us = 1e6 * dt;
        x->lcp_solves = stats->lcp_solves;
        x->lcp_pivots = stats->lcp_pivots;
        x->lcp_fallback = stats->lcp_fallback;
        out->samples++;
        s->steps_run++;
        step_total += dt;
        if (dt * 1e6 > s->us_worst) s->us_worst = dt * 1e6;
        s->lcp_solves += stats->lcp_solves;
        s->lcp_pivots += stats->lcp_pivots;
        s->lcp_fallback_steps += stats->lcp_fallback != 0;
        if (stats->lcp_fallback > s->lcp_fallback_max) s->lcp_fallback_max = stats->lcp_fallback;
        s->peg_fallback_steps += stats->peg_fallback != 0;
        progress_update(pg, s->scene, m->name, h, i + 1, s->steps_planned, 0);
        int cut = o->budget > 0.0 && step_total > o->budget && i + 1 < s->steps_planned;
        if (traj && pp_traj_frame(traj, cs.scene, i + 1, (i + 1) * h, cut || i + 1 == s->steps_planned) != 0)
            traj_ok = 0;
        if (cut) {
            set_status(s, "time_budget");
            break;
        }
    }
    progress_update(pg, s->scene, m->name, h, s->steps_run, s->steps_planned, 1);
    (void)P0, (void)L0;
    if (traj && pp_traj_close(traj) != 0) traj_ok = 0;
    if (!traj_ok) fprintf(stderr, "pegplus-compare: %s %s h=%g: the trajectory could not be written\n", s->scene, m->name, h);
    int state_ok = 1;
    if (o->final_state) {
        pp_scene_state st = {0};
        snprintf(st.scene, sizeof st.scene, "%s", s->scene);
        snprintf(st.model, sizeof st.model, "%s", m->name);
        st.seed = (unsigned)o->seed;
        st.h = h;
        st.settle_steps = s->steps_run;
        char path[1200], why2[256];
        run_path(path, sizeof path, o->final_state, s, ".state");
        state_ok = pp_scene_state_capture(&st, cs.scene) == 0 &&
                   pp_scene_state_write(&st, path, "pegplus-compare --final-state: the poses after the last step run", why2, sizeof why2) == 0;
        if (!state_ok) fprintf(stderr, "pegplus-compare: %s: %s\n", path, why2);
        pp_scene_state_free(&st);
    }
    s->bodies = cs.scene->body_count;
    for (int k = 0; k < out->samples; ++k) {
        const sample *x = &out->series[k];
        s->max_penetration = fmax(s->max_penetration, x->penetration);
        s->overlap_max = isnan(x->overlap) ? NAN : fmax(s->overlap_max, x->overlap);
        s->joint_violation_max = fmax(s->joint_violation_max, x->joint);
    }
    const sample *last = &out->series[out->samples ? out->samples - 1 : 0];
    s->final_penetration = last->penetration;
    s->overlap_final = last->overlap;
    s->energy_final = last->energy;
    s->energy_drift = drift;
    s->energy_max_gain = gain;
    s->momentum_change = sqrt(dP[0] * dP[0] + dP[1] * dP[1] + dP[2] * dP[2]);
    s->angular_momentum_change = sqrt(dL[0] * dL[0] + dL[1] * dL[1] + dL[2] * dL[2]);
    s->joint_violation_final = last->joint;
    s->us_mean = s->steps_run ? 1e6 * step_total / s->steps_run : 0.0;
    free(rs.joints);
    pp_world_destroy(world); /* first: it destroys the dConvex geoms it made */
    pp_catalog_destroy(&cs);
    s->wall_seconds = now() - wall0;
    return traj_ok && state_ok;
}

/* ------------------------------------------------------------------- rows: CSV / JSON */

static void csv_row(FILE *f, const summary *s)
{
    fprintf(f, "%s,%s,%.15g,%.15g,%llu,%d,%d,%d,%s,%.9e,%.9e,%.9e,%.9e,%.12e,%.12e,%.9e,%.9e,%.9e,%.9e,"
               "%.9e,%.9e,%.3f,%.3f,%lld,%lld,%d,%d,%d,%.3f\n",
            s->scene, s->model, s->h, s->seconds, s->seed, s->bodies, s->steps_planned, s->steps_run,
            s->status, s->max_penetration, s->final_penetration, s->overlap_max, s->overlap_final,
            s->energy_initial, s->energy_final, s->energy_drift, s->energy_max_gain, s->momentum_change,
            s->angular_momentum_change, s->joint_violation_max, s->joint_violation_final, s->us_mean,
            s->us_worst, s->lcp_solves, s->lcp_pivots, s->lcp_fallback_steps, s->lcp_fallback_max,
            s->peg_fallback_steps, s->wall_seconds);
}

/* One data line in COLUMNS order into *s; 0 when malformed. */
static int parse_row(char *line, summary *s)
{
    char *field[COLUMN_COUNT + 1];
    int n = 0;
    for (char *p = line;; ++p) {
        if (n <= COLUMN_COUNT) field[n] = p;
        n++;
        p = strchr(p, ',');
        if (!p) break;
        *p = '\0';
    }
    if (n != COLUMN_COUNT) return 0;
    memset(s, 0, sizeof *s);
    snprintf(s->scene, sizeof s->scene, "%s", field[0]);
    snprintf(s->model, sizeof s->model, "%s", field[1]);
    s->h = atof(field[2]);
    s->seconds = atof(field[3]);
    s->seed = strtoull(field[4], NULL, 10);
    s->bodies = atoi(field[5]);
    s->steps_planned = atoi(field[6]);
    s->steps_run = atoi(field[7]);
    snprintf(s->status, sizeof s->status, "%s", field[8]);
    double *d[] = {&s->max_penetration, &s->final_penetration, &s->overlap_max, &s->overlap_final,
                   &s->energy_initial, &s->energy_final, &s->energy_drift, &s->energy_max_gain,
                   &s->momentum_change, &s->angular_momentum_change, &s->joint_violation_max,
                   &s->joint_violation_final, &s->us_mean, &s->us_worst};
    for (int k = 0; k < 14; ++k) *d[k] = strtod(field[9 + k], NULL);
    s->lcp_solves = atoll(field[23]);
    s->lcp_pivots = atoll(field[24]);
    s->lcp_fallback_steps = atoi(field[25]);
    s->lcp_fallback_max = atoi(field[26]);
    s->peg_fallback_steps = atoi(field[27]);
    s->wall_seconds = atof(field[28]);
    return 1;
}

static int write_csv(const char *path, const summary *rows, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "pegplus-compare: cannot write %s: %s\n", path, strerror(errno));
        return 0;
    }
    for (int k = 0; k < COLUMN_COUNT; ++k) fprintf(f, "%s%s", COLUMNS[k], k + 1 < COLUMN_COUNT ? "," : "\n");
    for (int i = 0; i < n; ++i) csv_row(f, &rows[i]);
    int ok = !ferror(f);
    ok = (fclose(f) == 0) && ok;
    if (!ok) fprintf(stderr, "pegplus-compare: writing %s failed\n", path);
    return ok;
}

static int write_json(const char *path, const summary *rows, int n)
{
    json_object *array = json_object_new_array();
    for (int i = 0; i < n; ++i) {
        const summary *s = &rows[i];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "scene", json_object_new_string(s->scene));
        json_object_object_add(o, "model", json_object_new_string(s->model));
        json_object_object_add(o, "h", json_object_new_double(s->h));
        json_object_object_add(o, "seconds", json_object_new_double(s->seconds));
        json_object_object_add(o, "seed", json_object_new_int64((int64_t)s->seed));
        json_object_object_add(o, "bodies", json_object_new_int(s->bodies));
        json_object_object_add(o, "steps_planned", json_object_new_int(s->steps_planned));
        json_object_object_add(o, "steps_run", json_object_new_int(s->steps_run));
        json_object_object_add(o, "status", json_object_new_string(s->status));
        const struct { const char *key; double v; } d[] = {
            {"max_penetration", s->max_penetration}, {"final_penetration", s->final_penetration},
            {"overlap_max", s->overlap_max}, {"overlap_final", s->overlap_final},
            {"energy_initial", s->energy_initial}, {"energy_final", s->energy_final},
            {"energy_drift", s->energy_drift}, {"energy_max_gain", s->energy_max_gain},
            {"momentum_change", s->momentum_change}, {"angular_momentum_change", s->angular_momentum_change},
            {"joint_violation_max", s->joint_violation_max}, {"joint_violation_final", s->joint_violation_final},
            {"us_per_step_mean", s->us_mean}, {"us_per_step_worst", s->us_worst}};
        for (size_t k = 0; k < sizeof d / sizeof d[0]; ++k)
            json_object_object_add(o, d[k].key, isfinite(d[k].v) ? json_object_new_double(d[k].v) : NULL);
        json_object_object_add(o, "lcp_solves", json_object_new_int64(s->lcp_solves));
        json_object_object_add(o, "lcp_pivots", json_object_new_int64(s->lcp_pivots));
        json_object_object_add(o, "lcp_fallback_steps", json_object_new_int(s->lcp_fallback_steps));
        json_object_object_add(o, "lcp_fallback_max", json_object_new_int(s->lcp_fallback_max));
        json_object_object_add(o, "peg_fallback_steps", json_object_new_int(s->peg_fallback_steps));
        json_object_object_add(o, "wall_seconds", json_object_new_double(s->wall_seconds));
        json_object_array_add(array, o);
    }
    int ok = json_object_to_file_ext(path, array, JSON_C_TO_STRING_PRETTY) == 0;
    if (!ok) fprintf(stderr, "pegplus-compare: cannot write %s: %s\n", path, json_util_get_last_err());
    json_object_put(array);
    return ok;
}

static void print_table(const summary *rows, int n)
{
    printf("%-12s %-12s %-8s %11s %-14s %10s %10s %10s %10s %9s %9s %9s %10s %10s %8s %9s %4s\n", "scene", "model", "h",
           "steps", "status", "max pen m", "overlap m3", "dE J", "gain J", "|dP|", "|dL|", "joint m", "us mean",
           "us worst", "lcp", "pivots", "fb");
    for (int i = 0; i < n; ++i) {
        const summary *s = &rows[i];
        char steps[32];
        snprintf(steps, sizeof steps, "%d/%d", s->steps_run, s->steps_planned);
        printf("%-12s %-12s %-8g %11s %-14s %10.3e %10.3e %10.3e %10.3e %9.2e %9.2e %9.2e %10.1f %10.1f %8lld %9lld %4d\n",
               s->scene, s->model, s->h, steps, s->status, s->max_penetration, s->overlap_max, s->energy_drift,
               s->energy_max_gain, s->momentum_change, s->angular_momentum_change, s->joint_violation_max,
               s->us_mean, s->us_worst, s->lcp_solves, s->lcp_pivots, s->lcp_fallback_steps);
    }
    fflush(stdout);
}

static int write_series(FILE *f, const run_output *r)
{
    const summary *s = &r->sum;
    for (int k = 0; k < r->samples; ++k) {
        const sample *x = &r->series[k];
        fprintf(f, "%s,%s,%.15g,%d,%.15g,%.9e,%.9e,%.12e,%.9e,%.9e,%.9e,%.3f,%d,%d,%d\n", s->scene, s->model, s->h,
                k, x->t, x->penetration, x->overlap, x->energy, x->dp, x->dl, x->joint, x->us, x->lcp_solves,
                x->lcp_pivots, x->lcp_fallback);
    }
    return !ferror(f);
}

/* --------------------------------------------------------------------------- figures */

/* mkdir -p */
static int make_dir(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; ++p) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) break;
        *p = '/';
    }
    if (mkdir(path, 0777) == 0 || errno == EEXIST) return 1;
    fprintf(stderr, "pegplus-compare: cannot create %s: %s\n", path, strerror(errno));
    return 0;
}

/* Runs `gnuplot script` as a child process; 1 when it exited 0. */
static int run_gnuplot(const char *script)
{
    char *argv[] = {"gnuplot", (char *)script, NULL};
    pid_t pid;
    int err = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
    if (err != 0) {
        fprintf(stderr, "pegplus-compare: cannot run gnuplot (%s): install it with apt-get install "
                        "gnuplot-nox (cmake/install-deps.sh does); the data and %s are written\n",
                strerror(err), script);
        return 0;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "pegplus-compare: gnuplot %s failed\n", script);
        return 0;
    }
    return 1;
}

typedef struct metric {
    const char *key, *label;
    int column; /* in the time .dat: 1 t, 2 penetration, 3 overlap, 4 energy - E0, 5 joint, 6 us */
    int log;
} metric;

static const metric TIME_METRICS[] = {
    {"penetration", "worst penetration depth (m)", 2, 1},
    {"overlap", "exact overlap volume, polytope pairs (m^3)", 3, 1},
    {"energy", "E - E(0) (J)", 4, 0},
    {"joint", "joint violation (m)", 5, 1},
    {"time", "wall time of pp\\_world\\_step ({/Symbol m}s)", 6, 1},
};
static const metric H_METRICS[] = {
    {"penetration", "worst penetration depth over the run (m)", 2, 1},
    {"overlap", "largest exact overlap volume (m^3)", 3, 1},
    {"energy", "|energy drift| (J)", 4, 1},
    {"joint", "largest joint violation (m)", 5, 1},
    {"time", "mean wall time per step ({/Symbol m}s)", 6, 1},
};
enum { METRIC_COUNT = 5 };

static void plot_header(FILE *gp, const char *out, int term, const char *title, const char *xlabel,
                        const metric *m)
{
    if (term == 0) fprintf(gp, "set terminal pngcairo size 1000,620 enhanced font ',10'\n");
    else fprintf(gp, "set terminal svg size 1000,620 enhanced font 'Helvetica,12' background rgb 'white'\n");
    fprintf(gp, "set output '%s.%s'\n", out, term == 0 ? "png" : "svg");
    fprintf(gp, "set title \"%s\" noenhanced\nset xlabel '%s'\nset ylabel \"%s\"\n", title, xlabel, m->label);
    /* on a log axis zeros are drawn at the floor; the range starts below it so that a metric
     * that is 0 throughout still has a range */
    fprintf(gp, "%s\n", m->log ? "set logscale y\nset format y '10^{%L}'\nset yrange [floor / 10:*]"
                               : "unset logscale y\nset format y '%g'\nset autoscale y");
}

/* Per-run time plots and the plots against h, for the rows (and series when not NULL). */
static int figures(const char *dir, const summary *rows, int n, const run_output *runs)
{
    char data[1024], script[1024];
    snprintf(data, sizeof data, "%s/data", dir);
    if (!make_dir(dir) || !make_dir(data)) return 0;
    snprintf(script, sizeof script, "%s/figures.gp", dir);
    FILE *gp = fopen(script, "w");
    if (!gp) {
        fprintf(stderr, "pegplus-compare: cannot write %s\n", script);
        return 0;
    }
    /* zero cannot be shown on a log axis: values below the floor are drawn at it */
    fprintf(gp, "# generated by pegplus-compare --figures\nfloor = 1e-16\nlift(v) = v > floor ? v : floor\n"
                "set grid\nset key outside right top noenhanced\nset datafile missing 'nan'\n");
    if (runs) {
        for (int i = 0; i < n; ++i) {
            char path[1200];
            snprintf(path, sizeof path, "%s/%s-%s-h%g.dat", data, rows[i].scene, rows[i].model, rows[i].h);
            FILE *f = fopen(path, "w");
            if (!f) return fclose(gp), 0;
            fprintf(f, "# t penetration overlap energy-E0 joint_violation us_step\n");
            const run_output *r = &runs[i];
            for (int k = 0; k < r->samples; ++k) {
                const sample *x = &r->series[k];
                fprintf(f, "%.9g %.9e %.9e %.9e %.9e %.3f\n", x->t, x->penetration, x->overlap,
                        x->energy - r->series[0].energy, x->joint, k ? x->us : NAN);
            }
            fclose(f);
        }
        /* one figure per (scene, h, metric), a curve per model */
        for (int i = 0; i < n; ++i) {
            int first = 1;
            for (int j = 0; j < i; ++j)
                if (!strcmp(rows[j].scene, rows[i].scene) && rows[j].h == rows[i].h) first = 0;
            if (!first) continue;
            for (int m = 0; m < METRIC_COUNT; ++m) {
                const metric *me = &TIME_METRICS[m];
                for (int term = 0; term < 2; ++term) {
                    char out[1200], title[256];
                    snprintf(out, sizeof out, "%s/%s-h%g-%s", dir, rows[i].scene, rows[i].h, me->key);
                    snprintf(title, sizeof title, "%s, h = %g s: %s", rows[i].scene, rows[i].h, me->key);
                    plot_header(gp, out, term, title, "t (s)", me);
                    fprintf(gp, "plot ");
                    int curves = 0;
                    for (int j = i; j < n; ++j) {
                        if (strcmp(rows[j].scene, rows[i].scene) || rows[j].h != rows[i].h) continue;
                        fprintf(gp, "%s'%s/%s-%s-h%g.dat' using 1:(%s($%d)) with lines lw 2 title '%s'",
                                curves++ ? ", " : "", data, rows[j].scene, rows[j].model, rows[j].h,
                                me->log ? "lift" : "", me->column, rows[j].model);
                    }
                    fprintf(gp, "\n");
                }
            }
        }
    }
    /* against h: one data file per (scene, model), one figure per (scene, metric) */
    for (int i = 0; i < n; ++i) {
        int first = 1;
        for (int j = 0; j < i; ++j)
            if (!strcmp(rows[j].scene, rows[i].scene) && !strcmp(rows[j].model, rows[i].model)) first = 0;
        if (!first) continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s-%s-vs-h.dat", data, rows[i].scene, rows[i].model);
        FILE *f = fopen(path, "w");
        if (!f) return fclose(gp), 0;
        fprintf(f, "# h max_penetration overlap_max |energy_drift| joint_violation_max us_per_step_mean\n");
        /* rows of this (scene, model) sorted by h */
        double last = -1.0;
        for (;;) {
            int best = -1;
            for (int j = 0; j < n; ++j)
                if (!strcmp(rows[j].scene, rows[i].scene) && !strcmp(rows[j].model, rows[i].model) &&
                    rows[j].h > last && (best < 0 || rows[j].h < rows[best].h))
                    best = j;
            if (best < 0) break;
            const summary *s = &rows[best];
            fprintf(f, "%.9g %.9e %.9e %.9e %.9e %.3f\n", s->h, s->max_penetration, s->overlap_max,
                    fabs(s->energy_drift), s->joint_violation_max, s->us_mean);
            last = s->h;
        }
        fclose(f);
    }
    for (int i = 0; i < n; ++i) {
        int first = 1;
        for (int j = 0; j < i; ++j)
            if (!strcmp(rows[j].scene, rows[i].scene)) first = 0;
        if (!first) continue;
        for (int m = 0; m < METRIC_COUNT; ++m) {
            const metric *me = &H_METRICS[m];
            for (int term = 0; term < 2; ++term) {
                char out[1200], title[256];
                snprintf(out, sizeof out, "%s/%s-vs-h-%s", dir, rows[i].scene, me->key);
                snprintf(title, sizeof title, "%s: %s against h", rows[i].scene, me->key);
                plot_header(gp, out, term, title, "step size h (s)", me);
                fprintf(gp, "set logscale x\nplot ");
                int curves = 0;
                for (int j = i; j < n; ++j) {
                    int seen = 0;
                    for (int k = i; k < j; ++k)
                        if (!strcmp(rows[k].scene, rows[j].scene) && !strcmp(rows[k].model, rows[j].model)) seen = 1;
                    if (seen || strcmp(rows[j].scene, rows[i].scene)) continue;
                    fprintf(gp, "%s'%s/%s-%s-vs-h.dat' using 1:(lift($%d)) with linespoints lw 2 pt 7 title '%s'",
                            curves++ ? ", " : "", data, rows[j].scene, rows[j].model, me->column, rows[j].model);
                }
                fprintf(gp, "\nunset logscale x\n");
            }
        }
    }
    int ok = fclose(gp) == 0;
    return ok && run_gnuplot(script);
}

/* ----------------------------------------------------------------------------- merge */

static int merge_main(const options *o)
{
    summary *rows = NULL;
    int n = 0, cap = 0, ok = 1;
    char header[4096];
    size_t hl = 0;
    for (int k = 0; k < COLUMN_COUNT; ++k)
        hl += (size_t)snprintf(header + hl, sizeof header - hl, "%s%s", COLUMNS[k], k + 1 < COLUMN_COUNT ? "," : "");
    for (int i = 0; i < o->input_count; ++i) {
        FILE *f = fopen(o->inputs[i], "r");
        if (!f) {
            fprintf(stderr, "pegplus-compare: cannot read %s: %s\n", o->inputs[i], strerror(errno));
            ok = 0;
            continue;
        }
        char line[8192];
        int lineno = 0;
        while (fgets(line, sizeof line, f)) {
            lineno++;
            line[strcspn(line, "\r\n")] = '\0';
            if (!*line) continue;
            if (lineno == 1) {
                if (strcmp(line, header) != 0) {
                    fprintf(stderr, "pegplus-compare: %s: not a pegplus-compare --csv file (header differs)\n", o->inputs[i]);
                    ok = 0;
                    break;
                }
                continue;
            }
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                summary *r = realloc(rows, (size_t)cap * sizeof *r);
                if (!r) {
                    fclose(f);
                    free(rows);
                    return 1;
                }
                rows = r;
            }
            if (!parse_row(line, &rows[n])) {
                fprintf(stderr, "pegplus-compare: %s:%d: expected %d columns\n", o->inputs[i], lineno, COLUMN_COUNT);
                ok = 0;
                continue;
            }
            n++;
        }
        fclose(f);
    }
    if (!o->quiet) print_table(rows, n);
    if (o->csv) ok = write_csv(o->csv, rows, n) && ok;
    if (o->json) ok = write_json(o->json, rows, n) && ok;
    if (o->figures) ok = figures(o->figures, rows, n, NULL) && ok;
    if (!o->quiet) fprintf(stderr, "pegplus-compare: %d rows merged from %d files\n", n, o->input_count);
    free(rows);
    return ok ? 0 : 1;
}

/* ------------------------------------------------------------------------------ main */

/* ------------------------------------------------------------- unchanged programs */

#ifndef PP_PEGPLUS_RUN
#define PP_PEGPLUS_RUN "pegplus-run"
#endif

/* pegplus-run's script: $PEGPLUS_RUN, else the build tree's (when it is there), else PATH's. */
static const char *pegplus_run_path(void)
{
    const char *env = getenv("PEGPLUS_RUN");
    if (env && *env) return env;
    return access(PP_PEGPLUS_RUN, R_OK) == 0 ? PP_PEGPLUS_RUN : "pegplus-run";
}

/* The value after "key=" in pegplus-run's summary line, or NAN. */
static double summary_field(const char *line, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, " %s=", key);
    const char *at = strstr(line, pattern);
    return at ? strtod(at + strlen(pattern), NULL) : NAN;
}

/* One model's run of the program: `sh pegplus-run --model M -- PROGRAM ARGS`, its stdout
 * discarded, its stderr kept in a temporary file whose last "pegplus-run: model=" line is the
 * summary (pegplus-run prints it at exit). */
static void run_program(const options *o, const model_spec *m, summary *s)
{
    memset(s, 0, sizeof *s);
    char first[128]; /* the program's file name, without its directories */
    snprintf(first, sizeof first, "%.*s", (int)strcspn(o->program, " \t"), o->program);
    const char *base = strrchr(first, '/');
    snprintf(s->scene, sizeof s->scene, "%s", base ? base + 1 : first);
    snprintf(s->model, sizeof s->model, "%s", m->name);
    s->h = s->seconds = NAN;
    s->final_penetration = s->overlap_max = s->overlap_final = NAN;
    s->energy_initial = s->energy_final = s->energy_drift = s->energy_max_gain = NAN;
    s->momentum_change = s->angular_momentum_change = NAN;
    s->joint_violation_max = s->joint_violation_final = NAN;
    s->us_worst = NAN;
    const char *model = m->model == PP_MODEL_ODE ? "ode" : m->model == PP_MODEL_STANDARD ? "standard" : "peg";
    if (m->linear || (m->model == PP_MODEL_ODE && m->stepper != PP_ODE_WORLD_STEP)) {
        set_status(s, "not_a_program_model"); /* the program's own loop picks its stepper */
        return;
    }
    char err[] = "/tmp/pegplus-compare-XXXXXX";
    int fd = mkstemp(err);
    if (fd < 0) {
        set_status(s, "no_temporary_file");
        return;
    }
    close(fd);
    char command[8192];
    snprintf(command, sizeof command, "sh '%s' --model %s -- %s >/dev/null 2>'%s'",
             pegplus_run_path(), model, o->program, err);
    double t0 = now();
    int rc = system(command);
    s->wall_seconds = now() - t0;
    char line[2048], last[2048] = "";
    FILE *f = fopen(err, "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "pegplus-run: model=", 19)) snprintf(last, sizeof last, "%s", line);
    if (f) fclose(f);
    unlink(err);
    if (!*last) {
        set_status(s, "program_failed:%d", rc);
        return;
    }
    s->steps_run = s->steps_planned = (int)summary_field(last, "steps");
    s->max_penetration = summary_field(last, "worst_penetration");
    double solves = summary_field(last, "lcp_solves"), pivots = summary_field(last, "lcp_pivots");
    s->lcp_solves = isnan(solves) ? 0 : (long long)solves;
    s->lcp_pivots = isnan(pivots) ? 0 : (long long)pivots;
    double fallback_steps = summary_field(last, "fallback_steps");
    s->lcp_fallback_steps = isnan(fallback_steps) ? 0 : (int)fallback_steps;
    double peg = summary_field(last, "peg_fallback_steps");
    s->peg_fallback_steps = isnan(peg) ? 0 : (int)peg;
    s->us_mean = s->steps_run > 0 ? 1e6 * s->wall_seconds / s->steps_run : NAN;
    double refused = summary_field(last, "refused");
    if (rc != 0) set_status(s, "program_failed:%d", rc);
    else if (refused > 0) set_status(s, "steps_refused:%d", (int)refused);
    else set_status(s, "ok");
}

static int program_main(const options *o)
{
    summary rows[MAX_LIST];
    int ok = 1;
    for (int mi = 0; mi < o->model_count; ++mi) {
        if (!o->quiet) fprintf(stderr, "pegplus-compare: %s under %s ...\n", o->program, o->models[mi]->name);
        run_program(o, o->models[mi], &rows[mi]);
    }
    if (!o->quiet) print_table(rows, o->model_count);
    if (o->csv) ok = write_csv(o->csv, rows, o->model_count) && ok;
    if (o->json) ok = write_json(o->json, rows, o->model_count) && ok;
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (!strcmp(argv[i], "--model")) return pp_compare_pour_main(argc, argv);
    options o;
    parse_options(argc, argv, &o);
    if (o.quiet) pp_set_log_hook(pp_log_discard, NULL);
    if (o.merge) {
        int r = merge_main(&o);
        free(o.inputs);
        return r;
    }
    free(o.inputs); /* only --merge has inputs */
    o.inputs = NULL;
    if (o.program) return program_main(&o);

    /* the scene's defaults */
    const pp_catalog_entry *e = pp_catalog_find(o.scene);
    double default_h = e ? e->h : 0.01, default_seconds = e ? e->seconds : 1.0;
    if (!e) {
        pp_catalog_scene cs;
        char why[1024];
        if (pp_catalog_build(&cs, o.scene, 0.01, o.seed, why, sizeof why) != PP_OK) {
            fprintf(stderr, "pegplus-compare: %s\n", why);
            return 1;
        }
        double fh, fs;
        pp_scene_file_run(cs.scene, &fh, &fs);
        if (fh > 0.0) default_h = fh;
        if (fs > 0.0) default_seconds = fs;
        pp_catalog_destroy(&cs);
    }
    if (o.h_count == 0) o.hs[0] = default_h, o.h_count = 1;
    if (o.seconds == 0.0) o.seconds = default_seconds;
    if ((o.trajectory && !make_dir(o.trajectory)) || (o.final_state && !make_dir(o.final_state))) return 1;

    int runs = o.model_count * o.h_count;
    run_output *out = calloc((size_t)runs, sizeof *out);
    summary *rows = calloc((size_t)runs, sizeof *rows);
    if (!out || !rows) return 1;
    progress pg = {isatty(2), o.quiet, 0, runs, 0, 0, -1};
    int done = 0, ok = 1;
    for (int hi = 0; hi < o.h_count; ++hi)
        for (int mi = 0; mi < o.model_count; ++mi) {
            pg.run = done + 1;
            if (!run_one(&o, o.models[mi], o.hs[hi], o.seconds, &pg, &out[done])) ok = 0;
            if (out[done].samples == 0) { /* not built, or not started */
                summary *s = &out[done].sum;
                snprintf(s->scene, sizeof s->scene, "%s", scene_label(o.scene));
                snprintf(s->model, sizeof s->model, "%s", o.models[mi]->name);
                s->h = o.hs[hi];
                s->seconds = o.seconds;
                s->seed = o.seed;
                set_status(s, "build_failed");
            }
            rows[done] = out[done].sum;
            done++;
        }
    if (!o.quiet) print_table(rows, runs);
    if (o.csv) ok = write_csv(o.csv, rows, runs) && ok;
    if (o.json) ok = write_json(o.json, rows, runs) && ok;
    if (o.series) {
        FILE *f = fopen(o.series, "w");
        if (!f) {
            fprintf(stderr, "pegplus-compare: cannot write %s: %s\n", o.series, strerror(errno));
            ok = 0;
        } else {
            fprintf(f, "scene,model,h,step,t,penetration,overlap,energy,momentum_change,"
                       "angular_momentum_change,joint_violation,us_step,lcp_solves,lcp_pivots,lcp_fallback\n");
            for (int i = 0; i < runs; ++i) ok = write_series(f, &out[i]) && ok;
            ok = (fclose(f) == 0) && ok;
        }
    }
    if (o.figures) ok = figures(o.figures, rows, runs, out) && ok;
    for (int i = 0; i < runs; ++i) free(out[i].series);
    free(out);
    free(rows);
    return ok ? 0 : 1;
}
