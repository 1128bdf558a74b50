/* gw_cmd_kernelspecs: `codebox kernelspecs`: one line per kernelspec found,
 * NAME<TAB>LANGUAGE<TAB>DISPLAY NAME<TAB>PATH. Main thread only. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "gw_cli.h"
#include "ks_search.h"

static void
s_warn (const char *message, void *arg)
{
    (void) arg;
    fprintf (stderr, "codebox: skipped %s\n", message);
}

int
gw_cmd_kernelspecs (int argc, char **argv)
{
    static const struct option options[] = {
        {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    const char *config_file = NULL;
    int opt;
    while ((opt = getopt_long (argc, argv, "h", options, NULL)) != -1) {
        if (opt == 'c')
            config_file = optarg;
        else if (opt == 'h') {
            printf ("Usage: codebox kernelspecs [--config FILE]\n\n"
                    "Prints the kernelspecs found, one per line:\n"
                    "NAME<TAB>LANGUAGE<TAB>DISPLAY NAME<TAB>PATH\n\n"
                    "Searched in order: CODEBOX_KERNEL_PATH, each JUPYTER_PATH entry,\n"
                    "JUPYTER_DATA_DIR (or ~/.local/share/jupyter), /usr/local/share/jupyter,\n"
                    "/usr/share/jupyter (each + /kernels). The first of a name wins.\n");
            return GW_EXIT_OK;
        } else
            return GW_EXIT_USAGE;
    }
    if (optind < argc) {
        fprintf (stderr, "codebox kernelspecs: unexpected argument '%s'\n", argv[optind]);
        return GW_EXIT_USAGE;
    }
    gw_config_t *config = gw_cli_load_config (config_file);
    if (!config)
        return GW_EXIT_USAGE;
    ks_spec_t **specs;
    size_t n;
    int rc = ks_search_all (gw_config_str (config, GW_SET_KERNEL_PATH), &specs, &n,
                            s_warn, NULL);
    gw_config_destroy (&config);
    if (rc) {
        fprintf (stderr, "codebox: out of memory\n");
        return GW_EXIT_KERNEL;
    }
    for (size_t i = 0; i < n; i++)
        printf ("%s\t%s\t%s\t%s\n", specs[i]->name, specs[i]->language,
                specs[i]->display_name, specs[i]->resource_dir);
    ks_search_free (specs, n);
    return GW_EXIT_OK;
}
