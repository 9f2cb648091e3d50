/* Environment and host facts, behind an interface so the Win32 layer can read
 * the UTF-16 environment and tests can override values. */
#ifndef CDD_ENV_H
#define CDD_ENV_H

/* getenv() in UTF-8; NULL when unset or empty. */
const char *cdd_getenv(const char *name);
/* Default root of CUDA vMAJOR.MINOR on this host (malloc'd):
 * Linux /usr/local/cuda-X.Y; Windows %ProgramFiles%\NVIDIA GPU Computing
 * Toolkit\CUDA\vX.Y. */
char *cdd_default_cuda_root(int major, int minor);
/* Absolute form of a path (not resolving symlinks), malloc'd. */
char *cdd_absolute_path(const char *path);
/* Default folder of the download cache (malloc'd), or NULL when the
 * environment names none: Linux $XDG_CACHE_HOME/cudnn-deploy (when absolute)
 * else $HOME/.cache/cudnn-deploy; Windows %LOCALAPPDATA%\cudnn-deploy\cache. */
char *cdd_default_cache_dir(void);
/* 1 when this process runs with administrator rights: an elevated token on
 * Windows, effective uid 0 on POSIX. */
int cdd_is_elevated(void);
/* Before a command changes the tree at root: CDD_E_PERM, with the advice to
 * use an elevated prompt (Windows) or root (POSIX), when this process may not
 * add files to first (the folder the first write goes into: the tree's state
 * folder when it has one, else root; the tree says which, tree.c) and is not
 * elevated; 0 otherwise, also when it cannot be told (the operation then
 * reports what happens). Writes nothing; builds no path itself. */
int cdd_check_write_access(const char *root, const char *first);

/* ---- what doctor looks at (platform conventions) --------------------------
 * Each calls fn(ud, ...) once per item; fn returning non-zero stops the walk
 * and is returned. Paths use '/' separators (Windows too). */

/* Every environment variable whose name starts with prefix ("CUDA_PATH_V"),
 * with a non-empty value: names compare case-insensitively on Windows, whose
 * environment is case-insensitive. */
int cdd_env_each(const char *prefix,
                 int (*fn)(void *ud, const char *name, const char *value),
                 void *ud);
/* Every existing folder where this host's CUDA installer puts toolkits,
 * sorted by name: Linux /usr/local/cuda, /usr/local/cuda-*; Windows
 * %ProgramFiles%\NVIDIA GPU Computing Toolkit\CUDA\v*. origin is a short
 * static label ("default root"). */
int cdd_default_cuda_roots(int (*fn)(void *ud, const char *path,
                                     const char *origin),
                           void *ud);
/* Python site folders that can be found without running Python: PYTHONPATH
 * entries, VIRTUAL_ENV's and CONDA_PREFIX's site-packages, that of the first
 * python3 (python.exe) on PATH, the user site, the
 * system's (Linux /usr/lib/python3/dist-packages, /usr/local/lib/python3.N/
 * ...; Windows %APPDATA%\Python\Python3N, the python.org installs). Existing
 * folders only; the same folder may come twice under two origins ("VIRTUAL_ENV",
 * "CONDA_PREFIX", "PYTHONPATH", "python3 on PATH", "user site", "system"). */
int cdd_python_site_dirs(int (*fn)(void *ud, const char *path,
                                   const char *origin),
                         void *ud);
/* The folder where the system's shared runtime DLLs live (Windows: System32,
 * where the Visual C++ runtime is installed), malloc'd; NULL on hosts that
 * have no such folder (POSIX). */
char *cdd_system_dir(void);

#endif
