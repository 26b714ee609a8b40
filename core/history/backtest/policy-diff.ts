// What the candidate policy changes against the policy the recorded decisions were taken under (the contract and
// threshold each PROPOSAL_SUBMITTED records in its kernel inputs): "max_refund_without_escalation 500 → 100".
import type { AuditEvent } from "../../integrity/audit.ts";
import { ClaimsContractSchema } from "../../integrity/contracts.ts";
import type { ClaimsContract } from "../../integrity/contracts.ts";

/** A policy as the diff compares it: the claims contract and the confidence threshold. */
export type ComparedPolicy = { contract: ClaimsContract; escalate_on_uncertainty: number };

/** One setting the candidate changes: its name as the config spells it, the recorded value and the candidate's. */
export type PolicyChange = { setting: string; from: string; to: string };

/** The policy the last recorded kernel decision of `events` was taken under, or undefined when none is readable. */
export function recordedPolicy(events: readonly AuditEvent[]): ComparedPolicy | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.event_type !== "PROPOSAL_SUBMITTED") continue;
    const inputs = e.details.kernel_inputs as { contract?: unknown; responsibility?: unknown } | undefined;
    const contract = ClaimsContractSchema.safeParse(inputs?.contract);
    const threshold = (inputs?.responsibility as { escalate_on_uncertainty?: unknown } | undefined)
      ?.escalate_on_uncertainty;
    if (contract.success && typeof threshold === "number")
      return { contract: contract.data, escalate_on_uncertainty: threshold };
  }
  return undefined;
}

const shown = (v: unknown): string =>
  v === undefined
    ? "none"
    : Array.isArray(v)
      ? [...v].sort().join(", ")
      : typeof v === "object" && v !== null
        ? // A window per category: `{ default: 14, clothing: 30 }` as "default 14, clothing 30".
          Object.entries(v)
            .map(([k, d]) => `${k} ${String(d)}`)
            .join(", ")
        : String(v);

/** The settings `candidate` changes against `recorded`, in the config's order; empty when it changes none. */
export function policyChanges(recorded: ComparedPolicy, candidate: ComparedPolicy): PolicyChange[] {
  const a = recorded.contract;
  const b = candidate.contract;
  const rows: [string, unknown, unknown][] = [
    ["max_refund_without_escalation", a.max_refund_without_escalation, b.max_refund_without_escalation],
    ["return_window_days", a.return_window_days, b.return_window_days],
    ["allowed_refund_categories", a.allowed_refund_categories, b.allowed_refund_categories],
    ["escalate_on_uncertainty", recorded.escalate_on_uncertainty, candidate.escalate_on_uncertainty],
    ["customer_limits.window_days", a.customer_limits?.window_days, b.customer_limits?.window_days],
    [
      "customer_limits.max_automatic_refunds",
      a.customer_limits?.max_automatic_refunds,
      b.customer_limits?.max_automatic_refunds,
    ],
    ["customer_limits.max_automatic_eur", a.customer_limits?.max_automatic_eur, b.customer_limits?.max_automatic_eur],
  ];
  return rows
    .map(([setting, from, to]) => ({ setting, from: shown(from), to: shown(to) }))
    .filter((c) => c.from !== c.to);
}

/** "max_refund_without_escalation 500 → 100; return_window_days 14 → 30", or "none" for no change. */
export function formatPolicyChanges(changes: readonly PolicyChange[]): string {
  return changes.length === 0 ? "none" : changes.map((c) => `${c.setting} ${c.from} → ${c.to}`).join("; ");
}
