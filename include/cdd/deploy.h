/* The life-cycle operations on a tree: install, uninstall, status, recover.
 * They tie the manifest, the archive check, the layout and the transaction
 * together; the command layer only parses options and reports results. */
#ifndef CDD_DEPLOY_H
#define CDD_DEPLOY_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/cudatree.h"
#include "cdd/hash.h"
#include "cdd/layout.h"
#include "cdd/manifest.h"
#include "cdd/obtain.h"
#include "cdd/journal.h"
#include "cdd/tree.h"

enum cdd_action {
    CDD_ACT_NEW = 0,  /* not in the tree yet */
    CDD_ACT_REPLACE,  /* a different file is there: backed up, replaced */
    CDD_ACT_UNCHANGED,/* identical file already there */
    CDD_ACT_REMOVE,   /* ours from an earlier install, not in this one */
    CDD_ACT_RESTORE,  /* uninstall: a backed-up file comes back */
    CDD_ACT_MISSING,  /* status/uninstall: listed but absent */
    CDD_ACT_MODIFIED  /* status/uninstall: changed since install */
};

struct cdd_plan_item {
    char *path;            /* relative to the root */
    enum cdd_role role;
    enum cdd_action action;
    int is_symlink;
    char *link_target;
    uint64_t size;
    uint8_t sha256[CDD_SHA256_LEN];
    char *detail;          /* status: what differs; may be NULL */
    int in_place;          /* install: the tree already holds these exact
                              bytes (manifest hash), so nothing was staged */
    int64_t mtime_ns;      /* install: the staged file's modification time
                              (for the receipt) */
    char *staged;          /* install on a Windows layout whose folders
                              exist under another case (BIN for bin): the
                              manifest's path, as staged; path is then the
                              tree's spelling of the folders */
    char *on_disk;         /* install on a Windows layout: the name the
                              tree holds under another case (replaced, and
                              the file keeps the manifest's name) */
    struct cdd_jprev prev; /* install: what a replaced or removed file was
                              (type CDD_FT_NONE when nothing) */
    int omitted;           /* install: left out by the profile (checked in
                              the archive, never staged; profile.h) */
    enum cdd_role omitted_role; /* the role the profile judged */
};

struct cdd_plan {
    struct cdd_plan_item *items;
    size_t n, cap;
};

const char *cdd_action_name(enum cdd_action a);
void cdd_plan_clear(struct cdd_plan *p);
/* Free one item's members (not the item). */
void cdd_plan_item_clear(struct cdd_plan_item *it);

/* Progress: phase is a short word ("hash", "check", "commit"). */
typedef void (*cdd_progress_fn)(void *ud, const char *phase, uint64_t done,
                                uint64_t total);

/* An optional component installed with the archive (`--with NAME`,
 * manifest.h struct cdd_mcomponent): its archive, obtained by the caller,
 * is checked against the component's own pin and its one entry lands in
 * the layout's runtime folder, in the same transaction and receipt. */
struct cdd_install_with {
    const struct cdd_mcomponent *c;
    const char *archive_path;
};

struct cdd_rfile;
struct cdd_install_opts {
    const struct cdd_manifest *m;
    const struct cdd_target *target;
    struct cdd_tree *tree;   /* the target's tree, opened by the caller */
    const char *archive_path;
    /* The archive already open (the cache's .part while it downloads,
     * cdd/feed.h): read instead of opening archive_path, which then only
     * names it. NULL: open archive_path. */
    struct cdd_rfile *archive_file;
    const uint8_t *sha256;   /* a pin (CDD_SHA256_LEN bytes), may be NULL */
    enum cdd_pin sha256_source; /* where sha256 came from, for the receipt
                                   and report; CDD_PIN_NONE: --sha256 */
    int allow_unpinned;
    int dry_run;
    int force;               /* waive the CUDA version refusal */
    double lock_timeout;     /* seconds; 0 = fail at once */
    int jobs;                /* extraction threads; 0: one per processor */
    int check_tree;          /* the unchanged re-install re-hashes the
                                tree instead of trusting its metadata */
    const struct cdd_install_with *with; /* optional components */
    size_t n_with;
    int profile;             /* enum cdd_profile (profile.h): what lands */
    int has_mtime;           /* --mtime / SOURCE_DATE_EPOCH: every installed
                                file and the folders that hold them get
                                this modification time */
    int64_t mtime;           /* seconds since 1970 */
    cdd_progress_fn progress;
    void *progress_ud;
    const char *selection;   /* the catalog's choice and its reason, for the
                                receipt; NULL: none */
    /* --platform: a manifest for another machine than the host's is
     * installed only when the user named its platform (cudatree.h,
     * cdd_target_check_platform). */
    int platform_given;
    enum cdd_platform platform;
};

/* What the recovery that follows taking the lock found and did. */
struct cdd_recovery {
    int found;       /* an interrupted transaction (or a stray stage) */
    int rolled_back; /* it was undone (else finished) */
    char *id;        /* its id, malloc'd */
};
void cdd_recovery_clear(struct cdd_recovery *r);

/* Lock the tree for a change (cdd_tree_lock: access check, state folder,
 * lock) and, once held, finish or undo an interrupted transaction into
 * *rec (may be NULL; set also when the recovery fails). Taking the lock
 * and recovering are one step for every caller (the dispatcher's write
 * open, install, activation), so that nothing changes a tree that holds
 * a journal. The lock already held by this handle: 0, *locked 1, no second
 * recovery (the first ran under the same lock). treelock.c. */
int cdd_txn_lock(struct cdd_tree *tree, double timeout_s, int create_state,
                 int *locked, struct cdd_recovery *rec);

struct cdd_receipt;
struct cdd_install_result {
    struct cdd_plan plan;
    int changed;
    char *txn_id;
    enum cdd_layout_id layout;
    const char *layout_why;  /* static text: what decided the layout */
    uint8_t archive_sha256[CDD_SHA256_LEN];
    uint64_t archive_size;
    int pinned;              /* archive sha256 matched a pin */
    enum cdd_pin pin_source; /* MANIFEST, OPTION (or sha256_source),
                                PER_FILE, UNPINNED */
    size_t omitted[CDD_ROLE_COUNT]; /* entries the profile left out, by role */
    struct cdd_recovery recovery;
    /* What the install recorded: the receipt it wrote, or for an unchanged
     * re-install the previous one with every file's size and sha256 taken
     * from this install's own plan (the archive's bytes). The closing
     * verify proves the tree against this, never against a file the tree
     * could have changed since. NULL: nothing installed (dry run, error). */
    struct cdd_receipt *receipt;
};

int cdd_install(const struct cdd_install_opts *o, struct cdd_install_result *res);
void cdd_install_result_clear(struct cdd_install_result *r);

struct cdd_uninstall_opts {
    const struct cdd_target *target;
    struct cdd_tree *tree;
    int force;               /* remove files changed since install too */
    int dry_run;
    double lock_timeout;
};

struct cdd_uninstall_result {
    struct cdd_plan plan;    /* REMOVE / RESTORE / MODIFIED / MISSING items */
    int changed;
    int had_receipt;
    char *product_version;   /* what was installed, e.g. "cudnn 8.5.0.96" */
    char *txn_id;
    struct cdd_recovery recovery;
    int state_removed;       /* the tree held nothing of ours any more:
                                .cudnn-deploy went too (POSIX only) */
};

int cdd_uninstall(const struct cdd_uninstall_opts *o,
                  struct cdd_uninstall_result *res);
void cdd_uninstall_result_clear(struct cdd_uninstall_result *r);

struct cdd_receipt;
struct cdd_status_result {
    struct cdd_receipt *receipt; /* NULL: nothing installed */
    struct cdd_plan plan;        /* one item per receipt file: UNCHANGED
                                    (matches), MISSING or MODIFIED */
    size_t n_bad;
    int interrupted;             /* a journal is present */
};

/* Read-only. full_hash: compare sha256 too, not only size and type, on
 * `jobs` threads (0: one per processor). */
int cdd_status(struct cdd_tree *tree, int full_hash, int jobs,
               struct cdd_status_result *res);
void cdd_status_result_clear(struct cdd_status_result *r);

/* `recover`: the recovery itself runs when the lock is taken (cdd_txn_lock,
 * by the dispatcher for the recover command); this records the one that
 * ran in the deploy log (nothing when none was found). Best effort, as
 * every log line. */
void cdd_recover_record(struct cdd_tree *tree, const struct cdd_recovery *res);

/* Compare what the tree holds at rel (a tree path) with what is expected:
 * 0 and *act UNCHANGED, MISSING or MODIFIED (detail malloc'd when not
 * NULL). verify checks a tree against its manifest with it. */
int cdd_tree_compare(struct cdd_tree *tree, const char *rel, int is_symlink,
                     const char *link_target, uint64_t size,
                     const uint8_t *sha, int full_hash, enum cdd_action *act,
                     char **detail);

/* Compare one receipt-listed path with the tree: 0 and *action set to
 * UNCHANGED, MISSING or MODIFIED (detail malloc'd when not NULL). */
struct cdd_rfile_entry;
int cdd_check_installed(struct cdd_tree *tree, const struct cdd_rfile_entry *f,
                        int full_hash, enum cdd_action *action,
                        char **detail);

#endif
