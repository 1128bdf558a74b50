/* gw_changes: whether anything a session folder's artifact walk looks at
 * may have changed since that walk, told by inotify, so that an execution
 * that writes no file costs no walk of the folder before or after it.
 *
 * A tracker watches each folder the walk reads (gw_artifacts calls
 * gw_changes_watch_fd before reading one), so a file created, written,
 * closed after writing, renamed, deleted or touched in any of them, and
 * any folder created, moved or removed there, is an event; a watch tells
 * once and is set again by the next walk. Folders the walk skips (hidden
 * ones; input/ and node_modules/ at the top) are not watched. What inotify
 * does not see is a write through a shared memory mapping (until the file
 * is closed) and a write through a hard link in a folder that is not
 * watched; such a change shows at the next walk that something else
 * triggers.
 *
 * Each tracker is one inotify instance with its own queue, so one
 * session's events cost no other session anything. Bounds: at most
 * GW_CHANGES_MAX_TRACKERS instances in the process (the kernel allows 128
 * per user, shared with every other program of root) and
 * GW_CHANGES_MAX_WATCHES folders per tracker; a queue holds at most two
 * events a watch. A tracker past its bound, or one that could not be made, is
 * off: it says "changed" every time, so its session walks every time, as
 * it would without one. One made while the process's budget was full
 * waits instead: it takes the first place another tracker gives back.
 *
 * The loop thread (one tracker belongs to one thread). */
#ifndef GW_CHANGES_H
#define GW_CHANGES_H

#include <stdbool.h>

#define GW_CHANGES_MAX_TRACKERS 16
#define GW_CHANGES_MAX_WATCHES  256

typedef struct gw_changes gw_changes_t;

/* A new tracker watching nothing yet (off when no inotify instance could
 * be had). NULL on OOM. */
gw_changes_t *gw_changes_new (void);
void gw_changes_destroy (gw_changes_t **self_p);

/* Reads every event since the last call and forgets them. True when any
 * came (or the tracker is off): the folder must be walked, and that walk
 * sets again the watches that told. Call it just before a walk, so that
 * what happens during the walk is told by the next call. */
bool gw_changes_take (gw_changes_t *self);

/* Watches the folder open at fd, before the walk reads its entries. A
 * failure, or more than GW_CHANGES_MAX_WATCHES watches at once, turns the
 * tracker off for good. */
void gw_changes_watch_fd (gw_changes_t *self, int fd);

/* False once the tracker is off. */
bool gw_changes_on (const gw_changes_t *self);

/* Trackers of the process that hold an inotify instance now. */
int gw_changes_trackers (void);

#endif
