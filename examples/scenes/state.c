/* Settled states kept in text files (see state.h). */
#define _POSIX_C_SOURCE 200809L /* getline */
#include "state.h"

#include "pegplus/pegplus.h" /* pp_model_name: a warm-start section's model */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char MAGIC[] = "pegplus-state";
/* 2: more than one warm-start section (state.h); a file with at most one is written as 1 */
enum { FORMAT_VERSION = 2 };

int pp_scene_state_capture(pp_scene_state *st, const pp_scene *s)
{
    double *pose = malloc((size_t)(s->body_count ? s->body_count : 1) * 7 * sizeof *pose);
    if (!pose) return -1;
    for (int i = 0; i < s->body_count; ++i) {
        const dReal *x = dBodyGetPosition(s->bodies[i]), *q = dBodyGetQuaternion(s->bodies[i]);
        const double p[7] = {x[0], x[1], x[2], q[0], q[1], q[2], q[3]};
        memcpy(&pose[7 * i], p, sizeof p);
    }
    free(st->pose);
    st->pose = pose;
    st->count = s->body_count;
    return 0;
}

int pp_scene_state_write(const pp_scene_state *st, const char *path, const char *comments,
                         char *why, size_t why_size)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        snprintf(why, why_size, "path too long");
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(why, why_size, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    fprintf(f, "%s %d\nscene %s\nseed %u\nh %.17g\nsettle_steps %d\nmodel %s\nbodies %d\n", MAGIC,
            st->warm_count > 1 ? 2 : 1, st->scene, st->seed, st->h, st->settle_steps, st->model,
            st->count);
    for (const char *c = comments; c && *c;) {
        const char *end = strchr(c, '\n');
        int len = end ? (int)(end - c) : (int)strlen(c);
        fprintf(f, "# %.*s\n", len, c);
        c += len + (end != NULL);
    }
    fprintf(f, "# x y z qw qx qy qz\n");
    for (int i = 0; i < st->count; ++i) {
        const double *p = &st->pose[7 * i];
        fprintf(f, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", p[0], p[1], p[2], p[3], p[4],
                p[5], p[6]);
    }
    for (int w = 0; w < st->warm_count; ++w) fputs(st->warm[w].text, f);
    int failed = ferror(f);
    failed |= fclose(f) != 0;
    if (failed || rename(tmp, path) != 0) {
        snprintf(why, why_size, "cannot write %s: %s", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

/* A malloc'ed text that lines are appended to: its length and capacity kept (a warm-start
 * section has thousands of lines). */
typedef struct grown_text {
    char **s;
    size_t length, capacity;
} grown_text;

/* Appends `text` and a newline to *g->s. 0, or -1 when out of memory. */
static int append_line(grown_text *g, const char *text)
{
    const size_t add = strlen(text);
    if (g->length + add + 2 > g->capacity) {
        size_t capacity = g->capacity ? g->capacity : 256;
        while (capacity < g->length + add + 2) capacity *= 2;
        char *t = realloc(*g->s, capacity);
        if (!t) return -1;
        *g->s = t;
        g->capacity = capacity;
    }
    memcpy(*g->s + g->length, text, add);
    g->length += add;
    (*g->s)[g->length++] = '\n';
    (*g->s)[g->length] = '\0';
    return 0;
}

/* The next line that is not a comment, without its newline, in *line (getline's buffer: a
 * line of any length, as the writer writes comments); NULL at the end of the file. The
 * comments passed over are appended to *comments when it is not NULL (without "# "). */
static char *next_line(FILE *f, char **line, size_t *capacity, int *line_no, char **comments)
{
    grown_text g = {comments, comments && *comments ? strlen(*comments) : 0,
                    comments && *comments ? strlen(*comments) + 1 : 0};
    while (getline(line, capacity, f) >= 0) {
        char *l = *line;
        ++*line_no;
        l[strcspn(l, "\r\n")] = '\0';
        if (l[0] != '#') return l;
        if (comments && strcmp(l, "# x y z qw qx qy qz") &&
            append_line(&g, l + (l[1] == ' ' ? 2 : 1)) != 0)
            return NULL;
    }
    return NULL;
}

static const char WARM_MAGIC[] = "pegplus-warm-start", WARM_END[] = "end pegplus-warm-start";

/* 1 when `line` opens a warm-start section: the word pegplus-warm-start (its version is
 * pp_world_restore_warm_start's to check). */
static int opens_section(const char *line)
{
    const size_t n = sizeof WARM_MAGIC - 1;
    return !strncmp(line, WARM_MAGIC, n) && (line[n] == '\0' || line[n] == ' ' || line[n] == '\t');
}

/* The NAME of a "model NAME" line `l` (up to its newline), read as pp_world_restore_warm_start
 * reads it (blanks around NAME), into model[size]; 0 when `l` is not such a line or NAME does
 * not fit. */
static int model_line(const char *l, char *model, size_t size)
{
    if (strncmp(l, "model", 5) != 0 || (l[5] != ' ' && l[5] != '\t')) return 0;
    l += 5 + strspn(l + 5, " \t");
    const size_t n = strcspn(l, " \t\r\n");
    const char *rest = l + n + strspn(l + n, " \t");
    if (n == 0 || n >= size || (*rest != '\0' && *rest != '\r' && *rest != '\n')) return 0;
    memcpy(model, l, n);
    model[n] = '\0';
    return 1;
}

/* The model a warm-start text names (its second line, "model NAME") into model[size]; 0
 * without. */
static int warm_model_of(const char *text, char *model, size_t size)
{
    const char *second = strchr(text, '\n');
    return second && model_line(second + 1, model, size);
}

/* 1 when `model` is a pp_model_name. */
static int known_model(const char *model)
{
    for (int m = PP_MODEL_ODE; m <= PP_MODEL_PEG; ++m)
        if (!strcmp(model, pp_model_name((pp_model)m))) return 1;
    return 0;
}

/* why = "path:line: " and the reason; returns 0. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int refused(char *why, size_t why_size, const char *path, int line, const char *format,
                   ...)
{
    const int n = snprintf(why, why_size, "%s:%d: ", path, line);
    if (n >= 0 && (size_t)n < why_size) {
        va_list ap;
        va_start(ap, format);
        vsnprintf(why + n, why_size - (size_t)n, format, ap);
        va_end(ap);
    }
    return 0;
}

/* The warm-start sections after the body lines (their lines may be long: getline), each of
 * another pegplus model (its second line, "model NAME"), at most one under `version` 1 and
 * PP_SCENE_STATE_WARM_MAX under 2. 1: read (none: warm_count 0); 0: malformed or out of
 * memory, why naming the line and what is wrong. */
static int read_warm_starts(FILE *f, pp_scene_state *st, int version, char **buf,
                            size_t *capacity, int *line_no, const char *path, char *why,
                            size_t why_size)
{
    const int max = version >= 2 ? PP_SCENE_STATE_WARM_MAX : 1;
    int begun[PP_SCENE_STATE_WARM_MAX]; /* the line each section begins at */
    int lines = 0;                      /* of the section being read */
    pp_scene_state_warm *w = NULL;      /* the section being read; NULL between sections */
    grown_text g = {NULL, 0, 0};
    while (getline(buf, capacity, f) >= 0) {
        char *line = *buf;
        const int at = ++*line_no;
        line[strcspn(line, "\r\n")] = '\0';
        if (!w) {
            /* comments and blank lines around the sections */
            if (line[0] == '#' || line[0] == '\0') continue;
            if (!opens_section(line))
                return refused(why, why_size, path, at, "after the %d body lines, neither a "
                               "comment nor a %s section", st->count, WARM_MAGIC);
            if (st->warm_count == max && version < 2)
                return refused(why, why_size, path, at, "a second %s section: a version-1 file "
                               "holds at most one (version 2: one a model)", WARM_MAGIC);
            if (st->warm_count == max)
                return refused(why, why_size, path, at, "a %s section more than the %d a file "
                               "holds", WARM_MAGIC, max);
            begun[st->warm_count] = at;
            w = &st->warm[st->warm_count++];
            g = (grown_text){&w->text, 0, 0};
            lines = 0;
        } else if (opens_section(line)) {
            return refused(why, why_size, path, at, "a %s line inside the section begun at line "
                           "%d, which has no '%s' line before it", WARM_MAGIC,
                           begun[st->warm_count - 1], WARM_END);
        }
        if (append_line(&g, line) != 0) return refused(why, why_size, path, at, "out of memory");
        if (++lines == 2) {
            const int k = st->warm_count - 1;
            if (!model_line(line, w->model, sizeof w->model))
                return refused(why, why_size, path, at, "the %s section begun at line %d: its "
                               "second line is not 'model NAME'", WARM_MAGIC, begun[k]);
            if (!known_model(w->model))
                return refused(why, why_size, path, at, "the %s section begun at line %d is of "
                               "model '%s', which is no pegplus model (pp_model_name)",
                               WARM_MAGIC, begun[k], w->model);
            for (int other = 0; other < k; ++other)
                if (!strcmp(st->warm[other].model, w->model))
                    return refused(why, why_size, path, at, "a second %s section of model '%s' "
                                   "(the first begun at line %d): at most one a model",
                                   WARM_MAGIC, w->model, begun[other]);
        }
        if (!strcmp(line, WARM_END)) w = NULL;
    }
    if (w)
        return refused(why, why_size, path, *line_no, "the %s section begun at line %d has no "
                       "'%s' line (the file ends)", WARM_MAGIC, begun[st->warm_count - 1],
                       WARM_END);
    return 1;
}

int pp_scene_state_read(pp_scene_state *st, const char *path, char *why, size_t why_size)
{
    memset(st, 0, sizeof *st);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, why_size, "%s: %s", path, strerror(errno));
        return errno == ENOENT ? 1 : -1;
    }
    char *line = NULL; /* getline's */
    size_t capacity = 0;
    int line_no = 0, version = 0, ok = 1;
    /* header: the keys in their order */
    char *l = next_line(f, &line, &capacity, &line_no, NULL);
    ok = l && sscanf(l, "pegplus-state %d", &version) == 1 && version >= 1 &&
         version <= FORMAT_VERSION;
    ok = ok && (l = next_line(f, &line, &capacity, &line_no, NULL)) &&
         sscanf(l, "scene %63s", st->scene) == 1;
    ok = ok && (l = next_line(f, &line, &capacity, &line_no, NULL)) &&
         sscanf(l, "seed %u", &st->seed) == 1;
    ok = ok && (l = next_line(f, &line, &capacity, &line_no, NULL)) &&
         sscanf(l, "h %lf", &st->h) == 1 && st->h > 0.0;
    ok = ok && (l = next_line(f, &line, &capacity, &line_no, NULL)) &&
         sscanf(l, "settle_steps %d", &st->settle_steps) == 1 && st->settle_steps >= 0;
    ok = ok && (l = next_line(f, &line, &capacity, &line_no, NULL)) &&
         sscanf(l, "model %63s", st->model) == 1;
    ok = ok && (l = next_line(f, &line, &capacity, &line_no, NULL)) &&
         sscanf(l, "bodies %d", &st->count) == 1 && st->count >= 0 && st->count <= (1 << 20);
    if (ok) {
        st->pose = malloc((size_t)(st->count ? st->count : 1) * 7 * sizeof *st->pose);
        ok = st->pose != NULL;
    }
    for (int i = 0; ok && i < st->count; ++i) {
        double *p = &st->pose[7 * i];
        char extra;
        ok = (l = next_line(f, &line, &capacity, &line_no, i == 0 ? &st->comments : NULL)) &&
             sscanf(l, "%lf %lf %lf %lf %lf %lf %lf %c", &p[0], &p[1], &p[2], &p[3], &p[4], &p[5],
                    &p[6], &extra) == 7;
        for (int k = 0; ok && k < 7; ++k) ok = isfinite(p[k]);
        ok = ok && fabs(p[3] * p[3] + p[4] * p[4] + p[5] * p[5] + p[6] * p[6] - 1.0) < 1e-9;
    }
    /* then nothing, or the warm-start sections (not more body lines than the header says) */
    if (!ok)
        snprintf(why, why_size, "%s:%d: not a pegplus-state 1 or 2 file (a header, then %d body "
                 "lines of 7 finite numbers with a unit quaternion)", path, line_no, st->count);
    else
        ok = read_warm_starts(f, st, version, &line, &capacity, &line_no, path, why, why_size);
    free(line);
    fclose(f);
    if (!ok) {
        pp_scene_state_free(st);
        return -1;
    }
    return 0;
}

int pp_scene_state_apply(pp_scene *s, const char *name, const pp_scene_state *st, double h,
                         int *script_steps, char *why, size_t why_size)
{
    if (strcmp(name, st->scene) != 0) {
        snprintf(why, why_size, "the state is of scene '%s', not '%s'", st->scene, name);
        return -1;
    }
    const int steps = (int)lround(st->settle_steps * st->h / h);
    for (int i = 0; s->before_step && i < steps && s->body_count < st->count; ++i)
        s->before_step(s, i);
    if (s->body_count != st->count) {
        snprintf(why, why_size, "the state of '%s' has %d bodies; the scene has %d", name, st->count,
                 s->body_count);
        return -1;
    }
    for (int i = 0; i < s->body_count; ++i) {
        const double *p = &st->pose[7 * i];
        const dReal q[4] = {p[3], p[4], p[5], p[6]};
        dBodySetPosition(s->bodies[i], p[0], p[1], p[2]);
        dBodySetQuaternion(s->bodies[i], q);
    }
    pp_scene_zero_velocities(s);
    if (script_steps) *script_steps = steps;
    return 0;
}

/* The index of `model`'s section, or warm_count when the state has none. */
static int section_of(const pp_scene_state *st, const char *model)
{
    int w = 0;
    while (w < st->warm_count && strcmp(st->warm[w].model, model) != 0) ++w;
    return w;
}

const char *pp_scene_state_warm_start(const pp_scene_state *st, const char *model)
{
    const int w = section_of(st, model);
    return w < st->warm_count ? st->warm[w].text : NULL;
}

int pp_scene_state_set_warm_start(pp_scene_state *st, char *text)
{
    char model[PP_SCENE_STATE_NAME];
    if (!warm_model_of(text, model, sizeof model)) return -1;
    const int w = section_of(st, model);
    if (w == PP_SCENE_STATE_WARM_MAX) return -1;
    if (w == st->warm_count) ++st->warm_count;
    else free(st->warm[w].text);
    snprintf(st->warm[w].model, sizeof st->warm[w].model, "%s", model);
    st->warm[w].text = text;
    return 0;
}

void pp_scene_state_free(pp_scene_state *st)
{
    free(st->pose);
    for (int w = 0; w < st->warm_count; ++w) free(st->warm[w].text);
    free(st->comments);
    st->pose = NULL;
    st->comments = NULL;
    st->warm_count = 0;
    st->count = 0;
}

char *pp_scene_state_path(char *buf, size_t size, const char *dir, const char *scene, int ode)
{
    int n = snprintf(buf, size, "%s/%s%s.state", dir, scene, ode ? ".ode" : "");
    return n >= 0 && (size_t)n < size ? buf : NULL;
}
