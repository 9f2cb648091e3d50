/* Our own reading of a zip's structure, before libarchive decompresses a
 * byte: the end record (and zip64's), every central directory record, and
 * each local header and data descriptor checked against its central record.
 * A zip passes only when every reader -- Explorer, unzip, Python's zipfile,
 * libarchive -- must read the same entries with the same names and sizes
 * from it: the classic zip-parser differentials (local names other than the
 * central ones, overlapping entries, disagreeing Unicode Path fields, lying
 * data descriptors, bytes before the first entry or after the end record)
 * are refused here. archive.c then matches what libarchive yields with these
 * records, one to one. The validated records stay available (for workers
 * that read entries in parallel). */
#ifndef CDD_ZIPCD_H
#define CDD_ZIPCD_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/archive.h"
#include "cdd/fsops.h"

/* Bounds on what a central directory may hold: as many records and name
 * bytes as cdd_extract() accepts (CDD_MAX_ENTRIES, CDD_MAX_NAME_BYTES,
 * checked at build time in zipcd.c), so a hostile directory costs at most
 * about 6 MiB here, and is refused before libarchive reads it. */
#define CDD_ZIPCD_MAX_RECORDS 20000u
#define CDD_ZIPCD_MAX_NAME_BYTES (4u * 1024u * 1024u)

struct cdd_zipcd_entry {
    const char *name;         /* the name's bytes as stored, NUL-terminated
                                 (no NUL or control character inside) */
    size_t name_len;
    size_t central_index;     /* position in the central directory */
    uint16_t made_by;         /* "version made by" (high byte: system) */
    uint16_t flags;           /* general purpose bits (bit 3: descriptor) */
    uint16_t method;          /* 0 stored, 8 deflated, ... */
    uint32_t crc32;
    uint64_t csize, usize;    /* compressed and uncompressed sizes */
    uint64_t local_offset;    /* the local header */
    uint64_t data_offset;     /* first byte of the compressed data */
    uint64_t end_offset;      /* one past the data (and its descriptor) */
    uint32_t external_attr;
    enum cdd_entry_type type; /* FILE, DIR, SYMLINK or OTHER (from the Unix
                                 mode in the external attributes, else the
                                 DOS folder bit or a trailing '/') */
};

struct cdd_zipcd;

/* Is the file a zip we must read through the central directory? Yes when it
 * begins with a zip signature, or when it begins with none of the tar or
 * compression signatures (xz, gzip, bzip2, zstd, ustar) and an end record's
 * signature lies in its last 64 KiB + 22 bytes (junk prepended to a zip).
 * Sets *is_zip; reading errors only. */
int cdd_zipcd_sniff(struct cdd_rfile *f, const char *path, uint64_t size,
                    int *is_zip);

/* Read and validate the whole structure of the zip f (size bytes, path for
 * messages); docs/archives.md lists the rules. CDD_E_CORRUPT for structural
 * faults (end records, offsets, sizes, overlaps, bytes outside the entries,
 * disagreeing local headers or descriptors, encryption), CDD_E_UNSAFE for
 * names (NUL or control characters, a local or Unicode Path name other than
 * the central one, a folder bit that disagrees with a trailing '/'),
 * CDD_E_ARCHIVE over the caps, CDD_E_NOMEM, or the reading error. Each
 * message names the entry and the field. A member that is neither file,
 * folder nor symlink is not a fault here: its type is CDD_ENTRY_OTHER, and
 * cdd_extract() refuses it. */
int cdd_zipcd_read(struct cdd_rfile *f, const char *path, uint64_t size,
                   struct cdd_zipcd **out);

/* The validated records in the order of their local headers (the order in
 * which libarchive's seekable reader yields them, and the order of the
 * bytes in the file). */
size_t cdd_zipcd_count(const struct cdd_zipcd *z);
const struct cdd_zipcd_entry *cdd_zipcd_get(const struct cdd_zipcd *z,
                                            size_t i);

/* A copy of z, for another reader of the same file (a worker's): what was
 * validated once need not be read again. CDD_E_NOMEM only. */
int cdd_zipcd_dup(const struct cdd_zipcd *z, struct cdd_zipcd **out);

void cdd_zipcd_free(struct cdd_zipcd *z);

/* A zip read while it downloads (cdd/feed.h, issue 20): cdd_zipcd_read
 * checks the end records and the central directory only; the local
 * headers and the tiling of entries [0, upto) are checked here, in file
 * order, before the reader uses entry upto-1 (archive.c, zip_match), and
 * the tiling up to the central directory with upto == count. A no-op for
 * a zip read whole. */
int cdd_zipcd_check_through(struct cdd_zipcd *z, struct cdd_rfile *f,
                            const char *path, size_t upto);

#endif
