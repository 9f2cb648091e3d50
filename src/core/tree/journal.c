/* The journal format (journal.h): writing a plan as text, and reading one
 * back as untrusted input, every record checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/journal.h"
#include "cdd/pathsafe.h"
#include "cdd/state.h"
#include "cdd/strbuf.h"

#define STAGE_DIR_PREFIX CDD_STATE_DIR "/" CDD_STAGE_PREFIX
#define BACKUP_PREFIX CDD_BACKUP_DIR "/"

static int nomem(void)
{
    return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
}


/* One transaction replaces one package by another: each entry of either is
 * placed, deleted or (a folder) removed once, with room for the scripts
 * and folders around them. */
#define JOURNAL_MAX_OPS (4 * (size_t)CDD_MAX_ENTRIES)
/* The folders it makes are prefixes of the entries it places. */
#define JOURNAL_MAX_MDIRS ((size_t)CDD_MAX_ENTRIES)

static int has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- rules ------------------------------------------------------------- */

int cdd_jpath_ok(const char *p)
{
    const char *why;
    if (!p || !*p || strlen(p) > CDD_PATH_MAX)
        return 0;
    /* The archive-name rules: whatever install writes passed them. */
    return cdd_path_is_safe(p, 0, &why);
}

int cdd_jdest_ok(const char *p)
{
    if (!cdd_jpath_ok(p))
        return 0;
    if (!cdd_path_in_state(p))
        return 1;
    return strcmp(p, CDD_RECEIPT_FILE) == 0 ||
           strcmp(p, CDD_MANIFEST_COPY) == 0;
}

int cdd_jdir_ok(const char *p)
{
    return cdd_jpath_ok(p) && !cdd_path_in_state(p);
}

int cdd_jsrc_ok(const char *p, const char *id)
{
    if (!cdd_jpath_ok(p))
        return 0;
    size_t nid = strlen(id);
    if (has_prefix(p, STAGE_DIR_PREFIX)) {
        const char *q = p + strlen(STAGE_DIR_PREFIX);
        return strncmp(q, id, nid) == 0 && q[nid] == '/';
    }
    if (has_prefix(p, BACKUP_PREFIX)) {
        const char *q = p + strlen(BACKUP_PREFIX);
        const char *slash = strchr(q, '/');
        if (!slash || slash == q)
            return 0;
        /* An earlier transaction's backup, never this one's. */
        return !((size_t)(slash - q) == nid && strncmp(q, id, nid) == 0);
    }
    return 0;
}

int cdd_jid_ok(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > 64)
        return 0;
    for (const char *c = id; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= 'a' && *c <= 'z') || *c == '-'))
            return 0;
    return 1;
}

int cdd_jkind_ok(const char *k)
{
    size_t n = strlen(k);
    if (n == 0 || n > 32)
        return 0;
    for (const char *c = k; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_'))
            return 0;
    return 1;
}

/* A link target that fits in a record: no control characters (tab and
 * newline separate records), not empty. */
static int target_ok(const char *t)
{
    if (!t || !*t || strlen(t) > 4095)
        return 0;
    for (const unsigned char *c = (const unsigned char *)t; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return 0;
    return 1;
}

/* ---- the structure ---------------------------------------------------------- */

void cdd_jprev_clear(struct cdd_jprev *p)
{
    free(p->target);
    memset(p, 0, sizeof *p);
}

int cdd_jprev_copy(struct cdd_jprev *to, const struct cdd_jprev *from)
{
    *to = *from;
    to->target = NULL;
    if (from->target && !(to->target = cdd_strdup(from->target)))
        return nomem();
    return 0;
}

void cdd_journal_clear(struct cdd_journal *j)
{
    for (size_t i = 0; i < j->nops; i++) {
        free(j->ops[i].src);
        free(j->ops[i].dest);
        cdd_jprev_clear(&j->ops[i].prev);
    }
    free(j->ops);
    for (size_t i = 0; i < j->n_mdirs; i++)
        free(j->mdirs[i]);
    free(j->mdirs);
    free(j->mdir_lines);
    free(j->id);
    free(j->kind);
    memset(j, 0, sizeof *j);
}

int cdd_journal_push(struct cdd_journal *j, char type, const char *src,
                     const char *dest, const struct cdd_jprev *prev)
{
    int r = CDD_GROW(j->ops, &j->cap, j->nops + 1, JOURNAL_MAX_OPS,
                     "journal records");
    if (r)
        return r;
    struct cdd_jop *op = &j->ops[j->nops];
    memset(op, 0, sizeof *op);
    op->type = type;
    op->seq = j->nops;
    op->journaled = 1;
    if ((src && !(op->src = cdd_strdup(src))) || !(op->dest = cdd_strdup(dest))) {
        free(op->src);
        free(op->dest);
        return nomem();
    }
    if (prev) {
        op->has_prev = 1;
        if (cdd_jprev_copy(&op->prev, prev) != 0) {
            free(op->src);
            free(op->dest);
            return nomem();
        }
    }
    j->nops++;
    return 0;
}

int cdd_journal_add_mdir(struct cdd_journal *j, const char *dir)
{
    for (size_t i = 0; i < j->n_mdirs; i++)
        if (strcmp(j->mdirs[i], dir) == 0)
            return 0;
    /* Two arrays of one length: lines kept exactly at the names' capacity. */
    size_t cap = j->cap_mdirs;
    int r = CDD_GROW(j->mdirs, &cap, j->n_mdirs + 1, JOURNAL_MAX_MDIRS,
                     "journal folders");
    if (!r && cap != j->cap_mdirs)
        r = CDD_GROW(j->mdir_lines, NULL, cap, JOURNAL_MAX_MDIRS,
                     "journal folders");
    if (r)
        return r;
    j->cap_mdirs = cap;
    if (!(j->mdirs[j->n_mdirs] = cdd_strdup(dir)))
        return nomem();
    j->mdir_lines[j->n_mdirs] = 0;
    j->n_mdirs++;
    return 0;
}

/* ---- writing -------------------------------------------------------------- */

/* A journal holds a few lines per file of an archive (the largest has a few
 * hundred files), each with at most two paths. */
#define JOURNAL_TEXT_MAX ((size_t)64 << 20)

/* The journal as text; the first failed append is the one reported. */
struct sbuf {
    struct cdd_sb sb;
    int err;
};

static void add(struct sbuf *b, const char *s)
{
    if (!b->err)
        b->err = cdd_sb_adds(&b->sb, s);
}

static void add_prev(struct sbuf *b, const struct cdd_jprev *p)
{
    if (p->type == CDD_FT_SYMLINK) {
        add(b, "\tl:");
        add(b, p->target);
    } else {
        char num[32], hex[CDD_SHA256_HEX]; /* fixed: a size, sha256 hex */
        snprintf(num, sizeof num, "\tf:%llu:", (unsigned long long)p->size);
        cdd_hex_encode(p->sha256, CDD_SHA256_LEN, hex);
        add(b, num);
        add(b, hex);
    }
}

int cdd_journal_format(const struct cdd_journal *j, char **out, size_t *len)
{
    struct sbuf b = {0};
    cdd_sb_init(&b.sb, JOURNAL_TEXT_MAX, "journal");
    *out = NULL;
    for (size_t i = 0; i < j->nops; i++) {
        const struct cdd_jop *op = &j->ops[i];
        if (op->journaled && op->has_prev && op->prev.type == CDD_FT_SYMLINK &&
            !target_ok(op->prev.target))
            return cdd_fail(CDD_E_TARGET, op->dest, 0,
                            "is a link whose target cannot be recorded for "
                            "its backup; remove it first");
    }
    if (cdd_sb_addf(&b.sb, "%s %d %s %s %s\n", CDD_JOURNAL_MAGIC,
                    CDD_JOURNAL_VERSION, j->id, j->kind,
                    j->purge ? "purge-backup" : "keep-backup"))
        return cdd_last_error()->code;
    for (size_t i = 0; i < j->n_mdirs; i++) {
        add(&b, "M\t");
        add(&b, j->mdirs[i]);
        add(&b, "\n");
    }
    for (size_t i = 0; i < j->nops; i++) {
        const struct cdd_jop *op = &j->ops[i];
        if (!op->journaled)
            continue;
        char tag[3] = {op->type, '\t', '\0'}; /* fixed: a record tag */
        add(&b, tag);
        if (op->type == 'P') {
            add(&b, op->src);
            add(&b, "\t");
        }
        add(&b, op->dest);
        if (op->type != 'R' && op->has_prev)
            add_prev(&b, &op->prev);
        add(&b, "\n");
    }
    add(&b, "E\n");
    if (b.err) {
        cdd_sb_free(&b.sb);
        return b.err;
    }
    if (len)
        *len = cdd_sb_len(&b.sb);
    *out = cdd_sb_take(&b.sb);
    return 0;
}

/* ---- reading -------------------------------------------------------------- */

static char *next_line(char **s)
{
    char *l = *s;
    if (!l)
        return NULL;
    char *nl = strchr(l, '\n');
    if (nl) {
        *nl = '\0';
        *s = nl + 1;
    } else {
        *s = NULL;
    }
    return l;
}

static int bad(const char *source, size_t line, const char *why,
               const char *record)
{
    char *shown = cdd_path_shown(record ? record : "");
    int r = cdd_fail(CDD_E_STATE, source, 0,
                     "line %zu: %s: \"%s\"; the interrupted transaction "
                     "cannot be finished automatically: inspect the tree and "
                     "remove the journal",
                     line, why, CDD_SHOWN(shown));
    free(shown);
    return r;
}

static int parse_prev(char *s, struct cdd_jprev *p)
{
    memset(p, 0, sizeof *p);
    if (s[0] == 'l' && s[1] == ':') {
        if (!target_ok(s + 2))
            return -1;
        p->type = CDD_FT_SYMLINK;
        return (p->target = cdd_strdup(s + 2)) ? 0 : -2;
    }
    if (s[0] != 'f' || s[1] != ':')
        return -1;
    char *num = s + 2, *colon = strchr(num, ':');
    if (!colon || colon == num || colon - num > 20)
        return -1;
    unsigned long long v = 0;
    for (char *c = num; c < colon; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        v = v * 10 + (unsigned)(*c - '0');
    }
    if (strlen(colon + 1) != 64 ||
        cdd_hex_decode(colon + 1, p->sha256, CDD_SHA256_LEN) != 0)
        return -1;
    p->type = CDD_FT_FILE;
    p->size = v;
    return 0;
}

int cdd_journal_parse(const char *source, char *text, struct cdd_journal *j)
{
    char *s = text, *l;
    size_t ln = 1;
    memset(j, 0, sizeof *j);
    l = next_line(&s);
    char *head = l ? cdd_strdup(l) : NULL;
    char *f[6] = {0};
    size_t nf = 0;
    for (char *c = l; c && nf < 6;) {
        f[nf++] = c;
        c = strchr(c, ' ');
        if (c)
            *c++ = '\0';
    }
    char ver[8]; /* fixed: the journal's version number */
    snprintf(ver, sizeof ver, "%d", CDD_JOURNAL_VERSION);
    if (nf != 5 || strcmp(f[0], CDD_JOURNAL_MAGIC) != 0 ||
        strcmp(f[1], ver) != 0 || !cdd_jid_ok(f[2]) || !cdd_jkind_ok(f[3]) ||
        (strcmp(f[4], "purge-backup") != 0 && strcmp(f[4], "keep-backup") != 0)) {
        int r = bad(source, ln, "not a cudnn-deploy journal header", head);
        free(head);
        return r;
    }
    free(head);
    if (!(j->id = cdd_strdup(f[2])) || !(j->kind = cdd_strdup(f[3])))
        return nomem();
    j->purge = strcmp(f[4], "purge-backup") == 0;

    /* A plan without its end line never reached the disk whole, so the
     * commit never started (it writes the journal atomically before any
     * change): nothing to undo. */
    for (char *c = s; c; c = strchr(c, '\n')) {
        if (*c == '\n')
            c++;
        if (c[0] == 'E' && (c[1] == '\n' || c[1] == '\0')) {
            j->acted = 1;
            break;
        }
    }
    if (!j->acted)
        return 0;

    int seen_e = 0;
    while ((l = next_line(&s)) != NULL) {
        ln++;
        char *fl[5] = {0};
        size_t n = 0;
        int r = 0;
        if (*l == '\0') {
            if (s && *s)
                return bad(source, ln, "empty line", l);
            continue;
        }
        if (l[1] == '\0' && (l[0] == 'E' || l[0] == 'C')) {
            if (l[0] == 'E' ? seen_e : (!seen_e || j->committed))
                return bad(source, ln, "record out of order", l);
            if (l[0] == 'E')
                seen_e = 1;
            else
                j->committed = 1;
            continue;
        }
        char *rec = cdd_strdup(l);
        if (!rec)
            return nomem();
        if (seen_e || l[1] != '\t') {
            r = bad(source, ln, "unknown record", rec);
            free(rec);
            return r;
        }
        for (char *c = l + 2; c && n < 5;) {
            fl[n++] = c;
            c = strchr(c, '\t');
            if (c)
                *c++ = '\0';
        }
        struct cdd_jprev prev = {0};
        int pr = 0;
        size_t n_mdirs_before = j->n_mdirs;
        switch (l[0]) {
        case 'M':
            if (n != 1 || !cdd_jdir_ok(fl[0]))
                r = bad(source, ln, "bad folder record", rec);
            else
                r = cdd_journal_add_mdir(j, fl[0]);
            break;
        case 'P':
            if ((n != 2 && n != 3) || !cdd_jsrc_ok(fl[0], j->id) ||
                !cdd_jdest_ok(fl[1]) ||
                (n == 3 && (pr = parse_prev(fl[2], &prev)) != 0))
                r = pr == -2 ? nomem() : bad(source, ln, "bad move record", rec);
            else
                r = cdd_journal_push(j, 'P', fl[0], fl[1], n == 3 ? &prev : NULL);
            break;
        case 'D':
            if (n != 2 || !cdd_jdest_ok(fl[0]) ||
                (pr = parse_prev(fl[1], &prev)) != 0)
                r = pr == -2 ? nomem()
                             : bad(source, ln, "bad removal record", rec);
            else
                r = cdd_journal_push(j, 'D', NULL, fl[0], &prev);
            break;
        case 'R':
            if (n != 1 || !cdd_jdir_ok(fl[0]))
                r = bad(source, ln, "bad removal record", rec);
            else
                r = cdd_journal_push(j, 'R', NULL, fl[0], NULL);
            break;
        default:
            r = bad(source, ln, "unknown record", rec);
        }
        cdd_jprev_clear(&prev);
        free(rec);
        if (r)
            return r;
        /* Where the record is, for the messages of later checks. */
        if (l[0] == 'M') {
            if (j->n_mdirs > n_mdirs_before) /* not a repeated folder */
                j->mdir_lines[j->n_mdirs - 1] = ln;
        } else
            j->ops[j->nops - 1].line = ln;
    }
    return 0;
}
