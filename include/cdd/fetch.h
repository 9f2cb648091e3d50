/* Downloads over HTTPS (libcurl, touched by fetch.c alone): an archive into
 * the cache — pinned, resumable, size-capped, retried — and small documents
 * (NVIDIA's redistrib JSON) into memory.
 *
 * Safety settings are not options: TLS peer and host verification always
 * on (a private CA is added with cacert, never by turning checks off);
 * https only, except that plain http is accepted for a download that a
 * sha256 pins (the pin, not the channel, vouches for the bytes), and a
 * redirect never leaves https for http; at most 5 redirects; no byte is
 * kept beyond the expected size; an HTTP error body is never saved. */
#ifndef CDD_FETCH_H
#define CDD_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/hash.h"

/* Network settings; zero means the default. */
struct cdd_net_opts {
    const char *cacert;       /* CA bundle file for private mirrors */
    long connect_timeout_s;   /* default 30 */
    long low_speed_limit;     /* bytes/s; abort below it ... (default 1024) */
    long low_speed_time_s;    /* ... for this long (default 60) */
    int retries;              /* retries of transient failures; <0: default 4 */
    double retry_max_wait_s;  /* cap on back-off and Retry-After (default 60) */
    /* Human notes ("HTTP 503, retrying in 2 s"): the core never prints; the
     * command layer shows them. May be NULL. */
    void (*note)(void *ud, const char *msg);
    void *note_ud;
};

struct cdd_fetch_opts {
    const char *const *urls;  /* tried in order until one delivers */
    size_t n_urls;
    const char *cache_dir;    /* resolved cache folder (cdd_cache_dir) */
    const char *filename;     /* the archive's file name (safe component) */
    const uint8_t *sha256;    /* the pin; NULL: unpinned (the caller decided
                                 that is allowed; https sources only) */
    int has_size;             /* exact expected size known */
    uint64_t size;
    uint64_t max_size;        /* cap when the size is unknown; 0: 8 GiB */
    struct cdd_net_opts net;
    /* Progress: phase "download" (done/total bytes, total 0 if unknown). */
    void (*progress)(void *ud, const char *phase, uint64_t done,
                     uint64_t total);
    void *progress_ud;
    /* Install while downloading (issue 20, cdd/feed.h): the .part is
     * offered to a reader as it grows. feed_tail: for a zip, the bytes of
     * its end fetched first by a Range request (0: none, tar.xz). Needs
     * has_size. NULL: no reader. */
    struct cdd_feed *feed;
    uint64_t feed_tail;
};

struct cdd_fetch_result {
    char *path;                     /* the verified file in the cache */
    uint8_t sha256[CDD_SHA256_LEN];
    uint64_t size;
    int cache_hit;                  /* no network used at all */
    char *url;                      /* where it came from; NULL on a hit */
    uint64_t downloaded;            /* body bytes received over the network */
    int requests;                   /* HTTP transfers made */
    int resumed;                    /* a .part was continued */
};

/* Obtain the file: a cache hit (re-hashed), else a download into the
 * entry's .part (resumed when one is there), renamed into place only when
 * its sha256 matches. Errors: CDD_E_CHECKSUM (exit 3: wrong bytes, wrong
 * size, more bytes than expected; the .part is deleted), CDD_E_NETWORK
 * (exit 4: the last URL tried and libcurl's message; a .part is kept for
 * resuming), CDD_E_UNPINNED (plain http without a pin), CDD_E_INTERRUPTED,
 * file-system errors. */
int cdd_fetch_archive(const struct cdd_fetch_opts *o,
                      struct cdd_fetch_result *res);
void cdd_fetch_result_clear(struct cdd_fetch_result *r);

/* Download a small document (at most max bytes) over https into memory
 * (*out NUL-terminated, caller frees). Retries like cdd_fetch_archive. */
int cdd_fetch_document(const char *url, const struct cdd_net_opts *net,
                       size_t max, char **out, size_t *len);

/* Is the URL plain http (case-insensitive scheme)? */
int cdd_url_is_http(const char *url);

#endif
