/*
 * The sticking solve (contact/src/lcp_sticking.c) on Stewart–Trinkle LCPs built here from
 * one rigid box or plate on point supports, whose answers have closed forms.
 *
 * Frame: the support plane is z = 0 (normal +z), friction directions +x, +y, -x, -y (k = 4);
 * gravity is tilted by the incline angle theta: g = (-g sin theta, 0, -g cos theta), so x
 * points uphill. The body starts at rest; its free velocity is v* = h g. Support i at r_i
 * (from the centre of mass) has Jacobian rows J = [d, r_i x d] for d = n, +x, +y, -x, -y, the
 * LCP (ST96 Eq 29) in z = [p; beta; sigma] is
 *     A_FF = J W J^T,  q_F = J v*,  w_beta += sigma (E),  w_sigma = mu p - sum beta,
 * and the velocity after the step is v = v* + W J^T z_F.
 *
 * Closed forms (statics of the step's impulses; where every contact sticks, the minimum-norm
 * sharing of the compliance limit, README "Redundant supports"):
 *  - a plate of mass m on N x N supports, theta = 0: p_i = m g h / N^2, beta = 0;
 *  - a box on 4 corners (x = +-a, y = +-b, z = -c) on an incline with tan theta < mu: it
 *    sticks, v = 0; total normal N = m g h cos theta, friction F = m g h sin theta uphill,
 *    F / 4 at each corner, and the torque of F about the centre loads the downhill corners:
 *    p = N / 4 + c F / (4 a) (x = -a), N / 4 - c F / (4 a) (x = +a);
 *  - the same box with tan theta > mu slides: friction mu p uphill at each corner, so
 *    v_x = -g h (sin theta - mu cos theta), no rotation, and the sliding speed sigma = |v_x|.
 *    The convex problem of the sticking contacts then has lambda > 0 on loaded contacts (its
 *    answer is not ST's); the entry must not apply it, and answers in a second round with
 *    those contacts in ST's form, i.e. with ST's sliding answer.
 * Every cold solve runs twice: answered by the interior-point stage (lcp_interior.c, no Lemke
 * pivot) and, with pp_sticking.lemke_only, by Lemke on (2) (no interior iteration). Every
 * answer is also checked here as an LCP answer on the columns (rel(z) within the acceptance,
 * z >= 0, z_i w_i ~ 0).
 */
#include "pegplus/lcp.h"

#include "../src/lcp_sticking.h"
#include "lcp_columns.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G 9.81
#define H 0.01
#define K 4
#define PI 3.14159265358979323846

/* `copies` identical bodies, each on the same nc supports (one LCP, block diagonal: the
 * sparse path needs n >= 161) */
typedef struct body_lcp {
    int nc, copies, n;
    double m, inv[6];      /* W diagonal: 1/m (3), 1/I (3) */
    double r[64][3];       /* supports, from the centre of mass */
    double v_free[6];
    double mu;
    double J[64 * (K + 1)][6]; /* one copy's rows: support i's direction l at i (K + 1) + l */
    double *M, *q;         /* dense, column-major */
    columns cols;          /* M by columns */
    unsigned char *sliding;
} body_lcp;

static void cross(const double *a, const double *b, double *out)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* the LCP of body b (supports, mass, inertia, free velocity set), copied `copies` times:
 * support i of copy k is contact k nc + i */
static void build(body_lcp *b)
{
    const int nc = b->nc, C = b->nc * b->copies, nF = C * (K + 1), n = nF + C;
    b->n = n;
    static const double dirs[K + 1][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}, {-1, 0, 0}, {0, -1, 0}};
    for (int i = 0; i < nc; ++i)
        for (int l = 0; l <= K; ++l) {
            const int row = i * (K + 1) + l;
            memcpy(b->J[row], dirs[l], 3 * sizeof(double));
            cross(b->r[i], dirs[l], &b->J[row][3]);
        }
    b->M = calloc((size_t)n * n, sizeof *b->M);
    b->q = calloc((size_t)n, sizeof *b->q);
    b->sliding = calloc((size_t)n, 1);
    ck_assert(b->M && b->q && b->sliding);
    /* LCP index of contact c's direction l (0: p) */
#define AT(c, l) ((l) == 0 ? (c) : C + (c) * K + (l) - 1)
    for (int c = 0; c < C; ++c)
        for (int l = 0; l <= K; ++l) {
            const double *Ji = b->J[(c % nc) * (K + 1) + l];
            for (int d = 0; d < C; ++d) {
                if (d / nc != c / nc) continue; /* another body */
                for (int e = 0; e <= K; ++e) {
                    const double *Jj = b->J[(d % nc) * (K + 1) + e];
                    double a = 0.0;
                    for (int t = 0; t < 6; ++t) a += Ji[t] * b->inv[t] * Jj[t];
                    b->M[AT(c, l) + (size_t)AT(d, e) * n] = a;
                }
            }
            for (int t = 0; t < 6; ++t) b->q[AT(c, l)] += Ji[t] * b->v_free[t];
        }
    for (int c = 0; c < C; ++c) {
        const int s = nF + c;
        b->sliding[s] = 1;
        b->M[s + (size_t)c * n] = b->mu;
        for (int l = 1; l <= K; ++l) {
            b->M[s + (size_t)AT(c, l) * n] = -1.0;
            b->M[AT(c, l) + (size_t)s * n] = 1.0;
        }
    }
#undef AT
    to_columns(n, b->M, &b->cols);
}

static void release(body_lcp *b)
{
    free(b->M);
    free(b->q);
    free(b->sliding);
    free_columns(&b->cols);
}

/* v = v* + W J^T z_F of copy k */
static void velocity_after(const body_lcp *b, int k, const double *z, double *v)
{
    const int C = b->nc * b->copies;
    for (int t = 0; t < 6; ++t) {
        double s = 0.0;
        for (int i = 0; i < b->nc; ++i) {
            const int c = k * b->nc + i;
            s += b->J[i * (K + 1)][t] * z[c];
            for (int l = 1; l <= K; ++l) s += b->J[i * (K + 1) + l][t] * z[C + c * K + l - 1];
        }
        v[t] = b->v_free[t] + b->inv[t] * s;
    }
}

/* a box (half extents a, b, c: its corners' supports at z = -c) of mass m on an incline */
static void box_on_incline(body_lcp *b, double theta, double mu)
{
    memset(b, 0, sizeof *b);
    const double a = 0.5, hb = 0.3, c = 0.1;
    b->nc = 4;
    b->copies = 8;
    b->m = 2.0;
    b->mu = mu;
    b->inv[0] = b->inv[1] = b->inv[2] = 1.0 / b->m;
    b->inv[3] = 3.0 / (b->m * (hb * hb + c * c));
    b->inv[4] = 3.0 / (b->m * (a * a + c * c));
    b->inv[5] = 3.0 / (b->m * (a * a + hb * hb));
    for (int i = 0; i < 4; ++i) {
        b->r[i][0] = (i & 1) ? a : -a;
        b->r[i][1] = (i & 2) ? hb : -hb;
        b->r[i][2] = -c;
    }
    b->v_free[0] = -G * H * sin(theta);
    b->v_free[2] = -G * H * cos(theta);
    build(b);
}

static pp_sticking_outcome solve(body_lcp *b, pp_sticking *st, double *z, pp_lcp_result *r)
{
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(b->n, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    pp_sticking_outcome out =
        pp_sticking_island(st, ws, &b->cols.A, b->q, b->sliding, NULL, NULL, NULL, &o, z, r);
    if (out == PP_STICKING_SOLVED) { /* an exact answer: checked again here, by columns */
        pp_lcp_result check;
        memset(&check, 0, sizeof check);
        double *w = malloc((size_t)b->n * sizeof *w);
        ck_assert(w != NULL);
        pp_lcp_csc_residual(&b->cols.A, b->q, z, w, &check);
        ck_assert_double_le(check.relative_residual, o.residual_tol);
        for (int i = 0; i < b->n; ++i) {
            ck_assert_double_ge(z[i], 0.0);
            ck_assert_double_le(fabs(z[i] * w[i]), 1e-9 * G * H * b->m * G * H);
        }
        free(w);
    }
    pp_lcp_workspace_destroy(ws);
    return out;
}

/* which stage answered a cold solve: the interior-point solve (no Lemke pivot), or, with
 * lemke_only, Lemke on (2) (no interior iteration) */
static void check_stage(const pp_sticking *st, int lemke_only)
{
    if (lemke_only) {
        ck_assert_int_eq(st->interior_iterations, 0);
        ck_assert_int_gt(st->lemke_pivots, 0);
    } else {
        ck_assert_int_gt(st->interior_iterations, 0);
        ck_assert_int_eq(st->lemke_pivots, 0);
    }
}

START_TEST(test_plate_on_supports)
{
    static body_lcp b;
    memset(&b, 0, sizeof b);
    const int N = 6;
    const double a = 0.5, c = 0.05;
    b.nc = N * N;
    b.copies = 1;
    b.m = 3.0;
    b.mu = 0.5;
    b.inv[0] = b.inv[1] = b.inv[2] = 1.0 / b.m;
    b.inv[3] = b.inv[4] = 3.0 / (b.m * (a * a + c * c));
    b.inv[5] = 3.0 / (b.m * 2.0 * a * a);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            b.r[i * N + j][0] = -a + a / N + 2.0 * a * i / N;
            b.r[i * N + j][1] = -a + a / N + 2.0 * a * j / N;
            b.r[i * N + j][2] = -c;
        }
    b.v_free[2] = -G * H;
    build(&b);
    pp_sticking st;
    memset(&st, 0, sizeof st);
    st.lemke_only = _i;
    double z[512], v[6];
    pp_lcp_result r;
    ck_assert_int_eq(solve(&b, &st, z, &r), PP_STICKING_SOLVED);
    check_stage(&st, _i);
    const double share = b.m * G * H / (N * N);
    for (int i = 0; i < b.nc; ++i) ck_assert_double_eq_tol(z[i], share, 1e-9 * b.m * G * H);
    for (int i = b.nc; i < b.n; ++i) ck_assert_double_le(z[i], 1e-9 * b.m * G * H);
    velocity_after(&b, 0, z, v);
    for (int t = 0; t < 6; ++t) ck_assert_double_le(fabs(v[t]), 1e-9 * G * H);
    /* the same LCP again with the kept active set (the next re-linearisation iterate): the
     * kept answer as it stands, no factorisation */
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(b.n, &ws), PP_OK);
    unsigned char kept[512], kept_slides[512];
    memcpy(kept, st.basis, (size_t)b.n);
    memcpy(kept_slides, st.slides, (size_t)b.n);
    pp_lcp_options o = pp_lcp_options_default();
    double z0[512];
    memcpy(z0, z, (size_t)b.n * sizeof *z);
    ck_assert_int_eq(pp_sticking_island(&st, ws, &b.cols.A, b.q, b.sliding, kept, kept_slides,
                                        NULL, &o, z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_eq(st.from_answer, 1);
    ck_assert_int_eq(st.from_kept, 0);
    ck_assert_int_eq(st.steps + st.interior_iterations + st.lemke_pivots, 0);
    ck_assert_int_eq(r.status, PP_LCP_SOLVED);
    for (int i = 0; i < b.n; ++i) ck_assert_double_eq(z[i], z0[i]);
    for (int i = 0; i < b.n; ++i) ck_assert_int_eq(st.basis[i], kept[i]);
    /* q 1e-13 larger (rounding): taken again; 3e-10 larger (beyond STICK_ANSWER_SAME of the
     * q it was found for, though it would still pass the acceptance): not tried, the kept
     * active set answers */
    double q0[512];
    memcpy(q0, b.q, (size_t)b.n * sizeof *q0);
    for (int i = 0; i < b.n; ++i) b.q[i] = q0[i] * (1.0 + 1e-13);
    ck_assert_int_eq(pp_sticking_island(&st, ws, &b.cols.A, b.q, b.sliding, kept, kept_slides,
                                        NULL, &o, z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_eq(st.from_answer, 1);
    for (int i = 0; i < b.n; ++i) ck_assert_double_eq(z[i], z0[i]);
    long tried = st.answer_tried;
    for (int i = 0; i < b.n; ++i) b.q[i] = q0[i] * (1.0 + 3e-10);
    ck_assert_int_eq(pp_sticking_island(&st, ws, &b.cols.A, b.q, b.sliding, kept, kept_slides,
                                        NULL, &o, z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_eq(st.from_answer, 0);
    ck_assert_int_eq(st.answer_tried, tried);
    ck_assert_int_eq(st.from_kept, 1);
    /* the next step (the weight 1e-6 larger): the kept active set answers in one
     * factorisation, no Lemke */
    for (int i = 0; i < b.n; ++i) b.q[i] = q0[i] * (1.0 + 1e-6);
    const long taken = st.answer_taken;
    ck_assert_int_eq(pp_sticking_island(&st, ws, &b.cols.A, b.q, b.sliding, kept, kept_slides,
                                        NULL, &o, z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_eq(st.from_answer, 0);
    ck_assert_int_eq(st.answer_taken, taken);
    ck_assert_int_eq(st.from_kept, 1);
    ck_assert_int_eq(st.lemke_pivots, 0);
    for (int i = 0; i < b.nc; ++i)
        ck_assert_double_eq_tol(z[i], share * (1.0 + 1e-6), 1e-9 * b.m * G * H);
    pp_lcp_workspace_destroy(ws);
    pp_sticking_free(&st);
    release(&b);
}
END_TEST

START_TEST(test_box_sticks_on_incline)
{
    static body_lcp b;
    const double theta = 20.0 * PI / 180.0, mu = 0.5, a = 0.5, cz = 0.1;
    box_on_incline(&b, theta, mu);
    pp_sticking st;
    memset(&st, 0, sizeof st);
    st.lemke_only = _i;
    double z[512], v[6];
    pp_lcp_result r;
    ck_assert_int_eq(solve(&b, &st, z, &r), PP_STICKING_SOLVED);
    check_stage(&st, _i);
    ck_assert_int_eq(st.sliding_loaded, 0);
    const double mgh = b.m * G * H, N = mgh * cos(theta), F = mgh * sin(theta);
    const double tol = 1e-9 * mgh;
    const int C = 4 * b.copies;
    for (int c = 0; c < C; ++c) {
        const double x = b.r[c % 4][0];
        const double expect = N / 4.0 + (x < 0.0 ? 1.0 : -1.0) * cz * F / (4.0 * a);
        ck_assert_double_eq_tol(z[c], expect, tol);
        const double *beta = &z[C + c * K];
        ck_assert_double_eq_tol(beta[0] - beta[2], F / 4.0, tol); /* uphill friction */
        ck_assert_double_eq_tol(beta[1] - beta[3], 0.0, tol);
        ck_assert_double_le(beta[0] + beta[1] + beta[2] + beta[3], mu * z[c] + tol);
        ck_assert_double_le(z[C + C * K + c], tol); /* sigma: it sticks */
    }
    for (int k = 0; k < b.copies; ++k) {
        velocity_after(&b, k, z, v);
        for (int t = 0; t < 6; ++t) ck_assert_double_le(fabs(v[t]), 1e-9 * G * H);
    }
    pp_sticking_free(&st);
    release(&b);
}
END_TEST

START_TEST(test_box_slides_on_steep_incline)
{
    static body_lcp b;
    const double theta = 40.0 * PI / 180.0, mu = 0.5;
    box_on_incline(&b, theta, mu);
    pp_sticking st;
    memset(&st, 0, sizeof st);
    st.lemke_only = _i;
    double z[512], v[6];
    pp_lcp_result r;
    pp_sticking_outcome out = solve(&b, &st, z, &r);
    /* the convex problem of the sticking contacts has loaded contacts with lambda > 0: not
     * ST's answer (the first round marks them); the second round has them in ST's form,
     * and its answer is ST's sliding answer */
    ck_assert_int_eq(out, PP_STICKING_SOLVED);
    check_stage(&st, _i);
    ck_assert_int_eq(st.rounds, 2);
    int marked = 0;
    for (int i = 0; i < b.n; ++i) marked += st.slides[i] != 0;
    ck_assert_int_eq(marked, 4 * b.copies);
    const int C = 4 * b.copies;
    const double vx = -G * H * (sin(theta) - mu * cos(theta));
    for (int k = 0; k < b.copies; ++k) {
        velocity_after(&b, k, z, v);
        ck_assert_double_eq_tol(v[0], vx, 1e-9 * G * H);
        for (int t = 1; t < 6; ++t) ck_assert_double_le(fabs(v[t]), 1e-9 * G * H);
    }
    for (int c = 0; c < C; ++c) ck_assert_double_eq_tol(z[C + C * K + c], -vx, 1e-9 * G * H);
    pp_sticking_free(&st);
    release(&b);
}
END_TEST

/* One island, two laws: of box_on_incline's 8 copies at 20 degrees (they stick), the first
 * SLIDERS get the free velocity of a 40 degree incline (tan 40 > mu = 0.5: they slide), so
 * the convex problem (2) has loaded contacts with lambda > 0 on those copies only. The first
 * round marks exactly their 4 SLIDERS contacts; the second round has them in ST's form and
 * the resting copies in the form of (2) (the mixed problem heap100's second round solves),
 * and its answer is ST's: the sliding boxes at v_x = -g h (sin 40 - mu cos 40) with sigma =
 * |v_x| at each corner, the resting ones at rest with the 20 degree statics. */
#define SLIDERS 2
START_TEST(test_box_slides_among_resting)
{
    static body_lcp b;
    const double rest = 20.0 * PI / 180.0, steep = 40.0 * PI / 180.0, mu = 0.5;
    const double a = 0.5, cz = 0.1;
    box_on_incline(&b, rest, mu);
    const int C = 4 * b.copies;
    const double v_steep[6] = {-G * H * sin(steep), 0.0, -G * H * cos(steep), 0.0, 0.0, 0.0};
    for (int c = 0; c < 4 * SLIDERS; ++c)
        for (int l = 0; l <= K; ++l) {
            double s = 0.0;
            for (int t = 0; t < 6; ++t) s += b.J[(c % 4) * (K + 1) + l][t] * v_steep[t];
            b.q[l == 0 ? c : C + c * K + l - 1] = s;
        }
    pp_sticking st;
    memset(&st, 0, sizeof st);
    st.lemke_only = _i;
    double z[512], v[6];
    pp_lcp_result r;
    ck_assert_int_eq(solve(&b, &st, z, &r), PP_STICKING_SOLVED);
    check_stage(&st, _i);
    ck_assert_int_eq(st.rounds, 2);
    for (int i = 0; i < b.n; ++i) /* marked: the sliding copies' sigma, nothing else */
        ck_assert_int_eq(st.slides[i] != 0, i >= C + C * K && i - C - C * K < 4 * SLIDERS);
    const double vx = -G * H * (sin(steep) - mu * cos(steep)), tol = 1e-9 * G * H;
    const double mgh = b.m * G * H, N = mgh * cos(rest), F = mgh * sin(rest);
    for (int k = 0; k < b.copies; ++k) {
        velocity_after(&b, k, z, v);
        if (k < SLIDERS) /* v* of the steep incline, not box_on_incline's */
            for (int t = 0; t < 6; ++t) v[t] += v_steep[t] - b.v_free[t];
        ck_assert_double_eq_tol(v[0], k < SLIDERS ? vx : 0.0, tol);
        for (int t = 1; t < 6; ++t) ck_assert_double_le(fabs(v[t]), tol);
    }
    for (int c = 0; c < C; ++c) {
        const double sigma = z[C + C * K + c];
        if (c < 4 * SLIDERS) {
            ck_assert_double_eq_tol(sigma, -vx, tol);
            continue;
        }
        ck_assert_double_le(sigma, tol);
        const double x = b.r[c % 4][0];
        ck_assert_double_eq_tol(z[c], N / 4.0 + (x < 0.0 ? 1.0 : -1.0) * cz * F / (4.0 * a),
                                1e-9 * mgh);
        ck_assert_double_eq_tol(z[C + c * K] - z[C + c * K + 2], F / 4.0, 1e-9 * mgh);
    }
    pp_sticking_free(&st);
    release(&b);
}
END_TEST

/* The statics of the box of box_on_incline (mass b->m) at theta, sticking: z's normals and
 * uphill friction at every corner */
static void check_box_statics(const body_lcp *b, double theta, const double *z)
{
    const double a = 0.5, cz = 0.1, mgh = b->m * G * H, N = mgh * cos(theta);
    const double F = mgh * sin(theta), tol = 1e-9 * mgh;
    const int C = 4 * b->copies;
    for (int c = 0; c < C; ++c) {
        const double x = b->r[c % 4][0];
        ck_assert_double_eq_tol(z[c], N / 4.0 + (x < 0.0 ? 1.0 : -1.0) * cz * F / (4.0 * a), tol);
        ck_assert_double_eq_tol(z[C + c * K] - z[C + c * K + 2], F / 4.0, tol);
    }
}

/* pp_sticking_forget: a workspace that has solved one island answers the next as a fresh one
 * does, bit for bit (the stepper calls it before each island's step, so an island's answer
 * does not depend on which island a thread's workspace solved before); without it the last
 * answer of that size starts the interior-point solve (another iteration count). */
START_TEST(test_forget_answers)
{
    static body_lcp first, next;
    box_on_incline(&first, 20.0 * PI / 180.0, 0.5);
    box_on_incline(&next, 15.0 * PI / 180.0, 0.5);
    double z_fresh[512], z_forgot[512], z_kept[512];
    pp_lcp_result r;
    pp_sticking fresh, used;
    memset(&fresh, 0, sizeof fresh);
    memset(&used, 0, sizeof used);
    ck_assert_int_eq(solve(&next, &fresh, z_fresh, &r), PP_STICKING_SOLVED);
    ck_assert_int_gt(fresh.interior_iterations, 0);
    ck_assert_int_eq(solve(&first, &used, z_kept, &r), PP_STICKING_SOLVED);
    pp_sticking_forget(&used);
    ck_assert_int_eq(solve(&next, &used, z_forgot, &r), PP_STICKING_SOLVED);
    ck_assert_int_eq(used.interior_iterations, fresh.interior_iterations);
    ck_assert(memcmp(z_forgot, z_fresh, (size_t)next.n * sizeof *z_fresh) == 0);
    ck_assert_int_eq(solve(&first, &used, z_kept, &r), PP_STICKING_SOLVED);
    ck_assert_int_eq(solve(&next, &used, z_kept, &r), PP_STICKING_SOLVED); /* started */
    ck_assert_int_ne(used.interior_iterations, fresh.interior_iterations);
    pp_sticking_free(&fresh);
    pp_sticking_free(&used);
    release(&first);
    release(&next);
}
END_TEST

/* The caller's start (pp_sticking.z_given: the stepper's island answer of its last step, kept
 * by constraint identity): the box on an incline tilted from 20 to 20.5 degrees, started from
 * the 20-degree answer, reaches the answer in fewer interior iterations than cold (with the
 * start ignored it would take as many), the same statics; and a workspace that solved another
 * island before, forgotten, answers with that start bit for bit as a fresh one (its last
 * answers, of the same size, are not taken instead). */
START_TEST(test_given_start)
{
    static body_lcp before, now, other;
    const double mu = 0.5, theta = 20.5 * PI / 180.0;
    box_on_incline(&before, 20.0 * PI / 180.0, mu);
    box_on_incline(&now, theta, mu);
    box_on_incline(&other, 10.0 * PI / 180.0, mu);
    ck_assert_int_eq(before.n, now.n);
    double z_before[512], z_cold[512], z_warm[512], z_used[512];
    pp_lcp_result r;
    pp_sticking cold, warm, used;
    memset(&cold, 0, sizeof cold);
    memset(&warm, 0, sizeof warm);
    memset(&used, 0, sizeof used);
    ck_assert_int_eq(solve(&before, &cold, z_before, &r), PP_STICKING_SOLVED);
    pp_sticking_forget(&cold);
    ck_assert_int_eq(solve(&now, &cold, z_cold, &r), PP_STICKING_SOLVED);
    ck_assert_int_eq(cold.interior.warm, 0);
    ck_assert_int_eq(pp_sticking_reserve(&warm, now.n), PP_OK);
    memcpy(warm.z_given, z_before, (size_t)now.n * sizeof *z_before);
    warm.given = 1;
    ck_assert_int_eq(solve(&now, &warm, z_warm, &r), PP_STICKING_SOLVED);
    ck_assert_int_eq(warm.given, 0); /* for that solve only */
    ck_assert_int_lt(warm.interior_iterations, cold.interior_iterations);
    check_box_statics(&now, theta, z_cold);
    check_box_statics(&now, theta, z_warm);
    ck_assert_int_eq(solve(&other, &used, z_used, &r), PP_STICKING_SOLVED);
    pp_sticking_forget(&used);
    memcpy(used.z_given, z_before, (size_t)now.n * sizeof *z_before);
    used.given = 1;
    ck_assert_int_eq(solve(&now, &used, z_used, &r), PP_STICKING_SOLVED);
    ck_assert_int_eq(used.interior_iterations, warm.interior_iterations);
    ck_assert(memcmp(z_used, z_warm, (size_t)now.n * sizeof *z_warm) == 0);
    printf("check_sticking: box on a 20.5-degree incline, %d interior iterations cold, %d from "
           "the 20-degree answer\n", cold.interior_iterations, warm.interior_iterations);
    pp_sticking_free(&cold);
    pp_sticking_free(&warm);
    pp_sticking_free(&used);
    release(&before);
    release(&now);
    release(&other);
}
END_TEST

/* A round whose warm start stalled is solved again cold (lcp_sticking.c interior_rounds): the
 * box on a 20.5-degree incline started from z_given = 1e30 on every unknown (each x_i and v_i
 * then ~1e27, far from the answer's ~1e-1) stalls at STICK_INTERIOR_ITERATIONS (80); the same
 * round from the interior solve's own start is a cold solve, so the answer is a cold solve's
 * bit for bit, in the iterations of both, and the box's statics hold (friction holds it:
 * sliding nothing). Without the cold re-solve the stalled iterate is the round's answer. */
START_TEST(test_stalled_warm_round_solved_cold)
{
    static body_lcp now;
    const double mu = 0.5, theta = 20.5 * PI / 180.0;
    box_on_incline(&now, theta, mu);
    double z_cold[512], z_far[512];
    pp_lcp_result r;
    pp_sticking cold, far;
    memset(&cold, 0, sizeof cold);
    memset(&far, 0, sizeof far);
    ck_assert_int_eq(solve(&now, &cold, z_cold, &r), PP_STICKING_SOLVED);
    ck_assert_int_eq(cold.cold_again, 0);
    ck_assert_int_eq(pp_sticking_reserve(&far, now.n), PP_OK);
    for (int i = 0; i < now.n; ++i) far.z_given[i] = 1e30;
    far.given = 1;
    ck_assert_int_eq(solve(&now, &far, z_far, &r), PP_STICKING_SOLVED);
    check_box_statics(&now, theta, z_far);
    ck_assert(memcmp(z_far, z_cold, (size_t)now.n * sizeof *z_cold) == 0);
    ck_assert_int_eq(far.cold_again, 1);
    ck_assert_int_eq(far.rounds, cold.rounds);
    ck_assert_int_gt(far.interior_iterations, cold.interior_iterations);
    pp_sticking_free(&cold);
    pp_sticking_free(&far);
    release(&now);
}
END_TEST

/* The kept answer (the last solve's z, tried as it stands with a kept active set where the
 * LCP is the same) is an answer only of the LCP it solved: the box at 20 degrees, then the
 * same box twice as heavy (the same q, A halved: the kept answer is tried and refused by
 * the acceptance), then at 10 degrees (q moved: not tried); every answer the closed form of
 * its own LCP. An island of another size does not try it. */
START_TEST(test_kept_answer_refused)
{
    static body_lcp b, c, d, e;
    const double mu = 0.5, theta = 20.0 * PI / 180.0;
    box_on_incline(&b, theta, mu);
    pp_sticking st;
    memset(&st, 0, sizeof st);
    double z[512];
    pp_lcp_result r;
    ck_assert_int_eq(solve(&b, &st, z, &r), PP_STICKING_SOLVED);
    check_box_statics(&b, theta, z);
    unsigned char kept[512], kept_slides[512];
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(b.n, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    /* twice the mass and inertia: the same q, A halved */
    box_on_incline(&c, theta, mu);
    release(&c);
    c.m = 2.0 * b.m;
    for (int t = 0; t < 6; ++t) c.inv[t] = 0.5 * b.inv[t];
    build(&c);
    for (int i = 0; i < c.n; ++i) ck_assert_double_eq(c.q[i], b.q[i]);
    memcpy(kept, st.basis, (size_t)b.n);
    memcpy(kept_slides, st.slides, (size_t)b.n);
    ck_assert_int_eq(pp_sticking_island(&st, ws, &c.cols.A, c.q, c.sliding, kept, kept_slides,
                                        NULL, &o, z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_eq(st.answer_tried, 1);
    ck_assert_int_eq(st.answer_taken, 0);
    ck_assert_int_eq(st.from_answer, 0);
    check_box_statics(&c, theta, z);
    /* 10 degrees, the heavier box: q moved, the kept answer not tried */
    box_on_incline(&d, 10.0 * PI / 180.0, mu);
    release(&d);
    d.m = c.m;
    for (int t = 0; t < 6; ++t) d.inv[t] = c.inv[t];
    build(&d);
    memcpy(kept, st.basis, (size_t)d.n);
    memcpy(kept_slides, st.slides, (size_t)d.n);
    ck_assert_int_eq(pp_sticking_island(&st, ws, &d.cols.A, d.q, d.sliding, kept, kept_slides,
                                        NULL, &o, z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_eq(st.answer_tried, 1);
    ck_assert_int_eq(st.from_answer, 0);
    check_box_statics(&d, 10.0 * PI / 180.0, z);
    pp_lcp_workspace_destroy(ws);
    /* a plate on 6 x 6 supports (216 unknowns against the box's 192): not tried */
    memset(&e, 0, sizeof e);
    e.nc = 36;
    e.copies = 1;
    e.m = 3.0;
    e.mu = mu;
    e.inv[0] = e.inv[1] = e.inv[2] = 1.0 / e.m;
    e.inv[3] = e.inv[4] = e.inv[5] = 1.0;
    for (int i = 0; i < 36; ++i) {
        e.r[i][0] = -0.5 + (i / 6) / 5.0;
        e.r[i][1] = -0.5 + (i % 6) / 5.0;
        e.r[i][2] = -0.05;
    }
    e.v_free[2] = -G * H;
    build(&e);
    ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(e.n, &ws), PP_OK);
    memset(kept, 0, (size_t)e.n);
    ck_assert_int_eq(pp_sticking_island(&st, ws, &e.cols.A, e.q, e.sliding, kept, NULL, NULL, &o,
                                        z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_eq(st.answer_tried, 1);
    ck_assert_int_eq(st.from_answer, 0);
    for (int i = 0; i < e.nc; ++i)
        ck_assert_double_eq_tol(z[i], e.m * G * H / 36.0, 1e-9 * e.m * G * H);
    pp_lcp_workspace_destroy(ws);
    pp_sticking_free(&st);
    release(&b);
    release(&c);
    release(&d);
    release(&e);
}
END_TEST

/* a plate on N x N supports and, with `extra`, one support more under its corner that is
 * open (its gap closing at `gap_speed` over the step: q_p raised by it) */
static void plate_with_extra(body_lcp *b, int extra, double gap_speed)
{
    memset(b, 0, sizeof *b);
    const int N = 6;
    const double a = 0.5, c = 0.05;
    b->nc = N * N + extra;
    b->copies = 1;
    b->m = 3.0;
    b->mu = 0.5;
    b->inv[0] = b->inv[1] = b->inv[2] = 1.0 / b->m;
    b->inv[3] = b->inv[4] = 3.0 / (b->m * (a * a + c * c));
    b->inv[5] = 3.0 / (b->m * 2.0 * a * a);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            b->r[i * N + j][0] = -a + a / N + 2.0 * a * i / N;
            b->r[i * N + j][1] = -a + a / N + 2.0 * a * j / N;
            b->r[i * N + j][2] = -c;
        }
    if (extra) {
        b->r[N * N][0] = a;
        b->r[N * N][1] = a;
        b->r[N * N][2] = -c;
    }
    b->v_free[2] = -G * H;
    build(b);
    if (extra) b->q[N * N] += gap_speed; /* its p row: the contact's own, index nc - 1 */
}

/* A re-linearisation iterate whose list gained a set (lcp_sticking.c kept_answer): the plate's
 * answer, kept, answers the plate with one more support that is open (its p, beta and sigma
 * each inserted in their kind's place) as it stands, the new support's impulses 0; where the
 * new support must carry a load (its gap closing faster than the plate rests) the kept answer
 * is refused by the acceptance and the island is solved. */
START_TEST(test_kept_answer_set_joins)
{
    static body_lcp b, c, d;
    plate_with_extra(&b, 0, 0.0);
    pp_sticking st;
    memset(&st, 0, sizeof st);
    double z[512], z0[512];
    pp_lcp_result r;
    ck_assert_int_eq(solve(&b, &st, z, &r), PP_STICKING_SOLVED);
    memcpy(z0, z, (size_t)b.n * sizeof *z);
    const double share = b.m * G * H / 36.0;
    pp_lcp_options o = pp_lcp_options_default();
    unsigned char kept[512];
    /* the open support: 1 m/s of gap closing over the step left */
    plate_with_extra(&c, 1, 1.0);
    ck_assert_int_eq(c.n, b.n + 6);
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(c.n, &ws), PP_OK);
    memset(kept, 0, sizeof kept);
    ck_assert_int_eq(pp_sticking_island(&st, ws, &c.cols.A, c.q, c.sliding, kept, NULL, NULL,
                                        &o, z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_eq(st.from_answer, 1);
    ck_assert_int_eq(st.interior_iterations + st.lemke_pivots + st.steps, 0);
    for (int i = 0; i < 36; ++i) ck_assert_double_eq(z[i], z0[i]);
    ck_assert_double_eq(z[36], 0.0);
    for (int i = 0; i < 36; ++i) ck_assert_double_eq_tol(z[i], share, 1e-9 * b.m * G * H);
    double w[512];
    pp_lcp_result check;
    memset(&check, 0, sizeof check);
    pp_lcp_csc_residual(&c.cols.A, c.q, z, w, &check);
    ck_assert_double_le(check.relative_residual, o.residual_tol);
    ck_assert_double_ge(w[36], 0.99); /* the new support stays open */
    /* the same again: the grown list's answer, kept at its own size */
    ck_assert_int_eq(pp_sticking_island(&st, ws, &c.cols.A, c.q, c.sliding, kept, NULL, NULL,
                                        &o, z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_eq(st.from_answer, 1);
    /* a new support that must carry a load (its gap closing at 1 mm/s over the step, the
     * plate at rest otherwise): the kept plate's answer tried, refused, the island solved */
    plate_with_extra(&d, 1, -1e-3);
    pp_sticking_forget(&st);
    ck_assert_int_eq(solve(&b, &st, z, &r), PP_STICKING_SOLVED);
    const long tried = st.answer_tried, taken = st.answer_taken;
    ck_assert_int_eq(pp_sticking_island(&st, ws, &d.cols.A, d.q, d.sliding, kept, NULL, NULL,
                                        &o, z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_eq(st.answer_tried, tried + 1);
    ck_assert_int_eq(st.answer_taken, taken);
    ck_assert_int_eq(st.from_answer, 0);
    ck_assert_double_gt(z[36], 0.0);
    memset(&check, 0, sizeof check);
    pp_lcp_csc_residual(&d.cols.A, d.q, z, w, &check);
    ck_assert_double_le(check.relative_residual, o.residual_tol);
    pp_lcp_workspace_destroy(ws);
    pp_sticking_free(&st);
    release(&b);
    release(&c);
    release(&d);
}
END_TEST

/* the step's clock: with the shared budget's deadline passed, the interior stage factorises
 * nothing and the solve gives up (Lemke then answers, in the caller) */
START_TEST(test_deadline_passed)
{
    static body_lcp b;
    box_on_incline(&b, 20.0 * PI / 180.0, 0.5);
    pp_sticking st;
    memset(&st, 0, sizeof st);
    double z[512];
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(b.n, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    pp_lcp_budget budget = pp_lcp_budget_start(0.0, -1);
    budget.deadline = pp_lcp_clock() - 1.0;
    o.budget = &budget;
    pp_lcp_result r;
    ck_assert_int_ne(pp_sticking_island(&st, ws, &b.cols.A, b.q, b.sliding, NULL, NULL, NULL, &o,
                                        z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_int_eq(st.interior_iterations, 0);
    pp_lcp_workspace_destroy(ws);
    pp_sticking_free(&st);
    release(&b);
}
END_TEST

/* A refused sticking solve's best round as the bounded fallback's start (lcp_sticking.h
 * z_best, pp_lcp_options.fallback_start), as peg_mlcp.c chains them: the box sliding on the
 * 40-degree incline, with the acceptance at residual_tol = 1e-300 so that no round's answer is
 * taken (the sticking solve refuses: its rounds' answers are kept, the best by rel(z)); then
 * the caller's solve of the same LCP with the step's pivots spent (Lemke cannot finish) and the
 * fallback's work bound at three passes over A, the candidate's pass and one sweep (its own
 * stages reach little: at heap50's sliding onset they end at rel(z) 1e-4 where the rounds
 * had reached 1e-7). The answer is the fallback's, approximate, and checked here as an LCP
 * answer: usable (r(z) <= ||q||_inf, z >= 0, finite), rel(z) no worse than the rounds' best,
 * and the boxes' velocity ST's sliding closed form. Without the candidate the fallback
 * answers from z = 0 and one sweep (rel(z) orders of magnitude above). */
START_TEST(test_best_round_starts_fallback)
{
    static body_lcp b;
    const double theta = 40.0 * PI / 180.0, mu = 0.5;
    box_on_incline(&b, theta, mu);
    pp_sticking st;
    memset(&st, 0, sizeof st);
    st.lemke_only = _i;
    double z[512], w[512], v[6];
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(b.n, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    o.residual_tol = 1e-300;
    pp_lcp_result r;
    ck_assert_int_ne(pp_sticking_island(&st, ws, &b.cols.A, b.q, b.sliding, NULL, NULL, NULL, &o,
                                        z, &r),
                     PP_STICKING_SOLVED);
    ck_assert_double_le(st.best_rel, 1e-9); /* the round ST's form answered, refused */
    ck_assert_double_gt(st.best_rel, 0.0);
    pp_lcp_result kept; /* the best round's measures are its own */
    memset(&kept, 0, sizeof kept);
    pp_lcp_csc_residual(&b.cols.A, b.q, st.z_best, NULL, &kept);
    ck_assert_double_eq(st.best_residual, kept.residual);
    ck_assert_double_eq(st.best_rel, kept.relative_residual);
    const double nnz = (double)b.cols.A.col_start[b.n];
    pp_lcp_budget spent = pp_lcp_budget_start(0.0, 0); /* the step's pivots all spent */
    o.budget = &spent;
    o.fallback_work = 5.0 * nnz;
    o.fallback_start = st.z_best;
    unsigned char basis[512];
    memset(basis, 0, sizeof basis);
    ck_assert_int_eq(pp_lcp_solve_csc(ws, &b.cols.A, b.q, &o, basis, z, &r), PP_ERR_SOLVER);
    ck_assert_int_eq(r.status, PP_LCP_APPROXIMATE);
    ck_assert_int_eq(r.fallback, 1);
    ck_assert_int_eq(r.budget_exhausted, 1);
    ck_assert_int_le(r.pivots, 1); /* z0 enters, then the budget stops it */
    pp_lcp_result check;
    memset(&check, 0, sizeof check);
    pp_lcp_csc_residual(&b.cols.A, b.q, z, w, &check);
    ck_assert_double_le(check.relative_residual, st.best_rel);
    ck_assert_double_le(check.residual, pp_lcp_inf_norm(b.n, b.q));
    ck_assert(pp_lcp_all_finite((size_t)b.n, z));
    for (int i = 0; i < b.n; ++i) ck_assert_double_ge(z[i], 0.0);
    const double vx = -G * H * (sin(theta) - mu * cos(theta));
    for (int k = 0; k < b.copies; ++k) {
        velocity_after(&b, k, z, v);
        ck_assert_double_eq_tol(v[0], vx, 1e-6 * G * H);
        for (int t = 1; t < 6; ++t) ck_assert_double_le(fabs(v[t]), 1e-6 * G * H);
    }
    printf("check_sticking: refused sliding box (lemke_only %d): best round rel %.3g, the "
           "fallback's answer rel %.3g\n", _i, st.best_rel, check.relative_residual);
    pp_lcp_workspace_destroy(ws);
    pp_sticking_free(&st);
    release(&b);
}
END_TEST

/* A diverged round is not the fallback's answer (docs/performance.md "The convex landing's
 * steps 208-209", "Noticed": on the landing's iterate island a sticking round ended at
 * ||z|| 7.1e8 with r(z) 11.7 against ||q|| 21.4, rel(z) 1.05e-10 only because rel(z) divides by
 * ||z||; kept as the best round by rel(z), the bounded fallback kept it too and applied it).
 * Here `copies` blocks of mass m, each squeezed between two walls (normals +x and -x, no
 * friction): touching the right wall (contact 2, approaching at v) and a gap g from the left
 * one (contact 1), so q = (v + g / h, -v) and M = (1/m) [1 -1; -1 1] per block. Its stress
 * mode d = (1, 1) has M d = 0, so z = t d (the round diverged along it) has w = q: r(z) =
 * v + g / h = ||q||_inf (usable), rel(z) ~ m (v + g / h) / (2 t) -> 0 (the data dyadic, so
 * that w = q + M t d is q exactly in double). That round is the
 * caller's candidate (pp_lcp_options.fallback_start, as peg_mlcp.c hands the sticking solve's
 * best round), Lemke has no pivot left, and the fallback must answer with its least residual,
 * not the candidate's least rel(z): each block stopped by the right wall (p_2 = m v, p_1 = 0;
 * velocity after 0), and the reported residuals those of the returned z. Dense (_i = 0) and by
 * columns (_i = 1). */
START_TEST(test_diverged_round_not_kept)
{
    enum { copies = 81, n = 2 * copies };
    const double m = 2.0, v = 0.125, gap_h = 0.0625, t = 1073741824.0; /* gap_h: g / h; 2^30 */
    double *M = calloc((size_t)n * n, sizeof *M), q[n], z[n], w[n], candidate[n];
    ck_assert(M != NULL);
    for (int k = 0; k < copies; ++k) {
        const int a = 2 * k, b = a + 1;
        M[a + (size_t)a * n] = M[b + (size_t)b * n] = 1.0 / m;
        M[a + (size_t)b * n] = M[b + (size_t)a * n] = -1.0 / m;
        q[a] = v + gap_h;
        q[b] = -v;
        candidate[a] = candidate[b] = t;
    }
    columns cols;
    to_columns(n, M, &cols);
    const double q_norm = pp_lcp_inf_norm(n, q);
    pp_lcp_result check;
    memset(&check, 0, sizeof check);
    pp_lcp_csc_residual(&cols.A, q, candidate, NULL, &check);
    ck_assert_double_le(check.relative_residual, 1e-9); /* the trap: rel(z) passes */
    ck_assert_double_eq(check.residual, q_norm); /* usable: r(z) <= ||q||_inf */
    pp_lcp_workspace *ws = NULL;
    ck_assert_int_eq(pp_lcp_workspace_create(n, &ws), PP_OK);
    pp_lcp_options o = pp_lcp_options_default();
    pp_lcp_budget spent = pp_lcp_budget_start(0.0, 0); /* the step's pivots all spent */
    o.budget = &spent;
    o.fallback_start = candidate;
    unsigned char basis[n];
    memset(basis, 0, sizeof basis);
    pp_lcp_result r;
    memset(&r, 0, sizeof r);
    if (_i) pp_lcp_solve_csc(ws, &cols.A, q, &o, basis, z, &r);
    else pp_lcp_solve(ws, n, M, q, &o, basis, z, &r);
    ck_assert_int_eq(r.fallback, 1);
    memset(&check, 0, sizeof check);
    pp_lcp_csc_residual(&cols.A, q, z, w, &check);
    ck_assert_double_eq(r.residual, check.residual); /* the reported are the returned z's */
    ck_assert_double_eq(r.relative_residual, check.relative_residual);
    ck_assert_double_le(check.residual, 1e-9 * q_norm);
    for (int k = 0; k < copies; ++k) {
        const double after = v + (z[2 * k] - z[2 * k + 1]) / m; /* toward the right wall */
        ck_assert_double_le(fabs(after), 1e-9 * v);
        ck_assert_double_le(z[2 * k] + z[2 * k + 1], 1.0 + m * v); /* not along d */
    }
    printf("check_sticking: diverged round (%s): candidate r %.3g rel %.3g, answer r %.3g "
           "rel %.3g\n", _i ? "columns" : "dense", q_norm, q_norm / (q_norm + 2.0 * t / m),
           check.residual, check.relative_residual);
    pp_lcp_workspace_destroy(ws);
    free_columns(&cols);
    free(M);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sticking");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_plate_on_supports, 0, 2); /* _i: lemke_only */
    tcase_add_loop_test(tc, test_box_sticks_on_incline, 0, 2); /* _i: lemke_only */
    tcase_add_loop_test(tc, test_box_slides_on_steep_incline, 0, 2); /* _i: lemke_only */
    tcase_add_loop_test(tc, test_box_slides_among_resting, 0, 2); /* _i: lemke_only */
    tcase_add_test(tc, test_kept_answer_refused);
    tcase_add_test(tc, test_kept_answer_set_joins);
    tcase_add_test(tc, test_forget_answers);
    tcase_add_test(tc, test_given_start);
    tcase_add_test(tc, test_stalled_warm_round_solved_cold);
    tcase_add_test(tc, test_deadline_passed);
    tcase_add_loop_test(tc, test_best_round_starts_fallback, 0, 2); /* _i: lemke_only */
    tcase_add_loop_test(tc, test_diverged_round_not_kept, 0, 2); /* _i: by columns */
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
