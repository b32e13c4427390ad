#!/usr/bin/env bash
# The main job: installs what it needs, builds, and plays the seeds' scenario on the default encrypted
# SQLite store (save a login token, read it back, delete it, clear everything as for a fresh install), then
# runs the seeds' Objective-C wrapper ported to Swift with `import SecItem`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
swift build -c release --product securestore-example
swift build -c release --product secitem-port-example
.build/release/securestore-example
.build/release/secitem-port-example
