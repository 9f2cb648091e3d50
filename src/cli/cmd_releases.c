/* cudnn-deploy releases: the release catalog, and what fits this machine
 * (or the machine the options describe), with the reason for every archive
 * that does not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/catalog.h"
#include "cdd/cudatree.h"
#include "cdd/error.h"
#include "cdd/jsonw.h"
#include "cdd/redistrib.h"
#include "cmds.h"
#include "pick.h"
#include "report.h"

static void why_names(struct cdd_jw *w, unsigned why)
{
    cdd_jw_array(w, "why");
    for (unsigned b = 1; b <= CDD_CAT_DRIVER; b <<= 1)
        if (why & b)
            cdd_jw_str(w, NULL, cdd_cat_why_name(b));
    cdd_jw_end(w);
}

static void archive_json(struct cdd_jw *w, const struct cdd_cat_verdict *v)
{
    const struct cdd_cat_archive *a = v->a;
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    size_t ul = strlen(CDD_REDISTRIB_BASE_URL) + strlen(a->relative_path) + 1;
    char *url = malloc(ul);
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "platform", a->platform);
    cdd_jw_str(w, "variant", a->variant);
    if (a->cuda_major)
        cdd_jw_int(w, "cuda_major", a->cuda_major);
    else
        cdd_jw_null(w, "cuda_major");
    cdd_jw_str(w, "relative_path", a->relative_path);
    if (url) {
        snprintf(url, ul, "%s%s", CDD_REDISTRIB_BASE_URL, a->relative_path);
        cdd_jw_str(w, "url", url);
        free(url);
    }
    cdd_hex_encode(a->digests[0].sha256, CDD_SHA256_LEN, hex);
    cdd_jw_str(w, "sha256", hex);
    if (a->digests[0].has_size)
        cdd_jw_uint(w, "size", a->digests[0].size);
    else
        cdd_jw_null(w, "size");
    if (a->has_md5)
        cdd_jw_str(w, "md5", a->md5);
    cdd_jw_array(w, "sha256_known");
    for (size_t i = 0; i < a->n_digests; i++) {
        cdd_jw_object(w, NULL);
        cdd_hex_encode(a->digests[i].sha256, CDD_SHA256_LEN, hex);
        cdd_jw_str(w, "sha256", hex);
        if (a->digests[i].has_size)
            cdd_jw_uint(w, "size", a->digests[i].size);
        cdd_jw_str(w, "source", a->digests[i].source);
        cdd_jw_end(w);
    }
    cdd_jw_end(w);
    cdd_jw_bool(w, "fits", v->why == 0);
    why_names(w, v->why);
    cdd_jw_str(w, "detail", v->detail);
    cdd_jw_end(w);
}

static void release_json(struct cdd_jw *w, const struct cdd_cat_release *rel)
{
    cdd_jw_str(w, "version", rel->version);
    cdd_jw_str(w, "label", rel->label);
    cdd_jw_str(w, "date", rel->date);
    cdd_jw_str(w, "source", rel->source);
    cdd_jw_str(w, "layout", rel->layout);
    cdd_jw_str(w, "support_matrix", rel->matrix);
    cdd_jw_array(w, "cuda_variants");
    for (size_t i = 0; i < rel->n_variants; i++) {
        const struct cdd_cat_variant *v = &rel->variants[i];
        cdd_jw_object(w, NULL);
        cdd_jw_int(w, "cuda_major", v->cuda_major);
        if (v->minor_lo >= 0) {
            cdd_jw_int(w, "cuda_minor_min", v->minor_lo);
            cdd_jw_int(w, "cuda_minor_max", v->minor_hi);
        }
        if (v->cc_lo) {
            char cc[16]; /* fixed: a compute capability */
            snprintf(cc, sizeof cc, "%d.%d", v->cc_lo / 10, v->cc_lo % 10);
            cdd_jw_str(w, "cc_min", cc);
            snprintf(cc, sizeof cc, "%d.%d", v->cc_hi / 10, v->cc_hi % 10);
            cdd_jw_str(w, "cc_max", cc);
        }
        cdd_jw_end(w);
    }
    cdd_jw_end(w);
}

/* The CUDA version to fit: --cuda X.Y, or a tree's (--cuda-root). */
static int cuda_of(const struct cdd_cmdline *cl, struct cdd_report *rep,
                   int *major, int *minor)
{
    const struct cdd_target_spec *s = &cl->target.spec;
    struct cdd_target t = {0};
    int r;
    *major = 0;
    *minor = -1;
    if (s->cuda && !s->cuda_root && !s->prefix)
        return cdd_cuda_arg_parse(s->cuda, major, minor);
    if (!cdd_cli_target_given(&cl->target))
        return 0;
    if ((r = cdd_cli_target(&cl->target, &t, rep, NULL)))
        return r;
    if (t.version.known) {
        *major = t.version.major;
        *minor = t.version.minor;
    } else {
        cdd_say(rep, "Note: %s does not say its CUDA version: CUDA not "
                "checked", t.root);
    }
    cdd_target_clear(&t);
    return 0;
}

int cdd_cmd_releases(const struct cdd_cmdline *cl, struct cdd_report *rep,
                     struct cdd_cli_tree *tt)
{
    (void)tt; /* CDD_TREE_NONE */
    const struct cdd_opts_obtain *ob = &cl->obtain;
    struct cdd_catalog *cat = NULL;
    struct cdd_cat_verdict *v = NULL;
    struct cdd_fit_host mc;
    struct cdd_cat_query q = {0};
    struct cdd_jw *w = NULL;
    char *qtext = NULL;
    size_t n = 0, fits = 0;
    int r;

    q.want = cl->n_positional ? cl->positional[0] : NULL;
    if (q.want && (r = cdd_cat_want_check(q.want)))
        return r;
    if ((r = cdd_catalog_load(ob->catalog, &cat)))
        return r;
    if ((r = cuda_of(cl, rep, &q.cuda_major, &q.cuda_minor)))
        goto out;
    if ((r = cdd_cli_machine(ob, &mc)))
        goto out;
    q.platform = ob->platform ? ob->platform : cdd_cli_host_platform();
    if (strcmp(q.platform, "all") == 0)
        q.platform = NULL;
    q.cc = mc.cc;
    q.n_cc = mc.n_cc;
    q.driver = mc.has_driver ? mc.driver : NULL;
    cdd_cli_machine_say(rep, &mc);
    if ((r = cdd_catalog_match(cat, &q, &v, &n)))
        goto out;
    if (!(qtext = cdd_cli_query_text(&q)) || !(w = cdd_jw_new())) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    cdd_say(rep, "Catalog: %zu releases (%s); fitting %s%s%s", cat->n,
            cat->source, qtext, q.want ? ", cuDNN " : "",
            q.want ? q.want : "");
    cdd_jw_array(w, NULL);
    for (size_t i = 0; i < n;) {
        const struct cdd_cat_release *rel = v[i].rel;
        size_t j = i;
        cdd_jw_object(w, NULL);
        release_json(w, rel);
        cdd_jw_array(w, "archives");
        for (; j < n && v[j].rel == rel; j++) {
            archive_json(w, &v[j]);
            fits += v[j].why == 0;
            /* The human list: this platform's archives (all with
             * --platform all), of the version asked for. */
            if ((v[j].why & (CDD_CAT_PLATFORM | CDD_CAT_VERSION)))
                continue;
            if (v[j].why)
                cdd_say(rep, "  %-11s %-14s %-9s no: %s", rel->version,
                        v[j].a->platform, v[j].a->variant,
                        v[j].detail ? v[j].detail : "");
            else
                cdd_say(rep, "  %-11s %-14s %-9s fits%s%s%s", rel->version,
                        v[j].a->platform, v[j].a->variant,
                        v[j].detail ? " (" : "",
                        v[j].detail ? v[j].detail : "",
                        v[j].detail ? ")" : "");
        }
        cdd_jw_end(w);
        cdd_jw_end(w);
        i = j;
    }
    cdd_jw_end(w);
    cdd_report_doc(rep, "releases", w);
    w = NULL; /* the report's now */
    cdd_report_str(rep, "catalog", cat->source);
    cdd_report_str(rep, "platform", q.platform);
    if (q.driver)
        cdd_report_str(rep, "driver", q.driver);
    cdd_report_num(rep, "fitting", (double)fits);
    const struct cdd_cat_verdict *best = cdd_catalog_best(v, n);
    if (best) {
        cdd_report_str(rep, "choice", best->rel->version);
        cdd_report_str(rep, "choice_archive", best->a->relative_path);
        cdd_report_check(rep, "choice", CDD_CHECK_PASS,
                         "install --cudnn %s would choose cuDNN %s (%s, %s)",
                         q.want ? q.want : "latest", best->rel->version,
                         best->a->platform, best->a->variant);
    } else {
        cdd_report_check(rep, "choice", CDD_CHECK_WARN,
                         "no release fits %s%s%s", qtext,
                         q.want ? ", cuDNN " : "", q.want ? q.want : "");
    }
out:
    free(qtext);
    cdd_jw_free(w);
    cdd_cat_verdicts_free(v, n);
    cdd_catalog_free(cat);
    return r;
}
