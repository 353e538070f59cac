// A LineChannel over a stream socket: the launch socket root gives orchestrate as its fd 3 (a socketpair Node makes
// for a 'pipe' at stdio index 3), seen from either end. Platform limits it lives with: Node cannot fcntl, but it
// marks the fd it wraps close-on-exec, so what the runner starts itself does not inherit the socket; a line is
// bounded here, before it is parsed, so a peer that never sends a newline cannot fill memory.
import { Socket } from 'node:net';
import type { LineChannel } from '../ports.js';
import { LAUNCH_LIMITS } from '../launch/index.js';

export function socketChannel(socket: Socket, maxLineChars: number = LAUNCH_LIMITS.lineBytes): LineChannel {
  const lineHandlers: ((line: string) => void)[] = [];
  const closeHandlers: (() => void)[] = [];
  let closed = false;
  let pending = '';
  // Past the bound: the cut line went out, the rest of it is dropped up to its newline.
  let dropping = false;
  const deliver = (line: string) => {
    if (closed) return;
    for (const handler of lineHandlers) handler(line);
  };
  const closeOnce = () => {
    if (closed) return;
    closed = true;
    for (const handler of closeHandlers.splice(0)) handler();
  };
  socket.setEncoding('utf8');
  socket.on('error', closeOnce);
  socket.on('close', closeOnce);
  const onData = (chunk: string) => {
    let start = 0;
    for (let newline = chunk.indexOf('\n'); newline !== -1; newline = chunk.indexOf('\n', start)) {
      const piece = chunk.slice(start, newline);
      start = newline + 1;
      if (dropping) dropping = false;
      else deliver(`${pending}${piece}`.slice(0, maxLineChars + 1));
      pending = '';
    }
    if (dropping) return;
    pending += chunk.slice(start);
    if (pending.length > maxLineChars) {
      deliver(pending.slice(0, maxLineChars + 1));
      pending = '';
      dropping = true;
    }
  };
  return {
    send(line) {
      if (closed || socket.destroyed) return;
      socket.write(`${line}\n`);
    },
    onLine(handler) {
      lineHandlers.push(handler);
      // The socket flows from the first reader on: nothing is read before someone listens.
      if (lineHandlers.length === 1) socket.on('data', onData);
    },
    onClose(handler) {
      if (closed) handler();
      else closeHandlers.push(handler);
    },
    close() {
      if (closed) return;
      closeOnce();
      // What was sent still goes out; a peer that never reads does not hold this side open.
      socket.end();
      setTimeout(() => socket.destroy(), 1_000).unref();
    },
  };
}

/** The runner's end of the launch socket, on the fd root gave it. */
export function openChannelOnFd(fd: number): LineChannel {
  return socketChannel(new Socket({ fd, readable: true, writable: true }));
}
