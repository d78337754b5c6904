/*
 * Static triangle terrain (pegplus/terrain.h): triangles, their neighbours across edges, a
 * uniform grid for the queries, prisms built on first use, and the internal-edge rule.
 */
#include "pegplus/terrain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EDGE_BOUNDARY = 0, EDGE_FLAT = 1, EDGE_VALLEY = 2, EDGE_RIDGE = 3 };

typedef struct terrain_triangle {
    double v[9];              /* v0, v1, v2 */
    double eta[3];            /* unit front normal */
    double offset;            /* top plane: eta . x = offset */
    double thickness;         /* t: half the longest edge */
    double edge_out[9];       /* edge k = v_k -> v_k+1: in-plane outward unit normal */
    double edge_dir[9];       /* its unit direction */
    double neighbour_eta[9];  /* a ridge edge's neighbour normal */
    int edge_kind[3];
    int degenerate;
    pp_aabb box;              /* the prism's */
    unsigned stamp;           /* round in which it was last returned */
    pp_polytope *prism;       /* built on first use */
} terrain_triangle;

struct pp_terrain {
    int count;
    terrain_triangle *tri;
    unsigned round;
    int axis[2];              /* the grid's axes: the two widest of the terrain's box */
    double origin[2], cell;
    int cells[2];
    int *cell_first;          /* CSR: cell c holds items[cell_first[c] .. cell_first[c + 1]) */
    int *items;
};

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross3(double out[3], const double a[3], const double b[3])
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
           z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static void sub3(double out[3], const double a[3], const double b[3])
{
    for (int k = 0; k < 3; ++k) out[k] = a[k] - b[k];
}

static double norm3(const double a[3])
{
    return sqrt(dot3(a, a));
}

/* ---- Triangles and neighbours ------------------------------------------------------------ */

static void set_up_triangle(terrain_triangle *t)
{
    double e1[3], e2[3], longest = 0.0;
    sub3(e1, t->v + 3, t->v);
    sub3(e2, t->v + 6, t->v);
    cross3(t->eta, e1, e2);
    for (int k = 0; k < 3; ++k) {
        double e[3];
        sub3(e, t->v + 3 * ((k + 1) % 3), t->v + 3 * k);
        double len = norm3(e);
        if (len > longest) longest = len;
        for (int j = 0; j < 3; ++j) t->edge_dir[3 * k + j] = len > 0.0 ? e[j] / len : 0.0;
    }
    double area2 = norm3(t->eta);
    t->degenerate = !(area2 > 1e-12 * longest * longest) || longest == 0.0;
    if (t->degenerate) return;
    for (int k = 0; k < 3; ++k) t->eta[k] /= area2;
    t->offset = dot3(t->eta, t->v);
    t->thickness = 0.5 * longest;
    for (int k = 0; k < 3; ++k) cross3(t->edge_out + 3 * k, t->edge_dir + 3 * k, t->eta);
    for (int k = 0; k < 3; ++k) {
        t->box.min[k] = HUGE_VAL;
        t->box.max[k] = -HUGE_VAL;
    }
    for (int i = 0; i < 3; ++i)
        for (int s = 0; s < 2; ++s)
            for (int k = 0; k < 3; ++k) {
                double x = t->v[3 * i + k] - s * t->thickness * t->eta[k];
                if (x < t->box.min[k]) t->box.min[k] = x;
                if (x > t->box.max[k]) t->box.max[k] = x;
            }
}

/* An edge as a sort key: its end points in lexicographic order, and whose edge it is. */
typedef struct edge_record {
    double lo[3], hi[3];
    int tri, k;
} edge_record;

static int lex(const double a[3], const double b[3])
{
    for (int k = 0; k < 3; ++k)
        if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    return 0;
}

static int by_edge(const void *x, const void *y)
{
    const edge_record *a = x, *b = y;
    int c = lex(a->lo, b->lo);
    return c ? c : lex(a->hi, b->hi);
}

/*
 * Neighbours: triangles i and j share edge k of i when its end points are two vertices of j
 * (and no third triangle has them: a non-manifold edge is a boundary). The edge is a ridge
 * when j's third vertex w lies below i's plane, eta_i . (w - v_k) < -1e-9 |w - v_k|, a valley
 * when above (> 1e-9 |w - v_k|), flat otherwise.
 */
static pp_status find_neighbours(pp_terrain *t)
{
    edge_record *r = malloc(3 * (size_t)t->count * sizeof *r);
    if (!r) return PP_ERR_NO_MEMORY;
    int n = 0;
    for (int i = 0; i < t->count; ++i) {
        terrain_triangle *tr = &t->tri[i];
        for (int k = 0; k < 3; ++k) tr->edge_kind[k] = EDGE_BOUNDARY;
        if (tr->degenerate) continue;
        for (int k = 0; k < 3; ++k) {
            const double *a = tr->v + 3 * k, *b = tr->v + 3 * ((k + 1) % 3);
            int less = lex(a, b) < 0;
            memcpy(r[n].lo, less ? a : b, sizeof r[n].lo);
            memcpy(r[n].hi, less ? b : a, sizeof r[n].hi);
            r[n].tri = i;
            r[n++].k = k;
        }
    }
    qsort(r, (size_t)n, sizeof *r, by_edge);
    for (int g = 0; g < n;) {
        int e = g + 1;
        while (e < n && by_edge(&r[g], &r[e]) == 0) ++e;
        if (e - g == 2) {
            for (int s = 0; s < 2; ++s) {
                terrain_triangle *ti = &t->tri[r[g + s].tri], *tj = &t->tri[r[g + 1 - s].tri];
                int k = r[g + s].k, kj = r[g + 1 - s].k;
                const double *w = tj->v + 3 * ((kj + 2) % 3);
                double d[3];
                sub3(d, w, ti->v + 3 * k);
                const double rise = dot3(ti->eta, d), tol = 1e-9 * norm3(d);
                ti->edge_kind[k] = rise < -tol ? EDGE_RIDGE : rise > tol ? EDGE_VALLEY : EDGE_FLAT;
                memcpy(ti->neighbour_eta + 3 * k, tj->eta, 3 * sizeof(double));
            }
        }
        g = e;
    }
    free(r);
    return PP_OK;
}

/* ---- The grid ------------------------------------------------------------------------------ */

static int cell_index(const pp_terrain *t, int a, double x)
{
    double c = floor((x - t->origin[a]) / t->cell);
    if (!(c >= 0.0)) return 0;
    if (c >= t->cells[a]) return t->cells[a] - 1;
    return (int)c;
}

/* Cells of side `cell` over the two widest axes, about one triangle per cell (at most 2048
 * per axis); each triangle is listed in every cell its prism's box covers. */
static pp_status build_grid(pp_terrain *t)
{
    pp_aabb all;
    for (int k = 0; k < 3; ++k) {
        all.min[k] = HUGE_VAL;
        all.max[k] = -HUGE_VAL;
    }
    int live = 0;
    for (int i = 0; i < t->count; ++i) {
        if (t->tri[i].degenerate) continue;
        ++live;
        for (int k = 0; k < 3; ++k) {
            if (t->tri[i].box.min[k] < all.min[k]) all.min[k] = t->tri[i].box.min[k];
            if (t->tri[i].box.max[k] > all.max[k]) all.max[k] = t->tri[i].box.max[k];
        }
    }
    double ext[3];
    for (int k = 0; k < 3; ++k) ext[k] = live ? all.max[k] - all.min[k] : 0.0;
    int drop = ext[0] <= ext[1] && ext[0] <= ext[2] ? 0 : ext[1] <= ext[2] ? 1 : 2;
    t->axis[0] = drop == 0 ? 1 : 0;
    t->axis[1] = drop == 2 ? 1 : 2;
    double w0 = ext[t->axis[0]], w1 = ext[t->axis[1]];
    t->cell = live ? sqrt(fmax(w0 * w1, 1e-300) / live) : 1.0;
    if (!(t->cell > 0.0) || !isfinite(t->cell)) t->cell = 1.0;
    for (int a = 0; a < 2; ++a) {
        double w = ext[t->axis[a]];
        if (w / t->cell > 2047.0) t->cell = w / 2047.0;
    }
    for (int a = 0; a < 2; ++a) {
        t->origin[a] = live ? all.min[t->axis[a]] : 0.0;
        t->cells[a] = (int)(ext[t->axis[a]] / t->cell) + 1;
    }
    size_t ncell = (size_t)t->cells[0] * (size_t)t->cells[1];
    t->cell_first = calloc(ncell + 1, sizeof(int));
    if (!t->cell_first) return PP_ERR_NO_MEMORY;
    for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < t->count; ++i) {
            const terrain_triangle *tr = &t->tri[i];
            if (tr->degenerate) continue;
            int lo0 = cell_index(t, 0, tr->box.min[t->axis[0]]);
            int hi0 = cell_index(t, 0, tr->box.max[t->axis[0]]);
            int lo1 = cell_index(t, 1, tr->box.min[t->axis[1]]);
            int hi1 = cell_index(t, 1, tr->box.max[t->axis[1]]);
            for (int a = lo0; a <= hi0; ++a)
                for (int b = lo1; b <= hi1; ++b) {
                    size_t c = (size_t)a * (size_t)t->cells[1] + (size_t)b;
                    if (pass == 0) t->cell_first[c + 1]++;
                    else t->items[t->cell_first[c]++] = i;
                }
        }
        if (pass == 0) {
            for (size_t c = 0; c < ncell; ++c) t->cell_first[c + 1] += t->cell_first[c];
            t->items = malloc((size_t)(t->cell_first[ncell] > 0 ? t->cell_first[ncell] : 1) * sizeof(int));
            if (!t->items) return PP_ERR_NO_MEMORY;
        } else { /* the fill moved each start to the next cell's: shift back */
            for (size_t c = ncell; c > 0; --c) t->cell_first[c] = t->cell_first[c - 1];
            t->cell_first[0] = 0;
        }
    }
    return PP_OK;
}

/* ---- Public ------------------------------------------------------------------------------ */

pp_status pp_terrain_create(const double *triangles, int count, pp_terrain **out)
{
    if (!triangles || !out) {
        pp_log(PP_LOG_ERROR, "pp_terrain_create: NULL triangles or out");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (count < 1) {
        pp_log(PP_LOG_ERROR, "pp_terrain_create: %d triangles (at least 1)", count);
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (long i = 0; i < 9L * count; ++i)
        if (!isfinite(triangles[i])) {
            pp_log(PP_LOG_ERROR, "pp_terrain_create: triangle %ld has a NaN or infinite "
                                 "coordinate", i / 9);
            return PP_ERR_INVALID_ARGUMENT;
        }
    pp_terrain *t = calloc(1, sizeof *t);
    if (t) t->tri = calloc((size_t)count, sizeof *t->tri);
    pp_status st = t && t->tri ? PP_OK : PP_ERR_NO_MEMORY;
    if (st == PP_OK) {
        t->count = count;
        for (int i = 0; i < count; ++i) {
            memcpy(t->tri[i].v, triangles + 9 * (size_t)i, sizeof t->tri[i].v);
            set_up_triangle(&t->tri[i]);
        }
        st = find_neighbours(t);
    }
    if (st == PP_OK) st = build_grid(t);
    if (st != PP_OK) {
        pp_log(PP_LOG_ERROR, "pp_terrain_create: out of memory (%d triangles)", count);
        pp_terrain_destroy(t);
        return st;
    }
    *out = t;
    return PP_OK;
}

void pp_terrain_destroy(pp_terrain *t)
{
    if (!t) return;
    for (int i = 0; t->tri && i < t->count; ++i) pp_polytope_destroy(t->tri[i].prism);
    free(t->tri);
    free(t->cell_first);
    free(t->items);
    free(t);
}

int pp_terrain_triangle_count(const pp_terrain *t)
{
    return t->count;
}

void pp_terrain_round(pp_terrain *t)
{
    if (++t->round == 0) { /* wrapped: forget every stamp */
        for (int i = 0; i < t->count; ++i) t->tri[i].stamp = 0;
        t->round = 1;
    }
}

pp_status pp_terrain_query(pp_terrain *t, const pp_aabb *box, int **hits, int *hit_count,
                           int *hit_capacity)
{
    int lo0 = cell_index(t, 0, box->min[t->axis[0]]), hi0 = cell_index(t, 0, box->max[t->axis[0]]);
    int lo1 = cell_index(t, 1, box->min[t->axis[1]]), hi1 = cell_index(t, 1, box->max[t->axis[1]]);
    for (int a = lo0; a <= hi0; ++a)
        for (int b = lo1; b <= hi1; ++b) {
            size_t c = (size_t)a * (size_t)t->cells[1] + (size_t)b;
            for (int e = t->cell_first[c]; e < t->cell_first[c + 1]; ++e) {
                terrain_triangle *tr = &t->tri[t->items[e]];
                if (tr->stamp == t->round) continue;
                int overlap = 1;
                for (int k = 0; k < 3 && overlap; ++k)
                    overlap = tr->box.min[k] <= box->max[k] && box->min[k] <= tr->box.max[k];
                if (!overlap) continue;
                tr->stamp = t->round;
                if (*hit_count >= *hit_capacity) {
                    int cap = *hit_capacity ? 2 * *hit_capacity : 64;
                    int *grown = realloc(*hits, (size_t)cap * sizeof(int));
                    if (!grown) {
                        pp_log(PP_LOG_ERROR, "pp_terrain_query: out of memory");
                        return PP_ERR_NO_MEMORY;
                    }
                    *hits = grown;
                    *hit_capacity = cap;
                }
                (*hits)[(*hit_count)++] = t->items[e];
            }
        }
    return PP_OK;
}

pp_status pp_terrain_prism(pp_terrain *t, int i, const pp_polytope **out)
{
    terrain_triangle *tr = &t->tri[i];
    if (tr->degenerate) return PP_ERR_DEGENERATE;
    if (!tr->prism) {
        double p[18];
        for (int v = 0; v < 3; ++v)
            for (int k = 0; k < 3; ++k) {
                p[3 * v + k] = tr->v[3 * v + k];
                p[9 + 3 * v + k] = tr->v[3 * v + k] - tr->thickness * tr->eta[k];
            }
        pp_status st = pp_polytope_from_points(p, 6, &tr->prism);
        if (st != PP_OK) return st;
    }
    *out = tr->prism;
    return PP_OK;
}

void pp_terrain_normal(const pp_terrain *t, int i, double eta[3])
{
    memcpy(eta, t->tri[i].eta, 3 * sizeof(double));
}

/* Is n, projected on the plane normal to the unit edge direction u, on the shorter arc from
 * a to b (the normals of a ridge between faces of normals a and b)? */
static int on_arc(const double n[3], const double a[3], const double b[3], const double u[3])
{
    double m[3], axb[3], axm[3], mxb[3];
    const double along = dot3(n, u);
    for (int k = 0; k < 3; ++k) m[k] = n[k] - along * u[k];
    double mid[3] = {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
    if (dot3(m, mid) <= 0.0) return 0;
    cross3(axb, a, b);
    cross3(axm, a, m);
    cross3(mxb, m, b);
    const double s = dot3(axb, u), tol = 1e-12 * norm3(m);
    return s * dot3(axm, u) >= -tol * fabs(s) && s * dot3(mxb, u) >= -tol * fabs(s);
}

int pp_terrain_contact_rule(const pp_terrain *t, int i, int terrain_is_a, double core_radius,
                            pp_contact *c)
{
    /* the terrain's feature is a vertex or an edge (not a face) */
    const int terrain_corner = c->kind == PP_CONTACT_EDGE_EDGE ||
                               (terrain_is_a && c->kind == PP_CONTACT_VERTEX_FACE) ||
                               (!terrain_is_a && c->kind == PP_CONTACT_FACE_VERTEX);
    const terrain_triangle *tr = &t->tri[i];
    double n_t[3], p_t[3], p_o[3];
    for (int k = 0; k < 3; ++k) {
        const double p_b = c->p_a[k] + c->psi * c->n[k];
        n_t[k] = terrain_is_a ? c->n[k] : -c->n[k];
        p_t[k] = terrain_is_a ? c->p_a[k] : p_b;
        p_o[k] = terrain_is_a ? p_b : c->p_a[k];
    }
    /* identity across steps (the warm start's key): the triangle, and the other shape's
     * feature with the kind of contact it was */
    const int other = 4 * (terrain_is_a ? c->feature_b : c->feature_a) + (int)c->kind;
    c->feature_a = terrain_is_a ? i : other;
    c->feature_b = terrain_is_a ? other : i;
    c->kind = PP_CONTACT_POINT;
    if (dot3(tr->eta, p_o) - tr->offset < -0.5 * tr->thickness) return 1; /* from underneath */
    const double tol = 1e-9;
    int touched = 0, flat = 1, ridges = 0;
    int allowed = dot3(n_t, tr->eta) >= 1.0 - 1e-12; /* the top face */
    for (int k = 0; k < 3; ++k) {
        double d[3];
        sub3(d, p_t, tr->v + 3 * k);
        if (dot3(tr->edge_out + 3 * k, d) < -tol) continue; /* not on edge k */
        ++touched;
        flat = flat && tr->edge_kind[k] == EDGE_FLAT;
        if (tr->edge_kind[k] == EDGE_BOUNDARY) allowed = 1;
        if (tr->edge_kind[k] == EDGE_RIDGE) {
            ++ridges;
            if (on_arc(n_t, tr->eta, tr->neighbour_eta + 3 * k, tr->edge_dir + 3 * k)) allowed = 1;
        }
    }
    if (terrain_corner && touched && flat) return 0; /* inside a flat region: redundant */
    if (allowed) return 1;
    if (touched >= 2 && ridges == touched) return 1; /* a convex corner keeps its normals */
    if (touched) return 0; /* the neighbour across the edge has this contact */
    /* the top face's contact: core point, its lowest point along eta, the gap to the plane */
    double q[3];
    for (int k = 0; k < 3; ++k) q[k] = p_o[k] + core_radius * (n_t[k] - tr->eta[k]);
    const double psi = dot3(tr->eta, q) - tr->offset;
    for (int k = 0; k < 3; ++k) {
        c->n[k] = terrain_is_a ? tr->eta[k] : -tr->eta[k];
        c->p_a[k] = terrain_is_a ? q[k] - psi * tr->eta[k] : q[k];
    }
    c->psi = psi;
    return 1;
}
