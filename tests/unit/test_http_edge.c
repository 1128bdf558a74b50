/* test_http_edge: the pure parts of the HTTP edge: Host and Origin rules
 * (gw_origin: exact names, never prefixes; loopback, the public URL, the
 * bind address; allowed origins normalised; null refused), the route table
 * with its methods (gw_routes), ports and --host parsing (gw_bind), the
 * extension-to-language map of `codebox exec` (ks_search), the bound
 * on what a streamed answer keeps unread (gw_stream), and the /metrics
 * text (gw_metrics: escaped labels, bounded series, a tenant's view). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gw_ansi.h"
#include "gw_bind.h"
#include "gw_metrics.h"
#include "gw_request.h"
#include "gw_origin.h"
#include "gw_routes.h"
#include "gw_stream.h"
#include "ks_search.h"
#include "gw_conns.h"
#include "suites.h"

static gw_origin_t *
s_policy (const char *public_url, const char *allowed, const char *bind)
{
    char err[256];
    gw_origin_t *o = gw_origin_new (public_url, allowed, bind, err, sizeof err);
    ck_assert_msg (o != NULL, "%s", err);
    gw_origin_set_port (o, 8000);
    return o;
}

static gw_origin_verdict_t
s_check (const gw_origin_t *o, const char *host, const char *origin)
{
    char why[256];
    return gw_origin_check (o, host, origin, why, sizeof why);
}

START_TEST (test_host_rules)
{
    gw_origin_t *o = s_policy ("https://code.example.com/base", "", "127.0.0.1");
    static const struct {
        const char *host;
        bool ok;
    } cases[] = {
        {"localhost", true}, {"localhost:8000", true}, {"LOCALHOST:1", true},
        {"127.0.0.1:8000", true}, {"127.1.2.3", true}, {"[::1]:8000", true}, {"[::1]", true},
        {"code.example.com", true}, {"code.example.com:443", true},
        {"evil.example", false}, {"evil.example:8000", false},
        {"127.0.0.1.evil.example:8000", false}, {"localhost.evil.example", false},
        {"evil-localhost", false}, {"code.example.com.evil.example", false},
        {"xcode.example.com", false}, {"128.0.0.1", false}, {"[::2]", false},
        {"", false}, {"localhost:99999", false}, {"localhost:80x", false},
        {"user@localhost", false}, {"local host", false}, {"[::1", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg ((s_check (o, cases[i].host, NULL) != GW_ORIGIN_REFUSED) == cases[i].ok,
                       "Host '%s'", cases[i].host);
    ck_assert_int_eq (s_check (o, NULL, NULL), GW_ORIGIN_SAME);
    gw_origin_destroy (&o);
}
END_TEST

START_TEST (test_origin_rules)
{
    gw_origin_t *o = s_policy ("https://code.example.com", "https://app.example.com, "
                               "http://LOCALHOST:3000/", "");
    static const struct {
        const char *origin;
        gw_origin_verdict_t verdict;
    } cases[] = {
        {"http://localhost:8000", GW_ORIGIN_SAME}, {"http://127.0.0.1:8000", GW_ORIGIN_SAME},
        {"https://[::1]:8000", GW_ORIGIN_SAME}, {"https://code.example.com", GW_ORIGIN_SAME},
        {"https://code.example.com:443", GW_ORIGIN_SAME},
        {"https://app.example.com", GW_ORIGIN_CORS}, {"http://localhost:3000", GW_ORIGIN_CORS},
        {"null", GW_ORIGIN_REFUSED}, {"http://evil.example", GW_ORIGIN_REFUSED},
        {"http://localhost:8001", GW_ORIGIN_REFUSED}, {"http://localhost", GW_ORIGIN_REFUSED},
        {"http://127.0.0.1.evil.example:8000", GW_ORIGIN_REFUSED},
        {"https://app.example.com.evil.example", GW_ORIGIN_REFUSED},
        {"http://app.example.com", GW_ORIGIN_REFUSED},
        {"https://app.example.com:8443", GW_ORIGIN_REFUSED},
        {"file://", GW_ORIGIN_REFUSED}, {"chrome-extension://abc", GW_ORIGIN_REFUSED},
        {"", GW_ORIGIN_REFUSED}, {"localhost:8000", GW_ORIGIN_REFUSED},
        {"http://user@localhost:8000", GW_ORIGIN_REFUSED},
        {"http://localhost:8000/path", GW_ORIGIN_REFUSED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg (s_check (o, "localhost", cases[i].origin) == cases[i].verdict,
                       "Origin '%s'", cases[i].origin);
    /* a good Origin does not save a bad Host */
    ck_assert_int_eq (s_check (o, "evil.example", "http://localhost:8000"), GW_ORIGIN_REFUSED);
    gw_origin_destroy (&o);
}
END_TEST

START_TEST (test_bad_settings)
{
    char err[256];
    ck_assert_ptr_null (gw_origin_new ("", "app.example.com", "", err, sizeof err));
    ck_assert_ptr_null (gw_origin_new ("", "https://a.example/x", "", err, sizeof err));
    ck_assert_ptr_null (gw_origin_new ("ftp://x", "", "", err, sizeof err));
    gw_origin_t *o = s_policy ("", "", "0.0.0.0");
    /* a wildcard bind accepts no Host by itself */
    ck_assert_int_eq (s_check (o, "0.0.0.0", NULL), GW_ORIGIN_REFUSED);
    gw_origin_destroy (&o);
    o = s_policy ("", "", "10.1.2.3");
    ck_assert_int_eq (s_check (o, "10.1.2.3:8000", NULL), GW_ORIGIN_SAME);
    ck_assert_int_eq (s_check (o, "10.1.2.33", NULL), GW_ORIGIN_REFUSED);
    gw_origin_destroy (&o);
}
END_TEST

START_TEST (test_routes)
{
    static const struct {
        const char *path, *allow;
    } cases[] = {
        {"/healthz", "GET, HEAD"}, {"/metrics", "GET, HEAD"}, {"/kernelspecs", "GET, HEAD"},
        {"/sessions", "GET, HEAD, POST"}, {"/sessions/", "GET, HEAD, POST"},
        {"/sessions/a", "GET, HEAD, DELETE"}, {"/sessions/a/artifacts", "GET, HEAD"},
        {"/sessions/a/files/input/x.csv", "GET, HEAD, PUT"}, {"/execute", "POST"},
        {"/execute/r/status", "GET, HEAD"}, {"/execute/r/results", "GET, HEAD"},
        {"/execute/r/cancel", "POST"}, {"/sql", "POST"}, {"/mcp", "GET, POST, DELETE"},
        {"/signed/t/s/1/x/p", "GET, HEAD"},
        {"/", NULL}, {"/nope", NULL}, {"/sessions/a/b", NULL}, {"/execute/r", NULL},
        {"/execute/r/other", NULL}, {"/healthz/x", NULL}, {"/sessions/a/files", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *allow = gw_routes_allow (cases[i].path);
        if (!cases[i].allow)
            ck_assert_msg (allow == NULL, "%s", cases[i].path);
        else
            ck_assert_msg (allow && strcmp (allow, cases[i].allow) == 0, "%s: %s",
                           cases[i].path, allow ? allow : "NULL");
    }
    /* parameters: {} is one part, ** the rest of the path */
    char buf[128];
    gw_route_match_t m;
    ck_assert (gw_routes_match ("/sessions/abc/files/in/x.csv", buf, sizeof buf, &m));
    ck_assert_int_eq (m.id, GW_ROUTE_files);
    ck_assert_int_eq (m.n_params, 2);
    ck_assert_str_eq (m.params[0], "abc");
    ck_assert_str_eq (m.params[1], "in/x.csv");
    ck_assert_str_eq (m.label, "/sessions/{id}/files/{path}");
    ck_assert (gw_routes_match ("//execute//r1/status/", buf, sizeof buf, &m));
    ck_assert_int_eq (m.id, GW_ROUTE_status);
    ck_assert_str_eq (m.params[0], "r1");
    ck_assert (gw_routes_match ("/mcp", buf, sizeof buf, &m));
    ck_assert_int_eq (m.id, GW_ROUTE_mcp);
    ck_assert_int_eq (m.n_params, 0);
    ck_assert (!gw_routes_match ("/sessions/abc/files/x", buf, 4, &m));   /* buffer too small */
    ck_assert (gw_routes_allows ("GET, HEAD, POST", "POST"));
    ck_assert (gw_routes_allows ("GET, HEAD, POST", "HEAD"));
    ck_assert (!gw_routes_allows ("GET, HEAD, POST", "PUT"));
    ck_assert (!gw_routes_allows ("GET, HEAD", "GE"));
    ck_assert (!gw_routes_allows ("GET, HEAD", "HEADX"));
}
END_TEST

START_TEST (test_ports_and_hosts)
{
    ck_assert_int_eq (gw_bind_port ("0"), 0);
    ck_assert_int_eq (gw_bind_port ("8000"), 8000);
    ck_assert_int_eq (gw_bind_port ("65535"), 65535);
    ck_assert_int_eq (gw_bind_port ("65536"), -1);
    ck_assert_int_eq (gw_bind_port ("99999"), -1);
    ck_assert_int_eq (gw_bind_port ("-1"), -1);
    ck_assert_int_eq (gw_bind_port ("80x"), -1);
    ck_assert_int_eq (gw_bind_port (""), -1);
    ck_assert_int_eq (gw_bind_port ("000080"), -1);
    char err[256];
    gw_bind_t b;
    ck_assert_int_eq (gw_bind_resolve ("127.0.0.1", 80, &b, err, sizeof err), 0);
    ck_assert (gw_bind_is_loopback ((struct sockaddr *) &b.addr));
    ck_assert_int_eq (gw_bind_resolve ("127.9.8.7", 80, &b, err, sizeof err), 0);
    ck_assert (gw_bind_is_loopback ((struct sockaddr *) &b.addr));
    ck_assert_int_eq (gw_bind_resolve ("::1", 80, &b, err, sizeof err), 0);
    ck_assert (gw_bind_is_loopback ((struct sockaddr *) &b.addr));
    ck_assert_str_eq (b.display, "[::1]");
    ck_assert_int_eq (gw_bind_resolve ("[::1]", 80, &b, err, sizeof err), 0);
    ck_assert (gw_bind_is_loopback ((struct sockaddr *) &b.addr));
    ck_assert_int_eq (gw_bind_resolve ("localhost", 80, &b, err, sizeof err), 0);
    ck_assert (gw_bind_is_loopback ((struct sockaddr *) &b.addr));
    ck_assert_str_eq (b.display, "localhost");
    ck_assert_int_eq (gw_bind_resolve ("0.0.0.0", 80, &b, err, sizeof err), 0);
    ck_assert (!gw_bind_is_loopback ((struct sockaddr *) &b.addr));
    ck_assert_int_eq (gw_bind_resolve ("::ffff:127.0.0.1", 80, &b, err, sizeof err), 0);
    ck_assert (gw_bind_is_loopback ((struct sockaddr *) &b.addr));
    ck_assert_int_eq (gw_bind_resolve ("[127.0.0.1]", 80, &b, err, sizeof err), -1);
    ck_assert_int_eq (gw_bind_resolve ("", 80, &b, err, sizeof err), -1);
}
END_TEST

START_TEST (test_exec_languages)
{
    ck_assert_str_eq (ks_search_language_of ("app.py"), "python");
    ck_assert_str_eq (ks_search_language_of ("dir.v2/app.JS"), "javascript");
    ck_assert_str_eq (ks_search_language_of ("x.mjs"), "javascript");
    ck_assert_str_eq (ks_search_language_of ("analysis.R"), "r");
    ck_assert_str_eq (ks_search_language_of ("model.m"), "octave");
    ck_assert_ptr_null (ks_search_language_of ("Makefile"));
    ck_assert_ptr_null (ks_search_language_of (".py"));
    ck_assert_ptr_null (ks_search_language_of ("dir.py/file"));
    ck_assert_ptr_null (ks_search_language_of ("x."));
    ck_assert_ptr_null (ks_search_language_of ("x.unknown"));
}
END_TEST

START_TEST (test_request_headers)
{
    gw_request_t req = {0};
    ck_assert_ptr_null (gw_request_header (&req, "Host"));
    ck_assert_int_eq (gw_request_headers_add (&req.headers, &req.headers_len, 1024, "Host",
                                              "localhost:8000"), 0);
    ck_assert_int_eq (gw_request_headers_add (&req.headers, &req.headers_len, 1024,
                                              "Mcp-Session-Id", "abc"), 0);
    ck_assert_int_eq (gw_request_headers_add (&req.headers, &req.headers_len, 1024, "Empty",
                                              ""), 0);
    ck_assert_str_eq (gw_request_header (&req, "host"), "localhost:8000");
    ck_assert_str_eq (gw_request_header (&req, "MCP-SESSION-ID"), "abc");
    ck_assert_str_eq (gw_request_header (&req, "Empty"), "");
    ck_assert_ptr_null (gw_request_header (&req, "Mcp-Session"));
    /* the block is bounded: what does not fit is refused, nothing is cut */
    char big[1100];
    memset (big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ck_assert_int_eq (gw_request_headers_add (&req.headers, &req.headers_len, 1024, "Big", big),
                      -ENOSPC);
    ck_assert_ptr_null (gw_request_header (&req, "Big"));
    free (req.headers);
    /* answer headers */
    for (int i = 0; i < 100; i++)
        if (gw_request_set_header (&req, "Allow", "GET, POST") < 0)
            break;
    ck_assert_uint_le (req.reply_headers_len, sizeof req.reply_headers);
    ck_assert_str_eq (req.reply_headers, "Allow");
}
END_TEST

START_TEST (test_ansi_strip)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "plain"},
        {"\033[0;31mValueError\033[0m: bad", "ValueError: bad"},
        {"\033[38;5;241m1\033[39m", "1"},
        {"a\033cb", "ab"},
        {"cut \033[31", "cut "},
        {"cut \033", "cut "},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *copy = strdup (cases[i].in);
        size_t len = gw_ansi_strip (copy);
        ck_assert_str_eq (copy, cases[i].out);
        ck_assert_uint_eq (len, strlen (cases[i].out));
        free (copy);
    }
}
END_TEST

START_TEST (test_stream_cut_when_unread)
{
    gw_stream_t *st = gw_stream_new ();
    ck_assert_ptr_nonnull (st);
    char buf[64];
    /* what is read makes room: more than the bound passes through, with
       a little always left unread (read bytes are reclaimed) */
    size_t chunk = 8u << 20;
    char *mb = malloc (chunk);
    ck_assert_ptr_nonnull (mb);
    memset (mb, 'x', chunk);
    char *sink = malloc (chunk);
    gw_stream_write (st, mb, 16);
    for (size_t i = 0; i < GW_STREAM_MAX_UNREAD / chunk + 4; i++) {
        gw_stream_write (st, mb, chunk);
        ck_assert_int_eq (gw_stream_read (st, sink, chunk), (int) chunk);
    }
    ck_assert (!gw_stream_gone (st));
    ck_assert_int_eq (gw_stream_read (st, sink, chunk), 16);
    /* unread up to the bound is kept; past it, dropped and cut */
    for (size_t i = 0; i < GW_STREAM_MAX_UNREAD / chunk; i++)
        gw_stream_write (st, mb, chunk);
    ck_assert (!gw_stream_gone (st));
    ck_assert_int_eq (gw_stream_read (st, buf, 5), 5);
    gw_stream_write (st, mb, 5);            /* exactly full again */
    ck_assert (!gw_stream_gone (st));
    gw_stream_write (st, "y", 1);
    ck_assert (gw_stream_gone (st));
    ck_assert (gw_stream_closed (st));
    ck_assert_int_eq (gw_stream_read (st, buf, sizeof buf), -2);
    gw_stream_write (st, "z", 1);           /* later writes are dropped */
    ck_assert_int_eq (gw_stream_read (st, buf, sizeof buf), -2);
    gw_stream_unref (&st);
    /* a stream that ends normally still says so */
    st = gw_stream_new ();
    gw_stream_write (st, "ab", 2);
    gw_stream_close (st);
    ck_assert_int_eq (gw_stream_read (st, buf, sizeof buf), 2);
    ck_assert_int_eq (gw_stream_read (st, buf, sizeof buf), -1);
    ck_assert (!gw_stream_gone (st));
    gw_stream_unref (&st);
    free (mb);
    free (sink);
}
END_TEST

/* True when line is a sample of the Prometheus text format:
 * name{key="value",...} number, or name number; a label value's
 * backslash only before \\, " or n. */
static bool
s_prometheus_sample (const char *line)
{
    const char *p = line;
    if (!(*p == '_' || *p == ':' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
        return false;
    while (*p == '_' || *p == ':' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
           || (*p >= '0' && *p <= '9'))
        p++;
    if (*p == '{') {
        p++;
        while (*p != '}') {
            if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
                return false;
            while (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
                   || (*p >= '0' && *p <= '9'))
                p++;
            if (p[0] != '=' || p[1] != '"')
                return false;
            for (p += 2; *p != '"'; p++) {
                if (*p == '\0' || *p == '\n')
                    return false;
                if (*p == '\\' && !(p[1] == '\\' || p[1] == '"' || p[1] == 'n'))
                    return false;
                if (*p == '\\')
                    p++;
            }
            p++;
            if (*p == ',')
                p++;
            else if (*p != '}')
                return false;
        }
        p++;
    }
    if (*p++ != ' ')
        return false;
    char *end;
    strtod (p, &end);
    return end != p && *end == '\0';
}

/* Checks every line of text; returns how many samples it holds. */
static int
s_check_exposition (char *text)
{
    int samples = 0;
    ck_assert (text[strlen (text) - 1] == '\n');
    for (char *save = NULL, *line = strtok_r (text, "\n", &save); line;
         line = strtok_r (NULL, "\n", &save)) {
        if (strncmp (line, "# HELP ", 7) == 0 || strncmp (line, "# TYPE ", 7) == 0)
            continue;
        ck_assert_msg (s_prometheus_sample (line), "not a sample: %s", line);
        samples++;
    }
    return samples;
}

/* gw_metrics: hostile methods, routes and tenants come out escaped and
 * the text parses; requests of no route count under one "unmatched";
 * a tenant sees the totals, the series of no tenant and its own only;
 * a tenant that fills its share does not push another's series out. */
START_TEST (test_metrics)
{
    gw_metrics_t *m = gw_metrics_new ();
    ck_assert_ptr_nonnull (m);
    gw_metrics_http (m, "alice", "GET", "/sessions", 200);
    gw_metrics_http (m, "bob", "POST", "/execute", 202);
    gw_metrics_http (m, "a\"b\\c\nfake_metric 1", "G\"ET\n", "/x\"}\nfake 1", 404);
    for (int i = 0; i < 300; i++)
        gw_metrics_http (m, "", "GET", NULL, 404);     /* junk paths */
    gw_metrics_http (m, "", "BREW", NULL, 401);
    char *text = gw_metrics_render (m, NULL);
    ck_assert_ptr_nonnull (text);
    ck_assert_ptr_nonnull (strstr (text, "codebox_http_requests_total{method=\"GET\","
                                         "route=\"unmatched\",code=\"404\"} 300\n"));
    ck_assert_ptr_nonnull (strstr (text, "{method=\"other\",route=\"unmatched\",code=\"401\"} 1\n"));
    ck_assert_ptr_nonnull (strstr (text, "method=\"other\",route=\"/x\\\"}\\nfake 1\",code=\"404\","
                                         "tenant=\"a\\\"b\\\\c\\nfake_metric 1\"} 1\n"));
    ck_assert_ptr_null (strstr (text, "\nfake"));
    ck_assert_int_gt (s_check_exposition (text), 20);
    free (text);

    /* alice sees hers and the series of no tenant, never bob's */
    text = gw_metrics_render (m, "alice");
    ck_assert_ptr_nonnull (strstr (text, "tenant=\"alice\""));
    ck_assert_ptr_null (strstr (text, "tenant=\"bob\""));
    ck_assert_ptr_null (strstr (text, "fake_metric"));
    ck_assert_ptr_nonnull (strstr (text, "route=\"unmatched\""));
    ck_assert_ptr_nonnull (strstr (text, "codebox_sessions_live 0\n"));
    s_check_exposition (text);
    free (text);

    /* alice fills her share (128: 127 more fit, 373 do not): bob's next still counts */
    for (int code = 1000; code < 1500; code++)
        gw_metrics_http (m, "alice", "GET", "/sessions", code);
    gw_metrics_http (m, "bob", "GET", "/sessions", 200);
    text = gw_metrics_render (m, "bob");
    ck_assert_ptr_nonnull (strstr (text, "{method=\"GET\",route=\"/sessions\",code=\"200\","
                                         "tenant=\"bob\"} 1\n"));
    ck_assert_ptr_nonnull (strstr (text, "codebox_http_requests_dropped_total 373\n"));
    s_check_exposition (text);
    free (text);
    gw_metrics_destroy (&m);
    ck_assert_ptr_null (m);
}
END_TEST

/* A connection's two ends: ours (watched) and the client's. */
static void
s_pair (int fds[2])
{
    ck_assert_int_eq (socketpair (AF_UNIX, SOCK_STREAM, 0, fds), 0);
}

/* True when the client's end sees the connection shut down. */
static bool
s_was_shut (int client_fd)
{
    char b;
    return recv (client_fd, &b, 1, MSG_DONTWAIT) == 0;
}

START_TEST (test_conns_request_deadline)
{
    gw_conns_t *conns = gw_conns_new (100, 3000);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl (0x7f000001)};
    int slow[2], busy[2], fresh[2];
    s_pair (slow);
    s_pair (busy);
    s_pair (fresh);
    gw_conn_t *cs = gw_conns_opened (conns, slow[0], (struct sockaddr *) &a, sizeof a, 0);
    gw_conn_t *cb = gw_conns_opened (conns, busy[0], (struct sockaddr *) &a, sizeof a, 0);
    gw_conn_t *cf = gw_conns_opened (conns, fresh[0], (struct sockaddr *) &a, sizeof a, 2000);
    gw_conns_request_done (cb);         /* being answered: no deadline */
    ck_assert_int_eq (gw_conns_deadline (conns), 3000);
    ck_assert_int_eq (gw_conns_sweep (conns, 2999), 0);
    ck_assert_int_eq (gw_conns_sweep (conns, 3000), 1);
    ck_assert (s_was_shut (slow[1]));
    ck_assert (!s_was_shut (busy[1]));
    ck_assert (!s_was_shut (fresh[1]));
    ck_assert_int_eq (gw_conns_deadline (conns), 5000);
    /* an answered one waits for its next request from then */
    gw_conns_answer_done (conns, cb, 4000);
    ck_assert_int_eq (gw_conns_sweep (conns, 6000), 1);     /* fresh: 2000 + 3000 */
    ck_assert (s_was_shut (fresh[1]));
    ck_assert (!s_was_shut (busy[1]));
    ck_assert_int_eq (gw_conns_sweep (conns, 7000), 1);
    ck_assert (s_was_shut (busy[1]));
    ck_assert_int_eq (gw_conns_count (conns), 3);
    gw_conns_closed (conns, cs);
    gw_conns_closed (conns, cf);
    gw_conns_closed (conns, cb);
    ck_assert_int_eq (gw_conns_count (conns), 0);
    ck_assert_int_eq (gw_conns_deadline (conns), -1);
    gw_conns_destroy (&conns);
    ck_assert_ptr_null (conns);
    for (int i = 0; i < 2; i++) {
        close (slow[i]);
        close (busy[i]);
        close (fresh[i]);
    }
}
END_TEST

START_TEST (test_conns_fair_per_address)
{
    gw_conns_t *conns = gw_conns_new (2, 30000);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl (0x7f000001)};
    struct sockaddr_in b = {.sin_family = AF_INET, .sin_addr.s_addr = htonl (0x7f000002)};
    int c1[2], c2[2];
    s_pair (c1);
    s_pair (c2);
    const struct sockaddr *sa = (struct sockaddr *) &a;
    ck_assert (gw_conns_admit (conns, sa, sizeof a, 0));
    gw_conn_t *x = gw_conns_opened (conns, c1[0], sa, sizeof a, 0);
    ck_assert (gw_conns_admit (conns, sa, sizeof a, 0));
    gw_conn_t *y = gw_conns_opened (conns, c2[0], sa, sizeof a, 500);
    /* at the bound; nobody slow yet (under a second): refused */
    ck_assert (!gw_conns_admit (conns, sa, sizeof a, 900));
    /* another address is not counted */
    ck_assert (gw_conns_admit (conns, (struct sockaddr *) &b, sizeof b, 900));
    /* the oldest slow one makes room */
    ck_assert (gw_conns_admit (conns, sa, sizeof a, 1200));
    ck_assert (s_was_shut (c1[1]));
    ck_assert (!s_was_shut (c2[1]));
    /* one being answered is never the one to go */
    gw_conns_request_done (y);
    gw_conns_closed (conns, x);
    ck_assert (gw_conns_admit (conns, sa, sizeof a, 5000));     /* one held of two */
    ck_assert (!s_was_shut (c2[1]));
    gw_conns_destroy (&conns);
    for (int i = 0; i < 2; i++) {
        close (c1[i]);
        close (c2[i]);
    }
}
END_TEST

Suite *
http_edge_suite (void)
{
    Suite *s = suite_create ("http_edge");
    TCase *tc = tcase_create ("all");
    tcase_add_test (tc, test_host_rules);
    tcase_add_test (tc, test_origin_rules);
    tcase_add_test (tc, test_bad_settings);
    tcase_add_test (tc, test_routes);
    tcase_add_test (tc, test_ports_and_hosts);
    tcase_add_test (tc, test_exec_languages);
    tcase_add_test (tc, test_request_headers);
    tcase_add_test (tc, test_ansi_strip);
    tcase_add_test (tc, test_metrics);
    suite_add_tcase (s, tc);
    /* moves a few hundred MiB (the bound is what it is): slow under ASan */
    TCase *conns = tcase_create ("conns");
    tcase_add_test (conns, test_conns_request_deadline);
    tcase_add_test (conns, test_conns_fair_per_address);
    suite_add_tcase (s, conns);
    TCase *stream = tcase_create ("stream");
    tcase_set_timeout (stream, 60);
    tcase_add_test (stream, test_stream_cut_when_unread);
    suite_add_tcase (s, stream);
    return s;
}
