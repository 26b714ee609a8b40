// Triage, decided (docs/kernel.md): before the crew starts, the kernel's order, category, window, amount, balance
// and customer layers run on the claim itself; a claim they reject is decided REJECT without a model call. Pure:
// the shell (pipeline/triage.ts) loads the order and its ledger entry, stores the verdict once, publishes it.
import { type LedgerEntry } from "../../core/kernel/index.ts";
import { canonicalize } from "../../core/crew/index.ts";
import { busEntry } from "../../core/kernel/events.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { buildTriageVerdictRecord, triageIdempotencyKey } from "../../core/kernel/execution.ts";
import { triageClaim } from "../../core/kernel/kernel.ts";
import { severityForVerdict } from "../../core/integrity/index.ts";
import type { Order } from "../../core/integrity/index.ts";
import { claimAudit } from "./audit.ts";
import type { PipelineDeps } from "../deps.ts";
import type { Decision } from "./kernel-decision.ts";

/** What triage decides with beyond the claim: the agent's contracts and the hash to key with. */
type TriagePolicy = Pick<PipelineDeps, "agent" | "sha256">;

/** The key a claim's triage verdict is stored under (never a proposal's: see `triageIdempotencyKey`). */
export function triageKey(record: ClaimRecord, policy: Pick<PipelineDeps, "sha256">): string | undefined {
  return record.claim ? triageIdempotencyKey(record.dfid, record.claim, policy.sha256) : undefined;
}

/**
 * Triages the stored claim against its order and that order's ledger entry at `decidedAt`: the REJECT decision with
 * its ClaimVerdict event and its audit (CLAIM_TRIAGED with the inputs, then KERNEL_VERDICT), or `undefined` when the
 * claim can pass and goes to the crew. Throws `KernelInputError` for corrupt order data (the crew path handles it).
 */
export function triageDecision(
  record: ClaimRecord,
  at: { order: Order | undefined; ledgerEntry: LedgerEntry | undefined; decidedAt: string; now: number },
  policy: TriagePolicy,
): Decision | undefined {
  const claim = record.claim;
  if (!claim) return undefined;
  const inputs = {
    claim,
    contract: policy.agent.contract,
    responsibility: policy.agent.responsibility,
    order: at.order,
    ledgerEntry: at.ledgerEntry,
    receivedAt: record.received_at,
    decidedAt: at.decidedAt,
    claimId: record.claim_id,
    // Recorded as the kernel records it: replay checks a resubmitted claim's parent (found by npm run chaos once its
    // reviewers could resubmit).
    ...(record.parent_claim_id ? { parentClaimId: record.parent_claim_id } : {}),
  };
  const verdict = triageClaim(inputs);
  if (!verdict) return undefined;
  const verdictRecord = buildTriageVerdictRecord({
    verdict,
    claim,
    claimId: record.claim_id,
    dfid: record.dfid,
    decidedAt: at.decidedAt,
    policy: { contract: policy.agent.contract, responsibility: policy.agent.responsibility },
    ...(record.simulation_id ? { simulationId: record.simulation_id } : {}),
    ...(policy.sha256 ? { sha256: policy.sha256 } : {}),
  });
  const audit = [
    claimAudit(record, "CLAIM_TRIAGED", "RUNNING", at.now, {
      triage_inputs: JSON.parse(
        canonicalize({ ...inputs, dfid: record.dfid, order: at.order ?? null, ledgerEntry: at.ledgerEntry ?? null }),
      ),
    }),
    claimAudit(
      record,
      "KERNEL_VERDICT",
      "DECIDED",
      at.now,
      { ...verdictRecord, layer: verdict.layer, checks: verdict.checks },
      severityForVerdict(verdict.verdict),
    ),
  ];
  return { verdict, record: verdictRecord, events: [busEntry("ClaimVerdict", verdictRecord)], audit };
}
