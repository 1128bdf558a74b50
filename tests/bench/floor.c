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

#include <jansson.h>

#include "floor_kernel.h"
#include "gw_config.h"
#include "gw_ipykernel.h"
#include "ks_search.h"

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
    if (n < 1)
        n = 1;
    const char *name = argc > 2 ? argv[2] : "python3";
    bool stock = argc > 3 && strcmp (argv[3], "stock") == 0;
    char err[512];
    floor_kernel_t *floor = floor_kernel_new (name, stock, err, sizeof err);
    if (!floor) {
        fprintf (stderr, "floor: %s\n", err);
        return 1;
    }
    double *ms = calloc ((size_t) n, sizeof *ms);
    for (int i = -10; ms && i < n; i++) {
        double one = floor_kernel_exec_ms (floor, "1+1");
        if (one < 0) {
            fprintf (stderr, "floor: an execution did not finish in 30 s\n");
            return 1;
        }
        if (i >= 0)
            ms[i] = one;
    }
    if (!ms)
        return 1;
    qsort (ms, (size_t) n, sizeof *ms, s_cmp);
    printf ("{\"p50_ms\": %.4f, \"p99_ms\": %.4f, \"n\": %d, \"samples_ms\": [", ms[n / 2],
            ms[n * 99 / 100], n);
    for (int i = 0; i < n; i++)
        printf ("%s%.4f", i ? ", " : "", ms[i]);
    printf ("]}\n");
    free (ms);
    floor_kernel_destroy (&floor);
    return 0;
}
