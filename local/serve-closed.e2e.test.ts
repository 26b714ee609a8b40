// `claims serve` as an operator leaves it running: its data directory owner-only (an open one tightened),
// this run's credentials in local-credentials.json (0600) that open its table to an operator's tool, and
// `/health` (GET and HEAD) saying degraded while the configured model does not answer.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe } from "./serve-child.test-kit.ts";
import type { ServeChild } from "./serve-child.test-kit.ts";

let root: string;
let dataDir: string;
let serve: ServeChild;

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Every path under `dir` with its permission bits. */
function modes(dir: string): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    out.push([path, statSync(path).mode & 0o777]);
    if (entry.isDirectory()) out.push(...modes(path));
  }
  return out;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "claims-serve-closed-"));
  dataDir = join(root, "data");
  // A data directory left open by an earlier version, with a file readable by everyone.
  mkdirSync(dataDir, { mode: 0o755 });
  chmodSync(dataDir, 0o755);
  writeFileSync(join(dataDir, "events.jsonl"), "");
  chmodSync(join(dataDir, "events.jsonl"), 0o644);
  serve = await startServe({
    dataDir,
    env: { LLM_PROVIDER: "openai", LLM_BASE_URL: `http://127.0.0.1:${await closedPort()}/v1`, LLM_MODEL: "down" },
    startLimitMs: 120_000,
  });
}, 180_000);

afterAll(async () => {
  await serve?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe("claims serve with the model down", () => {
  it("starts anyway and says degraded on GET and HEAD /health", async () => {
    expect(serve.stdout()).toMatch(/serving degraded/);
    const get = await fetch(`${serve.url}/health`);
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({ status: "degraded", llm: "unreachable" });
    const head = await fetch(`${serve.url}/health`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("keeps its data directory owner-only: 0700, every file 0600, the open one tightened", () => {
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const open = modes(dataDir).filter(([, mode]) => (mode & 0o077) !== 0);
    expect(open).toEqual([]);
  });

  it("writes this run's credentials, which open its table to an operator's tool", async () => {
    const credentials = JSON.parse(readFileSync(join(dataDir, "local-credentials.json"), "utf8"));
    const client = new DynamoDBClient({
      endpoint: credentials.endpoints.dynamodb,
      region: credentials.region,
      credentials,
      maxAttempts: 1,
    });
    const stranger = new DynamoDBClient({
      endpoint: credentials.endpoints.dynamodb,
      region: credentials.region,
      credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: "not-the-secret" },
      maxAttempts: 1,
    });
    try {
      expect((await client.send(new ListTablesCommand({}))).TableNames).toContain("claims-local");
      await expect(stranger.send(new ListTablesCommand({}))).rejects.toThrow(/signature/i);
    } finally {
      client.destroy();
      stranger.destroy();
    }
  });
});
