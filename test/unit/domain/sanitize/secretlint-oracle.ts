import { lintSource } from '@secretlint/core';
import { secretLintProfiler } from '@secretlint/profiler';
import { rules as recommendedRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintCoreConfig, SecretLintCoreResultMessage } from '@secretlint/types';

/**
 * secretlint's recommended preset, kept as a dev dependency: the oracle that Intake's own pattern
 * table (src/domain/sanitize/secret-patterns.ts) is compared with. It runs as the service ran it
 * until issue 34: every rule but filter-comments, on a neutral `.txt` name.
 */
secretLintProfiler.setEnabled(false);

const FILTER_COMMENTS_ID = '@secretlint/secretlint-rule-filter-comments';
const CONFIG: SecretLintCoreConfig = {
  rules: recommendedRules.filter((rule) => rule.meta.id !== FILTER_COMMENTS_ID).map((rule) => ({ id: rule.meta.id, rule })),
};

export interface OracleFinding {
  readonly ruleId: string;
  readonly messageId: string;
  readonly start: number;
  readonly end: number;
}

/** secretlint's findings in `text`, each as the range of the secret it reports. */
export async function secretlintFindings(text: string): Promise<OracleFinding[]> {
  const result = await lintSource({
    source: { content: text, filePath: 'chat-message.txt', ext: '.txt', contentType: 'text' },
    options: { config: CONFIG, noPhysicFilePath: true },
  });
  return result.messages.map((message) => {
    const [start, end] = locate(text, message);
    return { ruleId: message.ruleId, messageId: message.messageId, start, end };
  });
}

/**
 * Some rules report a range that starts at the match but has the length of the captured secret
 * (AWS `aws_secret_access_key = x` covers the key name and leaves the end of the secret). The
 * reported secret is in the message data: find it from the range start.
 */
function locate(text: string, message: SecretLintCoreResultMessage): readonly [number, number] {
  const [start, end] = message.range;
  const values = Object.values(message.data ?? {}).filter((v): v is string => typeof v === 'string' && v.length >= 8);
  const reported = text.slice(start, end);
  if (values.length === 0 || values.includes(reported)) return message.range;
  for (const value of values) {
    const at = text.indexOf(value, start);
    if (at !== -1 && at - start <= 512) return [at, at + value.length];
  }
  return message.range;
}
