/* gw_version: the version codebox reports (CLI, MCP serverInfo, the
 * User-Agent of its downloads and uploads). Pure. */
#ifndef GW_VERSION_H
#define GW_VERSION_H

#define CODEBOX_VERSION "0.1.0"

#endif
