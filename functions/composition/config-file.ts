// The YAML configuration file (docs/config.md) as local runs, the CLI and the scheduled batch read it. Kept out of
// compose.ts so that the deployed functions, which read the pre-parsed policy (policy.ts), bundle no YAML parser.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseConfig } from "../../core/claim/config.ts";
import type { ClaimsConfig } from "../../core/claim/config.ts";
import { ConfigLoadError } from "./errors.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** The configuration file: CLAIMS_CONFIG_PATH, else scenarios/config.yaml under LAMBDA_TASK_ROOT, else under the working directory. */
export function configPathFrom(env: Env): string {
  if (env.CLAIMS_CONFIG_PATH) return resolve(env.CLAIMS_CONFIG_PATH);
  return join(env.LAMBDA_TASK_ROOT ?? process.cwd(), "scenarios", "config.yaml");
}

/** Reads and validates the configuration file (relative dates resolve against `nowMs`); ConfigLoadError names the file. */
export function loadConfig(path: string, nowMs: number): ClaimsConfig {
  if (!existsSync(path)) throw new ConfigLoadError(`configuration file not found: ${path} (set CLAIMS_CONFIG_PATH)`);
  try {
    return parseConfig(readFileSync(path, "utf8"), path, nowMs);
  } catch (cause) {
    throw new ConfigLoadError(`configuration file ${path} is invalid: ${(cause as Error).message}`, { cause });
  }
}
