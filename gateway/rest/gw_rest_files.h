/* gw_rest_files: the file routes' shared ways (gw_rest_files.c): a GET
 * streams a file confined beneath a folder, a PUT writes one there whole
 * or not at all, within the room a quota leaves; used for session folders
 * and volumes (gw_rest_volumes.c) alike, with the same path rules.
 *
 * Threads: the loop thread only. */
#ifndef GW_REST_FILES_H
#define GW_REST_FILES_H

#include <stdbool.h>

#include "gw_request.h"
#include "gw_server.h"

/* The folder a file route serves. */
typedef struct {
    int dirfd;                  /* the folder, open (the caller closes it) */
    long long room;             /* bytes a PUT may still write (PUT only) */
    const char *visible;        /* the folder as kernels see it ("/session") */
    const char *where;          /* "session" or "volume", for error messages */
    const char *quota;          /* what bounds it, for error messages */
    bool anywhere;              /* a PUT may go anywhere in it (else input/, output/) */
} gw_rest_file_target_t;

/* Answers a GET or PUT of given (the path after files/, or NULL): a path
 * relative to the folder or under t->visible, checked by gw_path. */
void gw_rest_file_serve (gw_server_t *server, gw_request_t *req, const gw_rest_file_target_t *t,
                         const char *given);

#endif
