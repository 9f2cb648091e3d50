/* Fuzz target: NVIDIA's redistrib_<version>.json reader (redistrib.c). The
 * first byte picks the query (platform, CUDA major, whether the version is
 * checked, which file name), the rest is the JSON text. An entry it returns
 * has a relative path ending in the file asked for, one that is a safe
 * relative path (it is appended to NVIDIA's base URL); a failure is
 * CDD_E_MANIFEST or CDD_E_NOMEM with a one-line message, and leaves the
 * entry empty. */
#include "fuzz.h"

#include "cdd/error.h"
#include "cdd/pathsafe.h"
#include "cdd/redistrib.h"

static const char *const files[] = {
    "cudnn-linux-x86_64-8.9.7.29_cuda11-archive.tar.xz",
    "cudnn-windows-x86_64-8.5.0.96_cuda11-archive.zip",
    "cudnn-linux-x86_64-9.14.0.64_cuda13-archive.tar.xz",
    "x.zip",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    struct cdd_redistrib_query q = {
        .product = "cudnn",
        .version = (sel & 1) ? NULL : (sel & 2) ? "8.9.7.29" : "8.5.0.96",
        .platform = (sel & 4) ? CDD_PLATFORM_WINDOWS_X86_64
                              : CDD_PLATFORM_LINUX_X86_64,
        .cuda_major = (sel & 8) ? 12 : (sel & 0x80) ? 13 : 11,
        .filename = files[(sel >> 4) & 3],
    };
    struct cdd_redistrib_entry e;
    memset(&e, 0, sizeof e);
    int r = cdd_redistrib_parse((const char *)data + 1, size - 1, "fuzz.json",
                                &q, &e);
    if (r) {
        FUZZ_ASSERT(r == CDD_E_MANIFEST || r == CDD_E_NOMEM, "error %d", r);
        fuzz_check_error();
        FUZZ_ASSERT(e.relative_path == NULL, "a failure left a path");
    } else {
        const char *p = e.relative_path;
        size_t lp = p ? strlen(p) : 0, lf = strlen(q.filename);
        FUZZ_ASSERT(p && lp >= lf && strcmp(p + lp - lf, q.filename) == 0,
                    "relative path %s does not end in %s", p ? p : "(null)",
                    q.filename);
        FUZZ_ASSERT(cdd_path_is_safe(p, 0, NULL),
                    "unsafe relative path accepted: %s", p);
    }
    cdd_clear_error();
    cdd_redistrib_entry_clear(&e);
    return 0;
}
