/* `manifest create`: describe an archive the user trusts as a complete
 * manifest (every entry's role, size and sha256, the archive's own sha256
 * and size, and the verify section for its cuDNN major). The archive passes
 * the same safety checks as an install. */
#ifndef CDD_MCREATE_H
#define CDD_MCREATE_H

#include <stdint.h>

#include "cdd/manifest.h"

struct cdd_mcreate_opts {
    const char *archive_path;
    const char *version;  /* NULL: from include/cudnn_version.h (+ the build
                             number from the file name when it agrees) */
    int cuda_major;       /* 0: from the file name ("_cuda11-") */
    /* --platform: the archive's platform when the file name does not say
     * (platform_given 0: from the name, else from the libraries' machine;
     * AArch64 ELF alone cannot tell linux-sbsa from linux-aarch64). The
     * runtime libraries' ELF e_machine / PE machine must agree with it. */
    int platform_given;
    enum cdd_platform platform;
};

/* Bytes of each runtime library read to identify its format and machine
 * (the PE header lies at e_lfanew, a few hundred bytes in). */
#define CDD_MCREATE_PROBE (64u << 10)

/* Without a manifest nothing sizes the entries, so the bytes read from the
 * archive's files in all are bounded: at most CDD_MCREATE_MAX_TOTAL, and at
 * most CDD_MCREATE_BASE_TOTAL plus CDD_MCREATE_RATIO times the archive's
 * own size (a decompression bomb of a few KB stops after about 1 GiB; real
 * cuDNN archives compress 1.5-3:1). Over it: CDD_E_ARCHIVE. See
 * docs/manifest.md. */
#define CDD_MCREATE_MAX_TOTAL (UINT64_C(16) << 30)
#define CDD_MCREATE_BASE_TOTAL (UINT64_C(1) << 30)
#define CDD_MCREATE_RATIO 64u

int cdd_manifest_create(const struct cdd_mcreate_opts *o,
                        struct cdd_manifest **out);

/* The verify section for a cuDNN major's known structure, for the files a
 * manifest lists (sub-libraries absent from it are left out). */
int cdd_manifest_fill_verify(struct cdd_manifest *m, int cudnn_major,
                             int minor, int patch);

#endif
