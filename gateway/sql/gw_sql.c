/* gw_sql: the worker threads of exec_sql and the connection of each
 * session; see gw_sql.h. The public functions run in the loop thread;
 * s_worker_main runs in GW_SQL_WORKERS threads; results travel back by
 * gw_server_call. One mutex guards the queue and the slots (a slot is a
 * session's connection); a slot is busy while a worker uses it, so one
 * session's queries run one at a time, in order, while other sessions'
 * run beside them; and one tenant's queries hold at most its share of the
 * workers (gw_config_share of GW_SQL_WORKERS), so another tenant's query
 * finds a worker while runaway ones of the first run to their timeout. Threads and a condition variable, not CZMQ actors:
 * a free worker takes the first job whose session is not busy, which one
 * shared queue expresses and a pipe's round robin does not.
 *
 * A query whose transport gave a gone probe is on the loop thread's list
 * of waits; gw_sql is a loop source that asks each probe every
 * GW_SQL_PROBE_MS while its query is queued or running (never after: a
 * query neither queued nor running has answered, or is about to, and its
 * probe's argument may be gone) and cancels the query of a client that
 * left. */
#include "gw_sql.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw_error.h"
#include "gw_sandbox.h"
#include "gw_server.h"
#include "gw_session.h"
#include "gw_sql_conn.h"
#include "gw_sql_value.h"
#include "jp_log.h"
#include "jp_time.h"

#define GW_SQL_WORKERS 4

typedef enum { S_RUN, S_CLOSE } s_kind_t;

typedef struct s_job {
    struct s_job *next;
    s_kind_t kind;
    uint64_t id;                /* for gw_sql_cancel; 0 for S_CLOSE */
    char *session_key;
    char *dsn;                  /* NULL: the server's */
    char *query;
    char *input_dir, *shown_input_dir;
    gw_sql_options_t opts;
    gw_sql_done_fn *done;
    void *arg;
    json_t *result;
} s_job_t;

typedef struct s_slot {
    struct s_slot *next;
    char *session_key;
    gw_sql_conn_t *conn;        /* the worker's while busy */
    gw_sql_conn_t *active;      /* conn while a query runs on it (for cancel) */
    uint64_t running_id;        /* the query a worker took, until its answer is posted */
    bool cancel;                /* gw_sql_cancel came before active was set */
    bool busy;
} s_slot_t;

/* A query whose client may leave (loop thread only). */
typedef struct s_wait {
    struct s_wait *next;
    uint64_t id;
    gw_sql_gone_fn *gone;
    void *arg;
} s_wait_t;

struct gw_sql {
    gw_server_t *server;
    char *server_dsn;           /* NULL when none could be found */
    char *server_dsn_shown;
    char missing[1100];         /* where the sample database was looked for */
    long max_inline_rows, exec_timeout_s;
    long tenant_workers;        /* workers one tenant's queries may hold at once */
    long long csv_max_bytes;    /* CODEBOX_DISK_QUOTA_MB */
    uint64_t next_id;
    s_wait_t *waits;            /* loop thread only */
    int64_t next_probe_ms;
    bool sourced;               /* its loop source is on the loop */
    bool allow_client_dsn;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    s_job_t *head, *tail;
    s_slot_t *slots;
    bool stopping;
    bool hooked;                /* its session hook is on the server */
    pthread_t threads[GW_SQL_WORKERS];
    int n_threads;
};

static void
s_job_free (s_job_t *job)
{
    if (!job)
        return;
    free (job->session_key);
    if (job->dsn) {
        explicit_bzero (job->dsn, strlen (job->dsn));
        free (job->dsn);
    }
    free (job->query);
    free (job->input_dir);
    free (job->shown_input_dir);
    json_decref (job->result);
    free (job);
}

/* Runs in the loop thread: hands the result over. */
static void
s_deliver (gw_server_t *server, void *arg)
{
    (void) server;
    s_job_t *job = arg;
    json_t *result = job->result;
    job->result = NULL;
    if (!result)
        result = gw_sql_error (gw_error_code (GW_E_INTERNAL), "Out of memory.");
    job->done (result, job->arg);
    s_job_free (job);
}

/* Any thread: posts the job's result to the loop thread. */
static void
s_post (gw_sql_t *self, s_job_t *job)
{
    for (int i = 0; i < 200; i++) {
        if (gw_server_call (self->server, s_deliver, job) == 0)
            return;
        nanosleep (&(struct timespec) {.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    s_job_free (job);           /* out of memory for 2 s: the answer is lost */
}

static s_slot_t *
s_slot_find (gw_sql_t *self, const char *key)
{
    for (s_slot_t *s = self->slots; s; s = s->next)
        if (strcmp (s->session_key, key) == 0)
            return s;
    return NULL;
}

static void
s_slot_remove (gw_sql_t *self, s_slot_t *slot)
{
    for (s_slot_t **p = &self->slots; *p; p = &(*p)->next)
        if (*p == slot) {
            *p = slot->next;
            break;
        }
    gw_sql_conn_destroy (&slot->conn);
    free (slot->session_key);
    free (slot);
}

/* The length of the tenant part of a session key ("tenant/session"; a key
 * without '/' is a tenant of its own). */
static size_t
s_tenant_len (const char *key)
{
    return strcspn (key, "/");
}

/* True when the tenant of key has its share of the workers busy (mutex
 * held). */
static bool
s_tenant_full (gw_sql_t *self, const char *key)
{
    size_t n = s_tenant_len (key);
    long busy = 0;
    for (s_slot_t *s = self->slots; s; s = s->next)
        busy += s->busy && s_tenant_len (s->session_key) == n
                && strncmp (s->session_key, key, n) == 0;
    return busy >= self->tenant_workers;
}

/* Takes job (after prev, or first) off the queue. Under the mutex. */
static void
s_unlink (gw_sql_t *self, s_job_t *prev, s_job_t *job)
{
    if (prev)
        prev->next = job->next;
    else
        self->head = job->next;
    if (self->tail == job)
        self->tail = prev;
    job->next = NULL;
}

/* Takes the first queued job whose session is not busy and whose tenant
 * has fewer than its share of the workers busy (a connection's close goes
 * whatever the share: it runs no query), mutex held. A tenant at its
 * share leaves its queries queued, in order, and the others' are served. */
static s_job_t *
s_take (gw_sql_t *self)
{
    s_job_t *prev = NULL;
    for (s_job_t *job = self->head; job; prev = job, job = job->next) {
        s_slot_t *slot = s_slot_find (self, job->session_key);
        if (slot && slot->busy)
            continue;
        if (job->kind == S_RUN && s_tenant_full (self, job->session_key))
            continue;
        s_unlink (self, prev, job);
        return job;
    }
    return NULL;
}

/* Runs one query on the slot's connection, opening or replacing it as
 * needed (no mutex held, except to publish the connection for cancel). */
static json_t *
s_run (gw_sql_t *self, s_slot_t *slot, s_job_t *job)
{
    const char *dsn = job->dsn ? job->dsn : self->server_dsn;
    if (!dsn)
        return gw_sql_error (gw_error_code (GW_E_INTERNAL), "No database is configured: "
                             "CODEBOX_SQL_DSN is not set and the sample database was not found "
                             "at %s (make builds it).", self->missing);
    if (slot->conn && (gw_sql_conn_broken (slot->conn)
                       || strcmp (gw_sql_conn_dsn (slot->conn), dsn) != 0))
        gw_sql_conn_destroy (&slot->conn);
    if (!slot->conn) {
        json_t *error = NULL;
        slot->conn = gw_sql_conn_open (dsn, &job->opts, &error);
        if (!slot->conn)
            return error;
    }
    pthread_mutex_lock (&self->mutex);
    bool cancelled = slot->cancel;
    slot->active = cancelled ? NULL : slot->conn;
    pthread_mutex_unlock (&self->mutex);
    if (cancelled)
        return gw_sql_error (gw_error_code (GW_E_BAD_REQUEST), "The query was cancelled.");
    json_t *result = gw_sql_conn_run (slot->conn, job->query, &job->opts);
    pthread_mutex_lock (&self->mutex);
    slot->active = NULL;
    pthread_mutex_unlock (&self->mutex);
    return result;
}

static void *
s_worker_main (void *arg)
{
    gw_sql_t *self = arg;
    pthread_mutex_lock (&self->mutex);
    for (;;) {
        s_job_t *job = s_take (self);
        if (!job) {
            if (self->stopping)
                break;
            pthread_cond_wait (&self->cond, &self->mutex);
            continue;
        }
        s_slot_t *slot = s_slot_find (self, job->session_key);
        if (!slot && job->kind == S_CLOSE) {
            s_job_free (job);
            continue;
        }
        if (!slot) {
            slot = calloc (1, sizeof *slot);
            if (slot && !(slot->session_key = strdup (job->session_key))) {
                free (slot);
                slot = NULL;
            }
            if (!slot) {
                job->result = gw_sql_error (gw_error_code (GW_E_INTERNAL), "Out of memory.");
                pthread_mutex_unlock (&self->mutex);
                s_post (self, job);
                pthread_mutex_lock (&self->mutex);
                continue;
            }
            slot->next = self->slots;
            self->slots = slot;
        }
        slot->busy = true;
        slot->running_id = job->id;
        slot->cancel = false;
        pthread_mutex_unlock (&self->mutex);

        if (job->kind == S_RUN)
            job->result = s_run (self, slot, job);
        else
            gw_sql_conn_destroy (&slot->conn);

        pthread_mutex_lock (&self->mutex);
        slot->busy = false;
        slot->running_id = 0;
        if (job->kind == S_CLOSE)
            s_slot_remove (self, slot);
        pthread_cond_broadcast (&self->cond);   /* the session's next job may go */
        if (job->kind == S_RUN) {
            pthread_mutex_unlock (&self->mutex);
            s_post (self, job);
            pthread_mutex_lock (&self->mutex);
        } else
            s_job_free (job);
    }
    pthread_mutex_unlock (&self->mutex);
    return NULL;
}

/* A session ended: its connections go (a session hook). */
static void
s_session_end (void *arg, gw_session_t *session)
{
    char key[140];
    snprintf (key, sizeof key, "%s/%s", gw_session_tenant (session), gw_session_id (session));
    gw_sql_close_session (arg, key);
}

static const gw_session_hooks_t s_hooks = {.session_end = s_session_end};

/* True while query id is queued or a worker has it (mutex held). */
static bool
s_live (gw_sql_t *self, uint64_t id)
{
    for (s_job_t *job = self->head; job; job = job->next)
        if (job->id == id)
            return true;
    for (s_slot_t *s = self->slots; s; s = s->next)
        if (s->running_id == id)
            return true;
    return false;
}

static int64_t
s_deadline (void *arg, int64_t now)
{
    (void) now;
    gw_sql_t *self = arg;
    return self->waits ? self->next_probe_ms : -1;
}

/* Asks each waiting query's probe; cancels the queries whose client left
 * and forgets those that answered. */
static void
s_tick (void *arg, int64_t now)
{
    gw_sql_t *self = arg;
    if (!self->waits || now < self->next_probe_ms)
        return;
    self->next_probe_ms = now + GW_SQL_PROBE_MS;
    s_wait_t **p = &self->waits;
    while (*p) {
        s_wait_t *w = *p;
        pthread_mutex_lock (&self->mutex);
        bool live = s_live (self, w->id);
        pthread_mutex_unlock (&self->mutex);
        bool gone = live && w->gone (w->arg);
        if (live && !gone) {
            p = &w->next;
            continue;
        }
        *p = w->next;
        if (gone) {
            jp_log_info ("sql event=cancelled reason=client-gone query=%llu",
                         (unsigned long long) w->id);
            gw_sql_cancel (self, w->id);
        }
        free (w);
    }
}

static const gw_loop_source_t s_source = {
    .deadline = s_deadline,
    .tick = s_tick,
};

gw_sql_t *
gw_sql_new (gw_server_t *server, const gw_config_t *config)
{
    gw_sql_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->server = server;
    self->max_inline_rows = gw_config_int (config, GW_SET_SQL_MAX_INLINE_ROWS);
    self->exec_timeout_s = gw_config_int (config, GW_SET_EXEC_TIMEOUT);
    self->tenant_workers = gw_config_share (config, GW_SQL_WORKERS);
    self->csv_max_bytes = (long long) gw_config_int (config, GW_SET_DISK_QUOTA_MB) << 20;
    self->allow_client_dsn = gw_config_bool (config, GW_SET_ALLOW_CLIENT_SQL_DSN);
    const char *dsn = gw_config_str (config, GW_SET_SQL_DSN);
    char found[1100];
    if (dsn && dsn[0])
        self->server_dsn = strdup (dsn);
    else if (gw_sql_default_dsn (found, sizeof found) == 0)
        self->server_dsn = strdup (found);
    else
        snprintf (self->missing, sizeof self->missing, "%s", found);
    self->server_dsn_shown = gw_sql_redact_dsn (self->server_dsn ? self->server_dsn : "");
    pthread_mutex_init (&self->mutex, NULL);
    pthread_cond_init (&self->cond, NULL);
    if (!self->server_dsn_shown || ((dsn && dsn[0]) && !self->server_dsn)) {
        gw_sql_destroy (&self);
        return NULL;
    }
    for (int i = 0; i < GW_SQL_WORKERS; i++) {
        if (pthread_create (&self->threads[i], NULL, s_worker_main, self) != 0)
            break;
        self->n_threads++;
    }
    if (self->n_threads == 0 || gw_server_add_hooks (server, &s_hooks, self) < 0) {
        gw_sql_destroy (&self);
        return NULL;
    }
    self->hooked = true;
    if (gw_loop_add_source (gw_server_loop (server), &s_source, self) < 0) {
        gw_sql_destroy (&self);
        return NULL;
    }
    self->sourced = true;
    return self;
}

/* Removes the queued run jobs of key (every key when NULL) and answers
 * each with an error (mutex held); cancels the running query too. */
static void
s_drop (gw_sql_t *self, const char *key, gw_error_t code, const char *message)
{
    s_job_t **p = &self->head, *prev = NULL, *dropped = NULL;
    while (*p) {
        s_job_t *job = *p;
        if (job->kind == S_RUN && (!key || strcmp (job->session_key, key) == 0)) {
            *p = job->next;
            if (self->tail == job)
                self->tail = prev;
            job->next = dropped;
            dropped = job;
        } else {
            prev = job;
            p = &job->next;
        }
    }
    for (s_slot_t *s = self->slots; s; s = s->next)
        if (s->active && (!key || strcmp (s->session_key, key) == 0))
            gw_sql_conn_cancel (s->active);
    while (dropped) {
        s_job_t *job = dropped;
        dropped = job->next;
        job->next = NULL;
        job->result = gw_sql_error (gw_error_code (code), "%s", message);
        s_post (self, job);
    }
}

void
gw_sql_destroy (gw_sql_t **self_p)
{
    gw_sql_t *self = *self_p;
    if (!self)
        return;
    if (self->hooked)
        gw_server_remove_hooks (self->server, &s_hooks, self);
    if (self->sourced)
        gw_loop_remove_source (gw_server_loop (self->server), &s_source, self);
    while (self->waits) {
        s_wait_t *w = self->waits;
        self->waits = w->next;
        free (w);
    }
    pthread_mutex_lock (&self->mutex);
    self->stopping = true;
    s_drop (self, NULL, GW_E_SHUTTING_DOWN, "The gateway is shutting down; the query was not run.");
    pthread_cond_broadcast (&self->cond);
    pthread_mutex_unlock (&self->mutex);
    for (int i = 0; i < self->n_threads; i++)
        pthread_join (self->threads[i], NULL);
    while (self->head) {                        /* close jobs nobody took */
        s_job_t *job = self->head;
        self->head = job->next;
        s_job_free (job);
    }
    while (self->slots)
        s_slot_remove (self, self->slots);
    pthread_cond_destroy (&self->cond);
    pthread_mutex_destroy (&self->mutex);
    if (self->server_dsn) {
        explicit_bzero (self->server_dsn, strlen (self->server_dsn));
        free (self->server_dsn);
    }
    free (self->server_dsn_shown);
    free (self);
    *self_p = NULL;
}

static long
s_clamp (long wish, long server)
{
    return wish > 0 && wish < server ? wish : server;
}

static void
s_enqueue (gw_sql_t *self, s_job_t *job)
{
    pthread_mutex_lock (&self->mutex);
    if (self->tail)
        self->tail->next = job;
    else
        self->head = job;
    self->tail = job;
    pthread_cond_broadcast (&self->cond);
    pthread_mutex_unlock (&self->mutex);
}

int
gw_sql_query (gw_sql_t *self, const gw_sql_request_t *req, gw_sql_done_fn *done, void *arg)
{
    s_job_t *job = calloc (1, sizeof *job);
    if (!job)
        return -ENOMEM;
    job->kind = S_RUN;
    job->id = ++self->next_id;
    job->done = done;
    job->arg = arg;
    job->session_key = strdup (req->session_key ? req->session_key : "");
    job->query = strdup (req->query ? req->query : "");
    job->dsn = req->dsn ? strdup (req->dsn) : NULL;
    job->input_dir = req->input_dir ? strdup (req->input_dir) : NULL;
    job->shown_input_dir = req->shown_input_dir ? strdup (req->shown_input_dir) : NULL;
    if (!job->session_key || !job->query || (req->dsn && !job->dsn)
        || (req->input_dir && !job->input_dir) || (req->shown_input_dir && !job->shown_input_dir)) {
        s_job_free (job);
        return -ENOMEM;
    }
    job->opts = gw_sql_options_default ();
    job->opts.max_inline_rows = s_clamp (req->max_inline_rows, self->max_inline_rows);
    job->opts.timeout_s = s_clamp (req->timeout_s, self->exec_timeout_s);
    job->opts.csv_dir = job->input_dir;
    job->opts.csv_shown_dir = job->shown_input_dir;
    job->opts.csv_uid = req->csv_uid;
    job->opts.csv_gid = req->csv_gid;
    job->opts.csv_max_bytes = self->csv_max_bytes;
    job->opts.client_dsn = req->dsn != NULL;
    if (req->dsn && !self->allow_client_dsn) {
        job->result = gw_sql_error (gw_error_code (GW_E_FORBIDDEN), "This server does not take "
                                    "a client's connection string (CODEBOX_ALLOW_CLIENT_SQL_DSN "
                                    "is 0); leave X-Codebox-Sql-Dsn out to use the server's "
                                    "database.");
        s_post (self, job);
        return 0;
    }
    s_wait_t *w = NULL;
    if (req->gone && !(w = calloc (1, sizeof *w))) {
        s_job_free (job);
        return -ENOMEM;
    }
    if (req->query_id)
        *req->query_id = job->id;
    if (w) {
        *w = (s_wait_t) {.next = self->waits, .id = job->id, .gone = req->gone,
                         .arg = req->gone_arg};
        if (!self->waits)
            self->next_probe_ms = jp_time_now_ms () + GW_SQL_PROBE_MS;
        self->waits = w;
    }
    s_enqueue (self, job);
    return 0;
}

void
gw_sql_cancel (gw_sql_t *self, uint64_t query_id)
{
    if (!self || !query_id)
        return;
    s_job_t *dropped = NULL;
    pthread_mutex_lock (&self->mutex);
    s_job_t *prev = NULL;
    for (s_job_t *job = self->head; job; prev = job, job = job->next)
        if (job->id == query_id) {
            s_unlink (self, prev, job);
            dropped = job;
            break;
        }
    for (s_slot_t *s = self->slots; !dropped && s; s = s->next)
        if (s->running_id == query_id) {
            s->cancel = true;
            if (s->active)
                gw_sql_conn_cancel (s->active);
        }
    pthread_mutex_unlock (&self->mutex);
    if (dropped) {
        dropped->result = gw_sql_error (gw_error_code (GW_E_BAD_REQUEST),
                                        "The query was cancelled before it ran.");
        s_post (self, dropped);
    }
}

void
gw_sql_close_session (gw_sql_t *self, const char *session_key)
{
    pthread_mutex_lock (&self->mutex);
    s_drop (self, session_key, GW_E_SESSION_NOT_FOUND, "The session ended before the query ran.");
    pthread_mutex_unlock (&self->mutex);
    s_job_t *job = calloc (1, sizeof *job);
    if (!job || !(job->session_key = strdup (session_key))) {
        free (job);
        return;                 /* out of memory: the connection stays until shutdown */
    }
    job->kind = S_CLOSE;
    s_enqueue (self, job);
}

const char *
gw_sql_server_dsn_shown (const gw_sql_t *self)
{
    return self->server_dsn_shown;
}

void
gw_sql_request_for (gw_sql_request_t *r, gw_server_t *server, gw_session_t *session, char *key,
           size_t key_len, const char *dsn, const char *query, long max_rows, long timeout)
{
    snprintf (key, key_len, "%s/%s", gw_session_tenant (session), gw_session_id (session));
    uid_t uid;
    gid_t gid;
    bool owned = gw_sandbox_owner (gw_server_sandbox (server), &uid, &gid);
    *r = (gw_sql_request_t) {
        .session_key = key,
        .dsn = dsn,
        .query = query,
        .max_inline_rows = max_rows,
        .timeout_s = timeout,
        .input_dir = gw_session_input_dir (session),
        .shown_input_dir = gw_session_visible_input (session),
        .csv_uid = owned ? (int) uid : -1,
        .csv_gid = owned ? (int) gid : -1,
    };
}
