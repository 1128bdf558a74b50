/* ks_kernel: one running kernel process and the client end of its five
 * channels, as a state machine an event loop drives:
 *
 *   NEW --start--> STARTING --kernel_info reply + iopub live--> READY
 *   STARTING --timeout or exit--> DEAD (with an error)
 *   READY --process exit or lost heartbeat--> DEAD (with an error)
 *   READY --shutdown--> STOPPING --exit (after shutdown_request, then
 *                                   SIGTERM, then SIGKILL)--> DEAD
 *
 * The owner puts the kernel's sockets and pidfd into its zmq_poll set with
 * ks_kernel_poll_items, sleeps until ks_kernel_deadline at most, and calls
 * ks_kernel_dispatch afterwards. Messages that arrive once READY go to the
 * message handler; state changes go to the state handler.
 *
 * Threads: a kernel belongs to the thread that created it (it owns the
 * ZeroMQ sockets and is the parent the kernel's death signal watches). */
#ifndef KS_KERNEL_H
#define KS_KERNEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <zmq.h>

#include "jp_channels.h"
#include "ks_process.h"
#include "ks_spec.h"

typedef enum {
    KS_KERNEL_NEW,
    KS_KERNEL_STARTING,
    KS_KERNEL_READY,
    KS_KERNEL_STOPPING,
    KS_KERNEL_DEAD,
} ks_kernel_state_t;

typedef struct ks_kernel ks_kernel_t;

/* The relay's address-space limit. */
#define KS_RELAY_MEMORY_MB 1024

#define KS_KERNEL_POLL_ITEMS 8      /* five channels, the pidfd, the relay's, the decoder's inbox */

typedef struct {
    const char *cwd;            /* the kernel's working directory (NULL: ours) */
    const char *runtime_dir;    /* existing short folder for the connection
                                   file, ipc sockets and log */
    int start_timeout_ms;       /* 0: 30 s */
    int heartbeat_ms;           /* 0: 5 s between beats while the kernel
                                   works or owes us an idle (none while it
                                   is idle), on multiples of the interval;
                                   4 missed = dead */
    const char *const *extra_env;   /* "NAME=value", NULL-terminated, or NULL */
    const char *const *wrap_argv;   /* a prefix such as bwrap's arguments,
                                       NULL-terminated, or NULL */
    const char *const *extra_argv;  /* appended to the kernelspec's argv,
                                       NULL-terminated, or NULL */
    ks_spawn_extra_t spawn;         /* cgroups, limits, user; with set_user
                                       the connection file is given to uid */
    bool own_runtime_dir;           /* remove runtime_dir when destroyed */
    bool runtime_dir_mounted;       /* runtime_dir is a file system of its own
                                       (a small tmpfs): unmount it first */
    bool clean_env;                 /* pass only PATH, LANG, TZ, HOME, LC_*
                                       of the gateway's environment */
    const char *proxy;              /* for a TCP-only kernel in a sandbox
                                       without network: the codebox binary,
                                       run as `kernel-proxy` in front of the
                                       kernel, which bridges the kernel's
                                       loopback TCP to our ipc sockets */
    /* A relay between the kernel and us (see gateway/gw_cmd_kernel_relay.c):
       the binary to run as `kernel-relay` (as relay_spawn makes it visible),
       a folder for its sockets, connection file and log that the kernel
       cannot reach (removed with the kernel), and how it is started (user,
       bind of the binary, memory cgroup, limits). The relay runs in a
       network namespace of its own when the kernel speaks ipc. If it dies
       the kernel is stopped. NULL: we talk to the kernel directly. */
    const char *relay;
    const char *relay_dir;
    ks_spawn_extra_t relay_spawn;
    /* With a relay: a Unix socket path (in runtime_dir) where the relay
       also serves the kernel's network proxy (`--net`, private addresses
       too with relay_net_private); the relay then keeps the host's network
       namespace. NULL: no network for the kernel. */
    const char *relay_net;
    bool relay_net_private;
} ks_kernel_options_t;

/* A message arrived for a READY kernel. The handler may take the message
 * (and null *msg_p); otherwise it is freed after the call. */
typedef void (ks_kernel_msg_fn) (ks_kernel_t *kernel, jp_channel_t channel,
                                 jp_msg_t **msg_p, void *arg);
/* The kernel entered state. */
typedef void (ks_kernel_state_fn) (ks_kernel_t *kernel, ks_kernel_state_t state,
                                   void *arg);

/* Makes a kernel for spec (borrowed; must outlive the kernel) without
 * starting it; the options' strings are copied. Returns NULL on OOM. */
ks_kernel_t *ks_kernel_new (const ks_spec_t *spec, const ks_kernel_options_t *options);

/* Kills the process group if still alive, reaps it, closes the sockets,
 * removes the runtime files, frees, and nulls *self_p. */
void ks_kernel_destroy (ks_kernel_t **self_p);

void ks_kernel_set_handlers (ks_kernel_t *self, ks_kernel_msg_fn *on_msg,
                             ks_kernel_state_fn *on_state, void *arg);

/* Launches the process and begins the kernel_info handshake. Returns 0, or
 * a negative errno with ks_kernel_error saying why (state becomes DEAD). */
int ks_kernel_start (ks_kernel_t *self);

ks_kernel_state_t ks_kernel_state (const ks_kernel_t *self);

/* Why the kernel failed or died ("" if it did not), borrowed. */
const char *ks_kernel_error (const ks_kernel_t *self);

/* Fills up to max items (KS_KERNEL_POLL_ITEMS is enough) for zmq_poll or
 * gw_loop and returns how many; a socket used since its last poll carries
 * JP_POLL_USED. Pass the same items, after polling, to dispatch. */
int ks_kernel_poll_items (ks_kernel_t *self, zmq_pollitem_t *items, int max);

/* True while a large message of the kernel is being decoded on the
 * decoder's thread (ks_decoder): more of its messages are on their way. */
bool ks_kernel_decoding (const ks_kernel_t *self);

/* For an owner that watches the kernel's descriptors between polls (an
 * epoll set) instead of polling its items each turn. ks_kernel_fds fills up
 * to max (KS_KERNEL_POLL_ITEMS) descriptors that become readable when the
 * kernel needs dispatch: its sockets' ZMQ_FDs, the pidfds. Their set is
 * the same as long as ks_kernel_fds_generation returns the same value
 * (unique in the process: a new one whenever one is opened or closed).
 * A ZeroMQ socket's descriptor is not enough after the socket was used
 * (sending or receiving may take its signal): while
 * ks_kernel_needs_poll_items is true, poll the kernel's items. */
uint64_t ks_kernel_fds_generation (const ks_kernel_t *self);
int ks_kernel_fds (const ks_kernel_t *self, int *fds, int max);
bool ks_kernel_needs_poll_items (const ks_kernel_t *self);

/* Iopub rests: once a little was read on it (up to KS_IOPUB_REST_MAX_MSGS
 * messages and KS_IOPUB_REST_MAX_BYTES), the kernel's iopub is not watched
 * for KS_IOPUB_REST_MS; what comes meanwhile is read with the reply that
 * follows it (any shell, control or stdin message first reads iopub), or
 * when the rest ends. A call's input, result and idle thus cost the
 * gateway one wake-up with its reply instead of one each (a context
 * switch and three system calls apiece: the most of the gateway's CPU per
 * call left, docs/PERFORMANCE.md), and output reaches a client at most
 * that much later. A read of more is a kernel that floods: it is watched
 * and read as it comes (resting then, the sockets between it and the
 * gateway filled and its PUB dropped what its queue could not hold:
 * 28 125 of 30 000 displays of 2 KB came through).
 * (Resting from the request on was tried too: one wake-up less for a call
 * after a pause, but the busy and input are then decoded after the reply,
 * in the answer's way: 2.58 against 2.49 ms p50 for calls 12 ms apart.)
 * A kernel that owes the idle of a request it replied to is watched at
 * once. While iopub rests, ks_kernel_fds and ks_kernel_poll_items leave
 * it out and ks_kernel_resting_fd names its
 * descriptor, which changes without a new generation: an owner's epoll set
 * takes it out and puts it back. -1 when it does not rest. */
#define KS_IOPUB_REST_MS 5
#define KS_IOPUB_REST_MAX_MSGS 16           /* a read of more: no rest */
#define KS_IOPUB_REST_MAX_BYTES (64u << 10)
int ks_kernel_resting_fd (const ks_kernel_t *self);

/* The rule (pure): the end of iopub's rest after a read that took got
 * messages of bytes in all at now, the rest having ended at until (0:
 * it did not rest): a little rests it from now, much (or a kernel not
 * ready) has it watched, nothing keeps a rest not over yet. 0: watched. */
int64_t ks_iopub_rest_after_read (int64_t until, int got, size_t bytes, bool ready,
                                  int64_t now);

/* The next time (jp_time_now_ms clock) the kernel needs dispatch to run
 * even if nothing is readable, or -1. */
int64_t ks_kernel_deadline (const ks_kernel_t *self);

/* Handles readable items and due timers. */
void ks_kernel_dispatch (ks_kernel_t *self, const zmq_pollitem_t *items, int n);

/* Blocks, driving only this kernel, until done(arg) is true, the kernel is
 * DEAD, or timeout_ms passes (-1: no limit). Returns done(arg)'s last value. */
bool ks_kernel_run_until (ks_kernel_t *self, bool (*done) (void *arg), void *arg,
                          int timeout_ms);

/* A new message of msg_type from this kernel's client session. */
jp_msg_t *ks_kernel_msg_new (ks_kernel_t *self, const char *msg_type);

/* Signs and sends msg on channel. Returns 0 or a negative code. A request
 * on shell or control starts the heartbeat until the kernel says idle to
 * it. */
int ks_kernel_send (ks_kernel_t *self, jp_channel_t channel, const jp_msg_t *msg);

/* Interrupts the running code: SIGINT to the process group, or an
 * interrupt_request on control when the spec's interrupt_mode is
 * "message". Returns 0 or a negative code. */
int ks_kernel_interrupt (ks_kernel_t *self);

/* Begins an orderly shutdown (shutdown_request, then SIGTERM after 2 s, then
 * SIGKILL after 4 s). The kernel reaches DEAD through dispatch. */
int ks_kernel_shutdown (ks_kernel_t *self);

/* Ends the process group at once with SIGKILL and reaps it. */
void ks_kernel_kill (ks_kernel_t *self);

const char *ks_kernel_id (const ks_kernel_t *self);
/* Milliseconds the start took, from launch to READY. */
int64_t ks_kernel_start_ms (const ks_kernel_t *self);

/* CPU time, in nanoseconds, used so far by every process of the kernel
 * (its cpuacct cgroup, when it was started in one), or -1 when unknown. */
long long ks_kernel_cpu_ns (ks_kernel_t *self);

/* The bytes (every frame) of the message being handed to on_msg. */
size_t ks_kernel_last_msg_bytes (const ks_kernel_t *self);

#endif
