/* The one JSON writer of the core library: every JSON text it writes (the
 * receipt, the deploy log's lines, manifests, the doctor's structured
 * members) is built here and escaped by cJSON; no other file escapes a JSON
 * string by hand. The --json report of every command is written with it
 * too (src/cli/report.c). The writer is a stream of calls that builds a
 * document:
 *
 *   struct cdd_jw *w = cdd_jw_new();
 *   cdd_jw_object(w, NULL);              the root
 *   cdd_jw_str(w, "product", "cudnn");   a member of the open object
 *   cdd_jw_array(w, "files");            a member that is a list
 *   cdd_jw_str(w, NULL, "a");            an element of the open list
 *   cdd_jw_end(w);                       closes the list
 *   cdd_jw_end(w);                       closes the root
 *   r = cdd_jw_finish(w, CDD_JW_LINE, &text);
 *
 * Calls never fail on their own: the first failure (no memory, a member
 * without a key, more ends than opens) is kept and cdd_jw_finish() reports
 * it, so a writer ends in a complete document or in an error, never in a
 * truncated text. */
#ifndef CDD_JSONW_H
#define CDD_JSONW_H

#include <stdint.h>

struct cdd_jw;

/* How cdd_jw_finish() lays the document out. */
enum cdd_jw_style {
    /* One line, no spaces, no newline (the log's lines, report members). */
    CDD_JW_LINE,
    /* cJSON's indented layout (tabs) and a final newline (the receipt). */
    CDD_JW_PRETTY,
    /* Two-space indentation, `"key": value`, every object that is an
     * element of a list on one line, a final newline: the canonical text of
     * docs/manifest.md, which diffs well line by line. */
    CDD_JW_MANIFEST
};

/* NULL when out of memory. */
struct cdd_jw *cdd_jw_new(void);

/* Open an object or a list: the root (the first call), a member of the
 * open object (key required) or an element of the open list (key NULL). */
void cdd_jw_object(struct cdd_jw *w, const char *key);
void cdd_jw_array(struct cdd_jw *w, const char *key);
/* Close the innermost open object or list. */
void cdd_jw_end(struct cdd_jw *w);

/* Values, placed like the containers above. A NULL string is null. */
void cdd_jw_str(struct cdd_jw *w, const char *key, const char *s);
void cdd_jw_int(struct cdd_jw *w, const char *key, long long v);
/* Exact for every 64-bit value (written as its decimal digits). */
void cdd_jw_uint(struct cdd_jw *w, const char *key, uint64_t v);
/* A measurement (milliseconds, a ratio): cJSON's shortest round-trip text;
 * NaN and infinities are null. Counts and sizes go through _int/_uint. */
void cdd_jw_num(struct cdd_jw *w, const char *key, double v);
void cdd_jw_bool(struct cdd_jw *w, const char *key, int v);
void cdd_jw_null(struct cdd_jw *w, const char *key);
/* A finished document (all its containers closed) as a value; doc is
 * consumed (freed) whatever happens. NULL doc writes nothing. */
void cdd_jw_doc(struct cdd_jw *w, const char *key, struct cdd_jw *doc);

/* The text (malloc'd, NUL-terminated) in *out; 0, or CDD_E_NOMEM / CDD_E_IO
 * (an unbalanced document: a bug of the caller) / CDD_E_TOOLONG (a
 * CDD_JW_MANIFEST text past 64 MiB) recorded with cdd_fail().
 * Frees w in every case. */
int cdd_jw_finish(struct cdd_jw *w, enum cdd_jw_style style, char **out);
/* Drop an unfinished writer (NULL is fine). */
void cdd_jw_free(struct cdd_jw *w);

#endif
