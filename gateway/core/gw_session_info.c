/* gw_session_info: what a session is and says, for every layer: its id,
 * tenant, kernelspec, folders (as the host and as kernel code sees them),
 * limits, status and JSON, when it was last used; marking it used or to
 * end later. The struct is gw_session_internal.h's.
 *
 * Threads: the loop thread only. */
#include "gw_session_internal.h"

#include "gw_job_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw_sandbox.h"
#include "jp_time.h"

const char *
gw_session_execution_state (const gw_session_t *self)
{
    const char *status = gw_session_status (self);
    if (self->paused)
        return "idle";  /* Jupyter has no word for it: its next call starts a kernel */
    if (strcmp (status, "dead") == 0)
        return "dead";
    if (self->restart_pending || self->starting_again)
        return "restarting";
    if (strcmp (status, "starting") == 0)
        return "starting";
    return self->exec_state[0] ? self->exec_state : "idle";
}

int64_t
gw_session_last_used_ms (const gw_session_t *self)
{
    return self->last_used_ms;
}


void
gw_session_touch (gw_session_t *self)
{
    self->last_used_ms = jp_time_now_ms ();
}

const char *
gw_session_status (const gw_session_t *self)
{
    if (self->paused)
        return "paused";
    if (self->failed || !self->kernel)
        return "dead";
    ks_kernel_state_t state = ks_kernel_state (self->kernel);
    if (state == KS_KERNEL_STARTING || state == KS_KERNEL_NEW
        || (state == KS_KERNEL_DEAD && self->restart_pending))
        return "starting";
    if (state != KS_KERNEL_READY)
        return "dead";
    return self->running || self->queue_head ? "busy" : "idle";
}

json_t *
gw_session_json (const gw_session_t *self, bool with_limits)
{
    int64_t now = jp_time_now_ms ();
    json_t *json = json_pack (
        "{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:s, s:s}", "session_id", self->id, "kernel",
        self->spec->name, "workdir", self->visible_workdir, "input_dir", self->visible_input,
        "output_dir", self->visible_output, "age_seconds", (json_int_t) ((now - self->created_ms) / 1000),
        "idle_seconds", (json_int_t) ((now - self->last_used_ms) / 1000), "status",
        gw_session_status (self), "language", self->spec->language);
    if (json && with_limits) {
        json_object_set_new (json, "limits",
                             json_pack ("{s:I, s:I, s:I, s:I}", "session_ttl",
                                        (json_int_t) self->limits.ttl_s, "idle_timeout",
                                        (json_int_t) self->limits.idle_s, "exec_timeout",
                                        (json_int_t) self->limits.exec_timeout_s,
                                        "max_output_bytes",
                                        (json_int_t) self->limits.max_output_bytes));
        json_object_set_new (json, "restarts", json_integer (self->restarts));
        json_object_set_new (json, "sandbox",
                             gw_sandbox_describe (self->host->launch.sandbox, self->spec));
        if (self->failed)
            json_object_set_new (json, "error", json_string (self->error));
    }
    return json;
}

void
gw_session_end_later (gw_session_t *self)
{
    if (!self->destroying)
        self->doomed = true;    /* the server removes it at the end of the turn */
}

const char *
gw_session_id (const gw_session_t *self)
{
    return self->id;
}

const char *
gw_session_tenant (const gw_session_t *self)
{
    return self->tenant;
}

const ks_spec_t *
gw_session_spec (const gw_session_t *self)
{
    return self->spec;
}

gw_server_t *
gw_session_server (const gw_session_t *self)
{
    return self->host->server;
}

const gw_limits_t *
gw_session_limits (const gw_session_t *self)
{
    return &self->limits;
}

int64_t
gw_session_created_ms (const gw_session_t *self)
{
    return self->created_ms;
}

const char *
gw_session_error (const gw_session_t *self)
{
    return self->error;
}

const char *
gw_session_workdir (const gw_session_t *self)
{
    gw_session_mount_back (self);
    return self->workdir;
}

const char *
gw_session_input_dir (const gw_session_t *self)
{
    gw_session_mount_back (self);
    return self->input_dir;
}

const char *
gw_session_visible_workdir (const gw_session_t *self)
{
    return self->visible_workdir;
}

const char *
gw_session_visible_input (const gw_session_t *self)
{
    return self->visible_input;
}

bool
gw_session_ephemeral (const gw_session_t *self)
{
    return self->ephemeral;
}

void
gw_session_set_ephemeral (gw_session_t *self)
{
    self->ephemeral = true;
}


gw_session_record_t *
gw_session_cell_record (const gw_session_t *self)
{
    return self->record;
}

json_t *
gw_session_settings_json (const gw_session_t *self)
{
    char created[32];
    struct timespec now;    /* created_ms is on jp_time's clock: the date is now less its age */
    clock_gettime (CLOCK_REALTIME, &now);
    time_t t = now.tv_sec - (time_t) ((jp_time_now_ms () - self->created_ms) / 1000);
    struct tm tm;
    gmtime_r (&t, &tm);
    strftime (created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const ks_spec_t *spec = self->spec;
    return json_pack ("{s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:s, s:I, s:{s:I, s:I, s:I, s:I},"
                      " s:o}", "session_id", self->id, "tenant", self->tenant, "kernel",
                      spec->name, "kernelspec", "name", spec->name, "display_name",
                      spec->display_name ? spec->display_name : spec->name, "language",
                      spec->language ? spec->language : "", "created", created, "created_ms",
                      (json_int_t) t * 1000, "limits", "session_ttl",
                      (json_int_t) self->limits.ttl_s, "idle_timeout",
                      (json_int_t) self->limits.idle_s, "exec_timeout",
                      (json_int_t) self->limits.exec_timeout_s, "max_output_bytes",
                      (json_int_t) self->limits.max_output_bytes, "execution_options",
                      gw_exec_options_json (&self->exec));
}
