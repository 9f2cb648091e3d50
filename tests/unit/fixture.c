/* The unit tests' shared fixtures (fixture.h): the one place that makes
 * scratch folders and writes or reads test files, instead of a private copy
 * in each test file. */
#include "fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/fsops.h"
#include "cdd/sys.h"
#include "cdd/tree.h"

/* Every string handed out, freed at exit. */
static char **fx_strings;
static size_t fx_n_strings, fx_cap_strings;
static char *fx_root_path;

static void fx_free_all(void)
{
    for (size_t i = 0; i < fx_n_strings; i++)
        free(fx_strings[i]);
    free(fx_strings);
    fx_strings = NULL;
    fx_n_strings = fx_cap_strings = 0;
    fx_root_path = NULL;
}

static void fx_oom(void)
{
    fprintf(stderr, "fixture: out of memory\n");
    exit(2);
}

/* s, kept until exit. */
static char *fx_keep(char *s)
{
    if (!s)
        fx_oom();
    if (fx_n_strings == fx_cap_strings) {
        size_t cap = fx_cap_strings ? 2 * fx_cap_strings : 16;
        char **v = realloc(fx_strings, cap * sizeof *v);
        if (!v)
            fx_oom();
        if (!fx_strings)
            atexit(fx_free_all);
        fx_strings = v;
        fx_cap_strings = cap;
    }
    fx_strings[fx_n_strings++] = s;
    return s;
}

static char *fx_format2(const char *fmt, const char *a, const char *b)
{
    int n = snprintf(NULL, 0, fmt, a, b);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        snprintf(s, (size_t)n + 1, fmt, a, b);
    return fx_keep(s);
}

const char *fx_root(void)
{
    if (!fx_root_path) {
        const char *base = getenv("CDD_TEST_TMP");
        char pid[32];
        snprintf(pid, sizeof pid, "%ld", cdd_getpid());
        if (!base || !*base)
            base = "/tmp";
#ifdef _WIN32
        /* Wine accepts the Unix form, real Windows does not: the tests use
         * Z:/... as a user would. */
        if (base[0] == '/')
            base = fx_format2("Z:%s%s", base, "");
#endif
        fx_root_path = fx_format2("%s/unit-%s", base, pid);
        if (cdd_fs_mkdirs(fx_root_path, NULL) != 0) {
            fprintf(stderr, "fixture: cannot create %s\n", fx_root_path);
            exit(2);
        }
    }
    return fx_root_path;
}

const char *fx_path(const char *dir, const char *rel)
{
    return fx_format2("%s/%s", dir, rel);
}

const char *fx_tmp(const char *name)
{
    return fx_path(fx_root(), name);
}

const char *fx_scratch(const char *name)
{
    const char *p = fx_tmp(name);
    cdd_fs_remove_tree(p);
    if (cdd_fs_mkdirs(p, NULL) != 0) {
        fprintf(stderr, "fixture: cannot create %s\n", p);
        exit(2);
    }
    return p;
}

int fx_mkdirs(const char *path)
{
    if (cdd_fs_mkdirs(path, NULL) != 0) {
        fprintf(stderr, "fixture: cannot create %s\n", path);
        return -1;
    }
    return 0;
}

int fx_write(const char *path, const void *data, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        char *dir = malloc((size_t)(slash - path) + 1);
        if (!dir)
            fx_oom();
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
        int r = fx_mkdirs(dir);
        free(dir);
        if (r)
            return -1;
    }
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok) {
        fprintf(stderr, "fixture: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

int fx_write_text(const char *path, const char *text)
{
    return fx_write(path, text, strlen(text));
}

int fx_put(const char *dir, const char *rel, const char *text)
{
    return fx_write_text(fx_path(dir, rel), text);
}

unsigned char *fx_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    size_t n = 0, cap = 0, k;
    if (!f)
        return NULL;
    do {
        if (cap - n < 4096 + 1) {
            unsigned char *nb = realloc(b, cap = 2 * cap + 8192);
            if (!nb) {
                free(b);
                fclose(f);
                fx_oom();
            }
            b = nb;
        }
        k = fread(b + n, 1, cap - n - 1, f);
        n += k;
    } while (k > 0);
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(b);
        return NULL;
    }
    b[n] = '\0';
    if (len)
        *len = n;
    return b;
}

int fx_file_is(const char *path, const char *text)
{
    size_t n = 0;
    unsigned char *b = fx_read(path, &n);
    int same = b && n == strlen(text) && memcmp(b, text, n) == 0;
    free(b);
    return same;
}

int fx_tree_put(struct cdd_tree *t, const char *rel, const char *text)
{
    struct cdd_file *f = NULL;
    int r = cdd_tree_create(t, rel, 0, &f);
    if (!r)
        r = cdd_file_write(f, text, strlen(text));
    if (!r)
        r = cdd_file_close(f);
    else
        cdd_file_abort(f);
    return r;
}
