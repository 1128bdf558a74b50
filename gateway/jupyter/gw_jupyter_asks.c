/* gw_jupyter_asks: a websocket client's recent requests and the restart
 * it may be owed (see gw_jupyter_asks.h).
 *
 * Threads: none of its own (the loop thread's). */
#include "gw_jupyter_asks.h"

#include <stdio.h>
#include <string.h>

void
gw_asks_sent (gw_asks_t *self, jp_channel_t channel, const char *msg_id)
{
    if (channel == JP_CHANNEL_STDIN || !msg_id)
        return;
    snprintf (self->recent[self->recent_at], GW_ASKS_ID, "%s", msg_id);
    self->recent_at = (self->recent_at + 1) % GW_ASKS_RECENT;
    if (self->owes_restart && channel == JP_CHANNEL_SHELL && !self->first[0])
        snprintf (self->first, GW_ASKS_ID, "%s", msg_id);
}

bool
gw_asks_asked (gw_asks_t *self, const char *parent_id, bool forget)
{
    if (!parent_id || !parent_id[0])
        return false;
    for (int i = 0; i < GW_ASKS_RECENT; i++)
        if (strcmp (self->recent[i], parent_id) == 0) {
            if (forget)
                self->recent[i][0] = '\0';
            return true;
        }
    return false;
}

bool
gw_asks_restart_due (gw_asks_t *self, jp_channel_t channel, const jp_msg_t *msg)
{
    const char *parent = jp_msg_parent_id (msg);
    if (!self->owes_restart || !self->first[0] || !parent || strcmp (parent, self->first) != 0)
        return false;
    if (channel == JP_CHANNEL_SHELL)
        self->first_heard |= 1;
    else if (channel == JP_CHANNEL_IOPUB && jp_msg_is_idle (msg))
        self->first_heard |= 2;
    if (self->first_heard != 3)
        return false;
    self->owes_restart = false;
    return true;
}
