/* gw_metrics: the counters /metrics shows in Prometheus text format:
 * sessions live, executions by status, an execution-seconds histogram,
 * kernel starts, restarts and deaths, and HTTP requests by route and code.
 * A mutex guards it: the loop thread and worker threads count. */
#ifndef GW_METRICS_H
#define GW_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "gw_execution.h"

typedef struct gw_metrics gw_metrics_t;

gw_metrics_t *gw_metrics_new (void);
void gw_metrics_destroy (gw_metrics_t **self_p);

void gw_metrics_sessions_live (gw_metrics_t *self, long live);
void gw_metrics_execution (gw_metrics_t *self, gw_exec_status_t status, int64_t duration_ms);
void gw_metrics_kernel_start (gw_metrics_t *self);
void gw_metrics_kernel_restart (gw_metrics_t *self);
void gw_metrics_kernel_death (gw_metrics_t *self);
/* route is the route's pattern ("/execute/{id}/results"), not the path. */
void gw_metrics_http (gw_metrics_t *self, const char *method, const char *route, int code);

/* The text exposition (new string), or NULL on OOM. */
char *gw_metrics_render (gw_metrics_t *self);

#endif
