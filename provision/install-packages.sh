#!/usr/bin/env bash
# Debian packages agent-runner needs on a host. Idempotent: apt-get skips what
# is already installed. Used by operators (agent-runner provision host) and CI.
#
# Services these packages enable by default (the distribution's squid.service)
# are stopped and disabled: agent-runner runs its own Squid instance with its
# own config, and a second proxy on 3128 would only be an unguarded door.
set -euo pipefail

packages=(
  git            # every repo operation
  nftables       # egress lock (nft -j -f)
  squid          # per-repo domain allowlist proxy
  iproute2       # ip netns for the isolation tests and doctor
  util-linux     # setpriv (privilege drop), prlimit (run limits), unshare
  procps         # kill: the end-of-run sweep runs `kill -1` as the repo user
  python3        # system tests that bind ports as an agent would
  curl           # doctor probes through the proxy
  tmux           # dashboard tests
  systemd        # systemd-analyze verify for unit files
  systemd-container  # systemd-nspawn: unit tests in a real systemd
  ca-certificates
  sudo           # not used by agents; absence checked by doctor
  prometheus     # promtool: checks the metrics the watcher serves
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "packages: all ${#packages[@]} present, nothing to install"
else
  echo "packages: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "packages: installed ${#missing[@]}"
fi

# The distribution's own Squid must not run: it would listen on 3128 with the
# distribution's policy. Nor its Prometheus server: only promtool is wanted,
# and a server on 9090 is nobody's to guard. Without systemd as PID 1 there is
# nothing to stop.
if [ -d /run/systemd/system ]; then
  systemctl disable --now squid.service >/dev/null 2>&1 || true
  systemctl disable --now prometheus.service >/dev/null 2>&1 || true
fi
