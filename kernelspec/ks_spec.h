/* ks_spec: one kernelspec, parsed from its folder's kernel.json: argv,
 * display_name, language, env (its ${VAR} are expanded at launch, see
 * ks_process_env),
 * interrupt_mode and metadata. Substitutes {connection_file} and
 * {resource_dir} into argv. Pure code, no threads. */
#ifndef KS_SPEC_H
#define KS_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

typedef struct {
    char *name;             /* as the folder is named */
    char *resource_dir;     /* the folder holding kernel.json */
    char **argv;            /* NULL-terminated */
    size_t argc;
    char *display_name;
    char *language;
    bool interrupt_by_message;  /* interrupt_mode "message" */
    json_t *env;            /* object of strings, as written (unexpanded) */
    json_t *json;           /* the whole kernel.json */
} ks_spec_t;

/* Parses kernel.json text for the spec called name in resource_dir. On
 * failure returns NULL and writes a sentence naming the problem into err. */
ks_spec_t *ks_spec_parse (const char *name, const char *resource_dir,
                          const char *text, size_t len, char *err, size_t err_len);

/* Reads and parses resource_dir/kernel.json. As ks_spec_parse. */
ks_spec_t *ks_spec_load (const char *name, const char *resource_dir, char *err,
                         size_t err_len);

/* Frees the spec and nulls *self_p. Safe on NULL. */
void ks_spec_destroy (ks_spec_t **self_p);

/* Returns a new NULL-terminated argv with {connection_file} and
 * {resource_dir} substituted; free it with ks_strv_free. NULL on OOM. */
char **ks_spec_argv (const ks_spec_t *self, const char *connection_file);

/* Returns value with ${NAME} and $NAME replaced from getenv; unknown names
 * stay as written (as Python's Template.safe_substitute). New string. */
char *ks_expand_env (const char *value);

/* True when the kernel is known to bind ipc sockets (ipykernel), so the
 * gateway can use Unix sockets instead of TCP ports. A spec can say so with
 * "metadata": {"codebox": {"transport": "ipc"|"tcp"}}. */
bool ks_spec_supports_ipc (const ks_spec_t *self);

/* Frees a NULL-terminated string vector. Safe on NULL. */
void ks_strv_free (char **strv);

#endif
