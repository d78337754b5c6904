/*
 * pegplus/terrain.h — static triangle terrain (an ODE trimesh or heightfield) as one-sided
 * thin prisms, the triangles near a query box, and the internal-edge rule.
 *
 * A terrain is a list of triangles in the world frame, each counter-clockwise seen from its
 * front: eta = (v1 - v0) x (v2 - v0) / |.| points out of the solid. Triangle i is modelled
 * as the prism P_i = conv{v_k, v_k - t_i eta}, t_i = half its longest edge: a convex
 * polytope whose top face is the triangle. Only the prisms near a moving shape become
 * constraints (pp_terrain_query), each a static polytope shape of its own.
 *
 * The internal-edge rule (no bumps where two triangles meet). The union of the prisms has
 * no edge where two coplanar triangles share one, but each prism alone does: a sphere rolling
 * across the shared edge sees, from the prism it is leaving, the edge's closest point with a
 * tilted normal, and the time-stepping constraint psi + h n . v >= 0 linearised about that
 * normal stops a ball for h v > psi / (n . v) (a bump), or a sliding box's leading vertex
 * meets the side face of the next prism (a wall). So a contact of prism i with another
 * shape keeps the prism's own normal n only where the terrain's surface has that normal:
 *   - n = eta_i (the top face), or the other shape lies below the prism's mid-plane
 *     (eta_i . p_other < d_i - t_i / 2: it came from underneath, the prism is as it is);
 *   - the contact point is on an edge of the triangle (within 1e-9 m of its line) that is
 *       a boundary edge (no neighbour, or more than one: non-manifold) — any normal of the
 *       prism there is the terrain's; or
 *       a convex (ridge) edge with neighbour normal eta_j, and n projected on the plane normal
 *       to the edge lies on the arc from eta_i to eta_j (the normals a ridge has);
 *     a point on two edges (a vertex) keeps n when either edge does, or when both are
 *     ridges (a convex corner keeps every normal its prism gives there: the vertex's own
 *     normal cone is not checked; a saddle vertex may so give a normal the terrain lacks).
 * Any other contact on an edge (a flat or valley edge, a ridge beyond its arc) is dropped:
 * the other shape is then over the neighbour across that edge, whose own contact holds it
 * (a ball just past a flat edge: the next triangle's top-face contact; a box's vertex at the
 * side face of the next prism: its vertex–face contact with the next triangle). A contact in
 * the triangle's interior with another normal (a deep overlap) is replaced by the top face's:
 * n = eta_i, the other shape's point p = c - r eta_i from its core point c (the contact's
 * point plus r n, r the core radius: a sphere's or capsule's radius, 0 for a polytope),
 * psi = eta_i . p - d_i. Contacts of one shape repeated by two triangles (a ball right above
 * a flat edge) are the caller's to drop. Replacing an edge contact by the top face's instead
 * would be wrong at a ridge: a ball on the gentler face near the crest lies below the
 * steeper face's plane, and that plane's gap would launch it.
 *
 * Flat regions. A feature contact whose terrain feature is a top vertex or top edge that
 * lies inside a flat region (every triangle edge it is on is shared with a coplanar
 * triangle), with the normal eta_i, is dropped: a polytope resting on a flat region is held
 * by its own vertices over the triangles (vertex–face contacts, kept) and by the region's
 * boundary edges and vertices (kept), whose convex hull contains every such point, so these
 * rows would only make the LCP larger and degenerate (a box on a 0.25 m grid: 16 contacts
 * instead of 4-6). Closest-point contacts (spheres, capsules) and vertex–face contacts of the
 * other shape's vertices are never dropped.
 */
#ifndef PEGPLUS_TERRAIN_H
#define PEGPLUS_TERRAIN_H

#include "pegplus/features.h"
#include "pegplus/geometry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_terrain pp_terrain;

/*
 * A terrain of `count` triangles (9 doubles each: v0, v1, v2, world frame, metres).
 * Degenerate triangles (area below 1e-12 of the squared longest edge) never become prisms.
 * Neighbours are found by shared vertices (bitwise equal coordinates), so a mesh's shared
 * vertices must be given equal. Returns PP_OK and *out, or PP_ERR_NULL_ARGUMENT,
 * PP_ERR_INVALID_ARGUMENT (count < 1, a NaN/Inf coordinate), PP_ERR_NO_MEMORY.
 */
pp_status pp_terrain_create(const double *triangles, int count, pp_terrain **out);
void pp_terrain_destroy(pp_terrain *terrain);
int pp_terrain_triangle_count(const pp_terrain *terrain);

/* Start a round of queries: a triangle is returned at most once per round. */
void pp_terrain_round(pp_terrain *terrain);

/*
 * Append to (*hits)[*hit_count ..] (grown with realloc, capacity *hit_capacity) the
 * non-degenerate triangles whose prism's bounding box meets `box` and that this round has
 * not returned yet. Cost: the grid cells the box covers (a uniform grid over the two widest
 * axes of the terrain, about one triangle per cell), never the whole terrain.
 * PP_ERR_NO_MEMORY.
 */
pp_status pp_terrain_query(pp_terrain *terrain, const pp_aabb *box, int **hits, int *hit_count,
                           int *hit_capacity);

/* The prism of triangle i, world frame (pose: identity at the origin), built on first use and
 * owned by the terrain. PP_ERR_DEGENERATE (a degenerate triangle), PP_ERR_NO_MEMORY. Not
 * thread-safe (it builds); call it where the queries run. */
pp_status pp_terrain_prism(pp_terrain *terrain, int i, const pp_polytope **out);

/* The unit front normal of triangle i. */
void pp_terrain_normal(const pp_terrain *terrain, int i, double eta[3]);

/*
 * The internal-edge rule on contact c between prism i and another shape (the header's
 * comment): terrain_is_a says which side of c the prism is, core_radius the other shape's
 * (sphere, capsule radius; 0 else). Returns 0 when the contact is to be dropped (an edge
 * contact the terrain does not have, a corner of a flat region), else 1: the contact became a PP_CONTACT_POINT, its normal and gap
 * replaced when the rule says so, and its features an identity across steps (the terrain
 * side's: i; the other's: 4 x its feature + the contact's kind before). Read-only on the
 * terrain.
 */
int pp_terrain_contact_rule(const pp_terrain *terrain, int i, int terrain_is_a,
                             double core_radius, pp_contact *c);

#ifdef __cplusplus
}
#endif
#endif /* PEGPLUS_TERRAIN_H */
