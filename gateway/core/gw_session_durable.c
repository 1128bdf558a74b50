/* gw_session_durable: a session outlives its kernel. Pausing stops the
 * kernel of a session idle past CODEBOX_IDLE_PAUSE (its process, relay
 * and sandbox go, and the memory of its folder's last walk) and keeps the
 * folder, settings and record; resuming starts a kernel again at the next
 * call, and the first answer says so. The struct is gw_session_internal.h's.
 *
 * Threads: the loop thread only. */
#include "gw_session_internal.h"

#include "gw_job_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gw_disk.h"
#include "gw_hooks.h"
#include "gw_metrics.h"
#include "jp_time.h"
#include "jp_log.h"

bool
gw_session_paused (const gw_session_t *self)
{
    return self->paused;
}

bool
gw_session_can_pause (const gw_session_t *self)
{
    return !self->paused && !self->ephemeral && !self->destroying && !self->doomed
           && self->record && self->kernel && !self->running && !self->queue_head
           && !self->restart_pending && !self->starting_again
           && ks_kernel_state (self->kernel) == KS_KERNEL_READY
           && strcmp (self->exec_state, "busy") != 0;
}

void
gw_session_pause (gw_session_t *self)
{
    if (self->paused)
        return;
    if (self->kernel) {
        ks_kernel_set_handlers (self->kernel, NULL, NULL, NULL);
        ks_kernel_destroy (&self->kernel);
    }
    self->paused = true;
    self->failed = false;
    self->restart_pending = false;
    self->starting_again = false;
    self->exec_state[0] = '\0';
    gw_snapshot_destroy (&self->last_walk);     /* walked again when it runs */
    gw_changes_destroy (&self->changes);
    gw_disk_trim (self->workdir);     /* what its files freed is the disk's again */
    jp_log_info ("session event=paused session=%s tenant=%s idle_s=%lld", self->id,
                 self->tenant, (long long) ((jp_time_now_ms () - self->last_used_ms) / 1000));
}

int
gw_session_resume (gw_session_t *self)
{
    if (!self->paused)
        return 0;
    self->last_used_ms = jp_time_now_ms ();
    gw_session_mount_back (self);
    if (gw_session_start_kernel (self)) {
        jp_log_warn ("session=%s cannot start its kernel again: %s", self->id, self->error);
        return -EIO;
    }
    self->paused = false;
    self->ever_ready = true;    /* its first start is long over */
    self->starting_again = true;
    self->resumed_notice = true;
    self->restarts++;
    gw_session_record_restart (self->record);   /* the next cells are the next run */
    gw_hooks_kernel_state (self->host->launch.hooks, self, "restarting");
    gw_metrics_kernel_restart (self->host->launch.metrics);
    jp_log_info ("session event=resumed session=%s tenant=%s", self->id, self->tenant);
    return 0;
}
