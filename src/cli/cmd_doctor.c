/* cudnn-deploy doctor: the environment diagnosis (doctor.h), with or
 * without a target. One line per finding on stderr; with --json the checks
 * plus structured `toolkits`, `cudnn_copies` and `driver` members. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/doctor.h"
#include "cdd/error.h"
#include "cdd/fit.h"
#include "cdd/jsonw.h"
#include "cmds.h"
#include "pick.h"
#include "report.h"

/* A member of the report, built with the core's JSON writer and handed
 * over as it is (cdd_report_doc). */
static void member(struct cdd_report *rep, const char *key, struct cdd_jw *w)
{
    cdd_report_doc(rep, key, w);
}

/* A string, or null for NULL and "". */
static void str_or_null(struct cdd_jw *w, const char *key, const char *v)
{
    cdd_jw_str(w, key, v && *v ? v : NULL);
}

/* A position counted from 1, or null for 0 (not there). */
static void pos_or_null(struct cdd_jw *w, const char *key, long v)
{
    if (v)
        cdd_jw_int(w, key, v);
    else
        cdd_jw_null(w, key);
}

static void json_members(struct cdd_report *rep,
                         const struct cdd_doctor_result *res)
{
    struct cdd_jw *w = cdd_jw_new();
    char v[48]; /* fixed: a version of 3 ints */
    cdd_jw_array(w, NULL);
    for (size_t i = 0; i < res->n_toolkits; i++) {
        const struct cdd_doctor_toolkit *k = &res->toolkits[i];
        v[0] = '\0';
        if (k->version.known && k->version.patch >= 0)
            snprintf(v, sizeof v, "%d.%d.%d", k->version.major,
                     k->version.minor, k->version.patch);
        else if (k->version.known)
            snprintf(v, sizeof v, "%d.%d", k->version.major, k->version.minor);
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "root", k->root);
        cdd_jw_str(w, "real", k->real);
        str_or_null(w, "version", v);
        str_or_null(w, "version_source",
                    k->version.known ? k->version.source : NULL);
        cdd_jw_str(w, "found_by", k->found_by);
        pos_or_null(w, "path_position", k->path_pos);
        pos_or_null(w, "library_path_position", k->lib_path_pos);
        cdd_jw_end(w);
    }
    cdd_jw_end(w);
    member(rep, "toolkits", w);

    w = cdd_jw_new();
    cdd_jw_array(w, NULL);
    for (size_t i = 0; i < res->n_copies; i++) {
        const struct cdd_doctor_copy *k = &res->copies[i];
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "name", k->name);
        cdd_jw_str(w, "path", k->path);
        cdd_jw_str(w, "real", k->real);
        str_or_null(w, "version", k->version);
        str_or_null(w, "version_from", k->version_from);
        cdd_jw_bool(w, "main", k->is_main);
        cdd_jw_str(w, "where", cdd_copy_where_name(k->where));
        cdd_jw_str(w, "origin", k->origin);
        pos_or_null(w, "order", k->order);
        cdd_jw_bool(w, "wins", k->where == CDD_COPY_SEARCH && k->order == 1);
        cdd_jw_end(w);
    }
    cdd_jw_end(w);
    member(rep, "cudnn_copies", w);

    w = cdd_jw_new();
    cdd_jw_object(w, NULL);
    cdd_jw_bool(w, "found", res->have_driver);
    str_or_null(w, "path", res->driver_path);
    str_or_null(w, "release", res->driver_release);
    v[0] = '\0';
    if (res->driver_cuda_version)
        cdd_cuda_version_str(res->driver_cuda_version, v, sizeof v);
    str_or_null(w, "cuda_version", v);
    cdd_jw_end(w);
    member(rep, "driver", w);
}

struct dsummary {
    const struct cdd_doctor_result *res;
    char *text;
};

/* The one line of the cuDNN layer when all its checks passed: which copy
 * the loader picks (what every program gets), never only "2 checks
 * passed". */
static const char *summary(void *ud, const char *layer)
{
    struct dsummary *x = ud;
    if (strcmp(layer, "cudnn") != 0)
        return NULL;
    size_t len = 64;
    for (size_t i = 0; i < x->res->n_copies; i++)
        if (x->res->copies[i].is_main && x->res->copies[i].order == 1)
            len += strlen(x->res->copies[i].path) + 48;
    free(x->text);
    if (!(x->text = malloc(len)))
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < x->res->n_copies; i++) {
        const struct cdd_doctor_copy *k = &x->res->copies[i];
        if (!k->is_main || k->order != 1)
            continue;
        n += (size_t)snprintf(x->text + n, len - n, "%s%s (%s)",
                              n ? " and " : "the loader picks ", k->path,
                              k->version[0] ? k->version : "version unknown");
    }
    if (!n) {
        free(x->text);
        x->text = NULL;
        return NULL;
    }
    snprintf(x->text + n, len - n, ", %s sub-libraries beside %s",
             strstr(x->text, " and ") ? "their" : "its",
             strstr(x->text, " and ") ? "them" : "it");
    return x->text;
}

int cdd_cmd_doctor(const struct cdd_cmdline *cl, struct cdd_report *rep,
                   struct cdd_cli_tree *tt)
{
    struct cdd_doctor_result res = {0};
    struct cdd_doctor_opts o = {NULL};
    struct cdd_fit_gpus gpus = {0};
    int r = cdd_cli_fit_gpus(&cl->obtain, &gpus);
    if (r)
        goto out;
    o.gpus = &gpus;
    o.catalog_dir = cl->obtain.catalog;
    if (tt->tree) { /* CDD_TREE_LOOK: opened by the dispatcher */
        o.target = &tt->target;
        o.tree = tt->tree;
        o.state_bad = tt->state_bad;
        o.state_why = tt->state_why;
    }
    r = cdd_doctor(&o, &res);
    if (r)
        goto out;
    if (o.target)
        cdd_say(rep, "Diagnosing this host's CUDA and cuDNN, for %s",
                tt->target.root);
    else
        cdd_say(rep, "Diagnosing this host's CUDA and cuDNN");
    struct dsummary sum = {.res = &res};
    cdd_report_layers(rep, &res.checks, summary, &sum);
    free(sum.text);
    json_members(rep, &res);
    if (res.checks.n_fail)
        cdd_say(rep, "Doctor: %zu problem%s to fix, %zu warning%s.",
                res.checks.n_fail, res.checks.n_fail == 1 ? "" : "s",
                res.checks.n_warn, res.checks.n_warn == 1 ? "" : "s");
    else if (res.checks.n_warn)
        cdd_say(rep, "Doctor: nothing failed (%zu warning%s).",
                res.checks.n_warn, res.checks.n_warn == 1 ? "" : "s");
    else
        cdd_say(rep, "Doctor: nothing failed.");
out:
    cdd_doctor_result_clear(&res);
    cdd_fit_gpus_clear(&gpus);
    return r;
}
