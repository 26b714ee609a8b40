// Vitest's global setup: the compiled CLI built once before the tests that run bin/claims.mjs as a user does
// (scripts/build-cli.mjs), instead of by the first of them while the others wait on it.
import { buildCli, staleReason } from "./build-cli.mjs";

export async function setup(): Promise<void> {
  if (staleReason() !== undefined) await buildCli();
}
