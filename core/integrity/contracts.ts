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

/** The claims-specific bounds every proposal is held to. */
export const ClaimsContractSchema = z
  .object({
    allowed_refund_categories: z.array(z.string().min(1)).min(1),
    max_refund_without_escalation: z.number().positive(),
    return_window_days: z.number().int().positive(),
  })
  .strict();

/** The claims contract. */
export type ClaimsContract = z.infer<typeof ClaimsContractSchema>;

/** An authoritative order from the context store; never shown to the crew. */
export const OrderSchema = z
  .object({
    order_id: z.string().min(1),
    purchase_date: z.string().min(1),
    category: z.string().min(1),
    amount: z.number().positive(),
    currency: z.literal("EUR").default("EUR"),
    customer_id: z.string().optional(),
    /** The shop's payment reference (a Stripe `pi_…` / `ch_…`), carried for the refund executor; the kernel ignores it. */
    payment_ref: z.string().min(1).optional(),
  })
  .strict();

/** An order record with an absolute ISO purchase date. */
export type Order = z.infer<typeof OrderSchema>;

/** The authoritative orders as plain data, keyed by order id. */
export type ContextSnapshot = { orders: Record<string, Order> };
