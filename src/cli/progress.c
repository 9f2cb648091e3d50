/* Progress: one line redrawn on a terminal, with bytes done, rate and time
 * left, for the download, the check and the commit; nothing when stderr is
 * not a terminal (a log gets the result lines only) or with --quiet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/fsops.h"
#include "cdd/sys.h"
#include "cli.h"

struct cdd_progress_ui {
    int quiet, tty;
    double last;
    char phase[16]; /* fixed: a phase word of the core */
    int drawn;
    double phase_start;
    uint64_t phase_done0;
    int width;                /* of the line drawn last */
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
        p->phase_start = now;
        p->phase_done0 = done;
    }
    if (done < p->phase_done0) { /* a download that started again */
        p->phase_start = now;
        p->phase_done0 = done;
    }
    double elapsed = now - p->phase_start;
    /* A rate from the first 0.2 s would be noise. */
    double rate = elapsed > 0.2 ? (double)(done - p->phase_done0) / elapsed : 0;
    char a[32], b[32], c[32], d[32]; /* fixed: numbers */

    if (!p->tty)
        return; /* logs get the result lines, not progress */
    if (!new_phase && now - p->last < 0.1 && done != total)
        return;
    p->last = now;
    char line[320]; /* fixed: a phase word and numbers */
    if (strcmp(phase, "commit") == 0) {
        /* Counted in files, not bytes. */
        snprintf(line, sizeof line, "%-8s %llu files", phase,
                 (unsigned long long)total);
    } else if (total == 0) {
        if (done)
            snprintf(line, sizeof line, "%-8s %s, %s/s", phase,
                     mib((double)done, a, sizeof a), mib(rate, d, sizeof d));
        else
            snprintf(line, sizeof line, "%-8s ...", phase);
    } else {
        const int width = 12;
        int fill = (int)((double)done / (double)total * width);
        char bar[32]; /* fixed: a 12-cell bar */
        if (fill > width)
            fill = width;
        memset(bar, '#', (size_t)fill);
        memset(bar + fill, '.', (size_t)(width - fill));
        bar[width] = '\0';
        /* Bytes done, rate and time left: for the download, the check (the
         * archive streamed into the staging folder) and the commit alike. */
        snprintf(line, sizeof line, "%-8s [%s] %3.0f%% %s of %s, %s/s, %s left",
                 phase, bar, 100.0 * (double)done / (double)total,
                 mib((double)done, a, sizeof a), mib((double)total, b, sizeof b),
                 mib(rate, d, sizeof d),
                 eta(rate > 0 ? (double)(total - done) / rate : -1, c,
                     sizeof c));
    }
    /* One line, redrawn in place; the tail of a longer earlier one wiped. */
    int len = (int)strlen(line);
    fprintf(stderr, "\r%s%*s", line, p->width > len ? p->width - len : 0, "");
    p->width = len;
    p->drawn = 1;
    fflush(stderr);
}

void cdd_progress_clear(struct cdd_progress_ui *p)
{
    if (p && p->drawn) {
        fprintf(stderr, "\r%*s\r", p->width, "");
        p->drawn = 0;
        p->width = 0;
    }
}

void cdd_progress_free(struct cdd_progress_ui *p)
{
    cdd_progress_clear(p);
    free(p);
}
