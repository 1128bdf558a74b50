/* gw_session_record: the record of every cell a session ran, whatever
 * the interface: REST and MCP executions (jobs a client submitted, as they
 * end) and the Jupyter API's own execute_requests (followed from the
 * execute_input and the iopub and shell messages the gateway relays, by
 * their parent msg_id). It is kept where kernel code cannot reach it: in
 * the state folder beside the session folders, never inside one:
 *
 *   STATE/.kept/<id>/            (STATE/.kept/@<tenant>/<id>/ for other
 *                                 tenants than "default"), 0700
 *     session.json               the session's settings (id, tenant,
 *                                 kernel, created, limits, execution_options),
 *                                 written whole (temp + rename), 0600
 *     cells.jsonl                one line per cell, appended as it ends
 *                                 with one write(2), 0600
 *
 * A line: {"cell": N (1, 2, ...), "run": R (the kernel run: each restart,
 * whether a timeout's, a crash's or one asked for, starts the next),
 * "execution_count": N|null, "status": "ok"|"error"|"timeout"|"cancelled"
 * |"kernel_died", "started", "ended" (RFC 3339, ms), "code", "outputs"
 * (nbformat 4 outputs: stream, execute_result, display_data with their
 * data bundles and metadata, error), and when so "replay": true (the
 * execution of POST /sessions/{id}/replay), "kernel_restarted": true (the
 * kernel was restarted while it ran: its timeout, a crash, a restart
 * asked for), "via": "jupyter",
 * "outputs_left_out": why, "code_left_out": true}.
 *
 * Bounds: the cells with their outputs take at most GW_RECORD_MAX_BYTES;
 * past it a cell is kept without its outputs (outputs_left_out says so),
 * and past GW_RECORD_MAX_BYTES + GW_RECORD_CODE_BYTES without its code
 * either (then replay skips it). A completed cell's line is on disk once
 * its call answered (no fsync: a SIGKILL of the server keeps it; a power
 * cut may not); a write cut short is taken back (ftruncate), and readers
 * take whole lines only. The record goes with the session (DELETE, TTL,
 * idle); a server's start sweeps what an earlier one left.
 *
 * Threads: the loop thread only. */
#ifndef GW_SESSION_RECORD_H
#define GW_SESSION_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "gw_execution.h"
#include "gw_job.h"
#include "jp_message.h"

#define GW_RECORD_MAX_BYTES ((size_t) 32 << 20)
#define GW_RECORD_CODE_BYTES ((size_t) 8 << 20)
#define GW_RECORD_DIR ".kept"   /* in the state folder */

typedef struct gw_session_record gw_session_record_t;

/* The folder of the record of tenant's session id under state_dir into
 * buf. Returns 0, or -EINVAL when id is not a session id or tenant could
 * name another folder, or -ENAMETOOLONG. */
int gw_session_record_folder (char *buf, size_t len, const char *state_dir, const char *tenant,
                              const char *id);

/* Makes the record of a new session: its folder (an earlier one's
 * contents go), session.json from info (stolen: the session's settings),
 * an empty cells.jsonl. max_output_bytes bounds the text kept of a Jupyter
 * client's cell, as of an execution. NULL only when out of memory: a
 * record whose files cannot be made keeps nothing (logged) but answers. */
gw_session_record_t *gw_session_record_new (const char *state_dir, const char *tenant,
                                            const char *id, json_t *info,
                                            size_t max_output_bytes);

/* Opens the record an earlier server kept (session.json read back, cells
 * appended after the last one, numbered on; gw_session_record_restart
 * starts the run after its last). NULL when there is none or it cannot
 * be read. gw_session_record_info gives its settings. */
gw_session_record_t *gw_session_record_open (const char *state_dir, const char *tenant,
                                             const char *id, size_t max_output_bytes);

/* Frees the record; with remove, its folder goes too. Safe on NULL. */
void gw_session_record_destroy (gw_session_record_t **self_p, bool remove);

/* A job of the session ended with status: a client's code (job->recorded)
 * that ran is appended with its outputs. Before the job is finished (its
 * code is still there). Safe on a NULL record. */
void gw_session_record_job (gw_session_record_t *self, gw_job_t *job, gw_exec_status_t status);

/* A message of the session's kernel that no job took: a Jupyter client's
 * execute_input starts a cell, the messages with its parent fill it, and
 * its execute_reply and idle status end it. Safe on a NULL record. */
/* A Jupyter client's message on its way to the kernel: its
 * execute_request (not silent, kept in history) starts a cell, before any
 * answer can come (the kernel's shell reply may be read before its iopub
 * execute_input: they come on two sockets). Safe on a NULL record. */
void gw_session_record_client_msg (gw_session_record_t *self, jp_channel_t channel,
                                   const jp_msg_t *msg);

void gw_session_record_kernel_msg (gw_session_record_t *self, jp_channel_t channel,
                                   const jp_msg_t *msg);

/* The kernel died: the cells of clients that were running end as
 * kernel_died. */
void gw_session_record_kernel_died (gw_session_record_t *self);

/* A new kernel replaces the old: the next cells are the next run (the
 * clients' cells still running end as cancelled). */
void gw_session_record_restart (gw_session_record_t *self);

/* The session's settings (borrowed), and the run cells get now. */
json_t *gw_session_record_info (const gw_session_record_t *self);
int gw_session_record_run (const gw_session_record_t *self);

/* The whole lines of cells.jsonl in a new buffer (*text, NUL-terminated,
 * *len bytes; empty when the record keeps none). Returns 0 or -errno. */
int gw_session_record_read (const gw_session_record_t *self, char **text, size_t *len);

/* The code of the cells of a record's text (len bytes) that succeeded
 * (status ok), in order, each ending with a newline, as one new string
 * (NULL on OOM). Replays themselves are left out; *cells counts the cells
 * taken, *skipped the others (failed, or their code left out). */
char *gw_session_record_replay_code (const char *text, size_t len, int *cells, int *skipped);

#endif
