/* Fuzz target: the journal reader (journal.c), the state recovery acts on.
 * A journal it accepts holds only records that follow the rules the engine
 * queued them under (checked again here with the same rule functions: a
 * move's source in this transaction's stage, every destination a tree path,
 * every folder one install may create), and when its plan was complete
 * ("E") it formats back to a text that reads again into the same plan. A
 * refusal is CDD_E_STATE (or CDD_E_NOMEM) with a one-line message. */
#include "fuzz.h"

#include "cdd/error.h"
#include "cdd/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cdd_journal j, k;
    char *text = fuzz_strdup(data, size), *fmt = NULL, *copy = NULL;
    size_t len = 0;
    memset(&k, 0, sizeof k);
    int r = cdd_journal_parse("tree/.cudnn-deploy/journal", text, &j);
    if (r) {
        FUZZ_ASSERT(r == CDD_E_STATE || r == CDD_E_NOMEM, "error %d", r);
        fuzz_check_error();
        goto out;
    }
    FUZZ_ASSERT(cdd_jid_ok(j.id) && cdd_jkind_ok(j.kind), "header accepted");
    FUZZ_ASSERT(!j.committed || j.acted, "committed without a plan");
    for (size_t i = 0; i < j.n_mdirs; i++)
        FUZZ_ASSERT(cdd_jdir_ok(j.mdirs[i]), "folder %s", j.mdirs[i]);
    for (size_t i = 0; i < j.nops; i++) {
        const struct cdd_jop *op = &j.ops[i];
        FUZZ_ASSERT(op->type == 'P' || op->type == 'D' || op->type == 'R',
                    "record type %c", op->type);
        if (op->type == 'R') {
            FUZZ_ASSERT(cdd_jdir_ok(op->dest), "folder %s", op->dest);
            continue;
        }
        FUZZ_ASSERT(cdd_jdest_ok(op->dest), "destination %s", op->dest);
        if (op->type == 'P')
            FUZZ_ASSERT(cdd_jsrc_ok(op->src, j.id), "source %s", op->src);
        else
            FUZZ_ASSERT(op->has_prev, "a removal without its backup record");
        if (op->has_prev)
            FUZZ_ASSERT(op->prev.type == CDD_FT_FILE ||
                            (op->prev.type == CDD_FT_SYMLINK && op->prev.target),
                        "backup record of type %d", (int)op->prev.type);
    }
    if (!j.acted)
        goto out;
    FUZZ_ASSERT(cdd_journal_format(&j, &fmt, &len) == 0, "format: %s",
                cdd_last_error()->msg);
    FUZZ_ASSERT(len == strlen(fmt), "format's length");
    copy = strdup(fmt);
    FUZZ_ASSERT(copy, "out of memory");
    r = cdd_journal_parse("back", copy, &k);
    FUZZ_ASSERT(r == 0, "the formatted journal does not read: %s\n%s",
                cdd_last_error()->msg, fmt);
    FUZZ_ASSERT(k.acted && k.nops == j.nops && k.n_mdirs == j.n_mdirs &&
                    k.purge == j.purge && strcmp(k.id, j.id) == 0,
                "round trip changed the plan");
    for (size_t i = 0; i < j.nops; i++)
        FUZZ_ASSERT(k.ops[i].type == j.ops[i].type &&
                        strcmp(k.ops[i].dest, j.ops[i].dest) == 0 &&
                        k.ops[i].has_prev == j.ops[i].has_prev,
                    "round trip changed record %zu", i);
out:
    cdd_clear_error();
    cdd_journal_clear(&j);
    cdd_journal_clear(&k);
    free(fmt);
    free(copy);
    free(text);
    return 0;
}
