// What a backtest reads from a recorded history: the kernel's decisions (recorded inputs and verdict) and
// what people did on the ledger (reviews opened without the kernel, review decisions, approved refunds),
// as one timeline in decision order. The audit details are read through `recordedDetails` alone.
import type { AuditEvent } from "../integrity/audit.ts";
import { parseIsoMs } from "../integrity/time.ts";
import { PASS_LAYER, type VerdictCheck, type VerdictKind } from "../integrity/verdict.ts";
import type { Claim } from "../claim/claim.ts";
import type { Order } from "../integrity/contracts.ts";
import * as z from "zod";
import { REPLAY_DETAILS } from "./replay-events.ts";

/** The audit event kinds a backtest reads. */
type BacktestKind =
  | "CLAIM_TRIAGED"
  | "PROPOSAL_SUBMITTED"
  | "KERNEL_VERDICT"
  | "CLAIM_REFUND_EXECUTED"
  | "REVIEW_REQUESTED"
  | "REVIEW_DECIDED";

/** The fields `keys` of a recorded details schema, other fields left unread (replay verifies those). */
function fieldsOf<S extends z.ZodRawShape, K extends keyof S & string>(shape: S, keys: readonly K[]) {
  return z.object(Object.fromEntries(keys.map((k) => [k, shape[k]])) as Pick<S, K>);
}

const KERNEL_INPUTS = REPLAY_DETAILS.PROPOSAL_SUBMITTED.shape.kernel_inputs.shape;
const VERDICT_DETAILS = REPLAY_DETAILS.KERNEL_VERDICT.shape;
const TRIAGE_INPUTS = REPLAY_DETAILS.CLAIM_TRIAGED.shape.triage_inputs.shape;

/**
 * The recorded claim as the kernel reads it: every field checked as intake checks it, except that the free-text
 * `reason` is only checked to be a string — the kernel never reads it, and its text rules are the costliest part
 * of the claim's schema (replay verifies it).
 */
const KernelClaimSchema = KERNEL_INPUTS.claim.extend({ reason: z.string() });

// Of each kind's details, only what a backtest uses: the candidate brings contracts and registry, the ledger and
// the customers' windows are simulated (the recorded `customerWindow` is not read). The proposal is read by the kernel itself (its layer 1 parses it), so it is taken as recorded.
const SCHEMAS = {
  CLAIM_TRIAGED: z.object({
    ...fieldsOf(TRIAGE_INPUTS, ["order", "receivedAt", "decidedAt", "claimId", "dfid"]).shape,
    // Of the recorded responsibility contract, the agent it names (the candidate brings its own contract).
    responsibility: z.looseObject({ agent_id: TRIAGE_INPUTS.responsibility.shape.agent_id }),
    claim: KernelClaimSchema,
  }),
  PROPOSAL_SUBMITTED: z.object({
    ...fieldsOf(KERNEL_INPUTS, ["proposal", "order", "receivedAt", "decidedAt", "claimId", "dfid", "parentClaimId"])
      .shape,
    claim: KernelClaimSchema,
  }),
  // What deciding again and counting need; the recorded reason, layer and checks are read for the flips alone.
  KERNEL_VERDICT: fieldsOf(VERDICT_DETAILS, [
    "claim_id",
    "verdict",
    "reason_code",
    "order_id",
    "amount_eur",
    "decided_at",
  ]),
  CLAIM_REFUND_EXECUTED: fieldsOf(REPLAY_DETAILS.CLAIM_REFUND_EXECUTED.shape, [
    "claim_id",
    "order_id",
    "amount_cents",
    "approved_by",
  ]),
  REVIEW_REQUESTED: fieldsOf(REPLAY_DETAILS.REVIEW_REQUESTED.shape, ["claim_id", "origin", "order_id"]),
  REVIEW_DECIDED: fieldsOf(REPLAY_DETAILS.REVIEW_DECIDED.shape, ["claim_id", "decision", "reviewer", "note"]),
};

/** What the report shows of a recorded verdict beside a flip: its reason, deciding layer and checks. */
const VERDICT_SHOWN = fieldsOf(VERDICT_DETAILS, ["reason", "layer", "checks"]);

/** The kernel facts a decision was taken on, as recorded. */
export type RecordedKernelFacts = {
  /** The proposal; `null` when triage decided the claim without one (then `triaged` is set). */
  proposal: unknown;
  /** Triage decided the claim itself (CLAIM_TRIAGED) under this agent's policy: the candidate triages it again. */
  triaged?: { agentId: string };
  claim: Claim;
  order: Order | null;
  receivedAt: string;
  decidedAt: string;
  claimId: string;
  dfid: string;
  parentClaimId?: string | undefined;
};

/** A recorded verdict, as deciding again and counting read it. */
export type RecordedVerdict = {
  verdict: VerdictKind;
  reason_code: string;
  order_id: string | null;
  amount_eur: number | null;
  decided_at: string;
};

/** A recorded verdict's reason, deciding layer and checks, as the report shows them beside a flip. */
export type ShownVerdict = { reason: string; layer: number; checks: VerdictCheck[] };

type Parsed<K extends BacktestKind> = K extends "PROPOSAL_SUBMITTED"
  ? { kernel_inputs: RecordedKernelFacts }
  : K extends "CLAIM_TRIAGED"
    ? { triage_inputs: Omit<RecordedKernelFacts, "proposal" | "triaged"> & { responsibility: { agent_id: string } } }
    : K extends "KERNEL_VERDICT"
      ? RecordedVerdict & { claim_id: string }
      : K extends "CLAIM_REFUND_EXECUTED"
        ? { claim_id: string; order_id: string; amount_cents: number; approved_by?: string }
        : K extends "REVIEW_REQUESTED"
          ? { claim_id: string; origin: string; order_id?: string }
          : { claim_id: string; decision: string; reviewer?: string; amount_eur?: number; note?: string };

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

/** The plain path: a recorded verdict's reason, layer and checks read by the schema (`plainShown`'s reference). */
export function shownBySchema(details: unknown): { ok: true; shown: ShownVerdict } | { ok: false; error: string } {
  const parsed = VERDICT_SHOWN.safeParse(details);
  return parsed.success ? { ok: true, shown: parsed.data } : { ok: false, error: firstIssue(parsed.error) };
}

/** The plain path: a recorded verdict's details read by the schema (`plainVerdict`'s reference). */
export function verdictBySchema(
  details: unknown,
): { ok: true; verdict: Parsed<"KERNEL_VERDICT"> } | { ok: false; error: string } {
  const parsed = SCHEMAS.KERNEL_VERDICT.safeParse(details);
  return parsed.success ? { ok: true, verdict: parsed.data } : { ok: false, error: firstIssue(parsed.error) };
}

const VERDICTS = new Set<unknown>(VERDICT_DETAILS.verdict.options);
const REASON_CODES = new Set<unknown>(VERDICT_DETAILS.reason_code.options);

/**
 * A recorded verdict's details as `SCHEMAS.KERNEL_VERDICT` outputs them, when they are already in that form (the
 * instant still checked by its own schema); `undefined` otherwise (the schema then reads them).
 */
export function plainVerdict(details: unknown): Parsed<"KERNEL_VERDICT"> | undefined {
  if (!isPlain(details)) return undefined;
  const { claim_id, verdict, reason_code, order_id, amount_eur, decided_at } = details;
  if (
    typeof claim_id !== "string" ||
    claim_id === "" ||
    !VERDICTS.has(verdict) ||
    !REASON_CODES.has(reason_code) ||
    (order_id !== null && typeof order_id !== "string") ||
    (amount_eur !== null && (typeof amount_eur !== "number" || !Number.isFinite(amount_eur))) ||
    !VERDICT_DETAILS.decided_at.safeParse(decided_at).success
  )
    return undefined;
  return { claim_id, verdict, reason_code, order_id, amount_eur, decided_at } as Parsed<"KERNEL_VERDICT">;
}

const CHECK_KEYS = new Set(["layer", "name", "passed", "reason_code"]);
/** A layer number as the verdict schema takes it (1 to the pass layer). */
const isLayer = (n: unknown) => typeof n === "number" && n >= 1 && n <= PASS_LAYER;

/**
 * A recorded verdict's reason, layer and checks, as `VERDICT_SHOWN` outputs them (copies), when they are already in
 * that form; `undefined` otherwise (the schema then reads them and names what is wrong).
 */
export function plainShown(details: unknown): ShownVerdict | undefined {
  if (!isPlain(details)) return undefined;
  const { reason, layer, checks } = details;
  if (typeof reason !== "string" || !isLayer(layer) || !Array.isArray(checks)) return undefined;
  const shown: VerdictCheck[] = new Array(checks.length);
  for (let i = 0; i < checks.length; i++) {
    const c: unknown = checks[i];
    if (!isPlain(c)) return undefined;
    for (const k in c) if (!CHECK_KEYS.has(k) || c[k] === undefined) return undefined;
    if (!isLayer(c.layer) || typeof c.name !== "string" || c.name === "" || typeof c.passed !== "boolean")
      return undefined;
    if ("reason_code" in c && (typeof c.reason_code !== "string" || c.reason_code === "")) return undefined;
    shown[i] = { ...c } as VerdictCheck;
  }
  return { reason, layer: layer as number, checks: shown };
}

// ---- Recorded kernel and triage inputs in their plain form, read without the schema.
//
// Nearly every recorded claim and order is already in the form their schemas output: strings trimmed, one line,
// no character the text rules look at, the order's currency written out. For those, `plainInputs` returns
// exactly what `SCHEMAS` would (backtest-events.test.ts checks it over random inputs); for
// anything else it returns `undefined` and the schema reads it, so what is refused, and why, does not change.
// The recorded claim and order are handed on as recorded, not copied: nothing in a backtest or the kernel writes to them.

/** The recorded inputs of the two kinds the kernel decided from. */
type InputsKind = "PROPOSAL_SUBMITTED" | "CLAIM_TRIAGED";
type Inputs<K extends InputsKind> = K extends "PROPOSAL_SUBMITTED"
  ? Parsed<"PROPOSAL_SUBMITTED">["kernel_inputs"]
  : Parsed<"CLAIM_TRIAGED">["triage_inputs"];

/** The plain path: recorded kernel or triage inputs read by the schema (`plainInputs`'s reference). */
export function inputsBySchema<K extends InputsKind>(
  kind: K,
  v: unknown,
): { ok: true; inputs: Inputs<K> } | { ok: false; error: string } {
  const parsed = SCHEMAS[kind].safeParse(v);
  return parsed.success
    ? { ok: true, inputs: parsed.data as unknown as Inputs<K> }
    : { ok: false, error: firstIssue(parsed.error) };
}

/** Any character a claim's text rules look at (controls, C1, line separators, surrogates). */
// eslint-disable-next-line no-control-regex -- the control characters are exactly what the text rules look for
const TEXT_RULES_LOOK_AT = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\uD800-\uDFFF]/;
/** An amount as JSON writes it with at most 2 decimals (the claim schema's own test). */
const CENT_AMOUNT = /^-?\d+(\.\d{1,2})?$/;

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** A one-line text field already in its schema's output form, `min`..`max` long. */
function plainLine(v: unknown, min: number, max: number): boolean {
  return typeof v === "string" && v.length >= min && v.length <= max && !TEXT_RULES_LOOK_AT.test(v) && v.trim() === v;
}

const CLAIM_KEYS = new Set([
  "order_id",
  "amount_eur",
  "category",
  "reason",
  "purchase_date",
  "currency",
  "customer_id",
]);
const ORDER_KEYS = new Set([
  "order_id",
  "purchase_date",
  "category",
  "amount",
  "currency",
  "customer_id",
  "payment_ref",
]);

/** The recorded claim when the kernel's claim schema would output it unchanged, else `undefined`. */
function plainClaim(v: unknown): Claim | undefined {
  if (!isPlain(v)) return undefined;
  for (const k in v) if (!CLAIM_KEYS.has(k) || v[k] === undefined) return undefined;
  const { amount_eur: amount } = v;
  if (
    !plainLine(v.order_id, 1, 128) ||
    !plainLine(v.category, 1, 64) ||
    typeof v.reason !== "string" ||
    typeof amount !== "number" ||
    !Number.isFinite(amount) ||
    Math.abs(amount) > 1_000_000 ||
    !CENT_AMOUNT.test(String(amount)) ||
    ("purchase_date" in v && (typeof v.purchase_date !== "string" || parseIsoMs(v.purchase_date) === undefined)) ||
    ("currency" in v && !plainLine(v.currency, 3, 3)) ||
    ("customer_id" in v && !plainLine(v.customer_id, 0, 128))
  )
    return undefined;
  return v as Claim;
}

/** The recorded order when the order schema would output it unchanged, else `undefined`. */
function plainOrder(v: unknown): Order | undefined {
  if (!isPlain(v)) return undefined;
  for (const k in v) if (!ORDER_KEYS.has(k) || v[k] === undefined) return undefined;
  const nonEmpty = (s: unknown) => typeof s === "string" && s.length > 0;
  if (
    !nonEmpty(v.order_id) ||
    !nonEmpty(v.purchase_date) ||
    !nonEmpty(v.category) ||
    typeof v.amount !== "number" ||
    !Number.isFinite(v.amount) ||
    !(v.amount > 0) ||
    v.currency !== "EUR" ||
    ("customer_id" in v && typeof v.customer_id !== "string") ||
    ("payment_ref" in v && !nonEmpty(v.payment_ref))
  )
    return undefined;
  return v as Order;
}

/**
 * Recorded kernel (PROPOSAL_SUBMITTED) or triage (CLAIM_TRIAGED) inputs, as `SCHEMAS[kind]` outputs them, when every
 * field the backtest reads is already in its plain form; `undefined` otherwise (the schema then reads them).
 * Exported for the test that holds it to the schema.
 */
export function plainInputs<K extends InputsKind>(kind: K, v: unknown): Inputs<K> | undefined {
  if (!isPlain(v)) return undefined;
  const { receivedAt, decidedAt, claimId, dfid, parentClaimId, responsibility } = v;
  if (typeof receivedAt !== "string" || typeof decidedAt !== "string" || typeof claimId !== "string") return undefined;
  if (typeof dfid !== "string") return undefined;
  const claim = plainClaim(v.claim);
  const order = v.order === null ? null : plainOrder(v.order);
  if (!claim || order === undefined) return undefined;
  if (kind === "CLAIM_TRIAGED") {
    // Of the recorded responsibility contract, the agent it names (the schema passes its other fields through).
    if (!isPlain(responsibility) || typeof responsibility.agent_id !== "string" || responsibility.agent_id === "")
      return undefined;
    const triage = { claim, order, receivedAt, decidedAt, claimId, dfid, responsibility: { ...responsibility } };
    return triage as unknown as Inputs<K>;
  }
  if (!("proposal" in v) || ("parentClaimId" in v && typeof parentClaimId !== "string")) return undefined;
  const facts: RecordedKernelFacts = { proposal: v.proposal, claim, order, receivedAt, decidedAt, claimId, dfid };
  if (typeof parentClaimId === "string") facts.parentClaimId = parentClaimId;
  return facts as Inputs<K>;
}

function firstIssue(error: z.ZodError): string {
  const first = error.issues[0];
  return `${first?.path.join(".") || "(details)"}: ${first?.message ?? "invalid"}`;
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
  /** Why the recorded decision cannot be re-decided (absent when it can). */
  unreadable?: string;
  /** A person decided this claim's review afterwards: the decision (APPROVE, DENY, …). */
  personDecision?: string;
};

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
    };

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
      case "REVIEW_DECIDED":
        of(claimId).decided = { event, seq };
        break;
      default:
        break;
    }
  });

  const steps: TimelineStep[] = [];
  for (const [claimId, c] of claims) {
    const decided = c.decided ? recordedDetails("REVIEW_DECIDED", c.decided.event) : undefined;
    const decision = decided?.ok ? decided.details.decision : undefined;
    if (c.proposal || c.triaged || c.verdict)
      steps.push(decisionOf(claimId, c.proposal ?? c.triaged, c.verdict, c.refundCents, decision));
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
  }
  return steps.sort((a, b) => a.at - b.at || a.seq - b.seq);
}

function decisionOf(
  claimId: string,
  proposal: { event: AuditEvent; seq: number } | undefined,
  verdictEvent: { event: AuditEvent; seq: number } | undefined,
  refundedCents: number | undefined,
  personDecision: string | undefined,
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
    refundedCents,
    unreadable: undefined,
    personDecision,
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
  if (p.ok) d.facts = p.details.kernel_inputs;
  else d.unreadable = `the kernel's recorded inputs do not parse (${p.error})`;
  return d;
}

/** An event's instant in ms (0 for an unreadable one, which the audit schema never lets through). */
function instant(iso: string): number {
  return parseIsoMs(iso) ?? 0;
}
