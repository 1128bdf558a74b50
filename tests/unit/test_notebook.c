/* test_notebook: a session's record of cells made into a notebook
 * (gw_notebook_build: cells in order, restarts marked, ids, kernelspec,
 * outputs left out), the code a replay runs (gw_session_record_replay_code),
 * and the record itself without a server: its folder beside the sessions'
 * (per tenant, 0700, files 0600, hostile names refused), a Jupyter
 * client's cell followed from the kernel's messages, a cell cut by the
 * kernel's death, kernel runs, and whole lines only on read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_notebook.h"
#include "gw_session_record.h"
#include "jp_message.h"
#include "suites.h"
#include "testutil.h"

static const char s_lines[] =
    "{\"cell\":1,\"run\":1,\"execution_count\":1,\"status\":\"ok\",\"started\":\"2026-01-01T00:"
    "00:00.000Z\",\"ended\":\"2026-01-01T00:00:01.000Z\",\"code\":\"x = 1\",\"outputs\":[]}\n"
    "{\"cell\":2,\"run\":1,\"execution_count\":2,\"status\":\"error\",\"code\":\"1/0\","
    "\"outputs\":[{\"output_type\":\"error\",\"ename\":\"ZeroDivisionError\",\"evalue\":\"x\","
    "\"traceback\":[]}]}\n"
    "not a cell at all\n"
    "{\"cell\":3,\"run\":1,\"execution_count\":null,\"status\":\"timeout\","
    "\"kernel_restarted\":true,\"code\":\"while 1: pass\",\"outputs\":[]}\n"
    "{\"cell\":4,\"run\":2,\"execution_count\":1,\"status\":\"ok\",\"code\":\"print(2)\","
    "\"outputs\":[{\"output_type\":\"stream\",\"name\":\"stdout\",\"text\":\"2\\n\"}],"
    "\"outputs_left_out\":\"too big\"}\n"
    "{\"cell\":5,\"run\":2,\"execution_count\":2,\"status\":\"ok\",\"replay\":true,"
    "\"code\":\"x = 1\\n\",\"outputs\":[]}\n";

static json_t *
s_cell (json_t *nb, size_t i)
{
    return json_array_get (json_object_get (nb, "cells"), i);
}

static const char *
s_get (json_t *obj, const char *key)
{
    return json_string_value (json_object_get (obj, key));
}

/* Cells in order, a markdown cell where the run changes (saying why),
 * unique ids, counts, the kernelspec of the settings. */
START_TEST (test_build)
{
    json_t *settings = json_pack ("{s:s, s:{s:s, s:s, s:s}}", "session_id", "s1", "kernelspec",
                                  "name", "py", "display_name", "Py", "language", "python");
    json_t *nb = gw_notebook_build (s_lines, strlen (s_lines), settings);
    ck_assert_ptr_nonnull (nb);
    ck_assert_int_eq (json_integer_value (json_object_get (nb, "nbformat")), 4);
    ck_assert_int_eq (json_integer_value (json_object_get (nb, "nbformat_minor")), 5);
    json_t *spec = json_object_get (json_object_get (nb, "metadata"), "kernelspec");
    ck_assert_str_eq (s_get (spec, "name"), "py");
    ck_assert_str_eq (s_get (spec, "display_name"), "Py");
    ck_assert_str_eq (s_get (json_object_get (json_object_get (nb, "metadata"), "language_info"),
                             "name"), "python");
    json_t *cells = json_object_get (nb, "cells");
    ck_assert_int_eq (json_array_size (cells), 6);    /* 5 cells and one restart */
    static const char *const types[] = {"code", "code", "code", "markdown", "code", "code"};
    static const char *const sources[] = {"x = 1", "1/0", "while 1: pass", NULL, "print(2)",
                                          "x = 1\n"};
    for (size_t i = 0; i < 6; i++) {
        ck_assert_str_eq (s_get (s_cell (nb, i), "cell_type"), types[i]);
        if (sources[i])
            ck_assert_str_eq (s_get (s_cell (nb, i), "source"), sources[i]);
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne (s_get (s_cell (nb, i), "id"), s_get (s_cell (nb, j), "id"));
    }
    ck_assert (strstr (s_get (s_cell (nb, 3), "source"), "Kernel restarted"));
    ck_assert (strstr (s_get (s_cell (nb, 3), "source"), "time limit"));
    ck_assert (strstr (s_get (s_cell (nb, 3), "source"), "Run 2"));
    ck_assert_int_eq (json_integer_value (json_object_get (s_cell (nb, 0), "execution_count")), 1);
    ck_assert (json_is_null (json_object_get (s_cell (nb, 2), "execution_count")));
    json_t *meta = json_object_get (s_cell (nb, 0), "metadata");
    ck_assert_str_eq (s_get (json_object_get (meta, "execution"), "shell.execute_reply"),
                      "2026-01-01T00:00:01.000Z");
    ck_assert_str_eq (s_get (json_object_get (json_object_get (s_cell (nb, 1), "metadata"),
                                              "codebox"), "status"), "error");
    /* outputs kept, and a note where they were left out */
    json_t *err = json_array_get (json_object_get (s_cell (nb, 1), "outputs"), 0);
    ck_assert_str_eq (s_get (err, "output_type"), "error");
    json_t *outs = json_object_get (s_cell (nb, 4), "outputs");
    ck_assert_int_eq (json_array_size (outs), 2);
    ck_assert (strstr (s_get (json_array_get (outs, 1), "text"), "too big"));
    ck_assert (json_is_true (json_object_get (json_object_get (json_object_get (
        s_cell (nb, 5), "metadata"), "codebox"), "replay")));
    json_decref (nb);
    /* no settings and no cells: an empty python3 notebook */
    nb = gw_notebook_build ("", 0, NULL);
    ck_assert_int_eq (json_array_size (json_object_get (nb, "cells")), 0);
    ck_assert_str_eq (s_get (json_object_get (json_object_get (nb, "metadata"), "kernelspec"),
                             "name"), "python3");
    json_decref (nb);
    json_decref (settings);
}
END_TEST

/* A replay takes the cells that succeeded, in order, not replays, and
 * counts the others. */
START_TEST (test_replay_code)
{
    int cells = -1, skipped = -1;
    char *code = gw_session_record_replay_code (s_lines, strlen (s_lines), &cells, &skipped);
    ck_assert_str_eq (code, "x = 1\nprint(2)\n");
    ck_assert_int_eq (cells, 2);
    ck_assert_int_eq (skipped, 2);
    free (code);
    code = gw_session_record_replay_code ("", 0, &cells, &skipped);
    ck_assert_str_eq (code, "");
    ck_assert_int_eq (cells + skipped, 0);
    free (code);
    static const char left[] = "{\"status\":\"ok\",\"code\":\"\",\"code_left_out\":true}\n";
    code = gw_session_record_replay_code (left, strlen (left), &cells, &skipped);
    ck_assert_str_eq (code, "");
    ck_assert_int_eq (skipped, 1);
    free (code);
}
END_TEST

/* One kernel message on parent. */
static void
s_msg (gw_session_record_t *rec, jp_channel_t channel, const char *type, const char *parent,
       json_t *content)
{
    jp_msg_t *msg = jp_msg_new (type, "kernel-session", "kernel");
    json_object_set_new (msg->parent_header, "msg_id", json_string (parent));
    jp_msg_set_content (msg, content);
    gw_session_record_kernel_msg (rec, channel, msg);
    jp_msg_destroy (&msg);
}

/* The record's lines, parsed. */
static json_t *
s_lines_of (gw_session_record_t *rec)
{
    char *text = NULL;
    size_t len = 0;
    ck_assert_int_eq (gw_session_record_read (rec, &text, &len), 0);
    json_t *lines = json_array ();
    for (char *line = strtok (text, "\n"); line; line = strtok (NULL, "\n"))
        json_array_append_new (lines, json_loads (line, 0, NULL));
    free (text);
    return lines;
}

/* Its folder: beside the sessions', per tenant, private; hostile names
 * are refused. A Jupyter client's cell is kept from the kernel's messages
 * once both its reply and idle came; another's messages are not taken. */
START_TEST (test_record_jupyter_cells)
{
    char *state = tu_mkdtemp ();
    char folder[4400];
    ck_assert_int_eq (gw_session_record_folder (folder, sizeof folder, state, "t", "s1"), 0);
    ck_assert (strstr (folder, "/.kept/@t/s1"));
    ck_assert_int_eq (gw_session_record_folder (folder, sizeof folder, state, "t", "../x"),
                      -EINVAL);
    ck_assert_int_eq (gw_session_record_folder (folder, sizeof folder, state, "../t", "s1"),
                      -EINVAL);
    ck_assert_int_eq (gw_session_record_folder (folder, sizeof folder, state, "default", ".x"),
                      -EINVAL);
    gw_session_record_folder (folder, sizeof folder, state, "t", "s1");
    gw_session_record_t *rec = gw_session_record_new (state, "t", "s1",
                                                      json_pack ("{s:s}", "session_id", "s1"),
                                                      1 << 20);
    ck_assert_ptr_nonnull (rec);
    struct stat st;
    ck_assert_int_eq (stat (folder, &st), 0);
    ck_assert_int_eq (st.st_mode & 0777, 0700);
    char path[4600];
    snprintf (path, sizeof path, "%s/session.json", folder);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_eq (st.st_mode & 0777, 0600);
    s_msg (rec, JP_CHANNEL_IOPUB, "execute_input", "p1",
           json_pack ("{s:s, s:i}", "code", "print('hi')", "execution_count", 5));
    s_msg (rec, JP_CHANNEL_IOPUB, "stream", "p1", json_pack ("{s:s, s:s}", "name", "stdout",
                                                             "text", "hi\n"));
    s_msg (rec, JP_CHANNEL_IOPUB, "stream", "other", json_pack ("{s:s, s:s}", "name", "stdout",
                                                                "text", "not mine\n"));
    s_msg (rec, JP_CHANNEL_IOPUB, "status", "p1", json_pack ("{s:s}", "execution_state", "idle"));
    json_t *lines = s_lines_of (rec);
    ck_assert_int_eq (json_array_size (lines), 0);     /* no reply yet */
    json_decref (lines);
    s_msg (rec, JP_CHANNEL_SHELL, "execute_reply", "p1",
           json_pack ("{s:s, s:i}", "status", "ok", "execution_count", 5));
    lines = s_lines_of (rec);
    ck_assert_int_eq (json_array_size (lines), 1);
    json_t *cell = json_array_get (lines, 0);
    ck_assert_str_eq (s_get (cell, "code"), "print('hi')");
    ck_assert_str_eq (s_get (cell, "status"), "ok");
    ck_assert_str_eq (s_get (cell, "via"), "jupyter");
    ck_assert_int_eq (json_integer_value (json_object_get (cell, "execution_count")), 5);
    ck_assert_int_eq (json_integer_value (json_object_get (cell, "run")), 1);
    json_t *out = json_array_get (json_object_get (cell, "outputs"), 0);
    ck_assert_str_eq (s_get (out, "output_type"), "stream");
    ck_assert_str_eq (s_get (out, "text"), "hi\n");
    ck_assert_int_eq (json_array_size (json_object_get (cell, "outputs")), 1);
    json_decref (lines);
    /* a cell the kernel's death cut, then the next run */
    s_msg (rec, JP_CHANNEL_IOPUB, "execute_input", "p2", json_pack ("{s:s}", "code", "boom()"));
    gw_session_record_kernel_died (rec);
    gw_session_record_restart (rec);
    ck_assert_int_eq (gw_session_record_run (rec), 2);
    lines = s_lines_of (rec);
    ck_assert_int_eq (json_array_size (lines), 2);
    ck_assert_str_eq (s_get (json_array_get (lines, 1), "status"), "kernel_died");
    ck_assert_int_eq (json_integer_value (json_object_get (json_array_get (lines, 1), "run")), 1);
    json_decref (lines);
    /* a line cut short (a crash mid-write) is not read */
    snprintf (path, sizeof path, "%s/cells.jsonl", folder);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_eq (st.st_mode & 0777, 0600);
    int fd = open (path, O_WRONLY | O_APPEND);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (write (fd, "{\"cell\":3,\"co", 13), 13);
    close (fd);
    lines = s_lines_of (rec);
    ck_assert_int_eq (json_array_size (lines), 2);
    json_decref (lines);
    gw_session_record_destroy (&rec, true);
    ck_assert_ptr_null (rec);
    ck_assert_int_eq (stat (folder, &st), -1);
    tu_rmtree (state);
    free (state);
}
END_TEST

Suite *
notebook_suite (void)
{
    Suite *s = suite_create ("notebook");
    TCase *tc = tcase_create ("core");
    tcase_add_test (tc, test_build);
    tcase_add_test (tc, test_replay_code);
    tcase_add_test (tc, test_record_jupyter_cells);
    suite_add_tcase (s, tc);
    return s;
}
