/* Why the platform loader refused a library (see loaddiag.h): the PE import
 * tables walked from the library, each import looked up where the loader
 * looks (cdd_lib_dep_find), the ones found nowhere named. */
#include "loaddiag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/binfile.h"
#include "cdd/error.h"
#include "cdd/loader.h"
#include "cdd/strbuf.h"
#include "cdd/windll.h"
#include "cdd/compat.h"

/* Windows' numbers for "a module could not be found" (ERROR_MOD_NOT_FOUND)
 * and "not a valid application for this OS" (ERROR_BAD_EXE_FORMAT). */
#define WIN_MOD_NOT_FOUND 126
#define WIN_BAD_EXE_FORMAT 193

/* Dependency walk bounds. */
#define DIAG_MAX_DLLS 64
#define DIAG_MAX_DEPTH 4

struct diag {
    char *seen[DIAG_MAX_DLLS];
    size_t n_seen;
    struct cdd_sb msg; /* the explanation, whole */
    int failed;        /* an append failed (out of memory): said so */
    int missing;
};

/* DLL names compare as Windows compares them: ASCII case-insensitively. */
static int ascii_ncaseeq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y - 'A' + 'a');
        if (x != y)
            return 0;
        if (!x)
            return 1;
    }
    return 1;
}

/* Names the loader resolves without a file of that name: API sets. */
static int is_api_set(const char *name)
{
    return ascii_ncaseeq(name, "api-ms-win-", 11) ||
           ascii_ncaseeq(name, "ext-ms-", 7);
}

static int seen(struct diag *g, const char *name)
{
    for (size_t i = 0; i < g->n_seen; i++)
        if (ascii_ncaseeq(g->seen[i], name, (size_t)-1))
            return 1;
    if (g->n_seen < DIAG_MAX_DLLS) {
        size_t len = strlen(name) + 1;
        char *c = malloc(len);
        if (c) {
            memcpy(c, name, len);
            g->seen[g->n_seen++] = c;
        }
    }
    return 0;
}

static void say(struct diag *g, const char *fmt, const char *a, const char *b)
{
    if (!g->failed && cdd_sb_addf(&g->msg, fmt, a, b) != 0)
        g->failed = 1;
}

static void walk(struct diag *g, const char *lib, const char *path, int depth)
{
    struct cdd_bininfo b;
    memset(&b, 0, sizeof b);
    if (depth > DIAG_MAX_DEPTH || cdd_bin_parse_file(path, &b) != 0) {
        cdd_clear_error();
        return;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (size_t i = 0; i < b.n_needed; i++) {
        const char *dep = b.needed[i];
        if (is_api_set(dep) || seen(g, dep))
            continue;
        char *at = NULL;
        int in_system = 0;
        if (cdd_lib_dep_find(lib, dep, &at, &in_system) != 0)
            cdd_clear_error();
        if (at) {
            if (!in_system)
                walk(g, lib, at, depth + 1);
            free(at);
            continue;
        }
        g->missing++;
        say(g, "%s%s", g->missing > 1 ? "; " : ": missing ", dep);
        say(g, " (needed by %s%s", base, ")");
        char *p = NULL;
        if (cdd_lib_find_on_path(dep, &p) != 0)
            cdd_clear_error();
        if (p) {
            /* PATH alone misleads Python >= 3.8 (windll.h). */
            char *dir = strdup(p), *slash = dir ? strrchr(dir, '\\') : NULL;
            char *py = NULL;
            if (slash)
                *slash = '\0';
            if (dir)
                py = cdd_windll_python_fix(dir);
            say(g, " -- a copy is on PATH at %s, but a library's imports "
                   "are not looked up on PATH: put it in the library's "
                   "folder%s", p, "");
            if (py)
                say(g, ". %s%s", py, "");
            free(py);
            free(dir);
            free(p);
        }
    }
    cdd_bininfo_clear(&b);
}

/* Which imports cannot be found, by reading import tables (one level per
 * DLL found, a few levels deep); every import is looked up where the loader
 * looks for abs_path's (its folder, the application folder, System32). */
static int explain_126(const char *abs_path, struct cdd_sb *msg)
{
    struct diag g;
    int r;
    memset(&g, 0, sizeof g);
    cdd_sb_init(&g.msg, CDD_TEXT_MAX, "load diagnosis");
    walk(&g, abs_path, abs_path, 0);
    if (g.failed)
        r = cdd_sb_adds(msg, " (the missing imports could not be listed: "
                             "out of memory)");
    else if (g.missing)
        r = cdd_sb_adds(msg, cdd_sb_str(&g.msg));
    else
        r = cdd_sb_adds(msg, " (every DLL it imports was found: one of them "
                             "fails to load in turn, or a delay-loaded one "
                             "is missing)");
    for (size_t i = 0; i < g.n_seen; i++)
        free(g.seen[i]);
    cdd_sb_free(&g.msg);
    return r;
}

static int explain_193(const char *abs_path, struct cdd_sb *msg)
{
    struct cdd_bininfo b;
    int r = 0;
    memset(&b, 0, sizeof b);
    if (cdd_bin_parse_file(abs_path, &b) == 0)
        r = cdd_sb_addf(msg, ": it is a %s %s file", b.machine_name,
                        b.fmt == CDD_BIN_PE ? "PE" : "ELF");
    cdd_bininfo_clear(&b);
    cdd_clear_error();
    return r;
}

int cdd_lib_open_explained(const char *abs_path, struct cdd_lib **out)
{
    int r = cdd_lib_open(abs_path, out);
    const struct cdd_errinfo *e = cdd_last_error();
    if (r != CDD_E_CHECK || !CDD_HOST_WINDOWS ||
        (e->os_err != WIN_MOD_NOT_FOUND && e->os_err != WIN_BAD_EXE_FORMAT))
        return r;
    struct cdd_errsave said; /* the loader's own words, kept whole */
    struct cdd_sb detail; /* the explanation, whole (DLL names, folders) */
    int os_err = e->os_err;
    cdd_error_save(&said);
    cdd_sb_init(&detail, CDD_TEXT_MAX, "load diagnosis");
    if (os_err == WIN_MOD_NOT_FOUND)
        r = explain_126(abs_path, &detail);
    else
        r = explain_193(abs_path, &detail);
    r = cdd_fail(CDD_E_CHECK, abs_path, os_err, "%s%s", said.info.msg,
                 r ? " (not explained: out of memory)" : cdd_sb_str(&detail));
    cdd_sb_free(&detail);
    cdd_error_save_free(&said);
    return r;
}
