/* fuzz_proxy_request: libFuzzer target for gw_proxy_request_parse, the
 * head of a request kernel code sends to its network proxy
 * (CODEBOX_NETWORK=on): kernel code controls every byte.
 *
 * Input format: the request bytes as they arrive.
 *
 * Checked properties (a failure aborts): a head is parsed the same whole
 * as when it comes a byte at a time (every prefix short of the end is
 * INCOMPLETE); a TUNNEL or FORWARD names a host of safe characters and a
 * port in 1..65535; a FORWARD's rewritten head fits the buffer, starts with
 * the method, ends with "Connection: close" and an empty line, and holds
 * no Proxy-Authorization header; a refusal says why. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_proxy_request.h"

static void
s_fail (const char *what)
{
    fprintf (stderr, "fuzz_proxy_request: %s\n", what);
    abort ();
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size > GW_PROXY_HEAD_MAX + 64)
        return 0;
    static char out[GW_PROXY_HEAD_MAX + 512];
    const char *text = (const char *) data;
    gw_proxy_request_t req;
    gw_proxy_request_parse (text, size, out, sizeof out, &req);
    if (req.kind == GW_PROXY_INCOMPLETE)
        return 0;
    if (req.head_len > size && req.kind != GW_PROXY_BAD)
        s_fail ("head longer than the input");
    for (size_t len = req.head_len ? req.head_len - 1 : 0; len-- > 0 && size < 2048;) {
        gw_proxy_request_t part;
        static char scratch[GW_PROXY_HEAD_MAX + 512];
        gw_proxy_request_parse (text, len, scratch, sizeof scratch, &part);
        if (part.kind != GW_PROXY_INCOMPLETE)
            s_fail ("a prefix of the head was taken as a whole head");
    }
    if (req.kind == GW_PROXY_BAD || req.kind == GW_PROXY_UNSUPPORTED) {
        if (!req.why[0])
            s_fail ("a refusal without a reason");
        return 0;
    }
    if (!req.host[0] || req.port < 1 || req.port > 65535)
        s_fail ("bad host or port");
    for (const char *c = req.host; *c; c++)
        if (!strchr ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:", *c))
            s_fail ("an unsafe character in the host");
    if (req.kind == GW_PROXY_FORWARD) {
        if (req.rewritten_len > sizeof out || req.rewritten_len < 25)
            s_fail ("rewritten head out of bounds");
        if (memcmp (out, text, strcspn (text, " ")) != 0)
            s_fail ("rewritten head lost its method");
        if (memcmp (out + req.rewritten_len - 21, "Connection: close\r\n\r\n", 21) != 0)
            s_fail ("rewritten head does not end with Connection: close");
        for (size_t i = 0; i + 21 <= req.rewritten_len; i++)
            if ((i == 0 || out[i - 1] == '\n')
                && strncasecmp (out + i, "proxy-authorization:", 20) == 0)
                s_fail ("Proxy-Authorization passed on");
    }
    return 0;
}
