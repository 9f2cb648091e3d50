/* Target trees: resolving --cuda / --cuda-root / --prefix, reading a CUDA
 * tree's version from whichever file the tree has, and the refusals that
 * protect users from an ABI mismatch or a target that will be lost. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cdd/cudatree.h"
#include "cdd/cudnn_facts.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/jsonparse.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"
#include "cdd/tree.h"

int cdd_cuda_arg_parse(const char *s, int *major, int *minor)
{
    const char *p = s;
    if (*p == 'v' || *p == 'V')
        p++;
    char *end;
    if (!isdigit((unsigned char)*p))
        goto bad;
    long a = strtol(p, &end, 10);
    if (*end != '.' || !isdigit((unsigned char)end[1]))
        goto bad;
    long b = strtol(end + 1, &end, 10);
    if (*end != '\0' || a < 1 || a > 99 || b < 0 || b > 99)
        goto bad;
    *major = (int)a;
    *minor = (int)b;
    return 0;
bad:
    return cdd_fail(CDD_E_USAGE, NULL, 0,
                    "--cuda %s: expected a CUDA version like v11.6", s);
}

static int parse_dotted(const char *s, struct cdd_cuda_version *v)
{
    int a, b, c = -1, n;
    if (sscanf(s, "%d.%d.%d%n", &a, &b, &c, &n) == 3 ||
        (c = -1, sscanf(s, "%d.%d%n", &a, &b, &n) == 2)) {
        if (a < 1 || a > 99 || b < 0 || b > 99)
            return -1;
        v->known = 1;
        v->major = a;
        v->minor = b;
        v->patch = c;
        return 0;
    }
    return -1;
}

int cdd_cuda_version_parse_json(const char *text, size_t len,
                                struct cdd_cuda_version *v)
{
    int r = -1, nomem = 0;
    cJSON *doc = cdd_json_parse(text, len, NULL, 0, &nomem);
    if (nomem)
        return cdd_fail(CDD_E_NOMEM, "version.json", 0, NULL);
    if (!doc)
        return -1;
    const cJSON *cuda = cJSON_GetObjectItemCaseSensitive(doc, "cuda");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(cuda, "version");
    if (cJSON_IsString(ver) && parse_dotted(ver->valuestring, v) == 0) {
        snprintf(v->source, sizeof v->source, "version.json");
        r = 0;
    }
    cJSON_Delete(doc);
    return r;
}

int cdd_cuda_version_parse_txt(const char *text, struct cdd_cuda_version *v)
{
    const char *p = strstr(text, "CUDA Version ");
    if (!p || parse_dotted(p + 13, v) != 0)
        return -1;
    snprintf(v->source, sizeof v->source, "version.txt");
    return 0;
}

int cdd_cuda_version_parse_header(const char *text,
                                  struct cdd_cuda_version *v)
{
    for (const char *p = strstr(text, "#define"); p;
         p = strstr(p + 1, "#define")) {
        const char *q = p + 7;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, "CUDA_VERSION", 12) != 0 ||
            (q[12] != ' ' && q[12] != '\t'))
            continue;
        long n = strtol(q + 12, NULL, 10);
        if (n < 1000 || n > 99999)
            return -1;
        v->known = 1;
        v->major = cdd_cuda_version_major(n);
        v->minor = cdd_cuda_version_minor(n);
        v->patch = -1;
        snprintf(v->source, sizeof v->source, "cuda.h");
        return 0;
    }
    return -1;
}

/* The tree path a link at rel leads to (its target from rel's folder; an
 * absolute target as cdd_tree's walk takes it, which refuses one that
 * leaves the tree), malloc'd. */
static int link_next(struct cdd_tree *tree, const char *rel, char **next)
{
    char *target = NULL;
    int r = cdd_tree_readlink_dup(tree, rel, &target);
    *next = NULL;
    if (r)
        return r;
    const char *slash = strrchr(rel, '/');
    size_t dl = slash ? (size_t)(slash - rel) : 0;
    const char *root = cdd_tree_root(tree);
    size_t rl = strlen(root);
    if (target[0] == '/' && strncmp(target, root, rl) == 0 &&
        (target[rl] == '/' || !target[rl]))
        *next = cdd_strdup(target[rl] ? target + rl + 1 : "");
    else if (target[0] == '/')
        *next = cdd_strdup(target); /* refused by the tree's shape rule */
    else if (!(*next = malloc(dl + strlen(target) + 2)))
        ;
    else if (dl)
        sprintf(*next, "%.*s/%s", (int)dl, rel, target);
    else
        strcpy(*next, target);
    free(target);
    return *next ? 0 : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
}

/* A version file's text through the tree, or *text NULL when it is absent.
 * A link (Debian's toolkit links some of them) is followed, a few hops,
 * each resolved beneath the root like every tree path. */
static int read_if_present(struct cdd_tree *tree, const char *rel,
                           char **text, size_t *len)
{
    char *cur = cdd_strdup(rel);
    int r = cur ? 0 : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    *text = NULL;
    for (int hops = 0; !r; hops++) {
        struct cdd_stat st;
        char *next = NULL;
        r = cdd_tree_lstat(tree, cur, &st);
        if (r || st.type == CDD_FT_NONE)
            break;
        if (st.type != CDD_FT_SYMLINK || hops == 8) {
            r = cdd_tree_read_all(tree, cur, 4u << 20, text, len);
            break;
        }
        r = link_next(tree, cur, &next);
        free(cur);
        cur = next;
    }
    free(cur);
    return r;
}

int cdd_cuda_version_read(struct cdd_tree *tree, struct cdd_cuda_version *v)
{
    static const char *const files[] = {"version.json", "version.txt",
                                        "include/cuda.h"};
    memset(v, 0, sizeof *v);
    v->patch = -1;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *text = NULL;
        size_t len = 0;
        int r = read_if_present(tree, files[i], &text, &len);
        if (r)
            return r;
        if (!text)
            continue;
        int ok = i == 0   ? cdd_cuda_version_parse_json(text, len, v)
                 : i == 1 ? cdd_cuda_version_parse_txt(text, v)
                          : cdd_cuda_version_parse_header(text, v);
        free(text);
        if (ok == 0)
            return 0;
        if (ok == CDD_E_NOMEM)
            return ok;
        /* A file that exists but says nothing usable is worth a message:
         * users should not guess why the tree was refused. */
        if (i < 2) {
            char *p = cdd_tree_abs(tree, files[i]);
            cdd_fail(CDD_E_STATE, p, 0, "no CUDA version found in it");
            free(p);
            return CDD_E_STATE;
        }
    }
    return 0;
}

static char *strip_trailing_sep(char *p)
{
    size_t n = p ? strlen(p) : 0;
    while (n > 1 && (p[n - 1] == '/' || p[n - 1] == '\\'))
        p[--n] = '\0';
    return p;
}

static int target_open(const struct cdd_target_spec *spec,
                       struct cdd_target *out, struct cdd_tree **tree,
                       int root_only);

int cdd_target_resolve(const struct cdd_target_spec *spec,
                       struct cdd_target *out)
{
    struct cdd_tree *tree = NULL;
    /* The root only: what is resolved here reads no state of ours, so that
     * a command that diagnoses (doctor) still looks at a tree whose state
     * folder cannot be trusted, and says so itself. */
    int r = target_open(spec, out, &tree, 1);
    cdd_tree_close(tree);
    if (r)
        cdd_target_clear(out);
    return r;
}

int cdd_target_open(const struct cdd_target_spec *spec,
                    struct cdd_target *out, struct cdd_tree **tree)
{
    return target_open(spec, out, tree, 0);
}

int cdd_target_open_look(const struct cdd_target_spec *spec,
                         struct cdd_target *out, struct cdd_tree **tree,
                         int *state_bad, char **state_why)
{
    *state_bad = 0;
    *state_why = NULL;
    int r = target_open(spec, out, tree, 0);
    if (r != CDD_E_STATE)
        return r;
    *state_bad = 1;
    *state_why = cdd_error_text();
    cdd_clear_error();
    cdd_target_clear(out);
    return target_open(spec, out, tree, 1);
}

static int target_open(const struct cdd_target_spec *spec,
                       struct cdd_target *out, struct cdd_tree **tree,
                       int root_only)
{
    int given = !!spec->cuda + !!spec->cuda_root + !!spec->prefix;
    int r = 0;
    char *path = NULL;
    const char *how = NULL;
    char envname[32]; /* fixed: CUDA_PATH_V and two ints */
    memset(out, 0, sizeof *out);
    if (given != 1)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        given ? "give only one of --cuda, --cuda-root, "
                                "--prefix"
                              : "no target: give --cuda vX.Y, --cuda-root "
                                "DIR or --prefix DIR");
    if (spec->cuda) {
        int major, minor;
        r = cdd_cuda_arg_parse(spec->cuda, &major, &minor);
        if (r)
            return r;
        snprintf(envname, sizeof envname, "CUDA_PATH_V%d_%d", major, minor);
        const char *env = cdd_getenv(envname);
        if (env) {
            path = strdup(env);
            how = envname;
        } else {
            path = cdd_default_cuda_root(major, minor);
            how = "default root";
        }
        out->kind = CDD_TARGET_CUDA;
        out->asked = 1;
        out->asked_major = major;
        out->asked_minor = minor;
    } else if (spec->cuda_root) {
        path = strdup(spec->cuda_root);
        how = "--cuda-root";
        out->kind = CDD_TARGET_CUDA;
    } else {
        path = strdup(spec->prefix);
        how = "--prefix";
        out->kind = CDD_TARGET_PREFIX;
    }
    if (!path)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    out->root = strip_trailing_sep(cdd_absolute_path(path));
    out->how = strdup(how);
    free(path);
    if (!out->root || !out->how) {
        cdd_target_clear(out);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    struct cdd_stat st;
    r = cdd_fs_realpath(out->root, &path);
    if (r == 0) {
        free(path);
        path = NULL;
        r = cdd_fs_lstat(out->root, &st);
        if (!r && st.type == CDD_FT_SYMLINK)
            st.type = CDD_FT_DIR; /* realpath succeeded: judge the target */
    }
    if (r == CDD_E_NOTFOUND || (!r && st.type == CDD_FT_NONE)) {
        if (spec->cuda && strcmp(how, "default root") == 0)
            r = cdd_fail(CDD_E_NOTFOUND, out->root, 0,
                         "CUDA %s not found: %s is not set and this folder "
                         "does not exist (use --cuda-root DIR)",
                         spec->cuda, envname);
        else
            r = cdd_fail(CDD_E_NOTFOUND, out->root, 0,
                         "target folder does not exist (from %s)", how);
    } else if (!r && st.type != CDD_FT_DIR) {
        r = cdd_fail(CDD_E_NOTFOUND, out->root, 0,
                     "target is not a folder (from %s)", how);
    }
    /* The tree, opened once here (the command keeps it): its version is
     * read through it, never through a path string. */
    *tree = NULL;
    if (!r && (r = root_only ? cdd_tree_open_root(out->root, tree)
                             : cdd_tree_open(out->root, tree)) != 0)
        return r; /* out still names it, for the report */
    if (!r && out->kind == CDD_TARGET_CUDA)
        r = cdd_cuda_version_read(*tree, &out->version);
    if (r) {
        cdd_tree_close(*tree);
        *tree = NULL;
        cdd_target_clear(out);
    }
    return r;
}

/* Is rel in the tree, as a folder (want_dir) or a file? Looked at through
 * the tree's handle, never by a path joined onto its root. */
static int present(struct cdd_tree *tree, const char *rel, int want_dir)
{
    struct cdd_stat st;
    if (cdd_tree_lstat(tree, rel, &st) != 0)
        return 0;
    /* a link counts as what it names (lib64 -> targets/...) */
    if (st.type == CDD_FT_SYMLINK)
        return 1;
    return want_dir ? st.type == CDD_FT_DIR : st.type == CDD_FT_FILE;
}

int cdd_target_layout_platform(struct cdd_tree *tree, enum cdd_platform *out)
{
    static const struct {
        const char *rel;
        int dir;
    } win[] = {{"lib/x64", 1},           {"bin/nvcc.exe", 0},
               {"bin/cudnn64_8.dll", 0}, {"bin/cudnn64_9.dll", 0},
               {"Library/bin", 1}},
      lin[] = {{"lib64", 1},             {"targets/x86_64-linux", 1},
               {"bin/nvcc", 0},          {"lib/libcudnn.so.8", 0},
               {"lib/libcudnn.so.9", 0}, {"targets/sbsa-linux", 1},
               {"targets/aarch64-linux", 1}};
    int w = 0, l = 0;
    for (size_t i = 0; i < sizeof win / sizeof win[0]; i++)
        w += present(tree, win[i].rel, win[i].dir);
    for (size_t i = 0; i < sizeof lin / sizeof lin[0]; i++)
        l += present(tree, lin[i].rel, lin[i].dir);
    /* NVIDIA's AArch64 toolkits keep their libraries under targets/
     * sbsa-linux (server) or targets/aarch64-linux (Jetson), lib64 linking
     * there as x86-64's does into targets/x86_64-linux. */
    int sbsa = present(tree, "targets/sbsa-linux", 1),
        jetson = present(tree, "targets/aarch64-linux", 1);
    cdd_clear_error();
    if (!w == !l)
        return -1;
    *out = w        ? CDD_PLATFORM_WINDOWS_X86_64
           : sbsa   ? CDD_PLATFORM_LINUX_SBSA
           : jetson ? CDD_PLATFORM_LINUX_AARCH64
                    : CDD_PLATFORM_LINUX_X86_64;
    return 0;
}

struct cudart_seen {
    int found;
};

static int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* cudart64_*.dll, in any case (NTFS ignores it). */
static int is_cudart_dll(const char *name)
{
    static const char pre[] = "cudart64_", suf[] = ".dll";
    size_t n = strlen(name), a = sizeof pre - 1, b = sizeof suf - 1;
    if (n <= a + b)
        return 0;
    for (size_t i = 0; i < a; i++)
        if (ascii_lower((unsigned char)name[i]) != pre[i])
            return 0;
    for (size_t i = 0; i < b; i++)
        if (ascii_lower((unsigned char)name[n - b + i]) != suf[i])
            return 0;
    return 1;
}

static int note_cudart(void *ud, const char *name)
{
    struct cudart_seen *s = ud;
    if (is_cudart_dll(name))
        s->found = 1;
    return 0;
}

/* Does the tree's folder rel hold a cudart64_*.dll? A folder that cannot be
 * listed holds none we can see. */
static int has_cudart(struct cdd_tree *tree, const char *rel)
{
    struct cudart_seen s = {0};
    if (present(tree, rel, 1))
        (void)cdd_tree_list(tree, rel, note_cudart, &s);
    cdd_clear_error();
    return s.found;
}

enum cdd_layout_id cdd_target_choose_layout(const struct cdd_target *t,
                                            struct cdd_tree *tree,
                                            const struct cdd_manifest *m,
                                            const char **why)
{
    enum cdd_layout_id id = cdd_layout_select(t->kind, m->platform);
    *why = t->kind == CDD_TARGET_CUDA ? "the CUDA tree layout of the platform"
                                      : "the prefix layout of the platform";
    if (id != CDD_LAYOUT_CUDA_WINDOWS)
        return id;
    /* bin/x64 first: a CUDA 13 tree may keep a few tools in bin too. */
    if (has_cudart(tree, "bin/x64")) {
        *why = "the tree's own cudart64_*.dll is in bin\\x64 (CUDA 13's "
               "layout): cuDNN's DLLs go beside it";
        return CDD_LAYOUT_CUDA_WINDOWS_X64;
    }
    if (has_cudart(tree, "bin")) {
        *why = "the tree's own cudart64_*.dll is in bin: cuDNN's DLLs go "
               "beside it";
        return CDD_LAYOUT_CUDA_WINDOWS;
    }
    int major = t->version.known ? t->version.major : m->cuda_major;
    if (major >= 13) {
        *why = "no cudart64_*.dll in the tree's bin or bin\\x64: CUDA 13's "
               "default, bin\\x64";
        return CDD_LAYOUT_CUDA_WINDOWS_X64;
    }
    *why = "no cudart64_*.dll in the tree's bin or bin\\x64: the default "
           "before CUDA 13, bin";
    return CDD_LAYOUT_CUDA_WINDOWS;
}

int cdd_target_check_platform(enum cdd_platform p, int given,
                              enum cdd_platform asked)
{
    enum cdd_machine want = cdd_platform_machine(p);
    if (given && asked != p)
        return cdd_fail(CDD_E_TARGET, NULL, 0,
                        "--platform %s, but the archive is for %s",
                        cdd_platform_name(asked), cdd_platform_name(p));
    if (!given && want != cdd_host_machine())
        return cdd_fail(CDD_E_TARGET, NULL, 0,
                        "the archive is for %s (%s libraries) and this host "
                        "is %s: a tree for another machine is provisioned "
                        "only on purpose; give --platform %s",
                        cdd_platform_name(p), cdd_machine_name(want),
                        cdd_machine_name(cdd_host_machine()),
                        cdd_platform_name(p));
    return 0;
}

int cdd_target_version_differs(const struct cdd_target *t)
{
    return t->asked && t->kind == CDD_TARGET_CUDA && t->version.known &&
           (t->version.major != t->asked_major ||
            t->version.minor != t->asked_minor);
}

void cdd_target_clear(struct cdd_target *t)
{
    if (!t)
        return;
    free(t->root);
    free(t->how);
    memset(t, 0, sizeof *t);
}

int cdd_target_check(const struct cdd_target *t, const struct cdd_tree *tree,
                     int cuda_major, int force)
{
    /* The name as given, and where the tree really is (resolved when it
     * was opened): no path is looked up again here. */
    int in_pkg = cdd_path_in_python_package(t->root) ||
                 cdd_path_in_python_package(cdd_tree_root(tree));
    if (in_pkg)
        return cdd_fail(CDD_E_TARGET, t->root, 0,
                        "target is inside a Python package folder; files "
                        "there are lost on the next package upgrade (install "
                        "into the CUDA tree or the environment's prefix)");
    if (t->kind != CDD_TARGET_CUDA || force)
        return 0;
    if (!t->version.known)
        return cdd_fail(CDD_E_VERSION, t->root, 0,
                        "cannot tell the CUDA version of this tree (no "
                        "version.json, version.txt or include/cuda.h); use "
                        "--force if you are sure it is CUDA %d.x",
                        cuda_major);
    if (t->version.major != cuda_major)
        return cdd_fail(CDD_E_VERSION, t->root, 0,
                        "this tree is CUDA %d.%d (from %s) but the archive is "
                        "built for CUDA %d.x; use a matching archive (or "
                        "--force)",
                        t->version.major, t->version.minor, t->version.source,
                        cuda_major);
    return 0;
}
