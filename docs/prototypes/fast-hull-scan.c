/* Fast-hull scan (a diagnostic driver, not part of the build): the set-up of
 * integration_tests/check_peg_fast_hulls.c (an 8 cm and a 2 cm random 15-point hull, the small
 * one shot along -x at SPEED with a random offset and spin; no gravity, clock-free), run for
 * STEPS steps of H; prints the small hull's end velocity ("stopped": |v_x| <= SPEED / 2), the
 * largest one-step relative kinetic-energy gain, the largest exact overlap volume after a step
 * and the most sub-steps of a step. Used for README "Known problems", fast pairs.
 *
 *   cc -O2 -Icontact/include -Iplugin/include -Iimpact/include -o /tmp/fast-hull-scan \
 *      docs/prototypes/fast-hull-scan.c -Lbuild -lpegplus -lode -lm -Wl,-rpath,$PWD/build
 *   for m in 1 0; do for v in 25 50; do for s in $(seq 1 15); do
 *     /tmp/fast-hull-scan $m $v 0 $s 0.01 30; done; done; done      # h = 0.01, 30 steps
 *   (the same with 0.0005 100 for h = 5e-4, 100 steps)
 *
 * Arguments: MODEL (1 PEG, 0 standard) SPEED MU SEED H STEPS. Environment: RELIN=N sets
 * relinearize_iterations, STEPLOG prints every step. */
#include "pegplus/geometry.h"
#include "pegplus/overlap.h"
#include "pegplus/peg.h"
#include "pegplus/pegplus.h"
#include <ode/ode.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
static uint64_t g_rng;
static double uniform(double lo, double hi)
{
    g_rng ^= g_rng << 13; g_rng ^= g_rng >> 7; g_rng ^= g_rng << 17;
    return lo + (hi - lo) * (double)(g_rng >> 11) * (1.0 / 9007199254740992.0);
}
static void body_pose(dBodyID b, double x[3], double R[9])
{
    const dReal *p = dBodyGetPosition(b), *r = dBodyGetRotation(b);
    for (int i = 0; i < 3; ++i) { x[i] = p[i]; for (int j = 0; j < 3; ++j) R[3 * i + j] = r[4 * i + j]; }
}
static double ke(dBodyID b)
{
    dMass m; dBodyGetMass(b, &m);
    const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b), *R = dBodyGetRotation(b);
    double wb[3]; for (int k = 0; k < 3; ++k) wb[k] = R[k] * w[0] + R[4 + k] * w[1] + R[8 + k] * w[2];
    double rot = 0; for (int r = 0; r < 3; ++r) for (int c = 0; c < 3; ++c) rot += wb[r] * m.I[4 * r + c] * wb[c];
    return 0.5 * m.mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * rot;
}
static void discard(pp_log_level l, const char *m, void *u) { (void)l; (void)m; (void)u; }
int main(int argc, char **argv)
{
    int model = atoi(argv[1]); double speed = atof(argv[2]), mu = atof(argv[3]);
    int seed = atoi(argv[4]); double h = atof(argv[5]); int steps = atoi(argv[6]);
    g_rng = 0x9E3779B97F4A7C15ull + 0x1234567ull * (uint64_t)seed;
    pp_set_log_hook(discard, NULL);
    dInitODE2(0);
    dWorldID world = dWorldCreate(); dSpaceID space = dHashSpaceCreate(0);
    dWorldSetGravity(world, 0, 0, 0);
    pp_config config = pp_config_default();
    config.model = model ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    config.surface.mu = mu; config.lcp_budget_seconds = 0; if (getenv("RELIN")) config.relinearize_iterations = atoi(getenv("RELIN"));
    pp_world *pw = NULL;
    if (pp_world_create(world, space, &config, &pw) != PP_OK) return 2;
    const double size[2] = {0.08, 0.02}, mass[2] = {0.3, 0.01};
    pp_polytope *poly[2]; dBodyID body[2];
    for (int k = 0; k < 2; ++k) {
        double pts[45];
        for (int i = 0; i < 45; ++i) pts[i] = uniform(-0.5, 0.5) * size[k];
        pp_polytope_from_points(pts, 15, &poly[k]);
        double c[3] = {poly[k]->centroid[0], poly[k]->centroid[1], poly[k]->centroid[2]};
        pp_polytope_destroy(poly[k]);
        for (int i = 0; i < 15; ++i) for (int r = 0; r < 3; ++r) pts[3 * i + r] -= c[r];
        pp_polytope_from_points(pts, 15, &poly[k]);
        dGeomID geom; pp_convex_create(pw, space, pts, 15, &geom);
        body[k] = dBodyCreate(world);
        dMass m; dMassSetSphereTotal(&m, mass[k], size[k] / 2); dBodySetMass(body[k], &m);
        dGeomSetBody(geom, body[k]);
    }
    dBodySetPosition(body[0], 0, 0, 0);
    dBodySetPosition(body[1], 0.3 + uniform(0, 0.2), uniform(-0.02, 0.02), uniform(-0.02, 0.02));
    dBodySetLinearVel(body[1], -speed, uniform(-1, 1), uniform(-1, 1));
    dBodySetAngularVel(body[1], uniform(-20, 20), uniform(-20, 20), uniform(-20, 20));
    double e0 = ke(body[0]) + ke(body[1]), e = e0, maxgain = 0, maxov = 0;
    int maxsub = 0, fails = 0, fb = 0;
    for (int step = 0; step < steps; ++step) {
        if (pp_world_step(pw, h) != PP_OK) fails++;
        const pp_step_stats *s = pp_world_get_stats(pw);
        if (s->substeps > maxsub) maxsub = s->substeps;
        fb += s->peg_fallback + (s->lcp_fallback >= 2);
        double xa[3], Ra[9], xb[3], Rb[9], v = 0;
        body_pose(body[0], xa, Ra); body_pose(body[1], xb, Rb);
        pp_overlap_volume(poly[0], xa, Ra, poly[1], xb, Rb, &v);
        if (v > maxov) maxov = v;
        if (getenv("STEPLOG")) fprintf(stderr, "step %d: substeps %d contacts %d overlap %.3g ke %.6g x %.4f vx %.3f relin %d refused %d\n", step, s->substeps, s->contacts, v, ke(body[0]) + ke(body[1]), dBodyGetPosition(body[1])[0], dBodyGetLinearVel(body[1])[0], s->relinearize_cut, s->relinearize_refused);
        double en = ke(body[0]) + ke(body[1]);
        if ((en - e) / e > maxgain) maxgain = (en - e) / e;
        e = en;
    }
    const dReal *v1 = dBodyGetLinearVel(body[1]), *x1 = dBodyGetPosition(body[1]);
    printf("x %+.2f %+.3f %+.3f v %+.1f %+.1f %+.1f | ", x1[0], x1[1], x1[2], v1[0], v1[1], v1[2]);
    printf("%s %g mu %g seed %d h %g: vx %+.3f (%s) KE %.3f->%.3f gain %.2g overlap %.2g substeps %d fails %d fb %d\n",
           model ? "peg" : "std", speed, mu, seed, h, v1[0], -v1[0] <= 0.5 * speed ? "stopped" : "THROUGH",
           e0, e, maxgain, maxov, maxsub, fails, fb);
    return 0;
}
