/* gw_packages: installing packages into a session, for install_package
 * (MCP) and "dependencies" on POST /sessions (REST, gw_packages_rest).
 *
 * Python kernels get pip into the session's own .packages folder, which
 * their sys.path holds; JavaScript kernels get npm into the session's
 * node_modules. One session's packages are never seen by another, and the
 * system is never touched. What may be installed is gw_package_policy's
 * call (CODEBOX_PACKAGE_ALLOW / _DENY); where packages come from is
 * CODEBOX_PIP_INDEX_URL, CODEBOX_PIP_FIND_LINKS and CODEBOX_NPM_REGISTRY;
 * the whole install is bounded by the session's execution timeout.
 *
 * An install runs pip or npm on a worker thread (gw_package_installer),
 * then queues a silent setup snippet in the session's kernel (sys.path and
 * importlib's caches for Python, module.paths for JavaScript), and answers
 * only when that has run: a later execution can import what was installed.
 * Installs into one session run one at a time, in order.
 *
 * The snippet is an ordinary job of the session, made when the install
 * starts; until it is queued, a private long poll waits on it. Through
 * that long poll the gateway's shutdown (which answers every long poll
 * before the HTTP server stops) reaches a running install: the installer
 * is stopped and the client answered while its connection still exists.
 * Once the snippet is queued, the job's end (or the session's) answers.
 *
 * Kernels are also started with PYTHONPATH and NODE_PATH naming those
 * folders (a kernel_env session hook, added by gw_packages_new), so a
 * restarted kernel keeps them. A server's installs are one object
 * (gw_packages_t), made by the program's features and reached through
 * gw_server_packages.
 *
 * Threads: the loop thread, except the installers' worker threads. */
#ifndef GW_PACKAGES_H
#define GW_PACKAGES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "gw_error.h"
#include "gw_request.h"

typedef struct gw_server gw_server_t;
typedef struct gw_session gw_session_t;
typedef struct gw_packages gw_packages_t;

/* The installs of server; adds its kernel_env hook. NULL when out of
 * memory. */
gw_packages_t *gw_packages_new (gw_server_t *server);

/* Removes the hook and frees (after gw_server_run returned: its shutdown
 * answered every install). */
void gw_packages_destroy (gw_packages_t **self_p);

/* Gets an install's result (a new reference, the callee's) in the loop
 * thread:
 *   {"session_id", "language", "location",      where the packages went
 *    "installed": [{"name", "version", "requested"}...],
 *    "refused": [{"requirement", "rule", "reason"}...],   at resolution
 *    "dropped"?: [...],         npm: recorded dependencies no longer allowed
 *    "error"?: {"code", "message"}}
 * with error code "refused", "not_found", "index_unreachable", "timeout",
 * "cancelled", "install_failed", "kernel" (installed, but the kernel
 * could not take them up), "session_ended" or "shutting_down". */
typedef void (gw_packages_done_fn) (json_t *result, void *arg);

/* Judges requirements (an array of strings, or one string) for session's
 * kernel under the configured policy. Returns 0 with *allowed_p (new:
 * [{"requirement", "name", "install"}...]) and *refused_p (new:
 * [{"requirement", "rule", "reason"}...]); or -1 with *e and a sentence in
 * err (a kernel without an installer, not a list of strings, too many, a
 * malformed policy setting). */
int gw_packages_check (gw_packages_t *self, const gw_session_t *session, json_t *requirements,
                       json_t **allowed_p, json_t **refused_p, gw_error_t *e, char *err,
                       size_t err_len);

/* Installs allowed (from gw_packages_check; borrowed, not empty) into
 * session within timeout_s seconds. done(result, arg) is called exactly
 * once, later, in the loop thread. Returns 0, or a negative errno (then
 * done is not called). */
int gw_packages_install (gw_packages_t *self, gw_session_t *session, json_t *allowed,
                         long timeout_s, gw_packages_done_fn *done, void *arg);

/* Stops the install started with arg if pip or npm has not finished yet
 * (its processes are killed; done still comes, with the error
 * "cancelled"). Nothing happens otherwise. */
void gw_packages_cancel (gw_packages_t *self, void *arg);

#endif
