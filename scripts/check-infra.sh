#!/usr/bin/env bash
# check:infra — type-checks sst.config.ts and infra/ against SST's real component types, then runs the config
# through SST's own component code under Pulumi's mocks, without AWS and without the Pulumi download every sst
# command starts with. Needs only `npm ci` and the npm registry.
#
# How: SST looks for Pulumi in $XDG_CONFIG_HOME/sst/bin and only asks it `pulumi version` before
# `sst install`. We point XDG_CONFIG_HOME at .sst-offline/ (gitignored), put a stub there that prints the
# version this SST pins, and let `sst install` unpack .sst/platform (component sources + @pulumi/aws
# types, ~300 MB from npm). Then tsc checks against .sst/platform/config.d.ts. Both steps are cached:
# the install reruns only when the SST version or sst.config.ts changes.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
say() { printf 'check:infra: %s\n' "$*"; }
fail() { printf 'check:infra: %s\n' "$*" >&2; exit 1; }
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }

[ -f node_modules/sst/package.json ] || fail "node_modules/sst is missing: run \`npm ci\` first."
sst_version=$(node -p 'require("./node_modules/sst/package.json").version')
sst_bin=$(node -e '
  const path = require("node:path");
  const name = `sst-${process.platform}-${process.arch}`;
  try { console.log(require.resolve(path.join(name, "bin", process.platform === "win32" ? "sst.exe" : "sst"))); }
  catch { process.exit(1); }
') || fail "the SST binary for this platform (sst-$(node -p 'process.platform + "-" + process.arch')) is not installed: run \`npm ci\`."

state=.sst-offline
mkdir -p "$state/sst/bin"

# 1. The Pulumi version this SST pins. The binary embeds its platform's package.json, so read it there;
#    the table is a fallback for binaries where that string is not found.
pulumi_cache="$state/pulumi-version-$sst_version"
if [ -s "$pulumi_cache" ]; then
  pulumi_version=$(cat "$pulumi_cache")
else
  pulumi_version=$(grep -m1 -aoE '"@pulumi/pulumi": *"v?[0-9]+\.[0-9]+\.[0-9]+"' "$sst_bin" | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' || true)
  if [ -z "$pulumi_version" ]; then
    case "$sst_version" in
      4.17.1) pulumi_version=3.215.0 ;;
      3.19.3) pulumi_version=3.210.0 ;;
      *) fail "cannot tell which Pulumi version sst $sst_version pins; add it to the table in $0." ;;
    esac
  fi
  pulumi_version="v${pulumi_version#v}"
  echo "$pulumi_version" >"$pulumi_cache"
fi
say "sst $sst_version pins Pulumi $pulumi_version; using the offline stub $state/sst/bin/pulumi"

# 2. The stub: answers `pulumi version`, refuses everything else (deploys need a real SST setup).
cat >"$state/sst/bin/pulumi" <<EOF
#!/bin/sh
# Written by scripts/check-infra.sh: an offline stand-in so \`sst install\` runs without downloading Pulumi.
if [ "\$1" = "version" ]; then echo "$pulumi_version"; exit 0; fi
echo "pulumi stub (scripts/check-infra.sh): only 'pulumi version' works offline; deploy without XDG_CONFIG_HOME=$state" >&2
exit 1
EOF
chmod +x "$state/sst/bin/pulumi"

# 3. `sst install`, unless this SST version already unpacked the platform for this sst.config.ts.
key="sst=$sst_version config=$(node -p 'require("node:crypto").createHash("sha256").update(require("node:fs").readFileSync("sst.config.ts")).digest("hex")')"
platform_ok() {
  [ -f .sst/platform/config.d.ts ] && [ -f .sst/platform/node_modules/@pulumi/aws/package.json ] &&
    [ "$(cat .sst/platform/version 2>/dev/null)" = "$sst_version" ]
}
if platform_ok && [ "$(cat "$state/installed.key" 2>/dev/null)" = "$key" ]; then
  say "SST platform already installed in .sst/platform (cached)"
else
  say "running \`sst install\` offline (XDG_CONFIG_HOME=$state, SST_NO_BUN=1): unpacks .sst/platform, installs providers from npm (~300 MB the first time)"
  step=$(date +%s)
  XDG_CONFIG_HOME="$PWD/$state" SST_NO_BUN=1 SST_TELEMETRY_DISABLED=1 SST_STAGE="${SST_STAGE:-check}" \
    node node_modules/sst/bin/sst.mjs install || fail "\`sst install\` failed (see above)."
  platform_ok || fail "\`sst install\` finished but .sst/platform is incomplete (no config.d.ts or @pulumi/aws)."
  echo "$key" >"$state/installed.key"
  say "sst install done in $(elapsed "$step")"
fi

# 4. Type-check against the real component types.
say "tsc -p infra/tsconfig.check.json (sst.config.ts + infra/ against .sst/platform/config.d.ts)"
step=$(date +%s)
node node_modules/typescript/bin/tsc -p infra/tsconfig.check.json || fail "type errors in sst.config.ts or infra/ (see above)."
say "types OK in $(elapsed "$step")"

# 5. SST's own component code, offline: sst.config.ts through .sst/platform under Pulumi's mocks
#    (scripts/sst-offline-run.mjs): the roles, event-source mappings, queue policies and API stage SST really
#    generates must hold the hardening rules; the unhardened counter-example must break them.
say "running sst.config.ts through SST's own components under Pulumi mocks (scripts/sst-offline-run.mjs)"
step=$(date +%s)
# On a new account (10 concurrent executions) with the default settings: nothing reserved, every rule held.
node --import tsx scripts/sst-offline-run.mjs . || fail "SST's generated resources break a hardening rule (see above)."
# On an account of 1,000 with CLAIMS_RESERVED_CONCURRENCY=on: the request path reserves its concurrency.
CLAIMS_RESERVED_CONCURRENCY=on SST_OFFLINE_ACCOUNT_CONCURRENCY=1000 node --import tsx scripts/sst-offline-run.mjs . ||
  fail "with CLAIMS_RESERVED_CONCURRENCY=on on a 1,000 account, SST's generated resources break a rule (see above)."
# And =on on a new account must stop the deploy before anything is created.
if CLAIMS_RESERVED_CONCURRENCY=on node --import tsx scripts/sst-offline-run.mjs . >/dev/null 2>&1; then
  fail "CLAIMS_RESERVED_CONCURRENCY=on on an account of 10 did not stop the deploy."
fi
if node --import tsx scripts/sst-offline-run.mjs . infra/fixtures/unhardened.config.ts >/dev/null 2>&1; then
  fail "the offline SST run found nothing wrong with infra/fixtures/unhardened.config.ts: its checks have stopped working."
fi
say "SST's own components OK (and the unhardened counter-example refused) in $(elapsed "$step"); total $(elapsed "$started")"
