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
 * add files to root and is not elevated; 0 otherwise, also when it cannot be
 * told (the operation then reports what happens). Writes nothing. */
int cdd_check_write_access(const char *root);

#endif
