// What a backtest reads from a recorded history: the kernel's decisions (recorded inputs and verdict) and
// what people did on the ledger (reviews opened without the kernel, review decisions, approved refunds),
// as one timeline in decision order. The audit details are read through `recordedDetails` alone.
import { kernelReadyProposal } from "../erased-proposal.ts";
import type { AuditEvent } from "../../integrity/audit.ts";
import { parseIsoMs } from "../../integrity/time.ts";
import { settlementDfid } from "../../kernel/claim-record.ts";
import { plainInputs, plainShown, plainVerdict } from "./plain.ts";
import { firstIssue, SCHEMAS, shownBySchema } from "./schemas.ts";
import type { BacktestKind, Parsed, RecordedKernelFacts, RecordedVerdict, ShownVerdict } from "./schemas.ts";

/**
 * The details of a recorded audit event of `kind`, checked against the one definition of that event's
 * details; `{ error }` naming what is wrong when they do not parse. The one place a backtest reads them.
 */
export function recordedDetails<K extends BacktestKind>(
  kind: K,
  event: AuditEvent,
): { ok: true; details: Parsed<K> } | { ok: false; error: string } {
  const wrapper =
    kind === "PROPOSAL_SUBMITTED" ? "kernel_inputs" : kind === "CLAIM_TRIAGED" ? "triage_inputs" : undefined;
  const details = wrapper ? event.details[wrapper] : event.details;
  if (kind === "KERNEL_VERDICT") {
    const plain = plainVerdict(details);
    if (plain) return { ok: true, details: plain as unknown as Parsed<K> };
  }
  if (kind === "PROPOSAL_SUBMITTED" || kind === "CLAIM_TRIAGED") {
    // Inputs already in their plain form are read without the schema (see `plainInputs`).
    const plain = plainInputs(kind, details);
    if (plain) return { ok: true, details: { [wrapper!]: plain } as unknown as Parsed<K> };
  }
  const parsed = SCHEMAS[kind].safeParse(details);
  if (!parsed.success) return { ok: false, error: firstIssue(parsed.error) };
  const value = wrapper ? { [wrapper]: parsed.data } : parsed.data;
  return { ok: true, details: value as unknown as Parsed<K> };
}

/**
 * The reason, deciding layer and checks of a recorded verdict, checked against the one definition of the
 * verdict's details; `{ error }` naming what is wrong when they do not parse. Read only for the flips the
 * report shows them for: nothing else depends on them.
 */
export function shownVerdict(event: AuditEvent): { ok: true; shown: ShownVerdict } | { ok: false; error: string } {
  const plain = plainShown(event.details);
  if (plain) return { ok: true, shown: plain };
  return shownBySchema(event.details);
}

/** A claim the kernel decided, as recorded: its facts and verdict, or why they cannot be read. */
export type RecordedDecision = {
  kind: "decision";
  claimId: string;
  /** When the kernel decided (ms), for ordering and the --since/--until window. */
  at: number;
  /** Position in the history's audit, which breaks ties between equal instants. */
  seq: number;
  facts?: RecordedKernelFacts;
  verdict?: RecordedVerdict;
  /** The recorded KERNEL_VERDICT, whose reason, layer and checks a flip shows (`shownVerdict`). */
  verdictEvent?: AuditEvent;
  /** Cents the kernel's ACCEPT reserved, as recorded. */
  refundedCents?: number;
  /** The claims its customer's window held when the kernel decided it (recorded inputs), to order same-instant claims. */
  windowClaims?: string[] | undefined;
  /** Why the recorded decision cannot be re-decided (absent when it can). */
  unreadable?: string;
  /** A person decided this claim's review afterwards: the decision (APPROVE, DENY, …). */
  personDecision?: string;
  /** A person CLOSEd this claim's failed refund afterwards (a `refund_closed` step follows). */
  refundClosed?: boolean;
  /**
   * How the return its ACCEPT asked ended (docs/returns.md): PAID on its `pay_on` event, NOT_RECEIVED (the refund
   * released at the deadline), REVIEW (a person decided instead), or ASKED (still awaited); absent: no return asked.
   */
  returnCourse?: ReturnCourse;
};

/** How a recorded return ended, or ASKED while it is awaited. */
export type ReturnCourse = "ASKED" | "PAID" | "NOT_RECEIVED" | "REVIEW";

/** What people did on the ledger, as recorded. */
export type RecordedPersonStep =
  /** A review opened without a kernel verdict (NEEDS_REVIEW): it holds the order like any pending review. */
  | { kind: "review_opened"; claimId: string; orderId: string; at: number; seq: number }
  /** A person decided a review: APPROVE with the refund it reserved, or DENY / RESUBMIT. */
  | {
      kind: "review_decided";
      claimId: string;
      decision: string;
      reviewer?: string;
      note?: string;
      orderId?: string;
      approvedCents?: number;
      at: number;
      seq: number;
    }
  /**
   * A person CLOSEd the claim's failed refund (its settlement's flow, docs/payments.md): the order is bound like a
   * DENY; not paid out of band, the claim's reservation is released.
   */
  | { kind: "refund_closed"; claimId: string; paidOutOfBand: boolean; at: number; seq: number };

/** One step of a history's timeline. */
export type TimelineStep = RecordedDecision | RecordedPersonStep;

/** A history's decisions and people's steps in decision order (instant, then position in the audit). */
export function recordedTimeline(events: readonly AuditEvent[]): TimelineStep[] {
  type Claim = {
    proposal?: { event: AuditEvent; seq: number };
    triaged?: { event: AuditEvent; seq: number };
    verdict?: { event: AuditEvent; seq: number };
    refundCents?: number;
    approved?: { cents: number; orderId: string };
    requested?: { origin: string; orderId?: string; seq: number; at: number };
    decided?: { event: AuditEvent; seq: number };
    /** The CLOSE of its failed refund (a RETRY changes nothing on the ledger: the reservation stays). */
    refundClosed?: { paidOutOfBand: boolean; at: number; seq: number };
    /** The return its ACCEPT asked, and how it ended (the last RETURN_COMPLETED). */
    returnCourse?: ReturnCourse;
  };
  const claims = new Map<string, Claim>();
  const of = (id: string) => {
    let c = claims.get(id);
    if (!c) claims.set(id, (c = {}));
    return c;
  };
  events.forEach((event, seq) => {
    const claimId = event.details.claim_id;
    if (typeof claimId !== "string") return;
    switch (event.event_type) {
      case "PROPOSAL_SUBMITTED":
        of(claimId).proposal = { event, seq };
        break;
      case "CLAIM_TRIAGED":
        of(claimId).triaged = { event, seq };
        break;
      case "KERNEL_VERDICT":
        of(claimId).verdict = { event, seq };
        break;
      case "CLAIM_REFUND_EXECUTED": {
        const r = recordedDetails("CLAIM_REFUND_EXECUTED", event);
        if (!r.ok) break;
        if (r.details.approved_by)
          of(claimId).approved = { cents: r.details.amount_cents, orderId: r.details.order_id };
        else of(claimId).refundCents = r.details.amount_cents;
        break;
      }
      case "REVIEW_REQUESTED": {
        // A review the kernel's ESCALATE opened is the candidate's to open or not: only the others are read.
        if (event.details.origin === "ESCALATE") break;
        const r = recordedDetails("REVIEW_REQUESTED", event);
        if (r.ok)
          of(claimId).requested = {
            origin: r.details.origin,
            ...(r.details.order_id ? { orderId: r.details.order_id } : {}),
            seq,
            at: instant(event.created_at),
          };
        break;
      }
      case "RETURN_REQUESTED":
        of(claimId).returnCourse ??= "ASKED";
        break;
      case "RETURN_COMPLETED": {
        const outcome = event.details.outcome;
        if (outcome === "PAID" || outcome === "NOT_RECEIVED" || outcome === "REVIEW")
          of(claimId).returnCourse = outcome;
        break;
      }
      case "REVIEW_DECIDED": {
        // A decision on the claim's failed refund (its settlement's flow) is not one on the claim's review.
        if (event.dfid !== settlementDfid(claimId)) {
          of(claimId).decided = { event, seq };
          break;
        }
        const r = recordedDetails("REVIEW_DECIDED", event);
        if (r.ok && r.details.decision === "CLOSE")
          of(claimId).refundClosed = {
            paidOutOfBand: r.details.paid_out_of_band === true,
            at: instant(event.created_at),
            seq,
          };
        break;
      }
      default:
        break;
    }
  });

  const steps: TimelineStep[] = [];
  for (const [claimId, c] of claims) {
    const decided = c.decided ? recordedDetails("REVIEW_DECIDED", c.decided.event) : undefined;
    const decision = decided?.ok ? decided.details.decision : undefined;
    if (c.proposal || c.triaged || c.verdict)
      steps.push(
        decisionOf(
          claimId,
          c.proposal ?? c.triaged,
          c.verdict,
          c.refundCents,
          decision,
          c.refundClosed !== undefined,
          c.returnCourse,
        ),
      );
    else if (c.requested?.orderId && c.requested.origin !== "ESCALATE")
      steps.push({
        kind: "review_opened",
        claimId,
        orderId: c.requested.orderId,
        at: c.requested.at,
        seq: c.requested.seq,
      });
    if (c.decided && decided?.ok) {
      const r = decided;
      const orderId = c.approved?.orderId ?? c.requested?.orderId;
      steps.push({
        kind: "review_decided",
        claimId,
        decision: r.details.decision,
        ...(r.details.reviewer ? { reviewer: r.details.reviewer } : {}),
        ...(r.details.note ? { note: r.details.note } : {}),
        ...(orderId ? { orderId } : {}),
        ...(c.approved ? { approvedCents: c.approved.cents } : {}),
        at: instant(c.decided.event.created_at),
        seq: c.decided.seq,
      });
    }
    if (c.refundClosed) steps.push({ kind: "refund_closed", claimId, ...c.refundClosed });
  }
  return afterTheirWindow(steps.sort((a, b) => a.at - b.at || a.seq - b.seq));
}

/**
 * Claims decided at the same instant (a batch runs on one clock; racing claims of one customer) are recorded in the
 * order their audits landed, which need not be the order the customer's window took them in: a claim whose recorded
 * window already held another claim of that instant was decided after it, so it is moved after it. Without this the
 * live policy re-decided a customer-limit race the other way round and "flipped" two of its claims.
 */
function afterTheirWindow(steps: TimelineStep[]): TimelineStep[] {
  // A history whose windows contradict each other (each claim seen by the other) is not reordered forever.
  let moves = steps.length * 4;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    if (step.kind !== "decision") continue;
    const seen = new Set(step.windowClaims ?? []);
    if (seen.size === 0) continue;
    // The last step of the same instant this claim's window had already seen.
    // Never past a later step of its own claim (a person's decision on it comes after it, whatever else moves).
    let last = -1;
    for (let j = i + 1; j < steps.length && steps[j]!.at === step.at; j++) {
      const other = steps[j]!;
      if ("claimId" in other && other.claimId === step.claimId) break;
      if (other.kind === "decision" && seen.has(other.claimId)) last = j;
    }
    if (last > i && moves-- > 0) {
      steps.splice(last, 0, ...steps.splice(i, 1));
      i--;
    }
  }
  return steps;
}

/** The claims a recorded proposal's customer window held when the kernel decided it (its recorded inputs). */
function windowClaimsOf(event: AuditEvent | undefined): string[] | undefined {
  const inputs = event?.details.kernel_inputs as { customerWindow?: { reservations?: unknown } } | undefined;
  const reservations = inputs?.customerWindow?.reservations;
  if (!Array.isArray(reservations)) return undefined;
  const ids = reservations.flatMap((r) =>
    r !== null && typeof r === "object" && typeof (r as { claim_id?: unknown }).claim_id === "string"
      ? [(r as { claim_id: string }).claim_id]
      : [],
  );
  return ids.length > 0 ? ids : undefined;
}

function decisionOf(
  claimId: string,
  proposal: { event: AuditEvent; seq: number } | undefined,
  verdictEvent: { event: AuditEvent; seq: number } | undefined,
  refundedCents: number | undefined,
  personDecision: string | undefined,
  refundClosed: boolean,
  returnCourse: ReturnCourse | undefined,
): RecordedDecision {
  // One object, filled in as far as the recorded events can be read (the shape stays the same: no spreads).
  const d: RecordedDecision = {
    kind: "decision",
    claimId,
    seq: (verdictEvent ?? proposal)!.seq,
    at: 0,
    facts: undefined,
    verdict: undefined,
    verdictEvent: verdictEvent?.event,
    windowClaims: windowClaimsOf(proposal?.event),
    refundedCents,
    unreadable: undefined,
    personDecision,
    refundClosed,
    returnCourse,
  };
  if (!verdictEvent) {
    d.at = instant(proposal!.event.created_at);
    d.unreadable = "the kernel's verdict (KERNEL_VERDICT) is not recorded";
    return d;
  }
  const v = recordedDetails("KERNEL_VERDICT", verdictEvent.event);
  if (!v.ok) {
    d.at = instant(verdictEvent.event.created_at);
    d.unreadable = `the recorded verdict does not parse (${v.error})`;
    return d;
  }
  d.verdict = v.details;
  d.at = instant(v.details.decided_at);
  if (!proposal) {
    d.unreadable = "the kernel's recorded inputs (PROPOSAL_SUBMITTED) are missing";
    return d;
  }
  if (proposal.event.event_type === "CLAIM_TRIAGED") {
    const t = recordedDetails("CLAIM_TRIAGED", proposal.event);
    if (t.ok) {
      const { responsibility, ...facts } = t.details.triage_inputs;
      d.facts = { ...facts, proposal: null, triaged: { agentId: responsibility.agent_id } };
    } else d.unreadable = `the triage's recorded inputs do not parse (${t.error})`;
    return d;
  }
  const p = recordedDetails("PROPOSAL_SUBMITTED", proposal.event);
  // Times the kernel cannot read make it throw KernelInputError: the claim is then listed as not evaluable.
  if (p.ok) d.facts = { ...p.details.kernel_inputs, proposal: kernelReadyProposal(p.details.kernel_inputs.proposal) };
  else d.unreadable = `the kernel's recorded inputs do not parse (${p.error})`;
  return d;
}

/** An event's instant in ms (0 for an unreadable one, which the audit schema never lets through). */
function instant(iso: string): number {
  return parseIsoMs(iso) ?? 0;
}
