// The broker's meters on recorded-shape answers (test/fixtures/broker/README.md): the figures are the same however
// the bytes are split on the way, the last cumulative message_delta wins, a text that quotes an event name is not
// read as one, a cut stream is partial, and what is not the provider's shape is read as no usage.
import t from 'tap';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { anthropicUsage } from '../../src/broker/anthropic-usage.js';
import { openaiUsage } from '../../src/broker/openai-usage.js';
import { meterFor, NO_USAGE, type MeteredUsage, type UsageReducer } from '../../src/broker/usage.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/broker');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

/** Feeds `bytes` in pieces of `size` (the last one shorter), as a socket might deliver them. */
function metered(
  reducer: () => UsageReducer,
  bytes: Uint8Array,
  size: number,
  contentType: string,
  encoding?: string,
): MeteredUsage {
  const meter = meterFor(reducer(), contentType, encoding);
  for (let at = 0; at < bytes.length; at += size) meter.feed(bytes.subarray(at, at + size));
  return meter.finish();
}

const SPLITS = [1, 2, 7, 64, 100_000];
const SSE = 'text/event-stream; charset=utf-8';

t.test('Anthropic stream: message_start, then the last message_delta, field by field', async (t) => {
  for (const size of SPLITS)
    t.same(
      metered(anthropicUsage, fixture('anthropic-stream.sse'), size, SSE),
      {
        model: 'claude-sonnet-4-5-20250929',
        responseId: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        inputTokens: 472,
        outputTokens: 89,
        cacheReadTokens: 2048,
        cacheWriteTokens: 128,
        usage: 'read',
      },
      `in pieces of ${size} bytes`,
    );
});

t.test('Anthropic stream with two message_deltas: the second is the total; quoted names are text', async (t) => {
  for (const size of SPLITS)
    t.same(
      metered(anthropicUsage, fixture('anthropic-stream-two-deltas.sse'), size, SSE),
      {
        model: 'claude-opus-4-1-20250805',
        responseId: 'msg_01TwoDeltas',
        inputTokens: 10682,
        outputTokens: 510,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        usage: 'read',
      },
      `in pieces of ${size} bytes`,
    );
});

t.test('Anthropic stream cut midway: the input side is known, the output only as message_start said', async (t) => {
  t.same(metered(anthropicUsage, fixture('anthropic-stream-cut.sse'), 5, SSE), {
    model: 'claude-haiku-4-5',
    responseId: 'msg_01Cut',
    inputTokens: 25,
    outputTokens: 1,
    cacheReadTokens: 900,
    cacheWriteTokens: 0,
    usage: 'partial',
  });
});

t.test('Anthropic JSON: the message usage; an error is no usage', async (t) => {
  for (const size of SPLITS)
    t.same(
      metered(anthropicUsage, fixture('anthropic-message.json'), size, 'application/json'),
      {
        model: 'claude-sonnet-4-5-20250929',
        responseId: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
        inputTokens: 2095,
        outputTokens: 503,
        cacheReadTokens: 0,
        cacheWriteTokens: 2051,
        usage: 'read',
      },
      `in pieces of ${size} bytes`,
    );
  t.same(metered(anthropicUsage, fixture('anthropic-error.json'), 10, 'application/json'), NO_USAGE);
  t.same(
    metered(anthropicUsage, Buffer.from('{"type":"message","usage":'), 10, 'application/json'),
    NO_USAGE,
    'cut JSON',
  );
});

t.test('OpenAI stream (CRLF): response.completed, cached tokens apart from input', async (t) => {
  for (const size of SPLITS)
    t.same(
      metered(openaiUsage, fixture('openai-stream.sse'), size, SSE),
      {
        model: 'gpt-5-codex',
        responseId: 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b',
        inputTokens: 3120 - 2048,
        outputTokens: 211,
        cacheReadTokens: 2048,
        cacheWriteTokens: null,
        usage: 'read',
      },
      `in pieces of ${size} bytes`,
    );
});

t.test('OpenAI stream ending incomplete is billed and read; one cut before its end is partial', async (t) => {
  t.same(metered(openaiUsage, fixture('openai-stream-incomplete.sse'), 3, SSE), {
    model: 'o4-mini',
    responseId: 'resp_incomplete',
    inputTokens: 15000,
    outputTokens: 4096,
    cacheReadTokens: 0,
    cacheWriteTokens: null,
    usage: 'read',
  });
  const whole = fixture('openai-stream.sse').toString('utf8');
  const cut = whole.slice(0, whole.indexOf('event: response.completed'));
  t.same(metered(openaiUsage, Buffer.from(cut), 9, SSE), {
    ...NO_USAGE,
    model: 'gpt-5-codex',
    responseId: 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b',
    usage: 'partial',
  });
});

t.test('OpenAI JSON: the response object usage', async (t) => {
  t.same(metered(openaiUsage, fixture('openai-response.json'), 13, 'application/json'), {
    model: 'gpt-5-codex',
    responseId: 'resp_nonstream',
    inputTokens: 36,
    outputTokens: 87,
    cacheReadTokens: 0,
    cacheWriteTokens: null,
    usage: 'read',
  });
});

t.test('events without a name are read by their data; unbelievable counts are unknown', async (t) => {
  const text = [
    'data: {"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":5,"output_tokens":1}}}',
    '',
    'data: {"type":"message_delta","usage":{"output_tokens":-3}}',
    '',
    'data: not json',
    '',
    '',
  ].join('\n');
  t.same(metered(anthropicUsage, Buffer.from(text), 4, SSE), {
    model: 'x',
    responseId: 'm',
    inputTokens: 5,
    outputTokens: null,
    cacheReadTokens: null,
    cacheWriteTokens: null,
    usage: 'read',
  });
});

t.test('bodies the meter does not read: an encoded one, another content type, an over-long JSON', async (t) => {
  t.same(
    metered(anthropicUsage, gzipSync(fixture('anthropic-message.json')), 50, 'application/json', 'gzip'),
    NO_USAGE,
  );
  t.same(metered(anthropicUsage, fixture('anthropic-message.json'), 50, 'text/plain'), NO_USAGE);
  const meter = meterFor(anthropicUsage(), 'application/json', undefined, 100);
  meter.feed(fixture('anthropic-message.json'));
  t.same(meter.finish(), NO_USAGE);
  t.equal(meterFor(anthropicUsage(), SSE, 'identity').stream, true, 'identity is no encoding');
});

t.test(
  'framing the fast path does not expect: mixed line ends, an event past 1 MiB, no final blank line',
  async (t) => {
    const start =
      'data: {"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":5,"output_tokens":1}}}';
    const delta = (n: number) => `data: {"type":"message_delta","usage":{"output_tokens":${n}}}`;
    const expected = (output: number) => ({
      model: 'x',
      responseId: 'm',
      inputTokens: 5,
      outputTokens: output,
      cacheReadTokens: null,
      cacheWriteTokens: null,
      usage: 'read',
    });
    const mixed = `event: message_start\n${start}\n\r\nevent: message_delta\r\n${delta(3)}\r\n\r\nevent: message_delta\n${delta(8)}\n\n`;
    for (const size of SPLITS)
      t.same(metered(anthropicUsage, Buffer.from(mixed), size, SSE), expected(8), `mixed, ${size}`);
    const huge = `data: {"type":"content_block_delta","delta":{"type":"text_delta","text":"${'y'.repeat(2 * 1024 * 1024)}"}}`;
    const long = `event: message_start\n${start}\n\nevent: content_block_delta\n${huge}\n\nevent: message_delta\n${delta(9)}\n\n`;
    t.same(metered(anthropicUsage, Buffer.from(long), 65536, SSE), expected(9), 'an event longer than the carry bound');
    const unended = `event: message_start\n${start}\n\nevent: message_delta\n${delta(4)}`;
    t.same(metered(anthropicUsage, Buffer.from(unended), 7, SSE), expected(4), 'the last event lacks its blank line');
  },
);
