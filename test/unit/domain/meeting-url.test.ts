import { strict as assert } from 'node:assert';
import { parseMeetingUrl } from '../../../src/domain/meeting-url.js';

const identityOf = (url: string) => parseMeetingUrl(url)?.identity ?? null;

/** Every spelling in a group is the same meeting; groups are different meetings. */
function assertSame(identity: string, spellings: readonly string[]): void {
  for (const url of spellings) assert.equal(identityOf(url), identity, url);
}

describe('meeting URL parsing', () => {
  it('Zoom: /j/<number> with or without a passcode, any subdomain; /my/<name>', () => {
    assertSame('zoom:84211234567', [
      'https://zoom.us/j/84211234567',
      'https://us02web.zoom.us/j/84211234567?pwd=QWxhZGRpbjpvcGVuIHNlc2FtZQ',
      'https://ACME.Zoom.US/j/84211234567/?utm_source=calendar&pwd=abc',
      '  https://acme.zoom.us/j/84211234567?from=addon  ',
      'http://zoom.us//j/84211234567#success',
    ]);
    assertSame('zoom:my/jane.doe', ['https://zoom.us/my/jane.doe', 'https://acme.zoom.us/my/Jane.Doe?pwd=1']);
    assert.notEqual(identityOf('https://zoom.us/j/84211234568'), identityOf('https://zoom.us/j/84211234567'));
    assert.equal(parseMeetingUrl('https://zoom.us/j/84211234567?pwd=x')?.platform, 'zoom');
  });

  it('Google Meet: meet.google.com/xxx-xxxx-xxx', () => {
    assertSame('google_meet:abc-defg-hij', [
      'https://meet.google.com/abc-defg-hij',
      'https://meet.google.com/ABC-DEFG-HIJ?authuser=1&hs=122',
      'https://Meet.Google.com/abc-defg-hij/',
    ]);
  });

  it('Microsoft Teams: meetup-join threads and /meet/<id> links', () => {
    const thread = '19%3ameeting_NmQ4ZDdhMzAtYzRkYy00ZTQ1LWI2ZTgtYjQ5ZDEzNmE0YjYx%40thread.v2';
    assertSame('microsoft_teams:19:meeting_NmQ4ZDdhMzAtYzRkYy00ZTQ1LWI2ZTgtYjQ5ZDEzNmE0YjYx@thread.v2', [
      `https://teams.microsoft.com/l/meetup-join/${thread}/0?context=%7b%22Tid%22%3a%22x%22%7d`,
      `https://Teams.Microsoft.com/l/meetup-join/${thread.replace('%3a', '%3A').replace('%40', '%40')}/0`,
      `https://teams.microsoft.com/l/meetup-join/${thread}/1700000000000?utm_campaign=x`,
    ]);
    // The id is case-sensitive: another case is another meeting.
    assert.notEqual(
      identityOf(`https://teams.microsoft.com/l/meetup-join/${thread.replace('NmQ4', 'nmq4')}/0`),
      identityOf(`https://teams.microsoft.com/l/meetup-join/${thread}/0`),
    );
    assertSame('microsoft_teams:meet/9398850720211', [
      'https://teams.live.com/meet/9398850720211?p=AbCdEf',
      'https://teams.live.com/meet/9398850720211',
    ]);
    assert.equal(identityOf('https://teams.microsoft.com/meet/26104556127?p=x'), 'microsoft_teams:meet/26104556127');
  });

  it('Webex: personal rooms and j.php?MTID=', () => {
    assertSame('webex:acme/jane.doe', ['https://acme.webex.com/meet/jane.doe', 'https://ACME.webex.com/acme/meet/Jane.Doe?launchApp=true']);
    assertSame('webex:acme/mtid-m1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d', [
      'https://acme.webex.com/acme/j.php?MTID=m1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d',
      'https://acme.webex.com/j.php?utm_medium=email&mtid=M1A2B3C4D5E6F7A8B9C0D1E2F3A4B5C6D',
    ]);
    assert.notEqual(identityOf('https://other.webex.com/meet/jane.doe'), identityOf('https://acme.webex.com/meet/jane.doe'));
  });

  it('anything else is not a meeting a recorder supports', () => {
    for (const url of [
      '',
      'not a url',
      'ftp://zoom.us/j/84211234567',
      'https://user:pw@zoom.us/j/84211234567',
      'https://zoom.us/',
      'https://zoom.us/j/123',
      'https://zoom.us/j/abcdefghij',
      'https://zoom.us.evil.com/j/84211234567',
      'https://evilzoom.us/j/84211234567',
      'https://meet.google.com/',
      'https://meet.google.com/abc-defg-hijk',
      'https://meet.google.com/new',
      'https://teams.microsoft.com/l/meetup-join/whatever/0',
      'https://teams.microsoft.com/',
      'https://webex.com/meet/jane',
      'https://acme.webex.com/',
      'https://acme.webex.com/j.php',
      'https://whereby.com/room',
      `https://zoom.us/j/84211234567?x=${'a'.repeat(2100)}`,
    ]) {
      assert.equal(parseMeetingUrl(url), null, url);
    }
  });
});
