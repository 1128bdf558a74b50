/* gw_changes: a session folder's change tracker over inotify; see
 * gw_changes.h. Loop thread only. */
#include "gw_changes.h"
#include "jp_log.h"

#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

/* Every event that may change what the walk finds in a watched folder, and
 * the folder's own move or removal (IN_IGNORED, IN_UNMOUNT and
 * IN_Q_OVERFLOW come unasked). Not IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE:
 * reading changes nothing. IN_ONESHOT: a watch tells once and is gone
 * (the next walk sets it again), so the queue never holds more than two
 * events a watch (the event and IN_IGNORED): at most 512 events, about
 * 140 KiB with the longest names, where a folder written without pause
 * would otherwise fill inotify's 16384. */
#define S_MASK (IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM \
                | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_ONESHOT)

struct gw_changes {
    int fd;                     /* the inotify instance; -1 when off */
    int max_wd;                 /* the highest watch descriptor given so far */
    int live;                   /* watches set now (made, less those gone) */
    bool waiting;               /* off for want of a place in the budget only:
                                   takes one when another tracker gives it back */
};

/* Instances held by the process's trackers: a budget shared by every
 * session, whichever thread makes them. */
static atomic_int s_trackers;

/* Gives the tracker's instance back, and its place in the budget. */
static void
s_close (gw_changes_t *self)
{
    if (self->fd < 0)
        return;
    close (self->fd);
    self->fd = -1;
    atomic_fetch_sub (&s_trackers, 1);
}

static void
s_turn_off (gw_changes_t *self, const char *why)
{
    if (self->fd < 0)
        return;
    s_close (self);
    jp_log_info ("changes event=tracker-off why=%s", why);
}

/* Takes a place in the budget and an instance, or leaves the tracker off:
 * waiting when the budget was full, for good when inotify said no. */
static void
s_open (gw_changes_t *self)
{
    if (atomic_fetch_add (&s_trackers, 1) >= GW_CHANGES_MAX_TRACKERS) {
        atomic_fetch_sub (&s_trackers, 1);
        self->waiting = true;
        return;
    }
    self->waiting = false;
    self->fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
    if (self->fd < 0) {
        atomic_fetch_sub (&s_trackers, 1);
        jp_log_info ("changes event=no-tracker error=%s", strerror (errno));
    }
}

gw_changes_t *
gw_changes_new (void)
{
    gw_changes_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->fd = -1;
    s_open (self);
    return self;
}

void
gw_changes_destroy (gw_changes_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_changes_t *self = *self_p;
    s_close (self);
    free (self);
    *self_p = NULL;
}

bool
gw_changes_on (const gw_changes_t *self)
{
    return self && self->fd >= 0;
}

int
gw_changes_trackers (void)
{
    return atomic_load (&s_trackers);
}

bool
gw_changes_take (gw_changes_t *self)
{
    /* a place given back by a tracker that ended goes to the first waiting
       tracker that asks: it watches from the walk this answer starts */
    if (self && self->waiting && atomic_load (&s_trackers) < GW_CHANGES_MAX_TRACKERS) {
        s_open (self);
        return true;            /* nothing is watched yet */
    }
    if (!gw_changes_on (self))
        return true;
    bool changed = false;
    alignas (struct inotify_event) char buf[8192];
    for (;;) {
        ssize_t got = read (self->fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && errno == EAGAIN)
            return changed;
        if (got <= 0) {
            s_turn_off (self, got < 0 ? strerror (errno) : "end of events");
            return true;
        }
        /* any event is a change: even one naming a folder the walk skips
           has used up its watch, which only a walk sets again */
        changed = true;
        for (ssize_t at = 0; at < got;) {
            const struct inotify_event *ev = (const struct inotify_event *) (buf + at);
            at += (ssize_t) (sizeof *ev + ev->len);
            if (ev->mask & IN_IGNORED)
                self->live--;
        }
    }
}

void
gw_changes_watch_fd (gw_changes_t *self, int fd)
{
    if (!gw_changes_on (self))
        return;
    /* the folder open at fd, not whatever its path names by now */
    char path[64];
    snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
    int wd = inotify_add_watch (self->fd, path, S_MASK);
    if (wd < 0) {
        s_turn_off (self, strerror (errno));
        return;
    }
    if (wd > self->max_wd) {    /* a new watch (an old one gives its own wd back) */
        self->max_wd = wd;
        self->live++;
    }
    if (self->live > GW_CHANGES_MAX_WATCHES)
        s_turn_off (self, "too many folders");
}
