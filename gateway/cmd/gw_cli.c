/* gw_cli: settings loading, the start-up check of the settings that name
 * things, and process setup shared by the subcommands. Main thread only. */
#include "gw_cli.h"

#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jp_log.h"
#include "gw_mcp_tool_sets.h"
#include "ks_search.h"

static void
s_log_alias (const char *alias, const char *ours, const char *source, void *arg)
{
    (void) arg;
    jp_log_warn ("config event=alias name=%s as=%s source=%s (Code Box's name; "
                 "prefer %s)", alias, ours, source, ours);
}

static void
s_log_placeholder (const char *written, const char *ours, const char *source, void *arg)
{
    (void) arg;
    jp_log_warn ("config event=placeholder name=%s source=\"%s\" (a template's <...> value: "
                 "%s left unset)", written, source, ours);
}

gw_config_t *
gw_cli_load_config (const char *config_file)
{
    char err[512];
    gw_config_t *config = gw_config_new ();
    if (!config) {
        fprintf (stderr, "codebox: out of memory\n");
        return NULL;
    }
    int rc = gw_config_load_file (config, config_file ? config_file : ".env",
                                  config_file != NULL, err, sizeof err);
    if (!rc)
        rc = gw_config_load_env (config, err, sizeof err);
    /* settings worked out from others, once, before anything reads them */
    if (!rc && gw_config_resolve (config) < 0)
        rc = snprintf (err, sizeof err, "out of memory");
    if (rc) {
        fprintf (stderr, "codebox: %s\n", err);
        gw_config_destroy (&config);
    } else {
        jp_log_set_level ((jp_log_level_t) jp_log_level_parse (gw_config_str (config,
                                                                             GW_SET_LOG_LEVEL)));
        gw_config_each_alias (config, s_log_alias, NULL);
        gw_config_each_placeholder (config, s_log_placeholder, NULL);
        jp_log_debug ("config event=tenant-share sessions=%ld of=%ld tenants=%d",
                      gw_config_int (config, GW_SET_TENANT_MAX_SESSIONS),
                      gw_config_int (config, GW_SET_MAX_SESSIONS),
                      gw_config_count_tenants (gw_config_str (config, GW_SET_API_TOKENS)));
    }
    return config;
}

void
gw_cli_block_signals (void)
{
    sigset_t mask;
    sigemptyset (&mask);
    sigaddset (&mask, SIGTERM);
    sigaddset (&mask, SIGINT);
    sigaddset (&mask, SIGUSR1);     /* drain (gw_loop) */
    sigaddset (&mask, SIGUSR2);     /* serve again */
    pthread_sigmask (SIG_BLOCK, &mask, NULL);
    signal (SIGPIPE, SIG_IGN);
}

int
gw_cli_flag (gw_config_t *config, gw_setting_t id, const char *flag, const char *value)
{
    char err[512];
    if (gw_config_set (config, gw_setting_name (id), value, flag, err, sizeof err)) {
        fprintf (stderr, "codebox: %s\n", err);
        return -1;
    }
    return 0;
}

/* The kernelspec name of setting id exists and parses; else err names
 * the setting. */
static int
s_check_kernel (const gw_config_t *config, gw_setting_t id, const char *name, char *err,
                size_t err_len)
{
    char why[768];
    ks_spec_t *spec = ks_search_find (gw_config_str (config, GW_SET_KERNEL_PATH), name, why,
                                      sizeof why);
    if (spec) {
        ks_spec_destroy (&spec);
        return 0;
    }
    snprintf (err, err_len, "%s: %s (see codebox kernelspecs)", gw_setting_name (id), why);
    return -1;
}

/* Each ':'-separated entry of setting id is a folder; a mount root is an
 * absolute path and may end in "=rw". Else err names the setting and the
 * entry. */
static int
s_check_folders (const gw_config_t *config, gw_setting_t id, bool mount_roots, char *err,
                 size_t err_len)
{
    const char *p = gw_config_str (config, id);
    while (*p) {
        size_t len = strcspn (p, ":");
        char entry[4096];
        snprintf (entry, sizeof entry, "%.*s", (int) (len < sizeof entry ? len : 0), p);
        size_t n = strlen (entry);
        if (mount_roots && n > 3 && strcmp (entry + n - 3, "=rw") == 0)
            entry[n - 3] = '\0';
        struct stat st;
        const char *problem = !len ? NULL
                              : len >= sizeof entry ? "a folder (too long)"
                              : mount_roots && entry[0] != '/' ? "an absolute path"
                              : stat (entry, &st) < 0 || !S_ISDIR (st.st_mode)
                              ? "a folder on this host" : NULL;
        if (problem) {
            snprintf (err, err_len, "%s: '%.300s' is not %s", gw_setting_name (id),
                      len < sizeof entry ? entry : "...", problem);
            return -1;
        }
        p += len + (p[len] == ':');
    }
    return 0;
}

int
gw_cli_check_names (const gw_config_t *config, char *err, size_t err_len)
{
    if (s_check_folders (config, GW_SET_KERNEL_PATH, false, err, err_len)
        || s_check_folders (config, GW_SET_MOUNT_ROOTS, true, err, err_len)
        || s_check_kernel (config, GW_SET_DEFAULT_KERNEL,
                           gw_config_str (config, GW_SET_DEFAULT_KERNEL), err, err_len))
        return -1;
    gw_mcp_set_order_t sets;
    if (gw_mcp_tool_sets_parse (gw_config_str (config, GW_SET_MCP_TOOLS), &sets, err, err_len))
        return -1;
    gw_mcp_tool_sets_log_shadowed (&sets);
    char *pool = strdup (gw_config_str (config, GW_SET_POOL_KERNELS)), *save = NULL;
    int rc = pool ? 0 : -1;
    if (!pool)
        snprintf (err, err_len, "out of memory");
    for (char *name = pool ? strtok_r (pool, ", ", &save) : NULL; name && !rc;
         name = strtok_r (NULL, ", ", &save))
        rc = s_check_kernel (config, GW_SET_POOL_KERNELS, name, err, err_len);
    free (pool);
    if (rc)
        return rc;
    /* the kernel user: the built-in one may be missing (kernels then run
       as nobody, as gw_sandbox says); one that was named must exist */
    gw_setting_doc_t doc;
    gw_setting_doc (GW_SET_KERNEL_USER, &doc);
    const char *user = gw_config_str (config, GW_SET_KERNEL_USER);
    if (geteuid () == 0 && strcmp (user, doc.def) != 0 && !getpwnam (user)) {
        snprintf (err, err_len, "CODEBOX_KERNEL_USER: no user '%.200s' on this host", user);
        return -1;
    }
    const char *links = gw_config_str (config, GW_SET_PIP_FIND_LINKS);
    struct stat st;
    if (*links && strncasecmp (links, "http://", 7) != 0
        && strncasecmp (links, "https://", 8) != 0
        && (stat (links, &st) < 0 || !S_ISDIR (st.st_mode))) {
        snprintf (err, err_len, "CODEBOX_PIP_FIND_LINKS: '%.300s' is not a folder on this host "
                  "(nor an http(s) URL)", links);
        return -1;
    }
    return 0;
}
