/* Private to contact/: what the two time-stepping LCPs (mlcp.c, the standard model's; peg_mlcp.c,
 * PEG's) share to be solved one contact island at a time. */
#ifndef PP_CONTACT_ISLANDS_INTERNAL_H
#define PP_CONTACT_ISLANDS_INTERNAL_H

#include "pegplus/lcp.h"

/*
 * Islands: the connected components of "rows sharing a coupled body", as a CSR list
 * (island_first[0..islands], members), islands numbered in the order of their smallest row and
 * listing their rows in increasing order. A row is a contact (mlcp.c) or a set (peg_mlcp.c);
 * incidence[incidence_first[b] .. incidence_first[b + 1]) lists body b's row sides as
 * row * 2 + side; only bodies with coupled[b] join rows. root (rows) ends holding the island
 * of every row; scratch needs `rows` ints. Returns the number of islands.
 */
int pp_islands_find(int rows, int bodies, const unsigned char *coupled,
                    const int *incidence_first, const int *incidence, int *root, int *scratch,
                    int *island_first, int *members);

/* Fold an island's LCP result r into the step's, all (the first island's is copied): the
 * status of the first failure, counters summed, residuals, epsilon, scale and
 * complementarity the largest, min_z and min_w the smallest, warm flags or-ed. */
void pp_lcp_result_merge(pp_lcp_result *all, const pp_lcp_result *r, int first);

#endif
