/* main: the codebox command: dispatches to a subcommand. Main thread. */
#include <stdio.h>
#include <string.h>

#include <czmq.h>

#include "gw_cli.h"

static void
s_usage (FILE *out)
{
    fprintf (out,
             "Usage: codebox COMMAND [OPTIONS]\n\n"
             "A Jupyter-protocol kernel gateway for AI agents.\n\n"
             "Commands:\n"
             "  serve        HTTP server: REST API and MCP at /mcp\n"
             "  mcp          MCP over stdio\n"
             "  kernelspecs  list the kernelspecs found\n"
             "  exec         run code once in a fresh kernel and print its outputs\n"
             "  settings     list every setting (--markdown: as docs/CONFIGURATION.md)\n\n"
             "Run 'codebox COMMAND --help' for a command's options.\n"
             "  --help       this text\n"
             "  --version    the version\n");
}

int
main (int argc, char **argv)
{
    /* CZMQ (its actors): the loop's signalfd owns SIGINT and SIGTERM, and
       stdout may be MCP's channel, so no handlers of its own and its few
       log lines go to stderr; set before anything of CZMQ's is made */
    zsys_handler_set (NULL);
    zsys_set_logstream (stderr);
    if (argc < 2) {
        s_usage (stderr);
        return GW_EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp (command, "--help") == 0 || strcmp (command, "-h") == 0
        || strcmp (command, "help") == 0) {
        s_usage (stdout);
        return GW_EXIT_OK;
    }
    if (strcmp (command, "--version") == 0 || strcmp (command, "version") == 0) {
        printf ("codebox %s\n", CODEBOX_VERSION);
        return GW_EXIT_OK;
    }
    if (strcmp (command, "exec") == 0)
        return gw_cmd_exec (argc - 1, argv + 1);
    if (strcmp (command, "kernelspecs") == 0)
        return gw_cmd_kernelspecs (argc - 1, argv + 1);
    if (strcmp (command, "serve") == 0)
        return gw_cmd_serve (argc - 1, argv + 1);
    int rc;
    if (gw_cmd_kernel_side (command, argc - 1, argv + 1, &rc))     /* internal */
        return rc;
    if (strcmp (command, "mcp") == 0)
        return gw_cmd_mcp (argc - 1, argv + 1);
    if (strcmp (command, "settings") == 0)
        return gw_cmd_settings (argc - 1, argv + 1);
    fprintf (stderr, "codebox: unknown command '%s'\n", command);
    s_usage (stderr);
    return GW_EXIT_USAGE;
}
