// What the browser tests share: Debian's Chromium (never a downloaded browser), the flags that keep it off
// the network, and the rule for a machine without it — a visible one-line notice and a skip on a
// developer's machine, a failure in CI (CI=true), where `.ci/run` installs it. A test never installs it.
import { existsSync } from "node:fs";
import { describe } from "vitest";

/** Where Debian's chromium package puts the browser. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** Headless flags: no sandbox (root), no GPU, and no background connections (the network is closed here). */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** `describe` when Chromium is there; otherwise a skip with a one-line notice, or a failing suite when CI=true. */
export function describeWithBrowser(name: string, body: () => void): void {
  if (existsSync(CHROMIUM_PATH)) {
    describe(name, body);
    return;
  }
  const notice = `${CHROMIUM_PATH} not found: install Debian's chromium (apt-get install chromium) to run "${name}"`;
  if (process.env.CI === "true") {
    describe(name, () => {
      throw new Error(`${notice}; CI must install it (.ci/run does)`);
    });
    return;
  }
  process.stderr.write(`[browser tests] skipped: ${notice}\n`);
  describe.skip(name, body);
}
