/* jp_channels: the five client connections of one kernel, each a
 * jp_zmtp_client. Receiving gives views into the connection's buffer, so a
 * message is verified and decoded without a copy; one kept for another
 * thread takes the buffer along (jp_zmtp_client_detach).
 * Threads: only the thread that made the channels touches them. */
#include "jp_channels.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jp_zmtp_client.h"

struct jp_channels {
    size_t last_bytes;          /* every frame of the last message received */
    jp_connection_t conn;
    jp_zmtp_client_t *clients[JP_CHANNEL_COUNT];
    uint64_t fd_changes;        /* the sum the last jp_channels_take_fds_changed saw */
    jp_msg_memo_t parent;       /* the parent_header decoded last, any channel */
    char session[JP_UUID_LEN + 1];
    char routing_id[JP_UUID_LEN + 1];
};

/* Opens the connection of one channel. Returns 0 or -errno. */
static int
s_open (jp_channels_t *self, jp_channel_t channel)
{
    static const jp_zmtp_type_t types[] = {JP_ZMTP_DEALER, JP_ZMTP_SUB, JP_ZMTP_DEALER,
                                           JP_ZMTP_DEALER, JP_ZMTP_REQ};
    struct sockaddr_storage addr;
    socklen_t len;
    int rc = jp_connection_address (&self->conn, channel, &addr, &len);
    if (rc)
        return rc;
    bool named = channel == JP_CHANNEL_SHELL || channel == JP_CHANNEL_STDIN;
    self->clients[channel] = jp_zmtp_client_new (types[channel], named ? self->routing_id : NULL,
                                                 &addr, len);
    return self->clients[channel] ? 0 : -errno;
}

jp_channels_t *
jp_channels_new (const jp_connection_t *conn)
{
    jp_channels_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
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
        jp_zmtp_client_destroy (&self->clients[ch]);
    jp_msg_memo_release (&self->parent);
    free (self);
    *self_p = NULL;
}

void *
jp_channels_socket (jp_channels_t *self, jp_channel_t channel)
{
    return self->clients[channel];
}

int
jp_channels_fd (const jp_channels_t *self, jp_channel_t channel)
{
    return jp_zmtp_client_fd (self->clients[channel]);
}

bool
jp_channels_any_busy (const jp_channels_t *self)
{
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
        if (jp_zmtp_client_busy (self->clients[ch]))
            return true;
    return false;
}

void
jp_channels_pull (jp_channels_t *self, jp_channel_t channel)
{
    jp_zmtp_client_read_now (self->clients[channel]);
}

bool
jp_channels_take_fds_changed (jp_channels_t *self)
{
    uint64_t sum = 0;
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
        sum += jp_zmtp_client_fd_changes (self->clients[ch]);
    bool changed = sum != self->fd_changes;
    self->fd_changes = sum;
    return changed;
}

int64_t
jp_channels_deadline (const jp_channels_t *self)
{
    int64_t due = -1;
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++) {
        int64_t d = jp_zmtp_client_deadline (self->clients[ch]);
        if (d >= 0 && (due < 0 || d < due))
            due = d;
    }
    return due;
}

void
jp_channels_tick (jp_channels_t *self, int64_t now)
{
    for (int ch = 0; ch < JP_CHANNEL_COUNT; ch++)
        jp_zmtp_client_tick (self->clients[ch], now);
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
    rc = jp_zmtp_client_send (self->clients[channel], frames, n);
    jp_frames_free (frames, n);
    return rc;
}

/* A message taken but not yet verified and decoded: views of its frames
 * into block (the connection's buffer it was read into), and the key to
 * check them with. */
struct jp_raw {
    void *block;
    size_t n;
    jp_part_t parts[];          /* then the key, NUL-terminated */
};

int
jp_channels_recv_or_defer (jp_channels_t *self, jp_channel_t channel, size_t defer_bytes,
                           jp_msg_t **msg_p, jp_raw_t **raw_p)
{
    *msg_p = NULL;
    if (raw_p)
        *raw_p = NULL;
    jp_zmtp_client_t *client = self->clients[channel];
    jp_part_t parts[JP_ZMTP_PARTS_MAX];
    int n = jp_zmtp_client_recv (client, parts, &self->last_bytes);
    if (n < 0)
        return n;
    const uint8_t *key = (const uint8_t *) self->conn.key;
    size_t key_len = strlen (self->conn.key);
    if (n == 0)
        return JP_ERR_NO_DELIMITER;
    if (!raw_p || self->last_bytes <= defer_bytes)
        return jp_msg_decode_memo (parts, (size_t) n, key, key_len, &self->parent, msg_p);
    jp_raw_t *raw = malloc (sizeof *raw + (size_t) n * sizeof (jp_part_t) + key_len + 1);
    if (raw)
        raw->block = jp_zmtp_client_detach (client);
    if (!raw || !raw->block) {  /* no memory to defer: decode here */
        free (raw);
        return jp_msg_decode_memo (parts, (size_t) n, key, key_len, &self->parent, msg_p);
    }
    raw->n = (size_t) n;
    memcpy (raw->parts, parts, (size_t) n * sizeof *parts);
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
    const char *key = (const char *) &raw->parts[raw->n];
    int rc = jp_msg_decode (raw->parts, raw->n, (const uint8_t *) key, strlen (key), msg_p);
    free (raw->block);
    free (raw);
    return rc;
}

void
jp_raw_destroy (jp_raw_t **raw_p)
{
    if (!raw_p || !*raw_p)
        return;
    free ((*raw_p)->block);
    free (*raw_p);
    *raw_p = NULL;
}

size_t
jp_channels_last_bytes (const jp_channels_t *self)
{
    return self->last_bytes;
}

int
jp_channels_hb_ping (jp_channels_t *self)
{
    jp_frame_t ping = {(uint8_t *) "ping", 4};
    return jp_zmtp_client_send (self->clients[JP_CHANNEL_HB], &ping, 1);
}

int
jp_channels_hb_recv (jp_channels_t *self)
{
    jp_part_t parts[JP_ZMTP_PARTS_MAX];
    size_t bytes;
    int got = 0, rc;
    while ((rc = jp_zmtp_client_recv (self->clients[JP_CHANNEL_HB], parts, &bytes)) != -EAGAIN)
        got = 1;
    return got ? 0 : -EAGAIN;
}

int
jp_channels_hb_reset (jp_channels_t *self)
{
    jp_zmtp_client_reconnect (self->clients[JP_CHANNEL_HB]);
    return 0;
}
