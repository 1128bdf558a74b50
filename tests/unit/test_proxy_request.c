/* test_proxy_request: the head of a request to the kernels' network proxy
 * (CONNECT, absolute-form http:// rewritten to origin form, what is
 * refused and why), reading a head that arrives in pieces, and which
 * address kinds the proxy may reach with and without private ones. */
#include <string.h>

#include "gw_proxy_request.h"
#include "suites.h"

static gw_proxy_request_t
s_parse (const char *head, char *out, size_t out_len)
{
    gw_proxy_request_t req;
    gw_proxy_request_parse (head, strlen (head), out, out_len, &req);
    return req;
}

START_TEST (test_connect)
{
    char out[512];
    const char *head = "CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n\x16\x03";
    gw_proxy_request_t req = s_parse (head, out, sizeof out);
    ck_assert_int_eq (req.kind, GW_PROXY_TUNNEL);
    ck_assert_str_eq (req.host, "pypi.org");
    ck_assert_int_eq (req.port, 443);
    ck_assert_uint_eq (req.head_len, strlen (head) - 2);    /* the TLS bytes stay */
    req = s_parse ("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n", out, sizeof out);
    ck_assert_int_eq (req.kind, GW_PROXY_TUNNEL);
    ck_assert_str_eq (req.host, "2001:db8::1");
    ck_assert_int_eq (req.port, 8443);
}
END_TEST

START_TEST (test_forward_rewrites)
{
    char out[512];
    const char *head = "GET http://example.com:8080/a/b?q=1 HTTP/1.1\r\n"
                       "Host: example.com:8080\r\nProxy-Connection: keep-alive\r\n"
                       "Proxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\n"
                       "Accept: */*\r\n X-Folded: continued\r\n\r\nbody";
    gw_proxy_request_t req = s_parse (head, out, sizeof out);
    ck_assert_int_eq (req.kind, GW_PROXY_FORWARD);
    ck_assert_str_eq (req.host, "example.com");
    ck_assert_int_eq (req.port, 8080);
    out[req.rewritten_len] = '\0';
    ck_assert_str_eq (out, "GET /a/b?q=1 HTTP/1.1\r\nHost: example.com:8080\r\n"
                           "Accept: */*\r\n X-Folded: continued\r\nConnection: close\r\n\r\n");
    ck_assert_str_eq (head + req.head_len, "body");
    /* no Host: one is added; no path: "/"; bare LF lines are read too */
    req = s_parse ("POST http://10.0.0.2 HTTP/1.0\nContent-Length: 0\n\n", out, sizeof out);
    ck_assert_int_eq (req.kind, GW_PROXY_FORWARD);
    ck_assert_int_eq (req.port, 80);
    out[req.rewritten_len] = '\0';
    ck_assert_str_eq (out, "POST / HTTP/1.0\r\nContent-Length: 0\r\nHost: 10.0.0.2:80\r\n"
                           "Connection: close\r\n\r\n");
    /* a folded line of a dropped header goes with it */
    req = s_parse ("GET http://h/ HTTP/1.1\r\nHost: h\r\nProxy-Authorization: a\r\n b\r\n\r\n",
                   out, sizeof out);
    out[req.rewritten_len] = '\0';
    ck_assert_str_eq (out, "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
}
END_TEST

static const struct {
    const char *head;
    gw_proxy_kind_t kind;
    const char *why;
} s_refused[] = {
    {"HELLO\r\n\r\n", GW_PROXY_BAD, "not an HTTP/1.x request line"},
    {"GET http://h/ HTTP/2.0\r\n\r\n", GW_PROXY_BAD, "not an HTTP/1.x request line"},
    {"get http://h/ HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "not an HTTP method"},
    {"GET /relative HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "a proxy request names"},
    {"GET https://h/ HTTP/1.1\r\n\r\n", GW_PROXY_UNSUPPORTED, "https:// goes through CONNECT"},
    {"GET http://user:pw@h/ HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "not a plain host"},
    {"GET http://h:0/ HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "not a plain host"},
    {"GET http://h:65536/ HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "not a plain host"},
    {"GET http://h?x HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "path must start with /"},
    {"GET http://h\x01x/ HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "not a plain host"},
    {"CONNECT h HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "CONNECT names host:port"},
    {"CONNECT h: HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "CONNECT names host:port"},
    {"CONNECT [::1 HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "CONNECT names host:port"},
    {"CONNECT [zz]:1 HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "CONNECT names host:port"},
    {"CONNECT h:1:2 HTTP/1.1\r\n\r\n", GW_PROXY_BAD, "CONNECT names host:port"},
};

START_TEST (test_refused)
{
    char out[512];
    gw_proxy_request_t req = s_parse (s_refused[_i].head, out, sizeof out);
    ck_assert_msg (req.kind == s_refused[_i].kind, "%s: kind %d", s_refused[_i].head, req.kind);
    ck_assert_msg (strstr (req.why, s_refused[_i].why), "%s: %s", s_refused[_i].head, req.why);
}
END_TEST

START_TEST (test_incomplete_and_too_long)
{
    char out[64];
    const char *head = "CONNECT a.example:443 HTTP/1.1\r\n\r\n";
    for (size_t len = 0; len < strlen (head); len++) {
        gw_proxy_request_t req;
        gw_proxy_request_parse (head, len, out, sizeof out, &req);
        ck_assert_msg (req.kind == GW_PROXY_INCOMPLETE, "at %zu: %d", len, req.kind);
    }
    static char big[GW_PROXY_HEAD_MAX + 10];
    memset (big, 'a', sizeof big);
    gw_proxy_request_t req;
    gw_proxy_request_parse (big, sizeof big, out, sizeof out, &req);
    ck_assert_int_eq (req.kind, GW_PROXY_BAD);
    /* a head that fits the input but not the rewrite buffer */
    const char *long_header = "GET http://h/ HTTP/1.1\r\nX-Long: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                              "aaaaaaaaaaaaaaaaaaa\r\n\r\n";
    gw_proxy_request_parse (long_header, strlen (long_header), out, sizeof out, &req);
    ck_assert_int_eq (req.kind, GW_PROXY_BAD);
}
END_TEST

START_TEST (test_may_reach)
{
    ck_assert (gw_proxy_may_reach (GW_ADDR_PUBLIC, false));
    ck_assert (!gw_proxy_may_reach (GW_ADDR_PRIVATE, false));
    ck_assert (gw_proxy_may_reach (GW_ADDR_PRIVATE, true));
    ck_assert (gw_proxy_may_reach (GW_ADDR_CGNAT, true));
    ck_assert (gw_proxy_may_reach (GW_ADDR_RESERVED, true));
    static const gw_addr_kind_t never[] = {GW_ADDR_LOOPBACK, GW_ADDR_LINK_LOCAL,
                                           GW_ADDR_UNSPECIFIED, GW_ADDR_MULTICAST,
                                           GW_ADDR_BROADCAST, GW_ADDR_INVALID};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
        ck_assert (!gw_proxy_may_reach (never[i], false));
        ck_assert (!gw_proxy_may_reach (never[i], true));
    }
}
END_TEST

Suite *
proxy_request_suite (void)
{
    Suite *s = suite_create ("proxy_request");
    TCase *tc = tcase_create ("parse");
    tcase_add_test (tc, test_connect);
    tcase_add_test (tc, test_forward_rewrites);
    tcase_add_loop_test (tc, test_refused, 0, (int) (sizeof s_refused / sizeof s_refused[0]));
    tcase_add_test (tc, test_incomplete_and_too_long);
    tcase_add_test (tc, test_may_reach);
    suite_add_tcase (s, tc);
    return s;
}
