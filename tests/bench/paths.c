/* paths: the latency rows of `make bench` from one C client, so that
 * "overhead over the floor" compares like with like: the floor (the
 * project's kernel library straight to its own kernel, started as the
 * gateway starts it) and each codebox path are driven by the same process
 * in the same language, one call of each path per round (in an order
 * shuffled each round), so a machine that slows down or speeds up weighs on
 * every path alike and no client's own parsing is counted as the
 * gateway's. Every answer is checked (`1+1` must give 2).
 *
 * Usage: bench-paths ROUNDS SPEC...; SPEC is one of
 *   floor:LABEL                 the C floor (floor_kernel.c)
 *   rest:LABEL:PORT:SESSION     POST /execute, GET .../results?wait=60
 *   mcp:LABEL:PORT:SESSION      MCP over HTTP, tools/call exec_code
 *   stdio:LABEL:SANDBOX         $CODEBOX_BIN mcp with CODEBOX_SANDBOX=SANDBOX
 *   healthz:LABEL:PORT          GET /healthz: an HTTP round trip, no kernel
 *   ping:LABEL:SANDBOX          MCP ping over stdio: a stdio round trip, no kernel
 * Prints {"LABEL": [ms, ...], ...} as one JSON line after 10 rounds of
 * warm-up. Single thread. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "floor_kernel.h"

#define WARMUP 10

/* One keep-alive HTTP/1.1 connection; answers carry Content-Length. */
typedef struct {
    int fd;
    char buf[1 << 17];
    size_t len;
} http_conn_t;

typedef struct {
    char kind[8];
    char label[96];
    char session[64];
    floor_kernel_t *floor;
    http_conn_t *http;
    char mcp_session[80];
    pid_t pid;              /* stdio: the codebox mcp process */
    FILE *to, *from;
    char state[64];
    long next_id;
    json_t *samples;
} path_t;

static void
s_die (const char *what, const char *detail)
{
    fprintf (stderr, "bench-paths: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit (1);
}

static double
s_now_ms (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec * 1e3 + (double) t.tv_nsec / 1e6;
}

static http_conn_t *
s_http_connect (int port)
{
    http_conn_t *c = calloc (1, sizeof *c);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons ((uint16_t) port)};
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    int one = 1;
    if (!c || (c->fd = socket (AF_INET, SOCK_STREAM, 0)) < 0
        || connect (c->fd, (struct sockaddr *) &addr, sizeof addr) < 0)
        s_die ("connect", strerror (errno));
    setsockopt (c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return c;
}

/* Sends one request and reads its answer. Returns the status; *body_p gets
 * a new JSON value (NULL if the body is empty or not JSON); header, if not
 * NULL, names a header whose value is copied to value. */
static int
s_http_call (http_conn_t *c, const char *method, const char *target, const char *extra_headers,
             const char *body, json_t **body_p, const char *header, char *value, size_t value_size)
{
    char head[1024];
    size_t blen = body ? strlen (body) : 0;
    int n = snprintf (head, sizeof head,
                      "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      "%sContent-Length: %zu\r\n\r\n", method, target,
                      extra_headers ? extra_headers : "", blen);
    if (n < 0 || (size_t) n >= sizeof head || write (c->fd, head, (size_t) n) != n
        || (blen && write (c->fd, body, blen) != (ssize_t) blen))
        s_die ("send", strerror (errno));
    char *end;
    while (!(end = memmem (c->buf, c->len, "\r\n\r\n", 4))) {
        ssize_t got = read (c->fd, c->buf + c->len, sizeof c->buf - c->len);
        if (got <= 0)
            s_die ("read", got ? strerror (errno) : "the server closed the connection");
        c->len += (size_t) got;
    }
    size_t head_len = (size_t) (end - c->buf) + 4, length = 0;
    int status = atoi (c->buf + 9);
    for (char *line = strstr (c->buf, "\r\n") + 2; line < end; line = strstr (line, "\r\n") + 2) {
        char *colon = memchr (line, ':', (size_t) (end - line));
        char *eol = strstr (line, "\r\n");
        if (!colon || colon > eol)
            continue;
        size_t name_len = (size_t) (colon - line);
        const char *v = colon + 1 + (colon[1] == ' ');
        if (name_len == 14 && strncasecmp (line, "Content-Length", 14) == 0)
            length = strtoul (v, NULL, 10);
        else if (header && name_len == strlen (header) && strncasecmp (line, header, name_len) == 0)
            snprintf (value, value_size, "%.*s", (int) (eol - v), v);
    }
    if (head_len + length > sizeof c->buf)
        s_die ("answer too long for the bench's buffer", NULL);
    while (c->len < head_len + length) {
        ssize_t got = read (c->fd, c->buf + c->len, sizeof c->buf - c->len);
        if (got <= 0)
            s_die ("read", got ? strerror (errno) : "the server closed the connection");
        c->len += (size_t) got;
    }
    if (body_p)
        *body_p = length ? json_loadb (c->buf + head_len, length, 0, NULL) : NULL;
    c->len -= head_len + length;
    memmove (c->buf, c->buf + head_len + length, c->len);
    return status;
}

/* `1+1` gave 2: the REST result's output of type "result" (IPython may
 * add a warning on stderr, as after 1000 results), or the MCP tool
 * result's structured result. */
static void
s_check_rest (json_t *res)
{
    const char *got = NULL;
    size_t i;
    json_t *item;
    json_array_foreach (json_object_get (res, "output"), i, item)
        if (json_is_string (json_object_get (item, "content"))
            && strcmp (json_string_value (json_object_get (item, "type")), "result") == 0)
            got = json_string_value (json_object_get (item, "content"));
    if (!got || strcmp (got, "2") != 0) {
        char *text = json_dumps (res, JSON_COMPACT);
        s_die ("a REST execution did not give 2", text ? text : "(no JSON)");
    }
}

static void
s_check_mcp (json_t *msg)
{
    json_t *result = json_object_get (msg, "result");
    const char *got = json_string_value (json_object_get (
        json_object_get (result, "structuredContent"), "result"));
    if (!got || strcmp (got, "2") != 0) {
        char *text = json_dumps (msg, JSON_COMPACT);
        s_die ("an MCP execution did not give 2", text ? text : "(no JSON)");
    }
}

static void
s_rest_exec (path_t *p)
{
    char body[256], target[256];
    json_t *res = NULL;
    snprintf (body, sizeof body, "{\"session_id\":\"%s\",\"code\":\"1+1\"}", p->session);
    s_http_call (p->http, "POST", "/execute", NULL, body, &res, NULL, NULL, 0);
    if (!json_string_value (json_object_get (res, "request_id")))
        s_die ("POST /execute failed", NULL);
    snprintf (target, sizeof target, "/execute/%s/results?wait=60",
              json_string_value (json_object_get (res, "request_id")));
    json_decref (res);
    if (s_http_call (p->http, "GET", target, NULL, NULL, &res, NULL, NULL, 0) != 200)
        s_die ("GET results failed", NULL);
    s_check_rest (res);
    json_decref (res);
}

static void
s_mcp_exec (path_t *p)
{
    char body[512], headers[160];
    json_t *msg = NULL;
    snprintf (headers, sizeof headers, "Accept: application/json\r\nMcp-Session-Id: %s\r\n",
              p->mcp_session);
    snprintf (body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
              "\"params\":{\"name\":\"exec_code\",\"arguments\":{\"session_id\":\"%s\","
              "\"code\":\"1+1\"}}}", ++p->next_id, p->session);
    if (s_http_call (p->http, "POST", "/mcp", headers, body, &msg, NULL, NULL, 0) != 200)
        s_die ("MCP tools/call failed", NULL);
    s_check_mcp (msg);
    json_decref (msg);
}

/* One JSON-RPC request over stdio; returns the answer with its id. */
static json_t *
s_stdio_rpc (path_t *p, const char *method, const char *params)
{
    long id = ++p->next_id;
    fprintf (p->to, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":%s}\n", id,
             method, params);
    fflush (p->to);
    static char *line;
    static size_t cap;
    while (getline (&line, &cap, p->from) > 0) {
        json_t *msg = json_loads (line, 0, NULL);
        if (json_integer_value (json_object_get (msg, "id")) == id)
            return msg;
        json_decref (msg);
    }
    s_die ("codebox mcp ended", NULL);
    return NULL;
}

static void
s_stdio_exec (path_t *p)
{
    json_t *msg = s_stdio_rpc (p, "tools/call", "{\"name\":\"exec_code\",\"arguments\":"
                               "{\"session_id\":\"b\",\"code\":\"1+1\"}}");
    s_check_mcp (msg);
    json_decref (msg);
}

static void
s_stdio_start (path_t *p, const char *sandbox)
{
    const char *bin = getenv ("CODEBOX_BIN");
    int in[2], out[2];
    snprintf (p->state, sizeof p->state, "/tmp/codebox-paths-XXXXXX");
    if (!bin || !mkdtemp (p->state) || pipe2 (in, O_CLOEXEC) || pipe2 (out, O_CLOEXEC))
        s_die ("stdio needs CODEBOX_BIN and a temporary folder", NULL);
    chmod (p->state, 0755);
    char state[96];
    snprintf (state, sizeof state, "%s/s", p->state);
    p->pid = fork ();
    if (p->pid == 0) {
        dup2 (in[0], 0);
        dup2 (out[1], 1);
        int null = open ("/dev/null", O_WRONLY);
        dup2 (null, 2);
        setenv ("CODEBOX_SANDBOX", sandbox, 1);
        execl (bin, bin, "mcp", "--state-dir", state, (char *) NULL);
        _exit (127);
    }
    close (in[0]);
    close (out[1]);
    p->to = fdopen (in[1], "w");
    p->from = fdopen (out[0], "r");
    json_decref (s_stdio_rpc (p, "initialize", "{\"protocolVersion\":\"2025-06-18\","
                              "\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\","
                              "\"version\":\"1\"}}"));
}

static void
s_path_open (path_t *p, char *spec)
{
    char *kind = strtok (spec, ":"), *label = strtok (NULL, ":");
    if (!kind || !label)
        s_die ("bad path", spec);
    snprintf (p->kind, sizeof p->kind, "%s", kind);
    snprintf (p->label, sizeof p->label, "%s", label);
    p->samples = json_array ();
    char err[512];
    if (strcmp (kind, "floor") == 0) {
        if (!(p->floor = floor_kernel_new ("python3", false, err, sizeof err)))
            s_die ("floor", err);
    } else if (strcmp (kind, "rest") == 0 || strcmp (kind, "mcp") == 0) {
        char *port = strtok (NULL, ":"), *session = strtok (NULL, ":");
        if (!port || !session)
            s_die ("bad path", label);
        snprintf (p->session, sizeof p->session, "%s", session);
        p->http = s_http_connect (atoi (port));
        char body[128];
        snprintf (body, sizeof body, "{\"session_id\":\"%s\"}", p->session);
        int status = s_http_call (p->http, "POST", "/sessions", NULL, body, NULL, NULL, NULL, 0);
        if (status != 201 && status != 200 && status != 409)
            s_die ("POST /sessions failed", label);
        if (strcmp (kind, "mcp") == 0
            && s_http_call (p->http, "POST", "/mcp", "Accept: application/json\r\n",
                            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                            "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                            "\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}",
                            NULL, "Mcp-Session-Id", p->mcp_session, sizeof p->mcp_session) != 200)
            s_die ("MCP initialize failed", label);
    } else if (strcmp (kind, "healthz") == 0) {
        char *port = strtok (NULL, ":");
        if (!port)
            s_die ("bad path", label);
        p->http = s_http_connect (atoi (port));
    } else if (strcmp (kind, "stdio") == 0 || strcmp (kind, "ping") == 0) {
        char *sandbox = strtok (NULL, ":");
        s_stdio_start (p, sandbox ? sandbox : "auto");
    } else
        s_die ("unknown kind of path", kind);
}

static double
s_path_call (path_t *p)
{
    if (p->floor) {
        double ms = floor_kernel_exec_ms (p->floor, "1+1");
        if (ms < 0)
            s_die ("a floor execution did not finish", NULL);
        return ms;
    }
    double t = s_now_ms ();
    if (strcmp (p->kind, "rest") == 0)
        s_rest_exec (p);
    else if (strcmp (p->kind, "mcp") == 0)
        s_mcp_exec (p);
    else if (strcmp (p->kind, "healthz") == 0) {
        if (s_http_call (p->http, "GET", "/healthz", NULL, NULL, NULL, NULL, NULL, 0) != 200)
            s_die ("GET /healthz failed", NULL);
    } else if (strcmp (p->kind, "ping") == 0) {
        json_t *msg = s_stdio_rpc (p, "ping", "{}");
        if (!json_object_get (msg, "result"))
            s_die ("an MCP ping failed", NULL);
        json_decref (msg);
    } else
        s_stdio_exec (p);
    return s_now_ms () - t;
}

static void
s_path_close (path_t *p)
{
    floor_kernel_destroy (&p->floor);
    if (p->http) {
        close (p->http->fd);
        free (p->http);
    }
    if (p->to) {
        fclose (p->to);         /* end of input: codebox mcp stops */
        waitpid (p->pid, NULL, 0);
        fclose (p->from);
        char cmd[128];
        snprintf (cmd, sizeof cmd, "rm -rf '%s'", p->state);
        if (system (cmd) != 0)
            fprintf (stderr, "bench-paths: could not remove %s\n", p->state);
    }
    json_decref (p->samples);
}

int
main (int argc, char **argv)
{
    if (argc < 3)
        s_die ("usage: bench-paths ROUNDS SPEC...", NULL);
    signal (SIGPIPE, SIG_IGN);
    int rounds = atoi (argv[1]), count = argc - 2;
    path_t *paths = calloc ((size_t) count, sizeof *paths);
    if (!paths)
        s_die ("out of memory", NULL);
    for (int i = 0; i < count; i++)
        s_path_open (&paths[i], argv[i + 2]);
    /* a new order each round (a fixed seed: runs compare), so that no path
       always follows the same one: a call after a long one finds the
       machine's CPUs asleep, one after a short one awake */
    int *order = calloc ((size_t) count, sizeof *order);
    unsigned seed = 1;
    for (int k = 0; order && k < count; k++)
        order[k] = k;
    for (int r = -WARMUP; order && r < rounds; r++) {
        for (int k = count - 1; k > 0; k--) {
            int j = rand_r (&seed) % (k + 1), swap = order[k];
            order[k] = order[j];
            order[j] = swap;
        }
        for (int k = 0; k < count; k++) {
            path_t *p = &paths[order[k]];
            double ms = s_path_call (p);
            if (r >= 0)
                json_array_append_new (p->samples, json_real (ms));
        }
    }
    if (!order)
        s_die ("out of memory", NULL);
    free (order);
    json_t *out = json_object ();
    for (int i = 0; i < count; i++)
        json_object_set (out, paths[i].label, paths[i].samples);
    json_dumpf (out, stdout, JSON_COMPACT);
    printf ("\n");
    json_decref (out);
    for (int i = 0; i < count; i++)
        s_path_close (&paths[i]);
    free (paths);
    return 0;
}
