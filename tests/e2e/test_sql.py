"""exec_sql and POST /sql end to end: the bundled SQLite sample by default,
reads only, large results as a CSV the kernel can load, over REST and MCP."""

import json
import os
import re
import socket
import threading
import time

import pytest

from conftest import asan, mcp_session, peak_rss_while, vm_rss_kib, wait_for


@pytest.fixture(scope="module")
def server():
    from conftest import Server
    s = Server(env={"CODEBOX_SQL_MAX_INLINE_ROWS": "5", "CODEBOX_POOL_SIZE": "1"})
    r = s.post("/sessions", {"session_id": "db"})
    assert r.status == 201, r.text
    yield s
    s.stop()


def sql(server, query, **extra):
    return server.post("/sql", {"session_id": "db", "query": query, **extra})


def test_small_result_inline(server):
    r = sql(server, "SELECT name FROM categories ORDER BY category_id LIMIT 3")
    assert r.status == 200, r.text
    body = r.json()
    assert [c["name"] for c in body["columns"]] == ["name"]
    assert len(body["rows"]) == 3 and body["row_count"] == 3
    assert "csv_path" not in body


def test_untyped_columns_keep_text_that_looks_like_a_number(server):
    """SQLite's stepping driver gives expression columns no type: a value
    is a number only as SQLite itself writes numbers; '007' stays text."""
    r = sql(server, "SELECT '007' AS a, 42 AS b, 4.5 AS c, '4.50' AS d, ' 42' AS e, "
                    "count(*) AS f, x'00ff' AS g FROM (SELECT 1)")
    assert r.status == 200, r.text
    assert r.json()["rows"] == [["007", 42, 4.5, "4.50", " 42", 1, "AP8="]], r.json()


def test_a_data_source_name_streams_as_its_connection_string(server, tmp_path):
    """DSN=name says nothing of its driver: the gateway asks the odbc.ini
    files which it is, so SQLite's still steps through rows (StepAPI): its
    columns of expressions have no declared type, as with the bundled
    sample's Driver=SQLite3 string (loading the whole result first, the
    driver would call them integer and blob, and hold every row)."""
    from conftest import BIN, Server
    # where the gateway finds its sample: beside it, or one folder up (the
    # sanitizer builds are in build/sanitize)
    here = os.path.dirname(os.path.abspath(BIN))
    sample = next(p for p in (os.path.join(here, "sample.sqlite"),
                              os.path.join(here, "..", "sample.sqlite")) if os.path.exists(p))
    ini = tmp_path / "odbc.ini"
    ini.write_text("[sample_db]\nDriver=SQLite3\nDatabase=%s\nNoCreat=1\n" % sample)
    env = {"ODBCINI": str(ini), "CODEBOX_SQL_DSN": "DSN=sample_db", "CODEBOX_POOL_SIZE": "0"}
    # Debian's SQLite ODBC driver leaks the settings it reads of a data
    # source (five strdup and a calloc, in the driver: LeakSanitizer names
    # no module, as unixODBC has unloaded it by then); the gateway's own
    # leaks are checked by every other test of this file
    env["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    named = Server(env=env)
    try:
        assert named.post("/sessions", {"session_id": "db"}).status == 201
        query = {"session_id": "db", "query": "SELECT 1+1 AS x, x'00ff' AS g, name FROM "
                                              "categories ORDER BY category_id LIMIT 2"}
        got, want = named.post("/sql", query), server.post("/sql", query)
        assert got.status == 200 and want.status == 200, (got.text, want.text)
        assert got.json() == want.json(), (got.json(), want.json())
        assert [c["db_type"] for c in got.json()["columns"][:2]] == ["varchar", "varchar"]
    finally:
        named.stop()


def test_large_result_goes_to_csv_the_kernel_reads(server):
    r = sql(server, "SELECT * FROM order_items")
    assert r.status == 200, r.text
    body = r.json()
    assert len(body["rows"]) == 5                    # CODEBOX_SQL_MAX_INLINE_ROWS
    assert body["row_count"] > 5
    path = body["csv_path"]
    assert path.startswith("/session/input/") and path.endswith(".csv"), path
    code = "import pandas as pd\nprint(len(pd.read_csv(%r)))" % path
    r = server.post("/execute", {"session_id": "db", "code": code})
    rid = r.json()["request_id"]
    res = server.get("/execute/%s/results?wait=60" % rid).json()
    assert res["output"][0]["content"] == "%d\n" % body["row_count"], res


def test_writes_refused_reads_with_keywords_in_strings_allowed(server):
    for q in ("DELETE FROM products", "UPDATE products SET name = 'x'",
              "WITH x AS (DELETE FROM products RETURNING *) SELECT * FROM x",
              "SELECT 1; DROP TABLE products", "ATTACH 'x.db' AS y", "PRAGMA writable_schema=1",
              "CREATE TABLE t (a)"):
        r = sql(server, q)
        assert r.status == 403, (q, r.text)
        assert r.json()["error"]["code"] == "forbidden"
    r = sql(server, "SELECT 'delete me' AS note -- drop table products")
    assert r.status == 200, r.text
    assert r.json()["rows"] == [["delete me"]]
    r = sql(server, "SELECT count(*) FROM products")
    assert r.json()["rows"][0][0] > 0                 # nothing was deleted


def test_errors(server):
    assert sql(server, "SELECT * FROM no_such_table").status == 400
    assert server.post("/sql", {"session_id": "nope", "query": "SELECT 1"}).status == 404
    assert server.post("/sql", {"session_id": "db"}).status == 400
    assert server.post("/sql", "{not json").status == 400
    r = sql(server, "SELECT 1", headers=None)
    assert r.status == 200
    r = server.request("POST", "/sql", {"session_id": "db", "query": "SELECT 1"},
                       headers={"X-Codebox-Sql-Dsn": "Driver=SQLite3;Database=/etc/passwd"})
    assert r.status == 400 and "CODEBOX_ALLOW_CLIENT_SQL_DSN" in r.text


def test_header_lowers_inline_rows(server):
    r = server.request("POST", "/sql", {"session_id": "db", "query": "SELECT * FROM products"},
                       headers={"X-Codebox-Sql-Max-Inline-Rows": "2"})
    assert len(r.json()["rows"]) == 2


def test_exec_sql_over_mcp(server):
    headers = {"Accept": "application/json"}
    headers["Mcp-Session-Id"] = mcp_session(server)
    tools = server.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                           headers=headers).json()["result"]["tools"]
    assert "exec_sql" in [t["name"] for t in tools]

    def call(args):
        r = server.request("POST", "/mcp", {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                            "params": {"name": "exec_sql", "arguments": args}},
                           headers=headers)
        return r.json()["result"]
    res = call({"session_id": "mcp-db", "query": "SELECT count(*) AS n FROM customers"})
    assert not res["isError"], res
    assert res["structuredContent"]["rows"][0][0] > 0
    assert "columns: n" in res["content"][0]["text"]
    res = call({"session_id": "mcp-db", "query": "DROP TABLE customers"})
    assert res["isError"] and "DROP" in res["content"][0]["text"]


RUNAWAY = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
           "SELECT count(*) FROM c")


def cpu_ticks(pid):
    """utime + stime of every thread of pid, in clock ticks."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total


def assert_no_worker_spins(server):
    """The gateway's threads together use a small part of a core over two
    seconds (a worker still running the runaway query would use about a
    whole one)."""
    hz = os.sysconf("SC_CLK_TCK")
    before = cpu_ticks(server.proc.pid)
    time.sleep(2)
    used = (cpu_ticks(server.proc.pid) - before) / hz
    assert used < 0.5, "the gateway used %.2f s of CPU in 2 s: a query still runs" % used


def test_rest_client_that_leaves_cancels_its_query(server):
    assert server.post("/sessions", {"session_id": "runaway"}).status == 201
    body = json.dumps({"session_id": "runaway", "query": RUNAWAY}).encode()
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(b"POST /sql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body)
    s.close()                                     # the client leaves at once
    # the session runs one query at a time: this one answers only once the
    # runaway was stopped (CODEBOX_EXEC_TIMEOUT is 300 s)
    r = server.post("/sql", {"session_id": "runaway", "query": "SELECT 1 AS one"}, timeout=60)
    assert r.status == 200, r.text
    assert r.json()["rows"] == [[1]]
    assert "sql event=cancelled reason=client-gone" in server.log()
    assert_no_worker_spins(server)


def test_mcp_cancelled_call_cancels_its_query(server):
    headers = {"Accept": "application/json", "Mcp-Session-Id": mcp_session(server)}
    answer = {}

    def call():
        answer["r"] = server.request("POST", "/mcp", {
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "exec_sql",
                       "arguments": {"session_id": "mcp-runaway", "query": RUNAWAY}}},
            headers=headers, timeout=120)
    t = threading.Thread(target=call)
    t.start()
    # the call made the session in the turn that queued its query
    wait_for(lambda: server.get("/sessions/mcp-runaway").status == 200, "the call to arrive",
             timeout=30)
    r = server.request("POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                        "params": {"requestId": 7, "reason": "test"}},
                       headers=headers)
    assert r.status == 202, r.text
    t.join(60)
    assert not t.is_alive()
    r = server.request("POST", "/mcp", {
        "jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "exec_sql",
                   "arguments": {"session_id": "mcp-runaway", "query": "SELECT 2 AS two"}}},
        headers=headers, timeout=60)
    res = r.json()["result"]
    assert not res["isError"], res
    assert res["structuredContent"]["rows"] == [[2]]
    assert "mcp event=cancelled" in server.log()
    assert_no_worker_spins(server)


def test_large_values_read_within_a_byte_budget(server):
    """40 rows of a 10 MB BLOB: SQLite's driver steps through them (it held
    every row, as hex, before: 31 -> 824 MiB), each value is cut at 64 KiB
    with a marker, and the answer says what was cut."""
    query = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 40) "
             "SELECT x, zeroblob(10000000) AS b, printf('%.*c', 3000000, 'y') AS t FROM c")
    pid = server.proc.pid
    start = vm_rss_kib(pid)
    r, peak = peak_rss_while(pid, lambda: sql(server, query))
    assert r.status == 200, r.text
    body = r.json()
    if not asan(pid):
        assert peak - start < 128 * 1024, "RSS grew by %d KiB" % (peak - start)
    assert body["row_count"] == 40 and len(body["rows"]) == 5
    assert [c["type"] for c in body["columns"]] == ["integer", "binary", "text"]
    assert body["rows"][0][0] == 1
    # a BLOB: base64 of its first bytes, then its size; text: its head, then its size
    assert re.search(r"\[cut: \d+ of 10000000 bytes\]$", body["rows"][0][1]), body["rows"][0][1][-60:]
    assert re.search(r"^y+…\[cut: \d+ of 3000000 bytes\]$", body["rows"][0][2])
    assert body["cells_cut"] == 80
    assert "80 values were cut to 65536 bytes at most" in body["note"]
    assert body["csv_path"].startswith("/session/input/")
