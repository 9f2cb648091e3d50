/* The command table and the dispatcher: find the command, parse its options,
 * open the tree it declares (and lock it where it says so), run it, close
 * the tree, report once, exit with the documented code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/archive.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/manifest.h"
#include "cdd/sys.h"
#include "cdd/tree.h"
#include "cdd/verify.h"
#include "cli.h"
#include "cmds.h"
#include "report.h"
#include "shell.h"

static const char *const manifest_subcommands[] = {"create", "list", "show",
                                                   NULL};

const struct cdd_command cdd_commands[] = {
    {"install", CMD_INSTALL,
     "(--cuda vX.Y | --cuda-root DIR | --prefix DIR) [--archive FILE] "
     "[options]",
     "obtain, check, unpack, copy and record cuDNN in a tree",
     "Checks the archive against the manifest (every entry, size and sha256),\n"
     "stages it inside the tree, and moves it into place in one transaction:\n"
     "the tree ends exactly as before or exactly as after. Files replaced are\n"
     "kept so that 'uninstall' can bring them back. Without --archive, the\n"
     "archive is downloaded into the cache first (see 'fetch --help').",
     0, NULL, CDD_TREE_WRITE, CDD_LOCK_IN_ENGINE, cdd_cmd_install_prepare,
     cdd_cmd_install_prep_free, cdd_cmd_install},
    {"status", CMD_STATUS, "(--cuda vX.Y | --cuda-root DIR | --prefix DIR) [--check]",
     "show what is installed in a tree and whether it still matches",
     "Reads the tree's receipt; exit 1 when a file is missing or changed.",
     0, NULL, CDD_TREE_READ, CDD_LOCK_NEVER, NULL, NULL, cdd_cmd_status},
    {"uninstall", CMD_UNINSTALL,
     "(--cuda vX.Y | --cuda-root DIR | --prefix DIR) [--force]",
     "remove exactly what was installed, restore what it replaced",
     "Refuses to remove a file changed since install unless --force.",
     0, NULL, CDD_TREE_WRITE, CDD_LOCK_AT_OPEN, NULL, NULL, cdd_cmd_uninstall},
    {"recover", CMD_RECOVER, "(--cuda vX.Y | --cuda-root DIR | --prefix DIR)",
     "finish or undo an interrupted install or uninstall",
     "install and uninstall run the same recovery first.", 0, NULL,
     CDD_TREE_WRITE, CDD_LOCK_RECOVER, NULL, NULL, cdd_cmd_recover},
    {"verify", CMD_VERIFY,
     "(--cuda vX.Y | --cuda-root DIR | --prefix DIR) [--level "
     "files|load|gpu|bench] [--manifest NAME|FILE]",
     "prove cuDNN is intact, loads, and computes; explain what is wrong",
     "files: every installed file present and unchanged; stray cuDNN files.\n"
     "load:  which copy the loader picks, every dependency resolved (without\n"
     "       loading), each library loaded by absolute path, versions checked.\n"
     "gpu:   driver vs CUDA version, one convolution vs a CPU reference.\n"
     "bench: ResNet-50's first layer on the GPU and the CPU.\n"
     "Exit 0 when no check failed, 1 otherwise. No driver: gpu is skipped.",
     0, NULL, CDD_TREE_READ, CDD_LOCK_NEVER, cdd_cmd_verify_prepare,
     cdd_cmd_verify_prep_free, cdd_cmd_verify},
    {"doctor", CMD_DOCTOR, "[--cuda vX.Y | --cuda-root DIR | --prefix DIR]",
     "diagnose this host's CUDA and cuDNN: toolkits, PATH, every cuDNN copy",
     "Every CUDA toolkit (CUDA_PATH*, CUDA_HOME, default folders, PATH) with\n"
     "its version; the PATH (and LD_LIBRARY_PATH) entries that hold CUDA or\n"
     "cuDNN, in order; every copy of cuDNN the loader could pick, in its\n"
     "order, with versions read from the files, and which one wins; conda and\n"
     "Python package copies that shadow it; CUDNN_PATH; the driver; on\n"
     "Windows the Visual C++ runtime and zlibwapi.dll. With a target: also\n"
     "whether its library folder is searched and whether its cuDNN wins.\n"
     "Each finding says what to do. Exit 0 when nothing failed (warnings\n"
     "do not), 1 otherwise.",
     0, NULL, CDD_TREE_LOOK, CDD_LOCK_NEVER, NULL, NULL, cdd_cmd_doctor},
    {"manifest", CMD_MANIFEST,
     "create ARCHIVE [-o FILE] [--version V] [--cuda-major N] | list | show "
     "[NAME|FILE]",
     "create, list and show manifests",
     "create: write a manifest (every entry's role, size, sha256) from an\n"
     "        archive you trust; unsafe archives are refused.\n"
     "list:   the manifests shipped inside this executable.\n"
     "show:   print one (default: this platform's).",
     2, manifest_subcommands, CDD_TREE_NONE, CDD_LOCK_NEVER, NULL, NULL,
     cdd_cmd_manifest},
    {"fetch", CMD_FETCH,
     "[--manifest NAME|FILE] [--url URL]... [--sha256 HEX] "
     "[--redistrib FILE|URL] [--cache-dir DIR]",
     "download and check a manifest's archive into the cache",
     "Prints the cached file's path (--json: the 'path' member). The\n"
     "archive must be pinned: the manifest's sha256, --sha256, or NVIDIA's\n"
     "redistrib JSON; CUDNN_DEPLOY_MIRROR replaces NVIDIA's URL prefix.\n"
     "A cached file is re-hashed before use; an interrupted download resumes.",
     0, NULL, CDD_TREE_NONE, CDD_LOCK_NEVER, NULL, NULL, cdd_cmd_fetch},
    /* fleet (docs/fleet.md) */
    {"bundle", CMD_BUNDLE,
     "--manifest NAME|FILE... -o DIR [--archive FILE]... [--cache-dir DIR]",
     "write an offline mirror of NVIDIA's server for a fleet",
     "Obtains each manifest's archive (and its optional components') through\n"
     "the cache against its pin, and writes them into DIR in the layout of\n"
     "NVIDIA's server (cudnn/redist/cudnn/<platform>/...), with NVIDIA-style\n"
     "redistrib_<version>.json indexes and the manifests, pinned, in\n"
     "DIR/cudnn-deploy/manifests/. Serve DIR with any static HTTP server and\n"
     "set CUDNN_DEPLOY_MIRROR=http://HOST/ (or file:///DIR) on the fleet.\n"
     "Proxies: https_proxy, http_proxy and no_proxy are honoured.",
     0, NULL, CDD_TREE_NONE, CDD_LOCK_NEVER, NULL, NULL, cdd_cmd_bundle},
    {"env", CMD_ENV,
     "(--cuda vX.Y | --cuda-root DIR | --prefix DIR) [--shell SHELL] "
     "[--github] [--write-activation]",
     "print the settings that make the target's cuDNN the one programs load",
     "Its library folder first on PATH (Windows) or LD_LIBRARY_PATH (Linux),\n"
     "and for a CUDA tree CUDA_PATH and CUDA_HOME, quoted for the shell:\n"
     "  eval \"$(cudnn-deploy env --cuda-root /usr/local/cuda-11.8)\"\n"
     "  cudnn-deploy env --cuda v11.6 --shell powershell | Invoke-Expression\n"
     "--github appends them to $GITHUB_ENV and $GITHUB_PATH; --json gives\n"
     "them as data; --write-activation writes a conda environment's\n"
     "activation scripts, recorded in its receipt.",
     0, NULL, CDD_TREE_WRITE, CDD_LOCK_IN_ENGINE, cdd_cmd_env_prepare, NULL,
     cdd_cmd_env},
    /* the release catalog (docs/releases.md) */
    {"releases", CMD_RELEASES,
     "[VERSION] [--cuda X.Y | --cuda-root DIR] [--platform P] [--gpu-cc X.Y]... "
     "[--driver VER]",
     "list every cuDNN release in the catalog and which ones fit this machine",
     "Every release NVIDIA has published a redistrib JSON for, with each\n"
     "archive's platform, CUDA variant, size and sha256. Each is checked\n"
     "against the CUDA version (--cuda, or a tree's), the platform (default:\n"
     "this one's; --platform all), every GPU's compute capability and the\n"
     "driver (default: what the driver reports; none: not checked), and\n"
     "each that does not fit says why. The last line names the newest that\n"
     "fits: what 'install --cudnn' would pick.",
     1, NULL, CDD_TREE_NONE, CDD_LOCK_NEVER, NULL, NULL, cdd_cmd_releases},
    /* images (docs/containers.md) */
    {"sbom", CMD_SBOM,
     "(--cuda vX.Y | --cuda-root DIR | --prefix DIR) [--format "
     "cyclonedx|spdx] [-o FILE]",
     "write an SBOM of the cuDNN installed in a tree (CycloneDX or SPDX)",
     "From the tree's receipt: the archive as the component (version,\n"
     "platform, CUDA variant, pinned sha256, download URL, NVIDIA's licence),\n"
     "every installed file with its sha256 and path in the tree, optional\n"
     "components, and cudnn-deploy as the producer. CycloneDX 1.6 or SPDX\n"
     "2.3 JSON; the same tree always gives the same bytes. Exit 3 when the\n"
     "tree has no receipt.",
     0, NULL, CDD_TREE_READ, CDD_LOCK_NEVER, cdd_cmd_sbom_prepare, NULL,
     cdd_cmd_sbom},
};

const size_t cdd_command_count = sizeof cdd_commands / sizeof cdd_commands[0];

const struct cdd_command *cdd_command_find(const char *name)
{
    for (size_t i = 0; i < cdd_command_count; i++)
        if (strcmp(name, cdd_commands[i].name) == 0)
            return &cdd_commands[i];
    return NULL;
}

static int usage_exit(const char *command, const struct cdd_cmdline *cl)
{
    struct cdd_report *rep = cdd_report_new(command, cl->out.json, 0);
    if (!rep) {
        fprintf(stderr, "cudnn-deploy: error: out of memory\n");
        return 4;
    }
    cdd_report_style(rep, 0, cdd_cli_color(&cl->out), CDD_SHELL_SH);
    cdd_report_error(rep, CDD_E_USAGE);
    return cdd_report_finish(rep);
}

int cdd_cli_color(const struct cdd_opts_output *o)
{
    if (o->json || o->color == CDD_COLOR_NEVER)
        return 0;
    if (o->color == CDD_COLOR_ALWAYS)
        return 1;
    /* auto: a terminal, and neither NO_COLOR (https://no-color.org: set and
     * not empty) nor TERM=dumb. */
    const char *term = cdd_getenv("TERM");
    return cdd_isatty(2) && !cdd_getenv("NO_COLOR") &&
           !(term && strcmp(term, "dumb") == 0);
}

int cdd_cli_shell(const struct cdd_opts_output *o)
{
    if (o->shell_given)
        return o->shell;
    if (o->shell_old_given) /* the deprecated spelling, --fix-shell wins */
        return o->shell_old;
    return (int)cdd_shell_detect(
        cdd_platform_is_windows(cdd_platform_host()),
        cdd_getenv("SHELL"));
}

/* A row's tree, as it declares (cli.h): the target resolved and named in
 * the report, the tree opened once, and for CDD_LOCK_AT_OPEN and
 * CDD_LOCK_RECOVER the lock taken with the recovery it brings. */
static int open_tree(const struct cdd_command *cmd,
                     const struct cdd_cmdline *cl, struct cdd_report *rep,
                     struct cdd_cli_tree *tt)
{
    if (cmd->tree == CDD_TREE_LOOK) /* optional, never refused on state */
        return cdd_cli_target_given(&cl->target)
                   ? cdd_cli_target_look(&cl->target, tt, rep)
                   : 0;
    int r = cdd_cli_target(&cl->target, &tt->target, rep, &tt->tree);
    if (r || cmd->tree != CDD_TREE_WRITE || cl->change.dry_run ||
        (cmd->lock != CDD_LOCK_AT_OPEN && cmd->lock != CDD_LOCK_RECOVER))
        return r;
    /* A tree we never touched has no state folder: none is created, and
     * nothing is locked (the command finds nothing of ours there). */
    r = cdd_txn_lock(tt->tree, cl->target.lock_timeout, 0, &tt->locked,
                     &tt->recovery);
    /* Said also when the recovery failed: what it found is part of why. */
    if (cmd->lock == CDD_LOCK_AT_OPEN)
        cdd_cli_report_recovery(rep, &tt->recovery);
    return r;
}

/* prepare, the tree, run, and every resource released whatever happened
 * (the tree last: closing it releases the lock). */
static int run_command(const struct cdd_command *cmd,
                       const struct cdd_cmdline *cl, struct cdd_report *rep)
{
    struct cdd_cli_tree tt = {0};
    int r = 0;
    if (cmd->tree == CDD_TREE_NONE)
        return cmd->run(cl, rep, NULL);
    if (cmd->prepare)
        r = cmd->prepare(cl, rep, &tt.prep);
    if (!r)
        r = open_tree(cmd, cl, rep, &tt);
    if (!r)
        r = cmd->run(cl, rep, &tt);
    if (cmd->prep_free)
        cmd->prep_free(tt.prep);
    cdd_recovery_clear(&tt.recovery);
    free(tt.state_why);
    cdd_tree_close(tt.tree);
    cdd_target_clear(&tt.target);
    return r;
}

int cdd_cli_main(int argc, char **argv)
{
    struct cdd_cmdline cl;
    const struct cdd_command *cmd = NULL;
    int help = 0;
    /* Windows: this run is a step of verify started afresh (isolate.h). */
    int child = cdd_verify_child_main(argc, argv);
    if (child >= 0)
        return child;
    cdd_cmdline_init(&cl);
    cdd_fs_fault_from_env();
    cdd_cancel_on_signals();
    /* Before any thread: archive names are UTF-8 whatever the locale. */
    cdd_archive_init();

    /* Options anywhere on the line: the tool's and the command's. */
    if (cdd_cmdline_parse_all(argc, argv, &cl, &cmd, &help))
        return usage_exit(cmd ? cmd->name : "cudnn-deploy", &cl);
    if (cl.out.version && !cmd) {
        printf("cudnn-deploy %s\n", CDD_VERSION_STRING);
        return 0;
    }
    if (help || cl.out.help) {
        cdd_help_print(cmd);
        return 0;
    }
    if (!cmd) {
        cdd_fail(CDD_E_USAGE, NULL, 0, "no command given");
        return usage_exit("cudnn-deploy", &cl);
    }
    /* On stderr also with --json (stdout keeps its one object). */
    if (cl.deprecated && !cl.out.quiet)
        fprintf(stderr, "cudnn-deploy: note: %s\n", cl.deprecated);
    struct cdd_report *rep = cdd_report_new(cmd->name, cl.out.json,
                                            cl.out.quiet);
    if (!rep) {
        fprintf(stderr, "cudnn-deploy: error: out of memory\n");
        return 4;
    }
    cdd_report_style(rep, cl.out.verbose, cdd_cli_color(&cl.out),
                     cdd_cli_shell(&cl.out));
    int r = run_command(cmd, &cl, rep);
    if (r) {
        /* The hint needs the error as the command left it, and must not
         * replace it (out of memory while making the hint). */
        struct cdd_errsave saved;
        cdd_error_save(&saved);
        char *h = cdd_cli_hint(&cl, cmd, r);
        cdd_error_restore(&saved);
        cdd_error_save_free(&saved);
        cdd_report_error(rep, r);
        if (h)
            cdd_report_hint(rep, h);
        free(h);
    }
    return cdd_report_finish(rep);
}
