#!/usr/bin/env bash
# The main job: installs what it needs, builds, and on the default encrypted SQLite store
#  1. plays the seeds' scenario in Swift (save a login token, read it back, delete it, clear everything),
#  2. runs the seeds' Objective-C wrapper ported to Swift with `import SecItem`,
#  3. does the same round trip with the `securestore` tool (secret through stdin/stdout only).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
swift build -c release --product securestore-example
swift build -c release --product secitem-port-example
swift build -c release --product securestore
.build/release/securestore-example
.build/release/secitem-port-example
cli=.build/release/securestore
$cli backends
printf 'token-%s' "$RANDOM$RANDOM" | $cli add --service com.example.cli --account alice --update-existing
echo "securestore get: $($cli get --service com.example.cli --account alice | wc -c) bytes read back"
$cli find --service com.example.cli
$cli delete --service com.example.cli
$cli clear --yes
