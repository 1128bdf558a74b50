/* gw_blob: uploads files to Azure Blob Storage on a worker thread of its
 * own, one at a time in the order asked, over one kept-alive libcurl
 * connection. Each upload is a Put Blob (block blob, the file's bytes
 * streamed from an fd opened beneath its folder, never following a link
 * out of it) with Shared Key authorisation; the container is created the
 * first time Azure says it is missing. The outcome goes back to the loop
 * thread through gw_server_call. Read-only links are service SAS URLs made
 * by gw_blob_auth.
 *
 * Threads: gw_blob_new, gw_blob_submit and gw_blob_destroy are for the
 * loop thread (destroy after the loop stopped); the worker runs the
 * transfers; each upload's done runs in the loop thread. */
#ifndef GW_BLOB_H
#define GW_BLOB_H

#include <stdbool.h>

#include "gw_blob_auth.h"
#include "gw_config.h"
#include "gw_server.h"

#define GW_BLOB_MAX_BYTES (5000LL << 20)    /* a single Put Blob's limit */

typedef struct gw_blob gw_blob_t;

typedef struct gw_blob_upload gw_blob_upload_t;
struct gw_blob_upload {
    /* given */
    char *dir;                  /* host folder that path is beneath */
    char *path;                 /* the file, relative to dir */
    char *name;                 /* the blob's name in the container */
    char *content_type;
    gw_server_call_fn *done;      /* runs in the loop thread with this upload
                                   as arg, and frees it (gw_blob_upload_free) */
    void *arg;                  /* the caller's; freed with free_arg */
    void (*free_arg) (void *arg);
    /* filled by the worker */
    bool ok;
    long long size;
    char error[512];
};

/* A new upload (the strings copied), or NULL on OOM. */
gw_blob_upload_t *gw_blob_upload_new (const char *dir, const char *path, const char *name,
                                      const char *content_type, gw_server_call_fn *done,
                                      void *arg, void (*free_arg) (void *));
void gw_blob_upload_free (gw_blob_upload_t *upload);

/* Starts the worker when CODEBOX_BLOB_CONNECTION_STRING or CODEBOX_BLOB_URL
 * is set. Returns 0 with *out NULL when blob upload is off, 0 with *out
 * set, or -EINVAL / -ENOMEM with a sentence in err. */
int gw_blob_new (gw_server_t *server, const gw_config_t *config, gw_blob_t **out, char *err,
                 size_t err_len);

/* Stops the worker (a transfer under way is aborted) and frees what is
 * still queued without calling its done. */
void gw_blob_destroy (gw_blob_t **self_p);

/* Queues upload (taken over on success). Returns 0, or -EAGAIN when the
 * worker's queue is full (its pipe: CZMQ's high-water mark of 1000
 * messages at each end); the caller keeps upload then. Never blocks. */
int gw_blob_submit (gw_blob_t *self, gw_blob_upload_t *upload);

const gw_blob_account_t *gw_blob_account (const gw_blob_t *self);

#endif
