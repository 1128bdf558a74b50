/* test_download: the pure rules behind upload_file and the signed
 * artifact links: the SSRF address classifier (IPv4, IPv6, and IPv6
 * forms that carry an IPv4 address), file name sanitising, collision
 * suffixes, names from URLs; and signed links: make, parse, check,
 * tampering with each part, expiry. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_download.h"
#include "gw_signed_url.h"
#include "suites.h"

/* ---- addresses ---------------------------------------------------------- */

static const struct {
    const char *ip;
    gw_addr_kind_t kind;
} s_addrs[] = {
    /* IPv4 */
    {"8.8.8.8", GW_ADDR_PUBLIC},
    {"1.1.1.1", GW_ADDR_PUBLIC},
    {"93.184.216.34", GW_ADDR_PUBLIC},
    {"11.0.0.1", GW_ADDR_PUBLIC},
    {"172.15.255.255", GW_ADDR_PUBLIC},
    {"172.32.0.1", GW_ADDR_PUBLIC},
    {"100.63.255.255", GW_ADDR_PUBLIC},
    {"100.128.0.1", GW_ADDR_PUBLIC},
    {"169.253.1.1", GW_ADDR_PUBLIC},
    {"223.255.255.255", GW_ADDR_PUBLIC},
    {"127.0.0.1", GW_ADDR_LOOPBACK},
    {"127.255.255.254", GW_ADDR_LOOPBACK},
    {"10.0.0.1", GW_ADDR_PRIVATE},
    {"10.255.255.255", GW_ADDR_PRIVATE},
    {"172.16.0.1", GW_ADDR_PRIVATE},
    {"172.31.255.255", GW_ADDR_PRIVATE},
    {"192.168.1.1", GW_ADDR_PRIVATE},
    {"169.254.169.254", GW_ADDR_LINK_LOCAL},
    {"169.254.0.1", GW_ADDR_LINK_LOCAL},
    {"100.64.0.1", GW_ADDR_CGNAT},
    {"100.127.255.254", GW_ADDR_CGNAT},
    {"224.0.0.1", GW_ADDR_MULTICAST},
    {"239.255.255.250", GW_ADDR_MULTICAST},
    {"0.0.0.0", GW_ADDR_UNSPECIFIED},
    {"0.1.2.3", GW_ADDR_UNSPECIFIED},
    {"255.255.255.255", GW_ADDR_BROADCAST},
    {"240.0.0.1", GW_ADDR_RESERVED},
    {"192.0.0.170", GW_ADDR_RESERVED},
    {"192.0.2.1", GW_ADDR_RESERVED},
    {"198.18.0.1", GW_ADDR_RESERVED},
    {"198.51.100.7", GW_ADDR_RESERVED},
    {"203.0.113.9", GW_ADDR_RESERVED},
    /* IPv6 */
    {"2606:4700:4700::1111", GW_ADDR_PUBLIC},
    {"2001:4860:4860::8888", GW_ADDR_PUBLIC},
    {"::1", GW_ADDR_LOOPBACK},
    {"::", GW_ADDR_UNSPECIFIED},
    {"fe80::1", GW_ADDR_LINK_LOCAL},
    {"febf:ffff::1", GW_ADDR_LINK_LOCAL},
    {"fc00::1", GW_ADDR_PRIVATE},
    {"fd12:3456:789a::1", GW_ADDR_PRIVATE},
    {"fec0::1", GW_ADDR_PRIVATE},
    {"ff02::1", GW_ADDR_MULTICAST},
    {"ff05::1:3", GW_ADDR_MULTICAST},
    {"2001:db8::1", GW_ADDR_RESERVED},
    {"2001::1", GW_ADDR_RESERVED},          /* Teredo */
    {"100::1", GW_ADDR_RESERVED},           /* discard */
    {"3fff::1", GW_ADDR_RESERVED},          /* documentation */
    {"4000::1", GW_ADDR_RESERVED},          /* outside 2000::/3 */
    {"64:ff9b:1::1", GW_ADDR_RESERVED},     /* local NAT64 */
    /* IPv6 carrying IPv4: classed by the IPv4 address */
    {"::ffff:127.0.0.1", GW_ADDR_LOOPBACK},
    {"::ffff:7f00:1", GW_ADDR_LOOPBACK},
    {"::ffff:10.1.2.3", GW_ADDR_PRIVATE},
    {"::ffff:169.254.169.254", GW_ADDR_LINK_LOCAL},
    {"::ffff:0.0.0.0", GW_ADDR_UNSPECIFIED},
    {"::ffff:8.8.8.8", GW_ADDR_PUBLIC},
    {"::127.0.0.1", GW_ADDR_LOOPBACK},      /* IPv4-compatible */
    {"::ffff:0:192.168.0.1", GW_ADDR_PRIVATE},  /* IPv4-translated */
    {"64:ff9b::10.0.0.1", GW_ADDR_PRIVATE},     /* NAT64 */
    {"64:ff9b::8.8.8.8", GW_ADDR_PUBLIC},
    {"2002:7f00:1::1", GW_ADDR_LOOPBACK},       /* 6to4 of 127.0.0.1 */
    {"2002:a9fe:a9fe::1", GW_ADDR_LINK_LOCAL},  /* 6to4 of 169.254.169.254 */
    {"2002:808:808::1", GW_ADDR_PUBLIC},
    /* not addresses */
    {"", GW_ADDR_INVALID},
    {"localhost", GW_ADDR_INVALID},
    {"1.2.3", GW_ADDR_INVALID},
};

/* Each address of s_addrs is classed as marked, from text and from a
 * socket address. */
START_TEST (test_classify)
{
    const char *ip = s_addrs[_i].ip;
    gw_addr_kind_t want = s_addrs[_i].kind;
    ck_assert_msg (gw_download_classify_text (ip) == want, "%s: got %d, want %d", ip,
                   gw_download_classify_text (ip), want);
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons (80)};
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons (80)};
    if (inet_pton (AF_INET, ip, &in.sin_addr) == 1)
        ck_assert_int_eq (gw_download_classify ((struct sockaddr *) &in, sizeof in), want);
    else if (inet_pton (AF_INET6, ip, &in6.sin6_addr) == 1)
        ck_assert_int_eq (gw_download_classify ((struct sockaddr *) &in6, sizeof in6), want);
    ck_assert_ptr_nonnull (gw_download_kind_text (want));
}
END_TEST

/* Short or foreign socket addresses are not public. */
START_TEST (test_classify_bad_sockaddr)
{
    struct sockaddr_in in = {.sin_family = AF_INET};
    inet_pton (AF_INET, "8.8.8.8", &in.sin_addr);
    ck_assert_int_eq (gw_download_classify ((struct sockaddr *) &in, sizeof in), GW_ADDR_PUBLIC);
    ck_assert_int_eq (gw_download_classify ((struct sockaddr *) &in, 4), GW_ADDR_INVALID);
    ck_assert_int_eq (gw_download_classify (NULL, 0), GW_ADDR_INVALID);
    struct sockaddr un = {.sa_family = AF_UNIX};
    ck_assert_int_eq (gw_download_classify (&un, sizeof un), GW_ADDR_INVALID);
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    ck_assert_int_eq (gw_download_classify ((struct sockaddr *) &in6, sizeof in), GW_ADDR_INVALID);
}
END_TEST

/* ---- names -------------------------------------------------------------- */

static const struct {
    const char *raw;
    size_t len;                 /* 0: strlen */
    const char *want;
} s_names[] = {
    {"data.csv", 0, "data.csv"},
    {"../../etc/passwd", 0, "passwd"},
    {"..\\..\\windows\\win.ini", 0, "win.ini"},
    {".bashrc", 0, "bashrc"},
    {"...hidden", 0, "hidden"},
    {" . .x", 0, "x"},
    {"..", 0, "download"},
    {".", 0, "download"},
    {"", 0, "download"},
    {"dir/", 0, "download"},
    {"a\nb\tc\x7f.txt", 0, "abc.txt"},
    {"a\0b.txt", 7, "ab.txt"},
    {"bad\xff\xfeutf8.bin", 0, "bad__utf8.bin"},
    {"caf\xc3\xa9.txt", 0, "caf\xc3\xa9.txt"},
    {"over\xc0\xaflong", 0, "over__long"},
    {"gpj\xe2\x80\xae.exe", 0, "gpj.exe"},      /* U+202E right-to-left override */
    {"c1\xc2\x85x", 0, "c1x"},                  /* U+0085, a C1 control */
    {"trailing   ", 0, "trailing"},
    {"name with spaces.pdf", 0, "name with spaces.pdf"},
};

START_TEST (test_safe_name)
{
    char out[GW_DOWNLOAD_NAME_MAX + 1];
    const char *raw = s_names[_i].raw;
    size_t len = s_names[_i].len ? s_names[_i].len : strlen (raw);
    gw_download_safe_name (raw, len, out, sizeof out);
    ck_assert_str_eq (out, s_names[_i].want);
}
END_TEST

/* Long names are cut to the limit on a character boundary, keeping the
 * extension. */
START_TEST (test_safe_name_long)
{
    char raw[1200], out[GW_DOWNLOAD_NAME_MAX + 1];
    memset (raw, 'a', 1000);
    strcpy (raw + 1000, ".csv");
    gw_download_safe_name (raw, strlen (raw), out, sizeof out);
    ck_assert_uint_eq (strlen (out), GW_DOWNLOAD_NAME_MAX);
    ck_assert_str_eq (out + GW_DOWNLOAD_NAME_MAX - 4, ".csv");
    /* two-byte characters: never cut in the middle of one */
    size_t k = 0;
    for (int i = 0; i < 300; i++) {
        raw[k++] = (char) 0xc3;
        raw[k++] = (char) 0xa9;
    }
    raw[k] = '\0';
    gw_download_safe_name (raw, k, out, sizeof out);
    ck_assert_uint_le (strlen (out), GW_DOWNLOAD_NAME_MAX);
    ck_assert_uint_eq (strlen (out) % 2, 0);
    ck_assert_int_eq ((unsigned char) out[strlen (out) - 1], 0xa9);
}
END_TEST

START_TEST (test_suffixed)
{
    char out[GW_DOWNLOAD_NAME_MAX + 1];
    gw_download_suffixed ("data.csv", 1, out, sizeof out);
    ck_assert_str_eq (out, "data-1.csv");
    gw_download_suffixed ("README", 12, out, sizeof out);
    ck_assert_str_eq (out, "README-12");
    gw_download_suffixed ("archive.tar.gz", 2, out, sizeof out);
    ck_assert_str_eq (out, "archive.tar-2.gz");
    gw_download_suffixed ("v1.0.weird-very-long-extension", 3, out, sizeof out);
    ck_assert_str_eq (out, "v1.0.weird-very-long-extension-3");  /* too long to be one */
    char longname[GW_DOWNLOAD_NAME_MAX + 1];
    memset (longname, 'b', GW_DOWNLOAD_NAME_MAX - 4);
    strcpy (longname + GW_DOWNLOAD_NAME_MAX - 4, ".txt");
    gw_download_suffixed (longname, 999, out, sizeof out);
    ck_assert_uint_eq (strlen (out), GW_DOWNLOAD_NAME_MAX);
    ck_assert_str_eq (out + GW_DOWNLOAD_NAME_MAX - 8, "-999.txt");
}
END_TEST

static const struct {
    const char *url;
    const char *want;
} s_urls[] = {
    {"https://example.com/files/data.csv", "data.csv"},
    {"https://example.com/files/data.csv?x=1#frag", "data.csv"},
    {"https://example.com/a%20b.txt", "a b.txt"},
    {"https://example.com/..%2F..%2Fetc%2Fpasswd", "passwd"},
    {"https://example.com/%2e%2e", "download"},
    {"https://example.com/%2ebashrc", "bashrc"},
    {"https://example.com/a%00b.txt", "ab.txt"},
    {"https://example.com/bad%zz.txt", "bad%zz.txt"},
    {"https://example.com/trail%", "trail%"},
    {"https://example.com/", "download"},
    {"https://example.com", "download"},
    {"https://example.com?q=/x.csv", "download"},
    {"http://user:pw@example.com:8080/dir/file.tar.gz", "file.tar.gz"},
};

START_TEST (test_name_from_url)
{
    char out[GW_DOWNLOAD_NAME_MAX + 1];
    gw_download_name_from_url (s_urls[_i].url, out, sizeof out);
    ck_assert_str_eq (out, s_urls[_i].want);
}
END_TEST

/* ---- signed links ------------------------------------------------------- */

static const uint8_t s_key[] = "0123456789abcdef0123456789abcdef";
#define KEY_LEN (sizeof s_key - 1)

/* A link made for a path parses back into the same parts and checks. */
START_TEST (test_signed_roundtrip)
{
    char *url = gw_signed_url_make ("https://box.example/base/", s_key, KEY_LEN, "alice", "main",
                                    "output/r\xc3\xa9sult 1.csv", 2000000000LL);
    ck_assert_ptr_nonnull (url);
    const char *head = "https://box.example/base/signed/alice/main/2000000000/";
    ck_assert_int_eq (strncmp (url, head, strlen (head)), 0);
    ck_assert_str_eq (url + strlen (url) - strlen ("/output/r%C3%A9sult%201.csv"),
                      "/output/r%C3%A9sult%201.csv");
    /* what the HTTP server hands over: the path, percent-decoded */
    char path[512];
    snprintf (path, sizeof path, "/signed/alice/main/2000000000/%.64s/output/r\xc3\xa9sult 1.csv",
              url + strlen (head));
    char tenant[65], session[65], sig[GW_SIGNED_URL_SIG_LEN + 1];
    long long expires;
    const char *rel;
    ck_assert_int_eq (gw_signed_url_parse (path, tenant, session, &expires, sig, &rel), 0);
    ck_assert_str_eq (tenant, "alice");
    ck_assert_str_eq (session, "main");
    ck_assert_int_eq (expires, 2000000000LL);
    ck_assert_str_eq (rel, "output/r\xc3\xa9sult 1.csv");
    ck_assert_int_eq (gw_signed_url_check (s_key, KEY_LEN, tenant, session, rel, expires, sig,
                                           1900000000), 0);
    free (url);
}
END_TEST

/* Changing any signed part, the signature or the key fails; a link past
 * its time fails with -ETIME; a link past its time with a wrong signature
 * is a wrong signature. */
START_TEST (test_signed_tamper_and_expiry)
{
    char sig[GW_SIGNED_URL_SIG_LEN + 1];
    ck_assert_int_eq (gw_signed_url_sign (s_key, KEY_LEN, "t", "s", "output/a.png", 1000, sig), 0);
    ck_assert_uint_eq (strlen (sig), 64);
    ck_assert_int_eq (gw_signed_url_check (s_key, KEY_LEN, "t", "s", "output/a.png", 1000, sig,
                                           999), 0);
    ck_assert_int_eq (gw_signed_url_check (s_key, KEY_LEN, "t", "s", "output/a.png", 1000, sig,
                                           1000), 0);
    ck_assert_int_eq (gw_signed_url_check (s_key, KEY_LEN, "t", "s", "output/a.png", 1000, sig,
                                           1001), -ETIME);
    ck_assert_int_eq (gw_signed_url_check (s_key, KEY_LEN, "u", "s", "output/a.png", 1000, sig,
                                           999), -EBADMSG);
    ck_assert_int_eq (gw_signed_url_check (s_key, KEY_LEN, "t", "s2", "output/a.png", 1000, sig,
                                           999), -EBADMSG);
    ck_assert_int_eq (gw_signed_url_check (s_key, KEY_LEN, "t", "s", "output/b.png", 1000, sig,
                                           999), -EBADMSG);
    ck_assert_int_eq (gw_signed_url_check (s_key, KEY_LEN, "t", "s", "output/a.png", 100000, sig,
                                           999), -EBADMSG);
    /* moving a byte between fields changes the message */
    char sig2[GW_SIGNED_URL_SIG_LEN + 1];
    gw_signed_url_sign (s_key, KEY_LEN, "ab", "c", "output/x", 5, sig);
    gw_signed_url_sign (s_key, KEY_LEN, "a", "bc", "output/x", 5, sig2);
    ck_assert_str_ne (sig, sig2);
    char flipped[GW_SIGNED_URL_SIG_LEN + 1];
    strcpy (flipped, sig);
    flipped[10] = flipped[10] == '0' ? '1' : '0';
    ck_assert_int_eq (gw_signed_url_check (s_key, KEY_LEN, "ab", "c", "output/x", 5, flipped, 1),
                      -EBADMSG);
    ck_assert_int_eq (gw_signed_url_check (s_key, KEY_LEN, "ab", "c", "output/x", 5, "abc", 1),
                      -EBADMSG);
    static const uint8_t other[] = "another key";
    ck_assert_int_eq (gw_signed_url_check (other, sizeof other - 1, "ab", "c", "output/x", 5, sig,
                                           1), -EBADMSG);
    ck_assert_int_eq (gw_signed_url_check (other, sizeof other - 1, "ab", "c", "output/x", 5, sig,
                                           10), -EBADMSG);
    /* no key, no signature */
    ck_assert_int_eq (gw_signed_url_sign (s_key, 0, "t", "s", "output/a", 1, sig), -EIO);
}
END_TEST

static const char *const s_bad_paths[] = {
    "/signed/",
    "/signed/t/s/1/",
    "/signed/t/s/1/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "/signed/t/s/1/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/",
    "/signed/t/s/x1/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/output/a",
    "/signed/t/s/-1/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/output/a",
    "/signed/t/s/1/" "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef/output/a",
    "/signed/t/s/1/" "0123456789abcdef/output/a",
    "/signed/t/.s/1/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/output/a",
    "/signed/t t/s/1/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/output/a",
    "/signed/t/s/1/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/../x",
    "/signed/t/s/1/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef//etc/x",
    "/signed/t/s/1/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/output/",
    "/signed/t/s/1/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/a/../../x",
    "/signed/t/s/1234567890123456789/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/output/a",
    "/other/t/s/1/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/output/a",
};

START_TEST (test_signed_parse_bad)
{
    char tenant[65], session[65], sig[GW_SIGNED_URL_SIG_LEN + 1];
    long long expires;
    const char *rel;
    ck_assert_msg (gw_signed_url_parse (s_bad_paths[_i], tenant, session, &expires, sig, &rel)
                   == -EINVAL, "accepted %s", s_bad_paths[_i]);
}
END_TEST

Suite *
download_suite (void)
{
    Suite *s = suite_create ("download");
    TCase *tc = tcase_create ("policy");
    tcase_add_loop_test (tc, test_classify, 0, (int) (sizeof s_addrs / sizeof s_addrs[0]));
    tcase_add_test (tc, test_classify_bad_sockaddr);
    tcase_add_loop_test (tc, test_safe_name, 0, (int) (sizeof s_names / sizeof s_names[0]));
    tcase_add_test (tc, test_safe_name_long);
    tcase_add_test (tc, test_suffixed);
    tcase_add_loop_test (tc, test_name_from_url, 0, (int) (sizeof s_urls / sizeof s_urls[0]));
    suite_add_tcase (s, tc);
    tc = tcase_create ("signed_url");
    tcase_add_test (tc, test_signed_roundtrip);
    tcase_add_test (tc, test_signed_tamper_and_expiry);
    tcase_add_loop_test (tc, test_signed_parse_bad, 0,
                         (int) (sizeof s_bad_paths / sizeof s_bad_paths[0]));
    suite_add_tcase (s, tc);
    return s;
}
