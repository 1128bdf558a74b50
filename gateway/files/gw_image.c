/* gw_image: downscaling with libvips. Loop thread. */
#include "gw_image.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <vips/vips.h>

static int s_ready = 0;

/* Starts libvips once. Returns 0 or -EIO. */
static int
s_init (void)
{
    if (s_ready == 0) {
        s_ready = VIPS_INIT ("codebox") == 0 ? 1 : -1;
        if (s_ready == 1) {
            vips_concurrency_set (1);
            vips_cache_set_max (0);
        }
    }
    return s_ready == 1 ? 0 : -EIO;
}

int
gw_image_fit (const uint8_t *data, size_t len, const char *mime, size_t max_bytes,
              void **out_p, size_t *out_len, int *width_p, int *height_p)
{
    if (s_init ())
        return -EIO;
    VipsImage *in = vips_image_new_from_buffer (data, len, "", NULL);
    if (!in) {
        vips_error_clear ();
        return -EINVAL;
    }
    int width = vips_image_get_width (in), height = vips_image_get_height (in);
    g_object_unref (in);
    const char *suffix = strcmp (mime, "image/jpeg") == 0 ? ".jpg[Q=80]" : ".png[compression=6]";
    double scale = sqrt ((double) max_bytes / (double) (len ? len : 1)) * 0.9;
    if (scale > 0.95)
        scale = 0.95;
    for (int attempt = 0; attempt < 12; attempt++, scale *= 0.7) {
        int w = (int) (width * scale);
        if (w < 8)
            break;
        VipsImage *thumb = NULL;
        if (vips_thumbnail_buffer ((void *) data, len, &thumb, w, "height", height + 1, NULL)) {
            vips_error_clear ();
            return -EINVAL;
        }
        void *buf = NULL;
        size_t n = 0;
        int rc = vips_image_write_to_buffer (thumb, suffix, &buf, &n, NULL);
        int tw = vips_image_get_width (thumb), th = vips_image_get_height (thumb);
        g_object_unref (thumb);
        if (rc) {
            vips_error_clear ();
            return -EINVAL;
        }
        if (n <= max_bytes) {
            *out_p = buf;
            *out_len = n;
            *width_p = tw;
            *height_p = th;
            return 0;
        }
        g_free (buf);
    }
    return -E2BIG;
}

void
gw_image_free (void *buf)
{
    g_free (buf);
}
