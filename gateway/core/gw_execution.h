/* gw_execution: one execution of code in a kernel, from execute_request to
 * the end. Collects the stream, execute_result, display_data,
 * update_display_data, clear_output and error messages whose parent is its
 * request, in the order the kernel sent them, as the REST "output" items:
 *
 *   {"type":"stream","name":"stdout"|"stderr","content":TEXT}
 *   {"type":"result","content":TEXT,"data":{MIME:...}}
 *   {"type":"display","data":{MIME:...}[,"display_id":ID]}
 *   {"type":"error","ename","evalue","traceback":[...]}
 *
 * It is finished only when both its execute_reply and the kernel's
 * status: idle for it arrived, in either order, or when the owner aborts it
 * (kernel died, timeout, cancel). Text beyond max_output_bytes is cut with a
 * visible marker. input() fails fast (requests go out with allow_stdin false
 * and any input_request is answered with an empty line) unless an input
 * handler is set: then the kernel waits until gw_execution_answer_input.
 *
 * Threads: used only by the thread that owns the kernel. */
#ifndef GW_EXECUTION_H
#define GW_EXECUTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "jp_message.h"
#include "ks_kernel.h"

typedef enum {
    GW_EXEC_QUEUED,
    GW_EXEC_RUNNING,
    GW_EXEC_COMPLETED,      /* the code ran to its end */
    GW_EXEC_ERROR,          /* the code raised, or the kernel died */
    GW_EXEC_TIMEOUT,
    GW_EXEC_CANCELLED,
} gw_exec_status_t;

typedef struct gw_execution gw_execution_t;

/* Called for each output as it arrives (item borrowed; a stream item holds
 * only the new text). */
typedef void (gw_output_fn) (gw_execution_t *exec, json_t *item, void *arg);

/* Called when the code asks for input (prompt borrowed); the kernel waits
 * for gw_execution_answer_input. */
typedef void (gw_input_fn) (gw_execution_t *exec, const char *prompt, bool password,
                            void *arg);

/* A new queued execution of code (copied). max_output_bytes 0 = no limit. */
gw_execution_t *gw_execution_new (const char *code, size_t max_output_bytes);

/* Frees and nulls *self_p. Safe on NULL. */
void gw_execution_destroy (gw_execution_t **self_p);

void gw_execution_set_output_handler (gw_execution_t *self, gw_output_fn *fn, void *arg);

/* Lets the code's input() ask fn (before gw_execution_start). */
void gw_execution_set_input_handler (gw_execution_t *self, gw_input_fn *fn, void *arg);

/* Answers the waiting input() with value. Returns 0, -ENOENT when none
 * waits, or a negative send error. */
int gw_execution_answer_input (gw_execution_t *self, const char *value);

/* Sends the execute_request to kernel (borrowed, must stay alive while the
 * execution runs) and marks it running. Returns 0 or a negative code. */
int gw_execution_start (gw_execution_t *self, ks_kernel_t *kernel);

/* Marks it running for the execute_request msg_id sent to kernel (what
 * gw_execution_start does after sending; kernel may be NULL in tests:
 * nothing is sent back then). */
void gw_execution_running (gw_execution_t *self, const char *msg_id, ks_kernel_t *kernel);

/* Offers one message from kernel. Returns true if it belonged to this
 * execution (its parent is our request). */
bool gw_execution_feed (gw_execution_t *self, jp_channel_t channel, const jp_msg_t *msg);

/* Ends the execution now with status (ERROR, TIMEOUT or CANCELLED) and adds
 * an error output naming why (for example "KernelDied", "the kernel process
 * exited with status 3"). No-op once finished. */
void gw_execution_abort (gw_execution_t *self, gw_exec_status_t status,
                         const char *ename, const char *why);

/* Adds a stream output (name "stdout" or "stderr") of the gateway's own,
 * as if the kernel had printed text (before or while it runs). */
void gw_execution_add_stream (gw_execution_t *self, const char *name, const char *text);

/* Adds an error output to an execution, marking a finished one an error
 * (a disk quota found exceeded afterwards, a CPU limit hit meanwhile). */
void gw_execution_add_error (gw_execution_t *self, const char *ename, const char *why);

/* The kernel answered but its "idle" status has not come: a kernel that
 * published faster than we read may have had its queue drop it. Once no
 * message of the execution came for GW_EXEC_IDLE_GRACE_MS, settle asks the
 * kernel for its info: the status it publishes for that request comes
 * after everything it published for the execution, which then ends. After
 * GW_EXEC_IDLE_PROBES unanswered probes it ends anyway (a kernel that
 * publishes no status). The deadline is -1 when nothing waits. */
#define GW_EXEC_IDLE_GRACE_MS 500
#define GW_EXEC_IDLE_PROBES 10
int64_t gw_execution_settle_deadline (const gw_execution_t *self);
void gw_execution_settle (gw_execution_t *self, int64_t now);

bool gw_execution_finished (const gw_execution_t *self);
gw_exec_status_t gw_execution_status (const gw_execution_t *self);
const char *gw_exec_status_name (gw_exec_status_t status);

/* The outputs so far (borrowed array of the items above). */
json_t *gw_execution_outputs (gw_execution_t *self);

/* The execution_count the kernel gave, or 0. */
int gw_execution_count (const gw_execution_t *self);

/* Milliseconds from start to finish (or to now while running). */
int64_t gw_execution_duration_ms (const gw_execution_t *self);

/* True when output text was cut at max_output_bytes. */
bool gw_execution_truncated (const gw_execution_t *self);

/* About how many bytes the kept outputs take (text, rich data, items). */
size_t gw_execution_bytes (const gw_execution_t *self);

#endif
