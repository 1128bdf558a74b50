"""CODEBOX_POOL_PRELOAD: a warm Python kernel has imported numpy, pandas
and matplotlib (pyplot and a plot's PNG readied) before a session takes
it, and the user sees a new kernel all the same: an empty namespace, the
first cell numbered 1, no history, their own matplotlib.use() honoured, a
plot shown. Empty turns it off; names that are no module or no Python name
cost nothing but themselves. A kernel is taken only once its preload is
over (the session never hears the preload's messages)."""
import base64

from conftest import mcp_client, ok, rest_run, stream_of, wait_for

PROBE = ("import sys\n"
         "print(sorted(m for m in ('numpy', 'pandas', 'matplotlib', 'matplotlib.pyplot', "
         "'wave', 'tabnanny') if m in sys.modules))\n"
         "del sys\n")


def preloaded(s, n=2):
    """Waits until n pool kernels finished their preload (the log says)."""
    wait_for(lambda: s.log().count("pool event=preloaded") >= n, "no preload: " + s.log_tail(),
             timeout=90)


def warm_session(s, sid):
    r = s.post("/sessions", {"session_id": sid})
    assert r.status in (200, 201), r.text
    assert "kernel event=warm session=%s " % sid in s.log(), s.log_tail()


def test_preloaded_kernel_looks_new(server_factory):
    s = server_factory(env={"CODEBOX_POOL_SIZE": "1", "CODEBOX_POOL_PRELOAD": None})
    preloaded(s, 1)
    warm_session(s, "p1")
    res = rest_run(s, "p1", PROBE + "%who")
    assert res["error"] is None, res
    assert res["execution_count"] == 1, res     # the preload was not counted
    out = stream_of(res)
    assert "['matplotlib', 'matplotlib.pyplot', 'numpy', 'pandas']" in out, out
    assert "Interactive namespace is empty." in out, out
    res = rest_run(s, "p1", "print(len(In), list(Out), _i1[:6])")
    assert stream_of(res) == "3 [] import\n", res   # In: '', cell 1, this one
    # the user's backend choice holds, and the plot is shown as a PNG
    call = mcp_client(s)
    r = call("exec_code", {"session_id": "p1", "code":
             "import numpy as np; import pandas as pd; import matplotlib; matplotlib.use('Agg'); "
             "import matplotlib.pyplot as plt; df = pd.DataFrame(np.arange(30).reshape(10, 3)); "
             "df.plot(); plt.show(); print(matplotlib.get_backend(), plt.get_fignums())"})
    ok(r)
    images = [c for c in r["content"] if c["type"] == "image"]
    assert len(images) == 1 and base64.b64decode(images[0]["data"])[:4] == b"\x89PNG", r
    text = "\n".join(c.get("text", "") for c in r["content"])
    assert "agg []" in text, text


def test_preload_setting(server_factory):
    # empty: nothing preloaded
    s = server_factory(env={"CODEBOX_POOL_SIZE": "1", "CODEBOX_POOL_PRELOAD": ""})
    wait_for(lambda: "pool event=ready" in s.log(), "no pool kernel: " + s.log_tail(), 60)
    warm_session(s, "n1")
    out = stream_of(rest_run(s, "n1", PROBE))
    assert out == "[]\n", out
    assert "pool event=preloaded" not in s.log()
    s.stop()
    # what to import is the operator's: a missing module or a name that is
    # no Python name is skipped, the rest is imported
    s = server_factory(env={"CODEBOX_POOL_SIZE": "1",
                            "CODEBOX_POOL_PRELOAD": "wave, no_such_module_x ;os.system('x'),"
                                                    "tabnanny"})
    preloaded(s, 1)
    warm_session(s, "w1")
    res = rest_run(s, "w1", PROBE)
    assert res["execution_count"] == 1 and stream_of(res) == "['tabnanny', 'wave']\n", res
