/*
 * pegplus/base.h — what every pegplus module shares: status codes, the replaceable
 * log and assert hooks, and the numeric conventions.
 *
 * Conventions (all modules, all public headers):
 *  - double precision only; SI units (m, kg, s, N, N*s for impulses).
 *  - Vectors are double[3], world frame unless a name says otherwise.
 *  - Quaternions are (w, x, y, z), as in ODE.
 *  - A contact C = {A, B, p_a, n, psi}: n is the unit normal from A to B, psi the gap
 *    (psi > 0 separated, psi < 0 overlapping); its Jacobian column maps body velocities
 *    to d(psi)/dt.
 *  - The time-stepping problem is posed in impulses p = h * lambda, not forces.
 *
 * Two error channels (docs/style.md):
 *  - programmer errors at the API boundary (NULL, NaN, negative mass, bad config) are
 *    rejected with a pp_status and a message sent to the log hook, and change nothing;
 *  - numerical outcomes (solver failed, degenerate hull) are a returned pp_status plus
 *    statistics. All output goes through the log hook, and only a failed internal invariant
 *    (PP_ASSERT) reaches the assert hook. The defaults do print and abort: the default log
 *    hook writes every message to stderr, the default assert hook logs and calls abort().
 *    Nothing else in the library prints, exits or aborts. To keep a program silent, install
 *    pp_log_discard (or your own hook) with pp_set_log_hook.
 */
#ifndef PEGPLUS_BASE_H
#define PEGPLUS_BASE_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PP_VERSION_STRING "0.1.0"

/* Every fallible pegplus call returns one of these. */
typedef enum pp_status {
    PP_OK = 0,
    PP_ERR_NULL_ARGUMENT,    /* a required pointer was NULL */
    PP_ERR_INVALID_ARGUMENT, /* a value outside its domain: NaN/Inf, mass <= 0, h <= 0, ... */
    PP_ERR_DEGENERATE,       /* degenerate geometry: too few points, coplanar, duplicates */
    PP_ERR_NO_MEMORY,        /* an allocation failed; nothing was changed */
    PP_ERR_UNSUPPORTED,      /* a feature or geometry pegplus does not handle (yet) */
    PP_ERR_SOLVER,           /* a numerical solver failed and no fallback applied */
    PP_ERR_NUMERICAL         /* a result would have been NaN/Inf; nothing was written */
} pp_status;

/* A short constant English name for a status ("invalid argument", ...). */
const char *pp_status_string(pp_status status);

typedef enum pp_log_level {
    PP_LOG_ERROR = 0,   /* a call was rejected or failed */
    PP_LOG_WARNING = 1, /* a fallback was taken, or something is ignored */
    PP_LOG_INFO = 2
} pp_log_level;

/* Receives every message pegplus emits. `message` is valid only during the call. */
typedef void (*pp_log_fn)(pp_log_level level, const char *message, void *user);

/* Replace the log hook (process-wide; set it before stepping, not while another thread runs
 * a step). The default hook writes "pegplus: <level>: <message>\n" to stderr; NULL restores it
 * (NULL does not silence: pass pp_log_discard for that). Returns the previous hook. */
pp_log_fn pp_set_log_hook(pp_log_fn hook, void *user);

/* Silence hook: discards everything (pp_set_log_hook(pp_log_discard, NULL)). */
void pp_log_discard(pp_log_level level, const char *message, void *user);

/* Emit a message through the hook (printf-style). Used by every module. */
void pp_log(pp_log_level level, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Called when an internal invariant fails (a bug in pegplus, not bad input: that is rejected
 * with a pp_status). The default logs through the log hook and calls abort(); NULL restores
 * it. Returns the previous hook. */
typedef void (*pp_assert_fn)(const char *expression, const char *file, int line,
                             const char *message);
pp_assert_fn pp_set_assert_hook(pp_assert_fn hook);
void pp_assert_failed(const char *expression, const char *file, int line, const char *message);

#define PP_ASSERT(cond, message)                                                \
    do {                                                                        \
        if (!(cond)) pp_assert_failed(#cond, __FILE__, __LINE__, (message));    \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif /* PEGPLUS_BASE_H */
