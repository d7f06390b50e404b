import { createHash } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { DatabasePool } from 'slonik';
import type { Logger } from '../logger.js';
import { z } from 'zod';
import { SessionParseError } from '../domain/coding-sessions/index.js';
import { AppError } from '../errors.js';
import { readSession, sessionOf, type SessionOutcome, type SessionTask } from './read-session.js';
import {
  associate,
  associatedSessions,
  codingSessionExists,
  findProject,
  insertProject,
  upsertCodingSession,
  type ProjectRow,
} from '../db/repositories/projects.js';
import { listCodingSessions } from '../db/repositories/coding-sessions.js';

export interface McpUser {
  organizationId: string;
  userId: string;
}

export interface McpRequestContext {
  /** The request's logger (carries its request id). */
  log: Logger;
  requestId: string;
  /**
   * Reads an uploaded session file off the event loop within a time budget (the API's threads);
   * without it, the file is read on the event loop.
   */
  readSession?: (task: SessionTask) => Promise<SessionOutcome>;
}

/** Largest session file `upload-agent-session` takes (characters of JSONL). */
export const MAX_SESSION_CHARACTERS = 8_000_000;

const FORMATS = ['normalized', 'claude-code', 'codex'] as const;

function ok<T extends Record<string, unknown>>(structured: T): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/** A tool error the client shows to the user (not a protocol error). */
function failure(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/**
 * A refusal from the error table (`src/errors.ts`): a tool error whose text ends with the errorCode,
 * also in `_meta` for programs. Not `structuredContent`: the SDK's client checks that against the
 * tool's output schema even on an error.
 */
function refusal(error: AppError): CallToolResult {
  return { ...failure(`${error.message} (errorCode ${error.errorCode})`), _meta: { errorCode: error.errorCode } };
}

const projectOut = (p: ProjectRow) => ({
  publicId: p.public_id,
  name: p.name,
  description: p.description,
  associatedSessionCount: p.associated_session_count,
  createdAt: p.created_at,
});

/**
 * The coding-agent session tools, bound to one authenticated user: everything they read or write is
 * scoped to the user's organization; another organization's ids read as unknown.
 */
export function createMcpServer(pool: DatabasePool, user: McpUser, request: McpRequestContext): McpServer {
  /**
   * The SDK turns an exception in a tool into a tool error carrying the exception's message; a database
   * or programming error must not reach the user that way. It is logged, and the user gets the request id.
   */
  const guard =
    <A extends unknown[]>(handler: (...args: A) => Promise<CallToolResult>) =>
    async (...args: A): Promise<CallToolResult> => {
      try {
        return await handler(...args);
      } catch (error) {
        if (error instanceof AppError) return refusal(error);
        request.log.error({ err: error }, 'MCP tool failed');
        return failure(`The tool failed because of an internal error. Retry later, or quote request id ${request.requestId} to support.`);
      }
    };
  const server = new McpServer(
    { name: 'intake', version: '1.0.0' },
    { instructions: 'Upload coding-agent sessions and associate them with projects.' },
  );
  const mutating = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };
  const reading = { readOnlyHint: true, openWorldHint: false };
  const notFound = (what: string, id: string) => failure(`${what} '${id}' not found in your organization.`);

  server.registerTool(
    'create-project',
    {
      title: 'Create project',
      description: 'Create a project to associate coding-agent sessions with. Returns its publicId.',
      inputSchema: { name: z.string().trim().min(1).max(200), description: z.string().max(5000).optional() },
      outputSchema: { publicId: z.string(), name: z.string(), description: z.string().nullable() },
      annotations: { ...mutating, idempotentHint: false },
    },
    guard(async ({ name, description }) => {
      const p = await insertProject(pool, {
        organizationId: user.organizationId,
        userId: user.userId,
        name,
        description: description ?? null,
      });
      return ok({ publicId: p.public_id, name: p.name, description: p.description });
    }),
  );

  server.registerTool(
    'upload-agent-session',
    {
      title: 'Upload agent session',
      description:
        'Upload a coding-agent session file: Claude Code or Codex CLI JSONL, or normalized events (one {type: user_message|assistant_message, content} per line). ' +
        'Only visible user and assistant text is kept; secrets are masked. Uploading the same file again returns the same session.',
      inputSchema: {
        content: z.string().min(1).max(MAX_SESSION_CHARACTERS),
        format: z.enum(['auto', ...FORMATS]).optional(),
        title: z.string().trim().min(1).max(500).optional(),
      },
      outputSchema: {
        sessionId: z.string(),
        format: z.enum(FORMATS),
        eventCount: z.number().int(),
        title: z.string().nullable(),
        created: z.boolean(),
      },
      annotations: { ...mutating, idempotentHint: true },
    },
    guard(async ({ content, format, title }) => {
      let session;
      try {
        const task = { content, format: format ?? 'auto' } as const;
        session = sessionOf(await (request.readSession ?? readSession)(task));
      } catch (error) {
        if (error instanceof SessionParseError) return failure(`Malformed session file: ${error.message}`);
        throw error;
      }
      const { events } = session;
      if (events.length === 0) return failure(`No visible user or assistant messages found (read as ${session.format}).`);
      const row = await upsertCodingSession(pool, {
        organizationId: user.organizationId,
        userId: user.userId,
        title: title ?? session.title,
        format: session.format,
        contentHash: createHash('sha256').update(content).digest(),
        events,
      });
      return ok({ sessionId: row.id, format: row.format, eventCount: row.event_count, title: row.title, created: row.created });
    }),
  );

  const resource = { resourceType: z.literal('project'), resourceId: z.string().min(1).max(100) };

  server.registerTool(
    'associate-agent-session',
    {
      title: 'Associate agent session',
      description:
        'Associate an uploaded session with a project (resourceType "project", resourceId: the project publicId). Repeating it is harmless.',
      inputSchema: { ...resource, sessionId: z.string().min(1).max(100) },
      outputSchema: {
        resourceType: z.literal('project'),
        resourceId: z.string(),
        sessionId: z.string(),
        associated: z.literal(true),
        associatedAt: z.string(),
      },
      annotations: { ...mutating, idempotentHint: true },
    },
    guard(async ({ resourceId, sessionId }) => {
      const project = await findProject(pool, user.organizationId, resourceId);
      if (!project) return notFound('Project', resourceId);
      if (!(await codingSessionExists(pool, user.organizationId, sessionId))) return notFound('Agent session', sessionId);
      const associatedAt = await associate(pool, project.id, sessionId.toLowerCase(), user.userId);
      return ok({
        resourceType: 'project' as const,
        resourceId: project.public_id,
        sessionId: sessionId.toLowerCase(),
        associated: true as const,
        associatedAt,
      });
    }),
  );

  server.registerTool(
    'get-project',
    {
      title: 'Get project',
      description: 'A project with the number of sessions associated with it.',
      inputSchema: { publicId: z.string().min(1).max(100) },
      outputSchema: {
        publicId: z.string(),
        name: z.string(),
        description: z.string().nullable(),
        associatedSessionCount: z.number().int(),
        createdAt: z.string(),
      },
      annotations: reading,
    },
    guard(async ({ publicId }) => {
      const project = await findProject(pool, user.organizationId, publicId);
      return project ? ok(projectOut(project)) : notFound('Project', publicId);
    }),
  );

  server.registerTool(
    'list-associated-agent-sessions',
    {
      title: 'List associated agent sessions',
      description:
        'The sessions associated with a project, oldest association first, up to `limit` (default 100) per call; pass `nextCursor` back as `cursor` for more.',
      inputSchema: { ...resource, limit: z.number().int().min(1).max(500).optional(), cursor: z.string().max(200).optional() },
      outputSchema: {
        sessions: z.array(
          z.object({
            sessionId: z.string(),
            title: z.string().nullable(),
            format: z.string(),
            eventCount: z.number().int(),
            associatedAt: z.string(),
          }),
        ),
        nextCursor: z.string().nullable(),
      },
      annotations: reading,
    },
    guard(async ({ resourceId, limit = 100, cursor }) => {
      const after = cursor === undefined ? null : decodeCursor(cursor);
      if (after === undefined) return failure('Invalid cursor: pass the nextCursor of a previous call unchanged.');
      const project = await findProject(pool, user.organizationId, resourceId);
      if (!project) return notFound('Project', resourceId);
      const { page, nextCursor } = keysetPage(await associatedSessions(pool, project.id, { after, limit: limit + 1 }), limit, (r) => ({
        at: r.associated_at,
        id: r.session_id,
      }));
      return ok({
        sessions: page.map((r) => ({
          sessionId: r.session_id,
          title: r.title,
          format: r.format,
          eventCount: r.event_count,
          associatedAt: r.associated_at,
        })),
        nextCursor,
      });
    }),
  );

  server.registerTool(
    'list-agent-sessions',
    {
      title: 'List agent sessions',
      description:
        "The organization's coding-agent sessions, newest first: those uploaded (`source: upload`) and those Claude Code sent as OpenTelemetry events (`source: telemetry`, `externalId` its session.id), up to `limit` (default 50) per call; pass `nextCursor` back as `cursor` for more. Their sessionId is what associate-agent-session takes.",
      inputSchema: {
        source: z.enum(['upload', 'telemetry']).optional(),
        externalId: z.string().min(1).max(512).optional(),
        limit: z.number().int().min(1).max(500).optional(),
        cursor: z.string().max(200).optional(),
      },
      outputSchema: {
        sessions: z.array(
          z.object({
            sessionId: z.string(),
            source: z.enum(['upload', 'telemetry']),
            externalId: z.string().nullable(),
            title: z.string().nullable(),
            format: z.string(),
            eventCount: z.number().int(),
            agentVersion: z.string().nullable(),
            createdAt: z.string(),
            updatedAt: z.string(),
          }),
        ),
        nextCursor: z.string().nullable(),
      },
      annotations: reading,
    },
    guard(async ({ source, externalId, limit = 50, cursor }) => {
      const after = cursor === undefined ? null : decodeCursor(cursor);
      if (after === undefined) return failure('Invalid cursor: pass the nextCursor of a previous call unchanged.');
      const rows = await listCodingSessions(pool, user.organizationId, {
        ...(source ? { source } : {}),
        ...(externalId !== undefined ? { externalId } : {}),
        after,
        limit: limit + 1,
      });
      const { page, nextCursor } = keysetPage(rows, limit, (r) => ({ at: r.position, id: r.id }));
      return ok({
        sessions: page.map((r) => ({
          sessionId: r.id,
          source: r.source,
          externalId: r.external_id,
          title: r.title,
          format: r.format,
          eventCount: r.event_count,
          agentVersion: r.agent_version,
          createdAt: r.created_at,
          updatedAt: r.updated_at,
        })),
        nextCursor,
      });
    }),
  );

  return server;
}

/** A page of `limit` from `limit + 1` rows read, and the cursor after its last row when there are more. */
function keysetPage<R>(rows: readonly R[], limit: number, positionOf: (row: R) => z.infer<typeof cursorShape>) {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(positionOf(last)) : null };
}

const cursorShape = z.object({ at: z.iso.datetime({ offset: true }), id: z.uuid() });
const encodeCursor = (position: z.infer<typeof cursorShape>) => Buffer.from(JSON.stringify(position)).toString('base64url');
/** The position a cursor names; undefined when it is not one this server issued. */
function decodeCursor(cursor: string): z.infer<typeof cursorShape> | undefined {
  try {
    const parsed = cursorShape.safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
