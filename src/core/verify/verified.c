/* The verify record (verified.h): made from a verify's checks, written
 * under the tree lock when that is free and the receipt is still the one
 * verified, and read back only for what it describes. Its text and parsing
 * live with the receipt's (receipt.c). */
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/state.h"
#include "cdd/strbuf.h"
#include "cdd/tree.h"
#include "cdd/verified.h"

static int nomem(void)
{
    return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
}

/* The worst of a layer's counts: fail, warn, pass, or skip when nothing
 * but skips (or nothing) ran. */
static const char *outcome_of(uint64_t pass, uint64_t warn, uint64_t fail)
{
    return fail ? "fail" : warn ? "warn" : pass ? "pass" : "skip";
}

/* The layers a record counts: a layer's entry is one of these. */
static const char *const known_layers[] = {"files", "load", "gpu", "bench"};
#define LAYERS_MAX (sizeof known_layers / sizeof *known_layers)

/* *out: the record's entry of layer name (n bytes), added when new. */
static int layer_of(struct cdd_verified *v, const char *name, size_t n,
                    struct cdd_vlayer **out)
{
    for (size_t i = 0; i < v->n_layers; i++)
        if (strlen(v->layers[i].name) == n &&
            memcmp(v->layers[i].name, name, n) == 0) {
            *out = &v->layers[i];
            return 0;
        }
    int rc = CDD_GROW(v->layers, NULL, v->n_layers + 1, LAYERS_MAX,
                      "verify layers");
    if (rc)
        return rc;
    struct cdd_vlayer *l = &v->layers[v->n_layers];
    memset(l, 0, sizeof *l);
    if (!(l->name = cdd_strndup(name, n)))
        return nomem();
    v->n_layers++;
    *out = l;
    return 0;
}

static int known_layer(const char *name, size_t n)
{
    for (size_t i = 0; i < LAYERS_MAX; i++)
        if (strlen(known_layers[i]) == n &&
            memcmp(known_layers[i], name, n) == 0)
            return 1;
    return 0;
}

int cdd_verified_make(const struct cdd_checks *checks, const char *level,
                      const char *manifest_name,
                      const struct cdd_receipt *proved,
                      struct cdd_verified **out)
{
    char when[32]; /* fixed: an RFC 3339 UTC time */
    int r = 0;
    struct cdd_verified *v = calloc(1, sizeof *v);
    *out = NULL;
    if (!v)
        return nomem();
    cdd_iso_time(when, sizeof when);
    v->verified_at = strdup(when);
    v->tool_version = strdup(CDD_VERSION_STRING);
    v->manifest_name = strdup(manifest_name ? manifest_name : "unknown");
    v->level = strdup(level);
    if (!v->verified_at || !v->tool_version || !v->manifest_name ||
        !v->level) {
        r = nomem();
        goto out;
    }
    r = cdd_receipt_digest(proved, v->receipt_sha256);
    uint64_t pass = 0, warn = 0, fail = 0;
    for (size_t i = 0; !r && i < checks->n; i++) {
        const struct cdd_check *c = &checks->v[i];
        size_t n = strcspn(c->name, ". ");
        if (!known_layer(c->name, n))
            continue; /* a check outside the four layers: not recorded */
        struct cdd_vlayer *l = NULL;
        if ((r = layer_of(v, c->name, n, &l)) != 0)
            break;
        switch (c->status) {
        case CDD_CHECK_PASS: l->passed++; pass++; break;
        case CDD_CHECK_WARN: l->warned++; warn++; break;
        case CDD_CHECK_FAIL: l->failed++; fail++; break;
        default: l->skipped++; break;
        }
    }
    for (size_t i = 0; !r && i < v->n_layers; i++) {
        struct cdd_vlayer *l = &v->layers[i];
        if (!(l->outcome = strdup(outcome_of(l->passed, l->warned,
                                             l->failed))))
            r = nomem();
    }
    if (!r && !(v->outcome = strdup(outcome_of(pass, warn, fail))))
        r = nomem();
out:
    if (r)
        cdd_verified_free(v);
    else
        *out = v;
    return r;
}

const char *cdd_vrecord_why_text(enum cdd_vrecord_why why)
{
    switch (why) {
    case CDD_VREC_WRITTEN: return "recorded";
    case CDD_VREC_NO_RECEIPT: return "nothing installed by cudnn-deploy";
    case CDD_VREC_LOCKED: return "another process holds the tree's lock";
    case CDD_VREC_READONLY: return "this account cannot write the tree";
    case CDD_VREC_UNFINISHED: return "a transaction is unfinished (run "
                                     "recover)";
    case CDD_VREC_CHANGED: return "the receipt changed while verify ran";
    }
    return "?";
}

/* Under the lock: the receipt there now, compared by digest. */
static int write_if_current(struct cdd_tree *tree,
                            const struct cdd_verified *v,
                            enum cdd_vrecord_why *why)
{
    struct cdd_stat st;
    struct cdd_receipt *rc = NULL;
    uint8_t d[CDD_SHA256_LEN];
    char *text = NULL;
    int r = cdd_tree_lstat(tree, CDD_JOURNAL_FILE, &st);
    if (r)
        return r;
    if (st.type != CDD_FT_NONE) {
        *why = CDD_VREC_UNFINISHED;
        return 0;
    }
    r = cdd_receipt_load(tree, &rc);
    if (r) {
        /* A damaged receipt is for status and verify to name. */
        cdd_clear_error();
        *why = CDD_VREC_CHANGED;
        return 0;
    }
    if (!rc) {
        *why = CDD_VREC_NO_RECEIPT;
        return 0;
    }
    r = cdd_receipt_digest(rc, d);
    cdd_receipt_free(rc);
    if (r)
        return r;
    if (memcmp(d, v->receipt_sha256, CDD_SHA256_LEN) != 0) {
        *why = CDD_VREC_CHANGED;
        return 0;
    }
    r = cdd_verified_to_json(v, &text);
    if (!r)
        r = cdd_tree_write_atomic(tree, CDD_VERIFIED_FILE, text,
                                  strlen(text));
    free(text);
    if (!r)
        *why = CDD_VREC_WRITTEN;
    return r;
}

int cdd_verified_record(struct cdd_tree *tree, const struct cdd_verified *v,
                        enum cdd_vrecord_why *why)
{
    int took = 0, r;
    *why = CDD_VREC_NO_RECEIPT;
    if (!cdd_tree_has_state(tree))
        return 0;
    if (!cdd_tree_locked(tree)) {
        if (cdd_tree_check_access(tree) != 0) {
            cdd_clear_error();
            *why = CDD_VREC_READONLY;
            return 0;
        }
        /* Never waits: an install that holds the lock writes its own
         * record when it has verified. No recovery either: a verify
         * changes nothing in the tree but this record. */
        r = cdd_tree_lock_state(tree, 0, 0, NULL);
        if (r || !cdd_tree_locked(tree)) {
            *why = r == CDD_E_LOCKED ? CDD_VREC_LOCKED : CDD_VREC_READONLY;
            cdd_clear_error();
            return 0;
        }
        took = 1;
    }
    r = write_if_current(tree, v, why);
    if (took)
        cdd_tree_unlock(tree);
    return r;
}

int cdd_verified_current(struct cdd_tree *tree, const struct cdd_receipt *rc,
                         struct cdd_verified **out)
{
    struct cdd_verified *v = NULL;
    uint8_t d[CDD_SHA256_LEN];
    *out = NULL;
    int r = cdd_verified_load(tree, &v);
    if (!r && v)
        r = cdd_receipt_digest(rc, d);
    if (!r && v && memcmp(d, v->receipt_sha256, CDD_SHA256_LEN) == 0) {
        *out = v;
        v = NULL;
    }
    cdd_verified_free(v);
    return r;
}
