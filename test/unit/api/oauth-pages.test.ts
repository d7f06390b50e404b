import { strict as assert } from 'node:assert';
import { formTarget, loginPage, pageHeaders } from '../../../api/oauth/pages.js';

/** The sign-in pages' CSP: browsers apply form-action to the redirects after a form, so it names where they lead. */
describe('OAuth pages: form-action follows the redirect URI', () => {
  it('takes the origin of an http(s) redirect URI, the scheme of a custom one, and nothing it cannot express', () => {
    assert.equal(formTarget('http://127.0.0.1:51234/callback?x=1'), 'http://127.0.0.1:51234');
    assert.equal(formTarget('https://app.example.test/oauth/callback'), 'https://app.example.test');
    assert.equal(formTarget('com.example.intake-client:/oauth/callback'), 'com.example.intake-client:');
    assert.equal(formTarget('not a uri'), null);
    // Host names WHATWG URL lets through that would mean something in the policy are never written into it.
    for (const hostile of ['https://x;sandbox/cb', 'https://a,b/cb', 'https://*/cb', "https://a'b/cb"])
      assert.equal(formTarget(hostile), null, hostile);
    assert.equal(formTarget('http://[::1]:4711/callback'), 'http:', 'CSP cannot name an IPv6 address');
    assert.equal(formTarget('https://[2001:db8::1]/cb'), null);
    assert.equal(formTarget('https://app.example.test/a b'), 'https://app.example.test', 'the origin alone, never the path');
  });

  it('adds the targets to self, once each; without any, form-action is self alone', () => {
    assert.match(
      pageHeaders(['https://a.test', 'https://a.test', 'com.example.app:'])['Content-Security-Policy']!,
      /form-action 'self' https:\/\/a\.test com\.example\.app:;/,
    );
    assert.match(pageHeaders([])['Content-Security-Policy']!, /form-action 'self';/);
    assert.match(pageHeaders([])['Content-Security-Policy']!, /default-src 'none'/);
  });

  it("the login page offers the company's provider only when configured, and escapes what it shows", () => {
    const plain = loginPage({ action: '/a', csrf: 'c', clientName: '<script>x</script>' });
    assert.doesNotMatch(plain, /Sign in with/);
    assert.match(plain, /&lt;script&gt;x&lt;\/script&gt;/);
    const sso = loginPage({ action: '/a', csrf: 'c', clientName: 'C', upstream: { action: '/u', name: 'Corp "SSO"' } });
    assert.match(
      sso,
      /<form method="post" action="\/u">\s*<input type="hidden" name="csrf" value="c">\s*<button type="submit">Sign in with Corp &quot;SSO&quot;<\/button>/,
    );
  });
});
