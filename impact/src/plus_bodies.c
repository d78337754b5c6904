/*
 * Body form of a PLUS problem: point-contact Jacobians over free rigid bodies, the
 * Delassus operator A = G M^-1 G^T of eq. 2.2, and the generalized velocity change
 * du = M^-1 G^T pi of eq. 2.1a (with no bilateral constraints, m_b = 0).
 *
 * A free body's M^-1 is block diagonal: inverse_mass * I3 for v and the world inverse
 * inertia W for w, so for Jacobian rows a = (a_v, a_w), b = (b_v, b_w) of one body
 *   a M^-1 b^T = inverse_mass (a_v . b_v) + a_w . W b_w.
 */
#include "pegplus/impact.h"

#include <math.h>
#include <string.h>

static void cross3(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static int all_finite(const double *x, int n)
{
    for (int i = 0; i < n; ++i)
        if (!isfinite(x[i])) return 0;
    return 1;
}

pp_status pp_plus_point_contact_jacobian(int body_a, const double com_a[3], int body_b,
                                         const double com_b[3], const double point[3],
                                         const double frame[9],
                                         pp_plus_contact_jacobian *out)
{
    if (!point || !frame || !out || (body_a >= 0 && !com_a) || (body_b >= 0 && !com_b)) {
        pp_log(PP_LOG_ERROR, "pp_plus_point_contact_jacobian: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (body_a < -1 || body_b < -1 || (body_a >= 0 && body_a == body_b)) {
        pp_log(PP_LOG_ERROR, "pp_plus_point_contact_jacobian: bad body indices %d, %d",
               body_a, body_b);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (!all_finite(point, 3) || !all_finite(frame, 9) ||
        (body_a >= 0 && !all_finite(com_a, 3)) || (body_b >= 0 && !all_finite(com_b, 3))) {
        pp_log(PP_LOG_ERROR, "pp_plus_point_contact_jacobian: non-finite input");
        return PP_ERR_INVALID_ARGUMENT;
    }
    memset(out, 0, sizeof *out);
    out->body[0] = body_a;
    out->body[1] = body_b;
    const int ids[2] = {body_a, body_b};
    const double *coms[2] = {com_a, com_b};
    const double sides[2] = {-1.0, 1.0};
    for (int s = 0; s < 2; ++s) {
        if (ids[s] < 0) continue;
        double r[3] = {point[0] - coms[s][0], point[1] - coms[s][1], point[2] - coms[s][2]};
        for (int c = 0; c < 3; ++c) {
            const double *d = frame + 3 * c;
            double rxd[3];
            cross3(r, d, rxd);
            for (int i = 0; i < 3; ++i) {
                out->row[c][s][i] = sides[s] * d[i];
                out->row[c][s][3 + i] = sides[s] * rxd[i];
            }
        }
    }
    return PP_OK;
}

static pp_status check_jacobians(const char *who, int body_count, int contact_count,
                                 const pp_plus_contact_jacobian *jacobians)
{
    if (body_count < 0 || contact_count < 0) {
        pp_log(PP_LOG_ERROR, "%s: negative count", who);
        return PP_ERR_INVALID_ARGUMENT;
    }
    for (int k = 0; k < contact_count; ++k) {
        for (int s = 0; s < 2; ++s) {
            int b = jacobians[k].body[s];
            if (b < -1 || b >= body_count) {
                pp_log(PP_LOG_ERROR, "%s: contact %d refers to body %d of %d", who, k, b,
                       body_count);
                return PP_ERR_INVALID_ARGUMENT;
            }
        }
    }
    return PP_OK;
}

/* a M_b^-1 b^T for 6-rows a, b of the same body. */
static double body_inner(const pp_plus_body *body, const double a[6], const double b[6])
{
    double lin = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    double ang = 0.0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) ang += a[3 + i] * body->inverse_inertia[3 * i + j] * b[3 + j];
    return body->inverse_mass * lin + ang;
}

pp_status pp_plus_delassus(int body_count, const pp_plus_body *bodies, int contact_count,
                           const pp_plus_contact_jacobian *jacobians, double *delassus)
{
    if ((contact_count > 0 && (!jacobians || !delassus)) || (body_count > 0 && !bodies)) {
        pp_log(PP_LOG_ERROR, "pp_plus_delassus: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    pp_status st = check_jacobians("pp_plus_delassus", body_count, contact_count, jacobians);
    if (st != PP_OK) return st;
    for (int b = 0; b < body_count; ++b) {
        if (!(bodies[b].inverse_mass >= 0.0) || !isfinite(bodies[b].inverse_mass) ||
            !all_finite(bodies[b].inverse_inertia, 9)) {
            pp_log(PP_LOG_ERROR, "pp_plus_delassus: body %d has a bad inverse mass/inertia", b);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    const int n = 3 * contact_count;
    memset(delassus, 0, sizeof(double) * (size_t)n * (size_t)n);
    for (int k = 0; k < contact_count; ++k) {
        for (int l = 0; l < contact_count; ++l) {
            for (int s = 0; s < 2; ++s) {
                int bk = jacobians[k].body[s];
                if (bk < 0) continue;
                for (int t = 0; t < 2; ++t) {
                    if (jacobians[l].body[t] != bk) continue;
                    for (int c = 0; c < 3; ++c)
                        for (int d = 0; d < 3; ++d)
                            delassus[(3 * k + c) * n + 3 * l + d] +=
                                body_inner(&bodies[bk], jacobians[k].row[c][s],
                                           jacobians[l].row[d][t]);
                }
            }
        }
    }
    return PP_OK;
}

pp_status pp_plus_contact_velocity(int body_count, const double *body_velocity,
                                   int contact_count,
                                   const pp_plus_contact_jacobian *jacobians, double *velocity)
{
    if ((contact_count > 0 && (!jacobians || !velocity)) || (body_count > 0 && !body_velocity)) {
        pp_log(PP_LOG_ERROR, "pp_plus_contact_velocity: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    pp_status st =
        check_jacobians("pp_plus_contact_velocity", body_count, contact_count, jacobians);
    if (st != PP_OK) return st;
    for (int k = 0; k < contact_count; ++k) {
        for (int c = 0; c < 3; ++c) {
            double sum = 0.0;
            for (int s = 0; s < 2; ++s) {
                int b = jacobians[k].body[s];
                if (b < 0) continue;
                for (int i = 0; i < 6; ++i) sum += jacobians[k].row[c][s][i] * body_velocity[6 * b + i];
            }
            velocity[3 * k + c] = sum;
        }
    }
    return PP_OK;
}

pp_status pp_plus_body_velocity_change(int body_count, const pp_plus_body *bodies,
                                       int contact_count,
                                       const pp_plus_contact_jacobian *jacobians,
                                       const double *impulse, double *body_velocity_change)
{
    if ((contact_count > 0 && (!jacobians || !impulse)) ||
        (body_count > 0 && (!bodies || !body_velocity_change))) {
        pp_log(PP_LOG_ERROR, "pp_plus_body_velocity_change: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    pp_status st =
        check_jacobians("pp_plus_body_velocity_change", body_count, contact_count, jacobians);
    if (st != PP_OK) return st;
    if (body_count > 0) memset(body_velocity_change, 0, sizeof(double) * 6 * (size_t)body_count);
    for (int k = 0; k < contact_count; ++k) {
        for (int s = 0; s < 2; ++s) {
            int b = jacobians[k].body[s];
            if (b < 0) continue;
            double gen[6] = {0, 0, 0, 0, 0, 0}; /* G^T pi restricted to body b */
            for (int c = 0; c < 3; ++c)
                for (int i = 0; i < 6; ++i) gen[i] += jacobians[k].row[c][s][i] * impulse[3 * k + c];
            double *dnu = body_velocity_change + 6 * b;
            for (int i = 0; i < 3; ++i) dnu[i] += bodies[b].inverse_mass * gen[i];
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j)
                    dnu[3 + i] += bodies[b].inverse_inertia[3 * i + j] * gen[3 + j];
        }
    }
    return PP_OK;
}
