/* test_blob_auth: gw_blob_auth, the pure parts of Azure Blob Storage
 * access: the account from a connection string, an endpoint URL and a key
 * (the forms Azure and the emulator use, and the ways each can be wrong,
 * with errors that never echo the key), container names, blob names as URL
 * paths, x-ms-date and SAS times, and known answers for Shared Key and
 * service SAS signing computed independently with Python from Microsoft's
 * documented formats. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_blob_auth.h"
#include "gw_url.h"
#include "suites.h"
#include "testutil.h"

#define DEV_KEY GW_BLOB_DEV_KEY
#define CONTAINER "codebox-artifacts"
/* GW_BLOB_DEV_KEY decoded: python3 -c 'import base64; print (base64.b64decode
 * ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==").hex ())' */
#define DEV_KEY_HEX "11bcbcbdd334db134e72a165a94c093cb96612d9420d7275394cc54f9d2e4916" \
                    "7a205b2e16ad94544ac2cf823ab6afcad526453d33adaff2811c17a4b2818c1b"
/* base64 of the 16 bytes "sixteen byte key" */
#define KEY16 "c2l4dGVlbiBieXRlIGtleQ=="

/* Parses settings that must be valid into *account; fails the test if not. */
static void
s_parse_ok (const char *cs, const char *url, const char *key, const char *container,
            gw_blob_account_t *account)
{
    char err[512] = "";
    int rc = gw_blob_account_parse (cs, url, key, container, account, err, sizeof err);
    ck_assert_msg (rc == 1, "cs=%s url=%s: rc %d, err %s", cs ? cs : "(null)",
                   url ? url : "(null)", rc, err);
}

/* The account's key is exactly the bytes hex names. */
static void
s_assert_key_hex (const gw_blob_account_t *account, const char *hex)
{
    size_t len = 0;
    uint8_t *want = tu_hex_decode (hex, &len);
    ck_assert_uint_eq (account->key_len, len);
    ck_assert_int_eq (memcmp (account->key, want, len), 0);
    free (want);
}

/* ---- gw_blob_account_parse: valid settings ------------------------------ */

/* No connection string and no URL: blob upload is off, whatever the key
 * and the container say. */
START_TEST (test_parse_off)
{
    gw_blob_account_t account;
    char err[256] = "";
    ck_assert_int_eq (gw_blob_account_parse ("", "", "", CONTAINER, &account, err, sizeof err), 0);
    ck_assert_int_eq (gw_blob_account_parse (NULL, NULL, NULL, NULL, &account, err, sizeof err),
                      0);
    ck_assert_int_eq (gw_blob_account_parse ("", "", DEV_KEY, "NOT valid", &account, err,
                                             sizeof err), 0);
    ck_assert_str_eq (err, "");
    ck_assert_str_eq (account.account, "");
    ck_assert_uint_eq (account.key_len, 0);
}
END_TEST

/* The connection string the Azure portal shows. */
START_TEST (test_parse_full_connection_string)
{
    gw_blob_account_t account;
    s_parse_ok ("DefaultEndpointsProtocol=https;AccountName=myacct;AccountKey=" KEY16
                ";EndpointSuffix=core.windows.net", "", "", CONTAINER, &account);
    ck_assert_str_eq (account.account, "myacct");
    ck_assert_str_eq (account.endpoint, "https://myacct.blob.core.windows.net");
    ck_assert_str_eq (account.container, CONTAINER);
    ck_assert_uint_eq (account.key_len, 16);
    ck_assert_int_eq (memcmp (account.key, "sixteen byte key", 16), 0);
    /* protocol and suffix have defaults (https, core.windows.net) */
    s_parse_ok ("AccountName=myacct;AccountKey=" DEV_KEY, "", "", CONTAINER, &account);
    ck_assert_str_eq (account.endpoint, "https://myacct.blob.core.windows.net");
    s_assert_key_hex (&account, DEV_KEY_HEX);
    /* another cloud, over http */
    s_parse_ok ("DefaultEndpointsProtocol=http;AccountName=acct9;AccountKey=" KEY16
                ";EndpointSuffix=core.chinacloudapi.cn", "", "", CONTAINER, &account);
    ck_assert_str_eq (account.endpoint, "http://acct9.blob.core.chinacloudapi.cn");
}
END_TEST

/* BlobEndpoint wins over protocol and suffix; trailing '/'s are dropped. */
START_TEST (test_parse_blob_endpoint)
{
    gw_blob_account_t account;
    s_parse_ok ("DefaultEndpointsProtocol=https;AccountName=myacct;AccountKey=" KEY16
                ";BlobEndpoint=https://myacct.blob.core.windows.net/;"
                "EndpointSuffix=example.org", "", "", CONTAINER, &account);
    ck_assert_str_eq (account.endpoint, "https://myacct.blob.core.windows.net");
    ck_assert_str_eq (account.account, "myacct");
    s_parse_ok ("AccountName=devstoreaccount1;AccountKey=" DEV_KEY
                ";BlobEndpoint=http://azurite:10000/devstoreaccount1//", "", "", CONTAINER,
                &account);
    ck_assert_str_eq (account.endpoint, "http://azurite:10000/devstoreaccount1");
    ck_assert_str_eq (account.account, "devstoreaccount1");
}
END_TEST

/* UseDevelopmentStorage=true is the emulator's account, key and endpoint. */
START_TEST (test_parse_development_storage)
{
    gw_blob_account_t account;
    s_parse_ok ("UseDevelopmentStorage=true", "", "", CONTAINER, &account);
    ck_assert_str_eq (account.account, GW_BLOB_DEV_ACCOUNT);
    ck_assert_str_eq (account.account, "devstoreaccount1");
    ck_assert_str_eq (account.endpoint, "http://127.0.0.1:10000/devstoreaccount1");
    ck_assert_str_eq (account.container, CONTAINER);
    s_assert_key_hex (&account, DEV_KEY_HEX);
    /* the value is case-insensitive, and an explicit endpoint still wins */
    s_parse_ok ("UseDevelopmentStorage=TRUE;BlobEndpoint=http://azurite:10000/devstoreaccount1",
                "", "", "abc", &account);
    ck_assert_str_eq (account.account, "devstoreaccount1");
    ck_assert_str_eq (account.endpoint, "http://azurite:10000/devstoreaccount1");
    s_assert_key_hex (&account, DEV_KEY_HEX);
}
END_TEST

/* Keys in any case; empty parts, leading white space and keys codebox
 * does not use (queue, table) are ignored. */
START_TEST (test_parse_tolerant)
{
    gw_blob_account_t account;
    s_parse_ok (";  accountname=myacct;;\t ACCOUNTKEY=" KEY16 "; ;\n endpointSUFFIX=example.net;"
                "DEFAULTENDPOINTSPROTOCOL=http;QueueEndpoint=https://myacct.queue.example.net;"
                "TableEndpoint=https://myacct.table.example.net;", "", "", CONTAINER, &account);
    ck_assert_str_eq (account.account, "myacct");
    ck_assert_str_eq (account.endpoint, "http://myacct.blob.example.net");
    ck_assert_uint_eq (account.key_len, 16);
    ck_assert_int_eq (memcmp (account.key, "sixteen byte key", 16), 0);
    s_parse_ok ("usedevelopmentstorage=true;", "", "", CONTAINER, &account);
    ck_assert_str_eq (account.account, "devstoreaccount1");
    /* white space around names and values (a string read from a file ends
       in a newline), and the protocol in capitals */
    s_parse_ok ("DefaultEndpointsProtocol = HTTPS ;AccountName=myacct ;AccountKey=" KEY16
                ";EndpointSuffix=core.windows.net\n", "", "", CONTAINER, &account);
    ck_assert_str_eq (account.account, "myacct");
    ck_assert_str_eq (account.endpoint, "https://myacct.blob.core.windows.net");
    s_parse_ok ("AccountName=myacct;AccountKey=" KEY16 ";BlobEndpoint=http://azurite:10000/x\r\n",
                "", "", CONTAINER, &account);
    ck_assert_str_eq (account.endpoint, "http://azurite:10000/x");
}
END_TEST

/* CODEBOX_BLOB_URL replaces the connection string's endpoint; account and
 * key still come from the connection string. */
START_TEST (test_parse_url_overrides_connection_string)
{
    gw_blob_account_t account;
    s_parse_ok ("DefaultEndpointsProtocol=https;AccountName=myacct;AccountKey=" KEY16
                ";EndpointSuffix=core.windows.net", "http://127.0.0.1:10000/myacct/", "",
                CONTAINER, &account);
    ck_assert_str_eq (account.endpoint, "http://127.0.0.1:10000/myacct");
    ck_assert_str_eq (account.account, "myacct");
    ck_assert_uint_eq (account.key_len, 16);
    s_parse_ok ("UseDevelopmentStorage=true", "http://azurite:10000/devstoreaccount1", "",
                CONTAINER, &account);
    ck_assert_str_eq (account.endpoint, "http://azurite:10000/devstoreaccount1");
    ck_assert_str_eq (account.account, "devstoreaccount1");
}
END_TEST

/* URL and key without a connection string: the account is the host's
 * first label, or for an IP address or localhost the first path segment. */
START_TEST (test_parse_url_and_key)
{
    static const struct {
        const char *url, *account, *endpoint;
    } cases[] = {
        {"https://acct2.blob.core.windows.net", "acct2", "https://acct2.blob.core.windows.net"},
        {"https://acct2.blob.core.windows.net/", "acct2", "https://acct2.blob.core.windows.net"},
        {"https://acct2.blob.core.windows.net:443", "acct2",
         "https://acct2.blob.core.windows.net:443"},
        {"http://127.0.0.1:10000/devstoreaccount1", "devstoreaccount1",
         "http://127.0.0.1:10000/devstoreaccount1"},
        {"http://127.0.0.1:10000/devstoreaccount1/", "devstoreaccount1",
         "http://127.0.0.1:10000/devstoreaccount1"},
        {"http://10.0.0.7/acct3", "acct3", "http://10.0.0.7/acct3"},
        {"http://localhost:10000/devstoreaccount1", "devstoreaccount1",
         "http://localhost:10000/devstoreaccount1"},
        {"http://LOCALHOST:10000/acct4/", "acct4", "http://LOCALHOST:10000/acct4"},
        {"http://[::1]:10000/devstoreaccount1", "devstoreaccount1",
         "http://[::1]:10000/devstoreaccount1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gw_blob_account_t account;
        s_parse_ok ("", cases[i].url, DEV_KEY, CONTAINER, &account);
        ck_assert_str_eq (account.account, cases[i].account);
        ck_assert_str_eq (account.endpoint, cases[i].endpoint);
        ck_assert_str_eq (account.container, CONTAINER);
        s_assert_key_hex (&account, DEV_KEY_HEX);
    }
    /* NULL connection string is the same as "" */
    gw_blob_account_t account;
    s_parse_ok (NULL, "https://acct2.blob.core.windows.net", KEY16, "abc", &account);
    ck_assert_str_eq (account.account, "acct2");
    ck_assert_uint_eq (account.key_len, 16);
}
END_TEST

/* ---- gw_blob_account_parse: errors -------------------------------------- */

static const struct {
    const char *cs, *url, *key;
    const char *says;           /* a word the error must hold */
} s_bad[] = {
    /* connection strings */
    {"AccountName=myacct", "", "", "AccountKey"},
    {"AccountName=myacct;EndpointSuffix=core.windows.net", "", DEV_KEY, "AccountKey"},
    {"AccountKey=" DEV_KEY, "", "", "AccountName"},
    {"UseDevelopmentStorage=false", "", "", "AccountKey"},
    {"AccountName=myacct;SharedAccessSignature=sv=2020-12-06&ss=b&sp=rw&sig=c2VjcmV0", "", "",
     "SharedAccessSignature"},
    {"BlobEndpoint=https://myacct.blob.core.windows.net/;"
     "SharedAccessSignature=sv=2020-12-06&ss=b&sig=c2VjcmV0", "", "", "SharedAccessSignature"},
    {"AccountName=myacct;AccountKey=not*base64!", "", "", "base64"},
    {"AccountName=myacct;AccountKey=", "", "", "base64"},
    {"AccountName=MyAcct;AccountKey=" DEV_KEY, "", "", "AccountName"},
    {"AccountName=ab;AccountKey=" DEV_KEY, "", "", "AccountName"},
    {"AccountName=abcdefghijklmnopqrstuvwxy;AccountKey=" DEV_KEY, "", "", "AccountName"},
    {"AccountName=my-acct;AccountKey=" DEV_KEY, "", "", "AccountName"},
    {"AccountName=myacct;AccountKey=" DEV_KEY ";oops", "", "", "'='"},
    {"AccountName=myacct;AccountKey", "", "", "'='"},
    {"AccountName=myacct;AccountKey=" DEV_KEY ";DefaultEndpointsProtocol=ftp", "", "",
     "DefaultEndpointsProtocol"},
    {"AccountName=myacct;AccountKey=" DEV_KEY ";BlobEndpoint=ftp://myacct.example.org", "", "",
     "BlobEndpoint"},
    {"AccountName=myacct;AccountKey=" DEV_KEY
     ";BlobEndpoint=https://myacct.blob.core.windows.net/?sv=2020-12-06&sig=c2VjcmV0", "", "",
     "query"},
    /* a bad URL next to a good connection string */
    {"AccountName=myacct;AccountKey=" DEV_KEY, "ftp://myacct.blob.core.windows.net", "",
     "CODEBOX_BLOB_URL"},
    /* URL and key */
    {"", "ftp://acct2.blob.core.windows.net", DEV_KEY, "http"},
    {"", "acct2.blob.core.windows.net", DEV_KEY, "http"},
    {"", "https://", DEV_KEY, "http"},
    {"", "https:///acct2", DEV_KEY, "http"},
    {"", "https://acct2.blob.core.windows.net/?sv=2020-12-06&ss=b&sig=c2VjcmV0", DEV_KEY,
     "query"},
    {"", "https://acct2.blob.core.windows.net?sv=2020-12-06", DEV_KEY, "query"},
    {"", "https://user@acct2.blob.core.windows.net", DEV_KEY, "user"},
    {"", "https://acct2.blob.core.windows.net", "", "CODEBOX_BLOB_ACCOUNT_KEY"},
    {"", "https://acct2.blob.core.windows.net", NULL, "CODEBOX_BLOB_ACCOUNT_KEY"},
    {"", "https://acct2.blob.core.windows.net", "not*base64!", "base64"},
    {"", "https://AB.blob.core.windows.net", DEV_KEY, "storage account"},
    {"", "http://127.0.0.1:10000", DEV_KEY, "storage account"},
    {"", "http://127.0.0.1:10000/", DEV_KEY, "storage account"},
    {"", "http://localhost:10000/Bad_Name", DEV_KEY, "storage account"},
};

/* Each of s_bad is refused with -EINVAL and a sentence naming the problem
 * that never holds the key (nor a bad key's text). */
START_TEST (test_parse_bad)
{
    gw_blob_account_t account;
    char err[512];
    memset (err, 0, sizeof err);
    int rc = gw_blob_account_parse (s_bad[_i].cs, s_bad[_i].url, s_bad[_i].key, CONTAINER,
                                    &account, err, sizeof err);
    ck_assert_msg (rc == -EINVAL, "cs=%s url=%s: rc %d", s_bad[_i].cs, s_bad[_i].url, rc);
    ck_assert_msg (strlen (err) > 10, "cs=%s url=%s: error \"%s\"", s_bad[_i].cs,
                   s_bad[_i].url, err);
    ck_assert_msg (strstr (err, s_bad[_i].says), "cs=%s url=%s: error \"%s\" lacks \"%s\"",
                   s_bad[_i].cs, s_bad[_i].url, err, s_bad[_i].says);
    ck_assert_msg (!strstr (err, "Eby8vdM02x") && !strstr (err, "c2l4dGVl")
                   && !strstr (err, "not*base64") && !strstr (err, "c2VjcmV0"),
                   "error holds the key: %s", err);
    ck_assert_uint_eq (account.key_len, 0);
}
END_TEST

/* A good account with a bad container is refused; good ones are kept. */
START_TEST (test_parse_container)
{
    char c64[65];
    memset (c64, 'a', 64);
    c64[64] = '\0';
    const char *bad[] = {"ab", "Upper", "a--b", "-ab", "ab-", c64, "", "a_b", "a.b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gw_blob_account_t account;
        char err[512] = "";
        ck_assert_msg (gw_blob_account_parse ("UseDevelopmentStorage=true", "", "", bad[i],
                                              &account, err, sizeof err) == -EINVAL,
                       "container %s accepted", bad[i]);
        ck_assert_ptr_nonnull (strstr (err, "CODEBOX_BLOB_CONTAINER"));
        ck_assert_ptr_null (strstr (err, "Eby8vdM02x"));
        memset (err, 0, sizeof err);
        ck_assert_int_eq (gw_blob_account_parse ("", "https://acct2.blob.core.windows.net",
                                                 DEV_KEY, bad[i], &account, err, sizeof err),
                          -EINVAL);
        ck_assert_ptr_nonnull (strstr (err, "CODEBOX_BLOB_CONTAINER"));
    }
    gw_blob_account_t account;
    char err[512] = "";
    ck_assert_int_eq (gw_blob_account_parse ("UseDevelopmentStorage=true", "", "", NULL,
                                             &account, err, sizeof err), -EINVAL);
    const char *good[] = {"codebox-artifacts", "abc", "0ab", "a1-2-3"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        s_parse_ok ("UseDevelopmentStorage=true", "", "", good[i], &account);
        ck_assert_str_eq (account.container, good[i]);
    }
    c64[63] = '\0';
    s_parse_ok ("UseDevelopmentStorage=true", "", "", c64, &account);
    ck_assert_str_eq (account.container, c64);
}
END_TEST

/* ---- names -------------------------------------------------------------- */

static const struct {
    const char *name;
    bool valid;
} s_containers[] = {
    {"abc", true},
    {"codebox-artifacts", true},
    {"a-b", true},
    {"0ab", true},
    {"ab9", true},
    {"123", true},
    {"a1-2-3", true},
    {"", false},
    {"a", false},
    {"ab", false},
    {"Abc", false},
    {"Upper", false},
    {"a--b", false},
    {"abc--", false},
    {"-ab", false},
    {"ab-", false},
    {"---", false},
    {"a_b", false},
    {"a.b", false},
    {"a b", false},
    {"ab/c", false},
    {"ab\xc3\xa9", false},
};

START_TEST (test_container_valid)
{
    ck_assert_msg (gw_blob_container_valid (s_containers[_i].name) == s_containers[_i].valid,
                   "\"%s\" should be %s", s_containers[_i].name,
                   s_containers[_i].valid ? "valid" : "invalid");
}
END_TEST

/* 63 characters is the most a container name may have. */
START_TEST (test_container_length)
{
    char name[70];
    for (size_t len = 60; len < sizeof name; len++) {
        memset (name, 'a', len);
        name[len] = '\0';
        name[len / 2] = '-';
        ck_assert_msg (gw_blob_container_valid (name) == (len <= 63), "length %zu", len);
    }
}
END_TEST

/* Names become URL paths: '/' and unreserved bytes stay, every other byte
 * is %XX in upper-case hex (UTF-8 byte by byte). Expected values agree
 * with python3 urllib.parse.quote (name, safe="/"). */
START_TEST (test_encode_path)
{
    static const struct {
        const char *name, *encoded;
    } cases[] = {
        {"a b/c%d/\xc3\xa9.png", "a%20b/c%25d/%C3%A9.png"},
        {"ABCXYZabcxyz0189-._~/x", "ABCXYZabcxyz0189-._~/x"},
        {"!*'();:@&=+$,?#[]", "%21%2A%27%28%29%3B%3A%40%26%3D%2B%24%2C%3F%23%5B%5D"},
        {"\x01\x1f\x7f\x80\xff", "%01%1F%7F%80%FF"},
        {"\\\"<>{}|^`", "%5C%22%3C%3E%7B%7D%7C%5E%60"},
        {"sess 1/plot.png", "sess%201/plot.png"},
        {"//", "//"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = gw_url_encode (cases[i].name, true);
        ck_assert_ptr_nonnull (out);
        ck_assert_str_eq (out, cases[i].encoded);
        free (out);
    }
}
END_TEST

/* Every byte 1-255 alone: kept exactly when unreserved or '/', otherwise
 * %XX with its value. */
START_TEST (test_encode_path_every_byte)
{
    for (int c = 1; c < 256; c++) {
        char name[2] = {(char) c, '\0'};
        char *out = gw_url_encode (name, true);
        ck_assert_ptr_nonnull (out);
        bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || (c && strchr ("-._~/", c));
        char want[4];
        if (keep)
            snprintf (want, sizeof want, "%c", c);
        else
            snprintf (want, sizeof want, "%%%02X", (unsigned) c);
        ck_assert_msg (strcmp (out, want) == 0, "byte %d: got %s, want %s", c, out, want);
        free (out);
    }
}
END_TEST

START_TEST (test_url)
{
    gw_blob_account_t account;
    s_parse_ok ("AccountName=myacct;AccountKey=" KEY16, "", "", CONTAINER, &account);
    char *url = gw_blob_url (&account, "sess 1/out put/\xc3\xa9.png");
    ck_assert_ptr_nonnull (url);
    ck_assert_str_eq (url, "https://myacct.blob.core.windows.net/codebox-artifacts/"
                      "sess%201/out%20put/%C3%A9.png");
    free (url);
    s_parse_ok ("UseDevelopmentStorage=true", "", "", "abc", &account);
    url = gw_blob_url (&account, "t/s/plot.png");
    ck_assert_ptr_nonnull (url);
    ck_assert_str_eq (url, "http://127.0.0.1:10000/devstoreaccount1/abc/t/s/plot.png");
    free (url);
    url = gw_blob_url (&account, "a?b#c");
    ck_assert_ptr_nonnull (url);
    ck_assert_str_eq (url, "http://127.0.0.1:10000/devstoreaccount1/abc/a%3Fb%23c");
    free (url);
}
END_TEST

/* ---- times -------------------------------------------------------------- */

/* python3 -c 'import email.utils as e, datetime as d; [print (t, e.formatdate (t, usegmt=True),
 *     d.datetime.fromtimestamp (t, d.timezone.utc).strftime ("%Y-%m-%dT%H:%M:%SZ"))
 *     for t in [0, 1795348800, 1767225600, 951868799, 2147483648, 2208988800]]' */
static const struct {
    long long t;
    const char *http, *iso;
} s_times[] = {
    {0, "Thu, 01 Jan 1970 00:00:00 GMT", "1970-01-01T00:00:00Z"},
    {1795348800, "Sun, 22 Nov 2026 12:00:00 GMT", "2026-11-22T12:00:00Z"},
    {1767225600, "Thu, 01 Jan 2026 00:00:00 GMT", "2026-01-01T00:00:00Z"},
    {951868799, "Tue, 29 Feb 2000 23:59:59 GMT", "2000-02-29T23:59:59Z"},
    {2147483648LL, "Tue, 19 Jan 2038 03:14:08 GMT", "2038-01-19T03:14:08Z"},
    {2208988800LL, "Sun, 01 Jan 2040 00:00:00 GMT", "2040-01-01T00:00:00Z"},
};

START_TEST (test_times)
{
    if (sizeof (time_t) < 8 && s_times[_i].t > INT32_MAX)
        return;
    char out[32];
    memset (out, 'X', sizeof out);
    gw_blob_http_date ((time_t) s_times[_i].t, out);
    ck_assert_str_eq (out, s_times[_i].http);
    memset (out, 'X', sizeof out);
    gw_blob_iso_time ((time_t) s_times[_i].t, out);
    ck_assert_str_eq (out, s_times[_i].iso);
}
END_TEST

/* ---- Shared Key: known answers ------------------------------------------ */

/* Each expected string to sign and signature below was computed with the
 * Python command in the comment above it, which follows Microsoft's Shared
 * Key format (version 2015-02-21 and later) field by field: VERB,
 * Content-Encoding, Content-Language, Content-Length (empty when 0),
 * Content-MD5, Content-Type, Date, If-Modified-Since, If-Match,
 * If-None-Match, If-Unmodified-Since, Range, then the x-ms- headers
 * "name:value" sorted, then "/account/urlpath" and "\nname:value" query
 * lines sorted; all joined by "\n"; the signature is
 * base64 (HMAC-SHA256 (base64-decoded key, UTF-8 string)). Strip the
 * leading " * " and run the command to recompute. The key is
 * GW_BLOB_DEV_KEY, the public key of the emulator's account. */

#define X_MS_DATE "x-ms-date:Sun, 22 Nov 2026 12:00:00 GMT"
#define X_MS_VERSION "x-ms-version:2020-12-06"

/* Put Blob of 1234 bytes to the emulator, whose path starts with the
 * account:
 * python3 -c 'import base64, hashlib, hmac; print (repr (s := "\n".join (
 *     ["PUT", "", "", "1234", "", "image/png"] + [""] * 6 + sorted ([
 *     "x-ms-version:2020-12-06", "x-ms-date:Sun, 22 Nov 2026 12:00:00 GMT",
 *     "x-ms-blob-type:BlockBlob"]) + ["/devstoreaccount1"
 *     + "/devstoreaccount1/codebox-artifacts/sess%201/plot.png"])), base64.b64encode (hmac.new (
 *     base64.b64decode ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="),
 *     s.encode (), hashlib.sha256).digest ()).decode (), sep="\n")' */
START_TEST (test_shared_key_put_blob)
{
    gw_blob_account_t account;
    s_parse_ok ("UseDevelopmentStorage=true", "", "", CONTAINER, &account);
    const char *ms[] = {"x-ms-blob-type:BlockBlob", X_MS_DATE, X_MS_VERSION};
    char *s = gw_blob_string_to_sign (&account, "PUT", 1234, "image/png", ms, 3,
                                      "/devstoreaccount1/codebox-artifacts/sess%201/plot.png", "");
    ck_assert_ptr_nonnull (s);
    ck_assert_str_eq (s, "PUT\n"
                      "\n"              /* Content-Encoding */
                      "\n"              /* Content-Language */
                      "1234\n"          /* Content-Length */
                      "\n"              /* Content-MD5 */
                      "image/png\n"     /* Content-Type */
                      "\n\n\n\n\n\n"    /* Date, If-*, Range */
                      "x-ms-blob-type:BlockBlob\n"
                      "x-ms-date:Sun, 22 Nov 2026 12:00:00 GMT\n"
                      "x-ms-version:2020-12-06\n"
                      "/devstoreaccount1/devstoreaccount1/codebox-artifacts/sess%201/plot.png");
    char *sig = gw_blob_hmac (&account, s);
    ck_assert_ptr_nonnull (sig);
    ck_assert_str_eq (sig, "QOwWrmyLdVoj80UJYWnG/k+8S4gEM08CtpqQHhXS7MA=");
    free (sig);
    free (s);
}
END_TEST

/* Create Container (no body: Content-Length empty; no content type):
 * python3 -c 'import base64, hashlib, hmac; print (repr (s := "\n".join (
 *     ["PUT", "", "", "", "", ""] + [""] * 6 + sorted ([
 *     "x-ms-version:2020-12-06", "x-ms-date:Sun, 22 Nov 2026 12:00:00 GMT"])
 *     + ["/myacct" + "/codebox-artifacts"]) + "".join ("\n%s:%s" % q for q in sorted ([
 *     ("restype", "container")]))), base64.b64encode (hmac.new (
 *     base64.b64decode ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="),
 *     s.encode (), hashlib.sha256).digest ()).decode (), sep="\n")' */
START_TEST (test_shared_key_create_container)
{
    gw_blob_account_t account;
    s_parse_ok ("AccountName=myacct;AccountKey=" DEV_KEY, "", "", CONTAINER, &account);
    const char *ms[] = {X_MS_DATE, X_MS_VERSION};
    static const char want[] = "PUT\n\n\n\n\n\n\n\n\n\n\n\n"
                               "x-ms-date:Sun, 22 Nov 2026 12:00:00 GMT\n"
                               "x-ms-version:2020-12-06\n"
                               "/myacct/codebox-artifacts\n"
                               "restype:container";
    /* length 0 and a negative length are both written empty */
    long long lengths[] = {0, -1};
    for (size_t i = 0; i < 2; i++) {
        char *s = gw_blob_string_to_sign (&account, "PUT", lengths[i], NULL, ms, 2,
                                          "/codebox-artifacts", "\nrestype:container");
        ck_assert_ptr_nonnull (s);
        ck_assert_str_eq (s, want);
        char *sig = gw_blob_hmac (&account, s);
        ck_assert_ptr_nonnull (sig);
        ck_assert_str_eq (sig, "cS5ozqq/tKqUB81St0JTJtVk5juZZuiBV3oD8SMeVYU=");
        free (sig);
        free (s);
    }
    /* "" content type is the same as NULL */
    char *s = gw_blob_string_to_sign (&account, "PUT", 0, "", ms, 2, "/codebox-artifacts",
                                      "\nrestype:container");
    ck_assert_ptr_nonnull (s);
    ck_assert_str_eq (s, want);
    free (s);
}
END_TEST

/* List Blobs (two query parameters, sorted by the caller):
 * python3 -c 'import base64, hashlib, hmac; print (repr (s := "\n".join (
 *     ["GET", "", "", "", "", ""] + [""] * 6 + sorted ([
 *     "x-ms-version:2020-12-06", "x-ms-date:Sun, 22 Nov 2026 12:00:00 GMT"])
 *     + ["/myacct" + "/codebox-artifacts"]) + "".join ("\n%s:%s" % q for q in sorted ([
 *     ("restype", "container"), ("comp", "list")]))), base64.b64encode (hmac.new (
 *     base64.b64decode ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="),
 *     s.encode (), hashlib.sha256).digest ()).decode (), sep="\n")' */
START_TEST (test_shared_key_list)
{
    gw_blob_account_t account;
    s_parse_ok ("AccountName=myacct;AccountKey=" DEV_KEY, "", "", CONTAINER, &account);
    const char *ms[] = {X_MS_DATE, X_MS_VERSION};
    char *s = gw_blob_string_to_sign (&account, "GET", 0, NULL, ms, 2, "/codebox-artifacts",
                                      "\ncomp:list\nrestype:container");
    ck_assert_ptr_nonnull (s);
    ck_assert_str_eq (s, "GET\n\n\n\n\n\n\n\n\n\n\n\n"
                      "x-ms-date:Sun, 22 Nov 2026 12:00:00 GMT\n"
                      "x-ms-version:2020-12-06\n"
                      "/myacct/codebox-artifacts\n"
                      "comp:list\n"
                      "restype:container");
    char *sig = gw_blob_hmac (&account, s);
    ck_assert_ptr_nonnull (sig);
    ck_assert_str_eq (sig, "Z8fXF0Gx68zOv/bCidNUgzrNY5X7EW9cVPQudIArinc=");
    free (sig);
    free (s);
    /* no x-ms- headers and NULL query lines */
    s = gw_blob_string_to_sign (&account, "HEAD", 7, "text/plain", NULL, 0, "/c/b", NULL);
    ck_assert_ptr_nonnull (s);
    ck_assert_str_eq (s, "HEAD\n\n\n7\n\ntext/plain\n\n\n\n\n\n\n/myacct/c/b");
    free (s);
}
END_TEST

/* gw_blob_hmac alone, and no signature without a key:
 * python3 -c 'import base64, hashlib, hmac; [print (repr (m), base64.b64encode (hmac.new (
 *     base64.b64decode ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="),
 *     m, hashlib.sha256).digest ()).decode ()) for m in [b"", b"hello"]]' */
START_TEST (test_hmac)
{
    gw_blob_account_t account;
    s_parse_ok ("UseDevelopmentStorage=true", "", "", CONTAINER, &account);
    char *sig = gw_blob_hmac (&account, "");
    ck_assert_ptr_nonnull (sig);
    ck_assert_str_eq (sig, "RNeMV4QhAsdhJ2sGUgufA/AfRsaKXZU2cEJdUsvj4NY=");
    free (sig);
    sig = gw_blob_hmac (&account, "hello");
    ck_assert_ptr_nonnull (sig);
    ck_assert_str_eq (sig, "RZNkcjdiqwLn8Mmp35VHt1V5CCIG/zvduk6oPMOEU+s=");
    free (sig);
    gw_blob_account_t none;
    memset (&none, 0, sizeof none);
    ck_assert_ptr_null (gw_blob_hmac (&none, "hello"));
}
END_TEST

/* ---- service SAS: known answers ----------------------------------------- */

/* Each expected SAS string to sign and URL below was computed with the
 * Python command above it, which follows Microsoft's service SAS format
 * for version 2020-12-06: sp, st, se, "/blob/account/container/blobname"
 * (the name not encoded), si, sip, spr, sv, sr, snapshot time, ses, rscc,
 * rscd, rsce, rscl, rsct, joined by "\n"; sig is base64 (HMAC-SHA256 (key,
 * that)); the URL's path is quote (name) and every query value is
 * quote (value, safe=""). The expiry is 1795348800, 2026-11-22 12:00 UTC. */

#define EXPIRES 1795348800
#define EXPIRY_ISO "2026-11-22T12:00:00Z"

/* The value of hex digit c, or -1. */
static int
s_hex (char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
           : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decodes the %XX escapes of the len chars of s into a new string. */
static char *
s_percent_decode (const char *s, size_t len)
{
    char *out = malloc (len + 1);
    ck_assert_ptr_nonnull (out);
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%' && i + 2 < len && s_hex (s[i + 1]) >= 0
            && s_hex (s[i + 2]) >= 0) {
            out[k++] = (char) (s_hex (s[i + 1]) * 16 + s_hex (s[i + 2]));
            i += 2;
        } else
            out[k++] = s[i];
    }
    out[k] = '\0';
    return out;
}

/* Checks the parts of a SAS URL one by one: the blob URL, then the query
 * parameters sv, se, sr, sp and sig, each value free of raw '+', '/' and
 * '=', and sig decoding to the HMAC of the SAS string to sign. */
static void
s_check_sas_parts (const gw_blob_account_t *account, const char *name, const char *url)
{
    char *base = gw_blob_url (account, name);
    ck_assert_ptr_nonnull (base);
    size_t base_len = strlen (base);
    ck_assert_int_eq (strncmp (url, base, base_len), 0);
    ck_assert_int_eq (url[base_len], '?');
    free (base);
    const char *query = url + base_len + 1;
    ck_assert_ptr_null (strchr (query, '+'));
    ck_assert_ptr_null (strchr (query, '/'));
    ck_assert_ptr_null (strchr (query, '?'));
    ck_assert_ptr_null (strchr (query, '#'));
    bool sv = false, se = false, sr = false, sp = false, sig = false;
    for (const char *p = query; *p;) {
        size_t len = strcspn (p, "&");
        const char *eq = memchr (p, '=', len);
        ck_assert_msg (eq != NULL, "query part without '=' in %s", url);
        size_t name_len = (size_t) (eq - p);
        const char *value = eq + 1;
        size_t value_len = len - name_len - 1;
        ck_assert_msg (memchr (value, '=', value_len) == NULL, "raw '=' in a value of %s", url);
        ck_assert_msg (value_len > 0, "empty value in %s", url);
        if (name_len == 2 && strncmp (p, "sv", 2) == 0) {
            ck_assert_int_eq (value_len == 10 && strncmp (value, "2020-12-06", 10) == 0, 1);
            sv = true;
        } else if (name_len == 2 && strncmp (p, "se", 2) == 0) {
            ck_assert_int_eq (strncmp (value, "2026-11-22T12%3A00%3A00Z", value_len), 0);
            ck_assert_uint_eq (value_len, strlen ("2026-11-22T12%3A00%3A00Z"));
            se = true;
        } else if (name_len == 2 && strncmp (p, "sr", 2) == 0) {
            ck_assert_int_eq (value_len == 1 && value[0] == 'b', 1);
            sr = true;
        } else if (name_len == 2 && strncmp (p, "sp", 2) == 0) {
            ck_assert_int_eq (value_len == 1 && value[0] == 'r', 1);
            sp = true;
        } else if (name_len == 3 && strncmp (p, "sig", 3) == 0) {
            ck_assert_ptr_nonnull (memchr (value, '%', value_len));  /* %3D at least */
            char *got = s_percent_decode (value, value_len);
            char *to_sign = gw_blob_sas_string_to_sign (account, name, EXPIRY_ISO);
            ck_assert_ptr_nonnull (to_sign);
            char *want = gw_blob_hmac (account, to_sign);
            ck_assert_ptr_nonnull (want);
            ck_assert_str_eq (got, want);
            free (want);
            free (to_sign);
            free (got);
            sig = true;
        } else
            ck_abort_msg ("unexpected query parameter in %s", url);
        p += len;
        if (*p == '&')
            p++;
    }
    ck_assert_msg (sv && se && sr && sp && sig, "a parameter is missing in %s", url);
}

/* The emulator's account; the signature has '/'s and an '=':
 * python3 -c 'import base64, hashlib, hmac, urllib.parse as u; print (repr (s := "\n".join ([
 *     "r", "", (se := "2026-11-22T12:00:00Z"), "/blob/devstoreaccount1/codebox-artifacts/"
 *     + (n := "sess 1/plot.png"), "", "", "", "2020-12-06", "b"] + [""] * 7)),
 *     g := base64.b64encode (hmac.new (
 *     base64.b64decode ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="),
 *     s.encode (), hashlib.sha256).digest ()).decode (),
 *     "http://127.0.0.1:10000/devstoreaccount1/codebox-artifacts/" + u.quote (n) + "?sv=2020-12-06&se="
 *     + u.quote (se, safe="") + "&sr=b&sp=r&sig=" + u.quote (g, safe=""), sep="\n")' */
START_TEST (test_sas_emulator)
{
    gw_blob_account_t account;
    s_parse_ok ("UseDevelopmentStorage=true", "", "", CONTAINER, &account);
    char *s = gw_blob_sas_string_to_sign (&account, "sess 1/plot.png", EXPIRY_ISO);
    ck_assert_ptr_nonnull (s);
    ck_assert_str_eq (s, "r\n"                 /* sp */
                      "\n"                     /* st */
                      "2026-11-22T12:00:00Z\n" /* se */
                      "/blob/devstoreaccount1/codebox-artifacts/sess 1/plot.png\n"
                      "\n\n\n"                 /* si, sip, spr */
                      "2020-12-06\n"           /* sv */
                      "b\n"                    /* sr */
                      "\n\n\n\n\n\n");         /* snapshot, ses, rscc, rscd, rsce, rscl; rsct */
    char *sig = gw_blob_hmac (&account, s);
    ck_assert_ptr_nonnull (sig);
    ck_assert_str_eq (sig, "Zp/ep8d4DDfQZN4/UgWdg1Ea8tPakHMGwb7lAQxGFs4=");
    free (sig);
    free (s);
    char *url = gw_blob_sas_url (&account, "sess 1/plot.png", EXPIRES);
    ck_assert_ptr_nonnull (url);
    ck_assert_str_eq (url, "http://127.0.0.1:10000/devstoreaccount1/codebox-artifacts/"
                      "sess%201/plot.png?sv=2020-12-06&se=2026-11-22T12%3A00%3A00Z&sr=b&sp=r"
                      "&sig=Zp%2Fep8d4DDfQZN4%2FUgWdg1Ea8tPakHMGwb7lAQxGFs4%3D");
    s_check_sas_parts (&account, "sess 1/plot.png", url);
    free (url);
}
END_TEST

/* An Azure account and a name that needs encoding (the string to sign
 * holds it raw, the URL encoded); the signature has a '+' and an '=':
 * python3 -c 'import base64, hashlib, hmac, urllib.parse as u; print (repr (s := "\n".join ([
 *     "r", "", (se := "2026-11-22T12:00:00Z"), "/blob/myacct/codebox-artifacts/"
 *     + (n := "a b/c%d/\u00e9.png"), "", "", "", "2020-12-06", "b"] + [""] * 7)),
 *     g := base64.b64encode (hmac.new (
 *     base64.b64decode ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="),
 *     s.encode (), hashlib.sha256).digest ()).decode (),
 *     "https://myacct.blob.core.windows.net/codebox-artifacts/" + u.quote (n) + "?sv=2020-12-06&se="
 *     + u.quote (se, safe="") + "&sr=b&sp=r&sig=" + u.quote (g, safe=""), sep="\n")' */
START_TEST (test_sas_azure)
{
    gw_blob_account_t account;
    s_parse_ok ("DefaultEndpointsProtocol=https;AccountName=myacct;AccountKey=" DEV_KEY
                ";EndpointSuffix=core.windows.net", "", "", CONTAINER, &account);
    const char *name = "a b/c%d/\xc3\xa9.png";
    char *s = gw_blob_sas_string_to_sign (&account, name, EXPIRY_ISO);
    ck_assert_ptr_nonnull (s);
    ck_assert_str_eq (s, "r\n\n2026-11-22T12:00:00Z\n"
                      "/blob/myacct/codebox-artifacts/a b/c%d/\xc3\xa9.png\n"
                      "\n\n\n2020-12-06\nb\n\n\n\n\n\n\n");
    char *sig = gw_blob_hmac (&account, s);
    ck_assert_ptr_nonnull (sig);
    ck_assert_str_eq (sig, "ACUJYnKSPZDqd9gFD3zw+fEwwn8ytP2efRndkTwSwm8=");
    free (sig);
    free (s);
    char *url = gw_blob_sas_url (&account, name, EXPIRES);
    ck_assert_ptr_nonnull (url);
    ck_assert_str_eq (url, "https://myacct.blob.core.windows.net/codebox-artifacts/"
                      "a%20b/c%25d/%C3%A9.png?sv=2020-12-06&se=2026-11-22T12%3A00%3A00Z&sr=b"
                      "&sp=r&sig=ACUJYnKSPZDqd9gFD3zw%2BfEwwn8ytP2efRndkTwSwm8%3D");
    s_check_sas_parts (&account, name, url);
    free (url);
}
END_TEST

/* The SAS is read-only and for one blob: another name, another expiry or
 * another key gives another signature. */
START_TEST (test_sas_differs)
{
    gw_blob_account_t a, b;
    s_parse_ok ("AccountName=myacct;AccountKey=" DEV_KEY, "", "", CONTAINER, &a);
    s_parse_ok ("AccountName=myacct;AccountKey=" KEY16, "", "", CONTAINER, &b);
    char *u1 = gw_blob_sas_url (&a, "x/plot.png", EXPIRES);
    char *u2 = gw_blob_sas_url (&a, "x/plot2.png", EXPIRES);
    char *u3 = gw_blob_sas_url (&a, "x/plot.png", EXPIRES + 1);
    char *u4 = gw_blob_sas_url (&b, "x/plot.png", EXPIRES);
    ck_assert_ptr_nonnull (u1);
    ck_assert_ptr_nonnull (u2);
    ck_assert_ptr_nonnull (u3);
    ck_assert_ptr_nonnull (u4);
    const char *s1 = strstr (u1, "&sig="), *s2 = strstr (u2, "&sig="), *s3 = strstr (u3, "&sig="),
               *s4 = strstr (u4, "&sig=");
    ck_assert_ptr_nonnull (s1);
    ck_assert_ptr_nonnull (s2);
    ck_assert_ptr_nonnull (s3);
    ck_assert_ptr_nonnull (s4);
    ck_assert_str_ne (s1, s2);
    ck_assert_str_ne (s1, s3);
    ck_assert_str_ne (s1, s4);
    ck_assert_ptr_nonnull (strstr (u3, "se=2026-11-22T12%3A00%3A01Z&"));
    ck_assert_ptr_nonnull (strstr (u1, "&sp=r&"));
    free (u1);
    free (u2);
    free (u3);
    free (u4);
}
END_TEST

Suite *
blob_auth_suite (void)
{
    Suite *s = suite_create ("blob_auth");
    TCase *tc = tcase_create ("account");
    tcase_add_test (tc, test_parse_off);
    tcase_add_test (tc, test_parse_full_connection_string);
    tcase_add_test (tc, test_parse_blob_endpoint);
    tcase_add_test (tc, test_parse_development_storage);
    tcase_add_test (tc, test_parse_tolerant);
    tcase_add_test (tc, test_parse_url_overrides_connection_string);
    tcase_add_test (tc, test_parse_url_and_key);
    tcase_add_loop_test (tc, test_parse_bad, 0, (int) (sizeof s_bad / sizeof s_bad[0]));
    tcase_add_test (tc, test_parse_container);
    suite_add_tcase (s, tc);
    tc = tcase_create ("names");
    tcase_add_loop_test (tc, test_container_valid, 0,
                         (int) (sizeof s_containers / sizeof s_containers[0]));
    tcase_add_test (tc, test_container_length);
    tcase_add_test (tc, test_encode_path);
    tcase_add_test (tc, test_encode_path_every_byte);
    tcase_add_test (tc, test_url);
    tcase_add_loop_test (tc, test_times, 0, (int) (sizeof s_times / sizeof s_times[0]));
    suite_add_tcase (s, tc);
    tc = tcase_create ("signing");
    tcase_add_test (tc, test_shared_key_put_blob);
    tcase_add_test (tc, test_shared_key_create_container);
    tcase_add_test (tc, test_shared_key_list);
    tcase_add_test (tc, test_hmac);
    tcase_add_test (tc, test_sas_emulator);
    tcase_add_test (tc, test_sas_azure);
    tcase_add_test (tc, test_sas_differs);
    suite_add_tcase (s, tc);
    return s;
}
