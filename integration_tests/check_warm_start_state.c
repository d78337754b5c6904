/*
 * The warm start saved with the bodies' state (pegplus.h pp_world_save_warm_start,
 * pp_world_restore_warm_start): a program restarted from saved bodies steps on as the running
 * program would have.
 *
 * A small heap of boxes (a row of three on the ground, two bridging them, one on top, slightly
 * turned: face-to-face contacts, so its LCPs are degenerate and their answers depend on the
 * basis Lemke starts from) is stepped N steps from rest, clock-free (lcp_budget_seconds 0).
 * At step K the bodies' state (position, quaternion, linear and angular velocity) is saved
 * bit for bit with the warm start; a fresh ODE world and pegplus world built the same way get
 * both and step the rest. (ODE's dBodySetQuaternion normalises the quaternion it is given, and
 * normalising a unit quaternion again can move its last bit: no program can put back the bits
 * it saved. So the uninterrupted run sets its own bodies from the saved state too, with the
 * same calls, and the two runs go on from the same bits; heap50 below differs without it.)
 *  - every step is the uninterrupted run's, bit for bit (positions, quaternions, velocities)
 *    with the same LCP statistics, and the first restored step is warm (every solve warm
 *    started, the uninterrupted run's pivots);
 *  - the same restart without the warm start is cold: its first step pivots more, and ends
 *    elsewhere (other bits: the degenerate LCP's answer depends on the start basis), so the
 *    test fails if the restore did nothing;
 *  - the sticking solve's answers round-trip too (heap50, below);
 *  - a warm start of another world (a sphere where a box was; one geom more), of the other
 *    model, or cut short is refused with PP_ERR_INVALID_ARGUMENT and a message naming what
 *    differs, and the world steps on unchanged (still the uninterrupted run's bits: the
 *    refused text changed nothing).
 * Under both pegplus models, and again with a motor hinge joining two boxes (its LCP unknowns
 * kept by the joint's index).
 *
 * The settled heap of 20 boxes the benchmark starts from (examples/scenes/states/heap20.state)
 * carries a warm start for each pegplus model (state.h: the standard model's after its last
 * step, PEG's after PEG's own steps from the poses written): loaded as the benchmark loads it,
 * each model's first step from its own section is warm (every solve, no pivot), where the same
 * poses without it pivot ~1 000 (standard) and ~2 900 (PEG) times; each model's world still
 * refuses the other's section (its sets are another LCP); the two sections round-trip through
 * the state file's writer and reader (version 2).
 */
#define _POSIX_C_SOURCE 200809L /* strdup, mkstemp */
#include "pegplus/pegplus.h"
#include "it_heap_state.h"
#include "it_messages.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define H 0.01
enum { STEPS = 40, SAVE_AT = 20, BOXES = 6 };

typedef struct heap {
    dWorldID world;
    dSpaceID space;
    dBodyID bodies[BOXES];
    pp_world *pw;
} heap;

/* variant 0: the heap; 1: a sphere in place of box 3; 2: one more (static) geom; 3: the heap
 * with a hinge between boxes 3 and 4 whose motor (target speed 0, at most 0.5 N m) gives the
 * LCP joint unknowns, kept in the warm start by the joint's index. */
static void heap_build(heap *w, pp_model model, int variant)
{
    memset(w, 0, sizeof *w);
    w->world = dWorldCreate();
    w->space = dHashSpaceCreate(0);
    dWorldSetGravity(w->world, 0, 0, -9.81);
    dCreatePlane(w->space, 0, 0, 1, 0);
    const double s = 0.4; /* box edge, m */
    const double place[BOXES][4] = {
        /* x, y, z, yaw */
        {-0.45, 0.0, 0.5 * s, 0.0},   {0.0, 0.01, 0.5 * s, 0.02}, {0.45, 0.0, 0.5 * s, -0.01},
        {-0.22, 0.0, 1.5 * s, 0.03},  {0.23, 0.0, 1.5 * s, 0.0},  {0.0, 0.02, 2.5 * s, 0.05}};
    for (int i = 0; i < BOXES; ++i) {
        dBodyID b = dBodyCreate(w->world);
        dMass m;
        dMassSetBoxTotal(&m, 1.0 + 0.1 * i, s, s, s);
        dBodySetMass(b, &m);
        dBodySetPosition(b, place[i][0], place[i][1], place[i][2]);
        dMatrix3 R;
        dRFromAxisAndAngle(R, 0, 0, 1, place[i][3]);
        dBodySetRotation(b, R);
        dGeomID g = variant == 1 && i == 3 ? dCreateSphere(w->space, 0.5 * s)
                                           : dCreateBox(w->space, s, s, s);
        dGeomSetBody(g, b);
        w->bodies[i] = b;
    }
    if (variant == 2) dGeomSetPosition(dCreateSphere(w->space, 0.1), 5.0, 5.0, 0.1);
    if (variant == 3) {
        dJointID j = dJointCreateHinge(w->world, 0);
        dJointAttach(j, w->bodies[3], w->bodies[4]);
        dJointSetHingeAnchor(j, 0.0, 0.0, 1.5 * s);
        dJointSetHingeAxis(j, 0, 1, 0);
        dJointSetHingeParam(j, dParamVel, 0.0);
        dJointSetHingeParam(j, dParamFMax, 0.5);
    }
    pp_config c = pp_config_default();
    c.model = model;
    c.friction_directions = 4;
    c.lcp_budget_seconds = 0; /* clock-free: the answers may not depend on the load */
    dWorldSetAutoDisableFlag(w->world, 0);
    ck_assert_int_eq(pp_world_create(w->world, w->space, &c, &w->pw), PP_OK);
}

static void heap_destroy(heap *w)
{
    pp_world_destroy(w->pw);
    dSpaceDestroy(w->space);
    dWorldDestroy(w->world);
}

/* A body's state: position, quaternion, linear and angular velocity. */
typedef struct body_state {
    dReal x[3], q[4], v[3], w[3];
} body_state;

static void save_bodies(const dBodyID *bodies, int count, body_state *s)
{
    for (int i = 0; i < count; ++i) {
        memcpy(s[i].x, dBodyGetPosition(bodies[i]), sizeof s[i].x);
        memcpy(s[i].q, dBodyGetQuaternion(bodies[i]), sizeof s[i].q);
        memcpy(s[i].v, dBodyGetLinearVel(bodies[i]), sizeof s[i].v);
        memcpy(s[i].w, dBodyGetAngularVel(bodies[i]), sizeof s[i].w);
    }
}

static void restore_bodies(dBodyID *bodies, int count, const body_state *s)
{
    for (int i = 0; i < count; ++i) {
        dBodySetPosition(bodies[i], s[i].x[0], s[i].x[1], s[i].x[2]);
        dBodySetQuaternion(bodies[i], s[i].q);
        dBodySetLinearVel(bodies[i], s[i].v[0], s[i].v[1], s[i].v[2]);
        dBodySetAngularVel(bodies[i], s[i].w[0], s[i].w[1], s[i].w[2]);
    }
}

/* The uninterrupted run: each step's bodies and statistics. */
typedef struct run {
    body_state after[STEPS][BOXES];
    pp_step_stats stats[STEPS];
    char *warm_start; /* saved after step SAVE_AT - 1 */
} run;

static void step_checked(heap *w, const run *ref, int step, const char *what)
{
    ck_assert_int_eq(pp_world_step(w->pw, H), PP_OK);
    body_state now[BOXES];
    save_bodies(w->bodies, BOXES, now);
    ck_assert_msg(!memcmp(now, ref->after[step], sizeof now),
                  "%s: step %d differs from the uninterrupted run's", what, step);
    const pp_step_stats *t = pp_world_get_stats(w->pw), *r = &ref->stats[step];
    ck_assert_int_eq(t->lcp_pivots, r->lcp_pivots);
    ck_assert_int_eq(t->lcp_solves, r->lcp_solves);
    ck_assert_int_eq(t->lcp_warm_solves, r->lcp_warm_solves);
}

static const pp_model k_models[] = {PP_MODEL_STANDARD, PP_MODEL_PEG};

/* The text that pp_world_save_warm_start gives for `variant` of the heap under `model`,
 * after one step (so that it holds records). */
static char *other_warm_start(pp_model model, int variant)
{
    heap w;
    heap_build(&w, model, variant);
    ck_assert_int_eq(pp_world_step(w.pw, H), PP_OK);
    char *text = NULL;
    ck_assert_int_eq(pp_world_save_warm_start(w.pw, &text), PP_OK);
    heap_destroy(&w);
    return text;
}

/* `text` with its first record's size (the 11th word of its "e" line) made `size`. */
static char *forged_size(const char *text, const char *size)
{
    const char *p = strstr(text, "\ne ");
    ck_assert_ptr_nonnull(p);
    ++p;
    for (int word = 0; word < 10; ++word) {
        p = strchr(p, ' ');
        ck_assert_ptr_nonnull(p);
        ++p;
    }
    const char *after = p + strcspn(p, " \n");
    const size_t head = (size_t)(p - text);
    char *out = malloc(head + strlen(size) + strlen(after) + 1);
    ck_assert_ptr_nonnull(out);
    memcpy(out, text, head);
    strcpy(out + head, size);
    strcat(out, after);
    return out;
}

/* `text` with "geoms N" written over two lines (a count that strtol would find anyway). */
static char *count_on_next_line(const char *text)
{
    char *out = strdup(text);
    char *g = strstr(out, "\ngeoms ");
    ck_assert_ptr_nonnull(g);
    g[6] = '\n';
    return out;
}

/* A refused restore: PP_ERR_INVALID_ARGUMENT and a message holding `needle`. */
static void refused(heap *w, const char *text, const char *needle)
{
    messages = 0;
    ck_assert_int_eq(pp_world_restore_warm_start(w->pw, text), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(messages, 1);
    ck_assert_msg(strstr(last_message, needle), "message \"%s\" does not say \"%s\"", last_message,
                  needle);
    messages = 0;
}

START_TEST(test_restart_continues_bit_for_bit)
{
    const pp_model model = k_models[_i % 2];
    const int jointed = _i >= 2, variant = jointed ? 3 : 0;
    static run ref;
    memset(&ref, 0, sizeof ref);
    body_state saved[BOXES], reset[BOXES];
    heap a;
    heap_build(&a, model, variant);
    int contacts = 0;
    for (int step = 0; step < STEPS; ++step) {
        if (step == SAVE_AT) {
            save_bodies(a.bodies, BOXES, saved);
            ck_assert_int_eq(pp_world_save_warm_start(a.pw, &ref.warm_start), PP_OK);
            /* set again: the quaternions' bits as a restart sets them */
            restore_bodies(a.bodies, BOXES, saved);
            save_bodies(a.bodies, BOXES, reset);
        }
        ck_assert_int_eq(pp_world_step(a.pw, H), PP_OK);
        save_bodies(a.bodies, BOXES, ref.after[step]);
        ref.stats[step] = *pp_world_get_stats(a.pw);
        ck_assert_int_eq(ref.stats[step].lcp_fallback, 0);
        contacts = ref.stats[step].contacts;
    }
    heap_destroy(&a);
    ck_assert_int_ge(contacts, 4 * 7); /* face contacts: ground and the boxes on each other */
    /* the save is text that holds records of the heap's sets */
    ck_assert_msg(strstr(ref.warm_start, "pegplus-warm-start 1\n") == ref.warm_start, "header");
    ck_assert_ptr_nonnull(strstr(ref.warm_start, model == PP_MODEL_PEG ? "model peg\n"
                                                                       : "model standard\n"));
    /* the geoms as pegplus first saw them: the space's order, the creation order reversed */
    ck_assert_ptr_nonnull(strstr(ref.warm_start, "\ngeoms 7\ndBoxClass\n"));
    ck_assert_ptr_nonnull(strstr(ref.warm_start, jointed ? "dBoxClass\ndPlaneClass\njoints 1\n"
                                                         : "dBoxClass\ndPlaneClass\njoints 0\n"));
    ck_assert_ptr_nonnull(strstr(ref.warm_start, "\ne g"));
    if (jointed) ck_assert_ptr_nonnull(strstr(ref.warm_start, "\ne j0 - "));

    /* the restart with the warm start: the uninterrupted run's steps, the first one warm */
    heap b;
    heap_build(&b, model, variant);
    restore_bodies(b.bodies, BOXES, saved);
    body_state restored[BOXES];
    save_bodies(b.bodies, BOXES, restored);
    ck_assert_msg(!memcmp(restored, reset, sizeof reset),
                  "the bodies' state did not restore bit for bit");
    ck_assert_int_eq(pp_world_restore_warm_start(b.pw, ref.warm_start), PP_OK);
    /* saved again, the restored warm start is the same text */
    char *again = NULL;
    ck_assert_int_eq(pp_world_save_warm_start(b.pw, &again), PP_OK);
    ck_assert_str_eq(again, ref.warm_start);
    free(again);
    step_checked(&b, &ref, SAVE_AT, "restored");
    const pp_step_stats *first = &ref.stats[SAVE_AT];
    ck_assert_int_gt(first->lcp_solves, 0);
    ck_assert_int_eq(first->lcp_warm_solves, first->lcp_solves);

    /* refused warm starts change nothing: b steps on as the uninterrupted run */
    char *sphere = other_warm_start(model, 1), *extra = other_warm_start(model, 2);
    char *other_model =
        other_warm_start(model == PP_MODEL_PEG ? PP_MODEL_STANDARD : PP_MODEL_PEG, 0);
    refused(&b, sphere, "geom 2 (in the order pegplus first saw them) is a dSphereClass in the "
                        "warm start, a dBoxClass");
    refused(&b, extra, "a world of 8 geoms, this world has 7");
    refused(&b, other_model, model == PP_MODEL_PEG ? "saved under the standard model"
                                                   : "saved under the peg model");
    char *cut = strdup(ref.warm_start);
    cut[strlen(cut) / 2] = '\0';
    refused(&b, cut, "not a pegplus-warm-start 1 text");
    /* a record larger than its line is refused before memory is asked for it (a size of
     * 1.5e9 bytes once hung the restore in pp_grow), and counts stay on their lines */
    char *huge = forged_size(ref.warm_start, "1500000000");
    char *longer = forged_size(ref.warm_start, "1024");
    char *split = count_on_next_line(ref.warm_start);
    refused(&b, huge, "not a pegplus-warm-start 1 text");
    refused(&b, longer, "not a pegplus-warm-start 1 text");
    refused(&b, split, "not a pegplus-warm-start 1 text");
    free(huge);
    free(longer);
    free(split);
    if (jointed) {
        char *unjointed = other_warm_start(model, 0);
        refused(&b, unjointed, "a world of 0 joints, this world has 1");
        free(unjointed);
    }
    free(cut);
    free(sphere);
    free(extra);
    free(other_model);
    for (int step = SAVE_AT + 1; step < STEPS; ++step) step_checked(&b, &ref, step, "restored");
    heap_destroy(&b);

    /* the restart without it: the first step starts cold */
    heap c;
    heap_build(&c, model, variant);
    restore_bodies(c.bodies, BOXES, saved);
    ck_assert_int_eq(pp_world_step(c.pw, H), PP_OK);
    const pp_step_stats *cold = pp_world_get_stats(c.pw);
    ck_assert_int_lt(cold->lcp_warm_solves, cold->lcp_solves);
    ck_assert_int_gt(cold->lcp_pivots, first->lcp_pivots);
    body_state cold_after[BOXES];
    save_bodies(c.bodies, BOXES, cold_after);
    ck_assert_msg(memcmp(cold_after, ref.after[SAVE_AT], sizeof cold_after) != 0,
                  "the cold restart ended where the warm one did: the heap's LCP no longer "
                  "depends on the start basis, and bit identity shows nothing");
    printf("check_warm_start_state: %s%s, %d steps, saved at step %d (%d LCP unknowns): restarted "
           "with the warm start, %d solves, %d warm, %d pivots, then bit for bit; without it %d "
           "solves, %d warm, %d pivots\n",
           pp_model_name(model), jointed ? " with a motor hinge" : "", STEPS, SAVE_AT,
           first->lcp_size,
           first->lcp_solves, first->lcp_warm_solves, first->lcp_pivots, cold->lcp_solves,
           cold->lcp_warm_solves, cold->lcp_pivots);
    heap_destroy(&c);
    free(ref.warm_start);
}
END_TEST

/* heap20.state's sections: its first step under `model`, from the file's poses, with the
 * model's own section restored (restore 1) or cold (0). The other model's section is refused
 * by this world and changes nothing. Returns the step's pivots. */
static int heap20_first_step(const char *path, pp_model model, int restore)
{
    pp_scene scene;
    pp_scene_state st;
    int script_steps = 0;
    pp_world *pw = pp_it_heap_from_state(&scene, &st, &script_steps, path, "heap20", 20, model);
    const pp_model other = model == PP_MODEL_PEG ? PP_MODEL_STANDARD : PP_MODEL_PEG;
    const char *mine = pp_scene_state_warm_start(&st, pp_model_name(model));
    const char *theirs = pp_scene_state_warm_start(&st, pp_model_name(other));
    ck_assert_ptr_nonnull(mine);
    ck_assert_ptr_nonnull(theirs);
    messages = 0;
    ck_assert_int_eq(pp_world_restore_warm_start(pw, theirs), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(messages, 1);
    ck_assert_msg(strstr(last_message, other == PP_MODEL_PEG ? "saved under the peg model"
                                                             : "saved under the standard model"),
                  "%s", last_message);
    messages = 0;
    if (restore) ck_assert_int_eq(pp_world_restore_warm_start(pw, mine), PP_OK);
    if (scene.before_step) scene.before_step(&scene, script_steps);
    ck_assert_int_eq(pp_world_step(pw, st.h), PP_OK);
    const pp_step_stats *t = pp_world_get_stats(pw);
    const int pivots = t->lcp_pivots;
    if (restore) {
        ck_assert_int_eq(t->lcp_fallback, 0);
        ck_assert_int_eq(t->lcp_warm_solves, t->lcp_solves);
        ck_assert_int_eq(pivots, 0);
        ck_assert_double_lt(pp_scene_fastest_body(&scene), 1e-6);
    } else {
        ck_assert_int_lt(t->lcp_warm_solves, t->lcp_solves);
    }
    pp_world_destroy(pw);
    pp_scene_destroy(&scene);
    pp_scene_state_free(&st);
    return pivots;
}

START_TEST(test_heap20_state_starts_warm)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/heap20.state", PP_STATES_DIR);
    int pivots[2][2];
    for (int m = 0; m < 2; ++m)
        for (int restore = 0; restore < 2; ++restore)
            pivots[m][restore] = heap20_first_step(path, k_models[m], restore);
    ck_assert_int_gt(pivots[0][0], 100);
    ck_assert_int_gt(pivots[1][0], 100);
    /* the sections are written back as they were read (state.h): two, so version 2 */
    pp_scene_state read, back;
    char why[4400], copy[] = "/tmp/pp_warm_state_XXXXXX", first[64] = "";
    ck_assert_int_eq(pp_scene_state_read(&read, path, why, sizeof why), 0);
    ck_assert_int_eq(read.warm_count, 2);
    int fd = mkstemp(copy);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(pp_scene_state_write(&read, copy, read.comments, why, sizeof why), 0);
    ck_assert_msg(pp_scene_state_read(&back, copy, why, sizeof why) == 0, "%s", why);
    FILE *f = fopen(copy, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(first, sizeof first, f));
    fclose(f);
    remove(copy);
    ck_assert_str_eq(first, "pegplus-state 2\n");
    ck_assert_int_eq(back.warm_count, 2);
    for (int w = 0; w < 2; ++w) {
        ck_assert_str_eq(back.warm[w].model, read.warm[w].model);
        ck_assert_str_eq(back.warm[w].text, read.warm[w].text);
    }
    ck_assert_str_eq(pp_scene_state_warm_start(&back, "standard"),
                     pp_scene_state_warm_start(&read, "standard"));
    ck_assert_str_eq(pp_scene_state_warm_start(&back, "peg"),
                     pp_scene_state_warm_start(&read, "peg"));
    ck_assert_str_eq(back.comments, read.comments);
    ck_assert_int_eq(back.count, read.count);
    ck_assert(!memcmp(back.pose, read.pose, 7 * sizeof(double) * (size_t)read.count));
    pp_scene_state_free(&read);
    pp_scene_state_free(&back);
    printf("check_warm_start_state: heap20.state's first step: standard %d pivots cold, %d with "
           "its section; PEG %d cold, %d with its section\n", pivots[0][0], pivots[0][1],
           pivots[1][0], pivots[1][1]);
}
END_TEST

/* The number of entry lines of a warm-start text that hold answers (answer kind > 0). */
static int answer_entries(const char *text)
{
    int n = 0;
    for (const char *l = strstr(text, "\ne "); l; l = strstr(l + 1, "\ne ")) {
        int answer = 0, fields[7];
        char a[16], b[16];
        if (sscanf(l + 1, "e %15s %15s %d %d %d %d %d %d %d", a, b, &fields[0], &fields[1],
                   &fields[2], &fields[3], &fields[4], &fields[5], &answer) == 9 && answer > 0)
            ++n;
    }
    return n;
}

/* The sticking solve's kept answers (doubles, written as hex floats) round-trip too: the
 * settled heap of 50 boxes (one island of ~2 000 unknowns, which the sticking solve takes) under
 * the standard model, saved after 2 steps and restarted in a fresh world, steps on bit for
 * bit (the warm start holds 662 answer records; restored without them, step 2 differs). */
START_TEST(test_heap50_answers_round_trip)
{
    enum { RUN = 4, AT = 2, N = 50 };
    char path[4096];
    snprintf(path, sizeof path, "%s/heap50.state", PP_STATES_DIR);
    body_state ref[RUN][N];
    pp_step_stats ref_stats[RUN];
    body_state saved[N];
    char *text = NULL;
    for (int restart = 0; restart < 2; ++restart) {
        pp_scene scene;
        pp_scene_state st;
        int script_steps = 0;
        pp_world *pw = pp_it_heap_from_state(&scene, &st, &script_steps, path, "heap50", N,
                                             PP_MODEL_STANDARD);
        ck_assert_int_eq(scene.body_count, N);
        if (restart) {
            restore_bodies(scene.bodies, N, saved);
            ck_assert_int_eq(pp_world_restore_warm_start(pw, text), PP_OK);
        }
        for (int step = restart ? AT : 0; step < RUN; ++step) {
            if (!restart && step == AT) {
                save_bodies(scene.bodies, N, saved);
                ck_assert_int_eq(pp_world_save_warm_start(pw, &text), PP_OK);
                /* set again: the quaternions' bits as a restart sets them */
                restore_bodies(scene.bodies, N, saved);
            }
            if (scene.before_step) scene.before_step(&scene, script_steps + step);
            ck_assert_int_eq(pp_world_step(pw, st.h), PP_OK);
            const pp_step_stats *t = pp_world_get_stats(pw);
            body_state now[N];
            save_bodies(scene.bodies, N, now);
            if (!restart) {
                memcpy(ref[step], now, sizeof now);
                ref_stats[step] = *t;
                continue;
            }
            ck_assert_msg(!memcmp(now, ref[step], sizeof now), "heap50: step %d differs", step);
            ck_assert_int_eq(t->lcp_pivots, ref_stats[step].lcp_pivots);
            ck_assert_int_eq(t->lcp_warm_solves, ref_stats[step].lcp_warm_solves);
            ck_assert_int_eq(t->load_shared, ref_stats[step].load_shared);
        }
        pp_world_destroy(pw);
        pp_scene_destroy(&scene);
        pp_scene_state_free(&st);
    }
    const int answers = answer_entries(text);
    printf("check_warm_start_state: heap50, standard, restarted at step %d: bit for bit; the "
           "warm start held %d answer records; step %d: %d solves, %d warm, %d pivots, %d "
           "load-shared\n", AT, answers, AT, ref_stats[AT].lcp_solves,
           ref_stats[AT].lcp_warm_solves, ref_stats[AT].lcp_pivots, ref_stats[AT].load_shared);
    ck_assert_int_gt(answers, 0);
    free(text);
}
END_TEST

static Suite *warm_start_state_suite(void)
{
    Suite *s = suite_create("warm_start_state");
    TCase *tc = tcase_create("restart");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_restart_continues_bit_for_bit, 0, 4);
    tcase_add_test(tc, test_heap20_state_starts_warm);
    tcase_add_test(tc, test_heap50_answers_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(warm_start_state_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
