/* gw_pool_preload: the code a warm Python kernel of the pool runs before a
 * session takes it (CODEBOX_POOL_PRELOAD: the modules it imports;
 * gw_pool_preload.py says what else it readies). Pure; any thread. */
#ifndef GW_POOL_PRELOAD_H
#define GW_POOL_PRELOAD_H

/* The code of an execute_request (to be sent silent, out of the history)
 * that imports the modules list names (comma- or space-separated), run in
 * a namespace of its own; a name that is not a dotted Python name is left
 * out. NULL when list names none (or out of memory). The caller frees. */
char *gw_pool_preload_code (const char *list);

/* True for a kernelspec language whose warm kernels preload ("python"). */
int gw_pool_preload_language (const char *language);

#endif
