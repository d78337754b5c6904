/*
 * Trajectories (examples/scenes/trajectory.h, docs/trajectory.md): a heap stepped by the
 * standard model, whose boxes are dropped mid-run, written plain and gzip-compressed with
 * decimation 7 and read back: the frames are steps 0, 7, 14, ... and the last, each frame's
 * poses are the bodies' poses at that step bit for bit, the BODY records come before the
 * frames that need them and describe the scene's geoms; a column of boxes built overlapping
 * by 1 cm reports its penetrating contacts at that depth; hulls are written as their exact
 * polytopes; a truncated file is an error, not a crash.
 *
 * The files are left in PP_TRAJ_OUT_DIR for the viewer's browser test (examples/viewer).
 */
#include "pegplus/geometry.h"
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "scripted.h"
#include "trajectory.h"

#include <check.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "it_common.h"

#ifndef PP_TRAJ_OUT_DIR
#define PP_TRAJ_OUT_DIR "."
#endif

static const double DEPTH_TOL = 1e-9; /* m: dCollide's box depths against the built overlap */

enum { HEAP_STEPS = 40, DECIMATION = 7 };

static void out_path(char *buf, size_t size, const char *name)
{
    mkdir(PP_TRAJ_OUT_DIR, 0777); /* EEXIST is fine; a real failure shows at pp_traj_open */
    snprintf(buf, size, "%s/%s", PP_TRAJ_OUT_DIR, name);
}

static pp_world *attach_world(pp_scene *s, pp_model model)
{
    pp_config config = pp_config_default();
    config.model = model;
    if (s->configure) s->configure(s, &config);
    pp_world *world = NULL;
    ck_assert_int_eq(pp_world_create(s->world, s->space, &config, &world), PP_OK);
    s->pegplus = world;
    return world;
}

/* Steps the scene, writing both files at once; records what every frame must hold. */
typedef struct expected_frame {
    int step, body_count;
    double t;
    double *poses;
} expected_frame;

static int run_heap(const char *path, const char *gz_path, expected_frame *expect, double h)
{
    pp_scene s;
    pp_scene_heap(&s, 20, 3, h);
    pp_world *pw = attach_world(&s, PP_MODEL_STANDARD);
    pp_traj_writer *w = pp_traj_open(path, &s, "standard", h, DECIMATION);
    pp_traj_writer *wz = pp_traj_open(gz_path, &s, "standard", h, DECIMATION);
    ck_assert(w && wz);
    int frames = 0;
    for (int step = 0; step <= HEAP_STEPS; ++step) {
        if (step > 0) ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        int last = step == HEAP_STEPS;
        double t = step * h;
        ck_assert_int_eq(pp_traj_frame(w, &s, step, t, last), 0);
        ck_assert_int_eq(pp_traj_frame(wz, &s, step, t, last), 0);
        if (step % DECIMATION == 0 || last) {
            expected_frame *e = &expect[frames++];
            e->step = step;
            e->t = t;
            e->body_count = s.body_count;
            e->poses = malloc(sizeof(double) * 7 * (size_t)(s.body_count ? s.body_count : 1));
            for (int i = 0; i < s.body_count; ++i) {
                memcpy(e->poses + 7 * i, dBodyGetPosition(s.bodies[i]), 3 * sizeof(double));
                memcpy(e->poses + 7 * i + 3, dBodyGetQuaternion(s.bodies[i]), 4 * sizeof(double));
            }
        }
        if (!last && s.before_step) s.before_step(&s, step);
    }
    ck_assert_int_eq(pp_traj_close(w), 0);
    ck_assert_int_eq(pp_traj_close(wz), 0);
    /* boxes were dropped mid-run: the last frame has more bodies than the first */
    ck_assert_int_eq(expect[0].body_count, 0);
    ck_assert_int_gt(expect[frames - 1].body_count, 2);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
    return frames;
}

static void check_heap_file(const char *path, const expected_frame *expect, int frames, double h)
{
    pp_traj t;
    ck_assert_int_eq(pp_traj_load(path, &t), 0);
    ck_assert_str_eq(t.scene, "heap");
    ck_assert_str_eq(t.model, "standard");
    ck_assert(t.h == h);
    ck_assert_int_eq(t.decimation, DECIMATION);
    ck_assert_int_eq(t.static_geom_count, 5); /* the plane and the bin's four walls */
    ck_assert_int_eq(t.frame_count, frames);
    ck_assert_int_eq(t.body_count, expect[frames - 1].body_count);
    for (int i = 0; i < t.body_count; ++i) {
        ck_assert_str_eq(t.body_geom_class[i], "box");
        ck_assert_int_eq(t.body_geom_count[i], 1);
    }
    for (int f = 0; f < frames; ++f) {
        /* 0, 7, 14, ..., 35, then the last step 40 */
        ck_assert_int_eq(t.steps[f], f < frames - 1 ? DECIMATION * f : HEAP_STEPS);
        ck_assert_int_eq(t.steps[f], expect[f].step);
        ck_assert(t.times[f] == expect[f].t);
        ck_assert_int_eq(t.body_count_at_frame[f], expect[f].body_count);
        /* the poses are the ODE bodies' own doubles, bit for bit */
        ck_assert(!memcmp(t.poses[f], expect[f].poses, sizeof(double) * 7 * (size_t)expect[f].body_count));
    }
    pp_traj_free(&t);
}

START_TEST(test_heap_roundtrip)
{
    const double h = 0.05; /* a box is due every 8 steps: 5 boxes in 40 steps */
    char path[512], gz_path[512];
    out_path(path, sizeof path, "heap-standard.pptraj");
    out_path(gz_path, sizeof gz_path, "heap-standard.pptraj.gz");
    expected_frame expect[HEAP_STEPS / DECIMATION + 2];
    int frames = run_heap(path, gz_path, expect, h);
    ck_assert_int_eq(frames, HEAP_STEPS / DECIMATION + 2);
    check_heap_file(path, expect, frames, h);
    check_heap_file(gz_path, expect, frames, h);
    /* the gzip file is smaller than the plain one and starts with gzip's magic */
    struct stat plain, gz;
    ck_assert_int_eq(stat(path, &plain), 0);
    ck_assert_int_eq(stat(gz_path, &gz), 0);
    ck_assert_int_lt(gz.st_size, plain.st_size);
    FILE *f = fopen(gz_path, "rb");
    ck_assert(f);
    ck_assert_int_eq(fgetc(f), 0x1f);
    ck_assert_int_eq(fgetc(f), 0x8b);
    fclose(f);
    for (int i = 0; i < frames; ++i) free(expect[i].poses);
}
END_TEST

/* Copies the first `bytes` bytes of src to dst. */
static void copy_prefix(const char *src, const char *dst, long bytes)
{
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    ck_assert(in && out);
    for (long k = 0; k < bytes; ++k) {
        int c = fgetc(in);
        ck_assert_int_ne(c, EOF);
        fputc(c, out);
    }
    fclose(in);
    ck_assert_int_eq(fclose(out), 0);
}

START_TEST(test_truncated_is_an_error)
{
    const double h = 0.05;
    char path[512], gz_path[512], cut[512];
    out_path(path, sizeof path, "truncated-source.pptraj");
    out_path(gz_path, sizeof gz_path, "truncated-source.pptraj.gz");
    out_path(cut, sizeof cut, "truncated.pptraj");
    expected_frame expect[HEAP_STEPS / DECIMATION + 2];
    int frames = run_heap(path, gz_path, expect, h);
    for (int i = 0; i < frames; ++i) free(expect[i].poses);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    /* cut inside the last FRAME, inside a record header, inside the magic */
    const long cuts[] = {(long)st.st_size - 5, (long)st.st_size - 50, 12, 4};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; ++k) {
        copy_prefix(path, cut, cuts[k]);
        pp_traj t;
        ck_assert_int_eq(pp_traj_load(cut, &t), -1);
        ck_assert_int_eq(t.frame_count, 0); /* left empty */
        pp_traj_free(&t);
    }
    /* a gzip stream cut short */
    ck_assert_int_eq(stat(gz_path, &st), 0);
    out_path(cut, sizeof cut, "truncated.pptraj.gz");
    copy_prefix(gz_path, cut, (long)st.st_size / 2);
    pp_traj t;
    ck_assert_int_eq(pp_traj_load(cut, &t), -1);
    pp_traj_free(&t);
    /* a missing file */
    out_path(cut, sizeof cut, "no-such-file.pptraj");
    remove(cut);
    ck_assert_int_eq(pp_traj_load(cut, &t), -1);
}
END_TEST

/* Three unit boxes in a column built 1 cm into each other and into the plane (gap -0.01):
 * frame 0's penetrating contacts are plane-box 0, box 0-box 1 and box 1-box 2, each 1 cm deep.
 * Stock ODE then pushes them apart; the file is the viewer test's second run. */
START_TEST(test_overlap_contacts)
{
    const double h = 0.01, gap = -0.01;
    const int steps = 30;
    pp_scene s;
    pp_scene_box_column(&s, 3, gap);
    pp_world *pw = attach_world(&s, PP_MODEL_ODE);
    char path[512];
    out_path(path, sizeof path, "column-overlap-ode.pptraj");
    pp_traj_writer *w = pp_traj_open(path, &s, "ode", h, DECIMATION);
    ck_assert(w);
    for (int step = 0; step <= steps; ++step) {
        if (step > 0) ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        ck_assert_int_eq(pp_traj_frame(w, &s, step, step * h, step == steps), 0);
    }
    ck_assert_int_eq(pp_traj_close(w), 0);
    double final_z = dBodyGetPosition(s.bodies[2])[2];
    pp_world_destroy(pw);
    pp_scene_destroy(&s);

    pp_traj t;
    ck_assert_int_eq(pp_traj_load(path, &t), 0);
    ck_assert_int_eq(t.body_count, 3);
    ck_assert_int_eq(t.steps[t.frame_count - 1], steps);
    ck_assert(t.poses[t.frame_count - 1][7 * 2 + 2] == final_z);
    /* frame 0: the three overlaps, every contact 1 cm deep */
    int pairs[3] = {0};
    ck_assert_int_gt(t.contact_count[0], 0);
    for (int c = 0; c < t.contact_count[0]; ++c) {
        const pp_traj_contact *k = &t.contacts[0][c];
        int lo = k->body_a < k->body_b ? k->body_a : k->body_b;
        int hi = k->body_a < k->body_b ? k->body_b : k->body_a;
        ck_assert_int_eq(hi, lo + 1); /* neighbours in the column; -1 is the plane */
        ++pairs[hi];
        ck_assert_msg(fabs(k->depth - (-gap)) < DEPTH_TOL, "contact %d depth %.12g", c, k->depth);
        /* the point lies in the overlap slab between the two: box k spans z in
         * [k (1 + gap) + gap, ...], its bottom face at z_b = k (1 + gap) + gap */
        double bottom = hi * (1 + gap) + gap;
        ck_assert_double_ge(k->point[2], bottom - DEPTH_TOL);
        ck_assert_double_le(k->point[2], bottom - gap + DEPTH_TOL);
    }
    for (int k = 0; k < 3; ++k) ck_assert_int_gt(pairs[k], 0);
    pp_traj_free(&t);
}
END_TEST

/* Hulls made by pp_convex_create are written as their exact polytopes (vertices and faces). */
START_TEST(test_convex_hulls)
{
    const double h = 0.01;
    pp_scene s;
    ck_assert_int_eq(pp_scene_hulls(&s, 25.0, 1), PP_OK);
    pp_world *pw = attach_world(&s, PP_MODEL_ODE); /* the hulls are pegplus's in any model */
    char path[512];
    out_path(path, sizeof path, "hulls-ode.pptraj.gz");
    pp_traj_writer *w = pp_traj_open(path, &s, "ode", h, 1);
    ck_assert(w);
    const int steps = 3;
    for (int step = 0; step <= steps; ++step) {
        if (step > 0) ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        ck_assert_int_eq(pp_traj_frame(w, &s, step, step * h, step == steps), 0);
        if (step < steps) s.before_step(&s, step);
    }
    ck_assert_int_eq(pp_traj_close(w), 0);
    ck_assert_int_eq(s.body_count, 2);

    pp_traj t;
    ck_assert_int_eq(pp_traj_load(path, &t), 0);
    ck_assert_int_eq(t.body_count, 2);
    ck_assert_int_eq(t.frame_count, steps + 1);
    ck_assert_int_eq(t.body_count_at_frame[0], 0); /* made by the script before step 0 */
    ck_assert_int_eq(t.body_count_at_frame[1], 2);
    for (int i = 0; i < 2; ++i) {
        const pp_polytope *p = pp_convex_polytope(pw, s.geoms[i]);
        ck_assert(p);
        ck_assert_str_eq(t.body_geom_class[i], "convex");
        json_object *body = json_tokener_parse(t.body_records[i]);
        ck_assert(body);
        json_object *geom = json_object_array_get_idx(json_object_object_get(body, "geoms"), 0);
        json_object *vertices = json_object_object_get(geom, "vertices");
        json_object *faces = json_object_object_get(geom, "faces");
        ck_assert_int_eq((int)json_object_array_length(vertices), p->vertex_count);
        ck_assert_int_eq((int)json_object_array_length(faces), p->face_count);
        for (int v = 0; v < p->vertex_count; ++v)
            for (int k = 0; k < 3; ++k)
                ck_assert(json_object_get_double(json_object_array_get_idx(
                              json_object_array_get_idx(vertices, v), k)) == p->vertices[3 * v + k]);
        for (int f = 0; f < p->face_count; ++f) {
            json_object *face = json_object_array_get_idx(faces, f);
            ck_assert_int_eq((int)json_object_array_length(face), p->face_first[f + 1] - p->face_first[f]);
            for (int j = p->face_first[f]; j < p->face_first[f + 1]; ++j)
                ck_assert_int_eq(json_object_get_int(json_object_array_get_idx(face, j - p->face_first[f])),
                                 p->face_vertices[j]);
        }
        json_object_put(body);
    }
    pp_traj_free(&t);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("trajectory");
    TCase *tc = tcase_create("pptraj");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_heap_roundtrip);
    tcase_add_test(tc, test_truncated_is_an_error);
    tcase_add_test(tc, test_overlap_contacts);
    tcase_add_test(tc, test_convex_hulls);
    suite_add_tcase(suite, tc);
    return pp_it_run(suite);
}
