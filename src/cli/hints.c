/* Hints for the errors new users meet first, printed under the error line
 * ("cudnn-deploy: hint: ...") and kept in the JSON error object: the
 * command line and the error together say what the user probably needs.
 *   - an archive that does not match the default manifest: another cuDNN
 *     needs its own manifest (--manifest, `manifest create`);
 *   - a tree that is not there: --cuda-root, and doctor to find toolkits;
 *   - permission denied under Program Files: an elevated prompt. */
#include <stdio.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/strbuf.h"
#include "cmds.h"

/* Case-insensitive strstr for ASCII needles. */
static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               (hay[i] | 0x20) == (needle[i] | 0x20))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

char *cdd_cli_hint(const struct cdd_cmdline *cl,
                   const struct cdd_command *cmd, int code)
{
    const struct cdd_errinfo *e = cdd_last_error();
    const char *msg = e->code == code ? e->msg : "";
    const char *path = e->code == code ? e->path : "";
    int obtains = cmd->bit == CMD_INSTALL || cmd->bit == CMD_FETCH;

    if (obtains && !cl->obtain.manifest &&
        (code == CDD_E_CHECKSUM || code == CDD_E_ARCHIVE)) {
        return cdd_strdup(
                 "the default manifest describes one archive (cuDNN "
                 "8.5.0.96 for this platform); for another one pass its "
                 "manifest with --manifest NAME|FILE (shipped ones: "
                 "'cudnn-deploy manifest list'), or write one from an archive "
                 "you trust: 'cudnn-deploy manifest create ARCHIVE -o "
                 "FILE'");
    }
    if (code == CDD_E_NOTFOUND && cdd_cli_target_given(&cl->target) &&
        (strstr(msg, "target folder does not exist") ||
         strstr(msg, "not found: "))) {
        if (cl->target.spec.cuda && !cl->target.spec.cuda_root)
            /* The version as given on the command line: whole. */
            return cdd_aprintf(CDD_TEXT_MAX, "hint",
                               "if CUDA %s is installed elsewhere, name its "
                               "folder with --cuda-root DIR; 'cudnn-deploy "
                               "doctor' lists the toolkits it finds",
                               cl->target.spec.cuda);
        else
            return cdd_strdup(
                     "check the folder's name; a CUDA toolkit is named with "
                     "--cuda-root DIR, a conda environment or other prefix "
                     "with --prefix DIR; 'cudnn-deploy doctor' lists the "
                     "toolkits it finds");
    }
    if (code == CDD_E_PERM && !contains_nocase(msg, "elevated") &&
        (contains_nocase(path, "program files") ||
         contains_nocase(msg, "program files"))) {
        return cdd_strdup(
                 "folders under Program Files need Administrator rights: "
                 "run cudnn-deploy from an elevated prompt (right-click "
                 "PowerShell or Command Prompt, 'Run as administrator')");
    }
    return NULL;
}
