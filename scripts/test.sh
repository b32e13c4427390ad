#!/usr/bin/env bash
# The one test command: installs what it needs, starts a throwaway PostgreSQL 15 cluster and a private
# D-Bus + gnome-keyring, runs every test, and stops both (also on failure). SECURESTORE_REQUIRE_ALL_BACKENDS=1:
# a test whose service is missing fails here instead of being skipped (as a plain `swift test` does).
# Usage: scripts/test.sh [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
export SECURESTORE_REQUIRE_ALL_BACKENDS=1
swift build --build-tests
scripts/with-postgres.sh scripts/with-keyring.sh swift test --skip-build "$@"
