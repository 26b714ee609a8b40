// The in-process ways to the emulators this process runs, by endpoint: an SDK request handler that reaches an
// emulator without its port (a worker's MessagePort, or the local bus's own request handling). Its own folder, so
// the emulators (local/eventbridge) and the stack (local/) both use it without a cycle between them.
import type { MessagePort } from "node:worker_threads";

/** The request fields the handler reads (the SDK's HttpRequest). */
export type ChannelRequest = {
  method: string;
  path: string;
  query?: Record<string, unknown>;
  headers: Record<string, string>;
  body?: unknown;
};

/** The part of an AbortSignal the SDK hands a request handler. */
export type AbortSignalLike = {
  readonly aborted: boolean;
  addEventListener?: (type: "abort", listener: () => void, options?: { once?: boolean }) => void;
  removeEventListener?: (type: "abort", listener: () => void) => void;
};

/** An SDK `requestHandler` that reaches an emulator of this process without a port: `handle(request, { abortSignal })` resolves with `{ response }`. */
export type InProcessRequestHandler = {
  readonly metadata: { handlerProtocol: string };
  handle(
    request: ChannelRequest,
    options?: { abortSignal?: AbortSignalLike },
  ): Promise<{ response: { statusCode: number; headers: Record<string, string>; body: Uint8Array } }>;
  updateHttpClientConfig(): void;
  httpHandlerConfigs(): Record<string, never>;
};

/** The in-process request handlers of the emulators this process runs, by endpoint (their port's). */
const handlers = new Map<string, InProcessRequestHandler>();

/** Registers the in-process way to the emulator whose port is `endpoint`; returns the function that unregisters it. */
export function registerInProcessHandler(endpoint: string, handler: InProcessRequestHandler): () => void {
  handlers.set(endpoint, handler);
  return () => {
    if (handlers.get(endpoint) === handler) handlers.delete(endpoint);
  };
}

/** The in-process request handler of the emulator at `endpoint`, if this process runs it. */
export function inProcessHandlerAt(endpoint: string): InProcessRequestHandler | undefined {
  return handlers.get(endpoint);
}

/** Opens a port straight into the emulator at `endpoint`'s worker, for another thread (see worker-channel.ts `attach`). */
type PortSource = () => MessagePort;

/** The emulators whose worker another thread may reach directly, by endpoint (those with no observer on their answers). */
const portSources = new Map<string, PortSource>();

/** Registers how another thread reaches the emulator at `endpoint` directly; returns the function that unregisters it. */
export function registerPortSource(endpoint: string, source: PortSource): () => void {
  portSources.set(endpoint, source);
  return () => {
    if (portSources.get(endpoint) === source) portSources.delete(endpoint);
  };
}

/** How another thread reaches the emulator at `endpoint` directly, if it may. */
export function portSourceAt(endpoint: string): PortSource | undefined {
  return portSources.get(endpoint);
}
