/* "Did you mean ...?": the known name nearest to a mistyped one, by edit
 * distance (insertions, deletions, substitutions and swaps of two
 * neighbours each count 1), for commands, options, option values and the
 * shipped manifests' names. */
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/manifest.h"
#include "cli.h"

#define SUGGEST_MAX_LEN 64

/* Optimal string alignment distance of a and b (both short). */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    size_t d[3][SUGGEST_MAX_LEN + 1]; /* rows i-2, i-1, i (mod 3) */
    if (n > SUGGEST_MAX_LEN || m > SUGGEST_MAX_LEN)
        return (size_t)-1;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t *cur = d[i % 3], *prev = d[(i + 2) % 3], *pp = d[(i + 1) % 3];
        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = prev[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (prev[j - 1] + cost < v)
                v = prev[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            cur[j] = v;
        }
    }
    return d[n % 3][m];
}

const char *cdd_suggest(const char *word, const char *const *names, size_t n)
{
    size_t len = strlen(word), limit = len / 3;
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    if (limit < 1)
        limit = 1;
    if (limit > 3)
        limit = 3;
    for (size_t i = 0; i < n; i++) {
        if (!names[i])
            continue;
        size_t d = distance(word, names[i]);
        /* A prefix of a longer name ("--verb" for "--verbose") counts as
         * near too. */
        if (d > limit && len >= 3 && strncmp(names[i], word, len) == 0)
            d = limit;
        if (d <= limit && d < best_d) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}

int cdd_cli_manifest_find(const char *name, struct cdd_manifest **out)
{
    int r = cdd_manifest_find(name, out);
    struct cdd_stat st;
    if (r != CDD_E_NOTFOUND || !name || strchr(name, '/') ||
        strchr(name, '\\') ||
        (cdd_fs_lstat(name, &st) == 0 && st.type != CDD_FT_NONE))
        return r; /* found, or a path: its own error */
    cdd_clear_error();
    size_t len = strlen(name);
    if (len > 5 && strcmp(name + len - 5, ".json") == 0)
        len -= 5;
    char *stem = malloc(len + 1);
    const char **names = malloc((cdd_builtin_manifest_count + 1) *
                                sizeof *names);
    const char *near = NULL;
    if (stem && names) {
        memcpy(stem, name, len);
        stem[len] = '\0';
        for (size_t i = 0; i < cdd_builtin_manifest_count; i++)
            names[i] = cdd_builtin_manifests[i].name;
        near = cdd_suggest(stem, names, cdd_builtin_manifest_count);
    }
    if (near)
        r = cdd_fail(CDD_E_USAGE, name, 0,
                     "no such manifest file or shipped manifest; did you "
                     "mean '%s'? ('cudnn-deploy manifest list' shows them "
                     "all)", near);
    else
        r = cdd_fail(CDD_E_USAGE, name, 0,
                     "no such manifest file or shipped manifest "
                     "('cudnn-deploy manifest list' shows the shipped ones)");
    free(stem);
    free(names);
    return r;
}
