// Vitest global setup: makes sure Debian's Chromium is installed for the browser tests (local/report/browser.test.ts).
// Runs scripts/ensure-chromium.sh once, synchronously, only when /usr/bin/chromium is missing. When the install is
// impossible (not root, no apt), it warns loudly and lets the other tests run; the browser tests then fail with the
// same message instead of being skipped.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Where the browser tests expect Chromium. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** Installs Chromium when it is missing; never throws, so a machine without it still runs the other tests. */
export default function setup(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  const script = fileURLToPath(new URL("./scripts/ensure-chromium.sh", import.meta.url));
  try {
    execFileSync("bash", [script], { stdio: "inherit" });
  } catch (error) {
    const status = (error as { status?: number }).status;
    process.stderr.write(
      `\n[vitest.global-setup] WARNING: ${CHROMIUM_PATH} is missing and scripts/ensure-chromium.sh failed` +
        `${status === undefined ? "" : ` (exit ${status})`}; the browser tests will fail. ` +
        "Install it as root: apt-get update && apt-get install -y --no-install-recommends chromium\n\n",
    );
  }
}
