import { execFile } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { createDynamoPorts, createTable } from "../adapters/aws/index.ts";
import { localClientConfig, startEmulators } from "../local/emulators.ts";

// The CLI as a user runs it: a child process of bin/claims.mjs, with a throwaway data directory.
const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "bin/claims.mjs");

async function claims(args: string[], dataDir?: string, env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args, ...(dataDir ? ["--data-dir", dataDir] : [])], { cwd: root, env: { ...process.env, NO_COLOR: "1", LLM_PROVIDER: "rules", ...env }, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe("claims batch --json (in-process)", () => {
  it("prints the verdict contract on stdout, matches every scenario, writes the audit and report, and replays a claim", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const { code, stdout, stderr } = await claims(["batch", "--json", "--now", "2026-06-01T12:00:00Z", "--in-process"], dataDir);
    expect(code, stderr).toBe(0);
    const rows = JSON.parse(stdout) as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThanOrEqual(19);
    for (const row of rows) {
      expect(Object.keys(row).sort()).toEqual(["amount_eur", "claim_id", "executed", "expected", "id", "label", "order_id", "reason", "reason_code", "verdict"]);
      expect(row.verdict).toBe(row.expected);
    }
    expect(rows.find((r) => r.id === "A")).toMatchObject({ verdict: "ACCEPT", executed: true, order_id: "ord_001", amount_eur: 299.99 });
    expect(stderr).toContain("scenarios match");
    const run = "claims_batch_001_20260601T120000Z";
    expect(readFileSync(join(dataDir, "runs", run, "report.html"), "utf8")).toContain(String(rows[0]!.claim_id));
    const replay = await claims(["replay", String(rows.find((r) => r.id === "E")!.claim_id)], dataDir);
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    expect(replay.stdout).toMatch(/Identical: ACCEPT VALIDATION_PASSED/);
  });

  it("exits 1 when a verdict does not match the expected one", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const scenarios = join(dataDir, "s.yaml");
    writeFileSync(scenarios, 'scenarios:\n  - id: X\n    label: "wrong on purpose"\n    context:\n      claim: { order_id: ord_001, amount_eur: 10, category: electronics, reason: "x" }\n    expected: REJECT\n');
    const { code, stdout } = await claims(["batch", scenarios, "--json", "--now", "2026-06-01T12:00:00Z", "--in-process"], dataDir);
    expect(code).toBe(1);
    expect(JSON.parse(stdout)[0]).toMatchObject({ id: "X", verdict: "ACCEPT", expected: "REJECT" });
  });

  it("refuses a scenario file with a mistake, naming file, row and field, before running anything", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const scenarios = join(dataDir, "bad.yaml");
    writeFileSync(scenarios, 'scenarios:\n  - id: X\n    label: "bad"\n    context:\n      claim: { order_id: ord_001, amount_eur: "ten", category: electronics }\n    expected: ACCEPT\n');
    const { code, stderr, stdout } = await claims(["batch", scenarios, "--now", "2026-06-01T12:00:00Z", "--in-process"], dataDir);
    expect(code).toBe(2);
    expect(stderr).toMatch(/bad\.yaml:5 row 'X' scenarios\[0\]\.context/);
    expect(stdout).toBe("");
  });
});

describe("claims batch against a model that is down", () => {
  it("says so before the first claim, ends every claim in NEEDS_REVIEW LLM_UNREACHABLE, prints the summary, writes the report and exits 1, without a stack trace", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "claims-cli-"));
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const scenarios = join(dataDir, "s.yaml");
    writeFileSync(scenarios, [
      "scenarios:",
      "  - id: S",
      '    label: "structured"',
      "    context:",
      '      claim: { order_id: ord_001, amount_eur: 299.99, category: electronics, reason: "dead" }',
      "    expected: ACCEPT",
      "  - id: T",
      '    label: "free text"',
      "    context:",
      '      claim_text: "I bought order ord_006 for 299.99 EUR, the screen is dead"',
      "    expected: ACCEPT",
      "",
    ].join("\n"));
    // The seed's Ollama URL without /v1, as a new user sets it.
    const { code, stdout, stderr } = await claims(["batch", scenarios, "--now", "2026-06-01T12:00:00Z"], dataDir, { LLM_PROVIDER: "openai", OLLAMA_BASE_URL: `http://127.0.0.1:${port}` });
    const url = `http://127.0.0.1:${port}/v1`;
    expect(code, stderr).toBe(1);
    expect(stdout).toContain(`LLM check : FAILED: LLM endpoint ${url} (model gemma3:4b) is unreachable: ECONNREFUSED`);
    expect(stdout.match(/Verdict {2}: NEEDS_REVIEW \(LLM_UNREACHABLE\)/g)).toHaveLength(2);
    expect(stdout).toMatch(/0\/2 scenarios match/);
    expect(stdout).toMatch(/The LLM endpoint check failed: .*start the model server and run again/);
    expect(readFileSync(join(dataDir, "runs", "claims_batch_001_20260601T120000Z", "report.html"), "utf8")).toContain("LLM_UNREACHABLE");
    expect(`${stdout}${stderr}`).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(stderr).toBe("");
  });
});

describe("claims load-orders", () => {
  it("writes the config's orders into a table the kernel reads, and names a missing table", async () => {
    const emulators = await startEmulators();
    const client = new DynamoDBClient(localClientConfig(emulators.dynamodbEndpoint));
    try {
      await createTable(client, "claims-orders-test");
      const ok = await claims(["load-orders", "--table", "claims-orders-test", "--endpoint", emulators.dynamodbEndpoint]);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/Loaded \d+ orders/);
      const { orders } = createDynamoPorts({ client: DynamoDBDocumentClient.from(client), tableName: "claims-orders-test" });
      expect(await orders.getOrder("ord_002")).toMatchObject({ order_id: "ord_002", amount: 1200, category: "electronics" });
      const missing = await claims(["load-orders", "--table", "no-such-table", "--endpoint", emulators.dynamodbEndpoint]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/table no-such-table not found/);
    } finally {
      client.destroy();
      await emulators.stop();
    }
  });
});
