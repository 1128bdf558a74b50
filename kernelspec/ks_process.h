/* ks_process: starting and ending kernel processes. A kernel runs in its
 * own session and process group, gets SIGKILL when the thread that started
 * it dies (PR_SET_PDEATHSIG), writes stdout and stderr to a log file, and is
 * watched through a pidfd so an event loop learns of its exit without
 * polling. Called from the thread that owns the kernel; the child between
 * fork and exec only makes async-signal-safe calls. */
#ifndef KS_PROCESS_H
#define KS_PROCESS_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

/* Starts argv[0] (searched in PATH) with envp in cwd, output appended to
 * log_path. On success returns 0 and sets *pid_p and *pidfd_p. When the
 * program cannot be started returns a negative errno and writes why into
 * err (for example "cannot run 'nodex': No such file or directory"). */
int ks_process_spawn (char *const argv[], char *const envp[], const char *cwd,
                      const char *log_path, pid_t *pid_p, int *pidfd_p,
                      char *err, size_t err_len);

/* Sends sig to the whole process group led by pgid. Returns 0 or -errno. */
int ks_process_signal_group (pid_t pgid, int sig);

/* Reaps pid if it has ended: returns 1 and sets *status, 0 if it still
 * runs, or -errno. */
int ks_process_reap (pid_t pid, int *status);

/* Describes a wait status: "exited with status 3", "killed by signal 9". */
void ks_process_describe (int status, char *buf, size_t len);

/* Returns a new NULL-terminated environment: this process's environment,
 * then spec_env's entries with ${VAR} expanded (may be NULL), then the
 * "NAME=value" strings of extra (NULL-terminated, may be NULL); later
 * entries replace earlier ones of the same name. Free with ks_strv_free. */
char **ks_process_env (json_t *spec_env, const char *const *extra);

/* Returns the last max_bytes of a file as a new string ("" if unreadable). */
char *ks_process_log_tail (const char *path, size_t max_bytes);

#endif
