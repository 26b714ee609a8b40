import * as z from "zod";
import { ClaimsContractSchema, ResponsibilityContractSchema } from "../integrity/contracts.ts";
import { resolveDate } from "./relative-date.ts";
import { SourceFileError, parseYamlSource, validateYaml } from "./yaml-source.ts";
import type { ClaimsContract, Order, ResponsibilityContract } from "../integrity/contracts.ts";

const DateOrOffset = z.string().refine((s) => resolveDate(s, 0) !== undefined, {
  message: "must be an ISO date/timestamp (2026-05-20, 2026-05-20T10:00:00Z) or an offset from the run's clock (-3d, -36h, +2d)",
});

const LlmDefaultsSchema = z
  .object({
    provider: z.enum(["rules", "openai"]).default("rules"),
    model: z.string().min(1).default("gemma3:4b"),
    base_url: z.string().url().default("http://localhost:11434/v1"),
    temperature: z.number().min(0).max(2).default(0.2),
    timeout_ms: z.number().int().positive().default(30_000),
    max_retries: z.number().int().min(0).max(10).default(2),
  })
  .strict();

const AgentSchema = z
  .object({
    agent_id: z.string().min(1),
    version: z.string().min(1),
    contract: ResponsibilityContractSchema.omit({ agent_id: true }),
    claims_bounds: ClaimsContractSchema,
  })
  .strict();

const OrderEntrySchema = z
  .object({
    purchase_date: DateOrOffset,
    category: z.string().min(1),
    amount: z.number().positive("amount must be a positive number of EUR"),
    currency: z.literal("EUR", { message: "only EUR orders are supported" }).default("EUR"),
    customer_id: z.string().optional(),
  })
  .strict();

/** Schema of `scenarios/config.yaml` (SPEC §6). */
export const ConfigFileSchema = z
  .object({
    llm_defaults: LlmDefaultsSchema.default(LlmDefaultsSchema.parse({})),
    simulation: z.object({ run_id: z.string().min(1).regex(/^[A-Za-z0-9_.:-]+$/, "run_id may hold letters, digits and _ . : -") }).strict(),
    agents: z.array(AgentSchema).min(1, "at least one agent is required"),
    context_store: z.object({ orders: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/, "order ids hold letters, digits, _ and -"), OrderEntrySchema) }).strict(),
  })
  .strict();

/** The LLM defaults of the config file. */
export type LlmDefaults = z.infer<typeof LlmDefaultsSchema>;

/** The configuration with every relative date resolved against the run's clock. */
export interface ClaimsConfig {
  file: string;
  llm: LlmDefaults;
  simulationId: string;
  agent: { agentId: string; version: string; responsibility: ResponsibilityContract; contract: ClaimsContract };
  orders: Order[];
}

/** Parses and validates config YAML text; relative purchase dates resolve against `nowMs`. Throws `SourceFileError`. */
export function parseConfig(text: string, file: string, nowMs: number): ClaimsConfig {
  const source = parseYamlSource(text, file);
  const raw = validateYaml(source, ConfigFileSchema, (path) => {
    if (path[0] === "agents" && typeof path[1] === "number") {
      const agents = (source.value as { agents?: { agent_id?: unknown }[] }).agents;
      const id = agents?.[path[1]]?.agent_id;
      return typeof id === "string" ? id : `#${path[1]}`;
    }
    if (path[0] === "context_store" && path[1] === "orders" && typeof path[2] === "string") return path[2];
    return undefined;
  });
  const [first] = raw.agents;
  if (!first) throw new SourceFileError(file, [{ file, field: "agents", message: "at least one agent is required" }]);
  const orders = Object.entries(raw.context_store.orders).map(([order_id, o]) => ({
    order_id,
    purchase_date: resolveDate(o.purchase_date, nowMs)!,
    category: o.category,
    amount: o.amount,
    currency: o.currency,
    ...(o.customer_id ? { customer_id: o.customer_id } : {}),
  }));
  return {
    file,
    llm: raw.llm_defaults,
    simulationId: raw.simulation.run_id,
    agent: {
      agentId: first.agent_id,
      version: first.version,
      responsibility: { ...first.contract, agent_id: first.agent_id },
      contract: first.claims_bounds,
    },
    orders,
  };
}
