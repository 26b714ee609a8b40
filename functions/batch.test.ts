// The scheduled batch on the local stack: a simulation by default (every claim under the run's simulation_id,
// SIMULATION_START recording the deployed policy and the context store's orders), real claims only in live
// mode (no simulation_id, ids from the file's content so a re-run submits nothing twice), and a clear refusal
// of any other mode.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIG_PATH, TEST_NOW, recordingLogger, startTestStack } from "../local/testing/stack-fixture.ts";
import { createBatchHandler } from "./batch.ts";
import { loadConfig } from "./composition/config-file.ts";
import { NO_METRICS } from "./observability/metrics.ts";
import { policyFromConfig } from "../app/policy-format.ts";

type Stack = Awaited<ReturnType<typeof startTestStack>>;
let stack: Stack;
let dir: string;

const CLAIMS_FILE = `scenarios:
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
`;

beforeAll(async () => {
  stack = await startTestStack();
  dir = mkdtempSync(join(tmpdir(), "batch-"));
  writeFileSync(join(dir, "claims.yaml"), CLAIMS_FILE);
  const policy = policyFromConfig(loadConfig(CONFIG_PATH, TEST_NOW), readFileSync(CONFIG_PATH, "utf8"), {
    source: "policy/prod.yaml",
    demo: false,
  });
  writeFileSync(join(dir, "claims-policy.json"), JSON.stringify(policy));
});
afterAll(() => stack?.stop());

const batch = (env: Record<string, string>) =>
  createBatchHandler(() => stack.deps, {
    logger: recordingLogger().logger,
    metrics: NO_METRICS,
    env: { LAMBDA_TASK_ROOT: dir, CLAIMS_SCENARIOS_PATH: "claims.yaml", ...env },
  });

describe("the scheduled batch", () => {
  it("runs as a simulation by default: the deployed policy and the table's orders in SIMULATION_START, every claim under its simulation_id", async () => {
    const run = await batch({})();
    expect(run).toMatchObject({ mode: "simulation", refused: [] });
    expect(run.simulation_id).toMatch(/^claims_batch_001_\d{8}T\d{6}Z$/);
    expect(run.submitted).toHaveLength(2);
    for (const id of run.submitted)
      expect((await stack.deps.claims.getClaim(id))?.simulation_id).toBe(run.simulation_id);
    const [start] = (await stack.deps.audit.bySimulation(run.simulation_id!)).filter(
      (e) => e.event_type === "SIMULATION_START",
    );
    expect(start?.details).toMatchObject({
      config_file: "policy/prod.yaml",
      scenarios_file: join(dir, "claims.yaml"),
      agent: { agent_id: "claims_agent_v1" },
    });
    expect((start?.details.orders as { order_id: string }[]).map((o) => o.order_id)).toEqual(["ord_008"]);
  });

  it("submits real claims only in live mode, and a second run of the same file submits nothing new", async () => {
    const first = await batch({ CLAIMS_BATCH_MODE: "live" })();
    expect(first).toEqual({
      mode: "live",
      submitted: [expect.stringMatching(/^clm_/), expect.stringMatching(/^clm_/)],
      refused: [],
    });
    for (const id of first.submitted) {
      const record = await stack.deps.claims.getClaim(id);
      expect(record?.simulation_id).toBeUndefined();
      expect(record?.root_dfid).toBe(`dfid_${id}`);
    }
    await stack.drained();
    const again = await batch({ CLAIMS_BATCH_MODE: "live" })();
    expect(again.submitted).toEqual(first.submitted);
    const ledger = await stack.deps.ledger.get("ord_008");
    expect(Object.keys(ledger?.claims ?? {})).toEqual([first.submitted[0]]);
  });

  it("refuses a mode it does not know, naming it", async () => {
    await expect(batch({ CLAIMS_BATCH_MODE: "real" })()).rejects.toThrow(
      /CLAIMS_BATCH_MODE="real" is invalid: expected simulation or live/,
    );
  });
});
