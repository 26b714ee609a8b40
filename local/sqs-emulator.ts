// fauxqs, closed and off the handlers' thread: fauxqs 1.9.2's startFauxqs listens on 0.0.0.0 whatever host it
// is given and checks no credentials (2.x needs Node ≥ 22.5), so its app is built with the exported `buildApp`
// in a worker thread (sqs-worker.mjs) and never listens. This process's own clients reach it over the worker's
// MessagePort (local stamp, no HTTP); other programs through a signed front on 127.0.0.1 (signed-front.ts) that
// checks each request's SigV4 signature against this run's keys. With a journal, every answered SQS request is
// shown to it before its caller hears the answer (see queue-journal.ts), which makes the messages survive a
// restart.
import type { QueueJournal } from "./queue-journal.ts";
import type { SigningKeys } from "./auth/sigv4.ts";
import type { PollerTransport } from "./poller/poller.ts";
import { inProcessHandlerAt } from "./worker-channel.ts";
import type { ChannelAnswer } from "./worker-channel.ts";
import { startWorkerEmulator } from "./worker-emulator.ts";
import type { ThreadMemory } from "./memory.ts";

/** A running SQS emulator. */
export type SqsEmulator = {
  readonly endpoint: string;
  /** Its worker thread's heap (memory report); undefined when it does not answer. */
  memory(): Promise<ThreadMemory | undefined>;
  stop(): Promise<void>;
};

const SQS_TARGET = "AmazonSQS.";

/** Starts fauxqs in a worker behind a signed front on 127.0.0.1 (random port), journaling its messages when `journal` is given. */
export async function startSqsEmulator(options: {
  region: string;
  keys: SigningKeys;
  journal?: QueueJournal;
  /** Every request through fauxqs's Fastify app, none straight to its SQS router (sqs-worker.mjs; tests compare the two). */
  viaApp?: boolean;
}): Promise<SqsEmulator> {
  const journal = options.journal;
  const server = await startWorkerEmulator({
    name: "fauxqs",
    script: new URL("./sqs-worker.mjs", import.meta.url),
    workerData: { region: options.region, ...(options.viaApp ? { viaApp: true } : {}) },
    keys: options.keys,
    ...(journal ? { observe: journalObserver(journal) } : {}),
  });
  let stopped: Promise<void> | undefined;
  return {
    endpoint: server.endpoint,
    memory: () => server.memory(),
    stop: () => (stopped ??= server.close().finally(() => journal?.close())),
  };
}

/** Shows the journal every answered SQS request of the JSON protocol: its action, parsed body, status and answer. */
function journalObserver(journal: QueueJournal) {
  return (request: { headers: Record<string, string>; body: string }, answer: ChannelAnswer) => {
    const target = request.headers["x-amz-target"] ?? request.headers["X-Amz-Target"];
    if (typeof target !== "string" || !target.startsWith(SQS_TARGET) || answer.status !== 200) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(request.body);
    } catch {
      return;
    }
    journal.observe({
      action: target.slice(SQS_TARGET.length),
      request: parsed,
      status: answer.status,
      response: answer.body,
    });
  };
}

const decoder = new TextDecoder();

/**
 * The pollers' way to a fauxqs this process runs (undefined for any other endpoint): the same SQS JSON requests
 * straight on its channel, without the SDK's middleware — Lambda's event source mapping is AWS's own poller, not
 * the application's SDK calls, so the handlers' SDK calls stay the production ones. The journal sees them too.
 */
export function inProcessPollerTransport(endpoint: string): PollerTransport | undefined {
  const handler = inProcessHandlerAt(endpoint);
  if (handler === undefined) return undefined;
  const host = new URL(endpoint).host;
  const call = async (action: string, input: unknown, signal?: AbortSignal): Promise<Record<string, unknown>> => {
    const { response } = await handler.handle(
      {
        method: "POST",
        path: "/",
        headers: { host, "content-type": "application/x-amz-json-1.0", "x-amz-target": `${SQS_TARGET}${action}` },
        body: JSON.stringify(input),
      },
      signal ? { abortSignal: signal } : {},
    );
    const text = decoder.decode(response.body);
    let out: Record<string, unknown> = {};
    try {
      out = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
    } catch {
      out = { message: text.slice(0, 200) };
    }
    if (response.statusCode !== 200) {
      const type = String(out.__type ?? `HTTP ${response.statusCode}`);
      const error = new Error(`${action}: ${String(out.message ?? out.Message ?? type)}`);
      error.name = type.slice(type.lastIndexOf("#") + 1);
      throw error;
    }
    return out;
  };
  return {
    async receive(input, signal) {
      const out = await call("ReceiveMessage", input, signal);
      return (out.Messages ?? []) as Awaited<ReturnType<PollerTransport["receive"]>>;
    },
    deleteBatch: async (input) =>
      (await call("DeleteMessageBatch", input)) as Awaited<ReturnType<PollerTransport["deleteBatch"]>>,
  };
}
