/* gw_sandbox_etc: which /etc entries a sandbox shows: those installed
 * software under /usr links to, never the system's secrets.
 *
 * Threads: the main thread, once, when the sandbox is made. */
#include "gw_sandbox_internal.h"

#include <fts.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* /etc entries never shown, whatever links to them: secrets and the
 * system's own configuration of users, logins and ODBC data sources. */
static bool
s_etc_secret (const char *name)
{
    static const char *const secret[] = {
        "shadow", "gshadow", "shadow-", "gshadow-", "sudoers", "sudoers.d", "ssh", "odbc.ini",
        "odbcinst.ini", "environment", "security", "pam.d", "credstore", "credstore.encrypted",
        "krb5.keytab", "codebox", "machine-id", "subuid", "subgid", "cron.d", "crontab",
        "docker", "containers", "netrc", "wpa_supplicant", "NetworkManager", "ipsec.secrets",
        "ppp", "openvpn", "wireguard", "letsencrypt", "mysql", "postgresql", "redis",
    };
    for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++)
        if (strcmp (name, secret[i]) == 0)
            return true;
    return name[0] == '.';
}

/* Finds the /etc entries that symlinks under /usr point into (documents,
 * manuals and headers left out), once: kernels of installed software
 * (IRkernel's R reads /usr/lib/R/etc/ldpaths, a link to /etc/R) need them
 * to start. Secrets are never among them (s_etc_secret). */
void
gw_sandbox_find_etc_links (gw_sandbox_t *self)
{
    char *roots[] = {"/usr", NULL};
    FTS *fts = fts_open (roots, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
    if (!fts)
        return;
    FTSENT *e;
    long visits = 0;
    while ((e = fts_read (fts)) && ++visits < 2000000) {
        if (e->fts_info == FTS_D
            && (strcmp (e->fts_name, "doc") == 0 || strcmp (e->fts_name, "man") == 0
                || strcmp (e->fts_name, "locale") == 0 || strcmp (e->fts_name, "include") == 0
                || strcmp (e->fts_path, "/usr/src") == 0 || strcmp (e->fts_name, "icons") == 0)) {
            fts_set (fts, e, FTS_SKIP);
            continue;
        }
        if (e->fts_info != FTS_SL)
            continue;
        char target[PATH_MAX];
        ssize_t len = readlink (e->fts_accpath, target, sizeof target - 1);
        if (len <= 5)
            continue;
        target[len] = '\0';
        if (strncmp (target, "/etc/", 5) != 0)
            continue;
        char name[48];
        size_t n = strcspn (target + 5, "/");
        if (n == 0 || n >= sizeof name || strstr (target, "/.."))
            continue;
        memcpy (name, target + 5, n);
        name[n] = '\0';
        if (s_etc_secret (name))
            continue;
        bool known = false;
        for (int i = 0; i < self->n_etc_links && !known; i++)
            known = strcmp (self->etc_links[i] + 5, name) == 0;
        if (!known && self->n_etc_links < S_MAX_ETC_LINKS)
            snprintf (self->etc_links[self->n_etc_links++], sizeof self->etc_links[0],
                      "/etc/%s", name);
    }
    fts_close (fts);
}
