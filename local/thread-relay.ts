// The handler thread's way to the emulators (handler-thread.ts): its SDK clients post each request on a
// MessagePort to the stack's thread, which hands it to the emulator's in-process request handler there (dynalite's
// and fauxqs's worker channels, the bus's own request handling) and posts the answer back. So the emulators keep
// one door each on the stack's side: the queue journal sees every SQS answer before the caller, as before, and
// nothing listens on a port for the handler thread. The SDK serializes, stamps and deserializes in the handler
// thread as always; only the transport differs.
import type { MessagePort } from "node:worker_threads";
import { LocalStackError } from "./errors.ts";
import { inProcessHandlerAt } from "./in-process/handlers.ts";
import type { ChannelRequest, InProcessRequestHandler } from "./in-process/handlers.ts";
import { abortError, bodyText, encodeBody, pathWithQuery, portCalls } from "./worker-channel.ts";

const decoder = new TextDecoder();

/** One request relayed to the emulator at `endpoint`. */
type RelayRequest = {
  id: number;
  endpoint: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
};
/** The answer, or why there is none (the name keeps an AbortError an AbortError). */
type RelayAnswer =
  | { id: number; status: number; headers: Record<string, string>; body: string }
  | { id: number; error: { name: string; message: string; code?: string } };

/**
 * The stack's side: answers every request that comes on `port` through the in-process handler registered for its
 * endpoint (an endpoint this process does not run is refused). Returns the function that stops answering.
 */
export function serveRelay(port: MessagePort): () => void {
  const aborts = new Map<number, AbortController>();
  const onMessage = (m: RelayRequest | { abort: number }) => {
    if ("abort" in m) return void aborts.get(m.abort)?.abort();
    void answer(m).then((a) => port.postMessage(a));
  };
  const answer = async (m: RelayRequest): Promise<RelayAnswer> => {
    const handler = inProcessHandlerAt(m.endpoint);
    if (handler === undefined)
      return {
        id: m.id,
        error: {
          name: "LocalStackError",
          code: "EMULATOR_STOPPED",
          message: `no emulator of this run at ${m.endpoint}`,
        },
      };
    const abort = new AbortController();
    aborts.set(m.id, abort);
    try {
      const { response } = await handler.handle(
        { method: m.method, path: m.path, headers: m.headers, body: m.body },
        { abortSignal: abort.signal },
      );
      return { id: m.id, status: response.statusCode, headers: response.headers, body: decoder.decode(response.body) };
    } catch (error) {
      const e = error instanceof Error ? error : new Error(String(error));
      const code = (e as { code?: unknown }).code;
      return { id: m.id, error: { name: e.name, message: e.message, ...(typeof code === "string" ? { code } : {}) } };
    } finally {
      aborts.delete(m.id);
    }
  };
  port.on("message", onMessage);
  return () => {
    port.off("message", onMessage);
    for (const a of aborts.values()) a.abort();
  };
}

/** The handler thread's side: an SDK request handler per endpoint, all over `port`. */
export function relayClient(port: MessagePort): {
  handlerFor(endpoint: string): InProcessRequestHandler;
  /** Fails every request still waiting and closes the port. */
  close(reason: string): void;
} {
  const calls = portCalls<RelayAnswer>(port, "the stack");
  const handlerFor = (endpoint: string): InProcessRequestHandler => ({
    metadata: { handlerProtocol: "http/1.1" },
    async handle(request: ChannelRequest, options) {
      const a = await calls.call(
        (id): RelayRequest => ({
          id,
          endpoint,
          method: request.method,
          path: pathWithQuery(request),
          headers: request.headers,
          body: bodyText(request.body),
        }),
        options?.abortSignal,
        (id) => ({ abort: id }),
      );
      if ("error" in a) throw relayedError(a.error);
      return { response: { statusCode: a.status, headers: a.headers, body: encodeBody(a.body) } };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
  });
  return { handlerFor, close: calls.close };
}

/** The relayed failure as this thread's error: an abort stays an AbortError, anything else a LocalStackError with its code. */
function relayedError(e: { name: string; message: string; code?: string }): Error {
  if (e.name === "AbortError") return abortError();
  return new LocalStackError(e.code ?? "EMULATOR_RELAY", e.message);
}
