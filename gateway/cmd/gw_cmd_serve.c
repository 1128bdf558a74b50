/* gw_cmd_serve: `codebox serve`: the HTTP server. The main thread blocks
 * SIGTERM, SIGINT, SIGUSR1 and SIGUSR2 (every thread inherits that; the
 * loop reads them from a signalfd), starts libmicrohttpd (which the
 * loop runs: s_http_source), then becomes the loop thread until SIGTERM
 * or SIGINT; then it ends every kernel and exits 0. SIGUSR1 drains the
 * node (no new sessions), SIGUSR2 ends that. */
#include <arpa/inet.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "gw_auth.h"
#include "gw_bind.h"
#include "gw_cli.h"
#include "gw_download.h"
#include "gw_http.h"
#include "gw_server.h"
#include "gw_mcp.h"
#include "gw_mcp_http.h"
#include "gw_features.h"
#include "gw_rest_events.h"
#include "gw_router.h"
#include "jp_log.h"

static void
s_help (void)
{
    printf ("Usage: codebox serve [--host H] [--port P] [--state-dir D] [--config FILE]\n"
            "                     [--insecure]\n\n"
            "Serves the REST API (and MCP at /mcp) over HTTP until SIGTERM or SIGINT.\n\n"
            "  --host H        bind address (CODEBOX_HOST)\n"
            "  --port P        port (CODEBOX_PORT)\n"
            "  --state-dir D   session folders, one server each (CODEBOX_STATE_DIR)\n"
            "  --config FILE   settings file instead of ./.env\n"
            "  --insecure      allow a non-loopback --host without CODEBOX_API_TOKENS\n\n");
    gw_config_print_help (stdout, true);
}

/* Lets the gateway hold many connections and kernel sockets at once. */
static void
s_raise_fd_limit (void)
{
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit (RLIMIT_NOFILE, &rl);
    }
}

/* The MCP core's timers (progress, session expiry) and the /sse streams'
 * keep-alives, as a loop source. */
typedef struct {
    gw_mcp_t *mcp;
    gw_mcp_sse_t *sse;
} s_mcp_timers_t;

static int64_t
s_mcp_deadline (void *arg, int64_t now)
{
    (void) now;
    s_mcp_timers_t *t = arg;
    int64_t a = gw_mcp_deadline (t->mcp), b = t->sse ? gw_mcp_sse_deadline (t->sse) : -1;
    return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

static void
s_mcp_tick (void *arg, int64_t now)
{
    s_mcp_timers_t *t = arg;
    gw_mcp_tick (t->mcp, now);
    if (t->sse)
        gw_mcp_sse_tick (t->sse, now);
}

static const gw_loop_source_t s_mcp_source = {
    .deadline = s_mcp_deadline,
    .tick = s_mcp_tick,
};

/* libmicrohttpd, run by the loop thread: in dispatch when its epoll set
 * is readable (before the turn's posted items, so the requests it posts
 * run in that turn), and in every tick (the answers completed in the turn
 * go out in it; its timers). */
static int
s_http_poll_count (void *arg)
{
    (void) arg;
    return 1;
}

static int
s_http_poll_items (void *arg, zmq_pollitem_t *items, int max)
{
    (void) max;
    items[0] = (zmq_pollitem_t) {.fd = gw_http_poll_fd (arg), .events = ZMQ_POLLIN};
    return 1;
}

static void
s_http_dispatch (void *arg, const zmq_pollitem_t *items, int n)
{
    if (n == 1 && items[0].revents)
        gw_http_run (arg);
}

static int64_t
s_http_deadline (void *arg, int64_t now)
{
    int64_t ms = gw_http_timeout_ms (arg);
    return ms < 0 ? -1 : now + ms;
}

static void
s_http_tick (void *arg, int64_t now)
{
    (void) now;
    gw_http_tick (arg);
}

static const gw_loop_source_t s_http_source = {
    .poll_count = s_http_poll_count,
    .poll_items = s_http_poll_items,
    .dispatch = s_http_dispatch,
    .deadline = s_http_deadline,
    .tick = s_http_tick,
};

/* The static tokens, and the issuer's tokens when one is set. NULL with
 * err. */
static gw_auth_t *
s_auth_new (const gw_config_t *config, char *err, size_t err_len)
{
    gw_auth_t *auth = gw_auth_new (gw_config_str (config, GW_SET_API_TOKENS), err, err_len);
    if (auth && *gw_config_str (config, GW_SET_OAUTH_ISSUER)) {
        gw_oauth_settings_t settings = {
            .issuer = gw_config_str (config, GW_SET_OAUTH_ISSUER),
            .audience = gw_config_str (config, GW_SET_OAUTH_AUDIENCE),
            .public_url = gw_config_str (config, GW_SET_PUBLIC_URL),
            .tenant_claim = gw_config_str (config, GW_SET_OAUTH_TENANT_CLAIM),
            .refresh_s = gw_config_int (config, GW_SET_OAUTH_JWKS_REFRESH),
        };
        gw_oauth_t *oauth = gw_oauth_new (&settings, err, err_len);
        if (oauth)
            gw_auth_set_oauth (auth, oauth);
        else
            gw_auth_destroy (&auth);
    }
    return auth;
}

/* For /healthz, from the HTTP edge. */
static bool
s_draining (void *arg)
{
    return gw_server_draining (arg);
}

/* The command line of `codebox serve`. */
typedef struct {
    const char *host, *port, *state_dir, *config_file;
    bool insecure;
} s_args_t;

/* Reads the flags into args. Returns 1 to go on, else the exit code
 * (after --help, or a usage error). */
static int
s_parse_args (int argc, char **argv, s_args_t *args)
{
    static const struct option options[] = {
        {"host", required_argument, NULL, 'H'},
        {"port", required_argument, NULL, 'p'},
        {"state-dir", required_argument, NULL, 's'},
        {"config", required_argument, NULL, 'c'},
        {"insecure", no_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    int opt;
    while ((opt = getopt_long (argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 'H': args->host = optarg; break;
        case 'p': args->port = optarg; break;
        case 's': args->state_dir = optarg; break;
        case 'c': args->config_file = optarg; break;
        case 'i': args->insecure = true; break;
        case 'h': s_help (); return GW_EXIT_OK;
        default: return GW_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf (stderr, "codebox serve: unexpected argument '%s'\n", argv[optind]);
        return GW_EXIT_USAGE;
    }
    return 1;
}

/* The listening socket CODEBOX_HOST and CODEBOX_PORT name, and the
 * Origin rules (*origin_p). A host that is not loopback needs tokens or
 * --insecure. Returns the socket, or -1 with err set. */
static int
s_listen (const gw_config_t *config, const gw_auth_t *auth, bool insecure,
          gw_origin_t **origin_p, gw_bind_t *bind, char *err, size_t err_len)
{
    int port_no = gw_bind_port (gw_config_str (config, GW_SET_PORT));
    if (port_no < 0) {
        snprintf (err, err_len, "port '%s' is not a number from 0 to 65535 "
                  "(CODEBOX_PORT or --port; 0 picks a free one)",
                  gw_config_str (config, GW_SET_PORT));
        return -1;
    }
    *origin_p = gw_origin_new (gw_config_str (config, GW_SET_PUBLIC_URL),
                               gw_config_str (config, GW_SET_ALLOWED_ORIGINS),
                               gw_config_str (config, GW_SET_HOST), err, err_len);
    if (!*origin_p
        || gw_bind_resolve (gw_config_str (config, GW_SET_HOST), port_no, bind, err, err_len) < 0)
        return -1;
    if (!gw_bind_is_loopback ((struct sockaddr *) &bind->addr) && !gw_auth_enabled (auth)
        && !insecure) {
        snprintf (err, err_len, "refusing to listen on %s (not loopback) without tokens: "
                  "set CODEBOX_API_TOKENS, or pass --insecure", bind->display);
        return -1;
    }
    return gw_bind_listen (bind, err, err_len);
}

/* The HTTP server on listen_fd (taken), with the port it got for the
 * Origin check and the connection limits; NULL with err set. */
static gw_http_t *
s_http_new (const gw_config_t *config, int listen_fd, gw_auth_t *auth, gw_origin_t *origin,
            gw_router_t *router, char *err, size_t err_len)
{
    struct sockaddr_storage bound;
    socklen_t bound_len = sizeof bound;
    if (getsockname (listen_fd, (struct sockaddr *) &bound, &bound_len) == 0)
        gw_origin_set_port (origin, ntohs (bound.ss_family == AF_INET6
                                               ? ((struct sockaddr_in6 *) &bound)->sin6_port
                                               : ((struct sockaddr_in *) &bound)->sin_port));
    gw_http_limits_t limits = {
        .per_address = (unsigned) gw_config_int (config, GW_SET_MAX_CONNECTIONS_PER_ADDRESS),
        .idle_s = (unsigned) gw_config_int (config, GW_SET_HTTP_IDLE_TIMEOUT),
        .request_s = (unsigned) gw_config_int (config, GW_SET_HTTP_REQUEST_TIMEOUT),
    };
    return gw_http_new (listen_fd, &limits, auth, origin, gw_router_post, gw_router_gone, router,
                        err, err_len);
}

int
gw_cmd_serve (int argc, char **argv)
{
    s_args_t args = {0};
    int rc = s_parse_args (argc, argv, &args);
    if (rc != 1)
        return rc;
    const char *host = args.host, *port = args.port, *state_dir = args.state_dir;
    const char *config_file = args.config_file;
    bool insecure = args.insecure;
    gw_config_t *config = gw_cli_load_config (config_file);
    if (!config)
        return GW_EXIT_USAGE;
    if ((host && gw_cli_flag (config, GW_SET_HOST, "--host", host))
        || (port && gw_cli_flag (config, GW_SET_PORT, "--port", port))
        || (state_dir && gw_cli_flag (config, GW_SET_STATE_DIR, "--state-dir", state_dir))) {
        gw_config_destroy (&config);
        return GW_EXIT_USAGE;
    }
    /* what a constructor that fails for lack of memory leaves here (it
       writes its reason over it otherwise) */
    char err[1024] = "out of memory";
    if (gw_cli_check_names (config, err, sizeof err) < 0) {
        fprintf (stderr, "codebox serve: %s\n", err);
        gw_config_destroy (&config);
        return GW_EXIT_USAGE;
    }
    snprintf (err, sizeof err, "out of memory");
    gw_auth_t *auth = s_auth_new (config, err, sizeof err);
    if (!auth) {
        fprintf (stderr, "codebox serve: %s\n", err);
        gw_config_destroy (&config);
        return GW_EXIT_USAGE;
    }
    gw_bind_t bind;
    gw_origin_t *origin = NULL;
    int listen_fd = s_listen (config, auth, insecure, &origin, &bind, err, sizeof err);
    if (listen_fd < 0) {
        fprintf (stderr, "codebox serve: %s\n", err);
        gw_origin_destroy (&origin);
        gw_auth_destroy (&auth);
        gw_config_destroy (&config);
        return GW_EXIT_USAGE;
    }
    gw_cli_block_signals ();
    s_raise_fd_limit ();

    int exit_code = GW_EXIT_OK;
    gw_http_t *http = NULL;
    gw_mcp_t *mcp = NULL;
    gw_mcp_http_t *mcp_http = NULL;
    gw_mcp_sse_t *mcp_sse = NULL;
    s_mcp_timers_t timers = {0};
    gw_router_t *router = NULL;
    gw_jupyter_t *jupyter = NULL;
    gw_rest_events_t *rest_events = NULL;
    gw_features_t *features = NULL;
    snprintf (err, sizeof err, "out of memory");
    gw_server_t *server = gw_server_new (config, err, sizeof err);
    if (server && !(features = gw_features_new (server, config, err, sizeof err)))
        gw_server_destroy (&server);
    if (server) {
        gw_features_load_kept (server);    /* what an earlier server kept, paused */
        mcp = gw_mcp_new (server);
        mcp_http = mcp ? gw_mcp_http_new (server, mcp) : NULL;
        mcp_sse = mcp_http ? gw_mcp_sse_new (server, mcp) : NULL;
        jupyter = mcp_sse ? gw_jupyter_new (server) : NULL;
        rest_events = jupyter ? gw_rest_events_new (server) : NULL;
        router = rest_events ? gw_router_new (server, mcp_http, mcp_sse, jupyter, rest_events)
                             : NULL;
        gw_server_set_handler (server, gw_router_handle, router);
        timers = (s_mcp_timers_t) {mcp, mcp_sse};
        if (mcp)
            gw_loop_add_source (gw_server_loop (server), &s_mcp_source, &timers);
    }
    if (server && router) {
        http = s_http_new (config, listen_fd, auth, origin, router, err, sizeof err);
        listen_fd = -1;
    }
    if (listen_fd >= 0)
        close (listen_fd);
    if (!server || !http) {
        fprintf (stderr, "codebox serve: %s\n", err);
        exit_code = GW_EXIT_USAGE;
    } else {
        gw_http_set_metrics (http, gw_server_metrics (server));
        gw_http_set_draining (http, s_draining, server);
        gw_loop_add_source (gw_server_loop (server), &s_http_source, http);
        jp_log (JP_LOG_ALWAYS, "serving http://%s:%d (REST API; MCP at /mcp) state=%s "
                 "kernel=%s auth=%s", bind.display, gw_http_port (http), gw_server_state_dir (server),
                 gw_config_str (config, GW_SET_DEFAULT_KERNEL),
                 gw_auth_oauth (auth) ? "oauth" : gw_auth_enabled (auth) ? "tokens" : "none");
        gw_server_run (server);
    }
    gw_features_stop (features);    /* answers running downloads while HTTP still works */
    gw_mcp_sse_close (mcp_sse);     /* open /sse streams end before the HTTP server */
    gw_jupyter_close (jupyter);     /* and websockets */
    gw_rest_events_close (rest_events);     /* and REST event streams */
    if (server)                     /* what was posted meanwhile, while its router lives */
        gw_loop_drain (gw_server_loop (server));
    gw_http_destroy (&http);
    gw_router_destroy (&router);
    gw_jupyter_destroy (&jupyter);
    gw_rest_events_destroy (&rest_events);
    gw_mcp_sse_destroy (&mcp_sse);
    gw_mcp_http_destroy (&mcp_http);
    gw_mcp_destroy (&mcp);
    gw_features_destroy (&features);
    gw_server_destroy (&server);
    gw_auth_destroy (&auth);
    gw_origin_destroy (&origin);
    gw_config_destroy (&config);
    if (exit_code == GW_EXIT_OK)
        jp_log (JP_LOG_ALWAYS, "stopped");
    return exit_code;
}
