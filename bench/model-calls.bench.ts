// Model calls and tokens per claim on the bundled scenarios and on a realistic mix, through the in-process pipeline and
// the rules model (its token counts are characters / 4, as the meter records them), lever by lever: triage (issue 24,
// docs/kernel.md), extraction by patterns and the compact crew (issue 37, docs/llm.md); then the all-in cost per
// million claims (AWS + the model) at two model price points, at list prices and with the Batch API's discount.
// `npm run bench -- model-calls` runs it alone.
import { existsSync, readFileSync } from "node:fs";
import { parseConfig } from "../core/claim/config.ts";
import type { ClaimsConfig, CrewShapeSetting } from "../core/claim/config.ts";
import { modelCost } from "../core/agents/model-cost.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { parseScenarios, scenarioBody } from "../core/history/scenarios.ts";
import type { Order } from "../core/integrity/index.ts";
import { batchPrice, DEFAULT_PRICE_TABLE, priceOf } from "../core/llm/prices.ts";
import { createRng, flowSeed } from "../chaos/rng.ts";
import { planFlow } from "../chaos/plan.ts";
import { DEFAULT_PIPELINE_SETTINGS } from "../pipeline/deps.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import { allInPerMillion, costSummary, modelPerMillion } from "./cost.ts";
import type { TokenPrice } from "./cost.ts";
import { AWS_REQUESTS_FILE, BASELINE_FILE, readAwsRequests } from "./lib/profile.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const SIM = "sim_model_calls";

/** What one mix cost the model. */
type Figures = {
  claims: number;
  calls: number;
  prompt: number;
  completion: number;
  triaged: number;
  /** Each claim's outcome in order (status, verdict, reason code): the same under every lever, or the bench fails. */
  outcomes: string[];
};

/** Which levers a measurement pulls. */
type Levers = { triage: boolean; patterns: boolean; crewShape: CrewShapeSetting };

/** The configurations measured, from none of the levers to the default (every lever). */
const STEPS: readonly { name: string; levers: Levers }[] = [
  { name: "no lever (every claim to the crew)", levers: { triage: false, patterns: false, crewShape: "two_agents" } },
  { name: "triage (issue 24)", levers: { triage: true, patterns: false, crewShape: "two_agents" } },
  { name: "+ extraction by patterns", levers: { triage: true, patterns: true, crewShape: "two_agents" } },
  { name: "+ compact crew (the default)", levers: { triage: true, patterns: true, crewShape: "compact" } },
];

/** Runs `bodies` (each against its own `orders`) with `levers`; returns the model's calls and tokens. */
async function measure(
  config: ClaimsConfig,
  groups: readonly { orders: readonly Order[]; bodies: readonly unknown[] }[],
  levers: Levers,
): Promise<Figures> {
  const out: Figures = { claims: 0, calls: 0, prompt: 0, completion: 0, triaged: 0, outcomes: [] };
  for (const group of groups) {
    const p = createInProcessPipeline({
      agent: { ...config.agent, crewShape: levers.crewShape },
      orders: group.orders,
      llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
      clock: { now: () => NOW },
      settings: { ...DEFAULT_PIPELINE_SETTINGS, triage: levers.triage, extractByPatterns: levers.patterns },
    });
    for (const body of group.bodies) {
      const { record } = await p.decide(body);
      out.outcomes.push(`${record?.status} ${record?.verdict ?? ""} ${record?.reason_code ?? ""}`);
    }
    const events = p.auditEvents();
    const s = modelCost(events, DEFAULT_PRICE_TABLE);
    out.claims += s.claims;
    out.calls += s.calls;
    out.prompt += s.promptTokens;
    out.completion += s.completionTokens;
    out.triaged += events.filter((e) => e.event_type === "CLAIM_TRIAGED").length;
  }
  return out;
}

/** The bundled scenarios as `claims batch` submits them (review rows left out: they make no model call). */
function bundled(config: ClaimsConfig) {
  const scenarios = parseScenarios(
    readFileSync(new URL("../scenarios/scenarios.yaml", import.meta.url), "utf8"),
    "scenarios.yaml",
  );
  return [{ orders: config.orders, bodies: scenarios.map((s) => scenarioBody(s, SIM, NOW)) }];
}

/** The chaos flows' claim mix (seed 1, 200 flows): drawn like real traffic, not like the demo. */
function realistic() {
  return Array.from({ length: 200 }, (_, flow) => {
    const plan = planFlow(createRng(flowSeed(1, flow)), 1, flow, { startMs: NOW });
    return { orders: plan.orders, bodies: plan.claims.map((c) => c.body) };
  });
}

const per = (f: Figures, n: number) => (f.claims === 0 ? 0 : n / f.claims);
const price = (model: string) => priceOf(DEFAULT_PRICE_TABLE, model) as TokenPrice;

export async function run(): Promise<string> {
  const config = parseConfig(
    readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"),
    "config.yaml",
    NOW,
  );
  // AWS as measured by this run's aws-requests bench (it runs first in `npm run bench`), else the committed profile.
  const fresh = existsSync(AWS_REQUESTS_FILE);
  const aws = costSummary(await readAwsRequests(fresh ? AWS_REQUESTS_FILE : BASELINE_FILE), "structured").allIn;
  const awsSource = fresh ? "the profile `npm run bench -- aws-requests` measured" : "the committed profile";
  const points = ["gpt-4o-mini", "gpt-4.1"] as const;
  const rows: string[] = [];
  const allIn: string[] = [];
  for (const [name, groups] of [
    ["bundled scenarios", bundled(config)],
    ["realistic mix (chaos plans, seed 1, 200 flows)", realistic()],
  ] as const) {
    let first: Figures | undefined;
    for (const step of STEPS) {
      const x = await measure(config, groups, step.levers);
      first ??= x;
      const moved = x.outcomes.findIndex((o, i) => o !== first!.outcomes[i]);
      if (moved !== -1)
        throw new Error(
          `${name}, ${step.name}: claim #${moved + 1} ends ${x.outcomes[moved]}, not ${first.outcomes[moved]} as without the levers`,
        );
      const f = (n: number, d = 2) => per(x, n).toFixed(d);
      const tokens = { prompt: per(x, x.prompt), completion: per(x, x.completion) };
      const triaged = `${x.triaged} (${((100 * x.triaged) / x.claims).toFixed(0)} %)`;
      rows.push(
        `| ${name} | ${step.name} | ${x.claims} | ${triaged} | ${f(x.calls)} | ${f(x.prompt, 0)} | ${f(x.completion, 0)} |`,
      );
      // At list prices, then through the Batch API (LLM_BATCH_MODE=batch: half the list price).
      const cost = [false, true].flatMap((batch) =>
        points.map((model) => {
          const p = batch ? batchPrice(price(model)) : price(model);
          return `$${modelPerMillion(tokens, p).toFixed(2)} / $${allInPerMillion(aws, tokens, p).toFixed(2)}`;
        }),
      );
      allIn.push(`| ${name} | ${step.name} | ${cost.join(" | ")} |`);
    }
  }
  return [
    "## Model calls and tokens per claim, lever by lever",
    "",
    "In-process pipeline, rules model (tokens = characters / 4, as recorded); every verdict is the same in every row.",
    "",
    "| mix | levers | claims | triaged | model calls / claim | prompt tokens / claim | completion tokens / claim |",
    "|---|---|---|---|---|---|---|",
    ...rows,
    "",
    `Per million claims, model / all-in: AWS $${aws.toFixed(2)} (bench/cost.ts, structured claim, ${awsSource}) + the model at list prices, no cached-input discount (docs/llm.md, "Crew shape"); then with the Batch API's discount (LLM_BATCH_MODE=batch, half the list price: docs/llm.md, "Batch mode").`,
    "",
    "| mix | levers | gpt-4o-mini ($0.15 / $0.60) | gpt-4.1 ($2 / $8) | gpt-4o-mini, Batch API ($0.075 / $0.30) | gpt-4.1, Batch API ($1 / $4) |",
    "|---|---|---|---|---|---|",
    ...allIn,
  ].join("\n");
}
