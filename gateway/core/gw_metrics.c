/* gw_metrics: counters and their Prometheus text rendering. Any thread
 * (a mutex guards the counters). */
#include "gw_metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HTTP_SERIES 128

static const double s_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
                                   10, 30, 60, 300};
#define N_BUCKETS (sizeof s_buckets / sizeof s_buckets[0])

typedef struct {
    char method[8];
    char route[48];
    int code;
    unsigned long count;
} s_http_series_t;

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

void
gw_metrics_http (gw_metrics_t *self, const char *method, const char *route, int code)
{
    pthread_mutex_lock (&self->lock);
    s_http_series_t *found = NULL;
    for (size_t i = 0; i < self->n_http && !found; i++)
        if (self->http[i].code == code && strcmp (self->http[i].route, route) == 0
            && strcmp (self->http[i].method, method) == 0)
            found = &self->http[i];
    if (!found && self->n_http < MAX_HTTP_SERIES) {
        found = &self->http[self->n_http++];
        snprintf (found->method, sizeof found->method, "%s", method);
        snprintf (found->route, sizeof found->route, "%s", route);
        found->code = code;
    }
    if (found)
        found->count++;
    pthread_mutex_unlock (&self->lock);
}

char *
gw_metrics_render (gw_metrics_t *self)
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
    for (int s = GW_EXEC_COMPLETED; s <= GW_EXEC_CANCELLED; s++)
        fprintf (out, "codebox_executions_total{status=\"%s\"} %lu\n",
                 gw_exec_status_name ((gw_exec_status_t) s), self->executions[s]);
    fprintf (out, "# HELP codebox_execution_seconds Time executions took.\n"
                  "# TYPE codebox_execution_seconds histogram\n");
    for (size_t i = 0; i < N_BUCKETS; i++)
        fprintf (out, "codebox_execution_seconds_bucket{le=\"%g\"} %lu\n", s_buckets[i],
                 self->bucket_counts[i]);
    fprintf (out, "codebox_execution_seconds_bucket{le=\"+Inf\"} %lu\n"
                  "codebox_execution_seconds_sum %.6f\n"
                  "codebox_execution_seconds_count %lu\n",
             self->exec_count, self->exec_sum, self->exec_count);
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
    fprintf (out, "# HELP codebox_http_requests_total HTTP requests by route and status code.\n"
                  "# TYPE codebox_http_requests_total counter\n");
    for (size_t i = 0; i < self->n_http; i++)
        fprintf (out, "codebox_http_requests_total{method=\"%s\",route=\"%s\",code=\"%d\"} %lu\n",
                 self->http[i].method, self->http[i].route, self->http[i].code,
                 self->http[i].count);
    pthread_mutex_unlock (&self->lock);
    fclose (out);
    return text;
}
