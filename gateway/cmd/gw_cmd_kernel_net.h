/* gw_cmd_kernel_net: the kernels' network proxy (CODEBOX_NETWORK=on) and
 * the bridge that reaches it from inside a sandbox. See
 * gw_cmd_kernel_net.c and gw_cmd_kernel_net_bridge.c.
 *
 * Threads: each runs on the main thread of its own process. */
#ifndef GW_CMD_KERNEL_NET_H
#define GW_CMD_KERNEL_NET_H

#include <stdbool.h>

/* Serves the proxy on a Unix socket at socket_path (made here, the
 * caller's user only) until the process is killed; forks a process per
 * connection. Sets a parent-death signal: call in a child of the relay.
 * Returns -1 when it cannot listen. */
int gw_kernel_net_serve (const char *socket_path, bool allow_private);

/* `codebox kernel-net-bridge SOCKET PORT -- ARGV...`: inside a kernel's
 * sandbox, listens on 127.0.0.1:PORT and [::1]:PORT, passes each
 * connection to the Unix socket SOCKET, and runs ARGV (the kernel) as its
 * child; exits with the kernel's status. */
int gw_cmd_kernel_net_bridge (int argc, char **argv);

#endif
