/* gw_jupyter_waiting: a websocket client's messages waiting for its kernel
 * (see the header). Pure code, no threads. */
#include "gw_jupyter_waiting.h"

#include <errno.h>
#include <stdlib.h>

bool
gw_waiting_full (const gw_waiting_t *self)
{
    return self->n >= GW_WAITING_MAX || self->bytes >= GW_WAITING_BYTES;
}

bool
gw_waiting_push (gw_waiting_t *self, jp_msg_t *msg, jp_channel_t channel, size_t bytes)
{
    if (gw_waiting_full (self))
        return false;
    if (self->n == self->cap) {
        int cap = self->cap ? self->cap * 2 : 16;
        gw_waiting_msg_t *grown = realloc (self->items, (size_t) cap * sizeof *grown);
        if (!grown)
            return false;
        self->items = grown;
        self->cap = cap;
    }
    self->items[self->n++] = (gw_waiting_msg_t) {msg, channel, bytes};
    self->bytes += bytes;
    return true;
}

bool
gw_waiting_has (const gw_waiting_t *self, jp_channel_t channel)
{
    for (int i = 0; i < self->n; i++)
        if (self->items[i].channel == channel)
            return true;
    return false;
}

void
gw_waiting_flush (gw_waiting_t *self, gw_waiting_send_fn *send, void *arg)
{
    unsigned blocked = 0;   /* a bit per channel */
    int kept = 0;
    for (int i = 0; i < self->n; i++) {
        gw_waiting_msg_t *m = &self->items[i];
        if (!(blocked & (1u << m->channel)) && send (arg, m->channel, m->msg) != -EAGAIN) {
            self->bytes -= m->bytes;
            jp_msg_destroy (&m->msg);
            continue;
        }
        blocked |= 1u << m->channel;
        self->items[kept++] = *m;
    }
    self->n = kept;
}

void
gw_waiting_clear (gw_waiting_t *self)
{
    for (int i = 0; i < self->n; i++)
        jp_msg_destroy (&self->items[i].msg);
    free (self->items);
    *self = (gw_waiting_t) {0};
}
