/* The random generator of the scene library: the same sequence on every machine. */
#ifndef PP_SCENE_RANDOM_H
#define PP_SCENE_RANDOM_H

#include <math.h>

/* splitmix64 (Steele, Lea, Flood 2014): a 64-bit state advanced by a Weyl step and mixed;
 * small, fast, and the same sequence on every machine (unlike rand()). */
static inline unsigned long long pp_splitmix64(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double pp_uniform01(unsigned long long *state)
{
    return (double)(pp_splitmix64(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniformly random unit quaternion (w, x, y, z) (Shoemake, Graphics Gems III). */
static inline void pp_random_quaternion(unsigned long long *state, double q[4])
{
    const double two_pi = 6.283185307179586476925286766559;
    double u1 = pp_uniform01(state), u2 = pp_uniform01(state), u3 = pp_uniform01(state);
    double a = sqrt(1.0 - u1), b = sqrt(u1);
    q[0] = a * sin(two_pi * u2);
    q[1] = a * cos(two_pi * u2);
    q[2] = b * sin(two_pi * u3);
    q[3] = b * cos(two_pi * u3);
}

#endif
