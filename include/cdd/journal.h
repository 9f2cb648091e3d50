/* The journal of a transaction (.cudnn-deploy/journal): its format, and the
 * rules every path in it must follow. A journal on disk is untrusted input
 * (anyone who can write the tree can write it), so parsing checks every
 * record as strictly as the engine checked it when it was queued: paths of
 * the shape install writes, sources only in the state folder, and for every
 * file that went to backup its recorded type (a regular file with its size
 * and sha256, or a link with its target), so a restore brings back only
 * what was recorded.
 *
 *   cudnn-deploy-journal 2 <id> <kind> <purge-backup|keep-backup>
 *   M <dir>                 folder the transaction creates (outermost first)
 *   P <src> <dest> [<prev>] move src to dest; prev: what dest held, which
 *                           goes to backup/<id>/<dest>
 *   D <dest> <prev>         move dest to backup
 *   R <dir>                 remove dir if it is empty after the moves
 *   E                       end of plan: nothing changes before this is on disk
 *   C                       commit record
 * Fields are separated by one tab; prev is "f:<size>:<sha256 hex>" or
 * "l:<link target>". */
#ifndef CDD_JOURNAL_H
#define CDD_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/fsops.h"
#include "cdd/hash.h"

#define CDD_JOURNAL_MAGIC "cudnn-deploy-journal"
#define CDD_JOURNAL_VERSION 2

/* What a file that goes to backup was, recorded before it moves. */
struct cdd_jprev {
    enum cdd_ftype type;          /* CDD_FT_FILE or CDD_FT_SYMLINK */
    uint64_t size;                /* files */
    uint8_t sha256[CDD_SHA256_LEN];
    char *target;                 /* links */
};

struct cdd_jop {
    char type;              /* 'P' put, 'D' delete, 'R' remove folder */
    char *src;              /* P only */
    char *dest;             /* P, D: the file; R: the folder */
    int has_prev;           /* P: dest existed; D: always */
    struct cdd_jprev prev;
    size_t line;            /* parse: its line in the journal (0: queued) */
    /* Engine state, not written: */
    int journaled;          /* part of the plan */
    size_t seq;             /* queue order */
};

struct cdd_journal {
    char *id, *kind;
    int purge;
    char **mdirs;           /* folders created, outermost first */
    size_t *mdir_lines;     /* parse: each one's line (0: queued) */
    size_t n_mdirs, cap_mdirs;
    struct cdd_jop *ops;
    size_t nops, cap;
    int acted;              /* parse: the plan was complete ("E") */
    int committed;          /* parse: "C" present */
};

void cdd_journal_clear(struct cdd_journal *j);
/* Append an operation (copies of the strings); prev may be NULL. */
int cdd_journal_push(struct cdd_journal *j, char type, const char *src,
                     const char *dest, const struct cdd_jprev *prev);
/* Add a folder to create unless it is there already. */
int cdd_journal_add_mdir(struct cdd_journal *j, const char *dir);
int cdd_jprev_copy(struct cdd_jprev *to, const struct cdd_jprev *from);
void cdd_jprev_clear(struct cdd_jprev *p);

/* The text of the plan (journaled operations), ending with "E\n". */
int cdd_journal_format(const struct cdd_journal *j, char **out, size_t *len);
/* Parse text (modified in place) into j. source names the file in
 * messages: CDD_E_STATE "<source>: line N: <why>: <record>". */
int cdd_journal_parse(const char *source, char *text, struct cdd_journal *j);

/* The rules (also used when operations are queued). */
int cdd_jpath_ok(const char *p);          /* a tree path install writes */
int cdd_jdest_ok(const char *p);
int cdd_jsrc_ok(const char *p, const char *id);
int cdd_jdir_ok(const char *p);           /* M and R folders */
int cdd_jid_ok(const char *id);
int cdd_jkind_ok(const char *kind);

#endif
