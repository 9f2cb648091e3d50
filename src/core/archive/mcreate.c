/* manifest create: turn an archive the user trusts into a complete manifest.
 * The archive is streamed once through the same checks as an install
 * (extract.c in discovery mode) and once more to read cudnn_version.h. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/archive.h"
#include "cdd/binfile.h"
#include "cdd/cudnn_facts.h"
#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/mcreate.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"

struct seen {
    char *path; /* raw */
    int is_symlink;
    char *target;
    uint64_t size;
    uint8_t sha[CDD_SHA256_LEN];
};

struct collect {
    struct seen *v;
    size_t n, cap;
};

static int collect_end(void *ud, const struct cdd_xentry *e,
                       struct cdd_file *f)
{
    struct collect *c = ud;
    (void)f; /* discovery never writes */
    /* One per entry, as many as cdd_extract() takes. */
    int r = CDD_GROW(c->v, &c->cap, c->n + 1, CDD_MAX_ENTRIES, "entries");
    if (r < 0)
        return r;
    struct seen *s = &c->v[c->n];
    memset(s, 0, sizeof *s);
    s->path = strdup(e->path);
    s->is_symlink = e->type == CDD_ENTRY_SYMLINK;
    s->target = s->is_symlink ? strdup(e->link_target) : NULL;
    s->size = e->size;
    memcpy(s->sha, e->sha256, CDD_SHA256_LEN);
    c->n++;
    if (!s->path || (s->is_symlink && !s->target))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    return 0;
}

static void collect_free(struct collect *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].path);
        free(c->v[i].target);
    }
    free(c->v);
}

/* One top folder for everything (NVIDIA's "<name>-archive/" or the old
 * "cuda/") is stripped; anything else is taken as is. */
static int detect_strip(const struct collect *c)
{
    if (c->n == 0)
        return 0;
    const char *first = c->v[0].path, *slash = strchr(first, '/');
    if (!slash)
        return 0;
    size_t len = (size_t)(slash - first) + 1;
    for (size_t i = 0; i < c->n; i++)
        if (strncmp(c->v[i].path, first, len) != 0 || !c->v[i].path[len])
            return 0;
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries' raw paths, sorted, for the symlink-target lookups (an
 * archive may hold up to CDD_MAX_ENTRIES: no quadratic search). */
static int sorted_paths(const struct collect *c, char ***out)
{
    char **v = malloc((c->n ? c->n : 1) * sizeof *v);
    if (!v)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i < c->n; i++)
        v[i] = c->v[i].path;
    qsort(v, c->n, sizeof *v, cmp_str);
    *out = v;
    return 0;
}

/* A symlink the path rules do not place by its own name (lib*_static_v8.a
 * -> lib*_static.a, a header twin) is listed when what it points at is an
 * entry of its own folder: the manifest then places it where that entry
 * goes, and the strict reader checks that the chain ends at a file. */
static int target_in_folder(char **sorted, size_t n, const struct seen *s,
                            int *found)
{
    size_t dlen = (size_t)(cdd_path_basename(s->path) - s->path);
    char *want = malloc(dlen + strlen(s->target) + 1);
    if (!want)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    memcpy(want, s->path, dlen);
    strcpy(want + dlen, s->target);
    *found = bsearch(&want, sorted, n, sizeof *sorted, cmp_str) != NULL;
    free(want);
    return 0;
}

/* The family of the archive's shape: Windows (bin/ or bin/x64/ DLLs,
 * lib/x64/ import libraries) or Linux (lib/ shared objects). The exact
 * platform (machine, sbsa or Jetson) is decided later (decide_platform). */
static int detect_family(const struct collect *c, int strip,
                         enum cdd_platform *out)
{
    for (size_t i = 0; i < c->n; i++) {
        const char *p = cdd_path_strip(c->v[i].path, strip);
        enum cdd_role role;
        if (!p)
            continue;
        if (cdd_role_from_path(CDD_PLATFORM_WINDOWS_X86_64, p, 0, &role) == 0 &&
            (role == CDD_ROLE_RUNTIME || role == CDD_ROLE_IMPORT_LIB)) {
            *out = CDD_PLATFORM_WINDOWS_X86_64;
            return 0;
        }
        if (cdd_role_from_path(CDD_PLATFORM_LINUX_X86_64, p, c->v[i].is_symlink,
                               &role) == 0 &&
            (role == CDD_ROLE_RUNTIME || role == CDD_ROLE_SYMLINK)) {
            *out = CDD_PLATFORM_LINUX_X86_64;
            return 0;
        }
    }
    return -1;
}

/* What the second pass saw: cudnn_version.h, and the machine of the
 * runtime libraries (all must agree). */
struct probe {
    char *version_text;
    int have_machine;
    struct cdd_bininfo first; /* fmt, machine, machine_name, is_64 */
    char *first_path;
};

static int read_some(struct cdd_archive *a, char *buf, size_t cap,
                     size_t *used)
{
    size_t got;
    int r;
    *used = 0;
    while (*used < cap &&
           (r = cdd_archive_read(a, buf + *used, cap - *used, &got)) == 0 &&
           got > 0)
        *used += got;
    return *used < cap ? r : 0;
}

static int probe_library(struct probe *pr, const char *archive,
                         const char *path, const unsigned char *buf,
                         size_t n)
{
    struct cdd_binsrc src;
    struct cdd_bininfo bi;
    cdd_binsrc_mem(&src, buf, n, path);
    int r = cdd_bin_identify(&src, &bi);
    if (r == CDD_E_NOTSUP || r == CDD_E_CORRUPT) {
        char *why = strdup(cdd_last_error()->msg);
        cdd_clear_error();
        r = cdd_fail(CDD_E_ARCHIVE, archive, 0,
                     "entry \"%s\": not a shared library (%s)", path,
                     why ? why : "unreadable headers");
        free(why);
        return r;
    }
    if (r)
        return r;
    if (!pr->have_machine) {
        pr->have_machine = 1;
        pr->first = bi;
        return (pr->first_path = strdup(path)) ? 0
               : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    if (bi.fmt != pr->first.fmt || bi.machine != pr->first.machine)
        return cdd_fail(CDD_E_ARCHIVE, archive, 0,
                        "the libraries are for different machines: \"%s\" "
                        "is %s %s, \"%s\" is %s %s",
                        pr->first_path, pr->first.machine_name,
                        pr->first.fmt == CDD_BIN_PE ? "PE" : "ELF", path,
                        bi.machine_name, bi.fmt == CDD_BIN_PE ? "PE" : "ELF");
    return 0;
}

/* Second pass: the version header's text, and the first bytes of every
 * runtime library of the family's shape, identified by the same header
 * readers verify uses (binfile.h). */
static int second_pass(const char *archive, int strip,
                       enum cdd_platform family, struct probe *pr)
{
    struct cdd_archive *a = NULL;
    struct cdd_archive_entry e;
    unsigned char *buf = malloc(CDD_MCREATE_PROBE);
    size_t cap = 65536, used;
    int r = buf ? cdd_archive_open(archive, &a)
                : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    while (!r && (r = cdd_archive_next(a, &e)) == 0) {
        const char *p = cdd_path_strip(e.path, strip);
        enum cdd_role role;
        if (!p || e.type != CDD_ENTRY_FILE)
            continue;
        if (!pr->version_text && strcmp(p, CDD_CUDNN_VERSION_HEADER) == 0) {
            if (!(pr->version_text = malloc(cap + 1))) {
                r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
                break;
            }
            if ((r = read_some(a, pr->version_text, cap, &used)))
                break;
            pr->version_text[used] = '\0';
        } else if (cdd_role_from_path(family, p, 0, &role) == 0 &&
                   role == CDD_ROLE_RUNTIME) {
            if ((r = read_some(a, (char *)buf, CDD_MCREATE_PROBE, &used)) ||
                (r = probe_library(pr, archive, p, buf, used)))
                break;
        }
    }
    if (r == 1)
        r = 0;
    free(buf);
    cdd_archive_close(a);
    return r;
}

/* The platform: --platform, else the file name's, else the machine of the
 * libraries where it tells one platform; the libraries must agree with
 * whichever said it. */
static int decide_platform(const struct cdd_mcreate_opts *o,
                           const char *archive, const char *fname,
                           enum cdd_platform family, const struct probe *pr,
                           enum cdd_platform *out)
{
    int win = cdd_platform_is_windows(family);
    enum cdd_platform named;
    const char *how = NULL;
    if (o->platform_given) {
        named = o->platform;
        how = "--platform";
    } else if (cdd_platform_from_name(fname, &named) == 0) {
        how = "the file name";
    }
    if (pr->have_machine && pr->first.fmt != (win ? CDD_BIN_PE : CDD_BIN_ELF))
        return cdd_fail(CDD_E_ARCHIVE, archive, 0,
                        "\"%s\" is a%s file in a %s archive's place",
                        pr->first_path,
                        pr->first.fmt == CDD_BIN_PE ? " PE (Windows)"
                                                    : "n ELF (Linux)",
                        win ? "Windows" : "Linux");
    if (how) {
        if (cdd_platform_is_windows(named) != win)
            return cdd_fail(CDD_E_ARCHIVE, archive, 0,
                            "%s says %s, but the archive holds %s libraries",
                            how, cdd_platform_name(named),
                            win ? "Windows" : "Linux");
        enum cdd_machine want = cdd_platform_machine(named);
        int m = win ? cdd_machine_pe(want) : cdd_machine_elf(want);
        if (pr->have_machine && (pr->first.machine != m ||
                                 (!win && !pr->first.is_64)))
            return cdd_fail(CDD_E_ARCHIVE, archive, 0,
                            "%s says %s (%s), but \"%s\" is a library for "
                            "%s (machine 0x%04x)",
                            how, cdd_platform_name(named),
                            cdd_machine_name(want), pr->first_path,
                            pr->first.machine_name,
                            (unsigned)pr->first.machine);
        *out = named;
        return 0;
    }
    if (!pr->have_machine ||
        pr->first.machine == cdd_machine_elf(CDD_MACHINE_X86_64) ||
        pr->first.machine == cdd_machine_pe(CDD_MACHINE_X86_64)) {
        *out = win ? CDD_PLATFORM_WINDOWS_X86_64 : CDD_PLATFORM_LINUX_X86_64;
        return 0;
    }
    if (win && pr->first.machine == cdd_machine_pe(CDD_MACHINE_AARCH64)) {
        *out = CDD_PLATFORM_WINDOWS_ARM64;
        return 0;
    }
    if (!win && pr->first.machine == cdd_machine_elf(CDD_MACHINE_AARCH64))
        return cdd_fail(CDD_E_USAGE, archive, 0,
                        "the libraries are AArch64 and the file name names "
                        "no platform: linux-sbsa (servers: Grace, GH200) and "
                        "linux-aarch64 (Jetson, L4T) are different builds; "
                        "give --platform linux-sbsa or --platform "
                        "linux-aarch64");
    return cdd_fail(CDD_E_ARCHIVE, archive, 0,
                    "\"%s\" is a library for %s (machine 0x%04x), which no "
                    "cuDNN platform has",
                    pr->first_path, pr->first.machine_name,
                    (unsigned)pr->first.machine);
}

static int cuda_major_from_name(const char *name)
{
    const char *p = strstr(name, "_cuda");
    if (!p || !isdigit((unsigned char)p[5]))
        return 0;
    return (int)strtol(p + 5, NULL, 10);
}

/* "cudnn-linux-x86_64-8.5.0.96_cuda11-archive.tar.xz" carries the full
 * four-part version; use it when it agrees with the header. */
static void version_string(const char *name, int ma, int mi, int pa,
                           char *out, size_t len)
{
    char prefix[48]; /* fixed: three ints */
    snprintf(out, len, "%d.%d.%d", ma, mi, pa);
    snprintf(prefix, sizeof prefix, "-%d.%d.%d.", ma, mi, pa);
    const char *p = strstr(name, prefix);
    if (!p)
        return;
    p += strlen(prefix);
    if (!isdigit((unsigned char)*p))
        return;
    long build = strtol(p, NULL, 10);
    snprintf(out, len, "%d.%d.%d.%ld", ma, mi, pa, build);
}

static char *stem_of(const char *filename)
{
    static const char *const exts[] = {".tar.xz", ".tar.gz", ".tgz", ".zip",
                                       ".tar"};
    char *s = strdup(filename);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strcmp(s + n - e, exts[i]) == 0) {
            s[n - e] = '\0';
            break;
        }
    }
    return s;
}

/* Where the archive keeps its runtime libraries: bin/x64 (Windows,
 * cuDNN >= 9.23), bin (Windows before), lib (Linux). */
static const char *runtime_dir(const struct cdd_manifest *m, const char *main)
{
    if (!cdd_platform_is_windows(m->platform))
        return "lib";
    for (size_t i = 0; i < m->n_files; i++) {
        const char *p = m->files[i].path;
        if (strncmp(p, "bin/x64/", 8) == 0 && strcmp(p + 8, main) == 0)
            return "bin/x64";
    }
    return "bin";
}

int cdd_manifest_fill_verify(struct cdd_manifest *m, int cudnn_major,
                             int minor, int patch)
{
    const struct cdd_cudnn_major *f = cdd_cudnn_major_facts(cudnn_major);
    int win = cdd_platform_is_windows(m->platform);
    char *path = NULL;
    if (!f)
        return 0; /* a major the facts table does not know: no verify section */
    const char *dir = runtime_dir(m, cdd_cudnn_main_name(f, win));
    struct cdd_mverify *v = &m->verify;
    memset(v, 0, sizeof *v);
    v->version_number = (long)cdd_cudnn_version_encode(cudnn_major, minor,
                                                       patch);
    if (!(path = cdd_path_join(dir, cdd_cudnn_main_name(f, win))))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (!cdd_manifest_file(m, path)) {
        free(path);
        return 0; /* not a layout we know: leave verify out */
    }
    v->library = path;
    v->version_symbol = strdup(f->version_symbol);
    v->cudart_symbol = strdup(f->cudart_symbol);
    v->mismatch_status = f->mismatch_status;
    v->sublibs = calloc(f->n_subs, sizeof *v->sublibs);
    if (!v->version_symbol || !v->cudart_symbol || !v->sublibs)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i < f->n_subs; i++) {
        const struct cdd_cudnn_sublib *fs = &f->subs[i];
        if (!(path = cdd_path_join(dir, cdd_cudnn_sub_name(fs, win))))
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        if (!cdd_manifest_file(m, path)) {
            free(path);
            continue;
        }
        struct cdd_msublib *s = &v->sublibs[v->n_sublibs++];
        s->library = path;
        s->check_symbol = fs->check_symbol ? strdup(fs->check_symbol) : NULL;
        if (fs->check_symbol && !s->check_symbol)
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    m->has_verify = 1;
    return 0;
}

int cdd_manifest_create(const struct cdd_mcreate_opts *o,
                        struct cdd_manifest **out)
{
    struct collect c = {0};
    struct cdd_manifest *m = NULL;
    char *vh = NULL, **sorted = NULL; /* sorted: not owning its strings */
    struct probe pr = {0};
    int r, strip, ma = -1, mi = -1, pa = -1;
    const char *archive = o->archive_path, *fname = cdd_path_basename(archive);
    uint8_t sha[CDD_SHA256_LEN];
    uint64_t size;
    *out = NULL;

    r = cdd_sha256_file(archive, sha, &size);
    if (r)
        goto out;
    struct cdd_extract_opts xo = {.m = NULL, .strip_components = 0};
    xo.max_total = size > (CDD_MCREATE_MAX_TOTAL - CDD_MCREATE_BASE_TOTAL) /
                              CDD_MCREATE_RATIO
                       ? CDD_MCREATE_MAX_TOTAL
                       : CDD_MCREATE_BASE_TOTAL + CDD_MCREATE_RATIO * size;
    struct cdd_extract_sink sink = {&c, NULL, collect_end, NULL, NULL};
    r = cdd_extract(archive, &xo, &sink);
    if (r)
        goto out;
    if (c.n == 0) {
        r = cdd_fail(CDD_E_ARCHIVE, archive, 0, "the archive holds no files");
        goto out;
    }
    strip = detect_strip(&c);
    if (!(m = calloc(1, sizeof *m))) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    enum cdd_platform family;
    if (detect_family(&c, strip, &family) != 0) {
        r = cdd_fail(CDD_E_ARCHIVE, archive, 0,
                     "not a cuDNN archive: no bin/*.dll, bin/x64/*.dll, "
                     "lib/x64/*.lib or lib/*.so* entries");
        goto out;
    }
    r = second_pass(archive, strip, family, &pr);
    if (!r)
        r = decide_platform(o, archive, fname, family, &pr, &m->platform);
    if (r)
        goto out;
    vh = pr.version_text;
    pr.version_text = NULL;
    if (vh && cdd_cudnn_version_from_header(vh, &ma, &mi, &pa) != 0)
        ma = -1;
    char version[64]; /* fixed: a version; a longer --version is refused */
    if (o->version) {
        if (strlen(o->version) >= sizeof version) {
            r = cdd_fail(CDD_E_TOOLONG, NULL, 0,
                         "--version: longer than %zu bytes",
                         sizeof version - 1);
            goto out;
        }
        snprintf(version, sizeof version, "%s", o->version);
        if (ma < 0 && sscanf(o->version, "%d.%d.%d", &ma, &mi, &pa) != 3) {
            r = cdd_fail(CDD_E_USAGE, NULL, 0,
                         "--version %s: expected MAJOR.MINOR.PATCH[.BUILD]",
                         o->version);
            goto out;
        }
    } else if (ma >= 0) {
        version_string(fname, ma, mi, pa, version, sizeof version);
    } else {
        r = cdd_fail(CDD_E_ARCHIVE, archive, 0,
                     "no " CDD_CUDNN_VERSION_HEADER " with CUDNN_MAJOR, "
                     "CUDNN_MINOR and CUDNN_PATCHLEVEL; give --version");
        goto out;
    }
    m->cuda_major = o->cuda_major ? o->cuda_major : cuda_major_from_name(fname);
    if (m->cuda_major <= 0) {
        r = cdd_fail(CDD_E_USAGE, NULL, 0,
                     "cannot tell the CUDA major from the file name %s; give "
                     "--cuda-major N",
                     fname);
        goto out;
    }
    m->schema_version = CDD_MANIFEST_SCHEMA;
    m->source = strdup(archive);
    m->name = stem_of(fname);
    m->product = strdup("cudnn");
    m->version = strdup(version);
    m->archive.filename = strdup(fname);
    m->archive.has_sha256 = 1;
    memcpy(m->archive.sha256, sha, CDD_SHA256_LEN);
    m->archive.has_size = 1;
    m->archive.size = size;
    m->archive.strip_components = strip;
    m->files_exact = 1;
    m->files = calloc(c.n, sizeof *m->files);
    if (!m->source || !m->name || !m->product || !m->version ||
        !m->archive.filename || !m->files) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    for (size_t i = 0; i < c.n; i++) {
        const struct seen *s = &c.v[i];
        const char *p = cdd_path_strip(s->path, strip);
        struct cdd_mfile *f = &m->files[m->n_files];
        int placed = cdd_role_from_path(m->platform, p, s->is_symlink,
                                        &f->role) == 0;
        if (!placed && s->is_symlink &&
            !cdd_platform_is_windows(m->platform)) {
            if (!sorted && (r = sorted_paths(&c, &sorted)))
                goto out;
            if ((r = target_in_folder(sorted, c.n, s, &placed)))
                goto out;
        }
        if (!placed) {
            r = cdd_fail(CDD_E_ARCHIVE, archive, 0,
                         "entry \"%s\": not a header, library or licence of "
                         "a %s cuDNN archive",
                         s->path, cdd_platform_name(m->platform));
            goto out;
        }
        m->n_files++;
        if (!(f->path = strdup(p))) {
            r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            goto out;
        }
        if (s->is_symlink) {
            f->role = CDD_ROLE_SYMLINK;
            if (!(f->target = strdup(s->target))) {
                r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
                goto out;
            }
        } else {
            f->has_sha256 = f->has_size = 1;
            f->size = s->size;
            memcpy(f->sha256, s->sha, CDD_SHA256_LEN);
        }
    }
    if (ma >= 0)
        r = cdd_manifest_fill_verify(m, ma, mi, pa);
    if (r)
        goto out;
    /* What we write must load: run it through the strict reader. */
    char *text = NULL;
    struct cdd_manifest *check = NULL;
    r = cdd_manifest_to_json(m, &text);
    if (!r)
        r = cdd_manifest_parse(text, strlen(text), archive, &check);
    free(text);
    if (!r) {
        /* The re-parsed copy carries doc_sha256 and every invariant. */
        free(check->name);
        check->name = m->name;
        m->name = NULL;
        cdd_manifest_free(m);
        m = check;
    }
out:
    if (r) {
        cdd_manifest_free(m);
        m = NULL;
    }
    *out = m;
    free(vh);
    free(pr.version_text);
    free(pr.first_path);
    free(sorted);
    collect_free(&c);
    return r;
}
