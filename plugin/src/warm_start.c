/*
 * The LCP warm start, kept by constraint identity (DESIGN.md "Solvers").
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
 */
#include "world_internal.h"

#include <stdint.h>
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

static warm_entry *find(const struct pp_warm_store *store, const warm_key *key)
{
    if (!store || store->count == 0) return NULL;
    const warm_slot *slot = probe(store, key, key_hash(key));
    return live(store, slot) ? entry_at(store, slot->offset) : NULL;
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
