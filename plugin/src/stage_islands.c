/*
 * Stage 6 of a pegplus step (docs/design.md "One step"): contact islands.
 *
 * Two bodies can exchange an impulse in this step only if a candidate pair of stage 2 or a
 * joint (stage 1b) joins them: the broadphase boxes are grown by how far each shape can move in the step (and the
 * re-linearisation only re-poses within that motion), so a pair that is not a candidate can
 * neither be near at the start of the step nor at any predicted end-of-step pose. The
 * connected components of "dynamic bodies joined by a candidate pair" therefore decouple the
 * whole step: each island's constraints, LCP, warm start, re-linearisation and fallbacks
 * involve only its own bodies, and an island's answer does not depend on any other island.
 * Static geometry and kinematic bodies have infinite mass (W_b = 0): they join nothing, and a
 * pair with no dynamic body is dropped (nothing in it can move; its LCP rows would be rows of
 * zeros, unsolvable when the pair is closing).
 *
 * Output: scratch.pairs regrouped island by island (island_pair_first), its joints
 * (island_joint_first, island_joints), the dynamic bodies of
 * each island (island_body_first, island_bodies), the island of each body, and the shapes of
 * each body (body_shape_first, body_shapes) for re-posing one island's shapes. Islands are
 * numbered in the order of their smallest body index, and pairs keep their broadphase order
 * within an island, so the step is deterministic.
 */
#include "world_internal.h"

#include <string.h>

static int is_dynamic(const pp_world *world, int b)
{
    return b >= 0 && world->bodies[b].inv_mass > 0.0;
}

/* dSpaceCollide's filters (same body, category/collide bits), and the one ODE programs put in
 * their near callback and PP_MODEL_ODE applies (ode_baseline.c): bodies joined by a joint other
 * than a contact joint do not collide (a hinge's two links overlap at the hinge by design; a
 * contact there would fight the joint and leave the LCP without a solution). */
int pp_pair_may_collide(dGeomID g1, dGeomID g2)
{
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    if (b1 && b1 == b2) return 0;
    if (b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact)) return 0;
    return (dGeomGetCategoryBits(g1) & dGeomGetCollideBits(g2)) ||
           (dGeomGetCategoryBits(g2) & dGeomGetCollideBits(g1));
}

static int find_root(int *root, int i)
{
    while (root[i] != i) {
        root[i] = root[root[i]]; /* path halving */
        i = root[i];
    }
    return i;
}

static pp_status ensure(pp_world *world)
{
    pp_step_scratch *s = &world->scratch;
    int nb = world->body_count, ns = s->shape_count;
    void **const per_body[] = {(void **)&s->island_of_body, (void **)&s->island_bodies,
                               (void **)&s->union_root, (void **)&s->body_local};
    const size_t ints[] = {sizeof(int), sizeof(int), sizeof(int), sizeof(int)};
    pp_status st = pp_grow_together(per_body, ints, 4, &s->island_body_capacity, nb + 1);
    /* islands <= bodies: +2 for the CSR ends */
    void **const per_island[] = {(void **)&s->island_pair_first, (void **)&s->island_body_first,
                                 (void **)&s->island_joint_first};
    if (st == PP_OK) st = pp_grow_together(per_island, ints, 3, &s->island_capacity, nb + 2);
    if (st == PP_OK)
        st = pp_grow((void **)&s->island_joints, &s->island_joint_capacity,
                     world->joint_count > 0 ? world->joint_count : 1, sizeof(int));
    if (st == PP_OK)
        st = pp_grow((void **)&s->body_shape_first, &s->body_shape_first_capacity, nb + 1,
                     sizeof(int));
    if (st == PP_OK)
        st = pp_grow((void **)&s->body_shapes, &s->body_shape_capacity, ns > 0 ? ns : 1,
                     sizeof(int));
    if (st == PP_OK)
        st = pp_grow((void **)&s->pair_sorted, &s->pair_sorted_capacity,
                     s->pair_count > 0 ? s->pair_count : 1, sizeof(pp_pair));
    return st;
}

/* CSR of the shapes on each body. */
static void index_body_shapes(pp_world *world)
{
    pp_step_scratch *s = &world->scratch;
    int nb = world->body_count;
    memset(s->body_shape_first, 0, (size_t)(nb + 1) * sizeof(int));
    for (int i = 0; i < s->shape_count; ++i)
        if (s->shape_body[i] >= 0) s->body_shape_first[s->shape_body[i] + 1]++;
    for (int b = 0; b < nb; ++b) s->body_shape_first[b + 1] += s->body_shape_first[b];
    int *fill = s->union_root; /* free until the islands are found */
    for (int b = 0; b < nb; ++b) fill[b] = s->body_shape_first[b];
    for (int i = 0; i < s->shape_count; ++i)
        if (s->shape_body[i] >= 0) s->body_shapes[fill[s->shape_body[i]]++] = i;
}

/* The dynamic body a pair belongs to (body_a's if dynamic, else body_b's), -1 for none. */
static int pair_body(const pp_world *world, const pp_pair *p)
{
    const pp_step_scratch *s = &world->scratch;
    int a = s->shape_body[p->a], b = s->shape_body[p->b];
    return is_dynamic(world, a) ? a : is_dynamic(world, b) ? b : -1;
}

/* The dynamic body a joint belongs to (every joint of the step has one, stage_joints.c). */
static int joint_body(const pp_world *world, int j)
{
    const pp_joint *joint = &world->joints[j];
    return is_dynamic(world, joint->body_a) ? joint->body_a : joint->body_b;
}

pp_status pp_stage_islands(pp_world *world)
{
    pp_step_scratch *s = &world->scratch;
    int nb = world->body_count;
    pp_status st = ensure(world);
    if (st != PP_OK) return st;
    index_body_shapes(world);

    /* Drop the pairs dSpaceCollide would not report and those with nothing to move. */
    int kept = 0;
    for (int k = 0; k < s->pair_count; ++k) {
        const pp_pair *p = &s->pairs[k];
        int a = s->shape_body[p->a], b = s->shape_body[p->b];
        if (a >= 0 && a == b) continue;
        if (pair_body(world, p) < 0) continue;
        if (!pp_pair_may_collide(s->shape_geom[p->a], s->shape_geom[p->b])) continue;
        s->pairs[kept++] = *p;
    }
    s->pair_count = kept;

    /* Union-find over the dynamic bodies, through pairs and joints; the root is the smallest
     * body of its island. */
    int *root = s->union_root;
    for (int b = 0; b < nb; ++b) root[b] = b;
    for (int k = 0; k < s->pair_count + world->joint_count; ++k) {
        int a, b;
        if (k < s->pair_count) {
            a = s->shape_body[s->pairs[k].a];
            b = s->shape_body[s->pairs[k].b];
        } else {
            a = world->joints[k - s->pair_count].body_a;
            b = world->joints[k - s->pair_count].body_b;
        }
        if (!is_dynamic(world, a) || !is_dynamic(world, b)) continue;
        int ra = find_root(root, a), rb = find_root(root, b);
        if (ra != rb) root[ra > rb ? ra : rb] = ra < rb ? ra : rb;
    }
    /* Number the islands that have a pair or a joint, by root order (body_local is free until
     * pp_island_select). */
    int *number = s->body_local;
    for (int b = 0; b < nb; ++b) number[b] = -1;
    for (int k = 0; k < s->pair_count; ++k) number[find_root(root, pair_body(world, &s->pairs[k]))] = -2;
    for (int j = 0; j < world->joint_count; ++j) number[find_root(root, joint_body(world, j))] = -2;
    int islands = 0;
    for (int b = 0; b < nb; ++b)
        if (number[b] == -2) number[b] = islands++;
    for (int b = 0; b < nb; ++b)
        s->island_of_body[b] = is_dynamic(world, b) ? number[find_root(root, b)] : -1;
    s->island_count = islands;

    /* Counting sort of the pairs and of the bodies by island (stable). */
    int *pf = s->island_pair_first, *bf = s->island_body_first;
    memset(pf, 0, (size_t)(islands + 1) * sizeof(int));
    memset(bf, 0, (size_t)(islands + 1) * sizeof(int));
    for (int k = 0; k < s->pair_count; ++k)
        pf[s->island_of_body[pair_body(world, &s->pairs[k])] + 1]++;
    for (int b = 0; b < nb; ++b)
        if (s->island_of_body[b] >= 0) bf[s->island_of_body[b] + 1]++;
    for (int i = 0; i < islands; ++i) {
        pf[i + 1] += pf[i];
        bf[i + 1] += bf[i];
    }
    int *fill = root; /* the roots are no longer needed */
    for (int i = 0; i < islands; ++i) fill[i] = pf[i];
    for (int k = 0; k < s->pair_count; ++k)
        s->pair_sorted[fill[s->island_of_body[pair_body(world, &s->pairs[k])]]++] = s->pairs[k];
    memcpy(s->pairs, s->pair_sorted, (size_t)s->pair_count * sizeof(pp_pair));
    for (int i = 0; i < islands; ++i) fill[i] = bf[i];
    for (int b = 0; b < nb; ++b)
        if (s->island_of_body[b] >= 0) s->island_bodies[fill[s->island_of_body[b]]++] = b;
    /* the joints of each island, in joint order */
    int *jf = s->island_joint_first;
    memset(jf, 0, (size_t)(islands + 1) * sizeof(int));
    for (int j = 0; j < world->joint_count; ++j) jf[s->island_of_body[joint_body(world, j)] + 1]++;
    for (int i = 0; i < islands; ++i) jf[i + 1] += jf[i];
    for (int i = 0; i < islands; ++i) fill[i] = jf[i];
    for (int j = 0; j < world->joint_count; ++j)
        s->island_joints[fill[s->island_of_body[joint_body(world, j)]]++] = j;
    world->stats.islands = islands;
    return PP_OK;
}

/* Is world body b listed in iw (body_local is valid only where it points back at b)? */
static int listed(const pp_world *world, const pp_island_work *iw, int b)
{
    int l = world->scratch.body_local[b];
    return l >= 0 && l < iw->body_count && iw->body[l] == b;
}

static pp_status add_body(pp_world *world, pp_island_work *iw, int b)
{
    pp_status st = pp_grow((void **)&iw->body, &iw->body_capacity, iw->body_count + 1, sizeof(int));
    if (st != PP_OK) return st;
    world->scratch.body_local[b] = iw->body_count;
    iw->body[iw->body_count++] = b;
    return PP_OK;
}

pp_status pp_island_select(pp_world *world, int island, pp_island_work *iw)
{
    pp_step_scratch *s = &world->scratch;
    iw->body_count = 0;
    pp_status st = PP_OK;
    for (int e = s->island_body_first[island]; e < s->island_body_first[island + 1] && st == PP_OK; ++e)
        st = add_body(world, iw, s->island_bodies[e]);
    iw->dynamic_count = iw->body_count;
    iw->pairs = &s->pairs[s->island_pair_first[island]];
    iw->pair_count = s->island_pair_first[island + 1] - s->island_pair_first[island];
    for (int k = 0; k < iw->pair_count && st == PP_OK; ++k) {
        int ends[2] = {s->shape_body[iw->pairs[k].a], s->shape_body[iw->pairs[k].b]};
        for (int e = 0; e < 2 && st == PP_OK; ++e)
            if (ends[e] >= 0 && !listed(world, iw, ends[e])) st = add_body(world, iw, ends[e]);
    }
    iw->joints = &s->island_joints[s->island_joint_first[island]];
    iw->joint_count = s->island_joint_first[island + 1] - s->island_joint_first[island];
    for (int k = 0; k < iw->joint_count && st == PP_OK; ++k) {
        const pp_joint *j = &world->joints[iw->joints[k]];
        int ends[2] = {j->body_a, j->body_b};
        for (int e = 0; e < 2 && st == PP_OK; ++e)
            if (ends[e] >= 0 && !listed(world, iw, ends[e])) st = add_body(world, iw, ends[e]);
    }
    return st;
}
