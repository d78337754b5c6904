/*
 * pegplus/overlap.h — exact volume of the intersection of two posed convex polytopes, and of
 * a posed polytope with a half-space: the overlap metric of the PEG experiments (PEG
 * Sec. 6, "total overlap volume between bodies after every step"; docs/references.md).
 *
 * Conventions (besides those of base.h and geometry.h):
 *  - A pose is position[3] and a rotation R[9], row-major: world = R * local + position.
 *  - Volumes in m^3. A result is >= 0 and finite; separated polytopes, and polytopes that
 *    only touch (share a face, an edge or a vertex), give exactly 0.
 *  - "Touching" has a width: a point counts as lying on a plane when its signed distance is
 *    within PP_OVERLAP_THIN_RELATIVE * scale of it, scale = |centre_a| + radius_a +
 *    |centre_b| + radius_b + |position_a - position_b| (centres and radii of the polytopes,
 *    body frames). An overlap thinner than that (~1e-13 m for bodies of 1 m a few metres
 *    apart) is reported as 0; anything thicker is measured exactly up to round-off (a slab
 *    1e-6 m thick to 1e-8 relative, tested).
 *  - Every call returns a pp_status; on failure a message goes to the log hook and *volume is
 *    left untouched.
 *
 * Method (no sampling, no tolerance on the volume itself): the polytope with the smaller
 * radius is clipped, in its own body frame, by the face planes of the other one in turn. Each
 * clip cuts every face loop by the plane (Sutherland–Hodgman) and closes the cut with a cap
 * face on the plane; a plane that leaves every vertex inside (or on it) changes nothing, one
 * that leaves none strictly inside empties the result. The volume of the final polytope is a
 * sum of tetrahedra over its faces (divergence theorem). Cost O(F_b * total face-loop length)
 * with F_b the other polytope's face count: about 7 us for two 15-point hulls. The scratch
 * arrays are allocated per call, sized from the face counts (they grow only if round-off
 * produces more crossings than a convex polytope can have), and freed before returning.
 */
#ifndef PEGPLUS_OVERLAP_H
#define PEGPLUS_OVERLAP_H

#include "pegplus/base.h"
#include "pegplus/geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Width of "touching", relative to the scale above (64 ulp). */
#define PP_OVERLAP_THIN_RELATIVE 1.4210854715202004e-14

/*
 * Volume of A ∩ B for A posed at (pos_a, R_a) and B at (pos_b, R_b); the polytopes are in
 * their body frames (pp_polytope_from_points, pp_polytope_box). V(A, B) and V(B, A) are the
 * same bits (the same polytope is cut either way).
 * Returns PP_OK and *volume, or
 *   PP_ERR_NULL_ARGUMENT     a pointer is NULL;
 *   PP_ERR_INVALID_ARGUMENT  a position or rotation entry is NaN/Inf, or a rotation is not
 *                            orthonormal with det +1 (|R^T R - I| > 1e-9);
 *   PP_ERR_NUMERICAL         the volume came out non-finite (not expected);
 *   PP_ERR_NO_MEMORY.
 */
pp_status pp_overlap_volume(const pp_polytope *a, const double pos_a[3], const double R_a[9],
                            const pp_polytope *b, const double pos_b[3], const double R_b[9],
                            double *volume);

/*
 * Volume of the part of the posed polytope inside the world half-space
 * {x : normal . x <= offset}, normal unit. Example: how far a body has sunk into a floor that
 * fills z <= 0 is normal (0, 0, 1), offset 0. A single clip: cheaper than pp_overlap_volume
 * with a large box. The thin width is PP_OVERLAP_THIN_RELATIVE * (|centre| + radius +
 * |position| + |offset|).
 * Returns PP_OK and *volume, or PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT (non-finite
 * pose, offset or normal, normal not unit within 1e-9, R not a rotation), PP_ERR_NUMERICAL,
 * PP_ERR_NO_MEMORY.
 */
pp_status pp_overlap_halfspace_volume(const pp_polytope *poly, const double position[3],
                                      const double R[9], const double normal[3], double offset,
                                      double *volume);

#ifdef __cplusplus
}
#endif
#endif /* PEGPLUS_OVERLAP_H */
