/* gw_mcp_info: the protocol versions of both eras, the server's
 * capabilities and instructions, and initialize's answer. Pure data and
 * builders: no other file of the MCP core is called from here.
 *
 * Threads: the loop thread only. */
#include "gw_mcp_info.h"

#include <stdio.h>
#include <string.h>

#include "gw_mcp_internal.h"
#include "gw_version.h"

const char *const gw_mcp_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
                                       NULL};
const char *const gw_mcp_stateless_versions[] = {"2026-07-28", NULL};

const char gw_mcp_instructions[] =
    "Run code in persistent Jupyter kernels (Python, JavaScript, ...). Call session_info "
    "first, reuse one session_id so variables persist, save files for the user under "
    "output/, and read the codebox://guide resource for more.";

json_t *
gw_mcp_capabilities (bool stateless)
{
    if (!stateless)
        return json_pack ("{s:{s:b}, s:{s:b, s:b}, s:{s:b}, s:{}}", "tools", "listChanged", 0,
                          "resources", "subscribe", 0, "listChanged", 0, "prompts",
                          "listChanged", 0, "logging");
    /* 2026-07-28: lists change for subscriptions/listen as they do for
       anyone: resources when a run leaves new files under output/ */
    return json_pack ("{s:{s:b}, s:{s:b}, s:{s:b}, s:{}, s:{}, s:{s:{}}}", "tools",
                      "listChanged", 0, "resources", "listChanged", 1, "prompts",
                      "listChanged", 0, "completions", "logging", "extensions",
                      GW_MCP_TASKS_EXTENSION);
}

json_t *
gw_mcp_initialize (gw_mcp_client_t *client, json_t *params)
{
    const char *asked = json_string_value (json_object_get (params, "protocolVersion"));
    const char *version = gw_mcp_versions[0];
    for (int i = 0; asked && gw_mcp_versions[i]; i++)
        if (strcmp (asked, gw_mcp_versions[i]) == 0)
            version = gw_mcp_versions[i];
    snprintf (client->version, sizeof client->version, "%s", version);
    client->initialized = true;
    return json_pack ("{s:s, s:o, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", version,
                      "capabilities", gw_mcp_capabilities (false), "serverInfo", "name",
                      "codebox", "title", "codebox code interpreter", "version",
                      CODEBOX_VERSION, "instructions", gw_mcp_instructions);
}
