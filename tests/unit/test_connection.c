/* test_connection: connection info for tcp and ipc kernels, the channel
 * endpoints, and the connection file a kernel reads (mode 0600, integer
 * ports, hmac-sha256). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "jp_connection.h"
#include "suites.h"
#include "testutil.h"

static void
s_assert_key (const char *key)
{
    ck_assert_uint_eq (strlen (key), JP_KEY_HEX_LEN);
    ck_assert_msg (strspn (key, "0123456789abcdef") == JP_KEY_HEX_LEN,
                   "key %s is not 64 lowercase hex digits", key);
}

/* Five distinct ports in 1..65535 and a 64-hex-digit key. */
START_TEST (test_tcp_ports_and_key)
{
    jp_connection_t c;
    memset (&c, 0x55, sizeof c);
    ck_assert_int_eq (jp_connection_init_tcp (&c, "127.0.0.1"), 0);
    ck_assert_int_eq (c.transport, JP_TRANSPORT_TCP);
    ck_assert_str_eq (c.ip, "127.0.0.1");
    for (int i = 0; i < JP_CHANNEL_COUNT; i++) {
        ck_assert_int_gt (c.ports[i], 0);
        ck_assert_int_le (c.ports[i], 65535);
        for (int j = 0; j < i; j++)
            ck_assert_msg (c.ports[i] != c.ports[j], "ports %d and %d are both %d", i, j,
                           c.ports[i]);
    }
    s_assert_key (c.key);
}
END_TEST

/* Two connections get different keys. */
START_TEST (test_tcp_keys_differ)
{
    jp_connection_t a, b;
    ck_assert_int_eq (jp_connection_init_tcp (&a, "127.0.0.1"), 0);
    ck_assert_int_eq (jp_connection_init_tcp (&b, "127.0.0.1"), 0);
    s_assert_key (a.key);
    s_assert_key (b.key);
    ck_assert_str_ne (a.key, b.key);
}
END_TEST

/* Not an IPv4 address, or too long: refused. */
START_TEST (test_tcp_bad_ip)
{
    jp_connection_t c;
    ck_assert_int_eq (jp_connection_init_tcp (&c, "not-an-ip"), -EINVAL);
    char long_ip[JP_IPC_PATH_MAX + 10];
    memset (long_ip, '1', sizeof long_ip - 1);
    long_ip[sizeof long_ip - 1] = '\0';
    ck_assert_int_eq (jp_connection_init_tcp (&c, long_ip), -ENAMETOOLONG);
}
END_TEST

/* tcp endpoints are tcp://IP:PORT of each channel's port. */
START_TEST (test_tcp_endpoints)
{
    jp_connection_t c;
    ck_assert_int_eq (jp_connection_init_tcp (&c, "127.0.0.1"), 0);
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
        char buf[128], want[128];
        snprintf (want, sizeof want, "tcp://127.0.0.1:%d", c.ports[ch]);
        ck_assert_int_eq (jp_connection_endpoint (&c, (jp_channel_t) ch, buf, sizeof buf), 0);
        ck_assert_str_eq (buf, want);
    }
    /* a buffer one byte too small */
    char want[128], small[128];
    int len = snprintf (want, sizeof want, "tcp://127.0.0.1:%d", c.ports[JP_CHANNEL_HB]);
    ck_assert_int_eq (jp_connection_endpoint (&c, JP_CHANNEL_HB, small, (size_t) len),
                      -ENAMETOOLONG);
    ck_assert_int_eq (jp_connection_endpoint (&c, JP_CHANNEL_HB, small, (size_t) len + 1), 0);
}
END_TEST

/* ipc endpoints are ipc://PREFIX-1 .. ipc://PREFIX-5. */
START_TEST (test_ipc_endpoints)
{
    jp_connection_t c;
    ck_assert_int_eq (jp_connection_init_ipc (&c, "/run/codebox/k7"), 0);
    ck_assert_int_eq (c.transport, JP_TRANSPORT_IPC);
    ck_assert_str_eq (c.ip, "/run/codebox/k7");
    s_assert_key (c.key);
    static const char *want[JP_CHANNEL_COUNT] = {
        "ipc:///run/codebox/k7-1", "ipc:///run/codebox/k7-2", "ipc:///run/codebox/k7-3",
        "ipc:///run/codebox/k7-4", "ipc:///run/codebox/k7-5",
    };
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
        char buf[128];
        ck_assert_int_eq (jp_connection_endpoint (&c, (jp_channel_t) ch, buf, sizeof buf), 0);
        ck_assert_str_eq (buf, want[ch]);
    }
    jp_connection_t d;
    ck_assert_int_eq (jp_connection_init_ipc (&d, "/run/codebox/k7"), 0);
    ck_assert_str_ne (c.key, d.key);
}
END_TEST

/* A prefix that would make a socket path (PREFIX-N) longer than
 * JP_IPC_PATH_MAX is refused; the longest allowed one works. */
START_TEST (test_ipc_prefix_too_long)
{
    jp_connection_t c;
    char prefix[256];
    memset (prefix, 'p', sizeof prefix);
    prefix[0] = '/';
    prefix[JP_IPC_PATH_MAX - 2] = '\0';        /* 94 + "-N" = 96 */
    ck_assert_int_eq (jp_connection_init_ipc (&c, prefix), 0);
    char buf[128];
    ck_assert_int_eq (jp_connection_endpoint (&c, JP_CHANNEL_HB, buf, sizeof buf), 0);
    ck_assert_uint_eq (strlen (buf), strlen ("ipc://") + JP_IPC_PATH_MAX);
    memset (prefix, 'p', sizeof prefix);
    prefix[0] = '/';
    prefix[JP_IPC_PATH_MAX - 1] = '\0';
    ck_assert_int_eq (jp_connection_init_ipc (&c, prefix), -ENAMETOOLONG);
    prefix[200] = '\0';
    ck_assert_int_eq (jp_connection_init_ipc (&c, prefix), -ENAMETOOLONG);
}
END_TEST

/* Writes a connection file into a scratch folder and reads it back. */
static json_t *
s_write_and_read (const jp_connection_t *c, const char *kernel_name, mode_t *mode)
{
    char *dir = tu_mkdtemp ();
    char *path = NULL;
    ck_assert_int_ge (asprintf (&path, "%s/kernel-abc.json", dir), 0);
    ck_assert_int_eq (jp_connection_write (c, kernel_name, path), 0);
    struct stat st;
    ck_assert_int_eq (stat (path, &st), 0);
    *mode = st.st_mode & 07777;
    json_t *json = tu_load_json (path);
    tu_rmtree (dir);
    free (path);
    free (dir);
    return json;
}

static void
s_assert_port (json_t *json, const char *key, int port)
{
    json_t *v = json_object_get (json, key);
    ck_assert_msg (json_is_integer (v), "%s is not an integer", key);
    ck_assert_int_eq (json_integer_value (v), port);
}

/* The file has mode 0600 (even with a permissive umask) and the fields a
 * Jupyter kernel reads. */
START_TEST (test_write_tcp)
{
    umask (0);
    jp_connection_t c;
    ck_assert_int_eq (jp_connection_init_tcp (&c, "127.0.0.1"), 0);
    mode_t mode;
    json_t *json = s_write_and_read (&c, "python3", &mode);
    ck_assert_msg (mode == 0600, "mode is %o", (unsigned) mode);
    ck_assert_str_eq (json_string_value (json_object_get (json, "transport")), "tcp");
    ck_assert_str_eq (json_string_value (json_object_get (json, "ip")), "127.0.0.1");
    ck_assert_str_eq (json_string_value (json_object_get (json, "key")), c.key);
    ck_assert_str_eq (json_string_value (json_object_get (json, "signature_scheme")),
                      "hmac-sha256");
    ck_assert_str_eq (json_string_value (json_object_get (json, "kernel_name")), "python3");
    s_assert_port (json, "shell_port", c.ports[JP_CHANNEL_SHELL]);
    s_assert_port (json, "iopub_port", c.ports[JP_CHANNEL_IOPUB]);
    s_assert_port (json, "stdin_port", c.ports[JP_CHANNEL_STDIN]);
    s_assert_port (json, "control_port", c.ports[JP_CHANNEL_CONTROL]);
    s_assert_port (json, "hb_port", c.ports[JP_CHANNEL_HB]);
    json_decref (json);
}
END_TEST

/* An ipc file names the transport and the path prefix as "ip". */
START_TEST (test_write_ipc)
{
    jp_connection_t c;
    ck_assert_int_eq (jp_connection_init_ipc (&c, "/tmp/codebox-test-k"), 0);
    mode_t mode;
    json_t *json = s_write_and_read (&c, "ir", &mode);
    ck_assert_msg (mode == 0600, "mode is %o", (unsigned) mode);
    ck_assert_str_eq (json_string_value (json_object_get (json, "transport")), "ipc");
    ck_assert_str_eq (json_string_value (json_object_get (json, "ip")), "/tmp/codebox-test-k");
    ck_assert_str_eq (json_string_value (json_object_get (json, "kernel_name")), "ir");
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
        static const char *keys[] = {"shell_port", "iopub_port", "stdin_port",
                                     "control_port", "hb_port"};
        s_assert_port (json, keys[ch], ch + 1);
    }
    json_decref (json);
}
END_TEST

/* to_json without a kernel name writes ""; writing into a missing folder
 * fails with -ENOENT. */
START_TEST (test_to_json_and_write_errors)
{
    jp_connection_t c;
    ck_assert_int_eq (jp_connection_init_ipc (&c, "/tmp/x"), 0);
    json_t *json = jp_connection_to_json (&c, NULL);
    ck_assert_ptr_nonnull (json);
    ck_assert_str_eq (json_string_value (json_object_get (json, "kernel_name")), "");
    json_decref (json);
    ck_assert_int_eq (jp_connection_write (&c, "k", "/nonexistent-codebox-dir/x/kernel.json"),
                      -ENOENT);
}
END_TEST

/* What jp_connection_write writes, jp_connection_read reads back whole;
 * a file that is not a connection file is -EINVAL, a missing one -ENOENT. */
START_TEST (test_read_round_trip_and_errors)
{
    char *dir = tu_mkdtemp ();
    char *path = NULL, *bad = NULL;
    ck_assert_int_ge (asprintf (&path, "%s/kernel.json", dir), 0);
    ck_assert_int_ge (asprintf (&bad, "%s/bad.json", dir), 0);
    jp_connection_t c, back;
    ck_assert_int_eq (jp_connection_init_tcp (&c, "127.0.0.1"), 0);
    ck_assert_int_eq (jp_connection_write (&c, "python3", path), 0);
    ck_assert_int_eq (jp_connection_read (&back, path), 0);
    ck_assert_int_eq (memcmp (&c, &back, sizeof c), 0);
    ck_assert_int_eq (jp_connection_init_ipc (&c, "/tmp/codebox-test-k"), 0);
    ck_assert_int_eq (jp_connection_write (&c, "ir", path), 0);
    ck_assert_int_eq (jp_connection_read (&back, path), 0);
    ck_assert_int_eq (back.transport, JP_TRANSPORT_IPC);
    ck_assert_str_eq (back.ip, "/tmp/codebox-test-k");
    ck_assert_str_eq (back.key, c.key);
    static const char *bad_files[] = {
        "not json",
        "[]",
        "{\"ip\": \"127.0.0.1\", \"shell_port\": 1, \"iopub_port\": 2, \"stdin_port\": 3,"
        " \"control_port\": 4, \"hb_port\": 5}",                       /* no key */
        "{\"ip\": \"127.0.0.1\", \"key\": \"k\", \"shell_port\": 1, \"iopub_port\": 2,"
        " \"stdin_port\": 3, \"control_port\": 4, \"hb_port\": 70000}",  /* port */
        "{\"ip\": \"127.0.0.1\", \"key\": \"k\", \"shell_port\": 1}",  /* ports */
    };
    for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
        FILE *f = fopen (bad, "w");
        ck_assert_ptr_nonnull (f);
        fputs (bad_files[i], f);
        fclose (f);
        ck_assert_msg (jp_connection_read (&back, bad) == -EINVAL, "file %zu read", i);
    }
    ck_assert_int_eq (jp_connection_read (&back, "/nonexistent-codebox-dir/k.json"), -ENOENT);
    tu_rmtree (dir);
    free (path);
    free (bad);
    free (dir);
}
END_TEST

START_TEST (test_channel_names)
{
    ck_assert_str_eq (jp_channel_name (JP_CHANNEL_SHELL), "shell");
    ck_assert_str_eq (jp_channel_name (JP_CHANNEL_IOPUB), "iopub");
    ck_assert_str_eq (jp_channel_name (JP_CHANNEL_STDIN), "stdin");
    ck_assert_str_eq (jp_channel_name (JP_CHANNEL_CONTROL), "control");
    ck_assert_str_eq (jp_channel_name (JP_CHANNEL_HB), "hb");
    ck_assert_str_eq (jp_channel_name (JP_CHANNEL_COUNT), "?");
}
END_TEST

/* The socket address of each channel: the ipc path, the tcp address and
 * port (IPv4 and IPv6); a tcp ip that is not a numeric address refused. */
START_TEST (test_socket_addresses)
{
    jp_connection_t c;
    struct sockaddr_storage addr;
    socklen_t len = 0;
    ck_assert_int_eq (jp_connection_init_ipc (&c, "/run/k-1"), 0);
    ck_assert_int_eq (jp_connection_address (&c, JP_CHANNEL_IOPUB, &addr, &len), 0);
    const struct sockaddr_un *un = (const struct sockaddr_un *) &addr;
    ck_assert_int_eq (un->sun_family, AF_UNIX);
    ck_assert_int_eq (len, sizeof *un);
    char endpoint[128];
    ck_assert_int_eq (jp_connection_endpoint (&c, JP_CHANNEL_IOPUB, endpoint, sizeof endpoint), 0);
    ck_assert_str_eq (un->sun_path, endpoint + strlen ("ipc://"));

    ck_assert_int_eq (jp_connection_init_tcp (&c, "127.0.0.1"), 0);
    ck_assert_int_eq (jp_connection_address (&c, JP_CHANNEL_HB, &addr, &len), 0);
    const struct sockaddr_in *in = (const struct sockaddr_in *) &addr;
    ck_assert_int_eq (in->sin_family, AF_INET);
    ck_assert_int_eq (len, sizeof *in);
    ck_assert_int_eq (ntohs (in->sin_port), c.ports[JP_CHANNEL_HB]);
    ck_assert_uint_eq (ntohl (in->sin_addr.s_addr), INADDR_LOOPBACK);

    strcpy (c.ip, "::1");
    ck_assert_int_eq (jp_connection_address (&c, JP_CHANNEL_SHELL, &addr, &len), 0);
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) &addr;
    ck_assert_int_eq (in6->sin6_family, AF_INET6);
    ck_assert_int_eq (len, sizeof *in6);
    ck_assert_int_eq (ntohs (in6->sin6_port), c.ports[JP_CHANNEL_SHELL]);
    ck_assert (IN6_IS_ADDR_LOOPBACK (&in6->sin6_addr));

    strcpy (c.ip, "localhost");
    ck_assert_int_eq (jp_connection_address (&c, JP_CHANNEL_SHELL, &addr, &len), -EINVAL);
}
END_TEST

Suite *
connection_suite (void)
{
    Suite *s = suite_create ("connection");
    TCase *tc = tcase_create ("init");
    tcase_add_test (tc, test_tcp_ports_and_key);
    tcase_add_test (tc, test_tcp_keys_differ);
    tcase_add_test (tc, test_tcp_bad_ip);
    tcase_add_test (tc, test_tcp_endpoints);
    tcase_add_test (tc, test_ipc_endpoints);
    tcase_add_test (tc, test_ipc_prefix_too_long);
    tcase_add_test (tc, test_socket_addresses);
    tcase_add_test (tc, test_channel_names);
    suite_add_tcase (s, tc);
    tc = tcase_create ("file");
    tcase_add_test (tc, test_write_tcp);
    tcase_add_test (tc, test_write_ipc);
    tcase_add_test (tc, test_to_json_and_write_errors);
    tcase_add_test (tc, test_read_round_trip_and_errors);
    suite_add_tcase (s, tc);
    return s;
}
