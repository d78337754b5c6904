/*
 * Soak seed 1246's box and hull at the start of the sub-step of step 79 in which they touch
 * (pegplus-soak --seed 1246 --model peg; the step of h = 0.005 split at impacts, this
 * sub-step starting 1.365 ms into it with 3.635 ms left): a 46.7 kg box and a 0.037 kg hull
 * spinning at 321 rad/s, 0.67 mm apart and closing at 4.10 m/s along the facet of their
 * Minkowski difference that separates them; they touch 0.164 ms later. Their masses,
 * inertias, poses and velocities as the library had them, the hull's points centred at its
 * centre of mass as the soak made them (pp_polytope_mass_properties), for
 * check_peg_apart_primary.
 */
#ifndef PP_IT_BOX_HULL_1246_H
#define PP_IT_BOX_HULL_1246_H

#include <ode/ode.h>

#define BOX_HULL_1246_H 0.0036349190411820802 /* s: the rest of the soak's step */
#define BOX_HULL_1246_TOUCH 0.00016444911886576231 /* s: the sub-step to the touch */

typedef struct box_hull_body {
    double mass, I[9];             /* kg; body-frame inertia about the centre of mass, kg m^2 */
    double x[3], q[4], v[3], w[3]; /* m, (w x y z), m/s, rad/s */
} box_hull_body;

/* the box (soak body 2) and the hull (soak body 1) */
static const box_hull_body BOX_HULL_1246[2] = {
    {46.738463426894526,
     {0.82450974933502652, 0, 0, 0, 1.3443719132368182, 0, 0, 0, 1.3777696839083355},
     {1.6617849894498689, -1.1630628953626052, 0.6355078278665911},
     {0.60159698132276673, 0.43129128259296606, -0.57739898839647907, -0.34449863544195886},
     {1.9483106734810081, -1.5943716254010429, 3.8972016507026961},
     {4.3916565133078151, 5.8422223915049925, 2.1231212864870517}},
    {0.036543958080920029,
     {2.1581789170268348e-05, -1.4436692100996673e-05, 3.63287280952241e-06,
      -1.4436692100996673e-05, 2.0091037154325611e-05, 1.4438551881241341e-06,
      3.63287280952241e-06, 1.4438551881241341e-06, 3.2896182423175454e-05},
     {1.5195778580591177, -0.87295118503069113, 0.69438093844034554},
     {0.52256675846036205, -0.25876089094467219, -0.45298823861311693, 0.67436521258731541},
     {1.2574182881793527, -1.5357356643522317, -1.3691826267494867},
     {36.753026544064049, 275.5198451624866, -160.48361259496625}},
};

/* the box's sides, m */
static const double BOX_1246_SIDES[3] = {0.49356503985398575, 0.33186285669886567,
                                         0.31868189443329925};

/* the hull's 5 points, body frame, m */
static const double HULL_1246_POINTS[15] = {
    -0.031862467987204005, -0.051964862613770993, 0.0016670345229159245,
    0.047464817000368677,  0.051130544677657777,  -0.032430288129175089,
    -0.02621874084588096,  -0.054564828670075075, -0.018175716549214065,
    -0.051789822527080455, -0.017323175350106797, 0.028706507965760207,
    0.046875775741385968,  0.041982908063416188,  0.01487948493435607};

/* Body i of the pair in `world`. */
static inline dBodyID pp_it_box_hull_body(dWorldID world, int i)
{
    const box_hull_body *s = &BOX_HULL_1246[i];
    dBodyID b = dBodyCreate(world);
    dMass m;
    dMassSetParameters(&m, s->mass, 0, 0, 0, s->I[0], s->I[4], s->I[8], s->I[1], s->I[2], s->I[5]);
    dBodySetMass(b, &m);
    dBodySetPosition(b, s->x[0], s->x[1], s->x[2]);
    dBodySetQuaternion(b, s->q);
    dBodySetLinearVel(b, s->v[0], s->v[1], s->v[2]);
    dBodySetAngularVel(b, s->w[0], s->w[1], s->w[2]);
    return b;
}

#endif
