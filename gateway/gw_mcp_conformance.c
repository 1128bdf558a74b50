/* gw_mcp_conformance: the fixture tools, resources and prompts that the
 * official MCP conformance suite (@modelcontextprotocol/conformance
 * 0.1.13) calls, offered only with CODEBOX_MCP_CONFORMANCE=1 (tests).
 * Each fixture answers what the suite's scenario description asks for,
 * word for word where the suite compares text.
 *
 * Limits: codebox sends no server-to-client requests, so the sampling and
 * elicitation fixtures answer with isError (their scenarios stay expected
 * failures); test_reconnection answers at once instead of closing its
 * stream mid-call. The logging and progress fixtures send their three
 * notifications back to back: a call runs on the loop thread and must not
 * sleep there, and the suite only counts the notifications and checks that
 * progress grows.
 *
 * Threads: the loop thread only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_mcp_internal.h"

/* A 1x1 red PNG and a WAV of eight silent 8-bit samples at 8 kHz. */
#define RED_PIXEL_PNG \
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
#define SILENT_WAV "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="

#define NO_ARGS "{\"type\": \"object\", \"properties\": {}}"

typedef json_t *(s_fixture_fn) (gw_mcp_ctx_t *ctx, json_t *args);

typedef struct {
    const char *name;
    const char *description;
    const char *input_schema;
    s_fixture_fn *fn;
} s_fixture_t;

static s_fixture_fn s_simple_text, s_image, s_audio, s_embedded_resource, s_mixed, s_logging,
    s_error, s_progress, s_no_client_requests, s_json_schema, s_reconnection;

static const s_fixture_t s_fixtures[] = {
    {"test_simple_text", "Returns a simple text response", NO_ARGS, s_simple_text},
    {"test_image_content", "Returns a 1x1 red PNG image", NO_ARGS, s_image},
    {"test_audio_content", "Returns a short WAV audio clip", NO_ARGS, s_audio},
    {"test_embedded_resource", "Returns an embedded text resource", NO_ARGS,
     s_embedded_resource},
    {"test_multiple_content_types", "Returns text, an image and an embedded resource", NO_ARGS,
     s_mixed},
    {"test_tool_with_logging", "Sends three info log messages while it runs", NO_ARGS,
     s_logging},
    {"test_error_handling", "Always fails with isError", NO_ARGS, s_error},
    {"test_tool_with_progress", "Reports progress 0, 50 and 100 of 100", NO_ARGS, s_progress},
    {"test_sampling", "Would ask the client's LLM (sampling/createMessage); codebox sends no "
     "server-to-client requests",
     "{\"type\": \"object\", \"properties\": {\"prompt\": {\"type\": \"string\", "
     "\"description\": \"The prompt to send to the LLM\"}}, \"required\": [\"prompt\"]}",
     s_no_client_requests},
    {"test_elicitation", "Would ask the user for input (elicitation/create); codebox sends no "
     "server-to-client requests",
     "{\"type\": \"object\", \"properties\": {\"message\": {\"type\": \"string\", "
     "\"description\": \"The message to show the user\"}}, \"required\": [\"message\"]}",
     s_no_client_requests},
    {"test_elicitation_sep1034_defaults", "Would elicit values with defaults (SEP-1034); "
     "codebox sends no server-to-client requests", NO_ARGS, s_no_client_requests},
    {"test_elicitation_sep1330_enums", "Would elicit enum values (SEP-1330); codebox sends no "
     "server-to-client requests", NO_ARGS, s_no_client_requests},
    {"json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
     "{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\", \"type\": \"object\", "
     "\"$defs\": {\"address\": {\"type\": \"object\", \"properties\": {\"street\": {\"type\": "
     "\"string\"}, \"city\": {\"type\": \"string\"}}}}, \"properties\": {\"name\": {\"type\": "
     "\"string\"}, \"address\": {\"$ref\": \"#/$defs/address\"}}, "
     "\"additionalProperties\": false}",
     s_json_schema},
    {"test_reconnection", "Answers on its stream (codebox does not close streams mid-call)",
     NO_ARGS, s_reconnection},
};
#define N_FIXTURES (sizeof s_fixtures / sizeof s_fixtures[0])

/* A CallToolResult with content (stolen) and isError. */
static json_t *
s_result (json_t *content, bool is_error)
{
    return json_pack ("{s:o, s:b}", "content", content, "isError", is_error);
}

static json_t *
s_text_item (const char *text)
{
    return json_pack ("{s:s, s:s}", "type", "text", "text", text);
}

static json_t *
s_simple_text (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) ctx;
    (void) args;
    return s_result (json_pack ("[o]", s_text_item ("This is a simple text response for "
                                                     "testing.")), false);
}

static json_t *
s_image (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) ctx;
    (void) args;
    return s_result (json_pack ("[{s:s, s:s, s:s}]", "type", "image", "data", RED_PIXEL_PNG,
                                "mimeType", "image/png"), false);
}

static json_t *
s_audio (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) ctx;
    (void) args;
    return s_result (json_pack ("[{s:s, s:s, s:s}]", "type", "audio", "data", SILENT_WAV,
                                "mimeType", "audio/wav"), false);
}

static json_t *
s_embedded_resource (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) ctx;
    (void) args;
    return s_result (json_pack ("[{s:s, s:{s:s, s:s, s:s}}]", "type", "resource", "resource",
                                "uri", "test://embedded-resource", "mimeType", "text/plain",
                                "text", "This is an embedded resource content."), false);
}

static json_t *
s_mixed (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) ctx;
    (void) args;
    return s_result (json_pack ("[o, {s:s, s:s, s:s}, {s:s, s:{s:s, s:s, s:s}}]",
                                s_text_item ("Multiple content types test:"), "type", "image",
                                "data", RED_PIXEL_PNG, "mimeType", "image/png", "type",
                                "resource", "resource", "uri", "test://mixed-content-resource",
                                "mimeType", "application/json", "text",
                                "{\"test\":\"data\",\"value\":123}"), false);
}

static json_t *
s_logging (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) args;
    gw_mcp_log (ctx, "info", "Tool execution started");
    gw_mcp_log (ctx, "info", "Tool processing data");
    gw_mcp_log (ctx, "info", "Tool execution completed");
    return s_result (json_pack ("[o]", s_text_item ("Tool with logging executed "
                                                     "successfully")), false);
}

static json_t *
s_error (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) ctx;
    (void) args;
    return s_result (json_pack ("[o]", s_text_item ("This tool intentionally returns an error "
                                                     "for testing")), true);
}

static json_t *
s_progress (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) args;
    for (int step = 0; ctx->progress_token && ctx->reply->can_stream && step <= 2; step++) {
        json_t *msg = json_pack ("{s:s, s:s, s:{s:O, s:i, s:i, s:s}}", "jsonrpc", "2.0",
                                 "method", "notifications/progress", "params", "progressToken",
                                 ctx->progress_token, "progress", step * 50, "total", 100,
                                 "message", step == 0 ? "started" : step == 1 ? "halfway"
                                                                              : "done");
        if (msg)
            ctx->reply->send (ctx->reply, msg);
        json_decref (msg);
    }
    return s_result (json_pack ("[o]", s_text_item ("Tool with progress executed "
                                                     "successfully")), false);
}

static json_t *
s_no_client_requests (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) ctx;
    (void) args;
    return s_result (json_pack ("[o]", s_text_item ("codebox does not send server-to-client "
                                                     "requests (sampling, elicitation), so this "
                                                     "fixture cannot run")), true);
}

static json_t *
s_json_schema (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) ctx;
    char *dumped = json_dumps (args, JSON_COMPACT | JSON_SORT_KEYS);
    char text[512];
    snprintf (text, sizeof text, "Received: %.480s", dumped ? dumped : "{}");
    free (dumped);
    return s_result (json_pack ("[o]", s_text_item (text)), false);
}

static json_t *
s_reconnection (gw_mcp_ctx_t *ctx, json_t *args)
{
    (void) ctx;
    (void) args;
    return s_result (json_pack ("[o]", s_text_item ("Reconnection test completed")), false);
}

void
gw_mcp_conformance_tools (json_t *tools)
{
    for (size_t i = 0; i < N_FIXTURES; i++) {
        const s_fixture_t *f = &s_fixtures[i];
        json_array_append_new (tools, json_pack ("{s:s, s:s, s:o}", "name", f->name,
                                                 "description", f->description, "inputSchema",
                                                 json_loads (f->input_schema, 0, NULL)));
    }
}

json_t *
gw_mcp_conformance_call (gw_mcp_ctx_t *ctx, const char *name, json_t *args)
{
    for (size_t i = 0; i < N_FIXTURES; i++)
        if (strcmp (s_fixtures[i].name, name) == 0)
            return s_fixtures[i].fn (ctx, args);
    return NULL;
}

void
gw_mcp_conformance_resources (json_t *resources, json_t *templates)
{
    json_array_append_new (resources, json_pack ("{s:s, s:s, s:s, s:s}", "uri",
                                                 "test://static-text", "name", "static-text",
                                                 "description", "A static text resource",
                                                 "mimeType", "text/plain"));
    json_array_append_new (resources, json_pack ("{s:s, s:s, s:s, s:s}", "uri",
                                                 "test://static-binary", "name",
                                                 "static-binary", "description",
                                                 "A static binary resource (a PNG)", "mimeType",
                                                 "image/png"));
    json_array_append_new (resources, json_pack ("{s:s, s:s, s:s, s:s}", "uri",
                                                 "test://watched-resource", "name",
                                                 "watched-resource", "description",
                                                 "A resource to subscribe to", "mimeType",
                                                 "text/plain"));
    json_array_append_new (templates, json_pack ("{s:s, s:s, s:s, s:s}", "uriTemplate",
                                                 "test://template/{id}/data", "name",
                                                 "template-data", "description",
                                                 "Data for an id, substituted in the content",
                                                 "mimeType", "application/json"));
}

/* The {id} of test://template/{id}/data, copied into id; false when uri
 * is not of that form. */
static bool
s_template_id (const char *uri, char *id, size_t len)
{
    static const char prefix[] = "test://template/", suffix[] = "/data";
    size_t n = strlen (uri);
    if (strncmp (uri, prefix, sizeof prefix - 1) != 0 || n < sizeof prefix + sizeof suffix - 1)
        return false;
    const char *start = uri + sizeof prefix - 1;
    size_t id_len = n - (sizeof prefix - 1) - (sizeof suffix - 1);
    if (strcmp (start + id_len, suffix) != 0 || memchr (start, '/', id_len) || id_len >= len)
        return false;
    snprintf (id, len, "%.*s", (int) id_len, start);
    return true;
}

json_t *
gw_mcp_conformance_read (const char *uri)
{
    char id[256];
    if (strcmp (uri, "test://static-text") == 0)
        return json_pack ("{s:s, s:s, s:s}", "uri", uri, "mimeType", "text/plain", "text",
                          "This is the content of the static text resource.");
    if (strcmp (uri, "test://static-binary") == 0)
        return json_pack ("{s:s, s:s, s:s}", "uri", uri, "mimeType", "image/png", "blob",
                          RED_PIXEL_PNG);
    if (strcmp (uri, "test://watched-resource") == 0)
        return json_pack ("{s:s, s:s, s:s}", "uri", uri, "mimeType", "text/plain", "text",
                          "Watched resource content.");
    if (s_template_id (uri, id, sizeof id)) {
        char data[300];
        snprintf (data, sizeof data, "Data for ID: %s", id);
        json_t *body = json_pack ("{s:s, s:b, s:s}", "id", id, "templateTest", 1, "data", data);
        char *text = body ? json_dumps (body, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref (body);
        json_t *content = text ? json_pack ("{s:s, s:s, s:s}", "uri", uri, "mimeType",
                                            "application/json", "text", text)
                               : NULL;
        free (text);
        return content;
    }
    return NULL;
}

void
gw_mcp_conformance_prompts (json_t *prompts)
{
    json_array_append_new (prompts, json_pack ("{s:s, s:s}", "name", "test_simple_prompt",
                                               "description", "A simple prompt without "
                                               "arguments"));
    json_array_append_new (prompts, json_pack (
        "{s:s, s:s, s:[{s:s, s:s, s:b}, {s:s, s:s, s:b}]}", "name",
        "test_prompt_with_arguments", "description", "A prompt with two required arguments",
        "arguments", "name", "arg1", "description", "First test argument", "required", 1,
        "name", "arg2", "description", "Second test argument", "required", 1));
    json_array_append_new (prompts, json_pack (
        "{s:s, s:s, s:[{s:s, s:s, s:b}]}", "name", "test_prompt_with_embedded_resource",
        "description", "A prompt that embeds a resource", "arguments", "name", "resourceUri",
        "description", "URI of the resource to embed", "required", 1));
    json_array_append_new (prompts, json_pack ("{s:s, s:s}", "name", "test_prompt_with_image",
                                               "description", "A prompt with an image"));
}

/* A PromptMessage from the user with content (stolen). */
static json_t *
s_user (json_t *content)
{
    return json_pack ("{s:s, s:o}", "role", "user", "content", content);
}

json_t *
gw_mcp_conformance_prompt (const char *name, json_t *args)
{
    if (strcmp (name, "test_simple_prompt") == 0)
        return json_pack ("{s:[o]}", "messages",
                          s_user (s_text_item ("This is a simple prompt for testing.")));
    if (strcmp (name, "test_prompt_with_arguments") == 0) {
        const char *arg1 = json_string_value (json_object_get (args, "arg1"));
        const char *arg2 = json_string_value (json_object_get (args, "arg2"));
        if (!arg1 || !arg2)
            return NULL;    /* both are required */
        char text[2048];
        snprintf (text, sizeof text, "Prompt with arguments: arg1='%.900s', arg2='%.900s'",
                  arg1, arg2);
        return json_pack ("{s:[o]}", "messages", s_user (s_text_item (text)));
    }
    if (strcmp (name, "test_prompt_with_embedded_resource") == 0) {
        const char *uri = json_string_value (json_object_get (args, "resourceUri"));
        if (!uri)
            return NULL;    /* required */
        return json_pack ("{s:[o, o]}", "messages",
                          s_user (json_pack ("{s:s, s:{s:s, s:s, s:s}}", "type", "resource",
                                             "resource", "uri", uri, "mimeType", "text/plain",
                                             "text", "Embedded resource content for testing.")),
                          s_user (s_text_item ("Please process the embedded resource above.")));
    }
    if (strcmp (name, "test_prompt_with_image") == 0)
        return json_pack ("{s:[o, o]}", "messages",
                          s_user (json_pack ("{s:s, s:s, s:s}", "type", "image", "data",
                                             RED_PIXEL_PNG, "mimeType", "image/png")),
                          s_user (s_text_item ("Please analyze the image above.")));
    return NULL;
}
