// What a backtest takes (the recorded histories, the candidate policy, the window) and what it reports (flips,
// totals, people's decisions): the shapes `claims backtest --json`, its human output and the HTML report read.
import type { ComparedPolicy, PolicyChange } from "./policy-diff.ts";
import type { Sha256Hex } from "../../crew/hash.ts";
import type { ClaimsContract, ResponsibilityContract } from "../../integrity/contracts.ts";
import type { AuditEvent } from "../../integrity/audit.ts";
import type { VerdictCheck, VerdictKind } from "../../integrity/verdict.ts";
import type { TimelineStep } from "./timeline.ts";
import type { PaidBeforeReturnSide } from "./returns.ts";
import type { OutcomeFigures } from "./outcomes.ts";

/** The policy under test: the agent's responsibility contract and its claims bounds, as a config file gives them. */
export type CandidatePolicy = {
  agentId: string;
  version: string;
  responsibility: ResponsibilityContract;
  contract: ClaimsContract;
  /** The file's own `shadow_policy`, when it has one: not decided (a backtest decides one candidate), only named. */
  shadow?: { agentId: string; version: string };
};

/** Why a candidate file's own `shadow_policy` is left out, as the output says it. */
export const IGNORED_SHADOW_NOTE =
  "ignored: a backtest decides one candidate policy; to backtest the shadow policy, put it in a policy file of its own";

/** One recorded history, simulated on a ledger of its own: a batch run (by simulation id) or the served claims. */
export type RecordedHistory = { id: string; events: readonly AuditEvent[] };

/** A history read once into its timeline: backtesting several policies on it reads the audit only once. */
export type ReadHistory = {
  id: string;
  timeline: readonly TimelineStep[];
  /** The policy its last recorded decision was taken under, when one says it (policy-diff.ts). */
  recorded?: ComparedPolicy;
};

/** What to backtest and how. */
export type BacktestInput = {
  /** The recorded histories, as audit events or already read. */
  histories: readonly (RecordedHistory | ReadHistory)[];
  policy: CandidatePolicy;
  /** Only decisions taken at or after this instant (ms) are re-decided; earlier ones enter the ledger as recorded. */
  sinceMs?: number;
  /** Decisions after this instant (ms) are left out, with everything that followed them. */
  untilMs?: number;
  /** The SHA-256 the kernel checks idempotency keys with (the shell injects node:crypto's). */
  sha256?: Sha256Hex;
  /** Called after every `PROGRESS_EVERY` re-decided claims with how many were re-decided so far. */
  onProgress?: (decided: number) => void;
  /**
   * `"validating"`: simulate on production's validating ledger functions instead of the trusting ledger (the same
   * report, slower: the reference the trusting ledger is checked and measured against).
   */
  ledger?: "trusting" | "validating";
};

/** How many re-decided claims `onProgress` is called after. */
export const PROGRESS_EVERY = 10_000;

/** A verdict and its reason code. */
export type Outcome = { verdict: VerdictKind; reason_code: string };

/** Totals over the evaluated claims: refunded without a person, and reviews by reason code. */
export type BacktestTotals = {
  /** Refunded without a person, in EUR: the EUR orders' only. */
  auto_refunded_eur: number;
  /** Refunded without a person in each other currency, apart (no two currencies are ever added); absent when none. */
  auto_refunded?: { value: string; currency: string }[];
  reviews: number;
  by_reason: Record<string, number>;
};

/** One side of a flip, with what the drill-down shows: the human reason and the checks each layer ran. */
export type DecidedSide = Outcome & { reason: string; layer: number; checks: VerdictCheck[] };

/** A flipped claim with the facts the report shows beside it. */
export type FlipDetail = {
  claim_id: string;
  history: string;
  order_id: string | null;
  amount_eur: number | null;
  decided_at: string;
  from: DecidedSide;
  to: DecidedSide;
};

/** A claim a person decided: the decision stays; would the candidate have sent the claim to a person? */
export type PersonDecision = {
  claim_id: string;
  history: string;
  decision: string;
  reviewer?: string;
  recorded: Outcome;
  candidate: Outcome;
  candidate_sends_to_person: boolean;
  /** Set when the person's approval no longer fits the simulated ledger (it would have been refused then). */
  note?: string;
  /** The reviewer's own note on the decision, as recorded (REVIEW_DECIDED `note`). */
  reviewer_note?: string;
};

/** The backtest's result: the JSON `claims backtest --json` prints, plus what the human output and the HTML report use. */
export type BacktestReport = {
  evaluated: number;
  not_evaluable: { claim_id: string; reason: string }[];
  flips: { claim_id: string; from: Outcome; to: Outcome }[];
  totals: { before: BacktestTotals; after: BacktestTotals };
  /** Verdict counts over the evaluated claims, before and after. */
  verdicts: { before: Record<VerdictKind, number>; after: Record<VerdictKind, number> };
  flip_details: FlipDetail[];
  human_decisions: PersonDecision[];
  /**
   * The candidate's automatic ACCEPTs by outcome, per currency (docs/backtest.md#outcomes): cash refunded, store
   * credit issued (base + bonus), the bonus it would have cost, exchanges.
   */
  outcomes: OutcomeFigures;
  histories: { id: string; evaluated: number; flips: number }[];
  /**
   * The money paid before the item was back (docs/backtest.md): the automatic refunds paid at once, no return asked,
   * recorded (`before`) and under the candidate (`after`), per currency.
   */
  paid_before_return: { before: PaidBeforeReturnSide; after: PaidBeforeReturnSide };
  policy: {
    agent_id: string;
    contract: ClaimsContract;
    escalate_on_uncertainty: number;
    /** The candidate file's own shadow policy, left out (`IGNORED_SHADOW_NOTE`). */
    ignored_shadow_policy?: { agent_id: string; version: string; note: string };
    /**
     * What the candidate changes against the policy the last recorded decision was taken under
     * (`policy-diff.ts`); absent when no recorded decision says its policy.
     */
    changes?: PolicyChange[];
  };
};
