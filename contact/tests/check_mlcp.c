/*
 * Unit tests of pegplus/mlcp.h: the Stewart–Trinkle step on plain data, asserting physics
 * (support, Coulomb sliding and sticking, no attraction across a gap, momentum, the friction
 * pyramid) and the Jacobian against finite differences of the gap.
 */
#include "pegplus/mlcp.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tolerances, named once. */
#define TOL_IMPULSE 1e-12   /* N s, impulses of order m g h ~ 0.1 */
#define TOL_VELOCITY 1e-11  /* m/s, rad/s */
#define TOL_FD 1e-7         /* central difference with step 1e-5 */
#define G 9.81
#define H 0.01
#define PI 3.14159265358979323846

/* ---- Helpers ------------------------------------------------------------------------------ */

static uint64_t g_rng;

static void rng_seed(uint64_t seed)
{
    g_rng = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
}

static double rng_uniform(double lo, double hi)
{
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    uint64_t x = g_rng * 0x2545F4914F6CDD1Dull;
    return lo + (hi - lo) * (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

static void cross(const double a[3], const double b[3], double out[3])
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
           z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static double norm(const double a[3])
{
    return sqrt(dot(a, a));
}

/* Axis-aligned box body: mass m, half extents e, centre x, free velocity (v, w). */
static pp_mlcp_body box_body(double m, const double e[3], const double x[3], const double v[3],
                             const double w[3])
{
    pp_mlcp_body b;
    memset(&b, 0, sizeof b);
    b.inv_mass = 1.0 / m;
    b.inv_inertia[0] = 3.0 / (m * (e[1] * e[1] + e[2] * e[2]));
    b.inv_inertia[4] = 3.0 / (m * (e[0] * e[0] + e[2] * e[2]));
    b.inv_inertia[8] = 3.0 / (m * (e[0] * e[0] + e[1] * e[1]));
    memcpy(b.x, x, sizeof b.x);
    memcpy(b.v, v, sizeof b.v);
    memcpy(b.w, w, sizeof b.w);
    return b;
}

/* The four bottom corners of box `body` (half extents e) against the static ground z = 0:
 * A = ground (-1), B = box, n = +z, p_a = corner projected on z = 0, psi = corner height. */
static int ground_contacts(const pp_mlcp_body *box, int body, const double e[3], double mu,
                           pp_contact *out)
{
    const double sx[4] = {1, -1, -1, 1}, sy[4] = {1, 1, -1, -1};
    for (int i = 0; i < 4; ++i) {
        pp_contact *c = &out[i];
        memset(c, 0, sizeof *c);
        c->body_a = -1;
        c->body_b = body;
        c->p_a[0] = box->x[0] + sx[i] * e[0];
        c->p_a[1] = box->x[1] + sy[i] * e[1];
        c->p_a[2] = 0.0;
        c->n[2] = 1.0;
        c->psi = box->x[2] - e[2];
        c->mu = mu;
    }
    return 4;
}

typedef struct step_out {
    double pn[16], beta[16 * 64], sigma[16], f[16 * 3], nu[6 * 4];
    pp_mlcp_stats stats;
    pp_status status;
} step_out;

static pp_mlcp_workspace *g_ws;

static void setup(void)
{
    pp_set_log_hook(pp_log_discard, NULL);
    ck_assert_int_eq(pp_mlcp_workspace_create(4, 16, 16, &g_ws), PP_OK);
}

static void teardown(void)
{
    pp_mlcp_workspace_destroy(g_ws);
    pp_set_log_hook(NULL, NULL);
}

/* Independent check of the assembled LCP's solution (from pp_mlcp_last_lcp). */
static void check_lcp_solution(const step_out *o)
{
    int n;
    const double *M, *q;
    pp_mlcp_last_lcp(g_ws, &n, &M, &q);
    int nc = n / (o->stats.directions + 2), k = o->stats.directions;
    ck_assert_int_eq(n, o->stats.lcp_size);
    double z[16 * 66], z_norm = 0.0;
    for (int j = 0; j < n; ++j) {
        z[j] = j < nc ? o->pn[j] : j < nc + nc * k ? o->beta[j - nc] : o->sigma[j - nc - nc * k];
        z_norm = fmax(z_norm, fabs(z[j]));
    }
    for (int i = 0; i < n; ++i) {
        double zi = z[i], w = q[i], s = fabs(q[i]);
        for (int j = 0; j < n; ++j) {
            w += M[i + (size_t)j * n] * z[j];
            s += fabs(M[i + (size_t)j * n]) * z_norm;
        }
        ck_assert_msg(fabs(fmin(zi, w)) <= 1e-9 * s, "LCP row %d: z %g w %g", i, zi, w);
    }
}

static step_out run(const pp_mlcp_body *bodies, int nb, const pp_contact *contacts, int nc,
                    int k, unsigned char *basis)
{
    step_out o;
    memset(&o, 0, sizeof o);
    pp_mlcp_problem p = {H, nb, bodies, nc, contacts, k, 0.0, 0, 0.0};
    pp_mlcp_solution s = {o.pn, o.beta, o.sigma, o.f, o.nu, NULL};
    o.status = pp_mlcp_solve(g_ws, &p, NULL, basis, &s, &o.stats);
    ck_assert_msg(o.status == PP_OK, "mlcp: %s (lcp %s)", pp_status_string(o.status),
                  pp_lcp_status_string(o.stats.lcp.status));
    check_lcp_solution(&o);
    return o;
}

/* Velocity of the material point at p of a body with state nu (v, w) and centre x. */
static void point_velocity(const double *nu, const double x[3], const double p[3], double out[3])
{
    double r[3] = {p[0] - x[0], p[1] - x[1], p[2] - x[2]}, wr[3];
    cross(nu + 3, r, wr);
    for (int i = 0; i < 3; ++i) out[i] = nu[i] + wr[i];
}

static const double k_half[3] = {0.5, 0.4, 0.25};
#define BOX_MASS 2.0

/* ---- Tests -------------------------------------------------------------------------------- */

/* psi = 0, at rest before gravity: after the step the box does not move, the gap rate of
 * each corner is 0 and the normal impulses carry the weight, sum p_n = m g h. */
START_TEST(test_resting_box)
{
    const double x[3] = {0.3, -0.2, 0.25}, v[3] = {0, 0, -G * H}, w[3] = {0, 0, 0};
    pp_mlcp_body box = box_body(BOX_MASS, k_half, x, v, w);
    pp_contact c[4];
    ground_contacts(&box, 0, k_half, 0.5, c);
    unsigned char basis[64];
    memset(basis, 0, sizeof basis);
    step_out o = run(&box, 1, c, 4, 8, basis);

    double pn = 0.0;
    for (int i = 0; i < 4; ++i) {
        double vp[3];
        point_velocity(o.nu, box.x, c[i].p_a, vp);
        ck_assert_double_eq_tol(vp[2], 0.0, TOL_VELOCITY);
        ck_assert(o.pn[i] >= 0.0);
        pn += o.pn[i];
    }
    ck_assert_double_eq_tol(pn, BOX_MASS * G * H, TOL_IMPULSE);
    for (int r = 0; r < 6; ++r) ck_assert_double_eq_tol(o.nu[r], 0.0, TOL_VELOCITY);
    double fx = 0.0, fy = 0.0;
    for (int i = 0; i < 4; ++i) {
        fx += o.f[3 * i];
        fy += o.f[3 * i + 1];
    }
    ck_assert_double_eq_tol(fx, 0.0, TOL_IMPULSE);
    ck_assert_double_eq_tol(fy, 0.0, TOL_IMPULSE);

    /* Next step, same state: the warm start reuses the basis with no pivot. */
    step_out again = run(&box, 1, c, 4, 8, basis);
    ck_assert_int_eq(again.stats.lcp.pivots, 0);
    ck_assert_int_eq(again.stats.lcp.warm_started, 1);
    for (int i = 0; i < 4; ++i) ck_assert_double_eq_tol(again.pn[i], o.pn[i], 1e-15);
    printf("check_mlcp: resting box, LCP n = %d: cold %d pivots, warm %d\n", o.stats.lcp_size,
           o.stats.lcp.pivots, again.stats.lcp.pivots);
}
END_TEST

/* Sliding at 2 m/s (mu g h = 0.029 m/s per step, so the slide continues) in a direction at
 * angle theta. Coulomb on the pyramid: every loaded contact is on its boundary,
 * sum_j beta_j = mu p_n; the friction vector lies within pi/k of the direction opposing the
 * slip and its length is between mu p_n cos(pi/k) and mu p_n. Along a pyramid edge
 * (theta = 0) it is exactly -mu p_n times the slip direction. */
static const double k_theta[] = {0.0, 0.3, PI / 8.0, 1.0, 2.5, -2.0};

START_TEST(test_sliding_box)
{
    const double theta = k_theta[_i], mu = 0.3, speed = 2.0;
    const int k = 8;
    const double x[3] = {0, 0, 0.25}, w[3] = {0, 0, 0};
    const double v[3] = {speed * cos(theta), speed * sin(theta), -G * H};
    pp_mlcp_body box = box_body(BOX_MASS, k_half, x, v, w);
    pp_contact c[4];
    ground_contacts(&box, 0, k_half, mu, c);
    step_out o = run(&box, 1, c, 4, k, NULL);

    double pn = 0.0, ftot[3] = {0, 0, 0};
    for (int i = 0; i < 4; ++i) {
        double vp[3], fsum = 0.0;
        point_velocity(o.nu, box.x, c[i].p_a, vp);
        ck_assert_double_eq_tol(vp[2], 0.0, TOL_VELOCITY);
        for (int j = 0; j < k; ++j) fsum += o.beta[i * k + j];
        ck_assert_double_eq_tol(fsum, mu * o.pn[i], TOL_IMPULSE);
        const double *f = &o.f[3 * i];
        double fn = norm(f);
        ck_assert(fn <= mu * o.pn[i] + TOL_IMPULSE);
        ck_assert(fn >= mu * o.pn[i] * cos(PI / k) - TOL_IMPULSE);
        pn += o.pn[i];
        for (int r = 0; r < 3; ++r) ftot[r] += f[r];
        if (o.pn[i] < 1e-9) continue; /* unloaded corner: no friction to orient */
        double slip[3] = {vp[0], vp[1], 0.0};
        double cosang = -dot(f, slip) / (fn * norm(slip));
        ck_assert_msg(cosang >= cos(PI / k) - 1e-9, "contact %d: friction %g rad off", i,
                      acos(fmin(1.0, cosang)));
        ck_assert_double_eq_tol(f[2], 0.0, TOL_IMPULSE);
    }
    ck_assert_double_eq_tol(pn, BOX_MASS * G * H, TOL_IMPULSE);
    for (int r = 0; r < 3; ++r)
        ck_assert_double_eq_tol(o.nu[r], v[r] + (r == 2 ? pn : ftot[r]) / BOX_MASS, TOL_VELOCITY);
    for (int r = 3; r < 6; ++r) ck_assert_double_eq_tol(o.nu[r], 0.0, TOL_VELOCITY);
    if (theta == 0.0) {
        ck_assert_double_eq_tol(o.nu[0], speed - mu * G * H, TOL_VELOCITY);
        ck_assert_double_eq_tol(o.nu[1], 0.0, TOL_VELOCITY);
        ck_assert_double_eq_tol(norm(ftot), mu * BOX_MASS * G * H, TOL_IMPULSE);
    }
}
END_TEST

/*
 * Anisotropic friction (mlcp.h, PP_CONTACT_ANISOTROPIC): mu = 0.2 along t1, mu2 = 0.6 along
 * t2 = n x t1, t1 = (cos 0.4, sin 0.4, 0) given with a component along n (projected away).
 * The box slides at 2 m/s in direction theta (relative to t1). Each loaded contact's friction
 * impulse is p_n D_j for the polygon vertex D_j = mu cos(2 pi j/k) t1 + mu2 sin(2 pi j/k) t2
 * that minimises D_j . slip (maximal dissipation over the polygon; theta is chosen off the
 * ties), so it lies on the ellipse (f.t1/mu)^2 + (f.t2/mu2)^2 = p_n^2. Along t1 (theta = 0)
 * and t2 (theta = pi/2) the total is mu m g h and mu2 m g h against the slide.
 */
static const double k_aniso_theta[] = {0.0, PI / 2, 0.3, 2.0, -1.2};

START_TEST(test_anisotropic_friction)
{
    const double theta = k_aniso_theta[_i % 5], mu = 0.2, mu2 = 0.6, speed = 2.0;
    const int k = _i < 5 ? 4 : 16;
    const double t1[3] = {cos(0.4), sin(0.4), 0.0}, t2[3] = {-sin(0.4), cos(0.4), 0.0};
    const double x[3] = {0, 0, 0.25}, w[3] = {0, 0, 0};
    const double v[3] = {speed * (cos(theta) * t1[0] + sin(theta) * t2[0]),
                         speed * (cos(theta) * t1[1] + sin(theta) * t2[1]), -G * H};
    pp_mlcp_body box = box_body(BOX_MASS, k_half, x, v, w);
    pp_contact c[4];
    ground_contacts(&box, 0, k_half, mu, c);
    for (int i = 0; i < 4; ++i) {
        c[i].surface = PP_CONTACT_ANISOTROPIC;
        c[i].mu2 = mu2;
        c[i].t1[0] = 2.0 * t1[0]; /* not unit, and with a normal component: projected */
        c[i].t1[1] = 2.0 * t1[1];
        c[i].t1[2] = 0.7;
    }
    step_out o = run(&box, 1, c, 4, k, NULL);
    double pn = 0.0, ftot[3] = {0, 0, 0};
    for (int i = 0; i < 4; ++i) {
        double vp[3];
        point_velocity(o.nu, box.x, c[i].p_a, vp);
        const double *f = &o.f[3 * i];
        pn += o.pn[i];
        for (int r = 0; r < 3; ++r) ftot[r] += f[r];
        if (o.pn[i] < 1e-9) continue;
        int best = 0;
        double best_dot = HUGE_VAL, d[3];
        for (int j = 0; j < k; ++j) {
            double cj = cos(2 * PI * j / k), sj = sin(2 * PI * j / k);
            for (int r = 0; r < 3; ++r) d[r] = mu * cj * t1[r] + mu2 * sj * t2[r];
            double dd = dot(d, vp);
            if (dd < best_dot) best_dot = dd, best = j;
        }
        double cj = cos(2 * PI * best / k), sj = sin(2 * PI * best / k);
        for (int r = 0; r < 3; ++r)
            ck_assert_double_eq_tol(f[r], o.pn[i] * (mu * cj * t1[r] + mu2 * sj * t2[r]),
                                    TOL_IMPULSE);
        double e1 = dot(f, t1) / mu, e2 = dot(f, t2) / mu2;
        ck_assert_double_eq_tol(e1 * e1 + e2 * e2, o.pn[i] * o.pn[i], 1e-9 * o.pn[i] * o.pn[i]);
    }
    ck_assert_double_eq_tol(pn, BOX_MASS * G * H, TOL_IMPULSE);
    if (_i % 5 < 2) {
        const double *axis = _i % 5 == 0 ? t1 : t2;
        const double m = _i % 5 == 0 ? mu : mu2;
        ck_assert_double_eq_tol(dot(ftot, axis), -m * BOX_MASS * G * H, TOL_IMPULSE);
        ck_assert_double_eq_tol(dot(ftot, _i % 5 == 0 ? t2 : t1), 0.0, TOL_IMPULSE);
    }
}
END_TEST

/* Twenty steps of a slide that slows down, nu*_{l+1} = nu_{l+1} + h g: each step solved cold
 * and warm from the previous basis. Same impulses either way; while the contact mode holds,
 * the warm start needs no pivot. */
START_TEST(test_sliding_sequence_warm_start)
{
    const double mu = 0.3, x[3] = {0, 0, 0.25}, w[3] = {0, 0, 0};
    double v[3] = {0.5, 0.2, -G * H};
    unsigned char basis[64];
    memset(basis, 0, sizeof basis);
    int cold_total = 0, warm_total = 0, warm_zero = 0;
    const int steps = 20;
    for (int s = 0; s < steps; ++s) {
        pp_mlcp_body box = box_body(BOX_MASS, k_half, x, v, w);
        pp_contact c[4];
        ground_contacts(&box, 0, k_half, mu, c);
        step_out cold = run(&box, 1, c, 4, 8, NULL);
        step_out warm = run(&box, 1, c, 4, 8, basis);
        cold_total += cold.stats.lcp.pivots;
        warm_total += warm.stats.lcp.pivots;
        warm_zero += warm.stats.lcp.pivots == 0;
        for (int r = 0; r < 6; ++r) ck_assert_double_eq_tol(warm.nu[r], cold.nu[r], TOL_VELOCITY);
        double pn = 0.0;
        for (int i = 0; i < 4; ++i) pn += warm.pn[i];
        ck_assert_double_eq_tol(pn, BOX_MASS * G * H, TOL_IMPULSE);
        v[0] = warm.nu[0];
        v[1] = warm.nu[1];
        v[2] = warm.nu[2] - G * H;
    }
    ck_assert_int_lt(warm_total, cold_total);
    ck_assert_int_ge(warm_zero, steps - 3);
    printf("check_mlcp: %d steps of a sliding box, LCP n = 40: cold %d pivots in total, warm %d "
           "(%d steps with 0 pivots)\n", steps, cold_total, warm_total, warm_zero);
}
END_TEST

/* A small push (1.1 cm/s) with mu = 1: one step of friction (up to mu g h = 9.8 cm/s) stops
 * it. The tangential velocity is exactly zero and the friction impulse is what it takes,
 * -m v_t, inside the pyramid. */
START_TEST(test_sticking_box)
{
    const double mu = 1.0, x[3] = {0, 0, 0.25}, w[3] = {0, 0, 0};
    const double v[3] = {0.01, 0.005, -G * H};
    pp_mlcp_body box = box_body(BOX_MASS, k_half, x, v, w);
    pp_contact c[4];
    ground_contacts(&box, 0, k_half, mu, c);
    step_out o = run(&box, 1, c, 4, 8, NULL);
    for (int r = 0; r < 6; ++r) ck_assert_double_eq_tol(o.nu[r], 0.0, TOL_VELOCITY);
    double ftot[3] = {0, 0, 0};
    for (int i = 0; i < 4; ++i) {
        double fsum = 0.0;
        for (int j = 0; j < 8; ++j) fsum += o.beta[i * 8 + j];
        ck_assert(fsum <= mu * o.pn[i] + TOL_IMPULSE);
        for (int r = 0; r < 3; ++r) ftot[r] += o.f[3 * i + r];
    }
    ck_assert_double_eq_tol(ftot[0], -BOX_MASS * v[0], TOL_IMPULSE);
    ck_assert_double_eq_tol(ftot[1], -BOX_MASS * v[1], TOL_IMPULSE);
}
END_TEST

/* Box 1 cm above the ground (psi = 0.01, h = 0.01: psi/h = 1 m/s). Falling at 0.5 m/s the
 * predicted gap rate psi/h + dpsi/dt = 1 - 0.5 - 0.098 > 0: no impulse at all (no
 * attraction), nu = nu*. Falling at 2 m/s it would pass the ground within the step: the
 * contact engages and the box ends the step exactly on the ground, v_z = -psi/h. */
START_TEST(test_gap_closing)
{
    const double e = 0.01, x[3] = {0, 0, 0.25 + e}, w[3] = {0, 0, 0};
    const double slow[3] = {0.2, 0, -0.5 - G * H};
    pp_mlcp_body box = box_body(BOX_MASS, k_half, x, slow, w);
    pp_contact c[4];
    ground_contacts(&box, 0, k_half, 1.0, c);
    ck_assert_double_eq_tol(c[0].psi, e, 1e-15);
    step_out o = run(&box, 1, c, 4, 8, NULL);
    for (int i = 0; i < 4; ++i) {
        ck_assert(o.pn[i] == 0.0);
        ck_assert_double_eq_tol(norm(&o.f[3 * i]), 0.0, TOL_IMPULSE);
    }
    for (int r = 0; r < 3; ++r) ck_assert_double_eq_tol(o.nu[r], slow[r], 1e-15);

    const double fast[3] = {0, 0, -2.0 - G * H};
    box = box_body(BOX_MASS, k_half, x, fast, w);
    ground_contacts(&box, 0, k_half, 1.0, c);
    o = run(&box, 1, c, 4, 8, NULL);
    double pn = 0.0;
    for (int i = 0; i < 4; ++i) pn += o.pn[i];
    ck_assert(pn > 0.0);
    ck_assert_double_eq_tol(o.nu[2], -e / H, TOL_VELOCITY);
    ck_assert_double_eq_tol(pn, BOX_MASS * (o.nu[2] - fast[2]), TOL_IMPULSE);
}
END_TEST

/* Two free bodies (no gravity, no ground) meeting at three contacts with friction, spin
 * and general inverse inertias: contact impulses act equally and oppositely at coincident
 * points (psi = 0), so linear momentum and angular momentum about the origin are kept, and
 * no contact penetrates afterwards. */
START_TEST(test_two_bodies_momentum)
{
    rng_seed(11 + (uint64_t)_i);
    pp_mlcp_body b[2];
    double inertia[2][9];
    for (int s = 0; s < 2; ++s) {
        /* J^-1 = R diag(1/Ii) R^T and J = R diag(Ii) R^T for a random rotation R. */
        double ax[3] = {rng_uniform(-1, 1), rng_uniform(-1, 1), rng_uniform(-1, 1)};
        double ang = rng_uniform(0, PI), len = norm(ax);
        for (int i = 0; i < 3; ++i) ax[i] /= len;
        double R[9], cs = cos(ang), sn = sin(ang);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                double kx[3][3] = {{0, -ax[2], ax[1]}, {ax[2], 0, -ax[0]}, {-ax[1], ax[0], 0}};
                R[3 * i + j] = (i == j ? cs : 0.0) + sn * kx[i][j] + (1 - cs) * ax[i] * ax[j];
            }
        double Id[3] = {rng_uniform(0.1, 1), rng_uniform(0.1, 1), rng_uniform(0.1, 1)};
        memset(&b[s], 0, sizeof b[s]);
        b[s].inv_mass = 1.0 / rng_uniform(0.5, 3.0);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                double a = 0.0, c = 0.0;
                for (int m = 0; m < 3; ++m) {
                    a += R[3 * i + m] * R[3 * j + m] / Id[m];
                    c += R[3 * i + m] * R[3 * j + m] * Id[m];
                }
                b[s].inv_inertia[3 * i + j] = a;
                inertia[s][3 * i + j] = c;
            }
        for (int i = 0; i < 3; ++i) b[s].w[i] = rng_uniform(-3, 3);
    }
    b[0].x[0] = -0.5;
    b[1].x[0] = 0.5;
    b[1].x[1] = 0.1;
    b[0].v[0] = 2.0;
    b[0].v[1] = 0.5;
    b[1].v[0] = -1.0;
    b[1].v[2] = 0.3;
    pp_contact c[3];
    memset(c, 0, sizeof c);
    double n[3] = {1.0, 0.15, -0.1}, ln = norm(n);
    for (int i = 0; i < 3; ++i) {
        c[i].body_a = 0;
        c[i].body_b = 1;
        for (int r = 0; r < 3; ++r) c[i].n[r] = n[r] / ln;
        c[i].p_a[0] = 0.0;
        c[i].p_a[1] = 0.2 * cos(2 * PI * i / 3);
        c[i].p_a[2] = 0.2 * sin(2 * PI * i / 3);
        c[i].mu = 0.6;
    }
    step_out o = run(b, 2, c, 3, 8, NULL);

    double P0[3] = {0, 0, 0}, P1[3] = {0, 0, 0}, L0[3] = {0, 0, 0}, L1[3] = {0, 0, 0};
    for (int s = 0; s < 2; ++s) {
        double m = 1.0 / b[s].inv_mass;
        const double *v0 = b[s].v, *w0 = b[s].w, *v1 = &o.nu[6 * s], *w1 = &o.nu[6 * s + 3];
        double xv[3];
        for (int r = 0; r < 3; ++r) {
            P0[r] += m * v0[r];
            P1[r] += m * v1[r];
        }
        cross(b[s].x, v0, xv);
        for (int r = 0; r < 3; ++r) L0[r] += m * xv[r] + dot(&inertia[s][3 * r], w0);
        cross(b[s].x, v1, xv);
        for (int r = 0; r < 3; ++r) L1[r] += m * xv[r] + dot(&inertia[s][3 * r], w1);
    }
    double pn = 0.0;
    for (int i = 0; i < 3; ++i) pn += o.pn[i];
    ck_assert(pn > 0.1); /* they do collide */
    for (int r = 0; r < 3; ++r) {
        ck_assert_double_eq_tol(P1[r], P0[r], 1e-12);
        ck_assert_double_eq_tol(L1[r], L0[r], 1e-12);
    }
    for (int i = 0; i < 3; ++i) {
        double va[3], vb[3];
        point_velocity(&o.nu[0], b[0].x, c[i].p_a, va);
        point_velocity(&o.nu[6], b[1].x, c[i].p_a, vb);
        double rate = dot(c[i].n, vb) - dot(c[i].n, va);
        ck_assert(rate >= -TOL_VELOCITY);
    }
}
END_TEST

/* Random two-box stacks on the ground with gaps in [0, 5 mm], spins, horizontal velocities,
 * mu in [0, 1.2] and k in {4, 5, 6, 8, 12}: whatever the mode, every contact's friction lies
 * in its pyramid (beta >= 0, sum_j beta_j <= mu p_n), p_n >= 0, the end-of-step gap
 * psi + h dpsi/dt is >= 0 and zero wherever p_n > 0 (Signorini, PEG Eq 7). */
START_TEST(test_friction_inside_pyramid)
{
    static const int ks[] = {4, 5, 6, 8, 12};
    const int k = ks[_i % 5];
    rng_seed(500 + (uint64_t)_i);
    const double e1[3] = {0.5, 0.5, 0.2}, e2[3] = {0.3, 0.25, 0.15};
    double x1[3] = {0, 0, 0.2 + rng_uniform(0, 0.005)};
    double x2[3] = {rng_uniform(-0.15, 0.15), rng_uniform(-0.2, 0.2), 0};
    x2[2] = x1[2] + 0.2 + 0.15 + rng_uniform(0, 0.005);
    double v1[3], v2[3], w1[3], w2[3];
    for (int r = 0; r < 3; ++r) {
        v1[r] = r == 2 ? rng_uniform(-0.5, 0.1) : rng_uniform(-1, 1);
        v2[r] = r == 2 ? rng_uniform(-0.5, 0.1) : rng_uniform(-1, 1);
        w1[r] = rng_uniform(-1, 1);
        w2[r] = rng_uniform(-1, 1);
    }
    pp_mlcp_body b[2] = {box_body(rng_uniform(0.5, 5), e1, x1, v1, w1),
                         box_body(rng_uniform(0.5, 5), e2, x2, v2, w2)};
    pp_contact c[8];
    ground_contacts(&b[0], 0, e1, rng_uniform(0, 1.2), c);
    /* Box 2's bottom corners on box 1's top face: A = box 1, B = box 2, n = +z. */
    ground_contacts(&b[1], 1, e2, rng_uniform(0, 1.2), c + 4);
    for (int i = 4; i < 8; ++i) {
        c[i].body_a = 0;
        c[i].p_a[2] = x1[2] + e1[2];
        c[i].psi = (x2[2] - e2[2]) - c[i].p_a[2];
    }
    step_out o = run(b, 2, c, 8, k, NULL);
    for (int i = 0; i < 8; ++i) {
        double fsum = 0.0;
        for (int j = 0; j < k; ++j) {
            ck_assert(o.beta[i * k + j] >= 0.0);
            fsum += o.beta[i * k + j];
        }
        ck_assert(o.pn[i] >= 0.0);
        ck_assert_msg(fsum <= c[i].mu * o.pn[i] * (1 + 1e-9) + TOL_IMPULSE,
                      "contact %d: sum beta %g > mu p_n %g", i, fsum, c[i].mu * o.pn[i]);
        double va[3] = {0, 0, 0}, vb[3];
        if (c[i].body_a >= 0) point_velocity(&o.nu[0], b[0].x, c[i].p_a, va);
        double pb[3] = {c[i].p_a[0], c[i].p_a[1], c[i].p_a[2] + c[i].psi};
        point_velocity(&o.nu[6 * c[i].body_b], b[c[i].body_b].x, pb, vb);
        double gap_end = c[i].psi + H * (vb[2] - va[2]);
        ck_assert_msg(gap_end >= -1e-12, "contact %d: end gap %g", i, gap_end);
        if (o.pn[i] > 1e-9) ck_assert_double_eq_tol(gap_end, 0.0, 1e-12);
    }
}
END_TEST

/* Rotate R by the rotation vector phi (Rodrigues), R row-major. */
static void rotate(const double phi[3], const double R[9], double out[9])
{
    double ang = norm(phi), E[9];
    double ax[3] = {1, 0, 0};
    if (ang > 0) {
        for (int i = 0; i < 3; ++i) ax[i] = phi[i] / ang;
    }
    double c = cos(ang), s = sin(ang);
    double K[3][3] = {{0, -ax[2], ax[1]}, {ax[2], 0, -ax[0]}, {-ax[1], ax[0], 0}};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            E[3 * i + j] = (i == j ? c : 0.0) + s * K[i][j] + (1 - c) * ax[i] * ax[j];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            out[3 * i + j] = E[3 * i] * R[j] + E[3 * i + 1] * R[3 + j] + E[3 * i + 2] * R[6 + j];
}

static void mat_vec(const double R[9], const double v[3], double out[3])
{
    for (int i = 0; i < 3; ++i)
        out[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
}

typedef struct fd_pose {
    double x[3], R[9];
} fd_pose;

static fd_pose advance(const fd_pose *p, const double v[3], const double w[3], double t)
{
    fd_pose q;
    double phi[3] = {w[0] * t, w[1] * t, w[2] * t};
    for (int i = 0; i < 3; ++i) q.x[i] = p->x[i] + v[i] * t;
    rotate(phi, p->R, q.R);
    return q;
}

/* A vertex of body A (body-frame offset u_a) against a face plane of body B (body-frame
 * normal eta_b through body-frame point c_b), both bodies moving: psi(t) = eta . (vertex -
 * plane point), n = -eta (from A to B). Checks G_n^T nu = dpsi/dt by central differences,
 * and each friction column against the FD rate of d_j . (P_B(t) - P_A(t)) for the material
 * points P_A = the vertex and P_B = B's point at p_b at t = 0. */
START_TEST(test_jacobian_finite_difference)
{
    rng_seed(900 + (uint64_t)_i);
    fd_pose pa = {{rng_uniform(-1, 1), rng_uniform(-1, 1), rng_uniform(0, 1)},
                  {1, 0, 0, 0, 1, 0, 0, 0, 1}};
    fd_pose pb = {{rng_uniform(-1, 1), rng_uniform(-1, 1), rng_uniform(-1, 0)},
                  {1, 0, 0, 0, 1, 0, 0, 0, 1}};
    double phi_a[3] = {rng_uniform(-2, 2), rng_uniform(-2, 2), rng_uniform(-2, 2)};
    double phi_b[3] = {rng_uniform(-2, 2), rng_uniform(-2, 2), rng_uniform(-2, 2)};
    fd_pose tmp = pa;
    rotate(phi_a, tmp.R, pa.R);
    tmp = pb;
    rotate(phi_b, tmp.R, pb.R);
    double va[3], wa[3], vb[3], wb[3];
    for (int i = 0; i < 3; ++i) {
        va[i] = rng_uniform(-1, 1);
        wa[i] = rng_uniform(-3, 3);
        vb[i] = rng_uniform(-1, 1);
        wb[i] = rng_uniform(-3, 3);
    }
    const double u_a[3] = {0.3, -0.2, 0.1};
    double eta_b[3] = {rng_uniform(-1, 1), rng_uniform(-1, 1), 1.0}, le = norm(eta_b);
    for (int i = 0; i < 3; ++i) eta_b[i] /= le;
    const double c_b[3] = {0.1, 0.2, 0.3};

    /* Contact at t = 0. */
    double vert[3], eta[3], cw[3];
    mat_vec(pa.R, u_a, vert);
    mat_vec(pb.R, eta_b, eta);
    mat_vec(pb.R, c_b, cw);
    for (int i = 0; i < 3; ++i) {
        vert[i] += pa.x[i];
        cw[i] += pb.x[i];
    }
    pp_contact con;
    memset(&con, 0, sizeof con);
    con.body_a = 0;
    con.body_b = 1;
    double diff[3] = {vert[0] - cw[0], vert[1] - cw[1], vert[2] - cw[2]};
    con.psi = dot(eta, diff);
    ck_assert(fabs(con.psi) > 1e-3); /* a real gap: r_b differs from r_a */
    for (int i = 0; i < 3; ++i) {
        con.n[i] = -eta[i];
        con.p_a[i] = vert[i];
    }
    /* p_b in B's frame, to follow it as a material point. */
    double pbw[3], pb_rel[3], pb_body[3];
    for (int i = 0; i < 3; ++i) {
        pbw[i] = con.p_a[i] + con.psi * con.n[i];
        pb_rel[i] = pbw[i] - pb.x[i];
    }
    for (int i = 0; i < 3; ++i) /* R^T */
        pb_body[i] = pb.R[i] * pb_rel[0] + pb.R[3 + i] * pb_rel[1] + pb.R[6 + i] * pb_rel[2];

    const int k = 8;
    double d[3 * 8];
    pp_mlcp_friction_directions(con.n, k, d);
    const double dt = 1e-5;
    for (int col = 0; col <= k; ++col) {
        const double *u = col == 0 ? con.n : &d[3 * (col - 1)];
        double ga[6], gb[6];
        pp_mlcp_contact_jacobian(&con, pa.x, pb.x, u, ga, gb);
        double analytic = dot(ga, va) + dot(ga + 3, wa) + dot(gb, vb) + dot(gb + 3, wb);
        double value[2];
        for (int s = 0; s < 2; ++s) {
            double t = s == 0 ? dt : -dt;
            fd_pose a = advance(&pa, va, wa, t), bpose = advance(&pb, vb, wb, t);
            double vt[3], et[3], ct[3], pt[3];
            mat_vec(a.R, u_a, vt);
            for (int i = 0; i < 3; ++i) vt[i] += a.x[i];
            if (col == 0) {
                mat_vec(bpose.R, eta_b, et);
                mat_vec(bpose.R, c_b, ct);
                for (int i = 0; i < 3; ++i) ct[i] += bpose.x[i];
                double dd[3] = {vt[0] - ct[0], vt[1] - ct[1], vt[2] - ct[2]};
                value[s] = dot(et, dd);
            } else {
                mat_vec(bpose.R, pb_body, pt);
                for (int i = 0; i < 3; ++i) pt[i] += bpose.x[i];
                double dd[3] = {pt[0] - vt[0], pt[1] - vt[1], pt[2] - vt[2]};
                value[s] = dot(u, dd);
            }
        }
        double fd = (value[0] - value[1]) / (2 * dt);
        ck_assert_msg(fabs(fd - analytic) <= TOL_FD, "column %d: FD %.12g, analytic %.12g", col,
                      fd, analytic);
    }
}
END_TEST

/* The directions: unit, tangent, evenly spaced; for even k each has its opposite (ST96 13). */
START_TEST(test_friction_directions)
{
    rng_seed(77 + (uint64_t)_i);
    double n[3] = {rng_uniform(-1, 1), rng_uniform(-1, 1), rng_uniform(-1, 1)}, ln = norm(n);
    for (int i = 0; i < 3; ++i) n[i] /= ln;
    const int k = 3 + _i;
    double d[3 * 16];
    pp_mlcp_friction_directions(n, k, d);
    for (int j = 0; j < k; ++j) {
        ck_assert_double_eq_tol(norm(&d[3 * j]), 1.0, 1e-14);
        ck_assert_double_eq_tol(dot(&d[3 * j], n), 0.0, 1e-14);
        ck_assert_double_eq_tol(dot(&d[3 * j], &d[3 * ((j + 1) % k)]), cos(2 * PI / k), 1e-14);
        if (k % 2 == 0) {
            const double *o = &d[3 * ((j + k / 2) % k)];
            for (int r = 0; r < 3; ++r) ck_assert_double_eq_tol(o[r], -d[3 * j + r], 1e-14);
        }
    }
}
END_TEST

/* The cosines and sines of the directions are kept per thread for the last k (mlcp.c): with
 * k changing from call to call on one thread (and past PP_MLCP_DIRECTIONS_MAX, not kept),
 * every d_j must be cos(2 pi j / k) d_0 + sin(2 pi j / k) (n x d_0) from libm's own calls, to
 * the bit. A kept table of another k (a stale cache, or one indexed wrongly) breaks it at the
 * first j > 0. */
START_TEST(test_friction_directions_angles_kept)
{
    const double two_pi = 6.283185307179586476925286766559;
    const int ks[] = {4, 8, 5, 4, 64, 65, 3, 64, 2, 8};
    double n[3] = {0.3, -0.5, 0.8}, ln = norm(n);
    for (int i = 0; i < 3; ++i) n[i] /= ln;
    for (size_t c = 0; c < sizeof ks / sizeof ks[0]; ++c) {
        const int k = ks[c];
        double d[3 * 65], t2[3];
        pp_mlcp_friction_directions(n, k, d);
        cross(n, d, t2); /* d_0 = t1: cos 0 = 1, sin 0 = 0 */
        for (int j = 0; j < k; ++j) {
            const double cj = cos(two_pi * j / k), sj = sin(two_pi * j / k);
            for (int i = 0; i < 3; ++i)
                ck_assert_msg(d[3 * j + i] == cj * d[i] + sj * t2[i],
                              "k = %d (call %zu), d_%d[%d] = %.17g, expected %.17g", k, c, j, i,
                              d[3 * j + i], cj * d[i] + sj * t2[i]);
        }
    }
}
END_TEST

/*
 * Islands (pp_mlcp_solve splits the LCP by contacts sharing a dynamic body). Box 0 and box 1
 * rest on the ground 3 m apart; box 3 rests on box 0 (one contact, dynamic-dynamic); box 2
 * is kinematic (W = 0) and touches the tops of boxes 0 and 1. The kinematic box must not
 * join the two: islands {ground 0, 2-0, 3-0} and {ground 1, 2-1}. The island-wise answer
 * must solve the whole LCP (check_lcp_solution in run) and carry every weight, and the
 * kinematic box keeps its velocity.
 */
START_TEST(test_islands)
{
    const double zero[3] = {0, 0, 0}, fall[3] = {0, 0, -G * H};
    const double x0[3] = {0, 0, 0.25}, x1[3] = {3, 0, 0.25}, x3[3] = {0.1, 0, 0.75};
    pp_mlcp_body b[4];
    b[0] = box_body(BOX_MASS, k_half, x0, fall, zero);
    b[1] = box_body(BOX_MASS, k_half, x1, fall, zero);
    memset(&b[2], 0, sizeof b[2]); /* kinematic: infinite mass, at rest */
    b[2].x[0] = 1.5;
    b[2].x[2] = 1.0;
    const double small[3] = {0.2, 0.2, 0.2};
    b[3] = box_body(1.0, small, x3, fall, zero);
    pp_contact c[12];
    int nc = ground_contacts(&b[0], 0, k_half, 0.5, c);
    nc += ground_contacts(&b[1], 1, k_half, 0.5, c + nc);
    const int top[2] = {0, 1};
    for (int t = 0; t < 2; ++t) { /* kinematic box 2 (A, above) on the top of box t (B) */
        pp_contact *k = &c[nc++];
        memset(k, 0, sizeof *k);
        k->body_a = 2;
        k->body_b = top[t];
        k->p_a[0] = b[top[t]].x[0] + 0.3;
        k->p_a[2] = 0.5;
        k->n[2] = -1.0;
        k->mu = 0.5;
    }
    pp_contact *s = &c[nc++]; /* box 3 (B) resting on box 0 (A) at one point under its centre */
    memset(s, 0, sizeof *s);
    s->body_a = 0;
    s->body_b = 3;
    s->p_a[0] = 0.1;
    s->p_a[2] = 0.5;
    s->n[2] = 1.0;
    s->psi = 0.05; /* box 3 hovers 5 cm up: its bottom is at 0.55 */
    s->mu = 0.5;
    step_out o = run(b, 4, c, nc, 4, NULL);
    ck_assert_int_eq(o.stats.islands, 2);
    ck_assert_int_eq(o.stats.largest_island, 6 * 6);
    ck_assert_int_eq(o.stats.islands_failed, 0);
    ck_assert_int_eq(o.stats.failed_island, -1);
    /* Boxes 0 and 1 stop on the ground (the kinematic box does not push: it is at rest and
     * the contacts are closing at -g h only on the dynamic side); box 3 keeps falling (its
     * gap 5 cm is more than g h^2) and feels no impulse. */
    for (int t = 0; t < 2; ++t) {
        double pn = 0.0;
        for (int i = 0; i < 4; ++i) pn += o.pn[4 * t + i];
        ck_assert_double_eq_tol(pn, BOX_MASS * G * H, TOL_IMPULSE);
        ck_assert_double_eq_tol(o.nu[6 * top[t] + 2], 0.0, TOL_VELOCITY);
    }
    ck_assert_double_eq_tol(o.pn[10], 0.0, TOL_IMPULSE);
    ck_assert_double_eq_tol(o.nu[6 * 3 + 2], -G * H, TOL_VELOCITY);
    for (int r = 0; r < 6; ++r) ck_assert(o.nu[6 * 2 + r] == 0.0);
}
END_TEST

START_TEST(test_bad_input_rejected)
{
    const double x[3] = {0, 0, 0.25}, v[3] = {0, 0, 0}, w[3] = {0, 0, 0};
    pp_mlcp_body box = box_body(BOX_MASS, k_half, x, v, w);
    pp_contact c[4];
    ground_contacts(&box, 0, k_half, 0.5, c);
    double pn[4] = {7, 7, 7, 7}, nu[6];
    pp_mlcp_solution s = {pn, NULL, NULL, NULL, nu, NULL};
    pp_mlcp_stats st;
    pp_mlcp_problem p = {H, 1, &box, 4, c, 8, 0.0, 0, 0.0};
    c[2].n[2] = 1.1;
    ck_assert_int_eq(pp_mlcp_solve(g_ws, &p, NULL, NULL, &s, &st), PP_ERR_INVALID_ARGUMENT);
    c[2].n[2] = 1.0;
    c[1].body_b = 3;
    ck_assert_int_eq(pp_mlcp_solve(g_ws, &p, NULL, NULL, &s, &st), PP_ERR_INVALID_ARGUMENT);
    c[1].body_b = 0;
    p.h = 0.0;
    ck_assert_int_eq(pp_mlcp_solve(g_ws, &p, NULL, NULL, &s, &st), PP_ERR_INVALID_ARGUMENT);
    p.h = H;
    p.friction_directions = 1;
    ck_assert_int_eq(pp_mlcp_solve(g_ws, &p, NULL, NULL, &s, &st), PP_ERR_INVALID_ARGUMENT);
    p.friction_directions = 17; /* workspace was sized for 16 */
    ck_assert_int_eq(pp_mlcp_solve(g_ws, &p, NULL, NULL, &s, &st), PP_ERR_INVALID_ARGUMENT);
    ck_assert(pn[0] == 7.0);
    p.friction_directions = 0; /* default 8 */
    ck_assert_int_eq(pp_mlcp_solve(g_ws, &p, NULL, NULL, &s, &st), PP_OK);
    ck_assert_int_eq(st.directions, PP_MLCP_DIRECTIONS_DEFAULT);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mlcp");
    TCase *tc = tcase_create("mlcp");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_resting_box);
    tcase_add_loop_test(tc, test_sliding_box, 0, (int)(sizeof k_theta / sizeof k_theta[0]));
    tcase_add_test(tc, test_sliding_sequence_warm_start);
    tcase_add_loop_test(tc, test_anisotropic_friction, 0, 10);
    tcase_add_test(tc, test_sticking_box);
    tcase_add_test(tc, test_gap_closing);
    tcase_add_loop_test(tc, test_two_bodies_momentum, 0, 5);
    tcase_add_loop_test(tc, test_friction_inside_pyramid, 0, 40);
    tcase_add_loop_test(tc, test_jacobian_finite_difference, 0, 10);
    tcase_add_loop_test(tc, test_friction_directions, 0, 14);
    tcase_add_test(tc, test_friction_directions_angles_kept);
    tcase_add_test(tc, test_islands);
    tcase_add_test(tc, test_bad_input_rejected);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
