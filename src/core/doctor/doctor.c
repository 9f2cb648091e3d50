/* doctor (doctor.h): what this host's environment does to a program that
 * wants CUDA and cuDNN. Two phases (doctor_int.h): doctor_scan.c looks at
 * everything once (toolkits, PATH and LD_LIBRARY_PATH entries, every copy of
 * cuDNN, the driver); doctor_check.c then writes the checks from what was
 * found, so that each can refer to what the others found. This file holds
 * the tables both use and runs the two. See docs/design.md, "doctor". */
#include <stdlib.h>
#include <string.h>

#include "cdd/cudnn_facts.h"
#include "cdd/doctor.h"
#include "cdd/error.h"
#include "cdd/manifest.h"
#include "doctor_int.h"

void cdd_dr_names_fill(struct cdd_dr_names *out, int windows)
{
    for (size_t m = 0; m < CDD_DR_MAJORS; m++) {
        const struct cdd_cudnn_major *f = &cdd_cudnn_majors[m];
        memset(&out[m], 0, sizeof out[m]);
        out[m].major = f->major;
        out[m].main = cdd_cudnn_main_name(f, windows);
        for (size_t k = 0; k < f->n_subs; k++)
            out[m].subs[k] = cdd_cudnn_sub_name(&f->subs[k], windows);
    }
}

const struct cdd_dr_pypkg cdd_dr_py_pkgs[CDD_DR_N_PYPKGS] = {
    {"torch/lib", "torch"},
    {"nvidia/cudnn/lib", "nvidia-cudnn"},
    {"nvidia/cudnn/bin", "nvidia-cudnn"},
};

const char *cdd_copy_where_name(enum cdd_copy_where w)
{
    switch (w) {
    case CDD_COPY_SEARCH:
        return "search path";
    case CDD_COPY_CONDA:
        return "conda";
    case CDD_COPY_PYTHON:
        return "python package";
    default:
        return "target";
    }
}

void cdd_dscan_init(struct cdd_dscan *s, struct cdd_doctor_result *res,
                    int windows, const struct cdd_target *t)
{
    memset(s, 0, sizeof *s);
    s->res = res;
    s->t = t;
    s->windows = windows;
    s->sep = windows ? ';' : ':';
    cdd_dr_names_fill(s->names, windows);
    s->lib = windows ? &s->path : &s->libpath;
    /* The lists the host's loader and shell read (set when scanned). */
    s->path.var = "PATH";
    s->libpath.var = windows ? NULL : "LD_LIBRARY_PATH";
    for (int m = 0; m < CDD_DR_MAJORS; m++) {
        s->winner[m] = s->t_copy[m] = -1;
        for (int k = 0; k < CDD_CUDNN_MAX_SUBS; k++)
            s->search[m].sub_first[k] = -1;
    }
}

int cdd_dr_fail(struct cdd_dscan *c, int rc)
{
    if (!rc || c->err)
        return rc;
    c->err = rc;
    /* The record may have been cleared since (the scan clears the failures
     * it takes as findings): then at least the code. */
    if (cdd_last_error()->code != rc)
        cdd_fail(rc, NULL, 0, NULL);
    cdd_error_save(&c->err_save);
    return rc;
}

void cdd_dr_nomem(struct cdd_dscan *c)
{
    if (!c->err)
        cdd_dr_fail(c, cdd_fail(CDD_E_NOMEM, NULL, 0, NULL));
}

int cdd_dr_text_ok(struct cdd_dscan *c, const struct cdd_sb *b)
{
    return !cdd_dr_fail(c, cdd_sb_error(b));
}

void cdd_doctor_result_clear(struct cdd_doctor_result *r)
{
    if (!r)
        return;
    cdd_checks_clear(&r->checks);
    for (size_t i = 0; i < r->n_toolkits; i++) {
        free(r->toolkits[i].root);
        free(r->toolkits[i].real);
        free(r->toolkits[i].found_by);
    }
    free(r->toolkits);
    for (size_t i = 0; i < r->n_copies; i++) {
        free(r->copies[i].name);
        free(r->copies[i].path);
        free(r->copies[i].real);
        free(r->copies[i].origin);
    }
    free(r->copies);
    free(r->driver_path);
    memset(r, 0, sizeof *r);
}

int cdd_doctor(const struct cdd_doctor_opts *o, struct cdd_doctor_result *res)
{
    struct cdd_dscan s;
    memset(res, 0, sizeof *res);
    cdd_dscan_init(&s, res,
                   cdd_platform_is_windows(cdd_platform_host()),
                   o ? o->target : NULL);
    if (o) {
        s.tree = o->tree;
        s.state_bad = o->state_bad;
        s.state_why = o->state_why;
    }
    cdd_doctor_scan(&s);
    cdd_doctor_check(&s);
    if (!s.err)
        cdd_doctor_fit(&s, o);
    int err = s.err;
    struct cdd_errsave save = s.err_save;
    memset(&s.err_save, 0, sizeof s.err_save);
    cdd_dscan_clear(&s);
    cdd_clear_error();
    if (err) {
        /* The first failure, as it was recorded (a detail too long, memory
         * run out), not whatever came after it. */
        cdd_error_restore(&save);
        cdd_error_save_free(&save);
        return err;
    }
    return 0;
}
