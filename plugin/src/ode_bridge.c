/*
 * The bridge to ODE: find the bodies to manage (stage 1 discovery), check them, copy their
 * state out (snapshot) and write the result back (stage 9). Only plugin/ talks to ODE.
 *
 * ODE 0.16 has no public list of a world's bodies (docs/references.md): they are found through the
 * space tree (geom -> body), the joint graph (body -> joint -> body) and explicit registration.
 */
#include "world_internal.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(dReal) == sizeof(double), "pegplus needs ODE built in double precision");

/* The body list is indexed by an open-addressing hash of dBodyID -> index (rebuilt at every
 * collect), so finding the bodies of n geoms costs O(n), not O(n^2). */
static unsigned body_slot(dBodyID body, int capacity)
{
    uintptr_t x = (uintptr_t)body;
    x ^= x >> 33;
    x *= (uintptr_t)0xff51afd7ed558ccdULL;
    x ^= x >> 29;
    return (unsigned)x & (unsigned)(capacity - 1);
}

int pp_bridge_find_body(const pp_world *world, dBodyID body)
{
    if (world->body_table_capacity == 0) return -1;
    int mask = world->body_table_capacity - 1;
    for (unsigned i = body_slot(body, world->body_table_capacity);; i = (i + 1) & (unsigned)mask) {
        int b = world->body_table[i];
        if (b < 0) return -1;
        if (world->bodies[b].id == body) return b;
    }
}

/* Index body b (already in world->bodies), growing the table to twice the body count. */
static pp_status index_body(pp_world *world, int b)
{
    if (2 * (world->body_count + 1) > world->body_table_capacity) {
        int cap = world->body_table_capacity ? 2 * world->body_table_capacity : 64;
        while (cap < 2 * (world->body_count + 1)) cap *= 2;
        int *table = realloc(world->body_table, (size_t)cap * sizeof(int));
        if (!table) {
            pp_log(PP_LOG_ERROR, "out of memory indexing %d bodies", world->body_count);
            return PP_ERR_NO_MEMORY;
        }
        world->body_table = table;
        world->body_table_capacity = cap;
        for (int i = 0; i < cap; ++i) table[i] = -1;
        for (int i = 0; i < world->body_count; ++i)
            if (i != b) {
                unsigned slot = body_slot(world->bodies[i].id, cap);
                while (table[slot] >= 0) slot = (slot + 1) & (unsigned)(cap - 1);
                table[slot] = i;
            }
    }
    unsigned slot = body_slot(world->bodies[b].id, world->body_table_capacity);
    while (world->body_table[slot] >= 0) slot = (slot + 1) & (unsigned)(world->body_table_capacity - 1);
    world->body_table[slot] = b;
    return PP_OK;
}

/* Append a body once. Disabled bodies are not stepped (as in ODE) and are left out. */
static pp_status add_body(pp_world *world, dBodyID body)
{
    if (!dBodyIsEnabled(body) || pp_bridge_find_body(world, body) >= 0) return PP_OK;
    if (dBodyGetWorld(body) != world->ode_world) {
        pp_log(PP_LOG_ERROR, "body %p belongs to another ODE world than the pegplus world's",
               (void *)body);
        return PP_ERR_INVALID_ARGUMENT;
    }
    pp_status st = pp_grow((void **)&world->bodies, &world->body_capacity, world->body_count + 1,
                           sizeof(pp_body));
    if (st != PP_OK) return st;
    memset(&world->bodies[world->body_count], 0, sizeof(pp_body));
    world->bodies[world->body_count].id = body;
    st = index_body(world, world->body_count);
    if (st == PP_OK) world->body_count++;
    return st;
}

static pp_status walk_space(pp_world *world, dSpaceID space)
{
    int n = dSpaceGetNumGeoms(space);
    for (int i = 0; i < n; ++i) {
        dGeomID g = dSpaceGetGeom(space, i);
        pp_status st = PP_OK;
        if (dGeomIsSpace(g)) {
            st = walk_space(world, (dSpaceID)g);
        } else {
            st = pp_grow((void **)&world->geoms, &world->geom_capacity, world->geom_count + 1,
                         sizeof(dGeomID));
            if (st == PP_OK) world->geoms[world->geom_count++] = g;
        }
        if (st != PP_OK) return st;
    }
    return PP_OK;
}

/*
 * A stable order of the geoms. ODE's spaces reorder their geoms as they work: dGeomMoved
 * (every dBodySetPosition) and dSpaceCollide move geoms within the space's list, so
 * dSpaceGetGeom's order depends on what the program did between steps (a dSpaceCollide the
 * program calls for its own purposes, a trajectory writer's query, a step under
 * PP_MODEL_ODE). The order of the geoms is the order of the bodies, of the shapes, of the
 * pairs and of the LCP's unknowns, and rounding depends on it: a heap of 20 boxes took 952 or
 * 1 838 pivots over two steps depending on a dSpaceCollide with a callback that did nothing.
 * So geoms are ordered by when pegplus first saw them (their order in the space at that
 * step), which no later reordering of the space changes. Table: open addressing on the
 * pointer; entries of geoms not seen at a collect are dropped (a destroyed geom's address can
 * come back as a new geom, which then takes a new place).
 */
typedef struct order_record {
    unsigned seq, index;
} order_record;

struct pp_geom_order {
    dGeomID *key;       /* NULL = empty slot */
    unsigned *seq;      /* when first seen */
    int capacity;       /* a power of two, at least twice the geoms */
    unsigned next;      /* the next geom's number */
    order_record *rec;  /* scratch: (seq, index) of this collect's geoms */
    dGeomID *sorted;    /* scratch */
    int scratch_capacity;
};

static unsigned geom_slot(dGeomID g, int capacity)
{
    return body_slot((dBodyID)(void *)g, capacity);
}

static int by_seq(const void *a, const void *b)
{
    const unsigned x = ((const order_record *)a)->seq, y = ((const order_record *)b)->seq;
    return (x > y) - (x < y);
}

/* world->geoms in first-seen order; the table then holds exactly these geoms. */
static pp_status order_geoms(pp_world *world)
{
    if (!world->geom_order && !(world->geom_order = calloc(1, sizeof *world->geom_order)))
        return PP_ERR_NO_MEMORY;
    struct pp_geom_order *o = world->geom_order;
    const int n = world->geom_count;
    void **const arrays[2] = {(void **)&o->rec, (void **)&o->sorted};
    const size_t sizes[2] = {sizeof *o->rec, sizeof *o->sorted};
    pp_status st = pp_grow_together(arrays, sizes, 2, &o->scratch_capacity, n + 1);
    if (st != PP_OK) return st;
    for (int i = 0; i < n; ++i) {
        o->rec[i].seq = 0;
        o->rec[i].index = (unsigned)i;
        int known = 0;
        for (unsigned s = o->capacity ? geom_slot(world->geoms[i], o->capacity) : 0;
             o->capacity && o->key[s]; s = (s + 1) & (unsigned)(o->capacity - 1))
            if (o->key[s] == world->geoms[i]) {
                o->rec[i].seq = o->seq[s];
                known = 1;
                break;
            }
        if (!known) o->rec[i].seq = o->next++;
    }
    if (n > 0) { /* (no geoms: world->geoms may be NULL) */
        qsort(o->rec, (size_t)n, sizeof *o->rec, by_seq);
        for (int i = 0; i < n; ++i) o->sorted[i] = world->geoms[o->rec[i].index];
        memcpy(world->geoms, o->sorted, (size_t)n * sizeof *world->geoms);
    }
    /* the table becomes exactly this collect's geoms */
    if (o->capacity < 2 * (n + 1)) {
        int capacity = 16;
        while (capacity < 2 * (n + 1)) capacity *= 2;
        dGeomID *key = malloc((size_t)capacity * sizeof *key);
        unsigned *seq = malloc((size_t)capacity * sizeof *seq);
        if (!key || !seq) {
            free(key);
            free(seq);
            return PP_ERR_NO_MEMORY;
        }
        free(o->key);
        free(o->seq);
        o->key = key;
        o->seq = seq;
        o->capacity = capacity;
    }
    memset(o->key, 0, (size_t)o->capacity * sizeof *o->key);
    for (int i = 0; i < n; ++i) {
        unsigned s = geom_slot(world->geoms[i], o->capacity);
        while (o->key[s]) s = (s + 1) & (unsigned)(o->capacity - 1);
        o->key[s] = world->geoms[i];
        o->seq[s] = o->rec[i].seq;
    }
    return PP_OK;
}

void pp_bridge_order_free(pp_world *world)
{
    struct pp_geom_order *o = world->geom_order;
    if (!o) return;
    free(o->key);
    free(o->seq);
    free(o->rec);
    free(o->sorted);
    free(o);
    world->geom_order = NULL;
}

pp_status pp_bridge_collect(pp_world *world)
{
    pp_status st = PP_OK;
    world->body_count = 0;
    world->geom_count = 0;
    for (int i = 0; i < world->body_table_capacity; ++i) world->body_table[i] = -1;
    if (world->space) st = walk_space(world, world->space);
    if (st == PP_OK) st = order_geoms(world);
    for (int i = 0; st == PP_OK && i < world->geom_count; ++i)
        if (dGeomGetBody(world->geoms[i])) st = add_body(world, dGeomGetBody(world->geoms[i]));
    for (int i = 0; st == PP_OK && i < world->registered_count; ++i)
        st = add_body(world, world->registered[i]);
    /* The joint graph: breadth first over the growing body list. */
    for (int i = 0; st == PP_OK && i < world->body_count; ++i) {
        dBodyID b = world->bodies[i].id;
        int joints = dBodyGetNumJoints(b);
        for (int j = 0; st == PP_OK && j < joints; ++j) {
            dJointID joint = dBodyGetJoint(b, j);
            for (int k = 0; st == PP_OK && k < 2; ++k) {
                dBodyID other = dJointGetBody(joint, k);
                if (other) st = add_body(world, other);
            }
        }
    }
    return st;
}


static int finite_array(const dReal *a, int n)
{
    for (int i = 0; i < n; ++i)
        if (!isfinite(a[i])) return 0;
    return 1;
}

/* Names the first problem of one body in ODE's words (the setter that put it there), or
 * returns NULL when it is fine. Every model checks this before a step touches ODE: stock ODE
 * takes a NaN mass (dMassCheck's "mass <= 0" and Cholesky tests are false for NaN) and steps
 * it to NaN, and aborts inside dWorldStep on a NaN inertia. */
const char *pp_body_problem(const pp_body *b)
{
    /* a denormal mass passes dMassCheck, but 1/m is infinite: dWorldStep then writes NaN (or
     * aborts in dxNormalize4), found by fuzz_step */
    if (!isfinite(b->mass) || b->mass <= 0.0 || !isfinite(1.0 / b->mass))
        return "mass (dMass.mass, dBodySetMass) is zero, negative, not finite or too small to "
               "invert";
    for (int i = 0; i < 9; ++i)
        if (!isfinite(b->inertia_body[i])) return "inertia tensor (dMass.I, dBodySetMass) is not finite";
    if (b->inertia_body[0] <= 0.0 || b->inertia_body[4] <= 0.0 || b->inertia_body[8] <= 0.0)
        return "inertia tensor (dMass.I, dBodySetMass) has a non-positive diagonal";
    double inv[9];
    if (!pp_invert_inertia(inv, b->inertia_body)) return "inertia tensor (dMass.I, dBodySetMass) is singular";
    for (int i = 0; i < 9; ++i)
        if (!isfinite(inv[i])) return "inertia tensor (dMass.I, dBodySetMass) is too small to invert";
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(b->x[k])) return "position (dBodySetPosition) is NaN or infinite";
        if (!isfinite(b->v[k])) return "linear velocity (dBodySetLinearVel) is NaN or infinite";
        if (!isfinite(b->w[k])) return "angular velocity (dBodySetAngularVel) is NaN or infinite";
        if (!isfinite(b->force[k])) return "force accumulator (dBodyAddForce, dBodySetForce) is NaN or infinite";
        if (!isfinite(b->torque[k])) return "torque accumulator (dBodyAddTorque, dBodySetTorque) is NaN or infinite";
        if (!isfinite(b->finite_rotation_axis[k]))
            return "finite rotation axis (dBodySetFiniteRotationAxis) is NaN or infinite";
    }
    double qn = 0.0;
    for (int k = 0; k < 4; ++k) {
        if (!isfinite(b->q[k])) return "quaternion (dBodySetQuaternion) is NaN or infinite";
        qn += b->q[k] * b->q[k];
    }
    if (qn < 0.5 || qn > 2.0) return "quaternion (dBodySetQuaternion) is far from unit length";
    /* ODE: damping scales "should be in the interval [0, 1]"; thresholds and the maximum
     * angular speed are compared with speeds (dInfinity allowed, NaN would disable them) */
    if (!(b->linear_damping >= 0.0 && b->linear_damping <= 1.0))
        return "linear damping (dBodySetLinearDamping) is not in [0, 1]";
    if (!(b->angular_damping >= 0.0 && b->angular_damping <= 1.0))
        return "angular damping (dBodySetAngularDamping) is not in [0, 1]";
    if (!(b->linear_threshold2 >= 0.0))
        return "linear damping threshold (dBodySetLinearDampingThreshold) is NaN";
    if (!(b->angular_threshold2 >= 0.0))
        return "angular damping threshold (dBodySetAngularDampingThreshold) is NaN";
    if (!(b->max_angular_speed >= 0.0))
        return "maximum angular speed (dBodySetMaxAngularSpeed) is negative or NaN";
    return NULL;
}

static void copy_rotation(double R[9], const dReal *ode_R)
{
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) R[3 * r + c] = ode_R[4 * r + c];
}

static void read_body(pp_body *b)
{
    dBodyID id = b->id;
    dMass m;
    dBodyGetMass(id, &m);
    b->mass = m.mass;
    b->kinematic = dBodyIsKinematic(id);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) b->inertia_body[3 * r + c] = m.I[4 * r + c];
    const dReal *x = dBodyGetPosition(id), *q = dBodyGetQuaternion(id);
    const dReal *v = dBodyGetLinearVel(id), *w = dBodyGetAngularVel(id);
    const dReal *f = dBodyGetForce(id), *t = dBodyGetTorque(id);
    for (int k = 0; k < 3; ++k) {
        b->x[k] = x[k];
        b->v[k] = v[k];
        b->w[k] = w[k];
        b->force[k] = f[k];
        b->torque[k] = t[k];
    }
    for (int k = 0; k < 4; ++k) b->q[k] = q[k];
    copy_rotation(b->R, dBodyGetRotation(id));
    b->gravity = dBodyGetGravityMode(id) != 0;
    b->gyroscopic = dBodyGetGyroscopicMode(id) != 0; /* ODE returns the flag value (256) */
    b->finite_rotation = dBodyGetFiniteRotationMode(id) != 0;
    dVector3 axis;
    dBodyGetFiniteRotationAxis(id, axis);
    for (int k = 0; k < 3; ++k) b->finite_rotation_axis[k] = axis[k];
    b->finite_rotation_axis_set = axis[0] != 0 || axis[1] != 0 || axis[2] != 0;
    b->linear_damping = dBodyGetLinearDamping(id);
    b->angular_damping = dBodyGetAngularDamping(id);
    double lt = dBodyGetLinearDampingThreshold(id), at = dBodyGetAngularDampingThreshold(id);
    b->linear_threshold2 = lt * lt;
    b->angular_threshold2 = at * at;
    b->max_angular_speed = dBodyGetMaxAngularSpeed(id);
}

pp_status pp_bridge_snapshot(pp_world *world, double h)
{
    (void)h;
    for (int i = 0; i < world->body_count; ++i) {
        pp_body *b = &world->bodies[i];
        read_body(b);
        const char *problem = pp_body_problem(b);
        if (problem) {
            const dReal *x = dBodyGetPosition(b->id);
            pp_log(PP_LOG_ERROR, "dBodyID %p (body %d of the step, at %g %g %g): %s; step "
                                 "rejected, nothing in ODE changed", (void *)b->id, i, x[0], x[1],
                   x[2], problem);
            return PP_ERR_INVALID_ARGUMENT;
        }
        if (b->kinematic) {
            b->inv_mass = 0.0;
            memset(b->inv_inertia_body, 0, sizeof b->inv_inertia_body);
        } else {
            b->inv_mass = 1.0 / b->mass;
            pp_invert_inertia(b->inv_inertia_body, b->inertia_body);
        }
    }
    return PP_OK;
}

static pp_status reject_world(dWorldID w, const char *problem, double value)
{
    pp_log(PP_LOG_ERROR, "dWorldID %p: %s (got %g); step rejected, nothing in ODE changed",
           (void *)w, problem, value);
    return PP_ERR_INVALID_ARGUMENT;
}

/* The world's parameters a step reads, in ODE's words. Gravity, ERP and CFM are read by every
 * model (the pegplus models use ERP and CFM for joints); the contact parameters and the
 * QuickStep ones only by ODE itself. dInfinity is allowed where it is ODE's default. */
pp_status pp_bridge_validate_world(const pp_world *world)
{
    dWorldID w = world->ode_world;
    dVector3 g;
    dWorldGetGravity(w, g);
    for (int k = 0; k < 3; ++k)
        if (!isfinite(g[k])) return reject_world(w, "gravity (dWorldSetGravity) is NaN or infinite", g[k]);
    double erp = dWorldGetERP(w), cfm = dWorldGetCFM(w);
    if (!(erp >= 0.0 && erp <= 1.0)) return reject_world(w, "ERP (dWorldSetERP) is not in [0, 1]", erp);
    if (!(cfm >= 0.0) || !isfinite(cfm))
        return reject_world(w, "CFM (dWorldSetCFM) is negative, NaN or infinite", cfm);
    if (world->config.model != PP_MODEL_ODE) return PP_OK;
    double max_vel = dWorldGetContactMaxCorrectingVel(w), layer = dWorldGetContactSurfaceLayer(w);
    if (!(max_vel >= 0.0))
        return reject_world(w, "contact max correcting velocity (dWorldSetContactMaxCorrectingVel) "
                               "is negative or NaN", max_vel);
    if (!(layer >= 0.0) || !isfinite(layer))
        return reject_world(w, "contact surface layer (dWorldSetContactSurfaceLayer) is negative, "
                               "NaN or infinite", layer);
    if (world->config.ode_stepper != PP_ODE_QUICK_STEP) return PP_OK;
    double sor = dWorldGetQuickStepW(w);
    if (!(sor > 0.0) || !isfinite(sor))
        return reject_world(w, "QuickStep over-relaxation (dWorldSetQuickStepW) is not finite and > 0", sor);
    if (dWorldGetQuickStepNumIterations(w) < 1)
        return reject_world(w, "QuickStep iterations (dWorldSetQuickStepNumIterations) are fewer than 1",
                            dWorldGetQuickStepNumIterations(w));
    return PP_OK;
}

/* ODE's name of a geom class, as in <ode/collision.h>. */
static const char *ode_class_name(int cls)
{
    switch (cls) {
    case dSphereClass: return "dSphereClass";
    case dBoxClass: return "dBoxClass";
    case dCapsuleClass: return "dCapsuleClass";
    case dCylinderClass: return "dCylinderClass";
    case dPlaneClass: return "dPlaneClass";
    case dRayClass: return "dRayClass";
    case dConvexClass: return "dConvexClass";
    case dGeomTransformClass: return "dGeomTransformClass";
    case dTriMeshClass: return "dTriMeshClass";
    case dHeightfieldClass: return "dHeightfieldClass";
    }
    return "a user geom class";
}

const char *pp_geom_class_name(dGeomID geom) { return ode_class_name(dGeomGetClass(geom)); }

static int finite_nonnegative(double x) { return isfinite(x) && x >= 0.0; }

/* ODE's dHashSpace files a geom under grid cells of side 2^level: level is the exponent of its
 * AABB's largest side q (0.5 * 2^level < q <= 2^level, frexp), raised to the space's minimum
 * level (dHashSpaceSetLevels; default -3..10); a geom above the maximum level, or with an
 * infinite AABB, goes to ODE's list of big boxes without cells. For the others ODE converts
 * floor(AABB bound / 2^level) to int and asserts that it fits ("aabbBound >= dMinIntExact &&
 * aabbBound < dMaxIntExact" in dxHashSpace::collide, an abort): a finite position far enough
 * from the origin (2^31 cells: 2.1e9 m for a 1 m box) aborts dSpaceCollide. Found by fuzz_step
 * (a body at 1e300 m). The same rule is applied here, before ODE is touched. */
static const char *hash_space_problem(dGeomID g)
{
    dSpaceID space = dGeomGetSpace(g);
    if (!space || dSpaceGetClass(space) != dHashSpaceClass) return NULL;
    int minlevel = 0, maxlevel = 0;
    dHashSpaceGetLevels(space, &minlevel, &maxlevel);
    dReal aabb[6];
    dGeomGetAABB(g, aabb);
    double q = 0.0;
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(aabb[2 * k]) || !isfinite(aabb[2 * k + 1])) return NULL; /* a big box */
        q = fmax(q, aabb[2 * k + 1] - aabb[2 * k]);
    }
    int level = 0;
    frexp(q, &level);
    if (level < minlevel) level = minlevel;
    if (level > maxlevel) return NULL; /* a big box */
    for (int k = 0; k < 6; ++k) {
        const double cell = floor(ldexp(aabb[k], -level));
        if (!(cell >= (double)INT_MIN && cell < (double)INT_MAX))
            return "bounding box is beyond the integer cells of its dHashSpace (|bound| / cell "
                   "side >= 2^31, cell side 2^level of dHashSpaceSetLevels; dSpaceCollide would "
                   "abort): position too far from the origin (dGeomSetPosition, dBodySetPosition)";
    }
    return NULL;
}

/* The first problem of one geom in ODE's words, or NULL. What ODE lets through and then
 * collides into NaN contacts (or aborts on: a NaN rotation fails dxNormalize3 inside
 * dCollide): a NaN pose of a static geom or a geom offset, a NaN or infinite plane offset or
 * ray length. dConvex, trimesh and heightfield data have no getter; the contacts dCollide
 * makes from them are checked instead (ode_baseline.c). */
/* The geom a dGeomTransform wraps. ODE 0.16 marks the transform class deprecated (geom
 * offsets replace it), but programs written for older ODE still use it. */
static dGeomID transform_inner(dGeomID g)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return dGeomTransformGetGeom(g);
#pragma GCC diagnostic pop
}

static const char *geom_problem(dGeomID g)
{
    int cls = dGeomGetClass(g);
    if (cls == dPlaneClass) {
        dVector4 p;
        dGeomPlaneGetParams(g, p);
        /* dGeomPlaneSetParams normalises (a, b, c) and keeps d */
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]) || !isfinite(p[3]))
            return "plane parameters (dCreatePlane, dGeomPlaneSetParams) are NaN or infinite";
        return NULL;
    }
    if (cls == dHeightfieldClass) /* may be non-placeable: its pose is checked in terrain_ode.c */
        return hash_space_problem(g);
    const dReal *x = dGeomGetPosition(g), *R = dGeomGetRotation(g);
    if (!finite_array(x, 3))
        return "position (dGeomSetPosition, or its body's and dGeomSetOffsetPosition) is NaN or infinite";
    for (int r = 0; r < 3; ++r)
        if (!finite_array(R + 4 * r, 3))
            return "rotation (dGeomSetRotation/Quaternion, or its body's and dGeomSetOffsetRotation) "
                   "is NaN or infinite";
    switch (cls) {
    case dSphereClass:
        if (!finite_nonnegative(dGeomSphereGetRadius(g))) return "radius (dGeomSphereSetRadius) is not finite and >= 0";
        break;
    case dBoxClass: {
        dVector3 l;
        dGeomBoxGetLengths(g, l);
        if (!finite_nonnegative(l[0]) || !finite_nonnegative(l[1]) || !finite_nonnegative(l[2]))
            return "side lengths (dGeomBoxSetLengths) are not finite and >= 0";
        break;
    }
    case dCapsuleClass:
    case dCylinderClass: {
        dReal radius, length;
        if (cls == dCapsuleClass) dGeomCapsuleGetParams(g, &radius, &length);
        else dGeomCylinderGetParams(g, &radius, &length);
        if (!finite_nonnegative(radius) || !finite_nonnegative(length))
            return cls == dCapsuleClass
                       ? "radius or length (dGeomCapsuleSetParams) is not finite and >= 0"
                       : "radius or length (dGeomCylinderSetParams) is not finite and >= 0";
        break;
    }
    case dRayClass:
        if (!finite_nonnegative(dGeomRayGetLength(g))) return "length (dGeomRaySetLength) is not finite and >= 0";
        break;
    }
    if (cls == dGeomTransformClass && transform_inner(g)) {
        /* the wrapped geom: its pose (relative to the transform) and size */
        const char *inner = geom_problem(transform_inner(g));
        if (inner) return inner;
    }
    return hash_space_problem(g);
}

/* PP_MODEL_ODE: dWorldStep's island walk enables a disabled body that a joint or one of the
 * step's contact joints joins to a stepped body (and so on through its joints), and steps it.
 * pp_bridge_collect leaves disabled bodies out, so those that dWorldStep will wake are checked
 * here, as pp_bridge_snapshot checks the others (found by fuzz_step: a disabled body with a NaN
 * linear damping, hit by another, came back with NaN velocity). `seeds` are the step's contact
 * bodies in pairs (NULL: a static geom); a disabled one counts when its partner is stepped.
 * The joints of the managed bodies are walked too. */
pp_status pp_bridge_validate_woken(const pp_world *world, const dBodyID *seeds, int seed_count)
{
    dBodyID *woken = NULL;
    int count = 0, capacity = 0;
    pp_status st = PP_OK;
    /* the candidates: contact bodies, then the joint neighbours of every managed body */
    const int managed = world->body_count;
    for (int i = 0; st == PP_OK && i < seed_count + managed; ++i) {
        dBodyID from = i < seed_count ? seeds[i] : world->bodies[i - seed_count].id;
        if (!from) continue;
        if (i < seed_count) { /* a contact wakes its body only if the other one is stepped */
            dBodyID partner = seeds[i ^ 1];
            if (!partner || !dBodyIsEnabled(partner)) continue;
        }
        const int joints = i < seed_count ? 0 : dBodyGetNumJoints(from);
        for (int j = i < seed_count ? -1 : 0; st == PP_OK && j < joints; ++j) {
            dBodyID b = from;
            if (j >= 0) {
                dJointID joint = dBodyGetJoint(from, j);
                b = dJointGetBody(joint, 0) == from ? dJointGetBody(joint, 1) : dJointGetBody(joint, 0);
            }
            if (!b || dBodyIsEnabled(b)) continue;
            int seen = 0;
            for (int k = 0; k < count && !seen; ++k) seen = woken[k] == b;
            if (seen) continue;
            st = pp_grow((void **)&woken, &capacity, count + 1, sizeof(dBodyID));
            if (st == PP_OK) woken[count++] = b;
        }
    }
    /* breadth first through the woken bodies' own joints, checking each */
    for (int i = 0; st == PP_OK && i < count; ++i) {
        pp_body b;
        memset(&b, 0, sizeof b);
        b.id = woken[i];
        read_body(&b);
        const char *problem = pp_body_problem(&b);
        if (problem) {
            const dReal *x = dBodyGetPosition(b.id);
            pp_log(PP_LOG_ERROR, "dBodyID %p (disabled, at %g %g %g; dWorldStep would enable it "
                                 "through a joint or contact): %s; step rejected, nothing in ODE "
                                 "changed", (void *)b.id, x[0], x[1], x[2], problem);
            st = PP_ERR_INVALID_ARGUMENT;
            break;
        }
        const int joints = dBodyGetNumJoints(woken[i]);
        for (int j = 0; st == PP_OK && j < joints; ++j) {
            dJointID joint = dBodyGetJoint(woken[i], j);
            dBodyID other = dJointGetBody(joint, 0) == woken[i] ? dJointGetBody(joint, 1)
                                                                : dJointGetBody(joint, 0);
            if (!other || dBodyIsEnabled(other)) continue;
            int seen = 0;
            for (int k = 0; k < count && !seen; ++k) seen = woken[k] == other;
            if (seen) continue;
            st = pp_grow((void **)&woken, &capacity, count + 1, sizeof(dBodyID));
            if (st == PP_OK) woken[count++] = other;
        }
    }
    free(woken);
    return st;
}

pp_status pp_bridge_validate_geoms(const pp_world *world)
{
    for (int i = 0; i < world->geom_count; ++i) {
        dGeomID g = world->geoms[i];
        if (!dGeomIsEnabled(g)) continue; /* ODE does not collide it */
        const char *problem = geom_problem(g);
        if (problem) {
            pp_log(PP_LOG_ERROR, "dGeomID %p (%s): %s; step rejected, nothing in ODE changed",
                   (void *)g, pp_geom_class_name(g), problem);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    return PP_OK;
}

pp_status pp_bridge_check_result(const pp_world *world)
{
    /* Everything is checked before anything is written, so that a non-finite result writes
     * nothing at all. A finite state can still be one ODE refuses: a quaternion whose squared
     * norm overflowed in the normalisation comes out zero, and dBodySetQuaternion aborts in
     * dxNormalize4 (found by fuzz_step with a gravity of 1e300); pp_body_problem names it
     * ("far from unit length"). */
    for (int i = 0; i < world->body_count; ++i) {
        if (!pp_body_is_finite(&world->bodies[i]) || pp_body_problem(&world->bodies[i])) {
            pp_log(PP_LOG_ERROR, "dBodyID %p: the step produced a non-finite state (%s); "
                   "nothing was written to ODE", (void *)world->bodies[i].id,
                   pp_body_problem(&world->bodies[i]) ? pp_body_problem(&world->bodies[i])
                                                       : "NaN or Inf");
            return PP_ERR_NUMERICAL;
        }
    }
    return PP_OK;
}

void pp_bridge_write_back(pp_world *world)
{
    for (int i = 0; i < world->body_count; ++i) {
        const pp_body *b = &world->bodies[i];
        dQuaternion q = {b->q[0], b->q[1], b->q[2], b->q[3]};
        dBodySetPosition(b->id, b->x[0], b->x[1], b->x[2]);
        dBodySetQuaternion(b->id, q);
        dBodySetLinearVel(b->id, b->v[0], b->v[1], b->v[2]);
        dBodySetAngularVel(b->id, b->w[0], b->w[1], b->w[2]);
        dBodySetForce(b->id, 0, 0, 0);
        dBodySetTorque(b->id, 0, 0, 0);
    }
}

/* One accumulator pair saved (the body's as ODE holds it now). */
static pp_status save_accumulator(pp_world *world, dBodyID body)
{
    pp_status st = pp_grow((void **)&world->saved, &world->saved_capacity,
                           world->saved_count + 1, sizeof *world->saved);
    if (st != PP_OK) return st;
    pp_saved_accumulator *a = &world->saved[world->saved_count++];
    const dReal *f = dBodyGetForce(body), *t = dBodyGetTorque(body);
    a->body = body;
    for (int k = 0; k < 3; ++k) {
        a->force[k] = f[k];
        a->torque[k] = t[k];
    }
    return PP_OK;
}

static int by_body(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const pp_saved_accumulator *)a)->body;
    uintptr_t y = (uintptr_t)((const pp_saved_accumulator *)b)->body;
    return (x > y) - (x < y);
}

/* The accumulators of every body stage 1b's getInfo2 may add to, each saved once, as ODE holds
 * them before stage 1b: every managed body with a joint, and the bodies its joints join it to
 * (getInfo2 adds to both ends). A partner pegplus steps has a joint, so it is saved as itself;
 * one it does not step (a disabled body, before stage 1c wakes it) may be joined to several
 * bodies or by several joints: those are sorted and each kept once. Every save of a call
 * precedes stage 1b, and a rerun of stage 1 puts the accumulators back before it saves
 * (world.c snapshot_bodies), so a save never reads a value getInfo2 changed. */
pp_status pp_bridge_save_accumulators(pp_world *world)
{
    world->saved_count = 0;
    for (int i = 0; i < world->body_count; ++i) {
        dBodyID body = world->bodies[i].id;
        if (dBodyGetNumJoints(body) == 0) continue;
        pp_status st = save_accumulator(world, body);
        if (st != PP_OK) return st;
    }
    const int managed = world->saved_count;
    for (int i = 0; i < world->body_count; ++i) {
        dBodyID body = world->bodies[i].id;
        const int joints = dBodyGetNumJoints(body);
        for (int j = 0; j < joints; ++j) {
            dJointID joint = dBodyGetJoint(body, j);
            if (dJointGetType(joint) == dJointTypeContact) continue;
            dBodyID other = dJointGetBody(joint, 0) == body ? dJointGetBody(joint, 1)
                                                            : dJointGetBody(joint, 0);
            if (!other || pp_bridge_find_body(world, other) >= 0) continue;
            pp_status st = save_accumulator(world, other);
            if (st != PP_OK) return st;
        }
    }
    const int n = world->saved_count - managed;
    if (n == 0) return PP_OK; /* world->saved may still be NULL: no pointer arithmetic on it */
    pp_saved_accumulator *rest = world->saved + managed;
    if (n > 1) qsort(rest, (size_t)n, sizeof *rest, by_body);
    int kept = 0;
    for (int k = 0; k < n; ++k)
        if (kept == 0 || rest[k].body != rest[kept - 1].body) rest[kept++] = rest[k];
    world->saved_count = managed + kept;
    return PP_OK;
}

void pp_bridge_restore_accumulators(pp_world *world)
{
    for (int i = 0; i < world->saved_count; ++i) {
        const pp_saved_accumulator *a = &world->saved[i];
        dBodySetForce(a->body, a->force[0], a->force[1], a->force[2]);
        dBodySetTorque(a->body, a->torque[0], a->torque[1], a->torque[2]);
    }
}

/* ---- Shapes (stage 1, geometry half) ----------------------------------------------------- */

/* Report a geom the pegplus models do not model, once per geom (not once per class: every
 * such geom is named, none is skipped silently). Returns 0 (the geom is not a shape). */
static int refuse_geom(pp_world *world, dGeomID g, const char *why)
{
    for (int i = 0; i < world->warned_geom_count; ++i)
        if (world->warned_geoms[i] == g) return 0;
    if (pp_grow((void **)&world->warned_geoms, &world->warned_geom_capacity,
                world->warned_geom_count + 1, sizeof(dGeomID)) == PP_OK)
        world->warned_geoms[world->warned_geom_count++] = g;
    dBodyID body = dGeomGetBody(g);
    pp_log(PP_LOG_WARNING,
           "dGeomID %p (%s, on dBodyID %p) is not modelled by the %s model: %s; it collides "
           "with nothing under this model (use PP_MODEL_ODE for scenes that need it); reported "
           "once for this geom", (void *)g, pp_geom_class_name(g), (void *)body,
           pp_model_name(world->config.model), why);
    return 0;
}

/* Fill shape from a geom; 0 when the geom is not one pegplus models (reported once). */
static int posed_shape(pp_world *world, dGeomID g, int cls, const double position[3],
                       const double rot[9], pp_shape *s);

/* A dGeomTransform: the geom it wraps, posed at the transform's pose composed with its own
 * (an encapsulated geom's position and rotation are relative to the transform; ODE's
 * dCollideTransform does the same), x = x_T + R_T x_g, R = R_T R_g. The contacts keep the
 * transform as their geom, as ODE's do. */
static int transform_shape(pp_world *world, dGeomID g, pp_shape *s)
{
    dGeomID inner = transform_inner(g);
    if (!inner) return refuse_geom(world, g, "it wraps no geom (dGeomTransformSetGeom)");
    int cls = dGeomGetClass(inner);
    if (cls == dPlaneClass || cls == dRayClass || cls == dGeomTransformClass ||
        cls == dTriMeshClass || cls == dHeightfieldClass || dGeomIsSpace(inner))
        return refuse_geom(world, g, "the geom it wraps is of a class pegplus does not wrap (a "
                                     "plane, ray, transform, trimesh, heightfield or space)");
    const dReal *xt = dGeomGetPosition(g), *Rt = dGeomGetRotation(g);
    const dReal *xg = dGeomGetPosition(inner), *Rg = dGeomGetRotation(inner);
    double position[3], rot[9];
    for (int r = 0; r < 3; ++r) {
        position[r] = xt[r];
        for (int c = 0; c < 3; ++c) {
            position[r] += Rt[4 * r + c] * xg[c];
            double m = 0.0;
            for (int j = 0; j < 3; ++j) m += Rt[4 * r + j] * Rg[4 * j + c];
            rot[3 * r + c] = m;
        }
    }
    return posed_shape(world, inner, cls, position, rot, s);
}

static int geom_shape(pp_world *world, dGeomID g, pp_shape *s)
{
    int cls = dGeomGetClass(g);
    if (cls == dGeomTransformClass) return transform_shape(world, g, s);
    const dReal *x = NULL, *R = NULL;
    if (cls != dPlaneClass) {
        x = dGeomGetPosition(g);
        R = dGeomGetRotation(g);
    }
    double position[3] = {0, 0, 0}, rot[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (x) {
        for (int k = 0; k < 3; ++k) position[k] = x[k];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) rot[3 * r + c] = R[4 * r + c];
    }
    return posed_shape(world, g, cls, position, rot, s);
}

/* The shape of geom g (class cls; its size from g) at the pose given. */
static int posed_shape(pp_world *world, dGeomID g, int cls, const double position[3],
                       const double rot[9], pp_shape *s)
{
    switch (cls) {
    case dSphereClass:
        *s = pp_shape_make_sphere(dGeomSphereGetRadius(g), position);
        return 1;
    case dBoxClass: {
        dVector3 l;
        dGeomBoxGetLengths(g, l);
        double lengths[3] = {l[0], l[1], l[2]};
        const pp_polytope *poly = pp_box_polytope(world, lengths);
        *s = poly ? pp_shape_make_polytope(poly, position, rot)
                  : pp_shape_make_box(lengths, position, rot); /* invalid lengths: rejected */
        return 1;
    }
    case dCapsuleClass: {
        dReal radius, length;
        dGeomCapsuleGetParams(g, &radius, &length);
        *s = pp_shape_make_capsule(radius, length, position, rot);
        return 1;
    }
    case dCylinderClass: {
        dReal radius, length;
        dGeomCylinderGetParams(g, &radius, &length);
        /* a size the prism refuses (zero) leaves it NULL: pp_shape_validate rejects the step */
        *s = pp_shape_make_cylinder(radius, length, pp_cylinder_prism(world, radius, length),
                                    position, rot);
        return 1;
    }
    case dPlaneClass: {
        dVector4 p;
        dGeomPlaneGetParams(g, p);
        double normal[3] = {p[0], p[1], p[2]};
        *s = pp_shape_make_plane(normal, p[3]);
        return 1;
    }
    case dConvexClass: {
        const pp_polytope *poly = pp_convex_find(world, g);
        if (poly) {
            *s = pp_shape_make_polytope(poly, position, rot);
            return 1;
        }
        return refuse_geom(world, g, "it was not made by pp_convex_create nor registered "
                                     "with pp_world_register_convex, and ODE cannot tell pegplus "
                                     "a dConvex's shape");
    }
    }
    return refuse_geom(world, g, cls == dRayClass ? "rays take no part in the dynamics"
                                                  : "pegplus has no shape for this class yet");
}

/* Room for `count` shapes in every per-shape array of the scratch. */
pp_status pp_bridge_grow_shapes(pp_world *world, int count)
{
    pp_step_scratch *s = &world->scratch;
    void **const arrays[] = {(void **)&s->shapes, (void **)&s->shape_geom,
                             (void **)&s->shape_body, (void **)&s->shape_motion,
                             (void **)&s->aabbs, (void **)&s->is_static,
                             (void **)&s->attachment, (void **)&s->shape_terrain,
                             (void **)&s->shape_triangle};
    const size_t sizes[] = {sizeof(pp_shape), sizeof(dGeomID), sizeof(int), sizeof(double),
                            sizeof(pp_aabb), 1, sizeof(pp_shape_attachment),
                            sizeof(const struct pp_terrain *), sizeof(int)};
    return pp_grow_together(arrays, sizes, 9, &s->shape_capacity, count);
}

pp_status pp_bridge_shapes(pp_world *world)
{
    pp_step_scratch *s = &world->scratch;
    s->shape_count = 0;
    s->geom_shape_count = 0;
    pp_terrain_begin_collect(world);
    pp_status st = pp_bridge_validate_geoms(world);
    if (st == PP_OK) st = pp_bridge_grow_shapes(world, world->geom_count);
    if (st != PP_OK) return st;
    for (int i = 0; i < world->geom_count; ++i) {
        dGeomID geom = world->geoms[i];
        pp_shape shape;
        if (!dGeomIsEnabled(geom)) continue;
        const char *refusal = NULL;
        if (pp_terrain_geom(world, geom, &st, &refusal)) { /* terrain: triangles in stage 2 */
            if (refusal) refuse_geom(world, geom, refusal);
            if (st != PP_OK) return st;
            continue;
        }
        if (!geom_shape(world, geom, &shape)) continue;
        if (pp_shape_validate(&shape) != PP_OK) {
            pp_log(PP_LOG_ERROR, "dGeomID %p (%s) has an invalid pose or size (see the "
                                 "previous message); step rejected, nothing changed",
                   (void *)geom, pp_geom_class_name(geom));
            return PP_ERR_INVALID_ARGUMENT;
        }
        dBodyID body = dGeomGetBody(geom);
        int b = body ? pp_bridge_find_body(world, body) : -1;
        int k = s->shape_count++;
        s->shapes[k] = shape;
        s->shape_geom[k] = geom;
        s->shape_body[k] = b;
        s->shape_terrain[k] = NULL;
        s->shape_triangle[k] = -1;
        s->is_static[k] = b < 0;
        if (b >= 0) {
            /* The geom's pose in its body's frame (ODE's offset, or identity): sub-steps pose
             * the shape from the body's integrated state. */
            const pp_body *pb = &world->bodies[b];
            pp_shape_attachment *at = &s->attachment[k];
            for (int r = 0; r < 3; ++r) {
                at->p[r] = 0.0;
                for (int c = 0; c < 3; ++c) {
                    at->p[r] += pb->R[3 * c + r] * (shape.position[c] - pb->x[c]);
                    double m = 0.0;
                    for (int j = 0; j < 3; ++j) m += pb->R[3 * j + r] * shape.R[3 * j + c];
                    at->R[3 * r + c] = m;
                }
            }
        }
    }
    s->geom_shape_count = s->shape_count;
    return PP_OK;
}
