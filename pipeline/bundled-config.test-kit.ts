// The bundled config (scenarios/config.yaml) as tests load it: parsed at the instant a test runs its claims at,
// so the orders' purchase dates fall where the scenarios expect them.
import { readFileSync } from "node:fs";
import { parseConfig } from "../core/claim/config.ts";
import type { ClaimsConfig, CrewShapeSetting } from "../core/claim/config.ts";

/** scenarios/config.yaml, parsed as of `nowMs`; `crewShape` sets the agent's crew shape (docs/llm.md, "Crew shape"). */
export function bundledConfig(nowMs: number, opts: { crewShape?: CrewShapeSetting } = {}): ClaimsConfig {
  const config = parseConfig(
    readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"),
    "config.yaml",
    nowMs,
  );
  return opts.crewShape === undefined ? config : { ...config, agent: { ...config.agent, crewShape: opts.crewShape } };
}
