import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes.js';
import type { Logger } from '../logger.js';

export * from '../../workflows/search-attributes.js';

const KIND_TO_DEV_SERVER: Record<string, string> = {
  KEYWORD: 'Keyword',
  TEXT: 'Text',
  INT: 'Int',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

/** `--search-attribute Name=Type` flags for `temporal server start-dev`. */
export function devServerSearchAttributeFlags(): string[] {
  return ALL_SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=${KIND_TO_DEV_SERVER[k.type]}`]);
}

const IndexedValueType = proto.temporal.api.enums.v1.IndexedValueType;
export const TO_PROTO: Record<string, proto.temporal.api.enums.v1.IndexedValueType> = {
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  TEXT: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  INT: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  DOUBLE: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  BOOL: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  DATETIME: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KEYWORD_LIST: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/**
 * Registers missing search attributes on a self-hosted cluster at worker start (idempotent). On
 * Temporal Cloud the operator API is not open to namespace keys: there they are created in the
 * Cloud UI or with tcld, and this logs a warning instead of failing the worker.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string, logger: Logger): Promise<void> {
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const known = new Set(Object.keys(existing.customAttributes ?? {}));
    const missing = ALL_SEARCH_ATTRIBUTES.filter((k) => !known.has(k.name));
    if (missing.length === 0) return;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((k) => [k.name, TO_PROTO[k.type]!])),
    });
    logger.info({ added: missing.map((k) => k.name) }, 'registered Temporal search attributes');
    await untilUsable(connection, namespace, missing);
  } catch (error) {
    logger.warn(
      { err: error },
      'could not register Temporal search attributes; create them with `temporal operator search-attribute create`',
    );
  }
}

/**
 * A new attribute reaches the frontend's namespace cache only after a refresh (about 2 s on the
 * production server): until then a workflow that sets it is refused. Waits (at most 30 s) until a
 * query on every new one is accepted.
 */
async function untilUsable(connection: Connection, namespace: string, added: readonly { name: string; type: string }[]): Promise<void> {
  const query = added
    .map((k) =>
      k.type === 'INT' || k.type === 'DOUBLE' ? `${k.name} >= 0` : k.type === 'BOOL' ? `${k.name} = true` : `${k.name} = "probe"`,
    )
    .join(' OR ');
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await connection.workflowService.countWorkflowExecutions({ namespace, query });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
