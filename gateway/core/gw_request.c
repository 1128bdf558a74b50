/* gw_request: setting a request's answer and completing it. Loop thread. */
#include "gw_request.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/* The value of name in a packed "name\0value\0" block, or NULL. */
static const char *
s_packed_find (const char *block, size_t len, const char *name, bool any_case)
{
    if (!block)
        return NULL;    /* no headers, or no query string */
    const char *p = block, *end = block + len;
    while (p < end) {
        const char *value = p + strlen (p) + 1;
        if (value >= end)
            break;
        if (any_case ? strcasecmp (p, name) == 0 : strcmp (p, name) == 0)
            return value;
        p = value + strlen (value) + 1;
    }
    return NULL;
}

const char *
gw_request_header (const gw_request_t *req, const char *name)
{
    return s_packed_find (req->headers, req->headers_len, name, true);
}

const char *
gw_request_query (const gw_request_t *req, const char *name)
{
    return s_packed_find (req->query, req->query_len, name, false);
}

int
gw_request_headers_add (char **block, size_t *len, size_t max, const char *name,
                        const char *value)
{
    size_t n = strlen (name) + 1, v = strlen (value) + 1;
    if (*len + n + v > max)
        return -ENOSPC;
    char *grown = realloc (*block, *len + n + v);
    if (!grown)
        return -ENOMEM;
    memcpy (grown + *len, name, n);
    memcpy (grown + *len + n, value, v);
    *block = grown;
    *len += n + v;
    return 0;
}

int
gw_request_set_header (gw_request_t *req, const char *name, const char *value)
{
    size_t n = strlen (name) + 1, v = strlen (value) + 1;
    if (req->reply_headers_len + n + v > sizeof req->reply_headers)
        return -ENOSPC;
    memcpy (req->reply_headers + req->reply_headers_len, name, n);
    memcpy (req->reply_headers + req->reply_headers_len + n, value, v);
    req->reply_headers_len += n + v;
    return 0;
}

void
gw_request_name_session (gw_request_t *req, const char *session_id)
{
    for (size_t at = 0; at < req->reply_headers_len;) {
        const char *name = req->reply_headers + at;
        const char *value = name + strlen (name) + 1;
        if (strcasecmp (name, GW_SESSION_HEADER) == 0)
            return;     /* named already */
        at = (size_t) (value - req->reply_headers) + strlen (value) + 1;
    }
    if (session_id && *session_id)
        gw_request_set_header (req, GW_SESSION_HEADER, session_id);
}

bool
gw_request_client_gone (const gw_request_t *req)
{
    if (!req->has_client_fd)
        return false;
    char byte;
    ssize_t n = recv (req->client_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0)
        return true;            /* the client shut its side */
    return n < 0 && (errno == ECONNRESET || errno == ENOTCONN || errno == EPIPE);
}

void
gw_request_reply_json (gw_request_t *req, int status, json_t *body)
{
    req->status = status;
    json_decref (req->json);
    req->json = body;
    req->complete (req);
}

/* Drops a character that a cut at len bytes left unfinished (its lead byte
 * and what follows it). */
static void
s_cut_whole_characters (char *text, size_t len)
{
    size_t j = len;
    while (j > 0 && ((unsigned char) text[j - 1] & 0xC0) == 0x80)
        j--;
    if (j == 0)
        return;
    unsigned char lead = (unsigned char) text[j - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (j - 1 + need > len)
        text[j - 1] = '\0';
}

void
gw_request_reply_error (gw_request_t *req, gw_error_t e, const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (message, sizeof message, fmt, ap);
    va_end (ap);
    if (n >= (int) sizeof message)
        s_cut_whole_characters (message, sizeof message - 1);
    json_t *body = json_pack ("{s:{s:s, s:s}}", "error", "code", gw_error_code (e), "message",
                              message);
    if (!body)  /* the message quoted a client's bytes that are not UTF-8 */
        body = json_pack ("{s:{s:s, s:s}}", "error", "code", gw_error_code (e), "message",
                          "(the message quoted text that is not valid UTF-8)");
    gw_request_reply_json (req, gw_error_http_status (e), body);
}

void
gw_request_reply_file (gw_request_t *req, int status, int fd, uint64_t file_size,
                       const char *content_type)
{
    req->status = status;
    req->has_file = true;
    req->file_fd = fd;
    req->file_size = file_size;
    req->content_type = content_type;
    req->complete (req);
}

void
gw_request_reply_reader (gw_request_t *req, int status, gw_request_read_fn *fn,
                         gw_request_free_fn *free_fn, void *arg, const char *content_type)
{
    req->status = status;
    req->reader = fn;
    req->reader_free = free_fn;
    req->reader_arg = arg;
    req->content_type = content_type;
    req->complete (req);
}

void
gw_request_read_body_into (gw_request_t *req, gw_upload_t *upload)
{
    gw_upload_destroy (&req->upload);
    req->upload = upload;
    req->status = 0;
    req->complete (req);
}

void
gw_request_reply_raw (gw_request_t *req, int status, char *body, size_t len,
                      const char *content_type)
{
    req->status = status;
    free (req->raw);
    req->raw = body;
    req->raw_len = len;
    req->content_type = content_type;
    req->complete (req);
}

gw_caller_t
gw_request_caller (const gw_request_t *req)
{
    return (gw_caller_t) {.tenant = req->tenant, .overrides = req->overrides};
}

void
gw_request_reply_upgrade (gw_request_t *req, gw_request_upgrade_fn *fn, void *arg)
{
    req->status = 101;
    req->upgrade = fn;
    req->upgrade_arg = arg;
    req->complete (req);
}

void
gw_upgraded_close (gw_upgraded_t **up_p)
{
    if (!up_p || !*up_p)
        return;
    gw_upgraded_t *up = *up_p;
    up->close (up->handle);
    free (up->extra);
    free (up);
    *up_p = NULL;
}
