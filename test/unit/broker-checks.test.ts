// What a request's head must be to go on: a table over the smuggling shapes, the paths, the methods; then which
// headers cross each way.
import t from 'tap';
import { checkHead, type RequestHead } from '../../src/broker/request-check.js';
import { answerHeaders, forwardableHeaders, sessionOf } from '../../src/broker/headers.js';
import type { Provider } from '../../src/broker/types.js';

const BOTH: readonly Provider[] = ['anthropic', 'openai'];

const head = (fields: Partial<RequestHead> & { headers?: string[] } = {}): RequestHead => ({
  method: fields.method ?? 'POST',
  target: fields.target ?? '/v1/messages?beta=true',
  httpVersion: fields.httpVersion ?? '1.1',
  rawHeaders: fields.rawHeaders ?? [
    'Host',
    '127.0.0.1:700',
    'Authorization',
    'Bearer arcap_x',
    'Content-Length',
    '12',
    ...(fields.headers ?? []),
  ],
});

t.test('refused heads, each with its status', async (t) => {
  const cases: readonly [string, RequestHead, number, RegExp][] = [
    ['CONNECT', head({ method: 'CONNECT', target: 'api.anthropic.com:443' }), 400, /CONNECT/],
    ['HTTP/1.0', head({ httpVersion: '1.0' }), 400, /HTTP\/1\.0/],
    ['absolute-form to another host', head({ target: 'http://evil.example/v1/messages' }), 400, /origin-form/],
    ['absolute-form https', head({ target: 'https://api.anthropic.com/v1/messages' }), 400, /origin-form/],
    ['authority-form', head({ target: 'evil.example:443' }), 400, /origin-form/],
    ['asterisk-form', head({ method: 'OPTIONS', target: '*' }), 400, /origin-form/],
    ['scheme-relative', head({ target: '//evil.example/v1/messages' }), 400, /origin-form/],
    ['a space in the target', head({ target: '/v1/messages x' }), 400, /malformed/],
    ['a fragment', head({ target: '/v1/messages#x' }), 400, /malformed/],
    ['two Host headers', head({ headers: ['Host', 'evil.example'] }), 400, /exactly one Host/],
    ['no Host', head({ rawHeaders: ['Content-Length', '0'] }), 400, /exactly one Host/],
    ['Transfer-Encoding and Content-Length', head({ headers: ['Transfer-Encoding', 'chunked'] }), 400, /together/],
    [
      'Transfer-Encoding gzip, chunked',
      head({ rawHeaders: ['Host', 'h', 'Transfer-Encoding', 'gzip, chunked'] }),
      400,
      /single "chunked"/,
    ],
    [
      'Transfer-Encoding twice',
      head({ rawHeaders: ['Host', 'h', 'Transfer-Encoding', 'chunked', 'Transfer-Encoding', 'chunked'] }),
      400,
      /single "chunked"/,
    ],
    ['Content-Length twice', head({ headers: ['Content-Length', '12'] }), 400, /repeated/],
    ['Content-Length not a number', head({ rawHeaders: ['Host', 'h', 'Content-Length', '1e3'] }), 400, /not a number/],
    ['CR in a value', head({ headers: ['X-A', 'b\r\nX-Api-Key: k'] }), 400, /CR, LF or NUL/],
    ['LF in a value (obs-fold)', head({ headers: ['X-A', 'b\n c'] }), 400, /CR, LF or NUL/],
    ['NUL in a value', head({ headers: ['X-A', 'b\0c'] }), 400, /CR, LF or NUL/],
    ['a space in a name', head({ headers: ['X A', 'b'] }), 400, /not an HTTP token/],
    ['Upgrade', head({ headers: ['Upgrade', 'websocket', 'Connection', 'Upgrade'] }), 400, /upgrades/],
    ['h2c', head({ headers: ['HTTP2-Settings', 'AAMAAABkAAQCAAAAAAIAAAAA'] }), 400, /upgrades/],
    ['two Authorization headers', head({ headers: ['Authorization', 'Bearer other'] }), 400, /credential header/],
    ['a bad query', head({ target: '/v1/messages?x=<script>' }), 400, /query/],
    ['another path', head({ target: '/v1/models' }), 404, /not an API path/],
    ['a path around the allowed one', head({ target: '/v1/messages/../complete' }), 404, /not an API path/],
    ['a prefix of the path', head({ target: '/v1/messages/batches' }), 404, /not an API path/],
    ['GET on an API path', head({ method: 'GET' }), 405, /only POST/],
  ];
  for (const [name, given, status, message] of cases) {
    const checked = checkHead(given, BOTH);
    t.equal(checked.ok ? 200 : checked.status, status, name);
    if (!checked.ok) t.match(checked.message, message, `${name}: says why`);
  }
});

t.test('a provider without a key has no paths here', async (t) => {
  const checked = checkHead(head({ target: '/v1/responses' }), ['anthropic']);
  t.equal(checked.ok ? 200 : checked.status, 404);
  t.equal(checked.ok ? undefined : checked.provider, 'openai', 'the 404 is in OpenAI shape');
});

t.test('an admitted head: route, target, token, session, the length', async (t) => {
  const checked = checkHead(head({ headers: ['X-Agent-Runner-Session', 'ses-1', 'anthropic-beta', 'a,b'] }), BOTH);
  if (!checked.ok) throw new Error(checked.message);
  t.same(checked.route, { provider: 'anthropic', path: '/v1/messages', metered: true });
  t.equal(checked.pathAndQuery, '/v1/messages?beta=true');
  t.equal(checked.token, 'arcap_x');
  t.equal(checked.session, 'ses-1');
  t.equal(checked.beta, 'a,b');
  t.equal(checked.contentLength, 12);
  const count = checkHead(head({ target: '/v1/messages/count_tokens' }), BOTH);
  t.equal(count.ok && count.route.metered, false, 'count_tokens is forwarded, not metered');
  const chunked = checkHead(
    head({ rawHeaders: ['Host', 'h', 'Transfer-Encoding', 'Chunked', 'x-api-key', 'arcap_y'] }),
    BOTH,
  );
  t.equal(chunked.ok && chunked.token, 'arcap_y', 'x-api-key carries the token when there is no Authorization');
  t.equal(chunked.ok && chunked.contentLength, undefined);
  const basic = checkHead(
    head({ rawHeaders: ['Host', 'h', 'Authorization', 'Basic eDp5', 'x-api-key', 'arcap_y'] }),
    BOTH,
  );
  t.equal(
    basic.ok && basic.token,
    undefined,
    'Authorization that is not Bearer presents no token (x-api-key is not read)',
  );
});

t.test('no credential crosses to the provider; the broker asks for an unencoded answer', async (t) => {
  const forwarded = forwardableHeaders([
    ['host', '127.0.0.1:700'],
    ['authorization', 'Bearer arcap_x'],
    ['x-api-key', 'sk-ant-forged'],
    ['anthropic-api-key', 'k'],
    ['api-key', 'k'],
    ['cookie', 'c=1'],
    ['proxy-authorization', 'Basic x'],
    ['x-custom-token', 't'],
    ['x-amz-security-token', 't'],
    ['openai-organization', 'org-x'],
    ['x-forwarded-for', '10.0.0.1'],
    ['forwarded', 'for=1.2.3.4'],
    ['via', '1.1 x'],
    ['x-agent-runner-session', 's'],
    ['connection', 'keep-alive, x-hop'],
    ['x-hop', 'h'],
    ['keep-alive', 'timeout=5'],
    ['te', 'trailers'],
    ['expect', '100-continue'],
    ['content-length', '12'],
    ['accept-encoding', 'gzip, br, zstd'],
    ['anthropic-version', '2023-06-01'],
    ['anthropic-beta', 'claude-code-20250219'],
    ['content-type', 'application/json'],
    ['user-agent', 'claude-cli/2.1.197'],
    ['x-stainless-retry-count', '0'],
    ['session-id', 'abc'],
  ]);
  t.same(forwarded, [
    ['anthropic-version', '2023-06-01'],
    ['anthropic-beta', 'claude-code-20250219'],
    ['content-type', 'application/json'],
    ['user-agent', 'claude-cli/2.1.197'],
    ['x-stainless-retry-count', '0'],
    ['session-id', 'abc'],
    ['accept-encoding', 'identity'],
  ]);
});

t.test("the provider's answer keeps its headers but cookies, hop-by-hop ones and account ids", async (t) => {
  t.same(
    answerHeaders([
      ['content-type', 'text/event-stream'],
      ['transfer-encoding', 'chunked'],
      ['connection', 'keep-alive'],
      ['set-cookie', '__cf_bm=x'],
      ['anthropic-organization-id', 'org'],
      ['request-id', 'req_1'],
      ['retry-after', '7'],
      ['anthropic-ratelimit-requests-remaining', '49'],
    ]),
    [
      ['content-type', 'text/event-stream'],
      ['request-id', 'req_1'],
      ['retry-after', '7'],
      ['anthropic-ratelimit-requests-remaining', '49'],
    ],
  );
});

t.test('the session header: one well-formed value, else none', async (t) => {
  t.equal(sessionOf([['x-agent-runner-session', ' run1:TASK-1.2 ']]), 'run1:TASK-1.2');
  t.equal(sessionOf([['x-agent-runner-session', 'a b']]), null);
  t.equal(sessionOf([['x-agent-runner-session', 'x'.repeat(129)]]), null);
  t.equal(
    sessionOf([
      ['x-agent-runner-session', 'a'],
      ['x-agent-runner-session', 'b'],
    ]),
    null,
  );
  t.equal(sessionOf([]), null);
});
