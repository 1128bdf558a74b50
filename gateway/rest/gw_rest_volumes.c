/* gw_rest_volumes: the named volumes' routes: POST /volumes {"name",
 * "size_mb"}, GET /volumes, GET and DELETE /volumes/{name}, GET and PUT
 * /volumes/{name}/files/{path} (the session files' ways and path rules,
 * gw_rest_files.c; a PUT may go anywhere in the volume), and the
 * "volumes" of a new session (POST /sessions, POST /execute). Each for
 * the caller's tenant: another tenant's volume does not exist.
 * An adapter over gateway/files/gw_volumes.c.
 *
 * Threads: the loop thread only. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gw_rest.h"
#include "gw_rest_files.h"
#include "gw_volumes.h"

/* The server's volumes, or NULL after answering 503. */
static gw_volumes_t *
s_volumes_or_reply (gw_server_t *server, gw_request_t *req)
{
    gw_volumes_t *volumes = gw_server_volumes (server);
    if (!volumes)
        gw_request_reply_error (req, GW_E_SHUTTING_DOWN, "volumes are not served now");
    return volumes;
}

static void
s_post_volumes (gw_volumes_t *volumes, gw_request_t *req, const char *tenant)
{
    json_error_t jerr;
    json_t *body = req->body_len ? json_loadb (req->body, req->body_len, 0, &jerr) : NULL;
    json_t *name = json_object_get (body, "name"), *size = json_object_get (body, "size_mb");
    if (!json_is_object (body) || !json_is_string (name) || !json_is_integer (size)) {
        json_decref (body);
        gw_request_reply_error (req, GW_E_BAD_REQUEST, "send {\"name\": NAME (%s), "
                                "\"size_mb\": whole MiB}", gw_volumes_name_rule);
        return;
    }
    json_int_t mb = json_integer_value (size);
    gw_error_t e;
    char err[600];
    json_t *made = gw_volumes_create (volumes, tenant, json_string_value (name),
                                      mb > 0 && mb < (1 << 30) ? (long) mb : 0, &e, err,
                                      sizeof err);
    json_decref (body);
    if (made)
        gw_request_reply_json (req, 201, made);
    else
        gw_request_reply_error (req, e, "%s", err);
}

void
gw_rest_volumes (gw_server_t *server, gw_request_t *req)
{
    gw_volumes_t *volumes = s_volumes_or_reply (server, req);
    if (!volumes)
        return;
    gw_caller_t caller = gw_request_caller (req);
    if (strcmp (req->method, "POST") == 0)
        s_post_volumes (volumes, req, caller.tenant);
    else
        gw_request_reply_json (req, 200, json_pack ("{s:o}", "volumes",
                                                    gw_volumes_list (volumes, caller.tenant)));
}

void
gw_rest_volume (gw_server_t *server, gw_request_t *req, const char *name)
{
    gw_volumes_t *volumes = s_volumes_or_reply (server, req);
    if (!volumes)
        return;
    gw_caller_t caller = gw_request_caller (req);
    gw_error_t e;
    char err[600];
    if (strcmp (req->method, "DELETE") == 0) {
        if (gw_volumes_delete (volumes, caller.tenant, name, &e, err, sizeof err) < 0)
            gw_request_reply_error (req, e, "%s", err);
        else
            gw_request_reply_json (req, 204, NULL);
        return;
    }
    json_t *d = gw_volumes_describe (volumes, caller.tenant, name, &e, err, sizeof err);
    if (d)
        gw_request_reply_json (req, 200, d);
    else
        gw_request_reply_error (req, e, "%s", err);
}

/* The uploads' folder (GW_UPLOAD_DIR) goes once empty, so a volume shows
 * only its files; rmdir fails while an upload is on its way. No symlink
 * kernel code planted is followed. */
static void
s_tidy (int dirfd)
{
    int codebox = openat (dirfd, ".codebox", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (codebox < 0)
        return;
    bool empty = unlinkat (codebox, "uploads", AT_REMOVEDIR) == 0 || errno == ENOENT;
    close (codebox);
    if (empty)
        unlinkat (dirfd, ".codebox", AT_REMOVEDIR);
}

void
gw_rest_volume_files (gw_server_t *server, gw_request_t *req, const char *name,
                      const char *rest)
{
    gw_volumes_t *volumes = s_volumes_or_reply (server, req);
    if (!volumes)
        return;
    gw_caller_t caller = gw_request_caller (req);
    gw_error_t e;
    char err[600], folder[4400];
    long long room;
    if (gw_volumes_folder (volumes, caller.tenant, name, folder, sizeof folder, &room, &e, err,
                           sizeof err) < 0) {
        gw_request_reply_error (req, e, "%s", err);
        return;
    }
    int dirfd = open (folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) {
        gw_request_reply_error (req, GW_E_INTERNAL, "the volume's folder is gone");
        return;
    }
    char visible[128];
    snprintf (visible, sizeof visible, "%s/%s", GW_VOLUMES_AT, name);
    gw_rest_file_target_t t = {
        .dirfd = dirfd,
        .room = room,
        .visible = visible,
        .where = "volume",
        .quota = "the volume's size_mb",
        .anywhere = true,
    };
    gw_rest_file_serve (server, req, &t, rest);
    if (req->body_at != GW_BODY_AHEAD && strcmp (req->method, "PUT") == 0)
        s_tidy (dirfd);
    close (dirfd);
}

int
gw_rest_volumes_attach (gw_server_t *server, gw_request_t *req, json_t *list,
                        gw_exec_options_t *exec)
{
    gw_volumes_t *volumes = gw_server_volumes (server);
    if (!list || json_is_null (list))
        return 0;
    if (!volumes) {
        gw_request_reply_error (req, GW_E_SHUTTING_DOWN, "volumes are not served now");
        return -1;
    }
    gw_caller_t caller = gw_request_caller (req);
    gw_error_t e;
    char err[600];
    if (gw_volumes_attach (volumes, caller.tenant, list, exec, &e, err, sizeof err) < 0) {
        gw_request_reply_error (req, e, "%s", err);
        return -1;
    }
    return 0;
}

void
gw_rest_volumes_hold (gw_server_t *server, gw_session_t *session,
                      const gw_exec_options_t *exec)
{
    gw_volumes_t *volumes = gw_server_volumes (server);
    if (volumes)
        gw_volumes_hold (volumes, session, exec);
}
