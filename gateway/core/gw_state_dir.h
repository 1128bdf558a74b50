/* gw_state_dir: the state folder (CODEBOX_STATE_DIR): its default, the
 * lock that lets one server use it at a time, and the sweep of what an
 * earlier run left there, so that no session ever gets an old folder.
 *
 * Threads: the main thread, while the server starts. */
#ifndef GW_STATE_DIR_H
#define GW_STATE_DIR_H

#include <stddef.h>

/* The folder of a state folder that holds `codebox mcp` servers' own
 * folders (gw_state_dir_for_stdio), which another server never takes. */
#define GW_STATE_DIR_STDIO "stdio"

/* The folder of a state folder that holds the tenants' named volumes
 * (gateway/files/gw_volumes.c): kept by the sweep, which only undoes the
 * mounts a crashed run left below it. */
#define GW_STATE_DIR_VOLUMES ".volumes"

/* The default state folder: /var/lib/codebox for root, otherwise
 * $XDG_STATE_HOME/codebox, or ~/.local/state/codebox. Works wherever the
 * server is started from. Returns 0, or -ENAMETOOLONG. */
int gw_state_dir_default (char *buf, size_t len);

/* The default state folder of one `codebox mcp` process: MCP clients start
 * one stdio server per conversation, so each gets its own folder,
 * <default>/stdio/<pid>. Folders there whose server is gone (their lock is
 * free) are removed first. Returns 0, or -ENAMETOOLONG. */
int gw_state_dir_for_stdio (char *buf, size_t len);

/* Takes the lock of the state folder dir (an flock on dir/.lock, which
 * also holds the PID of the server that has it) for the life of the
 * process; *fd_p is the lock's descriptor, to close at exit. When another
 * process holds it, returns -EBUSY and err names that process's PID. */
int gw_state_dir_lock (const char *dir, int *fd_p, char *err, size_t err_len);

/* The lock file `name` in the folder open at dirfd, when the server that
 * made it is gone: a regular file of this user, holding a PID (a lock with
 * none yet is a server that is taking it), that nobody holds. Returns its
 * descriptor, locked (keep it while the folder goes), or -1. Used for
 * gw_state_dir_lock's locks and gw_runtime_dir's. */
int gw_state_dir_take_dead_lock (int dirfd, const char *name);

/* Removes everything an earlier run left in dir (session and tenant
 * folders, warm-pool folders, install folders), each with what is mounted
 * on and below it, except the lock and the folders of `codebox mcp`
 * servers that still run (stdio/<pid>, whose lock is held), the volumes
 * (GW_STATE_DIR_VOLUMES: only their mounts are undone), and kept
 * sessions: the records (.kept/), disk images (.disks/) and the session
 * folders that have a record (unmounted), logging each.
 * Call with the lock held. Returns how many entries it removed. */
int gw_state_dir_sweep (const char *dir);

#endif
