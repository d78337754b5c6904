/* The random generator of the scene library: the same sequence on every machine. */
#ifndef PP_SCENE_RANDOM_H
#define PP_SCENE_RANDOM_H

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

#endif
