/*
 * Stage 1c: ODE's auto-disable under the pegplus models.
 *
 * ODE puts an idle body to sleep and wakes it when something touches it (ODE 0.16, util.cpp:
 * dInternalHandleAutoDisabling, then the island walk of dxProcessIslands). Its counters are
 * private, so pegplus keeps its own per body, with ODE's parameters read through the public
 * getters, and runs ODE's two rules at the same point of the step — after the contacts are
 * known, before anything is solved:
 *
 * 1. Sleep. For every stepped body with the auto-disable flag, at least one joint or contact
 *    ("don't freeze objects mid-air": ODE skips a body without joints, and its contacts are
 *    contact joints by then; here a candidate pair of the broadphase stands for a contact
 *    joint) and average_samples > 0: the body's velocity (lvel, avel at the start of the step)
 *    goes into a ring of average_samples samples; once the ring is full the body is idle when
 *    |mean lvel|^2 <= linear_threshold^2 and |mean avel|^2 <= angular_threshold^2. Idle: steps
 *    left -= 1 and time left -= h; not idle: both reset to idle_steps and idle_time. When both
 *    are <= 0 the body is disabled and its velocities are zeroed.
 * 2. Wake. Islands grow from every enabled body through its enabled joints and contacts, and
 *    every body they reach is enabled ("this is how auto-enable works"), without resetting its
 *    counters: a body put to sleep in rule 1 while it touches an awake body is awake again in
 *    the same step (with zero velocity), so a pile sleeps only when all of its bodies are idle
 *    long enough at once. A body the program disabled itself (dBodyDisable) wakes the same way.
 *
 * Disabled bodies are not stepped and their geoms act as immovable geometry (ode_bridge.c), so
 * a body woken here must be collected and its contacts found again: the caller repeats stages
 * 1-6 until a walk wakes nothing more (one repeat per layer of sleeping bodies reached, in
 * practice one). Sleeping islands cost a broadphase entry and nothing else.
 *
 * Differences from ODE, by construction: a candidate pair (bounding boxes inflated by the
 * speculative margin) counts as a contact one or two steps before dCollide would report one,
 * so a falling body meets rule 1 a little earlier (it is moving then, hence not idle, so the
 * sleeping step is the same) and a sleeping body is woken a step before it is touched (never
 * after: a body hit while asleep would meet an immovable obstacle). The counters start when
 * pegplus first steps a body, and dBodyEnable by the program is seen as ODE would see it (it
 * resets steps and time left) only for bodies pegplus put to sleep.
 *
 * Nothing in ODE changes when the step fails: the bodies disabled or enabled here are put
 * back (pp_auto_disable_undo) and the counters are committed only with a successful step.
 */
#include "world_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct adis_counters {
    int sample;          /* next slot of the ring */
    int ready;           /* the ring has been filled once */
    int steps_left;
    double time_left;
} adis_counters;

typedef struct adis_entry {
    dBodyID body;        /* NULL: empty slot */
    adis_counters now, next; /* committed, and this step's (pp_auto_disable_commit) */
    int slept;           /* pegplus disabled it (to recognise dBodyEnable by the program) */
    int enabled_again;   /* step stamp at which it was stepped with `slept` set: slept is
                            cleared by the commit, so a step undone and run again (a failed
                            step, world.c "A sub-step redone shorter") sees it again */
    int samples;         /* ring size the buffer was made for */
    double *ring;        /* 6 per sample: lvel, avel */
    int seen;            /* step stamp */
} adis_entry;

typedef struct adis_change {
    dBodyID body;
    int was_enabled;
    dReal v[3], w[3];
} adis_change;

struct pp_auto_disable {
    adis_entry *slots;
    int capacity, count;  /* power of two, count <= capacity / 2 */
    int stamp;
    adis_change *changes; /* this step's changes to ODE, for the undo */
    int change_count, change_capacity;
    unsigned char *awake; /* per scratch shape's body: reached by the walk */
    int awake_capacity;
};

static unsigned slot_of(dBodyID body, int capacity)
{
    uint64_t h = (uint64_t)(uintptr_t)body * 0x9e3779b97f4a7c15ULL;
    return (unsigned)(h >> 32) & (unsigned)(capacity - 1);
}

static adis_entry *find_entry(struct pp_auto_disable *a, dBodyID body)
{
    if (!a->capacity) return NULL;
    for (unsigned s = slot_of(body, a->capacity);; s = (s + 1) & (unsigned)(a->capacity - 1)) {
        if (a->slots[s].body == body) return &a->slots[s];
        if (!a->slots[s].body) return NULL;
    }
}

static pp_status grow_table(struct pp_auto_disable *a)
{
    int capacity = a->capacity ? 2 * a->capacity : 64;
    adis_entry *slots = calloc((size_t)capacity, sizeof *slots);
    if (!slots) return PP_ERR_NO_MEMORY;
    for (int i = 0; i < a->capacity; ++i) {
        if (!a->slots[i].body) continue;
        unsigned s = slot_of(a->slots[i].body, capacity);
        while (slots[s].body) s = (s + 1) & (unsigned)(capacity - 1);
        slots[s] = a->slots[i];
    }
    free(a->slots);
    a->slots = slots;
    a->capacity = capacity;
    return PP_OK;
}

static void reset_counters(adis_counters *c, dBodyID body)
{
    c->steps_left = dBodyGetAutoDisableSteps(body);
    c->time_left = dBodyGetAutoDisableTime(body);
}

/* The body's entry, made with ODE's initial counters (dBodyCreate) when new. */
static pp_status entry_for(struct pp_auto_disable *a, dBodyID body, adis_entry **out)
{
    adis_entry *e = find_entry(a, body);
    if (!e) {
        if (2 * (a->count + 1) > a->capacity) {
            pp_status st = grow_table(a);
            if (st != PP_OK) return st;
        }
        unsigned s = slot_of(body, a->capacity);
        while (a->slots[s].body) s = (s + 1) & (unsigned)(a->capacity - 1);
        e = &a->slots[s];
        memset(e, 0, sizeof *e);
        e->body = body;
        reset_counters(&e->now, body);
        a->count++;
    }
    e->seen = a->stamp;
    int samples = dBodyGetAutoDisableAverageSamplesCount(body);
    if (samples != e->samples) { /* dBodySetAutoDisableAverageSamplesCount restarts the ring */
        double *ring = samples > 0 ? malloc((size_t)samples * 6 * sizeof *ring) : NULL;
        if (samples > 0 && !ring) return PP_ERR_NO_MEMORY;
        free(e->ring);
        e->ring = ring;
        e->samples = samples;
        e->now.sample = 0;
        e->now.ready = 0;
    }
    e->next = e->now;
    *out = e;
    return PP_OK;
}

/* Entries of bodies no longer seen go (a destroyed body's pointer may come back as a new
 * body); the table is rebuilt in place. */
static pp_status purge(struct pp_auto_disable *a)
{
    int stale = 0;
    for (int i = 0; i < a->capacity; ++i)
        if (a->slots[i].body && a->slots[i].seen != a->stamp) ++stale;
    if (!stale) return PP_OK;
    adis_entry *old = a->slots;
    int capacity = a->capacity;
    a->slots = calloc((size_t)capacity, sizeof *a->slots);
    if (!a->slots) {
        a->slots = old;
        return PP_ERR_NO_MEMORY;
    }
    a->count = 0;
    for (int i = 0; i < capacity; ++i) {
        if (!old[i].body) continue;
        if (old[i].seen != a->stamp) {
            free(old[i].ring);
            continue;
        }
        unsigned s = slot_of(old[i].body, capacity);
        while (a->slots[s].body) s = (s + 1) & (unsigned)(capacity - 1);
        a->slots[s] = old[i];
        a->count++;
    }
    free(old);
    return PP_OK;
}

void pp_auto_disable_free(pp_world *world)
{
    struct pp_auto_disable *a = world->auto_disable;
    if (!a) return;
    for (int i = 0; i < a->capacity; ++i) free(a->slots[i].ring);
    free(a->slots);
    free(a->changes);
    free(a->awake);
    free(a);
    world->auto_disable = NULL;
}

static pp_status record_change(struct pp_auto_disable *a, dBodyID body)
{
    for (int i = 0; i < a->change_count; ++i)
        if (a->changes[i].body == body) return PP_OK; /* the first state is the one to restore */
    pp_status st = pp_grow((void **)&a->changes, &a->change_capacity, a->change_count + 1,
                           sizeof *a->changes);
    if (st != PP_OK) return st;
    adis_change *c = &a->changes[a->change_count++];
    c->body = body;
    c->was_enabled = dBodyIsEnabled(body);
    memcpy(c->v, dBodyGetLinearVel(body), sizeof c->v);
    memcpy(c->w, dBodyGetAngularVel(body), sizeof c->w);
    return PP_OK;
}

/* Rule 1 for stepped body i: its sample, and whether it sleeps now. */
static int idle_long_enough(adis_entry *e, const pp_body *b, dBodyID body, double h)
{
    adis_counters *c = &e->next;
    double *slot = &e->ring[6 * c->sample];
    memcpy(slot, b->v, 3 * sizeof *slot);
    memcpy(slot + 3, b->w, 3 * sizeof *slot);
    if (++c->sample >= e->samples) {
        c->sample = 0;
        c->ready = 1;
    }
    int idle = 0;
    if (c->ready) {
        double lv[3], av[3];
        for (int k = 0; k < 3; ++k) {
            lv[k] = e->ring[k];
            av[k] = e->ring[3 + k];
        }
        if (e->samples > 1) { /* ODE's order: sum from sample 0, then times 1/N */
            for (int s = 1; s < e->samples; ++s)
                for (int k = 0; k < 3; ++k) {
                    lv[k] += e->ring[6 * s + k];
                    av[k] += e->ring[6 * s + 3 + k];
                }
            double r1 = 1.0 / (double)e->samples;
            for (int k = 0; k < 3; ++k) {
                lv[k] *= r1;
                av[k] *= r1;
            }
        }
        double lin = dBodyGetAutoDisableLinearThreshold(body);
        double ang = dBodyGetAutoDisableAngularThreshold(body);
        idle = lv[0] * lv[0] + lv[1] * lv[1] + lv[2] * lv[2] <= lin * lin &&
               av[0] * av[0] + av[1] * av[1] + av[2] * av[2] <= ang * ang;
    }
    if (idle) {
        c->steps_left--;
        c->time_left -= h;
    } else {
        reset_counters(c, body);
    }
    return c->steps_left <= 0 && c->time_left <= 0.0;
}

static int body_of_shape(const pp_step_scratch *s, int shape, dBodyID *out)
{
    *out = dGeomGetBody(s->shape_geom[shape]);
    return *out != NULL;
}

pp_status pp_auto_disable_sleep(pp_world *world, double h)
{
    if (!world->auto_disable) {
        world->auto_disable = calloc(1, sizeof *world->auto_disable);
        if (!world->auto_disable) return PP_ERR_NO_MEMORY;
    }
    struct pp_auto_disable *a = world->auto_disable;
    pp_step_scratch *s = &world->scratch;
    a->stamp++;
    a->change_count = 0;

    /* which stepped bodies have a contact (a candidate pair) */
    pp_status st = pp_grow((void **)&a->awake, &a->awake_capacity, world->body_count + 1, 1);
    if (st != PP_OK) return st;
    memset(a->awake, 0, (size_t)world->body_count);
    for (int p = 0; p < s->pair_count; ++p)
        for (int k = 0; k < 2; ++k) {
            int b = s->shape_body[k ? s->pairs[p].b : s->pairs[p].a];
            if (b >= 0) a->awake[b] = 1;
        }
    for (int i = 0; i < world->body_count; ++i) {
        dBodyID body = world->bodies[i].id;
        adis_entry *e;
        if (!dBodyGetAutoDisableFlag(body)) { /* counters kept while the flag is off */
            if ((e = find_entry(a, body)) != NULL) {
                e->seen = a->stamp;
                e->next = e->now;
            }
            continue;
        }
        st = entry_for(a, body, &e);
        if (st != PP_OK) return st;
        if (e->slept) { /* enabled again by the program (dBodyEnable resets the countdown) */
            reset_counters(&e->next, body);
            e->enabled_again = a->stamp;
        }
        if (e->samples <= 0) continue;
        if (!a->awake[i] && dBodyGetNumJoints(body) == 0) continue; /* mid-air */
        if (!idle_long_enough(e, &world->bodies[i], body, h)) continue;
        st = record_change(a, body);
        if (st != PP_OK) return st;
        dBodyDisable(body);
        dBodySetLinearVel(body, 0, 0, 0);
        dBodySetAngularVel(body, 0, 0, 0);
        memset(world->bodies[i].v, 0, sizeof world->bodies[i].v); /* if woken in this step, */
        memset(world->bodies[i].w, 0, sizeof world->bodies[i].w); /* it starts from rest    */
    }
    /* the bodies of sleeping geoms keep their entries */
    for (int g = 0; g < s->shape_count; ++g) {
        dBodyID body;
        if (s->shape_body[g] < 0 && body_of_shape(s, g, &body)) {
            adis_entry *e = find_entry(a, body);
            if (e) e->seen = a->stamp;
        }
    }
    return purge(a);
}

/* Enabled non-contact joints of an awake stepped body to a body pegplus does not step
 * because it is disabled: that body wakes (ODE's island walk crosses every enabled joint). */
static pp_status wake_joint_partners(struct pp_auto_disable *a, dBodyID body, int *changed)
{
    int joints = dBodyGetNumJoints(body);
    for (int j = 0; j < joints; ++j) {
        dJointID joint = dBodyGetJoint(body, j);
        if (!dJointIsEnabled(joint) || dJointGetType(joint) == dJointTypeContact) continue;
        for (int k = 0; k < 2; ++k) {
            dBodyID other = dJointGetBody(joint, k);
            if (!other || dBodyIsEnabled(other)) continue;
            pp_status st = record_change(a, other);
            if (st != PP_OK) return st;
            dBodyEnable(other);
            *changed = 1;
        }
    }
    return PP_OK;
}

/* Rule 2 over the step's candidate pairs and joints: returns in *changed whether a body
 * changed state (then stages 1-6 must run again). */
pp_status pp_auto_disable_wake(pp_world *world, int *changed)
{
    struct pp_auto_disable *a = world->auto_disable;
    pp_step_scratch *s = &world->scratch;
    *changed = 0;
    if (!a) return PP_OK;
    const int nb = world->body_count;
    pp_status st = pp_grow((void **)&a->awake, &a->awake_capacity, nb + 1, 1);
    if (st != PP_OK) return st;
    /* Seeds: the stepped bodies still enabled. The walk crosses pairs and joints between
     * stepped bodies; body -> pairs adjacency is not kept, so it sweeps the pair and joint
     * lists until a sweep reaches no new body (each sweep reaches at least one, or ends). */
    for (int i = 0; i < nb; ++i) a->awake[i] = (unsigned char)dBodyIsEnabled(world->bodies[i].id);
    int progress = 1;
    while (progress) {
        progress = 0;
        for (int p = 0; p < s->pair_count; ++p) {
            int ba = s->shape_body[s->pairs[p].a], bb = s->shape_body[s->pairs[p].b];
            if (ba >= 0 && bb >= 0 && a->awake[ba] != a->awake[bb]) {
                a->awake[a->awake[ba] ? bb : ba] = 1;
                progress = 1;
            }
        }
        for (int j = 0; j < world->joint_count; ++j) {
            int b0 = world->joints[j].body_a, b1 = world->joints[j].body_b;
            if (b0 >= 0 && b1 >= 0 && a->awake[b0] != a->awake[b1]) {
                a->awake[a->awake[b0] ? b1 : b0] = 1;
                progress = 1;
            }
        }
    }
    for (int i = 0; i < nb; ++i) {
        dBodyID body = world->bodies[i].id;
        if (a->awake[i] && !dBodyIsEnabled(body)) { /* put to sleep, touched: awake */
            dBodyEnable(body);
            continue;
        }
        if (!a->awake[i]) *changed = 1; /* asleep now: no longer stepped */
    }
    /* ... and wakes the body of any sleeping geom an awake body meets */
    for (int p = 0; p < s->pair_count; ++p) {
        int sa = s->pairs[p].a, sb = s->pairs[p].b;
        int ba = s->shape_body[sa], bb = s->shape_body[sb];
        int other = ba < 0 ? sa : bb < 0 ? sb : -1, mine = ba < 0 ? bb : ba;
        dBodyID body;
        if (other < 0 || mine < 0 || !a->awake[mine]) continue;
        if (!body_of_shape(s, other, &body) || dBodyIsEnabled(body)) continue;
        if ((st = record_change(a, body)) != PP_OK) return st;
        dBodyEnable(body);
        *changed = 1;
    }
    for (int i = 0; i < nb; ++i)
        if (a->awake[i] && (st = wake_joint_partners(a, world->bodies[i].id, changed)) != PP_OK)
            return st;
    return PP_OK;
}

/* A body put to sleep in this step: its entry remembers it (dBodyEnable detection). */
void pp_auto_disable_commit(pp_world *world)
{
    struct pp_auto_disable *a = world->auto_disable;
    if (!a) return;
    for (int i = 0; i < a->capacity; ++i)
        if (a->slots[i].body && a->slots[i].seen == a->stamp) {
            a->slots[i].now = a->slots[i].next;
            if (a->slots[i].enabled_again == a->stamp) a->slots[i].slept = 0;
        }
    for (int i = 0; i < a->change_count; ++i) {
        adis_entry *e = find_entry(a, a->changes[i].body);
        if (e) e->slept = !dBodyIsEnabled(e->body);
    }
    a->change_count = 0;
}

void pp_auto_disable_undo(pp_world *world)
{
    struct pp_auto_disable *a = world->auto_disable;
    if (!a) return;
    for (int i = a->change_count - 1; i >= 0; --i) {
        const adis_change *c = &a->changes[i];
        if (c->was_enabled) dBodyEnable(c->body);
        else dBodyDisable(c->body);
        dBodySetLinearVel(c->body, c->v[0], c->v[1], c->v[2]);
        dBodySetAngularVel(c->body, c->w[0], c->w[1], c->w[2]);
    }
    a->change_count = 0;
}
