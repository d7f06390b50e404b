import { hash, verify } from '@node-rs/argon2';

/**
 * Users' sign-in passwords (the MCP authorization server's login form): argon2id with OWASP's
 * parameters (19 MiB, 2 passes, 1 lane; the PHC string keeps them, so raising them later still
 * verifies old hashes). Length, not composition, is the rule (NIST SP 800-63B): at least 12
 * characters; at most 256, which bounds what one attempt costs.
 */
/** `Algorithm.Argon2id` (a const enum, which this build's isolated modules cannot read). */
const ARGON2ID = 2;
const PARAMS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

/** Why a password cannot be set, or null when it can. */
export function passwordProblem(password: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `a password needs at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `a password has at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}

export function hashPassword(password: string): Promise<string> {
  return hash(password.normalize('NFC'), PARAMS);
}

/** A hash of nothing anyone knows: an unknown account is verified against it, so that it takes as long as a known one. */
let decoy: Promise<string> | undefined;

/**
 * Whether `password` matches the stored hash. With no stored hash (no such account, or no password
 * set), the same work is done against a decoy and the answer is false: timing does not tell which
 * e-mail addresses have accounts.
 */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (password.length > PASSWORD_MAX_LENGTH * 4) return false;
  decoy ??= hashPassword('decoy password that no account has');
  const target = stored ?? (await decoy);
  const ok = await verify(target, password.normalize('NFC')).catch(() => false);
  return ok && stored !== null;
}
