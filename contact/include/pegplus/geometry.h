/*
 * pegplus/geometry.h — convex polytopes (PEG Sec. 4), posed shapes, proximity queries
 * (signed distance, closest points, normal) and a sweep-and-prune broadphase.
 *
 * Conventions (besides those of base.h):
 *  - Lengths in metres, density in kg/m^3, mass in kg, inertia in kg m^2.
 *  - A pose is position[3] and a rotation R[9], row-major: world = R * local + position.
 *  - A proximity result between A and B has the unit normal n from A to B and the signed
 *    distance psi (> 0 gap, < 0 penetration depth), with p_b - p_a = psi * n.
 *  - Every fallible call returns a pp_status; on failure a message goes to the log hook
 *    and the outputs are left untouched.
 */
#ifndef PEGPLUS_GEOMETRY_H
#define PEGPLUS_GEOMETRY_H

#include "pegplus/base.h"
#include "pegplus/features.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Polytope: a closed convex polyhedron in its body frame (PEG Sec. 4).
 *
 * Allocated and owned by the library (pp_polytope_from_points / pp_polytope_box), freed with
 * pp_polytope_destroy. The fields are public and read-only for the caller; only
 * pp_polytope_translate changes them. Faces are the merged planar facets (a box has 6 quads).
 * The index layout is the one of pp_polytope_view (features.h).
 * ---------------------------------------------------------------------------------------- */
typedef struct pp_polytope {
    int vertex_count;
    double *vertices;        /* 3 per vertex, body frame, m */

    int face_count;
    double *face_normals;    /* 3 per face: outward unit normal eta */
    double *face_offsets;    /* face plane eta . x = offset; every vertex has eta . x <= offset */
    int *face_first;         /* face f: face_vertices[face_first[f] .. face_first[f + 1]) */
    int *face_vertices;      /* vertex loop, counter-clockwise seen from outside */

    int edge_count;
    int *edges;              /* 4 per edge: tail, head, f1, f2; f1's CCW loop runs tail -> head */
    double *edge_t1;         /* 3 per edge: t1 = eta_f1 x e / |.|, in f1, pointing into f1 */
    double *edge_t2;         /* 3 per edge: t2 = e x eta_f2 / |.|, in f2, pointing into f2 */
    double *edge_orientation;/* 3 per edge: O_e = e x (-(eta_f1 + eta_f2)), not normalised (only
                                its sign against another edge is used, PEG §3) */

    int *neighbour_first;    /* omega(v): neighbours[neighbour_first[v] .. [v + 1]) */
    int *neighbours;         /* vertices joined to v by an edge */

    double centroid[3];      /* mean of the vertices: a strictly interior point */
    double radius;           /* max |vertex - centroid| */
} pp_polytope;

/*
 * Convex hull of `count` points (xyz triples, m) computed by qhull (merged facets).
 * Interior and duplicate points are dropped; every hull vertex is one of the input points.
 * Returns PP_OK and *out, or:
 *   PP_ERR_NULL_ARGUMENT     xyz or out is NULL;
 *   PP_ERR_INVALID_ARGUMENT  count < 0, or a coordinate is NaN/Inf;
 *   PP_ERR_DEGENERATE        fewer than 4 points, fewer than 4 distinct points ("duplicate
 *                            points"), all points collinear or coplanar (zero volume relative
 *                            to the cloud's size, 1e-10), or qhull failed;
 *   PP_ERR_NO_MEMORY.
 */
pp_status pp_polytope_from_points(const double *xyz, int count, pp_polytope **out);

/* Box centred at the origin with full side lengths (like ODE's dCreateBox), 8 vertices,
 * 12 edges, 6 quad faces. Vertex i = (±lx/2, ±ly/2, ±lz/2), bit 0 of i = +x, bit 1 = +y,
 * bit 2 = +z. Faces in the order +x, -x, +y, -y, +z, -z.
 * PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT (a length <= 0 or not finite), PP_ERR_NO_MEMORY. */
pp_status pp_polytope_box(const double lengths[3], pp_polytope **out);

/*
 * The right prism with `sides` faces inscribed in the cylinder of `radius` and `length` along
 * local z, centred at the origin: what a cylinder shape (PP_SHAPE_CYLINDER) is against boxes,
 * polytopes, capsules and cylinders. Vertex i (bottom, z = -length/2) and sides + i (top) lie
 * on the cylinder's rims at angle 2 pi i / sides; side face k, between vertices k and k + 1,
 * has its outward normal at angle (2k + 1) pi / sides; faces: the sides, then the top (+z)
 * and the bottom (-z). The prism lies inside the cylinder, and no point of the cylinder is
 * farther than radius (1 - cos(pi / sides)) from it (PP_CYLINDER_PRISM_DEPTH).
 * PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT (radius or length not finite and > 0,
 * sides < 3), PP_ERR_NO_MEMORY.
 */
pp_status pp_polytope_cylinder_prism(double radius, double length, int sides, pp_polytope **out);

/* Frees everything the polytope owns. NULL is allowed. */
void pp_polytope_destroy(pp_polytope *poly);

/*
 * Mass properties of the polytope as a uniform solid of `density`: mass, centre of mass
 * (body frame) and the inertia tensor about the centre of mass (row-major, axes of the body
 * frame). Exact up to round-off (tetrahedral decomposition). Any output may be NULL.
 * PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT (density <= 0 or not finite).
 */
pp_status pp_polytope_mass_properties(const pp_polytope *poly, double density, double *mass,
                                      double com[3], double inertia[9]);

/* Move every vertex by delta (body frame). ODE wants the body origin at the centre of mass:
 * pass delta = -com. PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT (not finite). */
pp_status pp_polytope_translate(pp_polytope *poly, const double delta[3]);

/*
 * The polytope's features posed in the world, for pp_features_polytopes. The caller gives
 * workspace arrays of 3 * vertex_count (vertices), 3 * face_count (normals) and face_count
 * (offsets) doubles; the view borrows them and the polytope's index arrays, so it is valid
 * while both live.
 */
void pp_polytope_pose_view(const pp_polytope *poly, const double position[3], const double R[9],
                           double *vertices, double *face_normals, double *face_offsets,
                           pp_polytope_view *view);

/* ------------------------------------------------------------------------------------------
 * Shapes: a plain struct, filled by the caller (or by the pp_shape_make_* helpers).
 * ---------------------------------------------------------------------------------------- */
typedef enum pp_shape_kind {
    PP_SHAPE_SPHERE = 0,   /* radius; centre at position */
    PP_SHAPE_BOX = 1,      /* lengths: full side lengths along the local axes */
    PP_SHAPE_CAPSULE = 2,  /* radius, and length of the cylindrical part along LOCAL z (ODE) */
    PP_SHAPE_PLANE = 3,    /* half-space normal . x <= offset, WORLD frame, static only; the
                              pose is ignored */
    PP_SHAPE_POLYTOPE = 4, /* polytope (body frame), borrowed: it must outlive the shape */
    PP_SHAPE_CYLINDER = 5  /* radius, and length along LOCAL z (ODE's dCylinder, flat caps);
                              polytope: its inscribed prism (pp_polytope_cylinder_prism),
                              borrowed; see "Cylinders" below */
} pp_shape_kind;

/*
 * Cylinders. A cylinder is itself, exactly, against a plane and a sphere; against boxes,
 * polytopes, capsules and cylinders it is its inscribed prism of PP_CYLINDER_PRISM_SIDES
 * sides (the shape's `polytope`), turned about the axis for each pair and pose so that one
 * of its generators (an edge joining the two rims) lies at the cylinder's exact closest
 * point to the other shape (pp_shape_pair_form): PEG's U/I/X sets are defined for polytopes,
 * and a prism gives them faces, edges and vertices.
 *  - pp_shape_support, pp_shape_distance: the exact cylinder against every shape (its support
 *    function in GJK and libccd's EPA/MPR; a closed form against a sphere);
 *  - pp_narrowphase_contacts, pp_shapes_within: the pair's form: exact against a plane (rim
 *    points) and a sphere (closest point); otherwise the turned prism, whose distance to the
 *    other shape IS the cylinder's exact distance when they are apart (its closest point is
 *    a vertex or an edge of the turned prism), so a cylinder lying, rolling or standing on a
 *    box touches it exactly, with no bumps and no rolling resistance;
 *  - pp_shape_aabb, the broadphase: the cylinder (which contains the prism).
 * What is approximate: (1) a cap lying flat on a face rests on the cap's 16-gon (vertices on
 * the rim; apothem r cos(pi/16) = 0.981 r), which matters only for when it tips; (2) the
 * prism is turned for the pose its constraints are built at, so the cylinder is kept out of
 * overlap exactly at that pose: at the end of the step once the ST96 re-linearisation has
 * converged (the pegplus models rebuild these constraints at every iterate), and otherwise
 * the cylinder may sink up to PP_CYLINDER_PRISM_DEPTH times its radius where the prism's
 * turn is off (as it may after an overlap, where the prism's depth is at most the
 * cylinder's). Two convex shapes touch in one convex region around the closest point, so a
 * single turn serves the whole contact.
 */
#define PP_CYLINDER_PRISM_SIDES 16
/* 1 - cos(pi / 16): how far the cylinder reaches beyond its prism, per metre of radius */
#define PP_CYLINDER_PRISM_DEPTH 1.9216e-2

typedef struct pp_shape {
    pp_shape_kind kind;
    double radius;                /* sphere, capsule, cylinder */
    double lengths[3];            /* box */
    double length;                /* capsule, cylinder */
    double normal[3];             /* plane: unit */
    double offset;                /* plane */
    const pp_polytope *polytope;  /* polytope, cylinder (its prism): not owned */
    double position[3];           /* pose; world = R * local + position */
    double R[9];
} pp_shape;

/* Helpers that fill every field (pose = identity at the origin unless given; position/R may be
 * NULL for that). They do not validate: pp_shape_validate does. */
pp_shape pp_shape_make_sphere(double radius, const double position[3]);
pp_shape pp_shape_make_box(const double lengths[3], const double position[3], const double R[9]);
pp_shape pp_shape_make_capsule(double radius, double length, const double position[3],
                               const double R[9]);
pp_shape pp_shape_make_plane(const double normal[3], double offset);
pp_shape pp_shape_make_polytope(const pp_polytope *poly, const double position[3],
                                const double R[9]);
/* prism: pp_polytope_cylinder_prism(radius, length, PP_CYLINDER_PRISM_SIDES, ...) */
pp_shape pp_shape_make_cylinder(double radius, double length, const pp_polytope *prism,
                                const double position[3], const double R[9]);

/* How `s` meets `other` in contacts and proximity filters: a cylinder against anything but a
 * plane or a sphere is its prism (a PP_SHAPE_POLYTOPE shape at the same pose); every other
 * case is `s` itself. Not validated. */
pp_shape pp_shape_pair_form(const pp_shape *s, const pp_shape *other);

/* PP_OK, or PP_ERR_NULL_ARGUMENT / PP_ERR_INVALID_ARGUMENT with a message: unknown kind,
 * radius/lengths not positive (capsule length >= 0), NaN/Inf, plane normal not unit (1e-9),
 * R not a rotation (|R^T R - I| > 1e-9 or det < 0). */
pp_status pp_shape_validate(const pp_shape *shape);

/*
 * Support point in the world direction `dir` (need not be unit, must be nonzero) of the shape
 * grown by `margin` >= 0: s(d) + margin * d/|d|. For a plane there is none (an unbounded
 * set): returns 0 and leaves out untouched; otherwise returns 1. Shapes are not validated.
 */
int pp_shape_support(const pp_shape *shape, const double dir[3], double margin, double out[3]);

/* An interior point of the shape, world: position (box, sphere, capsule), the polytope's
 * vertex centroid posed, the point offset * normal for a plane. */
void pp_shape_center(const pp_shape *shape, double out[3]);

/* Axis-aligned bounding box, world. */
typedef struct pp_aabb {
    double min[3], max[3];
} pp_aabb;

/* World AABB of the shape grown by margin >= 0. A plane's box is unbounded (±HUGE_VAL) except
 * along an axis its normal is exactly aligned with. */
void pp_shape_aabb(const pp_shape *shape, double margin, pp_aabb *out);

/* ------------------------------------------------------------------------------------------
 * Proximity
 * ---------------------------------------------------------------------------------------- */
/* What produced the answer of pp_shape_distance. For overlapping cores: the candidate normal
 * whose directional depth was kept (the smallest; a refinement of a candidate counts as that
 * candidate's), whichever libccd calls succeeded. */
typedef enum pp_proximity_method {
    PP_PROXIMITY_ANALYTIC = 0,  /* plane, sphere/capsule cores: closed form */
    PP_PROXIMITY_GJK = 1,       /* separated: our GJK closest points (exact up to round-off);
                                   also cores touching within round-off where no candidate
                                   normal of an overlap exists */
    PP_PROXIMITY_EPA = 2,       /* overlapping: libccd EPA's normal (then refined) */
    PP_PROXIMITY_MPR = 3,       /* overlapping: libccd MPR's normal (then refined) */
    PP_PROXIMITY_AXES = 4,      /* overlapping: a separating axis of the cores, a face normal
                                   or an edge x edge (then refined) */
    PP_PROXIMITY_CENTRES = 5    /* overlapping: the direction between the shapes' centres
                                   (then refined) */
} pp_proximity_method;

typedef struct pp_proximity {
    double distance;            /* signed: > 0 gap, < 0 penetration depth, m */
    double p_a[3], p_b[3];      /* closest (or deepest) points on A and on B, world */
    double n[3];                /* unit normal from A to B; p_b - p_a = distance * n */
    pp_proximity_method method;
    int iterations;             /* GJK iterations (0 for closed forms) */
} pp_proximity;

/*
 * Signed distance between two convex shapes.
 *  - Separated: GJK closest points (signed-volume sub-algorithm) on the shapes' cores, a
 *    sphere being a point and a capsule a segment plus a radius, so the result is exact up
 *    to round-off (~1e-12 relative) for every pair.
 *  - Overlapping (or touching within 1e-12 of the size): the depth is the minimum over unit n
 *    of h(n) = h_A(n) + h_B(-n) (h the support function of a core). Candidate normals come
 *    from libccd GJK+EPA (epa_tolerance 1e-12) and MPR on the cores, the centre-to-centre
 *    direction, and, when the cores have few features (fa + fb + ea * eb <= 4096: boxes,
 *    small hulls, capsules), every separating axis (face normals, edge x edge); each is
 *    refined by a GJK query with B moved out along it, and the smallest h(n) is kept. With
 *    the axes this is exact up to round-off; without them (large hulls) it is an upper bound
 *    of the depth, exact when a candidate lands on the nearest face of A - B. p_a lies on
 *    A's supporting plane along n (in the contact region after refinement), p_b on B's.
 *  - A plane against anything: closed form through the other shape's support point.
 * Returns PP_OK, PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT (pp_shape_validate),
 * PP_ERR_UNSUPPORTED (plane against plane), PP_ERR_SOLVER (coincident large hulls where no
 * candidate normal exists; not expected), PP_ERR_NUMERICAL (a non-finite result).
 */
pp_status pp_shape_distance(const pp_shape *a, const pp_shape *b, pp_proximity *out);

/*
 * Cheap filter: 1 if the shapes are closer than eps (distance < eps), else 0. libccd
 * ccdMPRIntersect on A against B grown by eps (analytic for planes and sphere pairs), with
 * a support budget as pp_shape_distance's libccd calls (contact/src/gjk.c ccd_budget): a call
 * that runs out is answered by pp_shape_distance.
 * Within ~1e-9 m of the threshold the answer may go either way; invalid shapes give 0
 * (and a message).
 */
int pp_shapes_within(const pp_shape *a, const pp_shape *b, double eps);

/* ------------------------------------------------------------------------------------------
 * Broadphase: sweep and prune along the axis of largest spread of the box centres.
 * Cost O(n log n + k_axis), k_axis the pairs overlapping along that axis (>= true pairs k).
 * ---------------------------------------------------------------------------------------- */
typedef struct pp_pair {
    int a, b;                   /* indices into the caller's boxes, a < b */
} pp_pair;

/* Owns its scratch and output arrays; they grow to the peak and are reused. */
typedef struct pp_broadphase pp_broadphase;

pp_status pp_broadphase_create(pp_broadphase **out);
void pp_broadphase_destroy(pp_broadphase *bp);

/*
 * Candidate pairs among `count` boxes: every pair whose boxes overlap (closed intervals on
 * all three axes), except pairs where both are static (is_static may be NULL: none static).
 * *pairs points into bp and stays valid until the next call or destroy; pairs are sorted by
 * (a, b). Returns PP_OK, PP_ERR_NULL_ARGUMENT, PP_ERR_INVALID_ARGUMENT (count < 0, NaN bound
 * or min > max), PP_ERR_NO_MEMORY.
 */
pp_status pp_broadphase_pairs(pp_broadphase *bp, const pp_aabb *boxes,
                              const unsigned char *is_static, int count, const pp_pair **pairs,
                              int *pair_count);

#ifdef __cplusplus
}
#endif
#endif /* PEGPLUS_GEOMETRY_H */
