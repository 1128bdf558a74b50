/* fuzz_path: path confinement. Each input is a client path; it is checked
 * with gw_path_check_relative and, when accepted, opened (read-only and
 * with O_CREAT) beneath a scratch session folder whose parent holds a
 * canary file. Properties: never crashes; nothing outside the session
 * folder is ever opened or created (the canary's folder gains no entry and
 * an opened file is always inside). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_path.h"

static char s_root[PATH_MAX], s_session[PATH_MAX];
static int s_session_fd = -1;

/* Entries in the folder above the session (the canary and the session). */
static int
s_count_outside (void)
{
    DIR *d = opendir (s_root);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir (d)))
        n++;
    if (d)
        closedir (d);
    return n;
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    snprintf (s_root, sizeof s_root, "/tmp/codebox-fuzz-path-XXXXXX");
    if (!mkdtemp (s_root))
        abort ();
    snprintf (s_session, sizeof s_session, "%s/session", s_root);
    mkdir (s_session, 0755);
    char canary[PATH_MAX + 16];
    snprintf (canary, sizeof canary, "%s/canary", s_root);
    close (open (canary, O_WRONLY | O_CREAT, 0600));
    /* an escape hatch for the fuzzer to find: a symlink out of the session */
    char link[PATH_MAX + 16];
    snprintf (link, sizeof link, "%s/out", s_session);
    if (symlink ("..", link) < 0)
        abort ();
    s_session_fd = open (s_session, O_RDONLY | O_DIRECTORY);
    return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size > GW_PATH_MAX + 16)
        return 0;
    char path[GW_PATH_MAX + 17];
    memcpy (path, data, size);
    path[size] = '\0';
    if (strlen (path) != size)
        return 0;
    char err[256];
    if (gw_path_check_relative (path, err, sizeof err) != 0)
        return 0;
    int before = s_count_outside ();
    int fd = gw_path_open_beneath (s_session_fd, path, O_RDONLY, 0);
    if (fd >= 0) {
        char proc[64], real[PATH_MAX];
        snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
        ssize_t n = readlink (proc, real, sizeof real - 1);
        if (n > 0) {
            real[n] = '\0';
            if (strncmp (real, s_session, strlen (s_session)) != 0)
                abort ();   /* opened something outside the session */
        }
        close (fd);
    }
    fd = gw_path_open_beneath (s_session_fd, path, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0)
        close (fd);
    if (s_count_outside () != before)
        abort ();           /* created something next to the session */
    return 0;
}
