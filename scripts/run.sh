#!/usr/bin/env bash
# The main job: installs what it needs, builds, and on a scratch encrypted SQLite store of its own
#  1. plays the seeds' scenario in Swift (save a login token, read it back, delete it, clear everything),
#  2. runs the seeds' Objective-C wrapper ported to Swift with `import SecItem`,
#  3. does the same round trip with the `securestore` tool (secret through stdin/stdout only).
#
# The scratch store lives in a new temporary folder (XDG_DATA_HOME and XDG_CONFIG_HOME point there;
# SECURESTORE_CONFIG and SECURESTORE_BACKEND are ignored) and is removed at the end: the user's stores,
# key files and configuration are neither read nor changed. The scenario clears the store it runs on, so
# running it on the store the usual selection picks takes SECURESTORE_RUN_ON_SELECTED_STORE=1.
# SECURESTORE_RUN_BINDIR=DIR skips installing and building and runs the programs already built in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${SECURESTORE_RUN_BINDIR:-}"
if [ -z "$bin" ]; then
    scripts/deps.sh
    swift build -c release --product securestore-example
    swift build -c release --product secitem-port-example
    swift build -c release --product securestore
    bin=.build/release
fi
if [ "${SECURESTORE_RUN_ON_SELECTED_STORE:-}" != 1 ]; then
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/securestore-run.XXXXXX")
    trap 'rm -rf "$scratch"' EXIT
    export XDG_DATA_HOME="$scratch/data" XDG_CONFIG_HOME="$scratch/config"
    unset SECURESTORE_CONFIG SECURESTORE_BACKEND
    echo "run.sh: on a scratch store in $scratch (removed at the end; your own stores are not touched)"
else
    echo "run.sh: on the store the configuration selects (SECURESTORE_RUN_ON_SELECTED_STORE=1); it will be cleared"
fi
"$bin/securestore-example"
"$bin/secitem-port-example"
cli="$bin/securestore"
$cli backends
printf 'token-%s' "$RANDOM$RANDOM" | $cli add --service com.example.cli --account alice --update-existing
echo "securestore get: $($cli get --service com.example.cli --account alice | wc -c) bytes read back"
$cli find --service com.example.cli
$cli delete --service com.example.cli
$cli clear --yes
