/*
 * The LCP warm start, kept by constraint identity (docs/design.md "Warm start by constraint
 * identity").
 *
 * Lemke's method can start from a complementary basis guessed from the previous solve
 * (pegplus/lcp.h: it is tried first, and when it is not a solution Lemke pivots from it).
 * The basis is a byte per LCP unknown (bit 0 Lemke's, bit 1 load sharing's compliant basis,
 * pegplus/peg.h; kept whole), and the unknowns belong to constraint sets: a set's
 * record is [p, the slacks of its secondaries, beta_1..k, sigma] (pp_peg_basis_records). A
 * set is identified across steps, sub-steps and re-linearisation iterates by its primary
 * contact's geoms and features, its kind and its size; a set no store knows starts with its
 * w variables basic (z = 0) but for the slacks its gaps say are positive
 * (unknown_set_record), so a basis that matches in part is kept in part (Lemke then repairs
 * it) instead of being thrown away whenever the contact set changes anywhere.
 *
 * The answer. The sticking solve of a large resting island (contact/src/lcp_sticking.c)
 * starts its interior-point stage from a point near the answer; the island's answer z of its
 * last solve is kept the same way, one record of doubles per set (the same unknowns as the
 * basis record, pp_peg_answer_records) under the set's key with `answer` = its kind, and
 * gathered into the next step's start (0 for sets no store knows: the interior solve's cold
 * value). The kinds are the caller's: the stepper keeps the answer of a step's first solve
 * (its start pose; a resting island's reduced sets) apart from its re-linearisation
 * iterates' (other sets, another q), each the start of the same solve of the next step: on
 * heap50 the first solve started from the last iterate's answer went to Lemke on 2 of 12
 * steps (617, 746 pivots), from the first solve's on none.
 * Kept with the island's sets, not in a worker's workspace, the start is the island's own
 * whichever worker solves it and whichever islands it solved before (world.c step_island).
 *
 * Storage: an open-addressing hash table of 16-byte slots (the key's hash, a stamp and the
 * entry's offset) over a pool that holds each entry's key, size and record one after the
 * other; both grow to the peak and are reused. A slot is in use only when its stamp is the
 * store's generation, so clearing a store is O(1) (the generation moves on) instead of a
 * pass over every slot: the step's stores hold the bases of every island in the world, and
 * clearing them was a memset of a table that outgrows the caches with the number of islands.
 * The small slots keep the probes of a lookup in one cache line; the key is read from the
 * pool only when the hashes agree.
 *
 * Saved and restored as text with the bodies' state (pp_world_save_warm_start, at the end).
 */
#include "world_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct warm_key {
    dGeomID g1, g2;
    int contact_kind, feature_a, feature_b;
    int set_kind, set_count, directions;
    int answer;            /* 0: the basis bytes, > 0: the answer's doubles of that kind */
} warm_key;

/* In the pool: the key and the record's size, then the record (size bytes, padded to 8). */
typedef struct warm_entry {
    warm_key key;
    int size;
} warm_entry;

typedef struct warm_slot {
    uint64_t hash;         /* key_hash of the entry's key */
    unsigned stamp;        /* in use when == the store's generation */
    int offset;            /* of the entry in the pool */
} warm_slot;

struct pp_warm_store {
    warm_slot *slots;
    int capacity, count;   /* capacity a power of two, count <= capacity / 2 */
    unsigned generation;   /* never 0: calloc'ed slots are empty */
    unsigned char *pool;
    size_t pool_size, pool_capacity;
    unsigned char *records;  /* scratch: the records of one list */
    int records_capacity;
    const struct pp_warm_store *more; /* looked in after this one (pp_warm_store_chain) */
};

pp_status pp_warm_store_create(struct pp_warm_store **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return PP_ERR_NO_MEMORY;
    (*out)->generation = 1;
    return PP_OK;
}

void pp_warm_store_destroy(struct pp_warm_store *store)
{
    if (!store) return;
    free(store->slots);
    free(store->pool);
    free(store->records);
    free(store);
}

void pp_warm_store_clear(struct pp_warm_store *store)
{
    if (!store) return;
    if (store->count && ++store->generation == 0) { /* wrapped: stamps may repeat */
        memset(store->slots, 0, (size_t)store->capacity * sizeof *store->slots);
        store->generation = 1;
    }
    store->count = 0;
    store->pool_size = 0;
    store->more = NULL;
}

void pp_warm_store_chain(struct pp_warm_store *store, const struct pp_warm_store *more)
{
    store->more = more;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

static uint64_t key_hash(const warm_key *k)
{
    uint64_t h = 1469598103934665603ULL;
    h = mix(h, (uint64_t)(uintptr_t)k->g1);
    h = mix(h, (uint64_t)(uintptr_t)k->g2);
    h = mix(h, (uint64_t)(unsigned)k->contact_kind);
    h = mix(h, (uint64_t)(unsigned)k->feature_a);
    h = mix(h, (uint64_t)(unsigned)k->feature_b);
    h = mix(h, (uint64_t)(unsigned)k->set_kind);
    h = mix(h, (uint64_t)(unsigned)k->set_count);
    h = mix(h, (uint64_t)(unsigned)k->directions);
    h = mix(h, (uint64_t)(unsigned)k->answer);
    return h ^ (h >> 29);
}

static int key_equal(const warm_key *a, const warm_key *b)
{
    return a->g1 == b->g1 && a->g2 == b->g2 && a->contact_kind == b->contact_kind &&
           a->feature_a == b->feature_a && a->feature_b == b->feature_b &&
           a->set_kind == b->set_kind && a->set_count == b->set_count &&
           a->directions == b->directions && a->answer == b->answer;
}

static warm_key set_key(const pp_world *world, const pp_constraint_list *list, int j, int k)
{
    const pp_peg_set *set = &list->sets[j];
    const pp_contact *c = &list->contacts[set->first];
    warm_key key;
    memset(&key, 0, sizeof key); /* padding too: keys are compared field by field anyway */
    key.g1 = world->scratch.shape_geom[c->shape_a];
    key.g2 = world->scratch.shape_geom[c->shape_b];
    key.contact_kind = (int)c->kind;
    key.feature_a = c->feature_a;
    key.feature_b = c->feature_b;
    key.set_kind = (int)set->kind;
    key.set_count = set->count;
    key.directions = k;
    return key;
}

static warm_entry *entry_at(const struct pp_warm_store *store, int offset)
{
    return (warm_entry *)(void *)(store->pool + offset);
}

static unsigned char *record_of(warm_entry *e)
{
    return (unsigned char *)(e + 1);
}

static int live(const struct pp_warm_store *store, const warm_slot *slot)
{
    return slot->stamp == store->generation;
}

/* The slot of key (hash h) in store: its own, or the empty one where it would go. */
static warm_slot *probe(const struct pp_warm_store *store, const warm_key *key, uint64_t h)
{
    unsigned mask = (unsigned)store->capacity - 1;
    for (unsigned i = (unsigned)h & mask;; i = (i + 1) & mask) {
        warm_slot *slot = &store->slots[i];
        if (!live(store, slot)) return slot;
        if (slot->hash == h && key_equal(&entry_at(store, slot->offset)->key, key)) return slot;
    }
}

/* key's entry in store or in the stores chained after it, the first that knows it. */
static warm_entry *find(const struct pp_warm_store *store, const warm_key *key)
{
    uint64_t h = 0;
    for (int hashed = 0; store; store = store->more) {
        if (store->count == 0) continue;
        if (!hashed) h = key_hash(key), hashed = 1;
        const warm_slot *slot = probe(store, key, h);
        if (live(store, slot)) return entry_at(store, slot->offset);
    }
    return NULL;
}

/* key's entry in `first`, else in `second`. */
static warm_entry *find_either(const struct pp_warm_store *first,
                               const struct pp_warm_store *second, const warm_key *key)
{
    warm_entry *e = find(first, key);
    return e ? e : find(second, key);
}

static pp_status rehash(struct pp_warm_store *store, int capacity)
{
    warm_slot *slots = calloc((size_t)capacity, sizeof *slots);
    if (!slots) return PP_ERR_NO_MEMORY;
    unsigned mask = (unsigned)capacity - 1;
    for (int i = 0; i < store->capacity; ++i) {
        const warm_slot *e = &store->slots[i];
        if (!live(store, e)) continue;
        unsigned s = (unsigned)e->hash & mask;
        while (slots[s].stamp == store->generation) s = (s + 1) & mask;
        slots[s] = *e;
    }
    free(store->slots);
    store->slots = slots;
    store->capacity = capacity;
    return PP_OK;
}

/* Insert or overwrite key's record. */
static pp_status insert(struct pp_warm_store *store, const warm_key *key,
                        const unsigned char *record, int size)
{
    if (2 * (store->count + 1) > store->capacity) {
        pp_status st = rehash(store, store->capacity ? 2 * store->capacity : 64);
        if (st != PP_OK) return st;
    }
    uint64_t h = key_hash(key);
    warm_slot *slot = probe(store, key, h);
    int used = live(store, slot);
    if (!used || entry_at(store, slot->offset)->size != size) {
        /* new, or a record of another size: a fresh entry in the pool */
        size_t bytes = sizeof(warm_entry) + (((size_t)size + 7) & ~(size_t)7);
        if (store->pool_size + bytes > store->pool_capacity) {
            size_t cap = store->pool_capacity ? 2 * store->pool_capacity : 4096;
            while (cap < store->pool_size + bytes) cap *= 2;
            unsigned char *pool = realloc(store->pool, cap);
            if (!pool) return PP_ERR_NO_MEMORY;
            store->pool = pool;
            store->pool_capacity = cap;
        }
        if (!used) store->count++;
        slot->hash = h;
        slot->stamp = store->generation;
        slot->offset = (int)store->pool_size;
        store->pool_size += bytes;
        warm_entry *e = entry_at(store, slot->offset);
        e->key = *key;
        e->size = size;
    }
    memcpy(record_of(entry_at(store, slot->offset)), record, (size_t)size);
    return PP_OK;
}

/* Unknowns of the records of every set of the list, one after the other. */
static int records_size(const pp_constraint_list *list, int k)
{
    int count = 0;
    for (int j = 0; j < list->set_count; ++j) count += pp_peg_record_size(&list->sets[j], k);
    return count;
}

static pp_status records_buffer(struct pp_warm_store *store, int bytes)
{
    return pp_grow((void **)&store->records, &store->records_capacity, bytes > 0 ? bytes : 1, 1);
}

/* Each set's record in the store's records buffer (`unit` bytes an unknown, one set after
 * the other) inserted under its key, `answer` its kind (0: the basis bytes). */
static pp_status insert_records(struct pp_warm_store *store, const pp_world *world,
                                const pp_constraint_list *list, int k, int answer, size_t unit)
{
    const unsigned char *rec = store->records;
    pp_status st = PP_OK;
    for (int j = 0; j < list->set_count && st == PP_OK; ++j) {
        const int size = pp_peg_record_size(&list->sets[j], k) * (int)unit;
        warm_key key = set_key(world, list, j, k);
        key.answer = answer;
        st = insert(store, &key, rec, size);
        rec += size;
    }
    return st;
}

pp_status pp_warm_store_put(struct pp_warm_store *store, const pp_world *world,
                            const pp_constraint_list *list, int k, const unsigned char *basis)
{
    pp_status st = records_buffer(store, records_size(list, k));
    if (st != PP_OK) return st;
    pp_peg_basis_records(list->set_count, list->sets, list->contacts, k, (unsigned char *)basis,
                         store->records, 0);
    return insert_records(store, world, list, k, 0, 1);
}

pp_status pp_warm_store_merge(struct pp_warm_store *to, const struct pp_warm_store *from)
{
    pp_status st = PP_OK;
    for (int i = 0; from && from->count && i < from->capacity && st == PP_OK; ++i) {
        const warm_slot *slot = &from->slots[i];
        if (!live(from, slot)) continue;
        warm_entry *e = entry_at(from, slot->offset);
        st = insert(to, &e->key, record_of(e), e->size);
    }
    return st;
}

/*
 * The guess for a set no store knows: its w variables basic (z = 0), except the slacks that
 * the gaps alone say are positive. A secondary with a larger gap than the primary's (an
 * ineligible face, peg_constraints.c choose_primary) has slack row (Eq 39)
 * w_s = (psi_0 - psi_s)/h + (G_0 - G_s)^T nu + sum_{r<=s} c_r, negative by (psi_s - psi_0)/h
 * with c = 0: the forward substitution of pp_peg_set_slacks (c_s = max(psi_s - m_{s-1}, 0))
 * at nu = 0 says which c_s are basic. Only a guess: Lemke repairs what the velocity terms
 * change, and a moving island tries no partly known basis at all (stage_time_step.c).
 */
static void unknown_set_record(const pp_constraint_list *list, int j, unsigned char *rec,
                               int size)
{
    const pp_peg_set *set = &list->sets[j];
    memset(rec, 0, (size_t)size);
    double m = list->contacts[set->first].psi;
    for (int s = 1; s < set->count; ++s) {
        double psi = list->contacts[set->first + s].psi;
        if (psi > m) {
            rec[s] = 1;
            m = psi;
        }
    }
}

/* Each set's record found in either store, into first's records buffer (`unit` bytes an
 * unknown, kind `answer` as insert_records); a set no store knows gets unknown_set_record's
 * guess (the basis bytes) or zeros (an answer). Returns the sets found. */
static int gather_records(struct pp_warm_store *first, const struct pp_warm_store *second,
                          const pp_world *world, const pp_constraint_list *list, int k,
                          int answer, size_t unit)
{
    unsigned char *rec = first->records;
    int found = 0;
    for (int j = 0; j < list->set_count; ++j) {
        const int size = pp_peg_record_size(&list->sets[j], k) * (int)unit;
        warm_key key = set_key(world, list, j, k);
        key.answer = answer;
        warm_entry *e = find_either(first, second, &key);
        if (e && e->size == size) {
            memcpy(rec, record_of(e), (size_t)size);
            ++found;
        } else if (answer == 0) {
            unknown_set_record(list, j, rec, size);
        } else {
            memset(rec, 0, (size_t)size);
        }
        rec += size;
    }
    return found;
}

/* The whole LCP's unknowns of the list's sets (rolling ones included). */
static size_t whole_unknowns(const pp_constraint_list *list, int k)
{
    return (size_t)pp_peg_lcp_size(list->set_count, list->contact_count, k) +
           (size_t)list->set_count * PP_CONTACT_ROLLING_UNKNOWNS_MAX;
}

int pp_warm_store_get(struct pp_warm_store *first, const struct pp_warm_store *second,
                      const pp_world *world, const pp_constraint_list *list, int k,
                      unsigned char *basis)
{
    memset(basis, 0, whole_unknowns(list, k));
    if (records_buffer(first, records_size(list, k)) != PP_OK) return 0;
    const int found = gather_records(first, second, world, list, k, 0, 1);
    pp_peg_basis_records(list->set_count, list->sets, list->contacts, k, basis, first->records, 1);
    return found;
}

pp_status pp_warm_store_put_answer(struct pp_warm_store *store, const pp_world *world,
                                   const pp_constraint_list *list, int k, int kind,
                                   const double *z)
{
    pp_status st = records_buffer(store, records_size(list, k) * (int)sizeof *z);
    if (st != PP_OK) return st;
    pp_peg_answer_records(list->set_count, list->sets, list->contacts, k, (double *)z,
                          (double *)(void *)store->records, 0);
    return insert_records(store, world, list, k, kind, sizeof *z);
}

int pp_warm_store_get_answer(struct pp_warm_store *first, const struct pp_warm_store *second,
                             const pp_world *world, const pp_constraint_list *list, int k,
                             int kind, double *z)
{
    const size_t n = whole_unknowns(list, k);
    for (size_t i = 0; i < n; ++i) z[i] = 0.0;
    if (records_buffer(first, records_size(list, k) * (int)sizeof *z) != PP_OK) return 0;
    const int found = gather_records(first, second, world, list, k, kind, sizeof *z);
    pp_peg_answer_records(list->set_count, list->sets, list->contacts, k, z,
                          (double *)(void *)first->records, 1);
    return found;
}

/*
 * Joint rows: a stop's or a motor's LCP unknowns (contact/src/peg_joints.c: beta+, sigma+,
 * beta-, sigma-; equalities have none) are kept the same way, keyed by the dJointID, the row's
 * index in the joint and its unknowns' count; their bytes follow the contacts' in the basis.
 * Returns (get) the rows found, *wanted the rows that have unknowns.
 */
static warm_key joint_key(const pp_joint *joint, int row, int unknowns)
{
    warm_key key;
    memset(&key, 0, sizeof key);
    key.g1 = (dGeomID)(void *)joint->id; /* a joint's address: never a geom's */
    key.contact_kind = -1;
    key.feature_a = row;
    key.set_kind = -1;
    key.set_count = unknowns;
    return key;
}

pp_status pp_warm_store_put_joints(struct pp_warm_store *store, const pp_world *world,
                                   const pp_island_work *iw, const unsigned char *basis)
{
    pp_status st = PP_OK;
    int at = 0, r = 0;
    for (int t = 0; t < iw->joint_count && st == PP_OK; ++t) {
        const pp_joint *joint = &world->joints[iw->joints[t]];
        for (int e = 0; e < joint->row_count && st == PP_OK; ++e, ++r) {
            int u = pp_peg_joint_unknowns(1, &iw->joint_rows[r]);
            if (u == 0) continue;
            warm_key key = joint_key(joint, e, u);
            st = insert(store, &key, basis + at, u);
            at += u;
        }
    }
    return st;
}

int pp_warm_store_get_joints(struct pp_warm_store *first, const struct pp_warm_store *second,
                             const pp_world *world, const pp_island_work *iw,
                             unsigned char *basis, int *wanted)
{
    int at = 0, r = 0, found = 0;
    *wanted = 0;
    for (int t = 0; t < iw->joint_count; ++t) {
        const pp_joint *joint = &world->joints[iw->joints[t]];
        for (int e = 0; e < joint->row_count; ++e, ++r) {
            int u = pp_peg_joint_unknowns(1, &iw->joint_rows[r]);
            if (u == 0) continue;
            ++*wanted;
            warm_key key = joint_key(joint, e, u);
            warm_entry *w = find_either(first, second, &key);
            if (w && w->size == u) {
                memcpy(basis + at, record_of(w), (size_t)u);
                ++found;
            } else {
                memset(basis + at, 0, (size_t)u);
            }
            at += u;
        }
    }
    return found;
}

/*
 * The warm start saved with the bodies' state (pegplus.h pp_world_save_warm_start). What the
 * next step reads is scratch.warm_prev (an island's own store is emptied before the island
 * runs, world.c step_island), so that store is the world's warm start. Its keys hold dGeomIDs
 * and dJointIDs, which another process does not share: they are written as indices in an
 * enumeration a program that builds the same scene the same way reproduces:
 *   geoms   world->geoms after a collect: the order pegplus first saw them (ode_bridge.c "A
 *           stable order"), which for a freshly built scene is its space's order, ODE's
 *           creation order reversed, whatever poses the program then sets (a geom never
 *           collided is dirty, and dGeomMoved moves only clean geoms);
 *   joints  every joint but contact joints, found from world->bodies in their order through
 *           dBodyGetJoint, each from its first managed body (stage_joints.c's walk, enabled
 *           or not).
 * Text, version 1:
 *     pegplus-warm-start 1
 *     model standard                 the model of the step that made it (pp_model_name)
 *     geoms N                        then N lines: each geom's class (ODE's words)
 *     joints M                       then M lines: each joint's dJointType number
 *     entries E                      then E lines, sorted:
 *     e A B contact_kind feature_a feature_b set_kind set_count directions answer size DATA
 *     end pegplus-warm-start
 * A and B are gI (a geom's index), jI (a joint's: A of a joint row's entry) or - (none). DATA
 * is the record: answer 0, the basis bytes as 2 size hex digits; answer > 0, size / 8 doubles
 * as hex floats (%a), which read back bit for bit.
 */
enum { WARM_TEXT_VERSION = 1 };
static const char WARM_MAGIC[] = "pegplus-warm-start";

/* An object of a key as written: kind 'g', 'j' or 0 (none), and its index. */
typedef struct warm_ref {
    int kind, index;
} warm_ref;

/* The enumeration: geoms and joints in their written order, and sorted copies to find an
 * object's index by its pointer. */
typedef struct warm_objects {
    int geom_count, joint_count;
    const dGeomID *geoms;          /* world->geoms */
    dJointID *joints;
    struct warm_pointer { const void *p; int index; } *sorted;
    int sorted_count;
} warm_objects;

static int by_pointer(const void *a, const void *b)
{
    const uintptr_t x = (uintptr_t)((const struct warm_pointer *)a)->p;
    const uintptr_t y = (uintptr_t)((const struct warm_pointer *)b)->p;
    return (x > y) - (x < y);
}

static void objects_free(warm_objects *o)
{
    free(o->joints);
    free(o->sorted);
    memset(o, 0, sizeof *o);
}

/* The world's geoms and joints, enumerated as the header comment says. */
/* A geom's class as one word of the text: ODE's name of it, or dUserClass<N> for a class the
 * program registered with dCreateGeomClass (pp_geom_class_name's "a user geom class"). */
static const char *class_word(dGeomID geom, char buf[32])
{
    const char *name = pp_geom_class_name(geom);
    if (!strchr(name, ' ')) return name;
    snprintf(buf, 32, "dUserClass%d", dGeomGetClass(geom));
    return buf;
}

static pp_status objects_enumerate(pp_world *world, warm_objects *o)
{
    memset(o, 0, sizeof *o);
    pp_status st = pp_bridge_collect(world);
    if (st != PP_OK) return st;
    o->geom_count = world->geom_count;
    o->geoms = world->geoms;
    int capacity = 0;
    for (int i = 0; i < world->body_count && st == PP_OK; ++i) {
        dBodyID body = world->bodies[i].id;
        for (int k = 0; k < dBodyGetNumJoints(body) && st == PP_OK; ++k) {
            dJointID joint = dBodyGetJoint(body, k);
            if (dJointGetType(joint) == dJointTypeContact) continue;
            dBodyID d0 = dJointGetBody(joint, 0), d1 = dJointGetBody(joint, 1);
            int a = d0 ? pp_bridge_find_body(world, d0) : -1;
            int b = d1 ? pp_bridge_find_body(world, d1) : -1;
            if ((a >= 0 ? a : b) != i) continue; /* seen from its first managed body */
            st = pp_grow((void **)&o->joints, &capacity, o->joint_count + 1, sizeof *o->joints);
            if (st == PP_OK) o->joints[o->joint_count++] = joint;
        }
    }
    int n = o->geom_count + o->joint_count;
    if (st == PP_OK && !(o->sorted = malloc((size_t)(n ? n : 1) * sizeof *o->sorted))) st = PP_ERR_NO_MEMORY;
    if (st != PP_OK) {
        objects_free(o);
        return st;
    }
    for (int i = 0; i < o->geom_count; ++i) o->sorted[i] = (struct warm_pointer){o->geoms[i], i};
    for (int i = 0; i < o->joint_count; ++i)
        o->sorted[o->geom_count + i] = (struct warm_pointer){o->joints[i], o->geom_count + i};
    o->sorted_count = n;
    qsort(o->sorted, (size_t)n, sizeof *o->sorted, by_pointer);
    return PP_OK;
}

/* The written form of a key's object pointer; 0 when it is not in the world any more. */
static int object_ref(const warm_objects *o, const void *p, warm_ref *out)
{
    out->kind = 0;
    out->index = -1;
    if (!p) return 1;
    struct warm_pointer probe = {p, 0};
    const struct warm_pointer *f = bsearch(&probe, o->sorted, (size_t)o->sorted_count,
                                           sizeof *o->sorted, by_pointer);
    if (!f) return 0;
    out->kind = f->index < o->geom_count ? 'g' : 'j';
    out->index = f->index < o->geom_count ? f->index : f->index - o->geom_count;
    return 1;
}

/* An entry as written: its objects, its key's numbers and its record. */
typedef struct warm_written {
    warm_ref a, b;
    const warm_entry *entry;
} warm_written;

static int compare_ref(warm_ref x, warm_ref y)
{
    if (x.kind != y.kind) return x.kind < y.kind ? -1 : 1;
    return (x.index > y.index) - (x.index < y.index);
}

static int by_written_key(const void *pa, const void *pb)
{
    const warm_written *x = pa, *y = pb;
    int c = compare_ref(x->a, y->a);
    if (!c) c = compare_ref(x->b, y->b);
    const warm_key *p = &x->entry->key, *q = &y->entry->key;
    const int u[7] = {p->contact_kind, p->feature_a, p->feature_b, p->set_kind, p->set_count,
                      p->directions, p->answer};
    const int v[7] = {q->contact_kind, q->feature_a, q->feature_b, q->set_kind, q->set_count,
                      q->directions, q->answer};
    for (int i = 0; i < 7 && !c; ++i) c = (u[i] > v[i]) - (u[i] < v[i]);
    return c;
}

/* A growing text buffer. */
typedef struct warm_text {
    char *s;
    size_t size, capacity;
    int failed;
} warm_text;

static void text_add(warm_text *t, const char *format, ...)
{
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, format);
        int n = vsnprintf(t->s ? t->s + t->size : NULL, t->s ? t->capacity - t->size : 0, format, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if (t->s && t->size + (size_t)n < t->capacity) {
            t->size += (size_t)n;
            return;
        }
        size_t capacity = t->capacity ? 2 * t->capacity : 4096;
        while (capacity < t->size + (size_t)n + 1) capacity *= 2;
        char *s = realloc(t->s, capacity);
        if (!s) {
            t->failed = 1;
            return;
        }
        t->s = s;
        t->capacity = capacity;
    }
}

static void text_ref(warm_text *t, warm_ref r)
{
    if (r.kind) text_add(t, " %c%d", r.kind, r.index);
    else text_add(t, " -");
}

pp_status pp_world_save_warm_start(pp_world *world, char **text)
{
    if (!world || !text) {
        pp_log(PP_LOG_ERROR, "pp_world_save_warm_start: %s is NULL", world ? "text" : "world");
        return PP_ERR_NULL_ARGUMENT;
    }
    *text = NULL;
    warm_objects o;
    pp_status st = objects_enumerate(world, &o);
    if (st != PP_OK) return st;
    /* scratch.warm_prev and the stores chained after it (several workers' islands), whose
     * keys are disjoint (time_step_islands) */
    const struct pp_warm_store *store = world->scratch.warm_prev;
    int count = 0;
    for (const struct pp_warm_store *c = store; c; c = c->more) count += c->count;
    warm_written *w = malloc((size_t)(count ? count : 1) * sizeof *w);
    if (!w) {
        objects_free(&o);
        return PP_ERR_NO_MEMORY;
    }
    int n = 0; /* entries of objects still in the world (a destroyed geom's are dropped) */
    for (const struct pp_warm_store *c = store; c; c = c->more)
        for (int i = 0; c->count && i < c->capacity; ++i) {
            const warm_slot *slot = &c->slots[i];
            if (!live(c, slot)) continue;
            const warm_entry *e = entry_at(c, slot->offset);
            if (object_ref(&o, e->key.g1, &w[n].a) && object_ref(&o, e->key.g2, &w[n].b))
                w[n++].entry = e;
        }
    qsort(w, (size_t)n, sizeof *w, by_written_key);
    warm_text t = {NULL, 0, 0, 0};
    /* the model of the step that made it; a world that never stepped has an empty one */
    const pp_model model = store ? world->scratch.warm_model : world->config.model;
    text_add(&t, "%s %d\nmodel %s\ngeoms %d\n", WARM_MAGIC, WARM_TEXT_VERSION,
             pp_model_name(model), o.geom_count);
    for (int i = 0; i < o.geom_count; ++i) {
        char buf[32];
        text_add(&t, "%s\n", class_word(o.geoms[i], buf));
    }
    text_add(&t, "joints %d\n", o.joint_count);
    for (int i = 0; i < o.joint_count; ++i) text_add(&t, "%d\n", (int)dJointGetType(o.joints[i]));
    text_add(&t, "entries %d\n", n);
    for (int i = 0; i < n; ++i) {
        const warm_entry *e = w[i].entry;
        const warm_key *k = &e->key;
        text_add(&t, "e");
        text_ref(&t, w[i].a);
        text_ref(&t, w[i].b);
        text_add(&t, " %d %d %d %d %d %d %d %d ", k->contact_kind, k->feature_a, k->feature_b,
                 k->set_kind, k->set_count, k->directions, k->answer, e->size);
        const unsigned char *rec = record_of((warm_entry *)e);
        if (k->answer == 0) {
            for (int b = 0; b < e->size; ++b) text_add(&t, "%02x", rec[b]);
        } else {
            for (int d = 0; d < e->size / (int)sizeof(double); ++d) {
                double x;
                memcpy(&x, rec + d * sizeof x, sizeof x);
                text_add(&t, d ? " %a" : "%a", x);
            }
        }
        text_add(&t, "\n");
    }
    text_add(&t, "end %s\n", WARM_MAGIC);
    free(w);
    objects_free(&o);
    if (t.failed) {
        free(t.s);
        return PP_ERR_NO_MEMORY;
    }
    *text = t.s;
    return PP_OK;
}

/* The restore's reader: a cursor over the text, and the line it is on for messages. */
typedef struct warm_reader {
    const char *p;
    int line;
} warm_reader;

static void skip_blanks(warm_reader *r)
{
    while (*r->p == ' ' || *r->p == '\t') ++r->p;
}

/* The next word of this line (at most size - 1 characters) into buf; 0 when none. */
static int read_word(warm_reader *r, char *buf, size_t size)
{
    skip_blanks(r);
    size_t n = 0;
    while (r->p[n] && !isspace((unsigned char)r->p[n])) ++n;
    if (n == 0 || n >= size) return 0;
    memcpy(buf, r->p, n);
    buf[n] = '\0';
    r->p += n;
    return 1;
}

/* 1 when this line has more to read after the blanks (strtol and strtod would skip a newline) */
static int on_line(warm_reader *r)
{
    skip_blanks(r);
    return *r->p && *r->p != '\n' && *r->p != '\r';
}

static int read_int(warm_reader *r, int *out)
{
    if (!on_line(r)) return 0;
    char *end;
    errno = 0;
    long v = strtol(r->p, &end, 10);
    if (end == r->p || errno || v < INT32_MIN || v > INT32_MAX) return 0;
    r->p = end;
    *out = (int)v;
    return 1;
}

/* The end of the line: nothing but blanks before it. */
static int end_line(warm_reader *r)
{
    skip_blanks(r);
    if (*r->p == '\r') ++r->p;
    if (*r->p != '\n' && *r->p != '\0') return 0;
    if (*r->p == '\n') ++r->p;
    ++r->line;
    return 1;
}

/* "word N" on a line of its own. */
static int read_count(warm_reader *r, const char *word, int *n)
{
    char w[64];
    return read_word(r, w, sizeof w) && !strcmp(w, word) && read_int(r, n) && *n >= 0 &&
           end_line(r);
}

static int read_ref(warm_reader *r, const warm_objects *o, const void **out)
{
    char w[32];
    if (!read_word(r, w, sizeof w)) return 0;
    if (!strcmp(w, "-")) {
        *out = NULL;
        return 1;
    }
    char *end;
    errno = 0;
    long i = strtol(w + 1, &end, 10);
    if (end == w + 1 || *end || errno || i < 0) return 0;
    if (w[0] == 'g' && i < o->geom_count) *out = o->geoms[i];
    else if (w[0] == 'j' && i < o->joint_count) *out = o->joints[i];
    else return 0;
    return 1;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One entry line into `store` (its scratch buffer holds the record). 0: malformed. */
static int read_entry(warm_reader *r, const warm_objects *o, struct pp_warm_store *store,
                      pp_status *st)
{
    char w[8];
    warm_key key;
    memset(&key, 0, sizeof key);
    const void *a, *b;
    int size;
    if (!read_word(r, w, sizeof w) || strcmp(w, "e") || !read_ref(r, o, &a) || !read_ref(r, o, &b) ||
        !read_int(r, &key.contact_kind) || !read_int(r, &key.feature_a) ||
        !read_int(r, &key.feature_b) || !read_int(r, &key.set_kind) ||
        !read_int(r, &key.set_count) || !read_int(r, &key.directions) ||
        !read_int(r, &key.answer) || !read_int(r, &size) || size < 0 || key.answer < 0 ||
        (key.answer > 0 && size % (int)sizeof(double)))
        return 0;
    key.g1 = (dGeomID)(void *)a;
    key.g2 = (dGeomID)(void *)b;
    /* the record must fit in what is left of the line (2 hex digits a byte; a double's number
     * and its blank at least 2 characters) before any memory is asked for it */
    skip_blanks(r);
    const size_t left = strcspn(r->p, "\r\n");
    if (size > 0 &&
        (key.answer == 0 ? 2 * (size_t)size : 2 * ((size_t)size / sizeof(double)) - 1) > left)
        return 0;
    if ((*st = records_buffer(store, size)) != PP_OK) return 1;
    unsigned char *rec = store->records;
    if (key.answer == 0) {
        skip_blanks(r);
        for (int i = 0; i < size; ++i) {
            int hi = hex_digit(r->p[2 * i]), lo = hi < 0 ? -1 : hex_digit(r->p[2 * i + 1]);
            if (lo < 0) return 0;
            rec[i] = (unsigned char)(16 * hi + lo);
        }
        r->p += 2 * size;
    } else {
        for (int d = 0; d < size / (int)sizeof(double); ++d) {
            if (!on_line(r)) return 0;
            char *end;
            double x = strtod(r->p, &end);
            if (end == r->p || !isfinite(x)) return 0;
            r->p = end;
            memcpy(rec + d * sizeof x, &x, sizeof x);
        }
    }
    if (!end_line(r)) return 0;
    *st = insert(store, &key, rec, size);
    return 1;
}

static pp_status malformed(const warm_reader *r)
{
    pp_log(PP_LOG_ERROR, "pp_world_restore_warm_start: line %d: not a %s %d text (pegplus.h "
                         "pp_world_save_warm_start)", r->line, WARM_MAGIC,
           WARM_TEXT_VERSION);
    return PP_ERR_INVALID_ARGUMENT;
}

/* The text read into `store` after its header matched the world. */
static pp_status restore_into(warm_reader *r, pp_world *world, const warm_objects *o,
                              struct pp_warm_store *store, pp_model *model)
{
    char w[64];
    int version = 0, n = 0;
    if (!read_word(r, w, sizeof w) || strcmp(w, WARM_MAGIC) || !read_int(r, &version) ||
        version != WARM_TEXT_VERSION || !end_line(r) || !read_word(r, w, sizeof w) ||
        strcmp(w, "model") || !read_word(r, w, sizeof w) || !end_line(r))
        return malformed(r);
    *model = PP_MODEL_ODE;
    int known = 0;
    for (int m = PP_MODEL_ODE; m <= PP_MODEL_PEG && !known; ++m)
        if (!strcmp(w, pp_model_name((pp_model)m))) *model = (pp_model)m, known = 1;
    if (!known) return malformed(r);
    if (*model != world->config.model) {
        pp_log(PP_LOG_ERROR, "pp_world_restore_warm_start: the warm start was saved under the %s "
                             "model, the world steps with the %s model: refused (a warm start "
                             "holds one model's constraint sets)",
               pp_model_name(*model), pp_model_name(world->config.model));
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (!read_count(r, "geoms", &n)) return malformed(r);
    if (n != o->geom_count) {
        pp_log(PP_LOG_ERROR, "pp_world_restore_warm_start: the warm start is of a world of %d "
                             "geoms, this world has %d: refused", n, o->geom_count);
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < n; ++i) {
        if (!read_word(r, w, sizeof w) || !end_line(r)) return malformed(r);
        char buf[32];
        const char *mine = class_word(o->geoms[i], buf);
        if (strcmp(w, mine)) {
            pp_log(PP_LOG_ERROR, "pp_world_restore_warm_start: geom %d (in the order pegplus "
                                 "first saw them) is a %s in the warm start, a %s (dGeomID %p) "
                                 "in this world: refused", i, w, mine, (void *)o->geoms[i]);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    if (!read_count(r, "joints", &n)) return malformed(r);
    if (n != o->joint_count) {
        pp_log(PP_LOG_ERROR, "pp_world_restore_warm_start: the warm start is of a world of %d "
                             "joints, this world has %d: refused", n, o->joint_count);
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < n; ++i) {
        int type;
        if (!read_int(r, &type) || !end_line(r)) return malformed(r);
        if (type != (int)dJointGetType(o->joints[i])) {
            pp_log(PP_LOG_ERROR, "pp_world_restore_warm_start: joint %d is of dJointType %d in "
                                 "the warm start, %d (dJointID %p) in this world: refused", i,
                   type, (int)dJointGetType(o->joints[i]), (void *)o->joints[i]);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    if (!read_count(r, "entries", &n)) return malformed(r);
    pp_status st = PP_OK;
    for (int i = 0; i < n && st == PP_OK; ++i)
        if (!read_entry(r, o, store, &st)) return malformed(r);
    if (st != PP_OK) return st;
    if (!read_word(r, w, sizeof w) || strcmp(w, "end") || !read_word(r, w, sizeof w) ||
        strcmp(w, WARM_MAGIC) || !end_line(r))
        return malformed(r);
    return PP_OK;
}

pp_status pp_world_restore_warm_start(pp_world *world, const char *text)
{
    if (!world || !text) {
        pp_log(PP_LOG_ERROR, "pp_world_restore_warm_start: %s is NULL", world ? "text" : "world");
        return PP_ERR_NULL_ARGUMENT;
    }
    warm_objects o;
    pp_status st = objects_enumerate(world, &o);
    if (st != PP_OK) return st;
    struct pp_warm_store *store = NULL;
    st = pp_warm_store_create(&store);
    warm_reader r = {text, 1};
    pp_model model = PP_MODEL_ODE;
    if (st == PP_OK) st = restore_into(&r, world, &o, store, &model);
    objects_free(&o);
    if (st != PP_OK) { /* all or nothing: the world's warm start is untouched */
        pp_warm_store_destroy(store);
        return st;
    }
    pp_warm_store_destroy(world->scratch.warm_prev);
    world->scratch.warm_prev = store;
    world->scratch.warm_model = model;
    return PP_OK;
}
