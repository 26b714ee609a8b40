// The only network door of an emulator that has no authentication of its own (dynalite, fauxqs): an HTTP
// server on 127.0.0.1 that reads the whole request, refuses it unless it carries a valid SigV4 signature
// of this run's keys (local/auth/sigv4.ts), answers no CORS preflight, and hands what passes to the emulator
// in-process (dynalite's worker channel, fauxqs's `inject`), dropping any Access-Control-* header the
// emulator adds. The emulator itself listens on no port.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { registerEndpointKeys } from "./auth/keys.ts";
import { EmulatorStartError } from "./errors.ts";
import { createSignatureCheck } from "./auth/sigv4.ts";
import type { SigningKeys } from "./auth/sigv4.ts";

/** A request that passed the check, as the emulator gets it. */
export type FrontRequest = {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
};

/** The emulator's answer. */
export type FrontAnswer = {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | number | string[] | undefined>>;
  readonly body: Uint8Array | string;
};

/** A running front. */
export type SignedFront = { readonly endpoint: string; stop(): Promise<void> };

/** Larger than any request the emulators accept (dynalite's limit is 16 MiB). */
const MAX_BODY_BYTES = 17 * 1024 * 1024;
/** Headers of the emulator's answer that the front sets itself or that must not pass. */
const DROPPED = /^(access-control-|content-length$|transfer-encoding$|connection$|keep-alive$)/;

/** Starts the front of `name` on 127.0.0.1 (random port); the endpoint's keys are registered for `localClientConfig`. */
export async function startSignedFront(options: {
  readonly name: string;
  readonly keys: SigningKeys;
  readonly forward: (request: FrontRequest) => Promise<FrontAnswer>;
}): Promise<SignedFront> {
  const check = createSignatureCheck(options.keys);
  const server = createServer((req, res) => void handle(req, res));
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const body = await readBody(req);
      if (body === undefined) return refuse(res, 413, "RequestEntityTooLarge", "the request body is too large");
      if (req.method === "OPTIONS") return refuse(res, 403, "AccessDeniedException", "no cross-origin access");
      const refusal = check({ method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body });
      if (refusal) return refuse(res, 403, refusal.type, refusal.message);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (value !== undefined && name !== "origin") headers[name] = Array.isArray(value) ? value.join(", ") : value;
      const answer = await options.forward({ method: req.method ?? "GET", url: req.url ?? "/", headers, body });
      const payload = typeof answer.body === "string" ? Buffer.from(answer.body, "utf8") : Buffer.from(answer.body);
      const out: Record<string, string | number | string[]> = { "content-length": payload.length };
      for (const [name, value] of Object.entries(answer.headers))
        if (value !== undefined && !DROPPED.test(name.toLowerCase())) out[name] = value;
      res.writeHead(answer.status, out);
      res.end(payload);
    } catch (error) {
      if (!res.headersSent)
        refuse(res, 500, "InternalFailure", `${options.name} failed: ${(error as Error).message ?? String(error)}`);
      else res.destroy();
    }
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => reject(new EmulatorStartError(`${options.name} could not listen`, error)));
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const unregister = registerEndpointKeys(endpoint, options.keys);
  let stopped: Promise<void> | undefined;
  return {
    endpoint,
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        unregister();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/** The whole body, or undefined when it is larger than the emulators accept. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** An AWS-style JSON error, without any Access-Control-* header. */
function refuse(res: ServerResponse, status: number, type: string, message: string): void {
  const payload = JSON.stringify({ __type: type, message });
  res.writeHead(status, {
    "content-type": "application/x-amz-json-1.0",
    "content-length": Buffer.byteLength(payload),
    "x-amzn-errortype": type,
    "x-amzn-requestid": randomUUID(),
  });
  res.end(payload);
}
