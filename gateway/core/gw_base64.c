/* gw_base64: RFC 4648 base64, and JOSE's strict base64url. Pure code, any thread. Ours, not zarmour:
 * zarmour's decoder skips whatever is not in the alphabet (it decodes
 * "QU*JD!" as "ABC"), where a client's base64 (Mcp-Param headers, uploads)
 * must be refused; it also needs NUL-terminated text and hands back one
 * byte too many, and is no faster (measured by `make bench`,
 * tests/bench/czmq_compare.c). */
#include "gw_base64.h"

#include <errno.h>
#include <stdlib.h>

static const char s_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The 6-bit value of c, -1 if outside the alphabet. */
static int
s_value (unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int
gw_base64_decode (const char *text, size_t len, uint8_t **out_p, size_t *out_len)
{
    uint8_t *out = malloc (len / 4 * 3 + 3);
    if (!out)
        return -ENOMEM;
    size_t n = 0, pad = 0;
    uint32_t acc = 0;
    int bits = 0, chars = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) text[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        int v = s_value (c);
        if (v < 0 || pad) {         /* data after padding is malformed */
            free (out);
            return -EINVAL;
        }
        acc = (acc << 6) | (uint32_t) v;
        bits += 6;
        chars++;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (uint8_t) (acc >> bits);
        }
    }
    if (pad > 2 || chars % 4 == 1 || (pad && (chars + pad) % 4)) {
        free (out);
        return -EINVAL;
    }
    *out_p = out;
    *out_len = n;
    return 0;
}

int
gw_base64url_decode_to (const char *text, size_t len, uint8_t *out, size_t *out_len)
{
    if (len % 4 == 1)
        return -EINVAL;
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) text[i];
        int v = c == '-' ? 62 : c == '_' ? 63 : c == '+' || c == '/' ? -1 : s_value (c);
        if (v < 0)
            return -EINVAL;
        acc = (acc << 6) | (uint32_t) v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (uint8_t) (acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (acc != 0)               /* unused bits set: another text of the same bytes */
        return -EINVAL;
    *out_len = n;
    return 0;
}

char *
gw_base64_encode (const uint8_t *data, size_t len)
{
    char *out = malloc ((len + 2) / 3 * 4 + 1);
    if (!out)
        return NULL;
    size_t o = 0, i = 0;
    for (; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t) data[i] << 16 | (uint32_t) data[i + 1] << 8 | data[i + 2];
        out[o++] = s_alphabet[v >> 18];
        out[o++] = s_alphabet[(v >> 12) & 63];
        out[o++] = s_alphabet[(v >> 6) & 63];
        out[o++] = s_alphabet[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t) data[i] << 16 | (i + 1 < len ? (uint32_t) data[i + 1] << 8 : 0);
        out[o++] = s_alphabet[v >> 18];
        out[o++] = s_alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < len ? s_alphabet[(v >> 6) & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}
