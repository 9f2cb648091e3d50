/* The identity records of a tree (tree/idcache.h): a small line-oriented
 * state file, read strictly (any malformed line discards the whole file:
 * the records are a cache, and the fallback is to hash), written
 * atomically under the tree's lock.
 *
 *   cudnn-deploy identity 1
 *   a <sha256> <dev> <ino> <size> <mtime_ns> <ctime_ns> <seen_ns>
 *   f <sha256> <dev> <ino> <size> <mtime_ns> <ctime_ns> <seen_ns> <path>
 */
#include "idcache.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/archive.h"
#include "cdd/error.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"
#include "cdd/sys.h"
#include "cdd/tree.h"

#define IDCACHE_MAGIC "cudnn-deploy identity 1"
#define IDCACHE_MAX_FILES 100000u

static void rec_clear(struct cdd_idrec *r)
{
    free(r->path);
    memset(r, 0, sizeof *r);
}

void cdd_idcache_clear(struct cdd_idcache *c)
{
    if (!c)
        return;
    rec_clear(&c->archive);
    for (size_t i = 0; i < c->n; i++)
        rec_clear(&c->files[i]);
    free(c->files);
    memset(c, 0, sizeof *c);
}

const struct cdd_idrec *cdd_idcache_find(const struct cdd_idcache *c,
                                         const char *path)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (strcmp(c->files[i].path, path) == 0)
            return &c->files[i];
    return NULL;
}

int cdd_idcache_put(struct cdd_idcache *c, const struct cdd_idrec *rec)
{
    char *p = strdup(rec->path);
    if (!p)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    struct cdd_idrec *slot = (struct cdd_idrec *)cdd_idcache_find(c, p);
    if (!slot) {
        int r = CDD_GROW(c->files, &c->cap, c->n + 1, IDCACHE_MAX_FILES,
                         "identity cache files");
        if (r) {
            free(p);
            return r;
        }
        slot = &c->files[c->n++];
        memset(slot, 0, sizeof *slot);
    }
    free(slot->path);
    *slot = *rec;
    slot->path = p;
    slot->valid = 1;
    return 0;
}

/* ---- the file ------------------------------------------------------------ */

static int parse_u64(char **s, uint64_t *v)
{
    char *end;
    if (**s < '0' || **s > '9')
        return -1;
    errno = 0;
    unsigned long long x = strtoull(*s, &end, 10);
    if (errno || *end != ' ')
        return -1;
    *v = x;
    *s = end + 1;
    return 0;
}

static int parse_i64(char **s, int64_t *v)
{
    uint64_t u;
    if (parse_u64(s, &u) || u > (uint64_t)INT64_MAX)
        return -1;
    *v = (int64_t)u;
    return 0;
}

/* One record's fields after its tag; *s then points past "<seen> ". A line
 * without a path ends in "\0" where the space would be. */
static int parse_rec(char *line, struct cdd_idrec *r, char **rest)
{
    char *s = line;
    if (strlen(s) < CDD_SHA256_HEX || s[CDD_SHA256_HEX - 1] != ' ')
        return -1;
    s[CDD_SHA256_HEX - 1] = '\0';
    if (cdd_hex_decode(s, r->sha256, CDD_SHA256_LEN))
        return -1;
    s += CDD_SHA256_HEX;
    if (parse_u64(&s, &r->id.dev) || parse_u64(&s, &r->id.ino) ||
        parse_u64(&s, &r->id.size) || parse_i64(&s, &r->id.mtime_ns) ||
        parse_i64(&s, &r->id.ctime_ns))
        return -1;
    /* The last number ends the line for the archive. */
    size_t n = strlen(s);
    if (rest) {
        if (parse_i64(&s, &r->seen_ns))
            return -1;
        *rest = s;
        return 0;
    }
    if (n == 0 || n > 20 || strspn(s, "0123456789") != n)
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s, NULL, 10);
    if (errno || x > (uint64_t)INT64_MAX)
        return -1;
    r->seen_ns = (int64_t)x;
    return 0;
}

static int parse(char *text, struct cdd_idcache *c)
{
    char *save = text, *line;
    size_t lineno = 0;
    int r = 0;
    while (!r && (line = save) != NULL && *line) {
        char *nl = strchr(line, '\n');
        if (!nl)
            return -1; /* every line ends in a newline: a torn file is not read */
        *nl = '\0';
        save = nl + 1;
        if (lineno++ == 0) {
            if (strcmp(line, IDCACHE_MAGIC) != 0)
                return -1;
            continue;
        }
        struct cdd_idrec rec;
        memset(&rec, 0, sizeof rec);
        if (line[0] == 'a' && line[1] == ' ') {
            if (c->archive.valid || parse_rec(line + 2, &rec, NULL))
                return -1;
            rec.valid = 1;
            c->archive = rec;
        } else if (line[0] == 'f' && line[1] == ' ') {
            char *path = NULL;
            const char *why;
            if (parse_rec(line + 2, &rec, &path) || c->n >= IDCACHE_MAX_FILES ||
                !cdd_path_is_safe(path, 0, &why) || cdd_idcache_find(c, path))
                return -1;
            rec.path = path;
            r = cdd_idcache_put(c, &rec);
        } else {
            return -1;
        }
    }
    return r < 0 ? r : (lineno ? 0 : -1);
}

int cdd_idcache_load(struct cdd_tree *t, struct cdd_idcache *c)
{
    char *text = NULL;
    size_t len = 0;
    memset(c, 0, sizeof *c);
    int r = cdd_tree_read_all(t, CDD_IDCACHE_FILE, CDD_IDCACHE_MAX_BYTES, &text,
                              &len);
    if (r == CDD_E_NOMEM)
        return r;
    if (r || memchr(text, '\0', len)) {
        /* Missing, unreadable, a link, too large: no records. */
        cdd_clear_error();
        free(text);
        return 0;
    }
    r = parse(text, c);
    free(text);
    if (r == CDD_E_NOMEM) {
        cdd_idcache_clear(c);
        return r;
    }
    if (r) {
        cdd_idcache_clear(c);
        cdd_clear_error();
    }
    return 0;
}

static int put_rec(struct cdd_sb *sb, char tag, const struct cdd_idrec *r)
{
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    cdd_hex_encode(r->sha256, CDD_SHA256_LEN, hex);
    return cdd_sb_addf(sb,
                       "%c %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64
                       " %" PRId64 " %" PRId64 "%s%s\n",
                       tag, hex, r->id.dev, r->id.ino, r->id.size,
                       r->id.mtime_ns, r->id.ctime_ns, r->seen_ns,
                       r->path ? " " : "", r->path ? r->path : "");
}

int cdd_idcache_save(struct cdd_tree *t, const struct cdd_idcache *c)
{
    /* The bound the load applies: what is written can be read back. */
    struct cdd_sb sb;
    cdd_sb_init(&sb, CDD_IDCACHE_MAX_BYTES, "identity cache");
    int r = cdd_sb_addf(&sb, "%s\n", IDCACHE_MAGIC);
    if (!r && c->archive.valid)
        r = put_rec(&sb, 'a', &c->archive);
    for (size_t i = 0; !r && i < c->n; i++)
        if (c->files[i].valid)
            r = put_rec(&sb, 'f', &c->files[i]);
    if (!r)
        r = cdd_tree_write_atomic(t, CDD_IDCACHE_FILE, cdd_sb_str(&sb),
                                  cdd_sb_len(&sb));
    cdd_sb_free(&sb);
    return r;
}
