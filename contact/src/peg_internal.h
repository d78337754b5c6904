/* Private to contact/: what peg_geometry.c and peg_constraints.c share. */
#ifndef PP_CONTACT_PEG_INTERNAL_H
#define PP_CONTACT_PEG_INTERNAL_H

#include "pegplus/peg.h"

/* A vertex–face test of peg_constraints.c's memo (see there): valid while its stamps equal
 * the stamp of the vertex the side's entries belong to. */
typedef struct pp_peg_vf_memo {
    unsigned test_stamp, appl_stamp;
    pp_peg_vf_test test;          /* pp_peg_feasibility_vf */
    double appl;                  /* pp_peg_applicability_vf */
} pp_peg_vf_memo;

/* One remembered classification (peg_geometry.c, "The classification's memo"): its inputs,
 * copied, and its output. */
typedef struct pp_peg_class_memo {
    unsigned long last_use;       /* the builder's tick at the last use; 0: empty */
    int vertex_count_a, vertex_count_b, edge_count_a, edge_count_b;
    double eps, appl_ee, delta;
    double *vertices;             /* A's, then B's: 3 (vertex_count_a + vertex_count_b) */
    int vertex_capacity;          /* doubles */
    int *edges;                   /* A's, then B's: 4 (edge_count_a + edge_count_b) */
    int edge_capacity;            /* ints */
    pp_peg_config *configs;
    int config_count, config_capacity;
    unsigned char *flags;         /* the vertex flags: A's vertices, then B's */
    int flag_capacity;
} pp_peg_class_memo;

#define PP_PEG_CLASS_MEMO_SLOTS 64         /* remembered classifications per builder */
#define PP_PEG_CLASS_MEMO_MAX_VERTICES 512 /* pairs with more vertices are not remembered */

/* Scratch of the constraint builders; every array grows to the peak and is reused. */
struct pp_peg_builder {
    pp_peg_config *configs;
    int config_capacity;
    unsigned char *vertex_flags;  /* A's vertices, then B's */
    int flag_capacity;
    pp_contact *candidates;       /* contacts of the set being built */
    double *candidate_appl;
    unsigned char *candidate_eligible;
    int candidate_capacity;
    int *indices;                 /* faces / edges incident to a vertex */
    int index_capacity;
    int *rows;                    /* reduce_pair: row ids and per-set row lists */
    int row_capacity;
    int *set_vertices;            /* per set of the current local_sets call: the vertex pair
                                     (v_a, v_b) of a vertex–vertex X, else (-1, -1)
                                     (reduce_pair, Rule 3) */
    int set_vertex_capacity;      /* ints */
    pp_peg_set *pair_sets;        /* the pair's local sets before the bound */
    int pair_set_capacity;
    pp_contact *pair_contacts;
    double *pair_appl;
    int pair_contact_capacity;    /* of pair_contacts and pair_appl */
    double *set_gap;              /* max psi per local set */
    int set_gap_capacity;
    pp_contact *separating;       /* candidates of the separating set */
    int separating_capacity;
    double *separating_appl;
    int separating_appl_capacity;
    double *edge_bounds;          /* per edge of A then B: midpoint and half length */
    int edge_bound_capacity;
    double *face_spheres;         /* local_sets: pp_peg_face_spheres of A, then B */
    int face_sphere_capacity;     /* doubles */
    double *edge_frames;          /* separating_set: pp_peg_edge_frames of A, then B */
    int edge_frame_capacity;      /* doubles */
    int *near;                    /* the classification's features near the other polytope:
                                     A's vertices and edges, then B's */
    int near_capacity;
    pp_peg_vf_memo *vf_memo;      /* per side, one entry per face of the other polytope */
    int vf_memo_capacity;
    unsigned vf_clock;            /* the last stamp given out (0: none yet) */
    pp_peg_class_memo *class_memo; /* PP_PEG_CLASS_MEMO_SLOTS, allocated at the first use */
    unsigned long class_tick;
    long class_hits;              /* classifications answered from the memo (for the tests) */
};

/* Grow *array to at least `need` elements of `size` bytes (doubling): PP_OK or
 * PP_ERR_NO_MEMORY (array unchanged). */
pp_status pp_peg_grow(void **array, int *capacity, int need, size_t size);

/* Grow helpers: PP_OK or PP_ERR_NO_MEMORY (arrays unchanged). */
pp_status pp_peg_builder_reserve_configs(pp_peg_builder *b, int count);
pp_status pp_peg_builder_reserve_flags(pp_peg_builder *b, int count);
pp_status pp_peg_builder_reserve_candidates(pp_peg_builder *b, int count);
pp_status pp_peg_builder_reserve_indices(pp_peg_builder *b, int count);
pp_status pp_peg_builder_reserve_rows(pp_peg_builder *b, int count);

/* Steps 1–3 of pp_peg_classify (vertex–vertex, vertex–edge both ways, edge–edge) into
 * b->configs; *count configurations. Marks vertex_flags[v] = 1 (A) and
 * vertex_flags[a->vertex_count + v] = 1 (B) for every vertex in a configuration. A pair whose
 * inputs equal, bit for bit, those of a classification the builder remembers gets that
 * classification's output (peg_geometry.c, "The classification's memo"). */
pp_status pp_peg_classify_near_features(pp_peg_builder *b, const pp_polytope_view *a,
                                        const pp_polytope_view *q, double eps,
                                        const pp_peg_params *params, int *count);

/* Step 4 for one vertex v of p against the faces of q: the face with the largest psi among
 * the feasible ones with APPL^vf > appl_vf (ties: larger APPL, lower index). Returns the
 * face or -1; *appl and *psi of the chosen face. */
int pp_peg_best_vertex_face(const pp_polytope_view *p, int v, const pp_polytope_view *q,
                            double eps, const pp_peg_params *params, double *appl, double *psi);

/* Contacts in the frame p -> q (flip afterwards for q -> p):
 * vertex v of p against face f of q: p_a = v, n = -eta_f, psi = eta_f . v - d_f. */
void pp_peg_vertex_face_contact(const pp_polytope_view *p, int v, const pp_polytope_view *q,
                                int f, pp_contact *out);

/* Edge e_p of p against edge e_q of q (non-parallel): n from APPL^ee's sign, p_a the closest
 * point of e_p. Returns 0 (and leaves out untouched) for parallel edges, else 1; *appl gets
 * APPL^ee and *feasible the edge–edge feasibility within eps. */
int pp_peg_edge_edge_contact(const pp_polytope_view *p, int e_p, const pp_polytope_view *q,
                             int e_q, double eps, pp_contact *out, double *appl, int *feasible);

/* Contact c of p's edge against q's, built p -> q (above), written q -> p: the same-frame flip
 * (pp_peg_contact_flip), with p_a q's closest point where the closest points are clamped (the
 * contact built q -> p; peg_geometry.c). */
void pp_peg_edge_edge_flip(const pp_polytope_view *p, const pp_polytope_view *q, pp_contact *c);

/* The same contact when APPL^ee and its normal n (pp_peg_applicability_ee, not parallel) are
 * known: the callers that test the applicability first skip the closest points of the pairs
 * it rejects. Returns the edge–edge feasibility within eps. Same values, bit for bit, as
 * pp_peg_edge_edge_contact (which calls it). */
int pp_peg_edge_edge_contact_along(const pp_polytope_view *p, int e_p, const pp_polytope_view *q,
                                   int e_q, double eps, const double n[3], pp_contact *out);

/* Do the LINES of e_p and e_q come closest within both segments, each extended by eps at
 * its ends? (Non-parallel edges.) The edge–edge gap is the lines' signed distance; when the
 * lines meet beyond an edge's end the segments cannot cross there and the gap says nothing
 * about them. */
int pp_peg_edge_lines_meet(const pp_polytope_view *p, int e_p, const pp_polytope_view *q, int e_q,
                           double eps);

/* Faces of p whose loop contains vertex v / edges of p with v as an endpoint, into
 * b->indices[offset ..]; returns how many (or -1 when the scratch could not grow). */
int pp_peg_faces_at_vertex(pp_peg_builder *b, const pp_polytope_view *p, int v, int offset);
int pp_peg_edges_at_vertex(pp_peg_builder *b, const pp_polytope_view *p, int v, int offset);

/* The sets of the rules of pegplus/peg.h within eps, appended to out, before the bound per
 * pair; reduce = 0 leaves the implied sets and duplicate rows in (for the tests of the
 * reduction rules), each set once (a set made by two configurations: drop_repeated_sets). A builder is required. */
pp_status pp_peg_local_sets(pp_peg_builder *builder, const pp_polytope_view *a,
                            const pp_polytope_view *b, double eps, const pp_peg_params *params,
                            int reduce, pp_peg_output *out);

/* Each edge's direction d = v1 - v0 and unit t-vectors t1 = eta_f1 x d, t2 = d x eta_f2
 * (PEG Sec. 4), 9 doubles an edge, into frames[9 e ..]: what pp_peg_applicability_ee computes
 * for its two edges at every call. pp_peg_applicability_ee_framed is pp_peg_applicability_ee
 * from such frames (the same arithmetic: the same value and normal, bit for bit), for the
 * loops over every edge pair of a pair of polytopes (separating_set). */
void pp_peg_edge_frames(const pp_polytope_view *p, double *frames);
double pp_peg_applicability_ee_framed(const pp_polytope_view *a, int ea, const double *frames_a,
                                      const pp_polytope_view *b, int eb, const double *frames_b,
                                      double normal[3]);

/* Do contacts c and d (of one pair, both A -> B) give the same row of the PEG LCP: equal
 * normals, gaps and points p_a within ROW_TOLERANCE (1e-12; m per metre of 1 + |c.p_a|_inf)?
 * (reduce_pair's Rule 1.) */
int pp_peg_same_row(const pp_contact *c, const pp_contact *d);

/* Row ids of contacts c[0 .. nc): id[i] = the first j <= i with id[j] = j and
 * pp_peg_same_row(&c[j], &c[i]) (i itself when there is none), the scan over the earlier
 * representatives, found through a list of them sorted by p_a[0] (by_x: nc ints of scratch).
 * reduce_pair's Rule 1. */
void pp_peg_row_ids(const pp_contact *c, int nc, int *id, int *by_x);

/* Each face's loop bounded by a sphere: its vertices' mean and the largest distance of a
 * vertex from it, 4 doubles a face, into spheres[4 f ..]. */
void pp_peg_face_spheres(const pp_polytope_view *p, double *spheres);

/* pp_peg_feasibility_vf for the builder's tests, which read of a result only feasible, psi
 * and whether distance <= eps: the same result wherever distance <= eps; where v's projection
 * is outside the face and farther than eps from the face's sphere (pp_peg_face_spheres of
 * b, sphere[4]) it is not feasible with distance = HUGE_VAL, without the distances to the
 * face's edges (pp_peg_feasibility_vf: not feasible, distance > eps, the same psi). */
pp_peg_vf_test pp_peg_feasibility_vf_near(const pp_polytope_view *a, int v,
                                          const pp_polytope_view *b, int f, double eps,
                                          const pp_peg_params *params, const double sphere[4]);

/* Point–segment distance and closest point. */
double pp_peg_point_segment(const double x[3], const double s0[3], const double s1[3],
                            double closest[3]);

/* Argument checks of the polytope–polytope entry points (views finite, eps > 0, params). */
pp_status pp_peg_check_pair(const char *who, const pp_polytope_view *a, const pp_polytope_view *b,
                            double eps, const pp_peg_params *params);

#endif
