/*
 * PEG's sets reduced to their primaries (contact/src/peg_screen.c pp_peg_primaries_island): a
 * large PEG island with I sets answered through the sticking solve of its primaries' LCP,
 * every slack completed at the answer's velocities, the answer checked on the island's own
 * PEG LCP. The sticking solve's threshold is lowered to this island's size
 * (pp_peg_sticking_min_n).
 *
 * The scene (check_load_sharing_large.c's plate): a rigid plate of mass m on a 7 x 7 grid of
 * supports (static ground, normal +z, gap 0), symmetric about its centre of mass, free
 * velocity v* = (delta, 0, -g h). Some supports are I sets: the support as the primary and a
 * second plane through the same point as a secondary (its normal tilted by ALPHA about y):
 *  - at rest, secondary 5 mm open (psi_s > psi_iota = 0, the corners): the set is open by its
 *    secondary, so PEG's answer puts no load on it (p = 0, w_p = max_s g_s > 0); the
 *    reduction omits it before its first round (the psi test);
 *  - at rest, secondary 5 mm closed (psi_s < psi_iota: four supports inside the grid): the
 *    primary decides, the set carries the load of a U set, and its slack is 0 (its row
 *    (psi_iota - psi_s)/h > 0 open);
 *  - pushed (delta > mu g h: the plate slides), a secondary touching (psi_s = psi_iota = 0)
 *    tilted toward the motion (the corners): while the plate slides at v_x the secondary
 *    opens at g_s = sin(ALPHA) v_x, so PEG's answer has p = 0 there; the reduction's first
 *    round loads it (its primary holds like a U) and the set joins the omitted ones for the
 *    second round.
 * Closed forms on the remaining supports S (symmetric about the centre): at rest the
 * minimum-norm impulses of check_load_sharing_large.c over S,
 *     p_i = m g h / |S| + c m delta x_i / sum_S x_j^2,   f_i = (-m delta / |S|, 0),   nu = 0;
 * sliding, ST's answer: v_x = delta - mu g h, the plate flat (v_z = w = 0), sum p = m g h,
 * sum f_x = -mu m g h, sigma = v_x on every support of S, and the omitted corners' slack
 * c = sin(ALPHA) v_x (c in velocity units, Eq 39). Every answer is also checked as an answer
 * of the whole PEG LCP (pp_peg_last_lcp, pp_lcp_evaluate), and the path is checked to have
 * answered (the sticking solve's bit on the primaries' unknowns, none on the omitted sets').
 * A second solve from the first one's bytes with one set's cleared (a set new at this pose)
 * and the caller's warm start off is answered warm from the sticking solve's kept state.
 */
#include "pegplus/mlcp.h"
#include "pegplus/peg.h"

#include "../src/peg_lcp_internal.h"
#include "peg_lcp_checks.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G 9.81
#define H 0.01
#define N 7
#define K_DIRS 4
#define MU 0.5
#define ALPHA 0.3
/* Loads and velocities relative to m g h and g h: the sticking solve's answers are accepted
 * at rel(z) <= 1e-9 (lcp.h) */
#define TOL 1e-9

typedef struct scene {
    int nc, ns;
    double m, e[3];
    pp_mlcp_body body;
    pp_contact c[2 * N * N];
    pp_peg_set sets[N * N];
    double xy[N * N][2];
    int kind[N * N]; /* per support: one of the kinds below */
} scene;

enum { SUPPORT_U = 0, SECONDARY_OPEN = 1, SECONDARY_CLOSED = 2, SECONDARY_TOUCHING = 3 };

static int corner(int i, int j)
{
    return (i == 0 || i == N - 1) && (j == 0 || j == N - 1);
}

/* The plate (half extents a, a, cz, centre at height cz) with supports at a grid of pitch
 * 2 a / N; corner_kind on the four corners, inner_kind on the supports (1, 1), (1, N - 2),
 * (N - 2, 1), (N - 2, N - 2). */
static void scene_build(scene *s, double delta, int corner_kind, int inner_kind)
{
    memset(s, 0, sizeof *s);
    s->m = 3.0;
    const double a = 0.5, cz = 0.05;
    s->e[0] = s->e[1] = a;
    s->e[2] = cz;
    pp_mlcp_body *b = &s->body;
    b->inv_mass = 1.0 / s->m;
    b->inv_inertia[0] = 3.0 / (s->m * (a * a + cz * cz));
    b->inv_inertia[4] = 3.0 / (s->m * (a * a + cz * cz));
    b->inv_inertia[8] = 3.0 / (s->m * (a * a + a * a));
    b->x[2] = cz;
    b->v[0] = delta;
    b->v[2] = -G * H;
    const double pitch = 2.0 * a / N;
    int nc = 0;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            const int t = i * N + j;
            s->xy[t][0] = (i - 0.5 * (N - 1)) * pitch;
            s->xy[t][1] = (j - 0.5 * (N - 1)) * pitch;
            const int inner = (i == 1 || i == N - 2) && (j == 1 || j == N - 2);
            s->kind[t] = corner(i, j) ? corner_kind : inner ? inner_kind : SUPPORT_U;
            pp_contact *c = &s->c[nc];
            c->body_a = -1;
            c->body_b = 0;
            c->p_a[0] = s->xy[t][0];
            c->p_a[1] = s->xy[t][1];
            c->n[2] = 1.0;
            c->mu = MU;
            if (s->kind[t] == SUPPORT_U) {
                s->sets[t] = (pp_peg_set){PP_PEG_SET_U, PP_PEG_VERTEX_FACE, nc, 1};
                ++nc;
                continue;
            }
            pp_contact *sec = &s->c[nc + 1];
            *sec = *c;
            sec->n[0] = sin(ALPHA);
            sec->n[2] = cos(ALPHA);
            sec->psi = s->kind[t] == SECONDARY_OPEN     ? 0.005
                       : s->kind[t] == SECONDARY_CLOSED ? -0.005
                                                        : 0.0;
            s->sets[t] = (pp_peg_set){PP_PEG_SET_I, PP_PEG_VERTEX_EDGE, nc, 2};
            nc += 2;
        }
    s->nc = nc;
    s->ns = N * N;
}

typedef struct answer {
    double pn[2 * N * N], beta[2 * N * N * K_DIRS], sigma[2 * N * N], f[6 * N * N], nu[6];
    double slack[2 * N * N];
    unsigned char basis[8 * N * N];
    pp_peg_stats stats;
} answer;

/* One PEG solve with the sticking solve's threshold at this island's reduced size, from the
 * bytes `warm` (NULL: none) with the caller's warm start off, as the stepper passes a moving
 * island's bytes when some of its sets are new. */
static void scene_solve(pp_peg_workspace *ws, scene *s, const unsigned char *warm, answer *out)
{
    memset(out, 0, sizeof *out);
    if (warm) memcpy(out->basis, warm, sizeof out->basis);
    pp_peg_problem p = {.base = {.h = H, .body_count = 1, .bodies = &s->body,
                                 .contact_count = s->nc, .contacts = s->c,
                                 .friction_directions = K_DIRS},
                        .set_count = s->ns, .sets = s->sets};
    pp_mlcp_solution sol = {out->pn, out->beta, out->sigma, out->f, out->nu, NULL};
    pp_lcp_options o = pp_lcp_options_default();
    o.warm_start = 0;
    const int before = pp_peg_sticking_min_n(257);
    ck_assert_int_eq(pp_peg_solve(ws, &p, &o, out->basis, &sol, out->slack, &out->stats), PP_OK);
    pp_peg_sticking_min_n(before);
    ck_assert_int_eq(out->stats.lcp.status, PP_LCP_SOLVED);
    ck_assert_int_eq(out->stats.islands, 1);
    ck_assert_int_gt(out->stats.slacks, 0);
}


/* The primaries' path answered: the sticking solve's bit on the p of every set of S, on no
 * omitted set's (`omitted`: the support kind whose sets are left out). */
static void expect_path(const scene *s, const answer *a, int omitted)
{
    for (int t = 0; t < s->ns; ++t) {
        const int marked = (a->basis[t] & PP_PEG_STICKING) != 0;
        ck_assert_msg(marked == (s->kind[t] != omitted),
                      "support %d (kind %d): sticking bit %d", t, s->kind[t], marked);
    }
}

/* The closed form at rest (the file comment) over S, the supports not at the corners. */
static void expect_at_rest(const scene *s, const answer *a, double delta)
{
    const int in_s = s->ns - 4;
    double sum_x2 = 0.0;
    for (int t = 0; t < s->ns; ++t)
        if (s->kind[t] != SECONDARY_OPEN) sum_x2 += s->xy[t][0] * s->xy[t][0];
    const double mgh = s->m * G * H, tol = TOL * mgh;
    for (int t = 0; t < s->ns; ++t) {
        const int i = s->sets[t].first;
        const double expect = s->kind[t] == SECONDARY_OPEN
                                  ? 0.0
                                  : mgh / in_s + s->e[2] * s->m * delta * s->xy[t][0] / sum_x2;
        const double fx = s->kind[t] == SECONDARY_OPEN ? 0.0 : -s->m * delta / in_s;
        ck_assert_msg(fabs(a->pn[i] - expect) <= tol, "support %d (kind %d): p = %.17g, closed "
                      "form %.17g", t, s->kind[t], a->pn[i], expect);
        ck_assert_msg(fabs(a->f[3 * i] - fx) <= tol && fabs(a->f[3 * i + 1]) <= tol,
                      "support %d: friction (%g, %g), closed form (%g, 0)", t, a->f[3 * i],
                      a->f[3 * i + 1], fx);
        if (s->kind[t] == SUPPORT_U) continue;
        /* the slack, (psi_iota - psi_s)/h at rest: 0 where the primary decides, the
         * secondary's opening beyond it (its completion) at the corners */
        const double c = a->slack[i + 1];
        if (s->kind[t] == SECONDARY_CLOSED)
            ck_assert_msg(c == 0.0, "support %d: slack %g", t, c);
        else
            ck_assert_msg(fabs(c - 0.005 / H) <= TOL * 0.005 / H, "support %d: slack %.17g, "
                          "closed form %.17g", t, c, 0.005 / H);
    }
    for (int r = 0; r < 6; ++r)
        ck_assert_msg(fabs(a->nu[r]) <= TOL * G * H, "nu[%d] = %g", r, a->nu[r]);
}

START_TEST(test_at_rest)
{
    static scene s;
    static answer a;
    const double delta = 0.02; /* < mu g h: every support sticks */
    scene_build(&s, delta, SECONDARY_OPEN, SECONDARY_CLOSED);
    pp_peg_workspace *ws = NULL;
    ck_assert_int_eq(pp_peg_workspace_create(1, s.nc, s.ns, K_DIRS, &ws), PP_OK);
    scene_solve(ws, &s, NULL, &a);
    expect_peg_lcp_solved(ws, TOL);
    expect_path(&s, &a, SECONDARY_OPEN);
    ck_assert_int_eq(a.stats.lcp.pivots, 0);
    ck_assert_int_eq(a.stats.lcp.warm_started, 0);
    expect_at_rest(&s, &a, delta);
    pp_peg_workspace_destroy(ws);
}
END_TEST

/* Frictionless sets in the island (mu = 0: no friction rows in the LCP, though the set's
 * Jacobian keeps them): the corners, omitted at rest, and one inner set decided by its
 * primary. Unpushed, every support of S carries m g h / |S| and no friction. */
START_TEST(test_frictionless_sets)
{
    static scene s;
    static answer a;
    scene_build(&s, 0.0, SECONDARY_OPEN, SECONDARY_CLOSED);
    for (int t = 0; t < s.ns; ++t) {
        if (s.kind[t] == SUPPORT_U || (s.kind[t] == SECONDARY_CLOSED && t != N + 1)) continue;
        for (int c = 0; c < s.sets[t].count; ++c) s.c[s.sets[t].first + c].mu = 0.0;
    }
    pp_peg_workspace *ws = NULL;
    ck_assert_int_eq(pp_peg_workspace_create(1, s.nc, s.ns, K_DIRS, &ws), PP_OK);
    scene_solve(ws, &s, NULL, &a);
    expect_peg_lcp_solved(ws, TOL);
    expect_path(&s, &a, SECONDARY_OPEN);
    expect_at_rest(&s, &a, 0.0);
    pp_peg_workspace_destroy(ws);
}
END_TEST

/* The same island again with one set's bytes cleared (a set new at this pose, which the
 * stepper leaves with no bytes and its warm start off): the sticking solve's kept state is
 * completed with that set inactive and tried (pp_peg_primaries_island), so the island is
 * answered warm, without the interior solve or a pivot; the same closed form. */
START_TEST(test_kept_state_completed)
{
    static scene s;
    static answer a, b;
    const double delta = 0.02;
    scene_build(&s, delta, SECONDARY_OPEN, SECONDARY_CLOSED);
    pp_peg_workspace *ws = NULL;
    ck_assert_int_eq(pp_peg_workspace_create(1, s.nc, s.ns, K_DIRS, &ws), PP_OK);
    scene_solve(ws, &s, NULL, &a);
    static unsigned char warm[sizeof a.basis];
    memcpy(warm, a.basis, sizeof warm);
    /* support 24 (the centre, a U set): p, beta, sigma in the whole layout */
    const int t = 24, ns = s.ns, K = a.stats.slacks;
    warm[t] = 0;
    for (int l = 0; l < K_DIRS; ++l) warm[ns + K + t * K_DIRS + l] = 0;
    warm[ns + K + ns * K_DIRS + t] = 0;
    scene_solve(ws, &s, warm, &b);
    expect_peg_lcp_solved(ws, TOL);
    expect_path(&s, &b, SECONDARY_OPEN);
    ck_assert_int_eq(b.stats.lcp.pivots, 0);
    ck_assert_int_eq(b.stats.lcp.warm_started, 1);
    expect_at_rest(&s, &b, delta);
    pp_peg_workspace_destroy(ws);
}
END_TEST

START_TEST(test_pushed_secondary_opens)
{
    static scene s;
    static answer a;
    const double delta = 0.2; /* > mu g h: the plate slides */
    scene_build(&s, delta, SECONDARY_TOUCHING, SUPPORT_U);
    pp_peg_workspace *ws = NULL;
    ck_assert_int_eq(pp_peg_workspace_create(1, s.nc, s.ns, K_DIRS, &ws), PP_OK);
    scene_solve(ws, &s, NULL, &a);
    expect_peg_lcp_solved(ws, TOL);
    expect_path(&s, &a, SECONDARY_TOUCHING);
    const double mgh = s.m * G * H, vx = delta - MU * G * H, tol = TOL * G * H;
    ck_assert_msg(fabs(a.nu[0] - vx) <= tol, "v_x %.17g, closed form %.17g", a.nu[0], vx);
    for (int r = 1; r < 6; ++r) ck_assert_msg(fabs(a.nu[r]) <= tol, "nu[%d] = %g", r, a.nu[r]);
    double total = 0.0, friction = 0.0;
    for (int t = 0; t < s.ns; ++t) {
        const int i = s.sets[t].first;
        total += a.pn[i];
        friction += a.f[3 * i];
        ck_assert_double_ge(a.pn[i], 0.0);
        if (s.kind[t] == SECONDARY_TOUCHING) {
            /* omitted: no load, the secondary open at sin(ALPHA) v_x, the slack its value */
            ck_assert_msg(a.pn[i] == 0.0, "corner %d: p = %g", t, a.pn[i]);
            ck_assert_msg(fabs(a.slack[i + 1] - sin(ALPHA) * vx) <= tol,
                          "corner %d: slack %.17g, closed form %.17g", t, a.slack[i + 1],
                          sin(ALPHA) * vx);
        } else {
            ck_assert_msg(fabs(a.sigma[i] - vx) <= tol, "support %d: sigma %.17g", t,
                          a.sigma[i]);
        }
    }
    ck_assert_msg(fabs(total - mgh) <= TOL * mgh, "sum p %.17g, m g h %.17g", total, mgh);
    ck_assert_msg(fabs(friction + MU * mgh) <= TOL * mgh, "sum f_x %.17g, closed form %.17g",
                  friction, -MU * mgh);
    pp_peg_workspace_destroy(ws);
}
END_TEST

int main(void)
{
    pp_set_log_hook(pp_log_discard, NULL);
    Suite *suite = suite_create("peg_primaries");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_at_rest);
    tcase_add_test(tc, test_frictionless_sets);
    tcase_add_test(tc, test_kept_state_completed);
    tcase_add_test(tc, test_pushed_secondary_opens);
    suite_add_tcase(suite, tc);
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? 0 : 1;
}
