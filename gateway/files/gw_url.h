/* gw_url: percent-encoding for the URLs codebox makes (signed artifact
 * links, Azure Blob URLs and their SAS query values). Pure code; any
 * thread. */
#ifndef GW_URL_H
#define GW_URL_H

#include <stdbool.h>

/* s with every byte but the unreserved ones (A-Z a-z 0-9 - . _ ~), and '/'
 * when keep_slash (a path), written as %XX (upper-case hex). A new string,
 * or NULL on OOM. */
char *gw_url_encode (const char *s, bool keep_slash);

#endif
