/* The portable halves of env_posix.c / env_win32.c (env.c), for the platform
 * files only. */
#ifndef CDD_ENV_INT_H
#define CDD_ENV_INT_H

/* For each PYTHONPATH entry (split on the host's list separator; Windows
 * entries with '/' separators; POSIX entries only when absolute) that
 * is_dir() says is a folder: fn(ud, dir, "PYTHONPATH"). Entries of 4096
 * bytes or more are skipped. Stops at, and returns, fn's first non-zero. */
int cdd_pythonpath_each(int (*fn)(void *ud, const char *path,
                                  const char *origin),
                        void *ud, int (*is_dir)(const char *path));

#endif
