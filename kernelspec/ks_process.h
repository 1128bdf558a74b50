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

#include <stdbool.h>
#include <sys/resource.h>

#define KS_MAX_RLIMITS 8
#define KS_MAX_CGROUPS 4
#define KS_MAX_BINDS 12
/* The PATH of a clean environment. */
#define KS_CLEAN_PATH "/usr/local/bin:/usr/bin:/bin"
/* The descriptor number a child finds its seccomp program at. */
#define KS_CHILD_SECCOMP_FD 3

/* What the child does between fork and exec, besides the basics (new
 * session and process group, parent-death signal, stdin from /dev/null,
 * stdout and stderr to the log, cwd). Everything here is optional. */
typedef struct {
    int resource;
    rlim_t value;
} ks_rlimit_t;

typedef struct {
    const char *cgroups[KS_MAX_CGROUPS];  /* cgroup folders to join (as root, first) */
    ks_rlimit_t rlimits[KS_MAX_RLIMITS];
    int n_rlimits;
    bool set_user;              /* drop to uid/gid (supplementary groups cleared) */
    uid_t uid;
    gid_t gid;
    /* Bind mounts made as root in a private mount namespace of the child
       before it drops privileges: how a folder or file the new user could
       not reach by its path (a session folder under a mode-700 home) is
       handed to a sandbox. Targets must exist. */
    const char *bind_from[KS_MAX_BINDS];
    const char *bind_to[KS_MAX_BINDS];
    /* A seccomp program to hand to bubblewrap: reopened in the child (its
       own file offset) at KS_CHILD_SECCOMP_FD. */
    bool has_seccomp;
    int seccomp_fd;
    bool unshare_net;           /* a network namespace of its own (as root,
                                   before dropping privileges): no network */
} ks_spawn_extra_t;

/* Starts argv[0] (searched in PATH) with envp in cwd, output appended to
 * log_path, with extra (may be NULL). On success returns 0 and sets *pid_p
 * and *pidfd_p. When the program cannot be started returns a negative
 * errno and writes why into err (for example "cannot run 'nodex': No such
 * file or directory"). */
int ks_process_spawn (char *const argv[], char *const envp[], const char *cwd,
                      const char *log_path, const ks_spawn_extra_t *extra, pid_t *pid_p,
                      int *pidfd_p, char *err, size_t err_len);

/* True when the memory cgroup folder dir saw its limit hit (failcnt > 0). */
bool ks_process_cgroup_oom (const char *dir);

/* Sends sig to the whole process group led by pgid. Returns 0 or -errno. */
int ks_process_signal_group (pid_t pgid, int sig);

/* Sends sig to every descendant of root (not root itself) except those
 * whose command name is skip_comm (a sandbox launcher that would die of
 * the signal and take the sandbox with it). Works across sessions and PID
 * namespaces. Returns how many were signalled. */
int ks_process_signal_tree_except (pid_t root, int sig, const char *skip_comm);

/* Reaps pid if it has ended: returns 1 and sets *status, 0 if it still
 * runs, or -errno. */
int ks_process_reap (pid_t pid, int *status);

/* Describes a wait status: "exited with status 3", "killed by signal 9". */
void ks_process_describe (int status, char *buf, size_t len);

/* Returns a new NULL-terminated environment: this process's environment
 * (with clean, only PATH, LANG, LANGUAGE, TZ, HOME and the LC_ variables of
 * it, so no secret of the gateway's reaches the kernel), then spec_env's
 * entries with ${VAR} expanded (may be NULL), then the "NAME=value" strings
 * of extra (NULL-terminated, may be NULL); later entries replace earlier
 * ones of the same name. Free with ks_strv_free. */
char **ks_process_env (json_t *spec_env, const char *const *extra, bool clean);

/* Returns the last max_bytes of a file as a new string ("" if unreadable). */
char *ks_process_log_tail (const char *path, size_t max_bytes);

#endif
