/* verify's fit checks: gpu.fit (the installed release against every GPU,
 * fit.h) and load.barename (where cuDNN's own bare-name loads of its
 * sub-libraries land, barename.h). docs/verification.md, "GPU fit" and
 * "Bare-name loads". */
#include <stdlib.h>
#include <string.h>

#include "cdd/barename.h"
#include "cdd/error.h"
#include "cdd/fatbin.h"
#include "cdd/fit.h"
#include "verify_int.h"

/* The device code of every library of the tree, merged; 0 when none could
 * be read. */
static int tree_code(const struct vctx *c, struct cdd_fatbin_info *all)
{
    struct cdd_fatbin_info *fi = malloc(sizeof *fi);
    int any = 0;
    memset(all, 0, sizeof *all);
    if (!fi)
        return 0;
    for (size_t i = 0; i < c->n_libs; i++) {
        int has = 0;
        if (cdd_fatbin_scan_file(c->libs[i].installed, &has, fi) == 0 &&
            has && fi->n_codes && cdd_fatbin_merge(all, fi) == 0)
            any = 1;
        cdd_clear_error();
    }
    free(fi);
    return any;
}

int cdd_verify_fit_layer(struct vctx *c)
{
    struct cdd_fit_gpus probed = {0};
    const struct cdd_fit_gpus *g = c->o->gpus;
    struct cdd_fatbin_info *code = malloc(sizeof *code);
    struct cdd_fit_result *fr = calloc(1, sizeof *fr);
    const struct cdd_target *t = c->o->target;
    int r = 0;
    if (!code || !fr) {
        free(code);
        free(fr);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    if (!g) {
        probed.timeout = c->o->gpu_timeout;
        if ((r = cdd_fit_gpus_probe(&probed)) != 0)
            goto out;
        g = &probed;
    }
    /* No GPU known (no driver, none visible, no --gpu-cc): the gpu layer
     * says why; a fit check would only repeat it. */
    if (!g->n)
        goto out;
    struct cdd_fit_query q = {
        .version = c->rc && c->rc->version ? c->rc->version : c->m->version,
        .platform = cdd_platform_name(c->m->platform),
        .cuda_major = t->version.known ? t->version.major : c->m->cuda_major,
        .cuda_minor = t->version.known ? t->version.minor : -1,
        .gpus = g,
        .code = tree_code(c, code) ? code : NULL,
        .catalog_dir = c->o->catalog_dir};
    size_t before = c->res->checks.n;
    if ((r = cdd_fit_check(&q, "gpu.fit", &c->res->checks, fr)) != 0)
        goto out;
    if (c->res->checks.n > before) {
        c->res->fit_ran = 1;
        c->res->fit_status = c->res->checks.v[before].status;
        c->res->fit = fr;
        fr = NULL;
    }
out:
    if (fr)
        cdd_fit_result_clear(fr);
    free(fr);
    free(code);
    cdd_fit_gpus_clear(&probed);
    return r;
}

int cdd_verify_barename_layer(struct vctx *c)
{
    if (!c->n_libs || !c->host_can_load ||
        cdd_platform_is_windows(c->m->platform))
        return 0; /* Windows' loader: docs/windows.md, load.search */
    const char *v = c->rc && c->rc->version ? c->rc->version : c->m->version;
    int major = v ? atoi(v) : 0;
    return cdd_bare_check(c->libs[0].installed, major, v, "the tree",
                          "load.barename", &c->res->checks);
}
