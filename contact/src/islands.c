/* Contact islands of the time-stepping LCPs (islands_internal.h). */
#include "islands_internal.h"

#include <math.h>

/* Union-find root of row i, with path halving. */
static int find_root(int *root, int i)
{
    while (root[i] != i) {
        root[i] = root[root[i]]; /* path halving */
        i = root[i];
    }
    return i;
}

int pp_islands_find(int rows, int bodies, const unsigned char *coupled,
                    const int *incidence_first, const int *incidence, int *root, int *scratch,
                    int *island_first, int *members)
{
    int *number = scratch;
    for (int i = 0; i < rows; ++i) root[i] = i;
    for (int b = 0; b < bodies; ++b) {
        if (!coupled[b]) continue;
        int first = incidence_first[b], last = incidence_first[b + 1];
        for (int e = first + 1; e < last; ++e) {
            int a = find_root(root, incidence[first] / 2);
            int c = find_root(root, incidence[e] / 2);
            if (a != c) root[a > c ? a : c] = a < c ? a : c; /* smaller index is the root */
        }
    }
    /* Roots are the smallest row of their island; number islands in root order. */
    int islands = 0;
    for (int i = 0; i < rows; ++i) {
        int r = find_root(root, i);
        root[i] = r;
        if (r == i) number[i] = islands++;
    }
    for (int s = 0; s <= islands; ++s) island_first[s] = 0;
    for (int i = 0; i < rows; ++i) ++island_first[number[root[i]] + 1];
    for (int s = 0; s < islands; ++s) island_first[s + 1] += island_first[s];
    for (int i = 0; i < rows; ++i) root[i] = number[root[i]]; /* root[] now: island of i */
    int *fill = scratch;
    for (int s = 0; s < islands; ++s) fill[s] = island_first[s];
    for (int i = 0; i < rows; ++i) members[fill[root[i]]++] = i;
    return islands;
}

void pp_lcp_result_merge(pp_lcp_result *all, const pp_lcp_result *r, int first)
{
    if (first) {
        *all = *r;
        return;
    }
    if (all->status == PP_LCP_SOLVED) all->status = r->status;
    all->pivots += r->pivots;
    all->refactorisations += r->refactorisations;
    all->factor_work_exceeded += r->factor_work_exceeded;
    all->warm_started = all->warm_started || r->warm_started; /* the callers' solve_islands */
    all->warm_lemke = all->warm_lemke || r->warm_lemke;
    all->extended = all->extended || r->extended;
    all->attempts += r->attempts;
    all->epsilon = fmax(all->epsilon, r->epsilon);
    all->residual = fmax(all->residual, r->residual);
    all->relative_residual = fmax(all->relative_residual, r->relative_residual);
    all->scale = fmax(all->scale, r->scale);
    all->min_z = fmin(all->min_z, r->min_z);
    all->min_w = fmin(all->min_w, r->min_w);
    all->complementarity = fmax(all->complementarity, r->complementarity);
    all->fallback = all->fallback || r->fallback;
    all->fallback_iterations += r->fallback_iterations;
    all->fallback_work += r->fallback_work;
    all->fallback_cut = all->fallback_cut || r->fallback_cut;
    all->budget_exhausted = all->budget_exhausted || r->budget_exhausted;
    all->seconds += r->seconds;
}
