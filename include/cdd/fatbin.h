/* What GPU code a library carries: the CUDA fatbinaries nvcc embeds (ELF
 * section .nv_fatbin, PE section .nv_fatb), read without loading anything,
 * with a bounded parser (fatbin.c). The same facts `cuobjdump --list-elf
 * --list-ptx` prints: each cubin's SASS architecture (sm_80) and each PTX's
 * virtual architecture (compute_80) and PTX ISA version.
 *
 * The section holds fatbinary containers one after another, zero padding
 * between them allowed. A container: magic 0xBA55ED50 (u32), version (u16),
 * header size (u16, >= 16), size of the entries that follow (u64). An entry:
 * kind (u16: 1 PTX, 2 ELF cubin = SASS; others, such as LTO IR, are counted
 * and skipped), version (u16), header size (u32), payload size (u64),
 * compressed size (u32), options offset (u32), minor and major version (u16
 * each; for PTX the PTX ISA version), architecture (u32: 80 = sm_80), ...,
 * flags (u64 at 40: 0x2000 compressed payload, 0x100000 arch-specific
 * cubin "sm_90a", 0x200000 family-specific cubin "sm_100f" - the last two
 * found by building with nvcc 13.0: -arch=sm_90a, sm_100a, sm_100f,
 * sm_120f each set its bit, plain sm_100 neither); the payload follows the
 * header. Only headers are read, never a payload.
 *
 * Errors: CDD_E_CORRUPT (bad magic, truncated, a size that leaves its
 * container or section, over a limit below; the message says where),
 * CDD_E_NOMEM, or the source's read error. */
#ifndef CDD_FATBIN_H
#define CDD_FATBIN_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/binfile.h"

#define CDD_FATBIN_MAGIC 0xBA55ED50u
#define CDD_FATBIN_KIND_PTX 1
#define CDD_FATBIN_KIND_SASS 2

/* Limits; beyond any, CDD_E_CORRUPT. cuDNN 9's largest library holds a few
 * thousand entries. */
#define CDD_FATBIN_MAX_ENTRIES 4000000u /* entries in one section */
#define CDD_FATBIN_MAX_CODES 256        /* distinct codes kept (below) */
/* cdd_fatbin_describe()'s longest text: every code, each at most 40 bytes */
#define CDD_FATBIN_DESC_MAX (CDD_FATBIN_MAX_CODES * 40 + 16)

/* One distinct code: SASS per architecture, PTX per architecture and ISA
 * version. */
struct cdd_fatbin_code {
    int kind;              /* CDD_FATBIN_KIND_PTX or _SASS */
    unsigned arch;         /* 80: sm_80 / compute_80 */
    char variant;          /* SASS: 'a' arch-specific (sm_90a), 'f'
                              family-specific (sm_100f), or 0 */
    unsigned major, minor; /* PTX ISA version (PTX only, else 0) */
    size_t count;          /* entries with this code */
};

struct cdd_fatbin_info {
    size_t n_containers, n_entries;
    size_t n_other;      /* entries of other kinds (skipped) */
    size_t n_compressed; /* entries whose payload is compressed */
    struct cdd_fatbin_code codes[CDD_FATBIN_MAX_CODES]; /* kind, arch order */
    size_t n_codes;
};

/* Walk the fatbinary containers in [off, off + size) of src. *out is
 * overwritten. */
int cdd_fatbin_scan(const struct cdd_binsrc *src, uint64_t off, uint64_t size,
                    struct cdd_fatbin_info *out);

/* Find the library's fatbinary section (cdd_bin_parse_file) and scan it.
 * *has: 0 when the file has no such section (out is then empty). */
int cdd_fatbin_scan_file(const char *path, int *has,
                         struct cdd_fatbin_info *out);

/* Add b's codes and counts to a (a summary over several libraries). 0, or
 * CDD_E_CORRUPT when the union exceeds CDD_FATBIN_MAX_CODES. */
int cdd_fatbin_merge(struct cdd_fatbin_info *a,
                     const struct cdd_fatbin_info *b);

/* "SASS sm_80, sm_90, sm_90a; PTX compute_90 (ISA 8.4)" or "no GPU
 * code". Returns buf. */
char *cdd_fatbin_describe(const struct cdd_fatbin_info *fi, char *buf,
                          size_t len);

/* Can a device of compute capability cc_major.cc_minor run this code?
 * CUDA's binary compatibility rules (CUDA C++ Programming Guide, "Binary
 * Compatibility" and "Application Compatibility"):
 *  - a cubin for sm_XY runs on a device of compute capability X.Z only
 *    when Z >= Y: the same major, never across majors (sm_80 code does not
 *    run on 9.0, sm_86 code does not run on 8.0);
 *  - PTX for compute_XY is compiled by the driver at load time (JIT) for
 *    any device of compute capability >= X.Y, at a cost on first use (and
 *    only when the driver understands the PTX ISA version);
 *  - an arch-specific cubin (sm_90a) runs only on exactly that compute
 *    capability; a family-specific one (sm_100f) on the devices of its
 *    family, the same major at or above its minor (the first rule). */
enum cdd_arch_fit {
    CDD_ARCH_NO_CODE = 0, /* the info holds no SASS and no PTX */
    CDD_ARCH_NONE,        /* neither matching SASS nor PTX it can JIT */
    CDD_ARCH_PTX_JIT,     /* only through PTX JIT */
    CDD_ARCH_SASS         /* matching SASS */
};

/* *arch: the code that would run (the highest matching SASS, else the
 * highest PTX at or below the device), 0 when none. */
enum cdd_arch_fit cdd_fatbin_fit(const struct cdd_fatbin_info *fi,
                                 int cc_major, int cc_minor, unsigned *arch);

#endif
