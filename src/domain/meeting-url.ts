/**
 * Meeting URLs a recorder can join, parsed into a meeting identity: the same meeting in another
 * spelling (host case, query order, tracking parameters, a passcode or not, a trailing slash) is the
 * same identity. The identity names the meeting-join workflow
 * (`meeting-join/<organizationId>/<identity>`), which is how concurrent requests for one meeting
 * share one recording.
 */
export type MeetingPlatform = 'zoom' | 'google_meet' | 'microsoft_teams' | 'webex';

export interface MeetingIdentity {
  platform: MeetingPlatform;
  /** `<platform>:<meeting>`, e.g. `zoom:84211234567`, `google_meet:abc-defg-hij` (lower case where the platform ignores case). */
  identity: string;
  /** The URL the bot is sent to (as given, trimmed). */
  joinUrl: string;
}

const MAX_URL_LENGTH = 2048;

function hostIs(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/** Path segments without empty ones (a trailing or doubled slash changes nothing). */
function segments(url: URL): string[] {
  return url.pathname.split('/').filter(Boolean);
}

function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function zoom(url: URL): string | null {
  const [kind, id] = segments(url);
  // /j/<meeting number> (join links), /my/<personal link name>.
  if (kind === 'j' && id && /^\d{9,12}$/.test(id)) return id;
  if (kind === 'my' && id && /^[a-z0-9._-]{1,64}$/i.test(id)) return `my/${id.toLowerCase()}`;
  return null;
}

function googleMeet(url: URL): string | null {
  const [code, ...rest] = segments(url);
  if (rest.length || !code || !/^[a-z]{3}-[a-z]{4}-[a-z]{3}$/i.test(code)) return null;
  return code.toLowerCase();
}

function teams(url: URL, host: string): string | null {
  const parts = segments(url);
  // teams.microsoft.com/l/meetup-join/<thread id>/<message id>: the thread is the meeting.
  if (host === 'teams.microsoft.com' && parts[0] === 'l' && parts[1] === 'meetup-join' && parts[2]) {
    // The id itself is base64-like (case matters); the encoding's case and the affixes' do not.
    const match = /^19:meeting_([a-z0-9_-]+)@thread\.v2$/i.exec(decoded(parts[2]) ?? '');
    return match ? `19:meeting_${match[1]}@thread.v2` : null;
  }
  // teams.live.com/meet/<id> and teams.microsoft.com/meet/<id> (the passcode `p` is not the meeting).
  if ((host === 'teams.live.com' || host === 'teams.microsoft.com') && parts[0] === 'meet' && parts[1] && parts.length === 2) {
    return /^\d{6,20}$/.test(parts[1]) ? `meet/${parts[1]}` : null;
  }
  return null;
}

function webex(url: URL, host: string): string | null {
  const site = host.slice(0, -'.webex.com'.length);
  if (!site || site.includes('.')) return null;
  const parts = segments(url);
  // <site>.webex.com/meet/<personal room>, also <site>.webex.com/<site>/meet/<room>.
  const meet = parts.indexOf('meet');
  if (meet >= 0 && parts.length === meet + 2 && /^[a-z0-9._-]{1,64}$/i.test(parts[meet + 1] ?? '')) {
    return `${site}/${(parts[meet + 1] ?? '').toLowerCase()}`;
  }
  // <site>.webex.com[/<site>]/j.php?MTID=<meeting>
  if (parts.at(-1)?.toLowerCase() === 'j.php') {
    const mtid = [...url.searchParams].find(([k]) => k.toLowerCase() === 'mtid')?.[1];
    if (mtid && /^[a-z0-9]{8,64}$/i.test(mtid)) return `${site}/mtid-${mtid.toLowerCase()}`;
  }
  return null;
}

/** The meeting a join URL names, or null when no supported recorder can join it. */
export function parseMeetingUrl(raw: string): MeetingIdentity | null {
  const joinUrl = raw.trim();
  if (!joinUrl || joinUrl.length > MAX_URL_LENGTH) return null;
  let url: URL;
  try {
    url = new URL(joinUrl);
  } catch {
    return null;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) return null;
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const found: [MeetingPlatform, string | null] | null = hostIs(host, 'zoom.us')
    ? ['zoom', zoom(url)]
    : host === 'meet.google.com'
      ? ['google_meet', googleMeet(url)]
      : host === 'teams.microsoft.com' || host === 'teams.live.com'
        ? ['microsoft_teams', teams(url, host)]
        : host.endsWith('.webex.com')
          ? ['webex', webex(url, host)]
          : null;
  if (!found?.[1]) return null;
  return { platform: found[0], identity: `${found[0]}:${found[1]}`, joinUrl };
}
