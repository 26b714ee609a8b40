import * as z from "zod";
import { isCurrencyCode } from "../integrity/currency.ts";
import { OutcomeKindSchema } from "../integrity/contracts.ts";
import { parseIsoMs } from "../integrity/time.ts";

/** ISO-8601 timestamp or date (e.g. `2026-05-20` or `2026-05-20T10:00:00Z`); one without an offset is UTC. */
export const IsoDateSchema = z.string().refine((s) => parseIsoMs(s) !== undefined, {
  message: "must be an ISO-8601 date or timestamp, e.g. 2026-05-20 or 2026-05-20T10:00:00Z",
});

/** The largest amount a claim may state, in EUR either way (docs/config.md): beyond it the claim is refused at intake. */
const MAX_CLAIM_AMOUNT_EUR = 1_000_000;

// The only characters the two checks below can object to: text without any of them (nearly all) passes at once.
// eslint-disable-next-line no-control-regex -- the control characters are exactly what the checks look for
const MAYBE_UNSAFE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uD800-\uDFFF]/;
// eslint-disable-next-line no-control-regex -- the control characters are exactly what the checks look for
const MAYBE_CONTROL = /[\u0000-\u001F\u007F-\u009F\u2028\u2029]/;

/**
 * Text that every queue can carry once encoded (docs/config.md): well-formed Unicode (no lone surrogate) and no
 * control characters but tab, line feed and carriage return. Everything else — emoji, any plane, U+FFFE/U+FFFF —
 * travels, because message bodies escape non-ASCII characters (adapters/aws/sqs-work-queues.ts).
 */
function queueSafeText(value: string): string | undefined {
  if (!MAYBE_UNSAFE.test(value)) return undefined;
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value))
    return "holds a lone surrogate (text that is not valid Unicode)";
  for (const c of value) {
    const code = c.charCodeAt(0);
    const control = (code < 0x20 && c !== "\t" && c !== "\n" && c !== "\r") || code === 0x7f;
    if (control) return `holds the control character U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  }
  return undefined;
}

/** A control character (C0 including tab and line breaks, DEL, C1, U+2028/U+2029) in `value`, as "U+000D"; undefined when none. */
export function controlCharacterIn(value: string): string | undefined {
  if (!MAYBE_CONTROL.test(value)) return undefined;
  for (const c of value) {
    const code = c.charCodeAt(0);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029)
      return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  }
  return undefined;
}

/**
 * A one-line string that is printed or stored as an identifier (ids, labels, names, notes): queue-safe and
 * without any control character, so that it cannot forge a line of `claims list` or a log.
 */
export const oneLineText = () =>
  text().superRefine((value, ctx) => {
    // A character the queue check already refused is reported once, by it.
    if (queueSafeText(value)) return;
    const control = controlCharacterIn(value);
    if (control)
      ctx.addIssue({ code: "custom", message: `holds the control character ${control}; it must be one line of text` });
  });

/** A string of queue-safe text (see `queueSafeText`). */
const text = () =>
  z.string().superRefine((value, ctx) => {
    const problem = queueSafeText(value);
    if (problem) ctx.addIssue({ code: "custom", message: `${problem}; it cannot be queued` });
  });

/**
 * A claim's amount, in the order's currency: a finite number with at most 3 decimals (the most any currency a shop
 * refunds in has: KWD, BHD, …) and at most 1,000,000 either way. Only the kernel knows the order's currency, so it
 * checks the amount is exact in it (12.345 on an EUR order: INVALID_AMOUNT). A zero or negative amount is accepted
 * here and rejected by the kernel (INVALID_AMOUNT), as in the seed.
 */
export const ClaimAmountSchema = z
  .number("amount_eur must be a number")
  .refine(Number.isFinite, "amount_eur must be a finite number")
  .refine(
    (n) => Math.abs(n) <= MAX_CLAIM_AMOUNT_EUR,
    `amount_eur must be between -${MAX_CLAIM_AMOUNT_EUR} and ${MAX_CLAIM_AMOUNT_EUR} EUR`,
  )
  // The number as JSON writes it: at most 3 decimals, no exponent (5e-324 is not an amount of any currency).
  .refine((n) => /^-?\d+(\.\d{1,3})?$/.test(String(n)), "amount_eur has more than 3 decimals");

/**
 * The amount a claim asks of one of its lines, in the order's currency: a positive decimal string ("20.00") or JSON
 * number with at most 3 decimals. Only the order says its currency, so intake checks it is exact in it
 * (core/kernel/claim-completion.ts: "20.5" on a JPY order is a 400 naming the field); a stored claim carries it as the exact
 * decimal string of the order's currency.
 */
export const ClaimLineAmountSchema = z
  .union([z.string(), z.number()], { error: 'amount must be a decimal string such as "20.00" or a number' })
  .superRefine((value, ctx) => {
    const problem = lineAmountProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .describe(
    "The amount asked of the line's claimed units, in the order's currency, exact to its minor unit (a decimal string or a number); default: what those units cost.",
  );

function lineAmountProblem(value: string | number): string | undefined {
  const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : value;
  if (!/^\d+(\.\d+)?$/.test(text))
    return typeof value === "number"
      ? `amount must be a finite positive number, got ${String(value)}`
      : `amount ${JSON.stringify(value.slice(0, 40))} is not a decimal number (digits with an optional "." and decimals, e.g. "20.00")`;
  if ((text.split(".")[1]?.length ?? 0) > 3) return `amount ${text} has more than 3 decimals`;
  if (Number(text) <= 0) return "amount must be more than 0";
  if (Number(text) > MAX_CLAIM_AMOUNT_EUR) return `amount must be at most ${MAX_CLAIM_AMOUNT_EUR}`;
  return undefined;
}

/** How many units of a line (or an item) a claim is about: a whole number from 1. */
const UnitCountSchema = z
  .number()
  .int("quantity must be a whole number of units")
  .positive("quantity must be at least 1")
  .max(100_000);

/**
 * A line of the order a claim is about: its `line_id`, how many of its units (default all of them) and the amount
 * asked of them (default what they cost; docs/orders.md#claims-on-lines).
 */
export const ClaimLineSchema = z
  .object({
    line_id: oneLineText().trim().min(1, "line_id is required").max(64),
    quantity: UnitCountSchema.optional(),
    amount: ClaimLineAmountSchema.optional(),
  })
  .strict();

/**
 * An item a free-text claim names, as the text says it ("shirt", "TV"), and how many of its units when the text
 * counts them ("both shirts": 2). The kernel matches it to the order's lines (core/kernel/item-lines.ts).
 */
export const ClaimItemSchema = z
  .object({
    name: oneLineText().trim().min(1, "name is required").max(64),
    quantity: UnitCountSchema.optional(),
  })
  .strict();

/** An item a free-text claim names. */
export type ClaimItem = z.infer<typeof ClaimItemSchema>;

/** A structured refund claim as a customer or intake channel submits it; the kernel, not this schema, judges the amount. */
export const ClaimSchema = z
  .object({
    order_id: oneLineText().trim().min(1, "order_id is required").max(128),
    amount_eur: ClaimAmountSchema,
    category: oneLineText().trim().min(1).max(64),
    reason: text().max(4000).default(""),
    purchase_date: IsoDateSchema.optional(),
    currency: oneLineText().trim().length(3).optional(),
    customer_id: oneLineText().max(128).optional(),
    /** The order's lines the claim is about (docs/orders.md#claims-on-lines); absent: matched to a line by category. */
    lines: z.array(ClaimLineSchema).min(1, "lines must name at least one line").max(50).optional(),
    /**
     * The items its text names (docs/llm.md#items-and-lines), read by extraction; the kernel matches them to the
     * order's lines when the claim names no `lines`. Absent on every claim recorded before items were read.
     */
    items: z.array(ClaimItemSchema).min(1).max(20).optional(),
    /** What the customer asks for if the claim is accepted (docs/returns.md#outcomes); absent: the policy's outcome. */
    outcome: OutcomeKindSchema.optional(),
  })
  .strict();

/**
 * Why an order id cannot name one order in the shop's order API, or undefined: `.` and `..` (a URL resolves them
 * against the base, so the shop would be asked for its own paths with our token) and `/` or `\\` (a path
 * separator once a server decodes the id). Every other character is URL-encoded into the one path segment
 * (docs/orders.md).
 */
export function orderIdPathProblem(orderId: string): string | undefined {
  if (orderId === "." || orderId === "..") return `${JSON.stringify(orderId)} is not an order id`;
  if (/[/\\]/.test(orderId)) return "an order id may not hold / or \\ (it names one order, not a path)";
  return undefined;
}

/**
 * A claim as intake takes it (a submission, an extraction, a reviewer's corrected claim): ClaimSchema, with an
 * order id that names one order (`orderIdPathProblem`). Stored claims are read with ClaimSchema, as they were taken.
 */
export const IntakeClaimSchema = ClaimSchema.superRefine(intakeChecks);

/**
 * A structured claim as `POST /claims` takes it (docs/orders.md#claims-on-lines): IntakeClaimSchema, except that a
 * claim naming `lines` may leave out `amount_eur` and `category` — intake completes it from its order
 * (core/kernel/claim-completion.ts). A claim without `lines` states both, as always.
 */
export const ClaimSubmissionSchema = ClaimSchema.extend({
  amount_eur: ClaimAmountSchema.optional(),
  category: oneLineText().trim().min(1).max(64).optional(),
}).superRefine((claim, ctx) => {
  if (claim.lines === undefined) {
    for (const field of ["amount_eur", "category"] as const)
      if (claim[field] === undefined)
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `${field} is required for a claim that names no lines (or name the order's lines the claim is about in lines)`,
        });
  }
  intakeChecks(claim, ctx);
});

/** A claim as submitted: `amount_eur` and `category` may be left out when it names its lines. */
export type ClaimSubmission = z.infer<typeof ClaimSubmissionSchema>;

/** What intake checks of any claim beyond its shape: one order, each line named once, an ISO 4217 currency. */
function intakeChecks(claim: Pick<Claim, "order_id" | "lines" | "currency">, ctx: z.RefinementCtx): void {
  const problem = orderIdPathProblem(claim.order_id);
  if (problem) ctx.addIssue({ code: "custom", path: ["order_id"], message: problem });
  const seen = new Set<string>();
  for (const [i, line] of (claim.lines ?? []).entries()) {
    if (seen.has(line.line_id))
      ctx.addIssue({ code: "custom", path: ["lines", i, "line_id"], message: `line ${line.line_id} is named twice` });
    seen.add(line.line_id);
  }
  // A claim's currency is an ISO 4217 code (any case): the kernel rejects one other than the order's (CURRENCY_MISMATCH).
  if (claim.currency?.length === 3 && !isCurrencyCode(claim.currency.toUpperCase()))
    ctx.addIssue({
      code: "custom",
      path: ["currency"],
      message: `${JSON.stringify(claim.currency)} is not an ISO 4217 currency code (e.g. EUR, USD, JPY)`,
    });
}

/** A structured claim after validation. */
export type Claim = z.infer<typeof ClaimSchema>;

/** Free-text claims are bounded so that a prompt stays small. */
export const ClaimTextSchema = text()
  .trim()
  .min(1, "claim_text is empty")
  .max(8000, "claim_text is longer than 8000 characters");

/** The input of a claim submission: exactly one of `claim` or `claim_text`. */
export const ClaimInputSchema = z.union([
  z.object({ claim: ClaimSchema }).strict(),
  z.object({ claim_text: ClaimTextSchema }).strict(),
]);
