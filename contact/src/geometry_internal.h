/* Private to contact/: small vector helpers and the core-shape support used by gjk.c. */
#ifndef PP_CONTACT_GEOMETRY_INTERNAL_H
#define PP_CONTACT_GEOMETRY_INTERNAL_H

#include "pegplus/geometry.h"

#include <math.h>

static inline double pp_v3_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void pp_v3_cross(double out[3], const double a[3], const double b[3])
{
    double x = a[1] * b[2] - a[2] * b[1];
    double y = a[2] * b[0] - a[0] * b[2];
    double z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* The helpers below read their operands before they write out (out may be an operand), in
 * straight lines: as loops, -O2 kept them as loops through the stack in every caller. */
static inline void pp_v3_sub(double out[3], const double a[3], const double b[3])
{
    double x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static inline void pp_v3_add(double out[3], const double a[3], const double b[3])
{
    double x = a[0] + b[0], y = a[1] + b[1], z = a[2] + b[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* out = a + s * b */
static inline void pp_v3_axpy(double out[3], const double a[3], double s, const double b[3])
{
    double x = a[0] + s * b[0], y = a[1] + s * b[1], z = a[2] + s * b[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static inline void pp_v3_scale(double out[3], double s, const double a[3])
{
    double x = s * a[0], y = s * a[1], z = s * a[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static inline void pp_v3_copy(double out[3], const double a[3])
{
    double x = a[0], y = a[1], z = a[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static inline double pp_v3_norm(const double a[3]) { return sqrt(pp_v3_dot(a, a)); }

static inline int pp_v3_finite(const double a[3])
{
    return isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]);
}

/* out = R a (R row-major) */
static inline void pp_m3_mul(double out[3], const double R[9], const double a[3])
{
    double x = R[0] * a[0] + R[1] * a[1] + R[2] * a[2];
    double y = R[3] * a[0] + R[4] * a[1] + R[5] * a[2];
    double z = R[6] * a[0] + R[7] * a[1] + R[8] * a[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* out = R^T a */
static inline void pp_m3_tmul(double out[3], const double R[9], const double a[3])
{
    double x = R[0] * a[0] + R[3] * a[1] + R[6] * a[2];
    double y = R[1] * a[0] + R[4] * a[1] + R[7] * a[2];
    double z = R[2] * a[0] + R[5] * a[1] + R[8] * a[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* PP_OK when every vertex of p lies on or below every face plane, eta_f . v <= d_f + tol
 * (the convexity half of the polytope checks, polytope.c: O((V + F) log V) for hulls, not
 * O(V F)); PP_ERR_DEGENERATE with a message naming a vertex and a face otherwise;
 * PP_ERR_NO_MEMORY. */
pp_status pp_polytope_vertices_below_faces(const pp_polytope *p, double tol);

/* Support of a polytope in a body-frame direction (vertex index). */
int pp_polytope_support_index(const pp_polytope *poly, const double dir[3]);

/*
 * A shape as core + radius: a sphere is its centre plus its radius, a capsule its segment plus
 * its radius, a box or polytope itself with radius 0. GJK and EPA run on cores (polytopes:
 * their Minkowski differences are polytopes, where both are exact), radii are added after.
 */
double pp_shape_core_radius(const pp_shape *shape);
void pp_shape_core_support(const pp_shape *shape, const double dir[3], double out[3]);

#endif
