/* doctor (doctor.h): what this host's environment does to a program that
 * wants CUDA and cuDNN. Two phases (doctor_int.h): doctor_scan.c looks at
 * everything once (toolkits, PATH and LD_LIBRARY_PATH entries, every copy of
 * cuDNN, the driver); doctor_check.c then writes the checks from what was
 * found, so that each can refer to what the others found. This file holds
 * the tables both use and runs the two. See docs/design.md, "doctor". */
#include <stdlib.h>
#include <string.h>

#include "cdd/doctor.h"
#include "cdd/error.h"
#include "cdd/manifest.h"
#include "doctor_int.h"

const struct cdd_dr_names cdd_dr_linux_names[CDD_DR_MAJORS] = {
    {8, "libcudnn.so.8",
     {"libcudnn_ops_infer.so.8", "libcudnn_ops_train.so.8",
      "libcudnn_cnn_infer.so.8", "libcudnn_cnn_train.so.8",
      "libcudnn_adv_infer.so.8", "libcudnn_adv_train.so.8", NULL}},
    {9, "libcudnn.so.9",
     {"libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9",
      "libcudnn_adv.so.9", "libcudnn_engines_precompiled.so.9",
      "libcudnn_engines_runtime_compiled.so.9", "libcudnn_heuristic.so.9",
      NULL}},
};

const struct cdd_dr_names cdd_dr_windows_names[CDD_DR_MAJORS] = {
    {8, "cudnn64_8.dll",
     {"cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll",
      "cudnn_cnn_infer64_8.dll", "cudnn_cnn_train64_8.dll",
      "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll", NULL}},
    {9, "cudnn64_9.dll",
     {"cudnn_graph64_9.dll", "cudnn_ops64_9.dll", "cudnn_cnn64_9.dll",
      "cudnn_adv64_9.dll", "cudnn_engines_precompiled64_9.dll",
      "cudnn_engines_runtime_compiled64_9.dll", "cudnn_heuristic64_9.dll",
      NULL}},
};

const struct cdd_dr_pypkg cdd_dr_py_pkgs[CDD_DR_N_PYPKGS] = {
    {"torch/lib", "torch"},
    {"nvidia/cudnn/lib", "nvidia-cudnn"},
    {"nvidia/cudnn/bin", "nvidia-cudnn"},
};

const char *const cdd_dr_vc_runtime[CDD_DR_N_VCRT] = {
    "msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"};

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
    s->names = windows ? cdd_dr_windows_names : cdd_dr_linux_names;
    s->lib = windows ? &s->path : &s->libpath;
    /* The lists the host's loader and shell read (set when scanned). */
    s->path.var = "PATH";
    s->libpath.var = windows ? NULL : "LD_LIBRARY_PATH";
    for (int m = 0; m < CDD_DR_MAJORS; m++) {
        s->winner[m] = s->t_copy[m] = -1;
        for (int k = 0; k < 8; k++)
            s->search[m].sub_first[k] = -1;
    }
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
    memset(r, 0, sizeof *r);
}

int cdd_doctor(const struct cdd_doctor_opts *o, struct cdd_doctor_result *res)
{
    struct cdd_dscan s;
    memset(res, 0, sizeof *res);
    cdd_dscan_init(&s, res,
                   cdd_platform_host() == CDD_PLATFORM_WINDOWS_X86_64,
                   o ? o->target : NULL);
    cdd_doctor_scan(&s);
    cdd_doctor_check(&s);
    int err = s.err;
    cdd_dscan_clear(&s);
    cdd_clear_error();
    if (err)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    return 0;
}
