/* gw_base64: standard base64 (RFC 4648, with padding) in one pass each
 * way; decoding skips white space, since Jupyter kernels send base64 with
 * line breaks. And strict base64url for JOSE (JWTs, JWKs). Pure code, any
 * thread. */
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

/* Decodes len chars of base64url as JOSE writes it (RFC 7515 2: the
 * URL-safe alphabet, no padding, no white space, unused bits zero, so that
 * one value has one text) into out, which has room for len * 3 / 4 bytes;
 * sets *out_len. Returns 0, or -EINVAL for anything else. */
int gw_base64url_decode_to (const char *text, size_t len, uint8_t *out, size_t *out_len);

#endif
