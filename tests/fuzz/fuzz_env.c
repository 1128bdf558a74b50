/* fuzz_env: .env parsing (gw_config_load_text) on arbitrary text.
 * Properties: never crashes or leaks; on success every setting reads back
 * as a string; an error always comes with a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gw_config.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *text = malloc (size + 1);
    if (!text)
        return 0;
    memcpy (text, data, size);
    text[size] = '\0';      /* the loader refuses files with NUL bytes */
    gw_config_t *c = gw_config_new ();
    char err[256] = "";
    int rc = gw_config_load_text (c, text, "fuzz", err, sizeof err);
    if (rc != 0 && err[0] == '\0')
        abort ();
    for (int i = 0; i < GW_SETTING_COUNT; i++)
        if (!gw_config_str (c, (gw_setting_t) i))
            abort ();
    gw_config_destroy (&c);
    free (text);
    return 0;
}
