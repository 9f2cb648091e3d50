/* What unit tests stand on, shared by all of them (tests/unit/fixture.c,
 * linked into every unit test): scratch folders under CDD_TEST_TMP, joined
 * paths, files written and read back, a file written through a tree handle.
 * A fixture that cannot be made is not a failed check but a broken test
 * machine: these print why on stderr and return -1 (or NULL), and the
 * scratch helpers exit(2). Strings they return live until exit (the leak
 * checks of the ASan and valgrind runs stay quiet). docs/testing.md. */
#ifndef CDD_TEST_FIXTURE_H
#define CDD_TEST_FIXTURE_H

#include <stddef.h>

struct cdd_tree;

/* The test's scratch root: <CDD_TEST_TMP or /tmp>/unit-<pid>, made on first
 * use (on Windows a /-rooted CDD_TEST_TMP, as Wine gets it, becomes Z:/...). */
const char *fx_root(void);

/* A fresh, empty folder <root>/<name> (name may hold '/'): whatever was
 * there before is removed. Exits 2 when it cannot be made. */
const char *fx_scratch(const char *name);

/* dir + "/" + rel, a string that lives until exit. */
const char *fx_path(const char *dir, const char *rel);

/* <root>/<name>, without creating or removing anything. */
const char *fx_tmp(const char *name);

/* path's folders, made as needed: 0 or -1. */
int fx_mkdirs(const char *path);

/* path holds exactly these bytes afterwards (its folders made): 0 or -1. */
int fx_write(const char *path, const void *data, size_t len);

/* fx_write of a NUL-terminated text. */
int fx_write_text(const char *path, const char *text);

/* fx_write of a NUL-terminated text at dir/rel. */
int fx_put(const char *dir, const char *rel, const char *text);

/* path's bytes, malloc'd with a NUL after them (*len without it; len may be
 * NULL), or NULL when it cannot be read. */
unsigned char *fx_read(const char *path, size_t *len);

/* 1 when path holds exactly text, else 0. */
int fx_file_is(const char *path, const char *text);

/* Writes text to rel through the tree handle (create, write, close; abort
 * on failure), as the transaction does: 0 or the core's error code. */
int fx_tree_put(struct cdd_tree *t, const char *rel, const char *text);

#endif
