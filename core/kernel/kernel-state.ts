// The kernel's working state and the shape of its table (core/kernel/kernel.ts): what a check reads, what it may
// establish for the checks after it, and the small constructors every layer file uses.
import type * as z from "zod";
import type { Sha256Hex } from "../crew/hash.ts";
import type { ClaimsContract, Order, PolicyKind, ResponsibilityContract } from "../integrity/contracts.ts";
import type { ProposalEnvelopeSchema } from "../integrity/proposal.ts";
import type { RegistryView } from "../integrity/registry.ts";
import type { Verdict } from "../integrity/verdict.ts";
import type { Claim } from "../claim/claim.ts";
import type { CustomerLimitsCents, CustomerWindow } from "./customer-window.ts";
import type { LedgerEntry } from "./ledger.ts";
import type { Money } from "./money.ts";
import type { OrderLineView, OrderView } from "./order-view.ts";
import type { NamedLines } from "./claim-lines.ts";
import type { CurrencyPolicy } from "./policy.ts";
import type { ClaimReasonCode, KERNEL_LAYERS, KernelLayerId } from "./reason-codes.ts";

/** A verdict of the claims kernel. */
export type ClaimVerdict = Verdict<ClaimReasonCode>;

/** Everything the kernel decides from; all of it is plain data and none of it is mutated. */
export type DecideClaimInput = {
  /** The proposal as received (unknown: layer 1 is "the proposal parses"). */
  proposal: unknown;
  /** The claim the proposal answers. */
  claim: Claim;
  /** The claims bounds. */
  contract: ClaimsContract;
  /** The responsibility contract of the proposing agent, as it registered. */
  responsibility: ResponsibilityContract;
  /** The agent registry (a snapshot or an `AgentRegistry`). */
  registry: RegistryView;
  /** The context store's order for the proposal's order id, or `undefined` when unknown. */
  order: Order | undefined;
  /**
   * Who answered that there is no such order, when it was the shop's order API (`ORDER_SOURCE=http`): the verdict's
   * reason says so. Absent when the order was found, or looked up in the context store (the table or the config).
   */
  orderAbsentFrom?: "shop_api";
  /** The refund ledger entry of that order, or `undefined` when nothing was refunded on it. */
  ledgerEntry: LedgerEntry | undefined;
  /**
   * The customer's window of automatic refunds (the ORDER's customer), when the contract has `customer_limits` and
   * the order a `customer_id`; `undefined` when nothing was reserved for the customer yet.
   */
  customerWindow?: CustomerWindow | undefined;
  /** The claim this one was resubmitted from by a reviewer (RESUBMIT): such a claim is never refunded without a person. */
  parentClaimId?: string | undefined;
  /** When the claim was received (ISO); the return window counts back from here. */
  receivedAt: string;
  /** When the kernel sees the proposal (ISO); the validity window counts up to here. */
  decidedAt: string;
  /** The claim's id: its own reservation on the ledger is not counted against it, so a replay after execution decides the same. */
  claimId?: string;
  /** The claim's decision flow id: when given, a proposal of another flow is `PROPOSAL_MISMATCH`. */
  dfid?: string;
  /**
   * A reviewer approves (docs/reviews.md): the escalation checks (layers 9–11b) are lifted and nothing else; the
   * reject checks run again against the ledger as it stands.
   */
  approval?: { amountEur?: number };
  /** How to compute the SHA-256 the idempotency key check needs (any implementation decides the same); default the pure one of core/crew/hash.ts. */
  sha256?: Sha256Hex;
};

/**
 * What the checks read: the input, its times and limit checked once, and the facts earlier checks
 * established. A fact is set by the check named beside it and read only by checks after it in the table.
 */
export type KernelState = {
  readonly input: Readonly<DecideClaimInput>;
  readonly decidedMs: number;
  readonly receivedMs: number;
  /** The contract's flat (EUR) escalation limit, checked once; an order's own currency's is on the subject. */
  readonly limit: Money;
  /** The contract's flat (EUR) customer limit, when it has one, checked once. */
  readonly customerLimits: CustomerLimitsCents | undefined;
  /** The order id asked for: the proposal's (proposal_schema). */
  orderId: unknown;
  /** The amount asked for: the proposal's (proposal_schema). */
  amountEur: unknown;
  /** The parsed proposal and its creation time (proposal_schema). */
  envelope: { p: z.infer<typeof ProposalEnvelopeSchema>; createdMs: number } | undefined;
  /** The proposal's policy kind (policy_kind). */
  policyKind: PolicyKind | undefined;
  /** The order with its purchase time, its lines, the claim's candidate lines and what it can refund (order_exists). */
  subject: KernelSubject | undefined;
  /** The amount judged (amount_valid). */
  amount: Money | undefined;
};

/** The order a claim is judged against (order_exists): read as lines, with the claim's candidate lines. */
export type KernelSubject = {
  readonly order: Order;
  readonly view: OrderView;
  readonly purchaseMs: number;
  /** What the order can refund at most: its lines, plus shipping when the policy refunds it. */
  readonly orderAmount: Money;
  /** The lines the claim is about: one, or several when only a person can tell which (LINE_AMBIGUOUS). */
  readonly lines: readonly OrderLineView[];
  /**
   * The lines the claim names (`claim.lines`), each with the units claimed and what they cost; the problem when one
   * is not a line of the order or claims more units than were bought (LINE_NOT_IN_ORDER). Absent: today's form.
   */
  readonly named?: NamedLines | undefined;
  /** The bounds of the order's currency, or undefined when the policy has none (CURRENCY_NOT_IN_POLICY). */
  readonly policy: CurrencyPolicy | undefined;
};

/** The facts a check may establish for the checks after it. */
export type KernelFacts = Partial<
  Pick<KernelState, "orderId" | "amountEur" | "envelope" | "policyKind" | "subject" | "amount">
>;

/** What one check found: passed (maybe with facts for later checks), failed with a reason code, or not applicable. */
export type CheckResult<Code extends ClaimReasonCode> =
  | { readonly outcome: "pass"; readonly learned?: KernelFacts }
  | { readonly outcome: "fail"; readonly code: Code; readonly reason: string }
  | { readonly outcome: "skip" };

/** One named check: the reason codes it can fail with, and the pure function that runs it. */
export type KernelCheck = {
  readonly name: string;
  readonly codes: readonly ClaimReasonCode[];
  readonly run: (s: KernelState) => CheckResult<ClaimReasonCode>;
};

/** One row of the table: a layer (its id and name), the checks it runs in order, and whether an approval lifts it. */
export type KernelLayer = {
  readonly layer: KernelLayerId;
  readonly name: string;
  readonly liftedByApproval: boolean;
  readonly checks: readonly KernelCheck[];
};

/** A check that passed and learned nothing. */
export const PASSED = { outcome: "pass" } as const;
/** A check that does not apply. */
export const SKIPPED = { outcome: "skip" } as const;
/** A check that passed and established facts for the checks after it. */
export const passWith = (learned: KernelFacts) => ({ outcome: "pass", learned }) as const;
/** A check that failed with a reason code and a human reason. */
export const fail = <Code extends ClaimReasonCode>(code: Code, reason: string) =>
  ({ outcome: "fail", code, reason }) as const;

/** A named check with the reason codes it can fail with. */
export const check = <const Code extends ClaimReasonCode>(
  name: string,
  codes: readonly Code[],
  run: (s: KernelState) => CheckResult<Code>,
): KernelCheck => ({ name, codes, run });

/** A row of the table: its layer id and name, its checks, and whether a reviewer's approval lifts it. */
export const layer = <L extends KernelLayerId>(
  id: L,
  name: (typeof KERNEL_LAYERS)[L],
  checks: readonly KernelCheck[],
  options: { liftedByApproval?: boolean } = {},
): KernelLayer => ({ layer: id, name, liftedByApproval: options.liftedByApproval ?? false, checks });

/** The parsed proposal (proposal_schema): facts a check reads are established by an earlier one in the table. */
export const proposalOf = (s: KernelState) => s.envelope!.p;
/** The order with its purchase time and amount (order_exists), read by the checks after it. */
export const subjectOf = (s: KernelState) => s.subject!;

/** Quotes an untrusted value for a human reason, cut to a readable length. */
export function show(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return `'${text.length > 80 ? `${text.slice(0, 80)}…` : text}'`;
}
