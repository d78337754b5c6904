/*
 * Posed shapes (pegplus/geometry.h): constructors, validation, support functions, centres
 * and bounding boxes.
 */
#include "geometry_internal.h"

#include <string.h>

static const double IDENTITY[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static const double ORIGIN[3] = {0, 0, 0};
static const double UNIT_TOLERANCE = 1e-9; /* |n| - 1, |R^T R - I| */

static pp_shape shape_posed(pp_shape_kind kind, const double position[3], const double R[9])
{
    pp_shape s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    memcpy(s.position, position ? position : ORIGIN, sizeof s.position);
    memcpy(s.R, R ? R : IDENTITY, sizeof s.R);
    return s;
}

pp_shape pp_shape_make_sphere(double radius, const double position[3])
{
    pp_shape s = shape_posed(PP_SHAPE_SPHERE, position, NULL);
    s.radius = radius;
    return s;
}

pp_shape pp_shape_make_box(const double lengths[3], const double position[3], const double R[9])
{
    pp_shape s = shape_posed(PP_SHAPE_BOX, position, R);
    memcpy(s.lengths, lengths, sizeof s.lengths);
    return s;
}

pp_shape pp_shape_make_capsule(double radius, double length, const double position[3],
                               const double R[9])
{
    pp_shape s = shape_posed(PP_SHAPE_CAPSULE, position, R);
    s.radius = radius;
    s.length = length;
    return s;
}

pp_shape pp_shape_make_plane(const double normal[3], double offset)
{
    pp_shape s = shape_posed(PP_SHAPE_PLANE, NULL, NULL);
    memcpy(s.normal, normal, sizeof s.normal);
    s.offset = offset;
    return s;
}

pp_shape pp_shape_make_polytope(const pp_polytope *poly, const double position[3],
                                const double R[9])
{
    pp_shape s = shape_posed(PP_SHAPE_POLYTOPE, position, R);
    s.polytope = poly;
    return s;
}

pp_shape pp_shape_make_cylinder(double radius, double length, const pp_polytope *prism,
                                const double position[3], const double R[9])
{
    pp_shape s = shape_posed(PP_SHAPE_CYLINDER, position, R);
    s.radius = radius;
    s.length = length;
    s.polytope = prism;
    return s;
}

/*
 * A cylinder against a box, polytope, capsule or cylinder: its inscribed prism P, turned
 * about the axis so that its vertices 0 and N (local +x) lie in the direction u, the unit
 * projection on C's cap plane of n, the exact closest-point normal from the cylinder C to
 * the other shape B (pp_shape_distance on C itself). C's support point along n is its rim
 * point c +- (L/2) a + r u (the whole generator at u when n is across the axis), which is
 * then a vertex (an edge) of P, so h_P(n) = h_C(n). Apart: P lies inside C, so
 * dist(P, B) >= dist(C, B), and C's closest point to B is a point of P, so
 * dist(P, B) <= dist(C, B): the turned prism has the cylinder's exact distance, and its
 * nearest feature moves with the closest point as the cylinder rolls. Overlapping, its depth
 * is at most the cylinder's. n along the axis (a cap on a face) leaves P unturned: the cap
 * polygon's vertices lie on the rim at any turn.
 */
pp_shape pp_shape_pair_form(const pp_shape *s, const pp_shape *other)
{
    if (s->kind != PP_SHAPE_CYLINDER || other->kind == PP_SHAPE_PLANE ||
        other->kind == PP_SHAPE_SPHERE)
        return *s;
    pp_shape prism = pp_shape_make_polytope(s->polytope, s->position, s->R);
    pp_proximity p;
    if (pp_shape_distance(s, other, &p) != PP_OK) return prism;
    double n[3];
    pp_m3_tmul(n, s->R, p.n);
    double rho = sqrt(n[0] * n[0] + n[1] * n[1]);
    if (!(rho > 1e-9)) return prism;
    /* R' = R Rz(phi), cos phi = n_x / rho, sin phi = n_y / rho: P's local +x is u */
    const double c = n[0] / rho, sn = n[1] / rho;
    for (int r = 0; r < 3; ++r) {
        const double x = s->R[3 * r], y = s->R[3 * r + 1];
        prism.R[3 * r] = c * x + sn * y;
        prism.R[3 * r + 1] = -sn * x + c * y;
    }
    return prism;
}

static pp_status invalid(const char *what)
{
    pp_log(PP_LOG_ERROR, "pp_shape: %s", what);
    return PP_ERR_INVALID_ARGUMENT;
}

pp_status pp_shape_validate(const pp_shape *s)
{
    if (!s) {
        pp_log(PP_LOG_ERROR, "pp_shape: NULL shape");
        return PP_ERR_NULL_ARGUMENT;
    }
    switch (s->kind) {
    case PP_SHAPE_SPHERE:
        if (!(isfinite(s->radius) && s->radius > 0.0)) return invalid("sphere radius must be > 0");
        break;
    case PP_SHAPE_BOX:
        for (int k = 0; k < 3; ++k)
            if (!(isfinite(s->lengths[k]) && s->lengths[k] > 0.0))
                return invalid("box side lengths must be > 0");
        break;
    case PP_SHAPE_CAPSULE:
        if (!(isfinite(s->radius) && s->radius > 0.0)) return invalid("capsule radius must be > 0");
        if (!(isfinite(s->length) && s->length >= 0.0)) return invalid("capsule length must be >= 0");
        break;
    case PP_SHAPE_PLANE:
        if (!pp_v3_finite(s->normal) || !isfinite(s->offset) ||
            fabs(pp_v3_norm(s->normal) - 1.0) > UNIT_TOLERANCE)
            return invalid("plane normal must be a finite unit vector and its offset finite");
        return PP_OK;
    case PP_SHAPE_POLYTOPE:
        if (!s->polytope) {
            pp_log(PP_LOG_ERROR, "pp_shape: polytope shape without a polytope");
            return PP_ERR_NULL_ARGUMENT;
        }
        break;
    case PP_SHAPE_CYLINDER:
        if (!(isfinite(s->radius) && s->radius > 0.0) || !(isfinite(s->length) && s->length > 0.0))
            return invalid("cylinder radius and length must be > 0");
        if (!s->polytope) {
            pp_log(PP_LOG_ERROR, "pp_shape: cylinder shape without its prism "
                                 "(pp_polytope_cylinder_prism)");
            return PP_ERR_NULL_ARGUMENT;
        }
        break;
    default:
        return invalid("unknown shape kind");
    }
    if (!pp_v3_finite(s->position)) return invalid("position is NaN or infinite");
    for (int i = 0; i < 9; ++i)
        if (!isfinite(s->R[i])) return invalid("rotation is NaN or infinite");
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            double g = s->R[r] * s->R[c] + s->R[3 + r] * s->R[3 + c] + s->R[6 + r] * s->R[6 + c];
            if (fabs(g - (r == c)) > UNIT_TOLERANCE) return invalid("R is not orthonormal");
        }
    double x[3];
    pp_v3_cross(x, s->R, s->R + 3);
    if (pp_v3_dot(x, s->R + 6) < 0.0) return invalid("R is a reflection (det < 0)");
    return PP_OK;
}

double pp_shape_core_radius(const pp_shape *s)
{
    return s->kind == PP_SHAPE_SPHERE || s->kind == PP_SHAPE_CAPSULE ? s->radius : 0.0;
}

/* Support of the core in world direction d: R s_local(R^T d) + position. */
void pp_shape_core_support(const pp_shape *s, const double dir[3], double out[3])
{
    double d[3], local[3] = {0.0, 0.0, 0.0};
    pp_m3_tmul(d, s->R, dir);
    switch (s->kind) {
    case PP_SHAPE_BOX:
        for (int k = 0; k < 3; ++k) local[k] = (d[k] >= 0.0 ? 0.5 : -0.5) * s->lengths[k];
        break;
    case PP_SHAPE_CAPSULE:
        local[2] = (d[2] >= 0.0 ? 0.5 : -0.5) * s->length;
        break;
    case PP_SHAPE_POLYTOPE:
        pp_v3_copy(local, s->polytope->vertices + 3 * pp_polytope_support_index(s->polytope, d));
        break;
    case PP_SHAPE_CYLINDER: {
        /* The cap on d's side of the axis, and on its rim the point along d's radial part,
         * r (d_x, d_y)/|(d_x, d_y)|; along the axis (no radial part) the cap's centre, one
         * point of the face that supports it. */
        double rho = sqrt(d[0] * d[0] + d[1] * d[1]);
        if (rho > 0.0) {
            local[0] = s->radius * d[0] / rho;
            local[1] = s->radius * d[1] / rho;
        }
        local[2] = (d[2] >= 0.0 ? 0.5 : -0.5) * s->length;
        break;
    }
    default: /* sphere: its centre */
        break;
    }
    pp_m3_mul(out, s->R, local);
    pp_v3_add(out, out, s->position);
}

int pp_shape_support(const pp_shape *s, const double dir[3], double margin, double out[3])
{
    if (s->kind == PP_SHAPE_PLANE) return 0;
    pp_shape_core_support(s, dir, out);
    double grow = pp_shape_core_radius(s) + margin, len = pp_v3_norm(dir);
    if (grow != 0.0 && len > 0.0) pp_v3_axpy(out, out, grow / len, dir);
    return 1;
}

void pp_shape_center(const pp_shape *s, double out[3])
{
    if (s->kind == PP_SHAPE_PLANE) {
        pp_v3_scale(out, s->offset, s->normal);
    } else if (s->kind == PP_SHAPE_POLYTOPE) {
        pp_m3_mul(out, s->R, s->polytope->centroid);
        pp_v3_add(out, out, s->position);
    } else {
        pp_v3_copy(out, s->position);
    }
}

/* A polytope's box in one pass over its vertices. Coordinate k of R v + position is row k of
 * R dotted with v in pp_m3_mul's order, which is the value pp_polytope_support_index's
 * exhaustive search (<= 32 vertices) maximises along e_k (pp_m3_tmul of a unit axis is that
 * row, up to the sign of a zero) and, negated exactly, along -e_k; so the first vertex
 * strictly beyond the others is the support's, and each bound is the same double as
 * pp_shape_support's: that vertex's coordinate plus the position, plus or minus the margin.
 * Six support calls each posed the axis and searched every vertex again: on islands100 they
 * were a third of the step's serial broadphase (docs/performance.md "Threads"). */
static void polytope_aabb(const pp_shape *s, double margin, pp_aabb *out)
{
    const double *R = s->R, *v = s->polytope->vertices;
    for (int k = 0; k < 3; ++k) {
        const double *r = R + 3 * k;
        double hi = r[0] * v[0] + r[1] * v[1] + r[2] * v[2], lo = hi;
        for (int i = 1; i < s->polytope->vertex_count; ++i) {
            const double *x = v + 3 * i;
            const double c = r[0] * x[0] + r[1] * x[1] + r[2] * x[2];
            if (c > hi) hi = c;
            if (c < lo) lo = c;
        }
        hi += s->position[k];
        lo += s->position[k];
        if (margin != 0.0) {
            hi += margin * 1.0;
            lo += margin * -1.0;
        }
        out->max[k] = hi;
        out->min[k] = lo;
    }
}

void pp_shape_aabb(const pp_shape *s, double margin, pp_aabb *out)
{
    if (s->kind == PP_SHAPE_PLANE) {
        /* The half-space n.x <= d is bounded only along an axis n is aligned with. */
        for (int k = 0; k < 3; ++k) {
            out->min[k] = -HUGE_VAL;
            out->max[k] = HUGE_VAL;
            int aligned = fabs(s->normal[k]) == 1.0;
            if (aligned && s->normal[k] > 0.0) out->max[k] = s->offset + margin;
            if (aligned && s->normal[k] < 0.0) out->min[k] = -s->offset - margin;
        }
        return;
    }
    if (s->kind == PP_SHAPE_POLYTOPE && s->polytope->vertex_count <= 32) {
        polytope_aabb(s, margin, out);
        return;
    }
    for (int k = 0; k < 3; ++k) {
        double e[3] = {0.0, 0.0, 0.0}, hi[3], lo[3];
        e[k] = 1.0;
        pp_shape_support(s, e, margin, hi);
        e[k] = -1.0;
        pp_shape_support(s, e, margin, lo);
        out->max[k] = hi[k];
        out->min[k] = lo[k];
    }
}
