/* sidecar_main: `codebox-sidecar`, the small program beside each sandboxed
 * kernel: its seat, relay, network bridge and proxy (the same commands as
 * `codebox kernel-*`, gw_cmd_kernel_*.c). One of these runs per kernel, so
 * it maps as little as it can: the Makefile links jansson and libcrypto in,
 * not position independent, and none of the commands uses libzmq, so libc
 * is its only shared library. A shared library's relocations are pages
 * each process writes for itself (the full `codebox` loads about a hundred
 * libraries, libvips' among them: 4-5 MiB a process; libcrypto alone 400
 * KiB); linked in, they are the file's pages, shared by every copy.
 * gw_sandbox.c uses it when it is beside `codebox`, else `codebox` itself.
 *
 * Threads: one (each command's). */
#include <stdio.h>
#include <string.h>

#include "gw_cli.h"

int
main (int argc, char **argv)
{
    const char *command = argc > 1 ? argv[1] : "";
    int rc;
    if (gw_cmd_kernel_side (command, argc - 1, argv + 1, &rc))
        return rc;
    if (strcmp (command, "--version") == 0) {
        printf ("codebox-sidecar\n");
        return GW_EXIT_OK;
    }
    fprintf (stderr, "usage: codebox-sidecar kernel-seat|kernel-relay|kernel-proxy|"
             "kernel-net-bridge ARGS...\n(the gateway runs it beside each kernel)\n");
    return GW_EXIT_USAGE;
}
