#!/usr/bin/env bash
# Every ```swift block of the Markdown documents compiles, and runs where it is a complete program
# (scripts/snippets.py says how a block is read and how to mark a fragment; the Testing article has the
# markers). Generates one package with a target per block in .build/snippets (never committed), depending on
# this package by path and on every library product its manifest declares, and builds it with one
# `swift build` (warm: only the blocks that changed). Complete programs run inside a private keyring
# (scripts/with-keyring.sh), each with its own temporary HOME and XDG folders.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/snippets
# SwiftPM passes a dependency's enabled traits (-DSQLite -DSecretService -DPostgres) in its Set's order, which
# changes with each process's hash seed: a new command line for every module, so every check rebuilt the
# whole package (~80 s instead of ~10 s). A fixed seed keeps the order, and the build, from one run to the next.
export SWIFT_DETERMINISTIC_HASHING=1
mkdir -p "$out"
python3 scripts/snippets.py generate "$out"
if ! swift build --package-path "$out" --build-tests > "$out/build.log" 2>&1; then
  python3 scripts/snippets.py report "$out" "$out/build.log"
  echo "check-snippets: a documented Swift block does not compile (full log: $out/build.log)" >&2
  exit 1
fi
scripts/with-keyring.sh python3 scripts/snippets.py run "$out"
