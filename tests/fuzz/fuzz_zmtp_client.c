/* fuzz_zmtp_client: the gateway's own ZMTP client (jp_zmtp_client) with a
 * hostile kernel at the other end of a real Unix socket. Input: a byte
 * that picks the chunk sizes, a byte of flags (bit 0: a valid greeting
 * and READY go first, so mutations reach the frames; bits 1-2: DEALER,
 * SUB or REQ), then the kernel's byte stream, written a chunk at a time,
 * each followed by what the gateway's loop does (serve the socket, take
 * every whole message); then the kernel hangs up. Properties: never
 * crashes or leaks; every message taken has at most JP_ZMTP_PARTS_MAX
 * frames and JP_ZMTP_MESSAGE_MAX bytes, its views readable (ASan reads
 * every byte) and their sizes adding up to what recv says. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "jp_zmtp_client.h"

static int s_listener = -1;
static struct sockaddr_storage s_addr;
static socklen_t s_len;

/* One listening socket for the whole run, in a folder of its own. */
static void
s_listen_once (void)
{
    if (s_listener >= 0)
        return;
    static char dir[] = "/tmp/codebox-fuzz-zmtp-XXXXXX";
    if (!mkdtemp (dir))
        abort ();
    struct sockaddr_un *un = (struct sockaddr_un *) &s_addr;
    un->sun_family = AF_UNIX;
    snprintf (un->sun_path, sizeof un->sun_path, "%s/k", dir);
    s_len = sizeof *un;
    s_listener = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s_listener < 0 || bind (s_listener, (struct sockaddr *) &s_addr, s_len) < 0
        || listen (s_listener, 16) < 0)
        abort ();
}

/* What the loop does: serve the socket, then take every whole message. */
static void
s_turn (jp_zmtp_client_t *c, short revents)
{
    jp_zmtp_client_service (c, revents);
    jp_part_t parts[JP_ZMTP_PARTS_MAX];
    size_t bytes;
    int n;
    while ((n = jp_zmtp_client_recv (c, parts, &bytes)) != -EAGAIN) {
        if (n == JP_ERR_TRUNCATED)
            continue;
        if (n < 0 || n > JP_ZMTP_PARTS_MAX || bytes > JP_ZMTP_MESSAGE_MAX)
            abort ();
        size_t sum = 0;
        unsigned check = 0;
        for (int i = 0; i < n; i++) {
            sum += parts[i].size;
            for (size_t k = 0; k < parts[i].size; k++)
                check += ((const uint8_t *) parts[i].data)[k];
        }
        if (sum != bytes || check == 0xFFFFFFFFu)
            abort ();
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    s_listen_once ();
    unsigned step = data[0];
    uint8_t flags = data[1];
    data += 2;
    size -= 2;
    static const jp_zmtp_type_t types[] = {JP_ZMTP_DEALER, JP_ZMTP_SUB, JP_ZMTP_REQ,
                                           JP_ZMTP_DEALER};
    jp_zmtp_client_t *c = jp_zmtp_client_new (types[(flags >> 1) & 3], "fuzz", &s_addr, s_len);
    if (!c)
        abort ();
    int peer = accept (s_listener, NULL, NULL);
    if (peer < 0)
        abort ();
    if (flags & 1) {
        static const uint8_t ready[] = {4, 25, 5, 'R', 'E', 'A', 'D', 'Y', 11, 'S', 'o', 'c', 'k',
                                        'e', 't', '-', 'T', 'y', 'p', 'e', 0, 0, 0, 6, 'R', 'O',
                                        'U', 'T', 'E', 'R'};
        uint8_t greeting[64] = {0xFF, 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 3, 1, 'N', 'U', 'L', 'L'};
        if (send (peer, greeting, sizeof greeting, MSG_NOSIGNAL) != sizeof greeting
            || send (peer, ready, sizeof ready, MSG_NOSIGNAL) != sizeof ready)
            abort ();
        s_turn (c, POLLIN);
    }
    for (size_t at = 0, k = 0; at < size; k++) {
        size_t take = step ? 1 + (step * (k + 1)) % 97 : size;
        if (take > size - at)
            take = size - at;
        if (send (peer, data + at, take, MSG_NOSIGNAL) != (ssize_t) take)
            break;      /* the client hung up: the rest goes nowhere */
        at += take;
        s_turn (c, POLLIN | POLLOUT);
    }
    close (peer);
    s_turn (c, POLLIN | POLLHUP);
    s_turn (c, POLLIN | POLLHUP);
    jp_zmtp_client_destroy (&c);
    return 0;
}
