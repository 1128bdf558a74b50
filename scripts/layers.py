"""make layers: the folders are layers, and a file may include only the
headers of its own layer and of the layers below it:

    gateway/cmd                       the program: commands, wiring (main)
    gateway/rest, mcp, jupyter        transports
    gateway/http                      the HTTP edge
    gateway/sql, files, packages      features (attach through session hooks)
    gateway/core                      loop, server, sessions, jobs, kernels
    kernelspec/                       kernelspecs, kernel processes, the
                                      kernel state machine
    protocol/                         the Jupyter wire protocol

A transport may use the features and the HTTP edge; a feature only the
core; the core nothing of gateway/ above it; every folder of gateway/ may
use kernelspec/ and protocol/; kernelspec/ only protocol/; protocol/
nothing of the project. A header named *_internal.h is its folder's own: no
other folder includes it (the core's session and job structs are opaque
above the core).

Then the files: no include cycle between modules anywhere in the project
(gateway/, kernelspec/, protocol/, tests/). A module is foo.c with foo.h
(foo.h is foo's, whichever .c defines a function it declares). Module A
depends on module B when a file of A includes B's header. A header with no .c of
its name (foo_internal.h, the private header several files of one folder
share) is no module: including it is including what it includes, and
depending on the module that defines each function it declares that the
file uses. So files that share an internal header and call each other both
ways are a cycle, as two modules that include each other's headers are.

Exits 1 and names each include that breaks a rule, and each cycle that is
not in KNOWN_CYCLES."""
import os
import re
import sys

# The include cycles on main when this check came (issue 40), each written
# from its alphabetically first module. Other work is removing them: this
# list must only shrink. Never add a cycle to it; remove the cycle instead
# (give the callee a narrow context, or move what both need below both).
KNOWN_CYCLES = set()

LAYERS = {
    "protocol": "protocol",
    "kernelspec": "kernelspec",
    "gateway/core": "core",
    "gateway/http": "http",
    "gateway/sql": "sql",
    "gateway/files": "files",
    "gateway/packages": "packages",
    "gateway/rest": "rest",
    "gateway/mcp": "mcp",
    "gateway/jupyter": "jupyter",
    "gateway/cmd": "cmd",
}

BELOW_GATEWAY = {"protocol", "kernelspec"}
ALLOWED = {
    "protocol": {"protocol"},
    "kernelspec": {"protocol", "kernelspec"},
    "core": BELOW_GATEWAY | {"core"},
    "http": BELOW_GATEWAY | {"core", "http"},
    "sql": BELOW_GATEWAY | {"core", "sql"},
    "files": BELOW_GATEWAY | {"core", "files"},
    "packages": BELOW_GATEWAY | {"core", "packages"},
    "rest": BELOW_GATEWAY | {"core", "http", "rest", "sql", "files", "packages"},
    "mcp": BELOW_GATEWAY | {"core", "http", "mcp", "sql", "files", "packages"},
    "jupyter": BELOW_GATEWAY | {"core", "http", "jupyter", "sql", "files", "packages"},
    "cmd": BELOW_GATEWAY | {"core", "http", "rest", "mcp", "jupyter", "sql", "files",
                            "packages", "cmd"},
}

# gateway/core in sub-layers, lowest first: a core file may include only
# headers of its own sub-layer or those below (a file with its header is
# one module; every core file must be named here).
CORE_SUBLAYERS = [
    ("base", {"gw_ansi", "gw_base64", "gw_caller", "gw_config", "gw_error", "gw_fs", "gw_id",
              "gw_path", "gw_disk", "gw_exec_options", "gw_upload", "gw_changes",
              "gw_artifacts", "gw_stream", "gw_version"}),
    ("loop", {"gw_mailbox", "gw_loop", "gw_request"}),
    ("jobs", {"gw_execution", "gw_job", "gw_job_internal", "gw_hooks", "gw_metrics",
              "gw_session_record"}),
    ("host", {"gw_seccomp", "gw_sandbox_limits", "gw_sandbox_internal", "gw_sandbox", "gw_sandbox_etc",
              "gw_ipykernel", "gw_launch", "gw_pool", "gw_pool_preload", "gw_fork_server", "gw_kernel_epoll", "gw_state_dir",
              "gw_runtime_dir", "gw_registry"}),
    ("sessions", {"gw_session", "gw_session_internal", "gw_session_info",
                  "gw_session_durable", "gw_server",
                  "gw_server_internal", "gw_server_state", "gw_server_loop", "gw_sessions",
                  "gw_sessions_kept"}),
]

# Outside the layers, but in the include graph: the tests.
TEST_DIRS = ("tests",)

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def s_sources(folder):
    """The .c and .h files right in folder, sorted."""
    return [os.path.join(folder, n) for n in sorted(os.listdir(folder))
            if n.endswith((".c", ".h"))]


def s_includes(text):
    return [os.path.basename(h) for h in INCLUDE.findall(text)]


def check_layers(root):
    """The layer rules; returns (lines that break them, files checked)."""
    where = {}
    files = []
    bad = []
    gateway = os.path.join(root, "gateway")
    for name in sorted(os.listdir(gateway)):
        path = os.path.join(gateway, name)
        if os.path.isdir(path) and "gateway/" + name not in LAYERS:
            bad.append("gateway/%s is not a known layer (scripts/layers.py)" % name)
        elif name.endswith((".c", ".h")):
            bad.append("gateway/%s is in no layer" % name)
    for folder, layer in LAYERS.items():
        for path in s_sources(os.path.join(root, folder)):
            where[os.path.basename(path)] = layer
            files.append((layer, path))
    for layer, path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for header in s_includes(text):
            target = where.get(header)
            if target and header.endswith("_internal.h") and target != layer:
                bad.append("%s (%s) includes %s, private to %s"
                           % (os.path.relpath(path, root), layer, header, target))
            elif target and target not in ALLOWED[layer]:
                bad.append("%s (%s) includes %s (%s)"
                           % (os.path.relpath(path, root), layer, header, target))
    return bad, files


def check_core_sublayers(root):
    """The core's sub-layer rules; returns the lines that break them."""
    rank = {}
    for i, (_, names) in enumerate(CORE_SUBLAYERS):
        for name in names:
            rank[name] = i
    bad = []
    for path in s_sources(os.path.join(root, "gateway", "core")):
        module = os.path.basename(path)[:-2]
        if module not in rank:
            bad.append("%s is in no core sub-layer (CORE_SUBLAYERS, scripts/layers.py)"
                       % os.path.relpath(path, root))
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for header in s_includes(text):
            target = rank.get(header[:-2])
            if target is not None and target > rank[module]:
                bad.append("%s (core/%s) includes %s (core/%s)"
                           % (os.path.relpath(path, root), CORE_SUBLAYERS[rank[module]][0],
                              header, CORE_SUBLAYERS[target][0]))
    return bad


def s_code(text):
    """text without comments and with empty string literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def s_defined(code):
    """The functions a .c file defines for other files (not static): the
    house style puts the name at the start of the line after the type."""
    names = []
    lines = code.split("\n")
    for i in range(1, len(lines)):
        m = re.match(r"([A-Za-z_]\w*) \(", lines[i])
        before = lines[i - 1].rstrip()
        if (m and before and not before.startswith(("static", "#"))
                and not before.endswith((";", "}", "{", ","))):
            names.append(m.group(1))
    return names


def module_graph(root):
    """{module: {module it depends on: (file, why)}} over the project."""
    paths = {}
    for folder in LAYERS:
        for path in s_sources(os.path.join(root, folder)):
            paths[os.path.basename(path)] = path
    for top in TEST_DIRS:
        for dirpath, dirnames, _ in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d != "node_modules")
            for path in s_sources(dirpath):
                paths.setdefault(os.path.basename(path), path)
    code, includes = {}, {}
    for name, path in paths.items():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        code[name] = s_code(text)
        includes[name] = [h for h in s_includes(text) if h in paths]
    modules = {n[:-2] for n in paths if n.endswith(".c")}
    owner = {}      # the project's definition first (the tests' fixtures
    for name in paths:      # replace weak ones of gateway/)
        if name.endswith(".c"):
            for function in s_defined(code[name]):
                owner.setdefault(function, name[:-2])
    declares = {}   # what a header of no module declares, by its definer
    for name in paths:
        if name.endswith(".h") and name[:-2] not in modules:
            called = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", code[name]))
            declares[name] = {f: owner[f] for f in called if f in owner}

    edges = {}
    for name in paths:
        a = name[:-2]
        if a not in modules:
            continue        # its includes count for the files that include it
        used = set(re.findall(r"\b[A-Za-z_]\w*\b", code[name]))
        seen = set()
        todo = list(includes[name])
        while todo:
            header = todo.pop()
            if header in seen or not header.endswith(".h"):
                continue
            seen.add(header)
            b = header[:-2]
            if b in modules:
                if b != a:
                    edges.setdefault(a, {}).setdefault(b, (paths[name], "includes " + header))
                continue
            todo.extend(includes[header])     # no module: what it includes...
            for function, c in sorted(declares[header].items()):
                if c != a and function in used:     # ...and who defines what it declares
                    edges.setdefault(a, {}).setdefault(c, (paths[name], "uses " + function))
    return edges


def cycles(edges, limit=1000):
    """Every elementary cycle, as a list of modules starting from its
    alphabetically first one (at most limit of them)."""
    found = []
    for start in sorted(edges):
        path = [start]
        on_path = {start}
        stack = [iter(sorted(edges.get(start, ())))]
        while stack and len(found) < limit:
            b = next(stack[-1], None)
            if b is None:
                stack.pop()
                on_path.discard(path.pop())
            elif b == start:
                found.append(list(path))
            elif b > start and b not in on_path:
                path.append(b)
                on_path.add(b)
                stack.append(iter(sorted(edges.get(b, ()))))
    return found


def check_cycles(root):
    """Lines for every cycle; the second list holds the unknown ones."""
    edges = module_graph(root)
    shown, unknown = [], []
    found = cycles(edges)
    for cycle in found:
        name = " -> ".join(cycle)
        steps = ["%s %s" % (os.path.relpath(edges[a][b][0], root), edges[a][b][1])
                 for a, b in zip(cycle, cycle[1:] + cycle[:1])]
        line = "cycle %s -> %s (%s)" % (name, cycle[0], "; ".join(steps))
        if name in KNOWN_CYCLES:
            shown.append(line + " [known]")
        else:
            unknown.append(line + " [new: remove it]")
    gone = sorted(KNOWN_CYCLES - {" -> ".join(c) for c in found})
    return shown, unknown, gone


def main(root):
    bad, files = check_layers(root)
    bad += check_core_sublayers(root)
    known, unknown, gone = check_cycles(root)
    for line in known + unknown:
        print("layers: " + line)
    for name in gone:
        print("layers: cycle %s is gone: take it out of KNOWN_CYCLES (scripts/layers.py)" % name)
    for line in bad:
        print("layers: " + line)
    if not bad:
        print("layers: %d files in %d layers (the core in %d), every include goes downwards"
              % (len(files), len(set(l for l, _ in files)), len(CORE_SUBLAYERS)))
    if not unknown:
        print("layers: %d include cycles, all known (KNOWN_CYCLES only shrinks)" % len(known))
    return 1 if bad or unknown else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
