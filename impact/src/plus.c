/*
 * The PLUS impact model (Uchida, Sherman, Delp 2015), paper convention throughout
 * (§2(b)): pi force-signed, v_end = v + A pi, pi_z >= 0.
 *
 * Structure, outer to inner:
 *   pp_plus_solve            rounds (Algorithm 2, the paper's sequential rounds, §3)
 *   run_round                intervals until alpha = 1 (§2e)
 *   solve_interval           the active-set loop of Algorithm 1 on Table 1
 *   solve_rows               min-norm least squares / Newton on the active rows
 *   step_length              alpha = min_k alpha_k from (2.12)-(2.14)
 *
 * Unknowns and rows. In an interval every contact is observing (no unknowns),
 * compressing with an active normal (unknown pi_z), compressing with a released normal
 * (no unknowns), or expanding (pi_z = remaining e pi_comp is known, eq. 2.4). A
 * compressing-active or expanding contact with mu > 0 also has unknowns pi_x, pi_y.
 * Each unknown component i = 3k + c owns one row, so the system is square:
 *   c = z, compressing:  (A pi)_i + v_i = 0                                (2.3)
 *   c = x,y rolling:     (A pi)_i + v_i = 0                                (2.7)
 *   c = x,y sliding:     s (pi_i + mu P s_c) = 0,  s_c = v_c / |v_xy|       (2.8, 2.9a)
 *   c = x,y impending:   s (pi_i + mu P d_c / |d|), d = v_xy + (A pi)_xy  (2.8, 2.9b)
 * where P = pi_z of the same contact (unknown or known) and s is a row scale (the
 * largest diagonal entry of A) that puts the friction rows in A's units, so that the
 * rank decision of the factorisation sees comparable columns; scaling a row does not
 * change the solution of a consistent system. The impending direction is the slip at
 * the END of the interval, as the paper's eq. 2.9 and Table 1 require (docs/references.md:
 * Simbody's d = -(A pi) makes friction do positive work).
 *
 * Minimum norm (Table 1: minimise ||pi|| subject to the rows): the linear rows are
 * solved as x = B^+ w by a complete orthogonal factorisation (LAPACK dgelsy, QR with
 * column pivoting then RZ), starting from x = 0 so the result is exactly the min-norm
 * least-squares solution. Impending rows are nonlinear in pi; Newton's method with the
 * analytic Jacobian starts from the min-norm solution in which every impending contact
 * slides along a fixed guess direction, and each step is again a min-norm solve.
 *
 * Additions to the paper, for robustness where the end slip of an impending contact
 * vanishes (its direction is then undefined; docs/references.md):
 *  - a contact whose end slip is zero for every pi (fixed by other rolling rows) keeps
 *    the guess direction ("pinned"): its friction is on the cone and does no work;
 *  - the direction is regularised, h = d / sqrt(|d|^2 + eps^2), eps = 1e-6 v_transition,
 *    and Newton runs a continuation from eps ~ v_transition down to that value;
 *  - if Newton still finds no root, the fixed-direction solution is kept and counted
 *    (pp_plus_interval_record.impending_fallbacks).
 */
#include "pegplus/impact.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Relative tolerance of the active-set sign and cone tests (Algorithm 1), measured
 * against the largest impulse component of the interval. */
#define PLUS_VIOLATION_TOL 1e-10
/* Violations within this fraction of the worst one are released together, so that
 * symmetric contacts stay symmetric and the result does not depend on contact order. */
#define PLUS_TIE_FRACTION 1e-8
/* A step length this close to 1 is taken as 1: no sliver interval. */
#define PLUS_ALPHA_SLIVER 1e-8
/* Remaining expansion impulse below this fraction of the total is treated as none. */
#define PLUS_EXPANSION_NEGLIGIBLE 1e-14
/* Largest relative residual of the impending rows accepted from Newton (see solve_rows). */
#define PLUS_NEWTON_ACCEPT 1e-8

enum { CLASS_OBSERVING = 0, CLASS_COMPRESSING = 1, CLASS_EXPANDING = 2 };

struct pp_plus_solver {
    int capacity; /* max contacts */
    int ld;       /* 3 * capacity: leading dimension of the dense system */
    /* per contact */
    double *cor;           /* e_k of the round (Fig. 2) */
    double *pi_exp;        /* expansion impulse still to apply this round (2.4) */
    double *pi_acc;        /* e pi_comp accumulated for the next round */
    unsigned char *cls;    /* CLASS_*, fixed for a round */
    unsigned char *normal_active;
    unsigned char *friction; /* pp_plus_friction_state, per interval */
    double *dir;           /* 2 per contact: sliding direction v_start / |v_start|, or the
                              current impending direction guess */
    double *violation;
    unsigned char *pinned; /* impending contact whose end slip is structurally zero */
    /* per component (3m) */
    double *v;        /* current contact velocity */
    double *v_start;  /* velocity at the start of the interval */
    double *pi_total;
    double *pi_step;  /* pi of the interval (full, before alpha) */
    double *dv;       /* A pi_step */
    int *unknown_of;  /* component -> unknown index, or -1 */
    int *component_of;/* unknown index -> component */
    /* dense system */
    double *x, *x_trial, *x_best, *x_fixed, *dx, *F, *F_trial;
    double *B; /* ld x ld, column-major */
    lapack_int *jpvt;
    double *work;
    lapack_int lwork;
};

/* ------------------------------------------------------------------------------------ */
/* Defaults, COR                                                                          */
/* ------------------------------------------------------------------------------------ */

pp_plus_contact_params pp_plus_contact_params_default(void)
{
    pp_plus_contact_params p;
    p.mu = 0.5;
    p.e_min = 0.5;
    p.v_capture = 0.01;
    p.v_plastic = 0.1;
    return p;
}

pp_plus_config pp_plus_config_default(void)
{
    pp_plus_config c;
    c.v_transition = 0.1;
    c.theta_max = 0.01;
    c.alpha_min = 1e-3;
    c.approach_tolerance = 1e-6;
    c.newton_tolerance = 1e-12;
    c.rcond = 1e-10;
    c.max_rounds = 50;
    c.max_intervals = 1000;
    c.max_active_set_passes = 0;
    c.max_newton_iterations = 50;
    return c;
}

/* Fig. 2 (docs/references.md): zero up to v_capture, then the line from (0, 1) to
 * (v_plastic, e_min), then e_min. */
double pp_plus_cor(const pp_plus_contact_params *params, double approach_speed)
{
    if (!params || !(approach_speed > params->v_capture)) return 0.0;
    if (approach_speed >= params->v_plastic) return params->e_min;
    return 1.0 - (1.0 - params->e_min) * approach_speed / params->v_plastic;
}

/* ------------------------------------------------------------------------------------ */
/* Workspace                                                                              */
/* ------------------------------------------------------------------------------------ */

pp_status pp_plus_solver_create(int max_contacts, pp_plus_solver **out)
{
    if (!out) {
        pp_log(PP_LOG_ERROR, "pp_plus_solver_create: NULL output pointer");
        return PP_ERR_NULL_ARGUMENT;
    }
    *out = NULL;
    if (max_contacts < 1 || max_contacts > 100000) {
        pp_log(PP_LOG_ERROR, "pp_plus_solver_create: max_contacts %d outside [1, 100000]",
               max_contacts);
        return PP_ERR_INVALID_ARGUMENT;
    }
    pp_plus_solver *s = calloc(1, sizeof *s);
    if (!s) return PP_ERR_NO_MEMORY;
    const size_t m = (size_t)max_contacts, n = 3 * m;
    s->capacity = max_contacts;
    s->ld = (int)n;
    s->cor = calloc(m, sizeof(double));
    s->pi_exp = calloc(m, sizeof(double));
    s->pi_acc = calloc(m, sizeof(double));
    s->cls = calloc(m, 1);
    s->normal_active = calloc(m, 1);
    s->friction = calloc(m, 1);
    s->dir = calloc(2 * m, sizeof(double));
    s->violation = calloc(m, sizeof(double));
    s->pinned = calloc(m, 1);
    s->v = calloc(n, sizeof(double));
    s->v_start = calloc(n, sizeof(double));
    s->pi_total = calloc(n, sizeof(double));
    s->pi_step = calloc(n, sizeof(double));
    s->dv = calloc(n, sizeof(double));
    s->unknown_of = calloc(n, sizeof(int));
    s->component_of = calloc(n, sizeof(int));
    s->x = calloc(n, sizeof(double));
    s->x_trial = calloc(n, sizeof(double));
    s->x_best = calloc(n, sizeof(double));
    s->x_fixed = calloc(n, sizeof(double));
    s->dx = calloc(n, sizeof(double));
    s->F = calloc(n, sizeof(double));
    s->F_trial = calloc(n, sizeof(double));
    s->B = calloc(n * n, sizeof(double));
    s->jpvt = calloc(n, sizeof(lapack_int));
    int ok = s->cor && s->pi_exp && s->pi_acc && s->cls && s->normal_active && s->friction &&
             s->dir && s->violation && s->pinned && s->v && s->v_start && s->pi_total && s->pi_step &&
             s->dv && s->unknown_of && s->component_of && s->x && s->x_trial && s->x_best && s->x_fixed && s->dx &&
             s->F && s->F_trial && s->B && s->jpvt;
    if (ok) {
        /* Workspace query of dgelsy at the largest size; smaller systems need less. */
        double query = 0.0;
        lapack_int rank = 0;
        lapack_int info = LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, (lapack_int)n, (lapack_int)n, 1,
                                              s->B, (lapack_int)n, s->dx, (lapack_int)n,
                                              s->jpvt, 1e-10, &rank, &query, -1);
        s->lwork = (info == 0 && query >= 1.0) ? (lapack_int)query : (lapack_int)(4 * n + 64);
        if (s->lwork < (lapack_int)(4 * n + 64)) s->lwork = (lapack_int)(4 * n + 64);
        s->work = calloc((size_t)s->lwork, sizeof(double));
        ok = s->work != NULL;
    }
    if (!ok) {
        pp_plus_solver_destroy(s);
        return PP_ERR_NO_MEMORY;
    }
    *out = s;
    return PP_OK;
}

void pp_plus_solver_destroy(pp_plus_solver *s)
{
    if (!s) return;
    free(s->cor); free(s->pi_exp); free(s->pi_acc); free(s->cls); free(s->normal_active);
    free(s->friction); free(s->dir); free(s->violation); free(s->pinned); free(s->v); free(s->v_start);
    free(s->pi_total); free(s->pi_step); free(s->dv); free(s->unknown_of);
    free(s->component_of); free(s->x); free(s->x_trial); free(s->x_best); free(s->x_fixed); free(s->dx); free(s->F);
    free(s->F_trial); free(s->B); free(s->jpvt); free(s->work);
    free(s);
}

int pp_plus_solver_capacity(const pp_plus_solver *s) { return s ? s->capacity : 0; }

/* ------------------------------------------------------------------------------------ */
/* Boundary validation                                                                    */
/* ------------------------------------------------------------------------------------ */

static pp_status validate_config(const pp_plus_config *c)
{
    const char *bad = NULL;
    if (!(c->v_transition >= 0.0) || !isfinite(c->v_transition)) bad = "v_transition";
    else if (!(c->theta_max > 0.0 && c->theta_max <= 3.14159265358979323846)) bad = "theta_max";
    else if (!(c->alpha_min > 0.0 && c->alpha_min <= 1.0)) bad = "alpha_min";
    else if (!(c->approach_tolerance >= 0.0) || !isfinite(c->approach_tolerance))
        bad = "approach_tolerance";
    else if (!(c->newton_tolerance > 0.0 && c->newton_tolerance < 1.0)) bad = "newton_tolerance";
    else if (!(c->rcond > 0.0 && c->rcond < 1.0)) bad = "rcond";
    else if (c->max_rounds < 1) bad = "max_rounds";
    else if (c->max_intervals < 1) bad = "max_intervals";
    else if (c->max_newton_iterations < 1) bad = "max_newton_iterations";
    if (bad) {
        pp_log(PP_LOG_ERROR, "pp_plus_solve: config field %s is out of range", bad);
        return PP_ERR_INVALID_ARGUMENT;
    }
    return PP_OK;
}

static pp_status validate_problem(const pp_plus_problem *p)
{
    const int m = p->contact_count, n = 3 * m;
    const double *A = p->delassus;
    for (int k = 0; k < m; ++k) {
        const pp_plus_contact_params *q = &p->params[k];
        if (!(q->mu >= 0.0) || !isfinite(q->mu)) {
            pp_log(PP_LOG_ERROR, "pp_plus_solve: contact %d has mu = %g (must be >= 0)", k, q->mu);
            return PP_ERR_INVALID_ARGUMENT;
        }
        if (!(q->e_min >= 0.0 && q->e_min <= 1.0)) {
            pp_log(PP_LOG_ERROR, "pp_plus_solve: contact %d has e_min = %g (must be in [0, 1])",
                   k, q->e_min);
            return PP_ERR_INVALID_ARGUMENT;
        }
        if (!(q->v_capture >= 0.0) || !isfinite(q->v_capture) || !(q->v_plastic >= q->v_capture) ||
            !isfinite(q->v_plastic)) {
            pp_log(PP_LOG_ERROR,
                   "pp_plus_solve: contact %d has v_capture = %g, v_plastic = %g "
                   "(need 0 <= v_capture <= v_plastic)",
                   k, q->v_capture, q->v_plastic);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    for (int i = 0; i < n; ++i) {
        if (!isfinite(p->velocity[i])) {
            pp_log(PP_LOG_ERROR, "pp_plus_solve: velocity component %d is not finite", i);
            return PP_ERR_INVALID_ARGUMENT;
        }
        for (int j = 0; j < n; ++j) {
            if (!isfinite(A[i * n + j])) {
                pp_log(PP_LOG_ERROR, "pp_plus_solve: A(%d,%d) is not finite", i, j);
                return PP_ERR_INVALID_ARGUMENT;
            }
        }
    }
    double dmax = 0.0;
    for (int i = 0; i < n; ++i) dmax = fmax(dmax, A[i * n + i]);
    for (int i = 0; i < n; ++i) {
        const int c = i % 3;
        const double d = A[i * n + i];
        /* A zero tangent diagonal (with its row and column, as PSD requires) is a tangent
         * direction no impulse can move the contact in: frictionless, or held by joints (a
         * planar mechanism's contact cannot slip out of its plane). Its slip stays as it is,
         * rolling rows on it are solved in the least-squares sense, and friction along it
         * does no work. A zero normal diagonal is a contact that cannot be impacted. */
        const int may_be_zero = c != PP_PLUS_Z;
        if (!(d > 0.0) && !(may_be_zero && d == 0.0)) {
            pp_log(PP_LOG_ERROR, "pp_plus_solve: A(%d,%d) = %g: the diagonal must be positive",
                   i, i, d);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    const double sym_tol = 1e-9 * dmax;
    for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
            const double a = A[i * n + j], b = A[j * n + i];
            if (fabs(a - b) > sym_tol) {
                pp_log(PP_LOG_ERROR, "pp_plus_solve: A is not symmetric: A(%d,%d) = %g, A(%d,%d) = %g",
                       i, j, a, j, i, b);
                return PP_ERR_INVALID_ARGUMENT;
            }
            /* Necessary for PSD: every 2x2 principal minor is >= 0. */
            if (a * a > A[i * n + i] * A[j * n + j] * (1.0 + 1e-9) + sym_tol * sym_tol) {
                pp_log(PP_LOG_ERROR,
                       "pp_plus_solve: A is not positive semi-definite: A(%d,%d)^2 > A(%d,%d) A(%d,%d)",
                       i, j, i, i, j, j);
                return PP_ERR_INVALID_ARGUMENT;
            }
        }
    }
    return PP_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Dense least squares                                                                    */
/* ------------------------------------------------------------------------------------ */

/* Minimum-norm least-squares solution of B y = rhs for the leading nu x nu block of
 * s->B (column-major, leading dimension ld); rhs is overwritten with y. Complete
 * orthogonal factorisation B P = Q [R11 R12; 0 0] = Q [T11 0; 0 0] Z P^T (dgelsy),
 * y = P Z^T [T11^-1 Q1^T rhs; 0]  (Golub & Van Loan §5.5, cited by the paper). */
static int min_norm_solve(pp_plus_solver *s, int nu, const pp_plus_config *cfg, double *rhs)
{
    if (nu == 0) return 1;
    lapack_int rank = 0;
    memset(s->jpvt, 0, sizeof(lapack_int) * (size_t)nu);
    lapack_int info = LAPACKE_dgelsy_work(LAPACK_COL_MAJOR, nu, nu, 1, s->B, s->ld, rhs, s->ld,
                                          s->jpvt, cfg->rcond, &rank, s->work, s->lwork);
    if (info != 0) return 0;
    for (int i = 0; i < nu; ++i)
        if (!isfinite(rhs[i])) return 0;
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* One interval: rows, Newton, active set                                                 */
/* ------------------------------------------------------------------------------------ */

typedef struct plus_call {
    const pp_plus_config *cfg;
    const pp_plus_problem *p;
    int m, n;
    const double *A;
    double row_scale; /* s: the largest diagonal entry of A */
    double slip_eps;  /* regularisation speed of the impending direction, m/s */
    unsigned caps;
} plus_call;

static int has_friction_unknowns(const pp_plus_solver *s, int k)
{
    return s->friction[k] != PP_PLUS_FRICTION_NONE;
}

/* Number the unknowns of the current active set (see the file comment). */
static int number_unknowns(pp_plus_solver *s, const plus_call *c)
{
    int nu = 0;
    for (int i = 0; i < c->n; ++i) s->unknown_of[i] = -1;
    for (int k = 0; k < c->m; ++k) {
        const int participating = (s->cls[k] == CLASS_COMPRESSING && s->normal_active[k]) ||
                                  s->cls[k] == CLASS_EXPANDING;
        if (!participating) continue;
        if (has_friction_unknowns(s, k)) {
            for (int t = 0; t < 2; ++t) {
                s->unknown_of[3 * k + t] = nu;
                s->component_of[nu++] = 3 * k + t;
            }
        }
        if (s->cls[k] == CLASS_COMPRESSING) {
            s->unknown_of[3 * k + PP_PLUS_Z] = nu;
            s->component_of[nu++] = 3 * k + PP_PLUS_Z;
        }
    }
    return nu;
}

/* pi_step from the unknowns x plus the known expansion impulses; dv = A pi_step. */
static void expand_impulse(pp_plus_solver *s, const plus_call *c, const double *x)
{
    memset(s->pi_step, 0, sizeof(double) * (size_t)c->n);
    for (int k = 0; k < c->m; ++k)
        if (s->cls[k] == CLASS_EXPANDING) s->pi_step[3 * k + PP_PLUS_Z] = s->pi_exp[k];
    for (int i = 0; i < c->n; ++i)
        if (s->unknown_of[i] >= 0) s->pi_step[i] = x[s->unknown_of[i]];
    for (int i = 0; i < c->n; ++i) {
        double sum = 0.0;
        const double *row = c->A + (size_t)i * (size_t)c->n;
        for (int j = 0; j < c->n; ++j) sum += row[j] * s->pi_step[j];
        s->dv[i] = sum;
    }
}

/* Residual F(x) of the rows, and when want_jacobian its Jacobian into s->B
 * (column-major). impending_exact = 0 treats impending rows like sliding rows along the
 * fixed guess s->dir (linear); 1 uses the slip at the end of the interval (2.9b),
 * d = v_xy + (A pi)_xy, through the direction h = d / r, r = sqrt(|d|^2 + eps^2), with
 * eps = slip_eps far below v_transition (|h| = 1 to O(eps^2 / |d|^2)). The
 * regularisation makes the root regular where the end slip vanishes (docs/references.md); the
 * analytic derivative is
 *   dh_c / dpi_j = sum_c' (delta_cc' - h_c h_c') A_(c',j) / r.
 * Pinned contacts (structurally zero end slip) keep the fixed direction. */
static void evaluate_rows(pp_plus_solver *s, const plus_call *c, int nu, const double *x,
                          int impending_exact, int want_jacobian, double *F)
{
    const int n = c->n, ld = s->ld;
    const double sc = c->row_scale;
    expand_impulse(s, c, x);
    if (want_jacobian)
        for (int j = 0; j < nu; ++j) memset(s->B + (size_t)j * (size_t)ld, 0, sizeof(double) * (size_t)nu);
    for (int u = 0; u < nu; ++u) {
        const int i = s->component_of[u], k = i / 3, comp = i % 3;
        const double *Arow = c->A + (size_t)i * (size_t)n;
        const int fr = s->friction[k];
        if (comp == PP_PLUS_Z || fr == PP_PLUS_ROLLING) {
            /* (2.3), (2.7): drive the velocity component to zero. */
            F[u] = s->v[i] + s->dv[i];
            if (want_jacobian)
                for (int w = 0; w < nu; ++w) s->B[u + (size_t)w * ld] = Arow[s->component_of[w]];
            continue;
        }
        /* (2.8): pi_c + mu P h_c = 0, h the slip direction. */
        const double mu = c->p->params[k].mu;
        const double P = s->pi_step[3 * k + PP_PLUS_Z];
        const int zu = s->unknown_of[3 * k + PP_PLUS_Z];
        double h[2] = {s->dir[2 * k], s->dir[2 * k + 1]};
        double r = 0.0;
        const int curved = fr == PP_PLUS_IMPENDING && impending_exact && !s->pinned[k];
        if (curved) {
            const double d0 = s->v[3 * k] + s->dv[3 * k], d1 = s->v[3 * k + 1] + s->dv[3 * k + 1];
            r = sqrt(d0 * d0 + d1 * d1 + c->slip_eps * c->slip_eps);
            h[0] = d0 / r;
            h[1] = d1 / r;
        }
        F[u] = sc * (s->pi_step[i] + mu * P * h[comp]);
        if (!want_jacobian) continue;
        s->B[u + (size_t)u * ld] += sc;
        if (zu >= 0) s->B[u + (size_t)zu * ld] += sc * mu * h[comp];
        if (curved) {
            const double *A0 = c->A + (size_t)(3 * k) * (size_t)n;
            const double *A1 = c->A + (size_t)(3 * k + 1) * (size_t)n;
            const double g0 = (comp == 0 ? 1.0 : 0.0) - h[comp] * h[0];
            const double g1 = (comp == 1 ? 1.0 : 0.0) - h[comp] * h[1];
            const double f = sc * mu * P / r;
            for (int w = 0; w < nu; ++w) {
                const int j = s->component_of[w];
                s->B[u + (size_t)w * ld] += f * (g0 * A0[j] + g1 * A1[j]);
            }
        }
    }
}

static double norm_inf(const double *x, int n)
{
    double r = 0.0;
    for (int i = 0; i < n; ++i) r = fmax(r, fabs(x[i]));
    return r;
}

static double norm2(const double *x, int n)
{
    double r = 0.0;
    for (int i = 0; i < n; ++i) r += x[i] * x[i];
    return sqrt(r);
}

/* Newton on the rows at the current regularisation: x <- x - J^+ F(x), with a
 * backtracking line search on ||F||_2 (halving down to 1/1024, then the step is taken).
 * Stops when ||F||_inf <= tol_rel * scale or at the iteration cap, and leaves the best
 * iterate in s->x. Returns its ||F||_inf / scale, or -1 on a numerical failure. */
static double newton_stage(pp_plus_solver *s, plus_call *c, int nu, double vscale,
                           double tol_rel, int *newton_iterations)
{
    double best = INFINITY, best_rel = INFINITY;
    for (int it = 0;; ++it) {
        evaluate_rows(s, c, nu, s->x, 1, 1, s->F);
        const double fnorm = norm2(s->F, nu);
        const double rel = norm_inf(s->F, nu) /
                           fmax(vscale, c->row_scale * norm_inf(s->pi_step, c->n));
        if (fnorm < best) {
            best = fnorm;
            best_rel = rel;
            memcpy(s->x_best, s->x, sizeof(double) * (size_t)nu);
        }
        if (rel <= tol_rel || it >= c->cfg->max_newton_iterations) break;
        for (int u = 0; u < nu; ++u) s->dx[u] = -s->F[u];
        if (!min_norm_solve(s, nu, c->cfg, s->dx)) return -1.0;
        ++*newton_iterations;
        double lambda = 1.0;
        for (;;) {
            for (int u = 0; u < nu; ++u) s->x_trial[u] = s->x[u] + lambda * s->dx[u];
            evaluate_rows(s, c, nu, s->x_trial, 1, 0, s->F_trial);
            if (norm2(s->F_trial, nu) < fnorm || lambda < 1.0 / 1024.0) break;
            lambda *= 0.5;
        }
        memcpy(s->x, s->x_trial, sizeof(double) * (size_t)nu);
    }
    memcpy(s->x, s->x_best, sizeof(double) * (size_t)nu);
    return best_rel;
}

/* Solve the rows of the current active set for x (s->x).
 * Linear rows: one min-norm solve from x = 0.
 * Impending rows: that first solve slides each impending contact along its guess
 * direction (the direction the cone-violating rolling impulse wanted). A contact whose
 * end slip is then zero to round-off has it zero for every pi (other rolling rows fix
 * it, as at the lightly loaded corners of V3): its friction sits on the cone in the
 * guessed direction and does no work, so it is pinned there. The others go to Newton
 * (newton_stage) from the first solve, with continuation in the regularisation speed.
 * Returns 0 on a numerical failure; counts Newton iterations. */
static int solve_rows(pp_plus_solver *s, plus_call *c, int nu, int *newton_iterations,
                      int *fallbacks)
{
    memset(s->x, 0, sizeof(double) * (size_t)nu);
    evaluate_rows(s, c, nu, s->x, 0, 1, s->F);
    for (int u = 0; u < nu; ++u) s->dx[u] = -s->F[u];
    if (!min_norm_solve(s, nu, c->cfg, s->dx)) return 0;
    for (int u = 0; u < nu; ++u) s->x[u] = s->dx[u];
    expand_impulse(s, c, s->x);

    const double vscale = fmax(norm_inf(s->v, c->n), c->cfg->v_transition);
    int any_impending = 0;
    for (int k = 0; k < c->m; ++k) {
        s->pinned[k] = 0;
        if (s->friction[k] != PP_PLUS_IMPENDING || s->unknown_of[3 * k] < 0) continue;
        const double d0 = s->v[3 * k] + s->dv[3 * k], d1 = s->v[3 * k + 1] + s->dv[3 * k + 1];
        if (hypot(d0, d1) <= 1e-10 * vscale) s->pinned[k] = 1;
        else any_impending = 1;
    }
    if (!any_impending) return 1;

    /* Continuation in the regularisation speed: eps runs from ~v_transition down to
     * slip_eps by factors of 10, each stage starting from the previous solution, so
     * Newton always starts where h(d) is well resolved. Intermediate stages stop at a
     * loose tolerance. */
    memcpy(s->x_fixed, s->x, sizeof(double) * (size_t)nu);
    const double eps_final = c->slip_eps;
    double eps = fmax(eps_final, fmax(c->cfg->v_transition, 1e-3 * vscale));
    double rel = INFINITY;
    for (;;) {
        c->slip_eps = eps;
        const int last = eps <= eps_final;
        rel = newton_stage(s, c, nu, vscale, last ? c->cfg->newton_tolerance : 1e-6,
                           newton_iterations);
        if (rel < 0.0 || last) break;
        eps = fmax(eps_final, 0.1 * eps);
    }
    c->slip_eps = eps_final;
    if (rel < 0.0) return 0;
    /* Near a vanishing end slip, round-off in d is amplified by 1/eps in h, so the
     * attainable residual is above newton_tolerance; PLUS_NEWTON_ACCEPT bounds it. When
     * Newton finds no root (the impending rows and the rest of the active set have no
     * common solution to that accuracy), the fixed-direction solution of the first
     * solve is kept: it satisfies every row, its friction is on the cone along the
     * direction the rolling impulse wanted, and the fallback is counted. */
    if (rel > PLUS_NEWTON_ACCEPT) {
        memcpy(s->x, s->x_fixed, sizeof(double) * (size_t)nu);
        for (int k = 0; k < c->m; ++k)
            if (s->friction[k] == PP_PLUS_IMPENDING && !s->pinned[k] && s->unknown_of[3 * k] >= 0) {
                s->pinned[k] = 1;
                ++*fallbacks;
            }
    }
    expand_impulse(s, c, s->x);
    /* Keep the end-slip direction as the guess for the next pass. */
    for (int k = 0; k < c->m; ++k) {
        if (s->friction[k] != PP_PLUS_IMPENDING || s->pinned[k]) continue;
        const double d0 = s->v[3 * k] + s->dv[3 * k], d1 = s->v[3 * k + 1] + s->dv[3 * k + 1];
        const double dn = hypot(d0, d1);
        if (dn > 0.0) {
            s->dir[2 * k] = d0 / dn;
            s->dir[2 * k + 1] = d1 / dn;
        }
    }
    return 1;
}

/* Algorithm 1 tests on the solution in s->pi_step: compressing-active normals must be
 * repulsive (pi_z >= 0, eq. 2.5) and rolling impulses must lie in the cone (2.6).
 * Writes each contact's violation and returns the worst. */
static double find_violations(pp_plus_solver *s, const plus_call *c)
{
    const double tol = PLUS_VIOLATION_TOL * norm_inf(s->pi_step, c->n);
    double worst = 0.0;
    for (int k = 0; k < c->m; ++k) {
        double viol = 0.0;
        const double pz = s->pi_step[3 * k + PP_PLUS_Z];
        if (s->cls[k] == CLASS_COMPRESSING && s->normal_active[k] && pz < -tol) viol = -pz;
        if (s->friction[k] == PP_PLUS_ROLLING) {
            const double excess =
                hypot(s->pi_step[3 * k], s->pi_step[3 * k + 1]) - c->p->params[k].mu * fmax(pz, 0.0);
            if (excess > tol) viol = fmax(viol, excess);
        }
        s->violation[k] = viol;
        worst = fmax(worst, viol);
    }
    return worst;
}

/* Algorithm 1 release rule (§3b): a rolling contact becomes impending (its rolling rows
 * leave the active set); a sliding or impending compressing contact loses its normal
 * (and with pi_z = 0 its friction). Contacts tied with the worst are released together. */
static void release_worst(pp_plus_solver *s, const plus_call *c, double worst)
{
    for (int k = 0; k < c->m; ++k) {
        if (s->violation[k] <= 0.0 || s->violation[k] < worst * (1.0 - PLUS_TIE_FRACTION)) continue;
        if (s->friction[k] == PP_PLUS_ROLLING) {
            /* Initial impending direction: opposite to the rolling impulse that did not
             * fit in the cone; Newton then finds the end-of-interval slip. */
            double g0 = -s->pi_step[3 * k], g1 = -s->pi_step[3 * k + 1];
            double gn = hypot(g0, g1);
            if (!(gn > 0.0)) {
                g0 = s->v[3 * k];
                g1 = s->v[3 * k + 1];
                gn = hypot(g0, g1);
            }
            if (gn > 0.0) {
                s->dir[2 * k] = g0 / gn;
                s->dir[2 * k + 1] = g1 / gn;
            } else {
                s->dir[2 * k] = 1.0;
                s->dir[2 * k + 1] = 0.0;
            }
            s->friction[k] = PP_PLUS_IMPENDING;
        } else {
            s->normal_active[k] = 0;
            s->friction[k] = PP_PLUS_FRICTION_NONE;
        }
    }
}

/* Step length of one sliding contact from v0 = v_xy(start), delta = (A pi)_xy:
 *  - alpha = 1 when |v0 + delta| < v_transition (paper §2d: no small terminal interval);
 *  - alpha_CP = clamp(-v0.delta / |delta|^2, 0, 1) (2.13) when the closest point of the
 *    segment lies inside the transition circle (2.12);
 *  - alpha_DC solving (2.14) when the direction turns by more than theta_max. In the
 *    tangent plane the solution is where the segment meets the ray u = R(+-theta) v0/|v0|
 *    (rotated towards delta): v0 + alpha delta = t u, so crossing with u gives
 *    alpha = (u x v0) / (delta x u); this is the positive root of the quadratic
 *    (q^2 - c^2 p r) a^2 + 2pq(1 - c^2) a + p^2(1 - c^2) = 0 (Eq 2.14 squared) on that side.
 *    It is clamped to [alpha_min, 1].  */
static double sliding_step(const plus_call *c, const double v0[2], const double delta[2],
                           pp_plus_step_limit *limit)
{
    const double vtr = c->cfg->v_transition;
    const double v1[2] = {v0[0] + delta[0], v0[1] + delta[1]};
    *limit = PP_PLUS_LIMIT_NONE;
    if (hypot(v1[0], v1[1]) < vtr) return 1.0;
    const double dd = delta[0] * delta[0] + delta[1] * delta[1];
    const double p = v0[0] * v0[0] + v0[1] * v0[1];
    if (!(dd > 1e-28 * p) || !(p > 0.0)) return 1.0;
    double acp = -(v0[0] * delta[0] + v0[1] * delta[1]) / dd;
    acp = fmin(fmax(acp, 0.0), 1.0);
    if (hypot(v0[0] + acp * delta[0], v0[1] + acp * delta[1]) < vtr) {
        *limit = PP_PLUS_LIMIT_CLOSEST_POINT;
        return acp;
    }
    const double cth = cos(c->cfg->theta_max), sth = sin(c->cfg->theta_max);
    const double n1 = hypot(v1[0], v1[1]), n0 = sqrt(p);
    if (v0[0] * v1[0] + v0[1] * v1[1] >= cth * n0 * n1) return 1.0;
    const double turn = v0[0] * delta[1] - v0[1] * delta[0];
    const double sgn = turn >= 0.0 ? 1.0 : -1.0;
    const double u[2] = {(cth * v0[0] - sgn * sth * v0[1]) / n0, (sgn * sth * v0[0] + cth * v0[1]) / n0};
    const double num = u[0] * v0[1] - u[1] * v0[0];
    const double den = delta[0] * u[1] - delta[1] * u[0];
    double adc = (den != 0.0) ? num / den : 1.0;
    if (!(adc > 0.0) || adc > 1.0) adc = 1.0;
    adc = fmax(adc, c->cfg->alpha_min);
    *limit = PP_PLUS_LIMIT_DIRECTION_CHANGE;
    return adc;
}

/* alpha = min over sliding contacts (§2e; rolling and impending contacts do not limit). */
static double step_length(pp_plus_solver *s, const plus_call *c, pp_plus_step_limit *limit,
                          int *limiting)
{
    double alpha = 1.0;
    *limit = PP_PLUS_LIMIT_NONE;
    *limiting = -1;
    for (int k = 0; k < c->m; ++k) {
        if (s->friction[k] != PP_PLUS_SLIDING) continue;
        const double v0[2] = {s->v[3 * k], s->v[3 * k + 1]};
        const double delta[2] = {s->dv[3 * k], s->dv[3 * k + 1]};
        pp_plus_step_limit lk;
        const double ak = sliding_step(c, v0, delta, &lk);
        if (ak < alpha) {
            alpha = ak;
            *limit = lk;
            *limiting = k;
        }
    }
    if (alpha > 1.0 - PLUS_ALPHA_SLIVER) {
        alpha = 1.0;
        *limit = PP_PLUS_LIMIT_NONE;
        *limiting = -1;
    }
    return alpha;
}

/* Classify friction at the start of an interval (§3b): sliding when |v_xy| >=
 * v_transition, otherwise rolling; none for observers and frictionless contacts. */
static void start_interval(pp_plus_solver *s, const plus_call *c)
{
    for (int k = 0; k < c->m; ++k) {
        s->normal_active[k] = (s->cls[k] == CLASS_COMPRESSING);
        s->friction[k] = PP_PLUS_FRICTION_NONE;
        if (s->cls[k] == CLASS_OBSERVING || c->p->params[k].mu == 0.0) continue;
        const double vx = s->v[3 * k], vy = s->v[3 * k + 1], sp = hypot(vx, vy);
        if (sp >= c->cfg->v_transition && sp > 0.0) {
            s->friction[k] = PP_PLUS_SLIDING;
            s->dir[2 * k] = vx / sp;
            s->dir[2 * k + 1] = vy / sp;
        } else {
            s->friction[k] = PP_PLUS_ROLLING;
        }
    }
}

/* Algorithm 1: the active-set loop of one interval. On return s->pi_step and s->dv hold
 * the accepted pi and A pi. Returns 0 on a numerical failure. */
static int solve_interval(pp_plus_solver *s, plus_call *c, pp_plus_interval_record *rec)
{
    const int max_passes =
        c->cfg->max_active_set_passes > 0 ? c->cfg->max_active_set_passes : 3 * c->m + 2;
    start_interval(s, c);
    rec->active_set_passes = 0;
    rec->newton_iterations = 0;
    rec->impending_fallbacks = 0;
    for (;;) {
        const int nu = number_unknowns(s, c);
        if (!solve_rows(s, c, nu, &rec->newton_iterations, &rec->impending_fallbacks)) return 0;
        ++rec->active_set_passes;
        const double worst = find_violations(s, c);
        if (worst <= 0.0) break;
        if (rec->active_set_passes >= max_passes) {
            c->caps |= PP_PLUS_CAP_ACTIVE_SET;
            break;
        }
        release_worst(s, c, worst);
    }
    for (int i = 0; i < c->n; ++i)
        if (!isfinite(s->pi_step[i]) || !isfinite(s->dv[i])) return 0;
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* Rounds                                                                                 */
/* ------------------------------------------------------------------------------------ */

static void record_interval(pp_plus_solver *s, const plus_call *c, pp_plus_trace *tr,
                            int interval_index, const pp_plus_interval_record *rec, double alpha)
{
    if (!tr) return;
    if (interval_index >= tr->interval_capacity || !tr->intervals || !tr->contacts) {
        tr->truncated = 1;
        return;
    }
    tr->intervals[interval_index] = *rec;
    for (int k = 0; k < c->m; ++k) {
        pp_plus_contact_record *r = &tr->contacts[(size_t)interval_index * (size_t)c->m + (size_t)k];
        switch (s->cls[k]) {
        case CLASS_COMPRESSING:
            r->normal = s->normal_active[k] ? PP_PLUS_COMPRESSING : PP_PLUS_COMPRESSING_RELEASED;
            break;
        case CLASS_EXPANDING: r->normal = PP_PLUS_EXPANDING; break;
        default: r->normal = PP_PLUS_OBSERVING; break;
        }
        r->friction = (pp_plus_friction_state)s->friction[k];
        r->cor = s->cor[k];
        for (int i = 0; i < 3; ++i) {
            r->impulse[i] = alpha * s->pi_step[3 * k + i];
            r->velocity_start[i] = s->v_start[3 * k + i];
            r->velocity_end[i] = s->v[3 * k + i];
        }
    }
    tr->interval_count = interval_index + 1;
}

/* Start of a round (Algorithm 2): e_k from the current normal velocity; the expansion
 * impulse accumulated last round becomes this round's known expansion; points with
 * expansion left expand, approaching points compress, the rest observe. Returns the
 * number of non-observing points. */
static int classify_round(pp_plus_solver *s, const plus_call *c)
{
    const double negligible = PLUS_EXPANSION_NEGLIGIBLE * norm_inf(s->pi_total, c->n);
    int active = 0;
    for (int k = 0; k < c->m; ++k) {
        const double vz = s->v[3 * k + PP_PLUS_Z];
        s->cor[k] = pp_plus_cor(&c->p->params[k], -vz);
        s->pi_exp[k] = s->pi_acc[k] > negligible ? s->pi_acc[k] : 0.0;
        s->pi_acc[k] = 0.0;
        if (s->pi_exp[k] > 0.0) s->cls[k] = CLASS_EXPANDING;
        else if (vz < -c->cfg->approach_tolerance) s->cls[k] = CLASS_COMPRESSING;
        else s->cls[k] = CLASS_OBSERVING;
        if (s->cls[k] != CLASS_OBSERVING) ++active;
    }
    return active;
}

/* Intervals of one round until alpha = 1 (Algorithm 2 inner loop):
 *   pi_total += alpha pi;  v += alpha A pi;  pi_exp *= (1 - alpha);
 *   pi_acc += e alpha pi_z at compressing points (Poisson, 2.4).
 * Returns PP_OK, PP_ERR_NUMERICAL, or PP_ERR_SOLVER at the interval cap. */
static pp_status run_round(pp_plus_solver *s, plus_call *c, int round, pp_plus_result *res)
{
    pp_plus_trace *tr = res->trace;
    const int first = res->intervals;
    for (int count = 0;; ++count) {
        if (count >= c->cfg->max_intervals) {
            c->caps |= PP_PLUS_CAP_INTERVALS;
            return PP_ERR_SOLVER;
        }
        pp_plus_interval_record rec;
        memset(&rec, 0, sizeof rec);
        rec.round = round;
        if (!solve_interval(s, c, &rec)) return PP_ERR_NUMERICAL;
        const double alpha = step_length(s, c, &rec.limit, &rec.limiting_contact);
        rec.alpha = alpha;
        memcpy(s->v_start, s->v, sizeof(double) * (size_t)c->n);
        for (int i = 0; i < c->n; ++i) {
            s->pi_total[i] += alpha * s->pi_step[i];
            s->v[i] += alpha * s->dv[i];
        }
        for (int k = 0; k < c->m; ++k) {
            if (s->cls[k] == CLASS_EXPANDING) s->pi_exp[k] *= (1.0 - alpha);
            else if (s->cls[k] == CLASS_COMPRESSING && s->normal_active[k])
                s->pi_acc[k] += s->cor[k] * alpha * s->pi_step[3 * k + PP_PLUS_Z];
        }
        record_interval(s, c, tr, res->intervals, &rec, alpha);
        ++res->intervals;
        res->impending_fallbacks += rec.impending_fallbacks;
        if (tr && round < tr->round_capacity && tr->rounds) {
            tr->rounds[round].first_interval = first;
            tr->rounds[round].interval_count = count + 1;
            tr->round_count = round + 1;
        } else if (tr) {
            tr->truncated = 1;
        }
        if (alpha == 1.0) return PP_OK;
    }
}

pp_status pp_plus_solve(pp_plus_solver *solver, const pp_plus_config *config,
                        const pp_plus_problem *problem, pp_plus_result *result)
{
    if (!solver || !problem || !result) {
        pp_log(PP_LOG_ERROR, "pp_plus_solve: NULL solver, problem or result");
        return PP_ERR_NULL_ARGUMENT;
    }
    const pp_plus_config defaults = pp_plus_config_default();
    const pp_plus_config *cfg = config ? config : &defaults;
    pp_status st = validate_config(cfg);
    if (st != PP_OK) return st;
    const int m = problem->contact_count;
    if (m < 0 || m > solver->capacity) {
        pp_log(PP_LOG_ERROR, "pp_plus_solve: %d contacts, solver capacity is %d", m,
               solver->capacity);
        return PP_ERR_INVALID_ARGUMENT;
    }
    if (m > 0 && (!problem->delassus || !problem->velocity || !problem->params || !result->impulse)) {
        pp_log(PP_LOG_ERROR, "pp_plus_solve: NULL delassus, velocity, params or result impulse");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (m > 0 && (st = validate_problem(problem)) != PP_OK) return st;

    pp_plus_solver *s = solver;
    plus_call c;
    c.cfg = cfg;
    c.p = problem;
    c.m = m;
    c.n = 3 * m;
    c.A = problem->delassus;
    c.caps = 0;
    c.row_scale = 0.0;
    for (int i = 0; i < c.n; ++i) c.row_scale = fmax(c.row_scale, c.A[(size_t)i * (size_t)c.n + (size_t)i]);
    if (!(c.row_scale > 0.0)) c.row_scale = 1.0;
    c.slip_eps = 1e-6 * cfg->v_transition;
    for (int i = 0; i < c.n; ++i) c.slip_eps = fmax(c.slip_eps, 1e-12 * fabs(problem->velocity[i]));
    if (!(c.slip_eps > 0.0)) c.slip_eps = 1e-300;

    result->rounds = 0;
    result->intervals = 0;
    result->caps = 0;
    result->impending_fallbacks = 0;
    result->kinetic_energy_change = 0.0;
    if (result->trace) {
        result->trace->round_count = 0;
        result->trace->interval_count = 0;
        result->trace->truncated = 0;
    }
    if (m > 0) {
        memcpy(s->v, problem->velocity, sizeof(double) * (size_t)c.n);
        memset(s->pi_total, 0, sizeof(double) * (size_t)c.n);
        memset(s->pi_acc, 0, sizeof(double) * (size_t)m);
    }

    st = PP_OK;
    for (int round = 0; m > 0; ++round) {
        if (classify_round(s, &c) == 0) break;
        if (round >= cfg->max_rounds) {
            c.caps |= PP_PLUS_CAP_ROUNDS;
            st = PP_ERR_SOLVER;
            break;
        }
        ++result->rounds;
        st = run_round(s, &c, round, result);
        if (st != PP_OK) break;
    }
    if (st == PP_OK && c.caps) st = PP_ERR_SOLVER;

    /* Outputs: the impulse applied so far (always finite: an interval is committed only
     * after its pi and A pi were checked), A pi, and dKE = pi . v0 + 1/2 pi^T A pi. */
    double dke = 0.0;
    for (int i = 0; i < c.n; ++i) {
        double api = 0.0;
        for (int j = 0; j < c.n; ++j) api += c.A[(size_t)i * (size_t)c.n + (size_t)j] * s->pi_total[j];
        s->dv[i] = api;
        dke += s->pi_total[i] * (problem->velocity[i] + 0.5 * api);
    }
    int finite = isfinite(dke);
    for (int i = 0; i < c.n && finite; ++i) finite = isfinite(s->pi_total[i]) && isfinite(s->dv[i]);
    if (!finite) {
        for (int i = 0; i < c.n; ++i) {
            result->impulse[i] = 0.0;
            if (result->velocity_change) result->velocity_change[i] = 0.0;
        }
        pp_log(PP_LOG_ERROR, "pp_plus_solve: non-finite accumulated impulse; nothing applied");
        return PP_ERR_NUMERICAL;
    }
    for (int i = 0; i < c.n; ++i) {
        result->impulse[i] = s->pi_total[i];
        if (result->velocity_change) result->velocity_change[i] = s->dv[i];
    }
    result->kinetic_energy_change = dke;
    result->caps = c.caps;
    if (st == PP_ERR_NUMERICAL)
        pp_log(PP_LOG_WARNING, "pp_plus_solve: an interval was not finite; the impulse before it is returned");
    return st;
}

/*
 * The energy invariant of an impact (pegplus/impact.h, pp_plus_limit_energy). Along the ray
 * s pi of PLUS's answer the energy change is
 *     dE(s) = s a + 1/2 s^2 b,   a = pi . v,   b = pi^T A pi >= 0,
 * a parabola through dE(0) = 0. For e <= 1 PLUS's answer has dE(1) <= 0 (the paper's energy
 * consistency). When it does not (beyond round-off), the answer is scaled to the other root
 * s* = -2a/b (a < 0), where dE = 0: the most elastic impulse along PLUS's direction that
 * gains nothing (for one frictionless contact, the restitution capped at 1). The scaled
 * impulse keeps its normal sign and stays in the friction cone (a cone), and the contacts
 * separate no faster than PLUS's answer. With a >= 0 the impulse does not oppose the
 * approach at all, and nothing is applied (s* = 0; the time stepper stops what approaches,
 * inelastically).
 */
int pp_plus_limit_energy(const pp_plus_problem *problem, pp_plus_result *result)
{
    if (!problem || !result || !result->impulse || problem->contact_count <= 0) return 0;
    const int n = 3 * problem->contact_count;
    const double *A = problem->delassus, *v = problem->velocity;
    double *pi = result->impulse;
    double a = 0.0, b = 0.0;
    for (int i = 0; i < n; ++i) {
        double api = 0.0;
        for (int j = 0; j < n; ++j) api += A[(size_t)i * (size_t)n + (size_t)j] * pi[j];
        a += pi[i] * v[i];
        b += pi[i] * api;
    }
    const double de = a + 0.5 * b;
    if (!(de > PP_PLUS_ENERGY_ROUNDOFF * (fabs(a) + 0.5 * fabs(b)))) {
        result->kinetic_energy_change = de;
        return 0;
    }
    const double s = a < 0.0 && b > 0.0 ? -2.0 * a / b : 0.0;
    for (int i = 0; i < n; ++i) {
        pi[i] *= s;
        if (result->velocity_change) result->velocity_change[i] *= s;
    }
    result->kinetic_energy_change = s * a + 0.5 * s * s * b;
    return 1;
}
