/* gw_bind: the address `codebox serve` listens on: --host as an IPv4 or
 * IPv6 literal (with or without brackets) or a name, the port checked
 * (0..65535), and whether the address is loopback (127.0.0.0/8, ::1 and
 * IPv4-mapped 127.x; "localhost" resolves to one of them). The listening
 * socket is made here, without SO_REUSEPORT, so a port already in use is a
 * clear error instead of a shared port.
 *
 * Threads: the main thread, at start. */
#ifndef GW_BIND_H
#define GW_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

typedef struct {
    struct sockaddr_storage addr;
    socklen_t len;
    char display[300];          /* host as URLs show it: "127.0.0.1", "[::1]", "localhost" */
} gw_bind_t;

/* Parses a port: 0..65535 in decimal. Returns it, or -1. */
int gw_bind_port (const char *text);

/* Resolves host (an IPv4 or IPv6 literal, [IPv6], or a name; a name gives
 * its first IPv4 address, else its first IPv6 one) with port into out.
 * Returns 0 or -1 with err set. */
int gw_bind_resolve (const char *host, int port, gw_bind_t *out, char *err, size_t err_len);

/* True for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104. */
bool gw_bind_is_loopback (const struct sockaddr *addr);

/* Makes a listening TCP socket on b (SO_REUSEADDR, never SO_REUSEPORT).
 * Returns the descriptor, or -errno with err naming the address. */
int gw_bind_listen (const gw_bind_t *b, char *err, size_t err_len);

#endif
