/* Scene builders and V7 invariant checks for the PLUS tests (see plus_fixtures.h). */
#include "plus_fixtures.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void fx_rot_x(double a, double R[9])
{
    const double c = cos(a), s = sin(a);
    const double M[9] = {1, 0, 0, 0, c, -s, 0, s, c};
    memcpy(R, M, sizeof M);
}

void fx_rot_y(double a, double R[9])
{
    const double c = cos(a), s = sin(a);
    const double M[9] = {c, 0, s, 0, 1, 0, -s, 0, c};
    memcpy(R, M, sizeof M);
}

void fx_rot_z(double a, double R[9])
{
    const double c = cos(a), s = sin(a);
    const double M[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
    memcpy(R, M, sizeof M);
}

void fx_matmul(const double A[9], const double B[9], double C[9])
{
    double T[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            T[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    memcpy(C, T, sizeof T);
}

void fx_matvec(const double A[9], const double x[3], double y[3])
{
    double t[3];
    for (int i = 0; i < 3; ++i) t[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
    memcpy(y, t, sizeof t);
}

void fx_scene_init(fx_scene *s) { memset(s, 0, sizeof *s); }

int fx_add_body(fx_scene *s, double m, const double Ibody[3], const double R[9],
                const double c[3], const double v[3], const double w[3])
{
    const int b = s->body_count++;
    ck_assert_int_le(s->body_count, FX_MAX_BODIES);
    s->mass[b] = m;
    s->bodies[b].inverse_mass = 1.0 / m;
    /* I_world = R diag(I) R^T, I_world^-1 = R diag(1/I) R^T */
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            double Iw = 0.0, Wi = 0.0;
            for (int k = 0; k < 3; ++k) {
                Iw += R[3 * i + k] * Ibody[k] * R[3 * j + k];
                Wi += R[3 * i + k] / Ibody[k] * R[3 * j + k];
            }
            s->inertia[b][3 * i + j] = Iw;
            s->bodies[b].inverse_inertia[3 * i + j] = Wi;
        }
    }
    for (int i = 0; i < 3; ++i) {
        s->com[b][i] = c[i];
        s->nu[6 * b + i] = v[i];
        s->nu[6 * b + 3 + i] = w[i];
    }
    return b;
}

int fx_add_brick(fx_scene *s, double m, const double dims[3], const double R[9],
                 const double c[3], const double v[3], const double w[3])
{
    const double a = dims[0], b = dims[1], h = dims[2];
    const double I[3] = {m / 12.0 * (b * b + h * h), m / 12.0 * (a * a + h * h),
                         m / 12.0 * (a * a + b * b)};
    return fx_add_body(s, m, I, R, c, v, w);
}

void fx_add_contact(fx_scene *s, int a, int b, const double p[3], const double frame[9],
                    pp_plus_contact_params params)
{
    const int k = s->contact_count++;
    ck_assert_int_le(s->contact_count, FX_MAX_CONTACTS);
    pp_status st = pp_plus_point_contact_jacobian(a, a >= 0 ? s->com[a] : NULL, b,
                                                  b >= 0 ? s->com[b] : NULL, p, frame, &s->jac[k]);
    ck_assert_int_eq(st, PP_OK);
    s->params[k] = params;
}

void fx_add_ground_contact(fx_scene *s, int b, const double p[3], pp_plus_contact_params params)
{
    static const double frame[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    fx_add_contact(s, -1, b, p, frame, params);
}

void fx_scene_finish(fx_scene *s)
{
    ck_assert_int_eq(pp_plus_delassus(s->body_count, s->bodies, s->contact_count, s->jac, s->A),
                     PP_OK);
    ck_assert_int_eq(pp_plus_contact_velocity(s->body_count, s->nu, s->contact_count, s->jac, s->v),
                     PP_OK);
}

double fx_kinetic_energy(const fx_scene *s, const double *nu)
{
    double ke = 0.0;
    for (int b = 0; b < s->body_count; ++b) {
        const double *v = nu + 6 * b, *w = nu + 6 * b + 3;
        double Iw[3];
        fx_matvec(s->inertia[b], w, Iw);
        ke += 0.5 * s->mass[b] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
              0.5 * (w[0] * Iw[0] + w[1] * Iw[1] + w[2] * Iw[2]);
    }
    return ke;
}

void fx_solve(const fx_scene *s, const pp_plus_config *cfg, fx_run *run)
{
    const int m = s->contact_count, n = 3 * m;
    memset(run, 0, sizeof *run);
    run->contacts = calloc((size_t)FX_MAX_INTERVALS * (size_t)(m > 0 ? m : 1), sizeof *run->contacts);
    ck_assert_ptr_nonnull(run->contacts);
    run->trace.rounds = run->rounds;
    run->trace.round_capacity = FX_MAX_ROUNDS;
    run->trace.intervals = run->intervals;
    run->trace.contacts = run->contacts;
    run->trace.interval_capacity = FX_MAX_INTERVALS;
    run->result.impulse = run->impulse;
    run->result.velocity_change = run->dv;
    run->result.trace = &run->trace;

    pp_plus_solver *solver = NULL;
    ck_assert_int_eq(pp_plus_solver_create(m > 0 ? m : 1, &solver), PP_OK);
    pp_plus_problem p = {m, s->A, s->v, s->params};
    run->status = pp_plus_solve(solver, cfg, &p, &run->result);
    pp_plus_solver_destroy(solver);

    for (int i = 0; i < n; ++i) run->v_end[i] = s->v[i] + run->dv[i];
    double dnu[6 * FX_MAX_BODIES];
    ck_assert_int_eq(pp_plus_body_velocity_change(s->body_count, s->bodies, m, s->jac,
                                                  run->impulse, dnu),
                     PP_OK);
    for (int i = 0; i < 6 * s->body_count; ++i) run->nu_end[i] = s->nu[i] + dnu[i];
}

void fx_run_free(fx_run *run)
{
    free(run->contacts);
    run->contacts = NULL;
}

const pp_plus_contact_record *fx_record(const fx_run *run, int m, int interval, int k)
{
    return &run->contacts[(size_t)interval * (size_t)m + (size_t)k];
}

void fx_check_invariants(const fx_scene *s, const pp_plus_config *cfg, const fx_run *run,
                         int allow_round_cap, const char *label)
{
    const int m = s->contact_count, n = 3 * m;
    const pp_plus_result *r = &run->result;
    const int round_capped = allow_round_cap && run->status == PP_ERR_SOLVER &&
                             r->caps == PP_PLUS_CAP_ROUNDS;
    ck_assert_msg(run->status == PP_OK || round_capped, "%s: status %s caps %u", label,
                  pp_status_string(run->status), r->caps);
    double approach0 = 0.0;
    for (int k = 0; k < m; ++k) approach0 = fmax(approach0, -s->v[3 * k + 2]);

    double pscale = 1e-12, vscale = 1e-12;
    for (int i = 0; i < n; ++i) {
        pscale = fmax(pscale, fabs(run->impulse[i]));
        vscale = fmax(vscale, fmax(fabs(s->v[i]), fabs(run->v_end[i])));
    }
    const double ptol = FX_TOL_IMPULSE * pscale;
    const double ke0 = fx_kinetic_energy(s, s->nu), ke1 = fx_kinetic_energy(s, run->nu_end);

    /* Energy: never gained across the impact, and dKE = pi.v + 1/2 pi^T A pi agrees with
     * the body form. */
    ck_assert_msg(r->kinetic_energy_change <= FX_TOL_ENERGY * ke0, "%s: dKE = %g > 0 (KE0 %g)",
                  label, r->kinetic_energy_change, ke0);
    ck_assert_msg(fabs((ke1 - ke0) - r->kinetic_energy_change) <= 1e-9 * (ke0 + 1e-12),
                  "%s: dKE %g vs body form %g", label, r->kinetic_energy_change, ke1 - ke0);

    /* Termination bounds (V7, docs/references.md). */
    ck_assert_int_le(r->rounds, 50);
    ck_assert_int_eq(run->trace.truncated, 0);
    ck_assert_int_eq(run->trace.interval_count, r->intervals);
    for (int q = 0; q < run->trace.round_count; ++q)
        ck_assert_int_le(run->trace.rounds[q].interval_count, 1000);

    for (int it = 0; it < run->trace.interval_count; ++it) {
        const pp_plus_interval_record *ir = &run->trace.intervals[it];
        ck_assert_msg(ir->alpha > 0.0 && ir->alpha <= 1.0, "%s: alpha %g", label, ir->alpha);
        ck_assert_int_le(ir->active_set_passes, 3 * m + 2);
        for (int k = 0; k < m; ++k) {
            const pp_plus_contact_record *c = fx_record(run, m, it, k);
            const double mu = s->params[k].mu;
            const double *pi = c->impulse;
            const double pt = hypot(pi[0], pi[1]);
            /* normal impulses non-negative, friction in the cone, every interval */
            ck_assert_msg(pi[2] >= -ptol, "%s: interval %d contact %d pi_z = %g", label, it, k, pi[2]);
            ck_assert_msg(pt <= mu * fmax(pi[2], 0.0) + ptol,
                          "%s: interval %d contact %d |pi_t| = %g > mu pi_z = %g", label, it, k, pt,
                          mu * pi[2]);
            if (c->normal == PP_PLUS_OBSERVING || c->normal == PP_PLUS_COMPRESSING_RELEASED) {
                ck_assert_msg(pt == 0.0 && pi[2] == 0.0, "%s: inactive contact %d has impulse", label, k);
                continue;
            }
            const double *vs = c->velocity_start, *ve = c->velocity_end;
            /* Friction work over the interval. The slip moves linearly from vs to ve while
             * the impulse accrues uniformly (Darboux-Keller), so W = pi_t . (vs + ve) / 2. */
            const double work = 0.5 * (pi[0] * (vs[0] + ve[0]) + pi[1] * (vs[1] + ve[1]));
            const double wtol = ptol * vscale;
            if (c->friction == PP_PLUS_SLIDING) {
                const double sp = hypot(vs[0], vs[1]);
                ck_assert_msg(sp >= cfg->v_transition, "%s: sliding below v_transition", label);
                /* (2.8): pi_t = -mu pi_z v_start / |v_start| */
                for (int t = 0; t < 2; ++t)
                    ck_assert_msg(fabs(pi[t] + mu * pi[2] * vs[t] / sp) <= ptol,
                                  "%s: interval %d contact %d sliding impulse off (2.8)", label, it, k);
                ck_assert_msg(work <= wtol, "%s: interval %d contact %d sliding work %g > 0", label,
                              it, k, work);
            } else if (c->friction == PP_PLUS_IMPENDING || c->friction == PP_PLUS_ROLLING) {
                /* Rolling and impending intervals start below v_transition. Their work is
                 * not sign-definite: a rolling impulse also cancels slip that normal
                 * impulses induce, and an impending impulse opposes the END slip (2.9b),
                 * which may point against the start slip. With vs -> ve linear and
                 * ve = vs + alpha (d - vs), both are bounded by W <= |pi_t| |vs|. */
                const double vst = hypot(vs[0], vs[1]);
                ck_assert_msg(vst < cfg->v_transition + 1e-12,
                              "%s: rolling/impending above v_transition", label);
                ck_assert_msg(work <= pt * vst + wtol,
                              "%s: interval %d contact %d %s work %g above |pi_t||vs| = %g", label,
                              it, k, c->friction == PP_PLUS_ROLLING ? "rolling" : "impending",
                              work, pt * vst);
            }
        }
    }
    for (int k = 0; k < m; ++k) {
        const double *pi = run->impulse + 3 * k;
        ck_assert_msg(pi[2] >= -ptol, "%s: total pi_z[%d] = %g", label, k, pi[2]);
        ck_assert_msg(hypot(pi[0], pi[1]) <= s->params[k].mu * pi[2] + ptol,
                      "%s: total impulse of contact %d outside the cone", label, k);
        /* No interpenetrating approach remains; after a round cap, what remains is a
         * small fraction of the initial approach speed. */
        const double vtol = round_capped ? FX_ROUND_CAP_RESIDUAL * approach0
                                         : cfg->approach_tolerance + 1e-9 * vscale;
        ck_assert_msg(run->v_end[3 * k + 2] >= -vtol, "%s: contact %d still approaches at %g",
                      label, k, run->v_end[3 * k + 2]);
    }
}
