/* gw_http: the HTTP front end on libmicrohttpd, run by the loop thread
 * (libmicrohttpd's epoll set is one of the loop's poll items, and the loop
 * calls gw_http_run when it is readable and after every turn, so answers
 * completed in that turn go out in it). It reads each request and its
 * body under a size limit, checks the bearer token, parses the
 * X-Codebox-* overrides, then suspends the connection and posts the
 * request to the loop's mailbox; the completion resumes the connection and
 * the next gw_http_run sends the answer. /healthz is answered at once.
 * A PUT to a route whose body goes to a file (gw_routes' body column) is
 * posted before its body is read: the loop refuses it (nothing is read)
 * or gives an upload (gw_upload), which each piece of the body is written
 * to as it arrives; the request is posted again once it is all there.
 * One log line per request. No thread of its own: a request costs no
 * hand-off between threads (a thread pool cost one each way, about 95 us
 * of a REST execution's two requests here; docs/PERFORMANCE.md).
 * This file is the server and each connection's course through it;
 * reading a request and its refusals is gw_http_request, building the
 * answer gw_http_answer.
 *
 * Threads: the loop thread runs everything here; gw_http_destroy (after
 * the loop ends) runs libmicrohttpd itself while it drains. */
#include "gw_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "gw_conns.h"
#include "gw_http_answer.h"
#include "gw_http_conn.h"
#include "gw_http_request.h"
#include "gw_routes.h"
#include "gw_stream.h"
#include "jp_time.h"
#include "jp_log.h"

#define S_DRAIN_MS 3000         /* how long shutdown waits for answers to go out */
#define S_LOOK_MS 1000          /* how often a body that stalled is looked at */

struct gw_http {
    struct MHD_Daemon *daemon;
    gw_http_post_fn *post;
    gw_http_gone_fn *gone;
    void *post_arg;
    const gw_auth_t *auth;
    const gw_origin_t *origin;  /* Host and Origin rules (gw_origin) */
    gw_metrics_t *metrics;
    int port;
    atomic_int unsent;          /* answered by the loop, not yet sent */
    gw_http_answers_t answers;  /* resumed since the last run; answer bytes held */
    gw_http_state_fn *draining; /* /healthz asks it (any thread), or NULL */
    void *draining_arg;
    gw_conns_t *conns;          /* request deadlines, the fair per-address bound */
    gw_http_conn_t *receiving;  /* connections writing a body to a file */
    int64_t next_look_ms;       /* when those that stalled are looked at next */
};

/* Lists a connection whose body is being written to a file. */
static void
s_receiving_add (gw_http_conn_t *c)
{
    gw_http_t *http = c->http;
    c->prev = NULL;
    c->next = http->receiving;
    if (http->receiving)
        http->receiving->prev = c;
    http->receiving = c;
    c->listed = true;
    c->body_ms = jp_time_now_ms ();
    if (!c->next)
        http->next_look_ms = c->body_ms + S_LOOK_MS;
}

static void
s_receiving_remove (gw_http_conn_t *c)
{
    if (!c->listed)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        c->http->receiving = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    c->listed = false;
}

/* Looks at the connections whose body stalled for S_LOOK_MS: a client that
 * left is made known to libmicrohttpd. Its epoll set is edge-triggered and
 * it takes a short read as "nothing more for now", so an end that came
 * with the last bytes it read is seen only at the idle timeout; shutting
 * the read side wakes it, and its next read sees the end and closes the
 * connection (its upload's file goes with it, in s_completed). */
static void
s_look_at_receiving (gw_http_t *http, int64_t now)
{
    for (gw_http_conn_t *c = http->receiving; c; c = c->next)
        if (now - c->body_ms >= S_LOOK_MS && gw_request_client_gone (&c->req)) {
            jp_log_debug ("http event=client-gone path=%s why=\"left mid-body\"", c->req.path);
            shutdown (c->req.client_fd, SHUT_RD);
        }
    http->next_look_ms = now + S_LOOK_MS;
}

/* Called by the loop thread when the answer is set: wakes the connection
 * (sent by the next gw_http_run). */
static void
s_complete (gw_request_t *req)
{
    gw_http_conn_t *c = req->transport;
    if (req->body_at == GW_BODY_AHEAD && req->upload && !req->status) {
        /* not an answer: the body may come now (gw_request_read_body_into) */
        c->posted = false;
        c->again = true;
        s_receiving_add (c);
        MHD_resume_connection (c->connection);
        gw_http_note_resume (c->answers);
        return;
    }
    atomic_fetch_add (&c->http->unsent, 1);
    atomic_store (&c->done, true);
    MHD_resume_connection (c->connection);
    gw_http_note_resume (c->answers);
}

/* Posts the request to the loop with its connection suspended until the
 * loop completes it. */
static enum MHD_Result
s_post (gw_http_conn_t *c, struct MHD_Connection *mc)
{
    if (!c->req.body) {
        c->req.body = strdup ("");
        if (!c->req.body)
            return MHD_NO;
    }
    c->posted = true;
    const union MHD_ConnectionInfo *fd_info =
        MHD_get_connection_info (mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (fd_info) {
        c->req.client_fd = fd_info->connect_fd;
        c->req.has_client_fd = true;
    }
    MHD_suspend_connection (mc);
    c->http->post (&c->req, c->http->post_arg);
    return MHD_YES;
}

/* First call for a connection: the request from its headers. */
static gw_http_conn_t *
s_conn_new (gw_http_t *http, struct MHD_Connection *mc, const char *url, const char *method)
{
    gw_http_conn_t *c = calloc (1, sizeof *c);
    if (!c)
        return NULL;
    c->http = http;
    c->answers = &http->answers;
    c->connection = mc;
    c->started_ms = jp_time_now_ms ();
    c->req.transport = c;
    c->req.complete = s_complete;
    gw_http_request_read (c, url, method, http->auth, http->origin);
    return c;
}

static enum MHD_Result
s_access (void *cls, struct MHD_Connection *mc, const char *url, const char *method,
          const char *version, const char *upload_data, size_t *upload_data_size,
          void **con_cls)
{
    (void) version;
    gw_http_t *http = cls;
    gw_http_conn_t *c = *con_cls;
    if (!c) {
        c = s_conn_new (http, mc, url, method);
        if (!c)
            return MHD_NO;
        *con_cls = c;
        /* refusals go out at once, before any body is read (and without
           a 100 Continue for Expect: 100-continue) */
        if (c->early)
            return gw_http_send_error (c, c->early, c->early_message);
        if (c->preflight)
            return gw_http_send (c);
        if (c->too_large)
            return gw_http_send_too_large (c);
        if (c->to_file) {
            /* the loop says where the body goes, or refuses it unread
               (its answer is queued on the first call again, so no
               100 Continue goes and libmicrohttpd reads no body) */
            c->req.body_at = GW_BODY_AHEAD;
            return s_post (c, mc);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (c->to_file)
            gw_http_conn_write (c, upload_data, *upload_data_size);
        else if (!c->early)
            gw_http_conn_append (c, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (c->again) {
        /* the first call again, after the loop gave an upload: now
           libmicrohttpd reads the body (after a 100 Continue if asked) */
        c->again = false;
        return MHD_YES;
    }
    /* the request is whole: from here it is being answered (no deadline) */
    const union MHD_ConnectionInfo *sc =
        MHD_get_connection_info (mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (sc)
        gw_conns_request_done (sc->socket_context);
    if (c->early)
        return gw_http_send_error (c, c->early, c->early_message);
    if (c->too_large)
        return gw_http_send_too_large (c);
    if (atomic_load (&c->done))
        return gw_http_send (c);
    if (c->posted) {
        /* resumed spuriously; keep waiting (a body not yet asked for must
           not be read meanwhile) */
        if (c->req.body_at == GW_BODY_AHEAD)
            MHD_suspend_connection (mc);
        return MHD_YES;
    }
    if (c->to_file) {
        /* the whole body is in the upload (or its error is): the loop
           moves it into place and answers */
        c->req.body_at = GW_BODY_WRITTEN;
        s_receiving_remove (c);
        return s_post (c, mc);
    }
    if (!c->req.body) {
        c->req.body = strdup ("");
        if (!c->req.body)
            return MHD_NO;
    }
    if (gw_oauth_metadata_path (url)) {
        /* RFC 9728: what a client needs to find the issuer */
        gw_oauth_t *oauth = gw_auth_oauth (http->auth);
        if (!oauth)
            return gw_http_send_error (c, GW_E_NOT_FOUND, "no OAuth issuer is set here "
                                       "(CODEBOX_OAUTH_ISSUER)");
        c->req.route = "/.well-known/oauth-protected-resource";
        c->req.status = 200;
        c->req.json = gw_oauth_resource_metadata (oauth);
        return gw_http_send (c);
    }
    if (strcmp (url, "/healthz") == 0) {
        c->req.route = "/healthz";
        c->req.status = 200;
        /* draining is still healthy: a router keeps sending a node's own
           sessions there; the node refuses new ones itself */
        bool draining = http->draining && http->draining (http->draining_arg);
        c->req.json = json_pack ("{s:s}", "status", draining ? "draining" : "ok");
        return gw_http_send (c);
    }
    return s_post (c, mc);
}

/* The route label a request is counted under: the one its handler set,
 * else (answered here: refused, 405, a preflight) the label of the route
 * whose shape its path has, else NULL ("unmatched"): never the path, which
 * is the client's text and would make a series per path. */
static const char *
s_route_label (const gw_http_conn_t *c)
{
    if (c->req.route || !c->req.path)
        return c->req.route;
    size_t len = strlen (c->req.path) + 1;
    char *buf = malloc (len);
    gw_route_match_t m;
    const char *label = buf && gw_routes_match (c->req.path, buf, len, &m) ? m.label : NULL;
    free (buf);
    return label;
}

/* Logs the request and frees it once libmicrohttpd is done with it. */
static void
s_completed (void *cls, struct MHD_Connection *mc, void **con_cls,
             enum MHD_RequestTerminationCode toe)
{
    (void) toe;
    gw_http_conn_t *c = *con_cls;
    const union MHD_ConnectionInfo *sc =
        MHD_get_connection_info (mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    /* ready for the next request: its deadline starts now (a switched
       connection, a websocket, never is) */
    if (sc && !(c && c->req.upgrade && c->req.status == 101))
        gw_conns_answer_done (((gw_http_t *) cls)->conns, sc->socket_context,
                              jp_time_now_ms ());
    if (!c)
        return;
    if (atomic_load (&c->done))
        atomic_fetch_sub (&c->http->unsent, 1);
    if (c->req.upgrade) {
        /* the switch never happened (or is done): let the owner know */
        bool never = c->upgrade ? !atomic_exchange (&c->upgrade->claimed, true) : true;
        if (never)
            c->req.upgrade (NULL, c->req.upgrade_arg);
        if (c->upgrade)
            gw_http_upgrade_release (c->upgrade);
    }
    /* a posted request not yet answered is still the loop's: libmicrohttpd
       only ends a suspended connection after it was resumed */
    if (c->http->metrics)
        gw_metrics_http (c->http->metrics, c->req.tenant, c->req.method, s_route_label (c),
                         c->req.status);
    const char *logged = c->req.path ? c->req.path : "?";
    if (strncmp (logged, "/signed/", 8) == 0)
        logged = "/signed/...";    /* a signed link is a credential: never logged */
    if (c->req.stream && !c->req.log_extra[0])
        gw_stream_note (c->req.stream, c->req.log_extra, sizeof c->req.log_extra);
    /* the method, path and tenant are quoted by jp_log where they need it
       (a path "/a status=200" stays one field); log_extra holds fields
       quoted by whoever wrote them (gw_mcp) */
    jp_log_info ("http method=%s path=%s status=%d ms=%lld%s%s tenant=%s", c->req.method,
             logged, c->req.status,
             (long long) (jp_time_now_ms () - c->started_ms), c->req.log_extra,
             toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " client=gone", c->req.tenant);
    if (c->req.stream) {
        if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && !gw_stream_closed (c->req.stream)) {
            /* the client left mid-stream: the application cancels the call */
            gw_stream_set_gone (c->req.stream);
            if (c->http->gone)
                c->http->gone (c->req.stream, c->http->post_arg);
        }
        gw_stream_unref (&c->req.stream);
    }
    free (c->req.headers);
    free (c->req.path);
    free (c->req.query);
    free (c->req.body);
    s_receiving_remove (c);
    gw_upload_destroy (&c->req.upload);     /* its file too, unless moved into place */
    free (c->req.raw);
    if (c->req.has_file)
        close (c->req.file_fd);     /* never sent */
    if (c->req.reader)
        c->req.reader_free (c->req.reader_arg);     /* never sent */
    json_decref (c->req.json);
    free (c);
    *con_cls = NULL;
}

/* Sets TCP_NODELAY on every new connection (answers go out at once) and
 * watches it for its request deadline (gw_conns), until it closes. */
static void
s_notify_connection (void *cls, struct MHD_Connection *mc, void **socket_context,
                     enum MHD_ConnectionNotificationCode toe)
{
    gw_http_t *self = cls;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        gw_conns_closed (self->conns, *socket_context);
        *socket_context = NULL;
        return;
    }
    if (toe != MHD_CONNECTION_NOTIFY_STARTED)
        return;
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info (mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *addr =
        MHD_get_connection_info (mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    int one = 1;
    if (info) {
        setsockopt (info->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const struct sockaddr *sa = addr ? addr->client_addr : NULL;
        socklen_t len = !sa ? 0 : sa->sa_family == AF_INET6 ? sizeof (struct sockaddr_in6)
                                                            : sizeof (struct sockaddr_in);
        *socket_context = gw_conns_opened (self->conns, info->connect_fd, sa, len,
                                           jp_time_now_ms ());
    }
}

/* libmicrohttpd's accept policy: the per-address bound, fair to clients
 * that behave (a slow connection of the address makes room). */
static enum MHD_Result
s_admit (void *cls, const struct sockaddr *addr, socklen_t len)
{
    gw_http_t *self = cls;
    if (gw_conns_admit (self->conns, addr, len, jp_time_now_ms ()))
        return MHD_YES;
    jp_log_info ("http event=refused why=\"too many connections from one address\"");
    return MHD_NO;
}

/* libmicrohttpd's own messages, as log lines like every other (one line,
 * timestamped, at warn). */
static void
s_mhd_log (void *cls, const char *fmt, va_list ap)
{
    (void) cls;
    char text[512];
    vsnprintf (text, sizeof text, fmt, ap);
    text[strcspn (text, "\n")] = '\0';
    jp_log_warn ("http event=libmicrohttpd message=%s", text);
}

/* libmicrohttpd's unescaping of the path and of each query argument,
 * except that an encoded NUL ("%00") becomes DEL (0x7f) instead of ending
 * the string early: "input/a%00b" would otherwise reach the handlers as
 * "input/a", and "/sessions/s1%00x" as session s1. DEL is a control
 * character, which every path and id check refuses, so such a request
 * gets a clear 400 or 404 for what it asked, never an answer for
 * something else. */
static size_t
s_unescape (void *cls, struct MHD_Connection *mc, char *text)
{
    (void) cls;
    (void) mc;
    size_t len = MHD_http_unescape (text);
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\0')
            text[i] = 0x7f;
    return len;
}

gw_http_t *
gw_http_new (int listen_fd, const gw_http_limits_t *limits, const gw_auth_t *auth,
             const gw_origin_t *origin, gw_http_post_fn *post, gw_http_gone_fn *gone,
             void *post_arg, char *err,
             size_t err_len)
{
    gw_http_t *self = calloc (1, sizeof *self);
    if (!self) {
        close (listen_fd);
        return NULL;
    }
    self->post = post;
    self->gone = gone;
    self->post_arg = post_arg;
    self->auth = auth;
    self->origin = origin;
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;
    if (getsockname (listen_fd, (struct sockaddr *) &addr, &len) == 0)
        self->port = ntohs (addr.ss_family == AF_INET6
                                ? ((struct sockaddr_in6 *) &addr)->sin6_port
                                : ((struct sockaddr_in *) &addr)->sin_port);
    /* a connection must deliver its request within request_s, and within
       the idle timeout when that is longer (a keep-alive wait is idle) */
    unsigned request_s = limits->request_s > limits->idle_s ? limits->request_s : limits->idle_s;
    self->conns = gw_conns_new (limits->per_address, (int64_t) request_s * 1000);
    if (!self->conns) {
        snprintf (err, err_len, "out of memory");
        close (listen_fd);
        free (self);
        return NULL;
    }
    self->daemon = MHD_start_daemon (
        MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE | MHD_USE_ITC
        | MHD_USE_ERROR_LOG,
        0, s_admit, self, s_access, self,
        MHD_OPTION_EXTERNAL_LOGGER, s_mhd_log, NULL,
        MHD_OPTION_LISTEN_SOCKET, listen_fd,
        MHD_OPTION_CONNECTION_LIMIT, 4000u,
        MHD_OPTION_CONNECTION_TIMEOUT, limits->idle_s,
        MHD_OPTION_NOTIFY_COMPLETED, s_completed, self,
        MHD_OPTION_NOTIFY_CONNECTION, s_notify_connection, self,
        MHD_OPTION_UNESCAPE_CALLBACK, s_unescape, NULL,
        MHD_OPTION_END);
    if (!self->daemon) {
        snprintf (err, err_len, "cannot start the HTTP server: %s", strerror (errno));
        close (listen_fd);
        gw_conns_destroy (&self->conns);
        free (self);
        return NULL;
    }
    return self;
}

void
gw_http_set_metrics (gw_http_t *self, gw_metrics_t *metrics)
{
    self->metrics = metrics;
}

void
gw_http_set_draining (gw_http_t *self, gw_http_state_fn *fn, void *arg)
{
    self->draining = fn;
    self->draining_arg = arg;
}

int
gw_http_poll_fd (const gw_http_t *self)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info (self->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info ? info->epoll_fd : -1;
}

void
gw_http_run (gw_http_t *self)
{
    atomic_store (&self->answers.resumed, false);
    MHD_run (self->daemon);
}

/* libmicrohttpd's own timer: ms until it is due, or -1. */
static int64_t
s_mhd_timeout_ms (gw_http_t *self)
{
    MHD_UNSIGNED_LONG_LONG ms = 0;
    if (MHD_get_timeout (self->daemon, &ms) != MHD_YES)
        return -1;
    return ms > INT64_MAX ? INT64_MAX : (int64_t) ms;
}

void
gw_http_tick (gw_http_t *self)
{
    int64_t now = jp_time_now_ms ();
    if (gw_conns_sweep (self->conns, now)) {
        jp_log_info ("http event=cut why=\"no whole request in time\"");
        gw_http_run (self);     /* libmicrohttpd closes them now */
    }
    if (self->receiving && now >= self->next_look_ms)
        s_look_at_receiving (self, now);
    /* an answer sent leaves its connection wanting libmicrohttpd again at
       once (to finish it, then to read the next request): here, not in
       another turn of the whole loop (two turns a call, each a poll(2)
       and every source asked); three runs at most, so a busy edge cannot
       keep the loop from the kernels */
    for (int run = 0; run < 3; run++) {
        if (!atomic_load (&self->answers.resumed) && s_mhd_timeout_ms (self) != 0)
            break;
        gw_http_run (self);
    }
}

int64_t
gw_http_timeout_ms (gw_http_t *self)
{
    if (atomic_load (&self->answers.resumed))
        return 0;       /* resumed after this turn's tick: the next turn sends */
    int64_t ms = s_mhd_timeout_ms (self);
    int64_t now = jp_time_now_ms ();
    if (self->receiving) {
        int64_t look = self->next_look_ms > now ? self->next_look_ms - now : 0;
        if (ms < 0 || look < ms)
            ms = look;
    }
    int64_t due = gw_conns_deadline (self->conns);
    if (due >= 0) {
        int64_t sweep = due > now ? due - now : 0;
        if (ms < 0 || sweep < ms)
            ms = sweep;
    }
    return ms;
}

int
gw_http_port (const gw_http_t *self)
{
    return self->port;
}

void
gw_http_destroy (gw_http_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_http_t *self = *self_p;
    if (self->daemon) {
        /* answers given at shutdown are sent before the connections close:
           no new connections, then a bounded wait for the unsent ones (an
           endless SSE stream would otherwise hold the exit) */
        MHD_socket listener = MHD_quiesce_daemon (self->daemon);
        int64_t deadline = jp_time_now_ms () + S_DRAIN_MS;
        while (atomic_load (&self->unsent) > 0 && jp_time_now_ms () < deadline)
            MHD_run_wait (self->daemon, 5);
        MHD_stop_daemon (self->daemon);
        if (listener != MHD_INVALID_SOCKET)
            close (listener);
    }
    gw_conns_destroy (&self->conns);
    free (*self_p);
    *self_p = NULL;
}
