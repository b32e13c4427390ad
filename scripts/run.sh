#!/usr/bin/env bash
# The main job: installs what it needs, builds, and plays the seeds' scenario (save a login token, read it
# back, delete it, clear everything as for a fresh install).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
swift build -c release --product securestore-example
.build/release/securestore-example
