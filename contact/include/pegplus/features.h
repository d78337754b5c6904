/*
 * pegplus/features.h — contacts between feature pairs of polytopes (and polytope–half-space),
 * the input of the standard contact model and of PEG (PEG Secs 4–5; docs/references.md).
 *
 * A contact C = {A, B, p_a, n, psi} (PEG Eq 3 context): n is the unit normal from A to B,
 * p_a the contact point on A, psi the gap (> 0 separated, < 0 overlapping), p_b = p_a + psi n.
 *
 *   vertex–face  (A's vertex v, B's face f):  p_a = v, n = -eta_f, psi = eta_f . v - d_f
 *   face–vertex  (A's face f, B's vertex v):  n = eta_f, psi = eta_f . v - d_f, p_a = v - psi n
 *   edge–edge    closest points p_a, p_b of the two segments; n = ±(e_a x e_b)/|.| with the
 *                sign that makes n . (eta_b1 + eta_b2) < 0; psi = n . (p_b - p_a)
 *
 * A pair is reported when psi < eps and psi > -eps (deeper pairs are ignored: by then the
 * pose is already broken and the pair's half-space would push the wrong way), and
 *   vertex–face: v projects inside the face (tolerance 1e-9 m) and APPL^vf(v, f) >= appl_vf,
 *                APPL^vf(v, f) = min over neighbours w of v of eta_f . (w - v)/|w - v| (§3);
 *   edge–edge:   the closest points are interior to both segments and the edges are not
 *                parallel (|e_a x e_b| > 1e-9 |e_a||e_b|);
 * and a negative gap only where it is an overlap: the vertex inside B (A) for vertex–face
 * (face–vertex), p_b inside A or p_a inside B for edge–edge (tolerance 1e-9 m). A vertex
 * beyond a thin body's far face projects inside its near face too, and the lines of two
 * edges that pass each other outside both bodies have a negative gap; within a fast pair's
 * eps those were reported as overlaps of up to ~1 m and made the LCP infeasible.
 * No ODE here: plain arrays in, plain structs out.
 */
#ifndef PEGPLUS_FEATURES_H
#define PEGPLUS_FEATURES_H

#include "pegplus/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A polytope's features in world coordinates. Index arrays may be borrowed from the polytope;
 * only vertices, face normals and offsets change with the pose. */
typedef struct pp_polytope_view {
    int vertex_count;
    const double *vertices;      /* 3 per vertex */
    int face_count;
    const double *face_normals;  /* 3 per face, outward unit */
    const double *face_offsets;  /* face plane: normal . x = offset */
    const int *face_first;       /* face f: face_vertices[face_first[f] .. face_first[f + 1]) */
    const int *face_vertices;    /* counter-clockwise seen from outside */
    int edge_count;
    const int *edges;            /* 4 per edge: tail, head, f1, f2 (f1 runs tail -> head) */
    const int *neighbour_first;  /* omega(v): neighbours[neighbour_first[v] .. [v + 1]) */
    const int *neighbours;
} pp_polytope_view;

typedef enum pp_contact_kind {
    PP_CONTACT_VERTEX_FACE = 0, /* feature_a = vertex of A, feature_b = face of B */
    PP_CONTACT_FACE_VERTEX = 1, /* feature_a = face of A, feature_b = vertex of B */
    PP_CONTACT_EDGE_EDGE = 2,   /* feature_a, feature_b = edges */
    PP_CONTACT_POINT = 3        /* smooth shapes: closest points; features -1 */
} pp_contact_kind;

typedef struct pp_contact {
    int body_a, body_b;         /* caller's body indices, -1 = static (infinite mass) */
    int shape_a, shape_b;       /* caller's shape indices */
    pp_contact_kind kind;
    int feature_a, feature_b;
    unsigned surface;           /* PP_CONTACT_* surface extensions below, 0 = none */
    double p_a[3];              /* contact point on A, world */
    double n[3];                /* unit normal from A to B */
    double psi;                 /* gap, m */
    double mu;                  /* Coulomb friction of the pair (along t1 when anisotropic) */
    /* Surface extensions (`surface` flags; docs/drop-in.md), read only under their flag. The
     * contact code that makes contacts leaves them 0; the caller sets them with mu. */
    double mu2;                 /* ANISOTROPIC: the coefficient along t2 = n x t1 */
    double t1[3];               /* ANISOTROPIC: the first friction axis (unit; projected on
                                   the tangent plane of n when the rows are built) */
    double motion[3];           /* MOTION: the target velocity of B relative to A at the
                                   contact (a conveyor belt's surface velocity), world frame */
    double soft_cfm, soft_erp;  /* SOFT: the normal row's compliance (ODE's CFM, m/(N s)) and
                                   the fraction of an overlap corrected per step (ODE's ERP) */
    double slip[2];             /* SLIP: force-dependent slip along t1, t2 (ODE's slip1/2,
                                   m/(N s)); needs ANISOTROPIC's t1 (mu2 = mu for isotropy) */
    double rho[3];              /* ROLLING: rolling friction about t1 and t2 = n x t1 (t1 as
                                   for ANISOTROPIC: c->t1 projected on the tangent plane) and
                                   spinning friction about n (ODE's rho, rho2, rhoN, m): the
                                   torque about each axis is bounded by rho p_n; 0 = no row */
    int friction_axis;          /* the world axis (1 + index: 1 x, 2 y, 3 z) whose projection
                                   on the tangent plane is the friction pyramid's t1
                                   (pegplus/mlcp.h pp_mlcp_friction_directions_about); 0: the
                                   axis least aligned with n. The contact code leaves it 0;
                                   the stepper's re-linearisation keeps a contact's axis of
                                   the step's start at its predicted poses (relinearize.c) */
} pp_contact;

/* pp_contact.surface flags. ANISOTROPIC: the friction set is the polygon inscribed in the
 * ellipse of semi-axes mu p_n along t1 and mu2 p_n along t2 (pegplus/mlcp.h). MOTION: the
 * normal and friction rows see the velocity relative to `motion`. SOFT: constraint-force
 * mixing and error reduction on the normal row; SLIP: constraint-force mixing on the
 * friction rows; ROLLING: rolling and spinning friction torques bounded by rho p_n
 * (pegplus/mlcp.h). */
#define PP_CONTACT_ANISOTROPIC 0x1u
#define PP_CONTACT_MOTION 0x2u
#define PP_CONTACT_SOFT 0x4u
#define PP_CONTACT_SLIP 0x8u
#define PP_CONTACT_ROLLING 0x10u
/* DEPTH: psi is a penetration depth where negative (a closest-point contact, or a vertex
 * below a half-space), so a start-of-step depth beyond max_correcting_velocity h may be
 * recovered at that speed (pp_mlcp_problem). PEG's polytope sets do not carry it: a U set of
 * a vertex beyond its face's region has psi < 0 between separated bodies (pegplus/peg.h,
 * phi), and an I/X member's psi is one candidate of a max. */
#define PP_CONTACT_DEPTH 0x20u

/* Rolling and spinning friction (ROLLING): each axis with rho > 0 adds a torque pair and its
 * bound's multiplier to the LCP (pegplus/mlcp.h), 3 unknowns, at most this many a contact. */
#define PP_CONTACT_ROLLING_UNKNOWNS_MAX 9

/* The rolling axes of contact c (0..3): how many of rho[0..2] are > 0 under ROLLING. */
static inline int pp_contact_rolling_axes(const pp_contact *c)
{
    if (!(c->surface & PP_CONTACT_ROLLING)) return 0;
    return (c->rho[0] > 0.0) + (c->rho[1] > 0.0) + (c->rho[2] > 0.0);
}

/* Does contact c carry friction unknowns (beta, sigma)? */
static inline int pp_contact_frictional(const pp_contact *c)
{
    return c->mu > 0.0 || ((c->surface & PP_CONTACT_ANISOTROPIC) && c->mu2 > 0.0);
}

/* Default relaxed applicability threshold for vertex–face pairs (PEG authors' code: -0.3). */
#define PP_APPL_VF_DEFAULT (-0.3)

/*
 * Append the contacts between polytopes A and B (vertex–face both ways, then edge–edge) to
 * out[*count ..], never beyond `capacity`. Each contact gets body/shape indices -1 and mu 0;
 * the caller fills them. Returns PP_OK, or PP_ERR_NO_MEMORY when `capacity` was too small
 * (the contacts that fit are kept and *needed holds the total that would have been written).
 */
pp_status pp_features_polytopes(const pp_polytope_view *a, const pp_polytope_view *b, double eps,
                                double appl_vf, pp_contact *out, int capacity, int *count,
                                int *needed);

/* Contacts between polytope A's vertices and the half-space below the plane normal . x = offset
 * (B): every vertex with psi < eps, however deep (unlike a face, a half-space has no far side,
 * so a deep vertex's psi is its penetration). Same conventions and return codes. */
pp_status pp_features_polytope_plane(const pp_polytope_view *a, const double normal[3],
                                     double offset, double eps, pp_contact *out, int capacity,
                                     int *count, int *needed);

#ifdef __cplusplus
}
#endif
#endif
