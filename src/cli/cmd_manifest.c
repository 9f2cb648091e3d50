/* cudnn-deploy manifest create|list|show */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/manifest.h"
#include "cdd/mcreate.h"
#include "cmds.h"
#include "report.h"

static int write_out(const char *path, const char *text)
{
    if (!path) {
        if (fputs(text, stdout) == EOF || fflush(stdout) != 0)
            return cdd_fail(CDD_E_IO, "<stdout>", 0, "cannot write");
        return 0;
    }
    return cdd_fs_write_atomic(path, text, strlen(text));
}

static int create(const struct cdd_cmdline *cl, struct cdd_report *rep)
{
    struct cdd_manifest *m = NULL;
    char *text = NULL;
    if (cl->n_positional < 2)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "manifest create needs the archive: cudnn-deploy "
                        "manifest create ARCHIVE [-o FILE]");
    if (cl->out.json && !cl->create.output)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "manifest create --json needs -o FILE (stdout holds "
                        "the report)");
    struct cdd_mcreate_opts o = {.archive_path = cl->positional[1],
                                 .version = cl->create.version,
                                 .cuda_major = (int)cl->create.cuda_major};
    int r = cdd_cli_platform(&cl->obtain, &o.platform_given, &o.platform);
    if (!r)
        r = cdd_manifest_create(&o, &m);
    if (!r)
        r = cdd_manifest_to_json(m, &text);
    if (!r)
        r = write_out(cl->create.output, text);
    if (!r) {
        cdd_report_changed(rep, cl->create.output != NULL);
        cdd_report_str(rep, "manifest", m->name);
        cdd_report_str(rep, "output", cl->create.output);
        cdd_say(rep, "Manifest for cuDNN %s (CUDA %d, %s): %zu files%s%s",
                m->version, m->cuda_major, cdd_platform_name(m->platform),
                m->n_files, cl->create.output ? ", written to " : "",
                cl->create.output ? cl->create.output : "");
    }
    free(text);
    cdd_manifest_free(m);
    return r;
}

static int list(struct cdd_report *rep, int json)
{
    const char **names = calloc(cdd_builtin_manifest_count + 1, sizeof *names);
    if (!names)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i < cdd_builtin_manifest_count; i++) {
        struct cdd_manifest *m = NULL;
        const struct cdd_builtin_manifest *b = &cdd_builtin_manifests[i];
        names[i] = b->name;
        if (json)
            continue;
        if (cdd_manifest_parse(b->text, b->len, b->name, &m) == 0)
            printf("%-45s cuDNN %-10s CUDA %-3d %s  %zu files\n", b->name,
                   m->version, m->cuda_major, cdd_platform_name(m->platform),
                   m->n_files);
        else
            printf("%s (does not load: %s)\n", b->name,
                   cdd_last_error()->msg);
        cdd_manifest_free(m);
    }
    cdd_report_strv(rep, "manifests", names, cdd_builtin_manifest_count);
    free(names);
    return 0;
}

static int show(const struct cdd_cmdline *cl, struct cdd_report *rep)
{
    struct cdd_manifest *m = NULL;
    char *text = NULL;
    int r = cdd_cli_manifest_find(cl->n_positional > 1 ? cl->positional[1] : NULL, &m);
    if (!r && cl->out.json) {
        struct cdd_jw *w = NULL;
        if (!(r = cdd_manifest_jw(m, &w)))
            cdd_report_doc(rep, "manifest", w);
    } else if (!r && !(r = cdd_manifest_to_json(m, &text))) {
        fputs(text, stdout);
    }
    free(text);
    cdd_manifest_free(m);
    return r;
}

int cdd_cmd_manifest(const struct cdd_cmdline *cl, struct cdd_report *rep,
                     struct cdd_cli_tree *tt)
{
    (void)tt; /* CDD_TREE_NONE */
    const char *sub = cl->n_positional ? cl->positional[0] : NULL;
    if (!sub)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "manifest needs a sub-command: create, list or show");
    if (strcmp(sub, "create") == 0)
        return create(cl, rep);
    if (cl->create.output || cl->create.version || cl->create.cuda_major)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "-o, --version and --cuda-major apply to 'manifest "
                        "create' only");
    if (strcmp(sub, "list") == 0) {
        if (cl->n_positional > 1)
            return cdd_fail(CDD_E_USAGE, NULL, 0,
                            "manifest list takes no argument");
        return list(rep, cl->out.json);
    }
    if (strcmp(sub, "show") == 0)
        return show(cl, rep);
    return cdd_fail(CDD_E_USAGE, NULL, 0,
                    "unknown manifest sub-command '%s' (create, list, show)",
                    sub);
}
