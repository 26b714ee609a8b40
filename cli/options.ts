// What the commands' options accept (parsers that turn a bad value into a usage error, exit 2) and their defaults.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { InvalidArgumentError } from "commander";
import type { CheckKind } from "./config-check.ts";
import { parseIsoMs } from "../core/integrity/time.ts";
import { CliError } from "./errors.ts";

export const DEFAULT_SCENARIOS = "scenarios/scenarios.yaml";
export const DEFAULT_CONFIG = "scenarios/config.yaml";

export function parseNow(value: string): number {
  // Without an offset the instant is UTC, as everywhere else: a run never depends on the machine's time zone.
  const ms = parseIsoMs(value);
  if (ms === undefined)
    throw new InvalidArgumentError(
      `--now must be an ISO timestamp such as 2026-06-01T12:00:00Z (UTC unless it has an offset), got '${value}'`,
    );
  return ms;
}

export function parseKind(value: string): CheckKind {
  if (value !== "config" && value !== "scenarios")
    throw new InvalidArgumentError(`--kind must be config or scenarios, got '${value}'`);
  return value;
}

export function mustExist(path: string, what: string): string {
  const full = resolve(path);
  if (!existsSync(full)) throw new CliError(`${what} not found: ${path}`);
  return full;
}

export function parseMaxOpen(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 1_000_000)
    throw new InvalidArgumentError(`--max-open must be a number of claims (0 = no bound), got '${value}'`);
  return n;
}

export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535)
    throw new InvalidArgumentError(`--port must be a number from 0 to 65535 (0 = any free port), got '${value}'`);
  return port;
}

export function parseSeconds(value: string): number {
  const s = Number(value);
  if (!/^\d+$/.test(value) || s < 1 || s > 86_400)
    throw new InvalidArgumentError(`--claim-timeout must be a whole number of seconds from 1 to 86400, got '${value}'`);
  return s;
}
