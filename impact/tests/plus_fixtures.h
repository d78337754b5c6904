/*
 * Scene builders and the V7 invariant checks shared by the PLUS tests: rigid bricks
 * and balls with point contacts, built through the body form of pegplus/impact.h.
 */
#ifndef PEGPLUS_PLUS_FIXTURES_H
#define PEGPLUS_PLUS_FIXTURES_H

#include "pegplus/impact.h"

#define FX_MAX_BODIES 6
#define FX_MAX_CONTACTS 16
#define FX_N (3 * FX_MAX_CONTACTS)
#define FX_MAX_INTERVALS 3000
#define FX_MAX_ROUNDS 64

typedef struct fx_scene {
    int body_count;
    pp_plus_body bodies[FX_MAX_BODIES];
    double mass[FX_MAX_BODIES];
    double inertia[FX_MAX_BODIES][9]; /* world frame */
    double com[FX_MAX_BODIES][3];
    double nu[6 * FX_MAX_BODIES];     /* (v, w) per body */
    int contact_count;
    pp_plus_contact_jacobian jac[FX_MAX_CONTACTS];
    pp_plus_contact_params params[FX_MAX_CONTACTS];
    double A[FX_N * FX_N];
    double v[FX_N];
} fx_scene;

typedef struct fx_run {
    pp_status status;
    pp_plus_result result;
    double impulse[FX_N];
    double dv[FX_N];
    double v_end[FX_N];
    double nu_end[6 * FX_MAX_BODIES];
    pp_plus_trace trace;
    pp_plus_round_record rounds[FX_MAX_ROUNDS];
    pp_plus_interval_record intervals[FX_MAX_INTERVALS];
    pp_plus_contact_record *contacts; /* FX_MAX_INTERVALS * m, heap */
} fx_run;

void fx_rot_x(double a, double R[9]);
void fx_rot_y(double a, double R[9]);
void fx_rot_z(double a, double R[9]);
void fx_matmul(const double A[9], const double B[9], double C[9]);
void fx_matvec(const double A[9], const double x[3], double y[3]);

void fx_scene_init(fx_scene *s);
/* A body with mass m, principal inertia diag(Ibody) in body axes, orientation R (body
 * to world), COM c, velocity v and angular velocity w (world). Returns its index. */
int fx_add_body(fx_scene *s, double m, const double Ibody[3], const double R[9],
                const double c[3], const double v[3], const double w[3]);
/* Brick of full dimensions (dx, dy, dz) and mass m: inertia m/12 (b^2 + c^2) ... */
int fx_add_brick(fx_scene *s, double m, const double dims[3], const double R[9],
                 const double c[3], const double v[3], const double w[3]);
/* Contact at world point p between body a (or -1) and body b with frame rows
 * (t1, t2, n), n from a to b. */
void fx_add_contact(fx_scene *s, int a, int b, const double p[3], const double frame[9],
                    pp_plus_contact_params params);
/* Ground contact under body b at world point p: frame (x, y, z), ground is side A. */
void fx_add_ground_contact(fx_scene *s, int b, const double p[3], pp_plus_contact_params params);
/* Build A and v from the bodies and contacts. */
void fx_scene_finish(fx_scene *s);

double fx_kinetic_energy(const fx_scene *s, const double *nu);

/* Solve with a trace; fills run (v_end = v + A pi, nu_end = nu + M^-1 J^T pi). */
void fx_solve(const fx_scene *s, const pp_plus_config *cfg, fx_run *run);
void fx_run_free(fx_run *run);

const pp_plus_contact_record *fx_record(const fx_run *run, int m, int interval, int k);

/* Tolerances of the invariant checks, named once. */
#define FX_TOL_IMPULSE 1e-9  /* relative to the largest total impulse */
#define FX_TOL_ENERGY 1e-9   /* relative to the pre-impact kinetic energy */

/* Largest approach speed left after a round cap, relative to the initial one. */
#define FX_ROUND_CAP_RESIDUAL 1e-3

/* Asserts every V7 invariant (docs/references.md) on a finished run with ck_assert; `label`
 * identifies the case in messages. The run must complete with PP_OK, except that
 * with allow_round_cap a round cap (PP_ERR_SOLVER, caps == PP_PLUS_CAP_ROUNDS) is
 * accepted when the approach left is below FX_ROUND_CAP_RESIDUAL of the initial one:
 * stacks can alternate inelastic captures between their levels with geometric decay,
 * a property of sequential rounds (Algorithm 2), not a failure. */
void fx_check_invariants(const fx_scene *s, const pp_plus_config *cfg, const fx_run *run,
                         int allow_round_cap, const char *label);

#endif
