/* fuzz_jupyter_wire: a websocket frame from a client (gw_jupyter_decode) in
 * each of its three forms: JSON text, JSON-mode binary with buffers, v1.
 * The first byte picks the form. Properties: never crashes or leaks; a
 * refusal always says why; what is accepted encodes again and decodes to
 * the same message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gw_jupyter_wire.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool binary = data[0] & 1, v1 = data[0] & 2;
    char err[200] = "";
    jp_channel_t ch;
    jp_msg_t *msg = gw_jupyter_decode (data + 1, size - 1, binary, v1, &ch, err, sizeof err);
    if (!msg) {
        if (!err[0])
            abort ();
        return 0;
    }
    size_t len;
    bool out_binary;
    uint8_t *frame = gw_jupyter_encode (msg, ch, v1, &len, &out_binary);
    if (frame) {
        jp_channel_t ch2;
        jp_msg_t *again = gw_jupyter_decode (frame, len, out_binary, v1, &ch2, err, sizeof err);
        if (!again || ch2 != ch || !json_equal (again->header, msg->header)
            || !json_equal (again->content, msg->content) || again->n_buffers != msg->n_buffers)
            abort ();
        jp_msg_destroy (&again);
        free (frame);
    }
    jp_msg_destroy (&msg);
    return 0;
}
