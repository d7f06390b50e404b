import type { Connection } from '@temporalio/client';
import { sql, type DatabasePool } from 'slonik';

export type CheckResult = 'ok' | 'unavailable';

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function checkDatabase(pool: DatabasePool, timeoutMs = 2000): Promise<CheckResult> {
  try {
    await withTimeout(pool.oneFirst(sql.unsafe`SELECT 1`), timeoutMs);
    return 'ok';
  } catch {
    return 'unavailable';
  }
}

export async function checkTemporal(connection: Connection, timeoutMs = 2000): Promise<CheckResult> {
  try {
    await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
    return 'ok';
  } catch {
    return 'unavailable';
  }
}
