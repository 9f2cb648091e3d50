/* Loading shared libraries, by absolute path only, and finding the NVIDIA
 * driver library the way the platform loader would.
 *
 * Our safety rules forbid loading by bare name: a bare name lets the search
 * order pick whichever copy comes first, which is exactly the confusion
 * verify exists to expose. So the search is done here, in the open, and the
 * result is loaded by its full path. The platform files (loader_posix.c,
 * loader_win32.c) hold the dlopen/LoadLibraryExW calls, the driver's file
 * name (libcuda.so.1 / nvcuda.dll) and the search order; this header is the
 * same on every platform. */
#ifndef CDD_LOADER_H
#define CDD_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/hash.h"

struct cdd_lib;

/* A generic function pointer: converting it to the real function-pointer
 * type is well defined C, unlike converting a data pointer (void *). */
typedef void (*cdd_lib_fn)(void);

/* Load the library at abs_path (POSIX: dlopen RTLD_NOW|RTLD_LOCAL).
 * Errors: CDD_E_USAGE when abs_path is not absolute; CDD_E_NOTFOUND when the
 * file does not exist; CDD_E_CHECK when it exists but the loader refused it
 * (missing dependency, wrong architecture, not a library): the message holds
 * the loader's own words (dlerror() / the Windows error text), os_err the
 * Windows error number (126, 193, ...); cdd_lib_open_explained() (loaddiag.h)
 * adds which import is missing. */
int cdd_lib_open(const char *abs_path, struct cdd_lib **out);

/* Address of an exported symbol, NULL when the library does not export it. */
void *cdd_lib_sym(struct cdd_lib *l, const char *name);

/* The same as a function pointer, NULL when absent. */
cdd_lib_fn cdd_lib_func(struct cdd_lib *l, const char *name);

/* The absolute path the library was opened with. */
const char *cdd_lib_path(const struct cdd_lib *l);

/* Unload (dlclose / FreeLibrary). Accepts NULL. */
void cdd_lib_close(struct cdd_lib *l);

/* Absolute path of the NVIDIA driver library (libcuda.so.1 / nvcuda.dll) that
 * the platform loader would pick, found without loading anything by bare
 * name; malloc'd into *out. The environment variable CUDNN_DEPLOY_DRIVER_LIB
 * (an absolute path) overrides the search; tests point it at a fake driver.
 * Errors: CDD_E_NOTFOUND when there is no driver library (the gpu layer is
 * then skipped, not failed); CDD_E_USAGE when CUDNN_DEPLOY_DRIVER_LIB is not
 * absolute; CDD_E_NOMEM. */
int cdd_driver_library_path(char **out);

/* Every file that the platform loader could pick for the library name
 * `soname` (e.g. "libcuda.so.1"), in the loader's search order, so that the
 * first one is the winner and the rest are copies it shadows; duplicates (the
 * same path reached twice) are listed once. *paths is a malloc'd array of
 * malloc'd absolute paths, free with cdd_lib_paths_free(); *n may be 0.
 * More than CDD_LIB_COPIES_MAX copies is CDD_E_TOOLONG, never a cut list. */
int cdd_lib_find_all(const char *soname, char ***paths, size_t *n);

/* Where the platform loader, loading abs_path as cdd_lib_open() does, finds
 * abs_path's import `name` (a bare file name): malloc'd into *out, NULL when
 * nowhere; *in_system is 1 when that is the system folder, whose libraries
 * resolve their own imports. Windows: abs_path's folder, the application
 * folder, System32. POSIX: the dynamic linker resolves imports by its own
 * rules (RUNPATH, LD_LIBRARY_PATH, its cache), no folder list: CDD_E_NOTSUP.
 * For verify's explanation of a refused library (loaddiag.h). */
int cdd_lib_dep_find(const char *abs_path, const char *name, char **out,
                     int *in_system);

/* The first copy of the library `name` in a folder of PATH, where the
 * Windows loader does not look for a library's imports (nor does Python
 * 3.8+): malloc'd into *out, NULL when none. POSIX: PATH holds no libraries
 * for the loader: CDD_E_NOTSUP. */
int cdd_lib_find_on_path(const char *name, char **out);

/* Most copies of one library a search lists: one per folder of the search
 * order (PATH, LD_LIBRARY_PATH, the ld.so cache's entries for it, the
 * defaults), a few on real machines. */
#define CDD_LIB_COPIES_MAX 4096

/* Free what cdd_lib_find_all() returned. Accepts NULL. */
void cdd_lib_paths_free(char **paths, size_t n);

/* The platform searches' failure r, recorded for the library name (a list
 * past CDD_LIB_COPIES_MAX says so); returns r. */
int cdd_lib_search_fail(int r, const char *name);

/* ---- proven copies (issue 18) --------------------------------------------
 * verify loads only bytes it has hashed: each library is copied, hashed
 * while copying, into a fresh private folder and the copy is loaded. */

/* Create a fresh folder only this account can use, for the copies: POSIX
 * mkdtemp(3) (mode 0700) in $TMPDIR when that is absolute, else /tmp;
 * Windows a new folder in the temporary folder with a protected DACL
 * (owner, SYSTEM, Administrators only). Named cudnn-deploy-load.* so a
 * leftover of a killed run is recognised. *out malloc'd (absolute); remove
 * it with cdd_fs_remove_tree() once every library in it is closed. */
int cdd_lib_private_dir(char **out);

/* Load the library at abs_path only when its bytes hash to sha: for the
 * proven copies that a step of verify started afresh in a process of its
 * own loads again (isolate.h; Windows). The file is held open against
 * writers from the first byte hashed until the loader has mapped it.
 * CDD_E_CHECK when the bytes are not the ones proven; else as
 * cdd_lib_open. POSIX: CDD_E_NOTSUP (a forked child has them loaded). */
int cdd_lib_open_proven(const char *abs_path,
                        const uint8_t sha[CDD_SHA256_LEN],
                        struct cdd_lib **out);

/* May an account other than the caller's (and the system's own: root;
 * SYSTEM, Administrators, TrustedInstaller) change what dir holds? In the
 * spirit of sshd's StrictModes. leaf: dir is the folder that holds the
 * library itself (anyone who may create or replace an entry there counts);
 * else a folder above one (only who may rename or replace its entries, or
 * its permissions, counts: a sticky folder such as /tmp protects what it
 * does not own). 0 with *problem NULL when it is safe, or *problem
 * (malloc'd) saying who can write ("other-writable (mode 0777)", "owned by
 * uid 1001", "BUILTIN\Users may add files") and fix holding the commands
 * that repair it (chmod/chown; icacls). Errors: CDD_E_NOMEM; an unreadable
 * folder is a problem, not an error. */
struct cdd_fixes;
int cdd_lib_dir_trust(const char *dir, int leaf, char **problem,
                      struct cdd_fixes *fix);

#endif
