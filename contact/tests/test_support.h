/* Helpers shared by the contact/ Check suites: a reproducible random source and a log hook that
 * keeps the last message (so a test can assert that a rejection names its problem). */
#ifndef PP_CONTACT_TEST_SUPPORT_H
#define PP_CONTACT_TEST_SUPPORT_H

#include "pegplus/base.h"

#include <stdio.h>

static unsigned long long rng_state;

/* Uniform in [lo, hi) from a 64-bit LCG (Knuth's MMIX constants), top 53 bits. */
static inline double uniform(double lo, double hi)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * ((double)(rng_state >> 11) / 9007199254740992.0);
}

static char last_message[512];
static int message_count;

static inline void capture(pp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    snprintf(last_message, sizeof last_message, "%s", message);
    message_count++;
}

static inline void setup(void)
{
    last_message[0] = '\0';
    message_count = 0;
    pp_set_log_hook(capture, NULL);
}

static inline void teardown(void) { pp_set_log_hook(NULL, NULL); }

#endif
