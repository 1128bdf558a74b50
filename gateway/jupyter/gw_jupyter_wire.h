/* gw_jupyter_wire: Jupyter messages as they travel over a kernel's
 * websocket, to and from jp_msg_t:
 *
 *  - JSON text frames: {"header", "parent_header", "metadata", "content",
 *    "buffers", "channel"} (plus "msg_id" and "msg_type", as Jupyter
 *    Server adds them); a client's message without "channel" is shell's;
 *  - in that JSON mode, a message with buffers as one binary frame:
 *    big-endian u32 count, u32 offsets, the JSON, the buffers (Jupyter
 *    Server's serialize_binary_message);
 *  - the "v1.kernel.websocket.jupyter.org" subprotocol: little-endian u64
 *    offset count, u64 offsets, then the channel name, header,
 *    parent_header, metadata, content and buffers, each a part.
 *
 * Also the handshake's Sec-WebSocket-Accept (RFC 6455 section 4.2.2).
 *
 * Pure code, no threads. */
#ifndef GW_JUPYTER_WIRE_H
#define GW_JUPYTER_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jp_channels.h"
#include "jp_message.h"

#define GW_JUPYTER_V1_PROTOCOL "v1.kernel.websocket.jupyter.org"
#define GW_JUPYTER_MAX_BUFFERS 64

/* The channel named name (jp_channel_name's "shell", "iopub", "stdin",
 * "control", "hb"), or -1. */
int gw_jupyter_channel (const char *name);

/* Parses one frame from a client: text (a JSON message) or binary (in v1
 * when v1, else the JSON mode's buffers format). On success returns the
 * message and sets *channel; NULL with a sentence in err otherwise. */
jp_msg_t *gw_jupyter_decode (const uint8_t *data, size_t len, bool binary, bool v1,
                             jp_channel_t *channel, char *err, size_t err_len);

/* Encodes msg for a client: sets *binary to the frame's kind and returns
 * malloc'd bytes (*len), or NULL when out of memory. */
uint8_t *gw_jupyter_encode (const jp_msg_t *msg, jp_channel_t channel, bool v1, size_t *len,
                            bool *binary);

/* Writes the Sec-WebSocket-Accept value for a client's Sec-WebSocket-Key
 * into out (at least 29 bytes). Returns false for a key that is not 16
 * bytes in base64. */
bool gw_jupyter_ws_accept (const char *key, char *out, size_t out_len);

#endif
