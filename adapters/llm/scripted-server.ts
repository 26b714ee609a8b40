// A scripted OpenAI-compatible server on 127.0.0.1 for tests: answers `/v1/chat/completions` from a
// script and records every request. Reusable by end-to-end tests that run the openai adapter. It answers the
// Batch API too (`/v1/files`, `/v1/batches`: scripted-batches.ts), each batch line by the same script.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { scriptedBatches, type ScriptedBatchOptions } from "./scripted-batches.ts";

/** One request as the server received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body (undefined when it was not JSON). */
  readonly body: unknown;
  readonly raw: string;
}

/** What the server does with one request. */
export type ScriptedReply =
  | {
      readonly kind: "json";
      readonly status?: number;
      readonly json: unknown;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | {
      readonly kind: "raw";
      readonly status?: number;
      readonly body: string;
      readonly headers?: Readonly<Record<string, string>>;
    }
  /** Never answers (until the server closes). */
  | { readonly kind: "hang" }
  /** Sends 200 headers and the start of a body, then stalls. */
  | { readonly kind: "stall" }
  /** Drops the connection without an answer. */
  | { readonly kind: "destroy" };

/** Replies in order (a request past the end gets a 500 saying the script is exhausted), or a function of the request. */
export type Script =
  | readonly ScriptedReply[]
  | ((request: RecordedRequest, index: number) => ScriptedReply | Promise<ScriptedReply>);

/** A running scripted server. */
export interface ScriptedLlmServer {
  /** `http://127.0.0.1:<port>/v1`, ready for `baseURL`. */
  readonly baseURL: string;
  /** Every request received so far, in order. */
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Usage figures a scripted completion reports. */
interface ScriptedUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** A successful chat completion whose message content is `content`. */
export function chatCompletion(
  content: string | null,
  opts: {
    usage?: ScriptedUsage | null;
    finishReason?: "stop" | "length" | "content_filter";
    refusal?: string | null;
    model?: string;
  } = {},
): ScriptedReply {
  const usage =
    opts.usage === undefined ? { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } : opts.usage;
  return {
    kind: "json",
    json: {
      id: "chatcmpl-scripted",
      object: "chat.completion",
      created: 1_767_225_600,
      model: opts.model ?? "scripted",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content, refusal: opts.refusal ?? null },
          finish_reason: opts.finishReason ?? "stop",
          logprobs: null,
        },
      ],
      ...(usage === null ? {} : { usage }),
    },
  };
}

/** An error answer in OpenAI's error format. */
export function errorReply(
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): ScriptedReply {
  return { kind: "json", status, json: { error: { message, type: "scripted_error", code: null } }, headers };
}

/**
 * A script that answers by the requested structured-output schema name (e.g. `refund_proposal`,
 * `claim_extraction`), and with `text` when the request has no response_format.
 */
export function answerBySchema(
  answers: Readonly<Record<string, string | ((request: RecordedRequest) => string)>>,
): Script {
  return (request) => {
    const body = request.body as { response_format?: { json_schema?: { name?: string } } } | undefined;
    const key = body?.response_format?.json_schema?.name ?? "text";
    const answer = answers[key];
    if (answer === undefined) return errorReply(400, `scripted server has no answer for '${key}'`);
    return chatCompletion(typeof answer === "function" ? answer(request) : answer);
  };
}

/** What `GET /v1/models` answers: the listed model ids (default `["scripted"]`), or an error status. */
interface ScriptedServerOptions {
  readonly models?: readonly string[] | { readonly status: number };
  /** While this says true the endpoint is down: every connection is dropped at once, `GET /v1/models` included. */
  readonly down?: () => boolean;
  /** How its Batch API behaves (default: a batch completes at its first read). */
  readonly batches?: ScriptedBatchOptions;
}

/** Starts a scripted server on 127.0.0.1 with an ephemeral port. */
export async function startScriptedLlmServer(
  script: Script,
  options: ScriptedServerOptions = {},
): Promise<ScriptedLlmServer> {
  const requests: RecordedRequest[] = [];
  // Chat completions answered so far (direct or in a batch): an array script's index.
  let answered = 0;
  const answerChat = async (request: RecordedRequest): Promise<ScriptedReply> => {
    const index = answered++;
    if (typeof script === "function") return script(request, index);
    return script[index] ?? errorReply(500, `scripted server: script exhausted after ${script.length} replies`);
  };
  const batches = scriptedBatches(answerChat, options.batches);
  const server = createServer((req, res) => {
    if (options.down?.()) {
      req.socket.destroy();
      return;
    }
    void handle(req, res);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    const raw = bytes.toString("utf8");
    let body: unknown;
    try {
      body = raw === "" ? undefined : (JSON.parse(raw) as unknown);
    } catch {
      body = undefined;
    }
    const recorded: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: { ...req.headers },
      body,
      raw,
    };
    requests.push(recorded);
    let reply: ScriptedReply;
    const models = options.models ?? ["scripted"];
    if (recorded.method === "GET" && recorded.path === "/v1/models") {
      reply =
        "status" in models
          ? errorReply(models.status, "scripted server: no model list")
          : {
              kind: "json",
              json: { object: "list", data: models.map((id) => ({ id, object: "model", owned_by: "scripted" })) },
            };
    } else if (batches.handles(recorded.method, recorded.path)) {
      reply = await batches.handle(recorded, bytes);
    } else if (recorded.method !== "POST" || !recorded.path.startsWith("/v1/chat/completions")) {
      reply = errorReply(
        404,
        `scripted server only answers POST /v1/chat/completions, the Batch API and GET /v1/models, not ${recorded.method} ${recorded.path}`,
      );
    } else {
      reply = await answerChat(recorded);
    }
    switch (reply.kind) {
      case "hang":
        return;
      case "stall":
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"id": "chatcmpl-stalled", "choices": [');
        return;
      case "destroy":
        req.socket.destroy();
        return;
      case "json":
        res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
        res.end(JSON.stringify(reply.json));
        return;
      case "raw":
        res.writeHead(reply.status ?? 200, { "content-type": "text/plain", ...reply.headers });
        res.end(reply.body);
        return;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (bound, then closed): an endpoint that refuses connections. */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
