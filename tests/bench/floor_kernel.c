/* floor_kernel: see floor_kernel.h. Runs in the bench's one thread. */
#include "floor_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "gw_config.h"
#include "gw_execution.h"
#include "gw_ipykernel.h"
#include "ks_search.h"

struct _floor_kernel_t {
    ks_spec_t *spec;
    gw_config_t *config;
    ks_kernel_t *kernel;
    gw_execution_t *exec;       /* the execution under way, or NULL */
    char runtime[32];
};

static void
s_on_msg (ks_kernel_t *kernel, jp_channel_t channel, jp_msg_t **msg_p, void *arg)
{
    (void) kernel;
    floor_kernel_t *self = arg;
    if (self->exec)
        gw_execution_feed (self->exec, channel, *msg_p);
}

static bool
s_ready (void *arg)
{
    return ks_kernel_state (arg) == KS_KERNEL_READY;
}

static bool
s_done (void *arg)
{
    return gw_execution_finished (arg);
}

floor_kernel_t *
floor_kernel_new (const char *name, bool stock, char *err, size_t err_size)
{
    floor_kernel_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_size, "out of memory");
        return NULL;
    }
    snprintf (self->runtime, sizeof self->runtime, "/tmp/codebox-floor-XXXXXX");
    self->spec = ks_search_find (NULL, name, err, err_size);
    if (!self->spec || !mkdtemp (self->runtime)) {
        if (self->spec)
            snprintf (err, err_size, "mkdtemp failed");
        self->runtime[0] = '\0';
        floor_kernel_destroy (&self);
        return NULL;
    }
    self->config = gw_config_new ();    /* the gateway's defaults */
    ks_kernel_options_t options = {.runtime_dir = self->runtime,
        .extra_argv = self->config && !stock ? gw_ipykernel_argv (self->spec, self->config)
                                             : NULL};
    self->kernel = ks_kernel_new (self->spec, &options);
    if (self->kernel)
        ks_kernel_set_handlers (self->kernel, s_on_msg, NULL, self);
    if (!self->kernel || ks_kernel_start (self->kernel)
        || !ks_kernel_run_until (self->kernel, s_ready, self->kernel, 60000)) {
        snprintf (err, err_size, "%s",
                  self->kernel ? ks_kernel_error (self->kernel) : "out of memory");
        floor_kernel_destroy (&self);
        return NULL;
    }
    return self;
}

double
floor_kernel_exec_ms (floor_kernel_t *self, const char *code)
{
    self->exec = gw_execution_new (code, 0);
    if (!self->exec)
        return -1;
    struct timespec a, b;
    clock_gettime (CLOCK_MONOTONIC, &a);
    gw_execution_start (self->exec, self->kernel);
    bool done = ks_kernel_run_until (self->kernel, s_done, self->exec, 30000);
    clock_gettime (CLOCK_MONOTONIC, &b);
    gw_execution_destroy (&self->exec);
    if (!done)
        return -1;
    return (double) (b.tv_sec - a.tv_sec) * 1e3 + (double) (b.tv_nsec - a.tv_nsec) / 1e6;
}

void
floor_kernel_destroy (floor_kernel_t **self_p)
{
    floor_kernel_t *self = *self_p;
    if (!self)
        return;
    ks_kernel_destroy (&self->kernel);
    ks_spec_destroy (&self->spec);
    gw_config_destroy (&self->config);
    if (self->runtime[0])
        rmdir (self->runtime);
    free (self);
    *self_p = NULL;
}
