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
 *
 * POSIX forks: the child is this process with the proven libraries loaded.
 * Windows starts this program afresh (isolate.h), so each step also makes
 * a request: the facts the layer reads (the manifest's, the target's, the
 * bench options), each library's names and skip, and the load log -- what
 * was loaded, in order, each of our copies with the sha256 it was proven
 * by. The child (the entries at the end) proves each copy again on the
 * handle the loader maps it through (cdd_lib_open_proven), loads the
 * tree's own libraries by the same absolute paths, runs the same step on a
 * context rebuilt from the request, and sends the same records. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/isolate.h"
#include "cdd/loader.h"
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
    const char *entry;  /* its name started afresh (cdd_verify_child_main) */
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
    c->n_sent = c->res->checks.n; /* the parent has those (none afresh) */
    a->s->run(c, a->s->arg);
    int r = send_progress(c, a->s->gpu);
    if (!r)
        r = cdd_child_send_rec(ch, REC_END, NULL, 0);
    c->child = NULL;
    return r;
}

/* ---- the request (a step started afresh) --------------------------------- */

struct gpu_args {
    int bench;
    const char *driver;
    const char *why_none;
};

/* The request's kinds of step. */
enum { STEP_GPU = 'g', STEP_CHECKS = 'k' };

/* The request is a row of fields: a byte, a 4-byte little-endian number, or
 * a text (its length in 4 bytes, 0xFFFFFFFF for none, then its bytes). */
#define NO_TEXT 0xFFFFFFFFu
/* Bounds the child keeps to: libraries and loads as verify has them. */
#define REQ_LIBS_MAX 4096u
#define REQ_LOADS_MAX 65536u

static int put_u8(struct cdd_sb *sb, unsigned v)
{
    unsigned char b = (unsigned char)v;
    return cdd_sb_add(sb, &b, 1);
}

static int put_u32(struct cdd_sb *sb, uint32_t v)
{
    unsigned char b[4]; /* fixed: a number's bytes */
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    return cdd_sb_add(sb, b, 4);
}

static int put_text(struct cdd_sb *sb, const char *t)
{
    if (!t)
        return put_u32(sb, NO_TEXT);
    size_t n = strlen(t);
    int r = put_u32(sb, (uint32_t)n);
    return r ? r : cdd_sb_add(sb, t, n);
}

/* What the step reads of c and g, and what was loaded (the load log). */
static int request(const struct vctx *c, const struct gpu_args *g,
                   struct cdd_sb *sb)
{
    const struct cdd_target *t = c->o->target;
    cdd_sb_init(sb, 16u * 1024u * 1024u, "a step's request");
    int r = put_u8(sb, g ? STEP_GPU : STEP_CHECKS);
    if (!r)
        r = put_u8(sb, g && g->bench);
    if (!r)
        r = put_text(sb, g ? g->driver : NULL);
    if (!r)
        r = put_text(sb, g ? g->why_none : NULL);
    if (!r)
        r = put_u8(sb, c->o->bench != NULL);
    if (!r && c->o->bench)
        r = cdd_sb_add(sb, c->o->bench, sizeof *c->o->bench);
    if (!r)
        r = put_u8(sb, t && t->version.known);
    if (!r)
        r = put_u32(sb, t ? (uint32_t)t->version.major : 0);
    if (!r)
        r = put_u32(sb, t ? (uint32_t)t->version.minor : 0);
    if (!r)
        r = put_u32(sb, (uint32_t)c->m->cuda_major);
    if (!r)
        r = put_u32(sb, (uint32_t)c->m->platform);
    if (!r)
        r = put_u32(sb, (uint32_t)c->m->verify.mismatch_status);
    if (!r)
        r = put_u32(sb, (uint32_t)c->n_libs);
    for (size_t i = 0; !r && i < c->n_libs; i++) {
        const struct vlib *l = &c->libs[i];
        r = put_u8(sb, l->is_main);
        if (!r)
            r = put_text(sb, l->name);
        if (!r)
            r = put_text(sb, l->installed);
        if (!r)
            r = put_text(sb, l->check_symbol);
        if (!r)
            r = put_text(sb, l->skip);
    }
    if (!r)
        r = put_u32(sb, (uint32_t)c->n_loaded);
    for (size_t i = 0; !r && i < c->n_loaded; i++) {
        const struct vload *v = &c->loaded[i];
        r = put_u32(sb, (uint32_t)(int32_t)v->lib);
        if (!r)
            r = put_text(sb, v->path);
        if (!r && v->lib >= 0)
            r = cdd_sb_add(sb, c->libs[v->lib].sha, CDD_SHA256_LEN);
    }
    return r;
}

/* Reading it back, in the child: every field bounded by what is left. */
struct rd {
    const unsigned char *p;
    size_t left;
    int bad;
};

static const unsigned char *take(struct rd *d, size_t n)
{
    if (d->bad || d->left < n) {
        d->bad = 1;
        return NULL;
    }
    const unsigned char *p = d->p;
    d->p += n;
    d->left -= n;
    return p;
}

static unsigned get_u8(struct rd *d)
{
    const unsigned char *p = take(d, 1);
    return p ? p[0] : 0;
}

static uint32_t get_u32(struct rd *d)
{
    const unsigned char *p = take(d, 4);
    uint32_t v = 0;
    for (int i = 0; p && i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

/* A text, malloc'd (NULL for none, or on a fault: d->bad, or *nomem). */
static char *get_text(struct rd *d, int *nomem)
{
    uint32_t n = get_u32(d);
    if (d->bad || n == NO_TEXT)
        return NULL;
    const unsigned char *p = take(d, n);
    if (!p)
        return NULL;
    if (memchr(p, '\0', n)) {
        d->bad = 1;
        return NULL;
    }
    char *t = cdd_strndup((const char *)p, n);
    if (!t)
        *nomem = 1;
    return t;
}

/* The state a step runs on in the child, rebuilt from the request. */
struct afresh {
    struct cdd_verify_opts o;
    struct cdd_target t;
    struct cdd_gpu_bench_opts bench;
    struct cdd_manifest *m;
    struct cdd_verify_result res;
    struct vctx c;
    struct gpu_args g;
    char *driver, *why_none;
    int kind;
};

static void afresh_free(struct afresh *a)
{
    struct vctx *c = &a->c;
    for (size_t i = c->n_libs; i-- > 0;)
        cdd_lib_close(c->libs[i].handle);
    for (size_t i = c->n_tree_deps; i-- > 0;)
        cdd_lib_close(c->tree_deps[i]);
    free(c->tree_deps);
    for (size_t i = 0; i < c->n_libs; i++) {
        free(c->libs[i].installed);
        free(c->libs[i].name);
        free((char *)c->libs[i].check_symbol);
        free(c->libs[i].skip);
    }
    free(c->libs);
    free(a->driver);
    free(a->why_none);
    free(a->m);
    cdd_verify_result_clear(&a->res);
}

/* 0, or CDD_E_NOMEM / CDD_E_USAGE (a request this program did not make). */
static int rebuild(struct afresh *a, const void *req, size_t n)
{
    struct rd d = {req, n, 0};
    int nomem = 0;
    struct vctx *c = &a->c;
    memset(a, 0, sizeof *a);
    if (!(a->m = calloc(1, sizeof *a->m)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    a->kind = (int)get_u8(&d);
    a->g.bench = get_u8(&d) != 0;
    a->driver = get_text(&d, &nomem);
    a->why_none = get_text(&d, &nomem);
    a->g.driver = a->driver;
    a->g.why_none = a->why_none;
    if (get_u8(&d)) {
        const unsigned char *b = take(&d, sizeof a->bench);
        if (b) {
            memcpy(&a->bench, b, sizeof a->bench);
            a->o.bench = &a->bench;
        }
    }
    a->t.version.known = get_u8(&d) != 0;
    a->t.version.major = (int)get_u32(&d);
    a->t.version.minor = (int)get_u32(&d);
    a->m->cuda_major = (int)get_u32(&d);
    a->m->platform = (enum cdd_platform)get_u32(&d);
    a->m->verify.mismatch_status = (long)(int32_t)get_u32(&d);
    a->o.target = &a->t;
    c->o = &a->o;
    c->m = a->m;
    c->res = &a->res;
    c->host_can_load = 1;
    uint32_t nl = get_u32(&d);
    if (!d.bad && nl > REQ_LIBS_MAX)
        d.bad = 1;
    if (!d.bad && !(c->libs = calloc(nl ? nl : 1, sizeof *c->libs)))
        nomem = 1;
    for (uint32_t i = 0; !d.bad && !nomem && i < nl; i++) {
        struct vlib *l = &c->libs[i];
        c->n_libs++;
        l->is_main = get_u8(&d) != 0;
        l->name = get_text(&d, &nomem);
        l->installed = get_text(&d, &nomem);
        l->check_symbol = get_text(&d, &nomem);
        l->skip = get_text(&d, &nomem);
        if (!d.bad && !nomem && (!l->name || !l->installed))
            d.bad = 1;
    }
    uint32_t nload = get_u32(&d);
    if (!d.bad && nload > REQ_LOADS_MAX)
        d.bad = 1;
    if (!d.bad && !nomem && a->kind != STEP_GPU && a->kind != STEP_CHECKS)
        d.bad = 1;
    /* The loads, in order; the first that fails is the step's answer. */
    int failed = 0;
    for (uint32_t i = 0; !d.bad && !nomem && !failed && i < nload; i++) {
        int32_t lib = (int32_t)get_u32(&d);
        char *path = get_text(&d, &nomem);
        const unsigned char *sha = lib >= 0 ? take(&d, CDD_SHA256_LEN) : NULL;
        int r = 0;
        if (d.bad || nomem || !path) {
            d.bad |= !nomem;
        } else if (lib >= 0 && ((uint32_t)lib >= c->n_libs ||
                                c->libs[lib].handle)) {
            d.bad = 1;
        } else if (lib >= 0) {
            r = cdd_lib_open_proven(path, sha, &c->libs[lib].handle);
        } else {
            struct cdd_lib *h = NULL;
            r = CDD_GROW(c->tree_deps, NULL, c->n_tree_deps + 1, REQ_LOADS_MAX,
                         "libraries preloaded from the tree");
            if (!r && (r = cdd_lib_open(path, &h)) == 0)
                c->tree_deps[c->n_tree_deps++] = h;
        }
        free(path);
        if (r == CDD_E_NOMEM)
            nomem = 1;
        else if (r)
            failed = r; /* said by the caller, from the error */
    }
    if (nomem)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (d.bad || (!failed && d.left))
        return cdd_fail(CDD_E_USAGE, NULL, 0, "a malformed request");
    return failed;
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
static void run_apart(struct vctx *c, const struct step *s,
                      const struct gpu_args *g)
{
    struct apart a = {c, s};
    struct cdd_isolated iso;
    struct cdd_sb req;
    struct cdd_respawn again = {s->entry, NULL, 0};
    memset(&iso, 0, sizeof iso);
    if (request(c, g, &req) != 0) {
        if (cdd_last_error()->code == CDD_E_NOMEM)
            c->res->checks.nomem = 1;
        else
            VCHECK(c, s->first, CDD_CHECK_FAIL, "%s could not be described "
                   "for a process of their own: %s", s->what,
                   cdd_last_error()->msg);
        cdd_clear_error();
        cdd_sb_free(&req);
        return;
    }
    again.req = cdd_sb_str(&req);
    again.n = cdd_sb_len(&req);
    int started = cdd_run_isolated(child_main, &a, &again, APART_MAX,
                                   cdd_gpu_timeout_ms(c->o->gpu_timeout),
                                   s->what, &iso);
    cdd_sb_free(&req);
    if (started != 0) {
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

static void gpu_run(struct vctx *c, void *arg)
{
    struct gpu_args *g = arg;
    cdd_verify_gpu_layer(c, g->bench, g->driver, g->why_none);
}

static const struct step gpu_step = {
    gpu_run, NULL, 1, "verify-gpu", "the GPU checks", "gpu", gpu_doing,
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

void cdd_verify_gpu_apart(struct vctx *c, int bench, const char *driver,
                          const char *why_none)
{
    struct gpu_args g = {bench, driver, why_none};
    if (!driver || !c->host_can_load) { /* no driver code runs: no need */
        cdd_verify_gpu_layer(c, bench, driver, why_none);
        return;
    }
    struct step s = gpu_step;
    s.arg = &g;
    run_apart(c, &s, &g);
}

/* ---- the sub-libraries' version checks ----------------------------------- */

static const char *check_doing(const char *stage)
{
    return stage ? "calling that sub-library's version check"
                 : "starting the version checks";
}

static void checks_run(struct vctx *c, void *arg)
{
    (void)arg;
    cdd_verify_sub_checks(c);
}

static const struct step checks_step = {
    checks_run, NULL, 0, "verify-checks",
    "the sub-libraries' version checks", "load.check", check_doing,
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

void cdd_verify_run_apart_checks(struct vctx *c)
{
    run_apart(c, &checks_step, NULL);
}

/* ---- started afresh (Windows) -------------------------------------------- */

/* Rebuild the step's state from the request, load what the parent had
 * loaded (each of our copies proven again), run the step and send what it
 * finds, as child_main does in a forked child. A load that fails is the
 * step's one failing check, with the loader's words. */
static int step_afresh(struct cdd_child *ch, const void *req, size_t n)
{
    struct afresh *a = calloc(1, sizeof *a);
    if (!a)
        return 1;
    int r = rebuild(a, req, n);
    const struct step *s = a->kind == STEP_GPU ? &gpu_step : &checks_step;
    struct step run = *s;
    run.arg = &a->g;
    struct apart ap = {&a->c, &run};
    if (r == 0) {
        r = child_main(ch, &ap);
    } else if (r != CDD_E_USAGE && a->c.res) {
        a->c.child = ch;
        a->c.child_gpu = s->gpu;
        if (r == CDD_E_NOMEM)
            a->res.checks.nomem = 1;
        else
            VCHECK(&a->c, s->first, CDD_CHECK_FAIL, "a library could not "
                   "be loaded again in the process of its own that runs %s: "
                   "%s", s->what, cdd_last_error()->msg);
        cdd_clear_error();
        r = send_progress(&a->c, 0);
        if (!r)
            r = cdd_child_send_rec(ch, REC_END, NULL, 0);
        a->c.child = NULL;
    }
    afresh_free(a);
    free(a);
    return r != 0;
}

static const struct cdd_isolate_entry entries[] = {
    {"verify-gpu", step_afresh},
    {"verify-checks", step_afresh},
    {"verify-fit", cdd_fit_probe_entry},
};

int cdd_verify_child_main(int argc, char **argv)
{
    return cdd_isolate_child_main(argc, argv, entries,
                                  sizeof entries / sizeof entries[0]);
}
