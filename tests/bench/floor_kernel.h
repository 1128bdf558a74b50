/* floor_kernel: the C floor's kernel for the benches: a kernel started
 * with the project's own kernel library exactly as the gateway starts it
 * (or, stock, as Jupyter starts it), and one execution of code on it,
 * timed, with no gateway around. Single thread: the caller owns it. */
#ifndef FLOOR_KERNEL_H
#define FLOOR_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct _floor_kernel_t floor_kernel_t;

/* Starts the kernelspec `name` and waits until it is ready (60 s at most).
 * stock: without the arguments the gateway adds. Returns NULL with a
 * message in err on failure. */
floor_kernel_t *floor_kernel_new (const char *name, bool stock, char *err, size_t err_size);

/* Runs code once and returns its round trip in ms (execute_request sent to
 * the kernel's idle after it), or a negative number if it did not finish
 * within 30 s. */
double floor_kernel_exec_ms (floor_kernel_t *self, const char *code);

/* Stops the kernel, removes its runtime folder and nulls *self_p. */
void floor_kernel_destroy (floor_kernel_t **self_p);

#endif
