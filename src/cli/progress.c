/* Progress: a redrawn bar on a terminal, nothing otherwise (CI logs stay
 * clean), nothing with --quiet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/fsops.h"
#include "cli.h"

struct cdd_progress_ui {
    int enabled;
    double last;
    char phase[16];
    int drawn;
};

struct cdd_progress_ui *cdd_progress_new(int quiet)
{
    struct cdd_progress_ui *p = calloc(1, sizeof *p);
    if (p)
        p->enabled = !quiet && cdd_isatty(2);
    return p;
}

void cdd_progress_cb(void *ud, const char *phase, uint64_t done, uint64_t total)
{
    struct cdd_progress_ui *p = ud;
    if (!p || !p->enabled)
        return;
    double now = cdd_monotonic();
    int new_phase = strcmp(p->phase, phase) != 0;
    if (!new_phase && now - p->last < 0.1 && done != total)
        return;
    p->last = now;
    snprintf(p->phase, sizeof p->phase, "%s", phase);
    if (total == 0) {
        fprintf(stderr, "\r%-8s ...%40s\r", phase, "");
    } else {
        int width = 40, fill = (int)((double)done / (double)total * width);
        char bar[41];
        memset(bar, '#', (size_t)fill);
        memset(bar + fill, '.', (size_t)(width - fill));
        bar[width] = '\0';
        fprintf(stderr, "\r%-8s [%s] %5.1f%% %8.1f MiB", phase, bar,
                100.0 * (double)done / (double)total,
                (double)done / (1024.0 * 1024.0));
    }
    p->drawn = 1;
    fflush(stderr);
}

void cdd_progress_free(struct cdd_progress_ui *p)
{
    if (p && p->drawn)
        fprintf(stderr, "\r%78s\r", "");
    free(p);
}
