/* Shared by the integration tests that check energy: one body's mechanical energy. */
#ifndef PP_IT_ENERGY_H
#define PP_IT_ENERGY_H

#include <ode/ode.h>

/* Kinetic energy of body b, J: m |v|^2 / 2 + w_b^T I w_b / 2, w_b = R^T w the angular
 * velocity in the body frame (dMass's I is about the centre of mass in body axes; R is ODE's
 * 3 x 4 row-major rotation). */
static inline double pp_it_kinetic_energy(dBodyID b)
{
    dMass m;
    dBodyGetMass(b, &m);
    const dReal *v = dBodyGetLinearVel(b), *w = dBodyGetAngularVel(b), *R = dBodyGetRotation(b);
    double wb[3] = {0, 0, 0}, rot = 0.0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) wb[r] += R[4 * c + r] * w[c];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) rot += wb[r] * m.I[4 * r + c] * wb[c];
    return 0.5 * (m.mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + rot);
}

/* Kinetic plus gravitational energy of body b, J, with gravity g (m/s^2) along -z. */
static inline double pp_it_body_energy(dBodyID b, double g)
{
    dMass m;
    dBodyGetMass(b, &m);
    return pp_it_kinetic_energy(b) + m.mass * g * dBodyGetPosition(b)[2];
}

#endif
