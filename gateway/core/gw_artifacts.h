/* gw_artifacts: a session's artifacts, the files its code writes: those
 * under output/ and the others of the session folder (outside input/,
 * node_modules/ and hidden folders). A snapshot of them (relative path,
 * size, modification time) taken before an execution, the difference
 * after it (new or changed files are that execution's new artifacts), a
 * listing, and MIME types by extension.
 * File system only; any thread, but one snapshot belongs to one thread. */
#ifndef GW_ARTIFACTS_H
#define GW_ARTIFACTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct gw_snapshot gw_snapshot_t;

/* dir is a session folder: leave out input/ and node_modules/ at its top
 * and hidden folders anywhere. */
#define GW_SNAPSHOT_SESSION 1u

/* Walks dir recursively (regular files only; symlinks are not followed;
 * at most 10000 files and 16 levels). A missing dir gives an empty
 * snapshot. NULL on OOM. */
gw_snapshot_t *gw_snapshot_take (const char *dir, unsigned flags);
/* The same, and changes (when not NULL) watches each folder the walk reads,
 * before reading it (gw_changes.h). */
typedef struct gw_changes gw_changes_t;
gw_snapshot_t *gw_snapshot_take_watched (const char *dir, unsigned flags, gw_changes_t *changes);
/* Another holder of the same snapshot (a snapshot never changes once
 * taken); each holder calls gw_snapshot_destroy, the last one frees it. */
gw_snapshot_t *gw_snapshot_ref (gw_snapshot_t *self);
void gw_snapshot_destroy (gw_snapshot_t **self_p);
/* The bytes the snapshot holds (its table and paths, not malloc's
 * overhead); 0 for NULL. */
size_t gw_snapshot_bytes (const gw_snapshot_t *self);
/* True when the walk saw the whole folder: it stopped at no limit. */
bool gw_snapshot_whole (const gw_snapshot_t *self);

/* A new JSON array of the files of after that are not in before or whose
 * size or modification time changed (when before is not whole, a file it
 * lacks counts only if modified since before's walk began), sorted by
 * path, each
 * {"filename","path","extension","size","mime"}, where path is
 * path_prefix + "/" + the relative path and filename the last component. */
json_t *gw_snapshot_diff (const gw_snapshot_t *before, const gw_snapshot_t *after,
                          const char *path_prefix);

/* A new JSON array of every file under dir, in the same shape. */
json_t *gw_artifacts_list (const char *dir, const char *path_prefix, unsigned flags);

/* The MIME type for a file name by its extension (case-insensitive),
 * "application/octet-stream" when unknown. Static string. */
const char *gw_mime_for_path (const char *path);

#endif
