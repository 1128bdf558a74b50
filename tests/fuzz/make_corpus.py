#!/usr/bin/python3
"""make_corpus: writes the seed corpora of the fuzz targets into
corpus/message/ and corpus/kernelspec/. Run it with Debian's Python, which
has jupyter_client:

    cd tests/fuzz && /usr/bin/python3 make_corpus.py

Message seeds use fuzz_message.c's input format (fuzz_message.h): ZeroMQ
frames joined by the two bytes 0xFF 0x00. The signed seeds are serialized
and signed by jupyter_client's Session with FUZZ_KEY, read from
fuzz_message.h, so they decode as they are. The output is deterministic;
commit it. The exception: the JWT seeds (corpus/jwt/, for fuzz_jwt.c) are
signed with keys made on each run (Python's cryptography), so they differ
from run to run. (Crash inputs that libFuzzer finds are added to the corpus by
hand, named crash-*, and are not touched by this script.)
"""
import base64
import datetime
import json
import os
import re
import struct

from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

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


# fuzz_jwt.c's fixed expectations
JWT_ISS = "https://issuer.example/"
JWT_AUD = "https://codebox.example/mcp"
JWT_NOW = 1750000000


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64u_int(n, size=None):
    return b64u(n.to_bytes(size or (n.bit_length() + 7) // 8, "big"))


def jwt_sign(key, alg, header, claims):
    """A compact JWS of the two JSON objects, signed as an issuer signs."""
    text = b64u(json.dumps(header).encode()) + "." + b64u(json.dumps(claims).encode())
    md = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}[alg[2:]]
    if alg.startswith("RS"):
        sig = key.sign(text.encode(), padding.PKCS1v15(), md)
    elif alg.startswith("PS"):
        sig = key.sign(text.encode(), padding.PSS(padding.MGF1(md), md.digest_size), md)
    elif alg.startswith("ES"):
        r, s = decode_dss_signature(key.sign(text.encode(), ec.ECDSA(md)))
        sig = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    else:
        mac = hmac.HMAC(key, md)
        mac.update(text.encode())
        sig = mac.finalize()
    return text + "." + b64u(sig)


def jwt():
    """fuzz_jwt seeds: a JWKS line, then a token."""
    rsa_key = rsa.generate_private_key(65537, 2048)
    other = rsa.generate_private_key(65537, 2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    rn = rsa_key.public_key().public_numbers()
    en = ec_key.public_key().public_numbers()
    rsa_jwk = {"kty": "RSA", "kid": "rsa-1", "use": "sig", "n": b64u_int(rn.n), "e": b64u_int(rn.e)}
    ec_jwk = {"kty": "EC", "kid": "ec-1", "crv": "P-256",
              "x": b64u_int(en.x, 32), "y": b64u_int(en.y, 32)}
    on = other.public_key().public_numbers()
    enc_jwk = {"kty": "RSA", "kid": "enc-1", "use": "enc", "n": b64u_int(on.n), "e": "AQAB"}
    oct_jwk = {"kty": "oct", "kid": "oct-1", "k": "c2VjcmV0"}
    jwks = json.dumps({"keys": [rsa_jwk, ec_jwk, enc_jwk, oct_jwk]}, separators=(",", ":"))
    claims = {"iss": JWT_ISS, "aud": JWT_AUD, "sub": "alice", "exp": JWT_NOW + 600,
              "iat": JWT_NOW - 10}

    def seed(name, token, keys=jwks):
        write("jwt", name, (keys + "\n" + token).encode())

    seed("rs256_ok", jwt_sign(rsa_key, "RS256", {"alg": "RS256", "kid": "rsa-1"}, claims))
    seed("ps384_ok", jwt_sign(rsa_key, "PS384", {"alg": "PS384", "typ": "at+jwt", "kid": "rsa-1"},
                              dict(claims, aud=["x", JWT_AUD], nbf=JWT_NOW - 5)))
    seed("es256_ok_no_kid", jwt_sign(ec_key, "ES256", {"alg": "ES256", "typ": "JWT"},
                                     dict(claims, sub="bob@example.com")))
    seed("expired", jwt_sign(rsa_key, "RS256", {"alg": "RS256", "kid": "rsa-1"},
                             dict(claims, exp=JWT_NOW - 100)))
    seed("other_audience", jwt_sign(ec_key, "ES256", {"alg": "ES256", "kid": "ec-1"},
                                    dict(claims, aud="https://other.example/")))
    seed("other_key", jwt_sign(other, "RS256", {"alg": "RS256", "kid": "rsa-1"}, claims))
    seed("hs256_confusion", jwt_sign(rn.n.to_bytes(256, "big"), "HS256",
                                     {"alg": "HS256", "kid": "rsa-1"}, claims))
    none = jwt_sign(rsa_key, "RS256", {"alg": "none"}, claims)
    seed("alg_none", none[:none.rindex(".") + 1])
    seed("bad_tenant", jwt_sign(rsa_key, "RS256", {"alg": "RS256", "kid": "rsa-1"},
                                dict(claims, sub="auth0|123")))
    seed("jwe", "eyJhbGciOiJSU0EtT0FFUCJ9.a.b.c.d")
    seed("header_not_json", b64u(b"not json") + ".e30.")
    write("jwt", "jwks_only", jwks.encode())
    write("jwt", "jwks_ec_p521", json.dumps({"keys": [{
        "kty": "EC", "crv": "P-521", "alg": "ES512",
        "x": b64u_int(ec.generate_private_key(ec.SECP521R1()).public_key().public_numbers().x, 66),
        "y": "AA"}]}).encode())


def zmtp_client():
    """Seeds of fuzz_zmtp_client: a step byte, a flags byte (bit 0: the
    harness sends a valid greeting and READY first; bits 1-2: DEALER, SUB,
    REQ), then the kernel's stream."""
    out = os.path.join(HERE, "corpus", "zmtp_client")
    os.makedirs(out, exist_ok=True)

    def frame(body, more=False, command=False):
        flags = (1 if more else 0) | (4 if command else 0)
        if len(body) > 255:
            return bytes([flags | 2]) + struct.pack(">Q", len(body)) + body
        return bytes([flags, len(body)]) + body

    def message(*bodies):
        return b"".join(frame(b, i + 1 < len(bodies)) for i, b in enumerate(bodies))

    greeting = b"\xff" + bytes(7) + b"\x01\x7f\x03\x01NULL" + bytes(16) + bytes(32)
    ready = frame(b"\x05READY\x0bSocket-Type" + struct.pack(">I", 3) + b"PUB", command=True)
    jupyter = message(b"<IDS|MSG>", b"0" * 64, b'{"msg_type":"status","msg_id":"a"}', b"{}", b"{}",
                      b'{"execution_state":"idle"}')
    ping = frame(b"\x04PING\x00\x0aabc", command=True)
    seeds = {
        "handshake_then_message": b"\x07\x01" + jupyter,
        "whole_stream": b"\x00\x02" + greeting + ready + jupyter + jupyter,
        "req_reply": b"\x03\x05" + message(b"", b"ping"),
        "ping_then_message": b"\x05\x01" + ping + jupyter,
        "long_frame": b"\x0b\x01" + message(b"x" * 300, b"y"),
        "over_frames": b"\x11\x01" + message(*[b"z"] * 300) + jupyter,
        "bad_mechanism": b"\x00\x00" + greeting.replace(b"NULL", b"CURV") + ready,
        "command_in_message": b"\x00\x01" + frame(b"a", more=True) + ping,
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


def main():
    zmtp_client()
    jwt()
    messages()
    jupyter_wire()
    for name, data in KERNELSPECS.items():
        write("kernelspec", name, data)


if __name__ == "__main__":
    main()
