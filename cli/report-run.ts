// `claims report` and `claims replay`'s runs (docs/cli.md): a recorded run's or the served claims' report, one decision
// replayed. Imported only when one of them runs, so their help loads nothing heavy (cli/command-report.ts registers them).
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { auditClaimId } from "../core/history/audit-events.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import type { ReplayResult } from "../core/history/replay/index.ts";
import { dataDirFrom, findClaimRun, latestRun, loadRunAudit, listRuns, runDir } from "./run-store.ts";
import { servedClaimsAudit, withStateStore } from "./served-store.ts";
import { dfidOf, returnDfid } from "../core/kernel/claim-record.ts";
import { CliError } from "./errors.ts";
import { loadPriceTable } from "../adapters/llm/prices-file.ts";
import type { PriceTable } from "../core/llm/prices.ts";

export async function writeReportFor(
  dataDir: string,
  simulationId: string,
  out?: string,
  prices: PriceTable = loadPriceTable(),
): Promise<string> {
  const { writeReport } = await import("./report-file.ts");
  const events = await loadRunAudit(dataDir, simulationId);
  return writeReport(events, out ?? resolve(runDir(dataDir, simulationId), "report.html"), { prices });
}

/** The options `claims report` parsed (cli/command-report.ts). */
export interface ReportOptions {
  simulationId?: string;
  served?: boolean;
  out?: string;
  dataDir?: string;
}

/** The options `claims replay` parsed (cli/command-report.ts). */
export interface ReplayOptions {
  dataDir?: string;
  json?: boolean;
}

/** Runs `claims report`: writes the report and prints where. */
export async function runReport(o: ReportOptions): Promise<void> {
  const dataDir = dataDirFrom(o.dataDir);
  const out = o.out ? resolve(o.out) : undefined;
  if (o.served && o.simulationId) throw new CliError("give --served or --simulation-id, not both");
  const simulationId = o.served ? undefined : (o.simulationId ?? latestRun(dataDir));
  if (simulationId && existsSync(join(runDir(dataDir, simulationId), "audit.jsonl"))) {
    const path = await writeReportFor(dataDir, simulationId, out);
    process.stdout.write(`Report for ${simulationId}: ${path}\n`);
    return;
  }
  // Not a batch run: the served claims, from the store claims serve keeps (through it while it runs), as the served view.
  const { writeReport } = await import("./report-file.ts");
  const { renderAuditReport } = await import("../report/served.ts");
  const written = await withStateStore(dataDir, async (store) => {
    const events = simulationId ? await store.ports.audit.bySimulation(simulationId) : await servedClaimsAudit(store);
    if (events.length === 0)
      throw new CliError(
        simulationId
          ? `no run or served claims of simulation ${simulationId} in ${dataDir}`
          : `no served claims in ${dataDir} yet`,
      );
    const title = simulationId ? `Claims Crew — ${simulationId} (served)` : "Claims Crew — served claims";
    const path =
      out ??
      (simulationId ? resolve(runDir(dataDir, simulationId), "report.html") : join(dataDir, "served", "report.html"));
    return {
      path: writeReport(
        events,
        path,
        {
          title,
          scope: simulationId
            ? `the claims served under ${simulationId}`
            : "every claim served without a simulation_id",
        },
        renderAuditReport,
      ),
      source: store.source,
    };
  });
  if (!written) {
    throw new CliError(
      simulationId
        ? `no recorded run '${simulationId}' and no claims serve store in ${dataDir} (runs: ${listRuns(dataDir).join(", ") || "none"})`
        : `no recorded runs and no claims serve store in ${dataDir}: run 'claims batch' or 'claims serve' first`,
    );
  }
  process.stdout.write(`Report for ${simulationId ?? "served claims"} (from ${written.source}): ${written.path}\n`);
}

/** Runs `claims replay` of `claimId`: prints the replay; the exit code is set on process.exitCode. */
export async function runReplay(claimId: string, o: ReplayOptions): Promise<void> {
  const dataDir = dataDirFrom(o.dataDir);
  // A batch run's file, else the store of claims serve (a served claim's own events).
  const found =
    (await findClaimRun(dataDir, claimId)) ??
    (await withStateStore(dataDir, async (store) => {
      // The claim's decision flow, and its return's when it has one (docs/returns.md), replayed beside it.
      const events = [
        ...(await store.ports.audit.byDfid(dfidOf(claimId))),
        ...(await store.ports.audit.byDfid(returnDfid(claimId))),
      ];
      if (!events.some((e) => auditClaimId(e) === claimId)) return undefined;
      // The stored claim record, so replay checks the audit's parent claim (a RESUBMIT's) against it.
      const record = await store.ports.claims.getClaim(claimId);
      const claimRecord = record ? { parent_claim_id: record.parent_claim_id } : undefined;
      return { simulationId: `served, from ${store.source}`, events, claimRecord };
    }));
  if (!found)
    throw new CliError(
      `claim ${claimId} is not in any recorded run nor among the served claims in ${dataDir} (runs: ${listRuns(dataDir).join(", ") || "none"})`,
    );
  const result = replayClaim(
    claimId,
    found.events,
    "claimRecord" in found && found.claimRecord ? { claimRecord: found.claimRecord } : {},
  );
  if (o.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else process.stdout.write(formatReplay(result, found.simulationId));
  process.exitCode = REPLAY_EXIT_CODES[result.status];
}

/** Exit codes of `claims replay` (2 stays the usage/configuration error of every command). */
const REPLAY_EXIT_CODES: Record<ReplayResult["status"], number> = { IDENTICAL: 0, DIFFERENT: 1, INCOMPLETE: 3 };

function formatReplay(result: ReplayResult, simulationId: string): string {
  const marks = { IDENTICAL: "✓", DIFFERENT: "✗", INCOMPLETE: "?" } as const;
  const lines = [`Replay of ${result.claimId} (run ${simulationId}), from recorded events, no model calls:`];
  for (const s of result.steps)
    lines.push(
      `  ${marks[s.status]} ${s.step.padEnd(10)} ${s.detail}${s.status === "IDENTICAL" ? "" : ` (${s.status})`}`,
    );
  if (result.erased)
    lines.push(`  personal data erased (claims erase), shown as [erased]: ${result.erased.join(", ")}`);
  const first = result.steps.find((s) => s.status === result.status);
  if (result.status === "IDENTICAL")
    lines.push(`Identical: ${result.outcome ?? "same outcome"} ${result.reasonCode ?? ""}`.trimEnd());
  else if (result.status === "DIFFERENT")
    lines.push(`DIFFERENT: the recorded decision does not reproduce (${first?.step}: ${first?.detail})`);
  else lines.push(`INCOMPLETE: the recorded decision cannot be replayed in full (${first?.step}: ${first?.detail})`);
  return `${lines.join("\n")}\n`;
}
