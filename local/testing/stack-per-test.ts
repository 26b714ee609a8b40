// One local stack at a time per test, with a data directory of its own: stopped and removed after each test.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

/**
 * Registers an `afterEach` that stops the stack the test kept and removes the data directory it made. `dataDir()` makes
 * a new directory (`<prefix>…` under the system's temp directory); `keep(stack)` hands the stack back, to be stopped.
 */
export function stackPerTest<S extends { stop(): Promise<void> }>(prefix: string) {
  let stack: S | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  return {
    dataDir(): string {
      dir = mkdtempSync(join(tmpdir(), prefix));
      return dir;
    },
    keep<T extends S>(s: T): T {
      stack = s;
      return s;
    },
  };
}
