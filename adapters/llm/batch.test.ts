import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { LlmResult, LlmStructuredRequest } from "../../core/llm/port.ts";
import { createBatchModel, inMemoryBatchJournal } from "./batch.ts";
import type { ScriptedBatchOptions } from "./scripted-batches.ts";
import {
  answerBySchema,
  chatCompletion,
  closedPort,
  errorReply,
  startScriptedLlmServer,
  type Script,
  type ScriptedLlmServer,
} from "./scripted-server.ts";

const API_KEY = "sk-test-BATCH-123456";
const Verdict = z.object({ action: z.enum(["REFUND", "ESCALATE"]), confidence: z.number().min(0).max(1) });
const request: LlmStructuredRequest<z.infer<typeof Verdict>> = {
  task: "decide_refund",
  system: "You decide refunds.",
  messages: [{ role: "user", content: "<claim>ord_001, 40 EUR</claim>" }],
  schema: { name: "verdict", zod: Verdict },
};
const good = JSON.stringify({ action: "REFUND", confidence: 0.9 });

let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function batchModel(script: Script, batches: ScriptedBatchOptions = {}) {
  server = await startScriptedLlmServer(script, { batches });
  const journal = inMemoryBatchJournal();
  const model = createBatchModel({
    baseURL: server.baseURL,
    apiKey: API_KEY,
    model: "gpt-4o-mini",
    temperature: 0,
    journal,
  });
  return { model, journal, server };
}

const paths = (s: ScriptedLlmServer) => s.requests.map((r) => `${r.method} ${r.path.replace(/-scripted-\d+/, "")}`);
const failed = (r: LlmResult<unknown>) => {
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r.value)}`);
  return r;
};

describe("the model behind the OpenAI Batch API", () => {
  it("sends a call as a one-request JSONL batch, answers pending, then reads the answer once the batch completes", async () => {
    const { model, server } = await batchModel(answerBySchema({ verdict: good }));
    const first = failed(await model.complete(request));
    expect(first).toMatchObject({ code: "LLM_BATCH_PENDING", retryable: true });
    expect(first.message).toMatch(/sent to the Batch API as batch batch-scripted-\d+/);
    expect(paths(server)).toEqual(["POST /v1/files", "POST /v1/batches"]);
    const upload = server.requests[0]!.raw;
    const line = JSON.parse(
      upload.slice(upload.indexOf('{"custom_id"'), upload.indexOf("\n", upload.indexOf('{"custom_id"'))),
    );
    expect(line).toMatchObject({ method: "POST", url: "/v1/chat/completions" });
    expect(line.custom_id).toMatch(/^claims-[0-9a-f]{40}$/);
    expect(line.body).toMatchObject({ model: "gpt-4o-mini", temperature: 0, response_format: { type: "json_schema" } });
    expect(line.body.response_format.json_schema).toMatchObject({ name: "verdict", strict: true });
    expect(server.requests[1]!.body).toMatchObject({ endpoint: "/v1/chat/completions", completion_window: "24h" });
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);

    const second = await model.complete(request);
    expect(second).toMatchObject({ ok: true, value: { action: "REFUND", confidence: 0.9 }, model: "gpt-4o-mini" });
    expect(second.ok && second.usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      estimated: false,
    });
    expect(paths(server).slice(2)).toEqual(["GET /v1/batches/batch", "GET /v1/files/file/content"]);
  });

  it("keeps one batch per question while it is in progress: every try reads it, none sends another", async () => {
    const { model, server } = await batchModel(answerBySchema({ verdict: good }), { pollsBeforeDone: 2 });
    // The submission, then two reads that see it in progress.
    for (const _ of [1, 2, 3]) expect(failed(await model.complete(request)).code).toBe("LLM_BATCH_PENDING");
    expect(paths(server).filter((p) => p === "POST /v1/batches")).toHaveLength(1);
    const done = await model.complete(request);
    expect(done.ok).toBe(true);
  });

  it("the same question asked by a second model over the same journal finds the batch (a redelivery on another worker)", async () => {
    const { journal, server } = await batchModel(answerBySchema({ verdict: good }));
    const opts = { baseURL: server.baseURL, apiKey: API_KEY, model: "gpt-4o-mini", temperature: 0, journal };
    expect(failed(await createBatchModel(opts).complete(request)).code).toBe("LLM_BATCH_PENDING");
    expect((await createBatchModel(opts).complete(request)).ok).toBe(true);
    expect(paths(server).filter((p) => p === "POST /v1/batches")).toHaveLength(1);
  });

  it.each(["expired", "failed", "cancelled"] as const)(
    "a batch that ended %s without the answer is an outage, and the question goes into a new batch on the next try",
    async (endAs) => {
      const { model, server, journal } = await batchModel(answerBySchema({ verdict: good }), { endAs });
      failed(await model.complete(request));
      const ended = failed(await model.complete(request));
      expect(ended.code).toBe("LLM_UNREACHABLE");
      expect(ended.message).toMatch(
        new RegExp(`batch batch-scripted-\\d+ ended ${endAs} without this request's answer`),
      );
      expect(journal.size()).toBe(0);
      expect(failed(await model.complete(request)).code).toBe("LLM_BATCH_PENDING");
      expect(paths(server).filter((p) => p === "POST /v1/batches")).toHaveLength(2);
    },
  );

  const garbles: [string, (jsonl: string) => string, RegExp][] = [
    ["garbled JSONL", (t) => `${t.slice(0, 20)}\n`, /is not JSONL: line 1 is not JSON/],
    ["a line without custom_id", (t) => t.replace(/"custom_id":"[^"]*",/, ""), /line 1: .*\(custom_id\)/],
    [
      "a line for a request it was not sent",
      (t) => `${t.trim()}\n${t.trim().replace(/claims-[0-9a-f]{40}/, "claims-someone-else")}\n`,
      /has a line for a request the batch was not sent \(custom_id "claims-someone-else"\)/,
    ],
    [
      "an answer that is not a chat completion",
      (t) => t.replace(/"choices":\[/, '"choices":"x","was":['),
      /is not a chat completion/,
    ],
  ];
  it.each(garbles)(
    "bad input from the batch endpoint (%s) is named, the claim waits, the batch is kept and read again",
    async (_what, output, named) => {
      const { model, server, journal } = await batchModel(answerBySchema({ verdict: good }), { output });
      failed(await model.complete(request));
      for (const _ of [1, 2]) {
        const bad = failed(await model.complete(request));
        expect(bad.code).toBe("LLM_BATCH_PENDING");
        expect(bad.message).toMatch(named);
      }
      expect(journal.size()).toBe(1);
      expect(paths(server).filter((p) => p === "POST /v1/batches")).toHaveLength(1);
    },
  );

  it("gives an unusable answer its one repair round as a new batch, with both answers' tokens", async () => {
    const answers = ['{"action":"MAYBE"}', good];
    const { model, server } = await batchModel(() => chatCompletion(answers.shift() ?? good));
    failed(await model.complete(request));
    const repairing = failed(await model.complete(request));
    expect(repairing.code).toBe("LLM_BATCH_PENDING");
    const repaired = await model.complete(request);
    expect(repaired).toMatchObject({ ok: true, value: { action: "REFUND" } });
    expect(repaired.ok && repaired.usage.total_tokens).toBe(240);
    expect(paths(server).filter((p) => p === "POST /v1/batches")).toHaveLength(2);
  });

  it("a request the batch answered with an error status fails by that status; a refused key is LLM_AUTH_FAILED", async () => {
    const { model } = await batchModel(() => errorReply(400, "bad schema"));
    failed(await model.complete(request));
    const bad = failed(await model.complete(request));
    expect(bad).toMatchObject({ code: "LLM_BAD_REQUEST", retryable: false });
    expect(bad.message).toMatch(/answered this request with 400: bad schema/);
    await server?.close();

    const refused = await batchModel(() => chatCompletion(good));
    const keyless = createBatchModel({
      baseURL: refused.server.baseURL,
      apiKey: API_KEY,
      model: "m",
      fetch: async (url, init) => {
        const r = await fetch(url, init);
        return String(url).endsWith("/files")
          ? new Response(JSON.stringify({ error: { message: `bad key ${API_KEY}` } }), { status: 401 })
          : r;
      },
    });
    const auth = failed(await keyless.complete(request));
    expect(auth.code).toBe("LLM_AUTH_FAILED");
    expect(auth.message).not.toContain(API_KEY);
  });

  it("an endpoint that refuses connections is LLM_UNREACHABLE, naming it", async () => {
    const port = await closedPort();
    const model = createBatchModel({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: API_KEY, model: "m" });
    const down = failed(await model.complete(request));
    expect(down.code).toBe("LLM_UNREACHABLE");
    expect(down.message).toMatch(
      new RegExp(`batch endpoint http://127.0.0.1:${port}/v1 is unreachable \\(POST /files\\): ECONNREFUSED`),
    );
  });
});
