/*
 * islands100 stepped N times (standard or PEG, T threads, clock-free, k = 4: the benchmark's
 * settings) for counting where a step's instructions go: docs/performance.md "Threads: the end
 * of the sub-step on the workers". Prints CPU and wall per step and the stage timers.
 * Build (from the worktree's root, after build-rel):
 *   gcc -O2 -g -o /tmp/islands-serial docs/prototypes/islands-serial.c -Iplugin/include \
 *       -Icontact/include -Iimpact/include -Iexamples/scenes build-rel/examples/libpp_scenes.a \
 *       -Lbuild-rel -lpegplus -lode -lm -Wl,-rpath,$PWD/build-rel
 * Run: valgrind --tool=callgrind /tmp/islands-serial 60 1 [peg]; serial = pp_world_step's
 * inclusive instructions less run_island_job's (callgrind_annotate --inclusive=yes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "pegplus/pegplus.h"
#include "scenes.h"

static double clock_of(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: islands-serial STEPS THREADS [peg]\n");
        return 1;
    }
    int steps = atoi(argv[1]), threads = atoi(argv[2]);
    int peg = argc > 3 && !strcmp(argv[3], "peg");
    pp_scenes_init_ode();
    pp_scene s;
    pp_scene_islands(&s, 100, 0.0, 1);
    pp_config c = pp_config_default();
    c.model = peg ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    c.friction_directions = 4;
    c.threads = threads;
    c.lcp_budget_seconds = 0.0;
    pp_world *w;
    if (pp_world_create(s.world, s.space, &c, &w) != PP_OK) return 1;
    double c0 = clock_of(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_of(CLOCK_MONOTONIC);
    double ts[PP_STAGE_COUNT] = {0.0};
    for (int i = 0; i < steps; ++i) {
        if (pp_world_step(w, 0.01) != PP_OK) {
            printf("step %d failed\n", i);
            return 2;
        }
        const pp_step_stats *st = pp_world_get_stats(w);
        for (int k = 0; k < PP_STAGE_COUNT; ++k) ts[k] += st->time_stage[k];
    }
    printf("steps %d threads %d cpu/step %.1f us wall/step %.1f us\n", steps, threads,
           (clock_of(CLOCK_PROCESS_CPUTIME_ID) - c0) / steps * 1e6,
           (clock_of(CLOCK_MONOTONIC) - w0) / steps * 1e6);
    for (int k = 0; k < PP_STAGE_COUNT; ++k) printf(" stage%d %.1f", k, ts[k] / steps * 1e6);
    printf("\n");
    pp_world_destroy(w);
    pp_scene_destroy(&s);
    return 0;
}
