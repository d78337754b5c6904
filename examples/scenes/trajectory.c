/*
 * The .pptraj writer and reader (docs/trajectory.md). One byte stream, written through zlib
 * either gzip-compressed (".gz") or plain (gzopen's transparent mode "T"), read back through
 * gzread, which detects the gzip magic 1f 8b itself. Numbers are little-endian whatever the
 * host: every integer and double is put byte by byte.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "trajectory.h"

#include "pegplus/geometry.h"
#include "pegplus/pegplus.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char pp_traj_magic[8] = {'P', 'P', 'T', 'R', 'A', 'J', '1', '\n'};

/* ---------------------------------------------------------------------------------------
 * Little-endian byte buffer
 * ------------------------------------------------------------------------------------- */
typedef struct byte_buffer {
    unsigned char *data;
    size_t size, capacity;
} byte_buffer;

static int buffer_reserve(byte_buffer *b, size_t extra)
{
    if (b->size + extra <= b->capacity) return 0;
    size_t capacity = b->capacity ? b->capacity : 1024;
    while (capacity < b->size + extra) capacity *= 2;
    unsigned char *data = realloc(b->data, capacity);
    if (!data) return -1;
    b->data = data;
    b->capacity = capacity;
    return 0;
}

/* Callers reserve first; these only store. */
static void put_u32(byte_buffer *b, uint32_t v)
{
    for (int k = 0; k < 4; ++k) b->data[b->size++] = (unsigned char)(v >> (8 * k));
}

static void put_f64(byte_buffer *b, double x)
{
    uint64_t v;
    memcpy(&v, &x, sizeof v);
    for (int k = 0; k < 8; ++k) b->data[b->size++] = (unsigned char)(v >> (8 * k));
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= (uint32_t)p[k] << (8 * k);
    return v;
}

static double get_f64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= (uint64_t)p[k] << (8 * k);
    double x;
    memcpy(&x, &v, sizeof x);
    return x;
}

/* ---------------------------------------------------------------------------------------
 * Geoms as JSON
 * ------------------------------------------------------------------------------------- */
static json_object *json_vector(const double *v, int n)
{
    json_object *a = json_object_new_array();
    for (int k = 0; k < n; ++k) json_object_array_add(a, json_object_new_double(v[k]));
    return a;
}

/* A geom's shape and pose: relative to its body (ODE's offset) for a body's geom, absolute for
 * a static one. Planes carry their equation instead of a pose. A dConvex pegplus does not know
 * (scene->pegplus unset, or a geom made without pp_convex_create) and the classes the viewer
 * cannot draw (ray, trimesh, heightfield, user classes) are written as "other". */
static json_object *geom_json(dGeomID g, const pp_world *pegplus)
{
    json_object *o = json_object_new_object();
    int cls = dGeomGetClass(g);
    const pp_polytope *hull = cls == dConvexClass ? pp_convex_polytope(pegplus, g) : NULL;
    switch (cls) {
    case dBoxClass: {
        dVector3 lengths;
        dGeomBoxGetLengths(g, lengths);
        json_object_object_add(o, "class", json_object_new_string("box"));
        json_object_object_add(o, "lengths", json_vector(lengths, 3));
        break;
    }
    case dSphereClass:
        json_object_object_add(o, "class", json_object_new_string("sphere"));
        json_object_object_add(o, "radius", json_object_new_double(dGeomSphereGetRadius(g)));
        break;
    case dCapsuleClass:
    case dCylinderClass: {
        dReal r, l;
        if (cls == dCapsuleClass) dGeomCapsuleGetParams(g, &r, &l);
        else dGeomCylinderGetParams(g, &r, &l);
        json_object_object_add(o, "class",
                               json_object_new_string(cls == dCapsuleClass ? "capsule" : "cylinder"));
        json_object_object_add(o, "radius", json_object_new_double(r));
        json_object_object_add(o, "length", json_object_new_double(l));
        break;
    }
    case dPlaneClass: {
        dVector4 p;
        dGeomPlaneGetParams(g, p);
        json_object_object_add(o, "class", json_object_new_string("plane"));
        json_object_object_add(o, "normal", json_vector(p, 3));
        json_object_object_add(o, "d", json_object_new_double(p[3]));
        return o; /* not placeable: no pose */
    }
    default:
        if (hull) {
            json_object_object_add(o, "class", json_object_new_string("convex"));
            json_object *vertices = json_object_new_array();
            for (int v = 0; v < hull->vertex_count; ++v)
                json_object_array_add(vertices, json_vector(hull->vertices + 3 * v, 3));
            json_object *faces = json_object_new_array();
            for (int f = 0; f < hull->face_count; ++f) {
                json_object *face = json_object_new_array();
                for (int j = hull->face_first[f]; j < hull->face_first[f + 1]; ++j)
                    json_object_array_add(face, json_object_new_int(hull->face_vertices[j]));
                json_object_array_add(faces, face);
            }
            json_object_object_add(o, "vertices", vertices);
            json_object_object_add(o, "faces", faces);
        } else {
            json_object_object_add(o, "class", json_object_new_string("other"));
            json_object_object_add(o, "ode_class", json_object_new_int(cls));
        }
        break;
    }
    dQuaternion q;
    const dReal *pos;
    if (dGeomGetBody(g)) {
        pos = dGeomGetOffsetPosition(g);     /* zero without an offset */
        dGeomGetOffsetQuaternion(g, q);      /* identity without an offset */
    } else {
        pos = dGeomGetPosition(g);
        dGeomGetQuaternion(g, q);
    }
    json_object_object_add(o, "pos", json_vector(pos, 3));
    json_object_object_add(o, "quat", json_vector(q, 4));
    return o;
}

/* Geoms without a body, in `space` and its sub-spaces. */
static void static_geoms(dSpaceID space, const pp_world *pegplus, json_object *array)
{
    int n = dSpaceGetNumGeoms(space);
    for (int i = 0; i < n; ++i) {
        dGeomID g = dSpaceGetGeom(space, i);
        if (dGeomIsSpace(g)) static_geoms((dSpaceID)g, pegplus, array);
        else if (!dGeomGetBody(g)) json_object_array_add(array, geom_json(g, pegplus));
    }
}

/* ---------------------------------------------------------------------------------------
 * Writer
 * ------------------------------------------------------------------------------------- */
typedef struct body_index {
    dBodyID body;
    int index;
} body_index;

struct pp_traj_writer {
    gzFile file;
    char *path;
    int decimation;
    int bodies_written;          /* BODY records written: bodies 0 .. bodies_written - 1 */
    byte_buffer record;          /* the record being built */
    byte_buffer contacts;        /* the frame's contacts, 40 bytes each */
    uint32_t contact_count;
    body_index *index;           /* the scene's bodies sorted by pointer, for contact bodies */
    int index_count;
    int failed;                  /* an earlier write failed (or ran out of memory) */
};

static int write_record(pp_traj_writer *w, uint32_t tag, const void *payload, size_t bytes)
{
    if (w->failed) return -1;
    unsigned char head[8];
    for (int k = 0; k < 4; ++k) {
        head[k] = (unsigned char)(tag >> (8 * k));
        head[4 + k] = (unsigned char)((uint32_t)bytes >> (8 * k));
    }
    if (bytes > UINT32_MAX || gzwrite(w->file, head, 8) != 8 ||
        (bytes && gzwrite(w->file, payload, (unsigned)bytes) != (int)bytes)) {
        int zerr;
        const char *msg = gzerror(w->file, &zerr);
        fprintf(stderr, "pptraj: cannot write %s: %s\n", w->path,
                zerr == Z_ERRNO ? strerror(errno) : msg);
        w->failed = 1;
        return -1;
    }
    return 0;
}

static int write_json_record(pp_traj_writer *w, uint32_t tag, json_object *o)
{
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    int rc = text ? write_record(w, tag, text, strlen(text)) : -1;
    json_object_put(o);
    return rc;
}

static void writer_free(pp_traj_writer *w)
{
    free(w->path);
    free(w->record.data);
    free(w->contacts.data);
    free(w->index);
    free(w);
}

pp_traj_writer *pp_traj_open(const char *path, const pp_scene *scene, const char *model_name,
                             double h, int decimation)
{
    if (!path || !scene || !scene->space || decimation < 1) {
        fprintf(stderr, "pptraj: pp_traj_open needs a path, a scene with a space and "
                        "decimation >= 1 (got %d)\n", decimation);
        errno = EINVAL;
        return NULL;
    }
    pp_traj_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        fprintf(stderr, "pptraj: out of memory opening %s\n", path);
        if (w) free(w);
        return NULL;
    }
    w->decimation = decimation;
    size_t len = strlen(path);
    int gz = len >= 3 && strcmp(path + len - 3, ".gz") == 0;
    w->file = gzopen(path, gz ? "wb6" : "wbT"); /* "T": plain bytes through the same calls */
    if (!w->file) {
        fprintf(stderr, "pptraj: cannot open %s: %s\n", path, strerror(errno ? errno : ENOMEM));
        int saved = errno;
        writer_free(w);
        errno = saved;
        return NULL;
    }
    json_object *header = json_object_new_object();
    json_object_object_add(header, "format", json_object_new_string("pptraj"));
    json_object_object_add(header, "version", json_object_new_int(1));
    json_object_object_add(header, "scene", json_object_new_string(scene->name ? scene->name : ""));
    json_object_object_add(header, "model", json_object_new_string(model_name ? model_name : ""));
    json_object_object_add(header, "h", json_object_new_double(h));
    json_object_object_add(header, "decimation", json_object_new_int(decimation));
    json_object *statics = json_object_new_array();
    static_geoms(scene->space, scene->pegplus, statics);
    json_object_object_add(header, "static_geoms", statics);
    if (gzwrite(w->file, pp_traj_magic, 8) != 8 ||
        write_json_record(w, PP_TRAJ_TAG_HEADER, header) != 0) {
        if (!w->failed) fprintf(stderr, "pptraj: cannot write %s\n", path);
        int saved = errno;
        gzclose(w->file);
        writer_free(w);
        errno = saved;
        return NULL;
    }
    return w;
}

static int index_compare(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const body_index *)a)->body;
    uintptr_t y = (uintptr_t)((const body_index *)b)->body;
    return (x > y) - (x < y);
}

static int body_lookup(const pp_traj_writer *w, dBodyID body)
{
    if (!body) return -1;
    body_index key = {body, -1};
    const body_index *hit = bsearch(&key, w->index, (size_t)w->index_count, sizeof key, index_compare);
    return hit ? hit->index : -1;
}

/* The scene's bodies sorted by pointer (rebuilt when bodies were appended). */
static int index_bodies(pp_traj_writer *w, const pp_scene *scene)
{
    if (w->index_count == scene->body_count) return 0;
    body_index *index = realloc(w->index, sizeof *index * (size_t)(scene->body_count ? scene->body_count : 1));
    if (!index) return -1;
    w->index = index;
    for (int i = 0; i < scene->body_count; ++i) index[i] = (body_index){scene->bodies[i], i};
    qsort(index, (size_t)scene->body_count, sizeof *index, index_compare);
    w->index_count = scene->body_count;
    return 0;
}

/* Near callback: the penetrating contacts of one pair, with the pair rules of
 * pp_scene_max_penetration (scenes.c): skip two static geoms, two geoms of one body, bodies
 * joined by a joint other than a contact joint, and pairs whose category and collide bits
 * exclude each other. dSpaceCollide offers only pairs whose bounding boxes overlap, which
 * loses no contact. */
static void near_contacts(void *data, dGeomID a, dGeomID b)
{
    pp_traj_writer *w = data;
    if (dGeomIsSpace(a) || dGeomIsSpace(b)) {
        dSpaceCollide2(a, b, data, near_contacts);
        if (dGeomIsSpace(a)) dSpaceCollide((dSpaceID)a, data, near_contacts);
        if (dGeomIsSpace(b)) dSpaceCollide((dSpaceID)b, data, near_contacts);
        return;
    }
    dBodyID ba = dGeomGetBody(a), bb = dGeomGetBody(b);
    if (ba == bb) return; /* two static geoms, or one body's */
    if (ba && bb && dAreConnectedExcluding(ba, bb, dJointTypeContact)) return;
    if (!(dGeomGetCategoryBits(a) & dGeomGetCollideBits(b)) &&
        !(dGeomGetCategoryBits(b) & dGeomGetCollideBits(a)))
        return;
    dContactGeom contacts[16];
    int k = dCollide(a, b, 16, contacts, sizeof(dContactGeom));
    for (int c = 0; c < k; ++c) {
        if (!(contacts[c].depth > 0)) continue;
        if (buffer_reserve(&w->contacts, 40) != 0) {
            w->failed = 1;
            return;
        }
        put_u32(&w->contacts, (uint32_t)body_lookup(w, dGeomGetBody(contacts[c].g1)));
        put_u32(&w->contacts, (uint32_t)body_lookup(w, dGeomGetBody(contacts[c].g2)));
        put_f64(&w->contacts, contacts[c].depth);
        for (int j = 0; j < 3; ++j) put_f64(&w->contacts, contacts[c].pos[j]);
        ++w->contact_count;
    }
}

static int write_bodies(pp_traj_writer *w, const pp_scene *scene)
{
    for (; w->bodies_written < scene->body_count; ++w->bodies_written) {
        int i = w->bodies_written;
        json_object *body = json_object_new_object();
        json_object *geoms = json_object_new_array();
        const char *first = "body";
        for (dGeomID g = dBodyGetFirstGeom(scene->bodies[i]); g; g = dBodyGetNextGeom(g)) {
            json_object *geom = geom_json(g, scene->pegplus);
            if (json_object_array_length(geoms) == 0)
                first = json_object_get_string(json_object_object_get(geom, "class"));
            json_object_array_add(geoms, geom);
        }
        char name[64];
        snprintf(name, sizeof name, "%s %d", first, i);
        json_object_object_add(body, "index", json_object_new_int(i));
        json_object_object_add(body, "name", json_object_new_string(name));
        json_object_object_add(body, "geoms", geoms);
        if (write_json_record(w, PP_TRAJ_TAG_BODY, body) != 0) return -1;
    }
    return 0;
}

int pp_traj_frame(pp_traj_writer *w, const pp_scene *scene, int step, double t, int force)
{
    if (!w || !scene || step < 0) return -1;
    if (w->failed || write_bodies(w, scene) != 0) return -1;
    if (step % w->decimation != 0 && !force) return 0;
    if (index_bodies(w, scene) != 0) {
        fprintf(stderr, "pptraj: out of memory writing %s\n", w->path);
        return -1;
    }
    w->contacts.size = 0;
    w->contact_count = 0;
    dSpaceCollide(scene->space, w, near_contacts);
    if (w->failed) {
        fprintf(stderr, "pptraj: out of memory writing %s\n", w->path);
        return -1;
    }
    byte_buffer *r = &w->record;
    r->size = 0;
    size_t bytes = 16 + 56 * (size_t)scene->body_count + 4 + w->contacts.size;
    if (buffer_reserve(r, bytes) != 0) {
        fprintf(stderr, "pptraj: out of memory writing %s\n", w->path);
        w->failed = 1;
        return -1;
    }
    put_u32(r, (uint32_t)step);
    put_u32(r, (uint32_t)scene->body_count);
    put_f64(r, t);
    for (int i = 0; i < scene->body_count; ++i) {
        const dReal *p = dBodyGetPosition(scene->bodies[i]);
        const dReal *q = dBodyGetQuaternion(scene->bodies[i]); /* w, x, y, z */
        for (int k = 0; k < 3; ++k) put_f64(r, p[k]);
        for (int k = 0; k < 4; ++k) put_f64(r, q[k]);
    }
    put_u32(r, w->contact_count);
    if (w->contacts.size) memcpy(r->data + r->size, w->contacts.data, w->contacts.size);
    r->size += w->contacts.size;
    return write_record(w, PP_TRAJ_TAG_FRAME, r->data, r->size);
}

int pp_traj_close(pp_traj_writer *w)
{
    if (!w) return 0;
    int rc = w->failed ? -1 : 0;
    int z = gzclose(w->file);
    if (z != Z_OK) {
        fprintf(stderr, "pptraj: cannot close %s: %s\n", w->path,
                z == Z_ERRNO ? strerror(errno) : "zlib error");
        rc = -1;
    }
    writer_free(w);
    return rc;
}

/* ---------------------------------------------------------------------------------------
 * Reader
 * ------------------------------------------------------------------------------------- */
void pp_traj_free(pp_traj *t)
{
    if (!t) return;
    free(t->scene);
    free(t->model);
    for (int i = 0; i < t->body_count; ++i) {
        free(t->body_names[i]);
        free(t->body_geom_class[i]);
        free(t->body_records[i]);
    }
    free(t->body_names);
    free(t->body_geom_count);
    free(t->body_geom_class);
    free(t->body_records);
    for (int f = 0; f < t->frame_count; ++f) {
        free(t->poses[f]);
        free(t->contacts[f]);
    }
    free(t->steps);
    free(t->times);
    free(t->body_count_at_frame);
    free(t->poses);
    free(t->contact_count);
    free(t->contacts);
    memset(t, 0, sizeof *t);
}

/* The whole stream, decompressed when it is gzip. NULL on error (message printed). */
static unsigned char *read_all(const char *path, size_t *size)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        fprintf(stderr, "pptraj: cannot open %s: %s\n", path, strerror(errno ? errno : ENOMEM));
        return NULL;
    }
    byte_buffer b = {0};
    for (;;) {
        if (buffer_reserve(&b, 1 << 16) != 0) {
            fprintf(stderr, "pptraj: out of memory reading %s\n", path);
            break;
        }
        int n = gzread(f, b.data + b.size, 1 << 16);
        if (n < 0) break;
        b.size += (size_t)n;
        if (n == 0) {
            int zerr;
            const char *msg = gzerror(f, &zerr);
            if (zerr == Z_OK || zerr == Z_STREAM_END) {
                gzclose(f);
                *size = b.size;
                return b.data;
            }
            fprintf(stderr, "pptraj: %s: %s\n", path, msg);
            gzclose(f);
            free(b.data);
            return NULL;
        }
    }
    int zerr;
    const char *msg = gzerror(f, &zerr);
    fprintf(stderr, "pptraj: cannot read %s: %s\n", path, zerr == Z_ERRNO ? strerror(errno) : msg);
    gzclose(f);
    free(b.data);
    return NULL;
}

static json_object *parse_json(const unsigned char *text, size_t bytes)
{
    json_tokener *tok = json_tokener_new();
    if (!tok) return NULL;
    json_object *o = json_tokener_parse_ex(tok, (const char *)text, (int)bytes);
    if (json_tokener_get_error(tok) != json_tokener_success ||
        json_tokener_get_parse_end(tok) != bytes) { /* trailing bytes after the object */
        json_object_put(o);
        o = NULL;
    }
    json_tokener_free(tok);
    return o;
}

static char *json_strdup(json_object *o, const char *key)
{
    json_object *v;
    const char *s = json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
    return strdup(s ? s : "");
}

static int read_header(pp_traj *t, json_object *o)
{
    json_object *v;
    if (!json_object_is_type(o, json_type_object) ||
        !json_object_object_get_ex(o, "format", &v) ||
        strcmp(json_object_get_string(v), "pptraj") != 0 ||
        !json_object_object_get_ex(o, "version", &v) || json_object_get_int(v) != 1)
        return -1;
    t->scene = json_strdup(o, "scene");
    t->model = json_strdup(o, "model");
    if (!t->scene || !t->model) return -1;
    t->h = json_object_object_get_ex(o, "h", &v) ? json_object_get_double(v) : 0;
    t->decimation = json_object_object_get_ex(o, "decimation", &v) ? json_object_get_int(v) : 0;
    t->static_geom_count = json_object_object_get_ex(o, "static_geoms", &v) &&
                                   json_object_is_type(v, json_type_array)
                               ? (int)json_object_array_length(v)
                               : 0;
    return t->decimation >= 1 ? 0 : -1;
}

static int read_body(pp_traj *t, json_object *o, const unsigned char *text, size_t bytes)
{
    json_object *v, *geoms;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "index", &v) ||
        json_object_get_int(v) != t->body_count ||
        !json_object_object_get_ex(o, "geoms", &geoms) || !json_object_is_type(geoms, json_type_array))
        return -1;
    int n = t->body_count + 1;
    char **names = realloc(t->body_names, sizeof *names * (size_t)n);
    if (names) t->body_names = names;
    char **classes = realloc(t->body_geom_class, sizeof *classes * (size_t)n);
    if (classes) t->body_geom_class = classes;
    int *counts = realloc(t->body_geom_count, sizeof *counts * (size_t)n);
    if (counts) t->body_geom_count = counts;
    char **records = realloc(t->body_records, sizeof *records * (size_t)n);
    if (records) t->body_records = records;
    if (!names || !classes || !counts || !records) return -1;
    json_object *first = json_object_array_length(geoms) ? json_object_array_get_idx(geoms, 0) : NULL;
    names[t->body_count] = json_strdup(o, "name");
    classes[t->body_count] = first ? json_strdup(first, "class") : strdup("");
    counts[t->body_count] = (int)json_object_array_length(geoms);
    records[t->body_count] = malloc(bytes + 1);
    if (records[t->body_count]) {
        memcpy(records[t->body_count], text, bytes);
        records[t->body_count][bytes] = '\0';
    }
    ++t->body_count;
    int i = t->body_count - 1;
    return names[i] && classes[i] && records[i] ? 0 : -1;
}

static int read_frame(pp_traj *t, const unsigned char *p, size_t bytes)
{
    if (bytes < 20) return -1;
    uint32_t n = get_u32(p + 4);
    if (n > (uint32_t)t->body_count || bytes < 20 + 56 * (size_t)n) return -1;
    uint32_t m = get_u32(p + 16 + 56 * (size_t)n);
    if (bytes != 20 + 56 * (size_t)n + 40 * (size_t)m) return -1;
    int f = t->frame_count, c = f + 1;
    int *steps = realloc(t->steps, sizeof *steps * (size_t)c);
    if (steps) t->steps = steps;
    double *times = realloc(t->times, sizeof *times * (size_t)c);
    if (times) t->times = times;
    int *bodies = realloc(t->body_count_at_frame, sizeof *bodies * (size_t)c);
    if (bodies) t->body_count_at_frame = bodies;
    double **poses = realloc(t->poses, sizeof *poses * (size_t)c);
    if (poses) t->poses = poses;
    int *ccount = realloc(t->contact_count, sizeof *ccount * (size_t)c);
    if (ccount) t->contact_count = ccount;
    pp_traj_contact **contacts = realloc(t->contacts, sizeof *contacts * (size_t)c);
    if (contacts) t->contacts = contacts;
    if (!steps || !times || !bodies || !poses || !ccount || !contacts) return -1;
    poses[f] = malloc(sizeof(double) * 7 * (n ? n : 1));
    contacts[f] = malloc(sizeof(pp_traj_contact) * (m ? m : 1));
    t->frame_count = c; /* from here pp_traj_free frees frame f */
    if (!poses[f] || !contacts[f]) return -1;
    steps[f] = (int)get_u32(p);
    bodies[f] = (int)n;
    times[f] = get_f64(p + 8);
    for (size_t k = 0; k < 7 * (size_t)n; ++k) poses[f][k] = get_f64(p + 16 + 8 * k);
    ccount[f] = (int)m;
    const unsigned char *q = p + 20 + 56 * (size_t)n;
    for (uint32_t k = 0; k < m; ++k, q += 40) {
        pp_traj_contact *ct = &contacts[f][k];
        ct->body_a = (int32_t)get_u32(q);
        ct->body_b = (int32_t)get_u32(q + 4);
        ct->depth = get_f64(q + 8);
        for (int j = 0; j < 3; ++j) ct->point[j] = get_f64(q + 16 + 8 * j);
        if (ct->body_a < -1 || ct->body_a >= (int)n || ct->body_b < -1 || ct->body_b >= (int)n)
            return -1;
    }
    return 0;
}

int pp_traj_load(const char *path, pp_traj *out)
{
    memset(out, 0, sizeof *out);
    size_t size;
    unsigned char *data = read_all(path, &size);
    if (!data) return -1;
    const char *problem = NULL;
    size_t at = 0;
    int have_header = 0;
    if (size < 8 || memcmp(data, pp_traj_magic, 8) != 0) problem = "not a pptraj file (bad magic)";
    else at = 8;
    while (!problem && at < size) {
        if (size - at < 8) {
            problem = "truncated record header";
            break;
        }
        uint32_t tag = get_u32(data + at), bytes = get_u32(data + at + 4);
        const unsigned char *payload = data + at + 8;
        if (size - at - 8 < bytes) {
            problem = "truncated record";
            break;
        }
        if (!have_header && tag != PP_TRAJ_TAG_HEADER) {
            problem = "the first record is not a HEADER";
            break;
        }
        if (tag == PP_TRAJ_TAG_HEADER || tag == PP_TRAJ_TAG_BODY) {
            json_object *o = parse_json(payload, bytes);
            if (!o) problem = "bad JSON in a HEADER or BODY record";
            else if (tag == PP_TRAJ_TAG_HEADER && (have_header || read_header(out, o) != 0))
                problem = "bad or repeated HEADER record";
            else if (tag == PP_TRAJ_TAG_BODY && read_body(out, o, payload, bytes) != 0)
                problem = "bad BODY record (index out of order, no geoms, or out of memory)";
            have_header = 1;
            json_object_put(o);
        } else if (tag == PP_TRAJ_TAG_FRAME) {
            if (read_frame(out, payload, bytes) != 0)
                problem = "bad FRAME record (size, body count or contact bodies, or out of memory)";
        } /* unknown tags are skipped */
        at += 8 + (size_t)bytes;
    }
    if (!problem && !have_header) problem = "no HEADER record";
    free(data);
    if (problem) {
        fprintf(stderr, "pptraj: %s: %s at byte %zu\n", path, problem, at);
        pp_traj_free(out);
        return -1;
    }
    return 0;
}
