/* jp_connection: a kernel's connection info (the "connection file"): the
 * transport (tcp or ipc), the address, the five ports, the HMAC key and its
 * scheme. Makes new ones (free TCP ports or ipc socket paths, a 256-bit key
 * from getrandom), writes them as the JSON file a kernel reads, and names
 * each channel's ZeroMQ endpoint. Pure code, no threads. */
#ifndef JP_CONNECTION_H
#define JP_CONNECTION_H

#include <stddef.h>
#include <sys/socket.h>

#include <jansson.h>

#include "jp_random.h"

typedef enum {
    JP_CHANNEL_SHELL,
    JP_CHANNEL_IOPUB,
    JP_CHANNEL_STDIN,
    JP_CHANNEL_CONTROL,
    JP_CHANNEL_HB,
    JP_CHANNEL_COUNT
} jp_channel_t;

typedef enum { JP_TRANSPORT_TCP, JP_TRANSPORT_IPC } jp_transport_t;

#define JP_IPC_PATH_MAX 96      /* a Unix socket path must stay under 108 */

typedef struct {
    jp_transport_t transport;
    char ip[JP_IPC_PATH_MAX + 1];   /* tcp: an address; ipc: a path prefix */
    int ports[JP_CHANNEL_COUNT];
    char key[JP_KEY_HEX_LEN + 1];
} jp_connection_t;

/* Makes tcp connection info on ip (for example "127.0.0.1") with five
 * ports the OS says are free now, and a new key. Returns 0 or -errno. */
int jp_connection_init_tcp (jp_connection_t *self, const char *ip);

/* Makes ipc connection info: the kernel binds "ipc://PREFIX-N" for the
 * ports 1..5. Returns 0, -ENAMETOOLONG, or -errno. */
int jp_connection_init_ipc (jp_connection_t *self, const char *path_prefix);

/* Writes the channel's endpoint ("tcp://127.0.0.1:5555" or
 * "ipc:///run/k-1") into buf. Returns 0 or -ENAMETOOLONG. */
int jp_connection_endpoint (const jp_connection_t *self, jp_channel_t channel,
                            char *buf, size_t len);

/* Writes the channel's socket address into addr and its length into len:
 * a Unix socket path for ipc, an IPv4 or IPv6 address and port for tcp.
 * Returns 0, -ENAMETOOLONG (a path longer than sun_path), or -EINVAL (a
 * tcp ip that is not a numeric address). */
int jp_connection_address (const jp_connection_t *self, jp_channel_t channel,
                           struct sockaddr_storage *addr, socklen_t *len);

/* Returns the connection file's JSON object (new reference), with integer
 * ports, "signature_scheme": "hmac-sha256" and kernel_name; NULL on OOM. */
json_t *jp_connection_to_json (const jp_connection_t *self, const char *kernel_name);

/* Writes the connection file to path with mode 0600. Returns 0 or -errno. */
int jp_connection_write (const jp_connection_t *self, const char *kernel_name,
                         const char *path);

/* Reads a connection file written by jp_connection_write (or by anyone:
 * transport, ip, the five *_port and key). Returns 0, or -errno, or
 * -EINVAL when it is not such a file. */
int jp_connection_read (jp_connection_t *self, const char *path);

/* The channel's name as the protocol spells it ("shell", "iopub"...). */
const char *jp_channel_name (jp_channel_t channel);

#endif
