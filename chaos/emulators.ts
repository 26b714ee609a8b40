// `npm run chaos -- --emulators`: flows on the local stack (dynalite, fauxqs, the local bus) — not built yet.
import { ChaosError } from "./errors.ts";
import type { ChaosOptions } from "./run.ts";

/** Runs the flows of `opts` on the local stack. */
export async function runOnEmulators(_opts: ChaosOptions, _out: (line: string) => void, _configPath: string): Promise<{ violations: number; flows: number }> {
  throw new ChaosError("NOT_BUILT", "--emulators is not built yet");
}
