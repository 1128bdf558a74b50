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

const char *
gw_mcp_instructions (gw_mcp_set_t first)
{
    switch (first) {
    case GW_MCP_SET_CODEBOX_AI:
        return "Run Python with execute_code: each call runs once in a fresh kernel, so "
               "nothing persists between calls; name the packages the code needs in "
               "dependencies. Plots come back as images.";
    case GW_MCP_SET_E2B:
        return "Run Python in sandboxes: create_sandbox gives a session_id; pass it to "
               "execute_code (variables persist), install_package and the file tools (paths "
               "inside the sandbox's folder); close_sandbox when done, or create_run_close "
               "for a single run.";
    case GW_MCP_SET_CODE_BOX:
        return "Run Python in sessions: call session_info first for the input and output "
               "folders, reuse one session_id in exec_code so variables persist, save files "
               "for the user under the output folder (they come back as new_artifacts), and "
               "read code-interpreter://usage-guide for more.";
    default:
        return "Run code in persistent Jupyter kernels (Python, JavaScript, ...). Call "
               "session_info first, reuse one session_id so variables persist, save files "
               "for the user under output/, and read the codebox://guide resource for more.";
    }
}

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
gw_mcp_initialize (gw_mcp_client_t *client, json_t *params, const char *instructions)
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
                      CODEBOX_VERSION, "instructions", instructions);
}
