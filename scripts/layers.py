"""make layers: the folders of gateway/ are layers, and a file may include
only the headers of the layers below its own:

    cmd                               the program: commands, wiring (main)
    rest, mcp, jupyter                transports
    http                              the HTTP edge
    sql, files, packages              features (attach through session hooks)
    core                              loop, server, sessions, jobs, kernels

A transport may use the features and the HTTP edge; a feature only the
core; the core nothing above it (protocol/ and kernelspec/ are below all).
A header named *_internal.h is its folder's own: no other folder includes
it (the core's session and job structs are opaque above the core).
Exits 1 and names each include that breaks the rule."""
import os
import re
import sys

ALLOWED = {
    "core": {"core"},
    "http": {"core", "http"},
    "sql": {"core", "sql"},
    "files": {"core", "files"},
    "packages": {"core", "packages"},
    "rest": {"core", "http", "rest", "sql", "files", "packages"},
    "mcp": {"core", "http", "mcp", "sql", "files", "packages"},
    "jupyter": {"core", "http", "jupyter", "sql", "files", "packages"},
    "cmd": {"core", "http", "rest", "mcp", "jupyter", "sql", "files", "packages", "cmd"},
}


def main(root):
    gateway = os.path.join(root, "gateway")
    where = {}
    files = []
    for layer in sorted(os.listdir(gateway)):
        folder = os.path.join(gateway, layer)
        if not os.path.isdir(folder):
            continue
        if layer not in ALLOWED:
            print("layers: gateway/%s is not a known layer (scripts/layers.py)" % layer)
            return 1
        for name in sorted(os.listdir(folder)):
            if name.endswith((".c", ".h")):
                where[name] = layer
                files.append((layer, os.path.join(folder, name)))
    stray = [n for n in os.listdir(gateway) if n.endswith((".c", ".h"))]
    bad = ["gateway/%s is in no layer" % n for n in stray]
    for layer, path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for header in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            target = where.get(os.path.basename(header))
            if target and header.endswith("_internal.h") and target != layer:
                bad.append("%s (%s) includes %s, private to %s" % (os.path.relpath(path, root),
                                                                layer, header, target))
            elif target and target not in ALLOWED[layer]:
                bad.append("%s (%s) includes %s (%s)" % (os.path.relpath(path, root), layer,
                                                        header, target))
    for line in bad:
        print("layers: " + line)
    if not bad:
        print("layers: %d files in %d layers, every include goes downwards"
              % (len(files), len(set(l for l, _ in files))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
