// Fake secrets are generated (seeded, so runs are identical) rather than written out: they have
// the shape of real credentials, and literal ones would trip secret scanners on this repository.
export const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const LOWER = 'abcdefghijklmnopqrstuvwxyz';
export const DIGITS = '0123456789';
export const ALNUM = UPPER + LOWER + DIGITS;
export const HEX = '0123456789abcdef';
export const B64 = `${ALNUM}+/`;
export const B64URL = `${ALNUM}-_`;

/**
 * A seeded generator of fake secrets (a linear congruential generator). `bits` picks the characters
 * from the high bits of its state (the low bits repeat with a short period) or, for a corpus made
 * with them and kept as it is, from the low bits.
 */
export function fakeSecrets(seed: number, bits: 'high' | 'low' = 'high'): (alphabet: string, length: number) => string {
  let state = seed;
  return (alphabet, length) => {
    let out = '';
    for (let i = 0; i < length; i += 1) {
      state = (state * 1103515245 + 12345) % 2147483648;
      out += alphabet[(bits === 'high' ? Math.floor(state / 65536) : state) % alphabet.length];
    }
    return out;
  };
}
