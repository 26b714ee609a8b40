// Recorded verdicts, kernel and triage inputs in their plain form, read without the schema (plain.test.ts holds
// each reader to its schema's reader in schemas.ts).
//
// Nearly every recorded claim and order is already in the form their schemas output: strings trimmed, one line,
// no character the text rules look at, the order's currency written out. For those, `plainInputs` returns
// exactly what `SCHEMAS` would (plain.test.ts checks it over random inputs); for
// anything else it returns `undefined` and the schema reads it, so what is refused, and why, does not change.
// The recorded claim and order are handed on as recorded, not copied: nothing in a backtest or the kernel writes to them.
import { parseIsoMs } from "../../integrity/time.ts";
import { PASS_LAYER, type VerdictCheck } from "../../integrity/verdict.ts";
import type { Claim } from "../../claim/claim.ts";
import type { Order } from "../../integrity/contracts.ts";
import { VERDICT_DETAILS } from "./schemas.ts";
import type { Inputs, InputsKind, Parsed, RecordedKernelFacts, ShownVerdict } from "./schemas.ts";

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
  "outcome",
]);
const OUTCOMES = new Set<unknown>(["REFUND", "STORE_CREDIT", "EXCHANGE"]);
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
    ("customer_id" in v && !plainLine(v.customer_id, 0, 128)) ||
    ("outcome" in v && !OUTCOMES.has(v.outcome))
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
