/* A file that is still arriving (issue 20, install while downloading): the
 * downloader writes the cache's .part in order and says how far it got; a
 * reader of the same open file (cdd_rfile with a feed attached, fsops.h)
 * that asks for bytes beyond that waits for them, or fails with the
 * download's own error when the download fails. A zip's tail (its end
 * records and central directory) may arrive first, by a Range request, and
 * is then served from memory until the body reaches it; the .part itself
 * always holds a prefix of the archive, so a later resume works as before.
 *
 * Thread-safe; reference counted (every handle that reads through the feed
 * holds one reference). */
#ifndef CDD_FEED_H
#define CDD_FEED_H

#include <stddef.h>
#include <stdint.h>

struct cdd_feed;
struct cdd_rfile;
struct cdd_finfo;

/* The reader's state, as the one who starts the install sees it. */
enum cdd_feed_state {
    CDD_FEED_PENDING = 0, /* the download has not yet opened its .part */
    CDD_FEED_READY,       /* a reader may open it (cdd_feed_reader) */
    CDD_FEED_NO_STREAM,   /* no streaming: download first, then install
                             (cdd_feed_why says why) */
    CDD_FEED_FAILED       /* the download failed before a reader opened */
};

int cdd_feed_new(struct cdd_feed **out);
struct cdd_feed *cdd_feed_ref(struct cdd_feed *f);
void cdd_feed_unref(struct cdd_feed *f); /* accepts NULL */
uint64_t cdd_feed_size(const struct cdd_feed *f);

/* ---- the writer (the downloader) ---------------------------------------- */
/* The pinned size of the whole archive, before anything is published. */
void cdd_feed_set_size(struct cdd_feed *f, uint64_t size);
/* The bytes [off, off+len) (the archive's tail) are known: copied. */
int cdd_feed_set_tail(struct cdd_feed *f, uint64_t off, const void *buf,
                      size_t len);
/* The .part is open: *reader reads it (taken; the feed is attached to it
 * here). It becomes READY. */
void cdd_feed_publish(struct cdd_feed *f, struct cdd_rfile *reader);
/* The .part holds the bytes [0, have). */
void cdd_feed_advance(struct cdd_feed *f, uint64_t have);
/* The whole archive is written and flushed; fi: the .part as it was then
 * (held.c compares the reader's file with it at the end). */
void cdd_feed_complete(struct cdd_feed *f, const struct cdd_finfo *fi);
/* The download failed: this thread's last error is what every reader
 * waiting or yet to read gets. */
void cdd_feed_fail(struct cdd_feed *f);
/* Bytes already offered can no longer be trusted to be the file's (the
 * server restarted from zero, one source's bytes were wrong and another is
 * tried): readers fail, and the caller installs from the cache once the
 * download finished (cdd_feed_abandoned). */
void cdd_feed_abandon(struct cdd_feed *f, const char *why);
/* No streaming at all (the server ignores Range for a zip's tail): the
 * caller waits for the download and installs from the cache. */
void cdd_feed_no_stream(struct cdd_feed *f, const char *why);

/* The download is over: a feed still PENDING becomes NO_STREAM. */
void cdd_feed_settle(struct cdd_feed *f);

/* ---- the one who starts the install ------------------------------------- */
/* Wait until the feed is not PENDING; READY: *reader is a new handle on
 * the .part (the caller closes it). */
enum cdd_feed_state cdd_feed_wait_ready(struct cdd_feed *f,
                                        struct cdd_rfile **reader);
int cdd_feed_abandoned(struct cdd_feed *f);
const char *cdd_feed_why(struct cdd_feed *f); /* static text or "" */
/* Wait until the writer finished the .part (0, *fi: the file as it was
 * then) or the download failed (its error). */
int cdd_feed_final_info(struct cdd_feed *f, struct cdd_finfo *fi);

/* ---- the reader (fsops' platform halves) -------------------------------- */
/* pread through the feed: waits for [off, off+len) or the end, then reads
 * it with raw (the platform's own pread) or from the tail in memory. */
typedef int (*cdd_feed_raw_pread)(struct cdd_rfile *f, uint64_t off,
                                  void *buf, size_t len, size_t *got);
int cdd_feed_pread(struct cdd_feed *feed, struct cdd_rfile *f,
                   cdd_feed_raw_pread raw, uint64_t off, void *buf,
                   size_t len, size_t *got);

#endif
