#!/usr/bin/env bash
# The one test command: installs what it needs, starts a throwaway PostgreSQL 15 cluster and a private
# D-Bus + gnome-keyring, runs every test, and stops both (also on failure); then runs every suite that talks to
# the Secret Service again on a second provider, a headless KeePassXC on a private bus (the conformance suite,
# the Secret Service, CLI, credential-helper and porting suites). SECURESTORE_REQUIRE_ALL_BACKENDS=1: a test whose
# service is missing fails here instead of being skipped (as a plain `swift test` does). Then, on a whole run (no
# arguments), every ```swift block of README.md and the articles compiles, and complete programs run
# (scripts/check-snippets.sh).
# Usage: scripts/test.sh [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
export SECURESTORE_REQUIRE_ALL_BACKENDS=1
swift build --build-tests
scripts/with-postgres.sh scripts/with-keyring.sh swift test --skip-build "$@"
echo "test.sh: the Secret Service suites again, on KeePassXC"
scripts/with-postgres.sh scripts/with-keepassxc.sh swift test --skip-build \
  --filter "SecretService|Conformance|CLITests|CredentialHelper|RealClient|SecItemPorting" "$@"
if [ "$#" -eq 0 ]; then
  echo "test.sh: every Swift block of the docs (scripts/check-snippets.sh)"
  scripts/check-snippets.sh
fi
