/* gw_base64: standard base64 (RFC 4648, with padding) in one pass each
 * way; decoding skips white space, since Jupyter kernels send base64 with
 * line breaks. Pure code, any thread. */
#ifndef GW_BASE64_H
#define GW_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Decodes len chars of text into a new buffer (*out_p, *out_len).
 * Returns 0, -EINVAL for a character outside the alphabet or bad padding,
 * or -ENOMEM. */
int gw_base64_decode (const char *text, size_t len, uint8_t **out_p, size_t *out_len);

/* Encodes len bytes as a new NUL-terminated string, or NULL on OOM. */
char *gw_base64_encode (const uint8_t *data, size_t len);

#endif
