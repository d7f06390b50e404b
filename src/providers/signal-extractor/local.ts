import { clip, MAX_LABEL_CHARS, type Exchange, type ExtractedSignal, type SignalExtractor } from './types.js';

/**
 * The built-in extractor: fixed English rules over plain strings, no network and no randomness, so
 * the same exchange always yields the same signals. Rules:
 *
 * - Text is lower-cased (locale-independent), "n't" becomes " not" and the suffixes 's 're 'll 've
 *   'd 'm are dropped; it is tokenised on anything that is not a Unicode letter or digit.
 * - sentiment (user text only): each word in the positive lexicon scores +1, in the negative -1. A
 *   negator (not, no, never, nothing, hardly) flips the word right after it; intensifiers (very,
 *   really, so, too, that) in between keep the flip pending. Negation stops at a sentence end.
 *   Non-zero total: one signal rated by its sign; zero or no user text: none.
 * - issue: the first user sentence naming a problem (error, bug, broken, crash, fail…, doesn't
 *   work, not working, wrong, can't/cannot, issue, problem, exception): one signal rated negative.
 * - request: the first user sentence asking for a change (can/could you add…, please add, feature
 *   request, would like/love, I'd like, wish, it would be great/nice if, add support for): one
 *   signal rated null.
 * - praise: the first user sentence with a praise word (thanks, great, awesome, love, perfect,
 *   helpful…) that is not negated ("not great" is no praise): one signal rated positive.
 * - topic: over user text and response, words of 4 to 64 characters that start with a letter and
 *   are not stop words, ranked by count, then by code-unit order; the top 3 form one signal
 *   ("Topics: a, b, c"), none when no word qualifies.
 * - Every signal carries those topics as labels. Order: sentiment, issue, request, praise, topic.
 *   Summaries quote the matching sentence, whitespace collapsed, cut to 500 characters.
 */
export class LocalSignalExtractor implements SignalExtractor {
  readonly name = 'local';

  async extract(exchange: Exchange): Promise<ExtractedSignal[]> {
    const sentences = exchange.userMessages.flatMap(splitSentences);
    const labels = topics([...exchange.userMessages, exchange.response]);
    const signals: ExtractedSignal[] = [];
    const add = (kind: ExtractedSignal['kind'], rating: ExtractedSignal['rating'], summary: string) =>
      signals.push({ kind, rating, summary: clip(summary), labels: [...labels] });

    const score = sentences.reduce((sum, s) => sum + marked(tokenize(s)).reduce((acc, m) => acc + m.value, 0), 0);
    if (score !== 0) {
      const rating = score > 0 ? 'positive' : 'negative';
      add('sentiment', rating, `User sentiment is ${rating} (score ${score > 0 ? '+' : ''}${score}).`);
    }
    const issue = sentences.find((s) => ISSUE.test(s));
    if (issue !== undefined) add('issue', 'negative', `Issue reported: ${issue}`);
    const request = sentences.find((s) => REQUEST.test(s));
    if (request !== undefined) add('request', null, `Request: ${request}`);
    const praise = sentences.find((s) => marked(tokenize(s)).some((m) => PRAISE.has(m.word) && !m.negated));
    if (praise !== undefined) add('praise', 'positive', `Praise: ${praise}`);
    if (labels.length > 0) add('topic', null, `Topics: ${labels.join(', ')}`);
    return signals;
  }
}

const words = (list: string) => new Set(list.split(' '));
const POSITIVE = words(
  'good great excellent awesome amazing love loved nice helpful perfect thanks thank happy fantastic wonderful brilliant works working worked useful glad easy fast clear cool solved fixed',
);
const NEGATIVE = words(
  'bad terrible awful hate hated broken wrong useless slow annoying confusing confused frustrating frustrated poor horrible worse worst fail fails failed failing error errors bug bugs crash crashes crashed disappointed unhappy difficult',
);
const PRAISE = words('thanks thank thx great awesome love loved perfect helpful excellent amazing fantastic wonderful brilliant');
const NEGATORS = words('not no never nothing hardly');
const INTENSIFIERS = words('very really so too that');
// Evaluative words are left out of topics: they say how the user feels, not what the exchange is about.
const STOP_WORDS = words(
  'about above actually after again against almost also although always amazing another anything around awesome ' +
    'back because been before being below between both cannot could does doing done down during each either else even ever ' +
    'every fine from further gets getting glad going gonna good great hardly have having helpful here hers herself himself ' +
    'however into itself just know like made make many maybe might more most much must myself need never nice nothing okay ' +
    'only other others ours ourselves over perfect please really same seem should since some something still such ' +
    'sure than thank thanks that their theirs them themselves then there these they thing things think this those ' +
    'though through under until upon using very want well were what whatever when where whether which while whom ' +
    'whose will with within without would your yours yourself yourselves',
);

/** Phrase alternatives matched as whole words; a space stands for any run of whitespace. */
const phrases = (alternatives: string[]) =>
  new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join('|').replaceAll(' ', '\\s+')})(?![\\p{L}\\p{N}])`, 'iu');
const ISSUE = phrases([
  'errors?',
  'bugs?',
  'broken',
  'crash(?:es|ed|ing)?',
  'fail(?:s|ed|ing|ures?)?',
  "(?:does|do|did)(?:n['’]t| not) work",
  'not working',
  'wrong',
  "can(?:['’]t|not)",
  'issues?',
  'problems?',
  'exceptions?',
]);
const REQUEST = phrases([
  '(?:can|could|would) you (?:please )?(?:add|support|implement|include|allow)',
  'please (?:add|support|implement|include)',
  'feature requests?',
  'would (?:like|love)',
  "(?:i|we)['’]d (?:like|love)",
  'wish(?:es)?',
  'it would be (?:great|nice|good|helpful) if',
  'add support for',
]);

function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/n['’]t(?![\p{L}\p{N}])/gu, ' not')
    .replace(/(?<=\p{L})['’](?:s|re|ll|ve|d|m)(?![\p{L}\p{N}])/gu, '');
}

function tokenize(text: string): string[] {
  return normalize(text)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t !== '');
}

/** Each token with its lexicon value after negation; any word but a negator or intensifier ends the negation. */
function marked(tokens: string[]): { word: string; value: number; negated: boolean }[] {
  let negate = false;
  return tokens.map((word) => {
    const negated = negate;
    negate = NEGATORS.has(word) || (negate && INTENSIFIERS.has(word));
    const base = POSITIVE.has(word) ? 1 : NEGATIVE.has(word) ? -1 : 0;
    return { word, value: negated ? -base : base, negated };
  });
}

function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?。！？])\s+|\n+/u)
    .map((s) => s.replace(/\s+/gu, ' ').trim())
    .filter((s) => s !== '');
}

function topics(texts: string[]): string[] {
  const counts = new Map<string, number>();
  for (const word of texts.flatMap(tokenize)) {
    if ([...word].length < 4 || word.length > MAX_LABEL_CHARS || !/^\p{L}/u.test(word) || STOP_WORDS.has(word)) continue;
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return [...counts]
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, 3)
    .map(([word]) => word);
}
