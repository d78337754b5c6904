/*
 * PLUS in joint space (pegplus/impact.h "Joint space"): the Delassus operator of contacts
 * on bodies joined by bilateral rows, A = G W_c G^T, and the velocity change du = W_c G^T pi
 * that keeps the rows, J_E du = 0 (the paper's eq. 2.1a-b with the joint impulse pi_b
 * eliminated).
 *
 * With V = J_E W G^T (row-space coupling of the joints to the contacts) and K = J_E W J_E^T,
 *     A  = G W G^T - V^T K^-1 V,         p_E = -K^-1 V pi,
 *     du = W G^T pi + W J_E^T p_E.
 * K is factored once per impact. The rows are first scaled to a unit diagonal,
 * K~ = S K S with S = diag(K_ee^-1/2) (the rows mix m/s and rad/s, and scaling a row does not
 * change its span), then factored by Cholesky with complete pivoting and rank detection
 * (LAPACK dpstrf): P^T K~ P = L L^T on the first r pivots, stopping when the largest pivot
 * left (the squared mass-metric norm of a row's part independent of the rows already kept,
 * relative to its own norm) is below PLUS_JOINT_RANK_TOL. The kept rows span the same
 * constraint space as all of them, so with Y = L^-1 (P^T S V)_(1..r)
 *     A = G W G^T - Y^T Y,               p~ = -L^-T Y pi,  p_E(piv_j) = S p~_j,
 * the rigid limit of (K + eps I)^-1 as eps -> 0 on the rows' span.
 */
#include "pegplus/impact.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A row whose part independent of the kept rows has a squared relative size below this is
 * taken as redundant: independence below 1e-5 would otherwise amplify round-off by ~1e10. */
#define PLUS_JOINT_RANK_TOL 1e-10

struct pp_plus_joint_space {
    int row_count, active, rank, n; /* rows; rows with K_ee > 0; kept; 3 x contacts */
    int row_capacity, n_capacity;
    double *wj;     /* 12 per row: W_b row[side] for each side (0 for none) */
    double *K;      /* active^2: K~, then its Cholesky factor (lower, column-major) */
    double *V;      /* row_count x n, column-major: J_E W G^T */
    double *Y;      /* rank x n, column-major */
    double *scale;  /* per row: K_ee^-1/2, 0 for a row that constrains nothing */
    double *t;      /* rank: scratch of the velocity change */
    double *work;   /* 2 x rows: dpstrf's workspace */
    int *act;       /* active -> row */
    lapack_int *piv;/* active: pivots of dpstrf (1-based into act) */
};

pp_status pp_plus_joint_space_create(pp_plus_joint_space **out)
{
    if (!out) {
        pp_log(PP_LOG_ERROR, "pp_plus_joint_space_create: NULL output pointer");
        return PP_ERR_NULL_ARGUMENT;
    }
    *out = calloc(1, sizeof **out);
    return *out ? PP_OK : PP_ERR_NO_MEMORY;
}

void pp_plus_joint_space_destroy(pp_plus_joint_space *js)
{
    if (!js) return;
    free(js->wj);
    free(js->K);
    free(js->V);
    free(js->Y);
    free(js->scale);
    free(js->t);
    free(js->work);
    free(js->act);
    free(js->piv);
    free(js);
}

int pp_plus_joint_space_rank(const pp_plus_joint_space *js)
{
    return js ? js->rank : 0;
}

static int grow(void **p, size_t count, size_t size)
{
    void *q = realloc(*p, (count ? count : 1) * size);
    if (!q) return 0;
    *p = q;
    return 1;
}

static pp_status reserve(pp_plus_joint_space *js, int rows, int n)
{
    int ok = 1;
    if (rows > js->row_capacity) {
        const size_t r = (size_t)rows;
        ok = grow((void **)&js->wj, 12 * r, sizeof(double)) &&
             grow((void **)&js->K, r * r, sizeof(double)) &&
             grow((void **)&js->scale, r, sizeof(double)) &&
             grow((void **)&js->t, r, sizeof(double)) &&
             grow((void **)&js->work, 2 * r, sizeof(double)) &&
             grow((void **)&js->act, r, sizeof(int)) &&
             grow((void **)&js->piv, r, sizeof(lapack_int));
        if (ok) js->row_capacity = rows;
        js->n_capacity = 0; /* V and Y depend on both sizes */
    }
    if (ok && n > js->n_capacity) {
        const size_t size = (size_t)js->row_capacity * (size_t)(n > 0 ? n : 1);
        ok = grow((void **)&js->V, size, sizeof(double)) && grow((void **)&js->Y, size, sizeof(double));
        if (ok) js->n_capacity = n;
    }
    if (!ok) {
        pp_log(PP_LOG_ERROR, "pp_plus_delassus_constrained: out of memory for %d rows and %d "
                             "contact components", rows, n);
        return PP_ERR_NO_MEMORY;
    }
    return PP_OK;
}

/* out = W_b g for body b's 6-row g (W_b = diag(inverse_mass I3, inverse_inertia)). */
static void apply_w(const pp_plus_body *b, const double g[6], double out[6])
{
    for (int i = 0; i < 3; ++i) out[i] = b->inverse_mass * g[i];
    for (int i = 0; i < 3; ++i)
        out[3 + i] = b->inverse_inertia[3 * i] * g[3] + b->inverse_inertia[3 * i + 1] * g[4] +
                     b->inverse_inertia[3 * i + 2] * g[5];
}

static double dot6(const double a[6], const double b[6])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

static pp_status check_rows(int body_count, int row_count, const pp_plus_bilateral_row *rows)
{
    for (int e = 0; e < row_count; ++e) {
        const pp_plus_bilateral_row *r = &rows[e];
        int ok = r->body[0] >= -1 && r->body[0] < body_count && r->body[1] >= -1 &&
                 r->body[1] < body_count && (r->body[0] < 0 || r->body[0] != r->body[1]);
        for (int s = 0; s < 2 && ok; ++s)
            for (int i = 0; i < 6; ++i) ok = ok && isfinite(r->row[s][i]);
        if (!ok) {
            pp_log(PP_LOG_ERROR, "pp_plus_delassus_constrained: bilateral row %d: bodies (%d, "
                                 "%d) invalid for %d bodies, or a non-finite entry",
                   e, r->body[0], r->body[1], body_count);
            return PP_ERR_INVALID_ARGUMENT;
        }
    }
    return PP_OK;
}

pp_status pp_plus_delassus_constrained(pp_plus_joint_space *js, int body_count,
                                       const pp_plus_body *bodies, int row_count,
                                       const pp_plus_bilateral_row *rows, int contact_count,
                                       const pp_plus_contact_jacobian *jac, double *A)
{
    if (!js || (row_count > 0 && !rows)) {
        pp_log(PP_LOG_ERROR, "pp_plus_delassus_constrained: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (row_count < 0) {
        pp_log(PP_LOG_ERROR, "pp_plus_delassus_constrained: negative row count");
        return PP_ERR_INVALID_ARGUMENT;
    }
    js->row_count = js->active = js->rank = 0;
    pp_status st = pp_plus_delassus(body_count, bodies, contact_count, jac, A); /* G W G^T */
    if (st != PP_OK || row_count == 0) return st;
    st = check_rows(body_count, row_count, rows);
    const int n = 3 * contact_count;
    if (st == PP_OK) st = reserve(js, row_count, n);
    if (st != PP_OK) return st;
    js->row_count = row_count;
    js->n = n;

    /* W J_E^T, side by side */
    for (int e = 0; e < row_count; ++e)
        for (int s = 0; s < 2; ++s) {
            double *w = &js->wj[12 * (size_t)e + 6 * s];
            const int b = rows[e].body[s];
            if (b >= 0) apply_w(&bodies[b], rows[e].row[s], w);
            else memset(w, 0, 6 * sizeof *w);
        }
    /* rows that move something: K_ee > 0 */
    int na = 0;
    for (int e = 0; e < row_count; ++e) {
        double kee = 0.0;
        for (int s = 0; s < 2; ++s)
            if (rows[e].body[s] >= 0) kee += dot6(rows[e].row[s], &js->wj[12 * (size_t)e + 6 * s]);
        js->scale[e] = kee > 0.0 ? 1.0 / sqrt(kee) : 0.0;
        if (kee > 0.0) js->act[na++] = e;
    }
    js->active = na;
    if (na == 0) return PP_OK;

    /* K~ = S J_E W J_E^T S on the active rows (column-major, both triangles) */
    for (int j = 0; j < na; ++j)
        for (int i = 0; i < na; ++i) {
            const int e = js->act[i], f = js->act[j];
            double sum = 0.0;
            for (int s = 0; s < 2; ++s) {
                if (rows[e].body[s] < 0) continue;
                for (int t = 0; t < 2; ++t)
                    if (rows[f].body[t] == rows[e].body[s])
                        sum += dot6(rows[e].row[s], &js->wj[12 * (size_t)f + 6 * t]);
            }
            js->K[i + (size_t)j * na] = js->scale[e] * sum * js->scale[f];
        }
    /* V = S J_E W G^T (row e, contact component c), column-major with leading dimension na */
    for (int c = 0; c < n; ++c) {
        const int k = c / 3, comp = c % 3;
        for (int i = 0; i < na; ++i) {
            const int e = js->act[i];
            double sum = 0.0;
            for (int s = 0; s < 2; ++s) {
                if (rows[e].body[s] < 0) continue;
                for (int t = 0; t < 2; ++t)
                    if (jac[k].body[t] == rows[e].body[s])
                        sum += dot6(jac[k].row[comp][t], &js->wj[12 * (size_t)e + 6 * s]);
            }
            js->V[i + (size_t)c * na] = js->scale[e] * sum;
        }
    }

    lapack_int rank = 0;
    lapack_int info = LAPACKE_dpstrf_work(LAPACK_COL_MAJOR, 'L', na, js->K, na, js->piv, &rank,
                                          PLUS_JOINT_RANK_TOL, js->work);
    if (info < 0) {
        pp_log(PP_LOG_ERROR, "pp_plus_delassus_constrained: dpstrf failed (%d)", (int)info);
        return PP_ERR_NUMERICAL;
    }
    js->rank = (int)rank; /* info > 0: rank deficient, the first `rank` pivots are kept */
    if (rank == 0) return PP_OK;

    /* Y = L^-1 (P^T V)_(1..r), then A -= Y^T Y */
    for (int c = 0; c < n; ++c)
        for (int j = 0; j < rank; ++j)
            js->Y[j + (size_t)c * rank] = js->V[(js->piv[j] - 1) + (size_t)c * na];
    if (n > 0) {
        info = LAPACKE_dtrtrs_work(LAPACK_COL_MAJOR, 'L', 'N', 'N', rank, n, js->K, na, js->Y,
                                   rank);
        if (info != 0) {
            pp_log(PP_LOG_ERROR, "pp_plus_delassus_constrained: dtrtrs failed (%d)", (int)info);
            return PP_ERR_NUMERICAL;
        }
    }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            const double *yi = &js->Y[(size_t)i * rank], *yj = &js->Y[(size_t)j * rank];
            double sum = 0.0;
            for (int r = 0; r < rank; ++r) sum += yi[r] * yj[r];
            A[(size_t)i * n + j] -= sum;
        }
    for (int i = 0; i < n * n; ++i)
        if (!isfinite(A[i])) {
            pp_log(PP_LOG_ERROR, "pp_plus_delassus_constrained: non-finite Delassus entry");
            return PP_ERR_NUMERICAL;
        }
    return PP_OK;
}

pp_status pp_plus_body_velocity_change_constrained(const pp_plus_joint_space *js,
                                                   int body_count, const pp_plus_body *bodies,
                                                   int row_count,
                                                   const pp_plus_bilateral_row *rows,
                                                   int contact_count,
                                                   const pp_plus_contact_jacobian *jac,
                                                   const double *pi, double *dnu,
                                                   double *row_impulse)
{
    if (!js || (row_count > 0 && !rows)) {
        pp_log(PP_LOG_ERROR, "pp_plus_body_velocity_change_constrained: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (row_count != js->row_count || (row_count > 0 && 3 * contact_count != js->n)) {
        pp_log(PP_LOG_ERROR, "pp_plus_body_velocity_change_constrained: %d rows and %d contacts "
                             "differ from the factored problem", row_count, contact_count);
        return PP_ERR_INVALID_ARGUMENT;
    }
    pp_status st = pp_plus_body_velocity_change(body_count, bodies, contact_count, jac, pi, dnu);
    if (st != PP_OK) return st;
    if (row_impulse)
        for (int e = 0; e < row_count; ++e) row_impulse[e] = 0.0;
    const int r = js->rank, n = js->n;
    if (r == 0) return PP_OK;
    /* t = Y pi, then L^T t' = t */
    double *t = js->t;
    for (int j = 0; j < r; ++j) {
        double sum = 0.0;
        for (int c = 0; c < n; ++c) sum += js->Y[j + (size_t)c * r] * pi[c];
        t[j] = sum;
    }
    lapack_int info = LAPACKE_dtrtrs_work(LAPACK_COL_MAJOR, 'L', 'T', 'N', r, 1, js->K,
                                          js->active, t, r);
    if (info != 0) return PP_ERR_NUMERICAL;
    /* du += W J_E^T p_E, p_E = -S P [t'; 0] */
    for (int j = 0; j < r; ++j) {
        const int e = js->act[js->piv[j] - 1];
        const double p = -js->scale[e] * t[j];
        if (!isfinite(p)) return PP_ERR_NUMERICAL;
        if (row_impulse) row_impulse[e] = p;
        for (int s = 0; s < 2; ++s) {
            const int b = rows[e].body[s];
            if (b < 0) continue;
            const double *w = &js->wj[12 * (size_t)e + 6 * s];
            for (int i = 0; i < 6; ++i) dnu[6 * (size_t)b + i] += w[i] * p;
        }
    }
    return PP_OK;
}

/*
 * nu -= W J_E^T K^-1 J_E nu: the M-orthogonal projection of the bodies' twists onto the
 * rows' null space, J_E nu = 0 (the kept rows span all of them, so the pivoted factor of
 * the last pp_plus_delassus_constrained serves: lambda = S P (L L^T)^-1 P^T S J_E nu).
 * The part removed, W J_E^T lambda, is M-orthogonal to every W_c G^T pi, so an impact's
 * kinetic energy change is that of the projected twists alone.
 */
pp_status pp_plus_joint_space_project(const pp_plus_joint_space *js, int body_count,
                                      const pp_plus_body *bodies, int row_count,
                                      const pp_plus_bilateral_row *rows, double *nu)
{
    (void)bodies;
    if (!js || !nu || (row_count > 0 && !rows)) {
        pp_log(PP_LOG_ERROR, "pp_plus_joint_space_project: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (row_count != js->row_count) {
        pp_log(PP_LOG_ERROR, "pp_plus_joint_space_project: %d rows differ from the factored "
                             "problem's %d", row_count, js->row_count);
        return PP_ERR_INVALID_ARGUMENT;
    }
    const int r = js->rank;
    if (r == 0) return PP_OK;
    double *t = js->t;
    for (int j = 0; j < r; ++j) {
        const int e = js->act[js->piv[j] - 1];
        double sum = 0.0;
        for (int s = 0; s < 2; ++s) {
            const int b = rows[e].body[s];
            if (b >= 0 && b < body_count) sum += dot6(rows[e].row[s], &nu[6 * (size_t)b]);
        }
        t[j] = js->scale[e] * sum;
    }
    lapack_int info = LAPACKE_dtrtrs_work(LAPACK_COL_MAJOR, 'L', 'N', 'N', r, 1, js->K,
                                          js->active, t, r);
    if (info == 0)
        info = LAPACKE_dtrtrs_work(LAPACK_COL_MAJOR, 'L', 'T', 'N', r, 1, js->K, js->active, t, r);
    if (info != 0) return PP_ERR_NUMERICAL;
    for (int j = 0; j < r; ++j) {
        const int e = js->act[js->piv[j] - 1];
        const double lambda = js->scale[e] * t[j];
        if (!isfinite(lambda)) return PP_ERR_NUMERICAL;
        for (int s = 0; s < 2; ++s) {
            const int b = rows[e].body[s];
            if (b < 0) continue;
            const double *w = &js->wj[12 * (size_t)e + 6 * s];
            for (int i = 0; i < 6; ++i) nu[6 * (size_t)b + i] -= w[i] * lambda;
        }
    }
    return PP_OK;
}
