/* gw_id: the size of the ids clients and tokens give: a session id (1-64
 * of [A-Za-z0-9_.-], gw_path), a tenant, a node's name, a kernel's name
 * and its NUL. One constant, so every buffer that holds one agrees.
 *
 * Threads: any. */
#ifndef GW_ID_H
#define GW_ID_H

#define GW_ID_MAX 64                    /* characters of an id */
#define GW_ID_SIZE (GW_ID_MAX + 1)      /* bytes of a buffer that holds one */

#endif
