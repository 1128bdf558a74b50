"""exec_sql and POST /sql end to end: the bundled SQLite sample by default,
reads only, large results as a CSV the kernel can load, over REST and MCP."""

import pytest

from conftest import mcp_session


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
