/* gw_stream: a mutex-guarded byte queue between the loop's writers and
 * libmicrohttpd's reader, with suspend on empty and resume on write, and
 * bounds on what waits unread (see the header). */
#include "gw_stream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "jp_log.h"

/* unread bytes of every stream of the process */
static atomic_size_t s_unread_total;

struct gw_stream {
    pthread_mutex_t lock;
    int refs;
    char *data;
    size_t start, len, cap;
    bool closed, gone, suspended;
    bool cut;                   /* a bound was passed: what waited was dropped */
    struct MHD_Connection *connection;
    void (*resumed) (void *arg);
    void *resumed_arg;
    char note[160];             /* for the access log line, set at close */
};

gw_stream_t *
gw_stream_new (void)
{
    gw_stream_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    pthread_mutex_init (&self->lock, NULL);
    self->refs = 1;
    return self;
}

gw_stream_t *
gw_stream_ref (gw_stream_t *self)
{
    pthread_mutex_lock (&self->lock);
    self->refs++;
    pthread_mutex_unlock (&self->lock);
    return self;
}

void
gw_stream_unref (gw_stream_t **self_p)
{
    gw_stream_t *self = *self_p;
    if (!self)
        return;
    *self_p = NULL;
    pthread_mutex_lock (&self->lock);
    int refs = --self->refs;
    pthread_mutex_unlock (&self->lock);
    if (refs > 0)
        return;
    pthread_mutex_destroy (&self->lock);
    atomic_fetch_sub (&s_unread_total, self->len - self->start);
    free (self->data);
    free (self);
}

/* Resumes the connection if the reader suspended it. Lock held. */
static void
s_wake (gw_stream_t *self)
{
    if (self->suspended && self->connection) {
        self->suspended = false;
        MHD_resume_connection (self->connection);
        if (self->resumed)
            self->resumed (self->resumed_arg);
    }
}

void
gw_stream_write (gw_stream_t *self, const char *data, size_t len)
{
    pthread_mutex_lock (&self->lock);
    size_t unread = self->len - self->start;
    if (!self->closed && !self->gone
        && (unread + len > GW_STREAM_MAX_UNREAD
            || (atomic_load (&s_unread_total) + len > GW_STREAMS_MAX_UNREAD
                && unread + len > GW_STREAM_SHARE))) {
        /* the client does not read: its connection ends (gw_stream_read) */
        jp_log_info ("stream event=cut unread=%zu why=\"the client does not read\"", unread);
        atomic_fetch_sub (&s_unread_total, unread);
        free (self->data);
        self->data = NULL;
        self->start = self->len = self->cap = 0;
        self->cut = self->closed = true;
        s_wake (self);
    }
    if (!self->closed && !self->gone) {
        if (self->start > 0 && (self->start == self->len || self->len + len > self->cap)) {
            memmove (self->data, self->data + self->start, self->len - self->start);
            self->len -= self->start;
            self->start = 0;
        }
        if (self->len + len > self->cap) {
            size_t cap = (self->len + len) * 2;
            char *grown = realloc (self->data, cap);
            if (grown) {
                self->data = grown;
                self->cap = cap;
            }
        }
        if (self->len + len <= self->cap) {
            memcpy (self->data + self->len, data, len);
            self->len += len;
            atomic_fetch_add (&s_unread_total, len);
        }
        s_wake (self);
    }
    pthread_mutex_unlock (&self->lock);
}

void
gw_stream_write_event (gw_stream_t *self, const char *json_text)
{
    size_t n = strlen (json_text);
    char *event = malloc (n + 16);
    if (!event)
        return;
    memcpy (event, "data: ", 6);
    memcpy (event + 6, json_text, n);
    memcpy (event + 6 + n, "\n\n", 2);
    gw_stream_write (self, event, n + 8);
    free (event);
}

void
gw_stream_close_noted (gw_stream_t *self, const char *note)
{
    pthread_mutex_lock (&self->lock);
    snprintf (self->note, sizeof self->note, "%s", note ? note : "");
    self->closed = true;
    s_wake (self);
    pthread_mutex_unlock (&self->lock);
}

void
gw_stream_note (gw_stream_t *self, char *out, size_t len)
{
    pthread_mutex_lock (&self->lock);
    snprintf (out, len, "%s", self->note);
    pthread_mutex_unlock (&self->lock);
}

void
gw_stream_close (gw_stream_t *self)
{
    pthread_mutex_lock (&self->lock);
    self->closed = true;
    s_wake (self);
    pthread_mutex_unlock (&self->lock);
}

void
gw_stream_attach (gw_stream_t *self, void *connection, void (*resumed) (void *arg), void *arg)
{
    pthread_mutex_lock (&self->lock);
    self->connection = connection;
    self->resumed = resumed;
    self->resumed_arg = arg;
    pthread_mutex_unlock (&self->lock);
}

ssize_t
gw_stream_read (gw_stream_t *self, char *buf, size_t max)
{
    pthread_mutex_lock (&self->lock);
    ssize_t n;
    size_t pending = self->len - self->start;
    if (pending > 0) {
        n = (ssize_t) (pending < max ? pending : max);
        memcpy (buf, self->data + self->start, (size_t) n);
        self->start += (size_t) n;
        atomic_fetch_sub (&s_unread_total, (size_t) n);
    } else if (self->cut)
        n = -2;
    else if (self->closed || self->gone)
        n = -1;
    else {
        self->suspended = true;
        MHD_suspend_connection (self->connection);
        n = 0;
    }
    pthread_mutex_unlock (&self->lock);
    return n;
}

void
gw_stream_set_gone (gw_stream_t *self)
{
    pthread_mutex_lock (&self->lock);
    self->gone = true;
    self->connection = NULL;
    pthread_mutex_unlock (&self->lock);
}

bool
gw_stream_gone (gw_stream_t *self)
{
    pthread_mutex_lock (&self->lock);
    bool gone = self->gone || self->cut;
    pthread_mutex_unlock (&self->lock);
    return gone;
}

bool
gw_stream_closed (gw_stream_t *self)
{
    pthread_mutex_lock (&self->lock);
    bool closed = self->closed;
    pthread_mutex_unlock (&self->lock);
    return closed;
}
