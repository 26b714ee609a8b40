// The claims kernel: a pure function from (proposal, claim, contracts, registry, order, ledger, times) to a verdict,
// written as an ordered table of named layers, each a list of named checks (the checks live by layer in
// checks-proposal.ts, checks-order.ts and checks-escalation.ts; the state they read in kernel-state.ts).
import { KernelInputError } from "../integrity/errors.ts";
import { parseIsoMs } from "../integrity/time.ts";
import { PASS_LAYER, type VerdictCheck } from "../integrity/verdict.ts";
import {
  amountAlignment,
  agentAuthorised,
  linesAlignment,
  agentRegistered,
  flowAlignment,
  idempotencyKey,
  orderAlignment,
  policyKind,
  proposalId,
  proposalSchema,
  ttl,
} from "./checks-proposal.ts";
import {
  amountValid,
  categoryAllowed,
  categoryAuthorised,
  customerMatch,
  currencyMatch,
  linesInOrder,
  orderExists,
  orderIdPresent,
  refundableBalance,
  returnWindow,
} from "./checks-order.ts";
import {
  amountLimit,
  confidence,
  customerLimit,
  currencyInPolicy,
  customerVerified,
  lineKnown,
  openReview,
  policyKindEscalation,
  priorDecision,
  purchaseDateSanity,
  resubmitted,
} from "./checks-escalation.ts";
import { customerLimitsCents, type CustomerLimitsCents } from "./customer-window.ts";
import {
  layer,
  PASSED,
  show,
  type ClaimVerdict,
  type DecideClaimInput,
  type KernelCheck,
  type KernelLayer,
  type KernelState,
} from "./kernel-state.ts";
import { money, parseMoney } from "./money.ts";
import { returnWindowEntries } from "./policy.ts";
import { REASON_CODES, type ClaimReasonCode, type KernelLayerId } from "./reason-codes.ts";

export type { ClaimVerdict, DecideClaimInput } from "./kernel-state.ts";

/**
 * The kernel's layers in the order they run; the first failing check wins. Every REJECT check runs before any
 * ESCALATE check — except alignment (8): a proposal that does not answer its claim is a model failure, not a
 * customer outcome, so it runs right after the schema and escalates before the order is even looked up (a
 * garbled order id never becomes ORDER_NOT_FOUND). A reviewer's approval lifts the escalation layers 9–11b
 * (10c and 10d included) and nothing else.
 */
export const KERNEL_TABLE: readonly KernelLayer[] = [
  layer(1, "schema", [proposalSchema, idempotencyKey, proposalId, policyKind, agentRegistered, agentAuthorised]),
  layer(8, "alignment", [flowAlignment, orderAlignment, amountAlignment, linesAlignment]),
  layer(2, "validity", [ttl]),
  layer(3, "order", [orderIdPresent, orderExists, linesInOrder]),
  layer(4, "category", [categoryAllowed, categoryAuthorised]),
  layer(5, "window", [returnWindow]),
  layer(6, "amount", [amountValid]),
  layer(7, "balance", [refundableBalance]),
  layer(8.5, "customer", [customerMatch]),
  layer(8.6, "claim_currency", [currencyMatch]),
  layer(9, "uncertainty", [policyKindEscalation, confidence], { liftedByApproval: true }),
  layer(9.5, "customer_unverified", [customerVerified], { liftedByApproval: true }),
  layer(9.7, "line", [lineKnown], { liftedByApproval: true }),
  layer(10, "date_sanity", [purchaseDateSanity], { liftedByApproval: true }),
  layer(10.5, "open_review", [openReview], { liftedByApproval: true }),
  layer(10.6, "prior_decision", [priorDecision], { liftedByApproval: true }),
  layer(10.7, "resubmitted", [resubmitted], { liftedByApproval: true }),
  layer(10.8, "currency", [currencyInPolicy], { liftedByApproval: true }),
  layer(11, "limit", [amountLimit], { liftedByApproval: true }),
  layer(11.5, "customer_limit", [customerLimit], { liftedByApproval: true }),
];

/** The layer ids in the order they run, then the pass row. */
export const EVALUATION_ORDER: readonly (KernelLayerId | typeof PASS_LAYER)[] = [
  ...KERNEL_TABLE.map((l) => l.layer),
  PASS_LAYER,
];

/**
 * Decides a refund proposal by running every layer of `KERNEL_TABLE`. Business outcomes are returned, never
 * thrown; a `KernelInputError` means the caller wired the kernel wrongly (bad timestamps or contract, another
 * order than the proposal names, a corrupt ledger entry).
 */
export function decideClaim(input: DecideClaimInput): ClaimVerdict {
  return runLayers(KERNEL_TABLE, kernelState(input));
}

/** What triage decides from: the claim itself (its order id, amount and customer), the order and its ledger entry. */
export type TriageInput = Pick<
  DecideClaimInput,
  | "claim"
  | "contract"
  | "responsibility"
  | "order"
  | "orderAbsentFrom"
  | "ledgerEntry"
  | "receivedAt"
  | "decidedAt"
  | "claimId"
>;

/**
 * Layer 7 on the claim itself: any proposal that passes the self-check asks for a positive amount of at most the
 * claimed one, so the claim is decided here only when not even the least refund (one cent) fits the balance.
 */
const nothingLeftToRefund: KernelCheck = {
  name: refundableBalance.name,
  codes: refundableBalance.codes,
  run: (s) =>
    refundableBalance.run({ ...s, amount: money(1, s.subject!.orderAmount.currency) }).outcome === "fail"
      ? refundableBalance.run(s)
      : PASSED,
};

/** The kernel's layers triage runs on the claim itself: order (3), category (4), window (5), amount (6), balance (7), customer (8b). */
const TRIAGE_LAYERS: ReadonlySet<KernelLayerId> = new Set<KernelLayerId>([3, 4, 5, 6, 7, 8.5]);

/**
 * The rows of `KERNEL_TABLE` that decide a claim whatever a self-checked proposal would say (it names the claim's
 * order and at most its amount): every one of them can only REJECT. The balance row asks whether anything is left.
 */
export const TRIAGE_TABLE: readonly KernelLayer[] = KERNEL_TABLE.filter((row) => TRIAGE_LAYERS.has(row.layer)).map(
  (row) => (row.layer === 7 ? { ...row, checks: [nothingLeftToRefund] } : row),
);

/**
 * Triage (docs/kernel.md): runs `TRIAGE_TABLE` on the claim itself — its order id and claimed amount stand in for
 * a proposal's. Returns the REJECT verdict of the first failing check, or `undefined` when the claim can pass and
 * goes to the crew. Like `decideClaim`, a `KernelInputError` means bad wiring or corrupt order data.
 */
export function triageClaim(input: TriageInput): ClaimVerdict | undefined {
  const s = kernelState({ ...input, proposal: null, registry: { agents: {} } });
  s.orderId = input.claim.order_id;
  s.amountEur = input.claim.amount_eur;
  const verdict = runLayers(TRIAGE_TABLE, s);
  if (verdict.verdict === "ACCEPT") return undefined;
  // Rejected after the balance row while only part of the claim is left: a proposal above what is left would be
  // refused on the balance first, one within it on the later row, so the reason depends on the proposal: the crew.
  if (verdict.layer > 7 && refundableBalance.run(s).outcome === "fail") return undefined;
  return verdict;
}

/** The state the checks start from: the input with its times and contract checked (a wiring error throws). */
function kernelState(input: DecideClaimInput): KernelState {
  const decidedMs = kernelTime(input.decidedAt, "decidedAt");
  const receivedMs = kernelTime(input.receivedAt, "receivedAt");
  const limit = parseMoney(input.contract.max_refund_without_escalation, "EUR");
  if (!limit.ok || limit.money.minor <= 0)
    throw new KernelInputError(
      `contract.max_refund_without_escalation: ${limit.ok ? "must be positive" : limit.message}`,
    );
  for (const [what, days] of returnWindowEntries(input.contract))
    if (!Number.isSafeInteger(days) || days <= 0)
      throw new KernelInputError(`contract.${what} must be a positive integer, got ${String(days)}`);
  let customerLimits: CustomerLimitsCents | undefined;
  try {
    customerLimits = input.contract.customer_limits ? customerLimitsCents(input.contract.customer_limits) : undefined;
  } catch (cause) {
    throw new KernelInputError(`contract.${(cause as Error).message}`, { cause });
  }
  return {
    input,
    decidedMs,
    receivedMs,
    limit: limit.money,
    customerLimits,
    orderId: undefined,
    amountEur: undefined,
    envelope: undefined,
    policyKind: undefined,
    subject: undefined,
    amount: undefined,
  };
}

/**
 * Runs `layers` in order on `s`: each passed check is traced, the first failing one decides with its reason
 * code; when every check passes the verdict is ACCEPT. With an approval the layers it lifts do not run.
 */
function runLayers(layers: readonly KernelLayer[], s: KernelState): ClaimVerdict {
  const checks: VerdictCheck<ClaimReasonCode>[] = [];
  for (const row of layers) {
    if (row.liftedByApproval && s.input.approval) continue;
    for (const c of row.checks) {
      const result = c.run(s);
      if (result.outcome === "skip") continue;
      if (result.outcome === "fail") {
        const { layer: id, verdict } = REASON_CODES[result.code];
        checks.push({ layer: id, name: c.name, passed: false, reason_code: result.code });
        return { verdict, reason_code: result.code, reason: result.reason, layer: id, checks };
      }
      checks.push({ layer: row.layer, name: c.name, passed: true });
      if (result.learned) Object.assign(s, result.learned);
    }
  }
  return {
    verdict: "ACCEPT",
    reason_code: "VALIDATION_PASSED",
    reason: s.input.approval ? "Reject checks passed; escalation lifted by a reviewer's approval" : "Validation passed",
    layer: PASS_LAYER,
    checks,
  };
}

function kernelTime(value: string, what: string): number {
  const ms = typeof value === "string" ? parseIsoMs(value) : undefined;
  if (ms === undefined) throw new KernelInputError(`${what} must be an ISO-8601 timestamp, got ${show(value)}`);
  return ms;
}
