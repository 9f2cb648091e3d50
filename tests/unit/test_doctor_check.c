/* doctor's checks (doctor_check.c) on synthetic scans: each test builds
 * the struct cdd_dscan that a host would produce (toolkits, PATH entries,
 * copies of cuDNN, variables, the driver) without any of it existing, runs
 * the checks, and asserts the status and the fix they state. Each case has
 * a twin that flips the status, so a check that always says the same
 * thing fails here. */
#include "test.h"

#include <stdarg.h>

#include "cdd/doctor.h"
#include "cdd/error.h"
#include "doctor_int.h"

static struct cdd_doctor_result res;
static struct cdd_dscan s;

static char *dup(const char *p)
{
    char *d = p ? strdup(p) : NULL;
    if (p && !d)
        abort();
    return d;
}

static void setup(int windows)
{
    cdd_dscan_init(&s, &res, windows, NULL);
    memset(&res, 0, sizeof res);
    /* A host with a driver for CUDA 13.0 unless a test says otherwise. */
    res.have_driver = 1;
    res.driver_cuda_version = 13000;
    snprintf(res.driver_release, sizeof res.driver_release, "580.65.06");
    res.driver_path = strdup("/usr/lib/libcuda.so.1");
}

static void teardown(void)
{
    cdd_dscan_clear(&s);
    cdd_doctor_result_clear(&res);
}

static int add_toolkit(const char *root, int major, int minor)
{
    struct cdd_doctor_toolkit *v =
        realloc(res.toolkits, (res.n_toolkits + 1) * sizeof *v);
    if (!v)
        abort();
    res.toolkits = v;
    struct cdd_doctor_toolkit *k = &v[res.n_toolkits];
    memset(k, 0, sizeof *k);
    k->root = dup(root);
    k->real = dup(root);
    k->found_by = dup("PATH");
    if (major) {
        k->version.known = 1;
        k->version.major = major;
        k->version.minor = minor;
        k->version.patch = -1;
        snprintf(k->version.source, sizeof k->version.source, "version.json");
    }
    return (int)res.n_toolkits++;
}

static int add_copy(const char *name, const char *path, const char *version,
                    enum cdd_copy_where where, const char *origin, int order)
{
    struct cdd_doctor_copy *v =
        realloc(res.copies, (res.n_copies + 1) * sizeof *v);
    if (!v)
        abort();
    res.copies = v;
    struct cdd_doctor_copy *k = &v[res.n_copies];
    memset(k, 0, sizeof *k);
    k->name = dup(name);
    k->path = dup(path);
    k->real = dup(path);
    k->origin = dup(origin);
    snprintf(k->version, sizeof k->version, "%s", version);
    k->version_from = *version ? "file name" : "";
    k->where = where;
    k->order = order;
    k->is_main = 1;
    return (int)res.n_copies++;
}

/* An entry of PATH or LD_LIBRARY_PATH belonging to toolkit t (-1 none). */
static void add_entry(struct cdd_dr_plist *l, const char *var,
                      const char *dir, int t)
{
    struct cdd_dr_pentry *v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v)
        abort();
    l->v = v;
    l->var = var;
    l->set = 1;
    memset(&v[l->n], 0, sizeof v[l->n]);
    v[l->n].dir = dup(dir);
    v[l->n].real = dup(dir);
    v[l->n].toolkit = t;
    if (t >= 0) {
        int *pos = !strcmp(var, "PATH") ? &res.toolkits[t].path_pos
                                        : &res.toolkits[t].lib_path_pos;
        if (!*pos)
            *pos = (int)l->n + 1;
    }
    l->n++;
}

/* Copy k is the loader's first pick of major index m. */
static void set_winner(int m, int k)
{
    s.search[m].idx[s.search[m].n++] = k;
    s.winner[m] = s.search[m].idx[0];
}

static const struct cdd_check *find(const char *name)
{
    for (size_t i = 0; i < res.checks.n; i++)
        if (!strcmp(res.checks.v[i].name, name))
            return &res.checks.v[i];
    return NULL;
}

/* The check exists, has status st, and its detail holds each of the
 * strings (NULL-terminated). */
static void expect(const char *name, enum cdd_check_status st, ...)
{
    const struct cdd_check *c = find(name);
    CHECK_MSG(c != NULL, "no check named '%s'", name);
    if (!c)
        return;
    CHECK_MSG(c->status == st, "%s: status %s, want %s; detail: %s", name,
              cdd_check_status_name(c->status), cdd_check_status_name(st),
              c->detail);
    va_list ap;
    va_start(ap, st);
    for (const char *want; (want = va_arg(ap, const char *)) != NULL;)
        CHECK_MSG(strstr(c->detail, want) != NULL,
                  "%s: detail lacks \"%s\": %s", name, want, c->detail);
    va_end(ap);
}

/* The check's fix has, in alternative alt, a step of kind and scope on
 * name (a variable or a file) with value. */
static void expect_fix(const char *check, unsigned alt, enum cdd_fix_kind kind,
                       enum cdd_fix_scope scope, const char *name,
                       const char *value)
{
    const struct cdd_check *c = find(check);
    int found = 0;
    for (size_t i = 0; c && i < c->fix.n; i++) {
        const struct cdd_fix *x = &c->fix.v[i];
        found |= x->alt == alt && x->kind == kind && x->scope == scope &&
                 !strcmp(x->name, name) &&
                 (!value || (x->value && !strcmp(x->value, value)));
    }
    CHECK_MSG(found, "%s: no fix step %s %s %s=%s in alternative %u", check,
              cdd_fix_kind_name(kind), cdd_fix_scope_name(scope), name,
              value ? value : "*", alt);
}

static void run(void)
{
    cdd_doctor_check(&s);
    CHECK_INT(s.err, 0);
}

/* ---- PATH and LD_LIBRARY_PATH ------------------------------------------- */

static void test_two_cudas_on_path(void)
{
    setup(0);
    int a = add_toolkit("/opt/cuda-12.4", 12, 4);
    int b = add_toolkit("/opt/cuda-11.8", 11, 8);
    add_entry(&s.path, "PATH", "/opt/cuda-12.4/bin", a);
    add_entry(&s.path, "PATH", "/usr/bin", -1);
    add_entry(&s.path, "PATH", "/opt/cuda-11.8/bin", b);
    run();
    expect("path PATH", CDD_CHECK_WARN,
           "2 CUDA versions on PATH: CUDA 12.4 comes first (#1)",
           "not those of CUDA 11.8 (#3)",
           "To use CUDA 11.8 instead: put /opt/cuda-11.8/bin first on PATH",
           NULL);
    expect_fix("path PATH", 0, CDD_FIX_PREPEND, CDD_FIX_SESSION, "PATH",
               "/opt/cuda-11.8/bin");
    expect_fix("path PATH", 1, CDD_FIX_PREPEND, CDD_FIX_USER, "PATH",
               "/opt/cuda-11.8/bin");
    CHECK_STR(find("path PATH")->fix.v[0].label, "to use CUDA 11.8 instead");
    teardown();

    /* One CUDA reached twice (bin and lib64 of one tree): no warning. */
    setup(0);
    a = add_toolkit("/opt/cuda-12.4", 12, 4);
    add_entry(&s.path, "PATH", "/opt/cuda-12.4/bin", a);
    add_entry(&s.path, "PATH", "/opt/cuda-12.4/nvvm/bin", a);
    run();
    expect("path PATH", CDD_CHECK_PASS, "CUDA 12.4 comes first", NULL);
    teardown();
}

/* With a CUDA target, the fix puts the target's entries first; on Windows
 * as `set PATH=...;%PATH%` with backslashes. */
static void test_two_cudas_target_windows(void)
{
    struct cdd_target t = {CDD_TARGET_CUDA, "C:/CUDA/v11.8", "--cuda-root",
                           {1, 11, 8, -1, "version.json"}, 0, 0, 0};
    setup(1);
    s.t = &t;
    s.t_windows = 1;
    cdd_dr_names_fill(s.t_names, 1);
    s.t_libdir = dup("C:/CUDA/v11.8/bin");
    s.t_libdir_real = dup("C:/CUDA/v11.8/bin");
    int a = add_toolkit("C:/CUDA/v12.4", 12, 4);
    int b = add_toolkit("C:/CUDA/v11.8", 11, 8);
    add_entry(&s.path, "PATH", "C:/CUDA/v12.4/bin", a);
    add_entry(&s.path, "PATH", "C:/CUDA/v11.8/bin", b);
    add_entry(&s.path, "PATH", "C:/CUDA/v11.8/libnvvp", b);
    run();
    expect("path PATH", CDD_CHECK_WARN,
           "To use CUDA 11.8 (the target's): "
           "put C:\\CUDA\\v11.8\\bin;C:\\CUDA\\v11.8\\libnvvp first on PATH",
           NULL);
    /* The machine's Path: it comes before the user's. */
    expect_fix("path PATH", 0, CDD_FIX_PREPEND, CDD_FIX_SESSION, "PATH",
               "C:\\CUDA\\v11.8\\bin;C:\\CUDA\\v11.8\\libnvvp");
    expect_fix("path PATH", 1, CDD_FIX_PREPEND, CDD_FIX_SYSTEM, "PATH",
               "C:\\CUDA\\v11.8\\bin;C:\\CUDA\\v11.8\\libnvvp");
    /* The target is reported first. */
    CHECK(res.checks.n > 0 && !strcmp(res.checks.v[0].name, "target"));
    teardown();

    /* The target's CUDA already first: the advice says so. */
    setup(1);
    s.t = &t;
    s.t_windows = 1;
    cdd_dr_names_fill(s.t_names, 1);
    s.t_libdir = dup("C:/CUDA/v11.8/bin");
    s.t_libdir_real = dup("C:/CUDA/v11.8/bin");
    b = add_toolkit("C:/CUDA/v11.8", 11, 8);
    a = add_toolkit("C:/CUDA/v12.4", 12, 4);
    add_entry(&s.path, "PATH", "C:/CUDA/v11.8/bin", b);
    add_entry(&s.path, "PATH", "C:/CUDA/v12.4/bin", a);
    run();
    expect("path PATH", CDD_CHECK_WARN,
           "The target's CUDA comes first, as it should", NULL);
    teardown();
}

static void test_path_vs_libpath(void)
{
    setup(0);
    int a = add_toolkit("/opt/cuda-12.4", 12, 4);
    int b = add_toolkit("/opt/cuda-11.8", 11, 8);
    add_entry(&s.path, "PATH", "/opt/cuda-12.4/bin", a);
    add_entry(&s.libpath, "LD_LIBRARY_PATH", "/opt/cuda-11.8/lib64", b);
    run();
    expect("path PATH vs LD_LIBRARY_PATH", CDD_CHECK_WARN,
           "the first CUDA on PATH is CUDA 12.4 but the first on "
           "LD_LIBRARY_PATH is CUDA 11.8",
           "put /opt/cuda-12.4/lib64 first on LD_LIBRARY_PATH", NULL);
    expect_fix("path PATH vs LD_LIBRARY_PATH", 0, CDD_FIX_PREPEND,
               CDD_FIX_SESSION, "LD_LIBRARY_PATH", "/opt/cuda-12.4/lib64");
    teardown();

    /* Both lists agree: no such check at all. */
    setup(0);
    a = add_toolkit("/opt/cuda-12.4", 12, 4);
    add_entry(&s.path, "PATH", "/opt/cuda-12.4/bin", a);
    add_entry(&s.libpath, "LD_LIBRARY_PATH", "/opt/cuda-12.4/lib64", a);
    run();
    CHECK(find("path PATH vs LD_LIBRARY_PATH") == NULL);
    expect("path LD_LIBRARY_PATH", CDD_CHECK_PASS, NULL);
    teardown();
}

/* ---- toolkits and variables ---------------------------------------------- */

static void test_toolkits_and_stale_vars(void)
{
    setup(0);
    run();
    expect("cuda", CDD_CHECK_SKIP, "no CUDA toolkit found", NULL);
    expect("path PATH", CDD_CHECK_SKIP, "PATH is not set", NULL);
    CHECK(find("env CUDA_PATH") == NULL);
    teardown();

    setup(1);
    int k = add_toolkit("C:/CUDA/v12.4", 12, 4);
    struct cdd_dr_stale st[2] = {
        {CDD_DR_STALE_NO_FOLDER, dup("CUDA_PATH"), dup("D:/gone"), 0, 0, -1},
        {CDD_DR_STALE_WRONG_VERSION, dup("CUDA_PATH_V12_1"),
         dup("C:/CUDA/v12.4"), 12, 1, k}};
    s.stale = malloc(sizeof st);
    if (!s.stale)
        abort();
    memcpy(s.stale, st, sizeof st);
    s.n_stale = 2;
    run();
    expect("env CUDA_PATH", CDD_CHECK_WARN,
           "CUDA_PATH=D:/gone names no folder",
           "delete it (System Properties > Environment Variables)",
           "CUDA_PATH_V12_1=C:/CUDA/v12.4 is a CUDA 12.4 tree, not 12.1",
           "`--cuda v12.1`", NULL);
    expect("cuda C:/CUDA/v12.4", CDD_CHECK_PASS, "CUDA 12.4 (from "
           "version.json)", "not on PATH", NULL);
    teardown();
}

static void test_cudnn_path(void)
{
    /* Windows: the loader ignores CUDNN_PATH; the fix is PATH. */
    setup(1);
    s.cudnn_path = dup("C:\\cudnn");
    s.cudnn_path_abs = dup("C:/cudnn");
    s.cudnn_path_is_dir = 1;
    s.cudnn_path_libdir = dup("C:/cudnn/bin");
    run();
    expect("env CUDNN_PATH", CDD_CHECK_WARN,
           "the Windows DLL loader ignores it",
           "put C:\\cudnn\\bin first on PATH", NULL);
    /* ...and, since PATH alone misleads Python >= 3.8, what torch,
     * onnxruntime and ctranslate2 need (windll.h, docs/windows.md). */
    expect("env CUDNN_PATH", CDD_CHECK_WARN,
           "Python 3.8+ does not search PATH",
           "os.add_dll_directory(r\"C:\\cudnn\\bin\")",
           "by full path with ctypes.CDLL",
           "onnxruntime.preload_dlls(directory=r\"C:\\cudnn\\bin\")",
           NULL);
    expect_fix("env CUDNN_PATH", 0, CDD_FIX_PREPEND, CDD_FIX_SESSION, "PATH",
               "C:\\cudnn\\bin");
    teardown();

    /* Its library folder is on PATH: what counts is right. */
    setup(1);
    s.cudnn_path = dup("C:\\cudnn");
    s.cudnn_path_abs = dup("C:/cudnn");
    s.cudnn_path_is_dir = 1;
    s.cudnn_path_libdir = dup("C:/cudnn/bin");
    s.cudnn_path_pos = 3;
    run();
    expect("env CUDNN_PATH", CDD_CHECK_PASS, "is on PATH (#3)", NULL);
    teardown();

    /* Linux: the fix is LD_LIBRARY_PATH or ld.so.conf.d. */
    setup(0);
    s.cudnn_path = dup("/opt/cudnn");
    s.cudnn_path_abs = dup("/opt/cudnn");
    s.cudnn_path_is_dir = 1;
    s.cudnn_path_libdir = dup("/opt/cudnn/lib");
    run();
    expect("env CUDNN_PATH", CDD_CHECK_WARN,
           "ignored by the dynamic loader",
           "add /opt/cudnn/lib to LD_LIBRARY_PATH, or system-wide to "
           "/etc/ld.so.conf.d", NULL);
    expect_fix("env CUDNN_PATH", 0, CDD_FIX_PREPEND, CDD_FIX_SESSION,
               "LD_LIBRARY_PATH", "/opt/cudnn/lib");
    expect_fix("env CUDNN_PATH", 1, CDD_FIX_WRITE, CDD_FIX_SYSTEM,
               "/etc/ld.so.conf.d/cudnn.conf", "/opt/cudnn/lib");
    expect_fix("env CUDNN_PATH", 1, CDD_FIX_RUN, CDD_FIX_SYSTEM, "ldconfig",
               NULL);
    teardown();

    setup(0);
    s.cudnn_path = dup("/gone");
    s.cudnn_path_abs = dup("/gone");
    run();
    expect("env CUDNN_PATH", CDD_CHECK_WARN, "CUDNN_PATH=/gone names no "
           "folder", NULL);
    teardown();

    setup(0);
    run();
    CHECK(find("env CUDNN_PATH") == NULL);
    teardown();
}

/* ---- the driver ---------------------------------------------------------- */

static void test_driver(void)
{
    setup(0);
    res.have_driver = 0;
    res.driver_cuda_version = 0;
    s.driver_rc = CDD_E_NOTFOUND;
    s.driver_path = strdup("libcuda.so.1");
    s.driver_msg = strdup("no NVIDIA driver: not on LD_LIBRARY_PATH");
    run();
    expect("driver", CDD_CHECK_SKIP,
           "no NVIDIA driver found (libcuda.so.1: not on LD_LIBRARY_PATH)",
           NULL);
    teardown();

    /* A driver for CUDA 11.4 cannot run the target's CUDA 12.4. */
    struct cdd_target t = {CDD_TARGET_CUDA, "/opt/cuda-12.4", "--cuda-root",
                           {1, 12, 4, -1, "version.json"}, 0, 0, 0};
    setup(0);
    s.t = &t;
    cdd_dr_names_fill(s.t_names, 0);
    s.t_libdir = dup("/opt/cuda-12.4/lib64");
    s.t_libdir_real = dup("/opt/cuda-12.4/lib64");
    res.driver_cuda_version = 11040;
    run();
    expect("driver", CDD_CHECK_FAIL, "supports CUDA up to 11.4",
           "cannot run the target's CUDA 12.4: update the NVIDIA driver",
           NULL);
    teardown();

    setup(0);
    s.t = &t;
    cdd_dr_names_fill(s.t_names, 0);
    s.t_libdir = dup("/opt/cuda-12.4/lib64");
    s.t_libdir_real = dup("/opt/cuda-12.4/lib64");
    run();
    expect("driver", CDD_CHECK_PASS, "the target's CUDA 12.4 runs", NULL);
    teardown();
}

/* ---- cuDNN on the search path -------------------------------------------- */

/* A winning libcudnn.so.8 in /usr/lib and its six sub-libraries, each the
 * version in vers[] (NULL: missing) and in the folder dirs[] (NULL: the
 * winner's). */
static void search_8(const char *const vers[6], const char *const dirs[6])
{
    set_winner(0, add_copy("libcudnn.so.8", "/usr/lib/libcudnn.so.8",
                           "8.9.7", CDD_COPY_SEARCH, "ld.so cache", 1));
    for (int i = 0; i < 6; i++) {
        const char *sub = cdd_cudnn_majors[0].subs[i].linux_name;
        char path[256];
        if (!vers[i])
            continue;
        snprintf(path, sizeof path, "%s/%s", dirs[i] ? dirs[i] : "/usr/lib",
                 sub);
        s.search[0].sub_first[i] =
            add_copy(sub, path, vers[i], CDD_COPY_SEARCH, "ld.so cache", 1);
    }
}

static void test_sub_libraries(void)
{
    static const char *const same[6] = {"8.9.7", "8.9.7", "8.9.7",
                                        "8.9.7", "8.9.7", "8.9.7"};
    static const char *const here[6] = {NULL};
    setup(0);
    search_8(same, here);
    run();
    expect("cudnn libcudnn.so.8", CDD_CHECK_PASS, "one copy", NULL);
    expect("cudnn libcudnn.so.8 sub-libraries", CDD_CHECK_PASS,
           "all 6 found beside the winner in /usr/lib, version 8.9.7", NULL);
    teardown();

    /* One of another version: cuDNN stops at first use. */
    static const char *const mixed[6] = {"8.5.0", "8.9.7", "8.9.7",
                                         "8.9.7", "8.9.7", "8.9.7"};
    setup(0);
    search_8(mixed, here);
    run();
    expect("cudnn libcudnn.so.8 sub-libraries", CDD_CHECK_FAIL,
           "1 of 6 would not match: libcudnn_ops_infer.so.8 is 8.5.0 "
           "(/usr/lib/libcudnn_ops_infer.so.8)",
           "install the whole archive of one version into one folder", NULL);
    teardown();

    static const char *const missing[6] = {"8.9.7", NULL,    "8.9.7",
                                           "8.9.7", "8.9.7", "8.9.7"};
    setup(0);
    search_8(missing, here);
    run();
    expect("cudnn libcudnn.so.8 sub-libraries", CDD_CHECK_FAIL,
           "libcudnn_ops_train.so.8 missing", NULL);
    teardown();

    /* The right version from another folder: a warning. */
    static const char *const other[6] = {NULL, NULL, NULL, NULL, NULL,
                                         "/opt/cudnn/lib"};
    setup(0);
    search_8(same, other);
    run();
    expect("cudnn libcudnn.so.8 sub-libraries", CDD_CHECK_WARN,
           "libcudnn_adv_train.so.8 from /opt/cudnn/lib/"
           "libcudnn_adv_train.so.8",
           NULL);
    teardown();
}

static void test_search_copies(void)
{
    /* Two copies of different versions: the fix puts the second's folder
     * first. */
    setup(0);
    set_winner(0, add_copy("libcudnn.so.8", "/a/lib/libcudnn.so.8", "8.5.0",
                           CDD_COPY_SEARCH, "LD_LIBRARY_PATH #1", 1));
    set_winner(0, add_copy("libcudnn.so.8", "/b/lib/libcudnn.so.8", "8.9.7",
                           CDD_COPY_SEARCH, "LD_LIBRARY_PATH #2", 2));
    run();
    expect("cudnn libcudnn.so.8", CDD_CHECK_WARN,
           "2 copies in the loader's order: 1) /a/lib/libcudnn.so.8 (8.5.0, "
           "LD_LIBRARY_PATH #1) <- the loader picks this one",
           "to get /b/lib/libcudnn.so.8 (8.9.7) instead: put /b/lib first "
           "on LD_LIBRARY_PATH",
           NULL);
    expect_fix("cudnn libcudnn.so.8", 0, CDD_FIX_PREPEND, CDD_FIX_SESSION,
               "LD_LIBRARY_PATH", "/b/lib");
    teardown();

    /* The same version twice: harmless, but one wins over the other, so a
     * warning the short output shows. */
    setup(0);
    set_winner(0, add_copy("libcudnn.so.8", "/a/lib/libcudnn.so.8", "8.9.7",
                           CDD_COPY_SEARCH, "LD_LIBRARY_PATH #1", 1));
    set_winner(0, add_copy("libcudnn.so.8", "/b/lib/libcudnn.so.8", "8.9.7.29",
                           CDD_COPY_SEARCH, "LD_LIBRARY_PATH #2", 2));
    run();
    expect("cudnn libcudnn.so.8", CDD_CHECK_WARN, "All the same version",
           NULL);
    teardown();

    /* None at all. */
    setup(0);
    run();
    expect("cudnn", CDD_CHECK_WARN, "no cuDNN (libcudnn.so.8, libcudnn.so.9) "
           "on the loader's search path", NULL);
    teardown();
}

/* ---- conda and Python packages ---------------------------------------------- */

static void conda_copy(const char *version, int is_target)
{
    int k = add_copy("libcudnn.so.8", "/home/u/conda/lib/libcudnn.so.8",
                     version, CDD_COPY_CONDA, "CONDA_PREFIX", 0);
    s.conda_prefix = dup("/home/u/conda");
    s.conda = calloc(1, sizeof *s.conda);
    if (!s.conda)
        abort();
    s.conda[0].m = 0;
    s.conda[0].k = k;
    s.conda[0].path = dup("/home/u/conda/lib/libcudnn.so.8");
    s.conda[0].is_target = is_target;
    s.n_conda = 1;
}

static void test_conda_shadow(void)
{
    static const char *const same[6] = {"8.9.7", "8.9.7", "8.9.7",
                                        "8.9.7", "8.9.7", "8.9.7"};
    static const char *const here[6] = {NULL};
    setup(0);
    search_8(same, here);
    conda_copy("8.2.0", 0);
    run();
    expect("conda libcudnn.so.8", CDD_CHECK_WARN,
           "the conda environment /home/u/conda (CONDA_PREFIX) has its own "
           "cuDNN 8.2.0",
           "shadows the loader's winner copy /usr/lib/libcudnn.so.8 (8.9.7)",
           "`conda remove cudnn`", "--prefix /home/u/conda", NULL);
    teardown();

    setup(0);
    search_8(same, here);
    conda_copy("8.9.7", 0);
    run();
    expect("conda libcudnn.so.8", CDD_CHECK_WARN,
           "the same version, so harmless", NULL);
    teardown();

    setup(0);
    search_8(same, here);
    conda_copy("8.2.0", 1);
    run();
    expect("conda libcudnn.so.8", CDD_CHECK_PASS, "is the target", NULL);
    teardown();
}

static void test_python_copy(void)
{
    static const char *const same[6] = {"8.9.7", "8.9.7", "8.9.7",
                                        "8.9.7", "8.9.7", "8.9.7"};
    static const char *const here[6] = {NULL};
    setup(0);
    search_8(same, here);
    int k = add_copy("libcudnn.so.8", "/venv/site/torch/lib/libcudnn.so.8",
                     "8.7.0", CDD_COPY_PYTHON, "torch (VIRTUAL_ENV)", 0);
    s.py = calloc(1, sizeof *s.py);
    if (!s.py)
        abort();
    s.py[0].m = 0;
    s.py[0].k = k;
    s.py[0].pkg = 0; /* torch */
    s.py[0].site = dup("/venv/site");
    s.py[0].origin = dup("VIRTUAL_ENV");
    s.py[0].dir = dup("/venv/site/torch/lib");
    s.n_py = 1;
    run();
    expect("python /venv/site/torch/lib", CDD_CHECK_WARN,
           "PyTorch in /venv/site (VIRTUAL_ENV) has its own cuDNN 8.7.0",
           "install the torch build made for it", NULL);
    teardown();
}

/* ---- Windows -------------------------------------------------------------- */

/* A winning cudnn64_N.dll of version v; zlibwapi.dll beside it or not. */
static void win_copy(int m, const char *v, int beside)
{
    const char *name = cdd_cudnn_majors[m].windows_main;
    char path[128];
    snprintf(path, sizeof path, "C:/cudnn/bin/%s", name);
    set_winner(m, add_copy(name, path, v, CDD_COPY_SEARCH, "PATH #1", 1));
    s.zlib_winner[m].looked = 1;
    if (beside)
        s.zlib_winner[m].beside = dup("C:/cudnn/bin/zlibwapi.dll");
}

static void test_zlibwapi(void)
{
    /* 8.3 to 9.1 import it. */
    static const struct {
        int m;
        const char *v;
        int need; /* 1 fail, 0 no check, -1 warn */
    } cases[] = {{0, "8.9.7", 1}, {0, "8.3.0", 1}, {0, "8.2.4", 0},
                 {1, "9.1.0", 1}, {1, "9.2.0", 0}, {0, "", -1},
                 {1, "", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setup(1);
        win_copy(cases[i].m, cases[i].v, 0);
        run();
        const struct cdd_check *c = find("windows.zlibwapi search path");
        if (!cases[i].need) {
            CHECK_MSG(c == NULL, "cuDNN '%s': %s", cases[i].v,
                      c ? c->detail : "");
        } else {
            CHECK_MSG(c != NULL, "cuDNN '%s': no zlibwapi check", cases[i].v);
            if (c) {
                CHECK_INT(c->status, cases[i].need > 0 ? CDD_CHECK_FAIL
                                                       : CDD_CHECK_WARN);
                CHECK(strstr(c->detail, "error 126") != NULL);
                CHECK(strstr(c->detail, "not beside it, in the system "
                                        "folders or on PATH") != NULL);
            }
        }
        teardown();
    }
    /* Beside the DLL: pass. */
    setup(1);
    win_copy(0, "8.9.7", 1);
    run();
    expect("windows.zlibwapi search path", CDD_CHECK_PASS,
           "found at C:/cudnn/bin/zlibwapi.dll", NULL);
    teardown();
    /* A Windows target checked from Linux: PATH cannot be searched. */
    struct cdd_target t = {CDD_TARGET_PREFIX, "/mnt/win/cudnn", "--prefix",
                           {0, 0, 0, -1, ""}, 0, 0, 0};
    setup(0);
    s.t = &t;
    s.t_windows = 1;
    cdd_dr_names_fill(s.t_names, 1);
    s.t_libdir = dup("/mnt/win/cudnn/bin");
    s.t_libdir_real = dup("/mnt/win/cudnn/bin");
    s.t_copy[0] = add_copy("cudnn64_8.dll", "/mnt/win/cudnn/bin/cudnn64_8.dll",
                           "8.9.7", CDD_COPY_TARGET, "target", 0);
    s.zlib_target[0].looked = 1;
    run();
    expect("windows.zlibwapi target", CDD_CHECK_FAIL,
           "a Windows tree: PATH cannot be searched from this host", NULL);
    expect("target.search", CDD_CHECK_SKIP, "a Windows tree", NULL);
    teardown();
}

static void test_vcruntime(void)
{
    setup(1);
    s.sysdir = dup("C:/Windows/System32");
    s.vc_missing[1] = 1;
    run();
    expect("windows.vcruntime", CDD_CHECK_FAIL,
           "vcruntime140.dll missing from C:/Windows/System32", NULL);
    teardown();

    setup(1);
    s.sysdir = dup("C:/Windows/System32");
    run();
    expect("windows.vcruntime", CDD_CHECK_PASS, "is in C:/Windows/System32",
           NULL);
    teardown();

    /* Not on a Linux host. */
    setup(0);
    s.sysdir = dup("C:/Windows/System32");
    s.vc_missing[0] = 1;
    run();
    CHECK(find("windows.vcruntime") == NULL);
    teardown();
}

/* ---- the target -------------------------------------------------------------- */

static void test_target_shadowed(void)
{
    struct cdd_target t = {CDD_TARGET_CUDA, "/opt/cuda-12.4", "--cuda-root",
                           {1, 12, 4, -1, "version.json"}, 0, 0, 0};
    setup(0);
    s.t = &t;
    cdd_dr_names_fill(s.t_names, 0);
    s.t_libdir = dup("/opt/cuda-12.4/lib64");
    s.t_libdir_real = dup("/opt/cuda-12.4/lib64");
    s.t_copy[0] = add_copy("libcudnn.so.8", "/opt/cuda-12.4/lib64/libcudnn.so.8",
                           "8.9.7", CDD_COPY_TARGET, "target", 0);
    set_winner(0, add_copy("libcudnn.so.8", "/usr/lib/libcudnn.so.8", "8.5.0",
                           CDD_COPY_SEARCH, "ld.so cache", 1));
    run();
    expect("target", CDD_CHECK_PASS, "CUDA 12.4 tree (from version.json) at "
           "/opt/cuda-12.4, from --cuda-root", "holds libcudnn.so.8 8.9.7 not "
           "installed by cudnn-deploy", NULL);
    expect("target.search", CDD_CHECK_WARN,
           "/opt/cuda-12.4/lib64 is not on the loader's search path",
           "add /opt/cuda-12.4/lib64 to LD_LIBRARY_PATH", NULL);
    expect_fix("target.search", 0, CDD_FIX_PREPEND, CDD_FIX_SESSION,
               "LD_LIBRARY_PATH", "/opt/cuda-12.4/lib64");
    expect_fix("target.shadow libcudnn.so.8", 0, CDD_FIX_PREPEND,
               CDD_FIX_SESSION, "LD_LIBRARY_PATH", "/opt/cuda-12.4/lib64");
    expect("target.shadow libcudnn.so.8", CDD_CHECK_WARN,
           "the loader picks /usr/lib/libcudnn.so.8 (8.5.0, ld.so cache), not "
           "the target's /opt/cuda-12.4/lib64/libcudnn.so.8 (8.9.7)",
           "which is not on the search path", "or remove "
           "/usr/lib/libcudnn.so.8", NULL);
    /* The order of the report: target first, its search and shadow last. */
    CHECK(!strcmp(res.checks.v[0].name, "target"));
    CHECK(!strcmp(res.checks.v[res.checks.n - 1].name,
                  "target.shadow libcudnn.so.8"));
    teardown();

    /* On the path and the winner: both pass. */
    setup(0);
    s.t = &t;
    cdd_dr_names_fill(s.t_names, 0);
    s.t_libdir = dup("/opt/cuda-12.4/lib64");
    s.t_libdir_real = dup("/opt/cuda-12.4/lib64");
    s.t_libdir_pos = 2;
    s.t_copy[0] = add_copy("libcudnn.so.8", "/opt/cuda-12.4/lib64/libcudnn.so.8",
                           "8.9.7", CDD_COPY_SEARCH, "LD_LIBRARY_PATH #2", 2);
    set_winner(0, s.t_copy[0]);
    run();
    expect("target.search", CDD_CHECK_PASS, "is on LD_LIBRARY_PATH (#2)",
           NULL);
    expect("target.shadow libcudnn.so.8", CDD_CHECK_PASS,
           "the loader picks the target's", NULL);
    teardown();

    /* An unreadable receipt: a warning on the target. */
    setup(0);
    s.t = &t;
    cdd_dr_names_fill(s.t_names, 0);
    s.t_libdir = dup("/opt/cuda-12.4/lib64");
    s.t_libdir_real = dup("/opt/cuda-12.4/lib64");
    s.rc_bad = 1;
    run();
    expect("target", CDD_CHECK_WARN, "cannot be read", NULL);
    teardown();
}

/* What a conda or Python copy is compared with: the target's copy when
 * there is one (of the host's platform), else the loader's winner, else
 * nothing. */
static void pip_copy(const char *version)
{
    int k = add_copy("libcudnn.so.9", "/venv/site/nvidia/cudnn/lib/"
                     "libcudnn.so.9", version, CDD_COPY_PYTHON,
                     "nvidia-cudnn (VIRTUAL_ENV)", 0);
    s.py = calloc(1, sizeof *s.py);
    if (!s.py)
        abort();
    s.py[0].m = 1;
    s.py[0].k = k;
    s.py[0].pkg = 1; /* nvidia-cudnn */
    s.py[0].site = dup("/venv/site");
    s.py[0].origin = dup("VIRTUAL_ENV");
    s.py[0].dir = dup("/venv/site/nvidia/cudnn/lib");
    s.n_py = 1;
}

static void test_shadow_reference(void)
{
    const char *name = "python /venv/site/nvidia/cudnn/lib";
    /* Nothing competes. */
    setup(0);
    pip_copy("9.1.0");
    run();
    expect(name, CDD_CHECK_PASS, "pip's nvidia-cudnn package in /venv/site",
           "Nothing on the search path competes with it", NULL);
    teardown();

    /* The loader's winner, of another version. */
    setup(0);
    set_winner(1, add_copy("libcudnn.so.9", "/usr/lib/libcudnn.so.9",
                           "9.14.0", CDD_COPY_SEARCH, "ld.so cache", 1));
    pip_copy("9.1.0");
    run();
    expect(name, CDD_CHECK_WARN, "shadows the loader's winner copy "
           "/usr/lib/libcudnn.so.9 (9.14.0)", "`pip install` the "
           "nvidia-cudnn version you want", NULL);
    teardown();

    /* With a target: its copy is the reference, not the winner. */
    struct cdd_target t = {CDD_TARGET_PREFIX, "/opt/p", "--prefix",
                           {0, 0, 0, -1, ""}, 0, 0, 0};
    setup(0);
    s.t = &t;
    cdd_dr_names_fill(s.t_names, 0);
    s.t_libdir = dup("/opt/p/lib");
    s.t_libdir_real = dup("/opt/p/lib");
    set_winner(1, add_copy("libcudnn.so.9", "/usr/lib/libcudnn.so.9",
                           "9.14.0", CDD_COPY_SEARCH, "ld.so cache", 1));
    s.t_copy[1] = add_copy("libcudnn.so.9", "/opt/p/lib/libcudnn.so.9",
                           "9.1.0", CDD_COPY_TARGET, "target", 0);
    pip_copy("9.1.0");
    run();
    expect(name, CDD_CHECK_WARN, "shadows the target's copy "
           "/opt/p/lib/libcudnn.so.9 (9.1.0): the same version", NULL);
    expect("target", CDD_CHECK_PASS, "prefix /opt/p (from --prefix)", NULL);
    teardown();

    /* The same file as the reference. */
    setup(0);
    set_winner(1, add_copy("libcudnn.so.9", "/venv/site/nvidia/cudnn/lib/"
                           "libcudnn.so.9", "9.1.0", CDD_COPY_SEARCH,
                           "LD_LIBRARY_PATH #1", 1));
    pip_copy("9.1.0");
    run();
    expect(name, CDD_CHECK_PASS, "the same file as the loader's winner copy",
           NULL);
    teardown();
}

static void test_toolkit_and_target_unknown(void)
{
    setup(0);
    int k = add_toolkit("/opt/cuda-x", 0, 0);
    add_entry(&s.path, "PATH", "/opt/cuda-x/bin", k);
    run();
    expect("cuda /opt/cuda-x", CDD_CHECK_WARN, "cannot tell which CUDA this "
           "is", "on PATH (#1), not on LD_LIBRARY_PATH", NULL);
    teardown();

    struct cdd_target t = {CDD_TARGET_CUDA, "/opt/cuda-x", "--cuda-root",
                           {0, 0, 0, -1, ""}, 0, 0, 0};
    setup(0);
    s.t = &t;
    cdd_dr_names_fill(s.t_names, 0);
    s.t_libdir = dup("/opt/cuda-x/lib64");
    s.t_libdir_real = dup("/opt/cuda-x/lib64");
    /* The target's copy is reached through the ld.so cache. */
    s.t_copy[0] = add_copy("libcudnn.so.8", "/opt/cuda-x/lib64/libcudnn.so.8",
                           "8.9.7", CDD_COPY_SEARCH, "ld.so cache", 1);
    set_winner(0, s.t_copy[0]);
    run();
    expect("target", CDD_CHECK_WARN, "of unknown version", NULL);
    expect("target.search", CDD_CHECK_PASS, "is searched by the loader (the "
           "ld.so cache", NULL);
    teardown();
}

/* ---- bounds ------------------------------------------------------------ */

/* A detail that would pass CDD_DR_TEXT_MAX is refused, not cut: the scan
 * keeps that first failure (CDD_E_TOOLONG naming the doctor detail), and a
 * later one does not replace it. */
static void test_detail_too_long(void)
{
    setup(0);
    size_t n = CDD_DR_TEXT_MAX + 16;
    char *dir = malloc(n + 1);
    if (!dir)
        abort();
    memset(dir, 'a', n);
    dir[0] = '/';
    dir[n] = '\0';
    int t = add_toolkit("/opt/cuda-12.4", 12, 4);
    add_entry(&s.path, "PATH", dir, t);
    free(dir);
    cdd_doctor_check(&s);
    CHECK_INT(s.err, CDD_E_TOOLONG);
    CHECK_INT(s.err_save.info.code, CDD_E_TOOLONG);
    CHECK_MSG(strstr(s.err_save.info.msg, "doctor detail") != NULL,
              "first failure: %s", s.err_save.info.msg);
    CHECK_INT(cdd_dr_fail(&s, cdd_fail(CDD_E_NOMEM, NULL, 0, "later")),
              CDD_E_NOMEM);
    CHECK_INT(s.err, CDD_E_TOOLONG);
    CHECK(strstr(s.err_save.info.msg, "doctor detail") != NULL);
    cdd_clear_error();
    teardown();

    /* Just under the bound: whole. */
    setup(0);
    struct cdd_sb b;
    CDD_DR_TEXT_INIT(&b);
    for (size_t i = 0; i < CDD_DR_TEXT_MAX / 64; i++)
        cdd_sb_catf(&b, "%064d", 0);
    CHECK(cdd_dr_text_ok(&s, &b));
    cdd_sb_catf(&b, "%0*d", (int)(CDD_DR_TEXT_MAX % 64) + 1, 0);
    CHECK(!cdd_dr_text_ok(&s, &b));
    CHECK_INT(s.err, CDD_E_TOOLONG);
    CHECK_INT(cdd_sb_len(&b), CDD_DR_TEXT_MAX / 64 * 64);
    cdd_sb_free(&b);
    cdd_clear_error();
    teardown();
}

TEST_MAIN(TEST(test_two_cudas_on_path), TEST(test_two_cudas_target_windows),
          TEST(test_path_vs_libpath), TEST(test_toolkits_and_stale_vars),
          TEST(test_cudnn_path), TEST(test_driver), TEST(test_sub_libraries),
          TEST(test_search_copies), TEST(test_conda_shadow),
          TEST(test_python_copy), TEST(test_zlibwapi), TEST(test_vcruntime),
          TEST(test_target_shadowed), TEST(test_shadow_reference),
          TEST(test_toolkit_and_target_unknown), TEST(test_detail_too_long))
