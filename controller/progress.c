/*  progress — live progress line. See progress.h. */
#include "controller/progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "overlay/util.h"

/*  The rate is measured over about this many seconds of history, kept as
 *  samples at least PROGRESS_LIVE_INTERVAL apart. */
#define RATE_WINDOW 10.0
#define RATE_MIN_SPAN 0.5
#define NSAMPLES 64

static const char *const mode_names[] = {
    [PROGRESS_AUTO] = "auto",
    [PROGRESS_LIVE] = "live",
    [PROGRESS_PLAIN] = "plain",
    [PROGRESS_QUIET] = "quiet",
};

typedef struct {
    double time;
    uint64_t done;
} sample_t;

struct progress {
    FILE *out;
    progress_mode_t mode;
    char *label;
    uint64_t total;
    double time_scale;
    int started;
    double last_draw;        /* when the line was last drawn */
    int shown;               /* a live line is on screen */
    double bound;            /* the live bound, platform tasks/s; 0: none */
    sample_t samples[NSAMPLES];  /* ring, oldest at head */
    int head, nsamples;
};

const char *
progress_mode_str (progress_mode_t mode)
{
    return (unsigned) mode <= PROGRESS_QUIET ? mode_names[mode] : "?";
}

progress_t *
progress_new (FILE *out, progress_mode_t mode, const char *label, uint64_t total,
              double time_scale)
{
    progress_t *self = xcalloc (1, sizeof *self);
    self->out = out;
    if (mode == PROGRESS_AUTO)
        mode = isatty (fileno (out)) ? PROGRESS_LIVE : PROGRESS_PLAIN;
    self->mode = mode;
    self->label = xstrdup (label);
    self->total = total;
    self->time_scale = time_scale > 0 ? time_scale : 1;
    return self;
}

void
progress_destroy (progress_t **self_p)
{
    progress_t *self = *self_p;
    if (!self)
        return;
    if (self->shown) {
        fputc ('\n', self->out);
        fflush (self->out);
    }
    free (self->label);
    free (self);
    *self_p = NULL;
}

progress_mode_t
progress_mode (const progress_t *self)
{
    return self->mode;
}

static void
add_sample (progress_t *self, uint64_t done, double now)
{
    if (self->nsamples == NSAMPLES) {
        self->head = (self->head + 1) % NSAMPLES;
        self->nsamples--;
    }
    int tail = (self->head + self->nsamples) % NSAMPLES;
    self->samples[tail] = (sample_t) {now, done};
    self->nsamples++;
}

void
progress_set_bound (progress_t *self, double tasks_per_s)
{
    self->bound = tasks_per_s > 0 && isfinite (tasks_per_s) ? tasks_per_s : 0;
}

void
progress_start (progress_t *self, double now)
{
    self->started = 1;
    self->head = self->nsamples = 0;
    add_sample (self, 0, now);
    self->last_draw = now;
}

/*  Tasks per wall second over the recent window, or -1 when too little
 *  time has passed to say. */
static double
wall_rate (const progress_t *self, uint64_t done, double now)
{
    const sample_t *from = NULL;
    for (int i = 0; i < self->nsamples; i++) {
        const sample_t *s = &self->samples[(self->head + i) % NSAMPLES];
        if (now - s->time <= RATE_WINDOW || i == self->nsamples - 1) {
            from = s;
            break;
        }
    }
    if (!from || now - from->time < RATE_MIN_SPAN || done < from->done)
        return -1;
    return (double) (done - from->done) / (now - from->time);
}

/*  "15s", "2m05s", "1h02m", "3d04h". */
static void
format_duration (double seconds, char *buf, size_t len)
{
    if (!(seconds >= 0) || seconds > 1e9) {
        snprintf (buf, len, "?");
        return;
    }
    unsigned long s = (unsigned long) (seconds + 0.5);
    if (s == 0 && seconds > 0)
        snprintf (buf, len, "<1s");
    else if (s < 60)
        snprintf (buf, len, "%lus", s);
    else if (s < 3600)
        snprintf (buf, len, "%lum%02lus", s / 60, s % 60);
    else if (s < 86400)
        snprintf (buf, len, "%luh%02lum", s / 3600, s % 3600 / 60);
    else
        snprintf (buf, len, "%lud%02luh", s / 86400, s % 86400 / 3600);
}

/*  Three significant figures or so, never an exponent. */
static void
format_rate (double rate, char *buf, size_t len)
{
    if (rate >= 100)
        snprintf (buf, len, "%.0f", rate);
    else if (rate >= 10)
        snprintf (buf, len, "%.1f", rate);
    else if (rate >= 0.1 || rate == 0)
        snprintf (buf, len, "%.2f", rate);
    else
        snprintf (buf, len, "%.2g", rate);
}

const char *
progress_format (const progress_t *self, uint64_t done, double now, char *buf,
                 size_t len)
{
    double percent = self->total ? 100.0 * (double) done / (double) self->total : 100;
    double rate = self->started ? wall_rate (self, done, now) : -1;
    char rate_text[32] = "-", eta_text[32] = "-", bound_text[64] = "";
    if (rate >= 0)
        format_rate (rate / self->time_scale, rate_text, sizeof rate_text);
    if (self->bound > 0) {
        char b[32];
        format_rate (self->bound, b, sizeof b);
        if (rate >= 0)
            snprintf (bound_text, sizeof bound_text, "  %.0f%% of bound %s",
                      100 * rate / self->time_scale / self->bound, b);
        else
            snprintf (bound_text, sizeof bound_text, "  - of bound %s", b);
    }
    if (done >= self->total)
        snprintf (eta_text, sizeof eta_text, "done");
    else if (rate > 0)
        format_duration ((double) (self->total - done) / rate, eta_text,
                         sizeof eta_text);
    snprintf (buf, len, "[%s] %llu/%llu tasks  %.1f%%  %s %stasks/s%s  ETA %s",
              self->label, (unsigned long long) done, (unsigned long long) self->total,
              percent, rate_text, self->time_scale != 1 ? "platform " : "", bound_text,
              eta_text);
    return buf;
}

static void
draw (progress_t *self, uint64_t done, double now)
{
    char line[256];
    progress_format (self, done, now, line, sizeof line);
    if (self->mode == PROGRESS_LIVE) {
        /*  \033[K erases what a longer previous line left behind. */
        fprintf (self->out, "\r%s\033[K", line);
        self->shown = 1;
    }
    else
        fprintf (self->out, "%s\n", line);
    fflush (self->out);
    self->last_draw = now;
}

void
progress_update (progress_t *self, uint64_t done, double now)
{
    if (!self->started)
        progress_start (self, now);
    int tail = (self->head + self->nsamples - 1) % NSAMPLES;
    if (now - self->samples[tail].time >= PROGRESS_LIVE_INTERVAL)
        add_sample (self, done, now);
    double interval = self->mode == PROGRESS_LIVE ? PROGRESS_LIVE_INTERVAL
                                                  : PROGRESS_PLAIN_INTERVAL;
    if (self->mode == PROGRESS_QUIET)
        return;
    if (now - self->last_draw >= interval || (self->mode == PROGRESS_LIVE && !self->shown))
        draw (self, done, now);
}

void
progress_clear (progress_t *self)
{
    if (!self || !self->shown)
        return;
    fputs ("\r\033[K", self->out);
    fflush (self->out);
    self->shown = 0;
}

void
progress_finish (progress_t *self, uint64_t done, double now)
{
    if (self->mode == PROGRESS_QUIET || !self->started)
        return;
    draw (self, done, now);
    if (self->shown) {
        fputc ('\n', self->out);
        fflush (self->out);
        self->shown = 0;
    }
}
