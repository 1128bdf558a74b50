#!/usr/bin/python3
"""make_corpus: writes the seed corpora of the fuzz targets into
corpus/message/ and corpus/kernelspec/. Run it with Debian's Python, which
has jupyter_client:

    cd tests/fuzz && /usr/bin/python3 make_corpus.py

Message seeds use fuzz_message.c's input format (fuzz_message.h): ZeroMQ
frames joined by the two bytes 0xFF 0x00. The signed seeds are serialized
and signed by jupyter_client's Session with FUZZ_KEY, read from
fuzz_message.h, so they decode as they are. The output is deterministic;
commit it. (Crash inputs that libFuzzer finds are added to the corpus by
hand, named crash-*, and are not touched by this script.)
"""
import datetime
import json
import os
import re
import struct

from jupyter_client.session import Session

HERE = os.path.dirname(os.path.abspath(__file__))
SEP = b"\xff\x00"
KEY = re.search(r'#define FUZZ_KEY "([0-9a-f]+)"',
                open(os.path.join(HERE, "fuzz_message.h")).read()).group(1).encode()
DATE = datetime.datetime(2026, 11, 22, 9, 30, 0, 123456, tzinfo=datetime.timezone.utc)


def write(folder, name, data):
    path = os.path.join(HERE, "corpus", folder, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def header(session, msg_type, msg_id):
    h = session.msg_header(msg_type)
    h.update(msg_id=msg_id, session="fuzz-session", username="fuzz", date=DATE)
    return h


def messages():
    s = Session(key=KEY, signature_scheme="hmac-sha256")
    req = s.msg("execute_request", content={"code": "print('é✓')", "silent": False},
                header=header(s, "execute_request", "00000000-1111-4222-8333-444444444444"))
    write("message", "signed_execute_request", SEP.join(s.serialize(req)))

    reply = s.msg("execute_reply", content={"status": "ok", "execution_count": 1},
                  parent=req["header"],
                  header=header(s, "execute_reply", "55555555-6666-4777-8888-999999999999"))
    reply["metadata"] = {"started": "2026-11-22T09:30:00.000001Z"}
    write("message", "signed_reply_with_ids",
          SEP.join(s.serialize(reply, ident=[b"router-id", b"\x00\x01\x02"])))

    disp = s.msg("display_data", content={"data": {"image/png": "iVBORw0KGgo="},
                                          "metadata": {}, "transient": {}},
                 header=header(s, "display_data", "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"))
    frames = s.serialize(disp)
    write("message", "signed_with_buffers", SEP.join(frames + [b"\x89PNG\r\n", b""]))

    # Signed correctly, but the frames break a rule after the signature.
    bad = [b'{"msg_id":"x"}', b"{}", b"[]", b'{"a":1e999}']
    write("message", "signed_bad_header_and_json",
          SEP.join([b"<IDS|MSG>", s.sign(bad)] + bad))
    # Unsigned (wrong signature), truncated, no delimiter.
    write("message", "bad_signature",
          SEP.join([b"<IDS|MSG>", b"0" * 64, b'{"msg_id":"1","msg_type":"t"}', b"{}", b"{}",
                    b'{"x":[1,2.5,true,null,"\\u0000"]}']))
    write("message", "truncated", SEP.join([b"id", b"<IDS|MSG>", b"sig", b"{}"]))
    write("message", "no_delimiter", SEP.join([b"a", b"b", b"c", b"d", b"e", b"f"]))


def jupyter_wire():
    """Websocket frames; the first byte picks the form (1: binary, 2: v1)."""
    hdr = {"msg_id": "1", "msg_type": "execute_request", "session": "s", "username": "u",
           "version": "5.3", "date": ""}
    text = json.dumps({"header": hdr, "parent_header": {}, "metadata": {},
                       "content": {"code": "1"}, "channel": "shell"}).encode()
    write("jupyter_wire", "text", b"\x00" + text)
    write("jupyter_wire", "text-nochannel", b"\x00" + json.dumps({"header": hdr}).encode())
    bufs = [text, b"abc", b""]
    offs = [4 * (len(bufs) + 1)]
    for b in bufs[:-1]:
        offs.append(offs[-1] + len(b))
    write("jupyter_wire", "json-binary",
          b"\x01" + struct.pack("!" + "I" * (len(bufs) + 1), len(bufs), *offs) + b"".join(bufs))
    parts = [b"iopub"] + [json.dumps(x).encode() for x in (hdr, {}, {}, {"a": 1})] + [b"buf"]
    o = [8 * (1 + 1 + len(parts))]
    for p in parts:
        o.append(o[-1] + len(p))
    write("jupyter_wire", "v1", b"\x03" + struct.pack("<Q", len(o))
          + b"".join(struct.pack("<Q", x) for x in o) + b"".join(parts))


KERNELSPECS = {
    "ipykernel.json": b'{"argv": ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],'
                      b' "display_name": "Python 3 (ipykernel)", "language": "python",'
                      b' "metadata": {"debugger": true}}\n',
    "full.json": '{"argv": ["{resource_dir}/k", "--f={connection_file}", "{x}"],'
                 ' "display_name": "Full ✓", "language": "python",'
                 ' "env": {"A": "${HOME}/$USER/$$/${NOPE}/${", "B": ""},'
                 ' "interrupt_mode": "message",'
                 ' "metadata": {"codebox": {"transport": "ipc"}}}\n'.encode("utf-8"),
    "minimal.json": b'{"argv": ["node", "{connection_file}"]}',
    "tcp.json": b'{"argv": ["ipykernel"], "metadata": {"codebox": {"transport": "tcp"}}}',
    "not_json.json": b'{"argv": ["python3", ',
    "argv_number.json": b'{"argv": ["python3", 3]}',
    "env_not_object.json": b'{"argv": ["x"], "env": ["A=1"]}',
    "interrupt_bad.json": b'{"argv": ["x"], "interrupt_mode": "sigint"}',
    "top_array.json": b'["x"]',
    "env_template.txt": b"$HOME ${HOME} $$ ${UNSET_X} $ ${ $1 ${}",
}


def main():
    messages()
    jupyter_wire()
    for name, data in KERNELSPECS.items():
        write("kernelspec", name, data)


if __name__ == "__main__":
    main()
