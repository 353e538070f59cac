// The entry of src/launch/: how the runner starts commands as the agent and the gate. Under dispatch root starts
// them (the launch protocol over the runner's fd 3: protocol.ts, client.ts); run as one user (the demo, a trial
// checkout) they start locally, as that user.
export { type Launcher, localLauncher } from './launcher.js';
export * from './protocol.js';
export { remoteLauncher, type RemoteLauncherOptions } from './client.js';
