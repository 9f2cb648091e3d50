/* Fuzz target: the receipt reader (receipt.c), state a less trusted account
 * may have written. A receipt it accepts names only paths install would
 * write (cdd_jpath_ok: inside the tree, outside .cudnn-deploy), and writes
 * back to a text that reads again into a receipt writing the same text; a
 * refusal is CDD_E_STATE (or CDD_E_NOMEM) with a one-line message. */
#include "fuzz.h"

#include "cdd/error.h"
#include "cdd/journal.h"
#include "cdd/receipt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cdd_receipt *r = NULL, *back = NULL;
    char *text = NULL, *again = NULL;
    int rc = cdd_receipt_parse((const char *)data, size,
                               "tree/.cudnn-deploy/receipt.json", &r);
    if (rc) {
        FUZZ_ASSERT(r == NULL, "a failed parse left a receipt");
        FUZZ_ASSERT(rc == CDD_E_STATE || rc == CDD_E_NOMEM, "error %d", rc);
        fuzz_check_error();
        goto out;
    }
    for (size_t i = 0; i < r->n_files; i++)
        FUZZ_ASSERT(cdd_jpath_ok(r->files[i].path), "accepted file path %s",
                    r->files[i].path);
    for (size_t i = 0; i < r->n_backed_up; i++)
        FUZZ_ASSERT(cdd_jpath_ok(r->backed_up[i]), "accepted backup path %s",
                    r->backed_up[i]);
    for (size_t i = 0; i < r->n_created_dirs; i++)
        FUZZ_ASSERT(cdd_jdir_ok(r->created_dirs[i]), "accepted folder %s",
                    r->created_dirs[i]);
    FUZZ_ASSERT(cdd_receipt_to_json(r, &text) == 0,
                "an accepted receipt does not write: %s",
                cdd_last_error()->msg);
    rc = cdd_receipt_parse(text, strlen(text), "back.json", &back);
    FUZZ_ASSERT(rc == 0, "the written receipt does not read: %s\n%s",
                cdd_last_error()->msg, text);
    FUZZ_ASSERT(cdd_receipt_to_json(back, &again) == 0, "second write");
    FUZZ_ASSERT(strcmp(text, again) == 0, "round trip differs:\n%s\n%s", text,
                again);
out:
    cdd_clear_error();
    free(text);
    free(again);
    cdd_receipt_free(r);
    cdd_receipt_free(back);
    return 0;
}
