// API Gateway HTTP API (payload 2.0) plumbing for the intake handler: the event schema, the body
// limit and the response shapes of SPEC §7.2 (`4xx { error: { code, message, issues? } }`).
import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import * as z from "zod";

/** Largest accepted request body (SPEC §7.2): larger bodies are answered 413. */
export const MAX_BODY_BYTES = 16 * 1024;

/** The fields of an API Gateway v2 event the intake handler reads. */
export const ApiEventSchema = z.object({
  version: z.literal("2.0"),
  routeKey: z.string().min(1),
  rawPath: z.string(),
  headers: z.record(z.string(), z.string()).default({}),
  pathParameters: z.record(z.string(), z.string()).optional(),
  body: z.string().optional(),
  isBase64Encoded: z.boolean().default(false),
  requestContext: z.object({ requestId: z.string(), http: z.object({ method: z.string(), path: z.string() }) }),
});

/** A parsed API request. */
export type ApiRequest = z.infer<typeof ApiEventSchema>;

/** One problem with the input, for the 400 body. */
export interface ApiIssue {
  path: string;
  message: string;
}

/** An HTTP response as API Gateway expects it from a Lambda integration. */
export type ApiResponse = APIGatewayProxyStructuredResultV2;

/** A JSON response. */
export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): ApiResponse {
  return { statusCode, headers: { "content-type": "application/json; charset=utf-8", ...headers }, body: JSON.stringify(body) };
}

/** An error response `{ error: { code, message, issues? } }`. */
export function apiError(statusCode: number, code: string, message: string, issues?: readonly ApiIssue[]): ApiResponse {
  return json(statusCode, { error: { code, message, ...(issues && issues.length > 0 ? { issues } : {}) } });
}

/** An HTML response. */
export function htmlResponse(body: string): ApiResponse {
  return { statusCode: 200, headers: { "content-type": "text/html; charset=utf-8" }, body };
}

/** The request body as bytes (API Gateway base64-encodes binary bodies). */
export function bodyBytes(request: ApiRequest): Buffer {
  if (request.body === undefined) return Buffer.alloc(0);
  return request.isBase64Encoded ? Buffer.from(request.body, "base64") : Buffer.from(request.body, "utf8");
}

/** Parses a JSON body, or explains why it is not JSON (as an issue on `(body)`). */
export function parseJsonBody(bytes: Buffer): { ok: true; value: unknown } | { ok: false; issues: ApiIssue[] } {
  if (bytes.length === 0) return { ok: false, issues: [{ path: "(body)", message: "the body is empty; send a JSON object" }] };
  try {
    return { ok: true, value: JSON.parse(bytes.toString("utf8")) as unknown };
  } catch (e) {
    return { ok: false, issues: [{ path: "(body)", message: `not valid JSON: ${(e as Error).message}` }] };
  }
}
