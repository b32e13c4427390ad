#!/usr/bin/env python3
"""Checks the Swift code blocks of the Markdown documents (scripts/check-snippets.sh runs it).

  snippets.py generate DIR   extract every ```swift block, check manifests, write a package to DIR
  snippets.py report DIR LOG after a failed `swift build` of DIR: each failing block's file:line and message
  snippets.py run DIR        run the complete programs (each with its own HOME and XDG folders) and the tests

A block is one of:
  - a Package.swift manifest (it has `swift-tools-version`): checked with `swift package dump-package` in a
    temporary folder beside a link named SecureStore to this checkout (so `../SecureStore` resolves), and
    when all its dependencies are paths, with `swift package show-dependencies` (products, traits);
  - a complete program (it has its own `import` lines): an executable target whose main.swift is the block;
    it runs and must exit 0;
  - a test file (it imports Testing): a test target; its tests run (`swift test`) and must pass;
  - a fragment: it needs a marker on the line before its fence (blank lines may come between):
      <!-- snippet: prelude=NAME -->   scripts/snippets/NAME.swift comes first (NAME,NAME2: several)
      <!-- snippet: wraps=NAME -->     the block replaces the line `// snippet` of scripts/snippets/NAME.swift
    A block with a prelude or a wrapper gets an `import` of Foundation and of every library module of this package (read from
    `swift package dump-package`, never written down here), so preludes have no imports of their own.
  Two more markers: `compile-only reason="…"` (a complete program that cannot run here: it needs a server or
  a path that does not exist) and `skip reason="…"` (a block that cannot compile here). Both need a reason.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PRELUDES = os.path.join("scripts", "snippets")
MARKER = re.compile(r"^\s*<!--\s*snippet:(.*?)-->\s*$")
OPTION = re.compile(r'\s*([a-z-]+)(?:=("([^"]*)"|[^\s"]+))?')
FENCE = re.compile(r"^(\s*)```swift\s*$")


def documents():
    """README.md, every Markdown file under a .docc catalog, and any other tracked .md with a Swift block."""
    tracked = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    return sorted(path for path in tracked if "```swift" in open(os.path.join(ROOT, path), encoding="utf-8").read())


def parse_marker(text, where):
    options = {}
    pos = 0
    while pos < len(text):
        match = OPTION.match(text, pos)
        if not match or match.end() == pos:
            if text[pos:].strip():
                sys.exit(f"{where}: cannot read the snippet marker `{text.strip()}`")
            break
        key, raw, quoted = match.group(1), match.group(2), match.group(3)
        options[key] = quoted if quoted is not None else (raw if raw is not None else True)
        pos = match.end()
    known = {"skip", "compile-only", "reason", "prelude", "wraps"}
    if set(options) - known:
        sys.exit(f"{where}: unknown snippet option(s) {sorted(set(options) - known)}; known: {sorted(known)}")
    if ("skip" in options or "compile-only" in options) and not options.get("reason"):
        sys.exit(f"{where}: `skip` and `compile-only` need a reason=\"…\"")
    return options


def extract(path):
    """Yields (line of the first code line, code, marker options) for every ```swift block of path."""
    lines = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent = len(fence.group(1))
        start = i + 1
        j = start
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        if j == len(lines):
            sys.exit(f"{path}:{i + 1}: a ```swift block that never ends")
        code = "\n".join(line[indent:] for line in lines[start:j]) + "\n"
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = MARKER.match(lines[k]) if k >= 0 else None
        options = parse_marker(marker.group(1), f"{path}:{k + 1}") if marker else {}
        yield start + 1, code, options
        i = j + 1


def library_modules():
    """The modules of this package's library products, from its manifest."""
    dump = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, capture_output=True,
                                     text=True, check=True).stdout)
    products = [p for p in dump["products"] if "library" in p["type"]]
    modules = []
    for product in products:
        modules += [t for t in product["targets"] if t not in modules]
    return [p["name"] for p in products], modules


def context_file(name, where):
    path = os.path.join(ROOT, PRELUDES, name + ".swift")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name) or not os.path.isfile(path):
        sys.exit(f"{where}: no snippet context {PRELUDES}/{name}.swift")
    return os.path.join(PRELUDES, name + ".swift"), open(path, encoding="utf-8").read()


def located(code, file, line):
    return f'#sourceLocation(file: "{file}", line: {line})\n{code}#sourceLocation()\n'


def assemble(doc, line, code, options, modules):
    """The Swift source of one block with its declared context, positioned at its own file and line."""
    where = f"{doc}:{line - 1}"
    preludes = [context_file(name, where) for name in str(options.get("prelude", "")).split(",") if name]
    wrapper = context_file(options["wraps"], where) if "wraps" in options else None
    if not preludes and not wrapper:
        return located(code, doc, line)
    contexts = [text for _, text in preludes + ([wrapper] if wrapper else [])]
    manifest = any("swift-tools-version" in text for text in contexts)
    source = "" if manifest else "".join(f"import {m}\n" for m in ["Foundation"] + modules)
    source += "".join(located(text, file, 1) for file, text in preludes)
    if not wrapper:
        return source + located(code, doc, line)
    file, text = wrapper
    before, sep, after = text.partition("// snippet\n")
    if not sep:
        sys.exit(f"{file}: a wrapper needs a line `// snippet` where the block goes")
    return (source + located(before, file, 1) + located(code, doc, line)
            + located(after, file, before.count("\n") + 2))


def check_manifest(doc, line, source):
    """`swift package dump-package` on the manifest, beside a link named SecureStore to this checkout."""
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(ROOT, os.path.join(tmp, "SecureStore"))
        app = os.path.join(tmp, "App")
        os.makedirs(app)
        with open(os.path.join(app, "Package.swift"), "w", encoding="utf-8") as f:
            f.write(re.sub(r"^#sourceLocation.*\n", "", source, flags=re.M))
        result = subprocess.run(["swift", "package", "dump-package"], cwd=app, capture_output=True, text=True)
        if result.returncode != 0:
            return f"{doc}:{line}: the manifest does not load:\n{result.stderr.strip()}"
        # With only path dependencies (this checkout), resolve them too: products and traits must exist.
        dump = json.loads(result.stdout)
        if all("fileSystem" in d for d in dump["dependencies"]):
            for target in dump["targets"]:   # a target without sources is left out of the graph unchecked
                write(os.path.join(app, target.get("path") or os.path.join(
                    "Tests" if target["type"] == "test" else "Sources", target["name"]), "main.swift"), "")
            result = subprocess.run(["swift", "package", "show-dependencies"], cwd=app, capture_output=True,
                                    text=True)
            if result.returncode != 0 or "error:" in result.stdout + result.stderr:
                return f"{doc}:{line}: the manifest's dependencies do not resolve:\n{result.stderr.strip()}"
    return None


def target_name(doc, line):
    return "snippet_" + re.sub(r"[^A-Za-z0-9]", "_", doc) + f"_{line}"


def write(path, text):
    """Writes text unless the file already holds it (so `swift build` rebuilds only what changed)."""
    if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def generate(out):
    products, modules = library_modules()
    identity = os.path.basename(ROOT).lower()
    blocks, skipped, compile_only, failures, manifests = [], [], [], [], 0
    for doc in documents():
        for line, code, options in extract(doc):
            where = f"{doc}:{line - 1}"
            if "skip" in options:
                skipped.append((where, options["reason"]))
                continue
            if "prelude" not in options and "wraps" not in options and not re.search(r"^\s*import \w", code, re.M):
                failures.append(f"{where}: a fragment (no imports of its own): complete it, or mark it "
                                f"with <!-- snippet: prelude=NAME -->, wraps=NAME or skip reason=\"…\"")
                continue
            source = assemble(doc, line, code, options, modules)
            if "swift-tools-version" in source:
                manifests += 1
                failure = check_manifest(doc, line, source)
                if failure:
                    failures.append(failure)
                continue
            test = bool(re.search(r"^import Testing$", source, re.M))
            if "compile-only" in options and not test:
                compile_only.append((where, options["reason"]))
            blocks.append({"name": target_name(doc, line), "where": where, "source": source, "test": test,
                           "run": not test and "compile-only" not in options})
    for kind in ("Sources", "Tests"):   # targets of blocks that are gone; unchanged files keep their dates
        for name in os.listdir(os.path.join(out, kind)) if os.path.isdir(os.path.join(out, kind)) else []:
            if name not in {b["name"] for b in blocks}:
                shutil.rmtree(os.path.join(out, kind, name))
    deps = ", ".join(f'.product(name: "{p}", package: "{identity}")' for p in products)
    targets = []
    for block in blocks:
        folder = os.path.join(out, "Tests" if block["test"] else "Sources", block["name"])
        write(os.path.join(folder, "Snippet.swift" if block["test"] else "main.swift"), block["source"])
        kind = "testTarget" if block["test"] else "executableTarget"
        targets.append(f'    .{kind}(name: "{block["name"]}", dependencies: deps),')
    manifest = ("// swift-tools-version:6.1\n// Generated by scripts/snippets.py from the documents' Swift blocks.\n"
                "import PackageDescription\n\n"
                f"let deps: [Target.Dependency] = [{deps}]\n\n"
                f'let package = Package(name: "Snippets", dependencies: [.package(path: "{ROOT}")], targets: [\n'
                + "\n".join(targets) + "\n])\n")
    write(os.path.join(out, "Package.swift"), manifest)
    with open(os.path.join(out, "snippets.json"), "w", encoding="utf-8") as f:
        json.dump({"blocks": blocks, "skipped": skipped, "manifests": manifests}, f, indent=1)
    for where, reason in compile_only:
        print(f"snippets: not run {where}: {reason}")
    for where, reason in skipped:
        print(f"snippets: skipped {where}: {reason}")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)


def report(out, log):
    """The compiler's errors, each under the block it belongs to."""
    blocks = json.load(open(os.path.join(out, "snippets.json"), encoding="utf-8"))["blocks"]
    text = open(log, encoding="utf-8", errors="replace").read()
    shown = set()
    for match in re.finditer(r"^(\S+?):(\d+):(\d+): error: .*(?:\n(?!\S+:\d+:\d+: |\[\d+/\d+\]).*)*", text, re.M):
        message = match.group(0)
        file = match.group(1)
        owner = next((b["where"] for b in blocks if f"/{b['name']}/" in file), None)
        if message.split("\n")[0] in shown:
            continue
        shown.add(message.split("\n")[0])
        print((f"{owner}: in its context: " if owner else "") + message.strip(), file=sys.stderr)
    if not shown:
        print(text[-4000:], file=sys.stderr)


def run(out):
    meta = json.load(open(os.path.join(out, "snippets.json"), encoding="utf-8"))
    # Not `swift build --show-bin-path`: without --build-tests it plans a build with other flags, and the next
    # check would rebuild this whole package.
    binaries = os.path.abspath(os.path.join(out, ".build", "debug"))
    failed = []
    ran = 0
    for block in meta["blocks"]:
        if not block["run"]:
            continue
        with tempfile.TemporaryDirectory() as home:
            env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
                       XDG_DATA_HOME=os.path.join(home, ".local/share"), XDG_CACHE_HOME=os.path.join(home, ".cache"))
            for variable in ("SECURESTORE_BACKEND", "SECURESTORE_CONFIG"):
                env.pop(variable, None)
            try:
                result = subprocess.run([os.path.join(binaries, block["name"])], cwd=home, env=env,
                                        capture_output=True, text=True, timeout=120)
                status, output = result.returncode, result.stdout + result.stderr
            except subprocess.TimeoutExpired:
                status, output = "a timeout (120 s)", ""
        ran += 1
        if status != 0:
            failed.append(f"{block['where']}: the program exited with {status}:\n{output.strip()}")
    blocks, tests = meta["blocks"], sum(1 for b in meta["blocks"] if b["test"])
    if tests:   # the test files' tests (the same build: `swift test` plans with the flags of --build-tests)
        result = subprocess.run(["swift", "test", "--skip-build", "--package-path", out], capture_output=True,
                                text=True)
        if result.returncode != 0:
            owners = ", ".join(b["where"] for b in blocks if b["test"])
            failing = [l for l in (result.stdout + result.stderr).splitlines() if "✘" in l or "error:" in l]
            failed.append(f"{owners}: the tests failed:\n" + "\n".join(failing[:40]))
    total = len(blocks) + meta["manifests"] + len(meta["skipped"])
    print(f"snippets: {total} blocks: {len(blocks)} compiled ({ran} programs ran, {tests} test file{'' if tests == 1 else 's'} ran, "
          f"{len(blocks) - ran - tests} compile-only), {meta['manifests']} manifests loaded, "
          f"{len(meta['skipped'])} skipped")
    if failed:
        print("\n".join(failed), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("generate", "report", "run"):
        sys.exit(__doc__)
    {"generate": lambda: generate(sys.argv[2]), "report": lambda: report(sys.argv[2], sys.argv[3]),
     "run": lambda: run(sys.argv[2])}[sys.argv[1]]()
