/* test_execution: gw_execution_feed without a kernel or a server: which
 * messages belong to an execution, how outputs are gathered and capped,
 * when it ends (reply and idle; a dropped idle settled after the probes). */
#include <string.h>

#include "gw_execution.h"
#include "jp_message.h"
#include "suites.h"

/* A message of type on the parent request parent_id, with content (stolen). */
static jp_msg_t *
s_msg (const char *type, const char *parent_id, json_t *content)
{
    jp_msg_t *msg = jp_msg_new (type, "kernel-session", "kernel");
    ck_assert_ptr_nonnull (msg);
    json_object_set_new (msg->parent_header, "msg_id", json_string (parent_id));
    jp_msg_set_content (msg, content);
    return msg;
}

static bool
s_feed (gw_execution_t *exec, jp_channel_t channel, const char *type, const char *parent,
        json_t *content)
{
    jp_msg_t *msg = s_msg (type, parent, content);
    bool taken = gw_execution_feed (exec, channel, msg);
    jp_msg_destroy (&msg);
    return taken;
}

static void
s_stream (gw_execution_t *exec, const char *name, const char *text)
{
    ck_assert (s_feed (exec, JP_CHANNEL_IOPUB, "stream", "req-1",
                       json_pack ("{s:s, s:s}", "name", name, "text", text)));
}

static void
s_end (gw_execution_t *exec, const char *status)
{
    s_feed (exec, JP_CHANNEL_SHELL, "execute_reply", "req-1",
            json_pack ("{s:s, s:i}", "status", status, "execution_count", 3));
    s_feed (exec, JP_CHANNEL_IOPUB, "status", "req-1",
            json_pack ("{s:s}", "execution_state", "idle"));
}

/* Streams of one name in a row become one item; another parent's messages
 * are not taken; it ends only with both the reply and idle. */
START_TEST (test_streams_parents_and_end)
{
    gw_execution_t *exec = gw_execution_new ("print(1)", 1 << 20);
    gw_execution_running (exec, "req-1", NULL);
    s_stream (exec, "stdout", "a");
    s_stream (exec, "stdout", "b\n");
    ck_assert (!s_feed (exec, JP_CHANNEL_IOPUB, "stream", "other",
                        json_pack ("{s:s, s:s}", "name", "stdout", "text", "X")));
    s_stream (exec, "stderr", "warn\n");
    s_feed (exec, JP_CHANNEL_SHELL, "execute_reply", "req-1",
            json_pack ("{s:s, s:i}", "status", "ok", "execution_count", 3));
    ck_assert (!gw_execution_finished (exec));
    s_feed (exec, JP_CHANNEL_IOPUB, "status", "req-1",
            json_pack ("{s:s}", "execution_state", "idle"));
    ck_assert (gw_execution_finished (exec));
    ck_assert_int_eq (gw_execution_status (exec), GW_EXEC_COMPLETED);
    ck_assert_int_eq (gw_execution_count (exec), 3);
    json_t *out = gw_execution_outputs (exec);
    ck_assert_int_eq (json_array_size (out), 2);
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (out, 0), "content")),
                      "ab\n");
    ck_assert_str_eq (json_string_value (json_object_get (json_array_get (out, 1), "name")),
                      "stderr");
    /* after the end nothing more is taken */
    ck_assert (!s_feed (exec, JP_CHANNEL_IOPUB, "stream", "req-1",
                        json_pack ("{s:s, s:s}", "name", "stdout", "text", "late")));
    gw_execution_destroy (&exec);
}
END_TEST

/* An error output, and a reply that says error, end it as an error. */
START_TEST (test_error)
{
    gw_execution_t *exec = gw_execution_new ("1/0", 1 << 20);
    gw_execution_running (exec, "req-1", NULL);
    s_feed (exec, JP_CHANNEL_IOPUB, "error", "req-1",
            json_pack ("{s:s, s:s, s:[s]}", "ename", "ZeroDivisionError", "evalue",
                       "division by zero", "traceback", "tb"));
    s_end (exec, "error");
    ck_assert_int_eq (gw_execution_status (exec), GW_EXEC_ERROR);
    json_t *item = json_array_get (gw_execution_outputs (exec), 0);
    ck_assert_str_eq (json_string_value (json_object_get (item, "type")), "error");
    ck_assert_str_eq (json_string_value (json_object_get (item, "ename")), "ZeroDivisionError");
    gw_execution_destroy (&exec);
}
END_TEST

/* Text past the cap is cut, once, with a marker; the rest is counted, not
 * kept. */
START_TEST (test_text_cap)
{
    gw_execution_t *exec = gw_execution_new ("flood", 1000);
    gw_execution_running (exec, "req-1", NULL);
    char chunk[301];
    memset (chunk, 'x', 300);
    chunk[300] = '\0';
    for (int i = 0; i < 50; i++)
        s_stream (exec, "stdout", chunk);
    s_end (exec, "ok");
    ck_assert (gw_execution_truncated (exec));
    const char *text = json_string_value (json_object_get (
        json_array_get (gw_execution_outputs (exec), 0), "content"));
    ck_assert_uint_lt (strlen (text), 1300);
    ck_assert_ptr_nonnull (strstr (text, "truncated"));
    gw_execution_destroy (&exec);
}
END_TEST

/* The reply came but the idle status never does: after the grace each
 * settle is a probe; when the probes are spent it ends with its output. A
 * probe's status on iopub ends it at once. */
START_TEST (test_settle_without_idle)
{
    gw_execution_t *exec = gw_execution_new ("print(2)", 1 << 20);
    gw_execution_running (exec, "req-1", NULL);
    ck_assert_int_eq (gw_execution_settle_deadline (exec), -1);
    s_stream (exec, "stdout", "2\n");
    s_feed (exec, JP_CHANNEL_SHELL, "execute_reply", "req-1",
            json_pack ("{s:s, s:i}", "status", "ok", "execution_count", 1));
    int64_t deadline = gw_execution_settle_deadline (exec);
    ck_assert_int_gt (deadline, 0);
    gw_execution_settle (exec, deadline - 1);
    ck_assert (!gw_execution_finished (exec));
    int64_t now = deadline;
    for (int i = 0; i < GW_EXEC_IDLE_PROBES && !gw_execution_finished (exec); i++) {
        gw_execution_settle (exec, now);
        now += GW_EXEC_IDLE_GRACE_MS;
    }
    ck_assert (!gw_execution_finished (exec));
    gw_execution_settle (exec, now);
    ck_assert (gw_execution_finished (exec));
    ck_assert_int_eq (gw_execution_status (exec), GW_EXEC_COMPLETED);
    ck_assert_str_eq (json_string_value (json_object_get (
                          json_array_get (gw_execution_outputs (exec), 0), "content")), "2\n");
    gw_execution_destroy (&exec);
}
END_TEST

Suite *
execution_suite (void)
{
    Suite *s = suite_create ("execution");
    TCase *tc = tcase_create ("feed");
    tcase_add_test (tc, test_streams_parents_and_end);
    tcase_add_test (tc, test_error);
    tcase_add_test (tc, test_text_cap);
    tcase_add_test (tc, test_settle_without_idle);
    suite_add_tcase (s, tc);
    return s;
}
