"""What a call costs the gateway's loop thread in wake-ups (issue 43: CPU
per call). A kernel's iopub rests once read (ks_kernel.h,
KS_IOPUB_REST_MS): the input, result and idle of a quick cell are read
with its reply, in one wake-up, where each used to wake the loop (a
context switch and three system calls apiece). Counted in voluntary
context switches of the loop thread, not timed. That output
still comes while a cell runs is test_rest_events.py's (a cell that
prints, then waits for a file the test uploads once it read the print)."""
from conftest import mcp_client, ok, rest_run


def voluntary_switches(pid, tid):
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches for thread %d" % tid)


def test_a_quick_call_wakes_the_loop_about_twice(server_factory):
    """The request, then the reply with what iopub said: under two
    wake-ups a call when calls follow each other (fewer when the next
    request is already there), not one per message (8.5 before)."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "1"})
    call = mcp_client(s)
    for i in range(20):
        assert ok(call("exec_code", {"session_id": "w", "code": "1+1"}))["result"] == "2"
    loop = s.proc.pid       # the loop runs on the main thread
    n = 150
    before = voluntary_switches(s.proc.pid, loop)
    for i in range(n):
        r = call("exec_code", {"session_id": "w", "code": "print(%d); %d * 2" % (i, i)})
        assert r["content"][0]["text"] == "%d\n%d\n" % (i, i * 2), r
        assert ok(r)["result"] == str(i * 2), r
    per_call = (voluntary_switches(s.proc.pid, loop) - before) / n
    assert per_call < 3.5, "the loop woke %.2f times a call" % per_call


FLOOD = ("from IPython.display import display\n"
         "for i in range(30000):\n"
         "    display({'text/plain': '%05d' % i + 'x' * 2000}, raw=True)\n")


def test_a_flood_is_read_as_it_comes_and_nothing_is_lost(server_factory):
    """A read of more than a little is a kernel that floods: iopub is then
    watched, not rested, so the sockets between the kernel and the
    gateway do not fill and the kernel's PUB drops nothing (rested after
    every read, 28 125 of these 30 000 displays came through)."""
    s = server_factory(env={"CODEBOX_POOL_SIZE": "0"})
    assert s.post("/sessions", {"session_id": "flood"}).status == 201
    res = rest_run(s, "flood", FLOOD, wait=120)
    assert res["status"] == "completed", res.get("error")
    shown = [o["data"]["text/plain"][:5] for o in res["output"] if o["type"] == "display"]
    assert shown == ["%05d" % i for i in range(30000)], \
        "%d displays of 30000 came through" % len(shown)
