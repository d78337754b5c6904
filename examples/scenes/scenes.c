/* Scene builders shared by tests, demo, compare tool and benchmarks (see scenes.h). */
#define _DEFAULT_SOURCE /* M_PI */
#include "scenes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pp_scenes_init_ode(void)
{
    static int done = 0;
    if (!done) {
        dInitODE2(0);
        done = 1;
    }
}

static void scene_begin(pp_scene *s, const char *name, int ground, double gravity_z)
{
    pp_scenes_init_ode();
    memset(s, 0, sizeof *s);
    s->name = name;
    s->world = dWorldCreate();
    s->space = dHashSpaceCreate(0);
    dWorldSetGravity(s->world, 0, 0, gravity_z);
    if (ground) s->ground = dCreatePlane(s->space, 0, 0, 1, 0);
}

int pp_scene_append(pp_scene *s, dBodyID body, dGeomID geom)
{
    if (s->body_count == s->body_capacity) {
        int capacity = s->body_capacity ? 2 * s->body_capacity : 16;
        dBodyID *bodies = realloc(s->bodies, (size_t)capacity * sizeof *bodies);
        if (!bodies) return -1;
        s->bodies = bodies;
        dGeomID *geoms = realloc(s->geoms, (size_t)capacity * sizeof *geoms);
        if (!geoms) return -1;
        s->geoms = geoms;
        s->body_capacity = capacity;
    }
    s->bodies[s->body_count] = body;
    s->geoms[s->body_count] = geom;
    s->body_count++;
    return 0;
}

/* The body is created in any case; a scene that ran out of memory lists fewer bodies. */
static dBodyID add_body(pp_scene *s, dGeomID g, const dMass *m, const double pos[3])
{
    dBodyID b = dBodyCreate(s->world);
    dBodySetMass(b, m);
    dGeomSetBody(g, b);
    dBodySetPosition(b, pos[0], pos[1], pos[2]);
    (void)pp_scene_append(s, b, g);
    return b;
}

dBodyID pp_scene_add_box(pp_scene *s, const double lengths[3], double mass, const double pos[3])
{
    dMass m;
    dMassSetBoxTotal(&m, mass, lengths[0], lengths[1], lengths[2]);
    return add_body(s, dCreateBox(s->space, lengths[0], lengths[1], lengths[2]), &m, pos);
}

dBodyID pp_scene_add_sphere(pp_scene *s, double radius, double mass, const double pos[3])
{
    dMass m;
    dMassSetSphereTotal(&m, mass, radius);
    return add_body(s, dCreateSphere(s->space, radius), &m, pos);
}

static void set_rotation(dBodyID b, double ax, double ay, double az, double angle)
{
    dQuaternion q;
    dQFromAxisAndAngle(q, ax, ay, az, angle);
    dBodySetQuaternion(b, q);
}

void pp_scene_free_flight(pp_scene *s, int gyroscopic, int gravity)
{
    scene_begin(s, "free_flight", 0, gravity ? -9.81 : 0.0);
    dBodyID b;

    b = pp_scene_add_box(s, (const double[3]){0.1, 0.4, 0.9}, 10.0, (const double[3]){0, 0, 0});
    dBodySetLinearVel(b, -0.9, 0.4, 0.1);
    dBodySetAngularVel(b, 0.5, 0, 0);

    b = pp_scene_add_box(s, (const double[3]){0.3, 0.3, 0.1}, 2.0, (const double[3]){2, 0, 0});
    set_rotation(b, 1, 0, 0, 0.3);
    dBodySetAngularVel(b, 0.2, -0.1, 15.0);

    b = pp_scene_add_box(s, (const double[3]){0.2, 0.5, 0.3}, 1.5, (const double[3]){0, 3, 1});
    set_rotation(b, 0.3, 1, -0.2, 1.1);
    dBodySetLinearVel(b, 0.3, -0.2, 2.0);
    dBodySetAngularVel(b, 1.5, -2.0, 0.7);
    dBodySetLinearDamping(b, 0.01);
    dBodySetAngularDamping(b, 0.02);
    dBodySetLinearDampingThreshold(b, 0.1);
    dBodySetAngularDampingThreshold(b, 0.1);

    b = pp_scene_add_sphere(s, 0.2, 3.0, (const double[3]){-2, 0, 5});
    dBodySetGravityMode(b, 0);
    dBodySetLinearVel(b, 0, 0, 1);
    dBodySetAngularVel(b, 0, 30, 0);
    dBodySetMaxAngularSpeed(b, 20.0);

    b = pp_scene_add_box(s, (const double[3]){0.6, 0.2, 0.1}, 0.7, (const double[3]){4, 4, 4});
    dBodySetFiniteRotationMode(b, 1);
    dBodySetAngularVel(b, 4.0, 1.0, -2.0);

    b = pp_scene_add_box(s, (const double[3]){0.6, 0.2, 0.1}, 0.7, (const double[3]){-4, 4, 4});
    dBodySetFiniteRotationMode(b, 1);
    dBodySetFiniteRotationAxis(b, 0, 0, 1);
    dBodySetAngularVel(b, 1.0, 2.0, 6.0);

    b = pp_scene_add_box(s, (const double[3]){0.4, 0.4, 0.4}, 5.0, (const double[3]){-4, -4, 0});
    dBodySetLinearVel(b, 0.1, 0.2, 0.3);
    dBodySetAngularVel(b, 0.5, 0.5, 0.5);
    dBodySetKinematic(b);

    for (int i = 0; i < s->body_count; ++i)
        dBodySetGyroscopicMode(s->bodies[i], gyroscopic);
}

void pp_scene_drop(pp_scene *s)
{
    scene_begin(s, "drop", 1, -9.81);
    pp_scene_add_box(s, (const double[3]){1, 1, 1}, 1.0, (const double[3]){0, 0, 2.0});
    dBodyID b = pp_scene_add_box(s, (const double[3]){0.5, 0.8, 0.3}, 2.0, (const double[3]){2, 0, 1.5});
    set_rotation(b, 1, 1, 0, 0.4);
    pp_scene_add_sphere(s, 0.25, 1.0, (const double[3]){-2, 0, 1.0});
    b = pp_scene_add_sphere(s, 0.4, 3.0, (const double[3]){0, 2, 3.0});
    dBodySetLinearVel(b, 0.5, 0, 0);
}

void pp_scene_box_drop(pp_scene *s, double drop_height)
{
    scene_begin(s, "box_drop", 1, -9.81);
    pp_scene_add_box(s, (const double[3]){1, 1, 1}, 1.0, (const double[3]){0, 0, 0.5 + drop_height});
}

void pp_scene_box_column(pp_scene *s, int count, double gap)
{
    scene_begin(s, "box_column", 1, -9.81);
    for (int i = 0; i < count; ++i)
        pp_scene_add_box(s, (const double[3]){1, 1, 1}, 1.0,
                         (const double[3]){0, 0, 0.5 + i * (1.0 + gap) + gap});
}

void pp_scene_incline(pp_scene *s, double theta)
{
    scene_begin(s, "incline", 1, 0.0);
    dWorldSetGravity(s->world, 9.81 * sin(theta), 0, -9.81 * cos(theta));
    pp_scene_add_box(s, (const double[3]){1, 1, 1}, 1.0, (const double[3]){0, 0, 0.5});
}

void pp_scene_st96_rod(pp_scene *s, double height)
{
    scene_begin(s, "st96_rod", 1, -9.81);
    const double radius = 0.05, length = 0.5, inertia = 0.002;
    dMass m;
    dMassSetZero(&m);
    /* as printed: 0.002 about the axes across the rod; the spin about the rod's own axis is
     * not part of the planar problem and gets the capsule's value */
    dMassSetParameters(&m, 1.0, 0, 0, 0, inertia, inertia, 0.5 * radius * radius, 0, 0, 0);
    dBodyID b = add_body(s, dCreateCapsule(s->space, radius, length), &m,
                         (const double[3]){0, 0, height});
    /* the capsule axis is local z; 30 degrees to the table = 60 degrees from the vertical */
    set_rotation(b, 0, 1, 0, M_PI / 2 - M_PI / 6);
    /* 4 rad/s in the sense that raises the rod's elevation (it turns past the vertical before
     * landing): with the centre at 0.9908 m this gives the first impact at 0.383 s and the
     * other end's at ~0.55 s, both as printed; the opposite sense lands the second end at
     * 0.53 s. ST96 does not print the sense. */
    dBodySetAngularVel(b, 0, -4.0, 0);
}

void pp_scene_st96_balls(pp_scene *s)
{
    scene_begin(s, "st96_balls", 1, -9.81);
    const double centres[4][3] = {{0, 0, 1}, {1, 0, 0.1}, {1.2 + 1e-5, 0, 0.1}, {1.4 + 2e-5, 0, 0.1}};
    for (int i = 0; i < 4; ++i) pp_scene_add_sphere(s, 0.1, 1.0, centres[i]);
    dBodySetLinearVel(s->bodies[0], 1.5, 0.1, 0);
}

/* Park–Miller minimal standard generator: the same heap on every machine. */
static double next_uniform(unsigned *state)
{
    *state = (unsigned)((16807ull * (*state ? *state : 1u)) % 2147483647ull);
    return (double)*state / 2147483647.0;
}

void pp_scene_box_pile(pp_scene *s, int count, unsigned seed)
{
    scene_begin(s, "box_pile", 1, -9.81);
    unsigned state = seed * 2654435761u + 1u;
    for (int i = 0; i < count; ++i) {
        double lengths[3], pos[3];
        for (int k = 0; k < 3; ++k) lengths[k] = 0.3 + 0.4 * next_uniform(&state);
        pos[0] = 1.6 * ((i % 3) - 1) + 0.1 * next_uniform(&state);
        pos[1] = 1.6 * (((i / 3) % 3) - 1) + 0.1 * next_uniform(&state);
        pos[2] = 0.7 + 1.3 * (i / 9); /* 1.3 m > two half-diagonals: no initial overlap */
        dBodyID b = pp_scene_add_box(s, lengths, 1.0, pos);
        set_rotation(b, next_uniform(&state), next_uniform(&state), next_uniform(&state) + 0.1,
                     2.0 * M_PI * next_uniform(&state));
    }
}

/* ---- heap ----------------------------------------------------------------------------- */

typedef struct heap_box {
    double lengths[3], jitter[2];
    dQuaternion q;
} heap_box;

typedef struct heap_script {
    int count, next;            /* boxes[next] is the next to drop */
    double h;
    heap_box boxes[];
} heap_script;

static int aabbs_apart(const dReal a[6], const dReal b[6])
{
    for (int k = 0; k < 3; ++k)
        if (a[2 * k + 1] < b[2 * k] || b[2 * k + 1] < a[2 * k]) return 1;
    return 0;
}

/* Drops the next box when it is due and its release box is clear of every body's bounding
 * box (else it waits for the next step). The release height is 0.7 m above the highest body
 * that has come to rest (speed < 0.5 m/s): a box still falling does not raise it. */
static void heap_before_step(pp_scene *s, int step)
{
    heap_script *c = s->script;
    if (c->next >= c->count || lround(0.4 * c->next / c->h) > step) return;
    const heap_box *hb = &c->boxes[c->next];
    double top = 0.0;
    for (int i = 0; i < s->body_count; ++i) {
        const dReal *v = dBodyGetLinearVel(s->bodies[i]);
        if (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] > 0.25) continue;
        dReal aabb[6];
        dGeomGetAABB(s->geoms[i], aabb);
        if (aabb[5] > top) top = aabb[5];
    }
    const double pos[3] = {hb->jitter[0], hb->jitter[1], top + 0.7}, reach = 0.62;
    const dReal release[6] = {pos[0] - reach, pos[0] + reach, pos[1] - reach,
                              pos[1] + reach, pos[2] - reach, pos[2] + reach};
    for (int i = 0; i < s->body_count; ++i) {
        dReal aabb[6];
        dGeomGetAABB(s->geoms[i], aabb);
        if (!aabbs_apart(aabb, release)) return;
    }
    dBodyID b = pp_scene_add_box(s, hb->lengths, 1.0, pos);
    dBodySetQuaternion(b, hb->q);
    c->next++;
}

void pp_scene_heap(pp_scene *s, int count, unsigned seed, double h)
{
    scene_begin(s, "heap", 1, -9.81);
    /* the bin: four static walls 0.5 m thick and 3 m high around a square of side w */
    const double w = fmax(1.6, 0.35 * sqrt((double)count)), t = 0.5, wall_h = 3.0;
    for (int k = 0; k < 4; ++k) {
        double along = w + 2.0 * t, off = 0.5 * (w + t) * (k % 2 ? 1.0 : -1.0);
        dGeomID g = k < 2 ? dCreateBox(s->space, t, along, wall_h) : dCreateBox(s->space, along, t, wall_h);
        if (k < 2) dGeomSetPosition(g, off, 0.0, 0.5 * wall_h);
        else dGeomSetPosition(g, 0.0, off, 0.5 * wall_h);
    }
    heap_script *c = malloc(sizeof *c + (size_t)count * sizeof c->boxes[0]);
    if (!c) return; /* no script: an empty scene */
    c->count = count;
    c->next = 0;
    c->h = h;
    unsigned state = seed * 2654435761u + 7u;
    for (int k = 0; k < count; ++k) {
        heap_box *hb = &c->boxes[k];
        for (int i = 0; i < 3; ++i) hb->lengths[i] = 0.3 + 0.4 * next_uniform(&state);
        for (int i = 0; i < 2; ++i) hb->jitter[i] = 0.2 * (next_uniform(&state) - 0.5);
        double ax = next_uniform(&state), ay = next_uniform(&state), az = next_uniform(&state) + 0.1;
        dQFromAxisAndAngle(hb->q, ax, ay, az, 2.0 * M_PI * next_uniform(&state));
    }
    s->script = c;
    s->script_destroy = free;
    s->before_step = heap_before_step;
}

void pp_scene_islands(pp_scene *s, int stacks, double gap, unsigned seed)
{
    scene_begin(s, "islands", 1, -9.81);
    unsigned state = seed * 2654435761u + 11u;
    const double pitch = 2.5;
    int columns = (int)ceil(sqrt((double)stacks));
    for (int k = 0; k < stacks; ++k) {
        double x = pitch * (k % columns), y = pitch * (k / columns), bottom = gap;
        for (int j = 0; j < 3; ++j) {
            double lengths[3];
            for (int c = 0; c < 3; ++c) lengths[c] = 0.8 + 0.2 * next_uniform(&state);
            dBodyID b = pp_scene_add_box(s, lengths, 1.0,
                                         (const double[3]){x, y, bottom + 0.5 * lengths[2]});
            set_rotation(b, 0, 0, 1, 0.4 * next_uniform(&state));
            bottom += lengths[2] + gap;
        }
    }
}

/* ---- crash ---------------------------------------------------------------------------- */

typedef struct crash_script {
    int fire_step;
} crash_script;

static void crash_before_step(pp_scene *s, int step)
{
    const crash_script *c = s->script;
    if (step != c->fire_step) return;
    dBodyID ball = pp_scene_add_sphere(s, 0.5, 10.0, (const double[3]){-6.0, 0.0, 0.75});
    dBodySetLinearVel(ball, 20.0, 0.0, 1.5);
}

static void add_brick_wall(pp_scene *s, int rows, int wide)
{
    const double brick[3] = {0.5, 0.6, 0.3}, joint = 0.001;
    const double width = wide * brick[1] + (wide - 1) * joint;
    for (int row = 0; row < rows; ++row)
        for (int i = 0; i < wide; ++i)
            pp_scene_add_box(s, brick, 1.0,
                             (const double[3]){0.5 * brick[0],
                                               -0.5 * width + 0.5 * brick[1] + i * (brick[1] + joint),
                                               (row + 0.5) * brick[2]});
}

void pp_scene_brick_wall(pp_scene *s, int rows, int wide)
{
    scene_begin(s, "wall", 1, -9.81);
    add_brick_wall(s, rows, wide);
}

dBodyID pp_scene_wall_hit(pp_scene *s, int rows, int wide)
{
    pp_scene_brick_wall(s, rows, wide);
    const double l[3] = {0.3, 0.3, 0.3};
    dBodyID box = pp_scene_add_box(s, l, 2.0, (const double[3]){0.5 + 0.15 + 0.05, 0.0, 0.15});
    dBodySetLinearVel(box, -2.0, 0.0, 0.0);
    return box;
}

void pp_scene_crash(pp_scene *s, double h)
{
    scene_begin(s, "crash", 1, -9.81);
    add_brick_wall(s, 5, 15);
    crash_script *c = malloc(sizeof *c);
    if (!c) return; /* no script: the wall stands alone */
    c->fire_step = (int)lround(0.5 / h);
    s->script = c;
    s->script_destroy = free;
    s->before_step = crash_before_step;
}

void pp_scene_destroy(pp_scene *s)
{
    if (s->script_destroy) s->script_destroy(s->script);
    if (s->space) dSpaceDestroy(s->space);
    if (s->world) dWorldDestroy(s->world);
    free(s->bodies);
    free(s->geoms);
    memset(s, 0, sizeof *s);
}

void pp_scene_zero_velocities(pp_scene *s)
{
    for (int i = 0; i < s->body_count; ++i) {
        dBodySetLinearVel(s->bodies[i], 0, 0, 0);
        dBodySetAngularVel(s->bodies[i], 0, 0, 0);
    }
}

double pp_scene_kinetic_energy(const pp_scene *s)
{
    double e = 0.0;
    for (int i = 0; i < s->body_count; ++i) {
        dBodyID b = s->bodies[i];
        if (dBodyIsKinematic(b)) continue;
        dMass m;
        dBodyGetMass(b, &m);
        const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b), *R = dBodyGetRotation(b);
        double wb[3]; /* body-frame angular velocity R^T w */
        for (int k = 0; k < 3; ++k) wb[k] = R[k] * w[0] + R[4 + k] * w[1] + R[8 + k] * w[2];
        double rot = 0.0;
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) rot += wb[r] * m.I[4 * r + c] * wb[c];
        e += 0.5 * m.mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * rot;
    }
    return e;
}

void pp_scene_angular_momentum(const pp_scene *s, double L[3])
{
    L[0] = L[1] = L[2] = 0.0;
    for (int i = 0; i < s->body_count; ++i) {
        dBodyID b = s->bodies[i];
        if (dBodyIsKinematic(b)) continue;
        dMass m;
        dBodyGetMass(b, &m);
        const dReal *x = dBodyGetPosition(b), *v = dBodyGetLinearVel(b);
        const dReal *w = dBodyGetAngularVel(b), *R = dBodyGetRotation(b);
        double wb[3], Lb[3];
        for (int k = 0; k < 3; ++k) wb[k] = R[k] * w[0] + R[4 + k] * w[1] + R[8 + k] * w[2];
        for (int r = 0; r < 3; ++r) Lb[r] = m.I[4 * r] * wb[0] + m.I[4 * r + 1] * wb[1] + m.I[4 * r + 2] * wb[2];
        for (int r = 0; r < 3; ++r)
            L[r] += R[4 * r] * Lb[0] + R[4 * r + 1] * Lb[1] + R[4 * r + 2] * Lb[2];
        L[0] += m.mass * (x[1] * v[2] - x[2] * v[1]);
        L[1] += m.mass * (x[2] * v[0] - x[0] * v[2]);
        L[2] += m.mass * (x[0] * v[1] - x[1] * v[0]);
    }
}

double pp_scene_fastest_body(const pp_scene *s)
{
    double v_max = 0.0;
    for (int i = 0; i < s->body_count; ++i) {
        const dReal *v = dBodyGetLinearVel(s->bodies[i]);
        v_max = fmax(v_max, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    }
    return v_max;
}

double pp_scene_max_penetration(const pp_scene *s)
{
    int n = dSpaceGetNumGeoms(s->space);
    double deepest = 0.0;
    dContactGeom contacts[16];
    for (int i = 0; i < n; ++i) {
        dGeomID a = dSpaceGetGeom(s->space, i);
        for (int j = i + 1; j < n; ++j) {
            dGeomID b = dSpaceGetGeom(s->space, j);
            dBodyID ba = dGeomGetBody(a), bb = dGeomGetBody(b);
            if (!ba && !bb) continue;
            if (ba && bb && dAreConnectedExcluding(ba, bb, dJointTypeContact)) continue;
            if (!(dGeomGetCategoryBits(a) & dGeomGetCollideBits(b)) &&
                !(dGeomGetCategoryBits(b) & dGeomGetCollideBits(a)))
                continue;
            int k = dCollide(a, b, 16, contacts, sizeof(dContactGeom));
            for (int c = 0; c < k; ++c)
                if (contacts[c].depth > deepest) deepest = contacts[c].depth;
        }
    }
    return deepest;
}

void pp_scene_geom_pose(dGeomID geom, double pos[3], double R[9])
{
    const dReal *p = dGeomGetPosition(geom), *r = dGeomGetRotation(geom); /* r: 3 x 4 */
    for (int i = 0; i < 3; ++i) {
        pos[i] = p[i];
        for (int j = 0; j < 3; ++j) R[3 * i + j] = r[4 * i + j];
    }
}
