// Runs agent-runner's CLI in this process with real ports, capturing output:
// for system tests that call several commands in a row.
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/commands.js';
import { realControlPorts } from '../../src/io/wire.js';
import { octokitConnector } from '../../src/github/octokit.js';
import { startDemoGitHub } from '../../src/io/demo-github.js';
import { startFakeProvider } from '../../src/io/broker/fake-provider.js';

const selfBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/agent-runner');

export async function cli(
  env: Record<string, string>,
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, {
    env,
    cwd: '/',
    ports: realControlPorts(),
    stdoutIsTTY: false,
    out: (text) => void (out += text),
    err: (text) => void (err += text),
    uid: process.getuid?.() ?? -1,
    terminate: new AbortController().signal,
    selfBin,
    github: octokitConnector(),
    demoGitHub: startDemoGitHub,
    demoProvider: () => startFakeProvider(),
  });
  return { code, out, err };
}
