import { claudeCodeEvent } from './claude-code.js';
import { isGenAiRecord } from './genai-logs.js';
import type { OtelLogRecord } from './model.js';

/** The records of a logs export by what reads them; the others are only counted. */
export interface ClassifiedLogs {
  claudeCode: OtelLogRecord[];
  genAi: OtelLogRecord[];
  other: number;
}

/** Pure: run where the export was decoded (a body thread for a large one), so that records nobody keeps never reach the event loop. */
export function classifyLogRecords(records: readonly OtelLogRecord[]): ClassifiedLogs {
  const out: ClassifiedLogs = { claudeCode: [], genAi: [], other: 0 };
  for (const r of records) {
    if (claudeCodeEvent(r) !== null) out.claudeCode.push(r);
    else if (isGenAiRecord(r)) out.genAi.push(r);
    else out.other += 1;
  }
  return out;
}
