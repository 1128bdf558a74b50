/* gw_rest_kernelspecs: kernelspecs as Jupyter serves them: each spec's
 * kernel.json as "spec" and its resources (logo-*.png/svg, kernel.js,
 * kernel.css of the spec's folder) as URLs under /kernelspecs/{name}/,
 * which serves those files and nothing else of the folder.
 *
 * Threads: the loop thread only. */
#include "gw_rest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_artifacts.h"
#include "gw_path.h"
#include "gw_version.h"
#include "ks_search.h"

/* True for a file name Jupyter offers as a resource of a kernelspec. */
static bool
s_resource_name (const char *name)
{
    return (strncmp (name, "logo-", 5) == 0 && strchr (name, '.'))
           || strcmp (name, "kernel.js") == 0 || strcmp (name, "kernel.css") == 0;
}

/* {"logo-64x64": "/kernelspecs/NAME/logo-64x64.png", "kernel.js": ...} */
static json_t *
s_resources (const ks_spec_t *spec)
{
    json_t *out = json_object ();
    DIR *dir = opendir (spec->resource_dir);
    struct dirent *e;
    while (dir && (e = readdir (dir))) {
        if (!s_resource_name (e->d_name) || strlen (e->d_name) > 200)
            continue;
        char key[256], url[600];
        snprintf (key, sizeof key, "%s", e->d_name);
        if (strncmp (key, "logo-", 5) == 0)
            *strrchr (key, '.') = '\0';
        snprintf (url, sizeof url, "/kernelspecs/%s/%s", spec->name, e->d_name);
        json_object_set_new (out, key, json_string (url));
    }
    if (dir)
        closedir (dir);
    return out;
}

static json_t *
s_model (const ks_spec_t *spec)
{
    return json_pack ("{s:s, s:O, s:o}", "name", spec->name, "spec", spec->json, "resources",
                      s_resources (spec));
}

void
gw_rest_kernelspecs (gw_server_t *server, gw_request_t *req, const char *name)
{
    const gw_config_t *c = gw_server_config (server);
    if (name) {
        char err[600];
        ks_spec_t *spec = ks_search_find (gw_config_str (c, GW_SET_KERNEL_PATH), name, err,
                                          sizeof err);
        if (!spec) {
            gw_request_reply_error (req, GW_E_NOT_FOUND, "%s", err);
            return;
        }
        gw_request_reply_json (req, 200, s_model (spec));
        ks_spec_destroy (&spec);
        return;
    }
    ks_spec_t **specs;
    size_t n;
    if (ks_search_all (gw_config_str (c, GW_SET_KERNEL_PATH), &specs, &n, NULL, NULL)) {
        gw_request_reply_error (req, GW_E_INTERNAL, "out of memory");
        return;
    }
    json_t *all = json_object ();
    for (size_t i = 0; i < n; i++)
        json_object_set_new (all, specs[i]->name, s_model (specs[i]));
    ks_search_free (specs, n);
    gw_request_reply_json (req, 200, json_pack ("{s:s, s:o}", "default",
                                                gw_config_str (c, GW_SET_DEFAULT_KERNEL),
                                                "kernelspecs", all));
}

void
gw_rest_kernelspec_file (gw_server_t *server, gw_request_t *req, const char *name,
                         const char *file)
{
    char err[600];
    if (!s_resource_name (file) || strchr (file, '/') || gw_path_check_relative (file, NULL, 0)) {
        gw_request_reply_error (req, GW_E_NOT_FOUND, "a kernelspec serves only its logos, "
                                "kernel.js and kernel.css");
        return;
    }
    ks_spec_t *spec = ks_search_find (gw_config_str (gw_server_config (server),
                                                     GW_SET_KERNEL_PATH), name, err,
                                      sizeof err);
    if (!spec) {
        gw_request_reply_error (req, GW_E_NOT_FOUND, "%s", err);
        return;
    }
    int dir = open (spec->resource_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = dir < 0 ? -errno : gw_path_open_beneath (dir, file, O_RDONLY | O_CLOEXEC, 0);
    if (dir >= 0)
        close (dir);
    ks_spec_destroy (&spec);
    struct stat st;
    if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)) {
        if (fd >= 0)
            close (fd);
        gw_request_reply_error (req, GW_E_NOT_FOUND, "kernelspec '%s' has no file '%s'", name,
                                file);
        return;
    }
    gw_request_reply_file (req, 200, fd, (uint64_t) st.st_size, gw_mime_for_path (file));
}

void
gw_rest_api_version (gw_server_t *server, gw_request_t *req)
{
    (void) server;
    gw_request_reply_json (req, 200, json_pack ("{s:s}", "version", CODEBOX_VERSION));
}
