/* gw_session: a session's kernel, folder and job queue: making and ending it,
 * starting, restarting and watching its kernel, running its jobs in turn
 * (what it says of itself: gw_session_info.c). Loop thread only. */
#include "gw_session_internal.h"

#include "gw_job_internal.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "gw_disk.h"
#include "gw_fs.h"
#include "gw_hooks.h"
#include "gw_launch.h"
#include "gw_pool.h"
#include "gw_sandbox.h"
#include "gw_metrics.h"
#include "jp_time.h"
#include "jp_log.h"

#define STOP_GRACE_MS 3000      /* after an interrupt, before a restart */
#define CPU_CHECK_MS 500        /* how often a running job's CPU time is read */
#define TRIM_AFTER_MESSAGES 10000 /* an execution this chatty is followed by malloc_trim */
#define TRIM_AFTER_BYTES (64LL << 20)   /* and one that received this much */
#define LAST_WALK_MAX_BYTES (512u << 10) /* a session keeps its last folder walk up to this */

static void s_on_msg (ks_kernel_t *kernel, jp_channel_t channel, jp_msg_t **msg_p, void *arg);
static void s_on_state (ks_kernel_t *kernel, ks_kernel_state_t state, void *arg);

int
gw_session_start_kernel (gw_session_t *self)
{
    self->kernel = gw_launch_kernel (&self->host->launch, self->spec, self->workdir, &self->exec,
                                     self->error, sizeof self->error);
    if (!self->kernel)
        return -EIO;
    ks_kernel_set_handlers (self->kernel, s_on_msg, s_on_state, self);
    jp_log_info ("kernel event=start session=%s kernel=%s id=%s", self->id,
             self->spec->name, ks_kernel_id (self->kernel));
    return 0;
}

/* Takes a warm kernel from the pool when one of this kernelspec is ready:
 * its folder becomes the session's. Returns true if it did. */
static bool
s_take_warm (gw_session_t *self)
{
    ks_spec_t *spec = NULL;
    ks_kernel_t *kernel = gw_pool_take (self->host->pool, self->spec->name,
                                        self->workdir, &spec);
    if (!kernel)
        return false;
    ks_spec_destroy (&self->spec);      /* the kernel uses the pool's copy */
    self->spec = spec;
    self->kernel = kernel;
    self->ever_ready = true;
    ks_kernel_set_handlers (kernel, s_on_msg, s_on_state, self);
    jp_log_info ("kernel event=warm session=%s kernel=%s id=%s", self->id,
             spec->name, ks_kernel_id (kernel));
    return true;
}

gw_session_t *
gw_session_alloc (const gw_session_host_t *host, const char *id, const char *tenant,
                  ks_spec_t **spec_p, const gw_limits_t *limits, const gw_exec_options_t *exec,
                  char *err, size_t err_len)
{
    gw_session_t *self = calloc (1, sizeof *self);
    if (!self || (exec && gw_exec_options_copy (&self->exec, exec) < 0)) {
        free (self);
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    snprintf (self->id, sizeof self->id, "%s", id);
    snprintf (self->tenant, sizeof self->tenant, "%s", tenant);
    self->host = host;
    self->spec = *spec_p;
    *spec_p = NULL;
    self->limits = *limits;
    self->created_ms = self->last_used_ms = jp_time_now_ms ();
    self->own_file_system = -1;
    /* tenants other than the default one get a folder each ('@' cannot
       start a session id), so two tenants may use the same session id */
    if (strcmp (tenant, "default") == 0)
        snprintf (self->workdir, sizeof self->workdir, "%s/%s", host->launch.state_dir,
                  id);
    else {
        char parent[900];
        snprintf (parent, sizeof parent, "%s/@%s", host->launch.state_dir, tenant);
        gw_fs_mkdirs (parent, 0755);
        snprintf (self->workdir, sizeof self->workdir, "%s/%s", parent, id);
    }
    snprintf (self->input_dir, sizeof self->input_dir, "%s/input", self->workdir);
    snprintf (self->output_dir, sizeof self->output_dir, "%s/output", self->workdir);
    snprintf (self->visible_workdir, sizeof self->visible_workdir, "%s",
              gw_sandbox_visible (host->launch.sandbox, self->workdir));
    snprintf (self->visible_input, sizeof self->visible_input, "%s/input", self->visible_workdir);
    snprintf (self->visible_output, sizeof self->visible_output, "%s/output",
              self->visible_workdir);
    return self;
}

gw_session_t *
gw_session_new (const gw_session_host_t *host, const char *id, const char *tenant,
                ks_spec_t **spec_p, const gw_limits_t *limits, const gw_exec_options_t *exec,
                char *err, size_t err_len)
{
    gw_session_t *self = gw_session_alloc (host, id, tenant, spec_p, limits, exec, err, err_len);
    if (!self)
        return NULL;
    if (!gw_exec_options_custom (&self->exec) && s_take_warm (self))
        return self;
    if (gw_launch_make_folder (&host->launch, self->workdir, err, err_len) < 0) {
        gw_session_destroy (&self, false);
        return NULL;
    }
    if (gw_session_start_kernel (self)) {
        snprintf (err, err_len, "%s", self->error);
        gw_session_destroy (&self, true);
        return NULL;
    }
    return self;
}

/* Tells every start waiter. */
static void
s_answer_start_waiters (gw_session_t *self, bool ok)
{
    gw_session_started_t *w = self->start_waiters;
    self->start_waiters = NULL;
    while (w) {
        gw_session_started_t *next = w->next;
        w->next = NULL;
        w->fn (self, ok, w);
        w = next;
    }
}

/* Ends the running job with status, recording its artifacts and metrics,
 * then starts the next. */
static void s_start_next (gw_session_t *self);

/* The session folder's artifact walk as of now (new reference; NULL on
 * OOM): the last walk again when the folder's tracker saw nothing change
 * since (an execution that writes no file walks nothing), else a new walk,
 * watched, kept as the last one when whole and at most LAST_WALK_MAX_BYTES
 * (an idle session holds it: with at most GW_CHANGES_MAX_TRACKERS
 * trackers, 8 MiB in all). */
static gw_snapshot_t *
s_folder_now (gw_session_t *self)
{
    if (!self->changes)
        self->changes = gw_changes_new ();
    if (!gw_changes_take (self->changes) && self->last_walk)
        return gw_snapshot_ref (self->last_walk);
    gw_snapshot_destroy (&self->last_walk);
    gw_snapshot_t *now = gw_snapshot_take_watched (self->workdir, GW_SNAPSHOT_SESSION,
                                                   self->changes);
    if (gw_snapshot_whole (now) && gw_snapshot_bytes (now) <= LAST_WALK_MAX_BYTES
        && gw_changes_on (self->changes))
        self->last_walk = gw_snapshot_ref (now);
    return now;
}

static void
s_finish_running (gw_session_t *self, gw_exec_status_t status)
{
    gw_job_t *job = self->running;
    if (!job)
        return;
    self->running = NULL;
    /* its execution is over: the kernel is idle, even when its own idle
       status was lost (a flood the relay cut), until it says otherwise */
    snprintf (self->exec_state, sizeof self->exec_state, "idle");
    gw_snapshot_t *after = s_folder_now (self);
    if (job->before && after) {
        json_decref (job->new_artifacts);
        job->new_artifacts = after == job->before ? json_array ()   /* nothing changed */
                             : gw_snapshot_diff (job->before, after, self->visible_workdir);
    }
    gw_snapshot_destroy (&after);
    gw_snapshot_destroy (&job->before);
    long long quota = gw_config_int (self->host->launch.config, GW_SET_DISK_QUOTA_MB) << 20;
    /* a session folder that is a file system of its own (gw_disk) cannot
       hold more than its quota: only a plain folder is walked and summed,
       which costs a walk of everything the kernel keeps there each run */
    if (self->own_file_system < 0)     /* made with the folder; asked once */
        self->own_file_system = gw_disk_is_mount (self->workdir);
    long long used = self->own_file_system ? 0 : gw_fs_tree_size (self->workdir);
    if (used > quota && job->exec) {
        char why[300];
        snprintf (why, sizeof why, "the session folder holds %lld MiB, over its quota of %lld "
                  "MiB (CODEBOX_DISK_QUOTA_MB); delete files to go on", used >> 20, quota >> 20);
        gw_execution_add_error (job->exec, "DiskQuotaExceeded", why);
        if (status == GW_EXEC_COMPLETED)
            status = GW_EXEC_ERROR;
    }
    gw_session_record_job (self->record, job, status);
    gw_metrics_execution (self->host->launch.metrics, status,
                          gw_execution_duration_ms (job->exec));
    if (job->messages > TRIM_AFTER_MESSAGES || job->bytes > TRIM_AFTER_BYTES)
        malloc_trim (0);    /* a flood the loop fell behind on was queued by
                               libzmq's thread; give that memory back */
    gw_hooks_end_job (self->host->launch.hooks, self, job, status);
    self->last_used_ms = jp_time_now_ms ();
    s_start_next (self);
}

/* Ends a queued job without running it. */
static void
s_fail_queued (gw_job_t *job, gw_exec_status_t status, const char *ename, const char *why)
{
    if (!job->exec)
        job->exec = gw_execution_new (job->code, 0);
    if (job->exec && why)
        gw_execution_abort (job->exec, status, ename, why);
    gw_job_finish (job, status);
}

static void s_on_job_output (gw_execution_t *exec, json_t *item, void *arg);
static void s_on_job_input (gw_execution_t *exec, const char *prompt, bool password, void *arg);

static void
s_start_next (gw_session_t *self)
{
    while (!self->running && self->queue_head && self->kernel
           && ks_kernel_state (self->kernel) == KS_KERNEL_READY) {
        gw_job_t *job = self->queue_head;
        self->queue_head = job->next_queued;
        if (!self->queue_head)
            self->queue_tail = NULL;
        job->next_queued = NULL;
        job->exec = gw_execution_new (job->code, (size_t) self->limits.max_output_bytes);
        job->before = s_folder_now (self);
        if (job->exec)
            gw_execution_set_output_handler (job->exec, s_on_job_output, job);
        if (job->exec && job->allow_input)
            gw_execution_set_input_handler (job->exec, s_on_job_input, job);
        if (job->exec && self->resumed_notice) {   /* the first answer after a pause */
            self->resumed_notice = false;
            gw_execution_add_stream (job->exec, "stderr", GW_SESSION_RESUMED_NOTICE "\n");
        }
        if (!job->exec || gw_execution_start (job->exec, self->kernel) != 0) {
            s_fail_queued (job, GW_EXEC_ERROR, "InternalError",
                           "the code could not be sent to the kernel");
            continue;
        }
        int64_t now = jp_time_now_ms ();
        job->status = GW_EXEC_RUNNING;
        job->deadline_ms = now + job->timeout_ms;
        job->cpu_start_ns = ks_kernel_cpu_ns (self->kernel);
        job->cpu_check_ms = job->cpu_start_ns >= 0 ? now + CPU_CHECK_MS : 0;
        self->running = job;
    }
}

/* Passes each output of a running job to whoever watches it. */
static void
s_on_job_output (gw_execution_t *exec, json_t *item, void *arg)
{
    (void) exec;
    gw_job_t *job = arg;
    gw_job_output (job, item);
}

/* The running job's input() waits: its observers are told. */
static void
s_on_job_input (gw_execution_t *exec, const char *prompt, bool password, void *arg)
{
    (void) exec;
    json_t *item = json_pack ("{s:s, s:b}", "prompt", prompt ? prompt : "", "password", password);
    if (item)
        gw_job_input (arg, item);
    json_decref (item);
}

/* Fails everything queued (the kernel cannot run it). */
static void
s_fail_queue (gw_session_t *self, const char *why)
{
    while (self->queue_head) {
        gw_job_t *job = self->queue_head;
        self->queue_head = job->next_queued;
        job->next_queued = NULL;
        s_fail_queued (job, GW_EXEC_ERROR, "KernelStartFailed", why);
    }
    self->queue_tail = NULL;
}

static void
s_on_msg (ks_kernel_t *kernel, jp_channel_t channel, jp_msg_t **msg_p, void *arg)
{
    gw_session_t *self = arg;
    const jp_msg_t *msg = *msg_p;
    if (channel == JP_CHANNEL_IOPUB && strcmp (jp_msg_type (msg), "status") == 0) {
        const char *state = json_string_value (json_object_get (msg->content,
                                                                "execution_state"));
        if (state)
            snprintf (self->exec_state, sizeof self->exec_state, "%s", state);
    }
    gw_hooks_kernel_msg (self->host->launch.hooks, self, channel, msg);
    gw_job_t *job = self->running;
    if (!job || !gw_execution_feed (job->exec, channel, *msg_p)) {
        gw_session_record_kernel_msg (self->record, channel, msg);   /* a client's own cell */
        return;
    }
    job->messages++;
    job->bytes += (long long) ks_kernel_last_msg_bytes (kernel);
    if (gw_execution_finished (job->exec))
        s_finish_running (self, job->stop_as ? job->stop_as : gw_execution_status (job->exec));
}

static void
s_on_state (ks_kernel_t *kernel, ks_kernel_state_t state, void *arg)
{
    gw_session_t *self = arg;
    if (state == KS_KERNEL_READY) {
        jp_log_info ("kernel event=ready session=%s kernel=%s ms=%lld",
                 self->id, self->spec->name, (long long) ks_kernel_start_ms (kernel));
        self->failed = false;
        self->starting_again = false;
        if (!self->ever_ready) {
            self->last_used_ms = jp_time_now_ms ();     /* idle from now */
            self->ever_ready = true;
            s_answer_start_waiters (self, true);
        }
        s_start_next (self);
        return;
    }
    if (state != KS_KERNEL_DEAD)
        return;
    snprintf (self->error, sizeof self->error, "%s", ks_kernel_error (kernel));
    jp_log_info ("kernel event=dead session=%s kernel=%s why=%s", self->id,
             self->spec->name, self->error);
    if (!self->ever_ready || self->starting_again) {
        /* it never became ready: a start failure, first or after a restart */
        self->failed = true;
        self->starting_again = false;
        gw_hooks_kernel_state (self->host->launch.hooks, self, "dead");
        s_answer_start_waiters (self, false);
        s_fail_queue (self, self->error);
        return;
    }
    gw_metrics_kernel_death (self->host->launch.metrics);
    gw_session_record_kernel_died (self->record);
    gw_job_t *job = self->running;
    if (job) {
        char why[1200];
        snprintf (why, sizeof why, "%s; the kernel was restarted and its state is lost",
                  self->error);
        job->kernel_restarted = true;
        if (!job->reason)
            job->reason = "kernel_died";
        gw_execution_abort (job->exec, GW_EXEC_ERROR, "KernelDied", why);
    }
    self->restart_pending = true;   /* done in tick, outside this callback */
    if (job)
        s_finish_running (self, job->stop_as ? job->stop_as : GW_EXEC_ERROR);
}

/* Replaces the kernel with a fresh one. */
static void
s_restart (gw_session_t *self)
{
    self->restart_pending = false;
    ks_kernel_destroy (&self->kernel);
    self->restarts++;
    gw_session_record_restart (self->record);   /* the next cells are the next run */
    self->exec_state[0] = '\0';
    gw_hooks_kernel_state (self->host->launch.hooks, self, "restarting");
    if (gw_session_start_kernel (self)) {
        self->failed = true;
        s_fail_queue (self, self->error);
        return;
    }
    gw_metrics_kernel_restart (self->host->launch.metrics);
    self->starting_again = true;
}

void
gw_session_destroy (gw_session_t **self_p, bool remove_folder)
{
    if (!self_p || !*self_p)
        return;
    gw_session_t *self = *self_p;
    self->destroying = true;
    if (self->kernel) {
        ks_kernel_set_handlers (self->kernel, NULL, NULL, NULL);
        ks_kernel_destroy (&self->kernel);
    }
    if (self->running) {
        gw_job_t *job = self->running;
        self->running = NULL;
        if (job->exec)
            gw_execution_abort (job->exec, GW_EXEC_CANCELLED, "SessionEnded",
                                "the session was ended");
        gw_job_finish (job, GW_EXEC_CANCELLED);
    }
    while (self->queue_head) {
        gw_job_t *job = self->queue_head;
        self->queue_head = job->next_queued;
        job->next_queued = NULL;
        gw_job_finish (job, GW_EXEC_CANCELLED);
    }
    gw_hooks_session_end (self->host->launch.hooks, self);    /* features let go (held jobs end) */
    snprintf (self->error, sizeof self->error, "the session was ended before its kernel started");
    s_answer_start_waiters (self, false);
    gw_jobs_detach_session (self->host->jobs, self);
    gw_snapshot_destroy (&self->last_walk);
    gw_changes_destroy (&self->changes);
    gw_session_record_destroy (&self->record, remove_folder);
    if (remove_folder && self->image)
        unlink (self->image);   /* never mounted again: it goes with the session */
    free (self->image);
    if (remove_folder && self->workdir[0]) {
        int rc = gw_disk_remove (self->workdir);
        if (rc)
            jp_log_warn ("session=%s cannot remove its folder: %s", self->id,
                     strerror (-rc));
    }
    ks_spec_destroy (&self->spec);
    gw_exec_options_clear (&self->exec);
    free (self);
    *self_p = NULL;
}

void
gw_session_enqueue (gw_session_t *self, gw_job_t *job)
{
    self->last_used_ms = jp_time_now_ms ();
    if (self->failed || (self->paused && gw_session_resume (self))) {
        s_fail_queued (job, GW_EXEC_ERROR, "KernelStartFailed", self->error);
        return;
    }
    if (self->queue_tail)
        self->queue_tail->next_queued = job;
    else
        self->queue_head = job;
    self->queue_tail = job;
    s_start_next (self);
}

bool
gw_session_queue_full (const gw_session_t *self, size_t code_len, char *why, size_t why_len)
{
    long max = gw_config_int (self->host->launch.config, GW_SET_MAX_QUEUED_EXECUTIONS);
    long count = 0;
    size_t bytes = code_len;
    for (const gw_job_t *j = self->queue_head; j; j = j->next_queued) {
        count++;
        bytes += j->code ? strlen (j->code) : 0;
    }
    if (count >= max)
        snprintf (why, why_len, "session %s already has %ld executions waiting "
                  "(CODEBOX_MAX_QUEUED_EXECUTIONS); wait for them or cancel some", self->id,
                  count);
    else if (bytes > GW_SESSION_QUEUE_BYTES)
        snprintf (why, why_len, "session %s already has %zu MiB of code waiting; wait for "
                  "it to run", self->id, (bytes - code_len) >> 20);
    else
        return false;
    return true;
}

void
gw_session_cancel (gw_session_t *self, gw_job_t *job)
{
    if (gw_job_finished (job) || job->held)
        return;     /* ended, or a feature holds its end (its artifacts upload) */
    if (job != self->running) {
        gw_job_t **link = &self->queue_head;
        self->queue_tail = NULL;
        for (gw_job_t *j = self->queue_head; j; j = j->next_queued) {
            if (j == job)
                *link = j->next_queued;
            else {
                link = &j->next_queued;
                self->queue_tail = j;
            }
        }
        job->next_queued = NULL;
        gw_job_finish (job, GW_EXEC_CANCELLED);
        return;
    }
    if (!job->stop_as) {
        job->stop_as = GW_EXEC_CANCELLED;
        job->reason = "cancelled";
        job->grace_ms = jp_time_now_ms () + STOP_GRACE_MS;
        ks_kernel_interrupt (self->kernel);
    }
}

void
gw_session_when_started (gw_session_t *self, gw_session_started_t *waiter)
{
    if (self->ever_ready || self->failed) {     /* a warm kernel, or too late */
        waiter->fn (self, self->ever_ready && !self->failed, waiter);
        return;
    }
    waiter->next = self->start_waiters;
    self->start_waiters = waiter;
}

int64_t
gw_session_deadline (const gw_session_t *self)
{
    int64_t d = self->kernel ? ks_kernel_deadline (self->kernel) : -1;
    const gw_job_t *job = self->running;
    if (job) {
        int64_t j = job->stop_as ? job->grace_ms : job->deadline_ms;
        if (!job->stop_as && job->cpu_check_ms && job->cpu_check_ms < j)
            j = job->cpu_check_ms;
        int64_t settle = gw_execution_settle_deadline (job->exec);
        if (settle >= 0 && settle < j)
            j = settle;
        if (d < 0 || j < d)
            d = j;
    }
    int64_t u = gw_hooks_session_deadline (self->host->launch.hooks, self);
    if (u >= 0 && (d < 0 || u < d))
        d = u;
    if (self->restart_pending && self->kernel
        && ks_kernel_state (self->kernel) == KS_KERNEL_DEAD)
        d = 0;
    return d;
}

/* Kills the kernel now, quietly (no death handling: the caller ends the
 * running job itself), for tick to start a fresh one. */
static void
s_kill_for_restart (gw_session_t *self)
{
    self->restart_pending = true;
    ks_kernel_set_handlers (self->kernel, NULL, NULL, NULL);
    ks_kernel_kill (self->kernel);
    ks_kernel_set_handlers (self->kernel, s_on_msg, s_on_state, self);
}

/* Stops the running job once it used more CPU time than allowed (all the
 * kernel's processes and threads count), as a timeout does. */
static void
s_check_cpu (gw_session_t *self, gw_job_t *job, int64_t now)
{
    long long limit_s = gw_config_int (self->host->launch.config, GW_SET_CPU_TIME_LIMIT);
    long long used = ks_kernel_cpu_ns (self->kernel) - job->cpu_start_ns;
    if (used <= limit_s * 1000000000LL) {
        job->cpu_check_ms = now + CPU_CHECK_MS;
        return;
    }
    jp_log_info ("execution event=cpu-limit session=%s request=%s cpu_ms=%lld",
             self->id, job->id, used / 1000000);
    char why[300];
    snprintf (why, sizeof why, "the execution used %.1f s of CPU time, over the limit of %lld s "
              "(CODEBOX_CPU_TIME_LIMIT), and was interrupted", (double) used / 1e9, limit_s);
    gw_execution_add_error (job->exec, "CpuTimeExceeded", why);
    job->stop_as = GW_EXEC_TIMEOUT;
    job->reason = "cpu_time";
    job->grace_ms = now + STOP_GRACE_MS;
    ks_kernel_interrupt (self->kernel);
}

void
gw_session_tick (gw_session_t *self, int64_t now)
{
    gw_hooks_session_tick (self->host->launch.hooks, self, now);
    gw_job_t *job = self->running;
    if (job && gw_execution_settle_deadline (job->exec) >= 0) {
        gw_execution_settle (job->exec, now);
        if (gw_execution_finished (job->exec)) {
            jp_log_info ("execution event=no-idle session=%s request=%s", self->id, job->id);
            s_finish_running (self, job->stop_as ? job->stop_as
                                                 : gw_execution_status (job->exec));
            job = self->running;
        }
    }
    if (job && !job->stop_as && job->cpu_check_ms && now >= job->cpu_check_ms)
        s_check_cpu (self, job, now);
    if (job && !job->stop_as && now >= job->deadline_ms) {
        jp_log_info ("execution event=timeout session=%s request=%s", self->id,
                 job->id);
        job->stop_as = GW_EXEC_TIMEOUT;
        job->reason = "timeout";
        job->grace_ms = now + STOP_GRACE_MS;
        ks_kernel_interrupt (self->kernel);
    } else if (job && job->stop_as && now >= job->grace_ms) {
        /* the interrupt did not end it: restart the kernel */
        job->kernel_restarted = true;
        gw_execution_abort (job->exec, job->stop_as,
                            job->stop_as == GW_EXEC_TIMEOUT ? "TimeoutError" : "Cancelled",
                            "the execution did not stop after an interrupt; the kernel was "
                            "restarted and its state is lost");
        s_kill_for_restart (self);
        s_finish_running (self, job->stop_as);
    }
    if (self->restart_pending && self->kernel
        && ks_kernel_state (self->kernel) == KS_KERNEL_DEAD)
        s_restart (self);
}

/* True when a client's message can go to the kernel now (it is used). */
static bool
s_ready_for_client (gw_session_t *self)
{
    if (!self->kernel || ks_kernel_state (self->kernel) != KS_KERNEL_READY)
        return false;
    self->last_used_ms = jp_time_now_ms ();
    return true;
}

int
gw_session_send (gw_session_t *self, jp_channel_t channel, const jp_msg_t *msg)
{
    int rc = s_ready_for_client (self) ? ks_kernel_send (self->kernel, channel, msg) : -EAGAIN;
    if (rc == 0)    /* a Jupyter client's cell starts being recorded */
        gw_session_record_client_msg (self->record, channel, msg);
    return rc;
}

int
gw_session_interrupt (gw_session_t *self)
{
    return s_ready_for_client (self) ? ks_kernel_interrupt (self->kernel) : -EAGAIN;
}

void
gw_session_restart (gw_session_t *self)
{
    gw_job_t *job = self->running;
    self->last_used_ms = jp_time_now_ms ();
    if (!self->kernel || self->restart_pending)
        return;
    if (job) {
        job->kernel_restarted = true;
        if (!job->stop_as)
            job->stop_as = GW_EXEC_CANCELLED;
        if (!job->reason)
            job->reason = "cancelled";
        gw_execution_abort (job->exec, job->stop_as, "KernelRestarted",
                            "the kernel was restarted on request; its state is lost");
    }
    s_kill_for_restart (self);
    if (job)
        s_finish_running (self, job->stop_as);
}

void
gw_session_mount_back (const gw_session_t *self)
{
    gw_session_t *s = (gw_session_t *) self;   /* the folder is the same, now mounted */
    int rc = s->image ? gw_disk_mount (s->image, s->workdir) : 0;
    if (rc)
        jp_log_warn ("session=%s cannot mount %s again: %s", s->id, s->image, strerror (-rc));
    free (s->image);
    s->image = NULL;
}

long long
gw_session_disk_room (gw_session_t *self)
{
    struct statvfs st;
    gw_session_mount_back (self);
    long long disk = statvfs (self->workdir, &st) == 0
                         ? (long long) st.f_bavail * (long long) st.f_frsize : LLONG_MAX;
    if (self->own_file_system < 0)     /* made with the folder; asked once */
        self->own_file_system = gw_disk_is_mount (self->workdir);
    if (self->own_file_system)
        return disk;
    long long quota = gw_config_int (self->host->launch.config, GW_SET_DISK_QUOTA_MB) << 20;
    long long left = quota - gw_fs_tree_size (self->workdir);
    return left < disk ? left : disk;
}
