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
 * Storage: an open-addressing hash table of keys into a byte pool, both grown to the peak
 * and reused; clearing costs O(capacity).
 */
#include "world_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct warm_key {
    dGeomID g1, g2;
    int contact_kind, feature_a, feature_b;
    int set_kind, set_count, directions;
} warm_key;

typedef struct warm_entry {
    warm_key key;
    int offset, size;      /* record bytes in the pool; size 0 = empty slot */
} warm_entry;

struct pp_warm_store {
    warm_entry *slots;
    int capacity, count;   /* capacity a power of two, count <= capacity / 2 */
    unsigned char *pool;
    size_t pool_size, pool_capacity;
    unsigned char *records;  /* scratch: the records of one list */
    int records_capacity;
};

pp_status pp_warm_store_create(struct pp_warm_store **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? PP_OK : PP_ERR_NO_MEMORY;
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
    if (store->count) memset(store->slots, 0, (size_t)store->capacity * sizeof *store->slots);
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
    return h ^ (h >> 29);
}

static int key_equal(const warm_key *a, const warm_key *b)
{
    return a->g1 == b->g1 && a->g2 == b->g2 && a->contact_kind == b->contact_kind &&
           a->feature_a == b->feature_a && a->feature_b == b->feature_b &&
           a->set_kind == b->set_kind && a->set_count == b->set_count &&
           a->directions == b->directions;
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

static const warm_entry *find(const struct pp_warm_store *store, const warm_key *key)
{
    if (!store || store->count == 0) return NULL;
    unsigned mask = (unsigned)store->capacity - 1;
    for (unsigned i = (unsigned)key_hash(key) & mask;; i = (i + 1) & mask) {
        const warm_entry *e = &store->slots[i];
        if (e->size == 0) return NULL;
        if (key_equal(&e->key, key)) return e;
    }
}

/* key's entry in `first`, else in `second` (*from: the store it came from). */
static const warm_entry *find_either(const struct pp_warm_store *first,
                                     const struct pp_warm_store *second, const warm_key *key,
                                     const struct pp_warm_store **from)
{
    const warm_entry *e = find(first, key);
    *from = first;
    if (!e) {
        e = find(second, key);
        *from = second;
    }
    return e;
}

static pp_status rehash(struct pp_warm_store *store, int capacity)
{
    warm_entry *slots = calloc((size_t)capacity, sizeof *slots);
    if (!slots) return PP_ERR_NO_MEMORY;
    unsigned mask = (unsigned)capacity - 1;
    for (int i = 0; i < store->capacity; ++i) {
        const warm_entry *e = &store->slots[i];
        if (e->size == 0) continue;
        unsigned s = (unsigned)key_hash(&e->key) & mask;
        while (slots[s].size) s = (s + 1) & mask;
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
    unsigned mask = (unsigned)store->capacity - 1;
    unsigned i = (unsigned)key_hash(key) & mask;
    while (store->slots[i].size && !key_equal(&store->slots[i].key, key)) i = (i + 1) & mask;
    warm_entry *e = &store->slots[i];
    if (e->size != size) { /* new, or a record of another size: fresh bytes in the pool */
        if (store->pool_size + (size_t)size > store->pool_capacity) {
            size_t cap = store->pool_capacity ? 2 * store->pool_capacity : 4096;
            while (cap < store->pool_size + (size_t)size) cap *= 2;
            unsigned char *pool = realloc(store->pool, cap);
            if (!pool) return PP_ERR_NO_MEMORY;
            store->pool = pool;
            store->pool_capacity = cap;
        }
        if (e->size == 0) store->count++;
        e->offset = (int)store->pool_size;
        e->size = size;
        store->pool_size += (size_t)size;
    }
    e->key = *key;
    memcpy(store->pool + e->offset, record, (size_t)size);
    return PP_OK;
}

/* Bytes of the records of every set of the list, one after the other. */
static int records_size(const pp_constraint_list *list, int k)
{
    int bytes = 0;
    for (int j = 0; j < list->set_count; ++j) bytes += pp_peg_record_size(&list->sets[j], k);
    return bytes;
}

static pp_status records_buffer(struct pp_warm_store *store, int bytes)
{
    return pp_grow((void **)&store->records, &store->records_capacity, bytes > 0 ? bytes : 1, 1);
}

pp_status pp_warm_store_put(struct pp_warm_store *store, const pp_world *world,
                            const pp_constraint_list *list, int k, const unsigned char *basis)
{
    int bytes = records_size(list, k);
    pp_status st = records_buffer(store, bytes);
    if (st != PP_OK) return st;
    pp_peg_basis_records(list->set_count, list->sets, list->contacts, k, (unsigned char *)basis,
                         store->records, 0);
    const unsigned char *rec = store->records;
    for (int j = 0; j < list->set_count && st == PP_OK; ++j) {
        int size = pp_peg_record_size(&list->sets[j], k);
        warm_key key = set_key(world, list, j, k);
        st = insert(store, &key, rec, size);
        rec += size;
    }
    return st;
}

pp_status pp_warm_store_merge(struct pp_warm_store *to, const struct pp_warm_store *from)
{
    pp_status st = PP_OK;
    for (int i = 0; from && i < from->capacity && st == PP_OK; ++i) {
        const warm_entry *e = &from->slots[i];
        if (e->size) st = insert(to, &e->key, from->pool + e->offset, e->size);
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

int pp_warm_store_get(struct pp_warm_store *first, const struct pp_warm_store *second,
                      const pp_world *world, const pp_constraint_list *list, int k,
                      unsigned char *basis)
{
    int bytes = records_size(list, k);
    memset(basis, 0, (size_t)pp_peg_lcp_size(list->set_count, list->contact_count, k) +
                         (size_t)list->set_count * PP_CONTACT_ROLLING_UNKNOWNS_MAX);
    if (records_buffer(first, bytes) != PP_OK) return 0;
    int found = 0;
    unsigned char *rec = first->records;
    for (int j = 0; j < list->set_count; ++j) {
        int size = pp_peg_record_size(&list->sets[j], k);
        warm_key key = set_key(world, list, j, k);
        const struct pp_warm_store *from;
        const warm_entry *e = find_either(first, second, &key, &from);
        if (e && e->size == size) {
            memcpy(rec, from->pool + e->offset, (size_t)size);
            ++found;
        } else {
            unknown_set_record(list, j, rec, size);
        }
        rec += size;
    }
    pp_peg_basis_records(list->set_count, list->sets, list->contacts, k, basis, first->records, 1);
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
            const struct pp_warm_store *from;
            const warm_entry *w = find_either(first, second, &key, &from);
            if (w && w->size == u) {
                memcpy(basis + at, from->pool + w->offset, (size_t)u);
                ++found;
            } else {
                memset(basis + at, 0, (size_t)u);
            }
            at += u;
        }
    }
    return found;
}
