/* Progress: a redrawn bar on a terminal (downloads also show rate and ETA);
 * otherwise nothing, except a plain line every few seconds for a download
 * that takes a while, so a CI log shows that it is moving; nothing at all
 * with --quiet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/fsops.h"
#include "cdd/sys.h"
#include "cli.h"

/* Plain lines (not a terminal): the first after this many seconds of a
 * download, then one per interval. */
#define LINE_AFTER_S 3.0
#define LINE_EVERY_S 5.0

struct cdd_progress_ui {
    int quiet, tty;
    double last;
    char phase[16];
    int drawn;
    double phase_start, last_line;
    uint64_t phase_done0;
    int lines;
};

struct cdd_progress_ui *cdd_progress_new(int quiet)
{
    struct cdd_progress_ui *p = calloc(1, sizeof *p);
    if (p) {
        p->quiet = quiet;
        p->tty = cdd_isatty(2);
    }
    return p;
}

/* Bytes in MiB, or KiB below one MiB (test servers and slow links). */
static const char *mib(double n, char *buf, size_t len)
{
    if (n < 1024.0 * 1024.0)
        snprintf(buf, len, "%.1f KiB", n / 1024.0);
    else
        snprintf(buf, len, "%.1f MiB", n / (1024.0 * 1024.0));
    return buf;
}

static const char *eta(double s, char *buf, size_t len)
{
    if (s < 0 || s > 360000)
        snprintf(buf, len, "--:--");
    else if (s >= 3600)
        snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)s % 3600 / 60);
    else
        snprintf(buf, len, "%d:%02d", (int)s / 60, (int)s % 60);
    return buf;
}

void cdd_progress_cb(void *ud, const char *phase, uint64_t done, uint64_t total)
{
    struct cdd_progress_ui *p = ud;
    if (!p || p->quiet)
        return;
    double now = cdd_monotonic();
    int new_phase = strcmp(p->phase, phase) != 0;
    if (new_phase) {
        snprintf(p->phase, sizeof p->phase, "%s", phase);
        p->phase_start = p->last_line = now;
        p->phase_done0 = done;
        p->lines = 0;
    }
    if (done < p->phase_done0) { /* a download that started again */
        p->phase_start = now;
        p->phase_done0 = done;
    }
    int download = strcmp(phase, "download") == 0;
    double elapsed = now - p->phase_start;
    double rate = elapsed > 0.5 ? (double)(done - p->phase_done0) / elapsed : 0;
    char a[32], b[32], c[32], d[32];

    if (!p->tty) {
        /* Only downloads are slow enough to deserve lines in a log. */
        if (!download || elapsed < LINE_AFTER_S)
            return;
        int finished = total && done == total;
        if (finished ? p->lines == 0
                     : p->lines > 0 && now - p->last_line < LINE_EVERY_S)
            return;
        p->last_line = now;
        p->lines++;
        if (total)
            fprintf(stderr, "download: %s of %s (%.0f%%), %s/s, ETA %s\n",
                    mib((double)done, a, sizeof a),
                    mib((double)total, b, sizeof b),
                    100.0 * (double)done / (double)total,
                    mib(rate, d, sizeof d),
                    eta(rate > 0 ? (double)(total - done) / rate : -1, c,
                        sizeof c));
        else
            fprintf(stderr, "download: %s, %s/s\n",
                    mib((double)done, a, sizeof a), mib(rate, d, sizeof d));
        fflush(stderr);
        return;
    }
    if (!new_phase && now - p->last < 0.1 && done != total)
        return;
    p->last = now;
    if (total == 0) {
        if (download)
            fprintf(stderr, "\r%-8s %s, %s/s%30s\r", phase,
                    mib((double)done, a, sizeof a), mib(rate, d, sizeof d),
                    "");
        else
            fprintf(stderr, "\r%-8s ...%40s\r", phase, "");
    } else {
        int width = download ? 24 : 40;
        int fill = (int)((double)done / (double)total * width);
        char bar[41];
        if (fill > width)
            fill = width;
        memset(bar, '#', (size_t)fill);
        memset(bar + fill, '.', (size_t)(width - fill));
        bar[width] = '\0';
        if (download)
            fprintf(stderr, "\r%-8s [%s] %5.1f%% %10s %10s/s ETA %s ",
                    phase, bar, 100.0 * (double)done / (double)total,
                    mib((double)done, a, sizeof a), mib(rate, d, sizeof d),
                    eta(rate > 0 ? (double)(total - done) / rate : -1, c,
                        sizeof c));
        else
            fprintf(stderr, "\r%-8s [%s] %5.1f%% %8.1f MiB", phase, bar,
                    100.0 * (double)done / (double)total,
                    (double)done / (1024.0 * 1024.0));
    }
    p->drawn = 1;
    fflush(stderr);
}

void cdd_progress_clear(struct cdd_progress_ui *p)
{
    if (p && p->drawn) {
        fprintf(stderr, "\r%79s\r", "");
        p->drawn = 0;
    }
}

void cdd_progress_free(struct cdd_progress_ui *p)
{
    cdd_progress_clear(p);
    free(p);
}
