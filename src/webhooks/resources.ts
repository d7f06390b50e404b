import type { CommonQueryMethods } from 'slonik';
import { presentSession } from '../contracts/agent-sessions.js';
import { presentListItem } from '../contracts/recordings.js';
import { presentSignal } from '../contracts/signals.js';
import { findSessions, type Reader } from '../db/repositories/agent-conversations.js';
import { findSignals } from '../db/repositories/agent-signals.js';
import { findListItems } from '../db/repositories/recording-reads.js';

/**
 * The resource a delivery's body carries beside the event's ids (issue 31: "the resource as the
 * REST API shows it"): `signal` as `GET /v3/rest/signals` shows it, `session` as the sessions list
 * shows it, `recording` as the recordings list shows it (small: no transcript). Read once, when
 * the body is fixed at the first attempt (a batch's with one query per kind). Endpoints belong to the organization,
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

export type Resource = { key: ResourceKey; value: unknown } | null;

/**
 * The resources of several events of one organization, in their order: one query per kind of
 * resource, whatever the number of events (the sender reads a batch's at once).
 */
export async function readResources(
  db: CommonQueryMethods,
  organizationId: string,
  events: readonly { type: string; payload: Record<string, unknown> }[],
): Promise<Resource[]> {
  const wanted = events.map((e) => {
    const which = resourceOf(e.type);
    const id = which ? e.payload[which.idField] : undefined;
    return which ? { key: which.key, id: typeof id === 'string' ? id : null } : null;
  });
  const idsOf = (key: ResourceKey) => [...new Set(wanted.flatMap((w) => (w?.key === key && w.id !== null ? [w.id] : [])))];
  const reader: Reader = { organizationId, userId: null };
  const [signals, sessions, recordings] = await Promise.all([
    findSignals(db, reader, idsOf('signal')),
    findSessions(db, reader, idsOf('session')),
    findListItems(db, organizationId, idsOf('recording')),
  ]);
  const values: Record<ResourceKey, Map<string, unknown>> = {
    signal: new Map(signals.map((row) => [row.id, presentSignal(row)])),
    session: new Map(sessions.map((row) => [row.id, presentSession(row)])),
    recording: new Map(recordings.map((row) => [row.id, presentListItem(row)])),
  };
  return wanted.map((w) => (w ? { key: w.key, value: w.id === null ? null : (values[w.key].get(w.id) ?? null) } : null));
}
