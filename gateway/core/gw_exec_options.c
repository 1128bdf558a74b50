/* gw_exec_options: parsing and checking execution_options; see the
 * header. Any thread. */
#include "gw_exec_options.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static int
s_fail (gw_error_t *e, gw_error_t code, char *err, size_t err_len, const char *text)
{
    *e = code;
    snprintf (err, err_len, "%s", text);
    return -1;
}

/* A decimal number with an optional fraction, then the rest in *end. */
static bool
s_number (const char *text, double *value, const char **end)
{
    const char *p = text;
    if (!isdigit ((unsigned char) *p) && !(*p == '.' && isdigit ((unsigned char) p[1])))
        return false;
    char *stop;
    errno = 0;
    *value = strtod (p, &stop);
    if (errno || stop == p || !isfinite (*value))
        return false;
    *end = stop;
    return true;
}

long
gw_exec_parse_memory (const char *text)
{
    double v;
    const char *unit;
    if (!text || !s_number (text, &v, &unit))
        return -1;
    double scale = 1;
    switch (tolower ((unsigned char) *unit)) {
    case '\0': break;
    case 'b': scale = 1; unit++; break;
    case 'k': scale = 1024.0; unit++; break;
    case 'm': scale = 1024.0 * 1024; unit++; break;
    case 'g': scale = 1024.0 * 1024 * 1024; unit++; break;
    case 't': scale = 1024.0 * 1024 * 1024 * 1024; unit++; break;
    default: return -1;
    }
    if (scale > 1 && (*unit == 'i' || *unit == 'I'))
        unit++;
    if (scale > 1 && (*unit == 'b' || *unit == 'B'))
        unit++;
    if (*unit)
        return -1;
    double mb = ceil (v * scale / (1024.0 * 1024));
    return mb >= 1 && mb <= (double) LONG_MAX / 2 ? (long) mb : -1;
}

long
gw_exec_parse_cpu (const char *text)
{
    double v;
    const char *end;
    if (!text || !s_number (text, &v, &end) || *end)
        return -1;
    double milli = ceil (v * 1000);
    return milli >= 1 && milli <= 1e9 ? (long) milli : -1;
}

/* A limit given as a number or a string. */
static const char *
s_text_of (json_t *value, char *buf, size_t len)
{
    if (json_is_string (value))
        return json_string_value (value);
    if (json_is_integer (value))
        snprintf (buf, len, "%lld", (long long) json_integer_value (value));
    else if (json_is_real (value))
        snprintf (buf, len, "%.6f", json_real_value (value));
    else
        return NULL;
    return buf;
}

/* True for a name the kernel's environment may take from a client. */
static bool
s_env_name_ok (const char *name, const char **why)
{
    size_t len = strlen (name);
    *why = "names are letters, digits and _, not starting with a digit";
    if (len == 0 || len > 128 || isdigit ((unsigned char) name[0]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum ((unsigned char) name[i]) && name[i] != '_')
            return false;
    static const char *const reserved[] = {"PATH", "HOME", "PYTHONPATH", "NODE_PATH",
                                           "PYTHONHOME", "PYTHONSTARTUP", "TMPDIR", NULL};
    *why = "it is set by codebox";
    for (int i = 0; reserved[i]; i++)
        if (strcmp (name, reserved[i]) == 0)
            return false;
    if (strncmp (name, "LD_", 3) == 0 || strncmp (name, "CODEBOX_", 8) == 0
        || strncmp (name, "JPY_", 4) == 0)
        return false;
    return true;
}

static int
s_parse_env (json_t *vars, gw_exec_options_t *out, gw_error_t *e, char *err, size_t err_len)
{
    if (!vars || json_is_null (vars))
        return 0;
    if (!json_is_object (vars) || json_object_size (vars) > GW_EXEC_MAX_ENV)
        return s_fail (e, GW_E_BAD_REQUEST, err, err_len, "environment_variables must be an "
                       "object of at most 64 NAME: \"value\" pairs");
    const char *name;
    json_t *value;
    int n = 0;
    json_object_foreach (vars, name, value) {
        const char *why;
        const char *text = json_string_value (value);
        if (!s_env_name_ok (name, &why)) {
            *e = GW_E_BAD_REQUEST;
            snprintf (err, err_len, "environment variable '%.128s' is not allowed: %s", name,
                      why);
            return -1;
        }
        if (!text || strlen (text) != json_string_length (value)
            || strlen (text) > GW_EXEC_ENV_BYTES) {
            *e = GW_E_BAD_REQUEST;
            snprintf (err, err_len, "environment variable %s must be a string of at most %d "
                      "bytes without NUL", name, GW_EXEC_ENV_BYTES);
            return -1;
        }
        if (asprintf (&out->env[n], "%s=%s", name, text) < 0) {
            out->env[n] = NULL;
            return s_fail (e, GW_E_INTERNAL, err, err_len, "out of memory");
        }
        out->env[++n] = NULL;
    }
    return 0;
}

/* Where a mount may not go: the system, the session, the sandbox's own. */
static bool
s_container_ok (const char *path)
{
    if (path[0] != '/' || strlen (path) >= sizeof ((gw_mount_t *) 0)->container
        || strcmp (path, "/") == 0)
        return false;
    for (const char *p = path; *p; p++) {
        if ((unsigned char) *p < 0x20 || *p == 0x7f || *p == '\\')
            return false;
        if (p[0] == '/' && (p[1] == '/' || p[1] == '\0'))
            return false;
        if (p[0] == '/' && p[1] == '.' && (p[2] == '/' || p[2] == '\0'
                                          || (p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
            return false;
    }
    static const char *const system[] = {"/proc", "/sys", "/dev", "/etc", "/usr", "/bin",
                                         "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
                                         "/session", "/tmp", "/run", "/var", "/boot", "/root",
                                         NULL};
    for (int i = 0; system[i]; i++) {
        size_t n = strlen (system[i]);
        if (strncmp (path, system[i], n) == 0 && (path[n] == '/' || path[n] == '\0'))
            return false;
    }
    return true;
}

/* Whether host (a real path) lies in one of roots ("A:B=rw:C"): 0 no,
 * 1 read-only, 2 read-write allowed. */
static int
s_root_of (const char *roots, const char *host)
{
    int best = 0;
    const char *p = roots ? roots : "";
    while (*p) {
        size_t len = strcspn (p, ":");
        char entry[1100];
        if (len > 0 && len < sizeof entry) {
            memcpy (entry, p, len);
            entry[len] = '\0';
            bool rw = len > 3 && strcmp (entry + len - 3, "=rw") == 0;
            if (rw)
                entry[len - 3] = '\0';
            char real[PATH_MAX];
            if (entry[0] == '/' && realpath (entry, real)) {
                size_t n = strlen (real);
                bool inside = strcmp (real, "/") == 0
                              || (strncmp (host, real, n) == 0
                                  && (host[n] == '/' || host[n] == '\0'));
                if (inside && (rw ? 2 : 1) > best)
                    best = rw ? 2 : 1;
            }
        }
        p += len;
        if (*p == ':')
            p++;
    }
    return best;
}

/* Whether path is dir or lies below it (both real paths). */
static bool
s_within (const char *path, const char *dir)
{
    size_t n = strlen (dir);
    return strcmp (dir, "/") == 0
           || (strncmp (path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0'));
}

/* codebox's own folders and mount (host real, container checked): refused
 * when the mount lies in one; each that lies in the mount is named in
 * mount->hide, to be covered inside the sandbox. */
static int
s_own_dirs (const gw_exec_rules_t *rules, gw_mount_t *mount, gw_error_t *e, char *err,
            size_t err_len)
{
    int hidden = 0;
    for (int k = 0; k < GW_EXEC_OWN_DIRS; k++) {
        char own[PATH_MAX];
        if (!rules->own_dirs[k] || !rules->own_dirs[k][0] || !realpath (rules->own_dirs[k], own))
            continue;
        if (s_within (mount->host, own)) {
            *e = GW_E_FORBIDDEN;
            snprintf (err, err_len, "host_path '%.300s' is inside codebox's own folders "
                      "(sessions' files, kernels' connection files); mount a folder outside "
                      "them", mount->host);
            return -1;
        }
        if (!s_within (own, mount->host))
            continue;
        const char *below = strcmp (mount->host, "/") == 0 ? own : own + strlen (mount->host);
        int n = snprintf (mount->hide[hidden], sizeof mount->hide[hidden], "%s%s",
                          mount->container, below);
        if (n < 0 || (size_t) n >= sizeof mount->hide[hidden]) {
            *e = GW_E_FORBIDDEN;
            snprintf (err, err_len, "host_path '%.300s' holds codebox's own folders too deep "
                      "to hide; mount a folder that does not hold %.300s", mount->host, own);
            return -1;
        }
        hidden++;
    }
    return 0;
}

static int
s_parse_mounts (json_t *mounts, const gw_exec_rules_t *rules, gw_exec_options_t *out,
                gw_error_t *e, char *err, size_t err_len)
{
    if (!mounts || json_is_null (mounts) || (json_is_array (mounts) && !json_array_size (mounts)))
        return 0;
    if (!json_is_array (mounts) || json_array_size (mounts) > GW_EXEC_MAX_MOUNTS)
        return s_fail (e, GW_E_BAD_REQUEST, err, err_len, "mount_points must be a list of at "
                       "most 4 {\"host_path\", \"container_path\", \"read_only\"?}");
    if (!rules->mount_roots || !*rules->mount_roots) {
        /* says what to set, with the folder asked for (codebox-ai's example
           asks for the temp folder) */
        const char *first = json_string_value (json_object_get (json_array_get (mounts, 0),
                                                                "host_path"));
        *e = GW_E_FORBIDDEN;
        snprintf (err, err_len, "mount_points are not allowed on this server: "
                  "CODEBOX_MOUNT_ROOTS names no folder; start codebox with "
                  "CODEBOX_MOUNT_ROOTS=%.300s to let sessions mount that folder (read-only)",
                  first && first[0] == '/' ? first : "/path/to/folder");
        return -1;
    }
    if (!rules->sandbox)
        return s_fail (e, GW_E_FORBIDDEN, err, err_len, "mount_points need the sandbox "
                       "(CODEBOX_SANDBOX=bwrap); kernels here run without one");
    size_t i;
    json_t *m;
    json_array_foreach (mounts, i, m) {
        const char *host = json_string_value (json_object_get (m, "host_path"));
        const char *container = json_string_value (json_object_get (m, "container_path"));
        json_t *ro = json_object_get (m, "read_only");
        if (!host || !container || (ro && !json_is_boolean (ro)))
            return s_fail (e, GW_E_BAD_REQUEST, err, err_len, "each mount point needs "
                           "host_path and container_path (strings) and read_only? (true or "
                           "false)");
        gw_mount_t *mount = &out->mounts[i];
        char real[PATH_MAX];
        struct stat st;
        if (!realpath (host, real) || stat (real, &st) < 0 || !S_ISDIR (st.st_mode)
            || strlen (real) >= sizeof mount->host) {
            *e = GW_E_BAD_REQUEST;
            snprintf (err, err_len, "host_path '%.300s' is not a folder on this host", host);
            return -1;
        }
        int allowed = s_root_of (rules->mount_roots, real);
        bool want_rw = ro && json_is_false (ro);
        if (!allowed || (want_rw && allowed < 2)) {
            *e = GW_E_FORBIDDEN;
            snprintf (err, err_len, "host_path '%.300s' is not inside a folder of "
                      "CODEBOX_MOUNT_ROOTS%s", host,
                      allowed ? " that allows read-write mounts (ROOT=rw)" : "");
            return -1;
        }
        if (!s_container_ok (container)) {
            *e = GW_E_BAD_REQUEST;
            snprintf (err, err_len, "container_path '%.200s' must be an absolute, normalised "
                      "path outside the system folders, /session and /tmp (such as "
                      "/data/in)", container);
            return -1;
        }
        snprintf (mount->host, sizeof mount->host, "%s", real);
        snprintf (mount->container, sizeof mount->container, "%s", container);
        mount->read_write = want_rw;
        if (s_own_dirs (rules, mount, e, err, err_len) < 0)
            return -1;
        out->n_mounts = (int) i + 1;
    }
    return 0;
}

int
gw_exec_options_parse (json_t *options, const gw_exec_rules_t *rules, gw_exec_options_t *out,
                       gw_error_t *e, char *err, size_t err_len)
{
    memset (out, 0, sizeof *out);
    *e = GW_E_OK;
    if (!options || json_is_null (options))
        return 0;
    if (!json_is_object (options))
        return s_fail (e, GW_E_BAD_REQUEST, err, err_len, "execution_options must be an "
                       "object");
    json_t *timeout = json_object_get (options, "timeout");
    if (timeout && !json_is_null (timeout)) {
        if (!json_is_integer (timeout) || json_integer_value (timeout) <= 0
            || json_integer_value (timeout) > INT_MAX)
            return s_fail (e, GW_E_BAD_REQUEST, err, err_len, "execution_options.timeout must "
                           "be a positive whole number of seconds");
        out->timeout_s = (long) json_integer_value (timeout);
    }
    char buf[64];
    json_t *memory = json_object_get (options, "memory_limit");
    if (memory && !json_is_null (memory)) {
        const char *text = s_text_of (memory, buf, sizeof buf);
        long mb = json_is_integer (memory) && json_integer_value (memory) > 0
                      ? (long) ((json_integer_value (memory) + (1 << 20) - 1) >> 20)
                      : gw_exec_parse_memory (text);
        if (mb <= 0)
            return s_fail (e, GW_E_BAD_REQUEST, err, err_len, "execution_options.memory_limit "
                           "must be a size such as \"2G\", \"512m\" or a number of bytes");
        out->memory_mb = mb < rules->max_memory_mb ? mb : rules->max_memory_mb;
    }
    json_t *cpu = json_object_get (options, "cpu_limit");
    if (cpu && !json_is_null (cpu)) {
        long milli = gw_exec_parse_cpu (s_text_of (cpu, buf, sizeof buf));
        if (milli <= 0)
            return s_fail (e, GW_E_BAD_REQUEST, err, err_len, "execution_options.cpu_limit "
                           "must be a number of cores such as \"1\" or 0.5");
        out->cpu_milli = milli < rules->max_cpu_milli ? milli : rules->max_cpu_milli;
    }
    if (s_parse_env (json_object_get (options, "environment_variables"), out, e, err, err_len))
        return -1;
    return s_parse_mounts (json_object_get (options, "mount_points"), rules, out, e, err,
                           err_len);
}

bool
gw_exec_options_custom (const gw_exec_options_t *self)
{
    return self && (self->memory_mb || self->cpu_milli || self->env[0] || self->n_mounts
                    || self->n_volumes);
}

int
gw_exec_options_copy (gw_exec_options_t *dst, const gw_exec_options_t *src)
{
    *dst = *src;
    memset (dst->env, 0, sizeof dst->env);
    for (int i = 0; src->env[i]; i++)
        if (!(dst->env[i] = strdup (src->env[i]))) {
            gw_exec_options_clear (dst);
            return -ENOMEM;
        }
    return 0;
}

void
gw_exec_options_clear (gw_exec_options_t *self)
{
    for (int i = 0; i < GW_EXEC_MAX_ENV && self->env[i]; i++)
        free (self->env[i]);
    memset (self, 0, sizeof *self);
}

json_t *
gw_exec_options_json (const gw_exec_options_t *self)
{
    json_t *json = json_object ();
    if (!json || !self)
        return json;
    char buf[64];
    if (self->timeout_s)
        json_object_set_new (json, "timeout", json_integer (self->timeout_s));
    if (self->memory_mb) {
        snprintf (buf, sizeof buf, "%ldm", self->memory_mb);
        json_object_set_new (json, "memory_limit", json_string (buf));
    }
    if (self->cpu_milli) {
        snprintf (buf, sizeof buf, "%ld.%03ld", self->cpu_milli / 1000, self->cpu_milli % 1000);
        json_object_set_new (json, "cpu_limit", json_string (buf));
    }
    json_t *env = json_object ();
    for (int i = 0; env && i < GW_EXEC_MAX_ENV && self->env[i]; i++) {
        const char *eq = strchr (self->env[i], '=');
        char name[256];
        if (eq && (size_t) (eq - self->env[i]) < sizeof name) {
            snprintf (name, sizeof name, "%.*s", (int) (eq - self->env[i]), self->env[i]);
            json_object_set_new (env, name, json_string (eq + 1));
        }
    }
    if (json_object_size (env))
        json_object_set (json, "environment_variables", env);
    json_decref (env);
    json_t *mounts = json_array ();
    for (int i = 0; mounts && i < self->n_mounts; i++)
        json_array_append_new (mounts, json_pack ("{s:s, s:s, s:b}", "host_path",
                                                  self->mounts[i].host, "container_path",
                                                  self->mounts[i].container, "read_only",
                                                  !self->mounts[i].read_write));
    if (json_array_size (mounts))
        json_object_set (json, "mount_points", mounts);
    json_decref (mounts);
    json_t *volumes = json_array ();
    for (int i = 0; volumes && i < self->n_volumes; i++)
        json_array_append_new (volumes, json_pack ("{s:s, s:b}", "name", self->volumes[i].name,
                                                   "read_only", !self->volumes[i].read_write));
    if (json_array_size (volumes))
        json_object_set (json, "volumes", volumes);
    json_decref (volumes);
    return json;
}
