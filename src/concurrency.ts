/**
 * Runs `task` for each item, at most `limit` at a time, items started in order; stops starting new
 * ones once `stop()` answers true. Resolves when every started task has ended; rejects with the
 * first task error.
 */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
  stop: () => boolean = () => false,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length && !stop(); i = next++) await task(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
