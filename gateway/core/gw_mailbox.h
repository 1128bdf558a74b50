/* gw_mailbox: hands requests from any thread to the loop thread: a
 * mutex-protected FIFO and an eventfd the loop polls, so the loop sleeps
 * until there is work. Any thread posts; only the loop thread takes. */
#ifndef GW_MAILBOX_H
#define GW_MAILBOX_H

#include "gw_request.h"

typedef struct gw_mailbox gw_mailbox_t;

/* NULL with errno set on failure. */
gw_mailbox_t *gw_mailbox_new (void);
void gw_mailbox_destroy (gw_mailbox_t **self_p);

/* The eventfd to poll for readability. */
int gw_mailbox_fd (const gw_mailbox_t *self);

/* Appends req and wakes the loop. Any thread. */
void gw_mailbox_post (gw_mailbox_t *self, gw_request_t *req);

/* Wakes the loop without a request (for example to stop it). Any thread;
 * async-signal-safe. */
void gw_mailbox_wake (gw_mailbox_t *self);

/* Takes every waiting request, oldest first, as a list linked by ->next;
 * NULL when empty. Loop thread. */
gw_request_t *gw_mailbox_take_all (gw_mailbox_t *self);

#endif
