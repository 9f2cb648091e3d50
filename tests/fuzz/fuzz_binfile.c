/* Fuzz targets: the ELF and PE readers (binfmt/elf.c, binfmt/pe.c, through
 * binfile.c and the bounded reader binrd.c), built twice from this file:
 * with CDD_FUZZ_ELF the input's first four bytes are forced to ELF's magic,
 * with CDD_FUZZ_PE its first two to "MZ", so each fuzzer spends its time in
 * one format. The file is read from memory through a read_at callback that
 * also checks the parser never asks for bytes past the end. A parse either
 * fails with CDD_E_CORRUPT, CDD_E_NOTSUP or CDD_E_NOMEM (one-line message)
 * and leaves the result zeroed, or yields lists within the header's limits,
 * names within CDD_BIN_MAX_STRING, and exports sorted, unique, and found by
 * cdd_bininfo_exports(). */
#include "fuzz.h"

#include "cdd/binfile.h"
#include "cdd/error.h"

struct memsrc {
    const uint8_t *b;
    size_t len;
};

static int mem_read_at(void *ud, uint64_t off, void *buf, size_t len)
{
    const struct memsrc *m = ud;
    FUZZ_ASSERT(off <= m->len && len <= m->len - off,
                "read of %zu bytes at %llu past the end (%zu)", len,
                (unsigned long long)off, m->len);
    memcpy(buf, m->b + off, len);
    return 0;
}

static void check_list(char **v, size_t n, size_t max, const char *what)
{
    FUZZ_ASSERT(n <= max, "%zu %s", n, what);
    FUZZ_ASSERT(n == 0 || v, "%s: count without a list", what);
    for (size_t i = 0; i < n; i++)
        FUZZ_ASSERT(v[i] && strlen(v[i]) <= CDD_BIN_MAX_STRING, "%s[%zu]", what,
                    i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef CDD_FUZZ_ELF
    static const char magic[] = "\177ELF";
    const size_t nmagic = 4;
#else
    static const char magic[] = "MZ";
    const size_t nmagic = 2;
#endif
    uint8_t *img = malloc(size + nmagic);
    if (!img)
        return 0;
    memcpy(img, magic, nmagic);
    if (size > nmagic)
        memcpy(img + nmagic, data + nmagic, size - nmagic);
    size_t len = size > nmagic ? size : nmagic;
    struct memsrc m = {img, len};
    struct cdd_binsrc src = {.ud = &m, .size = len, .read_at = mem_read_at,
                             .name = "fuzz.bin"};
    struct cdd_bininfo b;
    memset(&b, 0xA5, sizeof b); /* "overwritten", says binfile.h */
    int r = cdd_bin_parse(&src, &b);
    if (r) {
        FUZZ_ASSERT(r == CDD_E_CORRUPT || r == CDD_E_NOTSUP || r == CDD_E_NOMEM,
                    "error %d", r);
        fuzz_check_error();
        static const struct cdd_bininfo zero;
        FUZZ_ASSERT(memcmp(&b, &zero, sizeof b) == 0,
                    "a failed parse left a result");
        goto out;
    }
#ifdef CDD_FUZZ_ELF
    FUZZ_ASSERT(b.fmt == CDD_BIN_ELF, "format %d", (int)b.fmt);
#else
    FUZZ_ASSERT(b.fmt == CDD_BIN_PE, "format %d", (int)b.fmt);
#endif
    FUZZ_ASSERT(b.machine_name != NULL, "machine name");
    check_list(b.needed, b.n_needed, CDD_BIN_MAX_NEEDED, "needed");
    check_list(b.delay_needed, b.n_delay_needed, CDD_BIN_MAX_NEEDED,
               "delay_needed");
    check_list(b.exports, b.n_exports, CDD_BIN_MAX_EXPORTS, "exports");
    for (size_t i = 0; i < b.n_exports; i++) {
        FUZZ_ASSERT(i == 0 || strcmp(b.exports[i - 1], b.exports[i]) < 0,
                    "exports not sorted and unique at %zu", i);
        FUZZ_ASSERT(cdd_bininfo_exports(&b, b.exports[i]), "export %zu lost",
                    i);
    }
    FUZZ_ASSERT(!b.soname || strlen(b.soname) <= CDD_BIN_MAX_STRING, "soname");
out:
    cdd_clear_error();
    cdd_bininfo_clear(&b);
    free(img);
    return 0;
}
