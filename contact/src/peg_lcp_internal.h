/* Private to contact/: the PEG time-stepping LCP's workspace and layout (peg_mlcp.c), shared
 * with the joint rows' part of the same solve (peg_joints.c). */
#ifndef PP_PEG_LCP_INTERNAL_H
#define PP_PEG_LCP_INTERNAL_H

#include "pegplus/peg.h"

#include <stddef.h>

struct pp_lcp_csc; /* lcp_internal.h: a large LCP's matrix by columns */

struct pp_peg_workspace {
    int max_bodies, max_contacts, max_sets, max_directions, n_max, max_rows;
    int *row_first;       /* per set: first row in jac (rows: normal, k friction, slacks) */
    int *slack_first;     /* per set: first slack index (0..K) */
    int *set_body;        /* 2 per set: body of side A, side B (-1 static) */
    int *friction_slot;   /* per set: index among the frictional sets, -1 when mu = 0 */
    int frictional;       /* sets with friction (nf): the LCP has ns + K + nf (k + 1) unknowns */
    double *set_mu;       /* per set: mu of the primary (for U) */
    unsigned *set_surface; /* per set: the primary's pp_contact.surface flags */
    double *set_soft;     /* per set: cfm/h on the normal diagonal (read with SOFT) */
    double *set_slip;     /* 6 per set: sqrt(slip1/h) t1, sqrt(slip2/h) t2 (read with SLIP) */
    int *roll_axes;       /* per set: rolling axes (0..3) of its primary (ROLLING, mlcp.h) */
    int *roll_first;      /* per set + 1: first rolling unknown in the whole LCP's nr */
    int *local_roll;      /* max_sets: first rolling unknown of a set within its island */
    double *set_rho;      /* 3 per set: rho of each rolling axis in use, in order */
    double *rjac;         /* [set][axis 0..2][side][6]: the angular columns G_a (mlcp.h) */
    double *rwjac;        /* same: W_b G_a */
    int roll_unknowns;    /* nr of the whole LCP */
    double *jac;          /* [row][side][6] */
    double *wjac;         /* [set][col 0..k][side][6]: W_b g of the impulse columns */
    double *rhs;          /* [row]: psi/h term of the row (0 for friction rows) */
    double *dirs;         /* [set][k][3] */
    double *q, *z;        /* n_max: the whole LCP's q and z */
    const double *z_start; /* the caller's (pp_peg_workspace_start): whole-LCP order, or NULL */
    const double *z_fallback; /* the caller's (pp_peg_workspace_fallback_start): the same */
    double *z_motion;     /* n_max: the z the velocities are computed from: z, except in an
                             island whose load sharing changed the impulses only
                             (PP_LOAD_SHARED_IMPULSES), where it is Lemke's */
    struct dense_store *dense; /* sized by the largest island solved, not by n_max */
    struct pp_body_block *block; /* one body's rows and columns (peg_mlcp.c assemble_body),
                                    sized by the body with the most rows */
    int *incidence_first; /* max_bodies + 1, CSR over bodies of (set, side) */
    int *incidence;       /* 2 max_sets: set * 2 + side */
    int *fill;            /* max_bodies */
    unsigned char *coupled; /* max_bodies: W_b != 0, the body joins its sets' islands */
    unsigned char *owned; /* max_contacts: contact already in a set (validation) */
    int *root;            /* max_sets: union-find parents, then the island of each set */
    int *island_first;    /* max_sets + 1: CSR of sets by island */
    int *island_sets;     /* max_sets */
    int *local;           /* max_sets: position of a set within its island (or the whole) */
    int *local_slack;     /* max_sets: first slack of a set within its island */
    int *local_friction;  /* max_sets: friction slot of a set within its island, -1 none */
    int last_ns, last_K, last_k, last_n;
    double last_shift;    /* compliance r max_i M_ii of the last solve, over all sets */

    /* Joint rows (peg_joints.c), grown on demand by the rows, sets and bodies of a solve. */
    int nj;               /* joint rows of the last solve */
    int joint_regularised; /* islands of the last solve whose equalities were regularised */
    int n_contact;        /* unknowns of the whole LCP's contact part; the joint rows'
                             unknowns follow it */
    int joint_capacity, item_capacity, body_capacity;
    int *joint_first;     /* nj + 1: first unknown of row r in the joint part */
    unsigned char *joint_kind; /* nj: JOINT_* bits */
    double *joint_wj;     /* 12 nj: W_b J of each side (0 where W_b = 0) */
    double *joint_p;      /* nj: the impulse of each row */
    int *joint_inc_first, *joint_inc; /* bodies + 1, 2 nj: CSR of (row * 2 + side) */
    /* islands over sets and joint rows together (items: sets, then joint rows) */
    int *item_first, *item_inc, *item_root, *item_scratch, *item_members;
    int *isl_first;       /* islands + 1: CSR of sets by island */
    int *isl_sets;
    int *isl_joint_first; /* islands + 1: CSR of joint rows by island */
    int *isl_joints;
    /* one island's joint part: entities (LCP indices and equality rows), their bodies */
    struct joint_island *ji;
    struct pp_peg_screen *screen; /* constraint screening's scratch (peg_screen.c), or NULL */
    int decline;          /* the caller's (pp_peg_workspace_decline): islands peg_mlcp.c's
                             rule ("Declined islands") hands back unsolved */
};

/*
 * The dense part of a solve: an island's matrix M (column-major, an island's LCP while
 * solving, the whole LCP when pp_peg_last_lcp asks for it), its q, z, basis and index map,
 * and the Lemke workspace (about 4 n^2 doubles below PP_LCP_SPARSE_MIN_N, linear above). It
 * grows to the largest island actually solved (never to the sum of the islands: memory
 * follows the largest island), before that island's solve, never inside it. M itself is kept
 * only below OWN_MATRIX_MIN_N (1 500) unknowns. A larger island without joint rows is held
 * by columns (csc, never dense); one with joint rows has a zeroed allocation of its own,
 * freed after its solve, whose pages without a nonzero are never touched (peg_mlcp.c
 * solve_islands).
 */
/*
 * Load sharing over redundant supports (lcp_load_sharing.c, whose comment has the
 * derivation): an island's LCP solved by Lemke is replaced by the limit of a uniform
 * compliance on its impulse rows going to zero, where its active contacts are redundant.
 * The caller fills normal[t], beta[t] (per contact or set t: the LCP index of its p, of its
 * first friction unknown, -1 if frictionless; its k friction unknowns are consecutive) and
 * force[i] (1 on the impulse unknowns p and beta, 0 on sigma, PEG slacks and joint rows).
 * Arrays grow to the largest island (pp_load_sharing_reserve), before the solve.
 */
typedef struct pp_load_sharing {
    int capacity;          /* n the vectors hold */
    double *Me, *lu;       /* M + eps D (n^2); the rank test's block and a basis block's LU
                              (up to n^2): grown only when an island is redundant */
    size_t Me_capacity, lu_capacity; /* doubles they hold */
    double *w, *tau, *z, *zb, *rhs; /* n */
    int *index, *piv;      /* n */
    int *normal, *beta;    /* n (contacts <= n) */
    unsigned char *force, *basis; /* n; basis: see start and found */
    int start;             /* set by the caller: basis holds a guess of the compliant LCP's
                              basis (the island's last, kept with the warm start), tried
                              first; cleared by pp_load_sharing_apply */
    int found;             /* on return: basis holds the compliant LCP's basis */
    unsigned char *derived; /* n: the start derived from Lemke's answer */
    /* by columns (an island of pp_peg_csc_min_n unknowns or more): (M + eps D)_BB gathered
     * by columns for KLU, its factors, and a row's place in B (-1 between uses) */
    int *place;            /* n */
    int *Ap, *Ai;          /* n + 1; a_capacity */
    double *Ax;            /* a_capacity */
    size_t a_capacity;
    struct pp_lcp_lu *sparse_lu;
    /* the work bound of one call by columns (lcp_load_sharing.c, "Work"): the bound (<= 0:
     * LS_WORK), the estimated multiply-adds charged by the last call, and 1 when the bound
     * refused a factorisation or solve of it */
    double work_bound, work;
    int work_cut;
} pp_load_sharing;

typedef enum pp_load_sharing_outcome {
    PP_LOAD_UNIQUE = 0,    /* the active contacts are independent: z untouched */
    PP_LOAD_SHARED = 1,    /* z replaced by the compliance limit */
    PP_LOAD_SAME = 2,      /* redundant, and the limit is Lemke's answer: z untouched */
    PP_LOAD_KEPT = 3,      /* redundant, the limit not found as an LCP solution: z untouched */
    PP_LOAD_SHARED_IMPULSES = 4 /* z replaced, and the limit differs from Lemke's answer only by
                                   impulses that change no velocity (z0 - z_L in the null
                                   space of the force block, nothing else changed): the
                                   velocities may be computed from either */
} pp_load_sharing_outcome;

pp_status pp_load_sharing_reserve(pp_load_sharing *ls, int n);
void pp_load_sharing_free(pp_load_sharing *ls);
/* z: Lemke's accepted solution of LCP(M, q) (n unknowns, `contacts` contacts, k friction
 * directions; freedoms: 6 x the island's bodies with W_b != 0, a bound on rank(A)), replaced
 * on PP_LOAD_SHARED, when `result`'s residual fields are updated to the new z. M dense
 * (column-major), or NULL and A by columns (an island of pp_peg_csc_min_n unknowns or more).
 * lemke_basis (optional): its basis. lcp: a Lemke workspace of capacity >= n (its contents
 * are overwritten). o: the options of the solve (tolerances, budget). */
pp_load_sharing_outcome pp_load_sharing_apply(pp_load_sharing *ls, pp_lcp_workspace *lcp,
                                              int n, const double *M, const struct pp_lcp_csc *A,
                                              const double *q, int contacts, int k,
                                              int freedoms, const pp_lcp_options *o,
                                              const unsigned char *lemke_basis, double *z,
                                              pp_lcp_result *result);
/* Before Lemke, for an island by columns (A) whose warm start carries a compliant basis
 * (ls->basis, as the caller set it for ls->start): that basis tried as the compliant LCP's
 * (one factorisation, no flip), its limit z0 and the exact acceptance on LCP(A, q) within
 * LS_ACCURACY. PP_LOAD_SHARED: z = z0, result filled (0 pivots, warm_started), ls->found;
 * PP_LOAD_KEPT: nothing written, Lemke is to run. ls->force as for pp_load_sharing_apply. */
pp_load_sharing_outcome pp_load_sharing_kept(pp_load_sharing *ls, const struct pp_lcp_csc *A,
                                             const double *q, const pp_lcp_options *o,
                                             double *z, pp_lcp_result *result);
/* Before Lemke, for an island by columns with no warm start (cold): primal-dual
 * active-set steps on the compliant LCP from a crash basis built from the data (the normals
 * of the contacts with q_p <= 0 and their friction directions basic), at most LS_COLD_STEPS
 * factorisations, then the limit and the exact acceptance as pp_load_sharing_kept. ls->normal,
 * ls->beta, ls->force as for pp_load_sharing_apply. */
pp_load_sharing_outcome pp_load_sharing_cold(pp_load_sharing *ls, const struct pp_lcp_csc *A,
                                             const double *q, int contacts, int k,
                                             const pp_lcp_options *o, double *z,
                                             pp_lcp_result *result);

/* A large island's matrix by columns (peg_mlcp.c csc_assemble): the columns (pp_lcp_csc)
 * and the assembly's scratch (of n, and of the problem's bodies). Grown to the largest
 * island, kept from step to step. */
typedef struct csc_store {
    int *col_start;        /* n + 1 */
    int *row_index;        /* the nonzeros */
    double *values;
    size_t rows_capacity, values_capacity;
    double *acc;           /* n + 1, 0 between columns: one column's entries by row */
    int *stamp, *owner, *kind, *extra; /* n + 1: last column that wrote a row; a column's
                                          set and kind; a column's rows off the body terms */
    size_t n_capacity;
    int *body_local, *body_first; /* bodies + 1 (+ 2): local number; its rows' start */
    size_t body_capacity;
    struct body_row *body_rows; /* every coupled body's rows, sorted by row */
    size_t body_rows_capacity;
} csc_store;

typedef struct dense_store {
    double *M, *island_q, *island_z;
    unsigned char *island_basis;
    int *island_map;
    int *island_blocks;    /* the island's contact blocks and set slacks, 2 n
                              (pp_peg_contact_blocks) */
    int capacity;          /* n the vectors hold */
    int matrix_capacity;   /* order of the matrix M holds (below PP_LCP_SPARSE_MIN_N while
                              solving: larger islands have their own, peg_mlcp.c) */
    pp_lcp_workspace *lcp;
    int lcp_capacity;      /* n the Lemke workspace holds */
    pp_load_sharing load;  /* load sharing's arrays (grown with the island) */
    struct pp_sticking *sticking; /* the sticking solve's (lcp_sticking.c), when it ran */
    csc_store csc;         /* a large island's matrix by columns */
} dense_store;

/* Islands without joint rows of at least this many unknowns assemble M by columns and are
 * solved by pp_lcp_solve_csc (peg_mlcp.c); a test may lower it (>= PP_LCP_SPARSE_MIN_N) to
 * compare the two paths on a moderate island, and restores it. Returns the previous value. */
int pp_peg_csc_min_n(int n);
/* Islands of at least this many unknowns (by columns) try the sticking solve before Lemke
 * (peg_mlcp.c, PP_PEG_STICKING_MIN_N = 1000); a test may lower it to run it on a moderate
 * island, and restores it. Returns the previous value. */
int pp_peg_sticking_min_n(int n);
/* The fewest unknowns of an island that is declined (peg_mlcp.c, "Declined islands"); also
 * the fewest from which screening starts a cold island's rounds from its known sets
 * (peg_screen.c, "A partly known landing"). */
#ifndef PP_PEG_DECLINE_MIN_N
#define PP_PEG_DECLINE_MIN_N 8000
#endif
/* A test may lower the decline's size to decline a moderate island, and restores it. Returns
 * the previous value. */
int pp_peg_decline_min_n(int n);

#define JAC(ws, row, side) (&(ws)->jac[(((size_t)(row)) * 2 + (side)) * 6])
#define RJAC(ws, set, axis, side) (&(ws)->rjac[((((size_t)(set)) * 3 + (axis)) * 2 + (side)) * 6])
#define RWJAC(ws, set, axis, side) \
    (&(ws)->rwjac[((((size_t)(set)) * 3 + (axis)) * 2 + (side)) * 6])
#define WJAC(ws, k, set, col, side) \
    (&(ws)->wjac[((((size_t)(set)) * ((k) + 1) + (col)) * 2 + (side)) * 6])

/* W_b g: body b's inverse mass and world inverse inertia applied to a Jacobian block
 * g = (linear, angular), the velocity change of b per unit impulse along g. */
static inline void apply_inverse_mass(const pp_mlcp_body *body, const double g[6], double wg[6])
{
    const double *Ji = body->inv_inertia;
    for (int r = 0; r < 3; ++r) {
        wg[r] = body->inv_mass * g[r];
        wg[3 + r] = Ji[3 * r] * g[3] + Ji[3 * r + 1] * g[4] + Ji[3 * r + 2] * g[5];
    }
}

static inline double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* Where the unknowns of a list of sets go, for the whole LCP or one island's: both are laid
 * out [p (ns); c (K); beta (nf k, set-major); sigma (nf); rolling (nr)] over the list's sets
 * in increasing set order, the rolling part 3 per rolling axis (g+, g-, s; mlcp.h). The
 * arrays are indexed by a set's index in the problem. */
typedef struct lcp_layout {
    int ns, K, nf, k;
    const int *position;  /* set -> its p index; NULL: the set's own index (the whole LCP) */
    const int *slack;     /* set -> its first slack among the list's K; NULL (K = 0): no
                             slack unknowns, every set laid out as its primary alone, the
                             LCP of PEG's sets reduced to their primaries (solve_islands) */
    const int *friction;  /* set -> its slot among the list's nf frictional sets, -1 if none */
    int nr;               /* rolling unknowns of the list */
    const int *roll;      /* set -> its first rolling unknown among the list's nr */
} lcp_layout;

static inline int layout_size(const lcp_layout *L)
{
    return L->ns + L->K + L->nf * (L->k + 1) + L->nr;
}

/* The whole LCP of the last pp_peg_solve. */
static inline lcp_layout whole_layout(const pp_peg_workspace *ws)
{
    lcp_layout L = {ws->last_ns, ws->last_K, ws->frictional, ws->last_k, NULL, ws->slack_first,
                    ws->friction_slot, ws->roll_unknowns, ws->roll_first};
    return L;
}

/* LCP index of rolling unknown u of set j: axis u / 3, g+ (u % 3 = 0), g- (1), s (2). */
static inline int roll_index(const lcp_layout *L, int j, int u)
{
    return L->ns + L->K + L->nf * (L->k + 1) + L->roll[j] + u;
}

/* LCP index of row r of set j (r = 0 normal, 1..k friction, k+1.. slacks); -1 for the
 * friction rows of a frictionless set and for the slack rows of a layout without slacks. The
 * LCP is square: this is also the index of the row's own unknown (p, beta_r or c_r). */
static inline int row_index(const lcp_layout *L, int j, int r)
{
    if (r == 0) return L->position ? L->position[j] : j;
    if (r <= L->k) return L->friction[j] < 0 ? -1 : L->ns + L->K + L->friction[j] * L->k + (r - 1);
    return L->slack ? L->ns + L->slack[j] + (r - L->k - 1) : -1;
}

/* LCP index of impulse column l of set j (l = 0 normal, 1..k friction): the unknown of row l;
 * -1 for the friction columns of a frictionless set. */
static inline int col_index(const lcp_layout *L, int j, int l)
{
    return row_index(L, j, l);
}

/* LCP index of sigma of set j (frictional sets only). */
static inline int sigma_index(const lcp_layout *L, int j)
{
    return L->ns + L->K + L->nf * L->k + L->friction[j];
}

/* The contact blocks of the LCP of layout L over the sets list[0..count) in blocks[0..n) for
 * pp_lcp_options.contact_block (pegplus/lcp.h): each set's p, betas and sigma carry the index
 * of its p; slacks, rolling and the n - layout_size(L) joint unknowns after them carry -1.
 * In blocks[n..2n) pp_lcp_options.set_slack: each slack of an I/X set the index of its p (a
 * set's slacks are consecutive, L's slack part), -1 elsewhere. */
static inline void pp_peg_contact_blocks(const lcp_layout *L, const int *list, int count, int n,
                                         int *blocks)
{
    for (int a = 0; a < n; ++a) blocks[a] = -1;
    for (int t = 0; t < count; ++t) {
        const int j = list[t], P = row_index(L, j, 0);
        blocks[P] = P;
        if (L->friction[j] < 0) continue;
        for (int r = 1; r <= L->k; ++r) blocks[row_index(L, j, r)] = P;
        blocks[sigma_index(L, j)] = P;
    }
    for (int a = 0; a < n; ++a) blocks[n + a] = -1;
    for (int t = 0; L->K > 0 && t < count; ++t) {
        const int j = list[t], P = row_index(L, j, 0);
        const int end = t + 1 < count ? L->slack[list[t + 1]] : L->K;
        for (int r = L->slack[j]; r < end; ++r) blocks[n + L->ns + r] = P;
    }
}

/* Joint rows: the LCP unknowns of a row (pegplus/peg.h pp_joint_row). */
enum { JOINT_EQUALITY = 1, JOINT_PLUS = 2, JOINT_PLUS_BOUND = 4, JOINT_MINUS = 8,
       JOINT_MINUS_BOUND = 16 };

struct pp_lcp_csc;
/* Constraint screening of a large island (peg_screen.c, whose comment has the math): the LCP
 * solved on the sets that can be active, the others completed and verified row by row. On
 * *answered = 1 the island's z, z_motion and basis bytes are written (an exact answer of the
 * whole island's LCP), `result` holds its solves and the whole island's residual bounds and
 * *solved_n the unknowns of the LCP solved; *answered = 0: solve the whole island as without
 * screening, and *mark: the gate's bit (PP_PEG_SCREEN_CAPPED or 0) for the bytes of the
 * primaries' reduction if it answers. may_decline: the island would be declined cold
 * (peg_mlcp.c, "Declined islands", but for its warm start); then *first_contact = 1 when the
 * warm basis holds no set's p basic and some set closes at the free motion (w_p < -tol
 * max|q|: a set only touching, w_p = 0 to rounding, is in S_0 but is no first contact;
 * peg_mlcp.c, "A first contact"): no round is run, the caller declines the island. Errors:
 * out of memory. */
pp_status pp_peg_screen_island(pp_peg_workspace *ws, const pp_peg_problem *pp,
                               const lcp_layout *whole, const int *island, int count, int s,
                               int n,
                               const pp_lcp_options *options, unsigned char *basis,
                               pp_peg_stats *stats, pp_lcp_result *result, int *answered,
                               int *solved_n, unsigned char *mark, int may_decline,
                               int *first_contact);
void pp_peg_screen_free(pp_peg_workspace *ws);
/* Screening on (1, the default) or off (0, every island solved whole), for tests comparing the
 * two; returns the previous setting. */
int pp_peg_screening(int on);
/* The gate's cap divisor (peg_screen.c SCREEN_LEMKE_CHEAP: the capped rounds pivot at most
 * n / divisor times, at least once), for tests that make the cap bind; a divisor < 1 is
 * ignored; returns the previous divisor. */
int pp_peg_screen_lemke_cheap(int divisor);
/* peg_mlcp.c's island storage and assembly by columns, for the screened LCP: room for an LCP
 * of n unknowns (its q, z, basis, map and Lemke workspace), and the columns of the sets
 * `list` under layout L (sets of the problem not in L have L->position -1). */
pp_status pp_peg_island_reserve(pp_peg_workspace *ws, int n);
pp_status pp_peg_csc_assemble(const pp_peg_workspace *ws, const pp_peg_problem *pp,
                              const lcp_layout *L, const int *list, int count, int n,
                              csc_store *c, struct pp_lcp_csc *A);
/* The warm-start basis bytes (pegplus/peg.h "basis"): bit 0 Lemke's basis, bit 1 the
 * compliant basis of load sharing, bit 2 (by columns) load sharing ran from the basis of bit 0
 * and left the answer as it was (solve_islands' `repeat`). */
#define PP_PEG_SHARING_RAN 4
/* The sticking solve (lcp_sticking.c, peg_mlcp.c sticking_island): on every unknown of an
 * island it answered, its active set in bit 0; on the sigma of a contact it let slide; on
 * every unknown of an island where it was refused (not tried the next step). */
#define PP_PEG_STICKING 8
#define PP_PEG_STICKING_SLIDES 16
#define PP_PEG_STICKING_REFUSED 32
/* Constraint screening's gate on an island the primaries' reduction takes (peg_screen.c,
 * pp_peg_screen_island): on every unknown of an island the reduction answered after
 * screening's capped round hit its cap (kept while the reduction answers it; screening not
 * tried while most of the island's sets carry it). */
#define PP_PEG_SCREEN_CAPPED 64
/* Whether load sharing may change an island's answer: an island of n unknowns with K slacks,
 * joint_count joint rows and `rolls` rolling unknowns (solve_islands has the reasons). */
int pp_peg_may_share(const pp_peg_workspace *ws, const pp_peg_problem *pp, int n, int K,
                     int joint_count, int rolls);
/* map[a]: the whole LCP's index of unknown a of layout L over the sets `list`. */
void pp_peg_island_map(const pp_peg_workspace *ws, const lcp_layout *L, const lcp_layout *whole,
                       const int *list, int count, int *map);
/* Load sharing on a screened island's LCP by columns (peg_mlcp.c, pp_peg_share_screened). */
pp_status pp_peg_share_screened(pp_peg_workspace *ws, const lcp_layout *L, const int *list,
                                int count, int s, int n, const struct pp_lcp_csc *A,
                                const pp_lcp_options *options, const unsigned char *basis,
                                int from_basis, pp_lcp_result *r, int *outcome);

pp_status pp_peg_joints_validate(const pp_peg_problem *pp);
pp_status pp_peg_joints_reserve(pp_peg_workspace *ws, int ns, int nj, int nb);
pp_status pp_peg_joints_reserve_whole(pp_peg_workspace *ws, int n);
void pp_peg_joints_build(pp_peg_workspace *ws, const pp_peg_problem *pp);
void pp_peg_joints_rhs(pp_peg_workspace *ws, const pp_peg_problem *pp);
int pp_peg_joints_islands(pp_peg_workspace *ws, int ns, int nb);
pp_status pp_peg_joints_island(pp_peg_workspace *ws, const pp_peg_problem *pp,
                               const lcp_layout *L, const int *sets, int set_count,
                               const int *joints, int joint_count, int n, double *M, double *q);
void pp_peg_joints_recover(pp_peg_workspace *ws, const int *joints, int joint_count, int n_contact,
                           const double *z);
void pp_peg_joints_velocities(const pp_peg_workspace *ws, const pp_peg_problem *pp,
                              double *velocity);
void pp_peg_joints_free(pp_peg_workspace *ws);

/* PEG's sets reduced to their primaries (peg_screen.c pp_peg_primaries_island, whose comment
 * has the derivation): 1 when an island of n unknowns with K slacks takes the reduction
 * (K > 0, its reduced LCP of n - K unknowns large enough for the sticking solve, no joint
 * rows, rolling friction or compliance: pp_peg_may_share with K = 0). */
int pp_peg_primaries_may(const pp_peg_workspace *ws, const pp_peg_problem *pp, int n, int K,
                         int joint_count, int rolls);
/* The sticking solve (peg_mlcp.c sticking_entry; Lemke where it finds Lemke's warm basis
 * solving the LCP as it stands) of the LCP of layout R over the sets `list` (count of them, n
 * unknowns): R without slacks (slack NULL). On *answered its z is in ws->dense->island_z, its
 * basis bytes (bit 0 and the sticking solve's bits) in island_basis and R's map in
 * island_map; r: its counters (Lemke's pivots on the sticking solve's Q also when refused).
 * `basis`: the caller's whole-indexed bytes (read only). Errors: out of memory. */
pp_status pp_peg_primaries_solve(pp_peg_workspace *ws, const pp_peg_problem *pp,
                                 const lcp_layout *whole, const lcp_layout *R, const int *list,
                                 int count, int n, const pp_lcp_options *options,
                                 const unsigned char *basis, pp_lcp_result *r, int *answered);
/* A large PEG island (pp_peg_primaries_may) answered through the LCP of its sets' primaries,
 * the I/X sets' slacks completed and the answer accepted on the island's own LCP (layout
 * `island`, n unknowns). On *answered the island's z, z_motion and basis bytes are written
 * (`mark` or'ed into every byte: screening's gate, pp_peg_screen_island), `result` holds the solves' counters and the island's residuals; 0: solve the island as
 * before (result: the pivots spent). Errors: out of memory. */
pp_status pp_peg_primaries_island(pp_peg_workspace *ws, const pp_peg_problem *pp,
                                  const lcp_layout *whole, const lcp_layout *island,
                                  const int *list, int count, int n,
                                  const pp_lcp_options *options, unsigned char *basis,
                                  unsigned char mark, pp_peg_stats *stats,
                                  pp_lcp_result *result, int *answered);

#endif
