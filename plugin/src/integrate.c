/*
 * Free-body dynamics of one step on plain data, in the order of ODE 0.16's dWorldStep
 * (step.cpp dxStepIsland_Stage0_Bodies and Stage4, util.cpp dxStepBody), so that a body with
 * no contacts moves as stock ODE moves it:
 *
 *   1. f <- f_user + m g                       (gravity into the force accumulator)
 *   2. tau <- tau_user + tau_gyro              (implicit gyroscopic term, Lacoursière 2006)
 *   3. v <- v + h m^-1 f;  w <- w + I_w^-1 (h tau)      (semi-implicit Euler, I_w = R I R^T)
 *   4. |w| capped at the body's maximum angular speed
 *   5. x <- x + h v;  q <- q + h/2 (0,w) q, or the exact finite rotation; q normalised
 *   6. damping, applied after the position update as ODE does.
 *
 * Steps 1-3 give the "free" velocity nu* of Stewart–Trinkle's Eq (5) (PEG.md §1); the contact
 * impulses of stage 7 are added to it before steps 4-6.
 */
#include "world_internal.h"

#include <math.h>

static void mat3_mul(double out[9], const double a[9], const double b[9])
{
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            out[3 * r + c] = a[3 * r] * b[c] + a[3 * r + 1] * b[3 + c] + a[3 * r + 2] * b[6 + c];
}

/* out = a * b^T */
static void mat3_mul_transposed(double out[9], const double a[9], const double b[9])
{
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            out[3 * r + c] = a[3 * r] * b[3 * c] + a[3 * r + 1] * b[3 * c + 1] + a[3 * r + 2] * b[3 * c + 2];
}

static void mat3_apply(double out[3], const double m[9], const double v[3])
{
    for (int r = 0; r < 3; ++r)
        out[r] = m[3 * r] * v[0] + m[3 * r + 1] * v[1] + m[3 * r + 2] * v[2];
}

/* Closed-form inverse; returns 0 when the matrix is singular (det == 0). */
static int mat3_invert(double out[9], const double m[9])
{
    double c0 = m[4] * m[8] - m[5] * m[7];
    double c1 = m[5] * m[6] - m[3] * m[8];
    double c2 = m[3] * m[7] - m[4] * m[6];
    double det = m[0] * c0 + m[1] * c1 + m[2] * c2;
    if (det == 0.0) return 0;
    double inv = 1.0 / det;
    out[0] = c0 * inv;
    out[1] = (m[2] * m[7] - m[1] * m[8]) * inv;
    out[2] = (m[1] * m[5] - m[2] * m[4]) * inv;
    out[3] = c1 * inv;
    out[4] = (m[0] * m[8] - m[2] * m[6]) * inv;
    out[5] = (m[2] * m[3] - m[0] * m[5]) * inv;
    out[6] = c2 * inv;
    out[7] = (m[1] * m[6] - m[0] * m[7]) * inv;
    out[8] = (m[0] * m[4] - m[1] * m[3]) * inv;
    return 1;
}

/* world = R * body * R^T */
static void rotate_tensor(double world[9], const double R[9], const double body[9])
{
    double tmp[9];
    mat3_mul_transposed(tmp, body, R);
    mat3_mul(world, R, tmp);
}

/*
 * Implicit gyroscopic torque (Lacoursière 2006, as ODE 0.16 step.cpp). With L = I w, the
 * implicit update of dL/dt = -w x L over one step is L+ = (I - h [L]x)^-1 ... which ODE writes
 * as an explicit torque tau0 = (I (I - h[L]x)^-1 - 1) L / h to be applied with the ordinary
 * semi-implicit update. Skipped, as in ODE, when I - h[L]x is singular.
 */
static void add_gyroscopic_torque(const pp_body *body, double h, double torque[3])
{
    double I[9], L[3], Itilde[9], Itilde_inv[9], ratio[9], tau0[3];
    rotate_tensor(I, body->R, body->inertia_body);
    mat3_apply(L, I, body->w);
    /* Itilde = I - h [L]x, [L]x the cross-product matrix of L */
    Itilde[0] = I[0];            Itilde[1] = I[1] + h * L[2]; Itilde[2] = I[2] - h * L[1];
    Itilde[3] = I[3] - h * L[2]; Itilde[4] = I[4];            Itilde[5] = I[5] + h * L[0];
    Itilde[6] = I[6] + h * L[1]; Itilde[7] = I[7] - h * L[0]; Itilde[8] = I[8];
    for (int k = 0; k < 3; ++k) L[k] *= 1.0 / h;
    if (!mat3_invert(Itilde_inv, Itilde)) return;
    mat3_mul(ratio, I, Itilde_inv);
    ratio[0] -= 1.0;
    ratio[4] -= 1.0;
    ratio[8] -= 1.0;
    mat3_apply(tau0, ratio, L);
    for (int k = 0; k < 3; ++k) torque[k] += tau0[k];
}

void pp_body_apply_external_impulse(pp_body *body, const double gravity[3], double h)
{
    double force[3], torque[3], dw[3];
    for (int k = 0; k < 3; ++k) {
        force[k] = body->force[k];
        if (body->gravity && gravity[k] != 0.0) force[k] += body->mass * gravity[k];
        torque[k] = body->torque[k];
    }
    rotate_tensor(body->inv_inertia_world, body->R, body->inv_inertia_body);
    if (body->gyroscopic && body->inv_mass > 0.0) add_gyroscopic_torque(body, h, torque);

    double h_inv_mass = h * body->inv_mass;
    for (int k = 0; k < 3; ++k) {
        body->v[k] += force[k] * h_inv_mass;
        torque[k] *= h;
    }
    mat3_apply(dw, body->inv_inertia_world, torque);
    for (int k = 0; k < 3; ++k) body->w[k] += dw[k];
}

static void quaternion_multiply(double out[4], const double a[4], const double b[4])
{
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    out[2] = a[0] * b[2] + a[2] * b[0] + a[3] * b[1] - a[1] * b[3];
    out[3] = a[0] * b[3] + a[3] * b[0] + a[1] * b[2] - a[2] * b[1];
}

/* dq/dt = 1/2 (0, w) q for a world-frame angular velocity w. */
static void quaternion_rate(double dq[4], const double w[3], const double q[4])
{
    dq[0] = 0.5 * (-w[0] * q[1] - w[1] * q[2] - w[2] * q[3]);
    dq[1] = 0.5 * (w[0] * q[0] + w[1] * q[3] - w[2] * q[2]);
    dq[2] = 0.5 * (-w[0] * q[3] + w[1] * q[0] + w[2] * q[1]);
    dq[3] = 0.5 * (w[0] * q[2] - w[1] * q[1] + w[2] * q[0]);
}

static double sinc(double x)
{
    return fabs(x) < 1.0e-4 ? 1.0 - x * x / 6.0 : sin(x) / x;
}

void pp_quaternion_to_rotation(const double q[4], double R[9])
{
    double qq1 = 2 * q[1] * q[1], qq2 = 2 * q[2] * q[2], qq3 = 2 * q[3] * q[3];
    R[0] = 1 - qq2 - qq3;
    R[1] = 2 * (q[1] * q[2] - q[0] * q[3]);
    R[2] = 2 * (q[1] * q[3] + q[0] * q[2]);
    R[3] = 2 * (q[1] * q[2] + q[0] * q[3]);
    R[4] = 1 - qq1 - qq3;
    R[5] = 2 * (q[2] * q[3] - q[0] * q[1]);
    R[6] = 2 * (q[1] * q[3] - q[0] * q[2]);
    R[7] = 2 * (q[2] * q[3] + q[0] * q[1]);
    R[8] = 1 - qq1 - qq2;
}

static void finite_rotation(pp_body *body, double h)
{
    double rotating[3], rest[3] = {0, 0, 0}, rot[4], q2[4];
    if (body->finite_rotation_axis_set) {
        const double *a = body->finite_rotation_axis;
        double k = a[0] * body->w[0] + a[1] * body->w[1] + a[2] * body->w[2];
        for (int j = 0; j < 3; ++j) {
            rotating[j] = a[j] * k;
            rest[j] = body->w[j] - rotating[j];
        }
        double half_h = 0.5 * h, theta = k * half_h, s = sinc(theta) * half_h;
        rot[0] = cos(theta);
        for (int j = 0; j < 3; ++j) rot[j + 1] = rotating[j] * s;
    } else {
        const double *w = body->w;
        double half_h = 0.5 * h, theta = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) * half_h;
        double s = sinc(theta) * half_h;
        rot[0] = cos(theta);
        for (int j = 0; j < 3; ++j) rot[j + 1] = w[j] * s;
    }
    quaternion_multiply(q2, rot, body->q);
    for (int j = 0; j < 4; ++j) body->q[j] = q2[j];
    if (body->finite_rotation_axis_set) {
        double dq[4];
        quaternion_rate(dq, rest, body->q);
        for (int j = 0; j < 4; ++j) body->q[j] += 0.5 * h * dq[j];
    }
}

static void normalise_quaternion(double q[4])
{
    double l = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (l > 0.0) {
        l = 1.0 / sqrt(l);
        for (int j = 0; j < 4; ++j) q[j] *= l;
    } else {
        q[0] = 1.0;
        q[1] = q[2] = q[3] = 0.0;
    }
}

void pp_body_integrate_pose(pp_body *body, double h)
{
    double w2 = body->w[0] * body->w[0] + body->w[1] * body->w[1] + body->w[2] * body->w[2];
    if (isfinite(body->max_angular_speed) && w2 > body->max_angular_speed * body->max_angular_speed) {
        double scale = body->max_angular_speed / sqrt(w2);
        for (int k = 0; k < 3; ++k) body->w[k] *= scale;
    }

    for (int k = 0; k < 3; ++k) body->x[k] += h * body->v[k];

    if (body->finite_rotation) {
        finite_rotation(body, h);
    } else {
        double dq[4];
        quaternion_rate(dq, body->w, body->q);
        for (int j = 0; j < 4; ++j) body->q[j] += h * dq[j];
    }
    normalise_quaternion(body->q);
    pp_quaternion_to_rotation(body->q, body->R);

    if (body->linear_damping != 0.0) {
        double v2 = body->v[0] * body->v[0] + body->v[1] * body->v[1] + body->v[2] * body->v[2];
        if (v2 > body->linear_threshold2)
            for (int k = 0; k < 3; ++k) body->v[k] *= 1.0 - body->linear_damping;
    }
    if (body->angular_damping != 0.0) {
        double a2 = body->w[0] * body->w[0] + body->w[1] * body->w[1] + body->w[2] * body->w[2];
        if (a2 > body->angular_threshold2)
            for (int k = 0; k < 3; ++k) body->w[k] *= 1.0 - body->angular_damping;
    }
}

static int all_finite(const double *a, int n)
{
    for (int i = 0; i < n; ++i)
        if (!isfinite(a[i])) return 0;
    return 1;
}

int pp_body_is_finite(const pp_body *body)
{
    return all_finite(body->x, 3) && all_finite(body->q, 4) && all_finite(body->v, 3) &&
           all_finite(body->w, 3);
}

int pp_invert_inertia(double out[9], const double inertia[9])
{
    return mat3_invert(out, inertia);
}
