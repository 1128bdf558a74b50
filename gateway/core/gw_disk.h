/* gw_disk: the disk quota as a real limit. When the gateway is root, each
 * session folder is a file system of its own, CODEBOX_DISK_QUOTA_MB big: a
 * sparse ext4 image (no journal, nosuid, nodev, in STATE/.disks/, kept
 * until the folder is removed so that a later server mounts it again) on
 * a loop device that frees itself when the last mount goes. Everything a session writes lands there, the kernel's
 * /tmp (the hidden .tmp folder) and what the gateway writes for it
 * (uploads, downloads, SQL CSVs) alike, and a write past the quota fails
 * there and then with ENOSPC. The image's space is reserved when it is made;
 * where the disk has no room for it, the session gets a plain folder. A
 * warm kernel's folder is moved (MS_MOVE) to the session's name; where the
 * state folder's mount propagates (shared), it first gets a private mount
 * of its own. Mounts a crashed run left under it are undone at start.
 *
 * Threads: the loop thread (and the main thread at start and exit). */
#ifndef GW_DISK_H
#define GW_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* True when session folders get file systems of their own (root, and a
 * trial one worked at gw_disk_setup). */
bool gw_disk_enabled (void);

/* At start, with the state folder's lock held (after gw_state_dir_sweep
 * undid the mounts a crashed run left): makes state_dir a private mount
 * where its mount propagates (keeping what is mounted below), and tries
 * one small file system. keep (or NULL) is a folder below state_dir whose
 * mounts are not this server's (running stdio servers'): teardown leaves
 * them. Quietly leaves quotas off when not root or when loop devices or
 * mkfs.ext4 are missing (why says so). */
void gw_disk_setup (const char *state_dir, const char *keep, char *why, size_t why_len);

/* At exit: undoes the mounts below the state folder but those below
 * gw_disk_setup's keep, and the state folder's own mount unless something
 * below keep is still mounted on it (a later server finds it private). */
void gw_disk_teardown (const char *state_dir);

/* Makes folder (which must not exist) a file system of quota_mb MiB owned
 * by uid:gid, or a plain folder when quotas are off. Returns 0 or -errno
 * with err set. */
int gw_disk_make (const char *folder, long quota_mb, uid_t uid, gid_t gid, char *err,
                  size_t err_len);

/* A session folder: gw_disk_make, then input/, output/ and the kernel's
 * /tmp, .tmp/, all owned by uid:gid. Returns 0 or -errno with err set
 * (nothing is left behind). */
int gw_disk_make_session (const char *folder, long quota_mb, uid_t uid, gid_t gid, char *err,
                          size_t err_len);

/* Moves the folder `from` (made by gw_disk_make) to `to` (which must not
 * exist): a rename, or a mount move. After a mount move `from` is left as
 * an empty folder for the caller to rmdir when it suits: an rmdir of a
 * former mount point waits for the mount namespace's lock (7 ms measured
 * while other mounts came and went). Returns 0 or -errno. */
int gw_disk_move (const char *from, const char *to);

/* The image file (in STATE/.disks/) of folder's file system into buf, or
 * -ENOENT (a plain folder, or quotas off). Images are kept while their
 * folder lives, so that a later server mounts them again. */
int gw_disk_image_of (const char *folder, char *buf, size_t len);

/* Mounts image (gw_disk_image_of's) on folder (made if missing; nothing
 * when it is a mount already). Returns 0 or -errno. */
int gw_disk_mount (const char *image, const char *folder);

/* A kept session's file system (paused, or at the server's stop) gives
 * back the disk space of the blocks its files freed (FITRIM: the loop
 * device punches holes in the image; mkfs.ext4 left it sparse already).
 * Nothing on a plain folder. */
void gw_disk_trim (const char *folder);

/* Removes a folder made by gw_disk_make, its image and everything in it. */
int gw_disk_remove (const char *folder);

/* Undoes every mount below dir (not dir's own), deepest first. Returns
 * how many. */
int gw_disk_unmount_below (const char *dir);

/* The same, leaving keep and what is below it (NULL: nothing kept). */
int gw_disk_unmount_below_but (const char *dir, const char *keep);

/* Images kept across runs (named volumes): makes image (which must not
 * exist), size_mb MiB reserved, an ext4 file system owned by uid:gid at
 * its root. Returns 0 or -errno with err set (-ENOSPC: the disk has no
 * room for it; nothing is left behind). */
int gw_disk_image_make (const char *image, long size_mb, uid_t uid, gid_t gid, char *err,
                        size_t err_len);

/* Mounts image (nosuid, nodev) on the empty folder `folder` through a loop
 * device that frees itself at the unmount; the image stays. Returns 0 or
 * -errno with err set. */
int gw_disk_image_mount (const char *image, const char *folder, char *err, size_t err_len);

/* True when folder is a mount point (a file system of its own). */
bool gw_disk_is_mount (const char *folder);

#endif
