/* Downloads with libcurl — the only file that uses it. An archive goes into
 * its cache entry's .part, hashed while it is written, resumed with a Range
 * request after an interruption, capped at its expected size, retried with
 * exponential back-off on transient failures, and renamed into the cache
 * only when its sha256 matches the pin. Small documents (redistrib JSON)
 * come into memory the same way, minus the resume.
 *
 * What a server says is checked, not believed: a 206 must start exactly
 * where the .part ends; a 200 to a range request means the server ignored
 * the range, so the .part starts again from zero; an error status is never
 * written anywhere (CURLOPT_FAILONERROR, and the status is checked again
 * before the first body byte is kept). */
#include "cdd/fetch.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "cache.h"
#include "cdd/compat_attr.h"
#include "cdd/error.h"
#include "cdd/feed.h"
#include "cdd/fsops.h"
#include "cdd/strbuf.h"
#include "cdd/sys.h"

#define DEFAULT_MAX_SIZE (8ull << 30) /* no cuDNN archive comes near 8 GiB */
#define DEFAULT_CONNECT_TIMEOUT 30L
#define DEFAULT_LOW_SPEED_LIMIT 1024L
#define DEFAULT_LOW_SPEED_TIME 60L
#define DEFAULT_RETRIES 4
#define DEFAULT_RETRY_MAX_WAIT 60.0
#define MAX_REDIRECTS 5L
/* A server that keeps answering range requests wrongly gets this many
 * fresh starts from zero before we give up on it. */
#define MAX_RESTARTS 2
#define USER_AGENT "cudnn-deploy/" CDD_VERSION_STRING

/* Why our own callbacks stopped a transfer. */
enum stop_reason {
    STOP_NONE = 0,
    STOP_TOO_BIG,     /* more bytes than the expected size / cap */
    STOP_BAD_RANGE,   /* 206 not starting where the .part ends */
    STOP_BAD_STATUS,  /* a status we do not store a body for */
    STOP_SIZE_DIFFERS,/* Content-Range or a 200's Content-Length says the
                         file has another size than the pin: the wrong
                         file, not a network fault */
    STOP_LOCAL,       /* writing the .part failed (recorded by fsops) */
    STOP_NO_RANGE,    /* a zip's tail asked for, the whole file offered */
    STOP_CANCEL
};

/* One transfer's state, shared by the header, body and progress callbacks. */
struct xfer {
    const char *url;
    /* destination: a .part file, or memory */
    const char *part;
    struct cdd_file *file;
    char *mem;
    size_t mem_len, mem_cap;
    struct cdd_sha256 *h;
    uint64_t have;            /* bytes kept so far (.part length) */
    uint64_t cap;             /* never keep more than this */
    int has_size;
    uint64_t size;
    int range_requested;
    uint64_t range_from;
    /* the current response's headers */
    long status;
    long long cr_start, cr_total, content_length;
    long retry_after;
    int body_started;
    int restarted;            /* a 200 answered our range: from zero */
    uint64_t received;        /* body bytes over the network */
    uint64_t total;           /* for progress; 0 when unknown */
    enum stop_reason stop;
    int local_err;
    void (*progress)(void *ud, const char *phase, uint64_t done,
                     uint64_t total);
    void *progress_ud;
    /* install while downloading (cdd/feed.h) */
    struct cdd_feed *feed;
    int published;            /* a reader has the .part's inode below */
    uint64_t pub_dev, pub_ino;
    int tail_probe;           /* this transfer asks for a zip's tail */
};

static int curl_ready;

static int net_init(void)
{
    if (curl_ready)
        return 0;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return cdd_fail(CDD_E_NETWORK, NULL, 0,
                        "cannot initialise libcurl");
    curl_ready = 1;
    return 0;
}

static int ascii_ieq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x >= 'A' && x <= 'Z')
            x += 32;
        if (y >= 'A' && y <= 'Z')
            y += 32;
        if (x != y)
            return 0;
    }
    return 1;
}

int cdd_url_is_http(const char *url)
{
    return url && strlen(url) >= 7 && ascii_ieq(url, "http://", 7);
}

static int url_is_https(const char *url)
{
    return url && strlen(url) >= 8 && ascii_ieq(url, "https://", 8);
}

static void note(const struct cdd_net_opts *net, const char *fmt, ...)
    CDD_PRINTF(2, 3);

static void note(const struct cdd_net_opts *net, const char *fmt, ...)
{
    /* The note names URLs and error messages whole. A failure to build it
     * must not replace the error being reported: the record is kept. */
    struct cdd_sb msg;
    struct cdd_errsave saved;
    va_list ap;
    int r;
    if (!net->note)
        return;
    cdd_error_save(&saved);
    cdd_sb_init(&msg, CDD_TEXT_MAX, "download note");
    va_start(ap, fmt);
    r = cdd_sb_vaddf(&msg, fmt, ap);
    va_end(ap);
    if (r)
        cdd_error_restore(&saved);
    net->note(net->note_ud, r ? "(a note could not be shown: it was too long "
                                "or memory ran out)"
                              : cdd_sb_str(&msg));
    cdd_sb_free(&msg);
    cdd_error_save_free(&saved);
}

/* ---- callbacks --------------------------------------------------------- */

/* Value of header 'name' in line (not NUL-terminated), copied into val. */
static int header_value(const char *line, size_t len, const char *name,
                        char *val, size_t vlen)
{
    size_t n = strlen(name);
    if (len <= n || line[n] != ':' || !ascii_ieq(line, name, n))
        return 0;
    line += n + 1;
    len -= n + 1;
    while (len && (*line == ' ' || *line == '\t'))
        line++, len--;
    while (len && (line[len - 1] == '\r' || line[len - 1] == '\n' ||
                   line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    /* A value too long for a number is not understood (left empty, which
     * no caller takes for a number), never cut to one. */
    if (len >= vlen)
        len = 0;
    memcpy(val, line, len);
    val[len] = '\0';
    return 1;
}

static long long parse_ull(const char *s, const char **end)
{
    long long v = 0;
    const char *p = s;
    while (*p >= '0' && *p <= '9' && v < (1LL << 60))
        v = v * 10 + (*p++ - '0');
    *end = p;
    return p == s ? -1 : v;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud)
{
    struct xfer *x = ud;
    size_t len = size * nitems;
    char val[256]; /* fixed: a numeric header value; a longer one is refused */
    const char *end;
    if (len >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
        /* A new response (a redirect, 100-continue, the final one):
         * forget what the previous one said. */
        const char *sp = memchr(buf, ' ', len);
        x->status = 0;
        if (sp && (size_t)(sp - buf) + 4 <= len) {
            long long st = parse_ull(sp + 1, &end);
            x->status = st > 0 && st < 1000 ? (long)st : 0;
        }
        x->cr_start = x->cr_total = x->content_length = -1;
        x->retry_after = -1;
    } else if (header_value(buf, len, "content-range", val, sizeof val)) {
        /* "bytes 100-999/1000" or "bytes 100-999/ *" */
        if (strncmp(val, "bytes ", 6) == 0) {
            x->cr_start = parse_ull(val + 6, &end);
            const char *slash = strchr(val, '/');
            x->cr_total = slash ? parse_ull(slash + 1, &end) : -1;
        }
    } else if (header_value(buf, len, "content-length", val, sizeof val)) {
        x->content_length = parse_ull(val, &end);
        if (*end)
            x->content_length = -1;
    } else if (header_value(buf, len, "retry-after", val, sizeof val)) {
        /* Seconds only; an HTTP-date falls back to our own back-off. */
        long long s = parse_ull(val, &end);
        x->retry_after = s >= 0 && !*end ? (long)(s > 86400 ? 86400 : s) : -1;
    }
    return len;
}

/* Start the .part again from zero. */
static int restart_part(struct xfer *x)
{
    int r;
    cdd_file_abort(x->file);
    x->file = NULL;
    if ((r = cdd_fs_unlink(x->part)) ||
        (r = cdd_fs_create(x->part, 0, &x->file)) ||
        (r = cdd_sha256_reset(x->h)))
        return r;
    x->have = 0;
    if (x->feed && x->published)
        cdd_feed_abandon(x->feed, "the server sent the whole file again "
                                  "instead of the rest: the streamed install "
                                  "stops, and installs once it is here");
    return 0;
}

/* Decide, before the first body byte is kept, whether this response's
 * body belongs in the .part at all. */
static int start_body(struct xfer *x)
{
    if (x->status == 206) {
        if (!x->range_requested || x->cr_start < 0 ||
            (uint64_t)x->cr_start != x->range_from) {
            x->stop = STOP_BAD_RANGE;
            return -1;
        }
        if (x->has_size && x->cr_total >= 0 &&
            (uint64_t)x->cr_total != x->size) {
            x->stop = STOP_SIZE_DIFFERS;
            return -1;
        }
    } else if (x->status == 200 && x->tail_probe) {
        x->stop = STOP_NO_RANGE;
        return -1;
    } else if (x->status == 200) {
        /* A whole file of another size is another file (a mirror serving a
         * stale or cut copy): refused before its first byte, not retried. */
        if (x->has_size && x->content_length >= 0 &&
            (uint64_t)x->content_length != x->size) {
            x->cr_total = x->content_length;
            x->stop = STOP_SIZE_DIFFERS;
            return -1;
        }
        if (x->range_requested) {
            /* The server ignored the range and sends the whole file. */
            int r = restart_part(x);
            if (r) {
                x->stop = STOP_LOCAL;
                x->local_err = r;
                return -1;
            }
            x->restarted = 1;
        }
    } else {
        x->stop = STOP_BAD_STATUS;
        return -1;
    }
    if (x->content_length >= 0 &&
        x->have + (uint64_t)x->content_length > x->cap) {
        x->stop = STOP_TOO_BIG;
        return -1;
    }
    x->total = x->has_size ? x->size
               : x->content_length >= 0 ? x->have + (uint64_t)x->content_length
                                        : 0;
    x->body_started = 1;
    return 0;
}

static size_t on_body(char *buf, size_t size, size_t nmemb, void *ud)
{
    struct xfer *x = ud;
    size_t len = size * nmemb;
    int r;
    if (!x->body_started && start_body(x))
        return 0;
    if (len > x->cap - x->have) {
        x->stop = STOP_TOO_BIG;
        return 0;
    }
    if (x->file) {
        r = cdd_file_write(x->file, buf, len);
    } else {
        /* Bounded by the download's cap (checked above, as for a file),
         * and its NUL. */
        size_t max = x->cap < SIZE_MAX ? (size_t)x->cap + 1 : SIZE_MAX;
        r = cdd_grow(&x->mem, &x->mem_cap, x->mem_len + len + 1, 1, max,
                     "bytes of a download held in memory");
        if (r < 0)
            r = cdd_fail(r, x->url, 0, "%s", cdd_last_error()->msg);
        if (!r) {
            memcpy(x->mem + x->mem_len, buf, len);
            x->mem_len += len;
            x->mem[x->mem_len] = '\0';
        }
    }
    if (!r && x->h)
        r = cdd_sha256_update(x->h, buf, len);
    if (r) {
        x->stop = STOP_LOCAL;
        x->local_err = r;
        return 0;
    }
    x->have += len;
    x->received += len;
    if (x->feed && x->file)
        cdd_feed_advance(x->feed, x->have);
    if (x->progress)
        x->progress(x->progress_ud, "download", x->have, x->total);
    return len;
}

/* Also called about once a second while nothing arrives: Ctrl-C must stop
 * a stalled download without waiting for the low-speed limit. */
static int on_xferinfo(void *ud, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow)
{
    struct xfer *x = ud;
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    if (cdd_cancelled()) {
        x->stop = STOP_CANCEL;
        return 1;
    }
    return 0;
}

/* ---- one transfer -------------------------------------------------------- */

/* Options that make a download safe. Failing to set one of them is an
 * error: a libcurl that cannot restrict protocols must not be used. */
static int setup(CURL *c, struct xfer *x, const struct cdd_net_opts *net,
                 int allow_http, char *errbuf)
{
    const char *protos = allow_http ? "http,https" : "https";
    CURLcode e = CURLE_OK;
#define SET(opt, val)                                                          \
    do {                                                                       \
        if (e == CURLE_OK)                                                     \
            e = curl_easy_setopt(c, opt, val);                                 \
    } while (0)
    SET(CURLOPT_URL, x->url);
    SET(CURLOPT_ERRORBUFFER, errbuf);
#if LIBCURL_VERSION_NUM >= 0x075500
    SET(CURLOPT_PROTOCOLS_STR, protos);
    SET(CURLOPT_REDIR_PROTOCOLS_STR, protos);
#else
    SET(CURLOPT_PROTOCOLS,
        (long)(CURLPROTO_HTTPS | (allow_http ? CURLPROTO_HTTP : 0)));
    SET(CURLOPT_REDIR_PROTOCOLS,
        (long)(CURLPROTO_HTTPS | (allow_http ? CURLPROTO_HTTP : 0)));
    (void)protos;
#endif
    SET(CURLOPT_SSL_VERIFYPEER, 1L);
    SET(CURLOPT_SSL_VERIFYHOST, 2L);
    if (net->cacert)
        SET(CURLOPT_CAINFO, net->cacert);
    SET(CURLOPT_FOLLOWLOCATION, 1L);
    SET(CURLOPT_MAXREDIRS, MAX_REDIRECTS);
    SET(CURLOPT_FAILONERROR, 1L);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_CONNECTTIMEOUT, net->connect_timeout_s > 0
                                    ? net->connect_timeout_s
                                    : DEFAULT_CONNECT_TIMEOUT);
    SET(CURLOPT_LOW_SPEED_LIMIT, net->low_speed_limit > 0
                                     ? net->low_speed_limit
                                     : DEFAULT_LOW_SPEED_LIMIT);
    SET(CURLOPT_LOW_SPEED_TIME, net->low_speed_time_s > 0
                                    ? net->low_speed_time_s
                                    : DEFAULT_LOW_SPEED_TIME);
    SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->cap);
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_USERAGENT, USER_AGENT);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, x);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, x);
    SET(CURLOPT_XFERINFOFUNCTION, on_xferinfo);
    SET(CURLOPT_XFERINFODATA, x);
    SET(CURLOPT_NOPROGRESS, 0L);
    /* CURLOPT_RANGE rather than CURLOPT_RESUME_FROM: libcurl's resume
     * fails outright on a 200, which we answer by starting from zero. */
    char range[32]; /* fixed: "N-" for a byte offset */
    snprintf(range, sizeof range, "%llu-", (unsigned long long)x->range_from);
    if (x->range_requested)
        SET(CURLOPT_RANGE, range);
#undef SET
    if (e != CURLE_OK)
        return cdd_fail(CDD_E_NOTSUP, x->url, 0,
                        "this libcurl refuses a required setting: %s",
                        curl_easy_strerror(e));
    return 0;
}

/* Outcome of one transfer, as the retry loop sees it. */
enum outcome {
    OUT_DONE,       /* body complete */
    OUT_RESTART,    /* start the .part again from zero, now */
    OUT_TRANSIENT,  /* retry after a pause */
    OUT_FATAL       /* error recorded; give up on this URL */
};

static int transient_curl(CURLcode cc)
{
    switch (cc) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return 1;
    default:
        return 0;
    }
}

static int transient_status(long st)
{
    return st == 408 || st == 429 || (st >= 500 && st <= 599);
}

/* Perform one transfer; classify what happened. *err gets the CDD_E_* code
 * for OUT_FATAL (recorded with cdd_fail). */
static enum outcome perform(struct xfer *x, const struct cdd_net_opts *net,
                            int allow_http, int *err)
{
    char errbuf[CURL_ERROR_SIZE]; /* fixed: curl's own error buffer size */
    CURL *c = curl_easy_init();
    CURLcode cc;
    enum outcome out = OUT_FATAL;
    errbuf[0] = '\0';
    *err = 0;
    x->status = 0;
    x->cr_start = x->cr_total = x->content_length = -1;
    x->retry_after = -1;
    x->body_started = 0;
    x->restarted = 0;
    x->stop = STOP_NONE;
    x->local_err = 0;
    if (!c) {
        *err = cdd_fail(CDD_E_NOMEM, x->url, 0, "cannot start a transfer");
        return OUT_FATAL;
    }
    if ((*err = setup(c, x, net, allow_http, errbuf)))
        goto out;
    cc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (cc == CURLE_OK && !x->body_started && start_body(x) == 0)
        x->body_started = 1; /* an empty body: still check the status */
    if (cc == CURLE_OK && x->stop == STOP_NONE) {
        out = OUT_DONE;
        goto out;
    }
    switch (x->stop) {
    case STOP_NONE:
        break;
    case STOP_CANCEL:
        *err = cdd_fail(CDD_E_INTERRUPTED, x->url, 0,
                        "interrupted during the download");
        goto out;
    case STOP_LOCAL:
        *err = x->local_err;
        goto out;
    case STOP_NO_RANGE:
        *err = cdd_fail(CDD_E_NETWORK, x->url, 0,
                        "the server ignores Range requests");
        goto out;
    case STOP_TOO_BIG:
        *err = cdd_fail(CDD_E_CHECKSUM, x->url, 0,
                        "the server sends more than the %s %llu bytes "
                        "(the wrong file)",
                        x->has_size ? "expected" : "allowed",
                        (unsigned long long)x->cap);
        goto out;
    case STOP_SIZE_DIFFERS:
        *err = cdd_fail(CDD_E_CHECKSUM, x->url, 0,
                        "the server's file has %lld bytes, but the pin says "
                        "%llu: the wrong file (not downloaded)",
                        x->cr_total, (unsigned long long)x->size);
        goto out;
    case STOP_BAD_RANGE:
        if (x->range_requested)
            note(net, "%s: answered a range request from byte %llu with "
                      "another start; starting again from zero",
                 x->url, (unsigned long long)x->range_from);
        else
            note(net, "%s: answered a plain request with a part of the "
                      "file; asking again",
                 x->url);
        out = OUT_RESTART;
        goto out;
    case STOP_BAD_STATUS:
        *err = cdd_fail(CDD_E_NETWORK, x->url, 0,
                        "unexpected HTTP status %ld (the body is not kept)",
                        x->status);
        goto out;
    }
    if (cc == CURLE_HTTP_RETURNED_ERROR && code == 416 && x->range_requested &&
        x->has_size && x->cr_total >= 0 && (uint64_t)x->cr_total != x->size) {
        /* "bytes * /N": the server's whole file is N bytes, not the pin's. */
        *err = cdd_fail(CDD_E_CHECKSUM, x->url, 0,
                        "the server's file has %lld bytes, but the pin says "
                        "%llu: the wrong file",
                        x->cr_total, (unsigned long long)x->size);
        goto out;
    }
    if (cc == CURLE_HTTP_RETURNED_ERROR && code == 416 && x->range_requested) {
        /* The .part is not a prefix the server can continue. */
        note(net, "%s: the server cannot continue from byte %llu; starting "
                  "again from zero",
             x->url, (unsigned long long)x->range_from);
        out = OUT_RESTART;
        goto out;
    }
    if (cc == CURLE_FILESIZE_EXCEEDED) {
        *err = cdd_fail(CDD_E_CHECKSUM, x->url, 0,
                        "the server announces more than the %s %llu bytes "
                        "(the wrong file)",
                        x->has_size ? "expected" : "allowed",
                        (unsigned long long)x->cap);
        goto out;
    }
    const char *msg = errbuf[0] ? errbuf : curl_easy_strerror(cc);
    int transient = cc == CURLE_HTTP_RETURNED_ERROR ? transient_status(code)
                                                    : transient_curl(cc);
    const char *hint = cc == CURLE_UNSUPPORTED_PROTOCOL && url_is_https(x->url)
                           ? " (a redirect may not leave https)"
                           : "";
    *err = cdd_fail(CDD_E_NETWORK, x->url, 0, "%s%s", msg, hint);
    out = transient ? OUT_TRANSIENT : OUT_FATAL;
out:
    curl_easy_cleanup(c);
    return out;
}

/* Pause before the next attempt: Retry-After when the server gave one, else
 * 1, 2, 4, ... seconds; both capped. Interruptible. */
static int pause_before_retry(const struct xfer *x,
                              const struct cdd_net_opts *net, int attempt,
                              int retries)
{
    double cap = net->retry_max_wait_s > 0 ? net->retry_max_wait_s
                                           : DEFAULT_RETRY_MAX_WAIT;
    double wait = x->retry_after >= 0 ? (double)x->retry_after
                                      : (double)(1L << (attempt < 10 ? attempt : 10));
    if (wait > cap)
        wait = cap;
    const struct cdd_errinfo *e = cdd_last_error();
    note(net, "%s: %s; retrying in %.0f s (%d of %d)", x->url, e->msg, wait,
         attempt + 1, retries);
    double until = cdd_monotonic() + wait;
    while (cdd_monotonic() < until) {
        if (cdd_cancelled())
            return cdd_fail(CDD_E_INTERRUPTED, x->url, 0,
                            "interrupted while waiting to retry");
        cdd_sleep_ms(50);
    }
    return 0;
}

static int retries_of(const struct cdd_net_opts *net)
{
    return net->retries >= 0 ? net->retries : DEFAULT_RETRIES;
}

/* ---- archives -------------------------------------------------------------- */

/* Hash what the .part already holds into x->h (x->have = its length),
 * reading the file `held` is (the append handle's identity). */
static int hash_part(struct xfer *x, const struct cdd_finfo *held)
{
    struct cdd_finfo fi;
    struct cdd_rfile *f = NULL;
    unsigned char *buf = malloc(256 * 1024);
    uint64_t n = 0;
    int r;
    if (!buf)
        return cdd_fail(CDD_E_NOMEM, x->part, 0, NULL);
    if ((r = cdd_sha256_reset(x->h)) || (r = cdd_fs_open_read(x->part, &f)) ||
        (r = cdd_rfile_info(f, &fi)))
        goto out;
    if (fi.dev != held->dev || fi.ino != held->ino) {
        r = cdd_fail(CDD_E_IO, x->part, 0, "changed while being read");
        goto out;
    }
    for (;;) {
        size_t got = 0;
        if (cdd_cancelled()) {
            r = cdd_fail(CDD_E_INTERRUPTED, x->part, 0, "interrupted");
            goto out;
        }
        if ((r = cdd_rfile_read(f, buf, 256 * 1024, &got)) || got == 0)
            break;
        if ((r = cdd_sha256_update(x->h, buf, got)))
            break;
        n += got;
    }
    x->have = n;
out:
    cdd_rfile_close(f);
    free(buf);
    return r;
}

/* Open the .part for this attempt: continue it when it holds a usable
 * prefix, else start it empty. Sets range_requested / range_from. */
static int open_part(struct xfer *x)
{
    struct cdd_stat st;
    int r;
    x->range_requested = 0;
    x->range_from = 0;
    x->have = 0;
    struct cdd_finfo fi;
    int present = 0;
    /* Only a regular file of ours with one link is continued: a link, a
     * hard link to a file elsewhere, another account's file is removed
     * (its other name untouched) and the download starts afresh. */
    if ((r = cdd_cache_vet_file(x->part, &present)))
        return r;
    if (present && (r = cdd_fs_lstat(x->part, &st)))
        return r;
    if (present && (st.size == 0 || st.size > x->cap)) {
        if ((r = cdd_fs_unlink(x->part)))
            return r;
        present = 0;
    }
    if (!present) {
        if ((r = cdd_sha256_reset(x->h)))
            return r;
        return cdd_fs_create(x->part, 0, &x->file);
    }
    uint64_t size = 0;
    /* The handle appended to is checked, then hashed through the same
     * file: a name swapped in between is refused, never appended to. */
    if ((r = cdd_fs_open_append(x->part, &x->file, &size)) ||
        (r = cdd_cache_check_open(x->file, x->part, &fi)) ||
        (r = hash_part(x, &fi)))
        return r;
    if (size != x->have) /* changed under us: trust nothing */
        return cdd_fail(CDD_E_IO, x->part, 0, "changed while being read");
    x->range_requested = 1;
    x->range_from = x->have;
    return 0;
}

/* Install while downloading: offer the .part just opened to the reader
 * (cdd/feed.h), once; a .part that is another file by now (started again
 * from zero) ends the streaming, the download goes on. */
static void offer_part(struct xfer *x)
{
    struct cdd_finfo wi, ri;
    struct cdd_rfile *rf = NULL;
    if (!x->feed)
        return;
    if (cdd_file_info(x->file, &wi) < 0) {
        cdd_clear_error();
        cdd_feed_abandon(x->feed, "cannot read the download's file status");
        return;
    }
    if (x->published) {
        if (wi.dev != x->pub_dev || wi.ino != x->pub_ino)
            cdd_feed_abandon(x->feed,
                             "the download started again in a new file: the "
                             "streamed install stops, and installs once it "
                             "is here");
        else
            cdd_feed_advance(x->feed, x->have);
        return;
    }
    /* The reader opens the very file written (same device and inode). */
    if (cdd_fs_open_read(x->part, &rf) < 0 || cdd_rfile_info(rf, &ri) < 0 ||
        ri.dev != wi.dev || ri.ino != wi.ino) {
        cdd_clear_error();
        cdd_rfile_close(rf);
        cdd_feed_no_stream(x->feed, "cannot open the download's file for "
                                    "reading");
        return;
    }
    x->published = 1;
    x->pub_dev = wi.dev;
    x->pub_ino = wi.ino;
    cdd_feed_advance(x->feed, x->have);
    cdd_feed_publish(x->feed, rf);
}

/* The zip's tail fetched first: feed_tail, but never more than a quarter
 * of the file (a small zip still streams; a central directory longer than
 * the tail is read when the body reaches it). */
static uint64_t tail_len(const struct cdd_fetch_opts *o, uint64_t size)
{
    return o->feed_tail < size / 4 ? o->feed_tail : size / 4;
}

/* A zip's end records and central directory, before its body: one Range
 * request for the last `tail` bytes, kept in memory (the .part stays a
 * prefix). A server without Range (a 200) or any failure: no streaming,
 * the download goes on as before. */
static void fetch_tail(struct xfer *x, const struct cdd_fetch_opts *o,
                       int allow_http, struct cdd_fetch_result *res)
{
    struct xfer t;
    int err = 0;
    uint64_t tail = tail_len(o, x->size);
    memset(&t, 0, sizeof t);
    t.url = x->url;
    t.has_size = 1;
    t.size = x->size;
    t.cap = tail;
    t.range_requested = 1;
    t.range_from = x->size - tail;
    t.tail_probe = 1;
    res->requests++;
    enum outcome out = perform(&t, &o->net, allow_http, &err);
    res->downloaded += t.received;
    if (out == OUT_DONE && t.mem_len == tail) {
        if (cdd_feed_set_tail(x->feed, t.range_from, t.mem, t.mem_len) == 0) {
            free(t.mem);
            return;
        }
    }
    free(t.mem);
    cdd_clear_error();
    cdd_feed_no_stream(x->feed,
                       t.stop == STOP_NO_RANGE || t.status == 200
                           ? "the server ignores Range requests (200 to a "
                             "request for the zip's end): downloading first, "
                             "then installing"
                           : "the request for the zip's end failed: "
                             "downloading first, then installing");
}

/* Finish a complete body: flush it, compare size and hash. Returns 0 when
 * it matches; CDD_E_CHECKSUM (the .part deleted) when not. */
static int verify_part(struct xfer *x, const uint8_t *pin,
                       uint8_t digest[CDD_SHA256_LEN])
{
    char got[CDD_SHA256_HEX], want[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    int r = 0, size_bad, hash_bad;
    if (x->file) {
        /* The rename that follows must not publish unwritten data. */
        struct cdd_finfo fi;
        r = cdd_file_sync(x->file);
        if (!r && x->feed && x->have == x->size &&
            (r = cdd_file_info(x->file, &fi)) == 0)
            cdd_feed_complete(x->feed, &fi);
        int rc = cdd_file_close(x->file);
        x->file = NULL;
        if (r || (r = rc))
            return r;
    }
    if ((r = cdd_sha256_final(x->h, digest)))
        return r;
    size_bad = x->has_size && x->have != x->size;
    hash_bad = pin && memcmp(pin, digest, CDD_SHA256_LEN) != 0;
    if (!size_bad && !hash_bad)
        return 0;
    /* Wrong bytes are never kept, not even for a resume. */
    if ((r = cdd_fs_unlink(x->part)))
        return r;
    cdd_hex_encode(digest, CDD_SHA256_LEN, got);
    if (size_bad)
        return cdd_fail(CDD_E_CHECKSUM, x->url, 0,
                        "got %llu bytes, but the pin says %llu",
                        (unsigned long long)x->have,
                        (unsigned long long)x->size);
    cdd_hex_encode(pin, CDD_SHA256_LEN, want);
    return cdd_fail(CDD_E_CHECKSUM, x->url, 0,
                    "downloaded sha256 %s does not match the pin %s", got,
                    want);
}

/* After a failed transfer: close the .part, keep it for a resume unless it
 * is empty or its bytes were rejected. */
static void park_part(struct xfer *x, int err)
{
    struct cdd_errsave saved;
    cdd_error_save(&saved);
    int r = cdd_file_close(x->file);
    x->file = NULL;
    if (r || err == CDD_E_CHECKSUM || x->have == 0)
        r = cdd_fs_unlink(x->part);
    (void)r;
    /* Clean-up trouble must not hide why the download failed. */
    cdd_error_restore(&saved);
    cdd_error_save_free(&saved);
}

/* ---- file:// (fleet: a bundle or mirror in a local folder, docs/fleet.md)
 * A pinned file:// URL is copied into the .part, hashed as it goes, and then
 * checked and committed exactly like a download: the pin, not the folder,
 * vouches for the bytes. No percent-escapes; file:///C:/x is C:/x. */
static int url_is_file(const char *url)
{
    return url && strlen(url) >= 8 && ascii_ieq(url, "file:///", 8);
}

static const char *file_url_path(const char *url)
{
    const char *p = url + 7; /* "/..." */
    if (((p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= 'a' && p[1] <= 'z')) &&
        p[2] == ':')
        p++;
    return p;
}

static int copy_local(struct xfer *x, const struct cdd_fetch_opts *o,
                      uint8_t digest[CDD_SHA256_LEN],
                      struct cdd_fetch_result *res)
{
    struct cdd_rfile *in = NULL;
    struct cdd_stat st;
    char *buf = NULL;
    size_t got = 0, cap = 1 << 16;
    int r;
    if (!o->sha256)
        return cdd_fail(CDD_E_UNPINNED, x->url, 0,
                        "a file:// source is used only for an archive that a "
                        "sha256 pins");
    cdd_file_abort(x->file);
    x->file = NULL;
    if ((r = cdd_fs_lstat(x->part, &st)) ||
        (st.type != CDD_FT_NONE &&
         (r = st.type == CDD_FT_DIR ? cdd_fs_remove_tree(x->part)
                                    : cdd_fs_unlink(x->part))) ||
        (r = cdd_sha256_reset(x->h)) ||
        (r = cdd_fs_create(x->part, 0, &x->file)))
        return r;
    x->have = 0;
    if ((r = cdd_fs_open_read(file_url_path(x->url), &in)))
        return r == CDD_E_NOTFOUND ? cdd_fail(CDD_E_NETWORK, x->url, 0,
                                              "no such file")
                                   : r;
    res->requests++;
    if (!(buf = malloc(cap)))
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    while (!r) {
        if ((r = cdd_rfile_read(in, buf, cap, &got)) || got == 0)
            break;
        if (got > x->cap - x->have) {
            r = cdd_fail(CDD_E_CHECKSUM, x->url, 0,
                         "the file holds more than the %s %llu bytes",
                         x->has_size ? "expected" : "allowed",
                         (unsigned long long)x->cap);
            break;
        }
        if ((r = cdd_file_write(x->file, buf, got)) ||
            (r = cdd_sha256_update(x->h, buf, got)))
            break;
        x->have += got;
        res->downloaded += got;
        if (x->progress)
            x->progress(x->progress_ud, "download", x->have,
                        x->has_size ? x->size : 0);
    }
    cdd_rfile_close(in);
    free(buf);
    if (r) {
        cdd_file_abort(x->file);
        x->file = NULL;
        cdd_fs_unlink(x->part);
        return r;
    }
    return verify_part(x, o->sha256, digest);
}

/* Download one URL into the .part, with retries; on success the .part is
 * complete and verified (digest filled). */
static int fetch_url(struct xfer *x, const struct cdd_fetch_opts *o,
                     uint8_t digest[CDD_SHA256_LEN],
                     struct cdd_fetch_result *res)
{
    int retries = retries_of(&o->net), attempt = 0, restarts = 0;
    /* http only where the URL itself is http: a redirect must never turn
     * an https download into a plain one. */
    int allow_http = o->sha256 != NULL && cdd_url_is_http(x->url);
    int r = 0, resumed_prefix;
    if (url_is_file(x->url)) {
        if (x->feed)
            cdd_feed_no_stream(x->feed, "a file:// source is copied first");
        return copy_local(x, o, digest, res);
    }
    if (cdd_url_is_http(x->url) && !o->sha256)
        return cdd_fail(CDD_E_UNPINNED, x->url, 0,
                        "plain http is used only for a download that a "
                        "sha256 pins");
    if (!url_is_https(x->url) && !cdd_url_is_http(x->url))
        return cdd_fail(CDD_E_USAGE, x->url, 0,
                        "only https:// (or pinned http://) URLs can be "
                        "downloaded");
    for (;;) {
        cdd_file_abort(x->file);
        x->file = NULL;
        if ((r = open_part(x)))
            return r;
        if (x->feed && !x->published && tail_len(o, x->size) &&
            x->have + tail_len(o, x->size) < x->size)
            fetch_tail(x, o, allow_http, res);
        offer_part(x);
        resumed_prefix = x->range_requested;
        if (!(x->has_size && x->have == x->size)) {
            if (x->range_requested) {
                res->resumed = 1;
                note(&o->net, "%s: continuing %s from byte %llu", x->url,
                     x->part, (unsigned long long)x->have);
            }
            res->requests++;
            uint64_t before = x->received;
            enum outcome out = perform(x, &o->net, allow_http, &r);
            res->downloaded += x->received - before;
            if (out == OUT_DONE && x->has_size && x->have < x->size) {
                /* A close-delimited body that stopped early: like a cut
                 * connection, worth resuming. */
                r = cdd_fail(CDD_E_NETWORK, x->url, 0,
                             "the connection closed after %llu of %llu "
                             "bytes",
                             (unsigned long long)x->have,
                             (unsigned long long)x->size);
                out = OUT_TRANSIENT;
            }
            if (out == OUT_RESTART) {
                cdd_file_abort(x->file);
                x->file = NULL;
                if ((r = cdd_fs_unlink(x->part)))
                    return r;
                if (++restarts > MAX_RESTARTS)
                    return cdd_fail(CDD_E_NETWORK, x->url, 0,
                                    "the server keeps answering range "
                                    "requests wrongly");
                continue;
            }
            if (out == OUT_TRANSIENT && attempt < retries) {
                park_part(x, r);
                if ((r = pause_before_retry(x, &o->net, attempt, retries)))
                    return r;
                attempt++;
                continue;
            }
            if (out != OUT_DONE) {
                park_part(x, r);
                if (out == OUT_TRANSIENT && retries > 0) {
                    struct cdd_errinfo e = *cdd_last_error();
                    r = cdd_fail(e.code, x->url, 0,
                                 "%s (gave up after %d attempts)", e.msg,
                                 attempt + 1);
                }
                return r;
            }
            if (x->restarted)
                resumed_prefix = 0;
        }
        r = verify_part(x, o->sha256, digest);
        if (r == CDD_E_CHECKSUM && resumed_prefix && restarts < MAX_RESTARTS) {
            /* The bytes kept from an earlier run may be what is wrong (a
             * mirror that changed, a disk error): one fresh download
             * decides. */
            note(&o->net, "%s: %s; downloading the whole file again", x->url,
                 cdd_last_error()->msg);
            restarts++;
            continue;
        }
        return r;
    }
}

/* Errors that concern one source, after which the next one is tried. */
static int source_error(int r)
{
    return r == CDD_E_NETWORK || r == CDD_E_CHECKSUM || r == CDD_E_UNPINNED ||
           r == CDD_E_USAGE;
}

int cdd_fetch_archive(const struct cdd_fetch_opts *o,
                      struct cdd_fetch_result *res)
{
    struct cdd_cache_entry e = {0};
    struct cdd_lock *lock = NULL;
    struct xfer x;
    struct cdd_errsave bad_bytes = {0};
    uint8_t digest[CDD_SHA256_LEN];
    int r, hit = 0;

    memset(res, 0, sizeof *res);
    memset(&x, 0, sizeof x);
    if (o->n_urls == 0 && !o->sha256)
        return cdd_fail(CDD_E_USAGE, o->filename, 0,
                        "no URL to download it from");
    if ((r = cdd_cache_entry_init(o->cache_dir, o->sha256, o->filename, &e)))
        goto out;
    /* Two runs fetching the same file: the second waits, then finds the
     * first one's result in the cache. */
    if ((r = cdd_lock_acquire(e.lock, -1, NULL, &lock)))
        goto out;
    if (o->sha256) {
        if ((r = cdd_cache_lookup(&e, o->sha256, o->has_size, o->size, &hit)))
            goto out;
        if (hit) {
            if (o->feed)
                cdd_feed_no_stream(o->feed, "the archive is in the cache");
            res->cache_hit = 1;
            memcpy(res->sha256, o->sha256, CDD_SHA256_LEN);
            res->size = 0;
            struct cdd_stat st;
            if ((r = cdd_fs_lstat(e.path, &st)))
                goto out;
            res->size = st.size;
            if (!(res->path = strdup(e.path)))
                r = cdd_fail(CDD_E_NOMEM, e.path, 0, NULL);
            goto out;
        }
    }
    if (o->n_urls == 0) {
        r = cdd_fail(CDD_E_USAGE, o->filename, 0,
                     "not in the cache, and no URL to download it from");
        goto out;
    }
    if ((r = net_init()) || (r = cdd_sha256_new(&x.h)))
        goto out;
    x.part = e.part;
    x.has_size = o->has_size;
    x.size = o->size;
    x.cap = o->has_size ? o->size
            : o->max_size ? o->max_size
                          : DEFAULT_MAX_SIZE;
    x.progress = o->progress;
    x.progress_ud = o->progress_ud;
    /* Streamed only what a sha256 and a size pin: the reader's hash is
     * then checked against the same pin before anything is committed. */
    x.feed = o->has_size && o->sha256 ? o->feed : NULL;
    if (x.feed)
        cdd_feed_set_size(x.feed, o->size);
    else if (o->feed)
        cdd_feed_no_stream(o->feed, "the archive's size or sha256 is not "
                                    "pinned");
    for (size_t i = 0; i < o->n_urls; i++) {
        x.url = o->urls[i];
        r = fetch_url(&x, o, digest, res);
        if (r == 0 || !source_error(r))
            break;
        /* Wrong bytes from any source are worth reporting even when a
         * later source is merely down. */
        if (r == CDD_E_CHECKSUM && !bad_bytes.info.code)
            cdd_error_save(&bad_bytes);
        if (i + 1 < o->n_urls)
            note(&o->net, "%s: %s; trying the next source", x.url,
                 cdd_last_error()->msg);
    }
    if (r && bad_bytes.info.code && r != CDD_E_CHECKSUM && source_error(r))
        r = cdd_fail(CDD_E_CHECKSUM, bad_bytes.info.path, 0, "%s",
                     bad_bytes.info.msg);
    if (r)
        goto out;
    memcpy(res->sha256, digest, CDD_SHA256_LEN);
    res->size = x.have;
    if (!(res->url = strdup(x.url))) {
        r = cdd_fail(CDD_E_NOMEM, x.url, 0, NULL);
        goto out;
    }
    r = cdd_cache_commit(o->cache_dir, e.part, digest, o->filename,
                         &res->path);
out:
    cdd_error_save_free(&bad_bytes);
    /* Readers still waiting get the download's own error. */
    if (r && o->feed)
        cdd_feed_fail(o->feed);
    cdd_file_abort(x.file);
    cdd_sha256_free(x.h);
    cdd_lock_release(lock);
    cdd_cache_entry_clear(&e);
    if (r)
        cdd_fetch_result_clear(res);
    return r;
}

void cdd_fetch_result_clear(struct cdd_fetch_result *r)
{
    if (!r)
        return;
    free(r->path);
    free(r->url);
    memset(r, 0, sizeof *r);
}

/* ---- documents ----------------------------------------------------------- */

int cdd_fetch_document(const char *url, const struct cdd_net_opts *net,
                       size_t max, char **out, size_t *len)
{
    struct xfer x;
    int r, retries = retries_of(net);
    *out = NULL;
    *len = 0;
    memset(&x, 0, sizeof x);
    x.url = url;
    x.cap = max;
    /* What comes back here is a pin: it must come over verified TLS. */
    if (!url_is_https(url))
        return cdd_fail(CDD_E_UNPINNED, url, 0,
                        "a pin must come over https (or from a local file)");
    if ((r = net_init()))
        return r;
    for (int attempt = 0;; attempt++) {
        free(x.mem);
        x.mem = NULL;
        x.mem_len = x.mem_cap = 0;
        x.have = 0;
        enum outcome o = perform(&x, net, 0, &r);
        if (o == OUT_DONE)
            break;
        if (o == OUT_TRANSIENT && attempt < retries) {
            if ((r = pause_before_retry(&x, net, attempt, retries)))
                goto out;
            continue;
        }
        if (!r)
            r = cdd_fail(CDD_E_NETWORK, url, 0, "unexpected answer");
        goto out;
    }
    if (!x.mem && !(x.mem = calloc(1, 1))) {
        r = cdd_fail(CDD_E_NOMEM, url, 0, NULL);
        goto out;
    }
    *out = x.mem;
    *len = x.mem_len;
    x.mem = NULL;
out:
    free(x.mem);
    return r;
}
