// The composition root: the one place that reads process.argv and
// process.env and wires the real ports.
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';
import { runCli } from './cli.js';
import { realPorts } from './io.js';

const selfBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/agent-runner');

const exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  ports: realPorts(),
  stdoutIsTTY: Boolean(process.stdout.isTTY),
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  uid: process.getuid?.() ?? -1,
  selfBin,
});
process.exitCode = exitCode;
