/* Verify's steps that run the code of others and may crash or hang, run
 * apart (isolate.h): the GPU layer (the driver and cuDNN's GPU code), and
 * the sub-libraries' version checks -- which, in cuDNN 9, initialise the
 * CUDA driver (seen on 9.14: after cudnnGraphVersionCheck() a forked
 * child's cuInit returns CUDA_ERROR_NOT_INITIALIZED), so in this process
 * they would also leave the GPU layer's child no driver to start.
 *
 * A step runs in a child process, which sends each check it makes (and,
 * for the GPU layer, the results so far) as every stage begins; the parent
 * adds them to its own report. A child that crashes, hangs past the bound
 * or ends without its closing record leaves the checks it had sent and one
 * failing check named after the stage it was in, saying how it ended.
 * Where the platform runs fn in-process (Windows), the step has written
 * into c->res itself and the records are not read back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/isolate.h"
#include "verify_int.h"

/* The results the layer fills besides its checks (plain data: the parent
 * and the child are the same program, so the layout is the same). */
struct gpu_wire {
    int have_gpu;
    struct cdd_gpu_info gpu;
    int conv_ran;
    struct cdd_gpu_conv_result conv;
    int bench_ran;
    struct cdd_gpu_bench_result bench;
    int bench_math_ran[CDD_BENCH_N_MATH];
    struct cdd_gpu_bench_result bench_math[CDD_BENCH_N_MATH];
};

/* The layer makes about ten checks, each at most CDD_TEXT_MAX. */
#define APART_MAX (24 * (size_t)CDD_TEXT_MAX)

/* A check; the GPU layer's results; the checks' flags (a check lost for
 * memory or length: every step sends them); a stage begun; the end. */
enum {
    REC_CHECK = 'c',
    REC_RESULT = 'r',
    REC_FLAGS = 'f',
    REC_STAGE = 's',
    REC_END = 'e'
};

/* A step to run apart, and the words its failures are told in. */
struct step {
    void (*run)(struct vctx *c, void *arg);
    void *arg;
    int gpu;            /* the GPU layer: its results go with its checks */
    const char *what;   /* "the GPU checks" */
    const char *first;  /* the check named when it dies before a stage */
    const char *(*doing)(const char *stage); /* "running the convolution" */
    const char *crash;  /* what a crash there means, and its usual causes */
    const char *hang;   /* the same for a hang */
};

struct apart {
    struct vctx *c;
    const struct step *s;
};

/* ---- the child ----------------------------------------------------------- */

/* Status, name and detail. A check's fix is not carried: the GPU layer
 * attaches none (its advice is in the detail). */
static int send_check(struct cdd_child *ch, const struct cdd_check *k)
{
    struct cdd_sb sb;
    unsigned char st = (unsigned char)k->status;
    cdd_sb_init(&sb, APART_MAX, "a check sent to the parent");
    int r = cdd_sb_add(&sb, &st, 1);
    if (!r)
        r = cdd_sb_add(&sb, k->name, strlen(k->name) + 1);
    if (!r)
        r = cdd_sb_adds(&sb, k->detail ? k->detail : "");
    if (!r)
        r = cdd_child_send_rec(ch, REC_CHECK, cdd_sb_str(&sb), cdd_sb_len(&sb));
    cdd_sb_free(&sb);
    return r;
}

/* The checks not sent yet and their flags, then (the GPU layer) the
 * results so far. */
static int send_progress(struct vctx *c, int gpu)
{
    const struct cdd_checks *ck = &c->res->checks;
    const struct cdd_verify_result *res = c->res;
    for (; c->n_sent < ck->n; c->n_sent++)
        if (send_check(c->child, &ck->v[c->n_sent]) != 0)
            return -1;
    unsigned char flags[2]; /* fixed: two flags */
    flags[0] = ck->nomem != 0;
    flags[1] = ck->toolong != 0;
    if (cdd_child_send_rec(c->child, REC_FLAGS, flags, sizeof flags) != 0)
        return -1;
    if (!gpu)
        return 0;
    struct gpu_wire w;
    memset(&w, 0, sizeof w);
    w.have_gpu = res->have_gpu;
    w.gpu = res->gpu;
    w.conv_ran = res->conv_ran;
    w.conv = res->conv;
    w.bench_ran = res->bench_ran;
    w.bench = res->bench;
    memcpy(w.bench_math_ran, res->bench_math_ran, sizeof w.bench_math_ran);
    memcpy(w.bench_math, res->bench_math, sizeof w.bench_math);
    return cdd_child_send_rec(c->child, REC_RESULT, &w, sizeof w);
}

void cdd_verify_stage(struct vctx *c, const char *stage)
{
    if (!c->child)
        return;
    size_t n = strlen(stage);
    if (n > CDD_NAME_MAX) /* the parent takes no longer name */
        n = CDD_NAME_MAX;
    if (send_progress(c, c->child_gpu) == 0)
        (void)cdd_child_send_rec(c->child, REC_STAGE, stage, n);
    cdd_clear_error(); /* a parent gone: the layer goes on, unheard */
}

static int child_main(struct cdd_child *ch, void *arg)
{
    struct apart *a = arg;
    struct vctx *c = a->c;
    c->child = ch;
    c->child_gpu = a->s->gpu;
    c->n_sent = c->res->checks.n; /* the parent has those */
    a->s->run(c, a->s->arg);
    int r = send_progress(c, a->s->gpu);
    if (!r)
        r = cdd_child_send_rec(ch, REC_END, NULL, 0);
    c->child = NULL;
    return r;
}

/* ---- the parent ---------------------------------------------------------- */

long cdd_gpu_timeout_ms(double gpu_timeout)
{
    if (gpu_timeout < 0)
        return 0;
    if (gpu_timeout == 0)
        gpu_timeout = CDD_GPU_TIMEOUT_DEFAULT;
    if (gpu_timeout > 1e7) /* the option's own limit; LONG_MAX ms on ILP32 */
        gpu_timeout = 1e7;
    long ms = (long)(gpu_timeout * 1000.0);
    return ms > 0 ? ms : 1;
}

static const char *gpu_doing(const char *stage)
{
    if (!stage)
        return "starting";
    if (strcmp(stage, "gpu.driver") == 0)
        return "loading the NVIDIA driver";
    if (strcmp(stage, "gpu.device") == 0)
        return "initialising the driver (cuInit) and opening device 0";
    if (strcmp(stage, "gpu.arch") == 0)
        return "reading the libraries' GPU code";
    if (strcmp(stage, "gpu.conv") == 0)
        return "running the convolution check in cuDNN";
    return "running the benchmark in cuDNN";
}

static void add_check(struct vctx *c, const char *p, size_t n, int *bad)
{
    const char *name = n > 1 ? memchr(p + 1, '\0', n - 1) : NULL;
    if (!name || (unsigned char)p[0] >= CDD_CHECK_N_STATUS || name == p + 1 ||
        memchr(name + 1, '\0', n - (size_t)(name + 1 - p))) {
        *bad = 1;
        return;
    }
    /* The detail runs to the record's end: copied out to end it. */
    size_t dl = n - (size_t)(name + 1 - p);
    char *detail = cdd_strndup(name + 1, dl);
    if (!detail) {
        c->res->checks.nomem = 1;
        cdd_clear_error();
        return;
    }
    if (VCHECK(c, p + 1, (enum cdd_check_status)(unsigned char)p[0], "%s",
               detail) != 0)
        cdd_clear_error();
    free(detail);
}

static void take_results(struct vctx *c, const struct gpu_wire *w)
{
    struct cdd_verify_result *res = c->res;
    res->have_gpu = w->have_gpu;
    res->gpu = w->gpu;
    /* Strings from another process end inside their arrays. */
    res->gpu.driver_release[sizeof res->gpu.driver_release - 1] = '\0';
    res->gpu.device_name[sizeof res->gpu.device_name - 1] = '\0';
    res->conv_ran = w->conv_ran;
    res->conv = w->conv;
    res->bench_ran = w->bench_ran;
    res->bench = w->bench;
    memcpy(res->bench_math_ran, w->bench_math_ran, sizeof w->bench_math_ran);
    memcpy(res->bench_math, w->bench_math, sizeof w->bench_math);
}

/* Run s apart and take what it sent into c->res. */
static void run_apart(struct vctx *c, const struct step *s)
{
    struct apart a = {c, s};
    struct cdd_isolated iso;
    if (cdd_run_isolated(child_main, &a, APART_MAX,
                         cdd_gpu_timeout_ms(c->o->gpu_timeout), s->what,
                         &iso) != 0) {
        if (cdd_last_error()->code == CDD_E_NOMEM)
            c->res->checks.nomem = 1;
        else
            VCHECK(c, s->first, CDD_CHECK_FAIL, "%s could not be started in "
                   "a process of their own: %s", s->what,
                   cdd_last_error()->msg);
        cdd_clear_error();
        cdd_isolated_free(&iso);
        return;
    }
    if (!iso.isolated) { /* the step ran here and wrote c->res itself */
        cdd_isolated_free(&iso);
        return;
    }
    size_t pos = 0, n = 0;
    const char *p = NULL, *stage = NULL;
    size_t stage_len = 0;
    char type = 0;
    int ended = 0, bad = 0, have_w = 0;
    struct gpu_wire w;
    while (!bad && cdd_isolated_next(&iso, &pos, &type, &p, &n)) {
        if (ended)
            bad = 1;
        else if (type == REC_CHECK)
            add_check(c, p, n, &bad);
        else if (type == REC_FLAGS && n == 2 && (unsigned char)p[0] <= 1 &&
                   (unsigned char)p[1] <= 1) {
            if (p[0])
                c->res->checks.nomem = 1;
            if (p[1])
                c->res->checks.toolong = 1;
        } else if (type == REC_RESULT && s->gpu && n == sizeof w) {
            memcpy(&w, p, sizeof w);
            have_w = 1;
        } else if (type == REC_STAGE && n > 0 && n <= CDD_NAME_MAX &&
                   !memchr(p, '\0', n)) {
            stage = p;
            stage_len = n;
        } else if (type == REC_END && n == 0)
            ended = 1;
        else
            bad = 1;
    }
    if (have_w)
        take_results(c, &w);
    char name[CDD_NAME_MAX + 1]; /* fixed: a stage's check name */
    snprintf(name, sizeof name, "%s", s->first);
    if (stage)
        snprintf(name, sizeof name, "%.*s", (int)stage_len, stage);
    char how[96]; /* fixed: cdd_isolated_how's words */
    cdd_isolated_how(&iso, how, sizeof how);
    const char *doing = s->doing(stage ? name : NULL);
    if (bad)
        VCHECK(c, name, CDD_CHECK_FAIL, "the process running %s sent a "
               "malformed record (it %s): the code it ran overwrote its "
               "memory", s->what, how);
    else if (iso.stalled)
        VCHECK(c, name, CDD_CHECK_FAIL, "the process running %s %s while "
               "%s: %s", s->what, how, doing, s->hang);
    else if (!ended || !cdd_isolated_ok(&iso))
        VCHECK(c, name, CDD_CHECK_FAIL, "the process running %s %s while "
               "%s: %s", s->what, how, doing, s->crash);
    cdd_isolated_free(&iso);
}

/* ---- the GPU layer ------------------------------------------------------- */

struct gpu_args {
    int bench;
    const char *driver;
    const char *why_none;
};

static void gpu_run(struct vctx *c, void *arg)
{
    struct gpu_args *g = arg;
    cdd_verify_gpu_layer(c, g->bench, g->driver, g->why_none);
}

void cdd_verify_gpu_apart(struct vctx *c, int bench, const char *driver,
                          const char *why_none)
{
    struct gpu_args g = {bench, driver, why_none};
    if (!driver || !c->host_can_load) { /* no driver code runs: no need */
        cdd_verify_gpu_layer(c, bench, driver, why_none);
        return;
    }
    const struct step s = {
        gpu_run, &g, 1, "the GPU checks", "gpu", gpu_doing,
        "the NVIDIA driver or cuDNN crashed there (the checks above it are "
        "what it found before). verify runs them apart, so cudnn-deploy and "
        "this report survive it; a program using this cuDNN here would crash "
        "the same way. Usual causes: a cuDNN build that does not fit this "
        "driver or GPU (see gpu.driver and gpu.arch), or a broken driver "
        "install (nvidia-smi should list the GPU)",
        "the NVIDIA driver or cuDNN hangs there (the checks above it are what "
        "it found before). A program using this cuDNN here would hang the "
        "same way. Usual causes: a GPU in a bad state or held by another "
        "process (nvidia-smi shows it; a reset or reboot clears it), a driver "
        "that does not fit the kernel, or the driver compiling cuDNN's PTX "
        "for a GPU it has no code for (see gpu.arch; --gpu-timeout gives it "
        "longer)"};
    run_apart(c, &s);
}

/* ---- the sub-libraries' version checks ----------------------------------- */

static const char *check_doing(const char *stage)
{
    return stage ? "calling that sub-library's version check"
                 : "starting the version checks";
}

void cdd_verify_run_apart_checks(struct vctx *c,
                                 void (*run)(struct vctx *c, void *arg),
                                 void *arg)
{
    const struct step s = {
        run, arg, 0, "the sub-libraries' version checks", "load.check",
        check_doing,
        "cuDNN crashed there (the checks above it are what it found "
        "before); a program loading this cuDNN would crash the same way. "
        "cuDNN 9's version checks start the NVIDIA driver: usual causes are "
        "a sub-library from another cuDNN build (reinstall the whole "
        "archive) or a broken driver install (nvidia-smi should list the "
        "GPU)",
        "cuDNN hangs there; a program loading this cuDNN would hang the same "
        "way. cuDNN 9's version checks start the NVIDIA driver: usual causes "
        "are a GPU in a bad state or held by another process (nvidia-smi "
        "shows it; a reset or reboot clears it) or a driver that does not "
        "fit the kernel (--gpu-timeout gives it longer)"};
    run_apart(c, &s);
}
