/* The verify record (.cudnn-deploy/verified.json, docs/verification.md):
 * what the last verify that could write the tree found, per layer, and the
 * digest of the receipt it proved the files against. Written by install's
 * closing verify and by verify, atomically, under the tree lock, only when
 * the lock is free at once (a verify never waits for an install) and the
 * receipt is still the one verified. Read back (receipt.h: with the
 * receipt's distrust) only to report: sbom and status show it when its
 * receipt digest is the current receipt's, else say nothing of it. */
#ifndef CDD_VERIFIED_H
#define CDD_VERIFIED_H

#include "cdd/receipt.h"
#include "cdd/checks.h"

struct cdd_tree;

/* The record of one verify: its checks grouped by layer (the check name up
 * to its first '.' or ' '), the level name that ran, the manifest, the
 * receipt it proved against (its digest), the time now, this tool. */
int cdd_verified_make(const struct cdd_checks *checks, const char *level,
                      const char *manifest_name,
                      const struct cdd_receipt *proved,
                      struct cdd_verified **out);

/* Why a record was not written (cdd_verified_record's *why). */
enum cdd_vrecord_why {
    CDD_VREC_WRITTEN = 0,
    CDD_VREC_NO_RECEIPT,   /* nothing installed by us: nothing to describe */
    CDD_VREC_LOCKED,       /* another process holds the lock */
    CDD_VREC_READONLY,     /* the caller cannot write the state folder */
    CDD_VREC_UNFINISHED,   /* a transaction's journal is there */
    CDD_VREC_CHANGED       /* the receipt changed since it was verified */
};
const char *cdd_vrecord_why_text(enum cdd_vrecord_why why);

/* Write v into the tree when the lock can be taken at once (or is held by
 * this handle already), no transaction is unfinished, and the tree's
 * receipt has v's digest still. 0 with *why saying whether it was
 * written; an error only for a write that failed once it was due (disk
 * full, I/O), never for the reasons above. The lock is released again if
 * this call took it. */
int cdd_verified_record(struct cdd_tree *tree, const struct cdd_verified *v,
                        enum cdd_vrecord_why *why);

/* The record of the tree if it describes receipt rc (same digest), else
 * *out NULL. A damaged record is CDD_E_STATE (the caller decides whether
 * to say so or to ignore it). */
int cdd_verified_current(struct cdd_tree *tree, const struct cdd_receipt *rc,
                         struct cdd_verified **out);

#endif
