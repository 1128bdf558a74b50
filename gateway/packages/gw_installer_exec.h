/* gw_installer_exec: what pip's and npm's runs share. An argument vector
 * of owned strings; the bubblewrap arguments an installer runs under
 * (system folders read-only, the install folder as /tmp, the session
 * folder as /session when asked, nothing else); running one command as the
 * kernel user, bounded by the job's deadline and cancel descriptor; the
 * install folder's files and logs; and the {"error":{code,message}} a run
 * ends with. Internal to the installer (gw_package_installer,
 * gw_installer_pip, gw_installer_npm).
 *
 * Threads: a gw_packages worker thread; it reads only its job. */
#ifndef GW_INSTALLER_EXEC_H
#define GW_INSTALLER_EXEC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "gw_installer_job.h"

#define GW_INSTALLER_MAX_ARGS 200

/* The characters of a package name and version the index may return. */
#define GW_PKG_NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"
#define GW_PKG_VERSION_CHARS GW_PKG_NAME_CHARS "!+"

/* An argument vector of owned strings, NULL-ended. */
typedef struct {
    char *v[GW_INSTALLER_MAX_ARGS];
    int n;
    bool broken;                /* out of room or memory */
} gw_installer_argv_t;

/* Appends a copy of s (or the formatted text); on no room or memory the
 * vector is marked broken and must not run. */
void gw_installer_arg (gw_installer_argv_t *a, const char *s);
void gw_installer_argf (gw_installer_argv_t *a, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* Frees the strings; the vector can be filled again. */
void gw_installer_args_free (gw_installer_argv_t *a);

/* The install folder and the session folder as the installer sees them
 * ("/tmp" and "/session" under bubblewrap). */
const char *gw_installer_tmp (const gw_installer_t *job);
const char *gw_installer_session (const gw_installer_t *job);

/* Sets result's "error" to {"code": code, "message": the formatted text}. */
void gw_installer_error (json_t *result, const char *code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Writes a file into the install folder, owned by the kernel user. 0 or a
 * negative errno. */
int gw_installer_write_file (const gw_installer_t *job, const char *rel, const char *data,
                             size_t len);
/* Reads a JSON file of the install folder (new), or NULL. */
json_t *gw_installer_load_json (const gw_installer_t *job, const char *rel);

/* The last lines of a log of the install folder that start with prefix
 * (at most max, each cut at 300 bytes), joined by "; ". */
void gw_installer_log_lines (const gw_installer_t *job, const char *rel, const char *prefix,
                             int max, char *out, size_t out_len);
/* The last non-empty line of a log of the install folder (cut at 300
 * bytes), for a failure that printed no error line of its own. */
void gw_installer_log_last (const gw_installer_t *job, const char *rel, char *out,
                            size_t out_len);
/* True when the log of the install folder mentions any of words
 * (NULL-ended). */
bool gw_installer_log_mentions (const gw_installer_t *job, const char *rel,
                                const char *const *words);

/* Appends bubblewrap's arguments, ending with "--": the session folder as
 * /session when session, the network only when network. */
void gw_installer_sandbox_args (const gw_installer_t *job, gw_installer_argv_t *a,
                                bool session, bool network);

/* Runs argv as the kernel user with output appended to the install
 * folder's log. Returns 0 (exit status 0), 1 (another exit), -ETIMEDOUT,
 * -ECANCELED, or another negative errno when it could not start (err says
 * why). */
int gw_installer_exec (const gw_installer_t *job, char *const argv[], const char *log,
                       char *err, size_t err_len);

/* True (with result's error set) when the run must stop before the next
 * step: cancelled or past its deadline. */
bool gw_installer_stopped (const gw_installer_t *job, json_t *result);

/* True (with result's error set) when rc, gw_installer_exec's answer for
 * the tool named what, says the run did not finish: stopped or not
 * startable. False for 0 and 1. */
bool gw_installer_run_failed (const gw_installer_t *job, json_t *result, int rc,
                              const char *what, const char *err);

/* True when s is non-empty and made of the characters of allowed only. */
bool gw_installer_only (const char *s, const char *allowed);

#endif
