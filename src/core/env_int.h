/* The portable halves of env_posix.c / env_win32.c (env.c), for the platform
 * files only. */
#ifndef CDD_ENV_INT_H
#define CDD_ENV_INT_H

/* Most folders one wildcard of the conventions (cuda-*, python3.*, CUDA's
 * v*) may match in one folder: one per installed CUDA or Python version, a
 * handful on real machines. More is refused (CDD_E_TOOLONG), not cut. */
#define CDD_ENV_GLOB_MAX 4096

/* For each PYTHONPATH entry (split on the host's list separator; Windows
 * entries with '/' separators; POSIX entries only when absolute) that
 * is_dir() says is a folder: fn(ud, dir, "PYTHONPATH"). Entries of 4096
 * bytes or more are skipped. Stops at, and returns, fn's first non-zero. */
int cdd_pythonpath_each(int (*fn)(void *ud, const char *path,
                                  const char *origin),
                        void *ud, int (*is_dir)(const char *path));

#endif
