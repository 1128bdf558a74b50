/* test_jupyter_asks: gw_jupyter_asks, what a websocket client asked its
 * kernel: the recent request ids its answers are routed by (stdin answers
 * kept out, an id forgotten once its reply came), and the "restarting" a
 * client that woke its paused session is owed: due once, only after both
 * the reply and the idle status of its first shell request, in either
 * order (a restart heard while JupyterLab still waits for that request's
 * idle cancels its kernel_info: the CI failure of stop 48). Pure code, no
 * threads. */
#include <string.h>

#include "gw_jupyter_asks.h"
#include "suites.h"

/* A kernel message of type answering parent_id; idle sets a status
 * content of that state. */
static jp_msg_t *
s_answer (const char *type, const char *parent_id, const char *state)
{
    jp_msg_t *ask = jp_msg_new ("kernel_info_request", "client", "u");
    json_object_set_new (ask->header, "msg_id", json_string (parent_id));
    jp_msg_t *msg = jp_msg_new (type, "kernel", "u");
    jp_msg_set_parent (msg, ask);
    if (state)
        jp_msg_set_content (msg, json_pack ("{s:s}", "execution_state", state));
    jp_msg_destroy (&ask);
    return msg;
}

START_TEST (asked_ids_route_replies)
{
    static gw_asks_t asks;
    memset (&asks, 0, sizeof asks);
    gw_asks_sent (&asks, JP_CHANNEL_SHELL, "a1");
    gw_asks_sent (&asks, JP_CHANNEL_STDIN, "s1");
    ck_assert (gw_asks_asked (&asks, "a1", false));
    ck_assert (!gw_asks_asked (&asks, "s1", false));
    ck_assert (!gw_asks_asked (&asks, "", false));
    ck_assert (!gw_asks_asked (&asks, NULL, false));
    ck_assert (gw_asks_asked (&asks, "a1", true));
    ck_assert (!gw_asks_asked (&asks, "a1", false));
    /* the ring keeps the latest GW_ASKS_RECENT */
    char id[32];
    for (int i = 0; i <= GW_ASKS_RECENT; i++) {
        snprintf (id, sizeof id, "r%d", i);
        gw_asks_sent (&asks, JP_CHANNEL_CONTROL, id);
    }
    ck_assert (!gw_asks_asked (&asks, "r0", false));
    ck_assert (gw_asks_asked (&asks, "r1", false));
    snprintf (id, sizeof id, "r%d", GW_ASKS_RECENT);
    ck_assert (gw_asks_asked (&asks, id, false));
}
END_TEST

/* Runs the answers to the first request "k1" in the order given: the
 * restart is due at the last of them and never again. */
static void
s_owed_in_order (bool idle_first)
{
    static gw_asks_t asks;
    memset (&asks, 0, sizeof asks);
    asks.owes_restart = true;
    gw_asks_sent (&asks, JP_CHANNEL_STDIN, "in");
    gw_asks_sent (&asks, JP_CHANNEL_SHELL, "k1");
    gw_asks_sent (&asks, JP_CHANNEL_SHELL, "k2");
    jp_msg_t *reply = s_answer ("kernel_info_reply", "k1", NULL);
    jp_msg_t *busy = s_answer ("status", "k1", "busy");
    jp_msg_t *idle = s_answer ("status", "k1", "idle");
    jp_msg_t *other = s_answer ("status", "k2", "idle");
    jp_msg_t *other_reply = s_answer ("kernel_info_reply", "k2", NULL);
    ck_assert (!gw_asks_restart_due (&asks, JP_CHANNEL_IOPUB, busy));
    ck_assert (!gw_asks_restart_due (&asks, JP_CHANNEL_IOPUB, other));
    ck_assert (!gw_asks_restart_due (&asks, JP_CHANNEL_SHELL, other_reply));
    if (idle_first) {
        ck_assert (!gw_asks_restart_due (&asks, JP_CHANNEL_IOPUB, idle));
        ck_assert (gw_asks_restart_due (&asks, JP_CHANNEL_SHELL, reply));
    } else {
        ck_assert (!gw_asks_restart_due (&asks, JP_CHANNEL_SHELL, reply));
        ck_assert (gw_asks_restart_due (&asks, JP_CHANNEL_IOPUB, idle));
    }
    ck_assert (!asks.owes_restart);
    ck_assert (!gw_asks_restart_due (&asks, JP_CHANNEL_SHELL, reply));
    ck_assert (!gw_asks_restart_due (&asks, JP_CHANNEL_IOPUB, idle));
    jp_msg_destroy (&reply);
    jp_msg_destroy (&busy);
    jp_msg_destroy (&idle);
    jp_msg_destroy (&other);
    jp_msg_destroy (&other_reply);
}

START_TEST (restart_after_reply_and_idle)
{
    s_owed_in_order (false);
}
END_TEST

START_TEST (restart_after_idle_and_reply)
{
    s_owed_in_order (true);
}
END_TEST

START_TEST (no_restart_when_not_owed)
{
    static gw_asks_t asks;
    memset (&asks, 0, sizeof asks);
    gw_asks_sent (&asks, JP_CHANNEL_SHELL, "k1");
    jp_msg_t *reply = s_answer ("kernel_info_reply", "k1", NULL);
    jp_msg_t *idle = s_answer ("status", "k1", "idle");
    ck_assert (!gw_asks_restart_due (&asks, JP_CHANNEL_SHELL, reply));
    ck_assert (!gw_asks_restart_due (&asks, JP_CHANNEL_IOPUB, idle));
    /* owed, but nothing asked yet: answers to others' requests do not count */
    memset (&asks, 0, sizeof asks);
    asks.owes_restart = true;
    ck_assert (!gw_asks_restart_due (&asks, JP_CHANNEL_SHELL, reply));
    ck_assert (!gw_asks_restart_due (&asks, JP_CHANNEL_IOPUB, idle));
    ck_assert (asks.owes_restart);
    jp_msg_destroy (&reply);
    jp_msg_destroy (&idle);
}
END_TEST

Suite *
jupyter_asks_suite (void)
{
    Suite *s = suite_create ("jupyter_asks");
    TCase *tc = tcase_create ("asks");
    tcase_add_test (tc, asked_ids_route_replies);
    tcase_add_test (tc, restart_after_reply_and_idle);
    tcase_add_test (tc, restart_after_idle_and_reply);
    tcase_add_test (tc, no_restart_when_not_owed);
    suite_add_tcase (s, tc);
    return s;
}
