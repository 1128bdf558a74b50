/* gw_metrics: counters and their Prometheus text rendering (see
 * gw_metrics.h). Any thread (a mutex guards the counters). */
#include "gw_metrics.h"
#include "gw_id.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HTTP_SERIES 512
#define MAX_TENANT_SERIES 128      /* one tenant's share of them */

static const double s_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
                                   10, 30, 60, 300};
#define N_BUCKETS (sizeof s_buckets / sizeof s_buckets[0])

typedef struct {
    char tenant[GW_ID_SIZE];            /* "" when no token was checked */
    const char *method;         /* one of s_methods */
    char route[64];
    int code;
    unsigned long count;
} s_http_series_t;

/* The method labels: any other method counts as "other". */
static const char *const s_methods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH",
                                        "OPTIONS", "other"};
#define N_METHODS (sizeof s_methods / sizeof s_methods[0])

struct gw_metrics {
    pthread_mutex_t lock;
    long sessions_live;
    unsigned long executions[GW_EXEC_CANCELLED + 1];
    unsigned long bucket_counts[N_BUCKETS];
    unsigned long exec_count;
    double exec_sum;
    unsigned long kernel_starts, kernel_restarts, kernel_deaths;
    s_http_series_t http[MAX_HTTP_SERIES];
    size_t n_http;
    unsigned long http_dropped;     /* requests of series that did not fit */
};

gw_metrics_t *
gw_metrics_new (void)
{
    gw_metrics_t *self = calloc (1, sizeof *self);
    if (self)
        pthread_mutex_init (&self->lock, NULL);
    return self;
}

void
gw_metrics_destroy (gw_metrics_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    pthread_mutex_destroy (&(*self_p)->lock);
    free (*self_p);
    *self_p = NULL;
}

void
gw_metrics_sessions_live (gw_metrics_t *self, long live)
{
    pthread_mutex_lock (&self->lock);
    self->sessions_live = live;
    pthread_mutex_unlock (&self->lock);
}

void
gw_metrics_execution (gw_metrics_t *self, gw_exec_status_t status, int64_t duration_ms)
{
    double seconds = (double) duration_ms / 1000.0;
    pthread_mutex_lock (&self->lock);
    if (status <= GW_EXEC_CANCELLED)
        self->executions[status]++;
    for (size_t i = 0; i < N_BUCKETS; i++)
        if (seconds <= s_buckets[i])
            self->bucket_counts[i]++;
    self->exec_count++;
    self->exec_sum += seconds;
    pthread_mutex_unlock (&self->lock);
}

#define S_COUNTER(fn, field) \
    void fn (gw_metrics_t *self) \
    { \
        pthread_mutex_lock (&self->lock); \
        self->field++; \
        pthread_mutex_unlock (&self->lock); \
    }
S_COUNTER (gw_metrics_kernel_start, kernel_starts)
S_COUNTER (gw_metrics_kernel_restart, kernel_restarts)
S_COUNTER (gw_metrics_kernel_death, kernel_deaths)

/* The label of method: itself when it is an HTTP method we serve, else
 * "other" (a client may send any token there). */
static const char *
s_method_label (const char *method)
{
    for (size_t i = 0; i + 1 < N_METHODS; i++)
        if (method && strcmp (method, s_methods[i]) == 0)
            return s_methods[i];
    return s_methods[N_METHODS - 1];
}

void
gw_metrics_http (gw_metrics_t *self, const char *tenant, const char *method,
                 const char *route, int code)
{
    const char *m = s_method_label (method);
    if (!tenant)
        tenant = "";
    if (!route)
        route = "unmatched";
    pthread_mutex_lock (&self->lock);
    s_http_series_t *found = NULL;
    size_t of_tenant = 0;
    for (size_t i = 0; i < self->n_http && !found; i++) {
        s_http_series_t *e = &self->http[i];
        if (strcmp (e->tenant, tenant) != 0)
            continue;
        of_tenant++;
        if (e->code == code && e->method == m && strcmp (e->route, route) == 0)
            found = e;
    }
    /* a tenant that fills its share cannot push another's series out */
    if (!found && self->n_http < MAX_HTTP_SERIES && of_tenant < MAX_TENANT_SERIES) {
        found = &self->http[self->n_http++];
        snprintf (found->tenant, sizeof found->tenant, "%s", tenant);
        snprintf (found->route, sizeof found->route, "%s", route);
        found->method = m;
        found->code = code;
    }
    if (found)
        found->count++;
    else
        self->http_dropped++;
    pthread_mutex_unlock (&self->lock);
}

void
gw_metrics_write_label (FILE *out, const char *value)
{
    for (const char *p = value ? value : ""; *p; p++) {
        if (*p == '\\')
            fputs ("\\\\", out);
        else if (*p == '"')
            fputs ("\\\"", out);
        else if (*p == '\n')
            fputs ("\\n", out);
        else
            fputc (*p, out);
    }
}

/* Writes name{key="value",...} with n label pairs (keys trusted, values
 * escaped), then a space; no braces when n is 0. */
static void
s_series (FILE *out, const char *name, size_t n, const char *const *pairs)
{
    fputs (name, out);
    for (size_t i = 0; i < n; i++) {
        fprintf (out, "%s%s=\"", i ? "," : "{", pairs[2 * i]);
        gw_metrics_write_label (out, pairs[2 * i + 1]);
        fputc ('"', out);
    }
    fputs (n ? "} " : " ", out);
}

char *
gw_metrics_render (gw_metrics_t *self, const char *tenant)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream (&text, &len);
    if (!out)
        return NULL;
    pthread_mutex_lock (&self->lock);
    fprintf (out, "# HELP codebox_sessions_live Sessions alive now.\n"
                  "# TYPE codebox_sessions_live gauge\n"
                  "codebox_sessions_live %ld\n", self->sessions_live);
    fprintf (out, "# HELP codebox_executions_total Executions ended, by status.\n"
                  "# TYPE codebox_executions_total counter\n");
    for (int s = GW_EXEC_COMPLETED; s <= GW_EXEC_CANCELLED; s++) {
        const char *pairs[] = {"status", gw_exec_status_name ((gw_exec_status_t) s)};
        s_series (out, "codebox_executions_total", 1, pairs);
        fprintf (out, "%lu\n", self->executions[s]);
    }
    fprintf (out, "# HELP codebox_execution_seconds Time executions took.\n"
                  "# TYPE codebox_execution_seconds histogram\n");
    for (size_t i = 0; i <= N_BUCKETS; i++) {
        char le[32] = "+Inf";
        if (i < N_BUCKETS)
            snprintf (le, sizeof le, "%g", s_buckets[i]);
        const char *pairs[] = {"le", le};
        s_series (out, "codebox_execution_seconds_bucket", 1, pairs);
        fprintf (out, "%lu\n", i < N_BUCKETS ? self->bucket_counts[i] : self->exec_count);
    }
    fprintf (out, "codebox_execution_seconds_sum %.6f\n"
                  "codebox_execution_seconds_count %lu\n", self->exec_sum, self->exec_count);
    fprintf (out, "# HELP codebox_kernel_starts_total Kernel processes started.\n"
                  "# TYPE codebox_kernel_starts_total counter\n"
                  "codebox_kernel_starts_total %lu\n"
                  "# HELP codebox_kernel_restarts_total Kernels restarted after a death or a stuck execution.\n"
                  "# TYPE codebox_kernel_restarts_total counter\n"
                  "codebox_kernel_restarts_total %lu\n"
                  "# HELP codebox_kernel_deaths_total Kernels that died unasked.\n"
                  "# TYPE codebox_kernel_deaths_total counter\n"
                  "codebox_kernel_deaths_total %lu\n",
             self->kernel_starts, self->kernel_restarts, self->kernel_deaths);
    fprintf (out, "# HELP codebox_http_requests_dropped_total HTTP requests of series past "
                  "the table's bound (all tenants).\n"
                  "# TYPE codebox_http_requests_dropped_total counter\n"
                  "codebox_http_requests_dropped_total %lu\n", self->http_dropped);
    fprintf (out, "# HELP codebox_http_requests_total HTTP requests by tenant, method, route "
                  "and status code.\n"
                  "# TYPE codebox_http_requests_total counter\n");
    for (size_t i = 0; i < self->n_http; i++) {
        const s_http_series_t *e = &self->http[i];
        if (tenant && e->tenant[0] && strcmp (e->tenant, tenant) != 0)
            continue;   /* another tenant's */
        char code[16];
        snprintf (code, sizeof code, "%d", e->code);
        const char *pairs[] = {"method", e->method, "route", e->route, "code", code,
                               "tenant", e->tenant};
        s_series (out, "codebox_http_requests_total", e->tenant[0] ? 4 : 3, pairs);
        fprintf (out, "%lu\n", e->count);
    }
    pthread_mutex_unlock (&self->lock);
    fclose (out);
    return text;
}
