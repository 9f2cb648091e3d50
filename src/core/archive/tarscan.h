/* A check of a tar stream's raw headers, fed the very bytes libarchive's tar
 * reader is about to parse (archive.c decompresses once, hands each block to
 * this scanner, then to the tar reader). It sees what libarchive hides:
 * libarchive cuts a GNU long name ('L'/'K' member) or a pax path/linkpath
 * value at its first NUL byte, silently, while other readers (Python's
 * tarfile for pax) keep the whole value, so "include/cudnn.h\0/../../x"
 * would be one name to us and another to them. The scanner also refuses
 * sparse members (GNU 'S' headers; GNU.sparse.*, SCHILY.realsize and
 * SUN.holesdata pax keys) before libarchive reads their maps or pads their
 * data with zeros, and pax headers over 1 MiB, so that no member can make
 * the reader build a map of millions of entries or read GiBs out of KBs.
 *
 * It tracks member boundaries from the headers' own sizes (octal or
 * base-256, a pax "size" record overriding the next header's) exactly as the
 * tar reader does, refusing what could make the two disagree: a bad header
 * checksum, a size on a member type that carries no data, a type we do not
 * read. Reading stops at the first all-zero block, where libarchive's tar
 * reader stops. */
#ifndef CDD_TARSCAN_H
#define CDD_TARSCAN_H

#include <stddef.h>

/* Largest pax extended header accepted (real ones are a few hundred bytes). */
#define CDD_TARSCAN_PAX_MAX (1024u * 1024u)

struct cdd_tarscan;

/* path names the archive in messages. CDD_E_NOMEM only. */
int cdd_tarscan_new(const char *path, struct cdd_tarscan **out);
/* The next len bytes of the tar stream. 0, or CDD_E_UNSAFE (a NUL or
 * control character in a long name or pax path, a sparse member) or
 * CDD_E_CORRUPT (a header the tar reader could read otherwise) recorded
 * with cdd_fail() naming the member and the field; after a failure every
 * call fails. */
int cdd_tarscan_feed(struct cdd_tarscan *s, const void *buf, size_t len);
void cdd_tarscan_free(struct cdd_tarscan *s);

#endif
