/*
 * pegplus/narrowphase.h — the contacts between two posed shapes (docs/design.md "One step"): the
 * feature pairs of polytopes (pegplus/features.h) and closest-point contacts of smooth shapes.
 *
 * Conventions as in features.h: each contact has n the unit normal from the FIRST shape (A)
 * to the SECOND (B), p_a on A, psi the gap (> 0 apart), p_b = p_a + psi n; body and shape
 * indices are -1 and mu 0 for the caller to fill. Only contacts with psi < eps are reported.
 *
 *   box/polytope – box/polytope   vertex–face, face–vertex, edge–edge (pp_features_polytopes);
 *                                 a box is its 8-vertex polytope
 *   box/polytope – plane          the polytope's vertices below eps (pp_features_polytope_plane)
 *   sphere – anything             one closest-point contact (pp_shape_distance), any depth;
 *                                 against a box/polytope also each vertex within eps (gap
 *                                 |v - c| - r, normal along v - c) not at that contact (1e-6 m)
 *   capsule – plane               the two end spheres, each when within eps (a capsule lying
 *                                 on a plane gets 2 contacts)
 *   capsule – box/polytope/capsule  the end spheres' contacts, plus the closest-point contact of
 *                                 the whole capsule when it is not at an end (1e-6 m); against
 *                                 a box/polytope also each vertex within eps (gap to the
 *                                 segment less the radius) not at one of those (1e-6 m)
 *   capsule – sphere              the same: the end spheres' contacts and the closest point
 *   cylinder – plane              exact rim points: per cap its lowest rim point and 7 more
 *                                 rim points 45 degrees apart, each when within eps (lying:
 *                                 the two ends of the line contact; standing: an octagon)
 *   cylinder – sphere             one closest-point contact (closed form, exact)
 *   cylinder – anything else      the cylinder's inscribed prism turned to put an edge at the
 *                                 exact closest point (pegplus/geometry.h "Cylinders",
 *                                 pp_shape_pair_form), as a polytope above, plus the exact
 *                                 closest points of the pair and of the cylinders' end discs
 *                                 that those miss (pp_narrowphase_cylinder_closest)
 * Fallback: a polytope pair that pp_shape_distance finds within eps but whose feature rules
 * give no contact (deeper than -eps, or vertex–edge / vertex–vertex configurations the
 * standard model does not classify) gets one closest-point contact, so no near pair is left
 * unconstrained. Plane–plane: PP_ERR_UNSUPPORTED.
 */
#ifndef PEGPLUS_NARROWPHASE_H
#define PEGPLUS_NARROWPHASE_H

#include "pegplus/features.h"
#include "pegplus/geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Append the contacts of shapes a and b within eps (finite, > 0) to out[*count ..], never
 * beyond `capacity`; appl_vf is the vertex–face applicability threshold (PP_APPL_VF_DEFAULT).
 * Returns PP_OK; PP_ERR_NO_MEMORY when they did not fit (the ones that fit are kept, *count is
 * capacity, and *needed the count that would have been reached); PP_ERR_NULL_ARGUMENT,
 * PP_ERR_INVALID_ARGUMENT (pp_shape_validate, eps), PP_ERR_UNSUPPORTED (plane–plane), or a
 * pp_shape_distance error. Box shapes allocate their polytope for the call: callers that
 * query the same box often should pass it as a PP_SHAPE_POLYTOPE (pp_polytope_box).
 */
pp_status pp_narrowphase_contacts(const pp_shape *a, const pp_shape *b, double eps,
                                  double appl_vf, pp_contact *out, int capacity, int *count,
                                  int *needed);

/*
 * A pair with a cylinder met as its turned prism (not a plane or sphere): the exact contacts
 * the prism's feature contacts c[0 .. count) miss (where its features meet edge to parallel
 * edge or vertex to edge, which the feature rules do not classify), written to out and
 * counted (0 to 5): when none has the gap (to 1e-9 m) and normal (to 1e-6) of the pair's
 * closest point (pp_shape_distance, n from a to b), that point and the closest point of each
 * cylinder's two end discs (a line contact's ends) not already a contact (1e-6 m); only
 * those within eps.
 * pp_narrowphase_contacts adds them; PEG's sets take each as a U set. Not validated.
 */
int pp_narrowphase_cylinder_closest(const pp_shape *a, const pp_shape *b, double eps,
                                    const pp_contact *c, int count, pp_contact out[5]);

#ifdef __cplusplus
}
#endif
#endif /* PEGPLUS_NARROWPHASE_H */
