/* gw_cmd_kernel_side: the commands that run beside a kernel (kernel-seat,
 * kernel-relay, kernel-proxy, kernel-net-bridge), found by name for both
 * programs that serve them: `codebox` (main.c) and `codebox-sidecar`
 * (sidecar_main.c). Internal: the gateway starts them.
 *
 * Threads: the main thread, before the command's own. */
#include <string.h>

#include "gw_cli.h"
#include "gw_cmd_kernel_net.h"

bool
gw_cmd_kernel_side (const char *command, int argc, char **argv, int *rc)
{
    static const struct {
        const char *name;
        int (*run) (int, char **);
    } commands[] = {
        {"kernel-seat", gw_cmd_kernel_seat},            /* gw_cmd_kernel_seat.c */
        {"kernel-relay", gw_cmd_kernel_relay},          /* gw_cmd_kernel_relay.c */
        {"kernel-proxy", gw_cmd_kernel_proxy},          /* gw_cmd_kernel_proxy.c */
        {"kernel-net-bridge", gw_cmd_kernel_net_bridge}, /* gw_cmd_kernel_net_bridge.c */
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp (command, commands[i].name) == 0) {
            *rc = commands[i].run (argc, argv);
            return true;
        }
    return false;
}
