/*
 * lcp_timing: solve LCP instance files (pp_lcp_instance_load) many times with pp_lcp_solve
 * and print, per file, n, pivots, refactorisations, status, relative residual and the time
 * per solve (the best of `repeats` rounds of `count` solves: the machine is shared, the
 * minimum is the least disturbed). A program, not a test.
 *
 *   lcp_timing [--count K] [--repeats R] [--csv out.csv] file.lcp ...
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "pegplus/lcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int count = 0, repeats = 3;
    const char *csv_path = NULL;
    int first = 1;
    while (first < argc && strncmp(argv[first], "--", 2) == 0) {
        if (!strcmp(argv[first], "--count") && first + 1 < argc) count = atoi(argv[++first]);
        else if (!strcmp(argv[first], "--repeats") && first + 1 < argc) repeats = atoi(argv[++first]);
        else if (!strcmp(argv[first], "--csv") && first + 1 < argc) csv_path = argv[++first];
        else {
            fprintf(stderr, "usage: %s [--count K] [--repeats R] [--csv out] file.lcp ...\n", argv[0]);
            return 2;
        }
        ++first;
    }
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv) fprintf(csv, "file,n,status,pivots,refactorisations,extended,attempts,rel_residual,us_per_solve\n");
    printf("%-40s %5s %-18s %7s %5s %3s %4s %9s %12s\n", "file", "n", "status", "pivots", "refac",
           "ext", "att", "rel", "us/solve");
    double total_us = 0.0;
    for (int f = first; f < argc; ++f) {
        pp_lcp_instance inst;
        if (pp_lcp_instance_load(argv[f], &inst) != PP_OK) {
            fprintf(stderr, "cannot load %s\n", argv[f]);
            continue;
        }
        const int n = inst.n;
        pp_lcp_workspace *ws;
        if (pp_lcp_workspace_create(n, &ws) != PP_OK) return 1;
        double *z = malloc((size_t)n * sizeof *z);
        pp_lcp_result r;
        /* enough solves for ~0.2 s per round at the first solve's speed */
        double t0 = now_seconds();
        pp_lcp_solve(ws, n, inst.M, inst.q, NULL, NULL, z, &r);
        double once = now_seconds() - t0;
        int k = count > 0 ? count : (int)(0.2 / (once > 1e-7 ? once : 1e-7));
        if (k < 1) k = 1;
        if (k > 100000) k = 100000;
        double best = 1e300;
        for (int rep = 0; rep < repeats; ++rep) {
            t0 = now_seconds();
            for (int i = 0; i < k; ++i) pp_lcp_solve(ws, n, inst.M, inst.q, NULL, NULL, z, &r);
            double t = (now_seconds() - t0) / k;
            if (t < best) best = t;
        }
        const char *name = strrchr(argv[f], '/');
        name = name ? name + 1 : argv[f];
        printf("%-40s %5d %-18s %7d %5d %3d %4d %9.2g %12.1f\n", name, n,
               pp_lcp_status_string(r.status), r.pivots, r.refactorisations, r.extended,
               r.attempts, r.relative_residual, best * 1e6);
        if (csv)
            fprintf(csv, "%s,%d,%s,%d,%d,%d,%d,%.3g,%.2f\n", name, n,
                    pp_lcp_status_string(r.status), r.pivots, r.refactorisations, r.extended,
                    r.attempts, r.relative_residual, best * 1e6);
        total_us += best * 1e6;
        free(z);
        pp_lcp_workspace_destroy(ws);
        pp_lcp_instance_free(&inst);
    }
    printf("total %.1f us\n", total_us);
    if (csv) fclose(csv);
    return 0;
}
