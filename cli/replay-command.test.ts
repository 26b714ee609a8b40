// `claims replay` on a recorded run — the INCOMPLETE one as a user runs it (a child process of bin/claims.mjs: exit
// 3 reaches the shell), the others through the same program in the test's process (cli/cli-in-process.test-kit.ts): exit 0
// and "Identical" for an untouched claim, 3 and INCOMPLETE naming the missing event, 1 and DIFFERENT
// for a changed verdict, and --json prints the result object.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../core/claim/config.ts";
import { parseScenarios, scenarioBody } from "../core/history/scenarios.ts";
import { simulationStartEvent } from "../core/history/simulation.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import { writeRunAudit } from "./run-store.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { decideReview } from "../pipeline/review.ts";
import type { AuditEvent } from "../core/integrity/index.ts";
import { claimsInProcess } from "./cli-in-process.test-kit.ts";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const NOW = Date.parse("2026-06-01T12:00:00Z");
const SIM = "sim_replay_cli";

/** `claims ARGS` in this process. */
const claims = (args: string[]) => claimsInProcess(args);

/** `claims ARGS` as a user runs it: a child process of bin/claims.mjs. */
async function claimsBinary(args: string[]) {
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

/** An in-process pipeline on the bundled config (rules model, clock at NOW) whose run SIM has started with `scenarios`. */
async function startedRun(scenarios: ReturnType<typeof parseScenarios>) {
  const config = parseConfig(readFileSync(join(root, "scenarios/config.yaml"), "utf8"), "config.yaml", NOW);
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
  return p;
}

/** Scenarios A, B and C recorded in one run; B loses its KERNEL_VERDICT and C's verdict is changed. */
async function recordRun(): Promise<string> {
  const scenarios = parseScenarios(
    readFileSync(join(root, "scenarios/scenarios.yaml"), "utf8"),
    "scenarios.yaml",
  ).filter((s) => ["A", "B", "C"].includes(s.id));
  const p = await startedRun(scenarios);
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
  writeRunAudit(dataDir, SIM, events);
  return dataDir;
}

describe("claims replay", () => {
  it("exits 0 when identical, 3 when an event is missing, 1 when a value differs, and prints the result with --json", async () => {
    const dataDir = await recordRun();
    const [ok, missing, changed] = await Promise.all([
      claims(["replay", "clm_cli_A", "--data-dir", dataDir]),
      claimsBinary(["replay", "clm_cli_B", "--data-dir", dataDir]),
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

/** The events of a run where a claim nobody could read went to review and a person RESUBMITted it corrected. */
async function recordResubmission(): Promise<{ events: AuditEvent[]; childId: string }> {
  const p = await startedRun([]);
  await p.decide(
    { claim_text: "Hi, the sofa I bought last month is falling apart, I paid 300 EUR.", simulation_id: SIM },
    { claimId: "clm_cli_R" },
  );
  const decided = await decideReview(
    "clm_cli_R",
    { decision: "RESUBMIT", claim: { order_id: "ord_006", amount_eur: 100, category: "electronics", reason: "fixed" } },
    p.deps,
  );
  const childId = decided.ok ? decided.body.resubmitted_claim_id : undefined;
  if (!childId) throw new Error(`the RESUBMIT was refused: ${JSON.stringify(decided)}`);
  await p.drain();
  return { events: p.auditEvents(), childId };
}

/** The run saved in a data directory of its own, with `childId`'s events (of the kinds `tamper` picks) naming another parent. */
function saveWithParentRenamed(events: AuditEvent[], childId: string, tamper: (e: AuditEvent) => boolean): string {
  const dataDir = mkdtempSync(join(tmpdir(), "claims-replay-"));
  const renamed = events.map((e) =>
    e.details.claim_id === childId && tamper(e)
      ? (JSON.parse(JSON.stringify(e).replaceAll("clm_cli_R", "clm_cli_OTHER")) as AuditEvent)
      : e,
  );
  writeRunAudit(dataDir, SIM, renamed);
  return dataDir;
}

describe("replay of a resubmitted claim against its stored record", () => {
  it("is DIFFERENT when the stored claim record names no parent, or another, than the audit does", async () => {
    const { events, childId } = await recordResubmission();
    const mine = events.filter((e) => e.details.claim_id === childId || e.event_type === "SIMULATION_START");
    const status = (parent: string | undefined) =>
      replayClaim(childId, mine, { claimRecord: { parent_claim_id: parent } }).status;
    expect(status("clm_cli_R")).toBe("IDENTICAL");
    expect(status(undefined)).toBe("DIFFERENT");
    expect(status("clm_cli_OTHER")).toBe("DIFFERENT");
  });
});

describe("replay of a resubmitted claim recorded before intake recorded its parent", () => {
  it("checks the kernel's parent against the claim's own id: identical when it is the parent, DIFFERENT when not", async () => {
    const { events, childId } = await recordResubmission();
    const mine = events.filter((e) => e.details.claim_id === childId || e.event_type === "SIMULATION_START");
    // An older audit: CLAIM_RECEIVED carries no parent_claim_id.
    const older = mine.map((e) => {
      if (e.event_type !== "CLAIM_RECEIVED") return e;
      const { parent_claim_id: _dropped, ...details } = e.details;
      return { ...e, details } as AuditEvent;
    });
    expect(older.find((e) => e.event_type === "CLAIM_RECEIVED")?.details).not.toHaveProperty("parent_claim_id");
    expect(replayClaim(childId, older).status).toBe("IDENTICAL");
    const renamed = older.map((e) =>
      e.event_type === "CLAIM_RECEIVED"
        ? e
        : (JSON.parse(JSON.stringify(e).replaceAll("clm_cli_R", "clm_cli_OTHER")) as AuditEvent),
    );
    const result = replayClaim(childId, renamed);
    expect(result.status).toBe("DIFFERENT");
    expect(result.steps.map((s) => s.detail)).toContainEqual(
      expect.stringMatching(/parentClaimId clm_cli_OTHER: intake recorded no parent/),
    );
  });
});

describe("claims replay of a resubmitted claim", () => {
  it("is identical untouched, and DIFFERENT when its events name another parent claim than its own", async () => {
    const { events, childId } = await recordResubmission();
    const [ok, kernelOnly, all] = await Promise.all([
      claims(["replay", childId, "--json", "--data-dir", saveWithParentRenamed(events, childId, () => false)]),
      // The kernel's inputs and everything after them name another parent; intake's record of the claim does not.
      claims([
        "replay",
        childId,
        "--json",
        "--data-dir",
        saveWithParentRenamed(events, childId, (e) => e.event_type !== "CLAIM_RECEIVED"),
      ]),
      // Every event names another parent: the claim's own id says which review created it.
      claims(["replay", childId, "--json", "--data-dir", saveWithParentRenamed(events, childId, () => true)]),
    ]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      status: "IDENTICAL",
      outcome: "ESCALATE",
      reasonCode: "RESUBMITTED_CLAIM",
    });
    const problems = (out: string) =>
      (JSON.parse(out) as { steps: { step: string; status: string; detail: string }[] }).steps
        .filter((s) => s.status !== "IDENTICAL")
        .map((s) => `${s.step}: ${s.detail}`);
    expect(kernelOnly.code, kernelOnly.stdout + kernelOnly.stderr).toBe(1);
    expect(problems(kernelOnly.stdout)).toContainEqual(
      expect.stringMatching(
        /^kernel: PROPOSAL_SUBMITTED #\d+ parentClaimId \(the one intake recorded\): the recorded value differs/,
      ),
    );
    expect(all.code, all.stdout + all.stderr).toBe(1);
    expect(problems(all.stdout)).toContainEqual(
      expect.stringMatching(
        /^intake: CLAIM_RECEIVED #1 names parent claim clm_cli_OTHER, but clm_\w+ is not the claim a RESUBMIT/,
      ),
    );
  });
});
