/**
 * The data generator: fills a migrated Intake database to a named size, fast, with COPY (not the
 * API), in shapes like production's. `npm run bench:generate -- --size S|M|L` (bench/generate.ts)
 * runs it against DATABASE_URL; the growth benchmark (bench/growth.ts) against its own stack.
 *
 * What one size holds (`events` agent events; the rest scale with it, SIZES below):
 *  - organizations with skewed sizes (Zipf, s = 1: the largest of 2,000 holds about 12% of the data),
 *    1-4 agent applications each (one in ten with a retention of 365 days), people and companies;
 *  - agent sessions of 2-400 events (log-uniform: median about 28, mean about 75), in time order
 *    over the last 180 days, user messages and final assistant responses alternating, a feedback
 *    event (and its explicit signal) in one session of six, a sequence gap in one of fifty, one
 *    participant each (random v4 ids, as a deployment upgraded from 0.1 holds them: their events are
 *    in agent_events' legacy partition, decision 0216, and the benchmark's own ingest writes the
 *    weekly partitions); 3% of the events revised once (a row in agent_event_revisions), every
 *    assistant response analysed (a done job and a usage record), a qualitative signal for one
 *    response of four; every session processed through its highest sequence, the last day's open;
 *  - recordings (one per 50 events) with participants (1-4) and transcripts (4-20 utterances),
 *    feedback sources and records (one per 20 events), coding sessions;
 *  - domain events (one per 10 events; the last 30 days' only, as the retention sweep leaves them)
 *    and, for the three organizations in ten with a webhook endpoint, a succeeded delivery and its
 *    attempt per domain event (over all 180 days: deliveries are not swept).
 *
 * Every table is written by a COPY of its own, each on a connection of its own, all in one pass (the
 * session's rows as it is made); the connections run with `session_replication_role = replica`, so
 * neither triggers nor foreign-key checks run (the generator writes what they would: the sync
 * positions of sessions, signals and recordings). That needs a superuser, and an idle stack: ids
 * and sync positions are taken from the sequences before the load and the sequences set past them
 * after it. A second run adds to the first (new organizations): S then the rest of M gives M.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { contentHash, eventPayload } from '../src/domain/agent-events.js';
import type { AgentEvent } from '../src/domain/agent-ingest.js';
import { CopySink, type CopyValue } from './copy-sink.js';

export type SizeName = 'S' | 'M' | 'L';
export interface Size {
  events: number;
  organizations: number;
}
/** The named sizes: agent events and organizations; recordings are events / 50 (L: 1M). */
export const SIZES: Record<SizeName, Size> = {
  S: { events: 1_000_000, organizations: 200 },
  M: { events: 10_000_000, organizations: 2_000 },
  L: { events: 50_000_000, organizations: 10_000 },
};

export const isSizeName = (value: string): value is SizeName => value in SIZES;

/** What a run wrote: rows by table, and its organizations, largest first. */
export interface Generated {
  counts: Record<string, number>;
  organizations: { id: string; share: number }[];
}

const DAY_MS = 86_400_000;
const SPAN_DAYS = 180;
const DOMAIN_EVENT_DAYS = 30;

/** mulberry32: a small seeded generator, so a size has the same shapes every time (the ids differ). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'export report column dashboard invoice refund login password billing chart filter slow error timeout ' +
  'integration webhook calendar meeting transcript upload search permission team workspace mobile sync ' +
  'notification email pricing plan trial onboarding api key token latency crash feature request bug'
).split(' ');
const SENTENCES = [
  'The export to CSV drops the last column when the report has more than twenty columns.',
  'I tried reloading, another browser, and exporting a smaller range, and it still fails.',
  'Can you explain why the invoice shows two charges for the same month?',
  'Here is how to reset the password from the settings page, step by step.',
  'The dashboard takes a long time to load when the filter covers a whole year.',
  'Our team cannot see the shared workspace after the plan changed.',
  'The webhook stopped firing after we rotated the signing secret.',
  'I would like a refund for the unused seats on our annual plan.',
];
const LABELS = ['export', 'billing', 'performance', 'login', 'integration', 'ux', 'bug', 'feature_request'];

interface Org {
  id: string;
  /** Its share of the data (Zipf). */
  weight: number;
  applications: { id: string; retentionDays: number | null }[];
  firstPersonId: number;
  people: number;
  feedbackSourceId: number;
  webhookEndpointId: string | null;
}

/** Sequences the generator takes ids from (set past what it wrote at the end). */
const SEQUENCES = {
  event: 'agent_events_id_seq',
  revision: 'agent_event_revisions_id_seq',
  job: 'agent_analysis_jobs_id_seq',
  usage: 'usage_records_id_seq',
  participant: 'agent_participants_id_seq',
  person: 'people_id_seq',
  company: 'companies_id_seq',
  feedbackSource: 'feedback_sources_id_seq',
  feedbackRecord: 'feedback_records_id_seq',
  domainEvent: 'domain_events_id_seq',
  attempt: 'webhook_delivery_attempts_id_seq',
  credit: 'credit_transactions_id_seq',
  change: 'sync_change_seq',
} as const;
type SequenceKey = keyof typeof SEQUENCES;

/** The tables and the columns the generator writes. */
const TABLES = {
  organizations: ['id', 'name', 'credit_balance', 'created_at', 'updated_at'],
  credit_transactions: ['id', 'organization_id', 'amount', 'reason', 'balance_after', 'created_at'],
  agent_applications: ['id', 'organization_id', 'name', 'agent_key', 'retention_days', 'created_at', 'updated_at'],
  companies: ['id', 'organization_id', 'name', 'domain', 'created_at', 'updated_at'],
  people: ['id', 'uuid', 'organization_id', 'email', 'first_name', 'last_name', 'company_id', 'created_at', 'updated_at'],
  agent_sessions: [
    'id',
    'organization_id',
    'application_id',
    'external_session_id',
    'status',
    'processing_status',
    'agent_version',
    'context',
    'event_count',
    'highest_sequence',
    'processed_through_sequence',
    'ended_at',
    'last_ingest_at',
    'created_at',
    'updated_at',
    'change_xid',
    'change_seq',
    'changed_at',
  ],
  agent_participants: [
    'id',
    'session_id',
    'organization_id',
    'participant_key',
    'external_id',
    'display_name',
    'email',
    'person_id',
    'boundary',
  ],
  agent_events: [
    'id',
    'session_id',
    'organization_id',
    'external_event_id',
    'sequence',
    'revision',
    'type',
    'occurred_at',
    'final',
    'content_hash',
    'payload',
    'created_at',
    'updated_at',
    'processed_revision',
  ],
  agent_event_revisions: [
    'id',
    'event_id',
    'session_id',
    'organization_id',
    'revision',
    'final',
    'content_hash',
    'payload',
    'superseded_at',
  ],
  agent_analysis_jobs: [
    'id',
    'session_id',
    'organization_id',
    'event_id',
    'revision',
    'status',
    'created_at',
    'updated_at',
    'attempts',
    'credits_spent',
  ],
  agent_signals: [
    'id',
    'organization_id',
    'session_id',
    'event_id',
    'event_external_id',
    'source',
    'kind',
    'rating',
    'labels',
    'comment',
    'summary',
    'created_at',
    'event_revision',
    'producer',
    'change_xid',
    'change_seq',
    'changed_at',
  ],
  usage_records: ['id', 'organization_id', 'application_id', 'session_id', 'event_id', 'unit', 'quantity', 'recorded_at'],
  recordings: [
    'id',
    'organization_id',
    'name',
    'source',
    'recorded_at',
    'asset_status',
    'transcript_status',
    'transcript_source',
    'created_at',
    'updated_at',
    'change_xid',
    'change_seq',
    'changed_at',
  ],
  recording_participants: ['recording_id', 'speaker', 'person_id'],
  transcript_utterances: ['recording_id', 'position', 'start_sec', 'end_sec', 'speaker', 'text'],
  feedback_sources: ['id', 'organization_id', 'name', 'type', 'created_at'],
  feedback_records: ['id', 'organization_id', 'feedback_source_id', 'person_id', 'external_id', 'display_ts', 'fields', 'created_at'],
  coding_sessions: ['id', 'organization_id', 'title', 'format', 'event_count', 'content_hash', 'events', 'created_at', 'source'],
  domain_events: ['id', 'organization_id', 'type', 'subject_id', 'payload', 'recorded_at'],
  webhook_endpoints: ['id', 'organization_id', 'url', 'description', 'enabled', 'secret_sealed', 'created_at', 'updated_at'],
  webhook_deliveries: [
    'id',
    'endpoint_id',
    'organization_id',
    'event_id',
    'event_type',
    'subject_id',
    'body',
    'status',
    'attempts',
    'last_attempt_at',
    'last_response_status',
    'created_at',
    'updated_at',
  ],
  webhook_delivery_attempts: ['id', 'delivery_id', 'attempted_at', 'response_status', 'response_excerpt', 'duration_ms'],
} as const;
type Table = keyof typeof TABLES;

export interface GenerateOptions {
  /** Agent events to add (the other tables scale with it). */
  events: number;
  organizations: number;
  /** The seed: two runs with different seeds make different organizations. */
  seed: number;
  progress?: (message: string) => void;
}

/** Adds `options.events` events' worth of data to the database at `url` (migrated, idle). */
export async function generateData(url: string, options: GenerateOptions): Promise<Generated> {
  const progress = options.progress ?? (() => undefined);
  const random = prng(options.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  // Ids from the system's generator: the seeded one has 32 bits of state, so two seeds' sequences overlap.
  const uuid = () => randomUUID();
  const pool = new pg.Pool({ connectionString: url, max: Object.keys(TABLES).length + 1 });
  pool.on('error', () => undefined);
  const admin = await pool.connect();
  const clients: pg.PoolClient[] = [admin];
  try {
    const [{ superuser }] = (
      await admin.query<{ superuser: boolean }>('SELECT rolsuper AS superuser FROM pg_roles WHERE rolname = current_user')
    ).rows as [{ superuser: boolean }];
    if (!superuser) throw new Error('the data generator needs a superuser connection (session_replication_role)');

    // Ids and sync positions: taken from each sequence's next value, the sequences set past them at the end.
    const next: Record<SequenceKey, number> = {} as Record<SequenceKey, number>;
    for (const [key, seq] of Object.entries(SEQUENCES) as [SequenceKey, string][]) {
      next[key] = Number((await admin.query<{ n: string }>(`SELECT nextval('${seq}') AS n`)).rows[0]!.n);
    }
    const take = (key: SequenceKey) => next[key]++;

    // One connection, transaction and COPY per table; a column the database's schema lacks (one
    // migrated to an earlier version, for bench/partition-migration.ts) is left out.
    const present = new Map<string, Set<string>>();
    for (const r of (
      await admin.query<{ t: string; c: string }>(
        `SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = current_schema()`,
      )
    ).rows)
      present.set(r.t, (present.get(r.t) ?? new Set()).add(r.c));
    const sinks = {} as Record<Table, CopySink>;
    let xid = '';
    for (const [table, columns] of Object.entries(TABLES) as [Table, readonly string[]][]) {
      const client = await pool.connect();
      clients.push(client);
      await client.query('BEGIN');
      await client.query('SET LOCAL session_replication_role = replica');
      // The sync positions' transaction id: any of the load's (each commits at the end).
      if (!xid) xid = (await client.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')).rows[0]!.xid;
      sinks[table] = new CopySink(client, table, columns, present.get(table));
    }
    const add = (table: Table, values: readonly CopyValue[]) => sinks[table].add(values);
    const backpressure = async () => {
      for (const sink of Object.values(sinks)) if (sink.full) await sink.drained();
    };

    const now = Date.now();
    const start = now - SPAN_DAYS * DAY_MS;
    const at = (share: number) => new Date(start + share * (SPAN_DAYS * DAY_MS - 3_600_000));
    const batch = options.seed.toString(36);

    // Organizations: Zipf weights, their applications, people, companies, sources and endpoints.
    progress(`organizations (${options.organizations})`);
    const harmonic = Array.from({ length: options.organizations }, (_, i) => 1 / (i + 1)).reduce((a, b) => a + b, 0);
    const orgs: Org[] = [];
    const cumulative: number[] = [];
    let sum = 0;
    for (let i = 0; i < options.organizations; i++) {
      const weight = 1 / (i + 1) / harmonic;
      const created = at(random() * 0.1);
      const id = uuid();
      add('organizations', [id, `Generated ${batch}-${i}`, 1_000_000, created, created]);
      add('credit_transactions', [take('credit'), id, 1_000_000, 'grant', 1_000_000, created]);
      const applications = Array.from({ length: 1 + Math.floor(random() * 4) }, (_, a) => {
        const app = { id: uuid(), retentionDays: random() < 0.1 ? 365 : null };
        add('agent_applications', [app.id, id, `Agent ${a}`, `agent-${a}`, app.retentionDays, created, created]);
        return app;
      });
      const companies = Math.max(1, Math.ceil((weight * options.events) / 5_000));
      const firstCompany = next.company;
      for (let c = 0; c < companies; c++) {
        add('companies', [take('company'), id, `Company ${c}`, `c${c}.org${i}-${batch}.example.com`, created, created]);
      }
      const people = 3 + Math.ceil((weight * options.events) / 200);
      const firstPersonId = next.person;
      for (let p = 0; p < people; p++) {
        add('people', [
          take('person'),
          uuid(),
          id,
          `person${p}@c${p % companies}.org${i}-${batch}.example.com`,
          pick(['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Ken']),
          pick(['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Thompson']),
          firstCompany + (p % companies),
          created,
          created,
        ]);
      }
      const feedbackSourceId = take('feedbackSource');
      add('feedback_sources', [feedbackSourceId, id, 'Support widget', 'api', created]);
      let webhookEndpointId: string | null = null;
      if (random() < 0.3) {
        webhookEndpointId = uuid();
        // Never sent to: every generated delivery has succeeded, and no new event of this organization comes.
        add('webhook_endpoints', [
          webhookEndpointId,
          id,
          `https://hooks.org${i}.example.com/intake`,
          'generated',
          true,
          'generated',
          created,
          created,
        ]);
      }
      orgs.push({ id, weight, applications, firstPersonId, people, feedbackSourceId, webhookEndpointId });
      sum += weight;
      cumulative.push(sum);
    }
    const pickOrg = () => {
      const r = random() * sum;
      let lo = 0;
      let hi = cumulative.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid]! < r) lo = mid + 1;
        else hi = mid;
      }
      return orgs[lo]!;
    };
    const personOf = (org: Org) => org.firstPersonId + Math.floor(random() * org.people);
    const change = () => take('change');

    /** A domain event, and its delivery when the organization has an endpoint. */
    const domainEvent = (org: Org, type: string, subjectId: string, payload: Record<string, string>, when: Date) => {
      // Domain events older than DOMAIN_EVENT_RETENTION_DAYS' default (30) are swept; deliveries are kept.
      const eventId = take('domainEvent');
      if (now - when.getTime() < DOMAIN_EVENT_DAYS * DAY_MS)
        add('domain_events', [eventId, org.id, type, subjectId, JSON.stringify(payload), when]);
      if (!org.webhookEndpointId) return;
      const deliveryId = `msg_${uuid().replaceAll('-', '')}`;
      const body = JSON.stringify({ id: deliveryId, type, timestamp: when.toISOString(), data: payload });
      const sent = new Date(when.getTime() + 400);
      add('webhook_deliveries', [
        deliveryId,
        org.webhookEndpointId,
        org.id,
        eventId,
        type,
        subjectId,
        body,
        'succeeded',
        1,
        sent,
        200,
        when,
        sent,
      ]);
      add('webhook_delivery_attempts', [take('attempt'), deliveryId, sent, 200, 'ok', 40 + Math.floor(random() * 200)]);
    };

    // Agent sessions, in time order, until the events are made; recordings and feedback between them.
    progress(`sessions (${options.events.toLocaleString('en')} events)`);
    let events = 0;
    let sessionIndex = 0;
    let recordings = 0;
    let feedback = 0;
    let reported = 0;
    const recordingsWanted = options.events / 50;
    const feedbackWanted = options.events / 20;
    while (events < options.events) {
      const share = events / options.events;
      const created = at(share);
      const org = pickOrg();
      const app = pick(org.applications);
      const sessionId = uuid();
      const length = Math.min(options.events - events, Math.max(2, Math.floor(2 * Math.pow(200, random()))));
      const gap = random() < 0.02 ? 1 + Math.floor(random() * Math.max(1, length - 1)) : -1;
      const withFeedback = random() < 1 / 6 && length >= 3;
      const open = now - created.getTime() < DAY_MS;
      let sequence = 0;
      let last = created;
      const assistantIds: { id: number; external: string; revision: number }[] = [];
      for (let n = 0; n < length; n++) {
        if (n === gap) sequence += 1 + Math.floor(random() * 3);
        const occurred = new Date(created.getTime() + n * 20_000 + Math.floor(random() * 10_000));
        last = occurred;
        const feedbackEvent = withFeedback && n === length - 1 && assistantIds.length > 0;
        const assistant = !feedbackEvent && n % 2 === 1;
        const target = feedbackEvent ? assistantIds[assistantIds.length - 1]! : null;
        const revised = !feedbackEvent && random() < 0.03;
        const revision = revised ? 2 : 1;
        const external = `e${sequence}`;
        const content = `${pick(SENTENCES)} ${pick(SENTENCES)} (${pick(WORDS)} ${pick(WORDS)})`;
        const rating = random() < 0.7 ? 'positive' : 'negative';
        const event = {
          externalEventId: external,
          sequence,
          revision,
          occurredAt: occurred.toISOString(),
          ...(feedbackEvent
            ? {
                type: 'feedback',
                feedback: { targetEventExternalId: target!.external, rating, labels: [pick(LABELS)], comment: pick(SENTENCES) },
              }
            : assistant
              ? {
                  type: 'assistant_message',
                  content,
                  final: true,
                  model: { provider: 'openai', name: 'gpt-4.1' },
                  usage: {
                    inputTokens: 100 + Math.floor(random() * 900),
                    outputTokens: 50 + Math.floor(random() * 400),
                    latencyMs: 300 + Math.floor(random() * 3000),
                  },
                }
              : { type: 'user_message', content }),
        } as AgentEvent;
        const payload = eventPayload(event);
        const hash = Buffer.from(contentHash(payload), 'hex');
        const id = take('event');
        const updated = revised ? new Date(occurred.getTime() + 5_000) : occurred;
        add('agent_events', [
          id,
          sessionId,
          org.id,
          external,
          sequence,
          revision,
          event.type,
          occurred,
          assistant ? true : null,
          hash,
          JSON.stringify(payload),
          occurred,
          updated,
          revised ? revision : null,
        ]);
        if (revised) {
          const before = { ...payload, content: `${typeof payload.content === 'string' ? payload.content : ''} (draft)` };
          add('agent_event_revisions', [
            take('revision'),
            id,
            sessionId,
            org.id,
            1,
            assistant ? false : null,
            Buffer.from(contentHash(before), 'hex'),
            JSON.stringify(before),
            updated,
          ]);
        }
        if (assistant) {
          assistantIds.push({ id, external, revision });
          const analysed = new Date(occurred.getTime() + 1_500);
          add('agent_analysis_jobs', [take('job'), sessionId, org.id, id, revision, 'done', occurred, analysed, 1, 1]);
          add('usage_records', [take('usage'), org.id, app.id, sessionId, id, 'agent_response_processed', 1, analysed]);
          if (random() < 0.25) {
            const signalId = uuid();
            const label = pick(LABELS);
            const kind = pick(['sentiment', 'issue', 'request', 'praise', 'topic'] as const);
            const signalRating = kind === 'issue' ? 'negative' : kind === 'praise' ? 'positive' : kind === 'sentiment' ? rating : null;
            add('agent_signals', [
              signalId,
              org.id,
              sessionId,
              id,
              external,
              'qualitative_inference',
              kind,
              signalRating,
              [label],
              null,
              `Customer mentions ${label}: ${pick(WORDS)}`,
              analysed,
              revision,
              'local',
              xid,
              change(),
              analysed,
            ]);
            if (random() < 0.5)
              domainEvent(
                org,
                'signal.created',
                signalId,
                { signalId, sessionId, applicationId: app.id, source: 'qualitative_inference' },
                analysed,
              );
          }
        }
        if (feedbackEvent) {
          const signalId = uuid();
          // The feedback event's signal (its event), naming the response it rates.
          add('agent_signals', [
            signalId,
            org.id,
            sessionId,
            id,
            target!.external,
            'explicit_feedback',
            'feedback',
            rating,
            [pick(LABELS)],
            pick(SENTENCES),
            null,
            occurred,
            revision,
            'explicit',
            xid,
            change(),
            occurred,
          ]);
          domainEvent(
            org,
            'signal.created',
            signalId,
            { signalId, sessionId, applicationId: app.id, source: 'explicit_feedback' },
            occurred,
          );
        }
        sequence++;
      }
      const ended = !open;
      add('agent_sessions', [
        sessionId,
        org.id,
        app.id,
        `s-${batch}-${sessionIndex++}`,
        ended ? 'ended' : 'open',
        'completed',
        'v1.4.2',
        JSON.stringify({ environment: 'production', channel: pick(['web', 'mobile', 'slack']) }),
        length,
        sequence - 1,
        sequence - 1,
        ended ? last : null,
        last,
        created,
        last,
        xid,
        change(),
        last,
      ]);
      add('agent_participants', [
        take('participant'),
        sessionId,
        org.id,
        'user',
        `u-${sessionIndex}`,
        'Customer',
        null,
        personOf(org),
        'external',
      ]);
      if (ended) domainEvent(org, 'agent_session.processed', sessionId, { sessionId, applicationId: app.id }, last);
      events += length;

      // Recordings and feedback records keep pace with the events.
      while (recordings < recordingsWanted * (events / options.events)) {
        recordings++;
        const rOrg = pickOrg();
        const recordingId = uuid();
        const when = at(events / options.events);
        add('recordings', [
          recordingId,
          rOrg.id,
          `Customer call ${recordings}`,
          'api',
          when,
          'completed',
          'completed',
          'api',
          when,
          when,
          xid,
          change(),
          when,
        ]);
        const speakers = 1 + Math.floor(random() * 4);
        const used = new Set<number>();
        for (let s = 0; s < speakers; s++) {
          const person = personOf(rOrg);
          if (used.has(person)) continue;
          used.add(person);
          add('recording_participants', [recordingId, used.size - 1, person]);
        }
        const utterances = 4 + Math.floor(random() * 17);
        for (let u = 0; u < utterances; u++) {
          add('transcript_utterances', [recordingId, u, u * 6, u * 6 + 5.5, u % Math.max(1, used.size), pick(SENTENCES)]);
        }
        domainEvent(rOrg, 'recording.transcript_completed', recordingId, { recordingId }, when);
      }
      while (feedback < feedbackWanted * (events / options.events)) {
        feedback++;
        const fOrg = pickOrg();
        const when = at(events / options.events);
        const fields = [
          { category: 'content', type: 'string', name: 'comment', value: pick(SENTENCES) },
          { category: 'metadata', type: 'integer', name: 'rating', value: 1 + Math.floor(random() * 5) },
        ];
        add('feedback_records', [
          take('feedbackRecord'),
          fOrg.id,
          fOrg.feedbackSourceId,
          personOf(fOrg),
          `f-${batch}-${feedback}`,
          when,
          JSON.stringify(fields),
          when,
        ]);
      }
      if (sessionIndex % 500 === 0) {
        for (let c = 0; c < 2; c++) {
          const cOrg = pickOrg();
          const when = at(events / options.events);
          const body = [
            { role: 'user', text: pick(SENTENCES) },
            { role: 'assistant', text: pick(SENTENCES) },
          ];
          add('coding_sessions', [
            uuid(),
            cOrg.id,
            'Refactor the export',
            'normalized',
            body.length,
            Buffer.from(contentHash({ body, n: sessionIndex + c }), 'hex'),
            JSON.stringify(body),
            when,
            'upload',
          ]);
        }
      }
      if (events - reported >= options.events / 10) {
        reported = events;
        progress(`${Math.round((100 * events) / options.events)}% (${events.toLocaleString('en')} events)`);
      }
      await backpressure();
    }

    progress('committing');
    await Promise.all(Object.values(sinks).map((s) => s.end()));
    await Promise.all(clients.slice(1).map((c) => c.query('COMMIT')));
    for (const [key, seq] of Object.entries(SEQUENCES) as [SequenceKey, string][]) {
      await admin.query(`SELECT setval('${seq}', $1)`, [next[key]]);
    }
    progress('analysing');
    await admin.query('ANALYZE');
    return {
      counts: Object.fromEntries(Object.values(sinks).map((s) => [s.table, s.rows])),
      organizations: orgs.map((o) => ({ id: o.id, share: o.weight })),
    };
  } finally {
    for (const c of clients) c.release();
    await pool.end();
  }
}

/** The database's size in bytes, and the largest tables' (with indexes and TOAST). */
/** SQL: the bytes of a table (an expression of regclass), a partitioned one's partitions summed (pg_partition_tree lists nothing for a plain table). */
export const TABLE_BYTES = (table: string) =>
  `coalesce((SELECT sum(pg_total_relation_size(p.relid)) FROM pg_partition_tree(${table}) p), pg_total_relation_size(${table}))`;

export async function databaseSize(url: string): Promise<{ bytes: number; tables: Record<string, number> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const bytes = Number((await client.query<{ b: string }>('SELECT pg_database_size(current_database()) AS b')).rows[0]!.b);
    const rows = (
      await client.query<{ name: string; b: string }>(
        // A partitioned table (agent_events) is the sum of its partitions, which are not listed apart.
        `SELECT c.relname AS name, ${TABLE_BYTES('c.oid')} AS b
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND (c.relkind = 'p' OR (c.relkind = 'r' AND NOT c.relispartition)) ORDER BY 2 DESC LIMIT 12`,
      )
    ).rows;
    return { bytes, tables: Object.fromEntries(rows.map((r) => [r.name, Number(r.b)])) };
  } finally {
    await client.end();
  }
}
