/* A dense column-major n x n matrix M (M[i + j n] = M_ij) by columns for the LCP's sparse
 * paths (pp_lcp_csc): its nonzeros and every diagonal entry (which the sparse paths need
 * present), rows increasing. Shared by the contact/ Check suites that build their LCPs dense. */
#ifndef PP_CONTACT_LCP_COLUMNS_H
#define PP_CONTACT_LCP_COLUMNS_H

#include "pegplus/lcp.h"

#include <check.h>
#include <stdlib.h>

typedef struct columns {
    int *col_start, *row_index;
    double *values;
    pp_lcp_csc A; /* on the arrays above */
} columns;

static inline void to_columns(int n, const double *M, columns *c)
{
    c->col_start = malloc((size_t)(n + 1) * sizeof *c->col_start);
    c->row_index = malloc((size_t)n * n * sizeof *c->row_index);
    c->values = malloc((size_t)n * n * sizeof *c->values);
    ck_assert(c->col_start && c->row_index && c->values);
    int p = 0;
    for (int j = 0; j < n; ++j) {
        c->col_start[j] = p;
        for (int i = 0; i < n; ++i) {
            const double a = M[i + (size_t)j * n];
            if (a == 0.0 && i != j) continue;
            c->row_index[p] = i;
            c->values[p++] = a;
        }
    }
    c->col_start[n] = p;
    c->A.n = n;
    c->A.col_start = c->col_start;
    c->A.row_index = c->row_index;
    c->A.values = c->values;
}

static inline void free_columns(columns *c)
{
    free(c->col_start);
    free(c->row_index);
    free(c->values);
}

#endif
