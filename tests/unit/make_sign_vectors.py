#!/usr/bin/python3
"""make_sign_vectors: writes fixtures/sign_vectors.json, the HMAC-SHA256
signatures that the real jupyter_client computes for known keys and
messages, so test_sign.c can check jp_sign against them without Python.

Run it with Debian's Python, which has jupyter_client (7.4.9 here):

    cd tests/unit && /usr/bin/python3 make_sign_vectors.py

Each vector holds the key as hex of its raw bytes ("key_hex"; the key
may be any bytes, not only text), the four frames exactly as jupyter_client
packs them (header, parent_header, metadata, content, UTF-8 text), and
Session.sign() of those frames ("signature", 64 lowercase hex digits, or
"" for the empty key, which jupyter_client treats as unsigned). The output
is deterministic: ids and dates are fixed. Commit the output.
"""
import datetime
import json
import os
import sys

import jupyter_client
from jupyter_client.session import Session

KEYS = [
    # name, raw key bytes
    ("hex64", b"3c1f0a9e5d7b2468ace0bdf13579eca86420fdb97531eca8642b0d9f1e3c5a7b"),
    ("uuid", b"0d4c6f2a-6b2b-4a8e-9c53-1f7f0e2d9b11"),
    ("short", b"k"),
    ("utf8", "clé-ünïcødé-🔑".encode("utf-8")),
    ("binary", bytes([0x00, 0xFF, 0xFE, 0x80, 0x7F, 0x0A, 0x22, 0x5C])),
    # Longer than SHA-256's 64-byte block: HMAC hashes the key first.
    ("long", bytes(range(256)) * 2),
    ("empty", b""),
]

DATE = datetime.datetime(2026, 11, 22, 9, 30, 0, 123456, tzinfo=datetime.timezone.utc)


def header(session, msg_type, msg_id):
    h = session.msg_header(msg_type)
    h["msg_id"] = msg_id
    h["session"] = "b7c3f2e1-0000-4000-8000-000000000001"
    h["username"] = "codebox"
    h["date"] = DATE
    return h


def messages(session):
    """Yields (name, [four frames as bytes]) packed as jupyter_client does."""
    req = session.msg("execute_request", content={
        "code": "print('hi')", "silent": False, "store_history": True,
        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True,
    }, header=header(session, "execute_request", "11111111-2222-4333-8444-555555555555"))
    yield "execute_request", req

    reply = session.msg("execute_reply", content={"status": "ok", "execution_count": 7},
                        parent=req["header"],
                        header=header(session, "execute_reply", "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"))
    reply["metadata"] = {"started": "2026-11-22T09:30:00.000001Z", "dependencies_met": True}
    yield "execute_reply_with_parent", reply

    stream = session.msg("stream", content={
        "name": "stdout", "text": "héllo wörld ✓ 日本語 🎉\n\t\"quoted\" \\ back\u0001",
    }, parent=req["header"],
        header=header(session, "stream", "99999999-8888-4777-a666-555555555555"))
    yield "stream_unicode", stream

    empty = session.msg("kernel_info_request", content={},
                        header=header(session, "kernel_info_request",
                                      "00000000-0000-4000-8000-000000000000"))
    yield "kernel_info_request_empty", empty


def main():
    vectors = []
    for key_name, key in KEYS:
        session = Session(key=key, signature_scheme="hmac-sha256")
        for msg_name, msg in messages(session):
            parts = [session.pack(msg["header"]), session.pack(msg["parent_header"]),
                     session.pack(msg["metadata"]), session.pack(msg["content"])]
            # The frames and signature Session.serialize would send.
            wire = session.serialize(msg)
            assert wire[2:6] == parts and wire[1] == session.sign(parts), msg_name
            vectors.append((key_name, key, msg_name, parts, session))
        # Frames that are not in jupyter_client's own packing (spaces, key
        # order, escapes): the signature covers the exact bytes received.
        raw = [b'{ "msg_type" : "status", "msg_id" : "x" }', b"{}", b'{"a":[1, 2.5, null]}',
               '{"execution_state":"idle","\\u00e9":"\u00e9"}'.encode("utf-8")]
        vectors.append((key_name, key, "raw_spacing", raw, session))

    out = []
    for key_name, key, msg_name, parts, session in vectors:
        sig = session.sign(parts).decode("ascii")
        out.append({
            "name": f"{key_name}/{msg_name}",
            "key_hex": key.hex(),
            "header": parts[0].decode("utf-8"),
            "parent_header": parts[1].decode("utf-8"),
            "metadata": parts[2].decode("utf-8"),
            "content": parts[3].decode("utf-8"),
            "signature": sig,
        })

    doc = {
        "generator": "tests/unit/make_sign_vectors.py",
        "jupyter_client": jupyter_client.__version__,
        "vectors": out,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                        "sign_vectors.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(out)} vectors to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
