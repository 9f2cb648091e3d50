/* Obtaining a manifest's archive without --archive: decide the pin and the
 * sources, then let the cache and the downloader deliver a verified file;
 * with --archive, the same pin for the local file.
 *
 * Pins, in order: the manifest's archive.sha256; --sha256; NVIDIA's
 * redistrib JSON (--redistrib FILE|URL, else the manifest's redistrib_url).
 * Without any, nothing is downloaded unless allow_unpinned.
 * Sources, in order: --url (each), the manifest's archive.url list, the
 * redistrib entry's URL. CUDNN_DEPLOY_MIRROR, when set, replaces NVIDIA's
 * "https://developer.download.nvidia.com/compute/" prefix in the manifest's
 * and the redistrib's URLs (air-gapped fleets serving the same names). */
#ifndef CDD_OBTAIN_H
#define CDD_OBTAIN_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/fetch.h"
#include "cdd/hash.h"
#include "cdd/manifest.h"

#define CDD_NVIDIA_PREFIX "https://developer.download.nvidia.com/compute/"
#define CDD_MIRROR_ENV "CUDNN_DEPLOY_MIRROR"

/* What pinned an archive's bytes (receipts and reports name it). */
enum cdd_pin {
    CDD_PIN_NONE = 0,   /* not decided (the install failed before) */
    CDD_PIN_MANIFEST,   /* the manifest's archive sha256 */
    CDD_PIN_OPTION,     /* --sha256 */
    CDD_PIN_REDISTRIB,  /* NVIDIA's redistrib JSON */
    CDD_PIN_PER_FILE,   /* no archive pin, but every file hashed */
    CDD_PIN_UNPINNED    /* --allow-unpinned */
};

/* "manifest", "--sha256", "redistrib", "per-file", "unpinned"; NULL for
 * CDD_PIN_NONE. */
const char *cdd_pin_name(enum cdd_pin p);

struct cdd_obtain_opts {
    const struct cdd_manifest *m;
    const char *const *urls;  /* --url, in order */
    size_t n_urls;
    const uint8_t *sha256;    /* --sha256 (CDD_SHA256_LEN bytes), may be
                                 NULL */
    const char *redistrib;    /* --redistrib FILE|URL, may be NULL */
    const char *cache_dir;    /* --cache-dir, NULL: default */
    int allow_unpinned;
    struct cdd_net_opts net;
    void (*progress)(void *ud, const char *phase, uint64_t done,
                     uint64_t total);
    void *progress_ud;
    /* Install while downloading (cdd/fetch.h, cdd/feed.h); NULL: none. */
    struct cdd_feed *feed;
    uint64_t feed_tail;
};

struct cdd_obtain_result {
    struct cdd_fetch_result fetch; /* path, sha256, size, url, cache_hit... */
    int pinned;
    enum cdd_pin pin_source; /* MANIFEST, OPTION, REDISTRIB, UNPINNED */
    char sha256_hex[CDD_SHA256_HEX]; /* the pin (or the computed hash) */
    char *redistrib_source;  /* file or URL read, NULL if none */
    char *cache_dir;
};

int cdd_obtain_archive(const struct cdd_obtain_opts *o,
                       struct cdd_obtain_result *res);

/* The same pin for a local archive (install --archive FILE), without a
 * download: the manifest's sha256, --sha256, or --redistrib FILE|URL (read
 * only when o->redistrib is given: a file already here costs no network).
 * The file's size is compared with the pinned size (manifest or redistrib)
 * before a byte of it is read: another size is CDD_E_CHECKSUM ("wrong
 * file"). On success res->fetch.path is archive, res->fetch.sha256 the pin
 * when res->pinned, res->fetch.size the file's size. */
int cdd_obtain_local(const struct cdd_obtain_opts *o, const char *archive,
                     struct cdd_obtain_result *res);
void cdd_obtain_result_clear(struct cdd_obtain_result *r);

/* ---- install while downloading (issue 20, docs/fetch.md) ----------------
 * cdd_obtain_archive on a thread of its own, with a feed (cdd/feed.h): the
 * caller waits for the feed to be READY, reads the .part through it while
 * it arrives, and joins with cdd_obtain_stream_finish, which returns what
 * cdd_obtain_archive returned. o is copied (its pointers must outlive the
 * stream); its callbacks run on the download's thread. For a zip (by the
 * manifest's file name) the first request is for its last
 * CDD_STREAM_ZIP_TAIL bytes (a quarter of a smaller zip). */
#define CDD_STREAM_ZIP_TAIL (1u << 20)
struct cdd_obtain_stream;
int cdd_obtain_stream_start(const struct cdd_obtain_opts *o,
                            struct cdd_obtain_stream **out);
struct cdd_feed *cdd_obtain_stream_feed(struct cdd_obtain_stream *s);
/* *abandoned: the feed stopped offering bytes it had offered (cdd/feed.h,
 * cdd_feed_abandon): a reader's failure then says nothing of the archive. */
int cdd_obtain_stream_finish(struct cdd_obtain_stream *s,
                             struct cdd_obtain_result *res, int *abandoned);

/* Plan without fetching (install --dry-run, Ansible's check mode): the pin
 * and the sources decided as cdd_obtain_archive() would (the redistrib JSON
 * is read when it is what pins: a document, never the archive), then only a
 * look into the cache: nothing is downloaded, and nothing in the cache is
 * created, changed or removed. cached: a file of ours with one link, of the
 * pinned size, is at cache_path (it is still hashed when used). */
struct cdd_obtain_plan {
    char *url;            /* the first source to be tried (malloc'd) */
    size_t n_urls;        /* sources in all */
    int has_size;
    uint64_t size;        /* the pinned size when has_size */
    int pinned;
    enum cdd_pin pin_source;
    uint8_t sha256[CDD_SHA256_LEN];
    char sha256_hex[CDD_SHA256_HEX];
    char *cache_path;     /* where the download would be kept (pinned) */
    int cached;
    char *redistrib_source;
};
int cdd_obtain_plan(const struct cdd_obtain_opts *o, struct cdd_obtain_plan *p);
void cdd_obtain_plan_clear(struct cdd_obtain_plan *p);

/* url with NVIDIA's prefix replaced by mirror (malloc'd copy of url when
 * mirror is NULL or the prefix does not match). */
char *cdd_mirror_url(const char *url, const char *mirror);

#endif
