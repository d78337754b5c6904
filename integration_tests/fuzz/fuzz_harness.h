/*
 * fuzz_harness.h — what every libFuzzer harness shares: the log hook that counts pegplus's
 * errors and keeps the first message, the invariant check that aborts with it (libFuzzer then
 * saves the input), the set-up of ODE and the hook, and a body's state as bytes (to check
 * that a refused step changed nothing and an accepted one wrote nothing non-finite). Define PP_FUZZ_NAME (the harness's
 * name, a string) before including it; one harness per program, so the state is static.
 */
#ifndef PP_FUZZ_HARNESS_H
#define PP_FUZZ_HARNESS_H

#include <ode/ode.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pegplus/pegplus.h"

static int g_errors;          /* PP_LOG_ERROR messages since the harness last set it to 0 */
static char g_message[512];   /* the first of them */

static void capture(pp_log_level level, const char *message, void *user)
{
    (void)user;
    if (level != PP_LOG_ERROR) return;
    if (g_errors++ == 0) snprintf(g_message, sizeof g_message, "%s", message);
}

#define REQUIRE(cond)                                                                  \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, PP_FUZZ_NAME ": %s:%d: invariant failed: %s (last message: %s)\n", \
                    __FILE__, __LINE__, #cond, g_message);                             \
            abort();                                                                   \
        }                                                                              \
    } while (0)

/* ODE's own messages (dCreateConvex's warnings on a hull that does not contain the body
 * origin, "LCP internal error") are ODE's behaviour, not a finding: keep the log readable. */
static void ode_quiet(int num, const char *message, va_list ap)
{
    (void)num, (void)message, (void)ap;
}

/* For LLVMFuzzerInitialize: ODE initialised and quiet, pegplus's errors captured. */
static void pp_fuzz_init(void)
{
    dInitODE2(0);
    dSetMessageHandler(ode_quiet);
    pp_set_log_hook(capture, NULL);
}

/* Everything of a body a step may change, as ODE holds it. */
typedef struct body_bytes {
    dReal x[3], q[4], R[12], v[3], w[3], f[3], t[3];
} body_bytes;

static inline void read_body(dBodyID b, body_bytes *s)
{
    memcpy(s->x, dBodyGetPosition(b), sizeof s->x);
    memcpy(s->q, dBodyGetQuaternion(b), sizeof s->q);
    memcpy(s->R, dBodyGetRotation(b), sizeof s->R);
    memcpy(s->v, dBodyGetLinearVel(b), sizeof s->v);
    memcpy(s->w, dBodyGetAngularVel(b), sizeof s->w);
    memcpy(s->f, dBodyGetForce(b), sizeof s->f);
    memcpy(s->t, dBodyGetTorque(b), sizeof s->t);
}

static inline int body_finite(const body_bytes *s)
{
    const dReal *p = (const dReal *)s;
    for (size_t k = 0; k < sizeof *s / sizeof(dReal); ++k)
        if (!isfinite(p[k])) return 0;
    return 1;
}

#endif
