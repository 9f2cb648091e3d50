/* Running verify on a tree and reporting its checks: the verify command,
 * and install at its end. A layer whose checks all passed is one line,
 * summarised here from the result ("load: 7 libraries loaded, cuDNN 8.5.0,
 * ..."); report.c shows the rest in full. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/cudnn_facts.h"
#include "cdd/error.h"
#include "cdd/fit.h"
#include "cdd/profile.h"
#include "cdd/receipt.h"
#include "cdd/strbuf.h"
#include "cdd/verified.h"
#include "cdd/verify.h"
#include "cmds.h"
#include "report.h"

struct summary_ctx {
    const struct cdd_verify_result *res;
    char *buf; /* the last summary, malloc'd */
};

static size_t count_prefix(const struct cdd_checks *c, const char *prefix)
{
    size_t n = 0, len = strlen(prefix);
    for (size_t i = 0; i < c->n; i++)
        n += strncmp(c->v[i].name, prefix, len) == 0;
    return n;
}

static const char *find_detail(const struct cdd_checks *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].name, name) == 0)
            return c->v[i].detail;
    return NULL;
}

/* The one line of a layer that passed (report.c calls it only then). */
static const char *summary(void *ud, const char *layer)
{
    struct summary_ctx *x = ud;
    const struct cdd_verify_result *res = x->res;
    const struct cdd_checks *c = &res->checks;
    char ver[32]; /* fixed: a version */
    if (strcmp(layer, "files") == 0) {
        const char *d = find_detail(c, "files");
        if (!d)
            return NULL;
        free(x->buf);
        x->buf = cdd_aprintf(CDD_TEXT_MAX, "summary", "%s%s", d,
                 find_detail(c, "files.strays") ? "; no stray cuDNN files" : "");
        return x->buf;
    }
    if (strcmp(layer, "load") == 0) {
        size_t libs = count_prefix(c, "load.open ");
        size_t deps = count_prefix(c, "load.deps ");
        size_t subs = count_prefix(c, "load.check ");
        free(x->buf);
        x->buf = cdd_aprintf(CDD_TEXT_MAX, "summary", "%zu librar%s loaded by absolute path%s%s%s%s%s%s",
                 libs, libs == 1 ? "y" : "ies",
                 res->cudnn_version ? ", cuDNN " : "",
                 res->cudnn_version
                     ? cdd_cudnn_version_decode(res->cudnn_version, ver,
                                                sizeof ver)
                     : "",
                 deps ? ", dependencies resolved" : "",
                 subs ? ", sub-library versions agree" : "",
                 find_detail(c, "load.cudart") ? ", CUDA runtime matches" : "",
                 count_prefix(c, "load.search ") ? ", the loader picks this "
                                                   "install" : "");
        return x->buf;
    }
    if (strcmp(layer, "gpu") == 0 && res->have_gpu) {
        free(x->buf);
        x->buf = cdd_aprintf(CDD_TEXT_MAX, "summary", "%s%sdriver %s (CUDA %d.%d)%s",
                 res->gpu.device_name, res->gpu.device_name[0] ? ", " : "",
                 res->gpu.driver_release, res->gpu.driver_cuda_version / 1000,
                 res->gpu.driver_cuda_version % 1000 / 10,
                 res->conv_ran ? ", the convolution matches the CPU reference"
                               : "");
        return x->buf;
    }
    if (strcmp(layer, "bench") == 0 && res->bench_ran) {
        free(x->buf);
        x->buf = cdd_aprintf(CDD_TEXT_MAX, "summary", "GPU %.3f ms vs CPU %.1f ms: %.0fx faster (%.1f TFLOP/s)",
                 res->bench.gpu_ms, res->bench.cpu_ms, res->bench.speedup,
                 res->bench.gpu_tflops);
        return x->buf;
    }
    return NULL;
}

/* What the install's profile left out was never installed: said once, as
 * a passed check, so nobody reads the missing headers as damage. */
static void report_profile(struct cdd_report *rep, struct cdd_tree *tree)
{
    struct cdd_receipt *rc = NULL;
    if (cdd_receipt_load(tree, &rc) != 0 || !rc) {
        cdd_clear_error(); /* the files layer has said what is wrong */
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < CDD_ROLE_COUNT; i++)
        n += rc->omitted[i];
    const char *name = cdd_profile_name((enum cdd_profile)rc->profile);
    cdd_report_str(rep, "profile", name);
    if (n)
        cdd_report_check(rep, "files.profile", CDD_CHECK_PASS,
                         "profile %s: %zu archive entries (headers, import "
                         "or static libraries) left out by design, not "
                         "missing", name, n);
    cdd_receipt_free(rc);
}

/* The verify record (verified.h): written when the tree's lock is free and
 * the receipt is still the one proved; the report says which. A record
 * that cannot be written never changes verify's answer. */
static void record(struct cdd_report *rep, struct cdd_tree *tree,
                   const struct cdd_verify_result *res,
                   const struct cdd_receipt *proved)
{
    struct cdd_verified *v = NULL;
    enum cdd_vrecord_why why = CDD_VREC_NO_RECEIPT;
    int r = cdd_verified_make(&res->checks,
                              cdd_opt_value_name(cdd_level_values, res->level),
                              res->manifest_name, proved, &v);
    if (!r)
        r = cdd_verified_record(tree, v, &why);
    cdd_verified_free(v);
    cdd_report_bool(rep, "verify_recorded", !r && why == CDD_VREC_WRITTEN);
    if (r) {
        cdd_report_str(rep, "verify_not_recorded", cdd_last_error()->msg);
        cdd_clear_error();
    } else if (why != CDD_VREC_WRITTEN) {
        cdd_report_str(rep, "verify_not_recorded", cdd_vrecord_why_text(why));
    }
}

int cdd_cli_verify(struct cdd_report *rep, const struct cdd_target *t,
                   struct cdd_tree *tree, const struct cdd_manifest *m,
                   const struct cdd_opts_verify *vo)
{
    return cdd_cli_verify_receipt(rep, t, tree, m, vo, NULL);
}

double cdd_cli_gpu_timeout(const struct cdd_opts_verify *vo)
{
    if (!vo || !vo->gpu_timeout_given)
        return 0;
    return vo->gpu_timeout > 0 ? vo->gpu_timeout : -1;
}

int cdd_cli_verify_receipt(struct cdd_report *rep, const struct cdd_target *t,
                           struct cdd_tree *tree, const struct cdd_manifest *m,
                           const struct cdd_opts_verify *vo,
                           const struct cdd_receipt *rc)
{
    struct cdd_verify_result res;
    struct cdd_receipt *own = NULL;
    const struct cdd_receipt *proved = rc;
    /* What the record names as proved: install's receipt, or the tree's
     * as it is now (verify reads it again; the record is written only if
     * it is still this one under the lock). */
    if (!rc && cdd_receipt_load(tree, &own) != 0)
        cdd_clear_error(); /* verify names what is wrong with it */
    if (!rc)
        proved = own;
    struct cdd_verify_opts o = {.target = t, .tree = tree, .m = m,
                                .level = vo && vo->level_given
                                             ? (int)vo->level : -1,
                                .receipt = rc,
                                .gpus = vo ? vo->gpus : NULL,
                                .gpu_timeout = cdd_cli_gpu_timeout(vo),
                                .catalog_dir = vo ? vo->catalog : NULL};
    int r = cdd_verify(&o, &res);
    if (r) {
        cdd_verify_result_clear(&res);
        cdd_receipt_free(own);
        return r;
    }
    cdd_say(rep, "Verifying %s in %s (level %s)", res.manifest_name, t->root,
            cdd_opt_value_name(cdd_level_values, res.level));
    struct summary_ctx sc = {.res = &res};
    cdd_report_layers(rep, &res.checks, summary, &sc);
    free(sc.buf);
    report_profile(rep, tree);
    cdd_report_str(rep, "level",
                   cdd_opt_value_name(cdd_level_values, res.level));
    if (res.cudnn_version)
        cdd_report_num(rep, "cudnn_version", (double)res.cudnn_version);
    if (res.have_gpu) {
        cdd_report_num(rep, "driver_cuda_version",
                       res.gpu.driver_cuda_version);
        cdd_report_str(rep, "driver_release", res.gpu.driver_release);
        if (res.gpu.device_name[0])
            cdd_report_str(rep, "gpu", res.gpu.device_name);
    }
    if (res.fit_ran && res.fit) {
        /* GPU fit (docs/verification.md): its verdict, what the release
         * supports and from where, the newest catalog release that fits */
        cdd_report_str(rep, "gpu_fit", cdd_check_status_name(res.fit_status));
        cdd_report_str(rep, "gpu_fit_basis", res.fit->basis);
        if (res.fit->supports)
            cdd_report_str(rep, "gpu_fit_supports", res.fit->supports);
        if (res.fit->newest)
            cdd_report_str(rep, "gpu_fit_newest", res.fit->newest);
    }
    if (res.conv_ran)
        cdd_report_num(rep, "conv_max_rel_err", res.conv.max_rel_err);
    if (res.bench_ran) {
        cdd_report_num(rep, "bench_gpu_ms", res.bench.gpu_ms);
        cdd_report_num(rep, "bench_cpu_ms", res.bench.cpu_ms);
        cdd_report_num(rep, "bench_gpu_tflops", res.bench.gpu_tflops);
        cdd_report_num(rep, "bench_speedup", res.bench.speedup);
    }
    /* The bench's tensor-op precisions (issue 11): bench_tf32_* and
     * bench_fp16_*, beside the FP32 figures above. */
    for (int k = CDD_BENCH_TF32; k < CDD_BENCH_N_MATH; k++) {
        const struct cdd_gpu_bench_result *b = &res.bench_math[k];
        const char *p = k == CDD_BENCH_TF32 ? "bench_tf32" : "bench_fp16";
        char key[48]; /* fixed: a constant key and a suffix */
        if (!res.bench_math_ran[k])
            continue;
        snprintf(key, sizeof key, "%s_gpu_ms", p);
        cdd_report_num(rep, key, b->gpu_ms);
        snprintf(key, sizeof key, "%s_gpu_tflops", p);
        cdd_report_num(rep, key, b->gpu_tflops);
        snprintf(key, sizeof key, "%s_speedup", p);
        cdd_report_num(rep, key, b->speedup);
    }
    if (res.checks.n_fail)
        cdd_say(rep, "Verify: %zu check%s failed, %zu warning%s.",
                res.checks.n_fail, res.checks.n_fail == 1 ? "" : "s",
                res.checks.n_warn, res.checks.n_warn == 1 ? "" : "s");
    else if (res.checks.n_warn)
        cdd_say(rep, "Verify: all checks passed (%zu warning%s).",
                res.checks.n_warn, res.checks.n_warn == 1 ? "" : "s");
    else
        cdd_say(rep, "Verify: all checks passed.");
    if (proved)
        record(rep, tree, &res, proved);
    cdd_verify_result_clear(&res);
    cdd_receipt_free(own);
    return 0;
}
