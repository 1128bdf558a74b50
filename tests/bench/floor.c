/* floor: the C floor for `make bench`: the project's own protocol and
 * kernel libraries talking straight to a kernel, with no gateway around
 * them. Starts the kernelspec given (default python3) exactly as the
 * gateway starts it (the same extra arguments: IPython's history in memory
 * and the figure hook, by the gateway's default settings), so that the
 * gateway's overhead over it is its own, or with a third argument `stock`
 * as Jupyter starts it (what codebox's kernel configuration is worth);
 * runs `1+1` N times (after 10 to warm up) and prints
 * {"p50_ms","p99_ms","n","samples_ms"} as one JSON line. Single thread: it
 * owns the kernel. Usage: bench-floor [N [KERNELSPEC [stock]]]; or
 * `bench-floor --kernel-args [KERNELSPEC]` prints the arguments the gateway
 * adds to that kernel's argv as a JSON array (bench_websocket.py gives them
 * to kernel_gateway's kernel). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <zmq.h>

#include "gw_config.h"
#include "gw_execution.h"
#include "gw_ipykernel.h"
#include "ks_search.h"

static gw_execution_t *s_exec;

static void
s_on_msg (ks_kernel_t *kernel, jp_channel_t channel, jp_msg_t **msg_p, void *arg)
{
    (void) kernel;
    (void) arg;
    if (s_exec)
        gw_execution_feed (s_exec, channel, *msg_p);
}

static bool
s_ready (void *arg)
{
    return ks_kernel_state (arg) == KS_KERNEL_READY;
}

static bool
s_done (void *arg)
{
    (void) arg;
    return gw_execution_finished (s_exec);
}

static int
s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* Prints gw_ipykernel_argv for the kernelspec name, by the gateway's
 * default settings, as a JSON array. */
static int
s_print_kernel_args (const char *name)
{
    char err[512];
    ks_spec_t *spec = ks_search_find (NULL, name, err, sizeof err);
    gw_config_t *config = gw_config_new ();
    json_t *args = json_array ();
    int rc = 1;
    if (!spec || !config || !args)
        fprintf (stderr, "floor: %s\n", spec ? "out of memory" : err);
    else {
        const char *const *extra = gw_ipykernel_argv (spec, config);
        for (size_t i = 0; extra && extra[i]; i++)
            json_array_append_new (args, json_string (extra[i]));
        json_dumpf (args, stdout, JSON_COMPACT);
        printf ("\n");
        rc = 0;
    }
    json_decref (args);
    gw_config_destroy (&config);
    ks_spec_destroy (&spec);
    return rc;
}

int
main (int argc, char **argv)
{
    if (argc > 1 && strcmp (argv[1], "--kernel-args") == 0)
        return s_print_kernel_args (argc > 2 ? argv[2] : "python3");
    int n = argc > 1 ? atoi (argv[1]) : 200;
    const char *name = argc > 2 ? argv[2] : "python3";
    bool stock = argc > 3 && strcmp (argv[3], "stock") == 0;
    char err[512], runtime[] = "/tmp/codebox-floor-XXXXXX";
    ks_spec_t *spec = ks_search_find (NULL, name, err, sizeof err);
    if (!spec || !mkdtemp (runtime)) {
        fprintf (stderr, "floor: %s\n", spec ? "mkdtemp failed" : err);
        return 1;
    }
    void *ctx = zmq_ctx_new ();
    gw_config_t *config = gw_config_new ();    /* the gateway's defaults */
    ks_kernel_options_t options = {.runtime_dir = runtime,
        .extra_argv = config && !stock ? gw_ipykernel_argv (spec, config) : NULL};
    ks_kernel_t *kernel = ks_kernel_new (ctx, spec, &options);
    ks_kernel_set_handlers (kernel, s_on_msg, NULL, NULL);
    if (ks_kernel_start (kernel) || !ks_kernel_run_until (kernel, s_ready, kernel, 60000)) {
        fprintf (stderr, "floor: %s\n", ks_kernel_error (kernel));
        return 1;
    }
    double *ms = calloc ((size_t) n, sizeof *ms);
    for (int i = -10; i < n; i++) {
        s_exec = gw_execution_new ("1+1", 0);
        struct timespec a, b;
        clock_gettime (CLOCK_MONOTONIC, &a);
        gw_execution_start (s_exec, kernel);
        ks_kernel_run_until (kernel, s_done, NULL, 30000);
        clock_gettime (CLOCK_MONOTONIC, &b);
        if (i >= 0)
            ms[i] = (double) (b.tv_sec - a.tv_sec) * 1e3 + (double) (b.tv_nsec - a.tv_nsec) / 1e6;
        gw_execution_destroy (&s_exec);
    }
    qsort (ms, (size_t) n, sizeof *ms, s_cmp);
    printf ("{\"p50_ms\": %.4f, \"p99_ms\": %.4f, \"n\": %d, \"samples_ms\": [", ms[n / 2],
            ms[n * 99 / 100], n);
    for (int i = 0; i < n; i++)
        printf ("%s%.4f", i ? ", " : "", ms[i]);
    printf ("]}\n");
    free (ms);
    ks_kernel_destroy (&kernel);
    ks_spec_destroy (&spec);
    gw_config_destroy (&config);
    rmdir (runtime);
    zmq_ctx_term (ctx);
    return 0;
}
