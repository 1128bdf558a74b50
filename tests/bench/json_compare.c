/* json_compare: `make bench`'s measurement of jp_json (the gateway's
 * compact JSON writer) against jansson's json_dumps, on what the gateway
 * writes most: an execution's result with a plot (a 2 MiB base64 PNG
 * string, some text and small fields) and a small answer. The two are
 * interleaved round by round; each row is the p50 of the rounds. Both
 * texts are checked equal first.
 *
 * Prints one JSON line per row. Single thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "jp_json.h"

#define ROUNDS 60

static double
s_now_us (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int
s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void
s_row (const char *what, json_t *value)
{
    char *theirs = json_dumps (value, JSON_COMPACT), *ours = jp_json_dump (value, NULL);
    if (!theirs || !ours || strcmp (theirs, ours) != 0) {
        fprintf (stderr, "json_compare: %s: the texts differ\n", what);
        exit (1);
    }
    size_t bytes = strlen (ours);
    free (theirs);
    free (ours);
    double t_jansson[ROUNDS], t_ours[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double a = s_now_us ();
        free (json_dumps (value, JSON_COMPACT));
        double b = s_now_us ();
        free (jp_json_dump (value, NULL));
        double c = s_now_us ();
        t_jansson[r] = b - a;
        t_ours[r] = c - b;
    }
    qsort (t_jansson, ROUNDS, sizeof (double), s_cmp);
    qsort (t_ours, ROUNDS, sizeof (double), s_cmp);
    double j = t_jansson[ROUNDS / 2], o = t_ours[ROUNDS / 2];
    printf ("{\"row\":\"json %s\",\"bytes\":%zu,\"jansson_us\":%.1f,\"jp_json_us\":%.1f,"
            "\"ratio\":%.2f}\n", what, bytes, j, o, o / j);
}

int
main (void)
{
    size_t png_len = 2u << 20;
    char *png = malloc (png_len + 1);
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned x = 12345;
    for (size_t i = 0; i < png_len; i++) {
        x = x * 1103515245u + 12345u;
        png[i] = b64[(x >> 16) & 63];
    }
    png[png_len] = '\0';
    json_t *result = json_pack (
        "{s:s, s:s, s:n, s:i, s:[s], s:[{s:s, s:s, s:s}, {s:s, s:{s:s, s:s}}], s:[], s:i}",
        "request_id", "main~1b2c", "status", "completed", "error", "execution_count", 7,
        "files", png, "output", "type", "stream", "name", "stdout", "text",
        "epoch 1: loss 0.25\nepoch 2: loss 0.125\n", "type", "display", "data", "image/png",
        png, "text/plain", "<Figure size 640x480 with 1 Axes>", "new_artifacts",
        "duration_ms", 412);
    json_t *small = json_pack ("{s:s, s:i, s:{s:[{s:s, s:s}], s:b}}", "jsonrpc", "2.0", "id", 42,
                               "result", "content", "type", "text", "text", "2\n", "isError", 0);
    if (!result || !small)
        return 1;
    s_row ("result with a plot", result);
    s_row ("small answer", small);
    json_decref (result);
    json_decref (small);
    free (png);
    return 0;
}
