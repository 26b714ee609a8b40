// The scenario batch as the scheduled function runs it: load the bundled files, record the run's
// start in the audit, and submit every scenario through intake under one simulation_id.
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { parseScenarios } from "../../core/history/scenarios.ts";
import type { Scenario } from "../../core/history/scenarios.ts";
import { ConfigLoadError } from "./errors.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** The batch file: CLAIMS_SCENARIOS_PATH (a relative path is under LAMBDA_TASK_ROOT, or the working directory), else scenarios/scenarios.yaml there. */
export function scenariosPathFrom(env: Env): string {
  const path = env.CLAIMS_SCENARIOS_PATH ?? join("scenarios", "scenarios.yaml");
  return isAbsolute(path) ? path : join(env.LAMBDA_TASK_ROOT ?? process.cwd(), path);
}

/** Reads and validates the scenario file; ConfigLoadError names the file and the problem. */
export function loadScenarios(path: string): Scenario[] {
  try {
    return parseScenarios(readFileSync(path, "utf8"), path);
  } catch (cause) {
    throw new ConfigLoadError(`scenario file ${path} cannot be used: ${(cause as Error).message}`, { cause });
  }
}
