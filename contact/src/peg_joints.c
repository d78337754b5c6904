/*
 * Joint rows in the time-stepping LCP (pegplus/peg.h pp_joint_row; docs/joints.md).
 *
 * ODE's joints give rows J nu+ = c - cfm lambda with bounds lo <= lambda <= hi (dWorldStep
 * builds the same rows: step.cpp). In impulses p = h lambda and with nu+ = nu* + W (G x +
 * J^T p) (x: the contacts' impulse unknowns, G their columns), each row's residual is
 *     w = J nu* - c + J W G x + (J W J^T + cfm / h) p.
 * Rows are of two kinds (pp_joint_row):
 *  - equalities (lo = -inf, hi = +inf; w = 0, p free): eliminated by a Schur complement.
 *    With E the island's equality rows, A_EE = J_E W J_E^T + diag(cfm / h) (positive definite
 *    for cfm > 0; ODE's world CFM is 1e-10 by default) and A_EE = L L^T (LAPACK dpotrf),
 *        p_E = -A_EE^-1 (q_E + A_Eu z),      q_E = J_E nu* - c_E,
 *    and the LCP left over in z (the contacts' unknowns and the other joint rows') is
 *        (M - Y_r^T Y_c) z + (q - Y_r^T L^-1 q_E),     Y_a = L^-1 J_E W g_a,
 *    g_a the Jacobian of LCP row / impulse column a. Equivalently the contacts see the
 *    joint-constrained inverse mass W - W J_E^T A_EE^-1 J_E W: a jointed body is as heavy as
 *    the mechanism it belongs to. Free variables are not split into p+ - p- for Lemke (twice
 *    the size and degenerate).
 *  - bounded rows (limits, motors): p = beta+ - beta- with sigma+-, the Stewart–Trinkle
 *    friction split with a constant bound (pegplus/peg.h), LCP unknowns appended after the
 *    contacts' in the island's layout:
 *        beta+:  w + sigma+ >= 0,  beta-: -w + sigma- >= 0,  sigma+: h hi - beta+ >= 0,
 *        sigma-: -h lo - beta- >= 0.
 * Islands: joint rows couple the bodies they join like contacts do, so the islands of the
 * solve are the connected components of sets and joint rows sharing a body with W_b != 0.
 * Uniqueness: with cfm > 0 on every joint row the joint block is positive definite, so a
 * joint-only island has one solution, the one dWorldStep finds (to round-off).
 */
#include "peg_lcp_internal.h"

#include "geometry_internal.h"
#include "islands_internal.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One island's joint part: entities are the island's LCP indices 0..n-1 and then its
 * equality rows n..n+m_e-1; each has up to two body sides with a Jacobian g (and W g for the
 * impulse columns), a sign (-1 for beta-, whose Jacobian is -J) and flags. */
typedef struct joint_island {
    int capacity, eq_capacity, body_capacity;
    size_t y_capacity;           /* doubles Y holds */
    const double **ent_g;        /* 2 per entity: Jacobian of the side, NULL for none */
    const double **ent_wg;       /* 2 per entity: W_b g of the side for impulse columns */
    int *ent_body;               /* 2 per entity: body, -1 none or W_b = 0 */
    signed char *ent_sign;       /* +1 / -1 */
    unsigned char *ent_joint;    /* a joint row's unknown (beta) or equality */
    unsigned char *ent_impulse;  /* the entity is an impulse column */
    int *body_mark;              /* per body: local number + 1 in this island, 0 none */
    int *body_list;              /* local -> body */
    int *body_first, *body_items;/* CSR of (entity * 2 + side) per local body */
    int *body_fill;
    int *eq_row;                 /* equality e -> joint row */
    double *A, *A_copy, *Y, *t;  /* m_e^2, m_e^2, m_e n, m_e */
    unsigned char *y_nonzero;    /* n: Y's column a is not all zero */
    int *y_first;                /* n: its first nonzero row (L^-1 keeps the zeros above) */
    int *nz;                     /* the indices of those columns */
    int *ord;                    /* the entities of nz sorted by their column's first row */
    const double **ord_col;      /* Y's column of each entity of ord */
    double **ord_m;              /* M's column of each entity of ord */
    int *bucket;                 /* m_e + 1: counting sort of ord */
    int n, m_e;
} joint_island;

static unsigned char row_kind(const pp_joint_row *r)
{
    if (r->lo == -INFINITY && r->hi == INFINITY) return JOINT_EQUALITY;
    unsigned char k = 0;
    if (r->hi > 0.0) k |= JOINT_PLUS | (isfinite(r->hi) ? JOINT_PLUS_BOUND : 0);
    if (r->lo < 0.0) k |= JOINT_MINUS | (isfinite(r->lo) ? JOINT_MINUS_BOUND : 0);
    return k;
}

static int kind_unknowns(unsigned char k)
{
    return !!(k & JOINT_PLUS) + !!(k & JOINT_PLUS_BOUND) + !!(k & JOINT_MINUS) +
           !!(k & JOINT_MINUS_BOUND);
}

int pp_peg_joint_unknowns(int count, const pp_joint_row *rows)
{
    int n = 0;
    for (int r = 0; r < count; ++r) n += kind_unknowns(row_kind(&rows[r]));
    return n;
}

pp_status pp_peg_joints_validate(const pp_peg_problem *pp)
{
    const int nb = pp->base.body_count;
    if (pp->joint_row_count < 0 || (pp->joint_row_count > 0 && !pp->joint_rows)) {
        pp_log(PP_LOG_ERROR, "pp_peg_solve: %d joint rows with %s array", pp->joint_row_count,
               pp->joint_rows ? "an" : "a NULL");
        return pp->joint_row_count < 0 ? PP_ERR_INVALID_ARGUMENT : PP_ERR_NULL_ARGUMENT;
    }
    for (int i = 0; i < pp->joint_row_count; ++i) {
        const pp_joint_row *r = &pp->joint_rows[i];
        int finite = isfinite(r->c) && isfinite(r->cfm);
        for (int e = 0; e < 12; ++e) finite = finite && isfinite(r->J[e]);
        if (r->body_a < -1 || r->body_a >= nb || r->body_b < -1 || r->body_b >= nb ||
            (r->body_a == r->body_b) || !finite || !(r->cfm >= 0.0) || !(r->lo <= 0.0) ||
            !(r->hi >= 0.0)) {
            pp_log(PP_LOG_ERROR, "pp_peg_solve: joint row %d: bodies (%d, %d) invalid for %d "
                   "bodies, NaN/Inf in J or c, cfm = %g < 0, or bounds [%g, %g] not around 0",
                   i, r->body_a, r->body_b, nb, r->cfm, r->lo, r->hi);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    return PP_OK;
}

static pp_status grow(void **p, size_t count, size_t size)
{
    void *q = realloc(*p, (count ? count : 1) * size);
    if (!q) return PP_ERR_NO_MEMORY;
    *p = q;
    return PP_OK;
}

pp_status pp_peg_joints_reserve(pp_peg_workspace *ws, int ns, int nj, int nb)
{
    pp_status st = PP_OK;
    if (nj > ws->joint_capacity) {
        int cap = nj > 2 * ws->joint_capacity ? nj : 2 * ws->joint_capacity;
        if (st == PP_OK) st = grow((void **)&ws->joint_first, (size_t)cap + 1, sizeof(int));
        if (st == PP_OK) st = grow((void **)&ws->joint_kind, (size_t)cap, 1);
        if (st == PP_OK) st = grow((void **)&ws->joint_wj, (size_t)cap * 12, sizeof(double));
        if (st == PP_OK) st = grow((void **)&ws->joint_p, (size_t)cap, sizeof(double));
        if (st == PP_OK) st = grow((void **)&ws->joint_inc, (size_t)cap * 2, sizeof(int));
        if (st == PP_OK) ws->joint_capacity = cap;
    }
    if (st == PP_OK && ns + nj > ws->item_capacity) {
        int cap = ns + nj > 2 * ws->item_capacity ? ns + nj : 2 * ws->item_capacity;
        if (st == PP_OK) st = grow((void **)&ws->item_inc, (size_t)cap * 2, sizeof(int));
        if (st == PP_OK) st = grow((void **)&ws->item_root, (size_t)cap, sizeof(int));
        if (st == PP_OK) st = grow((void **)&ws->item_scratch, (size_t)cap + 1, sizeof(int));
        if (st == PP_OK) st = grow((void **)&ws->item_members, (size_t)cap, sizeof(int));
        if (st == PP_OK) st = grow((void **)&ws->isl_first, (size_t)cap + 1, sizeof(int));
        if (st == PP_OK) st = grow((void **)&ws->isl_sets, (size_t)cap, sizeof(int));
        if (st == PP_OK) st = grow((void **)&ws->isl_joint_first, (size_t)cap + 1, sizeof(int));
        if (st == PP_OK) st = grow((void **)&ws->isl_joints, (size_t)cap, sizeof(int));
        if (st == PP_OK) ws->item_capacity = cap;
    }
    if (st == PP_OK && nb + 1 > ws->body_capacity) {
        int cap = nb + 1;
        if (st == PP_OK) st = grow((void **)&ws->joint_inc_first, (size_t)cap, sizeof(int));
        if (st == PP_OK) st = grow((void **)&ws->item_first, (size_t)cap, sizeof(int));
        if (st == PP_OK) ws->body_capacity = cap;
    }
    if (st == PP_OK && !ws->ji) {
        ws->ji = calloc(1, sizeof *ws->ji);
        if (!ws->ji) st = PP_ERR_NO_MEMORY;
    }
    if (st != PP_OK)
        pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for %d joint rows", nj);
    return st;
}

/* Room for the whole LCP's q and z: the contacts' unknowns and the joint rows'. */
pp_status pp_peg_joints_reserve_whole(pp_peg_workspace *ws, int n)
{
    if (n <= ws->n_max) return PP_OK;
    pp_status st = grow((void **)&ws->q, (size_t)n, sizeof(double));
    if (st == PP_OK) st = grow((void **)&ws->z, (size_t)n, sizeof(double));
    if (st == PP_OK) st = grow((void **)&ws->z_motion, (size_t)n, sizeof(double));
    if (st == PP_OK) ws->n_max = n;
    else pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for an LCP of %d unknowns", n);
    return st;
}

/* Per row: kind, unknowns' offsets, W_b J of each side, and the per-body incidence. Runs after
 * build_rows (ws->coupled) and pp_peg_joints_reserve_whole (the whole q and z). */
void pp_peg_joints_build(pp_peg_workspace *ws, const pp_peg_problem *pp)
{
    const pp_mlcp_problem *p = &pp->base;
    const int nj = pp->joint_row_count, nb = p->body_count;
    ws->nj = nj;
    int unknowns = 0;
    for (int b = 0; b <= nb; ++b) ws->joint_inc_first[b] = 0;
    for (int r = 0; r < nj; ++r) {
        const pp_joint_row *row = &pp->joint_rows[r];
        ws->joint_kind[r] = row_kind(row);
        ws->joint_first[r] = unknowns;
        unknowns += kind_unknowns(ws->joint_kind[r]);
        for (int side = 0; side < 2; ++side) {
            int b = side ? row->body_b : row->body_a;
            double *wj = &ws->joint_wj[12 * (size_t)r + 6 * side];
            const double *j = &row->J[6 * side];
            if (b < 0 || !ws->coupled[b]) {
                memset(wj, 0, 6 * sizeof *wj);
                continue;
            }
            apply_inverse_mass(&p->bodies[b], j, wj);
            ws->joint_inc_first[b + 1]++;
        }
    }
    ws->joint_first[nj] = unknowns;
    for (int b = 0; b < nb; ++b) {
        ws->joint_inc_first[b + 1] += ws->joint_inc_first[b];
        ws->fill[b] = ws->joint_inc_first[b];
    }
    for (int r = 0; r < nj; ++r)
        for (int side = 0; side < 2; ++side) {
            int b = side ? pp->joint_rows[r].body_b : pp->joint_rows[r].body_a;
            if (b >= 0 && ws->coupled[b]) ws->joint_inc[ws->fill[b]++] = 2 * r + side;
        }
}

/* J nu* - c of row r, nu* the bodies' free velocities (static / kinematic included). */
static double row_rate(const pp_peg_problem *pp, int r)
{
    const pp_joint_row *row = &pp->joint_rows[r];
    double rate = -row->c;
    for (int side = 0; side < 2; ++side) {
        int b = side ? row->body_b : row->body_a;
        if (b < 0) continue;
        const pp_mlcp_body *body = &pp->base.bodies[b];
        const double *j = &row->J[6 * side];
        rate += j[0] * body->v[0] + j[1] * body->v[1] + j[2] * body->v[2] + j[3] * body->w[0] +
                j[4] * body->w[1] + j[5] * body->w[2];
    }
    return rate;
}

/* q of the joint rows' unknowns in the whole LCP (after the contact part, ws->n_contact). */
void pp_peg_joints_rhs(pp_peg_workspace *ws, const pp_peg_problem *pp)
{
    const double h = pp->base.h;
    for (int r = 0; r < ws->nj; ++r) {
        const pp_joint_row *row = &pp->joint_rows[r];
        unsigned char k = ws->joint_kind[r];
        double *q = &ws->q[ws->n_contact + ws->joint_first[r]];
        double rate = k & JOINT_EQUALITY ? 0.0 : row_rate(pp, r);
        int t = 0;
        if (k & JOINT_PLUS) q[t++] = rate;
        if (k & JOINT_PLUS_BOUND) q[t++] = h * row->hi;
        if (k & JOINT_MINUS) q[t++] = -rate;
        if (k & JOINT_MINUS_BOUND) q[t++] = -h * row->lo;
    }
}

/* Islands over the sets (items 0..ns-1) and the joint rows (items ns..ns+nj-1) sharing a
 * coupled body; as CSR lists isl_first/isl_sets and isl_joint_first/isl_joints, islands
 * numbered by their smallest item (so islands with sets come first, in set order). */
int pp_peg_joints_islands(pp_peg_workspace *ws, int ns, int nb)
{
    const int nj = ws->nj, items = ns + nj;
    for (int b = 0; b <= nb; ++b)
        ws->item_first[b] = (ws->incidence_first[b] - ws->incidence_first[0]) +
                            (ws->joint_inc_first[b] - ws->joint_inc_first[0]);
    for (int b = 0; b < nb; ++b) {
        int at = ws->item_first[b];
        for (int e = ws->incidence_first[b]; e < ws->incidence_first[b + 1]; ++e)
            ws->item_inc[at++] = ws->incidence[e];
        for (int e = ws->joint_inc_first[b]; e < ws->joint_inc_first[b + 1]; ++e)
            ws->item_inc[at++] = ws->joint_inc[e] + 2 * ns;
    }
    int islands = pp_islands_find(items, nb, ws->coupled, ws->item_first, ws->item_inc,
                                  ws->item_root, ws->item_scratch, ws->isl_first,
                                  ws->item_members);
    /* split each island's members (increasing) into its sets and its joint rows */
    int sets = 0, joints = 0;
    for (int s = 0; s < islands; ++s) {
        int first = ws->isl_first[s], last = ws->isl_first[s + 1];
        ws->isl_first[s] = sets;
        ws->isl_joint_first[s] = joints;
        for (int m = first; m < last; ++m) {
            int item = ws->item_members[m];
            if (item < ns) ws->isl_sets[sets++] = item;
            else ws->isl_joints[joints++] = item - ns;
        }
    }
    ws->isl_first[islands] = sets;
    ws->isl_joint_first[islands] = joints;
    return islands;
}

static pp_status ji_reserve(joint_island *isl, int entities, int m_e, int bodies)
{
    pp_status st = PP_OK;
    if (entities > isl->capacity) {
        int cap = entities > 2 * isl->capacity ? entities : 2 * isl->capacity;
        if (st == PP_OK) st = grow((void **)&isl->ent_g, 2 * (size_t)cap, sizeof(double *));
        if (st == PP_OK) st = grow((void **)&isl->ent_wg, 2 * (size_t)cap, sizeof(double *));
        if (st == PP_OK) st = grow((void **)&isl->ent_body, 2 * (size_t)cap, sizeof(int));
        if (st == PP_OK) st = grow((void **)&isl->ent_sign, (size_t)cap, 1);
        if (st == PP_OK) st = grow((void **)&isl->ent_joint, (size_t)cap, 1);
        if (st == PP_OK) st = grow((void **)&isl->ent_impulse, (size_t)cap, 1);
        if (st == PP_OK) st = grow((void **)&isl->y_nonzero, (size_t)cap, 1);
        if (st == PP_OK) st = grow((void **)&isl->nz, (size_t)cap, sizeof(int));
        if (st == PP_OK) st = grow((void **)&isl->ord, (size_t)cap, sizeof(int));
        if (st == PP_OK) st = grow((void **)&isl->ord_col, (size_t)cap, sizeof(double *));
        if (st == PP_OK) st = grow((void **)&isl->ord_m, (size_t)cap, sizeof(double *));
        if (st == PP_OK) st = grow((void **)&isl->y_first, (size_t)cap, sizeof(int));
        if (st == PP_OK) st = grow((void **)&isl->body_items, 2 * (size_t)cap, sizeof(int));
        if (st == PP_OK) isl->capacity = cap;
    }
    if (st == PP_OK && m_e > isl->eq_capacity) {
        int cap = m_e > 2 * isl->eq_capacity ? m_e : 2 * isl->eq_capacity;
        if (st == PP_OK) st = grow((void **)&isl->eq_row, (size_t)cap, sizeof(int));
        if (st == PP_OK) st = grow((void **)&isl->A, (size_t)cap * cap, sizeof(double));
        if (st == PP_OK) st = grow((void **)&isl->A_copy, (size_t)cap * cap, sizeof(double));
        if (st == PP_OK) st = grow((void **)&isl->t, (size_t)cap, sizeof(double));
        if (st == PP_OK) st = grow((void **)&isl->bucket, (size_t)cap + 1, sizeof(int));
        if (st == PP_OK) isl->eq_capacity = cap;
    }
    if (st == PP_OK && (size_t)m_e * entities > isl->y_capacity) {
        size_t cap = (size_t)m_e * entities;
        if (cap < 2 * isl->y_capacity) cap = 2 * isl->y_capacity;
        st = grow((void **)&isl->Y, cap, sizeof(double));
        if (st == PP_OK) isl->y_capacity = cap;
    }
    if (st == PP_OK && bodies + 1 > isl->body_capacity) {
        int cap = bodies + 1;
        int old = isl->body_capacity;
        if (st == PP_OK) st = grow((void **)&isl->body_mark, (size_t)cap, sizeof(int));
        if (st == PP_OK) st = grow((void **)&isl->body_list, (size_t)cap, sizeof(int));
        if (st == PP_OK) st = grow((void **)&isl->body_first, (size_t)cap + 1, sizeof(int));
        if (st == PP_OK) st = grow((void **)&isl->body_fill, (size_t)cap, sizeof(int));
        if (st == PP_OK) {
            for (int b = old; b < cap; ++b) isl->body_mark[b] = 0;
            isl->body_capacity = cap;
        }
    }
    return st;
}

/* A = L L^T (LAPACK dpotrf, lower), 0 on success, else the 1-based row of the failing pivot:
 * dpotrf's own failure, or a pivot L_ii^2 below 1e-13 of the largest diagonal (a singular A
 * that round-off made barely positive: its inverse would be noise of size 1e13). */
static lapack_int cholesky(double *A, int m, double dmax)
{
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', m, A, m);
    for (int i = 0; i < m && info == 0; ++i)
        if (A[i + (size_t)i * m] * A[i + (size_t)i * m] < 1e-13 * dmax) info = i + 1;
    return info;
}

/* x . y over m entries, four partial sums (independent adds: the loop runs at the
 * throughput of the multiply-adds, not their latency): lane l of the four-wide accumulator
 * sums the products i = l (mod 4), the leftover m mod 4 products go to lane 0 in order, and
 * the result is (s0 + s1) + (s2 + s3). dot4 does the same for four y against one x with each
 * sum's operations in the same order (bit-identical to four dot calls), reading x once. No
 * fused multiply-add: the library is built for baseline x86-64, and a product rounded before
 * its add keeps these sums equal to the scalar ones. */
typedef double pp_v2 __attribute__((vector_size(16))); /* two lanes: one SSE2 register */

/* lanes (0, 1) += x[0, 2) y[0, 2) and lanes (2, 3) += x[2, 4) y[2, 4) (memcpy: unaligned
 * loads) */
static inline __attribute__((always_inline)) void add_products(pp_v2 *lo, pp_v2 *hi,
                                                              const double *x, const double *y)
{
    pp_v2 a, b, c, d;
    memcpy(&a, x, sizeof a);
    memcpy(&b, y, sizeof b);
    memcpy(&c, x + 2, sizeof c);
    memcpy(&d, y + 2, sizeof d);
    *lo += a * b;
    *hi += c * d;
}

static inline __attribute__((always_inline)) double dot(const double *x, const double *y, int m)
{
    pp_v2 lo = {0.0, 0.0}, hi = {0.0, 0.0};
    int i = 0;
    for (; i + 4 <= m; i += 4) add_products(&lo, &hi, x + i, y + i);
    double a = lo[0];
    for (; i < m; ++i) a += x[i] * y[i];
    return (a + lo[1]) + (hi[0] + hi[1]);
}

static inline __attribute__((always_inline)) void dot4(const double *x, const double *const *y,
                                                      int m, double out[4])
{
    pp_v2 l0 = {0.0, 0.0}, h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0;
    const double *y0 = y[0], *y1 = y[1], *y2 = y[2], *y3 = y[3];
    int i = 0;
    for (; i + 4 <= m; i += 4) {
        add_products(&l0, &h0, x + i, y0 + i);
        add_products(&l1, &h1, x + i, y1 + i);
        add_products(&l2, &h2, x + i, y2 + i);
        add_products(&l3, &h3, x + i, y3 + i);
    }
    double a0 = l0[0], a1 = l1[0], a2 = l2[0], a3 = l3[0];
    for (; i < m; ++i) {
        a0 += x[i] * y0[i];
        a1 += x[i] * y1[i];
        a2 += x[i] * y2[i];
        a3 += x[i] * y3[i];
    }
    out[0] = (a0 + l0[1]) + (h0[0] + h0[1]);
    out[1] = (a1 + l1[1]) + (h1[0] + h1[1]);
    out[2] = (a2 + l2[1]) + (h2[0] + h2[1]);
    out[3] = (a3 + l3[1]) + (h3[0] + h3[1]);
}

static void set_entity(joint_island *isl, int a, const int body[2], const double *g0,
                       const double *g1, const double *wg0, const double *wg1, int sign,
                       int joint, int impulse)
{
    isl->ent_body[2 * a] = body[0];
    isl->ent_body[2 * a + 1] = body[1];
    isl->ent_g[2 * a] = g0;
    isl->ent_g[2 * a + 1] = g1;
    isl->ent_wg[2 * a] = wg0;
    isl->ent_wg[2 * a + 1] = wg1;
    isl->ent_sign[a] = (signed char)sign;
    isl->ent_joint[a] = (unsigned char)joint;
    isl->ent_impulse[a] = (unsigned char)impulse;
}

/*
 * The island's joint part, into its LCP (M column-major n x n with the contacts' block already
 * assembled in the leading layout_size(L) rows and columns; q gathered from the whole q):
 * the cross terms between the joint rows' unknowns and every row / impulse column sharing a
 * body with them, the joint unknowns' own blocks (cfm / h, sigma), and the Schur complement
 * of the island's equality rows (file comment). Keeps what pp_peg_joints_recover needs.
 */
pp_status pp_peg_joints_island(pp_peg_workspace *ws, const pp_peg_problem *pp,
                               const lcp_layout *L, const int *sets, int set_count,
                               const int *joints, int joint_count, int n, double *M, double *q)
{
    const pp_mlcp_problem *p = &pp->base;
    const int k = L->k, n_c = layout_size(L);
    const double h = p->h;
    int m_e = 0;
    for (int t = 0; t < joint_count; ++t) m_e += (ws->joint_kind[joints[t]] & JOINT_EQUALITY) != 0;
    joint_island *isl = ws->ji;
    pp_status st = ji_reserve(isl, n + m_e, m_e, p->body_count);
    if (st != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_peg_solve: out of memory for an island's %d joint equalities",
               m_e);
        return st;
    }
    isl->n = n;
    isl->m_e = m_e;
    const int entities = n + m_e;
    for (int a = 0; a < entities; ++a) {
        const int none[2] = {-1, -1};
        set_entity(isl, a, none, NULL, NULL, NULL, NULL, 1, 0, 0);
    }
    /* contact rows and impulse columns */
    for (int t = 0; t < set_count; ++t) {
        const int j = sets[t], rows = ws->row_first[j + 1] - ws->row_first[j];
        int body[2];
        for (int side = 0; side < 2; ++side) {
            int b = ws->set_body[2 * j + side];
            body[side] = b >= 0 && ws->coupled[b] ? b : -1;
        }
        for (int r = 0; r < rows; ++r) {
            int a = row_index(L, j, r);
            if (a < 0) continue;
            int impulse = r <= k;
            set_entity(isl, a, body, JAC(ws, ws->row_first[j] + r, 0),
                       JAC(ws, ws->row_first[j] + r, 1),
                       impulse ? WJAC(ws, k, j, r, 0) : NULL, impulse ? WJAC(ws, k, j, r, 1) : NULL,
                       1, 0, impulse);
        }
        /* rolling friction (mlcp.h): g+ along G_a, g- along -G_a; their bound's s is none */
        for (int m = 0; m < ws->roll_axes[j]; ++m)
            for (int sign = 0; sign < 2; ++sign)
                set_entity(isl, roll_index(L, j, 3 * m + sign), body, RJAC(ws, j, m, 0),
                           RJAC(ws, j, m, 1), RWJAC(ws, j, m, 0), RWJAC(ws, j, m, 1),
                           sign ? -1 : 1, 0, 1);
    }
    /* joint unknowns (after n_c) and equality rows (after n) */
    int at = n_c, e = n;
    for (int t = 0; t < joint_count; ++t) {
        const int r = joints[t];
        const pp_joint_row *row = &pp->joint_rows[r];
        const unsigned char kind = ws->joint_kind[r];
        int body[2] = {row->body_a >= 0 && ws->coupled[row->body_a] ? row->body_a : -1,
                       row->body_b >= 0 && ws->coupled[row->body_b] ? row->body_b : -1};
        const double *g0 = row->J, *g1 = row->J + 6;
        const double *w0 = &ws->joint_wj[12 * (size_t)r], *w1 = w0 + 6;
        if (kind & JOINT_EQUALITY) {
            isl->eq_row[e - n] = r;
            set_entity(isl, e++, body, g0, g1, w0, w1, 1, 1, 1);
            continue;
        }
        const double cfm_h = row->cfm / h;
        int plus = -1, minus = -1;
        if (kind & JOINT_PLUS) {
            plus = at;
            set_entity(isl, at++, body, g0, g1, w0, w1, 1, 1, 1);
        }
        if (kind & JOINT_PLUS_BOUND) {
            int sigma = at++;
            M[plus + (size_t)sigma * n] = 1.0;
            M[sigma + (size_t)plus * n] = -1.0;
        }
        if (kind & JOINT_MINUS) {
            minus = at;
            set_entity(isl, at++, body, g0, g1, w0, w1, -1, 1, 1);
        }
        if (kind & JOINT_MINUS_BOUND) {
            int sigma = at++;
            M[minus + (size_t)sigma * n] = 1.0;
            M[sigma + (size_t)minus * n] = -1.0;
        }
        /* cfm / h on the impulse: w = ... + (cfm / h)(beta+ - beta-) */
        if (plus >= 0) M[plus + (size_t)plus * n] += cfm_h;
        if (minus >= 0) M[minus + (size_t)minus * n] += cfm_h;
        if (plus >= 0 && minus >= 0) {
            M[plus + (size_t)minus * n] -= cfm_h;
            M[minus + (size_t)plus * n] -= cfm_h;
        }
    }
    PP_ASSERT(at == n && e == entities, "pp_peg_joints_island: layout");

    /* per coupled body of the island, its entity sides (CSR over local bodies) */
    int nbl = 0;
    for (int a = 0; a < entities; ++a)
        for (int side = 0; side < 2; ++side) {
            int b = isl->ent_body[2 * a + side];
            if (b >= 0 && !isl->body_mark[b]) {
                isl->body_list[nbl] = b;
                isl->body_mark[b] = ++nbl;
            }
        }
    for (int l = 0; l <= nbl; ++l) isl->body_first[l] = 0;
    for (int a = 0; a < entities; ++a)
        for (int side = 0; side < 2; ++side)
            if (isl->ent_body[2 * a + side] >= 0) isl->body_first[isl->body_mark[isl->ent_body[2 * a + side]]]++;
    for (int l = 0; l < nbl; ++l) isl->body_first[l + 1] += isl->body_first[l];
    for (int l = 0; l < nbl; ++l) isl->body_fill[l] = isl->body_first[l];
    for (int a = 0; a < entities; ++a)
        for (int side = 0; side < 2; ++side) {
            int b = isl->ent_body[2 * a + side];
            if (b >= 0) isl->body_items[isl->body_fill[isl->body_mark[b] - 1]++] = 2 * a + side;
        }

    /* J^T W J cross terms with a joint unknown on either side (contact-contact terms are the
     * contacts' own assembly) */
    for (int l = 0; l < nbl; ++l)
        for (int x = isl->body_first[l]; x < isl->body_first[l + 1]; ++x) {
            int a = isl->body_items[x] / 2, sa = isl->body_items[x] % 2;
            if (a >= n || !isl->ent_joint[a]) continue;
            for (int y = isl->body_first[l]; y < isl->body_first[l + 1]; ++y) {
                int c = isl->body_items[y] / 2, sc = isl->body_items[y] % 2;
                if (c >= n) continue;
                double s = isl->ent_sign[a] * isl->ent_sign[c];
                if (isl->ent_impulse[c]) /* row a, column c */
                    M[a + (size_t)c * n] += s * dot6(isl->ent_g[2 * a + sa], isl->ent_wg[2 * c + sc]);
                if (!isl->ent_joint[c]) /* contact row c, joint column a */
                    M[c + (size_t)a * n] += s * dot6(isl->ent_g[2 * c + sc], isl->ent_wg[2 * a + sa]);
            }
        }

    if (m_e > 0) {
        /* A_EE = J_E W J_E^T + diag(cfm / h), and V = J_E W g_a for every entity a < n */
        double *A = isl->A, *Y = isl->Y;
        memset(A, 0, (size_t)m_e * m_e * sizeof *A);
        /* Y's columns are cleared when first written (y_nonzero marks them until the scan
         * below): most entities touch no jointed body, and their columns stay unread */
        memset(isl->y_nonzero, 0, (size_t)n);
        for (int l = 0; l < nbl; ++l)
            for (int x = isl->body_first[l]; x < isl->body_first[l + 1]; ++x) {
                int e1 = isl->body_items[x] / 2, s1 = isl->body_items[x] % 2;
                if (e1 < n) continue;
                const double *wj = isl->ent_wg[2 * e1 + s1];
                for (int y = isl->body_first[l]; y < isl->body_first[l + 1]; ++y) {
                    int c = isl->body_items[y] / 2, sc = isl->body_items[y] % 2;
                    double v = dot6(wj, isl->ent_g[2 * c + sc]);
                    if (c >= n) A[(e1 - n) + (size_t)(c - n) * m_e] += v;
                    else {
                        double *yc = &Y[(size_t)c * m_e];
                        if (!isl->y_nonzero[c]) {
                            memset(yc, 0, (size_t)m_e * sizeof *yc);
                            isl->y_nonzero[c] = 1;
                        }
                        yc[e1 - n] += isl->ent_sign[c] * v;
                    }
                }
            }
        for (int i = 0; i < m_e; ++i) {
            const pp_joint_row *row = &pp->joint_rows[isl->eq_row[i]];
            A[i + (size_t)i * m_e] += row->cfm / h;
            isl->t[i] = row_rate(pp, isl->eq_row[i]);
        }
        /* A_EE = L L^T. Redundant equalities (a closed loop of joints) with CFM = 0 make A_EE
         * singular: then A_EE + eps max_i A_ii I, eps = 1e-12, 1e-9, 1e-6 (the compliance ODE's
         * default world CFM would have given), said in the log and the statistics. */
        double *copy = isl->A_copy, dmax = 0.0;
        memcpy(copy, A, (size_t)m_e * m_e * sizeof *A);
        for (int i = 0; i < m_e; ++i) dmax = fmax(dmax, A[i + (size_t)i * m_e]);
        lapack_int info = cholesky(A, m_e, dmax);
        static const double eps[3] = {1e-12, 1e-9, 1e-6};
        for (int t = 0; t < 3 && info != 0 && dmax > 0.0; ++t) {
            memcpy(A, copy, (size_t)m_e * m_e * sizeof *A);
            for (int i = 0; i < m_e; ++i) A[i + (size_t)i * m_e] += eps[t] * dmax;
            info = cholesky(A, m_e, dmax);
            if (info == 0) {
                ws->joint_regularised++;
                pp_log(PP_LOG_WARNING, "pp_peg_solve: %d joint equalities of an island are "
                       "redundant (J W J^T + cfm/h singular: a closed loop with CFM = 0?); "
                       "solved with %g of their largest diagonal added", m_e, eps[t]);
            }
        }
        if (info != 0) {
            pp_log(PP_LOG_ERROR, "pp_peg_solve: the joint equalities of an island are singular "
                   "(J W J^T + cfm/h not positive definite at row %d of %d, also regularised): "
                   "no body they act on can move?", (int)info, m_e);
            return PP_ERR_SOLVER;
        }
        /* Y = L^-1 V and t = L^-1 q_E, on the columns that touch a jointed body (V_a != 0)
         * only, each from its first nonzero row (the rows above stay 0), by rows:
         *     y_i = (v_i - sum_{c<i} L_ic y_c) / L_ii,
         * the sums along rows of L (held transposed in A_copy, contiguous) as dot products
         * with independent partial sums. Written out rather than one LAPACK call per column
         * (dtrtrs' fixed cost, m_e = 26 rows and 94 columns on demo_crash's car, was a third
         * of the Schur complement), and not one call with every column (many right-hand
         * sides make OpenBLAS start worker threads that spin between calls: twice the
         * process CPU time on the arm scene). */
        double *Lt = isl->A_copy; /* row i of L: Lt[i * m_e + c], c <= i */
        for (int c = 0; c < m_e; ++c)
            for (int i = c; i < m_e; ++i) Lt[(size_t)i * m_e + c] = A[i + (size_t)c * m_e];
        int *nz = isl->nz, count = 0;
        for (int u = 0; u < n; ++u) {
            const double *y = &Y[(size_t)u * m_e];
            int first = isl->y_nonzero[u] ? 0 : m_e; /* an unwritten column is 0 */
            while (first < m_e && y[first] == 0.0) ++first;
            isl->y_nonzero[u] = (unsigned char)(first < m_e);
            isl->y_first[u] = first;
            if (first < m_e) nz[count++] = u;
        }
        /* ord: the entities of nz by increasing first row (a stable counting sort). Columns
         * with the same first row are substituted four at a time, sharing the rows of L
         * (dot4: each column's sums as in its own substitution); every pair (a, c) with
         * first(a) <= first(c) below has its dot product start at first(c), so the pairs of
         * column c with the columns before it in ord run four at a time too. */
        int *ord = isl->ord, *bucket = isl->bucket;
        for (int f = 0; f <= m_e; ++f) bucket[f] = 0;
        for (int v = 0; v < count; ++v) bucket[isl->y_first[nz[v]] + 1]++;
        for (int f = 0; f < m_e; ++f) bucket[f + 1] += bucket[f];
        for (int v = 0; v < count; ++v) ord[bucket[isl->y_first[nz[v]]]++] = nz[v];
        const double **ord_col = isl->ord_col;
        double **ord_m = isl->ord_m;
        for (int p = 0; p < count; ++p) {
            ord_col[p] = &Y[(size_t)ord[p] * m_e];
            ord_m[p] = &M[(size_t)ord[p] * n];
        }
        for (int p = 0; p < count;) {
            const int first = isl->y_first[ord[p]];
            if (p + 4 <= count && isl->y_first[ord[p + 3]] == first) {
                double *y[4], out[4];
                for (int t = 0; t < 4; ++t) y[t] = &Y[(size_t)ord[p + t] * m_e];
                for (int i = first; i < m_e; ++i) {
                    const double *li = &Lt[(size_t)i * m_e];
                    const double *yf[4] = {y[0] + first, y[1] + first, y[2] + first,
                                           y[3] + first};
                    dot4(li + first, yf, i - first, out);
                    for (int t = 0; t < 4; ++t) y[t][i] = (y[t][i] - out[t]) / li[i];
                }
                p += 4;
                continue;
            }
            double *y = &Y[(size_t)ord[p] * m_e];
            for (int i = first; i < m_e; ++i) {
                const double *li = &Lt[(size_t)i * m_e];
                y[i] = (y[i] - dot(li + first, y + first, i - first)) / li[i];
            }
            ++p;
        }
        { /* t = L^-1 q_E */
            double *y = isl->t;
            int first = 0;
            while (first < m_e && y[first] == 0.0) ++first;
            for (int i = first; i < m_e; ++i) {
                const double *li = &Lt[(size_t)i * m_e];
                y[i] = (y[i] - dot(li + first, y + first, i - first)) / li[i];
            }
        }
        /* M -= Y_r^T Y_c over rows and impulse columns; q -= Y_r^T t. Y^T Y is symmetric,
         * so each entry s = Y_a . Y_c is formed once (in ord's order) and subtracted where it
         * belongs: from (a, c) when c is an impulse column, from (c, a) when a is (every
         * entity with a nonzero Y has a row). Each entry of M gets one subtraction, so the
         * order of the pairs does not change M. */
        const unsigned char *impulse = isl->ent_impulse;
        for (int p = 0; p < count; ++p) {
            const int c = ord[p], fc = isl->y_first[c], impulse_c = impulse[c];
            const double *yc = &Y[(size_t)c * m_e + fc];
            const int len = m_e - fc;
            double *Mc = ord_m[p];
            int r = 0;
            for (; r + 4 <= p; r += 4) { /* below the diagonal: a != c */
                const double *ya[4];
                double out[4];
                for (int t = 0; t < 4; ++t) ya[t] = ord_col[r + t] + fc;
                dot4(yc, ya, len, out);
                for (int t = 0; t < 4; ++t) {
                    const int a = ord[r + t];
                    if (impulse_c) Mc[a] -= out[t];
                    if (impulse[a]) ord_m[r + t][c] -= out[t];
                }
            }
            for (; r <= p; ++r) {
                const int a = ord[r];
                if (!impulse_c && !impulse[a]) continue;
                const double s = dot(ord_col[r] + fc, yc, len);
                if (impulse_c) Mc[a] -= s;
                if (impulse[a] && a != c) ord_m[r][c] -= s;
            }
            q[c] -= dot(yc, isl->t + fc, len);
        }
    }
    for (int l = 0; l < nbl; ++l) isl->body_mark[isl->body_list[l]] = 0;
    return PP_OK;
}

/* After the island's LCP: p of its bounded rows (beta+ - beta-) and of its equalities,
 * p_E = -L^-T (L^-1 q_E + sum_c Y_c z_c). z: the island's LCP solution (n entries). */
void pp_peg_joints_recover(pp_peg_workspace *ws, const int *joints, int joint_count,
                           int n_contact, const double *z)
{
    joint_island *isl = ws->ji;
    const int m_e = isl->m_e;
    int at = n_contact;
    for (int t = 0; t < joint_count; ++t) {
        const int r = joints[t];
        const unsigned char kind = ws->joint_kind[r];
        if (kind & JOINT_EQUALITY) continue;
        double p = 0.0;
        if (kind & JOINT_PLUS) p += z[at++];
        if (kind & JOINT_PLUS_BOUND) at++;
        if (kind & JOINT_MINUS) p -= z[at++];
        if (kind & JOINT_MINUS_BOUND) at++;
        ws->joint_p[r] = p;
    }
    if (m_e == 0) return;
    for (int c = 0; c < isl->n; ++c) {
        if (!isl->y_nonzero[c] || !isl->ent_impulse[c] || z[c] == 0.0) continue;
        const double *yc = &isl->Y[(size_t)c * m_e];
        for (int i = isl->y_first[c]; i < m_e; ++i) isl->t[i] += yc[i] * z[c];
    }
    LAPACKE_dtrtrs_work(LAPACK_COL_MAJOR, 'L', 'T', 'N', m_e, 1, isl->A, m_e, isl->t, m_e);
    for (int i = 0; i < m_e; ++i) ws->joint_p[isl->eq_row[i]] = -isl->t[i];
}

/* nu += W J^T p over the joint rows (per problem body, 6 each). */
void pp_peg_joints_velocities(const pp_peg_workspace *ws, const pp_peg_problem *pp,
                              double *velocity)
{
    for (int r = 0; r < ws->nj; ++r) {
        const pp_joint_row *row = &pp->joint_rows[r];
        const double p = ws->joint_p[r];
        if (p == 0.0) continue;
        for (int side = 0; side < 2; ++side) {
            int b = side ? row->body_b : row->body_a;
            if (b < 0 || !ws->coupled[b]) continue;
            const double *wj = &ws->joint_wj[12 * (size_t)r + 6 * side];
            for (int e = 0; e < 6; ++e) velocity[6 * (size_t)b + e] += wj[e] * p;
        }
    }
}

void pp_peg_joints_free(pp_peg_workspace *ws)
{
    free(ws->joint_first);
    free(ws->joint_kind);
    free(ws->joint_wj);
    free(ws->joint_p);
    free(ws->joint_inc_first);
    free(ws->joint_inc);
    free(ws->item_first);
    free(ws->item_inc);
    free(ws->item_root);
    free(ws->item_scratch);
    free(ws->item_members);
    free(ws->isl_first);
    free(ws->isl_sets);
    free(ws->isl_joint_first);
    free(ws->isl_joints);
    joint_island *isl = ws->ji;
    if (isl) {
        free(isl->ent_g);
        free(isl->ent_wg);
        free(isl->ent_body);
        free(isl->ent_sign);
        free(isl->ent_joint);
        free(isl->ent_impulse);
        free(isl->body_mark);
        free(isl->body_list);
        free(isl->body_first);
        free(isl->body_items);
        free(isl->body_fill);
        free(isl->eq_row);
        free(isl->A);
        free(isl->A_copy);
        free(isl->Y);
        free(isl->t);
        free(isl->y_nonzero);
        free(isl->nz);
        free(isl->ord);
        free(isl->ord_col);
        free(isl->ord_m);
        free(isl->bucket);
        free(isl->y_first);
        free(isl);
    }
}

