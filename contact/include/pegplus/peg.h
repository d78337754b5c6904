/*
 * pegplus/peg.h — the PEG contact model at the contact level (Williams, Lu, Trinkle 2016;
 * notes in docs/references.md): geometric tests, the configurations of a near polytope
 * pair, the U / I / X constraint sets they generate, and the PEG time-stepping problem
 * (Eqs 39–49) solved as an LCP with Lemke.
 *
 * Conventions (besides those of base.h, features.h and mlcp.h):
 *  - A and B are the two polytopes of a call, posed in the world (pp_polytope_view). Every
 *    contact a call returns is written in the frame A -> B: n points from A to B, p_a lies on
 *    A's feature, psi > 0 separated (docs/references.md):
 *      vertex–face  (vertex v of A, face f of B):  p_a = v, n = -eta_f, psi = eta_f . v - d_f
 *      face–vertex  (face f of A, vertex v of B):  the vertex–face contact of v against f
 *                   written B -> A, then flipped (pp_peg_contact_flip): n = eta_f,
 *                   p_a = v - psi eta_f
 *      edge–edge    n = ±(e_a x e_b)/|.|, the sign for which A's faces at e_a recede from n
 *                   (the sign APPL^ee picks, below); p_a = closest point of e_a to e_b
 *                   (also when built B -> A and flipped: pp_peg_edge_edge_flip);
 *                   psi = n . (p_b - p_a), the signed distance of the two LINES.
 *  - Applicability values are cosines (dimensionless, in [-1, 1]); >= 0 is the classical
 *    test (PEG Eq 28), >= eps_theta < 0 the relaxed one. Lengths in metres, angles in radians.
 *  - No allocation in the solve: workspaces are sized once (create) and reused.
 */
#ifndef PEGPLUS_PEG_H
#define PEGPLUS_PEG_H

#include "pegplus/base.h"
#include "pegplus/features.h"
#include "pegplus/lcp.h"
#include "pegplus/mlcp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Parameters (docs/references.md "PEG parameters"). The proximity distance eps is not
 * here: every call takes it, because the stepper's eps grows with the pair's speed.
 * ---------------------------------------------------------------------------------------- */
typedef struct pp_peg_params {
    double delta;          /* m, a vertex projecting inside a face is feasible down to
                              psi >= -delta; 0.0025 */
    double phi;            /* rad, a vertex outside the face's region is feasible while its
                              elevation asin(psi / D) >= -phi; 0.4 */
    double appl_vf;        /* vertex–face candidates: APPL^vf > appl_vf; -0.3 */
    double appl_vv;        /* vertex–vertex, faces at the other vertex: APPL^vf > appl_vv; -0.4 */
    double appl_ee;        /* edge–edge U constraints: APPL^ee > appl_ee; -0.4 */
    double appl_ve_edge;   /* vertex–edge, A's edges at the vertex in an X: APPL^ee > -0.1 */
    double appl_x;         /* X candidates that must be classically applicable: the
                              vertex–vertex X's faces and edge pairs, the extra faces of a
                              vertex–edge X: APPL >= appl_x; -1e-9 (round-off of 0). An X is
                              a max over candidate separating planes; a candidate whose body
                              dips below its plane (APPL < 0) satisfies the max while an
                              edge of length L crosses the other body |APPL| L deep (at
                              -1e-3: 0.1 mm in the pouring scene) */
    double coplanar_cos;   /* vertex–edge with eta_1 . eta_2 > coplanar_cos: the edge only
                              splits a plane, U on face f1 alone; 0.995 */
    int reduce;            /* 1: remove implied sets and duplicate rows of the pair before
                              returning them ("Implied sets and duplicate rows" below); 0:
                              every set of the rules, a set two configurations make (the
                              vertex set of a vertex near two edges) once. Default 1. Duplicate rows are found by
                              value (psi, n, p_a within 1e-12), so which sets are removed
                              depends on exact coincidences of the pose: the stepper builds
                              with 0 at the re-linearisation's predicted poses, where a
                              family of sets that changes with the iterate stops the
                              fixed point from converging. PP_PEG_REDUCE_CORNERS (2): also
                              Rule 3 below (the vertex sets of the two vertices of a kept
                              vertex–vertex X), which the stepper uses in resting islands
                              only (plugin/src/stage_constraints.c) */
} pp_peg_params;

#define PP_PEG_REDUCE_CORNERS 2

/* The defaults above. */
pp_peg_params pp_peg_params_default(void);

/* PP_OK, or PP_ERR_INVALID_ARGUMENT with a message (delta < 0, phi outside [0, pi/2],
 * an applicability threshold outside [-1, 1], coplanar_cos outside (0, 1], NaN). */
pp_status pp_peg_params_validate(const pp_peg_params *params);

/* ------------------------------------------------------------------------------------------
 * Geometric tests (PEG Sec. 4). Views are not validated (they come from pp_polytope_pose_view).
 * ---------------------------------------------------------------------------------------- */

/*
 * APPL^vf(v_a, f_b) = min over w in omega(v_a) of eta_b . (w - v_a)/|w - v_a|   (Eq 28 and
 * its relaxation): >= 0 when no edge of A at v_a points below the plane of f_b, i.e. v_a is
 * A's extreme point against f_b. A vertex with no neighbour gives 1.
 */
double pp_peg_applicability_vf(const pp_polytope_view *a, int vertex, const pp_polytope_view *b,
                               int face);

/*
 * APPL^ee(e_a, e_b) = max(min(d), min(-d)), d = [n.t_a1, n.t_a2, -n.t_b1, -n.t_b2],
 * n = (e_a x e_b)/|.| and t the unit vectors from each edge into its two faces (t1 =
 * eta_f1 x e, t2 = e x eta_f2). >= 0 when, for one sign of n, A's faces at e_a recede from n
 * and B's faces at e_b recede from -n: the edges' Gauss-map arcs cross, so e_a x e_b is a
 * separating-axis candidate. Parallel edges (|e_a x e_b| <= 1e-9 |e_a||e_b|) give -1: their
 * contact is carried by the vertex–edge / vertex–face contacts at their endpoints.
 * The relaxed values (< 0) are taken only where they measure a distance to the arcs: an
 * orientation counts only if n . (eta_a1 + eta_a2) > 0 and n . (eta_b1 + eta_b2) < 0 (n
 * leaves A and enters B across the edges' bisectors, the authors' sign rule checked from both
 * sides); an orientation outside that gets -1. (Around the antipode of a flat edge's arc
 * min(-n.t_1, -n.t_2) is -sin(theta/2): without the restriction a flat edge took a normal
 * pointing into its own faces, as "applicable" as a true contact.)
 * normal (optional) receives the unit n oriented from A to B (the orientation with the larger
 * value); zero for parallel edges.
 */
double pp_peg_applicability_ee(const pp_polytope_view *a, int edge_a, const pp_polytope_view *b,
                               int edge_b, double normal[3]);

/* The orientation vector O_e = e x (-(eta_f1 + eta_f2)) of edge e (not normalised): it is
 * perpendicular to e and to the inward bisector of the edge's faces and points toward f1's
 * side. The orientation of a direction u against e is u . O_e (docs/references.md). */
void pp_peg_edge_orientation(const pp_polytope_view *p, int edge, double out[3]);

/* Vertex–face feasibility (PEG Sec. 4, paper's angle phi and depth delta), generalised from the
 * authors' triangles to our convex polygon faces. */
typedef struct pp_peg_vf_test {
    int feasible;          /* 1 feasible, 0 not */
    int inside;            /* 1 when v projects inside the face polygon (tolerance 1e-9 m) */
    double psi;            /* eta_f . v - d_f, m */
    double distance;       /* D: distance from v to the face polygon, m */
    double outside;        /* in-plane distance from v's projection to the polygon, m (0 inside) */
} pp_peg_vf_test;

/*
 * Infeasible if |psi| > eps, D > eps or outside > eps. Otherwise feasible iff psi >= -delta
 * when v projects inside the face, and iff asin(psi / D) >= -phi when it does not (D = 0
 * counts as feasible). The authors' code measured `outside` from the nearest edge's line;
 * we use the distance to the polygon, which is the same inside an edge's slab and does not
 * under-estimate beyond a corner.
 */
pp_peg_vf_test pp_peg_feasibility_vf(const pp_polytope_view *a, int vertex,
                                     const pp_polytope_view *b, int face, double eps,
                                     const pp_peg_params *params);

/*
 * Closest points of segments [p0, p1] and [q0, q1] (Ericson, Real-Time Collision Detection
 * §5.1.9; robust for parallel and degenerate segments: for parallel ones the point of the
 * first segment is its parameter 0 clamped). Returns the distance; s, t (optional) the
 * parameters of c_p = p0 + s (p1 - p0) and c_q = q0 + t (q1 - q0), both in [0, 1].
 */
double pp_peg_segments_closest(const double p0[3], const double p1[3], const double q0[3],
                               const double q1[3], double c_p[3], double c_q[3], double *s,
                               double *t);

/* Edge–edge feasibility: segment distance <= eps (PEG Sec. 4). Fills the closest points p_a on
 * e_a and p_b on e_b and the distance (each optional). Returns 1 feasible, 0 not. */
int pp_peg_feasibility_ee(const pp_polytope_view *a, int edge_a, const pp_polytope_view *b,
                          int edge_b, double eps, double p_a[3], double p_b[3], double *distance);

/* Same-frame rule (docs/references.md): rewrite contact c, given as B -> A, as A -> B. Swaps the
 * bodies, shapes and features, p_a <- p_a + psi n, n <- -n, psi unchanged; vertex–face
 * becomes face–vertex and back, motion <- -motion (B relative to A); t1, mu, mu2 unchanged.
 * Applying it twice restores c (up to round-off in p_a). */
void pp_peg_contact_flip(pp_contact *c);

/*
 * The same feature pair at other poses: contact c (vertex–face, face–vertex or edge–edge,
 * written A -> B as above) re-evaluated on the views a, b: p_a, n and psi of c's features,
 * with the formulas of the table above; the kind, features, bodies, shapes and mu are kept.
 * An edge–edge normal keeps its side, n = ±(e_a x e_b)/|.| with n . n_old > 0 (the gap is a
 * continuous function of the poses; APPL^ee is not consulted again), and psi stays the
 * signed distance of the two lines. b NULL: c is a vertex of A against the half-space
 * normal . x <= offset (feature_b = -1, as pp_peg_constraints_polytope_plane writes it).
 * Used by the stepper's re-linearisation to keep a set it made at another pose (ST96 §3.6 and
 * §4: a constraint found is kept for the rest of the step). Returns 1, or 0 when c cannot be
 * re-evaluated (a point contact, a feature index out of range, edges parallel at the new
 * pose): c is then unchanged.
 */
int pp_peg_contact_update(const pp_polytope_view *a, const pp_polytope_view *b,
                          const double plane_normal[3], double plane_offset, pp_contact *c);

/* ------------------------------------------------------------------------------------------
 * Configurations of a near pair (PEG Sec. 5, Eqs 36–38, 3D)
 * ---------------------------------------------------------------------------------------- */
typedef enum pp_peg_config_kind {
    PP_PEG_VERTEX_FACE = 0,    /* feature_a vertex of A, feature_b face of B */
    PP_PEG_FACE_VERTEX = 1,    /* feature_a face of A, feature_b vertex of B */
    PP_PEG_EDGE_EDGE = 2,      /* edges; closest points interior (farther than eps from ends) */
    PP_PEG_VERTEX_EDGE = 3,    /* vertex of A near the interior of edge of B */
    PP_PEG_EDGE_VERTEX = 4,    /* edge of A, vertex of B near its interior */
    PP_PEG_VERTEX_VERTEX = 5,  /* vertex of A near vertex of B */
    PP_PEG_PLANE = 6,          /* vertex of A against a half-space (feature_b = -1) */
    PP_PEG_SEPARATING = 7      /* origin of the separating set of a fast or capped pair (the
                                  facets of B (-) A; pp_peg_constraints_polytopes_moving) */
} pp_peg_config_kind;

/* A short constant name ("vertex-face", ...). */
const char *pp_peg_config_kind_string(pp_peg_config_kind kind);

typedef struct pp_peg_config {
    pp_peg_config_kind kind;
    int feature_a, feature_b;
    double p_a[3], p_b[3];     /* nearest points of the two features, world */
    double distance;           /* |p_b - p_a| (vertex–face: psi, signed), m */
    double applicability;      /* APPL^vf (vertex–face, both ways), APPL^ee (edge–edge); else 0 */
} pp_peg_config;

/*
 * Classification of a near pair into configurations (PEG Sec. 5, 3D; the authors'
 * configuration_determine_constraints, made direct):
 *  1. vertex–vertex: |v_a - v_b| <= eps;
 *  2. vertex–edge / edge–vertex: a vertex within eps of an edge and farther than eps from
 *     both of the edge's endpoints (else 1. holds), so its closest point is interior;
 *  3. edge–edge: non-parallel edges within eps such that no endpoint of either is within eps
 *     of the other segment (else a configuration of 1./2. at that endpoint describes the
 *     pair, and its X sets carry the edge pair), with APPL^ee > appl_ee, and whose gap
 *     psi = n . (p_b - p_a) is feasible: psi >= -delta (a crossing in progress, as a vertex
 *     under a face), or deeper only if p_b is inside A or p_a inside B (the edges do cross);
 *     otherwise the edges pass each other outside a wedge and the negative number is no
 *     penetration (a pair 0.008 apart had such a gap of -0.03);
 *  4. vertex–face / face–vertex: every vertex not in 1.–2., against the faces of the other
 *     body that are feasible with APPL^vf > appl_vf; ONE face per vertex, the one with the
 *     largest psi (ties: larger applicability, then lower index). A point is outside a convex
 *     polytope iff it is outside some face plane, so max_f psi_f >= 0 is exactly "v not in B":
 *     the largest-psi face is the constraint that never blocks a free vertex (the authors'
 *     peg_heuristic took the smallest non-negative psi, which over-constrains a vertex near
 *     two faces).
 * Appends to out[*count ..] (never beyond capacity) in the order 1, 2 (A's vertices, then B's),
 * 3, 4. Returns PP_OK; PP_ERR_NO_MEMORY if capacity was too small (*needed = total);
 * PP_ERR_NULL_ARGUMENT; PP_ERR_INVALID_ARGUMENT (eps <= 0 or not finite, bad params).
 * params NULL = defaults. builder: scratch, as for pp_peg_constraints_polytopes (NULL: the
 * call allocates its own). pp_peg_constraints_polytopes turns a step-4 vertex into its
 * "vertex set" (every face within eps, see there), usually a U on this one face; it also
 * makes one for a vertex inside B that has no face here (none feasible: deeper than delta).
 */
typedef struct pp_peg_builder pp_peg_builder;

pp_status pp_peg_classify(pp_peg_builder *builder, const pp_polytope_view *a,
                          const pp_polytope_view *b, double eps, const pp_peg_params *params,
                          pp_peg_config *out, int capacity, int *count, int *needed);

/* ------------------------------------------------------------------------------------------
 * Constraint sets (PEG Sec. 3, Eqs 15–24; Eqs 39–47)
 * ---------------------------------------------------------------------------------------- */
typedef enum pp_peg_set_kind {
    PP_PEG_SET_U = 0,   /* one contact: 0 <= psi ⊥ p >= 0                         (Eqs 17–18) */
    PP_PEG_SET_I = 1,   /* one feature against several: max_s psi_s >= 0, one impulse on the
                           primary contact, |C_iota| = 1                  (Eqs 20, 24, 39–40) */
    PP_PEG_SET_X = 2    /* cross-contact max(psi_a, psi_b, ...) >= 0 in the robust "X-b" form:
                           an I set whose primary carries an impulse         (Eq 16; §2.3) */
} pp_peg_set_kind;

const char *pp_peg_set_kind_string(pp_peg_set_kind kind);

/*
 * A constraint set owns contacts[first .. first + count): contacts[first] is the primary
 * (iota, the only one with an impulse), the others are the secondaries (kappa), all in the
 * primary's frame. U sets have count 1, I and X sets count >= 2. The PEG step enforces, at
 * the end of the step and linearised (Eqs 20, 24 -> 39, 40),
 *     max_s psi_s >= 0,   p >= 0,   p (max_s psi_s) = 0.
 */
typedef struct pp_peg_set {
    pp_peg_set_kind kind;
    pp_peg_config_kind origin;  /* the configuration that produced it */
    int first, count;
} pp_peg_set;

/* Output of the constraint builders: caller-owned arrays, appended to. A call that runs out
 * of room writes only whole sets and reports the totals it needed. */
typedef struct pp_peg_output {
    pp_peg_set *sets;
    int set_capacity, set_count, sets_needed;
    pp_contact *contacts;
    double *applicability;      /* optional, one per contact: APPL^vf or APPL^ee (1 for a
                                   half-space contact) */
    int contact_capacity, contact_count, contacts_needed;
} pp_peg_output;

/* Scratch of the builders (configurations and per-feature flags); grows to the peak pair and
 * is reused. Passing NULL to a builder makes it allocate and free its own for the call. */
pp_status pp_peg_builder_create(pp_peg_builder **out);
void pp_peg_builder_destroy(pp_peg_builder *builder);

/*
 * The PEG constraint sets of polytopes A and B within eps (PEG Sec. 5 rules, 3D), appended to
 * `out`. Every contact has body/shape indices -1 and mu 0 (the caller fills them: all are
 * A -> B) and kind/feature fields as in features.h.
 *
 * The vertex set of a vertex v against the other body Q: "v is not inside Q", as
 *     max over the faces g of Q within eps of v (point-to-polygon distance) of psi(v, g) >= 0,
 * a U when one face is within eps, else an I. If v is outside Q within eps, a face through
 * Q's point nearest to v has psi >= 0 and is within eps, so this never blocks a separated
 * pair however small Q's features are; if v is inside Q every psi is <= 0. The set is made
 * when some face "qualifies" (feasible with the configuration's applicability threshold) or
 * v is inside Q (then the primary is the face with the largest psi: feasibility only picks the
 * face a vertex is pushed back through, and a vertex deeper than delta under its face must
 * still be pushed out), and the primary is taken among the qualifying faces. (The authors
 * kept only qualifying faces in the max: for separated random polytopes that blocked a
 * vertex outside Q through a filtered face.) Per configuration:
 *  - vertex–face, face–vertex (every vertex without a set from the rules below): the vertex
 *    set, qualifying = feasible with APPL^vf > appl_vf. Usually a U on one face.
 *  - edge–edge: U.
 *  - vertex–edge (v_a near edge e_b with faces f1, f2), PEG Eq 36:
 *      if eta_1 . eta_2 > coplanar_cos (the edge only splits a plane): the vertex set without
 *      the lower of f1, f2 (smaller psi; f2 on a tie), plus the X sets below (the faces are
 *      not exactly coplanar: an edge of A at v_a dipping below f1 by less than their angle
 *      passes under e_b and out through f2 while v_a stays on f1);
 *      else if neither f1 nor f2 is feasible: nothing (v_a then gets the vertex–face rule);
 *      else the vertex set (qualifying = feasible: I(C(v_a, f1), C(v_a, f2), ...)), plus
 *      for every edge e_a of A at v_a with APPL^ee(e_a, e_b) > appl_ve_edge an X-b set
 *      {C(v_a, f_i), C(e_a, e_b)} with f_i = f1 when u . O_{e_b} > 0 (u along e_a from v_a)
 *      and f2 when < 0, kept when f_i or the edge pair is feasible and the edges' lines meet
 *      within the segments (each extended by eps); it also holds the faces g other than
 *      f1, f2 within eps with APPL^vf(v_a, g) >= appl_x (A is then locally outside g's
 *      half-space, which contains B). Edge–vertex: the same with the roles swapped.
 *  - vertex–vertex (PEG Eqs 37–38): the vertex sets of v_a against B and of v_b against A
 *    (qualifying = feasible with APPL^vf > appl_vv), then ONE X-b set, the local
 *    separating-axis condition
 *        max( psi(v_a, f_b), psi(v_b, f_a), psi(e_a, e_b) ) >= 0
 *    over the faces within eps of v_a (of B) and of v_b (of A) and the non-parallel edge
 *    pairs at (v_a, v_b) whose lines meet within the segments, all with applicability
 *    >= appl_x. With classical applicability these are the faces of A (+) (-B) at the
 *    vertex v_a - v_b, so the condition is local non-penetration itself: it catches two
 *    edges crossing while neither vertex is inside the other body. It is omitted when it
 *    has no edge pair, or when it is implied by v_a's or v_b's set (all of that set's faces
 *    among the X's). Per face pair, as one reading of Eq 38 has it, the max can be negative
 *    for separated boxes, so we do not.
 *  - an edge–edge configuration has no endpoint near the other edge while the edge pairs of
 *    the X sets have one, so no edge pair gets both a U and an X.
 * Primary contact of every I/X set (|C_iota| = 1, the documented heuristic): among the
 * eligible contacts (qualifying faces; in X sets vertex–face contacts with a feasible face
 * and edge–edge contacts with feasible segments; all when none is eligible), the one with
 * the largest psi; ties within 1e-12 m go to the larger applicability (by more than 1e-9:
 * closer applicabilities tie, as those of coincident corners do up to round-off), then to
 * the earlier candidate. The largest gap is the supporting plane of max_s psi_s (its
 * subgradient): for a vertex resting on a face near a convex edge it is the face it rests
 * on, which the authors' "smallest psi above -0.005" rule gets wrong within 5 mm of the edge
 * (docs/references.md, "The primary matters").
 * Implied sets and duplicate rows are removed before returning (each rule's proof at
 * reduce_pair in peg_constraints.c; PEG Eqs 20, 24, 39–40). Two contacts give the
 * same LCP row when their psi, n and p_a agree (to 1e-12, relative to |p_a| + 1 m for lengths):
 *  - Rule 1: a secondary repeating a row of its set is dropped (max(g, g, ..) = max(g, ..)); a
 *    set left with one contact becomes a U. Of contacts with one row the representative is
 *    the vertex–face, then face–vertex, then edge–edge one, lowest features first.
 *  - Rule 2: a set S is dropped when another set T of the pair has all its rows among S's
 *    (T has fewer rows, or the same rows and comes first): max_T >= 0 implies max_S >= 0, and
 *    every solution without S is a solution with S (p_S = 0).
 * E.g. two boxes face on face with exactly coincident corners (an aligned column): per corner
 * the vertex sets of both corners and the X collapse to one U on the face pair, four per face
 * pair, the standard model's contacts.
 *  - Rule 3 (reduce = PP_PEG_REDUCE_CORNERS only): the vertex sets of v_a and v_b (every face
 *    within eps) are dropped under a kept X of the vertex–vertex configuration (v_a, v_b):
 *    each alternative of that X is, where its psi >= 0, a plane separating A from B (its
 *    applicability is classical), so max_X >= 0 implies neither vertex is inside the other
 *    body, i.e. both vertex sets hold. This is an implication of the sets as PEG defines them
 *    (position level), not of the LCP's linearised rows one by one: the X's rows sit at
 *    points up to eps from v_a with their own lever arms. Face on face with corners apart
 *    (1 mm joints of a brick wall, 4 mm gaps between the convex ball's cells) it keeps the X
 *    of each corner pair instead of the X and two vertex sets: the ball's 8 985 sets and
 *    27 921 contacts at its start pose become 3 552 and 10 617. Because it does not hold row
 *    by row, the stepper uses it only where the answer is a state of rest (a moving island's
 *    sets are built without it; measured: 6.3e-9 m of overlap in check_peg_walls when pairs
 *    at relative rest in a moving island used it too).
 * Measured (check_peg_constraints, random boxes and random 12-point hulls within eps):
 * separated pairs never have a set with max psi < 0, penetrating pairs always have one,
 * for boxes; for small-featured hulls about 1 in 30000 pairs fails either way.
 * At most PP_PEG_PAIR_MAX_SETS sets and PP_PEG_PAIR_MAX_CONTACTS contacts (the bound below).
 * Returns PP_OK, PP_ERR_NO_MEMORY (out too small: whole sets only, *_needed are the totals;
 * or the builder could not grow), PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT.
 */
pp_status pp_peg_constraints_polytopes(pp_peg_builder *builder, const pp_polytope_view *a,
                                       const pp_polytope_view *b, double eps,
                                       const pp_peg_params *params, pp_peg_output *out);

/*
 * The bound per pair. The rules above take every feature pair within eps; a pair moving
 * fast against its size (eps = proximity + motion bound of the step, 25 m/s at h = 0.01 gives
 * eps ~ 0.25 m against hulls of 2–8 cm) then had all its feature pairs near, every vertex
 * near every vertex: ~250 sets of ~5000 contacts for two 15-point hulls. Given `motion`, the
 * part of eps that bounds how far any point of either body can move relative to the other
 * in the step (the plugin's m_a + m_b; 0 <= motion < eps), the sets are limited to what
 * can meet in the step:
 *  - the rules above within eps; if that stays within the cap below, nothing else (every
 *    slow pair, and every pair the cap does not bind: the sets are exactly those of the rules);
 *  - a fast pair (motion > eps - motion) over the cap: sigma, the pair's separating-axis gap
 *    (the largest facet gap below: <= their distance, < 0 when they overlap), decides.
 *    sigma > motion: nothing can meet in the step (every point moves at most motion relative
 *    to the other body), no set. eps - motion < sigma <= motion (apart, approaching): the
 *    SEPARATING SET alone. sigma <= eps - motion (touching: resting, sliding, the step after
 *    an impact): the rules above again within eps_local = max(sigma, 0) + (eps - motion),
 *    the feature pairs within the base proximity of the closest ones as for a slow pair,
 *    plus the separating set;
 *    the separating set: one X set (a U if it has one contact), origin PP_PEG_SEPARATING,
 *    max >= 0 over the facets of the Minkowski difference B (-) A — each face f of B with A's
 *    lowest vertex over it (vertex–face), each face of A with B's lowest vertex
 *    (face–vertex), each edge pair with APPL^ee >= appl_x (edge–edge) — that SEPARATE the
 *    pair now (gap >= 0; when they overlap, the least overlapping ones). By the
 *    separating-axis theorem a facet gap >= 0 at the end of the step means no overlap
 *    there, and one of the facets separating now separating at the end means (for the
 *    linearised step's translation) none all along it: a 2 cm hull at 25 m/s does not pass
 *    through an 8 cm one within a step. Its primary is its largest gap (the best axis);
 *  - then the cap, for every pair: at most PP_PEG_PAIR_MAX_SETS sets and
 *    PP_PEG_PAIR_MAX_CONTACTS contacts (primaries + secondaries), the separating set
 *    included. When the local sets exceed it, whole sets are kept by increasing max psi
 *    (smallest gaps first: the sets nearest to being active) while they fit, and the
 *    separating set joins (if sigma <= motion), at most PP_PEG_SEPARATING_MAX_CONTACTS of
 *    its candidates, the largest gaps (a candidate left out of a max can only forbid more).
 * So a pair contributes at most PP_PEG_PAIR_MAX_SETS sets and PP_PEG_PAIR_MAX_CONTACTS
 * contacts: with k friction directions at most 256 + 32 (k + 2) = 448 LCP unknowns at k = 4
 * (pp_peg_lcp_size). What a cut leaves out: support at more points than the kept sets have
 * (a fast pair's first impact acts at the separating set's primary; at rest sigma ~ 0 and the
 * local sets are those of a slow pair), never the pair's non-overlap (the separating set).
 * Across the step's iterates: the stepper's re-linearisation (ST96 §3.6) keeps the sets of
 * every predicted pose of the step in its working set, and each iterate's LCP takes of a
 * pair's sets (built at its pose q^ and carried there) the same cap over their union: a
 * separating set built at q^, then the sets that carried a normal impulse in a solve of the
 * step, then those violated at q^, then those of the last iterate's list, each by increasing
 * max psi at q^, then the rest by increasing max psi (the plugin's relinearize.c pair_bound).
 * So every LCP of a step holds at most this bound per pair; the sets left out stay in the
 * working set, and the iteration's violation is read over all of them. (Before: up to
 * (iterations + 1) calls' worth; two hulls meeting at 25 m/s merged 57 sets, 537 contacts,
 * an LCP of 1 700 unknowns.)
 * Measured: two 15-point hulls 8 and 2 cm across, 1–5 cm apart, eps = 0.25 and 0.6 m:
 * 174–297 sets, 2671–5743 contacts (LCP 3541–7178 at k = 4) before; after, the separating
 * set alone, 9–21 contacts (check_peg_constraints). Shot at each other at 25 and 50 m/s
 * (check_peg_fast_hulls): at most 108 contacts in a step's LCP with the re-linearisation.
 * The slow pairs of the pouring scene and of the box column never reach the cap.
 */
#define PP_PEG_PAIR_MAX_SETS 32
#define PP_PEG_PAIR_MAX_CONTACTS 256
#define PP_PEG_SEPARATING_MAX_CONTACTS 96

/*
 * pp_peg_constraints_polytopes with the bound above for a pair that can move `motion` (m,
 * 0 <= motion < eps) relative to each other in the step; pp_peg_constraints_polytopes is this
 * with motion = 0 (every pair slow, the cap still applies). Returns as
 * pp_peg_constraints_polytopes, and PP_ERR_INVALID_ARGUMENT for motion outside [0, eps).
 * The *_needed totals are exact (the bound is applied in the builder's scratch first).
 */
pp_status pp_peg_constraints_polytopes_moving(pp_peg_builder *builder, const pp_polytope_view *a,
                                              const pp_polytope_view *b, double eps,
                                              double motion, const pp_peg_params *params,
                                              pp_peg_output *out);

/* A polytope against the half-space normal . x <= offset (B, static): a U vertex–face set
 * for every vertex with psi < eps (a half-space has no edges to cross, and a vertex deeper
 * than eps inside it is still penetrating it: its psi is the depth, however deep). */
pp_status pp_peg_constraints_polytope_plane(const pp_polytope_view *a, const double normal[3],
                                            double offset, double eps, pp_peg_output *out);

/*
 * The slack rows of one set at the position level (Eq 20 with Lemma 1.1/1.2): given the gaps
 * psi[0..count) with psi[0] the primary's, solve the unit lower-triangular complementarity
 * system  0 <= (psi_0 - psi_s) + sum_{r=1}^{s} c_r  ⊥  c_s >= 0  (s = 1..count-1) by forward
 * substitution into c[1..count) (c[0] = 0). Returns psi_0 + sum_r c_r, which equals
 * max_s psi_s. c may be NULL.
 */
double pp_peg_set_slacks(const double *psi, int count, double *c);

/* ------------------------------------------------------------------------------------------
 * The PEG time step (PEG Sec. 5, Eqs 39–49), as an LCP
 *
 * Unknowns per set j (n_s sets, K = sum_j (count_j - 1) slacks, k friction directions):
 * the primary impulse p_j, slacks c_j (count_j - 1, velocity units: c is rescaled by 1/h,
 * Eq 39), friction beta_j (k, on the primary, along its tangent directions d_l as in
 * mlcp.h) and sigma_j. With W = M^-1, G_p the primaries' normal columns, G_I the columns
 * G_iota - G_s (primary minus secondary, same frame, Eq 45 layout), G_f the friction columns:
 *
 *   rows p:      G_p^T nu + E_I2 c + psi_p/h >= 0  ⊥ p           (Eq 40; Eq 24 for U sets)
 *   rows c:      G_I^T nu + E_I1 c + psi_I/h >= 0  ⊥ c           (Eq 39)
 *   rows beta:   G_f^T nu + E sigma          >= 0  ⊥ beta        (ST96 Eq 26)
 *   rows sigma:  mu p - E^T beta             >= 0  ⊥ sigma
 *   nu = nu* + W (G_p p + G_f beta)                               (Eq 41: slacks carry no
 *                                                                  impulse)
 * E_I1 = blockdiag(tril(ones(k_j))) (Eq 43), E_I2 = blockdiag(ones(1, k_j)) (Eq 44),
 * psi_I = psi_iota - psi_s (Eq 45). Eliminating nu gives the LCP in
 * x = [p (n_s); c (K); beta (n_f k, set-major); sigma (n_f)] (Schur complement of Eq 48),
 * n_f the sets whose primary has mu > 0: a frictionless set has no beta, sigma (mu = 0 forces
 * beta = 0), so the LCP has n_s + K + n_f (k + 1) unknowns.
 * With only U sets this is exactly the LCP of pp_mlcp_solve on the same contacts.
 * The matrix is neither symmetric nor copositive in general (docs/references.md): Lemke may
 * fail; then the step returns PP_ERR_SOLVER and the caller falls back to the standard model
 * for the step.
 * ---------------------------------------------------------------------------------------- */
/*
 * One row of a joint (ODE's joints: docs/joints.md), in the form ODE's dxJoint::getInfo2
 * gives it: with lambda the row's force and p = h lambda its impulse over the step,
 *     J_a . nu_a+ + J_b . nu_b+ = c - cfm lambda,      lo <= lambda <= hi,
 * nu+ the end-of-step velocities. A row with lo = -inf and hi = +inf is an equality (ball,
 * hinge, slider ... rows); a row with one bound 0 and the other infinite is unilateral (a
 * limit stop); finite bounds are a motor's +-FMax. As an LCP row in impulses (w: the row's
 * residual, J nu+ - c + (cfm / h) p):
 *     equality:              w = 0, p free (eliminated before Lemke, see pp_peg_solve)
 *     p in [h lo, h hi]:     p = beta+ - beta-, with beta+ present when hi > 0 and beta-
 *                            when lo < 0, each with a sigma when its bound is finite:
 *        0 <=  w + sigma+  ⊥ beta+ >= 0,   0 <= h hi - beta+  ⊥ sigma+ >= 0
 *        0 <= -w + sigma-  ⊥ beta- >= 0,   0 <= -h lo - beta- ⊥ sigma- >= 0
 * (the Stewart–Trinkle friction split with a constant bound, docs/joints.md), so
 * p = h hi while w < 0, p = h lo while w > 0, and w = 0 in between; at lo = 0 a limit's
 * 0 <= w ⊥ p >= 0.
 */
typedef struct pp_joint_row {
    int body_a, body_b;   /* bodies of the problem; -1: the static world (ODE's b2 = 0) */
    double J[12];         /* [linear a, angular a, linear b, angular b]: world frame, about
                             each body's centre of mass */
    double c;             /* the velocity the row asks for (m/s or rad/s), ERP's part in it */
    double cfm;           /* ODE's constraint force mixing, >= 0 (1/N in ODE's units) */
    double lo, hi;        /* force bounds (N or N m): lo <= 0 <= hi, +-INFINITY for none */
} pp_joint_row;

/* LCP unknowns the joint rows add (equalities add none: they are eliminated). */
int pp_peg_joint_unknowns(int count, const pp_joint_row *rows);

typedef struct pp_peg_problem {
    pp_mlcp_problem base;       /* h, bodies (free velocities), contacts, friction_directions,
                                   compliance: exactly as for pp_mlcp_solve (the compliance
                                   goes on the p and beta diagonals, not on the slacks) */
    int set_count;
    const pp_peg_set *sets;     /* disjoint ranges of base.contacts; contacts in no set are
                                   ignored (impulse 0). A secondary given in the frame B -> A
                                   of its primary is flipped (pp_peg_contact_flip); a secondary
                                   of another body pair is an argument error. mu is the
                                   primary's. */
    int joint_row_count;        /* rows of joints in the same solve (0: none) */
    const pp_joint_row *joint_rows;
} pp_peg_problem;

typedef struct pp_peg_stats {
    int lcp_size;               /* n_s + K + n_f (k + 1): unknowns of the whole LCP */
    int directions;             /* k used */
    int u_sets, i_sets, x_sets; /* by kind */
    int slacks;                 /* K */
    pp_lcp_result lcp;          /* the LCP solves over all islands: status (SOLVED, or the
                                   first failure), pivots, refactorisations and attempts
                                   summed, epsilon (> 0 if any island was regularised),
                                   residuals, scale and complementarity the largest, min_z and
                                   min_w the smallest; warm_started when no island pivoted and
                                   one was accepted from the basis */
    int islands;                /* independent blocks solved (see pp_peg_solve); 0 without sets */
    int largest_island;         /* unknowns of the largest block */
    int islands_failed;         /* blocks the LCP solver failed on */
    int failed_island;          /* the first of them, -1 if none; islands are numbered in
                                   the order of their smallest set index */
    int joint_equalities;       /* joint rows eliminated as equalities */
    int joint_unknowns;         /* LCP unknowns of the other joint rows (in lcp_size) */
    int joint_regularised;      /* islands whose equalities were redundant (singular with their
                                   CFM): solved with eps max A_ii added, eps <= 1e-6 */
    int load_shared;            /* islands whose answer load sharing replaced: redundant
                                   supports, the limit of a vanishing compliance applied
                                   instead of Lemke's solution (see pp_peg_solve) */
    int load_kept;              /* redundant islands whose limit was not found as an LCP
                                   solution: Lemke's answer kept */
    int recovered_sets;         /* sets deeper than max_correcting_velocity h whose gap was
                                   raised to that bound (pp_mlcp_problem) */
    int screened_sets;          /* constraint screening (islands of 257 unknowns or more):
                                   sets left out of the LCP solved and verified by their rows
                                   at the answer's velocities (zero impulse); largest_island
                                   counts the unknowns solved */
    int screened_unknowns;      /* their unknowns (lcp_size counts them) */
    int screen_rounds;          /* screening's LCP rounds (each adds the violated sets) */
    int screen_whole;           /* islands where screening did not settle: solved whole */
    int declined;               /* islands handed back unsolved (pp_peg_workspace_decline):
                                   their z is 0 and the call returns PP_ERR_SOLVER */
    int declined_largest;       /* unknowns of the largest of them (the size the rule read),
                                   0 when none */
} pp_peg_stats;

typedef struct pp_peg_workspace pp_peg_workspace;

/* LCP size for set_count sets with slack_count slacks and k directions, all frictional (an
 * upper bound: frictionless sets need k + 1 unknowns fewer each). A set whose primary has
 * rolling friction (PP_CONTACT_ROLLING, pegplus/mlcp.h) adds 3 per rolling axis, at most
 * PP_CONTACT_ROLLING_UNKNOWNS_MAX, after all the sets' sigma. */
int pp_peg_lcp_size(int set_count, int slack_count, int directions);

/* Workspace for up to max_bodies bodies, max_contacts contacts (primaries + secondaries),
 * max_sets sets and max_directions directions (0 = default). PP_ERR_INVALID_ARGUMENT,
 * PP_ERR_NO_MEMORY. Its memory is linear in these bounds; the dense matrix and the Lemke
 * workspace (about 5 n^2 doubles) are sized by the largest island a solve meets, when it
 * meets it (never by the whole LCP: a world of separate stacks needs one stack's). */
pp_status pp_peg_workspace_create(int max_bodies, int max_contacts, int max_sets,
                                  int max_directions, pp_peg_workspace **out);
void pp_peg_workspace_destroy(pp_peg_workspace *workspace);
/* Forgets what the workspace kept from earlier solves (the sticking solve's last answers, the
 * interior-point solve's start), so that the solves after it depend only on their own
 * arguments and the caller's basis: the stepper calls it before each island's step, so an
 * island's answers do not depend on which island a worker solved before it (threads). */
void pp_peg_workspace_forget(pp_peg_workspace *workspace);
/* The start of the sticking solves' interior-point stage (lcp_sticking.c) in the next
 * pp_peg_solve calls: z indexed like the whole LCP (stats.lcp_size doubles; 0 where nothing is
 * known), e.g. each set's answer of the island's last step gathered by constraint identity
 * (pp_peg_answer_records), so that the start is the island's own, whichever worker solves
 * it; NULL: none (cold). Read during those calls: the caller keeps z alive or resets it. */
void pp_peg_workspace_start(pp_peg_workspace *workspace, const double *z);
/* A candidate start of the bounded fallback (pegplus/lcp.h fallback_start) in the next
 * pp_peg_solve calls, indexed like the whole LCP as pp_peg_workspace_start's z: given to an
 * island's solve where the sticking solve kept no best round, e.g. the island's previous answer
 * of the step gathered by constraint identity for a re-linearisation iterate, whose sticking
 * solve is skipped after a refusal. The fallback keeps it only where it is usable and better
 * than its other starts; NULL: none. Read during those calls, as pp_peg_workspace_start's. */
void pp_peg_workspace_fallback_start(pp_peg_workspace *workspace, const double *z);
/* Lets the next pp_peg_solve calls decline an island (on = 1; 0, the default: never): one
 * with PEG I/X sets (K > 0), no joint rows, no warm start (options' warm_start off, or no
 * basis), not answered by constraint screening, of at least 8 000 unknowns: an impact's
 * island, whose PEG LCP no path of this library has answered within the clock
 * (peg_mlcp.c, "Declined islands"); and such an island with a warm start in which no set's
 * p is basic while some set closes at the free motion (w_p < 0 beyond the LCP's
 * acceptance), declined before screening's first round: a first contact, the landing of
 * bodies that fell with their sets in proximity (peg_mlcp.c, "A first contact"). Such an
 * island is not solved: its z is 0, the call
 * returns PP_ERR_SOLVER with stats.declined counting it, and the caller answers it another
 * way (the stepper: the standard model's constraints, pp_step_stats.peg_fallback). */
void pp_peg_workspace_decline(pp_peg_workspace *workspace, int on);
/* The whole LCP's answer z of the last pp_peg_solve (stats.lcp_size doubles; 0 in a failed
 * island), valid until the next call. */
const double *pp_peg_last_z(const pp_peg_workspace *workspace);
/* The fewest unknowns of an island's LCP that the sticking solve takes (1 000): a smaller
 * island never reads the start, so the stepper keeps no answers for it. */
int pp_peg_sticking_size(void);

/*
 * Build and solve one PEG step. solution is a pp_mlcp_solution indexed by CONTACT (so the
 * stepper uses one output for either model): the primary of set j gets p_j and its friction
 * (beta, sigma, friction vector); secondaries and contacts in no set get 0. slack (optional,
 * one per contact) receives c of each secondary's row (m/s; 0 for primaries and U contacts).
 *  - Islands: sets that share a body with W_b != 0 (not static, not kinematic) are coupled;
 *    the LCP is block diagonal over the connected components ("islands") of that relation,
 *    and each block, a principal submatrix of the whole LCP, is assembled and solved on its
 *    own (pp_lcp_solve, with its regularisation fallback island by island). The solution
 *    solves the whole LCP; the work is O(sum of block sizes^2) per pivot instead of O(n^2),
 *    and a solver failure stays in its island.
 *  - Redundant supports (a face on a face, a plate on a grid of balls): where an island's
 *    active contacts are linearly dependent its LCP has many solutions, and the one applied
 *    is the limit of a uniform compliance eps on the impulse rows (p, beta) as eps -> 0, not
 *    Lemke's vertex (which loads three supports): the load is shared (lcp_load_sharing.c
 *    has the derivation; stats->load_shared counts the islands it changed). Skipped when
 *    base.compliance > 0 (the LCP is then regularised already) and in islands with I or X
 *    sets, joint rows or rolling friction (Lemke's answer is kept there). The basis returned is Lemke's (a nonsingular one,
 *    for the next warm start) in bit 0 of each byte; bit 1 holds the compliant LCP's basis
 *    where the limit was sought, the start of the next solve's search, and bit 2 (islands of
 *    257 unknowns or more) that the search ran from this basis and left Lemke's answer (not
 *    run again while Lemke accepts that basis as it stands); bits 3-5 (islands of 1 000
 *    unknowns or more) the sticking solve's state (contact/src/lcp_sticking.c: its active set
 *    in bit 0 and bit 3 on every unknown of an island it answered, bit 4 on the sigma of a
 *    contact it let slide, bit 5 where it is not to run next step), bit 6 constraint
 *    screening's (contact/src/peg_screen.c: an island its capped round gave to the sticking
 *    solve); keep the bytes whole: Lemke reads bit 0 only.
 *  - options: LCP options (NULL = pp_lcp_options_default()). Its arrays indexed by an LCP
 *    (covering, fallback_start, contact_block, set_slack) must be NULL (else
 *    PP_ERR_INVALID_ARGUMENT): each island is solved as an LCP of its own, whose contact
 *    blocks pp_peg_solve forms itself; a fallback candidate in the whole LCP's order is
 *    pp_peg_workspace_fallback_start's.
 *  - basis: optional, at least stats->lcp_size bytes (pp_peg_lcp_size + 9 per rolling set
 *    bounds it) indexed
 *    like the whole LCP, the warm-start basis of the previous step on entry (when
 *    options->warm_start) and the final basis on exit (all zeros in a failed island). Keep
 *    the set order stable for the warm start to help.
 * Returns PP_OK; PP_ERR_SOLVER when an island was not solved (Lemke and its regularisation
 * failed: that island's impulses 0, its bodies keep nu*; the other islands are solved;
 * stats->lcp and stats->islands_failed say why and how many; the stepper falls back to the
 * standard model); argument errors (nothing written). Never writes NaN.
 */
pp_status pp_peg_solve(pp_peg_workspace *workspace, const pp_peg_problem *problem,
                       const pp_lcp_options *options, unsigned char *basis,
                       pp_mlcp_solution *solution, double *slack, pp_peg_stats *stats);

/*
 * The unknowns of each set in the LCP pp_peg_solve builds for (sets, contacts, k), as one
 * record per set: [p, c_1 .. c_{count-1}, beta_1 .. beta_k, sigma] (pp_peg_record_size bytes;
 * beta and sigma are 0 for a frictionless set, which has no such unknowns). With `to_basis`
 * 0 the entries of `basis` (indexed like the whole LCP, stats.lcp_size bytes) are gathered
 * into records (the sets' records one after the other, in set order); with 1 the records are
 * scattered into basis. This is how a caller keeps an LCP basis by constraint identity across
 * steps whose set lists differ (the warm start).
 */
int pp_peg_record_size(const pp_peg_set *set, int directions);
void pp_peg_basis_records(int set_count, const pp_peg_set *sets, const pp_contact *contacts,
                          int directions, unsigned char *basis, unsigned char *records,
                          int to_basis);
/* The same for the answer z (indexed like the whole LCP) and records of doubles: the start the
 * stepper keeps for the sticking solve (pp_peg_workspace_start). */
void pp_peg_answer_records(int set_count, const pp_peg_set *sets, const pp_contact *contacts,
                           int directions, double *z, double *records, int to_z);

/* The whole LCP of the last pp_peg_solve (column-major M, q, n = stats.lcp_size; valid until
 * the next call, solve or destroy), e.g. for pp_lcp_instance_save of a failing step. M is
 * assembled by this call, O(n^2), into the workspace's scratch. */
/* The rolling and spinning friction torque impulse of set j in the last pp_peg_solve
 * (PP_CONTACT_ROLLING, pegplus/mlcp.h): sum_a (g_a+ - g_a-) a, on body B of its primary
 * (N m s; its opposite on A); 0 for a set without rolling friction or a failed island. */
void pp_peg_rolling_impulse(const pp_peg_workspace *workspace, int set, double torque[3]);

void pp_peg_last_lcp(const pp_peg_workspace *workspace, int *n, const double **M,
                     const double **q);

#ifdef __cplusplus
}
#endif
#endif /* PEGPLUS_PEG_H */
