// Test support: a local stand-in for AWS KMS, only because no KMS can run here (no KMS emulator is installed, moto
// neither). It speaks KMS's JSON 1.1 wire format (`X-Amz-Target: TrentService.GenerateDataKey` / `.Decrypt`, base64
// blobs) so the real `@aws-sdk/client-kms` talks to it unchanged, refuses any request not SigV4-signed with this
// run's random keys (local/auth/sigv4.ts), and binds a data key to its encryption context as KMS does: Decrypt with
// another context, another key or a changed blob is InvalidCiphertextException. Each KMS key wraps with its own AES
// master key; a blob names its key, as KMS's do. Tests turn it off (`failing`) or deny an operation (`denied`).
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createSignatureCheck } from "../auth/sigv4.ts";

const REGION = "us-east-1";
const ACCOUNT = "111122223333";

/** The stand-in: its endpoint and credentials, its one key, what it was asked, and switches for failures. */
export interface KmsStandIn {
  readonly endpoint: string;
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** The key's ARN and its alias (`alias/claims-crew-test-personal-data`): either names it. */
  readonly keyArn: string;
  readonly alias: string;
  /** Operations answered or refused, in order: "GenerateDataKey", "Decrypt", "Decrypt refused: …". */
  readonly calls: string[];
  /** Every data key it handed out in plaintext (base64), to prove none is stored. */
  readonly plaintextKeys: string[];
  /** Answer every call with 500 KMSInternalException (KMS down). */
  failing: boolean;
  /** Operations answered AccessDeniedException (a role without the action). */
  denied: Set<"GenerateDataKey" | "Decrypt">;
  /** The client settings of the real SDK for it. */
  clientConfig(): { endpoint: string; region: string; credentials: { accessKeyId: string; secretAccessKey: string } };
  stop(): Promise<void>;
}

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
  });

function send(res: ServerResponse, status: number, body: unknown, errorType?: string): void {
  res.writeHead(status, {
    "content-type": "application/x-amz-json-1.1",
    "x-amzn-requestid": randomUUID(),
    ...(errorType ? { "x-amzn-errortype": errorType } : {}),
  });
  res.end(JSON.stringify(errorType ? { __type: errorType, message: (body as { message: string }).message } : body));
}

/** The encryption context as KMS binds it: every pair, in key order (the order of the request does not matter). */
const contextAad = (context: Record<string, string> | undefined): Buffer =>
  Buffer.from(JSON.stringify(Object.entries(context ?? {}).sort(([a], [b]) => a.localeCompare(b))));

/**
 * Starts the stand-in on 127.0.0.1 (a free port) with one symmetric key and its alias, accepting only `credentials`
 * (default: keys of its own; pass the emulators' when one process's environment signs for both).
 */
export async function startKmsStandIn(
  options: { credentials?: { accessKeyId: string; secretAccessKey: string } } = {},
): Promise<KmsStandIn> {
  const credentials = options.credentials ?? {
    accessKeyId: `AKID${randomBytes(8).toString("hex").toUpperCase()}`,
    secretAccessKey: randomBytes(24).toString("base64"),
  };
  const check = createSignatureCheck(credentials);
  const keyArn = `arn:aws:kms:${REGION}:${ACCOUNT}:key/${randomUUID()}`;
  const alias = "alias/claims-crew-test-personal-data";
  const master = randomBytes(32);
  const resolveKey = (id: unknown): string | undefined =>
    id === keyArn || id === alias || id === `arn:aws:kms:${REGION}:${ACCOUNT}:${alias}` || id === keyArn.split("/")[1]
      ? keyArn
      : undefined;

  const state = { failing: false, denied: new Set<"GenerateDataKey" | "Decrypt">() };
  const calls: string[] = [];
  const plaintextKeys: string[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const refusal = check({ method: req.method ?? "POST", url: req.url ?? "/", headers: req.headers, body: raw });
      if (refusal) return send(res, 400, { message: refusal.message }, refusal.type);
      const op = String(req.headers["x-amz-target"] ?? "").replace(/^TrentService\./, "");
      if (state.failing) {
        calls.push(`${op} refused: KMS down`);
        return send(res, 500, { message: "KMS is down (stand-in)" }, "KMSInternalException");
      }
      if (op === "GenerateDataKey" || op === "Decrypt") {
        if (state.denied.has(op)) {
          calls.push(`${op} refused: denied`);
          return send(res, 400, { message: `not authorized to perform: kms:${op}` }, "AccessDeniedException");
        }
      }
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
      } catch {
        return send(res, 400, { message: "the body is not JSON" }, "SerializationException");
      }
      const context = input.EncryptionContext as Record<string, string> | undefined;
      if (op === "GenerateDataKey") {
        const key = resolveKey(input.KeyId);
        if (key === undefined)
          return send(res, 400, { message: `Key '${String(input.KeyId)}' does not exist` }, "NotFoundException");
        if (input.KeySpec !== "AES_256")
          return send(res, 400, { message: "only KeySpec AES_256 here" }, "ValidationException");
        calls.push("GenerateDataKey");
        const plaintext = randomBytes(32);
        const iv = randomBytes(12);
        const cipher = createCipheriv("aes-256-gcm", master, iv).setAAD(
          Buffer.concat([Buffer.from(key), contextAad(context)]),
        );
        const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
        const keyName = Buffer.from(key, "utf8");
        const blob = Buffer.concat([Buffer.of(keyName.length), keyName, iv, cipher.getAuthTag(), ct]);
        plaintextKeys.push(plaintext.toString("base64"));
        return send(res, 200, {
          KeyId: key,
          Plaintext: plaintext.toString("base64"),
          CiphertextBlob: blob.toString("base64"),
        });
      }
      if (op === "Decrypt") {
        const blob = Buffer.from(String(input.CiphertextBlob ?? ""), "base64");
        const invalid = (why: string) => {
          calls.push(`Decrypt refused: ${why}`);
          send(res, 400, { message: `InvalidCiphertextException: ${why}` }, "InvalidCiphertextException");
        };
        const nameLength = blob[0] ?? 0;
        const key = blob.subarray(1, 1 + nameLength).toString("utf8");
        if (key !== keyArn || blob.length < 1 + nameLength + 28) return invalid("not a ciphertext of this KMS");
        if (input.KeyId !== undefined && resolveKey(input.KeyId) !== key) {
          calls.push("Decrypt refused: another key");
          return send(res, 400, { message: "the ciphertext was not made with that KeyId" }, "IncorrectKeyException");
        }
        const at = 1 + nameLength;
        try {
          const decipher = createDecipheriv("aes-256-gcm", master, blob.subarray(at, at + 12)).setAAD(
            Buffer.concat([Buffer.from(key), contextAad(context)]),
          );
          decipher.setAuthTag(blob.subarray(at + 12, at + 28));
          const plaintext = Buffer.concat([decipher.update(blob.subarray(at + 28)), decipher.final()]);
          calls.push("Decrypt");
          return send(res, 200, {
            KeyId: key,
            Plaintext: plaintext.toString("base64"),
            EncryptionAlgorithm: "SYMMETRIC_DEFAULT",
          });
        } catch {
          return invalid("the encryption context or the blob does not match");
        }
      }
      return send(res, 400, { message: `the stand-in does not answer ${op}` }, "UnknownOperationException");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    region: REGION,
    credentials,
    keyArn,
    alias,
    calls,
    plaintextKeys,
    get failing() {
      return state.failing;
    },
    set failing(v: boolean) {
      state.failing = v;
    },
    denied: state.denied,
    clientConfig: () => ({
      endpoint,
      region: REGION,
      credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
    }),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
