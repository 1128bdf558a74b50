/* gw_features: making and ending the server's features (see the header).
 * Threads: the main thread. */
#include "gw_features.h"

#include <stdio.h>
#include <stdlib.h>

#include "gw_artifact_upload.h"
#include "gw_blob.h"
#include "gw_download.h"
#include "gw_packages.h"
#include "gw_signed_url.h"
#include "gw_sql.h"
#include "gw_sessions.h"
#include "gw_volumes.h"

struct gw_features {
    gw_server_t *server;
    gw_sql_t *sql;
    gw_blob_t *blob;
    gw_artifact_upload_t *upload;
    gw_packages_t *packages;
    gw_downloads_t *downloads;
    gw_volumes_t *volumes;
};

gw_features_t *
gw_features_new (gw_server_t *server, const gw_config_t *config, char *err, size_t err_len)
{
    gw_features_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    self->server = server;
    /* signed links first: a blob upload's SAS URL replaces one */
    gw_signed_url_attach (server);
    if (!(self->packages = gw_packages_new (server))
        || !(self->downloads = gw_downloads_new (server))
        || !(self->volumes = gw_volumes_new (server))) {
        snprintf (err, err_len, "out of memory");
        gw_features_destroy (&self);
        return NULL;
    }
    gw_server_set_packages (server, self->packages);
    gw_server_set_downloads (server, self->downloads);
    gw_server_set_volumes (server, self->volumes);
    self->sql = gw_sql_new (server, config);
    if (!self->sql) {
        snprintf (err, err_len, "cannot start the SQL workers");
        gw_features_destroy (&self);
        return NULL;
    }
    gw_server_set_sql (server, self->sql);
    if (gw_blob_new (server, config, &self->blob, err, err_len) < 0) {
        gw_features_destroy (&self);
        return NULL;
    }
    if (self->blob && !(self->upload = gw_artifact_upload_new (server, self->blob))) {
        snprintf (err, err_len, "out of memory");
        gw_features_destroy (&self);
        return NULL;
    }
    return self;
}

void
gw_features_stop (gw_features_t *self)
{
    if (self)
        gw_downloads_stop (self->downloads);
}

void
gw_features_destroy (gw_features_t **self_p)
{
    gw_features_t *self = *self_p;
    if (!self)
        return;
    gw_server_set_downloads (self->server, NULL);
    gw_downloads_destroy (&self->downloads);
    gw_server_set_packages (self->server, NULL);
    gw_packages_destroy (&self->packages);
    gw_server_set_volumes (self->server, NULL);
    gw_volumes_destroy (&self->volumes);
    gw_artifact_upload_destroy (&self->upload);
    gw_blob_destroy (&self->blob);
    gw_server_set_sql (self->server, NULL);
    gw_sql_destroy (&self->sql);
    free (self);
    *self_p = NULL;
}

/* gw_sessions_kept_hooks_t's, through the server's volumes (arg). */
static int
s_attach (void *arg, const char *tenant, json_t *volumes, gw_exec_options_t *exec, char *err,
          size_t err_len)
{
    gw_volumes_t *store = gw_server_volumes (arg);
    gw_error_t e;
    if (!store) {
        snprintf (err, err_len, "volumes are not served");
        return -1;
    }
    return gw_volumes_attach (store, tenant, volumes, exec, &e, err, err_len);
}

static void
s_hold (void *arg, gw_session_t *session, const gw_exec_options_t *exec)
{
    gw_volumes_t *store = gw_server_volumes (arg);
    if (store)
        gw_volumes_hold (store, session, exec);
}

int
gw_features_load_kept (gw_server_t *server)
{
    gw_sessions_kept_hooks_t hooks = {s_attach, s_hold, server};
    return gw_sessions_load_kept (server, &hooks);
}
