/*
 * The standard contact model in Stewart–Trinkle time stepping, through ODE, against the
 * answers of docs/references.md (issue 3): box drop, resting column, incline stick/slide,
 * the ST96 spinning rod and the ST96 four balls with their Table I convergence study.
 */
#include "pegplus/pegplus.h"
#include "scenes.h"
#include "it_common.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define G 9.81
/* Overlap allowed at the end of a step: the gap is a linearised constraint (psi/h term), exact
 * for translation against a plane and second order in the rotation within a step. */
#define OVERLAP_TOL 1e-9
#define REST_SPEED 1e-6  /* references.md: at rest, max |v| < 1e-6 m/s */
#define REST_DRIFT 1e-6  /* references.md: drift < 1e-6 m over 10 s */

static void quiet(pp_log_level level, const char *message, void *user)
{
    (void)user;
    if (level >= PP_LOG_WARNING) fprintf(stderr, "pegplus: %s\n", message);
}

static void setup(void)
{
    pp_scenes_init_ode();
    pp_set_log_hook(quiet, NULL);
}

static pp_world *standard_world(const pp_scene *s, double mu)
{
    pp_config c = pp_config_default();
    c.model = PP_MODEL_STANDARD;
    c.surface.mu = mu;
    pp_world *pw = NULL;
    ck_assert_int_eq(pp_world_create(s->world, s->space, &c, &pw), PP_OK);
    return pw;
}

static double norm3(const dReal *v) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* Lowest point of a box body above z = 0 (exact: its lowest vertex). */
static double box_bottom(dBodyID b, const double lengths[3])
{
    const dReal *x = dBodyGetPosition(b), *R = dBodyGetRotation(b);
    double z = x[2];
    for (int k = 0; k < 3; ++k) z -= fabs(R[8 + k]) * 0.5 * lengths[k];
    return z;
}

/* Box drop: never below the plane by more than OVERLAP_TOL at the end of any step, never
 * moving up after the landing (no pop-up), then at rest. */
START_TEST(test_box_drop)
{
    const double unit[3] = {1, 1, 1}, h = 0.01;
    pp_scene s;
    pp_scene_box_drop(&s, 0.5);
    pp_world *pw = standard_world(&s, 0.5);
    dBodyID b = s.bodies[0];
    int landed = 0;
    double lowest = HUGE_VAL, max_up = 0.0;
    for (int i = 0; i < 300; ++i) {
        ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        double bottom = box_bottom(b, unit);
        if (bottom < lowest) lowest = bottom;
        if (pp_world_get_stats(pw)->contacts > 0 && bottom < 1e-6) landed = 1;
        if (landed && dBodyGetLinearVel(b)[2] > max_up) max_up = dBodyGetLinearVel(b)[2];
    }
    ck_assert(landed);
    ck_assert_double_ge(lowest, -OVERLAP_TOL);
    ck_assert_double_le(max_up, REST_SPEED);
    ck_assert_double_le(norm3(dBodyGetLinearVel(b)), REST_SPEED);
    ck_assert_double_le(norm3(dBodyGetAngularVel(b)), REST_SPEED);
    ck_assert_double_le(fabs(box_bottom(b, unit)), OVERLAP_TOL);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

/* 10 unit boxes released exactly touching: at rest, no drift, no overlap over 10 s at
 * h = 0.01 (where stock dWorldStep reports "LCP internal error"). */
START_TEST(test_column_of_ten_rests)
{
    const double h = 0.01;
    pp_scene s;
    pp_scene_box_column(&s, 10, 0.0);
    pp_world *pw = standard_world(&s, 0.5);
    double start[10][3];
    for (int i = 0; i < 10; ++i) memcpy(start[i], dBodyGetPosition(s.bodies[i]), sizeof start[i]);
    double worst_overlap = 0.0, worst_speed = 0.0, worst_drift = 0.0;
    int warm = 0, steps = 1000, fallbacks = 0;
    long pivots = 0;
    for (int step = 0; step < steps; ++step) {
        ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        const pp_step_stats *st = pp_world_get_stats(pw);
        fallbacks += st->lcp_fallback != 0;
        pivots += st->lcp_pivots;
        warm += st->lcp_warm_started;
        for (int i = 0; i < 10; ++i) {
            const dReal *x = dBodyGetPosition(s.bodies[i]);
            double below = i == 0 ? 0.0 : dBodyGetPosition(s.bodies[i - 1])[2] + 0.5;
            double overlap = below - (x[2] - 0.5);
            if (overlap > worst_overlap) worst_overlap = overlap;
            double v = norm3(dBodyGetLinearVel(s.bodies[i])) + norm3(dBodyGetAngularVel(s.bodies[i]));
            if (step > 10 && v > worst_speed) worst_speed = v;
            double d[3] = {x[0] - start[i][0], x[1] - start[i][1], x[2] - start[i][2]};
            if (norm3(d) > worst_drift) worst_drift = norm3(d);
        }
    }
    printf("column of 10: worst overlap %.3g m, speed %.3g m/s, drift %.3g m, warm starts %d/%d, "
           "regularised %d, pivots %ld\n", worst_overlap, worst_speed, worst_drift, warm, steps,
           fallbacks, pivots);
    ck_assert_double_le(worst_overlap, OVERLAP_TOL);
    ck_assert_double_le(worst_speed, REST_SPEED);
    ck_assert_double_le(worst_drift, REST_DRIFT);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

/* Incline (gravity tilted by theta): sticks iff tan(theta) <= mu; otherwise slides with
 * a = g (sin theta - mu cos theta). */
START_TEST(test_incline_sticks)
{
    const double h = 0.01;
    pp_scene s;
    pp_scene_incline(&s, 15.0 * M_PI / 180.0);
    pp_world *pw = standard_world(&s, 1.0);
    double x0[3];
    memcpy(x0, dBodyGetPosition(s.bodies[0]), sizeof x0);
    for (int i = 0; i < 1000; ++i) ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
    const dReal *x = dBodyGetPosition(s.bodies[0]);
    double d[3] = {x[0] - x0[0], x[1] - x0[1], x[2] - x0[2]};
    printf("incline 15 deg, mu 1: drift %.3g m over 10 s\n", norm3(d));
    ck_assert_double_le(norm3(d), REST_DRIFT);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST

START_TEST(test_incline_slides)
{
    const double h = 0.01, theta = 20.0 * M_PI / 180.0, mu = 0.2;
    const double a_exact = G * (sin(theta) - mu * cos(theta)); /* 1.5115 m/s^2 */
    pp_scene s;
    pp_scene_incline(&s, theta);
    pp_world *pw = standard_world(&s, mu);
    for (int i = 0; i < 100; ++i) ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
    double v1 = dBodyGetLinearVel(s.bodies[0])[0];
    for (int i = 0; i < 100; ++i) ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
    double v2 = dBodyGetLinearVel(s.bodies[0])[0];
    double a = (v2 - v1) / 1.0;
    printf("incline 20 deg, mu 0.2: a = %.6f m/s^2 (exact %.6f)\n", a, a_exact);
    ck_assert_double_eq_tol(a, 1.5115, 0.01 * 1.5115);
    ck_assert_double_eq_tol(a, a_exact, 1e-9 * a_exact);
    ck_assert_double_le(fabs(dBodyGetLinearVel(s.bodies[0])[1]), 1e-12);
    ck_assert_double_ge(box_bottom(s.bodies[0], (const double[3]){1, 1, 1}), -OVERLAP_TOL);
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}
END_TEST


/* ---- Stewart & Trinkle 1996 §4: the spinning rod ----------------------------------------- */

#define ROD_HEIGHT 0.9908 /* centre height giving the first impact at 0.383 s (ST96, rod) */

/* First time (s) the lowest point of the rod in free flight reaches the table: centre at
 * ROD_HEIGHT - g t^2/2, half-length 0.25 at elevation pi/6 + 4t, end radius 0.05. */
static double rod_free_flight_impact(void)
{
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < 200; ++i) {
        double t = 0.5 * (lo + hi);
        double z = ROD_HEIGHT - 0.5 * G * t * t - 0.25 * fabs(sin(M_PI / 6 + 4.0 * t)) - 0.05;
        if (z > 0.0) lo = t; else hi = t;
    }
    return hi;
}

#define ROD_SAMPLES 3200 /* 1 s at the reference step h = 0.0003125 */

typedef struct rod_run {
    double first_impact, second_impact, rest_time;
    int end_of_first;            /* +1 / -1: end (along the rod axis) that hit first */
    int separations_after_second;/* steps after the second impact with an end not pushing */
    double lowest;               /* lowest point of the rod over the run, m (>= -tol) */
    double h;
    int samples;
    double traj[ROD_SAMPLES][3]; /* (vx, vz, wy) at the end of every step: t = h (k + 1) */
} rod_run;

static void run_rod(double h, double duration, rod_run *r)
{
    memset(r, 0, sizeof *r);
    r->first_impact = r->second_impact = r->rest_time = -1.0;
    r->lowest = HUGE_VAL;
    r->h = h;
    pp_scene s;
    pp_scene_st96_rod(&s, ROD_HEIGHT);
    pp_world *pw = standard_world(&s, 0.6);
    dBodyID b = s.bodies[0];
    int steps = (int)lround(duration / h);
    for (int i = 1; i <= steps; ++i) {
        ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        double t = i * h;
        const pp_contact_info *info = NULL;
        int n = pp_world_get_contacts(pw, &info);
        const dReal *x = dBodyGetPosition(b), *R = dBodyGetRotation(b);
        double axis[3] = {R[2], R[6], R[10]};
        int pushing[2] = {0, 0};
        for (int c = 0; c < n; ++c) {
            if (info[c].normal_impulse <= 0.0) continue;
            double along = 0.0;
            for (int k = 0; k < 3; ++k) along += (info[c].position[k] - x[k]) * axis[k];
            pushing[along > 0.0] = 1;
            int end = along > 0.0 ? 1 : -1;
            if (r->first_impact < 0.0) {
                r->first_impact = t;
                r->end_of_first = end;
            } else if (r->second_impact < 0.0 && end != r->end_of_first) {
                r->second_impact = t;
            }
        }
        if (r->second_impact > 0.0 && t > r->second_impact && r->rest_time < 0.0 &&
            !(pushing[0] && pushing[1]))
            r->separations_after_second++;
        double speed = norm3(dBodyGetLinearVel(b)) + norm3(dBodyGetAngularVel(b));
        if (r->second_impact > 0.0 && r->rest_time < 0.0 && speed < REST_SPEED) r->rest_time = t;
        if (r->rest_time > 0.0) ck_assert_double_le(speed, REST_SPEED);
        double low = x[2] - 0.25 * fabs(axis[2]) - 0.05;
        if (low < r->lowest) r->lowest = low;
        if (r->samples < ROD_SAMPLES) {
            r->traj[r->samples][0] = dBodyGetLinearVel(b)[0];
            r->traj[r->samples][1] = dBodyGetLinearVel(b)[2];
            r->traj[r->samples++][2] = dBodyGetAngularVel(b)[1];
        }
    }
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}

/* ST96 Table I's velocity error: the integral over time of the inf-norm velocity difference,
 * on the reference's grid; run a's velocity over each of its steps is its end-of-step value
 * (the time stepper's velocity is constant over the step). Integrating on the fine grid, not
 * sampling at a few times, keeps an impact time that differs by one step an O(h) error. */
static double rod_velocity_error(const rod_run *a, const rod_run *ref)
{
    double e = 0.0;
    for (int j = 0; j < ref->samples; ++j) {
        int k = (int)ceil((j + 1) * ref->h / a->h - 1e-9) - 1;
        if (k >= a->samples) break;
        double m = 0.0;
        for (int c = 0; c < 3; ++c) m = fmax(m, fabs(a->traj[k][c] - ref->traj[j][c]));
        e += ref->h * m;
    }
    return e;
}

/* ST96 Figures 2-5: first impact at ~0.383 s, the other end at ~0.548 s, a short slide, then
 * rest; no chattering; the trajectory converges as h shrinks (Table I, against a reference at
 * h = 0.0003125: the paper's reference step 0.00125 is one of the runs compared here). */
START_TEST(test_st96_rod)
{
    static rod_run runs[5];
    const double hs[5] = {0.01, 0.005, 0.0025, 0.00125, 0.0003125};
    for (int i = 0; i < 5; ++i) run_rod(hs[i], 1.0, &runs[i]);
    double t_free = rod_free_flight_impact();
    for (int i = 0; i < 5; ++i) {
        const rod_run *r = &runs[i];
        printf("rod h = %.7f: impacts %.4f (free flight %.4f) and %.4f s, rest at %.4f s, "
               "separations %d, lowest %.3g m\n", hs[i], r->first_impact, t_free,
               r->second_impact, r->rest_time, r->separations_after_second, r->lowest);
        ck_assert_double_eq_tol(r->first_impact, t_free, hs[i] + 1e-9);
        /* the gap is linearised in the rotation: O(r w^2 h^2) overlap, no more */
        ck_assert_double_ge(r->lowest, -0.25 * 16.0 * hs[i] * hs[i]);
        ck_assert_double_gt(r->rest_time, r->second_impact);
    }
    const rod_run *fine = &runs[2]; /* the paper's Figure 2 step, h = 0.0025 */
    ck_assert_double_eq_tol(fine->first_impact, 0.383, 0.005);
    ck_assert_double_eq_tol(fine->second_impact, 0.548, 0.01);
    ck_assert_double_le(fine->rest_time - fine->second_impact, 0.05);
    ck_assert_int_eq(fine->separations_after_second, 0);
    double e[4];
    for (int i = 0; i < 4; ++i) e[i] = rod_velocity_error(&runs[i], &runs[4]);
    printf("rod velocity error vs h = 0.0003125: %.4f %.4f %.4f %.4f (paper, vs 0.00125: "
           "0.3523 0.1657 0.0700 -)\n", e[0], e[1], e[2], e[3]);
    for (int i = 1; i < 4; ++i) ck_assert_double_lt(e[i], e[i - 1]);
}
END_TEST

/* ---- Stewart & Trinkle 1996 §4: four balls ----------------------------------------------- */

#define BALLS_DURATION 1.0
#define BALLS_SAMPLES 801 /* t = 0, 0.00125, ... 1.0: the finest grid */

typedef struct balls_run {
    double table_hit, row_hit;
    double lowest_gap;                   /* min over steps of ball-ball and ball-table gaps */
    double state[BALLS_SAMPLES][24 + 12];/* (v, w) x 4 then x x 4, at the samples reached */
    int stride;                          /* samples per step of this run */
} balls_run;

static void run_balls(double h, balls_run *r)
{
    memset(r, 0, sizeof *r);
    r->table_hit = r->row_hit = -1.0;
    r->lowest_gap = HUGE_VAL;
    pp_scene s;
    pp_scene_st96_balls(&s);
    pp_world *pw = standard_world(&s, 0.4);
    int steps = (int)lround(BALLS_DURATION / h);
    r->stride = (int)lround(h / 0.00125);
    for (int i = 0; i <= steps; ++i) {
        if (i > 0) ck_assert_int_eq(pp_world_step(pw, h), PP_OK);
        double t = i * h;
        const pp_contact_info *info = NULL;
        int n = i > 0 ? pp_world_get_contacts(pw, &info) : 0;
        for (int c = 0; c < n; ++c) {
            if (info[c].normal_impulse <= 0.0) continue;
            int ground = info[c].g1 == s.ground || info[c].g2 == s.ground;
            int first = info[c].g1 == s.geoms[0] || info[c].g2 == s.geoms[0];
            if (ground && first && r->table_hit < 0.0) r->table_hit = t;
            if (!ground && first && r->row_hit < 0.0) r->row_hit = t;
        }
        double *row = r->state[i * r->stride];
        for (int b = 0; b < 4; ++b) {
            memcpy(&row[6 * b], dBodyGetLinearVel(s.bodies[b]), 3 * sizeof(double));
            memcpy(&row[6 * b + 3], dBodyGetAngularVel(s.bodies[b]), 3 * sizeof(double));
            memcpy(&row[24 + 3 * b], dBodyGetPosition(s.bodies[b]), 3 * sizeof(double));
            const dReal *xb = dBodyGetPosition(s.bodies[b]);
            r->lowest_gap = fmin(r->lowest_gap, xb[2] - 0.1);
            for (int o = b + 1; o < 4; ++o) {
                const dReal *xo = dBodyGetPosition(s.bodies[o]);
                double d[3] = {xb[0] - xo[0], xb[1] - xo[1], xb[2] - xo[2]};
                r->lowest_gap = fmin(r->lowest_gap, norm3(d) - 0.2);
            }
        }
    }
    pp_world_destroy(pw);
    pp_scene_destroy(&s);
}

/* ST96 Table I measures: velocity error = integral of ||v_h - v||_inf dt over the run (24
 * velocity components), position error = sup over the run of ||x_h - x||_inf. */
static void balls_errors(const balls_run *a, const balls_run *ref, double h, double *ev, double *ex)
{
    *ev = *ex = 0.0;
    for (int k = 0; k < BALLS_SAMPLES; k += a->stride) {
        double mv = 0.0, mx = 0.0;
        for (int j = 0; j < 24; ++j) mv = fmax(mv, fabs(a->state[k][j] - ref->state[k][j]));
        for (int j = 24; j < 36; ++j) mx = fmax(mx, fabs(a->state[k][j] - ref->state[k][j]));
        if (k > 0) *ev += h * mv;
        *ex = fmax(*ex, mx);
    }
}

START_TEST(test_st96_balls)
{
    static balls_run runs[5];
    const double hs[5] = {0.02, 0.01, 0.005, 0.0025, 0.00125};
    const double paper_v[4] = {0.5050, 0.3523, 0.1657, 0.0700};
    const double paper_x[4] = {0.2505, 0.2015, 0.0838, 0.0298};
    for (int i = 0; i < 5; ++i) {
        run_balls(hs[i], &runs[i]);
        printf("balls h = %.5f: table hit %.4f s, row hit %.4f s, lowest gap %.3g m\n", hs[i],
               runs[i].table_hit, runs[i].row_hit, runs[i].lowest_gap);
        ck_assert_double_ge(runs[i].lowest_gap, -OVERLAP_TOL);
    }
    ck_assert_double_eq_tol(runs[4].table_hit, sqrt(2.0 * 0.9 / G), 0.00125 + 1e-9);
    ck_assert_double_eq_tol(runs[4].table_hit, 0.42, 0.01);
    ck_assert_double_eq_tol(runs[4].row_hit, 0.59, 0.01);
    double ev[4], ex[4];
    printf("Table I (ours vs paper), errors against h = 0.00125:\n");
    for (int i = 0; i < 4; ++i) {
        balls_errors(&runs[i], &runs[4], hs[i], &ev[i], &ex[i]);
        printf("  h = %.4f  velocity %.4f (%.4f)  position %.4f (%.4f)\n", hs[i], ev[i],
               paper_v[i], ex[i], paper_x[i]);
    }
    for (int i = 0; i < 4; ++i) {
        /* same order of magnitude as the paper's */
        ck_assert_double_lt(ev[i], 10.0 * paper_v[i]);
        ck_assert_double_gt(ev[i], 0.1 * paper_v[i]);
        ck_assert_double_lt(ex[i], 10.0 * paper_x[i]);
    }
    /* roughly first order: halving h three times divides the error by well over 2 */
    ck_assert_double_lt(ev[3], ev[0] / 3.0);
    ck_assert_double_lt(ex[3], ex[0] / 3.0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("standard_model");
    TCase *tc = tcase_create("scenes");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_box_drop);
    tcase_add_test(tc, test_column_of_ten_rests);
    tcase_add_test(tc, test_incline_sticks);
    tcase_add_test(tc, test_incline_slides);
    tcase_add_test(tc, test_st96_rod);
    tcase_add_test(tc, test_st96_balls);
    suite_add_tcase(s, tc);
    return pp_it_run(s);
}
