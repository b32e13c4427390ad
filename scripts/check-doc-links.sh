#!/usr/bin/env bash
# Checks every relative Markdown link in the repository's documents (README, the DocC articles, the backends'
# MAPPING.md/FORMAT.md, Benchmarks and Fuzz READMEs, the results folders): the file must exist and a #fragment must name a heading
# of it (GitHub's anchor rules). Also refuses paths of a development machine. Exit 1 listing each bad link.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'PY'
import os, re, sys, glob
docs = ["README.md", "Benchmarks/README.md", "Fuzz/README.md"]
docs += glob.glob("Sources/*/*.docc/*.md") + glob.glob("Backends/*/*.md")
docs += glob.glob("Benchmarks/results/*.md") + glob.glob("Backends/*/results/*.md")
docs = [d for d in docs if os.path.isfile(d)]
link = re.compile(r'(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)')
def anchors(path):
    out, seen = set(), {}
    fence = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"): fence = not fence
        m = None if fence else re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
        if not m: continue
        a = m.group(1).strip().lower()
        a = re.sub(r'[^\w\- ]', '', a).replace(' ', '-')
        n = seen.get(a, 0); seen[a] = n + 1
        out.add(a if n == 0 else f"{a}-{n}")
    return out
bad = []
for d in docs:
    text = open(d, encoding="utf-8").read()
    text = re.sub(r'```.*?```', '', text, flags=re.S)
    for m in link.finditer(text):
        target = m.group(1) or m.group(2)
        if re.match(r'^[a-z]+:', target) or target.startswith("<"): continue
        path, _, frag = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(d), path)) if path else d
        if not os.path.exists(full):
            bad.append(f"{d}: {target}: no such file"); continue
        if frag and full.endswith(".md") and frag not in anchors(full):
            bad.append(f"{d}: {target}: no heading #{frag} in {full}")
    # Briefing paths of a development machine (spelled in pieces so this script does not match itself).
    for m in re.finditer("/" + "work/|shared" + "/docs|(?<![A-Za-z])" + "semantics" + r"\.md", text):
        bad.append(f"{d}: mentions {m.group(0)} (a path outside the repository)")
for b in bad: print("doc links:", b, file=sys.stderr)
print(f"doc links: {len(docs)} documents checked, {len(bad)} problem(s)")
sys.exit(1 if bad else 0)
PY
