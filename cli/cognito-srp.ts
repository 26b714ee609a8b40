// The client side of Cognito's SRP sign-in (USER_SRP_AUTH → PASSWORD_VERIFIER), as Cognito specifies it: SRP-6a
// over the 3072-bit group of RFC 5054 with g = 2 and SHA-256, the password hashed with the pool's name and the
// user's SRP id, the session key derived with HKDF ("Caldera Derived Key"), and the challenge answered with an
// HMAC of the pool name, user id, secret block and timestamp. The password never leaves the machine: only A and
// the proof do. Pure arithmetic on injected randomness and time; `claims reviewer-login` drives it.
import { createHash, createHmac } from "node:crypto";

/** RFC 5054's 3072-bit prime, the group Cognito uses. */
const N_HEX =
  "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD" +
  "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED" +
  "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F" +
  "83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B" +
  "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF6955817183995497CEA956AE515D2261898FA0510" +
  "15728E5A8AAAC42DAD33170D04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7" +
  "ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D87602733EC86A64521F2B18177B200C" +
  "BBE117577A615D6C770988C0BAD946E208E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF";
export const N = BigInt(`0x${N_HEX}`);
export const G = 2n;

/** (b ** e) mod m for non-negative BigInts. */
export function modPow(b: bigint, e: bigint, m: bigint): bigint {
  let result = 1n;
  let base = ((b % m) + m) % m;
  let exp = e;
  while (exp > 0n) {
    if (exp & 1n) result = (result * base) % m;
    base = (base * base) % m;
    exp >>= 1n;
  }
  return result;
}

/** A positive BigInt as even-length hex, with a leading 00 when its top bit is set (Cognito's `padHex`). */
export function padHex(value: bigint): string {
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  else if ("89abcdef".includes(hex[0]!)) hex = `00${hex}`;
  return hex;
}

/** SHA-256 of hex-encoded bytes, as hex. */
export function hashHex(hex: string): string {
  return createHash("sha256").update(Buffer.from(hex, "hex")).digest("hex");
}

/** k = H(N | g). */
export const K = BigInt(`0x${hashHex(padHex(N) + padHex(G))}`);

/** The pool's name part of its id (`eu-west-1_AbC123` → `AbC123`). */
export function poolNameOf(userPoolId: string): string {
  const name = userPoolId.split("_")[1];
  if (!name) throw new RangeError(`not a user pool id: ${userPoolId}`);
  return name;
}

/** x = H(salt | H(poolName | userId | ":" | password)). */
export function passwordExponent(poolName: string, userId: string, password: string, saltHex: string): bigint {
  const inner = createHash("sha256").update(`${poolName}${userId}:${password}`, "utf8").digest("hex");
  return BigInt(`0x${hashHex(padHex(BigInt(`0x${saltHex}`)) + inner)}`);
}

/** u = H(A | B). */
export function scramble(A: bigint, B: bigint): bigint {
  return BigInt(`0x${hashHex(padHex(A) + padHex(B))}`);
}

/** The 16-byte key HKDF derives from the shared secret S and u ("Caldera Derived Key"). */
export function sessionKey(S: bigint, u: bigint): Buffer {
  const prk = createHmac("sha256", Buffer.from(padHex(u), "hex"))
    .update(Buffer.from(padHex(S), "hex"))
    .digest();
  return createHmac("sha256", prk)
    .update(Buffer.concat([Buffer.from("Caldera Derived Key", "utf8"), Buffer.from([1])]))
    .digest()
    .subarray(0, 16);
}

/** Cognito's TIMESTAMP: `Sun Dec 6 17:35:15 UTC 2026` (day of month unpadded, UTC). */
export function srpTimestamp(at: Date): string {
  const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const two = (n: number) => String(n).padStart(2, "0");
  return `${days[at.getUTCDay()]} ${months[at.getUTCMonth()]} ${at.getUTCDate()} ${two(at.getUTCHours())}:${two(at.getUTCMinutes())}:${two(at.getUTCSeconds())} UTC ${at.getUTCFullYear()}`;
}

/** The client's ephemeral pair: a (secret, from `random`) and A = g^a mod N (never 0 mod N). */
export function ephemeral(random: (bytes: number) => Buffer): { a: bigint; A: bigint } {
  for (;;) {
    const a = BigInt(`0x${random(128).toString("hex")}`) % N;
    const A = modPow(G, a, N);
    if (a !== 0n && A % N !== 0n) return { a, A };
  }
}

/** What PASSWORD_VERIFIER asks for. */
export interface PasswordVerifierChallenge {
  readonly SALT: string;
  readonly SRP_B: string;
  readonly SECRET_BLOCK: string;
  readonly USER_ID_FOR_SRP: string;
}

/** The answer to PASSWORD_VERIFIER: the proof that the client knows the password, for this challenge and time. */
export function passwordVerifierResponse(
  challenge: PasswordVerifierChallenge,
  client: { readonly a: bigint; readonly A: bigint },
  userPoolId: string,
  password: string,
  at: Date,
): Record<string, string> {
  const B = BigInt(`0x${challenge.SRP_B}`);
  if (B % N === 0n) throw new RangeError("the server's SRP_B is 0 mod N: refused");
  const poolName = poolNameOf(userPoolId);
  const u = scramble(client.A, B);
  if (u === 0n) throw new RangeError("SRP scramble u is 0: refused");
  const x = passwordExponent(poolName, challenge.USER_ID_FOR_SRP, password, challenge.SALT);
  const base = (((B - K * modPow(G, x, N)) % N) + N) % N;
  const S = modPow(base, client.a + u * x, N);
  const key = sessionKey(S, u);
  const timestamp = srpTimestamp(at);
  const signature = createHmac("sha256", key)
    .update(
      Buffer.concat([
        Buffer.from(poolName, "utf8"),
        Buffer.from(challenge.USER_ID_FOR_SRP, "utf8"),
        Buffer.from(challenge.SECRET_BLOCK, "base64"),
        Buffer.from(timestamp, "utf8"),
      ]),
    )
    .digest("base64");
  return {
    USERNAME: challenge.USER_ID_FOR_SRP,
    PASSWORD_CLAIM_SECRET_BLOCK: challenge.SECRET_BLOCK,
    TIMESTAMP: timestamp,
    PASSWORD_CLAIM_SIGNATURE: signature,
  };
}
