// The local API Gateway: a node:http server that maps each request to an API Gateway HTTP API
// (payload 2.0) event, runs the Lambda authorizer on the routes app/manifest.ts protects, then the
// intake handler, and writes its structured result back. Bodies over 16 KB are refused with 413
// without reading past the limit.
import { randomUUID } from "node:crypto";
import { STATUS_CODES, createServer } from "node:http";
import type { Duplex } from "node:stream";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2, APIGatewayRequestAuthorizerEventV2 } from "aws-lambda";
import type { AuthorizerFn } from "./auth/authorizer.ts";
import { MAX_BODY_BYTES } from "../functions/http/http.ts";
import { ROUTES } from "../app/manifest.ts";
import type { RouteAuth, RouteFact } from "../app/manifest.ts";
import type { RefundDueLine } from "../core/kernel/refund-due.ts";
import { HttpFrontError } from "./errors.ts";

/** The routes of app/manifest.ts: each goes to its function, behind the authorizer of its token (none for auth "none"). */
const API_ROUTES = Object.entries(ROUTES).map(([routeKey, route]) => ({
  routeKey,
  auth: route.auth,
  fn: route.fn,
  tokenPage: "tokenPage" in route,
}));

type ApiFn = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyResultV2>;
/** Options of `startHttpFront`. */
interface HttpFrontOptions {
  /** The function behind each route (RouteFact.fn); without the payment webhook's (no provider with a webhook, or no signing secret), its routes are 404. */
  readonly functions: Readonly<Record<Exclude<RouteFact["fn"], "paymentWebhook">, ApiFn>> &
    Readonly<Partial<Record<"paymentWebhook", ApiFn>>>;
  /** The authorizer of each kind of token (RouteFact.auth). */
  readonly authorizers: Readonly<Record<Exclude<RouteAuth, "none">, AuthorizerFn>>;
  /** Default 3000; 0 picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** One line per request (method, path, status, ms). */
  readonly onRequest?: (line: { method: string; path: string; status: number; ms: number }) => void;
  /** What `GET /health` answers (default: the function's `{ "status": "ok" }`); `claims serve` says whether the model and the order API answer. */
  readonly health?: () => HealthAnswer;
  /** Where a reviewer's token comes from, as a refusal names it (default CLAIMS_REVIEWER_TOKEN; a reviewers file: each reviewer's own). */
  readonly reviewerTokenSource?: string;
}

/**
 * The body of `GET /health`: ok, or degraded naming what does not answer — the configured model, the shop's order
 * API; either way a warning, `refunds_due_soon`, naming the refunds near their legal deadline (not a failure).
 */
export type HealthAnswer = (
  | { readonly status: "ok" }
  | { readonly status: "degraded"; readonly llm?: "unreachable"; readonly orders?: "unreachable" }
) & { readonly refunds_due_soon?: readonly RefundDueLine[] };

/** `GET /health`'s answer from what does not answer now and the refunds near their legal deadline. */
export function healthAnswer(
  down: { llm: boolean; orders: boolean },
  refundsDueSoon: readonly RefundDueLine[] = [],
): HealthAnswer {
  const warning = refundsDueSoon.length > 0 ? { refunds_due_soon: refundsDueSoon } : {};
  if (!down.llm && !down.orders) return { status: "ok", ...warning };
  return {
    status: "degraded",
    ...(down.llm ? { llm: "unreachable" as const } : {}),
    ...(down.orders ? { orders: "unreachable" as const } : {}),
    ...warning,
  };
}

/** A running HTTP front. */
export interface HttpFront {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Matches `method path` against the routes of app/manifest.ts; returns the route and its path parameters. */
export function matchRoute(
  method: string,
  path: string,
):
  | {
      routeKey: string;
      auth: RouteAuth;
      fn: RouteFact["fn"];
      tokenPage: boolean;
      pathParameters: Record<string, string>;
    }
  | undefined {
  const segments = path.split("/").slice(1);
  for (const route of API_ROUTES) {
    const [routeMethod, template] = route.routeKey.split(" ") as [string, string];
    const parts = template.split("/").slice(1);
    if (routeMethod !== method || parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const ok = parts.every((p, i) => {
      const seg = segments[i] ?? "";
      if (p.startsWith("{") && p.endsWith("}")) {
        if (seg === "") return false;
        params[p.slice(1, -1)] = safeDecode(seg);
        return true;
      }
      return p === seg;
    });
    if (ok) return { ...route, pathParameters: params };
  }
  return undefined;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * API Gateway's v2 header map: lowercased names, repeated headers joined with commas — every header,
 * Authorization included (Node keeps only the first of some duplicates in `req.headers`, so the raw
 * headers are read): two Authorization headers reach the authorizer as one joined value, as on AWS.
 */
function headerMap(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values === undefined) continue;
    out[name.toLowerCase()] = values.join(",");
  }
  return out;
}

const TEXT = /^(application\/(json|[\w.+-]*\+json|x-www-form-urlencoded|xml)|text\/)/i;

/** Builds the API Gateway v2 event of a request. */
function toApiEvent(
  req: IncomingMessage,
  url: URL,
  route: { routeKey: string; pathParameters: Record<string, string> },
  body: Buffer,
  now = new Date(),
): APIGatewayProxyEventV2 {
  const headers = headerMap(req);
  const method = req.method ?? "GET";
  const text = body.length === 0 || TEXT.test(headers["content-type"] ?? "application/json");
  const query = Object.fromEntries(url.searchParams);
  return {
    version: "2.0",
    routeKey: route.routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ""),
    ...(headers.cookie ? { cookies: headers.cookie.split(/;\s*/) } : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(Object.keys(route.pathParameters).length > 0 ? { pathParameters: route.pathParameters } : {}),
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      domainName: headers.host ?? "localhost",
      domainPrefix: (headers.host ?? "localhost").split(".")[0] ?? "localhost",
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: randomUUID(),
      routeKey: route.routeKey,
      stage: "$default",
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 ? { body: text ? body.toString("utf8") : body.toString("base64") } : {}),
    isBase64Encoded: body.length > 0 && !text,
  };
}

/** The authorizer event API Gateway builds for a request (identity source: the Authorization header). */
function toAuthorizerEvent(event: APIGatewayProxyEventV2): APIGatewayRequestAuthorizerEventV2 {
  return {
    version: "2.0",
    type: "REQUEST",
    routeArn: `arn:aws:execute-api:us-east-1:000000000000:local/$default/${event.routeKey.replace(" ", "")}`,
    identitySource: event.headers.authorization ? [event.headers.authorization] : [],
    routeKey: event.routeKey,
    rawPath: event.rawPath,
    rawQueryString: event.rawQueryString,
    cookies: event.cookies ?? [],
    headers: event.headers,
    requestContext: event.requestContext,
    ...(event.pathParameters ? { pathParameters: event.pathParameters } : {}),
  };
}

type Sent = { status: number };

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string | Buffer): Sent {
  res.writeHead(status, { ...headers, "content-length": String(Buffer.byteLength(body)) });
  res.end(body);
  return { status };
}

/**
 * A request Node's parser refuses (a bad header byte, a malformed Content-Length, headers too large) is answered
 * like every other refusal, `{ error: { code, message } }`, instead of Node's bare 400; then the connection closes.
 */
function refuseMalformed(error: NodeJS.ErrnoException, socket: Duplex): void {
  // As Node's own handler does: answer only when no answer on this connection has started (an in-flight response
  // whose head went out must not be corrupted), then drop the connection.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean; req?: { method?: string } } })
    ._httpMessage;
  if (error.code !== "ECONNRESET" && socket.writable && !inFlight?.headersSent) {
    const [status, code, message] =
      error.code === "HPE_HEADER_OVERFLOW"
        ? [431, "HEADERS_TOO_LARGE", "the request's headers are too large"]
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? [408, "REQUEST_TIMEOUT", "the request was not received in time"]
          : [400, "MALFORMED_REQUEST", `the request is not valid HTTP (${error.code ?? "parse error"})`];
    // The answer goes to the request in flight, if any: an answer to a HEAD carries no body.
    const body = inFlight?.req?.method === "HEAD" ? "" : JSON.stringify({ error: { code, message } });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

function sendError(res: ServerResponse, status: number, code: string, message: string, close = false): Sent {
  return send(
    res,
    status,
    { "content-type": "application/json; charset=utf-8", ...(close ? { connection: "close" } : {}) },
    JSON.stringify({ error: { code, message } }),
  );
}

/** Reads the body up to `limit` bytes; undefined when it is longer (then nothing more is read). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off("data", onData);
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
  });
}

function writeResult(res: ServerResponse, result: APIGatewayProxyResultV2): Sent {
  if (typeof result === "string") return send(res, 200, { "content-type": "application/json" }, result);
  const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k, String(v)]));
  const body =
    result.body === undefined ? "" : result.isBase64Encoded ? Buffer.from(result.body, "base64") : result.body;
  return send(res, result.statusCode ?? 200, headers, body);
}

/**
 * The request target as a URL, its path taken as sent (as API Gateway does: `//claims` is the path `//claims`,
 * not a host), or undefined when it cannot be read (then the answer is 400, never a 500).
 */
function requestUrl(target: string | undefined): URL | undefined {
  const raw = target ?? "/";
  try {
    return raw.startsWith("/") ? new URL(`http://localhost${raw}`) : new URL(raw, "http://localhost");
  } catch {
    return undefined;
  }
}

/** Starts the HTTP front; rejects with HttpFrontError when the port cannot be bound. */
export async function startHttpFront(options: HttpFrontOptions): Promise<HttpFront> {
  const host = options.host ?? "127.0.0.1";
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<Sent> => {
    const url = requestUrl(req.url);
    if (!url) return sendError(res, 400, "BAD_REQUEST", "the request target could not be read", true);
    // HEAD /health answers like GET (uptime probes use HEAD); Node sends no body for a HEAD request.
    const method = req.method === "HEAD" && url.pathname === "/health" ? "GET" : (req.method ?? "GET");
    const route = matchRoute(method, url.pathname);
    if (!route) return sendError(res, 404, "NOT_FOUND", `no route for ${req.method} ${url.pathname}`);
    if (route.routeKey === "GET /health" && options.health)
      return send(res, 200, { "content-type": "application/json" }, JSON.stringify(options.health()));
    let authorizer: unknown;
    // A tokenPage route checks the token in its function, as on AWS (a browser without one gets the token page).
    if (route.auth !== "none" && !route.tokenPage) {
      // As API Gateway: no Authorization header is 401 before any authorizer runs; a token the route's authorizer refuses is 403.
      const probe = toApiEvent(req, url, route, Buffer.alloc(0));
      const variable =
        route.auth === "reviewer" ? (options.reviewerTokenSource ?? "CLAIMS_REVIEWER_TOKEN") : "CLAIMS_API_TOKEN";
      if (!probe.headers.authorization)
        return sendError(res, 401, "UNAUTHORIZED", `send Authorization: Bearer <token> (${variable})`, true);
      const answer = await options.authorizers[route.auth](toAuthorizerEvent(probe));
      if (!answer.isAuthorized)
        return answer.kind === "jwt"
          ? sendError(
              res,
              401,
              "UNAUTHORIZED",
              "the token is not a valid JWT of the configured issuer and audience",
              true,
            )
          : sendError(res, 403, "FORBIDDEN", `this route needs the ${route.auth} token (${variable})`, true);
      authorizer = answer.jwt
        ? { jwt: answer.jwt }
        : answer.context && Object.keys(answer.context).length > 0
          ? { lambda: answer.context }
          : undefined;
    }
    const declared = Number(req.headers["content-length"] ?? 0);
    const body = declared > MAX_BODY_BYTES ? undefined : await readBody(req, MAX_BODY_BYTES);
    if (body === undefined)
      return sendError(res, 413, "PAYLOAD_TOO_LARGE", `request bodies are limited to ${MAX_BODY_BYTES} bytes`, true);
    const fn = options.functions[route.fn];
    if (fn === undefined)
      return sendError(
        res,
        404,
        "NOT_FOUND",
        `${route.routeKey} is not served here (no payment provider with a webhook, or its signing secret is not set)`,
        true,
      );
    const event = toApiEvent(req, url, route, body);
    if (authorizer) (event.requestContext as { authorizer?: unknown }).authorizer = authorizer;
    return writeResult(res, await fn(event));
  };
  const server = createServer((req, res) => {
    const t0 = performance.now();
    handle(req, res)
      .catch((error: unknown) => {
        console.error(`[http] ${req.method} ${req.url}: ${(error as Error).message}`);
        return res.headersSent ? { status: 500 } : sendError(res, 500, "INTERNAL", "internal error");
      })
      .then((sent) => {
        // A refused body is not read to its end: close the connection rather than drain it.
        if (res.getHeader("connection") === "close") res.once("finish", () => req.socket.destroySoon?.());
        options.onRequest?.({
          method: req.method ?? "?",
          path: requestUrl(req.url)?.pathname ?? String(req.url),
          status: sent.status,
          ms: performance.now() - t0,
        });
      });
  });
  server.on("clientError", refuseMalformed);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e) =>
      reject(new HttpFrontError(`cannot listen on ${host}:${options.port ?? 3000}: ${e.message}`, e)),
    );
    server.listen(options.port ?? 3000, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
