/* gw_jupyter_asks: what one websocket client asked its kernel, as far as
 * routing its answers needs: the msg_ids of its latest requests (a kernel
 * that does not echo a request's whole header is answered by parent
 * msg_id), and, for a client whose connect woke its paused session, when
 * it is owed a "restarting" status: once its first shell request is done,
 * both its reply and its idle status heard (JupyterLab cancels what it
 * still waits for when it hears "restarting", then reconnects).
 *
 * Pure code, no threads (the loop thread uses it). */
#ifndef GW_JUPYTER_ASKS_H
#define GW_JUPYTER_ASKS_H

#include <stdbool.h>

#include "jp_channels.h"
#include "jp_message.h"

#define GW_ASKS_RECENT 256      /* request ids remembered; kernels answer in turn */
#define GW_ASKS_ID 64           /* a msg_id's room, its end included */

typedef struct {
    char recent[GW_ASKS_RECENT][GW_ASKS_ID];
    int recent_at;
    bool owes_restart;          /* its connect woke its session */
    char first[GW_ASKS_ID];     /* then: its first shell request's msg_id */
    int first_heard;            /* which of that request's reply (1) and idle (2) came */
} gw_asks_t;

/* The client sent msg_id on channel (stdin answers nothing: not kept). */
void gw_asks_sent (gw_asks_t *self, jp_channel_t channel, const char *msg_id);

/* True when the client sent the request parent_id lately (forgotten then
 * when forget: its reply came). */
bool gw_asks_asked (gw_asks_t *self, const char *parent_id, bool forget);

/* A kernel message on channel that the client sees came: true, once, when
 * it makes the "restarting" the client is owed due. */
bool gw_asks_restart_due (gw_asks_t *self, jp_channel_t channel, const jp_msg_t *msg);

#endif
