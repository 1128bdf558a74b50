/* gw_stream: the body of a streamed HTTP answer (Server-Sent Events), fed
 * by the loop thread and drained by libmicrohttpd (also run by the loop
 * thread). When the
 * drain finds nothing it suspends the connection; a write resumes it, so
 * neither side polls. Shared by both sides with a reference count.
 *
 * A client that does not read is not given memory without end: a write
 * that would leave more than GW_STREAM_MAX_UNREAD bytes unread (or
 * GW_STREAM_SHARE while all streams together hold GW_STREAMS_MAX_UNREAD)
 * drops what waits and cuts the stream: its connection ends at once, with
 * an error (no last chunk), and the cut is logged.
 *
 * Threads: gw_stream_write/close from the loop thread; gw_stream_read and
 * the connection hooks from libmicrohttpd, whatever thread runs it; a
 * mutex guards all. */
#ifndef GW_STREAM_H
#define GW_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define GW_STREAM_MAX_UNREAD ((size_t) 160 << 20)   /* above one whole result */
#define GW_STREAMS_MAX_UNREAD ((size_t) 1 << 30)
#define GW_STREAM_SHARE ((size_t) 4 << 20)

typedef struct gw_stream gw_stream_t;   /* struct gw_stream in gw_request.h too */

/* A new open stream with one reference. NULL on OOM. */
gw_stream_t *gw_stream_new (void);

/* Takes one more reference. */
gw_stream_t *gw_stream_ref (gw_stream_t *self);
/* Drops one reference and nulls *self_p; frees at zero. */
void gw_stream_unref (gw_stream_t **self_p);

/* Appends bytes (loop thread). No-op once closed or gone. */
void gw_stream_write (gw_stream_t *self, const char *data, size_t len);
/* Appends one SSE event "data: JSON\n\n" for text (one line). */
void gw_stream_write_event (gw_stream_t *self, const char *json_text);
/* Ends the stream after what was written (loop thread). */
void gw_stream_close (gw_stream_t *self);
/* Closes with a note for the access log line (" rpc=... is_error=..."),
 * which the HTTP edge reads with gw_stream_note once it sees the end. */
void gw_stream_close_noted (gw_stream_t *self, const char *note);
void gw_stream_note (gw_stream_t *self, char *out, size_t len);

/* Ties the stream to its HTTP connection (libmicrohttpd's
 * struct MHD_Connection *), so writes can resume it; resumed (may be
 * NULL) is called with arg after each resume, so the HTTP edge runs
 * libmicrohttpd again. */
void gw_stream_attach (gw_stream_t *self, void *connection, void (*resumed) (void *arg),
                       void *arg);

/* Copies up to max pending bytes into buf (libmicrohttpd's reader).
 * Returns the count; 0 after suspending the connection when nothing is
 * pending; -1 when closed and drained; -2 when it was cut. */
ssize_t gw_stream_read (gw_stream_t *self, char *buf, size_t max);

/* The client went away (libmicrohttpd saw it); later writes are dropped. */
void gw_stream_set_gone (gw_stream_t *self);
/* True once the client went away or the stream was cut. */
bool gw_stream_gone (gw_stream_t *self);
bool gw_stream_closed (gw_stream_t *self);

#endif
