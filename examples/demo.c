/*
 * pegplus-demo: a few boxes and spheres dropped onto a plane, run under stock ODE
 * (dWorldStep and dWorldQuickStep, through PP_MODEL_ODE) and under the pegplus models on the
 * same scene, printed side by side: maximum penetration over the run, final kinetic energy,
 * time per step, and how the run ended.
 *
 * Usage: pegplus-demo [seconds] [h]      (defaults 3 s, h = 0.01)
 */
#include "pegplus/pegplus.h"
#include "scenes.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct run_result {
    int steps;
    double max_penetration, final_energy, us_per_step;
    pp_status status;
    double stopped_at;
} run_result;

static run_result run(pp_model model, pp_ode_stepper stepper, double seconds, double h)
{
    pp_scene scene;
    pp_scene_drop(&scene);
    pp_config config = pp_config_default();
    config.model = model;
    config.ode_stepper = stepper;
    pp_world *world = NULL;
    run_result r = {0, 0.0, 0.0, 0.0, PP_OK, -1.0};
    r.status = pp_world_create(scene.world, scene.space, &config, &world);
    int steps = (int)(seconds / h + 0.5);
    double time = 0.0;
    for (int i = 0; i < steps && r.status == PP_OK; ++i) {
        r.status = pp_world_step(world, h);
        if (r.status != PP_OK) {
            r.stopped_at = i * h;
            break;
        }
        time += pp_world_get_stats(world)->time_total;
        r.steps++;
        double p = pp_scene_max_penetration(&scene);
        if (p > r.max_penetration) r.max_penetration = p;
    }
    r.final_energy = pp_scene_kinetic_energy(&scene);
    r.us_per_step = r.steps ? 1e6 * time / r.steps : 0.0;
    pp_world_destroy(world);
    pp_scene_destroy(&scene);
    return r;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    double h = argc > 2 ? atof(argv[2]) : 0.01;
    if (!(seconds > 0.0) || !(h > 0.0)) {
        fprintf(stderr, "usage: %s [seconds > 0] [h > 0]\n", argv[0]);
        return 2;
    }
    pp_set_log_hook(pp_log_discard, NULL); /* the table says how each run ended */

    struct {
        const char *label;
        pp_model model;
        pp_ode_stepper stepper;
    } runs[] = {
        {"ODE dWorldStep", PP_MODEL_ODE, PP_ODE_WORLD_STEP},
        {"ODE dWorldQuickStep", PP_MODEL_ODE, PP_ODE_QUICK_STEP},
        {"pegplus standard", PP_MODEL_STANDARD, PP_ODE_WORLD_STEP},
        {"pegplus PEG", PP_MODEL_PEG, PP_ODE_WORLD_STEP},
    };
    printf("pegplus %s demo: 2 boxes + 2 spheres dropped on a plane, %.2f s at h = %g\n\n",
           PP_VERSION_STRING, seconds, h);
    printf("%-22s %7s %16s %16s %10s  %s\n", "model", "steps", "max penetr. (m)",
           "final KE (J)", "us/step", "result");
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; ++i) {
        run_result r = run(runs[i].model, runs[i].stepper, seconds, h);
        char result[128];
        if (r.status == PP_OK)
            snprintf(result, sizeof result, "completed");
        else
            snprintf(result, sizeof result, "stopped at t = %.2f s: %s", r.stopped_at,
                     pp_status_string(r.status));
        printf("%-22s %7d %16.3e %16.6f %10.1f  %s\n", runs[i].label, r.steps, r.max_penetration,
               r.final_energy, r.us_per_step, result);
    }
    return 0;
}
