"""Where a REST execution's time goes against the C floor: the round trip
as a client sees it, the kernel exchange as the gateway times it
(duration_ms: request sent until the kernel is idle), and the floor
(build/bench-floor), measured interleaved in rounds. With `none` as the
argument the gateway runs its kernels without the sandbox.

    make build/bench-floor && /usr/bin/python3 tests/bench/overhead.py [none]
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("CODEBOX_BIN", os.path.join(HERE, "..", "..", "build", "codebox"))
os.environ.setdefault("CODEBOX_FLOOR", os.path.join(HERE, "..", "..", "build", "bench-floor"))

import bench  # noqa: E402  (reads the two paths above)


def main():
    env = {"CODEBOX_POOL_SIZE": "0"}
    if len(sys.argv) > 1:
        env["CODEBOX_SANDBOX"] = sys.argv[1]
    s = bench.Server(env)
    try:
        s.call("POST", "/sessions", {"session_id": "x"})
        trip, kernel, floor = [], [], []
        for _ in range(5):
            for _ in range(40):
                t = time.perf_counter()
                r = s.execute("x", "1+1")
                trip.append(time.perf_counter() - t)
                kernel.append(r["duration_ms"] / 1e3)
            floor += bench.floor_samples(40)
        hop = bench.timed(lambda: s.call("GET", "/sessions/x"), 200)
        direct = bench.timed(lambda: s.call("GET", "/healthz"), 200)
    finally:
        s.stop()

    def p50(v):
        return bench.pct(v, 50) * 1e3
    print("sandbox=%s  p50: round trip %.2f ms, kernel exchange (duration_ms) %.2f ms, "
          "C floor %.2f ms; one HTTP request: %.3f ms through the loop, %.3f ms without"
          % (env.get("CODEBOX_SANDBOX", "auto"), p50(trip), p50(kernel), p50(floor), p50(hop),
             p50(direct)))


if __name__ == "__main__":
    main()
