/* gw_cli: settings loading and process setup shared by the subcommands.
 * Main thread only. */
#include "gw_cli.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>

#include "jp_log.h"

static void
s_log_alias (const char *alias, const char *ours, const char *source, void *arg)
{
    (void) arg;
    jp_log_warn ("config event=alias name=%s as=%s source=%s (Code Box's name; "
                 "prefer %s)", alias, ours, source, ours);
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

void
gw_cli_stay_on_this_cpu (void)
{
    int cpu = sched_getcpu ();
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return;
    cpu_set_t set;
    CPU_ZERO (&set);
    CPU_SET (cpu, &set);
    sched_setaffinity (0, sizeof set, &set);   /* a refusal only costs speed */
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
