/* Scene files (scene_file.h; the format: docs/scene-file.md), parsed with json-c. */
#include "scene_file.h"

#include <json-c/json.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the scene's data */

typedef struct sf_polytope {
    dGeomID geom;
    pp_polytope *poly;      /* geom frame (boxes: centred; hulls: centre of mass at the origin) */
} sf_polytope;

typedef struct sf_hull {
    int body;               /* index in scene.bodies */
    pp_polytope *poly;      /* recentred at the centre of mass; owned by the polytope list once
                               the geom is made */
} sf_hull;

typedef struct sf_script {
    char name[128];
    int has_mu, has_bounce, has_bounce_vel;
    pp_surface surface;
    double h, seconds;
    int hull_count;
    sf_hull *hulls;
    int hulls_made;
    int poly_count, poly_capacity;
    sf_polytope *polys;
} sf_script;

static void sf_script_destroy(void *p)
{
    sf_script *s = p;
    if (!s) return;
    for (int i = 0; i < s->poly_count; ++i) pp_polytope_destroy(s->polys[i].poly);
    if (!s->hulls_made)
        for (int i = 0; i < s->hull_count; ++i) pp_polytope_destroy(s->hulls[i].poly);
    free(s->polys);
    free(s->hulls);
    free(s);
}

static int sf_add_polytope(sf_script *s, dGeomID g, pp_polytope *poly)
{
    if (s->poly_count == s->poly_capacity) {
        int capacity = s->poly_capacity ? 2 * s->poly_capacity : 16;
        sf_polytope *p = realloc(s->polys, (size_t)capacity * sizeof *p);
        if (!p) return -1;
        s->polys = p;
        s->poly_capacity = capacity;
    }
    s->polys[s->poly_count].geom = g;
    s->polys[s->poly_count].poly = poly;
    s->poly_count++;
    return 0;
}

/* Before step 0: the hulls' geoms, made by pp_convex_create (it needs the pegplus world). */
static void sf_before_step(pp_scene *scene, int step)
{
    (void)step;
    sf_script *s = scene->script;
    if (s->hulls_made) return;
    s->hulls_made = 1;
    for (int i = 0; i < s->hull_count; ++i) {
        sf_hull *h = &s->hulls[i];
        dGeomID g = NULL;
        pp_status st = scene->pegplus
                           ? pp_convex_create(scene->pegplus, scene->space, h->poly->vertices,
                                              h->poly->vertex_count, &g)
                           : PP_ERR_NULL_ARGUMENT;
        if (st != PP_OK) {
            pp_log(PP_LOG_ERROR, "%s: body %d (dBodyID %p): hull geom not made (%s)%s", s->name,
                   h->body, (void *)scene->bodies[h->body], pp_status_string(st),
                   scene->pegplus ? "" : ": scene.pegplus is NULL");
            pp_polytope_destroy(h->poly);
            h->poly = NULL;
            continue;
        }
        dGeomSetBody(g, scene->bodies[h->body]);
        scene->geoms[h->body] = g;
        if (sf_add_polytope(s, g, h->poly) != 0) pp_polytope_destroy(h->poly);
        h->poly = NULL;
    }
}

static void sf_configure(const pp_scene *scene, struct pp_config *config)
{
    const sf_script *s = scene->script;
    if (s->has_mu) config->surface.mu = s->surface.mu;
    if (s->has_bounce) config->surface.bounce = s->surface.bounce;
    if (s->has_bounce_vel) config->surface.bounce_vel = s->surface.bounce_vel;
}

int pp_scene_file_is(const pp_scene *scene)
{
    return scene && scene->before_step == sf_before_step;
}

const pp_polytope *pp_scene_file_polytope(const pp_scene *scene, dGeomID geom)
{
    if (!pp_scene_file_is(scene)) return NULL;
    const sf_script *s = scene->script;
    for (int i = 0; i < s->poly_count; ++i)
        if (s->polys[i].geom == geom) return s->polys[i].poly;
    return NULL;
}

void pp_scene_file_run(const pp_scene *scene, double *h, double *seconds)
{
    const sf_script *s = pp_scene_file_is(scene) ? scene->script : NULL;
    if (h) *h = s ? s->h : 0.0;
    if (seconds) *seconds = s ? s->seconds : 0.0;
}

/* ------------------------------------------------------------------------- parsing */

typedef struct parser {
    const char *file;
    char *why;
    size_t why_size;
    pp_status status;
} parser;

/* Records the first error: "file: path: message". Returns 0 for `return fail(...)`. */
static int fail(parser *p, const char *path, const char *format, ...)
{
    if (p->status != PP_OK) return 0;
    p->status = PP_ERR_INVALID_ARGUMENT;
    char message[384];
    va_list ap;
    va_start(ap, format);
    vsnprintf(message, sizeof message, format, ap);
    va_end(ap);
    if (p->why && p->why_size) snprintf(p->why, p->why_size, "%s: %s: %s", p->file, path, message);
    return 0;
}

/* Unknown keys are errors (a misspelt key would otherwise silently take its default). */
static int check_keys(parser *p, json_object *o, const char *path, const char *const *allowed)
{
    json_object_object_foreach(o, key, value) {
        (void)value;
        int known = 0;
        for (const char *const *a = allowed; *a; ++a) known |= !strcmp(*a, key);
        if (!known) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
            return fail(p, sub, "unknown key (see docs/scene-file.md)");
        }
    }
    return 1;
}

static int is_number(json_object *v)
{
    return json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int);
}

/* A finite number at key; `required` 0 leaves *out untouched when the key is absent. */
static int get_number(parser *p, json_object *o, const char *path, const char *key, int required,
                      double *out)
{
    char sub[256];
    snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) return required ? fail(p, sub, "missing") : 1;
    if (!is_number(v)) return fail(p, sub, "expected a number");
    double x = json_object_get_double(v);
    if (!isfinite(x)) return fail(p, sub, "not finite");
    *out = x;
    return 1;
}

/* An array of n finite numbers at key. */
static int get_vector(parser *p, json_object *o, const char *path, const char *key, int n,
                      int required, double *out)
{
    char sub[256];
    snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) return required ? fail(p, sub, "missing") : 1;
    if (!json_object_is_type(v, json_type_array) || (int)json_object_array_length(v) != n)
        return fail(p, sub, "expected an array of %d numbers", n);
    for (int i = 0; i < n; ++i) {
        json_object *e = json_object_array_get_idx(v, (size_t)i);
        if (!is_number(e) || !isfinite(json_object_get_double(e)))
            return fail(p, sub, "expected an array of %d numbers (element %d is not a finite number)", n, i);
        out[i] = json_object_get_double(e);
    }
    return 1;
}

static int get_positive_vector(parser *p, json_object *o, const char *path, const char *key, int n,
                               double *out)
{
    if (!get_vector(p, o, path, key, n, 1, out)) return 0;
    for (int i = 0; i < n; ++i)
        if (!(out[i] > 0.0)) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s.%s", path, key);
            return fail(p, sub, "expected an array of %d numbers > 0", n);
        }
    return 1;
}

static int get_positive(parser *p, json_object *o, const char *path, const char *key, double *out)
{
    if (!get_number(p, o, path, key, 1, out)) return 0;
    if (!(*out > 0.0)) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s.%s", path, key);
        return fail(p, sub, "must be > 0 (got %g)", *out);
    }
    return 1;
}

/* "quat": [w, x, y, z], normalised here; identity when absent. */
static int get_quaternion(parser *p, json_object *o, const char *path, dQuaternion q)
{
    double v[4] = {1, 0, 0, 0};
    if (!get_vector(p, o, path, "quat", 4, 0, v)) return 0;
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
    if (!(n > 1e-12)) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s.quat", path);
        return fail(p, sub, "zero quaternion");
    }
    for (int i = 0; i < 4; ++i) q[i] = v[i] / n;
    return 1;
}

static const char *get_string(parser *p, json_object *o, const char *path, const char *key,
                              int required)
{
    char sub[256];
    snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) {
        if (required) fail(p, sub, "missing");
        return NULL;
    }
    if (!json_object_is_type(v, json_type_string)) {
        fail(p, sub, "expected a string");
        return NULL;
    }
    return json_object_get_string(v);
}

/* An array (possibly absent: *n = 0). */
static json_object *get_array(parser *p, json_object *o, const char *key, int *n)
{
    json_object *v;
    *n = 0;
    if (!json_object_object_get_ex(o, key, &v)) return NULL;
    if (!json_object_is_type(v, json_type_array)) {
        fail(p, key, "expected an array");
        return NULL;
    }
    *n = (int)json_object_array_length(v);
    return v;
}

/* -------------------------------------------------------------------------- building */

static const char *const TOP_KEYS[] = {"version", "name", "gravity", "surface", "h", "seconds",
                                       "static", "bodies", "joints", NULL};
static const char *const SURFACE_KEYS[] = {"mu", "bounce", "bounce_vel", NULL};
static const char *const STATIC_KEYS[] = {"type", "normal", "offset", "size", "pos", "quat", NULL};
static const char *const BODY_KEYS[] = {"name", "shape", "size", "radius", "length", "points",
                                        "mass", "density", "pos", "quat", "vel", "angvel", NULL};
static const char *const JOINT_KEYS[] = {"type", "bodies", "anchor", "axis", "lo", "hi", NULL};

static int parse_surface(parser *p, json_object *root, sf_script *s)
{
    json_object *o;
    if (!json_object_object_get_ex(root, "surface", &o)) return 1;
    if (!json_object_is_type(o, json_type_object)) return fail(p, "surface", "expected an object");
    if (!check_keys(p, o, "surface", SURFACE_KEYS)) return 0;
    s->has_mu = json_object_object_get_ex(o, "mu", NULL);
    s->has_bounce = json_object_object_get_ex(o, "bounce", NULL);
    s->has_bounce_vel = json_object_object_get_ex(o, "bounce_vel", NULL);
    if (!get_number(p, o, "surface", "mu", 0, &s->surface.mu) ||
        !get_number(p, o, "surface", "bounce", 0, &s->surface.bounce) ||
        !get_number(p, o, "surface", "bounce_vel", 0, &s->surface.bounce_vel))
        return 0;
    if (s->has_mu && s->surface.mu < 0.0) return fail(p, "surface.mu", "must be >= 0");
    if (s->has_bounce && (s->surface.bounce < 0.0 || s->surface.bounce > 1.0))
        return fail(p, "surface.bounce", "must be in [0, 1]");
    if (s->has_bounce_vel && s->surface.bounce_vel < 0.0)
        return fail(p, "surface.bounce_vel", "must be >= 0");
    return 1;
}

static int parse_static(parser *p, json_object *root, pp_scene *scene, sf_script *s)
{
    int n;
    json_object *list = get_array(p, root, "static", &n);
    if (p->status != PP_OK) return 0;
    for (int i = 0; i < n; ++i) {
        char path[64];
        snprintf(path, sizeof path, "static[%d]", i);
        json_object *o = json_object_array_get_idx(list, (size_t)i);
        if (!json_object_is_type(o, json_type_object)) return fail(p, path, "expected an object");
        if (!check_keys(p, o, path, STATIC_KEYS)) return 0;
        const char *type = get_string(p, o, path, "type", 1);
        if (!type) return 0;
        if (!strcmp(type, "plane")) {
            double normal[3] = {0, 0, 1}, offset = 0.0;
            if (!get_vector(p, o, path, "normal", 3, 0, normal) ||
                !get_number(p, o, path, "offset", 0, &offset))
                return 0;
            double len = sqrt(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]);
            if (!(len > 1e-12)) {
                char sub[96];
                snprintf(sub, sizeof sub, "%s.normal", path);
                return fail(p, sub, "zero normal");
            }
            dGeomID g = dCreatePlane(scene->space, normal[0] / len, normal[1] / len, normal[2] / len,
                                     offset);
            if (!scene->ground) scene->ground = g;
        } else if (!strcmp(type, "box")) {
            double size[3], pos[3] = {0, 0, 0};
            dQuaternion q;
            if (!get_positive_vector(p, o, path, "size", 3, size) ||
                !get_vector(p, o, path, "pos", 3, 0, pos) || !get_quaternion(p, o, path, q))
                return 0;
            dGeomID g = dCreateBox(scene->space, size[0], size[1], size[2]);
            dGeomSetPosition(g, pos[0], pos[1], pos[2]);
            dGeomSetQuaternion(g, q);
            pp_polytope *poly = NULL;
            if (pp_polytope_box(size, &poly) != PP_OK || sf_add_polytope(s, g, poly) != 0) {
                pp_polytope_destroy(poly);
                p->status = PP_ERR_NO_MEMORY;
                return 0;
            }
        } else {
            char sub[96];
            snprintf(sub, sizeof sub, "%s.type", path);
            return fail(p, sub, "unknown static geom '%s' (plane, box)", type);
        }
    }
    return 1;
}

/* A hull: the points' polytope, its mass properties, recentred at the centre of mass.
 * *com gets the centre of mass in the points' frame. */
static int parse_hull(parser *p, json_object *o, const char *path, int has_mass, double mass_or_density,
                      pp_polytope **out, dMass *m, double com[3])
{
    char sub[96];
    snprintf(sub, sizeof sub, "%s.points", path);
    json_object *v;
    if (!json_object_object_get_ex(o, "points", &v)) return fail(p, sub, "missing");
    if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) < 4)
        return fail(p, sub, "expected an array of at least 4 points [x, y, z]");
    int n = (int)json_object_array_length(v);
    double *xyz = malloc((size_t)n * 3 * sizeof *xyz);
    if (!xyz) {
        p->status = PP_ERR_NO_MEMORY;
        return 0;
    }
    for (int i = 0; i < n; ++i) {
        json_object *pt = json_object_array_get_idx(v, (size_t)i);
        int ok = json_object_is_type(pt, json_type_array) && json_object_array_length(pt) == 3;
        for (int k = 0; ok && k < 3; ++k) {
            json_object *e = json_object_array_get_idx(pt, (size_t)k);
            ok = is_number(e) && isfinite(json_object_get_double(e));
            if (ok) xyz[3 * i + k] = json_object_get_double(e);
        }
        if (!ok) {
            free(xyz);
            char el[128];
            snprintf(el, sizeof el, "%s.points[%d]", path, i);
            return fail(p, el, "expected [x, y, z] (3 finite numbers)");
        }
    }
    pp_polytope *poly = NULL;
    pp_status st = pp_polytope_from_points(xyz, n, &poly);
    free(xyz);
    if (st != PP_OK) {
        fail(p, sub, "no convex hull (%s: fewer than 4 distinct points, or all coplanar?)",
             pp_status_string(st));
        p->status = st;
        return 0;
    }
    double unit_mass, inertia[9];
    pp_polytope_mass_properties(poly, 1.0, &unit_mass, com, inertia); /* unit_mass = volume */
    double density = has_mass ? mass_or_density / unit_mass : mass_or_density;
    for (int k = 0; k < 9; ++k) inertia[k] *= density;
    double minus_com[3] = {-com[0], -com[1], -com[2]};
    pp_polytope_translate(poly, minus_com);
    dMassSetParameters(m, density * unit_mass, 0, 0, 0, inertia[0], inertia[4], inertia[8],
                       inertia[1], inertia[2], inertia[5]);
    *out = poly;
    return 1;
}

static int parse_bodies(parser *p, json_object *root, pp_scene *scene, sf_script *s, int *count,
                        const char ***names)
{
    json_object *list = get_array(p, root, "bodies", count);
    if (p->status != PP_OK) return 0;
    int n = *count;
    *names = calloc((size_t)(n ? n : 1), sizeof **names);
    s->hulls = calloc((size_t)(n ? n : 1), sizeof *s->hulls);
    if (!*names || !s->hulls) {
        p->status = PP_ERR_NO_MEMORY;
        return 0;
    }
    for (int i = 0; i < n; ++i) {
        char path[64];
        snprintf(path, sizeof path, "bodies[%d]", i);
        json_object *o = json_object_array_get_idx(list, (size_t)i);
        if (!json_object_is_type(o, json_type_object)) return fail(p, path, "expected an object");
        if (!check_keys(p, o, path, BODY_KEYS)) return 0;
        (*names)[i] = get_string(p, o, path, "name", 0);
        if (p->status != PP_OK) return 0;
        for (int j = 0; (*names)[i] && j < i; ++j)
            if ((*names)[j] && !strcmp((*names)[i], (*names)[j])) {
                char sub[96];
                snprintf(sub, sizeof sub, "%s.name", path);
                return fail(p, sub, "'%s' is also the name of bodies[%d]", (*names)[i], j);
            }
        const char *shape = get_string(p, o, path, "shape", 1);
        if (!shape) return 0;
        int has_mass = json_object_object_get_ex(o, "mass", NULL);
        int has_density = json_object_object_get_ex(o, "density", NULL);
        if (has_mass == has_density) return fail(p, path, "give exactly one of \"mass\" (kg) and \"density\" (kg/m^3)");
        double md;
        if (!get_positive(p, o, path, has_mass ? "mass" : "density", &md)) return 0;
        double pos[3] = {0, 0, 0}, vel[3] = {0, 0, 0}, angvel[3] = {0, 0, 0};
        dQuaternion q;
        if (!get_vector(p, o, path, "pos", 3, 0, pos) || !get_vector(p, o, path, "vel", 3, 0, vel) ||
            !get_vector(p, o, path, "angvel", 3, 0, angvel) || !get_quaternion(p, o, path, q))
            return 0;
        dMass m;
        dGeomID g = NULL;
        pp_polytope *poly = NULL;
        double com[3] = {0, 0, 0};
        if (!strcmp(shape, "box")) {
            double size[3];
            if (!get_positive_vector(p, o, path, "size", 3, size)) return 0;
            if (has_mass) dMassSetBoxTotal(&m, md, size[0], size[1], size[2]);
            else dMassSetBox(&m, md, size[0], size[1], size[2]);
            g = dCreateBox(scene->space, size[0], size[1], size[2]);
            if (pp_polytope_box(size, &poly) != PP_OK || sf_add_polytope(s, g, poly) != 0) {
                pp_polytope_destroy(poly);
                dGeomDestroy(g);
                p->status = PP_ERR_NO_MEMORY;
                return 0;
            }
        } else if (!strcmp(shape, "sphere")) {
            double r;
            if (!get_positive(p, o, path, "radius", &r)) return 0;
            if (has_mass) dMassSetSphereTotal(&m, md, r);
            else dMassSetSphere(&m, md, r);
            g = dCreateSphere(scene->space, r);
        } else if (!strcmp(shape, "capsule")) {
            double r, len;
            if (!get_positive(p, o, path, "radius", &r) || !get_positive(p, o, path, "length", &len))
                return 0;
            if (has_mass) dMassSetCapsuleTotal(&m, md, 3, r, len);
            else dMassSetCapsule(&m, md, 3, r, len);
            g = dCreateCapsule(scene->space, r, len);
        } else if (!strcmp(shape, "convex")) {
            if (!parse_hull(p, o, path, has_mass, md, &poly, &m, com)) return 0;
            s->hulls[s->hull_count].body = i;
            s->hulls[s->hull_count].poly = poly;
            s->hull_count++;
        } else {
            char sub[96];
            snprintf(sub, sizeof sub, "%s.shape", path);
            return fail(p, sub, "unknown shape '%s' (box, sphere, capsule, convex)", shape);
        }
        dBodyID b = dBodyCreate(scene->world);
        dBodySetMass(b, &m);
        if (g) dGeomSetBody(g, b);
        /* "pos" places the frame the shape is given in; a hull's body origin is its centre of
         * mass, com in that frame: x_body = pos + R com */
        dBodySetQuaternion(b, q);
        dVector3 offset;
        dBodyVectorToWorld(b, com[0], com[1], com[2], offset);
        dBodySetPosition(b, pos[0] + offset[0], pos[1] + offset[1], pos[2] + offset[2]);
        dBodySetLinearVel(b, vel[0], vel[1], vel[2]);
        dBodySetAngularVel(b, angvel[0], angvel[1], angvel[2]);
        if (pp_scene_append(scene, b, g) != 0) {
            p->status = PP_ERR_NO_MEMORY;
            return 0;
        }
    }
    return 1;
}

/* A joint's "bodies": one or two body names (or indices); "world" (or a missing second) is
 * the static environment. */
static int parse_joint_bodies(parser *p, json_object *o, const char *path, const pp_scene *scene,
                              const char **names, dBodyID out[2])
{
    char sub[96];
    snprintf(sub, sizeof sub, "%s.bodies", path);
    json_object *v;
    if (!json_object_object_get_ex(o, "bodies", &v)) return fail(p, sub, "missing");
    int n = json_object_is_type(v, json_type_array) ? (int)json_object_array_length(v) : 0;
    if (n < 1 || n > 2) return fail(p, sub, "expected an array of 1 or 2 body names (or \"world\")");
    out[0] = out[1] = NULL;
    for (int k = 0; k < n; ++k) {
        json_object *e = json_object_array_get_idx(v, (size_t)k);
        char el[112];
        snprintf(el, sizeof el, "%s[%d]", sub, k);
        if (json_object_is_type(e, json_type_int)) {
            int idx = json_object_get_int(e);
            if (idx < 0 || idx >= scene->body_count)
                return fail(p, el, "body index %d out of range (%d bodies)", idx, scene->body_count);
            out[k] = scene->bodies[idx];
        } else if (json_object_is_type(e, json_type_string)) {
            const char *name = json_object_get_string(e);
            if (!strcmp(name, "world")) continue;
            int found = -1;
            for (int i = 0; i < scene->body_count && found < 0; ++i)
                if (names[i] && !strcmp(names[i], name)) found = i;
            if (found < 0) return fail(p, el, "no body named '%s'", name);
            out[k] = scene->bodies[found];
        } else {
            return fail(p, el, "expected a body name, an index or \"world\"");
        }
    }
    if (!out[0] && !out[1]) return fail(p, sub, "a joint needs at least one body");
    if (out[0] == out[1]) return fail(p, sub, "a joint cannot join a body to itself");
    if (!out[0]) out[0] = out[1], out[1] = NULL;
    return 1;
}

static int parse_joints(parser *p, json_object *root, pp_scene *scene, const char **names)
{
    int n;
    json_object *list = get_array(p, root, "joints", &n);
    if (p->status != PP_OK) return 0;
    for (int i = 0; i < n; ++i) {
        char path[64], sub[96];
        snprintf(path, sizeof path, "joints[%d]", i);
        json_object *o = json_object_array_get_idx(list, (size_t)i);
        if (!json_object_is_type(o, json_type_object)) return fail(p, path, "expected an object");
        if (!check_keys(p, o, path, JOINT_KEYS)) return 0;
        const char *type = get_string(p, o, path, "type", 1);
        if (!type) return 0;
        dBodyID b[2];
        if (!parse_joint_bodies(p, o, path, scene, names, b)) return 0;
        double anchor[3], axis[3], lo = -dInfinity, hi = dInfinity;
        int stops = !strcmp(type, "hinge") || !strcmp(type, "slider");
        int has_stop = json_object_object_get_ex(o, "lo", NULL) || json_object_object_get_ex(o, "hi", NULL);
        if (has_stop && !stops) return fail(p, path, "a %s joint has no stops (\"lo\", \"hi\")", type);
        if (!get_number(p, o, path, "lo", 0, &lo) || !get_number(p, o, path, "hi", 0, &hi)) return 0;
        if (lo > hi) return fail(p, path, "\"lo\" (%g) > \"hi\" (%g)", lo, hi);
        int has_anchor = json_object_object_get_ex(o, "anchor", NULL);
        int has_axis = json_object_object_get_ex(o, "axis", NULL);
        int needs_anchor = !strcmp(type, "ball") || !strcmp(type, "hinge");
        int needs_axis = !strcmp(type, "hinge") || !strcmp(type, "slider");
        if (has_anchor && !needs_anchor) return fail(p, path, "a %s joint has no \"anchor\"", type);
        if (has_axis && !needs_axis) return fail(p, path, "a %s joint has no \"axis\"", type);
        if (needs_anchor && !get_vector(p, o, path, "anchor", 3, 1, anchor)) return 0;
        if (needs_axis) {
            if (!get_vector(p, o, path, "axis", 3, 1, axis)) return 0;
            if (!(sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]) > 1e-12)) {
                snprintf(sub, sizeof sub, "%s.axis", path);
                return fail(p, sub, "zero axis");
            }
        }
        dJointID j;
        if (!strcmp(type, "ball")) {
            j = dJointCreateBall(scene->world, 0);
            dJointAttach(j, b[0], b[1]);
            dJointSetBallAnchor(j, anchor[0], anchor[1], anchor[2]);
        } else if (!strcmp(type, "hinge")) {
            j = dJointCreateHinge(scene->world, 0);
            dJointAttach(j, b[0], b[1]);
            dJointSetHingeAnchor(j, anchor[0], anchor[1], anchor[2]);
            dJointSetHingeAxis(j, axis[0], axis[1], axis[2]);
            dJointSetHingeParam(j, dParamLoStop, lo);
            dJointSetHingeParam(j, dParamHiStop, hi);
        } else if (!strcmp(type, "slider")) {
            j = dJointCreateSlider(scene->world, 0);
            dJointAttach(j, b[0], b[1]);
            dJointSetSliderAxis(j, axis[0], axis[1], axis[2]);
            dJointSetSliderParam(j, dParamLoStop, lo);
            dJointSetSliderParam(j, dParamHiStop, hi);
        } else if (!strcmp(type, "fixed")) {
            j = dJointCreateFixed(scene->world, 0);
            dJointAttach(j, b[0], b[1]);
            dJointSetFixed(j);
        } else {
            snprintf(sub, sizeof sub, "%s.type", path);
            return fail(p, sub, "unknown joint type '%s' (ball, hinge, slider, fixed)", type);
        }
    }
    return 1;
}

/* The whole file, or NULL with the reason. */
static char *read_all(parser *p)
{
    FILE *f = fopen(p->file, "rb");
    if (!f) {
        snprintf(p->why, p->why_size, "%s: cannot open: %s", p->file, strerror(errno));
        p->status = PP_ERR_INVALID_ARGUMENT;
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    while (text) {
        size_t got = fread(text + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) break;
        if (len + 1 == cap) {
            char *t = realloc(text, cap * 2);
            if (!t) {
                free(text);
                text = NULL;
                break;
            }
            text = t;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!text || bad) {
        free(text);
        snprintf(p->why, p->why_size, "%s: cannot read%s", p->file, text ? "" : " (out of memory)");
        p->status = text ? PP_ERR_INVALID_ARGUMENT : PP_ERR_NO_MEMORY;
        return NULL;
    }
    text[len] = '\0';
    return text;
}

/* Line and column (1-based) of byte offset `at` in text. */
static void line_column(const char *text, size_t at, int *line, int *column)
{
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < at && text[i]; ++i) {
        if (text[i] == '\n') ++*line, *column = 1;
        else ++*column;
    }
}

pp_status pp_scene_file_load(pp_scene *scene, const char *path, char *why, size_t why_size)
{
    char dummy[1];
    parser p = {path, why ? why : dummy, why ? why_size : sizeof dummy, PP_OK};
    p.why[0] = '\0';
    memset(scene, 0, sizeof *scene);
    if (!path) return PP_ERR_NULL_ARGUMENT;
    char *text = read_all(&p);
    if (!text) return p.status;

    json_tokener *tok = json_tokener_new();
    json_object *root = tok ? json_tokener_parse_ex(tok, text, (int)strlen(text)) : NULL;
    /* trailing garbage after the value is an error too */
    if (root && tok && json_tokener_get_parse_end(tok) < strlen(text) &&
        text[json_tokener_get_parse_end(tok) + strspn(text + json_tokener_get_parse_end(tok), " \t\r\n")] != '\0') {
        json_object_put(root);
        root = NULL;
    }
    if (!tok) {
        free(text);
        snprintf(p.why, p.why_size, "%s: out of memory", path);
        return PP_ERR_NO_MEMORY;
    }
    if (!root) {
        enum json_tokener_error err = json_tokener_get_error(tok);
        int line, column;
        line_column(text, json_tokener_get_parse_end(tok), &line, &column);
        snprintf(p.why, p.why_size, "%s:%d:%d: not JSON: %s", path, line, column,
                 err == json_tokener_continue ? "unexpected end of file"
                 : err == json_tokener_success ? "unexpected text after the JSON value"
                                               : json_tokener_error_desc(err));
        json_tokener_free(tok);
        free(text);
        return PP_ERR_INVALID_ARGUMENT;
    }
    json_tokener_free(tok);
    free(text);

    sf_script *s = calloc(1, sizeof *s);
    const char **names = NULL;
    int body_count = 0;
    if (!s) {
        json_object_put(root);
        return PP_ERR_NO_MEMORY;
    }
    pp_scenes_init_ode();
    scene->world = dWorldCreate();
    scene->space = dHashSpaceCreate(0);
    scene->script = s;
    scene->script_destroy = sf_script_destroy;
    scene->before_step = sf_before_step;
    scene->configure = sf_configure;
    scene->name = s->name;

    double gravity[3] = {0, 0, -9.81}, version = 1;
    int ok = json_object_is_type(root, json_type_object) ? 1 : fail(&p, "(top level)", "expected an object");
    ok = ok && check_keys(&p, root, "", TOP_KEYS) && get_number(&p, root, "", "version", 0, &version);
    if (ok && version != 1) ok = fail(&p, "version", "this reader knows version 1 only (got %g)", version);
    const char *name = ok ? get_string(&p, root, "", "name", 0) : NULL;
    ok = ok && p.status == PP_OK;
    if (ok) {
        const char *base = strrchr(path, '/');
        snprintf(s->name, sizeof s->name, "%s", name ? name : base ? base + 1 : path);
        if (!name) { /* the file name without .json */
            char *dot = strrchr(s->name, '.');
            if (dot && !strcmp(dot, ".json")) *dot = '\0';
        }
    }
    ok = ok && get_vector(&p, root, "", "gravity", 3, 0, gravity) &&
         get_number(&p, root, "", "h", 0, &s->h) && get_number(&p, root, "", "seconds", 0, &s->seconds);
    if (ok && s->h < 0.0) ok = fail(&p, "h", "must be > 0");
    if (ok && s->seconds < 0.0) ok = fail(&p, "seconds", "must be > 0");
    ok = ok && parse_surface(&p, root, s) && parse_static(&p, root, scene, s) &&
         parse_bodies(&p, root, scene, s, &body_count, &names) && parse_joints(&p, root, scene, names);
    if (ok) dWorldSetGravity(scene->world, gravity[0], gravity[1], gravity[2]);
    free(names);
    json_object_put(root); /* the names pointed into it */
    if (!ok || p.status != PP_OK) {
        pp_status st = p.status != PP_OK ? p.status : PP_ERR_INVALID_ARGUMENT;
        if (st == PP_ERR_NO_MEMORY && p.why_size > 1 && !strstr(p.why, ":"))
            snprintf(p.why, p.why_size, "%s: out of memory", path);
        pp_scene_destroy(scene);
        memset(scene, 0, sizeof *scene);
        return st;
    }
    return PP_OK;
}
