import type { CommonQueryMethods } from 'slonik';
import { presentSession } from '../contracts/agent-sessions.js';
import { presentListItem } from '../contracts/recordings.js';
import { presentSignal } from '../contracts/signals.js';
import { findSession, type Reader } from '../db/repositories/agent-conversations.js';
import { findSignal } from '../db/repositories/agent-signals.js';
import { findListItem } from '../db/repositories/recording-reads.js';

/**
 * The resource a delivery's body carries beside the event's ids (issue 31: "the resource as the
 * REST API shows it"): `signal` as `GET /v3/rest/signals` shows it, `session` as the sessions list
 * shows it, `recording` as the recordings list shows it (small: no transcript). Read once, when
 * the body is fixed at the first attempt, with one query. Endpoints belong to the organization,
 * so the resource is read as an organization API key reads it: null once deleted, and null for
 * a restricted conversation's session or signal (which organization keys do not see).
 */
export type ResourceKey = 'signal' | 'session' | 'recording';

/** Which resource an event type carries, and under which payload id; null: none (`webhook.test`). */
export function resourceOf(type: string): { key: ResourceKey; idField: string } | null {
  if (type === 'signal.created') return { key: 'signal', idField: 'signalId' };
  if (type.startsWith('agent_session.')) return { key: 'session', idField: 'sessionId' };
  if (type.startsWith('recording.') || type === 'meeting_join.ended') return { key: 'recording', idField: 'recordingId' };
  return null;
}

export async function readResource(
  db: CommonQueryMethods,
  organizationId: string,
  type: string,
  payload: Record<string, unknown>,
): Promise<{ key: ResourceKey; value: unknown } | null> {
  const which = resourceOf(type);
  if (!which) return null;
  const id = payload[which.idField];
  if (typeof id !== 'string') return { key: which.key, value: null };
  const reader: Reader = { organizationId, userId: null };
  switch (which.key) {
    case 'signal': {
      const row = await findSignal(db, reader, id);
      return { key: 'signal', value: row ? presentSignal(row) : null };
    }
    case 'session': {
      const row = await findSession(db, reader, id);
      return { key: 'session', value: row ? presentSession(row) : null };
    }
    case 'recording': {
      const row = await findListItem(db, organizationId, id);
      return { key: 'recording', value: row ? presentListItem(row) : null };
    }
  }
}
