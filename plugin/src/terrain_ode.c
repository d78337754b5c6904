/*
 * Static trimesh and heightfield geoms as terrain under the pegplus models (docs/design.md
 * "Terrain"). Stage 1 reads each such geom's triangles from ODE (world frame) into a
 * pp_terrain (contact/, pegplus/terrain.h), rebuilt only when the geom's pose or data change;
 * stage 2 adds as static polytope shapes only the triangles whose prisms are near a moving
 * shape; stages 3-5 put the internal-edge rule on their contacts.
 *
 * Triangles: a trimesh's from dGeomTriMeshGetTriangle (world frame, ODE's winding: front
 * side (v1 - v0) x (v2 - v0)). A heightfield's samples cannot be read back through ODE's API,
 * so they are captured when the data is built (interpose_probe.c) or registered
 * (pp_world_register_heightfield); its triangles follow ODE 0.16's heightfield.cpp: sample
 * (x, z) at local (x w/(nx - 1) - w/2, scale h(x, z) + offset, z d/(nz - 1) - d/2), y up,
 * and cell (x, z) with corners A (x, z), B (x + 1, z), C (x, z + 1), D (x + 1, z + 1) split
 * along B-C into the triangles A, C, B and D, B, C (written here counter-clockwise seen from
 * +y, ODE's lists them the other way).
 */
#include "world_internal.h"

#include "pegplus/terrain.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct pp_terrain_record {
    dGeomID geom;
    pp_terrain *terrain;
    double signature[14];          /* pose (position, rotation) the triangles were read at */
    const void *data;              /* the trimesh or heightfield data they came from */
    int triangle_count;
    int active;                    /* collected at the current step */
} pp_terrain_record;

/* ---- Heightfield samples: captured builds (process-wide) and registrations -------------- */

static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static pp_heightfield_record *captured;
static int captured_count, captured_capacity;

static void record_free(pp_heightfield_record *r)
{
    free(r->copied);
    r->copied = NULL;
}

/* Copy the samples when ODE copies them (bCopyHeightData), as doubles (exact for every type). */
static int record_copy(pp_heightfield_record *r, int copy)
{
    r->copied = NULL;
    if (r->type == 0 || !copy) return 1;
    const void *from = r->samples;
    size_t n = (size_t)r->width_samples * (size_t)r->depth_samples;
    double *to = malloc(n * sizeof(double));
    if (!to) return 0;
    for (size_t i = 0; i < n; ++i)
        switch (r->type) {
        case 1: to[i] = ((const unsigned char *)from)[i]; break;
        case 2: to[i] = ((const short *)from)[i]; break;
        case 3: to[i] = ((const float *)from)[i]; break;
        default: to[i] = ((const double *)from)[i]; break;
        }
    r->copied = to;
    r->samples = NULL;
    return 1;
}

void pp_heightfield_capture(const pp_heightfield_record *record, int copy)
{
    pp_heightfield_record r = *record;
    if (!record_copy(&r, copy)) {
        pp_log(PP_LOG_ERROR, "dHeightfieldDataID %p: out of memory copying its samples; the "
                             "pegplus models will refuse its geoms", (void *)r.data);
        return;
    }
    pthread_mutex_lock(&capture_lock);
    int i = 0;
    while (i < captured_count && captured[i].data != r.data) ++i;
    if (i < captured_count) {
        record_free(&captured[i]);
        captured[i] = r;
    } else if (pp_grow((void **)&captured, &captured_capacity, captured_count + 1,
                       sizeof *captured) == PP_OK) {
        captured[captured_count++] = r;
    } else {
        record_free(&r);
    }
    pthread_mutex_unlock(&capture_lock);
}

void pp_heightfield_capture_forget(dHeightfieldDataID data)
{
    pthread_mutex_lock(&capture_lock);
    for (int i = 0; i < captured_count; ++i)
        if (captured[i].data == data) {
            record_free(&captured[i]);
            captured[i] = captured[--captured_count];
            break;
        }
    pthread_mutex_unlock(&capture_lock);
}

pp_status pp_world_register_heightfield(pp_world *world, dHeightfieldDataID data,
                                        const double *heights, int copy_heights, double width,
                                        double depth, int width_samples, int depth_samples,
                                        double scale, double offset, double thickness, int wrap)
{
    if (!world || !data || !heights) {
        pp_log(PP_LOG_ERROR, "pp_world_register_heightfield: NULL world, data or heights");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (!(isfinite(width) && width > 0.0 && isfinite(depth) && depth > 0.0) ||
        width_samples < 2 || depth_samples < 2 || !isfinite(scale) || !isfinite(offset) ||
        !isfinite(thickness) || (size_t)width_samples * (size_t)depth_samples > (size_t)INT_MAX) {
        pp_log(PP_LOG_ERROR, "pp_world_register_heightfield: dHeightfieldDataID %p: width %g "
                             "and depth %g must be finite and > 0, at least 2 samples each way "
                             "(%d x %d), scale, offset and thickness finite", (void *)data, width,
               depth, width_samples, depth_samples);
        return PP_ERR_INVALID_ARGUMENT;
    }
    pp_heightfield_record r = {data, 4, heights, NULL, NULL, NULL, width, depth, scale, offset,
                               thickness, width_samples, depth_samples, wrap};
    if (!record_copy(&r, copy_heights)) return PP_ERR_NO_MEMORY;
    int i = 0;
    while (i < world->heightfield_count && world->heightfields[i].data != data) ++i;
    if (i == world->heightfield_count) {
        pp_status st = pp_grow((void **)&world->heightfields, &world->heightfield_capacity,
                               world->heightfield_count + 1, sizeof(pp_heightfield_record));
        if (st != PP_OK) {
            record_free(&r);
            return st;
        }
        world->heightfield_count++;
    } else {
        record_free(&world->heightfields[i]);
    }
    world->heightfields[i] = r;
    for (int t = 0; t < world->terrain_count; ++t) /* read again at the next step */
        world->terrains[t].data = NULL;
    return PP_OK;
}

pp_status pp_world_unregister_heightfield(pp_world *world, dHeightfieldDataID data)
{
    if (!world || !data) {
        pp_log(PP_LOG_ERROR, "pp_world_unregister_heightfield: NULL world or data");
        return PP_ERR_NULL_ARGUMENT;
    }
    for (int i = 0; i < world->heightfield_count; ++i)
        if (world->heightfields[i].data == data) {
            record_free(&world->heightfields[i]);
            world->heightfields[i] = world->heightfields[--world->heightfield_count];
            return PP_OK;
        }
    pp_log(PP_LOG_ERROR, "pp_world_unregister_heightfield: dHeightfieldDataID %p is not "
                         "registered with this world", (void *)data);
    return PP_ERR_INVALID_ARGUMENT;
}

/* Sample (x, z) as ODE's dxHeightfieldData::GetHeight(int, int) of a finite field reads it. */
static double sample(const pp_heightfield_record *r, int x, int z)
{
    size_t i = (size_t)x + (size_t)z * (size_t)r->width_samples;
    double h;
    if (r->type == 0) h = r->callback(r->user, x, z);
    else if (r->copied) h = r->copied[i];
    else if (r->type == 1) h = ((const unsigned char *)r->samples)[i];
    else if (r->type == 2) h = ((const short *)r->samples)[i];
    else if (r->type == 3) h = ((const float *)r->samples)[i];
    else h = ((const double *)r->samples)[i];
    return h * r->scale + r->offset;
}

/* ---- Reading the triangles --------------------------------------------------------------- */

/* The geom's pose: dGeomGetRelPointPos maps local points (identity for a non-placeable geom,
 * where dGeomGetPosition would be an error). */
static void geom_pose(dGeomID g, double signature[14])
{
    dVector3 o, e;
    dGeomGetRelPointPos(g, 0, 0, 0, o);
    for (int k = 0; k < 3; ++k) signature[k] = o[k];
    for (int c = 0; c < 3; ++c) {
        dGeomGetRelPointPos(g, c == 0, c == 1, c == 2, e);
        for (int k = 0; k < 3; ++k) signature[3 + 3 * k + c] = e[k] - o[k];
    }
    signature[12] = signature[13] = 0.0;
}

static const pp_heightfield_record *find_heightfield(const pp_world *world, dHeightfieldDataID d,
                                                     pp_heightfield_record *copy)
{
    for (int i = 0; i < world->heightfield_count; ++i)
        if (world->heightfields[i].data == d) return &world->heightfields[i];
    const pp_heightfield_record *found = NULL;
    pthread_mutex_lock(&capture_lock);
    for (int i = 0; i < captured_count && !found; ++i)
        if (captured[i].data == d) {
            *copy = captured[i]; /* its arrays live until the data is destroyed */
            found = copy;
        }
    pthread_mutex_unlock(&capture_lock);
    return found;
}

/* A heightfield's triangles (world frame): 2 per cell, 18 doubles per cell. */
static double *heightfield_triangles(const pp_heightfield_record *r, const double pose[14],
                                     int *count)
{
    const int nx = r->width_samples, nz = r->depth_samples;
    const double sw = r->width / (nx - 1), sd = r->depth / (nz - 1);
    size_t n = 2 * (size_t)(nx - 1) * (size_t)(nz - 1);
    double *t = malloc(9 * n * sizeof(double));
    if (!t) return NULL;
    double *w = t;
    for (int x = 0; x + 1 < nx; ++x)
        for (int z = 0; z + 1 < nz; ++z) {
            /* corners A, B, C, D; the triangles A, C, B and D, B, C */
            static const int corner[6][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {1, 0}, {0, 1}};
            for (int v = 0; v < 6; ++v) {
                const int i = x + corner[v][0], j = z + corner[v][1];
                const double local[3] = {i * sw - 0.5 * r->width, sample(r, i, j),
                                         j * sd - 0.5 * r->depth};
                for (int k = 0; k < 3; ++k)
                    *w++ = pose[k] + pose[3 + 3 * k] * local[0] + pose[4 + 3 * k] * local[1] +
                           pose[5 + 3 * k] * local[2];
            }
        }
    *count = (int)n;
    return t;
}

static double *trimesh_triangles(dGeomID g, int *count)
{
    int n = dGeomTriMeshGetTriangleCount(g);
    double *t = malloc(9 * (size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!t) return NULL;
    for (int i = 0; i < n; ++i) {
        dVector3 v[3];
        dGeomTriMeshGetTriangle(g, i, &v[0], &v[1], &v[2]);
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 3; ++k) t[9 * i + 3 * j + k] = v[j][k];
    }
    *count = n;
    return t;
}

static pp_terrain_record *find_record(pp_world *world, dGeomID g)
{
    for (int i = 0; i < world->terrain_count; ++i)
        if (world->terrains[i].geom == g) return &world->terrains[i];
    return NULL;
}

/* Records of geoms not collected at the last step are dropped (a destroyed geom's address can
 * come back as a new geom); the others wait to be collected again. */
void pp_terrain_begin_collect(pp_world *world)
{
    int kept = 0;
    for (int i = 0; i < world->terrain_count; ++i) {
        if (!world->terrains[i].active) {
            pp_terrain_destroy(world->terrains[i].terrain);
            continue;
        }
        world->terrains[i].active = 0;
        world->terrains[kept++] = world->terrains[i];
    }
    world->terrain_count = kept;
}

int pp_terrain_geom(pp_world *world, dGeomID g, pp_status *st, const char **refusal)
{
    const int cls = dGeomGetClass(g);
    *st = PP_OK;
    *refusal = NULL;
    if (cls != dTriMeshClass && cls != dHeightfieldClass) return 0;
    if (dGeomGetBody(g)) {
        *refusal = "a trimesh or heightfield on a body is not modelled (only static terrain: "
                   "a geom without a body)";
        return 1;
    }
    double pose[14];
    const void *data;
    pp_heightfield_record hf_copy;
    const pp_heightfield_record *hf = NULL;
    int tri_count = 0;
    geom_pose(g, pose);
    for (int k = 0; k < 12; ++k)
        if (!isfinite(pose[k])) {
            pp_log(PP_LOG_ERROR, "dGeomID %p (%s): position or rotation (dGeomSetPosition, "
                                 "dGeomSetRotation) is NaN or infinite; step rejected, nothing "
                                 "in ODE changed", (void *)g, pp_geom_class_name(g));
            *st = PP_ERR_INVALID_ARGUMENT;
            return 1;
        }
    if (cls == dTriMeshClass) {
        data = dGeomTriMeshGetTriMeshDataID(g);
        tri_count = dGeomTriMeshGetTriangleCount(g);
        if (tri_count <= 0) {
            *refusal = "the trimesh has no triangles";
            return 1;
        }
    } else {
        dHeightfieldDataID d = dGeomHeightfieldGetHeightfieldData(g);
        data = d;
        hf = find_heightfield(world, d, &hf_copy);
        if (!hf) {
            *refusal = "its samples are unknown (ODE cannot give them back): build the data "
                       "with libpegplus linked before libode or under pegplus-run (the "
                       "dGeomHeightfieldDataBuild* calls are watched), or call "
                       "pp_world_register_heightfield";
            return 1;
        }
        if (hf->wrap) {
            *refusal = "a wrapped (infinite, bWrap) heightfield is not modelled";
            return 1;
        }
        tri_count = 2 * (hf->width_samples - 1) * (hf->depth_samples - 1);
    }
    pp_terrain_record *r = find_record(world, g);
    if (r && r->data == data && r->triangle_count == tri_count &&
        memcmp(r->signature, pose, sizeof pose) == 0) {
        r->active = 1;
        return 1;
    }
    /* (re)read the triangles */
    int n = 0;
    double *tri = cls == dTriMeshClass ? trimesh_triangles(g, &n) : heightfield_triangles(hf, pose, &n);
    pp_terrain *terrain = NULL;
    *st = tri ? pp_terrain_create(tri, n, &terrain) : PP_ERR_NO_MEMORY;
    free(tri);
    if (*st != PP_OK) {
        pp_log(PP_LOG_ERROR, "dGeomID %p (%s): its %d triangles could not be read into a "
                             "terrain (%s)", (void *)g, pp_geom_class_name(g), n,
               pp_status_string(*st));
        return 1;
    }
    if (!r) {
        *st = pp_grow((void **)&world->terrains, &world->terrain_capacity,
                      world->terrain_count + 1, sizeof(pp_terrain_record));
        if (*st != PP_OK) {
            pp_terrain_destroy(terrain);
            return 1;
        }
        r = &world->terrains[world->terrain_count++];
        memset(r, 0, sizeof *r);
        r->geom = g;
    }
    pp_terrain_destroy(r->terrain);
    r->terrain = terrain;
    r->data = data;
    r->triangle_count = tri_count;
    memcpy(r->signature, pose, sizeof pose);
    r->active = 1;
    return 1;
}

void pp_terrain_records_free(pp_world *world)
{
    for (int i = 0; i < world->terrain_count; ++i) pp_terrain_destroy(world->terrains[i].terrain);
    free(world->terrains);
    world->terrains = NULL;
    world->terrain_count = world->terrain_capacity = 0;
    for (int i = 0; i < world->heightfield_count; ++i) record_free(&world->heightfields[i]);
    free(world->heightfields);
    world->heightfields = NULL;
    world->heightfield_count = world->heightfield_capacity = 0;
}

/* ---- Stage 2: the triangles near moving shapes ------------------------------------------- */

/*
 * Drops the triangle shapes of the last sub-step and appends, for every collected terrain,
 * the triangles whose prism's box meets a moving shape's box grown by eps + m_i (the reach of
 * stage 2's pairs: a triangle box grown by eps/2 meets one grown by eps/2 + m_i). Each is a
 * static polytope shape (world frame, identity pose) of the terrain's geom.
 */
pp_status pp_terrain_stage_shapes(pp_world *world)
{
    pp_step_scratch *s = &world->scratch;
    s->shape_count = s->geom_shape_count;
    const double eps = world->config.proximity_margin;
    for (int t = 0; t < world->terrain_count; ++t) {
        pp_terrain_record *r = &world->terrains[t];
        if (!r->active) continue;
        pp_terrain_round(r->terrain);
        int hits = 0;
        pp_status st = PP_OK;
        for (int i = 0; i < s->geom_shape_count && st == PP_OK; ++i) {
            if (s->shape_body[i] < 0 || s->shapes[i].kind == PP_SHAPE_PLANE) continue;
            pp_aabb box;
            pp_shape_aabb(&s->shapes[i], eps + s->shape_motion[i], &box);
            st = pp_terrain_query(r->terrain, &box, &s->terrain_hits, &hits,
                                  &s->terrain_hit_capacity);
        }
        if (st == PP_OK) st = pp_bridge_grow_shapes(world, s->shape_count + hits);
        if (st != PP_OK) return st;
        for (int h = 0; h < hits; ++h) {
            const pp_polytope *prism = NULL;
            st = pp_terrain_prism(r->terrain, s->terrain_hits[h], &prism);
            if (st == PP_ERR_DEGENERATE) continue;
            if (st != PP_OK) return st;
            int k = s->shape_count++;
            s->shapes[k] = pp_shape_make_polytope(prism, NULL, NULL);
            s->shape_geom[k] = r->geom;
            s->shape_body[k] = -1;
            s->shape_motion[k] = 0.0;
            s->is_static[k] = 1;
            s->shape_terrain[k] = r->terrain;
            s->shape_triangle[k] = s->terrain_hits[h];
        }
    }
    return PP_OK;
}

/* ---- Stages 3-5: the internal-edge rule ---------------------------------------------------- */

static double core_radius(const pp_shape *s)
{
    return s->kind == PP_SHAPE_SPHERE || s->kind == PP_SHAPE_CAPSULE ? s->radius : 0.0;
}

/* The contact seen from the terrain: the other shape's point and the normal out of the
 * terrain (terrain_is_a: the terrain is the contact's A). */
static void terrain_view(const pp_contact *c, int terrain_is_a, double p_other[3], double n[3])
{
    for (int k = 0; k < 3; ++k) {
        p_other[k] = terrain_is_a ? c->p_a[k] + c->psi * c->n[k] : c->p_a[k];
        n[k] = terrain_is_a ? c->n[k] : -c->n[k];
    }
}

/*
 * The pair (a, b)'s new contacts list[first, count), one of them a terrain triangle: the rule
 * of pegplus/terrain.h on each (dropping a flat region's corners), then those that repeat a contact of the same shape with the
 * same terrain (same point on the shape and gap within 1e-9 m, same normal within 1e-12) are
 * dropped: a ball over the edge of two flat triangles gets one contact, not two equal rows
 * (which would make the LCP matrix singular). Earlier contacts list[0, first) are labelled
 * (shape_a, shape_b). Returns the new count.
 */
int pp_terrain_pair_rule(const pp_step_scratch *s, pp_contact *list, int first, int count,
                         int a, int b)
{
    const pp_terrain *ta = s->shape_terrain[a], *tb = s->shape_terrain[b];
    if (!ta && !tb) return count;
    const int terrain_is_a = ta != NULL, t = terrain_is_a ? a : b, o = terrain_is_a ? b : a;
    const pp_terrain *terrain = s->shape_terrain[t];
    const double r = core_radius(&s->shapes[o]);
    int kept = first;
    for (int c = first; c < count; ++c) {
        if (!pp_terrain_contact_rule(terrain, s->shape_triangle[t], terrain_is_a, r, &list[c]))
            continue;
        double p[3], n[3];
        terrain_view(&list[c], terrain_is_a, p, n);
        int duplicate = 0;
        for (int j = 0; j < kept && !duplicate; ++j) {
            int j_terrain_is_a = terrain_is_a;
            if (j < first) {
                if (list[j].shape_b == o && s->shape_terrain[list[j].shape_a] == terrain)
                    j_terrain_is_a = 1;
                else if (list[j].shape_a == o && s->shape_terrain[list[j].shape_b] == terrain)
                    j_terrain_is_a = 0;
                else
                    continue;
            }
            double q[3], m[3];
            terrain_view(&list[j], j_terrain_is_a, q, m);
            double d2 = 0.0, dot = 0.0;
            for (int k = 0; k < 3; ++k) {
                d2 += (p[k] - q[k]) * (p[k] - q[k]);
                dot += n[k] * m[k];
            }
            duplicate = d2 < 1e-18 && dot > 1.0 - 1e-12 && fabs(list[c].psi - list[j].psi) < 1e-9;
        }
        if (!duplicate) list[kept++] = list[c];
    }
    return kept;
}
