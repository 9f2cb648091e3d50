/* Fuzz target: the fatbinary walker (binfmt/fatbin.c), on the input as the
 * contents of a .nv_fatbin section, read from memory through a read_at that
 * asserts no read leaves the section. A walk either fails with
 * CDD_E_CORRUPT or CDD_E_NOMEM (a rendered one-line message), or yields at
 * most CDD_FATBIN_MAX_CODES distinct codes in their order (SASS before
 * PTX, then architecture, variant, version), each counted at least once, whose counts and the skipped entries add up to the entries
 * walked; the summary line fits its buffer on one line; merging the result
 * into a copy of itself doubles every count; and for every compute
 * capability the fit names code exactly when there is some. */
#include "fuzz.h"

#include "cdd/error.h"
#include "cdd/fatbin.h"

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

static struct cdd_fatbin_info fi, twice;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct memsrc m = {data, size};
    struct cdd_binsrc src = {.ud = &m, .size = size, .read_at = mem_read_at,
                             .name = "fuzz.so"};
    int r = cdd_fatbin_scan(&src, 0, size, &fi);
    if (r) {
        FUZZ_ASSERT(r == CDD_E_CORRUPT || r == CDD_E_NOMEM, "error %d", r);
        fuzz_check_error();
        cdd_clear_error();
        return 0;
    }
    FUZZ_ASSERT(fi.n_codes <= CDD_FATBIN_MAX_CODES, "%zu codes", fi.n_codes);
    size_t sum = 0;
    for (size_t i = 0; i < fi.n_codes; i++) {
        const struct cdd_fatbin_code *c = &fi.codes[i];
        FUZZ_ASSERT(c->kind == CDD_FATBIN_KIND_PTX ||
                        c->kind == CDD_FATBIN_KIND_SASS,
                    "code %zu of kind %d", i, c->kind);
        FUZZ_ASSERT(c->count > 0, "code %zu counted 0 times", i);
        if (i > 0) {
            /* SASS before PTX, then arch, variant, version; no two alike */
            const struct cdd_fatbin_code *p = &fi.codes[i - 1];
            int pk = p->kind == CDD_FATBIN_KIND_SASS ? 0 : 1;
            int ck = c->kind == CDD_FATBIN_KIND_SASS ? 0 : 1;
            long d = pk != ck ? pk - ck
                   : p->arch != c->arch ? (p->arch < c->arch ? -1 : 1)
                   : p->variant != c->variant ? p->variant - c->variant
                   : p->major != c->major ? (p->major < c->major ? -1 : 1)
                   : p->minor != c->minor ? (p->minor < c->minor ? -1 : 1) : 0;
            FUZZ_ASSERT(d < 0, "codes out of order or repeated at %zu", i);
        }
        sum += c->count;
    }
    FUZZ_ASSERT(sum + fi.n_other == fi.n_entries,
                "%zu counted + %zu skipped != %zu entries", sum, fi.n_other,
                fi.n_entries);
    FUZZ_ASSERT(fi.n_compressed <= fi.n_entries, "compressed count");
    static char line[8192];
    memset(line, 'Z', sizeof line);
    cdd_fatbin_describe(&fi, line, 200);
    FUZZ_ASSERT(strnlen(line, 200) < 200 && !strchr(line, '\n'),
                "summary line");
    twice = fi;
    FUZZ_ASSERT(cdd_fatbin_merge(&twice, &fi) == 0, "merge into itself: %s",
                cdd_last_error()->msg);
    FUZZ_ASSERT(twice.n_codes == fi.n_codes, "merge changed the codes");
    for (size_t i = 0; i < fi.n_codes; i++)
        FUZZ_ASSERT(twice.codes[i].count == 2 * fi.codes[i].count,
                    "merge did not add code %zu", i);
    for (int major = 3; major <= 12; major++)
        for (int minor = 0; minor <= 9; minor += 3) {
            unsigned arch = 12345;
            enum cdd_arch_fit f = cdd_fatbin_fit(&fi, major, minor, &arch);
            FUZZ_ASSERT(fi.n_codes || f == CDD_ARCH_NO_CODE,
                        "a fit without code");
            FUZZ_ASSERT((f == CDD_ARCH_SASS || f == CDD_ARCH_PTX_JIT)
                            ? arch != 0 : arch == 0,
                        "fit %d names arch %u", (int)f, arch);
        }
    cdd_clear_error();
    return 0;
}
