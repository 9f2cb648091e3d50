/* The fix list (fix.h): steps a finding tells the user to take, kept as
 * data for the command layer to render for the user's shell. */
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fix.h"
#include "cdd/strbuf.h"

static void fix_free(struct cdd_fix *x)
{
    free(x->name);
    free(x->value);
    for (size_t i = 0; i < x->n_args; i++)
        free(x->args[i]);
    free(x->label);
    memset(x, 0, sizeof *x);
}

/* A new zeroed step at the end of f, in the current alternative, in *out.
 * CDD_E_TOOLONG past CDD_FIX_STEPS_MAX, CDD_E_NOMEM; recorded. */
static int fix_push(struct cdd_fixes *f, enum cdd_fix_kind kind,
                    enum cdd_fix_scope scope, struct cdd_fix **out)
{
    *out = NULL;
    int r = CDD_GROW(f->v, &f->cap, f->n + 1, CDD_FIX_STEPS_MAX,
                     "steps in one fix");
    if (r)
        return r;
    struct cdd_fix *x = &f->v[f->n];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->scope = scope;
    x->alt = f->alt;
    if (f->label && !(x->label = strdup(f->label)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    *out = x;
    return 0;
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
    struct cdd_fix *x;
    int r = fix_push(f, CDD_FIX_SET, scope, &x);
    if (r)
        return r;
    return fix_commit(f, x, var, value ? value : "");
}

/* ---- what a destination can hold ------------------------------------------
 *
 * A path list (PATH, LD_LIBRARY_PATH, PYTHONPATH ...) has no quoting: every
 * loader and shell splits it at the separator, ':' on POSIX and ';' on
 * Windows, and glibc's ld.so splits LD_LIBRARY_PATH at ';' as well as ':'
 * (elf/dl-load.c, _dl_init_paths). An empty entry means the current folder.
 * So an entry holding a separator becomes two entries, the second often
 * relative to whatever folder a program starts in: refused.
 *
 * /etc/ld.so.conf and its ld.so.conf.d files (glibc elf/ldconfig.c,
 * parse_conf): one folder per line; everything from the first '#' on is a
 * comment; white space at either end is dropped; a line starting "include"
 * or "hwcap" and a blank is a directive. No quoting exists. So a folder
 * holding '#', a line break, or white space at an end registers another
 * folder (or nothing): refused; ':' is plain there. The folder must be
 * absolute (ldconfig skips others), which also keeps it off the directives.
 */

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

const char *cdd_fix_list_entry_fault(const char *var, const char *entry,
                                     char sep)
{
    if (!*entry)
        return "an empty entry means the current folder";
    if (strchr(entry, sep))
        return sep == ';' ? "it holds ';', the separator of the list: it "
                            "would be split into two entries"
                          : "it holds ':', the separator of the list: it "
                            "would be split into two entries";
    if (strcmp(var, "LD_LIBRARY_PATH") == 0 && strchr(entry, ';'))
        return "it holds ';', at which the loader (glibc ld.so) also splits "
               "LD_LIBRARY_PATH";
    if (has_control(entry))
        return "it holds a line break or another control character, "
               "which no shell line or settings file can carry";
    return NULL;
}

const char *cdd_fix_ldconf_fault(const char *dir)
{
    size_t n = strlen(dir);
    if (dir[0] != '/')
        return "ldconfig takes absolute folders only";
    if (strchr(dir, '#'))
        return "it holds '#', which starts a comment in ld.so.conf: another "
               "folder would be registered";
    if (has_control(dir))
        return "it holds a line break or another control character: "
               "ld.so.conf holds one folder per line";
    if (dir[n - 1] == ' ' || dir[n - 1] == '\t')
        return "it ends in white space, which ldconfig drops: another folder "
               "would be registered";
    return NULL;
}

/* The step without the entry check (several entries, already joined). */
static int prepend_joined(struct cdd_fixes *f, enum cdd_fix_scope scope,
                          const char *var, const char *entries, char sep)
{
    struct cdd_fix *x;
    int r = fix_push(f, CDD_FIX_PREPEND, scope, &x);
    if (r)
        return r;
    x->sep = sep;
    return fix_commit(f, x, var, entries ? entries : "");
}

int cdd_fixes_prepend(struct cdd_fixes *f, enum cdd_fix_scope scope,
                      const char *var, const char *entry, char sep)
{
    const char *why = cdd_fix_list_entry_fault(var, entry ? entry : "", sep);
    if (why)
        return cdd_fail(CDD_E_TARGET, NULL, 0, "%s cannot go on %s: %s",
                        entry ? entry : "", var, why);
    struct cdd_fix *x;
    int r = fix_push(f, CDD_FIX_PREPEND, scope, &x);
    if (r)
        return r;
    x->sep = sep;
    return fix_commit(f, x, var, entry ? entry : "");
}

int cdd_fixes_write(struct cdd_fixes *f, enum cdd_fix_scope scope,
                    const char *path, const char *text)
{
    struct cdd_fix *x;
    int r = fix_push(f, CDD_FIX_WRITE, scope, &x);
    if (r)
        return r;
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
    struct cdd_fix *x;
    int r = fix_push(f, CDD_FIX_RUN, scope, &x);
    if (r)
        return r;
    for (size_t i = 1; i < n; i++) {
        if (!(x->args[i - 1] = strdup(argv[i]))) {
            fix_free(x);
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        }
        x->n_args = i;
    }
    return fix_commit(f, x, argv[0], NULL);
}

void cdd_fixes_label(struct cdd_fixes *f, const char *label)
{
    f->label = label;
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
        const char *keep = dst->label;
        dst->label = s->label;
        switch (s->kind) {
        case CDD_FIX_SET:
            rc = cdd_fixes_set(dst, s->scope, s->name, s->value);
            break;
        case CDD_FIX_PREPEND:
            rc = prepend_joined(dst, s->scope, s->name, s->value, s->sep);
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
        dst->label = keep;
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

/* path with backslashes (Windows advice), malloc'd. */
static char *native(int windows, const char *path)
{
    char *n = strdup(path);
    for (char *p = n; windows && p && *p; p++)
        if (*p == '/')
            *p = '\\';
    return n;
}

int cdd_fixes_path_first(struct cdd_fixes *f, int windows, const char *var,
                         const char *dirs)
{
    char *n = native(windows, dirs);
    int rc;
    if (!n)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    char sep = windows ? ';' : ':';
    cdd_fixes_or(f);
    rc = prepend_joined(f, CDD_FIX_SESSION, var, n, sep);
    cdd_fixes_or(f);
    if (!rc)
        rc = prepend_joined(f, windows ? CDD_FIX_SYSTEM : CDD_FIX_USER, var, n,
                            sep);
    free(n);
    return rc;
}

int cdd_fixes_libdir(struct cdd_fixes *f, int windows, const char *dir)
{
    const char *why = cdd_fix_list_entry_fault(
        windows ? "PATH" : "LD_LIBRARY_PATH", dir, windows ? ';' : ':');
    if (windows && why)
        return cdd_fail(CDD_E_TARGET, NULL, 0, "%s cannot go on PATH: %s", dir,
                        why);
    if (windows)
        return cdd_fixes_path_first(f, 1, "PATH", dir);
    /* Either alternative alone would be a fix; one the folder cannot take
     * is left out, and the folder is refused when it can take neither. */
    const char *conf = cdd_fix_ldconf_fault(dir);
    if (why && conf)
        return cdd_fail(CDD_E_TARGET, NULL, 0,
                        "%s can be given to the loader neither on "
                        "LD_LIBRARY_PATH (%s) nor in /etc/ld.so.conf.d (%s)",
                        dir, why, conf);
    static const char *const ldconfig[] = {"ldconfig", NULL};
    int rc = 0;
    cdd_fixes_or(f);
    if (!why)
        rc = cdd_fixes_prepend(f, CDD_FIX_SESSION, "LD_LIBRARY_PATH", dir, ':');
    cdd_fixes_or(f);
    if (!rc && !conf)
        rc = cdd_fixes_write(f, CDD_FIX_SYSTEM, "/etc/ld.so.conf.d/cudnn.conf",
                             dir);
    if (!rc && !conf)
        rc = cdd_fixes_run(f, CDD_FIX_SYSTEM, ldconfig);
    return rc;
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
