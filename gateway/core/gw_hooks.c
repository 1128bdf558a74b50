/* gw_hooks: the features' hooks table and its calls. Threads: the loop
 * thread only. */
#include "gw_hooks.h"

#include <errno.h>
#include <string.h>

#include "gw_job_internal.h"

int
gw_hooks_add (gw_hooks_t *self, const gw_session_hooks_t *hooks, void *arg)
{
    if (self->n == GW_HOOKS_MAX)
        return -ENOSPC;
    self->at[self->n].hooks = hooks;
    self->at[self->n].arg = arg;
    self->n++;
    return 0;
}

void
gw_hooks_remove (gw_hooks_t *self, const gw_session_hooks_t *hooks, void *arg)
{
    for (int i = 0; i < self->n; i++)
        if (self->at[i].hooks == hooks && self->at[i].arg == arg) {
            memmove (&self->at[i], &self->at[i + 1],
                     (size_t) (self->n - i - 1) * sizeof self->at[0]);
            self->n--;
            return;
        }
}

bool
gw_hooks_has (gw_hooks_t *self, const gw_session_hooks_t *hooks, void *arg)
{
    for (int i = 0; i < self->n; i++)
        if (self->at[i].hooks == hooks && self->at[i].arg == arg)
            return true;
    return false;
}

void
gw_hooks_kernel_env (gw_hooks_t *self, const char *visible_workdir, gw_kernel_env_t *env)
{
    for (int i = 0; i < self->n; i++)
        if (self->at[i].hooks->kernel_env)
            self->at[i].hooks->kernel_env (self->at[i].arg, visible_workdir, env);
}

void
gw_hooks_annotate (gw_hooks_t *self, const gw_session_t *session, json_t *artifacts)
{
    for (int i = 0; i < self->n; i++)
        if (self->at[i].hooks->annotate)
            self->at[i].hooks->annotate (self->at[i].arg, session, artifacts);
}

void
gw_hooks_end_job (gw_hooks_t *self, gw_session_t *session, gw_job_t *job,
                   gw_exec_status_t status)
{
    for (int i = 0; i < self->n; i++)
        if (self->at[i].hooks->job_ending
            && self->at[i].hooks->job_ending (self->at[i].arg, session, job, status)) {
            job->held = true;
            return;
        }
    gw_hooks_annotate (self, session, job->new_artifacts);
    gw_job_finish (job, status);
}

int64_t
gw_hooks_session_deadline (gw_hooks_t *self, const gw_session_t *session)
{
    int64_t next = -1;
    for (int i = 0; i < self->n; i++) {
        int64_t d = self->at[i].hooks->deadline
                    ? self->at[i].hooks->deadline (self->at[i].arg, session) : -1;
        if (d >= 0 && (next < 0 || d < next))
            next = d;
    }
    return next;
}

void
gw_hooks_session_tick (gw_hooks_t *self, gw_session_t *session, int64_t now)
{
    for (int i = 0; i < self->n; i++)
        if (self->at[i].hooks->tick)
            self->at[i].hooks->tick (self->at[i].arg, session, now);
}

void
gw_hooks_session_end (gw_hooks_t *self, gw_session_t *session)
{
    for (int i = 0; i < self->n; i++)
        if (self->at[i].hooks->session_end)
            self->at[i].hooks->session_end (self->at[i].arg, session);
}

void
gw_hooks_kernel_msg (gw_hooks_t *self, gw_session_t *session, jp_channel_t channel,
                      const jp_msg_t *msg)
{
    for (int i = 0; i < self->n; i++)
        if (self->at[i].hooks->kernel_msg)
            self->at[i].hooks->kernel_msg (self->at[i].arg, session, channel, msg);
}

void
gw_hooks_kernel_state (gw_hooks_t *self, gw_session_t *session, const char *state)
{
    for (int i = 0; i < self->n; i++)
        if (self->at[i].hooks->kernel_state)
            self->at[i].hooks->kernel_state (self->at[i].arg, session, state);
}

bool
gw_hooks_in_use (gw_hooks_t *self, const gw_session_t *session)
{
    for (int i = 0; i < self->n; i++)
        if (self->at[i].hooks->in_use
            && self->at[i].hooks->in_use (self->at[i].arg, session))
            return true;
    return false;
}
