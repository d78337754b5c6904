/*
 * Rescue: Lemke in double-double arithmetic.
 *
 * Some islands of the pile pass through bases with cond(B) > 1/u ~ 1e16 (a compliance-sized
 * pivot on top of another: opposite friction directions of one contact both basic while
 * the normal impulses of a face are spread by the compliance alone). There the refined
 * double-precision path ends on a basis that misses by 1e-8 (the exact solution of that
 * basis has z_B < 0), and the regularised retries only reach about the same. Run in ~32
 * digits, the same pivoting solves every such island of the pile to rel(z) ~ 1e-17
 * (measured). So when the double-precision solve fails, the whole path is run again in
 * double-double arithmetic (Dekker 1971; a value is an unevaluated sum hi + lo with
 * |lo| <= u |hi| / 2), revised form with an explicit B^-1 of double-doubles, no
 * refinement: O(n^2) double-double operations per pivot, ~40 times the cost of a double
 * pivot, which is why it is only the rescue. The data M, q, d are doubles, exact in this
 * arithmetic. Ties are a relative 1e-24 apart and pivots must exceed 1e-20 of the column,
 * the double-double analogues of tie_tol and pivot_tol.
 */
#include "lcp_internal.h"

#include <string.h>

typedef struct dd {
    double hi, lo;
} dd;

#define DD_PIVOT_TOL 1e-20
#define DD_TIE_TOL 1e-24

/* hi + lo with |lo| <= u |hi| / 2, when |e| <= |s| up to rounding (Dekker's fast sum). */
static inline dd dd_normalise(double s, double e)
{
    dd r;
    r.hi = s + e;
    r.lo = e - (r.hi - s);
    return r;
}

static inline dd dd_from(double a)
{
    dd r = {a, 0.0};
    return r;
}

/* a + b, accurate also under cancellation (both parts summed exactly, then renormalised). */
static inline dd dd_add(dd a, dd b)
{
    double s, e, t, f;
    two_sum(a.hi, b.hi, &s, &e);
    two_sum(a.lo, b.lo, &t, &f);
    e += t;
    dd r = dd_normalise(s, e);
    return dd_normalise(r.hi, r.lo + f);
}

static inline dd dd_neg(dd a)
{
    dd r = {-a.hi, -a.lo};
    return r;
}

static inline dd dd_mul(dd a, dd b)
{
    double p, e;
    two_product(a.hi, b.hi, &p, &e);
    e += a.hi * b.lo + a.lo * b.hi;
    return dd_normalise(p, e);
}

static inline dd dd_mul_d(dd a, double b)
{
    double p, e;
    two_product(a.hi, b, &p, &e);
    e += a.lo * b;
    return dd_normalise(p, e);
}

/* a / b by long division: three quotient digits. */
static inline dd dd_div(dd a, dd b)
{
    double q1 = a.hi / b.hi;
    dd r = dd_add(a, dd_neg(dd_mul_d(b, q1)));
    double q2 = r.hi / b.hi;
    r = dd_add(r, dd_neg(dd_mul_d(b, q2)));
    double q3 = r.hi / b.hi;
    return dd_add(dd_normalise(q1, q2), dd_from(q3));
}

static inline int dd_positive(dd a)
{
    return a.hi > 0.0 || (a.hi == 0.0 && a.lo > 0.0);
}

/* a <= b (1 + DD_TIE_TOL) for a, b >= 0: the tie band of the ratio test. */
static inline int dd_within_band(dd a, dd b)
{
    return dd_add(a, dd_neg(b)).hi <= DD_TIE_TOL * b.hi;
}

static inline int dd_less(dd a, dd b)
{
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

typedef struct extended_run {
    pp_lcp_workspace *ws;
    int n;
    const double *M, *q, *d;
    double *inv_hi, *inv_lo; /* B^-1, row-major, as hi + lo */
    double *x_hi, *x_lo;     /* basic solution */
    double *y_hi, *y_lo;     /* entering column */
} extended_run;

static dd ext_get(const double *hi, const double *lo, size_t i)
{
    dd r = {hi[i], lo[i]};
    return r;
}

static void ext_set(double *hi, double *lo, size_t i, dd v)
{
    hi[i] = v.hi;
    lo[i] = v.lo;
}

/* y = B^-1 a_v: a column of B^-1 for w_v, else -(B^-1 data) for z and z0. */
static void ext_entering_column(extended_run *e, int v)
{
    const int n = e->n;
    if (v < n) {
        for (int i = 0; i < n; ++i) {
            e->y_hi[i] = e->inv_hi[(size_t)i * n + v];
            e->y_lo[i] = e->inv_lo[(size_t)i * n + v];
        }
        return;
    }
    const double *data = v < 2 * n ? e->M + (size_t)(v - n) * n : e->d;
    for (int i = 0; i < n; ++i) {
        dd s = dd_from(0.0);
        const double *rh = &e->inv_hi[(size_t)i * n], *rl = &e->inv_lo[(size_t)i * n];
        for (int k = 0; k < n; ++k)
            if (data[k] != 0.0) {
                dd t = {rh[k], rl[k]};
                s = dd_add(s, dd_mul_d(t, data[k]));
            }
        ext_set(e->y_hi, e->y_lo, (size_t)i, dd_neg(s));
    }
}

static void ext_pivot(extended_run *e, int r)
{
    const int n = e->n;
    dd yr = ext_get(e->y_hi, e->y_lo, (size_t)r);
    dd inv = dd_div(dd_from(1.0), yr);
    dd theta = dd_mul(ext_get(e->x_hi, e->x_lo, (size_t)r), inv);
    double *rh = &e->inv_hi[(size_t)r * n], *rl = &e->inv_lo[(size_t)r * n];
    for (int k = 0; k < n; ++k) ext_set(rh, rl, (size_t)k, dd_mul(ext_get(rh, rl, (size_t)k), inv));
    for (int i = 0; i < n; ++i) {
        dd f = ext_get(e->y_hi, e->y_lo, (size_t)i);
        if (i == r || (f.hi == 0.0 && f.lo == 0.0)) continue;
        double *ih = &e->inv_hi[(size_t)i * n], *il = &e->inv_lo[(size_t)i * n];
        for (int k = 0; k < n; ++k) {
            dd p = {rh[k], rl[k]};
            if (p.hi == 0.0) continue;
            ext_set(ih, il, (size_t)k, dd_add(ext_get(ih, il, (size_t)k), dd_neg(dd_mul(f, p))));
        }
        ext_set(e->x_hi, e->x_lo, (size_t)i,
                dd_add(ext_get(e->x_hi, e->x_lo, (size_t)i), dd_neg(dd_mul(f, theta))));
    }
    ext_set(e->x_hi, e->x_lo, (size_t)r, theta);
}

/* Minimum ratio, exact signs, lexicographic ties on the rows of B^-1 (as ratio_test). */
static int ext_ratio_test(extended_run *e, int z0_row, const pp_lcp_options *o)
{
    pp_lcp_workspace *ws = e->ws;
    const int n = e->n;
    double amax = 0.0;
    for (int i = 0; i < n; ++i) amax = fmax(amax, fabs(e->y_hi[i]));
    if (!(amax > 0.0) || !isfinite(amax)) return amax > 0.0 ? -2 : -1;
    double threshold = DD_PIVOT_TOL * amax;
    dd theta_min = dd_from(INFINITY);
    int found = 0;
    for (int i = 0; i < n; ++i) {
        if (!(e->y_hi[i] > threshold)) continue;
        dd x = ext_get(e->x_hi, e->x_lo, (size_t)i);
        dd theta = dd_positive(x) ? dd_div(x, ext_get(e->y_hi, e->y_lo, (size_t)i)) : dd_from(0.0);
        if (!found || dd_less(theta, theta_min)) theta_min = theta;
        found = 1;
    }
    if (!found) return -1;
    int count = 0;
    for (int i = 0; i < n; ++i) {
        if (!(e->y_hi[i] > threshold)) continue;
        dd x = ext_get(e->x_hi, e->x_lo, (size_t)i);
        dd theta = dd_positive(x) ? dd_div(x, ext_get(e->y_hi, e->y_lo, (size_t)i)) : dd_from(0.0);
        if (dd_within_band(theta, theta_min)) ws->ties[count++] = i;
    }
    for (int t = 0; t < count; ++t)
        if (ws->ties[t] == z0_row) return z0_row;
    if (count == 1 || o->tie_break == PP_LCP_FIRST_INDEX) return ws->ties[0];
    for (int j = 0; j < n && count > 1; ++j) {
        dd vmin = dd_from(INFINITY);
        for (int t = 0; t < count; ++t) {
            int i = ws->ties[t];
            dd v = dd_div(ext_get(e->inv_hi, e->inv_lo, (size_t)i * n + j),
                          ext_get(e->y_hi, e->y_lo, (size_t)i));
            if (t == 0 || dd_less(v, vmin)) vmin = v;
        }
        int kept = 0;
        for (int t = 0; t < count; ++t) {
            int i = ws->ties[t];
            dd v = dd_div(ext_get(e->inv_hi, e->inv_lo, (size_t)i * n + j),
                          ext_get(e->y_hi, e->y_lo, (size_t)i));
            if (fabs(dd_add(v, dd_neg(vmin)).hi) <= DD_TIE_TOL * fabs(vmin.hi)) ws->ties[kept++] = i;
        }
        count = kept;
    }
    return ws->ties[0];
}

/* Whether the rounded basic point (z0 taken as 0) passes the residual test. */
static int ext_basic_point_solves(const extended_run *e, const pp_lcp_options *o)
{
    pp_lcp_workspace *ws = e->ws;
    const int n = e->n;
    for (int i = 0; i < n; ++i) ws->z_try[i] = 0.0;
    for (int i = 0; i < n; ++i) {
        int v = ws->row_var[i];
        if (v >= n && v < 2 * n) ws->z_try[v - n] = fmax(e->x_hi[i] + e->x_lo[i], 0.0);
    }
    pp_lcp_result check;
    pp_lcp_residual(n, e->M, e->q, ws->z_try, NULL, &check);
    return check.relative_residual <= o->residual_tol;
}

/* Lemke from w basic on LCP(M, q) in double-double arithmetic (see above). Fills z
 * (rounded) and basis; uses the workspace's inverse and tie_rows as B^-1 and x, residual,
 * y, sum_hi as the vectors. */
pp_lcp_status pp_lcp_lemke_extended(pp_lcp_workspace *ws, int n, const double *M,
                                    const double *q, const double *d, const pp_lcp_options *o,
                                    int max_pivots, double *z, unsigned char *basis, int *pivots)
{
    extended_run e = {ws,        n,           M,      q,      d,      ws->inverse, ws->tie_rows,
                      ws->x,     ws->residual, ws->y, ws->sum_hi};
    const int z0_var = 2 * n;
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < n; ++k) {
            e.inv_hi[(size_t)i * n + k] = i == k ? 1.0 : 0.0;
            e.inv_lo[(size_t)i * n + k] = 0.0;
        }
        e.x_hi[i] = q[i];
        e.x_lo[i] = 0.0;
        e.y_hi[i] = -d[i];
        e.y_lo[i] = 0.0;
        ws->row_var[i] = i;
    }
    int r = -1;
    dd best = dd_from(-INFINITY);
    for (int i = 0; i < n; ++i) { /* z0 enters at max -q_i / d_i, ties: largest index */
        dd level = dd_div(dd_from(-q[i]), dd_from(d[i]));
        if (r < 0 || dd_less(best, level) ||
            (o->tie_break == PP_LCP_LEXICOGRAPHIC && !dd_less(level, best)))
            best = level, r = i;
    }
    ext_pivot(&e, r);
    *pivots = 1;
    int leaving = ws->row_var[r];
    ws->row_var[r] = z0_var;
    const int z0_row = r;
    pp_lcp_status status = PP_LCP_PIVOT_CAP;
    for (;;) {
        if (!dd_positive(ext_get(e.x_hi, e.x_lo, (size_t)z0_row)) &&
            ext_basic_point_solves(&e, o)) {
            status = PP_LCP_SOLVED;
            break;
        }
        if (*pivots >= max_pivots) break;
        if (!pp_lcp_take_pivot(ws)) {
            status = PP_LCP_BUDGET_EXHAUSTED;
            break;
        }
        int entering = leaving < n ? leaving + n : leaving - n;
        ext_entering_column(&e, entering);
        r = ext_ratio_test(&e, z0_row, o);
        if (r < 0) {
            status = r == -1 ? PP_LCP_RAY_TERMINATION : PP_LCP_NUMERICAL;
            break;
        }
        ext_pivot(&e, r);
        ++*pivots;
        leaving = ws->row_var[r];
        ws->row_var[r] = entering;
        if (!isfinite(e.x_hi[r])) {
            status = PP_LCP_NUMERICAL;
            break;
        }
        if (leaving == z0_var) {
            status = PP_LCP_SOLVED;
            break;
        }
    }
    return pp_lcp_read_solution(ws->row_var, n, status, e.x_hi, e.x_lo, z, basis);
}

