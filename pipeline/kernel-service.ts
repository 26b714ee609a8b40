// Kernel service: decide a proposal once per idempotency key, execute an ACCEPT at most once,
// publish the verdict at least once with a stable verdict_id. Each step is repaired by a retry.
import { canonicalize } from "../core/crew/index.ts";
import { formatEur, idempotencyKeyOf, parseCents, severityForVerdict } from "../core/integrity/index.ts";
import type { AuditEvent } from "../core/integrity/index.ts";
import { busEntry } from "../core/claims/events.ts";
import type { BusEntry } from "../core/claims/events.ts";
import type { ClaimVerdictDetail } from "../core/claims/events.ts";
import { buildVerdictRecord, executionIdFor, planExecution } from "../core/claims/execution.ts";
import { decideClaim } from "../core/claims/kernel.ts";
import type { ExecutionState, StoredVerdict } from "./ports.ts";
import { claimAudit } from "./audit-events.ts";
import type { PipelineDeps } from "./deps.ts";
import type { Effect } from "./effects.ts";
import type { ProposalMessage } from "./messages.ts";
import { performEffects } from "./perform.ts";

/** Reads the proposal's order id without trusting its shape. */
function proposedOrderId(proposal: unknown): string | undefined {
  const params = (proposal as { params?: { order_id?: unknown } } | null)?.params;
  return typeof params?.order_id === "string" && params.order_id.length > 0 ? params.order_id : undefined;
}

/** Handles one proposal message; returns the stored verdict. */
export async function handleProposal(
  message: ProposalMessage,
  deps: Pick<PipelineDeps, "verdicts" | "orders" | "ledger" | "claims" | "audit" | "publisher" | "queues" | "clock" | "agent" | "registry">,
): Promise<StoredVerdict> {
  const key = idempotencyKeyOf(message.proposal, message.dfid);
  const ref = { claim_id: message.claim_id, dfid: message.dfid, root_dfid: message.root_dfid, simulation_id: message.simulation_id };
  let stored = await deps.verdicts.getVerdict(key);

  if (!stored) {
    const now = deps.clock.now();
    const decidedAt = new Date(now).toISOString();
    const orderId = proposedOrderId(message.proposal);
    const order = orderId ? await deps.orders.getOrder(orderId) : undefined;
    const ledgerEntry = order ? await deps.ledger.get(order.order_id) : undefined;
    const inputs = {
      proposal: message.proposal,
      claim: message.claim,
      contract: deps.agent.contract,
      responsibility: deps.agent.responsibility,
      registry: { agents: deps.registry.agents },
      order,
      ledgerEntry,
      receivedAt: message.received_at,
      decidedAt,
      claimId: message.claim_id,
      dfid: message.dfid,
    };
    const verdict = decideClaim(inputs);
    const record = buildVerdictRecord({ verdict, proposal: message.proposal, claimId: message.claim_id, dfid: message.dfid, decidedAt, ...(message.simulation_id ? { simulationId: message.simulation_id } : {}) });
    // The decision's audit is stored with the verdict, so whichever delivery publishes it appends it (a crash loses none, a race adds none).
    const audit = [
      claimAudit(ref, "PROPOSAL_SUBMITTED", "RUNNING", now, { kernel_inputs: JSON.parse(canonicalize({ ...inputs, order: order ?? null, ledgerEntry: ledgerEntry ?? null })) }),
      claimAudit(ref, "KERNEL_VERDICT", "DECIDED", now, { ...record, layer: verdict.layer, checks: verdict.checks }, severityForVerdict(verdict.verdict)),
    ];
    stored = await deps.verdicts.putVerdictOnce({
      idempotency_key: key,
      claim_id: message.claim_id,
      record,
      layer: verdict.layer,
      checks: verdict.checks,
      execution: verdict.verdict === "ACCEPT" ? "PENDING" : "NOT_APPLICABLE",
      ...(verdict.verdict === "ESCALATE" ? { review: { claim_id: message.claim_id, dfid: message.dfid, reason_code: verdict.reason_code, reason: verdict.reason } } : {}),
      events: [busEntry("ClaimVerdict", record)],
      audit,
      published: false,
    });
  }

  if (stored.execution === "PENDING") stored = await execute(stored, message, deps);

  if (!stored.published) {
    await performEffects((stored.audit ?? []).map((event): Effect => ({ kind: "audit", event })), deps);
    await deps.publisher.publish(stored.events);
    await deps.verdicts.markPublished(key);
    stored = { ...stored, published: true };
  }
  const now = deps.clock.now();
  await performEffects([{ kind: "claim_update", claimId: message.claim_id, patch: decidedPatch(stored.record, stored.execution, now), onlyFrom: ["RECEIVED", "RUNNING"] }], deps);
  return stored;
}

async function execute(stored: StoredVerdict, message: ProposalMessage, deps: Pick<PipelineDeps, "orders" | "ledger" | "verdicts" | "clock">): Promise<StoredVerdict> {
  const now = deps.clock.now();
  const ref = { claim_id: message.claim_id, dfid: message.dfid, root_dfid: message.root_dfid, simulation_id: message.simulation_id };
  const events: BusEntry[] = [...stored.events];
  const audit: AuditEvent[] = [...(stored.audit ?? [])];
  let execution: ExecutionState = "NOT_APPLICABLE";
  let review = stored.review;
  const verdictView = { verdict: stored.record.verdict, reason_code: stored.record.reason_code, reason: stored.record.reason, layer: stored.layer, checks: stored.checks };
  for (const effect of planExecution(verdictView as never, message.proposal, message.claim_id)) {
    if (effect.type !== "refund.reserve") continue;
    const order = await deps.orders.getOrder(effect.order_id);
    const orderCents = order ? parseCents(order.amount) : undefined;
    if (!order || !orderCents?.ok) throw new Error(`kernel: order ${effect.order_id} vanished or is corrupt between decision and execution`);
    const result = await deps.ledger.reserve(effect.order_id, effect.claim_id, effect.amount_cents, orderCents.cents);
    const mine = !result.ok && result.code === "ALREADY_REFUNDED_FOR_CLAIM" && result.entry.claims[effect.claim_id] === effect.amount_cents;
    if (result.ok || mine) {
      execution = "EXECUTED";
      const detail = { execution_id: executionIdFor(stored.record.verdict_id), claim_id: message.claim_id, dfid: message.dfid, order_id: effect.order_id, amount_eur: effect.amount_eur, verdict_id: stored.record.verdict_id };
      events.push(busEntry("RefundExecuted", detail));
      audit.push(claimAudit(ref, "CLAIM_REFUND_EXECUTED", "DECIDED", now, { ...detail, amount_cents: effect.amount_cents, ledger_after: result.entry }));
    } else {
      execution = "REFUSED";
      const reason = `Refund of ${formatEur(effect.amount_cents)} EUR not executed: ${result.message}`;
      review = { claim_id: message.claim_id, dfid: message.dfid, reason_code: result.code, reason };
      events.push(busEntry("ClaimNeedsReview", review));
      audit.push(claimAudit(ref, "CLAIM_REFUND_NOT_EXECUTED", "DECIDED", now, { verdict_id: stored.record.verdict_id, code: result.code, reason }, "WARN"));
    }
  }
  return deps.verdicts.recordExecution(stored.idempotency_key, { execution, events, audit, ...(review ? { review } : {}) });
}

function decidedPatch(record: ClaimVerdictDetail, execution: ExecutionState, now: number) {
  return {
    status: "DECIDED" as const,
    verdict: record.verdict,
    verdict_id: record.verdict_id,
    reason_code: record.reason_code,
    reason: record.reason,
    executed: execution === "EXECUTED",
    updated_at: new Date(now).toISOString(),
  };
}
