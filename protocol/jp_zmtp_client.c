/* jp_zmtp_client: one ZMTP 3.0 client connection, without libzmq (see
 * jp_zmtp_client.h).
 *
 * The input buffer holds [hold, head) the message last taken (its views
 * stay valid until the next call), [head, len) bytes not yet taken. The
 * pump reads the peer's greeting and commands off the front and finds
 * whether a whole message (or the end of one skipped) is there.
 *
 * Threads: none of its own; the owner's thread. */
#include "jp_zmtp_client.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "jp_time.h"
#include "jp_zmtp_filter.h"

#define GREETING JP_ZMTP_GREETING
#define FLAG_MORE JP_ZMTP_FLAG_MORE
#define FLAG_LONG JP_ZMTP_FLAG_LONG
#define FLAG_COMMAND JP_ZMTP_FLAG_COMMAND
#define FLAGS_RESERVED JP_ZMTP_FLAGS_RESERVED
#define COMMAND_MAX JP_ZMTP_COMMAND_MAX
#define READ_ROOM (64u << 10)           /* free space a read asks for at least */
#define SHRINK_OVER (1u << 20)          /* an emptied buffer bigger than this is freed */
#define RETRY_FIRST_MS 10
#define RETRY_MAX_MS 100
#define HANDSHAKE_MAX 512       /* greeting, READY (a routing id of 255 at most), subscription */
#define ROUTING_ID_MAX 255

typedef enum { WAITING, CONNECTING, OPEN } state_t;
typedef enum { FRONT_NONE, FRONT_MESSAGE, FRONT_SKIPPED } front_t;

struct jp_zmtp_client {
    jp_zmtp_type_t type;
    struct sockaddr_storage addr;
    socklen_t addr_len;
    char routing_id[ROUTING_ID_MAX + 1];
    int fd;
    state_t state;
    int64_t retry_at;
    int retry_ms;
    uint64_t fd_changes;
    /* what goes out: our greeting and READY (and a SUB's subscription)
       first, then whole messages */
    uint8_t hs[HANDSHAKE_MAX];
    size_t hs_len, hs_sent;
    jp_zmtp_buf_t out;          /* out.sent: bytes of it written */
    /* what came in */
    jp_zmtp_buf_t in;           /* (in.sent unused: hold and head say it) */
    size_t hold, head;
    bool greeted, ready, may_read;
    front_t front;
    size_t front_len;           /* the whole message at head, FRONT_MESSAGE */
    size_t need;                /* bytes the frame being read still needs */
    bool skipping, skip_more;   /* a message over the bounds, dropped as it comes */
    uint64_t skip_left, skip_bytes;
};

static void s_put_frame (jp_zmtp_buf_t *buf, uint8_t flags, const void *data, size_t size);

/* The byte at off of buf (NULL while it has no memory: no arithmetic on NULL). */
static uint8_t *
s_at (const jp_zmtp_buf_t *buf, size_t off)
{
    return buf->data ? buf->data + off : NULL;
}

static void
s_close (jp_zmtp_client_t *self)
{
    if (self->fd >= 0) {
        close (self->fd);
        self->fd = -1;
        self->fd_changes++;
    }
}

/* The connection ends; a new one is tried after the retry interval. What
 * waited to be written stays for the next connection unless part of it
 * went on this one (then all of it is dropped: the rest of a message
 * would break the next stream). With
 * keep_input, the whole messages read stay to be taken (a peer that
 * said its last and closed); else whatever was not taken is dropped. */
static void
s_drop (jp_zmtp_client_t *self, bool keep_input)
{
    s_close (self);
    self->state = WAITING;
    self->retry_at = jp_time_now_ms () + self->retry_ms;
    self->retry_ms = self->retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : self->retry_ms * 2;
    if (self->out.sent)
        self->out.len = self->out.sent = 0;
    self->hs_len = self->hs_sent = 0;
    self->may_read = false;
    if (!keep_input) {
        self->in.len = self->head;
        self->front = FRONT_NONE;
        self->skipping = false;
    }
}

/* Our greeting: ZMTP 3.0, NULL, as client. */
static void
s_greeting (jp_zmtp_client_t *self)
{
    uint8_t *p = self->hs;
    memset (p, 0, GREETING);
    p[0] = 0xFF;
    p[9] = 0x7F;
    p[10] = 3;
    memcpy (p + 12, "NULL", 4);
    self->hs_len = GREETING;
    self->hs_sent = 0;
}

/* Once the peer's greeting is in: READY with the socket type and routing
 * id, and a SUB's subscription to everything. (libzmq 4.3 fails the
 * handshake of a peer whose READY comes with its greeting, before its
 * own greeting went out.) */
static void
s_ready (jp_zmtp_client_t *self)
{
    static const char *types[] = {"DEALER", "SUB", "REQ"};
    uint8_t body[HANDSHAKE_MAX];
    size_t n = 0;
    body[n++] = 5;
    memcpy (body + n, "READY", 5);
    n += 5;
    const char *props[2][2] = {{"Socket-Type", types[self->type]},
                               {"Identity", self->routing_id}};
    for (int i = 0; i < 2; i++) {
        size_t name = strlen (props[i][0]), value = strlen (props[i][1]);
        if (i == 1 && (self->type == JP_ZMTP_SUB || value == 0))
            break;
        body[n++] = (uint8_t) name;
        memcpy (body + n, props[i][0], name);
        n += name;
        body[n++] = 0, body[n++] = 0, body[n++] = 0, body[n++] = (uint8_t) value;
        memcpy (body + n, props[i][1], value);
        n += value;
    }
    jp_zmtp_buf_t hs = {.data = self->hs, .len = self->hs_len, .cap = sizeof self->hs};
    s_put_frame (&hs, FLAG_COMMAND, body, n);
    uint8_t *p = self->hs + hs.len;
    if (self->type == JP_ZMTP_SUB) {
        /* ZMTP 3.0 subscribes with a message: 1, then the prefix ("") */
        *p++ = 0, *p++ = 1, *p++ = 1;
    }
    self->hs_len = (size_t) (p - self->hs);
}

/* Whether bytes wait that may go now: the handshake's, and the messages
 * once the peer is READY. */
static bool
s_writing (const jp_zmtp_client_t *self)
{
    return self->state == OPEN
           && (self->hs_sent < self->hs_len || (self->ready && self->out.sent < self->out.len));
}

/* Writes what waits: the handshake's rest, then the messages. */
static void
s_flush (jp_zmtp_client_t *self)
{
    while (s_writing (self)) {
        struct iovec iov[2] = {
            {self->hs + self->hs_sent, self->hs_len - self->hs_sent},
            {s_at (&self->out, self->out.sent),
             self->ready ? self->out.len - self->out.sent : 0}};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
        ssize_t n = sendmsg (self->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                s_drop (self, true);
            return;
        }
        size_t k = (size_t) n, h = self->hs_len - self->hs_sent;
        self->hs_sent += k < h ? k : h;
        self->out.sent += k < h ? 0 : k - h;
    }
    if (self->out.sent == self->out.len) {
        if (self->out.cap > SHRINK_OVER)
            jp_zmtp_buf_free (&self->out);
        self->out.len = self->out.sent = 0;
    }
}

/* Starts a connection: the input of the last one goes. */
static void
s_connect (jp_zmtp_client_t *self)
{
    if (self->in.cap > SHRINK_OVER)
        jp_zmtp_buf_free (&self->in);
    self->in.len = self->hold = self->head = 0;
    self->greeted = self->ready = self->skipping = false;
    self->front = FRONT_NONE;
    self->need = 0;
    s_greeting (self);
    int family = self->addr.ss_family;
    self->fd = socket (family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (self->fd < 0) {
        s_drop (self, false);
        return;
    }
    self->fd_changes++;
    if (family != AF_UNIX) {
        int one = 1;
        setsockopt (self->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    if (connect (self->fd, (const struct sockaddr *) &self->addr, self->addr_len) == 0) {
        self->state = OPEN;
        s_flush (self);
    } else if (errno == EINPROGRESS)
        self->state = CONNECTING;
    else
        s_drop (self, false);   /* not listening yet: again soon */
}

jp_zmtp_client_t *
jp_zmtp_client_new (jp_zmtp_type_t type, const char *routing_id,
                    const struct sockaddr_storage *addr, socklen_t addr_len)
{
    if ((routing_id && strlen (routing_id) > ROUTING_ID_MAX) || addr_len > sizeof *addr) {
        errno = EINVAL;
        return NULL;
    }
    jp_zmtp_client_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->type = type;
    self->addr = *addr;
    self->addr_len = addr_len;
    if (routing_id)
        strcpy (self->routing_id, routing_id);
    self->fd = -1;
    self->retry_ms = RETRY_FIRST_MS;
    s_connect (self);
    return self;
}

void
jp_zmtp_client_destroy (jp_zmtp_client_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    jp_zmtp_client_t *self = *self_p;
    s_close (self);
    jp_zmtp_buf_free (&self->in);
    jp_zmtp_buf_free (&self->out);
    free (self);
    *self_p = NULL;
}

int
jp_zmtp_client_fd (const jp_zmtp_client_t *self)
{
    return self->fd;
}

short
jp_zmtp_client_poll_events (const jp_zmtp_client_t *self)
{
    if (self->fd < 0)
        return 0;
    if (self->state == CONNECTING)
        return POLLOUT;
    return (short) (POLLIN | (s_writing (self) ? POLLOUT : 0));
}

bool
jp_zmtp_client_readable (const jp_zmtp_client_t *self)
{
    return self->front != FRONT_NONE;
}

bool
jp_zmtp_client_busy (const jp_zmtp_client_t *self)
{
    return self->front != FRONT_NONE || (jp_zmtp_client_poll_events (self) & POLLOUT);
}

int64_t
jp_zmtp_client_deadline (const jp_zmtp_client_t *self)
{
    return self->state == WAITING ? self->retry_at : -1;
}

void
jp_zmtp_client_tick (jp_zmtp_client_t *self, int64_t now)
{
    if (self->state != WAITING || now < self->retry_at)
        return;
    if (self->front != FRONT_NONE) {
        self->retry_at = now + self->retry_ms;  /* the last one's messages first */
        return;
    }
    s_connect (self);
}

void
jp_zmtp_client_reconnect (jp_zmtp_client_t *self)
{
    s_close (self);
    self->out.len = self->out.sent = 0;
    self->state = WAITING;
    s_connect (self);
}

uint64_t
jp_zmtp_client_fd_changes (const jp_zmtp_client_t *self)
{
    return self->fd_changes;
}

/* Appends one frame's flags, size and body to buf (room reserved). */
static void
s_put_frame (jp_zmtp_buf_t *buf, uint8_t flags, const void *data, size_t size)
{
    uint8_t *p = buf->data + buf->len;
    if (size > 255) {
        *p++ = flags | FLAG_LONG;
        for (int i = 7; i >= 0; i--)
            *p++ = (uint8_t) ((uint64_t) size >> (8 * i));
    } else {
        *p++ = flags;
        *p++ = (uint8_t) size;
    }
    if (size)
        memcpy (p, data, size);
    buf->len = (size_t) (p - buf->data) + size;
}

int
jp_zmtp_client_send (jp_zmtp_client_t *self, const jp_frame_t *frames, size_t n)
{
    if (self->out.len - self->out.sent > JP_ZMTP_SEND_MAX)
        return -EAGAIN;
    size_t total = 9;
    for (size_t i = 0; i < n; i++)
        total += 9 + frames[i].size;
    if (jp_zmtp_buf_reserve (&self->out, total) != 0)
        return -ENOMEM;
    if (self->type == JP_ZMTP_REQ)
        s_put_frame (&self->out, n ? FLAG_MORE : 0, NULL, 0);
    for (size_t i = 0; i < n; i++)
        s_put_frame (&self->out, i + 1 < n ? FLAG_MORE : 0, frames[i].data, frames[i].size);
    s_flush (self);
    return 0;
}

/* A frame's head at p (avail bytes): its flags, body size and head length;
 * 0 while incomplete, -1 when it breaks ZMTP. */
static int
s_frame_head (const uint8_t *p, size_t avail, uint8_t *flags, uint64_t *size, size_t *head)
{
    if (avail < 2)
        return 0;
    *flags = p[0];
    if (*flags & FLAGS_RESERVED)
        return -1;
    if (!(*flags & FLAG_LONG)) {
        *size = p[1];
        *head = 2;
        return 1;
    }
    if (avail < 9)
        return 0;
    *size = 0;
    for (int i = 1; i <= 8; i++)
        *size = (*size << 8) | p[i];
    *head = 9;
    return 1;
}

/* The peer's greeting: ZMTP 3 or later, NULL mechanism (as the relay's
 * filter reads one). */
static bool
s_greeting_ok (const uint8_t *g)
{
    for (size_t i = 0; i < GREETING; i++)
        if (jp_zmtp_greeting_byte (i, g[i]))
            return false;
    return true;
}

/* One command of the peer's (body of size bytes). Returns false when the
 * connection must end. */
static bool
s_command (jp_zmtp_client_t *self, const uint8_t *body, size_t size)
{
    size_t name = size ? body[0] : 0;
    if (size < 1 + name)
        return false;
    const char *what = (const char *) body + 1;
    if (name == 5 && memcmp (what, "READY", 5) == 0) {
        if (self->ready)
            return false;
        self->ready = true;
        self->retry_ms = RETRY_FIRST_MS;
        s_flush (self);     /* what was sent meanwhile */
    } else if (name == 5 && memcmp (what, "ERROR", 5) == 0)
        return false;
    else if (name == 4 && memcmp (what, "PING", 4) == 0 && size >= 7) {
        size_t context = size - 7 > 16 ? 16 : size - 7;
        uint8_t pong[5 + 16] = {4, 'P', 'O', 'N', 'G'};
        memcpy (pong + 5, body + 7, context);
        /* a peer that pings and reads nothing gets no more pongs */
        if (self->out.len - self->out.sent < COMMAND_MAX
            && jp_zmtp_buf_reserve (&self->out, 2 + 5 + context) == 0) {
            s_put_frame (&self->out, FLAG_COMMAND, pong, 5 + context);
            s_flush (self);
        }
    }
    return true;     /* anything else is not ours to act on */
}

/* Drops the body bytes of a skipped message as they come; at its last
 * frame's end, FRONT_SKIPPED. Returns false when the stream breaks ZMTP. */
static bool
s_skip (jp_zmtp_client_t *self)
{
    for (;;) {
        size_t avail = self->in.len - self->head;
        size_t k = self->skip_left < avail ? (size_t) self->skip_left : avail;
        self->head += k;
        self->skip_left -= k;
        if (self->skip_left) {
            self->need = (size_t) (self->skip_left < READ_ROOM ? self->skip_left : READ_ROOM);
            return true;
        }
        if (!self->skip_more) {
            self->skipping = false;
            self->front = FRONT_SKIPPED;
            return true;
        }
        uint8_t flags;
        uint64_t size;
        size_t head;
        int got = s_frame_head (s_at (&self->in, self->head), self->in.len - self->head, &flags,
                                &size, &head);
        if (got <= 0)
            return got == 0;
        if (flags & FLAG_COMMAND)
            return false;
        self->head += head;
        self->skip_left = size;
        self->skip_more = flags & FLAG_MORE;
        self->skip_bytes += size;
    }
}

/* Reads the front of the input: the greeting, commands, a skipped
 * message's bytes, and whether a whole message is there. Returns false
 * when the stream breaks ZMTP. */
static bool
s_pump_once (jp_zmtp_client_t *self, bool *again)
{
    *again = false;
    self->need = 0;
    const uint8_t *p = s_at (&self->in, self->head);
    size_t avail = self->in.len - self->head;
    if (!self->greeted) {
        if (avail < GREETING)
            return true;
        if (!s_greeting_ok (p))
            return false;
        self->head += GREETING;
        self->greeted = *again = true;
        s_ready (self);
        s_flush (self);
        return true;
    }
    if (self->skipping)
        return s_skip (self);
    size_t at = 0, parts = 0;
    uint64_t bytes = 0;
    for (;;) {
        uint8_t flags;
        uint64_t size;
        size_t head;
        int got = s_frame_head (p + at, avail - at, &flags, &size, &head);
        if (got <= 0)
            return got == 0;
        if (flags & FLAG_COMMAND) {
            if (parts || (flags & FLAG_MORE) || size > COMMAND_MAX)
                return false;
            if (avail - at - head < size) {
                self->need = (size_t) size - (avail - at - head);
                return true;
            }
            self->head += head + (size_t) size;
            *again = true;
            return s_command (self, p + head, (size_t) size);
        }
        if (!self->ready)
            return false;
        parts++;
        bytes += size;
        if (parts > JP_ZMTP_PARTS_MAX || bytes > JP_ZMTP_MESSAGE_MAX) {
            /* over the bounds: what is here goes, the rest as it comes */
            self->head += at + head;
            self->skipping = *again = true;
            self->skip_left = size;
            self->skip_more = flags & FLAG_MORE;
            self->skip_bytes = bytes;
            return true;
        }
        if (avail - at - head < size) {
            self->need = (size_t) size - (avail - at - head);
            return true;
        }
        at += head + (size_t) size;
        if (!(flags & FLAG_MORE)) {
            self->front = FRONT_MESSAGE;
            self->front_len = at;
            return true;
        }
    }
}

static void
s_pump (jp_zmtp_client_t *self)
{
    bool again = true;
    while (again && self->front == FRONT_NONE)
        if (!s_pump_once (self, &again)) {
            s_drop (self, false);
            return;
        }
}

/* One read into the input's free space (made room first). */
static void
s_read (jp_zmtp_client_t *self)
{
    if (self->fd < 0 || self->state != OPEN)
        return;
    size_t want = self->need > READ_ROOM ? self->need : READ_ROOM;
    if (self->in.cap - self->in.len < want && self->hold) {
        memmove (self->in.data, self->in.data + self->hold, self->in.len - self->hold);
        self->in.len -= self->hold;
        self->head -= self->hold;
        self->hold = 0;
    }
    if (jp_zmtp_buf_reserve (&self->in, want) != 0) {
        s_drop (self, false);
        return;
    }
    size_t room = self->in.cap - self->in.len;
    ssize_t n = read (self->fd, self->in.data + self->in.len, room);
    if (n > 0) {
        self->in.len += (size_t) n;
        self->may_read = (size_t) n == room;
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR))
        s_drop (self, true);    /* what it said before it went stays */
    else
        self->may_read = errno == EINTR;
}

void
jp_zmtp_client_service (jp_zmtp_client_t *self, short revents)
{
    if (self->fd < 0 || !revents)
        return;
    if (self->state == CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt (self->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
            err = errno;
        if (err) {
            s_drop (self, false);
            return;
        }
        self->state = OPEN;
    }
    if (revents & POLLOUT)
        s_flush (self);
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
        if (self->front == FRONT_NONE) {
            s_read (self);
            s_pump (self);
        } else
            self->may_read = true;  /* read once what waits is taken */
    }
}

void
jp_zmtp_client_read_now (jp_zmtp_client_t *self)
{
    if (self->state == OPEN)    /* a connect in progress has nothing to read */
        jp_zmtp_client_service (self, POLLIN);
}

/* Lets go of the message last taken; an emptied buffer starts over. */
static void
s_release (jp_zmtp_client_t *self)
{
    self->hold = self->head;
    if (self->head == self->in.len) {
        self->hold = self->head = self->in.len = 0;
        if (self->in.cap > SHRINK_OVER)
            jp_zmtp_buf_free (&self->in);
    }
}

int
jp_zmtp_client_recv (jp_zmtp_client_t *self, jp_part_t *parts, size_t *bytes)
{
    *bytes = 0;
    s_release (self);
    if (self->front == FRONT_NONE && self->may_read) {
        s_read (self);
        s_pump (self);
    }
    if (self->front == FRONT_SKIPPED) {
        *bytes = self->skip_bytes;
        self->front = FRONT_NONE;
        s_pump (self);
        return JP_ERR_TRUNCATED;
    }
    if (self->front != FRONT_MESSAGE)
        return -EAGAIN;
    const uint8_t *p = self->in.data + self->head;
    size_t at = 0, n = 0;
    while (at < self->front_len) {
        uint8_t flags;
        uint64_t size = 0;
        size_t head = 2;
        s_frame_head (p + at, self->front_len - at, &flags, &size, &head);  /* pumped whole */
        parts[n++] = (jp_part_t) {p + at + head, (size_t) size};
        *bytes += (size_t) size;
        at += head + (size_t) size;
    }
    if (self->type == JP_ZMTP_REQ && n && parts[0].size == 0) {
        memmove (parts, parts + 1, (n - 1) * sizeof *parts);
        n--;
    }
    self->head += self->front_len;
    self->front = FRONT_NONE;
    s_pump (self);      /* so jp_zmtp_client_readable knows of the next */
    return (int) n;
}

void *
jp_zmtp_client_detach (jp_zmtp_client_t *self)
{
    size_t rest = self->in.len - self->head;
    jp_zmtp_buf_t fresh = {0};
    if (jp_zmtp_buf_reserve (&fresh, rest) != 0)
        return NULL;
    if (rest)
        memcpy (fresh.data, self->in.data + self->head, rest);
    fresh.len = rest;
    void *old = self->in.data;
    self->in = fresh;
    self->hold = self->head = 0;
    return old;
}
