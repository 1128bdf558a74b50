/* fuzz_mcp: MCP JSON-RPC handling (gw_mcp_handle_text) on arbitrary
 * messages, through the real core with a real (idle) loop, and REST
 * routing (gw_router_handle) of arbitrary method/path/body triples.
 * The default kernel does not exist, so no input starts a kernel; inputs
 * that name a kernel, a language or a one-shot run are skipped for that
 * reason. Properties: never crashes or leaks; every message gets exactly
 * one end of its reply; a request gets a response with its id. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_server.h"
#include "gw_mcp.h"
#include "gw_features.h"
#include "gw_jupyter.h"
#include "gw_router.h"

static gw_config_t *s_config;
static gw_server_t *s_loop;
static gw_mcp_t *s_mcp;
static gw_router_t *s_router;
static gw_features_t *s_features;    /* kept: LeakSanitizer sees it reachable */
static gw_mcp_client_t *s_client;

typedef struct {
    gw_mcp_reply_t base;
    int ends;
    int responses;
} s_reply_t;

static void
s_send (gw_mcp_reply_t *reply, json_t *message)
{
    s_reply_t *r = (s_reply_t *) reply;
    char *text = json_dumps (message, JSON_COMPACT);
    if (!text)
        abort ();
    free (text);
    if (json_object_get (message, "id"))
        r->responses++;
}

static void
s_end (gw_mcp_reply_t *reply)
{
    ((s_reply_t *) reply)->ends++;
}

static void
s_complete (gw_request_t *req)
{
    if (req->status < 200 || req->status > 599)
        abort ();
    json_decref (req->json);
    req->json = NULL;
    free (req->raw);
    req->raw = NULL;
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    char err[256];
    s_config = gw_config_new ();
    gw_config_set (s_config, "CODEBOX_DEFAULT_KERNEL", "codebox-fuzz-no-such-kernel", "fuzz",
                   err, sizeof err);
    gw_config_set (s_config, "CODEBOX_POOL_SIZE", "0", "fuzz", err, sizeof err);
    /* the volume routes are fuzzed, but make none: a volume is kept
       across runs, and as root mounted */
    gw_config_set (s_config, "CODEBOX_VOLUMES_MAX", "0", "fuzz", err, sizeof err);
    gw_config_set (s_config, "CODEBOX_STATE_DIR", "/tmp/codebox-fuzz-mcp-state", "fuzz", err,
                   sizeof err);
    s_loop = gw_server_new (s_config, err, sizeof err);
    if (!s_loop) {
        fprintf (stderr, "fuzz_mcp: %s\n", err);
        abort ();
    }
    s_features = gw_features_new (s_loop, s_config, err, sizeof err);
    if (!s_features) {
        fprintf (stderr, "fuzz_mcp: %s\n", err);
        abort ();
    }
    s_mcp = gw_mcp_new (s_loop);
    s_client = gw_mcp_client_new (s_mcp, "default");
    /* the Jupyter API as `codebox serve` has it (its routes are fuzzed
       too); MCP over HTTP stays out: the core is fuzzed directly */
    s_router = gw_router_new (s_loop, NULL, NULL, gw_jupyter_new (s_loop), NULL);
    return 0;
}

/* A REST request from the input: METHOD\nPATH\nBODY. */
static void
s_rest (const char *text)
{
    const char *nl1 = strchr (text, '\n');
    const char *nl2 = nl1 ? strchr (nl1 + 1, '\n') : NULL;
    if (!nl2 || nl1 - text >= 8)
        return;
    gw_request_t req = {0};
    snprintf (req.method, sizeof req.method, "%.*s", (int) (nl1 - text), text);
    req.path = strndup (nl1 + 1, (size_t) (nl2 - nl1 - 1));
    req.body = strdup (nl2 + 1);
    req.body_len = strlen (req.body);
    snprintf (req.tenant, sizeof req.tenant, "default");
    req.complete = s_complete;
    /* POST /sessions would start the (missing) default kernel: fine; a
       long poll would outlive this stack frame: skip ?wait */
    gw_router_handle (s_loop, &req, s_router);
    free (req.path);
    free (req.body);
    json_decref (req.json);
    free (req.raw);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *text = malloc (size + 1);
    memcpy (text, data, size);
    text[size] = '\0';
    if (strstr (text, "kernel") || strstr (text, "language") || strstr (text, "run_")
        || strstr (text, "listen")
        || strlen (text) != size) {
        free (text);
        return 0;
    }
    if (size > 0 && text[0] == '/') {
        s_rest (text + 1);
        free (text);
        return 0;
    }
    s_reply_t reply = {{.send = s_send, .end = s_end, .can_stream = true}, 0, 0};
    gw_mcp_in_t in = {0};
    gw_mcp_handle_text (s_mcp, s_client, text, size, &in, &reply.base);
    /* nothing starts a kernel, so every message is answered at once */
    if (reply.ends != 1 || reply.responses > 1)
        abort ();
    free (text);
    return 0;
}
