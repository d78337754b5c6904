/*
 * The program's own near callback as the source of contact settings (docs/drop-in.md).
 *
 * An ODE program says what two geoms do when they touch in its near callback: it calls
 * dCollide, and for each contact it wants it fills a dContact (surface: mode flags, mu, mu2,
 * bounce, soft_cfm, ...; fdir1) and calls dJointCreateContact. ODE keeps no getter for a
 * contact joint's surface, so pegplus learns it by watching those two calls:
 *
 *   PP_MODEL_ODE       the callback runs unchanged inside dSpaceCollide (world.c ode_step):
 *                      its joints, its group, then dWorldStep/QuickStep. The joints it makes
 *                      are only recorded for the contact list (ode_baseline.c).
 *   pegplus models     for each candidate pair of the step (stage 2, after the island filters
 *                      of stage 6) the callback is called once with that pair, as a probe:
 *                      dCollide of the pair answers one synthetic touching contact (depth 0,
 *                      at the midpoint of the shapes' closest points, ODE's normal from g2
 *                      into g1), and every dContact passed to dJointCreateContact is recorded.
 *                      The joint it asks for is made, so the program may attach it and set
 *                      its feedback as usual, but in pegplus's own joint group, emptied as
 *                      soon as the callback returns: ODE ends as it was. No joint made = the
 *                      pair does not collide; else the first contact's surface is the pair's.
 *
 * The two calls are watched either by interposition (interpose_probe.c, in libpegplus.so and
 * libpegplus-run.so: a program linked with -lpegplus before -lode resolves dCollide and
 * dJointCreateContact to pegplus's, which forward to libode's outside a probe) or, for a
 * static link, by the callback calling pp_near_probe_collide / pp_near_probe_joint_create_contact.
 * A callback that made a joint pegplus did not see (libode's own dJointCreateContact reached)
 * is caught by its bodies' joint counts and the step is refused.
 *
 * Probes run serially on the stepping thread before stages 3-5 (which may run on several
 * threads and only read the recorded surfaces), once per pair and step.
 */
#include "world_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One pair's recorded answer: pp_surface (mu, bounce), what the time stepper honours beyond
 * it (`ext`), and the callback's whole dContact surface and fdir1, in the callback's pair
 * order (docs/drop-in.md's table). */
typedef struct probe_entry {
    uint64_t key;                  /* (a << 32 | b) + 1 of shape indices a < b; 0 = empty */
    int collide;                   /* the callback made a contact joint */
    int joints;                    /* how many */
    pp_surface surface;
    dSurfaceParameters ode;        /* the first contact's surface */
    double fdir1[3];
    dGeomID g1, g2;                /* the pair as the callback was asked */
    pp_surface_ext ext;            /* what the pegplus models honour beyond `surface` */
    int feedback;                  /* a joint of the callback's has a dJointFeedback */
    double impulse[2][6];          /* feedback: the step's impulse on g1's body, g2's body
                                      (force N s, torque about the centre N m s) */
} probe_entry;

/* A dJointFeedback the callback set on one of its contact joints for a pair: filled after
 * the step with the pair's impulse / h (docs/drop-in.md "dJointFeedback"). */
typedef struct feedback_record {
    dJointFeedback *fb;
    uint64_t key;                  /* the pair's probe_entry */
    int node0_side;                /* 0: f1 is g1's body's, 1: g2's (ODE's node[0]) */
    int two_bodies;                /* ODE fills f2, t2 only for a joint with two bodies */
    int first;                     /* the first of the pair's records: it gets the impulse */
} feedback_record;

struct pp_probe_cache {
    probe_entry *entry;
    int capacity, count;
    feedback_record *feedback;
    int feedback_count, feedback_capacity;
};

/* Contact joints of one probe whose feedback is looked at (a probe's dCollide answers one
 * contact, so a callback makes one joint per pair unless it collides again). */
#define PP_PROBE_JOINTS_MAX 16

/* The probe in progress on this thread (NULL outside a probe). */
typedef struct probe_state {
    dGeomID g1, g2;
    dContactGeom synthetic;        /* what dCollide of (g1, g2) answers */
    dJointGroupID group;           /* pegplus's group: the probe's joints, emptied after */
    int joints;                    /* contact joints the callback made */
    int forwarding;                /* pegplus is making the joint itself: let it through */
    dContact first;                /* the first one's dContact */
    dJointID first_joint;          /* its joint (alive until the group is emptied) */
    dJointID joint[PP_PROBE_JOINTS_MAX]; /* the first joints made (alive until then too) */
} probe_state;

static _Thread_local probe_state *active_probe;

/* Set by interpose_probe.c when it is linked in (libpegplus.so, libpegplus-run.so): returns 1
 * when the process's dCollide and dJointCreateContact resolve to pegplus's. */
int (*pp_probe_interposer_check)(void);

int pp_probe_collide(dGeomID o1, dGeomID o2, int flags, dContactGeom *contact, int skip,
                     int *count)
{
    probe_state *p = active_probe;
    (void)skip;
    if (!p || p->forwarding) return 0;
    if (!((o1 == p->g1 && o2 == p->g2) || (o1 == p->g2 && o2 == p->g1))) return 0;
    if ((flags & 0xffff) < 1) {
        *count = 0;
        return 1;
    }
    *contact = p->synthetic;
    if (o1 != p->g1) { /* asked the other way round: the normal points into o1 */
        for (int k = 0; k < 3; ++k) contact->normal[k] = -contact->normal[k];
    }
    contact->g1 = o1;
    contact->g2 = o2;
    *count = 1;
    return 1;
}

int pp_probe_joint_create_contact(dWorldID w, dJointGroupID group, const dContact *c,
                                  dJointID *out)
{
    probe_state *p = active_probe;
    (void)group;
    if (!p || p->forwarding) return 0;
    if (p->joints++ == 0) p->first = *c;
    p->forwarding = 1;
    *out = dJointCreateContact(w, p->group, c);
    if (p->joints == 1) p->first_joint = *out;
    if (p->joints <= PP_PROBE_JOINTS_MAX) p->joint[p->joints - 1] = *out;
    p->forwarding = 0;
    return 1;
}

int pp_near_probe_collide(dGeomID o1, dGeomID o2, int flags, dContactGeom *contact, int skip)
{
    int n;
    if (pp_probe_collide(o1, o2, flags, contact, skip, &n)) return n;
    return dCollide(o1, o2, flags, contact, skip);
}

dJointID pp_near_probe_joint_create_contact(dWorldID w, dJointGroupID group, const dContact *c)
{
    dJointID j;
    if (pp_probe_joint_create_contact(w, group, c, &j)) return j;
    j = dJointCreateContact(w, group, c);
    pp_ode_record_contact(w, c, j); /* once: a joint the interposer recorded is not again */
    return j;
}

pp_status pp_world_set_near_callback(pp_world *world, void *data, dNearCallback *callback)
{
    if (!world) {
        pp_log(PP_LOG_ERROR, "pp_world_set_near_callback: world is NULL");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (callback && pp_probe_interposer_check && !pp_probe_interposer_check())
        pp_log(PP_LOG_WARNING,
               "pp_world_set_near_callback: this process's dCollide and dJointCreateContact are "
               "libode's, not libpegplus's (was -lode linked before -lpegplus?), so under the "
               "pegplus models the callback's surfaces can only be seen if it calls "
               "pp_near_probe_collide and pp_near_probe_joint_create_contact (docs/drop-in.md)");
    world->near_callback = callback;
    world->near_data = data;
    return PP_OK;
}

void pp_near_probe_free(pp_world *world)
{
    if (!world->probe) return;
    free(world->probe->entry);
    free(world->probe->feedback);
    free(world->probe);
    world->probe = NULL;
}

void pp_near_probe_clear(pp_world *world)
{
    if (world->probe) world->probe->feedback_count = 0;
    if (!world->probe || world->probe->count == 0) return;
    memset(world->probe->entry, 0, (size_t)world->probe->capacity * sizeof(probe_entry));
    world->probe->count = 0;
}

void pp_near_probe_rerun(pp_world *world)
{
    if (!world->probe) return;
    for (int i = 0; i < world->probe->capacity; ++i)
        memset(world->probe->entry[i].impulse, 0, sizeof world->probe->entry[i].impulse);
}

static uint64_t pair_key(int a, int b)
{
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    return ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1;
}

static unsigned key_slot(uint64_t key, int capacity)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 29;
    return (unsigned)key & (unsigned)(capacity - 1);
}

static const probe_entry *find_entry(const struct pp_probe_cache *c, uint64_t key)
{
    if (!c || c->capacity == 0) return NULL;
    for (unsigned i = key_slot(key, c->capacity);; i = (i + 1) & (unsigned)(c->capacity - 1)) {
        if (c->entry[i].key == key) return &c->entry[i];
        if (c->entry[i].key == 0) return NULL;
    }
}

/* Room for `more` entries at a load of at most 1/2. */
static pp_status reserve(pp_world *world, int more)
{
    struct pp_probe_cache *c = world->probe;
    if (!c) {
        c = world->probe = calloc(1, sizeof *c);
        if (!c) return PP_ERR_NO_MEMORY;
    }
    if (2 * (c->count + more) <= c->capacity) return PP_OK;
    int cap = c->capacity ? c->capacity : 64;
    while (cap < 2 * (c->count + more)) cap *= 2;
    probe_entry *e = calloc((size_t)cap, sizeof *e);
    if (!e) return PP_ERR_NO_MEMORY;
    for (int i = 0; i < c->capacity; ++i) {
        if (!c->entry[i].key) continue;
        unsigned s = key_slot(c->entry[i].key, cap);
        while (e[s].key) s = (s + 1) & (unsigned)(cap - 1);
        e[s] = c->entry[i];
    }
    free(c->entry);
    c->entry = e;
    c->capacity = cap;
    return PP_OK;
}

/* The synthetic contact of shapes a and b: depth 0 at the midpoint of their closest points,
 * ODE's normal (from g2 into g1: moving g1 along it separates the pair), -n of pegplus's
 * A-to-B normal. Without closest points (pp_shape_distance failed): between the centres. */
static void synthetic_contact(const pp_world *world, int a, int b, dContactGeom *out)
{
    const pp_step_scratch *s = &world->scratch;
    pp_proximity prox;
    memset(out, 0, sizeof *out);
    out->g1 = s->shape_geom[a];
    out->g2 = s->shape_geom[b];
    out->side1 = out->side2 = -1;
    out->depth = 0.0;
    if (pp_shape_distance(&s->shapes[a], &s->shapes[b], &prox) == PP_OK) {
        for (int k = 0; k < 3; ++k) {
            out->pos[k] = 0.5 * (prox.p_a[k] + prox.p_b[k]);
            out->normal[k] = -prox.n[k];
        }
        return;
    }
    double d[3], len = 0.0;
    for (int k = 0; k < 3; ++k) {
        out->pos[k] = 0.5 * (s->shapes[a].position[k] + s->shapes[b].position[k]);
        d[k] = s->shapes[a].position[k] - s->shapes[b].position[k];
        len += d[k] * d[k];
    }
    len = sqrt(len);
    for (int k = 0; k < 3; ++k) out->normal[k] = len > 0.0 ? d[k] / len : (k == 2);
}

/* The dContact surface's flags and parameters the pegplus models do not honour yet, each
 * reported once per world. PP_FLAG_FORCE_LIMIT stands for a mode without dContactApprox1_1
 * and a finite mu > 0: ODE then reads mu as a force limit in newtons (its "constant force
 * limit approximation"), pegplus as Coulomb's coefficient. PP_FLAG_TORQUE_LIMIT likewise for
 * a rolling coefficient > 0 without its axis's dContactApprox1_1/_2/_N: ODE reads it as a
 * torque limit in N m, pegplus as rho of the bound rho p_n. */
#define PP_FLAG_FORCE_LIMIT 0x100000
#define PP_FLAG_TORQUE_LIMIT 0x200000
static const struct {
    int flag;
    const char *what;
} unsupported[] = {
    {PP_FLAG_FORCE_LIMIT, "a mode without dContactApprox1_1 (ODE reads a finite mu as a "
                          "friction force limit in N; pegplus reads it as the Coulomb "
                          "coefficient)"},
    {PP_FLAG_TORQUE_LIMIT, "dContactRolling without the axis's dContactApprox1_1/_2/_N (ODE "
                           "reads a finite rho as a torque limit in N m; pegplus bounds the "
                           "torque by rho times the normal force)"},
};

/* ODE's rolling coefficients about t1, t2 and the normal (contact.cpp getInfo2): rho, then
 * rho2 and rhoN with dContactAxisDep, else rho for all three. */
static void rolling_coefficients(const dSurfaceParameters *sp, double rho[3])
{
    rho[0] = sp->rho;
    rho[1] = sp->mode & dContactAxisDep ? sp->rho2 : sp->rho;
    rho[2] = sp->mode & dContactAxisDep ? sp->rhoN : sp->rho;
}

static void report_unsupported(pp_world *world, const dSurfaceParameters *sp, dGeomID g1,
                               dGeomID g2)
{
    int flags = 0;
    if (!(sp->mode & dContactApprox1_1) && sp->mu > 0.0 && isfinite(sp->mu))
        flags |= PP_FLAG_FORCE_LIMIT;
    if (sp->mode & dContactRolling) {
        static const int approx[3] = {dContactApprox1_1, dContactApprox1_2, dContactApprox1_N};
        double rho[3];
        rolling_coefficients(sp, rho);
        for (int u = 0; u < 3; ++u)
            if (!(sp->mode & approx[u]) && rho[u] > 0.0 && isfinite(rho[u]))
                flags |= PP_FLAG_TORQUE_LIMIT;
    }
    int fresh = flags & ~world->probe_reported;
    if (!fresh) return;
    world->probe_reported |= fresh;
    char list[1024];
    size_t used = 0;
    list[0] = 0;
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; ++i) {
        if (!(fresh & unsupported[i].flag)) continue;
        int n = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "",
                         unsupported[i].what);
        if (n > 0 && (size_t)n < sizeof list - used) used += (size_t)n;
    }
    pp_log(PP_LOG_WARNING,
           "the near callback's contact for dGeomID %p (%s) and dGeomID %p (%s) sets %s, which "
           "the %s model does not honour yet (it honours mu, mu2, fdir1, motion1/2/N, "
           "soft_erp/soft_cfm, slip1/2, rho/rho2/rhoN, bounce and bounce_vel; "
           "docs/drop-in.md); reported "
           "once per world", (void *)g1, pp_geom_class_name(g1), (void *)g2,
           pp_geom_class_name(g2), list, pp_model_name(world->config.model));
}

/* The contact rows beyond pp_surface (docs/drop-in.md): ODE's anisotropic friction
 * (dContactMu2, dContactFDir1) and surface velocity (dContactMotion1/2/N). node0 is the body
 * ODE's rows take first; the geom on its side is g1 or g2 (a callback attaching the joint to
 * other bodies, or to none, gets the side the recorded normal points into: ODE's normal
 * points from g2 into g1). */
static void surface_ext(const dSurfaceParameters *sp, const dReal fdir1[3], dBodyID node0,
                        dGeomID g1, dGeomID g2, const dContactGeom *recorded,
                        const dContactGeom *synthetic, pp_surface_ext *ext)
{
    memset(ext, 0, sizeof *ext);
    if (node0 && node0 == dGeomGetBody(g1))
        ext->node0 = g1;
    else if (node0 && node0 == dGeomGetBody(g2))
        ext->node0 = g2;
    else {
        double s = 0.0;
        for (int k = 0; k < 3; ++k) s += recorded->normal[k] * synthetic->normal[k];
        ext->node0 = s >= 0.0 ? g1 : g2;
    }
    if (sp->mode & (dContactMu2 | dContactFDir1)) {
        ext->flags |= PP_CONTACT_ANISOTROPIC;
        /* ODE clamps a negative coefficient to 0 (contact.cpp getInfo1) */
        double mu2 = sp->mode & dContactMu2 ? sp->mu2 : sp->mu;
        ext->mu2 = mu2 > 0.0 || isnan(mu2) ? mu2 : 0.0; /* NaN: refused below */
        ext->fdir1_set = (sp->mode & dContactFDir1) != 0;
        for (int k = 0; k < 3; ++k) ext->fdir1[k] = fdir1[k];
    }
    if (sp->mode & dContactMotion1) ext->motion[0] = sp->motion1;
    if (sp->mode & dContactMotion2) ext->motion[1] = sp->motion2;
    if (sp->mode & dContactMotionN) ext->motion[2] = sp->motionN;
    if (ext->motion[0] != 0.0 || ext->motion[1] != 0.0 || ext->motion[2] != 0.0)
        ext->flags |= PP_CONTACT_MOTION;
    /* soft contact: ODE's CFM on the normal row, and its ERP, pegplus's own full correction
     * of an overlap (1) without dContactSoftERP */
    if (sp->mode & (dContactSoftCFM | dContactSoftERP)) {
        ext->flags |= PP_CONTACT_SOFT;
        ext->soft_cfm = sp->mode & dContactSoftCFM ? sp->soft_cfm : 0.0;
        ext->soft_erp = sp->mode & dContactSoftERP ? sp->soft_erp : 1.0;
    }
    /* rolling and spinning friction about ODE's t1, t2 and normal (ODE clamps a negative
     * coefficient to 0; NaN is refused below) */
    if (sp->mode & dContactRolling) {
        rolling_coefficients(sp, ext->rho);
        int any = 0;
        for (int u = 0; u < 3; ++u) {
            if (ext->rho[u] < 0.0) ext->rho[u] = 0.0;
            any |= ext->rho[u] > 0.0 || isnan(ext->rho[u]);
        }
        if (any) {
            ext->flags |= PP_CONTACT_ROLLING;
            ext->fdir1_set = (sp->mode & dContactFDir1) != 0;
            for (int k = 0; k < 3; ++k) ext->fdir1[k] = fdir1[k];
            if (!(ext->flags & PP_CONTACT_ANISOTROPIC)) ext->mu2 = sp->mu > 0.0 ? sp->mu : 0.0;
        }
    }
    /* force-dependent slip acts along ODE's t1, t2: it needs that frame */
    if (sp->mode & (dContactSlip1 | dContactSlip2)) {
        ext->slip[0] = sp->mode & dContactSlip1 ? sp->slip1 : 0.0;
        ext->slip[1] = sp->mode & dContactSlip2 ? sp->slip2 : 0.0;
        if (ext->slip[0] != 0.0 || ext->slip[1] != 0.0) {
            ext->flags |= PP_CONTACT_SLIP;
            if (!(ext->flags & PP_CONTACT_ANISOTROPIC)) {
                ext->flags |= PP_CONTACT_ANISOTROPIC;
                ext->mu2 = sp->mu > 0.0 ? sp->mu : 0.0;
                ext->fdir1_set = (sp->mode & dContactFDir1) != 0;
                for (int k = 0; k < 3; ++k) ext->fdir1[k] = fdir1[k];
            }
        }
    }
}

/* The ext's values ODE would refuse or that make no physics: NaN/Inf. */
static const char *surface_ext_problem(const pp_surface_ext *ext, double *value)
{
    if (isnan(ext->mu2)) return *value = ext->mu2, "mu2 must be >= 0 (dInfinity allowed)";
    for (int k = 0; k < 3; ++k) {
        if (ext->fdir1_set && !isfinite(ext->fdir1[k]))
            return *value = ext->fdir1[k], "fdir1 must be finite";
        if (!isfinite(ext->motion[k])) return *value = ext->motion[k], "motion1/2/N must be finite";
    }
    if ((ext->flags & PP_CONTACT_SOFT) && !(ext->soft_cfm >= 0.0 && isfinite(ext->soft_cfm)))
        return *value = ext->soft_cfm, "soft_cfm must be finite and >= 0";
    if ((ext->flags & PP_CONTACT_SOFT) && !(ext->soft_erp >= 0.0 && ext->soft_erp <= 1.0))
        return *value = ext->soft_erp, "soft_erp must be in [0, 1]";
    for (int k = 0; k < 2; ++k)
        if (!(ext->slip[k] >= 0.0 && isfinite(ext->slip[k])))
            return *value = ext->slip[k], "slip1/slip2 must be finite and >= 0";
    for (int k = 0; k < 3; ++k)
        if (isnan(ext->rho[k])) return *value = ext->rho[k], "rho/rho2/rhoN must be >= 0";
    if (ext->fdir1_set && !(ext->fdir1[0] * ext->fdir1[0] + ext->fdir1[1] * ext->fdir1[1] +
                                ext->fdir1[2] * ext->fdir1[2] > 1e-18))
        return *value = 0.0, "fdir1 must not be zero with dContactFDir1";
    return NULL;
}

/* The dJointFeedback of joint j, made by the callback for the pair (g1, g2), to be filled
 * after the step: ODE fills f1, t1 for its node[0] body (the first non-null body given to
 * dJointAttach) and f2, t2 for node[1] when there is one. */
static pp_status add_feedback(pp_world *world, uint64_t key, dJointID j, dGeomID g1,
                              dJointFeedback *fb, int first)
{
    struct pp_probe_cache *c = world->probe;
    pp_status st = pp_grow((void **)&c->feedback, &c->feedback_capacity, c->feedback_count + 1,
                           sizeof(feedback_record));
    if (st != PP_OK) return st;
    dBodyID b0 = dJointGetBody(j, 0), b1 = dJointGetBody(j, 1);
    dBodyID node0 = b0 ? b0 : b1;
    feedback_record *r = &c->feedback[c->feedback_count++];
    r->fb = fb;
    r->key = key;
    r->node0_side = node0 && node0 == dGeomGetBody(g1) ? 0 : 1;
    r->two_bodies = b0 && b1;
    r->first = first;
    return PP_OK;
}

/* Probe the program's callback on shapes a and b: collide or not, and the surface. */
static pp_status probe_pair(pp_world *world, int a, int b, probe_entry *out)
{
    const pp_step_scratch *s = &world->scratch;
    dGeomID g1 = s->shape_geom[a], g2 = s->shape_geom[b];
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    int joints1 = b1 ? dBodyGetNumJoints(b1) : 0, joints2 = b2 ? dBodyGetNumJoints(b2) : 0;
    probe_state p;
    memset(&p, 0, sizeof p);
    p.g1 = g1;
    p.g2 = g2;
    p.group = world->contact_group;
    synthetic_contact(world, a, b, &p.synthetic);
    active_probe = &p;
    world->near_callback(world->near_data, g1, g2);
    active_probe = NULL;
    /* ODE's rows act on node0's velocity relative to node1's: node0 is the joint's first body
     * as attached (dJointAttach moves a NULL first body second, dJOINT_REVERSE) */
    dBodyID node0 = NULL;
    if (p.joints > 0) {
        node0 = dJointGetBody(p.first_joint, 0);
        if (!node0) node0 = dJointGetBody(p.first_joint, 1);
    }
    /* the feedback the callback set on its joints, before they go */
    int feedback = 0;
    pp_status fst = PP_OK;
    for (int t = 0; t < p.joints && t < PP_PROBE_JOINTS_MAX && fst == PP_OK; ++t) {
        dJointFeedback *fb = dJointGetFeedback(p.joint[t]);
        if (fb) fst = add_feedback(world, pair_key(a, b), p.joint[t], g1, fb, feedback++ == 0);
    }
    dJointGroupEmpty(world->contact_group);
    if (fst != PP_OK) return fst;
    if ((b1 && dBodyGetNumJoints(b1) != joints1) || (b2 && b2 != b1 && dBodyGetNumJoints(b2) != joints2)) {
        pp_log(PP_LOG_ERROR,
               "the near callback made a joint pegplus did not see for dGeomID %p (%s) and "
               "dGeomID %p (%s): its dJointCreateContact is libode's. Link -lpegplus before "
               "-lode, or call pp_near_probe_collide and pp_near_probe_joint_create_contact "
               "from the callback (docs/drop-in.md); step refused", (void *)g1,
               pp_geom_class_name(g1), (void *)g2, pp_geom_class_name(g2));
        return PP_ERR_UNSUPPORTED;
    }
    memset(out, 0, sizeof *out);
    out->key = pair_key(a, b);
    out->collide = p.joints > 0;
    out->joints = p.joints;
    out->g1 = g1;
    out->g2 = g2;
    out->feedback = feedback > 0;
    out->surface = world->config.surface;
    if (!out->collide) return PP_OK;
    const dSurfaceParameters *sp = &p.first.surface;
    out->ode = *sp;
    for (int k = 0; k < 3; ++k) out->fdir1[k] = p.first.fdir1[k];
    out->surface.mu = sp->mu;
    out->surface.bounce = sp->mode & dContactBounce ? sp->bounce : 0.0;
    out->surface.bounce_vel = sp->mode & dContactBounce ? sp->bounce_vel : 0.0;
    surface_ext(sp, p.first.fdir1, node0, g1, g2, &p.first.geom, &p.synthetic, &out->ext);
    double value;
    const char *problem = pp_surface_problem(&out->surface, 0, &value);
    if (!problem) problem = surface_ext_problem(&out->ext, &value);
    if (problem) {
        pp_log(PP_LOG_ERROR, "the near callback's contact for dGeomID %p (%s) and dGeomID %p "
                             "(%s): dContact surface.%s (got %g); step refused, nothing in ODE "
                             "changed", (void *)g1, pp_geom_class_name(g1), (void *)g2,
               pp_geom_class_name(g2), problem, value);
        return PP_ERR_INVALID_ARGUMENT;
    }
    report_unsupported(world, sp, g1, g2);
    return PP_OK;
}

pp_status pp_stage_near_probe(pp_world *world)
{
    if (!world->near_callback) return PP_OK;
    const pp_step_scratch *s = &world->scratch;
    pp_status st = reserve(world, s->pair_count);
    if (st != PP_OK) return st;
    struct pp_probe_cache *c = world->probe;
    for (int k = 0; k < s->pair_count; ++k) {
        uint64_t key = pair_key(s->pairs[k].a, s->pairs[k].b);
        if (find_entry(c, key)) continue;
        probe_entry e;
        st = probe_pair(world, s->pairs[k].a, s->pairs[k].b, &e);
        if (st != PP_OK) return st;
        unsigned i = key_slot(key, c->capacity);
        while (c->entry[i].key) i = (i + 1) & (unsigned)(c->capacity - 1);
        c->entry[i] = e;
        c->count++;
    }
    return PP_OK;
}

int pp_pair_surface_of_shapes(const pp_world *world, int a, int b, pp_surface *surface,
                              const pp_surface_ext **ext)
{
    const pp_step_scratch *s = &world->scratch;
    if (ext) *ext = NULL;
    if (!world->near_callback)
        return pp_pair_surface(world, s->shape_geom[a], s->shape_geom[b], surface);
    const probe_entry *e = find_entry(world->probe, pair_key(a, b));
    PP_ASSERT(e, "every candidate pair was probed before stages 3-5");
    if (!e || !e->collide) return 0;
    *surface = e->surface;
    if (ext && e->ext.flags) *ext = &e->ext;
    return 1;
}

/*
 * dJointFeedback on the callback's contact joints (docs/drop-in.md). ODE fills a joint's
 * feedback with the force and torque its rows applied during the step, f = J^T lambda on each
 * body (torque about the body's centre). Under the pegplus models the pair's joint stood only
 * for the pair's surface; the force between the two bodies is the sum over the pair's own
 * contacts of their impulses over the step (every sub-step's time-stepping solve and every
 * PLUS impact), divided by h. A contact of shapes A, B with normal impulse p_n along n (A to
 * B), friction impulse f and rolling torque impulse R on B acts with P = p_n n + f at
 * p_b = p_a + psi n on B and -P at p_a on A:
 *     on B: P, (p_b - x_B) x P + R;      on A: -P, (p_a - x_A) x (-P) - R,
 * x the centres the solve's Jacobians used (the sub-step's start, or the predicted pose of a
 * re-linearisation; an impact's: where it found the bodies). The whole goes to the first joint of the pair with a
 * feedback; any other such joint of the pair gets 0 (the pair's total is the sum, as in ODE).
 */

/* Add the impulse (P on B, R on B) of a contact of shapes sa (A) and B at p_a, p_b, the
 * bodies' centres at x[0], x[1] (NULL for a static side). */
static void add_contact_impulse(const pp_world *world, probe_entry *e, int sa,
                                const double p_a[3], const double p_b[3], const double P[3],
                                const double R[3], const double *x[2])
{
    const pp_step_scratch *s = &world->scratch;
    const int side_a = s->shape_geom[sa] == e->g1 ? 0 : 1;
    const double *at[2] = {p_a, p_b};
    for (int k = 0; k < 2; ++k) { /* k = 0: A, 1: B */
        const double sign = k ? 1.0 : -1.0;
        double *imp = e->impulse[k ? 1 - side_a : side_a];
        double r[3] = {0.0, 0.0, 0.0};
        if (x[k])
            for (int i = 0; i < 3; ++i) r[i] = at[k][i] - x[k][i];
        const double torque[3] = {r[1] * P[2] - r[2] * P[1], r[2] * P[0] - r[0] * P[2],
                                  r[0] * P[1] - r[1] * P[0]};
        for (int i = 0; i < 3; ++i) {
            imp[i] += sign * P[i];
            imp[3 + i] += sign * (torque[i] + (R ? R[i] : 0.0));
        }
    }
}

static probe_entry *feedback_entry(const pp_world *world, int a, int b)
{
    probe_entry *e = (probe_entry *)find_entry(world->probe, pair_key(a, b));
    return e && e->feedback ? e : NULL;
}

/* One island's time-stepping impulses of this sub-step (the last solve's, as
 * pp_world_get_contacts lists them). Islands share no pair: islands on other threads write
 * other entries. */
void pp_contact_feedback_add_island(const pp_world *world, const pp_island_work *iw)
{
    if (!world->near_callback || !world->probe || world->probe->feedback_count == 0 ||
        iw->stats.solves == 0)
        return;
    const pp_constraint_list *l = &iw->list;
    for (int j = 0; j < l->set_count; ++j) {
        const int i = l->sets[j].first;
        const pp_contact *c = &l->contacts[i];
        probe_entry *e = feedback_entry(world, c->shape_a, c->shape_b);
        if (!e) continue;
        double P[3], p_b[3], R[3] = {0.0, 0.0, 0.0};
        for (int k = 0; k < 3; ++k) {
            P[k] = iw->normal_impulse[i] * c->n[k] + iw->friction_vector[3 * i + k];
            p_b[k] = c->p_a[k] + c->psi * c->n[k];
        }
        if (pp_contact_rolling_axes(c) > 0) pp_peg_rolling_impulse(iw->peg, j, R);
        const int *local = world->scratch.body_local;
        const double *x[2] = {c->body_a >= 0 ? &iw->solve_x[3 * local[c->body_a]] : NULL,
                              c->body_b >= 0 ? &iw->solve_x[3 * local[c->body_b]] : NULL};
        add_contact_impulse(world, e, c->shape_a, c->p_a, p_b, P, R, x);
    }
}

/* The PLUS impacts scratch.impact_info[first ..] of this sub-step (impulse on g2 at the
 * contact point; the bodies are where the impact found them). */
void pp_contact_feedback_add_impacts(const pp_world *world, int first)
{
    if (!world->near_callback || !world->probe || world->probe->feedback_count == 0) return;
    const pp_step_scratch *s = &world->scratch;
    for (int m = first; m < s->impact_info_count; ++m) {
        const pp_impact_info *in = &s->impact_info[m];
        int a = -1, b = -1;
        for (int k = 0; k < s->shape_count && (a < 0 || b < 0); ++k) {
            if (s->shape_geom[k] == in->g1) a = k;
            if (s->shape_geom[k] == in->g2) b = k;
        }
        probe_entry *e = a >= 0 && b >= 0 ? feedback_entry(world, a, b) : NULL;
        if (!e) continue;
        const double *x[2] = {s->shape_body[a] >= 0 ? world->bodies[s->shape_body[a]].x : NULL,
                              s->shape_body[b] >= 0 ? world->bodies[s->shape_body[b]].x : NULL};
        add_contact_impulse(world, e, a, in->position, in->position, in->impulse, NULL, x);
    }
}

/* After the step: every recorded feedback gets its pair's impulse / h. */
void pp_contact_feedback_write(const pp_world *world, double h)
{
    if (!world->near_callback || !world->probe) return;
    const struct pp_probe_cache *c = world->probe;
    for (int r = 0; r < c->feedback_count; ++r) {
        const feedback_record *rec = &c->feedback[r];
        const probe_entry *e = find_entry(c, rec->key);
        double f[2][6] = {{0.0}};
        if (e && rec->first)
            for (int k = 0; k < 2; ++k)
                for (int i = 0; i < 6; ++i) f[k][i] = e->impulse[k][i] / h;
        const double *one = f[rec->node0_side], *two = f[1 - rec->node0_side];
        for (int i = 0; i < 3; ++i) {
            rec->fb->f1[i] = one[i];
            rec->fb->t1[i] = one[3 + i];
        }
        if (rec->two_bodies)
            for (int i = 0; i < 3; ++i) {
                rec->fb->f2[i] = two[i];
                rec->fb->t2[i] = two[3 + i];
            }
    }
}
