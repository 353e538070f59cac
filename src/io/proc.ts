// Process control the core cannot do through ProcessPort: signalling groups it
// did not start (a crashed predecessor's agents) and subscribing to signals.
// Linux only: identity checks rely on /proc (see realProcess.startTimeOf).
import { realProcess } from '../io.js';
import type { ProcessControl, StopSignal } from '../control/ports.js';

export const realControl: ProcessControl = {
  async self() {
    return { pid: process.pid, startTime: await realProcess.startTimeOf(process.pid) };
  },
  signalGroup(pgid, signal) {
    if (!Number.isInteger(pgid) || pgid <= 1) return false;
    try {
      process.kill(-pgid, signal);
      return true;
    } catch {
      return false;
    }
  },
  onSignal(signal: StopSignal, handler: () => void) {
    process.on(signal, handler);
    return () => {
      process.off(signal, handler);
    };
  },
};
