import { ExportResultCode, type ExportResult } from '@opentelemetry/core';

/** Sends `items` with an OpenTelemetry exporter (spans or log records) and waits: rejects unless it succeeded. */
export function exportWith<T>(exporter: { export(items: T[], done: (result: ExportResult) => void): void }, items: T[]): Promise<void> {
  return new Promise((resolve, reject) =>
    exporter.export(items, (result) =>
      result.code === ExportResultCode.SUCCESS ? resolve() : reject(result.error ?? new Error(`export failed: ${result.code}`)),
    ),
  );
}
