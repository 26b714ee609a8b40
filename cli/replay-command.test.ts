// `claims replay` as a user runs it (a child process of bin/claims.mjs) on a recorded run: exit 0
// and "Identical" for an untouched claim, 3 and INCOMPLETE naming the missing event, 1 and DIFFERENT
// for a changed verdict, and --json prints the result object.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../core/claims/config.ts";
import { parseScenarios, scenarioBody } from "../core/claims/scenarios.ts";
import { simulationStartEvent } from "../core/claims/simulation.ts";
import { createRulesModel } from "../core/claims/rules-model.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import { saveRunAudit } from "./run-store.ts";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const NOW = Date.parse("2026-06-01T12:00:00Z");
const SIM = "sim_replay_cli";

async function claims(args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(root, "bin/claims.mjs"), ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1" },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** Scenarios A, B and C recorded in one run; B loses its KERNEL_VERDICT and C's verdict is changed. */
async function recordRun(): Promise<string> {
  const config = parseConfig(readFileSync(join(root, "scenarios/config.yaml"), "utf8"), "config.yaml", NOW);
  const scenarios = parseScenarios(
    readFileSync(join(root, "scenarios/scenarios.yaml"), "utf8"),
    "scenarios.yaml",
  ).filter((s) => ["A", "B", "C"].includes(s.id));
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
  });
  await p.audit.append(
    simulationStartEvent({
      simulationId: SIM,
      nowMs: NOW,
      config,
      scenarios,
      files: { config: "config.yaml", scenarios: "scenarios.yaml" },
      stack: "in-process",
      llm: { provider: "rules", model: "rules-v1" },
    }),
  );
  for (const s of scenarios) await p.decide(scenarioBody(s, SIM, NOW), { claimId: `clm_cli_${s.id}` });
  const events = p
    .auditEvents()
    .filter((e) => !(e.details.claim_id === "clm_cli_B" && e.event_type === "KERNEL_VERDICT"))
    .map((e) =>
      e.details.claim_id === "clm_cli_C" && e.event_type === "KERNEL_VERDICT"
        ? { ...e, details: { ...e.details, verdict: "ACCEPT" } }
        : e,
    );
  const dataDir = mkdtempSync(join(tmpdir(), "claims-replay-"));
  saveRunAudit(dataDir, SIM, events);
  return dataDir;
}

describe("claims replay", () => {
  it("exits 0 when identical, 3 when an event is missing, 1 when a value differs, and prints the result with --json", async () => {
    const dataDir = await recordRun();
    const [ok, missing, changed] = await Promise.all([
      claims(["replay", "clm_cli_A", "--data-dir", dataDir]),
      claims(["replay", "clm_cli_B", "--data-dir", dataDir]),
      claims(["replay", "clm_cli_C", "--json", "--data-dir", dataDir]),
    ]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/Identical: ACCEPT VALIDATION_PASSED\n$/);
    expect(missing.code, missing.stdout + missing.stderr).toBe(3);
    expect(missing.stdout).toMatch(
      /\? kernel +KERNEL_VERDICT is missing: the 'decided' stage records it \(INCOMPLETE\)/,
    );
    expect(missing.stdout).toMatch(
      /INCOMPLETE: the recorded decision cannot be replayed in full \(kernel: KERNEL_VERDICT is missing/,
    );
    expect(changed.code, changed.stdout + changed.stderr).toBe(1);
    const result = JSON.parse(changed.stdout) as {
      status: string;
      claimId: string;
      steps: { step: string; status: string; detail: string }[];
    };
    expect(result).toMatchObject({ claimId: "clm_cli_C", status: "DIFFERENT" });
    expect(result.steps.filter((s) => s.status !== "IDENTICAL").map((s) => `${s.step}: ${s.detail}`)).toEqual([
      expect.stringMatching(/^kernel: KERNEL_VERDICT #\d+: the recorded value differs from the replayed one$/),
    ]);
  });
});
