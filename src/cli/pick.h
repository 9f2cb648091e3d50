/* The release catalog on the command line (pick.c): this machine's GPUs and
 * driver, the catalog's choice for install --cudnn with its reason, and the
 * checks binding the manifest made from the obtained archive to the
 * catalog's entry. Shared by install and releases. */
#ifndef CDD_PICK_H
#define CDD_PICK_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/catalog.h"
#include "cdd/cudatree.h"
#include "cli.h"

struct cdd_report;
struct cdd_manifest;

#define CDD_MACHINE_MAX_GPUS 32

/* What to fit: --gpu-cc / --driver, else what the driver reports. */
struct cdd_fit_host {
    int cc[CDD_MACHINE_MAX_GPUS]; /* x10 */
    size_t n_cc;
    int gpus_given, gpus_probed;
    int has_driver, driver_probed;
    char driver[64]; /* fixed: a driver version (digits, dots; checked) */
    char note[200]; /* fixed: constant words */ /* what could not be checked, and why */
};

int cdd_cli_machine(const struct cdd_opts_obtain *ob, struct cdd_fit_host *mc);
void cdd_cli_machine_say(struct cdd_report *rep, const struct cdd_fit_host *mc);
/* This machine's platform in NVIDIA's words. */
const char *cdd_cli_host_platform(void);
/* "CUDA 12.4, linux-x86_64, sm_86, driver 550.54" (malloc'd). */
char *cdd_cli_query_text(const struct cdd_cat_query *q);

struct cdd_pick {
    const char *want;
    struct cdd_catalog *cat;
    struct cdd_cat_verdict *v;
    size_t n;
    const struct cdd_cat_release *rel; /* the choice */
    const struct cdd_cat_archive *a;
    struct cdd_manifest *pin;   /* for the obtain step: name, URL, pin */
    char *selection;            /* the choice and its reason (receipt) */
};

/* Choose for install: --cudnn (default latest), the tree t's CUDA version,
 * --platform (default this one), the GPUs and the driver; print the choice
 * and the newer releases that lost, with why. CDD_E_NOTFOUND when nothing
 * fits, CDD_E_NOTSUP for a platform this build cannot install. */
int cdd_cli_pick(const struct cdd_cmdline *cl, const struct cdd_target *t,
                 struct cdd_report *rep, struct cdd_pick *p);
/* The manifest made from the obtained archive (cdd_manifest_create), after
 * checking that its sha256 is one the catalog knows for the name (or,
 * with --redistrib, the one NVIDIA's JSON pinned; with --sha256, that one), and that its platform,
 * CUDA major and version are the entry's. *pin gets the archive's sha256. */
int cdd_cli_pick_manifest(const struct cdd_pick *p, const char *archive,
                          int redistrib_pinned, const uint8_t *redistrib_pin,
                          const uint8_t *option_pin, struct cdd_report *rep,
                          struct cdd_manifest **out, uint8_t *pin);
/* CDD_E_CHECKSUM: bytes that match no digest known for a's name. */
int cdd_cli_respin_error(const struct cdd_cat_release *rel,
                         const struct cdd_cat_archive *a, const char *what,
                         const uint8_t *got);
void cdd_pick_clear(struct cdd_pick *p);

/* verify and doctor's GPU fit (fit.h): --gpu-cc and --driver into g, the
 * rest (each GPU's name, the driver) from the driver. CDD_E_USAGE for a
 * bad value. */
struct cdd_fit_gpus;
int cdd_cli_fit_gpus(const struct cdd_opts_obtain *ob, struct cdd_fit_gpus *g);

#endif
