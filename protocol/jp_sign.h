/* jp_sign: HMAC-SHA256 signing and verification of Jupyter wire messages.
 *
 * A Jupyter message is signed over the exact bytes of its four JSON frames
 * (header, parent_header, metadata, content), in that order, with the key
 * from the connection file used as raw bytes. The signature travels as 64
 * lowercase hex digits. An empty key means "unsigned": the signature is the
 * empty string. Pure code, no threads of its own; each calling thread keeps
 * up to four keyed OpenSSL contexts (a copy of their keys), freed when it
 * ends. */
#ifndef JP_SIGN_H
#define JP_SIGN_H

#include <stddef.h>
#include <stdint.h>

#define JP_SIGNATURE_HEX_LEN 64

/* One frame's bytes, borrowed. */
typedef struct {
    const void *data;
    size_t size;
} jp_part_t;

/* Writes the hex signature of the four parts into out (65 bytes with the
 * terminating NUL). With key_len 0 writes the empty string. Returns 0, or
 * -EIO if OpenSSL fails. */
int jp_sign (const uint8_t *key, size_t key_len, const jp_part_t parts[4],
             char out[JP_SIGNATURE_HEX_LEN + 1]);

/* Checks sig (sig_len bytes, not NUL-terminated) against the parts. The
 * length is checked first, then the digits are compared in constant time.
 * Returns 0 when it matches, -EBADMSG when it does not, -EIO on failure. */
int jp_sign_verify (const uint8_t *key, size_t key_len, const jp_part_t parts[4],
                    const void *sig, size_t sig_len);

#endif
