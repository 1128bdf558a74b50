/* gw_mcp_stateless: the rules of MCP's stateless era (2026-07-28) that
 * come before a request runs: its _meta (protocol version and client
 * capabilities on every request), the standard HTTP headers checked
 * against the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name, and the
 * Mcp-Param-* a tool's schema asks for with "x-mcp-header"), the methods
 * the era removed; and what it adds to results: server/discover, resultType,
 * ttlMs and cacheScope.
 *
 * Threads: the loop thread only. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_base64.h"
#include "gw_mcp_info.h"
#include "gw_mcp_stateless.h"
#include "gw_mcp_tool_list.h"
#include "gw_version.h"

/* Methods of the stateless era; anything else is GW_E_NOT_FOUND (-32601,
 * with 404). */
static const char *const s_methods[] = {
    "server/discover", "tools/list", "tools/call", "resources/list",
    "resources/templates/list", "resources/read", "prompts/list", "prompts/get",
    "completion/complete", "subscriptions/listen", "tasks/get", "tasks/update",
    "tasks/cancel", NULL,
};

/* Fills err with e and the message; returns e. */
static gw_error_t
s_fail (gw_mcp_error_t *err, gw_error_t e, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static gw_error_t
s_fail (gw_mcp_error_t *err, gw_error_t e, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (err->message, sizeof err->message, fmt, ap);
    va_end (ap);
    err->e = e;
    return e;
}

bool
gw_mcp_stateless_wanted (const char *method, json_t *params)
{
    json_t *meta = json_object_get (params, "_meta");
    return strcmp (method, "server/discover") == 0
           || json_object_get (meta, GW_MCP_META_VERSION) != NULL;
}

/* A header's value without the optional white space around it, copied
 * into out (truncated to its size); NULL when absent. */
static const char *
s_header (const gw_request_t *http, const char *name, char *out, size_t size)
{
    const char *v = http ? gw_request_header (http, name) : NULL;
    if (!v)
        return NULL;
    while (*v == ' ' || *v == '\t')
        v++;
    size_t n = strlen (v);
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    if (n >= size)
        n = size - 1;
    memcpy (out, v, n);
    out[n] = '\0';
    return out;
}

/* What Mcp-Name must say for method, or NULL when it carries none. */
static const char *
s_name_of (const char *method, json_t *params)
{
    const char *key = NULL;
    if (strcmp (method, "tools/call") == 0 || strcmp (method, "prompts/get") == 0)
        key = "name";
    else if (strcmp (method, "resources/read") == 0)
        key = "uri";
    else if (strcmp (method, "tasks/get") == 0 || strcmp (method, "tasks/update") == 0
             || strcmp (method, "tasks/cancel") == 0)
        key = "taskId";
    return key ? json_string_value (json_object_get (params, key)) : NULL;
}

/* Does the header value h (already trimmed) say the argument value v?
 * h is literal, or =?base64?...?= (strict base64). */
static bool
s_param_agrees (const char *h, json_t *v)
{
    size_t n = strlen (h);
    char *decoded = NULL;
    if (n >= 12 && strncmp (h, "=?base64?", 9) == 0 && strcmp (h + n - 2, "?=") == 0) {
        uint8_t *bytes;
        size_t len, coded = n - 11;
        /* strict: whole quads with their padding, nothing between */
        if (coded % 4 || strcspn (h + 9, " \t\r\n") < coded
            || gw_base64_decode (h + 9, coded, &bytes, &len) != 0)
            return false;
        decoded = malloc (len + 1);
        if (!decoded || memchr (bytes, '\0', len)) {
            free (bytes);
            free (decoded);
            return false;
        }
        memcpy (decoded, bytes, len);
        decoded[len] = '\0';
        free (bytes);
        h = decoded;
    }
    bool agrees = false;
    if (json_is_string (v))
        agrees = strcmp (h, json_string_value (v)) == 0;
    else if (json_is_number (v)) {
        char *end;
        double d = strtod (h, &end);
        agrees = *h && !*end && fabs (d - json_number_value (v)) < 1e-9;
    } else if (json_is_boolean (v))
        agrees = strcmp (h, json_is_true (v) ? "true" : "false") == 0;
    free (decoded);
    return agrees;
}

/* The Mcp-Param-* headers of a tools/call against its arguments: every
 * property whose schema says "x-mcp-header": S travels in Mcp-Param-S
 * too, and the two must agree. */
static gw_error_t
s_check_params (gw_mcp_t *self, json_t *params, const gw_request_t *http, gw_mcp_error_t *err)
{
    const char *tool = json_string_value (json_object_get (params, "name"));
    json_t *props = json_object_get (
        json_object_get (gw_mcp_tool_find (self, tool), "inputSchema"), "properties");
    json_t *args = json_object_get (params, "arguments");
    const char *key;
    json_t *prop;
    json_object_foreach (props, key, prop) {
        const char *suffix = json_string_value (json_object_get (prop, "x-mcp-header"));
        if (!suffix)
            continue;
        char name[128], value[4096];
        snprintf (name, sizeof name, "Mcp-Param-%s", suffix);
        const char *h = s_header (http, name, value, sizeof value);
        json_t *arg = json_object_get (args, key);
        if (arg && json_is_null (arg))
            arg = NULL;
        if (!arg && !h)
            continue;
        if (!h)
            return s_fail (err, GW_E_HEADER_MISMATCH, "missing %s header: it must "
                           "carry the argument %s (the tool's schema says x-mcp-header)",
                           name, key);
        if (!arg || !s_param_agrees (h, arg))
            return s_fail (err, GW_E_HEADER_MISMATCH, "the %s header does not match "
                           "the argument %s", name, key);
    }
    return GW_E_OK;
}

gw_error_t
gw_mcp_stateless_check (gw_mcp_t *self, const char *method, json_t *params,
                        const gw_request_t *http, gw_mcp_error_t *err)
{
    memset (err, 0, sizeof *err);
    char hv[256], hm[256], hn[2048];
    const char *h_version = s_header (http, "MCP-Protocol-Version", hv, sizeof hv);
    if (http && !h_version)
        return s_fail (err, GW_E_HEADER_MISMATCH, "missing MCP-Protocol-Version header "
                       "(2026-07-28 sends it with every request; older clients initialize "
                       "first and send Mcp-Session-Id)");
    json_t *meta = json_object_get (params, "_meta");
    const char *version = json_string_value (json_object_get (meta, GW_MCP_META_VERSION));
    if (!version || !json_is_object (json_object_get (meta, GW_MCP_META_CAPABILITIES)))
        return s_fail (err, GW_E_BAD_REQUEST, "params._meta must carry \"%s\" (a string) and "
                       "\"%s\" (an object)", GW_MCP_META_VERSION, GW_MCP_META_CAPABILITIES);
    if (h_version && strcmp (h_version, version) != 0)
        return s_fail (err, GW_E_HEADER_MISMATCH, "the MCP-Protocol-Version header "
                       "(%.40s) does not match _meta (%.40s)", h_version, version);
    bool known = false;
    for (int i = 0; gw_mcp_stateless_versions[i] && !known; i++)
        known = strcmp (version, gw_mcp_stateless_versions[i]) == 0;
    if (!known) {
        json_t *supported = json_array ();
        for (int i = 0; gw_mcp_stateless_versions[i]; i++)
            json_array_append_new (supported, json_string (gw_mcp_stateless_versions[i]));
        err->data = json_pack ("{s:o, s:s}", "supported", supported, "requested", version);
        return s_fail (err, GW_E_UNSUPPORTED_VERSION, "unsupported protocol version "
                       "%.40s", version);
    }
    if (http) {
        const char *h_method = s_header (http, "Mcp-Method", hm, sizeof hm);
        if (!h_method || strcmp (h_method, method) != 0)
            return s_fail (err, GW_E_HEADER_MISMATCH, "the Mcp-Method header must "
                           "repeat the body's method (%.80s)", method);
    }
    bool exists = false;
    for (int i = 0; s_methods[i] && !exists; i++)
        exists = strcmp (s_methods[i], method) == 0;
    if (!exists)
        return s_fail (err, GW_E_NOT_FOUND, "method not found: %.80s%s", method,
                       strcmp (method, "initialize") == 0 || strcmp (method, "ping") == 0
                           ? " (not in 2026-07-28: call server/discover, or send no "
                             "MCP-Protocol-Version header to initialize as in 2025-11-25)"
                           : "");
    if (!http)
        return GW_E_OK;
    const char *name = s_name_of (method, params);
    const char *h_name = s_header (http, "Mcp-Name", hn, sizeof hn);
    if (name && (!h_name || strcmp (h_name, name) != 0))
        return s_fail (err, GW_E_HEADER_MISMATCH, "the Mcp-Name header must repeat "
                       "the body's %s", strcmp (method, "resources/read") == 0 ? "uri"
                       : strncmp (method, "tasks/", 6) == 0 ? "taskId" : "name");
    if (strcmp (method, "tools/call") == 0)
        return s_check_params (self, params, http, err);
    return GW_E_OK;
}

json_t *
gw_mcp_discover (const char *instructions)
{
    json_t *versions = json_array ();
    for (int i = 0; gw_mcp_stateless_versions[i]; i++)
        json_array_append_new (versions, json_string (gw_mcp_stateless_versions[i]));
    for (int i = 0; gw_mcp_versions[i]; i++)
        json_array_append_new (versions, json_string (gw_mcp_versions[i]));
    json_t *result = json_pack (
        "{s:s, s:o, s:o, s:s, s:{s:{s:s, s:s, s:s}}}", "resultType", "complete",
        "supportedVersions", versions, "capabilities", gw_mcp_capabilities (true),
        "instructions", instructions, "_meta", GW_MCP_META_SERVER_INFO, "name",
        "codebox", "title", "codebox code interpreter", "version", CODEBOX_VERSION);
    gw_mcp_cacheable (result, GW_MCP_TTL_STATIC_MS, true);
    return result;
}

void
gw_mcp_cacheable (json_t *result, long ttl_ms, bool shared)
{
    json_object_set_new (result, "ttlMs", json_integer (ttl_ms));
    json_object_set_new (result, "cacheScope", json_string (shared ? "public" : "private"));
}
