"""What a warm Python kernel of the pool runs before a session takes it
(CODEBOX_POOL_PRELOAD): gw_pool_preload.c embeds it and runs it, silent
and out of the history, in a namespace of its own with NAMES the modules
to import, so the user's namespace, In/Out and execution count stay as a
new kernel's; sys.modules shows the imports, as after any import.

- Each module in NAMES, where it is installed; a failing one is skipped.
- With matplotlib: pyplot under the kernel's backend (the inline one under
  ipykernel), and a plot (a DataFrame's with pandas: the first df.plot()
  of a process costs about 80 ms more than the next) drawn to PNG as
  plt.show() draws it, then closed, so no figure is left to show. A
  user's matplotlib.use() still switches the backend.
- IPython's display of images (IPython.display), which plt.show() uses
  under Agg (gw_ipykernel_startup.py)."""

import importlib
import sys


def _codebox_import(name):
    try:
        importlib.import_module(name)
        return True
    except Exception:
        return False


def _codebox_forked():
    """A kernel of the fork server (CODEBOX_FORK_SERVER=on) has these
    modules and the first plot's costs from the server already: drawing
    again here would only copy the shared pages it touches (12 MiB)."""
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return b"codebox-fork-server" in f.read()
    except OSError:
        return False


for _name in NAMES:
    _codebox_import(_name)
_codebox_import("IPython.display")
if "matplotlib" in sys.modules and _codebox_forked() and _codebox_import("matplotlib.pyplot"):
    try:
        # the kernel's backend (inline), hooked into this IPython
        sys.modules["matplotlib.pyplot"].switch_backend(
            sys.modules["matplotlib"].get_backend())
    except Exception:
        pass
elif "matplotlib" in sys.modules and _codebox_import("matplotlib.pyplot"):
    try:
        import io
        pyplot = sys.modules["matplotlib.pyplot"]
        if "pandas" in sys.modules:
            # pandas' converters are registered for the call only (its
            # default "auto"): nothing stays changed
            axes = sys.modules["pandas"].DataFrame({"a": [0, 1], "b": [1, 0]}).plot()
            figure = axes.figure
        else:
            figure = pyplot.figure()
            figure.add_subplot().plot([0, 1], [1, 0], label="a")
            figure.legend()
        figure.savefig(io.BytesIO(), format="png", bbox_inches="tight")
        pyplot.close(figure)
    except Exception:
        pass
# What was loaded stays for the kernel's life: a full collection now, and
# those objects kept out of the later ones (gc.freeze), so that the user's
# first cells do not pay for walking them.
import gc
gc.collect()
gc.freeze()
