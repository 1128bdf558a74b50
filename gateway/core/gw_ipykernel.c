/* gw_ipykernel: how codebox starts ipykernel kernels. Two startup parts,
 * run by IPKernelApp.exec_lines in a namespace of their own (nothing is
 * left in the user's):
 *  - plt.show() under a backend that cannot show (Agg, which agents select
 *    out of habit) still gives the figures back: pyplot.show is patched as
 *    pyplot is imported. Under Agg, PDF, SVG and the like, show() displays
 *    each open figure once as a PNG display_data and closes it; under
 *    other backends it is pyplot's own.
 *  - A flush of sys.stdout or sys.stderr with nothing written returns at
 *    once. ipykernel's OutStream.flush hands two callbacks to its iopub
 *    thread and waits for the second even when its buffer is empty, and
 *    the kernel flushes both streams several times per cell: about 1 ms a
 *    cell on a 2-CPU VM (docs/PERFORMANCE.md). A stream with text
 *    waiting, a flush already scheduled, an echo stream, or an OutStream
 *    of another shape (other ipykernel versions) keeps ipykernel's flush.
 * And two settings: IPython's input history in memory (its SQLite file
 * costs about 1 ms a cell) unless the operator keeps it on disk
 * (CODEBOX_KERNEL_HISTORY), and no `Kernel._execute_sleep`: ipykernel
 * sleeps 0.5 ms before each execute_reply, a mitigation of old for clients
 * that stop reading at the reply; codebox and Jupyter's clients wait for
 * the idle on iopub, which follows all output.
 *
 * Threads: any (the arguments are made once). */
#include "gw_ipykernel.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_base64.h"

static const char S_STARTUP_PY[] =
    "import sys\n"
    "\n"
    "\n"
    "def _codebox_show(pyplot):\n"
    "    \"\"\"plt.show() under a backend that cannot show (Agg and the like)\n"
    "    displays each open figure once, as the inline backend would, then\n"
    "    closes it.\"\"\"\n"
    "    original = pyplot.show\n"
    "\n"
    "    def show(*args, **kwargs):\n"
    "        import matplotlib\n"
    "        backend = str(matplotlib.get_backend()).lower()\n"
    "        if backend not in (\"agg\", \"pdf\", \"ps\", \"svg\", \"cairo\", \"pgf\", \"template\"):\n"
    "            return original(*args, **kwargs)\n"
    "        import io\n"
    "        from IPython.display import Image, display\n"
    "        for num in pyplot.get_fignums():\n"
    "            figure = pyplot.figure(num)\n"
    "            buf = io.BytesIO()\n"
    "            figure.savefig(buf, format=\"png\", bbox_inches=\"tight\")\n"
    "            display(Image(data=buf.getvalue(), format=\"png\"))\n"
    "        pyplot.close(\"all\")\n"
    "\n"
    "    show.__doc__ = original.__doc__\n"
    "    show.__wrapped__ = original\n"
    "    pyplot.show = show\n"
    "\n"
    "\n"
    "class _CodeboxPyplotFinder:\n"
    "    \"\"\"Patches matplotlib.pyplot as it is imported.\"\"\"\n"
    "\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name != \"matplotlib.pyplot\":\n"
    "            return None\n"
    "        import importlib.util\n"
    "        sys.meta_path.remove(self)\n"
    "        try:\n"
    "            spec = importlib.util.find_spec(name)\n"
    "        finally:\n"
    "            sys.meta_path.insert(0, self)\n"
    "        if spec is None or spec.loader is None or not hasattr(spec.loader, \"exec_module\"):\n"
    "            return spec\n"
    "        run = spec.loader.exec_module\n"
    "\n"
    "        def exec_module(module):\n"
    "            run(module)\n"
    "            _codebox_show(module)\n"
    "            sys.meta_path[:] = [f for f in sys.meta_path if f is not self]\n"
    "\n"
    "        spec.loader.exec_module = exec_module\n"
    "        return spec\n"
    "\n"
    "\n"
    "if \"matplotlib.pyplot\" in sys.modules:\n"
    "    _codebox_show(sys.modules[\"matplotlib.pyplot\"])\n"
    "else:\n"
    "    sys.meta_path.insert(0, _CodeboxPyplotFinder())\n"
    "\n"
    "\n"
    "def _codebox_quick_flush(stream_class):\n"
    "    \"\"\"OutStream.flush returns at once when there is nothing to send.\"\"\"\n"
    "    import io\n"
    "    original = stream_class.flush\n"
    "\n"
    "    def flush(self):\n"
    "        lock = getattr(self, \"_buffer_lock\", None)\n"
    "        if (lock is not None and self.__dict__.get(\"echo\", False) is None\n"
    "                and self.__dict__.get(\"_flush_pending\") is False\n"
    "                and self.__dict__.get(\"_subprocess_flush_pending\") is False):\n"
    "            with lock:\n"
    "                buffer = self.__dict__.get(\"_buffer\")\n"
    "                if isinstance(buffer, io.StringIO) and buffer.tell() == 0:\n"
    "                    return None\n"
    "        return original(self)\n"
    "\n"
    "    flush.__doc__ = original.__doc__\n"
    "    flush.__wrapped__ = original\n"
    "    stream_class.flush = flush\n"
    "\n"
    "\n"
    "try:\n"
    "    from ipykernel.iostream import OutStream as _stream_class\n"
    "except ImportError:\n"
    "    _stream_class = None\n"
    "if _stream_class is not None and isinstance(sys.stdout, _stream_class):\n"
    "    _codebox_quick_flush(_stream_class)\n";

/* {history in memory, no sleep, exec_lines, NULL}: from [0] with the
   history in memory, from [1] with it on disk */
static char *s_argv[4];
static pthread_once_t s_once = PTHREAD_ONCE_INIT;

/* The exec_lines argument: the startup code, base64-encoded so that no
 * quoting of the command line can change it, run in a namespace of its
 * own. */
static void
s_make_argv (void)
{
    char *b64 = gw_base64_encode ((const uint8_t *) S_STARTUP_PY, sizeof S_STARTUP_PY - 1);
    /* IPython's on-disk history (SQLite) costs about 1 ms per cell */
    s_argv[0] = (char *) "--HistoryManager.hist_file=:memory:";
    s_argv[1] = (char *) "--Kernel._execute_sleep=0";
    if (b64 && asprintf (&s_argv[2], "--IPKernelApp.exec_lines=exec(__import__('base64')"
                         ".b64decode('%s').decode(), {'__name__': '__codebox__'})", b64) < 0)
        s_argv[2] = NULL;
    free (b64);
}

const char *const *
gw_ipykernel_argv (const ks_spec_t *spec, const gw_config_t *config)
{
    bool ipykernel = false;
    for (size_t i = 0; i < spec->argc && !ipykernel; i++)
        ipykernel = strstr (spec->argv[i], "ipykernel") != NULL;
    if (!ipykernel)
        return NULL;
    pthread_once (&s_once, s_make_argv);
    if (!s_argv[2])
        return NULL;
    bool on_disk = strcmp (gw_config_str (config, GW_SET_KERNEL_HISTORY), "disk") == 0;
    return (const char *const *) s_argv + (on_disk ? 1 : 0);
}
