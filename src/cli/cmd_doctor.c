/* cudnn-deploy doctor: the environment diagnosis (doctor.h), with or
 * without a target. One line per finding on stderr; with --json the checks
 * plus structured `toolkits`, `cudnn_copies` and `driver` members. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/doctor.h"
#include "cdd/error.h"
#include "cmds.h"
#include "report.h"

/* A JSON text built by hand: cJSON belongs to report.c alone, which takes
 * the finished text (cdd_report_json_text). */
struct jbuf {
    char *s;
    size_t n, cap;
    int oom;
};

static void jraw(struct jbuf *j, const char *t, size_t len)
{
    if (j->oom)
        return;
    if (j->n + len + 1 > j->cap) {
        size_t cap = (j->n + len + 1) * 2;
        char *s = realloc(j->s, cap);
        if (!s) {
            j->oom = 1;
            return;
        }
        j->s = s;
        j->cap = cap;
    }
    memcpy(j->s + j->n, t, len);
    j->n += len;
    j->s[j->n] = '\0';
}

static void jlit(struct jbuf *j, const char *t)
{
    jraw(j, t, strlen(t));
}

/* A string value, or null for NULL / "" when null_if_empty. */
static void jstr(struct jbuf *j, const char *v, int null_if_empty)
{
    if (!v || (null_if_empty && !*v)) {
        jlit(j, "null");
        return;
    }
    jlit(j, "\"");
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        char e[8];
        if (*p == '"' || *p == '\\') {
            e[0] = '\\';
            e[1] = (char)*p;
            jraw(j, e, 2);
        } else if (*p < 0x20) {
            snprintf(e, sizeof e, "\\u%04x", *p);
            jlit(j, e);
        } else {
            jraw(j, (const char *)p, 1);
        }
    }
    jlit(j, "\"");
}

static void jkey(struct jbuf *j, const char *k, int first)
{
    if (!first)
        jlit(j, ",");
    jstr(j, k, 0);
    jlit(j, ":");
}

static void jint(struct jbuf *j, long v, int null_if_zero)
{
    char b[32];
    if (null_if_zero && !v) {
        jlit(j, "null");
        return;
    }
    snprintf(b, sizeof b, "%ld", v);
    jlit(j, b);
}

static void json_members(struct cdd_report *rep,
                         const struct cdd_doctor_result *res)
{
    struct jbuf j = {0};
    char v[48];
    jlit(&j, "[");
    for (size_t i = 0; i < res->n_toolkits; i++) {
        const struct cdd_doctor_toolkit *k = &res->toolkits[i];
        v[0] = '\0';
        if (k->version.known && k->version.patch >= 0)
            snprintf(v, sizeof v, "%d.%d.%d", k->version.major,
                     k->version.minor, k->version.patch);
        else if (k->version.known)
            snprintf(v, sizeof v, "%d.%d", k->version.major, k->version.minor);
        jlit(&j, i ? ",{" : "{");
        jkey(&j, "root", 1);
        jstr(&j, k->root, 0);
        jkey(&j, "real", 0);
        jstr(&j, k->real, 0);
        jkey(&j, "version", 0);
        jstr(&j, v, 1);
        jkey(&j, "version_source", 0);
        jstr(&j, k->version.known ? k->version.source : NULL, 1);
        jkey(&j, "found_by", 0);
        jstr(&j, k->found_by, 0);
        jkey(&j, "path_position", 0);
        jint(&j, k->path_pos, 1);
        jkey(&j, "library_path_position", 0);
        jint(&j, k->lib_path_pos, 1);
        jlit(&j, "}");
    }
    jlit(&j, "]");
    if (!j.oom)
        cdd_report_json_text(rep, "toolkits", j.s);
    j.n = 0;
    jlit(&j, "[");
    for (size_t i = 0; i < res->n_copies; i++) {
        const struct cdd_doctor_copy *k = &res->copies[i];
        jlit(&j, i ? ",{" : "{");
        jkey(&j, "name", 1);
        jstr(&j, k->name, 0);
        jkey(&j, "path", 0);
        jstr(&j, k->path, 0);
        jkey(&j, "real", 0);
        jstr(&j, k->real, 0);
        jkey(&j, "version", 0);
        jstr(&j, k->version, 1);
        jkey(&j, "version_from", 0);
        jstr(&j, k->version_from, 1);
        jkey(&j, "main", 0);
        jlit(&j, k->is_main ? "true" : "false");
        jkey(&j, "where", 0);
        jstr(&j, cdd_copy_where_name(k->where), 0);
        jkey(&j, "origin", 0);
        jstr(&j, k->origin, 0);
        jkey(&j, "order", 0);
        jint(&j, k->order, 1);
        jkey(&j, "wins", 0);
        jlit(&j, k->where == CDD_COPY_SEARCH && k->order == 1 ? "true"
                                                              : "false");
        jlit(&j, "}");
    }
    jlit(&j, "]");
    if (!j.oom)
        cdd_report_json_text(rep, "cudnn_copies", j.s);
    j.n = 0;
    jlit(&j, "{");
    jkey(&j, "found", 1);
    jlit(&j, res->have_driver ? "true" : "false");
    jkey(&j, "path", 0);
    jstr(&j, res->driver_path, 1);
    jkey(&j, "release", 0);
    jstr(&j, res->driver_release, 1);
    jkey(&j, "cuda_version", 0);
    v[0] = '\0';
    if (res->driver_cuda_version)
        cdd_cuda_version_str(res->driver_cuda_version, v, sizeof v);
    jstr(&j, v, 1);
    jlit(&j, "}");
    if (!j.oom)
        cdd_report_json_text(rep, "driver", j.s);
    free(j.s);
}

int cdd_cmd_doctor(const struct cdd_cmdline *cl, struct cdd_report *rep)
{
    struct cdd_target t = {0};
    struct cdd_doctor_result res = {0};
    struct cdd_doctor_opts o = {NULL};
    int r = 0;
    if (cdd_cli_target_given(&cl->target)) {
        r = cdd_cli_target(&cl->target, &t, rep);
        if (r)
            goto out;
        o.target = &t;
    }
    r = cdd_doctor(&o, &res);
    if (r)
        goto out;
    if (o.target)
        cdd_say(rep, "Diagnosing this host's CUDA and cuDNN, for %s", t.root);
    else
        cdd_say(rep, "Diagnosing this host's CUDA and cuDNN");
    cdd_report_checks(rep, &res.checks);
    json_members(rep, &res);
    if (res.checks.n_fail)
        cdd_say(rep, "Doctor: %zu problem(s) to fix, %zu warning(s).",
                res.checks.n_fail, res.checks.n_warn);
    else
        cdd_say(rep, "Doctor: nothing failed (%zu warning(s)).",
                res.checks.n_warn);
out:
    cdd_doctor_result_clear(&res);
    cdd_target_clear(&t);
    return r;
}
