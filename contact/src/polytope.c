/*
 * Convex polytopes (pegplus/geometry.h): hull of points by qhull, boxes, the PEG edge data
 * (PEG Sec. 4), validation and mass properties.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream: capture qhull's messages */

#include "geometry_internal.h"

#include <libqhull_r/qhull_ra.h>

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Zero volume: the cloud's thickness below this fraction of its size (collinear/coplanar). */
static const double FLAT_RELATIVE = 1e-10;
/* Planarity / convexity of the result, relative to the polytope's size. */
static const double CHECK_RELATIVE = 1e-9;

/* ---------------------------------------------------------------------------- allocation */

static pp_polytope *polytope_alloc(int vertex_count, int face_count, int loop_length)
{
    pp_polytope *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    int edge_count = loop_length / 2;
    p->vertex_count = vertex_count;
    p->face_count = face_count;
    p->edge_count = edge_count;
    p->vertices = malloc(sizeof(double) * 3 * (size_t)vertex_count);
    p->face_normals = malloc(sizeof(double) * 3 * (size_t)face_count);
    p->face_offsets = malloc(sizeof(double) * (size_t)face_count);
    p->face_first = malloc(sizeof(int) * (size_t)(face_count + 1));
    p->face_vertices = malloc(sizeof(int) * (size_t)loop_length);
    p->edges = malloc(sizeof(int) * 4 * (size_t)edge_count);
    p->edge_t1 = malloc(sizeof(double) * 3 * (size_t)edge_count);
    p->edge_t2 = malloc(sizeof(double) * 3 * (size_t)edge_count);
    p->edge_orientation = malloc(sizeof(double) * 3 * (size_t)edge_count);
    p->neighbour_first = malloc(sizeof(int) * (size_t)(vertex_count + 1));
    p->neighbours = malloc(sizeof(int) * 2 * (size_t)edge_count);
    if (!p->vertices || !p->face_normals || !p->face_offsets || !p->face_first ||
        !p->face_vertices || !p->edges || !p->edge_t1 || !p->edge_t2 || !p->edge_orientation ||
        !p->neighbour_first || !p->neighbours) {
        pp_polytope_destroy(p);
        return NULL;
    }
    return p;
}

void pp_polytope_destroy(pp_polytope *p)
{
    if (!p) return;
    free(p->vertices);
    free(p->face_normals);
    free(p->face_offsets);
    free(p->face_first);
    free(p->face_vertices);
    free(p->edges);
    free(p->edge_t1);
    free(p->edge_t2);
    free(p->edge_orientation);
    free(p->neighbour_first);
    free(p->neighbours);
    free(p);
}

/* ------------------------------------------------------------- edges, omega(v), checks */

typedef struct half_edge {
    int lo, hi, face, forward; /* forward: the face's CCW loop runs lo -> hi */
} half_edge;

static int half_edge_compare(const void *x, const void *y)
{
    const half_edge *a = x, *b = y;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
    return a->forward - b->forward;
}

static double polytope_scale(const pp_polytope *p)
{
    double s = 0.0;
    for (int i = 0; i < p->vertex_count; ++i)
        for (int k = 0; k < 3; ++k) s = fmax(s, fabs(p->vertices[3 * i + k]));
    return s > 0.0 ? s : 1.0;
}

static void update_centroid(pp_polytope *p)
{
    double c[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < p->vertex_count; ++i) pp_v3_add(c, c, p->vertices + 3 * i);
    pp_v3_scale(p->centroid, 1.0 / p->vertex_count, c);
    p->radius = 0.0;
    for (int i = 0; i < p->vertex_count; ++i) {
        double d[3];
        pp_v3_sub(d, p->vertices + 3 * i, p->centroid);
        p->radius = fmax(p->radius, pp_v3_norm(d));
    }
}

/*
 * Convexity, the global half of the check: every vertex on or below every face plane
 * (eta_f . v <= d_f + tol). Done naively it is O(V F): for the hull of 100 000 points on a
 * sphere (V = 1e5, F = 2e5) 2e10 dot products, and pp_convex_create did not return.
 *
 * The same test, exactly, on a tree of the vertices. About the centroid c (strictly inside),
 * a vertex is x = c + r u with |u| = 1; each node of the tree bounds its vertices by a box
 * [lo, hi] and by a cone (unit axis a, half-angle alpha: a . u >= cos alpha) with r in
 * [r_min, r_max]. Face f descends only into nodes that may reach beyond its plane:
 *   box:  max over the box of eta . x = sum_k eta_k (eta_k > 0 ? hi_k : lo_k)  > d_f + tol;
 *   cone: the angle theta between eta and a, the angle between eta and any u of the node is
 *         at least theta - alpha (triangle inequality on the sphere), so
 *         eta . (x - c) <= r cos(max(0, theta - alpha)), with r = r_max where that cosine is
 *         >= 0 and r_min where it is < 0                                      > d_f - eta . c + tol.
 * A node failing either test holds no vertex beyond the plane (its bounds hold for every
 * vertex in it; their rounding, ~1e-15 of the size, is far below tol). The box is tight on
 * flat parts of a hull, the cone on round ones: a cospherical hull's plane lies within
 * ~ (edge length)^2 of the sphere, so only the nodes whose cone (nearly) contains eta are
 * opened, O(log V) of them. Split: the median of the longest side of the node's directions'
 * bounding box; leaves of at most VERTEX_LEAF vertices. Measured on 100 000 points on a
 * sphere: about 60 nodes opened per face, 0.2 s for the 2e5 faces (the naive loop: 0.47 s
 * at 16 000 points, so about 20 s at 100 000).
 */
enum { VERTEX_LEAF = 8 };

typedef struct vertex_node {
    double lo[3], hi[3];           /* box of the vertices */
    double axis[3], cos_alpha, sin_alpha, r_min, r_max; /* cone about the centroid */
    int first, count;              /* leaf: order[first .. first + count); inner: count = -1 */
    int left, right;
} vertex_node;

typedef struct vertex_tree {
    const double *vertices;
    const double *direction;       /* u per vertex */
    const double *radius;          /* r per vertex */
    int *order;
    vertex_node *nodes;
    int node_count;
} vertex_tree;

/* Partially sort order[lo..hi) by key k of `values` (stride 3) so that order[mid] holds the
 * median (Hoare's quickselect, in place). */
static void select_median(const double *values, int *order, int lo, int hi, int mid, int k)
{
    while (hi - lo > 1) {
        double pivot = values[3 * order[lo + (hi - lo) / 2] + k];
        int i = lo, j = hi - 1;
        while (i <= j) {
            while (values[3 * order[i] + k] < pivot) ++i;
            while (values[3 * order[j] + k] > pivot) --j;
            if (i <= j) {
                int t = order[i];
                order[i++] = order[j];
                order[j--] = t;
            }
        }
        if (mid <= j) hi = j + 1;
        else if (mid >= i) lo = i;
        else return; /* order[j + 1 .. i) all equal the pivot */
    }
}

static int build_vertex_node(vertex_tree *t, int first, int count)
{
    int b = t->node_count++;
    vertex_node *node = &t->nodes[b]; /* nodes is sized once: node stays valid */
    double ulo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, uhi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    double sum[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < 3; ++k) node->lo[k] = HUGE_VAL, node->hi[k] = -HUGE_VAL;
    node->r_min = HUGE_VAL;
    node->r_max = 0.0;
    for (int i = first; i < first + count; ++i) {
        int v = t->order[i];
        const double *x = t->vertices + 3 * v, *u = t->direction + 3 * v;
        for (int k = 0; k < 3; ++k) {
            node->lo[k] = fmin(node->lo[k], x[k]);
            node->hi[k] = fmax(node->hi[k], x[k]);
            ulo[k] = fmin(ulo[k], u[k]);
            uhi[k] = fmax(uhi[k], u[k]);
        }
        pp_v3_add(sum, sum, u);
        node->r_min = fmin(node->r_min, t->radius[v]);
        node->r_max = fmax(node->r_max, t->radius[v]);
    }
    /* The cone: axis the mean direction, alpha the widest direction from it. A node whose
     * directions cancel gets the whole sphere (cos alpha = -1). */
    double length = pp_v3_norm(sum);
    node->cos_alpha = -1.0;
    if (length > 1e-6 * count) {
        pp_v3_scale(node->axis, 1.0 / length, sum);
        double cos_alpha = 1.0;
        for (int i = first; i < first + count; ++i)
            cos_alpha = fmin(cos_alpha, pp_v3_dot(node->axis, t->direction + 3 * t->order[i]));
        node->cos_alpha = fmax(-1.0, cos_alpha);
    } else {
        node->axis[0] = 1.0, node->axis[1] = node->axis[2] = 0.0;
    }
    node->sin_alpha = sqrt(fmax(0.0, 1.0 - node->cos_alpha * node->cos_alpha));
    node->first = first;
    node->count = count;
    node->left = node->right = -1;
    if (count <= VERTEX_LEAF) return b;
    int axis = 0;
    for (int k = 1; k < 3; ++k)
        if (uhi[k] - ulo[k] > uhi[axis] - ulo[axis]) axis = k;
    int half = count / 2;
    select_median(t->direction, t->order, first, first + count, first + half, axis);
    node->count = -1;
    node->left = build_vertex_node(t, first, half);
    node->right = build_vertex_node(t, first + half, count - half);
    return b;
}

/* May a vertex of `node` lie beyond the plane eta . x = d + tol (c: the centroid)? */
static int node_reaches(const vertex_node *node, const double eta[3], double d, double tol,
                        const double c[3])
{
    double reach = 0.0;
    for (int k = 0; k < 3; ++k) reach += eta[k] * (eta[k] > 0.0 ? node->hi[k] : node->lo[k]);
    if (reach <= d + tol) return 0;
    double cos_theta = pp_v3_dot(eta, node->axis);
    if (cos_theta >= node->cos_alpha) return 1; /* eta inside the cone: r_max reaches it */
    double sin_theta = sqrt(fmax(0.0, 1.0 - cos_theta * cos_theta));
    double cos_gap = cos_theta * node->cos_alpha + sin_theta * node->sin_alpha; /* cos(theta - alpha) */
    double cone = cos_gap >= 0.0 ? node->r_max * cos_gap : node->r_min * cos_gap;
    return cone > d - pp_v3_dot(eta, c) + tol;
}

pp_status pp_polytope_vertices_below_faces(const pp_polytope *p, double tol)
{
    int n = p->vertex_count;
    /* A tree with leaves of at most VERTEX_LEAF (and, split at the median, at least
     * VERTEX_LEAF / 2) vertices has fewer than 2 n + 1 nodes and depth < 40 for n < 2^31;
     * a depth-first walk keeps at most depth + 1 of them. */
    double *direction = malloc(sizeof(double) * 3 * (size_t)n);
    double *radius = malloc(sizeof(double) * (size_t)n);
    vertex_tree t = {p->vertices, direction, radius, malloc(sizeof(int) * (size_t)n),
                     malloc(sizeof(vertex_node) * (size_t)(2 * n + 1)), 0};
    if (!direction || !radius || !t.order || !t.nodes) {
        free(direction);
        free(radius);
        free(t.order);
        free(t.nodes);
        return PP_ERR_NO_MEMORY;
    }
    for (int i = 0; i < n; ++i) {
        double r[3];
        pp_v3_sub(r, p->vertices + 3 * i, p->centroid);
        radius[i] = pp_v3_norm(r);
        pp_v3_scale(direction + 3 * i, radius[i] > 0.0 ? 1.0 / radius[i] : 0.0, r);
        t.order[i] = i;
    }
    build_vertex_node(&t, 0, n);
    /* Faces in the order of the tree's leaves (by their first vertex; a counting sort), so
     * that consecutive queries open the same nodes: the tree of 1e5 vertices is 24 MB, and in
     * qhull's face order nearly every node opened was a cache miss. `radius` is reused for
     * the vertices' ranks. */
    int *rank = (int *)radius, *face_order = malloc(sizeof(int) * (size_t)(p->face_count + n + 1));
    if (!face_order) {
        free(direction);
        free(radius);
        free(t.order);
        free(t.nodes);
        return PP_ERR_NO_MEMORY;
    }
    int *bucket = face_order + p->face_count;
    memset(bucket, 0, sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; ++i) rank[t.order[i]] = i;
    for (int f = 0; f < p->face_count; ++f) bucket[rank[p->face_vertices[p->face_first[f]]] + 1]++;
    for (int i = 0; i < n; ++i) bucket[i + 1] += bucket[i];
    for (int f = 0; f < p->face_count; ++f) face_order[bucket[rank[p->face_vertices[p->face_first[f]]]]++] = f;
    pp_status status = PP_OK;
    int stack[64];
    for (int q = 0; q < p->face_count && status == PP_OK; ++q) {
        int f = face_order[q];
        const double *eta = p->face_normals + 3 * f;
        double d = p->face_offsets[f];
        int top = 0;
        stack[top++] = 0;
        while (top > 0 && status == PP_OK) {
            const vertex_node *node = &t.nodes[stack[--top]];
            if (!node_reaches(node, eta, d, tol, p->centroid)) continue;
            if (node->count < 0) {
                stack[top++] = node->left;
                stack[top++] = node->right;
                continue;
            }
            for (int i = node->first; i < node->first + node->count; ++i)
                if (pp_v3_dot(eta, p->vertices + 3 * t.order[i]) > d + tol) {
                    pp_log(PP_LOG_ERROR, "polytope: vertex %d lies outside face %d (not convex)",
                           t.order[i], f);
                    status = PP_ERR_DEGENERATE;
                    break;
                }
        }
    }
    free(direction);
    free(radius);
    free(t.order);
    free(t.nodes);
    free(face_order);
    return status;
}

/*
 * Fill edges, t1/t2/O_e and omega(v) from the face loops, then check that the result is a
 * closed convex polytope with outward faces: every edge in exactly two faces with opposite
 * directions (consistent orientation), V - E + F = 2, planar convex CCW loops, every vertex
 * on or below every face plane (pp_polytope_vertices_below_faces), the centroid strictly below every face
 * plane.
 */
static pp_status polytope_finish(pp_polytope *p)
{
    int loop_length = p->face_first[p->face_count];
    if (loop_length != 2 * p->edge_count) {
        pp_log(PP_LOG_ERROR, "polytope: face loops have odd total length %d (not closed)",
               loop_length);
        return PP_ERR_DEGENERATE;
    }
    half_edge *h = malloc(sizeof *h * (size_t)loop_length);
    if (!h) return PP_ERR_NO_MEMORY;
    for (int f = 0, k = 0; f < p->face_count; ++f) {
        int first = p->face_first[f], n = p->face_first[f + 1] - first;
        for (int i = 0; i < n; ++i, ++k) {
            int tail = p->face_vertices[first + i], head = p->face_vertices[first + (i + 1) % n];
            h[k] = (half_edge){tail < head ? tail : head, tail < head ? head : tail, f, tail < head};
        }
    }
    qsort(h, (size_t)loop_length, sizeof *h, half_edge_compare);
    for (int e = 0; e < p->edge_count; ++e) {
        const half_edge *back = &h[2 * e], *fwd = &h[2 * e + 1];
        if (back->lo != fwd->lo || back->hi != fwd->hi || back->forward || !fwd->forward ||
            (e + 1 < p->edge_count && h[2 * e + 2].lo == fwd->lo && h[2 * e + 2].hi == fwd->hi)) {
            pp_log(PP_LOG_ERROR,
                   "polytope: edge %d-%d is not shared by exactly two faces with opposite "
                   "directions (not closed or inconsistently oriented)",
                   h[2 * e].lo, h[2 * e].hi);
            free(h);
            return PP_ERR_DEGENERATE;
        }
        int *edge = p->edges + 4 * e;
        edge[0] = fwd->lo;
        edge[1] = fwd->hi;
        edge[2] = fwd->face;
        edge[3] = back->face;
    }
    free(h);

    if (p->vertex_count - p->edge_count + p->face_count != 2) {
        pp_log(PP_LOG_ERROR, "polytope: V - E + F = %d - %d + %d != 2", p->vertex_count,
               p->edge_count, p->face_count);
        return PP_ERR_DEGENERATE;
    }

    /* t1 = eta_f1 x e, t2 = e x eta_f2 (unit), O_e = e x (-(eta_f1 + eta_f2)), PEG §3. */
    for (int e = 0; e < p->edge_count; ++e) {
        const int *edge = p->edges + 4 * e;
        const double *n1 = p->face_normals + 3 * edge[2], *n2 = p->face_normals + 3 * edge[3];
        double d[3], t1[3], t2[3], bis[3];
        pp_v3_sub(d, p->vertices + 3 * edge[1], p->vertices + 3 * edge[0]);
        pp_v3_cross(t1, n1, d);
        pp_v3_cross(t2, d, n2);
        pp_v3_scale(p->edge_t1 + 3 * e, 1.0 / pp_v3_norm(t1), t1);
        pp_v3_scale(p->edge_t2 + 3 * e, 1.0 / pp_v3_norm(t2), t2);
        pp_v3_add(bis, n1, n2);
        pp_v3_scale(bis, -1.0, bis);
        pp_v3_cross(p->edge_orientation + 3 * e, d, bis);
    }

    /* omega(v) in CSR form. */
    memset(p->neighbour_first, 0, sizeof(int) * (size_t)(p->vertex_count + 1));
    for (int e = 0; e < p->edge_count; ++e) {
        p->neighbour_first[p->edges[4 * e] + 1]++;
        p->neighbour_first[p->edges[4 * e + 1] + 1]++;
    }
    for (int v = 0; v < p->vertex_count; ++v) p->neighbour_first[v + 1] += p->neighbour_first[v];
    int *fill = malloc(sizeof(int) * (size_t)p->vertex_count);
    if (!fill) return PP_ERR_NO_MEMORY;
    memcpy(fill, p->neighbour_first, sizeof(int) * (size_t)p->vertex_count);
    for (int e = 0; e < p->edge_count; ++e) {
        int t = p->edges[4 * e], hd = p->edges[4 * e + 1];
        p->neighbours[fill[t]++] = hd;
        p->neighbours[fill[hd]++] = t;
    }
    free(fill);

    update_centroid(p);

    double tol = CHECK_RELATIVE * polytope_scale(p);
    for (int f = 0; f < p->face_count; ++f) {
        const double *n = p->face_normals + 3 * f;
        double d = p->face_offsets[f];
        int first = p->face_first[f], count = p->face_first[f + 1] - first;
        if (count < 3 || fabs(pp_v3_norm(n) - 1.0) > 1e-12) {
            pp_log(PP_LOG_ERROR, "polytope: face %d has %d vertices or a non-unit normal", f, count);
            return PP_ERR_DEGENERATE;
        }
        if (pp_v3_dot(n, p->centroid) > d - tol) {
            pp_log(PP_LOG_ERROR, "polytope: face %d does not face outward", f);
            return PP_ERR_DEGENERATE;
        }
        for (int i = 0; i < count; ++i) {
            const double *a = p->vertices + 3 * p->face_vertices[first + i];
            const double *b = p->vertices + 3 * p->face_vertices[first + (i + 1) % count];
            const double *c = p->vertices + 3 * p->face_vertices[first + (i + 2) % count];
            double u[3], w[3], x[3];
            pp_v3_sub(u, b, a);
            pp_v3_sub(w, c, b);
            pp_v3_cross(x, u, w);
            if (fabs(pp_v3_dot(n, a) - d) > tol || pp_v3_dot(x, n) < -tol * pp_v3_norm(u)) {
                pp_log(PP_LOG_ERROR, "polytope: face %d is not a planar convex CCW polygon", f);
                return PP_ERR_DEGENERATE;
            }
        }
    }
    return pp_polytope_vertices_below_faces(p, tol);
}

/* ------------------------------------------------------------------------------- box */

/* Vertex i = (±lx/2, ±ly/2, ±lz/2) with bit 0 = +x, bit 1 = +y, bit 2 = +z; loops CCW. */
static const int BOX_FACES[6][4] = {
    {1, 3, 7, 5}, {0, 4, 6, 2}, /* +x, -x */
    {2, 6, 7, 3}, {0, 1, 5, 4}, /* +y, -y */
    {4, 5, 7, 6}, {0, 2, 3, 1}, /* +z, -z */
};

pp_status pp_polytope_box(const double lengths[3], pp_polytope **out)
{
    if (!lengths || !out) {
        pp_log(PP_LOG_ERROR, "pp_polytope_box: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    for (int k = 0; k < 3; ++k)
        if (!isfinite(lengths[k]) || lengths[k] <= 0.0) {
            pp_log(PP_LOG_ERROR, "pp_polytope_box: side length %d is %g (must be finite and > 0)",
                   k, lengths[k]);
            return PP_ERR_INVALID_ARGUMENT;
        }
    pp_polytope *p = polytope_alloc(8, 6, 24);
    if (!p) return PP_ERR_NO_MEMORY;
    for (int i = 0; i < 8; ++i)
        for (int k = 0; k < 3; ++k)
            p->vertices[3 * i + k] = ((i >> k) & 1 ? 0.5 : -0.5) * lengths[k];
    for (int f = 0; f < 6; ++f) {
        int axis = f / 2;
        double sign = f % 2 ? -1.0 : 1.0;
        p->face_first[f] = 4 * f;
        memcpy(p->face_vertices + 4 * f, BOX_FACES[f], sizeof BOX_FACES[f]);
        for (int k = 0; k < 3; ++k) p->face_normals[3 * f + k] = k == axis ? sign : 0.0;
        p->face_offsets[f] = 0.5 * lengths[axis];
    }
    p->face_first[6] = 24;
    pp_status s = polytope_finish(p);
    if (s != PP_OK) {
        pp_polytope_destroy(p);
        return s;
    }
    *out = p;
    return PP_OK;
}

/*
 * The prism inscribed in a cylinder (pegplus/geometry.h). With N sides, vertex i (bottom)
 * and N + i (top) sit on the cylinder's rims at angle 2 pi i/N, so side face k, between
 * vertices k and k + 1, has its outward normal at angle (2k + 1) pi/N and offset r cos(pi/N).
 * Loops CCW seen from outside: a side face in the basis (e_theta, z), whose cross product is
 * the outward normal: B_k, B_k+1, T_k+1, T_k; the top by increasing angle, the bottom by
 * decreasing angle. V = 2N, E = 3N, F = N + 2.
 */
pp_status pp_polytope_cylinder_prism(double radius, double length, int sides, pp_polytope **out)
{
    if (!out) {
        pp_log(PP_LOG_ERROR, "pp_polytope_cylinder_prism: NULL output");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (!isfinite(radius) || radius <= 0.0 || !isfinite(length) || length <= 0.0 || sides < 3 ||
        sides > (1 << 20)) {
        pp_log(PP_LOG_ERROR, "pp_polytope_cylinder_prism: radius %g and length %g must be finite "
                             "and > 0, sides %d in [3, 2^20]", radius, length, sides);
        return PP_ERR_INVALID_ARGUMENT;
    }
    const int n = sides;
    pp_polytope *p = polytope_alloc(2 * n, n + 2, 6 * n);
    if (!p) return PP_ERR_NO_MEMORY;
    const double pi = 3.14159265358979323846, hh = 0.5 * length;
    for (int i = 0; i < n; ++i) {
        double theta = 2.0 * pi * i / n, x = radius * cos(theta), y = radius * sin(theta);
        double *bottom = p->vertices + 3 * i, *top = p->vertices + 3 * (n + i);
        bottom[0] = top[0] = x;
        bottom[1] = top[1] = y;
        bottom[2] = -hh;
        top[2] = hh;
    }
    for (int k = 0; k < n; ++k) {
        double phi = (2 * k + 1) * pi / n;
        int *loop = p->face_vertices + 4 * k, next = (k + 1) % n;
        loop[0] = k;
        loop[1] = next;
        loop[2] = n + next;
        loop[3] = n + k;
        p->face_first[k] = 4 * k;
        p->face_normals[3 * k] = cos(phi);
        p->face_normals[3 * k + 1] = sin(phi);
        p->face_normals[3 * k + 2] = 0.0;
        p->face_offsets[k] = radius * cos(pi / n);
    }
    int *top = p->face_vertices + 4 * n, *bottom = top + n;
    for (int i = 0; i < n; ++i) {
        top[i] = n + i;
        bottom[i] = n - 1 - i;
    }
    p->face_first[n] = 4 * n;
    p->face_first[n + 1] = 5 * n;
    p->face_first[n + 2] = 6 * n;
    const double up[3] = {0.0, 0.0, 1.0}, down[3] = {0.0, 0.0, -1.0};
    memcpy(p->face_normals + 3 * n, up, sizeof up);
    memcpy(p->face_normals + 3 * (n + 1), down, sizeof down);
    p->face_offsets[n] = p->face_offsets[n + 1] = hh;
    pp_status s = polytope_finish(p);
    if (s != PP_OK) {
        pp_polytope_destroy(p);
        return s;
    }
    *out = p;
    return PP_OK;
}

/* --------------------------------------------------------------------- hull of points */

static int point_compare(const void *x, const void *y)
{
    const double *a = x, *b = y;
    for (int k = 0; k < 3; ++k)
        if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    return 0;
}

static double distance_to_line(const double x[3], const double a[3], const double u[3])
{
    double r[3], c[3];
    pp_v3_sub(r, x, a);
    pp_v3_cross(c, r, u);
    return pp_v3_norm(c);
}

/*
 * Volume test of a point cloud in O(n): a = the point farthest from point 0, b = the point
 * farthest from a (≥ half the diameter D), c = farthest from line ab, then the
 * largest distance from plane abc. The cloud is collinear if dist(c, ab) <= tol and coplanar if that distance <= tol,
 * tol = FLAT_RELATIVE * D. Messages name the problem.
 */
static pp_status check_volume(const double *pts, int n)
{
    int ia = 0, ib = 0, ic = 0;
    double best = -1.0, r[3];
    for (int i = 0; i < n; ++i) {
        pp_v3_sub(r, pts + 3 * i, pts);
        if (pp_v3_dot(r, r) > best) best = pp_v3_dot(r, r), ia = i;
    }
    best = -1.0;
    for (int i = 0; i < n; ++i) {
        pp_v3_sub(r, pts + 3 * i, pts + 3 * ia);
        if (pp_v3_dot(r, r) > best) best = pp_v3_dot(r, r), ib = i;
    }
    double size = sqrt(best), tol = FLAT_RELATIVE * size, u[3];
    pp_v3_sub(u, pts + 3 * ib, pts + 3 * ia);
    pp_v3_scale(u, 1.0 / size, u);
    best = -1.0;
    for (int i = 0; i < n; ++i) {
        double d = distance_to_line(pts + 3 * i, pts + 3 * ia, u);
        if (d > best) best = d, ic = i;
    }
    if (best <= tol) {
        pp_log(PP_LOG_ERROR, "pp_polytope_from_points: all points are collinear (zero volume)");
        return PP_ERR_DEGENERATE;
    }
    double w[3], nrm[3];
    pp_v3_sub(w, pts + 3 * ic, pts + 3 * ia);
    pp_v3_cross(nrm, u, w);
    pp_v3_scale(nrm, 1.0 / pp_v3_norm(nrm), nrm);
    best = -1.0;
    for (int i = 0; i < n; ++i) {
        pp_v3_sub(r, pts + 3 * i, pts + 3 * ia);
        double d = fabs(pp_v3_dot(r, nrm));
        if (d > best) best = d;
    }
    if (best <= tol) {
        pp_log(PP_LOG_ERROR, "pp_polytope_from_points: all points are coplanar (zero volume)");
        return PP_ERR_DEGENERATE;
    }
    return PP_OK;
}

/* Sort a face's vertex loop CCW seen from outside: by angle about its centre in the basis
 * (u, n x u), which turns counter-clockwise about the outward normal n. */
typedef struct angle_key {
    double angle;
    int vertex;
} angle_key;

static int angle_compare(const void *x, const void *y)
{
    const angle_key *a = x, *b = y;
    return (a->angle > b->angle) - (a->angle < b->angle);
}

static void order_loop(const double *vertices, const double n[3], int *loop, int count,
                       angle_key *keys)
{
    double c[3] = {0.0, 0.0, 0.0}, u[3], w[3];
    for (int i = 0; i < count; ++i) pp_v3_add(c, c, vertices + 3 * loop[i]);
    pp_v3_scale(c, 1.0 / count, c);
    pp_v3_sub(u, vertices + 3 * loop[0], c);
    pp_v3_cross(w, n, u);
    for (int i = 0; i < count; ++i) {
        double r[3];
        pp_v3_sub(r, vertices + 3 * loop[i], c);
        keys[i] = (angle_key){atan2(pp_v3_dot(r, w), pp_v3_dot(r, u)), loop[i]};
    }
    qsort(keys, (size_t)count, sizeof *keys, angle_compare);
    for (int i = 0; i < count; ++i) loop[i] = keys[i].vertex;
}

/*
 * Run qhull (merged facets, "qhull" defaults: C-0 pre-merge) on the n distinct points and
 * build the polytope: vertices are copies of input points; a face's plane is qhull's normal
 * with offset max over its vertices of eta . v; vertices that qhull left in the middle of an
 * edge (in fewer than 3 faces) are dropped.
 */
static pp_status hull_with_qhull(double *pts, int n, pp_polytope **out)
{
    char *message = NULL;
    size_t message_length = 0;
    FILE *err = open_memstream(&message, &message_length);
    FILE *devnull = err ? NULL : fopen("/dev/null", "w");
    FILE *sink = err ? err : devnull;
    if (!sink) return PP_ERR_NO_MEMORY;

    qhT qh_storage;
    qhT *qh = &qh_storage;
    qh_zero(qh, sink);
    char command[] = "qhull";
    int exitcode = qh_new_qhull(qh, 3, n, pts, False, command, NULL, sink);
    pp_status status = PP_OK;
    pp_polytope *p = NULL;
    int *vertex_map = NULL, *incidence = NULL, *loops = NULL, *first = NULL;
    double *normals = NULL;
    angle_key *keys = NULL;

    if (exitcode) {
        fflush(sink);
        const char *text = message && message_length ? message : "(no message)";
        int line = (int)strcspn(text, "\n");
        pp_log(PP_LOG_ERROR, "pp_polytope_from_points: qhull failed (code %d): %.*s", exitcode,
               line, text);
        status = PP_ERR_DEGENERATE;
        goto done;
    }

    int facet_count = qh->num_facets, loop_length = 0, max_face = 0;
    facetT *facet;
    vertexT *vertex, **vertexp;
    FORALLfacets {
        int c = qh_setsize(qh, facet->vertices);
        loop_length += c;
        if (c > max_face) max_face = c;
    }
    vertex_map = malloc(sizeof(int) * (size_t)n);
    incidence = calloc((size_t)n, sizeof(int));
    loops = malloc(sizeof(int) * (size_t)loop_length);
    first = malloc(sizeof(int) * (size_t)(facet_count + 1));
    normals = malloc(sizeof(double) * 3 * (size_t)facet_count);
    keys = malloc(sizeof *keys * (size_t)max_face);
    if (!vertex_map || !incidence || !loops || !first || !normals || !keys) {
        status = PP_ERR_NO_MEMORY;
        goto done;
    }

    int f = 0, k = 0;
    FORALLfacets {
        first[f] = k;
        for (int j = 0; j < 3; ++j) normals[3 * f + j] = facet->normal[j];
        FOREACHvertex_(facet->vertices) {
            int id = qh_pointid(qh, vertex->point);
            loops[k++] = id;
            incidence[id]++;
        }
        ++f;
    }
    first[f] = k;

    /* Drop vertices in fewer than 3 faces (mid-edge), then renumber the rest. */
    int vertex_count = 0, kept = 0;
    for (int i = 0; i < n; ++i) vertex_map[i] = incidence[i] >= 3 ? vertex_count++ : -1;
    for (f = 0; f < facet_count; ++f) {
        int start = kept;
        for (int j = first[f]; j < first[f + 1]; ++j)
            if (vertex_map[loops[j]] >= 0) loops[kept++] = vertex_map[loops[j]];
        first[f] = start;
    }
    first[facet_count] = kept;

    p = polytope_alloc(vertex_count, facet_count, kept);
    if (!p) {
        status = PP_ERR_NO_MEMORY;
        goto done;
    }
    for (int i = 0; i < n; ++i)
        if (vertex_map[i] >= 0) memcpy(p->vertices + 3 * vertex_map[i], pts + 3 * i, 3 * sizeof(double));
    memcpy(p->face_first, first, sizeof(int) * (size_t)(facet_count + 1));
    memcpy(p->face_vertices, loops, sizeof(int) * (size_t)kept);
    for (f = 0; f < facet_count; ++f) {
        double *nrm = p->face_normals + 3 * f;
        pp_v3_scale(nrm, 1.0 / pp_v3_norm(normals + 3 * f), normals + 3 * f);
        int *loop = p->face_vertices + first[f], count = first[f + 1] - first[f];
        double d = -HUGE_VAL;
        for (int j = 0; j < count; ++j) d = fmax(d, pp_v3_dot(nrm, p->vertices + 3 * loop[j]));
        p->face_offsets[f] = d;
        if (count >= 3) order_loop(p->vertices, nrm, loop, count, keys);
    }
    status = polytope_finish(p);

done:
    qh_freeqhull(qh, !qh_ALL);
    int curlong, totlong;
    qh_memfreeshort(qh, &curlong, &totlong);
    if (err) fclose(err);
    if (devnull) fclose(devnull);
    free(message);
    free(vertex_map);
    free(incidence);
    free(loops);
    free(first);
    free(normals);
    free(keys);
    if (status != PP_OK) {
        pp_polytope_destroy(p);
        return status;
    }
    *out = p;
    return PP_OK;
}

pp_status pp_polytope_from_points(const double *xyz, int count, pp_polytope **out)
{
    if (!xyz || !out) {
        pp_log(PP_LOG_ERROR, "pp_polytope_from_points: NULL argument (%s)", xyz ? "out" : "points");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (count < 0) {
        pp_log(PP_LOG_ERROR, "pp_polytope_from_points: negative point count %d", count);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (count < 4) {
        pp_log(PP_LOG_ERROR, "pp_polytope_from_points: too few points (%d, need at least 4)", count);
        return PP_ERR_DEGENERATE;
    }
    for (int i = 0; i < count; ++i)
        if (!pp_v3_finite(xyz + 3 * i)) {
            pp_log(PP_LOG_ERROR, "pp_polytope_from_points: point %d has a NaN or infinite coordinate", i);
            return PP_ERR_INVALID_ARGUMENT;
        }
    double *pts = malloc(sizeof(double) * 3 * (size_t)count);
    if (!pts) return PP_ERR_NO_MEMORY;
    memcpy(pts, xyz, sizeof(double) * 3 * (size_t)count);
    qsort(pts, (size_t)count, 3 * sizeof(double), point_compare);
    int distinct = 0;
    for (int i = 0; i < count; ++i)
        if (distinct == 0 || point_compare(pts + 3 * i, pts + 3 * (distinct - 1)) != 0)
            memmove(pts + 3 * distinct++, pts + 3 * i, 3 * sizeof(double));
    pp_status s;
    if (distinct < 4) {
        pp_log(PP_LOG_ERROR,
               "pp_polytope_from_points: duplicate points leave %d distinct points (need at least 4)",
               distinct);
        s = PP_ERR_DEGENERATE;
    } else {
        s = check_volume(pts, distinct);
        if (s == PP_OK) s = hull_with_qhull(pts, distinct, out);
    }
    free(pts);
    return s;
}

/* ------------------------------------------------------------------- mass properties */

/*
 * Uniform solid by tetrahedral decomposition about the vertex centroid c: each face loop is
 * fanned into triangles (x0, xi, xi+1) (relative to c), each with the tetrahedron (0, x0, xi,
 * xi+1) of signed volume V = x0 . (xi x xi+1) / 6 (> 0 for outward CCW loops). For a
 * tetrahedron with vertices y1..y4 and S = sum yj,
 *   int x dV = V S / 4,   int x x^T dV = V/20 (sum yj yj^T + S S^T)   (apex y4 = 0 here).
 * About the centre of mass g: C_g = C - V g g^T, inertia = rho (trace(C_g) I - C_g).
 */
pp_status pp_polytope_mass_properties(const pp_polytope *poly, double density, double *mass,
                                      double com[3], double inertia[9])
{
    if (!poly) {
        pp_log(PP_LOG_ERROR, "pp_polytope_mass_properties: NULL polytope");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (!isfinite(density) || density <= 0.0) {
        pp_log(PP_LOG_ERROR, "pp_polytope_mass_properties: density %g must be finite and > 0", density);
        return PP_ERR_INVALID_ARGUMENT;
    }
    const double *c = poly->centroid;
    double volume = 0.0, first[3] = {0.0, 0.0, 0.0}, second[9] = {0.0};
    for (int f = 0; f < poly->face_count; ++f) {
        const int *loop = poly->face_vertices + poly->face_first[f];
        int count = poly->face_first[f + 1] - poly->face_first[f];
        double y[3][3];
        pp_v3_sub(y[0], poly->vertices + 3 * loop[0], c);
        for (int i = 1; i + 1 < count; ++i) {
            pp_v3_sub(y[1], poly->vertices + 3 * loop[i], c);
            pp_v3_sub(y[2], poly->vertices + 3 * loop[i + 1], c);
            double x[3], s[3];
            pp_v3_cross(x, y[1], y[2]);
            double v = pp_v3_dot(y[0], x) / 6.0;
            for (int k = 0; k < 3; ++k) s[k] = y[0][k] + y[1][k] + y[2][k];
            volume += v;
            for (int r = 0; r < 3; ++r) {
                first[r] += v * s[r] / 4.0;
                for (int q = 0; q < 3; ++q)
                    second[3 * r + q] += v / 20.0 *
                        (y[0][r] * y[0][q] + y[1][r] * y[1][q] + y[2][r] * y[2][q] + s[r] * s[q]);
            }
        }
    }
    double g[3];
    pp_v3_scale(g, 1.0 / volume, first);
    double cg[9];
    for (int r = 0; r < 3; ++r)
        for (int q = 0; q < 3; ++q) cg[3 * r + q] = second[3 * r + q] - volume * g[r] * g[q];
    double trace = cg[0] + cg[4] + cg[8];
    if (mass) *mass = density * volume;
    if (com) pp_v3_add(com, c, g);
    if (inertia)
        for (int r = 0; r < 3; ++r)
            for (int q = 0; q < 3; ++q)
                inertia[3 * r + q] = density * ((r == q ? trace : 0.0) - cg[3 * r + q]);
    return PP_OK;
}

pp_status pp_polytope_translate(pp_polytope *poly, const double delta[3])
{
    if (!poly || !delta) {
        pp_log(PP_LOG_ERROR, "pp_polytope_translate: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (!pp_v3_finite(delta)) {
        pp_log(PP_LOG_ERROR, "pp_polytope_translate: delta is not finite");
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (int i = 0; i < poly->vertex_count; ++i) pp_v3_add(poly->vertices + 3 * i, poly->vertices + 3 * i, delta);
    for (int f = 0; f < poly->face_count; ++f)
        poly->face_offsets[f] += pp_v3_dot(poly->face_normals + 3 * f, delta);
    pp_v3_add(poly->centroid, poly->centroid, delta);
    return PP_OK;
}

void pp_polytope_pose_view(const pp_polytope *poly, const double position[3], const double R[9],
                           double *vertices, double *face_normals, double *face_offsets,
                           pp_polytope_view *view)
{
    for (int i = 0; i < poly->vertex_count; ++i) {
        pp_m3_mul(vertices + 3 * i, R, poly->vertices + 3 * i);
        pp_v3_add(vertices + 3 * i, vertices + 3 * i, position);
    }
    for (int f = 0; f < poly->face_count; ++f) {
        pp_m3_mul(face_normals + 3 * f, R, poly->face_normals + 3 * f);
        face_offsets[f] = poly->face_offsets[f] + pp_v3_dot(face_normals + 3 * f, position);
    }
    *view = (pp_polytope_view){poly->vertex_count, vertices,
                               poly->face_count, face_normals, face_offsets,
                               poly->face_first, poly->face_vertices,
                               poly->edge_count, poly->edges,
                               poly->neighbour_first, poly->neighbours};
}

/* Linear scan for small polytopes; hill climbing over omega(v) otherwise (a vertex with no
 * strictly better neighbour maximises a linear function over a convex polytope). */
int pp_polytope_support_index(const pp_polytope *poly, const double dir[3])
{
    int best = 0;
    double best_value = pp_v3_dot(dir, poly->vertices);
    if (poly->vertex_count <= 32) {
        for (int i = 1; i < poly->vertex_count; ++i) {
            double v = pp_v3_dot(dir, poly->vertices + 3 * i);
            if (v > best_value) best_value = v, best = i;
        }
        return best;
    }
    for (int moved = 1; moved;) {
        moved = 0;
        for (int k = poly->neighbour_first[best]; k < poly->neighbour_first[best + 1]; ++k) {
            int w = poly->neighbours[k];
            double v = pp_v3_dot(dir, poly->vertices + 3 * w);
            if (v > best_value) {
                best_value = v, best = w, moved = 1;
                break;
            }
        }
    }
    return best;
}
