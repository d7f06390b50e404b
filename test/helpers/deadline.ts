/** Resolves with `value` after `ms`, without keeping the process alive (for Promise.race bounds). */
export function deadline<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms).unref());
}
