/* The scene catalogue (catalog.h): every shared scene by name, and scene files. */
#include "catalog.h"

#include "jointed.h"
#include "scene_file.h"
#include "scripted.h"
#include "state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- scenes made here */

/* Newton's cradle (PLUS Ex. 3, as check_impact_scenes): 5 frictionless 1 kg balls of r = 0.25 m
 * in a row, touching, no gravity; the first arrives at 2 m/s (it starts 0.013 m away).
 * Elastic (bounce 1): the last ball should leave at 2 m/s and the others stop. */
static void cradle_configure(const pp_scene *s, pp_config *c)
{
    (void)s;
    c->surface.mu = 0.0;
    c->surface.bounce = 1.0;
}

static void build_cradle(pp_scene *s)
{
    pp_scenes_init_ode();
    memset(s, 0, sizeof *s);
    s->name = "cradle";
    s->world = dWorldCreate();
    s->space = dHashSpaceCreate(0);
    dWorldSetGravity(s->world, 0, 0, 0);
    for (int i = 0; i < 5; ++i) {
        double x = i == 0 ? -0.013 : 0.5 * i;
        pp_scene_add_sphere(s, 0.25, 1.0, (const double[3]){x, 0, 1});
    }
    dBodySetLinearVel(s->bodies[0], 2.0, 0, 0);
    s->configure = cradle_configure;
}

/* Bouncing ball (docs/references.md): r = 0.1 m, 1 kg, frictionless, bottom 1 m above the plane,
 * restitution 0.5, capture below 0.01 m/s: apex heights 0.25^n m. */
static void bounce_configure(const pp_scene *s, pp_config *c)
{
    (void)s;
    c->surface.mu = 0.0;
    c->surface.bounce = 0.5;
    c->surface.bounce_vel = 0.01;
}

static void build_bounce(pp_scene *s)
{
    pp_scenes_init_ode();
    memset(s, 0, sizeof *s);
    s->name = "bounce";
    s->world = dWorldCreate();
    s->space = dHashSpaceCreate(0);
    dWorldSetGravity(s->world, 0, 0, -9.81);
    s->ground = dCreatePlane(s->space, 0, 0, 1, 0);
    pp_scene_add_sphere(s, 0.1, 1.0, (const double[3]){0, 0, 1.1});
    s->configure = bounce_configure;
}

/* The pouring scene as a pp_scene whose script drops its bodies on schedule: `pour` first, so
 * the pp_scene pointer the script gets is this struct's. */
typedef struct catalog_pour {
    pp_pour_scene pour;
    double h;
    int next_drop;
} catalog_pour;

static void pour_before_step(pp_scene *scene, int step)
{
    catalog_pour *cp = (catalog_pour *)(void *)scene;
    while (cp->next_drop < PP_POUR_DROPS && step >= pp_pour_drop_step(cp->next_drop, cp->h)) {
        pp_status st = pp_pour_scene_drop(&cp->pour, scene->pegplus, cp->next_drop);
        if (st != PP_OK)
            pp_log(PP_LOG_ERROR, "pour3d: body %d not dropped (%s)", cp->next_drop, pp_status_string(st));
        cp->next_drop++;
    }
}

/* ------------------------------------------------------------------------ the table */

static const pp_catalog_entry ENTRIES[] = {
    {"pour3d", "PEG paper's pouring: 10 random 15-point hulls dropped into a box, frictionless (--mu) [seed]", 0.01, 5.0, NULL},
    {"pour3d-icosahedra", "the pouring scene with the authors' icosahedra", 0.01, 5.0, NULL},
    {"column", "10 unit boxes stacked exactly touching on the plane", 0.01, 2.0, NULL},
    {"heap", "20 random boxes poured into one pile, from its settled state (heap20.state)", 0.01, 1.0, "heap20"},
    {"pile", "30 random boxes in a loose heap, from its settled state (pile30.state)", 0.01, 1.0, "pile30"},
    {"cradle", "Newton's cradle: 5 balls, the first at 2 m/s, elastic, frictionless, no gravity", 0.01, 0.5, NULL},
    {"bounce", "ball dropped 1 m onto the plane, restitution 0.5, frictionless", 0.001, 2.0, NULL},
    {"incline", "unit box at rest on a plane inclined by 0.3 rad (mu 0.5 holds it)", 0.01, 1.0, NULL},
    {"islands", "10 separate stacks of 3 boxes, exactly touching, at rest", 0.01, 1.0, NULL},
    {"rod", "Stewart-Trinkle 1996 spinning rod falling onto the table", 0.01, 1.0, NULL},
    {"boxstack", "ODE demo_boxstack: 48 boxes/spheres/capsules/hulls dropped every 0.6 s [seed]", 0.02, 10.0, NULL},
    {"convex", "ODE-demo-like ball of 90 convex cells dropped from 4.2 m [seed]", 1.0 / 240.0, 2.0, NULL},
    {"crash", "ODE demo_crash: a wall of 75 bricks hit by a 10 kg cannon ball", 0.05, 5.0, NULL},
    {"gripper", "slider-motor fingers squeeze a cube, their carrier lifts it 0.2 m", 0.01, 2.5, NULL},
    {"car", "demo_crash's car (hinge2 wheels, rear drive) pushes a row of 3 boxes", 0.01, 3.0, NULL},
    {"arm", "6-joint arm with a 2-finger gripper picks a cube off a table", 0.01, 5.0, NULL},
};
enum { ENTRY_COUNT = sizeof ENTRIES / sizeof ENTRIES[0] };

int pp_catalog_count(void) { return ENTRY_COUNT; }
const pp_catalog_entry *pp_catalog_get(int i) { return i >= 0 && i < ENTRY_COUNT ? &ENTRIES[i] : NULL; }

const pp_catalog_entry *pp_catalog_find(const char *name)
{
    for (int i = 0; name && i < ENTRY_COUNT; ++i)
        if (!strcmp(ENTRIES[i].name, name)) return &ENTRIES[i];
    return NULL;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

pp_status pp_catalog_build(pp_catalog_scene *cs, const char *name, double h, unsigned long long seed,
                           char *why, size_t why_size)
{
    memset(cs, 0, sizeof *cs);
    if (why && why_size) why[0] = '\0';
    if (ends_with(name, ".json")) {
        pp_scene *s = calloc(1, sizeof *s);
        if (!s) return PP_ERR_NO_MEMORY;
        pp_status st = pp_scene_file_load(s, name, why, why_size);
        if (st != PP_OK) {
            free(s);
            return st;
        }
        cs->scene = s;
        cs->owner = s;
        return PP_OK;
    }
    const pp_catalog_entry *e = pp_catalog_find(name);
    if (!e) {
        if (why) snprintf(why, why_size, "unknown scene '%s' (--list-scenes; or a scene file NAME.json)", name);
        return PP_ERR_INVALID_ARGUMENT;
    }
    cs->entry = e;
    if (!strncmp(name, "pour3d", 6)) {
        catalog_pour *cp = calloc(1, sizeof *cp);
        if (!cp) return PP_ERR_NO_MEMORY;
        pp_status st = pp_pour_scene_create(&cp->pour, strcmp(name, "pour3d") ? PP_POUR_ICOSAHEDRA : PP_POUR_RANDOM_HULLS, seed);
        if (st != PP_OK) {
            free(cp);
            if (why) snprintf(why, why_size, "pour3d: %s", pp_status_string(st));
            return st;
        }
        cp->h = h;
        cp->pour.scene.before_step = pour_before_step;
        cs->scene = &cp->pour.scene;
        cs->pour = &cp->pour;
        cs->owner = cp;
        return PP_OK;
    }
    pp_scene *s = calloc(1, sizeof *s);
    if (!s) return PP_ERR_NO_MEMORY;
    unsigned useed = (unsigned)seed;
    pp_status st = PP_OK;
    if (!strcmp(name, "column")) pp_scene_box_column(s, 10, 0.0);
    else if (!strcmp(name, "heap")) pp_scene_heap(s, 20, useed, h);
    else if (!strcmp(name, "pile")) pp_scene_box_pile(s, 30, useed);
    else if (!strcmp(name, "cradle")) build_cradle(s);
    else if (!strcmp(name, "bounce")) build_bounce(s);
    else if (!strcmp(name, "incline")) pp_scene_incline(s, 0.3);
    else if (!strcmp(name, "islands")) pp_scene_islands(s, 10, 0.0, useed);
    else if (!strcmp(name, "rod")) pp_scene_st96_rod(s, 0.9908);
    else if (!strcmp(name, "boxstack")) st = pp_scene_boxstack(s, seed, h);
    else if (!strcmp(name, "convex")) st = pp_scene_convex_ball(s, seed);
    else if (!strcmp(name, "crash")) pp_scene_crash(s, h);
    else if (!strcmp(name, "gripper")) pp_scene_gripper(s, h);
    else if (!strcmp(name, "car")) pp_scene_car(s, h);
    else if (!strcmp(name, "arm")) pp_scene_arm(s, h);
    if (st != PP_OK) {
        free(s);
        if (why) snprintf(why, why_size, "%s: %s", name, pp_status_string(st));
        return st;
    }
    cs->scene = s;
    cs->owner = s;
    return PP_OK;
}

int pp_catalog_start(pp_catalog_scene *cs, pp_world *world, const char *states_dir, double h,
                     char *why, size_t why_size)
{
    cs->scene->pegplus = world;
    cs->script_offset = 0;
    if (!cs->entry || !cs->entry->state || !states_dir || !*states_dir) return 0;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.state", states_dir, cs->entry->state);
    pp_scene_state st;
    int r = pp_scene_state_read(&st, path, why, why_size);
    if (r != 0) return -1;
    /* the state names the benchmark's scene (heap20); the builder is the same */
    snprintf(st.scene, sizeof st.scene, "%s", cs->entry->state);
    r = pp_scene_state_apply(cs->scene, cs->entry->state, &st, h, &cs->script_offset, why, why_size);
    pp_scene_state_free(&st);
    return r;
}

void pp_catalog_before_step(pp_catalog_scene *cs, int step)
{
    if (cs->scene->before_step) cs->scene->before_step(cs->scene, cs->script_offset + step);
}

const pp_polytope *pp_catalog_polytope(pp_catalog_scene *cs, dGeomID g)
{
    if (cs->pour) {
        for (int i = 0; i < PP_POUR_BLOCKS; ++i)
            if (cs->pour->blocks[i] == g) return cs->pour->block_polytopes[i];
        for (int i = 0; i < cs->pour->scene.body_count; ++i)
            if (cs->pour->scene.geoms[i] == g) return cs->pour->body_polytopes[i];
    }
    if (pp_scene_file_is(cs->scene)) {
        const pp_polytope *p = pp_scene_file_polytope(cs->scene, g);
        if (p) return p;
    }
    if (dGeomGetClass(g) == dConvexClass) return pp_convex_polytope(cs->scene->pegplus, g);
    if (dGeomGetClass(g) != dBoxClass) return NULL;
    for (int i = 0; i < cs->box_count; ++i)
        if (cs->box_geoms[i] == g) return cs->box_polytopes[i];
    if (cs->box_count == cs->box_capacity) {
        int capacity = cs->box_capacity ? 2 * cs->box_capacity : 32;
        dGeomID *geoms = realloc(cs->box_geoms, (size_t)capacity * sizeof *geoms);
        if (!geoms) return NULL;
        cs->box_geoms = geoms;
        pp_polytope **polys = realloc(cs->box_polytopes, (size_t)capacity * sizeof *polys);
        if (!polys) return NULL;
        cs->box_polytopes = polys;
        cs->box_capacity = capacity;
    }
    dVector3 len;
    dGeomBoxGetLengths(g, len);
    pp_polytope *p = NULL;
    if (pp_polytope_box((const double[3]){len[0], len[1], len[2]}, &p) != PP_OK) return NULL;
    cs->box_geoms[cs->box_count] = g;
    cs->box_polytopes[cs->box_count] = p;
    cs->box_count++;
    return p;
}

void pp_catalog_destroy(pp_catalog_scene *cs)
{
    for (int i = 0; i < cs->box_count; ++i) pp_polytope_destroy(cs->box_polytopes[i]);
    free(cs->box_geoms);
    free(cs->box_polytopes);
    if (cs->pour) pp_pour_scene_destroy(cs->pour);
    else if (cs->scene) pp_scene_destroy(cs->scene);
    free(cs->owner);
    memset(cs, 0, sizeof *cs);
}
