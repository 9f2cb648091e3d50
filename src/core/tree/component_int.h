/* Optional components for install.c (component.c). */
#ifndef CDD_COMPONENT_INT_H
#define CDD_COMPONENT_INT_H

#include "cdd/deploy.h"
#include "cdd/fsops.h"

/* Hash the component's archive through f, the handle install holds open
 * on it (cdd_archive_hold), and compare it with its pin (size and sha256):
 * CDD_E_CHECKSUM when it differs. sha256 gets the digest. */
int cdd_component_pin_check(const struct cdd_install_with *w,
                            struct cdd_rfile *f,
                            uint8_t sha256[CDD_SHA256_LEN]);

/* Check the pin, then stream the component's archive, both through f
 * (at_open: what f was when held; a change since fails it): its entry gets a plan
 * item (role runtime, the layout's runtime folder) appended to plan and, when
 * stage (a tree path) is not NULL, is written to <stage>/<dest> and its
 * machine type checked. CDD_E_ARCHIVE for a wrong machine or a destination
 * the archive's own files take. */
int cdd_component_stage(struct cdd_tree *tree, const char *stage,
                        enum cdd_layout_id layout,
                        const struct cdd_install_with *w,
                        struct cdd_rfile *f, const struct cdd_finfo *at_open,
                        struct cdd_plan *plan);

/* The library f is for the platform's machine (PE: x64; ELF: x86-64).
 * CDD_E_ARCHIVE naming `shown` otherwise, the message explaining error 193
 * for a 32-bit DLL. */
int cdd_component_machine_check(struct cdd_rfile *f, enum cdd_platform p,
                                const char *shown);

#endif
