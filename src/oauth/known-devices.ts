import { randomBytes } from 'node:crypto';

/**
 * Known devices (OWASP's "device cookies"): a browser in which an account signed in successfully
 * holds, in a cookie signed with the authorization server's cookie keys, a device id for that
 * account. Its sign-in attempts for that account are counted per device instead of per account, so
 * that guessing spread over many addresses, which exhausts the account's hour, does not lock the
 * owner out of a browser they signed in from before.
 */
export interface KnownDevice {
  /** The account as sign-in counts it: SHA-256 (base64url) of the e-mail address as sign-in finds it. */
  account: string;
  /** Random, per browser and account: the key of the device's own attempt budget. */
  id: string;
  /** Milliseconds since the epoch; the cookie's own lifetime is not trusted for it. */
  expiresAt: number;
}

export const KNOWN_DEVICE_COOKIE = 'intake_device';
/** How long a browser stays known after its last successful sign-in. */
export const KNOWN_DEVICE_DAYS = 90;
/** Accounts one browser is known for (the most recently signed-in ones). */
export const MAX_KNOWN_DEVICES = 5;

const DAY_MS = 86_400_000;

const isDevice = (v: unknown, now: number): v is KnownDevice => {
  const d = v as Partial<KnownDevice> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    typeof d.account === 'string' &&
    typeof d.id === 'string' &&
    typeof d.expiresAt === 'number' &&
    d.expiresAt > now
  );
};

/** The unexpired devices of a cookie whose signature was checked already; [] for anything unreadable. */
export function readKnownDevices(value: string | undefined, now = Date.now()): KnownDevice[] {
  if (!value) return [];
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown;
    return Array.isArray(parsed) ? parsed.filter((d) => isDevice(d, now)).slice(0, MAX_KNOWN_DEVICES) : [];
  } catch {
    return [];
  }
}

/**
 * The cookie's value after a successful sign-in to `account`: that account's device first, its id
 * kept when the browser was known for it already (its budget goes on), its lifetime renewed.
 */
export function rememberDevice(devices: readonly KnownDevice[], account: string, now = Date.now()): string {
  const id = devices.find((d) => d.account === account)?.id ?? randomBytes(16).toString('base64url');
  const next = [{ account, id, expiresAt: now + KNOWN_DEVICE_DAYS * DAY_MS }, ...devices.filter((d) => d.account !== account)];
  return Buffer.from(JSON.stringify(next.slice(0, MAX_KNOWN_DEVICES))).toString('base64url');
}
