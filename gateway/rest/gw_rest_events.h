/* gw_rest_events: GET /execute/{rid}/events, an execution's outputs as
 * Server-Sent Events while it runs: first every output item it already
 * has, then each new one as the kernel sends it ("event: output", one
 * item of the results' "output" in the same shape, a PNG named by
 * "file": INDEX; the PNG's bytes come once, in the end's "files"), then
 * "event: end" with the results object, and the stream ends. Items go out
 * as they came: what a later clear_output or update_display_data changes
 * (and the indexes of the images it clears) is only in the end's
 * results, which are what the execution kept. A comment every GW_REST_EVENTS_KEEPALIVE_MS keeps proxies
 * from cutting a quiet stream and lets the HTTP edge notice a client that
 * left; then, or when the HTTP edge says so (gw_rest_events_stream_gone),
 * the stream stops observing its job and is freed.
 *
 * Threads: the loop thread only. */
#ifndef GW_REST_EVENTS_H
#define GW_REST_EVENTS_H

#include "gw_request.h"
#include "gw_server.h"
#include "gw_stream.h"

#define GW_REST_EVENTS_KEEPALIVE_MS 15000

typedef struct gw_rest_events gw_rest_events_t;

/* The open event streams of server, whose loop gets a source for their
 * keep-alives. NULL on OOM. */
gw_rest_events_t *gw_rest_events_new (gw_server_t *server);

/* Ends every open stream (before the HTTP server stops). */
void gw_rest_events_close (gw_rest_events_t *self);

/* Ends every open stream, takes the source out of the loop, frees and
 * nulls *self_p. Safe on NULL. */
void gw_rest_events_destroy (gw_rest_events_t **self_p);

/* GET /execute/{rid}/events: answers req with the stream, or 404 for an
 * execution req's tenant does not have. */
void gw_rest_events_handle (gw_rest_events_t *self, gw_request_t *req, const char *rid);

/* The client of stream left (the HTTP edge saw it): its stream, if one of
 * ours, is freed. */
void gw_rest_events_stream_gone (gw_rest_events_t *self, gw_stream_t *stream);

#endif
