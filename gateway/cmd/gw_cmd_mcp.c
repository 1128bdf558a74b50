/* gw_cmd_mcp: `codebox mcp`: MCP over stdio. One JSON-RPC message per line
 * on stdin, one per line on stdout; logs go to stderr only. The main
 * thread is the loop thread: stdin is one more descriptor it polls. At
 * end of input it stops, ending every kernel. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw_cli.h"
#include "gw_features.h"
#include "gw_download.h"
#include "gw_fs.h"
#include "gw_server.h"
#include "gw_mcp.h"
#include "gw_request.h"
#include "gw_state_dir.h"
#include "jp_json.h"
#include "jp_log.h"

#define MAX_LINE (64u << 20)

typedef struct {
    gw_server_t *server;
    gw_mcp_t *mcp;
    gw_mcp_client_t *client;
    char *buf;
    size_t len, cap;
    bool too_long;
    bool stdin_closed;          /* end of input: not polled any more */
} s_stdio_t;

static void
s_send (gw_mcp_reply_t *reply, json_t *message)
{
    (void) reply;
    char *text = jp_json_dump (message, NULL);
    if (!text)
        return;
    fputs (text, stdout);
    fputc ('\n', stdout);
    fflush (stdout);
    free (text);
}

/* One log line per message that had a method (on stderr). */
static void
s_end (gw_mcp_reply_t *reply)
{
    if (reply->log[0])
        jp_log_info ("mcp transport=stdio%s", reply->log);
    free (reply);
}

/* Handles one complete line. */
static void
s_line (s_stdio_t *io, const char *line, size_t len)
{
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (!len)
        return;
    gw_mcp_reply_t *reply = malloc (sizeof *reply);
    if (!reply)
        return;
    *reply = (gw_mcp_reply_t) {.send = s_send, .end = s_end,
        .keepalive = NULL, .can_stream = true};
    gw_mcp_in_t in = {0};   /* the era: what each message says */
    gw_mcp_handle_text (io->mcp, io->client, line, len, &in, reply);
}

/* stdin is readable: read what is there and handle whole lines. */
static void
s_on_stdin (s_stdio_t *io)
{
    gw_server_t *server = io->server;
    if (io->cap - io->len < 65536) {
        size_t cap = io->cap ? io->cap * 2 : 131072;
        char *grown = realloc (io->buf, cap);
        if (!grown) {
            gw_server_stop (server);
            return;
        }
        io->buf = grown;
        io->cap = cap;
    }
    ssize_t n = read (0, io->buf + io->len, io->cap - io->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        jp_log_info ("mcp stdin closed: shutting down");
        io->stdin_closed = true;
        gw_server_stop (server);
        return;
    }
    io->len += (size_t) n;
    size_t start = 0;
    for (size_t i = 0; i < io->len; i++) {
        if (io->buf[i] != '\n')
            continue;
        if (!io->too_long)
            s_line (io, io->buf + start, i - start);
        io->too_long = false;
        start = i + 1;
    }
    memmove (io->buf, io->buf + start, io->len - start);
    io->len -= start;
    if (io->len > MAX_LINE) {
        /* refuse a message larger than 64 MiB and skip to its end */
        jp_log_warn ("mcp message over 64 MiB dropped");
        io->too_long = true;
        io->len = 0;
    }
}

/* The loop source of stdio: stdin while open, and the MCP core's timers. */
static int
s_poll_count (void *arg)
{
    (void) arg;
    return 1;
}

static int
s_poll_items (void *arg, zmq_pollitem_t *items, int max)
{
    s_stdio_t *io = arg;
    if (io->stdin_closed || max < 1)
        return 0;
    items[0] = (zmq_pollitem_t) {.fd = 0, .events = ZMQ_POLLIN};
    return 1;
}

static void
s_dispatch (void *arg, const zmq_pollitem_t *items, int n)
{
    if (n == 1 && (items[0].revents & (ZMQ_POLLIN | ZMQ_POLLERR)))
        s_on_stdin (arg);
}

static int64_t
s_deadline (void *arg, int64_t now)
{
    (void) now;
    return gw_mcp_deadline (((s_stdio_t *) arg)->mcp);
}

static void
s_tick (void *arg, int64_t now)
{
    gw_mcp_tick (((s_stdio_t *) arg)->mcp, now);
}

static const gw_loop_source_t s_stdin_source = {
    .poll_count = s_poll_count,
    .poll_items = s_poll_items,
    .dispatch = s_dispatch,
    .deadline = s_deadline,
    .tick = s_tick,
};

int
gw_cmd_mcp (int argc, char **argv)
{
    static const struct option options[] = {
        {"state-dir", required_argument, NULL, 's'},
        {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    const char *state_dir = NULL, *config_file = NULL;
    int opt;
    while ((opt = getopt_long (argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 's': state_dir = optarg; break;
        case 'c': config_file = optarg; break;
        case 'h':
            printf ("Usage: codebox mcp [--state-dir D] [--config FILE]\n\n"
                    "Serves MCP over stdio: one JSON-RPC message per line on stdin and\n"
                    "stdout; logs go to stderr. Ends at end of input.\n\n"
                    "  --state-dir D   session folders (CODEBOX_STATE_DIR); when neither is\n"
                    "                  given, a folder of this process's own, STATE/stdio/PID\n"
                    "                  (STATE being CODEBOX_STATE_DIR's default), removed at exit\n"
                    "  --config FILE   settings file instead of ./.env\n\n");
            gw_config_print_help (stdout, false);
            return GW_EXIT_OK;
        default: return GW_EXIT_USAGE;
        }
    }
    gw_config_t *config = gw_cli_load_config (config_file);
    if (!config)
        return GW_EXIT_USAGE;
    char own[4096];
    if (!state_dir && !gw_config_str (config, GW_SET_STATE_DIR)[0]
        && gw_state_dir_for_stdio (own, sizeof own) == 0)
        state_dir = own;    /* a folder of its own: clients start many stdio servers */
    if (state_dir && gw_cli_flag (config, GW_SET_STATE_DIR, "--state-dir", state_dir)) {
        gw_config_destroy (&config);
        return GW_EXIT_USAGE;
    }
    char err[1024];
    if (gw_cli_check_names (config, err, sizeof err) < 0) {
        fprintf (stderr, "codebox mcp: %s\n", err);
        gw_config_destroy (&config);
        return GW_EXIT_USAGE;
    }
    gw_cli_block_signals ();
    gw_features_t *features = NULL;
    gw_server_t *server = gw_server_new (config, err, sizeof err);
    if (server && !(features = gw_features_new (server, config, err, sizeof err)))
        gw_server_destroy (&server);
    if (!server) {
        fprintf (stderr, "codebox mcp: %s\n", err);
        gw_config_destroy (&config);
        return GW_EXIT_USAGE;
    }
    gw_features_load_kept (server);    /* with --state-dir, what an earlier run kept */
    s_stdio_t io = {0};
    io.mcp = gw_mcp_new (server);
    io.client = io.mcp ? gw_mcp_client_new (io.mcp, "default") : NULL;
    int rc = GW_EXIT_OK;
    if (!io.client) {
        fprintf (stderr, "codebox mcp: out of memory\n");
        rc = GW_EXIT_USAGE;
    } else {
        io.server = server;
        gw_loop_add_source (gw_server_loop (server), &s_stdin_source, &io);
        jp_log (JP_LOG_ALWAYS, "mcp on stdio state=%s kernel=%s", gw_server_state_dir (server),
                 gw_config_str (config, GW_SET_DEFAULT_KERNEL));
        gw_server_run (server);
    }
    gw_features_stop (features);    /* before the MCP core its answers go through */
    gw_mcp_destroy (&io.mcp);
    gw_features_destroy (&features);
    gw_server_destroy (&server);
    if (state_dir == own)
        gw_fs_remove_tree (own);    /* its own folder goes with it */
    free (io.buf);
    gw_config_destroy (&config);
    return rc;
}
