// LlmPort through the OpenAI Batch API (LLM_BATCH_MODE=batch, docs/llm.md "Batch mode"): a call is written as one
// `/v1/chat/completions` request of a JSONL file, uploaded (`POST /v1/files`, purpose `batch`) and sent as a batch
// (`POST /v1/batches`, window 24h); the call then answers LLM_BATCH_PENDING, and the pipeline holds the claim and
// tries the step again later (pipeline/decide/outage.ts). Each try reads the batch (`GET /v1/batches/{id}`) and, once
// completed, its output file (`GET /v1/files/{id}/content`). Nothing waits in a loop: a try is a few requests.
//
// A request's `custom_id` is a digest of its body, so the same step asks the same question however often it is
// delivered, and the journal (custom_id → batch id) finds its batch again. A batch that ended without the answer
// (expired, failed, cancelled) is forgotten and the request goes into a new batch on the next try; the claim's hold
// bounds how long that may go on (then LLM_UNREACHABLE, a person). What the batch endpoint gives back that cannot be
// read (garbled JSONL, a line without custom_id, a line for a request it was not sent) is named in a LLM_BATCH_PENDING
// answer: the claim stays held, the batch is kept and read again, nothing is lost.
import { createHash } from "node:crypto";
import type { LlmFailureCode } from "../../core/llm/errors.ts";
import { BATCH_PENDING_CODE, isRetryableLlmFailure } from "../../core/llm/errors.ts";
import type { BatchJournal, LlmMessage, LlmPort, LlmRequest, LlmResult, LlmUsage } from "../../core/llm/port.ts";
import { readStructuredOutput } from "../../core/llm/structured-output.ts";
import { estimateUsage, sumUsage } from "../../core/llm/usage.ts";
import { REPAIRABLE, connectionReason, repairMessage } from "./openai.ts";
import type { OpenAiEndpointOptions } from "./openai.ts";
import { toStrictJsonSchema } from "./strict-schema.ts";
import {
  BATCH_ENDPOINT,
  BatchChatCompletionSchema,
  BatchObjectSchema,
  ENDED_WITHOUT_ANSWERS,
  FileObjectSchema,
  readBatchLines,
} from "./batch-wire.ts";
import type { BatchInputLine, BatchObject, BatchOutputLine } from "./batch-wire.ts";

/** A journal in this process's memory (the local stack, `claims batch`, tests). */
export function inMemoryBatchJournal(): BatchJournal & { readonly size: () => number } {
  const entries = new Map<string, string>();
  return {
    get: async (customId) => entries.get(customId),
    put: async (customId, batchId) => {
      entries.set(customId, batchId);
    },
    forget: async (customId, batchId) => {
      if (entries.get(customId) === batchId) entries.delete(customId);
    },
    size: () => entries.size,
  };
}

/** Settings of a model behind the Batch API. */
export interface BatchModelOptions extends OpenAiEndpointOptions {
  /** Budget of each HTTP request to the batch endpoint (default 30 000 ms). */
  readonly timeoutMs?: number | undefined;
  readonly journal?: BatchJournal | undefined;
  readonly fetch?: typeof fetch | undefined;
}

type Http<T> = { ok: true; value: T } | { ok: false; code: LlmFailureCode; message: string };

/** Creates an LlmPort whose calls go through the OpenAI Batch API of `baseURL`. */
export function createBatchModel(options: BatchModelOptions): LlmPort {
  const endpoint = options.baseURL.replace(/\/+$/, "");
  const timeoutMs = options.timeoutMs ?? 30_000;
  const journal = options.journal ?? inMemoryBatchJournal();
  const doFetch = options.fetch ?? fetch;
  const scrub = (text: string): string => (options.apiKey.length >= 4 ? text.split(options.apiKey).join("***") : text);

  /** One request to the batch endpoint: its body as text, or a failure code naming what went wrong. */
  async function call(method: string, path: string, body?: RequestInit["body"], json = true): Promise<Http<string>> {
    let response: Response;
    try {
      response = await doFetch(`${endpoint}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          ...(json && body !== undefined ? { "content-type": "application/json" } : {}),
        },
        ...(body === undefined ? {} : { body }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
      const reason = timedOut ? `no answer within ${timeoutMs} ms` : connectionReason(err);
      return {
        ok: false,
        code: "LLM_UNREACHABLE",
        message: `batch endpoint ${endpoint} is unreachable (${method} ${path}): ${reason}`,
      };
    }
    const text = await response.text().catch(() => "");
    if (response.ok) return { ok: true, value: text };
    const detail = scrub(errorMessage(text));
    const what = `batch endpoint ${endpoint} answered ${method} ${path} with ${response.status}: ${detail}`;
    const s = response.status;
    if (s === 401 || s === 403) return { ok: false, code: "LLM_AUTH_FAILED", message: what };
    // Rate limits and server errors pass: the claim waits (held) and the request is tried again.
    if (s === 429 || s >= 500) return { ok: false, code: BATCH_PENDING_CODE, message: what };
    return { ok: false, code: "LLM_BAD_REQUEST", message: what };
  }

  async function callJson<T>(
    method: string,
    path: string,
    read: (
      json: unknown,
    ) => { success: true; data: T } | { success: false; error: { issues: { message: string; path: PropertyKey[] }[] } },
    body?: RequestInit["body"],
    json = true,
  ): Promise<Http<T>> {
    const answered = await call(method, path, body, json);
    if (!answered.ok) return answered;
    let parsed: unknown;
    try {
      parsed = JSON.parse(answered.value);
    } catch {
      return {
        ok: false,
        code: BATCH_PENDING_CODE,
        message: `batch endpoint ${endpoint} answered ${method} ${path} with something that is not JSON`,
      };
    }
    const read_ = read(parsed);
    if (read_.success) return { ok: true, value: read_.data };
    const issue = read_.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "" : ` (${issue.path.map(String).join(".")})`;
    return {
      ok: false,
      code: BATCH_PENDING_CODE,
      message: `batch endpoint ${endpoint} answered ${method} ${path} with an unreadable object: ${issue?.message ?? "invalid"}${where}`,
    };
  }

  /** Uploads one request as a JSONL file and starts its batch; the journal records it. */
  async function submit(line: BatchInputLine): Promise<Http<string>> {
    const form = new FormData();
    form.append("purpose", "batch");
    form.append(
      "file",
      new Blob([`${JSON.stringify(line)}\n`], { type: "application/jsonl" }),
      `${line.custom_id}.jsonl`,
    );
    const file = await callJson("POST", "/files", (j) => FileObjectSchema.safeParse(j), form, false);
    if (!file.ok) return file;
    const created = await callJson(
      "POST",
      "/batches",
      (j) => BatchObjectSchema.safeParse(j),
      JSON.stringify({
        input_file_id: file.value.id,
        endpoint: BATCH_ENDPOINT,
        completion_window: "24h",
        metadata: { custom_id: line.custom_id },
      }),
    );
    if (!created.ok) return created;
    await journal.put(line.custom_id, created.value.id);
    return { ok: true, value: created.value.id };
  }

  /** This request's line of a completed batch: the output file, else the error file; a line for another request is refused. */
  async function lineOf(batch: BatchObject, customId: string): Promise<Http<BatchOutputLine | undefined>> {
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      if (fileId === undefined || fileId === null) continue;
      const content = await call("GET", `/files/${encodeURIComponent(fileId)}/content`);
      if (!content.ok) return content;
      const read = readBatchLines(content.value, fileId);
      if (!read.ok) return { ok: false, code: BATCH_PENDING_CODE, message: `batch ${batch.id}: ${read.message}` };
      const stranger = read.lines.find((l) => l.custom_id !== customId);
      if (stranger !== undefined)
        return {
          ok: false,
          code: BATCH_PENDING_CODE,
          message: `batch ${batch.id}: file ${fileId} has a line for a request the batch was not sent (custom_id ${JSON.stringify(stranger.custom_id.slice(0, 80))})`,
        };
      const mine = read.lines.find((l) => l.custom_id === customId);
      if (mine !== undefined) return { ok: true, value: mine };
    }
    return { ok: true, value: undefined };
  }

  return {
    provider: "openai",
    model: options.model,
    async complete<T = string>(request: LlmRequest<T>): Promise<LlmResult<T>> {
      const schema = request.schema;
      const failure = (
        code: LlmFailureCode,
        message: string,
        extra: { usage?: LlmUsage; text?: string } = {},
      ): LlmResult<T> => ({
        ok: false,
        code,
        message,
        attempts: 1,
        model: options.model,
        retryable: isRetryableLlmFailure(code),
        ...extra,
      });

      const answer = async (messages: readonly LlmMessage[], prior: readonly LlmUsage[]): Promise<LlmResult<T>> => {
        const body = chatBody(options, request.system, messages, schema);
        const customId = `claims-${createHash("sha256").update(JSON.stringify(body)).digest("hex").slice(0, 40)}`;
        const batchId = await journal.get(customId);
        if (batchId === undefined) {
          const sent = await submit({ custom_id: customId, method: "POST", url: BATCH_ENDPOINT, body });
          if (!sent.ok) return failure(sent.code, sent.message);
          return failure(
            BATCH_PENDING_CODE,
            `sent to the Batch API as batch ${sent.value}; the answer is read once it completes`,
          );
        }
        const got = await callJson("GET", `/batches/${encodeURIComponent(batchId)}`, (j) =>
          BatchObjectSchema.safeParse(j),
        );
        if (!got.ok) return failure(got.code, got.message);
        const batch = got.value;
        if (ENDED_WITHOUT_ANSWERS.has(batch.status)) {
          await journal.forget(customId, batchId);
          const why = batch.errors?.data
            ?.map((e) => e.message ?? e.code)
            .filter(Boolean)
            .join("; ");
          return failure(
            "LLM_UNREACHABLE",
            `batch ${batchId} ended ${batch.status} without this request's answer${why ? ` (${scrub(why)})` : ""}; the request goes into a new batch on the next try`,
          );
        }
        if (batch.status !== "completed") return failure(BATCH_PENDING_CODE, `batch ${batchId} is ${batch.status}`);
        const found = await lineOf(batch, customId);
        if (!found.ok) return failure(found.code, found.message);
        const line = found.value;
        if (line === undefined || (line.response == null && line.error == null)) {
          await journal.forget(customId, batchId);
          return failure(
            "LLM_UNREACHABLE",
            `batch ${batchId} completed without this request's answer; the request goes into a new batch on the next try`,
          );
        }
        const status = line.response?.status_code;
        if (line.response == null || status !== 200) {
          const detail = scrub(line.error?.message ?? errorMessage(JSON.stringify(line.response?.body ?? "")));
          const what = `batch ${batchId} answered this request with ${status ?? line.error?.code ?? "an error"}: ${detail}`;
          if (status === 401 || status === 403) return failure("LLM_AUTH_FAILED", what);
          if (status === undefined || status === 429 || status >= 500) {
            await journal.forget(customId, batchId);
            return failure(BATCH_PENDING_CODE, `${what}; the request goes into a new batch on the next try`);
          }
          return failure("LLM_BAD_REQUEST", what);
        }
        const completion = BatchChatCompletionSchema.safeParse(line.response.body);
        if (!completion.success)
          return failure(BATCH_PENDING_CODE, `batch ${batchId}: the answer to this request is not a chat completion`);
        const choice = completion.data.choices[0];
        const content = choice?.message.content ?? "";
        const u = completion.data.usage;
        const usage = sumUsage([
          ...prior,
          u == null ? estimateUsage(request.system, messages, content) : { ...u, estimated: false },
        ]);
        if (choice === undefined)
          return failure("LLM_EMPTY_RESPONSE", `batch ${batchId} answered with no choices`, { usage });
        const refusal = choice.message.refusal;
        if ((refusal !== undefined && refusal !== null && refusal !== "") || choice.finish_reason === "content_filter")
          return failure("LLM_REFUSED", `the model refused: ${refusal ?? "content filter"}`, { usage, text: content });
        const warnings = [`answered through the Batch API (batch ${batchId})`];
        if (schema === undefined) {
          if (content.trim() === "") return failure("LLM_EMPTY_RESPONSE", "the model returned no text", { usage });
          return {
            ok: true,
            value: content.trim() as T,
            text: content,
            usage,
            attempts: 1,
            model: options.model,
            warnings,
            via: "batch",
          };
        }
        const read = readStructuredOutput(content, schema);
        if (read.ok)
          return {
            ok: true,
            value: read.value,
            text: content,
            usage,
            attempts: 1,
            model: options.model,
            warnings,
            via: "batch",
          };
        // One repair round, as the synchronous adapter gives: a new request (its own batch), the first answer kept.
        if (prior.length === 0 && REPAIRABLE.has(read.code))
          return answer(
            [
              ...messages,
              { role: "assistant", content: content.trim() === "" ? "(no answer)" : content },
              { role: "user", content: repairMessage(read.message) },
            ],
            [usage],
          );
        const after = prior.length > 0 ? " (after one repair round)" : "";
        return failure(read.code, `${read.message}${after}`, { usage, text: content });
      };
      return answer(request.messages, []);
    },
  };
}

/** The chat-completions body of one request: strict json_schema for a structured answer (the synchronous adapter's first mode). */
function chatBody(
  options: Pick<BatchModelOptions, "model" | "temperature">,
  system: string,
  messages: readonly LlmMessage[],
  schema: LlmRequest<unknown>["schema"],
): Record<string, unknown> {
  return {
    model: options.model,
    messages: [{ role: "system", content: system }, ...messages.map((m) => ({ role: m.role, content: m.content }))],
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(schema === undefined
      ? {}
      : {
          response_format: {
            type: "json_schema",
            json_schema: { name: schema.name, schema: toStrictJsonSchema(schema.name, schema.zod), strict: true },
          },
        }),
  };
}

/** The `error.message` of an OpenAI error body, else the start of the text. */
function errorMessage(text: string): string {
  try {
    const m = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === "string") return m.slice(0, 300);
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 300) || "(no body)";
}
