/* test_config: settings: defaults, .env parsing (quotes, comments,
 * export, CRLF, unknown names), validation of kinds, precedence of the
 * environment over the file, and that errors never echo a value. Also the
 * token list of gw_auth, base64, and the arguments gw_ipykernel adds. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "gw_auth.h"
#include "gw_base64.h"
#include "gw_config.h"
#include "gw_registry.h"
#include "gw_exec_options.h"
#include "gw_fs.h"
#include "gw_ipykernel.h"
#include "gw_runtime_dir.h"
#include "gw_state_dir.h"
#include "suites.h"
#include "testutil.h"

static gw_config_t *
s_config (void)
{
    gw_config_t *c = gw_config_new ();
    ck_assert_ptr_nonnull (c);
    return c;
}

START_TEST (test_defaults)
{
    gw_config_t *c = s_config ();
    ck_assert_str_eq (gw_config_str (c, GW_SET_HOST), "127.0.0.1");
    ck_assert_int_eq (gw_config_int (c, GW_SET_PORT), 8000);
    /* "" means the per-user default of gw_state_dir */
    ck_assert_str_eq (gw_config_str (c, GW_SET_STATE_DIR), "");
    ck_assert_str_eq (gw_config_str (c, GW_SET_DEFAULT_KERNEL), "python3");
    ck_assert_int_eq (gw_config_int (c, GW_SET_MAX_OUTPUT_BYTES), 1048576);
    ck_assert_int_eq (gw_config_int (c, GW_SET_MAX_IMAGE_BYTES), 262144);
    ck_assert_str_eq (gw_config_str (c, GW_SET_SANDBOX), "auto");
    ck_assert (!gw_config_bool (c, GW_SET_DOWNLOAD_ALLOW_PRIVATE));
    gw_config_destroy (&c);
    ck_assert_ptr_null (c);
}
END_TEST

/* CODEBOX_TENANT_MAX_SESSIONS: "auto" is worked out from the other
 * settings once (half of CODEBOX_MAX_SESSIONS for several tenants, else
 * all), and a tenant's share of any table is the same fraction. */
START_TEST (test_tenant_share)
{
    ck_assert_int_eq (gw_config_count_tenants (""), 0);
    ck_assert_int_eq (gw_config_count_tenants ("tok"), 1);
    ck_assert_int_eq (gw_config_count_tenants ("a:x, a:y ,b:z"), 2);
    ck_assert_int_eq (gw_config_count_tenants ("x,default:y"), 1);
    ck_assert_int_eq (gw_config_count_tenants ("x, ,alice:y,bob:z,alice:w"), 3);
    char err[256] = "";
    gw_config_t *c = s_config ();
    ck_assert_str_eq (gw_config_str (c, GW_SET_TENANT_MAX_SESSIONS), "auto");
    ck_assert_int_eq (gw_config_resolve (c), 0);
    ck_assert_int_eq (gw_config_int (c, GW_SET_TENANT_MAX_SESSIONS), 64);
    ck_assert_int_eq (gw_config_share (c, 4), 4);
    gw_config_destroy (&c);

    c = s_config ();
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_API_TOKENS", "alice:a,bob:b", "t", err,
                                     sizeof err), 0);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_MAX_SESSIONS", "4", "t", err, sizeof err), 0);
    ck_assert_int_eq (gw_config_resolve (c), 0);
    ck_assert_int_eq (gw_config_int (c, GW_SET_TENANT_MAX_SESSIONS), 2);
    ck_assert_int_eq (gw_config_share (c, 4), 2);
    ck_assert_int_eq (gw_config_share (c, 8), 4);
    ck_assert_int_eq (gw_config_share (c, 1), 1);      /* at least one */
    gw_config_destroy (&c);

    c = s_config ();
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_API_TOKENS", "alice:a,bob:b", "t", err,
                                     sizeof err), 0);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_MAX_SESSIONS", "1", "t", err, sizeof err), 0);
    ck_assert_int_eq (gw_config_resolve (c), 0);
    ck_assert_int_eq (gw_config_int (c, GW_SET_TENANT_MAX_SESSIONS), 1);
    gw_config_destroy (&c);

    c = s_config ();
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_TENANT_MAX_SESSIONS", "3", "t", err,
                                     sizeof err), 0);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_MAX_SESSIONS", "4", "t", err, sizeof err), 0);
    ck_assert_int_eq (gw_config_resolve (c), 0);
    ck_assert_int_eq (gw_config_share (c, 4), 3);
    ck_assert_int_eq (gw_config_share (c, 1024), 768);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_TENANT_MAX_SESSIONS", "99", "t", err,
                                     sizeof err), 0);
    ck_assert_int_eq (gw_config_resolve (c), 0);          /* never above the server's */
    ck_assert_int_eq (gw_config_int (c, GW_SET_TENANT_MAX_SESSIONS), 4);
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_TENANT_MAX_SESSIONS", "0", "t", err,
                                     sizeof err), -EINVAL);
    ck_assert_ptr_nonnull (strstr (err, "a positive integer or auto"));
    gw_config_destroy (&c);
}
END_TEST

START_TEST (test_env_file_syntax)
{
    gw_config_t *c = s_config ();
    char err[256] = "";
    const char *text =
        "# a comment\n"
        "\n"
        "CODEBOX_PORT=9001\r\n"
        "export CODEBOX_HOST = 127.0.0.2\n"
        "CODEBOX_STATE_DIR=\"/tmp/with space # not a comment\"\n"
        "CODEBOX_DEFAULT_KERNEL=javascript # trailing comment\n"
        "CODEBOX_API_TOKENS='a:b,c'\n"
        "CODEBOX_PUBLIC_URL=\"http://x/\\\"q\\\"\"\n"
        "OTHER_TOOL_SETTING=ignored\n";
    ck_assert_int_eq (gw_config_load_text (c, text, ".env", err, sizeof err), 0);
    ck_assert_int_eq (gw_config_int (c, GW_SET_PORT), 9001);
    ck_assert_str_eq (gw_config_str (c, GW_SET_HOST), "127.0.0.2");
    ck_assert_str_eq (gw_config_str (c, GW_SET_STATE_DIR), "/tmp/with space # not a comment");
    ck_assert_str_eq (gw_config_str (c, GW_SET_DEFAULT_KERNEL), "javascript");
    ck_assert_str_eq (gw_config_str (c, GW_SET_API_TOKENS), "a:b,c");
    ck_assert_str_eq (gw_config_str (c, GW_SET_PUBLIC_URL), "http://x/\"q\"");
    gw_config_destroy (&c);
}
END_TEST

START_TEST (test_env_file_errors)
{
    static const struct {
        const char *text;
        const char *expect;
    } cases[] = {
        {"CODEBOX_PORT=abc\n", ".env line 1: CODEBOX_PORT must be a whole number"},
        {"\nCODEBOX_EXEC_TIMEOUT=0\n", ".env line 2: CODEBOX_EXEC_TIMEOUT must be a positive integer"},
        {"CODEBOX_EXEC_TIMEOUT=-5\n", "must be a positive integer"},
        {"CODEBOX_EXEC_TIMEOUT=99999999999999999999\n", "must be a positive integer"},
        {"CODEBOX_SANDBOX=docker\n", "CODEBOX_SANDBOX must be bwrap|none|auto"},
        {"CODEBOX_NETWORK=maybe\n", "must be on|off"},
        {"CODEBOX_DOWNLOAD_ALLOW_PRIVATE=2\n", "must be 0 or 1"},
        {"CODEBOX_NO_SUCH=1\n", "unknown setting CODEBOX_NO_SUCH"},
        {"just words\n", ".env line 1: expected NAME=VALUE"},
        {"CODEBOX_HOST=\"open\n", "unterminated quote"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gw_config_t *c = s_config ();
        char err[256] = "";
        ck_assert_int_ne (gw_config_load_text (c, cases[i].text, ".env", err, sizeof err), 0);
        ck_assert_msg (strstr (err, cases[i].expect), "case %zu: got '%s'", i, err);
        gw_config_destroy (&c);
    }
}
END_TEST

START_TEST (test_errors_never_echo_values)
{
    gw_config_t *c = s_config ();
    char err[256] = "";
    ck_assert_int_ne (gw_config_set (c, "CODEBOX_PORT", "secret-token-123", "environment", err,
                                     sizeof err), 0);
    ck_assert_ptr_null (strstr (err, "secret-token-123"));
    ck_assert_ptr_nonnull (strstr (err, "environment: CODEBOX_PORT"));
    gw_config_destroy (&c);
}
END_TEST

START_TEST (test_file_then_environment)
{
    char *dir = tu_mkdtemp ();
    char path[512];
    snprintf (path, sizeof path, "%s/.env", dir);
    tu_write_file (path, "CODEBOX_PORT=1111\nCODEBOX_HOST=127.0.0.5\n", 41);
    gw_config_t *c = s_config ();
    char err[256] = "";
    ck_assert_int_eq (gw_config_load_file (c, path, true, err, sizeof err), 0);
    setenv ("CODEBOX_PORT", "2222", 1);
    ck_assert_int_eq (gw_config_load_env (c, err, sizeof err), 0);
    ck_assert_int_eq (gw_config_int (c, GW_SET_PORT), 2222);          /* env wins */
    ck_assert_str_eq (gw_config_str (c, GW_SET_HOST), "127.0.0.5");   /* file kept */
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_PORT", "3333", "--port", err, sizeof err), 0);
    ck_assert_int_eq (gw_config_int (c, GW_SET_PORT), 3333);          /* flag wins */
    /* a missing optional file is fine; a missing --config file is not */
    char missing[600];
    snprintf (missing, sizeof missing, "%s/none.env", dir);
    ck_assert_int_eq (gw_config_load_file (c, missing, false, err, sizeof err), 0);
    ck_assert_int_ne (gw_config_load_file (c, missing, true, err, sizeof err), 0);
    ck_assert_ptr_nonnull (strstr (err, "cannot read"));
    gw_config_destroy (&c);
    tu_rmtree (dir);
    free (dir);
}
END_TEST

static void
s_count_alias (const char *alias, const char *ours, const char *source, void *arg)
{
    (void) source;
    ck_assert_ptr_nonnull (strstr (ours, "CODEBOX_"));
    ck_assert_ptr_null (strstr (alias, "CODEBOX_"));
    (*(int *) arg)++;
}

/* Code Box's names are fallbacks for ours; ours win in the same source,
 * whatever the order of the lines; bad values are refused by our name. */
START_TEST (test_code_box_aliases)
{
    gw_config_t *c = s_config ();
    char err[256] = "";
    const char *text = "CODEBOX_EXEC_TIMEOUT=40\nEXEC_TIMEOUT=50\nSESSION_TTL=60\n"
                       "MCP_PORT=9001\nAZURE_BLOB_CONTAINER_NAME=art\nUNRELATED=1\n";
    ck_assert_int_eq (gw_config_load_text (c, text, ".env", err, sizeof err), 0);
    ck_assert_int_eq (gw_config_int (c, GW_SET_EXEC_TIMEOUT), 40);
    ck_assert_int_eq (gw_config_int (c, GW_SET_SESSION_TTL), 60);
    ck_assert_int_eq (gw_config_int (c, GW_SET_PORT), 9001);
    ck_assert_str_eq (gw_config_str (c, GW_SET_BLOB_CONTAINER), "art");
    int n = 0;
    gw_config_each_alias (c, s_count_alias, &n);
    ck_assert_int_eq (n, 3);
    setenv ("IDLE_TIMEOUT", "70", 1);
    ck_assert_int_eq (gw_config_load_env (c, err, sizeof err), 0);
    ck_assert_int_eq (gw_config_int (c, GW_SET_IDLE_TIMEOUT), 70);
    setenv ("CODEBOX_IDLE_TIMEOUT", "80", 1);
    ck_assert_int_eq (gw_config_load_env (c, err, sizeof err), 0);
    ck_assert_int_eq (gw_config_int (c, GW_SET_IDLE_TIMEOUT), 80);
    unsetenv ("IDLE_TIMEOUT");
    unsetenv ("CODEBOX_IDLE_TIMEOUT");
    ck_assert_int_ne (gw_config_load_text (c, "SQL_MAX_INLINE_ROWS=lots\n", ".env", err,
                                           sizeof err), 0);
    ck_assert_ptr_nonnull (strstr (err, "CODEBOX_SQL_MAX_INLINE_ROWS"));
    ck_assert_ptr_nonnull (strstr (err, "SQL_MAX_INLINE_ROWS"));
    ck_assert_ptr_null (strstr (err, "lots"));
    gw_config_destroy (&c);
}
END_TEST

static void
s_note_placeholder (const char *written, const char *ours, const char *source, void *arg)
{
    char *notes = arg;
    size_t n = strlen (notes);
    snprintf (notes + n, 512 - n, "%s>%s@%s;", written, ours, source);
}

/* A template's "<...>" value sets nothing and is noted (by the name as
 * written, the setting, where); an alias then still counts, a number in
 * angle brackets is not checked as a number, an unknown name still fails. */
START_TEST (test_placeholders)
{
    gw_config_t *c = s_config ();
    char err[256] = "", notes[512] = "";
    const char *good = "AZURE_BLOB_CONNECTION_STRING=<your-connection-string>\n"
                       "CODEBOX_SQL_DSN=\"<your-odbc-connection-string>\"\n"
                       "AZURE_DATABASE_CONNECTION_STRING=Driver=SQLite3;Database=/x.db\n"
                       "CODEBOX_PORT=<port>\nAZURE_DATABASE_PASSWORD=<your-password>\n"
                       "CODEBOX_HOST=<>\n";
    ck_assert_int_eq (gw_config_load_text (c, good, ".env", err, sizeof err), 0);
    ck_assert_str_eq (gw_config_str (c, GW_SET_HOST), "<>");   /* nothing inside: a value */
    ck_assert_str_eq (gw_config_str (c, GW_SET_BLOB_CONNECTION_STRING), "");
    ck_assert_str_eq (gw_config_str (c, GW_SET_SQL_DSN), "Driver=SQLite3;Database=/x.db");
    ck_assert_int_eq (gw_config_int (c, GW_SET_PORT), 8000);
    gw_config_each_placeholder (c, s_note_placeholder, notes);
    ck_assert_str_eq (notes, "CODEBOX_PORT>CODEBOX_PORT@.env line 4;"
                      "CODEBOX_SQL_DSN>CODEBOX_SQL_DSN@.env line 2;"
                      "AZURE_BLOB_CONNECTION_STRING>CODEBOX_BLOB_CONNECTION_STRING@.env line 1;");
    /* the environment: ours left as the file had it */
    setenv ("CODEBOX_MAX_SESSIONS", "<how-many>", 1);
    ck_assert_int_eq (gw_config_load_text (c, "CODEBOX_MAX_SESSIONS=9\n", ".env", err,
                                           sizeof err), 0);
    ck_assert_int_eq (gw_config_load_env (c, err, sizeof err), 0);
    unsetenv ("CODEBOX_MAX_SESSIONS");
    ck_assert_int_eq (gw_config_int (c, GW_SET_MAX_SESSIONS), 9);
    notes[0] = '\0';
    gw_config_each_placeholder (c, s_note_placeholder, notes);
    ck_assert_ptr_nonnull (strstr (notes, "CODEBOX_MAX_SESSIONS>CODEBOX_MAX_SESSIONS@environment;"));
    ck_assert_int_eq (gw_config_load_text (c, "CODEBOX_NO_SUCH=<x>\n", ".env", err, sizeof err),
                      -ENOENT);
    gw_config_destroy (&c);
}
END_TEST

/* What --help and the docs say of a setting: a default worked out at
 * start is said once, in words, out of the help text. */
START_TEST (test_setting_doc)
{
    gw_setting_doc_t doc;
    gw_setting_doc (GW_SET_NODE_NAME, &doc);
    ck_assert (doc.def_in_words && doc.http_only == false);
    ck_assert_int_eq ((int) doc.def_len, (int) strlen ("the host name"));
    ck_assert (strncmp (doc.def, "the host name", doc.def_len) == 0);
    ck_assert (memchr (doc.help, '(', doc.help_len) == NULL);
    gw_setting_doc (GW_SET_PORT, &doc);
    ck_assert (!doc.def_in_words && doc.http_only);
    ck_assert_str_eq (doc.def, "8000");
    gw_setting_doc (GW_SET_MOUNT_ROOTS, &doc);
    ck_assert_int_eq ((int) doc.def_len, 0);
    ck_assert_int_eq ((int) doc.help_len, (int) strlen (doc.help));
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream (&text, &len);
    gw_config_print_help (out, false);
    fclose (out);
    ck_assert_ptr_null (strstr (text, "CODEBOX_PORT"));
    ck_assert_ptr_null (strstr (text, "(default: the host name) (default"));
    ck_assert_ptr_nonnull (strstr (text, "(default: the host name)\n"));
    ck_assert_ptr_nonnull (strstr (text, "CODEBOX_MOUNT_ROOTS"));
    free (text);
}
END_TEST

/* codebox-ai's execution_options: sizes, cores, variables, mounts. */
START_TEST (test_exec_options)
{
    ck_assert_int_eq (gw_exec_parse_memory ("2G"), 2048);
    ck_assert_int_eq (gw_exec_parse_memory ("512m"), 512);
    ck_assert_int_eq (gw_exec_parse_memory ("1.5GiB"), 1536);
    ck_assert_int_eq (gw_exec_parse_memory ("1048577"), 2);     /* bytes, rounded up */
    ck_assert_int_eq (gw_exec_parse_memory ("1024k"), 1);
    ck_assert_int_eq (gw_exec_parse_memory ("0"), -1);
    ck_assert_int_eq (gw_exec_parse_memory ("-1G"), -1);
    ck_assert_int_eq (gw_exec_parse_memory ("2X"), -1);
    ck_assert_int_eq (gw_exec_parse_memory ("G"), -1);
    ck_assert_int_eq (gw_exec_parse_cpu ("1"), 1000);
    ck_assert_int_eq (gw_exec_parse_cpu ("0.5"), 500);
    ck_assert_int_eq (gw_exec_parse_cpu ("0"), -1);
    ck_assert_int_eq (gw_exec_parse_cpu ("1 core"), -1);

    char *root = tu_mkdtemp (), *other = tu_mkdtemp ();
    char rw_root[600], roots[1400], sub[600], rw_sub[700];
    snprintf (sub, sizeof sub, "%s/data", root);
    ck_assert_int_eq (mkdir (sub, 0755), 0);
    snprintf (rw_root, sizeof rw_root, "%s/rw", other);
    ck_assert_int_eq (mkdir (rw_root, 0755), 0);
    snprintf (rw_sub, sizeof rw_sub, "%s/x", rw_root);
    ck_assert_int_eq (mkdir (rw_sub, 0755), 0);
    snprintf (roots, sizeof roots, "%s:%s=rw", root, rw_root);
    gw_exec_rules_t rules = {.max_memory_mb = 1024, .max_cpu_milli = 2000, .mount_roots = roots,
                             .sandbox = true};
    gw_exec_options_t o;
    gw_error_t e;
    char err[600];
    char text[3000];
    snprintf (text, sizeof text,
              "{\"timeout\": 30, \"memory_limit\": \"4G\", \"cpu_limit\": \"8\", "
              "\"environment_variables\": {\"MY_VAR\": \"x=y\"}, \"mount_points\": "
              "[{\"host_path\": \"%s\", \"container_path\": \"/data/in\"}, "
              "{\"host_path\": \"%s\", \"container_path\": \"/data/out\", "
              "\"read_only\": false}]}", sub, rw_sub);
    json_t *j = json_loads (text, 0, NULL);
    ck_assert_int_eq (gw_exec_options_parse (j, &rules, &o, &e, err, sizeof err), 0);
    ck_assert_int_eq (o.timeout_s, 30);
    ck_assert_int_eq (o.memory_mb, 1024);       /* clamped */
    ck_assert_int_eq (o.cpu_milli, 2000);       /* clamped */
    ck_assert_str_eq (o.env[0], "MY_VAR=x=y");
    ck_assert_ptr_null (o.env[1]);
    ck_assert_int_eq (o.n_mounts, 2);
    ck_assert (!o.mounts[0].read_write && o.mounts[1].read_write);
    ck_assert_str_eq (o.mounts[1].container, "/data/out");
    ck_assert (gw_exec_options_custom (&o));
    gw_exec_options_t copy;
    ck_assert_int_eq (gw_exec_options_copy (&copy, &o), 0);
    ck_assert_str_eq (copy.env[0], "MY_VAR=x=y");
    gw_exec_options_clear (&copy);
    gw_exec_options_clear (&o);
    json_decref (j);
    /* refusals: each with its status */
    static const struct {
        const char *json;
        gw_error_t e;
        const char *says;
    } bad[] = {
        {"{\"timeout\": -3}", GW_E_BAD_REQUEST, "timeout"},
        {"{\"memory_limit\": \"lots\"}", GW_E_BAD_REQUEST, "memory_limit"},
        {"{\"cpu_limit\": []}", GW_E_BAD_REQUEST, "cpu_limit"},
        {"{\"environment_variables\": {\"LD_PRELOAD\": \"/x.so\"}}", GW_E_BAD_REQUEST,
         "LD_PRELOAD"},
        {"{\"environment_variables\": {\"PATH\": \"/x\"}}", GW_E_BAD_REQUEST, "PATH"},
        {"{\"environment_variables\": {\"1X\": \"a\"}}", GW_E_BAD_REQUEST, "1X"},
        {"{\"environment_variables\": {\"A\": 5}}", GW_E_BAD_REQUEST, "string"},
        {"{\"mount_points\": [{\"host_path\": \"/etc\", \"container_path\": \"/data\"}]}",
         GW_E_FORBIDDEN, "CODEBOX_MOUNT_ROOTS"},
        {"[]", GW_E_BAD_REQUEST, "object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = json_loads (bad[i].json, JSON_DECODE_ANY, NULL);
        ck_assert_int_eq (gw_exec_options_parse (j, &rules, &o, &e, err, sizeof err), -1);
        ck_assert_msg (e == bad[i].e, "%s: %d", bad[i].json, e);
        ck_assert_msg (strstr (err, bad[i].says), "%s: %s", bad[i].json, err);
        gw_exec_options_clear (&o);
        json_decref (j);
    }
    /* mounts: read-write only under an =rw root; container paths; roots */
    const char *containers[] = {"/etc/x", "/session/a", "/tmp", "/", "relative", "/data/../etc",
                                "/data//x", "/usr/lib"};
    for (size_t i = 0; i < sizeof containers / sizeof containers[0]; i++) {
        snprintf (text, sizeof text, "{\"mount_points\": [{\"host_path\": \"%s\", "
                  "\"container_path\": \"%s\"}]}", sub, containers[i]);
        j = json_loads (text, 0, NULL);
        ck_assert_int_eq (gw_exec_options_parse (j, &rules, &o, &e, err, sizeof err), -1);
        ck_assert_msg (strstr (err, "container_path"), "%s: %s", containers[i], err);
        gw_exec_options_clear (&o);
        json_decref (j);
    }
    snprintf (text, sizeof text, "{\"mount_points\": [{\"host_path\": \"%s\", "
              "\"container_path\": \"/data\", \"read_only\": false}]}", sub);
    j = json_loads (text, 0, NULL);
    ck_assert_int_eq (gw_exec_options_parse (j, &rules, &o, &e, err, sizeof err), -1);
    ck_assert (e == GW_E_FORBIDDEN && strstr (err, "read-write"));
    gw_exec_options_clear (&o);
    rules.sandbox = false;
    snprintf (text, sizeof text, "{\"mount_points\": [{\"host_path\": \"%s\", "
              "\"container_path\": \"/data\"}]}", sub);
    json_decref (j);
    j = json_loads (text, 0, NULL);
    ck_assert_int_eq (gw_exec_options_parse (j, &rules, &o, &e, err, sizeof err), -1);
    ck_assert (e == GW_E_FORBIDDEN && strstr (err, "sandbox"));
    gw_exec_options_clear (&o);
    rules.sandbox = true;
    rules.mount_roots = "";
    ck_assert_int_eq (gw_exec_options_parse (j, &rules, &o, &e, err, sizeof err), -1);
    ck_assert (e == GW_E_FORBIDDEN && strstr (err, "CODEBOX_MOUNT_ROOTS"));
    char says[700];      /* what to set, with the folder asked for */
    snprintf (says, sizeof says, "CODEBOX_MOUNT_ROOTS=%s ", sub);
    ck_assert_msg (strstr (err, says), "%s", err);
    gw_exec_options_clear (&o);
    json_decref (j);
    /* codebox's own folders: hidden in a mount that holds them, never
       mounted themselves */
    rules.mount_roots = roots;
    char own[700], own_sub[800];
    snprintf (own, sizeof own, "%s/state", sub);
    ck_assert_int_eq (mkdir (own, 0755), 0);
    snprintf (own_sub, sizeof own_sub, "%s/s1", own);
    ck_assert_int_eq (mkdir (own_sub, 0755), 0);
    rules.own_dirs[0] = "/nonexistent/codebox";
    rules.own_dirs[1] = own;
    snprintf (text, sizeof text, "{\"mount_points\": [{\"host_path\": \"%s\", "
              "\"container_path\": \"/data\"}]}", root);
    j = json_loads (text, 0, NULL);
    ck_assert_int_eq (gw_exec_options_parse (j, &rules, &o, &e, err, sizeof err), 0);
    ck_assert_str_eq (o.mounts[0].hide[0], "/data/data/state");
    ck_assert_str_eq (o.mounts[0].hide[1], "");
    gw_exec_options_clear (&o);
    json_decref (j);
    const char *inside[] = {own, own_sub};
    for (size_t i = 0; i < 2; i++) {
        snprintf (text, sizeof text, "{\"mount_points\": [{\"host_path\": \"%s\", "
                  "\"container_path\": \"/data\"}]}", inside[i]);
        j = json_loads (text, 0, NULL);
        ck_assert_int_eq (gw_exec_options_parse (j, &rules, &o, &e, err, sizeof err), -1);
        ck_assert_msg (e == GW_E_FORBIDDEN && strstr (err, "codebox's own folders"), "%s", err);
        gw_exec_options_clear (&o);
        json_decref (j);
    }
    ck_assert_int_eq (gw_exec_options_parse (NULL, &rules, &o, &e, err, sizeof err), 0);
    ck_assert (!gw_exec_options_custom (&o));
    tu_rmtree (root);
    tu_rmtree (other);
    free (root);
    free (other);
}
END_TEST

START_TEST (test_auth_tokens)
{
    char err[256] = "", tenant[65] = "";
    gw_auth_t *none = gw_auth_new (NULL, err, sizeof err);
    ck_assert (!gw_auth_enabled (none));
    ck_assert (gw_auth_check (none, NULL, tenant, sizeof tenant, NULL, 0));
    ck_assert_str_eq (tenant, "default");
    gw_auth_destroy (&none);

    gw_auth_t *a = gw_auth_new ("alice:tok-a, bob:tok-b ,plain", err, sizeof err);
    ck_assert_ptr_nonnull (a);
    ck_assert (gw_auth_enabled (a));
    ck_assert (gw_auth_check (a, "Bearer tok-a", tenant, sizeof tenant, NULL, 0));
    ck_assert_str_eq (tenant, "alice");
    ck_assert (gw_auth_check (a, "bearer tok-b", tenant, sizeof tenant, NULL, 0));
    ck_assert_str_eq (tenant, "bob");
    ck_assert (gw_auth_check (a, "Bearer plain", tenant, sizeof tenant, NULL, 0));
    ck_assert_str_eq (tenant, "default");
    ck_assert (!gw_auth_check (a, NULL, tenant, sizeof tenant, NULL, 0));
    ck_assert (!gw_auth_check (a, "Bearer tok-", tenant, sizeof tenant, NULL, 0));
    ck_assert (!gw_auth_check (a, "Bearer tok-aa", tenant, sizeof tenant, NULL, 0));
    ck_assert (!gw_auth_check (a, "Basic tok-a", tenant, sizeof tenant, NULL, 0));
    ck_assert (!gw_auth_check (a, "tok-a", tenant, sizeof tenant, NULL, 0));
    /* Jupyter's clients say "token T" */
    ck_assert (gw_auth_check (a, "token tok-a", tenant, sizeof tenant, NULL, 0));
    ck_assert_str_eq (tenant, "alice");
    ck_assert (gw_auth_check (a, "Token tok-b", tenant, sizeof tenant, NULL, 0));
    ck_assert_str_eq (tenant, "bob");
    ck_assert (!gw_auth_check (a, "token tok-x", tenant, sizeof tenant, NULL, 0));
    ck_assert (!gw_auth_check (a, "tokentok-a", tenant, sizeof tenant, NULL, 0));
    gw_auth_destroy (&a);

    ck_assert_ptr_null (gw_auth_new ("alice:", err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "empty token"));
    ck_assert_ptr_null (gw_auth_new ("bad tenant:x", err, sizeof err));
    ck_assert_ptr_nonnull (strstr (err, "bad tenant name"));
    ck_assert_ptr_null (gw_auth_new (",,", err, sizeof err));
}
END_TEST

START_TEST (test_state_dir)
{
    char dir[4096];
    ck_assert_int_eq (gw_state_dir_default (dir, sizeof dir), 0);
    if (geteuid () == 0)
        ck_assert_str_eq (dir, "/var/lib/codebox");
    char scratch[] = "/tmp/codebox-state-test-XXXXXX";
    ck_assert_ptr_nonnull (mkdtemp (scratch));
    int first = -1, second = -1;
    char err[512];
    ck_assert_int_eq (gw_state_dir_lock (scratch, &first, err, sizeof err), 0);
    /* a second lock on the same folder names the holder's PID */
    ck_assert_int_eq (gw_state_dir_lock (scratch, &second, err, sizeof err), -EBUSY);
    char pid[32];
    snprintf (pid, sizeof pid, "pid %ld", (long) getpid ());
    ck_assert_msg (strstr (err, pid) != NULL, "%s", err);
    /* the sweep removes everything but the lock */
    char path[4200];
    snprintf (path, sizeof path, "%s/main/input", scratch);
    ck_assert_int_eq (gw_fs_mkdirs (path, 0755), 0);
    snprintf (path, sizeof path, "%s/@acme", scratch);
    ck_assert_int_eq (mkdir (path, 0755), 0);
    /* but kept sessions: a folder with a record (a tenant's too), the
       records and the images */
    const char *kept[] = {"kept/input", ".kept/kept", "@beta/k2", ".kept/@beta/k2",
                          ".disks", "@beta/gone"};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
        snprintf (path, sizeof path, "%s/%s", scratch, kept[i]);
        ck_assert_int_eq (gw_fs_mkdirs (path, 0755), 0);
    }
    const char *records[] = {".kept/kept/session.json", ".kept/@beta/k2/session.json"};
    for (size_t i = 0; i < 2; i++) {
        snprintf (path, sizeof path, "%s/%s", scratch, records[i]);
        FILE *f = fopen (path, "w");
        ck_assert_ptr_nonnull (f);
        fclose (f);
    }
    ck_assert_int_eq (gw_state_dir_sweep (scratch), 3);     /* main, @acme, @beta/gone */
    snprintf (path, sizeof path, "%s/.lock", scratch);
    ck_assert_int_eq (access (path, F_OK), 0);
    snprintf (path, sizeof path, "%s/main", scratch);
    ck_assert_int_ne (access (path, F_OK), 0);
    const char *stay[] = {"kept/input", "@beta/k2", ".kept/kept/session.json", ".disks"};
    for (size_t i = 0; i < 4; i++) {
        snprintf (path, sizeof path, "%s/%s", scratch, stay[i]);
        ck_assert_msg (access (path, F_OK) == 0, "%s went", stay[i]);
    }
    snprintf (path, sizeof path, "%s/@beta/gone", scratch);
    ck_assert_int_ne (access (path, F_OK), 0);
    close (first);
    ck_assert_int_eq (gw_state_dir_lock (scratch, &second, err, sizeof err), 0);
    close (second);
    gw_fs_remove_tree (scratch);
}
END_TEST

/* Makes parent/name with a runtime lock file holding pid_text (NULL: no
 * lock file), nobody holding it. */
static void
s_fake_runtime (const char *parent, const char *name, const char *pid_text)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/%s", parent, name);
    ck_assert_int_eq (mkdir (path, 0711), 0);
    snprintf (path, sizeof path, "%s/%s/sub", parent, name);
    ck_assert_int_eq (mkdir (path, 0755), 0);
    if (!pid_text)
        return;
    snprintf (path, sizeof path, "%s/%s/.runtime-lock", parent, name);
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (write (fd, pid_text, strlen (pid_text)), (ssize_t) strlen (pid_text));
    close (fd);
}

static bool
s_exists (const char *parent, const char *name)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/%s", parent, name);
    struct stat st;
    return lstat (path, &st) == 0;
}

START_TEST (test_runtime_dir)
{
    char parent[] = "/tmp/codebox-runtime-test-XXXXXX";
    ck_assert_ptr_nonnull (mkdtemp (parent));
    char mine[64], err[512];
    int lock = -1;
    ck_assert_int_eq (gw_runtime_dir_make (parent, mine, sizeof mine, &lock, err, sizeof err), 0);
    ck_assert_int_ge (lock, 0);
    struct stat st;
    ck_assert_int_eq (stat (mine, &st), 0);
    ck_assert_int_eq (st.st_mode & 0777, 0711);
    const char *mine_name = strrchr (mine, '/') + 1;
    /* a server that died, one with no lock (an older codebox, or one being
       made), one whose lock holds no PID yet, a name that is not a runtime
       folder's, and a symlink to a dead server's folder */
    s_fake_runtime (parent, "codebox-dead01", "4242\n");
    s_fake_runtime (parent, "codebox-nolock", NULL);
    s_fake_runtime (parent, "codebox-empty1", "");
    s_fake_runtime (parent, "codebox-e2e-dead01", "4242\n");
    s_fake_runtime (parent, "elsewhere", "4242\n");
    char link[4200], target[4200];
    snprintf (link, sizeof link, "%s/codebox-link01", parent);
    snprintf (target, sizeof target, "%s/elsewhere", parent);
    ck_assert_int_eq (symlink (target, link), 0);

    ck_assert_int_eq (gw_runtime_dir_sweep (parent), 1);
    ck_assert (!s_exists (parent, "codebox-dead01"));
    ck_assert (s_exists (parent, mine_name));         /* its lock is held */
    ck_assert (s_exists (parent, "codebox-nolock"));
    ck_assert (s_exists (parent, "codebox-empty1"));
    ck_assert (s_exists (parent, "codebox-e2e-dead01"));
    ck_assert (s_exists (parent, "codebox-link01"));
    ck_assert (s_exists (parent, "elsewhere/sub"));

    /* its server gone, the folder made by gw_runtime_dir_make goes too */
    close (lock);
    ck_assert_int_eq (gw_runtime_dir_sweep (parent), 1);
    ck_assert (!s_exists (parent, mine_name));
    ck_assert_int_eq (gw_runtime_dir_sweep (parent), 0);

    /* a parent it cannot use: an error that says so, no folder */
    char missing[4200];
    snprintf (missing, sizeof missing, "%s/missing", parent);
    ck_assert_int_eq (gw_runtime_dir_make (missing, mine, sizeof mine, &lock, err, sizeof err),
                      -ENOENT);
    ck_assert_int_eq (lock, -1);
    ck_assert_ptr_nonnull (strstr (err, "runtime folder"));
    gw_fs_remove_tree (parent);
}
END_TEST

START_TEST (test_base64)
{
    static const struct {
        const char *plain, *b64;
    } v[] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},
             {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char *enc = gw_base64_encode ((const uint8_t *) v[i].plain, strlen (v[i].plain));
        ck_assert_str_eq (enc, v[i].b64);
        free (enc);
        uint8_t *dec;
        size_t len;
        ck_assert_int_eq (gw_base64_decode (v[i].b64, strlen (v[i].b64), &dec, &len), 0);
        ck_assert_uint_eq (len, strlen (v[i].plain));
        ck_assert (memcmp (dec, v[i].plain, len) == 0);
        free (dec);
    }
    uint8_t *dec;
    size_t len;
    /* line breaks, as kernels send, are skipped */
    ck_assert_int_eq (gw_base64_decode ("Zm9v\nYmFy\n", 10, &dec, &len), 0);
    ck_assert_uint_eq (len, 6);
    free (dec);
    ck_assert_int_ne (gw_base64_decode ("Zm9v!", 5, &dec, &len), 0);
    ck_assert_int_ne (gw_base64_decode ("Zg==Zg==", 8, &dec, &len), 0);
    ck_assert_int_ne (gw_base64_decode ("Z", 1, &dec, &len), 0);
    ck_assert_int_ne (gw_base64_decode ("Zg=", 3, &dec, &len), 0);
}
END_TEST

/* CODEBOX_DIRECTORY_URL: redis://HOST[:PORT][/DB] or a refusal; a good one
 * starts (Redis being away is no error) and stops cleanly. */
START_TEST (test_directory_url)
{
    static const char *const bad[] = {"", "http://x", "redis://", "redis://:6379", "redis://h:0",
                                      "redis://h:99999", "redis://h:1x", "redis://h/x",
                                      "redis://h/-1", NULL};
    char err[200];
    for (int i = 0; bad[i]; i++) {
        err[0] = '\0';
        gw_registry_t *d = gw_registry_new (bad[i], "n", err, sizeof err);
        ck_assert_msg (d == NULL, "accepted %s", bad[i]);
        ck_assert_ptr_nonnull (strstr (err, "redis://HOST"));
    }
    static const char *const good[] = {"redis://127.0.0.1", "redis://127.0.0.1:1",
                                       "redis://127.0.0.1:1/", "redis://127.0.0.1:1/5", NULL};
    for (int i = 0; good[i]; i++) {
        gw_registry_t *d = gw_registry_new (good[i], "node-x", err, sizeof err);
        ck_assert_msg (d != NULL, "refused %s: %s", good[i], err);
        ck_assert_str_eq (gw_registry_node (d), "node-x");
        char node[65];
        ck_assert_int_eq (gw_registry_where (d, "t", "s", node, sizeof node), GW_DIR_UNKNOWN);
        json_t *list = gw_registry_sessions (d, "t");
        ck_assert_int_eq (json_array_size (list), 0);
        json_decref (list);
        gw_registry_put (d, "t", "s", "python3", false);
        gw_registry_drop (d, "t", "s");
        gw_registry_destroy (&d);
        ck_assert_ptr_null (d);
    }
}
END_TEST

static ks_spec_t *
s_spec (const char *argv0)
{
    char json[256], err[128];
    snprintf (json, sizeof json, "{\"argv\": [\"/usr/bin/python3\", \"-m\", \"%s\", \"-f\","
              " \"{connection_file}\"], \"display_name\": \"P\", \"language\": \"python\"}", argv0);
    ks_spec_t *spec = ks_spec_parse ("p", "/nowhere", json, strlen (json), err, sizeof err);
    ck_assert_msg (spec != NULL, "%s", err);
    return spec;
}

/* The startup code an ipykernel kernel gets is exactly
 * gateway/core/gw_ipykernel_startup.py (embedded by the Makefile). */
START_TEST (test_ipykernel_arguments)
{
    gw_config_t *c = s_config ();
    ks_spec_t *ipykernel = s_spec ("ipykernel_launcher");
    ks_spec_t *other = s_spec ("octave_kernel");
    ck_assert_ptr_null (gw_ipykernel_argv (other, c));

    const char *const *argv = gw_ipykernel_argv (ipykernel, c);
    ck_assert_ptr_nonnull (argv);
    ck_assert_str_eq (argv[0], "--HistoryManager.hist_file=:memory:");
    ck_assert_str_eq (argv[1], "--Kernel._execute_sleep=0");
    const char *prefix = "--IPKernelApp.exec_lines=exec(__import__('base64').b64decode('";
    ck_assert_int_eq (strncmp (argv[2], prefix, strlen (prefix)), 0);
    const char *b64 = argv[2] + strlen (prefix);
    const char *end = strchr (b64, '\'');
    ck_assert_ptr_nonnull (end);
    ck_assert_str_eq (end, "').decode(), {'__name__': '__codebox__'})");
    ck_assert_ptr_null (argv[3]);

    uint8_t *code = NULL;
    size_t code_len = 0;
    ck_assert_int_eq (gw_base64_decode (b64, (size_t) (end - b64), &code, &code_len), 0);
    char *path = tu_abspath ("../../gateway/core/gw_ipykernel_startup.py");
    FILE *f = fopen (path, "rb");
    ck_assert_msg (f != NULL, "%s", path);
    char file[65536];
    size_t file_len = fread (file, 1, sizeof file, f);
    ck_assert (feof (f));
    fclose (f);
    ck_assert_uint_eq (code_len, file_len);
    ck_assert_int_eq (memcmp (code, file, file_len), 0);
    free (code);
    free (path);

    char err[128];
    ck_assert_int_eq (gw_config_set (c, "CODEBOX_KERNEL_HISTORY", "disk", "test", err, sizeof err), 0);
    const char *const *on_disk = gw_ipykernel_argv (ipykernel, c);
    ck_assert_str_eq (on_disk[0], "--Kernel._execute_sleep=0");
    ck_assert_ptr_eq (on_disk[1], argv[2]);
    ck_assert_ptr_null (on_disk[2]);

    ks_spec_destroy (&ipykernel);
    ks_spec_destroy (&other);
    gw_config_destroy (&c);
}
END_TEST

Suite *
config_suite (void)
{
    Suite *s = suite_create ("config");
    TCase *tc = tcase_create ("config");
    tcase_add_test (tc, test_defaults);
    tcase_add_test (tc, test_tenant_share);
    tcase_add_test (tc, test_env_file_syntax);
    tcase_add_test (tc, test_env_file_errors);
    tcase_add_test (tc, test_errors_never_echo_values);
    tcase_add_test (tc, test_file_then_environment);
    tcase_add_test (tc, test_auth_tokens);
    tcase_add_test (tc, test_code_box_aliases);
    tcase_add_test (tc, test_placeholders);
    tcase_add_test (tc, test_setting_doc);
    tcase_add_test (tc, test_exec_options);
    tcase_add_test (tc, test_base64);
    tcase_add_test (tc, test_state_dir);
    tcase_add_test (tc, test_runtime_dir);
    tcase_add_test (tc, test_directory_url);
    tcase_add_test (tc, test_ipykernel_arguments);
    suite_add_tcase (s, tc);
    return s;
}
