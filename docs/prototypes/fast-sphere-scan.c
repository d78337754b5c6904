/* Fast pairs with a sphere (a diagnostic driver, not part of the build): the set-up of
 * docs/prototypes/fast-hull-scan.c (the same draws by seed: offsets, shot, spin) with either
 * body's shape chosen: BIG (8 cm, 0.3 kg, at rest at the origin) and SMALL (2 cm, 0.01 kg,
 * shot along -x at SPEED) each "hull" (the scan's random 15-point hull), "sphere" (diameter 8
 * or 2 cm), "box" (a cube of that side) or "capsule" (radius a quarter of the size, length
 * half of it). No gravity, clock-free, STEPS steps of H. Prints the small body's end velocity
 * ("stopped": |v_x| <= SPEED / 2), the largest one-step relative kinetic-energy gain, the
 * deepest end-of-step penetration (pp_shape_distance; for two hulls also the exact overlap
 * volume) and the most sub-steps of a step.
 *
 *   cc -O2 -Icontact/include -Iplugin/include -Iimpact/include -o /tmp/fast-sphere-scan \
 *      docs/prototypes/fast-sphere-scan.c -Lbuild-rel -lpegplus -lode -lm \
 *      -Wl,-rpath,$PWD/build-rel
 *   for m in 1 0; do for v in 25 50; do for s in $(seq 1 15); do
 *     /tmp/fast-sphere-scan $m $v 0 $s 0.01 30 sphere hull; done; done; done
 *
 * Arguments: MODEL (1 PEG, 0 standard) SPEED MU SEED H STEPS BIG SMALL. Environment: STEPLOG
 * prints every step, RELIN=N sets relinearize_iterations. */
#include "pegplus/geometry.h"
#include "pegplus/overlap.h"
#include "pegplus/pegplus.h"
#include <ode/ode.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
typedef struct shape_def { int kind; double size; pp_polytope *poly; } shape_def;
static pp_shape posed(const shape_def *d, dBodyID b)
{
    double x[3], R[9];
    body_pose(b, x, R);
    const double len[3] = {d->size, d->size, d->size};
    switch (d->kind) {
    case 1: return pp_shape_make_sphere(0.5 * d->size, x);
    case 2: return pp_shape_make_box(len, x, R);
    case 3: return pp_shape_make_capsule(0.25 * d->size, 0.5 * d->size, x, R);
    default: return pp_shape_make_polytope(d->poly, x, R);
    }
}
/* The small body's centre x (world) in the big body's frame at pose (xa, Ra). */
static void in_frame(const double x[3], const double xa[3], const double Ra[9], double out[3])
{
    for (int i = 0; i < 3; ++i)
        out[i] = Ra[i] * (x[0] - xa[0]) + Ra[3 + i] * (x[1] - xa[1]) + Ra[6 + i] * (x[2] - xa[2]);
}
/* The least signed distance from the chord p0-p1 (the big body's frame) to the big shape at
 * rest at the origin: < 0 where the small body's centre went inside it during the step. */
static double chord_distance(const shape_def *d, const double p0[3], const double p1[3])
{
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, o[3] = {0, 0, 0};
    const double len[3] = {d->size, d->size, d->size};
    pp_shape big = d->kind == 1 ? pp_shape_make_sphere(0.5 * d->size, o)
                 : d->kind == 2 ? pp_shape_make_box(len, o, I)
                 : d->kind == 3 ? pp_shape_make_capsule(0.25 * d->size, 0.5 * d->size, o, I)
                                : pp_shape_make_polytope(d->poly, o, I);
    double least = HUGE_VAL;
    for (int k = 0; k <= 400; ++k) {
        double x[3];
        for (int i = 0; i < 3; ++i) x[i] = p0[i] + (p1[i] - p0[i]) * k / 400.0;
        pp_shape pt = pp_shape_make_sphere(1e-9, x);
        pp_proximity pr;
        if (pp_shape_distance(&big, &pt, &pr) == PP_OK && pr.distance < least) least = pr.distance;
    }
    return least;
}
static int kind_of(const char *s)
{
    return !strcmp(s, "sphere") ? 1 : !strcmp(s, "box") ? 2 : !strcmp(s, "capsule") ? 3 : 0;
}
int main(int argc, char **argv)
{
    if (argc < 9) { fprintf(stderr, "MODEL SPEED MU SEED H STEPS BIG SMALL\n"); return 2; }
    int model = atoi(argv[1]); double speed = atof(argv[2]), mu = atof(argv[3]);
    int seed = atoi(argv[4]); double h = atof(argv[5]); int steps = atoi(argv[6]);
    shape_def def[2] = {{kind_of(argv[7]), 0.08, NULL}, {kind_of(argv[8]), 0.02, NULL}};
    g_rng = 0x9E3779B97F4A7C15ull + 0x1234567ull * (uint64_t)seed;
    pp_set_log_hook(discard, NULL);
    dInitODE2(0);
    dWorldID world = dWorldCreate(); dSpaceID space = dHashSpaceCreate(0);
    dWorldSetGravity(world, 0, 0, 0);
    pp_config config = pp_config_default();
    config.model = model ? PP_MODEL_PEG : PP_MODEL_STANDARD;
    config.surface.mu = mu; config.lcp_budget_seconds = 0;
    if (getenv("RELIN")) config.relinearize_iterations = atoi(getenv("RELIN"));
    pp_world *pw = NULL;
    if (pp_world_create(world, space, &config, &pw) != PP_OK) return 2;
    const double mass[2] = {0.3, 0.01};
    dBodyID body[2];
    for (int k = 0; k < 2; ++k) {
        const double size = def[k].size;
        double pts[45];
        for (int i = 0; i < 45; ++i) pts[i] = uniform(-0.5, 0.5) * size; /* drawn for every kind */
        dGeomID geom;
        if (def[k].kind == 1) geom = dCreateSphere(space, 0.5 * size);
        else if (def[k].kind == 2) geom = dCreateBox(space, size, size, size);
        else if (def[k].kind == 3) geom = dCreateCapsule(space, 0.25 * size, 0.5 * size);
        else {
            pp_polytope *p;
            pp_polytope_from_points(pts, 15, &p);
            double c[3] = {p->centroid[0], p->centroid[1], p->centroid[2]};
            pp_polytope_destroy(p);
            for (int i = 0; i < 15; ++i) for (int r = 0; r < 3; ++r) pts[3 * i + r] -= c[r];
            pp_polytope_from_points(pts, 15, &def[k].poly);
            pp_convex_create(pw, space, pts, 15, &geom);
        }
        body[k] = dBodyCreate(world);
        dMass m; dMassSetSphereTotal(&m, mass[k], size / 2); dBodySetMass(body[k], &m);
        dGeomSetBody(geom, body[k]);
    }
    dBodySetPosition(body[0], 0, 0, 0);
    dBodySetPosition(body[1], 0.3 + uniform(0, 0.2), uniform(-0.02, 0.02), uniform(-0.02, 0.02));
    dBodySetLinearVel(body[1], -speed, uniform(-1, 1), uniform(-1, 1));
    dBodySetAngularVel(body[1], uniform(-20, 20), uniform(-20, 20), uniform(-20, 20));
    double e0 = ke(body[0]) + ke(body[1]), e = e0, maxgain = 0, maxov = 0, maxdepth = 0;
    int maxsub = 0, fails = 0, fb = 0, met = 0, through = 0;
    double least_chord = HUGE_VAL;
    for (int step = 0; step < steps; ++step) {
        double xa0[3], Ra0[9], p0[3], p1[3];
        body_pose(body[0], xa0, Ra0);
        in_frame(dBodyGetPosition(body[1]), xa0, Ra0, p0);
        if (pp_world_step(pw, h) != PP_OK) fails++;
        const pp_step_stats *s = pp_world_get_stats(pw);
        if (s->substeps > maxsub) maxsub = s->substeps;
        met |= s->contacts > 0;
        fb += s->peg_fallback + (s->lcp_fallback >= 2);
        double v = 0;
        if (def[0].poly && def[1].poly) {
            double xa[3], Ra[9], xb[3], Rb[9];
            body_pose(body[0], xa, Ra); body_pose(body[1], xb, Rb);
            pp_overlap_volume(def[0].poly, xa, Ra, def[1].poly, xb, Rb, &v);
            if (v > maxov) maxov = v;
        }
        double xa1[3], Ra1[9];
        body_pose(body[0], xa1, Ra1);
        in_frame(dBodyGetPosition(body[1]), xa1, Ra1, p1);
        const double chord = chord_distance(&def[0], p0, p1);
        if (chord < least_chord) least_chord = chord;
        through += chord < 0.0;
        pp_shape a = posed(&def[0], body[0]), b = posed(&def[1], body[1]);
        pp_proximity pr;
        double depth = 0;
        if (pp_shape_distance(&a, &b, &pr) == PP_OK && pr.distance < 0) depth = -pr.distance;
        if (depth > maxdepth) maxdepth = depth;
        double en = ke(body[0]) + ke(body[1]);
        if (getenv("STEPLOG"))
            fprintf(stderr, "step %d: substeps %d contacts %d lcp %d depth %.3g ke %.9g x %.4f "
                            "vx %.3f cut %d chord %.3g\n", step, s->substeps, s->contacts, s->lcp_size,
                    depth, en, dBodyGetPosition(body[1])[0], dBodyGetLinearVel(body[1])[0],
                    s->relinearize_cut, chord);
        if ((en - e) / e > maxgain) maxgain = (en - e) / e;
        e = en;
    }
    const dReal *v1 = dBodyGetLinearVel(body[1]), *x1 = dBodyGetPosition(body[1]);
    printf("x %+.2f %+.3f %+.3f v %+.1f %+.1f %+.1f | ", x1[0], x1[1], x1[2], v1[0], v1[1], v1[2]);
    printf("%s %s<-%s %g mu %g seed %d h %g: vx %+.3f (%s) KE %.4f->%.4f gain %.2g depth %.2g "
           "overlap %.2g chord %.2g (%s) substeps %d fails %d fb %d%s\n",
           model ? "peg" : "std", argv[7], argv[8], speed, mu, seed, h, v1[0],
           -v1[0] <= 0.5 * speed ? "stopped" : "THROUGH", e0, e, maxgain, maxdepth, maxov, least_chord, through ? "CROSSED" : "outside", maxsub,
           fails, fb, met ? "" : " NEVER-MET");
    return 0;
}
