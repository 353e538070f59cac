// The one edge that really spawns processes and touches the filesystem.
// Platform limits it lives with: Linux only (process groups via detached
// spawn, /proc for start times); a spawned command inherits nothing from this
// process's environment: every Command carries its complete env.
//
// Every child starts in a new session (detached: setsid before exec) with
// stdin from /dev/null unless the command carries input, and stdout/stderr
// on pipes: no child ever shares this process's controlling terminal, so a
// repo user's hook cannot push keystrokes into root's shell (TIOCSTI).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import { closeSync, constants as fsConstants, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import type { Command } from '../types.js';
import { copyUntrusted, listUntrusted, readUntrusted, readUntrustedFiles, statUntrusted } from './untrusted-fs.js';
import { readToBound } from './read-to-bound.js';
import { socketChannel } from './line-channel.js';
import { PathError, UnreadableFileError } from '../errors.js';
import type {
  Clock,
  CommandResult,
  FileStat,
  FsPort,
  Ids,
  LineChannel,
  OutputHandlers,
  Ports,
  ProcessPort,
  StartedProcess,
  StartOptions,
} from '../ports.js';

/** Output beyond this is dropped from captured results (the tail is kept). */
const MAX_CAPTURE = 16 * 1024 * 1024;

/** After a started process exits: how long what it left behind may hold its pipes open before they are let go. */
const PIPE_DRAIN_MS = 2_000;

/** A pipe only when there is input to give; otherwise /dev/null. */
function stdinMode(command: Command): 'pipe' | 'ignore' {
  return command.stdin === undefined ? 'ignore' : 'pipe';
}

function writeStdin(stdin: Writable | null, command: Command): void {
  if (!stdin) return;
  stdin.on('error', () => undefined); // the child may not read its stdin
  stdin.end(command.stdin ?? '');
}

/**
 * Why a command could not start, in words. Node says "spawn git ENOENT"
 * both when the program is missing and when the working directory is: say which.
 */
async function spawnFailure(command: Command, error: NodeJS.ErrnoException): Promise<string> {
  if (error.code === 'ENOENT' && command.cwd) {
    const cwd = await fs.stat(command.cwd).catch(() => undefined);
    if (!cwd) return `${command.program}: cannot start in ${command.cwd}: the directory does not exist`;
    if (!cwd.isDirectory()) return `${command.program}: cannot start in ${command.cwd}: it is not a directory`;
  }
  return `${command.program}: ${error.message}`;
}

export const realProcess: ProcessPort = {
  run(command: Command): Promise<CommandResult> {
    return new Promise((resolve) => {
      const child = spawn(command.program, [...command.args], {
        cwd: command.cwd,
        env: { ...command.env },
        stdio: [stdinMode(command), 'pipe', 'pipe'],
        detached: true,
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let outSize = 0;
      let errSize = 0;
      child.stdout!.on('data', (chunk: Buffer) => {
        outSize += chunk.length;
        out.push(chunk);
        while (outSize > MAX_CAPTURE && out.length > 1) outSize -= out.shift()!.length;
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        errSize += chunk.length;
        err.push(chunk);
        while (errSize > MAX_CAPTURE && err.length > 1) errSize -= err.shift()!.length;
      });
      writeStdin(child.stdin, command);
      let spawnError = false;
      child.on('error', (error: NodeJS.ErrnoException) => {
        spawnError = true;
        void spawnFailure(command, error).then((stderr) =>
          resolve({ exitCode: error.code === 'ENOENT' ? 127 : 126, signal: null, stdout: '', stderr }),
        );
      });
      // A command that could not start closes too (exit code -errno), before its failure is worded: the failure
      // answers.
      child.on('close', (exitCode, signal) => {
        if (spawnError) return;
        resolve({
          exitCode,
          signal,
          stdout: Buffer.concat(out).toString(command.binaryStdout ? 'latin1' : 'utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
        });
      });
    });
  },

  start(
    command: Command,
    handlers: OutputHandlers,
    options: StartOptions = {},
  ): StartedProcess & { readonly channel?: LineChannel } {
    // detached: the child leads a new process group, so one signal reaches
    // everything the agent started (shells, test runners, language servers).
    // With a channel, stdio 3 is a 'pipe': Node makes it a socketpair, both ways.
    const child = spawn(command.program, [...command.args], {
      cwd: command.cwd,
      env: { ...command.env },
      stdio: options.channel ? [stdinMode(command), 'pipe', 'pipe', 'pipe'] : [stdinMode(command), 'pipe', 'pipe'],
      detached: true,
    });
    const channel = options.channel && child.stdio[3] instanceof Socket ? socketChannel(child.stdio[3]) : undefined;
    const exited = new Promise<{ exitCode: number | null; signal: string | null }>((resolve) => {
      let spawnError: NodeJS.ErrnoException | undefined;
      child.on('error', (error: NodeJS.ErrnoException) => {
        spawnError = error;
        void spawnFailure(command, error).then((line) => {
          handlers.onStderrLine(line);
          resolve({ exitCode: error.code === 'ENOENT' ? 127 : 126, signal: null });
        });
      });
      child.on('close', (exitCode, signal) => {
        if (!spawnError) resolve({ exitCode, signal });
      });
      // Output still in the pipes is read until they close. A process the child left behind that holds them open
      // (`setsid sleep 600 &` inherits the agent's stdout) would hold this process up for as long as it lives: it
      // gets PIPE_DRAIN_MS, then the pipes are let go and the child counts as exited. The leftover is not ended here:
      // it is in a session of its own, and the run's end (the user sweep) ends it.
      child.on('exit', (exitCode, signal) => {
        const timer = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          if (!spawnError) resolve({ exitCode, signal });
        }, PIPE_DRAIN_MS);
        child.on('close', () => clearTimeout(timer));
      });
    });
    createInterface({ input: child.stdout!, crlfDelay: Infinity }).on('line', handlers.onStdoutLine);
    createInterface({ input: child.stderr!, crlfDelay: Infinity }).on('line', handlers.onStderrLine);
    writeStdin(child.stdin, command);
    const pid = child.pid ?? -1;
    return {
      pid,
      exited,
      ...(channel ? { channel } : {}),
      signalGroup(signal) {
        if (pid <= 0) return;
        try {
          process.kill(-pid, signal);
        } catch {
          // The group is already gone.
        }
      },
    };
  },

  async startTimeOf(pid: number): Promise<string | undefined> {
    try {
      const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
      // The command name (field 2) may contain spaces and parentheses: count from the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // A zombie (Z) or dead (X) process has exited; only its pid is still held
      // until its parent (maybe an init that reaps late) collects it.
      if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
      return fields[19];
    } catch {
      return undefined;
    }
  },

  async which(program: string, pathVariable: string): Promise<string | undefined> {
    const candidates = program.includes('/')
      ? [program]
      : pathVariable
          .split(':')
          .filter(Boolean)
          .map((dir) => path.join(dir, program));
    for (const candidate of candidates) {
      try {
        await fs.access(candidate, fsConstants.X_OK);
        const stat = await fs.stat(candidate);
        if (stat.isFile()) return candidate;
      } catch {
        // not here
      }
    }
    return undefined;
  },
};

/**
 * No file the runner reads (configs, task files, records, transcripts) comes
 * near this; a bigger one is refused instead of filling memory.
 */
export const MAX_READ_BYTES = 64 * 1024 * 1024;

const UNREADABLE: Readonly<Record<string, string>> = {
  EISDIR: 'is a directory',
  ELOOP: 'is a symbolic link loop',
  ENOTDIR: 'a component of the path is not a directory',
  EACCES: 'cannot be read (permission denied)',
  EPERM: 'cannot be read (operation not permitted)',
};

/**
 * Undefined when the file does not exist; an UnreadableFileError for anything
 * else that is not a readable regular file. Synchronous underneath: a drain
 * reads its board (dozens of small files) over and over, and each async step
 * (a trip through libuv's thread pool and back) cost ten times the system
 * call itself; a read here is of a regular file, bounded, never a FIFO.
 */
async function readBounded(file: string, maxBytes = MAX_READ_BYTES): Promise<string | undefined> {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO planted where a file should be cannot hang the read.
    fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code === 'ENOENT') return undefined;
    if (UNREADABLE[code]) throw new UnreadableFileError(file, UNREADABLE[code]);
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw new UnreadableFileError(file, 'is a directory');
    if (!stat.isFile())
      throw new UnreadableFileError(file, 'is not a regular file (a device, FIFO or socket, or a link to one)');
    if (stat.size > maxBytes)
      throw new UnreadableFileError(file, `is ${stat.size} bytes, more than the ${maxBytes} any file here may have`);
    const bytes = await readToBound((chunk) => readSync(fd, chunk, 0, chunk.length, null), stat.size, maxBytes);
    if (bytes === 'grew') throw new UnreadableFileError(file, `grew past the ${maxBytes} bytes any file here may have`);
    return bytes.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export const realFs: FsPort = {
  async readText(file) {
    const text = await readBounded(file);
    if (text === undefined)
      throw Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: 'ENOENT' });
    return text;
  },
  readTextIfExists: (file) => readBounded(file),
  async writeAtomic(file, text, mode = 0o644) {
    const temp = path.join(
      path.dirname(file),
      `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
    );
    const handle = await fs.open(temp, 'w', mode);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.rename(temp, file);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
  },
  async appendLine(file, line) {
    await fs.appendFile(file, line.endsWith('\n') ? line : `${line}\n`, 'utf8');
  },
  async list(dir) {
    try {
      return readdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  },
  async stat(file): Promise<FileStat | undefined> {
    try {
      // Synchronous for the reason readBounded is: the board's reads stat every task file.
      const s = statSync(file);
      return { size: s.size, mode: s.mode, uid: s.uid, gid: s.gid, isDirectory: s.isDirectory(), mtimeMs: s.mtimeMs };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (code === 'ENOENT') return undefined;
      if (code === 'ELOOP')
        throw new PathError(file, 'is a symbolic link loop', 'point the link at a real file or directory');
      if (code === 'EACCES')
        throw new PathError(
          file,
          'cannot be looked at (permission denied)',
          'give read and search permission on every directory above it',
        );
      throw error;
    }
  },
  async mkdirp(dir, mode) {
    await fs.mkdir(dir, { recursive: true, ...(mode === undefined ? {} : { mode }) });
  },
  remove: (target) => fs.rm(target, { recursive: true, force: true }),
  rename: (from, to) => fs.rename(from, to),
  makeTempDir: (prefix) => fs.mkdtemp(path.join(tmpdir(), prefix)),
  readUntrusted,
  readUntrustedFiles,
  statUntrusted,
  copyUntrusted,
  listUntrusted,
};

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  setTimer(ms, callback) {
    const timer = setTimeout(callback, ms);
    return { cancel: () => clearTimeout(timer) };
  },
};

/**
 * Ids sortable by creation time, across processes too: the stamp has
 * microseconds (two `enqueue` runs in one second queue in the order they
 * ran), and within a process it only ever goes up.
 */
function createIds(): Ids {
  let last = 0;
  return {
    next() {
      // Wall-clock microseconds: timeOrigin is the wall clock at start, now() the monotonic time since.
      last = Math.max(Math.floor((performance.timeOrigin + performance.now()) * 1000), last + 1);
      const micros = String(last % 1_000_000).padStart(6, '0');
      const stamp = new Date(Math.floor(last / 1000))
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, '');
      return `${stamp}${micros}Z-${randomBytes(3).toString('hex')}`;
    },
  };
}

export function realPorts(): Ports {
  return { process: realProcess, fs: realFs, clock: realClock, ids: createIds() };
}
