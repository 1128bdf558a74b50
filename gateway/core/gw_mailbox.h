/* gw_mailbox: hands items from any thread to the loop thread: a
 * mutex-protected FIFO and an eventfd the loop polls, so the loop sleeps
 * until there is work. Any thread posts; only the loop thread takes. What
 * an item is, the poster and the loop agree on (gw_loop_item_t). */
#ifndef GW_MAILBOX_H
#define GW_MAILBOX_H

#include <stdbool.h>

typedef struct gw_mailbox gw_mailbox_t;

/* A link in the FIFO, embedded in whatever is posted. */
typedef struct gw_mailbox_item gw_mailbox_item_t;
struct gw_mailbox_item {
    gw_mailbox_item_t *next;
};

/* NULL with errno set on failure. */
gw_mailbox_t *gw_mailbox_new (void);
void gw_mailbox_destroy (gw_mailbox_t **self_p);

/* The eventfd to poll for readability. */
int gw_mailbox_fd (const gw_mailbox_t *self);

/* True when items wait (say, posted by the loop thread itself during this
 * turn: the loop runs them without another poll). */
bool gw_mailbox_pending (gw_mailbox_t *self);

/* Makes the calling thread the mailbox's owner (the loop thread): an item
 * it posts itself does not write the eventfd (the owner checks
 * gw_mailbox_pending before it sleeps and takes such items with
 * gw_mailbox_take_posted), which spares a write, a wake-up and a read for
 * each request of the HTTP edge the loop thread runs. */
void gw_mailbox_set_owner (gw_mailbox_t *self);

/* Appends item and, posted by a thread other than the owner into an empty
 * FIFO, wakes the loop. Any thread. */
void gw_mailbox_post (gw_mailbox_t *self, gw_mailbox_item_t *item);

/* Wakes the loop without an item (for example to stop it). Any thread;
 * async-signal-safe. */
void gw_mailbox_wake (gw_mailbox_t *self);

/* Takes every waiting item, oldest first, as a list linked by ->next;
 * NULL when empty. Call it when the eventfd polled readable: it reads it.
 * Loop thread. */
gw_mailbox_item_t *gw_mailbox_take_all (gw_mailbox_t *self);

/* The same without reading the eventfd: for items found by
 * gw_mailbox_pending. A wake-up written meanwhile by another thread stays
 * on the eventfd, and the next poll returns at once for it (its items
 * already taken, that turn finds none). Loop thread. */
gw_mailbox_item_t *gw_mailbox_take_posted (gw_mailbox_t *self);

#endif
