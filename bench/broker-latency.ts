// Benchmark (not a test): what the provider broker adds. The same fake
// provider (bench/lib/broker-serve.ts) is called directly, through the
// broker with its real edges (node:http in, undici out, the key file read on
// every request, the answer metered on its way), and through a bare hop
// (node:http in, undici out, nothing else), each in its own process, from a
// keep-alive client in this one, interleaved block by block and run by run.
//   node dist/bench/broker-latency.js
// 1. Added latency per request: a claude-sized request (a 64 KiB JSON body)
//    and a non-streamed answer, one at a time; p50 and p99 of broker minus
//    direct. Goal: at most 2 ms at p50.
// 2. Streaming throughput: a long Anthropic event stream (text deltas),
//    bytes per second read by the client, broker over direct. Goal: >= 0.95.
//    Twice: paced at 2 MB/s (some twenty times what the fastest model
//    writes, so what an agent sees), and unpaced (what the loopback path can
//    carry: a capacity figure, bounded by the CPU of each process in it).
//    Broker over the bare hop tells the broker's own cost from that of any
//    extra process in the path; the CPU time the broker's process spent per
//    MB streamed is the steadier figure on a busy machine.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchFigure, BenchGoal, BenchResult } from './lib/types.js';
import { printResult } from './lib/print.js';
import { median, round, runsWanted } from './lib/stats.js';
import { sized } from './lib/quick.js';

const SERVE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib', 'broker-serve.js');
const REQUESTS = sized(2000, 40);
const WARMUP = sized(200, 5);
const BLOCK = sized(100, 10);
const STREAM_DELTAS = sized(200_000, 2_000);
const DELTA_CHARS = 200;
const PACE = 2_000_000;
/** About 4 s at PACE (a delta event is some 330 bytes). */
const PACED_DELTAS = sized(24_000, 1_000);
const BODY = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  stream: false,
  messages: [{ role: 'user', content: 'x'.repeat(64 * 1024) }],
});
const STREAM_BODY = BODY.replace('"stream":false', '"stream":true');

interface Served {
  readonly child: ChildProcess;
  readonly port: number;
  readonly token?: string;
}

function serve(args: readonly string[]): Promise<Served> {
  const child = spawn(process.execPath, [SERVE, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const newline = out.indexOf('\n');
      if (newline !== -1)
        resolve({ child, ...(JSON.parse(out.slice(0, newline)) as { port: number; token?: string }) });
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`broker-serve ${args[0]} exited ${code} before listening`)));
  });
}

/** CPU milliseconds (user + system) a process has used, from /proc (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request to `to`; milliseconds to the end of the answer and the bytes read. */
function once(to: Served, body: string): Promise<{ ms: number; bytes: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port: to.port,
        path: '/v1/messages',
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(to.token ? { authorization: `Bearer ${to.token}` } : {}),
        },
      },
      (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () => {
          if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode} from port ${to.port}`));
          else resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, bytes });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!, 3);
};

type Path = 'direct' | 'hop' | 'broker';
const PATHS: readonly Path[] = ['direct', 'hop', 'broker'];

export async function main(): Promise<BenchResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-runner-bench-broker-'));
  const children: ChildProcess[] = [];
  const started = async (args: readonly string[]) => {
    const served = await serve(args);
    children.push(served.child);
    return served;
  };
  try {
    const keyFile = path.join(dir, 'anthropic.key');
    writeFileSync(keyFile, 'sk-ant-api03-BENCH-ONLY-000000000000\n', { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    const small = await started(['fake', '3', '5']);
    const long = await started(['fake', String(STREAM_DELTAS), String(DELTA_CHARS)]);
    const paced = await started(['fake', String(PACED_DELTAS), String(DELTA_CHARS), String(PACE)]);
    const to = (fake: Served) => `http://127.0.0.1:${fake.port}`;
    const short: Record<Path, Served> = {
      direct: small,
      hop: await started(['hop', to(small)]),
      broker: await started(['broker', to(small), keyFile]),
    };
    const streamed: Record<Path, Served> = {
      direct: long,
      hop: await started(['hop', to(long)]),
      broker: await started(['broker', to(long), keyFile]),
    };
    const pacedBroker = await started(['broker', to(paced), keyFile]);

    for (let i = 0; i < WARMUP; i++) for (const via of PATHS) await once(short[via], BODY);
    const latency: Record<Path, number[]> = { direct: [], hop: [], broker: [] };
    const requestCpu = { hop: 0, broker: 0 };
    for (let done = 0; done < REQUESTS; done += BLOCK)
      for (const via of PATHS) {
        const before = via === 'direct' ? 0 : cpuMs(short[via].child.pid!);
        for (let i = 0; i < BLOCK; i++) latency[via].push((await once(short[via], BODY)).ms);
        if (via !== 'direct') requestCpu[via] += cpuMs(short[via].child.pid!) - before;
      }
    const cpuPerRequest = (via: 'hop' | 'broker') => round(requestCpu[via] / REQUESTS, 3);
    const added = (via: Path, p: number) => round(percentile(latency[via], p) - percentile(latency.direct, p), 3);

    const rates: Record<Path, number[]> = { direct: [], hop: [], broker: [] };
    let streamBytes = 0;
    const streamCpu = { hop: 0, broker: 0 };
    for (let run = 0; run < runsWanted(5); run++)
      for (const via of PATHS) {
        const pid = streamed[via].child.pid!;
        const before = via === 'direct' ? 0 : cpuMs(pid);
        const answer = await once(streamed[via], STREAM_BODY);
        if (via !== 'direct') streamCpu[via] += cpuMs(pid) - before;
        // The fake numbers its answers (ids, usage): two answers differ by a few bytes, never by more.
        if (streamBytes && Math.abs(answer.bytes - streamBytes) > 100)
          throw new Error(`${via} passed ${answer.bytes} bytes where the fake sends ${streamBytes}`);
        streamBytes = answer.bytes;
        rates[via].push(round(answer.bytes / 1e6 / (answer.ms / 1000), 1));
      }
    const pacedRates = { direct: [] as number[], broker: [] as number[] };
    for (let run = 0; run < runsWanted(3); run++)
      for (const [via, to] of [
        ['direct', paced],
        ['broker', pacedBroker],
      ] as const) {
        const answer = await once(to, STREAM_BODY);
        pacedRates[via].push(round(answer.bytes / 1e6 / (answer.ms / 1000), 3));
      }
    const pacedRatio = round(median(pacedRates.broker) / median(pacedRates.direct), 3);
    const rate = (via: Path) => median(rates[via]);
    const overDirect = round(rate('broker') / rate('direct'), 3);
    const overHop = round(rate('broker') / rate('hop'), 3);
    const megabytes = (streamBytes / 1e6) * rates.broker.length;

    const figures: BenchFigure[] = [
      {
        name: `direct p50 / p99 (${REQUESTS} requests of ${Math.round(BODY.length / 1024)} KiB, one at a time)`,
        value: percentile(latency.direct, 50),
        unit: `ms / ${percentile(latency.direct, 99)} ms`,
      },
      { name: 'added by the broker p50', value: added('broker', 50), unit: 'ms' },
      { name: 'added by the broker p99', value: added('broker', 99), unit: 'ms' },
      { name: 'added by a bare hop p50 (for comparison)', value: added('hop', 50), unit: 'ms' },
      { name: 'added by a bare hop p99', value: added('hop', 99), unit: 'ms' },
      { name: 'broker process CPU per request', value: cpuPerRequest('broker'), unit: 'ms' },
      { name: 'bare hop process CPU per request', value: cpuPerRequest('hop'), unit: 'ms' },
      {
        name: `stream paced at ${PACE / 1e6} MB/s, direct`,
        value: median(pacedRates.direct),
        unit: 'MB/s',
        runs: pacedRates.direct,
      },
      {
        name: 'stream paced, through the broker',
        value: median(pacedRates.broker),
        unit: 'MB/s',
        runs: pacedRates.broker,
      },
      { name: 'stream paced, broker / direct', value: pacedRatio, unit: 'x' },
      {
        name: `stream unpaced direct (${round(streamBytes / 1e6, 1)} MB of SSE)`,
        value: rate('direct'),
        unit: 'MB/s',
        runs: rates.direct,
      },
      { name: 'stream unpaced through a bare hop', value: rate('hop'), unit: 'MB/s', runs: rates.hop },
      { name: 'stream unpaced through the broker', value: rate('broker'), unit: 'MB/s', runs: rates.broker },
      { name: 'stream unpaced, broker / direct', value: overDirect, unit: 'x' },
      { name: 'stream unpaced, broker / bare hop', value: overHop, unit: 'x' },
      { name: 'broker process CPU per MB streamed', value: round(streamCpu.broker / megabytes, 2), unit: 'ms' },
      { name: 'bare hop process CPU per MB streamed', value: round(streamCpu.hop / megabytes, 2), unit: 'ms' },
    ];
    const goals: BenchGoal[] = [
      {
        what: 'latency added per request, p50 (ms)',
        target: '<= 2',
        measured: added('broker', 50),
        met: added('broker', 50) <= 2,
      },
      {
        what: `streaming throughput at ${PACE / 1e6} MB/s, broker / direct`,
        target: '>= 0.95',
        measured: pacedRatio,
        met: pacedRatio >= 0.95,
      },
      {
        what: 'streaming throughput unpaced, broker / direct',
        target: '>= 0.95',
        measured: overDirect,
        met: overDirect >= 0.95,
      },
    ];
    return {
      benchmark: 'broker-latency',
      figures,
      goals,
      notes: [
        'fake provider, broker, bare hop and client are separate processes on 127.0.0.1; the broker reads its key file on every request and meters every answer',
        'unpaced, the loopback path runs at the CPU of its slowest process: any extra process in it (the bare hop too) slows it where the cores are busy; compare broker / bare hop and the CPU per MB',
      ],
    };
  } finally {
    agent.destroy();
    for (const child of children) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printResult(await main());
  process.exit(0);
}
