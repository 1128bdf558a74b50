/* gw_signed_url: signing, checking and serving the gateway's own
 * time-limited artifact links. See gw_signed_url.h.
 *
 * Threads: the pure functions anywhere; annotate and handle in the loop
 * thread. The random per-process key is made once (pthread_once). */
#include "gw_signed_url.h"
#include "gw_id.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "gw_artifacts.h"
#include "gw_fs.h"
#include "gw_server.h"
#include "gw_path.h"
#include "gw_session.h"
#include "gw_sessions.h"
#include "gw_url.h"
#include "jp_random.h"
#include "jp_sign.h"

#define S_DOMAIN "codebox-signed-url-v1"

static uint8_t s_random_key[32];
static bool s_random_key_ok;
static pthread_once_t s_key_once = PTHREAD_ONCE_INIT;

static void
s_make_random_key (void)
{
    s_random_key_ok = jp_random_bytes (s_random_key, sizeof s_random_key) == 0;
}

void
gw_signed_url_key (const gw_config_t *config, const uint8_t **key, size_t *key_len)
{
    const char *secret = config ? gw_config_str (config, GW_SET_URL_SECRET) : "";
    if (secret && *secret) {
        *key = (const uint8_t *) secret;
        *key_len = strlen (secret);
        return;
    }
    pthread_once (&s_key_once, s_make_random_key);
    *key = s_random_key;
    *key_len = s_random_key_ok ? sizeof s_random_key : 0;
}

/* The signed message (a new string), or NULL. */
static char *
s_message (const char *tenant, const char *session, const char *path, long long expires)
{
    char *msg = NULL;
    if (asprintf (&msg, S_DOMAIN "\n%s\n%s\n%s\n%lld", tenant, session, path, expires) < 0)
        return NULL;
    return msg;
}

int
gw_signed_url_sign (const uint8_t *key, size_t key_len, const char *tenant, const char *session,
                    const char *path, long long expires, char sig[GW_SIGNED_URL_SIG_LEN + 1])
{
    sig[0] = '\0';
    if (!key_len)
        return -EIO;    /* never sign with no key: jp_sign would give "" */
    char *msg = s_message (tenant, session, path, expires);
    if (!msg)
        return -EIO;
    jp_part_t parts[4] = {{msg, strlen (msg)}, {"", 0}, {"", 0}, {"", 0}};
    int rc = jp_sign (key, key_len, parts, sig);
    free (msg);
    return rc;
}

int
gw_signed_url_check (const uint8_t *key, size_t key_len, const char *tenant, const char *session,
                     const char *path, long long expires, const char *sig, time_t now)
{
    if (!key_len)
        return -EIO;
    char *msg = s_message (tenant, session, path, expires);
    if (!msg)
        return -EIO;
    jp_part_t parts[4] = {{msg, strlen (msg)}, {"", 0}, {"", 0}, {"", 0}};
    int rc = jp_sign_verify (key, key_len, parts, sig, strlen (sig));
    free (msg);
    if (rc)
        return rc;
    return (long long) now > expires ? -ETIME : 0;
}

char *
gw_signed_url_make (const char *base, const uint8_t *key, size_t key_len, const char *tenant,
                    const char *session, const char *path, long long expires)
{
    char sig[GW_SIGNED_URL_SIG_LEN + 1];
    if (gw_signed_url_sign (key, key_len, tenant, session, path, expires, sig))
        return NULL;
    size_t base_len = strlen (base);
    while (base_len && base[base_len - 1] == '/')
        base_len--;
    char *head = NULL;
    int n = asprintf (&head, "%.*s" GW_SIGNED_URL_PREFIX "%s/%s/%lld/%s/", (int) base_len, base,
                      tenant, session, expires, sig);
    if (n < 0)
        return NULL;
    char *encoded = gw_url_encode (path, true);
    char *url = NULL;
    if (encoded && asprintf (&url, "%s%s", head, encoded) < 0)
        url = NULL;
    free (encoded);
    free (head);
    return url;
}

/* Copies the next '/'-ended component of *p into out (out_len bytes);
 * false when there is none or it does not fit. */
static bool
s_take (const char **p, char *out, size_t out_len)
{
    const char *slash = strchr (*p, '/');
    if (!slash || slash == *p || (size_t) (slash - *p) >= out_len)
        return false;
    memcpy (out, *p, (size_t) (slash - *p));
    out[slash - *p] = '\0';
    *p = slash + 1;
    return true;
}

static bool
s_valid_name (const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')
              || *s == '_' || *s == '.' || *s == '-'))
            return false;
    return true;
}

int
gw_signed_url_parse (const char *req_path, char tenant[GW_ID_SIZE], char session[GW_ID_SIZE],
                     long long *expires, char sig[GW_SIGNED_URL_SIG_LEN + 1], const char **path)
{
    size_t prefix = strlen (GW_SIGNED_URL_PREFIX);
    if (!req_path || strncmp (req_path, GW_SIGNED_URL_PREFIX, prefix) != 0)
        return -EINVAL;
    const char *p = req_path + prefix;
    char number[24];
    if (!s_take (&p, tenant, 65) || !s_valid_name (tenant) || !s_take (&p, session, 65)
        || !gw_path_valid_session_id (session) || !s_take (&p, number, sizeof number)
        || !s_take (&p, sig, GW_SIGNED_URL_SIG_LEN + 1))
        return -EINVAL;
    if (strspn (number, "0123456789") != strlen (number) || strlen (number) > 18
        || strlen (sig) != GW_SIGNED_URL_SIG_LEN
        || strspn (sig, "0123456789abcdef") != GW_SIGNED_URL_SIG_LEN)
        return -EINVAL;
    size_t len = strlen (p);
    if (!len || p[len - 1] == '/' || gw_path_check_relative (p, NULL, 0))
        return -EINVAL;
    *expires = strtoll (number, NULL, 10);
    *path = p;
    return 0;
}

void
gw_signed_url_annotate (json_t *artifacts, const gw_session_t *session)
{
    const gw_config_t *config = gw_server_config (gw_session_server (session));
    const char *base = gw_config_str (config, GW_SET_PUBLIC_URL);
    if (!json_is_array (artifacts) || !base || !*base)
        return;
    const uint8_t *key;
    size_t key_len;
    gw_signed_url_key (config, &key, &key_len);
    long long expires = (long long) time (NULL)
                        + (long long) gw_config_int (config, GW_SET_BLOB_SAS_EXPIRY_HOURS) * 3600;
    size_t prefix = strlen (gw_session_visible_workdir (session));
    size_t i;
    json_t *item;
    json_array_foreach (artifacts, i, item) {
        const char *path = json_string_value (json_object_get (item, "path"));
        if (!path || strncmp (path, gw_session_visible_workdir (session), prefix) != 0 || path[prefix] != '/')
            continue;
        char *url = gw_signed_url_make (base, key, key_len, gw_session_tenant (session), gw_session_id (session),
                                        path + prefix + 1, expires);
        if (url)
            json_object_set_new (item, "url", json_string (url));
        free (url);
    }
}

static void
s_annotate (void *arg, const gw_session_t *session, json_t *artifacts)
{
    (void) arg;
    gw_signed_url_annotate (artifacts, session);
}

static const gw_session_hooks_t s_hooks = {.annotate = s_annotate};

void
gw_signed_url_attach (gw_server_t *server)
{
    gw_server_add_hooks (server, &s_hooks, NULL);
}

void
gw_signed_url_handle (gw_server_t *server, gw_request_t *req)
{
    req->route = "/signed/{tenant}/{session}/{expires}/{sig}/{path}";
    char tenant[GW_ID_SIZE], session_id[GW_ID_SIZE], sig[GW_SIGNED_URL_SIG_LEN + 1];
    long long expires;
    const char *path;
    const uint8_t *key;
    size_t key_len;
    gw_signed_url_key (gw_server_config (server), &key, &key_len);
    if (strcmp (req->method, "GET") != 0) {
        gw_request_set_header (req, "Allow", "GET");
        gw_request_reply_error (req, GW_E_METHOD_NOT_ALLOWED, "signed links are read-only");
        return;
    }
    int rc = gw_signed_url_parse (req->path, tenant, session_id, &expires, sig, &path);
    if (!rc)
        rc = gw_signed_url_check (key, key_len, tenant, session_id, path, expires, sig,
                                  time (NULL));
    if (rc == -ETIME) {
        gw_request_reply_error (req, GW_E_FORBIDDEN, "this link has expired; list the "
                                "session's artifacts again for a fresh one");
        return;
    }
    if (rc) {
        gw_request_reply_error (req, GW_E_FORBIDDEN, "this link is not valid (altered, "
                                "malformed, or made before the gateway restarted)");
        return;
    }
    gw_session_t *session = gw_sessions_find (server, tenant, session_id);
    if (session)
        gw_request_name_session (req, session_id);
    int dirfd = session ? open (gw_session_workdir (session), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    int fd = dirfd < 0 ? -ENOENT : gw_path_open_beneath (dirfd, path, O_RDONLY | O_CLOEXEC, 0);
    if (dirfd >= 0)
        close (dirfd);
    struct stat st;
    if (fd >= 0 && (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))) {
        close (fd);
        fd = -ENOENT;
    }
    if (fd < 0) {
        gw_request_reply_error (req, GW_E_NOT_FOUND, "the file is no longer there (the session "
                                "may have ended)");
        return;
    }
    /* streamed from the descriptor: a file of any size costs no memory */
    gw_request_reply_file (req, 200, fd, (uint64_t) st.st_size, gw_mime_for_path (path));
}
