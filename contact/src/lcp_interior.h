/* A primal-dual interior-point solve of a monotone LCP by columns (lcp_interior.c has the
 * derivation). */
#ifndef PP_LCP_INTERIOR_H
#define PP_LCP_INTERIOR_H

#include "lcp_internal.h"

struct pp_interior_lu; /* KLU's analysis and factors of the Newton matrix (lcp_interior.c) */
struct pp_interior_augmented; /* the augmented (body-space) Newton matrix (lcp_interior.c) */

/* The bodies behind M, where the caller has them (the sticking solve's island, peg_mlcp.c):
 * M = L + G^T W G, G the contact Jacobian columns (6 rows per dynamic body, body d's rows
 * 6d .. 6d + 5, rows increasing in each column), W = blockdiag(W_d) the bodies' inverse mass
 * and inertia (symmetric PSD 6 x 6 each), L the rest of M, zero between unknowns of different
 * groups (a contact's p, beta, sigma: its cone rows and eps D). pp_interior_solve checks it
 * (M - G^T W G vanishes to rounding outside the groups, else it is refused) and solves the
 * Newton systems in the augmented form (lcp_interior.c); n = 0: none given, the Newton matrix
 * on M's pattern. Filled by the caller through pp_interior_bodies_reserve. */
typedef struct pp_interior_bodies {
    int n;                            /* unknowns described (0: no description) */
    int bodies;                       /* dynamic bodies: G has 6 bodies rows */
    int *group;                       /* n: each unknown's group */
    int *col_start;                   /* n + 1: G by columns */
    int *row_index;                   /* G's rows, increasing in each column */
    double *values;
    double *W;                        /* 36 bodies: W_d column-major */
    int capacity, body_capacity;
    size_t entry_capacity;
} pp_interior_bodies;

/* Scratch of the solve, grown to the largest LCP, kept; the measures of the last solve. */
typedef struct pp_interior {
    int capacity;                     /* n the arrays hold */
    double *r, *dx, *dv, *dx_aff, *dv_aff, *scale, *rhs; /* n */
    double *Kx;                       /* the Newton matrix's values, on M's pattern */
    size_t k_capacity;
    struct pp_interior_lu *lu;        /* of the Newton matrix, analysed once per solve */
    pp_interior_bodies bodies;        /* the caller's description of M, or n = 0 */
    const double *start;              /* the caller's, for the next solve only (it clears
                                         it): n values near the answer's x (an answer of a
                                         nearby LCP), moved into the interior as the start;
                                         NULL: the cold start */
    int first_order;                  /* the caller's, for the next solve only (it clears
                                         it): 1, the corrector without Mehrotra's
                                         second-order term (for a problem that is not
                                         monotone: lcp_interior.c "Not monotone") */
    /* the caller's, for the next solve only (it clears them): every stop_every iterations
     * the iterate x is handed to stop(stop_context, x); nonzero ends the solve there
     * (PP_INTERIOR_STALLED, stopped = 1), x and v holding that iterate. For a problem whose
     * answer the caller accepts by its own test before the gap closes (lcp_sticking.c, the
     * creeping round) */
    int (*stop)(void *stop_context, const double *x);
    void *stop_context;
    int stop_every;
    struct pp_interior_augmented *aug;
    /* what the last solve did */
    int iterations;                   /* predictor-corrector iterations */
    int warm;                         /* 1: it started from ip->start */
    int stopped;                      /* 1: ended by the caller's stop test */
    int factorisations;               /* klu_factor calls (pivoting chosen anew) */
    int refactorisations;             /* klu_refactor calls (the pivots kept) */
    double gap;                       /* x^T v / n at the end, over ||x||_inf ||q||_inf */
    double infeasibility;             /* ||Mx + q - v||_inf at the end, over ||q||_inf */
    int augmented;                    /* 1: the Newton systems were solved in the augmented
                                         form (the description held), 0: on M's pattern */
    int newton_order;                 /* order of the Newton matrix factorised */
    double newton_entries;            /* its nonzeros */
    double newton_fill;               /* KLU's symbolic lnz + unz of it */
    double description_error;         /* largest |M - G^T W G| between groups, over
                                         sqrt((G^T W G)_ii (G^T W G)_jj) (the description's) */
} pp_interior;

typedef enum pp_interior_status {
    PP_INTERIOR_CONVERGED = 0,  /* gap and infeasibility below their tolerances */
    PP_INTERIOR_STALLED = 1,    /* no progress (step length ~0) or the iteration cap */
    PP_INTERIOR_FAILED = 2      /* a factorisation failed, refused, or out of memory */
} pp_interior_status;

void pp_interior_free(pp_interior *ip);

/* Room for a description of n unknowns, `bodies` dynamic bodies and `entries` nonzeros of G
 * in ip->bodies (ip->bodies.n is set to n, bodies to `bodies`): PP_OK or PP_ERR_NO_MEMORY
 * (then no description: n = 0). */
pp_status pp_interior_bodies_reserve(pp_interior *ip, int n, int bodies, size_t entries);

/* LCP(M, q): x >= 0, v = M x + q >= 0, x^T v = 0, for M by columns (every diagonal entry
 * present) positive semidefinite (x^T M x >= 0; not necessarily symmetric), by Mehrotra's
 * predictor-corrector from the interior, at most max_iterations Newton systems (each one
 * factorisation of M + X^-1 V on M's pattern, or of its augmented form where ip->bodies
 * describes M, analysed once per call), from ip->start where given. On return x and v
 * hold the last iterate (x, v > 0), also when it stalled. tol: the gap x^T v / n to reach,
 * relative to ||x||_inf ||q||_inf. deadline: a pp_lcp_clock() time after which no further
 * Newton system is factorised (PP_INTERIOR_STALLED; INFINITY: none). */
pp_interior_status pp_interior_solve(pp_interior *ip, const pp_lcp_csc *M, const double *q,
                                     double tol, int max_iterations, double deadline,
                                     double *x, double *v);

#endif
