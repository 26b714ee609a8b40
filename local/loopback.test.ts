// Every emulator and the HTTP front listen on 127.0.0.1 only (docs/local-stack.md): a connection to their ports through
// a non-loopback address of this machine (e.g. eth0's) is refused, while the same port answers on 127.0.0.1,
// and a control server bound to all addresses is reachable through that address (so the refusal is the
// emulators' binding, not an unreachable address).
import { createServer, connect } from "node:net";
import type { AddressInfo } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulators } from "./emulators.ts";
import type { Emulators } from "./emulators.ts";
import { startHttpFront } from "./http-front.ts";
import type { HttpFront } from "./http-front.ts";

/** This machine's IPv4 addresses that are not loopback. */
const external = Object.values(networkInterfaces())
  .flat()
  .filter((a) => a !== undefined && a.family === "IPv4" && !a.internal)
  .map((a) => a!.address);
if (external.length === 0)
  console.warn("loopback.test.ts: this machine has no non-loopback IPv4 address; the refusal tests are skipped");

/** "connected" or the error code of a TCP connection to host:port. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 5000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve("TIMEOUT");
    });
    socket.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

const portOf = (url: string) => Number(new URL(url).port);

let dataDir: string;
let emulators: Emulators;
let front: HttpFront;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "claims-loopback-"));
  // The persistent flavour, as claims serve runs it (dynalite on LevelDB, fauxqs with its journal).
  emulators = await startEmulators({ dataDir, stateDir: join(dataDir, "store") });
  const ok = async () => ({ statusCode: 200, body: "{}" });
  front = await startHttpFront({
    functions: { intakeApi: ok, reviewApi: ok },
    authorizers: { intake: async () => ({ isAuthorized: true }), reviewer: async () => ({ isAuthorized: true }) },
    port: 0,
  });
});

afterAll(async () => {
  await front?.stop();
  await emulators?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(external.length === 0)("listening on 127.0.0.1 only", () => {
  it("a server bound to every address is reachable through this machine's non-loopback address (the control)", async () => {
    const control = createServer((s) => s.destroy());
    await new Promise<void>((resolve) => control.listen(0, "0.0.0.0", resolve));
    try {
      expect(await tryConnect(external[0]!, (control.address() as AddressInfo).port)).toBe("connected");
    } finally {
      control.close();
    }
  });

  it.each([
    ["dynalite (DynamoDB)", () => emulators.dynamodbEndpoint],
    ["fauxqs (SQS)", () => emulators.sqsEndpoint],
    ["the local EventBridge bus", () => emulators.eventsEndpoint],
    ["the HTTP front (default host)", () => front.url],
  ])("%s answers on 127.0.0.1 and refuses a connection through a non-loopback address", async (_name, endpoint) => {
    const port = portOf(endpoint());
    expect(await tryConnect("127.0.0.1", port)).toBe("connected");
    for (const address of external) expect(await tryConnect(address, port), address).toBe("ECONNREFUSED");
  });
});
