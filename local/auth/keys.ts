// The signing keys of this run's emulators: made at every start, and registered by endpoint so the process's own
// clients can sign for the emulator they call (local/credentials.ts writes them out for other programs).
import { randomBytes } from "node:crypto";
import type { SigningKeys } from "./sigv4.ts";

/** A fresh key pair: an access key id like AWS's (20 upper-case characters) and a 40-character secret. */
export function newSigningKeys(): SigningKeys {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const id = [...randomBytes(16)].map((b) => alphabet[b % 32]).join("");
  return { accessKeyId: `LOCL${id}`, secretAccessKey: randomBytes(30).toString("base64url") };
}

/** The keys the emulators of this process require, by endpoint (so `localClientConfig(endpoint)` can sign). */
const keysByEndpoint = new Map<string, SigningKeys>();

/** Registers the keys the emulator at `endpoint` requires; returns the function that unregisters them. */
export function registerEndpointKeys(endpoint: string, keys: SigningKeys): () => void {
  keysByEndpoint.set(endpoint, keys);
  return () => {
    if (keysByEndpoint.get(endpoint) === keys) keysByEndpoint.delete(endpoint);
  };
}

/** The keys the emulator at `endpoint` requires, if it is one of this process. */
export function endpointKeys(endpoint: string): SigningKeys | undefined {
  return keysByEndpoint.get(endpoint);
}
