import { strict as assert } from 'node:assert';
import { assetUrlProblem, MAX_ASSET_URL_LENGTH } from '../../../src/domain/asset-url.js';

/** A URL of exactly `length` characters on a public host. */
function urlOfLength(length: number): string {
  const prefix = 'https://cdn.example.com/';
  return prefix + 'a'.repeat(length - prefix.length);
}

function assertRefused(urls: readonly string[]): void {
  for (const url of urls) {
    const problem = assetUrlProblem(url);
    assert.notEqual(problem, null, `expected ${JSON.stringify(url)} to be refused`);
    assert.equal(typeof problem, 'string');
  }
}

function assertAccepted(urls: readonly string[]): void {
  for (const url of urls) {
    assert.equal(assetUrlProblem(url), null, `expected ${JSON.stringify(url)} to be accepted`);
  }
}

describe('asset URL creation checks', () => {
  it('refuses what is not an absolute HTTP(S) URL', () => {
    assertRefused([
      '',
      'not a url',
      '/relative/path.mp4',
      'cdn.example.com/a.mp4',
      'http://',
      'http://exa mple.com/',
      'ftp://cdn.example.com/a.mp4',
      'file:///etc/passwd',
      'gopher://cdn.example.com/',
      'data:audio/wav;base64,AAAA',
      'javascript:alert(1)',
    ]);
  });

  it('refuses embedded credentials, even empty ones', () => {
    assertRefused([
      'https://user:pass@cdn.example.com/a.mp4',
      'https://user@cdn.example.com/a.mp4',
      'https://:pass@cdn.example.com/a.mp4',
      'http://@cdn.example.com/a.mp4',
      'http://:@cdn.example.com/a.mp4',
      'http:@cdn.example.com/a.mp4',
      'http:\\\\@cdn.example.com/a.mp4',
      'http:/\t/@cdn.example.com/a.mp4',
    ]);
  });

  it('refuses localhost names in any case, with or without a trailing dot', () => {
    assertRefused([
      'http://localhost/a.mp4',
      'http://LOCALHOST:8080/a.mp4',
      'http://localhost./a.mp4',
      'http://api.localhost/a.mp4',
      'http://a.b.LocalHost./a.mp4',
      'http://localhost.localdomain/a.mp4',
      'http://LOCALHOST.LOCALDOMAIN./a.mp4',
      'http://%6c%6fcalhost/a.mp4',
      'http://ｌｏｃａｌｈｏｓｔ/a.mp4',
    ]);
  });

  it('refuses loopback IPv4 in every spelling the parser accepts', () => {
    assertRefused([
      'http://127.0.0.1/',
      'http://127.0.0.1./',
      'http://127.255.255.254:8080/',
      'http://2130706433/',
      'http://0x7f000001/',
      'http://0x7f.0.0.1/',
      'http://0177.0.0.1/',
      'http://017700000001/',
      'http://127.1/',
      'http://①②⑦.0.0.1/',
    ]);
  });

  it('refuses private, shared, link-local and other special-purpose IPv4 ranges', () => {
    assertRefused([
      'http://0/',
      'http://0.0.0.0/',
      'http://0.1.2.3/',
      'http://10.0.0.1/',
      'http://172.16.0.1/',
      'http://172.31.255.255/',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/',
      'http://100.127.255.255/',
      'http://192.0.0.8/',
      'http://192.0.2.10/',
      'http://198.51.100.7/',
      'http://203.0.113.9/',
      'http://198.18.0.1/',
      'http://198.19.255.255/',
      'http://224.0.0.1/',
      'http://239.255.255.250/',
      'http://240.0.0.1/',
      'http://255.255.255.255/',
    ]);
  });

  it('refuses non-public IPv6 literals', () => {
    assertRefused([
      'http://[::1]/',
      'http://[::]/',
      'http://[0:0:0:0:0:0:0:1]:8080/',
      'http://[fe80::1]/',
      'http://[fc00::1]/',
      'http://[fd12:3456:789a::1]/',
      'http://[fec0::1]/',
      'http://[ff02::1]/',
      'http://[2001:db8::1]/',
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
      'http://[2001:2::1]/',
      'http://[100::1]/',
      'http://[64:ff9b:1::1]/',
      'http://[::ffff:0:808:808]/',
      'http://[4000::1]/',
    ]);
  });

  it('judges the IPv4 address embedded in mapped, compatible, NAT64 and 6to4 forms', () => {
    assertRefused([
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'http://[0:0:0:0:0:ffff:a00:1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[::127.0.0.1]/',
      'http://[::8.8.8.8]/',
      'http://[64:ff9b::127.0.0.1]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[2002:7f00:1::1]/',
      'http://[2002:c0a8:101::1]/',
    ]);
    assertAccepted(['http://[::ffff:93.184.216.34]/', 'http://[64:ff9b::8.8.8.8]/', 'http://[2002:808:808::1]/']);
  });

  it('accepts public URLs, names and addresses', () => {
    assertAccepted([
      'https://cdn.example.com/a.mp4',
      'http://93.184.216.34/x.wav',
      'https://[2606:4700::1111]/a',
      'https://[2606:4700:4700::1111]:8443/a.mp3',
      'https://cdn.example.com:8443/media/a.webm',
      'http://cdn.example.com:80/a.ogg',
      'https://cdn.example.com/a.mp4?token=abc&expires=1700000000',
      'https://cdn.example.com/path%20with%20spaces/a%2Fb.mp4',
      'https://cdn.example.com/a.mp4#t=10',
      'HTTPS://CDN.EXAMPLE.COM/A.MP4',
      'https://storage.googleapis.com/bucket/object.flac',
      'http://8.8.8.8/a.aac',
      'http://intranet/a.mp4',
      'https://localhost.example.com/a.mp4',
      'https://notlocalhost/a.mp4',
      'https://bücher.example/a.mp4',
      'https://cdn.example.com/a@b.mp4',
      'https://cdn.example.com/a.mp4?email=a@b.example',
    ]);
  });

  it('host names an operator allows (MEDIA_FETCH_ALLOWED_HOSTS) may point anywhere; literal addresses and other names stay refused', () => {
    assert.notEqual(assetUrlProblem('http://localhost:9000/a.wav'), null);
    assert.equal(assetUrlProblem('http://localhost:9000/a.wav', ['localhost']), null);
    assert.equal(assetUrlProblem('http://LOCALHOST:9000/a.wav', ['localhost']), null);
    assert.notEqual(assetUrlProblem('http://127.0.0.1:9000/a.wav', ['localhost']), null);
    assert.notEqual(assetUrlProblem('http://media.localhost/a.wav', ['localhost']), null);
    assert.notEqual(assetUrlProblem('http://user:pw@localhost/a.wav', ['localhost']), null, 'credentials are refused all the same');
  });

  it('limits the raw URL to 4,096 characters', () => {
    assert.equal(MAX_ASSET_URL_LENGTH, 4096);
    assert.equal(urlOfLength(4096).length, 4096);
    assert.equal(assetUrlProblem(urlOfLength(4096)), null);
    assert.notEqual(assetUrlProblem(urlOfLength(4097)), null);
  });
});
