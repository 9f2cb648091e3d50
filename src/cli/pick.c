/* The release catalog on the command line: what this machine is (its GPUs
 * and driver, or what the options say), which catalog release fits it, and
 * for install --cudnn the pin for the obtain step and the checks that bind
 * the manifest made from the archive to the catalog's entry. */
#include "pick.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fit.h"
#include "cdd/gpu.h"
#include "cdd/manifest.h"
#include "cdd/mcreate.h"
#include "cdd/obtain.h"
#include "cdd/redistrib.h"
#include "report.h"

/* --driver: CDD_E_USAGE unless a dotted version. */
static int driver_bad(const char *d)
{
    if (d[0] < '0' || d[0] > '9' || strspn(d, "0123456789.") != strlen(d) ||
        strlen(d) >= sizeof ((struct cdd_fit_host *)0)->driver)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "--driver %s: expected a version such as 580.65.06",
                        d);
    return 0;
}

int cdd_cli_machine(const struct cdd_opts_obtain *ob, struct cdd_fit_host *mc)
{
    memset(mc, 0, sizeof *mc);
    for (size_t i = 0; i < ob->gpu_cc.n; i++) {
        int cc = cdd_cat_cc_parse(ob->gpu_cc.v[i]);
        if (cc < 0)
            return cdd_fail(CDD_E_USAGE, NULL, 0,
                            "--gpu-cc %s: expected a compute capability "
                            "such as 8.6", ob->gpu_cc.v[i]);
        mc->cc[mc->n_cc++] = cc;
    }
    mc->gpus_given = ob->gpu_cc.n > 0;
    if (ob->driver) {
        if (driver_bad(ob->driver))
            return driver_bad(ob->driver);
        snprintf(mc->driver, sizeof mc->driver, "%s", ob->driver);
        mc->has_driver = 1;
    }
    if (mc->gpus_given && mc->has_driver)
        return 0;
    /* Read-only, and in a process of its own (fit.h): the driver's version
     * and each device's compute capability; nothing runs on the GPU. */
    struct cdd_fit_gpus fg;
    memset(&fg, 0, sizeof fg);
    fg.given = mc->gpus_given;
    int r = cdd_fit_gpus_probe(&fg);
    if (r) {
        cdd_fit_gpus_clear(&fg);
        return r;
    }
    static const char no_driver[] = "no NVIDIA driver";
    if (!fg.driver && fg.note &&
        strncmp(fg.note, no_driver, sizeof no_driver - 1) == 0) {
        snprintf(mc->note, sizeof mc->note,
                 "no NVIDIA driver found: %s%s%snot checked (--gpu-cc, "
                 "--driver to say them)",
                 mc->gpus_given ? "" : "GPUs", mc->gpus_given || mc->has_driver ? "" : " and ",
                 mc->has_driver ? "" : "driver ");
        cdd_fit_gpus_clear(&fg);
        return 0;
    }
    if (!mc->has_driver && fg.driver && strlen(fg.driver) < sizeof mc->driver) {
        memcpy(mc->driver, fg.driver, strlen(fg.driver) + 1);
        mc->has_driver = 1;
        mc->driver_probed = 1;
    }
    for (size_t i = 0; !mc->gpus_given && i < fg.n &&
                       mc->n_cc < CDD_MACHINE_MAX_GPUS; i++) {
        mc->cc[mc->n_cc++] = fg.v[i].cc;
        mc->gpus_probed = 1;
    }
    if (!mc->gpus_given && !mc->n_cc)
        snprintf(mc->note, sizeof mc->note, "%s: GPUs not checked (--gpu-cc "
                 "to say them)", fg.crashed
                     ? "the NVIDIA driver crashed while listing the GPUs"
                     : "the driver reports no usable GPU");
    cdd_fit_gpus_clear(&fg);
    return 0;
}

void cdd_cli_machine_say(struct cdd_report *rep, const struct cdd_fit_host *mc)
{
    char gpus[CDD_MACHINE_MAX_GPUS * 12 + 8] = ""; /* fixed: sm_N per GPU */
    for (size_t i = 0; i < mc->n_cc; i++) {
        size_t u = strlen(gpus);
        snprintf(gpus + u, sizeof gpus - u, "%ssm_%d", i ? ", " : "",
                 mc->cc[i]);
    }
    if (mc->n_cc)
        cdd_say(rep, "GPUs: %s (%s)", gpus,
                mc->gpus_given ? "--gpu-cc" : "reported by the driver");
    if (mc->has_driver)
        cdd_say(rep, "Driver: %s (%s)", mc->driver,
                mc->driver_probed ? "installed" : "--driver");
    if (mc->note[0])
        cdd_say(rep, "Note: %s", mc->note);
}

const char *cdd_cli_host_platform(void)
{
    return cdd_platform_name(cdd_platform_host());
}

/* "CUDA 12.4, linux-x86_64, sm_86, driver 550.54" */
static char *describe(const struct cdd_cat_query *q)
{
    size_t cap = 128 + q->n_cc * 12 + (q->driver ? strlen(q->driver) : 0) +
                 (q->platform ? strlen(q->platform) : 0);
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t n = 0;
    if (q->cuda_major && q->cuda_minor >= 0)
        n += (size_t)snprintf(s + n, cap - n, "CUDA %d.%d", q->cuda_major,
                              q->cuda_minor);
    else if (q->cuda_major)
        n += (size_t)snprintf(s + n, cap - n, "CUDA %d", q->cuda_major);
    if (q->platform)
        n += (size_t)snprintf(s + n, cap - n, "%s%s", n ? ", " : "",
                              q->platform);
    for (size_t i = 0; i < q->n_cc; i++)
        n += (size_t)snprintf(s + n, cap - n, "%ssm_%d", n ? ", " : "",
                              q->cc[i]);
    if (q->driver)
        n += (size_t)snprintf(s + n, cap - n, "%sdriver %s", n ? ", " : "",
                              q->driver);
    if (!n)
        snprintf(s, cap, "anything");
    return s;
}

char *cdd_cli_query_text(const struct cdd_cat_query *q)
{
    return describe(q);
}

static int dup_into(char **dst, const char *src)
{
    if (!(*dst = strdup(src)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    return 0;
}

/* The manifest obtain needs: the archive's name, NVIDIA's URL and the
 * catalog's pin. */
static int pin_manifest(const struct cdd_pick *p, enum cdd_platform plat,
                        int use_redistrib, int local, const uint8_t *option,
                        struct cdd_manifest **out)
{
    const struct cdd_cat_archive *a = p->a;
    struct cdd_manifest *m = calloc(1, sizeof *m);
    size_t ul = strlen(CDD_REDISTRIB_BASE_URL) + strlen(a->relative_path) + 1;
    size_t sl = strlen(p->rel->version) + 16;
    int r;
    *out = NULL;
    if (!m)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    m->schema_version = CDD_MANIFEST_SCHEMA;
    m->platform = plat;
    m->cuda_major = a->cuda_major;
    m->files_exact = 1;
    if ((r = dup_into(&m->product, "cudnn")) ||
        (r = dup_into(&m->version, p->rel->version)) ||
        (r = dup_into(&m->archive.filename, a->filename)))
        goto out;
    if (!(m->source = malloc(sl)) ||
        !(m->archive.urls = calloc(1, sizeof *m->archive.urls)) ||
        !(m->archive.urls[0] = malloc(ul))) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    snprintf(m->source, sl, "catalog:%s", p->rel->version);
    snprintf(m->archive.urls[0], ul, "%s%s", CDD_REDISTRIB_BASE_URL,
             a->relative_path);
    m->archive.n_urls = 1;
    if (option) {
        /* --sha256: the user's own pin for these bytes (an archive they
         * packed, a mirror's rebuild), instead of the catalog's. */
        m->archive.has_sha256 = 1;
        memcpy(m->archive.sha256, option, CDD_SHA256_LEN);
    } else if (!use_redistrib) {
        /* NVIDIA's current digest; a local file may also match an earlier
         * one, checked after the manifest is made from it. */
        m->archive.has_sha256 = 1;
        memcpy(m->archive.sha256, a->digests[0].sha256, CDD_SHA256_LEN);
        /* A local file's size is not refused up front: its digest, checked
         * against every known one, says more (a re-spin). */
        if (!local && a->n_digests == 1 && a->digests[0].has_size) {
            m->archive.has_size = 1;
            m->archive.size = a->digests[0].size;
        }
    }
out:
    if (r)
        cdd_manifest_free(m);
    else
        *out = m;
    return r;
}

int cdd_cli_pick(const struct cdd_cmdline *cl, const struct cdd_target *t,
                 struct cdd_report *rep, struct cdd_pick *p)
{
    const struct cdd_opts_obtain *ob = &cl->obtain;
    struct cdd_fit_host mc;
    struct cdd_cat_query q = {0};
    const struct cdd_cat_verdict *best;
    enum cdd_platform plat;
    char *qtext = NULL;
    int r;

    memset(p, 0, sizeof *p);
    p->want = ob->cudnn ? ob->cudnn : "latest";
    if ((r = cdd_cat_want_check(p->want)))
        return r;
    if ((r = cdd_catalog_load(ob->catalog, &p->cat)))
        return r;
    if ((r = cdd_cli_machine(ob, &mc)))
        return r;
    q.want = p->want;
    q.platform = ob->platform ? ob->platform : cdd_cli_host_platform();
    if (t->version.known) {
        q.cuda_major = t->version.major;
        q.cuda_minor = t->version.minor;
    } else if (t->asked) {
        q.cuda_major = t->asked_major;
        q.cuda_minor = t->asked_minor;
    } else {
        return cdd_fail(CDD_E_TARGET, t->root, 0,
                        "the tree's CUDA version is unknown (no version.json, "
                        "version.txt or include/cuda.h), and the catalog "
                        "choice needs it: give --manifest, or --cuda vX.Y");
    }
    q.cc = mc.cc;
    q.n_cc = mc.n_cc;
    q.driver = mc.has_driver ? mc.driver : NULL;
    cdd_cli_machine_say(rep, &mc);
    if ((r = cdd_catalog_match(p->cat, &q, &p->v, &p->n)))
        return r;
    if (!(qtext = describe(&q)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    best = cdd_catalog_best(p->v, p->n);
    /* The newer releases of the version asked for, and why they lost. */
    size_t shown = 0;
    for (size_t i = 0; i < p->n && shown < 4; i++) {
        const struct cdd_cat_verdict *v = &p->v[i];
        if (best && v->rel == best->rel)
            break;
        if (v->why & (CDD_CAT_VERSION | CDD_CAT_PLATFORM))
            continue;
        if ((v->why & CDD_CAT_CUDA) && v->a->cuda_major != q.cuda_major)
            continue;
        cdd_say(rep, "  skipped cuDNN %s (%s): %s", v->rel->version,
                v->a->variant, v->detail ? v->detail : "");
        shown++;
    }
    if (!best) {
        r = cdd_fail(CDD_E_NOTFOUND, NULL, 0,
                     "no cuDNN release in the catalog (%s) matches '%s' and "
                     "fits %s; 'cudnn-deploy releases' shows each and why",
                     p->cat->source, p->want, qtext);
        free(qtext);
        return r;
    }
    p->rel = best->rel;
    p->a = best->a;
    size_t sl = strlen(p->want) + strlen(qtext) + strlen(p->a->relative_path) +
                strlen(p->rel->version) + strlen(p->rel->source) +
                (best->detail ? strlen(best->detail) : 0) + 160;
    if (!(p->selection = malloc(sl))) {
        free(qtext);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    snprintf(p->selection, sl,
             "cuDNN %s (%s, %s) from the catalog (%s): the newest release "
             "matching '%s' that fits %s%s%s", p->rel->version, p->a->variant,
             p->a->platform, p->rel->source, p->want, qtext,
             best->detail ? "; " : "", best->detail ? best->detail : "");
    free(qtext);
    cdd_say(rep, "Chose %s", p->selection);
    cdd_report_str(rep, "selection", p->selection);
    cdd_report_str(rep, "catalog_release", p->rel->version);
    cdd_report_str(rep, "catalog_archive", p->a->relative_path);
    if (cdd_platform_parse(p->a->platform, &plat))
        return cdd_fail(CDD_E_NOTSUP, NULL, 0,
                        "%s archives are listed in the catalog but this "
                        "build cannot install them yet (it knows the layouts "
                        "of %s and %s)", p->a->platform,
                        cdd_platform_name(CDD_PLATFORM_LINUX_X86_64),
                        cdd_platform_name(CDD_PLATFORM_WINDOWS_X86_64));
    return pin_manifest(p, plat, ob->redistrib != NULL, ob->archive != NULL,
                        ob->has_sha256 ? ob->sha256 : NULL, &p->pin);
}

/* "a, b and c" of the archive's digests, in hex. */
static char *digest_list(const struct cdd_cat_archive *a)
{
    size_t cap = a->n_digests * (CDD_SHA256_HEX + 8) + 1;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0, n = 0; i < a->n_digests; i++) {
        char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
        cdd_hex_encode(a->digests[i].sha256, CDD_SHA256_LEN, hex);
        n += (size_t)snprintf(s + n, cap - n, "%s%s",
                              i == 0 ? "" : i + 1 == a->n_digests ? " and "
                                                                  : ", ",
                              hex);
    }
    return s;
}

int cdd_cli_respin_error(const struct cdd_cat_release *rel,
                         const struct cdd_cat_archive *a, const char *what,
                         const uint8_t *got)
{
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    char *known = digest_list(a);
    cdd_hex_encode(got, CDD_SHA256_LEN, hex);
    int r = cdd_fail(
        CDD_E_CHECKSUM, what, 0,
        "sha256 %s: these bytes differ from every release of %s NVIDIA is "
        "known to have published (%zu known: %s). NVIDIA may have re-spun "
        "it under the same name; check it against NVIDIA's current JSON: "
        "--redistrib %sredistrib_%s.json (or fetch that file and compare "
        "its sha256 for %s)",
        hex, a->filename, a->n_digests, known ? known : "?",
        CDD_REDISTRIB_BASE_URL, rel->label, a->relative_path);
    free(known);
    return r;
}

int cdd_cli_pick_manifest(const struct cdd_pick *p, const char *archive,
                          int redistrib_pinned, const uint8_t *redistrib_pin,
                          const uint8_t *option_pin, struct cdd_report *rep,
                          struct cdd_manifest **out, uint8_t *pin)
{
    struct cdd_mcreate_opts mo = {.archive_path = archive};
    struct cdd_manifest *m = NULL;
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    int r, k = -1;
    *out = NULL;
    /* The file list from the archive's own entries, read under the
     * install's rules; its sha256 is computed on the way. */
    if ((r = cdd_manifest_create(&mo, &m)))
        return r;
    if (option_pin) {
        if (memcmp(m->archive.sha256, option_pin, CDD_SHA256_LEN) != 0) {
            r = cdd_fail(CDD_E_CHECKSUM, archive, 0,
                         "the archive's sha256 is not the one --sha256 names");
            goto out;
        }
    } else if (redistrib_pinned) {
        if (memcmp(m->archive.sha256, redistrib_pin, CDD_SHA256_LEN) != 0) {
            r = cdd_fail(CDD_E_CHECKSUM, archive, 0,
                         "the archive changed after it was checked against "
                         "NVIDIA's JSON");
            goto out;
        }
    } else if ((k = cdd_cat_digest_index(p->a, m->archive.sha256)) < 0) {
        r = cdd_cli_respin_error(p->rel, p->a, archive, m->archive.sha256);
        goto out;
    }
    if (strcmp(cdd_platform_name(m->platform), p->a->platform) != 0) {
        r = cdd_fail(CDD_E_ARCHIVE, archive, 0,
                     "the archive's files are laid out for %s, but the "
                     "catalog's entry is for %s",
                     cdd_platform_name(m->platform), p->a->platform);
        goto out;
    }
    if (m->cuda_major != p->a->cuda_major) {
        r = cdd_fail(CDD_E_ARCHIVE, archive, 0,
                     "the archive is for CUDA %d, but the catalog's entry is "
                     "for CUDA %d", m->cuda_major, p->a->cuda_major);
        goto out;
    }
    if (strcmp(m->version, p->rel->version) != 0) {
        r = cdd_fail(CDD_E_ARCHIVE, archive, 0,
                     "the archive says cuDNN %s, but the catalog's entry is "
                     "cuDNN %s", m->version, p->rel->version);
        goto out;
    }
    memcpy(pin, m->archive.sha256, CDD_SHA256_LEN);
    cdd_hex_encode(pin, CDD_SHA256_LEN, hex);
    if (k > 0)
        cdd_say(rep, "Note: %s matches an earlier digest of that name "
                "(%s), not the one in NVIDIA's current JSON", p->a->filename,
                p->a->digests[k].source);
    cdd_report_check(rep, "catalog", CDD_CHECK_PASS,
                     "%s: sha256 %s %s; %zu files listed from the archive "
                     "(%s, CUDA %d, cuDNN %s)", p->a->filename, hex,
                     option_pin ? "matches --sha256 (not a digest NVIDIA "
                                  "published)"
                     : redistrib_pinned ? "matches NVIDIA's JSON (--redistrib)"
                                        : "matches the catalog",
                     m->n_files, p->a->platform, m->cuda_major, m->version);
out:
    if (r)
        cdd_manifest_free(m);
    else
        *out = m;
    return r;
}

void cdd_pick_clear(struct cdd_pick *p)
{
    cdd_cat_verdicts_free(p->v, p->n);
    cdd_manifest_free(p->pin);
    cdd_catalog_free(p->cat);
    free(p->selection);
    memset(p, 0, sizeof *p);
}

int cdd_cli_fit_gpus(const struct cdd_opts_obtain *ob, struct cdd_fit_gpus *g)
{
    int r = 0;
    for (size_t i = 0; !r && i < ob->gpu_cc.n; i++)
        r = cdd_fit_gpus_add_cc(g, ob->gpu_cc.v[i]);
    if (!r && ob->driver) {
        if ((r = driver_bad(ob->driver)) != 0)
            return r;
        if (!(g->driver = strdup(ob->driver)))
            r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    if (!r)
        r = cdd_fit_gpus_probe(g);
    return r;
}
