#!/usr/bin/env bash
# Times the credential helpers as their clients run them — one whole process per operation (start, read the
# credential, open the store, answer, exit) — against the helpers people use on Linux today, in one run:
#   git:    git-credential-securestore (SQLite store; Secret Service)  vs  git-credential-libsecret (built
#           here from the contrib sources Debian's git ships)  and  git's plain-text `git credential-store`
#   docker: docker-credential-securestore (SQLite store; Secret Service)  vs  docker-credential-secretservice
#           (Debian golang-docker-credential-helpers)
# Everything runs in a private HOME and a private D-Bus session with an unlocked gnome-keyring
# (scripts/with-keyring.sh); nothing of the user's is read or changed.
# Usage: Benchmarks/credential-helpers.sh [ROUNDS]   (default 200 per operation; prints a Markdown table, and
#        writes it to Benchmarks/results/credential-helpers.md)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-200}"

if [ "${SECURESTORE_IN_KEYRING_BUS:-}" != "1" ]; then
  # Build first (outside the bus), then run this script again inside a private bus.
  scripts/deps.sh
  missing=()
  for p in golang-docker-credential-helpers gcc make; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "bench: installing ${missing[*]}" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  # As the README installs them: release, Swift runtime and Foundation linked statically (a shorter start).
  for product in git-credential-securestore docker-credential-securestore; do
    swift build -c release --static-swift-stdlib --scratch-path .build/credential-bench --product "$product" >&2
  done
  libsecret_dir=.build/credential-bench/libsecret
  mkdir -p "$libsecret_dir"
  cp /usr/share/doc/git/contrib/credential/libsecret/Makefile /usr/share/doc/git/contrib/credential/libsecret/git-credential-libsecret.c "$libsecret_dir/"
  make -s -C "$libsecret_dir" >&2
  exec scripts/with-keyring.sh "$0" "$@"
fi

bin="$(swift build -c release --static-swift-stdlib --scratch-path .build/credential-bench --show-bin-path)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/.config"
cat > "$work/sqlite.json" <<EOF
{"backend": "sqlite", "sqlite": {"path": "$work/store.db", "keyFile": "$work/store.key"}}
EOF
cat > "$work/secret-service.json" <<EOF
{"backend": "secret-service", "secretService": {"namespace": "credential-bench"}}
EOF

HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share" \
  BENCH_BIN="$bin" BENCH_WORK="$work" BENCH_ROUNDS="$rounds" \
  BENCH_LIBSECRET="$PWD/.build/credential-bench/libsecret/git-credential-libsecret" \
  python3 - <<'PYTHON' | tee Benchmarks/results/credential-helpers.md
import os, statistics, subprocess, time, platform

bin_dir, work, rounds = os.environ["BENCH_BIN"], os.environ["BENCH_WORK"], int(os.environ["BENCH_ROUNDS"])
background = 100   # other credentials already in each store, so a lookup is not into an empty store

def env_for(config=None):
    env = dict(os.environ)
    env.pop("SECURESTORE_CONFIG", None)
    env.pop("SECURESTORE_BACKEND", None)
    if config:
        env["SECURESTORE_CONFIG"] = os.path.join(work, config)
    return env

def call(argv, data, env, ok=(0,)):
    r = subprocess.run(argv, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if r.returncode not in ok:
        raise SystemExit(f"{argv[0]} {argv[-1]} failed ({r.returncode}): {r.stderr.decode()[:200]} {r.stdout.decode()[:200]}")
    return r.stdout

def git_input(i, password=True):
    # get: protocol and host only, as git asks for a URL without a user name in it.
    s = f"protocol=https\nhost=bench{i}.example\n"
    if password:
        s += f"username=user{i}\npassword=secret-{i}-0123456789abcdef\n"
    return (s + "\n").encode()

def docker_store(i):
    return (f'{{"ServerURL":"https://registry{i}.example","Username":"user{i}","Secret":"secret-{i}-0123456789abcdef"}}').encode()

def docker_url(i):
    return f"https://registry{i}.example\n".encode()

git_helpers = [
    ("git-credential-securestore", "SQLite (encrypted file)", [f"{bin_dir}/git-credential-securestore"], "sqlite.json"),
    ("git-credential-securestore", "Secret Service", [f"{bin_dir}/git-credential-securestore"], "secret-service.json"),
    ("git-credential-libsecret", "Secret Service", [os.environ["BENCH_LIBSECRET"]], None),
    ("git credential-store", "plain-text file", ["git", "credential-store", "--file", os.path.join(work, "git-credentials")], None),
]
docker_helpers = [
    ("docker-credential-securestore", "SQLite (encrypted file)", [f"{bin_dir}/docker-credential-securestore"], "sqlite.json"),
    ("docker-credential-securestore", "Secret Service", [f"{bin_dir}/docker-credential-securestore"], "secret-service.json"),
    ("docker-credential-secretservice", "Secret Service", ["docker-credential-secretservice"], None),
]

def timed(argv, data, env, ok=(0,)):
    start = time.perf_counter()
    out = call(argv, data, env, ok)
    return (time.perf_counter() - start) * 1000, out

def git_ops(r):
    return [("store", git_input(r), (0,)), ("get", git_input(r, password=False), (0,)), ("erase", git_input(r), (0,))]

def docker_ops(r):
    return [("store", docker_store(r), (0,)), ("get", docker_url(r), (0,)), ("erase", docker_url(r), (0, 1))]

def measure(helpers, ops, fill):
    """Round-robin: every round runs store → get → erase on each helper in turn, so all helpers share the
    machine's load equally (it is shared with other work)."""
    envs = [env_for(config) for _, _, _, config in helpers]
    for (_, _, argv, _), env in zip(helpers, envs):
        for i in range(background):
            call(argv + ["store"], fill(1000 + i), env)
    times = [{"store": [], "get": [], "erase": []} for _ in helpers]
    for r in range(rounds):
        for h, ((name, _, argv, _), env) in enumerate(zip(helpers, envs)):
            for op, data, ok in ops(r):
                t, out = timed(argv + [op], data, env, ok)
                times[h][op].append(t)
                if op == "get" and f"secret-{r}-".encode() not in out:
                    raise SystemExit(f"{name} get returned no secret")
    for (_, _, argv, _), env in zip(helpers, envs):
        for i in range(background):
            call(argv + ["erase"], ops(1000 + i)[2][1], env, ok=(0, 1))
    return times

def cell(samples):
    q = statistics.quantiles(samples, n=10)
    return f"{statistics.median(samples):.2f} / {q[8]:.2f}"

print(f"# Credential helpers: one whole process per operation\n")
print(f"{rounds} rounds of store → get → erase, helpers taking turns each round; each call a fresh process fed its credential on standard input,")
print(f"with {background} other credentials in the store. Cells: median / p90 wall time in ms, measured by the caller.")
print(f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}; gnome-keyring in a private session bus.\n")
for title, helpers, ops, fill in [("git", git_helpers, git_ops, git_input), ("docker", docker_helpers, docker_ops, docker_store)]:
    print(f"## {title}\n")
    print("| helper | credentials kept in | store (ms) | get (ms) | erase (ms) |")
    print("|---|---|---|---|---|")
    for (name, backend, _, _), times in zip(helpers, measure(helpers, ops, fill)):
        print(f"| {name} | {backend} | {cell(times['store'])} | {cell(times['get'])} | {cell(times['erase'])} |", flush=True)
    print()
PYTHON
