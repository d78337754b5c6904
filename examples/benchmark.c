/*
 * pegplus-benchmark: CPU time per step, LCP size and pivots, fallbacks, peak memory and the
 * real-time factor of every model on the shared scenes (examples/scenes/): stock dWorldStep
 * and dWorldQuickStep (through PP_MODEL_ODE), PP_MODEL_STANDARD and PP_MODEL_PEG. One table
 * row and one CSV row per (scene, model); `pegplus-benchmark --help` explains every option and
 * column (the text is HELP below).
 *
 * How a row is run. Every (scene, model) runs in its own forked child process, so that its
 * peak resident memory (wait4's ru_maxrss) is its own and a crash, an abort or a step that
 * never ends (the parent kills a child still running after 2 x budget + 30 s of wall time)
 * costs that row only. (Not RLIMIT_CPU: while a process-wide CPU limit is armed, Linux
 * samples CLOCK_PROCESS_CPUTIME_ID from the group timer, updated only at scheduler events,
 * and short steps then read as 0 us.)
 * The child writes one record per step into memory shared with the parent (mmap
 * MAP_SHARED), so the steps done before a crash are still reported. The parent stays small:
 * it builds no scene itself (the baseline RSS is printed in the header).
 *
 * The same settled state for every model (heap and pile scenes). A heap or a pile starts
 * from its settled state file, examples/scenes/states/<scene>.state (--states DIR; the
 * format is in examples/scenes/state.h: one body's position and quaternion a line, %.17g).
 * The files are made by pegplus-benchmark itself, with
 *
 *     pegplus-benchmark --make-states examples/scenes/states [--scene pile30,heap20,...]
 *
 * which pours / drops the scene under PP_MODEL_STANDARD (pp_config_default() with k = 4, as
 * the standard row), running its script, for the scene's settle time and on until every
 * body is at rest (< 1 mm/s, < 0.01 rad/s; at most 4 x the settle time), zeroes the
 * velocities and writes the file (with the time it took and the deepest overlap in its
 * comments). Why the standard model: stock ODE's soft contacts leave settled bodies
 * overlapping by up to ~1 mm, and the pegplus models, which keep overlap at zero, spent their
 * first steps pushing the bodies apart at up to 1.8 m/s, so the rows measured that transient
 * instead of a settled heap; the standard model's state has no overlap (< 1e-6 m, checked
 * by CTest's check_settled_states), so every pegplus model starts at rest (stock ODE does not
 * from it: see "Stock ODE's own start" below). The
 * heaps of 50 and 100 boxes are poured differently (their pour under the standard model took
 * 20-35 min of CPU for heap50, islands of 750-2 000 unknowns while it moves): poured by
 * dWorldQuickStep, settled from there by dWorldStep until at rest, and ODE's remaining
 * overlaps (~1e-5 m) projected out (make_state says how): heap50 in ~40 s of CPU, heap100
 * in up to ~20 min (its dWorldStep settle costs ~1 s a step and is slow to come to rest). A
 * heap's drop heights depend on the model that poured it: the file is THE settled state
 * every model starts from. Each row's child builds the scene (the builders are
 * deterministic), calls the script without stepping until it has created as many bodies as
 * the file lists (the scene name and the body count must match the file, else the row says
 * why), puts every body at its settled pose with zero linear and angular velocity, and only
 * then starts the clock; the run's script continues at the settle's step count.
 *
 * The solver's warm start. A running program's steps are warm (Lemke starts from the last
 * step's basis); a run from saved poses alone is not: heap20's first standard step took 942
 * pivots, ~100 x a warm step. --make-states ends (--warm-steps N, default 1; --warm-rest K;
 * --warm-only on the files already there) by loading the state as a row loads it, taking
 * clock-free standard-model steps (N, or with K until the last K took no pivot and left
 * every body at 1e-9 m/s or slower, not faster at the end, at most N), and writing the poses
 * after them with the warm start the world then holds (pp_world_save_warm_start; a section
 * after the body lines, state.h); then that file is loaded again and stepped the same way
 * under PEG, and PEG's warm start is added as a second section (its poses are not written;
 * --warm-models runs one of the two). Each model's rows restore their model's section before
 * the clock starts (the status says "warm start from the state file"); a model without one
 * starts cold (the sections are different LCPs' bases, and pp_world_restore_warm_start
 * refuses another model's).
 *
 * Stock ODE's own start. ODE's colliders make a contact only where two geoms overlap, and at
 * rest its contacts keep overlaps of ~1e-5 m; from a state whose overlaps were projected out,
 * the pairs left a hair apart get none (heap50: 39 of the 97 pairs within 1e-6 m have one), so
 * under dWorldStep the heap falls into itself (heap50: 0.44 m/s at step 4) and on heap100
 * its LCP gives up (dSolveLCP's "s <= 0", the unknowns not reached left at 0) in most steps
 * and the heap sinks through the ground. So the PP_MODEL_ODE rows start from
 * DIR/<scene>.ode.state where it exists: the heaps --make-states settles under dWorldStep
 * write their poses before the projection there (state.h pp_scene_state_path). heap20 and the
 * piles, settled by the standard model, have none: stock ODE cannot hold them (heap20: a body
 * at 17.8-39 m/s within 100 steps), and their ode rows say so (NOT AT REST, below).
 * Every run records its fastest body and the steps in which ODE's LCP gave up (d_ERR_LCP
 * messages, counted in the child instead of printed); a run of a resting scene (bench_scene
 * resting: heaps, piles, islands, columns) in which a body passed RUN_REST_SPEED says NOT AT
 * REST, and the ratio column is marked when ode_step's run was that or its LCP gave up.
 *
 * The fallback (a scene with no state file, or --settle N given): a separate child builds
 * the scene and steps it with stock dWorldQuickStep (PP_MODEL_ODE, the ode_quickstep row's
 * configuration: dWorldStep took ~40 s for heap50's 2 000 settle steps) for the scene's
 * settle time (or N steps), running the script, and its poses are used the same way; the
 * output says "no <file>; settling with dWorldQuickStep", the status column "(QuickStep
 * settle)" and the CSV's start column "quickstep" (else "state", or "built" for a scene
 * that starts as built). Its bodies overlap by up to ~1 mm at the first step. The settle
 * phase is not measured (the QuickStep settle has its own 600 s watchdog). The islands
 * scenes are built exactly touching and at rest: they are not settled (--settle N settles
 * them with QuickStep, which only adds overlap).
 *
 * Timing: the CPU time of each pp_world_step call alone (clock_gettime(
 * CLOCK_PROCESS_CPUTIME_ID) before and after; a scene's before_step script, e.g. a drop, is
 * not timed). pp_step_stats.time_total (wall clock, monotonic) is also kept, in the CSV.
 */
#define _GNU_SOURCE /* wait4, MAP_ANONYMOUS */
#include "pegplus/pegplus.h"
#include "jointed.h"
#include "scenes.h"
#include "scripted.h"
#include "state.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char HELP[] =
    "usage: pegplus-benchmark [options]\n"
    "\n"
    "Runs every selected scene under every selected model, each (scene, model) in its own\n"
    "child process, and prints one table row per run as it finishes (CSV: --csv).\n"
    "\n"
    "options:\n"
    "  --scene NAMES    comma-separated scene names (see --list); default: every scene\n"
    "                   not marked quick-only\n"
    "  --model NAMES    comma-separated models: ode_step (stock dWorldStep), ode_quickstep\n"
    "                   (stock dWorldQuickStep), standard (PP_MODEL_STANDARD), peg\n"
    "                   (PP_MODEL_PEG); default: all four. ode_step always runs: it is the\n"
    "                   baseline of the ratio column.\n"
    "  --steps N        steps per run (default: each scene's own count, see --list)\n"
    "  --h H            step size in seconds (default: each scene's own; scripted scenes\n"
    "                   schedule their drops in seconds, so they follow H)\n"
    "  --settle N       settle the heap, pile and islands scenes with dWorldQuickStep for N\n"
    "                   steps instead of loading their state files; 0 starts them unsettled\n"
    "                   (a heap is then poured during the run)\n"
    "  --states DIR     settled state files, DIR/<scene>.state (default: the source tree's\n"
    "                   " PP_STATES_DIR ");\n"
    "                   --states '' settles every scene with dWorldQuickStep\n"
    ;

/* (several strings: C limits the length of one literal) */
static const char HELP_STATES[] =
    "  --make-states DIR  make the state files instead of benchmarking: settle each heap and\n"
    "                   pile scene (--scene: those named) under the standard model and write\n"
    "                   DIR/<scene>.state; --h and --settle apply. heap50 and heap100 are\n"
    "                   poured by dWorldQuickStep, settled by dWorldStep until at rest and\n"
    "                   their overlaps projected out instead (heap50: ~40 s of CPU), and\n"
    "                   their poses before the projection written to DIR/<scene>.ode.state\n"
    "                   (stock ODE's start)\n"
    "  --finish-steps N  with --make-states: N steps of the standard model after that\n"
    "                   projection (default 0)\n"
    "  --warm-steps N   with --make-states: last, N clock-free standard-model steps of the\n"
    "                   state loaded as the benchmark loads it; the poses after them and\n"
    "                   the solver's warm start then are written (default 1; 0: no warm\n"
    "                   start); then N PEG steps of the file written, whose warm start is\n"
    "                   added as PEG's section (its poses are not written). Each model's\n"
    "                   runs restore their own section; a model without one starts cold\n"
    "  --warm-rest K    with --warm-steps N: step each model until the last K steps took\n"
    "                   no Lemke pivot and no fallback and left every body at 1e-9 m/s\n"
    "                   or slower, the fastest no faster after the last than after the\n"
    "                   first, at most N steps (default 0: exactly N); a model not at\n"
    "                   rest by then writes nothing and the command fails\n"
    "  --warm-models M  with --warm-steps: the models stepped, standard, peg or both\n"
    "                   (default standard,peg); without standard the poses stay as they are\n"
    "                   and only PEG's section is made again\n"
    "  --warm-only      with --make-states: only that, on DIR/<scene>.state as it is\n"
    ;

static const char HELP_OPTIONS[] =
    "  --budget S       CPU seconds of stepping per run (default 30): a run that passes it\n"
    "                   stops after that step and is reported as \"cut\"; a run still\n"
    "                   going after 2 S + 30 s of wall time (one endless step) is killed\n"
    "                   and reported with the steps it finished\n"
    "  --csv FILE       CSV output (default pegplus-benchmark.csv), one row per run\n"
    "  --series FILE    also one CSV row per step of every run: CPU us, LCP unknowns\n"
    "                   (summed, largest), pivots, solves, lcp_fallback, approximate and\n"
    "                   unsolved islands, contacts, islands, residual, status (lcp_fallback,\n"
    "                   approximate, unsolved and residual: of the answers applied),\n"
    "                   load-shared and load-kept island solves, fastest body (m/s),\n"
    "                   PEG I and X sets, unknowns left out by constraint screening,\n"
    "                   whether ODE's LCP gave up, PEG islands the standard model answered,\n"
    "                   failed solves whose answer was not applied (pp_step_stats.lcp_dropped)\n"
    "  --threads N      pp_config.threads of the pegplus models (default 1); the CPU\n"
    "                   columns then add up every thread: compare the CSV's\n"
    "                   wall_us_median between thread counts\n"
    "  --auto-disable   ODE's auto-disable on (its default thresholds, 10 idle steps) for\n"
    "                   every model: settled bodies sleep, and a sleeping island costs\n"
    "                   nothing but its broadphase entries\n"
    "  --no-load-sharing  pp_config.load_sharing = 0 (Lemke's vertex where supports are\n"
    "                   redundant, README \"Redundant supports\")\n"
    "  --lcp-budget S   pp_config.lcp_budget_seconds of the pegplus models (default 10 s of\n"
    "                   wall clock per island and step); 0: no clock, only the work-based\n"
    "                   pivot caps, so the run does not depend on the machine's load\n"
    "  --lcp-pivots N   pp_config.lcp_budget_pivots (Lemke pivots; default 0: no limit)\n"
    "  --log            pegplus's warnings and errors to stderr (default: discarded)\n"
    "  --quick          smoke pass (CTest runs it): the quick scenes, 20 steps, 10 s budget\n"
    "                   (--steps / --budget given too take precedence)\n"
    "  --list           list the scenes and exit\n"
    "  --help           this text\n";

/* (two strings: C limits the length of one literal) */
static const char HELP_MORE[] =
    "\n"
    "Settings: pp_config_default() except friction directions k = 4 (and model / ODE\n"
    "stepper) and a scene's own surface (the jointed scenes' friction); ODE auto-disable\n"
    "off (unless --auto-disable).\n"
    "\n"
    "Same start for every model: a heap or pile scene starts from its settled state,\n"
    "DIR/<scene>.state (--states), made under the standard model (PP_MODEL_STANDARD, k = 4:\n"
    "no overlap, every body at rest; heap50 and heap100 under dWorldQuickStep, then\n"
    "dWorldStep, their overlaps projected out, then finished by standard-model steps:\n"
    "heap50 100 clock-free, heap100 80 with the default clock) by\n"
    "    pegplus-benchmark --make-states examples/scenes/states --scene NAMES\n"
    "    pegplus-benchmark --make-states examples/scenes/states --scene heap50 \\\n"
    "        --finish-steps 100 --lcp-budget 0\n"
    "    pegplus-benchmark --make-states examples/scenes/states --scene heap100 \\\n"
    "        --finish-steps 80\n"
    "(a heap is poured box by box; the settle runs on until every body is at rest). Each run\n"
    "builds the scene, sets every body's pose from the file, with zero velocities, and only\n"
    "then starts the clock. Stock ODE (ode_step, ode_quickstep) starts from DIR/<scene>.ode.state\n"
    "where there is one (heap50, heap100: the same heap before its overlaps were projected\n"
    "out, within 1e-4 m): ODE makes contacts only where bodies overlap, and from the\n"
    "projected heap it finds too few and the heap falls. A run of a resting scene (heaps,\n"
    "piles, islands, columns) in which a body moved faster than 0.5 m/s says NOT AT REST in\n"
    "its status (with its fastest body; scenes whose bodies move by design, drops and\n"
    "impacts, are not judged so), one in which ODE's LCP gave up says in how many steps,\n"
    "and \"x step\" ends in '!' when the ode_step run was either. A scene without a file\n"
    "(or with --settle N) is settled by stock dWorldQuickStep in a separate child instead,\n"
    "which leaves bodies overlapping by up to ~1 mm; the output says so and its status\n"
    "reads \"(QuickStep settle)\". The islands scenes start as built (exactly touching, at\n"
    "rest). Settling is not timed.\n"
    "\n"
    "columns:\n"
    "  steps     steps run / planned\n"
    "  med us    median CPU time of one pp_world_step (process CPU time, microseconds)\n"
    "  worst us  slowest step's CPU time\n"
    "  x step    median / ode_step's median in the same invocation ('!': that ode_step run\n"
    "            was not at rest in a resting scene or its LCP gave up, see its status)\n"
    "  lcp       mean / max LCP size (pp_step_stats.lcp_size, unknowns per step)\n"
    "  pivots    Lemke pivots per step (mean)\n"
    "  fb        steps whose LCP answers applied needed a fallback (pp_step_stats.\n"
    "            lcp_fallback != 0; a failed solve whose answer was not applied, such as a\n"
    "            re-linearisation iterate, is not counted: --series' dropped column)\n"
    "  un        steps in which an island's contacts got no impulse (pp_step_stats.\n"
    "            islands_failed > 0: no usable answer was applied)\n"
    "  bad       steps pp_world_step did not return PP_OK (a run stops after 5 in a row)\n"
    "  rss MB    peak resident memory of the run's process (wait4 ru_maxrss)\n"
    "  rt        real-time factor: simulated seconds / CPU seconds of stepping\n"
    "  status    ok | cut (budget) | stopped: ... | killed: ... | settle failed | settled\n"
    "            state: ... (the file does not fit the scene); \"(QuickStep settle)\" after\n"
    "            it when the start was the fallback (CSV: the start column, state |\n"
    "            quickstep | built); \"the standard model answered a PEG island in N\n"
    "            steps\" (pp_step_stats.peg_fallback: PEG's LCP not solved, or an impact's\n"
    "            island PEG declined; CSV: peg_fallback_steps)\n";

/* ------------------------------------------------------------------------- scenes */

typedef struct bench_scene {
    const char *name;
    const char *what;           /* one line for --list */
    pp_status (*build)(pp_scene *scene, double h);
    int steps;                  /* default step count */
    double h;                   /* default step size, s */
    double settle;              /* s of settling before the run (0: none by default); the settle
                                   runs the scene's script (a heap is poured while settling) */
    int settles;                /* 1: --settle N applies (heap, pile and islands scenes) */
    int quick;                  /* 1: in --quick; 2: only in --quick (not in the default set) */
    int ode_pour;               /* > 0: --make-states pours it under dWorldQuickStep with this
                                   many iterations, then settles it under dWorldStep
                                   (make_state); 0: under the standard model */
    int resting;                /* 1: starts at rest and should stay so (heaps, piles, islands,
                                   columns): a run with a body faster than RUN_REST_SPEED says
                                   NOT AT REST; 0: its bodies move by design (drops, impacts) */
} bench_scene;

static pp_status build_box_drop(pp_scene *s, double h) { (void)h; pp_scene_box_drop(s, 0.5); return PP_OK; }
static pp_status build_column10(pp_scene *s, double h) { (void)h; pp_scene_box_column(s, 10, 0.0); return PP_OK; }
static pp_status build_column3(pp_scene *s, double h) { (void)h; pp_scene_box_column(s, 3, 0.0); return PP_OK; }
static pp_status build_pile30(pp_scene *s, double h) { (void)h; pp_scene_box_pile(s, 30, 1); return PP_OK; }
static pp_status build_pile6(pp_scene *s, double h) { (void)h; pp_scene_box_pile(s, 6, 1); return PP_OK; }
static pp_status build_heap20(pp_scene *s, double h) { pp_scene_heap(s, 20, 1, h); return PP_OK; }
static pp_status build_heap50(pp_scene *s, double h) { pp_scene_heap(s, 50, 1, h); return PP_OK; }
static pp_status build_heap100(pp_scene *s, double h) { pp_scene_heap(s, 100, 1, h); return PP_OK; }
static pp_status build_islands3(pp_scene *s, double h) { (void)h; pp_scene_islands(s, 3, 0.0, 1); return PP_OK; }
static pp_status build_islands10(pp_scene *s, double h) { (void)h; pp_scene_islands(s, 10, 0.0, 1); return PP_OK; }
static pp_status build_islands30(pp_scene *s, double h) { (void)h; pp_scene_islands(s, 30, 0.0, 1); return PP_OK; }
static pp_status build_islands100(pp_scene *s, double h) { (void)h; pp_scene_islands(s, 100, 0.0, 1); return PP_OK; }
static pp_status build_islands333(pp_scene *s, double h) { (void)h; pp_scene_islands(s, 333, 0.0, 1); return PP_OK; }
static pp_status build_crash(pp_scene *s, double h) { pp_scene_crash(s, h); return PP_OK; }
static pp_status build_boxstack(pp_scene *s, double h) { return pp_scene_boxstack(s, 1, h); }
static pp_status build_convex(pp_scene *s, double h) { (void)h; return pp_scene_convex_ball(s, 1); }
static pp_status build_hulls25(pp_scene *s, double h) { (void)h; return pp_scene_hulls(s, 25.0, 1); }
static pp_status build_hulls50(pp_scene *s, double h) { (void)h; return pp_scene_hulls(s, 50.0, 1); }
static pp_status build_gripper(pp_scene *s, double h) { pp_scene_gripper(s, h); return PP_OK; }
static pp_status build_car(pp_scene *s, double h) { pp_scene_car(s, h); return PP_OK; }
static pp_status build_arm(pp_scene *s, double h) { pp_scene_arm(s, h); return PP_OK; }

/* Settle times: the pile's boxes land within 3 s; a heap's last box is poured at
 * 0.4 (N - 1) s (if none had to wait) and gets 2.4 s more. The islands' stacks are built
 * exactly touching and at rest: they are not settled (--settle N settles them, and then only
 * sink into ODE's soft contacts). */
static const bench_scene SCENES[] = {
    {"box_drop", "unit box dropped from 0.5 m onto the plane", build_box_drop, 1000, 0.01, 0, 0, 1, 0, 0},
    {"column10", "10 unit boxes stacked exactly touching (pp_scene_box_column)", build_column10, 1000, 0.01, 0, 0, 0, 0, 1},
    {"column3", "3 unit boxes stacked exactly touching", build_column3, 1000, 0.01, 0, 0, 2, 0, 1},
    {"pile30", "30 random boxes dropped in a loose 3x3 heap (pp_scene_box_pile, seed 1)", build_pile30, 1000, 0.01, 3.0, 1, 0, 0, 1},
    {"pile6", "6 random boxes of pp_scene_box_pile (seed 1)", build_pile6, 1000, 0.01, 3.0, 1, 2, 0, 1},
    {"heap20", "20 random boxes poured into one pile (pp_scene_heap, seed 1)", build_heap20, 1000, 0.01, 10.0, 1, 0, 0, 1},
    {"heap50", "50 random boxes poured into one pile", build_heap50, 1000, 0.01, 22.0, 1, 0, 20, 1},
    {"heap100", "100 random boxes poured into one pile", build_heap100, 1000, 0.01, 42.0, 1, 0, 30, 1},
    {"islands3", "3 separate stacks of 3 boxes (pp_scene_islands, seed 1)", build_islands3, 1000, 0.01, 0, 1, 2, 0, 1},
    {"islands10", "10 separate stacks of 3 boxes", build_islands10, 1000, 0.01, 0, 1, 0, 0, 1},
    {"islands30", "30 separate stacks of 3 boxes", build_islands30, 1000, 0.01, 0, 1, 0, 0, 1},
    {"islands100", "100 separate stacks of 3 boxes", build_islands100, 1000, 0.01, 0, 1, 0, 0, 1},
    {"islands333", "333 separate stacks of 3 boxes (999 bodies)", build_islands333, 1000, 0.01, 0, 1, 0, 0, 1},
    {"boxstack", "demo_boxstack: 48 boxes/spheres/capsules/hulls dropped every 0.6 s (seed 1)", build_boxstack, 1500, 0.02, 0, 0, 1, 0, 0},
    {"convex", "ball of 90 convex Voronoi cells dropped from 4.2 m (seed 1)", build_convex, 960, 1.0 / 240.0, 0, 0, 0, 0, 0},
    {"crash", "wall of 75 bricks hit by a 10 kg ball at 20 m/s (pp_scene_crash)", build_crash, 300, 0.05, 0, 0, 0, 0, 0},
    {"hulls25", "8 cm and 2 cm hulls closing at 25 m/s, then falling to the plane", build_hulls25, 300, 0.01, 0, 0, 0, 0, 0},
    {"hulls50", "the same at 50 m/s", build_hulls50, 300, 0.01, 0, 0, 0, 0, 0},
    {"gripper", "slider-motor fingers squeeze a cube, their carrier lifts it 0.2 m (jointed.h)", build_gripper, 250, 0.01, 0, 0, 0, 0, 0},
    {"car", "demo_crash's car (hinge2 wheels, rear drive) pushes a row of 3 boxes", build_car, 300, 0.01, 0, 0, 0, 0, 0},
    {"arm", "6-joint arm (velocity-motor PD) with a 2-finger gripper picks a cube off a table", build_arm, 500, 0.01, 0, 0, 1, 0, 0},
};
enum { SCENE_COUNT = sizeof SCENES / sizeof SCENES[0] };

typedef struct bench_model {
    const char *name;
    pp_model model;
    pp_ode_stepper stepper;
} bench_model;

static const bench_model MODELS[] = {
    {"ode_step", PP_MODEL_ODE, PP_ODE_WORLD_STEP},
    {"ode_quickstep", PP_MODEL_ODE, PP_ODE_QUICK_STEP},
    {"standard", PP_MODEL_STANDARD, PP_ODE_WORLD_STEP},
    {"peg", PP_MODEL_PEG, PP_ODE_WORLD_STEP},
};
enum { MODEL_COUNT = sizeof MODELS / sizeof MODELS[0], BAD_IN_A_ROW = 5 };

/* ------------------------------------------------------------------------ one run */

/* One step as the child saw it. */
typedef struct step_record {
    double cpu;                 /* s, CPU time of pp_world_step */
    double wall;                /* s, pp_step_stats.time_total */
    int lcp_size, pivots, fallback;
    int lcp_largest;            /* pp_step_stats.lcp_largest */
    int unsolved;               /* islands_failed: islands whose contacts got no impulse */
    int approximate;            /* lcp_approximate: islands given the bounded fallback's answer */
    int dropped;                /* lcp_dropped: failed solves whose answer was not applied */
    int contacts, islands, solves;
    int screened;               /* pp_step_stats.lcp_screened */
    double residual;            /* pp_step_stats.lcp_residual */
    pp_status status;
    int load_shared, load_kept; /* pp_step_stats: island solves load sharing answered / kept */
    int ix_sets;                /* pp_step_stats: PEG I and X sets (their slacks, K > 0) */
    double speed;               /* fastest body after the step, m/s */
    int peg_fallback;           /* PP_MODEL_PEG: islands the standard model answered
                                   (pp_step_stats.peg_fallback: PEG's LCP not solved, or an
                                   impact's island PEG declined) */
    int ode_lcp_failed;         /* PP_MODEL_ODE: ODE's LCP gave up in this step (d_ERR_LCP
                                   messages, "LCP internal error, s <= 0": dSolveLCP then
                                   leaves the unknowns it had not reached at 0) */
} step_record;

/* Shared between a run's child (writer) and the parent (reader after the child ended). */
typedef struct run_shared {
    int steps_done;             /* records written */
    int bodies;                 /* bodies at the end */
    int cut;                    /* the budget was reached */
    int stopped;                /* BAD_IN_A_ROW failed steps in a row */
    pp_status build_status;     /* scene builder or pp_world_create */
    char state_error[160];      /* the settled state does not fit the scene (why) */
    int warm_restored;          /* the state file's warm start was restored (its model's run) */
    double max_speed;           /* fastest body after any step, m/s */
    step_record steps[];
} run_shared;

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int g_threads = 1; /* --threads: pp_config.threads of the pegplus models */
static int g_auto_disable = 0; /* --auto-disable: ODE's auto-disable on, its defaults */
static int g_load_sharing = 1; /* --no-load-sharing: pp_config.load_sharing = 0 */
static FILE *g_series = NULL;  /* --series FILE: one CSV row per step of every run */
static int g_log = 0;          /* --log: pegplus's log to stderr (default: discarded) */
static double g_lcp_budget = -1.0; /* --lcp-budget S: pp_config.lcp_budget_seconds (< 0: default) */
static long g_lcp_pivots = 0;      /* --lcp-pivots N: pp_config.lcp_budget_pivots */

/* ODE's d_ERR_LCP messages in a run's child (dSetMessageHandler there): dWorldStep's
 * Dantzig solver sends one when it gives up on an island's LCP (s <= 0), which leaves the
 * contact forces it had not reached at 0. Counted, not printed; other messages are printed as
 * ODE's own handler prints them. */
static int g_ode_lcp_messages = 0;

static void count_ode_message(int num, const char *msg, va_list ap)
{
    if (num == d_ERR_LCP) {
        g_ode_lcp_messages++;
        return;
    }
    fprintf(stderr, "\nODE Message %d: ", num);
    vfprintf(stderr, msg, ap);
    fputc('\n', stderr);
}

/* The benchmark's configuration of a model on a scene: the defaults, k = 4, and what the scene
 * needs (its surface: pp_scene.configure, the jointed scenes). */
static pp_config model_config(const bench_model *m, const pp_scene *scene)
{
    pp_config c = pp_config_default();
    if (scene->configure) scene->configure(scene, &c);
    c.model = m->model;
    c.ode_stepper = m->stepper;
    c.friction_directions = 4;
    c.threads = g_threads;
    c.load_sharing = g_load_sharing;
    if (g_lcp_budget >= 0.0) c.lcp_budget_seconds = g_lcp_budget;
    c.lcp_budget_pivots = g_lcp_pivots;
    return c;
}

/* The child of one run: never returns. */
static void run_child(const bench_scene *sc, const bench_model *m, int steps, double h,
                      double budget, const pp_scene_state *settled, run_shared *out)
{
    pp_scene scene;
    out->build_status = sc->build(&scene, h);
    if (out->build_status != PP_OK) _exit(0);
    dWorldSetAutoDisableFlag(scene.world, g_auto_disable);
    for (int i = 0; i < scene.body_count; ++i) dBodySetAutoDisableDefaults(scene.bodies[i]);
    pp_config config = model_config(m, &scene);
    pp_world *world = NULL;
    out->build_status = pp_world_create(scene.world, scene.space, &config, &world);
    if (out->build_status != PP_OK) _exit(0);
    scene.pegplus = world; /* before any script runs: scripts may make hulls */
    dSetMessageHandler(count_ode_message);
    int settle = 0; /* the step index the script continues at */
    if (settled) {
        /* the bodies the script created while settling, created again (without stepping:
         * until there are as many), then moved to their settled poses, at rest */
        if (pp_scene_state_apply(&scene, sc->name, settled, h, &settle, out->state_error,
                                 sizeof out->state_error) != 0)
            _exit(0);
        /* the solver's warm start from the state's poses, the section of this run's model
         * (state.h); a model without one starts cold */
        const char *warm = pp_scene_state_warm_start(settled, pp_model_name(m->model));
        if (warm) {
            pp_status st = pp_world_restore_warm_start(world, warm);
            if (st != PP_OK) {
                snprintf(out->state_error, sizeof out->state_error,
                         "its warm start was refused (%s; see the message above)",
                         pp_status_string(st));
                _exit(0);
            }
            out->warm_restored = 1;
        }
    }

    double total = 0.0;
    int bad_in_a_row = 0;
    for (int i = 0; i < steps; ++i) {
        if (scene.before_step) scene.before_step(&scene, settle + i);
        const int ode_messages = g_ode_lcp_messages;
        double t0 = cpu_now();
        pp_status st = pp_world_step(world, h);
        double t1 = cpu_now();
        const pp_step_stats *stats = pp_world_get_stats(world);
        step_record *r = &out->steps[i];
        r->cpu = t1 - t0;
        r->wall = stats->time_total;
        r->lcp_size = stats->lcp_size;
        r->pivots = stats->lcp_pivots;
        r->fallback = stats->lcp_fallback;
        r->lcp_largest = stats->lcp_largest;
        r->unsolved = stats->islands_failed;
        r->approximate = stats->lcp_approximate;
        r->dropped = stats->lcp_dropped;
        /* PP_MODEL_ODE: the contact joints it made (pp_step_stats.contacts is the pegplus
         * models' count) */
        r->contacts = m->model == PP_MODEL_ODE ? stats->ode_contacts : stats->contacts;
        r->ode_lcp_failed = g_ode_lcp_messages > ode_messages;
        r->peg_fallback = m->model == PP_MODEL_PEG ? stats->peg_fallback : 0;
        r->islands = stats->islands;
        r->solves = stats->lcp_solves;
        r->screened = stats->lcp_screened;
        r->residual = stats->lcp_residual;
        r->status = st;
        r->load_shared = stats->load_shared;
        r->load_kept = stats->load_kept;
        r->ix_sets = stats->peg_i_sets + stats->peg_x_sets;
        for (int b = 0; b < scene.body_count; ++b) {
            const dReal *v = dBodyGetLinearVel(scene.bodies[b]);
            double speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            if (speed > r->speed) r->speed = speed;
            if (speed > out->max_speed) out->max_speed = speed;
        }
        out->bodies = scene.body_count;
        out->steps_done = i + 1;
        total += r->cpu;
        bad_in_a_row = st == PP_OK ? 0 : bad_in_a_row + 1;
        if (bad_in_a_row == BAD_IN_A_ROW) {
            out->stopped = 1;
            break;
        }
        if (total > budget) {
            out->cut = i + 1 < steps;
            break;
        }
    }
    pp_world_destroy(world);
    pp_scene_destroy(&scene);
    _exit(0);
}

/* A run is at rest when no body moved faster than this after any step, m/s: the heap scene's
 * own line between a resting and a falling body (pp_scene_heap), ~5 steps of free fall. */
static const double RUN_REST_SPEED = 0.5;

/* printf-style text appended to a run's status (truncated to its size) */
static void status_append(char *status, size_t size, const char *format, ...)
{
    const size_t len = strlen(status);
    va_list ap;
    va_start(ap, format);
    vsnprintf(status + len, size - len, format, ap);
    va_end(ap);
}

typedef struct run_result {
    int planned, steps, bodies;
    double cpu_median, cpu_worst, cpu_mean, wall_median, cpu_total;
    double lcp_mean, pivots_mean, max_speed;
    double end_speed;           /* fastest body after the last step, m/s */
    int lcp_max, fallback_steps, bad_steps, unsolved_steps, largest_max;
    int ode_lcp_failed_steps;   /* steps in which ODE's LCP gave up (step_record) */
    int peg_fallback_steps;     /* PEG steps with an island the standard model answered */
    int at_rest;                /* every body slower than RUN_REST_SPEED after every step */
    long rss_kb;
    char status[192];
} run_result;

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    if (n == 0) return 0.0;
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Waits for the child, killing it (SIGKILL) once `limit` seconds of wall time have passed;
 * *usage gets its resource usage. Returns 1 if it was killed for the time, else 0. */
static int wait_child(pid_t pid, double limit, int *wstatus, struct rusage *usage)
{
    const double start = wall_now();
    int killed = 0;
    memset(usage, 0, sizeof *usage);
    for (;;) {
        pid_t r = wait4(pid, wstatus, WNOHANG, usage);
        if (r == pid || (r < 0 && errno != EINTR)) return killed;
        if (!killed && wall_now() - start > limit) {
            kill(pid, SIGKILL);
            killed = 1;
        }
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

static void describe_exit(int wstatus, int timed_out, char *buf, size_t size)
{
    if (timed_out) {
        snprintf(buf, size, "killed: wall-time limit (endless step?)");
    } else if (WIFSIGNALED(wstatus)) {
        snprintf(buf, size, "killed: %s", strsignal(WTERMSIG(wstatus)));
    } else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0) {
        snprintf(buf, size, "killed: exit %d", WEXITSTATUS(wstatus));
    } else {
        buf[0] = '\0';
    }
}

static run_result run(const bench_scene *sc, const bench_model *m, int steps, double h,
                      double budget, const pp_scene_state *settled)
{
    run_result res;
    memset(&res, 0, sizeof res);
    res.planned = steps;
    size_t size = sizeof(run_shared) + (size_t)steps * sizeof(step_record);
    run_shared *sh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        snprintf(res.status, sizeof res.status, "mmap failed: %s", strerror(errno));
        return res;
    }
    memset(sh, 0, sizeof *sh);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(res.status, sizeof res.status, "fork failed: %s", strerror(errno));
        munmap(sh, size);
        return res;
    }
    if (pid == 0) run_child(sc, m, steps, h, budget, settled, sh);
    int wstatus = 0;
    struct rusage usage;
    int timed_out = wait_child(pid, 2.0 * budget + 30.0, &wstatus, &usage);
    res.rss_kb = usage.ru_maxrss;

    int n = sh->steps_done;
    res.steps = n;
    res.bodies = sh->bodies;
    res.max_speed = sh->max_speed;
    double *cpu = malloc((size_t)(n ? n : 1) * sizeof *cpu);
    double *wall = malloc((size_t)(n ? n : 1) * sizeof *wall);
    long lcp = 0, pivots = 0;
    for (int i = 0; cpu && wall && i < n; ++i) {
        const step_record *r = &sh->steps[i];
        cpu[i] = r->cpu;
        wall[i] = r->wall;
        res.cpu_total += r->cpu;
        if (r->cpu > res.cpu_worst) res.cpu_worst = r->cpu;
        lcp += r->lcp_size;
        if (r->lcp_size > res.lcp_max) res.lcp_max = r->lcp_size;
        pivots += r->pivots;
        res.fallback_steps += r->fallback != 0;
        res.bad_steps += r->status != PP_OK;
        res.unsolved_steps += r->unsolved > 0;
        if (r->lcp_largest > res.largest_max) res.largest_max = r->lcp_largest;
        res.ode_lcp_failed_steps += r->ode_lcp_failed;
        res.peg_fallback_steps += r->peg_fallback > 0;
        res.end_speed = r->speed;
    }
    res.at_rest = n > 0 && res.max_speed < RUN_REST_SPEED;
    if (g_series && n > 0) {
        for (int i = 0; i < n; ++i) {
            const step_record *r = &sh->steps[i];
            fprintf(g_series,
                    "%s,%s,%d,%.1f,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.3g,%d,%d,%d,%.3g,%d,%d,%d,%d,%d\n",
                    sc->name, m->name, i, 1e6 * r->cpu, r->lcp_size, r->lcp_largest, r->pivots,
                    r->solves, r->fallback, r->approximate, r->unsolved, r->contacts,
                    r->islands, r->residual, (int)r->status, r->load_shared, r->load_kept,
                    r->speed, r->ix_sets, r->screened, r->ode_lcp_failed, r->peg_fallback,
                    r->dropped);
        }
        fflush(g_series);
    }
    if (cpu && wall && n > 0) {
        res.cpu_mean = res.cpu_total / n;
        res.lcp_mean = (double)lcp / n;
        res.pivots_mean = (double)pivots / n;
        res.cpu_median = median(cpu, n);
        res.wall_median = median(wall, n);
    }
    free(cpu);
    free(wall);

    char killed[64];
    describe_exit(wstatus, timed_out, killed, sizeof killed);
    if (sh->state_error[0])
        snprintf(res.status, sizeof res.status, "settled state: %s", sh->state_error);
    else if (sh->build_status != PP_OK)
        snprintf(res.status, sizeof res.status, "build failed: %s", pp_status_string(sh->build_status));
    else if (killed[0])
        snprintf(res.status, sizeof res.status, "%s", killed);
    else if (sh->stopped)
        snprintf(res.status, sizeof res.status, "stopped: %d failed steps in a row (%s)",
                 BAD_IN_A_ROW, pp_status_string(sh->steps[n - 1].status));
    else if (sh->cut)
        snprintf(res.status, sizeof res.status, "cut");
    else
        snprintf(res.status, sizeof res.status, "ok");
    if (n > 0 && sc->resting && !res.at_rest)
        status_append(res.status, sizeof res.status,
                      "; NOT AT REST: fastest body %.3g m/s (at the end %.3g m/s)",
                      res.max_speed, res.end_speed);
    if (res.ode_lcp_failed_steps > 0)
        status_append(res.status, sizeof res.status,
                      "; ODE's LCP gave up (s <= 0) in %d of %d steps",
                      res.ode_lcp_failed_steps, n);
    if (res.peg_fallback_steps > 0)
        status_append(res.status, sizeof res.status,
                      "; the standard model answered a PEG island in %d of %d steps",
                      res.peg_fallback_steps, n);
    if (sh->warm_restored)
        status_append(res.status, sizeof res.status, "; warm start from the state file");
    munmap(sh, size);
    return res;
}

/* ----------------------------------------------------------------------- settling */

enum { BENCH_SEED = 1, SETTLE_MAX_BODIES = 1 << 16 };

/* The fallback when a scene has no state file (or --settle N is given): builds the scene in
 * a child, steps it `settle` times with stock dWorldQuickStep (running its script) and reads
 * back every body's pose (through shared memory, so that the parent's watchdog also covers a
 * settle that never ends) into *state. 0, or -1 (with *why) when the child failed. */
static int settle_scene(const bench_scene *sc, int settle, double h, pp_scene_state *state,
                        char *why, size_t why_size)
{
    typedef struct settle_shared {
        int count;              /* -1 until the child has written the poses */
        double pose[];
    } settle_shared;
    size_t size = sizeof(settle_shared) + (size_t)SETTLE_MAX_BODIES * 7 * sizeof(double);
    memset(state, 0, sizeof *state);
    why[0] = '\0';
    settle_shared *sh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        snprintf(why, why_size, "mmap: %s", strerror(errno));
        return -1;
    }
    sh->count = -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "fork: %s", strerror(errno));
        munmap(sh, size);
        return -1;
    }
    if (pid == 0) {
        pp_scene scene;
        if (sc->build(&scene, h) != PP_OK) _exit(3);
        dWorldSetAutoDisableFlag(scene.world, 0);
        pp_config config = model_config(&MODELS[1], &scene); /* dWorldQuickStep: see the top */
        pp_world *world = NULL;
        if (pp_world_create(scene.world, scene.space, &config, &world) != PP_OK) _exit(5);
        scene.pegplus = world;
        for (int i = 0; i < settle; ++i) {
            if (scene.before_step) scene.before_step(&scene, i);
            if (pp_world_step(world, h) != PP_OK) _exit(6);
        }
        if (scene.body_count > SETTLE_MAX_BODIES) _exit(4);
        for (int i = 0; i < scene.body_count; ++i) {
            const dReal *x = dBodyGetPosition(scene.bodies[i]);
            const dReal *q = dBodyGetQuaternion(scene.bodies[i]);
            double p[7] = {x[0], x[1], x[2], q[0], q[1], q[2], q[3]};
            memcpy(&sh->pose[7 * i], p, sizeof p);
        }
        sh->count = scene.body_count;
        _exit(0);
    }
    int wstatus = 0;
    struct rusage usage;
    int timed_out = wait_child(pid, 600.0, &wstatus, &usage);
    describe_exit(wstatus, timed_out, why, why_size);
    if (!why[0] && sh->count < 0) snprintf(why, why_size, "no poses written");
    if (!why[0]) {
        snprintf(state->scene, sizeof state->scene, "%s", sc->name);
        snprintf(state->model, sizeof state->model, "%s", MODELS[1].name);
        state->seed = BENCH_SEED;
        state->h = h;
        state->settle_steps = settle;
        state->pose = malloc((size_t)(sh->count ? sh->count : 1) * 7 * sizeof *state->pose);
        if (state->pose) {
            state->count = sh->count;
            memcpy(state->pose, sh->pose, (size_t)sh->count * 7 * sizeof *state->pose);
        } else {
            snprintf(why, why_size, "out of memory");
        }
    }
    munmap(sh, size);
    return why[0] ? -1 : 0;
}

/* At rest for --make-states: every body slower than this (linear, m/s; angular, rad/s). A
 * body resting on others under the standard model moves at ~1e-10 m/s. */
static const double REST_SPEED = 1e-3, REST_SPIN = 1e-2;
enum { SETTLE_EXTEND_MAX = 4 }; /* settle at most this many times the scene's settle steps */

/* The way --make-states settles a large heap (bench_scene.ode_pour, make_state): stock
 * dWorldStep until at rest after the QuickStep pour (at least ODE_SETTLE_MIN steps, at most
 * ODE_SETTLE_MAX), then at most PROJECT_PASSES projections, until no two bodies overlap by
 * more than PROJECT_OVERLAP, m. */
enum { ODE_SETTLE_MIN = 50, ODE_SETTLE_MAX = 1000, PROJECT_PASSES = 20 };
static const double PROJECT_OVERLAP = 1e-7;
/* ODE's damping during that dWorldStep settle: a body faster than ODE_DAMPING_SPEED (m/s)
 * or ODE_DAMPING_SPIN (rad/s) loses ODE_DAMPING of that velocity a step (ODE damps only
 * above its thresholds: a body that rests is not touched); without it heap100's dWorldStep
 * settle still moved at 0.1-0.5 m/s after 200 steps (boxes thrown about by its contacts), with
 * it that settle came to rest. Set on each body (a body copies the world's damping when it
 * is created) and reset to the world's (none) after. */
static const double ODE_DAMPING = 0.05, ODE_DAMPING_SPEED = 0.5, ODE_DAMPING_SPIN = 1.0;
static int g_finish_steps = 0; /* --finish-steps N: standard-model steps after the projection */
static int g_warm_steps = 1;   /* --warm-steps N: warm_state's steps (0: no warm start) */
static int g_warm_only = 0;    /* --warm-only: warm_state on the files there, no settling */

typedef struct settle_result {
    int steps, bad, fallbacks, at_rest;
    double cpu, wall, max_speed, max_spin;
} settle_result;

static void fastest_body(const pp_scene *scene, double *speed, double *spin)
{
    *speed = *spin = 0.0;
    for (int b = 0; b < scene->body_count; ++b) {
        const dReal *v = dBodyGetLinearVel(scene->bodies[b]), *w = dBodyGetAngularVel(scene->bodies[b]);
        *speed = fmax(*speed, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
        *spin = fmax(*spin, sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]));
    }
}

/* Steps `scene` under `world` from script step `first`: at least `min` steps, then on until
 * every body is at rest, at most `max` steps (the scene's script runs before each step).
 * Prints its progress every 100 steps and at the end. */
static settle_result settle_phase(const bench_scene *sc, pp_scene *scene, pp_world *world,
                                  double h, int first, int min, int max, const char *what,
                                  int every_step)
{
    settle_result r;
    memset(&r, 0, sizeof r);
    const double cpu0 = cpu_now(), wall0 = wall_now();
    while (r.steps < max && !(r.steps >= min && r.at_rest)) {
        if (scene->before_step) scene->before_step(scene, first + r.steps);
        const double step0 = cpu_now();
        r.bad += pp_world_step(world, h) != PP_OK;
        const pp_step_stats *stats = pp_world_get_stats(world);
        r.fallbacks += stats->lcp_fallback != 0;
        ++r.steps;
        fastest_body(scene, &r.max_speed, &r.max_spin);
        r.at_rest = r.max_speed < REST_SPEED && r.max_spin < REST_SPIN;
        if (every_step) /* the pegplus steps of a large heap: each costs seconds */
            printf("%s: %s step %d: %.2f s CPU, LCP %d unknowns, %d solves, %d pivots, fallback %d, "
                   "approximate %d, residual %.3g; fastest %.3g m/s %.3g rad/s\n", sc->name, what,
                   r.steps - 1, cpu_now() - step0, stats->lcp_size, stats->lcp_solves,
                   stats->lcp_pivots, stats->lcp_fallback, stats->lcp_approximate,
                   stats->lcp_residual, r.max_speed, r.max_spin);
        fflush(stdout);
        if (r.steps % 100 == 0 || r.steps == max || (r.steps >= min && r.at_rest))
            printf("%s: %s step %d (at least %d), %d bodies, fastest %.3g m/s %.3g rad/s, %d failed "
                   "steps, %d fallbacks, %.1f s CPU\n", sc->name, what, r.steps, min,
                   scene->body_count, r.max_speed, r.max_spin, r.bad, r.fallbacks, cpu_now() - cpu0);
    }
    r.cpu = cpu_now() - cpu0;
    r.wall = wall_now() - wall0;
    return r;
}

/* The projection that takes ODE's overlaps out: gravity off, every velocity zero, one
 * dWorldStep with the contacts' ERP 1 (a contact of depth d asks for the normal velocity
 * d / h, so the step moves the bodies apart by d to first order), every velocity zeroed
 * again; repeated until the deepest overlap is at most PROJECT_OVERLAP (the rotation's
 * second-order part is what the next pass takes out). Gravity is restored. *passes gets the
 * passes made; returns the deepest overlap left. */
static double project_overlaps(pp_scene *scene, pp_world *world, double h, int *passes)
{
    dVector3 gravity;
    dWorldGetGravity(scene->world, gravity);
    dWorldSetGravity(scene->world, 0, 0, 0);
    pp_config saved = pp_world_get_config(world), c = saved;
    c.model = PP_MODEL_ODE;
    c.ode_stepper = PP_ODE_WORLD_STEP;
    c.surface.ode_soft_erp = 1.0;
    double overlap = pp_scene_max_penetration(scene);
    *passes = 0;
    if (pp_world_set_config(world, &c) == PP_OK) {
        while (overlap > PROJECT_OVERLAP && *passes < PROJECT_PASSES) {
            pp_scene_zero_velocities(scene);
            (void)pp_world_step(world, h);
            pp_scene_zero_velocities(scene);
            overlap = pp_scene_max_penetration(scene);
            ++*passes;
        }
        (void)pp_world_set_config(world, &saved);
    }
    dWorldSetGravity(scene->world, gravity[0], gravity[1], gravity[2]);
    return overlap;
}

/* --make-states: settles the scene and writes DIR/<scene>.state (state.h) with the steps it
 * took; 0, or -1.
 *
 * The pile and the heap of 20 (the default): poured under PP_MODEL_STANDARD (the
 * benchmark's configuration, k = 4) for `settle` steps of `h`, running the scene's script,
 * and on until every body is at rest (REST_SPEED, REST_SPIN; at most SETTLE_EXTEND_MAX x
 * settle steps); every velocity is then zeroed.
 *
 * The heaps of 50 and 100 boxes (bench_scene.ode_pour), whose pour under the standard model
 * took 20-35 min of CPU for heap50 (islands of 750-2 000 unknowns while the heap still
 * moves) and was never finished for heap100:
 *   1. poured under stock dWorldQuickStep (the ode_quickstep row's configuration, with
 *      bench_scene.ode_pour iterations) for the scene's `settle` steps, running its script:
 *      the heap jitters at a few cm/s and overlaps by up to a few mm (heap50, ODE's default
 *      20 iterations: 2.5 mm; heap100 with 20 ended with a box 5 cm inside another, stuck
 *      there through the steps below, with 30: 1.7 mm; 40-200 left 9 mm-25 cm);
 *   2. settled from there under stock dWorldStep (ODE's defaults: ERP 0.2, CFM 1e-10, the
 *      exact Dantzig LCP; fast bodies damped, ODE_DAMPING) for at least ODE_SETTLE_MIN steps
 *      and on until every body is at rest (as above; at most ODE_SETTLE_MAX steps): its
 *      overlaps shrink to ~1e-5 m;
 *   3. the overlaps projected out (project_overlaps) and every velocity zeroed;
 *   4. with --finish-steps N, N steps of the standard model from there, velocities zeroed.
 * (Not dWorldStep for the pour itself: with ODE's contacts, which exist only once bodies
 * overlap, boxes landing at up to 7 m/s sank 5-35 cm into others and stayed there.) The
 * heap is the one QuickStep poured and dWorldStep settled; the pegplus models start from
 * it without overlap. */
static int make_state(const bench_scene *sc, int settle, double h, const char *dir)
{
    pp_scene scene;
    if (sc->build(&scene, h) != PP_OK) {
        fprintf(stderr, "pegplus-benchmark: %s: build failed\n", sc->name);
        return -1;
    }
    dWorldSetAutoDisableFlag(scene.world, 0);
    const bench_model *standard = &MODELS[2], *pour = sc->ode_pour ? &MODELS[1] : standard;
    pp_config config = model_config(pour, &scene);
    pp_world *world = NULL;
    if (pp_world_create(scene.world, scene.space, &config, &world) != PP_OK) {
        fprintf(stderr, "pegplus-benchmark: %s: pp_world_create failed\n", sc->name);
        pp_scene_destroy(&scene);
        return -1;
    }
    scene.pegplus = world;
    char how[2048];
    const char *clock_free = g_lcp_budget == 0.0 ? ", lcp_budget_seconds 0 (clock-free)" : "";
    settle_result a, b, f;
    pp_scene_state ode_state; /* the heaps settled under dWorldStep: before the projection */
    memset(&ode_state, 0, sizeof ode_state);
    char ode_how[512] = "";
    double ode_overlap = 0.0;
    memset(&b, 0, sizeof b);
    memset(&f, 0, sizeof f);
    pp_status configured = PP_OK;
    double overlap;
    if (!sc->ode_pour) {
        a = settle_phase(sc, &scene, world, h, 0, settle, SETTLE_EXTEND_MAX * settle, "standard", 0);
        pp_scene_zero_velocities(&scene);
        overlap = pp_scene_max_penetration(&scene);
        snprintf(how, sizeof how,
                 "settled under PP_MODEL_STANDARD, pp_config_default() with friction_directions = 4%s\n"
                 "settle: %d steps (the scene's %d, then on until at rest), %.1f s CPU, %.1f s wall; "
                 "%d steps not PP_OK, %d with an LCP fallback\n"
                 "at the last step: fastest body %.3g m/s, %.3g rad/s (%s; velocities then zeroed)",
                 clock_free, a.steps, settle, a.cpu, a.wall, a.bad, a.fallbacks, a.max_speed,
                 a.max_spin, a.at_rest ? "at rest" : "NOT at rest");
    } else {
        dWorldSetQuickStepNumIterations(scene.world, sc->ode_pour);
        a = settle_phase(sc, &scene, world, h, 0, settle, settle, "dWorldQuickStep pour", 0);
        pp_scene_zero_velocities(&scene);
        const double poured = pp_scene_max_penetration(&scene);
        config = model_config(&MODELS[0], &scene);
        configured = pp_world_set_config(world, &config);
        for (int i = 0; i < scene.body_count; ++i) { /* a body copies the world's at creation */
            dBodySetDamping(scene.bodies[i], ODE_DAMPING, ODE_DAMPING);
            dBodySetLinearDampingThreshold(scene.bodies[i], ODE_DAMPING_SPEED);
            dBodySetAngularDampingThreshold(scene.bodies[i], ODE_DAMPING_SPIN);
        }
        if (configured == PP_OK)
            b = settle_phase(sc, &scene, world, h, a.steps, ODE_SETTLE_MIN, ODE_SETTLE_MAX,
                             "dWorldStep settle", 0);
        for (int i = 0; i < scene.body_count; ++i) dBodySetDampingDefaults(scene.bodies[i]);
        pp_scene_zero_velocities(&scene);
        const double settled = pp_scene_max_penetration(&scene);
        ode_overlap = settled;
        if (configured == PP_OK && pp_scene_state_capture(&ode_state, &scene) != 0)
            configured = PP_ERR_NO_MEMORY;
        snprintf(ode_how, sizeof ode_how,
                 "stock ODE's own settled heap, which the PP_MODEL_ODE rows start from: the poses "
                 "of %s.state before its overlaps were projected out (its steps 1 and 2 below; "
                 "ODE makes contacts only where bodies overlap)\n"
                 "deepest overlap (pp_scene_max_penetration): %.3g m", sc->name, settled);
        const double cpu0 = cpu_now();
        int passes = 0;
        overlap = project_overlaps(&scene, world, h, &passes);
        const double project_cpu = cpu_now() - cpu0;
        printf("%s: overlap %.3g m after the QuickStep pour, %.3g m after the dWorldStep settle, "
               "%.3g m after %d projection passes (%.1f s CPU)\n", sc->name, poured, settled,
               overlap, passes, project_cpu);
        if (configured == PP_OK && g_finish_steps > 0) {
            config = model_config(standard, &scene);
            configured = pp_world_set_config(world, &config);
            if (configured == PP_OK)
                f = settle_phase(sc, &scene, world, h, a.steps + b.steps, g_finish_steps,
                                 g_finish_steps, "standard", 1);
            pp_scene_zero_velocities(&scene);
            overlap = pp_scene_max_penetration(&scene);
        }
        snprintf(how, sizeof how,
                 "1. poured under stock dWorldQuickStep (PP_MODEL_ODE, ode_max_contacts 8, mu 0.5, "
                 "ODE's ERP 0.2 and CFM 1e-10, %d iterations): %d steps, %.1f s CPU; at the end "
                 "fastest body %.3g m/s, deepest overlap %.3g m\n"
                 "2. velocities zeroed, settled under stock dWorldStep (the same contacts; ODE's "
                 "damping %g a step above %g m/s and %g rad/s): %d steps "
                 "(at least %d, then on until at rest), %.1f s CPU, %.1f s wall; fastest body "
                 "%.3g m/s, %.3g rad/s (%s); deepest overlap %.3g m\n"
                 "3. velocities zeroed, overlaps projected out: %d passes of one dWorldStep with "
                 "gravity off and the contacts' ERP 1, velocities zeroed after each (%.1f s CPU)%s",
                 sc->ode_pour, a.steps, a.cpu, a.max_speed, poured, ODE_DAMPING, ODE_DAMPING_SPEED,
                 ODE_DAMPING_SPIN, b.steps, ODE_SETTLE_MIN, b.cpu, b.wall,
                 b.max_speed, b.max_spin, b.at_rest ? "at rest" : "NOT at rest", settled, passes,
                 project_cpu, g_finish_steps > 0 ? "" : "\nno standard-model steps (--finish-steps 0)");
        if (g_finish_steps > 0) {
            size_t n = strlen(how);
            snprintf(how + n, sizeof how - n,
                     "\n4. PP_MODEL_STANDARD, pp_config_default() with friction_directions = 4%s: "
                     "%d steps, %.1f s CPU, %.1f s wall; %d steps not PP_OK, %d with an LCP "
                     "fallback; fastest body %.3g m/s, %.3g rad/s (velocities then zeroed)",
                     clock_free, f.steps, f.cpu, f.wall, f.bad, f.fallbacks, f.max_speed, f.max_spin);
        }
    }
    const int taken = a.steps + b.steps + f.steps;

    pp_scene_state state;
    memset(&state, 0, sizeof state);
    snprintf(state.scene, sizeof state.scene, "%s", sc->name);
    snprintf(state.model, sizeof state.model, "%s",
             !sc->ode_pour ? standard->name
                           : g_finish_steps > 0 ? "ode_quickstep+ode_step+standard" : "ode_quickstep+ode_step");
    state.seed = BENCH_SEED;
    state.h = h;
    state.settle_steps = taken;
    char path[4096], comments[4096], why[4200];
    snprintf(path, sizeof path, "%s/%s.state", dir, sc->name);
    char options[64] = "";
    if (g_lcp_budget == 0.0) snprintf(options, sizeof options, " --lcp-budget 0");
    if (sc->ode_pour && g_finish_steps > 0) {
        size_t n = strlen(options);
        snprintf(options + n, sizeof options - n, " --finish-steps %d", g_finish_steps);
    }
    snprintf(comments, sizeof comments,
             "made by: pegplus-benchmark --make-states DIR --scene %s%s (pegplus %s)\n"
             "%s\nODE auto-disable off\n"
             "deepest overlap (pp_scene_max_penetration): %.3g m",
             sc->name, options, PP_VERSION_STRING, how, overlap);
    int rc = configured == PP_OK ? pp_scene_state_capture(&state, &scene) : -1;
    if (configured != PP_OK)
        snprintf(why, sizeof why, "configuration: %s", pp_status_string(configured));
    else if (rc == 0)
        rc = pp_scene_state_write(&state, path, comments, why, sizeof why);
    else
        snprintf(why, sizeof why, "out of memory");
    if (rc == 0)
        printf("%s: wrote %s (%d bodies; %d steps, %.1f s CPU; deepest overlap %.3g m)\n", sc->name,
               path, state.count, taken, a.cpu + b.cpu + f.cpu, overlap);
    else
        fprintf(stderr, "pegplus-benchmark: %s: %s\n", sc->name, why);
    if (rc == 0 && ode_state.count > 0) { /* stock ODE's start (state.h pp_scene_state_path) */
        snprintf(ode_state.scene, sizeof ode_state.scene, "%s", sc->name);
        snprintf(ode_state.model, sizeof ode_state.model, "%s", "ode_quickstep+ode_step");
        ode_state.seed = BENCH_SEED;
        ode_state.h = h;
        ode_state.settle_steps = a.steps + b.steps;
        snprintf(comments, sizeof comments,
                 "made by: pegplus-benchmark --make-states DIR --scene %s%s (pegplus %s)\n"
                 "%s\n%s\nODE auto-disable off", sc->name, options, PP_VERSION_STRING, ode_how,
                 how);
        if (!pp_scene_state_path(path, sizeof path, dir, sc->name, 1))
            snprintf(why, sizeof why, "path too long"), rc = -1;
        else
            rc = pp_scene_state_write(&ode_state, path, comments, why, sizeof why);
        if (rc == 0)
            printf("%s: wrote %s (stock ODE's start: %d bodies, deepest overlap %.3g m)\n",
                   sc->name, path, ode_state.count, ode_overlap);
        else
            fprintf(stderr, "pegplus-benchmark: %s: %s\n", sc->name, why);
    }
    pp_scene_state_free(&ode_state);
    pp_scene_state_free(&state);
    pp_world_destroy(world);
    pp_scene_destroy(&scene);
    return rc;
}

/* --warm-rest K: the finishing steps (warm_finish_run) end at rest: the last K steps each
 * without a Lemke pivot or an LCP fallback and leaving every body at WARM_REST_SPEED (m/s)
 * or slower, and the fastest body after the last of them no faster than after the first: the
 * creep not growing. (Without that last condition heap20, from the file of
 * 2026-11-27, met it in its first 20 steps: its creep starts at ~1e-12 m/s and grows x1.09 a
 * step until at ~3e-8 m/s a Lemke path of 100-1 000 pivots stops it, ~80-250 steps on:
 * docs/performance.md, "heap20 finished past its come-to-rest event"; the creep was numerical,
 * a clamped warm basis accepted, and is cured for the standard model by its repair,
 * "heap20's recurring creep is numerical".) */
static const double WARM_REST_SPEED = 1e-9;
static int g_warm_rest = 0;
static const char *g_warm_models = "standard,peg"; /* --warm-models: warm_state's phases */

/* What warm_finish did. */
typedef struct warm_finish {
    int steps, pivots, fallbacks, restored, rested; /* rested: at rest by --warm-rest (or none
                                                       asked) after the last step */
    double cpu, speed, spin;    /* the fastest body after the last step, m/s and rad/s */
    double moved, turned;       /* the farthest any body moved from the loaded poses: m, and
                                   |q - q0| of its quaternion (the nearer of +-q) */
    double overlap;             /* deepest overlap after the last step, m */
    char pivoted[256];          /* the steps that pivoted, "step (pivots), ..." */
    char *text;                 /* the warm start after the last step; malloc'ed */
} warm_finish;

/* --make-states, last: one model's warm start for the state file (state.h). The warm start
 * names geoms by the order the world first saw them (pegplus.h), and a heap's script drops
 * its boxes one by one, so the world that settled it saw them in another order than a world
 * loaded from the file does: the warm start is made by such a world. `st` is loaded as the
 * benchmark loads it (built, its script run without stepping, posed, at rest; its own warm
 * start of model `m` restored when it has one) and stepped under `m` clock-free
 * (lcp_budget_seconds 0, k = 4): `max` steps, or with `rest` > 0 until the last `rest` steps
 * were at rest (g_warm_rest), at most `max`. Every step is printed. *out gets the warm start
 * after the last step and how far the bodies moved; with `write_poses` the poses then
 * replace st's. 0, or -1 with why. */
static int warm_finish_run(const bench_scene *sc, pp_scene_state *st, const bench_model *m,
                           int max, int rest, int write_poses, warm_finish *out, char *why,
                           size_t why_size)
{
    memset(out, 0, sizeof *out);
    pp_scene scene;
    if (sc->build(&scene, st->h) != PP_OK) {
        snprintf(why, why_size, "build failed");
        return -1;
    }
    dWorldSetAutoDisableFlag(scene.world, 0);
    pp_config config = model_config(m, &scene);
    config.lcp_budget_seconds = 0.0;
    pp_world *world = NULL;
    int settle = 0, rc = 0;
    if (pp_world_create(scene.world, scene.space, &config, &world) != PP_OK) {
        snprintf(why, why_size, "pp_world_create failed");
        rc = -1;
    } else {
        scene.pegplus = world;
        rc = pp_scene_state_apply(&scene, sc->name, st, st->h, &settle, why, why_size);
    }
    const char *had = pp_scene_state_warm_start(st, m->name);
    out->restored = rc == 0 && had;
    if (out->restored && pp_world_restore_warm_start(world, had) != PP_OK) {
        snprintf(why, why_size, "its %s warm start was refused", m->name);
        rc = -1;
    }
    int bad = 0, in_a_row = 0, at_rest = rest == 0;
    size_t listed = 0;
    double *speeds = malloc((size_t)(max > 0 ? max : 1) * sizeof *speeds); /* after each step */
    if (rc == 0 && !speeds) {
        snprintf(why, why_size, "out of memory");
        rc = -1;
    }
    while (rc == 0 && out->steps < max && !(rest > 0 && at_rest)) {
        if (scene.before_step) scene.before_step(&scene, settle + out->steps);
        const double t0 = cpu_now();
        bad += pp_world_step(world, st->h) != PP_OK;
        const double cpu = cpu_now() - t0;
        const pp_step_stats *t = pp_world_get_stats(world);
        fastest_body(&scene, &out->speed, &out->spin);
        speeds[out->steps] = out->speed;
        in_a_row = t->lcp_pivots == 0 && t->lcp_fallback == 0 && out->speed <= WARM_REST_SPEED
                       ? in_a_row + 1 : 0;
        if (rest > 0)
            at_rest = in_a_row >= rest && out->speed <= speeds[out->steps - (rest - 1)];
        out->cpu += cpu;
        out->pivots += t->lcp_pivots;
        out->fallbacks += t->lcp_fallback != 0;
        if (t->lcp_pivots > 0 && listed + 1 < sizeof out->pivoted) {
            const int n = snprintf(out->pivoted + listed, sizeof out->pivoted - listed, "%s%d (%d)",
                                   listed ? ", " : "", out->steps, t->lcp_pivots);
            listed = n > 0 && listed + (size_t)n < sizeof out->pivoted ? listed + (size_t)n
                                                                       : sizeof out->pivoted;
        }
        printf("%s: %s warm-start step %d: %.3f s CPU, LCP %d unknowns, %d solves (%d warm), %d "
               "pivots, fallback %d, residual %.3g; fastest body %.3g m/s, %.3g rad/s\n",
               sc->name, m->name, out->steps, cpu, t->lcp_size, t->lcp_solves,
               t->lcp_warm_solves, t->lcp_pivots, t->lcp_fallback, t->lcp_residual, out->speed,
               out->spin);
        ++out->steps;
    }
    free(speeds);
    out->rested = at_rest;
    if (rc == 0 && bad > 0) {
        snprintf(why, why_size, "%d of its %d %s steps failed", bad, out->steps, m->name);
        rc = -1;
    }
    if (rc == 0 && pp_world_save_warm_start(world, &out->text) != PP_OK) {
        snprintf(why, why_size, "pp_world_save_warm_start failed");
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < scene.body_count; ++i) {
        const double *p = &st->pose[7 * i];
        const dReal *x = dBodyGetPosition(scene.bodies[i]);
        const dReal *q = dBodyGetQuaternion(scene.bodies[i]);
        double dx = 0.0, dq = 0.0, sq = 0.0;
        for (int k = 0; k < 3; ++k) dx += (x[k] - p[k]) * (x[k] - p[k]);
        for (int k = 0; k < 4; ++k) {
            dq += (q[k] - p[3 + k]) * (q[k] - p[3 + k]);
            sq += (q[k] + p[3 + k]) * (q[k] + p[3 + k]);
        }
        out->moved = fmax(out->moved, sqrt(dx));
        out->turned = fmax(out->turned, sqrt(fmin(dq, sq)));
    }
    if (rc == 0) {
        out->overlap = pp_scene_max_penetration(&scene);
        pp_scene_zero_velocities(&scene);
        if (write_poses && pp_scene_state_capture(st, &scene) != 0) {
            snprintf(why, why_size, "out of memory");
            rc = -1;
        }
    }
    pp_world_destroy(world);
    pp_scene_destroy(&scene);
    return rc;
}

static int in_list(const char *list, const char *name);

/* printf-style text in memory of the length it takes (malloc'ed); NULL when out of memory. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static char *text_printf(const char *format, ...)
{
    va_list ap, again;
    va_start(ap, format);
    va_copy(again, ap);
    const int n = vsnprintf(NULL, 0, format, ap);
    va_end(ap);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text) vsnprintf(text, (size_t)n + 1, format, again);
    va_end(again);
    return text;
}

/* --make-states, last: the solvers' warm starts written with the state (state.h).
 * DIR/<scene>.state is finished under the standard model (warm_finish_run: --warm-steps,
 * --warm-rest) and written back with the poses after the last step (velocities zeroed, as
 * every state's) and the standard model's warm start then; that file is loaded again into a
 * fresh world as a benchmark row loads it and stepped the same way under PEG, and PEG's warm
 * start after those steps is added as its own section, the poses left as the standard model
 * wrote them (a warm start is a starting basis: every solve from it is still checked). The
 * benchmark restores each section into the runs of its model. 0, or -1. */
static int warm_state(const bench_scene *sc, const char *dir)
{
    char path[4096], why[4400] = "";
    snprintf(path, sizeof path, "%s/%s.state", dir, sc->name);
    int rc = 0;
    for (int phase = 0; rc == 0 && phase < 2; ++phase) {
        const bench_model *m = &MODELS[2 + phase]; /* standard, then peg */
        if (!in_list(g_warm_models, m->name)) continue;
        pp_scene_state st;
        if (pp_scene_state_read(&st, path, why, sizeof why) != 0) {
            rc = -1;
            break;
        }
        warm_finish f;
        rc = warm_finish_run(sc, &st, m, g_warm_steps, g_warm_rest, phase == 0, &f, why,
                             sizeof why);
        if (rc == 0 && !f.rested) {
            snprintf(why, sizeof why, "%s: not at rest after %d steps (--warm-rest %d: steps "
                     "without a pivot, every body <= %g m/s, not faster); nothing written",
                     m->name, f.steps, g_warm_rest, WARM_REST_SPEED);
            rc = -1;
        }
        char *text = f.text;
        if (rc == 0 && pp_scene_state_set_warm_start(&st, text) != 0) {
            snprintf(why, sizeof why, "the %s warm start names no model, or no room", m->name);
            rc = -1;
        }
        if (rc == 0) {
            f.text = NULL; /* the state's now */
            if (phase == 0) {
                st.settle_steps += f.steps;
                const size_t n = strlen(st.model);
                if (n < 8 || strcmp(st.model + n - 8, "standard") != 0)
                    snprintf(st.model + n, sizeof st.model - n, "+standard");
            }
            char until[256] = "";
            if (g_warm_rest > 0)
                snprintf(until, sizeof until, " (until the last %d each without a Lemke pivot "
                         "or a fallback, every body <= %g m/s after it, the fastest not faster "
                         "after the last than after the first; at most %d)", g_warm_rest,
                         WARM_REST_SPEED, g_warm_steps);
            /* the file's comments and this phase's record, whole (every re-make adds one
             * record a phase) */
            char *comments = text_printf(
                     "%s%s warm start: pegplus-benchmark --make-states DIR --scene %s%s "
                     "--warm-steps %d --warm-rest %d --warm-models %s (pegplus %s):\n"
                     "the poses above loaded as the benchmark loads them%s%s%s, then %d steps of "
                     "%s (friction_directions = 4, lcp_budget_seconds 0: clock-free)%s:\n"
                     "%d pivots (steps that pivoted: %s), %.3f s CPU, %d with an LCP fallback; "
                     "after the last, fastest body %.3g m/s, %.3g rad/s, deepest overlap %.3g m; "
                     "bodies moved by <= %.3g m, quaternions by <= %.3g\n%s",
                     st.comments ? st.comments : "", m->name, sc->name,
                     g_warm_only ? " --warm-only" : "", g_warm_steps, g_warm_rest,
                     g_warm_models, PP_VERSION_STRING, f.restored ? " with their " : "",
                     f.restored ? m->name : "", f.restored ? " section restored" : "", f.steps,
                     phase == 0 ? "PP_MODEL_STANDARD" : "PP_MODEL_PEG", until, f.pivots,
                     f.pivoted[0] ? f.pivoted : "none", f.cpu, f.fallbacks, f.speed, f.spin,
                     f.overlap, f.moved, f.turned,
                     phase == 0 ? "the body lines: the poses after the last of those steps "
                                  "(velocities zeroed); the standard section: the solver's warm "
                                  "start then (state.h)"
                                : "the poses those steps reached are not written; the peg "
                                  "section: PEG's warm start after them, a starting basis for "
                                  "its first step from the body lines (state.h)");
            if (!comments) snprintf(why, sizeof why, "out of memory");
            rc = comments ? pp_scene_state_write(&st, path, comments, why, sizeof why) : -1;
            free(comments);
            if (rc == 0)
                printf("%s: wrote %s (%d bodies; %s: %d steps, %d pivots, fastest body %.3g m/s, "
                       "moved <= %.3g m; %s%s)\n", sc->name, path, st.count, m->name, f.steps,
                       f.pivots, f.speed, f.moved, phase == 0 ? "its poses and " : "",
                       "the warm start of the last step");
        }
        free(f.text);
        pp_scene_state_free(&st);
    }
    if (rc != 0) fprintf(stderr, "pegplus-benchmark: %s: %s\n", sc->name, why);
    return rc;
}

/* ----------------------------------------------------------------------------- main */

/* 1 if `name` is an item of the comma-separated `list`. */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

/* Every item of `list` is one of the names; otherwise prints the first unknown and returns 0. */
static int check_list(const char *list, const char *what, int is_scene)
{
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int found = 0;
        for (int i = 0; i < (is_scene ? (int)SCENE_COUNT : (int)MODEL_COUNT); ++i) {
            const char *name = is_scene ? SCENES[i].name : MODELS[i].name;
            found |= strlen(name) == len && !strncmp(p, name, len);
        }
        if (!found) {
            fprintf(stderr, "pegplus-benchmark: unknown %s '%.*s' (--help, --list)\n", what, (int)len, p);
            return 0;
        }
        if (!end) break;
        p = end + 1;
    }
    return 1;
}

static void list_scenes(void)
{
    printf("%-11s %6s %8s %7s  %s\n", "scene", "steps", "h", "settle", "what");
    for (int i = 0; i < (int)SCENE_COUNT; ++i)
        printf("%-11s %6d %8.5g %7ld  %s%s\n", SCENES[i].name, SCENES[i].steps, SCENES[i].h,
               lround(SCENES[i].settle / SCENES[i].h), SCENES[i].what,
               SCENES[i].quick == 2 ? " [--quick only]" : SCENES[i].quick ? " [--quick]" : "");
}

/* `text` with its commas made semicolons, for a CSV field (in place). */
static const char *csv_field(char *text)
{
    for (char *c = text; *c; ++c)
        if (*c == ',') *c = ';';
    return text;
}

static void usage_error(const char *msg)
{
    fprintf(stderr, "pegplus-benchmark: %s\n(pegplus-benchmark --help for the options)\n", msg);
    exit(2);
}

int main(int argc, char **argv)
{
    int steps = 0, settle = -1, quick = 0;
    double h = 0.0, budget = -1.0;
    const char *csv_path = "pegplus-benchmark.csv";
    const char *states_dir = PP_STATES_DIR, *make_states_dir = NULL;
    const char *only_scene = NULL, *only_model = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(HELP, stdout);
            fputs(HELP_STATES, stdout);
            fputs(HELP_OPTIONS, stdout);
            fputs(HELP_MORE, stdout);
            return 0;
        } else if (!strcmp(a, "--list")) {
            list_scenes();
            return 0;
        } else if (!strcmp(a, "--quick")) {
            quick = 1;
        } else if (!strcmp(a, "--auto-disable")) {
            g_auto_disable = 1;
        } else if (!strcmp(a, "--log")) {
            g_log = 1;
        } else if (!strcmp(a, "--no-load-sharing")) {
            g_load_sharing = 0;
        } else if (!strcmp(a, "--warm-only")) {
            g_warm_only = 1;
        } else if (strcmp(a, "--steps") && strcmp(a, "--h") && strcmp(a, "--settle") &&
                   strcmp(a, "--budget") && strcmp(a, "--csv") && strcmp(a, "--scene") &&
                   strcmp(a, "--model") && strcmp(a, "--states") && strcmp(a, "--make-states") &&
                   strcmp(a, "--threads") && strcmp(a, "--series") && strcmp(a, "--finish-steps") &&
                   strcmp(a, "--lcp-budget") && strcmp(a, "--lcp-pivots") &&
                   strcmp(a, "--warm-steps") && strcmp(a, "--warm-rest") &&
                   strcmp(a, "--warm-models")) {
            usage_error("unknown option");
        } else if (!has_value) {
            usage_error("an option needs a value");
        } else if (!strcmp(a, "--steps")) {
            steps = atoi(argv[++i]);
            if (steps < 1) usage_error("--steps must be >= 1");
        } else if (!strcmp(a, "--h")) {
            h = atof(argv[++i]);
            if (!(h > 0.0)) usage_error("--h must be > 0");
        } else if (!strcmp(a, "--settle")) {
            settle = atoi(argv[++i]);
            if (settle < 0) usage_error("--settle must be >= 0");
        } else if (!strcmp(a, "--budget")) {
            budget = atof(argv[++i]);
            if (!(budget > 0.0)) usage_error("--budget must be > 0");
        } else if (!strcmp(a, "--csv")) {
            csv_path = argv[++i];
        } else if (!strcmp(a, "--series")) {
            g_series = fopen(argv[++i], "w");
            if (!g_series) usage_error("cannot write the --series file");
            fprintf(g_series, "scene,model,step,cpu_us,lcp_size,lcp_largest,pivots,solves,"
                              "lcp_fallback,approximate,unsolved,contacts,islands,residual,"
                              "status,load_shared,load_kept,max_speed,peg_ix_sets,screened,"
                              "ode_lcp_failed,peg_fallback,dropped\n");
        } else if (!strcmp(a, "--lcp-budget")) {
            g_lcp_budget = atof(argv[++i]);
            if (!(g_lcp_budget >= 0.0)) usage_error("--lcp-budget must be >= 0");
        } else if (!strcmp(a, "--warm-steps")) {
            g_warm_steps = atoi(argv[++i]);
            if (g_warm_steps < 0) usage_error("--warm-steps must be >= 0");
        } else if (!strcmp(a, "--warm-models")) {
            g_warm_models = argv[++i];
            if (strcmp(g_warm_models, "standard") && strcmp(g_warm_models, "peg") &&
                strcmp(g_warm_models, "standard,peg") && strcmp(g_warm_models, "peg,standard"))
                usage_error("--warm-models takes standard, peg or both");
        } else if (!strcmp(a, "--warm-rest")) {
            g_warm_rest = atoi(argv[++i]);
            if (g_warm_rest < 0) usage_error("--warm-rest must be >= 0");
        } else if (!strcmp(a, "--lcp-pivots")) {
            g_lcp_pivots = atol(argv[++i]);
            if (g_lcp_pivots < 0) usage_error("--lcp-pivots must be >= 0");
        } else if (!strcmp(a, "--finish-steps")) {
            g_finish_steps = atoi(argv[++i]);
            if (g_finish_steps < 0) usage_error("--finish-steps must be >= 0");
        } else if (!strcmp(a, "--threads")) {
            g_threads = atoi(argv[++i]);
            if (g_threads < 1 || g_threads > PP_MAX_THREADS) usage_error("--threads must be in 1..64");
        } else if (!strcmp(a, "--states")) {
            states_dir = argv[++i];
        } else if (!strcmp(a, "--make-states")) {
            make_states_dir = argv[++i];
        } else if (!strcmp(a, "--scene")) {
            only_scene = argv[++i];
            if (!check_list(only_scene, "scene", 1)) return 2;
        } else if (!strcmp(a, "--model")) {
            only_model = argv[++i];
            if (!check_list(only_model, "model", 0)) return 2;
        }
    }
    if (quick && steps == 0) steps = 20;
    if (budget < 0.0) budget = quick ? 10.0 : 30.0;
    if (!g_log) pp_set_log_hook(pp_log_discard, NULL);

    if (make_states_dir) {
        /* every selected scene that settles by default (--scene: those named), then exit */
        if (mkdir(make_states_dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "pegplus-benchmark: cannot make %s: %s\n", make_states_dir, strerror(errno));
            return 1;
        }
        int failed = 0;
        for (int s = 0; s < (int)SCENE_COUNT; ++s) {
            const bench_scene *sc = &SCENES[s];
            if (!(sc->settle > 0) || (only_scene && !in_list(only_scene, sc->name))) continue;
            double sh = h > 0.0 ? h : sc->h;
            int ss = settle >= 0 ? settle : (int)lround(sc->settle / sh);
            int rc = g_warm_only ? 0 : make_state(sc, ss, sh, make_states_dir);
            if (rc == 0 && g_warm_steps > 0) rc = warm_state(sc, make_states_dir);
            failed |= rc != 0;
        }
        return failed ? 1 : 0;
    }

    FILE *csv = fopen(csv_path, "w");
    if (!csv) {
        fprintf(stderr, "pegplus-benchmark: cannot write %s\n", csv_path);
        return 1;
    }
    fprintf(csv, "scene,model,h,steps_planned,steps_run,settle_steps,bodies,cpu_us_median,"
                 "cpu_us_worst,cpu_us_mean,wall_us_median,ratio_median_to_ode_step,lcp_size_mean,"
                 "lcp_size_max,pivots_per_step,fallback_steps,bad_steps,peak_rss_kb,"
                 "realtime_factor,max_speed,lcp_largest_max,unsolved_steps,end_speed,"
                 "ode_lcp_failed_steps,at_rest,baseline_at_rest,start,status,peg_fallback_steps\n");
    fflush(csv);
    struct rusage self;
    getrusage(RUSAGE_SELF, &self);
    printf("pegplus %s benchmark: k = 4, CPU time per pp_world_step (process CPU clock), "
           "budget %g s per run, parent RSS %.1f MB\n\n",
           PP_VERSION_STRING, budget, self.ru_maxrss / 1024.0);
    printf("%-10s %-13s %11s %9s %9s %7s %13s %8s %4s %4s %4s %7s %7s  %s\n", "scene", "model",
           "steps", "med us", "worst us", "x step", "lcp mean/max", "pivots", "fb", "un", "bad",
           "rss MB", "rt", "status");

    for (int s = 0; s < (int)SCENE_COUNT; ++s) {
        const bench_scene *sc = &SCENES[s];
        if (only_scene ? !in_list(only_scene, sc->name) : quick ? !sc->quick : sc->quick == 2)
            continue;
        double sh = h > 0.0 ? h : sc->h;
        int sn = steps > 0 ? steps : sc->steps;
        /* the start: the scene's state file; else (or with --settle N) a QuickStep settle */
        int ss = !sc->settles ? 0 : settle >= 0 ? settle : (int)lround(sc->settle / sh);
        pp_scene_state state;
        memset(&state, 0, sizeof state);
        const char *start = "built"; /* the CSV's start column */
        char why[4400] = "";
        int failed = 0;
        if (ss > 0 && settle < 0 && states_dir[0]) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.state", states_dir, sc->name);
            int rc = pp_scene_state_read(&state, path, why, sizeof why);
            if (rc == 0 && strcmp(state.scene, sc->name) != 0) {
                snprintf(why, sizeof why, "%s is the state of scene '%s'", path, state.scene);
                pp_scene_state_free(&state);
                rc = -1;
            }
            if (rc == 0) {
                start = "state";
                ss = (int)lround(state.settle_steps * state.h / sh);
                char warm[160] = "";
                for (int w = 0, n = 0; w < state.warm_count && n >= 0 && n < (int)sizeof warm; ++w)
                    n += snprintf(warm + n, sizeof warm - n, "%s%s",
                                  w ? ", " : "; the solvers' warm starts of ", state.warm[w].model);
                printf("%-10s start: %s (settled by %s, %d steps of %g s, %d bodies%s)\n",
                       sc->name, path, state.model, state.settle_steps, state.h, state.count, warm);
            } else if (rc < 0) {
                failed = 1;
            } else {
                printf("%-10s start: no %s; settling with dWorldQuickStep (%d steps)\n",
                       sc->name, path, ss);
            }
        }
        if (!failed && ss > 0 && strcmp(start, "state") != 0) {
            start = "quickstep";
            failed = settle_scene(sc, ss, sh, &state, why, sizeof why) != 0;
        }
        /* stock ODE's own settled heap, if the scene has one (state.h pp_scene_state_path):
         * the PP_MODEL_ODE rows start from it */
        pp_scene_state ode_state;
        memset(&ode_state, 0, sizeof ode_state);
        if (!failed && !strcmp(start, "state")) {
            char path[4096];
            int rc = pp_scene_state_path(path, sizeof path, states_dir, sc->name, 1)
                         ? pp_scene_state_read(&ode_state, path, why, sizeof why) : 1;
            if (rc == 0 && strcmp(ode_state.scene, sc->name) != 0) {
                snprintf(why, sizeof why, "%s is the state of scene '%s'", path, ode_state.scene);
                pp_scene_state_free(&ode_state);
                rc = -1;
            }
            if (rc == 0)
                printf("%-10s start of ode_step, ode_quickstep: %s (stock ODE's own settled "
                       "heap, overlaps kept, %d bodies)\n", sc->name, path, ode_state.count);
            else if (rc < 0)
                failed = 1;
            else
                why[0] = '\0';
        }
        if (failed) {
            printf("%-10s %-13s settle failed: %s\n", sc->name, "-", why);
            fprintf(csv, "%s,-,%g,%d,0,%d,0,,,,,,,,,,,,,,,,,,,,,settle failed: %s\n", sc->name, sh,
                    sn, ss, csv_field(why));
            pp_scene_state_free(&state);
            continue;
        }
        double baseline = 0.0;
        int baseline_sound = 0; /* ode_step ran at rest, its LCP solved in every step */
        for (int m = 0; m < (int)MODEL_COUNT; ++m) {
            if (only_model && m != 0 && !in_list(only_model, MODELS[m].name)) continue;
            const int own = MODELS[m].model == PP_MODEL_ODE && ode_state.count > 0;
            run_result r = run(sc, &MODELS[m], sn, sh, budget,
                               own ? &ode_state : ss > 0 ? &state : NULL);
            if (!strcmp(start, "quickstep"))
                status_append(r.status, sizeof r.status, " (QuickStep settle)");
            if (m == 0) {
                baseline = r.cpu_median;
                baseline_sound = (r.at_rest || !sc->resting) && r.ode_lcp_failed_steps == 0;
            }
            double ratio = baseline > 0.0 && r.steps ? r.cpu_median / baseline : 0.0;
            char ratio_col[24]; /* '!': against an ode_step run that was not a resting heap */
            snprintf(ratio_col, sizeof ratio_col, "%.3g%s", ratio, baseline_sound ? "" : "!");
            double rt = r.cpu_total > 0.0 ? r.steps * sh / r.cpu_total : 0.0;
            char steps_col[24], lcp_col[24];
            snprintf(steps_col, sizeof steps_col, "%d/%d", r.steps, r.planned);
            snprintf(lcp_col, sizeof lcp_col, "%.0f/%d", r.lcp_mean, r.lcp_max);
            printf("%-10s %-13s %11s %9.5g %9.5g %7s %13s %8.5g %4d %4d %4d %7.1f %7.3g  %s\n",
                   sc->name, MODELS[m].name, steps_col, 1e6 * r.cpu_median, 1e6 * r.cpu_worst,
                   ratio_col, lcp_col, r.pivots_mean, r.fallback_steps, r.unsolved_steps,
                   r.bad_steps, r.rss_kb / 1024.0, rt, r.status);
            fprintf(csv, "%s,%s,%g,%d,%d,%d,%d,%.3f,%.3f,%.3f,%.3f,%.4f,%.2f,%d,%.2f,%d,%d,%ld,"
                         "%.5g,%.4f,%d,%d,%.4g,%d,%d,%d,%s,%s,%d\n",
                    sc->name, MODELS[m].name, sh, r.planned, r.steps, ss, r.bodies,
                    1e6 * r.cpu_median, 1e6 * r.cpu_worst, 1e6 * r.cpu_mean, 1e6 * r.wall_median,
                    ratio, r.lcp_mean, r.lcp_max, r.pivots_mean, r.fallback_steps, r.bad_steps,
                    r.rss_kb, rt, r.max_speed, r.largest_max, r.unsolved_steps, r.end_speed,
                    r.ode_lcp_failed_steps, r.at_rest, baseline_sound, own ? "ode_state" : start,
                    csv_field(r.status), r.peg_fallback_steps);
            fflush(csv);
        }
        pp_scene_state_free(&ode_state);
        pp_scene_state_free(&state);
    }
    fclose(csv);
    if (g_series) fclose(g_series);
    printf("\nCSV written to %s\n", csv_path);
    return 0;
}
