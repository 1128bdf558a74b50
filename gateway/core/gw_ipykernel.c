/* gw_ipykernel: how codebox starts ipykernel kernels: two settings and
 * the startup code of gw_ipykernel_startup.py (embedded by the Makefile,
 * run by IPKernelApp.exec_lines in a namespace of its own, so nothing is
 * left in the user's). What each part is worth per `1+1` cell on a 2-CPU
 * VM is in docs/PERFORMANCE.md.
 *  - IPython's input history in memory (its SQLite file costs about 1 ms
 *    a cell) unless the operator keeps it on disk (CODEBOX_KERNEL_HISTORY).
 *  - No `Kernel._execute_sleep`: ipykernel sleeps 0.5 ms before each
 *    execute_reply, a mitigation of old for clients that stop reading at
 *    the reply; codebox and Jupyter's clients wait for the idle on iopub,
 *    which follows all output.
 *  - plt.show() under a backend that cannot show (Agg, which agents select
 *    out of habit) displays each open figure once as a PNG and closes it.
 *  - A flush of sys.stdout or sys.stderr with nothing to send returns at
 *    once (ipykernel's hands two callbacks to its iopub thread and waits,
 *    several times a cell), unless a flush is under way in that thread.
 *  - An iopub message of any thread but the iopub thread goes out at once
 *    when nothing waits in that thread's queue (ipykernel queues every one
 *    and wakes the thread, which then waits for the GIL); a lock keeps the
 *    socket to one thread at a time and the order of what was queued.
 *  - What a shell command, a child or C code writes to fd 1 or 2 keeps its
 *    place: ipykernel's pipe reader can lose the race with the main
 *    thread's next print (and with the cell's last flush, so the text
 *    lands in the next cell), and a UTF-8 character split across two of
 *    its reads ends the capture; here every write and flush first takes
 *    what waits in the pipe, under the lock its reader holds. A forked
 *    child (multiprocessing) writes its prints to the fd as well:
 *    ipykernel sends each of them over a new ZeroMQ connection, and the
 *    parent takes those in turn, not in order.
 *  - No round trip through the control thread before each shell request
 *    (ipykernel 6.30 and 7 dropped it too).
 *  - After a failed cell, stop_on_error aborts the requests that waited,
 *    not one sent on seeing the cell's "idle" (its end of aborting was
 *    queued a loop turn later, behind such a request now and then).
 *  - IPython's display formatters made at start (a warm kernel's first
 *    cell made them, about 13 ms).
 *  - Less Python per cell: the kernel's logger at its handlers' level (it
 *    built four debug records a cell that no handler wrote), whether
 *    do_execute and run_cell take a cell_id asked once, the request's
 *    date read by datetime.fromisoformat instead of dateutil, and
 *    IPython's formatters called without the decorator package binding
 *    each call's arguments.
 * Each patch checks the shape of what it patches and leaves ipykernel's
 * code alone where it differs (other versions).
 *
 * Threads: any (the arguments are made once). */
#include "gw_ipykernel.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_base64.h"

/* gw_ipykernel_startup.py, made a C string by the Makefile */
static const char S_STARTUP_PY[] =
#include "gw_ipykernel_startup.inc"
    ;

/* {history in memory, no sleep, exec_lines, NULL}: from [0] with the
   history in memory, from [1] with it on disk */
static char *s_argv[4];
static pthread_once_t s_once = PTHREAD_ONCE_INIT;

/* The exec_lines argument: the startup code, base64-encoded so that no
 * quoting of the command line can change it, run in a namespace of its
 * own. */
static void
s_make_argv (void)
{
    char *b64 = gw_base64_encode ((const uint8_t *) S_STARTUP_PY, sizeof S_STARTUP_PY - 1);
    /* IPython's on-disk history (SQLite) costs about 1 ms per cell */
    s_argv[0] = (char *) "--HistoryManager.hist_file=:memory:";
    s_argv[1] = (char *) "--Kernel._execute_sleep=0";
    if (b64 && asprintf (&s_argv[2], "--IPKernelApp.exec_lines=exec(__import__('base64')"
                         ".b64decode('%s').decode(), {'__name__': '__codebox__'})", b64) < 0)
        s_argv[2] = NULL;
    free (b64);
}

const char *const *
gw_ipykernel_argv (const ks_spec_t *spec, const gw_config_t *config)
{
    bool ipykernel = false;
    for (size_t i = 0; i < spec->argc && !ipykernel; i++)
        ipykernel = strstr (spec->argv[i], "ipykernel") != NULL;
    if (!ipykernel)
        return NULL;
    pthread_once (&s_once, s_make_argv);
    if (!s_argv[2])
        return NULL;
    bool on_disk = strcmp (gw_config_str (config, GW_SET_KERNEL_HISTORY), "disk") == 0;
    return (const char *const *) s_argv + (on_disk ? 1 : 0);
}
