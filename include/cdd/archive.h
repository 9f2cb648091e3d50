/* Reading cuDNN archives (zip through libarchive's seekable reader, its
 * deflated members inflated by src/core/archive/inflate.c; tar with any
 * compression). The only file that touches libarchive is archive.c.
 * Entries are streamed: data is read in blocks, never whole. */
#ifndef CDD_ARCHIVE_H
#define CDD_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

enum cdd_entry_type {
    CDD_ENTRY_FILE = 0,
    CDD_ENTRY_DIR,
    CDD_ENTRY_SYMLINK,
    CDD_ENTRY_HARDLINK,
    CDD_ENTRY_OTHER   /* device, FIFO, socket, unknown */
};

struct cdd_archive_entry {
    const char *path;        /* raw name as stored (valid until next call) */
    enum cdd_entry_type type;
    int size_known;
    uint64_t size;           /* declared size (files) */
    const char *link_target; /* symlink or hardlink target, else NULL */
};

struct cdd_archive;
struct cdd_rfile;
struct cdd_finfo;

/* Select a UTF-8 LC_CTYPE (C.UTF-8 or the like) unless one is in effect:
 * libarchive converts entry names through the C library's locale, and in the
 * "C" locale every non-ASCII name fails. Call it at start-up, before any
 * thread; cdd_archive_open() calls it once if nobody did. Only LC_CTYPE
 * changes. Returns 0, or CDD_E_NOTSUP when no UTF-8 locale exists (then only
 * ASCII names can pass). */
int cdd_archive_init(void);

/* Open an archive file. CDD_E_NOTFOUND/IO when it cannot be opened,
 * CDD_E_CORRUPT when it is not a readable zip or tar, CDD_E_CORRUPT or
 * CDD_E_UNSAFE when a zip's structure fails its validation (zipcd.h). */
int cdd_archive_open(const char *path, struct cdd_archive **out);
/* Open an archive through f, an archive file the caller holds open (it
 * stays the caller's: the reader reads through its own duplicate of the
 * handle, cdd_rfile_dup). The bytes read are those of the file f is, whatever
 * its path names by now. */
int cdd_archive_open_file(struct cdd_rfile *f, struct cdd_archive **out);
/* cdd_archive_open() (f NULL) or cdd_archive_open_file() (f) that decodes a
 * tar.xz of more than one xz block with up to `threads` threads (liblzma's
 * threaded decoder, src/core/archive/xzmt.c); threads <= 1, a single-block
 * stream and every other format are read as those two read them. */
int cdd_archive_open_mt(const char *path, struct cdd_rfile *f,
                        unsigned threads, struct cdd_archive **out);
/* Threads decoding a's xz (0: not the threaded decoder). */
unsigned cdd_archive_xz_threads(const struct cdd_archive *a);
/* Another reader of the file `like` reads, for a worker thread: it yields
 * the same entries in the same order (each reader is used by one thread at
 * a time). What `like` validated about the file's structure is shared, not
 * read again. */
int cdd_archive_open_like(const struct cdd_archive *like,
                          struct cdd_archive **out);
/* 1 when the file is a zip: its entries can be read by several readers
 * at once, each skipping to its own (the seekable reader jumps over the
 * data it is not asked for). */
int cdd_archive_is_zip(const struct cdd_archive *ar);
/* Next entry header. Returns 0 with *e filled, 1 at the end of the archive,
 * CDD_E_CORRUPT (message says what libarchive said), or CDD_E_UNSAFE when
 * the entry's name is not valid in its declared character set, when a zip
 * entry differs from its central record (name, type, size), or when a tar
 * header holds what libarchive would hide (tarscan.h: a NUL in a long name
 * or pax path, a sparse member). Zip members whose Unix attributes say
 * FIFO, device or socket come out as CDD_ENTRY_OTHER. */
int cdd_archive_next(struct cdd_archive *a, struct cdd_archive_entry *e);
/* Read the current entry's data; *got == 0 at its end. CDD_E_CORRUPT on a
 * truncated or damaged entry (CRC errors included). */
int cdd_archive_read(struct cdd_archive *a, void *buf, size_t len,
                     size_t *got);
/* Format name as libarchive says ("ZIP 2.0 (deflation)", "POSIX pax ..."). */
const char *cdd_archive_format(struct cdd_archive *a);
/* For progress: bytes of the archive file consumed so far (approximate for
 * zip, whose reader seeks; never above the size) and the file's size. */
uint64_t cdd_archive_bytes_read(struct cdd_archive *a);
uint64_t cdd_archive_file_size(struct cdd_archive *a);
void cdd_archive_close(struct cdd_archive *a);

struct cdd_zipcd;
/* A zip's validated central directory (zipcd.h; records in the order the
 * entries come), for readers that work on several entries at once; NULL for
 * a tar. Valid until cdd_archive_close(). */
const struct cdd_zipcd *cdd_archive_zipcd(const struct cdd_archive *a);

/* ---- one open file from pin to extraction (issue 18; src/core/archive/held.c)
 * install opens the archive (and each --with component's) once, with
 * cdd_archive_hold(); the pin's hash (cdd_archive_hash), the size check and
 * the extraction (cdd_archive_open_file and its workers' duplicates) all
 * read that one open file, so a path renamed over in between changes
 * nothing. A writer who changes the same file in place is kept out first:
 * an archive another account can write (o+w; g+w with a group other than
 * the caller's; owned by an account other than the caller and root) is
 * refused (CDD_E_UNSAFE) before a byte of it is read, and a change seen on
 * the handle after reading (size, write or change time: cdd_archive_unchanged)
 * fails the install (CDD_E_CHECKSUM) before anything is committed. */
int cdd_archive_hold(const char *path, struct cdd_rfile **out,
                     struct cdd_finfo *at_open);
/* The same for a handle already open (a duplicate of it is held): the
 * cache's .part while it is downloaded (cdd/feed.h, issue 20). */
int cdd_archive_hold_file(struct cdd_rfile *given, struct cdd_rfile **out,
                          struct cdd_finfo *at_open);
/* The file's sha256 and size, read by pread from its start. */
int cdd_archive_hash(struct cdd_rfile *f, uint8_t digest[32], uint64_t *size);
int cdd_archive_unchanged(struct cdd_rfile *f, const struct cdd_finfo *at_open);

#endif
