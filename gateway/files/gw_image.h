/* gw_image: makes an image small enough to send inline: scales a PNG or
 * JPEG down (libvips, keeping its aspect and format) until its encoding
 * fits a byte budget. Threads: the loop thread (libvips is set up once,
 * with one worker thread of its own). */
#ifndef GW_IMAGE_H
#define GW_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* Scales the len bytes of an image/png or image/jpeg down until the result
 * is at most max_bytes. On success returns 0 and a new buffer in *out_p
 * (free with g_free via gw_image_free) of *out_len bytes, with its pixel
 * size in *width_p and *height_p. Returns -EINVAL for an image libvips
 * cannot read, -E2BIG when even a tiny copy does not fit. */
int gw_image_fit (const uint8_t *data, size_t len, const char *mime, size_t max_bytes,
                  void **out_p, size_t *out_len, int *width_p, int *height_p);

/* Frees a buffer from gw_image_fit. */
void gw_image_free (void *buf);

#endif
