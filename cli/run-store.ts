// Where local runs keep their audit and report: <dataDir>/runs/<simulation_id>/{audit.jsonl,report.html}; the
// customer's words in the audit sealed under the claims' keys in <dataDir>/keys/ (docs/customer-data.md).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { RunIdError } from "./errors.ts";
import { simulationIdProblem } from "../core/history/simulation.ts";
import { parseAuditEvent } from "../core/integrity/index.ts";
import type { AuditEvent } from "../core/integrity/index.ts";
import { openAuditEvents, sealAuditEvents } from "../pipeline/personal-data.ts";
import type { PersonalDataVault } from "../pipeline/personal-data.ts";
import { envelopeVault } from "../adapters/vault/envelope.ts";
import { keyFileStore, keysDir } from "../adapters/vault/key-files.ts";

export { dataDirFrom } from "./data-dir.ts";

/** The folder of one run, always inside `<dataDir>/runs/`. */
export function runDir(dataDir: string, simulationId: string): string {
  const runs = resolve(dataDir, "runs");
  const dir = resolve(runs, simulationId);
  if (simulationIdProblem(simulationId) !== undefined || !dir.startsWith(runs + sep))
    throw new RunIdError(simulationId);
  return dir;
}

function runDirOrUndefined(dataDir: string, simulationId: string): string | undefined {
  try {
    return runDir(dataDir, simulationId);
  } catch {
    return undefined;
  }
}

/** The data directory's personal-data vault: a key file per claim in `<dataDir>/keys/` (docs/customer-data.md). */
export function dataDirVault(dataDir: string): PersonalDataVault {
  return envelopeVault(keyFileStore(keysDir(dataDir)));
}

/**
 * Writes a run's audit events as JSON lines (replacing an earlier run with the same id), each claim's personal
 * fields sealed under the claim's key: the file never holds the customer's words in clear.
 */
export async function saveRunAudit(
  dataDir: string,
  simulationId: string,
  events: readonly AuditEvent[],
): Promise<string> {
  const sealed = await sealAuditEvents(events, dataDirVault(dataDir));
  const path = writeRunAudit(dataDir, simulationId, sealed);
  writeFileSync(join(dataDir, "runs", "LATEST"), `${simulationId}\n`);
  return path;
}

/** Writes a run's audit events as they are (already sealed: an erasure rewriting the run). */
export function writeRunAudit(dataDir: string, simulationId: string, events: readonly AuditEvent[]): string {
  const dir = runDir(dataDir, simulationId);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "audit.jsonl");
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, events.map((e) => JSON.stringify(e)).join("\n") + "\n");
  renameSync(tmp, path);
  return path;
}

/** Reads a run's audit events with their personal fields opened (an erased claim's read `[erased]`). */
export async function loadRunAudit(dataDir: string, simulationId: string): Promise<AuditEvent[]> {
  return openAuditEvents(loadSealedRunAudit(dataDir, simulationId), dataDirVault(dataDir));
}

/** Reads a run's audit events as stored (sealed); throws a clear error when the run or the file is missing or corrupt. */
export function loadSealedRunAudit(dataDir: string, simulationId: string): AuditEvent[] {
  const path = join(runDir(dataDir, simulationId), "audit.jsonl");
  if (!existsSync(path))
    throw new Error(
      `no recorded run '${simulationId}' in ${dataDir} (looked for ${path}); runs: ${listRuns(dataDir).join(", ") || "none — run claims batch first"}`,
    );
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((line, i) => {
      try {
        return parseAuditEvent(JSON.parse(line));
      } catch (e) {
        throw new Error(`${path}:${i + 1}: not an audit event (${(e as Error).message.split("\n")[0]})`);
      }
    });
}

/** Recorded runs, newest first. */
export function listRuns(dataDir: string): string[] {
  const root = join(dataDir, "runs");
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => existsSync(join(root, d, "audit.jsonl")))
    .sort((a, b) => statSync(join(root, b, "audit.jsonl")).mtimeMs - statSync(join(root, a, "audit.jsonl")).mtimeMs);
}

/** The most recent run's id, if any. */
export function latestRun(dataDir: string): string | undefined {
  const pointer = join(dataDir, "runs", "LATEST");
  if (existsSync(pointer)) {
    const id = readFileSync(pointer, "utf8").trim();
    if (id && !(runDirOrUndefined(dataDir, id) === undefined) && existsSync(join(runDir(dataDir, id), "audit.jsonl")))
      return id;
  }
  return listRuns(dataDir)[0];
}

/** Finds the run that holds a claim's events, newest first. */
export async function findClaimRun(
  dataDir: string,
  claimId: string,
): Promise<{ simulationId: string; events: AuditEvent[] } | undefined> {
  for (const simulationId of listRuns(dataDir)) {
    const text = readFileSync(join(runDir(dataDir, simulationId), "audit.jsonl"), "utf8");
    if (!text.includes(`"${claimId}"`)) continue;
    return { simulationId, events: await loadRunAudit(dataDir, simulationId) };
  }
  return undefined;
}
