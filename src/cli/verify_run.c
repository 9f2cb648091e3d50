/* Running verify on a tree and reporting its checks: the verify command,
 * and install at its end. */
#include <stdio.h>

#include "cdd/error.h"
#include "cdd/verify.h"
#include "cmds.h"
#include "report.h"

int cdd_cli_verify(struct cdd_report *rep, const struct cdd_target *t,
                   struct cdd_tree *tree, const struct cdd_manifest *m,
                   const struct cdd_opts_verify *vo)
{
    struct cdd_verify_result res;
    struct cdd_verify_opts o = {.target = t, .tree = tree, .m = m,
                                .level = vo && vo->level_given
                                             ? (int)vo->level : -1};
    int r = cdd_verify(&o, &res);
    if (r) {
        cdd_verify_result_clear(&res);
        return r;
    }
    cdd_say(rep, "Verifying %s in %s (level %s)", res.manifest_name, t->root,
            cdd_opt_value_name(cdd_level_values, res.level));
    cdd_report_checks(rep, &res.checks);
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
        char key[48];
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
        cdd_say(rep, "Verify: %zu check(s) failed, %zu warning(s).",
                res.checks.n_fail, res.checks.n_warn);
    else
        cdd_say(rep, "Verify: all checks passed (%zu warning(s)).",
                res.checks.n_warn);
    cdd_verify_result_clear(&res);
    return 0;
}
