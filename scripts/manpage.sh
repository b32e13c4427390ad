#!/bin/sh
# Writes the securestore(1) man page, generated from the tool's command table, to $1 (default ./securestore.1).
# View it with `man -l securestore.1`.
set -eu
out="${1:-securestore.1}"
root="$(cd "$(dirname "$0")/.." && pwd)"
tool="${SECURESTORE_TOOL:-}"
if [ -z "$tool" ]; then
    swift build --package-path "$root" --product securestore >&2
    tool="$(swift build --package-path "$root" --product securestore --show-bin-path)/securestore"
fi
"$tool" manpage > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
