/* Choosing from the release catalog: for every archive, does it fit the
 * version asked for, the platform, the tree's CUDA, every GPU and the
 * driver, and if not, every reason why. The rules are docs/releases.md's
 * "Selection"; the facts they read are the catalog's (facts.json). */
#include "cdd/catalog.h"
#include "cdd/cudnn_facts.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/compat_attr.h"
#include "cdd/error.h"
#include "cdd/strbuf.h"

int cdd_cat_vercmp(const char *a, const char *b)
{
    while (*a || *b) {
        unsigned long x = strtoul(a, (char **)&a, 10);
        unsigned long y = strtoul(b, (char **)&b, 10);
        if (x != y)
            return x < y ? -1 : 1;
        if (*a == '.')
            a++;
        else if (*a)
            return 0; /* not dotted numbers past here: equal so far */
        if (*b == '.')
            b++;
        else if (*b)
            return 0;
    }
    return 0;
}

int cdd_cat_cc_parse(const char *s)
{
    int ma = 0, mi = 0, d = 0;
    while (*s >= '0' && *s <= '9' && d < 3) {
        ma = ma * 10 + (*s++ - '0');
        d++;
    }
    if (!d || *s != '.' || s[1] < '0' || s[1] > '9' || s[2] != '\0')
        return -1;
    mi = s[1] - '0';
    return ma * 10 + mi;
}

int cdd_cat_want_check(const char *want)
{
    long comp[4]; /* fixed: a version's parts */
    if (strcmp(want, "latest") == 0 || cdd_version_dotted(want, comp, 4) >= 1)
        return 0;
    return cdd_fail(CDD_E_USAGE, NULL, 0,
                    "--cudnn %s: expected 9, 9.13, 9.13.0.50 or latest", want);
}

/* Does the release's version start with the parts of want? */
static int version_matches(const struct cdd_cat_release *r, const char *want)
{
    int i = 0;
    if (!want || strcmp(want, "latest") == 0)
        return 1;
    for (const char *p = want; *p && i < 4; i++) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x != r->v[i])
            return 0;
        p = *end == '.' ? end + 1 : end;
        if (*end && *end != '.')
            return 0;
    }
    return 1;
}

/* A "; "-separated text: a struct cdd_sb whose first failure sticks
 * (cdd_sb_catf), checked once when the verdict is made. */
static void add(struct cdd_sb *t, const char *fmt, ...) CDD_PRINTF(2, 3);

static void add(struct cdd_sb *t, const char *fmt, ...)
{
    va_list ap;
    if (cdd_sb_len(t))
        cdd_sb_catf(t, "; ");
    if (cdd_sb_error(t))
        return;
    va_start(ap, fmt);
    t->err = cdd_sb_vaddf(t, fmt, ap);
    va_end(ap);
}

static void sm(char *buf, size_t len, int cc)
{
    snprintf(buf, len, "sm_%d", cc);
}

static unsigned judge(const struct cdd_catalog *c,
                      const struct cdd_cat_release *rel,
                      const struct cdd_cat_archive *a,
                      const struct cdd_cat_query *q, struct cdd_sb *why,
                      struct cdd_sb *note)
{
    unsigned bits = 0;
    const struct cdd_cat_variant *v =
        a->cuda_major ? cdd_cat_variant_of(rel, a->cuda_major) : NULL;
    char s1[16], s2[16]; /* fixed: sm_ and a number */

    if (!version_matches(rel, q->want)) {
        bits |= CDD_CAT_VERSION;
        add(why, "not cuDNN %s", q->want);
    }
    if (q->platform && strcmp(q->platform, a->platform) != 0) {
        bits |= CDD_CAT_PLATFORM;
        add(why, "for %s, not %s", a->platform, q->platform);
    }
    if (q->cuda_major) {
        if (a->cuda_major != q->cuda_major) {
            bits |= CDD_CAT_CUDA;
            if (a->cuda_major)
                add(why, "built for CUDA %d, the tree is CUDA %d",
                    a->cuda_major, q->cuda_major);
            else
                add(why, "its CUDA version is not known");
        } else if (q->cuda_minor >= 0 && a->cuda_minor >= 0 &&
                   q->cuda_minor < a->cuda_minor) {
            bits |= CDD_CAT_CUDA;
            add(why, "built for CUDA %d.%d or newer, the tree is CUDA %d.%d",
                a->cuda_major, a->cuda_minor, q->cuda_major, q->cuda_minor);
        } else if (q->cuda_minor >= 0 && v && v->minor_lo >= 0) {
            if (q->cuda_minor < v->minor_lo) {
                bits |= CDD_CAT_CUDA;
                add(why, "the support matrix lists CUDA %d.%d-%d.%d, the "
                    "tree is CUDA %d.%d", v->cuda_major, v->minor_lo,
                    v->cuda_major, v->minor_hi, q->cuda_major, q->cuda_minor);
            } else if (q->cuda_minor > v->minor_hi) {
                add(note, "CUDA %d.%d is newer than the support matrix's "
                    "%d.%d-%d.%d (runs through CUDA minor-version "
                    "compatibility)", q->cuda_major, q->cuda_minor,
                    v->cuda_major, v->minor_lo, v->cuda_major, v->minor_hi);
            }
        } else if (q->cuda_minor >= 0 && !v) {
            add(note, "no support-matrix facts: the CUDA minor is not checked");
        }
    }
    for (size_t i = 0; i < q->n_cc; i++) {
        int cc = q->cc[i];
        sm(s1, sizeof s1, cc);
        if (!v || !v->cc_lo) {
            if (i == 0)
                add(note, "no support-matrix facts: GPU not checked");
            continue;
        }
        if (cc < v->cc_lo) {
            bits |= CDD_CAT_GPU;
            sm(s2, sizeof s2, v->cc_lo);
            add(why, "GPU %s is older than this release supports (%s and "
                "newer)", s1, s2);
        } else if (cc > v->cc_hi) {
            bits |= CDD_CAT_GPU;
            sm(s2, sizeof s2, v->cc_hi);
            add(why, "GPU %s is newer than this release supports (up to %s)",
                s1, s2);
        } else if (v->needs_cc && cc >= v->needs_cc && q->cuda_major &&
                   q->cuda_major == v->cuda_major && q->cuda_minor >= 0 &&
                   q->cuda_minor < v->needs_minor) {
            bits |= CDD_CAT_GPU;
            add(why, "GPU %s needs CUDA %d.%d or newer with this release, "
                "the tree is CUDA %d.%d", s1, v->cuda_major, v->needs_minor,
                q->cuda_major, q->cuda_minor);
        }
    }
    if (q->driver && a->cuda_major) {
        const char *min = cdd_catalog_driver_min(
            c, a->cuda_major, strncmp(a->platform, "windows", 7) == 0);
        if (!min)
            add(note, "no published minimum driver for CUDA %d here: driver "
                "not checked", a->cuda_major);
        else if (cdd_cat_vercmp(q->driver, min) < 0) {
            bits |= CDD_CAT_DRIVER;
            add(why, "driver %s is older than %s, the minimum for CUDA %d",
                q->driver, min, a->cuda_major);
        }
    }
    return bits;
}

int cdd_catalog_match(const struct cdd_catalog *c,
                      const struct cdd_cat_query *q,
                      struct cdd_cat_verdict **out, size_t *n)
{
    size_t total = 0, k = 0;
    struct cdd_cat_verdict *v;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < c->n; i++)
        total += c->releases[i].n_archives;
    if (!(v = calloc(total ? total : 1, sizeof *v)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i < c->n; i++) {
        const struct cdd_cat_release *rel = &c->releases[i];
        for (size_t j = 0; j < rel->n_archives; j++) {
            struct cdd_sb why, note;
            cdd_sb_init(&why, CDD_TEXT_MAX, "release verdict");
            cdd_sb_init(&note, CDD_TEXT_MAX, "release note");
            v[k].rel = rel;
            v[k].a = &rel->archives[j];
            v[k].why = judge(c, rel, v[k].a, q, &why, &note);
            int terr = cdd_sb_error(&why) ? cdd_sb_error(&why)
                                          : cdd_sb_error(&note);
            struct cdd_sb *keep = v[k].why ? &why : &note;
            if (!terr && cdd_sb_len(keep) &&
                !(v[k].detail = cdd_sb_take(keep)))
                terr = CDD_E_NOMEM;
            cdd_sb_free(&why);
            cdd_sb_free(&note);
            if (terr) {
                cdd_cat_verdicts_free(v, k);
                return cdd_fail(terr, NULL, 0, NULL);
            }
            k++;
        }
    }
    *out = v;
    *n = k;
    return 0;
}

const struct cdd_cat_verdict *cdd_catalog_best(const struct cdd_cat_verdict *v,
                                               size_t n)
{
    const struct cdd_cat_verdict *best = NULL;
    for (size_t i = 0; i < n; i++) {
        if (v[i].why)
            continue;
        if (!best)
            best = &v[i];
        else if (v[i].rel != best->rel)
            break;
        else if (v[i].a->cuda_minor > best->a->cuda_minor)
            best = &v[i];
    }
    return best;
}

void cdd_cat_verdicts_free(struct cdd_cat_verdict *v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i].detail);
    free(v);
}

const char *cdd_cat_why_name(unsigned bit)
{
    switch (bit) {
    case CDD_CAT_VERSION: return "version";
    case CDD_CAT_PLATFORM: return "platform";
    case CDD_CAT_CUDA: return "cuda";
    case CDD_CAT_GPU: return "gpu";
    case CDD_CAT_DRIVER: return "driver";
    default: return "fits";
    }
}
