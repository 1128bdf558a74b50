/* ks_decoder: a worker thread that verifies and decodes large kernel
 * messages (see ks_decoder.h). Jobs wait on one queue in the order they
 * came; each done job goes to its inbox's list, and the inbox's eventfd
 * tells its kernel.
 *
 * Threads: the worker runs s_work; everything else runs in a kernel's
 * thread. */
#include "ks_decoder.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct s_job s_job_t;
struct s_job {
    ks_decoder_inbox_t *inbox;  /* holds a reference */
    int channel;
    jp_raw_t *raw;
    jp_msg_t *msg;
    int rc;
    s_job_t *next;
};

struct ks_decoder_inbox {
    pthread_mutex_t lock;
    int refs;                   /* the kernel's, and one a job away */
    bool gone;                  /* the kernel let go */
    int fd;
    s_job_t *done, **done_tail;
};

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t s_wake = PTHREAD_COND_INITIALIZER;
static s_job_t *s_queue, **s_queue_tail = &s_queue;
static bool s_started;

static void
s_inbox_unref (ks_decoder_inbox_t *self)
{
    pthread_mutex_lock (&self->lock);
    bool last = --self->refs == 0;
    pthread_mutex_unlock (&self->lock);
    if (!last)
        return;
    for (s_job_t *job = self->done, *next; job; job = next) {
        next = job->next;
        jp_msg_destroy (&job->msg);
        free (job);
    }
    close (self->fd);
    pthread_mutex_destroy (&self->lock);
    free (self);
}

static void *
s_work (void *arg)
{
    (void) arg;
    for (;;) {
        pthread_mutex_lock (&s_lock);
        while (!s_queue)
            pthread_cond_wait (&s_wake, &s_lock);
        s_job_t *job = s_queue;
        s_queue = job->next;
        if (!s_queue)
            s_queue_tail = &s_queue;
        pthread_mutex_unlock (&s_lock);
        ks_decoder_inbox_t *inbox = job->inbox;
        pthread_mutex_lock (&inbox->lock);
        bool gone = inbox->gone;
        pthread_mutex_unlock (&inbox->lock);
        if (gone)
            jp_raw_destroy (&job->raw);     /* nobody waits for it */
        else
            job->rc = jp_raw_decode (&job->raw, &job->msg);
        pthread_mutex_lock (&inbox->lock);
        if (!inbox->gone) {
            job->next = NULL;
            *inbox->done_tail = job;
            inbox->done_tail = &job->next;
            uint64_t one = 1;
            if (write (inbox->fd, &one, sizeof one) < 0) {
                /* the counter is full: it is readable already */
            }
            job = NULL;
        }
        pthread_mutex_unlock (&inbox->lock);
        if (job) {
            jp_msg_destroy (&job->msg);
            free (job);
        }
        s_inbox_unref (inbox);
    }
    return NULL;
}

/* Starts the worker once. Returns 0 or -errno. */
static int
s_start (void)
{
    if (s_started)
        return 0;
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init (&attr);
    pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create (&thread, &attr, s_work, NULL);
    pthread_attr_destroy (&attr);
    if (rc)
        return -rc;
    s_started = true;
    return 0;
}

ks_decoder_inbox_t *
ks_decoder_inbox_new (void)
{
    ks_decoder_inbox_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (self->fd < 0) {
        free (self);
        return NULL;
    }
    pthread_mutex_init (&self->lock, NULL);
    self->refs = 1;
    self->done_tail = &self->done;
    return self;
}

void
ks_decoder_inbox_destroy (ks_decoder_inbox_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ks_decoder_inbox_t *self = *self_p;
    *self_p = NULL;
    pthread_mutex_lock (&self->lock);
    self->gone = true;
    pthread_mutex_unlock (&self->lock);
    s_inbox_unref (self);
}

int
ks_decoder_inbox_fd (const ks_decoder_inbox_t *self)
{
    return self->fd;
}

int
ks_decoder_submit (ks_decoder_inbox_t *self, int channel, jp_raw_t **raw_p)
{
    s_job_t *job = calloc (1, sizeof *job);
    if (!job)
        return -ENOMEM;
    pthread_mutex_lock (&s_lock);
    int rc = s_start ();
    if (rc == 0) {
        pthread_mutex_lock (&self->lock);
        self->refs++;
        pthread_mutex_unlock (&self->lock);
        *job = (s_job_t) {.inbox = self, .channel = channel, .raw = *raw_p};
        *raw_p = NULL;
        *s_queue_tail = job;
        s_queue_tail = &job->next;
        pthread_cond_signal (&s_wake);
    }
    pthread_mutex_unlock (&s_lock);
    if (rc)
        free (job);
    return rc ? -EAGAIN : 0;
}

bool
ks_decoder_take (ks_decoder_inbox_t *self, int *channel_p, jp_msg_t **msg_p, int *rc_p)
{
    pthread_mutex_lock (&self->lock);
    s_job_t *job = self->done;
    if (job) {
        self->done = job->next;
        if (!self->done)
            self->done_tail = &self->done;
    } else {
        uint64_t count;
        if (read (self->fd, &count, sizeof count) < 0) {
            /* nothing was counted: quiet already */
        }
    }
    pthread_mutex_unlock (&self->lock);
    if (!job)
        return false;
    *channel_p = job->channel;
    *msg_p = job->msg;
    *rc_p = job->rc;
    free (job);
    return true;
}
