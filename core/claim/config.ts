// `scenarios/config.yaml` (docs/config.md): our format, and DIR sample 35's own files in both of its contract
// formats (the seed-era flat contract and the roa.dir/v1 contract document), read unchanged.
import { CREW_SHAPES, type CrewShapeSetting } from "./crew-shape.ts";
import * as z from "zod";
import { LLM_DEFAULTS } from "../llm/defaults.ts";
import { ClaimsContractSchema } from "../integrity/contracts.ts";
import { emptyRegistry, handshakeAgent } from "../integrity/registry.ts";
import type { HandshakeResult } from "../integrity/registry.ts";
import { PolicyKindSchema } from "../integrity/contracts.ts";
import { resolveDate } from "./relative-date.ts";
import { SourceFileError } from "./errors.ts";
import { ignoredField, ignoredFields, parseYamlSource, validateYaml } from "./yaml-source.ts";
import type { IgnoredField } from "./yaml-source.ts";
import type { ClaimsContract, Order, ResponsibilityContract } from "../integrity/contracts.ts";
import { OrderLineSchema } from "../integrity/contracts.ts";

export { CREW_SHAPES, type CrewShapeSetting };

/** The agent version assumed when the config names none (DIR sample 35's files do not). */
const DEFAULT_AGENT_VERSION = "1.0.0";

/** The contract major the agent registry accepts (docs/config.md: `1.x`). */
const REGISTRY_ACCEPTED_MAJOR = 1;

const DateOrOffset = z.string().refine((s) => resolveDate(s, 0) !== undefined, {
  message:
    "must be an ISO date/timestamp (2026-05-20, 2026-05-20T10:00:00Z; UTC unless it has an offset) or an offset from the run's clock (-3d, -36h, +2d)",
});

const ignored = (why: string) => ignoredField(why);

const LlmDefaultsSchema = z
  .object({
    provider: z.enum(["rules", "openai"]).default(LLM_DEFAULTS.provider),
    model: z.string().min(1).default(LLM_DEFAULTS.model),
    base_url: z.string().url().default(LLM_DEFAULTS.baseUrl),
    temperature: z.number().min(0).max(2).default(LLM_DEFAULTS.temperature),
    timeout_ms: z.number().int().positive().default(LLM_DEFAULTS.timeoutMs),
    max_retries: z.number().int().min(0).max(10).default(LLM_DEFAULTS.maxRetries),
  })
  .strict();

const PolicyTypes = z.array(PolicyKindSchema).min(1);
const Categories = z.array(z.string().min(1)).min(1);

// Keys of each contract format, to tell which one a contract is written in and to point at misplaced keys.
const ROA_KEYS = ["api_version", "kind", "subject", "authority", "execution_conditions", "responsibility"] as const;
const FLAT_TO_ROA: Record<string, string> = {
  role: "subject.role",
  allowed_policy_types: "authority.allowed_policy_types",
  escalate_on_uncertainty: "responsibility.escalation.confidence_below",
  authorized_categories: "authority.resource_scope.categories",
  authorized_instruments: "authority.resource_scope.categories",
  parent_agent_id: "subject.parent_agent_id",
  wake_up_threshold_pct: "execution_conditions.wake_up_threshold_pct",
  max_drawdown_limit: "",
};

/**
 * An agent's responsibility contract in any of three spellings: ours (`role`, `authorized_categories`, …), the
 * seed-era flat one (`authorized_instruments` and trading fields) and the `roa.dir/v1` contract document.
 */
const ContractSchema = z
  .object({
    role: z.string().min(1).optional(),
    mission: z.string().min(1).optional(),
    allowed_policy_types: PolicyTypes.optional(),
    escalate_on_uncertainty: z.number().min(0).max(1).optional(),
    authorized_categories: Categories.optional(),
    authorized_instruments: Categories.optional(),
    max_drawdown_limit: ignored("a trading limit of other DIR samples; refunds are bounded by claims_bounds"),
    wake_up_threshold_pct: ignored("a wake-up threshold of the DIR runtime's scheduler"),
    parent_agent_id: ignored("agent hierarchies of the DIR runtime; one agent decides here"),
    api_version: z
      .literal("roa.dir/v1", { message: "the only contract document version understood is roa.dir/v1" })
      .optional(),
    kind: z.literal("ResponsibilityContract", { message: "kind must be ResponsibilityContract" }).optional(),
    subject: z
      .object({
        agent_id: z.string().min(1).optional(),
        role: z.string().min(1),
        parent_agent_id: ignored("agent hierarchies of the DIR runtime; one agent decides here"),
      })
      .strict()
      .optional(),
    authority: z
      .object({
        allowed_policy_types: PolicyTypes,
        resource_scope: z.object({ categories: Categories.optional() }).strict().optional(),
      })
      .strict()
      .optional(),
    execution_conditions: ignored("wake-up conditions of the DIR runtime's scheduler"),
    responsibility: z
      .object({
        escalation: z
          .object({
            mode: z.literal("conditional", {
              message: "only conditional escalation (below a confidence) is supported",
            }),
            confidence_below: z.number().min(0).max(1).default(0.7),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const present = (k: string) => (c as Record<string, unknown>)[k] !== undefined;
    if (ROA_KEYS.some(present)) {
      if (!c.api_version)
        ctx.addIssue({
          code: "custom",
          path: ["api_version"],
          message: "a contract with subject/authority is a roa.dir/v1 document: add api_version: roa.dir/v1",
        });
      if (!c.subject)
        ctx.addIssue({
          code: "custom",
          path: ["subject"],
          message: "subject is missing (required in a roa.dir/v1 contract: subject.role)",
        });
      if (!c.authority)
        ctx.addIssue({
          code: "custom",
          path: ["authority"],
          message: "authority is missing (required in a roa.dir/v1 contract: authority.allowed_policy_types)",
        });
      for (const [flat, roa] of Object.entries(FLAT_TO_ROA)) {
        if (present(flat))
          ctx.addIssue({
            code: "custom",
            path: [flat],
            message: `${flat} is not a roa.dir/v1 contract key${roa ? `: write it as ${roa}` : ""}`,
          });
      }
      return;
    }
    if (!c.role) ctx.addIssue({ code: "custom", path: ["role"], message: "role is missing (required: e.g. EXECUTOR)" });
    if (!c.allowed_policy_types)
      ctx.addIssue({
        code: "custom",
        path: ["allowed_policy_types"],
        message: "allowed_policy_types is missing (required: e.g. [REFUND, REPLACE, ESCALATE])",
      });
    if (c.authorized_categories && c.authorized_instruments) {
      ctx.addIssue({
        code: "custom",
        path: ["authorized_instruments"],
        message:
          "give the agent's categories once: authorized_categories or (the DIR sample's name) authorized_instruments",
      });
    }
  });

type ContractInput = z.infer<typeof ContractSchema>;

/** Which spelling an agent contract is written in. */
export type ContractFormat = "claims-crew" | "dir-seed-era" | "roa.dir/v1";

const ClaimsBoundsSchema = ClaimsContractSchema.extend({
  allowed_refund_categories: Categories.optional(),
  /** Four eyes: a reviewer's APPROVE above this many EUR waits for a different reviewer's (docs/reviews.md). */
  second_approval_above_eur: z
    .number()
    .positive("second_approval_above_eur must be a positive number of EUR")
    .optional(),
  /** How long a review may wait for a person (docs/reviews.md): `due_at` = requested + this; one of the two, or neither (2 days). */
  review_due_days: z.number().positive("review_due_days must be a positive number of days").max(365).optional(),
  review_due_hours: z.number().positive("review_due_hours must be a positive number of hours").max(8760).optional(),
})
  .strict()
  .superRefine((b, ctx) => {
    if (b.review_due_days !== undefined && b.review_due_hours !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["review_due_hours"],
        message: "give how long a review may wait once: review_due_days or review_due_hours",
      });
  });

const AgentSchema = z
  .object({
    agent_id: z.string().min(1),
    version: z.string().min(1).optional(),
    priority: ignored("scheduling priority of the DIR runtime; one agent decides here"),
    crew: ignored("CrewAI role names and goals; the crew here is built in (crew_shape chooses it), its prompts too"),
    /** Which crew decides a claim (docs/config.md, docs/llm.md "Crew shape"): compact (default) or two_agents. */
    crew_shape: z.enum(CREW_SHAPES, { message: `crew_shape must be one of: ${CREW_SHAPES.join(", ")}` }).optional(),
    contract: ContractSchema,
    claims_bounds: ClaimsBoundsSchema,
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.contract.subject?.agent_id !== undefined && a.contract.subject.agent_id !== a.agent_id) {
      ctx.addIssue({
        code: "custom",
        path: ["contract", "subject", "agent_id"],
        message: `the contract is for ${a.contract.subject.agent_id}, but the agent is ${a.agent_id}`,
      });
    }
    if (!a.claims_bounds.allowed_refund_categories && !agentCategories(a.contract).categories) {
      ctx.addIssue({
        code: "custom",
        path: ["claims_bounds", "allowed_refund_categories"],
        message:
          "allowed_refund_categories is missing: list the refundable categories here, or the agent's categories in its contract (authorized_categories, authorized_instruments or authority.resource_scope.categories)",
      });
    }
  });

const OrderEntrySchema = z
  .object({
    purchase_date: DateOrOffset,
    category: z.string().min(1).optional(),
    /** Today's one-line form: a number (a YAML number; the lines' amounts may also be decimal strings). */
    amount: z.number().positive("amount must be a positive number").optional(),
    /** The order's currency (ISO 4217); EUR when absent (docs/orders.md). */
    currency: z.string().min(1).default("EUR"),
    customer_id: z.string().optional(),
    shipping: z.union([z.number(), z.string().min(1)]).optional(),
    lines: z.array(OrderLineSchema).min(1).optional(),
  })
  .strict();

/** Schema of `scenarios/config.yaml` (docs/config.md), including DIR sample 35's keys (used, or accepted and ignored). */
const ConfigFileSchema = z
  .object({
    database: ignored(
      "the DIR sample's SQLite/PostgreSQL store; Claims Crew keeps claims, verdicts and audit in DynamoDB",
    ),
    llm_defaults: LlmDefaultsSchema.default(LlmDefaultsSchema.parse({})),
    simulation: z
      .object({
        run_id: z
          .string()
          .min(1)
          .regex(/^[A-Za-z0-9_.:-]+$/, "run_id may hold letters, digits and _ . : -"),
        seeds: ignored("random seeds of the DIR runtime; every run here is deterministic"),
      })
      .strict(),
    agents: z.array(AgentSchema).min(1, "at least one agent is required"),
    /** A second policy decided beside the live one on every decision, recorded and never acted on (docs/backtest.md). */
    shadow_policy: z
      .object({ agents: z.array(AgentSchema).min(1, "the shadow policy needs one agent (its first decides)") })
      .strict()
      .optional(),
    /** How long the customer's own words are kept (docs/customer-data.md): the sweep erases older claims' text. */
    retention: z
      .object({
        customer_text_days: z
          .number({ message: "customer_text_days must be a number of days" })
          .int("customer_text_days must be a whole number of days")
          .min(1, "customer_text_days must be at least 1 day")
          .max(36_500, "customer_text_days must be at most 36500 days (100 years)"),
      })
      .strict()
      .optional(),
    context_store: z
      .object({
        orders: z.record(
          z.string().regex(/^[A-Za-z0-9_-]+$/, "order ids hold letters, digits, _ and -"),
          OrderEntrySchema,
        ),
      })
      .strict(),
  })
  .strict();

/** The LLM defaults of the config file. */
type LlmDefaults = z.infer<typeof LlmDefaultsSchema>;

/** How the file was read: its contract format, the defaults and mappings applied, and the keys accepted but ignored. */
interface ConfigReading {
  format: ContractFormat;
  /** One line per default or mapping applied, e.g. `agents[0].version missing: 1.0.0 assumed`. */
  mappings: string[];
  /** The keys accepted and not used (list indices written `[]`), each listed once. */
  ignored: IgnoredField[];
}

/** An agent's policy: its responsibility contract and claims bounds. */
export interface AgentPolicy {
  agentId: string;
  version: string;
  responsibility: ResponsibilityContract;
  contract: ClaimsContract;
  /** How people decide what the kernel escalates: the four-eyes bound, how long a review may wait (docs/reviews.md). */
  review?: { secondApprovalAboveEur?: number; dueMs?: number };
  /** Which crew decides a claim (`crew_shape`); absent: `compact`. */
  crewShape?: CrewShapeSetting;
}

/** The configuration with every relative date resolved against the run's clock. */
export interface ClaimsConfig {
  file: string;
  llm: LlmDefaults;
  simulationId: string;
  /** The live agent's policy, and the shadow policy decided beside it when the config has `shadow_policy`. */
  agent: AgentPolicy & { shadow?: AgentPolicy };
  orders: Order[];
  /** How many days a claim's personal data is kept before the sweep erases it (`retention.customer_text_days`). */
  retention?: { customerTextDays: number };
  reading: ConfigReading;
}

function agentCategories(c: ContractInput): { categories?: string[]; from?: string } {
  if (c.authority?.resource_scope?.categories)
    return { categories: c.authority.resource_scope.categories, from: "contract.authority.resource_scope.categories" };
  if (c.authorized_instruments)
    return { categories: c.authorized_instruments, from: "contract.authorized_instruments" };
  if (c.authorized_categories) return { categories: c.authorized_categories, from: "contract.authorized_categories" };
  return {};
}

function contractFormat(c: ContractInput): ContractFormat {
  if (c.api_version) return "roa.dir/v1";
  const seedOnly: (keyof ContractInput)[] = [
    "authorized_instruments",
    "max_drawdown_limit",
    "wake_up_threshold_pct",
    "parent_agent_id",
  ];
  return seedOnly.some((k) => k in c) ? "dir-seed-era" : "claims-crew";
}

/** The agent's responsibility contract in our one shape, whatever spelling the file used. */
function responsibilityOf(agentId: string, c: ContractInput): ResponsibilityContract {
  const mission = c.mission?.trim().replace(/\s+/g, " ");
  return {
    agent_id: agentId,
    role: (c.subject?.role ?? c.role)!,
    mission: mission || "Process customer claims fairly, within policy boundaries.",
    allowed_policy_types: (c.authority?.allowed_policy_types ?? c.allowed_policy_types)!,
    escalate_on_uncertainty: c.responsibility?.escalation?.confidence_below ?? c.escalate_on_uncertainty ?? 0.7,
    authorized_categories: agentCategories(c).categories ?? [],
  };
}

/** The review rules of the claims bounds: the four-eyes bound and the review due duration (absent when neither is set). */
function reviewPolicy(bounds: z.infer<typeof ClaimsBoundsSchema>): Pick<AgentPolicy, "review"> {
  const dueMs =
    bounds.review_due_days !== undefined
      ? Math.round(bounds.review_due_days * 86_400_000)
      : bounds.review_due_hours !== undefined
        ? Math.round(bounds.review_due_hours * 3_600_000)
        : undefined;
  const review = {
    ...(bounds.second_approval_above_eur !== undefined
      ? { secondApprovalAboveEur: bounds.second_approval_above_eur }
      : {}),
    ...(dueMs !== undefined ? { dueMs } : {}),
  };
  return Object.keys(review).length > 0 ? { review } : {};
}

/** An agent entry of the file as the policy it decides with. */
function agentPolicy(agent: z.infer<typeof AgentSchema>): AgentPolicy {
  const responsibility = responsibilityOf(agent.agent_id, agent.contract);
  return {
    agentId: agent.agent_id,
    version: agent.version ?? DEFAULT_AGENT_VERSION,
    responsibility,
    contract: {
      allowed_refund_categories: agent.claims_bounds.allowed_refund_categories ?? responsibility.authorized_categories,
      max_refund_without_escalation: agent.claims_bounds.max_refund_without_escalation,
      return_window_days: agent.claims_bounds.return_window_days,
      ...(agent.claims_bounds.customer_limits ? { customer_limits: agent.claims_bounds.customer_limits } : {}),
      ...(agent.claims_bounds.currencies ? { currencies: agent.claims_bounds.currencies } : {}),
      ...(agent.claims_bounds.refund_shipping ? { refund_shipping: agent.claims_bounds.refund_shipping } : {}),
      ...(agent.claims_bounds.returns ? { returns: agent.claims_bounds.returns } : {}),
      ...(agent.claims_bounds.outcomes ? { outcomes: agent.claims_bounds.outcomes } : {}),
    },
    ...reviewPolicy(agent.claims_bounds),
    ...(agent.crew_shape === undefined ? {} : { crewShape: agent.crew_shape }),
  };
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
  const orders = Object.entries(raw.context_store.orders).map(([order_id, o]) => {
    const order: Order = {
      order_id,
      purchase_date: resolveDate(o.purchase_date, nowMs)!,
      ...(o.category === undefined ? {} : { category: o.category }),
      ...(o.amount === undefined ? {} : { amount: o.amount }),
      currency: o.currency,
      ...(o.customer_id ? { customer_id: o.customer_id } : {}),
      ...(o.shipping === undefined ? {} : { shipping: o.shipping }),
      ...(o.lines === undefined ? {} : { lines: o.lines }),
    };
    // Lines that do not add up, a currency ISO 4217 does not know, …: refused where the orders are stored
    // (validateOrder, core/kernel/orders.ts), before anything is written.
    return order;
  });
  const categories = agentCategories(first.contract);
  const mappings: string[] = [];
  if (first.version === undefined) mappings.push(`agents[0].version missing: ${DEFAULT_AGENT_VERSION} assumed`);
  if (categories.from && categories.from !== "contract.authorized_categories")
    mappings.push(`agents[0].${categories.from}: the agent's categories`);
  if (!first.claims_bounds.allowed_refund_categories)
    mappings.push(
      `agents[0].claims_bounds.allowed_refund_categories missing: the agent's categories (${categories.from}) are the refundable ones`,
    );
  if (raw.agents.length > 1) mappings.push(`${raw.agents.length} agents: only the first (${first.agent_id}) decides`);
  const shadow = raw.shadow_policy?.agents[0];
  return {
    file,
    llm: raw.llm_defaults,
    simulationId: raw.simulation.run_id,
    agent: { ...agentPolicy(first), ...(shadow ? { shadow: agentPolicy(shadow) } : {}) },
    orders,
    ...(raw.retention ? { retention: { customerTextDays: raw.retention.customer_text_days } } : {}),
    reading: {
      format: contractFormat(first.contract),
      mappings,
      ignored: ignoredFields(ConfigFileSchema, source.value),
    },
  };
}

/** The registry's answer to the configured agent (the same handshake the pipeline performs before anything runs). */
export function agentHandshake(config: Pick<ClaimsConfig, "agent">): HandshakeResult {
  return handshakeAgent(emptyRegistry(REGISTRY_ACCEPTED_MAJOR), {
    agent_id: config.agent.agentId,
    version: config.agent.version,
    contract: config.agent.responsibility,
  }).result;
}
