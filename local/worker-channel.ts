// The in-process way to an emulator running in a worker thread (dynalite: local/dynalite-worker.mjs, fauxqs:
// local/sqs-worker.mjs): an SDK request handler that posts each request on a MessagePort instead of opening an
// HTTP connection to 127.0.0.1. The SDK serializes, signs (local stamp) and deserializes as always; only the
// transport differs. HTTP on both sides was the largest share of a local call's CPU after the SDK itself.
import { MessageChannel } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { LocalStackError } from "./errors.ts";
import type { InProcessRequestHandler } from "./in-process/handlers.ts";

export type { ChannelRequest, InProcessRequestHandler } from "./in-process/handlers.ts";
export { inProcessHandlerAt, registerInProcessHandler } from "./in-process/handlers.ts";

/** What the worker answers for one request. */
export type ChannelAnswer = { id: number; status: number; headers: Record<string, string>; body: string };

/** An SDK request handler over a MessagePort to an emulator's worker. */
export type WorkerChannel = {
  /** The port to hand to the worker (transfer it in workerData). */
  readonly workerPort: MessagePort;
  readonly requestHandler: InProcessRequestHandler;
  /** Opens another way into the worker for another thread (transfer the port there; see `portClient`). */
  attach(): MessagePort;
  /** Asks the worker to stop once it has answered every request sent before this call (same port, same order). */
  requestStop(): void;
  /** Fails every request still waiting (the worker is gone) and closes the port. */
  close(reason: string): void;
};

/** Options of `createWorkerChannel`. */
export type WorkerChannelOptions = {
  /** The emulator's name, in errors. */
  readonly name: string;
  /** Sees every answered request before its caller does (the queue journal: on disk before the answer is heard). */
  readonly observe?: (request: { headers: Record<string, string>; body: string }, answer: ChannelAnswer) => void;
};

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** An SDK request body as text (the channel carries strings). */
export const bodyText = (body: unknown): string =>
  body === undefined || body === null
    ? ""
    : typeof body === "string"
      ? body
      : body instanceof Uint8Array
        ? decoder.decode(body)
        : String(body);

/** A channel to an emulator's worker: requests wait for their answer by id; the port holds the process open only while one waits. */
export function createWorkerChannel(options: WorkerChannelOptions): WorkerChannel {
  const { port1: port, port2: workerPort } = new MessageChannel();
  const client = portClient(port, options);
  return {
    workerPort,
    requestHandler: client.requestHandler,
    attach() {
      // The worker serves the attached port like its own (dynalite-worker.mjs); `observe` does not see its requests.
      const { port1: mine, port2: theirs } = new MessageChannel();
      port.postMessage({ attach: theirs }, [theirs]);
      return mine;
    },
    requestStop() {
      if (!client.closed()) port.postMessage("stop");
    },
    close: client.close,
  };
}

/** What an SDK request's abort signal offers (the SDK's own AbortSignalLike). */
type SignalLike = {
  readonly aborted: boolean;
  addEventListener?(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener?(type: "abort", listener: () => void): void;
};

/**
 * Requests sent on `port` and answered by id (`name` says whose port in errors): a request waits for the answer
 * with its id; the port holds its thread open only while one waits; an aborted request is forgotten (the late
 * answer finds no one waiting), after `abortMessage` is sent when given; `close` fails every request still waiting.
 */
export function portCalls<A extends { readonly id: number }>(
  port: MessagePort,
  name: string,
): {
  call(message: (id: number) => unknown, signal?: SignalLike, abortMessage?: (id: number) => unknown): Promise<A>;
  closed(): boolean;
  close(reason: string): void;
} {
  type Waiting = { resolve: (a: A) => void; reject: (e: Error) => void };
  const waiting = new Map<number, Waiting>();
  let nextId = 0;
  let closed: string | undefined;
  port.unref();
  const forget = (id: number) => {
    waiting.delete(id);
    if (waiting.size === 0) port.unref();
  };
  port.on("message", (answer: A) => {
    const w = waiting.get(answer.id);
    if (!w) return;
    forget(answer.id);
    w.resolve(answer);
  });
  return {
    async call(message, signal, abortMessage) {
      if (closed !== undefined) throw new LocalStackError("EMULATOR_STOPPED", `${name} is stopped (${closed})`);
      if (signal?.aborted) throw abortError();
      const id = nextId++;
      let onAbort: (() => void) | undefined;
      return new Promise<A>((resolve, reject) => {
        if (waiting.size === 0) port.ref();
        waiting.set(id, { resolve, reject });
        if (signal?.addEventListener) {
          onAbort = () => {
            forget(id);
            if (abortMessage) port.postMessage(abortMessage(id));
            reject(abortError());
          };
          signal.addEventListener("abort", onAbort, { once: true });
        }
        port.postMessage(message(id));
      }).finally(() => {
        if (onAbort) signal?.removeEventListener?.("abort", onAbort);
      });
    },
    closed: () => closed !== undefined,
    close(reason) {
      if (closed !== undefined) return;
      closed = reason;
      for (const w of waiting.values())
        w.reject(new LocalStackError("EMULATOR_STOPPED", `${name} stopped before it answered (${reason})`));
      waiting.clear();
      port.close();
    },
  };
}

/**
 * An SDK request handler over `port` (an emulator's worker, or another thread's channel): each request waits for
 * its answer by id (portCalls).
 */
export function portClient(
  port: MessagePort,
  options: WorkerChannelOptions,
): { readonly requestHandler: InProcessRequestHandler; closed(): boolean; close(reason: string): void } {
  const { name, observe } = options;
  const calls = portCalls<ChannelAnswer>(port, name);
  return {
    requestHandler: {
      metadata: { handlerProtocol: "http/1.1" },
      async handle(request, handleOptions) {
        const body = bodyText(request.body);
        const path = pathWithQuery(request);
        const answer = await calls.call(
          (id) => ({ id, method: request.method, path, headers: request.headers, body }),
          handleOptions?.abortSignal,
        );
        observe?.({ headers: request.headers, body }, answer);
        return { response: { statusCode: answer.status, headers: answer.headers, body: encoder.encode(answer.body) } };
      },
      updateHttpClientConfig() {},
      httpHandlerConfigs: () => ({}),
    },
    closed: calls.closed,
    close: calls.close,
  };
}

/** Text as the bytes an SDK response body carries. */
export const encodeBody = (text: string): Uint8Array => encoder.encode(text);

/** The error an aborted SDK request rejects with (the SDK and the poller know it by name). */
export function abortError(): Error {
  const error = new Error("Request aborted");
  error.name = "AbortError";
  return error;
}

/** The request's path with its query string, as a channel message carries it. */
export function pathWithQuery(request: { path: string; query?: Record<string, unknown> }): string {
  return request.query === undefined || Object.keys(request.query).length === 0
    ? request.path
    : `${request.path}?${queryString(request.query)}`;
}

/** `a=1&b=2` from the SDK's query object (values are strings or arrays of strings). */
function queryString(query: Record<string, unknown>): string {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (Array.isArray(value)) for (const v of value) out.append(key, String(v));
    else if (value !== undefined && value !== null) out.append(key, String(value));
  }
  return out.toString();
}
