/* GPU fit: the installed cuDNN against every GPU (fit.h). The judgement of
 * a catalog release and the newest release that fits are the catalog's own
 * selection (catalog_select.c), the device-code judgement fatbin.c's; this
 * file only puts them together into one check. */
#include "cdd/fit.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/catalog.h"
#include "cdd/compat_attr.h"
#include "cdd/error.h"
#include "cdd/gpu.h"
#include "cdd/isolate.h"
#include "cdd/strbuf.h"
#include "cdd/verify.h"
#include "verify_int.h"

/* ---- a growing text ------------------------------------------------------ */

/* The check's text is built piecewise in a struct cdd_sb (CDD_TEXT_MAX)
 * with cdd_sb_catf: the first failure sticks and is read once, at the end. */
#define TX_INIT(t) cdd_sb_init((t), CDD_TEXT_MAX, "fit check's text")

static char *dup_or_null(const char *s, int *oom)
{
    char *d = cdd_strdup(s);
    if (s && !d)
        *oom = 1;
    return d;
}

/* ---- the GPUs ------------------------------------------------------------ */

/* GPUs compared: the driver's devices (a host has a few dozen at most; the
 * driver API counts them in an int, the probe takes its word) or the
 * --gpu-cc values a command line names. More is refused, not cut. */
#define FIT_GPUS_MAX 4096

static int gpus_push(struct cdd_fit_gpus *g, int cc, const char *name)
{
    int rc = CDD_GROW(g->v, NULL, g->n + 1, FIT_GPUS_MAX, "GPUs to compare");
    if (rc)
        return rc;
    struct cdd_fit_gpu *v = g->v;
    v[g->n].cc = cc;
    v[g->n].name = NULL;
    if (name && *name && !(v[g->n].name = strdup(name)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    g->n++;
    return 0;
}

int cdd_fit_gpus_add_cc(struct cdd_fit_gpus *g, const char *s)
{
    int cc = cdd_cat_cc_parse(s);
    if (cc < 0)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "--gpu-cc %s: expected a compute capability such as "
                        "8.6", s);
    g->given = 1;
    return gpus_push(g, cc, NULL);
}

static int set_note(struct cdd_fit_gpus *g, const char *what, const char *why)
{
    size_t len = strlen(what) + strlen(why) + 4;
    free(g->note);
    if (!(g->note = malloc(len)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    snprintf(g->note, len, "%s%s%s", what, *why ? ": " : "", why);
    return 0;
}

/* The probe itself, in whichever process runs it. */
static int probe_here(struct cdd_fit_gpus *g)
{
    struct cdd_gpu_env *e = NULL;
    int r = 0;
    if (cdd_gpu_env_open(NULL, &e) != 0) {
        /* The loader's reason may begin "no NVIDIA driver: ": said once. */
        static const char lead[] = "no NVIDIA driver: ";
        const char *why = cdd_last_error()->msg;
        if (strncmp(why, lead, sizeof lead - 1) == 0)
            why += sizeof lead - 1;
        r = set_note(g, "no NVIDIA driver", why);
        if (!r)
            cdd_clear_error();
        return r;
    }
    const struct cdd_gpu_info *gi = cdd_gpu_env_info(e);
    if (!g->driver && gi->driver_release[0] &&
        !(g->driver = strdup(gi->driver_release)))
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (int i = 0, count = 1; !r && !g->given && i < count; i++) {
        if (cdd_gpu_env_device(e, i) != 0) {
            if (i == 0 && !(r = set_note(g, "the driver reports no usable GPU",
                                         cdd_last_error()->msg)))
                cdd_clear_error();
            break;
        }
        gi = cdd_gpu_env_info(e);
        count = gi->device_count;
        r = gpus_push(g, gi->cc_major * 10 + gi->cc_minor, gi->device_name);
    }
    cdd_gpu_env_close(e);
    return r;
}

/* The probe runs the driver's cuInit, so it runs apart (isolate.h): a
 * driver that crashes there becomes the note, not the death of the
 * command, and this process never initialises CUDA itself (a GPU layer
 * forked after that could not use the driver). The child sends 'd' the
 * driver's release, 'n' the note, 'g' each GPU (its cc in 4 bytes, then
 * its name) and 'e' at the end. */
#define PROBE_MAX ((size_t)FIT_GPUS_MAX * (CDD_NAME_MAX + 16) + 65536)

static int probe_child(struct cdd_child *ch, void *arg)
{
    const struct cdd_fit_gpus *asked = arg;
    struct cdd_fit_gpus t;
    memset(&t, 0, sizeof t);
    t.given = asked->given;
    int r = probe_here(&t);
    if (!r && t.driver)
        r = cdd_child_send_rec(ch, 'd', t.driver, strlen(t.driver));
    if (!r && t.note)
        r = cdd_child_send_rec(ch, 'n', t.note, strlen(t.note));
    for (size_t i = 0; !r && i < t.n; i++) {
        char rec[4 + CDD_NAME_MAX]; /* fixed: a cc and a device name */
        size_t nl = t.v[i].name ? strlen(t.v[i].name) : 0;
        if (nl > CDD_NAME_MAX)
            nl = CDD_NAME_MAX; /* the driver's names are under 256 bytes */
        int32_t cc = t.v[i].cc;
        memcpy(rec, &cc, 4);
        if (nl)
            memcpy(rec + 4, t.v[i].name, nl);
        r = cdd_child_send_rec(ch, 'g', rec, 4 + nl);
    }
    if (!r)
        r = cdd_child_send_rec(ch, 'e', NULL, 0);
    cdd_fit_gpus_clear(&t);
    return r;
}

static int take_text(char **dst, const char *p, size_t n)
{
    char *s = cdd_strndup(p, n);
    if (!s)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    free(*dst);
    *dst = s;
    return 0;
}

/* Started afresh (Windows): the request is one byte, g->given. */
int cdd_fit_probe_entry(struct cdd_child *ch, const void *req, size_t n)
{
    struct cdd_fit_gpus asked;
    memset(&asked, 0, sizeof asked);
    if (n != 1)
        return 1;
    asked.given = ((const unsigned char *)req)[0] != 0;
    return probe_child(ch, &asked);
}

int cdd_fit_gpus_probe(struct cdd_fit_gpus *g)
{
    struct cdd_isolated iso;
    unsigned char given = g->given != 0;
    struct cdd_respawn again = {"verify-fit", &given, 1};
    int r = cdd_run_isolated(probe_child, g, &again, PROBE_MAX,
                             cdd_gpu_timeout_ms(g->timeout),
                             "the GPU listing (cuInit, device queries)",
                             &iso);
    if (r) {
        if (cdd_last_error()->code != CDD_E_NOMEM) {
            char *why = cdd_strdup(cdd_last_error()->msg);
            cdd_clear_error();
            r = set_note(g, "the GPUs could not be listed", why ? why : "");
            free(why);
        }
        cdd_isolated_free(&iso);
        return r;
    }
    size_t pos = 0, n = 0;
    const char *p = NULL;
    char type = 0;
    int ended = 0, bad = 0;
    while (!r && !bad && !ended &&
           cdd_isolated_next(&iso, &pos, &type, &p, &n)) {
        if (memchr(p, '\0', n) && type != 'g')
            bad = 1;
        else if (type == 'd' && !g->driver)
            r = take_text(&g->driver, p, n);
        else if (type == 'd')
            ;
        else if (type == 'n')
            r = take_text(&g->note, p, n);
        else if (type == 'g' && n >= 4 && n <= 4 + CDD_NAME_MAX && !g->given) {
            char name[CDD_NAME_MAX + 1]; /* fixed: a device name */
            int32_t cc;
            memcpy(&cc, p, 4);
            memcpy(name, p + 4, n - 4);
            name[n - 4] = '\0';
            if (cc < 0 || cc > 10000 || memchr(p + 4, '\0', n - 4))
                bad = 1;
            else
                r = gpus_push(g, cc, name);
        } else if (type == 'e' && n == 0)
            ended = 1;
        else
            bad = 1;
    }
    if (!r && (bad || !ended || !cdd_isolated_ok(&iso))) {
        g->crashed = 1;
        char how[96], why[128]; /* fixed: cdd_isolated_how's words */
        snprintf(why, sizeof why, "the process listing them %s",
                 cdd_isolated_how(&iso, how, sizeof how));
        r = set_note(g, bad ? "the GPU listing came back malformed"
                     : iso.stalled ? "the NVIDIA driver hung while listing "
                                     "the GPUs (cuInit, device queries)"
                                   : "the NVIDIA driver crashed while listing "
                                     "the GPUs (cuInit, device queries)",
                     why);
    }
    cdd_isolated_free(&iso);
    return r;
}

void cdd_fit_gpus_clear(struct cdd_fit_gpus *g)
{
    if (!g) /* like free(): a list never allocated */
        return;
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i].name);
    free(g->v);
    free(g->driver);
    free(g->note);
    memset(g, 0, sizeof *g);
}

/* "GPU 0 NVIDIA H200 (sm_90)" or "GPU sm_61 (--gpu-cc)" */
static void say_gpu(struct cdd_sb *t, const struct cdd_fit_gpus *g, size_t i)
{
    const struct cdd_fit_gpu *u = &g->v[i];
    if (u->name)
        cdd_sb_catf(t, "GPU %zu %s (compute capability %d.%d)", i, u->name,
           u->cc / 10, u->cc % 10);
    else
        cdd_sb_catf(t, "GPU of compute capability %d.%d (%s)", u->cc / 10, u->cc % 10,
           g->given ? "--gpu-cc" : "reported by the driver");
}

/* ---- the installed release in the catalog -------------------------------- */

/* The release q->version names: exactly, else the newest whose version
 * begins with it ("9.14.0" read from a file name). */
static const struct cdd_cat_release *find_release(const struct cdd_catalog *c,
                                                  const char *version)
{
    const struct cdd_cat_release *r = cdd_catalog_release(c, version);
    size_t len = strlen(version);
    for (size_t i = 0; !r && i < c->n; i++)
        if (strncmp(c->releases[i].version, version, len) == 0 &&
            c->releases[i].version[len] == '.')
            r = &c->releases[i];
    return r;
}

/* The catalog's verdict on rel for one GPU: 1 it fits, 0 not (why: the
 * selection's reasons), -1 no verdict (CDD_E_NOMEM in *err). */
static int judge_one(const struct cdd_catalog *c,
                     const struct cdd_cat_release *rel,
                     const struct cdd_fit_query *q, int cc, struct cdd_sb *why,
                     int *err)
{
    struct cdd_cat_query cq = {.want = rel->version,
                               .platform = q->platform,
                               .cuda_major = q->cuda_major,
                               .cuda_minor = q->cuda_minor,
                               .cc = &cc,
                               .n_cc = 1};
    struct cdd_cat_verdict *v = NULL;
    size_t n = 0;
    int fits = -1;
    if ((*err = cdd_catalog_match(c, &cq, &v, &n)) != 0)
        return -1;
    for (size_t i = 0; i < n && fits < 0; i++) {
        if (v[i].rel != rel || v[i].a->cuda_major != q->cuda_major ||
            (v[i].why & (CDD_CAT_VERSION | CDD_CAT_PLATFORM)))
            continue;
        fits = !(v[i].why & CDD_CAT_GPU);
        if (!fits)
            cdd_sb_catf(why, "%s", v[i].detail ? v[i].detail : "");
    }
    cdd_cat_verdicts_free(v, n);
    return fits;
}

/* The newest release that fits the tree's CUDA, the platform, the driver
 * and every GPU: `install --cudnn latest`'s choice. */
static int newest_fit(const struct cdd_catalog *c,
                      const struct cdd_fit_query *q,
                      struct cdd_fit_result *res)
{
    int *cc = calloc(q->gpus->n, sizeof *cc);
    struct cdd_cat_verdict *v = NULL;
    size_t n = 0;
    int r, oom = 0;
    if (!cc)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i < q->gpus->n; i++)
        cc[i] = q->gpus->v[i].cc;
    struct cdd_cat_query cq = {.want = "latest",
                               .platform = q->platform,
                               .cuda_major = q->cuda_major,
                               .cuda_minor = q->cuda_minor,
                               .cc = cc,
                               .n_cc = q->gpus->n,
                               .driver = q->gpus->driver};
    r = cdd_catalog_match(c, &cq, &v, &n);
    const struct cdd_cat_verdict *best = r ? NULL : cdd_catalog_best(v, n);
    if (best) {
        res->newest = dup_or_null(best->rel->version, &oom);
        res->newest_variant = dup_or_null(best->a->variant, &oom);
    }
    cdd_cat_verdicts_free(v, n);
    free(cc);
    if (!r && oom)
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    return r;
}

static void say_cc(struct cdd_sb *t, int cc)
{
    cdd_sb_catf(t, "sm_%d", cc);
}

/* ---- the check ----------------------------------------------------------- */

int cdd_fit_check(const struct cdd_fit_query *q, const char *name,
                  struct cdd_checks *out, struct cdd_fit_result *res)
{
    const struct cdd_fit_gpus *g = q->gpus;
    struct cdd_catalog *cat = NULL;
    struct cdd_sb d, sup, why;
    const struct cdd_cat_release *rel = NULL;
    const struct cdd_cat_variant *var = NULL;
    char *cat_err = NULL;
    enum cdd_check_status st = CDD_CHECK_PASS;
    size_t n_jit = 0;
    int r = 0, err = 0;
    const char *ver = q->version ? q->version : "of unknown version";

    TX_INIT(&d);
    TX_INIT(&sup);
    TX_INIT(&why);
    memset(res, 0, sizeof *res);
    res->basis = "unknown";
    if (!g || !g->n) {
        r = cdd_checks_add(out, name, CDD_CHECK_SKIP,
                           "no GPU to compare %s%s with (%s); --gpu-cc X.Y "
                           "names one", q->version ? "cuDNN " : "cuDNN",
                           q->version ? q->version : "",
                           g && g->note ? g->note : "none known");
        return r;
    }
    if (cdd_catalog_load(q->catalog_dir, &cat) != 0) {
        if (cdd_last_error()->code == CDD_E_NOMEM)
            return CDD_E_NOMEM;
        cat_err = cdd_strdup(cdd_last_error()->msg);
        cdd_clear_error();
        cat = NULL;
    }
    if (cat && q->version)
        rel = find_release(cat, q->version);
    /* A copy whose CUDA is not known (one on the search path, outside any
     * toolkit) is judged by the release's first CUDA variant. */
    struct cdd_fit_query qq = *q;
    int guessed = 0;
    if (rel && !qq.cuda_major && rel->n_variants) {
        qq.cuda_major = rel->variants[0].cuda_major;
        qq.cuda_minor = -1;
        guessed = 1;
    }
    if (rel && qq.cuda_major)
        var = cdd_cat_variant_of(rel, qq.cuda_major);

    if (var && var->cc_lo) {
        res->basis = "catalog";
        cdd_sb_catf(&sup, "sm_%d to sm_%d with CUDA %d%s (support matrix: %s)",
           var->cc_lo, var->cc_hi, qq.cuda_major,
           guessed ? ", its CUDA variant not known" : "",
           rel->matrix ? rel->matrix : "catalog facts");
        for (size_t i = 0; i < g->n && !err; i++) {
            struct cdd_sb w;
            TX_INIT(&w);
            int fits = judge_one(cat, rel, &qq, g->v[i].cc, &w, &err);
            if (fits == 0) {
                /* Outside the support matrix. The libraries' own code says
                 * whether it can run at all; without it, a GPU newer than
                 * the matrix may still run PTX through JIT, an older one
                 * has nothing. */
                unsigned arch = 0;
                enum cdd_arch_fit f =
                    q->code && q->code->n_codes
                        ? cdd_fatbin_fit(q->code, g->v[i].cc / 10,
                                         g->v[i].cc % 10, &arch)
                        : g->v[i].cc > var->cc_hi ? CDD_ARCH_PTX_JIT
                                                  : CDD_ARCH_NONE;
                cdd_sb_catf(&why, "%s", cdd_sb_len(&why) ? "; " : "");
                say_gpu(&why, g, i);
                cdd_sb_catf(&why, ": %s", cdd_sb_str(&w));
                if (f == CDD_ARCH_NONE) {
                    res->n_unfit++;
                } else if (f == CDD_ARCH_PTX_JIT) {
                    n_jit++;
                    cdd_sb_catf(&why, " (not supported: it can run only through PTX "
                       "the driver compiles at first use, if at all)");
                } else {
                    n_jit++;
                    cdd_sb_catf(&why, " (not supported, though the libraries carry "
                       "SASS for it)");
                }
            }
            if (fits >= 0)
                res->compared = 1;
            cdd_sb_free(&w);
        }
    } else if (q->code && q->code->n_codes) {
        char desc[CDD_FATBIN_DESC_MAX]; /* fixed: every code fits (fatbin.h) */
        res->basis = "device code";
        cdd_sb_catf(&sup, "%s (the libraries' device code)",
           cdd_fatbin_describe(q->code, desc, sizeof desc));
        for (size_t i = 0; i < g->n; i++) {
            unsigned arch = 0;
            enum cdd_arch_fit f = cdd_fatbin_fit(q->code, g->v[i].cc / 10,
                                                 g->v[i].cc % 10, &arch);
            res->compared = 1;
            if (f == CDD_ARCH_SASS)
                continue;
            cdd_sb_catf(&why, "%s", cdd_sb_len(&why) ? "; " : "");
            say_gpu(&why, g, i);
            if (f == CDD_ARCH_PTX_JIT) {
                n_jit++;
                cdd_sb_catf(&why, ": no SASS for it, only PTX compute_%u, which the "
                   "driver compiles at first use (slow, and only when it "
                   "knows that PTX version)", arch);
            } else {
                res->n_unfit++;
                cdd_sb_catf(&why, ": neither SASS for ");
                say_cc(&why, g->v[i].cc);
                cdd_sb_catf(&why, " nor PTX it can compile: its kernels cannot run "
                   "there");
            }
        }
    }
    if (!cdd_sb_error(&sup) && cdd_sb_len(&sup) &&
        !(res->supports = cdd_strdup(cdd_sb_str(&sup))))
        err = CDD_E_NOMEM;
    if (err) {
        r = err == CDD_E_NOMEM ? CDD_E_NOMEM : 0;
        cdd_clear_error();
        if (!r) {
            /* Not judged: say so below as unknown. */
            res->compared = 0;
        }
    }
    if (!r && cat && (res->n_unfit || n_jit) && newest_fit(cat, q, res)) {
        r = cdd_last_error()->code == CDD_E_NOMEM ? CDD_E_NOMEM : 0;
        cdd_clear_error();
    }
    if (r)
        goto out;

    if (!res->compared) {
        st = CDD_CHECK_SKIP;
        cdd_sb_catf(&d, "what cuDNN %s supports is not known: %s%s%s%s, and no "
           "device code was read from its libraries", ver,
           !q->version ? "its version is not known"
           : !cat      ? "the catalog did not load"
           : !rel      ? "not in the catalog"
                       : "the catalog has no support-matrix facts for it",
           cat_err ? " (" : "", cat_err ? cat_err : "", cat_err ? ")" : "");
        if (!cat_err && !rel && cat)
            cdd_sb_catf(&d, " (%s)", cat->source);
    } else {
        st = res->n_unfit ? CDD_CHECK_FAIL : n_jit ? CDD_CHECK_WARN
                                                   : CDD_CHECK_PASS;
        cdd_sb_catf(&d, "cuDNN %s supports %s", ver, cdd_sb_str(&sup));
        if (st == CDD_CHECK_PASS) {
            cdd_sb_catf(&d, "; every GPU fits: ");
            for (size_t i = 0; i < g->n; i++) {
                cdd_sb_catf(&d, "%s", i ? ", " : "");
                say_gpu(&d, g, i);
            }
        } else {
            cdd_sb_catf(&d, "; %s", cdd_sb_str(&why));
            if (res->newest)
                cdd_sb_catf(&d, ". The newest catalog release that fits this tree's "
                   "CUDA, the driver and every GPU is cuDNN %s (%s): "
                   "cudnn-deploy install --cudnn %s", res->newest,
                   res->newest_variant ? res->newest_variant : "?",
                   res->newest);
            else if (cat)
                cdd_sb_catf(&d, ". No catalog release fits this tree's CUDA%s and "
                   "every GPU: 'cudnn-deploy releases --gpu-cc X.Y' shows "
                   "why each does not (an older GPU may need an older CUDA "
                   "toolkit)", g->driver ? ", the driver" : "");
        }
    }
    int terr = cdd_sb_error(&d)     ? cdd_sb_error(&d)
               : cdd_sb_error(&why) ? cdd_sb_error(&why)
                                    : cdd_sb_error(&sup);
    if (terr)
        r = cdd_fail(terr, NULL, 0, NULL);
    else
        r = cdd_checks_add(out, name, st, "%s", cdd_sb_str(&d));
out:
    cdd_sb_free(&d);
    cdd_sb_free(&sup);
    cdd_sb_free(&why);
    free(cat_err);
    cdd_catalog_free(cat);
    return r;
}

void cdd_fit_result_clear(struct cdd_fit_result *r)
{
    free(r->supports);
    free(r->newest);
    free(r->newest_variant);
    memset(r, 0, sizeof *r);
}
