/* Fuzz target: the manifest parser (manifest.c). Whatever the bytes, the
 * parser returns 0 or CDD_E_MANIFEST (or CDD_E_NOMEM) with a one-line
 * message; a manifest it accepts holds only safe paths (the same validator
 * as archive entries) and writes back (manifest_write.c) to a text that
 * parses again into a manifest writing the very same text: the writer and
 * the parser agree on every manifest the parser lets through. */
#include "fuzz.h"

#include "cdd/error.h"
#include "cdd/manifest.h"
#include "cdd/pathsafe.h"

static void check_message(int r)
{
    FUZZ_ASSERT(r == CDD_E_MANIFEST || r == CDD_E_NOMEM, "error %d", r);
    fuzz_check_error();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cdd_manifest *m = NULL, *back = NULL;
    char *text = NULL, *again = NULL;
    int r = cdd_manifest_parse((const char *)data, size, "fuzz.json", &m);
    if (r) {
        FUZZ_ASSERT(m == NULL, "a failed parse left a manifest");
        check_message(r);
        goto out;
    }
    for (size_t i = 0; i < m->n_files; i++) {
        FUZZ_ASSERT(cdd_path_is_safe(m->files[i].path, 0, NULL),
                    "accepted an unsafe path");
        if (m->files[i].role == CDD_ROLE_SYMLINK)
            FUZZ_ASSERT(m->files[i].target &&
                            cdd_link_target_is_safe(m->files[i].target, NULL),
                        "accepted an unsafe link target");
    }
    r = cdd_manifest_to_json(m, &text);
    FUZZ_ASSERT(r == 0, "an accepted manifest does not write: %s",
                cdd_last_error()->msg);
    r = cdd_manifest_parse(text, strlen(text), "fuzz-back.json", &back);
    FUZZ_ASSERT(r == 0, "the written manifest does not parse: %s\n%s",
                cdd_last_error()->msg, text);
    FUZZ_ASSERT(cdd_manifest_to_json(back, &again) == 0, "second write");
    FUZZ_ASSERT(strcmp(text, again) == 0, "round trip differs:\n%s\n%s", text,
                again);
    FUZZ_ASSERT(back->n_files == m->n_files &&
                    back->files_exact == m->files_exact &&
                    back->has_verify == m->has_verify,
                "round trip changed the manifest");
out:
    cdd_clear_error();
    free(text);
    free(again);
    cdd_manifest_free(m);
    cdd_manifest_free(back);
    return 0;
}
