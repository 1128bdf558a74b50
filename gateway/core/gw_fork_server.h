/* gw_fork_server: the fork server of sandboxed Python kernels
 * (CODEBOX_FORK_SERVER=on): one root process per gateway, running
 * gw_fork_server.py, that has imported what every kernel loads and forks
 * each kernel into the sandbox bubblewrap made for it, so that kernels
 * share those pages (docs/PERFORMANCE.md, docs/SECURITY.md). The sandbox
 * runs `codebox-sidecar kernel-seat` (gw_cmd_kernel_seat.c), which asks the server
 * on its socket; gw_sandbox.c binds the socket and adds the seat.
 *
 * Threads: the thread that launches kernels (the loop thread); the server
 * is a process of its own. */
#ifndef GW_FORK_SERVER_H
#define GW_FORK_SERVER_H

#include <sys/types.h>

typedef struct gw_fork_server gw_fork_server_t;

/* Where the socket is bound inside every sandbox. */
#define GW_FORK_SERVER_SEAT_SOCKET "/run/codebox-fork.sock"

/* A server in folder (made here, mode 0711: the kernels' user passes
 * through to the socket, lists nothing) for kernels of user uid, its
 * filter the seccomp program in seccomp_fd (borrowed), with names the
 * modules it imports (CODEBOX_POOL_PRELOAD's list). Not started yet.
 * Returns NULL when the folder cannot be made (err says why) or on OOM. */
gw_fork_server_t *gw_fork_server_new (const char *folder, const char *names, uid_t uid,
                                      gid_t gid, int seccomp_fd, char *err, size_t err_len);

/* Ends the server (its kernels live on, each in its sandbox) and removes
 * its folder. */
void gw_fork_server_destroy (gw_fork_server_t **self_p);

/* The socket's host path when a server of this Python runs, starting
 * one if none does (at most one start per GW_FORK_SERVER_RETRY_S); NULL
 * when python is not the server's (the first Python asked for is) or it
 * cannot start now: the kernel is then started as usual. */
const char *gw_fork_server_socket (gw_fork_server_t *self, const char *python);

#endif
