/* The transaction that changes a tree: staged files are moved into place
 * under a journal, replaced files are kept as backups, and a crash, a kill or
 * a failure at any step leaves the tree exactly as before or exactly as after
 * (cdd_txn_recover finishes or undoes an interrupted one).
 *
 * State lives in <root>/.cudnn-deploy/:
 *   lock                  exclusive lock, never deleted
 *   journal               the plan of the transaction in progress
 *   stage-<id>/<dest>     files written before commit
 *   backup/<id>/<dest>    what transaction <id> replaced or removed
 *   receipt.json, manifest.json, log.jsonl
 *
 * All paths given to this interface are tree paths (relative to the root,
 * '/'-separated), resolved beneath the root by the tree (tree.h); the
 * journal's format is journal.h's. The tree stage's own header: the CLI and
 * the stages above take the lock with its recovery through deploy.h
 * (cdd_txn_lock) and change trees only through install and uninstall. */
#ifndef CDD_TXN_H
#define CDD_TXN_H

#include <stddef.h>

#include "cdd/journal.h"
#include "cdd/state.h"

struct cdd_tree;
struct cdd_txn;

/* Begin a transaction of the given kind ("install" / "uninstall"): picks an
 * id (UTC time + pid) and creates the stage folder. Requires the tree's
 * lock (cdd_txn_lock). */
int cdd_txn_begin(struct cdd_tree *tree, const char *kind,
                  struct cdd_txn **out);
const char *cdd_txn_id(const struct cdd_txn *t);
/* Stage folder, a tree path: ".cudnn-deploy/stage-<id>"; callers write the
 * staged files there through the tree. */
const char *cdd_txn_stage_rel(const struct cdd_txn *t);
struct cdd_tree *cdd_txn_tree(const struct cdd_txn *t);

/* Queue operations (nothing changes until commit):
 * put: move src (under .cudnn-deploy, e.g. the stage) to dest; an existing
 *      dest is first moved to backup/<id>/<dest>.
 * del: move dest to backup/<id>/<dest> (a dest already gone is skipped).
 * rmdir: after all puts and dels, remove the folder dir if it is then empty
 *      (a non-empty or missing one is left alone, not an error); a roll-back
 *      creates it again (mode 0755). Lets uninstall remove the folders its
 *      install created in the same commit.
 * Paths are relative to root, '/'-separated, with no "." / ".." / empty
 * components, and each must pass cdd_path_is_safe (the shape install
 * writes). src must be under this
 * transaction's stage or an earlier transaction's backup; dest outside
 * .cudnn-deploy except CDD_RECEIPT_FILE and CDD_MANIFEST_COPY. Each path
 * may be named once per transaction. CDD_E_UNSAFE otherwise. */
int cdd_txn_put(struct cdd_txn *t, const char *src_rel, const char *dest_rel);
int cdd_txn_del(struct cdd_txn *t, const char *dest_rel);
int cdd_txn_rmdir(struct cdd_txn *t, const char *dir_rel);
/* What the caller knows dest holds (it hashed it moments ago, under the
 * lock): when type and size still agree at commit, the journal records this
 * sha256 for dest's backup instead of hashing the file again. */
int cdd_txn_expect(struct cdd_txn *t, const char *dest_rel,
                   const struct cdd_jprev *prev);
size_t cdd_txn_count(const struct cdd_txn *t);

/* Commit: write and sync the journal, create missing folders (recorded so a
 * roll-back removes them), perform the queued moves, sync the folders, write
 * the commit record, then clean up: remove the stage and the journal, and
 * the backup folder when purge_backup is set (uninstall) or when it is empty;
 * folders of an earlier backup emptied by puts from it are removed too.
 * On any failure the moves done so far are undone, the stage and backup are
 * removed, and the error is returned (if the roll-back itself fails, the
 * original error is returned, its message says so, and the journal stays for
 * cdd_txn_recover). A failure during the clean-up after the commit record
 * still returns 0: the tree is "after", and the leftovers (stage, backup,
 * journal) are removed by the next recover. Refuses (before any change) a
 * dest that is a folder, a dest reached through a symlinked folder that
 * leads out of the tree (CDD_E_UNSAFE), one file reached by two dests.
 * Polls cdd_cancelled() between steps: rolls back, CDD_E_INTERRUPTED.
 * Frees t in every case. */
int cdd_txn_commit(struct cdd_txn *t, int purge_backup);

/* Abandon a transaction before commit: remove the stage. Frees t. */
void cdd_txn_abort(struct cdd_txn *t);

/* Finish (commit record present) or undo (absent) an interrupted
 * transaction, and remove stray stage folders and *.tmp files in
 * .cudnn-deploy. *found is set to 1 when there was something to do (a
 * journal, or a stage left by a process killed while staging); *rolled_back
 * to 1 when it was undone (a stray stage counts: the tree never changed).
 * *id, when not NULL, receives the interrupted transaction's id (malloc'd).
 * A journal that cannot be read as one, a record that breaks the rules of
 * journal.h, or a backup that is not what its record says: CDD_E_STATE
 * naming the journal and the record, nothing changed. Requires the lock
 * (cdd_txn_lock calls it). */
int cdd_txn_recover(struct cdd_tree *tree, int *found, int *rolled_back,
                    char **id);

#endif
