#!/usr/bin/env bash
# Makes sure Debian's Chromium is at /usr/bin/chromium for the browser tests (playwright-core drives it;
# test tools' own browser downloads do not work on these machines). Idempotent: does nothing when present.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  echo "ensure-chromium: $CHROMIUM is present ($("$CHROMIUM" --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

fail() {
  echo "ensure-chromium: ERROR: $*" >&2
  echo "ensure-chromium: install it by hand as root: apt-get update && apt-get install -y --no-install-recommends chromium" >&2
  exit 1
}

if [ "$(id -u)" -ne 0 ]; then
  fail "$CHROMIUM is missing and installing Debian's chromium needs root (running as $(id -un))"
fi
command -v apt-get >/dev/null 2>&1 || fail "$CHROMIUM is missing and apt-get is not available on this machine"

echo "ensure-chromium: $CHROMIUM is missing; installing Debian's chromium package"
echo "ensure-chromium: + apt-get update"
DEBIAN_FRONTEND=noninteractive apt-get update || fail "apt-get update failed"
echo "ensure-chromium: + apt-get install -y --no-install-recommends chromium"
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium || fail "apt-get install chromium failed"

[ -x "$CHROMIUM" ] || fail "the chromium package installed but $CHROMIUM is still missing"
echo "ensure-chromium: installed $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
