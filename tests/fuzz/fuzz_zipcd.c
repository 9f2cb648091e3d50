/* Fuzz target: the zip central-directory parser (archive/zipcd.c). The input
 * is written to a file in the scratch folder and read as an archive would
 * be: sniffed, then, when it is a zip, read whole. A zip it accepts has
 * records in local-header order, each inside the file, its data after its
 * local header and its end no later than the next record's start (no
 * overlap: every reader sees the same bytes for it), names that are the
 * stated length and hold no NUL or control character, and a copy
 * (cdd_zipcd_dup) that says the same. Refusals are CDD_E_CORRUPT,
 * CDD_E_UNSAFE, CDD_E_ARCHIVE or CDD_E_NOMEM with a one-line message. */
#include "fuzz.h"

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "zipcd.h"

static void check(const struct cdd_zipcd *z, uint64_t size)
{
    size_t n = cdd_zipcd_count(z);
    FUZZ_ASSERT(n <= CDD_ZIPCD_MAX_RECORDS, "%zu records", n);
    uint64_t prev_end = 0;
    for (size_t i = 0; i < n; i++) {
        const struct cdd_zipcd_entry *e = cdd_zipcd_get(z, i);
        FUZZ_ASSERT(e && e->name, "record %zu", i);
        FUZZ_ASSERT(strlen(e->name) == e->name_len, "record %zu: name length", i);
        for (size_t k = 0; k < e->name_len; k++) {
            unsigned char c = (unsigned char)e->name[k];
            FUZZ_ASSERT(c >= 0x20 && c != 0x7F, "record %zu: control byte", i);
        }
        FUZZ_ASSERT(e->local_offset >= prev_end,
                    "record %zu starts at %llu, inside the one before (%llu)",
                    i, (unsigned long long)e->local_offset,
                    (unsigned long long)prev_end);
        FUZZ_ASSERT(e->data_offset >= e->local_offset + 30 + e->name_len,
                    "record %zu: data inside its local header", i);
        FUZZ_ASSERT(e->end_offset >= e->data_offset + e->csize &&
                        e->end_offset <= size,
                    "record %zu: data beyond its end or the file", i);
        FUZZ_ASSERT(e->central_index < n, "record %zu: central index", i);
        prev_end = e->end_offset;
    }
    struct cdd_zipcd *d = NULL;
    FUZZ_ASSERT(cdd_zipcd_dup(z, &d) == 0 && cdd_zipcd_count(d) == n, "dup");
    for (size_t i = 0; i < n; i++)
        FUZZ_ASSERT(strcmp(cdd_zipcd_get(d, i)->name,
                           cdd_zipcd_get(z, i)->name) == 0 &&
                        cdd_zipcd_get(d, i)->end_offset ==
                            cdd_zipcd_get(z, i)->end_offset,
                    "dup differs at %zu", i);
    cdd_zipcd_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[600];
    struct cdd_rfile *f = NULL;
    struct cdd_zipcd *z = NULL;
    int is_zip = 0;
    if (!path[0])
        snprintf(path, sizeof path, "%s/input.zip", fuzz_scratch());
    fuzz_write_file(path, data, size);
    FUZZ_ASSERT(cdd_fs_open_read(path, &f) == 0, "open");
    int r = cdd_zipcd_sniff(f, path, size, &is_zip);
    FUZZ_ASSERT(r == 0, "sniff: %s", cdd_last_error()->msg);
    /* A zip signature at the start is always a zip. */
    if (size >= 4 && data[0] == 'P' && data[1] == 'K')
        FUZZ_ASSERT(is_zip || !((data[2] == 3 && data[3] == 4) ||
                                (data[2] == 5 && data[3] == 6)),
                    "a PK signature not sniffed as zip");
    if (!is_zip)
        goto out;
    r = cdd_zipcd_read(f, path, size, &z);
    if (r) {
        FUZZ_ASSERT(z == NULL, "a failed read left records");
        FUZZ_ASSERT(r == CDD_E_CORRUPT || r == CDD_E_UNSAFE ||
                        r == CDD_E_ARCHIVE || r == CDD_E_NOMEM,
                    "error %d", r);
        fuzz_check_error();
        goto out;
    }
    check(z, size);
out:
    cdd_clear_error();
    cdd_zipcd_free(z);
    cdd_rfile_close(f);
    return 0;
}
