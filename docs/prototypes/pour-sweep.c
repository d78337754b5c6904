/* PEG pouring sweep driver (a diagnostic, not part of the build): check_peg_pouring's
 * configuration for one seed (examples/scenes/pouring.h, 500 steps), the exact overlap volume
 * after every step; the last line "seed S h H mu MU worst V step K steps_over N refused R
 * projected P largest D" (P steps post-stabilised, D their largest displacement, m).
 * Used for README "Known problems", PEG's pouring (docs/performance.md, the eighteenth
 * session's merged main).
 *
 *   cc -O2 -Icontact/include -Iplugin/include -Iimpact/include -Iexamples/scenes \
 *      -o /tmp/pour docs/prototypes/pour-sweep.c build/examples/libpp_scenes_pouring.a \
 *      build/examples/libpp_scenes.a -Lbuild -lpegplus -lode -lm -Wl,-rpath,$PWD/build
 *   seq 1 200 | xargs -P2 -I{} /tmp/pour {} 0.01 0 | grep '^seed' | sort -k2 -n > mu0.txt
 *   awk '$8 + 0 > 1e-12' mu0.txt                       # the seeds over 1e-12 m^3
 *
 * Arguments: SEED H MU [VERBOSE [FROM TO]]; WATCH=STEP prints the overlapping pairs near it. */
#define _POSIX_C_SOURCE 200809L
#include "pegplus/overlap.h"
#include "pegplus/pegplus.h"
#include "pouring.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static void pairs(const pp_pour_scene *s)
{
    int n = s->scene.body_count;
    for (int i = 0; i < n; ++i) {
        double pi[3], Ri[9];
        pp_scene_geom_pose(s->scene.geoms[i], pi, Ri);
        for (int j = 0; j < n + PP_POUR_BLOCKS; ++j) {
            if (j < n && j <= i) continue;
            dGeomID gj = j < n ? s->scene.geoms[j] : s->blocks[j - n];
            const pp_polytope *pj = j < n ? s->body_polytopes[j] : s->block_polytopes[j - n];
            double pos_j[3], Rj[9], v = 0.0;
            pp_scene_geom_pose(gj, pos_j, Rj);
            pp_overlap_volume(s->body_polytopes[i], pi, Ri, pj, pos_j, Rj, &v);
            if (v > 0) printf("   pair hull %d - %s %d: %.3g m^3\n", i, j < n ? "hull" : "block", j < n ? j : j - n, v);
        }
    }
}
static void discard(pp_log_level l, const char *m, void *u) { (void)l; (void)m; (void)u; }
int main(int argc, char **argv)
{
    unsigned long long seed = strtoull(argv[1], 0, 10);
    double h = atof(argv[2]), mu = atof(argv[3]);
    int verbose = argc > 4 ? atoi(argv[4]) : 0;
    int from = argc > 5 ? atoi(argv[5]) : -1, to = argc > 6 ? atoi(argv[6]) : -1;
    pp_set_log_hook(discard, NULL);
    pp_pour_scene pour;
    if (pp_pour_scene_create(&pour, PP_POUR_RANDOM_HULLS, seed) != PP_OK) return 2;
    pp_config config = pp_config_default();
    config.model = PP_MODEL_PEG;
    config.surface.mu = mu;
    config.lcp_budget_seconds = 0.0;
    pp_world *world = NULL;
    if (pp_world_create(pour.scene.world, pour.scene.space, &config, &world) != PP_OK) return 2;
    int steps = (int)lround(5.0 / h), next_drop = 0, worst_step = -1, refused = 0, over = 0;
    double worst = 0.0;
    long piv = 0;
    int projected = 0;
    double moved = 0.0;
    for (int step = 0; step < steps; ++step) {
        if (next_drop < PP_POUR_DROPS && step == pp_pour_drop_step(next_drop, h))
            pp_pour_scene_drop(&pour, world, next_drop++);
        if (step >= from && step <= to) setenv("S16_TRACE", "1", 1); else unsetenv("S16_TRACE");
        if (step >= from && step <= to) fprintf(stderr, "=== step %d\n", step);
        if (pp_world_step(world, h) != PP_OK) { printf("step %d failed\n", step); return 1; }
        const pp_step_stats *st = pp_world_get_stats(world);
        double v = -1.0;
        pp_pour_scene_overlap(&pour, &v);
        refused += st->relinearize_refused;
        projected += st->positions_projected;
        if (st->projection_largest > moved) moved = st->projection_largest;
        if (v > 1e-12) over++;
        if (verbose || (step >= from && step <= to))
            printf("step %d overlap %.3g refused %d relin %d fallback %d/%d projected %d %.3g\n",
                   step, v, st->relinearize_refused, st->relinearizations, st->peg_fallback,
                   st->lcp_fallback, st->positions_projected, st->projection_largest);
        if (v > 1e-12) pairs(&pour);
        if (getenv("WATCH") && step >= atoi(getenv("WATCH")) - 3 && step <= atoi(getenv("WATCH")) + 1) {
            for (int b = 0; b < pour.scene.body_count; ++b) {
                double pb[3], R[9], mn = 1e9, mx = -1e9;
                pp_scene_geom_pose(pour.scene.geoms[b], pb, R);
                const pp_polytope *P = pour.body_polytopes[b];
                for (int k = 0; k < P->vertex_count; ++k) {
                    double x = pb[0];
                    for (int c = 0; c < 3; ++c) x += R[c] * P->vertices[3 * k + c];
                    if (x < mn) mn = x; if (x > mx) mx = x;
                }
                const dReal *vb = dBodyGetLinearVel(pour.scene.bodies[b]);
                const dReal *wb = dBodyGetAngularVel(pour.scene.bodies[b]);
                printf("  step %d hull %d x %.4f %.4f %.4f minx-wall %.6g maxx %.4f v %.4f %.4f %.4f |w| %.3f\n", step, b,
                       pb[0], pb[1], pb[2], mn + 4.875, mx, vb[0], vb[1], vb[2], sqrt(wb[0]*wb[0]+wb[1]*wb[1]+wb[2]*wb[2]));
            }
        }
        if (v > worst) worst = v, worst_step = step;
    }
    printf("seed %llu h %g mu %g worst %.3g step %d steps_over %d refused %d projected %d "
           "largest %.3g\n", seed, h, mu, worst, worst_step, over, refused, projected, moved);
    pp_world_destroy(world);
    pp_pour_scene_destroy(&pour);
    return 0;
}
