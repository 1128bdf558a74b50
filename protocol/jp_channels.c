/* jp_channels: the five client sockets of one kernel connection. Threads:
 * only the thread that made the channels touches them. Raw zmq_msg_t, not
 * zmsg/zframe: receiving into an array on the stack stops keeping parts at
 * MAX_PARTS of a hostile message (zmsg_recv keeps them all, a heap frame
 * each), and an execute_request's round trip is about 15% faster (measured
 * by `make bench`, tests/bench/czmq_compare.c). */
#include "jp_channels.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#define MAX_PARTS 256                   /* more frames than this is hostile */
#define MAX_FRAME_BYTES (64LL << 20)    /* one frame over 64 MiB (the display budget
                                           of a whole execution) is refused */

struct jp_channels {
    int rcvhwm;
    size_t last_bytes;          /* every frame of the last message received */
    void *ctx;
    jp_connection_t conn;
    void *sockets[JP_CHANNEL_COUNT];
    unsigned used;              /* a bit per channel: see JP_POLL_USED */
    char session[JP_UUID_LEN + 1];
    char routing_id[JP_UUID_LEN + 1];
};

/* Opens and connects the socket of one channel. Returns 0 or -errno. */
static int
s_open (jp_channels_t *self, jp_channel_t channel)
{
    static const int types[] = {ZMQ_DEALER, ZMQ_SUB, ZMQ_DEALER, ZMQ_DEALER, ZMQ_REQ};
    void *sock = zmq_socket (self->ctx, types[channel]);
    if (!sock)
        return -errno;
    int zero = 0;
    int64_t max = MAX_FRAME_BYTES;
    zmq_setsockopt (sock, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt (sock, ZMQ_MAXMSGSIZE, &max, sizeof max);
    if (channel == JP_CHANNEL_IOPUB || self->rcvhwm > 0)
        zmq_setsockopt (sock, ZMQ_RCVHWM, &self->rcvhwm, sizeof self->rcvhwm);
    if (channel == JP_CHANNEL_IOPUB)
        zmq_setsockopt (sock, ZMQ_SUBSCRIBE, "", 0);
    if (channel == JP_CHANNEL_SHELL || channel == JP_CHANNEL_STDIN)
        zmq_setsockopt (sock, ZMQ_ROUTING_ID, self->routing_id, strlen (self->routing_id));
    char endpoint[JP_IPC_PATH_MAX + 32];
    int rc = jp_connection_endpoint (&self->conn, channel, endpoint, sizeof endpoint);
    if (rc == 0 && zmq_connect (sock, endpoint) != 0)
        rc = -errno;
    if (rc) {
        zmq_close (sock);
        return rc;
    }
    self->sockets[channel] = sock;
    self->used |= 1u << channel;
    return 0;
}

jp_channels_t *
jp_channels_new (void *zmq_ctx, const jp_connection_t *conn, int rcvhwm)
{
    jp_channels_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->ctx = zmq_ctx;
    self->rcvhwm = rcvhwm;
    self->conn = *conn;
    int rc = jp_random_uuid (self->session);
    if (!rc)
        rc = jp_random_uuid (self->routing_id);
    for (int ch = 0; ch < JP_CHANNEL_COUNT && !rc; ch++)
        rc = s_open (self, (jp_channel_t) ch);
    if (rc) {
        jp_channels_destroy (&self);
        errno = -rc;
    }
    return self;
}

void
jp_channels_destroy (jp_channels_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    jp_channels_t *self = *self_p;
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
        if (self->sockets[ch])
            zmq_close (self->sockets[ch]);
    free (self);
    *self_p = NULL;
}

void *
jp_channels_socket (jp_channels_t *self, jp_channel_t channel)
{
    return self->sockets[channel];
}

jp_msg_t *
jp_channels_msg_new (jp_channels_t *self, const char *msg_type)
{
    return jp_msg_new (msg_type, self->session, "codebox");
}

int
jp_channels_send (jp_channels_t *self, jp_channel_t channel, const jp_msg_t *msg)
{
    jp_frame_t *frames;
    size_t n;
    int rc = jp_msg_encode (msg, (const uint8_t *) self->conn.key,
                            strlen (self->conn.key), &frames, &n);
    if (rc)
        return rc;
    void *sock = self->sockets[channel];
    self->used |= 1u << channel;
    for (size_t i = 0; i < n && !rc; i++) {
        int flags = ZMQ_DONTWAIT | (i + 1 < n ? ZMQ_SNDMORE : 0);
        if (zmq_send (sock, frames[i].data, frames[i].size, flags) < 0)
            rc = -errno;
    }
    jp_frames_free (frames, n);
    return rc;
}

/* A message taken but not yet verified and decoded: its frames, and the
 * key to check them with. */
struct jp_raw {
    size_t n;
    zmq_msg_t parts[];          /* then the key, NUL-terminated */
};

/* Takes the frames of one message into parts (up to MAX_PARTS kept; the
 * rest of a hostile one drained). Returns their count, or a negative
 * code (-EAGAIN: nothing waits) with none kept. */
static int
s_recv_parts (jp_channels_t *self, jp_channel_t channel, zmq_msg_t *parts)
{
    void *sock = self->sockets[channel];
    self->used |= 1u << channel;
    size_t n = 0;
    int more = 1, rc = 0;
    self->last_bytes = 0;
    while (more) {
        zmq_msg_t part;
        zmq_msg_init (&part);
        if (zmq_msg_recv (&part, sock, n == 0 ? ZMQ_DONTWAIT : 0) < 0) {
            rc = -errno;
            zmq_msg_close (&part);
            /* nothing waits: libzmq has just taken every command the
               socket had and found no message, so whatever comes next
               wakes its ZMQ_FD again; the socket needs no ZMQ_EVENTS
               question before the next sleep */
            if (rc == -EAGAIN && n == 0)
                self->used &= ~(1u << channel);
            break;
        }
        more = zmq_msg_more (&part);
        self->last_bytes += zmq_msg_size (&part);
        if (n < MAX_PARTS)
            parts[n++] = part;
        else {
            zmq_msg_close (&part);  /* drain the rest of a hostile message */
            rc = JP_ERR_TRUNCATED;
        }
    }
    if (rc) {
        for (size_t i = 0; i < n; i++)
            zmq_msg_close (&parts[i]);
        return rc;
    }
    return (int) n;
}

/* Verifies and decodes n frames (closed afterwards) with key. */
static int
s_decode_parts (zmq_msg_t *parts, size_t n, const char *key, jp_msg_t **msg_p)
{
    if (n == 0 || n > MAX_PARTS)
        return JP_ERR_TRUNCATED;
    jp_part_t views[MAX_PARTS] = {{0}};  /* (gcc cannot see that n fills them) */
    for (size_t i = 0; i < n; i++)
        views[i] = (jp_part_t) {zmq_msg_data (&parts[i]), zmq_msg_size (&parts[i])};
    int rc = jp_msg_decode (views, n, (const uint8_t *) key, strlen (key), msg_p);
    for (size_t i = 0; i < n; i++)
        zmq_msg_close (&parts[i]);
    return rc;
}

int
jp_channels_recv_or_defer (jp_channels_t *self, jp_channel_t channel, size_t defer_bytes,
                           jp_msg_t **msg_p, jp_raw_t **raw_p)
{
    *msg_p = NULL;
    if (raw_p)
        *raw_p = NULL;
    zmq_msg_t parts[MAX_PARTS];
    int n = s_recv_parts (self, channel, parts);
    if (n < 0)
        return n;
    if (!raw_p || self->last_bytes <= defer_bytes)
        return s_decode_parts (parts, (size_t) n, self->conn.key, msg_p);
    size_t key_len = strlen (self->conn.key);
    jp_raw_t *raw = malloc (sizeof *raw + (size_t) n * sizeof (zmq_msg_t) + key_len + 1);
    if (!raw)   /* no memory to defer: decode here */
        return s_decode_parts (parts, (size_t) n, self->conn.key, msg_p);
    raw->n = (size_t) n;
    for (int i = 0; i < n; i++) {
        zmq_msg_init (&raw->parts[i]);
        zmq_msg_move (&raw->parts[i], &parts[i]);
        zmq_msg_close (&parts[i]);
    }
    memcpy ((char *) &raw->parts[n], self->conn.key, key_len + 1);
    *raw_p = raw;
    return JP_CHANNELS_DEFERRED;
}

int
jp_raw_decode (jp_raw_t **raw_p, jp_msg_t **msg_p)
{
    *msg_p = NULL;
    jp_raw_t *raw = *raw_p;
    *raw_p = NULL;
    int rc = s_decode_parts (raw->parts, raw->n, (const char *) &raw->parts[raw->n], msg_p);
    free (raw);
    return rc;
}

void
jp_raw_destroy (jp_raw_t **raw_p)
{
    if (!raw_p || !*raw_p)
        return;
    for (size_t i = 0; i < (*raw_p)->n; i++)
        zmq_msg_close (&(*raw_p)->parts[i]);
    free (*raw_p);
    *raw_p = NULL;
}

size_t
jp_channels_last_bytes (const jp_channels_t *self)
{
    return self->last_bytes;
}

bool
jp_channels_any_used (const jp_channels_t *self)
{
    return self->used != 0;
}

bool
jp_channels_take_used (jp_channels_t *self, jp_channel_t channel)
{
    bool used = self->used & (1u << channel);
    self->used &= ~(1u << channel);
    return used;
}

int
jp_channels_hb_ping (jp_channels_t *self)
{
    self->used |= 1u << JP_CHANNEL_HB;
    if (zmq_send (self->sockets[JP_CHANNEL_HB], "ping", 4, ZMQ_DONTWAIT) < 0)
        return -errno;
    return 0;
}

int
jp_channels_hb_recv (jp_channels_t *self)
{
    char buf[64];
    int got = 0;
    int more = 1;
    self->used |= 1u << JP_CHANNEL_HB;
    while (more) {
        if (zmq_recv (self->sockets[JP_CHANNEL_HB], buf, sizeof buf, ZMQ_DONTWAIT) < 0)
            return got ? 0 : -errno;
        got = 1;
        size_t more_size = sizeof more;
        zmq_getsockopt (self->sockets[JP_CHANNEL_HB], ZMQ_RCVMORE, &more, &more_size);
    }
    return 0;
}

int
jp_channels_hb_reset (jp_channels_t *self)
{
    zmq_close (self->sockets[JP_CHANNEL_HB]);
    self->sockets[JP_CHANNEL_HB] = NULL;
    return s_open (self, JP_CHANNEL_HB);
}
