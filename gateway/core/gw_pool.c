/* gw_pool: warm kernels waiting in empty folders; a Python one preloads
 * CODEBOX_POOL_PRELOAD once it is ready and is taken only after that
 * (gw_pool_preload). Loop thread only. */
#include "gw_pool.h"
#include "gw_id.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "gw_disk.h"
#include "gw_fs.h"
#include "gw_kernel_epoll.h"
#include "gw_launch.h"
#include "gw_pool_preload.h"
#include "jp_random.h"
#include "jp_time.h"
#include "ks_search.h"
#include "jp_log.h"

#define MAX_KINDS 16
#define MAX_BACKOFF_MS 60000
#define MAX_LEFTOVERS 16

/* A replacement starts this long after a kernel is taken: making its
 * folder (a file system of its own: mkfs and a loop mount) and spawning it
 * hold the loop for tens of milliseconds, which the new session's first
 * cell would otherwise wait out. */
#define REFILL_AFTER_TAKE_MS 1000

/* A preload that has not ended by then ends its kernel (replaced). */
#define PRELOAD_MS 120000

typedef struct {
    ks_spec_t *spec;
    ks_kernel_t *kernel;
    char folder[1100];
    int kind;
    bool failed_start;          /* died before it was ever ready */
    bool preloading;            /* not to be taken: its preload runs */
    char preload_id[64];        /* the preload's msg_id */
    int preload_heard;          /* its reply (1) and its idle (2) came */
    int64_t preload_by;
} s_slot_t;

typedef struct {
    char name[GW_ID_SIZE];
    int failures;
    int64_t retry_after;
} s_kind_t;

struct gw_pool {
    const gw_launch_ctx_t *ctx;  /* how its kernels start */
    char *preload;              /* what a warm Python kernel runs first, or NULL */
    int size;
    s_kind_t kinds[MAX_KINDS];
    int n_kinds;
    s_slot_t *slots;
    int n_slots, cap_slots;
    /* the kernels, polled and dispatched through an epoll set of their
       own: an idle pool kernel costs a turn nothing, as an idle
       session's does */
    gw_kernel_epoll_t *watch;
    /* emptied folders of taken kernels, removed with the refill, after
       the new session's first answers (gw_disk_move) */
    char leftover[MAX_LEFTOVERS][1100];
    int n_leftovers;
    int64_t leftovers_at;
};

gw_pool_t *
gw_pool_new (const gw_launch_ctx_t *ctx)
{
    gw_pool_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->ctx = ctx;
    const gw_config_t *c = ctx->config;
    self->size = (int) gw_config_int (c, GW_SET_POOL_SIZE);
    const char *list = gw_config_str (c, GW_SET_POOL_KERNELS);
    if (!*list)
        list = gw_config_str (c, GW_SET_DEFAULT_KERNEL);
    char *copy = strdup (list), *save = NULL;
    for (char *tok = copy ? strtok_r (copy, ", ", &save) : NULL; tok && self->n_kinds < MAX_KINDS;
         tok = strtok_r (NULL, ", ", &save))
        if (ks_search_valid_name (tok))
            snprintf (self->kinds[self->n_kinds++].name, sizeof self->kinds[0].name, "%s", tok);
    free (copy);
    self->preload = gw_pool_preload_code (gw_config_str (c, GW_SET_POOL_PRELOAD));
    self->watch = gw_kernel_epoll_new ();
    if (!self->watch)
        gw_pool_destroy (&self);
    return self;
}

/* Ends one slot's kernel and removes its folder. */
static void
s_slot_clear (s_slot_t *slot)
{
    if (slot->kernel) {
        ks_kernel_set_handlers (slot->kernel, NULL, NULL, NULL);
        ks_kernel_destroy (&slot->kernel);
    }
    if (slot->folder[0])
        gw_disk_remove (slot->folder);
    ks_spec_destroy (&slot->spec);
}

void
gw_pool_destroy (gw_pool_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gw_pool_t *self = *self_p;
    for (int i = 0; i < self->n_slots; i++)
        s_slot_clear (&self->slots[i]);
    for (int i = 0; i < self->n_leftovers; i++)
        rmdir (self->leftover[i]);
    free (self->slots);
    gw_kernel_epoll_destroy (&self->watch);
    free (self->preload);
    free (self);
    *self_p = NULL;
}

/* Sends a ready Python kernel its preload: silent (no execution count, no
 * history), in a namespace of its own. It may be taken once both the
 * reply and the idle status of that request came. */
static void
s_preload (gw_pool_t *self, s_slot_t *slot)
{
    if (!self->preload || !gw_pool_preload_language (slot->spec->language))
        return;
    jp_msg_t *msg = ks_kernel_msg_new (slot->kernel, "execute_request");
    if (!msg)
        return;
    jp_msg_set_content (msg, json_pack ("{s:s, s:b, s:b, s:{}, s:b, s:b}", "code",
                                        self->preload, "silent", 1, "store_history", 0,
                                        "user_expressions", "allow_stdin", 0,
                                        "stop_on_error", 0));
    if (ks_kernel_send (slot->kernel, JP_CHANNEL_SHELL, msg) == 0) {
        snprintf (slot->preload_id, sizeof slot->preload_id, "%s", jp_msg_id (msg));
        slot->preloading = true;
        slot->preload_heard = 0;
        slot->preload_by = jp_time_now_ms () + PRELOAD_MS;
    }
    else
        jp_log_warn ("pool event=preload-not-sent kernel=%s", slot->spec->name);
    jp_msg_destroy (&msg);
}

static s_slot_t *
s_slot_of (gw_pool_t *self, const ks_kernel_t *kernel)
{
    for (int i = 0; i < self->n_slots; i++)
        if (self->slots[i].kernel == kernel)
            return &self->slots[i];
    return NULL;
}

/* A pool kernel's message: the preload's reply and its idle status end
 * it; the rest (its busy status, its start's) is dropped. */
static void
s_on_msg (ks_kernel_t *kernel, jp_channel_t channel, jp_msg_t **msg_p, void *arg)
{
    s_slot_t *slot = s_slot_of (arg, kernel);
    const jp_msg_t *msg = *msg_p;
    if (!slot || !slot->preloading || strcmp (jp_msg_parent_id (msg), slot->preload_id) != 0)
        return;
    if (channel == JP_CHANNEL_SHELL && strcmp (jp_msg_type (msg), "execute_reply") == 0) {
        slot->preload_heard |= 1;
        const char *status = json_string_value (json_object_get (msg->content, "status"));
        if (!status || strcmp (status, "ok") != 0)
            jp_log_warn ("pool event=preload-failed kernel=%s status=%s", slot->spec->name,
                         status ? status : "?");
    }
    else if (channel == JP_CHANNEL_IOPUB && jp_msg_is_idle (msg))
        slot->preload_heard |= 2;
    if (slot->preload_heard == 3) {
        slot->preloading = false;
        jp_log_info ("pool event=preloaded kernel=%s ms=%lld", slot->spec->name,
                     (long long) (jp_time_now_ms () - (slot->preload_by - PRELOAD_MS)));
    }
}

/* Notes whether a pool kernel ever became ready, says when it does, and
 * starts its preload. */
static void
s_on_state (ks_kernel_t *kernel, ks_kernel_state_t state, void *arg)
{
    gw_pool_t *self = arg;
    s_slot_t *slot = s_slot_of (self, kernel);
    if (!slot)
        return;
    if (state == KS_KERNEL_READY) {
        self->kinds[slot->kind].failures = 0;
        jp_log_info ("pool event=ready kernel=%s ms=%lld", self->kinds[slot->kind].name,
                     (long long) ks_kernel_start_ms (kernel));
        s_preload (self, slot);
    }
    else if (state == KS_KERNEL_DEAD && ks_kernel_start_ms (kernel) < 0)
        slot->failed_start = true;
}

/* Starts one more kernel of a kind. Returns 0 or -1. */
static int
s_start_one (gw_pool_t *self, int kind)
{
    const gw_config_t *c = self->ctx->config;
    char err[1024];
    ks_spec_t *spec = ks_search_find (gw_config_str (c, GW_SET_KERNEL_PATH),
                                      self->kinds[kind].name, err, sizeof err);
    if (!spec)
        return -1;
    if (self->n_slots == self->cap_slots) {
        int cap = self->cap_slots ? self->cap_slots * 2 : 8;
        s_slot_t *grown = realloc (self->slots, (size_t) cap * sizeof *grown);
        if (!grown) {
            ks_spec_destroy (&spec);
            return -1;
        }
        self->slots = grown;
        self->cap_slots = cap;
    }
    s_slot_t slot = {.spec = spec, .kind = kind};
    char uuid[JP_UUID_LEN + 1];
    jp_random_uuid (uuid);
    snprintf (slot.folder, sizeof slot.folder, "%s/.pool-%.8s", self->ctx->state_dir,
              uuid);
    int rc = gw_launch_make_folder (self->ctx, slot.folder, err, sizeof err);
    if (rc)
        slot.folder[0] = '\0';     /* nothing was made */
    slot.kernel = rc ? NULL : gw_launch_kernel (self->ctx, spec, slot.folder, NULL, err,
                                                 sizeof err);
    if (!slot.kernel) {
        jp_log_warn ("pool event=start-failed kernel=%s why=%s",
                 self->kinds[kind].name, err);
        s_slot_clear (&slot);
        return -1;
    }
    ks_kernel_set_handlers (slot.kernel, s_on_msg, s_on_state, self);
    self->slots[self->n_slots++] = slot;
    return 0;
}

ks_kernel_t *
gw_pool_take (gw_pool_t *self, const char *spec_name, const char *workdir, ks_spec_t **spec_p)
{
    for (int i = 0; self && i < self->n_slots; i++) {
        s_slot_t *slot = &self->slots[i];
        if (strcasecmp (slot->spec->name, spec_name) != 0 || slot->preloading
            || ks_kernel_state (slot->kernel) != KS_KERNEL_READY)
            continue;
        if (gw_disk_move (slot->folder, workdir) != 0)
            return NULL;    /* the session folder exists already: start cold */
        s_kind_t *kind = &self->kinds[slot->kind];
        int64_t later = jp_time_now_ms () + REFILL_AFTER_TAKE_MS;
        if (access (slot->folder, F_OK) == 0) {
            if (self->n_leftovers == MAX_LEFTOVERS)
                rmdir (slot->folder);
            else {
                memcpy (self->leftover[self->n_leftovers++], slot->folder,
                        sizeof self->leftover[0]);
                self->leftovers_at = later;
            }
        }
        if (kind->retry_after < later)
            kind->retry_after = later;
        ks_kernel_t *kernel = slot->kernel;
        ks_kernel_set_handlers (kernel, NULL, NULL, NULL);
        *spec_p = slot->spec;
        self->slots[i] = self->slots[--self->n_slots];
        return kernel;
    }
    return NULL;
}

int
gw_pool_poll_count (gw_pool_t *self)
{
    return self ? 1 + self->n_slots * KS_KERNEL_POLL_ITEMS : 0;
}

static ks_kernel_t *
s_slot_kernel (void *arg, size_t i)
{
    gw_pool_t *self = arg;
    return self->slots[i].kernel;
}

int
gw_pool_poll_items (gw_pool_t *self, zmq_pollitem_t *items, int max)
{
    return self ? gw_kernel_epoll_poll_items (self->watch, (size_t) self->n_slots, s_slot_kernel,
                                              self, items, max)
                : 0;
}

int64_t
gw_pool_deadline (gw_pool_t *self)
{
    int64_t next = -1;
    for (int i = 0; self && i < self->n_slots; i++) {
        int64_t d = ks_kernel_deadline (self->slots[i].kernel);
        if (ks_kernel_state (self->slots[i].kernel) == KS_KERNEL_DEAD)
            d = 0;      /* to be replaced */
        else if (self->slots[i].preloading && (d < 0 || self->slots[i].preload_by < d))
            d = self->slots[i].preload_by;
        if (d >= 0 && (next < 0 || d < next))
            next = d;
    }
    for (int k = 0; self && self->size > 0 && k < self->n_kinds; k++) {
        int have = 0;
        for (int i = 0; i < self->n_slots; i++)
            have += self->slots[i].kind == k;
        /* under-filled: refill now, or when the back-off ends */
        int64_t due = have >= self->size ? -1 : self->kinds[k].retry_after;
        if (due >= 0 && (next < 0 || due < next))
            next = due;
    }
    if (self && self->n_leftovers && (next < 0 || self->leftovers_at < next))
        next = self->leftovers_at;
    return next;
}

/* The slot polled at i still holds that kernel (not taken or dropped). */
static bool
s_still_its_kernel (void *arg, size_t i, const ks_kernel_t *kernel)
{
    gw_pool_t *self = arg;
    return i < (size_t) self->n_slots && self->slots[i].kernel == kernel;
}

void
gw_pool_dispatch (gw_pool_t *self, const zmq_pollitem_t *items, int n)
{
    if (self)
        gw_kernel_epoll_dispatch (self->watch, items, n, s_still_its_kernel, self);
}

void
gw_pool_tick (gw_pool_t *self, int64_t now)
{
    if (!self || self->size <= 0)
        return;
    if (self->n_leftovers && now >= self->leftovers_at) {
        for (int i = 0; i < self->n_leftovers; i++)
            rmdir (self->leftover[i]);
        self->n_leftovers = 0;
    }
    for (int i = 0; i < self->n_slots;) {
        s_slot_t *slot = &self->slots[i];
        if (slot->preloading && now >= slot->preload_by) {
            jp_log_warn ("pool event=preload-timeout kernel=%s", slot->spec->name);
            slot->preloading = false;
            slot->failed_start = true;      /* back off, as for a kernel that cannot start */
            ks_kernel_kill (slot->kernel);
        }
        if (ks_kernel_state (slot->kernel) != KS_KERNEL_DEAD) {
            i++;
            continue;
        }
        s_kind_t *kind = &self->kinds[slot->kind];
        if (slot->failed_start) {
            /* back off: a kernel that cannot start would otherwise spin */
            kind->failures++;
            int64_t wait = 1000LL << (kind->failures < 6 ? kind->failures : 6);
            kind->retry_after = now + (wait < MAX_BACKOFF_MS ? wait : MAX_BACKOFF_MS);
        }
        jp_log_info ("pool event=dead kernel=%s why=%s", kind->name,
                 ks_kernel_error (slot->kernel));
        s_slot_clear (slot);
        self->slots[i] = self->slots[--self->n_slots];
    }
    for (int k = 0; k < self->n_kinds; k++) {
        if (now < self->kinds[k].retry_after)
            continue;
        self->kinds[k].retry_after = 0;
        int have = 0;
        for (int i = 0; i < self->n_slots; i++)
            have += self->slots[i].kind == k;
        while (have < self->size && s_start_one (self, k) == 0)
            have++;
        if (have < self->size)
            self->kinds[k].retry_after = now + MAX_BACKOFF_MS;
    }
}
