import * as z from "zod";

/** Policy kinds an agent may propose. */
export const PolicyKindSchema = z.enum(["REFUND", "REPLACE", "ESCALATE"]);

/** A policy kind. */
export type PolicyKind = z.infer<typeof PolicyKindSchema>;

/** Per-agent responsibility contract (ROA): who the agent is and what it may propose. */
export const ResponsibilityContractSchema = z
  .object({
    agent_id: z.string().min(1),
    role: z.string().min(1),
    mission: z.string().default("Process customer claims fairly, within policy boundaries."),
    allowed_policy_types: z.array(PolicyKindSchema).min(1),
    escalate_on_uncertainty: z.number().min(0).max(1).default(0.7),
    authorized_categories: z.array(z.string().min(1)).default([]),
  })
  .strict();

/** A responsibility contract. */
export type ResponsibilityContract = z.infer<typeof ResponsibilityContractSchema>;

/**
 * How much one customer (the ORDER's `customer_id`) may be refunded automatically across all their orders in the
 * last `window_days`: at most `max_automatic_refunds` refunds and `max_automatic_eur` EUR (exactly the limit passes).
 */
export const CustomerLimitsSchema = z
  .object({
    window_days: z.number().int().positive(),
    max_automatic_refunds: z.number().int().positive(),
    max_automatic_eur: z.number().positive(),
  })
  .strict();

/** A customer limit (`claims_bounds.customer_limits`). */
export type CustomerLimits = z.infer<typeof CustomerLimitsSchema>;

/** A return window: days for every category, or `{ default, <category>: days }` (docs/kernel.md "Orders with lines"). */
export const ReturnWindowSchema = z.union([
  z.number().int().positive(),
  z
    .object({ default: z.number().int().positive() })
    .catchall(z.number().int().positive("a category's return window is a positive whole number of days")),
]);

/** The bounds of one currency (`claims_bounds.currencies.USD`): its amounts in that currency's major unit. */
export const CurrencyBoundsSchema = z
  .object({
    max_refund_without_escalation: z.number().positive(),
    /** Four eyes above this amount, in this currency. */
    second_approval_above: z.number().positive().optional(),
    /** The customer limit counted in this currency only (`max_automatic_eur` is the amount in it). */
    customer_limits: CustomerLimitsSchema.optional(),
  })
  .strict();

/** The bounds of one currency. */
export type CurrencyBounds = z.infer<typeof CurrencyBoundsSchema>;

/** The fields of a return policy (docs/returns.md), each optional: the default's, or a category's own over it. */
const ReturnPolicyFieldsSchema = z
  .object({
    /** Whether an ACCEPT waits for the item to come back before it pays (default false: pay at once). */
    return_required: z.boolean("return_required is true or false").optional(),
    /** Per currency (ISO 4217 code → amount in its major unit): a refund below it keeps the item, no return asked. */
    keep_item_below: z
      .record(
        z.string().regex(/^[A-Z]{3}$/, "a currency is an ISO 4217 code such as EUR"),
        z.number("keep_item_below's amounts are numbers").positive("keep_item_below's amounts are positive"),
      )
      .optional(),
    /** Which event pays: the carrier's first scan, the delivery to the warehouse, or a passed inspection. */
    pay_on: z
      .enum(["in_transit", "delivered", "inspected"], { message: "pay_on is one of in_transit, delivered, inspected" })
      .optional(),
    /** Days after the decision the customer has to send the item back (default 30). */
    return_deadline_days: z
      .number("return_deadline_days is a number of days")
      .int("return_deadline_days is a whole number of days")
      .positive("return_deadline_days is at least 1")
      .optional(),
    /** Days within which a refund is due by law (default 14). */
    refund_due_days: z
      .number("refund_due_days is a number of days")
      .int("refund_due_days is a whole number of days")
      .positive("refund_due_days is at least 1")
      .optional(),
  })
  .strict();

/** The fields of a return policy. */
export type ReturnPolicyFields = z.infer<typeof ReturnPolicyFieldsSchema>;

/** The return policy (`claims_bounds.returns`): the default fields, and `categories` with their own. */
export const ReturnPolicySchema = ReturnPolicyFieldsSchema.extend({
  categories: z.record(z.string().min(1), ReturnPolicyFieldsSchema).optional(),
}).strict();

/** The outcomes an ACCEPT can take (docs/returns.md#outcomes): money back, store credit, or an exchange. */
export const OutcomeKindSchema = z.enum(["REFUND", "STORE_CREDIT", "EXCHANGE"], {
  message: "an outcome is one of REFUND, STORE_CREDIT, EXCHANGE",
});

/** The fields of an outcome policy, each optional: the default's, or a category's own over it. */
const OutcomePolicyFieldsSchema = z
  .object({
    /** The outcome an ACCEPT takes when the claim asks none (default REFUND). */
    outcome: OutcomeKindSchema.optional(),
    /** The outcomes a claim may ask for besides REFUND, which is always allowed (default: the policy's `outcome`). */
    allows: z.array(OutcomeKindSchema).min(1, "allows names at least one outcome").optional(),
    /** Store credit's bonus, in percent of the refund (default 0). */
    store_credit_bonus_pct: z
      .number("store_credit_bonus_pct is a number")
      .int("store_credit_bonus_pct is a whole percentage")
      .min(0, "store_credit_bonus_pct is at least 0")
      .max(100, "store_credit_bonus_pct is at most 100")
      .optional(),
  })
  .strict();

/** The fields of an outcome policy. */
export type OutcomePolicyFields = z.infer<typeof OutcomePolicyFieldsSchema>;

/** The outcome policy (`claims_bounds.outcomes`): the default fields, and `categories` with their own. */
export const OutcomePolicySchema = OutcomePolicyFieldsSchema.extend({
  categories: z.record(z.string().min(1), OutcomePolicyFieldsSchema).optional(),
}).strict();

/** The claims-specific bounds every proposal is held to; the flat amounts are EUR's. */
export const ClaimsContractSchema = z
  .object({
    allowed_refund_categories: z.array(z.string().min(1)).min(1),
    max_refund_without_escalation: z.number().positive(),
    return_window_days: ReturnWindowSchema,
    /** Absent: no customer limit. */
    customer_limits: CustomerLimitsSchema.optional(),
    /** Bounds per currency (ISO 4217 code → bounds); EUR's default to the flat amounts. */
    currencies: z
      .record(z.string().regex(/^[A-Z]{3}$/, "a currency is an ISO 4217 code such as USD"), CurrencyBoundsSchema)
      .optional(),
    /** Whether shipping is refunded with the order's last line (default never). */
    refund_shipping: z.enum(["with_last_line", "never"]).optional(),
    /** Whether an ACCEPT waits for the item to come back (docs/returns.md); absent: every ACCEPT pays at once. */
    returns: ReturnPolicySchema.optional(),
    /** What an ACCEPT gives (docs/returns.md#outcomes); absent: every ACCEPT refunds the original payment. */
    outcomes: OutcomePolicySchema.optional(),
  })
  .strict();

/** The claims contract. */
export type ClaimsContract = z.infer<typeof ClaimsContractSchema>;

/** An amount as an order states it: a decimal string ("499.00") or a JSON number, exact to the currency's minor unit. */
const OrderAmountSchema = z.union([z.number(), z.string().min(1)]);

/** One line of an order: what was paid for all its units (after discounts), in the order's currency. */
export const OrderLineSchema = z
  .object({
    line_id: z.string().min(1).max(64),
    sku: z.string().min(1).optional(),
    /** What the shop calls the item ("T-shirt, medium"): free text claims name items by it (docs/orders.md). */
    title: z.string().min(1).max(200).optional(),
    category: z.string().min(1),
    quantity: z.number(),
    amount: OrderAmountSchema,
  })
  .strict();

/** A line of an order as stored (its amount as the shop stated it). */
export type OrderLine = z.infer<typeof OrderLineSchema>;

/**
 * An authoritative order from the context store; never shown to the crew. Either today's one-line form (`category`,
 * `amount`: one line "1") or `lines` (with optional `shipping`, and an optional total `amount` the lines must add up
 * to); core/kernel/order-view.ts reads both as lines and refuses what does not add up.
 */
export const OrderSchema = z
  .object({
    order_id: z.string().min(1),
    purchase_date: z.string().min(1),
    category: z.string().min(1).optional(),
    amount: OrderAmountSchema.optional(),
    currency: z.string().min(1).default("EUR"),
    customer_id: z.string().optional(),
    /** The shop's payment reference (a Stripe `pi_…` / `ch_…`), carried for the refund executor; the kernel ignores it. */
    payment_ref: z.string().min(1).optional(),
    /** What the customer paid for shipping, in the order's currency (default nothing). */
    shipping: OrderAmountSchema.optional(),
    /** The order's lines; absent in the one-line form. */
    lines: z.array(OrderLineSchema).min(1).optional(),
  })
  .strict();

/** An order record with an absolute ISO purchase date. */
export type Order = z.infer<typeof OrderSchema>;

/** The authoritative orders as plain data, keyed by order id. */
export type ContextSnapshot = { orders: Record<string, Order> };
