// Claims kernel benchmark: decisions per second of the pure kernel (`decideClaim`) on a realistic
// ACCEPT and REJECT input, beside the whole in-process pipeline with the rules model (intake → crew →
// worker → kernel → execution → audit), taking turns in CPU time; plus the audit written per claim.
import { readFileSync } from "node:fs";
import { auditClaimId } from "../core/history/audit-events.ts";
import { parseConfig } from "../core/claim/config.ts";
import type { ClaimsConfig } from "../core/claim/config.ts";
import { decideClaim } from "../core/kernel/kernel.ts";
import type { DecideClaimInput } from "../core/kernel/kernel.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import type { Claim } from "../core/claim/claim.ts";
import { buildProposal, createAgentRegistry } from "../core/integrity/index.ts";
import type { AuditEvent, Order } from "../core/integrity/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { nodeSha256 } from "../functions/composition/compose.ts";
import { compare, formatTable, interleave, ratioText, us } from "./lib/harness.ts";
import type { Contender, TableRow } from "./lib/harness.ts";

/** The kernel's goal (issue 13): at least this many decisions per second on one core. */
export const KERNEL_GOAL_PER_SECOND = 100_000;

/** The run's clock: every relative purchase date of the config resolves against it. */
export const KERNEL_BENCH_NOW_MS = Date.parse("2026-06-01T12:00:00Z");

/** The two decisions benchmarked. */
export type KernelCase = "accept" | "reject";

/** One benchmark case: the claim the customer sends, the order template it refers to, and the expected verdict. */
export type KernelCaseSpec = {
  case: KernelCase;
  label: string;
  /** The config order every claim of this case copies (under a fresh order id). */
  templateOrderId: string;
  claim: Claim;
  verdict: "ACCEPT" | "REJECT";
  reasonCode: string;
};

/** Seed scenario A (ACCEPT: all eleven layers pass) and C (REJECT at layer 5: 60 days after purchase). */
export const KERNEL_CASES: readonly KernelCaseSpec[] = [
  {
    case: "accept",
    label: "ACCEPT (seed A: 299.99 EUR electronics, 3 days old)",
    templateOrderId: "ord_001",
    claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead on arrival" },
    verdict: "ACCEPT",
    reasonCode: "VALIDATION_PASSED",
  },
  {
    case: "reject",
    label: "REJECT (seed C: 500 EUR, 60 days old → OUTSIDE_RETURN_WINDOW)",
    templateOrderId: "ord_005",
    claim: { order_id: "ord_005", amount_eur: 500, category: "electronics", reason: "Changed my mind" },
    verdict: "REJECT",
    reasonCode: "OUTSIDE_RETURN_WINDOW",
  },
];

/** The bundled scenarios/config.yaml, resolved against the bench clock. */
export function loadBenchConfig(): ClaimsConfig {
  const file = new URL("../scenarios/config.yaml", import.meta.url);
  return parseConfig(readFileSync(file, "utf8"), "scenarios/config.yaml", KERNEL_BENCH_NOW_MS);
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The kernel input the kernel service builds for this case: a proposal built from the Decision
 * Maker output the rules model gives (REFUND of the claimed amount, confidence 0.9), the agent's
 * contracts and registry snapshot from the config, the order from the context store, no ledger
 * entry; received at the bench clock, created 2 s and decided 3 s later.
 */
export function kernelInput(config: ClaimsConfig, spec: KernelCaseSpec): DecideClaimInput {
  const registry = createAgentRegistry({ acceptedMajor: 1 });
  const handshake = registry.handshake({
    agent_id: config.agent.agentId,
    version: config.agent.version,
    contract: config.agent.responsibility,
  });
  if (!handshake.ok) throw new Error(`kernel bench: the config's agent does not register: ${handshake.message}`);
  const order = config.orders.find((o) => o.order_id === spec.templateOrderId);
  if (order === undefined) throw new Error(`kernel bench: scenarios/config.yaml has no order ${spec.templateOrderId}`);
  const dfid = `dfid_bench_${spec.case}`;
  const proposal = buildProposal({
    dfid,
    agentId: config.agent.agentId,
    output: {
      action: "REFUND",
      order_id: spec.claim.order_id,
      amount_eur: spec.claim.amount_eur,
      category: spec.claim.category,
      reason: spec.claim.reason,
      confidence: 0.9,
    },
    createdAt: iso(KERNEL_BENCH_NOW_MS + 2_000),
    validForMs: 600_000,
  });
  return {
    proposal: JSON.parse(JSON.stringify(proposal)) as unknown, // as it arrives in a queue message
    claim: spec.claim,
    contract: config.agent.contract,
    responsibility: config.agent.responsibility,
    registry: registry.snapshot(),
    order,
    ledgerEntry: undefined,
    receivedAt: iso(KERNEL_BENCH_NOW_MS),
    decidedAt: iso(KERNEL_BENCH_NOW_MS + 3_000),
    claimId: `clm_bench_${spec.case}`,
    dfid,
    // As the kernel service passes it on Lambda and on the local stack (functions/composition/compose.ts).
    sha256: nodeSha256,
  };
}

/** `count` copies of the case's template order under fresh ids `ord_<case>_000001…`, so the ledger never sees two claims on one order. */
export function benchOrders(config: ClaimsConfig, spec: KernelCaseSpec, count: number): Order[] {
  const template = config.orders.find((o) => o.order_id === spec.templateOrderId);
  if (template === undefined)
    throw new Error(`kernel bench: scenarios/config.yaml has no order ${spec.templateOrderId}`);
  return Array.from({ length: count }, (_, i) => ({
    ...template,
    order_id: `ord_${spec.case}_${String(i + 1).padStart(6, "0")}`,
  }));
}

/** What one pipeline round did: claims in, their final statuses and verdicts, and the audit it wrote. */
export type PipelineRound = {
  claims: number;
  outcomes: {
    claimId: string;
    status: string | undefined;
    verdict: string | undefined;
    reasonCode: string | undefined;
  }[];
  audit: AuditEvent[];
  messagesHandled: number;
};

/**
 * A fresh in-process pipeline (rules model, orders for `count` claims), ready to take the round's
 * claims: `run()` submits them (structured `{ claim }` bodies, one per fresh order) and drains every
 * queue — the part that is timed; `result()` then reads back the claims and the audit. Call each once.
 */
export function pipelineRound(
  config: ClaimsConfig,
  spec: KernelCaseSpec,
  count: number,
): { run: () => Promise<void>; result: () => Promise<PipelineRound> } {
  const orders = benchOrders(config, spec, count);
  const llm = createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
  const p = createInProcessPipeline({
    agent: config.agent,
    orders,
    llm,
    clock: { now: () => KERNEL_BENCH_NOW_MS },
    overrides: { sha256: nodeSha256 },
  });
  const bodies = orders.map((o) => ({ claim: { ...spec.claim, order_id: o.order_id } }));
  const ids: string[] = [];
  let messagesHandled = 0;
  return {
    run: async () => {
      for (const body of bodies) {
        const submitted = await p.submit(body);
        if (!submitted.ok) throw new Error(`kernel bench: the pipeline refused a claim: ${submitted.code}`);
        ids.push(submitted.claimId);
      }
      messagesHandled = await p.drain();
    },
    result: async () => {
      const outcomes = [];
      for (const claimId of ids) {
        const record = await p.claims.getClaim(claimId);
        outcomes.push({ claimId, status: record?.status, verdict: record?.verdict, reasonCode: record?.reason_code });
      }
      return { claims: count, outcomes, audit: p.auditEvents(), messagesHandled };
    },
  };
}

/** Runs a fresh round of `count` claims and reads back what it did. */
export async function runPipelineRound(
  config: ClaimsConfig,
  spec: KernelCaseSpec,
  count: number,
): Promise<PipelineRound> {
  const round = pipelineRound(config, spec, count);
  await round.run();
  return round.result();
}

/** Throws unless every claim of the round was decided with the case's verdict and reason code. */
export function checkRound(spec: KernelCaseSpec, round: PipelineRound): void {
  const wrong = round.outcomes.filter(
    (o) => o.status !== "DECIDED" || o.verdict !== spec.verdict || o.reasonCode !== spec.reasonCode,
  );
  if (wrong.length > 0) {
    const o = wrong[0]!;
    throw new Error(
      `kernel bench ${spec.case}: ${wrong.length} of ${round.claims} claims ended wrong, e.g. ${o.claimId}: ${o.status} ${o.verdict} ${o.reasonCode} (expected DECIDED ${spec.verdict} ${spec.reasonCode})`,
    );
  }
}

/** Audit written per claim: events and UTF-8 bytes of `JSON.stringify(event)`, grouped by `details.claim_id`. */
export function auditPerClaim(audit: readonly AuditEvent[]): {
  claims: number;
  eventsPerClaim: number;
  bytesPerClaim: number;
  byType: Map<string, number>;
} {
  const perClaim = new Map<string, { events: number; bytes: number }>();
  const byType = new Map<string, number>();
  for (const e of audit) {
    const claimId = auditClaimId(e);
    if (claimId === undefined) continue;
    const bytes = Buffer.byteLength(JSON.stringify(e));
    const c = perClaim.get(claimId) ?? { events: 0, bytes: 0 };
    c.events++;
    c.bytes += bytes;
    perClaim.set(claimId, c);
    byType.set(e.event_type, (byType.get(e.event_type) ?? 0) + bytes);
  }
  const n = perClaim.size;
  if (n === 0) throw new Error("kernel bench: the audit holds no claim events");
  let events = 0;
  let bytes = 0;
  for (const c of perClaim.values()) {
    events += c.events;
    bytes += c.bytes;
  }
  for (const [type, b] of byType) byType.set(type, b / n);
  return { claims: n, eventsPerClaim: events / n, bytesPerClaim: bytes / n, byType };
}

const CLAIMS_PER_ROUND = 50;
const ROUNDS = 21;

/** The kernel alone on the case's prebuilt input: one op = one decision, checked after each sample. */
export function kernelContender(spec: KernelCaseSpec, input: DecideClaimInput, variant?: string): Contender {
  let last: ReturnType<typeof decideClaim> | undefined;
  return {
    name: `kernel ${spec.case}${variant ? ` (${variant})` : ""}`,
    op: () => (last = decideClaim(input)),
    after: () => {
      if (last?.verdict !== spec.verdict || last.reason_code !== spec.reasonCode)
        throw new Error(`kernel bench ${spec.case}: the timed calls decided ${last?.verdict} ${last?.reason_code}`);
    },
  };
}

/** The in-process pipeline: one op = one round of `claims` claims on a fresh pipeline built before the sample, checked after it. */
export function pipelineContender(config: ClaimsConfig, spec: KernelCaseSpec, claims: number): Contender {
  let round: ReturnType<typeof pipelineRound> | undefined;
  return {
    name: `pipeline ${spec.case}`,
    unitsPerOp: claims,
    opsPerSample: 1,
    before: () => void (round = pipelineRound(config, spec, claims)),
    op: () => round!.run(),
    after: async () => checkRound(spec, await round!.result()),
  };
}

const perSecond = (ns: number) => Math.round(1e9 / ns);

/** Runs the kernel benchmark and returns its markdown section. */
export async function run(): Promise<string> {
  const config = loadBenchConfig();
  const auditRows: TableRow[] = [];
  const typeBytes = new Map<string, Map<string, number>>();
  const contenders: Contender[] = [];
  for (const spec of KERNEL_CASES) {
    const input = kernelInput(config, spec);
    const verdict = decideClaim(input);
    if (verdict.verdict !== spec.verdict || verdict.reason_code !== spec.reasonCode) {
      throw new Error(
        `kernel bench ${spec.case}: the kernel said ${verdict.verdict} ${verdict.reason_code}, expected ${spec.verdict} ${spec.reasonCode}`,
      );
    }
    const probe = await runPipelineRound(config, spec, CLAIMS_PER_ROUND);
    checkRound(spec, probe);
    const audit = auditPerClaim(probe.audit);
    auditRows.push({
      decision: spec.label,
      "audit events/claim": Number(audit.eventsPerClaim.toFixed(1)),
      "audit bytes/claim": Math.round(audit.bytesPerClaim),
      "queue messages/claim": Number((probe.messagesHandled / probe.claims).toFixed(1)),
    });
    typeBytes.set(spec.case, audit.byType);
    const { sha256: _injected, ...pure } = input;
    contenders.push(
      kernelContender(spec, input),
      pipelineContender(config, spec, CLAIMS_PER_ROUND),
      kernelContender(spec, pure, "core's pure SHA-256"),
    );
  }

  // Both decisions, kernel and pipeline, take turns round by round, in CPU time.
  const measured = await interleave(contenders, { rounds: ROUNDS, warmupRounds: 5, targetSampleMs: 30 });
  const rows: TableRow[] = KERNEL_CASES.map((spec, i) => {
    const kernel = measured[3 * i]!;
    const pipeline = measured[3 * i + 1]!;
    const pure = measured[3 * i + 2]!;
    const c = compare(pipeline, kernel);
    return {
      decision: spec.label,
      "kernel CPU µs/decision (low)": us(kernel.lowCpuNs),
      "with core's pure SHA-256: µs (low)": us(pure.lowCpuNs),
      "kernel CPU µs (median)": us(kernel.medianCpuNs),
      "kernel decisions/s (low end)": perSecond(kernel.lowCpuNs),
      [`kernel ≥ ${KERNEL_GOAL_PER_SECOND / 1000}k/s`]:
        perSecond(kernel.lowCpuNs) >= KERNEL_GOAL_PER_SECOND ? "met" : "MISSED",
      "pipeline CPU µs/claim (low)": us(pipeline.lowCpuNs),
      "pipeline CPU µs/claim (median)": us(pipeline.medianCpuNs),
      "pipeline claims/s": perSecond(pipeline.lowCpuNs),
      "pipeline ÷ kernel (per-round range)": ratioText(c),
      "kernel share of a claim": `${((100 * kernel.lowCpuNs) / pipeline.lowCpuNs).toFixed(1)}%`,
    };
  });

  const types = [...new Set([...typeBytes.values()].flatMap((m) => [...m.keys()]))];
  const typeRows: TableRow[] = types.map((t) => {
    const row: TableRow = { "event type": t };
    for (const spec of KERNEL_CASES)
      row[`${spec.case} bytes/claim`] = Math.round(typeBytes.get(spec.case)?.get(t) ?? 0);
    return row;
  });

  return [
    "## Claims kernel beside the in-process pipeline (bench/kernel.bench.ts)",
    "",
    "Definitions:",
    "- **kernel**: `decideClaim(input)` alone on a prebuilt input — the input the kernel service builds: the proposal from the rules model's Decision Maker output (REFUND of the claimed amount, confidence 0.9) as parsed from a queue message, contracts and registry snapshot from `scenarios/config.yaml`, the order, no ledger entry, and node:crypto's SHA-256 as the shell injects it (functions/composition/compose.ts); beside it the same input with core's pure SHA-256 (the default, as replay and tests run it).",
    `- **pipeline**: \`createInProcessPipeline\` with the rules model over in-memory ports; one op submits ${CLAIMS_PER_ROUND} structured claims (\`{ claim }\`, each on its own copy of the template order so the ledger never refuses) and \`drain()\`s every queue: intake, crew orchestrator with snapshot + outbox, two worker steps, kernel service, refund execution (ACCEPT), verdict publication, audit. The pipeline is built before each sample and its claims and audit are checked after it, outside the timing.`,
    `- **Timing**: the six contenders take turns, ${ROUNDS} rounds after 5 warm-up rounds, the order rotating each round; each sample (~30 ms of kernel calls, or one pipeline round) is timed in CPU time of the process (\`process.cpuUsage\`); **low** = the lowest round, the quoted figure. Decisions/s and claims/s = 1 s ÷ that CPU time (one core).`,
    "- **pipeline ÷ kernel** = pipeline CPU per claim ÷ kernel CPU per decision, from the low ends; in brackets the per-round range.",
    "- **audit bytes/claim** = UTF-8 bytes of `JSON.stringify(event)` summed over the audit events carrying the claim's id, averaged over a round.",
    "",
    "### Decisions per second",
    "",
    formatTable(rows),
    "",
    "### Audit written per claim",
    "",
    formatTable(auditRows),
    "",
    "### Audit bytes per claim by event type",
    "",
    formatTable(typeRows),
  ].join("\n");
}
