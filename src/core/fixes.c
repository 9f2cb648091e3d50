/* The fix list (fix.h): steps a finding tells the user to take, kept as
 * data for the command layer to render for the user's shell. */
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fix.h"

static void fix_free(struct cdd_fix *x)
{
    free(x->name);
    free(x->value);
    for (size_t i = 0; i < x->n_args; i++)
        free(x->args[i]);
    memset(x, 0, sizeof *x);
}

/* A new zeroed step at the end of f, in the current alternative. */
static struct cdd_fix *fix_push(struct cdd_fixes *f, enum cdd_fix_kind kind,
                                enum cdd_fix_scope scope)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 4;
        struct cdd_fix *v = realloc(f->v, cap * sizeof *v);
        if (!v)
            return NULL;
        f->v = v;
        f->cap = cap;
    }
    struct cdd_fix *x = &f->v[f->n];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->scope = scope;
    x->alt = f->alt;
    return x;
}

/* Fill the strings of the step just pushed; on failure drop it. */
static int fix_commit(struct cdd_fixes *f, struct cdd_fix *x, const char *name,
                      const char *value)
{
    x->name = strdup(name ? name : "");
    x->value = value ? strdup(value) : NULL;
    if (!x->name || (value && !x->value)) {
        fix_free(x);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    f->n++;
    return 0;
}

int cdd_fixes_set(struct cdd_fixes *f, enum cdd_fix_scope scope,
                  const char *var, const char *value)
{
    struct cdd_fix *x = fix_push(f, CDD_FIX_SET, scope);
    if (!x)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    return fix_commit(f, x, var, value ? value : "");
}

int cdd_fixes_prepend(struct cdd_fixes *f, enum cdd_fix_scope scope,
                      const char *var, const char *entry, char sep)
{
    struct cdd_fix *x = fix_push(f, CDD_FIX_PREPEND, scope);
    if (!x)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    x->sep = sep;
    return fix_commit(f, x, var, entry ? entry : "");
}

int cdd_fixes_write(struct cdd_fixes *f, enum cdd_fix_scope scope,
                    const char *path, const char *text)
{
    struct cdd_fix *x = fix_push(f, CDD_FIX_WRITE, scope);
    if (!x)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    return fix_commit(f, x, path, text ? text : "");
}

int cdd_fixes_run(struct cdd_fixes *f, enum cdd_fix_scope scope,
                  const char *const *argv)
{
    size_t n = 0;
    while (argv[n])
        n++;
    if (n == 0 || n - 1 > CDD_FIX_ARGS_MAX)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "a fix runs one program with at most %d arguments",
                        CDD_FIX_ARGS_MAX);
    struct cdd_fix *x = fix_push(f, CDD_FIX_RUN, scope);
    if (!x)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 1; i < n; i++) {
        if (!(x->args[i - 1] = strdup(argv[i]))) {
            fix_free(x);
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        }
        x->n_args = i;
    }
    return fix_commit(f, x, argv[0], NULL);
}

void cdd_fixes_or(struct cdd_fixes *f)
{
    if (f->n && f->v[f->n - 1].alt == f->alt)
        f->alt++;
}

unsigned cdd_fixes_alternatives(const struct cdd_fixes *f)
{
    return f && f->n ? f->v[f->n - 1].alt + 1 : 0;
}

int cdd_fixes_append(struct cdd_fixes *dst, const struct cdd_fixes *src)
{
    int rc = 0;
    unsigned last = (unsigned)-1;
    for (size_t i = 0; src && i < src->n && !rc; i++) {
        const struct cdd_fix *s = &src->v[i];
        if (s->alt != last) {
            cdd_fixes_or(dst);
            last = s->alt;
        }
        switch (s->kind) {
        case CDD_FIX_SET:
            rc = cdd_fixes_set(dst, s->scope, s->name, s->value);
            break;
        case CDD_FIX_PREPEND:
            rc = cdd_fixes_prepend(dst, s->scope, s->name, s->value, s->sep);
            break;
        case CDD_FIX_WRITE:
            rc = cdd_fixes_write(dst, s->scope, s->name, s->value);
            break;
        case CDD_FIX_RUN: {
            const char *argv[CDD_FIX_ARGS_MAX + 2];
            argv[0] = s->name;
            for (size_t a = 0; a < s->n_args; a++)
                argv[a + 1] = s->args[a];
            argv[s->n_args + 1] = NULL;
            rc = cdd_fixes_run(dst, s->scope, argv);
            break;
        }
        }
    }
    return rc;
}

void cdd_fixes_clear(struct cdd_fixes *f)
{
    for (size_t i = 0; f && i < f->n; i++)
        fix_free(&f->v[i]);
    if (f) {
        free(f->v);
        memset(f, 0, sizeof *f);
    }
}

const char *cdd_fix_kind_name(enum cdd_fix_kind k)
{
    static const char *const n[] = {"set", "prepend", "write", "run"};
    return (unsigned)k < 4 ? n[k] : "?";
}

const char *cdd_fix_scope_name(enum cdd_fix_scope s)
{
    static const char *const n[] = {"session", "user", "system"};
    return (unsigned)s < 3 ? n[s] : "?";
}
