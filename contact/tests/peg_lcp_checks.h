/* A check shared by the contact/ suites that solve PEG islands: the workspace's answer is an
 * answer of the whole island's LCP (pp_peg_last_lcp, dense) by lcp.h's acceptance:
 * rel(z) <= tol, z >= 0 and r(z) <= 1e-4 ||q||. */
#ifndef PP_CONTACT_PEG_LCP_CHECKS_H
#define PP_CONTACT_PEG_LCP_CHECKS_H

#include "pegplus/lcp.h"
#include "pegplus/peg.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

static inline void expect_peg_lcp_solved(pp_peg_workspace *ws, double tol)
{
    int n;
    const double *M, *q;
    pp_peg_last_lcp(ws, &n, &M, &q);
    ck_assert_int_gt(n, 0);
    double *w = malloc(sizeof(double) * (size_t)n);
    ck_assert(w);
    pp_lcp_result e;
    pp_lcp_evaluate(n, M, q, ws->z, w, &e);
    double qmax = 0.0;
    for (int i = 0; i < n; ++i) qmax = fmax(qmax, fabs(q[i]));
    ck_assert_msg(e.relative_residual <= tol, "PEG LCP: rel(z) = %g", e.relative_residual);
    ck_assert_msg(e.residual <= 1e-4 * qmax, "PEG LCP: r(z) = %g, |q| = %g", e.residual, qmax);
    ck_assert_msg(e.min_z >= 0.0, "PEG LCP: min z = %g", e.min_z);
    free(w);
}

#endif
