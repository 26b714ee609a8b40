// Test support: the bundled run (scenarios/scenarios.yaml with its reviews, scenarios/config.yaml, the rules
// model) recorded as `claims batch --in-process` records it, and candidate policies made from the bundled
// config with one bound changed.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBatch } from "../../../cli/batch.ts";
import { loadRunAudit } from "../../../cli/run-store.ts";
import { createInProcessRuntime } from "../../../local/runtime.ts";
import type { AuditEvent } from "../../integrity/audit.ts";
import { createRulesModel } from "../../agents/rules-model.ts";
import type { CandidatePolicy } from "./index.ts";
import { parseConfig } from "../../claim/config.ts";

/** The bundled run's clock. */
export const BUNDLED_NOW = Date.parse("2026-06-01T12:00:00Z");

const ROOT = new URL("../../../", import.meta.url).pathname;

/** The bundled config's text. */
export const BUNDLED_CONFIG_TEXT = readFileSync(join(ROOT, "scenarios/config.yaml"), "utf8");

/** A recorded bundled run: where it is kept, its audit, and each scenario's claim id. */
export type BundledRun = {
  dataDir: string;
  simulationId: string;
  events: AuditEvent[];
  claimOf: (scenarioId: string) => string;
  /** The claim a reviewer's RESUBMIT of the scenario's claim created. */
  resubmittedOf: (scenarioId: string) => string;
};

/** Records the bundled scenarios (and their reviews) in process into a fresh data directory. */
export async function recordBundledRun(): Promise<BundledRun> {
  const dataDir = mkdtempSync(join(tmpdir(), "claims-backtest-"));
  const outcome = await runBatch({
    scenariosPath: join(ROOT, "scenarios/scenarios.yaml"),
    configPath: join(ROOT, "scenarios/config.yaml"),
    clock: { now: () => BUNDLED_NOW },
    dataDir,
    llm: (config) => ({
      port: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
      description: "rules",
    }),
    runtime: async (opts) => createInProcessRuntime(opts),
    log: () => {},
  });
  if (!outcome.allMatch) throw new Error("backtest kit: the bundled run does not match its expected verdicts");
  const ids = new Map(outcome.rows.map((r) => [r.id, r.claim_id]));
  const events = await loadRunAudit(dataDir, outcome.simulationId);
  const claimOf = (id: string) => {
    const claimId = ids.get(id);
    if (!claimId) throw new Error(`backtest kit: no scenario ${id} in the bundled run`);
    return claimId;
  };
  return {
    dataDir,
    simulationId: outcome.simulationId,
    events,
    claimOf,
    resubmittedOf: (id) => {
      const decided = events.find(
        (e) =>
          e.event_type === "REVIEW_DECIDED" && e.details.claim_id === claimOf(id) && e.details.resubmitted_claim_id,
      );
      if (!decided) throw new Error(`backtest kit: scenario ${id} was not resubmitted`);
      return String(decided.details.resubmitted_claim_id);
    },
  };
}

/** The bundled config's text with `max_refund_without_escalation` set to `limit`. */
export function configWithLimit(limit: number): string {
  const text = BUNDLED_CONFIG_TEXT.replace(
    "max_refund_without_escalation: 500.0",
    `max_refund_without_escalation: ${limit}`,
  );
  if (text === BUNDLED_CONFIG_TEXT && limit !== 500) throw new Error("backtest kit: the bundled limit line moved");
  return text;
}

/** The candidate policy of a config text. */
export function policyOf(text: string): CandidatePolicy {
  return parseConfig(text, "policy.yaml", BUNDLED_NOW).agent;
}

/** The bundled config's text with its `customer_limits` line set to `limits` (or removed, for none). */
export function configWithCustomerLimits(
  limits: { window_days: number; max_automatic_refunds: number; max_automatic_eur: number } | undefined,
  text = BUNDLED_CONFIG_TEXT,
): string {
  const line = /^( *)customer_limits: \{[^}]*\}\n/m;
  if (!line.test(text)) throw new Error("backtest kit: the bundled customer_limits line moved");
  return text.replace(line, (_all, indent: string) =>
    limits
      ? `${indent}customer_limits: { window_days: ${limits.window_days}, max_automatic_refunds: ${limits.max_automatic_refunds}, max_automatic_eur: ${limits.max_automatic_eur} }\n`
      : "",
  );
}
