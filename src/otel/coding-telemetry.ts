import type { DatabasePool } from 'slonik';
import { appendTelemetryEvents } from '../domain/coding-sessions/append.js';
import { environmentAllowed } from '../domain/agent-events.js';
import { mapClaudeCodeRecords, type TelemetryCodingSession } from '../domain/otel/claude-code.js';
import type { OtelLogRecord } from '../domain/otel/model.js';
import { findApplicationById, type ApplicationRow } from '../db/repositories/agent-applications.js';
import { lockTelemetrySession, saveTelemetrySession } from '../db/repositories/coding-sessions.js';
import { AppError } from '../errors.js';

export interface CodingTelemetryOutcome {
  /** Records rejected, and why. */
  rejected: number;
  reasons: string[];
  /** Claude Code events Intake does not keep: accepted. */
  ignored: number;
  sessions: { externalId: string; sessionId: string; created: boolean; accepted: number; deduplicated: number }[];
}

/**
 * Claude Code's telemetry as coding-agent sessions (issue 35, point 4): the sessions the MCP tools
 * list and associate with projects. Each export's events are appended to their session in one
 * transaction that holds the session's row, so that exports of one session, from any process, are
 * appended one after the other; a re-sent export adds nothing.
 */
export class CodingTelemetry {
  constructor(private readonly pool: DatabasePool) {}

  async records(applicationId: string, records: readonly OtelLogRecord[]): Promise<CodingTelemetryOutcome> {
    // The settings as they are now, not as a cached credential lookup saw them: masking and capture apply from the moment they are saved.
    const app = await findApplicationById(this.pool, applicationId);
    if (!app || app.deleted_at) throw new AppError('not_found', { message: 'Agent application not found.' });
    const mapping = mapClaudeCodeRecords(records, {
      contentCapture: app.content_capture,
      redactedFieldNames: app.redacted_field_names,
      redactedTextPatterns: app.redacted_text_patterns,
    });
    const outcome: CodingTelemetryOutcome = {
      rejected: mapping.rejected.count,
      reasons: [...mapping.rejected.reasons],
      ignored: mapping.ignored,
      sessions: [],
    };
    for (const session of mapping.sessions) {
      if (!environmentAllowed(session.environment, app.allowed_environments)) {
        outcome.rejected += session.events.length;
        outcome.reasons.push(
          `session ${JSON.stringify(session.externalId)}: ${session.environment ? `'${session.environment}' is not an allowed environment` : 'no deployment.environment.name, and this application accepts only configured environments'}`,
        );
        continue;
      }
      const written = await this.append(app, session);
      outcome.sessions.push(written);
      if (written.overLimit) {
        outcome.rejected += written.overLimit;
        outcome.reasons.push(`session ${JSON.stringify(session.externalId)}: ${written.overLimit} event(s) past the session's limit`);
      }
    }
    return outcome;
  }

  private async append(app: ApplicationRow, session: TelemetryCodingSession) {
    return this.pool.transaction(async (tx) => {
      const stored = await lockTelemetrySession(tx, {
        organizationId: app.organization_id,
        applicationId: app.id,
        externalId: session.externalId,
      });
      const merged = appendTelemetryEvents(stored.events, session.events);
      if (merged.accepted > 0 || stored.created) {
        const prompt = merged.events.find((e) => e.type === 'user_message' && e.content);
        await saveTelemetrySession(tx, stored.id, {
          events: merged.events,
          title: stored.title ?? (prompt?.content ? titleOf(prompt.content) : null),
          agentVersion: session.agentVersion ?? null,
        });
      }
      return {
        externalId: session.externalId,
        sessionId: stored.id,
        created: stored.created,
        accepted: merged.accepted,
        deduplicated: merged.deduplicated,
        overLimit: merged.overLimit,
      };
    });
  }
}

/** A session's title: its first prompt's first line, at most 120 characters. */
function titleOf(prompt: string): string {
  const line = prompt.trim().split('\n')[0]!.trim();
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}
