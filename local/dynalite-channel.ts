// The in-process way to the dynalite worker (local/dynalite-worker.mjs): an SDK request handler that
// posts each request on a MessagePort instead of opening an HTTP connection to 127.0.0.1. The SDK
// serializes, signs (local stamp) and deserializes as always; only the transport differs. HTTP on both
// sides was the largest share of a local DynamoDB call's CPU after the SDK itself.
import { MessageChannel } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { LocalStackError } from "./errors.ts";

/** What the worker answers for one request. */
type ChannelAnswer = { id: number; status: number; headers: Record<string, string>; body: string };

/** The request fields the handler reads (the SDK's HttpRequest). */
type ChannelRequest = {
  method: string;
  path: string;
  query?: Record<string, unknown>;
  headers: Record<string, string>;
  body?: unknown;
};

/** An SDK request handler over a MessagePort to the dynalite worker. */
export type DynaliteChannel = {
  /** The port to hand to the worker (transfer it in workerData). */
  readonly workerPort: MessagePort;
  /** The SDK `requestHandler`: `handle(request)` resolves with `{ response }`. */
  readonly requestHandler: {
    readonly metadata: { handlerProtocol: string };
    handle(
      request: ChannelRequest,
    ): Promise<{ response: { statusCode: number; headers: Record<string, string>; body: Uint8Array } }>;
    updateHttpClientConfig(): void;
    httpHandlerConfigs(): Record<string, never>;
  };
  /** Asks the worker to stop once it has answered every request sent before this call (same port, same order). */
  requestStop(): void;
  /** Fails every request still waiting (the worker is gone) and closes the port. */
  close(reason: string): void;
};

/** A channel to the dynalite worker: requests wait for their answer by id; the port holds the process open only while one waits. */
export function createDynaliteChannel(): DynaliteChannel {
  const { port1: port, port2: workerPort } = new MessageChannel();
  const waiting = new Map<number, { resolve: (a: ChannelAnswer) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  let closed: string | undefined;
  port.unref();
  port.on("message", (answer: ChannelAnswer) => {
    const w = waiting.get(answer.id);
    if (!w) return;
    waiting.delete(answer.id);
    if (waiting.size === 0) port.unref();
    w.resolve(answer);
  });
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const bodyText = (body: unknown): string =>
    body === undefined || body === null
      ? ""
      : typeof body === "string"
        ? body
        : body instanceof Uint8Array
          ? decoder.decode(body)
          : String(body);
  return {
    workerPort,
    requestHandler: {
      metadata: { handlerProtocol: "http/1.1" },
      async handle(request) {
        if (closed !== undefined) throw new LocalStackError("EMULATOR_STOPPED", `dynalite is stopped (${closed})`);
        const id = nextId++;
        const answer = await new Promise<ChannelAnswer>((resolve, reject) => {
          if (waiting.size === 0) port.ref();
          waiting.set(id, { resolve, reject });
          port.postMessage({
            id,
            method: request.method,
            path: request.path,
            headers: request.headers,
            body: bodyText(request.body),
          });
        });
        return { response: { statusCode: answer.status, headers: answer.headers, body: encoder.encode(answer.body) } };
      },
      updateHttpClientConfig() {},
      httpHandlerConfigs: () => ({}),
    },
    requestStop() {
      if (closed === undefined) port.postMessage("stop");
    },
    close(reason) {
      if (closed !== undefined) return;
      closed = reason;
      for (const w of waiting.values())
        w.reject(new LocalStackError("EMULATOR_STOPPED", `dynalite stopped before it answered (${reason})`));
      waiting.clear();
      port.close();
    },
  };
}
