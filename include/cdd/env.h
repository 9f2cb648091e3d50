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

#endif
