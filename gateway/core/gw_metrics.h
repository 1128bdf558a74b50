/* gw_metrics: the counters /metrics shows in Prometheus text format:
 * sessions live, executions by status, an execution-seconds histogram,
 * kernel starts, restarts and deaths (the server's totals), and HTTP
 * requests by tenant, method, route and code (each tenant's own series).
 * The text is valid whatever clients send: every label value is escaped
 * (backslash, double quote, newline), methods other than the HTTP ones
 * count as "other", and the request series are bounded in all and per
 * tenant (what does not fit is counted in one dropped total).
 * A mutex guards it: the loop thread and worker threads count. */
#ifndef GW_METRICS_H
#define GW_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gw_execution.h"

typedef struct gw_metrics gw_metrics_t;

gw_metrics_t *gw_metrics_new (void);
void gw_metrics_destroy (gw_metrics_t **self_p);

void gw_metrics_sessions_live (gw_metrics_t *self, long live);
void gw_metrics_execution (gw_metrics_t *self, gw_exec_status_t status, int64_t duration_ms);
void gw_metrics_kernel_start (gw_metrics_t *self);
void gw_metrics_kernel_restart (gw_metrics_t *self);
void gw_metrics_kernel_death (gw_metrics_t *self);
/* Counts one HTTP request. tenant is the caller's ("" or NULL before a
 * token was checked: a series of no tenant); route is the route's label
 * ("/execute/{id}/results"), never the path: NULL counts as "unmatched". */
void gw_metrics_http (gw_metrics_t *self, const char *tenant, const char *method,
                      const char *route, int code);

/* The text exposition (new string), or NULL on OOM: the server's totals,
 * the request series of no tenant and those of tenant (every tenant's
 * when tenant is NULL). */
char *gw_metrics_render (gw_metrics_t *self, const char *tenant);

/* Writes value to out as a Prometheus label value's inside: backslash,
 * double quote and newline as \\, \" and \n. Pure. */
void gw_metrics_write_label (FILE *out, const char *value);

#endif
