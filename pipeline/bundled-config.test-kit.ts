// The bundled config (scenarios/config.yaml) as tests load it: parsed at the instant a test runs its claims at,
// so the orders' purchase dates fall where the scenarios expect them.
import { readFileSync } from "node:fs";
import { parseConfig } from "../core/claim/config.ts";
import type { ClaimsConfig } from "../core/claim/config.ts";

/** scenarios/config.yaml, parsed as of `nowMs`. */
export function bundledConfig(nowMs: number): ClaimsConfig {
  return parseConfig(readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"), "config.yaml", nowMs);
}
