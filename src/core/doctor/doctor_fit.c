/* doctor's fit checks, after the scan and its checks: every cuDNN the host
 * has against every GPU (fit.h: "fit <path>"), and in every Python
 * environment holding cuDNN, where cuDNN's own bare-name loads of its
 * sub-libraries land (barename.h: "python.barename <soname>"). Unlike
 * doctor_check.c these look at files (the catalog, each library's device
 * code, the loader's search path) and are tested end to end
 * (tests/e2e/test_fit.py). docs/verification.md, "GPU fit" and "Bare-name
 * loads". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/barename.h"
#include "cdd/error.h"
#include "cdd/fatbin.h"
#include "cdd/fit.h"
#include "cdd/fsops.h"
#include "cdd/manifest.h"
#include "cdd/strbuf.h"
#include "doctor_int.h"

/* The CUDA major of a copy: its toolkit's, else a wheel's
 * (nvidia_cudnn_cu12), else 0. */
struct cumajor {
    int major;
};

static int on_dist(void *ud, const char *name)
{
    struct cumajor *m = ud;
    static const char pre[] = "nvidia_cudnn_cu";
    if (strncmp(name, pre, sizeof pre - 1) == 0 && !m->major)
        m->major = atoi(name + sizeof pre - 1);
    return 0;
}

static int copy_cuda_major(const struct cdd_dscan *c, size_t k, int *minor)
{
    const struct cdd_doctor_result *res = c->res;
    const struct cdd_doctor_copy *cp = &res->copies[k];
    *minor = -1;
    for (size_t t = 0; t < res->n_toolkits; t++) {
        const struct cdd_doctor_toolkit *tk = &res->toolkits[t];
        size_t n = tk->real ? strlen(tk->real) : 0;
        if (n && tk->version.known && strncmp(cp->real, tk->real, n) == 0 &&
            cp->real[n] == '/') {
            *minor = tk->version.minor;
            return tk->version.major;
        }
    }
    for (size_t i = 0; i < c->n_py; i++)
        if (c->py[i].k == (int)k) {
            struct cumajor m = {0};
            (void)cdd_fs_list(c->py[i].site, on_dist, &m);
            cdd_clear_error();
            return m.major;
        }
    return 0;
}

static void fit_copies(struct cdd_dscan *c, const struct cdd_doctor_opts *o)
{
    struct cdd_fit_gpus probed = {0};
    const struct cdd_fit_gpus *g = o ? o->gpus : NULL;
    struct cdd_fatbin_info *code = malloc(sizeof *code);
    struct cdd_doctor_result *res = c->res;
    if (!code) {
        cdd_dr_nomem(c);
        return;
    }
    if (!g) {
        cdd_dr_fail(c, cdd_fit_gpus_probe(&probed));
        g = &probed;
    }
    if (!g->n) {
        /* Once for the host, not once per copy. */
        cdd_dr_fail(c, cdd_fit_check(&(struct cdd_fit_query){.gpus = g},
                                     "fit", &res->checks,
                                     &(struct cdd_fit_result){0}));
        goto out;
    }
    for (size_t k = 0; !c->err && k < res->n_copies; k++) {
        const struct cdd_doctor_copy *cp = &res->copies[k];
        int seen = 0, has = 0, minor = -1;
        if (!cp->is_main)
            continue;
        for (size_t j = 0; j < k && !seen; j++)
            seen = res->copies[j].is_main &&
                   cdd_dr_same_path(c, res->copies[j].real, cp->real);
        if (seen)
            continue;
        int fr = cdd_fatbin_scan_file(cp->real, &has, code);
        cdd_clear_error();
        struct cdd_fit_query q = {
            .version = cp->version[0] ? cp->version : NULL,
            .platform = cdd_platform_name(cdd_platform_host()),
            .cuda_major = copy_cuda_major(c, k, &minor),
            .cuda_minor = minor,
            .gpus = g,
            .code = !fr && has && code->n_codes ? code : NULL,
            .catalog_dir = o ? o->catalog_dir : NULL};
        size_t nl = strlen(cp->path) + 8;
        char *name = malloc(nl);
        struct cdd_fit_result fres;
        if (!name) {
            cdd_dr_nomem(c);
            break;
        }
        snprintf(name, nl, "fit %s", cp->path);
        if (!cdd_dr_fail(c, cdd_fit_check(&q, name, &res->checks, &fres)))
            cdd_fit_result_clear(&fres);
        free(name);
    }
out:
    cdd_clear_error();
    cdd_fit_gpus_clear(&probed);
    free(code);
}

static void barename_envs(struct cdd_dscan *c)
{
    if (c->windows)
        return; /* the Windows loader: docs/windows.md */
    for (size_t i = 0; !c->err && i < c->n_py; i++) {
        const struct cdd_dr_py *p = &c->py[i];
        const struct cdd_doctor_copy *cp = &c->res->copies[p->k];
        size_t wl = strlen(p->site) + strlen(p->origin) + 40;
        char *where = malloc(wl);
        /* One environment: "python.barename [<soname>]"; with several, each
         * environment's checks carry its site folder, so that no two
         * checks share a name ("python.barename <site> [<soname>]"). */
        char *family = c->n_py > 1 ? cdd_aprintf(CDD_TEXT_MAX, "check name",
                                                 "python.barename %s", p->site)
                                   : strdup("python.barename");
        if (!where || !family) {
            free(where);
            free(family);
            cdd_dr_nomem(c);
            break;
        }
        snprintf(where, wl, "the Python environment %s (%s)", p->site,
                 p->origin);
        cdd_dr_fail(c, cdd_bare_check(cp->path, c->names[p->m].major, NULL,
                                      where, family, &c->res->checks));
        cdd_clear_error();
        free(where);
        free(family);
    }
}

void cdd_doctor_fit(struct cdd_dscan *c, const struct cdd_doctor_opts *o)
{
    barename_envs(c);
    if (!c->err)
        fit_copies(c, o);
}
