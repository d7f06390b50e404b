import { instant, isObject, type JsonObject, type Line, type ParsedSession, type SessionMessage } from './types.js';

const ENVELOPE_TYPES = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted']);
const ITEM_TYPES = new Set([
  'message',
  'reasoning',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
  'web_search_call',
]);

/**
 * Whether one line looks like a line of a Codex CLI rollout file (`~/.codex/sessions/…/rollout-*.jsonl`):
 * the current `{timestamp, type, payload}` envelope, or the older layout of a header line, `record_type`
 * lines and bare response items.
 */
export function isCodexLine(v: JsonObject): boolean {
  if (typeof v.type === 'string' && ENVELOPE_TYPES.has(v.type) && 'payload' in v) return true;
  if (typeof v.record_type === 'string') return true;
  if (typeof v.type === 'string' && ITEM_TYPES.has(v.type))
    return v.type !== 'message' || (typeof v.role === 'string' && Array.isArray(v.content));
  // Older header line, or the older single-document `.json` session.
  return (
    (typeof v.id === 'string' && typeof v.timestamp === 'string' && 'instructions' in v) || (isObject(v.session) && Array.isArray(v.items))
  );
}

/** Context the CLI injects as user turns: environment, AGENTS.md and user instructions, aborted-turn markers. */
const INJECTED = /^\s*(<environment_context>|<user_instructions>|<user_shell_command>|<turn_aborted>|# AGENTS\.md instructions for )/;

function itemText(item: JsonObject): string {
  if (!Array.isArray(item.content)) return typeof item.content === 'string' ? item.content : '';
  const wanted = item.role === 'user' ? 'input_text' : 'output_text';
  return item.content
    .filter((b): b is { text: string } => isObject(b) && (b.type === wanted || b.type === 'text') && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n\n');
}

/**
 * Visible user and assistant text of a Codex CLI session, from `message` response items only:
 * developer and system messages, reasoning, function and tool calls with their outputs, the `event_msg`
 * echoes of the same turns and injected context are skipped.
 */
export function parseCodex(lines: Line[]): ParsedSession {
  const items: { item: JsonObject; at: unknown }[] = [];
  for (const { value: v } of lines) {
    if (v.type === 'response_item' && isObject(v.payload)) {
      items.push({ item: v.payload, at: v.timestamp ?? v.payload.timestamp });
    } else if (isObject(v.session) && Array.isArray(v.items)) {
      for (const item of v.items.filter(isObject)) items.push({ item, at: item.timestamp });
    } else if (v.type === 'message') {
      items.push({ item: v, at: v.timestamp });
    }
  }
  const messages: SessionMessage[] = [];
  for (const { item, at } of items) {
    if (item.type !== 'message' || (item.role !== 'user' && item.role !== 'assistant')) continue;
    const text = itemText(item).trim();
    if (!text || (item.role === 'user' && INJECTED.test(text))) continue;
    messages.push({ type: item.role === 'user' ? 'user_message' : 'assistant_message', content: text, occurredAt: instant(at) });
  }
  return { format: 'codex', messages, title: null };
}
