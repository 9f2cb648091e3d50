/* cdd_extract with several workers (zip) and with the decode / hash+write
 * pipeline (tar.xz), against the one-thread result: the same entries, each
 * exactly once, with the same index, size and sha256; entry() in archive
 * order on the calling thread; a failure in one worker is the one returned
 * and leaves no file open; the thread wrapper itself. Archives are written
 * at test time with libarchive. */
#include "fixture.h"
#include "test.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdatomic.h>

#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "cdd/manifest.h"
#include "cdd/pathsafe.h"
#include "cdd/thread.h"

#define NF 12
#define TOPD "cudnn-windows-x86_64-8.5.0.96_cuda11-archive/"

/* File i: a name of the Windows layout and bytes of its own, sizes spread
 * from a few bytes to 3 MB so that the workers get unequal shares. */
static const char *fname(int i, char *buf, size_t len)
{
    static const char *const dirs[] = {"bin/", "include/", "lib/x64/"};
    static const char *const ext[] = {".dll", ".h", ".lib"};
    snprintf(buf, len, "%sf%02d%s", dirs[i % 3], i, ext[i % 3]);
    return buf;
}

static size_t fsize(int i)
{
    return i == 5 ? 3u << 20 : (size_t)(i * 37000 + 11);
}

static unsigned char *fdata(int i)
{
    size_t n = fsize(i);
    unsigned char *d = malloc(n);
    uint32_t x = 2463534242u + (uint32_t)i;
    for (size_t k = 0; k < n; k++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        d[k] = (unsigned char)"abcdefghijklmnopqrstuvwxyz0123456789"[x % 36];
    }
    return d;
}

static void write_archive(const char *file, int zip)
{
    struct archive *a = archive_write_new();
    char name[256], full[512];
    if (zip) {
        archive_write_set_format_zip(a);
    } else {
        archive_write_set_format_pax_restricted(a);
        archive_write_add_filter_xz(a);
    }
    CHECK_INT(archive_write_open_filename(a, file), ARCHIVE_OK);
    for (int i = 0; i < NF; i++) {
        struct archive_entry *e = archive_entry_new();
        unsigned char *d = fdata(i);
        snprintf(full, sizeof full, TOPD "%s", fname(i, name, sizeof name));
        archive_entry_set_pathname(e, full);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, (la_int64_t)fsize(i));
        CHECK_INT(archive_write_header(a, e), ARCHIVE_OK);
        CHECK(archive_write_data(a, d, fsize(i)) == (la_ssize_t)fsize(i));
        archive_entry_free(e);
        free(d);
    }
    CHECK_INT(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
}

static struct cdd_manifest *manifest(void)
{
    struct cdd_manifest *m = calloc(1, sizeof *m);
    char name[256];
    m->source = strdup("test-manifest.json");
    m->name = strdup("test-manifest");
    m->schema_version = CDD_MANIFEST_SCHEMA;
    m->product = strdup("cudnn");
    m->version = strdup("8.5.0.96");
    m->cuda_major = 11;
    m->platform = CDD_PLATFORM_WINDOWS_X86_64;
    m->archive.filename = strdup("test-archive");
    m->archive.strip_components = 1;
    m->files_exact = 1;
    m->files = calloc(NF, sizeof *m->files);
    m->n_files = NF;
    for (int i = 0; i < NF; i++) {
        struct cdd_mfile *mf = &m->files[i];
        unsigned char *d = fdata(i);
        struct cdd_sha256 *h = NULL;
        mf->path = strdup(fname(i, name, sizeof name));
        mf->role = i % 3 == 0 ? CDD_ROLE_RUNTIME
                   : i % 3 == 1 ? CDD_ROLE_HEADER
                                : CDD_ROLE_IMPORT_LIB;
        cdd_sha256_new(&h);
        cdd_sha256_update(h, d, fsize(i));
        cdd_sha256_final(h, mf->sha256);
        cdd_sha256_free(h);
        mf->has_sha256 = mf->has_size = 1;
        mf->size = fsize(i);
        free(d);
    }
    return m;
}

/* A sink that may be called from several threads: everything it records
 * is per entry index, counters are atomic, and it writes each file. */
struct psink {
    const char *outdir;
    const char *fail_path;      /* end() of this entry fails */
    int cancel_in_big;          /* Ctrl-C when the big entry begins */
    atomic_int n_begin, n_end, open_files, n_entry_bad;
    int n_entry;
    char path[NF][256];
    int ended[NF];
    uint64_t size[NF];
    uint8_t sha[NF][CDD_SHA256_LEN];
    struct cdd_mutex *mu;
    int n_progress, backwards;
    uint64_t last;
};

static int ps_entry(void *ud, const struct cdd_xentry *e)
{
    struct psink *s = ud;
    /* One call per entry, in order, before its data. */
    if ((int)e->index != s->n_entry || e->index >= NF)
        atomic_fetch_add(&s->n_entry_bad, 1);
    else
        snprintf(s->path[e->index], sizeof s->path[0], "%s", e->path);
    s->n_entry++;
    return 0;
}

static int ps_begin(void *ud, const struct cdd_xentry *e,
                    struct cdd_file **out)
{
    struct psink *s = ud;
    char flat[1024];
    atomic_fetch_add(&s->n_begin, 1);
    if (s->cancel_in_big && e->index == 5)
        cdd_cancel_request();
    if (e->index >= NF || strcmp(s->path[e->index], e->path) != 0)
        atomic_fetch_add(&s->n_entry_bad, 1);
    snprintf(flat, sizeof flat, "%s/%zu", s->outdir, e->index);
    int r = cdd_fs_create(flat, 0, out);
    if (!r)
        atomic_fetch_add(&s->open_files, 1);
    return r;
}

static int ps_end(void *ud, const struct cdd_xentry *e, struct cdd_file *f)
{
    struct psink *s = ud;
    int r = 0;
    atomic_fetch_add(&s->n_end, 1);
    if (f) {
        atomic_fetch_sub(&s->open_files, 1);
        r = cdd_file_close(f);
    }
    if (e->index < NF) {
        s->ended[e->index]++;
        s->size[e->index] = e->size;
        memcpy(s->sha[e->index], e->sha256, CDD_SHA256_LEN);
    }
    if (s->fail_path && strcmp(e->path, s->fail_path) == 0)
        return cdd_fail(CDD_E_IO, "sink", 0, "end of %s fails on purpose",
                        e->path);
    return r;
}

static void ps_progress(void *ud, uint64_t done, uint64_t total)
{
    struct psink *s = ud;
    /* Never two at once: extract.c serialises progress calls. */
    if (done < s->last || done > total)
        s->backwards = 1;
    s->last = done;
    s->n_progress++;
}

static int run(const char *file, int jobs, int pipeline, struct psink *s)
{
    struct cdd_manifest *m = manifest();
    struct cdd_extract_opts o = {.m = m, .jobs = jobs, .pipeline = pipeline};
    struct cdd_extract_sink sink = {.ud = s, .entry = ps_entry,
                                    .begin = ps_begin, .end = ps_end,
                                    .progress = ps_progress};
    char dir[64];
    snprintf(dir, sizeof dir, "out-%d-%d", jobs, pipeline);
    s->outdir = fx_tmp(dir);
    cdd_fs_remove_tree(s->outdir);
    cdd_fs_mkdirs(s->outdir, NULL);
    cdd_clear_error();
    int r = cdd_extract(file, &o, &sink);
    cdd_manifest_free(m);
    return r;
}

static void check_like(const struct psink *ref, const struct psink *s,
                       const char *what)
{
    CHECK_MSG(atomic_load(&s->n_entry_bad) == 0, "%s: entry order", what);
    CHECK_INT(s->n_entry, NF);
    CHECK_INT(atomic_load(&s->n_end), NF);
    CHECK_INT(atomic_load(&s->open_files), 0);
    CHECK(!s->backwards && s->n_progress > 0);
    for (int i = 0; i < NF; i++) {
        CHECK_MSG(s->ended[i] == 1, "%s: entry %d ended %d times", what, i,
                  s->ended[i]);
        CHECK_STR(s->path[i], ref->path[i]);
        CHECK(s->size[i] == ref->size[i]);
        CHECK(memcmp(s->sha[i], ref->sha[i], CDD_SHA256_LEN) == 0);
    }
}

static void test_zip_workers_match_one_thread(void)
{
    const char *file = fx_tmp("p.zip");
    static struct psink ref, s;
    write_archive(file, 1);
    memset(&ref, 0, sizeof ref);
    CHECK_INT(run(file, 1, 0, &ref), 0);
    check_like(&ref, &ref, "one thread");
    const int jobs[] = {2, 3, 8, 64};
    for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++)
        for (int pipe = 0; pipe <= 1; pipe++) {
            char what[64];
            snprintf(what, sizeof what, "--jobs %d pipeline %d", jobs[k],
                     pipe);
            memset(&s, 0, sizeof s);
            CHECK_MSG(run(file, jobs[k], pipe, &s) == 0, "%s: %s", what,
                      cdd_last_error()->msg);
            check_like(&ref, &s, what);
            /* The big file's bytes reached its file. */
            char p[1024];
            uint8_t d[CDD_SHA256_LEN];
            snprintf(p, sizeof p, "%s/5", s.outdir);
            CHECK_INT(cdd_sha256_file(p, d, NULL), 0);
            CHECK(memcmp(d, ref.sha[5], CDD_SHA256_LEN) == 0);
        }
}

static void test_xz_pipeline_matches_one_thread(void)
{
    const char *file = fx_tmp("p.tar.xz");
    static struct psink ref, s;
    write_archive(file, 0);
    memset(&ref, 0, sizeof ref);
    CHECK_INT(run(file, 1, 0, &ref), 0);
    memset(&s, 0, sizeof s);
    /* jobs does not split a tar: one reader, the pipeline beside it. */
    CHECK_INT(run(file, 4, 1, &s), 0);
    check_like(&ref, &s, "tar.xz pipeline");
}

static void test_worker_failure_is_the_one_returned(void)
{
    const char *file = fx_tmp("p.zip");
    static struct psink s;
    char name[256];
    write_archive(file, 1);
    for (int jobs = 1; jobs <= 8; jobs *= 2)
        for (int victim = 0; victim < NF; victim += 5) {
            memset(&s, 0, sizeof s);
            s.fail_path = fname(victim, name, sizeof name);
            CHECK_INT(run(file, jobs, jobs > 2, &s), CDD_E_IO);
            CHECK_MSG(strstr(cdd_last_error()->msg, s.fail_path) != NULL,
                      "jobs %d: message \"%s\"", jobs, cdd_last_error()->msg);
            /* Files in flight in the stopped workers (one each at most)
             * were aborted by cdd_extract, not handed to end(). */
            CHECK(atomic_load(&s.open_files) <= jobs);
        }
}

static void test_cancel_stops_workers(void)
{
    const char *file = fx_tmp("p.zip");
    static struct psink s;
    write_archive(file, 1);
    for (int jobs = 1; jobs <= 4; jobs++) {
        memset(&s, 0, sizeof s);
        s.cancel_in_big = 1;
        CHECK_INT(run(file, jobs, jobs > 2, &s), CDD_E_INTERRUPTED);
        cdd_cancel_reset();
        CHECK(s.ended[5] == 0);
        CHECK(atomic_load(&s.n_end) < NF);
    }
}

static int add_n(void *arg)
{
    atomic_int *n = arg;
    for (int i = 0; i < 1000; i++)
        atomic_fetch_add(n, 1);
    return 7;
}

static void test_threads(void)
{
    struct cdd_thread *t[4];
    atomic_int n;
    atomic_init(&n, 0);
    for (int i = 0; i < 4; i++)
        CHECK_INT(cdd_thread_start(&t[i], add_n, &n), 0);
    for (int i = 0; i < 4; i++)
        CHECK_INT(cdd_thread_join(t[i]), 7);
    CHECK_INT(atomic_load(&n), 4000);
    CHECK(cdd_cpu_count() >= 1);
    CHECK_INT(cdd_thread_join(NULL), 0);
}

static void test_cleanup(void)
{
    if (!getenv("CDD_TEST_KEEP"))
        CHECK_INT(cdd_fs_remove_tree(fx_root()), 0);
}

TEST_MAIN(TEST(test_threads), TEST(test_zip_workers_match_one_thread),
          TEST(test_xz_pipeline_matches_one_thread),
          TEST(test_worker_failure_is_the_one_returned),
          TEST(test_cancel_stops_workers), TEST(test_cleanup))
