/* gw_cmd_exec: `codebox exec [--kernel NAME] FILE|-`: starts a fresh
 * kernel, runs the code once, prints its outputs as they arrive (stdout to
 * stdout, stderr and tracebacks to stderr, results to stdout, images saved
 * to files whose names are printed), ends the kernel. The kernel works in
 * the current folder, or with --isolated in an empty one
 * (gw_cmd_exec_place.c).
 *
 * Exit codes: 0 ran; 1 the code raised; 2 usage; 3 the kernel failed to
 * start or died; 124 timeout. Main thread only: it owns the kernel. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "gw_ansi.h"
#include "gw_base64.h"
#include "gw_cli.h"
#include "gw_cmd_exec_place.h"
#include "jp_bundle_text.h"
#include "jp_time.h"
#include "gw_execution.h"
#include "gw_ipykernel.h"
#include "ks_search.h"

#define MAX_CODE_BYTES (16u << 20)
#define INTERRUPT_GRACE_MS 5000

static volatile sig_atomic_t s_signalled;

static void
s_on_signal (int sig)
{
    s_signalled = sig;
}

typedef struct {
    ks_kernel_t *kernel;
    gw_execution_t *exec;
    const char *output_dir;
    int image_no;
    bool strip_ansi;
    bool kernel_died;
} s_run_t;

/* Writes text to out, without ANSI escape sequences when strip is set. */
static void
s_write_text (FILE *out, const char *text, bool strip)
{
    char *copy = strip ? strdup (text) : NULL;
    if (copy)
        gw_ansi_strip (copy);
    fputs (copy ? copy : text, out);
    free (copy);
}

/* Saves one image of a display to OUTPUT_DIR/codebox-exec-N.EXT (a name not
 * yet taken) and prints the name. Returns true if saved. */
static bool
s_save_image (s_run_t *run, json_t *data, const char *mime, const char *ext)
{
    json_t *value = json_object_get (data, mime);
    const char *text = json_string_value (value);
    if (!text)
        return false;
    uint8_t *bytes = NULL;
    size_t len = 0;
    bool binary = strcmp (ext, "svg") != 0;
    if (binary && gw_base64_decode (text, json_string_length (value), &bytes, &len)) {
        fprintf (stderr, "codebox: %s output is not valid base64; not saved\n", mime);
        return false;
    }
    char path[4096];
    int fd = -1;
    for (int tries = 0; tries < 10000 && fd < 0; tries++) {
        snprintf (path, sizeof path, "%s/codebox-exec-%d.%s", run->output_dir,
                  ++run->image_no, ext);
        fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    bool ok = false;
    if (fd >= 0) {
        const uint8_t *p = binary ? bytes : (const uint8_t *) text;
        size_t n = binary ? len : json_string_length (value);
        ok = write (fd, p, n) == (ssize_t) n;
        ok = close (fd) == 0 && ok;
    }
    free (bytes);
    if (ok)
        printf ("[%s saved to %s]\n", mime, path);
    else
        fprintf (stderr, "codebox: cannot save %s to %s: %s\n", mime, run->output_dir,
                 strerror (errno));
    return ok;
}

/* Prints one output item as it arrives. */
static void
s_on_output (gw_execution_t *exec, json_t *item, void *arg)
{
    (void) exec;
    s_run_t *run = arg;
    const char *type = json_string_value (json_object_get (item, "type"));
    if (strcmp (type, "stream") == 0) {
        const char *name = json_string_value (json_object_get (item, "name"));
        FILE *out = strcmp (name, "stderr") == 0 ? stderr : stdout;
        fputs (json_string_value (json_object_get (item, "content")), out);
        fflush (out);
    } else if (strcmp (type, "result") == 0 || strcmp (type, "display") == 0) {
        json_t *data = json_object_get (item, "data");
        bool saved = s_save_image (run, data, "image/png", "png");
        saved |= s_save_image (run, data, "image/jpeg", "jpg");
        if (!saved)
            saved = s_save_image (run, data, "image/svg+xml", "svg");
        /* the text a model would read: text/plain, else Markdown, LaTeX or HTML as text */
        size_t len = 0;
        const char *mime = NULL;
        char *text = saved ? NULL : jp_bundle_text (data, 1 << 20, &len, &mime);
        if (text)
            printf ("%s\n", text);
        free (text);
        fflush (stdout);
    } else if (strcmp (type, "error") == 0) {
        json_t *tb = json_object_get (item, "traceback");
        size_t i;
        json_t *line;
        if (json_array_size (tb) == 0)
            fprintf (stderr, "%s: %s\n", json_string_value (json_object_get (item, "ename")),
                     json_string_value (json_object_get (item, "evalue")));
        json_array_foreach (tb, i, line) {
            s_write_text (stderr, json_string_value (line), run->strip_ansi);
            fputc ('\n', stderr);
        }
        fflush (stderr);
    }
}

static void
s_on_msg (ks_kernel_t *kernel, jp_channel_t channel, jp_msg_t **msg_p, void *arg)
{
    (void) kernel;
    s_run_t *run = arg;
    if (run->exec)
        gw_execution_feed (run->exec, channel, *msg_p);
}

static void
s_on_state (ks_kernel_t *kernel, ks_kernel_state_t state, void *arg)
{
    s_run_t *run = arg;
    if (state == KS_KERNEL_DEAD && run->exec && !gw_execution_finished (run->exec)) {
        run->kernel_died = true;
        gw_execution_abort (run->exec, GW_EXEC_ERROR, "KernelDied", ks_kernel_error (kernel));
    }
}

static bool
s_ready_or_signalled (void *arg)
{
    s_run_t *run = arg;
    return s_signalled || ks_kernel_state (run->kernel) == KS_KERNEL_READY;
}

static bool
s_finished_or_signalled (void *arg)
{
    s_run_t *run = arg;
    gw_execution_settle (run->exec, jp_time_now_ms ());  /* at the latest each heartbeat */
    return s_signalled || gw_execution_finished (run->exec);
}

static bool
s_never (void *arg)
{
    (void) arg;
    return false;
}

/* Reads all of a file (or stdin for "-") into a new string. */
static char *
s_read_code (const char *path)
{
    FILE *f = strcmp (path, "-") == 0 ? stdin : fopen (path, "re");
    if (!f) {
        fprintf (stderr, "codebox exec: cannot read %s: %s\n", path, strerror (errno));
        return NULL;
    }
    char *code = malloc (MAX_CODE_BYTES + 1);
    size_t n = code ? fread (code, 1, MAX_CODE_BYTES + 1, f) : 0;
    if (f != stdin)
        fclose (f);
    if (code && n > MAX_CODE_BYTES) {
        fprintf (stderr, "codebox exec: %s is larger than 16 MiB\n", path);
        free (code);
        return NULL;
    }
    if (code)
        code[n] = '\0';
    return code;
}

static void
s_help (void)
{
    printf ("Usage: codebox exec [--kernel NAME] [--isolated] [--output-dir DIR]\n"
            "                    [--timeout SECONDS] [--no-sandbox] [--config FILE] FILE|-\n\n"
            "Runs code once in a fresh kernel and prints its outputs: stdout and\n"
            "results to stdout, stderr and tracebacks to stderr; images are saved\n"
            "to DIR/codebox-exec-N.png (default DIR: .) and their names printed.\n\n"
            "The kernel is chosen by --kernel, else by FILE's extension (.py, .js,\n"
            ".r, .m, ... matched to the kernelspecs' languages), else\n"
            "CODEBOX_DEFAULT_KERNEL. It runs in the same sandbox as `codebox serve`\n"
            "(CODEBOX_SANDBOX, the kernel user, the limits) and works in the current\n"
            "folder, read-write, as `python FILE` would: the code reads the files\n"
            "there by relative paths (data.csv beside job.py, when run from its folder)\n"
            "and the files it writes stay there. Inside the sandbox that folder is\n"
            "/session and nothing else of the machine is seen; run as root, the code\n"
            "works as the folder's owner there, so give it only a folder you would let\n"
            "it change.\n\n"
            "  --kernel NAME       kernelspec\n"
            "  --isolated          work in a fresh empty folder instead, removed\n"
            "                      afterwards with whatever the code wrote there\n"
            "  --output-dir DIR    where images go\n"
            "  --timeout SECONDS   interrupt after this long (CODEBOX_EXEC_TIMEOUT)\n"
            "  --no-sandbox        run the kernel unconfined, as you\n"
            "  --config FILE       settings file instead of ./.env\n\n"
            "Exit status: 0 ran, 1 the code raised an error, 2 usage, 3 the kernel\n"
            "failed to start or died, 124 timeout.\n");
}

/* Ends the kernel: orderly shutdown, bounded, then kill. */
static void
s_end_kernel (ks_kernel_t **kernel_p)
{
    ks_kernel_t *kernel = *kernel_p;
    if (ks_kernel_state (kernel) != KS_KERNEL_DEAD && !s_signalled) {
        ks_kernel_shutdown (kernel);
        ks_kernel_run_until (kernel, s_never, NULL, 3000);
    }
    ks_kernel_destroy (kernel_p);
}

/* The kernel for path when --kernel named none: one that speaks the
 * language its extension says (*by_language, the caller's to free), else
 * CODEBOX_DEFAULT_KERNEL. Returns -1 after saying why when no kernelspec
 * speaks that language. */
static int
s_kernel_for (const gw_config_t *config, const char *path, const char **kernel_name,
              char **by_language)
{
    const char *language = strcmp (path, "-") ? ks_search_language_of (path) : NULL;
    if (!*kernel_name && language) {
        *by_language = ks_search_name_for_language (gw_config_str (config, GW_SET_KERNEL_PATH),
                                                    language,
                                                    gw_config_str (config, GW_SET_DEFAULT_KERNEL));
        if (!*by_language) {
            fprintf (stderr, "codebox exec: no kernelspec for %s (the language of %s); "
                     "name one with --kernel (see codebox kernelspecs)\n", language, path);
            return -1;
        }
        *kernel_name = *by_language;
    }
    if (!*kernel_name)
        *kernel_name = gw_config_str (config, GW_SET_DEFAULT_KERNEL);
    return 0;
}

/* Runs code on the ready kernel until it ends, --timeout (then an
 * interrupt, and an abort after INTERRUPT_GRACE_MS) or a signal. Returns
 * the exit code. */
static int
s_execute (s_run_t *run, const char *code, const gw_config_t *config)
{
    run->exec = gw_execution_new (code, (size_t) gw_config_int (config, GW_SET_MAX_OUTPUT_BYTES));
    if (!run->exec)
        return GW_EXIT_KERNEL;
    gw_execution_set_output_handler (run->exec, s_on_output, run);
    if (gw_execution_start (run->exec, run->kernel)) {
        fprintf (stderr, "codebox exec: cannot send the code to the kernel\n");
        return GW_EXIT_KERNEL;
    }
    int timeout_ms = (int) gw_config_int (config, GW_SET_EXEC_TIMEOUT) * 1000;
    if (!ks_kernel_run_until (run->kernel, s_finished_or_signalled, run, timeout_ms)
        && !s_signalled) {
        ks_kernel_interrupt (run->kernel);
        if (!ks_kernel_run_until (run->kernel, s_finished_or_signalled, run,
                                  INTERRUPT_GRACE_MS))
            gw_execution_abort (run->exec, GW_EXEC_TIMEOUT, "TimeoutError",
                                "the execution did not end after an interrupt");
        else
            fprintf (stderr, "codebox exec: interrupted after %ld s (--timeout)\n",
                     gw_config_int (config, GW_SET_EXEC_TIMEOUT));
        return GW_EXIT_TIMEOUT;
    }
    if (s_signalled || run->kernel_died)
        return GW_EXIT_KERNEL;
    return gw_execution_status (run->exec) == GW_EXEC_COMPLETED ? GW_EXIT_OK
                                                                : GW_EXIT_CODE_ERROR;
}

int
gw_cmd_exec (int argc, char **argv)
{
    static const struct option options[] = {
        {"kernel", required_argument, NULL, 'k'},
        {"output-dir", required_argument, NULL, 'o'},
        {"timeout", required_argument, NULL, 't'},
        {"config", required_argument, NULL, 'c'},
        {"no-sandbox", no_argument, NULL, 'n'},
        {"isolated", no_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    bool sandboxed = true, isolated = false;
    const char *kernel_name = NULL, *output_dir = ".", *timeout = NULL, *config_file = NULL;
    int opt;
    while ((opt = getopt_long (argc, argv, "k:o:t:h", options, NULL)) != -1) {
        switch (opt) {
        case 'k': kernel_name = optarg; break;
        case 'o': output_dir = optarg; break;
        case 't': timeout = optarg; break;
        case 'c': config_file = optarg; break;
        case 'n': sandboxed = false; break;
        case 'i': isolated = true; break;
        case 'h': s_help (); return GW_EXIT_OK;
        default: return GW_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf (stderr, "codebox exec: give one FILE, or - for stdin (see --help)\n");
        return GW_EXIT_USAGE;
    }
    gw_config_t *config = gw_cli_load_config (config_file);
    if (!config)
        return GW_EXIT_USAGE;
    if (timeout && gw_cli_flag (config, GW_SET_EXEC_TIMEOUT, "--timeout", timeout)) {
        gw_config_destroy (&config);
        return GW_EXIT_USAGE;
    }
    /* one kernel, started once: a fork server would only add its imports
       before it */
    char ignored[64];
    gw_config_set (config, "CODEBOX_FORK_SERVER", "off", "codebox exec", ignored, sizeof ignored);
    char *by_language = NULL;
    if (s_kernel_for (config, argv[optind], &kernel_name, &by_language) < 0) {
        gw_config_destroy (&config);
        return GW_EXIT_USAGE;
    }
    char err[1024];
    ks_spec_t *spec = ks_search_find (gw_config_str (config, GW_SET_KERNEL_PATH),
                                      kernel_name, err, sizeof err);
    char *code = spec ? s_read_code (argv[optind]) : NULL;
    if (!spec)
        fprintf (stderr, "codebox exec: %s\n", err);
    if (!code) {
        ks_spec_destroy (&spec);
        gw_config_destroy (&config);
        return GW_EXIT_USAGE;
    }

    struct sigaction sa = {.sa_handler = s_on_signal};
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    signal (SIGPIPE, SIG_IGN);

    int exit_code = GW_EXIT_KERNEL;
    s_run_t run = {.output_dir = output_dir, .strip_ansi = !isatty (2)};
    gw_exec_place_t place;
    ks_kernel_options_t kopts = {
        .extra_argv = gw_ipykernel_argv (spec, config),
        .start_timeout_ms = (int) gw_config_int (config, GW_SET_KERNEL_START_TIMEOUT) * 1000,
    };
    /* the place first: it may unshare the mount namespace, which only a
       process of one thread may */
    if (gw_exec_place_open (&place, config, spec, sandboxed, isolated, &kopts, err,
                            sizeof err) < 0) {
        fprintf (stderr, "codebox exec: %s\n", err);
        goto out;
    }
    run.kernel = ks_kernel_new (spec, &kopts);
    gw_exec_place_launched (&place);
    if (!run.kernel)
        goto out;
    ks_kernel_set_handlers (run.kernel, s_on_msg, s_on_state, &run);
    if (ks_kernel_start (run.kernel) == 0)
        ks_kernel_run_until (run.kernel, s_ready_or_signalled, &run, -1);
    if (ks_kernel_state (run.kernel) != KS_KERNEL_READY) {
        if (!s_signalled)
            fprintf (stderr, "codebox exec: %s\n", ks_kernel_error (run.kernel));
        goto out;
    }
    exit_code = s_execute (&run, code, config);
out:
    fflush (stdout);
    if (run.kernel)
        s_end_kernel (&run.kernel);
    gw_execution_destroy (&run.exec);
    gw_exec_place_close (&place);
    free (by_language);
    free (code);
    ks_spec_destroy (&spec);
    gw_config_destroy (&config);
    if (s_signalled)
        return 128 + s_signalled;
    return exit_code;
}
