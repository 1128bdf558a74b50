/* gw_notebook: a session as a Jupyter notebook: the lines of its record
 * of cells (gw_session_record) made into nbformat 4.5 (cell ids), every
 * cell in order with its source, outputs and execution count, across
 * kernel restarts: where a cell ran in another kernel run than the one
 * before it, a markdown cell says the kernel was restarted (and why, when
 * the cell before it ended by a timeout or a crash). Each code cell's
 * metadata keeps how it ended ("codebox": {status, run, replay?, via?})
 * and when ("execution": {"iopub.execute_input", "shell.execute_reply"}).
 * The notebook's metadata names the kernelspec and its language.
 *
 * gw_notebook_build is pure (any thread); gw_notebook_of_session reads a
 * session's record (the loop thread). */
#ifndef GW_NOTEBOOK_H
#define GW_NOTEBOOK_H

#include <stddef.h>

#include <jansson.h>

#include "gw_session.h"

#define GW_NOTEBOOK_MIME "application/x-ipynb+json"

/* The notebook (new; NULL on OOM) of a record's text (len bytes of
 * JSON lines; a line that is not a cell is left out) and the session's
 * settings (borrowed: session.json's "kernelspec", "session_id",
 * "created"; NULL: a python3 kernel). */
json_t *gw_notebook_build (const char *text, size_t len, json_t *settings);

/* The session's notebook as JSON text (new, NUL-terminated, *len bytes),
 * or NULL with -errno in *err. */
char *gw_notebook_of_session (gw_session_t *session, size_t *len, int *err);

#endif
