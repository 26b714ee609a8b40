// The scripted server's OpenAI Batch API (adapters/llm/scripted-server.ts): `POST /v1/files` (multipart, purpose
// batch), `POST /v1/batches`, `GET /v1/batches/{id}` and `GET /v1/files/{id}/content`. Each line of an uploaded
// JSONL is answered by the same script as a direct `/v1/chat/completions` request, so a test (or a local run) answers
// batches with the answers it already scripts. A batch completes after `pollsBeforeDone` reads, or ends as `endAs`
// says; `output` garbles what the output file gives back, to test how bad input from the endpoint is met.
import type { RecordedRequest, ScriptedReply } from "./scripted-server.ts";

/** How the stand-in's batches behave. */
export interface ScriptedBatchOptions {
  /** Reads of `GET /v1/batches/{id}` that see the batch `in_progress` before it is `completed` (default 0). */
  readonly pollsBeforeDone?: number;
  /** Ends every batch so, once its polls are done, instead of completing it: its answers never come back. */
  readonly endAs?: "expired" | "failed" | "cancelled";
  /** Rewrites the output file's JSONL before it is served (garbled lines, a line without custom_id, a stranger's line). */
  readonly output?: (jsonl: string) => string;
}

/** What a reply to one HTTP request is, in the scripted server's terms. */
type Reply = ScriptedReply;

interface Batch {
  readonly id: string;
  readonly inputFileId: string;
  reads: number;
  status: "in_progress" | "completed" | "expired" | "failed" | "cancelled";
  outputFileId?: string;
}

const json = (status: number, body: unknown): Reply => ({ kind: "json", status, json: body });
const notFound = (what: string): Reply =>
  json(404, { error: { message: `scripted server: no ${what}`, type: "invalid_request_error" } });

/** The batch endpoints of one scripted server; `answer` answers one chat-completions body as the script does. */
export function scriptedBatches(
  answer: (request: RecordedRequest) => Promise<ScriptedReply>,
  options: ScriptedBatchOptions = {},
): {
  handles: (method: string, path: string) => boolean;
  handle: (request: RecordedRequest, raw: Buffer) => Promise<Reply>;
} {
  const files = new Map<string, string>();
  const batches = new Map<string, Batch>();
  let ids = 0;
  const nextId = (prefix: string): string => `${prefix}-scripted-${++ids}`;

  async function outputOf(batch: Batch): Promise<string> {
    const lines = (files.get(batch.inputFileId) ?? "").split("\n").filter((l) => l.trim() !== "");
    const out: string[] = [];
    for (const line of lines) {
      const input = JSON.parse(line) as { custom_id: string; body: unknown };
      const reply = await answer({
        method: "POST",
        path: "/v1/chat/completions",
        headers: {},
        body: input.body,
        raw: JSON.stringify(input.body),
      });
      const response =
        reply.kind === "json"
          ? { status_code: reply.status ?? 200, body: reply.json }
          : reply.kind === "raw"
            ? { status_code: reply.status ?? 200, body: reply.body }
            : { status_code: 500, body: { error: { message: `scripted server: a batch line cannot ${reply.kind}` } } };
      out.push(JSON.stringify({ id: nextId("batch_req"), custom_id: input.custom_id, response, error: null }));
    }
    const text = `${out.join("\n")}\n`;
    return options.output ? options.output(text) : text;
  }

  function batchObject(b: Batch): unknown {
    return {
      id: b.id,
      object: "batch",
      endpoint: "/v1/chat/completions",
      input_file_id: b.inputFileId,
      completion_window: "24h",
      status: b.status,
      output_file_id: b.outputFileId ?? null,
      error_file_id: null,
      errors:
        b.status === "failed" ? { data: [{ code: "scripted", message: "scripted server: the batch failed" }] } : null,
    };
  }

  return {
    handles: (method, path) =>
      (method === "POST" && (path === "/v1/files" || path === "/v1/batches")) ||
      (method === "GET" && (/^\/v1\/batches\/[^/]+$/.test(path) || /^\/v1\/files\/[^/]+\/content$/.test(path))),
    async handle(request, raw) {
      const { method, path } = request;
      if (method === "POST" && path === "/v1/files") {
        const contentType = String(request.headers["content-type"] ?? "");
        let form: FormData;
        try {
          form = await new Request("http://scripted/", {
            method: "POST",
            headers: { "content-type": contentType },
            body: raw,
          }).formData();
        } catch {
          return json(400, { error: { message: "scripted server: POST /v1/files wants multipart/form-data" } });
        }
        const file = form.get("file");
        if (form.get("purpose") !== "batch" || file === null || typeof file === "string")
          return json(400, { error: { message: "scripted server: POST /v1/files wants purpose=batch and a file" } });
        const id = nextId("file");
        files.set(id, await file.text());
        return json(200, { id, object: "file", purpose: "batch", bytes: file.size });
      }
      if (method === "POST" && path === "/v1/batches") {
        const body = request.body as
          | { input_file_id?: unknown; endpoint?: unknown; completion_window?: unknown }
          | undefined;
        if (typeof body?.input_file_id !== "string" || !files.has(body.input_file_id))
          return json(400, { error: { message: "scripted server: POST /v1/batches names no uploaded input_file_id" } });
        if (body.endpoint !== "/v1/chat/completions" || body.completion_window !== "24h")
          return json(400, {
            error: { message: "scripted server: endpoint must be /v1/chat/completions, completion_window 24h" },
          });
        const batch: Batch = { id: nextId("batch"), inputFileId: body.input_file_id, reads: 0, status: "in_progress" };
        batches.set(batch.id, batch);
        return json(200, batchObject(batch));
      }
      const batchId = /^\/v1\/batches\/([^/]+)$/.exec(path)?.[1];
      if (batchId !== undefined) {
        const batch = batches.get(decodeURIComponent(batchId));
        if (batch === undefined) return notFound(`batch ${batchId}`);
        if (batch.status === "in_progress" && batch.reads++ >= (options.pollsBeforeDone ?? 0)) {
          if (options.endAs !== undefined) batch.status = options.endAs;
          else {
            const id = nextId("file");
            files.set(id, await outputOf(batch));
            batch.outputFileId = id;
            batch.status = "completed";
          }
        }
        return json(200, batchObject(batch));
      }
      const fileId = /^\/v1\/files\/([^/]+)\/content$/.exec(path)?.[1];
      const content = fileId === undefined ? undefined : files.get(decodeURIComponent(fileId));
      if (content === undefined) return notFound(`file ${fileId ?? path}`);
      return { kind: "raw", status: 200, body: content, headers: { "content-type": "application/jsonl" } };
    },
  };
}
