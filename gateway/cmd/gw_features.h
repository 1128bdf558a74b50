/* gw_features: the features a server gets, made and ended in one place:
 * the SQL workers (gw_sql), Azure Blob upload (gw_blob) with the upload
 * of artifacts (gw_artifact_upload), the signed links on artifact
 * listings (gw_signed_url), package installs (gw_packages) and
 * upload_file's downloads (gw_download). They attach through the server's
 * session hooks and are reached through its accessors (gw_server_sql...);
 * the core knows none of them.
 *
 * Threads: the main thread, before gw_server_run and after it returns. */
#ifndef GW_FEATURES_H
#define GW_FEATURES_H

#include <stddef.h>

#include "gw_config.h"
#include "gw_server.h"

typedef struct gw_features gw_features_t;

/* NULL with err set when a feature cannot start (bad blob settings). */
gw_features_t *gw_features_new (gw_server_t *server, const gw_config_t *config, char *err,
                                size_t err_len);

/* Loads the sessions an earlier server on the state folder kept, paused,
 * their volumes attached again (gw_sessions_load_kept). Returns how many. */
int gw_features_load_kept (gw_server_t *server);

/* Stops what answers clients on its own (running downloads get their
 * done, with GW_DOWNLOAD_SHUTDOWN): after gw_server_run returned, while
 * the transports still exist. */
void gw_features_stop (gw_features_t *self);

/* Ends them (after gw_server_run returned, before gw_server_destroy):
 * their workers stop; answers still on the way are dropped by the loop's
 * last drain. */
void gw_features_destroy (gw_features_t **self_p);

#endif
