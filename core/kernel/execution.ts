// A kernel verdict as recorded and acted on: its deterministic ids, the verdict record (the `ClaimVerdict`
// detail, core/kernel/events.ts) and the plan of what it calls for (a refund to reserve, a review to open).
import * as z from "zod";
import { canonicalize } from "../crew/canonical.ts";
import { hashHex } from "../crew/hash.ts";
import type { Sha256Hex } from "../crew/hash.ts";
import { KernelInputError } from "../integrity/errors.ts";
import { parseMoney, toMajor } from "./money.ts";
import { idempotencyKeyOf } from "../integrity/proposal.ts";
import { ClaimVerdictDetailSchema } from "./events.ts";
import type { ClaimVerdictDetail } from "./events.ts";
import type { Claim } from "../claim/claim.ts";
import type { ClaimVerdict } from "./kernel.ts";
import { PolicyKindSchema } from "../integrity/contracts.ts";
import type { ClaimsContract, ResponsibilityContract } from "../integrity/contracts.ts";
import { canonicalizeStable } from "../crew/canonical.ts";

/** The verdict id for an idempotency key: `vrd_` + 32 hex; the same proposal always gets the same id. */
export function verdictIdFor(idempotencyKey: string): string {
  return `vrd_${hashHex(`verdict|${idempotencyKey}`).slice(0, 32)}`;
}

/** The execution id for a verdict id: `exe_` + 32 hex; a redelivered execution repeats it so consumers dedupe. */
export function executionIdFor(verdictId: string): string {
  return `exe_${hashHex(`execution|${verdictId}`).slice(0, 32)}`;
}

/**
 * The policy version of a decision: `pol_` + 16 hex of the SHA-256 of the canonical claims bounds and responsibility
 * contract that decided it — the same policy always gives the same version, any change a new one.
 */
export function policyVersionOf(policy: { contract: ClaimsContract; responsibility: ResponsibilityContract }): string {
  const canonical = canonicalizeStable({ contract: policy.contract, responsibility: policy.responsibility });
  return `pol_${hashHex(`policy|${canonical}`).slice(0, 16)}`;
}

/** What a verdict record is built from. */
type VerdictRecordInput = {
  verdict: ClaimVerdict;
  /** The claims bounds and the responsibility contract that decided (their hash is the record's `policy_version`). */
  policy: { contract: ClaimsContract; responsibility: ResponsibilityContract };
  proposal: unknown;
  claimId: string;
  /** The claim's DFID (the record's, whatever the proposal claims). */
  dfid: string;
  decidedAt: string;
  simulationId?: string;
  /** The SHA-256 for the idempotency key (any implementation gives the same key); default the pure one. */
  sha256?: Sha256Hex;
};

/**
 * Builds the verdict record deterministically: the idempotency key is derived from the proposal's
 * content (see `idempotencyKeyOf`), the verdict id from the key; throws `KernelInputError` for bad ids/times.
 */
export function buildVerdictRecord(input: VerdictRecordInput): ClaimVerdictDetail {
  const idempotency_key = idempotencyKeyOf(input.proposal, input.dfid, input.sha256);
  const raw = asRecord(input.proposal);
  const params = asRecord(raw?.params);
  const orderId = params?.order_id;
  const amount = params?.amount_eur;
  const kind = PolicyKindSchema.safeParse(raw?.policy_kind);
  return verdictRecord(input, idempotency_key, {
    order_id: typeof orderId === "string" && orderId !== "" ? orderId : null,
    amount_eur: typeof amount === "number" && Number.isFinite(amount) ? amount : null,
    policy_kind: kind.success ? kind.data : null,
  });
}

/** The verdict record under `idempotency_key`, validated; throws `KernelInputError` for bad ids/times. */
function verdictRecord(
  input: Omit<VerdictRecordInput, "proposal">,
  idempotency_key: string,
  refund: { order_id: string | null; amount_eur: number | null; policy_kind: ClaimVerdictDetail["policy_kind"] },
): ClaimVerdictDetail {
  const record = {
    verdict_id: verdictIdFor(idempotency_key),
    claim_id: input.claimId,
    dfid: input.dfid,
    verdict: input.verdict.verdict,
    reason_code: input.verdict.reason_code,
    reason: input.verdict.reason,
    ...refund,
    idempotency_key,
    decided_at: input.decidedAt,
    policy_version: policyVersionOf(input.policy),
    ...(input.simulationId === undefined ? {} : { simulation_id: input.simulationId }),
  };
  const parsed = ClaimVerdictDetailSchema.safeParse(record);
  if (!parsed.success)
    throw new KernelInputError(`verdict record is invalid: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  return parsed.data;
}

/**
 * The idempotency key of a triage verdict (docs/kernel.md): SHA-256 hex of the DFID and the canonical claim under a
 * `triage|` mark. A proposal's key hashes a canonical JSON object and an unparsed input's an `unparsed-proposal|`
 * text, so the hashed texts always differ and a triage key can never equal a proposal's.
 */
export function triageIdempotencyKey(dfid: string, claim: Claim, sha256: Sha256Hex = hashHex): string {
  return sha256(`triage|${canonicalize({ dfid, claim })}`);
}

/** What a triage verdict record is built from. */
type TriageRecordInput = Omit<VerdictRecordInput, "proposal"> & { claim: Claim };

/**
 * The verdict record of a claim triage decided: a normal `ClaimVerdict` detail naming the claim's order and amount,
 * with no policy kind (no proposal was made), the triage key and the policy version. Throws `KernelInputError` for bad ids/times.
 */
export function buildTriageVerdictRecord(input: TriageRecordInput): ClaimVerdictDetail {
  const idempotency_key = triageIdempotencyKey(input.dfid, input.claim, input.sha256);
  return verdictRecord(input, idempotency_key, {
    order_id: input.claim.order_id,
    amount_eur: Number.isFinite(input.claim.amount_eur) ? input.claim.amount_eur : null,
    policy_kind: null,
  });
}

/** A side effect a verdict calls for, as plain data; only the kernel service performs it. */
type ExecutionEffect =
  /** `amount_cents`: minor units of the order's currency (cents for EUR); `amount_eur`: the amount in its major units. */
  | { type: "refund.reserve"; claim_id: string; order_id: string; amount_cents: number; amount_eur: number }
  | { type: "review.create"; claim_id: string; reason_code: string; reason: string };

/**
 * Plans what a verdict calls for: ACCEPT → reserve the refund on the ledger; ESCALATE → a pending human
 * review; REJECT → nothing (its reason is the customer-facing answer). Throws `KernelInputError` for an
 * ACCEPT whose proposal has no valid order id and amount (the kernel never produces one).
 */
export function planExecution(
  verdict: ClaimVerdict,
  proposal: unknown,
  claimId: string,
  /** The currency the proposal's amount counts (the order's): its minor units are what the ledger reserves. */
  currency = "EUR",
): ExecutionEffect[] {
  if (verdict.verdict === "REJECT") return [];
  if (verdict.verdict === "ESCALATE")
    return [{ type: "review.create", claim_id: claimId, reason_code: verdict.reason_code, reason: verdict.reason }];
  const params = asRecord(asRecord(proposal)?.params);
  const orderId = params?.order_id;
  const amount = parseMoney(params?.amount_eur, currency);
  if (typeof orderId !== "string" || orderId === "" || !amount.ok || amount.money.minor <= 0) {
    throw new KernelInputError("planExecution: an ACCEPT verdict for a proposal without a valid order id and amount");
  }
  return [
    {
      type: "refund.reserve",
      claim_id: claimId,
      order_id: orderId,
      amount_cents: amount.money.minor,
      amount_eur: toMajor(amount.money),
    },
  ];
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
