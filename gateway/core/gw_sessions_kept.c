/* gw_sessions_kept: at start, the sessions an earlier server on the same
 * state folder kept (a clean stop, a crash, an upgrade) are loaded again
 * as paused, from their records (STATE/.kept/[@tenant/]<id>/session.json:
 * tenant, kernelspec, limits, execution_options, the disk image): their
 * folders (mounted again from their images as root), settings and
 * records; their kernels start at their next call. What cannot be loaded
 * again goes: a record without its folder, an image without its session.
 *
 * Threads: the main thread, while the server starts. */
#include "gw_sessions.h"
#include "gw_session_internal.h"
#include "gw_server_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gw_disk.h"
#include "gw_fs.h"
#include "jp_log.h"
#include "jp_time.h"
#include "ks_search.h"

/* The limits the record keeps (a missing one: the setting's). */
static gw_limits_t
s_limits (const gw_config_t *c, json_t *limits)
{
    json_t *v;
    gw_limits_t l = {
        .ttl_s = gw_config_int (c, GW_SET_SESSION_TTL),
        .idle_s = gw_config_int (c, GW_SET_IDLE_TIMEOUT),
        .exec_timeout_s = gw_config_int (c, GW_SET_EXEC_TIMEOUT),
        .max_output_bytes = gw_config_int (c, GW_SET_MAX_OUTPUT_BYTES),
    };
    if ((v = json_object_get (limits, "session_ttl")) && json_is_integer (v))
        l.ttl_s = (long) json_integer_value (v);
    if ((v = json_object_get (limits, "idle_timeout")) && json_is_integer (v))
        l.idle_s = (long) json_integer_value (v);
    if ((v = json_object_get (limits, "exec_timeout")) && json_is_integer (v))
        l.exec_timeout_s = (long) json_integer_value (v);
    if ((v = json_object_get (limits, "max_output_bytes")) && json_is_integer (v))
        l.max_output_bytes = (long) json_integer_value (v);
    return l;
}

/* Its folder as it was: its image, mounted on it at its first use (not
 * now: a start with a thousand kept sessions mounts none, and a paused
 * session holds no loop device), or the folder there already. Returns 0,
 * or -1 when it is gone. */
static int
s_folder_back (gw_server_t *server, gw_session_t *s, json_t *info, json_t *images)
{
    const char *image = json_string_value (json_object_get (info, "disk_image"));
    struct stat st;
    if (image && !strchr (image, '/') && gw_disk_enabled ()) {
        char path[4400];
        snprintf (path, sizeof path, "%s/.disks/%s", gw_server_state_dir (server), image);
        if (stat (path, &st) == 0 && (s->image = strdup (path))
            && (mkdir (s->workdir, 0755) == 0 || errno == EEXIST)) {
            json_object_set_new (images, image, json_true ());
            return 0;
        }
        jp_log_warn ("session=%s its image %s is gone", s->id, image);
    }
    return stat (s->workdir, &st) == 0 && S_ISDIR (st.st_mode) ? 0 : -1;
}

typedef struct {
    gw_server_t *server;
    json_t *images;     /* the images kept sessions use (name -> true) */
    const gw_sessions_kept_hooks_t *hooks;
} s_load_t;

/* Its volumes again (what gw_exec_options_json kept of them), into exec:
 * a volume gone since is left out, logged. */
static void
s_volumes_back (s_load_t *ctx, const char *tenant, const char *id, json_t *options,
                gw_exec_options_t *exec)
{
    json_t *list = json_object_get (options, "volumes");
    char err[600];
    if (json_array_size (list) && ctx->hooks && ctx->hooks->attach
        && ctx->hooks->attach (ctx->hooks->arg, tenant, list, exec, err, sizeof err) < 0)
        jp_log_warn ("session=%s tenant=%s comes back without its volumes: %s", id, tenant,
                     err);
}

/* Loads tenant's session id again, paused. Returns 1 if it did. */
static int
s_load_one (s_load_t *ctx, const char *tenant, const char *id)
{
    gw_server_t *server = ctx->server;
    const gw_config_t *c = gw_server_config (server);
    long max_output = gw_config_int (c, GW_SET_MAX_OUTPUT_BYTES);
    gw_session_record_t *record = gw_session_record_open (gw_server_state_dir (server), tenant,
                                                          id, (size_t) max_output);
    json_t *info = gw_session_record_info (record);
    char err[1200] = "no record";
    const char *kernel = json_string_value (json_object_get (info, "kernel"));
    ks_spec_t *spec = kernel ? ks_search_find (gw_config_str (c, GW_SET_KERNEL_PATH), kernel,
                                               err, sizeof err) : NULL;
    gw_exec_options_t exec = {0};
    gw_exec_rules_t rules = gw_server_exec_rules (server);
    gw_error_t e;
    gw_session_t *s = NULL;
    gw_limits_t limits = s_limits (c, json_object_get (info, "limits"));
    json_t *options = json_object_get (info, "execution_options");
    if (spec && gw_exec_options_parse (options, &rules, &exec, &e, err, sizeof err) == 0) {
        s_volumes_back (ctx, tenant, id, options, &exec);
        s = gw_session_alloc (gw_server_session_host (server), id, tenant, &spec, &limits,
                              &exec, err, sizeof err);
    }
    ks_spec_destroy (&spec);
    if (!s) {   /* kept as it is: a later server with its kernel may load it */
        jp_log_warn ("session event=not-loaded session=%s tenant=%s why=\"%s\"", id, tenant,
                     err);
        gw_session_record_destroy (&record, false);
        gw_exec_options_clear (&exec);
        return 0;
    }
    s->record = record;
    s->paused = s->ever_ready = true;
    struct timespec now;
    clock_gettime (CLOCK_REALTIME, &now);
    int64_t wall_ms = (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000;
    json_int_t created = json_integer_value (json_object_get (info, "created_ms"));
    s->last_used_ms = jp_time_now_ms ();
    if (created > 0 && created <= wall_ms)
        s->created_ms = s->last_used_ms - (wall_ms - created);
    int rc = s_folder_back (server, s, info, ctx->images);
    if (rc < 0)
        jp_log_info ("session event=dropped session=%s tenant=%s why=its-folder-is-gone", id,
                     tenant);
    if (rc < 0 || gw_server_add_session (server, s)) {
        gw_exec_options_clear (&exec);
        gw_session_destroy (&s, rc < 0);
        return 0;
    }
    if (exec.n_volumes && ctx->hooks && ctx->hooks->hold)
        ctx->hooks->hold (ctx->hooks->arg, s, &exec);     /* held until it ends */
    gw_exec_options_clear (&exec);
    return 1;
}

/* The records in folder (STATE/.kept or one tenant's @tenant in it). */
static int
s_load_folder (s_load_t *ctx, const char *folder, const char *tenant)
{
    DIR *d = opendir (folder);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir (d))) {
        if (e->d_name[0] == '.')
            continue;
        if (e->d_name[0] == '@' && !tenant) {
            char sub[4400];
            snprintf (sub, sizeof sub, "%s/%s", folder, e->d_name);
            n += s_load_folder (ctx, sub, e->d_name + 1);
        } else
            n += s_load_one (ctx, tenant ? tenant : "default", e->d_name);
    }
    if (d)
        closedir (d);
    return n;
}

int
gw_sessions_load_kept (gw_server_t *server, const gw_sessions_kept_hooks_t *hooks)
{
    char folder[4400];
    const char *state = gw_server_state_dir (server);
    snprintf (folder, sizeof folder, "%s/" GW_RECORD_DIR, state);
    json_t *images = json_object ();
    int64_t t0 = jp_time_now_ms ();
    s_load_t ctx = {server, images, hooks};
    int n = s_load_folder (&ctx, folder, NULL);
    /* the images no session uses any more (a pool's, a session that ended
       while its server died) go */
    snprintf (folder, sizeof folder, "%s/.disks", state);
    DIR *d = images ? opendir (folder) : NULL;
    struct dirent *e;
    while (d && (e = readdir (d)))
        if (e->d_name[0] != '.' && !json_object_get (images, e->d_name)
            && unlinkat (dirfd (d), e->d_name, 0) == 0)
            jp_log_info ("state event=swept entry=.disks/%s why=no-session", e->d_name);
    if (d)
        closedir (d);
    json_decref (images);
    jp_log_info ("state event=loaded sessions=%d ms=%lld", n,
                 (long long) (jp_time_now_ms () - t0));
    return n;
}
