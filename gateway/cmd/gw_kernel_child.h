/* gw_kernel_child: what the commands beside a kernel share (the relay,
 * the kernel-proxy, the network bridge, the seat): listening on the
 * gateway's side of a kernel's connection, starting the kernel as a child,
 * and exiting as it did.
 *
 * Threads: the caller's (each command has one). */
#ifndef GW_KERNEL_CHILD_H
#define GW_KERNEL_CHILD_H

#include <sys/types.h>
#include <sys/un.h>

#include "jp_connection.h"

/* Listens on the Unix socket of each channel of conn (ipc: the gateway's
 * side, in its runtime folder), nonblocking and close-on-exec, a stale
 * socket file replaced; the listeners go into fds and their paths into
 * paths. Returns 0, or -1 having said why on stderr as who ("kernel-relay"). */
int gw_kernel_listen (const jp_connection_t *conn, const char *who, int fds[JP_CHANNEL_COUNT],
                      char paths[JP_CHANNEL_COUNT][sizeof ((struct sockaddr_un *) 0)->sun_path]);

/* Starts argv as a child (its failure to run said on stderr as who; the
 * child then exits 127). Returns its pid, or -1 when fork failed. */
pid_t gw_kernel_start (char **argv, const char *who);

/* What a process standing for the kernel exits with: the kernel's exit
 * code, or its signal raised again on itself (unblocked, default action). */
int gw_kernel_exit_as (int status);

#endif
