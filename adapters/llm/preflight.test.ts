import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { LlmPort, LlmRequest, LlmResult } from "../../core/llm/port.ts";
import type { LlmConfig } from "./config.ts";
import { guardWithPreflight, preflightLlm, type PreflightResult } from "./preflight.ts";
import { closedPort, startScriptedLlmServer, type ScriptedLlmServer } from "./scripted-server.ts";

const config = (baseURL: string, over: Partial<Extract<LlmConfig, { provider: "openai" }>> = {}): LlmConfig => ({
  provider: "openai",
  baseURL,
  model: "gemma3:4b",
  apiKey: "sk-preflight-secret",
  timeoutMs: 30_000,
  maxRetries: 2,
  temperature: 0,
  ...over,
});

let scripted: ScriptedLlmServer | undefined;
let raw: Server | undefined;
afterEach(async () => {
  await scripted?.close();
  scripted = undefined;
  if (raw) {
    raw.closeAllConnections();
    await new Promise<void>((resolve) => raw!.close(() => resolve()));
  }
  raw = undefined;
});

/** A server that accepts connections and never answers. */
async function silentServer(): Promise<string> {
  raw = createServer(() => undefined);
  await new Promise<void>((resolve) => raw!.listen(0, "127.0.0.1", () => resolve()));
  return `http://127.0.0.1:${(raw.address() as AddressInfo).port}/v1`;
}

describe("preflightLlm", () => {
  it("names URL, model and errno when nothing listens", async () => {
    const port = await closedPort();
    const r = await preflightLlm(config(`http://127.0.0.1:${port}/v1`));
    expect(r).toMatchObject({
      ok: false,
      code: "LLM_UNREACHABLE",
      message: `LLM endpoint http://127.0.0.1:${port}/v1 (model gemma3:4b) is unreachable: ECONNREFUSED`,
    });
  });

  it("gives up on an endpoint that does not answer within its budget", async () => {
    const url = await silentServer();
    const r = await preflightLlm(config(url), { timeoutMs: 100 });
    expect(r).toMatchObject({
      ok: false,
      code: "LLM_UNREACHABLE",
      message: `LLM endpoint ${url} (model gemma3:4b) did not answer within 100 ms`,
    });
  });

  it("never waits longer than the configured LLM timeout", async () => {
    const url = await silentServer();
    const r = await preflightLlm(config(url, { timeoutMs: 50 }), { timeoutMs: 60_000 });
    expect(!r.ok && r.message).toMatch(/within 50 ms/);
  });

  it("reports refused credentials as LLM_AUTH_FAILED without showing the key", async () => {
    scripted = await startScriptedLlmServer([], { models: { status: 401 } });
    const r = await preflightLlm(config(scripted.baseURL));
    expect(r).toMatchObject({ ok: false, code: "LLM_AUTH_FAILED" });
    expect(!r.ok && r.message).not.toContain("sk-preflight-secret");
    expect(scripted.requests[0]).toMatchObject({ method: "GET", path: "/v1/models" });
    expect(scripted.requests[0]?.headers["authorization"]).toBe("Bearer sk-preflight-secret");
  });

  it.each([
    ["lists the model", ["gemma3:4b", "llama3.2"], []],
    [
      "does not list the model (llama.cpp serves any name, so only a warning)",
      ["qwen2.5"],
      [
        /model gemma3:4b is not among the models it lists \(qwen2\.5\); calls may fail \(for Ollama: ollama pull gemma3:4b\)/,
      ],
    ],
    ["has no model list", { status: 404 }, [/could not list the models \(404\)/]],
  ] as const)("passes an endpoint that %s", async (_name, models, warnings) => {
    scripted = await startScriptedLlmServer([], { models: models as never });
    const r = await preflightLlm(config(scripted.baseURL));
    expect(r.ok).toBe(true);
    const got = r.ok ? r.warnings : [];
    expect(got).toHaveLength(warnings.length);
    warnings.forEach((w, i) => expect(got[i]).toMatch(w));
  });

  it("needs no endpoint for the rules model", async () => {
    expect(await preflightLlm({ provider: "rules", timeoutMs: 1000 })).toMatchObject({ ok: true });
  });
});

describe("guardWithPreflight", () => {
  const request: LlmRequest<string> = {
    task: "analyze_claim",
    system: "s",
    messages: [{ role: "user", content: "u" }],
  };
  const down: PreflightResult = {
    ok: false,
    code: "LLM_UNREACHABLE",
    url: "http://x/v1",
    model: "m",
    ms: 1,
    message: "LLM endpoint http://x/v1 (model m) is unreachable: ECONNREFUSED",
  };
  const up: PreflightResult = { ok: true, url: "http://x/v1", model: "m", ms: 1, detail: "answered", warnings: [] };

  function fixture(
    results: PreflightResult[],
    answer: () => LlmResult<string> = () => ({
      ok: true,
      value: "fine",
      text: "fine",
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, estimated: true },
      attempts: 1,
      model: "m",
      warnings: [],
    }),
  ) {
    let now = 0;
    let probes = 0;
    let calls = 0;
    const model: LlmPort = {
      provider: "openai",
      model: "m",
      complete: async <T>() => {
        calls++;
        return answer() as LlmResult<T>;
      },
    };
    const guard = guardWithPreflight(model, async () => results[Math.min(probes++, results.length - 1)]!, {
      recheckMs: 30_000,
      now: () => now,
    });
    return { guard, advance: (ms: number) => (now += ms), probes: () => probes, calls: () => calls };
  }

  it("fails every call at once with the check's message while the endpoint is down, not retryable", async () => {
    const f = fixture([down]);
    const first = await f.guard.port.complete(request);
    const second = await f.guard.port.complete(request);
    for (const r of [first, second])
      expect(r).toEqual({
        ok: false,
        code: "LLM_UNREACHABLE",
        message: down.message,
        attempts: 0,
        model: "m",
        retryable: false,
      });
    expect({ probes: f.probes(), calls: f.calls() }).toEqual({ probes: 1, calls: 0 });
  });

  it("checks again after the recheck interval and lets calls through once the endpoint answers", async () => {
    const f = fixture([down, up]);
    expect((await f.guard.port.complete(request)).ok).toBe(false);
    f.advance(29_999);
    expect((await f.guard.port.complete(request)).ok).toBe(false);
    f.advance(1);
    expect((await f.guard.port.complete(request)).ok).toBe(true);
    expect({ probes: f.probes(), calls: f.calls() }).toEqual({ probes: 2, calls: 1 });
  });

  it("says unreachable while the endpoint is down and ok once a recheck the question started finds it back (what /health reads)", async () => {
    const f = fixture([down, up]);
    expect(f.guard.unreachable()).toBe(false); // nothing checked yet
    await f.guard.check();
    expect(f.guard.unreachable()).toBe(true);
    f.advance(29_999);
    expect(f.guard.unreachable()).toBe(true);
    expect(f.probes()).toBe(1); // asked within the recheck interval: no new check
    f.advance(1);
    expect(f.guard.unreachable()).toBe(true); // still down as far as it knows; a recheck starts in the background
    expect(f.guard.unreachable()).toBe(true); // one recheck at a time
    await new Promise((resolve) => setImmediate(resolve));
    expect(f.probes()).toBe(2);
    expect(f.guard.unreachable()).toBe(false);
  });

  it("checks once for concurrent first calls", async () => {
    const f = fixture([up]);
    await Promise.all([f.guard.port.complete(request), f.guard.port.complete(request), f.guard.check()]);
    expect(f.probes()).toBe(1);
    expect(f.calls()).toBe(2);
  });

  it("marks the endpoint down when a call finds it unreachable", async () => {
    const f = fixture([up], () => ({
      ok: false,
      code: "LLM_UNREACHABLE",
      message: "LLM endpoint http://x/v1 is unreachable: ECONNRESET",
      attempts: 3,
      model: "m",
      retryable: true,
    }));
    expect(await f.guard.port.complete(request)).toMatchObject({ ok: false, attempts: 3, retryable: true });
    expect(await f.guard.port.complete(request)).toMatchObject({
      ok: false,
      code: "LLM_UNREACHABLE",
      attempts: 0,
      message: "LLM endpoint http://x/v1 is unreachable: ECONNRESET",
    });
    expect(f.calls()).toBe(1);
    expect(f.guard.last()).toMatchObject({ ok: false, url: "http://x/v1" });
  });

  it("lets a bad answer through without marking the endpoint down", async () => {
    const f = fixture([up], () => ({
      ok: false,
      code: "LLM_INVALID_JSON",
      message: "not JSON",
      attempts: 1,
      model: "m",
      retryable: false,
    }));
    await f.guard.port.complete(request);
    await f.guard.port.complete(request);
    expect(f.calls()).toBe(2);
  });
});
