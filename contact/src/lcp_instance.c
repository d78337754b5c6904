/* Instance files of pegplus/lcp.h (pp_lcp_instance_save / _load): regression tests made
 * from failing solves. */
#include "lcp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pp_status pp_lcp_instance_save(const char *path, int n, const double *M, const double *q,
                               const double *z, const char *comment)
{
    if (!path || !M || !q) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_save: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    if (n < 1) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_save: n = %d", n);
        return PP_ERR_INVALID_ARGUMENT;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_save: cannot open %s: %s", path, strerror(errno));
        return PP_ERR_INVALID_ARGUMENT;
    }
    fprintf(f, "pp_lcp 1\n");
    if (comment) {
        fputs("# ", f);
        for (const char *c = comment; *c; ++c) fputc(*c == '\n' ? ' ' : *c, f);
        fputc('\n', f);
    }
    fprintf(f, "n %d\nM\n", n);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            fprintf(f, "%.17g%c", M[i + (size_t)j * n], j + 1 < n ? ' ' : '\n');
    fprintf(f, "q\n");
    for (int i = 0; i < n; ++i) fprintf(f, "%.17g%c", q[i], i + 1 < n ? ' ' : '\n');
    if (z) {
        fprintf(f, "z\n");
        for (int i = 0; i < n; ++i) fprintf(f, "%.17g%c", z[i], i + 1 < n ? ' ' : '\n');
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_save: write to %s failed", path);
        return PP_ERR_INVALID_ARGUMENT;
    }
    return PP_OK;
}

/* Next whitespace-separated token, skipping '#' comments to the end of their line. */
static int next_token(FILE *f, char *buf, size_t size)
{
    int c;
    for (;;) {
        c = fgetc(f);
        if (c == EOF) return 0;
        if (c == '#') {
            while (c != EOF && c != '\n') c = fgetc(f);
            continue;
        }
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    }
    size_t len = 0;
    while (c != EOF && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '#') {
        if (len + 1 < size) buf[len++] = (char)c;
        c = fgetc(f);
    }
    if (c == '#') ungetc(c, f);
    buf[len] = '\0';
    return 1;
}

static int read_numbers(FILE *f, size_t count, double *out)
{
    char tok[64];
    for (size_t i = 0; i < count; ++i) {
        if (!next_token(f, tok, sizeof tok)) return 0;
        char *end;
        out[i] = strtod(tok, &end);
        if (*end != '\0' || !isfinite(out[i])) return 0;
    }
    return 1;
}

void pp_lcp_instance_free(pp_lcp_instance *instance)
{
    if (!instance) return;
    free(instance->M);
    free(instance->q);
    free(instance->z);
    memset(instance, 0, sizeof *instance);
}

pp_status pp_lcp_instance_load(const char *path, pp_lcp_instance *out)
{
    if (!path || !out) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_load: NULL argument");
        return PP_ERR_NULL_ARGUMENT;
    }
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_load: cannot open %s: %s", path, strerror(errno));
        return PP_ERR_INVALID_ARGUMENT;
    }
    char tok[64];
    const char *what = "header 'pp_lcp 1'";
    int n = 0;
    double *rows = NULL;
    if (!next_token(f, tok, sizeof tok) || strcmp(tok, "pp_lcp") != 0) goto bad;
    if (!next_token(f, tok, sizeof tok) || strcmp(tok, "1") != 0) goto bad;
    what = "'n <n>'";
    if (!next_token(f, tok, sizeof tok) || strcmp(tok, "n") != 0) goto bad;
    if (!next_token(f, tok, sizeof tok) || sscanf(tok, "%d", &n) != 1 || n < 1 ||
        n > PP_LCP_N_MAX_LIMIT)
        goto bad;
    what = "'M' and n*n numbers";
    out->n = n;
    out->M = malloc((size_t)n * n * sizeof *out->M);
    rows = malloc((size_t)n * n * sizeof *rows);
    out->q = malloc((size_t)n * sizeof *out->q);
    if (!out->M || !rows || !out->q) {
        fclose(f);
        free(rows);
        pp_lcp_instance_free(out);
        pp_log(PP_LOG_ERROR, "pp_lcp_instance_load: out of memory for n = %d", n);
        return PP_ERR_NO_MEMORY;
    }
    if (!next_token(f, tok, sizeof tok) || strcmp(tok, "M") != 0) goto bad;
    if (!read_numbers(f, (size_t)n * n, rows)) goto bad;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) out->M[i + (size_t)j * n] = rows[(size_t)i * n + j];
    what = "'q' and n numbers";
    if (!next_token(f, tok, sizeof tok) || strcmp(tok, "q") != 0) goto bad;
    if (!read_numbers(f, (size_t)n, out->q)) goto bad;
    what = "'z' and n numbers";
    if (next_token(f, tok, sizeof tok)) {
        if (strcmp(tok, "z") != 0) goto bad;
        out->z = malloc((size_t)n * sizeof *out->z);
        if (!out->z || !read_numbers(f, (size_t)n, out->z)) goto bad;
    }
    free(rows);
    fclose(f);
    return PP_OK;
bad:
    free(rows);
    fclose(f);
    pp_lcp_instance_free(out);
    pp_log(PP_LOG_ERROR, "pp_lcp_instance_load: %s: expected %s", path, what);
    return PP_ERR_INVALID_ARGUMENT;
}

