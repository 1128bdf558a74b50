/* gw_registry: the sessions and nodes many nodes share in Redis (see the
 * header).
 * Threads: s_main runs on the directory's own thread; the rest on the loop
 * thread; the two share the queue and the view under mu. A thread and a
 * mutex, not a CZMQ actor: when Redis is away the queue drops its oldest
 * write (a pipe at its high-water mark refuses the newest), and the loop
 * reads the view the thread writes, which a pipe would have to copy. */
#include "gw_registry.h"
#include "gw_id.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "jp_log.h"
#include "jp_time.h"

#define S_OPS_MAX 10000                 /* queued writes; past it, the oldest go */
#define S_SESSION_TTL_S 3600            /* a session key outlives its node this long */
#define S_NODE_TTL_S 10                 /* a node is gone this long after its last beat */
#define S_BEAT_MS 3000                  /* the node key, and each session key once a minute */
#define S_SCAN_MS 2000                  /* the view */
#define S_REFRESH_SESSIONS_MS 60000

typedef struct s_op {
    char *key;
    char *value;                        /* NULL: delete */
    struct s_op *next;
} s_op_t;

struct gw_registry {
    char node[GW_ID_SIZE];
    char host[256];
    int port, db;
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu */
    bool stop, draining;
    s_op_t *ops, **ops_tail;
    size_t n_ops;
    json_t *view;                       /* "tenant\nid" -> entry, with "lost" */
    /* the thread's own */
    redisContext *redis;
    json_t *mine;                       /* key -> value of this node's sessions */
};

static void
s_key (char *out, size_t len, const char *tenant, const char *id)
{
    snprintf (out, len, "codebox:s:%s:%s", tenant, id);
}

static void
s_push (gw_registry_t *self, const char *key, char *value)
{
    s_op_t *op = calloc (1, sizeof *op);
    char *k = strdup (key);
    if (!op || !k) {
        free (op);
        free (k);
        free (value);
        return;
    }
    op->key = k;
    op->value = value;
    pthread_mutex_lock (&self->mu);
    if (self->n_ops >= S_OPS_MAX && self->ops) {
        s_op_t *old = self->ops;        /* Redis is away: keep the newest */
        self->ops = old->next;
        if (!self->ops)
            self->ops_tail = &self->ops;
        free (old->key);
        free (old->value);
        free (old);
        self->n_ops--;
    }
    *self->ops_tail = op;
    self->ops_tail = &op->next;
    self->n_ops++;
    pthread_cond_signal (&self->cv);
    pthread_mutex_unlock (&self->mu);
}

/* ---- the directory's thread ---- */

static redisReply *
s_command (gw_registry_t *self, const char *fmt, ...)
{
    if (!self->redis)
        return NULL;
    va_list ap;
    va_start (ap, fmt);
    redisReply *r = redisvCommand (self->redis, fmt, ap);
    va_end (ap);
    if (!r) {
        jp_log_warn ("directory event=redis-error why=%s", self->redis->errstr);
        redisFree (self->redis);
        self->redis = NULL;
    }
    return r;
}

static void
s_connect (gw_registry_t *self)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout (self->host, self->port, tv);
    if (!c || c->err) {
        if (c)
            redisFree (c);
        return;
    }
    redisSetTimeout (c, tv);
    self->redis = c;
    freeReplyObject (s_command (self, "SELECT %d", self->db));
    if (!self->redis)
        return;
    jp_log_info ("directory event=connected redis=%s:%d/%d node=%s", self->host, self->port,
                 self->db, self->node);
    /* a reconnect: say again what this node holds */
    const char *key;
    json_t *v;
    json_object_foreach (self->mine, key, v)
        freeReplyObject (s_command (self, "SET %s %s EX %d", key, json_string_value (v),
                                    S_SESSION_TTL_S));
}

static void
s_apply (gw_registry_t *self, s_op_t *op)
{
    if (op->value) {
        json_object_set_new (self->mine, op->key, json_string (op->value));
        freeReplyObject (s_command (self, "SET %s %s EX %d", op->key, op->value,
                                    S_SESSION_TTL_S));
    } else {
        json_object_del (self->mine, op->key);
        freeReplyObject (s_command (self, "DEL %s", op->key));
    }
}

static void
s_beat (gw_registry_t *self, bool sessions, bool draining)
{
    char *node = NULL;
    json_t *v = json_pack ("{s:s, s:b, s:I}", "node", self->node, "draining", draining,
                           "sessions", (json_int_t) json_object_size (self->mine));
    node = v ? json_dumps (v, JSON_COMPACT) : NULL;
    json_decref (v);
    if (node)
        freeReplyObject (s_command (self, "SET codebox:n:%s %s EX %d", self->node, node,
                                    S_NODE_TTL_S));
    free (node);
    if (!sessions)
        return;
    const char *key;
    json_t *val;
    json_object_foreach (self->mine, key, val)
        freeReplyObject (s_command (self, "EXPIRE %s %d", key, S_SESSION_TTL_S));
}

/* Every key matching pattern, with its value, into out (key -> value). */
static void
s_scan (gw_registry_t *self, const char *pattern, json_t *out)
{
    char cursor[32] = "0";
    do {
        redisReply *r = s_command (self, "SCAN %s MATCH %s COUNT 1000", cursor, pattern);
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
            freeReplyObject (r);
            return;
        }
        snprintf (cursor, sizeof cursor, "%s", r->element[0]->str ? r->element[0]->str : "0");
        redisReply *keys = r->element[1];
        for (size_t i = 0; i < keys->elements && self->redis; i++)
            redisAppendCommand (self->redis, "GET %s", keys->element[i]->str);
        for (size_t i = 0; i < keys->elements && self->redis; i++) {
            redisReply *v = NULL;
            if (redisGetReply (self->redis, (void **) &v) != REDIS_OK) {
                redisFree (self->redis);
                self->redis = NULL;
                break;
            }
            json_t *doc = v && v->type == REDIS_REPLY_STRING ? json_loads (v->str, 0, NULL)
                                                            : NULL;
            if (doc)
                json_object_set_new (out, keys->element[i]->str, doc);
            freeReplyObject (v);
        }
        freeReplyObject (r);
    } while (self->redis && strcmp (cursor, "0") != 0);
}

/* Reads the directory into a new view and publishes it. */
static void
s_refresh_view (gw_registry_t *self)
{
    json_t *sessions = json_object (), *nodes = json_object (), *view = json_object ();
    s_scan (self, "codebox:s:*", sessions);
    s_scan (self, "codebox:n:*", nodes);
    if (!self->redis) {
        json_decref (sessions);
        json_decref (nodes);
        json_decref (view);
        return;
    }
    const char *key;
    json_t *e;
    json_object_foreach (sessions, key, e) {
        const char *tenant = json_string_value (json_object_get (e, "tenant"));
        const char *id = json_string_value (json_object_get (e, "session_id"));
        const char *node = json_string_value (json_object_get (e, "node"));
        if (!tenant || !id || !node)
            continue;
        char nkey[100];
        snprintf (nkey, sizeof nkey, "codebox:n:%s", node);
        json_object_set_new (e, "lost", json_boolean (!json_object_get (nodes, nkey)));
        char vkey[200];
        snprintf (vkey, sizeof vkey, "%s\n%s", tenant, id);
        json_object_set (view, vkey, e);
    }
    json_decref (sessions);
    json_decref (nodes);
    pthread_mutex_lock (&self->mu);
    json_decref (self->view);
    self->view = view;
    pthread_mutex_unlock (&self->mu);
}

static void *
s_main (void *arg)
{
    gw_registry_t *self = arg;
    int64_t next_beat = 0, next_scan = 0, next_sessions = 0, next_connect = 0;
    for (;;) {
        pthread_mutex_lock (&self->mu);
        int64_t now = jp_time_now_ms ();
        int64_t due = next_beat < next_scan ? next_beat : next_scan;
        if (!self->stop && !self->ops && due > now) {
            struct timespec ts;
            clock_gettime (CLOCK_REALTIME, &ts);
            int64_t wait = due - now;
            ts.tv_sec += wait / 1000;
            ts.tv_nsec += (wait % 1000) * 1000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait (&self->cv, &self->mu, &ts);
        }
        bool stop = self->stop, draining = self->draining;
        s_op_t *ops = self->ops;
        self->ops = NULL;
        self->ops_tail = &self->ops;
        self->n_ops = 0;
        pthread_mutex_unlock (&self->mu);
        now = jp_time_now_ms ();
        if (!self->redis && now >= next_connect) {
            s_connect (self);
            next_connect = now + 1000;
        }
        while (ops) {
            s_op_t *op = ops;
            ops = op->next;
            if (op->value || !stop)
                s_apply (self, op);
            else
                json_object_del (self->mine, op->key);
            free (op->key);
            free (op->value);
            free (op);
        }
        if (stop)
            break;
        if (now >= next_beat) {
            s_beat (self, now >= next_sessions, draining);
            if (now >= next_sessions)
                next_sessions = now + S_REFRESH_SESSIONS_MS;
            next_beat = now + S_BEAT_MS;
        }
        if (now >= next_scan) {
            s_refresh_view (self);
            next_scan = now + S_SCAN_MS;
        }
    }
    /* a clean stop: this node and its sessions leave the directory */
    const char *key;
    json_t *v;
    json_object_foreach (self->mine, key, v)
        freeReplyObject (s_command (self, "DEL %s", key));
    freeReplyObject (s_command (self, "DEL codebox:n:%s", self->node));
    return NULL;
}

/* ---- the loop thread ---- */

gw_registry_t *
gw_registry_new (const char *url, const char *node, char *err, size_t err_len)
{
    char host[256] = "";
    int port = 6379, db = 0;
    const char *p = strncmp (url, "redis://", 8) == 0 ? url + 8 : NULL;
    size_t hl = p ? strcspn (p, ":/") : 0;
    if (!p || hl == 0 || hl >= sizeof host) {
        snprintf (err, err_len, "CODEBOX_DIRECTORY_URL must be redis://HOST[:PORT][/DB]");
        return NULL;
    }
    memcpy (host, p, hl);
    p += hl;
    char *end;
    if (*p == ':') {
        port = (int) strtol (p + 1, &end, 10);
        p = end;
    }
    if (*p == '/' && p[1]) {
        db = (int) strtol (p + 1, &end, 10);
        p = end;
    } else if (*p == '/')
        p++;
    if (*p || port <= 0 || port > 65535 || db < 0) {
        snprintf (err, err_len, "CODEBOX_DIRECTORY_URL must be redis://HOST[:PORT][/DB]");
        return NULL;
    }
    gw_registry_t *self = calloc (1, sizeof *self);
    if (!self) {
        snprintf (err, err_len, "out of memory");
        return NULL;
    }
    snprintf (self->node, sizeof self->node, "%s", node);
    snprintf (self->host, sizeof self->host, "%s", host);
    self->port = port;
    self->db = db;
    self->ops_tail = &self->ops;
    self->view = json_object ();
    self->mine = json_object ();
    pthread_mutex_init (&self->mu, NULL);
    pthread_cond_init (&self->cv, NULL);
    if (pthread_create (&self->thread, NULL, s_main, self) != 0) {
        snprintf (err, err_len, "cannot start the directory thread");
        gw_registry_destroy (&self);
        return NULL;
    }
    self->started = true;
    return self;
}

void
gw_registry_destroy (gw_registry_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_registry_t *self = *self_p;
    if (self->started) {
        pthread_mutex_lock (&self->mu);
        self->stop = true;
        pthread_cond_signal (&self->cv);
        pthread_mutex_unlock (&self->mu);
        pthread_join (self->thread, NULL);
    }
    while (self->ops) {
        s_op_t *op = self->ops;
        self->ops = op->next;
        free (op->key);
        free (op->value);
        free (op);
    }
    if (self->redis)
        redisFree (self->redis);
    json_decref (self->view);
    json_decref (self->mine);
    pthread_mutex_destroy (&self->mu);
    pthread_cond_destroy (&self->cv);
    free (self);
    *self_p = NULL;
}

const char *
gw_registry_node (const gw_registry_t *self)
{
    return self->node;
}

void
gw_registry_put (gw_registry_t *self, const char *tenant, const char *id, const char *kernel,
                 bool paused)
{
    char key[200];
    s_key (key, sizeof key, tenant, id);
    time_t now = time (NULL);
    json_t *v = json_pack ("{s:s, s:s, s:s, s:s, s:I, s:s}", "tenant", tenant, "session_id",
                           id, "kernel", kernel, "node", self->node, "created",
                           (json_int_t) now, "status", paused ? "paused" : "live");
    char *text = v ? json_dumps (v, JSON_COMPACT) : NULL;
    json_decref (v);
    if (text)
        s_push (self, key, text);
}

void
gw_registry_drop (gw_registry_t *self, const char *tenant, const char *id)
{
    char key[200];
    s_key (key, sizeof key, tenant, id);
    s_push (self, key, NULL);
}

void
gw_registry_set_draining (gw_registry_t *self, bool draining)
{
    pthread_mutex_lock (&self->mu);
    self->draining = draining;
    pthread_mutex_unlock (&self->mu);
}

gw_dir_where_t
gw_registry_where (gw_registry_t *self, const char *tenant, const char *id, char *node,
                    size_t node_len)
{
    char vkey[200];
    snprintf (vkey, sizeof vkey, "%s\n%s", tenant, id);
    gw_dir_where_t where = GW_DIR_UNKNOWN;
    pthread_mutex_lock (&self->mu);
    json_t *e = json_object_get (self->view, vkey);
    const char *owner = json_string_value (json_object_get (e, "node"));
    if (owner && strcmp (owner, self->node) != 0) {
        snprintf (node, node_len, "%s", owner);
        where = json_is_true (json_object_get (e, "lost")) ? GW_DIR_LOST : GW_DIR_ELSEWHERE;
    }
    pthread_mutex_unlock (&self->mu);
    return where;
}

json_t *
gw_registry_sessions (gw_registry_t *self, const char *tenant)
{
    json_t *out = json_array ();
    pthread_mutex_lock (&self->mu);
    const char *key;
    json_t *e;
    json_object_foreach (self->view, key, e) {
        const char *t = json_string_value (json_object_get (e, "tenant"));
        const char *node = json_string_value (json_object_get (e, "node"));
        if (t && node && strcmp (t, tenant) == 0 && strcmp (node, self->node) != 0) {
            /* a copy: the view's values are the directory thread's */
            json_t *copy = json_deep_copy (e);
            json_object_del (copy, "tenant");
            json_array_append_new (out, copy);
        }
    }
    pthread_mutex_unlock (&self->mu);
    return out;
}
