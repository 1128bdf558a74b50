/* gw_cli: what every subcommand shares: version, loading the settings in
 * their order (defaults, .env or --config FILE, environment, flags) and
 * reporting a usage error. Main thread only. */
#ifndef GW_CLI_H
#define GW_CLI_H

#include "gw_config.h"

#include "gw_version.h"

/* Exit codes of the commands. */
enum {
    GW_EXIT_OK = 0,
    GW_EXIT_CODE_ERROR = 1,     /* the code raised an error */
    GW_EXIT_USAGE = 2,
    GW_EXIT_KERNEL = 3,         /* the kernel failed to start or died */
    GW_EXIT_TIMEOUT = 124,
};

/* Loads the .env file (config_file if given: then it must exist) and the
 * environment into a new config. On error prints it and returns NULL. */
gw_config_t *gw_cli_load_config (const char *config_file);

/* For the long-running commands: blocks SIGTERM and SIGINT in this and
 * every later thread (the loop reads them from a signalfd) and ignores
 * SIGPIPE. Call before any thread starts. */
void gw_cli_block_signals (void);

/* For the servers (serve, mcp), once every source and flag is read: each
 * setting that names something names what exists: CODEBOX_DEFAULT_KERNEL
 * and CODEBOX_POOL_KERNELS kernelspecs, CODEBOX_KERNEL_PATH and
 * CODEBOX_MOUNT_ROOTS folders (absolute paths), a CODEBOX_KERNEL_USER
 * that was set (as root), a CODEBOX_PIP_FIND_LINKS that is not a URL,
 * CODEBOX_MCP_TOOLS tool sets (gw_mcp_tool_sets_parse).
 * Returns 0, or -1 with err naming the setting and what is missing. */
int gw_cli_check_names (const gw_config_t *config, char *err, size_t err_len);

/* Sets a setting from a flag; on error prints it and returns -1. */
int gw_cli_flag (gw_config_t *config, gw_setting_t id, const char *flag, const char *value);

int gw_cmd_exec (int argc, char **argv);
int gw_cmd_kernelspecs (int argc, char **argv);
int gw_cmd_serve (int argc, char **argv);
int gw_cmd_mcp (int argc, char **argv);
int gw_cmd_settings (int argc, char **argv);
int gw_cmd_kernel_proxy (int argc, char **argv);
int gw_cmd_kernel_relay (int argc, char **argv);
int gw_cmd_kernel_seat (int argc, char **argv);

/* Runs command when it is one of the kernel-side commands (kernel-seat,
 * kernel-relay, kernel-proxy, kernel-net-bridge; gw_cmd_kernel_side.c)
 * with argc/argv from its name on, its exit code in *rc; false when it is
 * not one of them. */
bool gw_cmd_kernel_side (const char *command, int argc, char **argv, int *rc);

#endif
