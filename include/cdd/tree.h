/* The target tree, opened once per command (apk-tools' struct apk_database
 * with its root_fd and lock_fd is the model): the root folder resolved once
 * (it may itself be a link, /usr/local/cuda -> cuda-11.6), its handle, the
 * state folder (.cudnn-deploy, a real folder, never a link) and the lock
 * (recovering an interrupted transaction is the transaction layer's,
 * src/core/tree/txn.h, on this handle).
 *
 * Every filesystem operation on the tree goes through here with a path
 * relative to the root, '/'-separated, and is resolved beneath the root
 * handle component by component:
 *   - a link that stays inside the tree is followed (real CUDA trees have
 *     lib64 -> targets/x86_64-linux/lib), also with an absolute target that
 *     names a place under the root;
 *   - a link that leaves the tree (absolute elsewhere, or ".." above the
 *     root), a dangling link on the way, a loop, or a link into
 *     .cudnn-deploy is refused: CDD_E_UNSAFE;
 *   - inside .cudnn-deploy no link is followed at all: CDD_E_STATE;
 *   - the final component is never followed (operations act on the link).
 * The operation itself then happens relative to the folder handle that holds
 * the final component, so nothing is resolved twice. No path string of the
 * tree is handed to the OS unresolved. */
#ifndef CDD_TREE_H
#define CDD_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/fsops.h"
#include "cdd/hash.h"

struct cdd_tree;

/* Open the tree at root (a folder; links in root itself are resolved now,
 * once). The state folder is opened too when it exists (a link or a
 * non-folder there: CDD_E_STATE), and its state files checked: the lock,
 * journal, receipt, manifest copy and log must each be a regular file or
 * absent (a link or folder: CDD_E_STATE naming it). Takes no lock; the lock
 * file is later opened by name inside the state folder held here. */
int cdd_tree_open(const char *root, struct cdd_tree **out);
/* The root only, for a command that reads the tree's own files and none of
 * ours (its CUDA version: doctor, releases), so that tampered state does not
 * stop it from looking: the state folder is not opened, and any call that
 * would read or lock it refuses (CDD_E_STATE). */
int cdd_tree_open_root(const char *root, struct cdd_tree **out);
/* Release the lock (if taken) and every handle. Accepts NULL. */
void cdd_tree_close(struct cdd_tree *t);
/* The canonical absolute path of the root (for messages, and for loading a
 * library by absolute path). */
const char *cdd_tree_root(const struct cdd_tree *t);
/* The absolute path of a tree path, for messages and the loader only
 * (never for a filesystem operation). malloc'd; NULL on no memory. */
char *cdd_tree_abs(const struct cdd_tree *t, const char *rel);
/* Does the state folder exist? */
int cdd_tree_has_state(const struct cdd_tree *t);

/* Before a change: may this account write the tree (said before anything
 * long runs)? Remembered, so cdd_tree_lock does not ask twice. */
int cdd_tree_check_access(struct cdd_tree *t);
/* Prepare a change: access check, the state folder (created when missing
 * and create_state is set; without it a tree with no state is left alone
 * and 0 returned, *locked 0), the lock (timeout as cdd_lock_acquire).
 * *locked, when not NULL, says whether the lock is held. A state folder
 * this call created is removed again if the lock fails. Already held: 0,
 * nothing done. An interrupted transaction is not looked at here: that is
 * the transaction layer's (cdd_txn_lock in deploy.h runs this, then
 * cdd_txn_recover), so that the tree never calls up into txn. */
int cdd_tree_lock(struct cdd_tree *t, double timeout_s, int create_state,
                  int *locked);
/* The state folder and the lock only (no access check, no recovery: the
 * engine's tests drive recovery themselves). *created: the folder was
 * made by this call. */
int cdd_tree_lock_state(struct cdd_tree *t, double timeout_s,
                        int create_state, int *created);
/* After an uninstall that left no receipt: remove the state folder when
 * nothing but our own leftovers is in it (the lock, the deploy log, an
 * empty backup folder), the lock file last while it is held, so that a
 * process waiting for the lock starts again on a fresh one (see
 * cdd_tree_lock_state). Anything else in the folder keeps it, as does
 * Windows (cdd_lock_can_unlink). *removed: whether it went. The lock is
 * released when the folder was removed. */
int cdd_tree_remove_state(struct cdd_tree *t, int *removed);
/* Release the lock early (cdd_tree_close also does). */
void cdd_tree_unlock(struct cdd_tree *t);
/* Is the lock held by this handle? */
int cdd_tree_locked(const struct cdd_tree *t);

/* ---- operations on tree paths (see the top of the file) ---------------- */

/* A missing path (or one under a missing or non-folder component, or under
 * a dangling link) is CDD_FT_NONE, not an error. */
int cdd_tree_lstat(struct cdd_tree *t, const char *rel, struct cdd_stat *st);
int cdd_tree_readlink(struct cdd_tree *t, const char *rel, char *buf,
                      size_t len);
/* The link's whole target, malloc'd into *out (a target longer than the
 * platform's path limit is an error, never cut). */
int cdd_tree_readlink_dup(struct cdd_tree *t, const char *rel, char **out);
int cdd_tree_create(struct cdd_tree *t, const char *rel, int executable,
                    struct cdd_file **out);
/* A regular file only: a link or anything else is refused. */
int cdd_tree_open_read(struct cdd_tree *t, const char *rel,
                       struct cdd_rfile **out);
int cdd_tree_sha256(struct cdd_tree *t, const char *rel,
                    uint8_t digest[CDD_SHA256_LEN], uint64_t *size);
int cdd_tree_rename(struct cdd_tree *t, const char *from, const char *to);
int cdd_tree_unlink(struct cdd_tree *t, const char *rel);
int cdd_tree_rmdir(struct cdd_tree *t, const char *rel);
int cdd_tree_mkdir(struct cdd_tree *t, const char *rel);
/* Create rel and its missing parents; *created (may be NULL) receives the
 * tree paths of the folders created, newline-separated, outermost first. */
int cdd_tree_mkdirs(struct cdd_tree *t, const char *rel, char **created);
/* Create the missing folders that will hold the tree path rel (nothing for
 * a name at the root). */
int cdd_tree_mkparents(struct cdd_tree *t, const char *rel);
/* Create the new file rel (and its missing parents) holding buf, flushed
 * and closed: a staged text that a commit will rename into place. */
int cdd_tree_write_new(struct cdd_tree *t, const char *rel, const void *buf,
                       size_t len);
int cdd_tree_symlink(struct cdd_tree *t, const char *target, const char *rel);
/* Give rel ("" is the root) the modification time sec, not following a
 * final link (install --mtime). */
int cdd_tree_set_mtime(struct cdd_tree *t, const char *rel, int64_t sec);
/* Flush a folder's entries ("" is the root). */
int cdd_tree_sync_dir(struct cdd_tree *t, const char *rel);
int cdd_tree_list(struct cdd_tree *t, const char *rel,
                  int (*fn)(void *ud, const char *name), void *ud);
/* Remove a file, link or folder with everything in it (links removed, never
 * followed); a missing one is not an error. */
int cdd_tree_remove_tree(struct cdd_tree *t, const char *rel);
/* As cdd_fs_write_atomic / cdd_fs_append_line / cdd_fs_read_all. */
int cdd_tree_write_atomic(struct cdd_tree *t, const char *rel,
                          const void *buf, size_t len);
int cdd_tree_append_line(struct cdd_tree *t, const char *rel,
                         const char *line);
int cdd_tree_read_all(struct cdd_tree *t, const char *rel, size_t max,
                      char **out, size_t *len);

/* Where rel really is: *canon receives the tree path with every link of its
 * folders resolved (malloc'd), so that two names of one file are caught;
 * *n_missing, when not NULL, the number of trailing folders of rel that do
 * not exist yet (0: its folder exists). The final component is not
 * resolved. */
int cdd_tree_canon(struct cdd_tree *t, const char *rel, char **canon,
                   size_t *n_missing);

/* Find an entry of folder dir ("" the root) whose name equals name under
 * NTFS's case-insensitive comparison (cdd_path_casecmp): 0 and *found
 * (malloc'd, the name on disk) or *found NULL when there is none. An exact
 * match wins over a case variant. */
int cdd_tree_find_case(struct cdd_tree *t, const char *dir, const char *name,
                       char **found);

#endif
