// Ctrl-C during a batch, as a terminal or systemd sends it: SIGINT to the `claims batch` process alone, while a
// claim waits for a model that never answers. The run ends with the partial audit (no SIMULATION_END), the report
// marked "Run incomplete", "Interrupted after 1/3" with the bus events it appended, and exit 130.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { Server } from "node:http";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = new URL("..", import.meta.url).pathname;

const SCENARIOS = `scenarios:
  - id: L
    label: "Unknown order (decided without the model)"
    context:
      claim: { order_id: ord_999, amount_eur: 40.0, category: home, reason: "Lamp flickers" }
    expected: { verdict: REJECT, reason_code: ORDER_NOT_FOUND }
  - id: A
    label: "Waits for the model"
    context:
      claim: { order_id: ord_001, amount_eur: 299.99, category: electronics, reason: "Screen is dead" }
    expected: { verdict: ACCEPT, reason_code: VALIDATION_PASSED }
  - id: B
    label: "Never starts"
    context:
      claim: { order_id: ord_002, amount_eur: 50.0, category: electronics, reason: "Cable frayed" }
    expected: ESCALATE
`;

/** An OpenAI-compatible endpoint whose model list answers and whose completions never do; resolves on the first. */
let server: Server;
let asked: Promise<void>;
beforeAll(async () => {
  let firstCall!: () => void;
  asked = new Promise((done) => (firstCall = done));
  server = createServer((req, res) => {
    if (req.method === "GET" && req.url?.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "silent", object: "model" }] }));
      return;
    }
    firstCall(); // a completion: held open until the test ends
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe("claims batch interrupted", () => {
  it("writes the partial audit and report, says what ran and what it appended, and exits 130", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "claims-interrupt-"));
    const scenarios = join(dataDir, "scenarios.yaml");
    writeFileSync(scenarios, SCENARIOS);
    const address = server.address() as { port: number };
    const child = spawn(process.execPath, [join(root, "bin/claims.mjs"), "batch", scenarios, "--data-dir", dataDir], {
      cwd: root,
      env: {
        ...process.env,
        NO_COLOR: "1",
        LLM_PROVIDER: "openai",
        LLM_BASE_URL: `http://127.0.0.1:${address.port}/v1`,
        LLM_MODEL: "silent",
        LLM_API_KEY: "test",
        // The stack stops once the call in flight times out.
        LLM_TIMEOUT_MS: "1000",
      },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const exited = new Promise<{ code: number | null; signal: string | null }>((done) =>
      child.once("exit", (code, signal) => done({ code, signal })),
    );
    // Row A's claim is with the model: the run is waiting, row B has not started.
    await asked;
    process.kill(child.pid!, "SIGINT");
    expect(await exited, `${stdout}\n${stderr}`).toEqual({ code: 130, signal: null });

    expect(stdout).toContain("SIGINT: interrupted. No further claim starts");
    expect(stdout).toMatch(/\[1\/3\] L /);
    expect(stdout).not.toMatch(/\[2\/3\]/);
    const [runId] = readdirSync(join(dataDir, "runs")).filter((d) => d !== "LATEST");
    const audit = readFileSync(join(dataDir, "runs", runId!, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event_type: string; details: { claim_id?: string } });
    expect(audit.map((e) => e.event_type)).toContain("SIMULATION_START");
    expect(audit.map((e) => e.event_type)).not.toContain("SIMULATION_END");
    // A's claim was received before the interruption: its events so far are in the partial audit.
    expect(new Set(audit.flatMap((e) => (e.details.claim_id ? [e.details.claim_id] : []))).size).toBe(2);
    const report = readFileSync(join(dataDir, "runs", runId!, "report.html"), "utf8");
    expect(report).toContain('data-banner="incomplete"');
    expect(report).toContain("Run incomplete");
    const journal = join(dataDir, "events.jsonl");
    const appended = existsSync(journal) ? readFileSync(journal, "utf8").trim().split("\n").length : 0;
    expect(appended).toBeGreaterThan(0);
    expect(stdout).toContain(
      `Interrupted after 1/3: 2 not run. The audit of what ran is in ${join(dataDir, "runs", runId!, "audit.jsonl")}, the report (marked "Run incomplete") in ${join(dataDir, "runs", runId!, "report.html")}; ${appended} bus event(s) of this run were appended to ${journal}.`,
    );
    expect(stdout).toContain("1/1 scenarios match");
  }, 120_000);
});
