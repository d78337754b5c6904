/*
 * Sweep and prune (pegplus/geometry.h, pp_broadphase_pairs). Sort the boxes by their lower
 * bound on one axis; box i can only overlap boxes j that start before i ends, so the sweep
 * visits, for each i, the following boxes while lo_j <= hi_i and tests the other two axes.
 * The axis is the one of largest variance of the (finite) box centres, which keeps the number
 * of pairs overlapping on it, k_axis, close to the true k in spread-out scenes.
 */
#include "geometry_internal.h"

#include <stdlib.h>

typedef struct sweep_key {
    double lo, hi;
    int index;
} sweep_key;

struct pp_broadphase {
    sweep_key *keys;
    int key_capacity;
    pp_pair *pairs;
    int pair_capacity;
};

pp_status pp_broadphase_create(pp_broadphase **out)
{
    if (!out) {
        pp_log(PP_LOG_ERROR, "pp_broadphase_create: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    pp_broadphase *bp = calloc(1, sizeof *bp);
    if (!bp) return PP_ERR_NO_MEMORY;
    *out = bp;
    return PP_OK;
}

void pp_broadphase_destroy(pp_broadphase *bp)
{
    if (!bp) return;
    free(bp->keys);
    free(bp->pairs);
    free(bp);
}

static int key_compare(const void *x, const void *y)
{
    const sweep_key *a = x, *b = y;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static int pair_compare(const void *x, const void *y)
{
    const pp_pair *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

static int sweep_axis(const pp_aabb *boxes, int count)
{
    double mean[3] = {0.0, 0.0, 0.0}, square[3] = {0.0, 0.0, 0.0};
    int used[3] = {0, 0, 0};
    for (int i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k) {
            double c = 0.5 * (boxes[i].min[k] + boxes[i].max[k]);
            if (!isfinite(c)) continue;
            mean[k] += c;
            square[k] += c * c;
            used[k]++;
        }
    int axis = 0;
    double best = -1.0;
    for (int k = 0; k < 3; ++k) {
        if (!used[k]) continue;
        double m = mean[k] / used[k], var = square[k] / used[k] - m * m;
        if (var > best) best = var, axis = k;
    }
    return axis;
}

pp_status pp_broadphase_pairs(pp_broadphase *bp, const pp_aabb *boxes,
                              const unsigned char *is_static, int count, const pp_pair **pairs,
                              int *pair_count)
{
    if (!bp || !pairs || !pair_count || (count > 0 && !boxes)) {
        pp_log(PP_LOG_ERROR, "pp_broadphase_pairs: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (count < 0) {
        pp_log(PP_LOG_ERROR, "pp_broadphase_pairs: negative count %d", count);
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k)
            if (!(boxes[i].min[k] <= boxes[i].max[k])) {
                pp_log(PP_LOG_ERROR, "pp_broadphase_pairs: box %d has a NaN bound or min > max", i);
                return PP_ERR_INVALID_ARGUMENT;
            }
    if (count > bp->key_capacity) {
        sweep_key *keys = realloc(bp->keys, sizeof *keys * (size_t)count);
        if (!keys) return PP_ERR_NO_MEMORY;
        bp->keys = keys;
        bp->key_capacity = count;
    }
    int axis = sweep_axis(boxes, count), u = (axis + 1) % 3, w = (axis + 2) % 3;
    for (int i = 0; i < count; ++i)
        bp->keys[i] = (sweep_key){boxes[i].min[axis], boxes[i].max[axis], i};
    if (count > 1) qsort(bp->keys, (size_t)count, sizeof *bp->keys, key_compare);

    int found = 0;
    for (int i = 0; i < count; ++i) {
        const sweep_key *ki = &bp->keys[i];
        for (int j = i + 1; j < count && bp->keys[j].lo <= ki->hi; ++j) {
            int a = ki->index, b = bp->keys[j].index;
            if (is_static && is_static[a] && is_static[b]) continue;
            const pp_aabb *x = &boxes[a], *y = &boxes[b];
            if (x->min[u] > y->max[u] || y->min[u] > x->max[u] || x->min[w] > y->max[w] ||
                y->min[w] > x->max[w])
                continue;
            if (found == bp->pair_capacity) {
                int capacity = bp->pair_capacity ? 2 * bp->pair_capacity : 64;
                pp_pair *grown = realloc(bp->pairs, sizeof *grown * (size_t)capacity);
                if (!grown) return PP_ERR_NO_MEMORY;
                bp->pairs = grown;
                bp->pair_capacity = capacity;
            }
            bp->pairs[found++] = a < b ? (pp_pair){a, b} : (pp_pair){b, a};
        }
    }
    if (found > 1) qsort(bp->pairs, (size_t)found, sizeof *bp->pairs, pair_compare);
    *pairs = bp->pairs;
    *pair_count = found;
    return PP_OK;
}
