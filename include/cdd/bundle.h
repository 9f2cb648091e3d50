/* Offline bundles (docs/fleet.md): a folder laid out like NVIDIA's download
 * server, so that CUDNN_DEPLOY_MIRROR pointing at any static HTTP server of
 * it (or file:///DIR) serves a fleet that cannot reach NVIDIA:
 *
 *   DIR/cudnn/redist/cudnn/<platform>/<archive>      the pinned archives
 *   DIR/cudnn/redist/redistrib_<version>.json        NVIDIA's index shape
 *   DIR/cudnn-deploy/components/<sha256>/<archive>   optional components
 *   DIR/cudnn-deploy/manifests/<name>.json           the manifests, pinned
 *
 * Every archive is obtained through the cache against its pin (the
 * manifest's, else NVIDIA's redistrib JSON), copied into DIR while hashed
 * again, and written under a temporary name then renamed: a bundle never
 * holds a byte its pin does not vouch for. The manifests written carry the
 * pins (archive sha256 and size) and the bundle's own location first among
 * their URLs, under NVIDIA's prefix, so the mirror variable resolves it. */
#ifndef CDD_BUNDLE_H
#define CDD_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/fetch.h"
#include "cdd/hash.h"
#include "cdd/manifest.h"

#define CDD_BUNDLE_MANIFESTS "cudnn-deploy/manifests"
#define CDD_BUNDLE_COMPONENTS "cudnn-deploy/components"

struct cdd_bundle_opts {
    const char *dir;                /* created when missing */
    const char *cache_dir;          /* NULL: the default cache */
    const char *const *archives;    /* local archives (--archive), matched
                                       by file name, still pin-checked */
    size_t n_archives;
    struct cdd_net_opts net;
    void (*progress)(void *ud, const char *phase, uint64_t done,
                     uint64_t total);
    void *progress_ud;
};

struct cdd_bundle_item {
    char *what;                     /* manifest name, or "<name> component
                                       <component>" */
    char *path;                     /* inside DIR, '/'-separated */
    uint8_t sha256[CDD_SHA256_LEN];
    uint64_t size;
    int cache_hit;                  /* taken from the cache, no network */
};

struct cdd_bundle_result {
    struct cdd_bundle_item *items;  /* archives, then manifests, then
                                       redistrib files */
    size_t n;
};

/* Write the bundle of the manifests ms[0..n). The manifests are changed in
 * place (pins and URLs, as written). */
int cdd_bundle_write(const struct cdd_bundle_opts *o,
                     struct cdd_manifest *const *ms, size_t n,
                     struct cdd_bundle_result *res);
void cdd_bundle_result_clear(struct cdd_bundle_result *r);

#endif
