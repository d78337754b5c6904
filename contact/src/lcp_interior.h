/* A primal-dual interior-point solve of a monotone LCP by columns (lcp_interior.c has the
 * derivation). */
#ifndef PP_LCP_INTERIOR_H
#define PP_LCP_INTERIOR_H

#include "lcp_internal.h"

struct pp_interior_lu; /* KLU's analysis and factors of the Newton matrix (lcp_interior.c) */

/* Scratch of the solve, grown to the largest LCP, kept; the measures of the last solve. */
typedef struct pp_interior {
    int capacity;                     /* n the arrays hold */
    double *r, *dx, *dv, *dx_aff, *dv_aff, *scale, *rhs; /* n */
    double *Kx;                       /* the Newton matrix's values, on M's pattern */
    size_t k_capacity;
    struct pp_interior_lu *lu;        /* of M's pattern, analysed once per solve */
    /* what the last solve did */
    int iterations;                   /* predictor-corrector iterations */
    int factorisations;               /* klu_factor calls (pivoting chosen anew) */
    int refactorisations;             /* klu_refactor calls (the pivots kept) */
    double gap;                       /* x^T v / n at the end, over ||x||_inf ||q||_inf */
    double infeasibility;             /* ||Mx + q - v||_inf at the end, over ||q||_inf */
} pp_interior;

typedef enum pp_interior_status {
    PP_INTERIOR_CONVERGED = 0,  /* gap and infeasibility below their tolerances */
    PP_INTERIOR_STALLED = 1,    /* no progress (step length ~0) or the iteration cap */
    PP_INTERIOR_FAILED = 2      /* a factorisation failed, refused, or out of memory */
} pp_interior_status;

void pp_interior_free(pp_interior *ip);

/* LCP(M, q): x >= 0, v = M x + q >= 0, x^T v = 0, for M by columns (every diagonal entry
 * present) positive semidefinite (x^T M x >= 0; not necessarily symmetric), by Mehrotra's
 * predictor-corrector from the interior, at most max_iterations Newton systems (each one
 * factorisation of M + X^-1 V on M's pattern, analysed once per call). On return x and v
 * hold the last iterate (x, v > 0), also when it stalled. tol: the gap x^T v / n to reach,
 * relative to ||x||_inf ||q||_inf. deadline: a pp_lcp_clock() time after which no further
 * Newton system is factorised (PP_INTERIOR_STALLED; INFINITY: none). */
pp_interior_status pp_interior_solve(pp_interior *ip, const pp_lcp_csc *M, const double *q,
                                     double tol, int max_iterations, double deadline,
                                     double *x, double *v);

#endif
