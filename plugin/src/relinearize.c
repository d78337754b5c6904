/*
 * Stages 7-8 of a pegplus step for one island: the time step's first LCP solve at q^l, then
 * Stewart & Trinkle 1996 §3.6's fixed-point re-linearisation, for this island only (an island
 * that converges stops iterating whatever the others do, and none of its work grows with the
 * rest of the world). Calls run one way: world.c -> here -> {stage_constraints.c,
 * stage_time_step.c}.
 */
#include "world_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- The re-linearisation's working set -------------------------------------------------- */

/* Identity of a feature contact whichever body is A (the same-frame rule writes a contact of
 * a set from either side): kind 0 a vertex against a face (or plane), the vertex first; kind
 * 2 an edge pair, the lower shape index first; -1 a contact that cannot be re-evaluated. */
typedef struct feature_key {
    int kind, shape1, feature1, shape2, feature2;
} feature_key;

static feature_key key_of(const pp_contact *c)
{
    switch (c->kind) {
    case PP_CONTACT_VERTEX_FACE:
        return (feature_key){0, c->shape_a, c->feature_a, c->shape_b, c->feature_b};
    case PP_CONTACT_FACE_VERTEX:
        return (feature_key){0, c->shape_b, c->feature_b, c->shape_a, c->feature_a};
    case PP_CONTACT_EDGE_EDGE:
        return c->shape_a < c->shape_b
                   ? (feature_key){2, c->shape_a, c->feature_a, c->shape_b, c->feature_b}
                   : (feature_key){2, c->shape_b, c->feature_b, c->shape_a, c->feature_a};
    default: return (feature_key){-1, -1, -1, -1, -1};
    }
}

/* Do the sets with contacts a[0, na) and b[0, nb) constrain the same feature pairs? (The
 * contacts of a set are distinct feature pairs, so equal counts and a in b suffice.) */
static int same_features(const pp_contact *a, int na, const pp_contact *b, int nb)
{
    if (na != nb) return 0;
    for (int i = 0; i < na; ++i) {
        feature_key ka = key_of(&a[i]);
        int found = 0;
        for (int j = 0; j < nb && !found; ++j) {
            feature_key kb = key_of(&b[j]);
            found = ka.kind == kb.kind && ka.shape1 == kb.shape1 && ka.feature1 == kb.feature1 &&
                    ka.shape2 == kb.shape2 && ka.feature2 == kb.feature2;
        }
        if (!found) return 0;
    }
    return 1;
}

/* Sets of feature contacts between polytopes (or a polytope and a plane) can be re-evaluated
 * at another pose (pp_peg_contact_update); the closest-point contacts of smooth shapes are
 * rebuilt at every pose instead. */
static int carryable(const pp_step_scratch *s, const pp_peg_set *set, const pp_contact *c)
{
    for (int i = 0; i < set->count; ++i) {
        if (key_of(&c[i]).kind < 0) return 0;
        const pp_shape *a = &s->shapes[c[i].shape_a], *b = &s->shapes[c[i].shape_b];
        if (a->kind != PP_SHAPE_POLYTOPE) return 0;
        if (b->kind != PP_SHAPE_POLYTOPE && b->kind != PP_SHAPE_PLANE) return 0;
    }
    return 1;
}

/* An order-independent hash of a set's feature pairs (same_features' relation). */
static uint64_t set_hash(const pp_contact *c, int count)
{
    uint64_t h = (uint64_t)count * 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < count; ++i) {
        feature_key k = key_of(&c[i]);
        uint64_t x = (uint64_t)(unsigned)k.kind;
        x = x * 1000003u ^ (uint64_t)(unsigned)k.shape1;
        x = x * 1000003u ^ (uint64_t)(unsigned)k.feature1;
        x = x * 1000003u ^ (uint64_t)(unsigned)k.shape2;
        x = x * 1000003u ^ (uint64_t)(unsigned)k.feature2;
        x ^= x >> 31;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        h += x;
    }
    return h;
}

static pp_status index_build(pp_set_index *x, const pp_constraint_list *l)
{
    int need = 16;
    while (need < 2 * l->set_count) need *= 2;
    if (need > x->capacity) {
        int *slot = realloc(x->slot, (size_t)need * sizeof *slot);
        if (slot) x->slot = slot;
        uint64_t *hash = realloc(x->hash, (size_t)need * sizeof *hash);
        if (hash) x->hash = hash;
        if (!slot || !hash) return PP_ERR_NO_MEMORY;
        x->capacity = need;
    }
    memset(x->slot, 0, (size_t)x->capacity * sizeof *x->slot);
    unsigned mask = (unsigned)x->capacity - 1;
    for (int j = 0; j < l->set_count; ++j) {
        uint64_t h = set_hash(&l->contacts[l->sets[j].first], l->sets[j].count);
        unsigned i = (unsigned)h & mask;
        while (x->slot[i]) i = (i + 1) & mask;
        x->slot[i] = j + 1;
        x->hash[i] = h;
    }
    return PP_OK;
}

/* The set of l indexed in x with the same feature pairs as contacts c[0, count), or -1. */
static int index_find(const pp_set_index *x, const pp_constraint_list *l, const pp_contact *c,
                      int count)
{
    uint64_t h = set_hash(c, count);
    unsigned mask = (unsigned)x->capacity - 1;
    for (unsigned i = (unsigned)h & mask; x->slot[i]; i = (i + 1) & mask) {
        int j = x->slot[i] - 1;
        if (x->hash[i] == h &&
            same_features(&l->contacts[l->sets[j].first], l->sets[j].count, c, count))
            return j;
    }
    return -1;
}

/*
 * A contact's friction pyramid through the step. The pyramid's directions d_l (ST96 Eq 13)
 * are spaced from t1, the projection of a world axis on the tangent plane: the axis least
 * aligned with n (pegplus/mlcp.h pp_mlcp_friction_directions), a choice that jumps where two
 * components of n tie in magnitude. Each iterate builds its contacts at its own predicted
 * pose, so a normal near such a tie took one axis at one iterate and the other at the next:
 * the pyramid turned by a finite angle between iterates whose poses differ by nothing, and so
 * did a sliding contact's friction (a vertex or facet of its pyramid), and the velocity
 * F(nu^) the iterate returns. The fixed-point iteration (ST96 §3.6) cannot converge on a map
 * that jumps: measured (PEG pouring, mu = 0.5, seed 73, step 355): an I set of hulls 2 and 6
 * with n = (0.7134, 0.4954, 0.4955), sliding at p = 0.247 N s, took beta_5 alone in one
 * pyramid and beta_2, beta_3 in the other (friction 12.5 degrees apart); the kinetic energy
 * of the answers alternated 2.388 / 2.414 J for all 20 iterates (residual 0.15-0.38 m/s
 * with the step length down to 1/16), the least violating estimate was kept 5.9e-7 m deep,
 * and hull 1 ended the step 4.9e-11 m^3 inside the floor. So a set's contacts keep through
 * the step's iterates the axis they had where they joined the working set (the step's
 * start pose, for the first solve's sets): pp_contact.friction_axis, written on the working
 * set's copy here and given to the set built again at q^ (keep_friction_axes); the pyramid
 * is then a continuous function of the pose (pp_mlcp_friction_directions_about). Seed 73's
 * step converges at the 15th iterate, 0 pivots an iterate, with no overlap. Where the axis
 * is the rule's at q^ too (almost always), the directions are the same bits as before.
 */
static void mark_friction_axes(pp_contact *c, int count)
{
    for (int i = 0; i < count; ++i)
        if (c[i].friction_axis == 0) c[i].friction_axis = 1 + pp_mlcp_friction_axis(c[i].n);
}

/* Contacts c[0, count) of a set built at q^ take the friction axes of the same feature pairs
 * in `known` (the working set's copy of the set; "A contact's friction pyramid"). */
static void keep_friction_axes(pp_contact *c, int count, const pp_contact *known,
                               int known_count)
{
    for (int i = 0; i < count; ++i) {
        const feature_key a = key_of(&c[i]);
        for (int j = 0; j < known_count; ++j) {
            const feature_key b = key_of(&known[j]);
            if (a.kind == b.kind && a.shape1 == b.shape1 && a.feature1 == b.feature1 &&
                a.shape2 == b.shape2 && a.feature2 == b.feature2) {
                c[i].friction_axis = known[j].friction_axis;
                break;
            }
        }
    }
}

/* A working set's marks (iw->work_mark; pair_bound): it carried a normal impulse in a solve of
 * this step; it was in the list of the last iterate solved. */
#define WORK_PUSHED 1
#define WORK_LISTED 2

/* Did the last solve, whose list holds `set`, give it a normal impulse? */
static int set_pushed(const pp_island_work *iw, const pp_peg_set *set)
{
    for (int i = set->first; i < set->first + set->count; ++i)
        if (iw->normal_impulse[i] > 0.0) return 1;
    return 0;
}

/* The working set starts with the constraints the step's first solve used (at q^l), each
 * contact with its friction axis there ("A contact's friction pyramid"). */
static pp_status working_set_start(pp_world *world, pp_island_work *iw, int model, int solved)
{
    const pp_step_scratch *s = &world->scratch;
    const pp_constraint_list *l = &iw->list;
    iw->work.set_count = iw->work.contact_count = 0;
    iw->work_model = model;
    pp_status st = pp_grow((void **)&iw->work_mark, &iw->work_mark_capacity,
                           l->set_count + 1, sizeof *iw->work_mark);
    for (int j = 0; j < l->set_count && st == PP_OK; ++j) {
        const pp_peg_set *set = &l->sets[j];
        if (!carryable(s, set, &l->contacts[set->first])) continue;
        st = pp_constraint_list_append(&iw->work, set, &l->contacts[set->first],
                                       &l->restitution[3 * set->first]);
        if (st != PP_OK) return st;
        const pp_peg_set *w = &iw->work.sets[iw->work.set_count - 1];
        mark_friction_axes(&iw->work.contacts[w->first], w->count);
        iw->work_mark[iw->work.set_count - 1] = solved && set_pushed(iw, set) ? WORK_PUSHED : 0;
    }
    return st;
}

/* A U set (the standard model's) whose gap here reads deeper than its pair reads the pair's
 * signed distance d instead (stage_constraints.c, "No feature contact ... deeper than it
 * is"): max(psi, d), continuous in the pose, so the family does not change with the iterate
 * (a set that sat out where it read deeper made it appear and vanish between iterates: soak
 * seed 3203 under the standard model then converged to a fixed point 31 J above the energy
 * bound), and >= 0 wherever the pair is apart. Measured (soak seed 2183): kept as read, the
 * edge pairs of a corner that met a face at the first solve's pose, carried to poses 8 cm
 * apart, read their lines' gap (lines meeting beyond both edges, psi ~ 0) and the iteration
 * converged to the boxes held apart by them, +851 J. PEG's sets read as they are. */
void pp_island_read_at_pair_depth(const pp_step_scratch *s, const pp_island_work *iw,
                                  pp_contact *c)
{
    pp_contact q = *c, closest;
    if (iw->work_model != PP_MODEL_PEG &&
        !pp_contacts_at_pair_depth(s, &q, 1, q.shape_a, q.shape_b, &closest, NULL))
        c->psi = closest.psi;
}

/* Set w of the working set re-evaluated at the shapes' current poses and appended to the
 * island's list. Returns PP_OK also when it cannot be re-evaluated (then it is left out). */
static pp_status carry_set(pp_world *world, pp_island_work *iw, int w)
{
    const pp_step_scratch *s = &world->scratch;
    const pp_peg_set *set = &iw->work.sets[w];
    pp_contact *c = &iw->work.contacts[set->first];
    const pp_shape *sb = &s->shapes[c[0].shape_b];
    pp_polytope_view va, vb;
    pp_status st = pp_pose_pair(iw, &s->shapes[c[0].shape_a], sb, &va, &vb);
    if (st != PP_OK) return st;
    for (int i = 0; i < set->count; ++i)
        if (!pp_update_contact(sb, &va, &vb, &c[i])) return PP_OK;
    for (int i = 0; i < set->count; ++i) pp_island_read_at_pair_depth(s, iw, &c[i]);
    return pp_constraint_list_append(&iw->list, set, c, &iw->work.restitution[3 * set->first]);
}

/* The set built again at q^ keeps the primary it had when it joined the working set
 * (primary: that contact as it was then). The heuristic of pegplus/peg.h picks the primary by
 * the largest gap among near-tied candidates, so rebuilt at a slightly different q^ it can
 * pick another contact; the impulse then acts along another normal and the fixed-point map
 * jumps (measured: the iteration cycling between two primaries of one I set, with friction).
 * Within one step the family of constraints is fixed, including where each set's impulse acts. */
static void keep_primary(pp_constraint_list *l, const pp_peg_set *set, const pp_contact *primary)
{
    feature_key want = key_of(primary);
    for (int i = 1; i < set->count; ++i) {
        feature_key k = key_of(&l->contacts[set->first + i]);
        if (k.kind != want.kind || k.shape1 != want.shape1 || k.feature1 != want.feature1 ||
            k.shape2 != want.shape2 || k.feature2 != want.feature2)
            continue;
        pp_constraint_list_swap(l, set->first, set->first + i);
        return;
    }
}

/*
 * A frictionless set's impulse acts along its member of largest gap at q^. PEG puts a set's
 * impulse on its primary (Eq 41) and picks as primary the member of largest psi, the
 * supporting plane of max_s psi_s (pegplus/peg.h); keep_primary keeps, within a step, the
 * primary the set had when it joined the working set. At q^ that member can read far below
 * the set: an X set's alternatives are distances along their features' normals, and the
 * line gap of an edge pair whose edges turned in the step reads deep where the pair is not.
 * The set's rows still enforce max_s g_s >= 0 (g_s = psi'_s/h + G_s^T nu, peg_mlcp.c), but
 * the impulse's work at the end velocity is (energy_bounded, stage_time_step.c)
 *     p G_p^T nu+ = p (g_p - psi'_p/h),  g_p = max_s g_s - sum c <= 0 where p > 0,
 * at most p max(0, -psi'_p/h): a primary reading (max_s psi_s - psi_p) below the set lets
 * the LCP push the bodies apart that much faster than any overlap of the set asks.
 * Measured (PEG pouring seed 13, h = 0.01, step 434, an island of 5 hulls): after the first
 * solve (6.049 J, the energy bound 6.189 J; 1.2e-4 m deep at its own q^) a 3-member X set of
 * two hulls spinning at 3-4 rad/s kept a primary (an edge pair) reading psi = -5.2 cm at q^,
 * its member of largest psi -1.2e-4 m; psi' = -0.104 m, p = 0.48 N s, 4.99 J of push-out,
 * and the iterate's answer took the island to 9.37 J. Every later iterate stayed near 9.1 J
 * (a fixed point 2.9 J above the bound: the same hulls ending exactly touching while
 * separating at 9.9 m/s along another edge pair's normal, p = 0.34 N s), all beyond the
 * bound, so the step kept the first solve and left 7.1e-10 m^3 of overlap. With the primary
 * at the largest gap the iteration converges at its 9th iterate, 6.067 J, 4.8e-15 m deep.
 * So where the kept primary reads more than PRIMARY_TIE below the set's largest gap at q^,
 * that member is the primary in this iterate's list (the working set's record keeps the
 * member it joined with; a tie keeps it, as the rule of pegplus/peg.h ties within 1e-12 m).
 * Only frictionless sets: a frictional set's friction rows lie in its primary's tangent
 * plane (ST96 Eqs 25-28), and re-choosing it moves them too, the map jump keep_primary was
 * made for (measured: mu = 0.5, seeds 1-40, this rule on every set: 13 seeds above 1e-12
 * m^3 against main's 3).
 */
#define PRIMARY_TIE 1e-12 /* m */

static void prime_at_largest_gap(pp_constraint_list *l, int j)
{
    const int first = l->sets[j].first, best = pp_constraint_set_largest_gap(l, j);
    if (!(l->contacts[best].psi > l->contacts[first].psi + PRIMARY_TIE) ||
        pp_contact_frictional(&l->contacts[first]))
        return;
    pp_constraint_list_swap(l, first, best);
}

/*
 * One order a step. The list at q^ holds the sets built there, in the order stage 5 found
 * them, then the working set's sets not built again (carried); which of a set's pairs are
 * built at a pose depends on the pose (a feature pair near its proximity eps), so two
 * iterates' lists can hold the same sets in different orders. The LCP's unknowns follow the
 * list, and a solve that starts from the last iterate's answer by position (the sticking
 * solve's kept answer and interior start, lcp_sticking.c) would start from another
 * constraint's values. Measured on PEG's settled heap50 (390 sets): iterates 0 and 1 solved
 * the same LCP up to q's 3e-11 in two orders (238 of 2 292 unknowns moved), so iterate 1 ran
 * the interior-point solve again (50-80 ms) where the standard model's took the kept answer,
 * and where the order alternated from iterate to iterate (steps 3-4) the answers did too, the
 * iteration cycling at a residual of 1e-8 to its 20 iterates (9 s).
 * So the list is rewritten in the working set's order (which only grows, by appending), the
 * sets that are not carried (closest-point contacts of smooth shapes, rebuilt at every pose)
 * first in stage 5's order: the same sets give the same order at every iterate. The sets and
 * their contacts are unchanged; only their order is. Only where the sticking solve answers
 * (iw->one_order, pp_island_time_step): the step's first solve answered as a compliance limit
 * (the sticking solve's or load sharing's, pp_island_stats.load_shared) in an island of
 * pp_peg_sticking_size() unknowns or more (the plugin's gate for keeping the sticking solve's
 * answers, stage_time_step.c). Other islands are solved by Lemke from a basis carried by
 * constraint identity (warm_start.c), which no order misleads, and on their degenerate LCPs
 * another order picks another of the answers: applied to every island, the order moved soak
 * seed 350 under both models, and applied to every island of the sticking solve's size, the
 * PEG wall-hit tests' moving islands (1 054-1 436 unknowns answered by Lemke) ended 8.1e-8 m
 * deep (check_peg_walls, 25 s) and 4.4e-8 m (check_peg_screen_scenes) against their 1e-9 m
 * bound. (The island at rest at the start of the step, iw->reduced, is no such gate: heap50
 * creeps at 1e-4 ... 1e-3 m/s and is at rest only at its first step.)
 */
static pp_status list_in_work_order(pp_world *world, pp_island_work *iw, int fresh)
{
    const pp_step_scratch *s = &world->scratch;
    pp_constraint_list *l = &iw->list, *o = &iw->ordered;
    if (!iw->one_order) return PP_OK;
    int in_order = 1, next = 0;
    for (int j = 0; j < fresh && in_order; ++j)
        if (!carryable(s, &l->sets[j], &l->contacts[l->sets[j].first])) in_order = j == next++;
    for (int w = 0; w < iw->work.set_count && in_order; ++w)
        if (iw->work_place[w] >= 0) in_order = iw->work_place[w] == next++;
    if (in_order) return PP_OK;
    o->set_count = o->contact_count = 0;
    pp_status st = PP_OK;
    for (int j = 0; j < fresh && st == PP_OK; ++j) {
        const pp_peg_set *set = &l->sets[j];
        if (!carryable(s, set, &l->contacts[set->first]))
            st = pp_constraint_list_append(o, set, &l->contacts[set->first],
                                           &l->restitution[3 * set->first]);
    }
    for (int w = 0; w < iw->work.set_count && st == PP_OK; ++w) {
        const int j = iw->work_place[w];
        if (j < 0) continue;
        const pp_peg_set *set = &l->sets[j];
        st = pp_constraint_list_append(o, set, &l->contacts[set->first],
                                       &l->restitution[3 * set->first]);
    }
    if (st != PP_OK || o->set_count != l->set_count) return st; /* a set twice: as built */
    next = o->set_count; /* the working set's places follow the sets not carried */
    for (int w = 0; w < iw->work.set_count; ++w) next -= iw->work_place[w] >= 0;
    for (int w = 0; w < iw->work.set_count; ++w)
        if (iw->work_place[w] >= 0) iw->work_place[w] = next++;
    pp_constraint_list t = *l;
    *l = *o;
    *o = t;
    return PP_OK;
}

/*
 * The constraints at a predicted pose q^: the sets built there (stage 5 at q^) together with
 * every set of the working set that was not built again, re-evaluated at q^ (its features'
 * gaps, normals and lever arms there). Sets built at q^ for the first time join the working
 * set.
 *
 * Why. The fixed point of ST96 §3.6 solves the non-linear problem psi(q^{l+1}) >= 0 for a
 * fixed family of constraint functions; ST96 §4 lets that family only grow within a step
 * ("constraints found violated are added to the set of potentially active constraints").
 * Rebuilding the sets from scratch at every q^ makes the family a function of the iterate
 * itself: a set made at q^l (a vertex near a face, an X of two crossing edges) can be absent
 * at q^ because the prediction moved the features past a proximity, feasibility or
 * applicability threshold, and the next solve then ignores it. The iteration cycled between
 * such families without a fixed point (the last iterate ending up to 3 mm deep: every set of
 * its own family satisfied, the violated one belonging to another), or stopped at a pose
 * that violates a set of q^l. With a growing working set the family changes finitely often
 * and the iteration is the fixed-point iteration of ST96 for the last one. A set of q^l is
 * valid over the step's motion (its proximity eps_ij includes how far the shapes can move in
 * the step), so keeping it does not block the pair.
 */
/* A set of the island's list as the pair bound ranks it (pair_bound). */
typedef struct ranked_set {
    int a, b;     /* its pair's shapes, the lower index first */
    int rank;     /* 0: a separating set built at this q^ (kept, as the builder keeps it);
                     1: pushing in a solve of the step; 2: violated at q^; 3: in the last
                     iterate's list; 4: the others (pair_bound) */
    double gap;   /* max_s psi_s at q^ */
    int set;      /* its place in the list */
} ranked_set;

static int ranked_order(const void *x, const void *y)
{
    const ranked_set *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->rank != q->rank) return p->rank < q->rank ? -1 : 1;
    if (p->gap != q->gap) return p->gap < q->gap ? -1 : 1;
    return p->set < q->set ? -1 : p->set > q->set;
}

/*
 * The bound per pair across the iterates (pegplus/peg.h, "The bound per pair"). A PEG pair's
 * sets in the list at q^ (those built there and those of the working set carried there) are
 * held to PP_PEG_PAIR_MAX_SETS sets and PP_PEG_PAIR_MAX_CONTACTS contacts by the builder's
 * own cap taken over their union, in this order (ranked_set.rank, then increasing max_s psi_s
 * at q^ within each): a separating set built at q^; the sets that carried a normal impulse in
 * a solve of the step (WORK_PUSHED); those violated at q^; those of the last iterate's list
 * (WORK_LISTED); the rest. Up to the first that does not fit (the builder skips it and goes
 * on; here every set after it is left out too). A set left out stays in the working set and
 * is ranked again at the next q^; `*left_out` is the deepest violation among them, which the
 * iterate's violation takes in (relinearize), so the kept estimate is chosen by the whole
 * working set's violation. `*fresh`, the list's sets built at q^ (first in the list), and
 * iw->work_place follow.
 *
 * Why. Each build at a predicted pose within eps of a fast pair's touch gives 15-20 local sets
 * (docs/performance.md "Two fast hulls under PEG"), and the working set keeps every iterate's:
 * hulls25's meeting sub-step merged 57 sets / 537 contacts into one LCP of 1 700 unknowns,
 * past the bound of one build, and ended on the bounded fallback. Carrying the working set's
 * sets only while the pair had room, oldest first (branch s21-hullstep), let an iterate's
 * list lack a set violated at its q^ while holding satisfied ones (the fast-hull scan's PEG
 * 50 m/s seed 15 at h = 5e-4). Ranked by gap alone (branch s22-pairbound) the list's violation
 * was the working set's at q^, but the family changed from iterate to iterate where more sets
 * are violated at q^ than the cap holds: a 2 cm box sliding on an 8 cm box at 2 m/s (the
 * sphere scan's PEG box <- box 50 m/s seed 4, step 1) had 87 sets in the working set, 41-83
 * of them violated at each q^ (one face contact read through many feature pairs), and the
 * 32 deepest left out the 2-4 sets that had carried the load in the last solve, so each
 * answer let the box sink where the next list had no set: 20 iterates at a residual of ~3
 * m/s, the step ending 7.7e-7 m deep (main: converged at 9 iterates, 4e-15 m). A set that
 * carried an impulse is in the active family of ST96's fixed point; kept for the rest of the
 * step it makes the list's family grow as the working set does, and the same step converges
 * at 9 iterates, 1.8e-15 m deep. The last list's sets before the other satisfied ones: a set
 * leaves the list only for a more needed one (ranked without that class, check_peg_pair_bound's
 * hulls at 25 m/s kept an iterate answered on M + eps I at their meeting, lcp_fallback 1).
 */
static pp_status pair_bound(pp_island_work *iw, int *fresh, double *left_out)
{
    pp_constraint_list *l = &iw->list;
    *left_out = 0.0;
    if (iw->work_model != PP_MODEL_PEG ||
        (l->set_count <= PP_PEG_PAIR_MAX_SETS && l->contact_count <= PP_PEG_PAIR_MAX_CONTACTS))
        return PP_OK; /* no pair can be over */
    const int n = l->set_count;
    pp_status st = pp_grow(&iw->bound_rank, &iw->bound_rank_capacity, n, sizeof(ranked_set));
    if (st == PP_OK) st = pp_grow((void **)&iw->bound_place, &iw->bound_place_capacity, n,
                                  sizeof *iw->bound_place);
    if (st != PP_OK) return st;
    ranked_set *r = iw->bound_rank;
    int *place = iw->bound_place;
    for (int j = 0; j < n; ++j) place[j] = 0; /* here: the set's work_mark */
    for (int w = 0; w < iw->work.set_count; ++w)
        if (iw->work_place[w] >= 0) place[iw->work_place[w]] = iw->work_mark[w];
    for (int j = 0; j < n; ++j) {
        const pp_contact *c = &l->contacts[l->sets[j].first];
        double gap = c[0].psi;
        for (int i = 1; i < l->sets[j].count; ++i)
            if (c[i].psi > gap) gap = c[i].psi;
        const int rank = j < *fresh && l->sets[j].origin == PP_PEG_SEPARATING ? 0
                         : place[j] & WORK_PUSHED                         ? 1
                         : gap < 0.0                                      ? 2
                         : place[j] & WORK_LISTED                         ? 3
                                                                          : 4;
        r[j] = (ranked_set){c[0].shape_a < c[0].shape_b ? c[0].shape_a : c[0].shape_b,
                            c[0].shape_a < c[0].shape_b ? c[0].shape_b : c[0].shape_a, rank,
                            gap, j};
        place[j] = 1;
    }
    qsort(r, (size_t)n, sizeof *r, ranked_order);
    int dropped = 0;
    for (int g = 0; g < n;) {
        int e = g, sets = 0, contacts = 0, full = 0;
        while (e < n && r[e].a == r[g].a && r[e].b == r[g].b) ++e;
        for (int k = g; k < e; ++k) {
            const int count = l->sets[r[k].set].count;
            full |= r[k].rank != 0 &&
                    (sets >= PP_PEG_PAIR_MAX_SETS || contacts + count > PP_PEG_PAIR_MAX_CONTACTS);
            if (!full) {
                sets++;
                contacts += count;
            } else {
                place[r[k].set] = 0;
                dropped++;
                if (-r[k].gap > *left_out) *left_out = -r[k].gap;
            }
        }
        g = e;
    }
    if (dropped > 0) { /* the kept sets in their order; place[j]: j's new place, or -1 */
        pp_constraint_list *o = &iw->ordered;
        o->set_count = o->contact_count = 0;
        int kept_fresh = 0;
        for (int j = 0; j < n && st == PP_OK; ++j) {
            if (!place[j]) {
                place[j] = -1;
                continue;
            }
            place[j] = o->set_count;
            kept_fresh += j < *fresh;
            st = pp_constraint_list_append(o, &l->sets[j], &l->contacts[l->sets[j].first],
                                           &l->restitution[3 * l->sets[j].first]);
        }
        if (st == PP_OK) {
            for (int w = 0; w < iw->work.set_count; ++w)
                if (iw->work_place[w] >= 0) iw->work_place[w] = place[iw->work_place[w]];
            *fresh = kept_fresh;
            pp_constraint_list t = *l;
            *l = *o;
            *o = t;
        }
    }
    return st;
}

static pp_status working_set_merge(pp_world *world, pp_island_work *iw, int model,
                                   pp_set_index *fresh_index, pp_set_index *work_index,
                                   double *left_out)
{
    *left_out = 0.0;
    const pp_step_scratch *s = &world->scratch;
    pp_constraint_list *l = &iw->list;
    if (model != iw->work_model) return working_set_start(world, iw, model, 0); /* fell back */
    int fresh = l->set_count, known = iw->work.set_count;
    pp_status st = index_build(fresh_index, l);
    if (st == PP_OK) st = index_build(work_index, &iw->work);
    /* the working set's place in the list (one order, below): room for every set it can
     * hold after this merge */
    if (st == PP_OK)
        st = pp_grow((void **)&iw->work_place, &iw->work_place_capacity, known + fresh + 1,
                     sizeof *iw->work_place);
    if (st == PP_OK)
        st = pp_grow((void **)&iw->work_mark, &iw->work_mark_capacity, known + fresh + 1,
                     sizeof *iw->work_mark);
    for (int w = 0; w < known && st == PP_OK; ++w) {
        const pp_peg_set *ws = &iw->work.sets[w];
        iw->work_place[w] = index_find(fresh_index, l, &iw->work.contacts[ws->first], ws->count);
        if (iw->work_place[w] >= 0) continue;
        const int at = l->set_count;
        st = carry_set(world, iw, w);
        if (l->set_count > at) iw->work_place[w] = at;
    }
    for (int j = 0; j < fresh && st == PP_OK; ++j) {
        const pp_peg_set *set = &l->sets[j];
        pp_contact *c = &l->contacts[set->first];
        if (!carryable(s, set, c)) continue;
        int known_set = index_find(work_index, &iw->work, c, set->count);
        if (known_set >= 0) {
            const pp_peg_set *known = &iw->work.sets[known_set];
            keep_primary(l, set, &iw->work.contacts[known->first]);
            keep_friction_axes(c, set->count, &iw->work.contacts[known->first], known->count);
            continue;
        }
        st = pp_constraint_list_append(&iw->work, set, c, &l->restitution[3 * set->first]);
        if (st != PP_OK) break;
        const pp_peg_set *joined = &iw->work.sets[iw->work.set_count - 1];
        mark_friction_axes(&iw->work.contacts[joined->first], joined->count);
        iw->work_place[iw->work.set_count - 1] = j;
        iw->work_mark[iw->work.set_count - 1] = 0; /* new at q^ */
    }
    if (st == PP_OK) st = pair_bound(iw, &fresh, left_out);
    for (int w = 0; w < iw->work.set_count && st == PP_OK; ++w)
        if (iw->work_place[w] >= 0) prime_at_largest_gap(l, iw->work_place[w]);
    if (st == PP_OK) st = list_in_work_order(world, iw, fresh);
    if (st == PP_OK) st = pp_constraint_list_index(l);
    return st;
}

/* Kinetic energy of body b moving at (v, w), J. */
static double body_kinetic_energy(const pp_body *b, const double v[3], const double w[3])
{
    double wb[3] = {0, 0, 0}; /* R^T w: the body-frame angular velocity */
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) wb[r] += b->R[3 * c + r] * w[c];
    double rot = 0.0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) rot += wb[r] * b->inertia_body[3 * r + c] * wb[c];
    return 0.5 * (b->mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + rot);
}

/* Kinetic energy of the island's bodies at velocities nu (6 per local body), or at the
 * bodies' own (nu*) when nu is NULL. */
static double kinetic_energy(const pp_world *world, const pp_island_work *iw, const double *nu)
{
    double e = 0.0;
    for (int l = 0; l < iw->body_count; ++l) {
        const pp_body *b = &world->bodies[iw->body[l]];
        e += nu ? body_kinetic_energy(b, &nu[6 * l], &nu[6 * l + 3])
                : body_kinetic_energy(b, b->v, b->w);
    }
    return e;
}

/* Pose the island's bodies (and their shapes) at q^ = q^l + h f(nu^) (stage 8 with nu^),
 * saving q^l; or, with `restore`, put q^l back (stage 8 integrates from there). A kinematic
 * body's estimate is its own velocity (the solve leaves it as it is). */
void pp_island_pose_predicted(pp_world *world, pp_island_work *iw, double h, int restore)
{
    for (int l = 0; l < iw->body_count; ++l) {
        pp_body *b = &world->bodies[iw->body[l]];
        double *saved = &iw->pose_saved[16 * l];
        if (restore) {
            memcpy(b->x, saved, 3 * sizeof(double));
            memcpy(b->q, saved + 3, 4 * sizeof(double));
            memcpy(b->R, saved + 7, 9 * sizeof(double));
        } else {
            memcpy(saved, b->x, 3 * sizeof(double));
            memcpy(saved + 3, b->q, 4 * sizeof(double));
            memcpy(saved + 7, b->R, 9 * sizeof(double));
            pp_body predicted = *b;
            memcpy(predicted.v, &iw->nu_hat[6 * l], 3 * sizeof(double));
            memcpy(predicted.w, &iw->nu_hat[6 * l + 3], 3 * sizeof(double));
            pp_body_integrate_pose(&predicted, h);
            memcpy(b->x, predicted.x, sizeof b->x);
            memcpy(b->q, predicted.q, sizeof b->q);
            memcpy(b->R, predicted.R, sizeof b->R);
        }
        memcpy(iw->mlcp_body[l].x, b->x, sizeof b->x);
        pp_pose_body_shapes(world, iw->body[l], h);
    }
}

/* Penetration of the constraint family at the current (predicted) pose: the largest
 * -max_s psi_s over the sets, 0 when every set holds. */
static double set_violation(const pp_constraint_list *l)
{
    double worst = 0.0;
    for (int j = 0; j < l->set_count; ++j) {
        const pp_contact *c = &l->contacts[l->sets[j].first];
        double m = c[0].psi;
        for (int i = 1; i < l->sets[j].count; ++i)
            if (c[i].psi > m) m = c[i].psi;
        if (-m > worst) worst = -m;
    }
    return worst;
}

/* The signed distance of shapes a and b at their current poses (pp_shape_distance), or
 * -HUGE_VAL where it is not known. */
static double pair_distance(const pp_step_scratch *s, int a, int b)
{
    pp_proximity near;
    return pp_shape_distance(&s->shapes[a], &s->shapes[b], &near) == PP_OK ? near.distance
                                                                            : -HUGE_VAL;
}

/* nu*, the island's free velocity (its bodies' mlcp_body v and w), into `nu` (6 a body). */
static void free_velocity(const pp_island_work *iw, double *nu)
{
    for (int l = 0; l < iw->body_count; ++l) {
        memcpy(&nu[6 * l], iw->mlcp_body[l].v, 3 * sizeof(double));
        memcpy(&nu[6 * l + 3], iw->mlcp_body[l].w, 3 * sizeof(double));
    }
}

/* Is a pair of shapes one whose contacts the working set cannot carry (a sphere, capsule or
 * another smooth shape: its closest-point contact is rebuilt at every pose, not carried)? */
static int smooth_pair(const pp_step_scratch *s, const pp_pair *p)
{
    const int a = s->shapes[p->a].kind, b = s->shapes[p->b].kind;
    return (a != PP_SHAPE_POLYTOPE && a != PP_SHAPE_PLANE) ||
           (b != PP_SHAPE_POLYTOPE && b != PP_SHAPE_PLANE);
}

/* Has the island a pair of smooth_pair's kind? */
int pp_island_has_smooth_pair(const pp_step_scratch *s, const pp_island_work *iw)
{
    for (int i = 0; i < iw->pair_count; ++i)
        if (smooth_pair(s, &iw->pairs[i])) return 1;
    return 0;
}

/* Set w of the working set read at the current poses (world_internal.h). */
pp_status pp_island_read_work_set(const pp_world *world, pp_island_work *iw, int w,
                                  pp_contact *largest, int *readable)
{
    const pp_step_scratch *s = &world->scratch;
    const pp_peg_set *set = &iw->work.sets[w];
    const pp_contact *c = &iw->work.contacts[set->first];
    const pp_shape *sb = &s->shapes[c[0].shape_b];
    pp_polytope_view va, vb;
    *readable = 0;
    pp_status st = pp_pose_pair(iw, &s->shapes[c[0].shape_a], sb, &va, &vb);
    if (st != PP_OK) return st;
    for (int i = 0; i < set->count; ++i) {
        pp_contact q = c[i];
        if (!pp_update_contact(sb, &va, &vb, &q)) return PP_OK;
        pp_island_read_at_pair_depth(s, iw, &q);
        if (i == 0 || q.psi > largest->psi) *largest = q;
    }
    *readable = 1;
    return PP_OK;
}

/* set_violation of the working set at the pose predicted by iw->nu_hat, its sets re-evaluated
 * there (the island's list is left as it is: its impulses are the last solve's). With
 * `pair_depth`, a PEG set reads max(max_s psi_s, d), d its pair's signed distance there: how
 * deep the pose puts the pair, not how deep one of its sets' features reads (the penetration
 * energy_bounded_fixed_point compares; the standard model's sets read so already,
 * pp_island_read_at_pair_depth). With `smooth`, the island's pairs the working set does not carry
 * (smooth_pair) read their signed distance there too (-d, where they overlap). */
static pp_status working_set_violation(pp_world *world, pp_island_work *iw, double h,
                                       int pair_depth, int smooth, double *violation)
{
    const pp_step_scratch *s = &world->scratch;
    pp_status st = PP_OK;
    *violation = 0.0;
    pp_island_pose_predicted(world, iw, h, 0);
    for (int w = 0; w < iw->work.set_count && st == PP_OK; ++w) {
        pp_contact largest;
        int ok = 0;
        st = pp_island_read_work_set(world, iw, w, &largest, &ok);
        if (st != PP_OK || !ok) continue;
        double m = largest.psi;
        if (pair_depth && iw->work_model == PP_MODEL_PEG && m < 0.0)
            m = fmax(m, pair_distance(s, largest.shape_a, largest.shape_b));
        if (-m > *violation) *violation = -m;
    }
    for (int i = 0; smooth && st == PP_OK && i < iw->pair_count; ++i) {
        if (!smooth_pair(s, &iw->pairs[i])) continue;
        const double d = pair_distance(s, iw->pairs[i].a, iw->pairs[i].b);
        if (-d > *violation) *violation = -d;
    }
    pp_island_pose_predicted(world, iw, h, 1);
    return st;
}

/*
 * The work bound of one island's re-linearisation (issue 15: no step may take unbounded
 * time, also with no clock, pp_config.lcp_budget_seconds = 0).
 *
 * Each iteration solves an LCP at its predicted pose, and its working set only grows (ST96
 * §4, working_set_merge): where the prediction leaves the neighbourhood of q^l (bodies
 * overlapping deeply and pushed out at psi/h, hulls meeting fast) every iterate meets sets
 * new at its pose, each LCP is larger than the last and starts cold, and a pivot of Lemke on
 * n unknowns costs O(n^2) (the dense inverse's update; the sparse basis's refinement sweeps
 * its nonzeros). Measured: soak seed 1178 (step 24, PEG, h = 0.02: two hulls falling together
 * at 4.8 m/s, apart, with PEG sets whose gaps reach psi = -0.27 m, a gap rate of 13.6 m/s;
 * check_step_work): a first LCP of 342 unknowns, then 20 iterates growing to 1 911 unknowns,
 * 18 600 pivots at 2-7 ms each, and the last LCP's Lemke path wandering to its cap of
 * 2 (50 n + 100) = 191 300 pivots: 326 s for one step. Each loop was capped (iterations,
 * pivots per solve); their product was not.
 *
 * So the iterates share a budget of work counted in pivots weighted by their cost: a pivot
 * on an LCP of n unknowns costs (n + RELIN_WORK_FLOOR)^2, and the iteration may spend
 * RELIN_WORK_PATHS (n0 + RELIN_WORK_FLOOR)^3, n0 the unknowns of the step's first LCP: the
 * work of RELIN_WORK_PATHS cold Lemke paths of n0 + RELIN_WORK_FLOOR pivots on that LCP, as
 * much as the iteration cap (20 by default) of cold solves on a family that does not grow.
 * (The floor keeps small islands from being starved: a box landing goes from 1 contact to 4.)
 * Each iterate's solves may pivot only as much as the work left allows at its size
 * (pp_lcp_budget.pivots); an iterate cut by it is not an estimate (its LCP was not solved),
 * and the iteration stops with the best estimate kept (relinearize_refused), counted in
 * relinearize_cut, as an iterate answered only approximately after exact answers is
 * (relinearize_step, "An iterate answered approximately"). The step's first solve is bounded
 * by the LCP's own caps (pegplus/lcp.h: 2 (50 n + 100) pivots a solve; at most three solves a
 * model, two models).
 * Measured over the integration tests (29 048 re-linearisations): the largest share of this
 * budget any converging iteration needs is 0.84 (20 iterates of ~n0 pivots each, counting
 * every pivot at the largest iterate's size); the six that exceed it (7.9-66 times) all grew
 * their LCP 3-90 fold and ended refused (an earlier estimate kept), at 1.3-10 s a step.
 * Seed 1178's step now stops in its 6th iterate (854 unknowns), 2 355 pivots in all.
 *
 * An iterate grown past the first solve. On an island of the sticking solve's size
 * (pp_peg_sticking_size(), 1 000 unknowns) or more, an iterate whose LCP at the predicted
 * pose has more than RELIN_GROWN times the unknowns of the step's first LCP is not solved: it
 * is cut as the work bound cuts (the best estimate kept, relinearize_cut). The sets new at q^
 * are known neither to the warm start (used only where every set of a moving island is known,
 * stage_time_step.c) nor to the sticking solve's start (an iterate's answers by constraint
 * identity exist only after an iterate), so that LCP is solved cold, on more unknowns than the
 * first, whose answer came from screening's warm rounds and the sticking solve started from
 * the last step's answers. The cubic budget above does not bound it in time: at n0 = 5 000 it
 * allows ~49 000 pivots of 1-4 ms (the sparse path's) plus the interior-point rounds, which
 * pivot not at all. Measured (ODE's crash demo, the wall struck at 20 m/s, h = 0.05, both
 * models; docs/performance.md "The crash impact's re-linearisation iterates"): first LCPs of
 * 4 980-5 958 unknowns answered exactly in 1.5-5.8 s of CPU; their iterates 7 218-10 518
 * unknowns (1.45-1.77 n0); step 15's iterate 0 (standard) a screening round of 2 856 unknowns
 * cold (7 809 pivots, plain Lemke failed, answered on M + 1e-14 I: 10.8 s), the sticking
 * solve's rounds refused (5.6 s), Lemke on Q past 22 000 pivots (> 145 s). Under the default
 * 10 s clock every such iterate ran to the clock and was not applied, so the rule keeps the
 * answer the clock kept and leaves the step the first solve's CPU (step 15 clock-free: > 150
 * s -> 3.4 s standard, 1.6 s PEG). The heaps' iterates, which solve nearly the same LCP again
 * (the kept answer), grew 1.069-1.093 times over the integration tests (177 iterates of
 * islands of 1 000 unknowns or more) and are solved as before. Not caught: step 16's iterate
 * (5 568 -> 6 636, 1.19 times; cold, its Lemke on Q past 30 s), which no growth threshold
 * separates from the heaps' with margin: the next rule catches it.
 *
 * An iterate's work bounded by the first solve's. On an island of the sticking solve's size
 * or more, each iterate's solve may do at most
 *     max(RELIN_OWN W_1, RELIN_WORK_PATHS (s + RELIN_WORK_FLOOR)^3),   s = 1 000,
 * W_1 the step's first solve's own work, both in pp_lcp_budget.work's units (pegplus/lcp.h:
 * a Lemke pivot on n unknowns (n + 100)^2, an interior-point iteration of the sticking solve
 * PP_LCP_INTERIOR_WORK of them; counts, so the bound is the same on any machine). The shared
 * budget holds each of the iterate's solves to it: Lemke's pivots (lcp.c start_limits) and
 * the sticking solve's interior rounds (lcp_sticking.c interior_cap); an iterate that runs
 * out is cut as the work bound cuts (work->cut: its answer not applied, the best estimate
 * kept). The cubic bound above counts every pivot at the island's size and no interior
 * iteration, so it let the crash's step-16 iterate spend its interior rounds (445
 * iterations, 3-4 s) and then Lemke on Q; this one counts both at their own sizes. The
 * floor is the whole iteration's budget (above) of an island of the sticking solve's least
 * size: the heaps' iterates, whose first solve is warm and cheap, keep it. Measured
 * (docs/performance.md "An iterate's work bounded by the first solve's"): 1 000 units take
 * ~1e-10 s of CPU (the crash's first solves 2.1e10 - 9.0e10 units in 1.9 - 6.9 s); over the
 * integration tests the costliest iterate solved (check_relinearize_order, heap50 under PEG:
 * 1 708 pivots and 479 interior iterations on 2 410 unknowns, 1.9 s) ~2e10, 30 times its
 * first solve's, under the floor 2.66e10; the crash's step-16 iterate (PEG 5 556 -> 6 726
 * unknowns, standard 5 568 -> 6 636) is cut after half its first solve's 6.4e10 - 6.7e10,
 * where it ran more than 30 s (clock-free) or to the clock.
 */
#define RELIN_WORK_PATHS 20.0
#define RELIN_WORK_FLOOR 100.0
#define RELIN_GROWN 1.25
#define RELIN_OWN 0.5

typedef struct relin_work {
    double left;                   /* work the iterates may still spend */
    int first;                     /* unknowns of the step's first LCP (n0) */
    double own;                    /* the first solve's own work (pp_lcp_budget.work_used) */
    int cut;                       /* 1: the budget cut an iterate, or left it no pivot */
    int approximate;               /* 1: an iterate's LCP was answered only approximately
                                      after exact answers (relinearize_step, "An iterate
                                      answered approximately"): not applied */
} relin_work;

/* The work an iterate's solve may do (relin_work, "An iterate's work bounded by the first
 * solve's"), in pp_lcp_budget.work's units; -1: no bound (an island below the sticking
 * solve's size) */
static double own_allowance(const relin_work *work)
{
    if (work->first < pp_peg_sticking_size()) return -1.0;
    const double s = (double)pp_peg_sticking_size() + RELIN_WORK_FLOOR;
    return fmax(RELIN_OWN * work->own, RELIN_WORK_PATHS * s * s * s);
}

static double pivot_cost(int n)
{
    const double m = (double)n + RELIN_WORK_FLOOR;
    return m * m;
}

/* Is an iterate's LCP of `unknowns` one the iteration does not solve (relin_work, "An iterate
 * grown past the first solve")? */
static int grown_cold(const relin_work *work, int unknowns)
{
    return work->first >= pp_peg_sticking_size() &&
           (double)unknowns > RELIN_GROWN * (double)work->first;
}

/* Were the island's LCP answers of the step so far (its statistics `s`: the worst status and
 * fallback over its solves) all LCP solutions to the acceptance of pegplus/lcp.h (Lemke's,
 * also on M + eps I or with the energy retry's compliance: lcp_fallback <= 1)? */
static int answers_exact(const pp_island_stats *s)
{
    return s->worst_status == PP_LCP_SOLVED && s->worst_fallback <= 1;
}

/* After exact answers (answers_exact), did the island's solves since then apply the bounded
 * fallback's answer short of the acceptance (lcp_fallback 2, status PP_LCP_APPROXIMATE; a
 * fallback answer that reaches the acceptance is PP_LCP_SOLVED and is a solution)? */
static int answered_approximately(const pp_island_stats *s)
{
    return s->worst_fallback == 2 && s->worst_status == PP_LCP_APPROXIMATE;
}

/* Do two boxes overlap (closed)? */
static int boxes_meet(const pp_aabb *a, const pp_aabb *b)
{
    for (int r = 0; r < 3; ++r)
        if (a->max[r] < b->min[r] || b->max[r] < a->min[r]) return 0;
    return 1;
}

/*
 * The pairs of the island's dynamic shapes with static shapes that come near at the predicted
 * pose q^, appended to the island's candidate pairs (stage 2's test, boxes grown by
 * eps/2 + m_i, at q^).
 *
 * Why. Stage 2 bounds how far a shape can move in the step by its velocity at the start,
 * m_i = h (|v| + |a| h + |w| r_i), and an impulse within the step can exceed that: a body at
 * rest 1.5 cm from a wall, struck by another at 5 m/s, leaves at 1.3 m/s and ends the step
 * 1 cm inside the wall, no constraint between them (the pouring scene, frictionless seed 103,
 * step 180: 5.9e-5 m^3). The re-linearisation's iterates predict where the step ends; a static
 * shape near there enters the problem like any pair of stage 2, its sets join the working set
 * (ST96 §4: "constraints found violated are added"). Pairs with dynamic bodies of other
 * islands are not added (that would join the islands), nor any pair in a world with the
 * program's near callback (its surface is the callback's answer to a probe, and probes run
 * once per step before stages 3-5, near_probe.c).
 */
static pp_status pairs_near_prediction(pp_world *world, pp_island_work *iw)
{
    const pp_step_scratch *s = &world->scratch;
    const double eps = world->config.proximity_margin;
    if (world->near_callback) return PP_OK;
    for (int l = 0; l < iw->dynamic_count; ++l) {
        const int b = iw->body[l];
        for (int e = s->body_shape_first[b]; e < s->body_shape_first[b + 1]; ++e) {
            const int i = s->body_shapes[e];
            if (s->shapes[i].kind == PP_SHAPE_PLANE) continue;
            pp_aabb box;
            pp_shape_aabb(&s->shapes[i], 0.5 * eps + s->shape_motion[i], &box);
            for (int k = 0; k < s->static_count; ++k) {
                const int j = s->static_shapes[k];
                if (!boxes_meet(&box, &s->static_aabbs[k])) continue;
                pp_pair p = {i < j ? i : j, i < j ? j : i};
                int known = 0;
                for (int q = 0; q < iw->pair_count && !known; ++q)
                    known = iw->pairs[q].a == p.a && iw->pairs[q].b == p.b;
                if (known) continue;
                if (!pp_pair_may_collide(s->shape_geom[i], s->shape_geom[j])) continue;
                /* the island's pairs are a slice of the step's list: copied to grow */
                const int own = iw->pairs == iw->own_pairs;
                pp_status st = pp_grow((void **)&iw->own_pairs, &iw->own_pair_capacity,
                                       iw->pair_count + 1, sizeof(pp_pair));
                if (st != PP_OK) return st;
                if (!own && iw->pair_count > 0)
                    memcpy(iw->own_pairs, iw->pairs, (size_t)iw->pair_count * sizeof(pp_pair));
                iw->pairs = iw->own_pairs;
                iw->own_pairs[iw->pair_count++] = p;
            }
        }
    }
    return PP_OK;
}

/*
 * One fixed-point iteration of Stewart & Trinkle 1996 §3.6. The step's LCP enforces the gap
 * linearised at q^l, psi(q^l) + h G(q^l)^T nu >= 0; for a rotating body the true gap at
 * q^{l+1} misses that by O(h^2 |w|^2 r). Here the estimate nu^ of the last solve predicts
 * q^ = q^l + h f(nu^) (the integrator of stage 8), the contacts are rebuilt at q^, and the LCP
 * is solved again with the gap linearised there:
 *     psi(q^) + h G(q^)^T (nu - nu^) >= 0,   i.e.  psi' = psi(q^) - h G(q^)^T nu^  in place
 * of psi, Jacobians about the predicted centres. Newton–Euler keeps M(q^l) and nu*. At a
 * fixed point nu = nu^ the constraint is psi(q^{l+1}) >= 0 itself. *violation: how deep the
 * constraints built at q^ (with the working set) are violated there; *residual: max |nu - nu^|;
 * *solved: 0 when the LCP at q^ was not solved (nu is then not an estimate).
 */
static pp_status relinearize(pp_world *world, pp_island_work *iw, double h, int *model,
                             pp_set_index *index_a, pp_set_index *index_b, relin_work *work,
                             double *violation, double *residual, int *solved)
{
    int nb = iw->body_count;
    pp_island_pose_predicted(world, iw, h, 0);
    iw->list.contact_count = iw->list.set_count = 0;
    pp_status st = pairs_near_prediction(world, iw);
    if (st == PP_OK)
        st = pp_build_constraints(world, iw, iw->pairs, iw->pair_count, (pp_model)*model,
                                  &iw->list, NULL);
    double left_out = 0.0; /* the deepest set pair_bound left out of the list */
    if (st == PP_OK) st = working_set_merge(world, iw, *model, index_a, index_b, &left_out);
    if (st == PP_OK) *violation = fmax(set_violation(&iw->list), left_out);
    if (st == PP_OK) pp_island_shift_gaps(world, iw, h, iw->nu_hat);
    *solved = 0;
    if (st == PP_OK && iw->list.contact_count == 0) { /* nothing near q^: the free motion */
        free_velocity(iw, iw->velocity);
        iw->answer = (pp_answer){0, 0, 0, 0.0}; /* no LCP */
        *solved = 1;
    } else if (st == PP_OK) {
        /* the pivots the work left allows at this LCP's size (relin_work) */
        const int unknowns = pp_island_lcp_unknowns(iw, world->config.friction_directions);
        const double cost = pivot_cost(unknowns);
        double allowed = grown_cold(work, unknowns) ? 0.0 : floor(work->left / cost);
        const double own = own_allowance(work);
        int own_spent = 0;
        if (allowed < 1.0) {
            work->cut = 1;
        } else {
            const pp_island_stats before = iw->stats;
            const int exhausted = iw->budget.exhausted;
            /* the smaller of the work's allowance and the island's pivots left
             * (pp_config.lcp_budget_pivots; iw->budget.pivots < 0: no limit), which the solves charge */
            const long island = iw->budget.pivots;
            const long allow = allowed < 1e9 ? (long)allowed : 1000000000L;
            const int work_binds = island < 0 || allow < island;
            iw->budget.pivots = work_binds ? allow : island;
            /* the first solve's own work bounds this iterate's (own_allowance) */
            const double work_island = iw->budget.work;
            iw->budget.work = own;
            st = pp_island_solve(world, iw, h, model, iw->nu_hat);
            own_spent = own >= 0.0 && iw->budget.work < PP_LCP_PIVOT_WORK(unknowns);
            iw->budget.work = work_island;
            work->left -= (double)(iw->stats.lcp_pivots - before.lcp_pivots) * cost;
            /* cut by the work bound, or by the first solve's own (own_allowance) */
            work->cut = ((work_binds && iw->budget.pivots == 0) || own_spent) &&
                        iw->budget.exhausted > exhausted;
            if (work_binds) /* the island's own pivots left, less those charged here */
                iw->budget.pivots = island < 0 ? -1 : island - (allow - iw->budget.pivots);
            work->approximate = !work->cut && st == PP_OK && answers_exact(&before) &&
                                answered_approximately(&iw->stats);
            /* not applied (relinearize_step keeps an earlier estimate): its answer is counted
             * in pp_step_stats.lcp_dropped, not in the status, residual and fallback */
            if (work->cut || work->approximate) st = st == PP_ERR_SOLVER ? PP_OK : st;
            *solved = st == PP_OK && !work->cut && !work->approximate;
            if (*solved && *model == iw->work_model) /* the marks pair_bound reads */
                for (int w = 0; w < iw->work.set_count; ++w) {
                    const int j = iw->work_place[w];
                    iw->work_mark[w] &= WORK_PUSHED;
                    if (j >= 0)
                        iw->work_mark[w] |= WORK_LISTED |
                                            (set_pushed(iw, &iw->list.sets[j]) ? WORK_PUSHED : 0);
                }
        }
    }
    pp_island_pose_predicted(world, iw, h, 1);
    if (st == PP_ERR_SOLVER) {
        pp_log(PP_LOG_WARNING, "re-linearisation: the LCP at the predicted pose was not solved");
        return PP_OK;
    }
    if (st != PP_OK || !*solved) return st;
    *residual = 0.0;
    for (int j = 0; j < 6 * nb; ++j) {
        double d = fabs(iw->velocity[j] - iw->nu_hat[j]);
        if (d > *residual) *residual = d;
    }
    return PP_OK;
}

/* The fixed point's tolerances, relative per component (relinearize_step): converged, and
 * near enough for a fixed point above the energy bound to be kept or an orbit to close. */
#define RELIN_CONVERGED 1e-11
#define SMOOTH_DEPTH_TIE 1e-9 /* m: a smooth pair's depth within it reads as touching */
#define RELIN_NEAR 1e-6
/* m: a kept estimate deeper than this is beyond post-stabilisation's reach (stage_project.c
 * PROJECT_MAX; relinearize_step's end) */
#define RELIN_RETRY_DEPTH 1e-6
/* The step length after a cycle (relinearize_step, "A cycle"): RELIN_CYCLE_STEP of the cycle's
 * longest, at least pp_relinearize_damping's shortest. */
#define RELIN_CYCLE_STEP 0.75
#define RELIN_STEP_MIN (1.0 / 16.0)

/* Is the estimate iw->velocity the fixed point nu = nu^ to tol (1 + |nu^|) per component? */
static int fixed_point(const pp_island_work *iw, double tol)
{
    for (int j = 0; j < 6 * iw->body_count; ++j)
        if (fabs(iw->velocity[j] - iw->nu_hat[j]) > tol * (1.0 + fabs(iw->nu_hat[j]))) return 0;
    return 1;
}

/*
 * Damping. Where the contact sets switch between iterates the plain iteration can cycle
 * (measured: period 4 in a pile of polytopes); the step toward a new estimate is halved
 * (down to 1/16) each time the residual |nu - nu^| fails to shrink, and doubled again (up to
 * the full step) each time it shrinks as much as a map contracting by a half guarantees. The
 * damped step nu^ <- nu^ + alpha (F(nu^) - nu^), F the solve at the pose nu^ predicts, scales
 * the residual r = |F(nu^) - nu^| by at most 1 - alpha (1 - L) where F is L-Lipschitz, so the
 * test r_new < (1 - alpha / 2) r asks the shrink of L < 1/2 at every alpha. (The earlier test,
 * r_new < 3/4 r, asked the shrink of L < 1 - 1/(4 alpha), which not even a constant map gives
 * at alpha <= 1/4: once damped that far the step stayed short where F is nearly constant,
 * converging at rate 1 - alpha a step.
 * Measured: PEG pouring seed 3, h = 0.01, step 433, after the LCP at an iterate switched to
 * another solution, the residual shrank by 0.7508 a step (F nearly constant, L ~ 3e-3) for
 * 16 iterations until the 20 ran out and the kept estimate ended 4e-8 m deep, 3.8e-11 m^3;
 * with this test alpha is back at 1 in two iterations and the step converges at iteration
 * 12, 0 m^3.)
 * No doubling right after a residual that grew (`*grew`, kept by the caller). Where the LCP at the
 * iterates alternates between two of its solutions the residual alternates too, growing after
 * a full step and shrinking by half after a halved one, and the plain rule doubled and halved
 * in turn, alpha 1, 1/2, 1, 1/2 ... for all 20 iterations (measured: PEG pouring seed 9,
 * h = 0.01, step 410, once the energy rule below had moved its trajectory: a 7-body island
 * cycling between kinetic energies 4.14 J and 5.24 J, residual 2.47 / 1.26, the estimate kept
 * 22 um deep, 1.3e-11 m^3). Now such a cycle is damped down, and a contracting map still gets
 * its full step back, one doubling an iteration from the second shrink after a growth.
 */
double pp_relinearize_damping(double alpha, double residual, double last_residual, int *grew)
{
    const int grows = residual >= last_residual;
    double next = alpha;
    if (grows) next = alpha > 1.0 / 16.0 ? 0.5 * alpha : alpha;
    else if (residual < (1.0 - 0.5 * alpha) * last_residual && !*grew)
        next = alpha < 0.5 ? 2.0 * alpha : 1.0;
    *grew = grows;
    return next;
}

/*
 * ST96 §3.6's fixed-point iteration after the step's first solve (velocity in s->velocity).
 *
 * Accepting an estimate. A converged iterate is the solution of the non-linear step (every
 * constraint of the working set holds at the end-of-step pose it predicts) and is kept even
 * when its kinetic energy is slightly above the first solve's: keeping a rotating body's
 * contact point on its surface exactly (not to first order) can take O(h) more energy than
 * the linearised step gave, a property of the discretisation (measured: relative 1e-4 .. 3e-4
 * for a pivoting rod and at a drop into the pouring pile; refusing those left overlaps of
 * 6e-10 m^3 and made ST96's rod converge worse).
 *
 * Damping: pp_relinearize_damping. Work: relin_work (the iterates' LCPs share a budget of
 * pivots weighted by their size, proportional to the cube of the first LCP's).
 *
 * An iterate answered approximately. The first solve is ST96's step itself (the LCP
 * linearised at q^l); the iterates refine it toward psi(q^{l+1}) >= 0 by the map F, nu^ ->
 * the LCP's answer at the pose nu^ predicts. Where every answer of the step so far is an LCP
 * solution to the acceptance of pegplus/lcp.h (answers_exact: Lemke's, also on M + eps I or
 * with the energy retry's compliance) and an iterate's LCP is answered only by the bounded
 * fallback short of that acceptance (answered_approximately: status PP_LCP_APPROXIMATE, the
 * budget ran out in its solve or every exact attempt failed), that answer is not F(nu^) but
 * an approximation of it of unknown quality; its lower violation at its own pose (the
 * judgement below) is not that of a step of the model. It is treated as an iterate the work
 * bound cut: not applied (so its status, residual and fallback are not the step's: the failed
 * solve is counted in lcp_dropped, its work in the pivots), the iteration stopped with the
 * best estimate kept (every estimate is an exact answer or a damped step between exact
 * answers), counted in relinearize_cut (and relinearize_refused).
 * So the budget's cut of an iterate ends as the work bound's does, whichever comes first: by
 * the clock (lcp_budget_seconds) or the island's pivots (lcp_budget_pivots) the iterate's
 * Lemke stops and the fallback answers; without them the work bound stops it and its answer
 * was never applied. Measured (ODE's crash demo, standard model, the default 10 s clock):
 * the impact steps' first solves exact (4 980 unknowns at step 15, residual 1.2e-7) and their
 * iterates (7 188-10 044 unknowns) cut by the clock, answered at rel ~1e-5 and applied: steps
 * 15-18 ended in the fallback (residuals 2.5-8.7); with the first answers kept they are exact
 * (1.2e-7 ... 1.9e-10) and the bodies shallower after them (2.8e-3, 3.8e-3, 1.9e-3 m deep by
 * dCollide after steps 15-17 against 7.3e-3, 4.7e-3, 3.1e-4 m ... 8.1e-2 m in runs without
 * the rule; docs/performance.md "An approximate iterate does not replace an exact answer").
 * A first solve that itself runs out of the clock is not helped. A fallback answer that
 * reaches the acceptance is a solution (PP_LCP_SOLVED) and is an iterate like any other;
 * where the step's first answer is itself approximate, the iterates' answers are judged by
 * violation as below.
 *
 * Converged: the new velocity differs from nu^ by at most 1e-11 (1 + |nu^|) in every component.
 *
 * No convergence. When the iterations run out (or an LCP at a predicted pose is not solved),
 * the result is the estimate whose predicted pose violates the working set least (the last
 * estimate is evaluated for this at its own predicted pose), among those within the energy
 * bound max(KE(first solve), KE(nu*)): the contact impulses of an inelastic step add no
 * kinetic energy beyond what the first solve's psi/h terms needed, and an iteration that
 * leaps (a contact set that jumps between q^l and q^, a feature pair appearing deep at the
 * predicted pose) must not. A last estimate above the bound that is within 1e-6 (1 + |nu^|)
 * of its fixed point and strictly less violating than every estimate within the bound is
 * judged as a converged fixed point above the bound is (below), never taken as it is.
 * Measured (docs/prototypes/fast-sphere-scan.c, h = 0.01, check_relinearize_gain): a box
 * turning 0.6 rad in the step, a 2 cm sphere touching it at the start; the sphere's
 * closest-point contact, rebuilt at each q^, read psi' = -2 cm there (its normal turned 60
 * degrees round the box's edge), so each iterate's answer pushed out at 2 m/s from an overlap
 * that was not there (energy_bounded, stage_time_step.c, allows p max(0, -psi'/h)); the 20
 * iterates ran out 1e-9 from a fixed point 0.80 % above the bound, which was taken as it was
 * (both models); and a PEG set of a box and a hull 4.6 cm apart read psi' = -2.2 cm, +47 %.
 * relinearize_refused counts the steps whose result is not the last estimate.
 *
 * A cycle. Where a constraint of the family reads deep at one predicted pose and not at the
 * next, the map F from an estimate nu^ to the solve's answer at its pose q^ jumps, and the
 * damped iteration can settle on a periodic orbit: the full step to F(nu^) lands where the
 * constraint reads deep, the halved steps shrink the residual as a nearly constant F would,
 * the doubled step jumps back (alpha 1, 1/2, 1/2; residual 0.82, 0.41, 0.20, 0.82, ...:
 * boxstack, a capsule turning onto a hull, their closest-point contact rebuilt at every q^,
 * 0.69 mm deep at one member's pose and 0.085 mm at another's; check_relinearize_cycle).
 * Iterate k closes a cycle of period p (2 <= p <= PP_RELIN_PERIOD_MAX) when its estimate nu^
 * and its answer F(nu^) are those of iterate k - p to RELIN_NEAR (1 + |.|) in every
 * component, with the same next step length and damping state, the same working set (which
 * only grows: its count) and model, a residual that grew within the period, and nu^ not
 * itself within RELIN_NEAR of its fixed point. From there the damped iteration applies the
 * same map to the same state: every later iterate repeats an estimate already evaluated, none
 * is a fixed point, and the iterations left could only decide which member of the cycle is
 * the last. (An orbit whose residual shrank at every iterate of the period is not a cycle of
 * the damped map, however close its estimates: the first iterate whose residual stops
 * shrinking halves the step. Measured, PEG boxstack step 1487: a period-2 orbit at alpha = 1,
 * its residual shrinking by round-off, 0.1192995, 0.1192987, ..., halved at the 8th iterate
 * and converged at the 14th.) The iteration stops there with the "No convergence" rule's
 * estimate among those seen: nu_kept, the least violating estimate within the energy bound,
 * each nu^ judged at its own q^ with the constraints built there (closest-point contacts of
 * smooth shapes included). The rule's alternative, the last answer judged on the working set
 * alone, is not taken: in a cycle it is the member at which the count happens to end, and the
 * working set holds no closest-point contact, so a member deep in a capsule reads as
 * satisfied (measured on that island: with 20 iterations the step kept the member 0.69 mm
 * deep, with 18 or 19 one 0.084-0.085 mm deep; the first solve alone leaves 0.14 mm). So the
 * result is the same for every iteration count past the cycle's closing, and no more violating
 * than any estimate within the bound that the iteration evaluated.
 * Except where the jump is the LCP's, not the family's: every constraint carried (no
 * closest-point contact rebuilt at each pose) and the estimate the cycle's longest step landed
 * on its least violating. Then F from the shorter steps' estimates points at a nearly feasible
 * pose at which the LCP takes another of its solutions (PEG's X sets make it non-convex), and
 * the iteration goes on with every step held to RELIN_CYCLE_STEP of that longest step (again
 * at each such cycle, down to RELIN_STEP_MIN; then it stops as above), approaching that pose
 * from the side where F is continuous. Measured (PEG pouring, frictionless, h = 0.01, seeds
 * 139 step 488 and 152 step 465): period 3 (steps 1, 1/2, 1/2), the full step's pose 2e-8 m
 * deep over a face and the LCP there (warm or cold) answering 8e-4 J lower; kept, 3.0e-10 and
 * 5.0e-11 m^3; held to 3/4 they end 4.3e-15 and 2.0e-14 m^3 (at 1/2: 1.3e-12, 1.1e-12, the
 * iterations running out first).
 *
 * A fixed point above the energy bound (issue 15, soak: 47 gains in 17 scenes, all of them
 * here). The fixed point is a KKT point of min (nu - nu*)^T M (nu - nu*) subject to the
 * non-linear psi(q(nu)) >= 0, the impulses along the constraints' gradients at the end pose.
 * Where a gap is concave along the step (a corner turning down toward a face) that feasible
 * set is convex and contains nu = 0 (the step's start, psi(q^l) >= 0), so the projection of
 * nu* onto it cannot gain kinetic energy. Where a gap is convex along the step (a turning
 * corner passing its lowest point within the step: touching at q^l, through the face in the
 * middle, rising at the end) the feasible set is not convex, and the fixed point can be the
 * one whose end pose is exactly touching with the corner rising: its linearised gap,
 * psi' = psi(q^) - h G(q^)^T nu^ < 0, reads an overlap at the start pose that is not there,
 * and the impulse does p (-psi'/h) of work. Measured (soak seed 2945, one box spinning at
 * 55 rad/s onto the plane, h = 0.0025, step 32): one vertex-face contact with psi' = -2.7 mm,
 * p = 41.8 N s, 15 545.8 J (nu*) -> 15 566.1 J, while the first solve's estimate (tangent
 * at q^l, a lower bound of a convex gap) ends above the plane at 15 372 J. Such a fixed point
 * is not kept when an estimate within the bound is at least as feasible: the answer is the
 * point of the segment from nu_kept (the least violating estimate within the bound, in
 * practice the first solve) to the fixed point where the kinetic energy reaches the bound
 * (it is convex along the segment, so that point is unique), when its pose violates the
 * working set no more than the fixed point's; else nu_kept itself when it violates no more;
 * else the fixed point (a refused one would leave the constraints violated). The segment's
 * point keeps the step as close to the fixed point as the bound allows. Measured in PEG
 * pouring (seeds 1-10, h = 0.01): such fixed points exceed the bound by 1e-8 .. 1e-3 of the
 * energy, and at each an estimate within it was as feasible (set violation 0); the overlaps
 * the changed trajectories first met (1.2e-12 and 3.7e-11 m^3) came from iterations that did
 * not converge, not from these steps (pp_relinearize_damping). The carryable sets
 * (polytopes, planes) are re-evaluated at the segment point's pose (working_set_violation);
 * in an island with a smooth shape (sphere, capsule: a closest-point contact rebuilt at every
 * pose, not in the working set) the fixed point and every candidate also read those pairs'
 * signed distances at their poses: read by the working set alone, the box shot by a sphere
 * (above, "No convergence") took the segment point 0.87 mm deep for a fixed point touching.
 * Where no estimate within the bound is as feasible read so, the choice is made again as the
 * working set alone reads (as before that reading): read so only, soak seed 515 (PEG, a hull,
 * a capsule and 9 joint rows in the island, step 194) kept its fixed point 0.038 J above the
 * bound where the segment point was 3.9e-8 m deeper at the capsule's pair.
 * Where neither the segment point nor nu_kept is as feasible, one more estimate within the
 * bound is tried before the fixed point is kept: nu_kept's impulse extended,
 *     nu(s) = nu* + s (nu_kept - nu*),   1 <= s <= s_max,
 * (nu_kept - nu* = M^-1 P, P its impulses), at the least s (bisection) whose pose violates no
 * more than the fixed point's. Where nu_kept is the first solve, an inelastic answer, this is
 * its impulses scaled by 1 + e, Newton's restitution e, and KE(nu(s)) = KE(nu*) + s b +
 * s^2 KE(M^-1 P) is within the bound up to s_max (at e = 1, KE(nu*), where the kept answer
 * is inelastic): the least restitution up to elastic that leaves the end pose as feasible as
 * the fixed point's, which no psi/h term pays for (the fixed point kept instead separates
 * its pair along its end normal faster than an elastic impact would). Measured (the box shot
 * by a sphere): the first solve 0.90 mm deep, the segment point 0.87 mm; s = 1.32 touching,
 * KE 0.53 mJ below nu*'s where the fixed point was 5.2 mJ above. The standard model's box <-
 * box 50 m/s seeds 2 and 4 (converged fixed points +0.45 % and +1.3e-7 above; segment points
 * 0.34 mm and 20 um deep, first solves 0.38 mm and 25 um): s = 1.85 and 1.71, both below the
 * bound. (Seed 5: none of the three as feasible; its fixed point kept, +2.4e-4.)
 */
/* The kept estimate's impulse extended toward the energy bound (relinearize_step, "A fixed
 * point above the energy bound"): nu(s) = nu* + s (nu_kept - nu*), s in [1, s_max], s_max
 * where KE(nu(s)) reaches `target` (KE is convex in s, KE(nu(0)) = KE(nu*) and KE(nu(1)) =
 * KE(nu_kept) within it, so [1, s_max] is). The least s found (bisection, RELIN_EXTEND_STEPS)
 * whose pose violates no more than `fixed_violation` (working_set_violation) goes into
 * iw->velocity, *found = 1; where s_max's pose violates more, or the island has joint rows,
 * *found = 0 and iw->velocity is left as it is. */
#define RELIN_EXTEND_STEPS 16

/* nu(s) = nu* + s (nu_kept - nu*) into iw->nu_hat (kept_impulse_extended) */
static void kept_extended(pp_island_work *iw, double s)
{
    for (int j = 0; j < 6 * iw->body_count; ++j) {
        const int l = j / 6, r = j % 6;
        const double star = r < 3 ? iw->mlcp_body[l].v[r] : iw->mlcp_body[l].w[r - 3];
        iw->nu_hat[j] = star + s * (iw->nu_kept[j] - star);
    }
}

static pp_status kept_impulse_extended(pp_world *world, pp_island_work *iw, double h,
                                       double target, double bound, int pair_depth, int smooth,
                                       double fixed_violation, int *found)
{
    const int n = 6 * iw->body_count;
    *found = 0;
    /* a joint row's impulse scaled would break its equality (J nu(s) = (1 - s) J nu*) */
    if (iw->joint_row_count > 0) return PP_OK;
    /* nu* (the bodies' free velocity) in nu_hat, then d = nu_kept - nu* */
    free_velocity(iw, iw->nu_hat);
    const double e_star = kinetic_energy(world, iw, iw->nu_hat);
    const double e_kept = kinetic_energy(world, iw, iw->nu_kept);
    for (int j = 0; j < n; ++j) iw->nu_hat[j] = iw->nu_kept[j] - iw->nu_hat[j];
    /* KE(nu* + s d) = e* + s b + s^2 ed, ed = KE(d), b = KE(nu_kept) - e* - ed */
    const double ed = kinetic_energy(world, iw, iw->nu_hat), b = e_kept - e_star - ed;
    if (!(ed > 0.0)) return PP_OK;
    const double s_max = (-b + sqrt(fmax(0.0, b * b + 4.0 * ed * (target - e_star)))) / (2.0 * ed);
    if (!(s_max > 1.0)) return PP_OK;
    double lo = 1.0, hi = s_max, violation = 0.0;
    pp_status st = PP_OK;
    for (int k = 0; k <= RELIN_EXTEND_STEPS && st == PP_OK; ++k) {
        const double s = k == 0 ? hi : 0.5 * (lo + hi);
        kept_extended(iw, s);
        st = working_set_violation(world, iw, h, pair_depth, smooth, &violation);
        if (st != PP_OK) break;
        if (violation <= fixed_violation) hi = s;
        else if (k == 0) return PP_OK; /* the bound's end violates more: none */
        else lo = s;
    }
    if (st != PP_OK) return st;
    kept_extended(iw, hi);
    if (!(kinetic_energy(world, iw, iw->nu_hat) <= bound)) return PP_OK;
    memcpy(iw->velocity, iw->nu_hat, (size_t)n * sizeof(double));
    *found = 1;
    return PP_OK;
}

/* The converged fixed point iw->velocity (violating the constraints by `fixed_violation` at
 * its pose; its answer iw->answer) checked against the energy bound (relinearize_step, "A
 * fixed point above the energy bound"); nu_kept: the least violating estimate within the
 * bound (`best`; its answers `kept`). *applied: the answers of the velocity kept.
 *
 * `bound` is the test of estimates, ceiling (1 + 1e-9) + 1e-12 J with ceiling =
 * max(KE(first solve), KE(nu*)): its slack is for the round-off of energies computed from
 * LCP answers, so that an estimate at the ceiling is not refused for its last digits. The
 * segment point is not such an estimate: it is constructed to a chosen energy, so it is put
 * at the ceiling itself (less 1e-12 of it for the rounding of the root), not at the slack's
 * top. Put at the slack's top it gained that slack on every step that took it: measured
 * (docs/performance.md "Fast hulls: energy at the re-linearisation's bound", PEG, 25 m/s
 * seed 3, h = 5e-4, step 27: the fixed point 0.548413081 J, nu* 0.548401552 J) +5.49e-10 J =
 * 1e-9 KE(nu*) + 1e-12 J, an inelastic, frictionless step gaining kinetic energy (and the
 * standard model's seed 2 the same; check_fast_hull_energy).
 *
 * Under PEG the two are compared by how deep their poses put each set's pair: a set reads
 * max(max_s psi_s, d), d its pair's signed distance there (working_set_violation's
 * pair_depth; the standard model's sets read so already). A PEG set's members are distances
 * along its features' normals, and an edge pair's is the gap of the edges' lines, which reads
 * below 0 where the edges have turned past each other and the hulls are apart. Measured
 * (check_fast_hull_energy, PEG, 50 m/s seed 14, step 13: a sub-step of 4.63e-4 s turning the
 * small hull, 1 500 rad/s, 0.70 rad): the fixed point, 1.15666 J against the bound
 * 1.10429 J, was held by one carried set whose primary edge pair read 0 at its pose with the
 * hulls 1.53 mm apart (psi' = -2.73 mm, the pair touching at q^l: p = 0.0129 N s pushing at
 * 5.9 m/s); the segment point at the bound read 8.9e-5 m of violation from that same set
 * with the hulls 1.42 mm apart, so the fixed point was kept (+4.7 % in the step). Read at the
 * pair's depth the segment point violates nothing and is taken: the step loses energy. */
static pp_status energy_bounded_fixed_point(pp_world *world, pp_island_work *iw, double h,
                                            double ceiling, double bound, double best,
                                            double fixed_violation, pp_answer kept,
                                            pp_answer *applied)
{
    const int n = 6 * iw->body_count;
    const size_t bytes = (size_t)n * sizeof(double);
    const double e1 = kinetic_energy(world, iw, iw->velocity);
    *applied = iw->answer;
    if (e1 <= bound || best == HUGE_VAL) return PP_OK;
    /* KE(nu_kept + s d), d = nu - nu_kept, is e0 + s (e1 - e0 - ed) + s^2 ed, ed = KE(d) */
    const double e0 = kinetic_energy(world, iw, iw->nu_kept);
    for (int j = 0; j < n; ++j) iw->nu_hat[j] = iw->velocity[j] - iw->nu_kept[j];
    const double ed = kinetic_energy(world, iw, iw->nu_hat), b = e1 - e0 - ed;
    const double target = ceiling - 1e-12 * fabs(ceiling); /* the root's rounding: within */
    double s = ed > 0.0 ? (-b + sqrt(fmax(0.0, b * b + 4.0 * ed * (target - e0)))) / (2.0 * ed) : 0.0;
    s = fmin(1.0, fmax(0.0, s));
    /* PEG: the fixed point's penetration read as the segment point's is (pair_depth). An island
     * with a smooth shape's pair is judged first with those pairs read at their depth too
     * (smooth), then, where no estimate is as feasible so, as the working set alone reads */
    const int pair_depth = iw->work_model == PP_MODEL_PEG;
    const int smooth_first = pp_island_has_smooth_pair(&world->scratch, iw);
    int found = 0;
    pp_status st = PP_OK;
    for (int smooth = smooth_first; smooth >= 0 && !found; --smooth) {
        double fixed = fixed_violation, violation = 0.0;
        if (pair_depth || smooth) {
            memcpy(iw->nu_hat, iw->velocity, bytes);
            st = working_set_violation(world, iw, h, pair_depth, smooth, &fixed);
            if (st != PP_OK) return st;
        }
        for (int j = 0; j < n; ++j)
            iw->nu_hat[j] = iw->nu_kept[j] + s * (iw->velocity[j] - iw->nu_kept[j]);
        st = working_set_violation(world, iw, h, pair_depth, smooth, &violation);
        if (st != PP_OK) return st;
        if (violation <= fixed && kinetic_energy(world, iw, iw->nu_hat) <= bound) {
            memcpy(iw->velocity, iw->nu_hat, bytes);
            *applied = pp_answer_combine(kept, iw->answer);
            found = 1;
        } else if (best <= fixed) {
            memcpy(iw->velocity, iw->nu_kept, bytes);
            *applied = kept;
            found = 1;
        } else {
            st = kept_impulse_extended(world, iw, h, target, bound, pair_depth, smooth, fixed,
                                       &found);
            if (st != PP_OK) return st;
            if (found) *applied = kept;
        }
    }
    if (!found) { /* no estimate within the bound is as feasible: the fixed point, reported */
        iw->stats.relinearize_over++; /* (world.c redoes the sub-step shorter, "Retried") */
        return PP_OK;
    }
    iw->stats.relinearize_refused++;
    return PP_OK;
}

/* Is every constraint of the list one the working set carries (no closest-point contact of a
 * smooth shape, rebuilt at every pose)? */
static int carried_family(const pp_step_scratch *s, const pp_constraint_list *l)
{
    for (int j = 0; j < l->set_count; ++j)
        if (!carryable(s, &l->sets[j], &l->contacts[l->sets[j].first])) return 0;
    return 1;
}

/* The step lengths, families and models of the iterates whose estimates and answers
 * iw->orbit holds, by iterate number modulo PP_RELIN_PERIOD_MAX. */
typedef struct relin_orbit {
    double alpha[PP_RELIN_PERIOD_MAX], violation[PP_RELIN_PERIOD_MAX];
    int grew[PP_RELIN_PERIOD_MAX], sets[PP_RELIN_PERIOD_MAX], model[PP_RELIN_PERIOD_MAX];
} relin_orbit;

/* Iterate `it` (its estimate nu^ in iw->nu_hat, its answer F(nu^) in iw->velocity, the next
 * step length alpha and grew from pp_relinearize_damping) recorded in the orbit. */
static void orbit_record(pp_island_work *iw, relin_orbit *o, int it, double alpha, int grew,
                         int model)
{
    const int n = 6 * iw->body_count, slot = it % PP_RELIN_PERIOD_MAX;
    double *x = &iw->orbit[(size_t)slot * 2 * n];
    memcpy(x, iw->nu_hat, (size_t)n * sizeof(double));
    memcpy(x + n, iw->velocity, (size_t)n * sizeof(double));
    o->alpha[slot] = alpha;
    o->grew[slot] = grew;
    o->sets[slot] = iw->work.set_count;
    o->model[slot] = model;
}

/* Does iterate `it` repeat iterate it - p for some period 2 <= p <= PP_RELIN_PERIOD_MAX,
 * it - p >= from (the iterates since the step length was last held shorter; relinearize_step,
 * "A cycle")? Returns p, or 0. */
static int orbit_closes(const pp_island_work *iw, const relin_orbit *o, int it, double alpha,
                        int grew, int model, int from)
{
    const int n = 6 * iw->body_count;
    int grown = grew; /* a residual grew within the period */
    for (int p = 2; p <= PP_RELIN_PERIOD_MAX && p <= it - from; ++p) {
        const int slot = (it - p) % PP_RELIN_PERIOD_MAX;
        grown |= o->grew[(it - p + 1) % PP_RELIN_PERIOD_MAX];
        if (!grown || o->alpha[slot] != alpha || o->grew[slot] != grew ||
            o->sets[slot] != iw->work.set_count || o->model[slot] != model)
            continue;
        const double *x = &iw->orbit[(size_t)slot * 2 * n];
        int same = 1;
        for (int j = 0; j < n && same; ++j)
            same = fabs(iw->nu_hat[j] - x[j]) <= RELIN_NEAR * (1.0 + fabs(iw->nu_hat[j])) &&
                   fabs(iw->velocity[j] - x[n + j]) <= RELIN_NEAR * (1.0 + fabs(iw->velocity[j]));
        if (same) return p;
    }
    return 0;
}

/* The iteration after the first solve, whose answer is in iw->velocity and *applied; on
 * return *applied holds the answers of the velocity kept: an iterate's, or those an estimate
 * combines (pp_answer_combine over its damped steps since the last full one). */
static pp_status relinearize_step(pp_world *world, pp_island_work *iw, double h, int *model,
                                  pp_answer *applied, int *converged_out)
{
    int nb = iw->body_count;
    size_t bytes = 6 * (size_t)nb * sizeof(double);
    pp_set_index *index_a = &iw->set_index[0], *index_b = &iw->set_index[1];
    /* the first solve's list, unless a PEG island at rest had its sets built again (reduced) */
    pp_status st = working_set_start(world, iw, *model, !(*model == PP_MODEL_PEG && iw->reduced));
    if (st != PP_OK) return st;
    double first = kinetic_energy(world, iw, iw->velocity);
    double free_motion = kinetic_energy(world, iw, NULL); /* nu* is still in the bodies */
    const double ceiling = first > free_motion ? first : free_motion;
    double bound = ceiling * (1.0 + 1e-9) + 1e-12;
    double best = HUGE_VAL, alpha = 1.0, last_residual = HUGE_VAL;
    const double n0 = (double)pp_island_lcp_unknowns(iw, world->config.friction_directions) +
                      RELIN_WORK_FLOOR;
    relin_work work = {RELIN_WORK_PATHS * n0 * n0 * n0,
                       pp_island_lcp_unknowns(iw, world->config.friction_directions),
                       iw->budget.work_used, 0, 0};
    memcpy(iw->nu_hat, iw->velocity, bytes);
    memcpy(iw->nu_kept, iw->velocity, bytes);
    pp_answer hat = *applied, kept = *applied; /* the answers behind nu_hat and nu_kept */
    relin_orbit orbit;
    int solved = 1, near_fixed_point = 0, converged = 0, cycled = 0, grew = 0;
    int from = 0;     /* the first iterate a cycle may repeat (since the last cap) */
    double cap = 1.0; /* the longest step allowed ("A cycle") */
    double last_violation = HUGE_VAL; /* of the last estimate evaluated, at its own pose */
    for (int it = 0; it < world->config.relinearize_iterations && st == PP_OK; ++it) {
        double violation = 0.0, residual = 0.0;
        st = relinearize(world, iw, h, model, index_a, index_b, &work, &violation, &residual,
                         &solved);
        iw->stats.relinearizations++;
        if (st != PP_OK) break;
        last_violation = violation;
        if (violation < best && kinetic_energy(world, iw, iw->nu_hat) <= bound) {
            best = violation;
            memcpy(iw->nu_kept, iw->nu_hat, bytes);
            kept = hat;
        }
        if (work.cut || work.approximate) { /* out of work, or no estimate: keep the best */
            iw->stats.relinearize_cut++;
            break;
        }
        if (!solved || iw->budget.exhausted) break; /* out of budget: keep the best */
        if (pp_lcp_clock() > iw->budget_half) { /* keep the rest of the budget for the LCP */
            iw->stats.relinearize_cut++;
            break;
        }
        if (fixed_point(iw, RELIN_CONVERGED)) {
            converged = 1;
            break;
        }
        near_fixed_point = fixed_point(iw, RELIN_NEAR);
        alpha = fmin(pp_relinearize_damping(alpha, residual, last_residual, &grew), cap);
        last_residual = residual;
        const int period =
            near_fixed_point ? 0 : orbit_closes(iw, &orbit, it, alpha, grew, *model, from);
        /* the cycle's estimates, iterates it - period + 1 .. it, each landed on by the step of
         * the iterate before it: is the one the longest step landed on the least violating? */
        double longest = 0.0, landed = 0.0;
        for (int q = 0; q < period; ++q) {
            const double a = orbit.alpha[(it - q - 1) % PP_RELIN_PERIOD_MAX];
            if (a > longest) {
                longest = a;
                landed = q ? orbit.violation[(it - q) % PP_RELIN_PERIOD_MAX] : violation;
            }
        }
        int least = period > 0 && carried_family(&world->scratch, &iw->list);
        for (int q = 0; q < period && least; ++q)
            least = landed <= (q ? orbit.violation[(it - q) % PP_RELIN_PERIOD_MAX] : violation);
        if (period && least && cap > RELIN_STEP_MIN) { /* "A cycle": steps held shorter */
            cap = fmax(RELIN_STEP_MIN, RELIN_CYCLE_STEP * longest);
            alpha = fmin(alpha, cap);
            from = it;
        } else if (period) {
            cycled = 1; /* every later iterate repeats one already seen: nu_kept */
            break;
        }
        orbit_record(iw, &orbit, it, alpha, grew, *model);
        orbit.violation[it % PP_RELIN_PERIOD_MAX] = violation;
        for (int j = 0; j < 6 * nb; ++j) iw->nu_hat[j] += alpha * (iw->velocity[j] - iw->nu_hat[j]);
        hat = alpha == 1.0 ? iw->answer : pp_answer_combine(hat, iw->answer);
    }
    if (st != PP_OK) return st;
    *converged_out = converged;
    if (converged)
        return energy_bounded_fixed_point(world, iw, h, ceiling, bound, best, last_violation, kept,
                                          applied);
    if (solved && !cycled) { /* the last estimate, at its own predicted pose */
        memcpy(iw->nu_hat, iw->velocity, bytes);
        double violation = 0.0;
        st = working_set_violation(world, iw, h, 0, 0, &violation);
        /* and the island's smooth pairs at their signed distance, where deeper than
         * SMOOTH_DEPTH_TIE: the iterates' own violations (`best`) read those pairs' contacts
         * built at their poses, which the working set does not carry; read without them, a
         * last estimate 2.7 mm inside an 8 cm capsule (a 2 cm hull at 50 m/s, h = 0.01) read 0
         * and was taken over the first solve's, 0 deep (docs/performance.md "Fast pairs: a
         * constraint per corner"). Depths within the tie are round-off (3e-16 m measured) and
         * do not refuse an estimate. */
        double with_smooth = 0.0;
        if (st == PP_OK && pp_island_has_smooth_pair(&world->scratch, iw))
            st = working_set_violation(world, iw, h, 0, 1, &with_smooth);
        if (with_smooth > SMOOTH_DEPTH_TIE) violation = fmax(violation, with_smooth);
        if (st != PP_OK) return st;
        const int within = kinetic_energy(world, iw, iw->velocity) <= bound;
        if (within && violation <= best) {
            *applied = iw->answer;
            return PP_OK;
        }
        /* above the bound and less violating than the kept estimate: judged as a fixed point
         * above it is (the segment point at the bound, the kept estimate, its impulses
         * extended: the first as feasible), near its fixed point or not; only near it may it
         * be kept above the bound. Away from it, where none of those is as feasible, the kept
         * estimate is applied, and where it ends deeper than post-stabilisation reaches the
         * sub-step is redone shorter (relinearize_over, world.c "A sub-step redone shorter"):
         * energy and non-penetration did not both hold at this length. Measured (the sphere
         * scan's PEG hull <- box 25 m/s seed 1, h = 0.01, step 1, a sub-step of 1.46 ms): every
         * iterate 1-5 % above the bound, the last 6.9e-8 m deep, the kept first solve 4 mm
         * deep; kept silently, the next sub-step (35 us) pushed out at psi/h, 114 m/s, and the
         * step ended at 30.9 J from 3.13 J. Redone shorter: no gain, 0 deep. */
        if (!within && violation < best) {
            const int over = iw->stats.relinearize_over;
            st = energy_bounded_fixed_point(world, iw, h, ceiling, bound, best, violation, kept,
                                            applied);
            if (st != PP_OK || near_fixed_point || iw->stats.relinearize_over == over) return st;
            /* not a fixed point: the kept estimate, below; counted where it is deep */
            if (!(best > RELIN_RETRY_DEPTH)) iw->stats.relinearize_over = over;
        }
    }
    memcpy(iw->velocity, iw->nu_kept, bytes);
    *applied = kept;
    iw->stats.relinearize_refused++;
    return PP_OK;
}

/*
 * Is the island at rest after its first solve? When no point of any body moves by more than
 * d = PP_REST_DISPLACEMENT over the step, h (|v| + |w| r) <= d (r the body's reach), the
 * predicted pose q^ is q^l to that distance, and the gap linearised at q^l misses the one at
 * q^ by at most its second-order term, (h |w| r)^2 / (2 r) <= d^2 / (2 r): 5e-17 m for a body
 * of 1 m, 5e-15 m for one of 1 cm. The re-linearisation would only move the step by that
 * much, so it is skipped. This matters for settled stacks and heaps: their redundant contacts
 * make the LCP's solution non-unique, round-off leaves them creeping at 1e-10 .. 1e-8 m/s,
 * and a fixed-point test at 1e-11 then never passes (measured: 20 iterations a step on 3-box
 * stacks of turned boxes, where one solve gives the same answer).
 */

static int at_rest(const pp_world *world, const pp_island_work *iw, double h)
{
    for (int l = 0; l < iw->dynamic_count; ++l)
        if (!pp_body_at_rest(world, iw->body[l], &iw->velocity[6 * l], &iw->velocity[6 * l + 3], h))
            return 0;
    return 1;
}

/* Stages 7-8 of one island whose list holds its constraints at q^l: the first solve, then
 * the re-linearisation (pp_config.relinearize_iterations), leaving nu^{l+1} of the island's
 * bodies in iw->velocity. PP_ERR_SOLVER from the first solve is not an error of the step: the
 * island keeps nu* (lcp_fallback 3, counted in the statistics). */
pp_status pp_island_time_step(pp_world *world, pp_island_work *iw, double h)
{
    int model = world->config.model;
    iw->dt = h;
    iw->projected = 0; /* (stage_project.c) */
    pp_status st = pp_island_load(world, iw);
    if (st == PP_OK) st = pp_island_joint_rows(world, iw);
    if (st != PP_OK || (iw->list.contact_count == 0 && iw->joint_row_count == 0)) return st;
    double seconds = world->config.lcp_budget_seconds;
    const long pivots = world->config.lcp_budget_pivots;
    iw->budget = pp_lcp_budget_start(seconds, pivots > 0 ? pivots : -1);
    iw->budget_half = seconds > 0.0 ? pp_lcp_clock() + 0.5 * seconds : HUGE_VAL;
    /* An island whose first solve bounded the recovery of a set deeper than
     * max_correcting_velocity h (a body left deep by another model or by the program) is not
     * re-linearised until it is shallower: the iteration's fixed point is the full constraint
     * psi(q^{l+1}) >= 0, which would undo the bound. */
    iw->recovering = 0;
    const int shared = iw->stats.load_shared;
    st = pp_island_solve(world, iw, h, &model, NULL);
    pp_answer applied = iw->answer; /* the first solve's (pp_island_stats.applied) */
    /* one order for the iterates (list_in_work_order) where the first solve's answer is the
     * compliance limit of the sticking solve or of load sharing, in an island of the sticking
     * solve's size */
    iw->one_order = iw->stats.load_shared > shared &&
                    pp_island_lcp_unknowns(iw, world->config.friction_directions) >=
                        pp_peg_sticking_size();
    if (st == PP_OK && world->config.relinearize_iterations > 0 && iw->list.contact_count > 0 &&
        !iw->recovering && !at_rest(world, iw, h)) {
        /* The iteration works on the sets of the rules themselves (world.c build_island,
         * pp_peg_params.reduce), from q^l on: an island that was at rest at the start of the
         * step, and is not after its first solve, has its q^l sets built again that way (a
         * moving island's were built so already). */
        iw->unreduced = 1;
        if (model == PP_MODEL_PEG && iw->reduced) {
            iw->list.contact_count = iw->list.set_count = 0;
            st = pp_build_constraints(world, iw, iw->pairs, iw->pair_count, PP_MODEL_PEG,
                                      &iw->list, NULL);
        }
        int converged = 0;
        if (st == PP_OK) st = relinearize_step(world, iw, h, &model, &applied, &converged);
        iw->unreduced = 0;
        /* an estimate kept short of the fixed point: its pose post-stabilised */
        if (st == PP_OK && !converged && world->config.post_stabilisation)
            st = pp_island_project(world, iw, h);
    }
    iw->stats.applied = applied;
    if (st == PP_ERR_SOLVER) {
        pp_log(PP_LOG_WARNING, "the time-stepping LCP of an island (%d unknowns) was not solved "
                               "(status %d); its contacts got no impulse", iw->stats.lcp_size,
               applied.status);
        return PP_OK;
    }
    return st;
}
