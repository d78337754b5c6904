/*
 * The comparison workbench (pegplus-compare, docs/workbench.md) and its scene files
 * (docs/scene-file.md), through the program itself (PP_COMPARE_BIN) and the scene library:
 *  - the overlap volume the tool reports is the exact overlap: two pairs of boxes built
 *    overlapping by closed-form volumes (a 0.1 x 0.8 x 0.7 m slab, and a box turned by 90
 *    degrees: 0.15 x 1 x 0.5 m), against the closed form and pp_overlap_volume;
 *  - the example scene file (a box stack, a hinge pendulum, a ball-jointed capsule, a hull)
 *    runs under every model: the stack keeps standing (top box within 1 mm of its height
 *    under the pegplus models, 2 cm under stock ODE's soft contacts), the pendulum's bob stays
 *    at its rod's length from the hinge (1 cm), no penetration beyond 1e-9 m under the
 *    pegplus models;
 *  - trajectories: the run written with decimation 5 holds steps 0, 5, ..., 35 and the last
 *    (37); its last frame is the run's final state (--final-state) to 1e-12, and the same
 *    scene stepped here (same model, h, steps) ends at the trajectory's last poses to 1e-12:
 *    a replay of the run;
 *  - writing a trajectory does not change the run: the pile (30 boxes from their settled
 *    state) under the standard model and PEG ends in the same state, bit for bit, with and
 *    without --trajectory (and with decimation 7). It did not before pegplus-compare cleaned
 *    ODE's space at fixed points: the writer's dSpaceCollide reordered the space's geoms,
 *    which changes the pegplus models' Lemke pivot path (workbench.c, clean_space);
 *  - bad scene files: the message names the file, the JSON path and the problem.
 */
#include "catalog.h"
#include "pegplus/overlap.h"
#include "pegplus/pegplus.h"
#include "scene_file.h"
#include "state.h"
#include "trajectory.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "it_common.h"

#ifndef PP_COMPARE_BIN
#error PP_COMPARE_BIN: the pegplus-compare program
#endif
#ifndef PP_SOURCE_DIR
#error PP_SOURCE_DIR
#endif
#ifndef PP_WORK_DIR
#define PP_WORK_DIR "."
#endif

#define STACK_FILE PP_SOURCE_DIR "/examples/scenes/files/stack-pendulum.json"

static const double REPLAY_TOL = 1e-12;  /* m and quaternion units: the bound */
static const double OVERLAP_TOL = 1e-12; /* relative, of a volume of order 0.1 m^3 */

/* Runs a shell command; its exit status. */
static int run(const char *command)
{
    int status = system(command);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void work_path(char *buf, size_t size, const char *name)
{
    mkdir(PP_WORK_DIR, 0777);
    snprintf(buf, size, "%s/%s", PP_WORK_DIR, name);
}

/* The value of `column` in the data line whose first fields match `key` ("scene,model,h," or
 * "scene,model,h,step,"): the CSV's header names the columns. NAN when not found. */
static double csv_value(const char *path, const char *key, const char *column)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s not written", path);
    char line[8192];
    int col = -1;
    double v = NAN;
    if (fgets(line, sizeof line, f)) {
        int k = 0;
        for (char *save = NULL, *t = strtok_r(line, ",\n", &save); t; t = strtok_r(NULL, ",\n", &save), ++k)
            if (!strcmp(t, column)) col = k;
    }
    ck_assert_msg(col >= 0, "%s: no column %s", path, column);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, strlen(key)) != 0) continue;
        int k = 0;
        for (char *p = line; p; p = strchr(p, ','), p = p ? p + 1 : NULL, ++k)
            if (k == col) {
                v = strtod(p, NULL);
                break;
            }
        break;
    }
    fclose(f);
    return v;
}

static void csv_text(const char *path, const char *key, int column_index, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    ck_assert(f != NULL);
    char line[8192];
    out[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, strlen(key)) != 0) continue;
        char *p = line;
        for (int k = 0; k < column_index && p; ++k) p = strchr(p, ','), p = p ? p + 1 : NULL;
        if (p) snprintf(out, size, "%.*s", (int)strcspn(p, ",\n"), p);
        break;
    }
    fclose(f);
}

/* ------------------------------------------------------------------ overlap volume */

static const char OVERLAP_SCENE[] =
    "{\"version\": 1, \"name\": \"overlap\", \"gravity\": [0, 0, 0],\n"
    " \"bodies\": [\n"
    "  {\"shape\": \"box\", \"size\": [1, 1, 1], \"mass\": 1, \"pos\": [0, 0, 0]},\n"
    "  {\"shape\": \"box\", \"size\": [1, 1, 1], \"mass\": 1, \"pos\": [0.9, 0.2, 0.3]},\n"
    "  {\"shape\": \"box\", \"size\": [1, 1, 1], \"mass\": 1, \"pos\": [10, 0, 0]},\n"
    "  {\"shape\": \"box\", \"size\": [2, 0.5, 0.5], \"mass\": 1, \"pos\": [10.6, 0, 0],\n"
    "   \"quat\": [0.70710678118654752, 0, 0, 0.70710678118654752]}\n"
    " ]}\n";

START_TEST(test_overlap_closed_form)
{
    char scene[512], series[512], cmd[2048];
    work_path(scene, sizeof scene, "overlap.json");
    work_path(series, sizeof series, "overlap-series.csv");
    FILE *f = fopen(scene, "w");
    ck_assert(f != NULL);
    fputs(OVERLAP_SCENE, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' --scene '%s' --models ode --h 0.01 --seconds 0.01 --series '%s' --quiet",
             PP_COMPARE_BIN, scene, series);
    ck_assert_int_eq(run(cmd), 0);
    double reported = csv_value(series, "overlap,ode,0.01,0,", "overlap");

    /* closed form: the slab 0.1 x 0.8 x 0.7; the 2 x 0.5 x 0.5 box turned 90 degrees about z
     * spans x in [10.35, 10.85], y in [-1, 1], z in [-0.25, 0.25]: 0.15 x 1 x 0.5 with the
     * unit box at x = 10 */
    const double closed = 0.1 * 0.8 * 0.7 + 0.15 * 1.0 * 0.5;
    ck_assert_msg(fabs(reported - closed) <= OVERLAP_TOL * closed, "tool %.17g, closed form %.17g",
                  reported, closed);

    /* the library's own exact overlap on the scene file's poses */
    pp_scene s;
    char why[512];
    ck_assert_int_eq(pp_scene_file_load(&s, scene, why, sizeof why), PP_OK);
    double library = 0.0;
    for (int pair = 0; pair < 2; ++pair) {
        dGeomID a = s.geoms[2 * pair], b = s.geoms[2 * pair + 1];
        double xa[3], Ra[9], xb[3], Rb[9], v;
        for (int i = 0; i < 3; ++i) {
            xa[i] = dGeomGetPosition(a)[i];
            xb[i] = dGeomGetPosition(b)[i];
            for (int j = 0; j < 3; ++j) {
                Ra[3 * i + j] = dGeomGetRotation(a)[4 * i + j];
                Rb[3 * i + j] = dGeomGetRotation(b)[4 * i + j];
            }
        }
        ck_assert_int_eq(pp_overlap_volume(pp_scene_file_polytope(&s, a), xa, Ra,
                                           pp_scene_file_polytope(&s, b), xb, Rb, &v), PP_OK);
        library += v;
    }
    pp_scene_destroy(&s);
    ck_assert_msg(fabs(reported - library) <= OVERLAP_TOL * closed, "tool %.17g, pp_overlap_volume %.17g",
                  reported, library);
}
END_TEST

/* --------------------------------------------------------- the scene file, every model */

static const char *const MODELS[] = {"ode", "quick", "standard", "peg", "standard-lin", "peg-lin"};
enum { MODEL_COUNT = sizeof MODELS / sizeof MODELS[0], STEPS = 37, DECIMATION = 5 };

START_TEST(test_scene_file_every_model)
{
    char dir[512], csv[512], cmd[4096];
    work_path(dir, sizeof dir, "stack");
    work_path(csv, sizeof csv, "stack.csv");
    snprintf(cmd, sizeof cmd,
             "'%s' --scene '%s' --models ode,quick,standard,peg,standard-lin,peg-lin --h 0.01 --seconds 1 "
             "--csv '%s' --final-state '%s' --quiet",
             PP_COMPARE_BIN, STACK_FILE, csv, dir);
    ck_assert_int_eq(run(cmd), 0);
    for (int m = 0; m < MODEL_COUNT; ++m) {
        char key[128], status[96], path[1024], why[256];
        snprintf(key, sizeof key, "stack-pendulum,%s,0.01,", MODELS[m]);
        csv_text(csv, key, 8, status, sizeof status);
        ck_assert_msg(!strcmp(status, "ok"), "%s: status '%s'", MODELS[m], status);
        ck_assert_double_eq(csv_value(csv, key, "steps_run"), 100);
        int pegplus = strcmp(MODELS[m], "ode") && strcmp(MODELS[m], "quick");
        if (pegplus)
            ck_assert_msg(csv_value(csv, key, "max_penetration") < 1e-9, "%s: penetration %g", MODELS[m],
                          csv_value(csv, key, "max_penetration"));
        snprintf(path, sizeof path, "%s/stack-pendulum-%s-h0.01.state", dir, MODELS[m]);
        pp_scene_state st;
        ck_assert_msg(pp_scene_state_read(&st, path, why, sizeof why) == 0, "%s", why);
        ck_assert_int_eq(st.count, 6);
        /* bodies: bottom, middle, top (1.25 m), bob (hinge at (2, 0, 2), rod 0.6 m), link, gem */
        double top_z = st.pose[7 * 2 + 2];
        ck_assert_msg(fabs(top_z - 1.25) < (pegplus ? 1e-3 : 2e-2), "%s: top box at z = %g", MODELS[m], top_z);
        const double *bob = &st.pose[7 * 3];
        double r = sqrt((bob[0] - 2) * (bob[0] - 2) + bob[1] * bob[1] + (bob[2] - 2) * (bob[2] - 2));
        ck_assert_msg(fabs(r - 0.6) < 1e-2, "%s: bob %g m from the hinge", MODELS[m], r);
        ck_assert_msg(csv_value(csv, key, "joint_violation_max") < 1e-2, "%s: joint violation %g", MODELS[m],
                      csv_value(csv, key, "joint_violation_max"));
        pp_scene_state_free(&st);
    }
}
END_TEST

/* ---------------------------------------------------------------------- trajectories */

static void no_pairs(void *data, dGeomID a, dGeomID b) { (void)data, (void)a, (void)b; }

/* The scene file stepped here as pegplus-compare steps it (pp_config_default, the file's
 * surface, the model; ODE's space cleaned before the first step and after every step,
 * docs/workbench.md); the final poses, 7 per body. */
static double *step_here(pp_model model, pp_ode_stepper stepper, double h, int steps, int *count)
{
    pp_catalog_scene cs;
    char why[512];
    ck_assert_int_eq(pp_catalog_build(&cs, STACK_FILE, h, 1, why, sizeof why), PP_OK);
    dWorldSetAutoDisableFlag(cs.scene->world, 0);
    pp_config c = pp_config_default();
    if (cs.scene->configure) cs.scene->configure(cs.scene, &c);
    c.model = model;
    c.ode_stepper = stepper;
    pp_world *w = NULL;
    ck_assert_int_eq(pp_world_create(cs.scene->world, cs.scene->space, &c, &w), PP_OK);
    ck_assert_int_eq(pp_catalog_start(&cs, w, NULL, h, why, sizeof why), 0);
    for (int i = 0; i < steps; ++i) {
        pp_catalog_before_step(&cs, i);
        if (i == 0) dSpaceCollide(cs.scene->space, NULL, no_pairs);
        ck_assert_int_eq(pp_world_step(w, h), PP_OK);
        dSpaceCollide(cs.scene->space, NULL, no_pairs);
    }
    *count = cs.scene->body_count;
    double *pose = malloc(sizeof(double) * 7 * (size_t)*count);
    for (int b = 0; b < *count; ++b) {
        memcpy(pose + 7 * b, dBodyGetPosition(cs.scene->bodies[b]), 3 * sizeof(double));
        memcpy(pose + 7 * b + 3, dBodyGetQuaternion(cs.scene->bodies[b]), 4 * sizeof(double));
    }
    pp_world_destroy(w);
    pp_catalog_destroy(&cs);
    return pose;
}

START_TEST(test_trajectory_replay)
{
    char dir[512], cmd[4096];
    work_path(dir, sizeof dir, "traj");
    snprintf(cmd, sizeof cmd,
             "'%s' --scene '%s' --models ode,quick,standard,peg --h 0.01 --seconds %g --trajectory '%s' "
             "--decimation %d --final-state '%s' --quiet",
             PP_COMPARE_BIN, STACK_FILE, STEPS * 0.01, dir, DECIMATION, dir);
    ck_assert_int_eq(run(cmd), 0);
    const struct { const char *name; pp_model model; pp_ode_stepper stepper; } models[] = {
        {"ode", PP_MODEL_ODE, PP_ODE_WORLD_STEP}, {"quick", PP_MODEL_ODE, PP_ODE_QUICK_STEP},
        {"standard", PP_MODEL_STANDARD, PP_ODE_WORLD_STEP}, {"peg", PP_MODEL_PEG, PP_ODE_WORLD_STEP}};
    for (int m = 0; m < 4; ++m) {
        char path[1024], why[256];
        snprintf(path, sizeof path, "%s/stack-pendulum-%s-h0.01.pptraj", dir, models[m].name);
        pp_traj t;
        ck_assert_int_eq(pp_traj_load(path, &t), 0);
        ck_assert_str_eq(t.model, models[m].name);
        ck_assert_int_eq(t.decimation, DECIMATION);
        /* steps 0, 5, ..., 35 and the last, 37 */
        ck_assert_int_eq(t.frame_count, STEPS / DECIMATION + 2);
        for (int f = 0; f + 1 < t.frame_count; ++f) ck_assert_int_eq(t.steps[f], DECIMATION * f);
        int last = t.frame_count - 1;
        ck_assert_int_eq(t.steps[last], STEPS);
        ck_assert_int_eq(t.body_count_at_frame[last], 6);

        snprintf(path, sizeof path, "%s/stack-pendulum-%s-h0.01.state", dir, models[m].name);
        pp_scene_state st;
        ck_assert_msg(pp_scene_state_read(&st, path, why, sizeof why) == 0, "%s", why);
        ck_assert_int_eq(st.count, 6);
        int n = 0;
        double *here = step_here(models[m].model, models[m].stepper, 0.01, STEPS, &n);
        ck_assert_int_eq(n, 6);
        for (int k = 0; k < 7 * n; ++k) {
            ck_assert_msg(fabs(t.poses[last][k] - st.pose[k]) <= REPLAY_TOL, "%s: pose[%d] %.17g, final state %.17g",
                          models[m].name, k, t.poses[last][k], st.pose[k]);
            ck_assert_msg(fabs(t.poses[last][k] - here[k]) <= REPLAY_TOL, "%s: pose[%d] %.17g, stepped here %.17g",
                          models[m].name, k, t.poses[last][k], here[k]);
        }
        free(here);
        pp_scene_state_free(&st);
        pp_traj_free(&t);
    }
}
END_TEST

/* Two files' bytes equal. */
static int same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    ck_assert_msg(fa && fb, "%s or %s missing", a, b);
    int ca, cb, same = 1;
    do {
        ca = fgetc(fa);
        cb = fgetc(fb);
        same = ca == cb;
    } while (same && ca != EOF);
    fclose(fa);
    fclose(fb);
    return same;
}

START_TEST(test_trajectory_does_not_perturb)
{
    const char *runs[] = {"", "--trajectory '%s/traj' --decimation 1", "--trajectory '%s/traj' --decimation 7"};
    for (int r = 0; r < 3; ++r) {
        char dir[512], name[32], extra[1200], cmd[4096];
        snprintf(name, sizeof name, "pile-%d", r);
        work_path(dir, sizeof dir, name);
        snprintf(extra, sizeof extra, runs[r], dir);
        snprintf(cmd, sizeof cmd,
                 "'%s' --scene pile --models standard,peg --h 0.01 --seconds 0.3 --friction-directions 4 "
                 "--final-state '%s' %s --quiet",
                 PP_COMPARE_BIN, dir, extra);
        ck_assert_int_eq(run(cmd), 0);
    }
    for (int r = 1; r < 3; ++r)
        for (int m = 0; m < 2; ++m) {
            const char *model = m ? "peg" : "standard";
            char a[1024], b[1024];
            snprintf(a, sizeof a, "%s/pile-0/pile-%s-h0.01.state", PP_WORK_DIR, model);
            snprintf(b, sizeof b, "%s/pile-%d/pile-%s-h0.01.state", PP_WORK_DIR, r, model);
            ck_assert_msg(same_bytes(a, b), "%s: the run with a trajectory (%s) ended elsewhere", model, runs[r]);
        }
}
END_TEST

/* ------------------------------------------------------------------------- bad files */

static void expect_error(const char *name, const char *text, const char *message)
{
    char path[512], why[1024];
    work_path(path, sizeof path, name);
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    fputs(text, f);
    fclose(f);
    pp_scene s;
    ck_assert_int_ne(pp_scene_file_load(&s, path, why, sizeof why), PP_OK);
    char expected[1024];
    snprintf(expected, sizeof expected, "%s%s", path, message);
    ck_assert_msg(strstr(why, expected) != NULL, "message '%s' lacks '%s'", why, expected);
}

START_TEST(test_bad_scene_files)
{
    expect_error("bad-size.json",
                 "{\"bodies\": [{\"shape\": \"box\", \"size\": [1, 1, 1], \"mass\": 1},\n"
                 "             {\"shape\": \"box\", \"size\": [1, -1, 1], \"mass\": 1}]}\n",
                 ": bodies[1].size: expected an array of 3 numbers > 0");
    expect_error("bad-joint.json",
                 "{\"bodies\": [{\"name\": \"bob\", \"shape\": \"sphere\", \"radius\": 0.1, \"mass\": 1}],\n"
                 " \"joints\": [{\"type\": \"hinge\", \"bodies\": [\"bobb\"], \"anchor\": [0, 0, 1], \"axis\": [0, 1, 0]}]}\n",
                 ": joints[0].bodies[0]: no body named 'bobb'");
    expect_error("bad-key.json", "{\"bodies\": [{\"shape\": \"sphere\", \"radius\": 0.1, \"mas\": 1}]}\n",
                 ": bodies[0].mas: unknown key");
    expect_error("bad-hull.json",
                 "{\"bodies\": [{\"shape\": \"convex\", \"mass\": 1, \"points\": [[0,0,0],[1,0,0],[0,1,0],[1,1,0]]}]}\n",
                 ": bodies[0].points: no convex hull");
    expect_error("bad-syntax.json", "{\"bodies\": [\n  {\"shape\": \"box\",, }\n]}\n", ":2:");

    /* and through the program: exit status 1, the message on stderr */
    char path[512], out[512], cmd[2048], line[1024];
    work_path(path, sizeof path, "bad-size.json");
    work_path(out, sizeof out, "bad-size.err");
    snprintf(cmd, sizeof cmd, "'%s' --scene '%s' --models ode --seconds 0.01 2> '%s' > /dev/null", PP_COMPARE_BIN,
             path, out);
    ck_assert_int_eq(run(cmd), 1);
    FILE *f = fopen(out, "r");
    ck_assert(f != NULL);
    int found = 0;
    while (fgets(line, sizeof line, f)) found |= strstr(line, "bodies[1].size: expected an array of 3 numbers > 0") != NULL;
    fclose(f);
    ck_assert_msg(found, "pegplus-compare did not name bodies[1].size");
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("workbench");
    TCase *tc = tcase_create("workbench");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_overlap_closed_form);
    tcase_add_test(tc, test_scene_file_every_model);
    tcase_add_test(tc, test_trajectory_replay);
    tcase_add_test(tc, test_trajectory_does_not_perturb);
    tcase_add_test(tc, test_bad_scene_files);
    suite_add_tcase(suite, tc);
    return pp_it_run(suite);
}
