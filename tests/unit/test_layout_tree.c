/* Layout mapping, CUDA version parsing and target refusals. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdd/cudatree.h"
#include "cdd/error.h"
#include "cdd/layout.h"
#include "cdd/tree.h"
#include "fixture.h"
#include "test.h"

static void layout_mapping(void)
{
    static const struct {
        enum cdd_target_kind kind;
        enum cdd_platform plat;
        enum cdd_role role;
        const char *src, *dest;
    } rows[] = {
        {CDD_TARGET_CUDA, CDD_PLATFORM_WINDOWS_X86_64, CDD_ROLE_RUNTIME,
         "bin/cudnn64_8.dll", "bin/cudnn64_8.dll"},
        {CDD_TARGET_CUDA, CDD_PLATFORM_WINDOWS_X86_64, CDD_ROLE_IMPORT_LIB,
         "lib/x64/cudnn.lib", "lib/x64/cudnn.lib"},
        {CDD_TARGET_CUDA, CDD_PLATFORM_WINDOWS_X86_64, CDD_ROLE_HEADER,
         "include/cudnn.h", "include/cudnn.h"},
        {CDD_TARGET_CUDA, CDD_PLATFORM_WINDOWS_X86_64, CDD_ROLE_LICENSE,
         "LICENSE", "doc/cudnn/LICENSE"},
        {CDD_TARGET_CUDA, CDD_PLATFORM_LINUX_X86_64, CDD_ROLE_RUNTIME,
         "lib/libcudnn.so.8.5.0", "lib64/libcudnn.so.8.5.0"},
        {CDD_TARGET_CUDA, CDD_PLATFORM_LINUX_X86_64, CDD_ROLE_STATIC_LIB,
         "lib/libcudnn_ops_infer_static.a", "lib64/libcudnn_ops_infer_static.a"},
        {CDD_TARGET_CUDA, CDD_PLATFORM_LINUX_X86_64, CDD_ROLE_LICENSE,
         "LICENSE", "share/doc/cudnn/LICENSE"},
        {CDD_TARGET_PREFIX, CDD_PLATFORM_WINDOWS_X86_64, CDD_ROLE_RUNTIME,
         "bin/cudnn64_8.dll", "Library/bin/cudnn64_8.dll"},
        {CDD_TARGET_PREFIX, CDD_PLATFORM_WINDOWS_X86_64, CDD_ROLE_IMPORT_LIB,
         "lib/x64/cudnn.lib", "Library/lib/cudnn.lib"},
        {CDD_TARGET_PREFIX, CDD_PLATFORM_WINDOWS_X86_64, CDD_ROLE_HEADER,
         "include/cudnn.h", "Library/include/cudnn.h"},
        {CDD_TARGET_PREFIX, CDD_PLATFORM_LINUX_X86_64, CDD_ROLE_RUNTIME,
         "lib/libcudnn.so.8.5.0", "lib/libcudnn.so.8.5.0"},
        {CDD_TARGET_PREFIX, CDD_PLATFORM_LINUX_X86_64, CDD_ROLE_HEADER,
         "include/cudnn_version.h", "include/cudnn_version.h"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        enum cdd_layout_id id = cdd_layout_select(rows[i].kind, rows[i].plat);
        char *dest = NULL;
        CHECK_INT(cdd_layout_dest(id, rows[i].role, rows[i].src, &dest), 0);
        CHECK_STR(dest, rows[i].dest);
        free(dest);
    }
    char *dest = NULL;
    enum cdd_layout_id lin =
        cdd_layout_select(CDD_TARGET_CUDA, CDD_PLATFORM_LINUX_X86_64);
    CHECK_INT(cdd_layout_dest(lin, CDD_ROLE_IMPORT_LIB, "lib/x64/a.lib", &dest),
              CDD_E_MANIFEST);
    CHECK(dest == NULL);
    CHECK(cdd_layout_case_insensitive(
        cdd_layout_select(CDD_TARGET_CUDA, CDD_PLATFORM_WINDOWS_X86_64)));
    CHECK(!cdd_layout_case_insensitive(lin));
    CHECK(cdd_layout_dir(CDD_LAYOUT_PREFIX_WINDOWS, CDD_ROLE_SYMLINK) == NULL);
    /* A symlink has no folder of its own: it goes beside its target. */
    CHECK(cdd_layout_dir(lin, CDD_ROLE_SYMLINK) == NULL);
    CHECK_INT(cdd_layout_dest(lin, CDD_ROLE_SYMLINK, "lib/libcudnn.so", &dest),
              CDD_E_MANIFEST);
}

/* A symlink lands where the entry its chain ends at lands: listed entries
 * by their role, unlisted names by the path rules. */
static void link_placement(void)
{
    static const char doc[] =
        "{\"schema_version\": 1, \"product\": \"cudnn\", \"version\": "
        "\"8.9.7.29\", \"cuda_major\": 12, \"platform\": \"linux-x86_64\", "
        "\"archive\": {\"filename\": \"a.tar.xz\", \"sha256\": null, "
        "\"size\": null, \"strip_components\": 1}, \"files_exact\": false, "
        "\"files\": ["
        "{\"path\": \"include/cudnn.h\", \"role\": \"header\", "
        "\"sha256\": null, \"size\": null},"
        "{\"path\": \"include/cudnn_v8.h\", \"role\": \"symlink\", "
        "\"target\": \"cudnn.h\"},"
        "{\"path\": \"lib/libcudnn_ops_infer_static.a\", \"role\": "
        "\"static_lib\", \"sha256\": null, \"size\": null},"
        "{\"path\": \"lib/libcudnn_ops_infer_static_v8.a\", \"role\": "
        "\"symlink\", \"target\": \"libcudnn_ops_infer_static.a\"},"
        "{\"path\": \"lib/libcudnn.so.8.9.7\", \"role\": \"runtime\", "
        "\"sha256\": null, \"size\": null},"
        "{\"path\": \"lib/libcudnn.so.8\", \"role\": \"symlink\", "
        "\"target\": \"libcudnn.so.8.9.7\"},"
        "{\"path\": \"lib/libcudnn.so\", \"role\": \"symlink\", "
        "\"target\": \"libcudnn.so.8\"}]}";
    static const struct {
        enum cdd_target_kind kind;
        const char *src, *target, *dest;
        int role; /* the link role wanted; -1: not placed */
    } rows[] = {
        {CDD_TARGET_CUDA, "include/cudnn_v8.h", "cudnn.h",
         "include/cudnn_v8.h", CDD_ROLE_HEADER},
        {CDD_TARGET_CUDA, "lib/libcudnn_ops_infer_static_v8.a",
         "libcudnn_ops_infer_static.a", "lib64/libcudnn_ops_infer_static_v8.a",
         CDD_ROLE_STATIC_LIB},
        {CDD_TARGET_CUDA, "lib/libcudnn.so", "libcudnn.so.8",
         "lib64/libcudnn.so", CDD_ROLE_RUNTIME},
        {CDD_TARGET_PREFIX, "lib/libcudnn.so.8", "libcudnn.so.8.9.7",
         "lib/libcudnn.so.8", CDD_ROLE_RUNTIME},
        {CDD_TARGET_PREFIX, "include/cudnn_v8.h", "cudnn.h",
         "include/cudnn_v8.h", CDD_ROLE_HEADER},
        /* unlisted names: the path rules of the target's name */
        {CDD_TARGET_CUDA, "lib/libcudnn_cnn_train_static_v8.a",
         "libcudnn_cnn_train_static.a", "lib64/libcudnn_cnn_train_static_v8.a",
         CDD_ROLE_STATIC_LIB},
        {CDD_TARGET_CUDA, "include/cudnn_ops_train_v8.h", "cudnn_ops_train.h",
         "include/cudnn_ops_train_v8.h", CDD_ROLE_HEADER},
        {CDD_TARGET_CUDA, "include/cudnn_x.h", "README", NULL, -1},
        {CDD_TARGET_CUDA, "lib/sub/libx.so", "libx.so.1", NULL, -1},
    };
    struct cdd_manifest *m = NULL;
    CHECK_INT(cdd_manifest_parse(doc, sizeof doc - 1, "links.json", &m), 0);
    for (size_t i = 0; m && i < sizeof rows / sizeof rows[0]; i++) {
        enum cdd_layout_id id =
            cdd_layout_select(rows[i].kind, CDD_PLATFORM_LINUX_X86_64);
        enum cdd_role role = CDD_ROLE_COUNT;
        char *dest = NULL;
        int r = cdd_layout_link_role(m, rows[i].src, rows[i].target, &role);
        CHECK_MSG(rows[i].role < 0 ? r == -1 : r == 0 && (int)role == rows[i].role,
                  "%s: r %d role %d", rows[i].src, r, (int)role);
        r = cdd_layout_entry_dest(id, m, CDD_ROLE_SYMLINK, rows[i].src,
                                  rows[i].target, &dest);
        if (rows[i].dest) {
            CHECK_INT(r, 0);
            CHECK_STR(dest, rows[i].dest);
        } else {
            CHECK_INT(r, CDD_E_MANIFEST);
            CHECK(dest == NULL);
        }
        free(dest);
    }
    /* non-symlinks go by their own role */
    char *dest = NULL;
    CHECK_INT(cdd_layout_entry_dest(CDD_LAYOUT_CUDA_LINUX, m, CDD_ROLE_HEADER,
                                    "include/cudnn.h", NULL, &dest), 0);
    CHECK_STR(dest, "include/cudnn.h");
    free(dest);
    /* no symlinks in a Windows manifest, whatever it lists */
    if (m)
        m->platform = CDD_PLATFORM_WINDOWS_X86_64;
    enum cdd_role role;
    CHECK_INT(cdd_layout_link_role(m, "include/cudnn_v8.h", "cudnn.h", &role),
              -1);
    cdd_manifest_free(m);
}

static void cuda_arg(void)
{
    int a, b;
    CHECK_INT(cdd_cuda_arg_parse("v11.6", &a, &b), 0);
    CHECK_INT(a, 11);
    CHECK_INT(b, 6);
    CHECK_INT(cdd_cuda_arg_parse("12.10", &a, &b), 0);
    CHECK_INT(b, 10);
    CHECK_INT(cdd_cuda_arg_parse("V9.2", &a, &b), 0);
    const char *bad[] = {"", "v", "11", "v11.", "11.6.2", "x11.6", "v11.6x",
                         "-1.2", "v0.1", "v100.1", "11..6", " 11.6"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(cdd_cuda_arg_parse(bad[i], &a, &b) == CDD_E_USAGE, "%s",
                  bad[i]);
}

static void version_files(void)
{
    struct cdd_cuda_version v = {0};
    const char *js = "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": "
                     "\"11.6.2\"}, \"cuda_cudart\": {\"version\": \"11.6.55\"}}";
    CHECK_INT(cdd_cuda_version_parse_json(js, strlen(js), &v), 0);
    CHECK_INT(v.major, 11);
    CHECK_INT(v.minor, 6);
    CHECK_INT(v.patch, 2);
    CHECK_STR(v.source, "version.json");
    const char *js2 = "{\"cuda\": {\"version\": \"12.1\"}}";
    CHECK_INT(cdd_cuda_version_parse_json(js2, strlen(js2), &v), 0);
    CHECK_INT(v.major, 12);
    CHECK_INT(v.patch, -1);
    const char *badjs[] = {"{", "[]", "{\"cuda\": 1}", "{\"cuda\": {\"version\": 11}}",
                           "{\"cuda\": {\"version\": \"abc\"}}"};
    for (size_t i = 0; i < sizeof badjs / sizeof badjs[0]; i++)
        CHECK(cdd_cuda_version_parse_json(badjs[i], strlen(badjs[i]), &v) != 0);
    memset(&v, 0, sizeof v);
    CHECK_INT(cdd_cuda_version_parse_txt("CUDA Version 11.6.124\n", &v), 0);
    CHECK_INT(v.major, 11);
    CHECK_INT(v.minor, 6);
    CHECK_INT(cdd_cuda_version_parse_txt("CUDA 11.6\n", &v), -1);
    memset(&v, 0, sizeof v);
    CHECK_INT(cdd_cuda_version_parse_header(
                  "/* x */\n#define CUDA_VERSION_MAJOR 9\n#define  CUDA_VERSION 11060\n",
                  &v),
              0);
    CHECK_INT(v.major, 11);
    CHECK_INT(v.minor, 6);
    CHECK_INT(cdd_cuda_version_parse_header("#define CUDA_VERSION 12080", &v), 0);
    CHECK_INT(v.minor, 8);
    CHECK_INT(cdd_cuda_version_parse_header("#define CUDA_VERSIONX 1", &v), -1);
}

static void resolve_and_check(void)
{
    struct cdd_target t;
    struct cdd_tree *tr = NULL;
    const char *root = fx_scratch("cuda-11.6");
    struct cdd_target_spec spec = {.cuda_root = root};
    CHECK_INT(fx_put(root, "version.txt", "CUDA Version 11.6.124\n"), 0);
    CHECK_INT(cdd_target_open(&spec, &t, &tr), 0);
    CHECK(t.version.known);
    CHECK_INT(t.version.major, 11);
    CHECK_INT(cdd_target_check(&t, tr, 11, 0), 0);
    CHECK_INT(cdd_target_check(&t, tr, 12, 0), CDD_E_VERSION);
    CHECK(strstr(cdd_last_error()->msg, "CUDA 11.6") != NULL);
    CHECK(strstr(cdd_last_error()->msg, "CUDA 12.x") != NULL);
    CHECK_INT(cdd_target_check(&t, tr, 12, 1), 0);
    cdd_tree_close(tr);
    cdd_target_clear(&t);

    /* version.json wins over version.txt */
    CHECK_INT(fx_put(root, "version.json", "{\"cuda\":{\"version\":\"12.1.0\"}}"), 0);
    CHECK_INT(cdd_target_resolve(&spec, &t), 0);
    CHECK_INT(t.version.major, 12);
    cdd_target_clear(&t);
    /* a damaged version.json is named, not silently skipped */
    CHECK_INT(fx_put(root, "version.json", "not json"), 0);
    CHECK_INT(cdd_target_resolve(&spec, &t), CDD_E_STATE);

    const char *bare = fx_scratch("bare");
    struct cdd_target_spec s2 = {.cuda_root = bare};
    CHECK_INT(cdd_target_open(&s2, &t, &tr), 0);
    CHECK(!t.version.known);
    CHECK_INT(cdd_target_check(&t, tr, 11, 0), CDD_E_VERSION);
    CHECK_INT(cdd_target_check(&t, tr, 11, 1), 0);
    cdd_tree_close(tr);
    cdd_target_clear(&t);

    const char *pkg = fx_scratch("venv");
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/site-packages", pkg);
    mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/site-packages/torch", pkg);
    mkdir(sub, 0755);
    struct cdd_target_spec s3 = {.prefix = sub};
    CHECK_INT(cdd_target_open(&s3, &t, &tr), 0);
    CHECK_INT(cdd_target_check(&t, tr, 11, 1), CDD_E_TARGET);
    cdd_tree_close(tr);
    cdd_target_clear(&t);
    /* Reached through a link named elsewhere: the tree's own root (as
     * opened) is in the package, and that is what counts. */
    char link[4200];
    snprintf(link, sizeof link, "%s/torch-link", fx_scratch("elsewhere"));
    CHECK(symlink(sub, link) == 0);
    struct cdd_target_spec s4 = {.prefix = link};
    CHECK_INT(cdd_target_open(&s4, &t, &tr), 0);
    CHECK_INT(cdd_target_check(&t, tr, 11, 1), CDD_E_TARGET);
    cdd_tree_close(tr);
    cdd_target_clear(&t);

    struct cdd_target_spec none = {0};
    CHECK_INT(cdd_target_resolve(&none, &t), CDD_E_USAGE);
    struct cdd_target_spec two = {.cuda_root = root, .prefix = root};
    CHECK_INT(cdd_target_resolve(&two, &t), CDD_E_USAGE);
    struct cdd_target_spec missing = {.cuda_root = "/nonexistent/cuda-11.6"};
    CHECK_INT(cdd_target_resolve(&missing, &t), CDD_E_NOTFOUND);

    setenv("CUDA_PATH_V11_6", bare, 1);
    struct cdd_target_spec byenv = {.cuda = "v11.6"};
    CHECK_INT(cdd_target_resolve(&byenv, &t), 0);
    CHECK_STR(t.how, "CUDA_PATH_V11_6");
    cdd_target_clear(&t);
    unsetenv("CUDA_PATH_V11_6");
    struct cdd_target_spec v99 = {.cuda = "v99.9"};
    CHECK_INT(cdd_target_resolve(&v99, &t), CDD_E_NOTFOUND);
    CHECK(strstr(cdd_last_error()->msg, "CUDA_PATH_V99_9") != NULL);
}

/* --cuda v11.6 through CUDA_PATH_V11_6 naming a tree of another version. */
static void version_differs(void)
{
    struct cdd_target t;
    const char *other = fx_scratch("cuda-11.5");
    CHECK_INT(fx_put(other, "version.json", "{\"cuda\":{\"version\":\"11.5.2\"}}"), 0);
    setenv("CUDA_PATH_V11_6", other, 1);
    struct cdd_target_spec byenv = {.cuda = "v11.6"};
    CHECK_INT(cdd_target_resolve(&byenv, &t), 0);
    CHECK_INT(t.asked, 1);
    CHECK_INT(t.asked_major, 11);
    CHECK_INT(t.asked_minor, 6);
    CHECK(cdd_target_version_differs(&t));
    cdd_target_clear(&t);
    /* the same tree asked for as what it is */
    setenv("CUDA_PATH_V11_5", other, 1);
    struct cdd_target_spec same = {.cuda = "11.5"};
    CHECK_INT(cdd_target_resolve(&same, &t), 0);
    CHECK(!cdd_target_version_differs(&t));
    cdd_target_clear(&t);
    unsetenv("CUDA_PATH_V11_5");
    /* --cuda-root asks for no version; a tree of unknown version says
     * nothing either */
    struct cdd_target_spec root = {.cuda_root = other};
    CHECK_INT(cdd_target_resolve(&root, &t), 0);
    CHECK(!cdd_target_version_differs(&t));
    cdd_target_clear(&t);
    const char *bare = fx_scratch("bare2");
    setenv("CUDA_PATH_V11_6", bare, 1);
    CHECK_INT(cdd_target_resolve(&byenv, &t), 0);
    CHECK(!cdd_target_version_differs(&t));
    cdd_target_clear(&t);
    unsetenv("CUDA_PATH_V11_6");
}

/* Which layout a tree has, by what is in it. */
static void layout_platform(void)
{
    static const struct {
        const char *name;
        const char *dirs[3];
        const char *files[2];
        int want; /* platform, or -1 */
    } rows[] = {
        {"win-cuda", {"lib", "lib/x64", "bin"}, {"bin/nvcc.exe", NULL},
         CDD_PLATFORM_WINDOWS_X86_64},
        {"win-cudnn", {"bin", NULL, NULL}, {"bin/cudnn64_8.dll", NULL},
         CDD_PLATFORM_WINDOWS_X86_64},
        {"conda-win", {"Library", "Library/bin", NULL}, {NULL, NULL},
         CDD_PLATFORM_WINDOWS_X86_64},
        {"lin-cuda", {"lib64", "bin", NULL}, {"bin/nvcc", NULL},
         CDD_PLATFORM_LINUX_X86_64},
        {"lin-prefix", {"lib", NULL, NULL}, {"lib/libcudnn.so.9", NULL},
         CDD_PLATFORM_LINUX_X86_64},
        {"empty", {NULL, NULL, NULL}, {NULL, NULL}, -1},
        {"both", {"lib64", "lib", "lib/x64"}, {NULL, NULL}, -1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *root = fx_scratch(rows[i].name);
        char p[4200];
        for (size_t k = 0; k < 3 && rows[i].dirs[k]; k++) {
            snprintf(p, sizeof p, "%s/%s", root, rows[i].dirs[k]);
            CHECK(mkdir(p, 0755) == 0);
        }
        for (size_t k = 0; k < 2 && rows[i].files[k]; k++)
            CHECK_INT(fx_put(root, rows[i].files[k], "x"), 0);
        struct cdd_tree *tree = NULL;
        CHECK_INT(cdd_tree_open(root, &tree), 0);
        enum cdd_platform got = CDD_PLATFORM_COUNT;
        int r = cdd_target_layout_platform(tree, &got);
        cdd_tree_close(tree);
        if (rows[i].want < 0)
            CHECK_MSG(r == -1, "%s: %d", rows[i].name, r);
        else
            CHECK_MSG(r == 0 && (int)got == rows[i].want, "%s: r %d got %d",
                      rows[i].name, r, (int)got);
    }
    /* a Linux lib64 that is a link into targets/ counts */
    const char *root = fx_scratch("lin-links");
    char p[4200], q[4200];
    snprintf(p, sizeof p, "%s/targets", root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/targets/x86_64-linux", root);
    mkdir(p, 0755);
    snprintf(q, sizeof q, "%s/lib64", root);
    CHECK(symlink("targets/x86_64-linux/lib", q) == 0);
    struct cdd_tree *tree = NULL;
    CHECK_INT(cdd_tree_open(root, &tree), 0);
    enum cdd_platform got;
    CHECK_INT(cdd_target_layout_platform(tree, &got), 0);
    CHECK_INT(got, CDD_PLATFORM_LINUX_X86_64);
    cdd_tree_close(tree);
}

static void platforms(void)
{
    static const char *const names[] = {"windows-x86_64", "linux-x86_64",
                                        "linux-sbsa", "linux-aarch64",
                                        "windows-arm64"};
    enum cdd_platform p;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK_INT(cdd_platform_parse(names[i], &p), 0);
        CHECK_STR(cdd_platform_name(p), names[i]);
        CHECK(strstr(cdd_platform_names(), names[i]) != NULL);
    }
    CHECK_INT(cdd_platform_parse("linux-ppc64le", &p), -1);
    CHECK(cdd_platform_is_windows(CDD_PLATFORM_WINDOWS_ARM64));
    CHECK(!cdd_platform_is_windows(CDD_PLATFORM_LINUX_SBSA));
    CHECK_INT(cdd_platform_machine(CDD_PLATFORM_LINUX_SBSA), CDD_MACHINE_AARCH64);
    CHECK_INT(cdd_platform_machine(CDD_PLATFORM_LINUX_AARCH64),
              CDD_MACHINE_AARCH64);
    CHECK_INT(cdd_platform_machine(CDD_PLATFORM_WINDOWS_ARM64),
              CDD_MACHINE_AARCH64);
    CHECK_INT(cdd_platform_machine(CDD_PLATFORM_WINDOWS_X86_64),
              CDD_MACHINE_X86_64);
    CHECK_INT(cdd_machine_elf(CDD_MACHINE_AARCH64), 183);
    CHECK_INT(cdd_machine_elf(CDD_MACHINE_X86_64), 62);
    CHECK_INT(cdd_machine_pe(CDD_MACHINE_AARCH64), 0xaa64);
    CHECK_INT(cdd_machine_pe(CDD_MACHINE_X86_64), 0x8664);
    /* NVIDIA's file names: a whole part of the name, never a piece. */
    CHECK_INT(cdd_platform_from_name(
                  "cudnn-linux-sbsa-9.8.0.87_cuda12-archive.tar.xz", &p), 0);
    CHECK_INT(p, CDD_PLATFORM_LINUX_SBSA);
    CHECK_INT(cdd_platform_from_name(
                  "cudnn-windows-arm64-9.27.0.42_cuda13.4-archive.zip", &p), 0);
    CHECK_INT(p, CDD_PLATFORM_WINDOWS_ARM64);
    CHECK_INT(cdd_platform_from_name(
                  "cudnn-windows-x86_64-8.5.0.96_cuda11-archive.zip", &p), 0);
    CHECK_INT(p, CDD_PLATFORM_WINDOWS_X86_64);
    CHECK_INT(cdd_platform_from_name("cudnn-9.8.0.87_cuda12.tar.xz", &p), -1);
    CHECK_INT(cdd_platform_from_name("xlinux-sbsax-9.tar.xz", &p), -1);
    CHECK_INT(cdd_platform_from_name("linux-sbsa-linux-aarch64.tar", &p), -1);
    /* cuDNN 9.23's bin/x64 DLLs are runtime libraries; deeper is not. */
    enum cdd_role role;
    CHECK_INT(cdd_role_from_path(CDD_PLATFORM_WINDOWS_X86_64,
                                 "bin/x64/cudnn64_9.dll", 0, &role), 0);
    CHECK_INT(role, CDD_ROLE_RUNTIME);
    CHECK_INT(cdd_role_from_path(CDD_PLATFORM_WINDOWS_ARM64,
                                 "bin/x64/cudnn64_9.dll", 0, &role), 0);
    CHECK_INT(cdd_role_from_path(CDD_PLATFORM_WINDOWS_X86_64,
                                 "bin/x64/y/cudnn64_9.dll", 0, &role), -1);
    CHECK_INT(cdd_role_from_path(CDD_PLATFORM_LINUX_SBSA,
                                 "lib/libcudnn.so.9.8.0", 0, &role), 0);
    CHECK_INT(role, CDD_ROLE_RUNTIME);
    enum cdd_layout_id id;
    CHECK_INT(cdd_layout_parse("cuda-windows-x64", &id), 0);
    CHECK_INT(id, CDD_LAYOUT_CUDA_WINDOWS_X64);
    CHECK_STR(cdd_layout_dir(id, CDD_ROLE_RUNTIME), "bin/x64");
    CHECK_INT(cdd_layout_parse("cuda-windows-x86", &id), -1);
}

/* A Windows CUDA tree's DLL folder: where its cudart lives, else its
 * major's default. */
static void choose_layout(void)
{
    static const struct {
        const char *name, *cudart; /* NULL: none */
        int tree_major;
        enum cdd_layout_id want;
    } rows[] = {
        {"c12-bin", "bin/cudart64_12.dll", 12, CDD_LAYOUT_CUDA_WINDOWS},
        {"c13-x64", "bin/x64/cudart64_13.dll", 13, CDD_LAYOUT_CUDA_WINDOWS_X64},
        {"c13-upper", "bin/x64/CUDART64_13.DLL", 13,
         CDD_LAYOUT_CUDA_WINDOWS_X64},
        {"c13-bin", "bin/cudart64_13.dll", 13, CDD_LAYOUT_CUDA_WINDOWS},
        {"c13-none", NULL, 13, CDD_LAYOUT_CUDA_WINDOWS_X64},
        {"c12-none", NULL, 12, CDD_LAYOUT_CUDA_WINDOWS},
    };
    struct cdd_manifest m = {0};
    m.platform = CDD_PLATFORM_WINDOWS_X86_64;
    m.cuda_major = 12;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *root = fx_scratch(rows[i].name);
        char p[4200];
        snprintf(p, sizeof p, "%s/bin", root);
        CHECK(mkdir(p, 0755) == 0);
        snprintf(p, sizeof p, "%s/bin/x64", root);
        CHECK(mkdir(p, 0755) == 0);
        if (rows[i].cudart)
            CHECK_INT(fx_put(root, rows[i].cudart, "MZ"), 0);
        struct cdd_target t = {0};
        t.kind = CDD_TARGET_CUDA;
        t.version.known = 1;
        t.version.major = rows[i].tree_major;
        const char *why = NULL;
        struct cdd_tree *tree = NULL;
        CHECK_INT(cdd_tree_open(root, &tree), 0);
        CHECK_MSG(cdd_target_choose_layout(&t, tree, &m, &why) ==
                      rows[i].want,
                  "%s", rows[i].name);
        cdd_tree_close(tree);
        CHECK(why != NULL);
        if (!rows[i].cudart)
            CHECK_MSG(why && strstr(why, "default"), "%s: %s", rows[i].name,
                      why ? why : "");
    }
    /* Linux and prefixes: the platform's layout, whatever is in the tree. */
    struct cdd_target t = {0};
    const char *why;
    struct cdd_tree *empty = NULL;
    CHECK_INT(cdd_tree_open(fx_scratch("linux-any"), &empty), 0);
    m.platform = CDD_PLATFORM_LINUX_SBSA;
    CHECK_INT(cdd_target_choose_layout(&t, empty, &m, &why),
              CDD_LAYOUT_CUDA_LINUX);
    t.kind = CDD_TARGET_PREFIX;
    m.platform = CDD_PLATFORM_WINDOWS_ARM64;
    CHECK_INT(cdd_target_choose_layout(&t, empty, &m, &why),
              CDD_LAYOUT_PREFIX_WINDOWS);
    cdd_tree_close(empty);
    /* A foreign machine only with --platform naming the archive's. */
    CHECK_INT(cdd_target_check_platform(cdd_platform_host(), 0,
                                        CDD_PLATFORM_COUNT), 0);
    enum cdd_platform other = cdd_host_machine() == CDD_MACHINE_X86_64
                                  ? CDD_PLATFORM_LINUX_SBSA
                                  : CDD_PLATFORM_LINUX_X86_64;
    CHECK_INT(cdd_target_check_platform(other, 0, CDD_PLATFORM_COUNT),
              CDD_E_TARGET);
    CHECK_INT(cdd_target_check_platform(other, 1, other), 0);
    CHECK_INT(cdd_target_check_platform(other, 1, CDD_PLATFORM_LINUX_AARCH64),
              other == CDD_PLATFORM_LINUX_AARCH64 ? 0 : CDD_E_TARGET);
    cdd_clear_error();
}

static void error_table(void)
{
    CHECK_INT(cdd_err_exit_code(0), 0);
    CHECK_INT(cdd_err_exit_code(CDD_E_USAGE), 2);
    CHECK_INT(cdd_err_exit_code(CDD_E_UNSAFE), 3);
    CHECK_INT(cdd_err_exit_code(CDD_E_LOCKED), 4);
    CHECK_INT(cdd_err_exit_code(CDD_E_MODIFIED), 1);
    CHECK_STR(cdd_err_name(CDD_E_CHECKSUM), "CHECKSUM");
    for (int c = CDD_E_FIRST_VALUE + 1; c < CDD_E_LAST_VALUE; c++) {
        int e = cdd_err_exit_code(c);
        CHECK(e >= 1 && e <= 4);
        CHECK(strcmp(cdd_err_name(c), "UNKNOWN") != 0);
    }
    CHECK_STR(cdd_err_name(-1), "UNKNOWN");
}

TEST_MAIN(TEST(layout_mapping), TEST(link_placement), TEST(cuda_arg), TEST(version_differs),
          TEST(layout_platform), TEST(version_files),
          TEST(resolve_and_check), TEST(platforms), TEST(choose_layout),
          TEST(error_table))
