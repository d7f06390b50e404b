import { isObj, type AttrValue, type Attributes, type Obj, type OtelSpan, type OtelSpanEvent } from './model.js';

/**
 * GenAI spans as agent session messages (issue 35; docs/guides/opentelemetry.md has the table).
 * One model call's span gives the user messages that are new in its input (those after the input's
 * last assistant message: the history before it was the output of earlier calls) and the assistant
 * messages of its output. Messages come from, in this order of preference:
 *   1. `gen_ai.input.messages` / `gen_ai.output.messages` (semantic conventions 1.37 and later);
 *   2. span events: `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.system.message`,
 *      `gen_ai.tool.message`, `gen_ai.choice` (1.26 to 1.36), and `gen_ai.content.prompt` /
 *      `gen_ai.content.completion` (1.24 to 1.26, Semantic Kernel);
 *   3. `gen_ai.prompt.<i>.*` / `gen_ai.completion.<i>.*` attributes (OpenLLMetry);
 *   4. `llm.input_messages.<i>.message.*` / `llm.output_messages.<i>.message.*` (OpenInference);
 *   5. `ai.prompt.messages`, `ai.response.text`, `ai.response.toolCalls` of the Vercel AI SDK's
 *      provider-call spans (`ai.*.doGenerate`, `ai.*.doStream`; its outer spans repeat them).
 * Only user and assistant text is kept (the spec's rule 8): system prompts, tool inputs and results
 * and reasoning are not. An assistant message's tool calls are kept by name and id, without their
 * arguments. Pure: no I/O.
 */

export interface ToolCall {
  id?: string;
  name: string;
}

export interface GenAiMessage {
  /** Stable: trace id, span id, side and index, so that a re-sent span is the same event. */
  externalEventId: string;
  type: 'user_message' | 'assistant_message';
  content: string;
  /** Nanoseconds since the epoch: the span's start for its input, its end for its output. */
  timeUnixNano: bigint;
  /** The span's place in the request, then the message's place in the span: ties in time keep this order. */
  order: [number, number];
  final?: boolean;
  toolCalls?: ToolCall[];
  model?: { provider?: string; name?: string };
  usage?: { inputTokens?: number; outputTokens?: number; latencyMs?: number };
  trace: { traceId: string; spanId: string };
  userId?: string;
}

export interface GenAiSession {
  externalSessionId: string;
  /** Where the id came from: `gen_ai.conversation.id`, `session.id`, `ai.telemetry.metadata.sessionId` or `trace`. */
  idSource: string;
  environment?: string;
  release?: string;
  source?: { sdk: string; version: string };
  messages: GenAiMessage[];
}

export interface GenAiMapping {
  sessions: GenAiSession[];
  /** Spans that carried GenAI messages Intake could not read, with why. */
  rejected: { count: number; reasons: string[]; spanIds: string[] };
  /** Spans with no GenAI messages (HTTP, database, agent and tool spans), by id: accepted and not stored. */
  ignored: string[];
}

interface Message {
  /** Its identity within the span when not its index (GenAI events sent as log records). */
  key?: string;
  role: string;
  text: string;
  toolCalls: ToolCall[];
  finishReason?: string;
}

class Unreadable extends Error {}

const asString = (v: AttrValue | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
const asInt = (v: AttrValue | undefined): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : undefined;
const first = <T>(...values: (T | undefined)[]): T | undefined => values.find((v) => v !== undefined);

/** A JSON attribute: a string to parse, or a value already structured (an array or kvlist). */
function json(v: AttrValue | undefined, name: string): unknown {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    throw new Unreadable(`${name} is not valid JSON`);
  }
}

/** The text of a content value: a string, text parts (`{type: 'text', text | content}`), or `{text}`. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .filter((p) => isObj(p) && (p.type === undefined || p.type === 'text'))
      .map((p) => {
        const o = p as Obj;
        return typeof o.text === 'string' ? o.text : typeof o.content === 'string' ? o.content : '';
      })
      .filter((t) => t !== '')
      .join('\n');
  if (isObj(content) && typeof content.text === 'string') return content.text;
  return '';
}

function toolCallOf(v: unknown): ToolCall | null {
  if (!isObj(v)) return null;
  const fn = isObj(v.function) ? v.function : undefined;
  const name = [v.name, v.toolName, fn?.name].find((n) => typeof n === 'string' && n !== '') as string | undefined;
  if (!name) return null;
  const id = [v.id, v.toolCallId, v.tool_call_id].find((n) => typeof n === 'string' && n !== '') as string | undefined;
  return id ? { id, name } : { name };
}

/** The tool calls among `items` (those of part type `type`, when given). */
function toolCallsIn(items: unknown, type?: string): ToolCall[] {
  if (!Array.isArray(items)) return [];
  return items
    .filter((p) => type === undefined || (isObj(p) && p.type === type))
    .map(toolCallOf)
    .filter((t): t is ToolCall => t !== null);
}

/** A chat message object of any of the JSON shapes (parts, OpenAI's, the AI SDK's). */
function messageOf(v: unknown, defaultRole = 'user'): Message | null {
  if (!isObj(v)) return null;
  const role = typeof v.role === 'string' ? v.role : defaultRole;
  // Parts (GenAI 1.37+) or content (OpenAI's, the AI SDK's), then OpenAI's tool_calls beside them.
  const text = Array.isArray(v.parts) ? textOf(v.parts.filter((p) => isObj(p) && p.type === 'text')) : textOf(v.content);
  const toolCalls = [
    ...(Array.isArray(v.parts) ? toolCallsIn(v.parts, 'tool_call') : toolCallsIn(v.content, 'tool-call')),
    ...toolCallsIn(v.tool_calls ?? v.toolCalls),
  ];
  const finish = first(asString(v.finish_reason as AttrValue), asString(v.finishReason as AttrValue));
  return { role, text, toolCalls, ...(finish ? { finishReason: finish } : {}) };
}

function messages(v: unknown, name: string, defaultRole?: string): Message[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new Unreadable(`${name} is not an array of messages`);
  return v.map((m) => messageOf(m, defaultRole)).filter((m): m is Message => m !== null);
}

/** `prefix.<i>.<rest>` attributes grouped by i, in index order. */
function indexed(attrs: Attributes, prefix: string): Map<number, Attributes> {
  const out = new Map<number, Attributes>();
  for (const [key, value] of Object.entries(attrs)) {
    if (!key.startsWith(prefix)) continue;
    const m = /^(\d{1,6})\.(.+)$/.exec(key.slice(prefix.length));
    if (!m) continue;
    const i = Number(m[1]);
    const group = out.get(i) ?? {};
    group[m[2]!] = value;
    out.set(i, group);
  }
  return new Map([...out].sort((a, b) => a[0] - b[0]));
}

function indexedToolCalls(group: Attributes, prefix: string, nameKey: string, idKey: string): ToolCall[] {
  return [...indexed(group, prefix).values()].flatMap((c) => {
    const name = asString(c[nameKey]);
    const id = asString(c[idKey]);
    return name ? [id ? { id, name } : { name }] : [];
  });
}

/** OpenLLMetry: `gen_ai.prompt.<i>.role|content`, `gen_ai.completion.<i>.role|content|finish_reason|tool_calls.<j>.name|id`. */
function openLlmetry(attrs: Attributes, side: 'prompt' | 'completion'): Message[] {
  return [...indexed(attrs, `gen_ai.${side}.`).values()].map((g) => ({
    role: asString(g.role) ?? (side === 'prompt' ? 'user' : 'assistant'),
    text: textOf(maybeJson(g.content)),
    toolCalls: indexedToolCalls(g, 'tool_calls.', 'name', 'id'),
    ...(asString(g.finish_reason) ? { finishReason: asString(g.finish_reason)! } : {}),
  }));
}

/** OpenInference: `llm.<side>_messages.<i>.message.role|content|contents.<j>.message_content.text|tool_calls.<j>.tool_call.*`. */
function openInference(attrs: Attributes, side: 'input' | 'output'): Message[] {
  return [...indexed(attrs, `llm.${side}_messages.`).values()].map((g) => {
    const contents = [...indexed(g, 'message.contents.').values()]
      .filter((c) => (asString(c['message_content.type']) ?? 'text') === 'text')
      .map((c) => asString(c['message_content.text']) ?? '')
      .filter((t) => t !== '');
    return {
      role: asString(g['message.role']) ?? (side === 'input' ? 'user' : 'assistant'),
      text: asString(g['message.content']) ?? contents.join('\n'),
      toolCalls: indexedToolCalls(g, 'message.tool_calls.', 'tool_call.function.name', 'tool_call.id'),
    };
  });
}

const EVENT_ROLES: Record<string, string> = {
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.system.message': 'system',
  'gen_ai.tool.message': 'tool',
};

/** A message event's content: `content` (text or JSON), or `gen_ai.event.content` (JSON of the event's body). */
function eventMessage(e: OtelSpanEvent, role: string): Message | null {
  const body = json(e.attributes['gen_ai.event.content'], `${e.name} gen_ai.event.content`);
  if (isObj(body)) return messageOf({ role, ...body }, role);
  return messageOf(
    { role, content: maybeJson(e.attributes.content), tool_calls: json(e.attributes.tool_calls, `${e.name} tool_calls`) },
    role,
  );
}

/** Text that may be JSON-encoded content parts (OpenLLMetry's multimodal prompts) or plain text. */
function maybeJson(v: AttrValue | undefined): unknown {
  return typeof v === 'string' && /^\s*[[{]/.test(v) ? safeJson(v) : (v ?? '');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Span events of the event-based conventions: the input messages and the choices. */
function fromEvents(span: OtelSpan): { input: Message[]; output: Message[] } {
  const input: Message[] = [];
  const output: Message[] = [];
  for (const e of span.events) {
    const role = EVENT_ROLES[e.name];
    if (role) {
      const m = eventMessage(e, role);
      if (m) input.push(e.key ? { ...m, key: e.key } : m);
    } else if (e.name === 'gen_ai.choice') {
      const body = json(e.attributes['gen_ai.event.content'], 'gen_ai.choice gen_ai.event.content');
      const choice = isObj(body)
        ? body
        : { message: json(e.attributes.message, 'gen_ai.choice message'), finish_reason: e.attributes.finish_reason };
      const m = messageOf(isObj(choice.message) ? { role: 'assistant', ...choice.message } : { role: 'assistant' }, 'assistant');
      const finish = asString(choice.finish_reason as AttrValue);
      if (m) output.push({ ...m, ...(finish ? { finishReason: finish } : {}), ...(e.key ? { key: e.key } : {}) });
    } else if (e.name === 'gen_ai.content.prompt') {
      input.push(...messages(json(e.attributes['gen_ai.prompt'], 'gen_ai.prompt'), 'gen_ai.prompt', 'user'));
    } else if (e.name === 'gen_ai.content.completion') {
      output.push(...messages(json(e.attributes['gen_ai.completion'], 'gen_ai.completion'), 'gen_ai.completion', 'assistant'));
    }
  }
  return { input, output };
}

/** The Vercel AI SDK's provider-call spans (`ai.generateText.doGenerate`, `ai.streamText.doStream`, ...). */
function vercel(span: OtelSpan): { input: Message[]; output: Message[] } | null {
  const op = asString(span.attributes['ai.operationId']) ?? '';
  if (!op) return null;
  if (!/\.do(Generate|Stream)$/.test(op)) return { input: [], output: [] };
  const input = messages(json(span.attributes['ai.prompt.messages'], 'ai.prompt.messages'), 'ai.prompt.messages');
  const text = asString(span.attributes['ai.response.text']) ?? '';
  const calls = json(span.attributes['ai.response.toolCalls'], 'ai.response.toolCalls');
  const toolCalls = toolCallsIn(calls);
  const finish = asString(span.attributes['ai.response.finishReason']);
  const output = text || toolCalls.length ? [{ role: 'assistant', text, toolCalls, ...(finish ? { finishReason: finish } : {}) }] : [];
  return { input, output };
}

/** The span's input and output messages, from the first convention that has them. */
function spanMessages(span: OtelSpan): { input: Message[]; output: Message[]; convention: string } {
  const a = span.attributes;
  const ai = vercel(span);
  if (ai) return { ...ai, convention: 'vercel-ai' };
  if (a['gen_ai.input.messages'] !== undefined || a['gen_ai.output.messages'] !== undefined)
    return {
      input: messages(json(a['gen_ai.input.messages'], 'gen_ai.input.messages'), 'gen_ai.input.messages'),
      output: messages(json(a['gen_ai.output.messages'], 'gen_ai.output.messages'), 'gen_ai.output.messages', 'assistant'),
      convention: 'gen_ai.messages',
    };
  const events = fromEvents(span);
  if (events.input.length || events.output.length) return { ...events, convention: 'gen_ai.events' };
  const prompt = openLlmetry(a, 'prompt');
  const completion = openLlmetry(a, 'completion');
  if (prompt.length || completion.length) return { input: prompt, output: completion, convention: 'gen_ai.attributes' };
  const input = openInference(a, 'input');
  const output = openInference(a, 'output');
  if (input.length || output.length) return { input, output, convention: 'openinference' };
  return { input: [], output: [], convention: '' };
}

/** Finish reasons that mean the model stopped to call a tool: the response goes on after it. */
const TOOL_FINISH = new Set(['tool_calls', 'tool_call', 'tool_use', 'tool-calls', 'function_call']);
/** Agent operations that repeat their model calls' messages when those are spans of their own. */
const AGENT_OPERATIONS = new Set(['invoke_agent', 'create_agent']);

function attr(span: OtelSpan, key: string): AttrValue | undefined {
  return span.attributes[key] ?? span.resource[key];
}

function sessionIdOf(span: OtelSpan): { id: string; source: string } {
  for (const key of ['gen_ai.conversation.id', 'session.id', 'ai.telemetry.metadata.sessionId']) {
    const v = attr(span, key);
    if ((typeof v === 'string' && v.trim() !== '') || typeof v === 'number') return { id: String(v).slice(0, 512), source: key };
  }
  return { id: span.traceId, source: 'trace' };
}

function modelOf(span: OtelSpan): GenAiMessage['model'] {
  const a = span.attributes;
  const provider = first(
    asString(a['gen_ai.provider.name']),
    asString(a['gen_ai.system']),
    asString(a['llm.provider']),
    asString(a['llm.system']),
    asString(a['ai.model.provider']),
  );
  const name = first(
    asString(a['gen_ai.request.model']),
    asString(a['gen_ai.response.model']),
    asString(a['llm.model_name']),
    asString(a['ai.model.id']),
  );
  return provider || name
    ? { ...(provider ? { provider: provider.slice(0, 200) } : {}), ...(name ? { name: name.slice(0, 200) } : {}) }
    : undefined;
}

function usageOf(span: OtelSpan): GenAiMessage['usage'] {
  const a = span.attributes;
  const inputTokens = first(
    asInt(a['gen_ai.usage.input_tokens']),
    asInt(a['gen_ai.usage.prompt_tokens']),
    asInt(a['llm.token_count.prompt']),
    asInt(a['ai.usage.inputTokens']),
    asInt(a['ai.usage.promptTokens']),
  );
  const outputTokens = first(
    asInt(a['gen_ai.usage.output_tokens']),
    asInt(a['gen_ai.usage.completion_tokens']),
    asInt(a['llm.token_count.completion']),
    asInt(a['ai.usage.outputTokens']),
    asInt(a['ai.usage.completionTokens']),
  );
  const latencyMs =
    span.endTimeUnixNano > span.startTimeUnixNano ? Number((span.endTimeUnixNano - span.startTimeUnixNano) / 1_000_000n) : undefined;
  return {
    ...(inputTokens !== undefined ? { inputTokens } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
    ...(latencyMs !== undefined ? { latencyMs } : {}),
  };
}

/** The messages of one span, or why they could not be read. */
function spanToMessages(span: OtelSpan, place: number): { messages: GenAiMessage[]; convention: string } {
  const { input, output, convention } = spanMessages(span);
  const trace = { traceId: span.traceId, spanId: span.spanId };
  const userId = [attr(span, 'user.id'), attr(span, 'enduser.id'), attr(span, 'ai.telemetry.metadata.userId')].find(
    (v): v is string => typeof v === 'string' && v !== '',
  );
  const lastAssistant = input.map((m) => m.role).lastIndexOf('assistant');
  const out: GenAiMessage[] = [];
  input.forEach((m, i) => {
    if (i <= lastAssistant || m.role !== 'user' || m.text === '') return;
    out.push({
      externalEventId: `otel-${span.traceId}-${span.spanId}-in-${m.key ?? i}`,
      type: 'user_message',
      content: m.text,
      timeUnixNano: span.startTimeUnixNano,
      order: [place, i],
      trace,
      ...(userId ? { userId: userId.slice(0, 512) } : {}),
    });
  });
  const model = modelOf(span);
  const usage = usageOf(span);
  output.forEach((m, i) => {
    if (m.role !== 'assistant' || (m.text === '' && m.toolCalls.length === 0)) return;
    const final = m.text !== '' && !(m.finishReason && TOOL_FINISH.has(m.finishReason)) && m.toolCalls.length === 0;
    out.push({
      externalEventId: `otel-${span.traceId}-${span.spanId}-out-${m.key ?? i}`,
      type: 'assistant_message',
      content: m.text,
      timeUnixNano: span.endTimeUnixNano || span.startTimeUnixNano,
      order: [place, input.length + i],
      final,
      ...(m.toolCalls.length ? { toolCalls: m.toolCalls.slice(0, 64).map((t) => ({ ...t, name: t.name.slice(0, 200) })) } : {}),
      ...(model ? { model } : {}),
      ...(usage && Object.keys(usage).length ? { usage } : {}),
      trace,
    });
  });
  return { messages: out, convention };
}

/** Maps the spans of one export request to sessions of messages, in time order within each session. */
export function mapGenAiSpans(spans: readonly OtelSpan[]): GenAiMapping {
  const rejected = { count: 0, reasons: [] as string[], spanIds: [] as string[] };
  const ignored: string[] = [];
  const read: { span: OtelSpan; messages: GenAiMessage[]; agent: boolean }[] = [];
  spans.forEach((span, place) => {
    try {
      const { messages: found, convention } = spanToMessages(span, place);
      if (!convention) {
        ignored.push(span.spanId);
        return;
      }
      const agent = AGENT_OPERATIONS.has(asString(span.attributes['gen_ai.operation.name']) ?? '');
      read.push({ span, messages: found, agent });
    } catch (error) {
      if (!(error instanceof Unreadable)) throw error;
      rejected.count += 1;
      rejected.spanIds.push(span.spanId);
      rejected.reasons.push(`span ${span.spanId}: ${error.message}`);
    }
  });
  // An agent span repeats what its model calls said when those are spans too: keep the calls' messages.
  const tracesWithCalls = new Set(read.filter((r) => !r.agent).map((r) => r.span.traceId));
  const sessions = new Map<string, GenAiSession>();
  for (const { span, messages: found, agent } of read) {
    if (agent && tracesWithCalls.has(span.traceId)) {
      ignored.push(span.spanId);
      continue;
    }
    if (!found.length) continue;
    const { id, source } = sessionIdOf(span);
    let session = sessions.get(id);
    if (!session) {
      const environment = asString(attr(span, 'deployment.environment.name')) ?? asString(attr(span, 'deployment.environment'));
      const release = asString(span.resource['service.version']);
      const sdk = asString(span.resource['telemetry.sdk.name']);
      const version = asString(span.resource['telemetry.sdk.version']);
      session = {
        externalSessionId: id,
        idSource: source,
        ...(environment ? { environment: environment.slice(0, 64) } : {}),
        ...(release ? { release: release.slice(0, 200) } : {}),
        ...(sdk && version ? { source: { sdk: `${sdk} (OTLP)`.slice(0, 200), version: version.slice(0, 200) } } : {}),
        messages: [],
      };
      sessions.set(id, session);
    }
    session.messages.push(...found);
  }
  for (const s of sessions.values()) s.messages.sort(byTime);
  return { sessions: [...sessions.values()], rejected, ignored };
}

export function byTime(a: GenAiMessage, b: GenAiMessage): number {
  if (a.timeUnixNano !== b.timeUnixNano) return a.timeUnixNano < b.timeUnixNano ? -1 : 1;
  return a.order[0] - b.order[0] || a.order[1] - b.order[1];
}
