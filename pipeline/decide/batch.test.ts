// The scheduled batch's policy, without ports: the mode, the live claims' ids from the file's content, the
// simulation's start event and bodies, and the run's result from intake's answers.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseScenarios, scenarioKeys } from "../../core/history/scenarios.ts";
import { batchModeFrom, batchRunResult, liveRun, namedOrderIds, policyRunConfig, simulationRun } from "./batch.ts";
import { config, NOW, order } from "./decide.test-kit.ts";

const FILE = `scenarios:
  - id: one
    label: "a real claim"
    context:
      claim: { order_id: ord_008, amount_eur: 20, category: home, reason: "The kettle leaks" }
    expected: ACCEPT
  - id: two
    label: "another"
    context:
      claim_text: "Order ord_007, 80 EUR, the jacket tore on {{date:-1d}}"
    expected: ACCEPT
  - id: three
    label: "the same order again"
    context:
      claim: { order_id: ord_008, amount_eur: 5, category: home, reason: "The lid is loose" }
    expected: ACCEPT
`;
const scenarios = parseScenarios(FILE, "claims.yaml");

describe("batchModeFrom", () => {
  it.each([
    [{}, "simulation"],
    [{ CLAIMS_BATCH_MODE: "" }, "simulation"],
    [{ CLAIMS_BATCH_MODE: "simulation" }, "simulation"],
    [{ CLAIMS_BATCH_MODE: " live " }, "live"],
  ])("reads %j as %s", (env, mode) => {
    expect(batchModeFrom(env)).toEqual({ ok: true, mode });
  });

  it("refuses any other mode, naming it", () => {
    expect(batchModeFrom({ CLAIMS_BATCH_MODE: "real" })).toEqual({
      ok: false,
      message: 'CLAIMS_BATCH_MODE="real" is invalid: expected simulation or live',
    });
  });
});

describe("a live run", () => {
  it("submits every row as a real claim, dates resolved, under ids from the file's content and the row", () => {
    const run = liveRun(scenarios, NOW);
    expect(run.submissions.map((s) => s.body)).toEqual([
      { ...scenarios[0]!.input, label: "one — a real claim" },
      { claim_text: "Order ord_007, 80 EUR, the jacket tore on 31 May 2026", label: "two — another" },
      { ...scenarios[2]!.input, label: "three — the same order again" },
    ]);
    const fileSha = createHash("sha256").update(JSON.stringify(scenarios), "utf8").digest("hex");
    const digest = createHash("sha256").update(`live:${fileSha}:one`, "utf8").digest("hex");
    expect(run.submissions[0]?.keys).toEqual({
      claimId: `clm_${digest.slice(0, 20)}`,
      idempotencyKey: `live:${fileSha.slice(0, 16)}:one`,
    });
  });

  it("keeps its ids on a re-run of the same file, another day, and changes them with the file", () => {
    const keys = (s: typeof scenarios, now: number) => liveRun(s, now).submissions.map((x) => x.keys.claimId);
    expect(keys(scenarios, NOW + 86_400_000)).toEqual(keys(scenarios, NOW));
    expect(new Set(keys(scenarios, NOW)).size).toBe(3);
    expect(keys(scenarios.slice(0, 2), NOW)).not.toEqual(keys(scenarios, NOW).slice(0, 2));
  });
});

describe("a simulation run", () => {
  const files = { config: "policy/prod.yaml", scenarios: "claims.yaml" };
  const run = simulationRun({ scenarios, nowMs: NOW, config, files, stack: "aws", env: { LLM_MODEL: "gemma3:4b" } });

  it("records its start with the configuration, the files and the model the environment names", () => {
    expect(run.simulationId).toBe(`${config.simulationId}_20260601T120000Z`);
    expect(run.start).toMatchObject({
      event_type: "SIMULATION_START",
      created_at: new Date(NOW).toISOString(),
      details: {
        simulation_id: run.simulationId,
        config_file: "policy/prod.yaml",
        scenarios_file: "claims.yaml",
        stack: "aws",
        llm: { provider: config.llm.provider, model: "gemma3:4b" },
      },
    });
  });

  it("submits every row under the run's simulation_id, with the keys `claims batch` uses", () => {
    expect(run.submissions.map((s) => s.body.simulation_id)).toEqual([
      run.simulationId,
      run.simulationId,
      run.simulationId,
    ]);
    for (const s of run.submissions) expect(s.keys).toEqual(scenarioKeys(run.simulationId, s.id, s.body));
  });
});

describe("the deployed policy's run", () => {
  it("records the orders the structured rows name, each once, as the context store has them", () => {
    expect(namedOrderIds(scenarios)).toEqual(["ord_008"]);
    const policy = {
      source: "policy/prod.yaml",
      run_id: "run",
      contract_format: "claims-crew" as const,
      llm: config.llm,
      agent: config.agent,
    };
    expect(policyRunConfig(policy, [order("ord_008"), undefined])).toEqual({
      file: "policy/prod.yaml",
      llm: config.llm,
      simulationId: "run",
      agent: config.agent,
      orders: [order("ord_008")],
      reading: { format: "claims-crew", mappings: [], ignored: [] },
    });
  });
});

describe("batchRunResult", () => {
  it("lists the submitted claims and the refused rows in order, with the simulation id of a simulation", () => {
    const answers = [
      { id: "one", answer: { ok: true as const, claimId: "clm_a" } },
      { id: "two", answer: { ok: false as const, code: "INVALID_INPUT" } },
      { id: "three", answer: { ok: true as const, claimId: "clm_c" } },
    ];
    expect(batchRunResult(liveRun(scenarios, NOW), answers)).toEqual({
      mode: "live",
      submitted: ["clm_a", "clm_c"],
      refused: [{ id: "two", code: "INVALID_INPUT" }],
    });
    const files = { config: "c", scenarios: "s" };
    const sim = simulationRun({ scenarios, nowMs: NOW, config, files, stack: "local", env: {} });
    expect(batchRunResult(sim, answers)).toMatchObject({ mode: "simulation", simulation_id: sim.simulationId });
  });
});
