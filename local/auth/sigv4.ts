// Checks an AWS Signature Version 4 the way AWS does for a header-signed request: the access key is this
// run's, the signature recomputed from the method, path, query, signed headers and the SHA-256 of the body
// with this run's secret matches, `host` and `x-amz-date` are signed, and the request was signed within
// 15 minutes of now. A present-but-wrong signature, another key, a body changed after signing or an old
// request is refused. Presigned URLs (the signature in the query) and unsigned payloads are not accepted.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** The key pair requests must be signed with. */
export type SigningKeys = { readonly accessKeyId: string; readonly secretAccessKey: string };

/** A request as it arrived: the raw path and query (`req.url`), its headers and its whole body. */
export type ArrivedRequest = {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body: Uint8Array;
};

/** Why a request was refused, with the error type AWS answers for it. */
export type SignatureRefusal = {
  readonly type: "MissingAuthenticationTokenException" | "UnrecognizedClientException" | "InvalidSignatureException";
  readonly message: string;
};

const ALGORITHM = "AWS4-HMAC-SHA256";
const MAX_SKEW_MS = 15 * 60 * 1000;
const AUTH_PATTERN =
  /^AWS4-HMAC-SHA256 Credential=([^/\s,]+)\/(\d{8})\/([^/\s,]+)\/([^/\s,]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;_.-]+),\s*Signature=([0-9a-f]{64})$/;

/** A checker for one key pair; it keeps the derived signing keys (one per day, region and service). */
export function createSignatureCheck(
  keys: SigningKeys,
  now: () => number = Date.now,
): (request: ArrivedRequest) => SignatureRefusal | undefined {
  const signingKeys = new Map<string, Buffer>();
  const signingKey = (date: string, region: string, service: string): Buffer => {
    const id = `${date}/${region}/${service}`;
    let key = signingKeys.get(id);
    if (key === undefined) {
      key = hmac(hmac(hmac(hmac(`AWS4${keys.secretAccessKey}`, date), region), service), "aws4_request");
      if (signingKeys.size > 16) signingKeys.clear();
      signingKeys.set(id, key);
    }
    return key;
  };
  return (request) => {
    const authorization = header(request.headers, "authorization");
    if (authorization === undefined)
      return { type: "MissingAuthenticationTokenException", message: "Request is missing Authentication Token" };
    const auth = AUTH_PATTERN.exec(authorization.trim());
    if (!auth) return invalid("the Authorization header is not an AWS4-HMAC-SHA256 signature");
    const [, accessKeyId, date, region, service, signedHeaderList, signature] = auth as unknown as string[];
    if (accessKeyId !== keys.accessKeyId)
      return { type: "UnrecognizedClientException", message: "The security token included in the request is invalid." };
    const amzDate = header(request.headers, "x-amz-date");
    const signedHeaders = signedHeaderList!.split(";");
    if (amzDate === undefined || !signedHeaders.includes("x-amz-date") || !signedHeaders.includes("host"))
      return invalid("host and x-amz-date must be signed");
    const signedAt = parseAmzDate(amzDate);
    if (signedAt === undefined || !amzDate.startsWith(date!))
      return invalid("x-amz-date does not match the credential");
    if (Math.abs(now() - signedAt) > MAX_SKEW_MS) return invalid("Signature expired: signed more than 15 minutes ago");
    const payloadHash = createHash("sha256").update(request.body).digest("hex");
    const claimedHash = header(request.headers, "x-amz-content-sha256");
    if (claimedHash !== undefined && claimedHash !== payloadHash)
      return invalid("x-amz-content-sha256 does not match the body");
    const canonicalHeaders: string[] = [];
    for (const name of signedHeaders) {
      const value = header(request.headers, name);
      if (value === undefined) return invalid(`the signed header ${name} is missing`);
      canonicalHeaders.push(`${name}:${value.trim().replace(/\s+/g, " ")}\n`);
    }
    const queryAt = request.url.indexOf("?");
    const path = queryAt < 0 ? request.url : request.url.slice(0, queryAt);
    const query = queryAt < 0 ? "" : request.url.slice(queryAt + 1);
    let canonicalRequest: string;
    try {
      canonicalRequest = [
        request.method.toUpperCase(),
        canonicalPath(path),
        canonicalQuery(query),
        canonicalHeaders.join(""),
        signedHeaderList,
        payloadHash,
      ].join("\n");
    } catch {
      return invalid("the request's path or query is not validly encoded");
    }
    const stringToSign = [
      ALGORITHM,
      amzDate,
      `${date}/${region}/${service}/aws4_request`,
      createHash("sha256").update(canonicalRequest).digest("hex"),
    ].join("\n");
    const expected = hmac(signingKey(date!, region!, service!), stringToSign);
    const given = Buffer.from(signature!, "hex");
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return invalid(
        "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.",
      );
    return undefined;
  };
}

function invalid(message: string): SignatureRefusal {
  return { type: "InvalidSignatureException", message };
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data, "utf8").digest();
}

function header(headers: ArrivedRequest["headers"], name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return typeof value === "string" ? value : value.join(",");
}

/** `20260101T000000Z` as epoch ms; undefined when malformed. */
function parseAmzDate(value: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return undefined;
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return Number.isNaN(ms) ? undefined : ms;
}

/** RFC 3986 encoding as the SDK's signer does it (encodeURIComponent plus !'()*). */
function escapeUri(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The path as the SDK signs it: dot segments and empty segments removed, then each character encoded once more. */
function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  const normalized = `${path.startsWith("/") ? "/" : ""}${segments.join("/")}${segments.length > 0 && path.endsWith("/") ? "/" : ""}`;
  return escapeUri(normalized).replace(/%2F/g, "/");
}

/** Query parameters sorted by name then value, each encoded (X-Amz-Signature left out, as signers do). */
function canonicalQuery(query: string): string {
  if (query === "") return "";
  const pairs: Array<[string, string]> = [];
  for (const part of query.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
    const key = decode(eq < 0 ? part : part.slice(0, eq));
    if (key.toLowerCase() === "x-amz-signature") continue;
    pairs.push([escapeUri(key), escapeUri(eq < 0 ? "" : decode(part.slice(eq + 1)))]);
  }
  pairs.sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join("&");
}
