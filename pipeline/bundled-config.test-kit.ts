// The bundled config (scenarios/config.yaml) as tests load it: parsed at the instant a test runs its claims at,
// so the orders' purchase dates fall where the scenarios expect them.
import { readFileSync } from "node:fs";
import { parseConfig } from "../core/claim/config.ts";
import { parseScenarios } from "../core/history/scenarios.ts";
import type { Scenario } from "../core/history/scenarios.ts";
import type { ClaimsConfig, CrewShapeSetting } from "../core/claim/config.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { createInProcessPipeline } from "./in-process.ts";
import type { Clock } from "./ports.ts";

/** scenarios/config.yaml, parsed as of `nowMs`; `crewShape` sets the agent's crew shape (docs/llm.md, "Crew shape"). */
export function bundledConfig(nowMs: number, opts: { crewShape?: CrewShapeSetting } = {}): ClaimsConfig {
  const config = parseConfig(
    readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"),
    "config.yaml",
    nowMs,
  );
  return opts.crewShape === undefined ? config : { ...config, agent: { ...config.agent, crewShape: opts.crewShape } };
}

/** scenarios/scenarios.yaml, parsed: the bundled scenarios the pipeline tests run. */
export function bundledScenarios(): Scenario[] {
  return parseScenarios(
    readFileSync(new URL("../scenarios/scenarios.yaml", import.meta.url), "utf8"),
    "scenarios.yaml",
  );
}

/** An in-process pipeline on `config`'s agent and orders, deciding with the rules model (its contract and responsibility), at `clock`. */
export function bundledPipeline(config: ClaimsConfig, clock: Clock) {
  return createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock,
  });
}
