/* gw_runtime_dir: the server's runtime folder in /tmp (its kernels'
 * connection files and sockets, their relays' folders, the small file
 * systems mounted for each sandboxed kernel), the lock that says its
 * server is alive, and the sweep, at start, of the runtime folders whose
 * server died without removing its own (SIGKILL, the OOM killer, a crash):
 * without it each such death left its folder and its mounts behind for
 * good, since every server makes a new folder.
 *
 * Threads: the main thread, while the server starts and ends. */
#ifndef GW_RUNTIME_DIR_H
#define GW_RUNTIME_DIR_H

#include <stddef.h>

/* Makes PARENT/codebox-XXXXXX (mode 0711: the kernel user may pass through
 * to its own folder, not list) and takes its lock for the life of the
 * process: an flock on a file that holds the server's PID, made under
 * another name and renamed into place once locked, so no sweep ever sees
 * it unlocked. *lock_fd_p is the lock's descriptor (close it after the
 * folder is removed). Returns 0 or -errno with err saying why. */
int gw_runtime_dir_make (const char *parent, char *buf, size_t len, int *lock_fd_p,
                         char *err, size_t err_len);

/* Removes each runtime folder in parent whose server is gone: named
 * codebox-XXXXXX, a folder of this user (not a symlink), with a lock file
 * of this user that holds a PID and that nobody holds. The mounts below it
 * are undone first (deepest first, detached). A folder with no lock (an
 * older codebox, or one being made) is left alone. Returns how many it
 * removed. */
int gw_runtime_dir_sweep (const char *parent);

#endif
