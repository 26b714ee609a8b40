// A customer's rights over the data directory (issue 38, docs/customer-data.md): erasure (`claims erase`, and the
// retention policy through the same function) destroys the claims' personal-data keys and records it in the run's
// audit; access (`claims export`) writes everything held about a customer as JSON. The claims are found by the
// decision path (order → customer), which stays in clear, so a claim erased once is found again and said so.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { AuditEvent } from "../core/integrity/index.ts";
import { auditEvent } from "../core/history/audit-events.ts";
import { belongsTo, claimOwners } from "../core/history/customer-claims.ts";
import type { ClaimOwner } from "../core/history/customer-claims.ts";
import { erasedPaths, personalFields } from "../core/privacy/sealing.ts";
import { sealAuditEvents } from "../pipeline/personal-data.ts";
import type { DestroyOutcome } from "../pipeline/personal-data.ts";
import { dataDirVault, listRuns, loadRunAudit, loadSealedRunAudit, runDir, writeRunAudit } from "./run-store.ts";

/** Whose personal data to erase: a customer's claims, one claim, or every claim received before a bound (retention). */
export type ErasureTarget =
  | { readonly customerId: string }
  | { readonly claimId: string }
  | { readonly receivedBefore: string; readonly retentionDays: number };

/** What an erasure did, run by run: each claim's key destroyed now, or found destroyed before. */
export interface ErasureResult {
  readonly runs: { simulationId: string; claims: { claim_id: string; outcome: DestroyOutcome }[] }[];
  /** Claims whose key this erasure destroyed. */
  readonly erased: string[];
  /** Claims erased before (`claims erase` twice). */
  readonly already: string[];
}

/** Whether the erasure `target` covers the claim `o`. */
export function selects(target: ErasureTarget, o: ClaimOwner): boolean {
  if ("customerId" in target) return belongsTo(o, target.customerId);
  if ("claimId" in target) return o.claimId === target.claimId;
  return o.receivedAt !== undefined && o.receivedAt < target.receivedBefore;
}

/**
 * Erases the personal data of the target's claims in every recorded run of `dataDir`: destroys each claim's key,
 * appends PERSONAL_DATA_ERASED to the run's audit and writes its report again (the old one quoted the text).
 */
export async function eraseInRuns(
  dataDir: string,
  target: ErasureTarget,
  now: Date,
  writeReport: (simulationId: string) => Promise<unknown>,
): Promise<ErasureResult> {
  const vault = dataDirVault(dataDir);
  const result: ErasureResult = { runs: [], erased: [], already: [] };
  for (const simulationId of listRuns(dataDir)) {
    const claims = claimOwners(await loadRunAudit(dataDir, simulationId)).filter((o) => selects(target, o));
    if (claims.length === 0) continue;
    const outcomes: { claim_id: string; outcome: DestroyOutcome }[] = [];
    for (const c of claims) outcomes.push({ claim_id: c.claimId, outcome: await vault.destroy(c.claimId) });
    result.runs.push({ simulationId, claims: outcomes });
    const now_ = outcomes.filter((o) => o.outcome !== "already_erased").map((o) => o.claim_id);
    result.erased.push(...now_);
    result.already.push(...outcomes.filter((o) => o.outcome === "already_erased").map((o) => o.claim_id));
    if (now_.length === 0) continue;
    const sealed = loadSealedRunAudit(dataDir, simulationId);
    const root = sealed.find((e) => e.event_type === "SIMULATION_START")?.dfid ?? `dfid_${simulationId}`;
    const erasure = auditEvent({
      dfid: root,
      type: "PERSONAL_DATA_ERASED",
      state: "ERASED",
      at: now.toISOString(),
      simulationId,
      details: {
        ...("customerId" in target ? { customer_id: target.customerId } : {}),
        claim_ids: now_,
        erased_at: now.toISOString(),
        cause: "receivedBefore" in target ? "retention" : "request",
        ...("receivedBefore" in target ? { retention_days: target.retentionDays } : {}),
      },
    });
    // Sealing again reads an erased claim's fields as erased and seals the rest: a run recorded before the audit was
    // sealed (its words in clear, no keys) loses the erased customer's words too, and has every other claim's sealed.
    writeRunAudit(dataDir, simulationId, await sealAuditEvents([...sealed, erasure], vault));
    if (existsSync(join(runDir(dataDir, simulationId), "report.html"))) await writeReport(simulationId);
  }
  return result;
}

/** Everything the data directory holds about one customer, as `claims export` writes it. */
export interface CustomerExport {
  customer_id: string;
  exported_at: string;
  data_dir: string;
  claims: {
    claim_id: string;
    simulation_id: string;
    order_id?: string;
    received_at?: string;
    /** The personal fields, opened (`[erased]` where the key is destroyed), each with its event and path. */
    personal_data: { event_type: string; path: string; value: string }[];
    erased: boolean;
    /** Every audit event of the claim, its personal fields opened. */
    audit: AuditEvent[];
    /** The bus events about the claim (`events.jsonl`). */
    bus_events: unknown[];
  }[];
}

/** The bus journal's lines, parsed (empty without a journal). */
export function busLines(dataDir: string): { detail?: { claim_id?: unknown } }[] {
  const path = join(dataDir, "events.jsonl");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { detail?: { claim_id?: unknown } }];
      } catch {
        return [];
      }
    });
}

/** One claim as `claims export` writes it: its audit, the personal data in it, and the bus events about it. */
export function exportedClaim(
  o: { claimId: string; orderId?: string | undefined; receivedAt?: string | undefined },
  simulationId: string,
  events: readonly AuditEvent[],
  bus: ReturnType<typeof busLines>,
): CustomerExport["claims"][number] {
  const audit = events.filter((e) => e.details.claim_id === o.claimId);
  return {
    claim_id: o.claimId,
    simulation_id: simulationId,
    ...(o.orderId === undefined ? {} : { order_id: o.orderId }),
    ...(o.receivedAt === undefined ? {} : { received_at: o.receivedAt }),
    personal_data: audit.flatMap((e) =>
      personalFields(e.details).map((f) => ({ event_type: e.event_type, path: f.path, value: f.value })),
    ),
    erased: audit.some((e) => erasedPaths(e.details).length > 0),
    audit,
    bus_events: bus.filter((l) => l.detail?.claim_id === o.claimId),
  };
}

/** Everything held about `customerId` in the recorded runs of `dataDir` and its bus journal. */
export async function exportCustomer(dataDir: string, customerId: string, now: Date): Promise<CustomerExport> {
  const bus = busLines(dataDir);
  const claims: CustomerExport["claims"] = [];
  for (const simulationId of listRuns(dataDir)) {
    const events = await loadRunAudit(dataDir, simulationId);
    for (const o of claimOwners(events).filter((x) => belongsTo(x, customerId))) {
      claims.push(exportedClaim(o, simulationId, events, bus));
    }
  }
  return { customer_id: customerId, exported_at: now.toISOString(), data_dir: dataDir, claims };
}

/**
 * The retention policy (`retention.customer_text_days`): erases, as `claims erase` does, the personal data of every
 * recorded claim received more than `days` days before `now`. `claims serve`'s sweep runs it every 5 minutes.
 */
export function sweepRetention(
  dataDir: string,
  days: number,
  now: Date,
  writeReport: (simulationId: string) => Promise<unknown>,
): Promise<ErasureResult> {
  const receivedBefore = new Date(now.getTime() - days * 86_400_000).toISOString();
  return eraseInRuns(dataDir, { receivedBefore, retentionDays: days }, now, writeReport);
}
