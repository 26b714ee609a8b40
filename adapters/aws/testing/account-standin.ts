// Test support: a local stand-in for the account-level AWS APIs the pre-deploy check and the deploy read, speaking
// their wire protocols so the real AWS SDK clients talk to it unchanged (point them at it with an endpoint, or with
// AWS_ENDPOINT_URL_LAMBDA / AWS_ENDPOINT_URL_SERVICE_QUOTAS): Lambda's GetAccountSettings and
// GetFunctionConcurrency (REST-JSON) and Service Quotas' ListServiceQuotas / ListAWSDefaultServiceQuotas (JSON 1.1).
// It refuses requests that are not SigV4-signed with its access key, as AWS would refuse an unsigned one.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One Service Quotas entry as the API returns it. */
export interface StandInQuota {
  readonly QuotaName: string;
  readonly QuotaCode: string;
  readonly Value: number;
  readonly Adjustable?: boolean;
}

/** What the stand-in account says; tests change it between calls. */
export interface StandInAccount {
  /** AccountLimit.ConcurrentExecutions. */
  concurrentExecutions: number;
  /** AccountLimit.UnreservedConcurrentExecutions (default: concurrentExecutions minus the reservations below). */
  unreservedConcurrentExecutions?: number;
  /** Reserved concurrency per function name (GetFunctionConcurrency). */
  reserved: Record<string, number>;
  /** Applied quotas per service code (ListServiceQuotas). */
  applied: Record<string, StandInQuota[]>;
  /** AWS default quotas per service code (ListAWSDefaultServiceQuotas). */
  defaults: Record<string, StandInQuota[]>;
  /** Answer every call with AccessDeniedException (a principal without the read rights). */
  denied: boolean;
}

/** The stand-in: its endpoint, the access key it accepts, what it has been asked, and its account. */
export interface AccountStandIn {
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly account: StandInAccount;
  /** Operations received, in order ("GetAccountSettings", "ListServiceQuotas events", …). */
  readonly calls: string[];
  /** Environment that points the SDK's Lambda and Service Quotas clients here (with the stand-in's credentials). */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

/** EventBridge default quotas as Service Quotas names them (the values of most regions; the codes are the stand-in's own: readers match by name). */
export const EVENTBRIDGE_DEFAULTS: StandInQuota[] = [
  { QuotaName: "PutEvents throttle limit in transactions per second", QuotaCode: "L-AB1C1C6A", Value: 10_000 },
  { QuotaName: "Invocations throttle limit in transactions per second", QuotaCode: "L-8AF3C0A0", Value: 18_750 },
  { QuotaName: "Rules per event bus", QuotaCode: "L-244521F2", Value: 300 },
];

function send(res: ServerResponse, status: number, body: unknown, errorType?: string) {
  res.writeHead(status, {
    "content-type": "application/json",
    "x-amzn-requestid": "standin",
    ...(errorType ? { "x-amzn-errortype": errorType } : {}),
  });
  res.end(JSON.stringify(body));
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => resolve(body));
  });

/** Starts the stand-in on 127.0.0.1 (a free port) with `account` (a 10-quota new account by default). */
export async function startAccountStandIn(account: Partial<StandInAccount> = {}): Promise<AccountStandIn> {
  const state: StandInAccount = {
    concurrentExecutions: 10,
    reserved: {},
    applied: {},
    defaults: { events: EVENTBRIDGE_DEFAULTS },
    denied: false,
    ...account,
  };
  const calls: string[] = [];
  const accessKeyId = "AKIDSTANDIN";
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const auth = req.headers.authorization ?? "";
      if (!auth.startsWith("AWS4-HMAC-SHA256 ") || !auth.includes(`Credential=${accessKeyId}/`))
        return send(
          res,
          403,
          { message: "The security token included in the request is invalid." },
          "UnrecognizedClientException",
        );
      const url = new URL(req.url ?? "/", "http://standin");
      const target = String(req.headers["x-amz-target"] ?? "");
      const deny = (op: string) =>
        send(
          res,
          403,
          { message: `User is not authorized to perform: ${op}`, Message: `not authorized: ${op}` },
          "AccessDeniedException",
        );
      if (req.method === "GET" && /^\/2016-08-19\/account-settings\/?$/.test(url.pathname)) {
        calls.push("GetAccountSettings");
        if (state.denied) return deny("lambda:GetAccountSettings");
        const reserved = Object.values(state.reserved).reduce((a, b) => a + b, 0);
        return send(res, 200, {
          AccountLimit: {
            TotalCodeSize: 80_530_636_800,
            CodeSizeUnzipped: 262_144_000,
            CodeSizeZipped: 52_428_800,
            ConcurrentExecutions: state.concurrentExecutions,
            UnreservedConcurrentExecutions:
              state.unreservedConcurrentExecutions ?? state.concurrentExecutions - reserved,
          },
          AccountUsage: { TotalCodeSize: 0, FunctionCount: Object.keys(state.reserved).length },
        });
      }
      const concurrency = /^\/2019-09-30\/functions\/([^/]+)\/concurrency$/.exec(url.pathname);
      if (req.method === "GET" && concurrency) {
        const name = decodeURIComponent(concurrency[1]!);
        calls.push(`GetFunctionConcurrency ${name}`);
        if (state.denied) return deny("lambda:GetFunctionConcurrency");
        if (!(name in state.reserved))
          return send(res, 404, { Type: "User", Message: `Function not found: ${name}` }, "ResourceNotFoundException");
        return send(res, 200, { ReservedConcurrentExecutions: state.reserved[name] });
      }
      const op = /^ServiceQuotasV20190624\.(ListServiceQuotas|ListAWSDefaultServiceQuotas)$/.exec(target);
      if (req.method === "POST" && op) {
        const input = JSON.parse(body || "{}") as { ServiceCode?: string };
        const service = input.ServiceCode ?? "";
        calls.push(`${op[1]} ${service}`);
        if (state.denied) return deny(`servicequotas:${op[1]}`);
        const quotas = (op[1] === "ListServiceQuotas" ? state.applied : state.defaults)[service] ?? [];
        return send(res, 200, {
          Quotas: quotas.map((q) => ({
            ServiceCode: service,
            ServiceName: service,
            QuotaArn: `arn:aws:servicequotas:eu-west-1:111122223333:${service}/${q.QuotaCode}`,
            QuotaCode: q.QuotaCode,
            QuotaName: q.QuotaName,
            Value: q.Value,
            Unit: "None",
            Adjustable: q.Adjustable ?? true,
            GlobalQuota: false,
          })),
        });
      }
      calls.push(`unknown ${req.method} ${url.pathname} ${target}`);
      return send(
        res,
        400,
        { message: `the stand-in does not serve ${req.method} ${url.pathname} ${target}` },
        "UnknownOperationException",
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const secretAccessKey = "standin-secret";
  return {
    endpoint,
    accessKeyId,
    secretAccessKey,
    account: state,
    calls,
    env: () => ({
      AWS_ENDPOINT_URL_LAMBDA: endpoint,
      AWS_ENDPOINT_URL_SERVICE_QUOTAS: endpoint,
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: secretAccessKey,
      AWS_REGION: "eu-west-1",
      AWS_EC2_METADATA_DISABLED: "true",
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    }),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
