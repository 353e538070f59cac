// The entry of control/fleet/ for the folders beside it: the running agents the fleet shows, which the metrics count.
export { runningAgentTasks } from './agents.js';
