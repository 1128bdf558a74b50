"""What codebox's ipykernel kernels run at start: IPKernelApp.exec_lines
runs it in a namespace of its own, so nothing is left in the user's. The
Makefile embeds it in build/codebox as a C string (gw_ipykernel.c, which
also says why each part is here; docs/PERFORMANCE.md has the numbers).

- plt.show() under a backend that cannot show (Agg, which agents select
  out of habit) displays each open figure once as a PNG and closes it.
- A flush of sys.stdout or sys.stderr with nothing written returns at once.
- What is written to fd 1 or 2 (a shell command, a child, C code) comes
  in the order it was written, before the next print and in its own cell;
  a forked child's prints go to the fd too, in order.
- A message for iopub sent from a thread other than ipykernel's iopub
  thread goes out at once when nothing waits in that thread's queue.
- A shell request no longer makes a round trip through the control thread
  first (as in ipykernel 6.30 and 7).
- After a failed cell, the requests that waited are aborted, not one that
  arrives after its "idle".
- IPython's display formatters are made at start, not by the first cell.
- Per cell, no debug log records that no handler writes, no
  inspect.signature of ipykernel's own methods, no dateutil for the
  request's date, no argument binding around IPython's formatters.

Each patch checks the shape of what it patches and leaves ipykernel's own
code in place when it does not match (other ipykernel versions)."""

import functools
import importlib
import inspect
import os
import sys
import threading


def _codebox_show(pyplot):
    """plt.show() under a backend that cannot show (Agg and the like)
    displays each open figure once, as the inline backend would, then
    closes it."""
    original = pyplot.show

    @functools.wraps(original)
    def show(*args, **kwargs):
        import matplotlib
        backend = str(matplotlib.get_backend()).lower()
        if backend not in ("agg", "pdf", "ps", "svg", "cairo", "pgf", "template"):
            return original(*args, **kwargs)
        import io
        from IPython.display import Image, display
        for num in pyplot.get_fignums():
            figure = pyplot.figure(num)
            buf = io.BytesIO()
            figure.savefig(buf, format="png", bbox_inches="tight")
            display(Image(data=buf.getvalue(), format="png"))
        pyplot.close("all")

    pyplot.show = show


class _CodeboxPyplotFinder:
    """Patches matplotlib.pyplot as it is imported."""

    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib.pyplot":
            return None
        import importlib.util
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _codebox_show(module)
            sys.meta_path[:] = [f for f in sys.meta_path if f is not self]

        spec.loader.exec_module = exec_module
        return spec


if "matplotlib.pyplot" in sys.modules:
    _codebox_show(sys.modules["matplotlib.pyplot"])
else:
    sys.meta_path.insert(0, _CodeboxPyplotFinder())


def _codebox_quick_flush(stream_class):
    """OutStream.flush returns at once when there is nothing to send: no
    text in the buffer, no flush scheduled, and no _flush under way in the
    iopub thread (one that has taken the buffer but not yet queued its
    message: whatever the caller sends next, a display for instance, must
    not overtake that text; ipykernel's flush waits for it)."""
    import io
    original = stream_class.flush
    original_flush = stream_class._flush

    @functools.wraps(original)
    def flush(self):
        lock = getattr(self, "_buffer_lock", None)
        if (lock is not None and self.__dict__.get("echo", False) is None
                and self.__dict__.get("_flush_pending") is False
                and self.__dict__.get("_subprocess_flush_pending") is False):
            with lock:
                buffer = self.__dict__.get("_buffer")
                if (isinstance(buffer, io.StringIO) and buffer.tell() == 0
                        and not self.__dict__.get("_codebox_flushing")):
                    return None
        return original(self)

    @functools.wraps(original_flush)
    def tracked_flush(self):
        lock = self._buffer_lock
        with lock:
            self._codebox_flushing = self.__dict__.get("_codebox_flushing", 0) + 1
        try:
            return original_flush(self)
        finally:
            with lock:
                self._codebox_flushing -= 1

    stream_class.flush = flush
    stream_class._flush = tracked_flush


class _CodeboxFdCapture:
    """What one stream's pipe holds, read in order: the pipe ipykernel put
    in place of fd 1 or 2, a decoder that keeps a character split across
    two reads, and the lock under which text goes from the pipe to the
    stream's buffer (the reading thread holds it, and so does every write
    and flush of the kernel's process, after taking what waits)."""

    DRAIN_MAX = 1 << 20

    def __init__(self, stream, fno, fd, write):
        import codecs
        import select
        self.stream, self.fno, self.fd, self.write = stream, fno, fd, write
        self.active = True
        self.in_child = False
        os.register_at_fork(after_in_child=self.leave)
        self.lock = threading.RLock()
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.waiting = select.poll()
        self.waiting.register(fd, select.POLLIN)
        self.stop_read, self.stop_write = os.pipe()

    def leave(self):
        """In a forked child: the parent's thread reads the pipe, and the
        child writes to the fd, into that pipe (child_write)."""
        self.active = False
        self.in_child = True
        self.child_lock = threading.RLock()
        self.child_line = ""

    def child_write(self, string, whole=False):
        """A forked child's write: its text goes to the fd a line at a
        time (all of it when whole), as a program's output does, and the
        parent's thread reads it from the pipe in the order it was written;
        a print's line is one write (the pipe does not mix writes of up to
        4 KiB), so lines of children printing at once do not mix.
        ipykernel would send each write (a print is several) as its own
        message over a new ZeroMQ connection to the parent, which takes
        them from its connections in turn, not in the order they were
        written ("child 0" arrived as "child \\n0"). False when the fd
        cannot take it (closed, its reader gone)."""
        with self.child_lock:
            text = self.child_line + string
            end = len(text) if whole or len(text) > self.DRAIN_MAX else text.rfind("\n") + 1
            self.child_line = text[end:]
            data = text[:end].encode("utf-8", "replace")
            while data:
                try:
                    data = data[os.write(self.fno, data):]
                except InterruptedError:
                    continue
                except OSError:
                    return False
            return True

    def drain(self):
        """Moves what waits in the pipe to the stream, echoing the bytes to
        the original fd as ipykernel does; False once the pipe is at its
        end. The caller holds self.lock. At most DRAIN_MAX bytes a call, so
        a child that floods the fd does not keep the lock: the pipe holds
        64 KiB, so all that waited when the call began is taken."""
        if not self.waiting.poll(0):
            return True
        taken = 0
        while taken < self.DRAIN_MAX:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            taken += len(data)
            text = self.decoder.decode(data)
            if text:
                self.write(self.stream, text)
            copy = self.stream.__dict__.get("_original_stdstream_copy")
            if copy is not None:
                try:
                    os.write(copy, data)
                except OSError:
                    pass
        return True

    def watch(self):
        """The reading thread: waits for the pipe without the lock."""
        import select
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        poller.register(self.stop_read, select.POLLIN)
        while self.stream.__dict__.get("_should_watch", True):
            ready = dict(poller.poll())
            if self.stop_read in ready:
                return
            with self.lock:
                if not self.drain():
                    return


def _codebox_pipe_writers(link, keep):
    """The file descriptors of this process open for writing on the pipe
    /proc names link, but keep."""
    import fcntl
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd != keep and os.readlink("/proc/self/fd/%d" % fd) == link and (
                    fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE) == os.O_WRONLY:
                found.append(fd)
        except OSError:
            pass
    return found


def _codebox_ordered_fd_capture(stream_class, streams):
    """ipykernel 6.17 puts a pipe in place of fds 1 and 2 and has a thread
    per stream read it into the stream (os.read, then the GIL, then
    write): what a shell command or C code writes there can land after the
    main thread's next print, which did not wait for that thread, and at a
    cell's end after the cell's flush; and a UTF-8 character split across
    two of its reads raises in that thread, which ends the capture. Here
    each stream gets a new pipe and a thread of ours that reads it under a
    lock; every write and flush of the kernel's process first takes what
    waits in the pipe under that lock, so text written to the fd before a
    print comes before it. ipykernel's thread ends once its pipe has no
    writer left (it sees the end after the last bytes)."""
    write = stream_class.write
    flush = stream_class.flush
    close = stream_class.close

    def capture_of(self):
        capture = self.__dict__.get("_codebox_capture")
        return capture if capture is not None and capture.active else None

    def child_capture_of(self):
        capture = self.__dict__.get("_codebox_capture")
        return capture if capture is not None and capture.in_child else None

    @functools.wraps(write)
    def ordered_write(self, string):
        child = child_capture_of(self)
        if child is not None and isinstance(string, str):
            if self.echo is not None:
                try:
                    self.echo.write(string)
                except OSError:
                    pass
            if child.child_write(string):
                return len(string)
            child.in_child = False
        capture = capture_of(self)
        if capture is None:
            return write(self, string)
        with capture.lock:
            capture.drain()
            return write(self, string)

    @functools.wraps(flush)
    def ordered_flush(self):
        child = child_capture_of(self)
        if child is not None:
            # what the parent had written but not yet sent when it forked
            # is the parent's to send
            if self.echo is not None:
                try:
                    self.echo.flush()
                except OSError:
                    pass
            if child.child_write("", whole=True):
                return None
            child.in_child = False
        capture = capture_of(self)
        if capture is not None:
            with capture.lock:
                capture.drain()
        return flush(self)

    @functools.wraps(close)
    def ordered_close(self):
        capture = capture_of(self)
        if capture is not None:
            self._should_watch = False
            os.write(capture.stop_write, b"x")
        return close(self)

    replaced = []
    for fno, stream in streams:
        old_read, old_thread = stream._fid, stream.watch_fd_thread
        link = os.readlink("/proc/self/fd/%d" % fno)
        if not link.startswith("pipe:") or os.readlink("/proc/self/fd/%d" % old_read) != link:
            continue
        writers = _codebox_pipe_writers(link, fno)
        new_read, new_write = os.pipe()
        os.set_blocking(new_read, False)
        capture = _CodeboxFdCapture(stream, fno, new_read, write)
        os.dup2(new_write, fno)
        os.close(new_write)
        for fd in writers:
            os.close(fd)
        old_thread.join(5)
        if not old_thread.is_alive():
            os.close(old_read)
        stream._fid = new_read
        stream._codebox_capture = capture
        stream.watch_fd_thread = threading.Thread(target=capture.watch, daemon=True,
                                                  name="codebox-%d-capture" % fno)
        stream.watch_fd_thread.start()
        replaced.append(stream)
    if replaced:
        stream_class.write = ordered_write
        stream_class.flush = ordered_flush
        stream_class.close = ordered_close


def _codebox_direct_iopub(thread_class):
    """ipykernel's IOPubThread sends every iopub message from its own
    thread: a message of the kernel's main thread (status, execute_input,
    results, display data) is queued, the thread is woken through an
    inproc socket, and it sends once it has the GIL, which the main thread
    keeps until it waits for its next request. Here such a message goes
    out at once when nothing waits in the queue. One lock guards the
    socket (used by two threads, one at a time: ZeroMQ allows that across
    a full memory barrier) and the count of queued events, which drops
    only once an event has run, so whatever was queued first is sent
    first. Where the iopub thread does not run (a forked child, after
    stop) ipykernel's own path runs; a child gets a fresh lock."""
    import os
    import threading

    schedule = thread_class.schedule
    really_send = thread_class._really_send
    state = {"lock": threading.Lock()}
    os.register_at_fork(after_in_child=lambda: state.update(lock=threading.Lock()))

    def running(self):
        return self.thread.is_alive() and os.getpid() == self._master_pid

    @functools.wraps(schedule)
    def queued_schedule(self, f):
        if not running(self):
            return schedule(self, f)

        def event():
            try:
                f()
            finally:
                with state["lock"]:
                    self._codebox_queued = max(self.__dict__.get("_codebox_queued", 0) - 1, 0)

        with state["lock"]:
            self._codebox_queued = self.__dict__.get("_codebox_queued", 0) + 1
            self._events.append(event)
        self._event_pipe.send(b"")
        return None

    @functools.wraps(really_send)
    def locked_send(self, *args, **kwargs):
        with state["lock"]:
            return really_send(self, *args, **kwargs)

    @functools.wraps(thread_class.send_multipart)
    def send_multipart(self, *args, **kwargs):
        if running(self) and self.thread is not threading.current_thread():
            with state["lock"]:
                if (self.__dict__.get("_codebox_queued", 0) == 0 and not self._events
                        and self.socket is not None):
                    self.socket.send_multipart(*args, **kwargs)
                    return None
        return self.schedule(lambda: self._really_send(*args, **kwargs))

    thread_class.schedule = queued_schedule
    thread_class._really_send = locked_send
    thread_class.send_multipart = send_multipart


def _codebox_no_control_flush(kernel_class):
    """Before each shell request ipykernel 6 (up to 6.29) hands a flush of
    the control queue to its control thread and has the answer come back
    to the main thread: two thread wake-ups and a fight for the GIL per
    request, though it does not wait for that answer. With a control
    thread, control requests are handled there as they come; ipykernel
    6.30 and 7 dropped this flush for that case, and so does this."""
    original = kernel_class._flush_control_queue

    @functools.wraps(original)
    async def flush_control_queue(self):
        if getattr(self, "control_thread", None) is None:
            return await original(self)
        return None

    kernel_class._flush_control_queue = flush_control_queue


def _codebox_prompt_stop_aborting(kernel_class):
    """After a cell fails, ipykernel aborts the execute requests already
    waiting (stop_on_error) and ends that state with a call_later(0) that
    queues the end behind them: the end waits for the main thread's next
    turn of its event loop, and a request that arrives first is aborted
    too. The error's "idle" goes out before that turn (here at once; see
    _codebox_direct_iopub), and the main thread can lose the GIL for up to
    5 ms to the kernel's other threads, so a client that sent its next
    cell on seeing "idle" saw it aborted now and then. Here, with no
    stop_on_error_timeout, the end is queued at once behind what waited."""
    original = kernel_class._abort_queues

    @functools.wraps(original)
    def abort_queues(self):
        if self.stop_on_error_timeout or getattr(self, "shell_stream", None) is None:
            return original(self)
        self._aborting = True
        # what waits on the socket joins the queue first
        self.shell_stream.flush()

        async def stop_aborting():
            self._aborting = False

        self.schedule_dispatch(stop_aborting)
        return None

    kernel_class._abort_queues = abort_queues


def _codebox_quiet_log(kernel):
    """ipykernel's logger is at DEBUG with its handlers at WARNING, so each
    of its debug calls (four a cell) builds a record, with a walk of the
    stack, that no handler writes. The logger takes its handlers' level."""
    import logging
    log = getattr(kernel, "log", None)
    if isinstance(log, logging.Logger) and log.handlers and log.level < logging.WARNING:
        lowest = min(handler.level for handler in log.handlers)
        if lowest > log.level:
            log.setLevel(lowest)


def _codebox_cached_cell_id(kernelbase, ipkernel):
    """ipykernel asks inspect.signature, twice a cell, whether do_execute
    and run_cell take a cell_id; the answer is kept per function."""
    original = kernelbase._accepts_cell_id
    answers = {}

    @functools.wraps(original)
    def accepts_cell_id(meth):
        key = getattr(meth, "__func__", meth)
        try:
            return answers[key]
        except (KeyError, TypeError):
            pass
        answer = original(meth)
        if len(answers) < 64:
            try:
                answers[key] = answer
            except TypeError:
                pass
        return answer

    kernelbase._accepts_cell_id = accepts_cell_id
    if getattr(ipkernel, "_accepts_cell_id", None) is original:
        ipkernel._accepts_cell_id = accepts_cell_id


def _codebox_quick_dates(jsonutil):
    """jupyter_client parses each incoming header's date with dateutil;
    datetime.fromisoformat reads the same ISO 8601 form (the pattern
    jupyter_client matches first) in a fraction of the time. A date it
    refuses, or one without a zone, takes jupyter_client's path."""
    from datetime import datetime
    original = jsonutil.parse_date
    pattern = jsonutil.ISO8601_PAT

    @functools.wraps(original)
    def parse_date(s):
        if isinstance(s, str) and pattern.match(s):
            try:
                dt = datetime.fromisoformat(s)
            except ValueError:
                dt = None
            if dt is not None and dt.tzinfo is not None:
                return dt
        return original(s)

    jsonutil.parse_date = parse_date


def _codebox_plain_format_calls(formatters):
    """IPython's formatters wrap __call__ with catch_format_error, made by
    the decorator package, which binds every call's arguments to the
    signature (inspect) before it calls through: about 40 µs of every
    result and display. The same caller (catch_format_error's own
    function, which needs the object as its first argument) wraps each
    here without that binding; a call that names the object as a keyword
    is still bound first, as the decorator package does."""
    caller = formatters.catch_format_error.__wrapped__

    def plain(method, signature):
        @functools.wraps(method)
        def call(self, *args, **kwargs):
            if not args:
                bound = signature.bind(self, *args, **kwargs)
                bound.apply_defaults()
                return caller(method, *bound.args, **bound.kwargs)
            return caller(method, self, *args, **kwargs)

        return call

    for cls in list(vars(formatters).values()):
        decorated = vars(cls).get("__call__") if isinstance(cls, type) else None
        method = getattr(decorated, "__wrapped__", None)
        if callable(method) and getattr(cls, "__module__", None) == formatters.__name__:
            cls.__call__ = plain(method, inspect.signature(method))


def _codebox_module(name):
    """The module called name, or None where it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


# Each patch where what it patches has the shape it expects.
_iostream = _codebox_module("ipykernel.iostream")
_kernelbase = _codebox_module("ipykernel.kernelbase")
_ipkernel = _codebox_module("ipykernel.ipkernel")
_jsonutil = _codebox_module("jupyter_client.jsonutil")
_formatters = _codebox_module("IPython.core.formatters")
_ipython = _codebox_module("IPython")
_stream_class = getattr(_iostream, "OutStream", None)
_thread_class = getattr(_iostream, "IOPubThread", None)
_kernel_class = getattr(_kernelbase, "Kernel", None)
_shell = _ipython.get_ipython() if _ipython else None
_kernel = getattr(_shell, "kernel", None)
_pub_thread = getattr(sys.stdout, "pub_thread", None)

if (isinstance(_stream_class, type) and isinstance(sys.stdout, _stream_class)
        and callable(getattr(_stream_class, "_flush", None))
        and hasattr(sys.stdout, "_buffer_lock")):
    _codebox_quick_flush(_stream_class)
_captured = [(fno, stream) for fno, stream in ((1, sys.stdout), (2, sys.stderr))
             if isinstance(_stream_class, type) and isinstance(stream, _stream_class)
             and isinstance(stream.__dict__.get("_fid"), int)
             and isinstance(stream.__dict__.get("watch_fd_thread"), threading.Thread)
             and stream.watch_fd_thread.is_alive() and stream.__dict__.get("_should_watch") is True]
if (_captured and os.path.isdir("/proc/self/fd")
        and all(callable(getattr(_stream_class, name, None)) for name in ("write", "flush", "close"))):
    _codebox_ordered_fd_capture(_stream_class, _captured)
if (isinstance(_thread_class, type) and isinstance(_pub_thread, _thread_class)
        and all(callable(getattr(_thread_class, name, None)) for name in (
            "schedule", "_really_send", "send_multipart", "_handle_event"))
        and all(hasattr(_pub_thread, name) for name in (
            "_events", "thread", "socket", "_master_pid"))):
    _codebox_direct_iopub(_thread_class)
if inspect.iscoroutinefunction(getattr(_kernel_class, "_flush_control_queue", None)):
    _codebox_no_control_flush(_kernel_class)
if (callable(getattr(_kernel_class, "_abort_queues", None))
        and not inspect.iscoroutinefunction(_kernel_class._abort_queues)
        and callable(getattr(_kernel_class, "schedule_dispatch", None))
        and hasattr(_kernel_class, "stop_on_error_timeout")):
    _codebox_prompt_stop_aborting(_kernel_class)
if _kernel is not None:
    _codebox_quiet_log(_kernel)
if _ipkernel and callable(getattr(_kernelbase, "_accepts_cell_id", None)):
    _codebox_cached_cell_id(_kernelbase, _ipkernel)
if (callable(getattr(_jsonutil, "parse_date", None))
        and hasattr(getattr(_jsonutil, "ISO8601_PAT", None), "match")):
    _codebox_quick_dates(_jsonutil)
if callable(getattr(getattr(_formatters, "catch_format_error", None), "__wrapped__", None)):
    _codebox_plain_format_calls(_formatters)
# IPython makes its display formatters when it first formats a result, and
# that first cell of a kernel paid for it (about 13 ms here): a kernel of
# the warm pool does it before it is taken.
_display_formatter = getattr(_shell, "display_formatter", None)
if callable(getattr(_display_formatter, "format", None)):
    try:
        _display_formatter.format(0)
    except Exception:
        pass
