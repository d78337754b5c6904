/* Shared by the integration tests that check what pegplus says: a log hook that counts the
 * errors and warnings (and shows them on stderr), keeping the last one's text. */
#ifndef PP_IT_MESSAGES_H
#define PP_IT_MESSAGES_H

#include "pegplus/pegplus.h"

#include <stdio.h>

static int messages;               /* errors and warnings since pp_it_messages_setup */
static char last_message[2048];    /* the last of them */

static void count_messages(pp_log_level level, const char *message, void *user)
{
    (void)user;
    if (level > PP_LOG_WARNING) return; /* errors and warnings */
    fprintf(stderr, "pegplus: %s\n", message);
    ++messages;
    snprintf(last_message, sizeof last_message, "%s", message);
}

/* A Check fixture: ODE initialised, the counters cleared, the hook installed. */
static void setup(void)
{
    dInitODE2(0);
    messages = 0;
    last_message[0] = 0;
    pp_set_log_hook(count_messages, NULL);
}

#endif
