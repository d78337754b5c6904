/*
 * Soak seed 1178's island at the start of its step 24 (pegplus-soak --seed 1178): two hulls
 * falling together at 4.8 m/s, apart, with PEG sets whose gaps reach psi = -0.27 m at h = 0.02
 * (their points, masses, poses and velocities as the soak had them) over the ground plane, for
 * the tests of a step's work bounds (check_step_work, check_relinearize_approximate) and of
 * the statistics of the answers applied (check_lcp_stats_applied).
 */
#ifndef PP_IT_HULLS_1178_H
#define PP_IT_HULLS_1178_H

#include "pegplus/pegplus.h"
#include "pegplus/overlap.h"

#include <check.h>
#include <math.h>
#include <string.h>

typedef struct hull_init {
    double mass, I[6];              /* kg; I11 I22 I33 I12 I13 I23, kg m^2 */
    double x[3], q[4], v[3], w[3];  /* m, (w x y z), m/s, rad/s */
    int count;
    double points[36];              /* body frame (centred at the centre of mass), m */
} hull_init;

/* pegplus-soak --seed 1178, start of step 24: bodies 0 and 4 */
static const hull_init HULLS[2] = {
    {76.902379999214062, {1.4940188040732916, 1.3148825064931315, 1.6845085346661723,
      0.24548217095117761, 0.1013880435569889, -0.066133661248342496},
     {-1.6523372508314029, -0.11554804206097688, 0.44303581576520457}, {0.16752347558819899,
      0.10113848032415911, 0.75590828201250548, -0.624747598722454}, {-1.3639981768342861,
      -2.2691434309727483, -4.7125699297255448}, {2.392147399295721, -2.0388706368342264,
      -0.37971989572204551},
     12, {-0.21428488789273925, 0.14948278791275812, 0.21728702505714148, 0.03771688477307332,
      0.13982702997398358, 0.12030434626575935, -0.21360170316675217, 0.21109825009078723,
      -0.16853134324211322, 0.26858199004201655, -0.069939244975103121, -0.088116548710793038,
      0.01686178476808713, -0.19461877678523823, -0.15701446897193105, 0.15427104777979084,
      0.21373829761818194, 0.039370315429760092, 0.23754736499981377, -0.11632951262914726,
      -0.15891136888386215, -0.01070887028166213, -0.2301955498981246, -0.15042805325417108,
      0.041172141880448751, -0.046961705808084619, 0.057309397827120953, -0.057971396843077241,
      -0.2792647068050309, 0.054552164703736181, 0.1520092800212538, -0.064640260471138772,
      0.13356448234845308, -0.0053140547746207238, -0.24503143422247661, 0.12172570932478032}},
      /* body 0 of the soak scene: a 77 kg hull */
    {2.888002885803544, {0.01285115028959842, 0.013261622119155939, 0.011106648425905929,
      -0.0015106504330709202, -0.00033930371903036048, -0.00053518177778324463},
     {-1.5340033065444685, 0.0031243144206793382, 0.15473739022228378}, {-0.44887840945974455,
      -0.83490205043905552, -0.029723178470685369, -0.31711712718670754}, {-0.98037132754937817,
      -1.4557795184808058, -4.8015586806395651}, {5.6262220836442092, 0.25375028421979251,
      -1.5679451945959904},
     12, {0.028969778298842307, -0.04908708299581066, -0.054887895189816328, 0.060250213860932954,
      0.053612752326817781, -0.10175913499646894, -0.11499475163894707, 0.078356680483505581,
      0.037155656326919091, 0.034622284136027547, 0.033218984423369902, 0.010657529226836332,
      0.047272366247477514, 0.027498833902476816, -0.057073970071505407, -0.063720200937155344,
      -0.11230509120111574, -0.10079638701629803, 0.10500744454999468, 0.047619453321312177,
      0.12896254388575684, -0.037423716206253892, 0.012283073680913859, -0.038686106832262861,
      0.10716017142112651, 0.051754531800846215, 0.00054345652351320793, -0.010152563918491793,
      -0.11052645338039473, 0.082094034652111875, -0.11405690858317015, 0.056518658921578202,
      0.013862353580195419, 0.093284433037071915, 0.065699671866267351, -0.12815298813794229}},
      /* body 4: a 2.9 kg hull below it */
};

typedef struct pair_world {
    dWorldID world;
    dSpaceID space;
    pp_world *pp;
    dBodyID body[2];
    dGeomID geom[2];
} pair_world;

/* The two hulls over the ground plane (gravity g) in a pegplus world of configuration c. */
static inline void pp_it_hulls_make(pair_world *p, const pp_config *c, double g)
{
    p->world = dWorldCreate();
    dWorldSetGravity(p->world, 0.0, 0.0, -g);
    p->space = dHashSpaceCreate(0);
    dCreatePlane(p->space, 0.0, 0.0, 1.0, 0.0);
    ck_assert_int_eq(pp_world_create(p->world, p->space, c, &p->pp), PP_OK);
    for (int i = 0; i < 2; ++i) {
        const hull_init *h = &HULLS[i];
        p->body[i] = dBodyCreate(p->world);
        ck_assert_int_eq(pp_convex_create(p->pp, p->space, h->points, h->count, &p->geom[i]), PP_OK);
        dGeomSetBody(p->geom[i], p->body[i]);
        dMass m;
        dMassSetParameters(&m, h->mass, 0, 0, 0, h->I[0], h->I[1], h->I[2], h->I[3], h->I[4], h->I[5]);
        dBodySetMass(p->body[i], &m);
        dBodySetPosition(p->body[i], h->x[0], h->x[1], h->x[2]);
        dBodySetQuaternion(p->body[i], h->q);
        dBodySetLinearVel(p->body[i], h->v[0], h->v[1], h->v[2]);
        dBodySetAngularVel(p->body[i], h->w[0], h->w[1], h->w[2]);
    }
}

/* The pair as the tests of a step's cuts run it: mu 1, no bounce, k = 4, no clock (the cuts
 * are the pivot budget's), gravity g, under `model`. */
static inline void pp_it_hulls_make_unclocked(pair_world *p, pp_model model, double g)
{
    pp_config c = pp_config_default();
    c.model = model;
    c.surface.mu = 1.0;
    c.surface.bounce = 0.0;
    c.friction_directions = 4;
    c.lcp_budget_seconds = 0.0;
    pp_it_hulls_make(p, &c, g);
}

/* The next steps' re-linearisation iterations and pivot budget. */
static inline void pp_it_hulls_set_step(pair_world *p, int relinearize_iterations, long pivots)
{
    pp_config c = pp_world_get_config(p->pp);
    c.relinearize_iterations = relinearize_iterations;
    c.lcp_budget_pivots = pivots;
    ck_assert_int_eq(pp_world_set_config(p->pp, &c), PP_OK);
}

/* Are the hulls of a and b in the same state, bit for bit? */
static inline int pp_it_hulls_same_state(const pair_world *a, const pair_world *b)
{
    for (int i = 0; i < 2; ++i) {
        const dReal *x[4] = {dBodyGetPosition(a->body[i]), dBodyGetQuaternion(a->body[i]),
                             dBodyGetLinearVel(a->body[i]), dBodyGetAngularVel(a->body[i])};
        const dReal *y[4] = {dBodyGetPosition(b->body[i]), dBodyGetQuaternion(b->body[i]),
                             dBodyGetLinearVel(b->body[i]), dBodyGetAngularVel(b->body[i])};
        for (int k = 0; k < 4; ++k)
            if (memcmp(x[k], y[k], (k == 1 ? 4 : 3) * sizeof(dReal)) != 0) return 0;
    }
    return 1;
}

static inline void pp_it_hulls_destroy(pair_world *p)
{
    pp_world_destroy(p->pp);
    dSpaceDestroy(p->space);
    dWorldDestroy(p->world);
}

static inline void pp_it_hulls_pose(const pair_world *p, int i, double x[3], double R[9])
{
    const dReal *r = dBodyGetRotation(p->body[i]);
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) R[3 * a + b] = r[4 * a + b];
    memcpy(x, dBodyGetPosition(p->body[i]), 3 * sizeof(double));
}

/* The largest of the hulls' overlap with each other and with the ground (z <= 0), m^3. */
static inline double pp_it_hulls_overlap(const pair_world *p)
{
    double x[2][3], R[2][9], v = 0.0, worst = 0.0;
    const double up[3] = {0.0, 0.0, 1.0};
    for (int i = 0; i < 2; ++i) pp_it_hulls_pose(p, i, x[i], R[i]);
    ck_assert_int_eq(pp_overlap_volume(pp_convex_polytope(p->pp, p->geom[0]), x[0], R[0],
                                       pp_convex_polytope(p->pp, p->geom[1]), x[1], R[1], &v),
                     PP_OK);
    worst = v;
    for (int i = 0; i < 2; ++i) {
        ck_assert_int_eq(pp_overlap_halfspace_volume(pp_convex_polytope(p->pp, p->geom[i]), x[i],
                                                     R[i], up, 0.0, &v),
                         PP_OK);
        worst = fmax(worst, v);
    }
    return worst;
}

static inline int pp_it_hulls_finite(const pair_world *p, int i)
{
    const dReal *a[4] = {dBodyGetPosition(p->body[i]), dBodyGetQuaternion(p->body[i]),
                         dBodyGetLinearVel(p->body[i]), dBodyGetAngularVel(p->body[i])};
    for (int k = 0; k < 4; ++k)
        for (int j = 0; j < (k == 1 ? 4 : 3); ++j)
            if (!isfinite(a[k][j])) return 0;
    return 1;
}

#endif
