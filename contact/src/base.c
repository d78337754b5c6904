/* Status names and the process-wide log and assert hooks (pegplus/base.h). */
#include "pegplus/base.h"

#include <stdio.h>
#include <stdlib.h>

const char *pp_status_string(pp_status status)
{
    switch (status) {
    case PP_OK: return "ok";
    case PP_ERR_NULL_ARGUMENT: return "null argument";
    case PP_ERR_INVALID_ARGUMENT: return "invalid argument";
    case PP_ERR_DEGENERATE: return "degenerate geometry";
    case PP_ERR_NO_MEMORY: return "out of memory";
    case PP_ERR_UNSUPPORTED: return "unsupported";
    case PP_ERR_SOLVER: return "solver failure";
    case PP_ERR_NUMERICAL: return "non-finite result";
    }
    return "unknown status";
}

static void log_to_stderr(pp_log_level level, const char *message, void *user)
{
    static const char *names[] = {"error", "warning", "info"};
    (void)user;
    fprintf(stderr, "pegplus: %s: %s\n", names[level], message);
}

static pp_log_fn g_log_hook = log_to_stderr;
static void *g_log_user = NULL;

pp_log_fn pp_set_log_hook(pp_log_fn hook, void *user)
{
    pp_log_fn previous = g_log_hook;
    g_log_hook = hook ? hook : log_to_stderr;
    g_log_user = hook ? user : NULL;
    return previous;
}

void pp_log_discard(pp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

void pp_log(pp_log_level level, const char *format, ...)
{
    char buffer[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    g_log_hook(level, buffer, g_log_user);
}

static void assert_log_and_abort(const char *expression, const char *file, int line,
                                 const char *message)
{
    pp_log(PP_LOG_ERROR, "assertion failed: %s (%s) at %s:%d", message, expression, file, line);
    abort();
}

static pp_assert_fn g_assert_hook = assert_log_and_abort;

pp_assert_fn pp_set_assert_hook(pp_assert_fn hook)
{
    pp_assert_fn previous = g_assert_hook;
    g_assert_hook = hook ? hook : assert_log_and_abort;
    return previous;
}

void pp_assert_failed(const char *expression, const char *file, int line, const char *message)
{
    g_assert_hook(expression, file, line, message);
}
