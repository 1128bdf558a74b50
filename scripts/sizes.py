"""make layers (with scripts/layers.py): rooms small enough to read in one
sitting. No source file under gateway/, kernelspec/ or protocol/ over
MAX_FILE_LINES lines, and no function over MAX_FUNCTION_LINES lines (from
the line of its name to its closing brace; the house style puts a
function's name at the start of a line and its braces in the first
column).

Exits 1 and names each file and function over its bound that is not in
KNOWN_FILES or KNOWN_FUNCTIONS."""
import os
import re
import sys

MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 120
FOLDERS = ("gateway", "kernelspec", "protocol")

# What was over the bounds on main when this check came (issue 40). Other
# work is splitting them: these lists must only shrink. Never add to them;
# split the file or the function instead.
KNOWN_FILES = set()
KNOWN_FUNCTIONS = set()


def s_functions(lines):
    """(name, first line, last line) of each function body, 1-based."""
    found = []
    for i, line in enumerate(lines):
        if not line.startswith("{"):
            continue
        start = i - 1       # back over the parameter lines to the name
        while start >= 0 and lines[start].startswith((" ", "\t")):
            start -= 1
        if start < 0 or not re.match(r"[A-Za-z_]\w* \(", lines[start]):
            continue        # not a function (an initialiser, a struct)
        end = i + 1
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        found.append((lines[start].split(" ", 1)[0], start + 1, end + 1))
    return found


def main(root):
    bad = []
    checked = 0
    seen_files, seen_functions = set(), set()
    for top in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as f:
                    lines = f.read().split("\n")
                if lines and lines[-1] == "":
                    lines.pop()
                checked += 1
                if len(lines) > MAX_FILE_LINES:
                    seen_files.add(rel)
                    if rel not in KNOWN_FILES:
                        bad.append("%s has %d lines (at most %d: split it by responsibility)"
                                   % (rel, len(lines), MAX_FILE_LINES))
                for function, first, last in s_functions(lines):
                    key = "%s:%s" % (rel, function)
                    if last - first + 1 > MAX_FUNCTION_LINES:
                        seen_functions.add(key)
                        if key not in KNOWN_FUNCTIONS:
                            bad.append("%s (line %d) has %d lines (at most %d)"
                                       % (key, first, last - first + 1, MAX_FUNCTION_LINES))
    for rel in sorted(KNOWN_FILES - seen_files):
        print("sizes: %s is short enough now: take it out of KNOWN_FILES (scripts/sizes.py)" % rel)
    for key in sorted(KNOWN_FUNCTIONS - seen_functions):
        print("sizes: %s is short enough now (or gone): take it out of KNOWN_FUNCTIONS "
              "(scripts/sizes.py)" % key)
    for line in bad:
        print("sizes: " + line)
    if not bad:
        print("sizes: %d files, none over %d lines and no function over %d but %d known"
              % (checked, MAX_FILE_LINES, MAX_FUNCTION_LINES,
                 len(seen_files) + len(seen_functions)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
