// Every real port in one object: what src/main.ts hands the CLI (and what
// system tests and the bench use to run it in-process).
import type { ControlPorts } from '../ports.js';
import { realPorts } from './real-ports.js';
import { realLocks } from './lock.js';
import { realControl } from './proc.js';
import { cronScheduler } from './cron.js';
import { loopbackHttp } from './http/index.js';

export function realControlPorts(): ControlPorts {
  return { ...realPorts(), locks: realLocks, control: realControl, scheduler: cronScheduler, loopbackHttp };
}
