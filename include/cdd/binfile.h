/* What a shared library needs and provides, read from the file without
 * loading it: ELF (DT_NEEDED, DT_SONAME, DT_RPATH/DT_RUNPATH, dynamic
 * symbols) and PE (import, delay-import and export tables, the version
 * resource), and where each keeps its CUDA fatbinaries. verify uses it to
 * name the missing dependency (zlibwapi.dll, libcublasLt.so.11) that the
 * loader reports only as "cannot load cudnn_cnn_infer64_8.dll".
 *
 * Written for hostile input: every offset, count and string is checked
 * against the file and against the fixed limits below, and only headers and
 * tables are read, through a read-at callback and a small cache (256 KiB,
 * plus one name table of at most 16 MiB held whole), never the whole file:
 * each cuDNN 9 / CUDA 13 library we tried (up to 540 MB) cost under 500 KB.
 *
 * Errors: CDD_E_NOTSUP (neither ELF nor PE), CDD_E_CORRUPT (malformed,
 * truncated or over a limit; the message says what is wrong), CDD_E_NOMEM,
 * or whatever read_at returned (CDD_E_IO ...), recorded with cdd_fail(). */
#ifndef CDD_BINFILE_H
#define CDD_BINFILE_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/platform.h"

/* Fixed limits; a file beyond any of them is CDD_E_CORRUPT. */
#define CDD_BIN_MAX_NEEDED 4096      /* entries in each of needed, delay_needed */
#define CDD_BIN_MAX_EXPORTS 1000000  /* exported names */
#define CDD_BIN_MAX_STRING 4096      /* bytes in one name, without the NUL */
#define CDD_BIN_MAX_STRBYTES (128u << 20) /* all names kept, together */

/* Where the bytes come from. read_at returns 0 after reading exactly len
 * bytes at off (the parsers never ask beyond size), or a negative CDD_E_*
 * code it has recorded with cdd_fail(). name is used in error messages and
 * may be NULL. */
struct cdd_binsrc {
    void *ud;
    uint64_t size;
    int (*read_at)(void *ud, uint64_t off, void *buf, size_t len);
    const char *name;
};

enum cdd_binfmt { CDD_BIN_ELF = 1, CDD_BIN_PE };

/* All strings and arrays are owned by the struct; free with
 * cdd_bininfo_clear(). Lists not present in the format are NULL with count 0. */
struct cdd_bininfo {
    enum cdd_binfmt fmt;
    int is_64;                /* ELFCLASS64 / PE32+ */
    int machine;              /* e_machine / COFF Machine */
    const char *machine_name; /* "x86_64", "i386", "aarch64", "ppc64le",
                                 "ppc64", "arm", or "unknown"; static */
    char *soname;  /* ELF DT_SONAME; PE export directory DLL name; or NULL */
    char **needed; /* ELF DT_NEEDED / PE import descriptors, file order */
    size_t n_needed;
    char **delay_needed; /* PE delay-load imports, file order */
    size_t n_delay_needed;
    char *rpath, *runpath; /* ELF DT_RPATH / DT_RUNPATH, or NULL */
    /* ELF: defined global/weak dynamic FUNC/IFUNC/OBJECT/COMMON symbols of
     * default or protected visibility; PE: export names (data and forwarders
     * included). Sorted bytewise, without duplicates. */
    char **exports;
    size_t n_exports;
    /* Where the CUDA fatbinaries lie (ELF section .nv_fatbin, PE section
     * .nv_fatb): a file range checked to lie inside the file; fatbin.h
     * walks it. has_fatbin 0: no such section. */
    int has_fatbin;
    uint64_t fatbin_off, fatbin_size;
    /* PE: the RT_VERSION resource's VS_FIXEDFILEINFO (file and product
     * version, four 16-bit parts: 8.5.0.96). has_version 0: none; -1: one
     * that is malformed (version_problem says how; the loader ignores
     * version resources, so the rest of the parse stands). */
    int has_version;
    unsigned file_version[4], product_version[4];
    char version_problem[256]; /* fixed: a phrase of our parser's, cut */
    struct cdd_binarena *arena_; /* internal: owns the strings */
};

/* Parse the image behind src, dispatching on its magic. *out is
 * overwritten (clear an earlier result first); on failure it is left
 * zeroed. Not thread-safe per src; separate calls may run in parallel. */
int cdd_bin_parse(const struct cdd_binsrc *src, struct cdd_bininfo *out);

/* The format and machine only (fmt, is_64 for ELF, machine,
 * machine_name), from the headers: what the machine checks of manifest
 * create and install need, without the tables. Nothing to clear after. */
int cdd_bin_identify(const struct cdd_binsrc *src, struct cdd_bininfo *out);

/* Is the open file f a library of platform p: a PE image of its machine
 * (x64 0x8664, ARM64 0xAA64) on Windows, a 64-bit ELF of its e_machine
 * (x86-64 62, AArch64 183) on Linux? 0, or CDD_E_ARCHIVE saying what the
 * file is instead (shown names it), or f's read error. Headers only.
 * strict 0: a file that is neither ELF nor PE passes (install leaves it to
 * verify's load layer, which names it); only an identified file of another
 * format or machine is refused. */
struct cdd_rfile;
int cdd_bin_machine_check(struct cdd_rfile *f, enum cdd_platform p,
                          const char *shown, int strict);

/* Parse a file, read through cdd_fs_open_read()/cdd_rfile_pread(). */
int cdd_bin_parse_file(const char *path, struct cdd_bininfo *out);

/* A source reading the file at path (cdd_fs_open_read / cdd_rfile_pread;
 * path must outlive src); close it with cdd_binsrc_file_close, which
 * accepts a source that failed to open. */
int cdd_binsrc_file_open(const char *path, struct cdd_binsrc *src);
void cdd_binsrc_file_close(struct cdd_binsrc *src);

/* A source reading from memory (the buffer must outlive src). */
void cdd_binsrc_mem(struct cdd_binsrc *src, const void *buf, size_t len,
                    const char *name);

/* 1 if symbol is among b's exports (binary search), else 0. */
int cdd_bininfo_exports(const struct cdd_bininfo *b, const char *symbol);

/* Free everything and zero *b. Accepts NULL and a zeroed struct. */
void cdd_bininfo_clear(struct cdd_bininfo *b);

#endif
