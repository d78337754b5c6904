/*
 * PEG constraint sets (PEG Eqs 15–24, 39–47 and the 3D rules of Sec. 5; pegplus/peg.h).
 *
 * From the configurations of a near pair (peg_geometry.c) to U, I and X-b sets:
 *   U(C)                 0 <= psi ⊥ p >= 0                                     (Eqs 17–18)
 *   I(C_iota, C_kappa)   max_s psi_s >= 0, p on the primary only, |C_iota| = 1  (Eqs 20, 24)
 *   X(C_a, C_b, ...)     max(psi_a, psi_b, ...) >= 0 written as an I set whose primary
 *                        carries an impulse: the authors' heuristic "X-b" form  (Eq 16, §2.3)
 * Each set is written as a contiguous run of contacts, primary first, all A -> B (the
 * same-frame rule of §2.4 is applied as the contacts are made: contacts computed from B's
 * side are flipped with pp_peg_contact_flip).
 */
#include "peg_internal.h"

#include "geometry_internal.h"

#include <math.h>
#include <string.h>

static const double TIE_TOLERANCE = 1e-12; /* m: psi ties in the primary choice */
/* Applicability ties in the primary choice (APPL is a cosine: dimensionless). Candidates at
 * coincident corners of a face-on-face pair (a vertex of A on B's face and the vertex of B
 * beside it on A's face, and the edge pairs there) tie in psi, and their APPL^vf are both
 * the elevation of an edge lying in the common plane: 0 up to the round-off of the poses,
 * +-1e-16..1e-13. Compared exactly, that round-off picked the primary, so it changed from
 * step to step, and with it the set's identity (warm_start.c keys a set by its primary):
 * the gripper's and a settled heap's islands started cold at almost every step (README
 * "Where the time goes"). Below this the candidates tie and the earlier one is taken; it
 * is far below any applicability that means something (an angle of 1e-9 rad). */
static const double APPL_TIE_TOLERANCE = 1e-9;

const char *pp_peg_set_kind_string(pp_peg_set_kind kind)
{
    switch (kind) {
    case PP_PEG_SET_U: return "U";
    case PP_PEG_SET_I: return "I";
    case PP_PEG_SET_X: return "X";
    }
    return "unknown";
}

/* Eq 20 by forward substitution. Row s of the unit lower-triangular system reads
 * w_s = (psi_0 - psi_s) + sum_{r<s} c_r + c_s >= 0 ⊥ c_s >= 0, so with the partial maximum
 * m_{s-1} = psi_0 + sum_{r<s} c_r (= max(psi_0..psi_{s-1}) by induction) the unique solution
 * is c_s = max(psi_s - m_{s-1}, 0) (Lemma 1.2), and m_s = m_{s-1} + c_s = max(m_{s-1}, psi_s)
 * (Lemma 1.1). */
double pp_peg_set_slacks(const double *psi, int count, double *c)
{
    PP_ASSERT(psi && count >= 1, "pp_peg_set_slacks: psi and count >= 1");
    double m = psi[0];
    if (c) c[0] = 0.0;
    for (int s = 1; s < count; ++s) {
        double cs = fmax(psi[s] - m, 0.0);
        if (c) c[s] = cs;
        m += cs;
    }
    return m;
}

/* ---- Building one set --------------------------------------------------------------------- */

typedef struct ctx {
    pp_peg_builder *b;
    pp_peg_output *out;
    const pp_peg_params *params;
    double eps;
    int n;       /* candidates of the set being built */
    int full;    /* out ran out of room: count what would be needed, write nothing more */
    pp_status error;
    int memo_faces;         /* entries per side of b->vf_memo */
    int memo_vertex[2];     /* the vertex each side's entries belong to (-1: none) */
    unsigned memo_stamp[2]; /* and its stamp */
    int first_set;          /* out->set_count when the call began */
    int x_pair[2];          /* (v_a, v_b) of the vertex–vertex X being emitted, else -1 */
    const double *spheres[2]; /* per side: the spheres of the other polytope's faces */
} ctx;

/*
 * The vertex–face tests of one vertex, computed once per local_sets call. A vertex of a
 * vertex–vertex configuration is tested against the other body's faces by its vertex set
 * and again by the X (add_vertex_faces_to_x), and every candidate's APPL^vf was computed
 * once more when it was added; a vertex–edge configuration tests f1 and f2 before its
 * vertex set tests them again. pp_peg_feasibility_vf and pp_peg_applicability_vf are
 * functions of (p, v, q, g, eps, params) alone, all fixed within the call, so the memo
 * returns the very values a recomputation would: the sets are the same to the last bit.
 * Side flip (0: v of A against B's faces, 1: v of B against A's) keeps the entries of one
 * vertex; moving to another vertex gives the side a new stamp from the builder's clock,
 * which never repeats a stamp (all entries are cleared when it wraps), so no entry of an
 * earlier vertex, call or pair is ever read.
 */
static pp_peg_vf_memo *memo_entry(ctx *c, int flip, int v, int g)
{
    if (c->memo_vertex[flip] != v) {
        c->memo_vertex[flip] = v;
        if (++c->b->vf_clock == 0) {
            memset(c->b->vf_memo, 0, (size_t)c->b->vf_memo_capacity * sizeof *c->b->vf_memo);
            c->b->vf_clock = 1;
            c->memo_stamp[!flip] = 0; /* the other side's entries are gone too */
            c->memo_vertex[!flip] = -1;
        }
        c->memo_stamp[flip] = c->b->vf_clock;
    }
    return &c->b->vf_memo[flip * c->memo_faces + g];
}

/* pp_peg_feasibility_vf(p, v, q, g, eps, params) through the memo; flip = 1 when p is B. Its
 * callers read only feasible, psi and distance <= eps: pp_peg_feasibility_vf_near, which
 * skips the distances to a face's edges where its sphere is farther than eps (the same
 * decisions; the vertex sets' O(V F) tests measured 24 % of a step of ODE's falling convex
 * ball, docs/performance.md "PEG's construction on the falling convex ball"). */
static pp_peg_vf_test vf_test(ctx *c, const pp_polytope_view *p, int v, const pp_polytope_view *q,
                              int g, int flip)
{
    pp_peg_vf_memo *e = memo_entry(c, flip, v, g);
    if (e->test_stamp != c->memo_stamp[flip]) {
        e->test = pp_peg_feasibility_vf_near(p, v, q, g, c->eps, c->params,
                                             c->spheres[flip] + 4 * g);
        e->test_stamp = c->memo_stamp[flip];
    }
    return e->test;
}

/* pp_peg_applicability_vf(p, v, q, g) through the memo. */
static double vf_appl(ctx *c, const pp_polytope_view *p, int v, const pp_polytope_view *q, int g,
                      int flip)
{
    pp_peg_vf_memo *e = memo_entry(c, flip, v, g);
    if (e->appl_stamp != c->memo_stamp[flip]) {
        e->appl = pp_peg_applicability_vf(p, v, q, g);
        e->appl_stamp = c->memo_stamp[flip];
    }
    return e->appl;
}

static int reserve_one(ctx *c)
{
    if (c->error != PP_OK) return 0;
    pp_status st = pp_peg_builder_reserve_candidates(c->b, c->n + 1);
    if (st != PP_OK) {
        c->error = st;
        return 0;
    }
    return 1;
}

/* Candidate: vertex v of p against face f of q, flipped to A -> B when p is B. Eligible as a
 * primary when the face is feasible. */
static void add_vertex_face(ctx *c, const pp_polytope_view *p, int v, const pp_polytope_view *q,
                            int f, int flip, int feasible)
{
    if (!reserve_one(c)) return;
    pp_contact *k = &c->b->candidates[c->n];
    pp_peg_vertex_face_contact(p, v, q, f, k);
    if (flip) pp_peg_contact_flip(k);
    c->b->candidate_appl[c->n] = vf_appl(c, p, v, q, f, flip);
    c->b->candidate_eligible[c->n] = (unsigned char)(feasible != 0);
    c->n++;
}

/* Candidate: edge e_p of p against e_q of q. Returns 0 for parallel edges (nothing added). */
static int add_edge_edge(ctx *c, const pp_polytope_view *p, int ep, const pp_polytope_view *q,
                         int eq, int flip)
{
    if (!reserve_one(c)) return 0;
    pp_contact *k = &c->b->candidates[c->n];
    double appl;
    int feasible;
    if (!pp_peg_edge_edge_contact(p, ep, q, eq, c->eps, k, &appl, &feasible)) return 0;
    if (flip) pp_peg_edge_edge_flip(p, q, k);
    c->b->candidate_appl[c->n] = appl;
    c->b->candidate_eligible[c->n] = (unsigned char)feasible;
    c->n++;
    return 1;
}

/* The same candidate when its APPL^ee and normal n are known (pp_peg_applicability_ee, not
 * parallel): the X sets test the applicability before they need the closest points. */
static void add_edge_edge_along(ctx *c, const pp_polytope_view *p, int ep,
                                const pp_polytope_view *q, int eq, int flip, double appl,
                                const double n[3])
{
    if (!reserve_one(c)) return;
    pp_contact *k = &c->b->candidates[c->n];
    int feasible = pp_peg_edge_edge_contact_along(p, ep, q, eq, c->eps, n, k);
    if (flip) pp_peg_edge_edge_flip(p, q, k);
    c->b->candidate_appl[c->n] = appl;
    c->b->candidate_eligible[c->n] = (unsigned char)feasible;
    c->n++;
}

/* The normal of APPL^ee: 0 where the edges are parallel (pp_peg_edge_edge_contact's test). */
static int nonparallel(const double n[3])
{
    return !(n[0] == 0.0 && n[1] == 0.0 && n[2] == 0.0);
}

/* APPL^ee of e_p against e_q and its normal; 0 for parallel edges. */
static int edge_edge_applicability(const pp_polytope_view *p, int ep, const pp_polytope_view *q,
                                   int eq, double *appl, double n[3])
{
    *appl = pp_peg_applicability_ee(p, ep, q, eq, n);
    return nonparallel(n);
}

/* The documented primary heuristic (peg.h): largest psi among the eligible candidates (all,
 * if none is), ties to the larger applicability (by more than APPL_TIE_TOLERANCE), then to
 * the earlier candidate. */
static int choose_primary(const ctx *c)
{
    int any_eligible = 0;
    for (int i = 0; i < c->n; ++i) any_eligible |= c->b->candidate_eligible[i];
    int best = -1;
    for (int i = 0; i < c->n; ++i) {
        if (any_eligible && !c->b->candidate_eligible[i]) continue;
        if (best < 0) {
            best = i;
            continue;
        }
        double psi = c->b->candidates[i].psi, best_psi = c->b->candidates[best].psi;
        if (psi > best_psi + TIE_TOLERANCE ||
            (fabs(psi - best_psi) <= TIE_TOLERANCE &&
             c->b->candidate_appl[i] > c->b->candidate_appl[best] + APPL_TIE_TOLERANCE))
            best = i;
    }
    return best;
}

/* Write the candidates as one set (primary first, the others in their order) and reset. */
static void emit_set(ctx *c, pp_peg_set_kind kind, pp_peg_config_kind origin)
{
    if (c->error != PP_OK || c->n == 0) {
        c->n = 0;
        return;
    }
    pp_peg_output *o = c->out;
    o->sets_needed++;
    o->contacts_needed += c->n;
    if (!c->full && (o->set_count >= o->set_capacity ||
                     o->contact_count + c->n > o->contact_capacity))
        c->full = 1;
    if (!c->full) {
        int primary = c->n > 1 ? choose_primary(c) : 0;
        pp_peg_set *s = &o->sets[o->set_count++];
        s->kind = kind;
        s->origin = origin;
        s->first = o->contact_count;
        s->count = c->n;
        for (int pass = 0; pass < 2; ++pass)
            for (int i = 0; i < c->n; ++i) {
                if ((pass == 0) != (i == primary)) continue;
                if (o->applicability) o->applicability[o->contact_count] = c->b->candidate_appl[i];
                o->contacts[o->contact_count++] = c->b->candidates[i];
            }
        /* The set's vertex pair, for reduce_pair's Rule 3. */
        int k = 2 * (o->set_count - 1 - c->first_set);
        pp_status st = pp_peg_grow((void **)&c->b->set_vertices, &c->b->set_vertex_capacity,
                                   k + 2, sizeof *c->b->set_vertices);
        if (st != PP_OK) c->error = st;
        else {
            c->b->set_vertices[k] = c->x_pair[0];
            c->b->set_vertices[k + 1] = c->x_pair[1];
        }
    }
    c->n = 0;
}

/* ---- The configurations ------------------------------------------------------------------- */

/*
 * The set of a vertex v of p against q: "v is not inside q", max over the faces g of q
 * within eps of v (distance D_g from v to the face polygon) of psi(v, g) >= 0.
 *
 * Why these faces. If v is outside q with dist(v, q) <= eps, let c be q's point nearest to v;
 * v - c lies in q's normal cone at c, spanned by the normals of the faces through c, so some
 * face g through c has eta_g . (v - c) = psi_g(v) >= 0 (if v - c = sum l_g eta_g, l >= 0, then
 * sum l_g psi_g = |v - c|^2 > 0); and every face through c has D_g = |v - c| <= eps. So the
 * max over the faces within eps is >= 0 for every vertex outside q: the set never blocks a
 * separated pair, however small q's features are against eps. If v is inside q every psi is
 * <= 0, so the set still sees it. The configuration's own faces (f1, f2 of the edge near v;
 * the faces at the vertex near v) are within eps by construction, so they are candidates.
 *
 * Only the primary is restricted (feasible, APPL^vf > appl_min): the set is made when some
 * face qualifies, and the primary is the qualifying face with the largest psi. The authors'
 * code kept only qualifying faces in the max (and a U for a single one): that blocked
 * separated random polytope pairs in check_peg_constraints.
 *
 * A vertex inside q (psi_g < 0 for every face g of q) gets its set whether or not a face
 * qualifies, the primary then being the face with the largest psi (the nearest plane: the
 * least push that takes v out). Feasibility only picks the face a vertex crossing the
 * boundary is pushed back through; it is no reason to drop the condition. Without this a
 * vertex deeper than delta below the face it projects into (infeasible: psi < -delta) had
 * no set at all: nothing pushed it out and it sank further each step, and in the
 * re-linearisation (ST96 §3.6) a predicted pose with such a vertex was a fixed point of
 * the iteration (no set at q^, so nothing to undo the prediction).
 * exclude (or -1): a face left out (the lower of two near-coplanar faces). Returns 1 when a
 * set was made.
 */
static int vertex_set(ctx *c, const pp_polytope_view *p, int v, const pp_polytope_view *q,
                      int flip, double appl_min, int exclude, pp_peg_config_kind origin)
{
    int qualifying = 0, inside = 1;
    for (int g = 0; g < q->face_count; ++g) {
        double psi = pp_v3_dot(q->face_normals + 3 * g, p->vertices + 3 * v) - q->face_offsets[g];
        if (psi >= 0.0) inside = 0;
        if (g == exclude) continue;
        if (fabs(psi) > c->eps) continue; /* D_g >= |psi_g| */
        pp_peg_vf_test t = vf_test(c, p, v, q, g, flip);
        if (t.distance > c->eps) continue;
        int ok = t.feasible && vf_appl(c, p, v, q, g, flip) > appl_min;
        qualifying += ok;
        add_vertex_face(c, p, v, q, g, flip, ok);
    }
    if (c->n == 0 || (qualifying == 0 && !inside)) {
        c->n = 0;
        return 0;
    }
    emit_set(c, c->n >= 2 ? PP_PEG_SET_I : PP_PEG_SET_U, origin);
    return 1;
}

/* Faces g of q other than f1, f2 within eps of v with APPL^vf(v, g) >= appl_x, as
 * secondaries of an X. Where q's features are small against eps a third face can bound q
 * near v; if v is outside g's plane and p's edges at v all rise from it (applicable), p is
 * locally outside g's half-space, which contains q: no edge of p at v can cross into q. */
static void add_other_faces(ctx *c, const pp_polytope_view *p, int v, const pp_polytope_view *q,
                            int flip, int f1, int f2)
{
    for (int g = 0; g < q->face_count; ++g) {
        if (g == f1 || g == f2) continue;
        double psi = pp_v3_dot(q->face_normals + 3 * g, p->vertices + 3 * v) - q->face_offsets[g];
        if (fabs(psi) > c->eps) continue;
        pp_peg_vf_test t = vf_test(c, p, v, q, g, flip);
        if (t.distance <= c->eps && vf_appl(c, p, v, q, g, flip) >= c->params->appl_x)
            add_vertex_face(c, p, v, q, g, flip, 0);
    }
}

/*
 * Vertex v of p near the interior of edge e of q (PEG Eq 36; the authors'
 * conf_make_vertex_edge). flip = 1 when p is B. Returns 1 when a set about v was made.
 *
 * Near a convex edge, v is outside q iff it is outside f1's or f2's plane: the I set
 * max(psi_1, psi_2) >= 0 (with any other face within eps, see vertex_set). The X sets cover
 * an edge e_p of p at v crossing e: e_p heads to f1's side of e when u . O_e > 0 (O_e points
 * toward f1's side), and then "v above f1 or e_p beyond e along their common normal" is
 * max(psi(v, f1), psi(e_p, e)) >= 0 (with any face other than f1, f2 within eps of v).
 */
static int vertex_edge(ctx *c, const pp_polytope_view *p, int v, const pp_polytope_view *q, int e,
                       int flip)
{
    const int *edge = q->edges + 4 * e;
    const int f1 = edge[2], f2 = edge[3];
    const pp_peg_config_kind origin = flip ? PP_PEG_EDGE_VERTEX : PP_PEG_VERTEX_EDGE;
    pp_peg_vf_test t1 = vf_test(c, p, v, q, f1, flip);
    pp_peg_vf_test t2 = vf_test(c, p, v, q, f2, flip);

    if (pp_v3_dot(q->face_normals + 3 * f1, q->face_normals + 3 * f2) > c->params->coplanar_cos) {
        /* The edge only splits a plane (authors' special case): for v the two faces are one,
         * and the lower of them (smaller psi) is left out of v's set; f1 on a tie. Only v's
         * set: the X sets below are still made. "An edge of p cannot cross e without v
         * crossing the common plane" holds for exactly coplanar faces alone; our faces are
         * merged facets, so f1 and f2 meet at a dihedral angle theta > 0, and an edge e_p of
         * p at v that dips below f1's plane (relaxed applicability admits it) by less than
         * theta enters q through f1 and leaves it through f2, passing under e while v stays
         * on f1: a crossing that only the gap psi(e_p, e) of the X sees. */
        if (!vertex_set(c, p, v, q, flip, -2.0, t2.psi > t1.psi ? f1 : f2, origin)) return 0;
    } else {
        /* The authors required a feasible f1 or f2 (no applicability test on them). */
        if (!t1.feasible && !t2.feasible) return 0;
        if (!vertex_set(c, p, v, q, flip, -2.0, -1, origin)) return 0;
    }

    double O[3];
    pp_peg_edge_orientation(q, e, O);
    int m = pp_peg_edges_at_vertex(c->b, p, v, 0);
    if (m < 0) {
        c->error = PP_ERR_NO_MEMORY;
        return 1;
    }
    for (int k = 0; k < m; ++k) {
        int ep = c->b->indices[k];
        const int *pe = p->edges + 4 * ep;
        int other = pe[0] == v ? pe[1] : pe[0];
        double u[3];
        pp_v3_sub(u, p->vertices + 3 * other, p->vertices + 3 * v);
        double orientation = pp_v3_dot(u, O);
        if (orientation == 0.0) continue;
        int fi = orientation > 0.0 ? f1 : f2, fi_feasible = orientation > 0.0 ? t1.feasible
                                                                             : t2.feasible;
        /* No X when the edges are parallel, not applicable, e_p heads away from e's line (the
         * lines meet behind v or beyond e's ends: psi_ee is then no gap of the segments and
         * the X would block a separated pair), or neither contact is feasible. The tests
         * that need no candidate come first. */
        double appl_ee, n_ee[3];
        if (!edge_edge_applicability(p, ep, q, e, &appl_ee, n_ee) ||
            !(appl_ee > c->params->appl_ve_edge) || !pp_peg_edge_lines_meet(p, ep, q, e, c->eps))
            continue;
        add_vertex_face(c, p, v, q, fi, flip, fi_feasible);
        add_other_faces(c, p, v, q, flip, f1, f2);
        add_edge_edge_along(c, p, ep, q, e, flip, appl_ee, n_ee);
        if (c->error != PP_OK || (!fi_feasible && !c->b->candidate_eligible[c->n - 1])) {
            c->n = 0;
            continue;
        }
        emit_set(c, PP_PEG_SET_X, origin);
    }
    return 1;
}

/* Faces of q within eps of vertex v of p with APPL^vf >= appl_x, as X candidates. Returns
 * 1 when every face within eps passed (the vertex's own set is then among the X's). */
static int add_vertex_faces_to_x(ctx *c, const pp_polytope_view *p, int v,
                                 const pp_polytope_view *q, int flip)
{
    int all = 1;
    for (int g = 0; g < q->face_count; ++g) {
        double psi = pp_v3_dot(q->face_normals + 3 * g, p->vertices + 3 * v) - q->face_offsets[g];
        if (fabs(psi) > c->eps) continue;
        pp_peg_vf_test t = vf_test(c, p, v, q, g, flip);
        if (t.distance > c->eps) continue;
        if (vf_appl(c, p, v, q, g, flip) >= c->params->appl_x)
            add_vertex_face(c, p, v, q, g, flip, t.feasible);
        else
            all = 0;
    }
    return all;
}

/*
 * Vertex v_a of A near vertex v_b of B (PEG Eqs 37–38): the set of v_a against B and of v_b
 * against A (vertex_set, primaries among the feasible faces with APPL^vf > appl_vv), and the
 * local separating-axis X (see peg.h) over the faces within eps of either vertex and the
 * edge pairs at (v_a, v_b) with APPL >= appl_x whose lines meet within the segments.
 * covered[0..1] report whether a set about v_a / v_b was made.
 */
static void vertex_vertex(ctx *c, const pp_polytope_view *a, int va, const pp_polytope_view *b,
                          int vb, int covered[2])
{
    const pp_peg_params *prm = c->params;
    covered[0] = vertex_set(c, a, va, b, 0, prm->appl_vv, -1, PP_PEG_VERTEX_VERTEX);
    covered[1] = vertex_set(c, b, vb, a, 1, prm->appl_vv, -1, PP_PEG_VERTEX_VERTEX);

    int nea = pp_peg_edges_at_vertex(c->b, a, va, 0);
    int neb = nea < 0 ? -1 : pp_peg_edges_at_vertex(c->b, b, vb, nea);
    if (neb < 0) {
        c->error = PP_ERR_NO_MEMORY;
        return;
    }
    /* b->indices does not move below: the candidate arrays are separate. */
    const int *ea = c->b->indices, *eb = ea + nea;
    int implied_a = add_vertex_faces_to_x(c, a, va, b, 0) && covered[0];
    int implied_b = add_vertex_faces_to_x(c, b, vb, a, 1) && covered[1];
    int edge_pairs = 0;
    for (int i = 0; i < nea; ++i)
        for (int j = 0; j < neb; ++j) {
            double appl, n[3];
            if (!edge_edge_applicability(a, ea[i], b, eb[j], &appl, n) || !(appl >= prm->appl_x) ||
                !pp_peg_edge_lines_meet(a, ea[i], b, eb[j], c->eps))
                continue;
            add_edge_edge_along(c, a, ea[i], b, eb[j], 0, appl, n);
            ++edge_pairs;
        }
    /* Implied by v_a's (or v_b's) set when that set's faces are all among the X's. */
    if (edge_pairs == 0 || implied_a || implied_b) {
        c->n = 0;
        return;
    }
    c->x_pair[0] = va;
    c->x_pair[1] = vb;
    emit_set(c, PP_PEG_SET_X, PP_PEG_VERTEX_VERTEX);
    c->x_pair[0] = c->x_pair[1] = -1;
}

/* ---- Implied sets and duplicate rows ------------------------------------------------------ */

static const double ROW_TOLERANCE = 1e-12; /* unit normals; m per metre of |p_a|_inf + 1 */

/*
 * Do contacts c and d give the same rows of the PEG LCP? A contact enters the LCP only
 * through its gap psi, its normal n and its points p_a, p_b = p_a + psi n (the Jacobian
 * column [-n; -(r_a x n)], [n; r_b x n] and the friction directions built from n, Eqs 48 and
 * PEG Eq 6), and every contact of one call is between the same two bodies in the same frame
 * A -> B. So equal (psi, n, p_a) is an equal row: the same linear function
 * g(nu) = psi/h + G^T nu of the velocities, whatever features produced it (a vertex–face
 * contact at a vertex sitting on the other body's vertex, the face–vertex contact of that
 * vertex against the face on the other side, and the edge–edge contacts of the edges meeting
 * there are one row).
 */
int pp_peg_same_row(const pp_contact *c, const pp_contact *d)
{
    /* The normals first: they need no scale and tell most rows apart. (A conjunction of
     * tests without side effects: the order changes no answer.) The views are finite
     * (pp_peg_check_pair), so the larger of two magnitudes is fmax's. */
    for (int k = 0; k < 3; ++k)
        if (fabs(c->n[k] - d->n[k]) > ROW_TOLERANCE) return 0;
    double m01 = fabs(c->p_a[0]) >= fabs(c->p_a[1]) ? fabs(c->p_a[0]) : fabs(c->p_a[1]);
    double scale = 1.0 + (m01 >= fabs(c->p_a[2]) ? m01 : fabs(c->p_a[2]));
    if (fabs(c->psi - d->psi) > ROW_TOLERANCE * scale) return 0;
    for (int k = 0; k < 3; ++k)
        if (fabs(c->p_a[k] - d->p_a[k]) > ROW_TOLERANCE * scale) return 0;
    return 1;
}

/* Which of two contacts with the same row represents it: vertex–face before face–vertex
 * before edge–edge, then the lower features. Any of them gives the same LCP; the choice only
 * has to be the same at every pose, so that a set rebuilt at the re-linearisation's predicted
 * pose is recognised as the same set (its contacts' features) whichever duplicate had the
 * larger psi by round-off there. */
static int canonical_before(const pp_contact *c, const pp_contact *d)
{
    if (c->kind != d->kind) return c->kind < d->kind;
    if (c->feature_a != d->feature_a) return c->feature_a < d->feature_a;
    return c->feature_b < d->feature_b;
}

/* The vertex whose whole vertex set (vertex_set without an excluded face: every face of the
 * other body within eps) set s is: v >= 0 for vertex v of A (every contact vertex–face with
 * feature_a = v), -2 - v for vertex v of B (every contact face–vertex with feature_b = v),
 * -1 for any other set. Vertex sets come from the vertex–vertex and vertex–face rules; the
 * vertex–edge rule may leave out a near-coplanar face, so its sets are not taken. */
static int full_vertex_set(const pp_peg_set *set, const pp_contact *contacts)
{
    if (set->kind == PP_PEG_SET_X ||
        !(set->origin == PP_PEG_VERTEX_VERTEX || set->origin == PP_PEG_VERTEX_FACE ||
          set->origin == PP_PEG_FACE_VERTEX))
        return -1;
    const pp_contact *c = contacts + set->first;
    int of_a = c[0].kind == PP_CONTACT_VERTEX_FACE;
    if (!of_a && c[0].kind != PP_CONTACT_FACE_VERTEX) return -1;
    int v = of_a ? c[0].feature_a : c[0].feature_b;
    for (int k = 1; k < set->count; ++k)
        if (c[k].kind != c[0].kind || (of_a ? c[k].feature_a : c[k].feature_b) != v) return -1;
    return of_a ? v : -2 - v;
}

/* Is the sorted id list t (nt) a subset of the sorted id list s (ns)? */
static int rows_subset(const int *t, int nt, const int *s, int ns)
{
    int i = 0;
    for (int j = 0; j < nt; ++j) {
        while (i < ns && s[i] < t[j]) ++i;
        if (i == ns || s[i] != t[j]) return 0;
        ++i;
    }
    return 1;
}

/* Row ids (peg_internal.h): only contacts whose p_a[0] is within ROW_TOLERANCE (1 + |p_a|_inf)
 * of c_i's can have its row, so the representatives so far are kept sorted by p_a[0] (by_x,
 * reps of them) and only those within `window` of c_i's are compared: the window, twice the
 * largest tolerance of the contacts, holds every contact pp_peg_same_row can accept (the
 * rounding of x +- window is far below it), and among those it accepts the first is taken,
 * as a scan over all earlier representatives takes it. The scan was O(nc^2) a pair: ~10 % of
 * a step of ODE's falling convex ball (docs/performance.md "PEG's construction on the falling
 * convex ball"). */
void pp_peg_row_ids(const pp_contact *c, int nc, int *id, int *by_x)
{
    double largest = 0.0;
    for (int i = 0; i < nc; ++i)
        for (int k = 0; k < 3; ++k) largest = fmax(largest, fabs(c[i].p_a[k]));
    const double window = 2.0 * ROW_TOLERANCE * (1.0 + largest);
    int reps = 0;
    for (int i = 0; i < nc; ++i) {
        const double x = c[i].p_a[0];
        int lo = 0, hi = reps; /* the first representative with p_a[0] >= x - window */
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (c[by_x[mid]].p_a[0] < x - window) lo = mid + 1;
            else hi = mid;
        }
        id[i] = i;
        for (int r = lo; r < reps && c[by_x[r]].p_a[0] <= x + window; ++r) {
            const int j = by_x[r];
            if (j < id[i] && pp_peg_same_row(&c[j], &c[i])) id[i] = j;
        }
        if (id[i] != i) continue;
        int at = reps++; /* a new representative: into by_x at its place */
        while (at > 0 && c[by_x[at - 1]].p_a[0] > x) {
            by_x[at] = by_x[at - 1];
            --at;
        }
        by_x[at] = i;
    }
}

/*
 * Remove, before solving, what the other sets of the pair already say (peg.h "Implied sets
 * and duplicate rows"). Works on out->sets[first_set ..] and out->contacts[first_contact ..]
 * in place. Every set j enforces, linearised, max_{s in j} g_s(nu) >= 0 with its impulse on
 * its primary (Eqs 20, 24 -> 39, 40), g_s = psi_s/h + G_s^T nu.
 *
 * Rule 1 (duplicate rows in a set). A secondary whose row equals the primary's or an earlier
 * secondary's (same_row) is dropped: max(g, g, ...) = max(g, ...), so the set's constraint is
 * unchanged, while the duplicate's slack row (Eq 39: w = (psi_iota - psi_s)/h +
 * (G_iota - G_s)^T nu + (E_I1 c)_s) would repeat an earlier row of E_I1's triangle with
 * c_s = 0 and w_s = 0 at every solution, a degenerate pivot for Lemke. A set left with one
 * contact is the U set of that contact (Eqs 17–18; Eq 24 with no slack).
 *
 * Rule 2 (implied sets). Set S is dropped when another set T of the pair has its rows among
 * S's (rows(T) ⊆ rows(S)), and T has fewer rows or equal rows and comes first. Then for every
 * nu, max_T g >= 0 implies max_S g >= max_T g >= 0: wherever T's rows hold, S's p row
 * (Eq 40) is >= 0, the slacks of S solve Eq 39 by forward substitution (pp_peg_set_slacks,
 * Lemma 1.1/1.2) and p_S = 0 is complementary to it, while S's friction rows hold with
 * beta_S = 0 and sigma_S large enough. So every solution of the LCP without S, extended by
 * p_S = 0, beta_S = 0 and those c_S, sigma_S, solves the LCP with S: removing S loses no
 * solution's motion, it only removes the duplicate impulse columns that made the LCP
 * degenerate (docs/references.md: sets sharing a primary give equal G_iota columns). Strict
 * subsets chain to a minimal set, and among equal row sets the first is kept, so every
 * dropped set is implied by a KEPT one.
 * Examples. Two boxes face on face with coincident corners (an exactly aligned column): at a
 * corner v_a = v_b the vertex–vertex configuration makes the vertex set of v_a against B's
 * faces at v_b, I(top_B, side_B, side'_B), the vertex set of v_b against A's faces,
 * I(bottom_A, side_A, side'_A), and the X set of the local separating-axis condition
 * (Eqs 37–38), max(psi(v_a, top_B), psi(v_b, bottom_A), psi(e_a, e_b) ...). C(v_a, top_B),
 * C(v_b, bottom_A) flipped (same-frame rule, §2.4) and the edge–edge contacts of the corner's
 * horizontal edges all have psi = 0, n = -eta_top and p_a = the corner: one row r. Rule 1
 * makes the X set U(r); Rule 2 then drops both I sets (r is among their rows). The face pair
 * keeps four U sets, U(r) at each corner: the standard model's contacts of the face pair
 * (§1, Eqs 8–9), which with the other sets' removal also leaves their degenerate ties out.
 * Also: a vertex near several features of the other body gets its vertex set from each
 * configuration (equal rows: Rule 2 keeps one); an X that contains all of a vertex set's
 * faces (already skipped when built, vertex_vertex) is implied by it.
 *
 * Rule 3 (vertex sets under a kept vertex–vertex X). The vertex set V(v_a) of a vertex v_a of
 * A, max over EVERY face g of B within eps of v_a of psi(v_a, g) >= 0 (vertex_set with no
 * face left out), is dropped when a kept X of a vertex–vertex configuration (v_a, v_b),
 * |v_a - v_b| <= eps, has not been dropped; the same for V(v_b) of B's vertex. The X's
 * alternatives all have classical applicability (>= appl_x, the round-off of 0; peg.h), and
 * by PEG's definitions each one with psi >= 0 is a plane that separates A from B:
 *  (i)   psi(v_a, f) >= 0, f a face of B, APPL^vf(v_a, f) >= 0: A's edges at v_a do not dip
 *        below f's plane, so A, inside its tangent cone at v_a, lies in the closed outer
 *        half-space of f, B in the inner one. (f is within eps of v_a: it is a row of
 *        V(v_a) itself.)
 *  (ii)  psi(v_b, f) >= 0, f a face of A: the same with the roles swapped (a row of V(v_b)).
 *  (iii) psi(e_a, e_b) >= 0 with APPL^ee >= 0 for its normal n: A's faces at e_a recede from
 *        n and B's at e_b from -n, so A lies in n . x <= n . p_a and B in n . x >= n . p_b,
 *        and n . p_b - n . p_a = psi >= 0.
 * So max_X >= 0 means no point of A is inside B: v_a is not in B's interior, and
 * dist(v_a, B) <= |v_a - v_b| <= eps; the face g through B's point c nearest to v_a with
 * eta_g . (v_a - c) >= 0 (vertex_set's comment) is within eps of v_a, a row of V(v_a), with
 * psi(v_a, g) >= 0. Hence max_X >= 0 implies max_V(v_a) >= 0 and max_V(v_b) >= 0, as
 * position-level statements at any pose where the X's alternatives keep their classical
 * applicability; dropping V(v_a) keeps the sets' non-overlap. Linearised (Eqs 39–40), the
 * X's rows sit at points within eps of v_a and carry their own lever arms, so the implication
 * holds for the LCP's rows up to the relative rotation over the step times that distance;
 * the re-linearisation (ST96 §3.6) evaluates the kept X at the end pose, where it is again
 * the position-level statement. The rule depends on the configuration alone (which X is
 * made), not on coincidences of values, so a set family rebuilt at a nearby pose drops the
 * same vertex sets. A vertex set from the vertex–edge rule may leave out a near-coplanar face
 * and is not dropped (the face through c might be the one left out).
 * E.g. two boxes face on face with corners 1 mm apart, or the 4 mm gaps between the convex
 * ball's cells: at every corner pair the X alone, not V(v_a), V(v_b) and the X.
 * Rule 3 runs only with reduce = PP_PEG_REDUCE_CORNERS (`rule3`), which the stepper gives
 * resting islands alone (stage_constraints.c): because it is not a row-by-row implication it
 * must not shape a moving answer (check_peg_walls measured 6.3e-9 m of overlap when it did).
 * Returns PP_OK or PP_ERR_NO_MEMORY (nothing changed).
 */
static pp_status reduce_pair(pp_peg_builder *b, pp_peg_output *out, int first_set,
                             int first_contact, int rule3)
{
    const int ns = out->set_count - first_set, nc = out->contact_count - first_contact;
    if (ns <= 0) return PP_OK;
    /* rows: id[nc] | set row lists (<= nc) | list offsets[ns + 1] | dropped[ns] | by_x[nc] */
    pp_status st = pp_peg_builder_reserve_rows(b, 3 * nc + 2 * ns + 1);
    if (st != PP_OK) return st;
    int *id = b->rows, *list = id + nc, *off = list + nc, *dropped = off + ns + 1;
    int *by_x = dropped + ns;
    pp_contact *c = out->contacts + first_contact;
    pp_peg_set *sets = out->sets + first_set;

    pp_peg_row_ids(c, nc, id, by_x);
    /* Each set's distinct rows, sorted (insertion: sets are short). */
    off[0] = 0;
    for (int s = 0; s < ns; ++s) {
        int *l = list + off[s], n = 0;
        for (int k = 0; k < sets[s].count; ++k) {
            int r = id[sets[s].first - first_contact + k], pos = n;
            int seen = 0;
            for (int m = 0; m < n && !seen; ++m) seen = l[m] == r;
            if (seen) continue;
            while (pos > 0 && l[pos - 1] > r) {
                l[pos] = l[pos - 1];
                --pos;
            }
            l[pos] = r;
            ++n;
        }
        off[s + 1] = off[s] + n;
    }
    /* Rule 2 */
    for (int s = 0; s < ns; ++s) {
        dropped[s] = 0;
        int nS = off[s + 1] - off[s];
        for (int t = 0; t < ns && !dropped[s]; ++t) {
            int nT = off[t + 1] - off[t];
            if (t == s || nT > nS || (nT == nS && t > s)) continue;
            dropped[s] = rows_subset(list + off[t], nT, list + off[s], nS);
        }
    }
    /* Rule 3 */
    const int *pair = b->set_vertices;
    for (int t = 0; t < ns && rule3; ++t) {
        int v = full_vertex_set(&sets[t], out->contacts);
        if (dropped[t] || v == -1) continue;
        for (int s = 0; s < ns && !dropped[t]; ++s)
            dropped[t] = s != t && !dropped[s] && pair[2 * s] >= 0 &&
                         (v >= 0 ? pair[2 * s] == v : pair[2 * s + 1] == -2 - v);
    }
    /* Compact in place (kept sets, and in them rows not seen before: Rule 1). Writes never
     * pass reads: set s's contacts move to w <= their index, in increasing order. */
    int ws = 0, wc = 0;
    for (int s = 0; s < ns; ++s) {
        if (dropped[s]) continue;
        int from = sets[s].first - first_contact, count = sets[s].count, kept = 0;
        for (int k = 0; k < count; ++k) {
            int r = id[from + k], seen = 0, pick = from + k;
            for (int m = 0; m < k && !seen; ++m) seen = id[from + m] == r;
            if (seen) continue;
            for (int m = k + 1; m < count; ++m)
                if (id[from + m] == r && canonical_before(&c[from + m], &c[pick])) pick = from + m;
            pp_contact keep = c[pick];
            double appl = out->applicability ? out->applicability[first_contact + pick] : 0.0;
            if (pick != from + k) { /* the duplicate moves to pick: it is read no more as row r */
                c[pick] = c[from + k];
                if (out->applicability)
                    out->applicability[first_contact + pick] =
                        out->applicability[first_contact + from + k];
            }
            c[wc + kept] = keep;
            if (out->applicability) out->applicability[first_contact + wc + kept] = appl;
            ++kept;
        }
        pp_peg_set set = sets[s];
        set.first = first_contact + wc;
        set.count = kept;
        if (kept == 1) set.kind = PP_PEG_SET_U;
        sets[ws++] = set;
        wc += kept;
    }
    out->set_count = out->sets_needed = first_set + ws;
    out->contact_count = out->contacts_needed = first_contact + wc;
    return PP_OK;
}

/* Do contacts c and d constrain the same features (the same kind and feature pair, in the
 * call's one frame A -> B)? */
static int same_features(const pp_contact *c, const pp_contact *d)
{
    return c->kind == d->kind && c->feature_a == d->feature_a && c->feature_b == d->feature_b;
}

/* Does set t (contacts ct) hold the same features as set s (contacts cs)? A set's contacts
 * are distinct feature pairs, so equal counts and each of s's among t's suffice. */
static int same_set_features(const pp_contact *cs, int ns, const pp_contact *ct, int nt)
{
    if (ns != nt) return 0;
    for (int i = 0; i < ns; ++i) {
        int found = 0;
        for (int j = 0; j < nt && !found; ++j) found = same_features(&cs[i], &ct[j]);
        if (!found) return 0;
    }
    return 1;
}

/*
 * A set made again by another configuration of the pair is dropped (the first made is kept).
 * A vertex near several features of the other body gets its vertex set from each of their
 * configurations (the vertex–edge one of every edge it is near, the vertex–vertex one of every
 * vertex within eps). The copies are one constraint, max over the same faces g of
 * psi(v, g) >= 0, at every pose, but two impulses in the LCP: two equal columns whose split of
 * the set's impulse is arbitrary, and two normals where the configurations' applicability
 * thresholds (appl_vv; none for the vertex–edge rule) pick different primaries (Eq 41 puts a
 * set's impulse on its primary). With reduce they are equal rows (Rule 2); the stepper builds
 * without it in moving islands, and the re-linearisation's working set (relinearize.c) knows a
 * set by its features, one record for both copies: the copy it matched to the record followed
 * the record's primary rules at the predicted pose, the other did not. Measured (PEG pouring,
 * h = 0.01, frictionless seed 122, step 321): a hull's vertex near two edges of another got its
 * vertex set (three faces) twice; at the predicted poses where both copies were built, the
 * unmatched one kept the primary of the step's start, face 11, reading 6.5 mm below face 10,
 * and took the pair's impulse (1.14 N s along face 11's normal, at the other iterates 1.11 N s
 * along an edge pair's 13 degrees away): the iteration cycled with period 3 (residual
 * 1.3 m/s) and the step kept an estimate 1.2e-5 m deep, 3.0e-9 m^3 of overlap. Frictionless
 * seed 170 (2.1e-11 m^3) was the same; mu = 0.5 seed 40 (2.5e-11 m^3: a face-on-face vertex
 * set twice, its copies' impulses split differently at every iterate) ends 1.8e-11 m deep.
 * Identity of features, not of values: the same copies are dropped at every pose. Works on
 * out->sets[first_set ..] and out->contacts[first_contact ..] in place.
 */
static void drop_repeated_sets(pp_peg_output *out, int first_set, int first_contact)
{
    int ws = first_set, wc = first_contact;
    for (int s = first_set; s < out->set_count; ++s) {
        const pp_peg_set set = out->sets[s];
        const pp_contact *c = out->contacts + set.first;
        int repeated = 0;
        for (int t = first_set; t < ws && !repeated; ++t)
            repeated = same_set_features(c, set.count, out->contacts + out->sets[t].first,
                                         out->sets[t].count);
        if (repeated) continue;
        /* kept: its contacts move down to wc (never past a read: wc <= set.first) */
        for (int k = 0; k < set.count; ++k) {
            out->contacts[wc + k] = out->contacts[set.first + k];
            if (out->applicability)
                out->applicability[wc + k] = out->applicability[set.first + k];
        }
        out->sets[ws] = set;
        out->sets[ws].first = wc;
        ++ws;
        wc += set.count;
    }
    out->set_count = out->sets_needed = ws;
    out->contact_count = out->contacts_needed = wc;
}

/* ---- Entry points ------------------------------------------------------------------------- */

static pp_status finish(const ctx *c)
{
    if (c->error != PP_OK) return c->error;
    return c->full ? PP_ERR_NO_MEMORY : PP_OK;
}

static int output_ok(const char *who, const pp_peg_output *out)
{
    if (!out || (!out->sets && out->set_capacity > 0) ||
        (!out->contacts && out->contact_capacity > 0)) {
        pp_log(PP_LOG_ERROR, "%s: NULL output array", who);
        return 0;
    }
    return 1;
}

/* The local sets of the pair within eps (the rules of peg.h), reduced (reduce_pair) when
 * `reduce`, appended to out. PP_ERR_NO_MEMORY when out is too small (the *_needed totals are those before the
 * reduction) or the builder could not grow. */
static pp_status local_sets(pp_peg_builder *builder, const pp_polytope_view *a,
                            const pp_polytope_view *b, double eps, const pp_peg_params *params,
                            int reduce, pp_peg_output *out)
{
    const int memo_faces = a->face_count > b->face_count ? a->face_count : b->face_count;
    ctx c = {builder, out, params, eps, 0, 0, PP_OK, memo_faces, {-1, -1}, {0, 0},
             out->set_count, {-1, -1}, {NULL, NULL}};
    const int first_set = out->set_count, first_contact = out->contact_count;
    out->sets_needed = out->set_count;
    out->contacts_needed = out->contact_count;
    if (2 * memo_faces > builder->vf_memo_capacity) { /* new entries: stamp 0, never given */
        int old = builder->vf_memo_capacity;
        pp_status st = pp_peg_grow((void **)&builder->vf_memo, &builder->vf_memo_capacity,
                                   2 * memo_faces, sizeof *builder->vf_memo);
        if (st != PP_OK) return st;
        memset(builder->vf_memo + old, 0,
               (size_t)(builder->vf_memo_capacity - old) * sizeof *builder->vf_memo);
    }
    /* the faces' spheres of A, then B (vf_test) */
    pp_status sst = pp_peg_grow((void **)&builder->face_spheres, &builder->face_sphere_capacity,
                                4 * (a->face_count + b->face_count) + 1, sizeof(double));
    if (sst != PP_OK) return sst;
    pp_peg_face_spheres(a, builder->face_spheres);
    pp_peg_face_spheres(b, builder->face_spheres + 4 * a->face_count);
    c.spheres[0] = builder->face_spheres + 4 * a->face_count; /* A's vertices, B's faces */
    c.spheres[1] = builder->face_spheres;
    int n = 0;
    c.error = pp_peg_classify_near_features(builder, a, b, eps, params, &n);

    /* The classification's flags become "a set about this vertex exists". */
    unsigned char *covered_a = builder->vertex_flags, *covered_b = covered_a + a->vertex_count;
    if (c.error == PP_OK) memset(builder->vertex_flags, 0, (size_t)(a->vertex_count + b->vertex_count));

    /* Vertex configurations first; edge–edge pairs inside their X sets never reach the U
     * list below: an edge–edge configuration has no endpoint near the other edge, while the
     * X sets only hold edges at a vertex that is near the other feature. */
    for (int i = 0; i < n && c.error == PP_OK; ++i) {
        const pp_peg_config *g = &builder->configs[i];
        int covered[2] = {0, 0};
        switch (g->kind) {
        case PP_PEG_VERTEX_VERTEX:
            vertex_vertex(&c, a, g->feature_a, b, g->feature_b, covered);
            if (covered[0]) covered_a[g->feature_a] = 1;
            if (covered[1]) covered_b[g->feature_b] = 1;
            break;
        case PP_PEG_VERTEX_EDGE:
            if (vertex_edge(&c, a, g->feature_a, b, g->feature_b, 0)) covered_a[g->feature_a] = 1;
            break;
        case PP_PEG_EDGE_VERTEX:
            if (vertex_edge(&c, b, g->feature_b, a, g->feature_a, 1)) covered_b[g->feature_b] = 1;
            break;
        case PP_PEG_EDGE_EDGE:
            if (add_edge_edge(&c, a, g->feature_a, b, g->feature_b, 0))
                emit_set(&c, PP_PEG_SET_U, PP_PEG_EDGE_EDGE);
            break;
        default: break;
        }
    }

    /* Vertex–face for every vertex without a set: the vertex set with primaries among the
     * feasible faces with APPL^vf > appl_vf; a U unless other faces are within eps. */
    for (int side = 0; side < 2 && c.error == PP_OK; ++side) {
        const pp_polytope_view *p = side == 0 ? a : b, *q = side == 0 ? b : a;
        const unsigned char *covered = side == 0 ? covered_a : covered_b;
        for (int v = 0; v < p->vertex_count && c.error == PP_OK; ++v)
            if (!covered[v])
                vertex_set(&c, p, v, q, side, params->appl_vf, -1,
                           side == 0 ? PP_PEG_VERTEX_FACE : PP_PEG_FACE_VERTEX);
    }
    pp_status st = finish(&c);
    if (st == PP_OK && reduce)
        st = reduce_pair(builder, out, first_set, first_contact, reduce == PP_PEG_REDUCE_CORNERS);
    else if (st == PP_OK)
        drop_repeated_sets(out, first_set, first_contact);
    return st;
}

pp_status pp_peg_local_sets(pp_peg_builder *builder, const pp_polytope_view *a,
                            const pp_polytope_view *b, double eps, const pp_peg_params *params,
                            int reduce, pp_peg_output *out)
{
    pp_peg_params defaults = pp_peg_params_default();
    if (!params) params = &defaults;
    return local_sets(builder, a, b, eps, params, reduce, out);
}

/* ---- The bound per pair ------------------------------------------------------------------ */

/* Candidate n of the separating set: contact k, applicability appl. */
static pp_status separating_push(pp_peg_builder *b, int *n, const pp_contact *k, double appl)
{
    pp_status st = pp_peg_grow((void **)&b->separating, &b->separating_capacity, *n + 1,
                               sizeof *b->separating);
    if (st == PP_OK)
        st = pp_peg_grow((void **)&b->separating_appl, &b->separating_appl_capacity, *n + 1,
                         sizeof(double));
    if (st != PP_OK) return st;
    b->separating[*n] = *k;
    b->separating_appl[(*n)++] = appl;
    return PP_OK;
}

/*
 * The separating set of A and B: the facets of the Minkowski difference B (-) A, each as the
 * contact of the features that span it (separating-axis theorem; the local X of a
 * vertex–vertex configuration, peg.h, is the same condition at one vertex pair):
 *  - every face f of B with A's support vertex v along -eta_f (A's lowest vertex over f's
 *    plane, lowest index on a tie): C(v, f), psi = A's gap above f's plane;
 *  - every face g of A with B's support vertex w along -eta_g: C(w, g) flipped (§2.4);
 *  - every pair of edges with classical APPL^ee >= appl_x (their Gauss-map arcs cross, so
 *    e_a x e_b is a facet normal of B (-) A), with the edge–edge contact: psi = the gap of the
 *    edges' lines along that normal, which is the gap of A and B along it.
 * For translations, max over all of these psi >= 0 is exactly "A and B do not overlap at
 * the end of the step" (every psi is linear in the displacement). That alone lets a pair
 * moving farther than its size in one step pass THROUGH each other (a 2 cm hull at 25 m/s
 * crossed an 8 cm one with no overlap at either end of the step). So only the facets that
 * separate the pair now (psi >= 0) are kept: then max >= 0 at the end says that one of them
 * separates the pair at both ends of the step, hence (for the straight translation of the
 * linearised step) all along it: no tunnelling. It can forbid a pass around a corner of B (-) A
 * that no single facet clears; for pairs this fast that is the price of not passing through.
 * When none separates (overlapping: sigma < 0), the least overlapping facets (psi >= sigma):
 * the set pushes the pair apart along its best axis. Rotations enter through the contacts'
 * Jacobians as for every other set. More than PP_PEG_SEPARATING_MAX_CONTACTS candidates: the
 * ones with the largest psi are kept (dropping a candidate of a max can only forbid more).
 * *count candidates into b->separating (largest psi first only when cut); *sigma the largest
 * psi (the separating-axis gap of the pair, <= their distance; < 0 when they overlap).
 */
static pp_status separating_set(pp_peg_builder *b, const pp_polytope_view *a,
                                const pp_polytope_view *q, double eps,
                                const pp_peg_params *params, int *count, double *sigma)
{
    int n = 0;
    pp_status st = PP_OK;
    for (int side = 0; side < 2 && st == PP_OK; ++side) {
        const pp_polytope_view *p = side == 0 ? a : q, *r = side == 0 ? q : a;
        for (int f = 0; f < r->face_count && st == PP_OK; ++f) {
            const double *eta = r->face_normals + 3 * f;
            int best = 0;
            double low = HUGE_VAL;
            for (int v = 0; v < p->vertex_count; ++v) {
                double h = pp_v3_dot(eta, p->vertices + 3 * v);
                if (h < low) low = h, best = v;
            }
            pp_contact k;
            pp_peg_vertex_face_contact(p, best, r, f, &k);
            if (side) pp_peg_contact_flip(&k);
            st = separating_push(b, &n, &k, pp_peg_applicability_vf(p, best, r, f));
        }
    }
    /* every edge pair: the edges' t-vectors once (pp_peg_edge_frames), not at each pair */
    if (st == PP_OK)
        st = pp_peg_grow((void **)&b->edge_frames, &b->edge_frame_capacity,
                         9 * (a->edge_count + q->edge_count) + 1, sizeof(double));
    if (st != PP_OK) return st;
    double *frames_a = b->edge_frames, *frames_b = b->edge_frames + 9 * a->edge_count;
    pp_peg_edge_frames(a, frames_a);
    pp_peg_edge_frames(q, frames_b);
    for (int i = 0; i < a->edge_count && st == PP_OK; ++i)
        for (int j = 0; j < q->edge_count && st == PP_OK; ++j) {
            pp_contact k;
            double normal[3];
            const double appl = pp_peg_applicability_ee_framed(a, i, frames_a, q, j, frames_b,
                                                               normal);
            if (!nonparallel(normal) || !(appl >= params->appl_x))
                continue; /* the closest points only for the facets kept */
            pp_peg_edge_edge_contact_along(a, i, q, j, eps, normal, &k);
            st = separating_push(b, &n, &k, appl);
        }
    if (st != PP_OK) return st;
    /* Only the facets that separate now (psi >= 0), or the least overlapping ones when none
     * does (psi >= sigma): see above. */
    double m = -HUGE_VAL;
    for (int i = 0; i < n; ++i) m = fmax(m, b->separating[i].psi);
    const double floor_psi = fmin(m, 0.0) - TIE_TOLERANCE;
    int kept = 0;
    for (int i = 0; i < n; ++i)
        if (b->separating[i].psi >= floor_psi) {
            b->separating[kept] = b->separating[i];
            b->separating_appl[kept++] = b->separating_appl[i];
        }
    n = kept;
    /* Cut to the largest psi: selection of the top PP_PEG_SEPARATING_MAX_CONTACTS. */
    if (n > PP_PEG_SEPARATING_MAX_CONTACTS) {
        for (int i = 0; i < PP_PEG_SEPARATING_MAX_CONTACTS; ++i) {
            int best = i;
            for (int j = i + 1; j < n; ++j)
                if (b->separating[j].psi > b->separating[best].psi) best = j;
            pp_contact t = b->separating[i];
            b->separating[i] = b->separating[best];
            b->separating[best] = t;
            double x = b->separating_appl[i];
            b->separating_appl[i] = b->separating_appl[best];
            b->separating_appl[best] = x;
        }
        n = PP_PEG_SEPARATING_MAX_CONTACTS;
    }
    *count = n;
    *sigma = m;
    return PP_OK;
}

/*
 * Sets that read the pair deeper than it is. A set's value is the max of psi over its
 * alternatives; the X sets of vertex-vertex and vertex-edge configurations are local
 * separating-axis tests of the features' tangent cones (each alternative a plane that
 * separates the cones when its psi >= 0), and with a margin eps large against the features
 * the cones can overlap while the polytopes are apart, or overlap deeper than the polytopes
 * do: every alternative then reads psi < 0 (measured: hulls 4.7 mm apart with an X of value
 * -0.129 m; a hull and a box 4.27 cm apart, an X of -4.6 mm; check_peg_psi_apart), the LCP
 * pushes the pair out at -psi/h, and in a short sub-step after an impact that is hundreds of
 * m/s. So a set whose value is below sigma, the pair's separating-axis gap (the largest psi
 * over the facets of B (-) A: the distance's lower bound when apart, minus the penetration
 * depth when overlapping), gets the facet that attains sigma as one more alternative: its
 * value is then max(value, sigma) >= sigma, true to the pair whether apart or overlapping,
 * and continuous in the pose (a set dropped where sigma > 0 and kept where not left the
 * re-linearisation's iterates cycling between families: pouring seed 7, 1.5e-9 m^3). The
 * new alternative is a plane that separates the polytopes at sigma >= 0, so it allows no
 * overlap the set forbade. Cost: the separating set, only for pairs with a set below
 * -SPURIOUS_TOLERANCE.
 */
#define SPURIOUS_TOLERANCE 1e-9 /* m */

/* The largest psi of set s of out. */
static double set_value(const pp_peg_output *out, const pp_peg_set *s)
{
    double m = -HUGE_VAL;
    for (int i = 0; i < s->count; ++i) m = fmax(m, out->contacts[s->first + i].psi);
    return m;
}

/* 1 when set j of out reads below the separating facet (and is not a U): it gets the facet. */
static int gets_facet(const pp_peg_output *out, int j, int have_facet, const pp_contact *facet)
{
    return have_facet && out->sets[j].kind != PP_PEG_SET_U &&
           set_value(out, &out->sets[j]) < facet->psi - SPURIOUS_TOLERANCE;
}

/* The pair's separating facet for local's sets that read below it (*have_facet, *facet,
 * *facet_appl; *extras the sets that get it), computing the separating set (into
 * *separating, *sigma, *have_separating) when a set reads below -SPURIOUS_TOLERANCE. */
static pp_status find_facet(pp_peg_builder *bd, const pp_polytope_view *a,
                            const pp_polytope_view *b, double eps, const pp_peg_params *params,
                            const pp_peg_output *local, int *have_separating, int *separating,
                            double *sigma, int *have_facet, pp_contact *facet,
                            double *facet_appl, int *extras)
{
    double deepest = HUGE_VAL;
    *have_facet = *extras = 0;
    for (int j = 0; j < local->set_count; ++j)
        deepest = fmin(deepest, set_value(local, &local->sets[j]));
    if (!(deepest < -SPURIOUS_TOLERANCE)) return PP_OK;
    if (!*have_separating) {
        pp_status st = separating_set(bd, a, b, eps, params, separating, sigma);
        if (st != PP_OK) return st;
        *have_separating = 1;
    }
    for (int i = 0; i < *separating; ++i)
        if (bd->separating[i].psi >= *sigma) { /* the facet attaining sigma */
            *facet = bd->separating[i];
            *facet_appl = bd->separating_appl[i];
            *have_facet = *sigma > deepest + SPURIOUS_TOLERANCE;
            break;
        }
    for (int j = 0; j < local->set_count; ++j) *extras += gets_facet(local, j, *have_facet, facet);
    return PP_OK;
}

/* Append set `set` of `from` (contacts and applicability) to out, counting what is needed. */
static void append_set(pp_peg_output *out, const pp_peg_set *set, const pp_contact *contacts,
                       const double *appl, int *full)
{
    out->sets_needed++;
    out->contacts_needed += set->count;
    if (!*full && (out->set_count >= out->set_capacity ||
                   out->contact_count + set->count > out->contact_capacity))
        *full = 1;
    if (*full) return;
    pp_peg_set *s = &out->sets[out->set_count++];
    *s = *set;
    s->first = out->contact_count;
    for (int i = 0; i < set->count; ++i) {
        if (out->applicability) out->applicability[out->contact_count] = appl[set->first + i];
        out->contacts[out->contact_count++] = contacts[set->first + i];
    }
}

/* local_sets into the builder's own output (grown to the need). */
static pp_status build_local(pp_peg_builder *bd, const pp_polytope_view *a,
                             const pp_polytope_view *b, double eps, const pp_peg_params *params,
                             pp_peg_output *local)
{
    pp_status st = PP_OK;
    for (int attempt = 0; st == PP_OK; ++attempt) {
        *local = (pp_peg_output){bd->pair_sets, bd->pair_set_capacity, 0, 0, bd->pair_contacts,
                                 bd->pair_appl, bd->pair_contact_capacity, 0, 0};
        st = local_sets(bd, a, b, eps, params, params->reduce, local);
        if (st != PP_ERR_NO_MEMORY || attempt > 0 ||
            (local->sets_needed <= bd->pair_set_capacity &&
             local->contacts_needed <= bd->pair_contact_capacity))
            break;
        int cc = bd->pair_contact_capacity;
        st = pp_peg_grow((void **)&bd->pair_sets, &bd->pair_set_capacity, local->sets_needed,
                         sizeof *bd->pair_sets);
        if (st == PP_OK)
            st = pp_peg_grow((void **)&bd->pair_contacts, &bd->pair_contact_capacity,
                             local->contacts_needed, sizeof *bd->pair_contacts);
        if (st == PP_OK)
            st = pp_peg_grow((void **)&bd->pair_appl, &cc, local->contacts_needed, sizeof(double));
    }
    return st;
}

pp_status pp_peg_constraints_polytopes_moving(pp_peg_builder *builder, const pp_polytope_view *a,
                                              const pp_polytope_view *b, double eps,
                                              double motion, const pp_peg_params *params,
                                              pp_peg_output *out)
{
    const char *who = "pp_peg_constraints_polytopes";
    if (!output_ok(who, out)) return PP_ERR_NULL_ARGUMENT;
    pp_peg_params defaults = pp_peg_params_default();
    if (!params) params = &defaults;
    pp_status st = pp_peg_check_pair(who, a, b, eps, params);
    if (st != PP_OK) return st;
    if (!(motion >= 0.0 && motion < eps)) {
        pp_log(PP_LOG_ERROR, "%s: motion = %g must be in [0, eps = %g)", who, motion, eps);
        return PP_ERR_INVALID_ARGUMENT;
    }
    pp_peg_builder *own = NULL;
    if (!builder) {
        st = pp_peg_builder_create(&own);
        if (st != PP_OK) return st;
        builder = own;
    }
    pp_peg_builder *bd = builder;

    /* The local sets within eps; a fast pair (motion > eps - motion) over the cap: apart
     * (sigma > eps - motion) the separating set alone, touching the local sets again within
     * eps_local = sigma+ + (eps - motion), with the separating set for whatever else can
     * meet (peg.h "The bound per pair"). */
    const double base = eps - motion;
    double eps_local = eps, sigma = HUGE_VAL;
    int separating = 0, have_separating = 0;
    pp_peg_output local;
    pp_contact facet;
    double facet_appl = 0.0;
    int have_facet = 0, extras = 0;
    st = build_local(bd, a, b, eps, params, &local);
    if (st == PP_OK)
        st = find_facet(bd, a, b, eps, params, &local, &have_separating, &separating, &sigma,
                        &have_facet, &facet, &facet_appl, &extras);
    int capped = st == PP_OK && (local.set_count > PP_PEG_PAIR_MAX_SETS ||
                                 local.contact_count + extras > PP_PEG_PAIR_MAX_CONTACTS);
    if (capped && motion > base) {
        if (!have_separating) st = separating_set(bd, a, b, eps, params, &separating, &sigma);
        have_separating = 1;
        if (st == PP_OK && fmax(sigma, 0.0) + base < eps) {
            eps_local = fmax(sigma, 0.0) + base;
            if (sigma > base) { /* apart: the separating set alone */
                local.set_count = local.contact_count = 0;
                capped = 0;
            } else {
                st = build_local(bd, a, b, eps_local, params, &local);
                if (st == PP_OK)
                    st = find_facet(bd, a, b, eps, params, &local, &have_separating,
                                    &separating, &sigma, &have_facet, &facet, &facet_appl,
                                    &extras);
                capped = st == PP_OK && (local.set_count > PP_PEG_PAIR_MAX_SETS ||
                                         local.contact_count + extras > PP_PEG_PAIR_MAX_CONTACTS);
            }
        }
    }
    /* The cap: whole sets, the smallest max psi first, within PP_PEG_PAIR_MAX_SETS and
     * PP_PEG_PAIR_MAX_CONTACTS including the separating set; the separating set joins
     * whenever a set that could meet was left out (eps_local < eps, or the cap cut), unless
     * the pair's separating-axis gap exceeds the motion (nothing can meet then). */
    int need_separating = eps_local < eps;
    if (st == PP_OK && capped && !have_separating) {
        st = separating_set(bd, a, b, eps, params, &separating, &sigma);
        have_separating = 1;
    }
    need_separating = (need_separating || capped) && have_separating && separating > 0 &&
                      sigma <= motion;
    unsigned char *keep = NULL;
    if (st == PP_OK) st = pp_peg_builder_reserve_flags(bd, local.set_count);
    if (st == PP_OK) st = pp_peg_grow((void **)&bd->set_gap, &bd->set_gap_capacity,
                                      local.set_count > 0 ? local.set_count : 1, sizeof(double));
    if (st == PP_OK) {
        keep = bd->vertex_flags; /* reused: the classification is done */
        int sets_left = PP_PEG_PAIR_MAX_SETS - need_separating,
            contacts_left = PP_PEG_PAIR_MAX_CONTACTS - (need_separating ? separating : 0);
        for (int j = 0; j < local.set_count; ++j) {
            keep[j] = !capped;
            bd->set_gap[j] = set_value(&local, &local.sets[j]);
        }
        for (int taken = 0; capped && sets_left > 0; ++taken) {
            int best = -1;
            for (int j = 0; j < local.set_count; ++j)
                if (!keep[j] && local.sets[j].count + gets_facet(&local, j, have_facet, &facet) <= contacts_left &&
                    bd->set_gap[j] < HUGE_VAL && (best < 0 || bd->set_gap[j] < bd->set_gap[best]))
                    best = j;
            if (best < 0) break;
            keep[best] = 1;
            bd->set_gap[best] = HUGE_VAL; /* taken */
            sets_left--;
            contacts_left -= local.sets[best].count + gets_facet(&local, best, have_facet, &facet);
        }
    }
    if (st == PP_OK) {
        int full = 0;
        out->sets_needed = out->set_count;
        out->contacts_needed = out->contact_count;
        for (int j = 0; j < local.set_count; ++j)
            if (keep[j]) {
                append_set(out, &local.sets[j], local.contacts, local.applicability, &full);
                if (!full && gets_facet(&local, j, have_facet, &facet)) {
                    out->contacts_needed++; /* the separating facet as one more alternative */
                    if (out->contact_count >= out->contact_capacity) {
                        full = 1;
                    } else {
                        if (out->applicability) out->applicability[out->contact_count] = facet_appl;
                        out->contacts[out->contact_count++] = facet;
                        out->sets[out->set_count - 1].count++;
                    }
                }
            }
        if (need_separating) {
            pp_peg_set set = {PP_PEG_SET_X, PP_PEG_SEPARATING, 0, separating};
            /* primary first: the largest psi (the best separating axis), ties to the larger
             * applicability, then the earlier candidate */
            int p = 0;
            for (int i = 1; i < separating; ++i) {
                double d = bd->separating[i].psi - bd->separating[p].psi;
                if (d > TIE_TOLERANCE ||
                    (fabs(d) <= TIE_TOLERANCE &&
                     bd->separating_appl[i] > bd->separating_appl[p] + APPL_TIE_TOLERANCE))
                    p = i;
            }
            pp_contact t = bd->separating[0];
            bd->separating[0] = bd->separating[p];
            bd->separating[p] = t;
            double x = bd->separating_appl[0];
            bd->separating_appl[0] = bd->separating_appl[p];
            bd->separating_appl[p] = x;
            if (separating == 1) set.kind = PP_PEG_SET_U;
            append_set(out, &set, bd->separating, bd->separating_appl, &full);
        }
        if (full) st = PP_ERR_NO_MEMORY;
    }
    pp_peg_builder_destroy(own);
    return st;
}

pp_status pp_peg_constraints_polytopes(pp_peg_builder *builder, const pp_polytope_view *a,
                                       const pp_polytope_view *b, double eps,
                                       const pp_peg_params *params, pp_peg_output *out)
{
    return pp_peg_constraints_polytopes_moving(builder, a, b, eps, 0.0, params, out);
}

pp_status pp_peg_constraints_polytope_plane(const pp_polytope_view *a, const double normal[3],
                                            double offset, double eps, pp_peg_output *out)
{
    const char *who = "pp_peg_constraints_polytope_plane";
    if (!a || !normal || !output_ok(who, out)) {
        pp_log(PP_LOG_ERROR, "%s: NULL argument", who);
        return PP_ERR_NULL_ARGUMENT;
    }
    if (!(eps > 0.0) || !isfinite(eps) || !pp_v3_finite(normal) || !isfinite(offset)) {
        pp_log(PP_LOG_ERROR, "%s: eps = %g must be > 0, plane finite", who, eps);
        return PP_ERR_INVALID_ARGUMENT;
    }
    out->sets_needed = out->set_count;
    out->contacts_needed = out->contact_count;
    int full = 0;
    double n[3] = {-normal[0], -normal[1], -normal[2]};
    for (int v = 0; v < a->vertex_count; ++v) {
        const double *x = a->vertices + 3 * v;
        double psi = pp_v3_dot(normal, x) - offset;
        if (!(psi < eps)) continue;
        out->sets_needed++;
        out->contacts_needed++;
        if (!full && (out->set_count >= out->set_capacity ||
                      out->contact_count >= out->contact_capacity))
            full = 1;
        if (full) continue;
        pp_contact *k = &out->contacts[out->contact_count];
        memset(k, 0, sizeof *k);
        k->body_a = k->body_b = k->shape_a = k->shape_b = -1;
        k->kind = PP_CONTACT_VERTEX_FACE;
        k->feature_a = v;
        k->feature_b = -1;
        pp_v3_copy(k->p_a, x);
        pp_v3_copy(k->n, n);
        k->psi = psi;
        if (out->applicability) out->applicability[out->contact_count] = 1.0;
        out->sets[out->set_count++] = (pp_peg_set){PP_PEG_SET_U, PP_PEG_PLANE, out->contact_count, 1};
        out->contact_count++;
    }
    return full ? PP_ERR_NO_MEMORY : PP_OK;
}
