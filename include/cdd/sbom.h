/* SBOMs of an installed cuDNN (cudnn-deploy sbom, docs/containers.md): from
 * the tree's receipt, a CycloneDX 1.6 or SPDX 2.3 JSON document naming the
 * archive as the component (version, platform, CUDA variant, pinned sha256,
 * download URL, NVIDIA's licence), every installed file with its sha256
 * and path relative to the tree, the optional components, and cudnn-deploy
 * as the producer. Deterministic: the same receipt gives the same bytes
 * (times from the receipt; the serial number and document namespace derived
 * from the receipt's content hash). */
#ifndef CDD_SBOM_H
#define CDD_SBOM_H

#include "cdd/receipt.h"

enum cdd_sbom_format { CDD_SBOM_CYCLONEDX = 0, CDD_SBOM_SPDX };

/* The document (malloc'd, a final newline) in *out; 0 or CDD_E_NOMEM. The
 * tool's version is the receipt's (the producer of what the tree holds).
 * v: the tree's verify record when it describes r (cdd_verified_current),
 * stated with its outcome, level and layers; NULL says nothing of
 * verification. */
int cdd_sbom_write(const struct cdd_receipt *r, const struct cdd_verified *v,
                   enum cdd_sbom_format format, char **out);

/* NVIDIA's licence for cuDNN, as the documents name it. */
#define CDD_SBOM_LICENSE_NAME "NVIDIA cuDNN Software License Agreement"
#define CDD_SBOM_LICENSE_URL \
    "https://docs.nvidia.com/deeplearning/cudnn/latest/reference/eula.html"

#endif
