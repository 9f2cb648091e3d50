/* verify's gpu and bench layers: the driver against the tree's CUDA, then
 * one convolution compared with the tool's CPU reference, then (bench) the
 * first ResNet-50 layer timed on both. No driver is a skip, not a failure:
 * build agents without GPUs still verify files and loading. */
#include <stdio.h>
#include <string.h>

#include "cdd/cudnn_facts.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fatbin.h"
#include "cdd/gpu.h"
#include "cdd/strbuf.h"
#include "verify_int.h"

static void driver_fit(struct vctx *c, const struct cdd_gpu_info *gi)
{
    char drv[16], tree[16]; /* fixed: CUDA versions */
    int tmaj = c->m->cuda_major, tmin = 0;
    if (c->o->target->version.known) {
        tmaj = c->o->target->version.major;
        tmin = c->o->target->version.minor;
    }
    snprintf(tree, sizeof tree, "%d.%d", tmaj, tmin);
    cdd_cuda_version_str(gi->driver_cuda_version, drv, sizeof drv);
    const char *min = cdd_cuda_min_driver(
        tmaj, cdd_platform_is_windows(c->m->platform));
    const char *rel = gi->driver_release[0] ? gi->driver_release : "unknown";
    switch (cdd_gpu_driver_fit(gi->driver_cuda_version, gi->driver_release,
                               tmaj, tmin)) {
    case CDD_DRV_NATIVE:
        VCHECK(c, "gpu.driver", CDD_CHECK_PASS,
               "driver %s supports CUDA %s; the tree is CUDA %s", rel, drv,
               tree);
        break;
    case CDD_DRV_MINOR_COMPAT:
        VCHECK(c, "gpu.driver", CDD_CHECK_PASS,
               "driver %s supports CUDA %s; the tree's CUDA %s runs through "
               "minor-version compatibility (needs driver >= %s)", rel, drv,
               tree, min ? min : "?");
        break;
    default:
        VCHECK(c, "gpu.driver", CDD_CHECK_FAIL,
               "driver %s supports only CUDA %s but the tree is CUDA %s: "
               "update the NVIDIA driver%s%s", rel, drv, tree,
               min ? " to at least " : "", min ? min : "");
    }
}

/* ---- the GPU code the libraries carry ------------------------------------ */

/* Append one item (library names, whole) to a list; an append that fails
 * (out of memory) marks the result instead of cutting the list. */
static void list_add(struct vctx *c, struct cdd_sb *sb, const char *sep,
                     const char *fmt, const char *a, const char *b)
{
    if (cdd_sb_addf(sb, fmt, cdd_sb_len(sb) ? sep : "", a, b) != 0) {
        c->res->checks.nomem = 1;
        cdd_clear_error();
    }
}

/* gpu.arch: each library's fatbinaries (fatbin.h) against the device's
 * compute capability. gi NULL: no device to compare with (why says why);
 * the architectures are still reported, the comparison skipped. */
static void arch_check(struct vctx *c, const struct cdd_gpu_info *gi,
                       const char *why)
{
    struct cdd_fatbin_info all, fi;
    struct cdd_sb none, fail, jit, bad; /* lists of libraries */
    char desc[CDD_FATBIN_DESC_MAX]; /* fixed: every code fits (fatbin.h) */
    char codes[CDD_FATBIN_DESC_MAX]; /* fixed: every code fits (fatbin.h) */
    size_t n_code = 0;
    memset(&all, 0, sizeof all);
    cdd_sb_init(&none, CDD_TEXT_MAX, "list of libraries");
    cdd_sb_init(&fail, CDD_TEXT_MAX, "list of libraries");
    cdd_sb_init(&jit, CDD_TEXT_MAX, "list of libraries");
    cdd_sb_init(&bad, CDD_TEXT_MAX, "list of libraries");
    for (size_t i = 0; i < c->n_libs; i++) {
        const struct vlib *l = &c->libs[i];
        int has = 0;
        int r = cdd_fatbin_scan_file(l->installed, &has, &fi);
        if (r == CDD_E_NOTFOUND) { /* the load layer reported it missing */
            cdd_clear_error();
            continue;
        }
        if (r == CDD_E_NOMEM) { /* not an unreadable fatbinary */
            c->res->checks.nomem = 1;
            cdd_clear_error();
            continue;
        }
        if (r != 0) {
            list_add(c, &bad, "; ", "%s%s: %s", l->name,
                     cdd_last_error()->msg);
            cdd_clear_error();
            continue;
        }
        if (!has || !fi.n_codes) {
            list_add(c, &none, ", ", "%s%s%s", l->name, "");
            continue;
        }
        n_code++;
        cdd_fatbin_merge(&all, &fi);
        cdd_clear_error();
        if (!gi)
            continue;
        unsigned arch = 0;
        enum cdd_arch_fit fit = cdd_fatbin_fit(&fi, gi->cc_major,
                                               gi->cc_minor, &arch);
        cdd_fatbin_describe(&fi, codes, sizeof codes);
        if (fit == CDD_ARCH_NONE)
            list_add(c, &fail, "; ", "%s%s (%s)", l->name, codes);
        else if (fit == CDD_ARCH_PTX_JIT) {
            char a[32]; /* fixed: compute_ and a number */
            snprintf(a, sizeof a, "compute_%u", arch);
            list_add(c, &jit, ", ", "%s%s (PTX %s)", l->name, a);
        }
    }
    cdd_fatbin_describe(&all, desc, sizeof desc);
    if (cdd_sb_len(&bad)) {
        VCHECK(c, "gpu.arch", CDD_CHECK_FAIL,
               "unreadable CUDA fatbinary: %s", cdd_sb_str(&bad));
        goto out;
    }
    if (!n_code) {
        VCHECK(c, "gpu.arch", gi ? CDD_CHECK_WARN : CDD_CHECK_SKIP,
               "none of the %zu libraries carries GPU code (no .nv_fatbin / "
               ".nv_fatb section): which GPUs this cuDNN runs on cannot be "
               "told from the files", c->n_libs);
        goto out;
    }
    const char *nl = cdd_sb_len(&none) ? "; no GPU code in " : "";
    const char *without = cdd_sb_str(&none); /* shown after nl */
    if (!gi) {
        VCHECK(c, "gpu.arch", CDD_CHECK_SKIP,
               "%zu librar%s carry %s%s%s; not compared with a GPU: %s",
               n_code, n_code == 1 ? "y" : "ies", desc, nl, without, why);
        goto out;
    }
    char cc[320], sass[48]; /* fixed: numbers and a 256-byte device name */
    snprintf(cc, sizeof cc, "compute capability %d.%d (%s)", gi->cc_major,
             gi->cc_minor, gi->device_name);
    /* The cubins that run there: same major, minor at most the device's. */
    if (gi->cc_minor)
        snprintf(sass, sizeof sass, "sm_%d0..sm_%d%d", gi->cc_major,
                 gi->cc_major, gi->cc_minor);
    else
        snprintf(sass, sizeof sass, "sm_%d0", gi->cc_major);
    if (cdd_sb_len(&fail))
        VCHECK(c, "gpu.arch", CDD_CHECK_FAIL,
               "%s: neither SASS for %s nor PTX at or below compute_%d%d in "
               "%s: its kernels cannot run on this GPU; install a cuDNN "
               "build that supports compute capability %d.%d", cc, sass,
               gi->cc_major, gi->cc_minor, cdd_sb_str(&fail), gi->cc_major,
               gi->cc_minor);
    else if (cdd_sb_len(&jit))
        VCHECK(c, "gpu.arch", CDD_CHECK_WARN,
               "%s: no SASS for %s in %s: they run only after the driver "
               "compiles their PTX (JIT), which makes the first call slow "
               "(minutes for cuDNN) and needs a driver that knows that PTX "
               "version. All code: %s%s%s", cc, sass, cdd_sb_str(&jit), desc,
               nl, without);
    else
        VCHECK(c, "gpu.arch", CDD_CHECK_PASS,
               "%s: matching SASS in all %zu librar%s with GPU code (%s)%s%s",
               cc, n_code, n_code == 1 ? "y" : "ies", desc, nl, without);
out:
    cdd_sb_free(&none);
    cdd_sb_free(&fail);
    cdd_sb_free(&jit);
    cdd_sb_free(&bad);
}

#ifdef CDD_FAULT_INJECTION
/* Test builds only (docs/design.md, Test builds): with
 * CUDNN_DEPLOY_TEST_BENCH=small the bench runs a small convolution a few
 * times, so the end-to-end suite can drive `verify --level bench` on the
 * fake driver, whose "GPU" is this CPU. A release build has no such code. */
static void test_bench_size(struct cdd_gpu_bench_opts *o)
{
    const char *v = cdd_getenv("CUDNN_DEPLOY_TEST_BENCH");
    if (!v || strcmp(v, "small") != 0)
        return;
    o->shape = (struct cdd_conv_shape){2, 3, 24, 20, 8, 5, 5, 2, 2, 2, 2};
    o->warmup = 1;
    o->gpu_runs = 3;
    o->cpu_runs = 1;
}
#endif

void cdd_verify_gpu_layer(struct vctx *c, int bench, const char *driver,
                          const char *why_none)
{
    struct cdd_gpu_env *g = NULL;
    struct cdd_verify_result *res = c->res;
    if (!driver) {
        /* The loader's reason begins "no NVIDIA driver: …": said once. */
        static const char lead[] = "no NVIDIA driver: ";
        if (why_none && strncmp(why_none, lead, sizeof lead - 1) == 0)
            why_none += sizeof lead - 1;
        VCHECK(c, "gpu", CDD_CHECK_SKIP,
               "no NVIDIA driver library found (%s): the GPU checks need a "
               "driver and a GPU", why_none && *why_none
                                       ? why_none
                                       : "libcuda.so.1 / nvcuda.dll");
        arch_check(c, NULL, "no NVIDIA driver");
        return;
    }
    if (!c->host_can_load) {
        VCHECK(c, "gpu", CDD_CHECK_SKIP,
               "%s libraries cannot run on this host",
               cdd_platform_name(c->m->platform));
        arch_check(c, NULL, "they cannot run on this host");
        return;
    }
    cdd_verify_stage(c, "gpu.driver");
    if (cdd_gpu_env_open(driver, &g) != 0) {
        VCHECK(c, "gpu.driver", CDD_CHECK_FAIL, "%s: %s", driver,
               cdd_last_error()->msg);
        cdd_clear_error();
        return;
    }
    res->have_gpu = 1;
    res->gpu = *cdd_gpu_env_info(g);
    driver_fit(c, &res->gpu);
    cdd_verify_stage(c, "gpu.device");
    int r = cdd_gpu_env_device(g, 0);
    if (r == CDD_E_NOTFOUND) {
        VCHECK(c, "gpu.device", CDD_CHECK_SKIP,
               "the driver is installed but no CUDA device is visible: %s",
               cdd_last_error()->msg);
        cdd_clear_error();
        arch_check(c, NULL, "no CUDA device visible");
        goto out;
    } else if (r) {
        VCHECK(c, "gpu.device", CDD_CHECK_FAIL, "%s", cdd_last_error()->msg);
        cdd_clear_error();
        arch_check(c, NULL, "the device could not be opened");
        goto out;
    }
    res->gpu = *cdd_gpu_env_info(g);
    VCHECK(c, "gpu.device", CDD_CHECK_PASS,
           "%s (compute capability %d.%d, %.1f GiB), device 0 of %d",
           res->gpu.device_name, res->gpu.cc_major, res->gpu.cc_minor,
           (double)res->gpu.total_mem / (1024.0 * 1024.0 * 1024.0),
           res->gpu.device_count);
    cdd_verify_stage(c, "gpu.arch");
    arch_check(c, &res->gpu, NULL);
    struct cdd_lib *cudnn = c->n_libs ? c->libs[0].handle : NULL;
    if (!cudnn) {
        VCHECK(c, "gpu.conv", CDD_CHECK_SKIP,
               "cuDNN did not load (see the load checks)");
        goto out;
    }
    cdd_verify_stage(c, "gpu.conv");
    r = cdd_gpu_conv_check(g, cudnn, &res->conv);
    res->conv_ran = res->conv.ran;
    if (r) {
        VCHECK(c, "gpu.conv", CDD_CHECK_FAIL, "%s", cdd_last_error()->msg);
        goto out;
    }
    VCHECK(c, "gpu.conv", res->conv.pass ? CDD_CHECK_PASS : CDD_CHECK_FAIL,
           "1x3x32x32 * 16x3x3x3 (pad 1) with %s, %s math: max relative "
           "error %.2e against the CPU reference (limit %.0e)",
           cdd_cudnn_algo_name(res->conv.algo),
           cdd_cudnn_math_name(res->conv.math_type), res->conv.max_rel_err,
           res->conv.tolerance);
    if (!bench)
        goto out;
    struct cdd_gpu_bench_opts bo;
    for (int m = 0; m < CDD_BENCH_N_MATH; m++) {
        static const char *const names[CDD_BENCH_N_MATH] = {
            "bench", "bench.tf32", "bench.fp16"};
        if (c->o->bench)
            bo = *c->o->bench;
        else
            cdd_gpu_bench_defaults_for(&bo, m);
#ifdef CDD_FAULT_INJECTION
        test_bench_size(&bo);
#endif
        bo.math = m;
        cdd_verify_stage(c, names[m]);
        struct cdd_gpu_bench_result *b = &res->bench_math[m];
        r = cdd_gpu_bench(g, cudnn, &bo, b);
        res->bench_math_ran[m] = b->ran;
        if (m == CDD_BENCH_FP32) {
            res->bench = *b;
            res->bench_ran = b->ran;
        }
        if (r == CDD_E_INTERRUPTED) {
            VCHECK(c, names[m], CDD_CHECK_FAIL, "%s", cdd_last_error()->msg);
            goto out;
        }
        char tc[160] = ""; /* fixed: numbers and words */
        if (m == CDD_BENCH_TF32 && res->gpu.cc_major < 8)
            snprintf(tc, sizeof tc, "; compute capability %d.%d has no TF32 "
                     "tensor cores (they start at 8.0): FP32 math there",
                     res->gpu.cc_major, res->gpu.cc_minor);
        else if (m == CDD_BENCH_FP16 && res->gpu.cc_major < 7)
            snprintf(tc, sizeof tc, "; compute capability %d.%d has no "
                     "tensor cores (they start at 7.0)", res->gpu.cc_major,
                     res->gpu.cc_minor);
        if (r && !b->ran) {
            VCHECK(c, names[m], CDD_CHECK_FAIL, "%s: %s%s",
                   cdd_bench_math_name(m), cdd_last_error()->msg, tc);
            cdd_clear_error();
            continue;
        }
        /* Ran: accurate and fast enough, or which of the two it was not. */
        char verdict[1100] = ""; /* fixed: words and an error record's message */
        if (r && !b->accurate)
            snprintf(verdict, sizeof verdict, "; FAILED: %s",
                     cdd_last_error()->msg);
        else if (r)
            snprintf(verdict, sizeof verdict, "; FAILED: below %.0fx, cuDNN "
                     "is not really running on the GPU", b->min_speedup);
        cdd_clear_error();
        VCHECK(c, names[m], b->pass ? CDD_CHECK_PASS : CDD_CHECK_FAIL,
               "%s conv %dx%dx%dx%d * %dx%dx%dx%d stride %d pad %d: "
               "GPU %.3f ms median of %d (%.2f TFLOP/s, %s, %s math), CPU "
               "reference %.1f ms median of %d (%.2f GFLOP/s, one thread): "
               "speed-up %.0fx (at least %.0fx needed); max relative error "
               "%.2e (limit %.0e)%s%s", cdd_bench_math_name(m), b->shape.n,
               b->shape.c, b->shape.h, b->shape.w, b->shape.k, b->shape.c,
               b->shape.r, b->shape.s, b->shape.stride_h, b->shape.pad_h,
               b->gpu_ms, b->gpu_runs, b->gpu_tflops,
               cdd_cudnn_algo_name(b->algo), cdd_cudnn_math_name(b->math_type),
               b->cpu_ms, b->cpu_runs, b->cpu_gflops, b->speedup,
               b->min_speedup, b->max_rel_err, b->tolerance, tc, verdict);
    }
out:
    cdd_clear_error();
    cdd_gpu_env_close(g);
}
