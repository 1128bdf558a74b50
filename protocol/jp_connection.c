/* jp_connection: connection info and the connection file. No threads. */
#include "jp_connection.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Binds n TCP sockets to port 0 on ip at once (so the OS hands out n
 * distinct ports), records the ports, and closes them. Returns 0 or -errno. */
static int
s_free_ports (const char *ip, int *ports, int n)
{
    int fds[JP_CHANNEL_COUNT];
    int rc = 0, opened = 0;
    struct sockaddr_in addr = {.sin_family = AF_INET};
    if (inet_pton (AF_INET, ip, &addr.sin_addr) != 1)
        return -EINVAL;
    for (; opened < n; opened++) {
        fds[opened] = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fds[opened] < 0) {
            rc = -errno;
            break;
        }
        socklen_t len = sizeof addr;
        addr.sin_port = 0;
        if (bind (fds[opened], (struct sockaddr *) &addr, sizeof addr) < 0
            || getsockname (fds[opened], (struct sockaddr *) &addr, &len) < 0) {
            rc = -errno;
            opened++;
            break;
        }
        ports[opened] = ntohs (addr.sin_port);
    }
    for (int i = 0; i < opened; i++)
        close (fds[i]);
    return rc;
}

int
jp_connection_init_tcp (jp_connection_t *self, const char *ip)
{
    memset (self, 0, sizeof *self);
    self->transport = JP_TRANSPORT_TCP;
    if (strlen (ip) >= sizeof self->ip)
        return -ENAMETOOLONG;
    strcpy (self->ip, ip);
    int rc = s_free_ports (ip, self->ports, JP_CHANNEL_COUNT);
    return rc ? rc : jp_random_key (self->key);
}

int
jp_connection_init_ipc (jp_connection_t *self, const char *path_prefix)
{
    memset (self, 0, sizeof *self);
    self->transport = JP_TRANSPORT_IPC;
    if (strlen (path_prefix) + 2 > JP_IPC_PATH_MAX)
        return -ENAMETOOLONG;
    strcpy (self->ip, path_prefix);
    for (int i = 0; i < JP_CHANNEL_COUNT; i++)
        self->ports[i] = i + 1;
    return jp_random_key (self->key);
}

int
jp_connection_endpoint (const jp_connection_t *self, jp_channel_t channel,
                        char *buf, size_t len)
{
    int n;
    if (self->transport == JP_TRANSPORT_IPC)
        n = snprintf (buf, len, "ipc://%s-%d", self->ip, self->ports[channel]);
    else
        n = snprintf (buf, len, "tcp://%s:%d", self->ip, self->ports[channel]);
    return n < 0 || (size_t) n >= len ? -ENAMETOOLONG : 0;
}

int
jp_connection_address (const jp_connection_t *self, jp_channel_t channel,
                       struct sockaddr_storage *addr, socklen_t *len)
{
    memset (addr, 0, sizeof *addr);
    if (self->transport == JP_TRANSPORT_IPC) {
        struct sockaddr_un *un = (struct sockaddr_un *) addr;
        int n = snprintf (un->sun_path, sizeof un->sun_path, "%s-%d", self->ip,
                          self->ports[channel]);
        if (n < 0 || (size_t) n >= sizeof un->sun_path)
            return -ENAMETOOLONG;
        un->sun_family = AF_UNIX;
        *len = sizeof *un;
        return 0;
    }
    struct sockaddr_in *in = (struct sockaddr_in *) addr;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) addr;
    uint16_t port = htons ((uint16_t) self->ports[channel]);
    if (inet_pton (AF_INET, self->ip, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = port;
        *len = sizeof *in;
    } else if (inet_pton (AF_INET6, self->ip, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = port;
        *len = sizeof *in6;
    } else
        return -EINVAL;
    return 0;
}

json_t *
jp_connection_to_json (const jp_connection_t *self, const char *kernel_name)
{
    return json_pack ("{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:s}",
                      "transport", self->transport == JP_TRANSPORT_IPC ? "ipc" : "tcp",
                      "ip", self->ip,
                      "shell_port", self->ports[JP_CHANNEL_SHELL],
                      "iopub_port", self->ports[JP_CHANNEL_IOPUB],
                      "stdin_port", self->ports[JP_CHANNEL_STDIN],
                      "control_port", self->ports[JP_CHANNEL_CONTROL],
                      "hb_port", self->ports[JP_CHANNEL_HB],
                      "key", self->key, "signature_scheme", "hmac-sha256",
                      "kernel_name", kernel_name ? kernel_name : "");
}

int
jp_connection_read (jp_connection_t *self, const char *path)
{
    json_error_t jerr;
    errno = 0;
    json_t *j = json_load_file (path, 0, &jerr);
    if (!j)
        return errno ? -errno : -EINVAL;
    memset (self, 0, sizeof *self);
    static const char *ports[] = {"shell_port", "iopub_port", "stdin_port", "control_port",
                                  "hb_port"};
    const char *transport = json_string_value (json_object_get (j, "transport"));
    const char *ip = json_string_value (json_object_get (j, "ip"));
    const char *key = json_string_value (json_object_get (j, "key"));
    int rc = ip && key && strlen (ip) < sizeof self->ip && strlen (key) < sizeof self->key
             ? 0 : -EINVAL;
    if (!rc) {
        self->transport = transport && strcmp (transport, "ipc") == 0 ? JP_TRANSPORT_IPC
                                                                      : JP_TRANSPORT_TCP;
        snprintf (self->ip, sizeof self->ip, "%s", ip);
        snprintf (self->key, sizeof self->key, "%s", key);
    }
    for (int ch = 0; ch < JP_CHANNEL_COUNT && !rc; ch++) {
        json_int_t port = json_integer_value (json_object_get (j, ports[ch]));
        if (port <= 0 || port > 65535)
            rc = -EINVAL;
        self->ports[ch] = (int) port;
    }
    json_decref (j);
    return rc;
}

int
jp_connection_write (const jp_connection_t *self, const char *kernel_name,
                     const char *path)
{
    json_t *json = jp_connection_to_json (self, kernel_name);
    char *text = json ? json_dumps (json, JSON_INDENT (2)) : NULL;
    json_decref (json);
    if (!text)
        return -ENOMEM;
    int rc = 0;
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || fchmod (fd, 0600) < 0)     /* an old file keeps its mode */
        rc = -errno;
    if (fd >= 0 && !rc) {
        size_t len = strlen (text), done = 0;
        while (done < len) {
            ssize_t w = write (fd, text + done, len - done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = -errno;
                break;
            }
            done += (size_t) w;
        }
    }
    if (fd >= 0 && close (fd) < 0 && !rc)
        rc = -errno;
    free (text);
    return rc;
}

const char *
jp_channel_name (jp_channel_t channel)
{
    static const char *names[] = {"shell", "iopub", "stdin", "control", "hb"};
    return channel < JP_CHANNEL_COUNT ? names[channel] : "?";
}
