#!/usr/bin/env bash
# The system packages the test suite drives, installed from Debian (apt-get) when missing.
# This is the one list: .ci/run calls this script, and `npm test` ends by naming it when a
# test group was skipped for want of one of these (test/needs.ts mirrors the list; a test
# checks the two agree).
#   chromium    the Runs panel's browser tests (test/e2e/panel.test.ts)
#   haproxy     the load balancer in the multi-host cluster test (test/cluster/)
#   bubblewrap  the sandbox that workflow children run in (bwrap)
#   prometheus  the server that scrapes `tranquil serve`'s /metrics (test/e2e/metrics.test.ts)
#   nftables    the partitions and lossy links in the cluster test (test/cluster/faults.ts)
#   faketime    libfaketime: one cluster replica's skewed wall clock (test/cluster/faults.ts)
# Usage: scripts/install-test-deps.sh          install the missing ones (uses sudo when not root)
#        scripts/install-test-deps.sh --list   print "<package> <binary>" for each, one a line
#        scripts/install-test-deps.sh --check  print the missing packages; exit 1 if any
set -euo pipefail

PACKAGES=(
  "chromium chromium"
  "haproxy haproxy"
  "bubblewrap bwrap"
  "prometheus prometheus"
  "nftables nft"
  "faketime faketime"
)

# On PATH, or in an sbin dir a non-root PATH leaves out (haproxy lives in /usr/sbin).
has() {
  command -v "$1" >/dev/null 2>&1 || [ -x "/usr/local/sbin/$1" ] || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]
}

missing=()
for entry in "${PACKAGES[@]}"; do
  read -r pkg bin <<<"$entry"
  if [ "${1:-}" = "--list" ]; then echo "$pkg $bin"; continue; fi
  has "$bin" || missing+=("$pkg")
done
[ "${1:-}" = "--list" ] && exit 0
if [ "${1:-}" = "--check" ]; then
  [ ${#missing[@]} -eq 0 ] && exit 0
  echo "${missing[*]}"
  exit 1
fi
if [ -n "${1:-}" ]; then
  echo "install-test-deps.sh: unknown argument '$1' (expected --list, --check or nothing)" >&2
  exit 2
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-test-deps.sh: no apt-get here; install these with your package manager: ${missing[*]}" >&2
  exit 1
fi
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "installing ${missing[*]}" >&2
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
