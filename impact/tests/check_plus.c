/*
 * PLUS validation cases V1-V6 of docs/references.md, each also checked against the V7
 * invariants (fx_check_invariants), plus the COR function and boundary validation.
 */
#include "plus_fixtures.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI_ 3.14159265358979323846
#define TOL_TABLE 2e-4  /* absolute, for numbers given to 4 decimals (Table A1) */
#define TOL_EXACT 1e-12 /* relative, for closed-form results */

static pp_plus_contact_params params(double mu, double e_min, double v_cap, double v_pl)
{
    pp_plus_contact_params p = {mu, e_min, v_cap, v_pl};
    return p;
}

static pp_plus_config paper_config(double theta_max)
{
    pp_plus_config c = pp_plus_config_default();
    c.v_transition = 0.1;
    c.theta_max = theta_max;
    return c;
}

static void assert_vec_near(const double *got, const double *want, int n, double tol,
                            const char *what)
{
    for (int i = 0; i < n; ++i)
        ck_assert_msg(fabs(got[i] - want[i]) <= tol, "%s[%d] = %.6f, expected %.6f (tol %g)", what,
                      i, got[i], want[i], tol);
}

static void silence(void) { pp_set_log_hook(pp_log_discard, NULL); }

/* ----------------------------------------------------------------------------------- */
/* V1: Newton's cradle (paper Ex. 3, Table 2)                                           */
/* ----------------------------------------------------------------------------------- */

START_TEST(test_v1_newtons_cradle)
{
    /* Ball 1 at x = 2 moves at -2 m/s towards balls 2..5 at x = 1.5, 1, 0.5, 0. Contact
     * k joins ball k+1 (side A) and ball k (side B), normal +x from A to B. */
    fx_scene s;
    fx_scene_init(&s);
    const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const double Iball[3] = {0.025, 0.025, 0.025}; /* 2/5 m r^2, r = 0.25 */
    int ball[5];
    for (int b = 0; b < 5; ++b) {
        const double c[3] = {2.0 - 0.5 * b, 0, 0};
        const double v[3] = {b == 0 ? -2.0 : 0.0, 0, 0}, w[3] = {0, 0, 0};
        ball[b] = fx_add_body(&s, 1.0, Iball, I3, c, v, w);
    }
    const double frame[9] = {0, 1, 0, 0, 0, 1, 1, 0, 0}; /* rows t1 = y, t2 = z, n = x */
    for (int k = 0; k < 4; ++k) {
        const double p[3] = {1.75 - 0.5 * k, 0, 0};
        fx_add_contact(&s, ball[k + 1], ball[k], p, frame, params(0.0, 1.0, 0.01, 0.1));
    }
    fx_scene_finish(&s);
    pp_plus_config cfg = paper_config(0.01);
    fx_run run;
    fx_solve(&s, &cfg, &run);
    fx_check_invariants(&s, &cfg, &run, 0, "V1");

    /* rounds COOO, ECOO, OECO, OOEC, OOOE */
    static const char *expected[5] = {"COOO", "ECOO", "OECO", "OOEC", "OOOE"};
    ck_assert_int_eq(run.result.rounds, 5);
    ck_assert_int_eq(run.trace.round_count, 5);
    for (int q = 0; q < 5; ++q) {
        char got[5] = {0};
        const int it = run.trace.rounds[q].first_interval;
        ck_assert_int_eq(run.trace.rounds[q].interval_count, 1);
        for (int k = 0; k < 4; ++k) {
            const pp_plus_contact_record *c = fx_record(&run, 4, it, k);
            got[k] = c->normal == PP_PLUS_COMPRESSING ? 'C'
                     : c->normal == PP_PLUS_EXPANDING ? 'E'
                     : c->normal == PP_PLUS_OBSERVING ? 'O' : 'R';
        }
        ck_assert_str_eq(got, expected[q]);
    }
    const double want[5] = {0, 0, 0, 0, -2};
    for (int b = 0; b < 5; ++b)
        ck_assert_msg(fabs(run.nu_end[6 * b] - want[b]) <= 1e-12, "ball %d v = %g", b + 1,
                      run.nu_end[6 * b]);
    ck_assert(fabs(fx_kinetic_energy(&s, run.nu_end) - 2.0) <= 1e-12);
    ck_assert(fabs(run.result.kinetic_energy_change) <= 1e-12);
    fx_run_free(&run);
}
END_TEST

/* ----------------------------------------------------------------------------------- */
/* V2: single-point brick (paper Ex. 1, Table A1)                                       */
/* ----------------------------------------------------------------------------------- */

static const double BRICK_DIMS[3] = {0.4, 0.6, 0.8};

/* The brick of Ex. 1: R = Rx(pi/4) Ry(pi/6) body-fixed; the contact is the lowest point
 * of the lowest corner sphere (r = 0.1). */
static void v2_scene(fx_scene *s, double mu, double e_min)
{
    double Rx[9], Ry[9], R[9];
    fx_rot_x(PI_ / 4, Rx);
    fx_rot_y(PI_ / 6, Ry);
    fx_matmul(Rx, Ry, R);
    fx_scene_init(s);
    const double c[3] = {0, 0, 0}, v[3] = {-5, 0, -5.74}, w[3] = {0, 0, 0};
    const int b = fx_add_brick(s, 2.0, BRICK_DIMS, R, c, v, w);
    double best[3] = {0, 0, 1e9};
    for (int i = 0; i < 8; ++i) {
        const double corner[3] = {(i & 1) ? 0.2 : -0.2, (i & 2) ? 0.3 : -0.3, (i & 4) ? 0.4 : -0.4};
        double p[3];
        fx_matvec(R, corner, p);
        if (p[2] < best[2]) memcpy(best, p, sizeof p);
    }
    best[2] -= 0.1;
    const double want_r[3] = {-0.02679, 0.10353, -0.62779};
    assert_vec_near(best, want_r, 3, 1e-5, "V2 contact point");
    fx_add_ground_contact(s, b, best, params(mu, e_min, 0.01, 0.1));
    fx_scene_finish(s);
}

typedef struct v2_row {
    double mu, e_min;
    int intervals, compression_intervals;
    double v_com[3], w[3], v_cp[3], pi[3], ke;
} v2_row;

static const v2_row V2_TABLE[3] = {
    {0.125, 0.392, 120, 104, {-4.3563, -0.5740, 1.6316}, {6.4759, -4.8771, 1.0095},
     {-1.3990, 3.4645, 2.1713}, {1.2874, -1.1480, 14.7432}, 25.5333},
    {0.225, 0.387, 131, 129, {-4.0785, -1.2087, 2.1774}, {1.9281, -6.5074, 0.0663},
     {0, 0, 2.2027}, {1.8431, -2.4173, 15.8348}, 25.3333},
    {0.325, 0.373, 116, -1, {-4.0784, -1.2088, 2.1782}, {1.9283, -6.5074, 0.0663},
     {0, 0, 2.2034}, {1.8431, -2.4175, 15.8363}, 25.3366},
};

START_TEST(test_v2_single_point_brick)
{
    const v2_row *row = &V2_TABLE[_i];
    fx_scene s;
    v2_scene(&s, row->mu, row->e_min);
    ck_assert(fabs(fx_kinetic_energy(&s, s.nu) - 57.9476) <= 1e-4);
    pp_plus_config cfg = paper_config(0.01);
    fx_run run;
    fx_solve(&s, &cfg, &run);
    fx_check_invariants(&s, &cfg, &run, 0, "V2");

    ck_assert_int_eq(run.result.rounds, 2);
    ck_assert_int_eq(run.result.intervals, row->intervals);
    if (row->compression_intervals > 0)
        ck_assert_int_eq(run.trace.rounds[0].interval_count, row->compression_intervals);
    assert_vec_near(run.nu_end, row->v_com, 3, TOL_TABLE, "v_COM");
    assert_vec_near(run.nu_end + 3, row->w, 3, TOL_TABLE, "omega");
    assert_vec_near(run.v_end, row->v_cp, 3, TOL_TABLE, "contact velocity");
    assert_vec_near(run.impulse, row->pi, 3, TOL_TABLE, "sum pi");
    ck_assert_msg(fabs(fx_kinetic_energy(&s, run.nu_end) - row->ke) <= TOL_TABLE, "KE %.5f",
                  fx_kinetic_energy(&s, run.nu_end));

    /* Poisson (2.4): sum pi_z(expansion) = e_min sum pi_z(compression); sliding
     * intervals sit on the cone to round-off. */
    double pz[2] = {0, 0};
    for (int q = 0; q < 2; ++q) {
        const pp_plus_round_record *rr = &run.trace.rounds[q];
        for (int it = rr->first_interval; it < rr->first_interval + rr->interval_count; ++it) {
            const pp_plus_contact_record *c = fx_record(&run, 1, it, 0);
            pz[q] += c->impulse[2];
            if (c->friction == PP_PLUS_SLIDING)
                ck_assert(fabs(hypot(c->impulse[0], c->impulse[1]) - row->mu * c->impulse[2]) <=
                          1e-13 * (1.0 + c->impulse[2]));
        }
    }
    ck_assert_msg(fabs(pz[1] / pz[0] - row->e_min) <= TOL_EXACT, "expansion/compression %.15f",
                  pz[1] / pz[0]);
    if (_i == 0) {
        ck_assert(fabs(pz[0] - 10.59136) <= 1e-4 && fabs(pz[1] - 4.15181) <= 1e-4);
    }
    /* Tangential velocity at the end of compression. */
    const pp_plus_round_record *r0 = &run.trace.rounds[0];
    const pp_plus_contact_record *last = fx_record(&run, 1, r0->first_interval + r0->interval_count - 1, 0);
    if (_i == 0) {
        const double want[2] = {-1.8101, 3.0416};
        assert_vec_near(last->velocity_end, want, 2, TOL_TABLE, "v_t end of compression");
    } else if (_i == 1) {
        const double want[2] = {-0.1176, 0.4052};
        assert_vec_near(last->velocity_end, want, 2, TOL_TABLE, "v_t end of compression");
    }
    fx_run_free(&run);
}
END_TEST

/* Fig. 10: 116 / 11 / 8 intervals at theta_max = 0.01 / 0.15 / 0.25 rad (mu = 0.325),
 * and 4 / 8 / 7 at Simbody's 30 degrees; results converge as theta_max -> 0 (V7). */
START_TEST(test_v2_theta_max_interval_counts)
{
    static const double thetas[4] = {0.01, 0.15, 0.25, PI_ / 6};
    static const int want_325[4] = {116, 11, 8, 7};
    for (int t = 0; t < 4; ++t) {
        fx_scene s;
        v2_scene(&s, 0.325, 0.373);
        pp_plus_config cfg = paper_config(thetas[t]);
        fx_run run;
        fx_solve(&s, &cfg, &run);
        fx_check_invariants(&s, &cfg, &run, 0, "V2 theta");
        ck_assert_msg(run.result.intervals == want_325[t], "theta %g: %d intervals", thetas[t],
                      run.result.intervals);
        fx_run_free(&run);
    }
    /* mu = 0.125 / 0.225 at 30 degrees: 4 / 8 intervals; mu = 0.125 v_COM close to
     * (-4.3491, -0.4963, 1.5481). */
    static const double mus[2] = {0.125, 0.225}, es[2] = {0.392, 0.387};
    static const int want30[2] = {4, 8};
    for (int t = 0; t < 2; ++t) {
        fx_scene s;
        v2_scene(&s, mus[t], es[t]);
        pp_plus_config cfg = paper_config(PI_ / 6);
        fx_run run;
        fx_solve(&s, &cfg, &run);
        fx_check_invariants(&s, &cfg, &run, 0, "V2 30deg");
        ck_assert_msg(run.result.intervals == want30[t], "mu %g: %d intervals", mus[t],
                      run.result.intervals);
        if (t == 0) {
            const double want[3] = {-4.3491, -0.4963, 1.5481};
            assert_vec_near(run.nu_end, want, 3, TOL_TABLE, "v_COM at 30 deg");
        }
        fx_run_free(&run);
    }
}
END_TEST

/* ----------------------------------------------------------------------------------- */
/* V3: four-point brick (Ex. 2 style, analytic)                                         */
/* ----------------------------------------------------------------------------------- */

/* Axis-aligned brick rotated by `yaw` about z (the whole scene), contacts at the four
 * bottom corners (+-0.2, +-0.3, -0.5) listed in the order `perm`. */
static void v3_scene(fx_scene *s, double yaw, const int perm[4])
{
    double R[9];
    fx_rot_z(yaw, R);
    fx_scene_init(s);
    const double c[3] = {0, 0, 0}, v0[3] = {-2, 0, -8.84}, w[3] = {0, 0, 0};
    double v[3];
    fx_matvec(R, v0, v);
    const int b = fx_add_brick(s, 2.0, BRICK_DIMS, R, c, v, w);
    static const double corners[4][3] = {{-0.2, -0.3, -0.5}, {-0.2, 0.3, -0.5},
                                         {0.2, -0.3, -0.5}, {0.2, 0.3, -0.5}};
    for (int i = 0; i < 4; ++i) {
        double p[3];
        fx_matvec(R, corners[perm[i]], p);
        fx_add_ground_contact(s, b, p, params(0.2, 0.414, 0.01, 0.1));
    }
    fx_scene_finish(s);
}

START_TEST(test_v3_four_point_brick)
{
    static const int identity[4] = {0, 1, 2, 3};
    fx_scene s;
    v3_scene(&s, 0.0, identity);
    ck_assert(fabs(fx_kinetic_energy(&s, s.nu) - 82.1456) <= 1e-4);
    pp_plus_config cfg = paper_config(0.01);
    fx_run run;
    fx_solve(&s, &cfg, &run);
    fx_check_invariants(&s, &cfg, &run, 0, "V3");

    /* Compression: one sliding interval, pi_z 3:1 between x = -0.2 and x = +0.2
     * (pi_zL - pi_zR = (mu c / a) S, S = m |v_z| / 2), pi_x = mu pi_z. */
    ck_assert_int_eq(run.result.rounds, 2);
    ck_assert_int_eq(run.trace.rounds[0].interval_count, 1);
    const double S = 2.0 * 8.84 / 2.0, dL = 0.2 * 0.5 / 0.2 * S;
    const double pzL = 0.5 * (S + dL), pzR = 0.5 * (S - dL); /* per corner */
    for (int k = 0; k < 4; ++k) {
        const pp_plus_contact_record *c = fx_record(&run, 4, 0, k);
        const double want = k < 2 ? pzL : pzR;
        ck_assert_int_eq(c->friction, PP_PLUS_SLIDING);
        ck_assert_msg(fabs(c->impulse[2] - want) <= 1e-9 * want, "compression pi_z[%d] = %.10f, want %.10f",
                      k, c->impulse[2], want);
        ck_assert(fabs(c->impulse[0] - 0.2 * c->impulse[2]) <= 1e-12 * want);
        ck_assert(fabs(c->velocity_end[0] + 0.232) <= 1e-9);
    }
    ck_assert(fabs(pzL - 6.63) <= 1e-9 && fabs(pzR - 2.21) <= 1e-9);

    /* Expansion: a sliding interval ending at alpha_CP = 0.232 / (mu e 8.84), then one
     * rolling interval for all four points. */
    const pp_plus_round_record *r1 = &run.trace.rounds[1];
    ck_assert_int_eq(r1->interval_count, 2);
    const pp_plus_interval_record *i1 = &run.trace.intervals[r1->first_interval];
    ck_assert_int_eq(i1->limit, PP_PLUS_LIMIT_CLOSEST_POINT);
    ck_assert_msg(fabs(i1->alpha - 0.232 / (0.2 * 0.414 * 8.84)) <= 1e-9, "alpha_CP %.9f", i1->alpha);
    ck_assert(fabs(i1->alpha - 0.316961) <= 1e-6);
    /* The last interval ends with zero slip at all four points. Its min-norm rolling
     * solution spreads friction equally (0.1973 per point), which exceeds the cone at
     * the lightly loaded x = +0.2 points (mu pi_z = 0.1250), so Algorithm 1 moves those
     * two to impending slip (on the cone, zero end slip) and the x = -0.2 points roll.
     * The final state is the same as with four rolling points (the analytic V3 answer
     * assumed rolling at all four points; the active-set rule gives this). */
    for (int k = 0; k < 4; ++k) {
        const pp_plus_contact_record *c = fx_record(&run, 4, r1->first_interval + 1, k);
        ck_assert_int_eq(c->friction, k < 2 ? PP_PLUS_ROLLING : PP_PLUS_IMPENDING);
        ck_assert(hypot(c->velocity_end[0], c->velocity_end[1]) <= 1e-12);
    }

    /* Final state. */
    const double vcom[3] = {0.3947, 0, 0.414 * 8.84}, w[3] = {0, 0.7894, 0};
    assert_vec_near(run.nu_end, vcom, 3, 1e-4, "V3 v_COM");
    ck_assert(fabs(run.nu_end[2] - 3.65976) <= 1e-9);
    assert_vec_near(run.nu_end + 3, w, 3, 1e-4, "V3 omega");
    for (int k = 0; k < 4; ++k) {
        ck_assert(fabs(run.v_end[3 * k]) <= 1e-12 && fabs(run.v_end[3 * k + 1]) <= 1e-12);
        ck_assert(fabs(run.v_end[3 * k + 2] - (k < 2 ? 3.81764 : 3.50188)) <= 1e-4);
    }
    ck_assert(fabs(fx_kinetic_energy(&s, run.nu_end) - 13.5912) <= 1e-4);
    /* Mirror pairs in y identical; no v_y, w_x, w_z. */
    for (int c = 0; c < 3; ++c) {
        const double scale = fabs(run.impulse[c]) + 1e-300;
        ck_assert(fabs(run.impulse[c] - run.impulse[3 + c]) <= 1e-12 * (1.0 + scale));
        ck_assert(fabs(run.impulse[6 + c] - run.impulse[9 + c]) <= 1e-12 * (1.0 + scale));
    }
    ck_assert(fabs(run.nu_end[1]) <= 1e-12 && fabs(run.nu_end[3]) <= 1e-12 && fabs(run.nu_end[5]) <= 1e-12);
    fx_run_free(&run);
}
END_TEST

/* Rotating the scene about z by 30 degrees rotates the result; permuting the contacts
 * permutes the impulses (min-norm least squares is order-free). */
START_TEST(test_v3_frame_and_order_invariance)
{
    static const int identity[4] = {0, 1, 2, 3}, perm[4] = {3, 0, 2, 1};
    pp_plus_config cfg = paper_config(0.01);
    fx_scene s0, s1, s2;
    fx_run r0, r1, r2;
    v3_scene(&s0, 0.0, identity);
    v3_scene(&s1, PI_ / 6, identity);
    v3_scene(&s2, 0.0, perm);
    fx_solve(&s0, &cfg, &r0);
    fx_solve(&s1, &cfg, &r1);
    fx_solve(&s2, &cfg, &r2);
    fx_check_invariants(&s1, &cfg, &r1, 0, "V3 rotated");
    fx_check_invariants(&s2, &cfg, &r2, 0, "V3 permuted");
    double R[9], want[3];
    fx_rot_z(PI_ / 6, R);
    fx_matvec(R, r0.nu_end, want);
    assert_vec_near(r1.nu_end, want, 3, 1e-10, "rotated v_COM");
    fx_matvec(R, r0.nu_end + 3, want);
    assert_vec_near(r1.nu_end + 3, want, 3, 1e-10, "rotated omega");
    for (int k = 0; k < 4; ++k) {
        double t[3] = {r0.impulse[3 * k], r0.impulse[3 * k + 1], r0.impulse[3 * k + 2]};
        fx_matvec(R, t, want);
        assert_vec_near(r1.impulse + 3 * k, want, 3, 1e-10, "rotated impulse");
        assert_vec_near(r2.impulse + 3 * k, r0.impulse + 3 * perm[k], 3, 1e-12, "permuted impulse");
    }
    ck_assert_int_eq(r0.result.intervals, r1.result.intervals);
    ck_assert_int_eq(r0.result.intervals, r2.result.intervals);
    fx_run_free(&r0);
    fx_run_free(&r1);
    fx_run_free(&r2);
}
END_TEST

/* ----------------------------------------------------------------------------------- */
/* V4: redundant frictionless flat drop                                                 */
/* ----------------------------------------------------------------------------------- */

START_TEST(test_v4_redundant_flat_drop)
{
    const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    fx_scene s;
    fx_scene_init(&s);
    const double c[3] = {0, 0, 0}, v[3] = {0, 0, -3}, w[3] = {0, 0, 0};
    const int b = fx_add_brick(&s, 2.0, BRICK_DIMS, I3, c, v, w);
    for (int i = 0; i < 4; ++i) {
        const double p[3] = {(i & 1) ? 0.2 : -0.2, (i & 2) ? 0.3 : -0.3, -0.4};
        fx_add_ground_contact(&s, b, p, params(0.0, 0.5, 0.01, 0.1));
    }
    fx_scene_finish(&s);
    pp_plus_config cfg = paper_config(0.01);
    fx_run run;
    fx_solve(&s, &cfg, &run);
    fx_check_invariants(&s, &cfg, &run, 0, "V4");
    for (int k = 0; k < 4; ++k) {
        ck_assert_msg(fabs(run.impulse[3 * k + 2] - 2.25) <= 1e-12, "pi_z[%d] = %.15f", k,
                      run.impulse[3 * k + 2]);
        ck_assert(fabs(run.v_end[3 * k + 2] - 1.5) <= 1e-12);
        /* every round spreads the load: 0.75 in expansion, 1.5 in compression */
        ck_assert(fabs(fx_record(&run, 4, 0, k)->impulse[2] - 1.5) <= 1e-12);
        ck_assert(fabs(fx_record(&run, 4, 1, k)->impulse[2] - 0.75) <= 1e-12);
    }
    ck_assert(fabs(run.nu_end[2] - 1.5) <= 1e-12);
    for (int i = 3; i < 6; ++i) ck_assert(fabs(run.nu_end[i]) <= 1e-12);
    fx_run_free(&run);
}
END_TEST

/* ----------------------------------------------------------------------------------- */
/* V5: impending slip (Eq 2.9)                                                          */
/* ----------------------------------------------------------------------------------- */

START_TEST(test_v5_impending_slip)
{
    const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const double Ib[3] = {0.167, 0.133, 0.0867};
    fx_scene s;
    fx_scene_init(&s);
    const double c[3] = {0, 0, 0}, v[3] = {0, 0, -2}, w[3] = {0, 0, 0};
    const int b = fx_add_body(&s, 2.0, Ib, I3, c, v, w);
    const double p[3] = {0.25, -0.3, -0.45};
    fx_add_ground_contact(&s, b, p, params(0.05, 0.0, 0.01, 0.1));
    fx_scene_finish(&s);
    pp_plus_config cfg = paper_config(0.01);
    fx_run run;
    fx_solve(&s, &cfg, &run);
    fx_check_invariants(&s, &cfg, &run, 0, "V5");

    ck_assert_int_eq(run.result.rounds, 1);
    ck_assert_int_eq(run.result.intervals, 1);
    const pp_plus_contact_record *rec = fx_record(&run, 1, 0, 0);
    ck_assert_int_eq(rec->friction, PP_PLUS_IMPENDING);
    const double want_pi[3] = {-0.0492, 0.0483, 1.3790}, want_v[3] = {1.0577, -1.0397, 0};
    assert_vec_near(run.impulse, want_pi, 3, 1e-4, "V5 pi");
    assert_vec_near(run.v_end, want_v, 3, 1e-4, "V5 v_end");
    ck_assert(fabs(run.result.kinetic_energy_change + 1.4301) <= 1e-4);
    /* Friction opposes the end slip and sits on the cone (Simbody's sign fails this). */
    const double pt = hypot(run.impulse[0], run.impulse[1]);
    const double vt = hypot(run.v_end[0], run.v_end[1]);
    ck_assert(fabs(pt - 0.05 * run.impulse[2]) <= 1e-12);
    ck_assert((run.impulse[0] * run.v_end[0] + run.impulse[1] * run.v_end[1]) / (pt * vt) <= -1.0 + 1e-10);
    fx_run_free(&run);
}
END_TEST

/* ----------------------------------------------------------------------------------- */
/* V6: COR function and capture                                                          */
/* ----------------------------------------------------------------------------------- */

START_TEST(test_v6_cor_function)
{
    const pp_plus_contact_params p = params(0.0, 0.4, 0.01, 0.1);
    ck_assert(pp_plus_cor(&p, -1.0) == 0.0);
    ck_assert(pp_plus_cor(&p, 0.0) == 0.0);
    ck_assert(pp_plus_cor(&p, 0.005) == 0.0);
    ck_assert(pp_plus_cor(&p, 0.01) == 0.0);
    ck_assert(fabs(pp_plus_cor(&p, 0.0100001) - (1.0 - 0.6 * 0.100001)) <= 1e-15);
    ck_assert(fabs(pp_plus_cor(&p, 0.05) - 0.7) <= 1e-15);
    ck_assert(pp_plus_cor(&p, 0.1) == 0.4);
    ck_assert(pp_plus_cor(&p, 5.0) == 0.4);
}
END_TEST

/* A single frictionless unit point: v_end = e v_approach, exact rest below capture. */
START_TEST(test_v6_capture_and_restitution)
{
    static const double speeds[4] = {0.005, 0.05, 0.1, 3.0};
    static const double want_e[4] = {0.0, 0.7, 0.4, 0.4};
    const double A[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const pp_plus_contact_params p = params(0.0, 0.4, 0.01, 0.1);
    const pp_plus_config cfg = paper_config(0.01);
    pp_plus_solver *solver = NULL;
    ck_assert_int_eq(pp_plus_solver_create(1, &solver), PP_OK);
    for (int i = 0; i < 4; ++i) {
        const double v[3] = {0, 0, -speeds[i]};
        double pi[3], dv[3];
        pp_plus_result r;
        memset(&r, 0, sizeof r);
        r.impulse = pi;
        r.velocity_change = dv;
        pp_plus_problem prob = {1, A, v, &p};
        ck_assert_int_eq(pp_plus_solve(solver, &cfg, &prob, &r), PP_OK);
        const double v_end = v[2] + dv[2];
        ck_assert_msg(fabs(v_end - want_e[i] * speeds[i]) <= 1e-15, "speed %g: v_end %.17g", speeds[i], v_end);
        ck_assert(fabs(pi[2] - (1.0 + want_e[i]) * speeds[i]) <= 1e-15);
        ck_assert_int_eq(r.rounds, want_e[i] > 0.0 ? 2 : 1);
        if (i == 0) ck_assert(v_end == 0.0); /* captured: exact rest */
        ck_assert(r.kinetic_energy_change <= 0.0);
    }
    pp_plus_solver_destroy(solver);
}
END_TEST

/* ----------------------------------------------------------------------------------- */
/* Boundary validation                                                                  */
/* ----------------------------------------------------------------------------------- */

START_TEST(test_input_validation)
{
    silence();
    const double A[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const double v[3] = {0, 0, -1};
    pp_plus_contact_params p = params(0.5, 0.5, 0.01, 0.1);
    double pi[3] = {7, 7, 7};
    pp_plus_result r;
    memset(&r, 0, sizeof r);
    r.impulse = pi;
    pp_plus_solver *solver = NULL;
    ck_assert_int_eq(pp_plus_solver_create(0, &solver), PP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pp_plus_solver_create(1, NULL), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_plus_solver_create(1, &solver), PP_OK);
    pp_plus_problem prob = {1, A, v, &p};

    ck_assert_int_eq(pp_plus_solve(NULL, NULL, &prob, &r), PP_ERR_NULL_ARGUMENT);
    ck_assert_int_eq(pp_plus_solve(solver, NULL, NULL, &r), PP_ERR_NULL_ARGUMENT);
    prob.contact_count = 2;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    prob.contact_count = -1;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    prob.contact_count = 1;

    p.mu = -0.1;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    p.mu = 0.5;
    p.e_min = 1.5;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    p.e_min = -0.1;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    p.e_min = 0.5;
    p.v_plastic = 0.001;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    p.v_plastic = 0.1;

    const double vnan[3] = {0, NAN, -1};
    prob.velocity = vnan;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    prob.velocity = v;

    const double Ansym[9] = {1, 0.5, 0, 0, 1, 0, 0, 0, 1};
    prob.delassus = Ansym;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    const double Azero[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};
    prob.delassus = Azero;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    const double Anotpsd[9] = {1, 2, 0, 2, 1, 0, 0, 0, 1};
    prob.delassus = Anotpsd;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    const double Ainf[9] = {1, 0, 0, 0, 1, 0, 0, 0, INFINITY};
    prob.delassus = Ainf;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    prob.delassus = A;

    pp_plus_config cfg = pp_plus_config_default();
    cfg.theta_max = 0.0;
    ck_assert_int_eq(pp_plus_solve(solver, &cfg, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    cfg = pp_plus_config_default();
    cfg.max_rounds = 0;
    ck_assert_int_eq(pp_plus_solve(solver, &cfg, &prob, &r), PP_ERR_INVALID_ARGUMENT);
    /* rejected calls wrote nothing */
    ck_assert(pi[0] == 7 && pi[1] == 7 && pi[2] == 7);

    /* m = 0 is a no-op */
    prob.contact_count = 0;
    r.rounds = 9;
    ck_assert_int_eq(pp_plus_solve(solver, NULL, &prob, &r), PP_OK);
    ck_assert_int_eq(r.rounds, 0);
    ck_assert(r.kinetic_energy_change == 0.0);
    pp_plus_solver_destroy(solver);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

/* A ball trapped between two walls with e = 1 rattles forever at zero gap: the round
 * cap returns the best-so-far impulse, flagged, and finite. */
START_TEST(test_round_cap_is_flagged)
{
    silence();
    /* contact 0: wall at -x (normal +x into the ball); contact 1: wall at +x. */
    const double A[36] = {1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, -1,
                          0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, -1, 0, 0, 1};
    const double v[6] = {0, 0, -1, 0, 0, 1};
    const pp_plus_contact_params p[2] = {params(0.0, 1.0, 0.0, 0.0), params(0.0, 1.0, 0.0, 0.0)};
    pp_plus_config cfg = pp_plus_config_default();
    cfg.max_rounds = 7;
    double pi[6], dv[6];
    pp_plus_result r;
    memset(&r, 0, sizeof r);
    r.impulse = pi;
    r.velocity_change = dv;
    pp_plus_solver *solver = NULL;
    ck_assert_int_eq(pp_plus_solver_create(2, &solver), PP_OK);
    pp_plus_problem prob = {2, A, v, p};
    ck_assert_int_eq(pp_plus_solve(solver, &cfg, &prob, &r), PP_ERR_SOLVER);
    ck_assert(r.caps & PP_PLUS_CAP_ROUNDS);
    ck_assert_int_eq(r.rounds, 7);
    for (int i = 0; i < 6; ++i) ck_assert(isfinite(pi[i]) && isfinite(dv[i]));
    ck_assert(r.kinetic_energy_change <= 1e-12);
    pp_plus_solver_destroy(solver);
    pp_set_log_hook(NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plus");
    TCase *tc = tcase_create("validation");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_v1_newtons_cradle);
    tcase_add_loop_test(tc, test_v2_single_point_brick, 0, 3);
    tcase_add_test(tc, test_v2_theta_max_interval_counts);
    tcase_add_test(tc, test_v3_four_point_brick);
    tcase_add_test(tc, test_v3_frame_and_order_invariance);
    tcase_add_test(tc, test_v4_redundant_flat_drop);
    tcase_add_test(tc, test_v5_impending_slip);
    tcase_add_test(tc, test_v6_cor_function);
    tcase_add_test(tc, test_v6_capture_and_restitution);
    tcase_add_test(tc, test_input_validation);
    tcase_add_test(tc, test_round_cap_is_flagged);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
